"""What the chunk proof knows of each value of a jaxpr, and the length of the chunked axis.

The rules are stated, and applied, in :mod:`sphinx_jaxhlo.chunking.proof`;
this module holds the states a value can be in (free, mapped, a partial result,
a value of the length) and the second jaxprs made at other lengths of the
chunked axis, from which the values of the length are read.  Importing it does
not import jax.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["ChunkError", "Free", "Mapped", "Partial", "Sized", "State", "abstract", "is_zero", "length_state",
           "twin_jaxprs"]


class ChunkError(ValueError):
    """The rewrite cannot be proved correct for this function.

    :ivar primitive: the jaxpr operation that stopped the proof (``""`` for an output or the arguments).
    :ivar where: its source location, ``file:line:column (function)``, when jax recorded one.
    :ivar unknown: the proof stopped at what it cannot follow (an operation it does not know, a
        ``gather``): it cannot prove the rewrite, which is not to say the rewrite changes the result.
    """

    def __init__(self, message: str, primitive: str = "", where: str = "", *, unknown: bool = False) -> None:
        super().__init__(message)
        self.primitive = primitive
        self.where = where
        self.unknown = unknown


@dataclasses.dataclass(frozen=True)
class Free:
    """Does not depend on the chunked arguments; ``uniform``: dimensions along which it is constant;
    ``zero``: every element is known to be zero (a literal ``0``, broadcast)."""

    uniform: frozenset[int] = frozenset()
    zero: bool = False


@dataclasses.dataclass(frozen=True)
class Mapped:
    """Element ``i`` of dimension ``axis`` comes from element ``i`` of the chunked axis alone."""

    axis: int


@dataclasses.dataclass(frozen=True)
class Partial:
    """A reduction over the chunked axis with ``op``; ``origin``: where it was made."""

    op: str
    origin: str


@dataclasses.dataclass(frozen=True)
class Sized:
    """Does not depend on the chunked data but on the length of its axis: proportional to
    the length to the power ``power`` (1: the length, -1: its inverse); ``None``: otherwise."""

    power: int | None


State = Free | Mapped | Partial | Sized


def _same(a: Any, b: Any) -> bool:
    import numpy as np

    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def is_zero(value: Any) -> bool:
    """Whether every element of a literal or constant is zero (an empty one is not)."""
    import numpy as np

    try:
        a = np.asarray(value)
        return bool(a.size) and a.dtype.kind in "biufc" and not np.any(a)
    except (TypeError, ValueError):
        return False


def length_state(value: Any, twins: Sequence[Any], ratios: Sequence[float]) -> State:
    """A literal or constant that is ``value`` at the real length and ``twins[i]`` at the
    length times ``ratios[i]``: free when they are all the same, else a value of the length."""
    import numpy as np

    if all(_same(value, twin) for twin in twins):
        return Free(frozenset(range(np.ndim(value))), zero=is_zero(value))
    a = np.asarray(value, dtype=np.float64)
    for power in (1, -1):
        if a.size == 1 and a.item() != 0 and all(
                np.size(twin) == 1 and math.isclose(float(np.asarray(twin, dtype=np.float64).item()) / a.item(),
                                                    ratio ** power, rel_tol=1e-6)
                for twin, ratio in zip(twins, ratios, strict=True)):
            return Sized(power)
    return Sized(None)


def abstract(value: Any) -> Any:
    import jax

    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return jax.ShapeDtypeStruct(tuple(value.shape), value.dtype)
    return value


def twin_jaxprs(call: Callable[..., Any], abstract: list[Any], chunked_leaves: dict[int, int],
           name: str) -> tuple[list[Any], list[float]]:
    """The jaxprs of ``call`` with the chunked axis one element longer and twice as long
    (those that trace), and each length over the real one.

    :raises ChunkError: it traces at neither length: a chunk, shorter than the whole, would not either.
    """
    import jax

    n = next(int(abstract[i].shape[a]) for i, a in chunked_leaves.items())
    problem: BaseException | None = None
    twins: list[Any] = []
    ratios: list[float] = []
    for other in (n + 1, 2 * n):
        specs = list(abstract)
        for i, a in chunked_leaves.items():
            shape = list(specs[i].shape)
            shape[a] = other
            specs[i] = jax.ShapeDtypeStruct(tuple(shape), specs[i].dtype)
        try:
            twins.append(jax.make_jaxpr(call)(*specs))
            ratios.append(other / n)
        except Exception as exc:  # the function's own error at that length
            problem = exc
    if twins:
        return twins, ratios
    raise ChunkError(f"chunked({name}): it cannot be traced with the chunked axis {n + 1} or {2 * n} long "
                     f"({type(problem).__name__}: {str(problem).splitlines()[0] if str(problem) else ''}), so a "
                     "chunk, shorter than the whole, would not trace either")
