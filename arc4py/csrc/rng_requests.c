/*
 * Who may use a thread's state, and when a request must be drawn again:
 * the slow path of every draw (rng_buf_slow), stir and stir_all.  The
 * state's bytes themselves: rng_keystream.c.
 *
 * Invariants (every function below keeps them):
 *  - busy is set while a call of the thread is inside the generator; a
 *    call nested in it (a signal handler's), or made inside fork() (an
 *    atfork handler's), never touches the buffer or the key: it takes its
 *    bytes from the OS.  So left only ever drops by what was copied out,
 *    and no bytes are handed out twice.  A slow call escaped by a jump
 *    leaves a stale busy, recognised by its frame (stale_busy).
 *  - Each request ends with one check (request_intact), as the vDSO
 *    getrandom's: if a fork or a stir_all came since it began, or its
 *    pages were zeroed under it (a fork from a signal handler: busy reads
 *    0), the whole request is drawn again from a key seeded after that
 *    event.  So no output returned after stir_all() has returned comes
 *    from a key seeded before it, and a child never finishes the parent's
 *    keystream.
 *  - On any failure the caller's output is wiped (fail closed): it never
 *    holds partial or unseeded output.
 */
#include "rng_internal.h"

#include <errno.h>

/* Generations a request began under (see request_intact); a local of the
   caller, so its address also places the caller's frame (stale_busy). */
struct rng_request {
    unsigned long fork_gen, stir_gen;
};

static void request_begin(struct rng_state *s, struct rng_request *r)
{
    s->busy = 1;
    s->busy_frame = (uintptr_t)r;
    RNG_SIGNAL_FENCE();
    r->fork_gen = rng_load_ulong(&rng_fork_generation);
    r->stir_gen = rng_load_ulong(&rng_stir_generation);
}

/*
 * The one check at the end of a call that used the state, as the vDSO
 * getrandom's at the end of each call; 0 if the request must be drawn
 * again, whole, from a key seeded after the event.  The state's pages were
 * zeroed under the call (a fork from a signal handler that interrupted it:
 * wipe-on-fork or the atfork handler zeroed busy in the child), or a fork
 * happened: what the call made since may be the parent's keystream, or a
 * key the parent also saw, so the state is wiped (the next use reseeds).
 * Or a stir_all began since request_begin: some output may come from a
 * key it retired.  Clears busy.
 */
static int request_intact(struct rng_state *s, const struct rng_request *r)
{
    int intact = 0;

    RNG_SIGNAL_FENCE();
    if (s->busy != 1 || r->fork_gen != rng_load_ulong(&rng_fork_generation))
        rng_wipe(s, sizeof *s);
    else
        intact = r->stir_gen == rng_load_ulong(&rng_stir_generation);
    RNG_SIGNAL_FENCE();
    s->busy_frame = 0;
    s->busy = 0;
    return intact;
}

/* A busy state whose slow call is gone (a jump out of a fault handler):
   a nested call runs below its frame or on a signal stack; this one (its
   local r) is at or above it, on none.  Its buffer may be half handed out,
   its one-time key live: wiped, the next use reseeds.  (frame: r's address) */
static int stale_busy(struct rng_state *s, uintptr_t frame)
{
    if (s->busy_frame == 0 || frame < s->busy_frame ||
        rng_platform_on_signal_stack())
        return 0;
    rng_wipe(s, sizeof *s);
    return 1;
}

/* Restarts (a fork or a stir_all in the call) before EAGAIN: stir_all()
   calls more often than a fill lasts delay it at most this many passes. */
#define RNG_RESTARTS_MAX 8

RNG_COLD_NOINLINE int rng_buf_slow(void *dest, size_t n)
{
    struct rng_state *s = NULL;
    struct rng_request r;
    int err = rng_platform_fork_window() ? 0 : rng_state_get(&s);

    if (err == 0 && (s == NULL || (s->busy && !stale_busy(s, (uintptr_t)&r)))) {
        /* Nested in a call of this thread (a signal handler), or inside a
           fork (another library's atfork handler): the buffer and key are
           not this call's to use, so straight from the OS. */
        err = rng_platform_entropy(dest, n);
    } else if (err == 0) {
        int restarts = 0, intact;

        do {
            request_begin(s, &r);
            err = n >= ARC4PY_RNG_DIRECT_BYTES ? rng_take_direct(s, dest, n)
                                               : rng_take_refilling(s, dest, n);
            intact = request_intact(s, &r);
        } while (err == 0 && !intact && ++restarts <= RNG_RESTARTS_MAX);
        if (err == 0 && !intact)
            err = EAGAIN;
    }
    if (err)
        rng_wipe(dest, n); /* fail closed: no partial output survives */
    return err;
}

int arc4py_rng_stir(void)
{
    struct rng_state *s;
    struct rng_request r;
    int err = rng_platform_fork_window() ? EBUSY : rng_state_get(&s);

    if (err)
        return err;
    if (s->busy && !stale_busy(s, (uintptr_t)&r))
        return EBUSY; /* nested in a draw of this thread: not its state to reseed */
    request_begin(s, &r);
    err = rng_reseed(s);
    (void)request_intact(s, &r); /* wiped under the reseed: the next draw reseeds */
    return err;
}

int arc4py_rng_stir_all(void)
{
    /* First: every state seeded before (and its buffer) is refused after. */
    rng_increment_ulong(&rng_stir_generation);
    return arc4py_rng_stir();
}

/* The protections every live state has (the caller's is made first). */
unsigned arc4py_rng_fork_protection(void)
{
    struct rng_state *s;

    return rng_state_get(&s) == 0 ? rng_platform_protections() : 0;
}
