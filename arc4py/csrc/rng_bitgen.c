/*
 * numpy's bitgen_t functions, straight into the per-thread generator.
 *
 * numpy calls these once per value through a function pointer, so each is
 * the bare hot path: no stack frame, nothing passed through memory.  Every
 * other case (no state yet, a refill, an error) is a cold function of its
 * own, reached by a tail call.
 */
#include "rng_internal.h"


static RNG_COLD_NOINLINE uint64_t bitgen_u64_slow(void)
{
    uint64_t r;
    int err = rng_buf_slow(&r, 8);

    if (err)
        rng_abort(err, "a numpy draw");
    return r;
}

static RNG_COLD_NOINLINE uint32_t bitgen_u32_slow(void)
{
    uint32_t r;
    int err = rng_buf_slow(&r, 4);

    if (err)
        rng_abort(err, "a numpy draw");
    return r;
}

static RNG_COLD_NOINLINE double bitgen_double_slow(void)
{
    return arc4py_u64_to_double(bitgen_u64_slow());
}

uint64_t arc4py_bitgen_u64(void *unused)
{
    uint64_t r;

    (void)unused;
    return RNG_LIKELY(rng_take_buffered(&r, 8)) ? r : bitgen_u64_slow();
}

uint32_t arc4py_bitgen_u32(void *unused)
{
    uint32_t r;

    (void)unused;
    return RNG_LIKELY(rng_take_buffered(&r, 4)) ? r : bitgen_u32_slow();
}

double arc4py_bitgen_double(void *unused)
{
    uint64_t r;

    (void)unused;
    return RNG_LIKELY(rng_take_buffered(&r, 8)) ? arc4py_u64_to_double(r)
                                                : bitgen_double_slow();
}
