/*
 * The functions behind arc4py's C API (arc4py/include/arc4py/capi.h): thin
 * shells over the generator's public entry points, with the BSD contract
 * (cannot fail) for three of them and an errno result for fill(); version
 * 2 adds the generator's scalars and numpy's bitgen_t functions as they
 * are.  arc4py's own Cython modules draw through this table too.  The
 * generator's fast path is inlined (arc4py/csrc/rng_hot_path.h).
 * arc4py_capi_capsule() (pyfast.c) puts arc4py_capi_provider()'s table
 * into the capsule: the table whose arc4random_buf and fill are compiled
 * for AVX-512 (capi_avx512.c) where the CPU runs the avx512 core, else
 * this file's.
 */
#define ARC4PY_CAPI_PROVIDER 1
#include "arc4py/capi.h"
#include "arc4py/chacha20.h"
#include "arc4py/generator.h"
#include "rng_hot_path.h"
#include "capi_buffered.h"

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
    capi_buffered_arc4random_buf(buf, n);
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

static int capi_fill(void *buf, size_t n) { return capi_buffered_fill(buf, n); }

/* One table per build of arc4random_buf and fill; the rest is shared. */
#define CAPI_TABLE(arc4random_buf, fill)                                   \
    {                                                                      \
        sizeof(arc4py_capi), ARC4PY_CAPI_VERSION, capi_arc4random,         \
            arc4random_buf, capi_arc4random_uniform, fill, arc4py_rng_u32, \
            arc4py_rng_u64, arc4py_bitgen_u64, arc4py_bitgen_u32,          \
            arc4py_bitgen_double                                           \
    }

static const arc4py_capi capi_table_portable =
    CAPI_TABLE(capi_arc4random_buf, capi_fill);
#ifdef CAPI_HAVE_AVX512
static const arc4py_capi capi_table_avx512 =
    CAPI_TABLE(capi_arc4random_buf_avx512, capi_fill_avx512);
#endif

const arc4py_capi *arc4py_capi_provider(const char **hand_out)
{
#ifdef CAPI_HAVE_AVX512
    /* The dispatch is the one judge of the CPU: the avx512 core runnable
       means AVX-512F and zmm state saved by the OS. */
    if (arc4py_chacha20_find("avx512") != NULL) {
        *hand_out = "avx512";
        return &capi_table_avx512;
    }
#endif
    *hand_out = "portable";
    return &capi_table_portable;
}
