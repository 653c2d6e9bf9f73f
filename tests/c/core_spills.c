/*
 * What a snapshot of a core's stack holds while it runs: what a child
 * forked by another thread gets of a thread that is filling (its memory at
 * an instant, not its registers).
 *
 *   core_spills [NAME ...]        (default: every runnable core)
 *
 * Each call keys a state (kept in static memory, as the generator keeps it
 * in its own pages) with random key, nonce and counter, zeroes the stack
 * below the caller and runs the core, again and again, until a timer
 * signal lands inside it.  The handler runs on its own stack and copies
 * the DEPTH bytes below the stack pointer at the call: the stack at that
 * instant, the core's frames from their first byte, live and dead.  After
 * the call returns the same bytes are copied again.
 *
 * The call goes through call_core (x86-64 and AArch64), which records that
 * stack pointer and clears the callee-saved registers first.  A core saves
 * the ones it uses in its own frame, as the ABI asks: without the clearing,
 * what this program left in one (its reference rounds, a key word it drew)
 * is found there as if the core had spilled it, and without the exact
 * stack pointer the copy began up to 112 bytes below the core's first
 * frame, where the stack's random alignment put it.  -DPLANT fills those
 * registers with an x20 word of the call instead: the control, which must
 * find it in the generic core's frame (tests/c/test_c_programs.py).
 * Each copy is searched, as aligned 32-bit words, for
 *   key   a key or nonce word of the input (state words 4..11, 14, 15);
 *   x20   a word 4..11, 14 or 15 of a block's working state after the 20
 *         rounds: with the child's copy of the output (x20 + input) it
 *         gives that key or nonce word;
 *   round a working word of rows 1..3 (words 4..15) at a round boundary
 *         (after round 1..19): enough of one block's at one boundary run
 *         back to the key.
 * Row 0 (words 0..3) starts as the constants, so its words reveal no key
 * at the start or the feed-forward, and one row of four cannot run a
 * quarter round back: the cores may keep it in memory.  Counter words are
 * public (a block's index) and not searched.
 *
 * Checks per core: no key word, in any copy; no x20 word and no round
 * word, in any copy (a random 32-bit stack word matches one of the few
 * thousand targets with odds near 1e-6 per copy, so up to 2 copies with
 * a single match are let pass as chance; a real spill recurs).  The
 * counts per core are printed ("INFO") and the verdict's facts say the
 * cores and copies.  POSIX only (sigaltstack, setitimer).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chacha20.h"
#include "chacha_rounds.h"
#include "verdict.h"

#if defined(_WIN32)
int main(void)
{
    return verdict_skip("needs POSIX signals on an alternate stack",
                        "\"cores\": %d", 0);
}
#else

#include <signal.h>
#include <sys/time.h>

#define DEPTH 8192          /* bytes of stack copied below the caller */
#define WORDS (DEPTH / 4)
#define MAX_BLOCKS 40       /* per call: several 8- and 16-block groups */
#ifndef SNAPSHOTS          /* -DSNAPSHOTS=N: fewer (tests/c/test_c_programs.py) */
#define SNAPSHOTS 1500      /* copies inside calls, per core */
#endif
#define MAX_CALLS 200000    /* repeats, per core, before giving up */
#define CHANCE 2            /* copies with one lone match let pass */

static uint32_t state[16];  /* static: the input is not on the stack */
static uint32_t input[16];
static uint8_t out[MAX_BLOCKS * 64];
static uint32_t snap[WORDS];
static volatile sig_atomic_t in_core, taken;
static volatile uintptr_t top;

/* ---- the reference: every round boundary of every block --------------- */


enum { KEY, X20, ROUND, KINDS };
static const char *const kind_names[KINDS] = {"key", "x20", "round"};

struct target {
    uint32_t value;
    uint16_t block, round; /* round 0: input, 20: after the rounds */
    uint8_t word, kind;
};
#define MAX_TARGETS (10 + MAX_BLOCKS * (10 + 19 * 12))
static struct target targets[MAX_TARGETS];
static size_t n_targets;

static int by_value(const void *a, const void *b)
{
    uint32_t x = ((const struct target *)a)->value,
             y = ((const struct target *)b)->value;
    return x < y ? -1 : x > y;
}

static int secret_word(int w) { return (w >= 4 && w <= 11) || w >= 14; }

static void add(uint32_t v, int block, int round, int word, int kind)
{
    struct target *t = &targets[n_targets++];

    t->value = v;
    t->block = (uint16_t)block;
    t->round = (uint16_t)round;
    t->word = (uint8_t)word;
    t->kind = (uint8_t)kind;
}

static void make_targets(size_t nblocks)
{
    uint32_t x[16];
    uint64_t ctr = (uint64_t)input[13] << 32 | input[12];
    size_t b;
    int w, r;

    n_targets = 0;
    for (w = 0; w < 16; w++)
        if (secret_word(w))
            add(input[w], 0, 0, w, KEY);
    for (b = 0; b < nblocks; b++) {
        memcpy(x, input, sizeof x);
        x[12] = (uint32_t)(ctr + b);
        x[13] = (uint32_t)((ctr + b) >> 32);
        for (r = 1; r <= 20; r++) {
            rounds_one(x, r);
            for (w = 4; w < 16; w++)
                if (r < 20)
                    add(x[w], (int)b, r, w, ROUND);
                else if (secret_word(w))
                    add(x[w], (int)b, r, w, X20);
        }
    }
    qsort(targets, n_targets, sizeof targets[0], by_value);
}

/* ---- searching one copy ----------------------------------------------- */

struct counts {
    unsigned long copies;
    unsigned long with[KINDS];  /* copies with any match of the kind */
    unsigned long lone[KINDS];  /* ... with exactly one */
    unsigned most[KINDS];       /* most in one copy (round: one boundary) */
};

static void search(const uint32_t *s, struct counts *c)
{
    static uint8_t seen[MAX_TARGETS];
    static unsigned at_boundary[MAX_BLOCKS][20];
    unsigned n[KINDS] = {0, 0, 0}, most_round = 0;
    size_t i;
    int k;

    memset(seen, 0, n_targets);
    memset(at_boundary, 0, sizeof at_boundary);
    for (i = 0; i < WORDS; i++) {
        size_t lo = 0, hi = n_targets;

        if (s[i] == 0)
            continue;
        while (lo < hi) { /* first target >= s[i] */
            size_t mid = (lo + hi) / 2;
            if (targets[mid].value < s[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < n_targets && targets[lo].value == s[i]; lo++) {
            const struct target *t = &targets[lo];

            if (seen[lo]++)
                continue; /* one word, several copies on the stack */
            n[t->kind]++;
            if (t->kind == ROUND &&
                ++at_boundary[t->block][t->round] > most_round)
                most_round = at_boundary[t->block][t->round];
        }
    }
    n[ROUND] = most_round;
    c->copies++;
    for (k = 0; k < KINDS; k++) {
        c->with[k] += n[k] > 0;
        c->lone[k] += n[k] == 1;
        if (n[k] > c->most[k])
            c->most[k] = n[k];
    }
}

/* ---- the calls -------------------------------------------------------- */

static void on_timer(int sig)
{
    const volatile uint32_t *p;
    size_t i;

    (void)sig;
    if (!in_core || taken || !top)
        return;
    p = (const volatile uint32_t *)(top - DEPTH);
    for (i = 0; i < WORDS; i++)
        snap[i] = p[i];
    taken = 1;
}

/* Zero the stack below the caller, where the core's frames will lie. */
__attribute__((noinline)) static void zero_below(void)
{
    uint8_t area[DEPTH + 1024];
    volatile uint8_t *p = area;
    size_t i;

    __asm__ __volatile__("" : "+r"(p) : : "memory");
    for (i = 0; i < sizeof area; i++)
        p[i] = 0;
}

/*
 * call_core(fn, state, out, nblocks, top, fill): stores the stack pointer
 * at the call in *top, sets every callee-saved register to fill, calls
 * fn(state, out, nblocks) and restores them.  Its own frame lies above
 * *top, outside the copies.
 */
typedef void call_core_fn(arc4py_chacha20_blocks_fn fn, uint32_t *st,
                          uint8_t *o, size_t nblocks, volatile uintptr_t *at,
                          uint64_t fill);
#if defined(__x86_64__) && !defined(__APPLE__) && !defined(__CYGWIN__)
#define CALL_CORE 1
call_core_fn call_core;
__asm__(".text\n"
        ".p2align 4\n"
        "call_core:\n"
        "    push %rbx\n    push %rbp\n    push %r12\n"
        "    push %r13\n    push %r14\n    push %r15\n"
        "    sub $8, %rsp\n"                 /* 16-byte aligned at the call */
        "    mov %rdi, %rax\n"
        "    mov %rsi, %rdi\n    mov %rdx, %rsi\n    mov %rcx, %rdx\n"
        "    mov %rsp, (%r8)\n"
        "    mov %r9, %rbx\n    mov %r9, %rbp\n    mov %r9, %r12\n"
        "    mov %r9, %r13\n    mov %r9, %r14\n    mov %r9, %r15\n"
        "    call *%rax\n"
        "    add $8, %rsp\n"
        "    pop %r15\n    pop %r14\n    pop %r13\n"
        "    pop %r12\n    pop %rbp\n    pop %rbx\n"
        "    ret\n");
#elif defined(__aarch64__) && !defined(__APPLE__)
#define CALL_CORE 1
call_core_fn call_core;
/* x19..x28, and d8..d15 (the low halves of v8..v15, callee-saved). */
__asm__(".text\n"
        ".p2align 4\n"
        "call_core:\n"
        "    stp x29, x30, [sp, #-160]!\n"
        "    stp x19, x20, [sp, #16]\n    stp x21, x22, [sp, #32]\n"
        "    stp x23, x24, [sp, #48]\n    stp x25, x26, [sp, #64]\n"
        "    stp x27, x28, [sp, #80]\n"
        "    stp d8, d9, [sp, #96]\n     stp d10, d11, [sp, #112]\n"
        "    stp d12, d13, [sp, #128]\n  stp d14, d15, [sp, #144]\n"
        "    mov x9, x0\n"
        "    mov x0, x1\n    mov x1, x2\n    mov x2, x3\n"
        "    mov x10, sp\n   str x10, [x4]\n"
        "    mov x19, x5\n   mov x20, x5\n   mov x21, x5\n   mov x22, x5\n"
        "    mov x23, x5\n   mov x24, x5\n   mov x25, x5\n   mov x26, x5\n"
        "    mov x27, x5\n   mov x28, x5\n   mov x29, x5\n"
        "    fmov d8, x5\n   fmov d9, x5\n   fmov d10, x5\n  fmov d11, x5\n"
        "    fmov d12, x5\n  fmov d13, x5\n  fmov d14, x5\n  fmov d15, x5\n"
        "    blr x9\n"
        "    ldp d14, d15, [sp, #144]\n  ldp d12, d13, [sp, #128]\n"
        "    ldp d10, d11, [sp, #112]\n  ldp d8, d9, [sp, #96]\n"
        "    ldp x27, x28, [sp, #80]\n   ldp x25, x26, [sp, #64]\n"
        "    ldp x23, x24, [sp, #48]\n   ldp x21, x22, [sp, #32]\n"
        "    ldp x19, x20, [sp, #16]\n"
        "    ldp x29, x30, [sp], #160\n"
        "    ret\n");
#else
/* Elsewhere: a plain call, the copy from below this frame (its rounding
   may leave the top of the core's first frame out). */
#define CALL_CORE 0
static void call_core(arc4py_chacha20_blocks_fn fn, uint32_t *st, uint8_t *o,
                      size_t nblocks, volatile uintptr_t *at, uint64_t fill)
{
    volatile char here;

    (void)fill;
    *at = ((uintptr_t)&here - 64) & ~(uintptr_t)63;
    fn(st, o, nblocks);
}
#endif

#ifdef PLANT
/* The control: an x20 word of the call's last block (word 15). */
static uint64_t plant_word(void)
{
    size_t i;

    for (i = 0; i < n_targets; i++)
        if (targets[i].kind == X20 && targets[i].word == 15)
            return targets[i].value;
    return 0;
}
#endif

/* Run the call until a snapshot lands in it (or give up: 0), then copy
   the stack it left after returning into after[]. */
__attribute__((noinline)) static int run_call(arc4py_chacha20_blocks_fn fn,
                                              size_t nblocks, uint32_t *after)
{
    const volatile uint32_t *p;
    uint64_t fill = 0;
    int tries;
    size_t i;

#ifdef PLANT
    fill = plant_word();
#endif
    zero_below();
    top = 0; /* the handler copies nothing until call_core sets it */
    taken = 0;
    for (tries = 0; tries < 1000 && !taken; tries++) {
        memcpy(state, input, sizeof state);
        in_core = 1;
        call_core(fn, state, out, nblocks, &top, fill);
        in_core = 0;
    }
    p = (const volatile uint32_t *)(top - DEPTH);
    for (i = 0; i < WORDS; i++)
        after[i] = p[i];
    return taken;
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint32_t rnd32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

static void print_counts(const char *name, const char *when,
                         const struct counts *c)
{
    int k;

    printf("INFO %s %s: %lu copies", name, when, c->copies);
    for (k = 0; k < KINDS; k++)
        printf("; %s: in %lu (lone %lu), most %u%s", kind_names[k], c->with[k],
               c->lone[k], c->most[k], k == ROUND ? " at one boundary" : "");
    putchar('\n');
}

static unsigned long total_copies;

static void check_core(const arc4py_chacha20_core *core)
{
    static uint32_t after[WORDS];
    struct counts during, left;
    unsigned long calls = 0;
    int k, w;

    memset(&during, 0, sizeof during);
    memset(&left, 0, sizeof left);
    while (during.copies < SNAPSHOTS && calls < MAX_CALLS) {
        size_t nblocks = 1 + rnd32() % MAX_BLOCKS;

        input[0] = 0x61707865u; input[1] = 0x3320646eu;
        input[2] = 0x79622d32u; input[3] = 0x6b206574u;
        for (w = 4; w < 16; w++)
            input[w] = rnd32();
        if (calls % 8 == 0) /* the low counter word carries in the call */
            input[12] = 0u - 1u - rnd32() % 8;
        calls++;
        make_targets(nblocks);
        if (run_call(core->blocks, nblocks, after))
            search(snap, &during);
        search(after, &left);
    }
    print_counts(core->name, "during calls", &during);
    print_counts(core->name, "after return", &left);
    total_copies += during.copies;
    if (during.copies < SNAPSHOTS / 2) {
        verdict_fail("%s: only %lu snapshots inside calls", core->name,
                     during.copies);
        return;
    }
#ifdef PLANT
    /* The control: the planted word, saved by the core in its frame, in
       most copies (a signal can land before the core saves it). */
    verdict_check(during.with[X20] > during.copies / 2 &&
                  left.with[X20] > left.copies / 2,
                  "%s: the x20 word planted in the callee-saved registers "
                  "found (during calls in %lu of %lu copies, after return in "
                  "%lu of %lu)", core->name, during.with[X20], during.copies,
                  left.with[X20], left.copies);
    (void)k;
    return;
#endif
    for (k = 0; k < KINDS; k++) {
        const struct counts *c[2] = {&during, &left};
        int i;

        for (i = 0; i < 2; i++) {
            /* Keys: none at all (10 targets, chance ~1e-9 a copy). */
            unsigned long allowed = k == KEY ? 0 : CHANCE;
            int ok = c[i]->most[k] <= (k == KEY ? 0u : 1u) &&
                     c[i]->with[k] <= allowed;

            verdict_check(ok, "%s, %s: no %s word on the stack "
                          "(%lu of %lu copies hold some, at most %u in one)",
                          core->name, i ? "after return" : "during calls",
                          kind_names[k], c[i]->with[k], c[i]->copies,
                          c[i]->most[k]);
        }
    }
}

int main(int argc, char **argv)
{
    static uint8_t altstack[1 << 16];
    struct sigaction sa;
    struct itimerval it;
    stack_t ss;
    size_t count, i;
    const arc4py_chacha20_core *cores = arc4py_chacha20_cores(&count);
    int a, checked = 0;

    ss.ss_sp = altstack;
    ss.ss_size = sizeof altstack;
    ss.ss_flags = 0;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_timer;
    sa.sa_flags = SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGALRM, &sa, NULL) != 0) {
        perror("sigaltstack/sigaction");
        return 2;
    }
    it.it_interval.tv_sec = 0;
    it.it_interval.tv_usec = 37;
    it.it_value = it.it_interval;
    if (setitimer(ITIMER_REAL, &it, NULL) != 0) {
        perror("setitimer");
        return 2;
    }
    for (i = 0; i < count; i++) {
        int wanted = argc < 2;

        for (a = 1; a < argc; a++)
            wanted |= strcmp(argv[a], cores[i].name) == 0;
        if (wanted) {
            check_core(&cores[i]);
            checked++;
        }
    }
    it.it_value.tv_usec = 0;
    it.it_interval.tv_usec = 0;
    setitimer(ITIMER_REAL, &it, NULL);
    if (checked < (argc < 2 ? 1 : argc - 1))
        return verdict_skip("a core named cannot run here",
                            "\"cores\": %d, \"copies\": %lu", checked,
                            total_copies);
    return verdict_end("\"cores\": %d, \"copies\": %lu, \"call_core\": %d",
                       checked, total_copies, CALL_CORE);
}
#endif
