/*
 * The platform layer on Windows (10 and later; x64 and arm64): entropy from
 * ProcessPrng (bcryptprimitives.dll, the system's per-process CSPRNG,
 * which cannot fail) or, where it is missing, BCryptGenRandom with the
 * system-preferred RNG; each thread's state in VirtualAlloc()ed pages,
 * locked where the working-set quota allows, wiped and freed by a TLS
 * callback when the thread exits.  Windows has no fork, so
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

int rng_platform_fork_window(void) { return 0; } /* no fork */
int rng_platform_on_signal_stack(void) { return 1; } /* cannot say */

static INIT_ONCE init_once = INIT_ONCE_STATIC_INIT;
static process_prng_fn process_prng;
/* Live states whose pages VirtualLock refused (the working-set quota). */
static LONG unlocked_states;
/* The calling thread's state is one of unlocked_states. */
static RNG_TLS int tls_state_unlocked;

/*
 * Thread exit, and the exit of the thread that ends the process: the state
 * goes with its thread.  A TLS callback, not an FLS one: the state is found
 * through the thread's TLS, so it must live exactly as long as the thread,
 * whichever fiber made it, and no fiber's deletion may free it.  The loader
 * calls it for every thread, those that began before this module loaded
 * included, while the thread's TLS still holds the state.
 */
static void NTAPI state_exit(PVOID module, DWORD reason, PVOID reserved)
{
    MEMORY_BASIC_INFORMATION info;
    void *pages = (void *)rng_tls_state;

    (void)module;
    (void)reserved;
    if ((reason != DLL_THREAD_DETACH && reason != DLL_PROCESS_DETACH) ||
        pages == NULL)
        return;
    /* A later callback that draws makes a new state, never this one. */
    rng_tls_state = NULL;
    if (tls_state_unlocked) {
        tls_state_unlocked = 0;
        InterlockedDecrement(&unlocked_states);
    }
    if (VirtualQuery(pages, &info, sizeof info) == sizeof info)
        rng_wipe(pages, info.RegionSize);
    VirtualFree(pages, 0, MEM_RELEASE);
}

/* First in the image's TLS callback array (.CRT$XLA to .CRT$XLZ, called in
   name order): with GCC's emulated TLS, winpthreads' callback (XLF) frees
   the thread's TLS block, rng_tls_state with it. */
#ifdef RNG_MSVC
#pragma section(".CRT$XLB", long, read)
#pragma comment(linker, "/INCLUDE:_tls_used")
#pragma comment(linker, "/INCLUDE:rng_tls_exit_callback")
__declspec(allocate(".CRT$XLB"))
#else
__attribute__((section(".CRT$XLB"), used))
#endif
const PIMAGE_TLS_CALLBACK rng_tls_exit_callback = state_exit;

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
    void *p = VirtualAlloc(NULL, bytes, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);

    if (p == NULL)
        return ENOMEM;
    /* Out of the page file where the working-set quota allows. */
    if (!VirtualLock(p, bytes)) {
        tls_state_unlocked = 1;
        InterlockedIncrement(&unlocked_states);
    }
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

/* No signals run on a thread's stack, and no fork to read one. */
void rng_platform_signals_hold(struct rng_signal_mask *saved) { (void)saved; }
void rng_platform_signals_release(const struct rng_signal_mask *saved)
{
    (void)saved;
}

void rng_platform_facts(const char **entropy_source, const char **state_lock,
                        const char **exit_wipe)
{
    *entropy_source = process_prng != NULL ? "ProcessPrng" : "BCryptGenRandom";
    *state_lock = InterlockedCompareExchange(&unlocked_states, 0, 0) == 0
                      ? "VirtualLock" : NULL;
    *exit_wipe = "TLS callback";
}
#endif
