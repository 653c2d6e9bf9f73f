"""arc4py's C API from a signal handler that interrupted a C API draw of its
own thread (capi.h: "From a signal handler"): tests/c/signal_nested.c built
as a shared library over arc4py.get_include()'s header, loaded into a
child interpreter with ctypes, which imports the C API as an extension does
and runs the program's checks through the installed arc4py's table: the
portable build of the buffered calls and, where the avx512 core runs, the
AVX-512 one.
"""
import sys
import sysconfig

import pytest

import arc4py
from helpers import CSRC, TESTS_DIR, build_shared, c_verdict, child_env, run_child

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

RUN = """
    import ctypes, sys
    from arc4py import _core
    assert _core._capi_hand_out == sys.argv[2], _core._capi_hand_out
    if ctypes.PyDLL(sys.argv[1]).signal_nested_import() != 0:
        raise SystemExit("arc4py_import() failed")
    sys.exit(ctypes.CDLL(sys.argv[1]).signal_nested_capi())
"""


@pytest.fixture(scope="module")
def signal_nested_capi(cc, tmp_path_factory):
    out = tmp_path_factory.mktemp("signal_nested_capi") / "libsignal_nested.so"
    return build_shared(cc, [TESTS_DIR / "c" / "signal_nested.c"], out,
                        "-DSIGNAL_NESTED_CAPI", "-Wall", "-Wextra", "-Werror",
                        "-pthread", "-I", arc4py.get_include(), "-I", CSRC,
                        "-I", sysconfig.get_paths()["include"])


@pytest.mark.slow
@pytest.mark.parametrize("hand_out", ["portable", "avx512"])
def test_c_api_calls_nested_in_a_draw_share_no_bytes(signal_nested_capi, hand_out):
    portable_cores = [c for c in arc4py.backends() if c != "avx512"]
    if hand_out == "avx512" and "avx512" not in arc4py.backends():
        pytest.skip("this CPU cannot run the avx512 core, which the AVX-512 "
                    "hand-out goes with")
    core = "avx512" if hand_out == "avx512" else portable_cores[0]
    proc = run_child(RUN, signal_nested_capi, hand_out,
                     env=child_env(ARC4PY_BACKEND=core), timeout=300)
    verdict = c_verdict(proc)
    assert verdict["verdict"] == "ok", verdict
    assert verdict["kinds"] == 6, verdict
    assert (verdict["duplicates"], verdict["zero"]) == (0, 0), verdict
