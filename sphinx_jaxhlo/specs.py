"""Argument specs: the text ``f32[100000,3]`` and its ``jax.ShapeDtypeStruct``.

Grammar of the ``:args:`` option (whitespace is free)::

    args    := item ("," item)*
    item    := [NAME "="] value
    value   := spec | "(" [value ("," value)* [","]] ")"      # tuple pytree
                    | "[" [value ("," value)*] "]"            # list pytree
                    | "{" [NAME ":" value ("," NAME ":" value)*] "}"  # dict pytree
    spec    := DTYPE "[" [DIM ("," DIM)*] "]"
    DTYPE   := f32 | bf16 | i32 | ... | key<fry> | key<rbg> | key<urbg>   # the keys of DTYPES

Positional items come first, keyword items (``name=spec``) after them.  Nothing
here imports jax; :func:`to_shape_dtype_structs` does, in the compile worker.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Union

#: Accepted dtype names, with the numpy/jax dtype name each stands for and its
#: size in bytes.
DTYPES: dict[str, tuple[str, int]] = {
    "f64": ("float64", 8),
    "f32": ("float32", 4),
    "f16": ("float16", 2),
    "bf16": ("bfloat16", 2),
    "i64": ("int64", 8),
    "i32": ("int32", 4),
    "i16": ("int16", 2),
    "i8": ("int8", 1),
    "s64": ("int64", 8),
    "s32": ("int32", 4),
    "s16": ("int16", 2),
    "s8": ("int8", 1),
    "u64": ("uint64", 8),
    "u32": ("uint32", 4),
    "u16": ("uint16", 2),
    "u8": ("uint8", 1),
    "bool": ("bool", 1),
    "pred": ("bool", 1),
    "c64": ("complex64", 8),
    "c128": ("complex128", 16),
    # Typed PRNG keys, as jax names their dtypes (``jax.random.key(0).dtype``).
    "key<fry>": ("key<fry>", 8),
    "key<rbg>": ("key<rbg>", 16),
    "key<urbg>": ("key<urbg>", 16),
}

#: Key dtypes -> the ``impl`` of ``jax.random.key`` that makes them.
KEY_IMPLS: dict[str, str] = {"key<fry>": "threefry2x32", "key<rbg>": "rbg", "key<urbg>": "unsafe_rbg"}

#: Largest accepted array, in elements; beyond this XLA's 64-bit sizes overflow.
MAX_ELEMENTS = 2**53


class SpecError(ValueError):
    """A malformed ``:args:`` value.  ``column`` is 0-based in the option text."""

    def __init__(self, message: str, column: int | None = None) -> None:
        super().__init__(message)
        self.column = column


@dataclass(frozen=True)
class ArraySpec:
    """One array argument: dtype name as written (``f32``) and shape."""

    dtype: str
    shape: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.dtype}[{','.join(map(str, self.shape))}]"

    @property
    def numpy_dtype(self) -> str:
        return DTYPES[self.dtype][0]

    @property
    def bytes(self) -> int:
        return math.prod(self.shape) * DTYPES[self.dtype][1]


#: A spec or a pytree (tuple, list, dict) of specs.
# (a recursive alias needs Union with string forward references)
SpecTree = Union[ArraySpec, tuple["SpecTree", ...], list["SpecTree"], dict[str, "SpecTree"]]  # noqa: UP007


@dataclass(frozen=True)
class ArgSpecs:
    """The parsed ``:args:`` option."""

    args: tuple[SpecTree, ...] = ()
    kwargs: tuple[tuple[str, SpecTree], ...] = ()

    def __str__(self) -> str:
        parts = [format_tree(a) for a in self.args]
        parts += [f"{k}={format_tree(v)}" for k, v in self.kwargs]
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"args": [tree_to_json(a) for a in self.args],
                "kwargs": [[k, tree_to_json(v)] for k, v in self.kwargs]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ArgSpecs:
        return cls(tuple(tree_from_json(a) for a in data["args"]),
                   tuple((k, tree_from_json(v)) for k, v in data["kwargs"]))


def format_tree(tree: SpecTree) -> str:
    if isinstance(tree, ArraySpec):
        return str(tree)
    if isinstance(tree, tuple):
        inner = ", ".join(format_tree(t) for t in tree)
        return f"({inner},)" if len(tree) == 1 else f"({inner})"
    if isinstance(tree, list):
        return "[" + ", ".join(format_tree(t) for t in tree) + "]"
    return "{" + ", ".join(f"{k}: {format_tree(v)}" for k, v in tree.items()) + "}"


def tree_to_json(tree: SpecTree) -> Any:
    if isinstance(tree, ArraySpec):
        return {"dtype": tree.dtype, "shape": list(tree.shape)}
    if isinstance(tree, tuple):
        return {"tuple": [tree_to_json(t) for t in tree]}
    if isinstance(tree, list):
        return {"list": [tree_to_json(t) for t in tree]}
    return {"dict": {k: tree_to_json(v) for k, v in tree.items()}}


def tree_from_json(data: Any) -> SpecTree:
    if "dtype" in data:
        return ArraySpec(data["dtype"], tuple(data["shape"]))
    if "tuple" in data:
        return tuple(tree_from_json(t) for t in data["tuple"])
    if "list" in data:
        return [tree_from_json(t) for t in data["list"]]
    return {k: tree_from_json(v) for k, v in data["dict"].items()}


_TOKEN = re.compile(
    r"\s*(?:(?P<name>key<[A-Za-z_0-9]*>|[A-Za-z_][A-Za-z_0-9]*)|(?P<num>[0-9][0-9A-Za-z_.+-]*)|(?P<punct>[\[\](){},=:])|(?P<bad>\S))")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:  # only trailing whitespace is left
                break
            kind = m.lastgroup or "bad"
            self.tokens.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()
        self.i = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def next(self, what: str) -> tuple[str, str, int]:
        tok = self.peek()
        if tok is None:
            raise SpecError(f"unexpected end of input, expected {what}", len(self.text))
        self.i += 1
        return tok

    def expect(self, punct: str) -> None:
        kind, value, col = self.next(repr(punct))
        if kind != "punct" or value != punct:
            raise SpecError(f"expected {punct!r} at column {col + 1}, found {value!r}", col)

    def at(self, punct: str) -> bool:
        tok = self.peek()
        return tok is not None and tok[0] == "punct" and tok[1] == punct

    def value(self) -> SpecTree:
        kind, value, col = self.next("a spec such as f32[3]")
        if kind == "punct" and value == "(":
            items: list[SpecTree] = []
            while not self.at(")"):
                items.append(self.value())
                if not self.at(")"):
                    self.expect(",")
            self.expect(")")
            return tuple(items)
        if kind == "punct" and value == "[":
            litems: list[SpecTree] = []
            while not self.at("]"):
                litems.append(self.value())
                if not self.at("]"):
                    self.expect(",")
            self.expect("]")
            return litems
        if kind == "punct" and value == "{":
            ditems: dict[str, SpecTree] = {}
            while not self.at("}"):
                k, key, kcol = self.next("a key")
                if k != "name":
                    raise SpecError(f"expected a key at column {kcol + 1}, found {key!r}", kcol)
                self.expect(":")
                ditems[key] = self.value()
                if not self.at("}"):
                    self.expect(",")
            self.expect("}")
            return ditems
        if kind != "name":
            raise SpecError(f"expected a dtype at column {col + 1}, found {value!r}", col)
        return self.array(value, col)

    def array(self, dtype: str, col: int) -> ArraySpec:
        if dtype not in DTYPES:
            known = ", ".join(sorted(DTYPES))
            raise SpecError(f"unknown dtype {dtype!r} at column {col + 1} (known: {known})", col)
        self.expect("[")
        dims: list[int] = []
        while not self.at("]"):
            if self.peek() is None:
                raise SpecError(f"{dtype}[ at column {col + 1} is not closed: expected ']'", col)
            kind, value, dcol = self.next("a dimension")
            if kind != "num" or not value.isdigit():
                raise SpecError(
                    f"dimension {value!r} at column {dcol + 1} of {dtype}[...] is not a non-negative integer", dcol)
            dims.append(int(value))
            if self.peek() is None:
                raise SpecError(f"{dtype}[ at column {col + 1} is not closed: expected ']'", col)
            if not self.at("]"):
                self.expect(",")
        self.expect("]")
        if math.prod(dims) > MAX_ELEMENTS:
            raise SpecError(f"{dtype}[{','.join(map(str, dims))}] has more than 2**53 elements", col)
        return ArraySpec(dtype, tuple(dims))


def parse_args(text: str) -> ArgSpecs:
    """Parse an ``:args:`` option value.

    :param text: e.g. ``"f32[100000,3], f32[50000,3], scale=f32[]"``
    :raises SpecError: with the column of the problem.
    """
    p = _Parser(text)
    args: list[SpecTree] = []
    kwargs: dict[str, SpecTree] = {}
    if p.peek() is None:
        return ArgSpecs()
    while True:
        tok = p.peek()
        nxt = p.tokens[p.i + 1] if p.i + 1 < len(p.tokens) else None
        if tok and tok[0] == "name" and nxt and nxt[0] == "punct" and nxt[1] == "=":
            p.i += 2
            if tok[1] in kwargs:
                raise SpecError(f"keyword argument {tok[1]!r} given twice", tok[2])
            kwargs[tok[1]] = p.value()
        else:
            if kwargs:
                raise SpecError(f"positional spec after keyword specs at column {(tok[2] if tok else 0) + 1}",
                                tok[2] if tok else None)
            args.append(p.value())
        if p.peek() is None:
            break
        p.expect(",")
    return ArgSpecs(tuple(args), tuple(kwargs.items()))


def parse_shape(text: str) -> ArraySpec:
    """Parse one spec such as ``f32[50000,100000]`` (used by ``:expect-materialized:``)."""
    p = _Parser(text)
    kind, value, col = p.next("a spec such as f32[3]")
    if kind != "name":
        raise SpecError(f"expected a dtype, found {value!r}", col)
    spec = p.array(value, col)
    if p.peek() is not None:
        raise SpecError(f"unexpected {p.peek()[1]!r} after {spec}", p.peek()[2])  # type: ignore[index]
    return spec


def to_shape_dtype_structs(specs: ArgSpecs) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Build ``jax.ShapeDtypeStruct`` pytrees (imports jax: worker only)."""
    import jax
    import jax.numpy as jnp

    def build(tree: SpecTree) -> Any:
        if isinstance(tree, ArraySpec):
            if tree.dtype in KEY_IMPLS:
                impl = KEY_IMPLS[tree.dtype]
                key_dtype = jax.eval_shape(lambda: jax.random.key(0, impl=impl)).dtype
                return jax.ShapeDtypeStruct(tree.shape, key_dtype)
            return jax.ShapeDtypeStruct(tree.shape, jnp.dtype(tree.numpy_dtype))
        if isinstance(tree, tuple):
            return tuple(build(t) for t in tree)
        if isinstance(tree, list):
            return [build(t) for t in tree]
        return {k: build(v) for k, v in tree.items()}

    return tuple(build(a) for a in specs.args), {k: build(v) for k, v in specs.kwargs}
