"""fork() while another thread is in a large fill: the child finds no
ChaCha20 state in what it inherited and cannot compute any of the parent's
output produced after the fork, with each core as the generator's.

tests/c/fork_midfill.c forks while a thread loops over 1 MiB fills, has
the child search all its writable memory for ChaCha20 states (16 words,
rows of 2 or 4 blocks, or 4, 8 or 16 lanes per word: the layouts the cores
use) and counts the parent's post-fork bytes their keystream reproduces.
A fill's one-time key and state live in the thread's state pages (wiped in
the child), and no core copies its input anywhere else: it reads it from
those pages again for the feed-forward.
"""
import json
import subprocess
import sys

import pytest

import arc4py
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
MID_OUTPUT_FORKS = 6
MAX_RUNS = 40


@pytest.mark.parametrize("core", arc4py.backends())
def test_child_finds_no_state_and_reproduces_nothing(program, core):
    landed, runs = [], 0
    while len(landed) < MID_OUTPUT_FORKS and runs < MAX_RUNS:
        runs += 1
        proc = subprocess.run([program, core], capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        if res["post_fork_blocks"] > 0:  # the fork was mid-output
            landed.append(res)
            assert res["states"] == 0, (core, res)
            assert res["reproduced_bytes"] == 0, (core, res)
    assert len(landed) == MID_OUTPUT_FORKS, (
        f"only {len(landed)} of {runs} forks landed while the fill was writing")
