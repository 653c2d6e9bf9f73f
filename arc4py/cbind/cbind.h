/* What arc4py/_core.pyx calls in the binding layer's C (arc4py/cbind/). */
#ifndef ARC4PY_CBIND_H
#define ARC4PY_CBIND_H
#include <Python.h>

/* capi.c: the capsule ARC4PY_CAPI_CAPSULE over the C API's table for this
   CPU (new reference); *hand_out is set to the build of its buffered
   calls ("avx512", "portable"). */
PyObject *arc4py_capi_capsule(const char **hand_out);

/* module_calls.c: add arc4random, random_u32, random_u64 and
   arc4random_buf to module; 0, or -1 with an exception set. */
int arc4py_add_module_calls(PyObject *module);
/* module_calls.c: arc4py._numpy (new reference), loaded on first call;
   NULL with an ImportError naming the arc4py[numpy] extra. */
PyObject *arc4py_numpy_module(void);

/* random_methods.c: arc4py.Random's getrandbits and _randbelow as method
   descriptors of `base` (_random.Random), falling back to the two Cython
   defs given; a tuple in that order (new reference).  Called once, at
   import. */
PyObject *arc4py_random_methods(PyObject *base, PyObject *getrandbits_def,
                                PyObject *randbelow_def);
#endif
