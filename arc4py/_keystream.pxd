# What arc4py/_keystream.pyx shares with arc4py/_core.pyx (cimported there).
from arc4py._cdefs cimport arc4py_chacha20_core

# The runnable core called ``name``; TypeError/ValueError naming the valid ones.
cdef const arc4py_chacha20_core *_find_core(object name) except NULL
# A writable, C-contiguous view of ``buffer`` with the contract's errors;
# buffers that hold Python objects or pointers are refused.
cdef int _get_writable(object buffer, Py_buffer *view) except -1
