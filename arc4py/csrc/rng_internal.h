/*
 * What the generator's own files share (internal, not installed), on top of
 * rng_hot_path.h (the state and the inlined fast path):
 *   rng.c               the algorithm: reseed, refill, take, direct fills,
 *                       the active core; its invariants at the top
 *   rng_bitgen.c        numpy's bitgen_t adapters
 *   rng_test_hooks.c    test-only views of the state
 * below them the platform layer (rng_platform.h) and the wipe leaf
 * (rng_wipe.h).
 *
 * Every internal function that can fail returns 0 or a positive errno value.
 */
#ifndef ARC4PY_RNG_INTERNAL_H
#define ARC4PY_RNG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "chacha20.h"
#include "generator.h"
#include "rng_hot_path.h"
#include "rng_platform.h"
#include "rng_test_hooks.h"
#include "rng_wipe.h"

/* Bytes of each refill that become the next key and nonce. */
#define RNG_REKEY_BYTES ARC4PY_RNG_REKEY_BYTES
/* A reseed's bytes from the OS: a key and nonce, and 4 that place the next
   reseed. */
#define RNG_SEED_BYTES (RNG_REKEY_BYTES + 4)
/* VM-clone mix bytes (vDSO getrandom) XORed into the key of every refill
   and chunk. */
#define RNG_VM_MIX_BYTES 32

RNG_STATIC_ASSERT(RNG_SEED_BYTES <= sizeof(((struct rng_state *)0)->os_bytes),
                  "a seed must fit in the state's os_bytes");

#ifdef ARC4PY_TEST_HOOKS
extern long rng_reseed_count; /* rng.c; read by rng_test_hooks.c */
#endif

#endif
