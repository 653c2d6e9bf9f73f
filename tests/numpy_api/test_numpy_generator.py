"""numpy.random.Generator(arc4py.BitGenerator()): every Generator method we
rely on draws correctly from the CSPRNG.  (Split from test_numpy.py.)"""

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed "
                         "(pip install 'arc4py[numpy]')")

import arc4py  # noqa: E402


def assert_varied(a):
    """A random array is not constant (the chance it is, for these sizes, is
    far below 2**-100)."""
    assert np.unique(a).size > 1


@pytest.fixture
def gen():
    return np.random.Generator(arc4py.BitGenerator())


# ---- every Generator method we rely on -----------------------------------------------

INT_CASES = [
    (np.int8, -128, 127), (np.uint8, 0, 255), (np.int16, -5, 5),
    (np.uint16, 0, 65535), (np.int32, -(2 ** 31), 2 ** 31 - 1),
    (np.uint32, 0, 2 ** 32 - 1), (np.int64, -(2 ** 63), 2 ** 63 - 1),
    (np.uint64, 0, 2 ** 64 - 1), (np.int64, 10, 17), (np.uint32, 0, 1),
    (np.int64, 0, 2 ** 40), (bool, 0, 1),
]


@pytest.mark.parametrize("dtype, low, high", INT_CASES)
@pytest.mark.parametrize("endpoint", [False, True])
def test_integers(gen, dtype, low, high, endpoint):
    if not endpoint:
        high_arg = high + 1
    else:
        high_arg = high
    if not endpoint and dtype is not bool and high_arg > np.iinfo(dtype).max:
        # Exclusive high past the dtype: draw [low, high) instead.
        high_arg, high = high, high - 1
    a = gen.integers(low, high_arg, size=4000, dtype=dtype, endpoint=endpoint)
    assert a.dtype == np.dtype(dtype)
    assert a.min() >= low and a.max() <= high
    assert_varied(a)
    if high - low < 100:
        # Small ranges: every value turns up in 4000 draws.
        assert np.unique(a).size == high - low + 1


def test_integers_scalar_and_default_dtype(gen):
    v = gen.integers(10)
    assert 0 <= v < 10
    a = gen.integers(-3, 3, size=(10, 10))
    assert a.shape == (10, 10) and a.dtype == np.int64
    assert a.min() >= -3 and a.max() < 3
    assert gen.integers(5, 6, size=10).tolist() == [5] * 10


def test_integers_unbiased_small_range(gen):
    a = gen.integers(0, 3, size=30000)
    counts = np.bincount(a, minlength=3)
    # Each count ~ 10000 +- 82 (sd); 6 sd tolerance.
    assert (np.abs(counts - 10000) < 500).all()


def test_random(gen):
    a = gen.random(100000)
    assert a.dtype == np.float64
    assert a.min() >= 0.0 and a.max() < 1.0
    assert abs(a.mean() - 0.5) < 0.01
    assert np.unique(a).size == a.size
    f = gen.random(10000, dtype=np.float32)
    assert f.dtype == np.float32 and f.min() >= 0.0 and f.max() < 1.0
    assert isinstance(gen.random(), float)
    out = np.empty(50)
    gen.random(out=out)
    assert_varied(out)


def test_random_uses_53_bits(gen):
    a = gen.random(10000)
    # Some draws use the lowest bits of the 53-bit mantissa grid.
    ints = (a * 2.0 ** 53).astype(np.uint64)
    assert (ints & 1).any()


def test_standard_normal_and_normal(gen):
    a = gen.standard_normal(100000)
    assert abs(a.mean()) < 0.02 and abs(a.std() - 1.0) < 0.02
    f = gen.standard_normal(1000, dtype=np.float32)
    assert f.dtype == np.float32
    b = gen.normal(10.0, 2.0, size=100000)
    assert abs(b.mean() - 10.0) < 0.05 and abs(b.std() - 2.0) < 0.05
    assert gen.normal(size=(2, 3)).shape == (2, 3)


def test_exponential(gen):
    a = gen.exponential(3.0, size=100000)
    assert a.min() >= 0.0
    assert abs(a.mean() - 3.0) < 0.1
    s = gen.standard_exponential(1000)
    assert s.min() >= 0.0


def test_uniform(gen):
    a = gen.uniform(-2.0, 5.0, size=100000)
    assert a.min() >= -2.0 and a.max() < 5.0
    assert abs(a.mean() - 1.5) < 0.05


def test_other_distributions(gen):
    assert gen.poisson(4.0, size=10000).mean() == pytest.approx(4.0, abs=0.15)
    assert gen.binomial(10, 0.3, size=10000).mean() == pytest.approx(3.0, abs=0.1)
    g = gen.gamma(2.0, 1.0, size=10000)
    assert g.min() > 0 and g.mean() == pytest.approx(2.0, abs=0.1)
    b = gen.beta(2.0, 5.0, size=10000)
    assert b.min() >= 0 and b.max() <= 1
    assert gen.multivariate_normal([0, 0], [[1, 0], [0, 1]], size=5).shape == (5, 2)


def test_choice(gen):
    pool = np.arange(100)
    a = gen.choice(pool, size=1000)
    assert set(a.tolist()) <= set(range(100))
    assert_varied(a)
    # Without replacement: distinct elements of the pool.
    b = gen.choice(pool, size=100, replace=False)
    assert sorted(b.tolist()) == list(range(100))
    c = gen.choice(10, size=5, replace=False)
    assert len(set(c.tolist())) == 5 and max(c) < 10
    d = gen.choice(["a", "b", "c"], size=300, p=[0.0, 0.5, 0.5])
    assert "a" not in d.tolist() and {"b", "c"} == set(d.tolist())
    assert gen.choice(5) in range(5)
    with pytest.raises(ValueError):
        gen.choice(3, size=4, replace=False)


def test_shuffle_and_permutation(gen):
    a = np.arange(1000)
    gen.shuffle(a)
    assert sorted(a.tolist()) == list(range(1000))
    assert a.tolist() != list(range(1000))
    m = np.arange(20).reshape(5, 4)
    gen.shuffle(m)  # rows
    assert sorted(map(tuple, m.tolist())) == [tuple(range(i * 4, i * 4 + 4))
                                              for i in range(5)]
    p = gen.permutation(1000)
    assert sorted(p.tolist()) == list(range(1000))
    assert p.tolist() != list(range(1000))
    src = np.arange(50)
    q = gen.permutation(src)
    assert src.tolist() == list(range(50))  # a copy, the input untouched
    assert sorted(q.tolist()) == list(range(50))
    r = gen.permuted(np.arange(12).reshape(3, 4), axis=1)
    assert sorted(r.ravel().tolist()) == list(range(12))


def test_bytes(gen):
    b = gen.bytes(100)
    assert isinstance(b, bytes) and len(b) == 100
    assert b != gen.bytes(100)
    assert gen.bytes(0) == b""


def test_two_generators_differ():
    g1 = np.random.Generator(arc4py.BitGenerator())
    g2 = np.random.Generator(arc4py.BitGenerator())
    assert not np.array_equal(g1.random(16), g2.random(16))
    assert not np.array_equal(g1.integers(0, 2 ** 62, size=16),
                              g2.integers(0, 2 ** 62, size=16))


def test_same_generator_not_repeating(gen):
    assert not np.array_equal(gen.random(16), gen.random(16))
