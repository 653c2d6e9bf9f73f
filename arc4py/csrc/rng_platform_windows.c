/*
 * The platform layer on Windows (10 and later; x64 and arm64): entropy from
 * ProcessPrng (bcryptprimitives.dll, the system's per-process CSPRNG,
 * which cannot fail) or, where it is missing, BCryptGenRandom with the
 * system-preferred RNG; each thread's state in VirtualAlloc()ed pages,
 * locked where the working-set quota allows, wiped and freed by a fiber
 * local storage callback when the thread exits.  Windows has no fork, so
 * no fork protection is needed or reported; it has no VM-clone mix source.
 * Compiles to nothing elsewhere.
 *
 * Run here under Wine (x64, built by mingw-w64 clang); not run on Windows
 * itself; the MSVC build is compiled by no machine here.
 */
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN 1
#include <windows.h>
#include <bcrypt.h>

#include <errno.h>

#include "rng_platform.h"
#include "rng_wipe.h"

#ifndef BCRYPT_USE_SYSTEM_PREFERRED_RNG
#define BCRYPT_USE_SYSTEM_PREFERRED_RNG 0x00000002
#endif

typedef BOOL(WINAPI *process_prng_fn)(PBYTE data, SIZE_T len);

RNG_TLS struct rng_state *rng_tls_state;
unsigned long rng_fork_generation; /* no fork: stays 0 */

static INIT_ONCE init_once = INIT_ONCE_STATIC_INIT;
static DWORD fls_index = FLS_OUT_OF_INDEXES;
static process_prng_fn process_prng;
/* Live states whose pages VirtualLock refused (the working-set quota). */
static LONG unlocked_states;

/* The low bit of a state's FLS value marks it one of unlocked_states
   (VirtualAlloc's 64 KiB alignment leaves the bit free). */
#define STATE_UNLOCKED ((uintptr_t)1)

/* Thread exit (and fiber deletion): the state goes with its thread. */
static void WINAPI state_exit(void *value)
{
    MEMORY_BASIC_INFORMATION info;
    void *pages = (void *)((uintptr_t)value & ~STATE_UNLOCKED);

    if (pages == NULL)
        return;
    if (pages != value)
        InterlockedDecrement(&unlocked_states);
    /* A later callback that draws makes a new state, never this one. */
    if ((void *)rng_tls_state == pages)
        rng_tls_state = NULL;
    if (VirtualQuery(pages, &info, sizeof info) == sizeof info)
        rng_wipe(pages, info.RegionSize);
    VirtualFree(pages, 0, MEM_RELEASE);
}

static BOOL CALLBACK init_globals(INIT_ONCE *once, void *param, void **ctx)
{
    HMODULE prims;

    (void)once;
    (void)param;
    (void)ctx;
    /* System32 only: a DLL of that name elsewhere on the path is not ours. */
    prims = LoadLibraryExW(L"bcryptprimitives.dll", NULL,
                           LOAD_LIBRARY_SEARCH_SYSTEM32);
    if (prims != NULL)
        process_prng = (process_prng_fn)(void (*)(void))GetProcAddress(
            prims, "ProcessPrng");
    fls_index = FlsAlloc(state_exit);
    return TRUE;
}

static void init(void)
{
    (void)InitOnceExecuteOnce(&init_once, init_globals, NULL, NULL);
}

int rng_platform_entropy(uint8_t *p, size_t n)
{
    init();
    if (process_prng != NULL)
        return process_prng(p, n) ? 0 : EIO; /* documented never to fail */
    while (n) {
        ULONG m = n < 0x40000000u ? (ULONG)n : 0x40000000u;

        if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, p, m,
                                            BCRYPT_USE_SYSTEM_PREFERRED_RNG)))
            return EIO;
        p += m;
        n -= m;
    }
    return 0;
}

int rng_platform_state_new(size_t bytes, struct rng_state **out)
{
    void *p;
    uintptr_t unlocked;

    init();
    if (fls_index == FLS_OUT_OF_INDEXES)
        return EAGAIN;
    p = VirtualAlloc(NULL, bytes, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
    if (p == NULL)
        return ENOMEM;
    /* Out of the page file where the working-set quota allows. */
    unlocked = VirtualLock(p, bytes) ? 0 : STATE_UNLOCKED;
    if (!FlsSetValue(fls_index, (void *)((uintptr_t)p | unlocked))) {
        VirtualFree(p, 0, MEM_RELEASE);
        return ENOMEM;
    }
    if (unlocked)
        InterlockedIncrement(&unlocked_states);
    rng_tls_state = p;
    *out = p;
    return 0;
}

int rng_platform_vm_mix(uint8_t *out, size_t n)
{
    (void)out;
    (void)n;
    return ENOTSUP;
}

unsigned rng_platform_protections(void) { return 0; }

void rng_platform_facts(const char **entropy_source, const char **state_lock,
                        const char **exit_wipe)
{
    *entropy_source = process_prng != NULL ? "ProcessPrng" : "BCryptGenRandom";
    *state_lock = InterlockedCompareExchange(&unlocked_states, 0, 0) == 0
                      ? "VirtualLock" : NULL;
    *exit_wipe = "FLS callback";
}
#endif
