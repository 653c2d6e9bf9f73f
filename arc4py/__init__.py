"""arc4py: an arc4random-style ChaCha20 CSPRNG, as fast as a non-cryptographic one.

Every call draws from the calling thread's own ChaCha20 state, seeded from
the OS, rekeyed after every refill (fast key erasure), reseeded after at most
1 MiB and in every forked child.  Use it where you would use ``os.urandom``,
``secrets`` or ``random.SystemRandom``::

    >>> import arc4py
    >>> roll = arc4py.arc4random_uniform(6) + 1        # a die roll
    >>> 1 <= roll <= 6
    True
    >>> len(arc4py.token_urlsafe())                    # a session token
    43
    >>> cards = list(range(52))
    >>> arc4py.shuffle(cards)                          # the random module's API
    >>> sorted(cards) == list(range(52))
    True
    >>> arc4py.uuid4().version                         # uuid.uuid4(), faster
    4

numpy is optional: ``BitGenerator``, ``default_rng`` and the ``size=``
forms of ``random_u32``, ``random_u64``, ``random`` and
``arc4random_uniform`` need it (``pip install 'arc4py[numpy]'``); without
it those names are absent or raise ``ImportError`` naming that extra.
"""
import base64 as _base64
import os as _os
import random as _random
import sys as _sys
from hmac import compare_digest
from operator import index as _index


def _missing_extension(name):
    """The ImportError for a compiled module ``name`` that is not there."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    if not _os.path.exists(_os.path.join(here, "_core.pyx")):
        return ImportError(
            f"Error importing arc4py: its compiled module {name} is missing "
            f"from {here}, so this installation is incomplete; reinstall "
            f"arc4py (pip install --force-reinstall arc4py).", name=name)
    # A source tree (numpy says the same of its own): the current directory
    # or sys.path put this folder before the installed package.
    installed = _installed_elsewhere(here)
    advice = (f"the installed arc4py is in {installed}: leave the source "
              f"tree (cd elsewhere) and relaunch Python" if installed else
              "install arc4py (pip install .) and relaunch Python from "
              "another directory, or build it in place (pip install -e .)")
    return ImportError(
        f"Error importing arc4py: you should not try to import arc4py from "
        f"its source tree ({here}), where its compiled modules are not "
        f"built ({name} is missing); {advice}.", name=name)


def _installed_elsewhere(here):
    """The sys.path entry holding another built arc4py, or None."""
    from importlib.machinery import EXTENSION_SUFFIXES
    this = _os.path.realpath(_os.path.dirname(here))
    for entry in _sys.path:
        if not isinstance(entry, str):
            continue
        entry = _os.path.realpath(entry or _os.curdir)
        if entry != this and any(
                _os.path.exists(_os.path.join(entry, "arc4py", "_core" + suffix))
                for suffix in EXTENSION_SUFFIXES):
            return entry
    return None


try:
    # The generator's and the cores' calls: the names in _core.__all__.
    from arc4py._core import *  # noqa: F403
    from arc4py._core import __all__ as _core_names, arc4random_buf, randbelow  # (used below)
except ModuleNotFoundError as _exc:
    if not (_exc.name or "").startswith("arc4py._"):
        raise
    raise _missing_extension(_exc.name) from _exc


def _started_as_command():
    """Whether this process is the ``arc4py`` command (the console script,
    or ``python -m arc4py`` while runpy locates it): the command starts
    even under a bad ARC4PY_BACKEND, so that ``arc4py info`` can say what
    is wrong and the other commands can refuse in one line."""
    argv = getattr(_sys, "argv", None) or [""]
    name = _os.path.basename(str(argv[0])).lower()
    if name in ("arc4py", "arc4py.exe", "arc4py-script.py"):
        return True
    if argv[0] != "-m":
        return False
    orig = getattr(_sys, "orig_argv", None)  # Python >= 3.10
    if orig is None:
        return True  # -m and a module in arc4py: nothing else tells which
    return _module_option(orig[1:]) == "arc4py"


def _module_option(args):
    """The module of the interpreter's ``-m`` in ``args``, or None."""
    args = list(args)
    while args:
        arg = args.pop(0)
        if arg == "--check-hash-based-pycs":
            args[:1] = []
        elif arg.startswith("--") or arg == "-":
            if arg == "--":
                return None
        elif arg.startswith("-"):
            for k, flag in enumerate(arg[1:], 2):
                if flag in "cmXW":
                    value = arg[k:] or (args.pop(0) if args else "")
                    if flag in "cm":
                        return value if flag == "m" else None
                    break
        else:
            return None  # a script
    return None


from arc4py import _core  # noqa: E402 - loaded just above

if _core._backend_env_error is not None and not _started_as_command():
    # A new exception each time: the stored one keeps no traceback.
    raise ValueError(str(_core._backend_env_error)) from None

__version__ = "0.1.0"

# The random module's functions (bound to one Random further down).
_RANDOM_FUNCTIONS = [
    "betavariate", "choices", "expovariate", "gammavariate", "gauss",
    "getrandbits", "getstate", "lognormvariate", "normalvariate",
    "paretovariate", "randbytes", "randint", "randrange", "sample", "seed",
    "setstate", "shuffle", "triangular", "uniform", "vonmisesvariate",
    "weibullvariate",
]
if _sys.version_info >= (3, 12):
    _RANDOM_FUNCTIONS.append("binomialvariate")

__all__ = [
    *_core_names,
    "Random",
    "SystemRandom",
    "choice",
    "compare_digest",
    "default_rng",
    "get_include",
    "token_bytes",
    "token_hex",
    "token_urlsafe",
    "uuid4",
    "uuid7",
]
__all__ += _RANDOM_FUNCTIONS
__all__.sort()
del _core_names

#: Bytes in a token when ``nbytes`` is not given (as the ``secrets`` module).
DEFAULT_ENTROPY = 32


# ---- secrets-style helpers --------------------------------------------------

def token_bytes(nbytes=None):
    """A random byte string of ``nbytes`` bytes (default 32), like
    ``secrets.token_bytes``."""
    if nbytes is None:
        nbytes = DEFAULT_ENTROPY
    elif type(nbytes) is not int or nbytes < 0:
        nbytes = _nbytes_arg(nbytes)
    return arc4random_buf(nbytes)


def _nbytes_arg(nbytes):
    """``nbytes`` as an int >= 0, with errors that name it."""
    if isinstance(nbytes, float):
        raise TypeError("nbytes must be an int or None, not float")
    try:
        n = _index(nbytes)
    except TypeError:
        raise TypeError(f"nbytes must be an int or None, not "
                        f"{type(nbytes).__name__}") from None
    if n < 0:
        raise ValueError(f"nbytes must be >= 0, not {n}")
    return n


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
    ``secrets.choice`` and ``random.choice`` (``IndexError`` if it is
    empty)."""
    n = len(seq)
    if n == 0:
        raise IndexError("Cannot choose from an empty sequence")
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
    ignored, ``getstate()`` and ``setstate()`` raise ``NotImplementedError``,
    and pickling or copying one gives a fresh ``Random`` of the same class
    (there is nothing to replay), so one can be handed to another process.

    A method set on an instance (``rng.random = f``) is used wherever the
    stdlib's own code would call it, as on ``random.Random``.
    """

    # getrandbits and _randbelow are C method descriptors of the stdlib's C
    # base class, as the Mersenne Twister's own are: CPython specialises
    # calls to those (arc4py/cbind/random_methods.c).  The others are binding Cython
    # functions taking ``self``, methods like any other.
    getrandbits, _randbelow = _random_method_descriptors(
        _random.Random.__base__, _methods.getrandbits, _methods._randbelow)
    random = _methods.random
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
    if _sys.version_info >= (3, 12):  # lambd=1.0, binomialvariate from 3.12
        expovariate = _methods.expovariate
        binomialvariate = _methods.binomialvariate
    else:
        expovariate = _methods._expovariate_no_default

    def seed(self, *args, **kwds):
        """Does nothing, as ``random.SystemRandom.seed``: a CSPRNG seeds
        itself from the OS, and its output cannot be reproduced (a seed
        that could reproduce it would make it predictable).  Use
        ``random.Random(seed)`` for a reproducible stream."""
        return None

    def _notimplemented(self, *args, **kwds):
        raise NotImplementedError(
            "arc4py.Random has no state to save or restore: it draws from a "
            "CSPRNG seeded by the OS, whose output nothing can replay (a "
            "pickled or copied one is a fresh generator); use "
            "random.Random(seed) for a stream you can save and restore")

    getstate = setstate = _notimplemented

    def __reduce__(self):
        """A fresh generator of the same class: nothing to replay."""
        cls = type(self)
        return (Random if cls is _RandomWithOverrides else cls), ()

    def __setattr__(self, name, value):
        # arc4py's distributions draw in C for the exact class only; an
        # instance given one of the class's methods moves to a subclass,
        # where the stdlib's code runs and calls the instance's method.  The
        # plain instance's calls check nothing more than its type.
        if type(self) is Random and hasattr(Random, name):
            object.__setattr__(self, "__class__", _RandomWithOverrides)
        object.__setattr__(self, name, value)


class _RandomWithOverrides(Random):
    """An ``arc4py.Random`` with a method set on the instance."""

    # Through getrandbits, as random.Random's: an instance's getrandbits counts.
    _randbelow = _random.Random._randbelow_with_getrandbits


_RandomWithOverrides.__name__ = _RandomWithOverrides.__qualname__ = "Random"


#: The ``secrets`` module's name for the same class.
SystemRandom = Random

_FAST_METHODS = ("random", "randbytes", "uniform",
                 "triangular", "normalvariate", "gauss", "lognormvariate",
                 "expovariate", "vonmisesvariate", "gammavariate",
                 "betavariate", "paretovariate", "weibullvariate", "choices")
if _sys.version_info >= (3, 12):
    _FAST_METHODS += ("binomialvariate",)
for _name in _FAST_METHODS:
    _method = getattr(Random, _name)
    _method.__name__ = _name
    _method.__qualname__ = "Random." + _name
_methods._serve(Random)
del _name, _method, _FAST_METHODS, _random_method_descriptors


# ---- the random module's functions ------------------------------------------
# Bound methods of one Random, as the stdlib's module binds them to its own
# instance; it holds no state, so each call draws from the calling thread's
# generator.  random() and choice() are the module's own (above), with the
# meaning the random and secrets modules share.

_inst = Random()
globals().update((name, getattr(_inst, name)) for name in _RANDOM_FUNCTIONS)

from arc4py._uuid import uuid4, uuid7  # noqa: E402

# ---- C API --------------------------------------------------------------------

def get_include():
    """The directory holding ``arc4py/capi.h``, for ``include_dirs`` when
    building a C or Cython extension against arc4py's C API (as
    ``numpy.get_include()``)."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    installed = _os.path.join(here, "include")
    if _os.path.isfile(_os.path.join(installed, "arc4py", "capi.h")):
        return installed
    # An editable install runs from the checkout: the header's own folder.
    return _os.path.join(_os.path.dirname(here), "include")


# ---- numpy (loaded on first use) --------------------------------------------

def _numpy_module():
    try:
        import numpy  # noqa: F401
    except ImportError:
        raise ImportError("this arc4py feature needs numpy: "
                          "pip install 'arc4py[numpy]'") from None
    from arc4py import _numpy
    if "__getattr__" in globals():  # numpy is in use: the class resolved
        globals()["BitGenerator"] = _numpy.BitGenerator
        globals().pop("__getattr__", None)
    return _numpy


def _numpy_installed():
    """Whether numpy can be found, without importing it."""
    from importlib.util import find_spec
    try:
        return find_spec("numpy") is not None
    except (ImportError, ValueError):
        return False


def default_rng(seed=None):
    """A ``numpy.random.Generator`` over a new ``arc4py.BitGenerator``:
    every numpy distribution, drawn from the CSPRNG.

    ``seed`` takes what ``numpy.random.default_rng`` takes that cannot
    reproduce a stream: ``None`` or a seed sequence that holds no seed (a
    new generator), an ``arc4py.BitGenerator`` (wrapped), a ``Generator``
    over one (returned as it is).  A real seed is a ``TypeError``: a CSPRNG
    seeds itself from the OS; use ``numpy.random.default_rng(seed)`` for a
    reproducible stream.
    """
    return _numpy_module().default_rng(seed)


# BitGenerator is a numpy class.  Without numpy it is absent, as the stdlib
# leaves out a name its platform lacks (not in __all__ or dir(); hasattr()
# is False); default_rng() names the extra.  With numpy installed it is
# resolved on first use, by a module __getattr__ that exists only until
# then: while a module has one, CPython specialises none of its attribute
# lookups, and every `arc4py.<name>()` call pays for that.
if _numpy_installed():
    __all__.append("BitGenerator")
    __all__.sort()

    def __getattr__(name):
        if name == "BitGenerator":
            return _numpy_module().BitGenerator
        raise AttributeError(f"module 'arc4py' has no attribute {name!r}")

    if "numpy" in _sys.modules:
        _numpy_module()


def __dir__():
    return sorted(set(globals()) | {"BitGenerator"} & set(__all__))


# ---- free-threaded builds ---------------------------------------------------
# While the __getattr__ above exists, CPython specialises no `arc4py.<name>`
# lookup, so each one takes a reference on this module's dict and on what
# it finds: without the GIL, a counter every calling thread writes.  Made
# immortal there (see arc4py/_core.pyx); a GIL build does nothing.
from arc4py._core import _share_between_threads  # noqa: E402

_share_between_threads(globals(), token_bytes, token_hex, token_urlsafe,
                       choice, default_rng, vars(Random)["getrandbits"],
                       vars(Random)["_randbelow"], uuid4, uuid7, _inst,
                       *[globals()[name] for name in _RANDOM_FUNCTIONS])
del _share_between_threads
