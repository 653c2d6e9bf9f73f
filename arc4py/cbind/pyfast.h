/* Glue from arc4py/_core.pyx to arc4py/cbind/pyfast.c (see there). */
#ifndef ARC4PY_PYFAST_H
#define ARC4PY_PYFAST_H
#include <Python.h>
#include "arc4py/capi.h"

/* capi.c's function table for this CPU, the capsule's contents; sets
   *hand_out to the build of its buffered calls ("avx512", "portable"). */
const arc4py_capi *arc4py_capi_provider(const char **hand_out);

/* The capsule ARC4PY_CAPI_CAPSULE over that table (new reference), and
   the name of its hand-out build in *hand_out. */
PyObject *arc4py_capi_capsule(const char **hand_out);
/* A METH_FASTCALL twin of the Cython def `def_` (new reference). */
PyObject *arc4py_pyfast_wrap(PyObject *def_, PyObject *module_name);
/* arc4py.Random's getrandbits and _randbelow as method descriptors of
   `base` (_random.Random), falling back to the two Cython defs given; a
   tuple in that order (new reference).  Called once, at import. */
PyObject *arc4py_random_methods(PyObject *base, PyObject *getrandbits_def,
                                PyObject *randbelow_def);
#endif
