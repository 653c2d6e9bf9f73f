/*
 * An LD_PRELOAD shim for the entropy tests: it defines getrandom(), so calls
 * the generator makes through the C library land here instead.
 *
 * GETRANDOM_SHIM selects the behaviour (read at the first call):
 *   ok          pass every call through to the kernel (the default)
 *   eperm       fail with EPERM
 *   enosys      fail with ENOSYS (no getrandom: the caller must fall back)
 *   eintr:N     fail with EINTR N times, then pass through
 *   zero        return 0 (no bytes, no error), as a seccomp rule can
 *   vdso        answer without the getrandom system call (from /dev/urandom),
 *               as glibc >= 2.41 does from the vDSO: a seccomp rule on the
 *               system call cannot refuse it
 * GETRANDOM_SHIM_CALLER, if set, limits the shim to calls made from a loaded
 * object in a folder of exactly that name ("arc4py": the package's extension
 * modules), so the interpreter's own calls (hash seeds; a free-threaded
 * build's mimalloc) pass through untouched and uncounted, even where the
 * interpreter's own path contains the word.
 *
 * Tests reach the counters and can change the mode later through ctypes:
 * getrandom_shim_calls(), getrandom_shim_eintr_left(), getrandom_shim_set(),
 * and getrandom_shim_unheld(): the calls made while the calling thread
 * could take an asynchronous signal (SIGUSR1 not blocked), in which a vDSO
 * getrandom's key and working state could land in a signal frame.
 *
 * The shim also wraps mmap(), madvise() and mlock() for the same callers;
 * they pass through until a test asks, through ctypes, for
 *   shim_fail_mmap(1)             anonymous mmap() fails with ENOMEM
 *   shim_fail_madvise(advice)     madvise(advice) fails with EINVAL (0: none)
 *   shim_fail_mlock(1)            mlock() fails with ENOMEM
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

enum { MODE_OK, MODE_EPERM, MODE_ENOSYS, MODE_EINTR, MODE_ZERO, MODE_VDSO };

static int mode = -1;
static long eintr_left;
static long calls, unheld;

static void read_env(void)
{
    const char *m = getenv("GETRANDOM_SHIM");

    mode = MODE_OK;
    if (m == NULL)
        return;
    if (strcmp(m, "eperm") == 0)
        mode = MODE_EPERM;
    else if (strcmp(m, "enosys") == 0)
        mode = MODE_ENOSYS;
    else if (strcmp(m, "zero") == 0)
        mode = MODE_ZERO;
    else if (strcmp(m, "vdso") == 0)
        mode = MODE_VDSO;
    else if (strncmp(m, "eintr:", 6) == 0) {
        mode = MODE_EINTR;
        eintr_left = strtol(m + 6, NULL, 10);
    }
}

static int caller_matches(void *ret)
{
    const char *want = getenv("GETRANDOM_SHIM_CALLER");
    const char *end, *start;
    Dl_info info;
    size_t n;

    if (want == NULL || *want == '\0')
        return 1;
    n = strlen(want);
    if (dladdr(ret, &info) == 0 || info.dli_fname == NULL)
        return 0;
    end = strrchr(info.dli_fname, '/');   /* the object's folder ends here */
    if (end == NULL || (size_t)(end - info.dli_fname) < n)
        return 0;
    start = end - n;
    return memcmp(start, want, n) == 0 && (start == info.dli_fname || start[-1] == '/');
}

/* len bytes with no getrandom system call: what a vDSO answer looks like
   to a seccomp filter. */
static ssize_t without_syscall(void *buf, size_t len)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    size_t done = 0;

    if (fd < 0)
        return -1;
    while (done < len) {
        ssize_t r = read(fd, (char *)buf + done, len - done);
        if (r <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)r;
    }
    close(fd);
    return (ssize_t)len;
}

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
    if (mode < 0)
        read_env();
    if (caller_matches(__builtin_return_address(0))) {
        sigset_t now;

        __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
        if (pthread_sigmask(SIG_BLOCK, NULL, &now) == 0 && !sigismember(&now, SIGUSR1))
            __atomic_fetch_add(&unheld, 1, __ATOMIC_RELAXED);
        switch (mode) {
        case MODE_EPERM:
            errno = EPERM;
            return -1;
        case MODE_ENOSYS:
            errno = ENOSYS;
            return -1;
        case MODE_ZERO:
            return 0;
        case MODE_VDSO:
            return without_syscall(buf, len);
        case MODE_EINTR:
            if (__atomic_fetch_sub(&eintr_left, 1, __ATOMIC_RELAXED) > 0) {
                errno = EINTR;
                return -1;
            }
            __atomic_store_n(&eintr_left, 0, __ATOMIC_RELAXED);
            break;
        default:
            break;
        }
    }
    return syscall(SYS_getrandom, buf, len, flags);
}

long getrandom_shim_calls(void) { return __atomic_load_n(&calls, __ATOMIC_RELAXED); }

long getrandom_shim_unheld(void) { return __atomic_load_n(&unheld, __ATOMIC_RELAXED); }

long getrandom_shim_eintr_left(void)
{
    return __atomic_load_n(&eintr_left, __ATOMIC_RELAXED);
}

/* Switch behaviour from inside the process: name as in GETRANDOM_SHIM. */
int getrandom_shim_set(const char *name)
{
    if (strcmp(name, "ok") == 0)
        mode = MODE_OK;
    else if (strcmp(name, "eperm") == 0)
        mode = MODE_EPERM;
    else if (strcmp(name, "enosys") == 0)
        mode = MODE_ENOSYS;
    else if (strcmp(name, "zero") == 0)
        mode = MODE_ZERO;
    else if (strcmp(name, "vdso") == 0)
        mode = MODE_VDSO;
    else if (strncmp(name, "eintr:", 6) == 0) {
        eintr_left = strtol(name + 6, NULL, 10);
        mode = MODE_EINTR;
    } else
        return -1;
    return 0;
}

/* ---- mmap(), madvise() and mlock() -------------------------------------- */

static int fail_mmap;
static int fail_advice;
static int fail_mlock;

void shim_fail_mmap(int on) { __atomic_store_n(&fail_mmap, on, __ATOMIC_RELAXED); }
void shim_fail_madvise(int advice) { __atomic_store_n(&fail_advice, advice, __ATOMIC_RELAXED); }
void shim_fail_mlock(int on) { __atomic_store_n(&fail_mlock, on, __ATOMIC_RELAXED); }

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    static void *(*real)(void *, size_t, int, int, int, off_t);

    if (__atomic_load_n(&fail_mmap, __ATOMIC_RELAXED) && (flags & MAP_ANONYMOUS) &&
        caller_matches(__builtin_return_address(0))) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    if (real == NULL)
        real = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
    return real(addr, len, prot, flags, fd, off);
}

int madvise(void *addr, size_t len, int advice)
{
    static int (*real)(void *, size_t, int);
    int fail = __atomic_load_n(&fail_advice, __ATOMIC_RELAXED);

    if (fail != 0 && advice == fail && caller_matches(__builtin_return_address(0))) {
        errno = EINVAL;
        return -1;
    }
    if (real == NULL)
        real = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "madvise");
    return real(addr, len, advice);
}

/* As RLIMIT_MEMLOCK refuses it (a root process is exempt from the limit). */
int mlock(const void *addr, size_t len)
{
    static int (*real)(const void *, size_t);

    if (__atomic_load_n(&fail_mlock, __ATOMIC_RELAXED) &&
        caller_matches(__builtin_return_address(0))) {
        errno = ENOMEM;
        return -1;
    }
    if (real == NULL)
        real = (int (*)(const void *, size_t))dlsym(RTLD_NEXT, "mlock");
    return real(addr, len);
}
