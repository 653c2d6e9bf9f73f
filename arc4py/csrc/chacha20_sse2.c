/*
 * SSE2 ChaCha20 keystream core, written from RFC 8439 section 2 and
 * Bernstein's "ChaCha, a variant of Salsa20".
 *
 * The four-block vertical core and the 1..3-block horizontal tail are in
 * chacha20_sse_body.h, shared with the other 128-bit core; this file gives
 * it the rotations and the instruction set.
 *
 * SSE2 has no vector rotate: every rotation is two shifts and an or.
 */
#include "chacha20_common.h"

#if defined(ARC4PY_X86_64) && !defined(ARC4PY_NO_SSE2)

/* SSE2 is baseline on x86-64; said here so the file stands alone. */
#if defined(__clang__)
#include <emmintrin.h>
#pragma clang attribute push(__attribute__((target("sse2"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("sse2")
#include <emmintrin.h>
#endif

#define ROTL(v, n) \
    _mm_or_si128(_mm_slli_epi32((v), (n)), _mm_srli_epi32((v), 32 - (n)))
#define ROT16(v) ROTL(v, 16)
#define ROT8(v) ROTL(v, 8)
/* In the four-block pass: by 16, swap the halves of each word (two word
   shuffles, no temporary); by 8, shifts. */
#define ROT16_ASM(r)                                                   \
    "pshuflw $0xb1, " X(r) ", " X(r) NL "pshufhw $0xb1, " X(r) ", " X(r) NL
#define ROT8_ASM(r) ROTL_ASM(r, 8, 24)

#define ARC4PY_SSE_BLOCKS_FN arc4py_chacha20_blocks_sse2
#include "chacha20_sse_body.h"

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif /* x86-64, not left out */

#if defined(ARC4PY_NO_SSE2)
ARC4PY_CORE_NOT_BUILT(sse2, ARC4PY_CORE_LEFT_OUT);
#elif defined(ARC4PY_X86_64)
ARC4PY_CORE_BUILT_HERE(sse2);
#elif defined(ARC4PY_TARGET_X86_64)
#error "arc4py: this compiler cannot build the sse2 core: build with GCC, Clang or (Windows) clang-cl, or leave the core out by name, ARC4PY_NO_SSE2=1"
#else
ARC4PY_CORE_NOT_BUILT(sse2, ARC4PY_CORE_OTHER_ARCH);
#endif
