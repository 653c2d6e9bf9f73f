/*
 * Portable ChaCha20 keystream core, written from RFC 8439 section 2.
 * It is the reference every SIMD core is tested against, and the fallback
 * for the tails that the wide cores leave.
 */
#include "chacha20_common.h"

#define ROTL32(v, n) (((v) << (n)) | ((v) >> (32 - (n))))

/* RFC 8439 2.1: the quarter round on four words of the working state;
   a is volatile (in memory), so each "a += b" is read once, written once. */
#define QUARTERROUND(a, b, c, d)                  \
    do {                                          \
        uint32_t a_ = a + b;                      \
        a = a_; d ^= a_; d = ROTL32(d, 16);       \
        c += d; b ^= c; b = ROTL32(b, 12);        \
        a_ = a + b;                               \
        a = a_; d ^= a_; d = ROTL32(d, 8);        \
        c += d; b ^= c; b = ROTL32(b, 7);         \
    } while (0)

/*
 * One block: 20 rounds, add the input state, serialise little-endian.
 *
 * The 16 working words and the loop's own values are more than the 15
 * general registers of x86-64, so some live in memory, and a child forked
 * by another thread copies this thread's stack at any instant.  Row 0
 * (words 0-3) is the row kept there, by volatile: the constants at the
 * start, the constants again from the output and its words after the
 * rounds, four words of sixteen in between, from which no quarter round
 * runs back.  With it, the round counter and the two pointers in memory
 * (and the function out of line, so that its caller's values are not
 * live through it), the other twelve words fit in registers, and the
 * compiler has no reason to spill one (a key word at the start; after the
 * rounds, one the output turns back into a key word).  The feed-forward
 * reads the input again through `in`: no copy of it is kept either.
 */
RNG_NOINLINE static void chacha20_block(const uint32_t *in_arg,
                                        uint8_t *out_arg)
{
    const uint32_t *volatile in_mem = in_arg;
    uint8_t *volatile out_mem = out_arg;
    const uint32_t *in = in_arg;
    uint8_t *out;
    volatile uint32_t row0[4];
    volatile int i;
    uint32_t x4 = in[4], x5 = in[5], x6 = in[6], x7 = in[7];
    uint32_t x8 = in[8], x9 = in[9], x10 = in[10], x11 = in[11];
    uint32_t x12 = in[12], x13 = in[13], x14 = in[14], x15 = in[15];

    row0[0] = in[0];
    row0[1] = in[1];
    row0[2] = in[2];
    row0[3] = in[3];
    for (i = 0; i < 10; i++) {
        /* column round */
        QUARTERROUND(row0[0], x4, x8, x12);
        QUARTERROUND(row0[1], x5, x9, x13);
        QUARTERROUND(row0[2], x6, x10, x14);
        QUARTERROUND(row0[3], x7, x11, x15);
        /* diagonal round */
        QUARTERROUND(row0[0], x5, x10, x15);
        QUARTERROUND(row0[1], x6, x11, x12);
        QUARTERROUND(row0[2], x7, x8, x13);
        QUARTERROUND(row0[3], x4, x9, x14);
    }
    in = in_mem;
    out = out_mem;
    arc4py_store_le32(out + 0, row0[0] + in[0]);
    arc4py_store_le32(out + 4, row0[1] + in[1]);
    arc4py_store_le32(out + 8, row0[2] + in[2]);
    arc4py_store_le32(out + 12, row0[3] + in[3]);
    arc4py_store_le32(out + 16, x4 + in[4]);
    arc4py_store_le32(out + 20, x5 + in[5]);
    arc4py_store_le32(out + 24, x6 + in[6]);
    arc4py_store_le32(out + 28, x7 + in[7]);
    arc4py_store_le32(out + 32, x8 + in[8]);
    arc4py_store_le32(out + 36, x9 + in[9]);
    arc4py_store_le32(out + 40, x10 + in[10]);
    arc4py_store_le32(out + 44, x11 + in[11]);
    arc4py_store_le32(out + 48, x12 + in[12]);
    arc4py_store_le32(out + 52, x13 + in[13]);
    arc4py_store_le32(out + 56, x14 + in[14]);
    arc4py_store_le32(out + 60, x15 + in[15]);
}

void arc4py_chacha20_blocks_generic(uint32_t state[16], uint8_t *out,
                                    size_t nblocks)
{
    while (nblocks--) {
        chacha20_block(state, out);
        arc4py_counter_add(state, 1);
        out += ARC4PY_CHACHA20_BLOCK_BYTES;
    }
    /* The compiler may vectorise the loops above: leave no words in vector
     * registers (the stack is scrubbed by the generator). */
#if defined(ARC4PY_X86_64)
    ARC4PY_CLEAR_XMM();
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
    ARC4PY_CLEAR_NEON();
#endif
}

int arc4py_chacha20_init(uint32_t state[16], const uint8_t key[32],
                         const uint8_t *nonce, size_t nonce_len,
                         uint64_t counter)
{
    static const uint32_t constants[4] = {ARC4PY_CHACHA20_CONSTANTS};
    int i;

    for (i = 0; i < 4; i++)
        state[i] = constants[i];
    for (i = 0; i < 8; i++)
        state[4 + i] = arc4py_load_le32(key + 4 * i);
    if (nonce_len == 8) {
        state[12] = (uint32_t)counter;
        state[13] = (uint32_t)(counter >> 32);
        state[14] = arc4py_load_le32(nonce);
        state[15] = arc4py_load_le32(nonce + 4);
    } else if (nonce_len == 12) {
        state[12] = (uint32_t)counter;
        state[13] = arc4py_load_le32(nonce);
        state[14] = arc4py_load_le32(nonce + 4);
        state[15] = arc4py_load_le32(nonce + 8);
    } else {
        return -1;
    }
    return 0;
}
