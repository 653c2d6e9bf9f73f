/*
 * arc4py._bench_capi_c: the C-level rows of `arc4py bench --c-api`.
 *
 * Times C calls in a compiled loop, the way the C library's bench-arc4random
 * does, for arc4py's C API (through its capsule, as any extension sees it)
 * and for the peers, each loaded with dlopen() at run time so that a missing
 * library is a skipped column, not a build failure:
 *
 *   libc     arc4random / arc4random_buf from libc.so.6 (glibc >= 2.36)
 *   libbsd   arc4random / arc4random_buf from libbsd.so.0 (OpenBSD's code)
 *   openssl  RAND_bytes from libcrypto.so.3 (4 bytes for the arc4random row)
 *
 * Python (arc4py/_bench_capi.py) chooses the call counts and repeats; this
 * module only runs one timed loop per call, with the GIL released.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arc4py/capi.h"

typedef uint32_t (*u32_fn)(void);
typedef void (*buf_fn)(void *, size_t);
typedef int (*rand_bytes_fn)(unsigned char *, int);

enum { COL_ARC4PY, COL_LIBC, COL_LIBBSD, COL_OPENSSL, NCOLS };

static const char *const col_names[NCOLS] = {"arc4py", "libc", "libbsd", "openssl"};

struct column {
    int tried;
    const char *missing; /* why the column is skipped, or NULL */
    u32_fn u32;
    buf_fn buf;
    rand_bytes_fn rand_bytes;
};

/* Filled in on first use, under load_lock: without the GIL two threads
   may ask for a column at once, and one must not see `tried` before the
   function pointers.  Read-only once filled. */
static struct column cols[NCOLS];
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static void load_column_locked(int c)
{
    struct column *col = &cols[c];
    void *h;

    if (col->tried)
        return;
    col->tried = 1;
    switch (c) {
    case COL_ARC4PY: /* called inline in run_loop, as an extension would */
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

static void load_column(int c)
{
    pthread_mutex_lock(&load_lock);
    load_column_locked(c);
    pthread_mutex_unlock(&load_lock);
}

static int find_column(PyObject *name)
{
    const char *s = PyUnicode_AsUTF8(name);
    int c;

    if (s == NULL)
        return -1;
    for (c = 0; c < NCOLS; c++)
        if (strcmp(s, col_names[c]) == 0) {
            load_column(c);
            return c;
        }
    PyErr_Format(PyExc_ValueError, "unknown column %R", name);
    return -1;
}

/* columns() -> the column names, in report order. */
static PyObject *columns(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return Py_BuildValue("(ssss)", col_names[0], col_names[1], col_names[2],
                         col_names[3]);
}

/* missing(column) -> None, or why the column cannot be measured here. */
static PyObject *missing(PyObject *self, PyObject *name)
{
    int c = find_column(name);

    (void)self;
    if (c < 0)
        return NULL;
    if (cols[c].missing == NULL)
        Py_RETURN_NONE;
    return PyUnicode_FromString(cols[c].missing);
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The timed loops: `calls` calls, nothing else. 0 or -1 (a failed call). */
static int run_loop(int c, int u32, unsigned char *buf, size_t size,
                    long calls, double *elapsed)
{
    const struct column *col = &cols[c];
    volatile uint32_t sink = 0;
    uint32_t acc = 0;
    double t0;
    long i;
    int bad = 0;

    t0 = now();
    if (c == COL_ARC4PY) {
        /* capi.h's inline functions: one indirect call into arc4py. */
        if (u32)
            for (i = 0; i < calls; i++)
                acc ^= arc4py_arc4random();
        else
            for (i = 0; i < calls; i++)
                arc4py_arc4random_buf(buf, size);
    } else if (col->rand_bytes != NULL) {
        for (i = 0; i < calls; i++)
            bad |= col->rand_bytes(buf, (int)size) != 1;
    } else if (u32) {
        for (i = 0; i < calls; i++)
            acc ^= col->u32();
    } else {
        for (i = 0; i < calls; i++)
            col->buf(buf, size);
    }
    *elapsed = now() - t0;
    sink = acc;
    (void)sink;
    return bad ? -1 : 0;
}

/* time_calls(column, kind, size, calls) -> seconds for `calls` calls of
   arc4random() (kind "u32", size 4) or arc4random_buf(buf, size) ("buf"). */
static PyObject *time_calls(PyObject *self, PyObject *args)
{
    PyObject *name;
    const char *kind;
    Py_ssize_t size;
    long calls;
    unsigned char *buf;
    double elapsed = 0;
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
    memset(buf, 0, size ? (size_t)size : 1); /* touch the pages before timing */
    Py_BEGIN_ALLOW_THREADS
    rc = run_loop(c, u32, buf, (size_t)size, calls, &elapsed);
    Py_END_ALLOW_THREADS
    free(buf);
    if (rc < 0)
        return PyErr_Format(PyExc_RuntimeError, "%s: RAND_bytes failed", col_names[c]);
    return PyFloat_FromDouble(elapsed);
}

static PyMethodDef methods[] = {
    {"columns", columns, METH_NOARGS, "The column names, in report order."},
    {"missing", missing, METH_O, "None, or why a column cannot be measured."},
    {"time_calls", time_calls, METH_VARARGS,
     "time_calls(column, kind, size, calls) -> seconds for that many C calls."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "arc4py._bench_capi_c",
    "C-level timing loops for arc4py bench --c-api.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__bench_capi_c(void)
{
    PyObject *m;

    if (arc4py_import() < 0)
        return NULL;
    m = PyModule_Create(&moddef);
#ifdef Py_GIL_DISABLED
    /* No state but cols (locked above) and arc4py's C API (any thread). */
    if (m != NULL && PyUnstable_Module_SetGIL(m, Py_MOD_GIL_NOT_USED) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#endif
    return m;
}
