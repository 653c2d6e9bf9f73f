/*
 * The ChaCha20 cores and the generator on every platform, from C, through
 * the cores' and the generator's headers only (chacha20.h, generator.h):
 *
 *   cc -Iarc4py/csrc tests/c/platform_check.c CSRC...
 *   ./a.out < VECTORS
 *
 * where CSRC is every .c file in arc4py/csrc (add -pthread on POSIX,
 * -lbcrypt on Windows) and VECTORS the lines helpers.rfc_vector_lines()
 * writes from tests/data/rfc8439_vectors.json.
 *
 * tests/platforms/test_platforms.py builds it with zig's C compiler for Linux (glibc
 * and musl), macOS, FreeBSD and Windows on x86-64 and aarch64, and runs it
 * where this machine can (natively, under qemu-user, under Wine).
 *
 * One line per check ("PASS ..." or "FAIL ...", details indented under a
 * failure, "INFO ..." for facts that are not checks, "SKIP ..." for checks
 * this OS has no means for), then "N passed, N failed".  Exit status 0
 * when nothing failed, 1 otherwise.
 *
 *   cores      arc4py_chacha20_init against the RFC 8439 2.3.2 state; the
 *              RFC 8439 keystream vectors (read from stdin, see
 *              read_rfc_vectors) through every runnable core; every core against the
 *              generic core (and generic against the block function written
 *              out here from RFC 8439 2.3) for block counts 0..64 and a few
 *              large ones, into odd addresses between guard bytes, the
 *              counter advanced alike, and across the carry from counter
 *              word 12 into word 13.
 *   generator  draws of every size 0..2 * ARC4PY_RNG_DIRECT_BYTES + 100
 *              between guard bytes; a 3 MiB draw's byte counts; uniform
 *              bounds; stir and stir_all; 8 threads' streams distinct and
 *              non-repeating; 200 short-lived threads; the fork protection
 *              in force; where there is fork(), parent and child streams
 *              differ after a fork.
 *
 * Threads are pthreads on POSIX and Win32 threads on Windows, behind the
 * small task_* wrapper below.  Sizes and counts are printed with %lu (and
 * a cast) because older Windows C runtimes do not know %zu.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <windows.h>
#else
#include <pthread.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "chacha20.h"
#include "generator.h"

/* ---- reporting --------------------------------------------------------- */

static unsigned long n_passed, n_failed;
static int details; /* detail lines printed for the current check */

/* An indented detail line under the check being made (at most 8 a check,
 * so a broken core does not flood the log). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
static void detail(const char *fmt, ...)
{
    va_list ap;

    if (details++ >= 8)
        return;
    fputs("    ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
}

/* Record one check: ok is nonzero when it held. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static void result(int ok, const char *fmt, ...)
{
    va_list ap;

    fputs(ok ? "PASS " : "FAIL ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
    if (ok)
        n_passed++;
    else
        n_failed++;
    details = 0;
}

#define LU(x) ((unsigned long)(x))

/* ---- threads: pthreads or Win32 ----------------------------------------- */

typedef void (*task_fn)(void *arg);

struct task {
    task_fn fn;
    void *arg;
#ifdef _WIN32
    HANDLE handle;
#else
    pthread_t handle;
#endif
};

/* At most this many tasks are joined at once (WaitForMultipleObjects). */
#define TASK_BATCH_MAX 64

#ifdef _WIN32
static DWORD WINAPI task_entry(LPVOID p)
{
    struct task *t = (struct task *)p;
    t->fn(t->arg);
    return 0;
}

static int task_start(struct task *t, task_fn fn, void *arg)
{
    t->fn = fn;
    t->arg = arg;
    t->handle = CreateThread(NULL, 0, task_entry, t, 0, NULL);
    return t->handle != NULL ? 0 : -1;
}

/* Wait for the n (<= TASK_BATCH_MAX) started tasks; 0, or -1. */
static int task_join_all(struct task *t, size_t n)
{
    HANDLE h[TASK_BATCH_MAX];
    DWORD rc;
    size_t i;

    if (n == 0)
        return 0;
    if (n > TASK_BATCH_MAX)
        return -1;
    for (i = 0; i < n; i++)
        h[i] = t[i].handle;
    rc = WaitForMultipleObjects((DWORD)n, h, TRUE, INFINITE);
    for (i = 0; i < n; i++)
        CloseHandle(h[i]);
    return rc == WAIT_FAILED ? -1 : 0;
}
#else
static void *task_entry(void *p)
{
    struct task *t = (struct task *)p;
    t->fn(t->arg);
    return NULL;
}

static int task_start(struct task *t, task_fn fn, void *arg)
{
    t->fn = fn;
    t->arg = arg;
    return pthread_create(&t->handle, NULL, task_entry, t) == 0 ? 0 : -1;
}

static int task_join_all(struct task *t, size_t n)
{
    size_t i;
    int bad = 0;

    if (n > TASK_BATCH_MAX)
        return -1;
    for (i = 0; i < n; i++)
        if (pthread_join(t[i].handle, NULL) != 0)
            bad = 1;
    return bad ? -1 : 0;
}
#endif

/* ---- small helpers ----------------------------------------------------- */

/* xorshift64*: deterministic keys, nonces and counters for the core checks. */
static uint64_t xs_state = 0x2545f4914f6cdd1dull;

static uint64_t xs_next(void)
{
    xs_state ^= xs_state >> 12;
    xs_state ^= xs_state << 25;
    xs_state ^= xs_state >> 27;
    return xs_state * 0x2545f4914f6cdd1dull;
}

static void xs_fill(uint8_t *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        p[i] = (uint8_t)(xs_next() >> 56);
}

/* FNV-1a, 64-bit: a fingerprint of everything a thread drew. */
static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
#define FNV_INIT 0xcbf29ce484222325ull

static int all_equal(const uint8_t *p, size_t n, uint8_t v)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

/* The first index where a and b differ, or n. */
static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (a[i] != b[i])
            return i;
    return n;
}

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- RFC 8439 ------------------------------------------------------------ */

/* The block function of RFC 8439 section 2.3, word by word: the reference
 * that the generic core is held to (every other core is held to generic). */
static uint32_t rotl32(uint32_t v, int n)
{
    return (v << n) | (v >> (32 - n));
}

static void quarter_round(uint32_t *x, int a, int b, int c, int d)
{
    x[a] += x[b]; x[d] ^= x[a]; x[d] = rotl32(x[d], 16);
    x[c] += x[d]; x[b] ^= x[c]; x[b] = rotl32(x[b], 12);
    x[a] += x[b]; x[d] ^= x[a]; x[d] = rotl32(x[d], 8);
    x[c] += x[d]; x[b] ^= x[c]; x[b] = rotl32(x[b], 7);
}

/* nblocks of keystream from state, advancing the 64-bit counter in words
 * 12 (low) and 13 (high): the cores' contract in chacha20.h. */
static void ref_blocks(uint32_t state[16], uint8_t *out, size_t nblocks)
{
    uint32_t x[16];
    size_t b;
    int i;

    for (b = 0; b < nblocks; b++, out += 64) {
        memcpy(x, state, sizeof x);
        for (i = 0; i < 10; i++) {
            quarter_round(x, 0, 4, 8, 12);
            quarter_round(x, 1, 5, 9, 13);
            quarter_round(x, 2, 6, 10, 14);
            quarter_round(x, 3, 7, 11, 15);
            quarter_round(x, 0, 5, 10, 15);
            quarter_round(x, 1, 6, 11, 12);
            quarter_round(x, 2, 7, 8, 13);
            quarter_round(x, 3, 4, 9, 14);
        }
        for (i = 0; i < 16; i++) {
            uint32_t v = x[i] + state[i];
            out[4 * i] = (uint8_t)v;
            out[4 * i + 1] = (uint8_t)(v >> 8);
            out[4 * i + 2] = (uint8_t)(v >> 16);
            out[4 * i + 3] = (uint8_t)(v >> 24);
        }
        if (++state[12] == 0)
            state[13]++;
    }
}

/* The RFC 8439 vectors, one a line on stdin (the test writes them from
   tests/data/rfc8439_vectors.json): key, nonce (RFC layout: 32-bit counter
   in word 12) and keystream in hex, with the first block counter between
   the nonce and the keystream. */
struct rfc_vector {
    uint8_t key[32];
    uint8_t nonce[12];
    uint32_t counter;
    size_t len;
    uint8_t keystream[128];
};

#define MAX_RFC_VECTORS 16
static struct rfc_vector rfc_vectors[MAX_RFC_VECTORS];
static size_t n_rfc_vectors;

/* Bytes written, or (size_t)-1 for anything but hex pairs fitting max. */
static size_t unhex(const char *hex, uint8_t *out, size_t max)
{
    size_t i, n = strlen(hex);
    unsigned v;

    if (n % 2 != 0 || n / 2 > max)
        return (size_t)-1;
    for (i = 0; i < n / 2; i++) {
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return (size_t)-1;
        out[i] = (uint8_t)v;
    }
    return n / 2;
}

static void read_rfc_vectors(void)
{
    char key[80], nonce[40], ks[300];
    unsigned long counter;

    while (n_rfc_vectors < MAX_RFC_VECTORS &&
           scanf("%79s %39s %lu %299s", key, nonce, &counter, ks) == 4) {
        struct rfc_vector *v = &rfc_vectors[n_rfc_vectors];

        v->len = unhex(ks, v->keystream, sizeof v->keystream);
        if (unhex(key, v->key, 32) != 32 || unhex(nonce, v->nonce, 12) != 12 ||
            v->len == (size_t)-1 || v->len == 0 || counter > 0xffffffffUL)
            break;
        v->counter = (uint32_t)counter;
        n_rfc_vectors++;
    }
}

/* ---- the cores -------------------------------------------------------------- */

static const arc4py_chacha20_core *cores;
static size_t n_cores;
static const arc4py_chacha20_core *generic;

static void check_core_table(void)
{
    size_t i, j;
    int ok;

    cores = arc4py_chacha20_cores(&n_cores);
    generic = arc4py_chacha20_find("generic");
    printf("INFO cpu features: %s\n", arc4py_cpu_features());
    printf("INFO runnable cores:");
    for (i = 0; i < n_cores; i++)
        printf(" %s", cores[i].name);
    printf("\nINFO known cores:");
    for (i = 0; arc4py_chacha20_known_name(i) != NULL; i++)
        printf(" %s", arc4py_chacha20_known_name(i));
    printf("\n");

    ok = cores != NULL && n_cores >= 1 && generic != NULL &&
         generic->blocks != NULL &&
         strcmp(cores[n_cores - 1].name, "generic") == 0;
    if (!ok)
        detail("cores %p, count %lu, generic %p", (const void *)cores,
               LU(n_cores), (const void *)generic);
    result(ok, "core table: non-empty, generic last and found");
    if (!ok) {
        /* Nothing below can run without the table. */
        n_cores = 0;
        return;
    }

    ok = 1;
    for (i = 0; i < n_cores; i++) {
        if (cores[i].blocks == NULL || !arc4py_chacha20_is_known(cores[i].name) ||
            arc4py_chacha20_find(cores[i].name) != &cores[i]) {
            detail("runnable core %s: blocks %s, known %d, find mismatch",
                   cores[i].name, cores[i].blocks ? "set" : "NULL",
                   arc4py_chacha20_is_known(cores[i].name));
            ok = 0;
        }
        for (j = 0; j < i; j++)
            if (strcmp(cores[i].name, cores[j].name) == 0) {
                detail("core %s listed twice", cores[i].name);
                ok = 0;
            }
    }
    if (arc4py_chacha20_find("no-such-core") != NULL ||
        arc4py_chacha20_is_known("no-such-core")) {
        detail("an unknown name is found or known");
        ok = 0;
    }
    result(ok, "core table: every runnable core known and found by name");
}

static void check_init(void)
{
    /* RFC 8439 2.3.2: the state after setup for the block function test. */
    static const uint32_t want[16] = {
        0x61707865, 0x3320646e, 0x79622d32, 0x6b206574,
        0x03020100, 0x07060504, 0x0b0a0908, 0x0f0e0d0c,
        0x13121110, 0x17161514, 0x1b1a1918, 0x1f1e1d1c,
        0x00000001, 0x09000000, 0x4a000000, 0x00000000};
    static const uint8_t nonce12[12] = {0, 0, 0, 9, 0, 0, 0, 0x4a, 0, 0, 0, 0};
    uint8_t key[32];
    uint32_t st[16];
    uint8_t nonce8[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int i, ok = 1;

    for (i = 0; i < 32; i++)
        key[i] = (uint8_t)i;
    if (arc4py_chacha20_init(st, key, nonce12, 12, 1) != 0) {
        detail("init with a 12-byte nonce failed");
        ok = 0;
    } else {
        for (i = 0; i < 16; i++)
            if (st[i] != want[i]) {
                detail("word %d: 0x%08lx, want 0x%08lx", i, LU(st[i]),
                       LU(want[i]));
                ok = 0;
            }
    }
    result(ok, "init: 12-byte nonce gives the RFC 8439 2.3.2 state");

    ok = arc4py_chacha20_init(st, key, nonce8, 8, 0x0123456789abcdefull) ==
             0 &&
         st[12] == 0x89abcdefu && st[13] == 0x01234567u &&
         st[14] == load_le32(nonce8) && st[15] == load_le32(nonce8 + 4) &&
         st[4] == want[4] && st[11] == want[11];
    result(ok, "init: 8-byte nonce gives a 64-bit counter in words 12-13");

    ok = arc4py_chacha20_init(st, key, nonce8, 10, 0) == -1 &&
         arc4py_chacha20_init(st, key, nonce8, 0, 0) == -1;
    result(ok, "init: a nonce of neither 8 nor 12 bytes is refused");
}

/* Two vectors of one stream at counters 0 and 1 (A.1 #1 and #2): their
   indexes in *first and *second, or 0 if there is no such pair. */
static int consecutive_pair(size_t *first, size_t *second)
{
    size_t i, j;

    for (i = 0; i < n_rfc_vectors; i++)
        for (j = 0; j < n_rfc_vectors; j++) {
            const struct rfc_vector *a = &rfc_vectors[i], *b = &rfc_vectors[j];

            if (a->counter == 0 && b->counter == 1 && a->len >= 64 &&
                b->len >= 64 && memcmp(a->key, b->key, 32) == 0 &&
                memcmp(a->nonce, b->nonce, 12) == 0) {
                *first = i;
                *second = j;
                return 1;
            }
        }
    return 0;
}

static void check_rfc_vectors(void)
{
    size_t c, k, first, second;
    uint8_t out[3 + 2 * 64 + 3];
    uint32_t st[16];

    read_rfc_vectors();
    if (n_rfc_vectors == 0 || !consecutive_pair(&first, &second)) {
        detail("%lu vectors on stdin, none at counters 0 and 1 of one stream",
               LU(n_rfc_vectors));
        result(0, "RFC 8439 vectors read from stdin");
        return;
    }
    /* The reference first, so that a wrong vector shows up as such. */
    for (c = 0; c <= n_cores; c++) {
        const char *name = c < n_cores ? cores[c].name : "reference";
        int ok = 1;

        for (k = 0; k < n_rfc_vectors; k++) {
            const struct rfc_vector *v = &rfc_vectors[k];
            size_t nblocks = (v->len + 63) / 64, at;

            arc4py_chacha20_init(st, v->key, v->nonce, 12, v->counter);
            memset(out, 0xa5, sizeof out);
            /* Odd address, three guard bytes before. */
            if (c < n_cores)
                cores[c].blocks(st, out + 3, nblocks);
            else
                ref_blocks(st, out + 3, nblocks);
            at = first_diff(out + 3, v->keystream, v->len);
            if (at != v->len) {
                detail("%s: vector %lu: byte %lu is 0x%02x, want 0x%02x", name,
                       LU(k), LU(at), out[3 + at], v->keystream[at]);
                ok = 0;
            }
            if (!all_equal(out, 3, 0xa5) ||
                !all_equal(out + 3 + nblocks * 64,
                           sizeof out - 3 - nblocks * 64, 0xa5)) {
                detail("%s: vector %lu: wrote outside its output", name, LU(k));
                ok = 0;
            }
            if (st[12] != v->counter + nblocks ||
                st[13] != load_le32(v->nonce)) {
                detail("%s: vector %lu: counter word 12 is %lu after, want %lu",
                       name, LU(k), LU(st[12]), LU(v->counter + nblocks));
                ok = 0;
            }
        }
        /* Blocks 0 and 1 of one stream in one two-block call. */
        arc4py_chacha20_init(st, rfc_vectors[first].key,
                             rfc_vectors[first].nonce, 12, 0);
        if (c < n_cores)
            cores[c].blocks(st, out + 1, 2);
        else
            ref_blocks(st, out + 1, 2);
        if (memcmp(out + 1, rfc_vectors[first].keystream, 64) != 0 ||
            memcmp(out + 65, rfc_vectors[second].keystream, 64) != 0) {
            detail("%s: blocks 0 and 1 in one two-block call differ", name);
            ok = 0;
        }
        result(ok, "RFC 8439 vectors (%lu from stdin) through %s",
               LU(n_rfc_vectors), name);
    }
}

#define GUARD 32
#define MAX_BLOCKS 4099
/* Room for the largest offset (33) too. */
static uint8_t want_buf[GUARD + 64 + MAX_BLOCKS * 64 + GUARD];
static uint8_t got_buf[sizeof want_buf];

/* Run core (or the reference, when core is NULL) and generic on copies of
 * st for n blocks into want_buf/got_buf at offset off past the front guard;
 * 1 if output, guards and the final states agree. */
static int compare_run(const arc4py_chacha20_core *core, const uint32_t st[16],
                       size_t n, size_t off, const char *what)
{
    uint32_t s_want[16], s_got[16];
    size_t at, len = n * 64;
    const char *name = core != NULL ? core->name : "generic vs reference";
    int ok = 1;

    memcpy(s_want, st, sizeof s_want);
    memcpy(s_got, st, sizeof s_got);
    memset(want_buf, 0xa5, GUARD + off + len + GUARD);
    memset(got_buf, 0xa5, GUARD + off + len + GUARD);
    if (core != NULL) {
        generic->blocks(s_want, want_buf + GUARD + off, n);
        core->blocks(s_got, got_buf + GUARD + off, n);
    } else {
        ref_blocks(s_want, want_buf + GUARD + off, n);
        generic->blocks(s_got, got_buf + GUARD + off, n);
    }
    at = first_diff(got_buf + GUARD + off, want_buf + GUARD + off, len);
    if (at != len) {
        detail("%s, %s, %lu blocks at offset %lu: first difference at byte "
               "%lu (block %lu)", name, what, LU(n), LU(off), LU(at),
               LU(at / 64));
        ok = 0;
    }
    if (!all_equal(got_buf, GUARD + off, 0xa5) ||
        !all_equal(got_buf + GUARD + off + len, GUARD, 0xa5)) {
        detail("%s, %s, %lu blocks at offset %lu: guard bytes overwritten",
               name, what, LU(n), LU(off));
        ok = 0;
    }
    if (memcmp(s_got, s_want, sizeof s_got) != 0) {
        detail("%s, %s, %lu blocks: state after is words 12-13 "
               "%08lx %08lx, want %08lx %08lx", name, what, LU(n),
               LU(s_got[12]), LU(s_got[13]), LU(s_want[12]), LU(s_want[13]));
        ok = 0;
    }
    return ok;
}

static void check_cores_against_generic(void)
{
    static const size_t large[] = {100, 255, 256, 257, 1000, 1031, MAX_BLOCKS};
    static const size_t offsets[] = {1, 3, 5, 7, 9, 15, 33};
    size_t c, n, i;

    /* c == n_cores: generic against the reference block function. */
    for (c = 0; c <= n_cores; c++) {
        const arc4py_chacha20_core *core = c < n_cores ? &cores[c] : NULL;
        const char *name = core != NULL ? core->name : "generic vs reference";
        uint8_t key[32], nonce[8];
        uint32_t st[16];
        int ok = 1;

        for (n = 0; n <= 64 + sizeof large / sizeof large[0]; n++) {
            size_t blocks = n <= 64 ? n : large[n - 65];
            size_t off = offsets[n % (sizeof offsets / sizeof offsets[0])];

            xs_fill(key, sizeof key);
            xs_fill(nonce, sizeof nonce);
            /* A counter far from the 32-bit carry (checked next). */
            arc4py_chacha20_init(st, key, nonce, 8,
                                 (xs_next() & 0x7fffffffffff0000ull));
            ok &= compare_run(core, st, blocks, off, "random key");
        }
        result(ok, "%s: block counts 0..64 and %lu..%lu at odd offsets, "
               "guards and counter as generic", name, LU(large[0]),
               LU(MAX_BLOCKS));

        ok = 1;
        for (i = 1; i <= 70; i++) {
            xs_fill(key, sizeof key);
            xs_fill(nonce, sizeof nonce);
            arc4py_chacha20_init(st, key, nonce, 8, 0);
            st[12] = 0xffffffffu - 2; /* three blocks before the carry */
            st[13] = (uint32_t)xs_next() & 0x7fffffffu;
            ok &= compare_run(core, st, i, offsets[i % 7], "32-bit carry");
            if (i == 70) {
                /* The carry itself, not only agreement with generic. */
                uint32_t s[16];
                memcpy(s, st, sizeof s);
                (core != NULL ? core->blocks : generic->blocks)(
                    s, got_buf + GUARD + 1, i);
                if (s[12] != (uint32_t)(0xffffffffu - 2 + i) ||
                    s[13] != st[13] + 1) {
                    detail("%s: counter %08lx %08lx after the carry", name,
                           LU(s[12]), LU(s[13]));
                    ok = 0;
                }
            }
        }
        result(ok, "%s: 1..70 blocks from counter word 12 = 0xffffffff - 2 "
               "carry into word 13 as generic", name);
    }
}

/* ---- the generator -------------------------------------------------------------- */

#define DRAW_MAX (ARC4PY_RNG_DIRECT_BYTES * 2 + 100)
static uint8_t draw_buf[GUARD + 16 + DRAW_MAX + GUARD];

static void check_draw_sizes(void)
{
    uint8_t prev[32];
    size_t n, off;
    int rc, ok = 1, have_prev = 0;

    for (n = 0; n <= DRAW_MAX; n++) {
        off = n % 16;
        memset(draw_buf, 0xa5, sizeof draw_buf);
        rc = arc4py_rng_buf(draw_buf + GUARD + off, n);
        if (rc != 0) {
            detail("draw of %lu bytes returned %d", LU(n), rc);
            ok = 0;
            continue;
        }
        if (!all_equal(draw_buf, GUARD + off, 0xa5) ||
            !all_equal(draw_buf + GUARD + off + n,
                       sizeof draw_buf - GUARD - off - n, 0xa5)) {
            detail("draw of %lu bytes at offset %lu wrote outside", LU(n),
                   LU(off));
            ok = 0;
        }
        if (n >= 16 && all_equal(draw_buf + GUARD + off, n, 0)) {
            detail("draw of %lu bytes is all zero", LU(n));
            ok = 0;
        }
        if (n >= 32) {
            if (have_prev && memcmp(prev, draw_buf + GUARD + off, 32) == 0) {
                detail("draw of %lu bytes starts as the previous one", LU(n));
                ok = 0;
            }
            memcpy(prev, draw_buf + GUARD + off, 32);
            have_prev = 1;
        }
    }
    /* The generator picks its core on the first draw. */
    printf("INFO generator core: %s\n", arc4py_rng_core_name());
    result(ok, "generator: draws of every size 0..%lu, guard bytes untouched",
           LU(DRAW_MAX));
}

static void check_large_draw(void)
{
    const size_t n = 3u << 20;
    uint8_t *buf = (uint8_t *)malloc(n + 2 * GUARD + 1);
    unsigned long counts[256] = {0};
    double mean = (double)n / 256, chi2 = 0;
    size_t i;
    int rc, ok = 1;

    if (buf == NULL) {
        result(0, "generator: 3 MiB draw (no memory for the buffer)");
        return;
    }
    memset(buf, 0xa5, n + 2 * GUARD + 1);
    rc = arc4py_rng_buf(buf + GUARD + 1, n);
    if (rc != 0) {
        detail("draw returned %d", rc);
        ok = 0;
    }
    if (!all_equal(buf, GUARD + 1, 0xa5) ||
        !all_equal(buf + GUARD + 1 + n, GUARD, 0xa5)) {
        detail("guard bytes overwritten");
        ok = 0;
    }
    for (i = 0; i < n; i++)
        counts[buf[GUARD + 1 + i]]++;
    for (i = 0; i < 256; i++) {
        double d = (double)counts[i] - mean;
        chi2 += d * d / mean;
        /* ~110 standard deviations is 10%: only a broken stream. */
        if (counts[i] < mean * 0.9 || counts[i] > mean * 1.1) {
            detail("byte 0x%02lx seen %lu times, mean %.0f", LU(i),
                   counts[i], mean);
            ok = 0;
        }
    }
    /* 255 degrees of freedom: mean 255, sd 22.6; 450 is > 8 sd. */
    if (chi2 > 450) {
        detail("chi-square %.1f over 255 degrees of freedom", chi2);
        ok = 0;
    }
    printf("INFO 3 MiB draw: chi-square %.1f (255 degrees of freedom)\n", chi2);
    result(ok, "generator: 3 MiB draw, every byte value within 10%% of the "
           "mean");
    free(buf);
}

static void check_uniform(void)
{
    static const uint32_t bounds[] = {1, 2, 3, 7, 0x80000001u, 0};
    const unsigned draws = 4000;
    size_t b;
    unsigned i;

    for (b = 0; b < sizeof bounds / sizeof bounds[0]; b++) {
        uint32_t bound = bounds[b], v, seen = 0;
        unsigned long high = 0; /* results in the top half of the range */
        int ok = 1;

        for (i = 0; i < draws; i++) {
            int rc = arc4py_rng_uniform(bound, &v);
            if (rc != 0) {
                detail("uniform(%lu) returned %d", LU(bound), rc);
                ok = 0;
                break;
            }
            if (bound != 0 && v >= bound) {
                detail("uniform(%lu) gave %lu", LU(bound), LU(v));
                ok = 0;
            }
            if (bound != 0 && bound <= 32)
                seen |= 1u << v;
            if (bound == 0 ? v >= 0x80000000u : v >= bound / 2)
                high++;
        }
        if (bound != 0 && bound <= 32 && seen != (uint32_t)((1ull << bound) - 1)) {
            detail("uniform(%lu): values seen 0x%lx", LU(bound), LU(seen));
            ok = 0;
        }
        if (bound == 0 || bound > 32) {
            /* Half the results in the upper half of the range, roughly
               (sd 32 of 2000 here: 1700..2300 is > 9 sd). */
            if (high < draws / 2 - 300 || high > draws / 2 + 300) {
                detail("uniform(%lu): %lu of %u in the upper half", LU(bound),
                       high, draws);
                ok = 0;
            }
        }
        if (bound == 0)
            result(ok, "uniform(0) means 2**32: %u draws spread over the "
                   "whole range", draws);
        else if (bound <= 32)
            result(ok, "uniform(%lu): %u draws all below it, every value hit",
                   LU(bound), draws);
        else
            result(ok, "uniform(%lu): %u draws all below it, both halves hit",
                   LU(bound), draws);
    }
}

static void check_stir(void)
{
    uint8_t a[64], b[64], c[64];
    uint32_t u;
    uint64_t w;
    int rc1, rc2, rc3, rc4, rc5, rc6, rc7;

    rc1 = arc4py_rng_buf(a, sizeof a);
    rc2 = arc4py_rng_stir();
    rc3 = arc4py_rng_buf(b, sizeof b);
    rc4 = arc4py_rng_stir_all();
    rc5 = arc4py_rng_buf(c, sizeof c);
    rc6 = arc4py_rng_u32(&u);
    rc7 = arc4py_rng_u64(&w);
    if (rc2 != 0)
        detail("stir returned %d", rc2);
    if (rc4 != 0)
        detail("stir_all returned %d", rc4);
    if (rc1 || rc3 || rc5 || rc6 || rc7)
        detail("draws returned %d %d %d %d %d", rc1, rc3, rc5, rc6, rc7);
    result(rc1 == 0 && rc2 == 0 && rc3 == 0 && rc4 == 0 && rc5 == 0 &&
               rc6 == 0 && rc7 == 0 && memcmp(a, b, 64) != 0 &&
               memcmp(b, c, 64) != 0 && memcmp(a, c, 64) != 0 &&
               !all_equal(b, 64, 0) && !all_equal(c, 64, 0),
           "stir and stir_all return 0, the stream goes on and differs");
}

/* 8 threads, each drawing a mix of sizes (buffered and direct) and keeping
 * every 64-bit value it drew and an FNV-1a hash of all its output. */
#define N_THREADS 8
#define VALUES_PER_THREAD 6000
#define BIG_DRAW (ARC4PY_RNG_DIRECT_BYTES + 917)

struct draw_job {
    uint8_t first[32];
    uint64_t *values;
    uint64_t hash;
    int err;
};

static void draw_worker(void *arg)
{
    struct draw_job *job = (struct draw_job *)arg;
    uint8_t big[BIG_DRAW];
    size_t i;
    int rc;

    job->hash = FNV_INIT;
    rc = arc4py_rng_buf(job->first, sizeof job->first);
    if (rc != 0)
        job->err = rc;
    job->hash = fnv1a(job->hash, job->first, sizeof job->first);
    for (i = 0; i < VALUES_PER_THREAD; i++) {
        uint64_t v = 0;
        uint8_t b[8];
        switch (i % 4) {
        case 0:
            rc = arc4py_rng_u64(&v);
            break;
        case 1:
            rc = arc4py_rng_buf(b, sizeof b);
            memcpy(&v, b, sizeof v);
            break;
        case 2: {
            uint32_t lo = 0, hi = 0;
            rc = arc4py_rng_u32(&lo);
            if (rc == 0)
                rc = arc4py_rng_u32(&hi);
            v = ((uint64_t)hi << 32) | lo;
            break;
        }
        default:
            /* Straight into the caller's memory, past the buffer. */
            rc = arc4py_rng_buf(big, sizeof big);
            job->hash = fnv1a(job->hash, big, sizeof big);
            memcpy(&v, big + 100, sizeof v);
            break;
        }
        if (rc != 0 && job->err == 0)
            job->err = rc;
        job->values[i] = v;
        job->hash = fnv1a(job->hash, (const uint8_t *)&v, sizeof v);
    }
}

static void check_threads(void)
{
    struct task tasks[N_THREADS];
    struct draw_job jobs[N_THREADS];
    uint64_t *all;
    size_t i, j, started = 0, dups = 0, n_all = N_THREADS * VALUES_PER_THREAD;
    int ok = 1, distinct = 1;

    all = (uint64_t *)malloc(n_all * sizeof *all);
    if (all == NULL) {
        result(0, "threads: no memory for the values");
        return;
    }
    memset(jobs, 0, sizeof jobs);
    for (i = 0; i < N_THREADS; i++) {
        jobs[i].values = all + i * VALUES_PER_THREAD;
        if (task_start(&tasks[started], draw_worker, &jobs[i]) != 0) {
            detail("could not start thread %lu", LU(i));
            ok = 0;
            break;
        }
        started++;
    }
    if (task_join_all(tasks, started) != 0) {
        detail("join failed");
        ok = 0;
    }
    for (i = 0; i < started; i++)
        if (jobs[i].err != 0) {
            detail("thread %lu: a draw returned %d", LU(i), jobs[i].err);
            ok = 0;
        }
    result(ok && started == N_THREADS,
           "threads: %d threads drew %d values each (buffered and direct) "
           "without error", N_THREADS, VALUES_PER_THREAD);

    for (i = 0; i < started; i++)
        for (j = 0; j < i; j++) {
            if (memcmp(jobs[i].first, jobs[j].first, 32) == 0) {
                detail("threads %lu and %lu: same first 32 bytes", LU(j),
                       LU(i));
                distinct = 0;
            }
            if (jobs[i].hash == jobs[j].hash) {
                detail("threads %lu and %lu: same output hash", LU(j), LU(i));
                distinct = 0;
            }
        }
    result(distinct && started == N_THREADS,
           "threads: all %d threads' first 32 bytes and output hashes distinct",
           N_THREADS);

    /* Within each thread, then across all of them: no 64-bit value twice
       (a repeat among 48000 random values has probability ~1e-10). */
    ok = 1;
    for (i = 0; i < started; i++) {
        uint64_t *v = jobs[i].values;
        qsort(v, VALUES_PER_THREAD, sizeof *v, cmp_u64);
        for (j = 1; j < VALUES_PER_THREAD; j++)
            if (v[j] == v[j - 1]) {
                detail("thread %lu drew 0x%08lx%08lx twice", LU(i),
                       LU(v[j] >> 32), LU(v[j] & 0xffffffffu));
                ok = 0;
            }
    }
    result(ok && started == N_THREADS,
           "threads: no thread's draws repeat");
    n_all = started * VALUES_PER_THREAD;
    qsort(all, n_all, sizeof *all, cmp_u64);
    for (j = 1; j < n_all; j++)
        if (all[j] == all[j - 1])
            dups++;
    if (dups)
        detail("%lu values repeated across threads", LU(dups));
    result(dups == 0 && started == N_THREADS,
           "threads: no value repeats across the threads");
    free(all);
}

/* Thread churn: many short-lived threads, each creating its state, drawing
 * 100 bytes and exiting (its state released), a batch at a time. */
#define CHURN_THREADS 200
#define CHURN_BATCH 25

struct churn_job {
    uint8_t out[100];
    int err;
};

static void churn_worker(void *arg)
{
    struct churn_job *job = (struct churn_job *)arg;
    job->err = arc4py_rng_buf(job->out, sizeof job->out);
}

static void check_churn(void)
{
    static struct churn_job jobs[CHURN_THREADS];
    struct task tasks[CHURN_BATCH];
    size_t done = 0, i, j, failed_starts = 0, errors = 0, same = 0;

    memset(jobs, 0, sizeof jobs);
    while (done < CHURN_THREADS) {
        size_t started = 0;
        for (i = 0; i < CHURN_BATCH && done + i < CHURN_THREADS; i++) {
            if (task_start(&tasks[started], churn_worker, &jobs[done + i]) != 0) {
                jobs[done + i].err = -1;
                failed_starts++;
                continue;
            }
            started++;
        }
        if (task_join_all(tasks, started) != 0)
            errors++;
        done += i;
    }
    for (i = 0; i < CHURN_THREADS; i++) {
        if (jobs[i].err != 0 || all_equal(jobs[i].out, sizeof jobs[i].out, 0))
            errors++;
        for (j = 0; j < i; j++)
            if (memcmp(jobs[i].out, jobs[j].out, 32) == 0)
                same++;
    }
    if (failed_starts)
        detail("%lu threads could not be started", LU(failed_starts));
    if (errors)
        detail("%lu draws or joins failed", LU(errors));
    if (same)
        detail("%lu pairs of threads drew the same bytes", LU(same));
    result(failed_starts == 0 && errors == 0 && same == 0,
           "thread churn: %d short-lived threads (%d at a time) drew 100 "
           "distinct bytes each", CHURN_THREADS, CHURN_BATCH);

    /* The exiting threads' states are gone; this one's still works. */
    {
        uint8_t b[64];
        int rc = arc4py_rng_buf(b, sizeof b);
        result(rc == 0 && !all_equal(b, sizeof b, 0),
               "thread churn: the main thread still draws");
    }
}

static void check_fork_protection(void)
{
    unsigned p = arc4py_rng_fork_protection();
    const unsigned known = ARC4PY_FORK_WIPEONFORK | ARC4PY_FORK_ATFORK |
                           ARC4PY_DONTDUMP | ARC4PY_FORK_VDSO;

    printf("INFO fork protection: 0x%x:%s%s%s%s%s\n", p,
           p == 0 ? " none" : "",
           p & ARC4PY_FORK_WIPEONFORK ? " wipeonfork" : "",
           p & ARC4PY_FORK_ATFORK ? " atfork" : "",
           p & ARC4PY_DONTDUMP ? " dontdump" : "",
           p & ARC4PY_FORK_VDSO ? " vdso" : "");
    result((p & ~known) == 0, "fork protection: only known bits set");
}

#ifndef _WIN32
/* Fork, have the child draw 64 bytes and send them (after its draw's
 * status byte) through a pipe; the child's 64 bytes, or -1. */
static int child_draw(uint8_t out[64], int *child_rc)
{
    uint8_t msg[65];
    size_t got = 0;
    int fds[2], status;
    pid_t pid;

    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        size_t put = 0;
        int rc;
        close(fds[0]);
        memset(msg, 0, sizeof msg);
        rc = arc4py_rng_buf(msg + 1, 64);
        msg[0] = (uint8_t)(rc == 0 ? 0 : (rc & 0x7f) | 0x80);
        while (put < sizeof msg) {
            ssize_t w = write(fds[1], msg + put, sizeof msg - put);
            if (w <= 0)
                _exit(3);
            put += (size_t)w;
        }
        _exit(rc == 0 ? 0 : 4);
    }
    close(fds[1]);
    while (got < sizeof msg) {
        ssize_t r = read(fds[0], msg + got, sizeof msg - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fds[0]);
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0 || got != sizeof msg)
        return -1;
    *child_rc = msg[0];
    memcpy(out, msg + 1, 64);
    return 0;
}

static void check_fork(void)
{
    uint8_t before[64], parent[64], child1[64], child2[64];
    int rc_before, rc_parent, c1 = -1, c2 = -1, f1, f2, ok;

    /* The parent's state exists (and has a buffer) before the fork. */
    rc_before = arc4py_rng_buf(before, sizeof before);
    f1 = child_draw(child1, &c1);
    rc_parent = arc4py_rng_buf(parent, sizeof parent);
    f2 = child_draw(child2, &c2);
    ok = f1 == 0 && f2 == 0 && c1 == 0 && c2 == 0;
    if (!ok)
        detail("fork/pipe/wait: %d %d, child draw status %d %d", f1, f2, c1,
               c2);
    result(ok && rc_before == 0 && rc_parent == 0,
           "fork: a draw in the child succeeds");
    ok = ok && memcmp(parent, child1, 64) != 0 &&
         memcmp(parent, child2, 64) != 0 && memcmp(child1, child2, 64) != 0 &&
         memcmp(before, child1, 64) != 0 && !all_equal(child1, 64, 0) &&
         !all_equal(child2, 64, 0);
    result(ok, "fork: parent's and children's 64 bytes after the fork differ");
}
#endif

int main(void)
{
    check_core_table();
    check_init();
    if (n_cores > 0) {
        check_rfc_vectors();
        check_cores_against_generic();
    }
    check_draw_sizes();
    check_large_draw();
    check_uniform();
    check_stir();
    check_threads();
    check_churn();
    check_fork_protection();
#ifdef _WIN32
    printf("SKIP fork: Windows has no fork()\n");
#else
    check_fork();
#endif
    printf("%lu passed, %lu failed\n", n_passed, n_failed);
    fflush(stdout);
    return n_failed == 0 ? 0 : 1;
}
