/*
 * Does a draw leave, in the dead stack below its caller, a key that
 * regenerates its output?  Built from arc4py's C sources
 * (tests/c/test_c_programs.py).
 *
 * For each core named on the command line: draw (1) a large direct fill
 * and (2) bytes that need a refill, copy the 16 KiB of stack just below the
 * caller, and search it blindly for a ChaCha20 key that reproduces the
 * output:
 *  - every 4-byte-aligned 32-byte window as a key, with every 8-byte nonce
 *    candidate within 96 bytes of it, counter 0;
 *  - every spilled state ("expand 32-byte k" followed by key, counter,
 *    nonce), at its own counter;
 *  - key words spilled as broadcast vectors (16, 32 or 64 bytes of one
 *    word each, consecutive), nonce from the slots after the counter's.
 * A check per core and case, then the verdict (tests/c/verdict.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "generator.h"
#include "chacha_rounds.h"
#include "verdict.h"

#define DEAD 16384
#define DIRECT_N 4096
#define REFILL_N 1000
#define REKEY 40

static uint8_t out[DIRECT_N];
static uint8_t snap[DEAD];

/* ---- a reference ChaCha20 block (RFC 8439 section 2.3) ---------------- */

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}


static void block(const uint32_t in[16], uint8_t outb[64])
{
    uint32_t x[16];
    int i;

    memcpy(x, in, sizeof x);
    rounds_all(x);
    for (i = 0; i < 16; i++) {
        uint32_t v = x[i] + in[i];
        outb[4 * i] = (uint8_t)v;
        outb[4 * i + 1] = (uint8_t)(v >> 8);
        outb[4 * i + 2] = (uint8_t)(v >> 16);
        outb[4 * i + 3] = (uint8_t)(v >> 24);
    }
}

static const uint32_t sigma[4] = {0x61707865u, 0x3320646eu, 0x79622d32u,
                                  0x6b206574u};

/* Does the state's block at its counter match the output, whose first
   byte is keystream byte `off` of block 0? */
static int matches(const uint32_t st[16], const uint8_t *o, size_t n, size_t off)
{
    uint64_t ctr = (uint64_t)st[13] << 32 | st[12];
    uint8_t b[64];
    long base, t0, t1;

    if (ctr > (n + off) / 64)
        return 0;
    base = (long)(ctr * 64) - (long)off; /* where b[0] falls in o */
    t0 = base < 0 ? -base : 0;
    t1 = (long)n - base < 64 ? (long)n - base : 64;
    if (t1 - t0 < 16)
        return 0;
    block(st, b);
    return memcmp(b + t0, o + base + t0, (size_t)(t1 - t0)) == 0;
}

static void set_key(uint32_t st[16], const uint32_t k[8], uint32_t n0, uint32_t n1,
                    uint32_t c0, uint32_t c1)
{
    memcpy(st, sigma, sizeof sigma);
    memcpy(st + 4, k, 32);
    st[12] = c0;
    st[13] = c1;
    st[14] = n0;
    st[15] = n1;
}

/* 1 if the dead stack holds a key that regenerates o[0..n). */
static int search(const uint8_t *o, size_t n, size_t off, const char **how)
{
    uint32_t st[16], k[8];
    size_t i, j, lane;
    int w;

    for (i = 0; i + 32 <= DEAD; i += 4) {
        for (w = 0; w < 8; w++)
            k[w] = rd32(snap + i + 4 * w);
        /* a spilled state */
        if (i >= 16 && i + 48 <= DEAD && memcmp(snap + i - 16, sigma, 16) == 0) {
            set_key(st, k, rd32(snap + i + 40), rd32(snap + i + 44),
                    rd32(snap + i + 32), rd32(snap + i + 36));
            if (matches(st, o, n, off)) {
                *how = "spilled state";
                return 1;
            }
        }
        /* a key window with nearby nonces */
        for (j = i >= 96 ? i - 96 : 0; j + 8 <= DEAD && j <= i + 128; j += 4) {
            set_key(st, k, rd32(snap + j), rd32(snap + j + 4), 0, 0);
            if (matches(st, o, n, off)) {
                *how = "key window";
                return 1;
            }
        }
    }
    /* broadcast vectors: slot s holds one word repeated lane/4 times */
    for (lane = 16; lane <= 64; lane *= 2) {
        for (i = 0; i + 14 * lane <= DEAD; i += 4) {
            uint32_t words[14];
            int s, ok = 1;

            for (s = 0; s < 14; s++) {
                const uint8_t *p = snap + i + (size_t)s * lane;
                size_t q;
                int same = 1;

                words[s] = rd32(p);
                for (q = 4; q < lane && same; q += 4)
                    same = rd32(p + q) == words[s];
                if (!same && s < 8)
                    ok = 0;
                if (!same && s >= 8)
                    words[s] = 0xdeadbeefu ^ (uint32_t)s; /* not a nonce */
                if (!ok)
                    break;
            }
            if (!ok)
                continue;
            for (s = 8; s + 1 < 14; s++) {
                set_key(st, words, words[s], words[s + 1], 0, 0);
                if (matches(st, o, n, off)) {
                    *how = "broadcast key";
                    return 1;
                }
            }
        }
    }
    return 0;
}

/* Copy the dead stack below the caller: this frame lies where the draw's
   frames were. */
__attribute__((noinline)) static void snapshot(void)
{
    uint8_t area[DEAD];
    const volatile uint8_t *p = area;
    size_t i;

    /* Launder the pointer: the compiler cannot know area is unwritten. */
    __asm__ __volatile__("" : "+r"(p) : : "memory");
    for (i = 0; i < DEAD; i++)
        snap[i] = p[i];
}

__attribute__((noinline)) static int draw_direct(void)
{
    int err = arc4py_rng_buf(out, DIRECT_N);

    snapshot();
    return err;
}

__attribute__((noinline)) static int draw_refill(void)
{
    int err = arc4py_rng_buf(out, REFILL_N);

    snapshot();
    return err;
}

int main(int argc, char **argv)
{
    int a;

    for (a = 1; a < argc; a++) {
        const char *how = "";
        int found;

        if (arc4py_rng_select_core(argv[a]) != 0) {
            verdict_fail("%s: the C generator cannot select this core", argv[a]);
            continue;
        }
        if (arc4py_rng_stir() != 0 || draw_direct() != 0) {
            fprintf(stderr, "%s: entropy failure\n", argv[a]);
            return 2;
        }
        found = search(out, DIRECT_N, 0, &how);
        verdict_check(!found, "%s, direct draw: no key in dead stack "
                      "regenerates the output%s%s", argv[a], found ? ": " : "",
                      how);
        /* A stir empties the buffer, so the next draw refills: its bytes
           start at keystream byte 40 (0..39 became the next key). */
        if (arc4py_rng_stir() != 0 || draw_refill() != 0) {
            fprintf(stderr, "%s: entropy failure\n", argv[a]);
            return 2;
        }
        how = "";
        found = search(out, REFILL_N, REKEY, &how);
        verdict_check(!found, "%s, refill draw: no key in dead stack "
                      "regenerates the output%s%s", argv[a], found ? ": " : "",
                      how);
    }
    return verdict_end("\"cores\": %d", argc - 1);
}
