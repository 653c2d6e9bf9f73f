/*
 * arc4py_rng_uniform_words failing inside its rejection loop: the OS
 * refuses the reseed a rejected word's new draw needs.  Every word is
 * wiped, those already mapped too, as every call of the generator wipes
 * its output on failure (generator.h).
 *
 * Words: 0xFFFFFFFF (mapped to 2 below 3 before the failure), 0 (its low
 * product 0 is below 2**32 mod 3 = 1: rejected, drawn again) and 7 (not
 * reached).  The draw again fails: stir_all() made the state reseed, and
 * this program's getrandom() fails from then on.
 *
 * Verdict (tests/c/verdict.h) facts: "err" (the call's errno value), "left"
 * (words not zero after it).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "generator.h"
#include "verdict.h"

static int refuse;

/* The generator's getrandom() calls land here: the kernel's, or EIO. */
ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
    if (refuse) {
        errno = EIO;
        return -1;
    }
    return syscall(SYS_getrandom, buf, len, flags);
}

int main(void)
{
    uint32_t v[3] = {0xFFFFFFFFu, 0, 7}, r;
    int err, left = 0, i;

    if (arc4py_rng_u32(&r) != 0)
        return 2;
    refuse = 1;
    (void)arc4py_rng_stir_all(); /* fails: the next draw reseeds */
    err = arc4py_rng_uniform_words(v, 3, 3);
    for (i = 0; i < 3; i++)
        left += v[i] != 0;
    verdict_check(err != 0, "the draw again failed (errno %d)", err);
    verdict_check(left == 0, "every word wiped (%d of 3 not zero: %u %u %u)",
                  left, v[0], v[1], v[2]);
    return verdict_end("\"err\": %d, \"left\": %d", err, left);
}
