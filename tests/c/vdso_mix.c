/*
 * Is the vDSO getrandom called where it should be, and do its bytes make
 * the keys?  Built from arc4py's C sources with ARC4PY_TEST_HOOKS
 * (tests/c/test_c_programs.py): one call per refill and one per
 * direct-fill chunk while "vdso" is reported, none without it.  Also
 * checks the buffer after each refill (rekey bytes and bytes handed out
 * zero, the rest not).
 *
 * Then the mix itself.  getrandom() below gives a fixed seed, so a new
 * thread's state starts from the same key every time, and a hook
 * (arc4py_rng_debug_vm_mix) sees each call's 32 mix bytes and may replace
 * them.  With "vdso": the same mix bytes give the same output; flipping a
 * bit of any one of the 32 bytes changes the refill's output, and in a
 * 3-chunk large fill the chunks keyed with it and only those (the
 * refill's: every chunk, whose one-time keys it made; a chunk's: that
 * chunk); the vDSO's own bytes make two threads from the same seed differ.
 * Without it: the hook is never called and two such threads give the same
 * output.  The verdict (tests/c/verdict.h) has the facts "vdso", 1 when
 * the generator reports it, "refill_bytes" and "chunk_bytes", the flipped
 * mix bytes that changed what they should (32 and 128 with "vdso").
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "rng_internal.h"
#include "verdict.h"

static uint8_t big[3 << 20];

static int buffer_ok(size_t handed)
{
    uint8_t buf[ARC4PY_RNG_BUFFER_BYTES];
    size_t left, used, i, nonzero = 0;

    if (arc4py_rng_debug_buffer(buf, sizeof buf, &left) != 0)
        return 0;
    used = sizeof buf - left;
    if (used != RNG_REKEY_BYTES + handed)
        return 0;
    for (i = 0; i < used; i++)
        if (buf[i])
            return 0;
    for (; i < sizeof buf; i++)
        nonzero += buf[i] != 0;
    return nonzero > left / 2;
}

/* ---- the mix ------------------------------------------------------------ */

#define MIX_BYTES 32
#define FILL_CHUNKS 3
#define MIX_CALLS_MAX (1 + FILL_CHUNKS)

static int fixed_seed;

/* The C library's getrandom, which the platform file calls where it is
   defined: a fixed pattern while fixed_seed is set, else the kernel's. */
ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
    size_t i;

    if (!fixed_seed)
        return syscall(SYS_getrandom, buf, len, flags);
    for (i = 0; i < len; i++)
        ((uint8_t *)buf)[i] = (uint8_t)(7 * i + 1);
    return (ssize_t)len;
}

/* The hook: what the k-th call of the worker thread read, and with
   set_mix what it gets instead. */
static int set_mix, mix_calls;
static uint8_t mix_set[MIX_CALLS_MAX][MIX_BYTES], mix_seen[MIX_CALLS_MAX][MIX_BYTES];

static void on_vm_mix(uint8_t *mix, size_t n)
{
    int k = mix_calls++;

    if (n != MIX_BYTES || k >= MIX_CALLS_MAX)
        return;
    memcpy(mix_seen[k], mix, MIX_BYTES);
    if (set_mix)
        memcpy(mix, mix_set[k], MIX_BYTES);
}

struct job {
    uint8_t *out;
    size_t n;
    int err;
};

static void *draw_job(void *arg)
{
    struct job *j = arg;

    j->err = arc4py_rng_buf(j->out, j->n);
    return NULL;
}

/* n bytes drawn by a new thread (a new state, seeded once); 0 or -1. */
static int fresh_draw(uint8_t *out, size_t n)
{
    struct job j = {out, n, 0};
    pthread_t t;

    mix_calls = 0;
    if (pthread_create(&t, NULL, draw_job, &j) != 0 || pthread_join(t, NULL) != 0)
        return -1;
    return j.err ? -1 : 0;
}

/* A refill's 64 bytes: how many of the 32 mix bytes change them. */
static int refill_mix(int vdso)
{
    uint8_t base[64], out[64], again[64], first_mix[MIX_BYTES];
    int b, changed = 0;

    if (fresh_draw(base, sizeof base) != 0 || fresh_draw(out, sizeof out) != 0)
        return -1;
    verdict_check(mix_calls == vdso, "a refill: %d mix calls", mix_calls);
    if (!vdso) {
        verdict_check(memcmp(base, out, sizeof out) == 0, "no vdso: two "
                      "threads from the same seed give the same output");
        return 0;
    }
    verdict_check(memcmp(base, out, sizeof out) == 0,
                  "a refill: the same seed and mix bytes, the same output");
    for (b = 0; b < MIX_BYTES; b++) {
        mix_set[0][b] ^= 0x10;
        if (fresh_draw(out, sizeof out) != 0)
            return -1;
        changed += memcmp(base, out, sizeof out) != 0;
        mix_set[0][b] ^= 0x10;
    }
    /* The vDSO's own bytes, two threads from the same seed. */
    set_mix = 0;
    if (fresh_draw(out, sizeof out) != 0)
        return -1;
    memcpy(first_mix, mix_seen[0], MIX_BYTES);
    if (fresh_draw(again, sizeof again) != 0)
        return -1;
    set_mix = 1;
    verdict_check(memcmp(first_mix, mix_seen[0], MIX_BYTES) != 0 &&
                  memcmp(out, again, sizeof out) != 0,
                  "the vDSO's bytes: two threads from the same seed differ");
    return changed;
}

/* A large fill of FILL_CHUNKS chunks (mix calls: the refill that draws the
   one-time keys, then one per chunk): the flipped mix bytes, the refill's
   and each chunk's, that changed the chunks they key and no other. */
static int chunk_mix(void)
{
    static uint8_t base[FILL_CHUNKS * ARC4PY_RNG_DIRECT_CHUNK_BYTES],
        out[sizeof base];
    int k, b, c, changed = 0;

    if (fresh_draw(base, sizeof base) != 0)
        return -1;
    verdict_check(mix_calls == MIX_CALLS_MAX, "a %d-chunk fill: %d mix calls",
                  FILL_CHUNKS, mix_calls);
    if (fresh_draw(out, sizeof out) != 0)
        return -1;
    verdict_check(memcmp(base, out, sizeof out) == 0,
                  "a large fill: the same seed and mix bytes, the same output");
    for (k = 0; k < MIX_CALLS_MAX; k++)
        for (b = 0; b < MIX_BYTES; b++) {
            int right = 1;

            mix_set[k][b] ^= 0x10;
            if (fresh_draw(out, sizeof out) != 0)
                return -1;
            mix_set[k][b] ^= 0x10;
            for (c = 0; c < FILL_CHUNKS; c++) {
                size_t at = (size_t)c * ARC4PY_RNG_DIRECT_CHUNK_BYTES;
                int differs = memcmp(base + at, out + at,
                                     ARC4PY_RNG_DIRECT_CHUNK_BYTES) != 0;

                right &= differs == (k == 0 || k == c + 1);
            }
            changed += right;
        }
    return changed;
}

int main(void)
{
    uint8_t b[100];
    long before, refill_calls, direct_calls;
    int i, refill_bytes, chunk_bytes, vdso = (arc4py_rng_fork_protection() & ARC4PY_FORK_VDSO) != 0;

    /* 10 refills: each stir empties the buffer, the draw refills it. */
    before = rng_load_long(&rng_vm_mix_calls);
    for (i = 0; i < 10; i++) {
        if (arc4py_rng_stir() != 0 || arc4py_rng_buf(b, sizeof b) != 0)
            return 2;
        verdict_check(buffer_ok(sizeof b), "the buffer after refill %d: "
                      "rekey bytes and bytes handed out zero, the rest not", i);
    }
    refill_calls = rng_load_long(&rng_vm_mix_calls) - before;
    /* A 3 MiB fill: chunks of ARC4PY_RNG_DIRECT_CHUNK_BYTES, one more at
       each reseed point (at most 4 in 3 MiB: every 768 KiB to 1 MiB), and
       a refill for the one-time keys after each reseed. */
    if (arc4py_rng_stir() != 0)
        return 2;
    before = rng_load_long(&rng_vm_mix_calls);
    if (arc4py_rng_buf(big, sizeof big) != 0)
        return 2;
    direct_calls = rng_load_long(&rng_vm_mix_calls) - before;
    if (vdso)
        verdict_check(refill_calls == 10 &&
                      direct_calls >= (long)(sizeof big / ARC4PY_RNG_DIRECT_CHUNK_BYTES) &&
                      direct_calls <= (long)(sizeof big / ARC4PY_RNG_DIRECT_CHUNK_BYTES) + 4 + 4,
                      "vdso: %ld calls over 10 refills, %ld over a 3 MiB fill",
                      refill_calls, direct_calls);
    else
        verdict_check(refill_calls == 0 && direct_calls == 0,
                      "no vdso: %ld calls over 10 refills, %ld over a 3 MiB fill",
                      refill_calls, direct_calls);
    /* The same seed in every new thread, the same mix bytes unless a
       check flips one. */
    fixed_seed = 1;
    set_mix = 1;
    for (i = 0; i < MIX_CALLS_MAX * MIX_BYTES; i++)
        mix_set[i / MIX_BYTES][i % MIX_BYTES] = (uint8_t)(13 * i + 5);
    arc4py_rng_debug_vm_mix = on_vm_mix;
    refill_bytes = refill_mix(vdso);
    chunk_bytes = vdso ? chunk_mix() : 0;
    arc4py_rng_debug_vm_mix = NULL;
    fixed_seed = 0;
    if (refill_bytes < 0 || chunk_bytes < 0)
        return 2;
    if (vdso)
        verdict_check(refill_bytes == MIX_BYTES &&
                      chunk_bytes == MIX_CALLS_MAX * MIX_BYTES,
                      "a flipped mix byte changed the refill's output for %d "
                      "of %d bytes, the chunks it keys for %d of %d",
                      refill_bytes, MIX_BYTES, chunk_bytes,
                      MIX_CALLS_MAX * MIX_BYTES);
    return verdict_end("\"vdso\": %d, \"refill_bytes\": %d, \"chunk_bytes\": %d",
                       vdso, refill_bytes, chunk_bytes);
}
