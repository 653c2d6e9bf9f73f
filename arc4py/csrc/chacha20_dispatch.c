/*
 * The only file that knows about CPUs: it turns chacha20_cores.def, the one
 * list of cores, into the runnable list (backends()) and the known names
 * (ALL_BACKENDS, the error messages).
 *
 * A core's file says what it built (chacha20_cores.h): a function, none
 * for this architecture (the name stays known, never runnable), or none
 * because ARC4PY_NO_<ISA> left it out (the name is unknown too, and listed
 * by arc4py_chacha20_left_out()).
 */
#include <stdio.h>
#include <string.h>

#include "chacha20_cores.h"
#include "compiler_compat.h"

#ifdef ARC4PY_X86_64
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

struct core_row {
    const char *name;
    const struct arc4py_core_build *build;
    unsigned required;
};

/* chacha20_cores.def's rows, fastest first; generic follows them all. */
static const struct core_row rows[] = {
#define ARC4PY_CORE(isa, registers, builds_with, cpu_features)            \
    {#isa, &arc4py_core_build_##isa, cpu_features},
#include "chacha20_cores.def"
#undef ARC4PY_CORE
};

#define ROW_COUNT (sizeof rows / sizeof rows[0])

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
static arc4py_chacha20_core runnable[ROW_COUNT + 1];
static size_t runnable_count;
/* Every name in this build: this architecture's rows, then the others',
 * then generic; NULL-terminated. */
static const char *known[ROW_COUNT + 2];
static char feature_text[96];
static int detect_control;

static void detect(void)
{
    static const arc4py_chacha20_core generic = {
        "generic", arc4py_chacha20_blocks_generic};
    unsigned f = detect_features();
    size_t i, used = 0, known_count = 0;

    for (i = 0; i < sizeof feature_names / sizeof feature_names[0]; i++) {
        if (!(f & feature_names[i].bit))
            continue;
        used += (size_t)snprintf(feature_text + used,
                                 sizeof feature_text - used, "%s%s",
                                 used ? " " : "", feature_names[i].name);
        if (used >= sizeof feature_text) /* cannot happen: 96 > all names */
            break;
    }
    for (i = 0; i < ROW_COUNT; i++) {
        const struct core_row *row = &rows[i];

        if (row->build->presence != ARC4PY_CORE_BUILT)
            continue;
        known[known_count++] = row->name;
        if ((row->required & f) == row->required) {
            arc4py_chacha20_core core = {row->name, row->build->blocks};
            runnable[runnable_count++] = core;
        }
    }
    for (i = 0; i < ROW_COUNT; i++)
        if (rows[i].build->presence == ARC4PY_CORE_OTHER_ARCH)
            known[known_count++] = rows[i].name;
    known[known_count] = generic.name;
    runnable[runnable_count++] = generic;
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
    detect_once();
    /* Past generic the array is zeros (static storage): NULL. */
    return i < sizeof known / sizeof known[0] ? known[i] : NULL;
}

int arc4py_chacha20_is_known(const char *name)
{
    size_t i;

    detect_once();
    for (i = 0; known[i] != NULL; i++)
        if (strcmp(known[i], name) == 0)
            return 1;
    return 0;
}

const char *arc4py_chacha20_left_out(size_t i)
{
    size_t r;

    for (r = 0; r < ROW_COUNT; r++) {
        enum arc4py_core_presence p = rows[r].build->presence;

        if (p == ARC4PY_CORE_LEFT_OUT && i-- == 0)
            return rows[r].name;
    }
    return NULL;
}

const char *arc4py_cpu_features(void)
{
    detect_once();
    return feature_text;
}

/* Written by arc4py_chacha20_select(), else once by the first reader;
   racing first readers store the same pointer. */
static const arc4py_chacha20_core *selected;

const arc4py_chacha20_core *arc4py_chacha20_active(void)
{
    const arc4py_chacha20_core *core =
        rng_load_ptr((const void *const *)&selected);
    size_t count;

    if (RNG_LIKELY(core != NULL))
        return core;
    core = &arc4py_chacha20_cores(&count)[0];
    rng_store_ptr((const void **)&selected, core);
    return core;
}

int arc4py_chacha20_select(const char *name)
{
    const arc4py_chacha20_core *core = arc4py_chacha20_find(name);

    if (core == NULL)
        return -1;
    rng_store_ptr((const void **)&selected, core);
    return 0;
}
