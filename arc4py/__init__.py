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
import os as _os
import sys as _sys

try:
    # The generator's and the cores' calls: the names in _core.__all__.
    from arc4py._core import *  # noqa: F403
except ModuleNotFoundError as _exc:
    if not (_exc.name or "").startswith("arc4py._"):
        raise
    from arc4py._import_checks import missing_extension
    raise missing_extension(_exc.name) from _exc


from arc4py import _core

if _core._backend_env_error is not None:
    from arc4py._import_checks import bad_backend
    raise bad_backend(_core._backend_env_error) from None

__version__ = "0.1.0"

from arc4py import _lazy_numpy, _random, _secrets
from arc4py._lazy_numpy import default_rng as default_rng
from arc4py._random import *  # noqa: F403 - Random and the random module's functions
from arc4py._random import _inst as _inst  # random._inst, for code that reaches in
from arc4py._secrets import *  # noqa: F403 - token_*, choice, compare_digest
from arc4py._secrets import DEFAULT_ENTROPY  # noqa: F401
from arc4py._uuid import uuid4 as uuid4, uuid7 as uuid7

__all__ = sorted([*_core.__all__, *_random.__all__, *_secrets.__all__,
                  "default_rng", "get_include", "uuid4", "uuid7"])


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


# numpy's names: BitGenerator only where numpy is installed (absent
# otherwise, as the stdlib leaves out a name its platform lacks: not in
# __all__ or dir(), hasattr() False); default_rng() names the extra.  No
# module __getattr__ (arc4py/_lazy_numpy.py says why).
if _lazy_numpy.numpy_installed():
    BitGenerator = _lazy_numpy.NumpyClass("BitGenerator")
    __all__ = sorted([*__all__, "BitGenerator"])
    if "numpy" in _sys.modules:  # numpy is in use: the class itself now
        _lazy_numpy.load()


# Free-threaded builds: each `arc4py.<name>` lookup CPython does not
# specialise takes a reference on what it finds, a counter every calling
# thread writes.  What __all__ names (and the methods behind it) is made
# immortal there (arc4py/_core.pyx); a GIL build does nothing.
_core._share_between_threads(
    globals(), *[globals()[name] for name in __all__ if name in globals()],
    _random._inst, *vars(_core.Random).values())
# A user's Random is shared through a global name more often than not:
# deferred counting spares each call's reference on it (freed by the
# cyclic collector once unreachable, as a threading.local is).
_core._defer_instances(_random.Random)
