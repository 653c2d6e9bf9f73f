/*
 * The functions behind arc4py's C API (arc4py/include/arc4py/capi.h): thin
 * shells over the generator's public entry points, with the BSD contract
 * (cannot fail) for three of them and an errno result for fill(); version
 * 2 adds the generator's scalars and numpy's bitgen_t functions as they
 * are.  arc4py's own Cython modules draw through this table too.  The
 * generator's fast path is inlined (arc4py/csrc/rng_hot_path.h).
 * arc4py_capi_capsule() (pyfast.c) puts arc4py_capi_provider_table into the capsule.
 */
#define ARC4PY_CAPI_PROVIDER 1
#include "arc4py/capi.h"
#include "arc4py/generator.h"
#include "rng_hot_path.h"

#include <string.h>

#define CAPI_CALL "a C API call (arc4py_arc4random*)"

static uint32_t capi_arc4random(void)
{
    uint32_t r;
    int err = rng_take(&r, sizeof r);

    if (err)
        rng_abort(err, CAPI_CALL);
    return r;
}

static void capi_arc4random_buf(void *buf, size_t n)
{
    int err = rng_take(buf, n);

    if (err)
        rng_abort(err, CAPI_CALL);
}

static uint32_t capi_arc4random_uniform(uint32_t upper_bound)
{
    uint32_t r;
    int err;

    /* BSD's contract; the generator itself reads 0 as 2**32. */
    if (upper_bound < 2)
        return 0;
    err = arc4py_rng_uniform(upper_bound, &r);
    if (err)
        rng_abort(err, CAPI_CALL);
    return r;
}

static int capi_fill(void *buf, size_t n)
{
    int err = rng_take(buf, n);

    if (err && n) {
        /* What the caller's buffer held must not pass for output. */
        memset(buf, 0, n);
        RNG_KEEP_STORES(buf); /* the zeros are read: keep them */
    }
    return err;
}

const arc4py_capi arc4py_capi_provider_table = {
    sizeof(arc4py_capi),
    ARC4PY_CAPI_VERSION,
    capi_arc4random,
    capi_arc4random_buf,
    capi_arc4random_uniform,
    capi_fill,
    arc4py_rng_u32,
    arc4py_rng_u64,
    arc4py_bitgen_u64,
    arc4py_bitgen_u32,
    arc4py_bitgen_double,
};
