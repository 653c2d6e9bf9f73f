# cython: language_level=3
"""A third-party Cython module using arc4py's C API (built by test_capi.py)."""
from libc.stdint cimport uint32_t, uint64_t
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING

from arc4py.capi cimport (arc4random, arc4random_buf, arc4random_uniform,
                          fill, import_arc4py, random_u64)

import_arc4py()


def u32s(Py_ssize_t n):
    """n arc4random() values drawn without the GIL, as native uint32 bytes."""
    cdef bytes out = PyBytes_FromStringAndSize(NULL, 4 * n)
    cdef uint32_t *p = <uint32_t *>PyBytes_AS_STRING(out)
    cdef Py_ssize_t i
    with nogil:
        for i in range(n):
            p[i] = arc4random()
    return out


def u64s(Py_ssize_t n):
    """n random_u64() values (C API version 2), as native uint64 bytes."""
    cdef bytes out = PyBytes_FromStringAndSize(NULL, 8 * n)
    cdef uint64_t *p = <uint64_t *>PyBytes_AS_STRING(out)
    cdef Py_ssize_t i
    cdef int err = 0
    with nogil:
        for i in range(n):
            err = random_u64(&p[i])
            if err:
                break
    if err:
        raise OSError(err, "random_u64 failed")
    return out


def bufs(Py_ssize_t size, Py_ssize_t count):
    """count arc4random_buf(size) calls without the GIL, concatenated."""
    cdef bytes out = PyBytes_FromStringAndSize(NULL, size * count)
    cdef char *p = PyBytes_AS_STRING(out)
    cdef Py_ssize_t i
    with nogil:
        for i in range(count):
            arc4random_buf(p + i * size, <size_t>size)
    return out


def uniforms(uint32_t bound, Py_ssize_t n):
    """n arc4random_uniform(bound) values, as native uint32 bytes."""
    cdef bytes out = PyBytes_FromStringAndSize(NULL, 4 * n)
    cdef uint32_t *p = <uint32_t *>PyBytes_AS_STRING(out)
    cdef Py_ssize_t i
    with nogil:
        for i in range(n):
            p[i] = arc4random_uniform(bound)
    return out


def fill_into(bytearray target):
    """fill() over a bytearray: 0 or an errno value."""
    cdef char *p = target
    cdef size_t n = len(target)
    cdef int err
    with nogil:
        err = fill(p, n)
    return err
