/*
 * What the generator's algorithm (rng_keystream.c, rng_requests.c) asks of the OS: the one small
 * interface every platform file implements.  The algorithm includes no OS
 * header; the platform files never call into the algorithm.
 *
 *   rng_platform_posix.c    POSIX threads: a thread's state pages, the
 *                           registry the fork handler walks, thread exit
 *     rng_platform_linux.c    Linux: getrandom, WIPEONFORK, DONTDUMP, vDSO
 *     rng_platform_bsd.c      FreeBSD and macOS: getentropy, INHERIT_ZERO,
 *                             NOCORE
 *   rng_platform_windows.c  Windows: ProcessPrng, VirtualAlloc, TLS exit
 *
 * Each file guards itself with the OS it is for and compiles to nothing
 * elsewhere, so one command that compiles every .c file of csrc/ builds
 * the generator on every target, and no list of OSes is kept here.  Built
 * for an OS no file is for, the link fails, naming the functions below
 * (on a POSIX OS, those of rng_platform_posix.h): hidden, so not even a
 * shared object may leave them to be found when it is loaded.  Functions
 * that can fail return 0 or a positive errno value.
 */
#ifndef ARC4PY_RNG_PLATFORM_H
#define ARC4PY_RNG_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#include "compiler_compat.h"

struct rng_state;

/* n bytes from the OS's CSPRNG, or an error and nothing promised in p. */
RNG_HIDDEN int rng_platform_entropy(uint8_t *p, size_t n);

/*
 * The calling thread's state: `bytes` of zeroed memory in pages of its
 * own, with every protection the OS grants (zeroed in a forked child, left
 * out of core dumps, locked), wiped and freed when the thread exits.  Also
 * stored in rng_tls_state (rng_hot_path.h), which only the platform writes.
 */
RNG_HIDDEN int rng_platform_state_new(size_t bytes, struct rng_state **out);

/* Bumped in a forked child (zero forever where the OS cannot fork).
   Written only by the platform; read with rng_load_ulong(). */
extern RNG_HIDDEN unsigned long rng_fork_generation;

/*
 * Nonzero while the calling thread is inside fork() between the atfork
 * handlers' prepare and parent/child (other libraries' handlers run there):
 * its state is hidden (rng_tls_state reads NULL) and a draw must take its
 * bytes from the OS.  Zero forever where the OS cannot fork.
 */
RNG_HIDDEN int rng_platform_fork_window(void);

/*
 * n bytes that change when the machine is cloned (a VM snapshot resumed
 * twice), for the calling thread: Linux's vDSO getrandom.  Nonzero when
 * the OS has no such source (the caller then mixes nothing).
 */
RNG_HIDDEN int rng_platform_vm_mix(uint8_t *out, size_t n);

/*
 * Asynchronous signals held off for the calling thread while a state is
 * keyed and a core runs: a handler run on the thread's own stack meanwhile
 * would leave the interrupted registers (key and working words) in its
 * frame there, for a forked child to read.  A signal sent meanwhile is
 * delivered at the release.  Faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGTRAP, SIGSYS) are never held.  Holds nest: each release restores
 * what its hold saved.  Nothing to hold where the OS has no signals.
 */
struct rng_signal_mask {
    uint64_t bits[16]; /* the OS's saved mask, opaque here */
};
RNG_HIDDEN void rng_platform_signals_hold(struct rng_signal_mask *saved);
RNG_HIDDEN void rng_platform_signals_release(const struct rng_signal_mask *saved);

/* Nonzero if the calling thread may be running on an alternate signal
   stack (or the OS cannot say). */
RNG_HIDDEN int rng_platform_on_signal_stack(void);

/* The protections a state's pages can have, as bits (what
   arc4py_rng_fork_protection() in generator.h reports). */
#define ARC4PY_FORK_WIPEONFORK 1 /* state pages zeroed in a child */
#define ARC4PY_FORK_ATFORK 2     /* pthread_atfork child handler */
#define ARC4PY_DONTDUMP 4        /* state pages left out of core dumps */
#define ARC4PY_FORK_VDSO 8       /* every refill mixes in vDSO getrandom */

/* ARC4PY_FORK_* bits every live state has (the caller's state exists). */
RNG_HIDDEN unsigned rng_platform_protections(void);

/* What arc4py_rng_os_facts() names (generator.h); the caller's state
   exists and has been seeded. */
RNG_HIDDEN void rng_platform_facts(const char **entropy_source,
                                   const char **state_lock,
                                   const char **exit_wipe);

#ifdef ARC4PY_TEST_HOOKS
/* Reads of the VM-clone mix source (tests/c/vdso_mix.c); Linux only. */
extern long rng_vm_mix_calls;
#endif

#endif
