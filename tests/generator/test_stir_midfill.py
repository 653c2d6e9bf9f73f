"""stir(all_threads=True) while another thread is in a large fill: the fill
writes at most the rest of its current chunk (ARC4PY_RNG_DIRECT_CHUNK_BYTES)
from the old key before it reseeds.

tests/c/stir_midfill.c (built with the test hooks, for the reseed hook)
measures, in up to seven 16 MiB fills (at least three), the bytes the filler
wrote between the frontier the watcher saw just before stir_all and the
filler's own first reseed under the new generation, which the filler notes
itself. That is at least the bytes from the old key after the stir, and at
most that plus the time stir_all took (a trial where the watcher saw more
than SLACK bytes go by during the call is redrawn). So every trial must stay
within one chunk plus that slack, however loaded the machine: the watcher's
delays cannot add to it (they only cost redraws). Before fills checked the
generations per 64 KiB chunk (512 KiB then), the worst of five trials was
378,304 to 446,464 bytes here.
"""
import json
import subprocess
import sys

import pytest

from arc4py._core import DIRECT_CHUNK_BYTES
from helpers import TESTS_DIR, build_generator_program

# The watcher's allowance for stir_all's own time (SLACK in the program).
SLACK_BYTES = 32 * 1024

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pthreads")


def test_fill_in_flight_stops_using_the_old_key_within_a_chunk(cc, tmp_path):
    exe = build_generator_program(cc, TESTS_DIR / "c" / "stir_midfill.c",
                                  tmp_path / "stir_midfill",
                                  "-DARC4PY_TEST_HOOKS=1")
    proc = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    # A trial where the watcher was descheduled during stir_all is redrawn,
    # up to 1000 attempts: a busy 2-core machine may leave fewer than seven.
    assert res["trials"] >= 3, res
    assert res["slack"] == SLACK_BYTES, res
    assert res["max_after_stir_bytes"] <= DIRECT_CHUNK_BYTES + SLACK_BYTES, res
