/*
 * stir_all while another thread is in a large fill: how many bytes does
 * the fill write after stir_all returned before it reseeds?  Built with
 * ARC4PY_TEST_HOOKS (tests/test_stir_midfill.py) for the reseed count.
 *
 * A filler thread makes one 64 MiB fill into zeroed memory; the cores
 * write it front to back, so the first all-zero 64-byte block past the
 * start is how far it has got.  The main thread waits until the fill is
 * under way, calls stir_all (reseeding itself: one reseed), notes the
 * fill's frontier, waits for the next reseed (the filler's), and notes the
 * frontier again.  Prints {"after_stir_bytes": N, "trials": T}: the median
 * of T measured trials (the watcher's own delays only ever add, and on a
 * loaded machine one trial can be late by hundreds of KiB: the median is
 * the fill's figure, not the scheduler's).  A trial where the watcher was
 * descheduled long enough for other reseeds to come, or the fill to end,
 * measures nothing and is tried again.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arc4py/generator.h"

long arc4py_rng_debug_reseeds(void); /* rng_test_hooks.c */

#define FILL (64u << 20)
#define BLK 64
#define TRIALS 7
#define ATTEMPTS 200

static uint8_t *out;
static int started; /* atomic */

static void *filler(void *arg)
{
    (void)arg;
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    if (arc4py_rng_buf(out, FILL) != 0)
        abort();
    return NULL;
}

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

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (block_is_zero(mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo * BLK;
}

int main(void)
{
    size_t got[TRIALS], median;
    int trial, measured = 0, i, j;
    uint8_t warm[16];

    out = malloc(FILL);
    if (out == NULL || arc4py_rng_debug_reseeds() < 0 ||
        arc4py_rng_buf(warm, sizeof warm) != 0)
        return 2;
    for (trial = 0; trial < ATTEMPTS && measured < TRIALS; trial++) {
        pthread_t t;
        size_t f0, f1;
        long r0;
        int late;

        memset(out, 0, FILL);
        __atomic_store_n(&started, 0, __ATOMIC_RELEASE);
        /* The filler's first draw seeds it; the fill starts after. */
        if (pthread_create(&t, NULL, filler, NULL) != 0)
            return 2;
        while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
            ;
        while (frontier() < FILL / 8) /* well into the fill */
            ;
        /* stir_all reseeds this thread (one) and the filler must follow
           (a second): wait for both. */
        r0 = arc4py_rng_debug_reseeds();
        if (arc4py_rng_stir_all() != 0)
            return 2;
        f0 = frontier();
        while (arc4py_rng_debug_reseeds() < r0 + 2 && frontier() < FILL)
            ;
        f1 = frontier();
        late = arc4py_rng_debug_reseeds() > r0 + 2;
        pthread_join(t, NULL);
        /* Descheduled while the filler went on (more reseeds came, or the
           fill ended): the frontier was read late, so this measures the
           scheduler; try again. */
        if (late || f1 >= FILL)
            continue;
        got[measured++] = f1 - f0;
    }
    for (i = 1; i < measured; i++) /* insertion sort: 7 values */
        for (j = i; j > 0 && got[j - 1] > got[j]; j--) {
            size_t tmp = got[j];
            got[j] = got[j - 1];
            got[j - 1] = tmp;
        }
    median = measured ? got[measured / 2] : 0;
    printf("{\"after_stir_bytes\": %zu, \"trials\": %d}\n", median, measured);
    return 0;
}
