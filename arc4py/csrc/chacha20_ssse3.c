/*
 * SSSE3 ChaCha20 keystream core, written from RFC 8439 section 2 and
 * Bernstein's "ChaCha, a variant of Salsa20".
 *
 * Full strides of four blocks use the vertical layout: vector i holds state
 * word i of four consecutive blocks, one block per 32-bit lane, so each
 * vector quarter round is four independent block quarter rounds and the
 * diagonal round needs no lane shuffles.  A 4x4 transpose per group of four
 * words serialises the blocks.  A single leftover block uses the horizontal
 * layout (one vector per state row); two or three use the vertical code and
 * store only the lanes asked for.
 *
 * The same code as the SSE2 core except for the rotations: those by 16 and
 * 8 bits move whole bytes, so one pshufb does each; those by 12 and 7 stay
 * two shifts and an or.
 */
#include "chacha20_common.h"

#if defined(__x86_64__) || defined(__i386__)

/* Enable SSSE3 for this file only: no global -m flag, dispatch checks CPUID. */
#if defined(__clang__)
#include <tmmintrin.h>
#pragma clang attribute push(__attribute__((target("ssse3"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("ssse3")
#include <tmmintrin.h>
#endif

#define ROTL(v, n) \
    _mm_or_si128(_mm_slli_epi32((v), (n)), _mm_srli_epi32((v), 32 - (n)))

/* pshufb masks: each 32-bit lane's bytes rotated left by 2 and by 1. */
#define ROT16_MASK \
    _mm_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13)
#define ROT8_MASK \
    _mm_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14)

/* RFC 8439 2.1 on vectors: four quarter rounds side by side. */
#define QR(a, b, c, d)                                                   \
    do {                                                                 \
        a = _mm_add_epi32(a, b); d = _mm_xor_si128(d, a);                \
        d = _mm_shuffle_epi8(d, ROT16_MASK);                             \
        c = _mm_add_epi32(c, d); b = _mm_xor_si128(b, c); b = ROTL(b, 12); \
        a = _mm_add_epi32(a, b); d = _mm_xor_si128(d, a);                \
        d = _mm_shuffle_epi8(d, ROT8_MASK);                              \
        c = _mm_add_epi32(c, d); b = _mm_xor_si128(b, c); b = ROTL(b, 7);  \
    } while (0)

/* Serialise words w..w+3 of four lanes: lane j goes to out + 64*j. */
#define TRANSPOSE_STORE(a, b, c, d, out, nstore)                          \
    do {                                                                  \
        __m128i t0_ = _mm_unpacklo_epi32(a, b); /* a0 b0 a1 b1 */         \
        __m128i t1_ = _mm_unpacklo_epi32(c, d); /* c0 d0 c1 d1 */         \
        __m128i t2_ = _mm_unpackhi_epi32(a, b); /* a2 b2 a3 b3 */         \
        __m128i t3_ = _mm_unpackhi_epi32(c, d); /* c2 d2 c3 d3 */         \
        _mm_storeu_si128((__m128i *)(out), _mm_unpacklo_epi64(t0_, t1_)); \
        if ((nstore) > 1)                                                 \
            _mm_storeu_si128((__m128i *)((out) + 64),                     \
                             _mm_unpackhi_epi64(t0_, t1_));               \
        if ((nstore) > 2)                                                 \
            _mm_storeu_si128((__m128i *)((out) + 128),                    \
                             _mm_unpacklo_epi64(t2_, t3_));               \
        if ((nstore) > 3)                                                 \
            _mm_storeu_si128((__m128i *)((out) + 192),                    \
                             _mm_unpackhi_epi64(t2_, t3_));               \
    } while (0)

/*
 * Four blocks from counter in[12..13] + 0..3; store the first nstore (1..4)
 * of them to out.  Does not advance the counter.
 */
static inline __attribute__((always_inline)) void
chacha20_4blocks(const uint32_t in[16], uint8_t *out, size_t nstore)
{
    const __m128i sign = _mm_set1_epi32((int)0x80000000u);
    __m128i s[16], x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12,
        x13, x14, x15;
    __m128i lo;
    int i;

    for (i = 0; i < 16; i++)
        s[i] = _mm_set1_epi32((int)in[i]);
    /*
     * Lane j gets counter + j.  A lane whose low word wrapped is below the
     * start unsigned; SSE2 only compares signed, so flip the sign bits.  The
     * compare yields -1 there, and subtracting it carries into word 13.
     */
    lo = _mm_add_epi32(s[12], _mm_set_epi32(3, 2, 1, 0));
    s[13] = _mm_sub_epi32(s[13],
                          _mm_cmplt_epi32(_mm_xor_si128(lo, sign),
                                          _mm_xor_si128(s[12], sign)));
    s[12] = lo;

    x0 = s[0]; x1 = s[1]; x2 = s[2]; x3 = s[3];
    x4 = s[4]; x5 = s[5]; x6 = s[6]; x7 = s[7];
    x8 = s[8]; x9 = s[9]; x10 = s[10]; x11 = s[11];
    x12 = s[12]; x13 = s[13]; x14 = s[14]; x15 = s[15];
    for (i = 0; i < 10; i++) {
        /* column round */
        QR(x0, x4, x8, x12);
        QR(x1, x5, x9, x13);
        QR(x2, x6, x10, x14);
        QR(x3, x7, x11, x15);
        /* diagonal round */
        QR(x0, x5, x10, x15);
        QR(x1, x6, x11, x12);
        QR(x2, x7, x8, x13);
        QR(x3, x4, x9, x14);
    }
    x0 = _mm_add_epi32(x0, s[0]); x1 = _mm_add_epi32(x1, s[1]);
    x2 = _mm_add_epi32(x2, s[2]); x3 = _mm_add_epi32(x3, s[3]);
    TRANSPOSE_STORE(x0, x1, x2, x3, out, nstore);
    x4 = _mm_add_epi32(x4, s[4]); x5 = _mm_add_epi32(x5, s[5]);
    x6 = _mm_add_epi32(x6, s[6]); x7 = _mm_add_epi32(x7, s[7]);
    TRANSPOSE_STORE(x4, x5, x6, x7, out + 16, nstore);
    x8 = _mm_add_epi32(x8, s[8]); x9 = _mm_add_epi32(x9, s[9]);
    x10 = _mm_add_epi32(x10, s[10]); x11 = _mm_add_epi32(x11, s[11]);
    TRANSPOSE_STORE(x8, x9, x10, x11, out + 32, nstore);
    x12 = _mm_add_epi32(x12, s[12]); x13 = _mm_add_epi32(x13, s[13]);
    x14 = _mm_add_epi32(x14, s[14]); x15 = _mm_add_epi32(x15, s[15]);
    TRANSPOSE_STORE(x12, x13, x14, x15, out + 48, nstore);
}

/*
 * One block in the horizontal layout: vector r holds row r (words 4r..4r+3).
 * Rotating rows 1-3 by 1, 2 and 3 lanes lines the diagonals up as columns.
 */
static void chacha20_1block(const uint32_t in[16], uint8_t *out)
{
    const __m128i a0 = _mm_loadu_si128((const __m128i *)in);
    const __m128i b0 = _mm_loadu_si128((const __m128i *)(in + 4));
    const __m128i c0 = _mm_loadu_si128((const __m128i *)(in + 8));
    const __m128i d0 = _mm_loadu_si128((const __m128i *)(in + 12));
    __m128i a = a0, b = b0, c = c0, d = d0;
    int i;

    for (i = 0; i < 10; i++) {
        QR(a, b, c, d);
        b = _mm_shuffle_epi32(b, _MM_SHUFFLE(0, 3, 2, 1));
        c = _mm_shuffle_epi32(c, _MM_SHUFFLE(1, 0, 3, 2));
        d = _mm_shuffle_epi32(d, _MM_SHUFFLE(2, 1, 0, 3));
        QR(a, b, c, d);
        b = _mm_shuffle_epi32(b, _MM_SHUFFLE(2, 1, 0, 3));
        c = _mm_shuffle_epi32(c, _MM_SHUFFLE(1, 0, 3, 2));
        d = _mm_shuffle_epi32(d, _MM_SHUFFLE(0, 3, 2, 1));
    }
    _mm_storeu_si128((__m128i *)out, _mm_add_epi32(a, a0));
    _mm_storeu_si128((__m128i *)(out + 16), _mm_add_epi32(b, b0));
    _mm_storeu_si128((__m128i *)(out + 32), _mm_add_epi32(c, c0));
    _mm_storeu_si128((__m128i *)(out + 48), _mm_add_epi32(d, d0));
}

void arc4py_chacha20_blocks_ssse3(uint32_t state[16], uint8_t *out,
                                  size_t nblocks)
{
    while (nblocks >= 4) {
        chacha20_4blocks(state, out, 4);
        arc4py_counter_add(state, 4);
        out += 4 * ARC4PY_CHACHA20_BLOCK_BYTES;
        nblocks -= 4;
    }
    /* One block alone is faster horizontally; two or three are not. */
    if (nblocks == 1)
        chacha20_1block(state, out);
    else if (nblocks > 1)
        chacha20_4blocks(state, out, nblocks);
    arc4py_counter_add(state, nblocks);
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif /* x86 */
