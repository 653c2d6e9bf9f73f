# The checks of a buffer arc4py writes into (included by _core.pyx):
# fill() and chacha20_keystream_into() take a writable, C-contiguous view,
# and refuse memory that holds Python objects or that ctypes reads as
# pointers.
#
# ctypes does not always say so in the format: a Union or a _pack_-ed
# Structure holding a py_object exports plain "B", and c_char_p / c_wchar_p
# are pointers ctypes dereferences when the field is read.  Random bytes
# there crash the process later, so for ctypes objects, found behind any
# chain of views, the type itself is walked: fields, array elements, nested
# structures and unions, at any depth.
#
# Memory can also be the same bytes as a pointer-holding ctypes object made
# over it (from_buffer(), from_address()), with no link from the owner back
# to it.  A bytearray, array.array or mmap counts its exports, so one
# exported only to the buffer being filled has no from_buffer() object over
# it.  The count is trusted only for a buffer taken from the owner itself or
# through one memoryview that no other view shares: views made from a
# memoryview (ctypes' from_buffer() makes one) share its one export of the
# owner, and numpy arrays and __buffer__ methods do not pass on the exports
# taken from them.  For any other buffer and owner, or an owner exported
# elsewhere too, every object the collector tracks (every ctypes object is
# one) is walked, in C, for a pointer-holding ctypes object whose memory
# overlaps the buffer's: a cost that grows with the heap (about 10 ns an
# object on 3.13, visited in place; about 20 on 3.11, most of it
# gc.get_objects() building its list), paid by such fills only.  Nothing is
# kept between fills but each ctypes type's verdict, so a holder is found
# whatever its age, maker or type; the last walk runs no Python code, and
# none runs in this thread after it before the write.  Not searched: memory
# a numpy array owns; memory used through an address taken outside the
# buffer protocol's count (a from_address() object over one of the three
# counting owners that nothing else views, a numpy array made with
# ndarray(buffer=...), which gives its export back at once and keeps the
# address, a holder whose kept view was released); the same pages mapped at
# a second address (a file or shared memory mapped twice: the walk compares
# addresses); objects gc.freeze() keeps frozen (no walk of the collector's
# generations reaches them); and a holder another thread makes while a large
# fill writes without the GIL.
#
# Pointer types read as pointer objects (POINTER(T), c_void_p, function
# pointers) are left alone: reading them dereferences nothing, and following
# one (.contents) is an explicit act, as with any pointer.
from cpython.buffer cimport (PyObject_GetBuffer, PyBuffer_Release,
                             PyBuffer_IsContiguous, PyBUF_FULL_RO,
                             PyBUF_STRIDES)
from cpython.memoryview cimport PyMemoryView_Check, PyMemoryView_GET_BUFFER
from cpython.object cimport PyObject

import gc as _gc


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


# ---- owners that count their exports ---------------------------------------

cdef extern from "Python.h":
    ctypedef struct PyByteArrayObject:
        Py_ssize_t ob_exports
    # (cpython/memoryobject.h): the views sharing a memoryview's one export
    # of its owner, and the buffers taken from the memoryview itself.
    ctypedef struct _PyManagedBufferObject:
        Py_ssize_t exports
    ctypedef struct PyMemoryViewObject:
        _PyManagedBufferObject *mbuf
        Py_ssize_t exports

cdef extern from *:
    """
    /* Where array.array and mmap.mmap count their exported buffers, as
       their modules lay them out (private: _counts_right checks them on
       this Python before they are believed). */
    typedef struct {
        PyObject_VAR_HEAD
        char *items;
        Py_ssize_t allocated;
        const void *descr;
        PyObject *weakreflist;
        Py_ssize_t exports;
    } arc4py_array_head;
    typedef struct {
        PyObject_HEAD
        char *data;
        Py_ssize_t size;
        Py_ssize_t pos;
        long long offset;
        Py_ssize_t exports;
    } arc4py_mmap_head;
    """
    ctypedef struct arc4py_array_head:
        Py_ssize_t exports
    ctypedef struct arc4py_mmap_head:
        Py_ssize_t exports


cdef Py_ssize_t _counted_exports(object obj, bint is_array):
    if is_array:
        return (<arc4py_array_head *>obj).exports
    return (<arc4py_mmap_head *>obj).exports


def _counts_right(kind, bint is_array):
    """Whether ``kind`` (array.array or mmap.mmap) counts its exports where
    arc4py reads them: 0, 1, 2, 0 around two memoryviews of a new one."""
    if kind.__basicsize__ < (sizeof(arc4py_array_head) if is_array
                             else sizeof(arc4py_mmap_head)):
        return False
    try:
        obj = kind("B", b"\0") if is_array else kind(-1, 1)
    except Exception:
        return False
    try:
        seen = [_counted_exports(obj, is_array)]
        with memoryview(obj):
            seen.append(_counted_exports(obj, is_array))
            with memoryview(obj):
                seen.append(_counted_exports(obj, is_array))
        seen.append(_counted_exports(obj, is_array))
    finally:
        if not is_array:
            obj.close()
    return seen == [0, 1, 2, 0]


#: Exporter types seen -> 1 for array.array and 2 for mmap.mmap if their
#: export counts read right here, 3 for numpy.ndarray, else 0.
cdef dict _owner_kinds = {}


cdef int _owner_kind(object kind) except -1:
    name = (getattr(kind, "__module__", None), getattr(kind, "__name__", None))
    if name == ("numpy", "ndarray"):
        return 3
    if name == ("array", "array") or name == ("mmap", "mmap"):
        is_array = name[0] == "array"
        if _counts_right(kind, is_array):
            return 1 if is_array else 2
    return 0


cdef bint _unsearched(object owner, bint counted) except -1:
    """Whether the memory of ``owner`` (what a Py_buffer names) needs no
    search for ctypes objects made over it: memory a numpy array owns, or
    (``counted``: the fill's buffer was taken from ``owner`` itself or
    through one memoryview alone on its export) a bytearray, array.array
    or mmap whose only export is that buffer."""
    kind = type(owner)
    if kind is bytearray:
        return counted and (<PyByteArrayObject *>owner).ob_exports == 1
    found = _owner_kinds.get(kind)
    if found is None:
        found = _owner_kinds[kind] = _owner_kind(kind)
    if found == 3:  # numpy.ndarray itself: its own base
        return owner.base is None
    return (counted and found != 0
            and _counted_exports(owner, found == 1) == 1)


def _unsearched_owner(owner):
    """``_unsearched`` of a buffer taken from ``owner``, for the tests."""
    return _unsearched(owner, True)


cdef bint _sole_view(object view) noexcept:
    """Whether the memoryview ``view`` is alone on its export of its owner:
    no other memoryview shares that export (as one made from ``view``, a
    slice of it or ctypes' ``from_buffer(view)`` does, leaving the owner's
    count unchanged) and the buffer being filled is the only one taken
    from ``view``."""
    cdef PyMemoryViewObject *mv = <PyMemoryViewObject *>view
    return mv.mbuf != NULL and mv.mbuf.exports == 1 and mv.exports == 1


# ---- ctypes types and the memory behind a buffer ---------------------------

# _SimpleCData type codes ctypes turns into objects by following the value:
# py_object ("O"), c_char_p ("z"), c_wchar_p ("Z").
_POINTER_CODES = frozenset("OzZ")


def _base_named(cls, module, name):
    """Whether ``cls`` derives from the class ``module.name``.  Classes are
    recognised by name, not taken from ``sys.modules``: ctypes objects
    exist whether or not ``ctypes`` (or ``_ctypes``) is imported or still
    in ``sys.modules``."""
    for klass in cls.__mro__:
        if klass.__name__ == name and klass.__module__ == module:
            return True
    return False


def _is_cdata(obj):
    return _base_named(type(obj), "_ctypes", "_CData")


def _array_base(array):
    """numpy's own ``base`` of ``array`` (a numpy array, or an instance of
    a subclass, which may define ``base`` as it likes)."""
    if _owner_kinds.get(type(array)) == 3:  # numpy.ndarray itself
        return array.base
    for klass in type(array).__mro__:
        if klass.__name__ == "ndarray" and klass.__module__ == "numpy":
            return vars(klass)["base"].__get__(array, klass)
    return None


def _exporter(buffer):
    """The object whose memory ``buffer`` is, seen through any chain of
    views: memoryviews (cast or sliced), ``PickleBuffer`` and any other
    object whose buffer is another's, numpy arrays (their ``base``), and
    the memoryview a class's ``__buffer__`` returned (PEP 688)."""
    obj = buffer
    for _ in range(64):
        if _base_named(type(obj), "numpy", "ndarray"):
            nxt = _array_base(obj)  # None for memory the array owns
        elif _base_named(type(obj), "builtins", "_buffer_wrapper"):
            # What a Py_buffer from __buffer__ names as its owner: it holds
            # the memoryview __buffer__ returned, and reads as no buffer.
            nxt = next((r for r in _gc.get_referents(obj)
                        if type(r) is memoryview), None)
        else:
            try:
                with memoryview(obj) as view:
                    nxt = view.obj
            except (TypeError, ValueError, BufferError, NotImplementedError):
                return obj  # exports no buffer (or none memoryview reads)
        if nxt is obj or nxt is None:
            return obj
        obj = nxt
    return obj


def _pointer_field(ctype, depth=0):
    """The first type within ``ctype`` that ctypes dereferences on read,
    or None."""
    if depth > 256:  # a type nested this deep is no plain data
        return ctype
    if _base_named(ctype, "_ctypes", "_SimpleCData"):
        code = getattr(ctype, "_type_", "")
        return ctype if isinstance(code, str) and code in _POINTER_CODES \
            else None
    if _base_named(ctype, "_ctypes", "Array"):
        return _pointer_field(ctype._type_, depth + 1)
    if _base_named(ctype, "_ctypes", "Structure") or \
            _base_named(ctype, "_ctypes", "Union"):
        # _fields_ of a subclass add to its bases' fields: walk them all.
        for klass in ctype.__mro__:
            for field in vars(klass).get("_fields_", ()):
                found = _pointer_field(field[1], depth + 1)
                if found is not None:
                    return found
    return None


def _memory_owners(obj):
    """The other ctypes objects whose memory ``obj`` shares: the object it
    is a field or element of (``_b_base_``), and what ``from_buffer()``
    made it over (kept alive in ``_objects`` as a view)."""
    owners = []
    if obj._b_base_ is not None:
        owners.append(obj._b_base_)
    kept = obj._objects
    for value in (kept.values() if isinstance(kept, dict) else ()):
        value = _exporter(value)
        if _is_cdata(value):
            owners.append(value)
    return owners


def _refuse_by_type(obj):
    """Raise ``TypeError`` if the ctypes object ``obj``'s type, or that of
    any ctypes object whose memory it shares (a field's owner, what
    ``from_buffer()`` wraps), holds a pointer ctypes follows on read."""
    todo, seen = [obj], set()
    while todo and len(seen) < 256:
        cur = todo.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        found = _pointer_field(type(cur))
        if found is not None:
            what = type(obj).__name__
            if cur is not obj:
                what += f" (over a {type(cur).__name__})"
            raise TypeError(
                f"cannot fill a {what}: it holds {found.__name__}, a "
                f"pointer ctypes follows on read; random bytes are not "
                f"pointers")
        todo.extend(_memory_owners(cur))


# ---- the live pointer-holding ctypes objects --------------------------------

include "_holder_search.pxi"


cdef int _refuse_ctypes_pointers(Py_buffer *view) except -1:
    """Raise ``TypeError`` if the view's memory is read by a ctypes object
    as py_object, c_char_p or c_wchar_p: it belongs to such an object (seen
    through any views), or one was made over it.  Cheap in the common case:
    a counting owner whose only export is this view, taken from the owner
    or through one memoryview alone on its export."""
    cdef PyObject *owner = <PyObject *>view.obj
    cdef size_t start = <size_t>view.buf, end = start + <size_t>view.len
    # A memoryview shared with other views hides their exports from the
    # owner's count: then the count proves nothing.
    cdef bint counted = True
    if owner != NULL and PyMemoryView_Check(<object>owner):
        counted = _sole_view(<object>owner)
        owner = <PyObject *>PyMemoryView_GET_BUFFER(<object>owner).obj
    if owner != NULL and _unsearched(<object>owner, counted):
        return 0
    if owner != NULL and type(<object>owner) is bytearray:
        obj = <object>owner  # its own memory, exported elsewhere too
    else:
        obj = _exporter(<object>view.obj if <void *>view.obj != NULL
                        else None)
        if _is_cdata(obj):
            _refuse_by_type(obj)
        elif _unsearched(obj, False):
            # Numpy's memory only: a count seen through other links (a
            # numpy array, a __buffer__ method, a view of a view) misses
            # the exports those links do not pass on.
            return 0
    if view.len <= 0:
        return 0
    holder = _holder_over(start, end)
    if holder is not None:
        raise TypeError(
            f"cannot fill a {type(obj).__name__}: its memory is also a "
            f"{type(holder).__name__}, which holds "
            f"{_verdicts[id(type(holder))][1].__name__}, a pointer ctypes "
            f"follows on read; random bytes are not pointers")
    return 0


cdef int _get_writable(object buffer, Py_buffer *view) except -1:
    """Get a writable, C-contiguous view with the contract's errors.  The
    checks look at what the view names as its owner, not at ``buffer``:
    a class's __buffer__ need not return the same memory twice."""
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
    try:
        _refuse_ctypes_pointers(view)
    except BaseException:
        PyBuffer_Release(view)
        raise
    return 0
