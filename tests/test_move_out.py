"""The hot path's copy-and-wipe (``rng_move_out`` in
arc4py/csrc/rng_hot_path.h) does exactly what memcpy then memset would: every
length 0..300 between every pair of offsets 0..31, guard bytes untouched, the
source left zero.

tests/c/move_out_check.c checks it; it is built here at several
optimisation levels, since what the compiler makes of the loops (vectorised,
inlined for a constant length) differs between them.
"""
import subprocess
from pathlib import Path

import pytest

from helpers import CSRC, INCLUDE, compile_c

PROGRAM = Path(__file__).resolve().parent / "c" / "move_out_check.c"


@pytest.mark.parametrize("opt", ["-O0", "-O2", "-O3"])
def test_move_out_matches_memcpy_then_memset(cc, tmp_path, opt):
    if not CSRC.is_dir():
        pytest.skip("arc4py's C sources are not next to the tests")
    exe = tmp_path / "move_out_check"
    compile_c(cc, opt, "-Wall", "-Wextra", "-Werror", "-I", INCLUDE,
              "-I", CSRC, PROGRAM, "-o", exe)
    run = subprocess.run([str(exe)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    # 301 lengths x 32 x 32 offsets; 17 of the lengths also as constants.
    assert run.stdout.split() == ["ok", str(301 * 32 * 32), str(17 * 32 * 32)], (
        run.stdout)
