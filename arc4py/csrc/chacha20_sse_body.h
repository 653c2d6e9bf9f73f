/*
 * The body of the two 128-bit cores, chacha20_sse2.c and chacha20_ssse3.c
 * (internal; included by those files only).  They differ in nothing but
 * the rotations by 16 and 8 bits, so the includer defines ROTL, ROT16,
 * ROT8 (on intrinsics), ROT16_ASM(r) and ROT8_ASM(r) (the same on %xmm<r>
 * as assembly text, with ROTL_ASM, X and NL from here and the pshufb
 * tables at %[rot]) and ARC4PY_SSE_BLOCKS_FN (the function's name), and
 * enables its instruction set, before including this.
 *
 * Full strides of four blocks use the vertical layout: vector i holds state
 * word i of four consecutive blocks, one block per 32-bit lane, so a vector
 * quarter round is four block quarter rounds and the diagonal round needs
 * no lane shuffles.  A 4x4 transpose per group of four words serialises the
 * blocks.  The last 1..3 blocks use the horizontal layout (one vector per
 * state row), two at a time interleaved: a lone horizontal block is bound
 * by latency, so two cost little more than one (three interleaved would
 * spill a whole block's rows to the stack).  No key word, and no working
 * word of rows 1..3, is ever on the stack (see vertical4).  (Names as in every core:
 * vertical<W> is a full W-block pass, rows<W>_n up to W blocks in the row
 * layout.)  The xmm registers are zeroed on return.
 */
#ifndef ARC4PY_SSE_BLOCKS_FN
#error "define ARC4PY_SSE_BLOCKS_FN, ROTL, ROT16, ROT8, ROT16_ASM and ROT8_ASM first"
#endif

/* RFC 8439 2.1 on vectors: one quarter round in every lane. */
#define QR(a, b, c, d)                                                 \
    do {                                                               \
        a = _mm_add_epi32(a, b); d = _mm_xor_si128(d, a); d = ROT16(d); \
        c = _mm_add_epi32(c, d); b = _mm_xor_si128(b, c); b = ROTL(b, 12); \
        a = _mm_add_epi32(a, b); d = _mm_xor_si128(d, a); d = ROT8(d);  \
        c = _mm_add_epi32(c, d); b = _mm_xor_si128(b, c); b = ROTL(b, 7); \
    } while (0)

/*
 * The four-block pass is one inline-asm statement, for the same reason
 * and on the same plan as the avx2 core's 8-block group (see there): the
 * 16 state vectors and a temporary are one more than the 16 xmm
 * registers, and a compiler left to itself spills a different handful of
 * words, key words among them, on every round.  Here word 3 (row 0: the
 * constant "te k" at the start, the constant again from the output and
 * its word after the rounds, one word of sixteen in between) lives in a
 * 16-byte slot and %xmm3 is the temporary; every other word stays in its
 * register (%xmm<w>) from its load (from `in`, or the counter computed
 * from it) to its store as keystream.  A child forked by another thread
 * copies this thread's stack at any instant: it finds no key, nonce or
 * counter word there, and no working word that the output turns back
 * into one.
 */
#define X(w) "%%xmm" #w
#define TMP "%%xmm3"
#define SLOT "(%[slot])" /* word 3 */
#define NL "\n\t"

/* pshufb tables (the SSSE3 core's rotations): the bytes of each 32-bit
   lane rotated by 2, then by 1. */
static const uint8_t sse_rot_tables[32] __attribute__((aligned(16))) = {
    2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
    3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14};

/* Lane i is block counter + i; the same with the sign bit flipped, and
   the sign bit (SSE2 compares only signed words). */
static const uint32_t sse_lanes[12] __attribute__((aligned(16))) = {
    0, 1, 2, 3,
    0x80000000u, 0x80000000u, 0x80000000u, 0x80000000u,
    0x80000000u, 0x80000001u, 0x80000002u, 0x80000003u};

/* One step of a quarter round on chain (K, a, b, c, d), for
   chacha20_x86_rounds.h: K is A_IN_MEM for the chain whose a is word 3. */
#define STEP_P16(K, a, b, c, d) ROT16_ASM(d)
#define STEP_P8(K, a, b, c, d) ROT8_ASM(d)
#define STEP_C(K, a, b, c, d) "paddd " X(d) ", " X(c) NL
#define STEP_B(K, a, b, c, d) "pxor " X(c) ", " X(b) NL
#define STEP_R12(K, a, b, c, d) ROTL_ASM(b, 12, 20)
#define STEP_R7(K, a, b, c, d) ROTL_ASM(b, 7, 25)
#define STEP_A_A_IN_REG(a, b, c, d) "paddd " X(b) ", " X(a) NL
#define STEP_X_A_IN_REG(a, b, c, d) "pxor " X(a) ", " X(d) NL
#define STEP_A_A_IN_MEM(a, b, c, d)                                    \
    "movdqa " SLOT ", " TMP NL "paddd " X(b) ", " TMP NL               \
    "movdqa " TMP ", " SLOT NL "pxor " TMP ", " X(d) NL
#define STEP_X_A_IN_MEM(a, b, c, d)
/* r = r <<< n (m = 32 - n), through the temporary. */
#define ROTL_ASM(r, n, m)                                              \
    "movdqa " X(r) ", " TMP NL "pslld $" #n ", " X(r) NL               \
    "psrld $" #m ", " TMP NL "por " TMP ", " X(r) NL

#include "chacha20_x86_rounds.h"

/* %xmm<r> = input word w in every lane; %xmm<r> += it through %xmm<t>. */
#define LOAD_S(r, w)                                                     \
    "movd " #w "*4(%[s]), " X(r) NL "pshufd $0, " X(r) ", " X(r) NL
#define ADD_S(r, w, t) LOAD_S(t, w) "paddd " X(t) ", " X(r) NL
/*
 * The lanes' counters, computed from `in` each time rather than kept:
 * low = in[12] + lane; a lane whose low word wrapped (ended below its
 * lane offset) takes in[13] + 1.  LOAD_CTR sets %xmm12 and %xmm13 through
 * the temporary; ADD_CTR adds them to %xmm12 and %xmm13 through t, u.
 */
#define LOAD_CTR                                                         \
    LOAD_S(12, 12) "paddd (%[lanes]), %%xmm12" NL                        \
    "movdqa %%xmm12, %%xmm13" NL "pxor 16(%[lanes]), %%xmm13" NL         \
    "movdqa 32(%[lanes]), " TMP NL "pcmpgtd %%xmm13, " TMP NL            \
    LOAD_S(13, 13) "psubd " TMP ", %%xmm13" NL
#define ADD_CTR(t, u)                                                    \
    LOAD_S(t, 12) "paddd (%[lanes]), " X(t) NL                           \
    "paddd " X(t) ", %%xmm12" NL                                         \
    "pxor 16(%[lanes]), " X(t) NL "movdqa 32(%[lanes]), " X(u) NL        \
    "pcmpgtd " X(t) ", " X(u) NL "psubd " X(u) ", %%xmm13" NL            \
    ADD_S(13, 13, t)

/* Transpose words w..w+3 of the four blocks (a, b, c, d; lane = block)
   in place through t and store block j's at out + 64 j + off. */
#define TRANSPOSE_STORE(a, b, c, d, t, off)                              \
    "movdqa " X(a) ", " X(t) NL "punpckldq " X(b) ", " X(t) NL           \
    "punpckhdq " X(b) ", " X(a) NL                                       \
    "movdqa " X(c) ", " X(b) NL "punpckldq " X(d) ", " X(b) NL           \
    "punpckhdq " X(d) ", " X(c) NL                                       \
    "movdqa " X(t) ", " X(d) NL "punpcklqdq " X(b) ", " X(d) NL          \
    "punpckhqdq " X(b) ", " X(t) NL                                      \
    "movdqa " X(a) ", " X(b) NL "punpcklqdq " X(c) ", " X(b) NL          \
    "punpckhqdq " X(c) ", " X(a) NL                                      \
    "movdqu " X(d) ", " #off "(%[out])" NL                               \
    "movdqu " X(t) ", " #off "+64(%[out])" NL                            \
    "movdqu " X(b) ", " #off "+128(%[out])" NL                           \
    "movdqu " X(a) ", " #off "+192(%[out])" NL

/* Four blocks, counters in[12..13] + 0..3, to out.  Counter not advanced. */
static void vertical4(const uint32_t in[16], uint8_t *out, __m128i *slot)
{
    uint32_t it;

    __asm__ volatile(
        LOAD_CTR
        LOAD_S(3, 3) "movdqa " TMP ", " SLOT NL
        LOAD_S(0, 0) LOAD_S(1, 1) LOAD_S(2, 2) LOAD_S(4, 4) LOAD_S(5, 5)
        LOAD_S(6, 6) LOAD_S(7, 7) LOAD_S(8, 8) LOAD_S(9, 9) LOAD_S(10, 10)
        LOAD_S(11, 11) LOAD_S(14, 14) LOAD_S(15, 15)
        "movl $10, %[it]" NL
        ".p2align 4" NL
        "1:" NL
        DOUBLE_ROUND_ASM
        "decl %[it]" NL
        "jnz 1b" NL
        /* The feed-forward and stores, words 4-7 first (through the
           temporary); their registers are then free for the rest. */
        ADD_S(4, 4, 3) ADD_S(5, 5, 3) ADD_S(6, 6, 3) ADD_S(7, 7, 3)
        TRANSPOSE_STORE(4, 5, 6, 7, 3, 16)
        ADD_CTR(4, 5) ADD_S(14, 14, 4) ADD_S(15, 15, 4)
        TRANSPOSE_STORE(12, 13, 14, 15, 4, 48)
        ADD_S(8, 8, 4) ADD_S(9, 9, 4) ADD_S(10, 10, 4) ADD_S(11, 11, 4)
        TRANSPOSE_STORE(8, 9, 10, 11, 4, 32)
        "movdqa " SLOT ", %%xmm3" NL
        ADD_S(0, 0, 4) ADD_S(1, 1, 4) ADD_S(2, 2, 4) ADD_S(3, 3, 4)
        TRANSPOSE_STORE(0, 1, 2, 3, 4, 0)
        : [it] "=&r"(it)
        : [s] "r"(in), [slot] "r"(slot), [rot] "r"(sse_rot_tables),
          [lanes] "r"(sse_lanes), [out] "r"(out)
        : "memory", "cc", ARC4PY_XMM_CLOBBERS);
}

/*
 * n (1 or 2, a constant once inlined) blocks in the horizontal layout,
 * rows a, b, c, d = words 0-3, 4-7, 8-11, 12-15, in named registers (not
 * arrays, which a compiler may keep in memory).  Rotating rows b, c, d
 * left by 1, 2, 3 lanes turns the diagonals into columns.  Counter not
 * advanced.
 */
static inline __attribute__((always_inline)) void
rows2_n(const uint32_t in[16], uint8_t *out, const int n)
{
    const uint64_t ctr = ((uint64_t)in[13] << 32) | in[12];
    __m128i a0, b0, c0, d0, a1, b1, c1, d1;
    int i;

    /* Row d of block j: counter ctr + j, then the nonce. */
#define ROW_D(j) _mm_set_epi32((int)in[15], (int)in[14],                  \
                               (int)(uint32_t)((ctr + (j)) >> 32),        \
                               (int)(uint32_t)(ctr + (j)))
#define ROW(r) _mm_loadu_si128((const __m128i *)in + (r))
#define LINE_UP(b, c, d)                                                  \
    (b = _mm_shuffle_epi32(b, _MM_SHUFFLE(0, 3, 2, 1)),                   \
     c = _mm_shuffle_epi32(c, _MM_SHUFFLE(1, 0, 3, 2)),                   \
     d = _mm_shuffle_epi32(d, _MM_SHUFFLE(2, 1, 0, 3)))
#define PUT_BACK(b, c, d)                                                 \
    (b = _mm_shuffle_epi32(b, _MM_SHUFFLE(2, 1, 0, 3)),                   \
     c = _mm_shuffle_epi32(c, _MM_SHUFFLE(1, 0, 3, 2)),                   \
     d = _mm_shuffle_epi32(d, _MM_SHUFFLE(0, 3, 2, 1)))
    a0 = a1 = ROW(0);
    b0 = b1 = ROW(1);
    c0 = c1 = ROW(2);
    d0 = ROW_D(0);
    d1 = ROW_D(1);
    for (i = 0; i < 10; i++) {
        QR(a0, b0, c0, d0);
        if (n == 2)
            QR(a1, b1, c1, d1);
        LINE_UP(b0, c0, d0);
        if (n == 2)
            LINE_UP(b1, c1, d1);
        QR(a0, b0, c0, d0);
        if (n == 2)
            QR(a1, b1, c1, d1);
        PUT_BACK(b0, c0, d0);
        if (n == 2)
            PUT_BACK(b1, c1, d1);
    }
    /* The input rows again from `in`, not kept (spilled) since the start. */
    RNG_REREAD_THROUGH(in);
    _mm_storeu_si128((__m128i *)out, _mm_add_epi32(a0, ROW(0)));
    _mm_storeu_si128((__m128i *)(out + 16), _mm_add_epi32(b0, ROW(1)));
    _mm_storeu_si128((__m128i *)(out + 32), _mm_add_epi32(c0, ROW(2)));
    _mm_storeu_si128((__m128i *)(out + 48), _mm_add_epi32(d0, ROW_D(0)));
    if (n == 2) {
        _mm_storeu_si128((__m128i *)(out + 64), _mm_add_epi32(a1, ROW(0)));
        _mm_storeu_si128((__m128i *)(out + 80), _mm_add_epi32(b1, ROW(1)));
        _mm_storeu_si128((__m128i *)(out + 96), _mm_add_epi32(c1, ROW(2)));
        _mm_storeu_si128((__m128i *)(out + 112),
                         _mm_add_epi32(d1, ROW_D(1)));
    }
#undef ROW
#undef ROW_D
#undef LINE_UP
#undef PUT_BACK
}

void ARC4PY_SSE_BLOCKS_FN(uint32_t state[16], uint8_t *out, size_t nblocks)
{
    __m128i slot[1]; /* word 3's (vertical4) */

    for (; nblocks >= 4; nblocks -= 4) {
        vertical4(state, out, slot);
        arc4py_counter_add(state, 4);
        out += 4 * ARC4PY_CHACHA20_BLOCK_BYTES;
    }
    switch (nblocks) {
    case 3:
        rows2_n(state, out, 2);
        arc4py_counter_add(state, 2);
        rows2_n(state, out + 2 * ARC4PY_CHACHA20_BLOCK_BYTES, 1);
        arc4py_counter_add(state, 1);
        break;
    case 2:
        rows2_n(state, out, 2);
        arc4py_counter_add(state, 2);
        break;
    case 1:
        rows2_n(state, out, 1);
        arc4py_counter_add(state, 1);
        break;
    default:
        break;
    }
    ARC4PY_CLEAR_XMM();
}
