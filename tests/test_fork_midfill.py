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


@pytest.mark.parametrize("core", arc4py.backends())
def test_child_reproduces_at_most_one_chunk(program, core):
    for _ in range(4):  # where the fork lands in the fill varies
        proc = subprocess.run([program, core], capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        assert res["post_fork_blocks"] > 0, res  # the fork was mid-output
        assert res["reproduced_bytes"] <= DIRECT_CHUNK_BYTES, (core, res)
