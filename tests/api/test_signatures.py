"""What help() and inspect show for arc4py's functions: one signature each,
from the function itself, and a docstring that starts with what it does."""
import inspect

import pytest

import arc4py


def _public_functions():
    found = []
    for name in arc4py.__all__:
        obj = getattr(arc4py, name)
        if callable(obj) and not isinstance(obj, type):
            found.append((name, obj))
    for cls_name in ("Random", "BitGenerator"):
        cls = getattr(arc4py, cls_name, None)
        for name, obj in sorted(vars(cls).items()) if cls is not None else ():
            if callable(obj) and (not name.startswith("_")
                                  or name == "_randbelow"):
                found.append((f"{cls_name}.{name}", obj))
    return found


@pytest.mark.parametrize("name, function", _public_functions(),
                         ids=[name for name, _ in _public_functions()])
def test_one_signature(name, function):
    signature = inspect.signature(function)
    short = name.rpartition(".")[2]
    first = (function.__doc__ or "").lstrip().partition("\n")[0]
    # help() prints the signature itself: a docstring that opens with it
    # again (as Cython's embedsignature writes it) shows it twice.
    assert not first.startswith(f"{short}("), f"{name}: {first!r}"
    assert not first.startswith(f"{name}("), f"{name}: {first!r}"
    if name in ("random_u32", "random_u64", "arc4random", "random"):
        assert list(signature.parameters) == ["size"]
    if name == "arc4random_buf":
        assert list(signature.parameters) == ["n"]
