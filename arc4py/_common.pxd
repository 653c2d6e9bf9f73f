# Helpers shared by arc4py/_core.pyx and arc4py/_numpy.pyx (inline, so each
# module compiles its own copy and neither imports the other for them).
from cpython.number cimport PyNumber_Index
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.errno cimport ENOMEM
from libc.stdint cimport uint64_t
from libc.string cimport strerror

from arc4py._cdefs cimport arc4py_capi, ARC4PY_CAPI_CAPSULE, ARC4PY_CAPI_V2_SIZE

# The generator's byte-filling call: arc4py_rng_buf, or the C API's .fill.
ctypedef int (*_buf_fn)(void *buf, size_t n) noexcept nogil

# Below this many bytes, dropping and retaking the GIL costs more than it saves.
cdef enum:
    NOGIL_BYTES = 1 << 14


cdef inline int _raise_os_error(int err) except -1:
    """Raise the error the generator's errno value ``err`` stands for."""
    if err == ENOMEM:
        # A new thread's state could not be mapped: memory, not entropy.
        raise MemoryError("arc4py: no memory for this thread's generator "
                          "state (" + strerror(err).decode("utf-8", "replace")
                          + ")")
    raise OSError(err, "arc4py: the OS could not provide entropy: "
                  + strerror(err).decode("utf-8", "replace"))


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
