# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: binding=True, embedsignature=False, autotestdict=False
"""The methods ``arc4py.Random`` puts over ``random.Random``'s.

Each is a binding Cython function taking ``self``: a method descriptor with
vectorcall, so ``rng.random()`` costs no bound-method object, and
``arc4py.Random.random(self)`` works in a subclass as with any Python
method.  They draw through the C API's table, ``arc4py._core._C_API``
(the one per-thread generator); ``self`` holds nothing.  Import ``arc4py.Random``.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport uint64_t

cdef extern from *:
    int __builtin_clzll(unsigned long long x) nogil

import sys as _sys

from arc4py._core import _C_API, randbelow as _randbelow_any

from arc4py._cdefs cimport arc4py_capi
from arc4py._common cimport (_fill_raw, _generator_table, _random_bits,
                             _raise_os_error, _size_arg, _u64_to_double)

cdef const arc4py_capi *_api = _generator_table(_C_API)

# Before 3.11 the stdlib's _randbelow(0) returns 0, and choice([]) relies on
# it to raise IndexError from the indexing; from 3.11 on it is never called
# with 0 (choice checks first).
cdef bint _ZERO_BELOW_GIVES_ZERO = _sys.version_info < (3, 11)


def random(self):
    """random() -> x in the interval [0, 1), with 53 random bits."""
    cdef uint64_t r
    cdef int err = _api.random_u64(&r)
    if err:
        _raise_os_error(err)
    return _u64_to_double(r)


def getrandbits(self, k):
    """getrandbits(k) -> x.  Generates an int with k random bits."""
    return _random_bits(_size_arg(k, "number of bits"), _api.random_u64,
                        _api.fill)


def randbytes(self, n):
    """Generate n random bytes."""
    cdef Py_ssize_t size = _size_arg(n, "n")
    cdef bytes out = PyBytes_FromStringAndSize(NULL, size)
    _fill_raw(_api.fill, PyBytes_AS_STRING(out), size)
    return out


def _randbelow(self, n):
    """Return a random int in the range [0,n) (unbiased)."""
    cdef uint64_t bound, r
    cdef int k, err
    if type(n) is not int or n <= 0 or n > 0xFFFFFFFFFFFFFFFF:
        if _ZERO_BELOW_GIVES_ZERO and not n:
            return 0
        return _randbelow_any(n)  # big ints; errors for the rest
    # The stdlib's _randbelow_with_getrandbits, in C: take the top k bits
    # of a 64-bit draw, k the bit length of n, and retry while >= n (fewer
    # than 2 draws expected).
    bound = n
    k = 64 - __builtin_clzll(bound)
    while True:
        err = _api.random_u64(&r)
        if err:
            _raise_os_error(err)
        r >>= 64 - k
        if r < bound:
            return r
