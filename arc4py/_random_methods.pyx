# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: binding=True, embedsignature=False, autotestdict=False
"""The methods ``arc4py.Random`` puts over ``random.Random``'s.

Each is a binding Cython function taking ``self``: a method descriptor with
vectorcall, so ``rng.random()`` costs no bound-method object, and
``arc4py.Random.random(self)`` works in a subclass as with any Python
method.  They draw through the C API's table, ``arc4py._core._C_API``
(the one per-thread generator); ``self`` holds nothing.  Import ``arc4py.Random``.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.sequence cimport PySequence_GetItem
from libc.math cimport (acos, cos, exp, fabs, floor, fmod, isfinite, log, log2,
                        pow, sqrt)
from libc.stdint cimport uint64_t

import math as _math
import random as _stdlib
import sys as _sys

from arc4py._core import _C_API, randbelow as _randbelow_any

from arc4py._cdefs cimport arc4py_capi
from arc4py._common cimport (PY_SSIZE_T_MAX, _fill_raw, _generator_table,
                             _int_arg, _random_bits, _raise_os_error, _size_arg,
                             _u64_to_double)

cdef const arc4py_capi *_api = _generator_table(_C_API)

# Before 3.11 the stdlib's _randbelow(0) returns 0, and choice([]) relies on
# it to raise IndexError from the indexing; from 3.11 on it is never called
# with 0 (choice checks first).
cdef bint _ZERO_BELOW_GIVES_ZERO = _sys.version_info < (3, 11)


def random(self):
    """A float in the interval [0.0, 1.0), with 53 random bits."""
    cdef uint64_t r
    cdef int err = _api.random_u64(&r)
    if err:
        _raise_os_error(err)
    return _u64_to_double(r)


def getrandbits(self, k):
    """An int with k random bits (k >= 0)."""
    k = _int_arg(k, "number of bits")
    if k < 0:  # the stdlib's words
        raise ValueError("number of bits must be non-negative")
    return _random_bits(_size_arg(k, "number of bits"), _api.random_u64,
                        _api.fill)


def randbytes(self, n):
    """Generate n random bytes."""
    cdef Py_ssize_t size = _size_arg(n, "n")
    cdef bytes out = PyBytes_FromStringAndSize(NULL, size)
    _fill_raw(_api.fill, PyBytes_AS_STRING(out), size)
    return out


def _randbelow(self, n):
    """Return a random int in the range [0,n) (unbiased)."""
    # arc4py.Random's _randbelow serves ints in [1, 2**64] in C
    # (arc4py/cbind/pyfast.c) and hands the rest here.
    cdef Py_ssize_t k
    if type(n) is int and n > 0:  # the same loop, in whole bytes
        k = n.bit_length()
        while True:
            big = _random_bits(k, _api.random_u64, _api.fill)
            if big < n:
                return big
    if _ZERO_BELOW_GIVES_ZERO and not n:
        return 0
    return _randbelow_any(n)  # its errors for the rest


# ---- the distributions --------------------------------------------------------
# Each is the stdlib's algorithm (random.py of the running Python), step for
# step, with its draws taken straight from the generator.  The fast path
# needs an exact arc4py.Random (a subclass may override random() or another
# method the stdlib's code calls) and finite float arguments, or ints a
# double holds exactly, away from the stdlib's error cases; anything else
# runs the stdlib's own method, so results, errors and edge cases stay the
# stdlib's.

cdef object _plain_type = None  # arc4py.Random (set by arc4py/__init__.py)
_std = _stdlib.Random
cdef double _NV_MAGICCONST = _stdlib.NV_MAGICCONST
cdef double _TWOPI = _stdlib.TWOPI
cdef double _LOG4 = _stdlib.LOG4
cdef double _SG_MAGICCONST = _stdlib.SG_MAGICCONST
cdef double _E = _math.e
cdef double _PI = _math.pi
# Python 3.10 rewrote paretovariate as u ** (-1.0 / alpha).
cdef bint _PARETO_NEGATIVE_POWER = _sys.version_info >= (3, 10)


def _serve(cls):
    """Make ``cls`` (arc4py.Random) the class the fast paths serve."""
    global _plain_type
    _plain_type = cls


cdef inline double _draw() except? -1.0:
    """random(): a float in [0.0, 1.0) with 53 random bits."""
    cdef uint64_t r
    cdef int err = _api.random_u64(&r)
    if err:
        _raise_os_error(err)
    return _u64_to_double(r)


cdef inline bint _real(object x, double *out):
    """``x`` as a finite double, for a float or an int below 2**52 in
    magnitude (so its differences are exact too, as Python's int arithmetic
    is); False for anything else."""
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


cdef double _std_normal() except? -1.0:
    """Kinderman and Monahan's ratio method, as normalvariate() runs it."""
    cdef double u1, u2, z
    while True:
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


def normalvariate(self, mu=0.0, sigma=1.0):
    """Normal distribution: mean ``mu``, standard deviation ``sigma``."""
    if type(self) is not _plain_type:
        return _std.normalvariate(self, mu, sigma)
    return _normal(mu, sigma)


def _normalvariate_no_defaults(self, mu, sigma):
    """Normal distribution: mean ``mu``, standard deviation ``sigma``."""
    return normalvariate(self, mu, sigma)


def gauss(self, mu=0.0, sigma=1.0):
    """Gaussian distribution (mean ``mu``, standard deviation ``sigma``);
    unlike the stdlib's, no second value is kept in the instance, where a
    fork or another thread would see it again."""
    if type(self) is not _plain_type:
        return self.normalvariate(mu, sigma)
    return _normal(mu, sigma)


def _gauss_no_defaults(self, mu, sigma):
    """Gaussian distribution (mean ``mu``, standard deviation ``sigma``);
    nothing is kept in the instance."""
    return gauss(self, mu, sigma)


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


cdef object _expovariate(object self, object lambd):
    cdef double lam
    if type(self) is _plain_type and _real(lambd, &lam) and lam != 0.0:
        return -log(1.0 - _draw()) / lam
    return _std.expovariate(self, lambd)


def expovariate(self, lambd=1.0):
    """Exponential distribution with rate ``lambd`` (1 / the mean)."""
    return _expovariate(self, lambd)


def _expovariate_no_default(self, lambd):
    """Exponential distribution with rate ``lambd`` (1 / the mean)."""
    return _expovariate(self, lambd)


def vonmisesvariate(self, mu, kappa):
    """Circular data distribution: mean angle ``mu`` (radians),
    concentration ``kappa`` (>= 0); an angle in [0, 2*pi)."""
    cdef double m, k, s, r, u1, u2, u3, z, d, q, f
    if not (type(self) is _plain_type and _real(mu, &m) and _real(kappa, &k)):
        return _std.vonmisesvariate(self, mu, kappa)
    if k <= 1e-6:
        return _TWOPI * _draw()
    s = 0.5 / k
    r = s + sqrt(1.0 + s * s)
    while True:
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


cdef double _gamma(double alpha, double beta) except? -1.0:
    """The stdlib's gammavariate for alpha > 0 and beta > 0."""
    cdef double ainv, bbb, ccc, u, u1, u2, v, x, z, r, b, p
    if alpha > 1.0:
        # Cheng's rejection algorithm (R. C. H. Cheng, 1977)
        ainv = sqrt(2.0 * alpha - 1.0)
        bbb = alpha - _LOG4
        ccc = alpha + ainv
        while True:
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


include "_random_choices.pxi"


# 3.14 redraws where random() returned 0.0; 3.12 and 3.13 raise there.
cdef bint _BINOMIAL_REDRAWS_ZERO = _sys.version_info >= (3, 14)
_lgamma = _math.lgamma


cdef object _binomial(object self, long long n, double p):
    """The stdlib's binomialvariate for 0 < p < 1 and 0 <= n <= 2**52."""
    cdef long long x, y, k, m
    cdef double u, us, v, c, t, spq, a, b, vr, alpha, lpq, h
    cdef bint setup_complete = False
    if n == 1:
        return int(_draw() < p)
    if p > 0.5:  # symmetry: p <= 0.5 below
        return n - _binomial(self, n, 1.0 - p)
    if n * p < 10.0:
        # BG: Devroye's geometric method, O(np)
        x = y = 0
        c = log2(1.0 - p)
        if not c:
            return x
        while True:
            u = _draw()
            if u == 0.0:
                if _BINOMIAL_REDRAWS_ZERO:
                    continue
                _math.log2(0.0)  # the stdlib's ValueError
            t = floor(log2(u) / c)
            if t + 1.0 > <double>(n - y):
                return x
            y += <long long>t + 1
            x += 1
    # BTRS: Hörmann's transformed rejection with squeeze
    spq = sqrt(n * p * (1.0 - p))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    vr = 0.92 - 4.2 / b
    while True:
        u = _draw() - 0.5
        us = 0.5 - fabs(u)
        if us == 0.0:
            if _BINOMIAL_REDRAWS_ZERO:
                continue
            raise ZeroDivisionError("float division by zero")
        t = floor((2.0 * a / us + b) * u + c)
        if t < 0.0 or t > <double>n:
            continue
        k = <long long>t
        v = _draw()
        if us >= 0.07 and v <= vr:
            return k
        if not setup_complete:
            alpha = (2.83 + 5.1 / b) * spq
            lpq = log(p / (1.0 - p))
            m = <long long>floor((n + 1) * p)
            h = _lgamma(m + 1) + _lgamma(n - m + 1)
            setup_complete = True
        v *= alpha / (a / (us * us) + b)
        if v == 0.0:
            _math.log(0.0)  # the stdlib's ValueError
        if log(v) <= (h - <double>_lgamma(k + 1) - <double>_lgamma(n - k + 1)
                      + (k - m) * lpq):
            return k


def binomialvariate(self, n=1, p=0.5):
    """Binomial random variable: the number of successes in ``n``
    independent trials of probability ``p`` each (0 <= X <= n)."""
    cdef double q
    if (type(self) is _plain_type and type(n) is int
            and 0 <= n <= 4503599627370496 and _real(p, &q) and 0.0 < q < 1.0):
        return _binomial(self, n, q)
    return _std.binomialvariate(self, n, p)
