/*
 * The hot functions of arc4py._core in C: arc4random(), random_u32(),
 * random_u64(), random(), arc4random_buf(n), randbelow(n).  Each is METH_FASTCALL |
 * METH_KEYWORDS, the calling convention CPython (3.11+) specialises for
 * builtin functions, with its docstring and text signature below;
 * _core.pyx adds them to the module at import (arc4py_add_module_calls()).
 * The common call (no size, or a small exact int for arc4random_buf) takes
 * the generator's inlined fast path (int_draws.h, rng_take()); a size hands
 * the draw to arrays.c's arc4py_sized_draw(), the one way to numpy (which
 * arc4random_uniform's array also takes).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "cbind.h"
#include "compiler_compat.h"
#include "int_draws.h"

/* ---- arguments ---------------------------------------------------------- */

/* No argument, or size=None given positionally: the scalar case. */
static inline int no_size(PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    return kwnames == NULL &&
           (nargs == 0 || (nargs == 1 && args[0] == Py_None));
}

/* ---- the integer and float draws ----------------------------------------- */

/* Any call but the plain one: size=None by keyword, an array, bad input.
   `keyword_only`: size may not be given by position (random()). */
static RNG_NOINLINE PyObject *sized_call(const char *function,
                                         enum arc4py_array_kind kind,
                                         int keyword_only,
                                         PyObject *const *args,
                                         Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *size;

    if (keyword_only && nargs > 0)
        return PyErr_Format(PyExc_TypeError, "%s() takes no positional "
                            "arguments (%zd given)", function, nargs);
    if (arc4py_one_arg(function, "size", args, nargs, kwnames, &size) < 0)
        return NULL;
    if (size != NULL && size != Py_None)
        return arc4py_sized_draw(kind, size);
    switch (kind) {
    case ARC4PY_ARRAY_U32:
        return u32_draw(0);
    case ARC4PY_ARRAY_U64:
        return u64_draw(0);
    default:
        return double_draw();
    }
}

static PyObject *py_arc4random(PyObject *module, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames)
{
    (void)module;
    if (RNG_UNLIKELY(!no_size(args, nargs, kwnames)))
        return sized_call("arc4random", ARC4PY_ARRAY_U32, 0, args, nargs,
                          kwnames);
    return u32_draw(0);
}

static PyObject *py_random_u32(PyObject *module, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames)
{
    (void)module;
    if (RNG_UNLIKELY(!no_size(args, nargs, kwnames)))
        return sized_call("random_u32", ARC4PY_ARRAY_U32, 0, args, nargs,
                          kwnames);
    return u32_draw(0);
}

static PyObject *py_random_u64(PyObject *module, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames)
{
    (void)module;
    if (RNG_UNLIKELY(!no_size(args, nargs, kwnames)))
        return sized_call("random_u64", ARC4PY_ARRAY_U64, 0, args, nargs,
                          kwnames);
    return u64_draw(0);
}

static PyObject *py_random(PyObject *module, PyObject *const *args,
                           Py_ssize_t nargs, PyObject *kwnames)
{
    (void)module;
    if (RNG_UNLIKELY(nargs != 0 || kwnames != NULL))
        return sized_call("random", ARC4PY_ARRAY_DOUBLE, 1, args, nargs,
                          kwnames);
    return double_draw();
}

/* ---- arc4random_buf ----------------------------------------------------- */

static PyObject *py_arc4random_buf(PyObject *module, PyObject *const *args,
                                   Py_ssize_t nargs, PyObject *kwnames)
{
    (void)module;
    return arc4py_bytes_call("arc4random_buf", args, nargs, kwnames);
}

/* ---- randbelow ----------------------------------------------------------- */

static PyObject *py_randbelow(PyObject *module, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *arg;

    (void)module;
    if (RNG_LIKELY(nargs == 1 && kwnames == NULL))
        return arc4py_randbelow_arg(args[0], "exclusive_upper_bound");
    if (arc4py_one_arg("randbelow", "exclusive_upper_bound", args, nargs, kwnames,
                &arg) < 0)
        return NULL;
    if (arg == NULL)
        return PyErr_Format(PyExc_TypeError, "randbelow() missing required "
                            "argument 'exclusive_upper_bound' (pos 1)");
    return arc4py_randbelow_arg(arg, "exclusive_upper_bound");
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
    {"random", FASTCALL(py_random),
     "random(*, size=None)\n--\n\n"
     "A ``float`` in [0.0, 1.0) with 53 random bits; with ``size`` (an int\n"
     "or a tuple) a ``numpy.ndarray`` of float64 of that shape."},
    {"arc4random_buf", FASTCALL(py_arc4random_buf),
     "arc4random_buf(n)\n--\n\n"
     "``n`` random bytes (``n`` an int >= 0)."},
    {"randbelow", FASTCALL(py_randbelow),
     "randbelow(exclusive_upper_bound)\n--\n\n"
     "A uniform ``int`` in [0, exclusive_upper_bound) for any positive int\n"
     "(rejection sampling), like ``secrets.randbelow``."},
    {NULL, NULL, 0, NULL},
};

int arc4py_add_module_calls(PyObject *module)
{
    return PyModule_AddFunctions(module, module_calls);
}
