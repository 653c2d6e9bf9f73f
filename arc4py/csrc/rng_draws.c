/*
 * The generator's calls over its byte stream (rng_requests.c): typed draws, the
 * bounded draw, the core's choice and name, the OS facts, and the abort
 * for callers that cannot report an error.
 */
#include "rng_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int arc4py_rng_buf(void *buf, size_t n) { return rng_take(buf, n); }
int arc4py_rng_u32(uint32_t *out) { return rng_take(out, 4); }
int arc4py_rng_u64(uint64_t *out) { return rng_take(out, 8); }

/* Lemire's multiply-shift with rejection of the biased low products:
   each of the n random words at v mapped into [0, upper_bound) in place,
   a word whose low product is biased drawn again.  On failure all n are
   wiped, those already mapped too. */
int arc4py_rng_uniform_words(uint32_t *v, size_t n, uint32_t upper_bound)
{
    uint32_t r, threshold;
    uint64_t m;
    size_t i;
    int err;

    if (upper_bound == 0) /* 2**32: every value is fair */
        return 0;
    /* 2**32 mod n: a division, paid only where a low product may be
       biased (below n) */
    threshold = 0;
    for (i = 0; i < n; i++) {
        m = (uint64_t)v[i] * upper_bound;
        if ((uint32_t)m < upper_bound && threshold == 0)
            threshold = (uint32_t)(-upper_bound) % upper_bound;
        while ((uint32_t)m < threshold) {
            if ((err = arc4py_rng_u32(&r)) != 0) {
                rng_wipe(v, n * sizeof *v);
                return err;
            }
            m = (uint64_t)r * upper_bound;
        }
        v[i] = (uint32_t)(m >> 32);
    }
    return 0;
}

int arc4py_rng_uniform(uint32_t upper_bound, uint32_t *out)
{
    int err = arc4py_rng_u32(out);

    return err ? err : arc4py_rng_uniform_words(out, 1, upper_bound);
}

int arc4py_rng_select_core(const char *name)
{
    return arc4py_chacha20_select(name);
}

const char *arc4py_rng_core_name(void) { return arc4py_chacha20_active()->name; }

int arc4py_rng_os_facts(const char **entropy_source, const char **state_lock,
                        const char **exit_wipe)
{
    uint8_t byte;
    int err = arc4py_rng_buf(&byte, 1);

    if (err == 0)
        rng_platform_facts(entropy_source, state_lock, exit_wipe);
    return err;
}

RNG_COLD_NOINLINE void rng_abort(int err, const char *inside)
{
    const char *what = err == ENOMEM
        ? "no memory could be mapped for this thread's generator state"
        : "the OS could not provide entropy";

    fprintf(stderr, "arc4py: %s (errno %d: %s) inside %s, which cannot "
            "report errors; aborting rather than returning numbers that are "
            "not random\n", what, err, strerror(err), inside);
    fflush(stderr);
    abort();
}
