# The discrete draws of arc4py.Random, included by _random.pyx (its _draw,
# _real, _spin and _std): choices() and binomialvariate().
#
# choices: the stdlib's algorithm, an index floor(random() * n)
# without weights; with them, bisect_right over the cumulative weights of
# random() * total.  In C for a list or tuple population and weights of floats
# (or ints _real takes, and sums a double holds exactly): the comparisons are then
# those of Python's floats, so each draw picks what the stdlib's would.  For
# anything else, and for every error, the stdlib's own method runs.

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport Py_LT, PyObject_RichCompareBool

cdef double _TWO_53 = 9007199254740992.0


cdef bint _accumulate(object weights, Py_ssize_t n, double *cum):
    """``cum`` = itertools.accumulate(weights), exactly as Python sums them:
    False where a weight is not one ``_real`` takes, or a running sum of
    ints alone leaves the doubles' exact range (2**53)."""
    cdef Py_ssize_t i
    cdef double total = 0.0, w
    cdef bint ints_only = True
    for i in range(n):
        weight = PySequence_GetItem(weights, i)
        if not _real(weight, &w):
            return False
        if type(weight) is float:
            ints_only = False
        total = w if i == 0 else total + w
        if ints_only and not -_TWO_53 <= total <= _TWO_53:
            return False
        cum[i] = total
    return True


cdef inline Py_ssize_t _bisect_right(const double *a, Py_ssize_t hi,
                                     double x) noexcept nogil:
    """bisect.bisect_right(a, x, 0, hi)."""
    cdef Py_ssize_t lo = 0, mid
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef object _choices_weighted(object population, object weights, Py_ssize_t n,
                              Py_ssize_t k):
    """The stdlib's weighted choices, or None where it must run itself."""
    cdef Py_ssize_t i
    cdef double total
    cdef double *cum = <double *>PyMem_Malloc(n * sizeof(double))
    if cum == NULL:
        raise MemoryError()
    try:
        if not _accumulate(weights, n, cum):
            return None
        total = cum[n - 1] + 0.0
        if not (total > 0.0 and isfinite(total)):
            return None  # the stdlib's ValueError (or, before 3.10, its result)
        out = []
        for i in range(k):
            out.append(PySequence_GetItem(
                population, _bisect_right(cum, n - 1, _draw() * total)))
        return out
    finally:
        PyMem_Free(cum)


cdef object _choices_cumulative(object population, object cum_weights,
                                Py_ssize_t n, Py_ssize_t k):
    """The stdlib's choices over ``cum_weights`` (a list or tuple of length
    ``n``), or None where it must run itself.  It bisects the sequence in
    place (no O(n) pass): a float compares in C, anything else as bisect
    compares it."""
    cdef Py_ssize_t i, lo, hi, mid
    cdef double total, x
    cdef bint below
    if not _real(PySequence_GetItem(cum_weights, n - 1), &total):
        return None
    total += 0.0
    if not (total > 0.0 and isfinite(total)):
        return None
    out = []
    for i in range(k):
        x = _draw() * total
        lo = 0
        hi = n - 1
        while lo < hi:
            mid = lo + (hi - lo) // 2
            item = PySequence_GetItem(cum_weights, mid)
            if type(item) is float:
                below = x < <double>item
            else:
                below = PyObject_RichCompareBool(x, item, Py_LT)
            if below:
                hi = mid
            else:
                lo = mid + 1
        out.append(PySequence_GetItem(population, lo))
    return out


cdef object _choices(object self, object population, object weights,
                     object cum_weights, object k):
    """Random.choices(): in C where it can, else the stdlib's."""
    cdef Py_ssize_t n, i, count, index
    cdef double nf
    if (type(self) is not _plain_type or type(k) is not int
            or not 0 <= k <= PY_SSIZE_T_MAX
            or (type(population) is not list and type(population) is not tuple)):
        return _std.choices(self, population, weights, cum_weights=cum_weights,
                            k=k)
    n = len(population)
    count = k
    if weights is None and cum_weights is None and n:
        nf = <double>n
        out = []
        for i in range(count):
            index = <Py_ssize_t>(_draw() * nf)
            # (a list's own indexing: safe against a concurrent resize)
            out.append(PySequence_GetItem(population, index))
        return out
    out = None
    if n == 0 or (weights is not None and cum_weights is not None):
        pass  # the stdlib's errors
    elif cum_weights is None:
        if ((type(weights) is list or type(weights) is tuple)
                and len(weights) == n):
            out = _choices_weighted(population, weights, n, count)
    elif ((type(cum_weights) is list or type(cum_weights) is tuple)
            and len(cum_weights) == n):
        out = _choices_cumulative(population, cum_weights, n, count)
    if out is None:
        return _std.choices(self, population, weights, cum_weights=cum_weights,
                            k=k)
    return out


# 3.14 redraws where random() returned 0.0; 3.12 and 3.13 raise there.
cdef bint _BINOMIAL_REDRAWS_ZERO = _sys.version_info >= (3, 14)
_lgamma = _math.lgamma


cdef object _binomial(object self, long long n, double p):
    """The stdlib's binomialvariate for 0 < p < 1 and 0 <= n <= 2**52."""
    cdef long long x, y, k, m
    cdef double u, us, v, c, t, spq, a, b, vr, alpha, lpq, h
    cdef bint setup_complete = False
    cdef unsigned tries = 0
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
            _spin(&tries)
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
        _spin(&tries)
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
