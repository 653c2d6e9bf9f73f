/*
 * AVX2 ChaCha20 keystream core, written from RFC 8439 section 2 and
 * D. J. Bernstein, "ChaCha, a variant of Salsa20" (2008).
 *
 * Main loop: eight blocks at once in the vertical layout.  Each of the 16
 * state words gets one __m256i whose lane i holds that word of block i, so
 * a quarter round is lane-wise arithmetic on whole registers and the rounds
 * need no shuffles at all.  An 8x8 transpose then puts every block's words
 * back in order for the stores.
 *
 * Tails: 3..7 blocks run the 8-block code and store only the blocks asked
 * for; 1 or 2 blocks run side by side in the two 128-bit halves of four
 * row registers (the 4x4 state matrix, one row per register).
 *
 * Functions carry target("avx2") so the file needs no -m flag; the dispatch
 * calls this core only when CPUID and XGETBV say AVX2 is usable.
 */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>

#include "chacha20_common.h"

#define AVX2_FN __attribute__((target("avx2")))

/* 12 and 7 are not whole bytes: shift, shift, or. */
#define ROTL(x, n)                                 \
    _mm256_or_si256(_mm256_slli_epi32((x), (n)), \
                    _mm256_srli_epi32((x), 32 - (n)))

/*
 * RFC 8439 2.1, on whole registers.  Rotations by 16 and 8 move whole
 * bytes, so they are one byte shuffle each, with tables r16 and r8.
 */
#define QR(a, b, c, d, r16, r8)                               \
    do {                                                      \
        a = _mm256_add_epi32(a, b);                           \
        d = _mm256_shuffle_epi8(_mm256_xor_si256(d, a), r16); \
        c = _mm256_add_epi32(c, d);                           \
        b = ROTL(_mm256_xor_si256(b, c), 12);                 \
        a = _mm256_add_epi32(a, b);                           \
        d = _mm256_shuffle_epi8(_mm256_xor_si256(d, a), r8);  \
        c = _mm256_add_epi32(c, d);                           \
        b = ROTL(_mm256_xor_si256(b, c), 7);                  \
    } while (0)

/*
 * The shuffle tables: within each 32-bit lane, rotate left by 16, then 8.
 * The 8-block rounds read them through a volatile pointer at every use, so
 * the compiler keeps them as memory operands instead of pinning them in two
 * of the 16 ymm registers, and spills fewer state words (about 4% faster
 * with gcc 12).
 */
static const uint8_t rot_tables[64] __attribute__((aligned(32))) = {
    2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
    2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
    3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
    3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
};
static const __m256i *const volatile rot_tables_p =
    (const __m256i *)rot_tables;
#define ROT16_MEM _mm256_load_si256(rot_tables_p)
#define ROT8_MEM _mm256_load_si256(rot_tables_p + 1)

/*
 * Transpose eight word-vectors (words w..w+7 of blocks 0..7) and store the
 * 32 bytes of each block below n at out + 64 * block.
 */
AVX2_FN static inline void transpose_store8(uint8_t *out, size_t n,
                                            __m256i x0, __m256i x1,
                                            __m256i x2, __m256i x3,
                                            __m256i x4, __m256i x5,
                                            __m256i x6, __m256i x7)
{
    __m256i t0, t1, t2, t3, t4, t5, t6, t7;

    /* 4x4 transposes inside each 128-bit half: words w..w+3 of one block
     * in the low half (blocks 0-3) and of block + 4 in the high half. */
    t0 = _mm256_unpacklo_epi32(x0, x1);
    t1 = _mm256_unpackhi_epi32(x0, x1);
    t2 = _mm256_unpacklo_epi32(x2, x3);
    t3 = _mm256_unpackhi_epi32(x2, x3);
    t4 = _mm256_unpacklo_epi32(x4, x5);
    t5 = _mm256_unpackhi_epi32(x4, x5);
    t6 = _mm256_unpacklo_epi32(x6, x7);
    t7 = _mm256_unpackhi_epi32(x6, x7);
    x0 = _mm256_unpacklo_epi64(t0, t2); /* blocks 0 | 4, words w..w+3 */
    x1 = _mm256_unpackhi_epi64(t0, t2); /* blocks 1 | 5 */
    x2 = _mm256_unpacklo_epi64(t1, t3); /* blocks 2 | 6 */
    x3 = _mm256_unpackhi_epi64(t1, t3); /* blocks 3 | 7 */
    x4 = _mm256_unpacklo_epi64(t4, t6); /* same, words w+4..w+7 */
    x5 = _mm256_unpackhi_epi64(t4, t6);
    x6 = _mm256_unpacklo_epi64(t5, t7);
    x7 = _mm256_unpackhi_epi64(t5, t7);
    /* Join the halves: words w..w+7 of one block per register.  The tests
     * on n let the tails use this path without a bounce buffer (they
     * vanish in the main loop, where n is 8). */
#define STORE_BLOCK(j, lo, hi, sel)                               \
    if ((j) < n)                                                  \
        _mm256_storeu_si256((__m256i *)(out + (j) * 64),          \
                            _mm256_permute2x128_si256(lo, hi, sel))
    STORE_BLOCK(0, x0, x4, 0x20);
    STORE_BLOCK(1, x1, x5, 0x20);
    STORE_BLOCK(2, x2, x6, 0x20);
    STORE_BLOCK(3, x3, x7, 0x20);
    STORE_BLOCK(4, x0, x4, 0x31);
    STORE_BLOCK(5, x1, x5, 0x31);
    STORE_BLOCK(6, x2, x6, 0x31);
    STORE_BLOCK(7, x3, x7, 0x31);
#undef STORE_BLOCK
}

/*
 * The first n (1..8) of the eight blocks for counters state+0 .. state+7;
 * the state is not advanced.
 */
AVX2_FN static void chacha20_8blocks(const uint32_t s[16], uint8_t *out,
                                     size_t n)
{
    __m256i x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14,
        x15, lo, hi, base;
    int i;

    /* Per-lane 64-bit counters: low word base + lane; a lane whose low word
     * wrapped (ended below base) takes the high word + 1.  max(lo, base) ==
     * lo exactly when it did not wrap, and that compare gives -1. */
    base = _mm256_set1_epi32((int)s[12]);
    lo = _mm256_add_epi32(base, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    hi = _mm256_add_epi32(_mm256_set1_epi32((int)(s[13] + 1u)),
                          _mm256_cmpeq_epi32(_mm256_max_epu32(lo, base), lo));

    x0 = _mm256_set1_epi32((int)s[0]);
    x1 = _mm256_set1_epi32((int)s[1]);
    x2 = _mm256_set1_epi32((int)s[2]);
    x3 = _mm256_set1_epi32((int)s[3]);
    x4 = _mm256_set1_epi32((int)s[4]);
    x5 = _mm256_set1_epi32((int)s[5]);
    x6 = _mm256_set1_epi32((int)s[6]);
    x7 = _mm256_set1_epi32((int)s[7]);
    x8 = _mm256_set1_epi32((int)s[8]);
    x9 = _mm256_set1_epi32((int)s[9]);
    x10 = _mm256_set1_epi32((int)s[10]);
    x11 = _mm256_set1_epi32((int)s[11]);
    x12 = lo;
    x13 = hi;
    x14 = _mm256_set1_epi32((int)s[14]);
    x15 = _mm256_set1_epi32((int)s[15]);

    for (i = 0; i < 10; i++) {
        /* column round */
        QR(x0, x4, x8, x12, ROT16_MEM, ROT8_MEM);
        QR(x1, x5, x9, x13, ROT16_MEM, ROT8_MEM);
        QR(x2, x6, x10, x14, ROT16_MEM, ROT8_MEM);
        QR(x3, x7, x11, x15, ROT16_MEM, ROT8_MEM);
        /* diagonal round */
        QR(x0, x5, x10, x15, ROT16_MEM, ROT8_MEM);
        QR(x1, x6, x11, x12, ROT16_MEM, ROT8_MEM);
        QR(x2, x7, x8, x13, ROT16_MEM, ROT8_MEM);
        QR(x3, x4, x9, x14, ROT16_MEM, ROT8_MEM);
    }

    x0 = _mm256_add_epi32(x0, _mm256_set1_epi32((int)s[0]));
    x1 = _mm256_add_epi32(x1, _mm256_set1_epi32((int)s[1]));
    x2 = _mm256_add_epi32(x2, _mm256_set1_epi32((int)s[2]));
    x3 = _mm256_add_epi32(x3, _mm256_set1_epi32((int)s[3]));
    x4 = _mm256_add_epi32(x4, _mm256_set1_epi32((int)s[4]));
    x5 = _mm256_add_epi32(x5, _mm256_set1_epi32((int)s[5]));
    x6 = _mm256_add_epi32(x6, _mm256_set1_epi32((int)s[6]));
    x7 = _mm256_add_epi32(x7, _mm256_set1_epi32((int)s[7]));
    x8 = _mm256_add_epi32(x8, _mm256_set1_epi32((int)s[8]));
    x9 = _mm256_add_epi32(x9, _mm256_set1_epi32((int)s[9]));
    x10 = _mm256_add_epi32(x10, _mm256_set1_epi32((int)s[10]));
    x11 = _mm256_add_epi32(x11, _mm256_set1_epi32((int)s[11]));
    x12 = _mm256_add_epi32(x12, lo);
    x13 = _mm256_add_epi32(x13, hi);
    x14 = _mm256_add_epi32(x14, _mm256_set1_epi32((int)s[14]));
    x15 = _mm256_add_epi32(x15, _mm256_set1_epi32((int)s[15]));

    transpose_store8(out, n, x0, x1, x2, x3, x4, x5, x6, x7);
    transpose_store8(out + 32, n, x8, x9, x10, x11, x12, x13, x14, x15);
}

/*
 * One or two blocks (n), row layout: register a holds words 0-3, b 4-7,
 * c 8-11, d 12-15, block 0 in the low 128 bits and block 1 in the high.
 * Column rounds are lane-wise; for the diagonal rounds b, c, d are rotated
 * by 1, 2, 3 words so that the diagonals line up in columns, then back.
 */
AVX2_FN static void chacha20_2blocks(const uint32_t s[16], uint8_t *out,
                                     size_t n)
{
    const __m256i rot16 = _mm256_load_si256((const __m256i *)rot_tables);
    const __m256i rot8 = _mm256_load_si256((const __m256i *)rot_tables + 1);
    uint32_t lo1 = s[12] + 1u, hi1 = s[13] + (lo1 == 0);
    __m256i a, b, c, d, a0, b0, c0, d0;
    int i;

    a0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)s));
    b0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)s + 1));
    c0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)s + 2));
    d0 = _mm256_setr_epi32((int)s[12], (int)s[13], (int)s[14], (int)s[15],
                           (int)lo1, (int)hi1, (int)s[14], (int)s[15]);
    a = a0; b = b0; c = c0; d = d0;

    for (i = 0; i < 10; i++) {
        QR(a, b, c, d, rot16, rot8);
        b = _mm256_shuffle_epi32(b, 0x39); /* lane i <- word i+1 */
        c = _mm256_shuffle_epi32(c, 0x4e); /* lane i <- word i+2 */
        d = _mm256_shuffle_epi32(d, 0x93); /* lane i <- word i+3 */
        QR(a, b, c, d, rot16, rot8);
        b = _mm256_shuffle_epi32(b, 0x93);
        c = _mm256_shuffle_epi32(c, 0x4e);
        d = _mm256_shuffle_epi32(d, 0x39);
    }
    a = _mm256_add_epi32(a, a0);
    b = _mm256_add_epi32(b, b0);
    c = _mm256_add_epi32(c, c0);
    d = _mm256_add_epi32(d, d0);

    /* Low halves are block 0, high halves block 1. */
    _mm256_storeu_si256((__m256i *)out, _mm256_permute2x128_si256(a, b, 0x20));
    _mm256_storeu_si256((__m256i *)out + 1,
                        _mm256_permute2x128_si256(c, d, 0x20));
    if (n == 2) {
        _mm256_storeu_si256((__m256i *)out + 2,
                            _mm256_permute2x128_si256(a, b, 0x31));
        _mm256_storeu_si256((__m256i *)out + 3,
                            _mm256_permute2x128_si256(c, d, 0x31));
    }
}

AVX2_FN void arc4py_chacha20_blocks_avx2(uint32_t state[16], uint8_t *out,
                                         size_t nblocks)
{
    while (nblocks >= 8) {
        chacha20_8blocks(state, out, 8);
        arc4py_counter_add(state, 8);
        out += 8 * ARC4PY_CHACHA20_BLOCK_BYTES;
        nblocks -= 8;
    }
    /* Measured: one row-layout call (latency-bound) costs about half an
     * 8-block call, so it wins for 1 or 2 blocks and the 8-block path,
     * storing only what is asked, wins from 3. */
    if (nblocks >= 3)
        chacha20_8blocks(state, out, nblocks);
    else if (nblocks > 0)
        chacha20_2blocks(state, out, nblocks);
    arc4py_counter_add(state, nblocks);
}

#endif /* x86 */
