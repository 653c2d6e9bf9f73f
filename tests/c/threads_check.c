/*
 * The generator's threads on every platform, from C, through generator.h
 * only: built as generator_check.c is (tests/platforms/test_platforms.py,
 * tests/c/test_c_programs.py).  8 threads' streams (buffered and direct
 * draws) distinct and non-repeating; 200 short-lived threads, 25 at a time,
 * each creating its state, drawing and exiting.  A check a line, then the
 * verdict (tests/c/verdict.h).
 *
 * Threads are pthreads on POSIX and Win32 threads on Windows, behind the
 * small task_* wrapper below.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <windows.h>
#else
#include <pthread.h>
#endif

#include "generator.h"
#include "verdict.h"

/* ---- threads: pthreads or Win32 ----------------------------------------- */

typedef void (*task_fn)(void *arg);

struct task {
    task_fn fn;
    void *arg;
#ifdef _WIN32
    HANDLE handle;
#else
    pthread_t handle;
#endif
};

/* At most this many tasks are joined at once (WaitForMultipleObjects). */
#define TASK_BATCH_MAX 64

#ifdef _WIN32
static DWORD WINAPI task_entry(LPVOID p)
{
    struct task *t = (struct task *)p;
    t->fn(t->arg);
    return 0;
}

static int task_start(struct task *t, task_fn fn, void *arg)
{
    t->fn = fn;
    t->arg = arg;
    t->handle = CreateThread(NULL, 0, task_entry, t, 0, NULL);
    return t->handle != NULL ? 0 : -1;
}

/* Wait for the n (<= TASK_BATCH_MAX) started tasks; 0, or -1. */
static int task_join_all(struct task *t, size_t n)
{
    HANDLE h[TASK_BATCH_MAX];
    DWORD rc;
    size_t i;

    if (n == 0)
        return 0;
    if (n > TASK_BATCH_MAX)
        return -1;
    for (i = 0; i < n; i++)
        h[i] = t[i].handle;
    rc = WaitForMultipleObjects((DWORD)n, h, TRUE, INFINITE);
    for (i = 0; i < n; i++)
        CloseHandle(h[i]);
    return rc == WAIT_FAILED ? -1 : 0;
}
#else
static void *task_entry(void *p)
{
    struct task *t = (struct task *)p;
    t->fn(t->arg);
    return NULL;
}

static int task_start(struct task *t, task_fn fn, void *arg)
{
    t->fn = fn;
    t->arg = arg;
    return pthread_create(&t->handle, NULL, task_entry, t) == 0 ? 0 : -1;
}

static int task_join_all(struct task *t, size_t n)
{
    size_t i;
    int bad = 0;

    if (n > TASK_BATCH_MAX)
        return -1;
    for (i = 0; i < n; i++)
        if (pthread_join(t[i].handle, NULL) != 0)
            bad = 1;
    return bad ? -1 : 0;
}
#endif

/* FNV-1a, 64-bit: a fingerprint of everything a thread drew. */
static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
#define FNV_INIT 0xcbf29ce484222325ull
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* 8 threads, each drawing a mix of sizes (buffered and direct) and keeping
 * every 64-bit value it drew and an FNV-1a hash of all its output. */
#define N_THREADS 8
#define VALUES_PER_THREAD 6000
#define BIG_DRAW (ARC4PY_RNG_DIRECT_BYTES + 917)

struct draw_job {
    uint8_t first[32];
    uint64_t *values;
    uint64_t hash;
    int err;
};

static void draw_worker(void *arg)
{
    struct draw_job *job = (struct draw_job *)arg;
    uint8_t big[BIG_DRAW];
    size_t i;
    int rc;

    job->hash = FNV_INIT;
    rc = arc4py_rng_buf(job->first, sizeof job->first);
    if (rc != 0)
        job->err = rc;
    job->hash = fnv1a(job->hash, job->first, sizeof job->first);
    for (i = 0; i < VALUES_PER_THREAD; i++) {
        uint64_t v = 0;
        uint8_t b[8];
        switch (i % 4) {
        case 0:
            rc = arc4py_rng_u64(&v);
            break;
        case 1:
            rc = arc4py_rng_buf(b, sizeof b);
            memcpy(&v, b, sizeof v);
            break;
        case 2: {
            uint32_t lo = 0, hi = 0;
            rc = arc4py_rng_u32(&lo);
            if (rc == 0)
                rc = arc4py_rng_u32(&hi);
            v = ((uint64_t)hi << 32) | lo;
            break;
        }
        default:
            /* Straight into the caller's memory, past the buffer. */
            rc = arc4py_rng_buf(big, sizeof big);
            job->hash = fnv1a(job->hash, big, sizeof big);
            memcpy(&v, big + 100, sizeof v);
            break;
        }
        if (rc != 0 && job->err == 0)
            job->err = rc;
        job->values[i] = v;
        job->hash = fnv1a(job->hash, (const uint8_t *)&v, sizeof v);
    }
}

static void check_threads(void)
{
    struct task tasks[N_THREADS];
    struct draw_job jobs[N_THREADS];
    uint64_t *all;
    size_t i, j, started = 0, dups = 0, n_all = N_THREADS * VALUES_PER_THREAD;
    int ok = 1, distinct = 1;

    all = (uint64_t *)malloc(n_all * sizeof *all);
    if (all == NULL) {
        verdict_check(0, "threads: no memory for the values");
        return;
    }
    memset(jobs, 0, sizeof jobs);
    for (i = 0; i < N_THREADS; i++) {
        jobs[i].values = all + i * VALUES_PER_THREAD;
        if (task_start(&tasks[started], draw_worker, &jobs[i]) != 0) {
            verdict_detail("could not start thread %lu", LU(i));
            ok = 0;
            break;
        }
        started++;
    }
    if (task_join_all(tasks, started) != 0) {
        verdict_detail("join failed");
        ok = 0;
    }
    for (i = 0; i < started; i++)
        if (jobs[i].err != 0) {
            verdict_detail("thread %lu: a draw returned %d", LU(i), jobs[i].err);
            ok = 0;
        }
    verdict_check(ok && started == N_THREADS,
           "threads: %d threads drew %d values each (buffered and direct) "
           "without error", N_THREADS, VALUES_PER_THREAD);

    for (i = 0; i < started; i++)
        for (j = 0; j < i; j++) {
            if (memcmp(jobs[i].first, jobs[j].first, 32) == 0) {
                verdict_detail("threads %lu and %lu: same first 32 bytes", LU(j),
                       LU(i));
                distinct = 0;
            }
            if (jobs[i].hash == jobs[j].hash) {
                verdict_detail("threads %lu and %lu: same output hash", LU(j), LU(i));
                distinct = 0;
            }
        }
    verdict_check(distinct && started == N_THREADS,
           "threads: all %d threads' first 32 bytes and output hashes distinct",
           N_THREADS);

    /* Within each thread, then across all of them: no 64-bit value twice
       (a repeat among 48000 random values has probability ~1e-10). */
    ok = 1;
    for (i = 0; i < started; i++) {
        uint64_t *v = jobs[i].values;
        qsort(v, VALUES_PER_THREAD, sizeof *v, cmp_u64);
        for (j = 1; j < VALUES_PER_THREAD; j++)
            if (v[j] == v[j - 1]) {
                verdict_detail("thread %lu drew 0x%08lx%08lx twice", LU(i),
                       LU(v[j] >> 32), LU(v[j] & 0xffffffffu));
                ok = 0;
            }
    }
    verdict_check(ok && started == N_THREADS,
           "threads: no thread's draws repeat");
    n_all = started * VALUES_PER_THREAD;
    qsort(all, n_all, sizeof *all, cmp_u64);
    for (j = 1; j < n_all; j++)
        if (all[j] == all[j - 1])
            dups++;
    if (dups)
        verdict_detail("%lu values repeated across threads", LU(dups));
    verdict_check(dups == 0 && started == N_THREADS,
           "threads: no value repeats across the threads");
    free(all);
}

/* Thread churn: many short-lived threads, each creating its state, drawing
 * 100 bytes and exiting (its state released), a batch at a time. */
#define CHURN_THREADS 200
#define CHURN_BATCH 25

struct churn_job {
    uint8_t out[100];
    int err;
};

static void churn_worker(void *arg)
{
    struct churn_job *job = (struct churn_job *)arg;
    job->err = arc4py_rng_buf(job->out, sizeof job->out);
}

static void check_churn(void)
{
    static struct churn_job jobs[CHURN_THREADS];
    struct task tasks[CHURN_BATCH];
    size_t done = 0, i, j, failed_starts = 0, errors = 0, same = 0;

    memset(jobs, 0, sizeof jobs);
    while (done < CHURN_THREADS) {
        size_t started = 0;
        for (i = 0; i < CHURN_BATCH && done + i < CHURN_THREADS; i++) {
            if (task_start(&tasks[started], churn_worker, &jobs[done + i]) != 0) {
                jobs[done + i].err = -1;
                failed_starts++;
                continue;
            }
            started++;
        }
        if (task_join_all(tasks, started) != 0)
            errors++;
        done += i;
    }
    for (i = 0; i < CHURN_THREADS; i++) {
        if (jobs[i].err != 0 || all_equal(jobs[i].out, sizeof jobs[i].out, 0))
            errors++;
        for (j = 0; j < i; j++)
            if (memcmp(jobs[i].out, jobs[j].out, 32) == 0)
                same++;
    }
    if (failed_starts)
        verdict_detail("%lu threads could not be started", LU(failed_starts));
    if (errors)
        verdict_detail("%lu draws or joins failed", LU(errors));
    if (same)
        verdict_detail("%lu pairs of threads drew the same bytes", LU(same));
    verdict_check(failed_starts == 0 && errors == 0 && same == 0,
           "thread churn: %d short-lived threads (%d at a time) drew 100 "
           "distinct bytes each", CHURN_THREADS, CHURN_BATCH);

    /* The exiting threads' states are gone; this one's still works. */
    {
        uint8_t b[64];
        int rc = arc4py_rng_buf(b, sizeof b);
        verdict_check(rc == 0 && !all_equal(b, sizeof b, 0),
               "thread churn: the main thread still draws");
    }
}

int main(void)
{
    check_threads();
    check_churn();
    return verdict_end("\"threads\": %d, \"churn_threads\": %d", N_THREADS,
                       CHURN_THREADS);
}
