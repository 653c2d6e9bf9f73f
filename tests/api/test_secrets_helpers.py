"""arc4py's secrets-style helpers (token_bytes, token_hex, token_urlsafe,
choice, compare_digest), each against the stdlib ``secrets`` module's
behaviour on this Python.  (Split from test_random_class.py.)"""
import base64
import hmac
import math
import re
import string

import pytest

import arc4py

# ---- secrets-style helpers ----------------------------------------------------------

def test_token_bytes():
    t = arc4py.token_bytes()
    assert type(t) is bytes and len(t) == 32
    assert arc4py.DEFAULT_ENTROPY == 32
    for n in (0, 1, 16, 64, 1000):
        assert len(arc4py.token_bytes(n)) == n
    assert arc4py.token_bytes() != arc4py.token_bytes()
    assert arc4py.token_bytes(None) != arc4py.token_bytes(None)


def test_token_hex():
    t = arc4py.token_hex()
    assert type(t) is str and len(t) == 64
    assert re.fullmatch("[0-9a-f]{64}", t)
    for n in (0, 1, 5, 100):
        assert len(arc4py.token_hex(n)) == 2 * n
    assert arc4py.token_hex(8) != arc4py.token_hex(8)


URLSAFE = set(string.ascii_letters + string.digits + "-_")


def test_token_urlsafe():
    t = arc4py.token_urlsafe()
    assert type(t) is str
    # 32 bytes -> 43 unpadded Base64 characters.
    assert len(t) == 43 and set(t) <= URLSAFE and "=" not in t
    for n in (0, 1, 2, 3, 16, 100):
        s = arc4py.token_urlsafe(n)
        assert set(s) <= URLSAFE
        assert len(s) == math.ceil(n * 4 / 3)
        assert len(base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))) == n
    # Every character of the alphabet turns up over many tokens.
    seen = set("".join(arc4py.token_urlsafe(64) for _ in range(50)))
    assert seen == URLSAFE


@pytest.mark.parametrize("func", [arc4py.token_bytes, arc4py.token_hex,
                                  arc4py.token_urlsafe])
def test_token_bad_input(func):
    with pytest.raises(TypeError):
        func(1.5)
    with pytest.raises(TypeError):
        func("3")
    with pytest.raises(ValueError):
        func(-1)


def test_choice_helper():
    seq = "abcdef"
    assert {arc4py.choice(seq) for _ in range(500)} == set(seq)
    assert arc4py.choice([42]) == 42
    assert arc4py.choice(range(3, 10 ** 18)) in range(3, 10 ** 18)
    big = list(range(1000))
    assert len({arc4py.choice(big) for _ in range(2000)}) > 800
    for empty in ([], "", (), range(0)):
        with pytest.raises(IndexError):
            arc4py.choice(empty)


def test_compare_digest():
    assert arc4py.compare_digest(b"abc", b"abc") is True
    assert arc4py.compare_digest(b"abc", b"abd") is False
    assert arc4py.compare_digest(b"abc", b"ab") is False
    assert arc4py.compare_digest("abc", "abc") is True
    assert arc4py.compare_digest(bytearray(b"x"), memoryview(b"x")) is True
    assert "compare_digest" in arc4py.__all__
    for a, b in (("abc", b"abc"), (1, 1), ("\xe9", "\xe9"), (None, b"")):
        try:
            hmac.compare_digest(a, b)
        except TypeError:
            with pytest.raises(TypeError):
                arc4py.compare_digest(a, b)
        else:
            raise AssertionError(f"hmac accepted {a!r}, {b!r}")


def test_matches_secrets_api():
    import secrets
    for name in ("token_bytes", "token_hex", "token_urlsafe", "choice",
                 "compare_digest"):
        assert callable(getattr(arc4py, name)) and hasattr(secrets, name)
