/*
 * An LD_PRELOAD shim for the entropy tests: it defines getrandom(), so calls
 * the generator makes through the C library land here instead.
 *
 * GETRANDOM_SHIM selects the behaviour (read at the first call):
 *   ok          pass every call through to the kernel (the default)
 *   eperm       fail with EPERM
 *   enosys      fail with ENOSYS (no getrandom: the caller must fall back)
 *   eintr:N     fail with EINTR N times, then pass through
 * GETRANDOM_SHIM_CALLER, if set, limits the shim to calls made from a loaded
 * object whose path contains that string (so the interpreter's own calls,
 * e.g. for hash seeds, pass through untouched and uncounted).
 *
 * Tests reach the counters and can change the mode later through ctypes:
 * getrandom_shim_calls(), getrandom_shim_eintr_left(), getrandom_shim_set().
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

enum { MODE_OK, MODE_EPERM, MODE_ENOSYS, MODE_EINTR };

static int mode = -1;
static long eintr_left;
static long calls;

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
    else if (strncmp(m, "eintr:", 6) == 0) {
        mode = MODE_EINTR;
        eintr_left = strtol(m + 6, NULL, 10);
    }
}

static int caller_matches(void *ret)
{
    const char *want = getenv("GETRANDOM_SHIM_CALLER");
    Dl_info info;

    if (want == NULL || *want == '\0')
        return 1;
    if (dladdr(ret, &info) == 0 || info.dli_fname == NULL)
        return 0;
    return strstr(info.dli_fname, want) != NULL;
}

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
    if (mode < 0)
        read_env();
    if (caller_matches(__builtin_return_address(0))) {
        __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
        switch (mode) {
        case MODE_EPERM:
            errno = EPERM;
            return -1;
        case MODE_ENOSYS:
            errno = ENOSYS;
            return -1;
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
    else if (strncmp(name, "eintr:", 6) == 0) {
        eintr_left = strtol(name + 6, NULL, 10);
        mode = MODE_EINTR;
    } else
        return -1;
    return 0;
}
