"""arc4py's C API (arc4py/capi.pxd, include/arc4py/capi.h), used the
way a third-party extension uses it: tests/capi_ext/ holds a Cython module
and a C module, built (once per session, by conftest.py's capi_demo) against
the *installed* arc4py with setuptools and
``include_dirs=[arc4py.get_include()]``.
"""
import array
import errno
import signal
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import arc4py
from arc4py import _core
from helpers import child_env, run_child

ABORT_MESSAGE = "arc4py: the OS could not provide entropy"

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the LD_PRELOAD entropy shim is Linux-only")


@pytest.fixture(scope="module", params=["cython", "c"])
def demo(request, capi_demo):
    """The Cython-built and the C-built demo module (conftest.py's capi_demo
    builds them once), in turn."""
    sys.path.insert(0, str(capi_demo))
    try:
        name = {"cython": "capi_demo_cy", "c": "capi_demo_c"}[request.param]
        mod = __import__(name)
    finally:
        sys.path.remove(str(capi_demo))
    return mod


def u32(raw):
    return array.array("I", raw)


def test_get_include_holds_the_header():
    inc = Path(arc4py.get_include())
    assert inc.is_absolute()
    package = Path(arc4py.__file__).resolve().parent
    if not (package / "_core.pyx").exists():  # an install, not a checkout
        assert inc.resolve() == package / "include"
    header = (inc / "arc4py" / "capi.h").read_text()
    for name in ("arc4py_arc4random", "arc4py_arc4random_buf",
                 "arc4py_arc4random_uniform", "arc4py_fill", "arc4py_import",
                 "ARC4PY_CAPI_CAPSULE", "ARC4PY_CAPI_VERSION"):
        assert name in header
    assert (Path(arc4py.__file__).parent / "capi.pxd").is_file()
    assert "get_include" in arc4py.__all__


def test_capsule_table_is_versioned():
    import ctypes
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    ptr = get_pointer(_core._C_API, b"arc4py._core._C_API")
    size = ctypes.c_size_t.from_address(ptr).value
    version = ctypes.c_uint.from_address(ptr + ctypes.sizeof(ctypes.c_size_t)).value
    assert version == 2
    # size and version, then version 1's four function pointers and version
    # 2's five (u32, u64 and numpy's three bitgen_t ones), none of them NULL.
    first_fn = 2 * ctypes.sizeof(ctypes.c_size_t)
    assert size == first_fn + 9 * ctypes.sizeof(ctypes.c_void_p)
    fns = (ctypes.c_void_p * 9).from_address(ptr + first_fn)
    assert all(fns)


def test_arc4py_modules_draw_through_the_public_table():
    """One way from Cython to the generator: no internal capsule is left,
    and numpy's bit generator holds the public table's bitgen_t functions."""
    import ctypes
    assert not hasattr(_core, "_rng_api")
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    table = get_pointer(_core._C_API, b"arc4py._core._C_API")
    first_fn = 2 * ctypes.sizeof(ctypes.c_size_t)
    bitgen_fns = list((ctypes.c_void_p * 3).from_address(
        table + first_fn + 6 * ctypes.sizeof(ctypes.c_void_p)))
    np = pytest.importorskip("numpy", reason="numpy's bitgen_t needs numpy")
    bitgen = arc4py.BitGenerator()
    held = bitgen.ctypes
    assert [ctypes.cast(fn, ctypes.c_void_p).value for fn in (
        held.next_uint64, held.next_uint32, held.next_double)] == bitgen_fns
    assert np.isfinite(np.random.Generator(bitgen).random())


def test_version_2_scalars(demo):
    """arc4py_random_u64 (the table's version-2 field): 64-bit values, each
    bit fair, through the same generator as the rest."""
    vals = array.array("Q", demo.u64s(20000))
    assert len(vals) == 20000 and len(set(vals)) == 20000
    assert max(vals) >= 2 ** 63
    ones = sum(bin(v).count("1") for v in vals) / (64 * 20000)
    assert ones == pytest.approx(0.5, abs=0.01)


def test_values(demo):
    vals = u32(demo.u32s(20000))
    assert len(vals) == 20000
    assert len(set(vals)) > 19990          # 32-bit values: a few repeats at most
    assert max(vals) >= 2 ** 31 and min(vals) < 2 ** 28
    assert sum(bin(v).count("1") for v in vals) / (32 * 20000) == pytest.approx(0.5, abs=0.01)
    chunks = demo.bufs(16, 5000)
    assert len(chunks) == 80000
    assert len({chunks[i:i + 16] for i in range(0, len(chunks), 16)}) == 5000
    assert demo.bufs(0, 3) == b""
    big = demo.bufs(3 << 20, 1)                # past the direct and reseed sizes
    assert big.count(0) < len(big) // 200 and len(set(big[-4096:])) > 200


@pytest.mark.parametrize("bound", [2, 3, 6, 7, 1000, 2 ** 31 + 1, 2 ** 32 - 1])
def test_uniform_bounds(demo, bound):
    vals = u32(demo.uniforms(bound, 6000))
    assert max(vals) < bound
    if bound <= 7:
        # every residue, each near 6000 / bound (well inside 6 sigma)
        for r in range(bound):
            expect = 6000 / bound
            assert abs(vals.count(r) - expect) < 6 * (expect ** 0.5)
    else:
        assert max(vals) > bound // 2


def test_uniform_zero_and_one_give_zero(demo):
    assert set(u32(demo.uniforms(0, 100))) == {0}
    assert set(u32(demo.uniforms(1, 100))) == {0}


def test_fill_succeeds(demo):
    buf = bytearray(b"\xaa" * 5000)
    assert demo.fill_into(buf) == 0
    assert buf.count(0xAA) < 100
    assert demo.fill_into(bytearray()) == 0


def test_eight_threads_without_the_gil(demo):
    """Eight threads draw at once (each C loop runs with the GIL released);
    no 16-byte block repeats within or across threads, or against Python."""
    results = [None] * 8
    barrier = threading.Barrier(8)

    def work(i):
        barrier.wait()
        out = []
        for _ in range(20):
            out.append(demo.bufs(16, 500))
            out.append(demo.u32s(400))
        results[i] = out

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    blocks = set()
    total = 0
    for out in results:
        for raw in out:
            for i in range(0, len(raw), 16):
                blocks.add(raw[i:i + 16])
                total += 1
    for _ in range(2000):
        blocks.add(arc4py.arc4random_buf(16))
        total += 1
    assert len(blocks) == total


def test_c_and_python_draws_interleaved_never_repeat(demo):
    seen = set()
    n = 0
    for _ in range(500):
        for chunk in (demo.bufs(16, 1), arc4py.arc4random_buf(16),
                      demo.u32s(4), arc4py.arc4random_buf(48)[:16]):
            seen.add(chunk)
            n += 1
    assert len(seen) == n


def test_c_calls_draw_the_calling_threads_stream(capi_demo, hooks_build, tmp_path):
    """The next C draw is exactly the next unread bytes of the thread's
    buffer that Python calls use: one stream, not a second generator.
    (Run on conftest.py's test-hooks build, which can show a thread's
    buffer; the demo modules reach it through the capsule.)"""
    proc = run_child("""
        import arc4py, capi_demo_c, capi_demo_cy
        from arc4py import _core
        ok = []
        for mod in (capi_demo_c, capi_demo_cy):
            arc4py.arc4random_buf(16)              # this thread has a state
            raw, left = _core._debug_buffer()
            if left < 64:                          # start a fresh buffer:
                arc4py.arc4random_buf(left + 1)    # the last bytes and 1
                raw, left = _core._debug_buffer()
            ahead = raw[len(raw) - left:]
            ok.append(mod.bufs(16, 1) == ahead[:16])
            ok.append(mod.u32s(1) == ahead[16:20])
            ok.append(arc4py.arc4random_buf(8) == ahead[20:28])
        print(arc4py.__file__, ok)
    """, cwd=tmp_path, env=child_env(hooks_build, capi_demo))
    assert proc.returncode == 0, proc.stderr
    path, ok = proc.stdout.split(" ", 1)
    assert path.startswith(str(hooks_build))
    assert ok.strip() == str([True] * 6)


def test_c_buffered_calls_hand_out_the_next_bytes_and_wipe_them(
        capi_demo, hooks_build, tmp_path):
    """arc4random_buf and fill at every size the hand-out splits
    differently (16-byte steps, whole 64-byte lines on an AVX-512 CPU, the
    tails): each returns exactly the next unread bytes of the thread's
    buffer, and every byte before the unread ones is zero afterwards."""
    proc = run_child("""
        import arc4py, capi_demo_c
        from arc4py import _core
        arc4py.arc4random_buf(16)                  # this thread has a state
        raw, left = _core._debug_buffer()
        arc4py.arc4random_buf(left - 40)           # so a fresh buffer is due
        results = []
        for n in (1, 15, 16, 17, 63, 64, 65, 100, 127, 128, 129, 191, 192,
                  255, 300, 1000, 2047):
            for call in ("buf", "fill"):
                raw, left = _core._debug_buffer()
                if left < n:                       # start a fresh buffer:
                    arc4py.arc4random_buf(left + 1)  # the last bytes and 1
                    raw, left = _core._debug_buffer()
                ahead = raw[len(raw) - left:][:n]
                if call == "buf":
                    got = capi_demo_c.bufs(n, 1)
                else:
                    out = bytearray(n)
                    assert capi_demo_c.fill_into(out) == 0
                    got = bytes(out)
                raw, left = _core._debug_buffer()
                results.append((n, call, got == ahead,
                                not any(raw[:len(raw) - left])))
        print(_core._capi_hand_out, results)
    """, cwd=tmp_path, env=child_env(hooks_build, capi_demo))
    assert proc.returncode == 0, proc.stderr
    hand_out, results = proc.stdout.split(" ", 1)
    assert hand_out in ("avx512", "portable")
    bad = [r for r in eval(results) if r[2:] != (True, True)]
    assert not bad, f"{hand_out} hand-out: (n, call, same bytes, wiped) {bad}"


def test_reimport_is_harmless(capi_demo):
    sys.path.insert(0, str(capi_demo))
    try:
        import capi_demo_c
    finally:
        sys.path.remove(str(capi_demo))
    assert capi_demo_c.reimport() is None


def _run(code, capi_demo, **env_extra):
    return run_child(code, cwd=capi_demo, env=child_env(capi_demo, **env_extra))


@pytest.mark.parametrize("mod", ["capi_demo_cy", "capi_demo_c"])
def test_import_error_when_arc4py_cannot_be_imported(capi_demo, mod):
    proc = _run(f"""
        import sys
        sys.modules["arc4py"] = None              # arc4py cannot be imported
        try:
            import {mod}
        except ImportError as e:
            print("ImportError", e)
    """, capi_demo)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ImportError"), proc.stdout + proc.stderr


@pytest.mark.parametrize("mod", ["capi_demo_cy", "capi_demo_c"])
def test_import_error_for_a_too_old_table(capi_demo, tmp_path, mod):
    """A provider whose table lacks a field this header needs is refused."""
    fake = tmp_path / "arc4py"
    fake.mkdir()
    (fake / "__init__.py").write_text("from arc4py import _core\n")
    (fake / "_core.py").write_text(textwrap.dedent("""
        import ctypes
        # size = 16 (room for size and version only), version = 1
        _table = (ctypes.c_size_t * 2)(16, 1)
        _name = ctypes.create_string_buffer(b"arc4py._core._C_API")
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        _C_API = new(ctypes.addressof(_table), _name, None)
    """))
    proc = run_child(f"""
        try:
            import {mod}
        except ImportError as e:
            print("ImportError", e)
    """, cwd=tmp_path, env=child_env(tmp_path, capi_demo))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ImportError") and "too small" in proc.stdout


@pytest.fixture(scope="module")
def shim(getrandom_shim):
    """The getrandom shim (conftest.py builds it once), as a str path."""
    return str(getrandom_shim)


@linux_only
@pytest.mark.parametrize("mod", ["capi_demo_cy", "capi_demo_c"])
def test_fill_reports_errno_and_wipes(capi_demo, shim, mod):
    proc = _run(f"""
        import {mod} as m
        small, big = bytearray(b"\\xaa" * 64), bytearray(b"\\xaa" * (3 << 20))
        print(m.fill_into(small), m.fill_into(big), any(small), any(big))
    """, capi_demo, LD_PRELOAD=shim, GETRANDOM_SHIM="eperm",
        GETRANDOM_SHIM_CALLER="arc4py")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(errno.EPERM), str(errno.EPERM),
                                   "False", "False"]


@linux_only
@pytest.mark.parametrize("mod", ["capi_demo_cy", "capi_demo_c"])
@pytest.mark.parametrize("call", ["u32s(1)", "bufs(16, 1)", "uniforms(10, 1)"])
def test_cannot_fail_calls_abort_on_entropy_failure(capi_demo, shim, mod, call):
    proc = _run(f"""
        import {mod} as m
        print("returned", m.{call})
    """, capi_demo, LD_PRELOAD=shim, GETRANDOM_SHIM="eperm",
        GETRANDOM_SHIM_CALLER="arc4py")
    assert proc.returncode == -signal.SIGABRT, proc.stdout + proc.stderr
    assert "returned" not in proc.stdout
    assert ABORT_MESSAGE in proc.stderr


@linux_only
@pytest.mark.parametrize("mod", ["capi_demo_cy", "capi_demo_c"])
def test_cannot_fail_calls_abort_naming_memory_when_no_state(capi_demo, shim, mod):
    """No memory for a new thread's state: abort, and say that, not
    "entropy"."""
    proc = _run(f"""
        import ctypes, os, threading
        import {mod} as m
        shim = ctypes.CDLL(os.environ["LD_PRELOAD"])
        def worker():
            shim.shim_fail_mmap(1)
            print("returned", m.u32s(1), flush=True)
        t = threading.Thread(target=worker); t.start(); t.join()
    """, capi_demo, LD_PRELOAD=shim, GETRANDOM_SHIM_CALLER="arc4py")
    assert proc.returncode == -signal.SIGABRT, proc.stdout + proc.stderr
    assert "returned" not in proc.stdout
    assert "no memory could be mapped for this thread's generator state" in proc.stderr
    assert "C API call" in proc.stderr


# ---- the Python hot calls (arc4py/cbind/module_calls.c) -----------------------

@pytest.mark.parametrize("name,sig", [("arc4random", "(size=None)"),
                                      ("random_u32", "(size=None)"),
                                      ("random_u64", "(size=None)"),
                                      ("arc4random_buf", "(n)")])
def test_fast_calls_keep_signature_and_doc(name, sig):
    import inspect
    import pickle
    f = getattr(arc4py, name)
    assert str(inspect.signature(f)) == sig
    assert f.__name__ == name and f.__module__ == "arc4py._core"
    assert f.__doc__ and "random" in f.__doc__
    assert pickle.loads(pickle.dumps(f)) is f


def test_fast_calls_take_every_documented_form():
    for f, top in ((arc4py.arc4random, 2 ** 32), (arc4py.random_u32, 2 ** 32),
                   (arc4py.random_u64, 2 ** 64)):
        for v in (f(), f(None), f(size=None)):
            assert type(v) is int and 0 <= v < top
    assert len(arc4py.arc4random_buf(n=7)) == 7
    assert len(arc4py.arc4random_buf(True)) == 1          # an int subclass
    assert len(arc4py.arc4random_buf(1 << 16)) == 1 << 16  # the GIL-free path
    assert arc4py.arc4random_buf(0) == b""


@pytest.mark.parametrize("args,kwargs,exc", [
    ((-1,), {}, ValueError), ((1.5,), {}, TypeError), (("3",), {}, TypeError),
    ((2 ** 70,), {}, OverflowError), ((), {}, TypeError), ((1, 2), {}, TypeError),
    ((), {"size": 1}, TypeError)])
def test_fast_buf_errors_are_the_defs(args, kwargs, exc):
    with pytest.raises(exc):
        arc4py.arc4random_buf(*args, **kwargs)


def test_fast_u32_errors_are_the_defs():
    with pytest.raises(TypeError):
        arc4py.random_u32(1, 2)
    with pytest.raises(TypeError):
        arc4py.arc4random(bogus=1)


@pytest.mark.parametrize("core", [None, "avx512", "avx2", "generic"])
def test_c_api_takes_the_avx512_hand_out_with_the_avx512_core(core):
    """The C API's AVX-512 build of arc4random_buf and fill goes with the
    avx512 core: the default where the CPU runs it, and never where one
    chose another core (ARC4PY_BACKEND)."""
    if core is not None and core not in arc4py.backends():
        pytest.skip(f"this CPU cannot run the {core} core")
    proc = run_child("""
        import arc4py
        from arc4py import _core
        print(arc4py.backend(), _core._capi_hand_out)
    """, env=child_env(ARC4PY_BACKEND=core))
    assert proc.returncode == 0, proc.stderr
    backend, hand_out = proc.stdout.split()
    assert backend == (core or arc4py.backends()[0])
    assert hand_out == ("avx512" if backend == "avx512" else "portable")
