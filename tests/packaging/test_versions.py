"""The supported Python versions are written once, as pyproject.toml's
"Programming Language :: Python :: 3.X" classifiers: tools/pythons.py reads
them for .ci/driver.py, tools/build_wheels.py and the release workflow
(.github/workflows/wheels.yml)."""
import re

import pytest

from helpers import REPO

#: the scripts that choose which Pythons to test and build for
SCRIPTS = [".ci/driver.py", ".ci/run", "tools/build_wheels.py", "tools/wheel_targets.py",
           ".github/workflows/wheels.yml", "tools/release_checks.py",
           "tools/test_wheels.py", "tools/pythons.py", "tools/debian_pkgs.py",
           "tests/cross/aarch64_python.sh"]
# a version as a string literal: "3.12", '3.14t'
VERSION_LITERAL = re.compile(r"""(["'])3\.\d+t?\1""")


def _pyproject():
    path = REPO / "pyproject.toml"
    if not path.exists():
        pytest.skip("the source tree (pyproject.toml) is not next to the tests")
    return path.read_text()


def test_classifiers_are_the_only_list():
    text = _pyproject()
    versions = re.findall(r'"Programming Language :: Python :: (3\.\d+)"', text)
    assert len(versions) >= 2
    minors = [int(v.split(".")[1]) for v in versions]
    # consecutive: a gap would be a version dropped by mistake
    assert minors == list(range(minors[0], minors[0] + len(minors)))
    assert re.search(rf'requires-python = ">={versions[0]}"', text)
    for rel in SCRIPTS:
        path = REPO / rel
        if path.exists():
            code = "\n".join(line for line in path.read_text().splitlines()
                             if not line.lstrip().startswith("#"))
            found = VERSION_LITERAL.findall(code)
            assert not found, f"{rel} names a version itself"


def test_pythons_reads_the_classifiers():
    if not (REPO / "tools" / "pythons.py").exists():
        pytest.skip("tools/ is not next to the tests")
    import importlib.util
    spec = importlib.util.spec_from_file_location("pythons", REPO / "tools" / "pythons.py")
    pythons = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pythons)
    try:
        supported = pythons.supported()
    except SystemExit as e:  # no tomllib (3.9, 3.10) and no tomli
        pytest.skip(str(e))
    text = _pyproject()
    gil = re.findall(r'"Programming Language :: Python :: (3\.\d+)"', text)
    free = [f"{v}t" for v in gil if tuple(map(int, v.split("."))) >= pythons.FREE_THREADED_FROM]
    assert supported == gil + free
