/*
 * arc4py ChaCha20 keystream cores (keystream only: no XOR with an input).
 *
 * Every core has the same signature and the same contract:
 *
 *   void arc4py_chacha20_blocks_<isa>(uint32_t state[16], uint8_t *out,
 *                                     size_t nblocks);
 *
 * writes nblocks 64-byte blocks of keystream for the 16-word ChaCha20 state
 * to out (any alignment) and advances the block counter by nblocks, carrying
 * from word 12 into word 13 (the original 64-bit counter layout).  Callers
 * that use the RFC 8439 layout (32-bit counter, word 13 part of the nonce)
 * must not ask for a block past counter 2**32 - 1; the Python binding
 * refuses such requests before any core runs.
 */
#ifndef ARC4PY_CHACHA20_H
#define ARC4PY_CHACHA20_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ARC4PY_CHACHA20_BLOCK_BYTES 64

typedef void (*arc4py_chacha20_blocks_fn)(uint32_t state[16], uint8_t *out,
                                          size_t nblocks);

/* A core this CPU can run: its name in backends() and its block function. */
typedef struct arc4py_chacha20_core {
    const char *name;
    arc4py_chacha20_blocks_fn blocks;
} arc4py_chacha20_core;

/* ChaCha20's words 0..3: "expand 32-byte k", little-endian. */
#define ARC4PY_CHACHA20_CONSTANTS \
    0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u

/*
 * Fill state with the ChaCha20 constants, the 32-byte key, the counter and
 * the nonce.  nonce_len 8: 64-bit counter in words 12-13, nonce in 14-15.
 * nonce_len 12: RFC 8439, 32-bit counter in word 12, nonce in 13-15.
 * Returns 0, or -1 if nonce_len is neither 8 nor 12.
 */
int arc4py_chacha20_init(uint32_t state[16], const uint8_t key[32],
                         const uint8_t *nonce, size_t nonce_len,
                         uint64_t counter);

/*
 * The cores this CPU (and OS) can run, fastest first, ending with generic.
 * Sets *count; the array is static and never changes after the first call
 * (the first call, from any thread, detects the CPU exactly once).
 */
const arc4py_chacha20_core *arc4py_chacha20_cores(size_t *count);

/* The runnable core called name, or NULL if unknown or not runnable here. */
const arc4py_chacha20_core *arc4py_chacha20_find(const char *name);

/*
 * The i-th name of every core in this build's source, runnable here or not,
 * in the table's order (fastest first); NULL once i is past the last.
 */
const char *arc4py_chacha20_known_name(size_t i);

/* 1 if name is a core in this build (see arc4py_chacha20_known_name). */
int arc4py_chacha20_is_known(const char *name);

/*
 * The i-th core this build left out by name (ARC4PY_NO_<ISA>), in the
 * table's order; NULL once i is past the last.  What `arc4py info` reports.
 */
const char *arc4py_chacha20_left_out(size_t i);

/* CPU features seen by the dispatch, as a space-separated string. */
const char *arc4py_cpu_features(void);

/*
 * The active core: the one the generator runs and a keystream without a
 * named core uses.  The one arc4py_chacha20_select() chose, else the
 * fastest runnable (the only place that default is decided).
 */
const arc4py_chacha20_core *arc4py_chacha20_active(void);
/* Make the runnable core called name the active one: 0, or -1 if it is
   not runnable here.  Meant for start-up, before output is drawn. */
int arc4py_chacha20_select(const char *name);

#ifdef __cplusplus
}
#endif
#endif
