/*
 * The only file that knows about CPUs: reads CPUID and XGETBV once, and lists
 * the cores this machine can run, fastest first.  ARC4PY_NO_<ISA> macros
 * leave a core out of the build.
 */
#include <stdio.h>
#include <string.h>

#include "arc4py/chacha20.h"

#if defined(ARC4PY_HAVE_X86_CORES) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define ARC4PY_X86_DISPATCH 1
#endif

const char *const arc4py_chacha20_all_names[] = {
    "avx512", "avx2", "ssse3", "sse2", "neon", "generic", NULL,
};

enum {
    FEATURE_SSE2 = 1 << 0,
    FEATURE_SSSE3 = 1 << 1,
    FEATURE_AVX2 = 1 << 2,
    FEATURE_AVX512F = 1 << 3,
    FEATURE_AVX512VL = 1 << 4,
    FEATURE_OS_YMM = 1 << 5,
    FEATURE_OS_ZMM = 1 << 6,
};

#ifdef ARC4PY_X86_DISPATCH
/* XGETBV(0) without -mxsave: the OS tells which register state it saves. */
static uint64_t read_xcr0(void)
{
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((uint64_t)edx << 32) | eax;
}

static unsigned detect_features(void)
{
    unsigned eax, ebx, ecx, edx, max_leaf, features = 0;

    max_leaf = __get_cpuid_max(0, NULL);
    if (max_leaf < 1 || !__get_cpuid(1, &eax, &ebx, &ecx, &edx))
        return 0;
    if (edx & (1u << 26))
        features |= FEATURE_SSE2;
    if (ecx & (1u << 9))
        features |= FEATURE_SSSE3;
    /* OSXSAVE (bit 27) must be set before XGETBV may be executed. */
    if ((ecx & (1u << 27)) && (ecx & (1u << 28))) {
        uint64_t xcr0 = read_xcr0();
        if ((xcr0 & 0x6) == 0x6) /* XMM and YMM state */
            features |= FEATURE_OS_YMM;
        if ((xcr0 & 0xe6) == 0xe6) /* plus opmask, ZMM_Hi256, Hi16_ZMM */
            features |= FEATURE_OS_ZMM;
    }
    if (max_leaf >= 7) {
        __cpuid_count(7, 0, eax, ebx, ecx, edx);
        if (ebx & (1u << 5))
            features |= FEATURE_AVX2;
        if (ebx & (1u << 16))
            features |= FEATURE_AVX512F;
        if (ebx & (1u << 31))
            features |= FEATURE_AVX512VL;
    }
    return features;
}
#else
static unsigned detect_features(void) { return 0; }
#endif

static arc4py_chacha20_core runnable[8];
static size_t runnable_count;
static char feature_text[96];
static int detected;

static void add_core(const char *name, arc4py_chacha20_blocks_fn fn)
{
    runnable[runnable_count].name = name;
    runnable[runnable_count].blocks = fn;
    runnable_count++;
}

/*
 * Detection is idempotent and writes the same values on every run, so a race
 * between two first callers is harmless; the binding also calls this once at
 * import, under the GIL, before any thread can use the cores.
 */
static void detect_once(void)
{
    unsigned f;

    if (detected)
        return;
    f = detect_features();
    runnable_count = 0;
    feature_text[0] = '\0';
#ifdef ARC4PY_X86_DISPATCH
    snprintf(feature_text, sizeof feature_text, "%s%s%s%s%s%s%s",
             f & FEATURE_SSE2 ? "sse2 " : "", f & FEATURE_SSSE3 ? "ssse3 " : "",
             f & FEATURE_AVX2 ? "avx2 " : "",
             f & FEATURE_AVX512F ? "avx512f " : "",
             f & FEATURE_AVX512VL ? "avx512vl " : "",
             f & FEATURE_OS_YMM ? "os-ymm " : "",
             f & FEATURE_OS_ZMM ? "os-zmm " : "");
    if (feature_text[0])
        feature_text[strlen(feature_text) - 1] = '\0';
#ifndef ARC4PY_NO_AVX512
    if ((f & FEATURE_AVX512F) && (f & FEATURE_AVX512VL) && (f & FEATURE_OS_ZMM))
        add_core("avx512", arc4py_chacha20_blocks_avx512);
#endif
#ifndef ARC4PY_NO_AVX2
    if ((f & FEATURE_AVX2) && (f & FEATURE_OS_YMM))
        add_core("avx2", arc4py_chacha20_blocks_avx2);
#endif
#ifndef ARC4PY_NO_SSSE3
    if (f & FEATURE_SSSE3)
        add_core("ssse3", arc4py_chacha20_blocks_ssse3);
#endif
#ifndef ARC4PY_NO_SSE2
    if (f & FEATURE_SSE2)
        add_core("sse2", arc4py_chacha20_blocks_sse2);
#endif
#else
    (void)f;
#endif
    add_core("generic", arc4py_chacha20_blocks_generic);
    detected = 1;
}

const arc4py_chacha20_core *arc4py_chacha20_cores(size_t *count)
{
    detect_once();
    *count = runnable_count;
    return runnable;
}

const arc4py_chacha20_core *arc4py_chacha20_find(const char *name)
{
    size_t i;

    detect_once();
    for (i = 0; i < runnable_count; i++)
        if (strcmp(runnable[i].name, name) == 0)
            return &runnable[i];
    return NULL;
}

int arc4py_chacha20_is_known(const char *name)
{
    const char *const *p;

    for (p = arc4py_chacha20_all_names; *p; p++)
        if (strcmp(*p, name) == 0)
            return 1;
    return 0;
}

const char *arc4py_cpu_features(void)
{
    detect_once();
    return feature_text;
}
