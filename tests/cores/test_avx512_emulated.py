"""The AVX-512 core, checked on any CPU through SIMDe's emulation.

Most machines that run these tests (CI runners, the developers' own) cannot
run AVX-512, so test_cores.py skips that core there.  This file compiles
chacha20_avx512.c with ARC4PY_EMULATE_AVX512, which takes the very same
intrinsics from SIMDe's portable implementations, together with the generic
core and the real AVX2 core (the AVX-512 core hands it its tails of up to 8
blocks) into a throwaway shared library, and compares the two at every
stride boundary and across both counter carries.  Skipped, with the reason,
when there is no C compiler, no SIMDe (Debian/Ubuntu: libsimde-dev), or the
CPU is not an x86-64 with AVX2.
"""
import ctypes
import os
import platform
import random

import pytest

import arc4py
import helpers
from helpers import RFC_VECTORS, build_shared, try_compile

# Builds the avx512 core under SIMDe's emulation.
pytestmark = pytest.mark.slow

CSRC = str(helpers.CSRC)
INCLUDE = str(helpers.INCLUDE)

# Every length up to three 16-block strides, then a few larger ones.
LENGTHS = list(range(49)) + [64, 100, 1000]

_rng = random.Random(8439)
COUNTERS = (
    [pytest.param(0, id="ctr=0"),
     pytest.param(_rng.getrandbits(64), id="ctr=random")]
    # Word 12 wraps into word 13 inside a stride or a tail.
    + [pytest.param(0xFFFFFFFF - k, id=f"ctr=2**32-1-{k}") for k in range(18)]
    # The whole 64-bit counter wraps to 0 (as the generic core does).
    + [pytest.param(0xFFFFFFFFFFFFFFFF - k, id=f"ctr=2**64-1-{k}")
       for k in range(18)]
)


@pytest.fixture(scope="module")
def lib(request, tmp_path_factory):
    """The emulated avx512 core and the generic core, built with cc."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("the avx512 core is x86-64 only")
    if "avx2" not in arc4py.backends():
        pytest.skip("this CPU cannot run the avx2 core, which runs the "
                    "emulated avx512 core's tails")
    # Asked for only now: where the core cannot run, the skip says so, not
    # that a compiler is missing.
    cc = request.getfixturevalue("cc")
    tmp = tmp_path_factory.mktemp("avx512_emulated")
    if try_compile(cc, "#include <simde/x86/avx512.h>\n").returncode != 0:
        pytest.skip("SIMDe headers missing: cc cannot include "
                    "<simde/x86/avx512.h> (install libsimde-dev)")

    path = build_shared(
        cc, [os.path.join(CSRC, "chacha20_avx512.c"),
             os.path.join(CSRC, "chacha20_avx2.c"),
             os.path.join(CSRC, "chacha20_generic.c")],
        tmp / "libchacha20_avx512_emulated.so",
        "-O1", "-DARC4PY_EMULATE_AVX512", "-I" + INCLUDE, "-I" + CSRC)

    dll = ctypes.CDLL(path)
    for name in ("arc4py_chacha20_blocks_avx512",
                 "arc4py_chacha20_blocks_generic"):
        fn = getattr(dll, name)
        fn.argtypes = [ctypes.POINTER(ctypes.c_uint32), ctypes.c_void_p,
                       ctypes.c_size_t]
        fn.restype = None
    dll.arc4py_chacha20_init.argtypes = [
        ctypes.POINTER(ctypes.c_uint32), ctypes.c_char_p, ctypes.c_char_p,
        ctypes.c_size_t, ctypes.c_uint64]
    dll.arc4py_chacha20_init.restype = ctypes.c_int
    return dll


def make_state(lib, key, nonce, counter):
    state = (ctypes.c_uint32 * 16)()
    assert lib.arc4py_chacha20_init(state, key, nonce, len(nonce), counter) == 0
    return list(state)


def run(fn, state, nblocks, offset):
    """Call a core on a copy of state; return (buffer bytes, state after).

    The output starts offset bytes into a buffer filled with a pattern and
    one spare block long, so comparing whole buffers also catches a stray
    write before or after the keystream.
    """
    words = (ctypes.c_uint32 * 16)(*state)
    buf = ctypes.create_string_buffer(b"\xa5" * (offset + nblocks * 64 + 64))
    fn(words, ctypes.addressof(buf) + offset, nblocks)
    return buf.raw, list(words)


@pytest.mark.parametrize("counter", COUNTERS)
def test_matches_generic(lib, counter):
    rng = random.Random(counter)
    key = bytes(rng.getrandbits(8) for _ in range(32))
    nonce = bytes(rng.getrandbits(8) for _ in range(8))
    state = make_state(lib, key, nonce, counter)
    for nblocks in LENGTHS:
        offset = (nblocks * 13) % 64  # unaligned output most of the time
        want = run(lib.arc4py_chacha20_blocks_generic, state, nblocks, offset)
        got = run(lib.arc4py_chacha20_blocks_avx512, state, nblocks, offset)
        assert got[0] == want[0], f"keystream differs, nblocks={nblocks}"
        assert got[1] == want[1], f"state after differs, nblocks={nblocks}"
        # The block counter advanced by nblocks, carrying into word 13.
        after = (counter + nblocks) % 2**64
        assert got[1][12] == after & 0xFFFFFFFF
        assert got[1][13] == after >> 32


@pytest.mark.parametrize("vector", RFC_VECTORS, ids=[v["name"] for v in RFC_VECTORS])
def test_rfc8439_vectors(lib, vector):
    """tests/data/rfc8439_vectors.json, output at an odd address."""
    want = bytes.fromhex(vector["keystream"])
    state = make_state(lib, bytes.fromhex(vector["key"]),
                       bytes.fromhex(vector["nonce"]), vector["counter"])
    nblocks = (len(want) + 63) // 64
    out, after = run(lib.arc4py_chacha20_blocks_avx512, state, nblocks, 1)
    assert out[1:1 + len(want)] == want
    assert after[12] == state[12] + nblocks
    assert after[13:] == state[13:]
