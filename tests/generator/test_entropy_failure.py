"""The generator when the OS cannot give entropy.

An LD_PRELOAD shim (tests/shims/getrandom_shim.c) replaces the C library's
getrandom() in a child interpreter; see its header for the modes.  The
contract: any failure other than EINTR/ENOSYS is an OSError and no output
is ever produced from an unseeded or stale state; EINTR is retried; ENOSYS
falls back to /dev/urandom.
"""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import arc4py
from entropy_calls import CHILD_SOURCE, check_all_failed
from helpers import BUFFER_BYTES, LINUX, REKEY_BYTES, last_json, run_python, shim_env

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="LD_PRELOAD shim is Linux-only")



@pytest.fixture(scope="module")
def shim(getrandom_shim):
    """The getrandom shim (conftest.py builds it once), as a str path."""
    return str(getrandom_shim)


def shim_child(code, shim_path, tmp_path, mode=None, caller=None, preamble=""):
    """Run ``preamble`` + ``code`` in a fresh interpreter under the shim;
    return the JSON of its last line of output."""
    prelude = textwrap.dedent("""
        import ctypes, json, os, sys
        SHIM = ctypes.CDLL(os.environ["SHIM_PATH"])
        SHIM.getrandom_shim_calls.restype = ctypes.c_long
        SHIM.getrandom_shim_eintr_left.restype = ctypes.c_long
        SHIM.getrandom_shim_set.argtypes = [ctypes.c_char_p]
    """)
    source = prelude + textwrap.dedent(preamble) + textwrap.dedent(code)
    return last_json(run_python(["-c", source], cwd=tmp_path,
                                **shim_env(shim_path, mode, caller)))


# The folder of the object that holds the interpreter's C (its executable,
# or libpython where that is shared), as the dynamic loader names it.
INTERPRETER_FOLDER = """
import ctypes, json, os

class DlInfo(ctypes.Structure):
    _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p),
                ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]

info = DlInfo()
where = ctypes.cast(ctypes.pythonapi.Py_GetVersion, ctypes.c_void_p)
assert ctypes.CDLL(None).dladdr(where, ctypes.byref(info))
print(json.dumps(os.path.basename(os.path.dirname(os.fsdecode(info.fname)))))
"""


def test_the_shim_takes_calls_by_folder_not_by_path(shim, tmp_path):
    """caller="arc4py" means the package's own objects: the interpreter's
    startup calls (its hash seed; a free-threaded build's mimalloc too)
    are counted only when named by their folder, whole, not when the word
    is just somewhere in the interpreter's path (as in a venv made inside
    an arc4py checkout)."""
    folder = last_json(run_python(["-c", INTERPRETER_FOLDER], cwd=tmp_path))
    code = "print(json.dumps({'calls': SHIM.getrandom_shim_calls()}))"
    calls = {caller: shim_child(code, shim, tmp_path, caller=caller)["calls"]
             for caller in (folder, folder[:-1], "arc4py")}
    assert calls[folder] >= 1, "the interpreter drew nothing at startup"
    assert calls[folder[:-1]] == calls["arc4py"] == 0, calls


def test_import_succeeds_under_failing_getrandom(shim, tmp_path):
    """Seeding is lazy: importing arc4py asks the OS for nothing."""
    res = shim_child("""
        import arc4py
        print(json.dumps({"backend": arc4py.backend(),
                          "backends": list(arc4py.backends()),
                          "calls": SHIM.getrandom_shim_calls()}))
    """, shim, tmp_path, mode="eperm", caller="arc4py")
    assert res["backend"] in res["backends"]
    assert res["calls"] == 0, "import arc4py drew entropy eagerly"


def test_import_succeeds_when_whole_process_sees_eperm(shim, tmp_path):
    res = shim_child("""
        import arc4py
        print(json.dumps({"backend": arc4py.backend()}))
    """, shim, tmp_path, mode="eperm")
    assert res["backend"] in arc4py.backends()


@pytest.mark.parametrize("caller", ["arc4py", None],
                         ids=["arc4py-calls", "every-call"])
def test_eperm_every_output_call_raises(shim, tmp_path, caller):
    res = shim_child("""
        first = attempt_all()
        second = attempt_all()          # nothing later either
        print(json.dumps({"first": first, "second": second,
                          "calls": SHIM.getrandom_shim_calls()}))
    """, shim, tmp_path, mode="eperm", caller=caller,
                    preamble=CHILD_SOURCE)
    check_all_failed(res["first"], errno_eperm())
    check_all_failed(res["second"], errno_eperm())
    assert res["calls"] >= len(res["first"]), "the shim was not reached"


def test_eperm_in_a_new_thread(shim, tmp_path):
    """A thread's first state is seeded lazily too, and fails closed."""
    res = shim_child("""
        import threading
        box = {}
        t = threading.Thread(target=lambda: box.update(attempt_all()))
        t.start(); t.join()
        print(json.dumps(box))
    """, shim, tmp_path, mode="eperm", caller="arc4py",
                    preamble=CHILD_SOURCE)
    check_all_failed(res, errno_eperm())


def errno_eperm():
    import errno
    return errno.EPERM


def test_failure_after_seeding_wipes_partial_output(shim, tmp_path):
    """Seeded while getrandom works; then it starts failing.  A large fill
    that must reseed part-way fails and leaves the target all zero, and small
    draws stop once the state is stale (at most 1 MiB after the last seed)."""
    res = shim_child("""
        import arc4py
        arc4py.stir()                                  # seed now: since = 0
        for _ in range(700):                           # 700 KiB, < 768 KiB
            arc4py.arc4random_buf(1024)
        SHIM.getrandom_shim_set(b"eperm")
        big = bytearray(2 << 20)                       # must cross a reseed
        try:
            arc4py.fill(big)
            big_result = "no error"
        except OSError as e:
            big_result = e.errno
        big_zero = not any(big)
        # Again from a fresh seed: small draws may go on from the live state
        # until it turns stale, and not a byte further.
        SHIM.getrandom_shim_set(b"ok")
        arc4py.stir()
        for _ in range(700):
            arc4py.arc4random_buf(1024)
        SHIM.getrandom_shim_set(b"eperm")
        drawn = 0
        small_error = None
        while drawn < (4 << 20):
            try:
                arc4py.arc4random_buf(100)
            except OSError as e:
                small_error = e.errno
                break
            drawn += 100
        later = []
        for fn in (arc4py.arc4random, lambda: arc4py.arc4random_buf(5),
                   lambda: arc4py.fill(bytearray(5000)), arc4py.random):
            try:
                fn()
                later.append("output")
            except OSError:
                later.append("OSError")
        SHIM.getrandom_shim_set(b"ok")
        recovered = [arc4py.arc4random_buf(16).hex() for _ in range(4)]
        print(json.dumps({"big_result": big_result, "big_zero": big_zero,
                          "drawn": drawn, "small_error": small_error,
                          "later": later, "recovered": recovered}))
    """, shim, tmp_path, mode="ok", caller="arc4py")
    assert res["big_result"] == errno_eperm()
    assert res["big_zero"], "partial output of a failed fill() survived"
    assert res["small_error"] == errno_eperm(), (
        f"drew {res['drawn']} bytes with no reseed possible")
    # 700 KiB before + what followed stays within one reseed interval, and
    # the state did not give up before the randomised reseed point either.
    assert 700 * 1024 + res["drawn"] <= (1 << 20)
    # (3/4 MiB of keystream, less the 40 rekey bytes of each refill, less
    # one refill and one request of slack.)
    usable = (768 * 1024) * (BUFFER_BYTES - REKEY_BYTES) // BUFFER_BYTES
    assert 700 * 1024 + res["drawn"] >= usable - BUFFER_BYTES - 1024
    assert res["later"] == ["OSError"] * 4
    assert len(set(res["recovered"])) == 4


def test_enosys_falls_back_to_dev_urandom(shim, tmp_path):
    res = shim_child("""
        import arc4py
        a = [arc4py.arc4random_buf(16).hex() for _ in range(100)]
        arc4py.stir()
        big = bytearray(3 << 20)                      # several reseeds
        arc4py.fill(big)
        chunks = {bytes(big[i:i + 16]) for i in range(0, len(big), 16)}
        print(json.dumps({"a": a, "distinct_chunks": len(chunks),
                          "n_chunks": len(big) // 16,
                          "calls": SHIM.getrandom_shim_calls()}))
    """, shim, tmp_path, mode="enosys", caller="arc4py")
    assert res["calls"] >= 3, "getrandom was not even tried"
    assert len(set(res["a"])) == 100
    assert res["distinct_chunks"] == res["n_chunks"]


def test_enosys_for_the_whole_process(shim, tmp_path):
    res = shim_child("""
        import arc4py
        print(json.dumps({"x": [arc4py.arc4random() for _ in range(50)]}))
    """, shim, tmp_path, mode="enosys")
    assert len(set(res["x"])) >= 49


@pytest.mark.parametrize("n", [1, 7, 50])
def test_eintr_is_retried(shim, tmp_path, n):
    res = shim_child("""
        import arc4py
        x = arc4py.arc4random_buf(32)
        y = arc4py.arc4random_buf(32)
        print(json.dumps({"x": x.hex(), "y": y.hex(),
                          "left": SHIM.getrandom_shim_eintr_left(),
                          "calls": SHIM.getrandom_shim_calls()}))
    """, shim, tmp_path, mode=f"eintr:{n}", caller="arc4py")
    assert res["left"] == 0, "the generator did not see the EINTRs"
    assert res["calls"] >= n + 1
    assert res["x"] != res["y"] and res["x"] != "00" * 32


def test_eintr_on_stir_and_large_fill(shim, tmp_path):
    res = shim_child("""
        import arc4py
        arc4py.arc4random()
        SHIM.getrandom_shim_set(b"eintr:3")
        arc4py.stir()
        left1 = SHIM.getrandom_shim_eintr_left()
        SHIM.getrandom_shim_set(b"eintr:4")
        big = bytearray(3 << 20)
        arc4py.fill(big)
        left2 = SHIM.getrandom_shim_eintr_left()
        print(json.dumps({"left1": left1, "left2": left2,
                          "nonzero": sum(1 for b in big[:4096] if b)}))
    """, shim, tmp_path, mode="ok", caller="arc4py")
    assert res["left1"] == 0 and res["left2"] == 0
    assert res["nonzero"] > 3500


def test_seed_reads_hold_signals(shim, tmp_path):
    """Every getrandom() call the generator makes, through a C library that
    answers in user space (the shim's vdso mode, as glibc >= 2.41 with the
    vDSO does), runs with asynchronous signals held: a handler run in it
    would save that ChaCha20's key, working state and the seed in a frame
    on the thread's stack.  First use, stir(), stir_all, a large fill's
    reseeds, a new thread's first draw."""
    res = shim_child("""
        import threading
        import arc4py
        SHIM.getrandom_shim_unheld.restype = ctypes.c_long
        arc4py.arc4random()
        for _ in range(50):
            arc4py.stir()
        arc4py.stir(all_threads=True)
        arc4py.arc4random_buf(64)
        big = bytearray(3 << 20)
        arc4py.fill(big)
        t = threading.Thread(target=arc4py.arc4random)
        t.start(); t.join()
        print(json.dumps({"calls": SHIM.getrandom_shim_calls(),
                          "unheld": SHIM.getrandom_shim_unheld()}))
    """, shim, tmp_path, mode="vdso", caller="arc4py")
    assert res["calls"] >= 55, res
    assert res["unheld"] == 0, res


# ---- no hang, memory errors named, protections per state ------------------

def test_getrandom_returning_zero_fails_with_eio(shim, tmp_path):
    """A getrandom() that returns 0 forever (a seccomp rule can) is retried a
    few times, then every call raises OSError(EIO); nothing hangs."""
    import errno
    res = shim_child("""
        out = attempt_all()
        print(json.dumps({"out": out, "calls": SHIM.getrandom_shim_calls()}))
    """, shim, tmp_path, mode="zero", caller="arc4py", preamble=CHILD_SOURCE)
    check_all_failed(res["out"], errno.EIO)
    assert res["calls"] >= len(res["out"])


def test_mmap_failure_for_a_new_state_is_memory_error(shim, tmp_path):
    res = shim_child("""
        import threading
        import arc4py
        arc4py.arc4random()
        box = {}
        def worker():
            SHIM.shim_fail_mmap(1)
            for name, fn in (("arc4random", arc4py.arc4random),
                             ("buf16", lambda: arc4py.arc4random_buf(16)),
                             ("stir", arc4py.stir)):
                try:
                    fn()
                    box[name] = "output"
                except MemoryError as e:
                    box[name] = "MemoryError: " + str(e)
                except OSError as e:
                    box[name] = "OSError %d" % e.errno
            target = bytearray(b"x" * 5000)
            try:
                arc4py.fill(target)
                box["fill"] = "output"
            except MemoryError:
                box["fill"] = "MemoryError"
            box["fill_wiped"] = not any(target)
            SHIM.shim_fail_mmap(0)
            box["after"] = len(set(arc4py.arc4random_buf(16) for _ in range(5)))
        t = threading.Thread(target=worker)
        t.start(); t.join()
        print(json.dumps(box))
    """, shim, tmp_path, caller="arc4py")
    for name in ("arc4random", "buf16", "stir"):
        assert res[name].startswith("MemoryError"), res
        assert "memory" in res[name], res
    # The C fast calls and the Cython defs raise one error, word for word.
    assert res["arc4random"] == res["buf16"] == res["stir"], res
    assert res["fill"] == "MemoryError" and res["fill_wiped"], res
    assert res["after"] == 5, "the thread could not draw once memory returned"


@pytest.mark.parametrize("advice,name", [(18, "wipeonfork"), (16, "dontdump")],
                         ids=["wipeonfork", "dontdump"])
def test_protection_not_reported_while_a_state_lacks_it(shim, tmp_path,
                                                        advice, name):
    """madvise() refused for one thread's state: fork_protection() stops
    naming that protection while the thread lives, and names it again once
    the thread (and its state) is gone."""
    # (advice: Linux's MADV_* values, fixed ABI; older Pythons lack names.)
    import mmap as _mmap
    assert getattr(_mmap, "MADV_" + name.upper(), advice) == advice
    res = shim_child(f"""
        import threading
        import arc4py
        before = arc4py.fork_protection()
        go, drawn = threading.Event(), threading.Event()
        box = {{}}
        def worker():
            SHIM.shim_fail_madvise({advice})
            arc4py.arc4random()
            SHIM.shim_fail_madvise(0)
            box["in_thread"] = arc4py.fork_protection()
            drawn.set(); go.wait()
        t = threading.Thread(target=worker)
        t.start(); drawn.wait()
        during = arc4py.fork_protection()
        go.set(); t.join()
        # join() returns before the OS thread's key destructors have run.
        import time
        for _ in range(500):
            after = arc4py.fork_protection()
            if {name!r} in after:
                break
            time.sleep(0.01)
        print(json.dumps({{"before": before, "during": during,
                          "in_thread": box["in_thread"], "after": after}}))
    """, shim, tmp_path, caller="arc4py")
    assert name in res["before"], res
    assert name not in res["during"], res
    assert name not in res["in_thread"], res
    assert name in res["after"], res


# ---- stir(all_threads=True) -------------------------------------------------

STIR_ALL_CHILD = """
    import threading
    import arc4py
    arc4py.arc4random()
    ready, go = threading.Event(), threading.Event()
    box = {}
    def worker():
        arc4py.arc4random_buf(1)            # seeded, a buffer's worth left
        ready.set(); go.wait()
        try:
            arc4py.arc4random_buf(16)
            box["worker"] = "output"
        except OSError as e:
            box["worker"] = e.errno
    t = threading.Thread(target=worker)
    t.start(); ready.wait()
"""


@pytest.mark.parametrize("all_threads", [True, False])
def test_stir_all_threads_makes_buffered_threads_reseed(shim, tmp_path,
                                                        all_threads):
    """After stir(all_threads=True) returns, a thread holding buffered bytes
    must reseed before its next output: with getrandom refusing from then
    on, its next draw fails instead of handing out its buffer.  A plain
    stir() leaves the other thread's buffer in use."""
    res = shim_child(STIR_ALL_CHILD + f"""
    arc4py.stir(all_threads={all_threads})
    SHIM.getrandom_shim_set(b"eperm")
    mine = arc4py.arc4random_buf(16).hex()   # the caller reseeded already
    go.set(); t.join()
    print(json.dumps({{"worker": box["worker"], "mine": mine}}))
    """, shim, tmp_path, caller="arc4py")
    assert res["mine"] != "00" * 16
    if all_threads:
        assert res["worker"] == errno_eperm(), (
            "a thread handed out buffered bytes after stir(all_threads=True)")
    else:
        assert res["worker"] == "output"


def test_stir_all_threads_failing_still_reaches_other_threads(shim, tmp_path):
    res = shim_child(STIR_ALL_CHILD + """
    SHIM.getrandom_shim_set(b"eperm")
    try:
        arc4py.stir(all_threads=True)
        raised = None
    except OSError as e:
        raised = e.errno
    go.set(); t.join()
    print(json.dumps({"raised": raised, "worker": box["worker"]}))
    """, shim, tmp_path, caller="arc4py")
    assert res == {"raised": errno_eperm(), "worker": errno_eperm()}


def test_stir_takes_all_threads_by_keyword_only():
    arc4py.stir()
    arc4py.stir(all_threads=False)
    arc4py.stir(all_threads=True)
    with pytest.raises(TypeError):
        arc4py.stir(True)


def _can_bind_mount():
    """Can this process make a mount namespace and bind-mount in it?"""
    if not LINUX or os.geteuid() != 0 or not Path("/usr/bin/unshare").exists():
        return False
    proc = subprocess.run(["unshare", "-m", "sh", "-c",
                           "mount --bind /dev/zero /dev/urandom"],
                          capture_output=True)
    return proc.returncode == 0


@pytest.mark.skipif(not _can_bind_mount(),
                    reason="needs root and a mount namespace (unshare -m) to "
                           "bind-mount /dev/zero over /dev/urandom")
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/dev/full"])
def test_fallback_refuses_a_planted_character_device(shim, tmp_path, device):
    """With getrandom refused (ENOSYS) and a character device that is not the
    kernel's random device mounted over /dev/urandom, no output: EIO."""
    code = textwrap.dedent("""
        import errno, json, arc4py
        out = []
        for fn in (arc4py.arc4random, lambda: arc4py.token_hex(16),
                   lambda: arc4py.fill(bytearray(1 << 20))):
            try:
                fn()
                out.append("output")
            except OSError as e:
                out.append(errno.errorcode.get(e.errno, str(e.errno)))
        print(json.dumps(out))
    """)
    # The interpreter starts inside the new mount namespace, after the bind
    # mount: sh gets its path as $0 and its arguments as "$@".
    proc = run_python(
        ["-c", code], cwd=tmp_path, **shim_env(shim, "enosys", "arc4py"),
        prefix=["unshare", "-m", "sh", "-c",
                f'mount --bind {device} /dev/urandom && exec "$0" "$@"'])
    assert last_json(proc) == ["EIO"] * 3
