/*
 * stir_all while another thread is in a large fill: does the fill return
 * any byte it made before stir_all returned?  It must not, if it returns
 * after stir_all has returned: such bytes came from a key that stir_all
 * retired.
 *
 * A filler thread makes one FILL-byte fill into zeroed memory; the cores
 * write a fill front to back, so the first all-zero 64-byte block is how
 * far it has got.  The main thread waits until the fill is well under way,
 * calls stir_all, and once it has returned copies what the fill has
 * written so far (up to the frontier it then sees).  If the frontier is
 * still short of the end after the copy, the copy holds only the fill's
 * first pass (a redraw starts only once a pass ends).  A race counts when
 * the fill returns after stir_all did (a shared sequence number orders the
 * two returns); the program counts, over the races, the copied blocks
 * that the returned output still holds.  Races where the fill ended too
 * soon are tried again.
 *
 * argv[1], if given, is the number of races (default 40).
 * The verdict (tests/c/verdict.h) has the facts "races",
 * "old_key_bytes_returned", "races_with_old_bytes", "copied_bytes",
 * "retried".
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generator.h"
#include "verdict.h"

#define FILL (16u << 20)
#define BLK 64
/* On a loaded machine most attempts are retried (the main thread loses
   the CPU between stir_all and its copy, and the fill ends first): 29
   races in 1,000 attempts under CI's load, about 1 in 4 on an idle one. */
#define ATTEMPTS 6000

static uint8_t *out, *copy;
static int started;               /* atomic */
static unsigned long seq;         /* atomic: orders the two returns */
static unsigned long fill_done;   /* the fill's return, in seq */

static int block_is_zero(size_t b)
{
    static const uint8_t zero[BLK];
    return memcmp(out + b * BLK, zero, BLK) == 0;
}

/* Bytes written so far by the fill's first pass: the first all-zero
   block (binary search; a written block is never all zero). */
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

static void *filler(void *arg)
{
    uint8_t first[16];

    (void)arg;
    /* Seed this thread first, so the fill begins under the old key. */
    if (arc4py_rng_buf(first, sizeof first) != 0)
        abort();
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    if (arc4py_rng_buf(out, FILL) != 0)
        abort();
    fill_done = __atomic_add_fetch(&seq, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

int main(int argc, char **argv)
{
    int races = argc > 1 ? atoi(argv[1]) : 40;
    int attempt, done = 0, dirty = 0, retried = 0;
    size_t old_bytes = 0, copied = 0;
    uint8_t warm[16];

    out = malloc(FILL);
    copy = malloc(FILL);
    if (out == NULL || copy == NULL || races < 1 ||
        arc4py_rng_buf(warm, sizeof warm) != 0)
        return 2;
    for (attempt = 0; attempt < ATTEMPTS && done < races; attempt++) {
        pthread_t t;
        unsigned long stir_done;
        size_t upto, b, kept = 0;

        memset(out, 0, FILL);
        __atomic_store_n(&started, 0, __ATOMIC_RELEASE);
        if (pthread_create(&t, NULL, filler, NULL) != 0)
            return 2;
        while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
            ;
        while (frontier() < FILL / 8) /* well into the fill */
            ;
        if (arc4py_rng_stir_all() != 0)
            return 2;
        stir_done = __atomic_add_fetch(&seq, 1, __ATOMIC_SEQ_CST);
        upto = frontier();
        memcpy(copy, out, upto);
        /* Still short of the end: the copy is all first-pass output. */
        if (frontier() >= FILL) {
            pthread_join(t, NULL);
            retried++;
            continue;
        }
        pthread_join(t, NULL);
        if (fill_done < stir_done) { /* returned before stir_all did */
            retried++;
            continue;
        }
        for (b = 0; b < upto; b += BLK)
            if (memcmp(copy + b, out + b, BLK) == 0)
                kept += BLK;
        old_bytes += kept;
        dirty += kept > 0;
        copied += upto;
        done++;
    }
    verdict_check(done == races, "%d of %d races run", done, races);
    /* The copies are real first-pass output: well into the fill each time. */
    verdict_check(copied >= (size_t)done * (FILL / 8), "%lu bytes of first-pass "
                  "output copied over %d races", LU(copied), done);
    verdict_check(old_bytes == 0, "fills that returned after stir_all returned "
                  "%lu bytes made before it (in %d races)", LU(old_bytes), dirty);
    return verdict_end("\"races\": %d, \"old_key_bytes_returned\": %lu, "
                       "\"races_with_old_bytes\": %d, \"copied_bytes\": %lu, "
                       "\"retried\": %d", done, LU(old_bytes), dirty,
                       LU(copied), retried);
}
