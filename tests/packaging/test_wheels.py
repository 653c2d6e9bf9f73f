"""Packaging facts the wheels rest on (tools/build_wheels.py builds them;
.ci/run builds and tests one):

    test_sdist_leaves_out_cython_output   the sdist has the .pyx, not the
                                          generated .c, and its version is
                                          arc4py.__version__
    test_aarch64_pyconfig_table           wheel_targets.AARCH64_PYCONFIG is
                                          exactly where Debian's arm64 and
                                          amd64 pyconfig.h differ
    test_cython_output_goes_to_the_build  Cython's C is written into the
                                          build's own per-Python folder,
                                          not beside the .pyx
    test_no_c_compiler_says_what_to_do    a source build without a C
                                          compiler ends saying to install
                                          one or use a wheel
    test_windows_pyconfig_sizes           the Windows pyconfig.h that
                                          tools/wine_python.py writes states
                                          the sizes zig's x86_64-windows
                                          compiler has, and Python.h compiles
                                          with it
"""
import re
import runpy
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import arc4py
from helpers import REPO

# Each test builds an sdist or reads Debian packages.
pytestmark = pytest.mark.slow

TOOLS = REPO / "tools"


def _tools():
    if not (TOOLS / "wheel_targets.py").exists():
        pytest.skip("tools/ is not next to the tests")
    sys.path.insert(0, str(TOOLS))
    try:
        import debian_pkgs
        import wheel_targets
    finally:
        sys.path.remove(str(TOOLS))
    return wheel_targets, debian_pkgs


def test_build_wheels_fetches_or_skips_a_missing_python(monkeypatch):
    # docs/building.rst's `build_wheels.py --out wheelhouse` on a machine
    # without 3.14: Debian's is fetched as .ci/run does; failing that, the
    # others are built and the missing one named
    _, debian_pkgs = _tools()
    sys.path.insert(0, str(TOOLS))
    try:
        import build_wheels
    finally:
        sys.path.remove(str(TOOLS))
    here = {"3.11": "/usr/bin/python3.11"}
    monkeypatch.setattr(build_wheels.pythons, "find_python", here.get)
    asked = []

    def fetched(versions, work, suite):
        asked.append(list(versions))
        here["3.14"] = "/cache/python3.14"
        return {"3.14": here["3.14"]}

    monkeypatch.setattr(build_wheels.debian_pkgs, "cpython", fetched)
    got, skipped = build_wheels.fetch_missing(["3.11", "3.14", "3.14t"])
    assert asked == [["3.14"]]          # Debian has no free-threaded build
    assert got == ["3.11", "3.14"] and list(skipped) == ["3.14t"]

    def unavailable(versions, work, suite):
        raise debian_pkgs.Unavailable("no apt source for unstable")

    monkeypatch.setattr(build_wheels.debian_pkgs, "cpython", unavailable)
    got, skipped = build_wheels.fetch_missing(["3.11", "3.15"])
    assert got == ["3.11"]
    assert "pyenv install 3.15" in skipped["3.15"]
    assert "no apt source for unstable" in skipped["3.15"]


def test_sdist_leaves_out_cython_output(tmp_path):
    if not (REPO / "setup.py").exists():
        pytest.skip("the source tree (setup.py) is not next to the tests")
    for mod in ("setuptools", "Cython"):
        pytest.importorskip(mod)
    # A copy: setup.py writes Cython's .c and an egg-info where it runs.
    src = tmp_path / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", ".ci-*", "*.so", "__pycache__", "*.egg-info"))
    for c in (src / "arc4py").glob("*.c"):
        c.unlink()
    proc = subprocess.run([sys.executable, "setup.py", "-q", "sdist", "-d", str(tmp_path)],
                          cwd=src, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (tarball,) = tmp_path.glob("arc4py-*.tar.gz")
    assert tarball.name == f"arc4py-{arc4py.__version__}.tar.gz"
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
    top = names[0].split("/")[0]
    package = [n[len(top) + 1:] for n in names if n.startswith(f"{top}/arc4py/")]
    pyx = {Path(n).stem for n in package if n.count("/") == 1 and n.endswith(".pyx")}
    generated = [n for n in package if n.count("/") == 1 and n.endswith(".c")]
    assert pyx >= {"_core", "_random"}
    assert generated == [], f"the sdist ships Cython's output: {generated}"
    # every Cython source is there (a .pxi is included by a .pyx)
    for name in (REPO / "arc4py").iterdir():
        if name.suffix in (".pyx", ".pxi", ".pxd"):
            assert f"arc4py/{name.name}" in package
    # the hand-written C is all there
    for folder in ("csrc", "cbind", "bench"):
        for name in (REPO / "arc4py" / folder).iterdir():
            if name.suffix in (".c", ".h", ".def"):
                assert f"arc4py/{folder}/{name.name}" in package
    # CI whole (.ci/run starts .ci/driver.py, which imports its neighbour)
    ci = {f".ci/{p.name}" for p in (REPO / ".ci").iterdir() if p.is_file()}
    assert ci and ci <= {n[len(top) + 1:] for n in names}
    # and nothing said of files it does not take
    assert "won't be automatically included" not in proc.stdout + proc.stderr


def _defines(path):
    """pyconfig.h's macros: name -> value, None where it is #undef'd."""
    out = {}
    for line in Path(path).read_text().splitlines():
        m = re.match(r"#define (\w+)(?: (.*))?$", line)
        if m:
            out[m.group(1)] = (m.group(2) or "").strip()
            continue
        m = re.match(r"/\* #undef (\w+) \*/$", line)
        if m:
            out.setdefault(m.group(1), None)
    return out


def test_aarch64_pyconfig_table(tmp_path):
    wheel_targets, debian_pkgs = _tools()
    try:
        suite = debian_pkgs.host_suite()
    except debian_pkgs.Unavailable as e:
        pytest.skip(str(e))
    # This Python's version, on both architectures, from the host's suite or
    # (a version it does not have) unstable.
    ver = f"{sys.version_info[0]}.{sys.version_info[1]}"
    pkg = f"libpython{ver}-dev"
    roots = {}
    for arch in ("amd64", "arm64"):
        for where in (suite, "unstable"):
            try:
                roots[arch] = debian_pkgs.unpack([pkg], arch, tmp_path, suite=where)
                break
            except debian_pkgs.Unavailable as e:
                why = e
        else:
            pytest.skip(f"{pkg} ({arch}, {suite} or unstable): {why}")
    amd = _defines(roots["amd64"] / f"usr/include/x86_64-linux-gnu/python{ver}/pyconfig.h")
    arm = _defines(roots["arm64"] / f"usr/include/aarch64-linux-gnu/python{ver}/pyconfig.h")
    differ = {k for k in amd.keys() | arm.keys() if amd.get(k) != arm.get(k)}
    table = wheel_targets.AARCH64_PYCONFIG
    assert differ == {k for k in table if k in amd or k in arm}, (
        f"Debian's arm64 and amd64 pyconfig.h for {ver} differ in {sorted(differ)}")
    for key in differ:
        assert arm.get(key) == table[key], key
    # The layout of every C API struct follows from these: the same on both.
    for key in differ:
        assert not key.startswith(("SIZEOF_", "ALIGNOF_", "Py_")), key


def test_cython_output_goes_to_the_build(monkeypatch, tmp_path):
    """setup.py's build_ext cythonizes each module into its build_temp (one
    per Python and platform), so builds for two Pythons from one checkout
    at once never write the same file; the source tree gets nothing."""
    if not (REPO / "setup.py").exists():
        pytest.skip("the source tree (setup.py) is not next to the tests")
    setuptools = pytest.importorskip("setuptools")
    pytest.importorskip("Cython.Build")
    from setuptools.command.build_ext import build_ext
    src = tmp_path / "src"      # a copy: nothing is written into the checkout
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", ".ci-*", ".venv", "*.so", "__pycache__",
        "*.egg-info", "*.c"), dirs_exist_ok=False)
    for folder in ("csrc", "cbind", "bench"):   # the hand-written C, back
        for c in (REPO / "arc4py" / folder).glob("*.c"):
            shutil.copy(c, src / "arc4py" / folder / c.name)
    monkeypatch.chdir(src)
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: None)
    ns = runpy.run_path(str(src / "setup.py"), run_name="setup")
    compiled = []
    monkeypatch.setattr(build_ext, "build_extension",
                        lambda self, ext: compiled.append(list(ext.sources)))
    [ext] = [e for e in ns["extensions"] if e.name == "arc4py._random"]
    cmd = ns["BuildExt"](setuptools.Distribution())
    cmd.build_temp = str(tmp_path / "temp.this-python")
    cmd.force, cmd.verbose = False, 0
    cmd.build_extension(ext)
    assert compiled == [[str(Path(cmd.build_temp) / "arc4py" / "_random.c")]]
    assert (tmp_path / "temp.this-python" / "arc4py" / "_random.c").stat().st_size
    assert sorted(p.name for p in (src / "arc4py").glob("*.c")) == []
    # and the wheel's staging folder is this Python's own too
    assert sys.implementation.cache_tag in ns["WHEEL_STAGING"]


def test_no_c_compiler_says_what_to_do(monkeypatch):
    """setup.py's build_ext, given a compiler command that is not there,
    stops before compiling with a message naming it and the two ways out."""
    if not (REPO / "setup.py").exists():
        pytest.skip("the source tree (setup.py) is not next to the tests")
    setuptools = pytest.importorskip("setuptools")
    # setup.py's namespace, without building: setup() idle.
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: None)
    ns = runpy.run_path(str(REPO / "setup.py"), run_name="setup")

    class Compiler:  # distutils' unix compiler, as build_ext reads it
        compiler_type = "unix"
        compiler_so = ["/nonexistent/cc", "-O2"]

    cmd = ns["BuildExt"](setuptools.Distribution())
    cmd.compiler = Compiler()
    with pytest.raises(SystemExit) as exc:
        cmd.build_extensions()
    message = str(exc.value.code)
    assert "'/nonexistent/cc' was not found" in message
    assert "Install a C compiler" in message and "wheel" in message
    Compiler.compiler_so = [sys.executable]  # a command that exists
    assert ns["missing_compiler"](Compiler()) is None


def test_windows_pyconfig_sizes(tmp_path):
    zig = pytest.importorskip(
        "ziglang", reason="ziglang is not installed (pip install ziglang)")
    sys.path.insert(0, str(TOOLS))
    try:
        import wine_python
    finally:
        sys.path.remove(str(TOOLS))
    import sysconfig
    ver = f"{sys.version_info[0]}.{sys.version_info[1]}"
    include = wine_python.windows_include(sysconfig.get_paths()["include"], ver, tmp_path)
    defines = _defines(include / "pyconfig.h")
    types = {"SHORT": "short", "INT": "int", "LONG": "long", "LONG_LONG": "long long",
             "VOID_P": "void *", "SIZE_T": "size_t", "UINTPTR_T": "uintptr_t",
             "TIME_T": "time_t", "WCHAR_T": "wchar_t", "FLOAT": "float",
             "DOUBLE": "double", "_BOOL": "_Bool", "FPOS_T": "fpos_t"}
    checks = [f'_Static_assert(sizeof({c}) == SIZEOF_{k}, "SIZEOF_{k}");'
              for k, c in types.items()]
    assert set(f"SIZEOF_{k}" for k in types) <= set(defines)
    src = tmp_path / "check.c"
    src.write_text("#include <Python.h>\n#include <stdio.h>\n#include <time.h>\n"
                   + "\n".join(checks) + "\n"
                   '_Static_assert(sizeof(Py_ssize_t) == 8, "Py_ssize_t");\n'
                   "PyMODINIT_FUNC PyInit_check(void) { return PyLong_FromLong(1); }\n")
    exe = Path(zig.__file__).parent / "zig"
    proc = subprocess.run([str(exe), "cc", "-target", "x86_64-windows-gnu", "-c",
                           "-Wall", "-Werror", f"-I{include}", str(src),
                           "-o", str(tmp_path / "check.o")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
