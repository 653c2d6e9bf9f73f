"""arc4py's numpy features: random arrays, fill() on ndarrays, BitGenerator.

Skipped as a whole when numpy is not installed; the behaviour *without* numpy
(ImportError naming the extra) is checked in a child interpreter where numpy
is made unimportable, so it runs whenever this file does.
"""
import copy
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed "
                         "(pip install 'arc4py[numpy]')")

import arc4py  # noqa: E402

PKG_PARENT = str(Path(arc4py.__file__).resolve().parent.parent)


def run_child(code, env_extra=None, timeout=120):
    """Run ``code`` in a fresh interpreter that imports this same arc4py
    (from a neutral directory, so a source checkout cannot shadow it)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [PKG_PARENT] + [p for p in [env.get("PYTHONPATH")] if p])
    env.update(env_extra or {})
    with tempfile.TemporaryDirectory() as cwd:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                              env=env, cwd=cwd, capture_output=True,
                              text=True, timeout=timeout)


def assert_varied(a):
    """A random array is not constant (the chance it is, for these sizes, is
    far below 2**-100)."""
    assert np.unique(a).size > 1


@pytest.fixture
def gen():
    return np.random.Generator(arc4py.BitGenerator())


# ---- random_u32 / random_u64 with size ------------------------------------------

@pytest.mark.parametrize("func, dtype", [(arc4py.random_u32, np.uint32),
                                         (arc4py.random_u64, np.uint64)])
class TestRandomArrays:
    @pytest.mark.parametrize("size, shape", [
        (1, (1,)), (7, (7,)), (1000, (1000,)), ((3, 4), (3, 4)),
        ((2, 3, 5), (2, 3, 5)), ((), ()), ([4, 2], (4, 2)),
        (np.int64(5), (5,)), ((np.int32(2), 3), (2, 3)),
    ])
    def test_shape_dtype_contiguous(self, func, dtype, size, shape):
        a = func(size=size)
        assert isinstance(a, np.ndarray)
        assert a.shape == shape
        assert a.dtype == dtype
        assert a.flags.c_contiguous and a.flags.writeable and a.flags.owndata

    def test_positional_size(self, func, dtype):
        assert func(6).shape == (6,)

    @pytest.mark.parametrize("size, shape", [(0, (0,)), ((0,), (0,)),
                                             ((3, 0), (3, 0))])
    def test_empty(self, func, dtype, size, shape):
        a = func(size=size)
        assert a.shape == shape and a.dtype == dtype and a.size == 0

    def test_distinct_values(self, func, dtype):
        a = func(size=4096)
        # Collisions among 4096 draws: ~0.002 expected for 32 bits, ~0 for 64.
        assert np.unique(a).size >= 4090

    def test_calls_differ(self, func, dtype):
        assert not np.array_equal(func(size=64), func(size=64))

    def test_full_range_used(self, func, dtype):
        a = func(size=1 << 14)
        top = np.iinfo(dtype).max
        # Both halves of the range and the high bits show up.
        assert (a > top // 2).any() and (a < top // 2).any()
        assert a.max() > top - top // 64

    def test_large_array_bits_balanced(self, func, dtype):
        # Large enough to take the GIL-free direct path.
        a = func(size=1 << 18)
        ones = np.unpackbits(a.view(np.uint8)).mean()
        assert abs(ones - 0.5) < 0.002

    @pytest.mark.parametrize("size", [1.5, "3", b"3", 2.0, (2, 1.0), (2, "x"),
                                      object(), (None,)])
    def test_bad_type(self, func, dtype, size):
        with pytest.raises(TypeError):
            func(size=size)

    @pytest.mark.parametrize("size", [-1, (-1,), (3, -2)])
    def test_negative(self, func, dtype, size):
        with pytest.raises(ValueError):
            func(size=size)

    def test_huge(self, func, dtype):
        with pytest.raises((MemoryError, OverflowError, ValueError)):
            func(size=(1 << 40, 1 << 40))
        with pytest.raises((MemoryError, OverflowError, ValueError)):
            func(size=2 ** 70)

    def test_scalar_without_size(self, func, dtype):
        v = func()
        assert isinstance(v, int) and 0 <= v <= np.iinfo(dtype).max


def test_array_functions_in_numpy_module():
    from arc4py import _numpy
    assert _numpy.random_u32_array(3).dtype == np.uint32
    assert _numpy.random_u64_array((2, 2)).shape == (2, 2)


# ---- fill() on numpy arrays -------------------------------------------------------

FILL_DTYPES = ["?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4",
               "f8", "c8", "c16", "S5", "U3", "V7", "i4,f8"]


@pytest.mark.parametrize("dtype", FILL_DTYPES)
@pytest.mark.parametrize("shape", [(0,), (1,), (17,), (3, 5), (2, 3, 4), (5000,)])
def test_fill_dtypes_and_shapes(dtype, shape):
    a = np.zeros(shape, dtype=dtype)
    assert arc4py.fill(a) == a.nbytes
    raw = a.view(np.uint8) if a.ndim else a.reshape(1).view(np.uint8)
    if a.nbytes >= 32:
        assert raw.any()
        assert_varied(raw)


def test_fill_zero_dim_array():
    a = np.zeros((), dtype=np.uint64)
    assert arc4py.fill(a) == 8


def test_fill_is_in_place_and_differs():
    a = np.zeros(256, dtype=np.uint64)
    b = np.zeros(256, dtype=np.uint64)
    arc4py.fill(a)
    arc4py.fill(b)
    assert not np.array_equal(a, b)
    before = a.copy()
    arc4py.fill(a)
    assert not np.array_equal(a, before)


def test_fill_slice_of_contiguous_array():
    a = np.zeros(100, dtype=np.uint8)
    assert arc4py.fill(a[10:20]) == 10
    assert not a[:10].any() and not a[20:].any()


def test_fill_refuses_read_only():
    a = np.zeros(16, dtype=np.uint8)
    a.flags.writeable = False
    with pytest.raises(TypeError):
        arc4py.fill(a)
    assert not a.any()


@pytest.mark.parametrize("make", [
    lambda: np.zeros(32, dtype=np.uint32)[::2],
    lambda: np.zeros((4, 6), dtype=np.uint16)[:, :3],
    lambda: np.zeros((4, 6), dtype=np.float64, order="F"),
    lambda: np.zeros((4, 6), dtype=np.uint8).T,
], ids=["step", "columns", "fortran", "transposed"])
def test_fill_refuses_non_contiguous(make):
    a = make()
    with pytest.raises((ValueError, BufferError)):
        arc4py.fill(a)
    assert not a.any()


def test_fill_refuses_object_arrays():
    # In a child: without the check, fill() corrupts the pointers and crashes.
    proc = run_child("""
        import numpy as np, arc4py
        for a in (np.array([1, "a", None], dtype=object),
                  np.zeros(3, dtype=[("x", "i4"), ("o", "O")])):
            try:
                arc4py.fill(a)
            except TypeError:
                pass
            else:
                raise SystemExit("fill() accepted an object array")
        print("ok")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


# ---- BitGenerator ------------------------------------------------------------------

def test_bitgenerator_is_numpy_bitgenerator():
    bg = arc4py.BitGenerator()
    assert isinstance(bg, np.random.BitGenerator)
    assert arc4py.BitGenerator is arc4py._numpy.BitGenerator
    assert bg.__doc__ and "abort" in bg.__doc__
    assert "arc4py.BitGenerator" in repr(bg)


def test_bitgenerator_lock():
    bg = arc4py.BitGenerator()
    with bg.lock:
        pass
    assert bg.lock is not arc4py.BitGenerator().lock


def test_bitgenerator_seed_rejected():
    arc4py.BitGenerator(None)
    arc4py.BitGenerator(seed=None)
    for seed in (0, 12345, [1, 2, 3], np.random.SeedSequence(1)):
        with pytest.raises(TypeError, match="cannot be seeded"):
            arc4py.BitGenerator(seed)


def test_bitgenerator_seed_seq_is_seedless():
    from numpy.random.bit_generator import SeedlessSeedSequence
    assert isinstance(arc4py.BitGenerator().seed_seq, SeedlessSeedSequence)


def test_bitgenerator_state():
    bg = arc4py.BitGenerator()
    assert bg.state == {"bit_generator": "arc4py.BitGenerator", "state": None}
    # its own state dict: accepted, changes nothing (there is nothing)
    bg.state = {"bit_generator": "arc4py.BitGenerator", "state": None}
    bg.state = arc4py.BitGenerator().state
    assert bg.state == {"bit_generator": "arc4py.BitGenerator", "state": None}
    assert bg.random_raw() != bg.random_raw()


@pytest.mark.parametrize("value", [3, None, "arc4py.BitGenerator",
                                   [("bit_generator", "arc4py.BitGenerator")]])
def test_bitgenerator_state_non_dict_is_type_error(value):
    with pytest.raises(TypeError):
        arc4py.BitGenerator().state = value
    with pytest.raises(TypeError):  # as numpy's own bit generators
        np.random.PCG64().state = value


@pytest.mark.parametrize("other", ["PCG64", "MT19937", "SFC64", "Philox"])
def test_bitgenerator_state_of_another_is_value_error(other):
    foreign = getattr(np.random, other)(1).state
    with pytest.raises(ValueError):
        arc4py.BitGenerator().state = foreign
    with pytest.raises(ValueError):  # numpy does the same the other way
        getattr(np.random, other)().state = arc4py.BitGenerator().state
    for bad in ({}, {"state": None},
                {"bit_generator": "arc4py.BitGenerator", "state": 5}):
        with pytest.raises(ValueError):
            arc4py.BitGenerator().state = bad


def test_global_set_bit_generator_then_seed():
    # multiprocessing worker initialisers call np.random.seed(); numpy then
    # reseeds a non-MT19937 global bit generator with type(bg)(None).state
    if not hasattr(np.random, "set_bit_generator"):
        pytest.skip("numpy.random.set_bit_generator is new in numpy 1.25")
    saved = np.random.get_bit_generator()
    try:
        np.random.set_bit_generator(arc4py.BitGenerator())
        np.random.seed()
        np.random.seed(None)
        assert isinstance(np.random.get_bit_generator(), arc4py.BitGenerator)
        xs = np.random.random(1000)
        assert len(set(xs.tolist())) == 1000
        with pytest.raises(TypeError, match="cannot be seeded"):
            np.random.seed(1234)  # a reproducible seed is refused
    finally:
        np.random.set_bit_generator(saved)


def test_randomstate_pickle_loads_without_replay():
    rs = np.random.RandomState(arc4py.BitGenerator())
    rs.random_sample(3)
    for dumped in (pickle.dumps(rs), pickle.dumps(rs, protocol=2)):
        copy_ = pickle.loads(dumped)
        assert isinstance(copy_, np.random.RandomState)
        assert isinstance(copy_._bit_generator, arc4py.BitGenerator)
        assert copy_._bit_generator is not rs._bit_generator
        assert not np.array_equal(copy_.random_sample(8), rs.random_sample(8))
        assert not np.array_equal(copy_.randint(0, 2 ** 62, 8),
                                  rs.randint(0, 2 ** 62, 8))
        assert copy_.standard_normal() != rs.standard_normal()
    assert isinstance(copy.deepcopy(rs)._bit_generator, arc4py.BitGenerator)


def test_randomstate_pickle_through_multiprocessing():
    import multiprocessing
    rs = np.random.RandomState(arc4py.BitGenerator())
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        got = pool.apply(_draw_with, (rs,))
    assert got.shape == (4,) and not np.array_equal(got, rs.random_sample(4))


def _draw_with(rs):
    return rs.random_sample(4)


def test_random_raw_takes_the_lock():
    import threading
    bg = arc4py.BitGenerator()
    done = threading.Event()

    def draw():
        bg.random_raw()
        bg.random_raw(4)
        done.set()

    with bg.lock:
        t = threading.Thread(target=draw)
        t.start()
        # while another holds the lock, random_raw waits (as numpy's do)
        assert not done.wait(0.2)
    t.join(30)
    assert done.is_set()


def test_capsule_valid():
    import ctypes
    bg = arc4py.BitGenerator()
    assert type(bg.capsule).__name__ == "PyCapsule"
    is_valid = ctypes.pythonapi.PyCapsule_IsValid
    is_valid.restype = ctypes.c_int
    is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    assert is_valid(bg.capsule, b"BitGenerator") == 1


def test_ctypes_interface():
    bg = arc4py.BitGenerator()
    iface = bg.ctypes
    draws = {iface.next_uint64(iface.state) for _ in range(64)}
    assert len(draws) == 64
    assert all(0 <= d < 2 ** 64 for d in draws)
    u32 = [iface.next_uint32(iface.state) for _ in range(64)]
    assert all(0 <= d < 2 ** 32 for d in u32) and len(set(u32)) > 60
    doubles = [iface.next_double(iface.state) for _ in range(64)]
    assert all(0.0 <= d < 1.0 for d in doubles) and len(set(doubles)) == 64


def test_cffi_interface_if_available():
    pytest.importorskip("cffi", reason="cffi is not installed")
    bg = arc4py.BitGenerator()
    iface = bg.cffi
    draws = {iface.next_uint64(iface.state) for _ in range(32)}
    assert len(draws) == 32


def test_random_raw():
    bg = arc4py.BitGenerator()
    v = bg.random_raw()
    assert isinstance(v, int) and 0 <= v < 2 ** 64
    a = bg.random_raw(1000)
    assert a.dtype == np.uint64 and a.shape == (1000,) and a.flags.c_contiguous
    assert np.unique(a).size == 1000
    assert bg.random_raw((3, 4)).shape == (3, 4)
    assert bg.random_raw(5, output=False) is None
    assert bg.random_raw(output=False) is None
    assert bg.random_raw(0).shape == (0,)
    with pytest.raises(TypeError):
        bg.random_raw(1.5)
    with pytest.raises(ValueError):
        bg.random_raw(-1)


def test_benchmark_hook_runs():
    # numpy's own helper drives the bitgen_t functions in a C loop.
    bg = arc4py.BitGenerator()
    bg._benchmark(1000, "uint64")
    bg._benchmark(1000, "double")


# Pickling and copying: a new, independent generator (documented).

def test_copy_gives_new_independent_generator():
    bg = arc4py.BitGenerator()
    for other in (copy.copy(bg), copy.deepcopy(bg)):
        assert isinstance(other, arc4py.BitGenerator)
        assert other is not bg
        assert not np.array_equal(other.random_raw(8), bg.random_raw(8))


def test_pickle_gives_new_independent_generator():
    bg = arc4py.BitGenerator()
    other = pickle.loads(pickle.dumps(bg))
    assert isinstance(other, arc4py.BitGenerator)
    assert other.state == bg.state
    g = np.random.Generator(bg)
    g2 = pickle.loads(pickle.dumps(g))
    assert isinstance(g2.bit_generator, arc4py.BitGenerator)
    assert g2.bit_generator is not bg
    assert not np.array_equal(g.random(8), g2.random(8))
    g3 = copy.deepcopy(g)
    assert isinstance(g3.bit_generator, arc4py.BitGenerator)


def test_spawn():
    bg = arc4py.BitGenerator()
    children = bg.spawn(3)
    assert len(children) == 3
    assert all(isinstance(c, arc4py.BitGenerator) for c in children)
    assert len({id(c) for c in children}) == 3
    assert bg.spawn(0) == []
    with pytest.raises(ValueError):
        bg.spawn(-1)
    gens = np.random.Generator(bg).spawn(2)
    assert all(isinstance(g.bit_generator, arc4py.BitGenerator) for g in gens)


def test_default_rng():
    g = arc4py.default_rng()
    assert isinstance(g, np.random.Generator)
    assert isinstance(g.bit_generator, arc4py.BitGenerator)
    assert arc4py.default_rng().bit_generator is not g.bit_generator


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


# ---- threads -------------------------------------------------------------------------

def _run_threads(target, n=4):
    results = [None] * n
    errors = []
    barrier = threading.Barrier(n)

    def work(i):
        try:
            barrier.wait()
            results[i] = target()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return results


def test_shared_generator_in_four_threads():
    g = np.random.Generator(arc4py.BitGenerator())
    results = _run_threads(lambda: np.concatenate(
        [g.integers(0, 2 ** 63, size=5000) for _ in range(20)]))
    allv = np.concatenate(results)
    assert allv.size == 4 * 100000
    assert np.unique(allv).size == allv.size


def test_generator_per_thread_in_four_threads():
    def work():
        g = arc4py.default_rng()
        return np.concatenate([g.random(10000) for _ in range(10)]
                              + [arc4py.random_u64(size=10000).astype(float)])
    results = _run_threads(work)
    allv = np.concatenate(results)
    assert np.unique(allv).size == allv.size


def test_bitgenerator_created_in_one_thread_used_in_another():
    bg = arc4py.BitGenerator()
    out = []
    t = threading.Thread(target=lambda: out.append(bg.random_raw(100)))
    t.start()
    t.join()
    assert np.unique(out[0]).size == 100


# ---- without numpy ---------------------------------------------------------------------

HIDE_NUMPY = {
    # As if numpy were not installed: a finder that refuses it.
    "finder": """
        import sys

        class NoNumpy:
            def find_spec(self, name, path=None, target=None):
                if name == "numpy" or name.startswith("numpy."):
                    raise ModuleNotFoundError(f"No module named {name!r}",
                                              name=name)
                return None

        sys.meta_path.insert(0, NoNumpy())
    """,
    # The usual trick; Cython's import fast path takes the None for a loaded
    # module, so arc4py._core turns any ImportError into the extra's message.
    "sys_modules_none": """
        import sys
        sys.modules["numpy"] = None
    """,
}


@pytest.mark.parametrize("how", [
    "finder",
    "sys_modules_none",
])
def test_without_numpy_import_works_and_numpy_features_say_extra(how):
    proc = run_child(HIDE_NUMPY[how] + """
        import arc4py
        assert 0 <= arc4py.arc4random() < 2 ** 32
        assert len(arc4py.arc4random_buf(5)) == 5
        checks = {
            "random_u32": lambda: arc4py.random_u32(size=3),
            "random_u64": lambda: arc4py.random_u64(size=3),
            "BitGenerator": lambda: arc4py.BitGenerator,
            "BitGenerator()": lambda: arc4py.BitGenerator(),
            "default_rng": lambda: arc4py.default_rng(),
        }
        for name, call in checks.items():
            try:
                call()
            except ImportError as exc:
                assert "arc4py[numpy]" in str(exc), (name, str(exc))
            else:
                raise SystemExit(f"{name} did not raise ImportError")
        try:
            from arc4py import BitGenerator
        except ImportError as exc:
            assert "arc4py[numpy]" in str(exc)
        else:
            raise SystemExit("from arc4py import BitGenerator did not raise")
        # Scalars need no numpy.
        assert isinstance(arc4py.random_u32(), int)
        assert isinstance(arc4py.random_u64(), int)
        print("ok")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


# ---- OS entropy failure ------------------------------------------------------------------

SHIM_SOURCE = Path(__file__).resolve().parent / "shims" / "getrandom_shim.c"


@pytest.fixture(scope="module")
def getrandom_shim(tmp_path_factory):
    if not sys.platform.startswith("linux"):
        pytest.skip("the getrandom LD_PRELOAD shim is Linux-only")
    if not SHIM_SOURCE.exists():
        pytest.skip(f"{SHIM_SOURCE} is missing")
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler to build the getrandom shim")
    out = tmp_path_factory.mktemp("shim") / "libgetrandom_shim.so"
    proc = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(out),
                           str(SHIM_SOURCE), "-ldl"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return str(out)


def _shim_env(shim):
    # Only calls from arc4py's generator fail, not the interpreter's own.
    return {"LD_PRELOAD": shim, "GETRANDOM_SHIM": "eperm",
            "GETRANDOM_SHIM_CALLER": "arc4py"}


def test_entropy_failure_raises_in_array_calls(getrandom_shim):
    proc = run_child("""
        import errno, arc4py, numpy
        bg = arc4py.BitGenerator()        # constructing draws nothing
        g = numpy.random.Generator(bg)
        for call in (lambda: arc4py.random_u32(size=3),
                     lambda: arc4py.random_u64(size=(1 << 16,)),
                     lambda: bg.random_raw(),
                     lambda: bg.random_raw(10)):
            try:
                call()
            except OSError as exc:
                assert exc.errno == errno.EPERM, exc
            else:
                raise SystemExit("no OSError")
        print("ok")
    """, env_extra=_shim_env(getrandom_shim))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_entropy_failure_inside_numpy_aborts(getrandom_shim):
    # bitgen_t cannot report errors: the documented behaviour is abort().
    proc = run_child("""
        import arc4py, numpy
        g = numpy.random.Generator(arc4py.BitGenerator())
        print("drawing", flush=True)
        x = g.random()
        print("returned", x, flush=True)
    """, env_extra=_shim_env(getrandom_shim))
    assert proc.returncode == -signal.SIGABRT, (proc.returncode, proc.stderr)
    assert "drawing" in proc.stdout and "returned" not in proc.stdout
    assert "arc4py: the OS could not provide entropy" in proc.stderr
    assert "numpy draw" in proc.stderr
