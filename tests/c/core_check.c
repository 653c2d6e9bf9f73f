/*
 * One ChaCha20 core against the generic core and RFC 8439, from C:
 *
 *   core_check NAME < vectors.txt
 *
 * vectors.txt has one RFC 8439 vector a line, "key nonce counter keystream"
 * in hex (tests write it from tests/data/rfc8439_vectors.json).  Checks:
 * the vectors; every block count 0..300 into output at odd addresses with
 * guard bytes on both sides (nothing written outside, state advanced as by
 * generic); streams across the 32-bit and 64-bit counter carries; and that
 * the vector registers are all zero when the core returns.  Built with the
 * chacha20_*.c sources by tests/test_cores.py (natively) and
 * tests/test_neon_qemu.py (aarch64, under qemu).  Exit status 0: all good.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chacha20.h"

void arc4py_chacha20_blocks_generic(uint32_t state[16], uint8_t *out,
                                    size_t nblocks);

#define GUARD 64
#define MAX_BLOCKS 300
static uint8_t want_buf[GUARD * 2 + 64 + MAX_BLOCKS * 64];
static uint8_t got_buf[sizeof want_buf];
static int failures;

#define FAIL(...)                                                          \
    do {                                                                   \
        fprintf(stderr, __VA_ARGS__);                                      \
        fputc('\n', stderr);                                               \
        if (++failures > 20)                                               \
            exit(1);                                                       \
    } while (0)

/* xorshift64*: deterministic keys and counters, no libc rand. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next64(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

/* Vector registers, read straight after a call (see call_and_dump). */
static uint8_t regs[32 * 64];
static size_t reg_bytes;

#if defined(__x86_64__)
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
            DUMP_ZMM(0) DUMP_ZMM(1) DUMP_ZMM(2) DUMP_ZMM(3) DUMP_ZMM(4)
            DUMP_ZMM(5) DUMP_ZMM(6) DUMP_ZMM(7) DUMP_ZMM(8) DUMP_ZMM(9)
            DUMP_ZMM(10) DUMP_ZMM(11) DUMP_ZMM(12) DUMP_ZMM(13) DUMP_ZMM(14)
            DUMP_ZMM(15) DUMP_ZMM(16) DUMP_ZMM(17) DUMP_ZMM(18) DUMP_ZMM(19)
            DUMP_ZMM(20) DUMP_ZMM(21) DUMP_ZMM(22) DUMP_ZMM(23) DUMP_ZMM(24)
            DUMP_ZMM(25) DUMP_ZMM(26) DUMP_ZMM(27) DUMP_ZMM(28) DUMP_ZMM(29)
            DUMP_ZMM(30) DUMP_ZMM(31) : : "r"(regs) : "memory");
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
static void call_and_dump(arc4py_chacha20_blocks_fn fn, uint32_t *state,
                          uint8_t *out, size_t n)
{
    fn(state, out, n);
}
static void choose_regs(const char *name) { (void)name; reg_bytes = 0; }
#endif

static void check_regs(const char *what)
{
    size_t i;

    for (i = 0; i < reg_bytes; i++)
        if (regs[i] != 0) {
            FAIL("%s: vector register byte %zu is %02x after the core "
                 "returned (not cleared)", what, i, regs[i]);
            return;
        }
}

/* Run n blocks from state into each buffer at offset; compare everything. */
static void compare(arc4py_chacha20_blocks_fn fn, const uint32_t state[16],
                    size_t n, size_t offset, const char *what)
{
    uint32_t s_want[16], s_got[16];
    size_t i, len = GUARD + offset + n * 64 + GUARD;

    memcpy(s_want, state, sizeof s_want);
    memcpy(s_got, state, sizeof s_got);
    memset(want_buf, 0xa5, len);
    memset(got_buf, 0xa5, len);
    arc4py_chacha20_blocks_generic(s_want, want_buf + GUARD + offset, n);
    memset(regs, 0xee, sizeof regs);
    call_and_dump(fn, s_got, got_buf + GUARD + offset, n);
    check_regs(what);
    for (i = 0; i < len; i++)
        if (got_buf[i] != want_buf[i]) {
            long at = (long)i - (long)(GUARD + offset);
            FAIL("%s: n=%zu offset=%zu: byte %ld %s differs", what, n,
                 offset, at, at < 0 || at >= (long)(n * 64)
                                 ? "(a guard byte: written outside out)"
                                 : "of the keystream");
            return;
        }
    if (memcmp(s_got, s_want, sizeof s_got) != 0)
        FAIL("%s: n=%zu: state after differs from generic", what, n);
}

static int unhex(const char *hex, uint8_t *out, size_t max)
{
    size_t i, len = strlen(hex);

    if (len % 2 || len / 2 > max)
        return -1;
    for (i = 0; i < len / 2; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    return (int)(len / 2);
}

static int rfc_vectors(arc4py_chacha20_blocks_fn fn)
{
    char key_hex[80], nonce_hex[40], ks_hex[1100];
    unsigned long long counter;
    uint8_t key[32], nonce[12], ks[544], out[576];
    int count = 0, ks_len;

    while (scanf("%79s %39s %llu %1099s", key_hex, nonce_hex, &counter,
                 ks_hex) == 4) {
        uint32_t state[16];
        size_t blocks;

        ks_len = unhex(ks_hex, ks, sizeof ks);
        if (unhex(key_hex, key, 32) != 32 || unhex(nonce_hex, nonce, 12) != 12
            || ks_len <= 0) {
            FAIL("malformed vector line %d", count + 1);
            return count;
        }
        arc4py_chacha20_init(state, key, nonce, 12, counter);
        blocks = ((size_t)ks_len + 63) / 64;
        memset(out, 0, sizeof out);
        fn(state, out + 1, blocks); /* at an odd address */
        if (memcmp(out + 1, ks, (size_t)ks_len) != 0)
            FAIL("RFC 8439 vector %d: keystream differs", count + 1);
        if (state[12] != (uint32_t)(counter + blocks))
            FAIL("RFC 8439 vector %d: counter not advanced", count + 1);
        count++;
    }
    return count;
}

int main(int argc, char **argv)
{
    const arc4py_chacha20_core *core;
    uint32_t state[16];
    uint8_t key[32], nonce[8];
    size_t n, i, k;
    int vectors;

    if (argc != 2) {
        fprintf(stderr, "usage: core_check NAME < vectors\n");
        return 2;
    }
    core = arc4py_chacha20_find(argv[1]);
    if (core == NULL) {
        fprintf(stderr, "core %s cannot run here\n", argv[1]);
        return 2;
    }
    choose_regs(core->name);

    vectors = rfc_vectors(core->blocks);
    if (vectors == 0)
        FAIL("no RFC 8439 vectors on stdin");

    /* Every block count 0..300, at every odd offset in turn. */
    for (i = 0; i < 32; i++)
        key[i] = (uint8_t)next64();
    for (i = 0; i < 8; i++)
        nonce[i] = (uint8_t)next64();
    for (n = 0; n <= MAX_BLOCKS; n++) {
        arc4py_chacha20_init(state, key, nonce, 8, next64() >> 8);
        compare(core->blocks, state, n, (2 * n + 1) % 64, "lengths");
    }
    /* Aligned output, every tail width. */
    for (n = 0; n <= 40; n++)
        compare(core->blocks, state, n, 0, "aligned");

    /* The low counter word wraps into the high word inside a pass or a
     * tail; then the whole 64-bit counter wraps to 0. */
    for (k = 0; k <= 20; k++)
        for (n = 1; n <= 40; n++) {
            arc4py_chacha20_init(state, key, nonce, 8,
                                 0xFFFFFFFFull - k + (next64() << 32));
            compare(core->blocks, state, n, n % 64, "32-bit carry");
            arc4py_chacha20_init(state, key, nonce, 8,
                                 0xFFFFFFFFFFFFFFFFull - k);
            compare(core->blocks, state, n, (n * 5) % 64, "64-bit carry");
        }

    if (failures)
        return 1;
    printf("core %s: %d RFC 8439 vectors, block counts 0..%d at odd offsets "
           "with guards, counter carries, %zu register bytes zero: ok\n",
           core->name, vectors, MAX_BLOCKS, reg_bytes);
    return 0;
}
