# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: embedsignature=True, autotestdict=False
"""arc4py's C layers seen from Python: the ChaCha20 cores and the generator.

Thin on purpose: argument checks and conversions here, the work in C, the
GIL released for anything large.  The public names are re-exported by
``arc4py``; import them from there.
"""
cimport cython
from cpython.buffer cimport (PyObject_GetBuffer, PyBuffer_Release,
                             PyBuffer_IsContiguous, PyBUF_FULL_RO,
                             PyBUF_STRIDES)
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

import os as _os
import sys as _sys
from operator import index as _index

from arc4py._buffer_check import (
    refuse_pointer_holders as _refuse_pointer_holders)

from arc4py._cdefs cimport (
    arc4py_rng_stir_all,
    ARC4PY_FORK_VDSO,
    arc4py_chacha20_core,
    arc4py_chacha20_init,
    arc4py_chacha20_cores,
    arc4py_chacha20_find,
    arc4py_chacha20_known_name,
    arc4py_chacha20_is_known,
    arc4py_cpu_features,
    ARC4PY_RNG_BUFFER_BYTES,
    ARC4PY_RNG_DIRECT_BYTES,
    ARC4PY_RNG_RESEED_BYTES,
    ARC4PY_FORK_WIPEONFORK,
    ARC4PY_FORK_ATFORK,
    ARC4PY_DONTDUMP,
    arc4py_rng_api,
    arc4py_bitgen_u64,
    arc4py_bitgen_u32,
    arc4py_bitgen_double,
    ARC4PY_RNG_API_CAPSULE,
    arc4py_rng_select_core,
    arc4py_rng_core_name,
    arc4py_rng_buf,
    arc4py_rng_u32,
    arc4py_rng_u64,
    arc4py_rng_uniform,
    arc4py_rng_stir,
    arc4py_rng_fork_protection,
    arc4py_rng_debug_buffer,
    arc4py_rng_debug_reseeds,
    arc4py_rng_test_hooks,
)
from arc4py._common cimport (NOGIL_BYTES, _fill_raw, _int_arg,
                             _raise_os_error, _size_arg, _u64_to_double)

cdef tuple _known_names():
    cdef size_t i = 0
    names = []
    while arc4py_chacha20_known_name(i) != NULL:
        names.append(arc4py_chacha20_known_name(i).decode("ascii"))
        i += 1
    return tuple(names)

#: Every core in this build, fastest first, from the C table of cores (not
#: all run on every CPU: a core for another architecture is known, never
#: runnable; one left out with ARC4PY_NO_<ISA> is unknown).
ALL_BACKENDS = _known_names()
#: Bytes after which a thread reseeds from the OS at the latest.
RESEED_INTERVAL = ARC4PY_RNG_RESEED_BYTES
#: Bytes of keystream per refill of a thread's buffer.
BUFFER_BYTES = ARC4PY_RNG_BUFFER_BYTES
#: Requests of at least this many bytes skip the buffer (filled directly).
DIRECT_BYTES = ARC4PY_RNG_DIRECT_BYTES


# ---- cores ----------------------------------------------------------------

def backends():
    """The ChaCha20 cores this CPU can run, fastest first.

    Returns a tuple of names from ``"avx512"``, ``"avx2"``, ``"ssse3"``,
    ``"sse2"``, ``"neon"`` and ``"generic"``; ``"generic"`` is always last.
    """
    cdef size_t count, i
    cdef const arc4py_chacha20_core *cores = arc4py_chacha20_cores(&count)
    return tuple(cores[i].name.decode("ascii") for i in range(count))


def backend():
    """The name of the core the generator uses now (see ``backends()``)."""
    return arc4py_rng_core_name().decode("ascii")


def cpu_features():
    """The CPU features the dispatch saw, as a tuple of names."""
    return tuple(arc4py_cpu_features().decode("ascii").split())


cdef const arc4py_chacha20_core *_find_core(object name) except NULL:
    cdef const arc4py_chacha20_core *core
    if not isinstance(name, str):
        raise TypeError(f"backend must be a str, not {type(name).__name__}")
    # (a NUL would end the name early in C: "avx2\0junk" is no core's name)
    encoded = name.encode("ascii", "replace").replace(b"\0", b"?")
    core = arc4py_chacha20_find(encoded)
    if core != NULL:
        return core
    valid = ", ".join(backends())
    if arc4py_chacha20_is_known(encoded):
        raise ValueError(f"backend {name!r} cannot run on this CPU; "
                         f"available here: {valid}")
    raise ValueError(f"unknown backend {name!r}; available here: {valid} "
                     f"(all known: {', '.join(ALL_BACKENDS)})")


def _select_backend(name):
    """Make ``name`` the generator's core (used at import for ARC4PY_BACKEND)."""
    _find_core(name)
    arc4py_rng_select_core(name.encode("ascii"))


cdef bytes _key_bytes(object value, str what, tuple sizes):
    cdef bytes raw
    if isinstance(value, str):
        raise TypeError(f"{what} must be bytes-like, not str")
    try:
        raw = bytes(memoryview(value))
    except TypeError:
        raise TypeError(f"{what} must be bytes-like, not "
                        f"{type(value).__name__}") from None
    if len(raw) not in sizes:
        want = " or ".join(str(s) for s in sizes)
        raise ValueError(f"{what} must be {want} bytes long, not {len(raw)}")
    return raw


cdef const arc4py_chacha20_core *_prepare(object key, object nonce,
                                          object length, object counter,
                                          object backend,
                                          uint32_t *state) except NULL:
    """Check every argument and key state; nothing is allocated yet, so a
    stream the counter cannot cover is a ValueError, never a MemoryError."""
    cdef bytes k = _key_bytes(key, "key", (32,))
    cdef bytes n = _key_bytes(nonce, "nonce", (8, 12))
    cdef const arc4py_chacha20_core *core

    counter = _index(counter)
    if counter < 0:
        raise ValueError(f"counter must be >= 0, not {counter}")
    blocks_needed = (length + 63) // 64
    if len(n) == 12:
        if counter + max(blocks_needed, 1) - 1 > 0xFFFFFFFF:
            raise ValueError(
                "RFC 8439 layout (12-byte nonce): the stream would pass block "
                "2**32 - 1 of its 32-bit counter; use an 8-byte nonce for a "
                "64-bit counter")
    elif counter + max(blocks_needed, 1) - 1 > 0xFFFFFFFFFFFFFFFF:
        raise ValueError("the stream would pass block 2**64 - 1 of the "
                         "64-bit counter")
    if backend is None:
        core = _find_core(backend_name())
    else:
        core = _find_core(backend)
    arc4py_chacha20_init(state, <const uint8_t *>PyBytes_AS_STRING(k),
                         <const uint8_t *>PyBytes_AS_STRING(n), len(n),
                         <uint64_t>counter)
    return core


cdef void _run(const arc4py_chacha20_core *core, uint32_t *state,
               uint8_t *out, size_t length) noexcept:
    """length bytes of keystream to out; the state is wiped after."""
    cdef uint8_t tail[64]
    cdef size_t nblocks = length // 64
    cdef size_t rest = length % 64
    if length >= <size_t>NOGIL_BYTES:
        with nogil:
            core.blocks(state, out, nblocks)
    else:
        core.blocks(state, out, nblocks)
    if rest:
        core.blocks(state, tail, 1)
        memcpy(out + nblocks * 64, tail, rest)
        memset(tail, 0, sizeof(tail))
    memset(state, 0, 16 * sizeof(uint32_t))


cdef backend_name():
    return arc4py_rng_core_name().decode("ascii")


def chacha20_keystream(key, nonce, length, *, counter=0, backend=None):
    """Raw ChaCha20 keystream (no XOR with anything).

    ``key`` is 32 bytes.  An 8-byte ``nonce`` selects the original layout,
    with a 64-bit block counter in state words 12-13; a 12-byte ``nonce`` the
    RFC 8439 layout, with a 32-bit counter in word 12 (``ValueError`` if the
    stream would pass block 2**32 - 1).  ``counter`` is the first block's
    number.  ``backend`` names a core from ``backends()`` (default: the
    generator's); ``ValueError`` if this CPU cannot run it.

    Returns ``length`` bytes.
    """
    cdef uint32_t state[16]
    cdef const arc4py_chacha20_core *core
    length = _index(length)
    if length < 0:
        raise ValueError(f"length must be >= 0, not {length}")
    core = _prepare(key, nonce, length, counter, backend, state)
    try:
        out = PyBytes_FromStringAndSize(NULL, length)
    except BaseException:
        memset(state, 0, sizeof(state))
        raise
    _run(core, state, <uint8_t *>PyBytes_AS_STRING(out), <size_t>length)
    return out


cdef bint _holds_objects(const char *fmt) noexcept:
    """Whether a struct-module format holds 'O' (object) items."""
    cdef bint in_name = False  # struct field names are written :name:
    while fmt[0]:
        if fmt[0] == b':':
            in_name = not in_name
        elif fmt[0] == b'O' and not in_name:
            return True
        fmt += 1
    return False


cdef object _CDATA = None  # ctypes' base class, once ctypes is loaded
cdef object _NDARRAY = None  # numpy.ndarray, once numpy is loaded


cdef int _refuse_ctypes_pointers(object buffer) except -1:
    """ctypes can hide py_object / c_char_p / c_wchar_p behind a plain "B"
    format: find a ctypes exporter (behind memoryviews and numpy arrays)
    and have its type walked.  Cheap for everything else."""
    global _CDATA, _NDARRAY
    cdef int hops
    if _CDATA is None:
        ctypes = _sys.modules.get("ctypes")
        if ctypes is None:  # no ctypes object can exist yet
            return 0
        # a plain type: the ctypes classes' metaclasses make isinstance slow
        _CDATA = ctypes._SimpleCData.__mro__[1]
    if _NDARRAY is None and "numpy" in _sys.modules:
        _NDARRAY = _sys.modules["numpy"].ndarray
    obj = buffer
    for hops in range(64):
        if type(obj) is memoryview:
            obj = obj.obj
        elif (_NDARRAY is not None and isinstance(obj, _NDARRAY)
              and obj.base is not None):
            obj = obj.base
        else:
            break
    if isinstance(obj, _CDATA):
        _refuse_pointer_holders(obj)
    return 0


cdef int _get_writable(object buffer, Py_buffer *view) except -1:
    """Get a writable, C-contiguous view with the contract's errors."""
    _refuse_ctypes_pointers(buffer)
    try:
        PyObject_GetBuffer(buffer, view, PyBUF_FULL_RO)
    except TypeError:
        raise TypeError(f"expected a writable buffer, not "
                        f"{type(buffer).__name__}") from None
    except (ValueError, NotImplementedError):
        # numpy cannot describe some dtypes (datetime64) as a format
        # string; without one they are plain bytes, which is all we need.
        PyObject_GetBuffer(buffer, view, PyBUF_STRIDES)
        # No format to look for objects in (e.g. datetime64 beside an
        # object field): ask numpy's dtype instead.
        if getattr(getattr(buffer, "dtype", None), "hasobject", False):
            PyBuffer_Release(view)
            raise TypeError("cannot fill a buffer of Python objects "
                            "(object dtype): random bytes are not pointers")
    if view.format != NULL and _holds_objects(view.format):
        PyBuffer_Release(view)
        raise TypeError("cannot fill a buffer of Python objects "
                        "(object dtype): random bytes are not pointers")
    if view.readonly:
        PyBuffer_Release(view)
        raise TypeError(f"cannot fill a read-only buffer "
                        f"({type(buffer).__name__})")
    if not PyBuffer_IsContiguous(view, b'C'):
        PyBuffer_Release(view)
        raise ValueError("the buffer must be C-contiguous")
    return 0


def chacha20_keystream_into(key, nonce, buffer, *, counter=0, backend=None):
    """Like ``chacha20_keystream`` but writes ``len(buffer)`` bytes into a
    writable C-contiguous buffer in place; returns the number written."""
    cdef Py_buffer view
    cdef uint32_t state[16]
    cdef const arc4py_chacha20_core *core
    _get_writable(buffer, &view)
    try:
        core = _prepare(key, nonce, view.len, counter, backend, state)
        _run(core, state, <uint8_t *>view.buf, <size_t>view.len)
        return view.len
    finally:
        PyBuffer_Release(&view)


# ---- the generator --------------------------------------------------------

cdef inline object _u32_or_array(object size):
    """The body of arc4random() and random_u32(): one stream, two names."""
    cdef uint32_t r
    cdef int err
    if size is None:
        err = arc4py_rng_u32(&r)
        if err:
            _raise_os_error(err)
        return r
    return _numpy_module().random_u32_array(size)


@cython.binding(False)
def arc4random(size=None):
    """A random ``int`` in [0, 2**32), like BSD's arc4random().

    The same stream as ``random_u32``, and like it takes ``size`` for a
    numpy array.  (The optional argument is also what makes the call fast:
    CPython specialises calls to such functions, not to argument-less ones.)
    """
    return _u32_or_array(size)


@cython.binding(False)
def random_u32(size=None):
    """A random ``int`` in [0, 2**32), or with ``size`` (an int or a tuple)
    a ``numpy.ndarray`` of uint32 of that shape, filled in place."""
    return _u32_or_array(size)


@cython.binding(False)
def random_u64(size=None):
    """A random ``int`` in [0, 2**64), or with ``size`` an ``ndarray`` of
    uint64 of that shape."""
    cdef uint64_t r
    cdef int err
    if size is None:
        err = arc4py_rng_u64(&r)
        if err:
            _raise_os_error(err)
        return r
    return _numpy_module().random_u64_array(size)


cdef object _numpy_mod = None

cdef object _numpy_module():
    global _numpy_mod
    if _numpy_mod is None:
        try:
            import numpy
            from arc4py import _numpy
        except ImportError as exc:
            raise ImportError("this arc4py feature needs numpy: "
                              "pip install 'arc4py[numpy]'") from exc
        _numpy_mod = _numpy
    return _numpy_mod


@cython.binding(False)
def arc4random_buf(n):
    """``n`` random bytes (``n`` an int >= 0)."""
    cdef Py_ssize_t size
    cdef bytes out
    cdef int err
    if type(n) is int and n >= 0:  # the common case, no generic checks
        size = n  # OverflowError past sys.maxsize
    else:
        size = _size_arg(n, "n")
    out = PyBytes_FromStringAndSize(NULL, size)
    if size < NOGIL_BYTES:
        err = arc4py_rng_buf(PyBytes_AS_STRING(out), <size_t>size)
        if err:
            _raise_os_error(err)
    else:
        _fill_raw(arc4py_rng_buf, PyBytes_AS_STRING(out), size)
    return out


def fill(buffer):
    """Fill a writable C-contiguous buffer with random bytes, in place.

    Takes ``bytearray``, ``memoryview``, ``array.array``, ``mmap`` or a
    numpy array of any dtype; returns the number of bytes written.
    ``TypeError`` for a read-only buffer, ``ValueError`` for a
    non-contiguous one.
    """
    cdef Py_buffer view
    _get_writable(buffer, &view)
    try:
        _fill_raw(arc4py_rng_buf, view.buf, view.len)
        return view.len
    finally:
        PyBuffer_Release(&view)


def arc4random_uniform(upper_bound):
    """A uniform ``int`` in [0, upper_bound), 1 <= upper_bound <= 2**32,
    without modulo bias (rejection sampling)."""
    cdef uint32_t r
    cdef int err
    bound = _int_arg(upper_bound, "upper_bound")
    if bound < 1 or bound > 0x100000000:
        raise ValueError(f"upper_bound must be in [1, 2**32], not {bound}")
    err = arc4py_rng_uniform(<uint32_t>(bound & 0xFFFFFFFF), &r)
    if err:
        _raise_os_error(err)
    return r


def randbits(k):
    """An ``int`` with ``k`` random bits (``k`` >= 0)."""
    cdef uint64_t r
    cdef int err
    cdef Py_ssize_t bits = _size_arg(k, "k")
    if bits == 0:
        return 0
    if bits <= 64:
        err = arc4py_rng_u64(&r)
        if err:
            _raise_os_error(err)
        return r >> (64 - bits)
    nbytes = bits // 8 + (bits % 8 != 0)  # (bits + 7) could overflow
    return int.from_bytes(arc4random_buf(nbytes), "little") >> (nbytes * 8 - bits)


def randbelow(n):
    """A uniform ``int`` in [0, n) for any positive int ``n`` (rejection)."""
    n = _int_arg(n, "n")
    if n <= 0:
        raise ValueError(f"n must be > 0, not {n}")
    if n <= 0x100000000:
        return arc4random_uniform(n)
    k = n.bit_length()
    r = randbits(k)
    while r >= n:
        r = randbits(k)
    return r


@cython.binding(False)
@cython.embedsignature(False)
def random():
    # The signature line is written out: without it Python 3.13 reports
    # this no-argument function's signature as (self, /).
    """random()
--

A ``float`` in [0.0, 1.0) with 53 random bits."""
    cdef uint64_t r
    cdef int err = arc4py_rng_u64(&r)
    if err:
        _raise_os_error(err)
    return _u64_to_double(r)


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


# ---- the capsule arc4py._numpy draws through ------------------------------

cdef arc4py_rng_api _api
_api.buf = arc4py_rng_buf
_api.u32 = arc4py_rng_u32
_api.u64 = arc4py_rng_u64
_api.bitgen_u64 = arc4py_bitgen_u64
_api.bitgen_u32 = arc4py_bitgen_u32
_api.bitgen_double = arc4py_bitgen_double
_rng_api = PyCapsule_New(&_api, ARC4PY_RNG_API_CAPSULE, NULL)


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

def _choose_at_import():
    wanted = _os.environ.get("ARC4PY_BACKEND", "")
    if wanted:
        _select_backend(wanted)
    else:
        arc4py_rng_select_core(backends()[0].encode("ascii"))

_choose_at_import()
del _choose_at_import


# ---- C API capsule and fast twins of the hot calls (cbind/pyfast.c) ---------
# _C_API: arc4py/include/arc4py/capi.h's versioned table.  The twins serve
# the common call in C and hand any other to the def above (same signature,
# errors and docstring, with a __text_signature__).
cdef extern from "pyfast.h":
    object arc4py_capi_capsule()
    object arc4py_pyfast_wrap(object def_, object module_name)

_C_API = arc4py_capi_capsule()
arc4random, random_u32, random_u64, arc4random_buf = [
    arc4py_pyfast_wrap(f, __name__)
    for f in (arc4random, random_u32, random_u64, arc4random_buf)]
