"""Every ChaCha20 core against RFC 8439 and an independent implementation.

The fixture runs each test once per core this CPU can run; a core it cannot
run is reported as skipped with the reason.  OpenSSL's ChaCha20 (through the
``cryptography`` package) is the independent implementation: it takes a
16-byte nonce whose first 8 bytes are the little-endian 64-bit counter, the
original layout that arc4py's 8-byte nonce selects.
"""
import os
import platform
import random
import struct
import subprocess
import sysconfig

import pytest

import arc4py
import helpers
from arc4py import _core
from helpers import (
    RFC_VECTORS,
    build_program,
    compile_c,
    core_skip_reason,
    core_table_features,
    core_table_names,
    run_child,
    try_compile,
)

cryptography = pytest.importorskip(
    "cryptography", reason="the cryptography package is the independent "
    "ChaCha20 implementation these tests compare against")
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms  # noqa: E402

CSRC = str(helpers.CSRC)


# Every core there is; this build knows those it did not leave out, and
# this CPU runs some of those.
CONTRACT = core_table_names()
KNOWN = _core.ALL_BACKENDS
RUNNABLE = arc4py.backends()

INCLUDE = str(helpers.INCLUDE)


def core_params():
    for name in CONTRACT:
        reason = core_skip_reason(name)
        yield pytest.param(name, id=name, marks=() if reason is None else
                           pytest.mark.skip(reason=reason))


@pytest.fixture(params=list(core_params()))
def core(request):
    return request.param


def openssl_keystream(key, nonce8, length, counter=0):
    """ChaCha20 keystream from OpenSSL, 64-bit counter layout.

    Recent releases of ``cryptography`` refuse a stream whose low counter
    word would wrap, so a stream that crosses a multiple of 2**32 is asked
    for in two parts, each starting at its own counter: OpenSSL still
    computes every block, and the carry into word 13 is ours to get right.
    """
    out = []
    while length > 0:
        to_wrap = 2**32 - (counter & 0xFFFFFFFF)  # blocks before the low word wraps
        part = min(length, to_wrap * 64)
        full = struct.pack("<Q", counter % 2**64) + nonce8
        out.append(Cipher(algorithms.ChaCha20(key, full), None).encryptor()
                   .update(bytes(part)))
        counter += to_wrap
        length -= part
    return b"".join(out)


# Lengths around every stride: single blocks, 4 (SSE), 8 (AVX2), 16 (AVX-512).
BOUNDARY_LENGTHS = sorted({0, 1, 2, 31, 32, 63, 64, 65, 127, 128, 129, 191, 192,
                           193, 4 * 64 - 1, 4 * 64, 4 * 64 + 1, 8 * 64 - 1,
                           8 * 64, 8 * 64 + 1, 12 * 64 + 5, 16 * 64 - 1, 16 * 64,
                           16 * 64 + 1, 24 * 64 + 63, 32 * 64 + 1, 4096 + 7})
MIB = 1 << 20


# ---- RFC 8439 vectors (tests/data/rfc8439_vectors.json) --------------------

@pytest.mark.parametrize("vector", RFC_VECTORS, ids=[v["name"] for v in RFC_VECTORS])
def test_rfc8439_vectors(core, vector):
    want = bytes.fromhex(vector["keystream"])
    got = arc4py.chacha20_keystream(bytes.fromhex(vector["key"]),
                                    bytes.fromhex(vector["nonce"]), len(want),
                                    counter=vector["counter"], backend=core)
    assert got == want


def test_rfc8439_vectors_file_is_whole():
    """The data file holds 2.3.2, 2.4.2 and the five A.1 vectors."""
    assert len(RFC_VECTORS) == 7
    for v in RFC_VECTORS:
        assert len(bytes.fromhex(v["key"])) == 32
        assert len(bytes.fromhex(v["nonce"])) == 12
        assert len(bytes.fromhex(v["keystream"])) in (64, 114)


# ---- guard bytes and misaligned output ---------------------------------------

@pytest.mark.parametrize("offset", [1, 3, 7, 13, 31, 33, 63])
def test_misaligned_output_with_guards(core, offset):
    """Output at odd addresses: the keystream is right and not one byte
    around it changes, for every tail width of every core."""
    key, nonce = os.urandom(32), os.urandom(8)
    ref = arc4py.chacha20_keystream(key, nonce, 40 * 64, counter=5,
                                    backend="generic")
    for nblocks in list(range(0, 20)) + [31, 32, 33, 40]:
        length = nblocks * 64 - (nblocks % 3)  # whole blocks and short tails
        length = max(length, 0)
        buf = bytearray(b"\xa5" * (64 + offset + length + 64))
        view = memoryview(buf)[64 + offset:64 + offset + length]
        arc4py.chacha20_keystream_into(key, nonce, view, counter=5, backend=core)
        assert bytes(view) == ref[:length], f"nblocks={nblocks}"
        assert buf[:64 + offset] == b"\xa5" * (64 + offset), "wrote before"
        assert buf[64 + offset + length:] == b"\xa5" * 64, "wrote after"


# ---- the C sources ---------------------------------------------------------

@pytest.mark.slow
def test_c_sources_compile_clean(cc):
    """Every C file of the package (cores, dispatch, generator, and the
    binding layer's C) compiles clean with -Wall -Wextra -Werror, also with
    the test hooks and with -DARC4PY_NO_<ISA> switches (which drop rows of
    the table of cores)."""
    cbind = os.path.join(os.path.dirname(CSRC), "cbind")
    sources = sorted(os.path.join(d, f) for d in (CSRC, cbind)
                     for f in os.listdir(d) if f.endswith(".c"))
    names = {os.path.basename(f) for f in sources}
    assert {"chacha20_dispatch.c", "chacha20_neon.c", "rng_keystream.c", "capi.c"} <= names
    includes = ["-I" + INCLUDE, "-I" + CSRC, "-I" + cbind,
                "-I" + sysconfig.get_paths()["include"]]
    for extra in ([], ["-DARC4PY_NO_AVX512", "-DARC4PY_NO_NEON"],
                  ["-DARC4PY_TEST_HOOKS=1"]):
        for src in sources:
            compile_c(cc, "-O2", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                      *includes, *extra, src)


LIST_CORES = r"""
#include <stdio.h>
#include "chacha20.h"
int main(void)
{
    size_t i, n;
    const arc4py_chacha20_core *cores = arc4py_chacha20_cores(&n);

    for (i = 0; arc4py_chacha20_known_name(i) != NULL; i++)
        printf("%s%s", i ? " " : "known: ", arc4py_chacha20_known_name(i));
    for (i = 0; i < n; i++)
        printf("%s%s", i ? " " : "\nrunnable: ", cores[i].name);
    printf("\nactive: %s\n", arc4py_chacha20_active()->name);
    return 0;
}
"""


@pytest.mark.slow
@pytest.mark.parametrize("left_out", [(), ("avx512",), ("avx512", "avx2"),
                                      ("neon", "sse2")])
def test_left_out_cores_leave_the_table(cc, tmp_path, left_out):
    """The dispatch built from every core file, with ARC4PY_NO_<ISA> for
    some: those names are unknown, every other row of chacha20_cores.def is
    known (this architecture's first), and the active core is the fastest
    runnable."""
    src = tmp_path / "list_cores.c"
    src.write_text(LIST_CORES)
    exe = tmp_path / "list_cores"
    sources = [str(src)] + sorted(
        os.path.join(CSRC, f) for f in os.listdir(CSRC)
        if f.startswith("chacha20_") and f.endswith(".c"))
    build_program(cc, sources, exe, "-O1",
                  *[f"-DARC4PY_NO_{isa.upper()}" for isa in left_out])
    out = dict(line.split(": ", 1) for line in subprocess.run(
        [str(exe)], capture_output=True, text=True, check=True).stdout.split("\n")
        if line)
    known, runnable = out["known"].split(), out["runnable"].split()
    assert sorted(known) == sorted(n for n in CONTRACT if n not in left_out)
    assert known == [n for n in KNOWN if n not in left_out]
    assert runnable == [n for n in RUNNABLE if n not in left_out]
    assert out["active"] == runnable[0]


def test_avx512_cannot_be_built_without_avx2(cc, tmp_path):
    """Its tails run on the avx2 core: a build keeping one, not the other,
    stops at compile time (setup.py leaves out both together)."""
    with open(os.path.join(CSRC, "chacha20_avx512.c")) as f:
        done = try_compile(cc, f.read(), "-I" + INCLUDE, "-I" + CSRC,
                           "-DARC4PY_NO_AVX2")
    assert done.returncode != 0
    assert "keep both or neither" in done.stderr


# ---- against the generic core and OpenSSL ----------------------------------

@pytest.mark.parametrize("length", BOUNDARY_LENGTHS)
def test_every_boundary_length(core, length):
    key, nonce = os.urandom(32), os.urandom(8)
    counter = random.getrandbits(40)
    got = arc4py.chacha20_keystream(key, nonce, length, counter=counter, backend=core)
    assert got == openssl_keystream(key, nonce, length, counter)
    assert got == arc4py.chacha20_keystream(key, nonce, length, counter=counter,
                                            backend="generic")


def test_one_mebibyte(core):
    key, nonce = os.urandom(32), os.urandom(8)
    assert (arc4py.chacha20_keystream(key, nonce, MIB, backend=core)
            == openssl_keystream(key, nonce, MIB))


def test_random_lengths_and_counters(core):
    rng = random.Random(8439)
    for _ in range(60):
        key, nonce = rng.randbytes(32), rng.randbytes(8)
        length = rng.randrange(0, 5000)
        counter = rng.getrandbits(rng.choice((8, 32, 63)))
        assert (arc4py.chacha20_keystream(key, nonce, length, counter=counter,
                                          backend=core)
                == openssl_keystream(key, nonce, length, counter))


@pytest.mark.parametrize("below", [1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 33])
def test_counter_carry_into_word_13(core, below):
    """Streams that start just below 2**32 cross into the high counter word,
    in every lane of every stride width."""
    key, nonce = os.urandom(32), os.urandom(8)
    counter = 2**32 - below
    length = 40 * 64 + 17
    got = arc4py.chacha20_keystream(key, nonce, length, counter=counter, backend=core)
    assert got == openssl_keystream(key, nonce, length, counter)


def test_offset_slices_agree(core):
    """Block i of a long stream equals a stream started at counter i."""
    key, nonce = os.urandom(32), os.urandom(8)
    whole = arc4py.chacha20_keystream(key, nonce, 64 * 50, counter=2**32 - 20,
                                      backend=core)
    for i in (0, 1, 5, 19, 20, 21, 37):
        part = arc4py.chacha20_keystream(key, nonce, 64 * 3,
                                         counter=2**32 - 20 + i, backend=core)
        assert whole[64 * i:64 * (i + 3)] == part[:len(whole[64 * i:64 * (i + 3)])]


def test_rfc_layout_matches_openssl(core):
    """12-byte nonce: OpenSSL's 16-byte nonce is counter(4) || nonce(12)."""
    key, nonce = os.urandom(32), os.urandom(12)
    for counter, length in ((0, 1000), (7, 64 * 17 + 3), (2**32 - 17, 64 * 17)):
        full = struct.pack("<I", counter) + nonce
        ref = Cipher(algorithms.ChaCha20(key, full), None).encryptor().update(bytes(length))
        assert arc4py.chacha20_keystream(key, nonce, length, counter=counter,
                                         backend=core) == ref


def test_rfc_layout_refuses_to_pass_last_block(core):
    key, nonce = os.urandom(32), os.urandom(12)
    last = arc4py.chacha20_keystream(key, nonce, 64, counter=2**32 - 1, backend=core)
    assert len(last) == 64
    with pytest.raises(ValueError):
        arc4py.chacha20_keystream(key, nonce, 65, counter=2**32 - 1, backend=core)
    with pytest.raises(ValueError):
        arc4py.chacha20_keystream(key, nonce, 64 * 17, counter=2**32 - 16, backend=core)
    with pytest.raises(ValueError):
        arc4py.chacha20_keystream(key, nonce, 1, counter=2**32, backend=core)


def test_keystream_into_matches(core):
    key, nonce = os.urandom(32), os.urandom(8)
    buf = bytearray(3000)
    assert arc4py.chacha20_keystream_into(key, nonce, buf, counter=9, backend=core) == 3000
    assert bytes(buf) == openssl_keystream(key, nonce, 3000, 9)


# ---- the API around the cores -----------------------------------------------

def test_backends_fastest_first_generic_last():
    names = arc4py.backends()
    assert names[-1] == "generic"
    assert set(names) <= set(KNOWN) <= set(CONTRACT)
    assert list(names) == [n for n in KNOWN if n in names]
    assert arc4py.backend() in names


def test_known_names_come_from_the_c_table():
    """ALL_BACKENDS is the C table: every core whose source this build has.
    The x86 cores are in every build, and neon too (known, runnable only
    on aarch64); each architecture runs its own."""
    assert KNOWN[-1] == "generic"
    assert len(set(KNOWN)) == len(KNOWN)
    for name in ("avx2", "ssse3", "sse2", "neon"):
        assert name in KNOWN
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        assert "neon" not in RUNNABLE
        assert "sse2" in RUNNABLE  # baseline on x86-64
    elif machine in ("aarch64", "arm64"):
        assert RUNNABLE[0] == "neon"
        assert not set(RUNNABLE) & {"avx512", "avx2", "ssse3", "sse2"}


# /proc/cpuinfo's flag for each feature the dispatch reads: Linux lists
# avx (and avx512f) only where it saves that register state.
CPUINFO_FLAGS = {"sse2": "sse2", "ssse3": "ssse3", "avx2": "avx2",
                 "avx512f": "avx512f", "avx512vl": "avx512vl", "os-ymm": "avx",
                 "os-zmm": "avx512f", "neon": "asimd"}


def cpu_features_from_the_os():
    """The features of CPUINFO_FLAGS this CPU and OS offer this process's
    architecture, read apart from the dispatch where the OS says (Linux),
    else the dispatch's.  (Under qemu-user, /proc/cpuinfo is the host's:
    an x86-64 host's flags say nothing of what an aarch64 process runs.)"""
    try:
        with open("/proc/cpuinfo") as f:
            flags = {w for line in f if line.split(":")[0].strip() in ("flags", "Features")
                     for w in line.split(":", 1)[1].split()}
    except OSError:
        return set(arc4py.cpu_features())
    machine = platform.machine().lower()
    mine = ({"neon"} if machine in ("aarch64", "arm64")
            else set(CPUINFO_FLAGS) - {"neon"} if machine in ("x86_64", "amd64")
            else set())
    return {feature for feature, flag in CPUINFO_FLAGS.items()
            if flag in flags and feature in mine}


def test_every_core_this_cpu_runs_is_built_or_left_out_by_name():
    """A build that lacks a core this CPU runs, unless it was left out by
    name (ARC4PY_NO_<ISA>, recorded in _core._not_built, which `arc4py
    info` reports), fails here: a compiler that compiled a core's file to
    nothing is caught on the binary."""
    have = cpu_features_from_the_os()
    for name, needs in core_table_features().items():
        if not needs <= have:
            continue
        why = _core._not_built.get(name, "")
        assert name in RUNNABLE or "left out by name" in why, (
            f"this CPU runs the {name} core ({' '.join(sorted(needs))}) and this "
            f"build has it neither runnable ({', '.join(RUNNABLE)}) nor left out "
            f"by name (not built: {_core._not_built})")


def test_the_build_names_what_it_left_out():
    """Each core left out is one of the table's, and no longer known;
    a wheel leaves none out."""
    for name, why in _core._not_built.items():
        assert name in CONTRACT and name not in KNOWN
        assert why.startswith(f"left out by name (ARC4PY_NO_{name.upper()})")
    assert set(KNOWN) | set(_core._not_built) == set(CONTRACT)


@pytest.mark.parametrize("name", ["neon", "avx512", "mmx"])
def test_forcing_a_core_this_cpu_cannot_run_fails_at_import(name):
    if name in RUNNABLE:
        pytest.skip(f"this CPU runs {name}")
    run = run_child("import arc4py", timeout=60, ARC4PY_BACKEND=name)
    assert run.returncode != 0
    assert "ValueError" in run.stderr
    assert "generic" in run.stderr  # names the valid ones


@pytest.mark.parametrize("name", ["generic", "sse2", "ssse3", "avx2", "avx512"])
def test_forcing_a_core_this_cpu_runs_at_import(tmp_path, name):
    if name not in RUNNABLE:
        pytest.skip(f"this CPU cannot run the {name} core")
    proc = run_child("import arc4py; print(arc4py.backend()); "
                     "print(len(arc4py.arc4random_buf(5000)))",
                     cwd=tmp_path, ARC4PY_BACKEND=name)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [name, "5000"]


def test_rfc_layout_length_checked_before_allocating():
    """A stream the 32-bit counter cannot cover is a ValueError, even when
    it is far too long to allocate."""
    with pytest.raises(ValueError, match="2\\*\\*32 - 1"):
        arc4py.chacha20_keystream(bytes(32), bytes(12), 2**38, counter=1)
    with pytest.raises(ValueError):
        arc4py.chacha20_keystream(bytes(32), bytes(12), 2**62)
    with pytest.raises(ValueError):
        arc4py.chacha20_keystream(bytes(32), bytes(8), 2**72)


def test_default_backend_is_generators():
    key, nonce = os.urandom(32), os.urandom(8)
    assert (arc4py.chacha20_keystream(key, nonce, 999)
            == arc4py.chacha20_keystream(key, nonce, 999, backend=arc4py.backend()))


def test_unknown_and_unrunnable_backends():
    with pytest.raises(ValueError, match="available here") as info:
        arc4py.chacha20_keystream(bytes(32), bytes(8), 64, backend="mmx")
    for name in arc4py.backends():
        assert name in str(info.value)
    for name in CONTRACT:
        if name not in KNOWN:
            with pytest.raises(ValueError, match="unknown backend"):
                arc4py.chacha20_keystream(bytes(32), bytes(8), 64, backend=name)
        elif name not in arc4py.backends():
            with pytest.raises(ValueError, match="cannot run") as info:
                arc4py.chacha20_keystream(bytes(32), bytes(8), 64, backend=name)
            assert "generic" in str(info.value)
    for name in (3, b"generic"):
        with pytest.raises(TypeError):
            arc4py.chacha20_keystream(bytes(32), bytes(8), 64, backend=name)


@pytest.mark.parametrize("spelling", [str.upper, str.title])
def test_forcing_a_core_takes_its_name_in_any_case(tmp_path, spelling):
    name = RUNNABLE[0]
    proc = run_child("import arc4py; print(arc4py.backend())",
                     cwd=tmp_path, ARC4PY_BACKEND=spelling(name))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [name]  # the canonical, lowercase name
