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
 * One group of eight blocks (rounds, feed-forward, transpose, stores) is
 * a single inline-asm statement; see "The x86-64 group" below for why and
 * how.  x86-64 only.
 *
 * Tails (names as in every core: vertical<W> is a full W-block pass,
 * vertical<W>_n the same pass storing only the first n blocks, rows<W>_n
 * up to W blocks in the row layout): 3..7 blocks run vertical8_n; 1 or 2
 * run rows2_n, side by side in the two 128-bit halves of four row
 * registers (the 4x4 state matrix, one row per register).  The AVX-512
 * core hands its tails of up to 8 blocks to this core.
 *
 * On return the vector registers are zeroed (vzeroall): no key word or
 * keystream stays in them.
 *
 * Functions carry target("avx2") so the file needs no -m flag; the dispatch
 * calls this core only when CPUID and XGETBV say AVX2 is usable.
 */
#include "chacha20_common.h"

#if defined(ARC4PY_X86_64) && !defined(ARC4PY_NO_AVX2)

#include <immintrin.h>

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

/* The shuffle tables: within each 32-bit lane, rotate left by 16, then 8. */
static const uint8_t rot_tables[64] __attribute__((aligned(32))) = {
    2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
    2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
    3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
    3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
};

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
    /* Join the halves: words w..w+7 of one block per register. */
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
 * A group of eight blocks is the state s (words 0-11, 14, 15, the same in
 * every block; read straight from s and broadcast where needed, so no
 * stack array here holds a copy of the key) and ctr[0], ctr[1]: words 12
 * and 13, each lane's own 64-bit block counter (low, high).
 */
AVX2_FN static void group_setup(const uint32_t s[16], __m256i ctr[2])
{
    __m256i lo, base;

    /* Low word base + lane; a lane whose low word wrapped (ended below
     * base) takes the high word + 1.  max(lo, base) == lo exactly when it
     * did not wrap, and that compare gives -1. */
    base = _mm256_set1_epi32((int)s[12]);
    lo = _mm256_add_epi32(base, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    ctr[0] = lo;
    ctr[1] = _mm256_add_epi32(_mm256_set1_epi32((int)(s[13] + 1u)),
                              _mm256_cmpeq_epi32(_mm256_max_epu32(lo, base),
                                                 lo));
}

/* Advance every lane's 64-bit counter by 8, carrying into the high word. */
AVX2_FN static inline void group_next(__m256i ctr[2])
{
    const __m256i eight = _mm256_set1_epi32(8);
    __m256i lo = _mm256_add_epi32(ctr[0], eight);

    /* The low word wrapped exactly when it is now below 8: then the high
     * word takes + 1, else + 1 - 1. */
    ctr[1] = _mm256_add_epi32(
        _mm256_sub_epi32(ctr[1], _mm256_set1_epi32(-1)),
        _mm256_cmpeq_epi32(_mm256_max_epu32(lo, eight), lo));
    ctr[0] = lo;
}

/*
 * The x86-64 group.
 *
 * Why asm: the 8-block rounds need the 16 state vectors plus a temporary
 * for the shift-shift-or rotations, one more than the 16 ymm registers.
 * Left to itself, gcc 12 spills a different handful of state vectors on
 * every round (26 stack accesses per double round, and 165 instructions
 * where 128 do the work).  The code below keeps exactly one word in
 * memory and everything else in fixed registers: 134 instructions per
 * double round, of which 4 stores and 4 folded loads of that one word.
 * Intrinsics versions (this schedule, or interleaved pairs with the
 * tables as memory operands) were 15-25% slower under gcc 12, which
 * re-spills them, and about 5% slower under clang 14.
 *
 * Register plan in the round loop: word w of the state lives in %ymm<w>
 * for every w except 8.  Word 8 lives in a 32-byte stack slot; %ymm8 is
 * the temporary.  The quarter round that owns word 8 (column round:
 * 0 4 8 12, diagonal round: 2 7 8 13) reads it with a load folded into
 * its "c += d" and writes it back straight after, so the slot costs one
 * store per half quarter round and no register.
 *
 * Order: each round runs its four quarter rounds as a wavefront, each one
 * step behind the one before (ROUND_ASM below), rather than one after
 * another, as two interleaved pairs, or all four in lockstep.  The four
 * chains then reach the byte shuffles and shifts (which share two of the
 * four vector ports on Zen 3) at different times.  The column round goes
 * 1, 2, 3, 0 and the diagonal round 0, 1, 2, 3: the order in which their
 * inputs become ready (diagonal quarter round j waits for b from column
 * quarter round j + 1, column quarter round k for b from diagonal quarter
 * round k - 1).
 *
 * Measured on AMD EPYC (Zen 3, 2 cores), gcc 12 -O3, 1 MiB per call: the
 * previous intrinsics version ~2.3-2.5 GB/s, this ~3.0-3.3 GB/s (1.3x);
 * interleaved pairs with two words in memory gave 1.15x, all four quarter
 * rounds in lockstep 1.22x.
 */

#define V(w) "%%ymm" #w
#define SLOT8 "256(%[xs])" /* word 8 in xs[8] */
#define NL "\n\t"

/*
 * One step of a quarter round on chain (K, a, b, c, d): a, b, c, d are the
 * state words (register numbers); K is C_IN_REG, or C_IN_MEM for the chain
 * whose c is word 8 (then c is ignored).  Every step that uses %ymm8 is a
 * single macro, so interleaving steps of different chains never splits one.
 */
#define STEP_A(K, a, b, c, d) "vpaddd " V(b) ", " V(a) ", " V(a) NL
#define STEP_X(K, a, b, c, d) "vpxor " V(a) ", " V(d) ", " V(d) NL
#define STEP_P16(K, a, b, c, d) "vpshufb (%[rot]), " V(d) ", " V(d) NL
#define STEP_P8(K, a, b, c, d) "vpshufb 32(%[rot]), " V(d) ", " V(d) NL
#define STEP_C(K, a, b, c, d) STEP_C_##K(a, b, c, d)
#define STEP_B(K, a, b, c, d) STEP_B_##K(a, b, c, d)
#define STEP_R12(K, a, b, c, d) ROTL_ASM(b, 12, 20)
#define STEP_R7(K, a, b, c, d) ROTL_ASM(b, 7, 25)
#define STEP_GAP(K, a, b, c, d)

/* c += d, then b ^= c. */
#define STEP_C_C_IN_REG(a, b, c, d) "vpaddd " V(d) ", " V(c) ", " V(c) NL
#define STEP_B_C_IN_REG(a, b, c, d) "vpxor " V(c) ", " V(b) ", " V(b) NL
/* The same with c in the slot: both in one step, through %ymm8. */
#define STEP_C_C_IN_MEM(a, b, c, d)             \
    "vpaddd " SLOT8 ", " V(d) ", %%ymm8" NL     \
    "vpxor %%ymm8, " V(b) ", " V(b) NL          \
    "vmovdqa %%ymm8, " SLOT8 NL
#define STEP_B_C_IN_MEM(a, b, c, d)

/* b = b <<< n (m = 32 - n), through %ymm8. */
#define ROTL_ASM(b, n, m)                       \
    "vpslld $" #n ", " V(b) ", %%ymm8" NL       \
    "vpsrld $" #m ", " V(b) ", " V(b) NL        \
    "vpor %%ymm8, " V(b) ", " V(b) NL

/*
 * One round: quarter rounds q0..q3 (parenthesised chains), q(k) running k
 * steps behind q(k-1).  A quarter round is the 14 steps
 *   A X P16 C B R12 gap  A X P8 C B R7 gap
 * (the gaps are just the wavefront's spacing).
 */
#define ROUND_ASM(q0, q1, q2, q3)                                        \
    STEP_A q0                                                            \
    STEP_X q0   STEP_A q1                                                \
    STEP_P16 q0 STEP_X q1   STEP_A q2                                    \
    STEP_C q0   STEP_P16 q1 STEP_X q2   STEP_A q3                        \
    STEP_B q0   STEP_C q1   STEP_P16 q2 STEP_X q3                        \
    STEP_R12 q0 STEP_B q1   STEP_C q2   STEP_P16 q3                      \
    STEP_GAP q0 STEP_R12 q1 STEP_B q2   STEP_C q3                        \
    STEP_A q0   STEP_GAP q1 STEP_R12 q2 STEP_B q3                        \
    STEP_X q0   STEP_A q1   STEP_GAP q2 STEP_R12 q3                      \
    STEP_P8 q0  STEP_X q1   STEP_A q2   STEP_GAP q3                      \
    STEP_C q0   STEP_P8 q1  STEP_X q2   STEP_A q3                        \
    STEP_B q0   STEP_C q1   STEP_P8 q2  STEP_X q3                        \
    STEP_R7 q0  STEP_B q1   STEP_C q2   STEP_P8 q3                       \
                STEP_R7 q1  STEP_B q2   STEP_C q3                        \
                            STEP_R7 q2  STEP_B q3                        \
                                        STEP_R7 q3

/* The double round: column round 1 2 3 0, diagonal round 0 1 2 3. */
#define DOUBLE_ROUND_ASM                                                 \
    ROUND_ASM((C_IN_REG, 1, 5, 9, 13), (C_IN_REG, 2, 6, 10, 14),         \
              (C_IN_REG, 3, 7, 11, 15), (C_IN_MEM, 0, 4, 8, 12))         \
    ROUND_ASM((C_IN_REG, 0, 5, 10, 15), (C_IN_REG, 1, 6, 11, 12),        \
              (C_IN_MEM, 2, 7, 8, 13), (C_IN_REG, 3, 4, 9, 14))

/* %ymm<w> = input word w (w = 12, 13: ctr[k]); %ymm<r> += that word.
 * ADD_S broadcasts through %ymm8, free once the rounds are done. */
#define LOAD_S(w) "vpbroadcastd " #w "*4(%[s]), " V(w) NL
#define LOAD_CTR(w, k) "vmovdqa " #k "*32(%[ctr]), " V(w) NL
#define ADD_S(r, w)                                                        \
    "vpbroadcastd " #w "*4(%[s]), %%ymm8" NL                               \
    "vpaddd %%ymm8, " V(r) ", " V(r) NL
#define ADD_CTR(r, k) "vpaddd " #k "*32(%[ctr]), " V(r) ", " V(r) NL
/* xs[w] = %ymm<w>; %ymm<r> = xs[w]. */
#define STORE_XS(w) "vmovdqa " V(w) ", " #w "*32(%[xs])" NL
#define LOAD_XS(r, w) "vmovdqa " #w "*32(%[xs]), " V(r) NL

/*
 * Transpose %ymm0..7 (words w..w+7 of blocks 0..7, lane = block) with
 * %ymm8..15 as scratch, and store words w..w+7 of block j at out + 64 j +
 * 4 w (off = 4 w).  The two unpack stages make 4x4 transposes inside each
 * 128-bit half (block j in the low half of %ymm<j>, block j + 4 in its
 * high half); vperm2i128 joins the halves.
 */
#define UNPCK(op, x, y, d) op " " V(y) ", " V(x) ", " V(d) NL
#define TRANSPOSE_STORE(off)                                               \
    UNPCK("vpunpckldq", 0, 1, 8)  UNPCK("vpunpckhdq", 0, 1, 9)             \
    UNPCK("vpunpckldq", 2, 3, 10) UNPCK("vpunpckhdq", 2, 3, 11)            \
    UNPCK("vpunpckldq", 4, 5, 12) UNPCK("vpunpckhdq", 4, 5, 13)            \
    UNPCK("vpunpckldq", 6, 7, 14) UNPCK("vpunpckhdq", 6, 7, 15)            \
    UNPCK("vpunpcklqdq", 8, 10, 0)  UNPCK("vpunpckhqdq", 8, 10, 1)         \
    UNPCK("vpunpcklqdq", 9, 11, 2)  UNPCK("vpunpckhqdq", 9, 11, 3)         \
    UNPCK("vpunpcklqdq", 12, 14, 4) UNPCK("vpunpckhqdq", 12, 14, 5)        \
    UNPCK("vpunpcklqdq", 13, 15, 6) UNPCK("vpunpckhqdq", 13, 15, 7)        \
    STORE_PAIR(0, 4, off) STORE_PAIR(1, 5, off)                            \
    STORE_PAIR(2, 6, off) STORE_PAIR(3, 7, off)
/* Blocks j (low halves of %ymm<j>, %ymm<k>) and j + 4 (high halves). */
#define STORE_PAIR(j, k, off)                                              \
    "vperm2i128 $0x20, " V(k) ", " V(j) ", " V(8) NL                     \
    "vmovdqu " V(8) ", " #off "+64*" #j "(%[out])" NL                      \
    "vperm2i128 $0x31, " V(k) ", " V(j) ", " V(9) NL                     \
    "vmovdqu " V(9) ", " #off "+64*" #k "(%[out])" NL

/* Load the group's input; run the 20 rounds.  Word 8 ends in xs[8]. */
#define ROUNDS_ASM                                                         \
    /* words 0-7, 9-15 to registers, word 8 to its slot */                 \
    LOAD_S(0) LOAD_S(1) LOAD_S(2) LOAD_S(3)                                \
    LOAD_S(4) LOAD_S(5) LOAD_S(6) LOAD_S(7)                                \
    LOAD_S(9) LOAD_S(10) LOAD_S(11) LOAD_CTR(12, 0)                        \
    LOAD_CTR(13, 1) LOAD_S(14) LOAD_S(15) LOAD_S(8)                        \
    "vmovdqa %%ymm8, " SLOT8 NL                                            \
    "movl $10, %[it]" NL                                                   \
    ".p2align 4" NL                                                        \
    "1:" NL                                                                \
    DOUBLE_ROUND_ASM                                                       \
    "decl %[it]" NL                                                        \
    "jnz 1b" NL

#define ASM_CLOBBERS                                                       \
    "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", \
        "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",         \
        "xmm14", "xmm15"

/* The 8 blocks of group (s, ctr) to out[0..511], any alignment. */
AVX2_FN static void vertical8(const uint32_t s[16], const __m256i ctr[2],
                           uint8_t *out)
{
    __m256i xs[16] __attribute__((aligned(32)));
    uint32_t it;

    __asm__ volatile(
        ROUNDS_ASM
        /* Words 9-15 wait in xs[] (beside word 8) while words 0-7 get
         * the feed-forward and are stored; xs[] only ever holds the
         * state before the feed-forward, never keystream. */
        STORE_XS(9) STORE_XS(10) STORE_XS(11) STORE_XS(12)
        STORE_XS(13) STORE_XS(14) STORE_XS(15)
        ADD_S(0, 0) ADD_S(1, 1) ADD_S(2, 2) ADD_S(3, 3)
        ADD_S(4, 4) ADD_S(5, 5) ADD_S(6, 6) ADD_S(7, 7)
        TRANSPOSE_STORE(0)
        LOAD_XS(0, 8) LOAD_XS(1, 9) LOAD_XS(2, 10) LOAD_XS(3, 11)
        LOAD_XS(4, 12) LOAD_XS(5, 13) LOAD_XS(6, 14) LOAD_XS(7, 15)
        ADD_S(0, 8) ADD_S(1, 9) ADD_S(2, 10) ADD_S(3, 11)
        ADD_CTR(4, 0) ADD_CTR(5, 1) ADD_S(6, 14) ADD_S(7, 15)
        TRANSPOSE_STORE(32)
        : [it] "=&r"(it)
        : [s] "r"(s), [ctr] "r"(ctr), [xs] "r"(xs), [rot] "r"(rot_tables),
          [out] "r"(out)
        : ASM_CLOBBERS);
}

/* xs = the 8 blocks of keystream of group (s, ctr), lane = block: the
   feed-forward is done in registers, so xs never holds the state before
   it (from which the rounds could be run back to the key). */
AVX2_FN static void keystream8(const uint32_t s[16], const __m256i ctr[2],
                               __m256i xs[16])
{
    uint32_t it;

    __asm__ volatile(
        ROUNDS_ASM
        ADD_S(0, 0) ADD_S(1, 1) ADD_S(2, 2) ADD_S(3, 3)
        ADD_S(4, 4) ADD_S(5, 5) ADD_S(6, 6) ADD_S(7, 7)
        STORE_XS(0) STORE_XS(1) STORE_XS(2) STORE_XS(3)
        STORE_XS(4) STORE_XS(5) STORE_XS(6) STORE_XS(7)
        LOAD_XS(0, 8)
        ADD_S(0, 8) ADD_S(9, 9) ADD_S(10, 10) ADD_S(11, 11)
        ADD_CTR(12, 0) ADD_CTR(13, 1) ADD_S(14, 14) ADD_S(15, 15)
        STORE_XS(9) STORE_XS(10) STORE_XS(11) STORE_XS(12)
        STORE_XS(13) STORE_XS(14) STORE_XS(15)
        "vmovdqa %%ymm0, " SLOT8 NL
        : [it] "=&r"(it)
        : [s] "r"(s), [ctr] "r"(ctr), [xs] "r"(xs), [rot] "r"(rot_tables)
        : ASM_CLOBBERS);
}


/*
 * The first n (1..8) blocks of group (s, ctr) to out: the group's
 * keystream, then the transposes in C, storing only what is asked.
 */
AVX2_FN static void vertical8_n(const uint32_t s[16], const __m256i ctr[2],
                            uint8_t *out, size_t n)
{
    __m256i xs[16] __attribute__((aligned(32)));

    keystream8(s, ctr, xs);
    transpose_store8(out, n, xs[0], xs[1], xs[2], xs[3], xs[4], xs[5], xs[6],
                     xs[7]);
    transpose_store8(out + 32, n, xs[8], xs[9], xs[10], xs[11], xs[12],
                     xs[13], xs[14], xs[15]);
}


/*
 * One or two blocks (n), row layout: register a holds words 0-3, b 4-7,
 * c 8-11, d 12-15, block 0 in the low 128 bits and block 1 in the high.
 * Column rounds are lane-wise; for the diagonal rounds b, c, d are rotated
 * by 1, 2, 3 words so that the diagonals line up in columns, then back.
 */
AVX2_FN static void rows2_n(const uint32_t s[16], uint8_t *out,
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
    __m256i ctr[2] __attribute__((aligned(32)));
    size_t done;

    /* Measured: one row-layout call (latency-bound) costs about half an
     * 8-block group, so it wins for 1 or 2 blocks and the 8-block group,
     * storing only what is asked, wins from 3. */
    if (nblocks >= 3) {
        group_setup(state, ctr);
        for (done = 0; nblocks - done >= 8; done += 8) {
            vertical8(state, ctr, out + done * ARC4PY_CHACHA20_BLOCK_BYTES);
            group_next(ctr);
        }
        if (nblocks - done >= 3) {
            vertical8_n(state, ctr, out + done * ARC4PY_CHACHA20_BLOCK_BYTES,
                    nblocks - done);
            done = nblocks;
        }
        arc4py_counter_add(state, done);
        out += done * ARC4PY_CHACHA20_BLOCK_BYTES;
        nblocks -= done;
    }
    if (nblocks > 0) {
        rows2_n(state, out, nblocks);
        arc4py_counter_add(state, nblocks);
    }
    ARC4PY_CLEAR_YMM();
}

#endif /* x86-64, not left out */

#if defined(ARC4PY_NO_AVX2)
ARC4PY_CORE_NOT_BUILT(avx2, ARC4PY_CORE_LEFT_OUT);
#elif defined(ARC4PY_X86_64)
ARC4PY_CORE_BUILT_HERE(avx2);
#else
ARC4PY_CORE_NOT_BUILT(avx2, ARC4PY_CORE_OTHER_ARCH);
#endif
