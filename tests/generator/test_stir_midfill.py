"""stir(all_threads=True) while another thread is in a large fill: a fill
that returns after stir_all has returned returns no byte made before it
returned (from the key stir_all retired).

tests/c/stir_midfill.c races a 16 MiB fill against stir_all 40 times,
copies what the fill had written by the time stir_all returned, and counts
the copied blocks the returned output still holds.  The fill's one check
at its end sees the stir generation changed and draws the whole request
again from a key seeded after it, so the count is 0.
"""
import json
import subprocess
import sys

import pytest

from helpers import TESTS_DIR, build_generator_program

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pthreads")

RACES = 40


def test_fill_returned_after_stir_all_holds_no_old_key_byte(cc, tmp_path):
    exe = build_generator_program(cc, TESTS_DIR / "c" / "stir_midfill.c",
                                  tmp_path / "stir_midfill")
    proc = subprocess.run([exe, str(RACES)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["races"] == RACES, res
    # The copies are real first-pass output: well into the fill each time.
    assert res["copied_bytes"] >= RACES * (16 << 20) // 8, res
    assert res["old_key_bytes_returned"] == 0, res
    assert res["races_with_old_bytes"] == 0, res
