/*
 * Wiping secrets (internal): memory, the stack a core used, the registers.
 * The leaf every other generator file may use, the algorithm and the
 * platform files alike.  It depends on nothing but the C library.
 */
#ifndef ARC4PY_RNG_WIPE_H
#define ARC4PY_RNG_WIPE_H

#include <stddef.h>

#include "compiler_compat.h"

/* A memset the compiler may not drop as a dead store. */
void rng_wipe(void *p, size_t n);

/* Zero the stack below the caller's frame, where the core it just called
   kept its locals and spills. */
void rng_stack_scrub(void);

/*
 * Zero the registers a called function need not preserve, the integer and
 * the vector ones.  A key word a keying or a core left in one would
 * otherwise reach the stack with the next function that saves that
 * register or pushes it to pad its frame, or in a signal frame.
 */
#define RNG_PXOR(n) "pxor %%xmm" #n ", %%xmm" #n "\n\t"
#define RNG_MOVX(n) "mov x" #n ", xzr\n\t"
#define RNG_MOVI(n) "movi v" #n ".16b, #0\n\t"
static RNG_ALWAYS_INLINE void rng_forget_registers(void)
{
#if defined(__x86_64__) && defined(RNG_GNUC)
    __asm__ __volatile__(
        "xorl %%eax, %%eax\n\txorl %%ecx, %%ecx\n\txorl %%edx, %%edx\n\t"
        "xorl %%esi, %%esi\n\txorl %%edi, %%edi\n\txorl %%r8d, %%r8d\n\t"
        "xorl %%r9d, %%r9d\n\txorl %%r10d, %%r10d\n\txorl %%r11d, %%r11d\n\t"
        RNG_PXOR(0) RNG_PXOR(1) RNG_PXOR(2) RNG_PXOR(3) RNG_PXOR(4)
        RNG_PXOR(5) RNG_PXOR(6) RNG_PXOR(7) RNG_PXOR(8) RNG_PXOR(9)
        RNG_PXOR(10) RNG_PXOR(11) RNG_PXOR(12) RNG_PXOR(13) RNG_PXOR(14)
        RNG_PXOR(15)
        ::: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "cc",
        "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
        "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
#elif defined(__aarch64__) && defined(RNG_GNUC)
    __asm__ __volatile__(
        RNG_MOVX(0) RNG_MOVX(1) RNG_MOVX(2) RNG_MOVX(3) RNG_MOVX(4)
        RNG_MOVX(5) RNG_MOVX(6) RNG_MOVX(7) RNG_MOVX(8) RNG_MOVX(9)
        RNG_MOVX(10) RNG_MOVX(11) RNG_MOVX(12) RNG_MOVX(13) RNG_MOVX(14)
        RNG_MOVX(15) RNG_MOVX(16) RNG_MOVX(17)
        RNG_MOVI(0) RNG_MOVI(1) RNG_MOVI(2) RNG_MOVI(3) RNG_MOVI(4)
        RNG_MOVI(5) RNG_MOVI(6) RNG_MOVI(7) RNG_MOVI(16) RNG_MOVI(17)
        RNG_MOVI(18) RNG_MOVI(19) RNG_MOVI(20) RNG_MOVI(21) RNG_MOVI(22)
        RNG_MOVI(23) RNG_MOVI(24) RNG_MOVI(25) RNG_MOVI(26) RNG_MOVI(27)
        RNG_MOVI(28) RNG_MOVI(29) RNG_MOVI(30) RNG_MOVI(31)
        ::: "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10",
        "x11", "x12", "x13", "x14", "x15", "x16", "x17", "v0", "v1", "v2",
        "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19", "v20", "v21",
        "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31");
#elif defined(ARC4PY_TARGET_X86_64) || defined(ARC4PY_TARGET_AARCH64)
/* Never silently without the wipe: it cannot be left out. */
#error "arc4py: this compiler has no GNU inline assembly for the register wipe: build with GCC, Clang or (Windows) clang-cl"
#endif
}

#endif
