/*
 * Is the vDSO getrandom called where it should be?  Built from arc4py's C
 * sources with ARC4PY_TEST_HOOKS (tests/c/test_c_programs.py): one call per refill
 * and one per direct-fill chunk while "vdso" is reported, none without it.
 * Also checks the buffer after each refill (rekey bytes and bytes handed
 * out zero, the rest not).  The verdict (tests/c/verdict.h) has the fact
 * "vdso", 1 when the generator reports it.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rng_internal.h"
#include "verdict.h"

static uint8_t big[3 << 20];

static int buffer_ok(size_t handed)
{
    uint8_t buf[ARC4PY_RNG_BUFFER_BYTES];
    size_t left, used, i, nonzero = 0;

    if (arc4py_rng_debug_buffer(buf, sizeof buf, &left) != 0)
        return 0;
    used = sizeof buf - left;
    if (used != RNG_REKEY_BYTES + handed)
        return 0;
    for (i = 0; i < used; i++)
        if (buf[i])
            return 0;
    for (; i < sizeof buf; i++)
        nonzero += buf[i] != 0;
    return nonzero > left / 2;
}

int main(void)
{
    uint8_t b[100];
    long before, refill_calls, direct_calls;
    int i, vdso = (arc4py_rng_fork_protection() & ARC4PY_FORK_VDSO) != 0;

    /* 10 refills: each stir empties the buffer, the draw refills it. */
    before = rng_load_long(&rng_vm_mix_calls);
    for (i = 0; i < 10; i++) {
        if (arc4py_rng_stir() != 0 || arc4py_rng_buf(b, sizeof b) != 0)
            return 2;
        verdict_check(buffer_ok(sizeof b), "the buffer after refill %d: "
                      "rekey bytes and bytes handed out zero, the rest not", i);
    }
    refill_calls = rng_load_long(&rng_vm_mix_calls) - before;
    /* A 3 MiB fill: chunks of ARC4PY_RNG_DIRECT_CHUNK_BYTES, one more at
       each reseed point (at most 4 in 3 MiB: every 768 KiB to 1 MiB), and
       a refill for the one-time keys after each reseed. */
    if (arc4py_rng_stir() != 0)
        return 2;
    before = rng_load_long(&rng_vm_mix_calls);
    if (arc4py_rng_buf(big, sizeof big) != 0)
        return 2;
    direct_calls = rng_load_long(&rng_vm_mix_calls) - before;
    if (vdso)
        verdict_check(refill_calls == 10 &&
                      direct_calls >= (long)(sizeof big / ARC4PY_RNG_DIRECT_CHUNK_BYTES) &&
                      direct_calls <= (long)(sizeof big / ARC4PY_RNG_DIRECT_CHUNK_BYTES) + 4 + 4,
                      "vdso: %ld calls over 10 refills, %ld over a 3 MiB fill",
                      refill_calls, direct_calls);
    else
        verdict_check(refill_calls == 0 && direct_calls == 0,
                      "no vdso: %ld calls over 10 refills, %ld over a 3 MiB fill",
                      refill_calls, direct_calls);
    return verdict_end("\"vdso\": %d", vdso);
}
