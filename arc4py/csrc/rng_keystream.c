/*
 * How a thread's state makes its bytes: one ChaCha20 state per OS thread.
 *
 * Each refill runs the selected core over the thread's 15 KiB buffer and at
 * once turns the first 40 bytes of fresh keystream into the next key and
 * nonce (fast key erasure); every byte handed out is wiped from the buffer.
 * Large requests are generated straight into the caller's memory under a
 * one-time key drawn from the buffer.  Who may use a state, and when a
 * request is drawn again: rng_requests.c.
 *
 * Invariants (every function below keeps them):
 *  - buf[0 .. BUFFER - left) is zero: the rekey bytes and every byte handed
 *    out are wiped as they leave, so the state cannot reproduce past output.
 *  - since_seed <= reseed_after <= ARC4PY_RNG_RESEED_BYTES: refills and
 *    direct chunks stop at the reseed point and reseed before going on.
 *  - Every use of the buffer or the key first checks seeded and the
 *    generations (is_current); a zeroed state fails the check, so it is
 *    reseeded before it gives output.  After a fork the child's states
 *    have left == 0 and seeded == 0 (their pages read as zero, by
 *    MADV_WIPEONFORK or the atfork handler), and after
 *    arc4py_rng_stir_all() every other thread's stir_gen is stale: either
 *    way the next use reseeds, from scratch in a child.
 *  - The generator's C puts no key, nonce or seed word in a stack slot: a
 *    state is keyed in place (key_from, mix_into), a word at a time, from
 *    bytes in its own pages (the buffer's first 40, the one-time key, the
 *    OS's bytes read into os_bytes), and the registers that carried them,
 *    or a core's input, are zeroed before anything can push them.  So a
 *    fork in another thread, at any instant, leaves the child none of them
 *    (tests/c/fork_census.c).  The registers are zeroed on x86-64 and aarch64
 *    with GCC or Clang (not with MSVC: Windows has no fork).
 *  - No key whose output was or will be handed out stays in memory a
 *    forked child can read: the cores keep no copy of their input outside
 *    the state's pages (wiped in a child), and the stack a core spilled
 *    to is scrubbed after each refill and each large fill.
 *  - Asynchronous signals are held off for the thread while a state is
 *    keyed, a core runs or the OS writes a seed: a handler on the thread's
 *    stack would leave the registers, key or working words, in its frame
 *    there (tests/c/signal_frames.c).
 *  - Large fills run in chunks of ARC4PY_RNG_DIRECT_CHUNK_BYTES, each under
 *    a new one-time key kept in the state's pages, with the reseed point
 *    and the generations checked and the VM-clone source mixed in per
 *    chunk.
 *  - A state that could not reseed gives no output until a reseed succeeds.
 */
#include "rng_internal.h"

#include <errno.h>

/* From 1: a state zeroed under a running call (a raw fork from a signal
   handler) has stir_gen 0, which the hot path refuses.  Bumped by
   arc4py_rng_stir_all(). */
unsigned long rng_stir_generation = 1;
#ifdef ARC4PY_TEST_HOOKS
long rng_reseed_count;
void (*arc4py_rng_debug_log)(int event, const void *p, size_t n);
void (*arc4py_rng_debug_vm_mix)(uint8_t *mix, size_t n);
#endif

int rng_state_get(struct rng_state **out) /* created, unseeded, if need be */
{
    if ((*out = rng_tls_state) != NULL)
        return 0;
    return rng_platform_state_new(sizeof **out, out);
}

/* The active core over nblocks blocks of st into out (direct: a large
   fill's chunk, not a refill). */
static void run_core(uint32_t st[16], uint8_t *out, size_t nblocks, int direct)
{
#ifdef ARC4PY_TEST_HOOKS
    void (*log)(int, const void *, size_t) = arc4py_rng_debug_log;

    if (log != NULL) {
        log(direct ? ARC4PY_RNG_LOG_DIRECT : ARC4PY_RNG_LOG_REFILL, st, nblocks);
        rng_forget_registers(); /* the log's copy */
    }
#else
    (void)direct;
#endif
    arc4py_chacha20_active()->blocks(st, out, nblocks); /* the dispatch's choice */
    rng_forget_registers();
}

static void core_stack_scrub(void) /* the test log's "done" */
{
    rng_stack_scrub();
#ifdef ARC4PY_TEST_HOOKS
    if (arc4py_rng_debug_log != NULL)
        arc4py_rng_debug_log(ARC4PY_RNG_LOG_DONE, NULL, 0);
#endif
}

/*
 * Keying, always in place: from bytes in the state's own pages (the buffer,
 * the one-time key, the OS bytes) into the state's words, a word at a time
 * through a register, so no byte of a key, nonce or seed is ever in a
 * stack slot a forked child could read.  Not inlined: in a leaf function
 * the words pass through registers the callee need not preserve, and
 * rng_forget_registers() zeroes those before returning.
 */

/* Key st from m[0..40): key, nonce, block counter 0. */
static RNG_NOINLINE void key_from(uint32_t st[16], const uint8_t m[RNG_REKEY_BYTES])
{
    static const uint32_t constants[4] = {ARC4PY_CHACHA20_CONSTANTS};
    int i;

    for (i = 0; i < 4; i++)
        st[i] = constants[i];
    for (i = 0; i < 8; i++)
        st[4 + i] = arc4py_load_le32(m + 4 * i);
    st[12] = 0;
    st[13] = 0;
    st[14] = arc4py_load_le32(m + 32);
    st[15] = arc4py_load_le32(m + 36);
    rng_forget_registers();
}

/* XOR m[0..n) into st's key (n 32) or key and nonce (n 40) and restart
   its counter. */
static RNG_NOINLINE void mix_into(uint32_t st[16], const uint8_t *m, size_t n)
{
    size_t i;

    for (i = 0; i < n / 4; i++)
        st[i < 8 ? 4 + i : 6 + i] ^= arc4py_load_le32(m + 4 * i);
    st[12] = 0;
    st[13] = 0;
    rng_forget_registers();
}

/* XOR the VM-clone mix source's output (changed when a VM is cloned) into
   st's key, read into the state's pages; nothing where the OS has no such
   source. */
static void vm_mix(struct rng_state *s, uint32_t st[16])
{
    if (rng_platform_vm_mix(s->os_bytes, RNG_VM_MIX_BYTES) == 0) {
#ifdef ARC4PY_TEST_HOOKS
        if (arc4py_rng_debug_vm_mix != NULL)
            arc4py_rng_debug_vm_mix(s->os_bytes, RNG_VM_MIX_BYTES);
#endif
        mix_into(st, s->os_bytes, RNG_VM_MIX_BYTES);
    }
    rng_wipe(s->os_bytes, RNG_VM_MIX_BYTES);
}

/* Seeded, and since then no fork and no stir_all? */
static int is_current(const struct rng_state *s)
{
    return s->seeded &&
           s->fork_gen == rng_load_ulong(&rng_fork_generation) &&
           s->stir_gen == rng_load_ulong(&rng_stir_generation);
}

/* Must the state reseed before generating `more` bytes of keystream? */
static int needs_reseed(const struct rng_state *s, uint64_t more)
{
    return !is_current(s) || s->since_seed + more > s->reseed_after;
}

/*
 * New key material from the OS.  A live state of this process mixes it
 * into its key, so a weak seed cannot lower what it had; buffered bytes are
 * discarded.  The generations are read before the OS is asked, so a seed
 * recorded as newer than a stir_all was drawn after it.
 */
int rng_reseed(struct rng_state *s)
{
    uint8_t *seed = s->os_bytes;
    struct rng_signal_mask mask;
    uint32_t fuzz;
    unsigned long fork_gen = rng_load_ulong(&rng_fork_generation);
    unsigned long stir_gen = rng_load_ulong(&rng_stir_generation);
    int err, keep = s->seeded && s->fork_gen == fork_gen;

    rng_wipe(s->buf, sizeof s->buf);
    s->left = 0;
    if ((err = rng_platform_entropy(seed, RNG_SEED_BYTES)) != 0) {
        rng_wipe(seed, RNG_SEED_BYTES);
        rng_wipe(s->chacha, sizeof s->chacha);
        s->seeded = 0;
        return err;
    }
#ifdef ARC4PY_TEST_HOOKS
    if (arc4py_rng_debug_log != NULL) {
        arc4py_rng_debug_log(ARC4PY_RNG_LOG_SEED, seed, RNG_SEED_BYTES);
        rng_forget_registers(); /* the log's copy */
    }
#endif
    rng_platform_signals_hold(&mask);
    if (keep)
        mix_into(s->chacha, seed, RNG_REKEY_BYTES);
    else
        key_from(s->chacha, seed);
    rng_platform_signals_release(&mask);
    /* Reseed at a point in the last quarter before 1 MiB, not a fixed one. */
    fuzz = arc4py_load_le32(seed + RNG_REKEY_BYTES);
    s->reseed_after = ARC4PY_RNG_RESEED_BYTES - fuzz % (ARC4PY_RNG_RESEED_BYTES / 4);
    s->since_seed = 0;
    s->fork_gen = fork_gen;
    s->stir_gen = stir_gen;
    s->seeded = 1;
    rng_wipe(seed, RNG_SEED_BYTES);
#ifdef ARC4PY_TEST_HOOKS
    rng_count(&rng_reseed_count);
#endif
    return 0;
}

/* Fill the buffer with fresh keystream and rekey from its first 40 bytes. */
static int refill(struct rng_state *s)
{
    struct rng_signal_mask mask;
    int err;

    if (needs_reseed(s, ARC4PY_RNG_BUFFER_BYTES) && (err = rng_reseed(s)) != 0)
        return err;
    rng_platform_signals_hold(&mask);
    vm_mix(s, s->chacha);
    run_core(s->chacha, s->buf,
             ARC4PY_RNG_BUFFER_BYTES / ARC4PY_CHACHA20_BLOCK_BYTES, 0);
    core_stack_scrub();
    key_from(s->chacha, s->buf);
    rng_platform_signals_release(&mask);
    rng_wipe(s->buf, RNG_REKEY_BYTES);
    s->left = ARC4PY_RNG_BUFFER_BYTES - RNG_REKEY_BYTES;
    s->since_seed += ARC4PY_RNG_BUFFER_BYTES;
    return 0;
}

/* Copy n bytes out of the buffer, wiping each one handed out, refilling
   it as it runs out. */
int rng_take_refilling(struct rng_state *s, uint8_t *out, size_t n)
{
    while (n) {
        size_t m, left;
        uint8_t *src;
        int err;

        if ((s->left == 0 || !is_current(s)) && (err = refill(s)) != 0)
            return err;
        left = s->left;
        m = n < left ? n : left;
        src = s->buf + ARC4PY_RNG_BUFFER_BYTES - left;
        rng_move_out(out, src, m);
        /* From the local copy: should the pages be zeroed meanwhile, left
           stays within the buffer (and the state unseeded). */
        s->left = left - m;
        out += m;
        n -= m;
    }
    return 0;
}

/* One chunk of a large fill under the one-time key in s->direct.key. */
static void direct_chunk(struct rng_state *s, uint8_t *out, size_t chunk)
{
    /* In the state's pages, not on the stack: zeroed in a forked child and
       left out of core dumps like the rest of the state. */
    uint32_t *st = s->direct.chacha;
    size_t blocks = chunk / ARC4PY_CHACHA20_BLOCK_BYTES,
           rest = chunk % ARC4PY_CHACHA20_BLOCK_BYTES;

    key_from(st, s->direct.key);
    rng_wipe(s->direct.key, RNG_REKEY_BYTES);
    vm_mix(s, st);
    run_core(st, out, blocks, 1);
    if (rest) {
        run_core(st, s->direct.tail, 1, 1);
        memcpy(out + blocks * ARC4PY_CHACHA20_BLOCK_BYTES, s->direct.tail, rest);
    }
}

/*
 * Large requests: a one-time key drawn from the state generates the output
 * straight into the caller's memory.  Chunks end at the state's reseed
 * point, so the "reseed after 1 MiB" promise holds across small and large
 * requests alike.
 */
int rng_take_direct(struct rng_state *s, uint8_t *out, size_t n)
{
    struct rng_signal_mask mask;
    int err = 0;

    /* Held for the whole fill but for each reseed (which holds its own
       OS call): one pair of mask calls per reseed interval. */
    rng_platform_signals_hold(&mask);
    while (n) {
        size_t chunk = n < ARC4PY_RNG_DIRECT_CHUNK_BYTES ? n
                                                         : ARC4PY_RNG_DIRECT_CHUNK_BYTES;

        /* Each chunk reseeds at the reseed point, and after a fork or a
           stir_all (the request is then drawn again: rng_requests.c). */
        if (needs_reseed(s, 1)) {
            rng_platform_signals_release(&mask);
            err = rng_reseed(s);
            rng_platform_signals_hold(&mask);
            if (err != 0)
                break;
        }
        err = rng_take_refilling(s, s->direct.key, RNG_REKEY_BYTES);
        rng_forget_registers(); /* the copy's */
        if (err != 0)
            break;
        /* Never past the reseed point: stop there and reseed next round. */
        if (chunk > s->reseed_after - s->since_seed)
            chunk = (size_t)(s->reseed_after - s->since_seed);
        if (chunk != 0)
            direct_chunk(s, out, chunk);
        s->since_seed += chunk;
        out += chunk;
        n -= chunk;
    }
    /* Once, not per chunk: every chunk's core call spills into the same
       frames, each over the last, so only the last chunk's key is there. */
    core_stack_scrub();
    rng_platform_signals_release(&mask);
    rng_wipe(&s->direct, sizeof s->direct);
    return err;
}
