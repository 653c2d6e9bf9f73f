/* Wiping secrets: see rng_wipe.h. */
#include "rng_wipe.h"

#include <stdint.h>
#include <string.h>

#include "compiler_compat.h"

/* Stack the deepest core chain uses (AVX-512 handing a tail to AVX2:
   about 1.7 KiB at -O3), with room to spare; tests/c/dead_stack.c. */
#define RNG_SCRUB_BYTES 2048

void rng_wipe(void *p, size_t n)
{
    memset(p, 0, n);
    RNG_KEEP_STORES(p);
}

/*
 * Called from the frame that called the core, so this frame lies where the
 * core's did.  Not inlined, and the barrier makes the stores observable, so
 * the compiler keeps them.
 */
RNG_NOINLINE void rng_stack_scrub(void)
{
    volatile uint8_t area[RNG_SCRUB_BYTES];

    memset((uint8_t *)area, 0, sizeof area);
    RNG_KEEP_STORES(area);
}
