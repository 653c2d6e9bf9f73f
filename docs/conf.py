"""Sphinx configuration of arc4py's documentation (docs/*.rst).

    pip install ".[docs]"
    python -m sphinx -W --keep-going -b html docs docs/_build/html

autodoc reads the docstrings of the arc4py that Python imports; each
signature is the one docs/api.rst writes in its directive
(tests/packaging/test_docs.py checks them against the running arc4py).
"""
import os
import sys
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
