# The ChaCha20 cores seen from Python (included by _core.pyx, the one module
# the cores are linked into): which cores exist and run here, and their raw
# keystream (chacha20_keystream, chacha20_keystream_into), which is how the
# tests prove every core right (its buffer checked as fill()'s, in
# _buffer_check.pxi).  The public names are re-exported by arc4py.
from cpython.buffer cimport PyBuffer_Release
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

from operator import index as _index

from arc4py._cdefs cimport (
    arc4py_chacha20_core,
    arc4py_chacha20_init,
    arc4py_chacha20_cores,
    arc4py_chacha20_find,
    arc4py_chacha20_known_name,
    arc4py_chacha20_is_known,
    arc4py_chacha20_left_out,
    arc4py_cpu_features,
    arc4py_chacha20_active,
)
from arc4py._common cimport NOGIL_BYTES

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


cdef dict _left_out():
    cdef size_t i = 0
    cdef const char *name = arc4py_chacha20_left_out(0)
    found = {}
    while name != NULL:
        isa = name.decode("ascii")
        found[isa] = f"left out by name (ARC4PY_NO_{isa.upper()})"
        i += 1
        name = arc4py_chacha20_left_out(i)
    return found

# The cores this build left out, and why: what `arc4py info` and the tests
# read (a core this CPU runs is either built or here).
_not_built = _left_out()
# ---- cores ----------------------------------------------------------------

def backends():
    """The ChaCha20 cores this CPU can run, fastest first.

    Returns a tuple of core names, such as ``("avx2", "ssse3", "sse2",
    "generic")``; ``"generic"`` runs everywhere and is always last.
    """
    cdef size_t count, i
    cdef const arc4py_chacha20_core *cores = arc4py_chacha20_cores(&count)
    return tuple(cores[i].name.decode("ascii") for i in range(count))


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
        core = arc4py_chacha20_active()
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
