/*
 * The double round of the x86 vertical cores' asm passes, as assembly
 * text (internal; included by chacha20_avx2.c and chacha20_sse_body.h).
 * The includer defines one step of a quarter round for its registers,
 * each a string of instructions, with a, b, c, d the state words
 * (register numbers) of the chain and K A_IN_REG or A_IN_MEM (the chain
 * whose a is word 3, which lives in memory: see chacha20_avx2.c):
 *   STEP_A_A_IN_REG, STEP_A_A_IN_MEM   a += b (the second also d ^= a)
 *   STEP_X_A_IN_REG, STEP_X_A_IN_MEM   d ^= a (the second nothing)
 *   STEP_P16, STEP_P8                  d <<<= 16, 8
 *   STEP_C, STEP_B                     c += d, b ^= c
 *   STEP_R12, STEP_R7                  b <<<= 12, 7
 * Every step that uses a temporary is a single macro, so interleaving
 * steps of different chains never splits one.
 *
 * Order: each round runs its four quarter rounds as a wavefront, each one
 * step behind the one before, rather than one after another, as two
 * interleaved pairs, or all four in lockstep.  The four chains then reach
 * the byte shuffles and shifts (which share two of the four vector ports
 * on Zen 3) at different times.  The column round goes 1, 2, 3, 0 and the
 * diagonal round 0, 1, 2, 3: the order in which their inputs become ready
 * (diagonal quarter round j waits for b from column quarter round j + 1,
 * column quarter round k for b from diagonal quarter round k - 1).
 */
#ifndef ARC4PY_CHACHA20_X86_ROUNDS_H
#define ARC4PY_CHACHA20_X86_ROUNDS_H

#define STEP_A(K, a, b, c, d) STEP_A_##K(a, b, c, d)
#define STEP_X(K, a, b, c, d) STEP_X_##K(a, b, c, d)
#define STEP_GAP(K, a, b, c, d)

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
    ROUND_ASM((A_IN_REG, 1, 5, 9, 13), (A_IN_REG, 2, 6, 10, 14),         \
              (A_IN_MEM, 3, 7, 11, 15), (A_IN_REG, 0, 4, 8, 12))         \
    ROUND_ASM((A_IN_REG, 0, 5, 10, 15), (A_IN_REG, 1, 6, 11, 12),        \
              (A_IN_REG, 2, 7, 8, 13), (A_IN_MEM, 3, 4, 9, 14))

#endif
