/*
 * Test hooks, compiled in only with ARC4PY_TEST_HOOKS (a normal build
 * answers -1): a copy of the calling thread's keystream buffer with the
 * number of unread bytes at its end, and a count of reseeds.  Declared in
 * rng_test_hooks.h, not in the public header.
 */
#include "rng_internal.h"

#ifdef ARC4PY_TEST_HOOKS
const int arc4py_rng_test_hooks = 1;

int arc4py_rng_debug_buffer(uint8_t *out, size_t out_len, size_t *left)
{
    struct rng_state *s = rng_tls_state;

    if (s == NULL || out_len < sizeof s->buf)
        return -1;
    memcpy(out, s->buf, sizeof s->buf);
    *left = s->left;
    return 0;
}

long arc4py_rng_debug_reseeds(void)
{
    return rng_load_long(&rng_reseed_count);
}
#else
const int arc4py_rng_test_hooks = 0;

int arc4py_rng_debug_buffer(uint8_t *out, size_t out_len, size_t *left)
{
    (void)out;
    (void)out_len;
    (void)left;
    return -1;
}

long arc4py_rng_debug_reseeds(void) { return -1; }
#endif
