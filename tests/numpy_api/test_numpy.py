"""arc4py's numpy features: random arrays, fill() on ndarrays, BitGenerator.

Skipped as a whole when numpy is not installed; the behaviour *without* numpy
(ImportError naming the extra, BitGenerator absent) is checked in a child
interpreter where numpy is made unimportable, so it runs whenever this file
does.
"""
import signal
import textwrap
import threading

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed "
                         "(pip install 'arc4py[numpy]')")

import arc4py  # noqa: E402
from helpers import NO_NUMPY_FINDER, run_child, shim_env  # noqa: E402


def assert_varied(a):
    """A random array is not constant (the chance it is, for these sizes, is
    far below 2**-100)."""
    assert np.unique(a).size > 1


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


def test_sized_calls_go_straight_to_numpy_from_c():
    # A fresh interpreter's first sized call loads numpy's C API from
    # arc4py._core's C and makes the array there: arc4py._numpy (the
    # BitGenerator's module) stays unloaded.
    proc = run_child("""
        import sys, arc4py
        assert "numpy" not in sys.modules
        a = arc4py.random(size=(2, 3))
        b = arc4py.arc4random_uniform(6, size=8)
        c = arc4py.random_u32(size=2)
        assert "numpy" in sys.modules and "arc4py._numpy" not in sys.modules
        assert b.max() < 6 and c.dtype == "uint32"
        print(a.dtype, a.shape)
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "float64 (2, 3)"


def test_scalar_draws_never_import_numpy():
    proc = run_child("""
        import sys, arc4py
        r = arc4py.Random()
        for draw in (arc4py.arc4random, arc4py.random_u32, arc4py.random_u64,
                     arc4py.random, lambda: arc4py.random_u32(None),
                     lambda: arc4py.random_u64(size=None),
                     lambda: arc4py.random(size=None),
                     lambda: arc4py.arc4random(size=None),
                     lambda: arc4py.arc4random_uniform(6),
                     lambda: arc4py.arc4random_uniform(6, size=None),
                     lambda: arc4py.randbelow(10 ** 30),
                     lambda: arc4py.randbits(100),
                     lambda: arc4py.arc4random_buf(16),
                     lambda: arc4py.fill(bytearray(16)),
                     lambda: arc4py.randint(1, 6), lambda: arc4py.gauss(0.0, 1.0),
                     r.random, lambda: r.choices(range(5), k=3),
                     arc4py.uuid4, arc4py.uuid7, arc4py.token_hex):
            draw()
        assert "numpy" not in sys.modules, "a scalar draw imported numpy"
        print("ok")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


@pytest.mark.parametrize("size, exc", [
    ("3", TypeError), (b"3", TypeError), (3.0, TypeError), (None, TypeError),
    ([1, 2.5], TypeError), (-1, ValueError), ((2, -1), ValueError),
    (-2 ** 70, ValueError), ((1,) * 65, ValueError),
])
def test_array_shape_is_read_as_numpy_reads_it(size, exc):
    # The one reader of size=, in C (arc4py/cbind/arrays.c), also what
    # BitGenerator.random_raw reads its size with.
    from arc4py import _core
    with pytest.raises(exc):
        _core._array_shape(size)
    assert _core._array_shape(np.int64(3)) == (3,)
    assert _core._array_shape([np.int32(2), 3]) == (2, 3)
    assert _core._array_shape(()) == ()


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


# Every module of the package, imported, then checked for a module
# __getattr__: while a module has one, CPython specialises none of its
# attribute loads (every `arc4py.random_u32()` paid for it).
NO_MODULE_GETATTR = """
    import importlib, pkgutil, sys
    import arc4py

    def check(when):
        for info in pkgutil.walk_packages(arc4py.__path__, "arc4py."):
            try:
                importlib.import_module(info.name)
            except ImportError:  # an optional extension (the bench's C loops)
                continue
        for name, module in list(sys.modules.items()):
            if name == "arc4py" or name.startswith("arc4py."):
                assert "__getattr__" not in vars(module), (name, when)
"""


@pytest.mark.parametrize("first", ["arc4py", "numpy"])
def test_no_module_getattr_in_the_package_ever(first):
    proc = run_child(("import numpy\n" if first == "numpy" else "")
                     + textwrap.dedent(NO_MODULE_GETATTR) + textwrap.dedent("""
        check("imported")
        assert "BitGenerator" in dir(arc4py) and "BitGenerator" in arc4py.__all__
        arc4py.random_u32(size=2)
        check("after a size= call")
        bg = arc4py.BitGenerator()
        check("after BitGenerator()")
        assert isinstance(bg, numpy.random.BitGenerator)
        assert vars(arc4py)["BitGenerator"] is type(bg)
        arc4py.default_rng()
        check("after default_rng()")
        print("ok")
    """).replace("isinstance(bg, numpy", "isinstance(bg, sys.modules['numpy']"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_bitgenerator_before_numpy_is_used_stands_for_the_class():
    """Until numpy is in use, arc4py.BitGenerator is a stand-in that loads
    the class on first use and then gives way to it; whatever a user does
    with the name works as with the class."""
    proc = run_child("""
        import sys
        import arc4py
        assert "numpy" not in sys.modules and "arc4py._numpy" not in sys.modules
        stand_in = arc4py.BitGenerator
        assert isinstance(stand_in, type)
        assert "arc4py._numpy" in sys.modules  # that was a use
        import numpy as np
        assert issubclass(stand_in, np.random.BitGenerator)
        cls = vars(arc4py)["BitGenerator"]
        assert cls is not stand_in and cls.__module__ == "arc4py._numpy"
        assert isinstance(cls(), stand_in) and issubclass(cls, stand_in)
        assert isinstance(stand_in(), cls)
        assert stand_in.__name__ == cls.__name__ == "arc4py.BitGenerator"
        assert stand_in.__doc__ == cls.__doc__ and repr(stand_in) == repr(cls)

        class Mine(stand_in):
            pass

        assert Mine.__mro__[1] is cls
        assert isinstance(np.random.Generator(Mine()).random(), float)
        print("ok")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


# ---- without numpy ---------------------------------------------------------------------

HIDE_NUMPY = {
    # As if numpy were not installed: a finder that refuses it.
    "finder": NO_NUMPY_FINDER,
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
    proc = run_child(textwrap.dedent(HIDE_NUMPY[how]) + textwrap.dedent("""
        import arc4py
        assert 0 <= arc4py.arc4random() < 2 ** 32
        assert len(arc4py.arc4random_buf(5)) == 5
        checks = {
            "random_u32": lambda: arc4py.random_u32(size=3),
            "random_u64": lambda: arc4py.random_u64(size=3),
            "random": lambda: arc4py.random(size=3),
            "arc4random_uniform": lambda: arc4py.arc4random_uniform(6, size=3),
            "default_rng": lambda: arc4py.default_rng(),
        }
        for name, call in checks.items():
            try:
                call()
            except ImportError as exc:
                assert "arc4py[numpy]" in str(exc), (name, str(exc))
            else:
                raise SystemExit(f"{name} did not raise ImportError")
        # The numpy class is absent, as the stdlib leaves out a name its
        # platform lacks: AttributeError, so hasattr() and dir() work, and
        # `from arc4py import BitGenerator` is Python's ImportError for a
        # missing name.  No module __getattr__ is left to say more: it
        # would cost every arc4py.<name> lookup CPython's specialisation.
        for call in (lambda: arc4py.BitGenerator, lambda: arc4py.BitGenerator()):
            try:
                call()
            except AttributeError as exc:
                assert "BitGenerator" in str(exc), str(exc)
            else:
                raise SystemExit("arc4py.BitGenerator did not raise")
        assert not hasattr(arc4py, "BitGenerator")
        assert "BitGenerator" not in dir(arc4py)
        assert "__getattr__" not in vars(arc4py)
        try:
            from arc4py import BitGenerator
        except ImportError as exc:
            assert "BitGenerator" in str(exc)
        else:
            raise SystemExit("from arc4py import BitGenerator did not raise")
        # Scalars need no numpy.
        assert isinstance(arc4py.random_u32(), int)
        assert isinstance(arc4py.random_u64(), int)
        print("ok")
    """))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


# ---- OS entropy failure ------------------------------------------------------------------





def _shim_env(shim):
    # Only calls from arc4py's generator fail, not the interpreter's own.
    # (getrandom_shim is conftest.py's fixture.)
    return shim_env(str(shim), "eperm", "arc4py")


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
    """, **_shim_env(getrandom_shim))
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
    """, **_shim_env(getrandom_shim))
    assert proc.returncode == -signal.SIGABRT, (proc.returncode, proc.stderr)
    assert "drawing" in proc.stdout and "returned" not in proc.stdout
    assert "arc4py: the OS could not provide entropy" in proc.stderr
    assert "numpy draw" in proc.stderr


def test_no_memory_for_a_state_inside_numpy_aborts_saying_so(getrandom_shim):
    """A new thread whose state cannot be mapped, in a numpy draw: abort(),
    and the message names the memory, not the entropy source."""
    proc = run_child("""
        import ctypes, os, threading
        import arc4py, numpy
        shim = ctypes.CDLL(os.environ["LD_PRELOAD"])
        g = numpy.random.Generator(arc4py.BitGenerator())
        g.random()
        def worker():
            shim.shim_fail_mmap(1)
            print("drawing", flush=True)
            print("returned", g.random(), flush=True)
        t = threading.Thread(target=worker); t.start(); t.join()
    """, **shim_env(str(getrandom_shim), caller="arc4py"))
    assert proc.returncode == -signal.SIGABRT, (proc.returncode, proc.stderr)
    assert "drawing" in proc.stdout and "returned" not in proc.stdout
    assert "no memory could be mapped for this thread's generator state" in proc.stderr
    assert "could not provide entropy" not in proc.stderr
    assert "numpy draw" in proc.stderr
