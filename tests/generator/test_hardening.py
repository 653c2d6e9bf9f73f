"""Validation and hardening: short versions of the long runs in
tests/stats, tests/fuzz and tests/stress, plus entropy failures from the
kernel's side and calls from odd moments of a thread's or process's life.

* dieharder: the --quick subset for the default core, from large fills and
  from arc4random_buf(16) calls (skipped without dieharder: apt-get install
  dieharder)
* fuzz: 20,000 random inputs to tests/fuzz/fuzz_api.py's harness
* stress: tests/stress/stress.py --quick (32 threads x 3 s, 50 forks with
  raw fork syscalls, 1,000 thread create/exit cycles)
* entropy failures from the kernel's side (a real seccomp filter) are in
  tests/generator/test_hardening_seccomp.py
* draws from a thread being torn down (threading.local __del__, weakref
  finalizer, pthread key destructors), from a signal handler firing every
  half millisecond, and at interpreter shutdown

tests/generator/test_entropy_failure.py covers the LD_PRELOAD getrandom shim (EPERM,
ENOSYS, EINTR from the C library's wrapper); nothing here repeats it.
See VALIDATION.md for the long runs and their results.
"""
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import weakref

import pytest

import arc4py
from helpers import (
    LINUX,
    PYTHON,
    TESTS_DIR,
    child_env,
    last_json,
    run_python,
)

# Dieharder, the fuzzer and the stress script.
pytestmark = pytest.mark.slow

SANITIZED = os.environ.get("ARC4PY_SANITIZED", "") not in ("", "0")


# ---- 1. statistical battery (short) -------------------------------------------

@pytest.mark.skipif(shutil.which("dieharder") is None,
                    reason="dieharder is not installed (apt-get install dieharder)")
@pytest.mark.parametrize("request_size", [None, 16],
                         ids=["large-fills", "arc4random_buf-16"])
def test_dieharder_quick_default_core(tmp_path, request_size):
    # The stream of large fills (one-time keys), and the buffered path that
    # small requests take.
    script = TESTS_DIR / "stats" / "run_dieharder.sh"
    core = arc4py.backend()
    extra = [] if request_size is None else ["--request-size", str(request_size)]
    tag = "" if request_size is None else f"-request{request_size}"
    proc = subprocess.run(
        ["bash", str(script), "--quick", *extra, "--out", str(tmp_path / "logs"),
         core],
        env=child_env(PYTHON=PYTHON, NICE="0"), cwd=str(tmp_path),
        capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    failed = re.findall(r"^.*\|\s*FAILED\s*$", out, re.M)
    assert not failed, out        # a FAILED result line, in the battery or a re-run
    assert proc.returncode == 0, out
    assert f"{core}{tag}: 6 results" in out, out


# ---- 2. fuzzing (short) ---------------------------------------------------------

def test_fuzz_api_short_run(tmp_path):
    seed = int.from_bytes(os.urandom(4), "little")
    proc = run_python([TESTS_DIR / "fuzz" / "fuzz_api.py", "--random", "20000",
                       "--seed", seed], cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, (
        f"fuzz finding (seed {seed}; rerun: python tests/fuzz/fuzz_api.py "
        f"--random 20000 --seed {seed}):\n{proc.stdout[-2000:]}\n"
        f"{proc.stderr[-4000:]}")
    assert "20000 executions" in proc.stdout and "no finding" in proc.stdout


# ---- 3. stress (reduced) ----------------------------------------------------------

@pytest.mark.skipif(not LINUX, reason="reads /proc/self/status and smaps")
def test_stress_reduced(tmp_path):
    args = [TESTS_DIR / "stress" / "stress.py", "--quick"]
    if SANITIZED:
        args.append("--no-rss-limit")  # ASan's quarantine holds freed memory
    proc = run_python(args, cwd=tmp_path, timeout=600)
    res = last_json(proc)
    assert res["errors"] == 0, proc.stdout + proc.stderr
    assert res["repeats"] == 0 and res["cycle_repeats"] == 0
    assert res["forks"] == 50 and res["hung_children"] == 0
    assert res["outputs_16B"] > 10_000
    # No state page outlives its thread.
    assert res["state_pages_kib"][0] == res["state_pages_kib"][-1]


# ---- 6. calls from a thread being torn down, a signal handler, shutdown -------

def test_draw_from_thread_local_del_and_finalizer_at_thread_exit():
    """Objects held only by a threading.local die while their thread exits;
    their __del__ and a weakref finalizer draw from the generator there."""
    outs = []
    lock = threading.Lock()
    local = threading.local()

    def record(kind, tid):
        b = arc4py.arc4random_buf(16)
        x = arc4py.arc4random()
        buf = bytearray(5000)
        arc4py.fill(buf)
        assert 0 <= x < 1 << 32 and any(buf)
        with lock:
            outs.append((kind, tid, b, bytes(buf[:16])))

    class Drawer:
        def __init__(self, tid):
            self.tid = tid

        def __del__(self):
            record("del", self.tid)

    class Anchor:
        pass

    def body():
        tid = threading.get_native_id()
        record("body", tid)
        local.drawer = Drawer(tid)
        local.anchor = Anchor()
        weakref.finalize(local.anchor, record, "finalize", tid)

    for _ in range(10):
        ts = [threading.Thread(target=body) for _ in range(20)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    kinds = {}
    for kind, _, _, _ in outs:
        kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds == {"body": 200, "del": 200, "finalize": 200}, kinds
    values = [v for _, _, b, f in outs for v in (b, f)]
    assert len(set(values)) == len(values) == 1200


PTHREAD_KEY_CHILD = r"""
import ctypes, json, os, sys, threading
import arc4py

FIRST = sys.argv[1]   # whose pthread key is made first: "arc4py" or "ours"
N = int(sys.argv[2])
sys.path.insert(0, sys.argv[3])   # tests/, for helpers
from helpers import state_pages_kib as state_pages

libc = ctypes.CDLL(None)
DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
START = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
libc.pthread_setspecific.argtypes = [ctypes.c_uint, ctypes.c_void_p]
libc.pthread_create.argtypes = [ctypes.c_void_p, ctypes.c_void_p, START,
                                ctypes.c_void_p]
libc.pthread_join.argtypes = [ctypes.c_ulong, ctypes.c_void_p]
outs = []
errors = []

@DESTRUCTOR
def destructor(value):
    # Runs in the exiting thread, from glibc's thread-exit path, after (or
    # before) arc4py's own destructor has wiped and unmapped its state.
    try:
        outs.append(("destructor", threading.get_native_id(),
                     arc4py.arc4random_buf(16), arc4py.arc4random_buf(3000)[-16:]))
    except BaseException as e:
        errors.append(repr(e))

@START
def start(arg):
    try:
        outs.append(("body", threading.get_native_id(),
                     arc4py.arc4random_buf(16), arc4py.arc4random_buf(3000)[-16:]))
        libc.pthread_setspecific(key.value, 1)
    except BaseException as e:
        errors.append(repr(e))
    return None

key = ctypes.c_uint()
if FIRST == "arc4py":
    arc4py.arc4random()                       # arc4py's key exists first
    libc.pthread_key_create(ctypes.byref(key), destructor)
else:
    libc.pthread_key_create(ctypes.byref(key), destructor)
    arc4py.arc4random()
before = state_pages()
for i in range(N):
    tid = ctypes.c_ulong()
    assert libc.pthread_create(ctypes.byref(tid), None, start, None) == 0
    assert libc.pthread_join(tid.value, None) == 0
after = state_pages()
values = [v for o in outs for v in o[2:]]
pairs = {}
for kind, tid, _, _ in outs:
    pairs.setdefault(tid, []).append(kind)
print(json.dumps({"n": len(outs), "errors": errors[:3],
                  "distinct": len(set(values)) == len(values),
                  "paired": all(k == ["body", "destructor"] for k in pairs.values()),
                  "before": before, "after": after}))
"""


@pytest.mark.skipif(not LINUX, reason="glibc pthread keys and /proc/self/smaps")
@pytest.mark.parametrize("first", ["arc4py", "ours"])
def test_draw_from_pthread_key_destructor(tmp_path, first):
    """A C-level thread-exit path: a pthread key destructor (here a ctypes
    callback in a thread made by pthread_create) draws while the thread is
    being torn down.  With arc4py's key made first, its destructor has
    already wiped and unmapped the state: the draw builds a fresh state,
    which glibc's next destructor round frees.  Output correct and distinct,
    and no state page left behind."""
    script = tmp_path / "keys.py"
    script.write_text(PTHREAD_KEY_CHILD)
    res = last_json(run_python([script, first, 300, TESTS_DIR], cwd=tmp_path,
                               timeout=300))
    assert res["errors"] == [], res
    assert res["n"] == 600 and res["distinct"] and res["paired"], res
    assert res["after"] == res["before"], (
        f"state pages {res['before']} kB -> {res['after']} kB: states made "
        f"during thread exit were not freed")


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs setitimer")
def test_draw_from_signal_handler():
    """SIGALRM every 0.5 ms while the main thread draws in a loop (small
    draws, a refill-crossing one, a large GIL-released fill, stir); the
    handler draws too.  Python runs the handler between bytecodes, never
    inside the generator's C code, so the two cannot interleave: all output
    distinct and well-formed."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers need the main thread")
    got = []

    def handler(signum, frame):
        got.append(arc4py.arc4random_buf(16))
        b = bytearray(48)
        arc4py.fill(b)
        got.append(bytes(b[32:]))
        if len(got) % 50 == 0:
            arc4py.stir()

    main = []
    big = bytearray(1 << 16)
    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
    try:
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline or len(got) < 200:
            main.append(arc4py.arc4random_buf(16))
            main.append(arc4py.arc4random_buf(3100)[-16:])
            assert 0 <= arc4py.arc4random_uniform(1000) < 1000
            arc4py.fill(big)
            main.append(bytes(big[-16:]))
            if time.monotonic() > deadline + 20:
                break
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, old)
    assert len(got) >= 200, f"the handler ran only {len(got) // 2} times"
    values = main + got
    assert len(set(values)) == len(values)


def test_draws_at_interpreter_shutdown(tmp_path, child):
    """An atexit handler, a module global's __del__ during finalisation and
    daemon threads still drawing while the interpreter exits: no crash, and
    what was drawn is distinct."""
    out = tmp_path / "out.txt"
    proc = child(f"""
        import atexit, threading, arc4py
        OUT = {str(out)!r}

        def write(tag, b):
            with open(OUT, "a") as f:
                f.write(tag + " " + b.hex() + "\\n")

        class AtShutdown:
            def __del__(self):
                write("del", arc4py.arc4random_buf(16))

        keep = AtShutdown()
        atexit.register(lambda: write("atexit", arc4py.arc4random_buf(16)))

        def spin():
            buf = bytearray(1 << 15)
            while True:
                arc4py.arc4random_buf(16)
                arc4py.fill(buf)          # GIL released: may be in C at exit

        for _ in range(4):
            threading.Thread(target=spin, daemon=True).start()
        write("main", arc4py.arc4random_buf(16))
    """)
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text().split()
    tags = lines[0::2]
    assert "main" in tags and "atexit" in tags, lines
    values = lines[1::2]
    assert len(set(values)) == len(values)
