"""A raw fork from a signal handler that interrupted a large fill (as a VM
snapshot resumed twice would see it): parent and child each finish the
fill, and not one 64-byte block of it is the same in both.

tests/c/fork_in_handler.c forks with the clone system call (no atfork
handler) from a SIGALRM handler while a 4 MiB fill runs.  The child's state
pages read as zero (MADV_WIPEONFORK); the generator sees that under the
running call and redraws the request from a fresh seed.  Before it did,
the rest of the chunk in flight was the same in both copies (8,192 blocks,
512 KiB, in every run here).
"""
import subprocess
import sys

import pytest

import arc4py
from helpers import TESTS_DIR, build_generator_program, last_json, state_pages_kib


def _kernel_wipes_on_fork():
    """The kernel itself marks the state pages (smaps' wf flag), not just
    madvise() answering 0: qemu-user answers 0 and passes nothing on."""
    arc4py.arc4random()
    return state_pages_kib() > 0


pytestmark = [
    pytest.mark.slow,  # builds the generator from C
    pytest.mark.skipif(not sys.platform.startswith("linux"),
                       reason="raw clone() and MADV_WIPEONFORK are Linux's"),
    pytest.mark.skipif(not sys.platform.startswith("linux")
                       or not _kernel_wipes_on_fork(),
                       reason="no state page carries the kernel's wipe-on-fork "
                              "flag (kernel < 4.14, or emulated: qemu-user "
                              "ignores madvise)"),
]


def test_fill_interrupted_by_a_raw_fork_differs_in_every_block(cc, tmp_path):
    exe = build_generator_program(cc, TESTS_DIR / "c" / "fork_in_handler.c",
                                  tmp_path / "fork_in_handler")
    forked = 0
    for _ in range(5):
        proc = subprocess.run([exe], capture_output=True, text=True,
                              timeout=120)
        res = last_json(proc)
        forked += res["forked"]
        assert res["same_blocks"] == 0, res
    assert forked >= 3, "the timer hardly ever landed inside a fill"
