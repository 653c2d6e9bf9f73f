/*
 * AVX-512 ChaCha20 keystream core, written from RFC 8439 section 2 and
 * D. J. Bernstein, "ChaCha, a variant of Salsa20" (2008).
 *
 * Main loop: sixteen blocks at once in the vertical layout.  Each of the 16
 * state words gets one __m512i whose lane i holds that word of block i; the
 * 16 state vectors stay in registers for all 20 rounds (there are 32 zmm
 * registers), and every rotation is a single vprold.  A 16x16 transpose
 * (unpacks inside 128-bit lanes, then 128-bit lane shuffles) puts each
 * block's 64 bytes in one register for the store.
 *
 * Tails (names as in every core: vertical<W>_n is a W-block pass storing
 * only the first n blocks): 9..15 blocks run vertical16_n; up to 8 go to
 * the AVX2 core, which has an 8-block pass and a 1-2 block row path of its
 * own.  Every AVX-512F+VL CPU has AVX2; the dispatch checks it anyway.
 *
 * Needs AVX-512F and AVX-512VL (the dispatch checks both and that the OS
 * saves the zmm state).  Functions carry their own target, so the file
 * needs no -m flag.  On return zmm0-31 are zeroed (vzeroall does not reach
 * zmm16-31).
 *
 * With ARC4PY_EMULATE_AVX512 defined, the same intrinsics come from SIMDe
 * instead (tests/cores/test_avx512_emulated.py), so this core is checked on an
 * x86-64 CPU without AVX-512 (its tails still run the real AVX2 core).
 * SIMDe 0.7.4 lacks some intrinsics (for example the unsigned compares
 * into a mask), so only what it provides is used.
 */
#include "chacha20_common.h"

/* Its tails of up to 8 blocks run on the avx2 core (builds_with in
   chacha20_cores.def): setup.py leaves the two out together. */
#if !defined(ARC4PY_NO_AVX512) && defined(ARC4PY_NO_AVX2)
#error "the avx512 core hands its tails to the avx2 core: keep both or neither"
#endif

#ifdef ARC4PY_BUILD_AVX512

#ifdef ARC4PY_EMULATE_AVX512
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#define AVX512_FN
#else
#include <immintrin.h>
#define AVX512_FN __attribute__((target("avx512f,avx512vl")))
#endif

/* RFC 8439 2.1 on whole registers; vprold does every rotation. */
#define QR512(a, b, c, d)                                         \
    do {                                                          \
        a = _mm512_add_epi32(a, b);                               \
        d = _mm512_rol_epi32(_mm512_xor_si512(d, a), 16);         \
        c = _mm512_add_epi32(c, d);                               \
        b = _mm512_rol_epi32(_mm512_xor_si512(b, c), 12);         \
        a = _mm512_add_epi32(a, b);                               \
        d = _mm512_rol_epi32(_mm512_xor_si512(d, a), 8);          \
        c = _mm512_add_epi32(c, d);                               \
        b = _mm512_rol_epi32(_mm512_xor_si512(b, c), 7);          \
    } while (0)

/* The 20 rounds: ten column rounds, each followed by a diagonal round. */
#define ROUNDS(QR)                                                \
    for (i = 0; i < 10; i++) {                                    \
        QR(x0, x4, x8, x12);                                      \
        QR(x1, x5, x9, x13);                                      \
        QR(x2, x6, x10, x14);                                     \
        QR(x3, x7, x11, x15);                                     \
        QR(x0, x5, x10, x15);                                     \
        QR(x1, x6, x11, x12);                                     \
        QR(x2, x7, x8, x13);                                      \
        QR(x3, x4, x9, x14);                                      \
    }

/*
 * 4x4 transpose of 32-bit words inside every 128-bit lane: on return, lane
 * k of y0..y3 holds four consecutive state words of blocks 4k+0 .. 4k+3.
 */
#define TRANSPOSE4(W, y0, y1, y2, y3)                             \
    do {                                                          \
        t0 = W##_unpacklo_epi32(y0, y1);                          \
        t1 = W##_unpackhi_epi32(y0, y1);                          \
        t2 = W##_unpacklo_epi32(y2, y3);                          \
        t3 = W##_unpackhi_epi32(y2, y3);                          \
        y0 = W##_unpacklo_epi64(t0, t2);                          \
        y1 = W##_unpackhi_epi64(t0, t2);                          \
        y2 = W##_unpacklo_epi64(t1, t3);                          \
        y3 = W##_unpackhi_epi64(t1, t3);                          \
    } while (0)

/*
 * Sixteen blocks for counters state+0 .. state+15; stores the first n
 * (1..16) of them and does not advance the state.
 */
AVX512_FN static void vertical16_n(const uint32_t s[16], uint8_t *out,
                                        size_t n)
{
    __m512i x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14,
        x15, lo, hi, base, t0, t1, t2, t3;
    int i;

    /* Per-lane 64-bit counters: low word base + lane; a lane whose low word
     * wrapped (ended below base) takes the high word + 1.  max(lo, base) ==
     * lo exactly in the lanes that did not wrap (mask bit set: keep the
     * high word).  Computed again for the feed-forward rather than kept
     * live through the rounds, where no register is free for them and the
     * compiler would keep them on the stack. */
#define COUNTERS                                                            \
    do {                                                                    \
        base = _mm512_set1_epi32((int)s[12]);                               \
        lo = _mm512_add_epi32(base, _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6,  \
                                                      7, 8, 9, 10, 11, 12,  \
                                                      13, 14, 15));         \
        hi = _mm512_mask_blend_epi32(                                       \
            _mm512_cmpeq_epi32_mask(_mm512_max_epu32(lo, base), lo),        \
            _mm512_set1_epi32((int)(s[13] + 1u)),                           \
            _mm512_set1_epi32((int)s[13]));                                 \
    } while (0)
    COUNTERS;

    x0 = _mm512_set1_epi32((int)s[0]);
    x1 = _mm512_set1_epi32((int)s[1]);
    x2 = _mm512_set1_epi32((int)s[2]);
    x3 = _mm512_set1_epi32((int)s[3]);
    x4 = _mm512_set1_epi32((int)s[4]);
    x5 = _mm512_set1_epi32((int)s[5]);
    x6 = _mm512_set1_epi32((int)s[6]);
    x7 = _mm512_set1_epi32((int)s[7]);
    x8 = _mm512_set1_epi32((int)s[8]);
    x9 = _mm512_set1_epi32((int)s[9]);
    x10 = _mm512_set1_epi32((int)s[10]);
    x11 = _mm512_set1_epi32((int)s[11]);
    x12 = lo;
    x13 = hi;
    x14 = _mm512_set1_epi32((int)s[14]);
    x15 = _mm512_set1_epi32((int)s[15]);

    ROUNDS(QR512)

    /* The input again from s, not kept live (and spilled) since the start:
       no copy of the key on the stack. */
    RNG_REREAD_THROUGH(s);
    COUNTERS;
#undef COUNTERS
    x0 = _mm512_add_epi32(x0, _mm512_set1_epi32((int)s[0]));
    x1 = _mm512_add_epi32(x1, _mm512_set1_epi32((int)s[1]));
    x2 = _mm512_add_epi32(x2, _mm512_set1_epi32((int)s[2]));
    x3 = _mm512_add_epi32(x3, _mm512_set1_epi32((int)s[3]));
    x4 = _mm512_add_epi32(x4, _mm512_set1_epi32((int)s[4]));
    x5 = _mm512_add_epi32(x5, _mm512_set1_epi32((int)s[5]));
    x6 = _mm512_add_epi32(x6, _mm512_set1_epi32((int)s[6]));
    x7 = _mm512_add_epi32(x7, _mm512_set1_epi32((int)s[7]));
    x8 = _mm512_add_epi32(x8, _mm512_set1_epi32((int)s[8]));
    x9 = _mm512_add_epi32(x9, _mm512_set1_epi32((int)s[9]));
    x10 = _mm512_add_epi32(x10, _mm512_set1_epi32((int)s[10]));
    x11 = _mm512_add_epi32(x11, _mm512_set1_epi32((int)s[11]));
    x12 = _mm512_add_epi32(x12, lo);
    x13 = _mm512_add_epi32(x13, hi);
    x14 = _mm512_add_epi32(x14, _mm512_set1_epi32((int)s[14]));
    x15 = _mm512_add_epi32(x15, _mm512_set1_epi32((int)s[15]));

    TRANSPOSE4(_mm512, x0, x1, x2, x3);     /* words 0-3 */
    TRANSPOSE4(_mm512, x4, x5, x6, x7);     /* words 4-7 */
    TRANSPOSE4(_mm512, x8, x9, x10, x11);   /* words 8-11 */
    TRANSPOSE4(_mm512, x12, x13, x14, x15); /* words 12-15 */

    /*
     * Now lane k of x[4g + r] holds words 4g..4g+3 of block 4k + r.  For
     * each r, gather lane k of the four groups into one register: that is
     * block 4k + r, whole.  Stores past n are skipped, so the tails can use
     * this path without a bounce buffer.
     */
#define STORE4(r, g0, g1, g2, g3)                                           \
    do {                                                                    \
        __m512i lo01 = _mm512_shuffle_i32x4(g0, g1, 0x44); /* k = 0, 1 */   \
        __m512i lo23 = _mm512_shuffle_i32x4(g2, g3, 0x44);                  \
        __m512i hi01 = _mm512_shuffle_i32x4(g0, g1, 0xee); /* k = 2, 3 */   \
        __m512i hi23 = _mm512_shuffle_i32x4(g2, g3, 0xee);                  \
        if ((r) < n)                                                        \
            _mm512_storeu_si512(out + (r) * 64,                             \
                                _mm512_shuffle_i32x4(lo01, lo23, 0x88));    \
        if ((r) + 4 < n)                                                    \
            _mm512_storeu_si512(out + ((r) + 4) * 64,                       \
                                _mm512_shuffle_i32x4(lo01, lo23, 0xdd));    \
        if ((r) + 8 < n)                                                    \
            _mm512_storeu_si512(out + ((r) + 8) * 64,                       \
                                _mm512_shuffle_i32x4(hi01, hi23, 0x88));    \
        if ((r) + 12 < n)                                                   \
            _mm512_storeu_si512(out + ((r) + 12) * 64,                      \
                                _mm512_shuffle_i32x4(hi01, hi23, 0xdd));    \
    } while (0)
    STORE4(0, x0, x4, x8, x12);
    STORE4(1, x1, x5, x9, x13);
    STORE4(2, x2, x6, x10, x14);
    STORE4(3, x3, x7, x11, x15);
#undef STORE4
}

AVX512_FN void arc4py_chacha20_blocks_avx512(uint32_t state[16], uint8_t *out,
                                             size_t nblocks)
{
    while (nblocks >= 16) {
        vertical16_n(state, out, 16);
        arc4py_counter_add(state, 16);
        out += 16 * ARC4PY_CHACHA20_BLOCK_BYTES;
        nblocks -= 16;
    }
    /* By uop counts (not measured: no AVX-512 machine at hand) one 16-block
     * pass costs less than two 8-block ones, so 9..15 blocks take one; the
     * AVX2 core's 8-block pass and row path serve the rest. */
    if (nblocks > 8) {
        vertical16_n(state, out, nblocks);
        arc4py_counter_add(state, nblocks);
    } else if (nblocks > 0) {
        arc4py_chacha20_blocks_avx2(state, out, nblocks);
    }
#ifndef ARC4PY_EMULATE_AVX512
    ARC4PY_CLEAR_ZMM();
#endif
}

#endif /* x86-64, not left out */

#if defined(ARC4PY_NO_AVX512)
ARC4PY_CORE_NOT_BUILT(avx512, ARC4PY_CORE_LEFT_OUT);
#elif defined(ARC4PY_X86_64)
ARC4PY_CORE_BUILT_HERE(avx512);
#elif defined(ARC4PY_TARGET_X86_64)
#error "arc4py: this compiler cannot build the avx512 core: build with GCC, Clang or (Windows) clang-cl, or leave the core out by name, ARC4PY_NO_AVX512=1"
#else
ARC4PY_CORE_NOT_BUILT(avx512, ARC4PY_CORE_OTHER_ARCH);
#endif
