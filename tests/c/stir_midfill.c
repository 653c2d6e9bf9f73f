/*
 * stir_all while another thread is in a large fill: how many bytes does
 * the fill write after stir_all began before it reseeds?  Built with
 * ARC4PY_TEST_HOOKS (tests/test_stir_midfill.py) for the reseed hook.
 *
 * A filler thread makes one 16 MiB fill into zeroed memory; the cores
 * write it front to back, so the first all-zero 64-byte block past the
 * start is how far it has got.  The main thread waits until the fill is
 * well under way, notes the frontier (before), calls stir_all and notes
 * it again (after).  The filler's reseed hook notes, in the filler itself,
 * the frontier at its first reseed under the new stir generation: exact,
 * whatever the scheduler does to the watcher.  So reseed - before is at
 * least the bytes written from the old key after the stir, and at most
 * that plus after - before (the time stir_all took, with any delay of the
 * watcher around it).  A trial where after - before exceeds SLACK (the
 * watcher was descheduled), which would overstate the bytes, or where the
 * fill had ended by then, which would test nothing, is tried again; a fill
 * that ends before reseeding counts its end as the reseed.  Prints
 * {"max_after_stir_bytes": N, "trials": T, "slack": S, "redrawn": R}.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generator.h"

extern void (*arc4py_rng_debug_on_reseed)(unsigned long stir_gen); /* rng.c */
long arc4py_rng_debug_reseeds(void);

#define FILL (16u << 20)
#define BLK 64
#define TRIALS 7
#define ATTEMPTS 1000
#define SLACK (32u << 10)

static uint8_t *out;
static int started;           /* atomic */
static __thread int in_filler;
/* Reset by the watcher before each filler starts, written by the filler,
   read after pthread_join. */
static unsigned long filler_first_gen;
static int filler_seeded;
static size_t filler_restir_frontier; /* 0: no reseed under a new generation */

static int block_is_zero(size_t b)
{
    static const uint8_t zero[BLK];
    return memcmp(out + b * BLK, zero, BLK) == 0;
}

/* Bytes written so far: the first all-zero block (binary search; the
   fill's output is random, so a written block is never all zero). */
static size_t frontier(void)
{
    size_t lo = 0, hi = FILL / BLK;

    /* The filler writes `out` meanwhile: read it afresh at every call. */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (block_is_zero(mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo * BLK;
}

static void on_reseed(unsigned long stir_gen)
{
    if (!in_filler)
        return;
    if (!filler_seeded) {
        filler_seeded = 1;
        filler_first_gen = stir_gen;
    } else if (stir_gen != filler_first_gen && filler_restir_frontier == 0) {
        filler_restir_frontier = frontier();
    }
}

static void *filler(void *arg)
{
    uint8_t first[16];

    (void)arg;
    in_filler = 1;
    /* Seed this thread (the hook notes its generation), then fill. */
    if (arc4py_rng_buf(first, sizeof first) != 0)
        abort();
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    if (arc4py_rng_buf(out, FILL) != 0)
        abort();
    return NULL;
}

int main(void)
{
    size_t worst = 0;
    int trial, measured = 0, redrawn = 0;
    uint8_t warm[16];

    out = malloc(FILL);
    if (out == NULL || arc4py_rng_debug_reseeds() < 0 ||
        arc4py_rng_buf(warm, sizeof warm) != 0)
        return 2;
    arc4py_rng_debug_on_reseed = on_reseed;
    for (trial = 0; trial < ATTEMPTS && measured < TRIALS; trial++) {
        pthread_t t;
        size_t before, after;

        memset(out, 0, FILL);
        filler_seeded = 0;
        filler_restir_frontier = 0;
        __atomic_store_n(&started, 0, __ATOMIC_RELEASE);
        if (pthread_create(&t, NULL, filler, NULL) != 0)
            return 2;
        while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
            ;
        while (frontier() < FILL / 8) /* well into the fill */
            ;
        before = frontier();
        if (arc4py_rng_stir_all() != 0)
            return 2;
        after = frontier();
        pthread_join(t, NULL);
        /* The watcher was descheduled around the stir (the stir's frontier
           is only known to lie within [before, after]), or the fill may
           have ended before it. */
        if (after - before > SLACK || after >= FILL) {
            redrawn++;
            continue;
        }
        /* A fill that ended before reseeding wrote its rest from the old
           key: the bytes after the stir run to its end. */
        if (filler_restir_frontier == 0)
            filler_restir_frontier = FILL;
        if (filler_restir_frontier < before) {
            fprintf(stderr, "trial %d: reseed at %zu before the stir at %zu\n",
                    trial, filler_restir_frontier, before);
            return 1;
        }
        if (filler_restir_frontier - before > worst)
            worst = filler_restir_frontier - before;
        measured++;
    }
    printf("{\"max_after_stir_bytes\": %zu, \"trials\": %d, \"slack\": %u, "
           "\"redrawn\": %d}\n", worst, measured, SLACK, redrawn);
    return 0;
}
