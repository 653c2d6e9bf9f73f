"""Sphinx configuration of arc4py's API reference.

Build (warnings are errors, as CI builds it)::

    pip install ".[docs]"
    python -m sphinx -W --keep-going -b html docs docs/_build/html

The pages document the arc4py that Python imports (autodoc reads its
docstrings), and every signature shown comes from the type stubs
(``arc4py/*.pyi``): the compiled functions carry no annotations, the stubs
do, and they are what type checkers see.  A function with overloads in the
stubs is shown with the union of its overloads.
"""
import ast
import os
import re
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

extensions = ["sphinx.ext.autodoc", "sphinx.ext.intersphinx"]
html_theme = "furo"
html_title = f"arc4py {release}"
exclude_patterns = ["_build"]
# No network at build time: references to the stdlib and numpy stay text.
intersphinx_mapping = {}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# The stubs' names for shapes and numpy's arrays, as readers know them.
autodoc_type_aliases = {}
default_role = "literal"
nitpicky = False


# ---- signatures from the stubs -------------------------------------------------

PKG = os.path.dirname(os.path.abspath(arc4py.__file__))
# Where a public name's stub lives, most specific first.
STUBS = ("__init__.pyi", "_core.pyi", "_numpy.pyi")


def _load_stubs():
    """{qualified name: [FunctionDef, ...]} over every stub (a name with
    overloads has several), methods as ``Class.method``; a name defined in
    more than one stub is taken from the first in STUBS."""
    found = {}
    for name in STUBS:
        path = os.path.join(PKG, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
            defs = {}
            _visit(tree.body, "", defs)
            for key, nodes in defs.items():
                found.setdefault(key, nodes)
    return found


def _visit(body, prefix, defs):
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault(prefix + node.name, []).append(node)
        elif isinstance(node, ast.ClassDef):
            _visit(node.body, prefix + node.name + ".", defs)
        elif isinstance(node, ast.If):  # sys.version_info branches
            _visit(node.body if _holds(node.test) else node.orelse, prefix,
                   defs)


def _holds(test):
    """A stub's ``sys.version_info >= (3, N)`` test, on this Python."""
    try:
        return bool(eval(compile(ast.Expression(test), "<stub>", "eval"),
                         {"sys": sys}))
    except Exception:
        return True


def _is_overload(node):
    return any(isinstance(d, ast.Name) and d.id == "overload"
               for d in node.decorator_list)


def _union(texts):
    out = []
    for t in texts:
        for part in (p.strip() for p in t.split(" | ")):
            if part and part not in out:
                out.append(part)
    # None last, as the stubs write "X | None"
    if "None" in out:
        out.remove("None")
        out.append("None")
    return " | ".join(out)


def _signature(nodes, drop_self):
    """(args, return annotation) text for the stub's ``nodes``: one
    definition, or the union of its overloads."""
    defs = [n for n in nodes if _is_overload(n)] or nodes[-1:]
    params = {}          # name -> [annotations], default, kind
    order = []
    returns = []
    for node in defs:
        a = node.args
        positional = a.posonlyargs + a.args
        defaults = [None] * (len(positional) - len(a.defaults)) + a.defaults
        groups = [(p, d, "pos" if i >= len(a.posonlyargs) else "posonly")
                  for i, (p, d) in enumerate(zip(positional, defaults))]
        groups += [(p, d, "kw") for p, d in zip(a.kwonlyargs, a.kw_defaults)]
        if a.vararg:
            groups.append((a.vararg, None, "var"))
        if a.kwarg:
            groups.append((a.kwarg, None, "varkw"))
        for p, d, kind in groups:
            if p.arg not in params:
                params[p.arg] = {"ann": [], "default": None, "kind": kind}
                order.append(p.arg)
            if p.annotation is not None:
                params[p.arg]["ann"].append(ast.unparse(p.annotation))
            if d is not None and params[p.arg]["default"] is None:
                params[p.arg]["default"] = ast.unparse(d)
        if node.returns is not None:
            returns.append(ast.unparse(node.returns))
    parts = []
    star_done = False
    for name in order:
        p = params[name]
        if drop_self and name == "self" and not parts:
            continue
        if p["kind"] == "kw" and not star_done:
            parts.append("*")
            star_done = True
        text = {"var": "*", "varkw": "**"}.get(p["kind"], "") + name
        if p["kind"] == "var":
            star_done = True
        if p["ann"]:
            text += ": " + _union(p["ann"])
        if p["default"] is not None:
            text += (" = " if p["ann"] else "=") + p["default"]
        parts.append(text)
    if any(params[n]["kind"] == "posonly" for n in order):
        last = max(i for i, n in enumerate(n for n in order
                                           if not (drop_self and n == "self"))
                   if params[n]["kind"] == "posonly")
        parts.insert(last + 1, "/")
    return "(" + ", ".join(parts) + ")", _union(returns)


_STUB_DEFS = None


def stub_signature(app, what, name, obj, options, signature, return_annotation):
    """autodoc-process-signature: the stub's signature for ``name``."""
    global _STUB_DEFS
    if what not in ("function", "method", "class"):
        return None
    if _STUB_DEFS is None:
        _STUB_DEFS = _load_stubs()
    short = name[len("arc4py."):] if name.startswith("arc4py.") else name
    key = short + ".__init__" if what == "class" else short
    nodes = _STUB_DEFS.get(key)
    if not nodes:
        return None
    args, ret = _signature(nodes, drop_self=what in ("method", "class"))
    return args, ("" if what == "class" else ret)


# ---- the generator's functions, from arc4py._core.__all__ ----------------------

#: The line of api.rst that stands for them.
CORE_FUNCTIONS = ".. autofunctions: arc4py._core.__all__\n"


def core_functions(app, docname, source):
    """source-read: api.rst's CORE_FUNCTIONS line becomes an autofunction
    for each name of ``arc4py._core.__all__`` the page does not document
    elsewhere, in that order, so a new function needs no line here."""
    if docname != "api":
        return
    documented = set(re.findall(r"^\.\. auto\w+:: (\w+)", source[0], re.M))
    source[0] = source[0].replace(CORE_FUNCTIONS, "".join(
        f".. autofunction:: {name}\n" for name in arc4py._core.__all__
        if name not in documented))


def setup(app):
    app.connect("autodoc-process-signature", stub_signature)
    app.connect("source-read", core_functions)
