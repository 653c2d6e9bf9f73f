/*
 * Portable ChaCha20 keystream core, written from RFC 8439 section 2.
 * It is the reference every SIMD core is tested against, and the fallback
 * for the tails that the wide cores leave.
 */
#include "chacha20_common.h"

#define ROTL32(v, n) (((v) << (n)) | ((v) >> (32 - (n))))

/* RFC 8439 2.1: the quarter round on four words of the working state. */
#define QUARTERROUND(a, b, c, d)                  \
    do {                                          \
        a += b; d ^= a; d = ROTL32(d, 16);        \
        c += d; b ^= c; b = ROTL32(b, 12);        \
        a += b; d ^= a; d = ROTL32(d, 8);         \
        c += d; b ^= c; b = ROTL32(b, 7);         \
    } while (0)

/* One block: 20 rounds, add the input state, serialise little-endian. */
static void chacha20_block(const uint32_t in[16], uint8_t out[64])
{
    uint32_t x[16];
    int i;

    memcpy(x, in, sizeof x);
    for (i = 0; i < 10; i++) {
        /* column round */
        QUARTERROUND(x[0], x[4], x[8], x[12]);
        QUARTERROUND(x[1], x[5], x[9], x[13]);
        QUARTERROUND(x[2], x[6], x[10], x[14]);
        QUARTERROUND(x[3], x[7], x[11], x[15]);
        /* diagonal round */
        QUARTERROUND(x[0], x[5], x[10], x[15]);
        QUARTERROUND(x[1], x[6], x[11], x[12]);
        QUARTERROUND(x[2], x[7], x[8], x[13]);
        QUARTERROUND(x[3], x[4], x[9], x[14]);
    }
    for (i = 0; i < 16; i++)
        arc4py_store_le32(out + 4 * i, x[i] + in[i]);
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
    int i;

    /* "expand 32-byte k" */
    state[0] = 0x61707865u;
    state[1] = 0x3320646eu;
    state[2] = 0x79622d32u;
    state[3] = 0x6b206574u;
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
