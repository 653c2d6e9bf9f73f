"""The NEON core and the whole C generator on aarch64, under emulation.

This machine is usually x86-64, so the aarch64 code is cross-built with
Debian's ``gcc-aarch64-linux-gnu`` (with ``libc6-dev-arm64-cross``) and run
under ``qemu-user-static`` (.ci/run installs all three).  On an aarch64
host the same programs are built with ``cc`` and run directly.

1. tests/c/core_check.c with every chacha20_*.c source: the neon core
   against the generic core and tests/data/rfc8439_vectors.json for every
   block count 0..300 at odd addresses between guard bytes, across the
   32-bit and 64-bit counter carries, and its vector registers zero on
   return.
2. tests/c/generator_check.c with every arc4py/csrc/*.c source (each core
   file compiles to nothing where its ISA is foreign): the generator with
   the neon core forced, and by default, draws of every size, refills,
   reseed, large draws, uniform, stir, fork.
3. tests/c/core_spills.c for the neon core: no key word in its stack at
   timer signals inside its calls, nor after them.

Each program's verdict (tests/c/verdict.h) is read with helpers.c_verdict.

Skipped, saying why, when the cross compiler or qemu is missing.
"""
import glob
import os
import platform
import shutil
import subprocess

import pytest

import helpers
from helpers import RFC_VECTORS, build_program, c_verdict, find_cc, rfc_vector_lines

# Cross builds, run under qemu.
pytestmark = pytest.mark.slow

TESTS = str(helpers.TESTS_DIR)
CSRC = str(helpers.CSRC)
NATIVE = platform.machine().lower() in ("aarch64", "arm64")


@pytest.fixture(scope="module")
def toolchain(request):
    """(compiler, runner prefix) for aarch64 programs."""
    if NATIVE:
        return request.getfixturevalue("cc"), []
    cc = find_cc("aarch64-linux-gnu-gcc")
    if cc is None:
        pytest.skip("no aarch64 cross compiler: aarch64-linux-gnu-gcc is not "
                    "on PATH (apt-get install gcc-aarch64-linux-gnu "
                    "libc6-dev-arm64-cross)")
    qemu = shutil.which("qemu-aarch64-static") or shutil.which("qemu-aarch64")
    if qemu is None:
        pytest.skip("no aarch64 emulator: qemu-aarch64-static is not on PATH "
                    "(apt-get install qemu-user-static)")
    return cc, [qemu]


def build(toolchain, tmp_path, main, sources):
    cc, _ = toolchain
    exe = tmp_path / os.path.splitext(os.path.basename(main))[0]
    # Static: the program runs under qemu without an aarch64 sysroot.
    flags = ["-O2", "-Wall", "-Wextra", "-Werror"]
    if not NATIVE:
        flags.insert(0, "-static")
    return build_program(cc, [main, *sources], exe, *flags)


def run(toolchain, exe, *args, stdin="", timeout=300):
    _, prefix = toolchain
    return subprocess.run(prefix + [str(exe), *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout)


def test_neon_core_matches_generic_and_rfc(toolchain, tmp_path):
    sources = sorted(glob.glob(os.path.join(CSRC, "chacha20_*.c")))
    exe = build(toolchain, tmp_path, os.path.join(TESTS, "c", "core_check.c"),
                sources)
    lines = rfc_vector_lines()
    for core in ("neon", "generic"):
        verdict = c_verdict(run(toolchain, exe, core, stdin=lines))
        assert verdict["verdict"] == "ok", verdict
        assert verdict["cores"] == core and verdict["vectors"] == len(RFC_VECTORS)


def test_x86_cores_are_known_but_not_runnable_on_aarch64(toolchain, tmp_path):
    sources = sorted(glob.glob(os.path.join(CSRC, "chacha20_*.c")))
    exe = build(toolchain, tmp_path, os.path.join(TESTS, "c", "core_check.c"),
                sources)
    verdict = c_verdict(run(toolchain, exe, "avx2", stdin=rfc_vector_lines()))
    assert verdict["verdict"] == "skip", verdict
    assert verdict["reason"] == "core avx2 is known but cannot run here"


def test_generator_on_aarch64_with_neon(toolchain, tmp_path):
    sources = sorted(glob.glob(os.path.join(CSRC, "*.c")))
    exe = build(toolchain, tmp_path, os.path.join(TESTS, "c", "generator_check.c"),
                sources)
    # Unforced, the generator takes neon: the first runnable in the table.
    for core in ("neon", "default"):
        verdict = c_verdict(run(toolchain, exe, core))
        assert verdict["verdict"] == "ok", verdict
        assert verdict["core"] == "neon", verdict


def test_neon_core_stack_holds_no_key(toolchain, tmp_path):
    """tests/c/core_spills.c for the neon core: its stack copied at timer
    signals inside its calls and after them holds no key, nonce, x20 or
    round word.  (qemu-user delivers a signal between translated blocks,
    so the copies fall at block boundaries.)"""
    sources = sorted(glob.glob(os.path.join(CSRC, "chacha20_*.c")))
    exe = build(toolchain, tmp_path, os.path.join(TESTS, "c", "core_spills.c"),
                sources)
    # 1,500 copies under emulation: minutes, longer on a busy machine.
    verdict = c_verdict(run(toolchain, exe, "neon", timeout=1200))
    assert verdict["verdict"] == "ok", verdict
    assert verdict["cores"] == 1 and verdict["copies"] == 1500, verdict
    assert verdict["call_core"] == 1, verdict  # the exact window, registers clear
