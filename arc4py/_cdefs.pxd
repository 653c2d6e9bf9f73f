# The C layers' headers (arc4py/csrc/ and the C API's include/arc4py/capi.h),
# declared once for Cython; cimported by every Cython module (_core, _numpy,
# _random) and by _common.pxd.
from libc.stdint cimport uint8_t, uint32_t, uint64_t

cdef extern from "chacha20.h" nogil:
    ctypedef void (*arc4py_chacha20_blocks_fn)(uint32_t *state, uint8_t *out,
                                               size_t nblocks)
    ctypedef struct arc4py_chacha20_core:
        const char *name
        arc4py_chacha20_blocks_fn blocks
    int arc4py_chacha20_init(uint32_t *state, const uint8_t *key,
                             const uint8_t *nonce, size_t nonce_len,
                             uint64_t counter)
    const arc4py_chacha20_core *arc4py_chacha20_cores(size_t *count)
    const arc4py_chacha20_core *arc4py_chacha20_find(const char *name)
    const char *arc4py_chacha20_known_name(size_t i)
    int arc4py_chacha20_is_known(const char *name)
    const char *arc4py_chacha20_left_out(size_t i)
    const char *arc4py_cpu_features()
    const arc4py_chacha20_core *arc4py_chacha20_active()

cdef extern from "generator.h" nogil:
    enum:
        ARC4PY_RNG_BUFFER_BYTES
        ARC4PY_RNG_RESEED_BYTES
        ARC4PY_RNG_DIRECT_BYTES
        ARC4PY_RNG_REKEY_BYTES
        ARC4PY_RNG_DIRECT_CHUNK_BYTES
        ARC4PY_FORK_WIPEONFORK
        ARC4PY_FORK_ATFORK
        ARC4PY_DONTDUMP
        ARC4PY_FORK_VDSO
    double arc4py_u64_to_double(uint64_t x)
    uint64_t arc4py_bitgen_u64(void *unused)
    uint32_t arc4py_bitgen_u32(void *unused)
    double arc4py_bitgen_double(void *unused)
    int arc4py_rng_select_core(const char *name)
    const char *arc4py_rng_core_name()
    int arc4py_rng_buf(void *buf, size_t n)
    int arc4py_rng_u32(uint32_t *out)
    int arc4py_rng_u64(uint64_t *out)
    int arc4py_rng_uniform(uint32_t upper_bound, uint32_t *out)
    int arc4py_rng_stir()
    int arc4py_rng_stir_all()
    unsigned arc4py_rng_fork_protection()
    int arc4py_rng_os_facts(const char **entropy_source,
                            const char **state_lock, const char **exit_wipe)

# The generator's test hooks (arc4py/csrc/rng_test_hooks.c, declared in
# rng_test_hooks.h); they answer -1 in a normal build.
cdef extern from "rng_test_hooks.h" nogil:
    int arc4py_rng_debug_buffer(uint8_t *out, size_t out_len, size_t *left)
    long arc4py_rng_debug_reseeds()
    const int arc4py_rng_test_hooks

# The public C API's table (include/arc4py/capi.h), the one way from
# arc4py's own Cython modules to the generator, as for other extensions.
cdef extern from "arc4py/capi.h" nogil:
    ctypedef struct arc4py_capi:
        size_t size
        unsigned int version
        int (*fill)(void *buf, size_t n) noexcept nogil
        int (*random_u32)(uint32_t *out) noexcept nogil
        int (*random_u64)(uint64_t *out) noexcept nogil
        uint64_t (*bitgen_u64)(void *unused) noexcept nogil
        uint32_t (*bitgen_u32)(void *unused) noexcept nogil
        double (*bitgen_double)(void *unused) noexcept nogil
    const char *ARC4PY_CAPI_CAPSULE
    size_t ARC4PY_CAPI_V2_SIZE
