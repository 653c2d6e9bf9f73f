"""arc4py.Random (the random.Random drop-in) and the secrets-style helpers.

Every stdlib method of random.Random is called on arc4py.Random and its
results checked for type and range; distributions get loose moment checks
(tolerances of many standard errors, so they never flake).
"""
import math
import os
import random
import statistics
import sys

import pytest

import arc4py

N = 20000


@pytest.fixture
def rng():
    return arc4py.Random()


def test_is_random_subclass(rng):
    assert isinstance(rng, random.Random)
    # and what it is: a generator that draws from the OS's kind of source
    assert isinstance(rng, random.SystemRandom)
    assert issubclass(arc4py.SystemRandom, random.SystemRandom)
    assert issubclass(arc4py.Random, random.Random)
    assert arc4py.Random.__doc__


# ---- the three primitives ---------------------------------------------------------

def test_random(rng):
    xs = [rng.random() for _ in range(N)]
    assert all(type(x) is float and 0.0 <= x < 1.0 for x in xs)
    assert len(set(xs)) == N
    assert abs(statistics.fmean(xs) - 0.5) < 0.02


@pytest.mark.parametrize("k", list(range(0, 301)))
def test_getrandbits(rng, k):
    values = [rng.getrandbits(k) for _ in range(8)]
    assert all(type(v) is int and 0 <= v < 2 ** k for v in values)
    if k >= 16:
        assert len(set(values)) > 1
    if k == 0:
        assert values == [0] * 8


def test_getrandbits_uses_top_bit(rng):
    for k in (1, 7, 32, 33, 64, 65, 300):
        assert any(rng.getrandbits(k) >> (k - 1) for _ in range(200))


def test_getrandbits_impossible_sizes(rng):
    # (k + 7) // 8 in C once overflowed here into a negative byte count
    for k in (sys.maxsize, sys.maxsize - 1, sys.maxsize - 6, 2 ** 63 + 5):
        with pytest.raises((MemoryError, OverflowError)):
            rng.getrandbits(k)
        with pytest.raises((MemoryError, OverflowError)):
            arc4py.randbits(k)


def test_getrandbits_negative(rng):
    with pytest.raises(ValueError):
        rng.getrandbits(-1)


def test_randbytes(rng):
    for n in (0, 1, 16, 1000, 5000):
        b = rng.randbytes(n)
        assert type(b) is bytes and len(b) == n
    assert rng.randbytes(32) != rng.randbytes(32)
    with pytest.raises(ValueError):
        rng.randbytes(-1)


# ---- integers ---------------------------------------------------------------------

def test_randint(rng):
    xs = [rng.randint(-3, 3) for _ in range(2000)]
    assert set(xs) == set(range(-3, 4))
    assert rng.randint(5, 5) == 5
    with pytest.raises(ValueError):
        rng.randint(3, 2)


def test_randrange(rng):
    assert set(rng.randrange(10) for _ in range(1000)) == set(range(10))
    assert set(rng.randrange(5, 10) for _ in range(1000)) == set(range(5, 10))
    with pytest.raises(ValueError):
        rng.randrange(0)
    with pytest.raises(ValueError):
        rng.randrange(5, 5)


def test_randrange_step(rng):
    xs = {rng.randrange(1, 100, 7) for _ in range(3000)}
    assert xs == set(range(1, 100, 7))
    ys = {rng.randrange(10, 0, -3) for _ in range(1000)}
    assert ys == {10, 7, 4, 1}
    with pytest.raises(ValueError):
        rng.randrange(0, 10, 0)


@pytest.mark.parametrize("bits", [33, 64, 65, 128, 1000])
def test_randrange_huge(rng, bits):
    n = 2 ** bits - 12345
    xs = [rng.randrange(n) for _ in range(200)]
    assert all(0 <= x < n for x in xs)
    assert len(set(xs)) == 200
    # Some draws land in the top half (not stuck in low bits).
    assert any(x >= n // 2 for x in xs)
    lo = -(2 ** bits)
    ys = [rng.randrange(lo, n, 3) for _ in range(100)]
    assert all(lo <= y < n and (y - lo) % 3 == 0 for y in ys)


def test_randrange_unbiased_small(rng):
    counts = [0] * 3
    for _ in range(30000):
        counts[rng.randrange(3)] += 1
    assert all(abs(c - 10000) < 600 for c in counts)


# ---- sequences --------------------------------------------------------------------

def test_choice(rng):
    seq = list("abcdef")
    picks = {rng.choice(seq) for _ in range(500)}
    assert picks == set(seq)
    assert rng.choice(range(10 ** 18)) < 10 ** 18


def _stdlib_error(call):
    """The exception type the stdlib's own SystemRandom raises for ``call``."""
    try:
        call(random.SystemRandom())
    except Exception as exc:
        return type(exc)
    raise AssertionError("the stdlib raised nothing")


@pytest.mark.parametrize("empty", [[], "", (), range(0)])
def test_choice_empty_as_this_python(rng, empty):
    # 3.9/3.10: _randbelow(0) returns 0 and the indexing raises IndexError;
    # 3.11+: choice() checks first.  Either way this Python's own error.
    expected = _stdlib_error(lambda r: r.choice(empty))
    assert expected is IndexError
    with pytest.raises(expected):
        rng.choice(empty)


def test_randbelow_zero_as_this_python(rng):
    if sys.version_info < (3, 11):
        # documented there: "Returns 0 if n==0."
        assert random.SystemRandom()._randbelow(0) == 0
        assert rng._randbelow(0) == 0
    else:
        with pytest.raises(ValueError):
            rng._randbelow(0)
    for n in (1, 2, 3, 2 ** 32, 2 ** 32 + 1, 2 ** 63, 2 ** 64 - 1, 2 ** 64,
              2 ** 200 + 7):
        assert all(0 <= rng._randbelow(n) < n for _ in range(50))
    assert {rng._randbelow(3) for _ in range(200)} == {0, 1, 2}
    with pytest.raises(TypeError):
        rng._randbelow(2.0)


def test_randbelow_unbiased_across_bit_lengths(rng):
    # n just above a power of two: a modulo or a wrong shift shows at once.
    n = 2 ** 40 + 1
    draws = [rng._randbelow(n) for _ in range(20000)]
    assert max(draws) < n
    top = sum(d >= 2 ** 39 for d in draws)
    assert abs(top - 10000) < 600  # ~8.5 sigma


def test_choices(rng):
    pop = ["a", "b", "c"]
    xs = rng.choices(pop, k=3000)
    assert len(xs) == 3000 and set(xs) == set(pop)
    ws = rng.choices(pop, weights=[0, 1, 3], k=4000)
    assert "a" not in ws
    assert 0.7 < ws.count("c") / len(ws) < 0.8
    cs = rng.choices(pop, cum_weights=[1, 1, 2], k=1000)
    assert "b" not in cs
    assert rng.choices(pop, k=0) == []
    with pytest.raises(TypeError):
        rng.choices(pop, weights=[1, 1, 1], cum_weights=[1, 2, 3])


def test_shuffle(rng):
    items = list(range(200))
    rng.shuffle(items)
    assert sorted(items) == list(range(200))
    assert items != list(range(200))
    one = [1]
    rng.shuffle(one)
    assert one == [1]


def test_sample(rng):
    pop = list(range(100))
    s = rng.sample(pop, 10)
    assert len(s) == 10 and len(set(s)) == 10 and set(s) <= set(pop)
    assert sorted(rng.sample(pop, 100)) == pop
    assert rng.sample(range(10 ** 12), 3)[0] < 10 ** 12
    c = rng.sample(["x", "y"], counts=[3, 2], k=5)
    assert sorted(c) == ["x", "x", "x", "y", "y"]
    with pytest.raises(ValueError):
        rng.sample(pop, 101)


# ---- real-valued distributions ------------------------------------------------------

def _draws(f, n=N):
    return [f() for _ in range(n)]


def test_uniform(rng):
    xs = _draws(lambda: rng.uniform(-2.0, 5.0))
    assert all(-2.0 <= x <= 5.0 for x in xs)
    assert abs(statistics.fmean(xs) - 1.5) < 0.1


def test_triangular(rng):
    xs = _draws(lambda: rng.triangular(0.0, 10.0, 2.0))
    assert all(0.0 <= x <= 10.0 for x in xs)
    assert abs(statistics.fmean(xs) - 4.0) < 0.1
    assert all(0.0 <= rng.triangular() <= 1.0 for _ in range(100))


@pytest.mark.parametrize("name", ["gauss", "normalvariate"])
def test_normal(rng, name):
    f = getattr(rng, name)
    xs = _draws(lambda: f(10.0, 2.0))
    assert all(type(x) is float for x in xs)
    assert abs(statistics.fmean(xs) - 10.0) < 0.1
    assert abs(statistics.pstdev(xs) - 2.0) < 0.1


@pytest.mark.parametrize("name", ["gauss", "normalvariate"])
def test_normal_signature_as_this_python(rng, name):
    import inspect
    ours = inspect.signature(getattr(rng, name))
    stdlib = inspect.signature(getattr(random.Random(), name))
    assert list(ours.parameters) == list(stdlib.parameters)
    assert ([p.default for p in ours.parameters.values()]
            == [p.default for p in stdlib.parameters.values()])
    if sys.version_info >= (3, 11):  # the defaults mu=0.0, sigma=1.0
        assert type(getattr(rng, name)()) is float
    else:
        with pytest.raises(TypeError):
            getattr(rng, name)()


def test_gauss_caches_nothing(rng):
    before = dict(vars(rng))
    for _ in range(10):
        rng.gauss(0.0, 1.0)
    # the stdlib keeps its spare value in gauss_next; ours keeps none
    assert getattr(rng, "gauss_next", None) is None
    assert dict(vars(rng)) == before


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_gauss_after_fork_differs(rng):
    # With a cached spare value, parent and child would both return it.
    for _ in range(5):
        rng.gauss(0.0, 1.0)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: report its next gauss(), then leave at once
            os.close(r)
            os.write(w, repr(rng.gauss(0.0, 1.0)).encode())
            os._exit(0)
        os.close(w)
        mine = rng.gauss(0.0, 1.0)
        with os.fdopen(r) as f:
            child = float(f.read())
        os.waitpid(pid, 0)
        assert mine != child


def test_lognormvariate(rng):
    xs = _draws(lambda: rng.lognormvariate(0.0, 0.5))
    assert all(x > 0 for x in xs)
    logs = [math.log(x) for x in xs]
    assert abs(statistics.fmean(logs)) < 0.03


def test_expovariate(rng):
    xs = _draws(lambda: rng.expovariate(2.0))
    assert all(x >= 0 for x in xs)
    assert abs(statistics.fmean(xs) - 0.5) < 0.03


def test_vonmisesvariate(rng):
    xs = _draws(lambda: rng.vonmisesvariate(1.0, 4.0), n=5000)
    assert all(0.0 <= x <= 2 * math.pi for x in xs)
    mean_angle = math.atan2(statistics.fmean(math.sin(x) for x in xs),
                            statistics.fmean(math.cos(x) for x in xs))
    assert abs(mean_angle - 1.0) < 0.1
    assert 0.0 <= rng.vonmisesvariate(0.0, 0.0) <= 2 * math.pi


def test_gammavariate(rng):
    for alpha in (0.5, 1.0, 3.0):
        xs = _draws(lambda a=alpha: rng.gammavariate(a, 2.0), n=10000)
        assert all(x > 0 for x in xs)
        assert abs(statistics.fmean(xs) - 2.0 * alpha) < 0.15 * alpha + 0.1
    with pytest.raises(ValueError):
        rng.gammavariate(-1.0, 1.0)


def test_betavariate(rng):
    xs = _draws(lambda: rng.betavariate(2.0, 5.0), n=10000)
    assert all(0.0 <= x <= 1.0 for x in xs)
    assert abs(statistics.fmean(xs) - 2.0 / 7.0) < 0.02


def test_paretovariate(rng):
    xs = _draws(lambda: rng.paretovariate(3.0), n=10000)
    assert all(x >= 1.0 for x in xs)
    assert abs(statistics.fmean(xs) - 1.5) < 0.1


def test_weibullvariate(rng):
    xs = _draws(lambda: rng.weibullvariate(2.0, 1.0), n=10000)
    assert all(x >= 0 for x in xs)
    assert abs(statistics.fmean(xs) - 2.0) < 0.1


@pytest.mark.skipif(not hasattr(random.Random, "binomialvariate"),
                    reason="random.Random.binomialvariate is new in Python 3.12")
def test_binomialvariate(rng):
    xs = _draws(lambda: rng.binomialvariate(20, 0.3), n=10000)
    assert all(type(x) is int and 0 <= x <= 20 for x in xs)
    assert abs(statistics.fmean(xs) - 6.0) < 0.15
    assert rng.binomialvariate(0, 0.5) == 0
    assert rng.binomialvariate(5, 1.0) == 5


# ---- subclassing, as CPython's TestRandomSubclassing does it -----------------------

def test_methods_bind_like_python_methods(rng):
    for name in ("gauss", "triangular", "choices"):
        meth = getattr(rng, name)
        assert meth.__self__ is rng, name
        assert meth.__func__ is vars(arc4py.Random)[name], name
    # The primitives are method descriptors of a C base type, as the
    # Mersenne Twister's own are (CPython specialises their calls).
    for name in ("random", "getrandbits", "randbytes", "_randbelow"):
        assert type(getattr(arc4py.Random, name)) is type(random.Random.random)
        assert getattr(rng, name).__self__ is rng, name
    assert type(arc4py.Random.random(rng)) is float
    assert 0 <= arc4py.Random.getrandbits(rng, 70) < 2 ** 70
    assert len(arc4py.Random.randbytes(rng, 5)) == 5
    assert 0 <= arc4py.Random._randbelow(rng, 10) < 10
    with pytest.raises(TypeError):
        arc4py.Random.random()  # unbound, no instance: like any method


def test_subclass_with_kwargs():
    class Subclass(arc4py.Random):
        def __init__(self, newarg=None):
            arc4py.Random.__init__(self)
    assert 0.0 <= Subclass(newarg=1).random() < 1.0


def test_subclasses_overriding_methods():
    called = set()

    class SubRandom(arc4py.Random):
        def random(self):
            called.add("SubRandom.random")
            return arc4py.Random.random(self)

    class SubGetrandbits(arc4py.Random):
        def getrandbits(self, k):
            called.add("SubGetrandbits.getrandbits")
            return arc4py.Random.getrandbits(self, k)

    class SubBoth(SubRandom, SubGetrandbits):
        pass

    # The stdlib's __init_subclass__ picks _randbelow from what a subclass
    # overrides; randrange must then go through the override.
    r = SubRandom()
    assert 0 <= r.randrange(100) < 100 and 0.0 <= r.random() < 1.0
    assert "SubRandom.random" in called
    called.clear()
    r = SubGetrandbits()
    assert 0 <= r.randrange(100) < 100
    assert called == {"SubGetrandbits.getrandbits"}
    called.clear()
    r = SubBoth()
    assert 0 <= r.randrange(100) < 100 and 0 <= r.getrandbits(9) < 512
    assert "SubGetrandbits.getrandbits" in called
    assert len(SubGetrandbits().randbytes(7)) == 7


def test_subclass_super_calls():
    class Sub(arc4py.Random):
        def random(self):
            return super().random() / 2

        def getrandbits(self, k):
            return super().getrandbits(k) | 1

    r = Sub()
    assert all(0.0 <= r.random() < 0.5 for _ in range(100))
    assert all(r.getrandbits(8) & 1 for _ in range(100))


def test_seed_is_ignored():
    a = arc4py.Random(1234)
    b = arc4py.Random(1234)
    assert [a.random() for _ in range(8)] != [b.random() for _ in range(8)]
    a.seed(1234)
    b.seed(1234)
    assert a.getrandbits(128) != b.getrandbits(128)
    assert a.seed() is None
    a.seed("text", version=2)


def test_getstate_setstate_not_implemented(rng):
    with pytest.raises(NotImplementedError):
        rng.getstate()
    with pytest.raises(NotImplementedError):
        rng.setstate(random.Random(1).getstate())


def test_instances_and_module_differ():
    xs = {arc4py.Random().getrandbits(64) for _ in range(100)}
    assert len(xs) == 100
