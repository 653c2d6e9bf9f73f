"""Sphinx configuration of arc4py's documentation (docs/*.rst).

    pip install ".[docs]"
    python -m sphinx -W --keep-going -b html docs docs/_build/html

autodoc reads the docstrings of the arc4py that Python imports; each
signature is the one docs/api.rst writes in its entry, which the build
turns into autodoc's directive (below; tests/packaging/test_docs.py checks
the signatures against the running arc4py).
"""
import os
import re
import sys
import textwrap
from importlib.machinery import EXTENSION_SUFFIXES

# `python -m sphinx` from the checkout puts it first on sys.path; unbuilt
# (a plain `pip install .`), its arc4py/ would shadow the installed one.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not any(os.path.exists(os.path.join(_ROOT, "arc4py", "_core" + suffix))
           for suffix in EXTENSION_SUFFIXES):
    sys.path[:] = [p for p in sys.path if not isinstance(p, str) or
                   os.path.realpath(p or os.curdir) != os.path.realpath(_ROOT)]

import arc4py  # noqa: E402

project = "arc4py"
author = "The arc4py developers"
copyright = "the arc4py developers; ISC license"
release = version = arc4py.__version__

extensions = ["sphinx.ext.autodoc"]
html_theme = "furo"
html_title = f"arc4py {release}"
exclude_patterns = ["_build"]
autodoc_member_order = "bysource"
default_role = "literal"


# ---- docs/api.rst: plain entries, autodoc in the build --------------------------
# api.rst reads whole as plain reStructuredText (a forge shows it so, and
# drops Sphinx's directives): an entry is a definition list item whose term
# is ``name(signature)`` (or ``name``) and whose first paragraph says what
# it gives in a line.  Here each entry becomes autodoc's for its object:
# the docstring stands for that line, the other paragraphs follow it, and
# a ``.. members: a, b`` comment in it (invisible there) names the members
# a class documents.  A name that is not a function or class of its own
# (data, an alias) becomes ``.. data::`` with its text.

_ENTRY = re.compile(r"``(\w+)(\(.*\))?``")


def _paragraphs(lines):
    """The dedented paragraphs of an entry's indented ``lines``."""
    text = textwrap.dedent("\n".join(lines)).strip("\n")
    return [p for p in re.split(r"\n\s*\n", text) if p.strip()]


def _indent(paragraphs):
    return ["   " + line if line else "" for p in paragraphs
            for line in (p.splitlines() + [""])]


def api_entries_to_autodoc(text):
    """api.rst's text with its entries made autodoc directives."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        entry = _ENTRY.fullmatch(lines[i])
        if not (entry and i + 1 < len(lines) and lines[i + 1].startswith(" ")):
            out.append(lines[i])
            i += 1
            continue
        name, signature = entry.group(1), entry.group(2) or ""
        body = []
        i += 1
        while i < len(lines) and (not lines[i].strip() or lines[i][0] == " "):
            body.append(lines[i])
            i += 1
        paragraphs = _paragraphs(body)
        members = [p.split(":", 1)[1].strip() for p in paragraphs
                   if p.startswith(".. members:")]
        paragraphs = [p for p in paragraphs if not p.startswith(".. members:")]
        obj = getattr(arc4py, name, None)
        if isinstance(obj, type) and obj.__name__ == name:
            out += [f".. autoclass:: {name}{signature}"]
            out += [f"   :members: {m}" for m in members] + [""]
            out += _indent(paragraphs[1:])
        elif callable(obj) and not isinstance(obj, type):
            out += [f".. autofunction:: {name}{signature}", ""]
            out += _indent(paragraphs[1:])
        else:
            out += [f".. data:: {name}", ""] + _indent(paragraphs)
    return "\n".join(out) + "\n"


def _api_page(app, docname, source):
    if docname == "api":
        source[0] = api_entries_to_autodoc(source[0])


def setup(app):
    app.connect("source-read", _api_page)
