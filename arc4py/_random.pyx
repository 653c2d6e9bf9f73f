# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: binding=True, embedsignature=False, autotestdict=False
"""``arc4py.Random``, and the ``random`` module's functions bound to one
instance of it, as CPython's random.py binds its own.

As the stdlib's ``random.Random`` stands on the C type ``_random.Random``,
this one stands on ``arc4py._core.Random`` (arc4py/cbind/random_methods.c),
whose C methods random, getrandbits, randbytes and _randbelow draw straight
from the calling thread's generator; it is also a ``random.SystemRandom``,
which it is.  The distributions below are the stdlib's algorithms (random.py
of the running Python), step for step, run in C on draws taken through the
C API's table (``arc4py._core._C_API``).  The fast path needs an exact
arc4py.Random (a subclass, or an instance given a method of its own, may
override random() or another method the stdlib's code calls) and finite
float arguments, or ints a double holds exactly, away from the stdlib's
error cases; anything else runs the stdlib's own method, so results, errors
and edge cases stay the stdlib's.  Import the names from ``arc4py``.
"""
from cpython.exc cimport PyErr_CheckSignals
from cpython.sequence cimport PySequence_GetItem
from libc.math cimport (acos, cos, exp, fabs, floor, fmod, isfinite, log, log2,
                        pow, sqrt)
from libc.stdint cimport uint64_t

import math as _math
import random as _stdlib
import sys as _sys

from arc4py._core import _C_API, Random as _Primitives
from arc4py._seed_warning import SeedIgnoredWarning, seed_ignored

from arc4py._cdefs cimport arc4py_capi, arc4py_u64_to_double
from arc4py._common cimport PY_SSIZE_T_MAX, _generator_table, _raise_os_error

cdef const arc4py_capi *_api = _generator_table(_C_API)
cdef object _plain_type = None  # Random, once made (below)

_std = _stdlib.Random
cdef double _NV_MAGICCONST = _stdlib.NV_MAGICCONST
cdef double _TWOPI = _stdlib.TWOPI
cdef double _LOG4 = _stdlib.LOG4
cdef double _SG_MAGICCONST = _stdlib.SG_MAGICCONST
cdef double _E = _math.e
cdef double _PI = _math.pi
# Python 3.10 rewrote paretovariate as u ** (-1.0 / alpha).
cdef bint _PARETO_NEGATIVE_POWER = _sys.version_info >= (3, 10)

cdef inline double _draw() except? -1.0:
    """random(): a float in [0.0, 1.0) with 53 random bits."""
    cdef uint64_t r
    cdef int err = _api.random_u64(&r)
    if err:
        _raise_os_error(err)
    return arc4py_u64_to_double(r)


cdef inline bint _real(object x, double *out):
    """``x`` as a finite double, for a float or an int within 2**52 in
    magnitude; False for anything else.  Such an int, and the difference of
    any two (uniform's b - a), are exact doubles, so C's arithmetic and
    comparisons on them are Python's exact int ones (2**53 would hold the
    ints but not all their differences)."""
    if type(x) is float:
        out[0] = <double>x
        return isfinite(out[0])
    if type(x) is int and -4503599627370496 <= x <= 4503599627370496:
        out[0] = <double>x
        return True
    return False


cdef inline double _py_mod(double x, double m) noexcept:
    """Python's float ``x % m``: the sign of m, fmod's magnitude."""
    cdef double r = fmod(x, m)
    if r != 0.0:
        if (m < 0.0) != (r < 0.0):
            r += m
    else:
        r = 0.0 if m > 0.0 else -0.0
    return r


cdef inline int _spin(unsigned *tries) except -1:
    """Count a rejection loop's tries; every 4096th runs the signal
    handlers (Ctrl-C), as the stdlib's loop in Python does, so a hopeless
    loop (alpha near the largest double) can be interrupted."""
    tries[0] += 1
    if tries[0] % 4096 == 0:
        PyErr_CheckSignals()
    return 0


cdef double _std_normal() except? -1.0:
    """Kinderman and Monahan's ratio method, as normalvariate() runs it."""
    cdef double u1, u2, z
    cdef unsigned tries = 0
    while True:
        _spin(&tries)
        u1 = _draw()
        u2 = 1.0 - _draw()
        z = _NV_MAGICCONST * (u1 - 0.5) / u2
        if z * z / 4.0 <= -log(u2):
            return z

cdef object _normal(object mu, object sigma):
    cdef double m, s, z = _std_normal()
    if _real(mu, &m) and _real(sigma, &s):
        return m + z * s
    return mu + z * sigma


cdef object _expovariate(object self, object lambd):
    cdef double lam
    if type(self) is _plain_type and _real(lambd, &lam) and lam != 0.0:
        return -log(1.0 - _draw()) / lam
    return _std.expovariate(self, lambd)


cdef double _gamma(double alpha, double beta) except? -1.0:
    """The stdlib's gammavariate for alpha > 0 and beta > 0."""
    cdef double ainv, bbb, ccc, u, u1, u2, v, x, z, r, b, p
    cdef unsigned tries = 0
    if alpha > 1.0:
        # Cheng's rejection algorithm (R. C. H. Cheng, 1977)
        ainv = sqrt(2.0 * alpha - 1.0)
        bbb = alpha - _LOG4
        ccc = alpha + ainv
        while True:
            _spin(&tries)
            u1 = _draw()
            if not 1e-7 < u1 < 0.9999999:
                continue
            u2 = 1.0 - _draw()
            v = log(u1 / (1.0 - u1)) / ainv
            x = alpha * exp(v)
            z = u1 * u1 * u2
            r = bbb + ccc * v - x
            if r + _SG_MAGICCONST - 4.5 * z >= 0.0 or r >= log(z):
                return x * beta
    if alpha == 1.0:
        return -log(1.0 - _draw()) * beta
    # alpha < 1: ALGORITHM GS of Statistical Computing (Kennedy & Gentle)
    while True:
        _spin(&tries)
        u = _draw()
        b = (_E + alpha) / _E
        p = b * u
        if p <= 1.0:
            x = pow(p, 1.0 / alpha)
        else:
            x = -log((b - p) / alpha)
        u1 = _draw()
        if p > 1.0:
            if u1 <= pow(x, alpha - 1.0):
                break
        elif u1 <= exp(-x):
            break
    return x * beta


include "_random_discrete.pxi"


cdef int _no_state() except -1:
    raise NotImplementedError(
        "arc4py.Random has no state to save or restore: it draws from a "
        "CSPRNG seeded by the OS, whose output nothing can replay (a "
        "pickled or copied one is a fresh generator); for a stream you can "
        "save and restore use a seeded generator, such as the standard "
        "library's random.Random(seed) (not arc4py's Random)")


class Random(_Primitives, _stdlib.SystemRandom):
    """A ``random.Random`` whose every method draws from arc4py's CSPRNG.

    A ``random.SystemRandom`` too: ``random()``, ``getrandbits()``,
    ``randbytes()`` and ``_randbelow()`` come from arc4py's C, the
    distributions (``uniform``, ``choices``, ``gauss``, ...) are the
    stdlib's algorithms run in C on its draws, and the stdlib's own
    ``randrange``, ``randint``, ``choice``, ``shuffle`` and ``sample`` are
    built on them.  There is
    no state to seed or save, so nothing to replay: ``seed()`` is ignored,
    ``getstate()`` and ``setstate()`` raise ``NotImplementedError``, and
    pickling or copying one gives a fresh ``Random`` of the same class (so
    one can be handed to another process).

    A method set on an instance (``rng.random = f``) is used wherever the
    stdlib's own code would call it, as on ``random.Random``.

    On a free-threaded build (3.14t and later) its references are counted
    the deferred way, as a ``threading.local``'s: threads calling one
    through a global name write no shared reference count, and one no
    longer reachable is freed by the cyclic garbage collector rather than
    at once.
    """

    __module__ = "arc4py"  # where users find it (and pickle looks)

    def uniform(self, a, b):
        """Get a random number in the range [a, b) or [a, b] depending on rounding."""
        cdef double x, y
        if type(self) is _plain_type and _real(a, &x) and _real(b, &y):
            return x + (y - x) * _draw()
        return _std.uniform(self, a, b)

    def triangular(self, low=0.0, high=1.0, mode=None):
        """Triangular distribution: continuous in [low, high] with the given
        mode (default: the midpoint)."""
        cdef double lo, hi, mo = 0.0, u, c, t
        if (type(self) is _plain_type and _real(low, &lo) and _real(high, &hi)
                and hi != lo and (mode is None or _real(mode, &mo))):
            u = _draw()
            c = 0.5 if mode is None else (mo - lo) / (hi - lo)
            if u > c:
                u = 1.0 - u
                c = 1.0 - c
                t = lo
                lo = hi
                hi = t
            return lo + (hi - lo) * sqrt(u * c)
        return _std.triangular(self, low, high, mode)

    if _sys.version_info >= (3, 11):  # mu=0.0, sigma=1.0 from 3.11
        def normalvariate(self, mu=0.0, sigma=1.0):
            """Normal distribution: mean ``mu``, standard deviation ``sigma``."""
            if type(self) is not _plain_type:
                return _std.normalvariate(self, mu, sigma)
            return _normal(mu, sigma)

        def gauss(self, mu=0.0, sigma=1.0):
            """Gaussian distribution (mean ``mu``, standard deviation ``sigma``);
            unlike the stdlib's, no second value is kept in the instance, where a
            fork or another thread would see it again."""
            if type(self) is not _plain_type:
                return self.normalvariate(mu, sigma)
            return _normal(mu, sigma)
    else:
        def normalvariate(self, mu, sigma):
            """Normal distribution: mean ``mu``, standard deviation ``sigma``."""
            if type(self) is not _plain_type:
                return _std.normalvariate(self, mu, sigma)
            return _normal(mu, sigma)

        def gauss(self, mu, sigma):
            """Gaussian distribution (mean ``mu``, standard deviation ``sigma``);
            nothing is kept in the instance."""
            if type(self) is not _plain_type:
                return self.normalvariate(mu, sigma)
            return _normal(mu, sigma)

    def lognormvariate(self, mu, sigma):
        """Log normal distribution: its log is normal with mean ``mu`` and
        standard deviation ``sigma``."""
        cdef double v, r
        if type(self) is not _plain_type:
            return _std.lognormvariate(self, mu, sigma)
        value = _normal(mu, sigma)
        if type(value) is float:
            v = value
            r = exp(v)
            if isfinite(r) or not isfinite(v):
                return r
        return _math.exp(value)  # its OverflowError, its TypeError

    if _sys.version_info >= (3, 12):  # lambd=1.0 from 3.12
        def expovariate(self, lambd=1.0):
            """Exponential distribution with rate ``lambd`` (1 / the mean)."""
            return _expovariate(self, lambd)
    else:
        def expovariate(self, lambd):
            """Exponential distribution with rate ``lambd`` (1 / the mean)."""
            return _expovariate(self, lambd)

    def vonmisesvariate(self, mu, kappa):
        """Circular data distribution: mean angle ``mu`` (radians),
        concentration ``kappa`` (>= 0); an angle in [0, 2*pi)."""
        cdef double m, k, s, r, u1, u2, u3, z, d, q, f
        cdef unsigned tries = 0
        if not (type(self) is _plain_type and _real(mu, &m) and _real(kappa, &k)):
            return _std.vonmisesvariate(self, mu, kappa)
        if k <= 1e-6:
            return _TWOPI * _draw()
        s = 0.5 / k
        r = s + sqrt(1.0 + s * s)
        while True:
            _spin(&tries)
            u1 = _draw()
            z = cos(_PI * u1)
            d = z / (r + z)
            u2 = _draw()
            if u2 < 1.0 - d * d or u2 <= (1.0 - d) * exp(d):
                break
        q = 1.0 / r
        f = (q + z) / (1.0 + q * z)
        u3 = _draw()
        if not -1.0 <= f <= 1.0:
            return _math.acos(f)  # the stdlib's ValueError
        if u3 > 0.5:
            return _py_mod(m + acos(f), _TWOPI)
        return _py_mod(m - acos(f), _TWOPI)

    def gammavariate(self, alpha, beta):
        """Gamma distribution (shape ``alpha`` > 0, scale ``beta`` > 0)."""
        cdef double a, b
        if (type(self) is _plain_type and _real(alpha, &a) and _real(beta, &b)
                and a > 0.0 and b > 0.0):
            return _gamma(a, b)
        return _std.gammavariate(self, alpha, beta)

    def betavariate(self, alpha, beta):
        """Beta distribution (alpha > 0, beta > 0): a float in [0, 1]."""
        cdef double a, b, y
        if (type(self) is _plain_type and _real(alpha, &a) and _real(beta, &b)
                and a > 0.0 and b > 0.0):
            y = _gamma(a, 1.0)
            if y:
                return y / (y + _gamma(b, 1.0))
            return 0.0
        return _std.betavariate(self, alpha, beta)

    def paretovariate(self, alpha):
        """Pareto distribution with shape ``alpha``."""
        cdef double a, u, inner, result
        if not (type(self) is _plain_type and _real(alpha, &a) and a != 0.0):
            return _std.paretovariate(self, alpha)
        u = 1.0 - _draw()
        if _PARETO_NEGATIVE_POWER:
            result = pow(u, -1.0 / a)
            if isfinite(result):
                return result
            return (<object>u) ** (-1.0 / a)  # the stdlib's OverflowError
        inner = pow(u, 1.0 / a)
        if inner != 0.0 and isfinite(inner):
            return 1.0 / inner
        return 1.0 / (<object>u) ** (1.0 / a)  # its OverflowError or ZeroDivisionError

    def weibullvariate(self, alpha, beta):
        """Weibull distribution (scale ``alpha``, shape ``beta``)."""
        cdef double a, b, base, t
        if not (type(self) is _plain_type and _real(alpha, &a) and _real(beta, &b)
                and b != 0.0):
            return _std.weibullvariate(self, alpha, beta)
        base = -log(1.0 - _draw())
        t = pow(base, 1.0 / b)
        if isfinite(t) and not (base == 0.0 and b < 0.0):
            return a * t
        return alpha * (<object>base) ** (1.0 / b)  # the stdlib's errors

    def choices(self, population, weights=None, *, cum_weights=None, k=1):
        """Return a k sized list of population elements chosen with replacement.

        If the relative weights or cumulative weights are not specified,
        the selections are made with equal probability.
        """
        return _choices(self, population, weights, cum_weights, k)

    if _sys.version_info >= (3, 12):
        def binomialvariate(self, n=1, p=0.5):
            """Binomial random variable: the number of successes in ``n``
            independent trials of probability ``p`` each (0 <= X <= n)."""
            cdef double nd, q
            if (type(self) is _plain_type and type(n) is int
                    and _real(n, &nd) and n >= 0 and _real(p, &q)
                    and 0.0 < q < 1.0):
                return _binomial(self, n, q)
            return _std.binomialvariate(self, n, p)

    def seed(self, *args, **kwds):
        """Does nothing, as ``random.SystemRandom.seed``: a CSPRNG seeds
        itself from the OS, and its output cannot be reproduced (a seed that
        could reproduce it would make it predictable).  For a reproducible
        stream use a seeded generator, such as the standard library's
        random.Random(seed) (not arc4py's Random).  A seed other than None
        is warned of as a ``SeedIgnoredWarning`` where a warnings filter
        names that category."""
        if args or kwds:
            seed_ignored(args, kwds)
        return None

    def getstate(self, *args, **kwds):
        """Raises ``NotImplementedError``: there is no state to save."""
        _no_state()

    def setstate(self, *args, **kwds):
        """Raises ``NotImplementedError``: there is no state to restore."""
        _no_state()

    def __reduce__(self):
        """A fresh generator of the same class: nothing to replay."""
        cls = type(self)
        return (Random if cls is _RandomWithOverrides else cls), ()

    def __setattr__(self, name, value):
        # The distributions draw in C for the exact class only; an instance
        # given one of the class's methods moves to a subclass, where the
        # stdlib's code runs and calls the instance's method.  The plain
        # instance's calls check nothing more than its type.
        if type(self) is Random and hasattr(Random, name):
            object.__setattr__(self, "__class__", _RandomWithOverrides)
        object.__setattr__(self, name, value)


_plain_type = Random


class _RandomWithOverrides(Random):
    """An ``arc4py.Random`` with a method set on the instance."""

    # Through getrandbits, as random.Random's: an instance's getrandbits counts.
    _randbelow = _stdlib.Random._randbelow_with_getrandbits


_RandomWithOverrides.__name__ = _RandomWithOverrides.__qualname__ = "Random"
_RandomWithOverrides.__module__ = "arc4py"

#: The ``secrets`` module's name for the same class.
SystemRandom = Random


# ---- the random module's functions --------------------------------------------
# Bound methods of one Random, as the stdlib's module binds them to its own
# instance: every function of the running Python's random module but
# random() and choice(), which arc4py keeps with the meaning the random and
# secrets modules share (arc4py._core, arc4py._secrets).  The instance
# holds no state: each call draws from the calling thread's generator.

_inst = Random()
__all__ = ["Random", "SeedIgnoredWarning", "SystemRandom"]
for _name in _stdlib.__all__:
    if (_name not in ("random", "choice")
            and not isinstance(getattr(_stdlib, _name), type)):
        globals()[_name] = getattr(_inst, _name)
        __all__.append(_name)
del _name
