"""No key that made handed-out output survives in dead stack.

tests/c/dead_stack.c is built from arc4py's C sources (every
``arc4py/csrc/*.c``) with the flags setup.py uses.  For each core this CPU
runs it draws a large direct fill and a refill, copies the 16 KiB of stack
below the caller and searches it blindly for a ChaCha20 key (plain, spilled
as a whole state, or as broadcast vectors) that regenerates the output.
"""
import subprocess

import pytest

import arc4py
from helpers import REPO, TESTS_DIR, build_generator_program

# Builds the generator from C once per core.
pytestmark = pytest.mark.slow

PROGRAM = TESTS_DIR / "c" / "dead_stack.c"


@pytest.fixture(scope="module")
def dead_stack(cc, tmp_path_factory):
    if not (REPO / "arc4py" / "csrc").is_dir():
        pytest.skip("arc4py's C sources are not next to the tests")
    return build_generator_program(
        cc, PROGRAM, tmp_path_factory.mktemp("dead_stack") / "dead_stack")


@pytest.mark.parametrize("core", arc4py.backends())
def test_no_key_in_dead_stack(dead_stack, core):
    proc = subprocess.run([str(dead_stack), core], capture_output=True,
                          text=True, timeout=300)
    lines = proc.stdout.split("\n")
    assert f"{core} not-runnable" not in lines, (
        f"backends() lists {core} but the C generator cannot select it")
    results = {line.split()[1]: line for line in lines if line.strip()}
    assert set(results) == {"direct", "refill"}, proc.stdout + proc.stderr
    for case, line in results.items():
        assert line.split()[2] == "clean", (
            f"{core}, {case} draw: a key in dead stack regenerates the "
            f"output ({line})")
    assert proc.returncode == 0, proc.stdout + proc.stderr
