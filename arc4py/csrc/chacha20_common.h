/* Helpers shared by the ChaCha20 cores (internal, not installed). */
#ifndef ARC4PY_CHACHA20_COMMON_H
#define ARC4PY_CHACHA20_COMMON_H

#include <stdint.h>
#include <string.h>

#include "chacha20_cores.h" /* and compiler_compat.h: the byte order */

/* Advance the 64-bit block counter held in words 12 (low) and 13 (high). */
static inline void arc4py_counter_add(uint32_t state[16], uint64_t n)
{
    uint64_t c = ((uint64_t)state[13] << 32) | state[12];
    c += n;
    state[12] = (uint32_t)c;
    state[13] = (uint32_t)(c >> 32);
}

#endif
