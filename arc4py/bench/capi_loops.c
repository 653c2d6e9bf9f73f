/*
 * arc4py.bench._capi_loops: the C-level rows of `arc4py bench --c-api`.
 *
 * Makes C calls in a compiled loop, the way the C library's bench-arc4random
 * does, for arc4py's C API (through its capsule, as any extension sees it)
 * and for the peers, each loaded with dlopen() at run time so that a missing
 * library is a skipped column, not a build failure:
 *
 *   libc     arc4random / arc4random_buf from libc.so.6 (glibc >= 2.36)
 *   libbsd   arc4random / arc4random_buf from libbsd.so.0 (OpenBSD's code)
 *   openssl  RAND_bytes from libcrypto.so.3 (4 bytes for the arc4random row)
 *
 * Python (capi.py beside it) chooses the call counts and times them as it
 * times the Python rows (timing.py); this module only runs the calls,
 * with the GIL released.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arc4py/capi.h"

typedef uint32_t (*u32_fn)(void);
typedef void (*buf_fn)(void *, size_t);
typedef int (*rand_bytes_fn)(unsigned char *, int);

enum { COL_ARC4PY, COL_LIBC, COL_LIBBSD, COL_OPENSSL, NCOLS };

static const char *const col_names[NCOLS] = {"arc4py", "libc", "libbsd", "openssl"};

struct column {
    const char *missing; /* why the column is skipped, or NULL */
    u32_fn u32;
    buf_fn buf;
    rand_bytes_fn rand_bytes;
};

/* Filled in once, when the module is imported; read-only after. */
static struct column cols[NCOLS];

static void load_column(int c)
{
    struct column *col = &cols[c];
    void *h;

    switch (c) {
    case COL_ARC4PY:
        col->u32 = arc4py_capi_get()->arc4random;
        col->buf = arc4py_capi_get()->arc4random_buf;
        return;
    case COL_LIBC:
    case COL_LIBBSD:
        h = dlopen(c == COL_LIBC ? "libc.so.6" : "libbsd.so.0", RTLD_NOW | RTLD_LOCAL);
        if (h == NULL) {
            col->missing = c == COL_LIBC ? "libc.so.6 cannot be loaded (not glibc)"
                                         : "libbsd.so.0 is not installed";
            return;
        }
        col->u32 = (u32_fn)dlsym(h, "arc4random");
        col->buf = (buf_fn)dlsym(h, "arc4random_buf");
        if (col->u32 == NULL || col->buf == NULL)
            col->missing = c == COL_LIBC
                ? "this C library has no arc4random (glibc < 2.36)"
                : "libbsd.so.0 has no arc4random";
        return;
    case COL_OPENSSL:
        h = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
        if (h == NULL) {
            col->missing = "libcrypto.so.3 (OpenSSL 3) is not installed";
            return;
        }
        col->rand_bytes = (rand_bytes_fn)dlsym(h, "RAND_bytes");
        if (col->rand_bytes == NULL)
            col->missing = "libcrypto.so.3 has no RAND_bytes";
        return;
    }
}

static int find_column(PyObject *name)
{
    const char *s = PyUnicode_AsUTF8(name);
    int c;

    if (s == NULL)
        return -1;
    for (c = 0; c < NCOLS; c++)
        if (strcmp(s, col_names[c]) == 0)
            return c;
    PyErr_Format(PyExc_ValueError, "unknown column %R", name);
    return -1;
}

/* columns() -> {name: None, or why it cannot be measured here}, in report order. */
static PyObject *columns(PyObject *self, PyObject *unused)
{
    PyObject *d = PyDict_New(), *why;
    int c, rc;

    (void)self;
    (void)unused;
    for (c = 0; d != NULL && c < NCOLS; c++) {
        why = cols[c].missing ? PyUnicode_FromString(cols[c].missing) : Py_None;
        rc = why == NULL ? -1 : PyDict_SetItemString(d, col_names[c], why);
        if (why != Py_None)
            Py_XDECREF(why);
        if (rc < 0)
            Py_CLEAR(d);
    }
    return d;
}

/* The timed loop: `calls` calls, nothing else; -1 if one failed.  arc4py's
   column calls its C API table's functions, what capi.h's inline
   functions call. */
static int run_loop(const struct column *col, int u32, unsigned char *buf, size_t size,
                    long calls)
{
    volatile uint32_t sink;
    uint32_t acc = 0;
    long i;
    int bad = 0;

    if (col->rand_bytes != NULL)
        for (i = 0; i < calls; i++)
            bad |= col->rand_bytes(buf, (int)size) != 1;
    else if (u32)
        for (i = 0; i < calls; i++)
            acc ^= col->u32();
    else
        for (i = 0; i < calls; i++)
            col->buf(buf, size);
    sink = acc;
    (void)sink;
    return bad ? -1 : 0;
}

/* run_calls(column, kind, size, calls): `calls` calls of arc4random()
   (kind "u32", size 4) or arc4random_buf(buf, size) ("buf"), timed by the
   caller. */
static PyObject *run_calls(PyObject *self, PyObject *args)
{
    PyObject *name;
    const char *kind;
    Py_ssize_t size;
    long calls;
    unsigned char *buf;
    int c, u32, rc;

    (void)self;
    if (!PyArg_ParseTuple(args, "Usnl", &name, &kind, &size, &calls))
        return NULL;
    if ((c = find_column(name)) < 0)
        return NULL;
    if (cols[c].missing != NULL)
        return PyErr_Format(PyExc_RuntimeError, "%s: %s", col_names[c], cols[c].missing);
    u32 = strcmp(kind, "u32") == 0;
    if ((!u32 && strcmp(kind, "buf") != 0) || (u32 && size != 4))
        return PyErr_Format(PyExc_ValueError, "kind must be 'u32' (size 4) or 'buf'");
    if (size < 0 || size > INT32_MAX || calls < 1)
        return PyErr_Format(PyExc_ValueError, "bad size or call count");
    buf = malloc(size ? (size_t)size : 1);
    if (buf == NULL)
        return PyErr_NoMemory();
    memset(buf, 0, size ? (size_t)size : 1); /* touch the pages before the loop */
    Py_BEGIN_ALLOW_THREADS
    rc = run_loop(&cols[c], u32, buf, (size_t)size, calls);
    Py_END_ALLOW_THREADS
    free(buf);
    if (rc < 0)
        return PyErr_Format(PyExc_RuntimeError, "%s: RAND_bytes failed", col_names[c]);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"columns", columns, METH_NOARGS,
     "{column: None, or why it cannot be measured here}, in report order."},
    {"run_calls", run_calls, METH_VARARGS,
     "run_calls(column, kind, size, calls): that many C calls."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "arc4py.bench._capi_loops",
    "C-level timing loops for arc4py bench --c-api.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__capi_loops(void)
{
    PyObject *m;
    int c;

    if (arc4py_import() < 0)
        return NULL;
    for (c = 0; c < NCOLS; c++)
        load_column(c);
    m = PyModule_Create(&moddef);
#ifdef Py_GIL_DISABLED
    /* No state but cols (read-only) and arc4py's C API (any thread). */
    if (m != NULL && PyUnstable_Module_SetGIL(m, Py_MOD_GIL_NOT_USED) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#endif
    return m;
}
