"""Every bad input of the draws and the keystream, with its exact error
type, and the good edge cases next to them.  fill()'s and
chacha20_keystream_into()'s buffers: test_fill_targets.py; the backend
argument and ARC4PY_BACKEND: tests/cores/test_cores.py."""
import pytest

import arc4py

KEY = bytes(range(32))
NONCE8 = bytes(8)
NONCE12 = bytes(12)


# ---- arc4random_buf ----------------------------------------------------------

@pytest.mark.parametrize("n", [1.5, "3", None, b"3", [3], 3.0])
def test_buf_wrong_type(n):
    with pytest.raises(TypeError):
        arc4py.arc4random_buf(n)


@pytest.mark.parametrize("n", [-1, -2**70])
def test_buf_negative(n):
    with pytest.raises(ValueError):
        arc4py.arc4random_buf(n)


@pytest.mark.parametrize("n", [2**62, 2**63 - 1, 2**63, 2**70])
def test_buf_impossible_size(n):
    with pytest.raises((MemoryError, OverflowError)) as exc:
        arc4py.arc4random_buf(n)
    if exc.type is MemoryError:  # says how much could not be had
        assert f"{n} bytes" in str(exc.value)


def test_buf_edge_sizes():
    assert arc4py.arc4random_buf(0) == b""
    assert len(arc4py.arc4random_buf(True)) == 1   # bool is an int
    direct = arc4py._core.DIRECT_BYTES  # from the C: where buffering ends
    buffer = arc4py._core.BUFFER_BYTES
    assert 0 < direct <= buffer
    for n in (1, 15, 16, 17, direct - 1, direct, direct + 1, buffer,
              buffer + 1, 100_000):
        b = arc4py.arc4random_buf(n)
        assert type(b) is bytes and len(b) == n


# ---- uniform, randbelow, randbits ------------------------------------------

@pytest.mark.parametrize("bound", [0, 2**32 + 1, -5, -1, 2**100])
def test_uniform_out_of_range(bound):
    with pytest.raises(ValueError):
        arc4py.arc4random_uniform(bound)


@pytest.mark.parametrize("bound", [1.5, "3", None, 3.0])
def test_uniform_wrong_type(bound):
    with pytest.raises(TypeError):
        arc4py.arc4random_uniform(bound)


@pytest.mark.parametrize("n", [0, -1, -2**80])
def test_randbelow_out_of_range(n):
    with pytest.raises(ValueError):
        arc4py.randbelow(n)


@pytest.mark.parametrize("n", [1.5, "3", None])
def test_randbelow_wrong_type(n):
    with pytest.raises(TypeError):
        arc4py.randbelow(n)


def test_randbits_bad():
    with pytest.raises(ValueError):
        arc4py.randbits(-1)
    with pytest.raises(TypeError):
        arc4py.randbits(1.5)
    with pytest.raises(TypeError):
        arc4py.randbits("8")


def test_randbits_good():
    assert arc4py.randbits(0) == 0
    for k in range(1, 201):
        values = [arc4py.randbits(k) for _ in range(64)]
        assert all(0 <= v < 2**k for v in values), k
        # The top bit is set in about half the draws: never in all 64 cases
        # missing (probability 2**-64).
        assert max(v.bit_length() for v in values) == k, k


def test_random_float_range():
    values = [arc4py.random() for _ in range(20_000)]
    assert all(type(v) is float and 0.0 <= v < 1.0 for v in values)
    assert min(values) < 0.01 and max(values) > 0.99
    # 53 random bits: every value is a multiple of 2**-53.
    assert all((v * 2**53).is_integer() for v in values[:1000])


def test_uniform_and_u32_good():
    assert arc4py.arc4random_uniform(1) == 0
    assert 0 <= arc4py.arc4random_uniform(2**32) < 2**32
    assert 0 <= arc4py.arc4random() < 2**32
    assert 0 <= arc4py.random_u32() < 2**32
    assert 0 <= arc4py.random_u64() < 2**64


# ---- chacha20_keystream --------------------------------------------------------

@pytest.mark.parametrize("key", [bytes(31), bytes(33), b"", bytes(16)])
def test_keystream_bad_key_length(key):
    with pytest.raises(ValueError):
        arc4py.chacha20_keystream(key, NONCE8, 64)


@pytest.mark.parametrize("nonce", [bytes(0), bytes(7), bytes(9), bytes(11),
                                   bytes(13), bytes(16)])
def test_keystream_bad_nonce_length(nonce):
    with pytest.raises(ValueError):
        arc4py.chacha20_keystream(KEY, nonce, 64)


@pytest.mark.parametrize("key", ["k" * 32, 5, None, 1.5])
def test_keystream_key_wrong_type(key):
    with pytest.raises(TypeError):
        arc4py.chacha20_keystream(key, NONCE8, 64)


def test_keystream_nonce_wrong_type():
    with pytest.raises(TypeError):
        arc4py.chacha20_keystream(KEY, "n" * 8, 64)
    with pytest.raises(TypeError):
        arc4py.chacha20_keystream(KEY, 8, 64)


def test_keystream_length_and_counter():
    with pytest.raises(ValueError):
        arc4py.chacha20_keystream(KEY, NONCE8, -1)
    with pytest.raises(TypeError):
        arc4py.chacha20_keystream(KEY, NONCE8, 1.5)
    with pytest.raises(ValueError):
        arc4py.chacha20_keystream(KEY, NONCE8, 64, counter=-1)
    assert arc4py.chacha20_keystream(KEY, NONCE8, 0) == b""
    # Key and nonce may be any bytes-like object.
    a = arc4py.chacha20_keystream(bytearray(KEY), memoryview(NONCE8), 100)
    assert a == arc4py.chacha20_keystream(KEY, NONCE8, 100)


def test_keystream_rfc_counter_overflow():
    last = 2**32 - 1
    with pytest.raises(ValueError):
        arc4py.chacha20_keystream(KEY, NONCE12, 65, counter=last)
    with pytest.raises(ValueError):
        arc4py.chacha20_keystream(KEY, NONCE12, 64, counter=2**32)
    assert len(arc4py.chacha20_keystream(KEY, NONCE12, 64, counter=last)) == 64
    assert len(arc4py.chacha20_keystream(KEY, NONCE12, 1, counter=last)) == 1
    # The 8-byte layout has a 64-bit counter: the same request is fine.
    assert len(arc4py.chacha20_keystream(KEY, NONCE8, 65, counter=last)) == 65
    with pytest.raises(ValueError):
        arc4py.chacha20_keystream(KEY, NONCE8, 65, counter=2**64 - 1)
    assert len(arc4py.chacha20_keystream(KEY, NONCE8, 64, counter=2**64 - 1)) == 64
