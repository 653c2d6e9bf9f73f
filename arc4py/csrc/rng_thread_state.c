/*
 * Where each thread's generator state lives and how it dies: its own
 * mmap()ed pages (wiped in a forked child, left out of core dumps, locked
 * in memory where the limit allows), a registry of live states for the
 * fork handler, and a destructor that wipes the state at thread exit.
 */
#define _GNU_SOURCE 1
#include "rng_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* A live state and what was granted for its pages.  Kept outside the wiped
   pages on purpose: a forked child must still find and unmap them. */
struct state_node {
    struct rng_state *state;
    void *vdso;              /* the thread's vDSO getrandom state */
    unsigned protections;    /* ARC4PY_FORK_* granted to this state */
    struct state_node *next;
};

RNG_TLS_INITIAL_EXEC __thread struct rng_state *rng_tls_state;
RNG_TLS_INITIAL_EXEC __thread void *rng_tls_vdso;

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

static void free_state(struct rng_state *s, void *vdso)
{
    rng_wipe(s, sizeof *s);
    munmap(s, page_round(sizeof *s));
    rng_vdso_state_free(vdso);
}

/* ---- fork -------------------------------------------------------------- */

static void atfork_prepare(void) { pthread_mutex_lock(&registry_lock); }
static void atfork_parent(void) { pthread_mutex_unlock(&registry_lock); }

/*
 * In the child only the forking thread lives on.  Every inherited state is
 * wiped (a second line of defence where MADV_WIPEONFORK is missing); the
 * other threads' states are unmapped, since nothing can reach them again.
 */
static void atfork_child(void)
{
    struct state_node *n = registry, *next, *mine = NULL;

    __atomic_fetch_add(&rng_fork_generation, 1, __ATOMIC_SEQ_CST);
    while (n) {
        next = n->next;
        if (n->state == rng_tls_state) {
            rng_wipe(n->state, sizeof *n->state);
            mine = n;
        } else {
            free_state(n->state, n->vdso);
            free(n);
        }
        n = next;
    }
    registry = mine;
    if (mine)
        mine->next = NULL;
    pthread_mutex_init(&registry_lock, NULL);
}

/* ---- thread exit ------------------------------------------------------- */

static void state_destructor(void *arg)
{
    struct rng_state *s = arg;
    struct state_node **pp, *n;
    void *vdso = NULL;

    pthread_mutex_lock(&registry_lock);
    for (pp = &registry; (n = *pp) != NULL; pp = &n->next) {
        if (n->state == s) {
            *pp = n->next;
            vdso = n->vdso;
            free(n);
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    if (rng_tls_state == s) {
        rng_tls_state = NULL;
        rng_tls_vdso = NULL;
    }
    free_state(s, vdso);
}

static void init_globals(void)
{
    size_t count;

    if (rng_active_core == NULL) /* fastest core, unless the binding chose */
        rng_active_core = &arc4py_chacha20_cores(&count)[0];
    rng_vdso_init();
    if (pthread_key_create(&state_key, state_destructor) != 0) {
        init_error = EAGAIN;
        return;
    }
    have_atfork = pthread_atfork(atfork_prepare, atfork_parent, atfork_child) == 0;
}

/* ---- a new thread's state ---------------------------------------------- */

/* Ask for each protection of the pages; report those granted. */
static unsigned protect_pages(void *p, size_t bytes)
{
    unsigned granted = 0;

#ifdef MADV_WIPEONFORK
    /* A child, even one made by a raw fork syscall, reads zeros here. */
    if (madvise(p, bytes, MADV_WIPEONFORK) == 0)
        granted |= ARC4PY_FORK_WIPEONFORK;
#endif
#ifdef MADV_DONTDUMP
    if (madvise(p, bytes, MADV_DONTDUMP) == 0)
        granted |= ARC4PY_DONTDUMP;
#endif
    /* Kept out of swap where RLIMIT_MEMLOCK allows; never fatal, and not
       reported: the limit is often low (64 KiB on some systems, four
       16 KiB states). */
    (void)mlock(p, bytes);
    return granted;
}

static int new_state(struct rng_state **out)
{
    struct rng_state *s;
    struct state_node *node;
    size_t bytes = page_round(sizeof *s);

    s = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0);
    if (s == MAP_FAILED)
        return ENOMEM; /* whatever errno says, the caller needs memory */
    node = malloc(sizeof *node);
    if (node == NULL || pthread_setspecific(state_key, s) != 0) {
        free(node);
        munmap(s, bytes);
        return ENOMEM;
    }
    node->state = s;
    node->protections = protect_pages(s, bytes);
    node->vdso = rng_vdso_state_new();
    if (node->vdso != NULL)
        node->protections |= ARC4PY_FORK_VDSO;
    pthread_mutex_lock(&registry_lock);
    node->next = registry;
    registry = node;
    pthread_mutex_unlock(&registry_lock);
    rng_tls_vdso = node->vdso;
    rng_tls_state = s;
    *out = s;
    return 0;
}

int rng_state_get(struct rng_state **out)
{
    if ((*out = rng_tls_state) != NULL)
        return 0;
    pthread_once(&init_once, init_globals);
    if (init_error)
        return init_error;
    return new_state(out);
}

/*
 * The protections every live state has: a bit is reported only if no live
 * state lacks it.  The caller's state is made first, so the answer is about
 * real pages.
 */
unsigned arc4py_rng_fork_protection(void)
{
    struct rng_state *s;
    struct state_node *n;
    unsigned all = ARC4PY_FORK_WIPEONFORK | ARC4PY_DONTDUMP | ARC4PY_FORK_VDSO;

    if (rng_state_get(&s) != 0)
        return 0;
    pthread_mutex_lock(&registry_lock);
    for (n = registry; n != NULL; n = n->next)
        all &= n->protections;
    pthread_mutex_unlock(&registry_lock);
    if (!rng_vdso_is_healthy())
        all &= ~(unsigned)ARC4PY_FORK_VDSO;
    return all | (have_atfork ? ARC4PY_FORK_ATFORK : 0);
}
