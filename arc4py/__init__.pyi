"""Type stubs for arc4py: an arc4random-style ChaCha20 CSPRNG.

numpy appears only in types (in _core.pyi and _numpy.pyi; a stub is never
executed, so ``import arc4py`` still works without numpy).  Where numpy is
not installed, a type checker treats the numpy types as unknown (Any); the
rest of the API is unaffected.
"""
import random as _random
import sys
from collections.abc import Sequence
from hmac import compare_digest as compare_digest
from random import (
    betavariate as betavariate,
    choices as choices,
    expovariate as expovariate,
    gammavariate as gammavariate,
    gauss as gauss,
    getrandbits as getrandbits,
    lognormvariate as lognormvariate,
    normalvariate as normalvariate,
    paretovariate as paretovariate,
    randbytes as randbytes,
    randint as randint,
    randrange as randrange,
    sample as sample,
    shuffle as shuffle,
    triangular as triangular,
    uniform as uniform,
    vonmisesvariate as vonmisesvariate,
    weibullvariate as weibullvariate,
)
from typing import Final, NoReturn, SupportsIndex, TypeVar
from uuid import UUID

if sys.version_info >= (3, 12):
    from random import binomialvariate as binomialvariate

from arc4py._core import *  # noqa: F403
from arc4py._core import __all__ as __all__  # the generator's and the cores' calls

# numpy's side (loaded on first use at run time)
from arc4py._numpy import BitGenerator as BitGenerator, default_rng as default_rng

_T = TypeVar("_T")

__version__: str
__all__ += [
    "BitGenerator",
    "Random",
    "SystemRandom",
    "betavariate",
    "choice",
    "choices",
    "compare_digest",
    "default_rng",
    "expovariate",
    "gammavariate",
    "gauss",
    "get_include",
    "getrandbits",
    "getstate",
    "lognormvariate",
    "normalvariate",
    "paretovariate",
    "randbytes",
    "randint",
    "randrange",
    "sample",
    "seed",
    "setstate",
    "shuffle",
    "token_bytes",
    "token_hex",
    "token_urlsafe",
    "triangular",
    "uniform",
    "uuid4",
    "uuid7",
    "vonmisesvariate",
    "weibullvariate",
]
if sys.version_info >= (3, 12):
    __all__ += ["binomialvariate"]

DEFAULT_ENTROPY: Final[int]

# ---- secrets-style helpers ---------------------------------------------------

def token_bytes(nbytes: SupportsIndex | None = None) -> bytes: ...
def token_hex(nbytes: SupportsIndex | None = None) -> str: ...
def token_urlsafe(nbytes: SupportsIndex | None = None) -> str: ...
def choice(seq: Sequence[_T]) -> _T: ...

# ---- random.Random drop-in ---------------------------------------------------

class Random(_random.Random):
    """A random.Random drawing from arc4py (also named SystemRandom, as in
    secrets); seed() is ignored, getstate() and setstate() raise
    NotImplementedError, a pickled or copied one is a fresh generator."""

    def random(self) -> float: ...
    def getrandbits(self, k: SupportsIndex, /) -> int: ...
    def randbytes(self, n: SupportsIndex) -> bytes: ...
    def _randbelow(self, n: SupportsIndex, /) -> int: ...
    if sys.version_info >= (3, 11):
        def gauss(self, mu: float = 0.0, sigma: float = 1.0) -> float: ...
    else:
        def gauss(self, mu: float, sigma: float) -> float: ...
    def seed(self, *args: object, **kwds: object) -> None: ...
    def getstate(self, *args: object, **kwds: object) -> NoReturn: ...
    def setstate(self, *args: object, **kwds: object) -> NoReturn: ...

SystemRandom = Random

# ---- the random module's functions (the rest are imported above) -------------

def seed(*args: object, **kwds: object) -> None: ...
def getstate(*args: object, **kwds: object) -> NoReturn: ...
def setstate(*args: object, **kwds: object) -> NoReturn: ...

# ---- uuid --------------------------------------------------------------------

def uuid4() -> UUID: ...
def uuid7() -> UUID: ...

# ---- C API -------------------------------------------------------------------

def get_include() -> str: ...

# ---- numpy -------------------------------------------------------------------

