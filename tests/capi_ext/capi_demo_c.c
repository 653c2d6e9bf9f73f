/* A third-party C extension using arc4py's C API (built by test_capi.py). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "arc4py/capi.h"

#include <errno.h>

/* u32s(n): n arc4py_arc4random() values without the GIL, native bytes. */
static PyObject *u32s(PyObject *self, PyObject *arg)
{
    Py_ssize_t n = PyLong_AsSsize_t(arg), i;
    PyObject *out;
    uint32_t *p;

    (void)self;
    if (n < 0)
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_ValueError, "n < 0");
    out = PyBytes_FromStringAndSize(NULL, 4 * n);
    if (out == NULL)
        return NULL;
    p = (uint32_t *)PyBytes_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS
    for (i = 0; i < n; i++)
        p[i] = arc4py_arc4random();
    Py_END_ALLOW_THREADS
    return out;
}

/* u64s(n): n arc4py_random_u64() values (version 2), native bytes. */
static PyObject *u64s(PyObject *self, PyObject *arg)
{
    Py_ssize_t n = PyLong_AsSsize_t(arg), i;
    PyObject *out;
    uint64_t *p;
    int err = 0;

    (void)self;
    if (n < 0)
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_ValueError, "n < 0");
    out = PyBytes_FromStringAndSize(NULL, 8 * n);
    if (out == NULL)
        return NULL;
    p = (uint64_t *)PyBytes_AS_STRING(out);
    for (i = 0; i < n && !err; i++)
        err = arc4py_random_u64(&p[i]);
    if (err) {
        Py_DECREF(out);
        errno = err;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    return out;
}

/* bufs(size, count): count arc4py_arc4random_buf(size) calls, concatenated. */
static PyObject *bufs(PyObject *self, PyObject *args)
{
    Py_ssize_t size, count, i;
    PyObject *out;
    char *p;

    (void)self;
    if (!PyArg_ParseTuple(args, "nn", &size, &count))
        return NULL;
    out = PyBytes_FromStringAndSize(NULL, size * count);
    if (out == NULL)
        return NULL;
    p = PyBytes_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS
    for (i = 0; i < count; i++)
        arc4py_arc4random_buf(p + i * size, (size_t)size);
    Py_END_ALLOW_THREADS
    return out;
}

/* uniforms(bound, n): n arc4py_arc4random_uniform(bound), native bytes. */
static PyObject *uniforms(PyObject *self, PyObject *args)
{
    unsigned int bound;
    Py_ssize_t n, i;
    PyObject *out;
    uint32_t *p;

    (void)self;
    if (!PyArg_ParseTuple(args, "In", &bound, &n))
        return NULL;
    out = PyBytes_FromStringAndSize(NULL, 4 * n);
    if (out == NULL)
        return NULL;
    p = (uint32_t *)PyBytes_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS
    for (i = 0; i < n; i++)
        p[i] = arc4py_arc4random_uniform(bound);
    Py_END_ALLOW_THREADS
    return out;
}

/* fill_into(bytearray): arc4py_fill over it, 0 or an errno value. */
static PyObject *fill_into(PyObject *self, PyObject *arg)
{
    int err;

    (void)self;
    if (!PyByteArray_Check(arg))
        return PyErr_Format(PyExc_TypeError, "expected a bytearray");
    err = arc4py_fill(PyByteArray_AS_STRING(arg), (size_t)PyByteArray_GET_SIZE(arg));
    return PyLong_FromLong(err);
}

/* reimport(): arc4py_import() again (a no-op once it succeeded). */
static PyObject *reimport(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (arc4py_import() < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"u32s", u32s, METH_O, NULL},
    {"u64s", u64s, METH_O, NULL},
    {"bufs", bufs, METH_VARARGS, NULL},
    {"uniforms", uniforms, METH_VARARGS, NULL},
    {"fill_into", fill_into, METH_O, NULL},
    {"reimport", reimport, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

/* Multi-phase init, as new extensions are written: the C API is imported
   when the module executes; it keeps no state of its own, every call
   draws through arc4py's C API from the calling thread, so it declares
   that it runs without the GIL. */
static int demo_exec(PyObject *module)
{
    (void)module;
    return arc4py_import();
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, (void *)demo_exec},
#ifdef Py_GIL_DISABLED
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "capi_demo_c", NULL, 0, methods,
    slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_capi_demo_c(void)
{
    return PyModuleDef_Init(&moddef);
}
