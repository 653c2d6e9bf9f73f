# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: embedsignature=False, autotestdict=False
"""arc4py's numpy side: a ``numpy.random.BitGenerator``, the
``Generator`` over it and ``default_rng``.

Loaded on first use by ``arc4py`` (numpy is needed to build arc4py, not to
import it; the ``size=`` arrays are made by ``arc4py._core``'s C, which
loads numpy's C API itself).  The bit generator draws from the same
per-thread C generator as ``arc4py._core``, through its C API's table (the
capsule ``arc4py._core._C_API``), so there is one state per OS thread
whichever extension module asks.  Import the public names from ``arc4py``.
"""
from libc.stdint cimport uint64_t
from numpy.random cimport BitGenerator as _NumpyBitGenerator

from numpy.random import Generator as _NumpyGenerator
from numpy.random.bit_generator import SeedlessSeedSequence as _Seedless

from arc4py._core import (_C_API, _array_shape,
                          arc4random_buf as _arc4random_buf,
                          random_u64 as _random_u64)

from arc4py._cdefs cimport arc4py_capi
from arc4py._common cimport (_generator_table, _int_arg, _raise_os_error,
                             _size_arg)

# The generator of arc4py._core; every draw below goes through it.
cdef const arc4py_capi *_api = _generator_table(_C_API)


# ---- numpy's bitgen_t -----------------------------------------------------------

cdef class _CoreBitGenerator(_NumpyBitGenerator):
    """BitGenerator()

    A ``numpy.random.BitGenerator`` drawing from arc4py's CSPRNG.

    ``numpy.random.Generator(arc4py.BitGenerator())`` (or
    ``arc4py.default_rng()``) gives every numpy distribution, each drawn
    from the calling thread's own ChaCha20 state: the same per-thread,
    fast-key-erasure, fork-safe generator as ``arc4py.arc4random()``.
    Each bitgen_t function (``next_uint64``, ``next_uint32``,
    ``next_double`` with 53 random bits, ``next_raw`` = ``next_uint64``)
    is one call into that generator, so the object itself holds no random
    state and any number of them may exist in any number of threads.

    Seeding
        None.  ``seed`` may be ``None`` or a seed sequence that carries no
        seed (``numpy.random.bit_generator.SeedlessSeedSequence``, which
        is what ``seed_seq`` is): numpy's own protocol,
        ``type(bg)(bg.seed_seq)``, which ``spawn`` and libraries such as
        scipy use, gives a new generator.  A real seed (an int, bytes, an
        array, a ``SeedSequence``) raises ``TypeError``: a CSPRNG seeded
        by the caller would be reproducible, which is what it must not be.
        Use ``numpy.random.default_rng(seed)`` or
        ``numpy.random.PCG64(seed)`` for a reproducible stream.

    State
        ``state`` is ``{'bit_generator': 'arc4py.BitGenerator',
        'state': None}``: there is nothing that could reproduce the output.
        As with numpy's own bit generators, setting a non-dict raises
        ``TypeError`` and a dict of another bit generator ``ValueError``;
        arc4py's own state dict is accepted and changes nothing (which is
        what ``numpy.random.seed()`` and unpickling a ``RandomState`` do).

    Copying and pickling
        ``copy.copy``, ``copy.deepcopy`` and ``pickle`` (and so
        ``multiprocessing``) give a new, independent ``BitGenerator``; no
        two of them ever share a stream.  The same holds for ``spawn(n)``,
        ``jumped()`` and for a ``Generator`` or ``RandomState`` over this
        class (a ``RandomState`` copy keeps only numpy's legacy spare
        normal, if the original held one; ``Generator`` keeps none).  The
        same spare survives ``fork()``: a ``RandomState`` that held one
        when the process forked hands that value out first in parent and
        child alike.  It is numpy's cache, inside the ``RandomState``
        (arc4py's own state reseeds in the child); use ``Generator``,
        which has no such cache, or draw once after forking to drop it.
        Two objects never pickle alike (a random tag, which seeds
        nothing), so libraries that name work by its pickle, such as
        dask, never take two generators for one.

    OS entropy failure
        The bitgen_t functions numpy calls cannot report an error.  If the
        OS fails to provide entropy while one of them reseeds (a failed
        ``getrandom(2)`` beyond ``EINTR``/``ENOSYS``, which practically
        never happens), the process writes a message to stderr and calls
        ``abort()``: returning a stale or zero value would be silent
        non-randomness.  ``random_raw()`` and the array functions do not
        abort; they raise ``OSError``.

    Attributes
    ----------
    lock : threading.Lock or threading.RLock
        Set up by numpy's base class (a ``Lock`` on numpy 1.x, an ``RLock``
        on numpy 2); held by ``Generator`` and by
        ``random_raw`` as numpy's bit generators do, so code that holds it
        to keep other users out works unchanged.  The draws themselves need
        no lock (each thread has its own state).
    capsule : PyCapsule
        numpy's ``"BitGenerator"`` capsule holding this object's bitgen_t.
    """

    cdef str _pickle_tag  # see __reduce__

    def __cinit__(self, *args, **kwargs):
        # Valid from allocation on, even if __init__ is never run.
        self._install()

    cdef void _install(self) noexcept:
        # Straight into the C generator: no adapter between numpy and it.
        self._bitgen.state = <void *>_api
        self._bitgen.next_uint64 = _api.bitgen_u64
        self._bitgen.next_uint32 = _api.bitgen_u32
        self._bitgen.next_double = _api.bitgen_double
        self._bitgen.next_raw = _api.bitgen_u64

    def __init__(self, seed=None):
        if seed is None:
            # No OS entropy spent on a seed nobody uses.
            seed = _Seedless()
        elif not isinstance(seed, _Seedless):
            _refuse_seed("arc4py.BitGenerator", seed)
        super().__init__(seed)
        # Again: the base __init__ resets the bitgen_t's state pointer.
        self._install()

    def __repr__(self):
        return f"<arc4py.BitGenerator object at {id(self):#x}>"

    def __reduce__(self):
        # Nothing to carry over: a copy is a new, independent generator.
        # numpy 1.x's RandomState/Generator pickling reads this as
        # (ctor, (name, ...), state) and calls ctor(name): keep that shape.
        # The tag, random and drawn once per object, seeds nothing: it
        # keeps two generators' pickles apart for libraries that name work
        # by its arguments' pickles (dask's tokenize), which would
        # otherwise take two generators for one and compute once.
        if self._pickle_tag is None:
            self._pickle_tag = _arc4random_buf(16).hex()
        return (_bit_generator_ctor, (_STATE_NAME, self._pickle_tag), None)

    @property
    def state(self):
        """``{'bit_generator': 'arc4py.BitGenerator', 'state': None}``:
        a CSPRNG has no state that could be saved and restored.  Setting a
        non-dict raises ``TypeError``, another generator's state
        ``ValueError``; this dict is accepted and changes nothing."""
        return {"bit_generator": _STATE_NAME, "state": None}

    @state.setter
    def state(self, value):
        if not isinstance(value, dict):
            raise TypeError(f"state must be a dict, not "
                            f"{type(value).__name__}")
        if value.get("bit_generator") != _STATE_NAME:
            got = ("has no 'bit_generator' key" if "bit_generator" not in value
                   else f"is for {value['bit_generator']!r}")
            # numpy's own wording ("state must be for a ..."), which its
            # tests and RandomState.set_state's callers match
            raise ValueError(f"state must be for an {_STATE_NAME} "
                             f"({self.state!r}); this one {got}")
        if value.get("state") is not None:
            raise ValueError(f"a {_STATE_NAME} state holds nothing "
                             f"('state': None), not {value['state']!r}")
        # Nothing to restore: the output can never be reproduced.

    def spawn(self, n_children):
        """A list of ``n_children`` new, independent ``BitGenerator`` s, as
        numpy's ``BitGenerator.spawn`` (and so ``Generator.spawn``)."""
        return [type(self)() for _ in range(_size_arg(n_children, "n_children"))]

    def jumped(self, jumps=1):
        """A new, independent ``BitGenerator``.

        numpy's ``jumped`` returns a generator whose stream does not
        overlap this one's.  Here that holds for any new generator:
        neither object holds a position in a stream; each draw takes
        ChaCha20 keystream that the calling thread's state has never
        handed out before (and erases the key it came from), so no
        keystream handed out through one is ever handed out again through
        the other, however many draws either makes.  ``jumps`` (an int
        >= 0) is there for numpy's signature and changes nothing.
        """
        if _int_arg(jumps, "jumps") < 0:
            raise ValueError(f"jumps must be non-negative, not {jumps}")
        return type(self)()

    def random_raw(self, size=None, output=True):
        """Raw uint64 output: an ``int`` in [0, 2**64) when ``size`` is
        ``None``, else a new uint64 ``ndarray`` of shape ``size`` filled by
        one call into the generator.  With ``output=False`` the numbers are
        drawn and ``None`` is returned (numpy's benchmarking convention).
        Raises ``OSError`` if the OS cannot provide entropy."""
        cdef uint64_t r
        cdef int err
        # size is parsed before the lock is taken: its __index__ may run
        # Python that draws through this bit generator (numpy 1.x's lock is
        # a plain Lock, which would deadlock).
        cdef tuple shape = None if size is None else _array_shape(size)
        with self.lock:  # as numpy's bit generators do
            if shape is None:
                err = _api.random_u64(&r)
                if err:
                    _raise_os_error(err)
                return r if output else None
            out = _random_u64(size=shape)
        return out if output else None


class BitGenerator(_CoreBitGenerator):
    __doc__ = _CoreBitGenerator.__doc__
    __slots__ = ()


# numpy names the bit generator of a Generator or RandomState by its
# class's __name__ ("Generator(PCG64)"), which a compiled class cannot
# change: this one's says whose it is, "Generator(arc4py.BitGenerator)".
BitGenerator.__name__ = "arc4py.BitGenerator"

_STATE_NAME = BitGenerator.__name__


def _bit_generator_ctor(name=_STATE_NAME, tag=None):
    """Pickling helper: a new, independent ``BitGenerator`` (nothing of
    the pickled one is carried over; ``tag`` only told pickles apart)."""
    if name != _STATE_NAME:
        raise ValueError(f"{name!r} is not {_STATE_NAME}")
    return BitGenerator()


def _refuse_seed(what, seed):
    # The type only: a seed can be a large array or sequence.
    raise TypeError(
        f"{what} cannot be seeded (seed must be None or a seedless seed "
        f"sequence, not {type(seed).__name__}): it is a CSPRNG that seeds "
        f"itself from the OS, and a stream a seed could reproduce would not "
        f"be secret.  For a reproducible stream use "
        f"numpy.random.default_rng(seed) or numpy.random.PCG64(seed).")


class Generator(_NumpyGenerator):
    """The ``numpy.random.Generator`` that ``arc4py.default_rng()`` returns:
    numpy's, over an ``arc4py.BitGenerator``, with pickling that gives a
    new generator (nothing to replay)."""

    def __reduce__(self):
        # The bit generator pickles as a new one (and keeps pickles of two
        # generators apart).
        return (Generator, (self.bit_generator,))


def default_rng(seed=None):
    """What ``arc4py.default_rng`` returns (see its docstring)."""
    if isinstance(seed, _CoreBitGenerator):
        return Generator(seed)
    if isinstance(seed, _NumpyGenerator) and isinstance(seed.bit_generator,
                                                        _CoreBitGenerator):
        return seed
    if seed is not None and not isinstance(seed, _Seedless):
        _refuse_seed("arc4py.default_rng", seed)
    return Generator(BitGenerator(seed))
