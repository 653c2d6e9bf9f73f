"""arc4py.BitGenerator under numpy's conventions: the bitgen_t capsule and
interfaces, state (TypeError/ValueError like numpy's own), np.random.seed()
with an arc4py global generator, pickling and copying without replay,
spawn, random_raw and its lock.  (Split from test_numpy.py.)"""
import copy
import pickle
import threading

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed "
                         "(pip install 'arc4py[numpy]')")

import arc4py  # noqa: E402

# ---- BitGenerator ------------------------------------------------------------------

def test_bitgenerator_is_numpy_bitgenerator():
    bg = arc4py.BitGenerator()
    assert isinstance(bg, np.random.BitGenerator)
    assert arc4py.BitGenerator is arc4py._numpy.BitGenerator
    assert bg.__doc__ and "abort" in bg.__doc__
    assert "arc4py.BitGenerator" in repr(bg)


def test_numpys_objects_over_it_name_arc4py():
    # numpy prints a Generator or RandomState with its bit generator's
    # class name: "Generator(PCG64)"; over ours, one that says whose
    bg = arc4py.BitGenerator()
    g = np.random.Generator(bg)
    assert str(g) == "Generator(arc4py.BitGenerator)"
    assert repr(g) == f"Generator(arc4py.BitGenerator) at 0x{id(g):X}"
    assert str(np.random.RandomState(bg)) == "RandomState(arc4py.BitGenerator)"
    assert str(arc4py.default_rng()) == "Generator(arc4py.BitGenerator)"
    assert [str(c) for c in g.spawn(2)] == ["Generator(arc4py.BitGenerator)"] * 2
    # the class itself is found where it lives, and pickles by that
    assert repr(arc4py.BitGenerator) == "<class 'arc4py._numpy.BitGenerator'>"
    assert pickle.loads(pickle.dumps(arc4py.BitGenerator)) is arc4py.BitGenerator
    assert type(copy.copy(bg)) is type(pickle.loads(pickle.dumps(bg))) is arc4py.BitGenerator


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


def test_global_set_state_of_mt19937_is_numpys_value_error():
    # numpy's test_randomstate.py::test_state_error_alt_bit_gen, with arc4py
    # as the other bit generator: the legacy tuple is refused in numpy's words
    if not hasattr(np.random, "set_bit_generator"):
        pytest.skip("numpy.random.set_bit_generator is new in numpy 1.25")
    saved = np.random.get_bit_generator()
    mt_state = np.random.RandomState(12345).get_state()
    try:
        np.random.set_bit_generator(arc4py.BitGenerator())
        with pytest.raises(ValueError, match="state must be for a"):
            np.random.set_state(mt_state)
        with pytest.raises(ValueError, match="state must be for a"):
            np.random.set_state(np.random.MT19937(1).state)
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
        # int64: RandomState's default is C long, 32 bits on Windows
        assert not np.array_equal(copy_.randint(0, 2 ** 62, 8, dtype=np.int64),
                                  rs.randint(0, 2 ** 62, 8, dtype=np.int64))
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


def test_random_raw_parses_size_before_taking_the_lock():
    """A size whose __index__ draws through the same bit generator: no
    deadlock.  The case that matters is numpy 1.x, whose lock is a plain
    Lock (CI runs this file with numpy 1.25); numpy 2's RLock re-enters."""
    bg = arc4py.BitGenerator()
    g = np.random.Generator(bg)

    class DrawingSize:
        def __index__(self):
            g.random()  # takes bg.lock
            return 3

    box = {}

    def draw():
        box["out"] = bg.random_raw(DrawingSize())

    t = threading.Thread(target=draw, daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "random_raw deadlocked on its own lock"
    assert box["out"].shape == (3,) and box["out"].dtype == np.uint64


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork")
def test_randomstate_spare_normal_survives_fork_as_documented():
    """The docstring's caveat, kept true: numpy's RandomState caches the
    second of each pair of normals, and a fork copies that cache; the next
    value after it is arc4py's and differs."""
    import os
    assert "survives ``fork()``" in arc4py.BitGenerator.__doc__
    rs = np.random.RandomState(arc4py.BitGenerator())
    rs.standard_normal()  # leaves the pair's second value cached
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, np.array([rs.standard_normal(), rs.standard_normal()])
                 .tobytes())
        os._exit(0)
    os.close(w)
    child = np.frombuffer(os.read(r, 16), dtype=np.float64)
    os.close(r)
    os.waitpid(pid, 0)
    parent = np.array([rs.standard_normal(), rs.standard_normal()])
    assert child[0] == parent[0]  # numpy's cached spare, in both
    assert child[1] != parent[1]  # then arc4py's stream: distinct
