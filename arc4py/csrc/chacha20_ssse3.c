/*
 * SSSE3 ChaCha20 keystream core, written from RFC 8439 section 2 and
 * Bernstein's "ChaCha, a variant of Salsa20".
 *
 * The four-block vertical core and the 1..3-block horizontal tail are in
 * chacha20_sse_body.h, shared with the other 128-bit core; this file gives
 * it the rotations and the instruction set.
 *
 * The code is the SSE2 core's but for two rotations: by 16 and by 8 bits
 * moves whole bytes, so one pshufb does each; by 12 and by 7 stay two
 * shifts and an or.
 */
#include "chacha20_common.h"

#if defined(ARC4PY_X86_64) && !defined(ARC4PY_NO_SSSE3)

/* Enable SSSE3 here only, no global -m flag: the dispatch checks CPUID. */
#if defined(__clang__)
#include <tmmintrin.h>
#pragma clang attribute push(__attribute__((target("ssse3"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("ssse3")
#include <tmmintrin.h>
#endif

#define ROTL(v, n) \
    _mm_or_si128(_mm_slli_epi32((v), (n)), _mm_srli_epi32((v), 32 - (n)))
/*
 * pshufb with the table (sse_rot_tables: the bytes of each 32-bit lane
 * rotated by 2, then by 1) as a memory operand: held in registers through
 * the rounds, the two tables pushed the two-block tail's rows out to the
 * stack (gcc 12 -O3).
 */
static inline __m128i pshufb_mem(__m128i v, const uint8_t *table)
{
    __asm__("pshufb %1, %0" : "+x"(v) : "m"(*(const __m128i *)table));
    return v;
}
#define ROT16(v) pshufb_mem((v), sse_rot_tables)
#define ROT8(v) pshufb_mem((v), sse_rot_tables + 16)
/* The same in the four-block pass, with the tables in memory. */
#define ROT16_ASM(r) "pshufb (%[rot]), " X(r) NL
#define ROT8_ASM(r) "pshufb 16(%[rot]), " X(r) NL

#define ARC4PY_SSE_BLOCKS_FN arc4py_chacha20_blocks_ssse3
#include "chacha20_sse_body.h"

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif /* x86-64, not left out */

#if defined(ARC4PY_NO_SSSE3)
ARC4PY_CORE_NOT_BUILT(ssse3, ARC4PY_CORE_LEFT_OUT);
#elif defined(ARC4PY_X86_64)
ARC4PY_CORE_BUILT_HERE(ssse3);
#elif defined(ARC4PY_TARGET_X86_64)
#error "arc4py: this compiler cannot build the ssse3 core: build with GCC, Clang or (Windows) clang-cl, or leave the core out by name, ARC4PY_NO_SSSE3=1"
#else
ARC4PY_CORE_NOT_BUILT(ssse3, ARC4PY_CORE_OTHER_ARCH);
#endif
