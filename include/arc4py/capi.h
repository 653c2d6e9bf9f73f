/*
 * arc4py's C API, for C and Cython extension modules.
 *
 * Build with include_dirs=[arc4py.get_include()] and, once per C file that
 * uses it (normally in the module's init function, with the GIL held):
 *
 *     #include <Python.h>
 *     #include "arc4py/capi.h"
 *
 *     PyMODINIT_FUNC PyInit_mymod(void)
 *     {
 *         if (arc4py_import() < 0)
 *             return NULL;                  (ImportError is set)
 *         ...
 *     }
 *
 * after which every function below may be called from any thread, without
 * the GIL.  They draw from the calling thread's arc4py generator: the same
 * stream as arc4py.arc4random() and friends in that thread.
 *
 *   uint32_t arc4py_arc4random(void);
 *   void     arc4py_arc4random_buf(void *buf, size_t n);
 *   uint32_t arc4py_arc4random_uniform(uint32_t upper_bound);
 *       The BSD/glibc contract: they cannot fail.  If the OS cannot provide
 *       entropy they print a message to stderr and abort() the process
 *       rather than return numbers that are not random.  uniform() is
 *       unbiased (rejection sampling); upper_bound 0 and 1 give 0.
 *   int      arc4py_fill(void *buf, size_t n);
 *       0, or an errno value (the OS could not provide entropy; EAGAIN:
 *       forks or stir_all calls during it made it be drawn again eight
 *       times) with buf wiped to zeros.
 *   int      arc4py_random_u32(uint32_t *out);
 *   int      arc4py_random_u64(uint64_t *out);
 *       (version 2) the same contract as fill(), for one number; ENOSYS
 *       from an arc4py whose table is version 1.
 *
 * A numpy bit generator written in C can take the table's bitgen_u64,
 * bitgen_u32 and bitgen_double (version 2: check table->size against
 * ARC4PY_CAPI_V2_SIZE) for its bitgen_t, as arc4py.BitGenerator does.
 *
 * From a signal handler: the six functions above may be called from a POSIX signal
 * handler (and its nested handlers) of a thread that has drawn before
 * outside one (its state exists: making a state allocates, which a handler
 * must not).  A call that interrupts a draw of its own thread takes its
 * bytes straight from the OS (getrandom/getentropy: async-signal-safe),
 * never from the interrupted call's buffer, so both get distinct bytes.
 * The same holds for a call from a pthread_atfork handler inside fork().
 * A handler that leaves an interrupted fill by siglongjmp (a fault in its
 * memory) should restore the signal mask (sigsetjmp(env, 1)); the thread's
 * next call outside a handler finds the abandoned state and reseeds it.
 * Nothing else of arc4py (Python, stir, the numpy bit generator's methods)
 * may be called from a signal handler.  OpenBSD's and glibc's arc4random
 * promise nothing here.
 *
 * The functions are reached through one capsule, ARC4PY_CAPI_CAPSULE, that
 * holds a table whose first field is its size in bytes and second its
 * version: later arc4py versions only append fields, so an extension built
 * against this header keeps working with any newer arc4py.
 *
 * The table pointer is static: each C file (translation unit) that calls
 * these functions must call arc4py_import() once itself.  Calling one of
 * them before arc4py_import() succeeded aborts with a message.
 */
#ifndef ARC4PY_CAPI_H
#define ARC4PY_CAPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "module.attribute", as PyCapsule_Import() wants it. */
#define ARC4PY_CAPI_CAPSULE "arc4py._core._C_API"
/* Version 1: the four BSD-style functions.  Version 2 appends the
   generator's errno-returning scalars and numpy's bitgen_t functions. */
#define ARC4PY_CAPI_VERSION 2

typedef struct arc4py_capi {
    size_t size;          /* sizeof the provider's table: grows with fields */
    unsigned int version; /* ARC4PY_CAPI_VERSION of the provider */
    uint32_t (*arc4random)(void);
    void (*arc4random_buf)(void *buf, size_t n);
    uint32_t (*arc4random_uniform)(uint32_t upper_bound);
    int (*fill)(void *buf, size_t n);
    /* Version 2.  0, or an errno value with *out set to 0. */
    int (*random_u32)(uint32_t *out);
    int (*random_u64)(uint64_t *out);
    /* numpy's bitgen_t signatures (next_uint64, next_uint32, next_double;
       the argument is unused): they cannot report an error, so they abort()
       with a message when the OS cannot provide entropy. */
    uint64_t (*bitgen_u64)(void *unused);
    uint32_t (*bitgen_u32)(void *unused);
    double (*bitgen_double)(void *unused);
    /* Later versions append fields here, never reorder. */
} arc4py_capi;

/* The smallest table that has every version-1 field, every version-2 one. */
#define ARC4PY_CAPI_V1_SIZE (offsetof(arc4py_capi, fill) + sizeof(void *))
#define ARC4PY_CAPI_V2_SIZE \
    (offsetof(arc4py_capi, bitgen_double) + sizeof(void *))

/*
 * Everything below is for consumers (the provider, arc4py._core, defines
 * ARC4PY_CAPI_PROVIDER and sees only the table type).  It needs Python.h,
 * which must come first anyway.
 */
#ifndef ARC4PY_CAPI_PROVIDER
#include <Python.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__GNUC__)
#define ARC4PY_CAPI_UNUSED __attribute__((unused))
#else
#define ARC4PY_CAPI_UNUSED
#endif

static const arc4py_capi *arc4py_capi_table ARC4PY_CAPI_UNUSED = NULL;

/* Replace the current exception with an ImportError that quotes it. */
static inline void arc4py_capi_as_import_error(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *cause = PyErr_GetRaisedException();
#else
    PyObject *type, *cause, *tb;

    PyErr_Fetch(&type, &cause, &tb);
    PyErr_NormalizeException(&type, &cause, &tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
#endif
    PyErr_Format(PyExc_ImportError, "arc4py's C API (%s) is not available: "
                 "%S", ARC4PY_CAPI_CAPSULE, cause ? cause : Py_None);
    Py_XDECREF(cause);
}

/* Import arc4py and fetch its table: 0, or -1 with ImportError set. */
static inline int arc4py_import(void)
{
    const arc4py_capi *table;

    if (arc4py_capi_table != NULL)
        return 0;
    table = (const arc4py_capi *)PyCapsule_Import(ARC4PY_CAPI_CAPSULE, 0);
    if (table == NULL) {
        /* An ImportError already says what was missing; anything else
           (arc4py failed to import, no capsule) becomes one. */
        if (!PyErr_ExceptionMatches(PyExc_ImportError))
            arc4py_capi_as_import_error();
        return -1;
    }
    if (table->size < ARC4PY_CAPI_V1_SIZE || table->version < 1) {
        PyErr_Format(PyExc_ImportError,
                     "arc4py's C API table is too small (size %zu, version "
                     "%u); this extension needs version %d",
                     table->size, table->version, ARC4PY_CAPI_VERSION);
        return -1;
    }
    arc4py_capi_table = table;
    return 0;
}

static inline const arc4py_capi *arc4py_capi_get(void)
{
    if (arc4py_capi_table == NULL) {
        fprintf(stderr, "arc4py: a C API function was called before "
                "arc4py_import() (import_arc4py() in Cython) succeeded in "
                "this C file; aborting\n");
        fflush(stderr);
        abort();
    }
    return arc4py_capi_table;
}

static inline uint32_t arc4py_arc4random(void)
{
    return arc4py_capi_get()->arc4random();
}

static inline void arc4py_arc4random_buf(void *buf, size_t n)
{
    arc4py_capi_get()->arc4random_buf(buf, n);
}

static inline uint32_t arc4py_arc4random_uniform(uint32_t upper_bound)
{
    return arc4py_capi_get()->arc4random_uniform(upper_bound);
}

static inline int arc4py_fill(void *buf, size_t n)
{
    return arc4py_capi_get()->fill(buf, n);
}

/* Version 2: ENOSYS (and *out 0) from an arc4py older than this header. */
static inline int arc4py_random_u32(uint32_t *out)
{
    const arc4py_capi *t = arc4py_capi_get();

    if (t->size < ARC4PY_CAPI_V2_SIZE) {
        *out = 0;
        return ENOSYS;
    }
    return t->random_u32(out);
}

static inline int arc4py_random_u64(uint64_t *out)
{
    const arc4py_capi *t = arc4py_capi_get();

    if (t->size < ARC4PY_CAPI_V2_SIZE) {
        *out = 0;
        return ENOSYS;
    }
    return t->random_u64(out);
}

#endif /* ARC4PY_CAPI_PROVIDER */

#ifdef __cplusplus
}
#endif
#endif /* ARC4PY_CAPI_H */
