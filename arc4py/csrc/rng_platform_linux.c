/*
 * The platform layer on Linux (glibc from 2.17, musl): entropy from
 * getrandom() (the system call where the C library has no wrapper;
 * /dev/urandom only where the kernel predates getrandom and only if it is
 * the kernel's random device), state pages zeroed in a forked child
 * (MADV_WIPEONFORK) and left out of core dumps (MADV_DONTDUMP), and the
 * kernel's vDSO getrandom (Linux >= 6.11), whose output changes when a VM
 * is cloned, as the VM-clone mix source.  Compiles to nothing elsewhere.
 */
#ifdef __linux__
#define _GNU_SOURCE 1
#include "rng_platform.h"
#include "rng_platform_posix.h"
#include "rng_wipe.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<sys/auxv.h>) && __has_include(<link.h>)
#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#define RNG_HAVE_VDSO_LOOKUP 1
#endif
#endif

#ifndef SYS_getrandom /* kernel headers older than Linux 3.17 */
#if defined(__x86_64__)
#define SYS_getrandom 318
#elif defined(__aarch64__)
#define SYS_getrandom 278
#endif
#endif

/* The C library's wrapper where it has one (glibc >= 2.25, musl >= 1.1.20),
   so an interposed getrandom (a sandbox's, a test's) is honoured; weak, so
   a build against an older C library links and takes the system call. */
extern ssize_t getrandom(void *buf, size_t len, unsigned int flags)
    __attribute__((weak));

#ifdef ARC4PY_TEST_HOOKS
long rng_vm_mix_calls;
#endif

/* Set once a read has found no getrandom and read /dev/urandom. */
static int read_urandom;

/* getrandom() returning 0 makes no progress (a seccomp filter can do it);
   give up after this many in a row rather than spin forever. */
#define RNG_ZERO_READS_MAX 8

static int read_dev_urandom(uint8_t *p, size_t n)
{
    struct stat st;
    int fd, err = 0;

    do {
        fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC | O_NOCTTY);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return errno ? errno : EIO;
    /* Only the kernel's random devices (character devices 1:9, urandom,
       and 1:8, random): refuse /dev/zero, a regular file or anything else
       planted in its place. */
    if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode) ||
        major(st.st_rdev) != 1 ||
        (minor(st.st_rdev) != 9 && minor(st.st_rdev) != 8)) {
        close(fd);
        return EIO;
    }
    while (n) {
        ssize_t r = read(fd, p, n);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            err = r < 0 && errno ? errno : EIO;
            break;
        }
        p += r;
        n -= (size_t)r;
    }
    close(fd);
    return err;
}

#ifndef GRND_NONBLOCK
#define GRND_NONBLOCK 1 /* the kernel's fixed ABI */
#endif

static ssize_t call_getrandom(uint8_t *p, size_t n, unsigned flags)
{
    if (getrandom != NULL)
        return getrandom(p, n, flags);
#ifdef SYS_getrandom
    return syscall(SYS_getrandom, p, n, flags);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int rng_os_entropy(uint8_t **p, size_t *n, int nonblock)
{
    int zero_reads = 0;

    while (*n) {
        ssize_t r = call_getrandom(*p, *n, nonblock ? GRND_NONBLOCK : 0);

        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ENOSYS) {
                rng_store_int(&read_urandom, 1);
                return read_dev_urandom(*p, *n);
            }
            return errno ? errno : EIO;
        }
        if (r == 0) {
            if (++zero_reads >= RNG_ZERO_READS_MAX)
                return EIO;
            continue;
        }
        zero_reads = 0;
        *p += r;
        *n -= (size_t)r;
    }
    return 0;
}

const char *rng_os_entropy_source(void)
{
    return rng_load_int(&read_urandom) ? "/dev/urandom" : "getrandom";
}

/* ---- state pages -------------------------------------------------------- */

unsigned rng_os_protect_pages(void *p, size_t bytes)
{
    unsigned granted = 0;

#ifdef MADV_WIPEONFORK
    /* A child, even one made by a raw fork syscall, reads zeros here. */
    if (madvise(p, bytes, MADV_WIPEONFORK) == 0)
        granted |= ARC4PY_FORK_WIPEONFORK;
#endif
#ifdef MADV_DONTDUMP
    if (madvise(p, bytes, MADV_DONTDUMP) == 0)
        granted |= ARC4PY_DONTDUMP;
#endif
    return granted;
}

/* ---- the vDSO getrandom: the VM-clone mix source -------------------------- */

/* The kernel's documented interface (include/uapi/linux/random.h): called
   with opaque_len ~0 it fills these parameters for the opaque states. */
struct rng_vgetrandom_params {
    uint32_t size_of_opaque_state;
    uint32_t mmap_prot;
    uint32_t mmap_flags;
    uint32_t reserved[13];
};

typedef ssize_t (*rng_vgetrandom_fn)(void *buf, size_t len, unsigned flags,
                                     void *opaque, size_t opaque_len);

static rng_vgetrandom_fn vgetrandom;
static struct rng_vgetrandom_params vparams;
static size_t vstate_bytes;
static int vdso_failed;

#ifdef RNG_HAVE_VDSO_LOOKUP
/* Symbols in a GNU hash table: past the highest bucket's chain end. */
static size_t gnu_hash_count(const uint32_t *gh)
{
    uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_words = gh[2];
    const uint32_t *buckets =
        (const uint32_t *)((const ElfW(Addr) *)(gh + 4) + bloom_words);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t i, last = 0;

    for (i = 0; i < nbuckets; i++)
        if (buckets[i] > last)
            last = buckets[i];
    if (last < symoffset)
        return symoffset;
    while (!(chain[last - symoffset] & 1))
        last++;
    return (size_t)last + 1;
}

/* The address of a defined function symbol in the vDSO image, or NULL. */
static void *vdso_symbol(const char *want)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)getauxval(AT_SYSINFO_EHDR);
    const ElfW(Phdr) *ph;
    const ElfW(Dyn) *dyn = NULL, *d;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *hash = NULL, *gnu_hash = NULL;
    uintptr_t base, bias = 0;
    size_t i, nsyms;
    int have_load = 0;

    if (eh == NULL || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32))
        return NULL;
    base = (uintptr_t)eh;
    ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
    for (i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && !have_load) {
            bias = base + ph[i].p_offset - ph[i].p_vaddr;
            have_load = 1;
        } else if (ph[i].p_type == PT_DYNAMIC) {
            dyn = (const ElfW(Dyn) *)(base + ph[i].p_offset);
        }
    }
    if (!have_load || dyn == NULL)
        return NULL;
    /* The vDSO's dynamic entries hold link-time addresses: add the bias. */
    for (d = dyn; d->d_tag != DT_NULL; d++) {
        uintptr_t a = bias + d->d_un.d_ptr;

        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)a; break;
        case DT_STRTAB: strtab = (const char *)a; break;
        case DT_HASH: hash = (const uint32_t *)a; break;
        case DT_GNU_HASH: gnu_hash = (const uint32_t *)a; break;
        default: break;
        }
    }
    if (symtab == NULL || strtab == NULL || (hash == NULL && gnu_hash == NULL))
        return NULL;
    nsyms = hash != NULL ? hash[1] : gnu_hash_count(gnu_hash);
    for (i = 0; i < nsyms; i++) {
        const ElfW(Sym) *sym = &symtab[i];

        if (ELF64_ST_TYPE(sym->st_info) == STT_FUNC &&
            sym->st_shndx != SHN_UNDEF && strcmp(strtab + sym->st_name, want) == 0)
            return (void *)(bias + sym->st_value);
    }
    return NULL;
}
#endif

void rng_os_vm_mix_init(void)
{
#ifdef RNG_HAVE_VDSO_LOOKUP
    rng_vgetrandom_fn fn = (rng_vgetrandom_fn)vdso_symbol("__vdso_getrandom");
    long page = sysconf(_SC_PAGESIZE);

    if (fn == NULL || page <= 0)
        return;
    memset(&vparams, 0, sizeof vparams);
    if (fn(NULL, 0, 0, &vparams, ~(size_t)0) != 0 ||
        vparams.size_of_opaque_state == 0 ||
        vparams.size_of_opaque_state > (size_t)page)
        return;
    /* One state per thread, alone in its page(s): it may not cross one. */
    vstate_bytes = (size_t)page;
    vgetrandom = fn;
#endif
}

void *rng_os_vm_mix_new(void)
{
    void *p;

    if (vgetrandom == NULL)
        return NULL;
    p = mmap(NULL, vstate_bytes, (int)vparams.mmap_prot,
             (int)vparams.mmap_flags, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void rng_os_vm_mix_free(void *opaque)
{
    if (opaque == NULL)
        return;
    rng_wipe(opaque, vstate_bytes); /* the vDSO's key for this thread */
    munmap(opaque, vstate_bytes);
}

int rng_os_vm_mix_read(void *opaque, uint8_t *out, size_t n)
{
    ssize_t r = vgetrandom(out, n, 0, opaque, vparams.size_of_opaque_state);

#ifdef ARC4PY_TEST_HOOKS
    rng_count(&rng_vm_mix_calls);
#endif
    if (r == (ssize_t)n)
        return 0;
    /* Never expected; the mixing is a bonus, so stop claiming it. */
    rng_store_int(&vdso_failed, 1);
    return r < 0 ? (int)-r : EIO;
}

int rng_os_vm_mix_healthy(void)
{
    return vgetrandom != NULL && !rng_load_int(&vdso_failed);
}
#endif
