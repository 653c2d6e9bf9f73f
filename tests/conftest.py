"""Fixtures shared by the test files (their plain helpers are in helpers.py).

    cc               a C compiler's path (skips when there is none)
    getrandom_shim   tests/shims/getrandom_shim.c built once, its .so path
                     (skips off Linux, where LD_PRELOAD cannot replace it)
    child            run_child() bound to the test's tmp_path as the cwd
"""
import functools

import pytest

import arc4py
from helpers import LINUX, SHIM_SOURCE, build_getrandom_shim, find_cc, run_child


def pytest_report_header(config):
    return (f"arc4py {arc4py.__version__} from {arc4py.__file__}; core "
            f"{arc4py.backend()} (runnable: {', '.join(arc4py.backends())})")


@pytest.fixture(scope="session")
def cc():
    """The C compiler (cc, gcc or clang) that builds the tests' helpers."""
    path = find_cc()
    if path is None:
        pytest.skip("no C compiler (cc, gcc or clang) on PATH")
    return path


@pytest.fixture(scope="session")
def getrandom_shim(cc, tmp_path_factory):
    """The LD_PRELOAD getrandom shim, compiled once per session; its path.
    Use with helpers.shim_env(getrandom_shim, mode, caller)."""
    if not LINUX:
        pytest.skip("the getrandom LD_PRELOAD shim is Linux-only")
    if not SHIM_SOURCE.exists():
        pytest.skip(f"{SHIM_SOURCE} is missing")
    return build_getrandom_shim(cc, tmp_path_factory.mktemp("shim"))


@pytest.fixture
def child(tmp_path):
    """``child(code, *args, timeout=120, **env)``: run_child in tmp_path."""
    return functools.partial(run_child, cwd=tmp_path)
