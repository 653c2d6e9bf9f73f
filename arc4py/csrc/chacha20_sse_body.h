/*
 * The body of the two 128-bit cores, chacha20_sse2.c and chacha20_ssse3.c
 * (internal; included by those files only).  They differ in nothing but
 * the rotations by 16 and 8 bits, so the includer defines ROTL, ROT16,
 * ROT8 and ARC4PY_SSE_BLOCKS_FN (the function's name) and enables its
 * instruction set before including this.
 *
 * Full strides of four blocks use the vertical layout: vector i holds state
 * word i of four consecutive blocks, one block per 32-bit lane, so a vector
 * quarter round is four block quarter rounds and the diagonal round needs
 * no lane shuffles.  A 4x4 transpose per group of four words serialises the
 * blocks.  The last 1..3 blocks use the horizontal layout (one vector per
 * state row), two at a time interleaved: a lone horizontal block is bound
 * by latency, so two cost little more than one (three interleaved would
 * spill a whole block's rows to the stack).  (Names as in every core:
 * vertical<W> is a full W-block pass, rows<W>_n up to W blocks in the row
 * layout.)  The xmm registers are zeroed on return.
 */
#ifndef ARC4PY_SSE_BLOCKS_FN
#error "define ARC4PY_SSE_BLOCKS_FN, ROTL, ROT16 and ROT8 before including"
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
 * Two independent quarter rounds, step by step.  Pairing them measured
 * faster than four in a row (gcc spills less) or four interleaved (more
 * temporaries than the 16 xmm registers hold).
 */
#define QR2(a, b, c, d, e, f, g, h)                                    \
    do {                                                               \
        a = _mm_add_epi32(a, b); e = _mm_add_epi32(e, f);              \
        d = _mm_xor_si128(d, a); h = _mm_xor_si128(h, e);              \
        d = ROT16(d); h = ROT16(h);                                    \
        c = _mm_add_epi32(c, d); g = _mm_add_epi32(g, h);              \
        b = _mm_xor_si128(b, c); f = _mm_xor_si128(f, g);              \
        b = ROTL(b, 12); f = ROTL(f, 12);                              \
        a = _mm_add_epi32(a, b); e = _mm_add_epi32(e, f);              \
        d = _mm_xor_si128(d, a); h = _mm_xor_si128(h, e);              \
        d = ROT8(d); h = ROT8(h);                                      \
        c = _mm_add_epi32(c, d); g = _mm_add_epi32(g, h);              \
        b = _mm_xor_si128(b, c); f = _mm_xor_si128(f, g);              \
        b = ROTL(b, 7); f = ROTL(f, 7);                                \
    } while (0)

/* Serialise one word group of four lanes: lane j goes to out + 64 * j. */
#define TRANSPOSE_STORE(a, b, c, d, out)                                  \
    do {                                                                  \
        __m128i t0_ = _mm_unpacklo_epi32(a, b); /* a0 b0 a1 b1 */         \
        __m128i t1_ = _mm_unpacklo_epi32(c, d); /* c0 d0 c1 d1 */         \
        __m128i t2_ = _mm_unpackhi_epi32(a, b); /* a2 b2 a3 b3 */         \
        __m128i t3_ = _mm_unpackhi_epi32(c, d); /* c2 d2 c3 d3 */         \
        _mm_storeu_si128((__m128i *)(out), _mm_unpacklo_epi64(t0_, t1_)); \
        _mm_storeu_si128((__m128i *)((out) + 64),                         \
                         _mm_unpackhi_epi64(t0_, t1_));                   \
        _mm_storeu_si128((__m128i *)((out) + 128),                        \
                         _mm_unpacklo_epi64(t2_, t3_));                   \
        _mm_storeu_si128((__m128i *)((out) + 192),                        \
                         _mm_unpackhi_epi64(t2_, t3_));                   \
    } while (0)

/* Word 12 (low counter) and word 13 (high) of four blocks, counters
   in[12..13] + 0..3. */
#define COUNTER_LANES(in, lo, hi)                                          \
    do {                                                                  \
        const __m128i sign_ = _mm_set1_epi32(INT32_MIN);                  \
        const __m128i base_ = _mm_set1_epi32((int)(in)[12]);              \
        /* A lane whose low word wrapped is below the start, unsigned;   \
         * pcmpgtd compares only signed (no unsigned form before SSE4.1), \
         * so flip both sign bits first.  The compare gives -1 in the     \
         * wrapped lanes: subtracting it carries into word 13. */         \
        lo = _mm_add_epi32(base_, _mm_set_epi32(3, 2, 1, 0));             \
        hi = _mm_sub_epi32(_mm_set1_epi32((int)(in)[13]),                 \
                           _mm_cmplt_epi32(_mm_xor_si128(lo, sign_),      \
                                           _mm_xor_si128(base_, sign_))); \
    } while (0)

/*
 * Four blocks, counters in[12..13] + 0..3, to out.  Counter not advanced.
 * The input is read from `in` for the rounds and again for the
 * feed-forward (RNG_REREAD_THROUGH), never copied to the stack: a fork
 * while a fill runs finds no input state there.
 */
static inline __attribute__((always_inline)) void
vertical4(const uint32_t in[16], uint8_t *out)
{
    __m128i x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14,
        x15, lo, hi;
    int i;

#define B(i) _mm_set1_epi32((int)in[i])
    x0 = B(0); x1 = B(1); x2 = B(2); x3 = B(3);
    x4 = B(4); x5 = B(5); x6 = B(6); x7 = B(7);
    x8 = B(8); x9 = B(9); x10 = B(10); x11 = B(11);
    COUNTER_LANES(in, x12, x13);
    x14 = B(14); x15 = B(15);
    for (i = 0; i < 10; i++) {
        /* column round */
        QR2(x0, x4, x8, x12, x1, x5, x9, x13);
        QR2(x2, x6, x10, x14, x3, x7, x11, x15);
        /* diagonal round */
        QR2(x0, x5, x10, x15, x1, x6, x11, x12);
        QR2(x2, x7, x8, x13, x3, x4, x9, x14);
    }
    RNG_REREAD_THROUGH(in);
    x0 = _mm_add_epi32(x0, B(0)); x1 = _mm_add_epi32(x1, B(1));
    x2 = _mm_add_epi32(x2, B(2)); x3 = _mm_add_epi32(x3, B(3));
    TRANSPOSE_STORE(x0, x1, x2, x3, out);
    x4 = _mm_add_epi32(x4, B(4)); x5 = _mm_add_epi32(x5, B(5));
    x6 = _mm_add_epi32(x6, B(6)); x7 = _mm_add_epi32(x7, B(7));
    TRANSPOSE_STORE(x4, x5, x6, x7, out + 16);
    x8 = _mm_add_epi32(x8, B(8)); x9 = _mm_add_epi32(x9, B(9));
    x10 = _mm_add_epi32(x10, B(10)); x11 = _mm_add_epi32(x11, B(11));
    TRANSPOSE_STORE(x8, x9, x10, x11, out + 32);
    COUNTER_LANES(in, lo, hi);
    x12 = _mm_add_epi32(x12, lo); x13 = _mm_add_epi32(x13, hi);
    x14 = _mm_add_epi32(x14, B(14)); x15 = _mm_add_epi32(x15, B(15));
    TRANSPOSE_STORE(x12, x13, x14, x15, out + 48);
#undef B
}

/*
 * n (1 or 2, a constant once inlined) blocks in the horizontal layout, rows
 * a, b, c, d = words 0-3, 4-7, 8-11, 12-15.  Rotating rows b, c, d left by
 * 1, 2, 3 lanes turns the diagonals into columns.  Counter not advanced.
 */
static inline __attribute__((always_inline)) void
rows2_n(const uint32_t in[16], uint8_t *out, const int n)
{
    const uint64_t ctr = ((uint64_t)in[13] << 32) | in[12];
    __m128i a[2], b[2], c[2], d[2];
    int i, j;

    /* Row d of block j: counter ctr + j, then the nonce. */
#define ROW_D(j) _mm_set_epi32((int)in[15], (int)in[14],                  \
                               (int)(uint32_t)((ctr + (j)) >> 32),        \
                               (int)(uint32_t)(ctr + (j)))
#define ROW(r) _mm_loadu_si128((const __m128i *)in + (r))
    for (j = 0; j < n; j++) {
        a[j] = ROW(0); b[j] = ROW(1); c[j] = ROW(2); d[j] = ROW_D(j);
    }
    for (i = 0; i < 10; i++) {
        /* column round, then line the diagonals up */
        for (j = 0; j < n; j++)
            QR(a[j], b[j], c[j], d[j]);
        for (j = 0; j < n; j++) {
            b[j] = _mm_shuffle_epi32(b[j], _MM_SHUFFLE(0, 3, 2, 1));
            c[j] = _mm_shuffle_epi32(c[j], _MM_SHUFFLE(1, 0, 3, 2));
            d[j] = _mm_shuffle_epi32(d[j], _MM_SHUFFLE(2, 1, 0, 3));
        }
        /* diagonal round, then put the rows back */
        for (j = 0; j < n; j++)
            QR(a[j], b[j], c[j], d[j]);
        for (j = 0; j < n; j++) {
            b[j] = _mm_shuffle_epi32(b[j], _MM_SHUFFLE(2, 1, 0, 3));
            c[j] = _mm_shuffle_epi32(c[j], _MM_SHUFFLE(1, 0, 3, 2));
            d[j] = _mm_shuffle_epi32(d[j], _MM_SHUFFLE(0, 3, 2, 1));
        }
    }
    /* The input rows again from `in`, not kept (spilled) since the start. */
    RNG_REREAD_THROUGH(in);
    for (j = 0; j < n; j++) {
        uint8_t *o = out + 64 * j;
        _mm_storeu_si128((__m128i *)o, _mm_add_epi32(a[j], ROW(0)));
        _mm_storeu_si128((__m128i *)(o + 16), _mm_add_epi32(b[j], ROW(1)));
        _mm_storeu_si128((__m128i *)(o + 32), _mm_add_epi32(c[j], ROW(2)));
        _mm_storeu_si128((__m128i *)(o + 48), _mm_add_epi32(d[j], ROW_D(j)));
    }
#undef ROW
#undef ROW_D
}

void ARC4PY_SSE_BLOCKS_FN(uint32_t state[16], uint8_t *out, size_t nblocks)
{
    for (; nblocks >= 4; nblocks -= 4) {
        vertical4(state, out);
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
