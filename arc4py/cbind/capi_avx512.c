/*
 * The C API's arc4random_buf and fill (capi_buffered.h) compiled for
 * AVX-512F: a C caller's 128-byte draw moves its bytes out of the buffer
 * in two lines, not eight 16-byte steps.  capi.c's table takes these two
 * where the avx512 core runs; on other architectures, with MSVC or with
 * ARC4PY_NO_AVX512 this file compiles to nothing.
 *
 * The pragma applies to every function below it, the generator's inlined
 * fast path included, so the file needs no -m flag.
 */
#include "compiler_compat.h"

#ifdef ARC4PY_BUILD_AVX512

/* The intrinsics' header before the pragma, as Clang wants it. */
#include <immintrin.h>
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))), \
                             apply_to = function)
#else
#pragma GCC target("avx512f")
#endif

#include "rng_hot_path_avx512.h"
#include "capi_buffered.h"

void capi_arc4random_buf_avx512(void *buf, size_t n)
{
    capi_buffered_arc4random_buf(buf, n);
}

int capi_fill_avx512(void *buf, size_t n) { return capi_buffered_fill(buf, n); }

#if defined(__clang__)
#pragma clang attribute pop
#endif

#endif
