/*
 * fork() while another thread is in a large fill: how much of the parent's
 * output produced after the fork can the child compute from what it
 * inherited?
 *
 * A filler thread loops over 1 MiB arc4py_rng_buf() fills into a 4 MiB
 * ring.  The main thread forks mid-fill.  The child searches every
 * readable, writable mapping it inherited (the filler's stack among them)
 * for ChaCha20 states (the "expand 32-byte k" words, in the layouts the
 * cores use: 16 words, rows of 2 or 4 blocks, or 4, 8 or 16 lanes per
 * word), and sends them and its copy of the ring to the parent.  The
 * parent lets the filler finish the fill in flight, stops it, and counts
 * the 64-byte blocks of the ring written after the fork (those that differ
 * from the child's copy) that some found state's keystream reproduces
 * (generic core, up to 2**14 blocks from each state, from the counter
 * found and from counter 0).
 *
 * argv[1], if given, is the core the generator uses.
 * The verdict (tests/c/verdict.h) is skip when the fork came after the
 * fill's last byte (nothing to reproduce), and fails on a reproduced
 * byte; a "state" is the constants in some layout, so row 0 alone (which
 * the generic core keeps in memory) counts: reported, not checked.  Its
 * facts: "states", "post_fork_blocks", "reproduced_bytes".
 */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chacha20.h"
#include "generator.h"
#include "pipe_io.h"
#include "verdict.h"

#define FILL (1u << 20)
#define RING (4u * FILL)
#define MAX_STATES 4096
#define STREAM_BLOCKS (1u << 14)
#define BLK ARC4PY_CHACHA20_BLOCK_BYTES

static uint8_t ring[RING];
static uint8_t snapshot[RING];
static int fills_done, stop; /* atomics */

static void *filler(void *arg)
{
    unsigned slot = 0;

    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        if (arc4py_rng_buf(ring + (size_t)slot * FILL, FILL) != 0)
            abort();
        slot = (slot + 1) % (RING / FILL);
        __atomic_fetch_add(&fills_done, 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

/*
 * The layouts a core may keep a state in: one 16-word state (stride 1 within
 * each row), rows of r blocks side by side (a ymm/zmm row holding two or
 * four blocks' rows), or one word per vector of w lanes (the vertical
 * layout: word i of every block in vector i).  word(k) of block 0 lies at
 * k * step + (k / 4) * row_skip words from the start.
 */
static const struct layout {
    unsigned step, row_skip;
} layouts[] = {
    {1, 0},   /* 16 words */
    {1, 4},   /* rows of 2 blocks */
    {1, 12},  /* rows of 4 blocks */
    {4, 0},   /* 4 lanes per word */
    {8, 0},   /* 8 lanes */
    {16, 0},  /* 16 lanes */
};
#define LAYOUTS (sizeof layouts / sizeof layouts[0])

static const uint32_t sigma[4] = {0x61707865, 0x3320646e, 0x79622d32,
                                  0x6b206574};

/* Block 0's state at w in layout l, if w holds the constants there. */
static int state_at(const uint32_t *w, const uint32_t *end,
                    const struct layout *l, uint32_t st[16])
{
    unsigned k, lanes = l->step > 1 ? l->step : 1 + l->row_skip / 4;

    if (w + 15 * l->step + 3 * l->row_skip + 1 > end)
        return 0;
    for (k = 0; k < 4; k++) {
        unsigned j;

        /* the constants in every lane (block) of their vectors */
        for (j = 0; j < lanes; j++)
            if (w[k * l->step + (l->step > 1 ? j : 4 * j)] != sigma[k])
                return 0;
    }
    for (k = 0; k < 16; k++)
        st[k] = w[k * l->step + (k / 4) * l->row_skip];
    return 1;
}

/* In the child: every ChaCha20 state, in any layout above, in the
   inherited writable memory. */
static size_t find_states(uint32_t (*found)[16])
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    size_t count = 0;

    if (maps == NULL)
        return 0;
    while (fgets(line, sizeof line, maps) && count < MAX_STATES) {
        uintptr_t lo, hi, a;
        char perms[8];

        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 ||
            perms[0] != 'r' || perms[1] != 'w' || strstr(line, "[v"))
            continue;
        for (a = lo; a + 64 <= hi && count < MAX_STATES; a += 4) {
            const uint32_t *w = (const uint32_t *)a;
            size_t l;

            /* (found[] itself fills as the scan goes: not a source) */
            if ((const uint8_t *)w >= (const uint8_t *)found &&
                (const uint8_t *)w < (const uint8_t *)(found + MAX_STATES))
                continue;
            if (w[0] != sigma[0])
                continue;
            for (l = 0; l < LAYOUTS && count < MAX_STATES; l++)
                if (state_at(w, (const uint32_t *)hi, &layouts[l],
                             found[count]))
                    count++;
        }
    }
    fclose(maps);
    return count;
}

/* Open addressing over the post-fork blocks' first 8 bytes. */
static uint64_t *table;
static size_t table_mask;

static void table_add(const uint8_t *blk)
{
    uint64_t k;
    size_t i;

    memcpy(&k, blk, 8);
    for (i = (size_t)(k * 0x9e3779b97f4a7c15ull) & table_mask; table[i];
         i = (i + 1) & table_mask)
        ;
    table[i] = k ? k : 1;
}

static int table_has(const uint8_t *blk)
{
    uint64_t k;
    size_t i;

    memcpy(&k, blk, 8);
    k = k ? k : 1;
    for (i = (size_t)(k * 0x9e3779b97f4a7c15ull) & table_mask; table[i];
         i = (i + 1) & table_mask)
        if (table[i] == k)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    static uint32_t states[MAX_STATES][16];
    const arc4py_chacha20_core *generic = arc4py_chacha20_find("generic");
    uint8_t *stream = malloc((size_t)STREAM_BLOCKS * BLK);
    pthread_t t;
    int fds[2], status;
    size_t nstates = 0, post = 0, reproduced = 0, i, j;
    pid_t pid;

    if (argc > 1 && arc4py_rng_select_core(argv[1]) != 0) {
        verdict_fail("the C generator cannot select core %s", argv[1]);
        return verdict_end("");
    }
    if (generic == NULL || stream == NULL || pipe(fds) != 0 ||
        pthread_create(&t, NULL, filler, NULL) != 0)
        return 2;
    while (__atomic_load_n(&fills_done, __ATOMIC_ACQUIRE) < 3)
        ;
    usleep(37); /* somewhere inside a fill */
    pid = fork();
    if (pid == 0) {
        size_t n = find_states(states);

        close(fds[0]);
        _exit(write_all(fds[1], &n, sizeof n) != 0 ||
              write_all(fds[1], states, n * sizeof states[0]) != 0 ||
              write_all(fds[1], ring, RING) != 0);
    }
    if (pid < 0)
        return 2;
    /* The fill in flight finishes; nothing later overwrites its output. */
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    close(fds[1]);
    if (read_all(fds[0], &nstates, sizeof nstates) != 0 ||
        nstates > MAX_STATES ||
        read_all(fds[0], states, nstates * sizeof states[0]) != 0 ||
        read_all(fds[0], snapshot, RING) != 0)
        return 2;
    waitpid(pid, &status, 0);
    pthread_join(t, NULL);

    for (table_mask = 1; table_mask < 4 * (RING / BLK); table_mask <<= 1)
        ;
    table = calloc(table_mask, sizeof *table);
    table_mask -= 1;
    if (table == NULL)
        return 2;
    for (i = 0; i < RING; i += BLK)
        if (memcmp(ring + i, snapshot + i, BLK) != 0) {
            table_add(ring + i);
            post++;
        }
    /* From the counter found, and from 0 where every key the generator
       makes starts (a core may keep the counter words elsewhere). */
    for (i = 0; i < 2 * nstates; i++) {
        uint32_t st[16];

        memcpy(st, states[i / 2], sizeof st);
        if (i % 2) {
            if (st[12] == 0 && st[13] == 0)
                continue;
            st[12] = st[13] = 0;
        }
        generic->blocks(st, stream, STREAM_BLOCKS);
        for (j = 0; j < STREAM_BLOCKS; j++)
            if (table_has(stream + j * BLK))
                reproduced += BLK;
    }
#define FACTS "\"states\": %lu, \"post_fork_blocks\": %lu, \"reproduced_bytes\": %lu"
    if (post == 0)
        return verdict_skip("the fork landed after the fill had written its "
                            "last byte", FACTS, LU(nstates), LU(post),
                            LU(reproduced));
    /* Row 0 alone, the constants, is what the generic core keeps in
       memory at each block's start (tests/c/core_spills.c): a match
       reported, not a finding; a state the child could use reproduces. */
    if (nstates)
        printf("INFO the child found the constants in %lu places\n", LU(nstates));
    verdict_check(reproduced == 0, "the child's states reproduce %lu bytes of "
                  "the parent's output after the fork", LU(reproduced));
    return verdict_end(FACTS, LU(nstates), LU(post), LU(reproduced));
}
