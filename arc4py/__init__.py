"""arc4py: an arc4random-style ChaCha20 CSPRNG, as fast as a non-cryptographic one."""
from arc4py._core import (
    arc4random,
    arc4random_buf,
    arc4random_uniform,
    backend,
    backends,
    chacha20_keystream,
    chacha20_keystream_into,
    fill,
    random,
    random_u32,
    random_u64,
    randbelow,
    randbits,
    stir,
)

__version__ = "0.1.0"
