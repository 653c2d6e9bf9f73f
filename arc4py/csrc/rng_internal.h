/*
 * What the generator's files share (internal, not installed), on top of
 * rng_hot_path.h (the state and the inlined fast path):
 *   rng.c               the algorithm: reseed, refill, take, direct fills
 *   rng_thread_state.c  per-thread state pages, registry, fork, thread exit
 *   rng_entropy.c       the OS entropy source and the vDSO getrandom
 *   rng_bitgen.c        numpy's bitgen_t adapters
 *   rng_test_hooks.c    test-only views of the state
 *
 * Every internal function that can fail returns 0 or a positive errno value.
 */
#ifndef ARC4PY_RNG_INTERNAL_H
#define ARC4PY_RNG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arc4py/chacha20.h"
#include "arc4py/generator.h"
#include "rng_hot_path.h"

/* Bytes of each refill that become the next key (32) and nonce (8). */
#define RNG_REKEY_BYTES 40
/* vDSO getrandom bytes mixed into the key of every refill and chunk. */
#define RNG_VDSO_MIX_BYTES 32

/* The calling thread's vDSO getrandom state (NULL without one).  Plain
   TLS, not the wiped pages, so it survives a fork in the thread that
   forked. */
extern RNG_TLS_INITIAL_EXEC __thread void *rng_tls_vdso;

/* Bumped in a forked child (atfork). */
extern unsigned long rng_fork_generation;

extern const arc4py_chacha20_core *rng_active_core;

/* rng.c */
void rng_wipe(void *p, size_t n);
void rng_stack_scrub(void);

/* rng_thread_state.c: the caller's state, created (unseeded) if needed. */
int rng_state_get(struct rng_state **out);

/* rng_entropy.c */
int rng_os_entropy(uint8_t *p, size_t n);
void rng_vdso_init(void);          /* once, before any thread's state */
void *rng_vdso_state_new(void);    /* NULL without a vDSO getrandom */
void rng_vdso_state_free(void *opaque);
int rng_vdso_read(void *opaque, uint8_t *out, size_t n);
int rng_vdso_is_healthy(void);    /* found, and no call has failed */

/* rng_test_hooks.c (see there); -1 in a build without the hooks. */
int arc4py_rng_debug_buffer(uint8_t *out, size_t out_len, size_t *left);
long arc4py_rng_debug_reseeds(void);
extern const int arc4py_rng_test_hooks;
#ifdef ARC4PY_TEST_HOOKS
extern long rng_reseed_count;
extern long rng_vdso_calls;   /* vDSO getrandom calls (tests/c/vdso_mix.c) */
#endif

#endif
