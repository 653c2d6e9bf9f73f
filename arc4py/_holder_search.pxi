# The walk for live pointer-holding ctypes objects over a range of memory
# (included by _buffer_check.pxi, whose header says when a fill walks and
# what it cannot see): each ctypes type's verdict kept, the heap walked in
# C.
from cpython.ref cimport Py_DECREF

import weakref as _weakref


#: id(ctypes type) -> (a weak reference to the type, the pointer type within
#: it or None): each type walked once, and looked up during a search without
#: making an object the collector tracks.
cdef dict _verdicts = {}


def _note_verdict(cls):
    key = id(cls)
    if _verdicts.get(key, (lambda: None,))[0]() is not cls:
        # Forgotten with the type (unless the id names another by then).
        _verdicts[key] = (_weakref.ref(cls, lambda ref, key=key: _verdicts.pop(
            key) if _verdicts.get(key, (0,))[0] is ref else 0),
            _pointer_field(cls))


def _cdata_classes():
    """``_ctypes._CData`` as each loaded ``_ctypes`` made it: none if
    ctypes was never imported.  Found among ``object``'s subclasses on each
    search, so that neither ``ctypes`` nor ``_ctypes`` need be in
    ``sys.modules`` and a ``_ctypes`` loaded again is seen."""
    return tuple(klass for klass in object.__subclasses__()
                 if klass.__name__ == "_CData"
                 and klass.__module__ == "_ctypes")


cdef extern from *:
    """
    /* The walk for a pointer-holding ctypes object over [start, end): each
       object of the list (from 3.12, each the collector tracks, visited in
       place) tested calling no Python code and making no object the
       collector tracks: no collection, finalizer or other thread runs. */
    #if PY_VERSION_HEX >= 0x030C0000 && !defined(Py_GIL_DISABLED)
    #define ARC4PY_VISIT 1
    #else
    #define ARC4PY_VISIT 0
    #endif
    typedef struct {  /* plain: the last type seen that is no ctypes' */
        PyObject *classes, *verdicts, *unknown, *found;
        size_t start, end; PyTypeObject *plain; int failed;
    } arc4py_walk;
    static int arc4py_walk_one(PyObject *op, void *arg)
    {
        arc4py_walk *w = (arc4py_walk *)arg;
        PyTypeObject *kind = Py_TYPE(op);
        Py_ssize_t j, n = PyTuple_GET_SIZE(w->classes);
        PyObject *key, *entry, *alive;
        Py_buffer view;
        if (kind == w->plain) return 1;
        for (j = 0; j < n && !PyType_IsSubtype(kind,
                (PyTypeObject *)PyTuple_GET_ITEM(w->classes, j)); j++) {}
        if (j == n) return (w->plain = kind, 1);
        /* verdicts: id(type) -> (a weak reference to it, its verdict) */
        if ((key = PyLong_FromVoidPtr(kind)) == NULL) goto failed;
        entry = PyDict_GetItemWithError(w->verdicts, key);
        Py_DECREF(key);
        if (entry == NULL && PyErr_Occurred()) goto failed;
        alive = entry ? PyObject_CallNoArgs(PyTuple_GET_ITEM(entry, 0))
                      : (Py_INCREF(Py_None), Py_None);
        if (alive == NULL) goto failed;
        Py_DECREF(alive);
        if (alive != (PyObject *)kind)  /* a type not walked yet */
            return PyList_Append(w->unknown, (PyObject *)kind) < 0
                   ? (w->failed = 1, 0) : 1;
        if (PyTuple_GET_ITEM(entry, 1) == Py_None) return 1;
        if (PyObject_GetBuffer(op, &view, PyBUF_SIMPLE) < 0) goto failed;
        PyBuffer_Release(&view);
        if ((size_t)view.buf >= w->end
                || w->start >= (size_t)view.buf + (size_t)view.len)
            return 1;
        Py_INCREF(op);
        return (w->found = op, 0);
    failed:
        return (w->failed = 1, 0);
    }
    static int arc4py_walk_heap(PyObject *heap, PyObject *classes, PyObject
            *verdicts, PyObject *unknown, size_t s, size_t e, PyObject **found)
    {
        arc4py_walk w = {classes, verdicts, unknown, NULL, s, e, NULL, 0};
    #if ARC4PY_VISIT
        if (heap == Py_None) PyUnstable_GC_VisitObjects(arc4py_walk_one, &w);
    #endif
        for (Py_ssize_t i = 0; PyList_Check(heap) && i < Py_SIZE(heap); i++)
            if (!arc4py_walk_one(PyList_GET_ITEM(heap, i), &w))
                break;
        return (*found = w.found, w.failed ? -1 : 0);
    }
    """
    bint ARC4PY_VISIT
    int arc4py_walk_heap(object heap, tuple classes, dict verdicts, list
                         unknown, size_t s, size_t e, PyObject **out) except -1


cdef object _holder_over(size_t start, size_t end):
    """A live ctypes object that reads [start, end) as a pointer ctypes
    follows, or None.  A walk that meets a ctypes type not yet walked walks
    the type (Python code: a collection, a finalizer or another thread can
    run) and then the heap again: the last walk is the one before the write."""
    cdef PyObject *found
    while True:
        classes = _cdata_classes()
        if not classes:
            return None
        unknown = []
        heap = None if ARC4PY_VISIT else _gc.get_objects()
        arc4py_walk_heap(heap, classes, _verdicts, unknown, start, end, &found)
        del heap  # before any code runs: no object freed by it after the look
        if found != NULL:
            holder = <object>found
            Py_DECREF(holder)  # the walk's own reference
            return holder
        if not unknown:
            return None
        for cls in unknown:
            _note_verdict(cls)
