"""arc4py: an arc4random-style ChaCha20 CSPRNG, as fast as a non-cryptographic one.

Every call draws from the calling thread's own ChaCha20 state, seeded from
the OS, rekeyed after every refill (fast key erasure), reseeded after at most
1 MiB and in every forked child.  Use it where you would use ``os.urandom``,
``secrets`` or ``random.SystemRandom``::

    >>> import arc4py
    >>> arc4py.arc4random_uniform(6) + 1          # a die roll
    >>> arc4py.token_urlsafe()                     # a session token
    >>> arc4py.Random().shuffle(cards)             # the random.Random API
    >>> numpy.random.Generator(arc4py.BitGenerator()).normal(size=10)

numpy is optional: ``BitGenerator``, ``default_rng`` and the ``size=``
forms of ``random_u32``/``random_u64`` need it (``pip install 'arc4py[numpy]'``).
"""
import base64 as _base64
import random as _random
import sys as _sys
from hmac import compare_digest

from arc4py._core import (
    arc4random,
    arc4random_buf,
    arc4random_uniform,
    backend,
    backends,
    chacha20_keystream,
    chacha20_keystream_into,
    cpu_features,
    fill,
    fork_protection,
    randbelow,
    randbits,
    random,
    random_u32,
    random_u64,
    stir,
)

__version__ = "0.1.0"

__all__ = [
    "BitGenerator",
    "Random",
    "arc4random",
    "arc4random_buf",
    "arc4random_uniform",
    "backend",
    "backends",
    "chacha20_keystream",
    "chacha20_keystream_into",
    "choice",
    "compare_digest",
    "cpu_features",
    "default_rng",
    "fill",
    "fork_protection",
    "get_include",
    "randbelow",
    "randbits",
    "random",
    "random_u32",
    "random_u64",
    "stir",
    "token_bytes",
    "token_hex",
    "token_urlsafe",
]

#: Bytes in a token when ``nbytes`` is not given (as the ``secrets`` module).
DEFAULT_ENTROPY = 32


# ---- secrets-style helpers --------------------------------------------------

def token_bytes(nbytes=None):
    """A random byte string of ``nbytes`` bytes (default 32), like
    ``secrets.token_bytes``."""
    if nbytes is None:
        nbytes = DEFAULT_ENTROPY
    return arc4random_buf(nbytes)


def token_hex(nbytes=None):
    """A random text string of ``2 * nbytes`` hex digits (default 32 bytes),
    like ``secrets.token_hex``."""
    return token_bytes(nbytes).hex()


def token_urlsafe(nbytes=None):
    """A random URL-safe Base64 text string of ``nbytes`` bytes (default 32),
    unpadded, like ``secrets.token_urlsafe``."""
    return _base64.urlsafe_b64encode(token_bytes(nbytes)).rstrip(b"=").decode("ascii")


def choice(seq):
    """A random element of the non-empty sequence ``seq``, like
    ``secrets.choice`` (``IndexError`` if it is empty)."""
    n = len(seq)
    if n == 0:
        raise IndexError("cannot choose from an empty sequence")
    return seq[randbelow(n)]


# ---- random.Random drop-in --------------------------------------------------

from arc4py import _random_methods as _methods  # noqa: E402
from arc4py._core import _random_method_descriptors  # noqa: E402


class Random(_random.Random):
    """A ``random.Random`` whose every method draws from arc4py's CSPRNG.

    Like ``random.SystemRandom``: ``random()``, ``getrandbits()`` and
    ``randbytes()`` come from arc4py, and every other method of the stdlib
    class (``randrange``, ``shuffle``, ``sample``, ``choices``, ``gauss``, ...)
    is built on them.  There is no state to seed or save: ``seed()`` is
    ignored, ``getstate()`` and ``setstate()`` raise ``NotImplementedError``.
    """

    # random, getrandbits and _randbelow are C method descriptors of the
    # stdlib's C base class, as the Mersenne Twister's own are: CPython
    # specialises calls to those (arc4py/cbind/pyfast.c).  The others are
    # binding Cython functions taking ``self``, methods like any other.
    random, getrandbits, _randbelow = _random_method_descriptors(
        _random.Random.__base__, _methods.getrandbits, _methods._randbelow)
    randbytes = _methods.randbytes
    # The stdlib's distributions, run in C on draws straight from the
    # generator (for a subclass, and for arguments other than plain numbers,
    # the stdlib's own code runs).  gauss() keeps no second value in the
    # instance, where a fork or a second thread would see it again.
    uniform = _methods.uniform
    triangular = _methods.triangular
    lognormvariate = _methods.lognormvariate
    vonmisesvariate = _methods.vonmisesvariate
    gammavariate = _methods.gammavariate
    betavariate = _methods.betavariate
    paretovariate = _methods.paretovariate
    weibullvariate = _methods.weibullvariate
    choices = _methods.choices
    if _sys.version_info >= (3, 11):  # mu=0.0, sigma=1.0 from 3.11
        normalvariate = _methods.normalvariate
        gauss = _methods.gauss
    else:
        normalvariate = _methods._normalvariate_no_defaults
        gauss = _methods._gauss_no_defaults
    if _sys.version_info >= (3, 12):  # lambd=1.0 from 3.12
        expovariate = _methods.expovariate
    else:
        expovariate = _methods._expovariate_no_default

    def seed(self, *args, **kwds):
        """Does nothing: arc4py seeds itself from the OS."""
        return None

    def _notimplemented(self, *args, **kwds):
        raise NotImplementedError("arc4py.Random has no state to save or restore")

    getstate = setstate = _notimplemented


_FAST_METHODS = ("randbytes", "uniform",
                 "triangular", "normalvariate", "gauss", "lognormvariate",
                 "expovariate", "vonmisesvariate", "gammavariate",
                 "betavariate", "paretovariate", "weibullvariate", "choices")
for _name in _FAST_METHODS:
    _method = getattr(Random, _name)
    _method.__name__ = _name
    _method.__qualname__ = "Random." + _name
_methods._serve(Random)
del _name, _method, _FAST_METHODS, _random_method_descriptors


# ---- C API --------------------------------------------------------------------

def get_include():
    """The directory holding ``arc4py/capi.h``, for ``include_dirs`` when
    building a C or Cython extension against arc4py's C API (as
    ``numpy.get_include()``)."""
    import os
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")


# ---- numpy (loaded on first use) --------------------------------------------

def _numpy_module():
    try:
        import numpy  # noqa: F401
    except ImportError:
        raise ImportError("this arc4py feature needs numpy: "
                          "pip install 'arc4py[numpy]'") from None
    from arc4py import _numpy
    return _numpy


def default_rng():
    """A ``numpy.random.Generator`` over a new ``arc4py.BitGenerator``:
    every numpy distribution, drawn from the CSPRNG."""
    return _numpy_module().default_rng()


def __getattr__(name):
    # BitGenerator is a numpy class: resolve it only when asked for.
    if name == "BitGenerator":
        return _numpy_module().BitGenerator
    raise AttributeError(f"module 'arc4py' has no attribute {name!r}")
