"""A draw nested in a draw: a C signal handler that calls the generator
while the code it interrupted, on the same thread, is inside it.

tests/c/signal_nested.c loops over 16-byte draws while another thread sends
it SIGUSR1 as fast as it can; the handler draws 16 bytes, 4 bytes and now
and then a direct-size fill.  The per-thread in-use guard sends a nested
call straight to the OS, so no two calls hand out the same bytes, no key
is made from wiped bytes, and the buffer's count of bytes left never wraps
(before the guard: duplicate outputs by the thousand, then a segfault).
"""
import subprocess
import sys

import pytest

from helpers import TESTS_DIR, build_generator_program, last_json

pytestmark = [
    pytest.mark.slow,  # a C program of 8 x 2**20 interrupted draws
    pytest.mark.skipif(sys.platform == "win32",
                       reason="POSIX signals"),
]


def test_nested_draws_never_share_bytes(cc, tmp_path):
    exe = build_generator_program(cc, TESTS_DIR / "c" / "signal_nested.c",
                                  tmp_path / "signal_nested")
    proc = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    res = last_json(proc)
    # Enough handlers ran inside draws for the check to mean something.
    assert res["nested"] >= 100, res
    assert res["failed"] == 0, res
    assert res["duplicates"] == 0, res
    assert res["zero"] == 0, res
