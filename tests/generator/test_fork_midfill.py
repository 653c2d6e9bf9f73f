"""fork() while another thread is in a large fill: the child cannot compute
more than one chunk (ARC4PY_RNG_DIRECT_CHUNK_BYTES) of the parent's output
produced after the fork, with each core as the generator's.

tests/c/fork_midfill.c forks while a thread loops over 1 MiB fills, has
the child search all it inherited for ChaCha20 states and counts the
parent's post-fork bytes their keystream reproduces.  The one-time key and
state of a fill live in the thread's state pages (wiped in the child), so
what is left is what a core spilled of the chunk in flight.  (Before they
moved there, from the stack: up to 211,968 reproduced bytes in a run here.)
"""
import json
import subprocess
import sys

import pytest

import arc4py
from arc4py._core import DIRECT_CHUNK_BYTES
from helpers import TESTS_DIR, build_generator_program

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc/self/maps")


@pytest.fixture(scope="module")
def program(cc, tmp_path_factory):
    return build_generator_program(cc, TESTS_DIR / "c" / "fork_midfill.c",
                                   tmp_path_factory.mktemp("fm") / "fork_midfill")


# Forks that landed mid-output wanted per core (where in the fill each
# lands varies), and the runs allowed to reach them: a fork can land after
# the fill has written its last byte, and the child then has nothing to
# reproduce.
MID_OUTPUT_FORKS = 4
MAX_RUNS = 40


@pytest.mark.parametrize("core", arc4py.backends())
def test_child_reproduces_at_most_one_chunk(program, core):
    landed, runs = [], 0
    while len(landed) < MID_OUTPUT_FORKS and runs < MAX_RUNS:
        runs += 1
        proc = subprocess.run([program, core], capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        if res["post_fork_blocks"] > 0:  # the fork was mid-output
            landed.append(res)
            assert res["reproduced_bytes"] <= DIRECT_CHUNK_BYTES, (core, res)
    assert len(landed) == MID_OUTPUT_FORKS, (
        f"only {len(landed)} of {runs} forks landed while the fill was writing")
