"""Packaging facts the wheels rest on (tools/build_wheels.py builds them;
.ci/run builds and tests one):

    test_sdist_leaves_out_cython_output   the sdist has the .pyx, not the
                                          generated .c, and its version is
                                          arc4py.__version__
    test_aarch64_pyconfig_table           build_wheels.AARCH64_PYCONFIG is
                                          exactly where Debian's arm64 and
                                          amd64 pyconfig.h differ
"""
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import arc4py

REPO = Path(__file__).resolve().parent.parent
TOOLS = REPO / "tools"


def _tools():
    if not (TOOLS / "build_wheels.py").exists():
        pytest.skip("tools/ is not next to the tests")
    sys.path.insert(0, str(TOOLS))
    try:
        import build_wheels
        import debian_pkgs
    finally:
        sys.path.remove(str(TOOLS))
    return build_wheels, debian_pkgs


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
    assert pyx >= {"_core", "_keystream", "_random_methods"}
    assert generated == [], f"the sdist ships Cython's output: {generated}"
    # the hand-written C is all there
    for name in (REPO / "arc4py" / "csrc").iterdir():
        if name.suffix in (".c", ".h", ".def"):
            assert f"arc4py/csrc/{name.name}" in package


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
    build_wheels, debian_pkgs = _tools()
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
    table = build_wheels.AARCH64_PYCONFIG
    assert differ == {k for k in table if k in amd or k in arm}, (
        f"Debian's arm64 and amd64 pyconfig.h for {ver} differ in {sorted(differ)}")
    for key in differ:
        assert arm.get(key) == table[key], key
    # The layout of every C API struct follows from these: the same on both.
    for key in differ:
        assert not key.startswith(("SIZEOF_", "ALIGNOF_", "Py_")), key
