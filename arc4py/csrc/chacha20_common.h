/* Helpers shared by the ChaCha20 cores (internal, not installed). */
#ifndef ARC4PY_CHACHA20_COMMON_H
#define ARC4PY_CHACHA20_COMMON_H

#include <stdint.h>
#include <string.h>

#include "chacha20_cores.h"

/* Store a 32-bit word little-endian, whatever the host byte order. */
static inline void arc4py_store_le32(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, 4);
#else
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
#endif
}

static inline uint32_t arc4py_load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

/* Advance the 64-bit block counter held in words 12 (low) and 13 (high). */
static inline void arc4py_counter_add(uint32_t state[16], uint64_t n)
{
    uint64_t c = ((uint64_t)state[13] << 32) | state[12];
    c += n;
    state[12] = (uint32_t)c;
    state[13] = (uint32_t)(c >> 32);
}

#endif
