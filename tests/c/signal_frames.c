/*
 * Signal frames on the filling thread's own stack: a signal handled there
 * while a core runs (or while a state is keyed) makes the kernel save the
 * interrupted registers, a core's working state, in a frame below the
 * stack pointer, and the frame stays in the dead stack after the handler
 * returns, for a child forked by another thread to read.  Built from
 * arc4py's C sources with ARC4PY_TEST_HOOKS (tests/c/test_c_programs.py).
 *
 *   signal_frames CORE
 *
 * A worker thread draws, first 2000 bytes at a time (refills), then 1 MiB
 * at a time (large fills), while a sibling thread sends it SIGUSR1 every
 * few tens of microseconds, handled on the worker's own stack (no
 * sigaltstack).  After each draw during which a signal came and a core
 * ran, the worker copies the DEPTH bytes of dead stack below it and
 * searches them, as aligned 32-bit words, for what arc4py_rng_debug_log
 * recorded of the entries since the last search (seeds and every core
 * call's input):
 *   key    key or nonce words (state words 4..11, 14, 15) of an entry;
 *   x20    words 4..11, 14, 15 of a block's working state after the 20
 *          rounds (with the output they give the key);
 *   round  working words 4..15 of a block at a round boundary (after
 *          round 1..19: ChaCha20's rounds run backwards to the key):
 *          every block of a refill's call; of a large fill's chunks the
 *          last blocks and those around where the output stood when a
 *          signal came inside the call.
 * A finding is two or more words of one group: one entry's key and nonce,
 * one block's x20 words, one block's words at one round boundary (one
 * word alone is counted apart: a nonzero stack word matches one of the
 * up to ~10^5 targets by chance with odds near 1 in 40,000).  The stack
 * is then zeroed.
 *
 * Checks, per mode: enough searched draws with a core call and a signal;
 * no key, x20 or round finding.  Verdict facts: "snapshots", "in_core"
 * (of them, with a signal handled while the log said a core ran),
 * "key", "x20", "round" (findings, both modes).  POSIX (pthreads,
 * pthread_kill).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generator.h"
#include "rng_test_hooks.h"
#include "chacha_rounds.h"
#include "verdict.h"

#if defined(_WIN32)
int main(void)
{
    return verdict_skip("needs POSIX signals and threads", "\"snapshots\": %d", 0);
}
#else

#include <pthread.h>
#include <signal.h>
#include <time.h>

#define DEPTH (64 * 1024)   /* bytes of dead stack searched */
#define WORDS (DEPTH / 4)
#define REFILL_DRAW 2000
#define DIRECT_DRAW (1u << 20)
#define DIRECT_BLOCKS (DIRECT_DRAW / 64)
#define LOG_N 1024          /* ring of logged entries */
#define MAX_SINCE 512       /* entries searched per copy, the latest */
#define MAX_HITS 64
#define LAST_BLOCKS 24      /* of each large-fill call, tabled */
#define AROUND 24           /* blocks either side of a signal's output point */
#define MAX_TARGETS (1u << 20)
#define MAX_GROUPS (1u << 17)
#ifndef WANT               /* -DWANT=N: fewer (tests/c/test_c_programs.py) */
#define WANT 150            /* searched draws wanted per mode */
#endif
#define SECONDS 20.0        /* per mode, at most */
#define SIGNAL_NS 20000     /* the sibling's pause between signals */

enum { MODE_REFILL, MODE_DIRECT, MODES };
static const char *const mode_names[MODES] = {"refills", "large fills"};
enum { KEY, X20, ROUND, KINDS };
static const char *const kind_names[KINDS] = {"key", "x20", "round"};

struct entry {
    uint32_t w[16];   /* the core's input state; a seed as key and nonce */
    uint32_t nblocks; /* 0: a seed */
    uint32_t start;   /* large fill: the output block the call began at */
    int kind;
};

/* Static, not on the stack: nothing the test keeps is in what it searches. */
static struct entry ring[LOG_N];
static volatile uint64_t logged; /* entries so far */
static volatile sig_atomic_t in_core, in_log, tainted, mode;
static volatile unsigned long signals;
static volatile unsigned n_hits;
static struct { uint64_t entry; uint32_t block; } hits[MAX_HITS];
static uint8_t out_big[DIRECT_DRAW], out_small[REFILL_DRAW];
static uint32_t snap[WORDS];
static volatile int stop_signalling;
static pthread_t worker_thread;
static __thread int is_worker;

/* The first output block not yet written (the large fill's output is
   zeroed before each draw, and the cores write in order). */
static uint32_t output_point(void)
{
    uint32_t lo = 0, hi = DIRECT_BLOCKS;

    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        const uint64_t *b = (const uint64_t *)(out_big + 64 * (size_t)mid);

        if (b[0] == 0 && b[1] == 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Called inside the generator on the worker: memory to memory. */
static void logger(int event, const void *p, size_t n)
{
    struct entry *e;

    if (!is_worker)
        return;
    if (event == ARC4PY_RNG_LOG_DONE) {
        in_core = 0;
        return;
    }
    in_log = 1;
    e = &ring[logged % LOG_N];
    if (event == ARC4PY_RNG_LOG_SEED) {
        rounds_seed_words(e->w, p);
        e->nblocks = 0;
    } else {
        memcpy(e->w, p, sizeof e->w);
        e->nblocks = (uint32_t)n;
    }
    e->start = event == ARC4PY_RNG_LOG_DIRECT ? output_point() : 0;
    e->kind = event;
    logged = logged + 1;
    in_core = event != ARC4PY_RNG_LOG_SEED;
    in_log = 0;
}

static void on_signal(int sig)
{
    unsigned h = n_hits;

    (void)sig;
    signals = signals + 1;
    if (in_log)
        tainted = 1; /* the test's own copy of a state may be in registers */
    if (in_core && logged > 0 && h < MAX_HITS) {
        hits[h].entry = logged - 1;
        hits[h].block = mode == MODE_DIRECT ? output_point() : 0;
        n_hits = h + 1;
    }
}

static void *signaller(void *arg)
{
    struct timespec pause = {0, SIGNAL_NS};

    (void)arg;
    while (!stop_signalling) {
        pthread_kill(worker_thread, SIGUSR1);
        nanosleep(&pause, NULL);
    }
    return NULL;
}

/* ---- the targets ---------------------------------------------------------- */

struct target {
    uint32_t value;
    uint32_t group;
};
static struct target targets[MAX_TARGETS];
static size_t n_targets;
static uint8_t group_kind[MAX_GROUPS];
static uint8_t group_found[MAX_GROUPS];
static uint32_t n_groups;
static uint8_t seen[MAX_TARGETS];

static int secret_word(int w) { return (w >= 4 && w <= 11) || w >= 14; }

static uint32_t new_group(int kind)
{
    if (n_groups >= MAX_GROUPS)
        return MAX_GROUPS - 1; /* never reached with the limits above */
    group_kind[n_groups] = (uint8_t)kind;
    return n_groups++;
}

static void add(uint32_t v, uint32_t group)
{
    if (n_targets < MAX_TARGETS) {
        targets[n_targets].value = v;
        targets[n_targets].group = group;
        n_targets++;
    }
}

/* Block b of entry e: its working words at every round boundary. */
static void add_block(const struct entry *e, uint32_t b)
{
    uint64_t ctr = ((uint64_t)e->w[13] << 32 | e->w[12]) + b;
    uint32_t x[16];
    int r, w;

    memcpy(x, e->w, sizeof x);
    x[12] = (uint32_t)ctr;
    x[13] = (uint32_t)(ctr >> 32);
    for (r = 1; r <= 20; r++) {
        uint32_t g = new_group(r < 20 ? ROUND : X20);

        rounds_one(x, r);
        for (w = 4; w < 16; w++)
            if (r < 20 || secret_word(w))
                add(x[w], g);
    }
}

static int by_value(const void *a, const void *b)
{
    uint32_t x = ((const struct target *)a)->value,
             y = ((const struct target *)b)->value;
    return x < y ? -1 : x > y;
}

/* Entries [first, logged): their keys; their calls' blocks as above. */
static void make_targets(uint64_t first)
{
    static uint8_t tabled[DIRECT_BLOCKS];
    uint64_t i;
    unsigned h;
    int w;

    n_targets = 0;
    n_groups = 0;
    if (logged - first > MAX_SINCE)
        first = logged - MAX_SINCE;
    for (i = first; i < logged; i++) {
        const struct entry *e = &ring[i % LOG_N];
        uint32_t g = new_group(KEY), b;

        for (w = 0; w < 16; w++)
            if (secret_word(w))
                add(e->w[w], g);
        if (e->kind == ARC4PY_RNG_LOG_REFILL)
            for (b = 0; b < e->nblocks; b++)
                add_block(e, b);
        else if (e->kind == ARC4PY_RNG_LOG_DIRECT) {
            memset(tabled, 0, e->nblocks);
            for (b = e->nblocks > LAST_BLOCKS ? e->nblocks - LAST_BLOCKS : 0;
                 b < e->nblocks; b++)
                tabled[b] = 1;
            for (h = 0; h < n_hits; h++) {
                long lo = (long)hits[h].block - (long)e->start - AROUND, c;

                if (hits[h].entry != i)
                    continue;
                for (c = lo < 0 ? 0 : lo; c < lo + 2 * AROUND && c < (long)e->nblocks; c++)
                    tabled[c] = 1;
            }
            for (b = 0; b < e->nblocks; b++)
                if (tabled[b])
                    add_block(e, b);
        }
    }
    qsort(targets, n_targets, sizeof targets[0], by_value);
}

/* ---- one copy ------------------------------------------------------------- */

struct counts {
    unsigned long snapshots, in_core, signals;
    unsigned long found[KINDS];  /* copies with a finding of the kind */
    unsigned long lone[KINDS];   /* copies with single words only */
    unsigned most[KINDS];        /* most words of one group in a copy */
};

static void search(struct counts *c)
{
    unsigned most[KINDS] = {0, 0, 0}, any[KINDS] = {0, 0, 0};
    size_t i;
    int k;

    memset(seen, 0, n_targets);
    memset(group_found, 0, n_groups);
    for (i = 0; i < WORDS; i++) {
        size_t lo = 0, hi = n_targets;

        if (snap[i] == 0)
            continue;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (targets[mid].value < snap[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < n_targets && targets[lo].value == snap[i]; lo++) {
            uint32_t g = targets[lo].group;

            if (seen[lo]++)
                continue; /* one word, several copies on the stack */
            k = group_kind[g];
            any[k]++;
            if (++group_found[g] > most[k])
                most[k] = group_found[g];
        }
    }
    for (k = 0; k < KINDS; k++) {
        c->found[k] += most[k] >= 2;
        c->lone[k] += most[k] == 1;
        if (most[k] > c->most[k])
            c->most[k] = most[k];
    }
}

/* ---- the worker ----------------------------------------------------------- */

static volatile uintptr_t top;

/* Zero the stack below the caller, where the draws' frames lie. */
__attribute__((noinline)) static void zero_below(void)
{
    uint8_t area[DEPTH + 4096];
    volatile uint8_t *p = area;
    size_t i;

    __asm__ __volatile__("" : "+r"(p) : : "memory");
    for (i = 0; i < sizeof area; i++)
        p[i] = 0;
}

/* Copy the dead stack: a loop through registers, nothing of it kept. */
__attribute__((noinline)) static void copy_below(void)
{
    const volatile uint32_t *p = (const volatile uint32_t *)(top - DEPTH);
    size_t i;

    for (i = 0; i < WORDS; i++)
        snap[i] = p[i];
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static struct counts counts[MODES];
static int worker_failed;

__attribute__((noinline)) static void run_mode(int m)
{
    volatile char here;
    struct counts *c = &counts[m];
    uint64_t first;
    double t0 = now();

    top = ((uintptr_t)&here - 256) & ~(uintptr_t)63;
    mode = m;
    zero_below();
    first = logged;
    while (c->snapshots < WANT && now() - t0 < SECONDS) {
        unsigned long before_signals;
        uint64_t before_logged;
        int err;

        if (m == MODE_DIRECT)
            memset(out_big, 0, sizeof out_big);
        n_hits = 0;
        tainted = 0;
        before_signals = signals;
        before_logged = logged;
        err = m == MODE_DIRECT ? arc4py_rng_buf(out_big, sizeof out_big)
                               : arc4py_rng_buf(out_small, sizeof out_small);
        if (err != 0 && err != EAGAIN) {
            worker_failed = 1;
            return;
        }
        if (signals == before_signals)
            continue;
        if (logged == before_logged || tainted) {
            /* No core ran (or the signal came in the test's own log):
               start afresh. */
            zero_below();
            first = logged;
            continue;
        }
        copy_below();
        c->snapshots++;
        c->in_core += n_hits > 0;
        c->signals += signals - before_signals;
        make_targets(first);
        search(c);
        zero_below();
        first = logged;
    }
}

static void *worker(void *arg)
{
    (void)arg;
    is_worker = 1;
    run_mode(MODE_REFILL);
    if (!worker_failed)
        run_mode(MODE_DIRECT);
    return NULL;
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    pthread_t sig_thread;
    unsigned long total[KINDS] = {0, 0, 0}, snaps = 0, in = 0;
    int m, k;

    if (argc != 2) {
        fprintf(stderr, "usage: signal_frames CORE\n");
        return 2;
    }
    if (!arc4py_rng_test_hooks) {
        fprintf(stderr, "signal_frames: build with -DARC4PY_TEST_HOOKS=1\n");
        return 2;
    }
    if (arc4py_rng_select_core(argv[1]) != 0)
        return verdict_skip("this core cannot run here", "\"snapshots\": %d", 0);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART; /* no SA_ONSTACK: the thread's own stack */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0) {
        perror("sigaction");
        return 2;
    }
    arc4py_rng_debug_log = logger;
    if (pthread_create(&worker_thread, NULL, worker, NULL) != 0 ||
        pthread_create(&sig_thread, NULL, signaller, NULL) != 0) {
        perror("pthread_create");
        return 2;
    }
    pthread_join(worker_thread, NULL);
    stop_signalling = 1;
    pthread_join(sig_thread, NULL);
    arc4py_rng_debug_log = NULL;
    verdict_check(!worker_failed, "every draw returned 0 or EAGAIN");
    for (m = 0; m < MODES; m++) {
        const struct counts *c = &counts[m];

        printf("INFO %s %s: %lu copies (%lu with a signal between a core call's log and its scrub, "
               "%lu signals)", argv[1], mode_names[m], c->snapshots, c->in_core,
               c->signals);
        for (k = 0; k < KINDS; k++)
            printf("; %s: found in %lu (lone words in %lu), most %u of one",
                   kind_names[k], c->found[k], c->lone[k], c->most[k]);
        putchar('\n');
        verdict_check(c->snapshots >= WANT / 3, "%s, %s: %lu draws with a core "
                      "call and a signal searched (at least %d wanted)", argv[1],
                      mode_names[m], c->snapshots, WANT / 3);
        for (k = 0; k < KINDS; k++) {
            verdict_check(c->found[k] == 0, "%s, %s: no %s words of one group "
                          "in dead stack (%lu of %lu copies hold two or more, "
                          "at most %u)", argv[1], mode_names[m], kind_names[k],
                          c->found[k], c->snapshots, c->most[k]);
            total[k] += c->found[k];
        }
        snaps += c->snapshots;
        in += c->in_core;
    }
    return verdict_end("\"snapshots\": %lu, \"in_core\": %lu, \"key\": %lu, "
                       "\"x20\": %lu, \"round\": %lu", snaps, in, total[KEY],
                       total[X20], total[ROUND]);
}
#endif
