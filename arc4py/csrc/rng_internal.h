/*
 * What the generator's files share (internal, not installed):
 *   rng.c               the algorithm: reseed, refill, take, direct fills
 *   rng_thread_state.c  per-thread state pages, registry, fork, thread exit
 *   rng_entropy.c       the OS entropy source and the vDSO getrandom
 *   rng_bitgen.c        numpy's bitgen_t adapters
 *   rng_test_hooks.c    test-only views of the state
 *
 * Every internal function that can fail returns 0 or a positive errno value.
 */
#ifndef ARC4PY_RNG_INTERNAL_H
#define ARC4PY_RNG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arc4py/chacha20.h"
#include "arc4py/generator.h"

#if defined(__GNUC__) || defined(__clang__)
#define RNG_LIKELY(x) __builtin_expect(!!(x), 1)
#define RNG_TLS_INITIAL_EXEC __attribute__((tls_model("initial-exec")))
/* Slow paths stay out of line, so the hot paths need no stack frame. */
#define RNG_COLD_NOINLINE __attribute__((cold, noinline))
#else
#define RNG_LIKELY(x) (x)
#define RNG_TLS_INITIAL_EXEC
#define RNG_COLD_NOINLINE
#endif

/* Bytes of each refill that become the next key (32) and nonce (8). */
#define RNG_REKEY_BYTES 40
/* vDSO getrandom bytes mixed into the key of every refill and chunk. */
#define RNG_VDSO_MIX_BYTES 32

/* One thread's generator; lives alone in its own mmap()ed pages. */
struct rng_state {
    uint32_t chacha[16];      /* key and nonce for the next refill */
    size_t left;              /* unread bytes at the end of buf */
    uint64_t since_seed;      /* bytes produced since the last reseed */
    uint64_t reseed_after;    /* reseed once since_seed reaches this */
    unsigned long fork_gen;   /* rng_fork_generation when last seeded */
    unsigned long stir_gen;   /* rng_stir_generation when last seeded */
    int seeded;
    uint8_t buf[ARC4PY_RNG_BUFFER_BYTES];
};
/* Four 4 KiB pages per thread (generator.h sizes the buffer for it). */
_Static_assert(sizeof(struct rng_state) <= 4 * 4096,
               "a thread's state outgrew four pages");

/* The calling thread's state (NULL until its first draw) and its vDSO
   getrandom state (NULL without one).  Plain TLS, not the wiped pages, so
   the vDSO pointer survives a fork in the thread that forked. */
extern RNG_TLS_INITIAL_EXEC __thread struct rng_state *rng_tls_state;
extern RNG_TLS_INITIAL_EXEC __thread void *rng_tls_vdso;

/* Bumped in a forked child (atfork) and by arc4py_rng_stir_all(). */
extern unsigned long rng_fork_generation;
extern unsigned long rng_stir_generation;

extern const arc4py_chacha20_core *rng_active_core;

/* rng.c */
void rng_wipe(void *p, size_t n);
void rng_stack_scrub(void);
int rng_buf_slow(void *dest, size_t n);

/* rng_thread_state.c: the caller's state, created (unseeded) if needed. */
int rng_state_get(struct rng_state **out);

/* rng_entropy.c */
int rng_os_entropy(uint8_t *p, size_t n);
void rng_vdso_init(void);          /* once, before any thread's state */
void *rng_vdso_state_new(void);    /* NULL without a vDSO getrandom */
void rng_vdso_state_free(void *opaque);
int rng_vdso_read(void *opaque, uint8_t *out, size_t n);
int rng_vdso_is_healthy(void);    /* found, and no call has failed */

/* rng_test_hooks.c (see there); -1 in a build without the hooks. */
int arc4py_rng_debug_buffer(uint8_t *out, size_t out_len, size_t *left);
long arc4py_rng_debug_reseeds(void);
extern const int arc4py_rng_test_hooks;
#ifdef ARC4PY_TEST_HOOKS
extern long rng_reseed_count;
extern long rng_vdso_calls;   /* vDSO getrandom calls (tests/c/vdso_mix.c) */
#endif

/*
 * Hand n buffered bytes out: copy them to dst and zero them at src in one
 * pass.  For the sizes of the hot path (16..128 bytes) two library calls,
 * memcpy then memset, cost more than the work itself; a constant n (the
 * integer draws) leaves it to the compiler, which inlines both.
 */
static inline void rng_move_out(uint8_t *dst, uint8_t *src, size_t n)
{
#if defined(__GNUC__) || defined(__clang__)
    typedef uint8_t v16 __attribute__((vector_size(16), may_alias, aligned(1)));
    typedef uint64_t u64u __attribute__((may_alias, aligned(1)));
    size_t i = 0;

    if (__builtin_constant_p(n)) {
        memcpy(dst, src, n);
        memset(src, 0, n);
        return;
    }
    for (; i + 16 <= n; i += 16) {
        *(v16 *)(dst + i) = *(const v16 *)(src + i);
        *(v16 *)(src + i) = (v16){0};
    }
    if (i + 8 <= n) {
        *(u64u *)(dst + i) = *(const u64u *)(src + i);
        *(u64u *)(src + i) = 0;
        i += 8;
    }
    for (; i < n; i++) {
        dst[i] = src[i];
        src[i] = 0;
    }
#else
    memcpy(dst, src, n);
    memset(src, 0, n);
#endif
}

/*
 * The hot path, shared by every entry point: n buffered bytes, wiped as
 * they leave.  Inlined with a constant n it is a few loads, a store of
 * zeros and a subtraction.  Returns 0 when the buffer cannot serve the
 * request (no state yet, too few bytes left, a stir_all since the state was
 * seeded) and the caller must take the slow path.
 */
static inline int rng_take_buffered(void *out, size_t n)
{
    struct rng_state *s = rng_tls_state;

    /* Relaxed is enough: a stir_all that happens-before this call is seen
       (read-write coherence); the slow path does the ordered work. */
    if (RNG_LIKELY(s != NULL && n <= s->left &&
                   s->stir_gen == __atomic_load_n(&rng_stir_generation,
                                                  __ATOMIC_RELAXED))) {
        uint8_t *src = s->buf + ARC4PY_RNG_BUFFER_BYTES - s->left;
        rng_move_out((uint8_t *)out, src, n);
        s->left -= n;
        return 1;
    }
    return 0;
}

#endif
