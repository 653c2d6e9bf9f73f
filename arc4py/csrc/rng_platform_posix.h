/*
 * Inside the platform layer (internal): what each POSIX OS file (Linux,
 * BSD/macOS) gives rng_platform_posix.c, which does the part all POSIX
 * systems share (pthreads, mmap, atfork, the hold around the entropy
 * read).  Hidden, so that with no file for the OS the link fails, naming
 * these.
 */
#ifndef ARC4PY_RNG_PLATFORM_POSIX_H
#define ARC4PY_RNG_PLATFORM_POSIX_H

#include <stddef.h>
#include <stdint.h>

#include "compiler_compat.h"

/* Ask for each protection of a state's pages (zeroed in a forked child,
   left out of core dumps); the ARC4PY_FORK_* bits granted. */
RNG_HIDDEN unsigned rng_os_protect_pages(void *p, size_t bytes);

/* *n bytes from the OS's CSPRNG into *p, advancing both (so a call may
   go on where the last stopped); nonblock: EAGAIN rather than wait for the
   kernel's pool to be initialised (early boot). */
RNG_HIDDEN int rng_os_entropy(uint8_t **p, size_t *n, int nonblock);

/* The name of the entropy source rng_platform_entropy() reads. */
RNG_HIDDEN const char *rng_os_entropy_source(void);

/* The VM-clone mix source, per thread (NULL from new: none on this OS or
   this kernel).  init runs once, before any thread's state. */
RNG_HIDDEN void rng_os_vm_mix_init(void);
RNG_HIDDEN void *rng_os_vm_mix_new(void);
RNG_HIDDEN void rng_os_vm_mix_free(void *opaque);
RNG_HIDDEN int rng_os_vm_mix_read(void *opaque, uint8_t *out, size_t n);
RNG_HIDDEN int rng_os_vm_mix_healthy(void); /* found, and no read has failed */

#endif
