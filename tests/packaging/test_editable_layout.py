"""The suite in the layout of an editable install (``pip install -e .``) in a
clone whose folder is named ``arc4py``.

setuptools' editable install is an import hook appended to
``sys.meta_path``, so it is asked only after the path finder has searched
``sys.path``.  A directory named ``arc4py`` without ``__init__.py`` on
``sys.path`` (the clone itself, seen from the folder that holds it: the
current directory of a child started there) is then a namespace package,
and the path finder returns it first: ``import arc4py`` succeeds and holds
nothing.  A test that starts a child beside the clone fails only in that
layout.

Building a real editable install here would take a full build; instead the
child interpreters get the same import order from a ``sitecustomize``
(inherited through PYTHONPATH): arc4py is found last, in a copy of the
package inside ``parent/arc4py/`` beside a copy of tests/, as the hook
finds it.  The tests that start children run there.
"""
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

import arc4py
from helpers import REPO, run_python

# Runs part of the suite again in a copy of the checkout.
pytestmark = pytest.mark.slow

PKG_DIR = Path(arc4py.__file__).resolve().parent

SITECUSTOMIZE = '''
"""As setuptools' editable install: arc4py is found after sys.path."""
import os
import sys
from importlib.machinery import PathFinder
from importlib.util import spec_from_file_location

CLONE = {clone!r}
PKG = os.path.join(CLONE, "arc4py")


def _other_install(entry):
    real = os.path.realpath(entry or os.curdir)
    return (real != CLONE and
            os.path.isfile(os.path.join(real, "arc4py", "__init__.py")))


class EditableOrder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name == "arc4py":
            # What the path finder finds first (no other install of arc4py
            # exists in this layout), else the hook's answer.
            entries = [p for p in sys.path
                       if isinstance(p, str) and not _other_install(p)]
            spec = PathFinder.find_spec(name, entries)
            if spec is not None:
                return spec
            return spec_from_file_location(
                name, os.path.join(PKG, "__init__.py"),
                submodule_search_locations=[PKG])
        if name.startswith("arc4py.") and name.count(".") == 1:
            return PathFinder.find_spec(name, [PKG])
        return None


sys.meta_path.insert(0, EditableOrder)
'''


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    """parent/arc4py: the clone (package, tests, README, docs); hook/: the
    sitecustomize.  Returns (clone, environment for its children)."""
    if not (REPO / "tests" / "helpers.py").exists():
        pytest.skip("the tests are not in a checkout")
    root = tmp_path_factory.mktemp("editable")
    clone = root / "parent" / "arc4py"
    shutil.copytree(PKG_DIR, clone / "arc4py", ignore=shutil.ignore_patterns(
        "__pycache__", "*.c", "csrc", "cbind"))
    # csrc's headers from the checkout (an installed arc4py has none):
    # helpers.py reads the generator's sizes there
    shutil.copytree(REPO / "arc4py" / "csrc", clone / "arc4py" / "csrc",
                    ignore=shutil.ignore_patterns("*.c"))
    shutil.copytree(REPO / "tests", clone / "tests",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("README.md", "pyproject.toml"):
        if (REPO / name).exists():
            shutil.copy(REPO / name, clone / name)
    if (REPO / "docs").is_dir():
        shutil.copytree(REPO / "docs", clone / "docs",
                        ignore=shutil.ignore_patterns("_build"))
    hook = root / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        SITECUSTOMIZE.format(clone=os.path.realpath(clone)))
    env = dict(os.environ)
    env.pop("ARC4PY_BACKEND", None)
    # The hook first; then whatever the suite's interpreter was given (its
    # pytest, under emulation), which the hook looks past for arc4py.
    env["PYTHONPATH"] = os.pathsep.join(
        [str(hook)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    return clone, env


def test_the_layout_shadows_the_package_beside_the_clone(layout):
    """The hazard itself: a child started in the clone's parent imports the
    clone folder as an empty namespace package; one started anywhere else
    gets arc4py."""
    clone, env = layout
    code = ("import arc4py; print(hasattr(arc4py, 'arc4random'), "
            "getattr(arc4py, '__file__', None))")
    beside = run_python(["-c", code], cwd=clone.parent, env=env)
    assert beside.returncode == 0, beside.stderr
    assert beside.stdout.split() == ["False", "None"], beside.stdout
    elsewhere = run_python(["-c", code], env=env)
    assert elsewhere.returncode == 0, elsewhere.stderr
    found, where = elsewhere.stdout.split()
    assert found == "True"
    assert Path(where).resolve() == (clone / "arc4py" / "__init__.py").resolve()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths")
def test_child_starting_tests_pass_in_the_layout(layout):
    """The tests that start child interpreters, run from the clone: none of
    their children may start where the clone would shadow arc4py."""
    clone, env = layout
    selected = [
        "tests/generator/test_state_size_claims.py",
        "tests/cores/test_cores.py::test_forcing_a_core_this_cpu_runs_at_import",
        "tests/generator/test_first_use.py::test_bad_backend_error_names_the_variable",
        "tests/generator/test_first_use.py::test_the_command_fails_under_a_bad_backend",
        "tests/cli/test_info.py::test_info_text",
    ]
    proc = run_python(["-m", "pytest", "-q", "-p", "no:cacheprovider",
                       "-o", "addopts=", *selected], cwd=clone, env=env,
                      timeout=600)
    assert proc.returncode == 0, textwrap.shorten(
        proc.stdout[-6000:], 6000) + proc.stderr[-2000:]
    assert " passed" in proc.stdout
