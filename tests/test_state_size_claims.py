"""The README's figures for the per-thread state match the build: the VM-clone
window ("at most N KiB of identical buffered output per thread", "the rest
of one N KiB buffer") is the buffer's size, a fill in flight's ("one N KiB
chunk") the direct-fill chunk's, and a thread's state ("pages (N KiB;
`mmap` ...") is what a new thread really maps, wiped on fork, as
/proc/self/smaps shows."""
import re
import textwrap

import pytest

from arc4py._core import DIRECT_CHUNK_BYTES
from helpers import BUFFER_BYTES, LINUX, REPO, run_child

README = REPO / "README.md"


def _readme():
    if not README.exists():
        pytest.skip("README.md is not next to the tests")
    return README.read_text(encoding="utf-8")


def test_readme_vm_clone_window_is_the_buffer_size():
    text = _readme()
    window = re.findall(r"at most (\d+) KiB of identical buffered output per\s+"
                        r"thread", text)
    rest = re.findall(r"the rest of one (\d+) KiB buffer", text)
    assert window and rest, "README no longer states the VM-clone window"
    for kib in window + rest:
        assert int(kib) * 1024 == BUFFER_BYTES, (kib, BUFFER_BYTES)


def test_readme_fill_in_flight_window_is_the_chunk_size():
    """"one 64 KiB chunk", "one chunk (64 KiB)": the direct-fill chunk."""
    text = _readme()
    chunks = (re.findall(r"(\d+) KiB chunk", text)
              + re.findall(r"chunk \((\d+) KiB\)", text))
    assert len(chunks) >= 3, "README no longer states the fill-in-flight window"
    for kib in chunks:
        assert int(kib) * 1024 == DIRECT_CHUNK_BYTES, (kib, DIRECT_CHUNK_BYTES)


@pytest.mark.skipif(not LINUX, reason="/proc/self/smaps is Linux-only")
def test_readme_state_size_is_what_a_thread_maps():
    claimed = re.findall(r"pages \((\d+) KiB; `mmap`", _readme())
    assert claimed, "README no longer states the state's size"
    code = textwrap.dedent("""
        import threading, arc4py

        def wf_kib():
            total, size = 0, 0
            for line in open("/proc/self/smaps"):
                if line.startswith("Size:"):
                    size = int(line.split()[1])
                elif line.startswith("VmFlags:") and " wf" in line:
                    total += size
            return total

        arc4py.arc4random()
        before = wf_kib()
        box = {}
        def worker():
            arc4py.arc4random()
            box["during"] = wf_kib()
        t = threading.Thread(target=worker); t.start(); t.join()
        vdso = "vdso" in arc4py.fork_protection()
        print(box["during"] - before, int(vdso))
    """)
    out = run_child(code, timeout=60)
    assert out.returncode == 0, out.stderr
    grew, vdso = map(int, out.stdout.split())
    if grew == 0:
        pytest.skip("no MADV_WIPEONFORK here: state pages are not flagged")
    # The new thread's state, plus its 4 KiB vDSO getrandom state if any.
    assert grew - 4 * vdso == int(claimed[0]), (grew, vdso, claimed)
