/*
 * rng_move_out (arc4py/csrc/rng_hot_path.h), the hot path's copy-and-wipe,
 * against memcpy + memset: every length 0..300 from and to every offset
 * 0..31, with guard bytes around both buffers, once through a call the
 * compiler cannot see n in and once for constant lengths it inlines.
 * The verdict (tests/c/verdict.h) has the facts "variable_cases" and
 * "constant_cases" (with a constant length).
 *
 * With -DMOVE_OUT_AVX512 it checks the AVX-512 build instead (whole lines
 * first, rng_hot_path_avx512.h): compiled with -mavx512f, as
 * arc4py/cbind/capi_avx512.c's pragma compiles it, or with
 * -DARC4PY_EMULATE_AVX512 through SIMDe on any CPU.
 */
#include <stdio.h>
#include <string.h>

#include "verdict.h"

#ifdef MOVE_OUT_AVX512
#include "rng_hot_path_avx512.h"
#else
#include "rng_hot_path.h"
#endif

#define MAX_N 300
#define GUARD 48
#define SPAN (GUARD + 32 + MAX_N + GUARD)

static uint8_t src[SPAN], dst[SPAN], want_src[SPAN], want_dst[SPAN];
static unsigned long variable_cases, constant_cases;

__attribute__((noinline)) static void move_variable(uint8_t *d, uint8_t *s,
                                                    size_t n)
{
    rng_move_out(d, s, n);
}

/* The lengths the integer draws and small buffers use, as constants. */
#define CONST_CASE(k) case k: rng_move_out(d, s, k); return 1;
__attribute__((noinline)) static int move_constant(uint8_t *d, uint8_t *s,
                                                   size_t n)
{
    switch (n) {
    CONST_CASE(0) CONST_CASE(1) CONST_CASE(2) CONST_CASE(4) CONST_CASE(7)
    CONST_CASE(8) CONST_CASE(15) CONST_CASE(16) CONST_CASE(17)
    CONST_CASE(31) CONST_CASE(32) CONST_CASE(33) CONST_CASE(64)
    CONST_CASE(127) CONST_CASE(128) CONST_CASE(129) CONST_CASE(300)
    default: return 0;
    }
}

/* Fresh patterns, and what memcpy + memset make of them. */
static void prepare(size_t n, size_t so, size_t d_o, unsigned seed)
{
    size_t i;

    for (i = 0; i < SPAN; i++) {
        src[i] = (uint8_t)(seed * 131u + i * 7u + 1u);
        dst[i] = (uint8_t)(seed * 17u + i * 29u + 3u);
    }
    memcpy(want_src, src, SPAN);
    memcpy(want_dst, dst, SPAN);
    memcpy(want_dst + GUARD + d_o, want_src + GUARD + so, n);
    memset(want_src + GUARD + so, 0, n);
}

static void compare(const char *how, size_t n, size_t so, size_t d_o)
{
    if (memcmp(src, want_src, SPAN) != 0 || memcmp(dst, want_dst, SPAN) != 0)
        verdict_fail("%s n=%lu src+%lu dst+%lu: not as memcpy then memset",
                     how, LU(n), LU(so), LU(d_o));
}

int main(void)
{
    size_t n, so, d_o;

    for (n = 0; n <= MAX_N; n++)
        for (so = 0; so < 32; so++)
            for (d_o = 0; d_o < 32; d_o++) {
                prepare(n, so, d_o, (unsigned)(n + so + d_o));
                move_variable(dst + GUARD + d_o, src + GUARD + so, n);
                compare("variable", n, so, d_o);
                variable_cases++;
                prepare(n, so, d_o, (unsigned)(n * 3 + so));
                if (move_constant(dst + GUARD + d_o, src + GUARD + so, n))
                {
                    compare("constant", n, so, d_o);
                    constant_cases++;
                }
            }
    return verdict_end("\"variable_cases\": %lu, \"constant_cases\": %lu",
                       variable_cases, constant_cases);
}
