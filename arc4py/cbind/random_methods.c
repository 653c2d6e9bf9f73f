/*
 * arc4py.Random's one-argument hot methods, getrandbits(k) and
 * _randbelow(n), as method descriptors of the stdlib's C base class
 * (_random.Random), the kind its own Mersenne Twister methods are: CPython
 * specialises their calls (METH_O), which it does not for a Cython
 * function of two arguments (measured: getrandbits(32) 27-31 ns as a
 * descriptor, 42-48 ns as a Cython def, MT 27-29 ns).  Ints of 1 to 4096
 * bits are served here; every other argument goes to the Cython def
 * (arc4py/_random_methods.pyx), with its errors.  (random() stays a Cython
 * function: with no argument that is as fast.)  arc4py/__init__.py makes
 * them once, through arc4py._core._random_method_descriptors().
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "cbind.h"
#include "int_draws.h"

enum { METHOD_GETRANDBITS, METHOD_RANDBELOW, METHOD_N };
static PyObject *method_fallback[METHOD_N];

/* (out of line: its argument array would give the fast paths a frame) */
static RNG_NOINLINE PyObject *method_slow(int which, PyObject *self, PyObject *arg)
{
    PyObject *args[2] = {self, arg};

    return PyObject_Vectorcall(method_fallback[which], args, 2, NULL);
}

/* getrandbits(k) up to this many bits is served here, from the stack. */
#define GETRANDBITS_BYTES 512

/* A small positive int's value, read in place: no call, no overflow check
   (the Mersenne Twister's own getrandbits makes one call here).  1 with *v
   set, or 0 for any other int (zero, negative, 2**30 or more on most
   builds): the caller's general path. */
static inline int small_positive(PyObject *arg, Py_ssize_t *v)
{
#if PY_VERSION_HEX >= 0x030C0000
    if (PyUnstable_Long_IsCompact((PyLongObject *)arg)) {
        *v = (Py_ssize_t)PyUnstable_Long_CompactValue((PyLongObject *)arg);
        return *v > 0;
    }
#else
    /* (before 3.12 the digits are the layout: a positive int below
       2**PyLong_SHIFT is one digit, and Py_SIZE 1) */
    if (Py_SIZE(arg) == 1) {
        *v = (Py_ssize_t)((PyLongObject *)arg)->ob_digit[0];
        return 1;
    }
#endif
    return 0;
}

/* getrandbits(k) for 64 < k <= 8 * GETRANDBITS_BYTES: whole bytes,
   little-endian, the excess high bits cleared. */
static RNG_NOINLINE PyObject *getrandbits_bytes(Py_ssize_t k)
{
    unsigned char bytes[GETRANDBITS_BYTES];
    Py_ssize_t n = (k + 7) / 8;
    int err = rng_take(bytes, (size_t)n);

    if (RNG_UNLIKELY(err))
        return entropy_error(err);
    bytes[n - 1] &= (unsigned char)(0xFF >> (8 * n - k));
    return arc4py_long_from_le_bytes(bytes, (size_t)n);
}

/* A k getrandbits_method() does not serve (0, negative, large, past
   sys.maxsize): the Cython def's, with its errors. */
static RNG_NOINLINE PyObject *getrandbits_refused(PyObject *self, PyObject *arg)
{
    PyErr_Clear(); /* PyLong_AsSsize_t's OverflowError, if any */
    return method_slow(METHOD_GETRANDBITS, self, arg);
}

static inline PyObject *getrandbits_k(PyObject *self, PyObject *arg, Py_ssize_t k)
{
    if (k <= 0 || k > 8 * GETRANDBITS_BYTES)
        return getrandbits_refused(self, arg);
    if (k <= 32)
        return u32_draw((unsigned)(32 - k));
    if (k <= 64)
        return u64_draw((unsigned)(64 - k));
    return getrandbits_bytes(k);
}

/* An int that is not small: its value through the API. */
static RNG_NOINLINE PyObject *getrandbits_large_int(PyObject *self, PyObject *arg)
{
    return getrandbits_k(self, arg, PyLong_AsSsize_t(arg));
}

/* Every call in here is a tail call: the common case (a small int k of 1
   to 64) needs no stack frame. */
static PyObject *getrandbits_method(PyObject *self, PyObject *arg)
{
    Py_ssize_t k;

    if (!PyLong_CheckExact(arg))
        return method_slow(METHOD_GETRANDBITS, self, arg);
    if (small_positive(arg, &k))
        return getrandbits_k(self, arg, k);
    return getrandbits_large_int(self, arg);
}

/* The bit length of the exact int n if n > 0 and it has at most
   8 * GETRANDBITS_BYTES bits, else 0 (negative, zero, larger): found
   without raising, since an exception costs more than the draw. */
static Py_ssize_t positive_bit_length(PyObject *n)
{
#if PY_VERSION_HEX >= 0x030D0000
    unsigned char le[GETRANDBITS_BYTES];
    Py_ssize_t need = PyLong_AsNativeBytes(
        n, le, sizeof le,
        Py_ASNATIVEBYTES_LITTLE_ENDIAN | Py_ASNATIVEBYTES_UNSIGNED_BUFFER |
            Py_ASNATIVEBYTES_REJECT_NEGATIVE);
    int top;

    if (need < 0) { /* negative: ValueError */
        PyErr_Clear();
        return 0;
    }
    if (need > (Py_ssize_t)sizeof le)
        return 0;
    while (need > 0 && le[need - 1] == 0)
        need--;
    if (need == 0)
        return 0;
    for (top = 8; !(le[need - 1] & (1u << (top - 1))); top--)
        ;
    return 8 * (need - 1) + top;
#else
    size_t bits;

    if (_PyLong_Sign(n) <= 0)
        return 0;
    bits = _PyLong_NumBits(n);
    return bits <= 8 * GETRANDBITS_BYTES ? (Py_ssize_t)bits : 0;
#endif
}

/*
 * The stdlib's _randbelow_with_getrandbits: k random bits, k the bit
 * length of n, again while >= n (under 2 draws expected).  Each draw of
 * k <= 64 bits takes 8 bytes, the top k of them.
 */
static RNG_COLD_NOINLINE PyObject *randbelow_u64_unbuffered(uint64_t n, unsigned k)
{
    uint64_t r;
    int err;

    do {
        err = rng_take(&r, sizeof r);
        if (RNG_UNLIKELY(err))
            return entropy_error(err);
        r >>= 64 - k;
    } while (r >= n);
    return PyLong_FromUnsignedLongLong(r);
}

/* 0 < n < 2**64 and k its bit length.  (A draw the buffer cannot serve
   starts the rejection loop again out of line: each try is independent.) */
static inline PyObject *randbelow_u64(uint64_t n, unsigned k)
{
    uint64_t r;

    do {
        if (RNG_UNLIKELY(!rng_take_buffered(&r, sizeof r)))
            return randbelow_u64_unbuffered(n, k);
        r >>= 64 - k;
    } while (r >= n);
    return PyLong_FromUnsignedLongLong(r);
}

/* Any other exact int n: its bit length through the API. */
static RNG_NOINLINE PyObject *randbelow_general(PyObject *self, PyObject *arg)
{
    unsigned char bytes[GETRANDBITS_BYTES];
    Py_ssize_t k = positive_bit_length(arg), nbytes;
    int err;

    if (k == 0)
        return method_slow(METHOD_RANDBELOW, self, arg);
    if (k <= 64)
        return randbelow_u64(PyLong_AsUnsignedLongLong(arg), (unsigned)k);
    nbytes = (k + 7) / 8;
    for (;;) {
        PyObject *big;
        int below;

        err = rng_take(bytes, (size_t)nbytes);
        if (RNG_UNLIKELY(err))
            return entropy_error(err);
        bytes[nbytes - 1] &= (unsigned char)(0xFF >> (8 * nbytes - k));
        big = arc4py_long_from_le_bytes(bytes, (size_t)nbytes);
        if (big == NULL)
            return NULL;
        below = PyObject_RichCompareBool(big, arg, Py_LT);
        if (below != 0)
            return below > 0 ? big : (Py_DECREF(big), NULL);
        Py_DECREF(big);
    }
}

static PyObject *randbelow_method(PyObject *self, PyObject *arg)
{
    Py_ssize_t n;

    if (!PyLong_CheckExact(arg))
        return method_slow(METHOD_RANDBELOW, self, arg);
    if (small_positive(arg, &n))
        return randbelow_u64((uint64_t)n, 64 - (unsigned)RNG_CLZ64((uint64_t)n));
    return randbelow_general(self, arg);
}

static PyMethodDef random_methods[] = {
    {"getrandbits", getrandbits_method, METH_O,
     "getrandbits($self, k, /)\n--\n\nAn int with k random bits (k >= 0)."},
    {"_randbelow", randbelow_method, METH_O,
     "_randbelow($self, n, /)\n--\n\nReturn a random int in the range [0,n) "
     "(unbiased)."},
};

PyObject *arc4py_random_methods(PyObject *base, PyObject *getrandbits_def,
                                PyObject *randbelow_def)
{
    PyObject *out;
    size_t i;

    if (!PyType_Check(base))
        return PyErr_Format(PyExc_TypeError, "a type is needed");
    if (method_fallback[METHOD_GETRANDBITS] != NULL)
        return PyErr_Format(PyExc_RuntimeError, "random methods made twice");
    out = PyTuple_New(sizeof random_methods / sizeof random_methods[0]);
    if (out == NULL)
        return NULL;
    for (i = 0; i < sizeof random_methods / sizeof random_methods[0]; i++) {
        PyObject *d = PyDescr_NewMethod((PyTypeObject *)base, &random_methods[i]);

        if (d == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, (Py_ssize_t)i, d);
    }
    Py_INCREF(getrandbits_def);
    Py_INCREF(randbelow_def);
    method_fallback[METHOD_GETRANDBITS] = getrandbits_def;
    method_fallback[METHOD_RANDBELOW] = randbelow_def;
    return out;
}
