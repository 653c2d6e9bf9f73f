# arc4py's C API for Cython extension modules.
#
#     from arc4py.capi cimport (arc4random, arc4random_buf, arc4random_uniform,
#                               fill, import_arc4py)
#     import_arc4py()          # once, at module import (ImportError on failure)
#     with nogil:
#         x = arc4random()
#
# Build with include_dirs=[arc4py.get_include()]: these are the C functions of
# arc4py/capi.h (arc4py_arc4random, ...) under their BSD names.  They draw
# from the calling thread's arc4py generator, the stream arc4py's Python
# calls use in that thread.
#
# arc4random, arc4random_buf and arc4random_uniform cannot fail: if the OS
# cannot provide entropy they print a message and abort() the process.
# arc4random_uniform is unbiased; upper_bound 0 and 1 give 0.  fill returns 0,
# or an errno value with buf wiped to zeros; so do random_u32 and random_u64
# (C API version 2: ENOSYS from an older arc4py), with *out set to 0.
from libc.stdint cimport uint32_t, uint64_t

cdef extern from "arc4py/capi.h":
    # Call with the GIL held; -1 with ImportError set on failure.
    int import_arc4py "arc4py_import"() except -1

cdef extern from "arc4py/capi.h" nogil:
    uint32_t arc4random "arc4py_arc4random"() noexcept
    void arc4random_buf "arc4py_arc4random_buf"(void *buf, size_t n) noexcept
    uint32_t arc4random_uniform "arc4py_arc4random_uniform"(
        uint32_t upper_bound) noexcept
    int fill "arc4py_fill"(void *buf, size_t n) noexcept
    int random_u32 "arc4py_random_u32"(uint32_t *out) noexcept
    int random_u64 "arc4py_random_u64"(uint64_t *out) noexcept
