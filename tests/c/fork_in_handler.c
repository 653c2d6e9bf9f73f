/*
 * A raw fork (the clone system call: no atfork handler runs) from a signal
 * handler that interrupted a large fill, as a VM snapshot taken mid-fill
 * and resumed twice would be: the parent and the child each finish the
 * interrupted fill, and no 64-byte block of it may be the same in both.
 * (The child's state pages read as zero after the fork, MADV_WIPEONFORK;
 * the generator notices that under the running call and redraws the whole
 * request from a fresh seed, rather than finish the parent's keystream or
 * key from zeros.)
 *
 * The verdict (tests/c/verdict.h) is skip when the timer never fired inside
 * a fill; its facts: "forked" (0 or 1), "same_blocks".  Linux only.
 */
#define _GNU_SOURCE 1
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "generator.h"
#include "pipe_io.h"
#include "verdict.h"

#define FILL (4u << 20)
#define FILLS 8

static uint8_t *slots[FILLS];
static volatile sig_atomic_t in_fill = -1, forked_during = -1;
static volatile pid_t child_pid = -1;

static void on_alarm(int sig)
{
    long pid;

    (void)sig;
    if (forked_during >= 0 || in_fill < 0)
        return;
    forked_during = in_fill;
    pid = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
    child_pid = (pid_t)pid; /* 0 in the child */
}

int main(void)
{
    struct sigaction sa;
    struct itimerval every = {{0, 200}, {0, 200}}, off = {{0, 0}, {0, 0}};
    int fds[2], i, status;
    uint8_t *theirs;
    size_t same = 0, b;
    uint8_t warm[16];

    for (i = 0; i < FILLS; i++)
        if ((slots[i] = calloc(1, FILL)) == NULL)
            return 2;
    if ((theirs = malloc(FILL)) == NULL || pipe(fds) != 0 ||
        arc4py_rng_buf(warm, sizeof warm) != 0)
        return 2;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    setitimer(ITIMER_REAL, &every, NULL);
    for (i = 0; i < FILLS; i++) {
        in_fill = i;
        if (arc4py_rng_buf(slots[i], FILL) != 0)
            return 2;
        in_fill = -1;
        if (forked_during >= 0)
            break;
    }
    setitimer(ITIMER_REAL, &off, NULL);
    if (forked_during < 0) {
        return verdict_skip("the timer never fired inside a fill",
                            "\"forked\": 0, \"same_blocks\": 0");
    }
    if (child_pid == 0) { /* the child: send its copy of the fill */
        close(fds[0]);
        _exit(write_all(fds[1], slots[forked_during], FILL) != 0);
    }
    if (child_pid < 0)
        return 2;
    close(fds[1]);
    if (read_all(fds[0], theirs, FILL) != 0)
        return 2;
    waitpid(child_pid, &status, 0);
    for (b = 0; b < FILL; b += 64)
        same += memcmp(slots[forked_during] + b, theirs + b, 64) == 0;
    verdict_check(same == 0, "the fill a raw fork interrupted: %lu of %lu "
                  "blocks the same in parent and child", LU(same), LU(FILL / 64));
    return verdict_end("\"forked\": 1, \"same_blocks\": %lu", LU(same));
}
