"""Stubs for arc4py._random: arc4py.Random and the random module's
functions bound to one instance of it.  Import them from arc4py."""
import random as _random
import sys
from collections.abc import Sequence
from fractions import Fraction
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
from typing import NoReturn, SupportsIndex, TypeVar

from _typeshed import SupportsLenAndGetItem

from arc4py import _core

_T = TypeVar("_T")

if sys.version_info >= (3, 12):
    from random import binomialvariate as binomialvariate

__all__ = [
    "Random", "SeedIgnoredWarning", "SystemRandom", "betavariate", "choices",
    "expovariate", "gammavariate", "gauss", "getrandbits", "getstate", "lognormvariate",
    "normalvariate", "paretovariate", "randbytes", "randint", "randrange",
    "sample", "seed", "setstate", "shuffle", "triangular", "uniform",
    "vonmisesvariate", "weibullvariate",
]
if sys.version_info >= (3, 12):
    __all__ += ["binomialvariate"]

class SeedIgnoredWarning(UserWarning):
    """Warned where a seed is given and ignored; off unless a warnings
    filter turns it on."""

class Random(_core.Random, _random.SystemRandom):
    """A random.Random drawing from arc4py (also named SystemRandom, as in
    secrets); seed() is ignored, getstate() and setstate() raise
    NotImplementedError, a pickled or copied one is a fresh generator."""

    def random(self) -> float: ...
    def getrandbits(self, k: SupportsIndex, /) -> int: ...
    def randbytes(self, n: SupportsIndex) -> bytes: ...
    def _randbelow(self, n: SupportsIndex, /) -> int: ...
    def uniform(self, a: float, b: float) -> float: ...
    def triangular(self, low: float = 0.0, high: float = 1.0,
                   mode: float | None = None) -> float: ...
    if sys.version_info >= (3, 11):
        def gauss(self, mu: float = 0.0, sigma: float = 1.0) -> float: ...
        def normalvariate(self, mu: float = 0.0, sigma: float = 1.0) -> float: ...
    else:
        def gauss(self, mu: float, sigma: float) -> float: ...
        def normalvariate(self, mu: float, sigma: float) -> float: ...
    def lognormvariate(self, mu: float, sigma: float) -> float: ...
    if sys.version_info >= (3, 12):
        def expovariate(self, lambd: float = 1.0) -> float: ...
        def binomialvariate(self, n: int = 1, p: float = 0.5) -> int: ...
    else:
        def expovariate(self, lambd: float) -> float: ...
    def vonmisesvariate(self, mu: float, kappa: float) -> float: ...
    def gammavariate(self, alpha: float, beta: float) -> float: ...
    def betavariate(self, alpha: float, beta: float) -> float: ...
    def paretovariate(self, alpha: float) -> float: ...
    def weibullvariate(self, alpha: float, beta: float) -> float: ...
    def choices(
        self,
        population: SupportsLenAndGetItem[_T],
        weights: Sequence[float | Fraction] | None = None,
        *,
        cum_weights: Sequence[float | Fraction] | None = None,
        k: int = 1,
    ) -> list[_T]: ...
    def seed(self, *args: object, **kwds: object) -> None: ...
    def getstate(self, *args: object, **kwds: object) -> NoReturn: ...
    def setstate(self, *args: object, **kwds: object) -> NoReturn: ...

SystemRandom = Random

# The instance the functions below are bound to (the stdlib's random._inst).
_inst: Random

def seed(*args: object, **kwds: object) -> None: ...
def getstate(*args: object, **kwds: object) -> NoReturn: ...
def setstate(*args: object, **kwds: object) -> NoReturn: ...
