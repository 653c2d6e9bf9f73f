/*
 * The C API's two calls that hand out buffered bytes of any length,
 * arc4random_buf and fill, written once for the two builds of them: capi.c
 * compiles them for every CPU, capi_avx512.c again for AVX-512, whose
 * hand-outs move a whole 64-byte line per instruction (capi.c says which
 * build its table takes).
 *
 * The includer has included a hot path first (rng_hot_path.h, or
 * rng_hot_path_avx512.h in a file compiled for AVX-512): rng_take() below
 * is that one.
 */
#ifndef ARC4PY_CAPI_BUFFERED_H
#define ARC4PY_CAPI_BUFFERED_H

#include <stddef.h>

#include "compiler_compat.h"

/* What rng_abort() says it was inside. */
#define CAPI_CALL "a C API call (arc4py_arc4random*)"

/* The BSD contract: cannot fail, so a failure aborts. */
static inline void capi_buffered_arc4random_buf(void *buf, size_t n)
{
    int err = rng_take(buf, n);

    if (err)
        rng_abort(err, CAPI_CALL);
}

/* 0 or an errno value; on failure rng_take() has wiped buf, so what it
   held cannot pass for output. */
static inline int capi_buffered_fill(void *buf, size_t n)
{
    return rng_take(buf, n);
}

/* capi_avx512.c's builds of the two, where it has them. */
#ifdef ARC4PY_BUILD_AVX512
void capi_arc4random_buf_avx512(void *buf, size_t n);
int capi_fill_avx512(void *buf, size_t n);
#endif

#endif
