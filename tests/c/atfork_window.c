/*
 * Draws inside fork(), with wipe-on-fork refused: does a child hand out a
 * byte its parent hands out too?
 *
 * A library loaded before arc4py's first draw registers its atfork
 * handlers first: POSIX runs its prepare handler after arc4py's and its
 * parent and child handlers before arc4py's.  Here such handlers (made
 * before the first draw) each draw 32 bytes through arc4py_rng_buf; after
 * fork() returns, parent and child each draw 32 more.  This program's own
 * madvise() refuses MADV_WIPEONFORK (a seccomp filter or a kernel < 4.14
 * does the same), so the atfork handlers are the only defence, as on macOS.
 * Two rounds of FORKS forks: the child handler alone draws, then all three.
 *
 * usage: atfork_window [FORKS]   (200 by default)
 * Verdict (tests/c/verdict.h) facts: "forks", "repeats" (children that
 * handed out 32 bytes their parent handed out too), "wipe_on_fork" (0: the
 * refusal took).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "generator.h"
#include "pipe_io.h"
#include "verdict.h"

#define DRAW 32

/* The generator's madvise() calls land here: MADV_WIPEONFORK refused. */
int madvise(void *addr, size_t len, int advice)
{
#ifdef MADV_WIPEONFORK
    if (advice == MADV_WIPEONFORK) {
        errno = EINVAL;
        return -1;
    }
#endif
    return (int)syscall(SYS_madvise, addr, len, advice);
}

static int all_handlers;
static uint8_t in_prepare[DRAW], in_parent[DRAW], in_child[DRAW];
static int handler_errors;

static void draw(uint8_t *out)
{
    handler_errors += arc4py_rng_buf(out, DRAW) != 0;
}

static void prepare(void)
{
    if (all_handlers)
        draw(in_prepare);
}

static void parent(void)
{
    if (all_handlers)
        draw(in_parent);
}

static void child(void) { draw(in_child); }

/* One fork: 1 if the child handed out bytes its parent handed out too,
   0 if not, -1 if it could not run. */
static int one_fork(void)
{
    uint8_t got[2][DRAW], after[DRAW];
    const uint8_t *mine[3];
    int fds[2], status, i, j, same = 0;
    pid_t pid;

    if (pipe(fds) != 0)
        return -1;
    memset(in_prepare, 0, DRAW);
    memset(in_parent, 0, DRAW);
    memset(in_child, 0, DRAW);
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        draw(after);
        _exit(handler_errors || write_all(fds[1], in_child, DRAW) != 0 ||
              write_all(fds[1], after, DRAW) != 0);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    draw(after);
    if (read_all(fds[0], got, sizeof got) != 0) {
        close(fds[0]);
        waitpid(pid, &status, 0);
        return -1;
    }
    close(fds[0]);
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return -1;
    mine[0] = in_prepare;
    mine[1] = in_parent;
    mine[2] = after;
    for (i = 0; i < 2; i++)
        for (j = all_handlers ? 0 : 2; j < 3; j++)
            same |= memcmp(got[i], mine[j], DRAW) == 0;
    return same;
}

int main(int argc, char **argv)
{
    unsigned long forks = argc > 1 ? strtoul(argv[1], NULL, 10) : 200;
    unsigned long f, repeats[2] = {0, 0}, failed = 0;
    uint8_t warm[DRAW];
    unsigned protection;

    /* Registered before arc4py's first draw, as by a library loaded first. */
    if (pthread_atfork(prepare, parent, child) != 0)
        return 2;
    if (arc4py_rng_buf(warm, sizeof warm) != 0)
        return 2;
    protection = arc4py_rng_fork_protection();
    if (!(protection & ARC4PY_FORK_ATFORK))
        return verdict_skip("no atfork handler here", "\"forks\": 0");
    for (all_handlers = 0; all_handlers < 2; all_handlers++)
        for (f = 0; f < forks; f++) {
            int r = one_fork();

            if (r < 0)
                failed++;
            else
                repeats[all_handlers] += (unsigned long)r;
        }
    verdict_check(!(protection & ARC4PY_FORK_WIPEONFORK),
                  "the state pages have no wipe-on-fork (refused)");
    verdict_check(failed == 0 && handler_errors == 0, "every fork ran and "
                  "every draw succeeded (%lu forks failed, %d draws)", failed,
                  handler_errors);
    verdict_check(repeats[0] == 0, "a child handler registered first: no child "
                  "handed out bytes of its parent's (%lu of %lu did)",
                  repeats[0], forks);
    verdict_check(repeats[1] == 0, "prepare, parent and child handlers "
                  "registered first: no child handed out bytes of its "
                  "parent's (%lu of %lu did)", repeats[1], forks);
    return verdict_end("\"forks\": %lu, \"repeats\": %lu, \"wipe_on_fork\": %d",
                       2 * forks - failed, repeats[0] + repeats[1],
                       !!(protection & ARC4PY_FORK_WIPEONFORK));
}
