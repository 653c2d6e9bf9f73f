"""The kernel's vDSO getrandom mixed into every refill.

Whether this kernel's vDSO exports ``__vdso_getrandom`` is checked
independently of arc4py (helpers.kernel_has_vdso_getrandom).  The C
generator's calls to it, once per refill and per direct-fill chunk:
tests/c/vdso_mix.c (tests/c/test_c_programs.py).
"""
import os
import sys
import threading

import pytest

import arc4py
from helpers import kernel_has_vdso_getrandom, last_json, run_child

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the vDSO getrandom is Linux's")


@linux_only
def test_vdso_reported_iff_the_kernel_exports_it():
    has = kernel_has_vdso_getrandom()
    assert ("vdso" in arc4py.fork_protection()) == has, (
        f"kernel {os.uname().release}: __vdso_getrandom "
        f"{'present' if has else 'absent'}, fork_protection() = "
        f"{arc4py.fork_protection()}")


@linux_only
def test_vdso_in_every_thread_and_after_fork():
    if not kernel_has_vdso_getrandom():
        pytest.skip(f"kernel {os.uname().release} has no vDSO getrandom "
                    "(Linux >= 6.11)")
    box = {}

    def worker():
        box["draws"] = {arc4py.arc4random_buf(16) for _ in range(300)}
        box["fp"] = arc4py.fork_protection()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert "vdso" in box["fp"] and len(box["draws"]) == 300
    code = """
import json, os, arc4py
arc4py.arc4random_buf(5000)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.write(w, json.dumps([arc4py.arc4random_buf(32).hex(),
                            list(arc4py.fork_protection())]).encode())
    os._exit(0)
os.waitpid(pid, 0)
child = json.loads(os.read(r, 65536))
print(json.dumps({"parent": arc4py.arc4random_buf(32).hex(), "child": child}))
"""
    # (a child interpreter that imports this same arc4py, never a source tree)
    res = last_json(run_child(code, timeout=60))
    assert res["parent"] != res["child"][0]
    assert "vdso" in res["child"][1]
