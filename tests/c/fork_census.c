/*
 * The fork census: fork() again and again while sibling threads refill
 * (2000-byte draws), fill directly (1 MiB) and stir; does the child's copy
 * of their memory hold a key, nonce or seed the parent's generator used
 * around the fork?  Built from arc4py's C sources with ARC4PY_TEST_HOOKS
 * (tests/c/test_c_programs.py); Linux (reads /proc/self/maps).
 *
 * The ground truth: arc4py_rng_debug_log records every seed the OS gave and
 * every core call's input state (key, counter, nonce), and
 * arc4py_rng_debug_vm_mix the VM-clone mix bytes, from which each call's
 * key before the mix (the pre-mix key: where the kernel has no vDSO
 * getrandom, the key itself) is logged too, all in a ring in
 * wipe-on-fork pages, so the child's memory holds no copy of it.  After
 * each fork the parent sends the child the entries logged from WINDOW
 * before the fork to a little after it.  The child looks up every 4-byte
 * aligned word of its writable mappings, and every byte offset of the
 * siblings' stacks, among those entries' key and nonce words (so any
 * layout: windows, spilled states, broadcast vectors).  Per entry:
 *   whole key   all 8 key words found (anywhere);
 *   key words   less than that: two key words 4-byte aligned on a
 *               sibling's stack, or two within NEAR bytes of each other
 *               anywhere;
 *   far pair    two key words found anywhere else;
 *   nonce       the two nonce words side by side.
 * One key word alone is chance: memory holds low-entropy words (small
 * integers, the low halves of pointers) and the siblings' random output,
 * which a random key word equals now and then; two far apart, rarely.
 * The control: DECOYS random words per entry, drawn by the child and so
 * never in the parent's memory, searched and counted the same way (each
 * word found at least once, anywhere); the key words found alone, and the
 * far pairs, are checked against the decoys' rates scaled to 8 words and
 * to 28 pairs of them.
 * Checks, over all the forks of each core:
 *   - no whole key, of any entry;
 *   - no key word and no nonce of a seed, of a pre-mix key, or of a
 *     refill's core call but one running at the fork (what the generator's
 *     own C handles);
 *   - no key word or nonce of a large fill's core calls, nor of a refill's
 *     call that was running at the fork, and no two working words of rows
 *     1..3 (after the 20 rounds) of one of the last WORK_BLOCKS blocks of
 *     any call near each other (what the cores' spills would hold: with
 *     the output they give input words).  A working word whose input word
 *     is 0 (a counter's high word, block 0's low one) equals its output
 *     word, which the child holds by right: it is not searched for;
 *   - key words found alone, and far pairs, no more often than the
 *     decoys' rates allow (LONE_MARGIN): a leak recurs, chance does not.
 *
 * usage: fork_census [--forks N] [--refills-only] [--plant WHAT] CORE...
 * (N forks per core, 300 by default; --refills-only: the siblings that
 * fill directly and stir stay idle; --plant: the positive controls, a
 * leak planted by the log itself in memory the child inherits, which the
 * census must find: "premix" two words of every pre-mix key, "seed" two
 * words of every seed, each pair 4 KiB apart off any stack; "lone" one
 * word of every refill's key.  The verdict is then ok if and only if the
 * check that leak breaks failed.)
 * Verdict (tests/c/verdict.h) facts: "forks", "whole_keys", "key_words",
 * "nonces", "core_words", "working_words", "lone_words", "decoy_words"
 * (both per 8 words, as a key has), "far_pairs", "decoy_pairs" (per 28
 * pairs), "entries" (entries searched, summed over forks), "premix"
 * (pre-mix keys logged), "caught" (with --plant: 1).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "generator.h"
#include "pipe_io.h"
#include "rng_test_hooks.h"
#include "chacha_rounds.h"
#include "verdict.h"

#define FORKS_DEFAULT 300
#define LOG_N 16384         /* ring of logged entries */
#define WINDOW 256          /* entries before the fork sent to the child */
#define MAX_SENT (WINDOW + 1024)
#define NEAR 512
/* Lone key words allowed beyond the decoys' rate: 4 standard deviations
   (a Poisson count) and 4 more. */
#define LONE_MARGIN(expected) (4.0 * root(expected) + 4.0)
/* Not a generator event: a key before the VM-clone mix (the log's own). */
#define LOG_PREMIX 4
#define REFILL_DRAW 2000
#define DIRECT_DRAW (1u << 20)
#define SIB_STACK (256u * 1024)

enum { ROLE_REFILL, ROLE_DIRECT, ROLE_STIR };
static const int roles[] = {ROLE_REFILL, ROLE_REFILL, ROLE_DIRECT, ROLE_STIR};
#define NSIB ((int)(sizeof roles / sizeof roles[0]))

struct entry {
    uint32_t w[16];  /* the core's input state; a seed as key and nonce */
    uint64_t idx, nblocks;
    int kind;        /* ARC4PY_RNG_LOG_SEED, _REFILL, _DIRECT or LOG_PREMIX */
    int tid;
};

/* In wipe-on-fork pages: the child sees zeros. */
struct log {
    uint64_t count;
    uint64_t seq[LOG_N]; /* idx + 1 once entry idx is written */
    struct entry e[LOG_N];
    uint32_t mix[8][8];  /* per sibling: the VM-clone bytes of its next call */
    int mixed[8];
};
static struct log *L;

/* Ordinary memory, read by the child as it was at the fork (not secret). */
static struct {
    uint64_t last;  /* this sibling's latest entry */
    int in_core;    /* that entry's core started, its stack not yet scrubbed */
} phase[NSIB];
static uintptr_t stack_lo[NSIB], stack_hi[NSIB];
static int stop, started, refills_only;
enum { PLANT_NONE, PLANT_PREMIX, PLANT_SEED, PLANT_LONE };
static int plant;
/* The planted leak: ordinary memory, off the stacks, each row 4 KiB. */
static volatile uint32_t planted[2][1024]; /* never read here: kept */
static uint64_t premix_logged;
static __thread int my_tid = -1;

/* The square root, without libm (Newton's method). */
static double root(double x)
{
    double r = x > 1 ? x : 1;
    int i;

    for (i = 0; i < 60; i++)
        r = (r + x / r) / 2;
    return r;
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, 4);
    return v;
}

/* The VM-clone bytes about to be mixed into the key of the thread's next
   core call (the ring's pages, not the stack). */
static void mix_logger(uint8_t *mix, size_t n)
{
    if (my_tid < 0 || n != sizeof L->mix[0])
        return;
    memcpy(L->mix[my_tid], mix, n);
    L->mixed[my_tid] = 1;
}

/* The log's own leak (--plant): words of entry i's key where the child
   will look. */
static void plant_words(const struct entry *e, uint64_t i)
{
    if (plant == PLANT_LONE) {
        planted[0][i % 1024] = e->w[4 + 3];
    } else {
        planted[0][i % 1024] = e->w[4];
        planted[1][i % 1024] = e->w[4 + 5];
    }
}

/* Called inside the generator: copies memory to memory, no locals beyond
   registers, so the log adds no key to the stack it searches. */
static void logger(int event, const void *p, size_t n)
{
    struct entry *e;
    uint64_t i;
    int k;

    if (my_tid < 0)
        return;
    if (event == ARC4PY_RNG_LOG_DONE) {
        __atomic_store_n(&phase[my_tid].in_core, 0, __ATOMIC_RELEASE);
        return;
    }
    if (event != ARC4PY_RNG_LOG_SEED && L->mixed[my_tid]) {
        /* The key before the mix: the core's input with the mix undone. */
        i = __atomic_fetch_add(&L->count, 1, __ATOMIC_ACQ_REL);
        e = &L->e[i % LOG_N];
        __atomic_store_n(&L->seq[i % LOG_N], 0, __ATOMIC_RELEASE);
        memcpy(e->w, p, sizeof e->w);
        for (k = 0; k < 8; k++)
            e->w[4 + k] ^= L->mix[my_tid][k];
        L->mixed[my_tid] = 0;
        e->idx = i;
        e->nblocks = 0;
        e->kind = LOG_PREMIX;
        e->tid = my_tid;
        if (plant == PLANT_PREMIX)
            plant_words(e, i);
        __atomic_fetch_add(&premix_logged, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&L->seq[i % LOG_N], i + 1, __ATOMIC_RELEASE);
    }
    i = __atomic_fetch_add(&L->count, 1, __ATOMIC_ACQ_REL);
    e = &L->e[i % LOG_N];
    __atomic_store_n(&L->seq[i % LOG_N], 0, __ATOMIC_RELEASE);
    if (event == ARC4PY_RNG_LOG_SEED) {
        rounds_seed_words(e->w, p);
    } else {
        memcpy(e->w, p, sizeof e->w);
    }
    e->idx = i;
    e->nblocks = event == ARC4PY_RNG_LOG_SEED ? 0 : n;
    e->kind = event;
    e->tid = my_tid;
    if ((plant == PLANT_SEED && event == ARC4PY_RNG_LOG_SEED) ||
        (plant == PLANT_LONE && event == ARC4PY_RNG_LOG_REFILL))
        plant_words(e, i);
    __atomic_store_n(&L->seq[i % LOG_N], i + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&phase[my_tid].last, i, __ATOMIC_RELEASE);
    __atomic_store_n(&phase[my_tid].in_core, event != ARC4PY_RNG_LOG_SEED,
                     __ATOMIC_RELEASE);
}

/* Off the stacks: random bytes there would match key words by chance. */
static uint8_t direct_out[DIRECT_DRAW], small_out[NSIB][REFILL_DRAW];

static void *sibling(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint8_t *small = small_out[t];
    pthread_attr_t a;
    void *lo;
    size_t sz;

    if (pthread_getattr_np(pthread_self(), &a) != 0 ||
        pthread_attr_getstack(&a, &lo, &sz) != 0)
        abort();
    pthread_attr_destroy(&a);
    stack_lo[t] = (uintptr_t)lo;
    stack_hi[t] = (uintptr_t)lo + sz;
    my_tid = t;
    __atomic_fetch_add(&started, 1, __ATOMIC_ACQ_REL);
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        int err = 0;

        if (refills_only && roles[t] != ROLE_REFILL) {
            usleep(1000);
            continue;
        }
        switch (roles[t]) {
        case ROLE_REFILL:
            err = arc4py_rng_buf(small, REFILL_DRAW);
            break;
        case ROLE_DIRECT:
            err = arc4py_rng_buf(direct_out, sizeof direct_out);
            break;
        default:
            err = arc4py_rng_stir();
            if (err == 0)
                err = arc4py_rng_buf(small, 100);
            break;
        }
        if (err != 0 && err != EAGAIN)
            abort();
    }
    return NULL;
}

/* ---- the child ---------------------------------------------------------- */

#define TABLE_BITS 19
#define TABLE (1u << TABLE_BITS)
#define HITS 16
/* The last blocks of each core call whose working words (after the 20
   rounds, before the input is added back) are searched for too: what a
   core leaves of its last pass. */
#define WORK_BLOCKS 8
#define WORK_SLOT 16 /* slots 16..31: working word 0..15 */
#define DECOY_SLOT 32 /* slots 32..: the decoys */
#define DECOYS 64
/* A key's 28 pairs of words against the decoys' 2016 pairs. */
#define DECOY_PAIR_SCALE (28.0 / (DECOYS * (DECOYS - 1) / 2))

/* A word found: where, which slot of its entry, which block. */
struct hit {
    uintptr_t addr;
    int slot, block;
};

/* The child's working memory, left out of its own search. */
static struct {
    struct entry sent[MAX_SENT];
    struct { uint32_t word; int entry, slot, block; } table[TABLE];
    uint32_t used[TABLE / 32];
    struct {
        struct hit key[HITS], work[HITS];
        int nkey, nwork, any_mask, nonce;
        uint32_t work_mask[WORK_BLOCKS];
        uint64_t decoy_mask;
    } hit[MAX_SENT];
    uint32_t x[16]; /* working words being tabled */
    uint32_t decoy[DECOYS];
    char maps[1 << 16];
} cw;

/* What a child reports to the parent. */
struct report {
    unsigned long whole_keys, key_words, nonces, core_words, entries;
    unsigned long whole_of[5]; /* whole keys by entry kind (log event) */
    /* entries with two working words of a block near each other, with a
       block's rows 1..3 (the cores' spills, like core_words) */
    unsigned long work_words, whole_work;
    unsigned long lone_words; /* entries with one key word found */
    unsigned long decoy_words; /* decoys found, each at most once an entry */
    unsigned long far_pairs;   /* entries with two key words far apart */
    unsigned long decoy_pairs; /* pairs of one entry's decoys found */
    char first[2][200]; /* the first whole key, the first other finding */
};

static unsigned slot_of(uint32_t w)
{
    return (w * 0x9e3779b1u) >> (32 - TABLE_BITS);
}

static void table_add(uint32_t w, int entry, int slot, int block)
{
    unsigned i = slot_of(w);

    if (w == 0)
        return;
    while (cw.used[i / 32] >> (i % 32) & 1)
        i = (i + 1) % TABLE;
    cw.used[i / 32] |= 1u << (i % 32);
    cw.table[i].word = w;
    cw.table[i].entry = entry;
    cw.table[i].slot = slot;
    cw.table[i].block = block;
}


/* Block `block` of the state in: its working words after the 20 rounds. */
static void working_words(const uint32_t in[16], uint64_t block, uint32_t x[16])
{
    uint64_t ctr = ((uint64_t)in[13] << 32 | in[12]) + block;

    memcpy(x, in, 16 * sizeof *x);
    x[12] = (uint32_t)ctr;
    x[13] = (uint32_t)(ctr >> 32);
    rounds_all(x);
}

static int on_stack(uintptr_t a)
{
    int t;

    for (t = 0; t < NSIB; t++)
        if (a >= stack_lo[t] && a < stack_hi[t])
            return 1;
    return 0;
}

/* In the siblings' output buffers (random bytes: chance matches). */
static int in_output(uintptr_t a)
{
    uintptr_t d = (uintptr_t)direct_out, o = (uintptr_t)small_out;

    return (a >= d && a < d + sizeof direct_out) ||
           (a >= o && a < o + sizeof small_out);
}

/* Look the word at a up: slots 0..7 are key words, 8 the nonce's first,
   WORK_SLOT + k working word k, DECOY_SLOT + k decoy k. */
static void probe(uintptr_t a, uintptr_t end)
{
    uint32_t w = rd32((const uint8_t *)a);
    unsigned i;

    if (w == 0)
        return;
    for (i = slot_of(w); cw.used[i / 32] >> (i % 32) & 1; i = (i + 1) % TABLE) {
        int e = cw.table[i].entry, s = cw.table[i].slot, b = cw.table[i].block;

        if (cw.table[i].word != w)
            continue;
        if (s >= DECOY_SLOT) {
            cw.hit[e].decoy_mask |= (uint64_t)1 << (s - DECOY_SLOT);
            continue;
        }
        if (s >= WORK_SLOT) {
            cw.hit[e].work_mask[b] |= 1u << (s - WORK_SLOT);
            if (cw.hit[e].nwork < HITS) {
                struct hit *h = &cw.hit[e].work[cw.hit[e].nwork++];

                h->addr = a;
                h->slot = s;
                h->block = b;
            }
            continue;
        }
        if (s == 8) {
            if (a + 8 <= end &&
                rd32((const uint8_t *)a + 4) == cw.sent[e].w[15])
                cw.hit[e].nonce = 1;
            continue;
        }
        cw.hit[e].any_mask |= 1 << s;
        if (cw.hit[e].nkey < HITS) {
            struct hit *h = &cw.hit[e].key[cw.hit[e].nkey++];

            h->addr = a;
            h->slot = s;
            h->block = 0;
        }
    }
}

static void scan(uintptr_t lo, uintptr_t hi, uintptr_t step)
{
    uintptr_t skip_lo = (uintptr_t)&cw, skip_hi = skip_lo + sizeof cw, a;

    for (a = lo; a + 4 <= hi; a += step)
        if (a < skip_lo || a >= skip_hi)
            probe(a, hi);
}

static int read_maps(void)
{
    int fd = open("/proc/self/maps", O_RDONLY);
    size_t n = 0;
    ssize_t r;

    if (fd < 0)
        return -1;
    while (n + 1 < sizeof cw.maps &&
           (r = read(fd, cw.maps + n, sizeof cw.maps - 1 - n)) > 0)
        n += (size_t)r;
    close(fd);
    cw.maps[n] = '\0';
    return 0;
}

static int popcount(unsigned m)
{
    int c = 0;

    for (; m; m &= m - 1)
        c++;
    return c;
}

/* Two different working words of one block found within NEAR bytes? */
static int near_pair(const struct hit *h, int n)
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++) {
            uintptr_t a = h[i].addr, b = h[j].addr;

            if (h[i].slot != h[j].slot && h[i].block == h[j].block &&
                (a > b ? a - b : b - a) < NEAR)
                return 1;
        }
    return 0;
}

static void child(int in, int out)
{
    /* Below it, the search's own frames: left out, as cw is. */
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    struct report rep;
    size_t n, e;
    char *line;
    int t;

    memset(&rep, 0, sizeof rep);
    if (read_all(in, &n, sizeof n) != 0 || n > MAX_SENT ||
        read_all(in, cw.sent, n * sizeof cw.sent[0]) != 0 || read_maps() != 0)
        _exit(3);
    for (e = 0; e < n; e++) {
        int k;

        uint64_t b, nb = cw.sent[e].nblocks;

        for (k = 0; k < 8; k++)
            table_add(cw.sent[e].w[4 + k], (int)e, k, 0);
        table_add(cw.sent[e].w[14], (int)e, 8, 0);
        if (getrandom(cw.decoy, sizeof cw.decoy, 0) != (ssize_t)sizeof cw.decoy)
            _exit(3);
        for (k = 0; k < DECOYS; k++)
            table_add(cw.decoy[k], (int)e, DECOY_SLOT + k, 0);
        for (b = nb > WORK_BLOCKS ? nb - WORK_BLOCKS : 0; b < nb; b++) {
            uint64_t ctr = ((uint64_t)cw.sent[e].w[13] << 32 | cw.sent[e].w[12]) + b;

            working_words(cw.sent[e].w, b, cw.x);
            /* Rows 1..3 only: row 0's working words, with the output,
               give back just the constants, and a core may keep them in
               memory (tests/c/core_spills.c).  A counter word that is 0
               leaves its working word as the output word. */
            for (k = 4; k < 16; k++)
                if (!(k == 12 && (uint32_t)ctr == 0) &&
                    !(k == 13 && (uint32_t)(ctr >> 32) == 0))
                    table_add(cw.x[k], (int)e, WORK_SLOT + k,
                              (int)(b - (nb > WORK_BLOCKS ? nb - WORK_BLOCKS : 0)));
        }
    }
    for (line = cw.maps; *line; ) {
        char *next = strchr(line, '\n');
        unsigned long lo, hi;
        char perms[8];

        if (next)
            *next = '\0';
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 &&
            perms[0] == 'r' && perms[1] == 'w' && !strstr(line, "[v"))
            scan(lo <= here && here < hi ? here : lo, hi, 4);
        line = next ? next + 1 : line + strlen(line);
    }
    /* A byte array on a stack may sit at any offset. */
    for (t = 0; t < NSIB; t++) {
        scan(stack_lo[t] + 1, stack_hi[t], 4);
        scan(stack_lo[t] + 2, stack_hi[t], 4);
        scan(stack_lo[t] + 3, stack_hi[t], 4);
    }
    rep.entries = n;
    for (e = 0; e < n; e++) {
        const struct entry *en = &cw.sent[e];
        int found = popcount((unsigned)cw.hit[e].any_mask);
        int whole = found == 8;
        /* One key word alone is compared with the decoys (chance); two or
           more of one key, wherever they are, are a finding. */
        int near = near_pair(cw.hit[e].key, cw.hit[e].nkey);
        int stacked = 0, output = 0, stack_slots = 0, h, d;
        int words, far, lone = found == 1;
        int nonce = cw.hit[e].nonce;
        int live = en->idx >= phase[en->tid].last;
        /* its core had run and its stack was not yet scrubbed */
        int in_core = en->idx == phase[en->tid].last && phase[en->tid].in_core;
        const char *what = NULL;
        int b;

        for (h = 0; h < cw.hit[e].nkey; h++) {
            uintptr_t at = cw.hit[e].key[h].addr;

            stacked += on_stack(at);
            output += in_output(at);
            /* (random bytes at an odd offset match one word by chance) */
            if (at % 4 == 0 && on_stack(at))
                stack_slots |= 1 << cw.hit[e].key[h].slot;
        }
        words = !whole && (near || popcount((unsigned)stack_slots) >= 2);
        far = !whole && !words && found >= 2;
        for (b = d = 0; b < DECOYS; b++)
            d += (int)(cw.hit[e].decoy_mask >> b & 1);
        rep.decoy_words += (unsigned long)d;
        rep.decoy_pairs += (unsigned long)(d * (d - 1) / 2);
        rep.far_pairs += far;

        /* A core's working words, with the output, give input words; the
           twelve of rows 1..3 of a block give its key, counter and nonce. */
        for (b = 0; b < WORK_BLOCKS; b++)
            if (cw.hit[e].work_mask[b] == 0xfff0) {
                rep.whole_work++;
                break;
            }
        rep.work_words += near_pair(cw.hit[e].work, cw.hit[e].nwork);

        if (whole) {
            rep.whole_keys++;
            rep.whole_of[en->kind]++;
            what = "whole key";
        } else if ((words || nonce) &&
                   (en->kind == ARC4PY_RNG_LOG_DIRECT || in_core)) {
            /* part of a key, found between its core's start and the scrub
               after it, or from a large fill: the cores' spills */
            rep.core_words++;
        } else if (words || nonce) {
            rep.key_words += words;
            rep.nonces += nonce;
            what = words ? "key words" : "nonce";
        } else if (lone) {
            rep.lone_words++;
        } else if (far) {
            what = "far pair";
        }
        if (what && rep.first[!whole][0] == '\0')
            snprintf(rep.first[!whole], sizeof rep.first[0],
                     "%s of a %s (sibling %d, %s: entry %lu, latest %lu%s), "
                     "words %d found (of the first hits %d on a stack, %d "
                     "in the draws' output)", what,
                     en->kind == ARC4PY_RNG_LOG_SEED ? "seed"
                     : en->kind == LOG_PREMIX ? "pre-mix key"
                     : en->kind == ARC4PY_RNG_LOG_REFILL ? "refill" : "direct fill",
                     en->tid, live ? "current" : "past",
                     (unsigned long)en->idx, (unsigned long)phase[en->tid].last,
                     in_core ? ", its core not yet scrubbed" : "",
                     found, stacked, output);
    }
    _exit(write_all(out, &rep, sizeof rep) != 0);
}

/* ---- the parent --------------------------------------------------------- */

static void pause_ns(long ns)
{
    struct timespec ts = {0, ns};

    nanosleep(&ts, NULL);
}

/* One fork; the child's report in *rep.  0, or -1 if it could not run. */
/* Why the last fork could not run (a count of them is checked). */
static char why[120];

static int one_fork(unsigned seed, struct report *rep)
{
    int to_child[2], from_child[2], status, spins, ok;
    uint64_t before, after, i, lo;
    size_t n = 0;
    pid_t pid;

    if (pipe(to_child) != 0)
        return snprintf(why, sizeof why, "pipe: %s", strerror(errno)), -1;
    if (pipe(from_child) != 0) {
        snprintf(why, sizeof why, "pipe: %s", strerror(errno));
        close(to_child[0]);
        close(to_child[1]);
        return -1;
    }
    /* Somewhere in the siblings' loops. */
    pause_ns(1000 + (long)(seed % 200) * 1000);
    before = __atomic_load_n(&L->count, __ATOMIC_ACQUIRE);
    pid = fork();
    if (pid == 0) {
        close(to_child[1]);
        close(from_child[0]);
        child(to_child[0], from_child[1]);
    }
    close(to_child[0]);
    close(from_child[1]);
    if (pid < 0) {
        snprintf(why, sizeof why, "fork: %s", strerror(errno));
        close(to_child[1]);
        close(from_child[0]);
        return -1;
    }
    /* Let each sibling log its next calls: a key made before the fork may
       be logged only as its core starts. */
    for (spins = 0; spins < 50 &&
         __atomic_load_n(&L->count, __ATOMIC_ACQUIRE) < before + 2 * NSIB; spins++)
        pause_ns(100000);
    after = __atomic_load_n(&L->count, __ATOMIC_ACQUIRE);
    lo = before > WINDOW ? before - WINDOW : 0;
    if (after - lo > MAX_SENT)
        after = lo + MAX_SENT;
    /* Straight from the ring to the pipe: a copy on this thread's stack
       would be found in the next child. */
    for (i = lo; i < after; i++)
        n += __atomic_load_n(&L->seq[i % LOG_N], __ATOMIC_ACQUIRE) == i + 1;
    ok = write_all(to_child[1], &n, sizeof n) == 0;
    for (i = lo; ok && n && i < after; i++)
        if (__atomic_load_n(&L->seq[i % LOG_N], __ATOMIC_ACQUIRE) == i + 1) {
            ok = write_all(to_child[1], &L->e[i % LOG_N], sizeof L->e[0]) == 0;
            n--;
        }
    ok = ok && n == 0 && read_all(from_child[0], rep, sizeof *rep) == 0;
    close(to_child[1]);
    close(from_child[0]);
    waitpid(pid, &status, 0);
    if (ok && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFSIGNALED(status))
        snprintf(why, sizeof why, "the child died of signal %d",
                 WTERMSIG(status));
    else
        snprintf(why, sizeof why, "the child exited %d, its report %s",
                 WEXITSTATUS(status), ok ? "read" : "cut short");
    return -1;
}

int main(int argc, char **argv)
{
    unsigned long forks = FORKS_DEFAULT, total = 0, entries = 0;
    unsigned long all_whole = 0, all_words = 0, all_nonces = 0, all_core = 0;
    unsigned long all_work = 0, all_lone = 0, all_decoys = 0, caught = 0;
    unsigned long all_far = 0, all_decoy_pairs = 0;
    int a, t;

    if (!arc4py_rng_test_hooks) {
        fprintf(stderr, "fork_census: build with -DARC4PY_TEST_HOOKS=1\n");
        return 2;
    }
    L = mmap(NULL, sizeof *L, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (L == MAP_FAILED)
        return 2;
#ifdef MADV_WIPEONFORK
    if (madvise(L, sizeof *L, MADV_WIPEONFORK) != 0)
#endif
        return verdict_skip("no MADV_WIPEONFORK here: the child would see "
                            "the log of keys it is searching for", "\"forks\": 0");
    arc4py_rng_debug_log = logger;
    arc4py_rng_debug_vm_mix = mix_logger;
    for (a = 1; a < argc; a++) {
        struct report rep, sum;
        pthread_t th[NSIB];
        pthread_attr_t attr;
        unsigned long f, failed_forks = 0;
        char first[2][200] = {"", ""};

        if (strcmp(argv[a], "--forks") == 0 && a + 1 < argc) {
            forks = strtoul(argv[++a], NULL, 10);
            continue;
        }
        if (strcmp(argv[a], "--refills-only") == 0) {
            refills_only = 1;
            continue;
        }
        if (strcmp(argv[a], "--plant") == 0 && a + 1 < argc) {
            a++;
            plant = strcmp(argv[a], "premix") == 0 ? PLANT_PREMIX
                    : strcmp(argv[a], "seed") == 0 ? PLANT_SEED
                    : strcmp(argv[a], "lone") == 0 ? PLANT_LONE : -1;
            if (plant < 0)
                return 2;
            continue;
        }
        if (arc4py_rng_select_core(argv[a]) != 0) {
            verdict_fail("%s: the C generator cannot select this core", argv[a]);
            continue;
        }
        memset(&sum, 0, sizeof sum);
        __atomic_store_n(&stop, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&started, 0, __ATOMIC_RELEASE);
        if (pthread_attr_init(&attr) != 0 ||
            pthread_attr_setstacksize(&attr, SIB_STACK) != 0)
            return 2;
        for (t = 0; t < NSIB; t++)
            if (pthread_create(&th[t], &attr, sibling, (void *)(intptr_t)t) != 0)
                return 2;
        pthread_attr_destroy(&attr);
        while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < NSIB)
            pause_ns(100000);
        for (f = 0; f < forks; f++) {
            if (one_fork((unsigned)(f * 2654435761u), &rep) != 0) {
                failed_forks++;
                continue;
            }
            sum.whole_keys += rep.whole_keys;
            for (t = 0; t < 5; t++)
                sum.whole_of[t] += rep.whole_of[t];
            sum.key_words += rep.key_words;
            sum.nonces += rep.nonces;
            sum.core_words += rep.core_words;
            sum.work_words += rep.work_words;
            sum.whole_work += rep.whole_work;
            sum.lone_words += rep.lone_words;
            sum.decoy_words += rep.decoy_words;
            sum.far_pairs += rep.far_pairs;
            sum.decoy_pairs += rep.decoy_pairs;
            sum.entries += rep.entries;
            for (t = 0; t < 2; t++)
                if (first[t][0] == '\0' && rep.first[t][0] != '\0')
                    memcpy(first[t], rep.first[t], sizeof first[t]);
        }
        __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
        for (t = 0; t < NSIB; t++)
            pthread_join(th[t], NULL);
        printf("INFO %s: %lu forks (%lu could not run), %lu entries searched: "
               "%lu whole keys (seeds %lu, pre-mix keys %lu, refills %lu, "
               "large fills %lu), %lu with key words, %lu with the nonce; the "
               "cores' spills: %lu with key words or the nonce, %lu with "
               "working words (%lu with a block's rows 1..3); chance: %.0f "
               "entries with one key word found, %.1f decoys found (per 8); "
               "%lu with two key words far apart, %.2f decoy pairs (per "
               "28)\n",
               argv[a], forks - failed_forks, failed_forks, sum.entries,
               sum.whole_keys, sum.whole_of[ARC4PY_RNG_LOG_SEED],
               sum.whole_of[LOG_PREMIX], sum.whole_of[ARC4PY_RNG_LOG_REFILL],
               sum.whole_of[ARC4PY_RNG_LOG_DIRECT], sum.key_words, sum.nonces,
               sum.core_words, sum.work_words, sum.whole_work,
               (double)sum.lone_words, sum.decoy_words * 8.0 / DECOYS,
               sum.far_pairs, sum.decoy_pairs * DECOY_PAIR_SCALE);
        {
            double expected = sum.decoy_words * 8.0 / DECOYS;
            double far_expected = sum.decoy_pairs * DECOY_PAIR_SCALE;
            int words_ok = sum.key_words + sum.nonces == 0;
            int lone_ok = sum.lone_words <= expected + LONE_MARGIN(expected);
            int far_ok = sum.far_pairs <= far_expected + LONE_MARGIN(far_expected);

            /* (a fork the machine refuses now and then is not a finding) */
            verdict_check(failed_forks * 100 <= forks, "%s: at least 99%% of "
                          "the forks' children reported (%lu did not%s%s)",
                          argv[a], failed_forks, failed_forks ? ": " : "", why);
            why[0] = '\0';
            if (plant != PLANT_NONE) {
                /* The positive control: the planted leak must be found. */
                int found = plant == PLANT_LONE ? !lone_ok : !words_ok || !far_ok;

                caught += found;
                verdict_check(found, "%s: the planted leak (%s) is found: %lu "
                              "entries with key words, %lu with a far pair, "
                              "%lu key words alone where chance gives %.1f",
                              argv[a],
                              plant == PLANT_LONE ? "one word of every refill key"
                              : plant == PLANT_SEED ? "two words of every seed"
                              : "two words of every pre-mix key",
                              sum.key_words, sum.far_pairs, sum.lone_words,
                              expected);
            } else {
                verdict_check(sum.whole_keys == 0, "%s: no whole key in any "
                              "child (%lu found)", argv[a], sum.whole_keys);
                if (first[0][0])
                    verdict_detail("the first: %s", first[0]);
                verdict_check(words_ok, "%s: no two key words and no nonce of "
                              "a seed, a pre-mix key or a refill in any child "
                              "(%lu entries with key words, %lu with the "
                              "nonce)", argv[a], sum.key_words, sum.nonces);
                if (first[1][0])
                    verdict_detail("the first: %s", first[1]);
                verdict_check(sum.core_words + sum.work_words + sum.whole_work == 0,
                              "%s: no key word, nonce or working words a core "
                              "spilled in any child (%lu entries with key "
                              "words or the nonce, %lu with working words)",
                              argv[a], sum.core_words,
                              sum.work_words + sum.whole_work);
                verdict_check(lone_ok, "%s: key words found alone no more "
                              "often than chance (%lu, decoys at the same "
                              "rate %.1f, allowed %.1f)", argv[a],
                              sum.lone_words, expected,
                              expected + LONE_MARGIN(expected));
                verdict_check(far_ok, "%s: two key words of one key far apart "
                              "no more often than chance (%lu, decoy pairs "
                              "at the same rate %.2f, allowed %.1f)", argv[a],
                              sum.far_pairs, far_expected,
                              far_expected + LONE_MARGIN(far_expected));
            }
        }
        total += forks - failed_forks;
        entries += sum.entries;
        all_whole += sum.whole_keys;
        all_words += sum.key_words;
        all_nonces += sum.nonces;
        all_core += sum.core_words;
        all_work += sum.work_words + sum.whole_work;
        all_lone += sum.lone_words;
        all_decoys += sum.decoy_words;
        all_far += sum.far_pairs;
        all_decoy_pairs += sum.decoy_pairs;
    }
    return verdict_end("\"forks\": %lu, \"whole_keys\": %lu, \"key_words\": %lu, "
                       "\"nonces\": %lu, \"core_words\": %lu, "
                       "\"working_words\": %lu, \"lone_words\": %lu, "
                       "\"decoy_words\": %.1f, \"entries\": %lu, "
                       "\"far_pairs\": %lu, \"decoy_pairs\": %.2f, "
                       "\"premix\": %lu, \"caught\": %lu",
                       total, all_whole, all_words, all_nonces, all_core,
                       all_work, all_lone, all_decoys * 8.0 / DECOYS, entries,
                       all_far, all_decoy_pairs * DECOY_PAIR_SCALE,
                       (unsigned long)premix_logged, caught);
}
