/*
 * The size= form of every sized call (random_u32, random_u64, random,
 * arc4random_uniform, BitGenerator.random_raw): the array made and filled
 * here, through numpy's C API, which is loaded on the first such call (so
 * `import arc4py` and every scalar draw need no numpy).  Also the loader of
 * arc4py._numpy (BitGenerator), whose ImportError names the extra too.
 *
 * Built against numpy 2's headers, whose loader also finds numpy 1.x's
 * C API (numpy.core) at run time.  Without numpy at build time (odd builds)
 * the arrays raise the extra's ImportError.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "cbind.h"
#include "compiler_compat.h"
#include "generator.h"

#ifdef ARC4PY_NUMPY_ARRAYS
#define PY_ARRAY_UNIQUE_SYMBOL arc4py_numpy_api
#include <numpy/arrayobject.h>
#endif

/* ---- the ImportError naming the extra ------------------------------------ */

static const char numpy_missing_message[] =
    "this arc4py feature needs numpy: pip install 'arc4py[numpy]'";

/* ImportError naming the extra, chained to the error of the import. */
static void numpy_missing(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *cause = PyErr_GetRaisedException(), *exc;

    PyErr_SetString(PyExc_ImportError, numpy_missing_message);
    exc = PyErr_GetRaisedException();
    if (cause != NULL)
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
    PyErr_SetString(PyExc_ImportError, numpy_missing_message);
    PyErr_Fetch(&type2, &exc, &tb2);
    PyErr_NormalizeException(&type2, &exc, &tb2);
    if (cause != NULL)
        PyException_SetCause(exc, cause); /* steals cause */
    PyErr_Restore(type2, exc, tb2);
#endif
}

PyObject *arc4py_numpy_module(void)
{
    PyObject *numpy = PyImport_ImportModule("numpy"), *m = NULL;

    if (numpy != NULL) {
        Py_DECREF(numpy);
        m = PyImport_ImportModule("arc4py._numpy");
    }
    if (m == NULL && PyErr_ExceptionMatches(PyExc_ImportError))
        numpy_missing();
    return m;
}

/* ---- the shape ------------------------------------------------------------ */

/* numpy 2's NPY_MAXDIMS; numpy checks its own. */
#define ARC4PY_MAX_DIMS 64

/* *d = the exact int `index`, >= 0 (ValueError below 0, OverflowError past
   sys.maxsize); 0, or -1 with the error set. */
static int dim_of(PyObject *index, Py_ssize_t *d)
{
    PyObject *zero;
    int negative;

    *d = PyLong_AsSsize_t(index);
    if (*d == -1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError))
            return -1;
        zero = PyLong_FromLong(0);
        negative = zero != NULL ? PyObject_RichCompareBool(index, zero, Py_LT)
                                : -1;
        Py_XDECREF(zero);
        if (negative != 1)
            return -1; /* too large: the OverflowError stays */
        PyErr_Clear();
    }
    if (*d < 0) {
        PyErr_Format(PyExc_ValueError, "size must be non-negative, not %S",
                     index);
        return -1;
    }
    return 0;
}

static int not_a_shape(PyObject *size)
{
    PyErr_Format(PyExc_TypeError, "size must be an int or a tuple of ints, "
                 "not %s", Py_TYPE(size)->tp_name);
    return -1;
}

/* `size` (an int or a sequence of ints) as dims[0..ndim); ndim, or -1 with
   numpy's errors: TypeError for a non-integer, ValueError for a negative. */
static int shape_of(PyObject *size, Py_ssize_t *dims)
{
    PyObject *index, *seq, *d;
    Py_ssize_t n, i;
    int rc = 0;

    if (PyUnicode_Check(size) || PyBytes_Check(size) || PyFloat_Check(size))
        return not_a_shape(size);
    index = PyNumber_Index(size);
    if (index != NULL) {
        rc = dim_of(index, &dims[0]);
        Py_DECREF(index);
        return rc < 0 ? -1 : 1;
    }
    if (!PyErr_ExceptionMatches(PyExc_TypeError))
        return -1;
    PyErr_Clear();
    seq = PySequence_Tuple(size);
    if (seq == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError))
            return -1;
        PyErr_Clear();
        return not_a_shape(size);
    }
    n = PyTuple_GET_SIZE(seq);
    if (n > ARC4PY_MAX_DIMS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "size has %zd dimensions; numpy "
                     "allows at most %d", n, ARC4PY_MAX_DIMS);
        return -1;
    }
    for (i = 0; i < n && rc == 0; i++) {
        d = arc4py_int_arg(PyTuple_GET_ITEM(seq, i), "size must be an int "
                           "or a tuple of ints; each entry");
        rc = d != NULL ? dim_of(d, &dims[i]) : -1;
        Py_XDECREF(d);
    }
    Py_DECREF(seq);
    return rc < 0 ? -1 : (int)n;
}

PyObject *arc4py_array_shape(PyObject *size)
{
    Py_ssize_t dims[ARC4PY_MAX_DIMS];
    int ndim = shape_of(size, dims), i;
    PyObject *shape;

    if (ndim < 0)
        return NULL;
    shape = PyTuple_New(ndim);
    for (i = 0; shape != NULL && i < ndim; i++) {
        PyObject *d = PyLong_FromSsize_t(dims[i]);

        if (d == NULL)
            Py_CLEAR(shape);
        else
            PyTuple_SET_ITEM(shape, i, d);
    }
    return shape;
}

#ifdef ARC4PY_NUMPY_ARRAYS

/* ---- numpy's C API, loaded on first use ---------------------------------- */

/* Whether numpy's C API table is loaded.  Without the GIL threads may ask at
   once: the loads are serialised, the flag published release/acquire. */
static int numpy_loaded;
#ifdef Py_GIL_DISABLED
static PyMutex numpy_loading;
#endif

static int load_numpy(void)
{
    int rc = 0;

    if (RNG_LIKELY(rng_load_int(&numpy_loaded)))
        return 0;
#ifdef Py_GIL_DISABLED
    PyMutex_Lock(&numpy_loading);
#endif
    if (!rng_load_int(&numpy_loaded)) {
        /* Not import_array(), which prints the import's error. */
        rc = _import_array();
        if (rc == 0)
            rng_store_int(&numpy_loaded, 1);
        else if (PyErr_ExceptionMatches(PyExc_ImportError))
            numpy_missing();
    }
#ifdef Py_GIL_DISABLED
    PyMutex_Unlock(&numpy_loading);
#endif
    return rc < 0 ? -1 : 0;
}

/* ---- the draws ----------------------------------------------------------- */

/* Fill nbytes at p as `kind` asks: random words, mapped in place to
   [0, bound) if `uniform` (bound 0 standing for 2**32), or turned into
   doubles for ARC4PY_ARRAY_DOUBLE; 0 or the generator's errno value. */
static int draw_into(enum arc4py_array_kind kind, uint32_t bound,
                     int uniform, unsigned char *p, size_t nbytes)
{
    size_t i;
    uint64_t word;
    double x;
    int err = arc4py_rng_buf(p, nbytes);

    if (err == 0 && uniform)
        err = arc4py_rng_uniform_words((uint32_t *)(void *)p, nbytes / 4,
                                       bound);
    if (err == 0 && kind == ARC4PY_ARRAY_DOUBLE) {
        /* Each 8-byte slot read as a uint64, rewritten as the double
           (memcpy: no aliasing). */
        for (i = 0; i + 8 <= nbytes; i += 8) {
            memcpy(&word, p + i, 8);
            x = arc4py_u64_to_double(word);
            memcpy(p + i, &x, 8);
        }
    }
    return err;
}

static PyObject *make_array(enum arc4py_array_kind kind, PyObject *size,
                            int uniform, uint32_t bound)
{
    Py_ssize_t dims[ARC4PY_MAX_DIMS];
    npy_intp shape[ARC4PY_MAX_DIMS];
    int ndim, i, typenum, err;
    PyObject *out;
    unsigned char *p;
    size_t nbytes;

    if (load_numpy() < 0)
        return NULL;
    ndim = shape_of(size, dims);
    if (ndim < 0)
        return NULL;
    for (i = 0; i < ndim; i++)
        shape[i] = (npy_intp)dims[i];
    typenum = kind == ARC4PY_ARRAY_U32 ? NPY_UINT32
              : kind == ARC4PY_ARRAY_U64 ? NPY_UINT64 : NPY_FLOAT64;
    out = PyArray_EMPTY(ndim, shape, typenum, 0);
    if (out == NULL)
        return NULL;
    p = (unsigned char *)PyArray_DATA((PyArrayObject *)out);
    nbytes = (size_t)PyArray_NBYTES((PyArrayObject *)out);
    if (nbytes >= ARC4PY_NOGIL_BYTES) {
        Py_BEGIN_ALLOW_THREADS
        err = draw_into(kind, bound, uniform, p, nbytes);
        Py_END_ALLOW_THREADS
    } else {
        err = draw_into(kind, bound, uniform, p, nbytes);
    }
    if (err) { /* the draw wiped what it made */
        Py_DECREF(out);
        arc4py_raise_os_error(err);
        return NULL;
    }
    return out;
}

#else /* built without numpy */

static PyObject *make_array(enum arc4py_array_kind kind, PyObject *size,
                            int uniform, uint32_t bound)
{
    (void)kind, (void)size, (void)uniform, (void)bound;
    PyErr_SetString(PyExc_ImportError, "arc4py was built without numpy");
    numpy_missing();
    return NULL;
}

#endif /* ARC4PY_NUMPY_ARRAYS */

PyObject *arc4py_sized_draw(enum arc4py_array_kind kind, PyObject *size)
{
    return make_array(kind, size, 0, 0);
}

PyObject *arc4py_uniform_array(PyObject *size, uint32_t upper_bound)
{
    return make_array(ARC4PY_ARRAY_U32, size, 1, upper_bound);
}
