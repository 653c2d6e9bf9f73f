/*
 * A large fill into memory that faults, left by siglongjmp from the fault
 * handler (after the handler drew bytes itself): is the thread's state
 * usable again, its one-time key wiped?
 *
 * The fill's last page is PROT_NONE, so the core faults inside the held
 * fill; the SIGSEGV handler draws 32 bytes (nested in the fill: they must
 * come from the OS, a getrandom call this program counts through its own
 * getrandom()) and jumps back.  Then: stir() succeeds, 100 draws of 2000
 * bytes come from the buffer (no getrandom call), the state is not busy
 * and its one-time key is zero, and the signal mask is the one saved by
 * sigsetjmp.  Each case ROUNDS times, the handler on the thread's stack
 * and on an alternate signal stack.
 *
 * Verdict (tests/c/verdict.h) facts: "escapes", "recovered" (escapes after
 * which every check held), "nested_from_os" (handler draws that called
 * getrandom).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rng_hot_path.h"
#include "verdict.h"

#define ROUNDS 20
#define FILL (256u * 1024)
#define PAGE 4096u

static long getrandom_calls;

/* The generator's getrandom() calls land here: counted, then the kernel's. */
ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
    __atomic_fetch_add(&getrandom_calls, 1, __ATOMIC_RELAXED);
    return syscall(SYS_getrandom, buf, len, flags);
}

static sigjmp_buf env;
static volatile int nested_err, nested_from_os;

static void on_fault(int sig)
{
    uint8_t mine[32];
    long before = getrandom_calls;

    (void)sig;
    nested_err = arc4py_rng_buf(mine, sizeof mine);
    nested_from_os += getrandom_calls > before;
    siglongjmp(env, 1);
}

static int all_zero(const void *p, size_t n)
{
    const uint8_t *b = p;
    size_t i;

    for (i = 0; i < n; i++)
        if (b[i])
            return 0;
    return 1;
}

/* Signal by signal: the bytes of a sigset_t past the kernel's signals are
   not all written (under qemu-user they differ from call to call). */
static int same_signals(const sigset_t *a, const sigset_t *b)
{
    int sig;

    for (sig = 1; sig <= 64; sig++)
        if (sigismember(a, sig) != sigismember(b, sig))
            return 0;
    return 1;
}

int main(void)
{
    /* Static: live across siglongjmp. */
    static uint8_t small[2000], *region;
    static unsigned long escapes, recovered;
    static int alt_stack, round;
    struct sigaction sa;
    stack_t alt;

    region = mmap(NULL, FILL, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    alt.ss_sp = malloc(1 << 16);
    alt.ss_size = 1 << 16;
    alt.ss_flags = 0;
    if (region == MAP_FAILED || alt.ss_sp == NULL || sigaltstack(&alt, NULL) != 0 ||
        mprotect(region + FILL - PAGE, PAGE, PROT_NONE) != 0)
        return 2;
    if (arc4py_rng_buf(small, sizeof small) != 0)
        return 2;
    for (alt_stack = 0; alt_stack < 2; alt_stack++) {
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fault;
        sa.sa_flags = alt_stack ? SA_ONSTACK : 0;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGSEGV, &sa, NULL) != 0)
            return 2;
        for (round = 0; round < ROUNDS; round++) {
            sigset_t before, after;
            struct rng_state *s;
            long calls;
            int i, stir, draws_ok = 1;

            sigprocmask(SIG_BLOCK, NULL, &before);
            if (sigsetjmp(env, 1) == 0) {
                arc4py_rng_buf(region, FILL); /* faults in its last page */
                verdict_fail("the fill into a PROT_NONE page returned");
                break;
            }
            escapes++;
            sigprocmask(SIG_BLOCK, NULL, &after);
            stir = arc4py_rng_stir();
            calls = getrandom_calls;
            for (i = 0; i < 100; i++)
                draws_ok &= arc4py_rng_buf(small, sizeof small) == 0;
            s = rng_tls_state;
            if (nested_err == 0 && stir == 0 && draws_ok && getrandom_calls == calls &&
                s != NULL && !s->busy && all_zero(&s->direct, sizeof s->direct) &&
                same_signals(&before, &after))
                recovered++;
            else if (recovered + 1 == escapes)
                verdict_detail("%s stack, round %d: handler's draw %d, stir %d, "
                               "%ld getrandom calls in 100 draws, busy %d, "
                               "one-time key %s", alt_stack ? "alternate" : "own",
                               round, nested_err, stir, getrandom_calls - calls,
                               s ? s->busy : -1,
                               s && all_zero(&s->direct, sizeof s->direct)
                               ? "zero" : "live");
        }
    }
    verdict_check(recovered == escapes && escapes == 2 * ROUNDS, "after every "
                  "escape from a faulting fill the state recovered (%lu of %lu)",
                  recovered, escapes);
    verdict_check(nested_from_os == (int)escapes, "every draw in the fault "
                  "handler came from the OS (%d of %lu)", nested_from_os, escapes);
    return verdict_end("\"escapes\": %lu, \"recovered\": %lu, \"nested_from_os\": %d",
                       escapes, recovered, nested_from_os);
}
