"""Many threads drawing at once through every entry point, and on a
free-threaded build (3.13t and later) that arc4py keeps the GIL off.

The concurrent part runs on every build: with the GIL the threads take
turns at the interpreter, without it they run inside arc4py at the same
time.  Either way every output is fresh (no two draws share bytes, so no
two threads share or lose a generator's state) and nothing crashes.  On a
free-threaded build a child interpreter (PYTHON_GIL unset) also imports
every arc4py module and runs the same workload with the GIL off.
"""
import json
import os
import pkgutil
import sys
import sysconfig
import threading
import weakref

import pytest

import arc4py
from helpers import TESTS_DIR, child_env, last_json, run_child, run_threads

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
needs_free_threading = pytest.mark.skipif(
    not FREE_THREADED, reason="a GIL build (the free-threaded checks need "
    "python3.13t or later)")

try:
    import numpy as np
except ImportError:
    np = None

THREADS = 16
ROUNDS = 1000


# ---- the workload (also run by the free-threaded child) -------------------------

def _draws(shared):
    """One thread's draws: a list of (entry point, 16 bytes or more) in
    which any repeat across all threads would be a shared or replayed
    state.  Integer and float calls too narrow for that are drawn in
    groups (four u32, two floats)."""
    mine = arc4py.Random()       # one per thread
    out = []
    add = out.append
    barr = bytearray(16)
    if np is not None:
        bitgen = arc4py.BitGenerator()
        gen = np.random.Generator(bitgen)
        arr = np.zeros(4, dtype=np.uint32)
    for _ in range(ROUNDS):
        add(("random_u32", tuple(arc4py.random_u32() for _ in range(4))))
        add(("arc4random", tuple(arc4py.arc4random() for _ in range(4))))
        add(("random_u64", (arc4py.random_u64(), arc4py.random_u64())))
        add(("arc4random_buf", arc4py.arc4random_buf(16)))
        add(("token_bytes", arc4py.token_bytes(16)))
        add(("token_hex", arc4py.token_hex(16)))
        add(("random", (arc4py.random(), arc4py.random())))
        add(("randbits", arc4py.randbits(128)))
        add(("randbelow", arc4py.randbelow(1 << 128)))
        add(("uniform", tuple(arc4py.arc4random_uniform(1 << 32)
                              for _ in range(4))))
        arc4py.fill(barr)
        add(("fill", bytes(barr)))
        for name, rng in (("Random", mine), ("shared Random", shared["rng"])):
            add((name + ".random", (rng.random(), rng.random())))
            add((name + ".getrandbits", rng.getrandbits(128)))
            add((name + ".randbytes", rng.randbytes(16)))
            add((name + ".randrange", (rng.randrange(1 << 64),
                                       rng.randrange(1 << 64))))
        if np is not None:
            add(("random_u32(size)", arc4py.random_u32(size=4).tobytes()))
            add(("random_u64(size)", arc4py.random_u64(size=2).tobytes()))
            arc4py.fill(arr)
            add(("fill(ndarray)", arr.tobytes()))
            add(("BitGenerator.random_raw", bitgen.random_raw(2).tobytes()))
            add(("Generator", gen.bytes(16)))
            add(("shared Generator", shared["gen"].bytes(16)))
            add(("shared BitGenerator",
                 shared["bitgen"].random_raw(2).tobytes()))
    return out


def _shared():
    """The objects every thread uses at once."""
    shared = {"rng": arc4py.Random()}
    if np is not None:
        shared["bitgen"] = arc4py.BitGenerator()
        shared["gen"] = np.random.Generator(arc4py.BitGenerator())
    return shared


def run_workload(threads=THREADS):
    """``threads`` threads drawing at once, plus one that stirs every
    generator meanwhile; a summary dict, after checking every output."""
    shared = _shared()
    stop = threading.Event()
    stirs = []

    def stirrer():
        n = 0
        while not stop.wait(0.001):
            arc4py.stir(all_threads=True)
            n += 1
        stirs.append(n)

    t = threading.Thread(target=stirrer)
    t.start()
    try:
        results = run_threads(threads, lambda i: _draws(shared))
    finally:
        stop.set()
        t.join()
    every = [v for r in results for v in r]
    per_thread = {len(r) for r in results}
    assert len(per_thread) == 1, "a thread lost draws"
    values = [v for _, v in every]
    assert len(set(values)) == len(values), _first_repeat(every)
    after = arc4py.arc4random_buf(16)    # this thread's state still works
    assert after not in set(values)
    return {"draws": len(values), "entry_points": len({n for n, _ in every}),
            "stirs": stirs[0], "numpy": np is not None,
            "gil": getattr(sys, "_is_gil_enabled", lambda: True)()}


def _first_repeat(every):
    seen = {}
    for name, v in every:
        if v in seen:
            return f"{name} repeated the output of {seen[v]}: {v!r}"
        seen[v] = name
    return "no repeat"


# ---- tests ---------------------------------------------------------------------

def test_many_threads_every_entry_point_distinct():
    summary = run_workload()
    assert summary["draws"] == THREADS * ROUNDS * summary["entry_points"]
    assert summary["stirs"] > 0


def test_threads_that_come_and_go_with_shared_objects():
    """Short-lived threads, a few at a time, using the shared objects:
    a new thread's state is fresh and a finished one's is not reused."""
    shared = _shared()
    seen = []
    for _ in range(20):
        for r in run_threads(8, lambda i: [
                arc4py.arc4random_buf(16), shared["rng"].randbytes(16),
                arc4py.token_bytes(16),
                arc4py.randbits(128).to_bytes(16, "little")]):
            seen.extend(r)
    assert len(set(seen)) == len(seen) == 20 * 8 * 4


def _draw_in_threads(rng, n):
    """Four threads drawing from ``rng`` through every kind of method."""
    def draws(i):
        for _ in range(200):
            rng.random(), rng.getrandbits(64), rng._randbelow(n), rng.randrange(n)
            rng.uniform(0, 1), rng.gauss(0.0, 1.0), rng.choices("abc", [1, 2, 3], k=4)
            rng.shuffle([1, 2, 3]), rng.randbytes(8)
    run_threads(4, draws)


def _deferred(obj):
    """Whether ``obj``'s references are counted the deferred way (3.14t),
    as a module-level function's are: its count then carries CPython's
    bias for that (PY_SSIZE_T_MAX / 8), far above any real count."""
    return sys.getrefcount(obj) > 2**40


def test_a_shared_random_is_freed_once_unreachable():
    """A Random that threads drew from through every kind of method (the C
    descriptors, the C distributions, the stdlib's code) is freed once
    nothing reaches it, plain, subclassed or with an instance override: at
    its last reference on a GIL build, by the next collection on a
    free-threaded one (where its references are counted the deferred way,
    as a threading.local's, so that threads calling a global Random do not
    all write one counter).  Never immortal."""
    import gc

    class Mine(arc4py.Random):
        pass

    n = 10**30 + 7   # one shared int bound, as randbelow(n) callers share it
    for kind in ("plain", "override", "subclass"):
        rng = Mine() if kind == "subclass" else arc4py.Random()
        if kind == "override":
            rng.random = arc4py.random   # (a bound method of rng would be a cycle)
        _draw_in_threads(rng, n)
        if hasattr(sys, "_is_immortal"):
            assert not sys._is_immortal(rng)
        deferred = FREE_THREADED and sys.version_info >= (3, 14)
        assert _deferred(rng) == deferred, kind
        gone = weakref.ref(rng)
        del rng
        if deferred:
            gc.collect()
        assert gone() is None, f"a {kind} Random outlived its last reference"


@needs_free_threading
def test_random_instances_made_and_dropped_do_not_pile_up():
    """Deferred counting leaves a dropped Random to the collector: made and
    dropped in a loop, they are collected as they go (the collector runs
    on allocations), not kept.  In a fresh interpreter: the free-threaded
    collector waits for the heap to grow by a share of what was alive
    before, which a long test session makes large."""
    proc = run_child("""
        import gc, json, weakref
        import arc4py
        alive = weakref.WeakSet()
        for _ in range(20000):
            rng = arc4py.Random()
            alive.add(rng)
            rng.randint(1, 6)
            del rng
        during = len(alive)
        gc.collect()
        print(json.dumps({"during": during, "after": len(alive)}))
    """, timeout=120)
    seen = last_json(proc)
    assert seen["during"] < 20000 // 2, seen
    assert seen["after"] == 0, seen


def _arc4py_modules():
    """Every module of the installed package, extension modules included."""
    names = ["arc4py"]
    for info in pkgutil.walk_packages(arc4py.__path__, "arc4py."):
        names.append(info.name)
    return sorted(names)


def test_every_module_is_listed():
    names = _arc4py_modules()
    for name in ("arc4py._core", "arc4py._random",
                 "arc4py.cli"):
        assert name in names
    if np is not None:
        assert "arc4py._numpy" in names


# What the child runs: import every arc4py module with the GIL left to the
# interpreter (PYTHON_GIL unset), check it is still off, then the workload.
CHILD = """
    import importlib, json, sys, warnings
    warnings.simplefilter("error", RuntimeWarning)  # "GIL has been enabled"
    try:
        import numpy
    except ImportError:
        pass
    except RuntimeWarning as exc:  # an older numpy: not arc4py's doing
        print(json.dumps({"skip": f"numpy enables the GIL here: {exc}"}))
        sys.exit(0)
    import test_free_threading as t
    names = json.loads(sys.argv[1])
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            # only the numpy side may be missing, and only without numpy
            if name != "arc4py._numpy" or t.np is not None:
                raise
        assert not sys._is_gil_enabled(), f"importing {name} enabled the GIL"
    summary = t.run_workload()
    summary["gil"] = sys._is_gil_enabled()
    print(json.dumps(summary))
"""


@needs_free_threading
def test_import_keeps_the_gil_off_and_the_workload_runs_without_it():
    env = child_env(PYTHON_GIL=None)
    # this file's folder (the workload) and helpers.py's
    here = os.path.dirname(os.path.abspath(__file__))
    env["PYTHONPATH"] = os.pathsep.join(
        [here, str(TESTS_DIR)] + [p for p in [env.get("PYTHONPATH")] if p])
    names = [n for n in _arc4py_modules() if n != "arc4py.__main__"]
    proc = run_child(CHILD, json.dumps(names), env=env, timeout=600)
    summary = last_json(proc)
    if "skip" in summary:
        pytest.skip(summary["skip"])
    assert summary["gil"] is False
    assert "GIL" not in proc.stderr, proc.stderr[-3000:]
    assert summary["draws"] == THREADS * ROUNDS * summary["entry_points"]


@needs_free_threading
def test_drawing_calls_are_immortal():
    """The scaling fix, checked without a clock: the functions every
    thread looks up and calls (and the module dict behind ``arc4py.<name>``)
    have no reference count for the threads to fight over."""
    if not hasattr(sys, "_is_immortal"):
        pytest.skip("sys._is_immortal is 3.14+")
    for name in ("arc4random", "random_u32", "random_u64", "arc4random_buf",
                 "random", "arc4random_uniform", "randbits", "randbelow",
                 "fill", "stir", "token_bytes", "token_hex", "token_urlsafe",
                 "choice", "default_rng"):
        assert sys._is_immortal(getattr(arc4py, name)), name
    assert sys._is_immortal(vars(arc4py))
    # and what uuid4() and uuid7() load from their module on every call
    from arc4py import _uuid
    for name in ("_VERSION_MASK", "_VERSION_4", "_VERSION_7", "_COUNTER_MAX",
                 "_MS_MASK", "_new", "_UNKNOWN", "_UUID", "_from_int"):
        assert sys._is_immortal(getattr(_uuid, name)), name
