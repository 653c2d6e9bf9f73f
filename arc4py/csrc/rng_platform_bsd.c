/*
 * The platform layer on FreeBSD and macOS (and the other BSDs): entropy
 * from getentropy() (the kernel's CSPRNG, at most 256 bytes a call), state
 * pages zeroed in a forked child where the kernel can (FreeBSD's
 * minherit(INHERIT_ZERO); macOS has no such inheritance, so the atfork
 * handler is its only fork protection), left out of core dumps
 * (MADV_NOCORE, FreeBSD).  No VM-clone mix source.
 * Compiles to nothing elsewhere.
 *
 * Compiled and linked here for x86-64 and arm64 FreeBSD and macOS, not run.
 */
#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__NetBSD__) || \
    defined(__OpenBSD__) || defined(__DragonFly__)
#include "rng_platform.h"
#include "rng_platform_posix.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>
#ifdef __APPLE__
#include <sys/random.h> /* getentropy (macOS 10.12+) */
#endif

/* getentropy's limit per call (POSIX.1-2024's GETENTROPY_MAX). */
#define RNG_GETENTROPY_MAX 256

/* getentropy() never waits once the system is up: nonblock is moot. */
int rng_os_entropy(uint8_t **p, size_t *n, int nonblock)
{
    (void)nonblock;
    while (*n) {
        size_t m = *n < RNG_GETENTROPY_MAX ? *n : RNG_GETENTROPY_MAX;

        if (getentropy(*p, m) != 0) {
            if (errno == EINTR)
                continue;
            return errno ? errno : EIO;
        }
        *p += m;
        *n -= m;
    }
    return 0;
}

const char *rng_os_entropy_source(void) { return "getentropy"; }

unsigned rng_os_protect_pages(void *p, size_t bytes)
{
    unsigned granted = 0;

    (void)p; /* macOS has neither call */
    (void)bytes;
#ifdef INHERIT_ZERO
    /* A child, even one made by a raw fork syscall, reads zeros here. */
    if (minherit(p, bytes, INHERIT_ZERO) == 0)
        granted |= ARC4PY_FORK_WIPEONFORK;
#endif
#ifdef MADV_NOCORE
    if (madvise(p, bytes, MADV_NOCORE) == 0)
        granted |= ARC4PY_DONTDUMP;
#endif
    return granted;
}

void rng_os_vm_mix_init(void) {}
void *rng_os_vm_mix_new(void) { return NULL; }
void rng_os_vm_mix_free(void *opaque) { (void)opaque; }

int rng_os_vm_mix_read(void *opaque, uint8_t *out, size_t n)
{
    (void)opaque;
    (void)out;
    (void)n;
    return ENOTSUP;
}

int rng_os_vm_mix_healthy(void) { return 0; }
#endif
