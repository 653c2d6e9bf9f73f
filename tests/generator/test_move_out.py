"""The hot path's copy-and-wipe (``rng_move_out`` in
arc4py/csrc/rng_hot_path.h) does exactly what memcpy then memset would: every
length 0..300 between every pair of offsets 0..31, guard bytes untouched, the
source left zero.

tests/c/move_out_check.c checks it; it is built here at several
optimisation levels, since what the compiler makes of the loops (vectorised,
inlined for a constant length) differs between them.  The AVX-512 build of
it (whole 64-byte lines first, rng_hot_path_avx512.h: the C API's
arc4random_buf and fill on a CPU that runs the avx512 core) is checked
natively where the CPU has AVX-512 and through SIMDe's emulation on any
x86-64 or aarch64 machine.
"""
import platform
import subprocess

import pytest

import arc4py
from helpers import CSRC, INCLUDE, TESTS_DIR, child_env, compile_c, run_child, try_compile

# Builds the move-out check at three optimisation levels.
pytestmark = pytest.mark.slow

PROGRAM = TESTS_DIR / "c" / "move_out_check.c"
# 301 lengths x 32 x 32 offsets; 17 of the lengths also as constants.
EXPECTED = ["ok", str(301 * 32 * 32), str(17 * 32 * 32)]


def build(cc, tmp_path, *flags):
    if not CSRC.is_dir():
        pytest.skip("arc4py's C sources are not next to the tests")
    exe = tmp_path / "move_out_check"
    compile_c(cc, *flags, "-Wall", "-Wextra", "-Werror", "-I", INCLUDE,
              "-I", CSRC, PROGRAM, "-o", exe)
    return exe


def check(exe):
    run = subprocess.run([str(exe)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.split() == EXPECTED, run.stdout


@pytest.mark.parametrize("opt", ["-O0", "-O2", "-O3"])
def test_move_out_matches_memcpy_then_memset(cc, tmp_path, opt):
    check(build(cc, tmp_path, opt))


@pytest.mark.parametrize("opt", ["-O0", "-O3"])
def test_avx512_move_out_matches_memcpy_then_memset(cc, tmp_path, opt):
    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("the AVX-512 hand-out is x86-64 only (the emulated "
                    "test below runs it here)")
    exe = build(cc, tmp_path, opt, "-mavx512f", "-DMOVE_OUT_AVX512")
    if "avx512" not in arc4py.backends():
        pytest.skip("this CPU cannot run the avx512 core, so the AVX-512 "
                    "hand-out was compiled, not run (the emulated test "
                    "runs it)")
    check(exe)


def test_avx512_move_out_emulated_matches_memcpy_then_memset(cc, tmp_path):
    if try_compile(cc, "#include <simde/x86/avx512.h>\n").returncode != 0:
        pytest.skip("SIMDe headers missing: cc cannot include "
                    "<simde/x86/avx512.h> (install libsimde-dev)")
    check(build(cc, tmp_path, "-O1", "-DMOVE_OUT_AVX512",
                        "-DARC4PY_EMULATE_AVX512"))


@pytest.mark.parametrize("core", [None, "avx512", "avx2", "generic"])
def test_c_api_takes_the_avx512_hand_out_with_the_avx512_core(core):
    """The C API's AVX-512 build of arc4random_buf and fill goes with the
    avx512 core: the default where the CPU runs it, and never where one
    chose another core (ARC4PY_BACKEND)."""
    if core is not None and core not in arc4py.backends():
        pytest.skip(f"this CPU cannot run the {core} core")
    proc = run_child("""
        import arc4py
        from arc4py import _core
        print(arc4py.backend(), _core._capi_hand_out)
    """, env=child_env(ARC4PY_BACKEND=core))
    assert proc.returncode == 0, proc.stderr
    backend, hand_out = proc.stdout.split()
    assert backend == (core or arc4py.backends()[0])
    assert hand_out == ("avx512" if backend == "avx512" else "portable")
