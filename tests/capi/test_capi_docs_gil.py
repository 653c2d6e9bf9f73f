"""docs/capi.rst's two example modules keep a free-threaded Python's GIL
off: each is built as the page writes it (its dice.pyx, its dice.c, its
setup.py, its build_ext command) and imported by a child with PYTHON_GIL
unset, as a user's program would import it.  On a GIL build the same
builds run and the GIL is simply on.  The C module without its
``Py_mod_gil`` slot shows what the page says the slot is for: importing it
turns the GIL back on, with CPython's warning.
"""
import importlib.util
import re
import shlex
import subprocess
import sys
import sysconfig
import textwrap

import pytest

from helpers import REPO, child_env, find_cc, last_json, run_child

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
PAGE = REPO / "docs" / "capi.rst"

pytestmark = [
    pytest.mark.slow,   # builds extension modules
    pytest.mark.skipif(not sys.platform.startswith("linux"),
                       reason="the examples are built with a Unix C compiler here"),
]


def _blocks(text):
    """(directive language or "::", body) of each code block of a reST text;
    a directive's options (``:caption: ...``) are not part of its body."""
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)\.\. code-block:: (\S+)\s*$", line)
        lang = m and m.group(2)
        if not m and line.rstrip().endswith("::") and not line.lstrip().startswith(".."):
            m, lang = re.match(r"^(\s*)", line), "::"
        if not m:
            continue
        indent, body = len(m.group(1)), []
        for nxt in lines[i + 1:]:
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                break
            if not body and nxt.strip().startswith(":") and lang != "::":
                continue        # an option of the directive
            body.append(nxt)
        out.append((lang, textwrap.dedent("\n".join(body)).strip("\n") + "\n"))
    return out


def _page():
    if not PAGE.exists():
        pytest.skip("docs/ is not next to the tests")
    blocks = _blocks(PAGE.read_text(encoding="utf-8"))
    (pyx,) = [b for lang, b in blocks if lang == "cython"]
    (c_code,) = [b for lang, b in blocks if lang == "c"]
    (setup,) = [b for lang, b in blocks if lang in ("python", "::") and "cythonize(" in b]
    # the page's own command where it gives one
    build = [ln.split("#")[0].strip() for lang, b in blocks if lang == "sh"
             for ln in b.splitlines() if "build_ext" in ln]
    return pyx, c_code, setup, (build or ["python setup.py build_ext --inplace"])[0]


def _build(folder, source, code, setup, command):
    """``source`` (dice.pyx or dice.c) with the page's setup.py, which
    names dice.pyx (the page: dice.c "in place of" it), by its command."""
    folder.mkdir()
    (folder / source).write_text(code)
    (folder / "setup.py").write_text(setup.replace('"dice.pyx"', f'"{source}"'))
    assert command.startswith("python "), command
    proc = subprocess.run(f"{shlex.quote(sys.executable)} {command[len('python '):]}",
                          shell=True, cwd=folder, capture_output=True, text=True,
                          timeout=600, env=child_env(ARC4PY_BACKEND=None, PYTHON_GIL=None))
    assert proc.returncode == 0, f"{command}\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}"


IMPORT_DICE = """
    import json, sys
    import dice
    assert 1000 <= dice.roll(1000) <= 6000
    print(json.dumps({"gil": getattr(sys, "_is_gil_enabled", lambda: True)()}))
"""


def _import(folder):
    """Whether the GIL is on after a child imports dice from ``folder``
    (PYTHON_GIL unset: the interpreter decides), and the child's stderr."""
    proc = run_child(IMPORT_DICE, cwd=folder, env=child_env(PYTHON_GIL=None))
    return last_json(proc)["gil"], proc.stderr


@pytest.fixture(scope="module")
def page():
    if find_cc() is None:
        pytest.skip("no C compiler")
    for mod in ("Cython", "setuptools"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not installed, as the page's setup.py needs")
    return _page()


@pytest.mark.parametrize("source", ["dice.pyx", "dice.c"])
def test_the_pages_example_keeps_the_gil_as_the_build_has_it(page, tmp_path, source):
    pyx, c_code, setup, command = page
    _build(tmp_path / "dice", source, pyx if source == "dice.pyx" else c_code, setup, command)
    gil, stderr = _import(tmp_path / "dice")
    assert gil == (not FREE_THREADED), stderr
    assert "GIL" not in stderr, stderr


@pytest.mark.skipif(not FREE_THREADED, reason="a GIL build: no GIL to turn back on")
def test_without_its_slot_the_c_example_turns_the_gil_on(page, tmp_path):
    _, c_code, setup, command = page
    stripped = re.sub(r"^#ifdef Py_GIL_DISABLED\n.*?^#endif\n", "", c_code,
                      flags=re.S | re.M)
    assert "Py_mod_gil" not in stripped and "Py_mod_exec" in stripped
    _build(tmp_path / "dice", "dice.c", stripped, setup, command)
    gil, stderr = _import(tmp_path / "dice")
    assert gil is True, stderr
    assert "GIL" in stderr and "dice" in stderr, stderr
