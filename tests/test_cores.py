"""Every ChaCha20 core against RFC 8439 and an independent implementation.

The fixture runs each test once per core this CPU can run; a core it cannot
run is reported as skipped with the reason.  OpenSSL's ChaCha20 (through the
``cryptography`` package) is the independent implementation: it takes a
16-byte nonce whose first 8 bytes are the little-endian 64-bit counter, the
original layout that arc4py's 8-byte nonce selects.
"""
import os
import random
import struct

import pytest

import arc4py

cryptography = pytest.importorskip(
    "cryptography", reason="the cryptography package is the independent "
    "ChaCha20 implementation these tests compare against")
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms  # noqa: E402

KNOWN = ("avx512", "avx2", "ssse3", "sse2", "neon", "generic")
RUNNABLE = arc4py.backends()


def core_params():
    for name in KNOWN:
        if name in RUNNABLE:
            yield pytest.param(name, id=name)
        else:
            yield pytest.param(name, id=name, marks=pytest.mark.skip(
                reason=f"this CPU cannot run the {name} core "
                       f"(runnable here: {', '.join(RUNNABLE)})"))


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


# ---- RFC 8439 vectors -------------------------------------------------------

RFC_KEY = bytes(range(32))


def test_rfc8439_2_3_2_block(core):
    """Section 2.3.2: the block function's serialised output."""
    nonce = bytes.fromhex("000000090000004a00000000")
    expected = bytes.fromhex(
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
        "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e")
    assert arc4py.chacha20_keystream(RFC_KEY, nonce, 64, counter=1,
                                     backend=core) == expected


def test_rfc8439_2_4_2_keystream(core):
    """Section 2.4.2: the keystream that encrypts the 114-byte sunscreen text."""
    nonce = bytes.fromhex("000000000000004a00000000")
    plaintext = (b"Ladies and Gentlemen of the class of '99: If I could offer "
                 b"you only one tip for the future, sunscreen would be it.")
    ciphertext = bytes.fromhex(
        "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
        "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
        "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
        "5af90bbf74a35be6b40b8eedf2785e42874d")
    ks = arc4py.chacha20_keystream(RFC_KEY, nonce, len(plaintext), counter=1,
                                   backend=core)
    assert bytes(p ^ k for p, k in zip(plaintext, ks)) == ciphertext


@pytest.mark.parametrize("key, counter, nonce, expected", [
    # A.1 test vectors 1, 2, 3 and 5 (vector 4 uses counter 2 with key byte 1).
    (bytes(32), 0, bytes(12),
     "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
     "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"),
    (bytes(32), 1, bytes(12),
     "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed"
     "29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f"),
    (bytes(31) + b"\x01", 1, bytes(12),
     "3aeb5224ecf849929b9d828db1ced4dd832025e8018b8160b82284f3c949aa5a"
     "8eca00bbb4a73bdad192b5c42f73f2fd4e273644c8b36125a64addeb006c13a0"),
    (b"\x00\xff" + bytes(30), 2, bytes(12),
     "72d54dfbf12ec44b362692df94137f328fea8da73990265ec1bbbea1ae9af0ca"
     "13b25aa26cb4a648cb9b9d1be65b2c0924a66c54d545ec1b7374f4872e99f096"),
    (bytes(32), 0, bytes(11) + b"\x02",
     "c2c64d378cd536374ae204b9ef933fcd1a8b2288b3dfa49672ab765b54ee27c7"
     "8a970e0e955c14f3a88e741b97c286f75f8fc299e8148362fa198a39531bed6d"),
])
def test_rfc8439_appendix_a1(core, key, counter, nonce, expected):
    assert arc4py.chacha20_keystream(key, nonce, 64, counter=counter,
                                     backend=core) == bytes.fromhex(expected)


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
    assert set(names) <= set(KNOWN)
    assert list(names) == [n for n in KNOWN if n in names]
    assert arc4py.backend() in names


def test_default_backend_is_generators():
    key, nonce = os.urandom(32), os.urandom(8)
    assert (arc4py.chacha20_keystream(key, nonce, 999)
            == arc4py.chacha20_keystream(key, nonce, 999, backend=arc4py.backend()))


def test_unknown_and_unrunnable_backends():
    with pytest.raises(ValueError, match="available here"):
        arc4py.chacha20_keystream(bytes(32), bytes(8), 64, backend="mmx")
    for name in KNOWN:
        if name not in arc4py.backends():
            with pytest.raises(ValueError, match="cannot run"):
                arc4py.chacha20_keystream(bytes(32), bytes(8), 64, backend=name)
    with pytest.raises(TypeError):
        arc4py.chacha20_keystream(bytes(32), bytes(8), 64, backend=3)


@pytest.mark.parametrize("key, nonce, exc", [
    (bytes(31), bytes(8), ValueError),
    (bytes(33), bytes(8), ValueError),
    (bytes(32), bytes(7), ValueError),
    (bytes(32), bytes(16), ValueError),
    ("k" * 32, bytes(8), TypeError),
    (bytes(32), "n" * 8, TypeError),
    (None, bytes(8), TypeError),
    (12345, bytes(8), TypeError),
])
def test_bad_key_and_nonce(key, nonce, exc):
    with pytest.raises(exc):
        arc4py.chacha20_keystream(key, nonce, 64)


def test_bad_length_and_counter():
    with pytest.raises(ValueError):
        arc4py.chacha20_keystream(bytes(32), bytes(8), -1)
    with pytest.raises(TypeError):
        arc4py.chacha20_keystream(bytes(32), bytes(8), 1.5)
    with pytest.raises(ValueError):
        arc4py.chacha20_keystream(bytes(32), bytes(8), 64, counter=-1)
    with pytest.raises(ValueError):
        arc4py.chacha20_keystream(bytes(32), bytes(8), 128, counter=2**64 - 1)
    assert len(arc4py.chacha20_keystream(bytes(32), bytes(8), 64, counter=2**64 - 1)) == 64


def test_key_and_nonce_accept_any_bytes_like():
    key, nonce = os.urandom(32), os.urandom(8)
    ref = arc4py.chacha20_keystream(key, nonce, 100)
    assert arc4py.chacha20_keystream(bytearray(key), memoryview(nonce), 100) == ref
