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
 * The x86-64 group.
 *
 * Why asm: the 8-block rounds need the 16 state vectors plus a temporary
 * for the shift-shift-or rotations, one more than the 16 ymm registers.
 * Left to itself, gcc 12 spills a different handful of state vectors on
 * every round (26 stack accesses per double round, and 165 instructions
 * where 128 do the work), key words among them.  The code below keeps
 * exactly one word in memory and everything else in fixed registers: 134
 * instructions per double round, of which 4 stores and 4 folded loads of
 * that one word.  Intrinsics versions (this schedule, or interleaved pairs
 * with the tables as memory operands) were 15-25% slower under gcc 12,
 * which re-spills them, and about 5% slower under clang 14.
 *
 * What may be in memory: a child forked by another thread copies this
 * thread's stack at any instant.  The word in memory is word 3, row 0:
 * the constant "te k" at the start; after the rounds, with the output,
 * it gives back only that constant; in between it is one word of sixteen
 * in each block, from which no quarter round runs back.  Every other word
 * stays in registers from its load (from s, or the counter computed from
 * s) to its store as keystream, so no key, nonce or counter word and no
 * working word that the output would turn back into one is ever on the
 * stack.
 *
 * Register plan in the round loop: word w of the state lives in %ymm<w>
 * for every w except 3.  Word 3 lives in a 32-byte stack slot; %ymm3 is
 * the temporary.  The quarter round that owns word 3 (column round:
 * 3 7 11 15, diagonal round: 3 4 9 14) reads it with a load folded into
 * its "a += b" and writes it back straight after, so the slot costs one
 * store per half quarter round and no register.  (Word 3 measured a
 * little faster than word 0 in the slot.)
 *
 * Order: the double round is chacha20_x86_rounds.h's, shared with the
 * 128-bit cores: each round's four quarter rounds as a wavefront, each one
 * step behind the one before.
 *
 * Measured on AMD EPYC (Zen 3, 2 cores), gcc 12 -O3, 1 MiB per call: the
 * previous intrinsics version ~2.3-2.5 GB/s, this ~3.0-3.3 GB/s (1.3x);
 * interleaved pairs with two words in memory gave 1.15x, all four quarter
 * rounds in lockstep 1.22x.
 */

/* Lane i of a group is block counter + i. */
static const uint32_t lane_offsets[8] __attribute__((aligned(32))) = {
    0, 1, 2, 3, 4, 5, 6, 7};

#define V(w) "%%ymm" #w
#define TMP "%%ymm3"
#define SLOT "(%[slot])" /* word 3 */
#define NL "\n\t"

/* One step of a quarter round on chain (K, a, b, c, d), for
   chacha20_x86_rounds.h: a, b, c, d are the state words (register
   numbers); K is A_IN_REG, or A_IN_MEM for the chain whose a is word 3
   (then a is ignored). */
#define STEP_P16(K, a, b, c, d) "vpshufb (%[rot]), " V(d) ", " V(d) NL
#define STEP_P8(K, a, b, c, d) "vpshufb 32(%[rot]), " V(d) ", " V(d) NL
#define STEP_C(K, a, b, c, d) "vpaddd " V(d) ", " V(c) ", " V(c) NL
#define STEP_B(K, a, b, c, d) "vpxor " V(c) ", " V(b) ", " V(b) NL
#define STEP_R12(K, a, b, c, d) ROTL_ASM(b, 12, 20)
#define STEP_R7(K, a, b, c, d) ROTL_ASM(b, 7, 25)

/* a += b, then d ^= a. */
#define STEP_A_A_IN_REG(a, b, c, d) "vpaddd " V(b) ", " V(a) ", " V(a) NL
#define STEP_X_A_IN_REG(a, b, c, d) "vpxor " V(a) ", " V(d) ", " V(d) NL
/* The same with a in the slot: both in one step, through the temporary. */
#define STEP_A_A_IN_MEM(a, b, c, d)             \
    "vpaddd " SLOT ", " V(b) ", " TMP NL        \
    "vmovdqa " TMP ", " SLOT NL                 \
    "vpxor " TMP ", " V(d) ", " V(d) NL
#define STEP_X_A_IN_MEM(a, b, c, d)

/* b = b <<< n (m = 32 - n), through the temporary. */
#define ROTL_ASM(b, n, m)                       \
    "vpslld $" #n ", " V(b) ", " TMP NL         \
    "vpsrld $" #m ", " V(b) ", " V(b) NL        \
    "vpor " TMP ", " V(b) ", " V(b) NL

#include "chacha20_x86_rounds.h"

/* %ymm<w> = input word w; %ymm<r> += input word w through %ymm<t>. */
#define LOAD_S(w) "vpbroadcastd " #w "*4(%[s]), " V(w) NL
#define ADD_S(r, w, t)                                                     \
    "vpbroadcastd " #w "*4(%[s]), " V(t) NL                                \
    "vpaddd " V(t) ", " V(r) ", " V(r) NL
/*
 * The lanes' counters, words 12 (low) and 13 (high), computed from s each
 * time rather than kept: low = s[12] + lane; a lane whose low word wrapped
 * (ended below its lane offset: min(low, offset) != offset) takes s[13] + 1.
 * LOAD_CTR sets %ymm12 and %ymm13, ADD_CTR adds them to %ymm12 and
 * %ymm13; both through the temporary only.
 */
#define LOAD_CTR                                                           \
    "vpbroadcastd 48(%[s]), %%ymm12" NL                                    \
    "vpaddd (%[lanes]), %%ymm12, %%ymm12" NL                               \
    "vpminud (%[lanes]), %%ymm12, %%ymm13" NL                              \
    "vpcmpeqd (%[lanes]), %%ymm13, %%ymm13" NL /* -1: no wrap */           \
    "vpbroadcastd 52(%[s]), " TMP NL                                       \
    "vpaddd " TMP ", %%ymm13, %%ymm13" NL                                  \
    "vpcmpeqd " TMP ", " TMP ", " TMP NL                                   \
    "vpsubd " TMP ", %%ymm13, %%ymm13" NL
#define ADD_CTR                                                            \
    "vpbroadcastd 48(%[s]), " TMP NL                                       \
    "vpaddd (%[lanes]), " TMP ", " TMP NL                                  \
    "vpaddd " TMP ", %%ymm12, %%ymm12" NL                                  \
    "vpminud (%[lanes]), " TMP ", " TMP NL                                 \
    "vpcmpeqd (%[lanes]), " TMP ", " TMP NL                                \
    "vpaddd " TMP ", %%ymm13, %%ymm13" NL                                  \
    "vpbroadcastd 52(%[s]), " TMP NL                                       \
    "vpaddd " TMP ", %%ymm13, %%ymm13" NL                                  \
    "vpcmpeqd " TMP ", " TMP ", " TMP NL                                   \
    "vpsubd " TMP ", %%ymm13, %%ymm13" NL
/* The feed-forward of words 8-15, through the temporary. */
#define ADD_8_15                                                           \
    ADD_S(8, 8, 3) ADD_S(9, 9, 3) ADD_S(10, 10, 3) ADD_S(11, 11, 3)        \
    ADD_CTR ADD_S(14, 14, 3) ADD_S(15, 15, 3)
/* The feed-forward of words 0-7 (word 3 from its slot), through %ymm8. */
#define ADD_0_7                                                            \
    "vmovdqa " SLOT ", %%ymm3" NL                                          \
    ADD_S(0, 0, 8) ADD_S(1, 1, 8) ADD_S(2, 2, 8) ADD_S(3, 3, 8)            \
    ADD_S(4, 4, 8) ADD_S(5, 5, 8) ADD_S(6, 6, 8) ADD_S(7, 7, 8)

/*
 * Transpose r0..r7 (words w..w+7 of blocks 0..7, lane = block) in place,
 * with the one free register t, and store words w..w+7 of block j at
 * out + 64 j + off (off = 4 w), for the blocks j that ST(j) stores.  The
 * two unpack stages make 4x4 transposes inside each 128-bit half (block j
 * in the low half, j + 4 in the high half); vperm2i128 joins the halves
 * of words w..w+3 and w+4..w+7.
 */
#define UNPCK(op, x, y, d) op " " V(y) ", " V(x) ", " V(d) NL
#define TRANSPOSE_STORE(ST, r0, r1, r2, r3, r4, r5, r6, r7, t, off)        \
    UNPCK("vpunpckldq", r0, r1, t)  UNPCK("vpunpckhdq", r0, r1, r1)        \
    UNPCK("vpunpckldq", r2, r3, r0) UNPCK("vpunpckhdq", r2, r3, r3)        \
    UNPCK("vpunpckldq", r4, r5, r2) UNPCK("vpunpckhdq", r4, r5, r5)        \
    UNPCK("vpunpckldq", r6, r7, r4) UNPCK("vpunpckhdq", r6, r7, r7)        \
    UNPCK("vpunpcklqdq", t, r0, r6)   /* blocks 0 | 4, words w..w+3 */     \
    UNPCK("vpunpckhqdq", t, r0, t)    /* 1 | 5 */                          \
    UNPCK("vpunpcklqdq", r1, r3, r0)  /* 2 | 6 */                          \
    UNPCK("vpunpckhqdq", r1, r3, r1)  /* 3 | 7 */                          \
    UNPCK("vpunpcklqdq", r2, r4, r3)  /* 0 | 4, words w+4..w+7 */          \
    UNPCK("vpunpckhqdq", r2, r4, r2)                                       \
    UNPCK("vpunpcklqdq", r5, r7, r4)                                       \
    UNPCK("vpunpckhqdq", r5, r7, r5)                                       \
    STORE_PAIR(ST, r6, r3, 0, 4, off, r7)                                  \
    STORE_PAIR(ST, t, r2, 1, 5, off, r7)                                   \
    STORE_PAIR(ST, r0, r4, 2, 6, off, r7)                                  \
    STORE_PAIR(ST, r1, r5, 3, 7, off, r7)
/* Blocks j (low halves of lo, hi) and k = j + 4 (high halves), via v. */
#define STORE_PAIR(ST, lo, hi, j, k, off, v)                               \
    "vperm2i128 $0x20, " V(hi) ", " V(lo) ", " V(v) NL                     \
    ST(j, "vmovdqu " V(v) ", " #off "+64*" #j "(%[out])" NL)               \
    "vperm2i128 $0x31, " V(hi) ", " V(lo) ", " V(v) NL                     \
    ST(k, "vmovdqu " V(v) ", " #off "+64*" #k "(%[out])" NL)
/* Every block; or only the blocks j < n (%[n]). */
#define ST_ALL(j, store) store
#define ST_BELOW_N(j, store) "cmpq $" #j ", %[n]" NL "jbe 2f" NL store "2:" NL

/* Load the group's input; run the 20 rounds.  Word 3 ends in its slot. */
#define ROUNDS_ASM                                                         \
    LOAD_S(3) "vmovdqa %%ymm3, " SLOT NL                                   \
    LOAD_S(0) LOAD_S(1) LOAD_S(2) LOAD_S(4) LOAD_S(5) LOAD_S(6) LOAD_S(7)  \
    LOAD_S(8) LOAD_S(9) LOAD_S(10) LOAD_S(11) LOAD_CTR                     \
    LOAD_S(14) LOAD_S(15)                                                  \
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

/*
 * The first n (3..8) blocks at the counter of s to out, any alignment:
 * vertical8 all 8, vertical8_n only those asked (no bounce buffer, so no
 * copy of the output either).  *slot is word 3's.
 */
#define VERTICAL8_ASM(ST)                                                  \
    __asm__ volatile(                                                      \
        ROUNDS_ASM                                                         \
        /* Words 8-15 first, while 0-7 wait in registers and the slot. */  \
        ADD_8_15                                                           \
        TRANSPOSE_STORE(ST, 8, 9, 10, 11, 12, 13, 14, 15, 3, 32)           \
        ADD_0_7                                                            \
        TRANSPOSE_STORE(ST, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0)                  \
        : [it] "=&r"(it)                                                   \
        : [s] "r"(s), [slot] "r"(slot), [rot] "r"(rot_tables),             \
          [lanes] "r"(lane_offsets), [out] "r"(out), [n] "r"(n)            \
        : ASM_CLOBBERS)

AVX2_FN static void vertical8(const uint32_t s[16], uint8_t *out,
                              __m256i *slot)
{
    const uint64_t n = 8;
    uint32_t it;

    VERTICAL8_ASM(ST_ALL);
}

AVX2_FN static void vertical8_n(const uint32_t s[16], uint8_t *out,
                                uint64_t n, __m256i *slot)
{
    uint32_t it;

    VERTICAL8_ASM(ST_BELOW_N);
}

/*
 * One or two blocks (n), row layout: register a holds words 0-3, b 4-7,
 * c 8-11, d 12-15, block 0 in the low 128 bits and block 1 in the high.
 * Column rounds are lane-wise; for the diagonal rounds b, c, d are rotated
 * by 1, 2, 3 words so that the diagonals line up in columns, then back.
 * The input is read from s again for the feed-forward (RNG_REREAD_THROUGH):
 * no copy of it is kept live through the rounds, to be spilled.
 */
AVX2_FN static void rows2_n(const uint32_t s[16], uint8_t *out, size_t n)
{
    const __m256i rot16 = _mm256_load_si256((const __m256i *)rot_tables);
    const __m256i rot8 = _mm256_load_si256((const __m256i *)rot_tables + 1);
    __m256i a, b, c, d;
    int i;

#define ROW(r) _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)s + (r)))
#define ROW_D                                                              \
    _mm256_setr_epi32((int)s[12], (int)s[13], (int)s[14], (int)s[15],      \
                      (int)(s[12] + 1u), (int)(s[13] + (s[12] + 1u == 0)), \
                      (int)s[14], (int)s[15])
    a = ROW(0); b = ROW(1); c = ROW(2); d = ROW_D;
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
    RNG_REREAD_THROUGH(s);
    a = _mm256_add_epi32(a, ROW(0));
    b = _mm256_add_epi32(b, ROW(1));
    c = _mm256_add_epi32(c, ROW(2));
    d = _mm256_add_epi32(d, ROW_D);
#undef ROW
#undef ROW_D

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
    /* Word 3's slot in the rounds: never a key word, nor one that the
       output turns back into a key word. */
    __m256i slot[1] __attribute__((aligned(32)));

    /* Measured: one row-layout call (latency-bound) costs about half an
     * 8-block group, so it wins for 1 or 2 blocks and the 8-block group,
     * storing only what is asked, wins from 3. */
    if (nblocks >= 3) {
        for (; nblocks >= 8; nblocks -= 8) {
            vertical8(state, out, slot);
            arc4py_counter_add(state, 8);
            out += 8 * ARC4PY_CHACHA20_BLOCK_BYTES;
        }
        if (nblocks >= 3) {
            vertical8_n(state, out, nblocks, slot);
            arc4py_counter_add(state, nblocks);
            nblocks = 0;
        }
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
#elif defined(ARC4PY_TARGET_X86_64)
#error "arc4py: this compiler cannot build the avx2 core: build with GCC, Clang or (Windows) clang-cl, or leave the core out by name, ARC4PY_NO_AVX2=1"
#else
ARC4PY_CORE_NOT_BUILT(avx2, ARC4PY_CORE_OTHER_ARCH);
#endif
