/*
 * The one list of cores, and the only file that knows about CPUs.
 *
 * `table` below is the single source: the runnable list (backends()), the
 * known names (ALL_BACKENDS, the error messages) and the build switches all
 * come from it.  A core is in the table exactly when its source is in this
 * build: ARC4PY_NO_<ISA> (set by setup.py, which then also leaves the file
 * out) removes both.  A core built for another architecture stays known
 * (its name is valid everywhere) but has no function here, so never runs.
 *
 * To add a core: its file chacha20_<isa>.c, its prototype in
 * chacha20_cores.h, one row here (fastest first), its ISA in setup.py.
 */
#include <stdio.h>
#include <string.h>

#include "chacha20_cores.h"
#include "compiler_compat.h"

#ifdef ARC4PY_X86_64
#include <cpuid.h>
#define X86_CORE(fn) fn
#else
#define X86_CORE(fn) NULL
#endif
#ifdef ARC4PY_AARCH64
#define NEON_CORE(fn) fn
#else
#define NEON_CORE(fn) NULL
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

/* The x86 cores need nothing of another architecture's; off x86-64 they
 * need a feature no CPU here reports.  Likewise neon off aarch64. */
#ifdef ARC4PY_X86_64
#define ON_X86(bits) (bits)
#else
#define ON_X86(bits) ((bits) | ARC4PY_CPU_OTHER_ARCH)
#endif
#ifdef ARC4PY_AARCH64
#define ON_ARM(bits) (bits)
#else
#define ON_ARM(bits) ((bits) | ARC4PY_CPU_OTHER_ARCH)
#endif

#ifndef ARC4PY_NO_NEON
#define NEON_ROW \
    {"neon", NEON_CORE(arc4py_chacha20_blocks_neon), ON_ARM(ARC4PY_CPU_NEON)},
#else
#define NEON_ROW
#endif

/* Every core in this build, fastest first; generic last, always runnable. */
static const arc4py_chacha20_core table[] = {
#ifdef __aarch64__
    NEON_ROW /* the fastest core where it runs */
#endif
#ifndef ARC4PY_NO_AVX512
    /* Tails of <= 8 blocks go to the AVX2 core, so it needs AVX2 too. */
    {"avx512", X86_CORE(arc4py_chacha20_blocks_avx512),
     ON_X86(ARC4PY_CPU_AVX512F | ARC4PY_CPU_AVX512VL | ARC4PY_CPU_OS_ZMM |
            ARC4PY_CPU_AVX2 | ARC4PY_CPU_OS_YMM)},
#endif
#ifndef ARC4PY_NO_AVX2
    {"avx2", X86_CORE(arc4py_chacha20_blocks_avx2),
     ON_X86(ARC4PY_CPU_AVX2 | ARC4PY_CPU_OS_YMM)},
#endif
#ifndef ARC4PY_NO_SSSE3
    {"ssse3", X86_CORE(arc4py_chacha20_blocks_ssse3),
     ON_X86(ARC4PY_CPU_SSSE3)},
#endif
#ifndef ARC4PY_NO_SSE2
    {"sse2", X86_CORE(arc4py_chacha20_blocks_sse2), ON_X86(ARC4PY_CPU_SSE2)},
#endif
#ifndef __aarch64__
    NEON_ROW
#endif
    {"generic", arc4py_chacha20_blocks_generic, 0},
};

#define TABLE_LEN (sizeof table / sizeof table[0])

#if !defined(ARC4PY_NO_AVX512) && defined(ARC4PY_NO_AVX2)
#error "the avx512 core hands its tails to the avx2 core: keep both or neither"
#endif

#ifdef ARC4PY_X86_64
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
        features |= ARC4PY_CPU_SSE2;
    if (ecx & (1u << 9))
        features |= ARC4PY_CPU_SSSE3;
    /* OSXSAVE (bit 27) must be set before XGETBV may be executed.  XCR0
       says what the OS saves on every OS (Linux, Windows 7 SP1+, the
       BSDs).  macOS turns AVX-512 state on lazily, at a thread's first
       AVX-512 instruction, so its XCR0 shows no ZMM state and the avx2 core
       runs there: slower than possible, never unsafe. */
    if ((ecx & (1u << 27)) && (ecx & (1u << 28))) {
        uint64_t xcr0 = read_xcr0();
        if ((xcr0 & 0x6) == 0x6) /* XMM and YMM state */
            features |= ARC4PY_CPU_OS_YMM;
        if ((xcr0 & 0xe6) == 0xe6) /* plus opmask, ZMM_Hi256, Hi16_ZMM */
            features |= ARC4PY_CPU_OS_ZMM;
    }
    if (max_leaf >= 7) {
        __cpuid_count(7, 0, eax, ebx, ecx, edx);
        if (ebx & (1u << 5))
            features |= ARC4PY_CPU_AVX2;
        if (ebx & (1u << 16))
            features |= ARC4PY_CPU_AVX512F;
        if (ebx & (1u << 31))
            features |= ARC4PY_CPU_AVX512VL;
    }
    return features;
}
#elif defined(__aarch64__)
static unsigned detect_features(void)
{
#if defined(__linux__) && defined(AT_HWCAP)
    /* HWCAP_ASIMD (bit 1); the aarch64 Linux ABI makes it mandatory. */
    return (getauxval(AT_HWCAP) & (1ul << 1)) ? ARC4PY_CPU_NEON : 0;
#else
    return ARC4PY_CPU_NEON; /* Advanced SIMD is part of ARMv8-A */
#endif
}
#else
static unsigned detect_features(void) { return 0; }
#endif

static const struct {
    unsigned bit;
    const char *name;
} feature_names[] = {
    {ARC4PY_CPU_SSE2, "sse2"},         {ARC4PY_CPU_SSSE3, "ssse3"},
    {ARC4PY_CPU_AVX2, "avx2"},         {ARC4PY_CPU_AVX512F, "avx512f"},
    {ARC4PY_CPU_AVX512VL, "avx512vl"}, {ARC4PY_CPU_OS_YMM, "os-ymm"},
    {ARC4PY_CPU_OS_ZMM, "os-zmm"},     {ARC4PY_CPU_NEON, "neon"},
};

/* Written once under rng_once, read-only afterwards: rng_once orders
 * these writes before every caller's reads. */
static arc4py_chacha20_core runnable[TABLE_LEN];
static size_t runnable_count;
static char feature_text[96];
static int detect_control;

static void detect(void)
{
    unsigned f = detect_features();
    size_t i, used = 0;

    for (i = 0; i < sizeof feature_names / sizeof feature_names[0]; i++) {
        if (!(f & feature_names[i].bit))
            continue;
        used += (size_t)snprintf(feature_text + used,
                                 sizeof feature_text - used, "%s%s",
                                 used ? " " : "", feature_names[i].name);
        if (used >= sizeof feature_text) /* cannot happen: 96 > all names */
            break;
    }
    for (i = 0; i < TABLE_LEN; i++)
        if (table[i].blocks != NULL &&
            (table[i].required & f) == table[i].required)
            runnable[runnable_count++] = table[i];
}

static void detect_once(void)
{
    rng_once(&detect_control, detect);
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

const char *arc4py_chacha20_known_name(size_t i)
{
    return i < TABLE_LEN ? table[i].name : NULL;
}

int arc4py_chacha20_is_known(const char *name)
{
    size_t i;

    for (i = 0; i < TABLE_LEN; i++)
        if (strcmp(table[i].name, name) == 0)
            return 1;
    return 0;
}

const char *arc4py_cpu_features(void)
{
    detect_once();
    return feature_text;
}
