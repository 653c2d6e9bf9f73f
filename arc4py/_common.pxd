# Helpers shared by the Cython modules (_core, _numpy and
# _random_methods): inline, so each module compiles its own copy and none
# imports another for them.
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.number cimport PyNumber_Index
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport uint64_t

from arc4py._cdefs cimport arc4py_capi, ARC4PY_CAPI_CAPSULE, ARC4PY_CAPI_V2_SIZE

# The generator's calls: arc4py_rng_buf/_u64, or the C API's .fill/.random_u64.
ctypedef int (*_buf_fn)(void *buf, size_t n) noexcept nogil
ctypedef int (*_u64_fn)(uint64_t *out) noexcept nogil

# The GIL threshold and the generator's errors, shared with the C of
# arc4py/cbind/ (said once, in arc4py/cbind/binding.h).
cdef extern from "Python.h":
    const Py_ssize_t PY_SSIZE_T_MAX

cdef extern from "binding.h":
    enum:
        NOGIL_BYTES "ARC4PY_NOGIL_BYTES"
    # Raise the error the generator's errno value ``err`` stands for.
    int _raise_os_error "arc4py_raise_os_error"(int err) except -1
    # The unsigned little-endian int of ``n`` bytes at ``p``.
    object _long_from_le_bytes "arc4py_long_from_le_bytes"(
        const unsigned char *p, size_t n)


cdef inline int _fill_raw(_buf_fn buf, void *p, Py_ssize_t n) except -1:
    """Fill ``n`` bytes at ``p`` through ``buf``, without the GIL if large."""
    cdef int err
    if n >= NOGIL_BYTES:
        with nogil:
            err = buf(p, <size_t>n)
    else:
        err = buf(p, <size_t>n)
    if err:
        _raise_os_error(err)
    return 0


cdef inline object _random_bits(Py_ssize_t bits, _u64_fn u64, _buf_fn buf):
    """An ``int`` of ``bits`` (>= 0) random bits: one ``u64`` draw up to 64,
    else ``buf`` bytes, little-endian, with the excess high bits cleared."""
    cdef uint64_t r
    cdef int err
    cdef Py_ssize_t nbytes
    cdef unsigned char small[512]
    cdef unsigned char *p = small
    cdef bytes raw
    if bits == 0:
        return 0
    if bits <= 64:
        err = u64(&r)
        if err:
            _raise_os_error(err)
        return r >> (64 - bits)
    nbytes = bits // 8 + (bits % 8 != 0)  # (bits + 7) could overflow
    if nbytes > <Py_ssize_t>sizeof(small):
        raw = PyBytes_FromStringAndSize(NULL, nbytes)
        p = <unsigned char *>PyBytes_AS_STRING(raw)
    _fill_raw(buf, p, nbytes)
    p[nbytes - 1] &= 0xFF >> (nbytes * 8 - bits)
    return _long_from_le_bytes(p, <size_t>nbytes)


cdef inline double _u64_to_double(uint64_t r) noexcept nogil:
    """The top 53 bits of ``r`` as a float in [0.0, 1.0)."""
    return <double>(r >> 11) * (1.0 / 9007199254740992.0)


cdef inline object _int_arg(object n, str what):
    """``n`` as an int (``operator.index``); ``TypeError`` naming ``what``
    for anything else, floats included."""
    if isinstance(n, float):
        raise TypeError(f"{what} must be an int, not float")
    try:
        return PyNumber_Index(n)
    except TypeError:
        raise TypeError(f"{what} must be an int, not "
                        f"{type(n).__name__}") from None


cdef inline Py_ssize_t _size_arg(object n, str what) except -1:
    """``n`` as a size >= 0: ``TypeError`` for a non-int, ``ValueError``
    for a negative, ``OverflowError`` past ``sys.maxsize``."""
    if type(n) is int and 0 <= n <= PY_SSIZE_T_MAX:
        return n  # the common case, without operator.index
    n = _int_arg(n, what)
    if n < 0:
        raise ValueError(f"{what} must be >= 0, not {n}")
    return n


cdef inline const arc4py_capi *_generator_table(object capsule) except NULL:
    """The C API's table in ``capsule`` (arc4py._core._C_API), checked to
    have every field this build of arc4py reads."""
    cdef const arc4py_capi *table = <const arc4py_capi *>PyCapsule_GetPointer(
        capsule, ARC4PY_CAPI_CAPSULE)
    if table.size < ARC4PY_CAPI_V2_SIZE:
        raise ImportError("arc4py._core's C API table is older than this "
                          "module (mixed builds); reinstall arc4py")
    return table
