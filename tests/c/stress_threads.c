/*
 * A C stress program for ThreadSanitizer (tests/c/test_c_programs.py): eight threads
 * draw every size class (integers, small and buffer-crossing buffered
 * draws, direct fills of one and of several chunks), two of them call
 * stir_all and stir between draws, a churn thread starts and joins
 * short-lived drawing threads, and the main thread forks children that draw
 * and exit.  Every draw must succeed and each thread's first 32 bytes must
 * differ from every other's (the verdict: tests/c/verdict.h); the
 * sanitizer's own reports are the real check.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "generator.h"
#include "verdict.h"

#define WORKERS 8
#define ROUNDS 60
#define CHURN_THREADS 64
#define FORKS 6

static const size_t sizes[] = {
    1, 4, 16, 100, 1000, ARC4PY_RNG_DIRECT_BYTES - 1, ARC4PY_RNG_DIRECT_BYTES,
    ARC4PY_RNG_BUFFER_BYTES + 7, ARC4PY_RNG_DIRECT_CHUNK_BYTES + 65,
    3 * ARC4PY_RNG_DIRECT_CHUNK_BYTES};

static uint8_t first[WORKERS][32];
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *what)
{
    pthread_mutex_lock(&fail_lock);
    verdict_fail("%s", what);
    pthread_mutex_unlock(&fail_lock);
}

static void *worker(void *arg)
{
    size_t id = (size_t)arg, r, i;
    uint8_t *buf = malloc(3 * ARC4PY_RNG_DIRECT_CHUNK_BYTES);
    uint32_t u;
    uint64_t v;

    if (buf == NULL || arc4py_rng_buf(first[id], sizeof first[id]) != 0) {
        fail("first draw");
        free(buf);
        return NULL;
    }
    for (r = 0; r < ROUNDS; r++) {
        for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            if (arc4py_rng_buf(buf, sizes[i]) != 0)
                fail("buf");
        if (arc4py_rng_u32(&u) != 0 || arc4py_rng_u64(&v) != 0 ||
            arc4py_rng_uniform(1000, &u) != 0 || u >= 1000)
            fail("integers");
        if (id == 0 && r % 5 == 0 && arc4py_rng_stir_all() != 0)
            fail("stir_all");
        if (id == 1 && r % 7 == 0 && arc4py_rng_stir() != 0)
            fail("stir");
        if (id == 2 && r % 20 == 0)
            (void)arc4py_rng_fork_protection();
    }
    free(buf);
    return NULL;
}

static void *short_lived(void *arg)
{
    uint8_t b[100];

    (void)arg;
    if (arc4py_rng_buf(b, sizeof b) != 0)
        fail("short-lived draw");
    return NULL;
}

static void *churn(void *arg)
{
    pthread_t t;
    int i;

    (void)arg;
    for (i = 0; i < CHURN_THREADS; i++) {
        if (pthread_create(&t, NULL, short_lived, NULL) != 0) {
            fail("churn create");
            break;
        }
        pthread_join(t, NULL);
    }
    return NULL;
}

static void forks(void)
{
    int i, status;

    for (i = 0; i < FORKS; i++) {
        pid_t pid = fork();

        if (pid == 0) {
            uint8_t b[5000];

            _exit(arc4py_rng_buf(b, sizeof b) == 0 &&
                          arc4py_rng_buf(b, 16) == 0
                      ? 0
                      : 1);
        }
        if (pid < 0 || waitpid(pid, &status, 0) != pid ||
            !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail("fork child");
        usleep(2000);
    }
}

int main(void)
{
    pthread_t w[WORKERS], c;
    size_t i, j;

    for (i = 0; i < WORKERS; i++)
        if (pthread_create(&w[i], NULL, worker, (void *)i) != 0)
            return 2;
    if (pthread_create(&c, NULL, churn, NULL) != 0)
        return 2;
    forks();
    for (i = 0; i < WORKERS; i++)
        pthread_join(w[i], NULL);
    pthread_join(c, NULL);
    for (i = 0; i < WORKERS; i++)
        for (j = i + 1; j < WORKERS; j++)
            if (memcmp(first[i], first[j], sizeof first[i]) == 0)
                fail("two threads began with the same bytes");
    return verdict_end("\"workers\": %d, \"forks\": %d", WORKERS, FORKS);
}
