/*
 * arc4py._core's way to the cores.  They are linked into arc4py._keystream
 * only, so a process has one copy of them and of the dispatch state (the
 * CPU features, the active core).  _core.pyx hands that module's table
 * (the capsule ARC4PY_CHACHA20_API_CAPSULE) to arc4py_chacha20_link() at
 * import, before the generator can run; the functions of
 * arc4py/chacha20.h below forward to it, so rng.c calls them as it does
 * where the cores are linked in (the C tests' programs).
 */
#include <stdio.h>
#include <stdlib.h>

#include "arc4py/chacha20.h"
#include "compiler_compat.h"

/* Stored once at import (under the import lock), read-only afterwards. */
static const arc4py_chacha20_api *linked;

int arc4py_chacha20_link(const arc4py_chacha20_api *api)
{
    if (api == NULL || api->size < sizeof(arc4py_chacha20_api))
        return -1;
    rng_store_ptr((const void **)&linked, api);
    return 0;
}

static const arc4py_chacha20_api *cores(void)
{
    const arc4py_chacha20_api *api =
        rng_load_ptr((const void *const *)&linked);

    if (RNG_LIKELY(api != NULL))
        return api;
    /* Only a C caller that skipped importing arc4py._core gets here. */
    fprintf(stderr, "arc4py: the generator ran before arc4py._core linked "
            "the ChaCha20 cores; aborting\n");
    fflush(stderr);
    abort();
}

int arc4py_chacha20_init(uint32_t state[16], const uint8_t key[32],
                         const uint8_t *nonce, size_t nonce_len,
                         uint64_t counter)
{
    return cores()->init(state, key, nonce, nonce_len, counter);
}

const arc4py_chacha20_core *arc4py_chacha20_cores(size_t *count)
{
    return cores()->cores(count);
}

const arc4py_chacha20_core *arc4py_chacha20_find(const char *name)
{
    return cores()->find(name);
}

const char *arc4py_chacha20_known_name(size_t i)
{
    return cores()->known_name(i);
}

int arc4py_chacha20_is_known(const char *name)
{
    return cores()->is_known(name);
}

const char *arc4py_cpu_features(void) { return cores()->cpu_features(); }

const arc4py_chacha20_core *arc4py_chacha20_active(void)
{
    return cores()->active();
}

int arc4py_chacha20_select(const char *name)
{
    return cores()->select(name);
}
