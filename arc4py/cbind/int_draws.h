/*
 * Random ints, floats and bytes for the C entry points of the hot Python
 * calls (module_calls.c, random_methods.c): the generator's fast path
 * inlined (rng_take_buffered() of arc4py/csrc/rng_hot_path.h), the object
 * built straight from the draw.
 */
#ifndef ARC4PY_INT_DRAWS_H
#define ARC4PY_INT_DRAWS_H
#include <Python.h>
#if PY_VERSION_HEX < 0x030B0000
#include <longintrepr.h> /* 3.11 on: included by Python.h */
#endif

#include "binding.h"
#include "generator.h"
#include "rng_hot_path.h"

/* The exception for the generator's errno value err; NULL. */
static PyObject *entropy_error(int err)
{
    arc4py_raise_os_error(err);
    return NULL;
}

/*
 * 32 bits as an int.  Before 3.12 the layout is public (longintrepr.h) and
 * a value of 2**30 or more is two digits: _PyLong_New(2) and two stores
 * skip PyLong_FromUnsignedLong's digit count and one call (a draw is
 * three times in four that large).  3.12 on: the API's constructor.
 */
static inline PyObject *long_from_u32(uint32_t v)
{
#if PY_VERSION_HEX < 0x030C0000 && PyLong_SHIFT == 30
    if (v >= PyLong_BASE) {
        PyLongObject *o = _PyLong_New(2);

        if (o != NULL) {
            o->ob_digit[0] = (digit)(v & PyLong_MASK);
            o->ob_digit[1] = (digit)(v >> PyLong_SHIFT);
        }
        return (PyObject *)o;
    }
#endif
    return PyLong_FromUnsignedLong(v);
}

/*
 * The slow path, kept out of the callers: their buffered path then takes
 * no address of the value (it stays in a register) and ends in a tail
 * call of the int constructor, with no stack frame.
 */
static RNG_COLD_NOINLINE PyObject *u32_unbuffered(unsigned shift)
{
    uint32_t r;
    int err = rng_buf_slow(&r, sizeof r);

    return RNG_UNLIKELY(err) ? entropy_error(err) : long_from_u32(r >> shift);
}

static RNG_COLD_NOINLINE PyObject *u64_unbuffered(unsigned shift)
{
    uint64_t r;
    int err = rng_buf_slow(&r, sizeof r);

    return RNG_UNLIKELY(err) ? entropy_error(err)
                             : PyLong_FromUnsignedLongLong(r >> shift);
}

/* 32 (64) random bits shifted right by shift (< 32, < 64), as an int. */
static inline PyObject *u32_draw(unsigned shift)
{
    uint32_t r;

    return RNG_LIKELY(rng_take_buffered(&r, sizeof r))
               ? long_from_u32(r >> shift)
               : u32_unbuffered(shift);
}

static inline PyObject *u64_draw(unsigned shift)
{
    uint64_t r;

    return RNG_LIKELY(rng_take_buffered(&r, sizeof r))
               ? PyLong_FromUnsignedLongLong(r >> shift)
               : u64_unbuffered(shift);
}

static RNG_COLD_NOINLINE PyObject *double_unbuffered(void)
{
    uint64_t r;
    int err = rng_buf_slow(&r, sizeof r);

    return RNG_UNLIKELY(err) ? entropy_error(err)
                             : PyFloat_FromDouble(arc4py_u64_to_double(r));
}

/* random(): a float in [0.0, 1.0) with 53 random bits. */
static inline PyObject *double_draw(void)
{
    uint64_t r;

    return RNG_LIKELY(rng_take_buffered(&r, sizeof r))
               ? PyFloat_FromDouble(arc4py_u64_to_double(r))
               : double_unbuffered();
}

/* n random bytes, n >= ARC4PY_NOGIL_BYTES: the GIL dropped while they
   fill. */
static RNG_NOINLINE PyObject *large_random_bytes(Py_ssize_t n)
{
    PyObject *out = PyBytes_FromStringAndSize(NULL, n);
    int err;

    if (out == NULL) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError))
            PyErr_Format(PyExc_MemoryError, "cannot allocate %zd bytes",
                         n);
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
#endif
