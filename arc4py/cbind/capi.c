/*
 * The functions behind arc4py's C API (include/arc4py/capi.h): thin
 * shells over the generator's public entry points, with the BSD contract
 * (cannot fail) for three of them and an errno result for fill(); version
 * 2 adds the generator's scalars and numpy's bitgen_t functions as they
 * are.  arc4py's own Cython modules draw through this table too.  The
 * generator's fast path is inlined (arc4py/csrc/rng_hot_path.h).
 * arc4py._core puts this CPU's table into the capsule
 * (arc4py_capi_capsule()) at import.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define ARC4PY_CAPI_PROVIDER 1
#include "arc4py/capi.h"
#include "chacha20.h"
#include "generator.h"
#include "rng_hot_path.h"
#include "capi_buffered.h"
#include "cbind.h"

#include <string.h>

static uint32_t capi_arc4random(void)
{
    uint32_t r;
    int err = rng_take(&r, sizeof r);

    if (err)
        rng_abort(err, CAPI_CALL);
    return r;
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

/* One table per build of arc4random_buf and fill; the rest is shared. */
#define CAPI_TABLE(arc4random_buf_fn, fill_fn)                             \
    {                                                                      \
        .size = sizeof(arc4py_capi), .version = ARC4PY_CAPI_VERSION,       \
        .arc4random = capi_arc4random, .arc4random_buf = arc4random_buf_fn, \
        .arc4random_uniform = capi_arc4random_uniform, .fill = fill_fn,    \
        .random_u32 = arc4py_rng_u32, .random_u64 = arc4py_rng_u64,        \
        .bitgen_u64 = arc4py_bitgen_u64, .bitgen_u32 = arc4py_bitgen_u32,  \
        .bitgen_double = arc4py_bitgen_double,                             \
    }

static const arc4py_capi capi_table_portable =
    CAPI_TABLE(capi_buffered_arc4random_buf, capi_buffered_fill);
#ifdef ARC4PY_BUILD_AVX512
static const arc4py_capi capi_table_avx512 =
    CAPI_TABLE(capi_arc4random_buf_avx512, capi_fill_avx512);
#endif

/*
 * The AVX-512 build of arc4random_buf and fill (capi_avx512.c) goes with
 * the avx512 core: the dispatch runs that core only where the CPU has
 * AVX-512F and the OS saves the zmm state, and one who chose another core
 * (ARC4PY_BACKEND=avx2, say, to keep AVX-512 off) gets no AVX-512 from
 * the C API either.  Chosen once, when arc4py._core makes the capsule,
 * after the core was chosen.
 */
static const arc4py_capi *capi_table(const char **hand_out)
{
#ifdef ARC4PY_BUILD_AVX512
    if (strcmp(arc4py_chacha20_active()->name, "avx512") == 0) {
        *hand_out = "avx512";
        return &capi_table_avx512;
    }
#endif
    *hand_out = "portable";
    return &capi_table_portable;
}

PyObject *arc4py_capi_capsule(const char **hand_out)
{
    return PyCapsule_New((void *)capi_table(hand_out), ARC4PY_CAPI_CAPSULE,
                         NULL);
}
