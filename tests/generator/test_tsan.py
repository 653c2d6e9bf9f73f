"""The C generator under ThreadSanitizer: tests/c/stress_threads.c (eight
threads drawing every size class, stir_all and stir among them, thread
churn, forks whose children draw) built with -fsanitize=thread by each of
gcc and clang found here; any report fails the test.

Thread-leak reports are off: a forked child of a multithreaded program
inherits the parent's thread list, and TSan counts those threads as leaked
when the child exits, which says nothing about arc4py.  (Checked that the
build catches a race: with the stir_all generation's atomic increment made a
plain ``+= 1``, TSan reported the data race against the hot path's atomic
read.)
"""
import os
import subprocess
import sys

import pytest

from helpers import TESTS_DIR, build_generator_program, find_cc, try_compile

pytestmark = [
    pytest.mark.slow,  # ThreadSanitizer builds and runs, with gcc and clang
    pytest.mark.skipif(not sys.platform.startswith("linux"),
                       reason="ThreadSanitizer runs are Linux-only here"),
]


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_stress_is_tsan_clean(compiler, tmp_path):
    cc = find_cc(compiler)
    if cc is None:
        pytest.skip(f"{compiler} is not on PATH")
    probe = try_compile(cc, "int main(void){return 0;}", "-fsanitize=thread",
                        out=tmp_path / "probe")
    if probe.returncode != 0:
        pytest.skip(f"{compiler} cannot link -fsanitize=thread here: "
                    f"{probe.stderr.strip()[-200:]}")
    exe = build_generator_program(cc, TESTS_DIR / "c" / "stress_threads.c",
                                  tmp_path / "stress_threads",
                                  "-fsanitize=thread", "-g", "-O1")
    env = dict(os.environ, TSAN_OPTIONS="report_thread_leaks=0 exitcode=66")
    proc = subprocess.run([exe], capture_output=True, text=True, env=env,
                          timeout=600)
    assert "ThreadSanitizer" not in proc.stderr, proc.stderr[-6000:]
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", (
        proc.returncode, proc.stdout, proc.stderr[-3000:])
