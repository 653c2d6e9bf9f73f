/*
 * NEON (aarch64 Advanced SIMD) ChaCha20 keystream core, written from
 * RFC 8439 section 2 and D. J. Bernstein, "ChaCha, a variant of Salsa20".
 *
 * Four blocks per pass in the vertical layout: x[w] holds state word w of
 * four consecutive blocks, one block per 32-bit lane, so a vector quarter
 * round is four block quarter rounds and the diagonal round needs no lane
 * shuffles.  The 16 state vectors, their inputs and temporaries fit in the
 * 32 vector registers.  Rotations: by 16 is a swap of the 16-bit halves
 * (vrev32q_u16); by 8 a byte table lookup (vqtbl1q_u8); by 12 and 7 a
 * shift left then shift-right-insert (vsriq_n_u32).
 *
 * Tails of 1..3 blocks run the same pass and store only the blocks asked
 * for (names as in every core: vertical<W>_n is a W-block pass storing the
 * first n), so nothing is written past out.  The vector registers are
 * zeroed on return.
 *
 * Advanced SIMD is mandatory on aarch64, so the file needs no target flag.
 * Verified under qemu-user emulation (tests/cores/test_neon_qemu.py); not yet
 * timed on ARM hardware.
 */
#include "chacha20_common.h"

#if defined(ARC4PY_AARCH64) && !defined(ARC4PY_NO_NEON)

#include <arm_neon.h>

#define ROT16(v) vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u32(v)))
#define ROT8(v, tbl) \
    vreinterpretq_u32_u8(vqtbl1q_u8(vreinterpretq_u8_u32(v), (tbl)))
/* (v << n) with the top n bits of v inserted below: v <<< n. */
#define ROTL(v, n) vsriq_n_u32(vshlq_n_u32((v), (n)), (v), 32 - (n))

/* RFC 8439 2.1, one quarter round in every lane. */
#define QR(a, b, c, d)                                        \
    do {                                                      \
        a = vaddq_u32(a, b); d = ROT16(veorq_u32(d, a));       \
        c = vaddq_u32(c, d); b = ROTL(veorq_u32(b, c), 12);    \
        a = vaddq_u32(a, b); d = ROT8(veorq_u32(d, a), rot8);  \
        c = vaddq_u32(c, d); b = ROTL(veorq_u32(b, c), 7);     \
    } while (0)

/* Byte indices: within each 32-bit lane, rotate left by one byte. */
static const uint8_t rot8_index[16] = {3, 0, 1, 2, 7, 4, 5, 6,
                                       11, 8, 9, 10, 15, 12, 13, 14};

/*
 * Serialise words w..w+3 (vectors a, b, c, d; lane j = block j) of the
 * first n blocks: block j's 16 bytes go to out + 64 j.  trn1/trn2 pair up
 * the words of blocks (0, 2) and (1, 3); the 64-bit zips join the pairs.
 */
static inline void transpose_store(uint32x4_t a, uint32x4_t b, uint32x4_t c,
                                   uint32x4_t d, uint8_t *out, size_t n)
{
    uint32x4_t t0 = vtrn1q_u32(a, b); /* a0 b0 a2 b2 */
    uint32x4_t t1 = vtrn2q_u32(a, b); /* a1 b1 a3 b3 */
    uint32x4_t t2 = vtrn1q_u32(c, d); /* c0 d0 c2 d2 */
    uint32x4_t t3 = vtrn2q_u32(c, d); /* c1 d1 c3 d3 */
    uint64x2_t u0 = vreinterpretq_u64_u32(t0), u1 = vreinterpretq_u64_u32(t1);
    uint64x2_t u2 = vreinterpretq_u64_u32(t2), u3 = vreinterpretq_u64_u32(t3);

    vst1q_u8(out, vreinterpretq_u8_u64(vzip1q_u64(u0, u2)));
    if (n > 1)
        vst1q_u8(out + 64, vreinterpretq_u8_u64(vzip1q_u64(u1, u3)));
    if (n > 2)
        vst1q_u8(out + 128, vreinterpretq_u8_u64(vzip2q_u64(u0, u2)));
    if (n > 3)
        vst1q_u8(out + 192, vreinterpretq_u8_u64(vzip2q_u64(u1, u3)));
}

/* Four blocks, counters in[12..13] + 0..3; stores the first n (1..4).
 * The counter in in[] is not advanced. */
static void vertical4_n(const uint32_t in[16], uint8_t *out, size_t n)
{
    static const uint32_t lane[4] = {0, 1, 2, 3};
    const uint8x16_t rot8 = vld1q_u8(rot8_index);
    uint32x4_t x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13,
        x14, x15, lo, hi;
    int i;

    /* Lane j counts from counter + j; a lane whose low word wrapped (is now
     * below the start, unsigned) has all ones in the compare, and
     * subtracting that carries 1 into the high word. */
    lo = vaddq_u32(vdupq_n_u32(in[12]), vld1q_u32(lane));
    hi = vsubq_u32(vdupq_n_u32(in[13]), vcltq_u32(lo, vdupq_n_u32(in[12])));

    x0 = vdupq_n_u32(in[0]);   x1 = vdupq_n_u32(in[1]);
    x2 = vdupq_n_u32(in[2]);   x3 = vdupq_n_u32(in[3]);
    x4 = vdupq_n_u32(in[4]);   x5 = vdupq_n_u32(in[5]);
    x6 = vdupq_n_u32(in[6]);   x7 = vdupq_n_u32(in[7]);
    x8 = vdupq_n_u32(in[8]);   x9 = vdupq_n_u32(in[9]);
    x10 = vdupq_n_u32(in[10]); x11 = vdupq_n_u32(in[11]);
    x12 = lo;                  x13 = hi;
    x14 = vdupq_n_u32(in[14]); x15 = vdupq_n_u32(in[15]);

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

    /* Feed-forward (add the input, read again from in: no copy of the key
       kept live, or spilled, since the start), then one 4x4 transpose per
       row. */
    RNG_REREAD_THROUGH(in);
#define ADD(x, w) vaddq_u32((x), vdupq_n_u32(in[w]))
    transpose_store(ADD(x0, 0), ADD(x1, 1), ADD(x2, 2), ADD(x3, 3), out, n);
    transpose_store(ADD(x4, 4), ADD(x5, 5), ADD(x6, 6), ADD(x7, 7), out + 16,
                    n);
    transpose_store(ADD(x8, 8), ADD(x9, 9), ADD(x10, 10), ADD(x11, 11),
                    out + 32, n);
    transpose_store(vaddq_u32(x12, lo), vaddq_u32(x13, hi), ADD(x14, 14),
                    ADD(x15, 15), out + 48, n);
#undef ADD
}

void arc4py_chacha20_blocks_neon(uint32_t state[16], uint8_t *out,
                                 size_t nblocks)
{
    for (; nblocks >= 4; nblocks -= 4) {
        vertical4_n(state, out, 4);
        arc4py_counter_add(state, 4);
        out += 4 * ARC4PY_CHACHA20_BLOCK_BYTES;
    }
    if (nblocks > 0) {
        vertical4_n(state, out, nblocks);
        arc4py_counter_add(state, nblocks);
    }
    ARC4PY_CLEAR_NEON();
}

#endif /* aarch64, not left out */

#if defined(ARC4PY_NO_NEON)
ARC4PY_CORE_NOT_BUILT(neon, ARC4PY_CORE_LEFT_OUT);
#elif defined(ARC4PY_AARCH64)
ARC4PY_CORE_BUILT_HERE(neon);
#elif defined(ARC4PY_TARGET_AARCH64)
#error "arc4py: this compiler cannot build the neon core: build with GCC, Clang or (Windows) clang-cl, or leave the core out by name, ARC4PY_NO_NEON=1"
#else
ARC4PY_CORE_NOT_BUILT(neon, ARC4PY_CORE_OTHER_ARCH);
#endif
