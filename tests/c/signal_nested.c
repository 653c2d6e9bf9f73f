/*
 * A draw nested in a draw: the main thread loops over 16-byte draws while a
 * second thread sends it SIGUSR1 as fast as it can; the handler draws too,
 * each time with the next of the calls a handler may make, 16 bytes from
 * consecutive calls of that one (arc4py_rng_buf, 4 x arc4py_rng_u32,
 * 2 x arc4py_rng_u64, 4 x arc4py_rng_uniform), and now and then a
 * direct-size fill.  Every 16-byte output, the main loop's and the
 * handlers', is kept; afterwards they must be all distinct and none all
 * zero.  Were a nested call to use the buffer, it would take the bytes the
 * interrupted call was copying out (a duplicate: consecutive calls take
 * consecutive bytes, so the 16 bytes it makes are the interrupted call's),
 * or wipe the rekey bytes under an outer refill (a zero key).
 *
 * Built with -DSIGNAL_NESTED_CAPI (and Python's headers) it is instead a
 * shared library that a Python process loads (tests/capi/): the same run
 * through arc4py's C API, as a third-party extension calls it after
 * arc4py_import() (signal_nested_import(), with the GIL), the main loop
 * drawing with arc4py_arc4random_buf and arc4py_fill by turns, the handler
 * with all six calls capi.h allows there (signal_nested_capi(), without).
 *
 * In PASSES passes of OUTER_DRAWS draws, each checked on its own.
 * The verdict (tests/c/verdict.h) has the facts "outer", "nested",
 * "kinds", "duplicates", "zero"; at least NESTED_MIN handlers of each kind
 * are wanted.
 */
#ifdef SIGNAL_NESTED_CAPI
#include <Python.h>
#include "arc4py/capi.h"
#endif

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "generator.h" /* ARC4PY_RNG_DIRECT_BYTES; calls only without the C API */
#include "verdict.h"

#define OUTER_DRAWS (1u << 20)
#define NESTED_MAX (1u << 16)
#define PASSES 8
#define NESTED_MIN 25

struct rec {
    uint64_t w[2];
};

/* 16 bytes from consecutive calls of one function: 0, or nonzero when a
   call failed or gave a value out of its range. */
typedef int (*draw16_fn)(struct rec *r);

struct draw {
    const char *name;
    draw16_fn fn;
};

/* Lemire's map with upper bound 2**32 - 1 turns the word r into r - 1
   (r == 0 is rejected), so a uniform's word is its value + 1; a bound just
   over 2**31 rejects about half the words (a redraw inside the call). */
#define UNIFORM_WORD_BOUND 0xFFFFFFFFu
#define UNIFORM_REDRAW_BOUND 0x80000001u

/* Four 32-bit words from consecutive calls into one record. */
#define WORDS_OF(r, v, call)                                               \
    do {                                                                   \
        size_t i_;                                                         \
        for (i_ = 0; i_ < 4; i_++)                                         \
            call;                                                          \
        memcpy((r), (v), 16);                                              \
    } while (0)

static uint8_t big[ARC4PY_RNG_DIRECT_BYTES + 100];

#ifdef SIGNAL_NESTED_CAPI

static int capi_buf(struct rec *r)
{
    arc4py_arc4random_buf(r, sizeof *r);
    return 0;
}

static int capi_fill(struct rec *r) { return arc4py_fill(r, sizeof *r); }

static int capi_arc4random(struct rec *r)
{
    uint32_t v[4];

    WORDS_OF(r, v, v[i_] = arc4py_arc4random());
    return 0;
}

static int capi_uniform(struct rec *r)
{
    uint32_t v[4];

    WORDS_OF(r, v, v[i_] = arc4py_arc4random_uniform(UNIFORM_WORD_BOUND) + 1);
    return arc4py_arc4random_uniform(UNIFORM_REDRAW_BOUND) >= UNIFORM_REDRAW_BOUND;
}

static int capi_u32(struct rec *r)
{
    uint32_t v[4];
    int err = 0;

    WORDS_OF(r, v, err |= arc4py_random_u32(&v[i_]));
    return err;
}

static int capi_u64(struct rec *r)
{
    return arc4py_random_u64(&r->w[0]) | arc4py_random_u64(&r->w[1]);
}

static int big_fill(unsigned i)
{
    if (i % 2)
        return arc4py_fill(big, sizeof big);
    arc4py_arc4random_buf(big, sizeof big);
    return 0;
}

static const struct draw outer_draws[] = {
    {"arc4py_arc4random_buf", capi_buf}, {"arc4py_fill", capi_fill}};
static const struct draw nested_draws[] = {
    {"arc4py_arc4random_buf", capi_buf}, {"arc4py_fill", capi_fill},
    {"arc4py_arc4random", capi_arc4random},
    {"arc4py_arc4random_uniform", capi_uniform},
    {"arc4py_random_u32", capi_u32}, {"arc4py_random_u64", capi_u64}};

#else

static int gen_buf(struct rec *r) { return arc4py_rng_buf(r, sizeof *r); }

static int gen_u32(struct rec *r)
{
    uint32_t v[4];
    int err = 0;

    WORDS_OF(r, v, err |= arc4py_rng_u32(&v[i_]));
    return err;
}

static int gen_u64(struct rec *r)
{
    return arc4py_rng_u64(&r->w[0]) | arc4py_rng_u64(&r->w[1]);
}

static int gen_uniform(struct rec *r)
{
    uint32_t v[4], bounded;
    int err = 0;

    WORDS_OF(r, v, (err |= arc4py_rng_uniform(UNIFORM_WORD_BOUND, &v[i_]), v[i_]++));
    err |= arc4py_rng_uniform(UNIFORM_REDRAW_BOUND, &bounded);
    return err || bounded >= UNIFORM_REDRAW_BOUND;
}

static int big_fill(unsigned i)
{
    (void)i;
    return arc4py_rng_buf(big, sizeof big);
}

static const struct draw outer_draws[] = {{"arc4py_rng_buf", gen_buf}};
static const struct draw nested_draws[] = {
    {"arc4py_rng_buf", gen_buf}, {"arc4py_rng_u32", gen_u32},
    {"arc4py_rng_u64", gen_u64}, {"arc4py_rng_uniform", gen_uniform}};

#endif

#define N_OUTER (sizeof outer_draws / sizeof outer_draws[0])
#define N_NESTED (sizeof nested_draws / sizeof nested_draws[0])

static struct rec *outer_out, *nested_out;
static volatile sig_atomic_t nested_count, stop_signalling, failed;
static volatile unsigned long nested_by_kind[N_NESTED];
static pthread_t main_thread;

static void on_signal(int sig)
{
    unsigned i = (unsigned)nested_count;
    size_t kind = i % N_NESTED;

    (void)sig;
    if (i >= NESTED_MAX)
        return;
    if (nested_draws[kind].fn(&nested_out[i]) != 0)
        failed = 1;
    if (i % 64 == 0 && big_fill(i / 64) != 0)
        failed = 1;
    nested_by_kind[kind]++;
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

static int run(void)
{
    struct sigaction sa, old_sa;
    pthread_t t;
    struct rec *all, warm;
    size_t i, dups = 0, zero = 0, nested_total = 0, kind, fewest = (size_t)-1;
    int pass;

    outer_out = calloc(OUTER_DRAWS, sizeof *outer_out);
    nested_out = calloc(NESTED_MAX, sizeof *nested_out);
    all = malloc((OUTER_DRAWS + NESTED_MAX) * sizeof *all);
    if (outer_out == NULL || nested_out == NULL || all == NULL)
        return 2;
    /* The thread's state exists before any handler runs (the promise is
       for a thread that has drawn). */
    if (outer_draws[0].fn(&warm) != 0)
        return 2;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, &old_sa);
    main_thread = pthread_self();
    if (pthread_create(&t, NULL, signaller, NULL) != 0)
        return 2;
    for (pass = 0; pass < PASSES; pass++) {
        draw16_fn outer = outer_draws[pass % N_OUTER].fn;
        sigset_t block, old;

        for (i = 0; i < OUTER_DRAWS; i++)
            if (outer(&outer_out[i]) != 0)
                failed = 1;
        /* Hold the handler off while the pass is checked. */
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
    sigaction(SIGUSR1, &old_sa, NULL);
    for (kind = 0; kind < N_NESTED; kind++) {
        printf("INFO %lu handlers drew with %s\n", LU(nested_by_kind[kind]),
               nested_draws[kind].name);
        if (nested_by_kind[kind] < fewest)
            fewest = nested_by_kind[kind];
    }
    /* Enough handlers of each kind ran for the checks to mean something. */
    verdict_check(fewest >= NESTED_MIN, "%lu handlers drew, at least %lu with "
                  "each of %lu calls (%d wanted)", LU(nested_total), LU(fewest),
                  LU(N_NESTED), NESTED_MIN);
    verdict_check(!failed, "every draw, outer and nested, returned 0 and "
                  "values in range");
    verdict_check(dups == 0, "%lu duplicate 16-byte outputs", LU(dups));
    verdict_check(zero == 0, "%lu all-zero 16-byte outputs", LU(zero));
    free(all);
    free(nested_out);
    free(outer_out);
    return verdict_end("\"outer\": %lu, \"nested\": %lu, \"kinds\": %lu, "
                       "\"duplicates\": %lu, \"zero\": %lu",
                       LU(OUTER_DRAWS * PASSES), LU(nested_total),
                       LU(N_NESTED), LU(dups), LU(zero));
}

#ifdef SIGNAL_NESTED_CAPI

/* With the GIL (ctypes.PyDLL): 0, or -1 with ImportError set. */
__attribute__((visibility("default"))) int signal_nested_import(void)
{
    return arc4py_import();
}

/* Without the GIL (ctypes.CDLL), after signal_nested_import(): prints the
   verdict, returns the exit status. */
__attribute__((visibility("default"))) int signal_nested_capi(void)
{
    return run();
}

#else

int main(void)
{
    return run();
}

#endif
