/*
 * The generator's test hooks (rng_test_hooks.c), declared once for C and
 * for Cython (arc4py/_cdefs.pxd): not part of the public header.  Compiled
 * in only with ARC4PY_TEST_HOOKS; a normal build answers -1.
 */
#ifndef ARC4PY_RNG_TEST_HOOKS_H
#define ARC4PY_RNG_TEST_HOOKS_H

#include <stddef.h>
#include <stdint.h>

/* 1 in a build with the hooks, else 0. */
extern const int arc4py_rng_test_hooks;
/* A copy of the calling thread's keystream buffer and its unread bytes
   (at the end); 0, or -1 with no state yet or out_len too small. */
int arc4py_rng_debug_buffer(uint8_t *out, size_t out_len, size_t *left);
/* Reseeds so far, in every thread. */
long arc4py_rng_debug_reseeds(void);

/* What the generator (rng_keystream.c) tells arc4py_rng_debug_log, when a
   test sets it (a build with the hooks only): a seed from the OS (p: its
   bytes, n of them), a core about to run (p: the 16-word input state, n
   blocks) for a refill or a large fill's chunk, and the scrub of the stack
   the cores used since (after a refill's core, after a large fill's
   last). */
enum {
    ARC4PY_RNG_LOG_SEED,
    ARC4PY_RNG_LOG_REFILL,
    ARC4PY_RNG_LOG_DIRECT,
    ARC4PY_RNG_LOG_DONE
};
#ifdef ARC4PY_TEST_HOOKS
extern void (*arc4py_rng_debug_log)(int event, const void *p, size_t n);
/* Called, when a test sets it, with the VM-clone mix bytes just read,
   before they are mixed into a key: the test may read and rewrite them. */
extern void (*arc4py_rng_debug_vm_mix)(uint8_t *mix, size_t n);
#endif

#endif
