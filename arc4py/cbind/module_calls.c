/*
 * The hot functions of arc4py._core in C: arc4random(), random_u32(),
 * random_u64(), arc4random_buf(n).  Each is METH_FASTCALL | METH_KEYWORDS,
 * the calling convention CPython (3.11+) specialises for builtin functions,
 * with its docstring and text signature below; _core.pyx adds them to the
 * module at import (arc4py_add_module_calls()).  The common call (no size,
 * or a small exact int for arc4random_buf) takes the generator's inlined
 * fast path (int_draws.h, rng_take()); a size hands the draw to
 * arc4py._numpy, loaded on first use.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "cbind.h"
#include "compiler_compat.h"
#include "int_draws.h"

/* ---- arc4py._numpy, loaded on first use --------------------------------- */

/* The module once loaded, or NULL.  Without the GIL threads may load it at
   once: every store is of the same module (a reference kept for good),
   published release/acquire. */
static const void *numpy_module;

/* ImportError naming the extra, chained to the error of the import. */
static void numpy_missing(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *cause = PyErr_GetRaisedException(), *exc;

    PyErr_SetString(PyExc_ImportError, "this arc4py feature needs numpy: "
                    "pip install 'arc4py[numpy]'");
    exc = PyErr_GetRaisedException();
    PyException_SetCause(exc, cause); /* steals cause */
    PyErr_SetRaisedException(exc);
#else
    PyObject *type, *cause, *tb, *type2, *exc, *tb2;

    PyErr_Fetch(&type, &cause, &tb);
    PyErr_NormalizeException(&type, &cause, &tb);
    if (tb != NULL)
        PyException_SetTraceback(cause, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    PyErr_SetString(PyExc_ImportError, "this arc4py feature needs numpy: "
                    "pip install 'arc4py[numpy]'");
    PyErr_Fetch(&type2, &exc, &tb2);
    PyErr_NormalizeException(&type2, &exc, &tb2);
    PyException_SetCause(exc, cause); /* steals cause */
    PyErr_Restore(type2, exc, tb2);
#endif
}

PyObject *arc4py_numpy_module(void)
{
    PyObject *m = (PyObject *)rng_load_ptr(&numpy_module), *numpy;

    if (m != NULL) {
        Py_INCREF(m);
        return m;
    }
    numpy = PyImport_ImportModule("numpy");
    if (numpy != NULL) {
        Py_DECREF(numpy);
        m = PyImport_ImportModule("arc4py._numpy");
    }
    if (m == NULL) {
        if (PyErr_ExceptionMatches(PyExc_ImportError))
            numpy_missing();
        return NULL;
    }
    Py_INCREF(m); /* the cache's, kept for good */
    rng_store_ptr(&numpy_module, m);
    return m;
}

/* arc4py._numpy.<function>(size): an array of draws. */
static PyObject *numpy_draw(const char *function, PyObject *size)
{
    PyObject *m = arc4py_numpy_module(), *name, *out;

    if (m == NULL)
        return NULL;
    name = PyUnicode_FromString(function);
    out = name ? PyObject_CallMethodOneArg(m, name, size) : NULL;
    Py_XDECREF(name);
    Py_DECREF(m);
    return out;
}

/* ---- arguments ---------------------------------------------------------- */

/* The one parameter `param` of `function`, by position or keyword: *arg is
   it, or NULL if it was not given; 0, or -1 with TypeError. */
static RNG_NOINLINE int one_arg(const char *function, const char *param,
                                PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames, PyObject **arg)
{
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;

    *arg = NULL;
    if (nargs + nkw > 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most 1 argument "
                     "(%zd given)", function, nargs + nkw);
        return -1;
    }
    if (nkw == 1) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, 0);

        if (PyUnicode_CompareWithASCIIString(key, param) != 0) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword "
                         "argument '%U'", function, key);
            return -1;
        }
    }
    if (nargs + nkw == 1)
        *arg = args[0];
    return 0;
}

/* No argument, or size=None given positionally: the scalar case. */
static inline int no_size(PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    return kwnames == NULL &&
           (nargs == 0 || (nargs == 1 && args[0] == Py_None));
}

/* ---- the integer draws -------------------------------------------------- */

/* Any call but the plain one: size=None by keyword, an array, bad input. */
static RNG_NOINLINE PyObject *sized_call(const char *function,
                                         const char *array_function,
                                         unsigned bits, PyObject *const *args,
                                         Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *size;

    if (one_arg(function, "size", args, nargs, kwnames, &size) < 0)
        return NULL;
    if (size != NULL && size != Py_None)
        return numpy_draw(array_function, size);
    return bits == 32 ? u32_draw(0) : u64_draw(0);
}

static PyObject *py_arc4random(PyObject *module, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames)
{
    (void)module;
    if (RNG_UNLIKELY(!no_size(args, nargs, kwnames)))
        return sized_call("arc4random", "random_u32_array", 32, args, nargs,
                          kwnames);
    return u32_draw(0);
}

static PyObject *py_random_u32(PyObject *module, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames)
{
    (void)module;
    if (RNG_UNLIKELY(!no_size(args, nargs, kwnames)))
        return sized_call("random_u32", "random_u32_array", 32, args, nargs,
                          kwnames);
    return u32_draw(0);
}

static PyObject *py_random_u64(PyObject *module, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames)
{
    (void)module;
    if (RNG_UNLIKELY(!no_size(args, nargs, kwnames)))
        return sized_call("random_u64", "random_u64_array", 64, args, nargs,
                          kwnames);
    return u64_draw(0);
}

/* ---- arc4random_buf ----------------------------------------------------- */

/* n random bytes, n >= ARC4PY_NOGIL_BYTES: the GIL dropped while they
   fill. */
static RNG_NOINLINE PyObject *large_random_bytes(Py_ssize_t n)
{
    PyObject *out = PyBytes_FromStringAndSize(NULL, n);
    int err;

    if (out == NULL) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError))
            PyErr_Format(PyExc_MemoryError, "arc4random_buf: cannot "
                         "allocate %zd bytes", n);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    err = arc4py_rng_buf(PyBytes_AS_STRING(out), (size_t)n);
    Py_END_ALLOW_THREADS
    if (err) {
        Py_DECREF(out);
        return entropy_error(err);
    }
    return out;
}

/* n random bytes, n >= 0. */
static inline PyObject *random_bytes(Py_ssize_t n)
{
    PyObject *out;
    int err;

    if (RNG_UNLIKELY(n >= ARC4PY_NOGIL_BYTES))
        return large_random_bytes(n);
    out = PyBytes_FromStringAndSize(NULL, n);
    if (RNG_UNLIKELY(out == NULL))
        return NULL;
    err = rng_take(PyBytes_AS_STRING(out), (size_t)n);
    if (RNG_UNLIKELY(err)) {
        Py_DECREF(out);
        return entropy_error(err);
    }
    return out;
}

/* n as a size: TypeError for a non-int, ValueError for a negative,
   OverflowError past sys.maxsize; -1 with the error set. */
static RNG_NOINLINE Py_ssize_t size_arg(PyObject *n)
{
    PyObject *index;
    Py_ssize_t size;

    index = PyFloat_Check(n) ? NULL : PyNumber_Index(n);
    if (index == NULL) {
        if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError))
            PyErr_Format(PyExc_TypeError, "n must be an int, not %s",
                         Py_TYPE(n)->tp_name);
        return -1;
    }
    size = PyLong_AsSsize_t(index);
    if (size == -1 && PyErr_Occurred()) {
        PyObject *zero = PyLong_FromLong(0);
        int negative = zero ? PyObject_RichCompareBool(index, zero, Py_LT) : -1;

        Py_XDECREF(zero);
        if (negative == 1) /* a ValueError, as for any negative */
            PyErr_Clear();
    }
    if (size < 0 && !PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "n must be >= 0, not %S", index);
    Py_DECREF(index);
    return size < 0 ? -1 : size;
}

static PyObject *py_arc4random_buf(PyObject *module, PyObject *const *args,
                                   Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *arg;
    Py_ssize_t n;

    (void)module;
    if (RNG_LIKELY(nargs == 1 && kwnames == NULL &&
                   PyLong_CheckExact(args[0]))) {
        n = PyLong_AsSsize_t(args[0]);
        if (RNG_LIKELY(n >= 0))
            return random_bytes(n);
        PyErr_Clear(); /* too large either way: size_arg() says which */
    }
    if (one_arg("arc4random_buf", "n", args, nargs, kwnames, &arg) < 0)
        return NULL;
    if (arg == NULL)
        return PyErr_Format(PyExc_TypeError, "arc4random_buf() missing "
                            "required argument 'n' (pos 1)");
    n = size_arg(arg);
    return n < 0 ? NULL : random_bytes(n);
}

#define FASTCALL(fn) (PyCFunction)(void (*)(void))(fn), \
                     METH_FASTCALL | METH_KEYWORDS

static PyMethodDef module_calls[] = {
    {"arc4random", FASTCALL(py_arc4random),
     "arc4random(size=None)\n--\n\n"
     "A random ``int`` in [0, 2**32), like BSD's arc4random().\n\n"
     "The same stream as ``random_u32``, and like it takes ``size`` (an int\n"
     "or a tuple) for a ``numpy.ndarray`` of uint32 of that shape."},
    {"random_u32", FASTCALL(py_random_u32),
     "random_u32(size=None)\n--\n\n"
     "A random ``int`` in [0, 2**32), or with ``size`` (an int or a tuple)\n"
     "a ``numpy.ndarray`` of uint32 of that shape, filled in place."},
    {"random_u64", FASTCALL(py_random_u64),
     "random_u64(size=None)\n--\n\n"
     "A random ``int`` in [0, 2**64), or with ``size`` an ``ndarray`` of\n"
     "uint64 of that shape."},
    {"arc4random_buf", FASTCALL(py_arc4random_buf),
     "arc4random_buf(n)\n--\n\n"
     "``n`` random bytes (``n`` an int >= 0)."},
    {NULL, NULL, 0, NULL},
};

int arc4py_add_module_calls(PyObject *module)
{
    return PyModule_AddFunctions(module, module_calls);
}
