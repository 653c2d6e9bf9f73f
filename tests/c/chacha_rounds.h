/*
 * ChaCha20's rounds (RFC 8439, section 2.3), written once for the test
 * programs that search memory for a core's working words (dead_stack.c,
 * core_spills.c, fork_census.c, signal_frames.c), and a seed's words as
 * those programs log them.  core_check.c keeps its own, independent
 * of these, as the reference the cores are checked against.
 */
#ifndef ARC4PY_TESTS_CHACHA_ROUNDS_H
#define ARC4PY_TESTS_CHACHA_ROUNDS_H

#include <stdint.h>
#include <string.h>

static inline uint32_t rounds_rotl(uint32_t v, int n)
{
    return (v << n) | (v >> (32 - n));
}

static inline void rounds_quarter(uint32_t x[16], int a, int b, int c, int d)
{
    x[a] += x[b]; x[d] ^= x[a]; x[d] = rounds_rotl(x[d], 16);
    x[c] += x[d]; x[b] ^= x[c]; x[b] = rounds_rotl(x[b], 12);
    x[a] += x[b]; x[d] ^= x[a]; x[d] = rounds_rotl(x[d], 8);
    x[c] += x[d]; x[b] ^= x[c]; x[b] = rounds_rotl(x[b], 7);
}

/* Round r (1..20) of the working words x: odd rounds work on the
   columns, even ones on the diagonals. */
static inline void rounds_one(uint32_t x[16], int r)
{
    if (r % 2) {
        rounds_quarter(x, 0, 4, 8, 12); rounds_quarter(x, 1, 5, 9, 13);
        rounds_quarter(x, 2, 6, 10, 14); rounds_quarter(x, 3, 7, 11, 15);
    } else {
        rounds_quarter(x, 0, 5, 10, 15); rounds_quarter(x, 1, 6, 11, 12);
        rounds_quarter(x, 2, 7, 8, 13); rounds_quarter(x, 3, 4, 9, 14);
    }
}

/* All 20 rounds, in place (no feed-forward). */
static inline void rounds_all(uint32_t x[16])
{
    int r;

    for (r = 1; r <= 20; r++)
        rounds_one(x, r);
}

/* A seed's 40 bytes (key, then nonce) as the state words they key: words
   4..11 and 14..15, the rest 0 (the generator's log of a seed). */
static inline void rounds_seed_words(uint32_t w[16], const uint8_t *seed)
{
    int k;

    memset(w, 0, 16 * sizeof *w);
    for (k = 0; k < 8; k++)
        memcpy(&w[4 + k], seed + 4 * k, 4);
    memcpy(&w[14], seed + 32, 8);
}

#endif
