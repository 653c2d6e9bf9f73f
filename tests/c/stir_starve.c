/*
 * stir_all() during every pass of a large fill: how many passes before
 * the fill returns?
 *
 * A stir_all that begins during a fill makes the whole fill be drawn
 * again, so stir_all called more often than a fill lasts would restart it
 * for ever.  Here the test log (a build with ARC4PY_TEST_HOOKS) calls
 * stir_all at every chunk of a 256 KiB fill, up to CAP chunks (then it
 * stops, so a generator without a bound ends too).  The fill must give up
 * after a bounded number of passes with EAGAIN and wiped output, and a fill
 * afterwards, with no stir_all, must succeed.
 *
 * Verdict (tests/c/verdict.h) facts: "err" (the starved fill's errno
 * value), "passes" (chunk 0 of the fill begun, counted), "after" (the
 * errno value of the next fill).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "generator.h"
#include "rng_test_hooks.h"
#include "verdict.h"

#define FILL (256u * 1024)
#define CAP 4000

static uint8_t out[FILL];
static int starving;
static long chunks, passes;

static void logger(int event, const void *p, size_t n)
{
    (void)p;
    (void)n;
    if (event != ARC4PY_RNG_LOG_DIRECT || !starving || chunks >= CAP)
        return;
    /* Every pass writes the fill's four 64 KiB chunks. */
    if (chunks++ % (FILL / ARC4PY_RNG_DIRECT_CHUNK_BYTES) == 0)
        passes++;
    arc4py_rng_stir_all(); /* EBUSY here (inside the fill): the generation moves */
}

int main(void)
{
    size_t i;
    int err, after, wiped = 1;

    if (!arc4py_rng_test_hooks)
        return 2;
    arc4py_rng_debug_log = logger;
    starving = 1;
    err = arc4py_rng_buf(out, sizeof out);
    starving = 0;
    for (i = 0; i < sizeof out; i++)
        wiped &= out[i] == 0;
    after = arc4py_rng_buf(out, sizeof out);
    verdict_check(err == EAGAIN, "a fill stirred at every chunk gives up with "
                  "EAGAIN (%d) rather than restart for ever (%ld passes, %ld "
                  "chunks)", err, passes, chunks);
    verdict_check(err == 0 || wiped, "its output is wiped");
    verdict_check(after == 0, "the next fill succeeds (%d)", after);
    return verdict_end("\"err\": %d, \"passes\": %ld, \"after\": %d", err,
                       passes, after);
}
