/*
 * A draw nested in a draw: the main thread loops over 16-byte
 * arc4py_rng_buf() calls while a second thread sends it SIGUSR1 as fast as
 * it can; the handler draws too (16 bytes through arc4py_rng_buf, 4 through
 * arc4py_rng_u32, and now and then a direct-size fill).  Every 16-byte
 * output, the main loop's and the handlers', is kept; afterwards they must
 * be all distinct and none all zero.  Before the in-use guard a handler
 * could take the bytes the interrupted call was copying out (duplicates),
 * or wipe the rekey bytes under an outer refill (a zero key).
 *
 * In PASSES passes of OUTER_DRAWS draws, each checked on its own.
 * The verdict (tests/c/verdict.h) has the facts "outer", "nested",
 * "duplicates", "zero"; at least 100 nested draws are wanted.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "generator.h"
#include "verdict.h"

#define OUTER_DRAWS (1u << 20)
#define NESTED_MAX (1u << 16)
#define PASSES 8

struct rec {
    uint64_t w[2];
};

static struct rec *outer_out, *nested_out;
static volatile sig_atomic_t nested_count, stop_signalling, failed;
static pthread_t main_thread;

static void on_signal(int sig)
{
    static uint8_t big[ARC4PY_RNG_DIRECT_BYTES + 100];
    unsigned i = (unsigned)nested_count;
    uint32_t u;

    (void)sig;
    if (i >= NESTED_MAX)
        return;
    if (arc4py_rng_buf(&nested_out[i], sizeof nested_out[i]) != 0)
        failed = 1;
    if (arc4py_rng_u32(&u) != 0)
        failed = 1;
    if (i % 64 == 0 && arc4py_rng_buf(big, sizeof big) != 0)
        failed = 1;
    nested_count = (sig_atomic_t)(i + 1);
}

static void *signaller(void *arg)
{
    struct timespec pause = {0, 2000};

    (void)arg;
    while (!stop_signalling) {
        pthread_kill(main_thread, SIGUSR1);
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static int cmp_rec(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(struct rec));
}

/* Duplicate and all-zero records among the pass's outer and nested ones. */
static void check_pass(struct rec *all, size_t *dups, size_t *zero)
{
    size_t i, n = OUTER_DRAWS + (size_t)nested_count;

    memcpy(all, outer_out, OUTER_DRAWS * sizeof *all);
    memcpy(all + OUTER_DRAWS, nested_out, (size_t)nested_count * sizeof *all);
    for (i = 0; i < n; i++)
        *zero += all[i].w[0] == 0 && all[i].w[1] == 0;
    qsort(all, n, sizeof *all, cmp_rec);
    for (i = 1; i < n; i++)
        *dups += memcmp(&all[i - 1], &all[i], sizeof *all) == 0;
}

int main(void)
{
    struct sigaction sa;
    pthread_t t;
    struct rec *all;
    size_t i, dups = 0, zero = 0, nested_total = 0;
    uint8_t warm[16];
    int pass;

    outer_out = calloc(OUTER_DRAWS, sizeof *outer_out);
    nested_out = calloc(NESTED_MAX, sizeof *nested_out);
    all = malloc((OUTER_DRAWS + NESTED_MAX) * sizeof *all);
    if (outer_out == NULL || nested_out == NULL || all == NULL)
        return 2;
    /* The thread's state exists before any handler runs (the promise is
       for a thread that has drawn). */
    if (arc4py_rng_buf(warm, sizeof warm) != 0)
        return 2;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    main_thread = pthread_self();
    if (pthread_create(&t, NULL, signaller, NULL) != 0)
        return 2;
    for (pass = 0; pass < PASSES; pass++) {
        for (i = 0; i < OUTER_DRAWS; i++)
            if (arc4py_rng_buf(&outer_out[i], sizeof outer_out[i]) != 0)
                failed = 1;
        /* Hold the handler off while the pass is checked. */
        sigset_t block, old;
        sigemptyset(&block);
        sigaddset(&block, SIGUSR1);
        pthread_sigmask(SIG_BLOCK, &block, &old);
        check_pass(all, &dups, &zero);
        nested_total += (size_t)nested_count;
        nested_count = 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    stop_signalling = 1;
    pthread_join(t, NULL);
    /* Enough handlers ran inside draws for the checks to mean something. */
    verdict_check(nested_total >= 100, "%lu handlers drew inside a draw (at "
                  "least 100 wanted)", LU(nested_total));
    verdict_check(!failed, "every draw, outer and nested, returned 0");
    verdict_check(dups == 0, "%lu duplicate 16-byte outputs", LU(dups));
    verdict_check(zero == 0, "%lu all-zero 16-byte outputs", LU(zero));
    return verdict_end("\"outer\": %lu, \"nested\": %lu, \"duplicates\": "
                       "%lu, \"zero\": %lu", LU(OUTER_DRAWS * PASSES),
                       LU(nested_total), LU(dups), LU(zero));
}
