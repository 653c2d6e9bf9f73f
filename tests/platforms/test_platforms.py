"""The C cores and the generator built for every platform they support, with
zig's C compiler, and run where this machine can.

arc4py/csrc is a portable platform layer: on Linux (glibc and musl), macOS,
FreeBSD and Windows, on x86-64 and aarch64, ``cc -Iarc4py/csrc
arc4py/csrc/*.c prog.c`` must build the generator, linking only libc,
threads and (Windows) bcrypt.  Zig's clang-based ``zig cc`` (PyPI's
``ziglang``: ``python -m ziglang cc -target T``) cross-compiles all of them
from one machine with its own libc headers and import libraries, so each
target is built here with -O2 -Wall -Wextra -Werror from every
arc4py/csrc/*.c plus each of three programs of tests/c (see their headers):
core_check.c (the RFC 8439 vectors through every runnable core, each core
against generic), generator_check.c (draw sizes, uniform, stir, fork) and
threads_check.c (threads, thread churn); and for Windows fibers_check.c
(a state made on a fiber lives and dies with its thread).

    test_build[T]  every target builds warning-free (macOS, FreeBSD and
                   aarch64 Windows are only compiled and linked: nothing
                   here runs them)
    test_run[T]    the programs pass where they run: x86-64 Linux natively,
                   aarch64 Linux under qemu-aarch64-static (glibc from
                   Debian's /usr/aarch64-linux-gnu, musl static), x86-64
                   Windows under Wine (one prefix for the module)

The module is skipped, saying why, when ziglang is not installed; a run is
skipped, saying why, when its emulator or Wine is missing.  Zig caches
every object and libc it builds (in ~/.cache/zig, or ZIG_GLOBAL_CACHE_DIR).
On 2 cores a cold cache takes about 3.5 minutes for all ten targets (35-50
s each for the four musl and MinGW targets, whose libc zig builds first,
3-5 s each for the others); a warm one under a second a target, and the
whole module about 15 s, most of it Wine's start.
"""
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import (
    CSRC,
    INCLUDE,
    REPO,
    RFC_VECTORS,
    TESTS_DIR,
    c_verdict,
    rfc_vector_lines,
    zig_cc,
)

ZIG_CC = zig_cc()
if ZIG_CC is None:
    pytest.skip("ziglang is not installed (pip install ziglang): its zig cc "
                "cross-compiles the C sources for every target",
                allow_module_level=True)

PROGRAMS = ["core_check", "generator_check", "threads_check"]
WINDOWS_PROGRAMS = ["fibers_check"]

BUILD_TIMEOUT = 900  # a cold zig cache builds musl or MinGW first
RUN_TIMEOUT = 600    # qemu and Wine are slow, Wine's first start more so

#: (zig target, OS, architecture).
TARGETS = [
    ("x86_64-linux-gnu.2.17", "linux", "x86_64"),
    ("aarch64-linux-gnu.2.17", "linux", "aarch64"),
    ("x86_64-linux-musl", "linux", "x86_64"),
    ("aarch64-linux-musl", "linux", "aarch64"),
    ("x86_64-macos", "macos", "x86_64"),
    ("aarch64-macos", "macos", "aarch64"),
    ("x86_64-freebsd", "freebsd", "x86_64"),
    ("aarch64-freebsd", "freebsd", "aarch64"),
    ("x86_64-windows-gnu", "windows", "x86_64"),
    ("aarch64-windows-gnu", "windows", "aarch64"),
]
TARGET_INFO = {t: (os_, arch) for t, os_, arch in TARGETS}


def programs(target):
    return PROGRAMS + (WINDOWS_PROGRAMS if TARGET_INFO[target][0] == "windows" else [])


def _host():
    plat = sys.platform
    os_ = ("linux" if plat.startswith("linux") else
           "macos" if plat == "darwin" else
           "freebsd" if plat.startswith("freebsd") else
           "windows" if plat in ("win32", "cygwin") else plat)
    arch = platform.machine().lower()
    arch = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get(arch, arch)
    return os_, arch


HOST_OS, HOST_ARCH = _host()


def how_it_runs(target):
    """'native', 'qemu', 'wine', or None: only compiled and linked here."""
    os_, arch = TARGET_INFO[target]
    if (os_, arch) == (HOST_OS, HOST_ARCH):
        return "native"
    if os_ == "linux" and HOST_OS == "linux":
        return "qemu"
    if os_ == "windows" and arch == "x86_64" and HOST_OS == "linux" \
            and HOST_ARCH == "x86_64":
        return "wine"
    return None


def target_id(target):
    mode = how_it_runs(target)
    return target + ("-build-only" if mode is None else f"-{mode}")


class Builds:
    """Each program built for each target at most once per module
    (test_build and test_run share them): whether it built, the executable,
    the compiler's log and the seconds the build took.  One build at a time: zig already spreads a
    build (and the libc it builds into its cache) over every core, and two
    at once were no faster on 2 cores."""

    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.results = {}

    def get(self, target, program):
        if (target, program) not in self.results:
            self.results[target, program] = self._build(target, program)
        return self.results[target, program]

    def _build(self, target, program):
        os_, _ = TARGET_INFO[target]
        exe = self.out_dir / (f"{program}-{target}" +
                              (".exe" if os_ == "windows" else ""))
        cmd = [*ZIG_CC, "-target", target,
               "-O2", "-Wall", "-Wextra", "-Werror",
               "-I" + str(INCLUDE), "-I" + str(CSRC),
               *map(str, sorted(CSRC.glob("*.c"))),
               str(TESTS_DIR / "c" / f"{program}.c"),
               "-o", str(exe)]
        cmd += ["-lbcrypt"] if os_ == "windows" else ["-pthread"]
        start = time.monotonic()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=BUILD_TIMEOUT, cwd=str(REPO))
        except subprocess.TimeoutExpired:
            return {"ok": False, "exe": exe, "seconds": BUILD_TIMEOUT,
                    "log": f"{' '.join(cmd)}\nran past {BUILD_TIMEOUT} s"}
        seconds = time.monotonic() - start
        ok = done.returncode == 0 and exe.exists()
        return {"ok": ok, "exe": exe, "seconds": seconds,
                "log": f"{' '.join(cmd)}\n(exit {done.returncode})\n"
                       f"{done.stdout}{done.stderr}"}


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    return Builds(tmp_path_factory.mktemp("platforms"))


def _wine_binary():
    path = shutil.which("wine64")
    if path:
        return path
    if os.access("/usr/lib/wine/wine64", os.X_OK):
        return "/usr/lib/wine/wine64"
    return None


@pytest.fixture(scope="module")
def wine(tmp_path_factory):
    """(wine64, environment) with a fresh prefix for this module, made once
    by ``wineboot -i`` (Wine's slow first start); its wineserver is stopped
    afterwards."""
    exe = _wine_binary()
    if exe is None:
        pytest.skip("Wine is not installed: no wine64 on PATH and no "
                    "/usr/lib/wine/wine64 (apt-get install wine64)")
    prefix = tmp_path_factory.mktemp("wineprefix")
    env = dict(os.environ, WINEPREFIX=str(prefix), WINEDEBUG="-all",
               # No Mono or Gecko install offers while making the prefix.
               WINEDLLOVERRIDES="mscoree,mshtml=")
    env.pop("DISPLAY", None)
    try:
        done = subprocess.run([exe, "wineboot", "-i"], env=env,
                              capture_output=True, text=True,
                              timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.skip(f"Wine could not make a prefix: wineboot -i ran past "
                    f"{RUN_TIMEOUT} s")
    if done.returncode != 0:
        pytest.skip(f"Wine could not make a prefix: wineboot -i exited "
                    f"{done.returncode}: {(done.stdout + done.stderr)[-1500:]}")
    yield exe, env
    server = (shutil.which("wineserver") or
              next((p for p in ("/usr/lib/wine/wineserver64",
                                "/usr/lib/wine/wineserver")
                    if os.access(p, os.X_OK)), None))
    if server is not None:
        subprocess.run([server, "-k"], env=env, capture_output=True,
                       timeout=60)


def _qemu_command(target):
    """The command prefix that runs target's Linux programs under qemu-user;
    skips, saying why, when the emulator or a glibc sysroot is missing."""
    _, arch = TARGET_INFO[target]
    qemu = shutil.which(f"qemu-{arch}-static") or shutil.which(f"qemu-{arch}")
    if qemu is None:
        pytest.skip(f"no {arch} emulator: qemu-{arch}-static is not on PATH "
                    f"(apt-get install qemu-user-static)")
    if "-musl" in target:
        return [qemu]  # zig links musl statically: no sysroot needed
    sysroot = Path(f"/usr/{arch}-linux-gnu")
    loader = {"aarch64": "ld-linux-aarch64.so.1",
              "x86_64": "ld-linux-x86-64.so.2"}.get(arch, "")
    if not any((sysroot / d / loader).exists() for d in ("lib", "lib64")):
        pytest.skip(f"no {arch} glibc to run the dynamically linked "
                    f"{target} program under qemu: {sysroot}/lib/{loader} is "
                    f"missing (apt-get install libc6-{arch.replace('aarch64', 'arm64')}-cross)")
    return [qemu, "-L", str(sysroot)]


@pytest.mark.parametrize("target", [t for t, _, _ in TARGETS], ids=target_id)
def test_build(builds, target):
    """Each program builds for the target from every arc4py/csrc/*.c with
    -Wall -Wextra -Werror, linking only libc, threads and (Windows) bcrypt.
    macOS, FreeBSD and aarch64 Windows are compile-and-link only: test_run
    covers the targets this machine can run."""
    for program in programs(target):
        built = builds.get(target, program)
        print(f"{target}: {program} built in {built['seconds']:.1f} s")
        assert built["ok"], f"{target}: {program} did not build:\n{built['log'][-6000:]}"


RUNNABLE = [t for t, _, _ in TARGETS if how_it_runs(t) is not None]


@pytest.mark.parametrize("target", RUNNABLE, ids=target_id)
def test_run(builds, target, request):
    """The programs pass on the target: natively (x86-64 Linux here),
    under qemu-user (aarch64 Linux) or under Wine (x86-64 Windows)."""
    mode = how_it_runs(target)
    env = None
    if mode == "native":
        prefix = []
    elif mode == "qemu":
        prefix = _qemu_command(target)
    else:
        wine_exe, env = request.getfixturevalue("wine")
        prefix = [wine_exe]
    lines = []
    for program in programs(target):
        built = builds.get(target, program)
        assert built["ok"], (f"{target}: {program} did not build (see "
                             f"test_build):\n{built['log'][-3000:]}")
        start = time.monotonic()
        done = subprocess.run(prefix + [str(built["exe"])], env=env,
                              input=rfc_vector_lines(), capture_output=True,
                              text=True, timeout=RUN_TIMEOUT)
        print(f"{target}: {program} ran ({mode}) in "
              f"{time.monotonic() - start:.1f} s")
        verdict = c_verdict(done)
        assert verdict["verdict"] == "ok", (program, verdict, done.stdout[-8000:])
        lines += done.stdout.replace("\r\n", "\n").splitlines()
    # Every runnable core met the RFC vectors, and the generator and its
    # threads were checked (the exact count depends on the cores and OS).
    assert (f"PASS RFC 8439 vectors ({len(RFC_VECTORS)} from stdin) through generic"
            in lines), lines
    assert any(ln.startswith("PASS thread churn:") for ln in lines), lines
    if TARGET_INFO[target][0] != "windows":
        assert "PASS fork: parent's and children's 64 bytes after the fork " \
               "differ" in lines, lines
    else:
        assert ("PASS state made on a fiber: the state pages are released at "
                "the thread's exit" in lines), lines
    assert sum(ln.startswith("PASS ") for ln in lines) >= 30, lines
