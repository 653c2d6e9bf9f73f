"""stir(all_threads=True) while another thread is in a large fill: the fill
writes at most the rest of its current chunk (ARC4PY_RNG_DIRECT_CHUNK_BYTES)
from the old key before it reseeds.

tests/c/stir_midfill.c (built with the test hooks, for the reseed count)
measures, for up to seven 64 MiB fills, the bytes the filler wrote between
stir_all's return and its own reseed, by watching the fill's frontier, and
reports the median (the watcher's delays only add; one trial on a loaded
machine can be late by hundreds of KiB).  The bound allows 32 KiB on top of
one chunk for the watcher's own latency.  Before fills checked the
generations per 64 KiB chunk (512 KiB then), the worst of five trials was
378,304 to 446,464 bytes here.
"""
import json
import subprocess
import sys

import pytest

from arc4py._core import DIRECT_CHUNK_BYTES
from helpers import TESTS_DIR, build_generator_program

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pthreads")


def test_fill_in_flight_stops_using_the_old_key_within_a_chunk(cc, tmp_path):
    exe = build_generator_program(cc, TESTS_DIR / "c" / "stir_midfill.c",
                                  tmp_path / "stir_midfill",
                                  "-DARC4PY_TEST_HOOKS=1")
    proc = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    # A trial the scheduler disturbed (the filler went on past its next
    # periodic reseed before the watcher looked) is redrawn, up to 200
    # attempts: a busy 2-core machine may leave fewer than seven.
    assert res["trials"] >= 3, res
    assert res["after_stir_bytes"] <= DIRECT_CHUNK_BYTES + 32 * 1024, res
