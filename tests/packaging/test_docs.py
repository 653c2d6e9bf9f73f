"""Every example in the README and the API reference (docs/) runs, and the
reference builds with Sphinx with warnings as errors.

How a page marks its code (a reader copies it as it is marked):

- a program: a ``.. code-block:: python`` of docs/*.rst, or a ```python
  block of README.md.  Each runs as ``python example.py`` in a fresh
  interpreter, in an empty folder, as a reader who pastes it into a file.
- a file of an example the page builds: a code block with ``:caption:
  NAME`` (docs/capi.rst's ``dice.pyx``, ``setup.py``, ``dice.c``), built by
  the page's ``.. code-block:: sh`` commands, run here as written.
- a fragment: ``>>>`` lines, run as doctests; they show values.  A ``::``
  literal block is never Python (commands, output).

A block that imports a module which is not installed (numpy; dask,
scipy, scikit-learn, pandas on the ecosystem page) skips, naming it; a
program that starts dask's worker processes is in the slow set.
``python -m sphinx -W -b html docs OUT`` skips, saying so, without Sphinx
(pip install ".[docs]").
"""
import doctest
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

import arc4py
from helpers import REPO, child_env, find_cc, run_python

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


def rst_code(text):
    """``(lang, options, body, line)`` of each ``.. code-block::`` of a reST
    text: ``options`` its ``:name: value`` lines as a dict, ``line`` where
    it starts (1-based)."""
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)\.\. code-block:: (\S+)\s*$", line)
        if not m:
            continue
        indent = len(m.group(1))
        options, body = {}, []
        for nxt in lines[i + 1:]:
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                break
            opt = re.match(r"^\s+:([\w-]+):\s*(.*)$", nxt)
            if opt and not body:
                options[opt.group(1)] = opt.group(2).strip()
            else:
                body.append(nxt)
        out.append((m.group(2), options,
                    textwrap.dedent("\n".join(body)).strip("\n") + "\n", i + 1))
    return out


def rst_blocks(text, lang):
    """The bodies of the ``.. code-block:: lang`` blocks of a reST text."""
    return [body for kind, _, body, _ in rst_code(text) if kind == lang]


def literal_blocks(text):
    """The bodies of the ``::`` literal blocks of a reST text."""
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.rstrip().endswith("::") or line.lstrip().startswith(".. "):
            continue
        indent = len(line) - len(line.lstrip())
        body = []
        for nxt in lines[i + 1:]:
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                break
            body.append(nxt)
        out.append(textwrap.dedent("\n".join(body)).strip("\n"))
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


def test_readme_links_are_absolute_and_resolve():
    """The README is the package index's page too, where a relative link is
    dead: each link into the repository is absolute, under the Source URL
    of pyproject.toml, and names a file that is there."""
    text = _readme()
    relative = [u for u in re.findall(r"\]\(([^)]+)\)", text)
                if not re.match(r"[a-z]+:", u)]
    assert not relative, f"relative links in README.md: {relative}"
    pyproject = (REPO / "pyproject.toml").read_text()
    source = re.search(r'^Source = "(.*)"$', pyproject, re.M).group(1)
    base = re.escape(f"{source}/blob/main/")
    links = re.findall(rf"\]\({base}([^)#]+)(?:#[^)]*)?\)", text)
    assert any(link.startswith("docs/") for link in links), "the README links to no page of docs/"
    for link in links:
        assert (REPO / link).is_file(), f"README links to {link}, which is missing"


def test_readme_test_run_ends_saying_the_skips_are_expected(tmp_path):
    # the README's `pytest` closes with the skips counted by what would run
    # them (tests/conftest.py), not a line per skipped test
    (tmp_path / "test_some_skips.py").write_text(
        "import pytest\n"
        "def test_a(): pytest.skip('zig is not installed (pip install ziglang)')\n"
        "def test_b(): pytest.skip('no zig (pip install ziglang): cross builds')\n"
        "def test_c(): pytest.skip('this CPU cannot run the neon core')\n"
        "def test_d(): pass\n")
    env = child_env()   # tests/ first: its conftest.py loads as a plugin
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(Path(__file__).resolve().parents[1]),
                    env.get("PYTHONPATH")) if p)
    proc = run_python(["-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider",
                       "test_some_skips.py"], cwd=tmp_path, env=env, timeout=120)
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "3 skipped, as expected: each needs what this machine lacks" in out
    assert re.search(r"^\s+2  pip install ziglang$", out, re.M), out
    assert re.search(r"^\s+1  another CPU, OS or Python", out, re.M), out
    assert "SKIPPED [" not in out
    pyproject = REPO / "pyproject.toml"
    if pyproject.exists():
        addopts = re.search(r'^addopts = "(.*)"', pyproject.read_text(), re.M)
        assert addopts and not re.search(r"-r\w*[as]", addopts.group(1))


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


# ---- programs: each runs as `python example.py` -------------------------------------

#: Programs that import these start worker processes or a cluster (seconds
#: each): the slow set.
HEAVY_IMPORTS = {"dask", "distributed"}


def _programs():
    """A pytest.param per program of README.md and docs/*.rst."""
    found = []
    if README.exists():
        text = README.read_text(encoding="utf-8")
        found += [(f"README.md:{text[:text.index(code)].count(chr(10))}", code)
                  for code in fenced(text, "python")]
    for page in sorted(DOCS.glob("*.rst")):
        found += [(f"{page.name}:{line}", body)
                  for lang, options, body, line in rst_code(
                      page.read_text(encoding="utf-8"))
                  if lang == "python" and "caption" not in options]
    out = []
    for where, code in found:
        names = re.findall(r"^\s*(?:import|from) (\w+)", code, re.M)
        heavy = [pytest.mark.slow] if HEAVY_IMPORTS & set(names) else []
        out.append(pytest.param(code, id=where, marks=heavy))
    return out or [pytest.param(None, id="none", marks=pytest.mark.skip(
        reason="README.md and docs/ are not next to the tests"))]


def test_the_pages_have_programs():
    ids = [p.id for p in _programs()]
    assert sum(i.startswith("README.md:") for i in ids) >= 2
    assert any(i.startswith("ecosystem.rst:") for i in ids)


@pytest.mark.parametrize("code", _programs())
def test_program_runs_as_a_script(code, tmp_path):
    _needs(code)
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    proc = run_python([script], cwd=tmp_path, timeout=600,
                      ARC4PY_BACKEND=None)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]


def test_no_literal_block_is_python():
    """Python is marked: a program as ``.. code-block:: python``, a file as
    a code-block with a ``:caption:``, a fragment as ``>>>`` lines."""
    for page in _docs():
        for block in literal_blocks(page.read_text(encoding="utf-8")):
            first = block.lstrip().split("\n", 1)[0]
            assert not re.match(r"(import|from|def|class) ", first), (
                f"{page.name}: a '::' block of Python:\n{block}")


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


# ---- docs/capi.rst: its files, built by its commands --------------------------------

#: docs/capi.rst's two examples: (source, its setup.py's caption), each
#: built by the page's sh block of the same rank.
CAPI_EXAMPLES = [("dice.pyx", "setup.py"), ("dice.c", "setup.py (for dice.c)")]


def _capi_example(source):
    """docs/capi.rst's files for ``source`` ({file name: text}) and the
    command lines that build it."""
    page = DOCS / "capi.rst"
    if not page.exists():
        pytest.skip("docs/ is not next to the tests")
    blocks = rst_code(page.read_text(encoding="utf-8"))
    files = {o["caption"]: body for _, o, body, _ in blocks if "caption" in o}
    commands = [body for lang, _, body, _ in blocks if lang == "sh"]
    assert {f for pair in CAPI_EXAMPLES for f in pair} == set(files), sorted(files)
    assert len(commands) == len(CAPI_EXAMPLES), "docs/capi.rst: an sh block per example"
    k = [src for src, _ in CAPI_EXAMPLES].index(source)
    lines = [line.split("#")[0].strip() for line in commands[k].splitlines()]
    return ({source: files[source], "setup.py": files[CAPI_EXAMPLES[k][1]]},
            [line for line in lines if line])


def _capi_project(tmp_path, source):
    if find_cc() is None:
        pytest.skip("no C compiler")
    files, commands = _capi_example(source)
    for line in commands:
        if line.startswith("pip install "):
            missing = [n for n in line.split()[2:]
                       if importlib.util.find_spec(n) is None]
            if missing:
                pytest.skip(f"{', '.join(missing)} not installed, as the "
                            f"page's '{line}' would")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return commands


@pytest.mark.slow
@pytest.mark.parametrize("source", [src for src, _ in CAPI_EXAMPLES])
def test_capi_page_commands_build_its_examples(tmp_path, source):
    commands = _capi_project(tmp_path, source)
    env = child_env(ARC4PY_BACKEND=None)
    if source == "dice.c":
        # no Cython: an import of it fails, as where it is not installed
        blocker = tmp_path / "no_cython" / "Cython"
        blocker.mkdir(parents=True)
        (blocker / "__init__.py").write_text(
            "raise ImportError('Cython is not installed here')\n")
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(blocker.parent), env.get("PYTHONPATH")) if p)
    ran = []
    for line in commands:
        if line.startswith("pip install "):
            continue
        assert line.startswith("python "), line
        proc = subprocess.run(
            f"{shlex.quote(sys.executable)} {line[len('python '):]}",
            shell=True, cwd=tmp_path, env=env,
            capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"{line}\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}"
        ran.append(proc.stdout)
    assert 10 <= int(ran[-1]) <= 60     # dice.roll(10)
    assert any("build_ext" in line for line in commands)
    if source == "dice.pyx":
        key = run_python(["-c", "import dice; print(dice.key().hex())"],
                         cwd=tmp_path, timeout=60)
        assert len(bytes.fromhex(key.stdout.strip())) == 32, key.stderr


@pytest.mark.slow
def test_capi_page_pip_without_build_isolation(tmp_path):
    # (asked of a child: a find_spec("pip") here would make setuptools'
    # distutils shim stand down for the rest of this process)
    if run_python(["-m", "pip", "--version"], timeout=120).returncode != 0:
        pytest.skip("pip is not installed for this interpreter "
                    "(the aarch64 run's Debian python3)")
    _capi_project(tmp_path, "dice.pyx")
    target = tmp_path / "installed"
    # the page's `pip install --no-build-isolation .`, into a folder
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation",
         "--no-deps", "--no-index", "--target", str(target), "."],
        cwd=tmp_path, env=child_env(ARC4PY_BACKEND=None),
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    check = run_python(["-c", "import dice; print(dice.roll(3))"],
                       cwd=tmp_path / "installed", timeout=60)
    assert check.returncode == 0 and 3 <= int(check.stdout) <= 18, check.stderr


#: The public names: what `from arc4py import *` gives, and numpy's side.
def _public_names():
    return sorted(set(arc4py.__all__) | {"BitGenerator", "default_rng"})


def _api_page():
    page = DOCS / "api.rst"
    if not page.exists():
        pytest.skip("docs/ is not next to the tests")
    return page.read_text(encoding="utf-8")


#: An entry of docs/api.rst: a definition list item whose term is
#: ``name(signature)`` or ``name`` (docs/conf.py makes it autodoc's).
API_ENTRY = re.compile(r"^``(\w+)(\(.*\))?``\n   \S", re.M)


def _api_entries():
    """{name: signature as written, or ""} of docs/api.rst's entries."""
    entries = {}
    for name, sig in API_ENTRY.findall(_api_page()):
        assert name not in entries, f"docs/api.rst: {name} twice"
        entries[name] = sig
    return entries


def test_api_reference_covers_the_public_api():
    entries = _api_entries()
    for name in [*_public_names(), "DEFAULT_ENTROPY", "_inst"]:
        assert name in entries, f"{name} is not in docs/api.rst"


def test_api_reference_signatures_are_the_runtimes():
    """docs/api.rst writes each callable with the signature inspect gives
    (the random module's functions: this Python's or, as the page says,
    Python 3.13's, where they differ)."""
    import inspect
    import random
    checked = 0
    for name, sig in _api_entries().items():
        obj = getattr(arc4py, name, None)
        if not callable(obj) or name == "SystemRandom" or (
                isinstance(obj, type) and issubclass(obj, Warning)):
            continue  # data, an alias, a warning: written without one
        assert sig, f"docs/api.rst: {name} is written without its signature"
        actual = str(inspect.signature(obj))
        if sig != actual and name in random.__all__ and sys.version_info >= (3, 13):
            actual = str(inspect.signature(getattr(random, name)))
        if sig != actual and name in random.__all__ and sys.version_info < (3, 13):
            continue  # an older Python's random module (the page says so)
        assert sig == actual, f"docs/api.rst: {name}{sig}, arc4py: {name}{actual}"
        checked += 1
    assert checked >= 40


def test_api_reference_reads_whole_as_plain_rest():
    """Rendered by docutils alone, as a forge shows the file (Sphinx's
    directives and roles are nothing there): every public name is a term,
    with its signature, and a line that says what it gives."""
    core = pytest.importorskip("docutils.core", reason="docutils is not "
                               "installed (pip install '.[test]' brings it)")
    from docutils import nodes
    tree = core.publish_doctree(_api_page(), settings_overrides={
        "report_level": 5, "halt_level": 5, "file_insertion_enabled": False,
        "raw_enabled": False})
    shown = {}
    for item in tree.findall(nodes.definition_list_item):
        term = item.next_node(nodes.term).astext()
        first = item.next_node(nodes.definition).next_node(nodes.paragraph)
        shown[re.match(r"\w+", term).group()] = (term, first)
    entries = _api_entries()
    for name in [*_public_names(), "DEFAULT_ENTROPY", "_inst"]:
        assert name in shown, f"docs/api.rst shows no {name} without Sphinx"
        term, first = shown[name]
        assert term == name + entries[name]
        assert first is not None and len(first.astext().split()) >= 3, name


def test_docs_extra_names_sphinx_and_furo():
    pyproject = (REPO / "pyproject.toml")
    if not pyproject.exists():
        pytest.skip("pyproject.toml is not next to the tests")
    m = re.search(r"^docs = \[(.*?)\]", pyproject.read_text(), re.M | re.S)
    assert m, "no docs extra in pyproject.toml"
    assert '"sphinx' in m.group(1) and '"furo' in m.group(1)


def test_docs_host_builds_the_same_site():
    """.readthedocs.yaml: docs/conf.py, warnings as errors, arc4py installed
    from the checkout with the docs extra."""
    config = REPO / ".readthedocs.yaml"
    if not config.exists():
        pytest.skip(".readthedocs.yaml is not next to the tests")
    lines = [line.split("#")[0].strip() for line in config.read_text().splitlines()]
    for expected in ("version: 2", "configuration: docs/conf.py",
                     "fail_on_warning: true", "- method: pip", "path: .", "- docs"):
        assert expected in lines, f".readthedocs.yaml lacks {expected!r}"


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
    documented = set(re.findall(r'id="arc4py\.(\w+)"', api))
    missing = set(_public_names()) - documented
    assert not missing, f"the built api page lacks {sorted(missing)}"
    assert "exclusive_upper_bound" in api   # a signature, and its docstring:
    assert "rejection sampling" in api      # randbelow's
    for page in ("index", "tour", "numpy", "ecosystem", "capi", "security",
                 "platforms", "building", "benchmarks"):
        assert (out / f"{page}.html").exists(), page
    shutil.rmtree(out, ignore_errors=True)
