"""Helpers shared by the tests and by the standalone scripts in tests/stress
and tests/fuzz: plain functions, importable from both (``from helpers import
...``; a script first puts tests/ on sys.path).  The pytest fixtures built
on them (``cc``, ``getrandom_shim``) are in conftest.py.

    child_env / run_python / run_child / last_json   child interpreters
    run_threads                                      threads started together
    find_cc / build_shared / build_getrandom_shim / shim_env   C helpers
    state_pages_kib / rss_kib / write_all            Linux process facts, pipes
    check / Failure                                  a standalone script's checks
    BUFFER_BYTES / DIRECT_BYTES / REKEY_BYTES        the generator's sizes
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import traceback
from pathlib import Path

import arc4py
from arc4py._core import BUFFER_BYTES, DIRECT_BYTES, RESEED_INTERVAL

__all__ = [
    "BUFFER_BYTES", "DIRECT_BYTES", "LINUX", "Failure", "check", "PKG_PARENT", "REKEY_BYTES",
    "REPO", "RESEED_INTERVAL", "SHIM_SOURCE", "TESTS_DIR", "build_getrandom_shim",
    "build_shared", "child_env", "find_cc", "last_json", "rss_kib",
    "run_child", "run_python", "run_threads", "shim_env", "state_pages_kib",
    "write_all",
]

TESTS_DIR = Path(__file__).resolve().parent
#: The source checkout holding tests/ (it may have no setup.py: an sdist).
REPO = TESTS_DIR.parent
#: The directory holding the arc4py package this process imported.
PKG_PARENT = str(Path(arc4py.__file__).resolve().parent.parent)
LINUX = sys.platform.startswith("linux")
#: Bytes of each refill of the buffer that key the next one (ChaCha20's
#: 32-byte key and 8-byte nonce): small requests see BUFFER_BYTES - 40.
REKEY_BYTES = 32 + 8
SHIM_SOURCE = TESTS_DIR / "shims" / "getrandom_shim.c"


# ---- child interpreters ----------------------------------------------------

def _site_dirs():
    import site
    dirs = list(getattr(site, "getsitepackages", list)())
    if getattr(site, "ENABLE_USER_SITE", False):
        dirs.append(site.getusersitepackages())
    return {os.path.realpath(d) for d in dirs}


def child_env(**extra):
    """The environment of a child interpreter that imports this same arc4py,
    from any directory: its parent directory goes first on PYTHONPATH
    unless it is a site-packages directory already.  ``extra`` variables
    are set; one given as None is removed (``ARC4PY_BACKEND=None``)."""
    env = dict(os.environ)
    if os.path.realpath(PKG_PARENT) not in _site_dirs():
        env["PYTHONPATH"] = os.pathsep.join(
            [PKG_PARENT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                            if p])
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = str(value)
    return env


def run_python(argv, *, cwd=None, env=None, timeout=120, text=True,
               **env_extra):
    """``python argv...`` in this interpreter's executable, in ``cwd`` (by
    default a fresh empty directory, so that no source tree shadows the
    package) with ``env`` (default: child_env(**env_extra)); the
    CompletedProcess with stdout and stderr captured."""
    if env is None:
        env = child_env(**env_extra)
    elif env_extra:
        env = dict(env, **env_extra)
    cmd = [sys.executable, *map(str, argv)]
    if cwd is not None:
        return subprocess.run(cmd, env=env, cwd=str(cwd), capture_output=True,
                              text=text, timeout=timeout)
    with tempfile.TemporaryDirectory(prefix="arc4py-child-") as tmp:
        return subprocess.run(cmd, env=env, cwd=tmp, capture_output=True,
                              text=text, timeout=timeout)


def run_child(code, *args, **kwargs):
    """Run the (dedented) source ``code`` with ``python -c``; ``args`` become
    its sys.argv[1:].  Keyword arguments as for run_python."""
    return run_python(["-c", textwrap.dedent(code), *args], **kwargs)


def last_json(proc):
    """The JSON object on the last line of a child's stdout, after checking
    that the child exited with status 0."""
    assert proc.returncode == 0, (
        f"child failed ({proc.returncode}):\nstdout:\n{proc.stdout[-3000:]}\n"
        f"stderr:\n{proc.stderr[-3000:]}")
    lines = proc.stdout.strip().splitlines()
    assert lines, f"child printed nothing; stderr:\n{proc.stderr[-3000:]}"
    return json.loads(lines[-1])


# ---- threads -------------------------------------------------------------------

def run_threads(n, target, *, concurrent=True):
    """Run ``target(i)`` in ``n`` threads and return their results in order.
    With ``concurrent`` the threads wait at a barrier so that they all run
    at once.  An exception in any thread fails the caller, with the
    thread's traceback."""
    results = [None] * n
    errors = []
    barrier = threading.Barrier(n) if concurrent else None

    def body(i):
        try:
            if barrier is not None:
                barrier.wait()
            results[i] = target(i)
        except BaseException:
            errors.append(traceback.format_exc())
            if barrier is not None:
                barrier.abort()

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    return results


# ---- C helpers ---------------------------------------------------------------------

def find_cc():
    """A C compiler on PATH (cc, gcc or clang), or None."""
    return shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def build_shared(cc, sources, out, *flags):
    """Compile ``sources`` into the shared library ``out``; its path.  A
    compiler error fails the calling test with the compiler's message."""
    cmd = [cc, "-shared", "-fPIC", "-O2", *flags, "-o", str(out),
           *map(str, sources)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, (
        f"{' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")
    return str(out)


def build_generator_program(cc, program, exe, *flags):
    """Build the C test program ``program`` (tests/c/) with every C source of
    the cores and the generator (arc4py/csrc/*.c, so renamed or added files
    need no change here) into ``exe``; its path.  A compiler error fails the
    calling test with the compiler's message."""
    csrc = REPO / "arc4py" / "csrc"
    cmd = [cc, "-O3", "-fvisibility=hidden", "-Wall", "-Wextra", *flags,
           "-I", str(REPO / "include"), "-I", str(csrc),
           *map(str, sorted(csrc.glob("*.c"))), str(program),
           "-o", str(exe), "-lpthread"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{program} did not build:\n{proc.stderr}"
    return str(exe)


def build_getrandom_shim(cc, out_dir):
    """tests/shims/getrandom_shim.c, built in ``out_dir``: its path."""
    return build_shared(cc, [SHIM_SOURCE],
                        Path(out_dir) / "libgetrandom_shim.so", "-ldl")


def shim_env(shim, mode=None, caller=None):
    """Variables (for child_env) that preload the getrandom shim: ``mode``
    (GETRANDOM_SHIM) and ``caller`` (GETRANDOM_SHIM_CALLER) as given, None
    leaving them unset; SHIM_PATH lets the child load it with ctypes."""
    return {"LD_PRELOAD": shim, "SHIM_PATH": shim, "GETRANDOM_SHIM": mode,
            "GETRANDOM_SHIM_CALLER": caller}


# ---- Linux process facts, pipes ------------------------------------------------

def rss_kib():
    """This process's resident set (VmRSS) in KiB, or -1 if unknown."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def state_pages_kib():
    """Total size in KiB of the mappings marked wipe-on-fork: the generator
    states (nothing else in a Python process asks for MADV_WIPEONFORK);
    -1 if /proc/self/smaps cannot be read."""
    total = size = 0
    try:
        with open("/proc/self/smaps") as f:
            for line in f:
                if line.startswith("Size:"):
                    size = int(line.split()[1])
                elif line.startswith("VmFlags:") and " wf" in line:
                    total += size
    except OSError:
        return -1
    return total


class Failure(Exception):
    """A check of a standalone script (tests/stress) did not hold."""


def check(cond, what):
    """Raise Failure(what) unless ``cond``."""
    if not cond:
        raise Failure(what)


def write_all(fd, data):
    """os.write until all of ``data`` is written."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
