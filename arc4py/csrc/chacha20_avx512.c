/* PLACEHOLDER until the real avx512 core lands: delegates to generic. */
#include "chacha20_common.h"

void arc4py_chacha20_blocks_avx512(uint32_t state[16], uint8_t *out, size_t nblocks)
{
    arc4py_chacha20_blocks_generic(state, out, nblocks);
}
