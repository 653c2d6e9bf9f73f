"""Type stubs for arc4py._numpy: random arrays and the numpy BitGenerator.

Import the public names from arc4py.  A stub is never executed: the numpy
imports below cost nothing at run time, and without numpy a type checker
treats these types as unknown (Any).
"""
from collections.abc import Mapping, Sequence
from typing import Any, Literal, SupportsIndex, overload

import numpy as np
import numpy.random
import numpy.typing as npt
from typing_extensions import Self, TypeAlias

# A shape, as numpy takes it: an int or a sequence of ints.
_Size: TypeAlias = SupportsIndex | Sequence[SupportsIndex]
# A seed sequence that holds no seed: the only seed arc4py takes.
_Seedless: TypeAlias = numpy.random.bit_generator.SeedlessSeedSequence

class BitGenerator(numpy.random.BitGenerator):
    """A numpy BitGenerator drawing from arc4py's per-thread CSPRNG.

    Cannot be seeded (a real seed is a TypeError; None or a seedless seed
    sequence gives a new generator); copies, pickles, spawned children and
    jumped() are new, independent generators."""

    def __init__(self, seed: _Seedless | None = None) -> None: ...
    @property
    def seed_seq(self) -> _Seedless: ...
    @property
    def state(self) -> dict[str, Any]: ...
    @state.setter
    def state(self, value: Mapping[str, Any], /) -> None: ...
    # numpy < 2.1 types the base's spawn() as list[BitGenerator] and its
    # random_raw() with fewer overloads; ours are narrower (sound: the
    # list is new), so the override is accepted on purpose.
    def spawn(self, n_children: int) -> list[Self]: ...  # type: ignore[override,unused-ignore]
    def jumped(self, jumps: SupportsIndex = 1) -> Self: ...
    @overload  # type: ignore[override,unused-ignore]
    def random_raw(self, size: None = None, output: Literal[True] = True) -> int: ...
    @overload
    def random_raw(self, size: _Size, output: Literal[True] = True) -> npt.NDArray[np.uint64]: ...
    @overload
    def random_raw(self, size: _Size | None, output: Literal[False]) -> None: ...
    @overload
    def random_raw(self, size: _Size | None = None, *, output: Literal[False]) -> None: ...

class Generator(numpy.random.Generator):
    """numpy's Generator over an arc4py.BitGenerator, as default_rng() gives."""

def default_rng(
    seed: _Seedless | BitGenerator | numpy.random.Generator | None = None,
) -> numpy.random.Generator: ...
