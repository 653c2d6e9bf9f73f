/*
 * arc4py's generator: an arc4random-style CSPRNG with one ChaCha20 state per
 * OS thread, fast key erasure, reseeding from the OS and fork protection.
 *
 * Every function may be called without the GIL and from any thread.  Those
 * returning int give 0 on success or a positive errno value: ENOMEM when no
 * memory could be mapped for the thread's state, EAGAIN when a request
 * was drawn again eight times (a fork or a stir_all during each pass) and
 * still was not clear of one, else the OS entropy source's error (EIO when
 * getrandom keeps returning 0).  On failure the output is wiped (set to
 * zero): it never holds partial or unseeded output.
 *
 * From a POSIX signal handler: arc4py_rng_buf, _u32, _u64 and _uniform, on
 * a thread that has drawn before outside a handler (its state exists).  A
 * call nested in a draw of its own thread (the handler interrupted one)
 * takes its bytes straight from the OS, never from the buffer; stir then
 * returns EBUSY.  The same holds inside fork(), from atfork handlers.  A
 * handler may leave a draw it interrupted by siglongjmp (a fault in the
 * output's memory): the thread's next call outside a handler finds the
 * state left busy, wipes it and reseeds; a jump out of a draw that the
 * buffer served without the slow path (no refill, no large fill) leaves
 * the thread's draws to the OS.  The rest may not be called from a
 * handler.
 */
#ifndef ARC4PY_GENERATOR_H
#define ARC4PY_GENERATOR_H

#include <stddef.h>
#include <stdint.h>

#include "rng_platform.h" /* the ARC4PY_FORK_* bits */

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of keystream produced per refill of a thread's buffer: 240 blocks,
   a whole number of passes for every core, and with the state's other
   fields four 4 KiB pages.  Each refill also pays a vDSO getrandom call, a
   rekey and a stack scrub (~300 ns on a Zen 3), spread over these bytes. */
#define ARC4PY_RNG_BUFFER_BYTES 15360
/* A thread reseeds from the OS after at most this many output bytes. */
#define ARC4PY_RNG_RESEED_BYTES (1024 * 1024)
/* Bytes of each refill that become the next key (32) and nonce (8): small
   requests see ARC4PY_RNG_BUFFER_BYTES less these. */
#define ARC4PY_RNG_REKEY_BYTES 40
/* Requests this large are generated straight into the caller's memory,
   each under a signal hold of its own (a pair of system calls, ~0.45 us);
   smaller ones are copied out of the buffer, whose refill's hold they
   share: below this size the copy costs less than the hold. */
#define ARC4PY_RNG_DIRECT_BYTES 6144
/* ...in chunks of at most this many bytes, each under a new one-time key
   with the VM-clone source mixed in: a fill in flight writes at most one
   chunk after a VM clone before it notices.  (A fork or a stir_all during
   a fill makes the whole fill be drawn again, at most eight times.) */
#define ARC4PY_RNG_DIRECT_CHUNK_BYTES (64 * 1024)

/* The top 53 bits of x as a double in [0, 1), as numpy's own generators
   and the stdlib's random() make them: every binding's u64 -> double. */
static inline double arc4py_u64_to_double(uint64_t x)
{
    return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

/* Choose the core every thread uses; 0, or -1 if not runnable here.
   Call before output is drawn (the binding does it at import). */
int arc4py_rng_select_core(const char *name);
const char *arc4py_rng_core_name(void);

/* n random bytes into buf. */
int arc4py_rng_buf(void *buf, size_t n);
int arc4py_rng_u32(uint32_t *out);
int arc4py_rng_u64(uint64_t *out);
/* Uniform in [0, upper_bound) by rejection; upper_bound 0 means 2**32. */
int arc4py_rng_uniform(uint32_t upper_bound, uint32_t *out);
/* The same for n random words at v, mapped in place (the array form). */
int arc4py_rng_uniform_words(uint32_t *v, size_t n, uint32_t upper_bound);
/* Reseed the calling thread's state from the OS now (buffered bytes are
   discarded; on failure the state gives no output until a reseed works). */
int arc4py_rng_stir(void);
/* Reseed the calling thread now, as arc4py_rng_stir(), and make every other
   thread's state reseed before it hands out another byte: its buffer is
   refused from the moment this call starts, and a large fill in flight
   there that returns after this call has returned is drawn again, whole,
   from a key seeded after it.  For snapshot/restore hooks (a VM snapshot
   restored, CRIU).  The other threads reseed even if the caller's reseed
   fails. */
int arc4py_rng_stir_all(void);

/* ARC4PY_FORK_* bits (rng_platform.h) for the protections in force: a bit
   is set only if every live thread state has it (the caller's state is
   made first). */
unsigned arc4py_rng_fork_protection(void);

/* What the OS does for the generator, by name: the entropy source the
   reads use ("getrandom"), the call that locked every live state's pages
   ("mlock"; NULL if some state is not locked) and what wipes a state when
   its thread exits.  A byte is drawn first, so the names are about a
   seeded state; that draw's error is returned (and nothing is named). */
int arc4py_rng_os_facts(const char **entropy_source, const char **state_lock,
                        const char **exit_wipe);

/* numpy's bitgen_t functions, straight into the per-thread generator.
   A caller that cannot report errors gets abort() rather than a value
   that is not random. */
uint64_t arc4py_bitgen_u64(void *unused);
uint32_t arc4py_bitgen_u32(void *unused);
double arc4py_bitgen_double(void *unused);

#ifdef __cplusplus
}
#endif
#endif
