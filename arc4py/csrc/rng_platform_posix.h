/*
 * Inside the platform layer (internal): what each POSIX OS file (Linux,
 * BSD/macOS) gives rng_platform_posix.c, which does the part all POSIX
 * systems share (pthreads, mmap, atfork).
 */
#ifndef ARC4PY_RNG_PLATFORM_POSIX_H
#define ARC4PY_RNG_PLATFORM_POSIX_H

#include <stddef.h>
#include <stdint.h>

/* Ask for each protection of a state's pages (zeroed in a forked child,
   left out of core dumps); the ARC4PY_FORK_* bits granted. */
unsigned rng_os_protect_pages(void *p, size_t bytes);

/* The name of the entropy source rng_platform_entropy() reads. */
const char *rng_os_entropy_source(void);

/* The VM-clone mix source, per thread (NULL from new: none on this OS or
   this kernel).  init runs once, before any thread's state. */
void rng_os_vm_mix_init(void);
void *rng_os_vm_mix_new(void);
void rng_os_vm_mix_free(void *opaque);
int rng_os_vm_mix_read(void *opaque, uint8_t *out, size_t n);
int rng_os_vm_mix_healthy(void); /* found, and no read has failed */

#endif
