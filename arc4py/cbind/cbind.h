/* What arc4py/_core.pyx calls in the binding layer's C (arc4py/cbind/). */
#ifndef ARC4PY_CBIND_H
#define ARC4PY_CBIND_H
#include <Python.h>

#include "binding.h"

/* capi.c: the capsule ARC4PY_CAPI_CAPSULE over the C API's table for this
   CPU (new reference); *hand_out is set to the build of its buffered
   calls ("avx512", "portable"). */
PyObject *arc4py_capi_capsule(const char **hand_out);

/* module_calls.c: add its functions (listed at its top) to module; 0, or
   -1 with an exception set. */
int arc4py_add_module_calls(PyObject *module);
/* arrays.c: arc4py._numpy (new reference); NULL with an ImportError
   naming the arc4py[numpy] extra.  The loader of the BitGenerator's
   module. */
PyObject *arc4py_numpy_module(void);
/* arrays.c: a new array of `kind` and shape `size` (an int or a tuple),
   filled in place; numpy's C API loaded on the first call (an ImportError
   naming the extra without numpy).  The one way a size= reaches numpy. */
PyObject *arc4py_sized_draw(enum arc4py_array_kind kind, PyObject *size);
/* arrays.c: a uint32 array of shape `size`, each uniform in
   [0, upper_bound) (0 standing for 2**32). */
PyObject *arc4py_uniform_array(PyObject *size, uint32_t upper_bound);
/* arrays.c: `size` as a shape tuple, with numpy's errors (TypeError for a
   non-integer, ValueError for a negative). */
PyObject *arc4py_array_shape(PyObject *size);

/* random_methods.c: the C base type of arc4py.Random (new reference),
   made once, at import. */
PyObject *arc4py_random_type(void);
/* random_methods.c: `function`(n)'s bytes, for arc4random_buf and
   Random.randbytes (a vectorcall's arguments). */
PyObject *arc4py_bytes_call(const char *function, PyObject *const *args,
                            Py_ssize_t nargs, PyObject *kwnames);
/* random_methods.c: an int of k >= 0 random bits. */
PyObject *arc4py_random_bits(Py_ssize_t k);
/* random_methods.c: a uniform int in [0, n) for an exact int n > 0. */
PyObject *arc4py_randbelow(PyObject *n);
PyObject *arc4py_randbelow_arg(PyObject *arg, const char *what);
#endif
