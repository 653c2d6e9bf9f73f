/*
 * The generator on every platform, from C, through generator.h only:
 *
 *   generator_check [CORE|default]
 *
 * built with every .c file in arc4py/csrc (add -pthread on POSIX, -lbcrypt
 * on Windows); CORE, if given, is the core the generator is made to use.
 * Checks: draws of every size 0..2 * ARC4PY_RNG_DIRECT_BYTES + 100 between
 * guard bytes; a 3 MiB draw's byte counts; 320 Ki 32-bit draws (many
 * refills, a reseed) with half their bits set; uniform bounds; stir and
 * stir_all; the fork protection bits; where there is fork(), parent and
 * child streams differ after a fork.
 *
 * tests/platforms/test_platforms.py builds it for each OS and architecture
 * and runs it where this machine can, tests/cores/test_neon_qemu.py with
 * the neon core under qemu, tests/c/test_c_programs.py natively with each
 * core.  A check a line, then the verdict (tests/c/verdict.h) with the
 * fact "core": the generator's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef _WIN32
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "generator.h"
#include "verdict.h"

#define GUARD 32

#define DRAW_MAX (ARC4PY_RNG_DIRECT_BYTES * 2 + 100)
static uint8_t draw_buf[GUARD + 16 + DRAW_MAX + GUARD];

static void check_draw_sizes(void)
{
    uint8_t prev[32];
    size_t n, off;
    int rc, ok = 1, have_prev = 0;

    for (n = 0; n <= DRAW_MAX; n++) {
        off = n % 16;
        memset(draw_buf, 0xa5, sizeof draw_buf);
        rc = arc4py_rng_buf(draw_buf + GUARD + off, n);
        if (rc != 0) {
            verdict_detail("draw of %lu bytes returned %d", LU(n), rc);
            ok = 0;
            continue;
        }
        if (!all_equal(draw_buf, GUARD + off, 0xa5) ||
            !all_equal(draw_buf + GUARD + off + n,
                       sizeof draw_buf - GUARD - off - n, 0xa5)) {
            verdict_detail("draw of %lu bytes at offset %lu wrote outside", LU(n),
                   LU(off));
            ok = 0;
        }
        if (n >= 16 && all_equal(draw_buf + GUARD + off, n, 0)) {
            verdict_detail("draw of %lu bytes is all zero", LU(n));
            ok = 0;
        }
        if (n >= 32) {
            if (have_prev && memcmp(prev, draw_buf + GUARD + off, 32) == 0) {
                verdict_detail("draw of %lu bytes starts as the previous one", LU(n));
                ok = 0;
            }
            memcpy(prev, draw_buf + GUARD + off, 32);
            have_prev = 1;
        }
    }
    /* The generator picks its core on the first draw. */
    printf("INFO generator core: %s\n", arc4py_rng_core_name());
    verdict_check(ok, "generator: draws of every size 0..%lu, guard bytes untouched",
           LU(DRAW_MAX));
}

static void check_large_draw(void)
{
    const size_t n = 3u << 20;
    uint8_t *buf = (uint8_t *)malloc(n + 2 * GUARD + 1);
    unsigned long counts[256] = {0};
    double mean = (double)n / 256, chi2 = 0;
    size_t i;
    int rc, ok = 1;

    if (buf == NULL) {
        verdict_check(0, "generator: 3 MiB draw (no memory for the buffer)");
        return;
    }
    memset(buf, 0xa5, n + 2 * GUARD + 1);
    rc = arc4py_rng_buf(buf + GUARD + 1, n);
    if (rc != 0) {
        verdict_detail("draw returned %d", rc);
        ok = 0;
    }
    if (!all_equal(buf, GUARD + 1, 0xa5) ||
        !all_equal(buf + GUARD + 1 + n, GUARD, 0xa5)) {
        verdict_detail("guard bytes overwritten");
        ok = 0;
    }
    for (i = 0; i < n; i++)
        counts[buf[GUARD + 1 + i]]++;
    for (i = 0; i < 256; i++) {
        double d = (double)counts[i] - mean;
        chi2 += d * d / mean;
        /* ~110 standard deviations is 10%: only a broken stream. */
        if (counts[i] < mean * 0.9 || counts[i] > mean * 1.1) {
            verdict_detail("byte 0x%02lx seen %lu times, mean %.0f", LU(i),
                   counts[i], mean);
            ok = 0;
        }
    }
    /* 255 degrees of freedom: mean 255, sd 22.6; 450 is > 8 sd. */
    if (chi2 > 450) {
        verdict_detail("chi-square %.1f over 255 degrees of freedom", chi2);
        ok = 0;
    }
    printf("INFO 3 MiB draw: chi-square %.1f (255 degrees of freedom)\n", chi2);
    verdict_check(ok, "generator: 3 MiB draw, every byte value within 10%% of the "
           "mean");
    free(buf);
}

static void check_uniform(void)
{
    static const uint32_t bounds[] = {1, 2, 3, 7, 0x80000001u, 0};
    const unsigned draws = 4000;
    size_t b;
    unsigned i;

    for (b = 0; b < sizeof bounds / sizeof bounds[0]; b++) {
        uint32_t bound = bounds[b], v, seen = 0;
        unsigned long high = 0; /* results in the top half of the range */
        int ok = 1;

        for (i = 0; i < draws; i++) {
            int rc = arc4py_rng_uniform(bound, &v);
            if (rc != 0) {
                verdict_detail("uniform(%lu) returned %d", LU(bound), rc);
                ok = 0;
                break;
            }
            if (bound != 0 && v >= bound) {
                verdict_detail("uniform(%lu) gave %lu", LU(bound), LU(v));
                ok = 0;
            }
            if (bound != 0 && bound <= 32)
                seen |= 1u << v;
            if (bound == 0 ? v >= 0x80000000u : v >= bound / 2)
                high++;
        }
        if (bound != 0 && bound <= 32 && seen != (uint32_t)((1ull << bound) - 1)) {
            verdict_detail("uniform(%lu): values seen 0x%lx", LU(bound), LU(seen));
            ok = 0;
        }
        if (bound == 0 || bound > 32) {
            /* Half the results in the upper half of the range, roughly
               (sd 32 of 2000 here: 1700..2300 is > 9 sd). */
            if (high < draws / 2 - 300 || high > draws / 2 + 300) {
                verdict_detail("uniform(%lu): %lu of %u in the upper half", LU(bound),
                       high, draws);
                ok = 0;
            }
        }
        if (bound == 0)
            verdict_check(ok, "uniform(0) means 2**32: %u draws spread over the "
                   "whole range", draws);
        else if (bound <= 32)
            verdict_check(ok, "uniform(%lu): %u draws all below it, every value hit",
                   LU(bound), draws);
        else
            verdict_check(ok, "uniform(%lu): %u draws all below it, both halves hit",
                   LU(bound), draws);
    }
}

static void check_stir(void)
{
    uint8_t a[64], b[64], c[64];
    uint32_t u;
    uint64_t w;
    int rc1, rc2, rc3, rc4, rc5, rc6, rc7;

    rc1 = arc4py_rng_buf(a, sizeof a);
    rc2 = arc4py_rng_stir();
    rc3 = arc4py_rng_buf(b, sizeof b);
    rc4 = arc4py_rng_stir_all();
    rc5 = arc4py_rng_buf(c, sizeof c);
    rc6 = arc4py_rng_u32(&u);
    rc7 = arc4py_rng_u64(&w);
    if (rc2 != 0)
        verdict_detail("stir returned %d", rc2);
    if (rc4 != 0)
        verdict_detail("stir_all returned %d", rc4);
    if (rc1 || rc3 || rc5 || rc6 || rc7)
        verdict_detail("draws returned %d %d %d %d %d", rc1, rc3, rc5, rc6, rc7);
    verdict_check(rc1 == 0 && rc2 == 0 && rc3 == 0 && rc4 == 0 && rc5 == 0 &&
               rc6 == 0 && rc7 == 0 && memcmp(a, b, 64) != 0 &&
               memcmp(b, c, 64) != 0 && memcmp(a, c, 64) != 0 &&
               !all_equal(b, 64, 0) && !all_equal(c, 64, 0),
           "stir and stir_all return 0, the stream goes on and differs");
}

/* 320 Ki 32-bit draws, 1.25 MiB through the buffer (many refills, a
 * reseed): about half of all bits set (sd 0.4 Ki of 5 Mi: 1% is > 100 sd). */
static void check_u32_draws(void)
{
    unsigned long ones = 0, i, n = 320ul * 1024;
    uint32_t u;
    int rc = 0;

    for (i = 0; i < n && rc == 0; i++) {
        rc = arc4py_rng_u32(&u);
        for (; u != 0; u &= u - 1)
            ones++;
    }
    if (rc != 0)
        verdict_detail("arc4py_rng_u32 returned %d", rc);
    verdict_check(rc == 0 && ones >= n * 16 / 100 * 99 && ones <= n * 16 / 100 * 101,
                  "generator: %lu 32-bit draws, %lu of %lu bits set", n, ones,
                  n * 32);
}

static void check_fork_protection(void)
{
    unsigned p = arc4py_rng_fork_protection();
    const unsigned known = ARC4PY_FORK_WIPEONFORK | ARC4PY_FORK_ATFORK |
                           ARC4PY_DONTDUMP | ARC4PY_FORK_VDSO;

    printf("INFO fork protection: 0x%x:%s%s%s%s%s\n", p,
           p == 0 ? " none" : "",
           p & ARC4PY_FORK_WIPEONFORK ? " wipeonfork" : "",
           p & ARC4PY_FORK_ATFORK ? " atfork" : "",
           p & ARC4PY_DONTDUMP ? " dontdump" : "",
           p & ARC4PY_FORK_VDSO ? " vdso" : "");
    verdict_check((p & ~known) == 0, "fork protection: only known bits set");
}

#ifndef _WIN32
/* Fork, have the child draw 64 bytes and send them (after its draw's
 * status byte) through a pipe; the child's 64 bytes, or -1. */
static int child_draw(uint8_t out[64], int *child_rc)
{
    uint8_t msg[65];
    size_t got = 0;
    int fds[2], status;
    pid_t pid;

    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        size_t put = 0;
        int rc;
        close(fds[0]);
        memset(msg, 0, sizeof msg);
        rc = arc4py_rng_buf(msg + 1, 64);
        msg[0] = (uint8_t)(rc == 0 ? 0 : (rc & 0x7f) | 0x80);
        while (put < sizeof msg) {
            ssize_t w = write(fds[1], msg + put, sizeof msg - put);
            if (w <= 0)
                _exit(3);
            put += (size_t)w;
        }
        _exit(rc == 0 ? 0 : 4);
    }
    close(fds[1]);
    while (got < sizeof msg) {
        ssize_t r = read(fds[0], msg + got, sizeof msg - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fds[0]);
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0 || got != sizeof msg)
        return -1;
    *child_rc = msg[0];
    memcpy(out, msg + 1, 64);
    return 0;
}

static void check_fork(void)
{
    uint8_t before[64], parent[64], child1[64], child2[64];
    int rc_before, rc_parent, c1 = -1, c2 = -1, f1, f2, ok;

    /* The parent's state exists (and has a buffer) before the fork. */
    rc_before = arc4py_rng_buf(before, sizeof before);
    f1 = child_draw(child1, &c1);
    rc_parent = arc4py_rng_buf(parent, sizeof parent);
    f2 = child_draw(child2, &c2);
    ok = f1 == 0 && f2 == 0 && c1 == 0 && c2 == 0;
    if (!ok)
        verdict_detail("fork/pipe/wait: %d %d, child draw status %d %d", f1, f2, c1,
               c2);
    verdict_check(ok && rc_before == 0 && rc_parent == 0,
           "fork: a draw in the child succeeds");
    ok = ok && memcmp(parent, child1, 64) != 0 &&
         memcmp(parent, child2, 64) != 0 && memcmp(child1, child2, 64) != 0 &&
         memcmp(before, child1, 64) != 0 && !all_equal(child1, 64, 0) &&
         !all_equal(child2, 64, 0);
    verdict_check(ok, "fork: parent's and children's 64 bytes after the fork differ");
}
#endif
int main(int argc, char **argv)
{
    const char *core = argc > 1 ? argv[1] : "default";

    if (strcmp(core, "default") != 0) {
        verdict_check(arc4py_rng_select_core(core) == 0,
                      "generator: core %s selected", core);
        if (verdict_failed)
            return verdict_end("\"core\": \"%s\"", arc4py_rng_core_name());
    }
    check_draw_sizes();
    check_large_draw();
    check_u32_draws();
    check_uniform();
    check_stir();
    check_fork_protection();
#ifdef _WIN32
    printf("SKIP fork: Windows has no fork()\n");
#else
    check_fork();
#endif
    return verdict_end("\"core\": \"%s\"", arc4py_rng_core_name());
}
