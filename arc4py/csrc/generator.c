/*
 * The arc4py generator: one ChaCha20 state per OS thread, reached through a
 * thread-local pointer so the hot path takes no lock and needs no GIL.
 *
 * Each refill runs the selected core over the thread's buffer and at once
 * turns the first 40 bytes of fresh keystream into the next key and nonce
 * (fast key erasure); every byte handed out is wiped from the buffer, so
 * nothing left in memory can reproduce past output.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<sys/random.h>)
#include <sys/random.h>
#define ARC4PY_HAVE_GETRANDOM_FN 1
#endif
#endif

#include "arc4py/generator.h"
#include "chacha20_common.h"

#if defined(__GNUC__) || defined(__clang__)
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define TLS_INITIAL_EXEC __attribute__((tls_model("initial-exec")))
/* Slow paths stay out of line, so the hot paths need no stack frame. */
#define COLD_NOINLINE __attribute__((cold, noinline))
#else
#define LIKELY(x) (x)
#define TLS_INITIAL_EXEC
#define COLD_NOINLINE
#endif

/* Bytes of each refill that become the next key (32) and nonce (8). */
#define REKEY_BYTES 40

struct rng_state {
    uint32_t chacha[16];     /* key and nonce for the next refill */
    size_t left;             /* unread bytes at the end of buf */
    uint64_t since_seed;     /* bytes produced since the last reseed */
    uint64_t reseed_after;   /* reseed once since_seed reaches this */
    unsigned long generation; /* fork_generation when last seeded */
    int seeded;
    uint8_t buf[ARC4PY_RNG_BUFFER_BYTES];
};

/* Registry of live states, so a forked child can wipe the states of the
 * threads it did not inherit.  Kept outside the wiped pages on purpose. */
struct state_node {
    struct rng_state *state;
    struct state_node *next;
};

static TLS_INITIAL_EXEC __thread struct rng_state *tls_state;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_key_t state_key;
static int init_error;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct state_node *registry;
static volatile unsigned long fork_generation;
static unsigned fork_protection;
static int wipeonfork_probed;
static const arc4py_chacha20_core *active_core;

#ifdef ARC4PY_TEST_HOOKS
const int arc4py_rng_test_hooks = 1;
static long reseed_count;
#else
const int arc4py_rng_test_hooks = 0;
#endif

/* A memset the compiler may not drop as a dead store. */
static void wipe(void *p, size_t n)
{
    memset(p, 0, n);
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

static size_t state_map_bytes(void)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t pg = page > 0 ? (size_t)page : 4096;
    return (sizeof(struct rng_state) + pg - 1) / pg * pg;
}

static void free_state(struct rng_state *s)
{
    wipe(s, sizeof *s);
    munmap(s, state_map_bytes());
}

/* ---- fork protection --------------------------------------------------- */

static void atfork_prepare(void) { pthread_mutex_lock(&registry_lock); }
static void atfork_parent(void) { pthread_mutex_unlock(&registry_lock); }

/*
 * In the child only the forking thread lives on.  Every inherited state is
 * wiped (a second line of defence where MADV_WIPEONFORK is missing); the
 * other threads' states are unmapped, since nothing can reach them again.
 */
static void atfork_child(void)
{
    struct state_node *n = registry, *next, *mine = NULL;

    fork_generation++;
    while (n) {
        next = n->next;
        if (n->state == tls_state) {
            wipe(n->state, sizeof *n->state);
            mine = n;
        } else {
            free_state(n->state);
            free(n);
        }
        n = next;
    }
    registry = mine;
    if (mine)
        mine->next = NULL;
    pthread_mutex_init(&registry_lock, NULL);
}

/* Thread exit: wipe and unmap the thread's state. */
static void state_destructor(void *arg)
{
    struct rng_state *s = arg;
    struct state_node **pp, *n;

    pthread_mutex_lock(&registry_lock);
    for (pp = &registry; (n = *pp) != NULL; pp = &n->next) {
        if (n->state == s) {
            *pp = n->next;
            free(n);
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    if (tls_state == s)
        tls_state = NULL;
    free_state(s);
}

static void init_globals(void)
{
    size_t count;

    if (active_core == NULL) /* fastest core, unless the binding chose */
        active_core = &arc4py_chacha20_cores(&count)[0];
    if (pthread_key_create(&state_key, state_destructor) != 0) {
        init_error = EAGAIN;
        return;
    }
    if (pthread_atfork(atfork_prepare, atfork_parent, atfork_child) == 0)
        fork_protection |= ARC4PY_FORK_ATFORK;
}

static struct rng_state *new_state(int *err)
{
    struct rng_state *s;
    struct state_node *node;
    size_t bytes = state_map_bytes();

    pthread_once(&init_once, init_globals);
    if (init_error) {
        *err = init_error;
        return NULL;
    }
    s = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0);
    if (s == MAP_FAILED) {
        *err = errno ? errno : ENOMEM;
        return NULL;
    }
    {
        unsigned seen = 0;
#ifdef MADV_WIPEONFORK
        /* A child, even one made by a raw fork syscall, reads zeros here. */
        if (madvise(s, bytes, MADV_WIPEONFORK) == 0)
            seen |= ARC4PY_FORK_WIPEONFORK;
#endif
#ifdef MADV_DONTDUMP
        if (madvise(s, bytes, MADV_DONTDUMP) == 0)
            seen |= ARC4PY_DONTDUMP;
#endif
        if (!wipeonfork_probed) {
            __atomic_fetch_or(&fork_protection, seen, __ATOMIC_RELAXED);
            wipeonfork_probed = 1;
        }
    }
    node = malloc(sizeof *node);
    if (node == NULL || pthread_setspecific(state_key, s) != 0) {
        free(node);
        munmap(s, bytes);
        *err = ENOMEM;
        return NULL;
    }
    node->state = s;
    pthread_mutex_lock(&registry_lock);
    node->next = registry;
    registry = node;
    pthread_mutex_unlock(&registry_lock);
    tls_state = s;
    return s;
}

/* ---- entropy from the OS ----------------------------------------------- */

static int read_dev_urandom(uint8_t *p, size_t n)
{
    struct stat st;
    int fd, err = 0;

    do {
        fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC | O_NOCTTY);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return errno;
    /* Refuse a regular file or anything else planted in its place. */
    if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) {
        close(fd);
        return EIO;
    }
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            err = r < 0 ? errno : EIO;
            break;
        }
        p += r;
        n -= (size_t)r;
    }
    close(fd);
    return err;
}

static int os_entropy(uint8_t *p, size_t n)
{
    while (n) {
#ifdef ARC4PY_HAVE_GETRANDOM_FN
        ssize_t r = getrandom(p, n, 0);
#else
        ssize_t r = syscall(SYS_getrandom, p, n, 0);
#endif
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ENOSYS)
                return read_dev_urandom(p, n);
            return errno ? errno : EIO;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* ---- the generator ----------------------------------------------------- */

static void load_key_and_nonce(struct rng_state *s, const uint8_t m[40])
{
    int i;

    for (i = 0; i < 8; i++)
        s->chacha[4 + i] = arc4py_load_le32(m + 4 * i);
    s->chacha[12] = 0;
    s->chacha[13] = 0;
    s->chacha[14] = arc4py_load_le32(m + 32);
    s->chacha[15] = arc4py_load_le32(m + 36);
}

/*
 * New key material from the OS.  A live state mixes it into its key, so a
 * weak seed cannot lower what it had; buffered bytes are discarded.  On
 * failure the state is left unseeded: it gives no output until a reseed
 * succeeds.
 */
static int reseed(struct rng_state *s)
{
    uint8_t seed[REKEY_BYTES + 4];
    uint32_t fuzz;
    int err, i, keep = s->seeded && s->generation == fork_generation;

    wipe(s->buf, sizeof s->buf);
    s->left = 0;
    err = os_entropy(seed, sizeof seed);
    if (err) {
        wipe(seed, sizeof seed);
        wipe(s->chacha, sizeof s->chacha);
        s->seeded = 0;
        return err;
    }
    if (keep) {
        for (i = 0; i < 8; i++)
            s->chacha[4 + i] ^= arc4py_load_le32(seed + 4 * i);
        s->chacha[14] ^= arc4py_load_le32(seed + 32);
        s->chacha[15] ^= arc4py_load_le32(seed + 36);
        s->chacha[12] = s->chacha[13] = 0;
    } else {
        static const uint32_t sigma[4] = {0x61707865u, 0x3320646eu,
                                          0x79622d32u, 0x6b206574u};
        memcpy(s->chacha, sigma, sizeof sigma);
        load_key_and_nonce(s, seed);
    }
    /* Reseed at a point in the last quarter before 1 MiB, not a fixed one. */
    fuzz = arc4py_load_le32(seed + REKEY_BYTES);
    s->reseed_after = ARC4PY_RNG_RESEED_BYTES - fuzz % (ARC4PY_RNG_RESEED_BYTES / 4);
    s->since_seed = 0;
    s->generation = fork_generation;
    s->seeded = 1;
    wipe(seed, sizeof seed);
#ifdef ARC4PY_TEST_HOOKS
    __atomic_fetch_add(&reseed_count, 1, __ATOMIC_RELAXED);
#endif
    return 0;
}

/* Must the state reseed before generating `more` bytes of keystream? */
static int stale(const struct rng_state *s, uint64_t more)
{
    return !s->seeded || s->generation != fork_generation ||
           s->since_seed + more > s->reseed_after;
}

/* Fill the buffer with fresh keystream and rekey from its first 40 bytes. */
static int refill(struct rng_state *s)
{
    if (stale(s, ARC4PY_RNG_BUFFER_BYTES)) {
        int err = reseed(s);
        if (err)
            return err;
    }
    active_core->blocks(s->chacha, s->buf,
                        ARC4PY_RNG_BUFFER_BYTES / ARC4PY_CHACHA20_BLOCK_BYTES);
    load_key_and_nonce(s, s->buf);
    wipe(s->buf, REKEY_BYTES);
    s->left = ARC4PY_RNG_BUFFER_BYTES - REKEY_BYTES;
    s->since_seed += ARC4PY_RNG_BUFFER_BYTES;
    return 0;
}

/* Copy n bytes out of the buffer, wiping each one handed out. */
static int take(struct rng_state *s, uint8_t *out, size_t n)
{
    while (n) {
        size_t m;
        uint8_t *src;

        if (s->left == 0) {
            int err = refill(s);
            if (err)
                return err;
        }
        m = n < s->left ? n : s->left;
        src = s->buf + ARC4PY_RNG_BUFFER_BYTES - s->left;
        memcpy(out, src, m);
        wipe(src, m);
        s->left -= m;
        out += m;
        n -= m;
    }
    return 0;
}

/*
 * Large requests: a one-time key drawn from the state generates the output
 * straight into the caller's memory.  Chunks end at the state's reseed
 * point, so the "reseed after 1 MiB" promise holds across small and large
 * requests alike.
 */
static int take_direct(struct rng_state *s, uint8_t *out, size_t n)
{
    uint8_t onetime[REKEY_BYTES], tail[ARC4PY_CHACHA20_BLOCK_BYTES];
    uint32_t st[16];
    int err = 0;

    while (n) {
        size_t chunk = n < ARC4PY_RNG_RESEED_BYTES / 2 ? n : ARC4PY_RNG_RESEED_BYTES / 2;
        size_t blocks = chunk / ARC4PY_CHACHA20_BLOCK_BYTES;
        size_t rest = chunk % ARC4PY_CHACHA20_BLOCK_BYTES;

        if (stale(s, 1) && (err = reseed(s)) != 0)
            break;
        if ((err = take(s, onetime, sizeof onetime)) != 0)
            break;
        /* Never past the reseed point: stop there and reseed next round. */
        if (chunk > s->reseed_after - s->since_seed) {
            chunk = (size_t)(s->reseed_after - s->since_seed);
            blocks = chunk / ARC4PY_CHACHA20_BLOCK_BYTES;
            rest = chunk % ARC4PY_CHACHA20_BLOCK_BYTES;
            if (chunk == 0)
                continue;
        }
        arc4py_chacha20_init(st, onetime, onetime + 32, 8, 0);
        active_core->blocks(st, out, blocks);
        if (rest) {
            active_core->blocks(st, tail, 1);
            memcpy(out + blocks * ARC4PY_CHACHA20_BLOCK_BYTES, tail, rest);
        }
        s->since_seed += chunk;
        out += chunk;
        n -= chunk;
    }
    wipe(onetime, sizeof onetime);
    wipe(tail, sizeof tail);
    wipe(st, sizeof st);
    return err;
}

static COLD_NOINLINE int rng_buf_slow(void *dest, size_t n)
{
    uint8_t *out = dest;
    int err = 0;
    struct rng_state *s = tls_state;

    if (s == NULL && (s = new_state(&err)) == NULL)
        return err;
    if (n >= ARC4PY_RNG_DIRECT_BYTES)
        err = take_direct(s, out, n);
    else
        err = take(s, out, n);
    if (err)
        wipe(out, n); /* fail closed: no partial output survives */
    return err;
}

/*
 * The hot path, shared by every entry point: n buffered bytes, wiped as
 * they leave.  Inlined with a constant n it is a load, a store of zeros and
 * a subtraction.  Returns 0 when the buffer cannot serve the request (no
 * state yet, too few bytes left) and the caller must go slow.
 */
static inline int take_buffered(void *out, size_t n)
{
    struct rng_state *s = tls_state;

    if (LIKELY(s != NULL && n <= s->left)) {
        uint8_t *src = s->buf + ARC4PY_RNG_BUFFER_BYTES - s->left;
        memcpy(out, src, n);
        memset(src, 0, n);
        s->left -= n;
        return 1;
    }
    return 0;
}

static inline int take_fast(void *out, size_t n)
{
    return LIKELY(take_buffered(out, n)) ? 0 : rng_buf_slow(out, n);
}

int arc4py_rng_buf(void *buf, size_t n) { return take_fast(buf, n); }
int arc4py_rng_u32(uint32_t *out) { return take_fast(out, 4); }
int arc4py_rng_u64(uint64_t *out) { return take_fast(out, 8); }

/* No error can be reported through numpy's bitgen_t: stop, loudly. */
static void entropy_failure_abort(int err)
{
    fprintf(stderr, "arc4py: the OS could not provide entropy (errno %d: %s) "
            "inside a numpy draw, which cannot report errors; aborting "
            "rather than returning numbers that are not random\n",
            err, strerror(err));
    fflush(stderr);
    abort();
}

/*
 * numpy calls these once per value through a function pointer, so each is
 * the bare hot path: no stack frame, nothing passed through memory.  Every
 * other case (no state yet, a refill, an error) is a cold function of its
 * own, reached by a tail call.
 */
static COLD_NOINLINE uint64_t bitgen_u64_slow(void)
{
    uint64_t r;
    int err = rng_buf_slow(&r, 8);

    if (err)
        entropy_failure_abort(err);
    return r;
}

static COLD_NOINLINE uint32_t bitgen_u32_slow(void)
{
    uint32_t r;
    int err = rng_buf_slow(&r, 4);

    if (err)
        entropy_failure_abort(err);
    return r;
}

/* 53 random bits in [0, 1), as numpy's own generators make them. */
static inline double bits_to_double(uint64_t x)
{
    return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

static COLD_NOINLINE double bitgen_double_slow(void)
{
    return bits_to_double(bitgen_u64_slow());
}

uint64_t arc4py_bitgen_u64(void *unused)
{
    uint64_t r;

    (void)unused;
    return LIKELY(take_buffered(&r, 8)) ? r : bitgen_u64_slow();
}

uint32_t arc4py_bitgen_u32(void *unused)
{
    uint32_t r;

    (void)unused;
    return LIKELY(take_buffered(&r, 4)) ? r : bitgen_u32_slow();
}

double arc4py_bitgen_double(void *unused)
{
    uint64_t r;

    (void)unused;
    return LIKELY(take_buffered(&r, 8)) ? bits_to_double(r) : bitgen_double_slow();
}

/* Lemire's multiply-shift with rejection of the biased low products. */
int arc4py_rng_uniform(uint32_t upper_bound, uint32_t *out)
{
    uint32_t r, threshold;
    uint64_t m;
    int err;

    if ((err = arc4py_rng_u32(&r)) != 0)
        return err;
    if (upper_bound == 0) { /* 2**32: every value is fair */
        *out = r;
        return 0;
    }
    m = (uint64_t)r * upper_bound;
    if ((uint32_t)m < upper_bound) {
        threshold = (uint32_t)(-upper_bound) % upper_bound; /* 2**32 mod n */
        while ((uint32_t)m < threshold) {
            if ((err = arc4py_rng_u32(&r)) != 0)
                return err;
            m = (uint64_t)r * upper_bound;
        }
    }
    *out = (uint32_t)(m >> 32);
    return 0;
}

int arc4py_rng_stir(void)
{
    int err = 0;
    struct rng_state *s = tls_state;

    if (s == NULL && (s = new_state(&err)) == NULL)
        return err;
    return reseed(s);
}

int arc4py_rng_select_core(const char *name)
{
    const arc4py_chacha20_core *core = arc4py_chacha20_find(name);

    if (core == NULL)
        return -1;
    active_core = core;
    return 0;
}

const char *arc4py_rng_core_name(void)
{
    return active_core ? active_core->name : "none";
}

unsigned arc4py_rng_fork_protection(void)
{
    /* Make sure a mapping has been tried, so the answer is real. */
    if (!wipeonfork_probed) {
        uint8_t b;
        arc4py_rng_buf(&b, 1);
        wipe(&b, 1);
    }
    return fork_protection;
}

#ifdef ARC4PY_TEST_HOOKS
int arc4py_rng_debug_buffer(uint8_t *out, size_t out_len, size_t *left)
{
    struct rng_state *s = tls_state;

    if (s == NULL || out_len < sizeof s->buf)
        return -1;
    memcpy(out, s->buf, sizeof s->buf);
    *left = s->left;
    return 0;
}

long arc4py_rng_debug_reseeds(void)
{
    return __atomic_load_n(&reseed_count, __ATOMIC_RELAXED);
}
#else
int arc4py_rng_debug_buffer(uint8_t *out, size_t out_len, size_t *left)
{
    (void)out;
    (void)out_len;
    (void)left;
    return -1;
}

long arc4py_rng_debug_reseeds(void) { return -1; }
#endif
