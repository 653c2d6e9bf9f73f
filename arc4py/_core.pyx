# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: embedsignature=False, autotestdict=False
"""arc4py's ChaCha20 cores and C generator seen from Python: the one
extension module they are linked into.

Thin on purpose: argument checks and conversions here, the work in C, the
GIL released for anything large.  The hottest calls are C functions of
their own (arc4py/cbind/module_calls.c, which lists them), added to this
module at import, and ``Random`` is the C base type of ``arc4py.Random``
(its primitives, arc4py/cbind/random_methods.c), as ``_random.Random`` is
the stdlib's.  The public names are re-exported by ``arc4py``; import them
from there.
"""
from cpython.buffer cimport PyBuffer_Release
from libc.stdint cimport uint8_t, uint32_t, uint64_t

import os as _os
import sys as _sys

from arc4py._cdefs cimport (
    arc4py_rng_stir_all,
    ARC4PY_FORK_VDSO,
    ARC4PY_RNG_BUFFER_BYTES,
    ARC4PY_RNG_DIRECT_BYTES,
    ARC4PY_RNG_DIRECT_CHUNK_BYTES,
    ARC4PY_RNG_REKEY_BYTES,
    ARC4PY_RNG_RESEED_BYTES,
    ARC4PY_FORK_WIPEONFORK,
    ARC4PY_FORK_ATFORK,
    ARC4PY_DONTDUMP,
    arc4py_rng_select_core,
    arc4py_rng_core_name,
    arc4py_rng_buf,
    arc4py_rng_uniform,
    arc4py_rng_stir,
    arc4py_rng_fork_protection,
    arc4py_rng_os_facts,
    arc4py_rng_debug_buffer,
    arc4py_rng_debug_reseeds,
    arc4py_rng_test_hooks,
)
from arc4py._common cimport (_fill_raw, _int_arg, _raise_os_error,
                             _size_arg)

# The binding layer's C (arc4py/cbind/cbind.h).
cdef extern from "cbind.h":
    object arc4py_capi_capsule(const char **hand_out)
    int arc4py_add_module_calls(object module) except -1
    object arc4py_numpy_module()
    object arc4py_uniform_array(object size, uint32_t upper_bound)
    object arc4py_array_shape(object size)
    object arc4py_random_type()
    object arc4py_random_bits(Py_ssize_t k)

include "_buffer_check.pxi"
include "_cores.pxi"

#: Bytes after which a thread reseeds from the OS at the latest.
RESEED_INTERVAL = ARC4PY_RNG_RESEED_BYTES
#: Bytes of keystream per refill of a thread's buffer.
BUFFER_BYTES = ARC4PY_RNG_BUFFER_BYTES
#: Requests of at least this many bytes skip the buffer (filled directly).
DIRECT_BYTES = ARC4PY_RNG_DIRECT_BYTES
#: Bytes of each refill that key the next one (for the tests: small
#: requests see BUFFER_BYTES - _REKEY_BYTES).
_REKEY_BYTES = ARC4PY_RNG_REKEY_BYTES
#: Large fills run in chunks of at most this many bytes, each under a new
#: one-time key, with fork and stir(all_threads=True) checked.
DIRECT_CHUNK_BYTES = ARC4PY_RNG_DIRECT_CHUNK_BYTES


# ---- the generator's core --------------------------------------------------

def backend():
    """The name of the core the generator uses now (see ``backends()``)."""
    return arc4py_rng_core_name().decode("ascii")


def _select_backend(name):
    """Make ``name`` the generator's core (used at import for ARC4PY_BACKEND)."""
    _find_core(name)
    arc4py_rng_select_core(name.encode("ascii"))


# ---- the generator --------------------------------------------------------
# The hot calls, in C (arc4py/cbind/module_calls.c lists them).
arc4py_add_module_calls(_sys.modules[__name__])


def fill(buffer):
    """Fill a writable C-contiguous buffer with random bytes, in place.

    Takes ``bytearray``, ``memoryview``, ``array.array``, ``mmap`` or a
    numpy array of any dtype; returns the number of bytes written.
    ``TypeError`` for a read-only buffer, ``ValueError`` for a
    non-contiguous one.

    ``TypeError`` too for memory ctypes reads as pointers (``py_object``,
    ``c_char_p``, ``c_wchar_p``): a ctypes object holding one, reached
    through any views or a class's ``__buffer__``, and memory such an
    object was made over with ``from_buffer()`` or ``from_address()``.
    A fill searches nothing where numpy owns the memory (below), or
    where a ``bytearray``, ``array.array`` or ``mmap`` with no other
    export is filled directly or through one ``memoryview`` that no
    other view shares.  Any other fill (the owner exported elsewhere
    too, as by a ``memoryview`` held; a slice of a view kept elsewhere;
    a numpy array over memory numpy does not own; a class's
    ``__buffer__``) walks every live object the garbage collector tracks
    for such a ctypes object over the memory: such a fill costs
    milliseconds per hundred thousand live objects (about 10 ms at a
    million on CPython 3.13, 20 ms on 3.11, on an AMD EPYC Zen 4), a
    plain one under a microsecond.  Not searched for, as nothing links
    the memory to the object: memory a numpy array owns (numpy does not
    count its exports); memory used through an address taken outside the
    buffer protocol's count, which any write to that memory breaks, the
    stdlib's included (a ``from_address()`` object over a ``bytearray``,
    ``array.array`` or ``mmap`` that nothing else views, a numpy array
    made with ``ndarray(buffer=...)``, which gives its export back at
    once, a ctypes object whose kept view was released); the same pages
    mapped at a second address (a file or shared memory mapped twice);
    objects ``gc.freeze()`` keeps frozen; and a ctypes object another
    thread makes while a large fill writes without the GIL.

    Resizing a numpy array with ``resize(refcheck=False)``, or truncating
    the file under a file-backed ``mmap``, while a fill runs frees or
    unmaps the memory under it: these are the caller's own unsafe
    switches, as they are for the stdlib's writes.
    """
    cdef Py_buffer view
    _get_writable(buffer, &view)
    try:
        _fill_raw(arc4py_rng_buf, view.buf, view.len)
        return view.len
    finally:
        PyBuffer_Release(&view)


def arc4random_uniform(upper_bound, size=None):
    """A uniform ``int`` in [0, upper_bound), 1 <= upper_bound <= 2**32,
    without modulo bias (rejection sampling); with ``size`` (an int or a
    tuple) a ``numpy.ndarray`` of uint32 of that shape.

    Unlike the C function, whose ``arc4random_uniform(0)`` returns 0, a
    bound of 0 is a ``ValueError``: no int lies in [0, 0), and the Python
    call has an exception to say so where C has only a return value.
    """
    cdef uint32_t r
    cdef int err
    bound = _int_arg(upper_bound, "upper_bound")
    if bound < 1 or bound > 0x100000000:
        raise ValueError(f"upper_bound must be in [1, 2**32], not {bound}")
    if size is not None:
        return arc4py_uniform_array(size, <uint32_t>(bound & 0xFFFFFFFF))
    err = arc4py_rng_uniform(<uint32_t>(bound & 0xFFFFFFFF), &r)
    if err:
        _raise_os_error(err)
    return r


def randbits(k):
    """An ``int`` with ``k`` random bits (``k`` >= 0)."""
    return arc4py_random_bits(_size_arg(k, "k"))


#: The C base type of ``arc4py.Random`` (arc4py/_random.pyx): its
#: primitives random, getrandbits, randbytes and _randbelow.
Random = arc4py_random_type()


def _load_numpy():
    """``arc4py._numpy``, loaded on first use: the one loader, whose
    ImportError names the ``arc4py[numpy]`` extra."""
    return arc4py_numpy_module()


def _array_shape(size):
    """``size`` (an int or a sequence of ints) as the shape tuple every
    ``size=`` call reads it as, with numpy's errors: for
    ``BitGenerator.random_raw``, which reads it before it takes its lock."""
    return arc4py_array_shape(size)


def stir(*, all_threads=False):
    """Reseed the calling thread's generator from the OS now.

    With ``all_threads=True`` every other thread's generator also reseeds
    before it hands out another byte (its buffered bytes are discarded):
    the call for snapshot/restore hooks, e.g. AWS Lambda SnapStart's
    after-restore hook or a CRIU restore.  Raises ``OSError`` if the OS
    cannot provide entropy now; the calling thread then gives no output
    until a reseed succeeds, and the other threads still reseed.
    """
    cdef int err
    if all_threads:
        err = arc4py_rng_stir_all()
    else:
        err = arc4py_rng_stir()
    if err:
        _raise_os_error(err)


def fork_protection():
    """The protections in force, as a tuple of names from ``"wipeonfork"``,
    ``"atfork"``, ``"dontdump"`` and ``"vdso"`` (every refill mixes in the
    kernel's vDSO getrandom, which changes when a VM is cloned).  A name is
    listed only if every live thread's state has it."""
    cdef unsigned bits = arc4py_rng_fork_protection()
    names = []
    if bits & ARC4PY_FORK_WIPEONFORK:
        names.append("wipeonfork")
    if bits & ARC4PY_FORK_ATFORK:
        names.append("atfork")
    if bits & ARC4PY_DONTDUMP:
        names.append("dontdump")
    if bits & ARC4PY_FORK_VDSO:
        names.append("vdso")
    return tuple(names)


def _os_facts():
    """What the OS does for the generator, for ``arc4py info``: a dict of
    ``entropy_source`` (the OS call the reads use), ``state_lock`` (the
    call that locked every live thread's state, or None if some state is
    not locked) and ``state_exit_wipe`` (what wipes a state when its thread
    exits).  Draws a byte first, so raises OSError if the OS cannot give
    entropy."""
    cdef const char *entropy_source = NULL
    cdef const char *state_lock = NULL
    cdef const char *exit_wipe = NULL
    cdef int err = arc4py_rng_os_facts(&entropy_source, &state_lock, &exit_wipe)
    if err:
        _raise_os_error(err)
    return {
        "entropy_source": entropy_source.decode(),
        "state_lock": None if state_lock == NULL else state_lock.decode(),
        "state_exit_wipe": exit_wipe.decode(),
    }


# ---- test hooks (only in a build with ARC4PY_TEST_HOOKS=1) ----------------

def _debug_buffer_impl():
    cdef bytearray out = bytearray(ARC4PY_RNG_BUFFER_BYTES)
    cdef size_t left = 0
    if arc4py_rng_debug_buffer(<uint8_t *><char *>out, len(out), &left) != 0:
        raise RuntimeError("no generator state in this thread yet")
    return bytes(out), left


if arc4py_rng_test_hooks:
    _debug_buffer = _debug_buffer_impl
    _debug_reseeds = lambda: arc4py_rng_debug_reseeds()
del _debug_buffer_impl


# ---- core selection at import ----------------------------------------------

# Without ARC4PY_BACKEND the generator runs the dispatch's active core, the
# fastest runnable (chacha20_dispatch.c: the one place the default is
# chosen).  A bad name is kept here and raised by arc4py/__init__.py on
# every import.
_backend_env_error = None
if _os.environ.get("ARC4PY_BACKEND", ""):
    try:
        # the cores' names are lowercase; AVX2 names the same core as avx2
        _select_backend(_os.environ["ARC4PY_BACKEND"].lower())
    except ValueError as _exc:
        _backend_env_error = ValueError(
            f"ARC4PY_BACKEND={_os.environ['ARC4PY_BACKEND']!r} in the "
            f"environment: {_exc}.  Set ARC4PY_BACKEND to one of the cores "
            f"available here, or unset it to use the fastest "
            f"({backends()[0]}).")
        del _exc


# ---- the C API capsule (arc4py/cbind/capi.c) --------------------------------

cdef const char *_hand_out_build = NULL
# include/arc4py/capi.h's versioned table.
_C_API = arc4py_capi_capsule(&_hand_out_build)
# Which build of the table's arc4random_buf and fill this CPU got:
# "avx512" (64-byte moves out of the buffer) or "portable".
_capi_hand_out = _hand_out_build.decode()


# ---- objects every thread reaches (free-threaded builds) --------------------
# Without the GIL, taking and dropping a reference on an object other
# threads also use is an atomic write to one shared counter: a cache line
# every calling thread writes, which made two threads drawing slower than
# one.  CPython spares its own module functions that with deferred
# reference counting, but only on the specialised lookup path, and a
# lookup CPython does not specialise (the first ones, a free-threaded
# build's until it does) takes a real reference on the module's dict and
# on the function, per call.  So these objects are made immortal
# (Py_SET_REFCNT past UINT32_MAX, as documented for free-threaded builds),
# which leaves their counts untouched; they live as long as the process
# anyway.  A GIL build does nothing.
cdef extern from *:
    """
    static void arc4py_share_between_threads(PyObject *op)
    {
    #if defined(Py_GIL_DISABLED) && PY_VERSION_HEX >= 0x030E0000
        /* Only the thread that created op may (Py_SET_REFCNT writes the
           counts non-atomically): the one importing arc4py, here. */
        if (_Py_IsOwnedByCurrentThread(op))
            Py_SET_REFCNT(op, (Py_ssize_t)UINT32_MAX + 1);
        /* Else at least spare the specialised lookups. */
        if (!PyUnstable_IsImmortal(op))
            (void)PyUnstable_Object_EnableDeferredRefcount(op);
    #else
        (void)op;
    #endif
    }

    #if defined(Py_GIL_DISABLED) && PY_VERSION_HEX >= 0x030E0000
    static newfunc arc4py_counted_new; /* the type's own, called first */

    static PyObject *arc4py_deferred_new(PyTypeObject *type, PyObject *args,
                                         PyObject *kwargs)
    {
        PyObject *op = arc4py_counted_new(type, args, kwargs);

        if (op != NULL)
            (void)PyUnstable_Object_EnableDeferredRefcount(op);
        return op;
    }
    #endif

    /* Every instance type makes from now on (its subclasses' too, which
       inherit the slot) counts its references the deferred way; one type
       per process. */
    static int arc4py_defer_instances(PyObject *type)
    {
    #if defined(Py_GIL_DISABLED) && PY_VERSION_HEX >= 0x030E0000
        PyTypeObject *t = (PyTypeObject *)type;

        if (arc4py_counted_new != NULL)
            return t->tp_new == arc4py_deferred_new ? 0 : -1;
        arc4py_counted_new = t->tp_new;
        t->tp_new = arc4py_deferred_new;
        PyType_Modified(t);
    #else
        (void)type;
    #endif
        return 0;
    }
    """
    void arc4py_share_between_threads(object op)
    int arc4py_defer_instances(object type)


def _share_between_threads(*objects):
    """Make module-lifetime ``objects`` cheap to share between threads on
    a free-threaded build (immortal); nothing on a GIL build.  For
    arc4py's own modules, at import only."""
    for op in objects:
        arc4py_share_between_threads(op)


def _defer_instances(type cls):
    """Make every instance of ``cls`` (one class, a subclass of
    ``random.Random`` made in arc4py) cheap to share between threads on a
    free-threaded build: its references are counted the deferred way, as
    CPython counts a ``threading.local``'s, so an instance is freed by the
    cyclic garbage collector once unreachable rather than at once.  Nothing
    on a GIL build.  For arc4py's own classes, at import only."""
    if arc4py_defer_instances(cls) != 0:
        raise RuntimeError("arc4py: only one class's instances are deferred")


#: The public names, which ``arc4py`` re-exports (``from arc4py._core import
#: *``) and ``docs/api.rst`` documents, the generator's in this order.
__all__ = [
    "arc4random", "random_u32", "random_u64", "arc4random_buf", "fill",
    "arc4random_uniform", "randbelow", "randbits", "random", "stir",
    "fork_protection", "backends", "backend", "cpu_features",
    "chacha20_keystream", "chacha20_keystream_into",
]

_share_between_threads(*[globals()[name] for name in __all__])
