/*
 * The generator's fast path (rng_hot_path.h) for a file whose functions are
 * compiled for AVX-512F: rng_take() then moves each whole 64-byte line of a
 * hand-out with one load and two stores, where 16-byte steps take four
 * loads and eight stores.  A 128-byte draw is mostly keystream; the moves
 * are most of the rest (see arc4py/cbind/capi_avx512.c).
 *
 * Include it in place of rng_hot_path.h, after the file's target pragma.
 * What is built on it may only run where the dispatch runs the avx512 core
 * (arc4py/cbind/capi.c chooses).
 * Only the hand-out changes; every check of rng_take_buffered() is the
 * same code.
 */
#ifndef ARC4PY_RNG_HOT_PATH_AVX512_H
#define ARC4PY_RNG_HOT_PATH_AVX512_H

#ifdef ARC4PY_RNG_HOT_PATH_H
#error "rng_hot_path_avx512.h replaces rng_hot_path.h: include it first"
#endif

#include <stddef.h>
#include <stdint.h>
/* With ARC4PY_EMULATE_AVX512 the same intrinsics come from SIMDe, so the
   hand-out is checked on any CPU (tests/c/move_out_check.c). */
#ifdef ARC4PY_EMULATE_AVX512
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#else
#include <immintrin.h>
#endif

/* The whole lines of n bytes: copied to dst, zeroed at src. */
static inline size_t rng_move_out_lines_avx512(uint8_t *dst, uint8_t *src,
                                               size_t n)
{
    size_t i = 0;

    for (; i + 64 <= n; i += 64) {
        _mm512_storeu_si512((void *)(dst + i),
                            _mm512_loadu_si512((const void *)(src + i)));
        _mm512_storeu_si512((void *)(src + i), _mm512_setzero_si512());
    }
    /* Said here, not left to the compiler (GCC adds it only from -O2):
       the upper 48 bytes of the last line leave the registers, and the
       caller's SSE code pays no transition.  (Emulated registers are
       plain memory, and SIMDe has no such call.) */
#ifndef ARC4PY_EMULATE_AVX512
    _mm256_zeroupper();
#endif
    return i;
}

#define RNG_MOVE_OUT_LINES rng_move_out_lines_avx512
#include "rng_hot_path.h"

#endif
