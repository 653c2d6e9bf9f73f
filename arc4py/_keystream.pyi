"""Type stubs for arc4py._keystream, the Cython binding of the ChaCha20
cores.  The public names are re-exported (and documented) by arc4py."""
from typing import Any, Final, SupportsIndex

import numpy.typing as npt
from typing_extensions import Buffer, CapsuleType

ALL_BACKENDS: Final[tuple[str, ...]]
_cores_api: CapsuleType  # include/arc4py/chacha20.h, for arc4py._core

def backends() -> tuple[str, ...]: ...
def cpu_features() -> tuple[str, ...]: ...
def chacha20_keystream(
    key: Buffer,
    nonce: Buffer,
    length: SupportsIndex,
    *,
    counter: SupportsIndex = 0,
    backend: str | None = None,
) -> bytes: ...
def chacha20_keystream_into(
    key: Buffer,
    nonce: Buffer,
    buffer: Buffer | npt.NDArray[Any],
    *,
    counter: SupportsIndex = 0,
    backend: str | None = None,
) -> int: ...
