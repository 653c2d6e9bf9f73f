/*
 * arc4py._core.Random: the C base type of arc4py.Random (arc4py/_random.pyx),
 * as _random.Random is the Mersenne Twister's.  It holds the primitives the
 * stdlib's random.Random builds its other methods on: random(),
 * getrandbits(k), randbytes(n) and _randbelow(n), method descriptors of the
 * kinds CPython specialises the calls of (METH_NOARGS, METH_O, vectorcall).
 * The package's one int of k random bits, one uniform int below n and one
 * parse of a bytes draw's n are these: arc4py._core's randbits(),
 * randbelow() and arc4random_buf() (module_calls.c) call them, never the
 * other way round.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "cbind.h"
#include "int_draws.h"

/* An int's draw of up to this many bytes is made on the stack. */
#define STACK_BYTES 512

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

/* n random bytes into p: the GIL dropped while a large request fills. */
static int fill_bytes(unsigned char *p, Py_ssize_t n)
{
    int err;

    if (n < ARC4PY_NOGIL_BYTES)
        return rng_take(p, (size_t)n);
    Py_BEGIN_ALLOW_THREADS
    err = arc4py_rng_buf(p, (size_t)n);
    Py_END_ALLOW_THREADS
    return err;
}

/* A scratch buffer of n bytes: `stack` if it fits, else the heap. */
static unsigned char *scratch(unsigned char *stack, Py_ssize_t n)
{
    unsigned char *p = n <= STACK_BYTES ? stack : PyMem_Malloc((size_t)n);

    if (p == NULL)
        PyErr_NoMemory();
    return p;
}

/* k > 64 random bits: whole bytes, little-endian, the excess high bits of
   the top byte cleared. */
static RNG_NOINLINE PyObject *bits_long(Py_ssize_t k)
{
    unsigned char stack[STACK_BYTES], *p;
    Py_ssize_t n = k / 8 + (k % 8 != 0); /* (k + 7 could overflow) */
    PyObject *out = NULL;
    int err;

    if ((p = scratch(stack, n)) == NULL)
        return NULL;
    err = fill_bytes(p, n);
    if (RNG_LIKELY(!err)) {
        p[n - 1] &= (unsigned char)(0xFF >> ((8 - k % 8) % 8));
        out = arc4py_long_from_le_bytes(p, (size_t)n);
    } else {
        entropy_error(err);
    }
    if (p != stack)
        PyMem_Free(p);
    return out;
}

/* randbytes(n) and arc4random_buf(n): `function`'s n random bytes. */
PyObject *arc4py_bytes_call(const char *function, PyObject *const *args,
                            Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *arg;
    Py_ssize_t n;

    if (RNG_LIKELY(nargs == 1 && kwnames == NULL &&
                   PyLong_CheckExact(args[0]))) {
        n = PyLong_AsSsize_t(args[0]);
        if (RNG_LIKELY(n >= 0))
            return random_bytes(n);
        PyErr_Clear(); /* too large either way: arc4py_size_arg() says which */
    }
    if (arc4py_one_arg(function, "n", args, nargs, kwnames, &arg) < 0)
        return NULL;
    if (arg == NULL)
        return PyErr_Format(PyExc_TypeError, "%s() missing required "
                            "argument 'n' (pos 1)", function);
    n = arc4py_size_arg(arg, "n");
    return n < 0 ? NULL : random_bytes(n);
}

PyObject *arc4py_random_bits(Py_ssize_t k)
{
    if (k <= 32)
        return k == 0 ? PyLong_FromLong(0) : u32_draw((unsigned)(32 - k));
    if (k <= 64)
        return u64_draw((unsigned)(64 - k));
    return bits_long(k);
}

/* Whether the int n compares to 0 as `op` says: 1, 0, or -1 with an
   exception set. */
static int compare_zero(PyObject *n, int op)
{
    PyObject *zero = PyLong_FromLong(0); /* a cached small int */
    int result = zero ? PyObject_RichCompareBool(n, zero, op) : -1;

    Py_XDECREF(zero);
    return result;
}

/* getrandbits(k) for every k but a small positive exact int. */
static RNG_NOINLINE PyObject *getrandbits_general(PyObject *arg)
{
    PyObject *index = arc4py_int_arg(arg, "number of bits");
    Py_ssize_t k;
    int sign;

    if (index == NULL)
        return NULL;
    sign = compare_zero(index, Py_LT);
    k = sign ? -1 : PyLong_AsSsize_t(index); /* OverflowError past maxsize */
    Py_DECREF(index);
    if (sign > 0) /* the stdlib's words */
        return PyErr_Format(PyExc_ValueError, "number of bits must be "
                            "non-negative");
    return k < 0 ? NULL : arc4py_random_bits(k);
}

/* Every call in here is a tail call: the common case (a small int k)
   needs no stack frame. */
static PyObject *getrandbits_method(PyObject *self, PyObject *arg)
{
    Py_ssize_t k;

    (void)self;
    if (RNG_LIKELY(PyLong_CheckExact(arg) && small_positive(arg, &k))) {
        if (k <= 32)
            return u32_draw((unsigned)(32 - k));
        if (k <= 64)
            return u64_draw((unsigned)(64 - k));
        return bits_long(k);
    }
    return getrandbits_general(arg);
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

/* The bit length of the exact int n if n > 0 and it has at most
   8 * STACK_BYTES bits, else 0 (negative, zero, larger): read in place,
   without raising (randrange(2**80) is common). */
static Py_ssize_t positive_bit_length(PyObject *n)
{
#if PY_VERSION_HEX >= 0x030D0000
    unsigned char le[STACK_BYTES];
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
    return bits <= 8 * STACK_BYTES ? (Py_ssize_t)bits : 0;
#endif
}

/* The same loop for an n of more than 64 bits, in whole bytes. */
static RNG_NOINLINE PyObject *randbelow_long(PyObject *n, Py_ssize_t k)
{
    unsigned char stack[STACK_BYTES], *p;
    Py_ssize_t nbytes = k / 8 + (k % 8 != 0);
    PyObject *big = NULL;
    int err, below = 0;

    if ((p = scratch(stack, nbytes)) == NULL)
        return NULL;
    while (below == 0) {
        Py_XDECREF(big);
        big = NULL;
        err = fill_bytes(p, nbytes);
        if (RNG_UNLIKELY(err)) {
            entropy_error(err);
            break;
        }
        p[nbytes - 1] &= (unsigned char)(0xFF >> ((8 - k % 8) % 8));
        big = arc4py_long_from_le_bytes(p, (size_t)nbytes);
        below = big ? PyObject_RichCompareBool(big, n, Py_LT) : -1;
    }
    if (p != stack)
        PyMem_Free(p);
    if (below < 0)
        Py_CLEAR(big);
    return big;
}

PyObject *arc4py_randbelow(PyObject *n)
{
    Py_ssize_t k;
    PyObject *bits;

    if (small_positive(n, &k))
        return randbelow_u64((uint64_t)k, 64 - (unsigned)RNG_CLZ64((uint64_t)k));
    k = positive_bit_length(n);
    if (k == 0) { /* more than 8 * STACK_BYTES bits */
        if ((bits = PyObject_CallMethod(n, "bit_length", NULL)) == NULL)
            return NULL;
        k = PyLong_AsSsize_t(bits);
        Py_DECREF(bits);
        if (k < 0)
            return NULL;
    }
    if (k <= 64)
        return randbelow_u64(PyLong_AsUnsignedLongLong(n), (unsigned)k);
    return randbelow_long(n, k);
}

/* randbelow(n), the module's (as secrets.randbelow): the method's fast
   path for a small positive exact int, read where it is (no reference is
   taken: threads sharing one int would contend on it in a free-threaded
   build); `what` names the argument in errors. */
PyObject *arc4py_randbelow_arg(PyObject *arg, const char *what)
{
    Py_ssize_t k;
    PyObject *n, *out;
    int positive;

    if (RNG_LIKELY(PyLong_CheckExact(arg) && small_positive(arg, &k)))
        return randbelow_u64((uint64_t)k, 64 - (unsigned)RNG_CLZ64((uint64_t)k));
    if ((n = arc4py_int_arg(arg, what)) == NULL)
        return NULL;
    positive = compare_zero(n, Py_GT);
    if (positive == 0)
        PyErr_Format(PyExc_ValueError, "%s must be > 0, not %S", what, n);
    out = positive > 0 ? arc4py_randbelow(n) : NULL;
    Py_DECREF(n);
    return out;
}

/* _randbelow(n) for every n but a small positive exact int. */
static RNG_NOINLINE PyObject *randbelow_general(PyObject *arg)
{
    PyObject *n = arc4py_int_arg(arg, "n"), *out;
    int positive;

    if (n == NULL)
        return NULL;
    positive = compare_zero(n, Py_GT);
#if PY_VERSION_HEX < 0x030B0000
    /* Before 3.11 the stdlib's _randbelow(0) returns 0, and choice([])
       relies on it to raise IndexError from the indexing. */
    if (positive == 0 && PyObject_Not(n) == 1) {
        Py_DECREF(n);
        return PyLong_FromLong(0);
    }
#endif
    if (positive == 0)
        PyErr_Format(PyExc_ValueError, "n must be > 0, not %S", n);
    out = positive > 0 ? arc4py_randbelow(n) : NULL;
    Py_DECREF(n);
    return out;
}

/* _randbelow(n) for an exact int n that is not small and positive. */
static RNG_NOINLINE PyObject *randbelow_exact(PyObject *n)
{
    Py_ssize_t k = positive_bit_length(n);

    if (k > 64)
        return randbelow_long(n, k);
    if (k > 0)
        return randbelow_u64(PyLong_AsUnsignedLongLong(n), (unsigned)k);
    return randbelow_general(n); /* zero, negative, or past 4096 bits */
}

/* Every call in here is a tail call, as in getrandbits_method(). */
static PyObject *randbelow_method(PyObject *self, PyObject *arg)
{
    Py_ssize_t n;

    (void)self;
    if (RNG_LIKELY(PyLong_CheckExact(arg) && small_positive(arg, &n)))
        return randbelow_u64((uint64_t)n, 64 - (unsigned)RNG_CLZ64((uint64_t)n));
    if (PyLong_CheckExact(arg))
        return randbelow_exact(arg);
    return randbelow_general(arg);
}

static PyObject *random_method(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return double_draw();
}

static PyObject *randbytes_method(PyObject *self, PyObject *const *args,
                                  Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    return arc4py_bytes_call("randbytes", args, nargs, kwnames);
}

static PyMethodDef random_methods[] = {
    {"random", random_method, METH_NOARGS,
     "random($self, /)\n--\n\nA float in the interval [0.0, 1.0), with 53 "
     "random bits."},
    {"getrandbits", getrandbits_method, METH_O,
     "getrandbits($self, k, /)\n--\n\nAn int with k random bits (k >= 0)."},
    {"randbytes", (PyCFunction)(void (*)(void))randbytes_method,
     METH_FASTCALL | METH_KEYWORDS,
     "randbytes($self, n)\n--\n\nGenerate n random bytes."},
    {"_randbelow", randbelow_method, METH_O,
     "_randbelow($self, n, /)\n--\n\nReturn a random int in the range [0,n) "
     "(unbiased)."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot random_slots[] = {
    {Py_tp_doc, "The primitives of arc4py.Random, drawn from the calling "
                "thread's generator; no state of its own."},
    {Py_tp_methods, random_methods},
    {0, NULL},
};

static PyType_Spec random_spec = {
    "arc4py._core.Random", 0, 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, random_slots,
};

PyObject *arc4py_random_type(void)
{
    return PyType_FromSpec(&random_spec);
}
