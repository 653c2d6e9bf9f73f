/*
 * The generator's fast path, for inlining (internal, not installed): a
 * thread's state, how to reach it, and rng_take(), which serves a request
 * from the thread's buffer or calls the slow path.
 *
 * Included by the generator's own files (through rng_internal.h) and by the
 * binding layer's hottest C (arc4py/cbind/: int_draws.h, module_calls.c,
 * capi.c, and capi_avx512.c through rng_hot_path_avx512.h), which inline
 * rng_take() rather than call arc4py_rng_buf(): one call less per draw, in
 * the same shared object as the generator.  Everything else stays behind
 * generator.h.
 */
#ifndef ARC4PY_RNG_HOT_PATH_H
#define ARC4PY_RNG_HOT_PATH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "generator.h"
#include "compiler_compat.h"

/* One thread's generator; lives alone in its own mmap()ed pages. */
struct rng_state {
    uint32_t chacha[16];      /* key and nonce for the next refill */
    size_t left;              /* unread bytes at the end of buf */
    /* Nonzero while a call of this thread is inside the generator: a call
       nested in it (a signal handler's) must not touch the buffer. */
    int busy;
    uintptr_t busy_frame;     /* a slow call's frame while busy (0: the hot path's) */
    uint64_t since_seed;      /* bytes produced since the last reseed */
    uint64_t reseed_after;    /* reseed once since_seed reaches this */
    unsigned long fork_gen;   /* rng_fork_generation when last seeded */
    unsigned long stir_gen;   /* rng_stir_generation when last seeded */
    int seeded;
    /* OS bytes on their way into a key (a seed, the VM-clone mix), read
       here rather than onto the stack; zero between uses. */
    uint8_t os_bytes[44];
    /* A large fill's one-time key and ChaCha20 state, zero between fills. */
    struct {
        uint32_t chacha[16];
        uint8_t key[40];
        uint8_t tail[64];
    } direct;
    uint8_t buf[ARC4PY_RNG_BUFFER_BYTES];
};
/* Four 4 KiB pages per thread (generator.h sizes the buffer for it). */
RNG_STATIC_ASSERT(sizeof(struct rng_state) <= 4 * 4096,
                  "a thread's state outgrew four pages");

/* The calling thread's state: NULL until its first draw.  Owned and
   written by the platform file (rng_platform.h). */
extern RNG_TLS struct rng_state *rng_tls_state;

/* Bumped by arc4py_rng_stir_all() (rng_requests.c): a state seeded
   before refuses its buffer. */
extern unsigned long rng_stir_generation;

/* rng_requests.c: everything rng_take_buffered() cannot serve; wipes dest on
   failure. */
int rng_buf_slow(void *dest, size_t n);

/* rng_draws.c: for callers that cannot report an error (numpy's bitgen_t, the C
   API's arc4random*): say on stderr what failed, inside what, and abort()
   rather than hand out numbers that are not random. */
RNG_NORETURN void rng_abort(int err, const char *inside);

/*
 * Hand n buffered bytes out: copy them to dst and zero them at src in one
 * pass.  For the sizes of the hot path (16..128 bytes) two library calls,
 * memcpy then memset, cost more than the work itself; a constant n (the
 * integer draws) leaves it to the compiler, which inlines both.
 *
 * A file compiled for a wider vector ISA defines RNG_MOVE_OUT_LINES(dst,
 * src, n) before including this header (rng_hot_path_avx512.h): it moves
 * the whole 64-byte lines and returns how many bytes that was; 16-byte
 * steps do the rest.
 */
static inline void rng_move_out(uint8_t *dst, uint8_t *src, size_t n)
{
#if defined(__GNUC__) || defined(__clang__)
    typedef uint8_t v16 __attribute__((vector_size(16), may_alias, aligned(1)));
    typedef uint64_t u64u __attribute__((may_alias, aligned(1)));
    typedef uint32_t u32u __attribute__((may_alias, aligned(1)));
    typedef uint16_t u16u __attribute__((may_alias, aligned(1)));
    size_t i = 0;

    if (__builtin_constant_p(n)) {
        memcpy(dst, src, n);
        memset(src, 0, n);
        return;
    }
#ifdef RNG_MOVE_OUT_LINES
    if (n >= 64)
        i = RNG_MOVE_OUT_LINES(dst, src, n);
#endif
    for (; i + 16 <= n; i += 16) {
        *(v16 *)(dst + i) = *(const v16 *)(src + i);
        *(v16 *)(src + i) = (v16){0};
    }
    /* The last 0..15 bytes in fixed steps (a loop here would be
       vectorised, with alias checks, for at most 15 bytes). */
    if (n & 8) {
        *(u64u *)(dst + i) = *(const u64u *)(src + i);
        *(u64u *)(src + i) = 0;
        i += 8;
    }
    if (n & 4) {
        *(u32u *)(dst + i) = *(const u32u *)(src + i);
        *(u32u *)(src + i) = 0;
        i += 4;
    }
    if (n & 2) {
        *(u16u *)(dst + i) = *(const u16u *)(src + i);
        *(u16u *)(src + i) = 0;
        i += 2;
    }
    if (n & 1) {
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
 * seeded, or a call of this thread already inside: a signal handler's) and
 * the caller must take the slow path.
 *
 * The guard: busy is set before left is read and cleared after it is
 * written.  A handler that runs before the set finds the state idle and
 * completes a whole draw (this call then reads the new left); one that runs
 * after it finds busy and leaves the buffer alone.  So no two calls hand
 * out the same bytes, and left only ever goes down by what was copied out.
 */
static RNG_ALWAYS_INLINE int rng_take_buffered(void *out, size_t n)
{
    struct rng_state *s = rng_tls_state;
    size_t left;
    int served = 0;

    if (RNG_UNLIKELY(s == NULL || s->busy))
        return 0;
    s->busy = 1;
    RNG_SIGNAL_FENCE();
    left = s->left;
    /* Relaxed is enough: a stir_all that happens-before this call is seen
       (read-write coherence); the slow path does the ordered work. */
    if (RNG_LIKELY(n <= left &&
                   s->stir_gen == rng_load_ulong_relaxed(&rng_stir_generation))) {
        rng_move_out((uint8_t *)out, s->buf + ARC4PY_RNG_BUFFER_BYTES - left, n);
        RNG_SIGNAL_FENCE();
        /* stir_gen reads 0 only if the pages were zeroed during the copy
           (a fork from a signal handler): then the slow path redraws. */
        if (RNG_LIKELY(s->stir_gen != 0)) {
            s->left = left - n;
            served = 1;
        }
    }
    RNG_SIGNAL_FENCE();
    s->busy = 0;
    return served;
}

/* n random bytes into out, as arc4py_rng_buf(): 0 or an errno value. */
static RNG_ALWAYS_INLINE int rng_take(void *out, size_t n)
{
    return RNG_LIKELY(rng_take_buffered(out, n)) ? 0 : rng_buf_slow(out, n);
}

#endif
