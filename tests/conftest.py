"""Fixtures shared by the test files (their plain helpers are in helpers.py).

    cc               a C compiler's path (skips when there is none)
    getrandom_shim   tests/shims/getrandom_shim.c built once, its .so path
                     (skips off Linux, where LD_PRELOAD cannot replace it)
    child            run_child() bound to the test's tmp_path as the cwd
    hooks_build      a copy of arc4py built with ARC4PY_TEST_HOOKS=1, its root
    capi_demo        tests/capi_ext's two extensions, built against this
                     arc4py's C API: their directory

A test that uses hooks_build or capi_demo is marked ``slow`` (each builds
extension modules): ``pytest -m "not slow"`` leaves it out.
"""
import collections
import functools
import importlib.util
import os
import re
import shutil
import sys
import sysconfig
from pathlib import Path

import pytest

import arc4py
from helpers import (
    LINUX,
    REPO,
    SHIM_SOURCE,
    TESTS_DIR,
    build_getrandom_shim,
    find_cc,
    run_child,
    run_python,
    zig_cc,
)

_BUILDING_FIXTURES = {"hooks_build", "capi_demo"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _BUILDING_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


#: An install hint in a skip's reason: "(pip install ziglang)".
_INSTALL_HINT = re.compile(r"((?:pip|apt-get|pyenv) install [^);:]+)")


def skips_by_remedy(reasons):
    """{what would run them: count} over skip reasons: the install hint a
    reason names, else None (another CPU, OS or Python)."""
    counts = collections.Counter()
    for reason in reasons:
        hints = _INSTALL_HINT.findall(reason)
        counts[hints[0].strip() if hints else None] += 1
    return counts


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter):
    """The skips, counted by what would run them: every skip is expected
    (a test of what this machine lacks), and -rs lists each reason."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    reasons = [r.longrepr[2] if isinstance(r.longrepr, tuple) else str(r.longrepr)
               for r in skipped]
    counts = skips_by_remedy(reasons)
    write = terminalreporter.write_line
    terminalreporter.write_sep(
        "-", f"{len(skipped)} skipped, as expected: each needs what this "
             f"machine lacks")
    for remedy, n in sorted(counts.items(), key=lambda kv: (kv[0] is None, -kv[1])):
        write(f"{n:5d}  " + (remedy or "another CPU, OS or Python build, "
                             "or a tool named in the reason"))
    write("(pytest -rs lists each with its reason)")


def pytest_report_header(config):
    return (f"arc4py {arc4py.__version__} from {arc4py.__file__}; core "
            f"{arc4py.backend()} (runnable: {', '.join(arc4py.backends())})")


@pytest.fixture(scope="session")
def cc():
    """The C compiler (cc, gcc or clang) that builds the tests' helpers."""
    path = find_cc()
    if path is None:
        pytest.skip("no C compiler (cc, gcc or clang) on PATH")
    return path


@pytest.fixture(scope="session")
def zig():
    """zig's C compiler, the command (helpers.zig_cc()), which
    cross-compiles for every target."""
    command = zig_cc()
    if command is None:
        pytest.skip("no zig (pip install ziglang) to build for other targets")
    return command


@pytest.fixture(scope="session")
def getrandom_shim(cc, tmp_path_factory):
    """The LD_PRELOAD getrandom shim, compiled once per session; its path.
    Use with helpers.shim_env(getrandom_shim, mode, caller)."""
    if not LINUX:
        pytest.skip("the getrandom LD_PRELOAD shim is Linux-only")
    if not SHIM_SOURCE.exists():
        pytest.skip(f"{SHIM_SOURCE} is missing")
    return build_getrandom_shim(cc, tmp_path_factory.mktemp("shim"))


@pytest.fixture
def child(tmp_path):
    """``child(code, *args, timeout=120, **env)``: run_child in tmp_path."""
    return functools.partial(run_child, cwd=tmp_path)


@pytest.fixture(scope="session")
def hooks_build(tmp_path_factory):
    """A copy of arc4py built with ARC4PY_TEST_HOOKS=1; returns its root.
    Built once per session for every test that needs it (about 10-20 s).
    Every extension but arc4py._numpy: its users need _core's hooks and
    its capsules (the C API's and the bitgen functions'), nothing of
    numpy's."""
    if find_cc() is None:
        pytest.skip("no C compiler to build the hooks-enabled extension")
    for mod in ("setuptools", "Cython"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not installed: cannot build the "
                        f"hooks-enabled extension (pip install cython setuptools)")
    if not (REPO / "setup.py").exists():
        pytest.skip("the source tree (setup.py) is not next to the tests")
    root = tmp_path_factory.mktemp("arc4py_hooks")
    for name in ("setup.py", "pyproject.toml", "MANIFEST.in", "README.md"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, root / name)
    shutil.copytree(REPO / "include", root / "include")
    # The whole package source; only _core carries the hooks, so the numpy
    # extension is left out to keep the build short (arc4py loads
    # arc4py._numpy lazily).
    shutil.copytree(REPO / "arc4py", root / "arc4py", ignore=shutil.ignore_patterns(
        "_numpy*", "*.so", "__pycache__"))
    # Cython's C from the checkout's last build for this Python (setup.py
    # writes it into build/temp.*), mtime kept: an up-to-date one is reused.
    temp = Path("build") / "temp.{}-{}{}".format(
        sysconfig.get_platform(), sys.implementation.cache_tag,
        "t" if sysconfig.get_config_var("Py_GIL_DISABLED") else "")
    made = REPO / temp / "arc4py" / "_core.c"
    if made.exists():
        (root / temp / "arc4py").mkdir(parents=True)
        shutil.copy2(made, root / temp / "arc4py" / "_core.c")
    env = dict(os.environ, ARC4PY_TEST_HOOKS="1")
    env.pop("ARC4PY_SANITIZE", None)
    proc = run_python(
        ["setup.py", "build_ext", "--inplace", "-q", "-j", "2"],
        cwd=root, env=env, timeout=600)
    assert proc.returncode == 0, (
        f"hooks build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return root


@pytest.fixture(scope="session")
def capi_demo(tmp_path_factory):
    """tests/capi_ext's Cython and C modules, built once per session in a
    temporary directory against the arc4py this process imported (its
    get_include(), as a third-party extension builds); the directory.  They
    reach arc4py only through its capsule, so they also run on top of
    hooks_build's copy."""
    if find_cc() is None:
        pytest.skip("no C compiler to build an extension against the C API")
    pytest.importorskip("Cython", reason="Cython builds the demo extension")
    out = tmp_path_factory.mktemp("capi_demo")
    for f in (TESTS_DIR / "capi_ext").iterdir():
        if f.is_file():
            shutil.copy(f, out)
    proc = run_python(["setup_demo.py", "build_ext", "--inplace"], cwd=out,
                      timeout=600)
    assert proc.returncode == 0, (
        f"demo extensions did not build:\n{proc.stdout}\n{proc.stderr}")
    return out
