/*
 * Wiping secrets (internal): the leaf every other generator file may use,
 * the algorithm and the platform files alike.  It depends on nothing but
 * the C library.
 */
#ifndef ARC4PY_RNG_WIPE_H
#define ARC4PY_RNG_WIPE_H

#include <stddef.h>

/* A memset the compiler may not drop as a dead store. */
void rng_wipe(void *p, size_t n);

/* Zero the stack below the caller's frame, where the core it just called
   kept its locals and spills. */
void rng_stack_scrub(void);

#endif
