# Helpers shared by the Cython modules (_core, _numpy and
# _random): inline, so each module compiles its own copy and none
# imports another for them.
from cpython.pycapsule cimport PyCapsule_GetPointer

from arc4py._cdefs cimport arc4py_capi, ARC4PY_CAPI_CAPSULE, ARC4PY_CAPI_V2_SIZE

# The generator's fill: arc4py_rng_buf, or the C API's .fill.
ctypedef int (*_buf_fn)(void *buf, size_t n) noexcept nogil

# The GIL threshold, the generator's errors and the argument checks,
# shared with the C of arc4py/cbind/ (said once, in arc4py/cbind/binding.h).
cdef extern from "Python.h":
    const Py_ssize_t PY_SSIZE_T_MAX

cdef extern from "binding.h":
    enum:
        NOGIL_BYTES "ARC4PY_NOGIL_BYTES"
    # Raise the error the generator's errno value ``err`` stands for.
    int _raise_os_error "arc4py_raise_os_error"(int err) except -1
    # ``n`` as an int (``operator.index``); ``TypeError`` naming ``what``
    # for anything else, floats included.
    object _int_arg "arc4py_int_arg"(object n, const char *what)
    # ``n`` as a size >= 0: ``TypeError`` for a non-int, ``ValueError`` for
    # a negative, ``OverflowError`` past ``sys.maxsize``.
    Py_ssize_t _size_arg "arc4py_size_arg"(object n, const char *what) except -1


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


cdef inline const arc4py_capi *_generator_table(object capsule) except NULL:
    """The C API's table in ``capsule`` (arc4py._core._C_API), checked to
    have every field this build of arc4py reads."""
    cdef const arc4py_capi *table = <const arc4py_capi *>PyCapsule_GetPointer(
        capsule, ARC4PY_CAPI_CAPSULE)
    if table.size < ARC4PY_CAPI_V2_SIZE:
        raise ImportError("arc4py._core's C API table is older than this "
                          "module (mixed builds); reinstall arc4py")
    return table
