/*
 * The platform layer's POSIX half (Linux, FreeBSD, macOS): where each
 * thread's generator state lives and how it dies.  Its own mmap()ed pages
 * (locked where RLIMIT_MEMLOCK allows, protected as the OS file grants), a
 * registry of live states for the fork handler, and a pthread key whose
 * destructor wipes the state at thread exit.  Compiles to nothing on
 * Windows.
 */
#ifndef _WIN32
#define _GNU_SOURCE 1
#include "rng_platform.h"
#include "rng_platform_posix.h"
#include "rng_wipe.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif

/* A live state and what was granted for its pages.  Kept outside the wiped
   pages on purpose: a forked child must still find and unmap them. */
struct state_node {
    void *pages;
    size_t bytes;
    void *vm_mix;            /* the thread's VM-clone mix state */
    unsigned protections;    /* ARC4PY_FORK_* granted to this state */
    int locked;              /* mlock() took its pages */
    struct state_node *next;
};

RNG_TLS struct rng_state *rng_tls_state;
/* Plain TLS, not the wiped pages, so it survives a fork in the thread that
   forked. */
static RNG_TLS void *tls_vm_mix;
unsigned long rng_fork_generation;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_key_t state_key;
static int init_error;
static int have_atfork;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct state_node *registry;

static size_t page_round(size_t n)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t pg = page > 0 ? (size_t)page : 4096;

    return (n + pg - 1) / pg * pg;
}

static void free_node(struct state_node *n)
{
    rng_wipe(n->pages, n->bytes);
    munmap(n->pages, n->bytes);
    rng_os_vm_mix_free(n->vm_mix);
    free(n);
}

/* ---- fork -------------------------------------------------------------- */

/*
 * The fork window: from our prepare handler to our parent or child handler.
 * Handlers registered before ours (a library loaded before arc4py's first
 * draw) run their prepare after ours and their parent and child handlers
 * before ours: a draw there would hand the same buffered bytes to parent
 * and child where the child's pages are not zeroed.  So the forking
 * thread's state is hidden for the window (the hot path sees none) and
 * every draw in it goes to the OS (rng_platform_fork_window()).
 */
static RNG_TLS struct rng_state *tls_window_state;
static RNG_TLS int tls_in_window;

static void window_open(void)
{
    tls_window_state = rng_tls_state;
    rng_tls_state = NULL;
    tls_in_window = 1;
}

static void window_close(void)
{
    rng_tls_state = tls_window_state;
    tls_window_state = NULL;
    tls_in_window = 0;
}

int rng_platform_fork_window(void) { return tls_in_window; }

static void atfork_prepare(void)
{
    window_open();
    pthread_mutex_lock(&registry_lock);
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&registry_lock);
    window_close();
}

/*
 * In the child only the forking thread lives on.  Every inherited state is
 * wiped (a second line of defence where the OS cannot zero the pages); the
 * other threads' states are unmapped, since nothing can reach them again.
 */
static void atfork_child(void)
{
    struct state_node *n = registry, *next, *mine = NULL;

    window_close();
    rng_increment_ulong(&rng_fork_generation);
    while (n) {
        next = n->next;
        if (n->pages == (void *)rng_tls_state) {
            rng_wipe(n->pages, n->bytes);
            mine = n;
        } else {
            free_node(n);
        }
        n = next;
    }
    registry = mine;
    if (mine)
        mine->next = NULL;
    pthread_mutex_init(&registry_lock, NULL);
}

/* ---- thread exit ------------------------------------------------------- */

static void state_destructor(void *pages)
{
    struct state_node **pp, *n, *found = NULL;

    pthread_mutex_lock(&registry_lock);
    for (pp = &registry; (n = *pp) != NULL; pp = &n->next) {
        if (n->pages == pages) {
            *pp = n->next;
            found = n;
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    /* A later destructor that draws makes a new state, never this one. */
    if ((void *)rng_tls_state == pages) {
        rng_tls_state = NULL;
        tls_vm_mix = NULL;
    }
    if (found)
        free_node(found);
}

static void init_globals(void)
{
    rng_os_vm_mix_init();
    if (pthread_key_create(&state_key, state_destructor) != 0) {
        init_error = EAGAIN;
        return;
    }
    have_atfork = pthread_atfork(atfork_prepare, atfork_parent, atfork_child) == 0;
}

/* ---- a new thread's state ---------------------------------------------- */

int rng_platform_state_new(size_t size, struct rng_state **out)
{
    struct state_node *node;
    size_t bytes = page_round(size);
    void *p;

    pthread_once(&init_once, init_globals);
    if (init_error)
        return init_error;
    if (tls_in_window)
        return EAGAIN; /* the registry's lock is ours until the fork is done */
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0);
    if (p == MAP_FAILED)
        return ENOMEM; /* whatever errno says, the caller needs memory */
    node = malloc(sizeof *node);
    if (node == NULL || pthread_setspecific(state_key, p) != 0) {
        free(node);
        munmap(p, bytes);
        return ENOMEM;
    }
    node->pages = p;
    node->bytes = bytes;
    node->protections = rng_os_protect_pages(p, bytes);
    /* Out of swap where RLIMIT_MEMLOCK allows (often 64 KiB: four 16 KiB
       states); never fatal. */
    node->locked = mlock(p, bytes) == 0;
    node->vm_mix = rng_os_vm_mix_new();
    if (node->vm_mix != NULL)
        node->protections |= ARC4PY_FORK_VDSO;
    pthread_mutex_lock(&registry_lock);
    node->next = registry;
    registry = node;
    pthread_mutex_unlock(&registry_lock);
    tls_vm_mix = node->vm_mix;
    rng_tls_state = p;
    *out = p;
    return 0;
}

int rng_platform_vm_mix(uint8_t *out, size_t n)
{
    return tls_vm_mix == NULL ? ENOTSUP : rng_os_vm_mix_read(tls_vm_mix, out, n);
}

/*
 * Signals held for the read: glibc >= 2.41 answers getrandom() with
 * ChaCha20 in user space (the vDSO, Linux >= 6.11), and a signal handled
 * meanwhile would save its key, working state and the seed in a frame on
 * this thread's stack.  Non-blocking first, so that a wait for the
 * kernel's pool (early boot only, a system call) is never made with
 * signals held.
 */
int rng_platform_entropy(uint8_t *p, size_t n)
{
    struct rng_signal_mask mask;
    int err;

    rng_platform_signals_hold(&mask);
    err = rng_os_entropy(&p, &n, 1);
    rng_platform_signals_release(&mask);
    if (err == EAGAIN)
        err = rng_os_entropy(&p, &n, 0);
    return err;
}

RNG_STATIC_ASSERT(sizeof(sigset_t) <= sizeof(struct rng_signal_mask),
                  "struct rng_signal_mask holds a sigset_t");

void rng_platform_signals_hold(struct rng_signal_mask *saved)
{
    /* A fault held off would kill the process, not wait. */
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
    sigset_t held;
    size_t i;

    sigfillset(&held);
    for (i = 0; i < sizeof faults / sizeof faults[0]; i++)
        sigdelset(&held, faults[i]);
    pthread_sigmask(SIG_BLOCK, &held, (sigset_t *)(void *)saved->bits);
}

void rng_platform_signals_release(const struct rng_signal_mask *saved)
{
    pthread_sigmask(SIG_SETMASK, (const sigset_t *)(const void *)saved->bits, NULL);
}

int rng_platform_on_signal_stack(void)
{
    stack_t ss;

    return sigaltstack(NULL, &ss) != 0 || (ss.ss_flags & SS_ONSTACK) != 0;
}

/* A bit is reported only if no live state lacks it. */
unsigned rng_platform_protections(void)
{
    struct state_node *n;
    unsigned all = ARC4PY_FORK_WIPEONFORK | ARC4PY_DONTDUMP | ARC4PY_FORK_VDSO;

    pthread_mutex_lock(&registry_lock);
    for (n = registry; n != NULL; n = n->next)
        all &= n->protections;
    pthread_mutex_unlock(&registry_lock);
    if (!rng_os_vm_mix_healthy())
        all &= ~(unsigned)ARC4PY_FORK_VDSO;
    return all | (have_atfork ? ARC4PY_FORK_ATFORK : 0);
}

void rng_platform_facts(const char **entropy_source, const char **state_lock,
                        const char **exit_wipe)
{
    struct state_node *n;
    int all_locked = 1;

    pthread_mutex_lock(&registry_lock);
    for (n = registry; n != NULL; n = n->next)
        all_locked &= n->locked;
    pthread_mutex_unlock(&registry_lock);
    *entropy_source = rng_os_entropy_source();
    *state_lock = all_locked ? "mlock" : NULL;
    *exit_wipe = "pthread key destructor";
}
#endif
