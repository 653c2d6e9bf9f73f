"""The ``secrets`` module's helpers over arc4py's draws: ``token_bytes``,
``token_hex``, ``token_urlsafe``, ``choice`` (with the meaning the random
and secrets modules share) and ``compare_digest``.  Import them from
``arc4py``.
"""
import base64 as _base64
from hmac import compare_digest
from operator import index as _index

from arc4py._core import arc4random_buf as _arc4random_buf, randbelow as _randbelow

__all__ = ["choice", "compare_digest", "token_bytes", "token_hex",
           "token_urlsafe"]

#: Bytes in a token when ``nbytes`` is not given (as the ``secrets`` module).
DEFAULT_ENTROPY = 32


def token_bytes(nbytes=None):
    """A random byte string of ``nbytes`` bytes (default 32), like
    ``secrets.token_bytes``."""
    if nbytes is None:
        nbytes = DEFAULT_ENTROPY
    elif type(nbytes) is not int or nbytes < 0:
        nbytes = _nbytes_arg(nbytes)
    return _arc4random_buf(nbytes)


def _nbytes_arg(nbytes):
    """``nbytes`` as an int >= 0, with errors that name it."""
    if isinstance(nbytes, float):
        raise TypeError("nbytes must be an int or None, not float")
    try:
        n = _index(nbytes)
    except TypeError:
        raise TypeError(f"nbytes must be an int or None, not "
                        f"{type(nbytes).__name__}") from None
    if n < 0:
        raise ValueError(f"nbytes must be >= 0, not {n}")
    return n


def token_hex(nbytes=None):
    """A random text string of ``2 * nbytes`` hex digits (default 32 bytes),
    like ``secrets.token_hex``."""
    return token_bytes(nbytes).hex()


def token_urlsafe(nbytes=None):
    """A random URL-safe Base64 text string of ``nbytes`` bytes (default 32),
    unpadded, like ``secrets.token_urlsafe``."""
    return _base64.urlsafe_b64encode(token_bytes(nbytes)).rstrip(b"=").decode("ascii")


def choice(seq):
    """A random element of the non-empty sequence ``seq``, like
    ``secrets.choice`` and ``random.choice`` (``IndexError`` if it is
    empty)."""
    n = len(seq)
    if n == 0:
        raise IndexError("Cannot choose from an empty sequence")
    return seq[_randbelow(n)]
