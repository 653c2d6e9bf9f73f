"""arc4py.Random (the random.Random drop-in) and the secrets-style helpers.

Every stdlib method of random.Random is called on arc4py.Random and its
results checked for type and range; distributions get loose moment checks
(tolerances of many standard errors, so they never flake).
"""
import base64
import math
import random
import re
import statistics
import string

import pytest

import arc4py

N = 20000


@pytest.fixture
def rng():
    return arc4py.Random()


def test_is_random_subclass(rng):
    assert isinstance(rng, random.Random)
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
    with pytest.raises(IndexError):
        rng.choice([])


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
    assert type(f()) is float


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
        xs = _draws(lambda: rng.gammavariate(alpha, 2.0), n=10000)
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


# ---- no state -----------------------------------------------------------------------

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


# ---- secrets-style helpers ----------------------------------------------------------

def test_token_bytes():
    t = arc4py.token_bytes()
    assert type(t) is bytes and len(t) == 32
    assert arc4py.DEFAULT_ENTROPY == 32
    for n in (0, 1, 16, 64, 1000):
        assert len(arc4py.token_bytes(n)) == n
    assert arc4py.token_bytes() != arc4py.token_bytes()
    assert arc4py.token_bytes(None) != arc4py.token_bytes(None)


def test_token_hex():
    t = arc4py.token_hex()
    assert type(t) is str and len(t) == 64
    assert re.fullmatch("[0-9a-f]{64}", t)
    for n in (0, 1, 5, 100):
        assert len(arc4py.token_hex(n)) == 2 * n
    assert arc4py.token_hex(8) != arc4py.token_hex(8)


URLSAFE = set(string.ascii_letters + string.digits + "-_")


def test_token_urlsafe():
    t = arc4py.token_urlsafe()
    assert type(t) is str
    # 32 bytes -> 43 unpadded Base64 characters.
    assert len(t) == 43 and set(t) <= URLSAFE and "=" not in t
    for n in (0, 1, 2, 3, 16, 100):
        s = arc4py.token_urlsafe(n)
        assert set(s) <= URLSAFE
        assert len(s) == math.ceil(n * 4 / 3)
        assert len(base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))) == n
    # Every character of the alphabet turns up over many tokens.
    seen = set("".join(arc4py.token_urlsafe(64) for _ in range(50)))
    assert seen == URLSAFE


@pytest.mark.parametrize("func", [arc4py.token_bytes, arc4py.token_hex,
                                  arc4py.token_urlsafe])
def test_token_bad_input(func):
    with pytest.raises(TypeError):
        func(1.5)
    with pytest.raises(TypeError):
        func("3")
    with pytest.raises(ValueError):
        func(-1)


def test_choice_helper():
    seq = "abcdef"
    assert {arc4py.choice(seq) for _ in range(500)} == set(seq)
    assert arc4py.choice([42]) == 42
    assert arc4py.choice(range(3, 10 ** 18)) in range(3, 10 ** 18)
    big = list(range(1000))
    assert len({arc4py.choice(big) for _ in range(2000)}) > 800
    for empty in ([], "", (), range(0)):
        with pytest.raises(IndexError):
            arc4py.choice(empty)


def test_matches_secrets_api():
    import secrets
    for name in ("token_bytes", "token_hex", "token_urlsafe", "choice"):
        assert callable(getattr(arc4py, name)) and hasattr(secrets, name)
