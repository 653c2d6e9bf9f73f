"""Every example in the README and the API reference (docs/) runs, and the
reference builds with Sphinx with warnings as errors.

- README.md: each ```python block is executed in a fresh namespace, and
  its links into docs/ name pages that exist.
- docs/*.rst: the ``>>>`` examples run as doctests, ``.. code-block::
  python`` blocks are executed, and each ``.. code-block:: c`` block is
  compiled with -Wall -Wextra -Werror as an extension module against this
  Python and arc4py.get_include(), then imported and called.  A page or
  block that imports a module which is not installed (numpy; dask, scipy,
  scikit-learn, pandas on the ecosystem page) is skipped, naming it.
- ``python -m sphinx -W -b html docs OUT``: skipped, saying so, without
  Sphinx (pip install ".[docs]").
"""
import doctest
import importlib.util
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

import arc4py
from helpers import REPO, child_env, find_cc

README = REPO / "README.md"
DOCS = REPO / "docs"

def _readme():
    if not README.exists():
        pytest.skip("README.md is not next to the tests")
    return README.read_text(encoding="utf-8")


def _docs():
    if not (DOCS / "conf.py").exists():
        pytest.skip("docs/ is not next to the tests")
    return sorted(DOCS.glob("*.rst"))


def fenced(text, lang):
    """The bodies of the ```lang blocks of a Markdown text."""
    return re.findall(rf"^```{lang}\n(.*?)^```", text, re.S | re.M)


def rst_blocks(text, lang):
    """The bodies of the ``.. code-block:: lang`` blocks of a reST text."""
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)\.\. code-block:: (\S+)\s*$", line)
        if not m or m.group(2) != lang:
            continue
        indent = len(m.group(1))
        body = []
        for nxt in lines[i + 1:]:
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                break
            body.append(nxt)
        out.append(textwrap.dedent("\n".join(body)).strip("\n") + "\n")
    return out


def _missing(code, doctest=False):
    """The modules ``code`` imports that are not installed (the ecosystem
    page shows dask, distributed, scipy, scikit-learn and pandas); with
    ``doctest``, only its ``>>>`` lines are code."""
    prompt = r"(?:>>>|\.\.\.)\s+" if doctest else r"(?:(?:>>>|\.\.\.)\s+)?"
    names = re.findall(rf"^\s*{prompt}(?:import|from) ([\w.]+)", code, re.M)
    # dask.distributed is dask's module that imports the distributed package
    tops = {"distributed" if n == "dask.distributed" else n.split(".")[0]
            for n in names}
    return sorted(t for t in tops if importlib.util.find_spec(t) is None)


def _needs(code, doctest=False):
    missing = _missing(code, doctest)
    if missing:
        pytest.skip(f"the examples use {', '.join(missing)}: not installed")


# ---- README ------------------------------------------------------------------------

def test_readme_has_examples():
    assert len(fenced(_readme(), "python")) >= 2


def test_readme_links_into_docs_resolve():
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", _readme())
    assert links, "the README links to no page of docs/"
    for link in links:
        assert (REPO / link).is_file(), f"README links to {link}, which is missing"


def _readme_python_blocks():
    if not README.exists():
        return [pytest.param(None, marks=pytest.mark.skip(
            reason="README.md is not next to the tests"))]
    return fenced(README.read_text(encoding="utf-8"), "python")


@pytest.mark.parametrize("code", _readme_python_blocks())
def test_readme_python_block_runs(code):
    index = fenced(_readme(), "python").index(code)
    _needs(code)
    exec(compile(code, f"README.md python block {index}", "exec"), {})


def build_c_example(code, tmp_path, name="dice"):
    """Build ``code`` as extension ``name`` with warnings as errors and
    import it."""
    cc = find_cc()
    if cc is None:
        pytest.skip("no C compiler")
    include = sysconfig.get_paths()["include"]
    if not (include and (Path(include) / "Python.h").exists()):
        pytest.skip("no Python.h (on Debian: apt-get install python3-dev)")
    src = tmp_path / f"{name}.c"
    src.write_text(code)
    out = tmp_path / (name + sysconfig.get_config_var("EXT_SUFFIX"))
    proc = subprocess.run(
        [cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared",
         "-I", include, "-I", arc4py.get_include(), str(src), "-o", str(out)],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    spec = importlib.util.spec_from_file_location(name, out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- docs/ ----------------------------------------------------------------------

def _doc_ids():
    """The pages with doctest examples."""
    return [p.name for p in sorted(DOCS.glob("*.rst"))
            if ">>>" in p.read_text(encoding="utf-8")] or ["none"]


@pytest.mark.parametrize("page", _doc_ids())
def test_docs_doctests_pass(page):
    pages = {p.name: p for p in _docs()}
    if page not in pages:
        pytest.skip("no docs pages")
    _needs(pages[page].read_text(encoding="utf-8"), doctest=True)
    result = doctest.testfile(str(pages[page]), module_relative=False,
                              optionflags=doctest.ELLIPSIS, report=False,
                              verbose=False, encoding="utf-8")
    assert result.failed == 0, f"{page}: {result}"
    assert result.attempted > 0


def test_docs_python_blocks_run():
    """(The pages' Python examples are doctests; any code-block is run.)"""
    for page in _docs():
        for k, code in enumerate(rst_blocks(page.read_text(encoding="utf-8"),
                                            "python")):
            if _missing(code):
                continue
            exec(compile(code, f"{page.name} python block {k}", "exec"), {})


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="the example is built with a Unix C compiler here")
def test_docs_c_example_builds_cleanly_and_runs(tmp_path):
    blocks = [b for p in _docs()
              for b in rst_blocks(p.read_text(encoding="utf-8"), "c")]
    assert blocks, "docs/capi.rst has no C example"
    for k, code in enumerate(blocks):
        where = tmp_path / str(k)   # a loaded module's file is never rewritten
        where.mkdir()
        mod = build_c_example(code, where, name="dice")
        assert 1000 <= mod.roll(1000) <= 6000
        assert mod.roll(0) == 0


def test_api_reference_covers_the_public_api():
    text = "\n".join(p.read_text(encoding="utf-8") for p in _docs())
    # docs/conf.py expands this line to every name of _core.__all__
    generated = (arc4py._core.__all__ if re.search(
        r"^\.\. autofunctions: arc4py\._core\.__all__$", text, re.M) else [])
    for name in arc4py.__all__ + ["BitGenerator", "default_rng"]:
        assert name in generated or re.search(
            rf"^\.\. (auto)?(function|class|data):: {name}\b",
            text, re.M), f"{name} is not in the API reference"


def test_docs_extra_names_sphinx_and_furo():
    pyproject = (REPO / "pyproject.toml")
    if not pyproject.exists():
        pytest.skip("pyproject.toml is not next to the tests")
    m = re.search(r"^docs = \[(.*?)\]", pyproject.read_text(), re.M | re.S)
    assert m, "no docs extra in pyproject.toml"
    assert '"sphinx' in m.group(1) and '"furo' in m.group(1)


@pytest.mark.slow
def test_sphinx_build_has_no_warnings(tmp_path):
    _docs()
    for mod, why in (("sphinx", "Sphinx"), ("furo", "the furo theme")):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{why} is not installed: the docs build is not "
                        f"checked (pip install '.[docs]')")
    out = tmp_path / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
         "-q", "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
        capture_output=True, text=True, timeout=600,
        env=child_env(ARC4PY_BACKEND=None), cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    api = (out / "api.html").read_text(encoding="utf-8")
    # signatures come from the stubs: annotations the runtime lacks
    assert "exclusive_upper_bound" in api and "SupportsIndex" in api
    for page in ("index", "tour", "numpy", "ecosystem", "capi", "security",
                 "platforms", "building", "benchmarks"):
        assert (out / f"{page}.html").exists(), page
    shutil.rmtree(out, ignore_errors=True)
