"""Type stubs for arc4py._core, the binding of the cores and the
generator.  The public names are re-exported (and documented) by arc4py.

numpy appears only in types: a stub is never executed, so importing numpy
here costs nothing at run time.  Where numpy is not installed, a type
checker treats the array types as unknown (Any) and the scalar overloads
still hold.
"""
from collections.abc import Sequence
from typing import Any, Final, SupportsIndex, overload

import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer, CapsuleType, TypeAlias

# A shape, as numpy takes it: an int or a sequence of ints.
_Size: TypeAlias = SupportsIndex | Sequence[SupportsIndex]

__all__ = [
    "arc4random", "random_u32", "random_u64", "arc4random_buf", "fill",
    "arc4random_uniform", "randbelow", "randbits", "random", "stir",
    "fork_protection", "backends", "backend", "cpu_features",
    "chacha20_keystream", "chacha20_keystream_into",
]

RESEED_INTERVAL: Final[int]
BUFFER_BYTES: Final[int]
DIRECT_BYTES: Final[int]
DIRECT_CHUNK_BYTES: Final[int]

_C_API: CapsuleType  # include/arc4py/capi.h
_capi_hand_out: str  # "avx512" or "portable": the table's buffered calls
_not_built: dict[str, str]  # core left out of this build: why
# A bad ARC4PY_BACKEND, raised by arc4py at import (None if it is fine).
_backend_env_error: ValueError | None

# ---- cores -----------------------------------------------------------------

ALL_BACKENDS: Final[tuple[str, ...]]

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
def backend() -> str: ...
def _select_backend(name: str) -> None: ...

# ---- the generator ---------------------------------------------------------

@overload
def arc4random(size: None = None) -> int: ...
@overload
def arc4random(size: _Size) -> npt.NDArray[np.uint32]: ...
@overload
def random_u32(size: None = None) -> int: ...
@overload
def random_u32(size: _Size) -> npt.NDArray[np.uint32]: ...
@overload
def random_u64(size: None = None) -> int: ...
@overload
def random_u64(size: _Size) -> npt.NDArray[np.uint64]: ...
def arc4random_buf(n: SupportsIndex) -> bytes: ...
# numpy's stubs make ndarray a Buffer only on Python >= 3.12.
def fill(buffer: Buffer | npt.NDArray[Any]) -> int: ...
@overload
def arc4random_uniform(upper_bound: SupportsIndex, size: None = None) -> int: ...
@overload
def arc4random_uniform(upper_bound: SupportsIndex, size: _Size) -> npt.NDArray[np.uint32]: ...
def randbits(k: SupportsIndex) -> int: ...
def randbelow(exclusive_upper_bound: SupportsIndex) -> int: ...
@overload
def random(*, size: None = None) -> float: ...
@overload
def random(*, size: _Size) -> npt.NDArray[np.float64]: ...
def stir(*, all_threads: bool = False) -> None: ...
def fork_protection() -> tuple[str, ...]: ...
# For `arc4py info`: entropy_source, state_lock (None: some state is not
# locked) and state_exit_wipe, the OS calls by name.
def _os_facts() -> dict[str, str | None]: ...
def _load_numpy() -> Any: ...

class Random:
    """The C base type of arc4py.Random: its primitives."""

    def random(self) -> float: ...
    def getrandbits(self, k: SupportsIndex, /) -> int: ...
    def randbytes(self, n: SupportsIndex) -> bytes: ...
    def _randbelow(self, n: SupportsIndex, /) -> int: ...

# ---- objects every thread reaches (free-threaded builds) ------------------

def _share_between_threads(*objects: object) -> None: ...
