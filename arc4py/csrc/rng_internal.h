/*
 * What the generator's own files share (internal, not installed), on top of
 * rng_hot_path.h (the state and the inlined fast path):
 *   rng_keystream.c     how a state makes bytes: keying in place, reseed,
 *                       refill, buffered and direct takes; its invariants
 *                       at the top
 *   rng_requests.c      who may use a state and when a request is drawn
 *                       again: the slow path, stir, stir_all; its
 *                       invariants at the top
 *   rng_draws.c         the typed and bounded draws over the byte stream
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

/* rng_keystream.c, for rng_requests.c. */
/* The calling thread's state, made (unseeded) if it has none. */
int rng_state_get(struct rng_state **out);
/* New key material from the OS, mixed into a live state's key. */
int rng_reseed(struct rng_state *s);
/* n bytes copied out of the buffer, refilled as it runs out. */
int rng_take_refilling(struct rng_state *s, uint8_t *out, size_t n);
/* n bytes generated straight into out under one-time keys. */
int rng_take_direct(struct rng_state *s, uint8_t *out, size_t n);

#ifdef ARC4PY_TEST_HOOKS
extern long rng_reseed_count; /* rng_keystream.c; read by rng_test_hooks.c */
#endif

#endif
