"""Helpers shared by the tests and by the standalone scripts in tests/stress
and tests/fuzz: plain functions, importable from both (``from helpers import
...``; a script first puts tests/ on sys.path).  The pytest fixtures built
on them (``cc``, ``getrandom_shim``) are in conftest.py.

    PYTHON / child_env / run_python / run_child / start_python / last_json
                                                     child interpreters
    c_verdict                                        a tests/c program's verdict
    run_threads                                      threads started together
    find_cc / zig_cc                                 C compilers
    try_compile / compile_c / build_shared / build_program /
    build_generator_program / build_getrandom_shim / shim_env   C builds
    CSRC / INCLUDE / SHIM_SOURCE                     what they build from
    core_table_names / core_skip_reason / RFC_VECTORS   the cores, RFC 8439
    state_pages_kib / rss_kib / kernel_has_vdso_getrandom / write_all
                                                     Linux process facts, pipes
    check / Failure                                  a standalone script's checks
    BUFFER_BYTES / DIRECT_BYTES / REKEY_BYTES        the generator's sizes
"""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import traceback
from pathlib import Path

import arc4py
import arc4py._core

# REKEY_BYTES: bytes of each refill that key the next one (small requests
# see BUFFER_BYTES - REKEY_BYTES).
from arc4py._core import (
    _REKEY_BYTES as REKEY_BYTES,
    BUFFER_BYTES,
    DIRECT_BYTES,
    RESEED_INTERVAL,
)

# The environment of a child that imports this same arc4py: the package's
# own (the bench runs its other cores the same way).
from arc4py.bench.machine import arc4py_home, child_env

__all__ = [
    "BUFFER_BYTES", "CSRC", "DIRECT_BYTES", "INCLUDE", "LINUX", "Failure", "check",
    "PKG_PARENT", "PYTHON", "REKEY_BYTES", "REPO", "RESEED_INTERVAL", "RFC_VECTORS",
    "SHIM_SOURCE",
    "TESTS_DIR", "build_generator_program", "build_getrandom_shim", "build_program",
    "build_shared", "c_verdict", "child_env", "compile_c", "core_skip_reason",
    "core_table_names", "find_cc",
    "kernel_has_vdso_getrandom", "last_json", "one_line", "rfc_vector_lines", "rss_kib",
    "run_cli",
    "run_child", "run_python", "run_threads", "shim_env", "start_python",
    "state_pages_kib", "try_compile", "write_all", "zig_cc",
]

TESTS_DIR = Path(__file__).resolve().parent
#: The source checkout holding tests/ (it may have no setup.py: an sdist).
REPO = TESTS_DIR.parent
#: The directory holding the arc4py package this process imported.
PKG_PARENT = arc4py_home()
LINUX = sys.platform.startswith("linux")
#: The interpreter every child runs: this one.
PYTHON = sys.executable
#: The C cores and the C generator, with their headers.
CSRC = REPO / "arc4py" / "csrc"
#: The public C API header's folder (arc4py/capi.h), as get_include() ships it.
INCLUDE = REPO / "include"
SHIM_SOURCE = TESTS_DIR / "shims" / "getrandom_shim.c"


def core_table_names():
    """The cores of arc4py/csrc/chacha20_cores.def, the one list, then
    generic: every core there is, whether or not this build or CPU has it."""
    names = re.findall(r"^ARC4PY_CORE\((\w+),", (CSRC / "chacha20_cores.def").read_text(),
                       re.M)
    assert names, "no ARC4PY_CORE rows in chacha20_cores.def"
    return (*names, "generic")


def core_table_features():
    """{core: the CPU features it needs} from chacha20_cores.def, named as
    arc4py.cpu_features() names them (ARC4PY_CPU_OS_YMM: "os-ymm")."""
    rows = re.findall(r"^ARC4PY_CORE\((\w+),\s*\w+,\s*\w+,([^)]*)\)",
                      (CSRC / "chacha20_cores.def").read_text(), re.M)
    assert rows, "no ARC4PY_CORE rows in chacha20_cores.def"
    return {name: {f.lower().replace("_", "-")
                   for f in re.findall(r"ARC4PY_CPU_(\w+)", needs)}
            for name, needs in rows}


def core_skip_reason(name):
    """Why the core ``name`` (one of core_table_names()) cannot be tested
    here, or None when this build has it and this CPU runs it."""
    if name in arc4py.backends():
        return None
    if name in arc4py._core._not_built:
        return f"the {name} core is not in this build: {arc4py._core._not_built[name]}"
    where = {"neon": "; tests/cores/test_neon_qemu.py checks it under qemu",
             "avx512": "; tests/cores/test_avx512_emulated.py checks it "
                       "through SIMDe"}.get(name, "")
    return (f"this CPU cannot run the {name} core (runnable here: "
            f"{', '.join(arc4py.backends())}){where}")


#: RFC 8439's ChaCha20 keystream vectors (sections 2.3.2, 2.4.2, A.1): dicts
#: of hex key, nonce (RFC layout) and keystream, the int counter and a name.
RFC_VECTORS = json.loads((TESTS_DIR / "data" / "rfc8439_vectors.json").read_text())["vectors"]


def rfc_vector_lines():
    """RFC_VECTORS as the C test programs read them on stdin: one a line,
    key nonce counter keystream."""
    return "".join(f"{v['key']} {v['nonce']} {v['counter']} {v['keystream']}\n"
                   for v in RFC_VECTORS)


# ---- child interpreters ----------------------------------------------------

def _python_env(env, env_extra):
    if env is None:
        return child_env(**env_extra)
    if env_extra:
        return dict(env, **env_extra)
    return env


def run_python(argv, *, cwd=None, env=None, timeout=120, text=True,
               prefix=(), **env_extra):
    """``python argv...`` in this interpreter's executable, in ``cwd`` (by
    default a fresh empty directory, so that no source tree shadows the
    package) with ``env`` (default: child_env(**env_extra)); the
    CompletedProcess with stdout and stderr captured.  ``prefix`` is a
    command that starts the interpreter itself (``unshare ... sh -c``): it
    gets the interpreter's path and ``argv`` as its arguments."""
    env = _python_env(env, env_extra)
    cmd = [*map(str, prefix), PYTHON, *map(str, argv)]
    if cwd is not None:
        return _run(cmd, env=env, cwd=str(cwd), capture_output=True, text=text,
                    timeout=timeout)
    with tempfile.TemporaryDirectory(prefix="arc4py-child-") as tmp:
        return _run(cmd, env=env, cwd=tmp, capture_output=True, text=text,
                    timeout=timeout)


def _run(cmd, **kwargs):
    """subprocess.run, started a second time where Wine's CreateProcess
    failed with ERROR_INTERNAL_ERROR (1359): seen now and then under Wine 8
    for a call that starts when made again; the child never ran."""
    try:
        return subprocess.run(cmd, **kwargs)
    except OSError as exc:
        if getattr(exc, "winerror", None) != 1359:
            raise
        return subprocess.run(cmd, **kwargs)


def start_python(argv, *, cwd, env=None, stdout=subprocess.PIPE, **env_extra):
    """``python argv...`` as run_python starts it, but not waited for: the
    Popen, with stdout (unless given: a file descriptor) and stderr as
    (binary) pipes, for a test that talks to the child while it runs.  The
    caller waits for it and kills it."""
    return subprocess.Popen([PYTHON, *map(str, argv)],
                            stdout=stdout, stderr=subprocess.PIPE,
                            env=_python_env(env, env_extra), cwd=str(cwd))


def run_to_closed_pipe(argv, *, cwd):
    """``python argv...`` with stdout a pipe whose read end is closed before
    the child writes anything (what ``| head -1`` leaves, without the race
    against head's exit): its exit status and stderr."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = start_python(argv, stdout=write, cwd=cwd,
                            env=child_env(ARC4PY_BACKEND=None))
    finally:
        os.close(write)
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    return proc.returncode, err


#: The lines ``arc4py bench`` writes on stderr off a terminal: the start
#: line, then one as each row is done (arc4py/bench/timing.py's Progress).
BENCH_PROGRESS = re.compile(
    r"arc4py bench: \d+ figures of [\d.e-]+ s each, about \d+ s in all; "
    r"a line on stderr as each row is done|\[\d+/\d+\] .+: done \(\d+ s\)")


def without_bench_progress(stderr):
    """``stderr`` (bytes or str, the same back) less its bench progress
    lines: what else the command said."""
    text = stderr.decode() if isinstance(stderr, bytes) else stderr
    rest = "".join(line for line in text.splitlines(keepends=True)
                   if not BENCH_PROGRESS.fullmatch(line.rstrip("\r\n")))
    return rest.encode() if isinstance(stderr, bytes) else rest


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


def run_cli(*args, env=None, timeout=120):
    """Run ``python -m arc4py *args``; the CompletedProcess (bytes, UTF-8
    text: Windows' pipes otherwise get the ANSI code page)."""
    return run_python(["-m", "arc4py", *args], text=False, timeout=timeout,
                      env=env or child_env(ARC4PY_BACKEND=None, PYTHONIOENCODING="utf-8"))


def one_line(stderr):
    """The only line of a command's stderr (bytes): its one-line error."""
    lines = stderr.decode().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def c_verdict(proc):
    """The verdict a C test program of tests/c ends with (its format:
    tests/c/verdict.h), as a dict, after checking that the exit status
    goes with it.  Windows line ends are taken as plain ones."""
    out = proc.stdout.replace("\r\n", "\n")
    report = (f"exit {proc.returncode}\nstdout:\n{out[-6000:]}\n"
              f"stderr:\n{proc.stderr[-3000:]}")
    lines = out.strip().splitlines()
    assert lines and lines[-1].startswith("{"), f"no verdict line:\n{report}"
    verdict = json.loads(lines[-1])
    assert verdict["verdict"] in ("ok", "fail", "skip"), report
    assert proc.returncode == (1 if verdict["verdict"] == "fail" else 0), report
    return verdict


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

def find_cc(*names):
    """The first of the compilers ``names`` on PATH (by default any C
    compiler: cc, gcc or clang), or None."""
    for name in names or ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path is not None:
            return path
    return None


def zig_cc():
    """The command of zig's C compiler (``python -m ziglang cc``, from PyPI's
    ziglang), which cross-compiles for every target; None when ziglang is
    not installed."""
    if importlib.util.find_spec("ziglang") is None:
        return None
    return [PYTHON, "-m", "ziglang", "cc"]


def _cc_command(cc):
    # A compiler is a path, or a command of several words (zig_cc()).
    return [cc] if isinstance(cc, (str, os.PathLike)) else list(cc)


def try_compile(cc, code, *flags, out=None):
    """Compile the C source text ``code`` with ``flags``: only checked
    (-fsyntax-only) or, given ``out``, linked into that program.  The
    CompletedProcess, whatever the outcome: for probing what a compiler
    can do here before a test relies on it."""
    cmd = [*_cc_command(cc), *flags, "-x", "c", "-"]
    cmd += ["-fsyntax-only"] if out is None else ["-o", str(out)]
    return subprocess.run([str(c) for c in cmd], input=code,
                          capture_output=True, text=True)


def compile_c(cc, *args):
    """Run the compiler ``cc`` (a path, or a command such as zig_cc()) with
    ``args``; the CompletedProcess.  A compiler error fails the calling
    test with the command and the compiler's message."""
    cmd = [str(c) for c in [*_cc_command(cc), *args]]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, (
        f"{' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")
    return proc


def build_shared(cc, sources, out, *flags):
    """Compile ``sources`` into the shared library ``out``; its path.
    ``flags`` follow its own -O2, so an -O among them wins.  A compiler
    error fails the calling test with the compiler's message."""
    compile_c(cc, "-shared", "-fPIC", "-O2", *flags, "-o", out, *sources)
    return str(out)


def build_program(cc, sources, exe, *flags):
    """Build the C program ``exe`` from ``sources`` with ``flags``, the
    generator's headers (arc4py/csrc/) and threads; its path.
    A compiler error fails the calling test with the compiler's message."""
    compile_c(cc, *flags, "-I", CSRC, *sources,
              "-o", exe, "-pthread")
    return str(exe)


def build_generator_program(cc, program, exe, *flags):
    """Build the C test program ``program`` (tests/c/) with every C source of
    the cores and the generator (arc4py/csrc/*.c, so renamed or added files
    need no change here) into ``exe``; its path.  A compiler error fails the
    calling test with the compiler's message."""
    compile_c(cc, "-O3", "-fvisibility=hidden", "-Wall", "-Wextra", *flags,
              "-I", CSRC, *sorted(CSRC.glob("*.c")), program,
              "-o", exe, "-lpthread")
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


def kernel_has_vdso_getrandom():
    """Whether this kernel's vDSO exports __vdso_getrandom, read from this
    process's memory (the vDSO's range from /proc/self/maps) independently
    of arc4py."""
    import ctypes
    with open("/proc/self/maps") as f:
        for line in f:
            if line.rstrip().endswith("[vdso]"):
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                image = ctypes.string_at(lo, hi - lo)
                return image[:4] == b"\x7fELF" and b"\0__vdso_getrandom\0" in image
    return False


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


#: Child-process source that makes numpy unimportable, as if it were not
#: installed: a finder that refuses it (dedented, to go first in a child).
NO_NUMPY_FINDER = """
import sys

class NoNumpy:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" or name.startswith("numpy."):
            raise ModuleNotFoundError(f"No module named {name!r}",
                                      name=name)
        return None

sys.meta_path.insert(0, NoNumpy())
"""
