"""The kernel's vDSO getrandom mixed into every refill.

Whether this kernel's vDSO exports ``__vdso_getrandom`` is checked here
independently of arc4py: the vDSO image is read from this process's memory
(its range from /proc/self/maps) and its dynamic string table searched.
"""
import ctypes
import os
import subprocess
import sys
import threading

import pytest

import arc4py
from helpers import REPO, TESTS_DIR, build_generator_program, last_json, run_child

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the vDSO getrandom is Linux's")


def vdso_image():
    """The bytes of this process's vDSO, or None where there is none."""
    with open("/proc/self/maps") as f:
        for line in f:
            if line.rstrip().endswith("[vdso]"):
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                return ctypes.string_at(lo, hi - lo)
    return None


def kernel_has_vdso_getrandom():
    image = vdso_image()
    return image is not None and image[:4] == b"\x7fELF" and (
        b"\0__vdso_getrandom\0" in image)


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



@pytest.mark.slow
@linux_only
def test_vdso_called_once_per_refill_and_per_chunk(cc, tmp_path):
    """tests/c/vdso_mix.c, built from the sources with the test hooks:
    counts vDSO getrandom calls over 10 refills and a 3 MiB direct fill, and
    checks the buffer after each refill."""
    if not (REPO / "arc4py" / "csrc").is_dir():
        pytest.skip("arc4py's C sources are not next to the tests")
    exe = build_generator_program(cc, TESTS_DIR / "c" / "vdso_mix.c",
                                  tmp_path / "vdso_mix", "-DARC4PY_TEST_HOOKS=1")
    proc = subprocess.run([str(exe)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    vdso = proc.stdout.split("vdso=")[1].strip() == "1"
    assert vdso == kernel_has_vdso_getrandom(), proc.stdout
