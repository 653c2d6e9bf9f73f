/*
 * The ChaCha20 cores from C, through chacha20.h only:
 *
 *   core_check [NAME ...] < VECTORS
 *
 * VECTORS has one RFC 8439 vector a line, "key nonce counter keystream" in
 * hex (helpers.rfc_vector_lines() writes them from
 * tests/data/rfc8439_vectors.json).  Every run checks the table of cores
 * (generic last, every runnable core known and found by name), the state
 * arc4py_chacha20_init makes (from the first vector, and with an 8-byte
 * nonce), and the generic core against the block function of RFC 8439
 * section 2.3 written out below.  Then each core named (by default every
 * runnable one): the vectors; every block count 0..300 and a few up to
 * 4099 into output at odd addresses between guard bytes (nothing written
 * outside, the state advanced as by generic); streams across the 32-bit
 * and 64-bit counter carries; and, where the ABI lets a core leave them so
 * (not Windows on x86-64), its vector registers all zero when it returns.
 * A named core that cannot run here makes the verdict skip.
 *
 * Built with the chacha20_*.c sources by tests/c/test_c_programs.py, for
 * aarch64 by tests/cores/test_neon_qemu.py and with every source of
 * arc4py/csrc for each OS by tests/platforms/test_platforms.py.  The verdict
 * (tests/c/verdict.h) has the facts "vectors" and "cores" (those checked).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chacha20.h"
#include "verdict.h"

#define GUARD 64
#define MAX_BLOCKS 4099
static uint8_t want_buf[GUARD * 2 + 64 + MAX_BLOCKS * 64];
static uint8_t got_buf[sizeof want_buf];

static const arc4py_chacha20_core *generic;

/* ---- vector registers, read straight after a call ------------------------ */

static uint8_t regs[32 * 64];
static size_t reg_bytes;

#if defined(__x86_64__) && !defined(_WIN32)
#define DUMP_XMM(i) "movdqu %%xmm" #i ", " #i "*16(%0)\n\t"
#define DUMP_YMM(i) "vmovdqu %%ymm" #i ", " #i "*32(%0)\n\t"
#define DUMP_ZMM(i) "vmovdqu64 %%zmm" #i ", " #i "*64(%0)\n\t"
enum { XMM, YMM, ZMM, V }; /* chacha20_cores.def's register files */
static int reg_kind;

static void call_and_dump(arc4py_chacha20_blocks_fn fn, uint32_t *state,
                          uint8_t *out, size_t n)
{
    /* Nothing between the call and the dump touches vector registers. */
    fn(state, out, n);
    if (reg_kind == ZMM)
        __asm__ volatile(
            DUMP_ZMM(0) DUMP_ZMM(1) DUMP_ZMM(2) DUMP_ZMM(3) DUMP_ZMM(4) DUMP_ZMM(5)
            DUMP_ZMM(6) DUMP_ZMM(7) DUMP_ZMM(8) DUMP_ZMM(9) DUMP_ZMM(10) DUMP_ZMM(11)
            DUMP_ZMM(12) DUMP_ZMM(13) DUMP_ZMM(14) DUMP_ZMM(15) DUMP_ZMM(16)
            DUMP_ZMM(17) DUMP_ZMM(18) DUMP_ZMM(19) DUMP_ZMM(20) DUMP_ZMM(21)
            DUMP_ZMM(22) DUMP_ZMM(23) DUMP_ZMM(24) DUMP_ZMM(25) DUMP_ZMM(26)
            DUMP_ZMM(27) DUMP_ZMM(28) DUMP_ZMM(29) DUMP_ZMM(30) DUMP_ZMM(31)
            : : "r"(regs) : "memory");
    else if (reg_kind == YMM)
        __asm__ volatile(
            DUMP_YMM(0) DUMP_YMM(1) DUMP_YMM(2) DUMP_YMM(3) DUMP_YMM(4)
            DUMP_YMM(5) DUMP_YMM(6) DUMP_YMM(7) DUMP_YMM(8) DUMP_YMM(9)
            DUMP_YMM(10) DUMP_YMM(11) DUMP_YMM(12) DUMP_YMM(13) DUMP_YMM(14)
            DUMP_YMM(15) : : "r"(regs) : "memory");
    else
        __asm__ volatile(
            DUMP_XMM(0) DUMP_XMM(1) DUMP_XMM(2) DUMP_XMM(3) DUMP_XMM(4)
            DUMP_XMM(5) DUMP_XMM(6) DUMP_XMM(7) DUMP_XMM(8) DUMP_XMM(9)
            DUMP_XMM(10) DUMP_XMM(11) DUMP_XMM(12) DUMP_XMM(13) DUMP_XMM(14)
            DUMP_XMM(15) : : "r"(regs) : "memory");
}

/* What each core promises to zero (its row in chacha20_cores.def): SSE
 * cores xmm0-15 (their legacy encodings leave the upper ymm bits alone),
 * avx2 all of ymm0-15, avx512 all of zmm0-31; generic clears xmm0-15. */
static const struct {
    const char *name;
    int registers;
} core_registers[] = {
#define ARC4PY_CORE(isa, registers, builds_with, cpu_features) {#isa, registers},
#include "chacha20_cores.def"
#undef ARC4PY_CORE
    {"generic", XMM},
};

static void choose_regs(const char *name)
{
    size_t i;

    reg_kind = XMM;
    for (i = 0; i < sizeof core_registers / sizeof core_registers[0]; i++)
        if (strcmp(core_registers[i].name, name) == 0)
            reg_kind = core_registers[i].registers;
    reg_bytes = reg_kind == ZMM ? 32 * 64 : reg_kind == YMM ? 16 * 32 : 16 * 16;
}
#elif defined(__aarch64__)
#define DUMP_V4(a, b, c, d)                                                \
    "st1 {v" #a ".16b, v" #b ".16b, v" #c ".16b, v" #d ".16b}, [%0], #64\n\t"

static void call_and_dump(arc4py_chacha20_blocks_fn fn, uint32_t *state,
                          uint8_t *out, size_t n)
{
    uint8_t *p = regs;

    fn(state, out, n);
    __asm__ volatile(DUMP_V4(0, 1, 2, 3) DUMP_V4(4, 5, 6, 7)
                     DUMP_V4(16, 17, 18, 19) DUMP_V4(20, 21, 22, 23)
                     DUMP_V4(24, 25, 26, 27) DUMP_V4(28, 29, 30, 31)
                     : "+r"(p) : : "memory");
}

static void choose_regs(const char *name)
{
    /* v0-v7 and v16-v31; v8-v15 hold the caller's saved values. */
    (void)name;
    reg_bytes = 24 * 16;
}
#else
/* Windows on x86-64 keeps xmm6-15 for the caller: nothing to read. */
static void call_and_dump(arc4py_chacha20_blocks_fn fn, uint32_t *state,
                          uint8_t *out, size_t n)
{
    fn(state, out, n);
}
static void choose_regs(const char *name) { (void)name; reg_bytes = 0; }
#endif

/* ---- RFC 8439 ---------------------------------------------------------- */

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static uint32_t rotl32(uint32_t v, int n) { return (v << n) | (v >> (32 - n)); }

static void quarter_round(uint32_t *x, int a, int b, int c, int d)
{
    x[a] += x[b]; x[d] ^= x[a]; x[d] = rotl32(x[d], 16);
    x[c] += x[d]; x[b] ^= x[c]; x[b] = rotl32(x[b], 12);
    x[a] += x[b]; x[d] ^= x[a]; x[d] = rotl32(x[d], 8);
    x[c] += x[d]; x[b] ^= x[c]; x[b] = rotl32(x[b], 7);
}

/* The block function of RFC 8439 section 2.3, word by word, with the cores'
 * contract (chacha20.h): the reference generic is held to, as every other
 * core is held to generic. */
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
        for (i = 0; i < 64; i++)
            out[i] = (uint8_t)((x[i / 4] + state[i / 4]) >> (8 * (i % 4)));
        if (++state[12] == 0)
            state[13]++;
    }
}

struct rfc_vector {
    uint8_t key[32], nonce[12]; /* RFC layout: 32-bit counter in word 12 */
    uint32_t counter;
    size_t len;
    uint8_t keystream[128];
};
#define MAX_RFC_VECTORS 16
static struct rfc_vector vectors[MAX_RFC_VECTORS];
static size_t n_vectors;

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

static void read_vectors(void)
{
    char key[80], nonce[40], ks[300];
    unsigned long counter;

    while (n_vectors < MAX_RFC_VECTORS &&
           scanf("%79s %39s %lu %299s", key, nonce, &counter, ks) == 4) {
        struct rfc_vector *v = &vectors[n_vectors];

        v->len = unhex(ks, v->keystream, sizeof v->keystream);
        if (unhex(key, v->key, 32) != 32 || unhex(nonce, v->nonce, 12) != 12 ||
            v->len == (size_t)-1 || v->len == 0 || counter > 0xffffffffUL)
            break;
        v->counter = (uint32_t)counter;
        n_vectors++;
    }
}

/* ---- checks ------------------------------------------------------------------ */

/* blocks (or the reference, for NULL) and generic on copies of st, n blocks
 * at offset off past the front guard; 1 if output, guard bytes, the state
 * after and (for a core) the vector registers agree. */
static int compare(const arc4py_chacha20_core *core, const uint32_t st[16],
                   size_t n, size_t off, const char *what)
{
    uint32_t s_want[16], s_got[16];
    size_t at, len = GUARD + off + n * 64 + GUARD;
    const char *name = core != NULL ? core->name : "generic vs reference";

    memcpy(s_want, st, sizeof s_want);
    memcpy(s_got, st, sizeof s_got);
    memset(want_buf, 0xa5, len);
    memset(got_buf, 0xa5, len);
    if (core == NULL) {
        ref_blocks(s_want, want_buf + GUARD + off, n);
        generic->blocks(s_got, got_buf + GUARD + off, n);
    } else {
        generic->blocks(s_want, want_buf + GUARD + off, n);
        memset(regs, 0xee, sizeof regs);
        call_and_dump(core->blocks, s_got, got_buf + GUARD + off, n);
        for (at = 0; at < reg_bytes && regs[at] == 0; at++)
            ;
        if (at < reg_bytes) {
            verdict_detail("%s, %s: vector register byte %lu is %02x when the "
                           "core returns (not cleared)", name, what, LU(at),
                           regs[at]);
            return 0;
        }
    }
    at = first_diff(got_buf, want_buf, len);
    if (at != len) {
        long byte = (long)at - (long)(GUARD + off);
        verdict_detail("%s, %s, %lu blocks at offset %lu: byte %ld %s differs",
                       name, what, LU(n), LU(off), byte,
                       byte < 0 || byte >= (long)(n * 64)
                           ? "(a guard byte: written outside out)"
                           : "of the keystream");
        return 0;
    }
    if (memcmp(s_got, s_want, sizeof s_got) != 0) {
        verdict_detail("%s, %s, %lu blocks: state after is words 12-13 %08lx "
                       "%08lx, want %08lx %08lx", name, what, LU(n),
                       LU(s_got[12]), LU(s_got[13]), LU(s_want[12]),
                       LU(s_want[13]));
        return 0;
    }
    return 1;
}

/* xorshift64*: deterministic keys, nonces and counters, no libc rand. */
static uint64_t xs_state = 0x9e3779b97f4a7c15ull;
static uint64_t xs_next(void)
{
    xs_state ^= xs_state >> 12;
    xs_state ^= xs_state << 25;
    xs_state ^= xs_state >> 27;
    return xs_state * 0x2545f4914f6cdd1dull;
}

static const size_t large[] = {1000, 1031, MAX_BLOCKS};

/* Lengths and both counter carries: core against generic, or (NULL)
 * generic against the reference. */
static void check_streams(const arc4py_chacha20_core *core, size_t max_n)
{
    const char *name = core != NULL ? core->name : "generic vs reference";
    uint8_t key[32], nonce[8];
    uint32_t st[16];
    size_t n, k;
    int ok = 1;

    for (n = 0; n < sizeof key; n++)
        key[n] = nonce[n % sizeof nonce] = (uint8_t)(xs_next() >> 56);
    for (n = 0; n <= max_n + 3; n++) {
        size_t blocks = n <= max_n ? n : large[n - max_n - 1];
        arc4py_chacha20_init(st, key, nonce, 8, xs_next() >> 8);
        ok &= compare(core, st, blocks, (2 * n + 1) % 64, "lengths");
    }
    for (n = 0; n <= 40; n++)
        ok &= compare(core, st, n, 0, "aligned");
    verdict_check(ok, "%s: block counts 0..%lu and %lu..%lu at odd offsets and "
                  "aligned, guards and state as the reference", name, LU(max_n),
                  LU(large[0]), LU(MAX_BLOCKS));

    /* The low counter word wraps into the high word inside a pass or a
     * tail; then the whole 64-bit counter wraps to 0. */
    ok = 1;
    for (k = 0; k <= 20; k++)
        for (n = 1; n <= 40; n++) {
            arc4py_chacha20_init(st, key, nonce, 8,
                                 0xFFFFFFFFull - k + (xs_next() << 32));
            ok &= compare(core, st, n, n % 64, "32-bit carry");
            arc4py_chacha20_init(st, key, nonce, 8, 0xFFFFFFFFFFFFFFFFull - k);
            ok &= compare(core, st, n, (n * 5) % 64, "64-bit carry");
        }
    arc4py_chacha20_init(st, key, nonce, 8, 0xFFFFFFFFull - 2);
    (core != NULL ? core->blocks : generic->blocks)(st, got_buf, 5);
    if (st[12] != 2 || st[13] != 1) {
        verdict_detail("counter words %08lx %08lx five blocks past 0xfffffffd",
                       LU(st[12]), LU(st[13]));
        ok = 0;
    }
    verdict_check(ok, "%s: streams across the 32-bit and 64-bit counter "
                  "carries as the reference", name);
}

/* The RFC vectors, and blocks 0 and 1 of a stream in one call. */
static void check_vectors(const arc4py_chacha20_core *core)
{
    const char *name = core != NULL ? core->name : "reference";
    uint8_t out[1 + 2 * 64];
    uint32_t st[16];
    size_t k, j, nblocks;
    int ok = 1;

    for (k = 0; k < n_vectors; k++) {
        const struct rfc_vector *v = &vectors[k];

        nblocks = (v->len + 63) / 64;
        arc4py_chacha20_init(st, v->key, v->nonce, 12, v->counter);
        memset(want_buf, 0xa5, 1 + nblocks * 64 + GUARD);
        (core != NULL ? core->blocks : ref_blocks)(st, want_buf + 1, nblocks);
        if (memcmp(want_buf + 1, v->keystream, v->len) != 0 ||
            !all_equal(want_buf + 1 + nblocks * 64, GUARD, 0xa5) ||
            st[12] != v->counter + nblocks) {
            verdict_detail("%s: vector %lu: keystream, guard bytes or counter "
                           "differ", name, LU(k + 1));
            ok = 0;
        }
        for (j = 0; j < n_vectors; j++)
            if (v->counter == 0 && vectors[j].counter == 1 &&
                memcmp(v->key, vectors[j].key, 32) == 0 &&
                memcmp(v->nonce, vectors[j].nonce, 12) == 0) {
                arc4py_chacha20_init(st, v->key, v->nonce, 12, 0);
                (core != NULL ? core->blocks : ref_blocks)(st, out + 1, 2);
                if (memcmp(out + 1, v->keystream, 64) != 0 ||
                    memcmp(out + 65, vectors[j].keystream, 64) != 0) {
                    verdict_detail("%s: blocks 0 and 1 in one call differ", name);
                    ok = 0;
                }
            }
    }
    verdict_check(ok && n_vectors > 0, "RFC 8439 vectors (%lu from stdin) "
                  "through %s", LU(n_vectors), name);
}

static int check_table(void)
{
    size_t n = 0, i;
    const arc4py_chacha20_core *cores = arc4py_chacha20_cores(&n);
    int ok = cores != NULL && n >= 1 && generic != NULL && generic->blocks &&
             strcmp(cores[n - 1].name, "generic") == 0;

    printf("INFO cpu features: %s\nINFO known cores:", arc4py_cpu_features());
    for (i = 0; arc4py_chacha20_known_name(i) != NULL; i++)
        printf(" %s", arc4py_chacha20_known_name(i));
    printf("\n");
    for (i = 0; ok && i < n; i++)
        ok = cores[i].blocks != NULL && arc4py_chacha20_is_known(cores[i].name) &&
             arc4py_chacha20_find(cores[i].name) == &cores[i];
    ok = ok && arc4py_chacha20_find("no-such-core") == NULL &&
         !arc4py_chacha20_is_known("no-such-core");
    verdict_check(ok, "core table: generic last, every runnable core known and "
                  "found by name, an unknown name neither");
    return ok;
}

/* arc4py_chacha20_init: the RFC layout from the first vector; the 64-bit
 * counter with an 8-byte nonce; other nonce sizes refused. */
static void check_init(void)
{
    static const uint8_t sigma[] = "expand 32-byte k";
    const struct rfc_vector *v = &vectors[0];
    uint8_t nonce8[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    uint32_t st[16];
    int i, ok = n_vectors > 0 &&
                arc4py_chacha20_init(st, v->key, v->nonce, 12, v->counter) == 0;

    for (i = 0; ok && i < 16; i++)
        ok = st[i] == (i < 4    ? load_le32(sigma + 4 * i)
                       : i < 12 ? load_le32(v->key + 4 * (i - 4))
                       : i == 12 ? v->counter
                                 : load_le32(v->nonce + 4 * (i - 13)));
    verdict_check(ok, "init: a 12-byte nonce gives the RFC 8439 2.3 state");
    ok = arc4py_chacha20_init(st, v->key, nonce8, 8, 0x0123456789abcdefull) == 0 &&
         st[12] == 0x89abcdefu && st[13] == 0x01234567u &&
         st[14] == load_le32(nonce8) && st[15] == load_le32(nonce8 + 4);
    verdict_check(ok, "init: an 8-byte nonce gives a 64-bit counter in words 12-13");
    verdict_check(arc4py_chacha20_init(st, v->key, nonce8, 10, 0) == -1 &&
                  arc4py_chacha20_init(st, v->key, nonce8, 0, 0) == -1,
                  "init: a nonce of neither 8 nor 12 bytes is refused");
}

int main(int argc, char **argv)
{
    const arc4py_chacha20_core *all;
    char checked[200] = "";
    size_t n_all = 0, i, count;

    generic = arc4py_chacha20_find("generic");
    read_vectors();
    if (!check_table())
        return verdict_end("\"vectors\": %lu", LU(n_vectors));
    check_init();
    check_vectors(NULL);
    check_streams(NULL, 64);
    all = arc4py_chacha20_cores(&n_all);
    count = argc > 1 ? (size_t)argc - 1 : n_all;
    for (i = 0; i < count; i++) {
        const char *name = argc > 1 ? argv[i + 1] : all[i].name;
        const arc4py_chacha20_core *core = arc4py_chacha20_find(name);

        if (core == NULL) {
            static char reason[120];
            snprintf(reason, sizeof reason, "core %s is %s", name,
                     arc4py_chacha20_is_known(name) ? "known but cannot run here"
                                                    : "not in this build");
            return verdict_skip(reason, "\"vectors\": %lu", LU(n_vectors));
        }
        choose_regs(core->name);
        check_vectors(core);
        check_streams(core, 300);
        printf("INFO %s: %lu vector register bytes read zero after each call\n",
               core->name, LU(reg_bytes));
        if (strlen(checked) + strlen(name) + 2 < sizeof checked)
            strcat(strcat(checked, checked[0] ? " " : ""), name);
    }
    return verdict_end("\"vectors\": %lu, \"cores\": \"%s\"", LU(n_vectors), checked);
}
