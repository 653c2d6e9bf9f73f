# Included by arc4py/_core.pyx (one compiled module; a file of its own so
# the buffer rules read in one place): the checks every buffer that arc4py
# writes into passes, with the contract's errors.
from cpython.buffer cimport (PyObject_GetBuffer, PyBuffer_Release,
                             PyBuffer_IsContiguous, PyBUF_FULL_RO,
                             PyBUF_STRIDES)

import sys as _sys

from arc4py._buffer_check import (
    refuse_pointer_holders as _refuse_pointer_holders)


cdef bint _holds_objects(const char *fmt) noexcept:
    """Whether a struct-module format holds 'O' (object) items."""
    cdef bint in_name = False  # struct field names are written :name:
    while fmt[0]:
        if fmt[0] == b':':
            in_name = not in_name
        elif fmt[0] == b'O' and not in_name:
            return True
        fmt += 1
    return False


cdef object _CDATA = None  # ctypes' base class, once ctypes is loaded
cdef object _NDARRAY = None  # numpy.ndarray, once numpy is loaded


cdef int _refuse_ctypes_pointers(object buffer) except -1:
    """ctypes can hide py_object / c_char_p / c_wchar_p behind a plain "B"
    format: find a ctypes exporter (behind memoryviews and numpy arrays)
    and have its type walked.  Cheap for everything else."""
    global _CDATA, _NDARRAY
    cdef int hops
    if _CDATA is None:
        ctypes = _sys.modules.get("ctypes")
        if ctypes is None:  # no ctypes object can exist yet
            return 0
        # a plain type: the ctypes classes' metaclasses make isinstance slow
        _CDATA = ctypes._SimpleCData.__mro__[1]
    if _NDARRAY is None and "numpy" in _sys.modules:
        _NDARRAY = _sys.modules["numpy"].ndarray
    obj = buffer
    for hops in range(64):
        if type(obj) is memoryview:
            obj = obj.obj
        elif (_NDARRAY is not None and isinstance(obj, _NDARRAY)
              and obj.base is not None):
            obj = obj.base
        else:
            break
    if isinstance(obj, _CDATA):
        _refuse_pointer_holders(obj)
    return 0


cdef int _get_writable(object buffer, Py_buffer *view) except -1:
    """Get a writable, C-contiguous view with the contract's errors."""
    _refuse_ctypes_pointers(buffer)
    try:
        PyObject_GetBuffer(buffer, view, PyBUF_FULL_RO)
    except TypeError:
        raise TypeError(f"expected a writable buffer, not "
                        f"{type(buffer).__name__}") from None
    except (ValueError, NotImplementedError):
        # numpy cannot describe some dtypes (datetime64) as a format
        # string; without one they are plain bytes, which is all we need.
        PyObject_GetBuffer(buffer, view, PyBUF_STRIDES)
        # No format to look for objects in (e.g. datetime64 beside an
        # object field): ask numpy's dtype instead.
        if getattr(getattr(buffer, "dtype", None), "hasobject", False):
            PyBuffer_Release(view)
            raise TypeError("cannot fill a buffer of Python objects "
                            "(object dtype): random bytes are not pointers")
    if view.format != NULL and _holds_objects(view.format):
        PyBuffer_Release(view)
        raise TypeError("cannot fill a buffer of Python objects "
                        "(object dtype): random bytes are not pointers")
    if view.readonly:
        PyBuffer_Release(view)
        raise TypeError(f"cannot fill a read-only buffer "
                        f"({type(buffer).__name__})")
    if not PyBuffer_IsContiguous(view, b'C'):
        PyBuffer_Release(view)
        raise ValueError("the buffer must be C-contiguous")
    return 0
