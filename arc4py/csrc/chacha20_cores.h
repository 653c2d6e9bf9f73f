/*
 * Internal to the cores and their dispatch: the per-ISA block functions,
 * the CPU feature bits a core may require, what each core's file tells the
 * dispatch, and the register-clearing statements every SIMD core ends with.
 *
 * Each core lives in chacha20_<isa>.c and compiles to no function on an
 * architecture that cannot run it or when left out (ARC4PY_NO_<ISA>), so
 * setup.py builds every file.  The list of cores is chacha20_cores.def.
 */
#ifndef ARC4PY_CHACHA20_CORES_H
#define ARC4PY_CHACHA20_CORES_H

#include "chacha20.h"
#include "compiler_compat.h" /* ARC4PY_X86_64, ARC4PY_TARGET_X86_64, ... */

/* CPU features (the dispatch's bits; a core lists the ones it needs). */
enum {
    ARC4PY_CPU_SSE2 = 1 << 0,
    ARC4PY_CPU_SSSE3 = 1 << 1,
    ARC4PY_CPU_AVX2 = 1 << 2,
    ARC4PY_CPU_AVX512F = 1 << 3,
    ARC4PY_CPU_AVX512VL = 1 << 4,
    ARC4PY_CPU_OS_YMM = 1 << 5, /* the OS saves ymm state (XCR0) */
    ARC4PY_CPU_OS_ZMM = 1 << 6, /* ... and opmask and all of zmm0-31 */
    ARC4PY_CPU_NEON = 1 << 7,   /* Advanced SIMD (aarch64) */
};

/* What a core's file built: its function, or why there is none. */
enum arc4py_core_presence {
    ARC4PY_CORE_BUILT,      /* runnable wherever the CPU has its features */
    ARC4PY_CORE_OTHER_ARCH, /* known by name, never runnable here */
    ARC4PY_CORE_LEFT_OUT,   /* ARC4PY_NO_<ISA>: not even a known name */
};
struct arc4py_core_build {
    arc4py_chacha20_blocks_fn blocks; /* NULL unless built */
    enum arc4py_core_presence presence;
};

/* Each core file's last lines define its arc4py_core_build_<isa>. */
#define ARC4PY_CORE_BUILT_HERE(isa)                                        \
    const struct arc4py_core_build arc4py_core_build_##isa = {              \
        arc4py_chacha20_blocks_##isa, ARC4PY_CORE_BUILT}
#define ARC4PY_CORE_NOT_BUILT(isa, presence)                               \
    const struct arc4py_core_build arc4py_core_build_##isa = {NULL, presence}

void arc4py_chacha20_blocks_generic(uint32_t state[16], uint8_t *out,
                                    size_t nblocks);
/* Declared for every row; defined only where the core's file built it. */
#define ARC4PY_CORE(isa, registers, builds_with, cpu_features)            \
    void arc4py_chacha20_blocks_##isa(uint32_t state[16], uint8_t *out,    \
                                      size_t nblocks);                     \
    extern const struct arc4py_core_build arc4py_core_build_##isa;
#include "chacha20_cores.def"
#undef ARC4PY_CORE

/*
 * Clearing the vector registers a core used, so no key word or keystream
 * outlives the call in a register (the stack is the generator's to scrub).
 * Statements, not functions: a clobber of zmm16-31 is only accepted inside
 * a function compiled for AVX-512.
 */
#ifdef ARC4PY_X86_64
#define ARC4PY_XMM_CLOBBERS                                                \
    "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", \
        "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"
/* Legacy-SSE encodings: valid on every x86-64 CPU (SSE2 is baseline). */
#define ARC4PY_CLEAR_XMM()                                                 \
    __asm__ volatile(                                                      \
        "pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\t"                   \
        "pxor %%xmm2, %%xmm2\n\tpxor %%xmm3, %%xmm3\n\t"                   \
        "pxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\t"                   \
        "pxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7\n\t"                   \
        "pxor %%xmm8, %%xmm8\n\tpxor %%xmm9, %%xmm9\n\t"                   \
        "pxor %%xmm10, %%xmm10\n\tpxor %%xmm11, %%xmm11\n\t"               \
        "pxor %%xmm12, %%xmm12\n\tpxor %%xmm13, %%xmm13\n\t"               \
        "pxor %%xmm14, %%xmm14\n\tpxor %%xmm15, %%xmm15"                   \
        ::: ARC4PY_XMM_CLOBBERS)
/* AVX: vzeroall zeroes all of ymm0-15 (zmm0-15 on AVX-512 CPUs). */
#define ARC4PY_CLEAR_YMM() __asm__ volatile("vzeroall" ::: ARC4PY_XMM_CLOBBERS)
/* AVX-512: vzeroall leaves zmm16-31 alone; an EVEX xor zeroes each whole. */
#define ARC4PY_ZERO_ZMM(a, b, c, d)                                        \
    "vpxord %%zmm" #a ", %%zmm" #a ", %%zmm" #a "\n\t"                     \
    "vpxord %%zmm" #b ", %%zmm" #b ", %%zmm" #b "\n\t"                     \
    "vpxord %%zmm" #c ", %%zmm" #c ", %%zmm" #c "\n\t"                     \
    "vpxord %%zmm" #d ", %%zmm" #d ", %%zmm" #d "\n\t"
#define ARC4PY_CLEAR_ZMM()                                                 \
    __asm__ volatile(                                                      \
        "vzeroall\n\t" ARC4PY_ZERO_ZMM(16, 17, 18, 19)                     \
        ARC4PY_ZERO_ZMM(20, 21, 22, 23) ARC4PY_ZERO_ZMM(24, 25, 26, 27)    \
        ARC4PY_ZERO_ZMM(28, 29, 30, 31)                                    \
        ::: ARC4PY_XMM_CLOBBERS, "xmm16", "xmm17", "xmm18", "xmm19",      \
        "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26",     \
        "xmm27", "xmm28", "xmm29", "xmm30", "xmm31")
#endif

#if defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
/* All of v0-v31.  v8-v15's low halves are callee-saved: the clobber makes
 * the compiler restore the caller's values there, which is all right. */
#define ARC4PY_ZERO_V(a, b, c, d)                                          \
    "movi v" #a ".16b, #0\n\tmovi v" #b ".16b, #0\n\t"                     \
    "movi v" #c ".16b, #0\n\tmovi v" #d ".16b, #0\n\t"
#define ARC4PY_CLEAR_NEON()                                                \
    __asm__ volatile(                                                      \
        ARC4PY_ZERO_V(0, 1, 2, 3) ARC4PY_ZERO_V(4, 5, 6, 7)                \
        ARC4PY_ZERO_V(8, 9, 10, 11) ARC4PY_ZERO_V(12, 13, 14, 15)          \
        ARC4PY_ZERO_V(16, 17, 18, 19) ARC4PY_ZERO_V(20, 21, 22, 23)        \
        ARC4PY_ZERO_V(24, 25, 26, 27) ARC4PY_ZERO_V(28, 29, 30, 31)        \
        ::: "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9",    \
        "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18",     \
        "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27",     \
        "v28", "v29", "v30", "v31")
#endif

#endif
