/*
 * What the binding layer's C (arc4py/cbind/) and its Cython (arc4py/_common.pxd,
 * cimported by every module) share: said once, here.
 */
#ifndef ARC4PY_BINDING_H
#define ARC4PY_BINDING_H
#include <Python.h>

#include <errno.h>
#include <string.h>

/* Requests of this many bytes or more drop the GIL while they fill; below
   it, dropping and retaking the GIL costs more than it saves. */
#define ARC4PY_NOGIL_BYTES (1 << 14)

/* The arrays a call's size= form makes (cbind.h's arc4py_sized_draw()). */
enum arc4py_array_kind {
    ARC4PY_ARRAY_U32,    /* uint32, as random_u32() */
    ARC4PY_ARRAY_U64,    /* uint64, as random_u64() */
    ARC4PY_ARRAY_DOUBLE, /* float64 in [0, 1), as random() */
};

/* Set the exception for the generator's errno value err and return -1:
   MemoryError when no state could be mapped for the thread, else OSError
   (errno, message). */
static inline int arc4py_raise_os_error(int err)
{
    PyObject *args;

    if (err == ENOMEM) {
        PyErr_Format(PyExc_MemoryError, "arc4py: no memory for this "
                     "thread's generator state (%s)", strerror(err));
        return -1;
    }
    args = Py_BuildValue(
        "(iN)", err,
        PyUnicode_FromFormat("arc4py: the OS could not provide entropy: %s",
                             strerror(err)));
    if (args != NULL) {
        PyErr_SetObject(PyExc_OSError, args);
        Py_DECREF(args);
    }
    return -1;
}

/* arg as an exact int (operator.index), new reference; TypeError naming
   `what` for anything else, floats included. */
static inline PyObject *arc4py_int_arg(PyObject *arg, const char *what)
{
    PyObject *index;

    if (PyLong_CheckExact(arg)) {
        Py_INCREF(arg);
        return arg;
    }
    index = PyFloat_Check(arg) ? NULL : PyNumber_Index(arg);
    if (index == NULL &&
        (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)))
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %s", what,
                     Py_TYPE(arg)->tp_name);
    return index;
}

/* n as a size: TypeError naming `what` for a non-int, ValueError for a
   negative, OverflowError past sys.maxsize; -1 with the error set. */
static inline Py_ssize_t arc4py_size_arg(PyObject *n, const char *what)
{
    PyObject *index = arc4py_int_arg(n, what), *zero;
    Py_ssize_t size;

    if (index == NULL)
        return -1;
    size = PyLong_AsSsize_t(index);
    if (size == -1 && PyErr_Occurred()) {
        zero = PyLong_FromLong(0);
        if (zero != NULL && PyObject_RichCompareBool(index, zero, Py_LT) == 1)
            PyErr_Clear(); /* a ValueError, as for any negative */
        Py_XDECREF(zero);
    }
    if (size < 0 && !PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "%s must be >= 0, not %S", what, index);
    Py_DECREF(index);
    return size < 0 ? -1 : size;
}

/* The one parameter `param` of `function`, by position or keyword: *arg is
   it, or NULL if it was not given; 0, or -1 with TypeError. */
static inline int arc4py_one_arg(const char *function, const char *param,
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

/* The unsigned little-endian int of n bytes at p (new reference). */
static inline PyObject *arc4py_long_from_le_bytes(const unsigned char *p,
                                                  size_t n)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyLong_FromUnsignedNativeBytes(p, n, Py_ASNATIVEBYTES_LITTLE_ENDIAN);
#else
    return _PyLong_FromByteArray(p, n, 1, 0);
#endif
}
#endif
