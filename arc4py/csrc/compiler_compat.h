/*
 * The compiler constructs the C code needs beyond ISO C, in one place: GCC
 * and Clang (every OS, mingw-w64 included) spell them one way, MSVC
 * another; and the byte-order helpers the cores and the generator share.
 * Nothing here calls the OS.
 *
 * MSVC's cl.exe builds only targets with no SIMD core (32-bit x86): it
 * has neither target attributes nor GNU inline assembly, so x86-64 and
 * ARM64 Windows builds use clang-cl (setup.py picks it), which takes the
 * GCC/Clang branches.
 */
#ifndef ARC4PY_COMPILER_COMPAT_H
#define ARC4PY_COMPILER_COMPAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define RNG_GNUC 1
#elif defined(_MSC_VER)
#define RNG_MSVC 1
#include <intrin.h>
#else
#error "arc4py: needs GCC, Clang or MSVC (atomics, thread-local storage)"
#endif

/* ---- the target, and where SIMD code is built ---------------------------
 * ARC4PY_TARGET_*: the architecture built for, whichever compiler.
 * ARC4PY_X86_64 / ARC4PY_AARCH64: its SIMD code (target attributes,
 * register-clearing assembly) is built, which takes GCC or Clang (clang-cl
 * included) and, for aarch64, little-endian.  A core of the target that
 * the compiler cannot build stops the build unless left out by name
 * (each core file's last lines). */
#if defined(__x86_64__) || (defined(_M_X64) && !defined(_M_ARM64EC))
#define ARC4PY_TARGET_X86_64 1
#endif
/* (big-endian aarch64 runs the generic core: the NEON core is little-endian) */
#if (defined(__aarch64__) && !defined(__AARCH64EB__)) || defined(_M_ARM64)
#define ARC4PY_TARGET_AARCH64 1
#endif
#if defined(ARC4PY_TARGET_X86_64) && defined(RNG_GNUC)
#define ARC4PY_X86_64 1
#endif
#if defined(ARC4PY_TARGET_AARCH64) && defined(__ARM_NEON) && \
    defined(RNG_GNUC) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARC4PY_AARCH64 1
#endif
/* AVX-512 code (the avx512 core, the C API's AVX-512 build) is built:
   x86-64, and not left out with ARC4PY_NO_AVX512. */
#if defined(ARC4PY_X86_64) && !defined(ARC4PY_NO_AVX512)
#define ARC4PY_BUILD_AVX512 1
#endif

/* ---- attributes ---------------------------------------------------------- */
#ifdef RNG_GNUC
#define RNG_LIKELY(x) __builtin_expect(!!(x), 1)
#define RNG_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RNG_NOINLINE __attribute__((noinline))
/* Slow paths stay out of line, so the hot paths need no stack frame. */
#define RNG_COLD_NOINLINE __attribute__((cold, noinline))
#define RNG_NORETURN __attribute__((noreturn))
/* The hot path inlined at every caller: Clang keeps it out of line where
   a file has two callers of it, a call more per draw. */
#define RNG_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define RNG_LIKELY(x) (x)
#define RNG_UNLIKELY(x) (x)
#define RNG_NOINLINE __declspec(noinline)
#define RNG_COLD_NOINLINE __declspec(noinline)
#define RNG_NORETURN __declspec(noreturn)
#define RNG_ALWAYS_INLINE __forceinline
#endif
/* Seen by no other module: a reference to one left undefined fails the
   link even of a shared object (on PE, every undefined one does). */
#if defined(RNG_GNUC) && (defined(__ELF__) || defined(__APPLE__))
#define RNG_HIDDEN __attribute__((visibility("hidden")))
#else
#define RNG_HIDDEN
#endif

/* ---- thread-local storage ----------------------------------------------- */
/* initial-exec: one load from the thread pointer, no __tls_get_addr call.
   An ELF notion (Mach-O and PE have their own TLS models). */
#if defined(RNG_GNUC) && defined(__ELF__)
#define RNG_TLS __thread __attribute__((tls_model("initial-exec")))
#elif defined(RNG_GNUC)
#define RNG_TLS __thread
#else
#define RNG_TLS __declspec(thread)
#endif

/* ---- compile-time checks ------------------------------------------------ */
#if defined(RNG_MSVC) && !defined(__STDC_VERSION__)
/* MSVC's C mode before /std:c11 has no _Static_assert. */
#define RNG_PASTE2(a, b) a##b
#define RNG_PASTE(a, b) RNG_PASTE2(a, b) /* expands __LINE__ first */
#define RNG_STATIC_ASSERT(cond, msg) \
    typedef char RNG_PASTE(rng_static_assert_, __LINE__)[(cond) ? 1 : -1]
#else
#define RNG_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* ---- a barrier for wipes ------------------------------------------------ */
/* The memory at p is read by something the compiler cannot see: stores to
   it (a wipe) may not be dropped as dead. */
#ifdef RNG_GNUC
#define RNG_KEEP_STORES(p) __asm__ __volatile__("" : : "r"(p) : "memory")
#else
#define RNG_KEEP_STORES(p) ((void)(p), _ReadWriteBarrier())
#endif

/* p may point elsewhere now: what is read through it after this is read
   again, not kept live (or spilled to the stack) since an earlier read.
   Memory is not clobbered, so locals stay in registers. */
#ifdef RNG_GNUC
#define RNG_REREAD_THROUGH(p) __asm__("" : "+r"(p))
#else
#define RNG_REREAD_THROUGH(p) _ReadWriteBarrier()
#endif

/* Orders this thread's memory accesses against a signal handler that
   interrupts it (a compiler barrier: one thread, no CPU fence needed). */
#ifdef RNG_GNUC
#define RNG_SIGNAL_FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#else
#define RNG_SIGNAL_FENCE() _ReadWriteBarrier()
#endif

/* Leading zero bits of a nonzero 64-bit x. */
#ifdef RNG_GNUC
#define RNG_CLZ64(x) __builtin_clzll(x)
#else
#include <intrin.h>
static __forceinline int rng_clz64_msvc(unsigned long long x)
{
    unsigned long i;
    _BitScanReverse64(&i, x);
    return 63 - (int)i;
}
#define RNG_CLZ64(x) rng_clz64_msvc(x)
#endif

/* ---- atomics ------------------------------------------------------------ */
/* For the few shared words: generations (unsigned long), flags (int), the
   active core (a pointer) and test counters (long). */
#ifdef RNG_GNUC
static inline unsigned long rng_load_ulong(const unsigned long *p)
{ return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline unsigned long rng_load_ulong_relaxed(const unsigned long *p)
{ return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline void rng_increment_ulong(unsigned long *p)
{ __atomic_fetch_add(p, 1, __ATOMIC_SEQ_CST); }
static inline int rng_load_int(const int *p)
{ return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void rng_store_int(int *p, int v)
{ __atomic_store_n(p, v, __ATOMIC_RELEASE); }
/* 1 if *p held 0 and now holds v. */
static inline int rng_claim_int(int *p, int v)
{
    int expected = 0;

    return __atomic_compare_exchange_n(p, &expected, v, 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}
static inline const void *rng_load_ptr(const void *const *p)
{ return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void rng_store_ptr(const void **p, const void *v)
{ __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline void rng_count(long *p)
{ __atomic_fetch_add(p, 1, __ATOMIC_RELAXED); }
static inline long rng_load_long(const long *p)
{ return __atomic_load_n(p, __ATOMIC_RELAXED); }
#if defined(__x86_64__) || defined(__i386__)
#define RNG_CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define RNG_CPU_RELAX() __asm__ __volatile__("yield")
#else
#define RNG_CPU_RELAX() ((void)0)
#endif
#else
/* MSVC (x86 only): volatile word accesses are acquire loads and release
   stores under /volatile:ms, x86's default. */
static inline unsigned long rng_load_ulong(const unsigned long *p)
{ return *(const volatile unsigned long *)p; }
static inline unsigned long rng_load_ulong_relaxed(const unsigned long *p)
{ return *(const volatile unsigned long *)p; }
static inline void rng_increment_ulong(unsigned long *p)
{ _InterlockedIncrement((volatile long *)p); }
static inline int rng_load_int(const int *p)
{ return *(const volatile int *)p; }
static inline void rng_store_int(int *p, int v)
{ *(volatile int *)p = v; }
static inline int rng_claim_int(int *p, int v)
{ return _InterlockedCompareExchange((volatile long *)p, v, 0) == 0; }
static inline const void *rng_load_ptr(const void *const *p)
{ return *(const void *const volatile *)p; }
static inline void rng_store_ptr(const void **p, const void *v)
{ *(const void *volatile *)p = v; }
static inline void rng_count(long *p)
{ _InterlockedIncrement((volatile long *)p); }
static inline long rng_load_long(const long *p)
{ return *(const volatile long *)p; }
#define RNG_CPU_RELAX() _mm_pause()
#endif

/* ---- byte order -------------------------------------------------------- */
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

/*
 * Run fn once per process, whichever threads call first; every caller
 * returns after fn has returned and sees its writes.  No OS lock: fn is
 * short (reading CPUID), so late callers spin.
 */
static inline void rng_once(int *state, void (*fn)(void))
{
    if (RNG_LIKELY(rng_load_int(state) == 2))
        return;
    if (rng_claim_int(state, 1)) {
        fn();
        rng_store_int(state, 2);
        return;
    }
    while (rng_load_int(state) != 2)
        RNG_CPU_RELAX();
}

#endif
