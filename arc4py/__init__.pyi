"""Type stubs for arc4py: an arc4random-style ChaCha20 CSPRNG.

numpy appears only in types (in _core.pyi and _numpy.pyi; a stub is never
executed, so ``import arc4py`` still works without numpy).  Where numpy is
not installed, a type checker treats the numpy types as unknown (Any); the
rest of the API is unaffected.
"""
import sys
from collections.abc import Sequence
from hmac import compare_digest as compare_digest
from typing import Final, SupportsIndex, TypeVar
from uuid import UUID

from arc4py._core import *  # noqa: F403
from arc4py._core import __all__ as __all__  # the generator's and the cores' calls

# numpy's side (loaded on first use at run time)
from arc4py._numpy import BitGenerator as BitGenerator, default_rng as default_rng

# Random and the random module's functions
from arc4py._random import (
    Random as Random,
    SeedIgnoredWarning as SeedIgnoredWarning,
    SystemRandom as SystemRandom,
    _inst as _inst,
    betavariate as betavariate,
    choices as choices,
    expovariate as expovariate,
    gammavariate as gammavariate,
    gauss as gauss,
    getrandbits as getrandbits,
    getstate as getstate,
    lognormvariate as lognormvariate,
    normalvariate as normalvariate,
    paretovariate as paretovariate,
    randbytes as randbytes,
    randint as randint,
    randrange as randrange,
    sample as sample,
    seed as seed,
    setstate as setstate,
    shuffle as shuffle,
    triangular as triangular,
    uniform as uniform,
    vonmisesvariate as vonmisesvariate,
    weibullvariate as weibullvariate,
)

_T = TypeVar("_T")

__version__: str
__all__ += [
    "Random",
    "SeedIgnoredWarning",
    "SystemRandom",
    "betavariate",
    "choices",
    "expovariate",
    "gammavariate",
    "gauss",
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
    "triangular",
    "uniform",
    "vonmisesvariate",
    "weibullvariate",
    "BitGenerator",
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

if sys.version_info >= (3, 12):
    from arc4py._random import binomialvariate as binomialvariate

    __all__ += ["binomialvariate"]

DEFAULT_ENTROPY: Final[int]

# ---- secrets-style helpers ---------------------------------------------------

def token_bytes(nbytes: SupportsIndex | None = None) -> bytes: ...
def token_hex(nbytes: SupportsIndex | None = None) -> str: ...
def token_urlsafe(nbytes: SupportsIndex | None = None) -> str: ...
def choice(seq: Sequence[_T]) -> _T: ...

# ---- uuid --------------------------------------------------------------------

def uuid4() -> UUID: ...
def uuid7() -> UUID: ...

# ---- C API -------------------------------------------------------------------

def get_include() -> str: ...

# ---- numpy -------------------------------------------------------------------

