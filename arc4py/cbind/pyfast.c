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
 * path is inlined here (rng_take_buffered() and rng_take() from
 * arc4py/csrc/rng_hot_path.h).
 * _core.pyx creates the functions with arc4py_pyfast_wrap() in its last
 * section, and the C API's capsule with arc4py_capi_capsule().
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>
#if PY_VERSION_HEX < 0x030B0000
#include <longintrepr.h> /* 3.11 on: included by Python.h */
#endif

#include "arc4py/generator.h"
#define ARC4PY_CAPI_PROVIDER 1
#include "arc4py/capi.h"
#include "binding.h"
#include "pyfast.h"
#include "rng_hot_path.h"


enum { FAST_ARC4RANDOM, FAST_RANDOM_U32, FAST_RANDOM_U64, FAST_BUF, FAST_N };

/* The error of a failed draw, as the Cython defs raise it. */
static PyObject *entropy_error(int err)
{
    arc4py_raise_os_error(err);
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

/* Hands the call to the Cython def (the twins table below). */
static PyObject *slow(int which, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames);

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
 * The integer draws' slow path, kept out of the callers: their buffered
 * path then takes no address of the value (it stays in a register) and
 * ends in a tail call of the int constructor, with no stack frame.
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

static inline PyObject *u32_call(int which, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames)
{
    if (RNG_UNLIKELY(!no_size(args, nargs, kwnames)))
        return slow(which, args, nargs, kwnames);
    return u32_draw(0);
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
    (void)self;
    if (RNG_UNLIKELY(!no_size(args, nargs, kwnames)))
        return slow(FAST_RANDOM_U64, args, nargs, kwnames);
    return u64_draw(0);
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
    if (n < 0 || n >= ARC4PY_NOGIL_BYTES) {
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

/*
 * One row per fast call: its name (the Cython def it replaces), its C
 * function, and what arc4py_pyfast_wrap() fills in: the def itself (every
 * call the C does not serve goes there) and the docstring bytes ml_doc
 * points into.  Both live as long as the process (never unloaded).
 */
static struct twin {
    const char *name;
    PyObject *(*fn)(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames);
    PyObject *fallback;
    PyObject *doc_bytes;
    PyMethodDef def;
} twins[FAST_N] = {
    [FAST_ARC4RANDOM] = {"arc4random", fast_arc4random},
    [FAST_RANDOM_U32] = {"random_u32", fast_random_u32},
    [FAST_RANDOM_U64] = {"random_u64", fast_random_u64},
    [FAST_BUF] = {"arc4random_buf", fast_buf},
};

static PyObject *slow(int which, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames)
{
    return PyObject_Vectorcall(twins[which].fallback, args, (size_t)nargs,
                               kwnames);
}

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
    PyObject *name = PyObject_GetAttrString(def_, "__name__"), *doc;
    const char *s = name ? PyUnicode_AsUTF8(name) : NULL;
    struct twin *t = NULL;
    int i;

    if (s == NULL) {
        Py_XDECREF(name);
        return NULL;
    }
    for (i = 0; i < FAST_N; i++)
        if (strcmp(s, twins[i].name) == 0)
            t = &twins[i];
    if (t == NULL || t->fallback != NULL) {
        PyErr_Format(PyExc_RuntimeError, "no (second) fast twin for %U", name);
        Py_DECREF(name);
        return NULL;
    }
    doc = text_signature_doc(def_, name);
    Py_DECREF(name);
    if (doc == NULL)
        return NULL;
    Py_INCREF(def_);
    t->fallback = def_;
    t->doc_bytes = doc;
    t->def.ml_name = t->name;
    t->def.ml_meth = (PyCFunction)(void (*)(void))t->fn;
    t->def.ml_flags = METH_FASTCALL | METH_KEYWORDS;
    t->def.ml_doc = PyBytes_AS_STRING(doc);
    return PyCFunction_NewEx(&t->def, NULL, module_name);
}

/*
 * arc4py.Random's one-argument hot methods as method descriptors of the
 * stdlib's C base class (_random.Random), the kind its own Mersenne Twister
 * methods are: CPython specialises their calls (METH_O), which it does not
 * for a Cython function of two arguments (measured: getrandbits(32) 27-31
 * ns as a descriptor, 42-48 ns as a Cython def, MT 27-29 ns).
 * getrandbits(k) and _randbelow(n) for ints of 1 to 4096 bits are served
 * here; every other argument goes to the Cython def
 * (arc4py/_random_methods.pyx), with its errors.  (random() stays a Cython
 * function: with no argument that is as fast.)
 */
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
     "getrandbits($self, k, /)\n--\n\ngetrandbits(k) -> x.  Generates an int "
     "with k random bits."},
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

/* The C API capsule (arc4py/include/arc4py/capi.h) over capi.c's table. */
PyObject *arc4py_capi_capsule(const char **hand_out)
{
    return PyCapsule_New((void *)arc4py_capi_provider(hand_out),
                         ARC4PY_CAPI_CAPSULE, NULL);
}
