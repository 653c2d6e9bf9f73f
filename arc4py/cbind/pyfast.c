/*
 * The hot Python calls of arc4py._core as plain C entry points:
 * arc4random(), random_u32(), random_u64() and arc4random_buf(n).
 *
 * Each is METH_FASTCALL | METH_KEYWORDS, the calling convention CPython
 * (3.11+) specialises for builtin functions, and handles only the common
 * case itself: no argument (or size=None) for the integer calls, an exact
 * int below NOGIL_BYTES for arc4random_buf.  Everything else (a size for a
 * numpy array, keywords, bad input, large requests that drop the GIL) is
 * forwarded unchanged to the Cython def it replaces, so signatures, errors
 * and docstrings stay those of arc4py/_core.pyx.  The generator's fast
 * path is inlined here (rng_take() from arc4py/csrc/rng_hot_path.h).
 * _core.pyx creates the functions with arc4py_pyfast_wrap() in its last
 * section, and the C API's capsule with arc4py_capi_capsule().
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <string.h>

#include "arc4py/generator.h"
#define ARC4PY_CAPI_PROVIDER 1
#include "arc4py/capi.h"
#include "pyfast.h"
#include "rng_hot_path.h"


/* arc4random_buf(n) keeps the GIL below this size (as _core.pyx does). */
#define PYFAST_GIL_BYTES (1 << 14)

enum { FAST_ARC4RANDOM, FAST_RANDOM_U32, FAST_RANDOM_U64, FAST_BUF, FAST_N };

/* The Cython def each replaces, and the docstring bytes ml_doc points into:
   both live as long as the process (the module is never unloaded). */
static PyObject *fallback[FAST_N];
static PyObject *doc_bytes[FAST_N];

/* The error of the bindings' _raise_os_error() (arc4py/_common.pxd), word
   for word: MemoryError when no state could be mapped, else OSError. */
static PyObject *no_memory_error(void)
{
    PyErr_SetString(PyExc_MemoryError,
                    "arc4py: no memory for the generator's state");
    return NULL;
}

static PyObject *entropy_error(int err)
{
    PyObject *args;

    if (err == ENOMEM)
        return no_memory_error();
    args = Py_BuildValue(
        "(iN)", err,
        PyUnicode_FromFormat("arc4py: the OS could not provide entropy: %s",
                             strerror(err)));

    if (args != NULL) {
        PyErr_SetObject(PyExc_OSError, args);
        Py_DECREF(args);
    }
    return NULL;
}

/* No argument, or size=None given positionally: the scalar case. */
static inline int no_size(PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    if (kwnames != NULL)
        return 0;
    return nargs == 0 || (nargs == 1 && args[0] == Py_None);
}

static PyObject *slow(int which, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames)
{
    return PyObject_Vectorcall(fallback[which], args, (size_t)nargs, kwnames);
}

static PyObject *u32_call(int which, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    uint32_t r;
    int err;

    if (RNG_UNLIKELY(!no_size(args, nargs, kwnames)))
        return slow(which, args, nargs, kwnames);
    err = rng_take(&r, sizeof r);
    if (RNG_UNLIKELY(err))
        return entropy_error(err);
    return PyLong_FromUnsignedLong(r);
}

static PyObject *fast_arc4random(PyObject *self, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    return u32_call(FAST_ARC4RANDOM, args, nargs, kwnames);
}

static PyObject *fast_random_u32(PyObject *self, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    return u32_call(FAST_RANDOM_U32, args, nargs, kwnames);
}

static PyObject *fast_random_u64(PyObject *self, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames)
{
    uint64_t r;
    int err;

    (void)self;
    if (RNG_UNLIKELY(!no_size(args, nargs, kwnames)))
        return slow(FAST_RANDOM_U64, args, nargs, kwnames);
    err = rng_take(&r, sizeof r);
    if (RNG_UNLIKELY(err))
        return entropy_error(err);
    return PyLong_FromUnsignedLongLong(r);
}

static PyObject *fast_buf(PyObject *self, PyObject *const *args,
                          Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t n;
    PyObject *out;
    int err;

    (void)self;
    if (nargs != 1 || kwnames != NULL || !PyLong_CheckExact(args[0]))
        return slow(FAST_BUF, args, nargs, kwnames);
    n = PyLong_AsSsize_t(args[0]);
    if (n < 0 || n >= PYFAST_GIL_BYTES) {
        /* negative, past sys.maxsize, or large: the def's own path */
        PyErr_Clear();
        return slow(FAST_BUF, args, nargs, kwnames);
    }
    out = PyBytes_FromStringAndSize(NULL, n);
    if (out == NULL)
        return NULL;
    err = rng_take(PyBytes_AS_STRING(out), (size_t)n);
    if (RNG_UNLIKELY(err)) {
        Py_DECREF(out);
        return entropy_error(err);
    }
    return out;
}

#define FAST_FLAGS (METH_FASTCALL | METH_KEYWORDS)

/* ml_name and ml_doc are filled in from the def being replaced. */
static PyMethodDef defs[FAST_N] = {
    {NULL, (PyCFunction)(void (*)(void))fast_arc4random, FAST_FLAGS, NULL},
    {NULL, (PyCFunction)(void (*)(void))fast_random_u32, FAST_FLAGS, NULL},
    {NULL, (PyCFunction)(void (*)(void))fast_random_u64, FAST_FLAGS, NULL},
    {NULL, (PyCFunction)(void (*)(void))fast_buf, FAST_FLAGS, NULL},
};

/* Cython's embedded "name(sig)\n\nbody" docstring in CPython's form,
   "name(sig)\n--\n\nbody", so __text_signature__ and inspect work. */
static PyObject *text_signature_doc(PyObject *def_, PyObject *name)
{
    PyObject *doc, *parts, *prefix, *out = NULL;
    int ok;

    doc = PyObject_GetAttrString(def_, "__doc__");
    if (doc == NULL)
        return NULL;
    if (!PyUnicode_Check(doc)) {
        Py_DECREF(doc);
        return PyErr_Format(PyExc_RuntimeError, "%U has no docstring", name);
    }
    prefix = PyUnicode_FromFormat("%U(", name);
    ok = prefix != NULL && PyUnicode_Tailmatch(doc, prefix, 0, PY_SSIZE_T_MAX, -1) == 1;
    Py_XDECREF(prefix);
    parts = ok ? PyObject_CallMethod(doc, "partition", "s", "\n\n") : NULL;
    if (parts != NULL) {
        PyObject *text = PyUnicode_FromFormat(
            "%U\n--\n\n%U", PyTuple_GET_ITEM(parts, 0), PyTuple_GET_ITEM(parts, 2));
        if (text != NULL)
            out = PyUnicode_AsUTF8String(text);
        Py_XDECREF(text);
        Py_DECREF(parts);
    } else if (!PyErr_Occurred()) {
        PyErr_Format(PyExc_RuntimeError, "%U: no embedded signature to keep", name);
    }
    Py_DECREF(doc);
    return out;
}

/*
 * The fast twin of `def_` (one of the Cython defs named above): a builtin
 * function of module `module_name` with def_'s name and docstring, that
 * hands every call it does not serve itself to def_.  New reference, or
 * NULL with an exception set.  Called once per name at import.
 */
PyObject *arc4py_pyfast_wrap(PyObject *def_, PyObject *module_name)
{
    static const char *const names[FAST_N] = {
        "arc4random", "random_u32", "random_u64", "arc4random_buf"};
    PyObject *name = PyObject_GetAttrString(def_, "__name__"), *doc;
    const char *s = name ? PyUnicode_AsUTF8(name) : NULL;
    int i;

    if (s == NULL) {
        Py_XDECREF(name);
        return NULL;
    }
    for (i = 0; i < FAST_N; i++)
        if (strcmp(s, names[i]) == 0)
            break;
    if (i == FAST_N || fallback[i] != NULL) {
        PyErr_Format(PyExc_RuntimeError, "no (second) fast twin for %U", name);
        Py_DECREF(name);
        return NULL;
    }
    doc = text_signature_doc(def_, name);
    Py_DECREF(name);
    if (doc == NULL)
        return NULL;
    Py_INCREF(def_);
    fallback[i] = def_;
    doc_bytes[i] = doc;
    defs[i].ml_name = names[i];
    defs[i].ml_doc = PyBytes_AS_STRING(doc);
    return PyCFunction_NewEx(&defs[i], NULL, module_name);
}

/* The C API capsule (arc4py/include/arc4py/capi.h) over capi.c's table. */
PyObject *arc4py_capi_capsule(void)
{
    return PyCapsule_New((void *)&arc4py_capi_provider_table, ARC4PY_CAPI_CAPSULE,
                         NULL);
}
