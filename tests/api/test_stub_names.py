"""Each stub's ``__all__`` is its module's, name for name, and the stub
defines every name it lists; ``class Random``'s body in the stub names the
public methods ``arc4py.Random`` and its C base type define: read from the
stubs' syntax trees, without mypy, so the quick selection fails the moment
a name is added on one side only (stubtest, in tests/api/test_typing.py,
then checks the signatures).
"""
import ast
import importlib
import sys
from pathlib import Path

import pytest

import arc4py

PKG = Path(arc4py.__file__).resolve().parent
STUBS = {"arc4py": "__init__.pyi", "arc4py._core": "_core.pyi",
         "arc4py._random": "_random.pyi"}


def _version_test(node):
    """The value of an ``if sys.version_info >= (3, N):`` test here."""
    ok = (isinstance(node, ast.Compare) and len(node.ops) == 1
          and isinstance(node.ops[0], ast.GtE)
          and ast.unparse(node.left) == "sys.version_info")
    assert ok, f"a stub's condition this test cannot read: {ast.unparse(node)}"
    return sys.version_info >= ast.literal_eval(node.comparators[0])


def _live(body):
    """The statements of ``body`` this Python sees (version tests resolved)."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _live(node.body if _version_test(node.test) else node.orelse)
        else:
            yield node


def _read(module):
    """(the names a stub defines, its __all__ or None) on this Python."""
    defined, listed = set(), None

    def walk(body):
        nonlocal listed
        for node in _live(body):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = getattr(node, "targets", None) or [node.target]
                for target in targets:
                    if not isinstance(target, ast.Name):
                        continue
                    if target.id != "__all__":
                        defined.add(target.id)
                    elif isinstance(node, ast.AugAssign):
                        listed = listed + ast.literal_eval(node.value)
                    else:
                        listed = list(ast.literal_eval(node.value))
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name == "*":
                        defined.update(_read(node.module)[1] or ())
                    elif alias.name == "__all__":
                        listed = list(_read(node.module)[1])
                    else:
                        defined.add(alias.asname or alias.name)

    if module not in STUBS:  # a stub of the standard library's (random)
        return set(), None
    walk(ast.parse((PKG / STUBS[module]).read_text()).body)
    return defined, listed


@pytest.mark.parametrize("module", sorted(STUBS))
def test_stub_lists_what_the_module_exports(module):
    runtime = set(importlib.import_module(module).__all__)
    defined, listed = _read(module)
    assert listed is not None, f"{STUBS[module]} has no __all__"
    if module == "arc4py" and "BitGenerator" not in runtime:
        listed.remove("BitGenerator")  # numpy is not installed here
    assert set(listed) == runtime, (
        f"only in the stub: {sorted(set(listed) - runtime)}; "
        f"only at run time: {sorted(runtime - set(listed))}")
    assert set(listed) <= defined, sorted(set(listed) - defined)


def test_random_stub_names_every_public_method():
    # What arc4py.Random's own body and its C base type define, public
    # names only (the rest comes from random.SystemRandom, stubbed by
    # typeshed).
    from arc4py import _core, _random
    runtime = {name for cls in (_random.Random, _core.Random)
               for name in vars(cls) if not name.startswith("_")}
    tree = ast.parse((PKG / STUBS["arc4py._random"]).read_text())
    [cls] = [node for node in _live(tree.body)
             if isinstance(node, ast.ClassDef) and node.name == "Random"]
    stubbed = {node.name for node in _live(cls.body)
               if isinstance(node, ast.FunctionDef)
               and not node.name.startswith("_")}
    assert stubbed == runtime, (
        f"only in the stub: {sorted(stubbed - runtime)}; "
        f"only at run time: {sorted(runtime - stubbed)}")
