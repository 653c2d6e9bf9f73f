/*
 * The C generator with a forced core (argv[1]; "default": the dispatch's
 * first choice), from C, for
 * tests/test_neon_qemu.py: arc4py's whole generator on aarch64 under qemu.
 * Draws of every size across the buffer and direct-fill boundaries (with
 * guard bytes), many small draws across refills and the 1 MiB reseed,
 * large direct fills, uniform draws, and a fork whose child must not
 * repeat the parent's stream.  Exit status 0: all good.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "generator.h"

static int failures;
#define FAIL(...)                                                          \
    do {                                                                   \
        fprintf(stderr, __VA_ARGS__);                                      \
        fputc('\n', stderr);                                               \
        failures++;                                                        \
    } while (0)

/* Byte counts of buf: each of 256 values within 25% of the mean (for the
 * sizes used here that is many standard deviations: a loose sanity bound
 * that catches zeros, repeats and stuck bytes, not a statistical test). */
static void check_spread(const uint8_t *buf, size_t n, const char *what)
{
    size_t counts[256] = {0}, i;
    double mean = (double)n / 256;

    for (i = 0; i < n; i++)
        counts[buf[i]]++;
    for (i = 0; i < 256; i++)
        if (counts[i] < mean * 0.75 || counts[i] > mean * 1.25) {
            FAIL("%s: byte %zu seen %zu times in %zu", what, i, counts[i], n);
            return;
        }
}

int main(int argc, char **argv)
{
    static uint8_t buf[5 * 1024 * 1024 + 64 + 3];
    uint8_t prev[64] = {0};
    size_t n, i;
    uint32_t u, ones = 0;
    int status, fds[2];
    pid_t pid;

    if (argc != 2 || (strcmp(argv[1], "default") != 0 &&
                      arc4py_rng_select_core(argv[1]) != 0)) {
        fprintf(stderr, "usage: rng_check CORE|default\n");
        return 2;
    }
    if (strcmp(argv[1], "default") != 0 &&
        strcmp(arc4py_rng_core_name(), argv[1]) != 0)
        FAIL("core is %s, not %s", arc4py_rng_core_name(), argv[1]);

    /* Every size 0..4200 (past the 2 KiB direct threshold), with guard
     * bytes on both sides at an odd address; together 2.7 MiB, so many
     * refills and reseeds. */
    for (n = 0; n <= 4200; n++) {
        memset(buf, 0xa5, n + 64 + 2);
        if (arc4py_rng_buf(buf + 33, n) != 0) {
            FAIL("arc4py_rng_buf(%zu) failed", n);
            break;
        }
        for (i = 0; i < 33; i++)
            if (buf[i] != 0xa5 || buf[33 + n + i] != 0xa5) {
                FAIL("size %zu: wrote outside the buffer", n);
                break;
            }
        if (n >= 64 && memcmp(buf + 33, prev, 64) == 0)
            FAIL("size %zu: the same 64 bytes twice", n);
        if (n >= 64)
            memcpy(prev, buf + 33, 64);
    }

    /* 320 Ki small draws: 1.25 MiB through the buffer, so many refills and
     * at least one reseed; about half of all bits set. */
    for (i = 0; i < 320 * 1024; i++) {
        if (arc4py_rng_u32(&u) != 0) {
            FAIL("arc4py_rng_u32 failed");
            break;
        }
        ones += (uint32_t)__builtin_popcount(u);
        if (i < sizeof buf / 4)
            memcpy(buf + 4 * i, &u, 4);
    }
    if (ones < 320u * 1024 * 16 * 99 / 100 || ones > 320u * 1024 * 16 * 101 / 100)
        FAIL("u32 draws: %u bits set of %u", ones, 320u * 1024 * 32);
    check_spread(buf, 320 * 1024 * 4, "u32 draws");

    /* Large fills go straight to the caller's memory in chunks. */
    for (n = 1024 * 1024; n <= sizeof buf - 64; n += 4 * 1024 * 1024 + 3) {
        memset(buf, 0, sizeof buf);
        if (arc4py_rng_buf(buf + 1, n) != 0)
            FAIL("arc4py_rng_buf(%zu) failed", n);
        check_spread(buf + 1, n, "large fill");
        if (buf[n + 1] != 0)
            FAIL("large fill wrote past its end");
    }

    for (i = 0; i < 10000; i++)
        if (arc4py_rng_uniform(7, &u) != 0 || u >= 7) {
            FAIL("uniform(7) gave %u", u);
            break;
        }

    /* Fork: the child's next bytes differ from the parent's next bytes. */
    if (pipe(fds) != 0)
        return 3;
    pid = fork();
    if (pid < 0)
        return 3;
    if (pid == 0) {
        uint8_t child[64];
        int ok = arc4py_rng_buf(child, sizeof child) == 0 &&
                 write(fds[1], child, sizeof child) == (ssize_t)sizeof child;
        _exit(ok ? 0 : 1);
    }
    {
        uint8_t mine[64], theirs[64];
        ssize_t got = 0, r;

        close(fds[1]);
        if (arc4py_rng_buf(mine, sizeof mine) != 0)
            FAIL("parent draw after fork failed");
        while (got < (ssize_t)sizeof theirs &&
               (r = read(fds[0], theirs + got, sizeof theirs - (size_t)got)) > 0)
            got += r;
        waitpid(pid, &status, 0);
        if (got != (ssize_t)sizeof theirs || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            FAIL("the child could not draw");
        else if (memcmp(mine, theirs, sizeof mine) == 0)
            FAIL("parent and child drew the same bytes after fork");
    }

    if (failures)
        return 1;
    printf("generator on core %s: sizes 0..4200, refills, reseed, large "
           "fills, uniform, fork: ok (fork protection bits %u)\n",
           arc4py_rng_core_name(), arc4py_rng_fork_protection());
    return 0;
}
