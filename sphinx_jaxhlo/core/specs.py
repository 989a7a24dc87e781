"""Argument specs: the text ``f32[100000,3]`` and its ``jax.ShapeDtypeStruct``.

Grammar of the ``:args:`` option (whitespace is free)::

    args    := item ("," item)*
    item    := [NAME "="] value
    value   := spec | "(" [value ("," value)* [","]] ")"      # tuple pytree
                    | "[" [value ("," value)*] "]"            # list pytree
                    | "{" [NAME ":" value ("," NAME ":" value)*] "}"  # dict pytree
    spec    := DTYPE "[" [DIM ("," DIM)*] "]" ["@" pspec]
    DIM     := INTEGER | NAME                                   # a NAME is a size a sweep gives
    pspec   := "P" "(" [entry ("," entry)*] ")"                # how the array is split over the mesh
    entry   := AXIS | "None" | "(" AXIS ("," AXIS)* ")"          # one per leading dimension
    AXIS    := NAME | 'NAME' | "NAME"                           # a mesh axis, quoted or not
    DTYPE   := f32 | bf16 | i32 | ... | key<fry> | key<rbg> | key<urbg>   # the keys of DTYPES

A dimension may be a name (``f32[n,3]``): a size that a sweep gives values
(``:sweep: n=1000..100000``, :mod:`sphinx_jaxhlo.core.sweeps`); such specs
parse only with the sizes given (:func:`parse_args`'s ``sizes``), and
:func:`size_symbols` lists the names an ``:args:`` text uses.

Positional items come first, keyword items (``name=spec``) after them.  A
spec without ``@`` is replicated: every device holds all of it.  ``@ P(data,
None)`` splits dimension 0 over the mesh axis ``data``, as
``jax.sharding.PartitionSpec('data', None)`` does; the dimensions after the
last entry are not split.

The ``:mesh:`` option (:func:`parse_mesh`) names the mesh's axes and sizes::

    mesh    := AXIS "=" SIZE [KIND] ("," AXIS "=" SIZE [KIND])*  # data=4, model=2 explicit
    KIND    := "auto" | "explicit" | "manual"                    # else jax.make_mesh's default

:func:`sharding_problems` checks specs against a mesh (every axis named is
in it, used once per spec, and divides its dimension).  Nothing here imports
jax; :func:`sphinx_jaxhlo.compiler.arguments.to_shape_dtype_structs` makes
the structs, in the compile worker.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
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


#: How an array is split over a mesh, one entry per leading dimension: ``None``
#: (not split) or the mesh axes it is split over, as ``PartitionSpec`` holds them.
Partition = tuple[Union[tuple[str, ...], None], ...]  # noqa: UP007


@dataclass(frozen=True)
class ArraySpec:
    """One array argument: dtype name as written (``f32``), shape, and how it
    is split over the mesh (``None``: replicated; see :data:`Partition`)."""

    dtype: str
    shape: tuple[int, ...]
    partition: Partition | None = None

    def __str__(self) -> str:
        text = f"{self.dtype}[{','.join(map(str, self.shape))}]"
        return text if self.partition is None else f"{text} @ {format_partition(self.partition)}"

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


def format_partition(partition: Partition) -> str:
    """``(("data",), None)`` -> ``P(data, None)``; several axes on one dimension: ``P((data, model))``."""
    def entry(axes: tuple[str, ...] | None) -> str:
        if axes is None:
            return "None"
        return axes[0] if len(axes) == 1 else "(" + ", ".join(axes) + ")"

    return "P(" + ", ".join(entry(e) for e in partition) + ")"


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
        out: dict[str, Any] = {"dtype": tree.dtype, "shape": list(tree.shape)}
        if tree.partition is not None:
            out["partition"] = [None if e is None else list(e) for e in tree.partition]
        return out
    if isinstance(tree, tuple):
        return {"tuple": [tree_to_json(t) for t in tree]}
    if isinstance(tree, list):
        return {"list": [tree_to_json(t) for t in tree]}
    return {"dict": {k: tree_to_json(v) for k, v in tree.items()}}


def tree_from_json(data: Any) -> SpecTree:
    if "dtype" in data:
        partition = data.get("partition")
        return ArraySpec(data["dtype"], tuple(data["shape"]),
                         None if partition is None else tuple(None if e is None else tuple(e) for e in partition))
    if "tuple" in data:
        return tuple(tree_from_json(t) for t in data["tuple"])
    if "list" in data:
        return [tree_from_json(t) for t in data["list"]]
    return {k: tree_from_json(v) for k, v in data["dict"].items()}


_TOKEN = re.compile(
    r"\s*(?:(?P<name>key<[A-Za-z_0-9]*>|[A-Za-z_][A-Za-z_0-9]*)|(?P<num>[0-9][0-9A-Za-z_.+-]*)"
    r"|(?P<str>'[^']*'|\"[^\"]*\")|(?P<punct>[\[\](){},=:@])|(?P<bad>\S))")


class _Parser:
    def __init__(self, text: str, sizes: Mapping[str, int] | None = None) -> None:
        self.text = text
        #: The values of the sizes named by symbols; ``None``: no symbol is allowed.
        self.sizes = sizes
        #: The symbols met, in order, with their columns.
        self.symbols: list[tuple[str, int]] = []
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
            quoted = " (specs are written without quotes: f32[100,3], not \"f32[100,3]\")" \
                if value[:1] in ("'", '"') else ""
            raise SpecError(f"expected a dtype at column {col + 1}, found {value!r}{quoted}", col)
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
            if kind == "name" and not value.startswith("key<") and self.sizes is not None:
                dims.append(self.size_of(value, dcol))
            elif kind != "num" or not value.isdigit():
                hint = " (a size named by a symbol needs a sweep that gives its values)" if kind == "name" else ""
                raise SpecError(f"dimension {value!r} at column {dcol + 1} of {dtype}[...] is not a non-negative "
                                f"integer{hint}", dcol)
            else:
                dims.append(int(value))
            if self.peek() is None:
                raise SpecError(f"{dtype}[ at column {col + 1} is not closed: expected ']'", col)
            if not self.at("]"):
                self.expect(",")
        self.expect("]")
        if math.prod(dims) > MAX_ELEMENTS:
            raise SpecError(f"{dtype}[{','.join(map(str, dims))}] has more than 2**53 elements", col)
        partition = self.partition() if self.at("@") else None
        return ArraySpec(dtype, tuple(dims), partition)

    def size_of(self, name: str, col: int) -> int:
        """The value of the size symbol ``name`` (met at ``col``)."""
        assert self.sizes is not None
        self.symbols.append((name, col))
        if name not in self.sizes:
            given = ", ".join(sorted(self.sizes)) or "none"
            raise SpecError(f"size {name!r} at column {col + 1} has no value (the sweep gives: {given})", col)
        return int(self.sizes[name])

    def axis(self, what: str) -> tuple[str, int]:
        kind, value, col = self.next(what)
        if kind == "str":
            value = value[1:-1]
            if not value.isidentifier():
                raise SpecError(f"mesh axis {value!r} at column {col + 1} is not a name", col)
        elif kind != "name" or value.startswith("key<"):
            raise SpecError(f"expected {what} at column {col + 1}, found {value!r}", col)
        return value, col

    def partition(self) -> Partition:
        """``@ P(data, None)`` after a spec (the ``@`` not yet read)."""
        self.expect("@")
        kind, value, col = self.next("P(...) after '@'")
        if kind != "name" or value not in ("P", "PartitionSpec"):
            raise SpecError(f"expected P(...) after '@' at column {col + 1}, found {value!r}", col)
        self.expect("(")
        entries: list[tuple[str, ...] | None] = []
        while not self.at(")"):
            if self.at("("):
                self.expect("(")
                axes: list[str] = []
                while not self.at(")"):
                    axes.append(self.axis("a mesh axis")[0])
                    if not self.at(")"):
                        self.expect(",")
                self.expect(")")
                entries.append(tuple(axes) if axes else None)
            else:
                tok = self.peek()
                if tok is not None and tok[0] == "name" and tok[1] == "None":
                    self.i += 1
                    entries.append(None)
                else:
                    entries.append((self.axis("a mesh axis or None")[0],))
            tok = self.peek()
            if tok is None:
                raise SpecError(f"P( at column {col + 1} is not closed: expected ')'", col)
            if not self.at(")"):
                if not self.at(","):
                    raise SpecError(f"P( at column {col + 1} is not closed: expected ',' or ')' at column "
                                    f"{tok[2] + 1}, found {tok[1]!r}", tok[2])
                self.expect(",")
        self.expect(")")
        return tuple(entries)


def parse_args(text: str, sizes: Mapping[str, int] | None = None) -> ArgSpecs:
    """Parse an ``:args:`` option value.

    :param text: e.g. ``"f32[100000,3], f32[50000,3], scale=f32[]"``
    :param sizes: the values of the sizes named by symbols (``{"n": 4096}`` for
        ``f32[n,3]``); ``None``: every dimension must be a number.
    :raises SpecError: with the column of the problem.
    """
    return _parse_args(_Parser(text, sizes))


class _AnySize(dict):  # type: ignore[type-arg]
    """Sizes that give every symbol the value 1: to read which symbols a text uses."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> int:
        return 1


def size_symbols(text: str) -> list[tuple[str, int]]:
    """The size symbols an ``:args:`` text uses, with the column of each use, in order.

    :raises SpecError: a text that does not parse (whatever values its symbols get).
    """
    p = _Parser(text, _AnySize())
    _parse_args(p)
    return p.symbols


def _parse_args(p: _Parser) -> ArgSpecs:
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


# -- meshes ---------------------------------------------------------------------


#: The kinds of mesh axis (``jax.sharding.AxisType``), as ``:mesh:`` writes them.
AXIS_TYPES = ("auto", "explicit", "manual")
#: The kind of an axis whose kind ``:mesh:`` does not write: whatever ``jax.make_mesh``
#: gives by default in the jax that compiles (Explicit from jax 0.9, Auto before).
DEFAULT_AXIS_TYPE = "default"


@dataclass(frozen=True)
class MeshSpec:
    """The ``:mesh:`` option: named axes and their sizes, in order
    (``data=4, model=2`` is ``jax.make_mesh((4, 2), ("data", "model"))``, with
    that jax's default kinds), each optionally followed by its kind: ``X=2
    explicit, Y=4 auto`` is ``jax.make_mesh((2, 4), ("X", "Y"),
    axis_types=(AxisType.Explicit, AxisType.Auto))``."""

    axes: tuple[tuple[str, int], ...]
    #: One of :data:`AXIS_TYPES`, or :data:`DEFAULT_AXIS_TYPE`, per axis; empty
    #: when every axis is ``auto`` (a mesh of Auto axes has the JSON it had
    #: when Auto was the only default, so snapshots made then keep their identity).
    types: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.types and len(self.types) != len(self.axes):
            raise ValueError(f"{len(self.types)} axis types for {len(self.axes)} axes")
        for kind in self.types:
            if kind not in (*AXIS_TYPES, DEFAULT_AXIS_TYPE):
                raise ValueError(f"unknown mesh axis type {kind!r} (known: {', '.join(AXIS_TYPES)})")
        if all(kind == "auto" for kind in self.types):
            object.__setattr__(self, "types", ())

    @property
    def axis_types(self) -> tuple[str, ...]:
        """The kind of each axis: one of :data:`AXIS_TYPES`, or
        :data:`DEFAULT_AXIS_TYPE` where ``:mesh:`` wrote none."""
        return self.types or ("auto",) * len(self.axes)

    def __str__(self) -> str:
        return ", ".join(f"{name}={size}" + (f" {kind}" if kind != DEFAULT_AXIS_TYPE else "")
                         for (name, size), kind in zip(self.axes, self.axis_types, strict=True))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.axes)

    @property
    def size(self) -> int:
        """The number of devices the mesh spans."""
        return math.prod(size for _, size in self.axes)

    def to_json(self) -> list[list[Any]]:
        """``[[name, size], ...]``, with the kind as a third element where it is not ``auto``."""
        return [[name, size] if kind == "auto" else [name, size, kind]
                for (name, size), kind in zip(self.axes, self.axis_types, strict=True)]

    @classmethod
    def from_json(cls, data: list[list[Any]]) -> MeshSpec:
        return cls(tuple((str(axis[0]), int(axis[1])) for axis in data),
                   tuple(str(axis[2]) if len(axis) > 2 else "auto" for axis in data))


def parse_mesh(text: str) -> MeshSpec:
    """Parse a ``:mesh:`` value such as ``data=4, model=2``.

    :raises SpecError: with the column of the problem.
    """
    p = _Parser(text)
    axes: list[tuple[str, int]] = []
    kinds: list[str] = []
    if p.peek() is None:
        raise SpecError("the mesh is empty: write axis=size pairs such as data=4, model=2", 0)
    while True:
        name, col = p.axis("a mesh axis name")
        if name in (n for n, _ in axes):
            raise SpecError(f"mesh axis {name!r} is given twice", col)
        p.expect("=")
        kind, value, vcol = p.next("the axis size")
        if kind != "num" or not value.isdigit() or int(value) < 1:
            raise SpecError(f"size {value!r} of mesh axis {name!r} at column {vcol + 1} is not a positive integer",
                            vcol)
        axes.append((name, int(value)))
        tok = p.peek()
        kind = DEFAULT_AXIS_TYPE
        if tok is not None and tok[0] == "name":
            p.next("the axis type")
            if tok[1].lower() not in AXIS_TYPES:
                raise SpecError(f"{tok[1]!r} at column {tok[2] + 1} is not a mesh axis type: write "
                                f"{', '.join(AXIS_TYPES)} after the size (data=8 explicit)", tok[2])
            kind = tok[1].lower()
        kinds.append(kind)
        if p.peek() is None:
            break
        p.expect(",")
    return MeshSpec(tuple(axes), tuple(kinds))


def container_leaves(tree: Any) -> Iterator[Any]:
    """What a nest of tuples, lists and dicts holds, in order: arrays, specs, Python values
    (a dict's values, not its keys; anything else is a leaf)."""
    if isinstance(tree, (tuple, list)):
        for item in tree:
            yield from container_leaves(item)
    elif isinstance(tree, dict):
        for item in tree.values():
            yield from container_leaves(item)
    else:
        yield tree


def iter_array_specs(specs: ArgSpecs) -> list[tuple[str, ArraySpec]]:
    """Every array spec with where it is (``arg 1``, ``scale``, ``arg 1[0].w``), in order."""
    out: list[tuple[str, ArraySpec]] = []

    def walk(where: str, tree: SpecTree) -> None:
        if isinstance(tree, ArraySpec):
            out.append((where, tree))
        elif isinstance(tree, (tuple, list)):
            for i, t in enumerate(tree):
                walk(f"{where}[{i}]", t)
        else:
            for k, v in tree.items():
                walk(f"{where}.{k}", v)

    for i, tree in enumerate(specs.args):
        walk(f"argument {i + 1}", tree)
    for name, tree in specs.kwargs:
        walk(name, tree)
    return out


def sharding_problems(specs: ArgSpecs, mesh: MeshSpec | None) -> list[str]:
    """What is wrong with the specs' partitions on ``mesh``, in words: an
    axis the mesh does not have, an axis used twice in one spec, more entries
    than dimensions, a dimension its axes do not divide.  Empty when all is well.

    :param mesh: the mesh; ``None`` when no ``:mesh:`` is given (then no spec
        may name an axis).
    """
    problems: list[str] = []
    sizes = dict(mesh.axes) if mesh is not None else {}
    for where, spec in iter_array_specs(specs):
        if spec.partition is None:
            continue
        named = [axis for axes in spec.partition if axes is not None for axis in axes]
        unknown = [axis for axis in named if axis not in sizes]
        if unknown:
            if mesh is None:
                problems.append(f"{where} ({spec}) names mesh axis {unknown[0]!r}, but no mesh is given "
                                "(write one such as data=4, model=2)")
            else:
                problems.append(f"{where} ({spec}) names mesh axis {unknown[0]!r}, which the mesh "
                                f"{mesh} does not have (its axes: {', '.join(mesh.names)})")
            continue
        twice = sorted({axis for axis in named if named.count(axis) > 1})
        if twice:
            problems.append(f"{where} ({spec}) uses mesh axis {twice[0]!r} twice; an axis can split one "
                            "dimension only")
            continue
        if len(spec.partition) > len(spec.shape):
            problems.append(f"{where} ({spec}) has {len(spec.partition)} partition entries for "
                            f"{len(spec.shape)} dimensions")
            continue
        for dim, (extent, axes) in enumerate(zip(spec.shape, spec.partition, strict=False)):
            if axes is None:
                continue
            parts = math.prod(sizes[a] for a in axes)
            if extent % parts:
                over = " x ".join(f"{a}={sizes[a]}" for a in axes)
                problems.append(f"{where} ({spec}): dimension {dim} of size {extent} is not divisible by "
                                f"{parts}, the number of devices along {over}")
    return problems
