/*
 * Hot-path microbenchmark of the C generator (not run by the tests):
 * ns per arc4py_rng_u32, per 16- and 128-byte arc4py_rng_buf, and per
 * 4 KiB, 64 KiB and 1 MiB direct fill.  Build it from any
 * checkout's sources to compare two versions:
 *   cc -O3 -Iarc4py/csrc arc4py/csrc/[a-z]*.c tests/c/hotpath_bench.c -lpthread
 * With -DSCRUB it also times rng_stack_scrub() alone (current sources only).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "generator.h"

#ifdef SCRUB
void rng_stack_scrub(void);
#endif

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint8_t big[1 << 20];

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 50000000L, i;
    uint32_t x = 0, r;
    uint8_t b[128];
    double t;

    if (argc > 2 && arc4py_rng_select_core(argv[2]) != 0)
        return 2;
    arc4py_rng_u32(&r);
    t = now();
    for (i = 0; i < n; i++) {
        arc4py_rng_u32(&r);
        x ^= r;
    }
    printf("u32      %.2f ns/call\n", (now() - t) * 1e9 / n);
    t = now();
    for (i = 0; i < n / 4; i++) {
        arc4py_rng_buf(b, 16);
        x ^= b[3];
    }
    printf("buf(16)  %.2f ns/call\n", (now() - t) * 1e9 / (n / 4));
    t = now();
    for (i = 0; i < n / 16; i++) {
        arc4py_rng_buf(b, 128);
        x ^= b[3];
    }
    printf("buf(128) %.2f ns/call\n", (now() - t) * 1e9 / (n / 16));
    t = now();
    for (i = 0; i < n / 400; i++)
        arc4py_rng_buf(big, 4096);
    printf("fill 4K  %.1f ns/call\n", (now() - t) * 1e9 / (n / 400));
    t = now();
    for (i = 0; i < n / 6000; i++)
        arc4py_rng_buf(big, 65536);
    printf("fill 64K %.2f us/call\n", (now() - t) * 1e6 / (n / 6000));
    t = now();
    for (i = 0; i < 200; i++)
        arc4py_rng_buf(big, sizeof big);
    printf("fill 1M  %.1f us/call\n", (now() - t) * 1e6 / 200);
#ifdef SCRUB
    t = now();
    for (i = 0; i < n / 10; i++)
        rng_stack_scrub();
    printf("scrub    %.2f ns/call\n", (now() - t) * 1e9 / (n / 10));
#endif
    return (int)(x & 0) ;
}
