"""The data model of a parsed HLO module: shapes, instructions, computations, modules.

:func:`sphinx_jaxhlo.hlo.parse.parse_module` builds these objects from HLO
text; the analyses read them.  Attribute values are kept as raw text, with the
fields the analyses need decoded (:mod:`sphinx_jaxhlo.hlo.decode`).  Also here:
:class:`HloParseError`, the one error the parser and the analyses raise on a
text they cannot read.  Plain data; imports neither jax nor Sphinx.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

# XLA's memory space of host memory (``Layout::kHostMemorySpace``); the spaces are named in core.report
from sphinx_jaxhlo.core.memory import HOST_MEMORY_SPACE

__all__ = [
    "HOST_MEMORY_SPACE",
    "HloComputation",
    "HloInstruction",
    "HloModule",
    "HloParseError",
    "Shape",
    "SourceLocation",
    "element_bits",
]


class HloParseError(ValueError):
    """The text is not HLO this parser can read.

    :param message: what is wrong.
    :param line: the 1-based line of the text where it was found, or 0 when
        the problem is not tied to one line.
    """

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.message = message
        self.line = line


# -- shapes ------------------------------------------------------------------

#: Bits per element of each HLO element type.  Sub-byte types are counted
#: packed (two ``s4`` per byte); the total is rounded up to whole bytes.
_FIXED_BITS: dict[str, int] = {
    "pred": 8,
    "s1": 1, "u1": 1, "s2": 2, "u2": 2, "s4": 4, "u4": 4,
    "s8": 8, "u8": 8, "s16": 16, "u16": 16, "s32": 32, "u32": 32, "s64": 64, "u64": 64,
    "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "c64": 64, "c128": 128,
    "token": 0, "opaque": 0,
}  # fmt: skip
#: Narrow float types, as XLA's printer names them: ``f8e5m2``, ``f8e4m3``,
#: ``f8e4m3fn``, ``f8e4m3fnuz``, ``f8e5m2fnuz``, ``f8e4m3b11fnuz`` (exponent
#: bias 11), ``f8e3m4``, ``f8e8m0fnu``, ``f6e2m3fn``, ``f6e3m2fn``, ``f4e2m1fn``:
#: ``f<bits>e<exponent bits>m<mantissa bits>``, an optional ``b<bias>``, then
#: the letters of the special values (``fn``, ``fnuz``, ``fnu``).
_NARROW_FLOAT = re.compile(r"f([1-9])e\d+m\d+(?:b\d+)?[a-z]*")


def element_bits(dtype: str) -> int | None:
    """Bits per element of an HLO element type; ``None`` for a name that is not one."""
    bits = _FIXED_BITS.get(dtype)
    if bits is not None:
        return bits
    m = _NARROW_FLOAT.fullmatch(dtype)
    return int(m.group(1)) if m else None


@dataclass(frozen=True, slots=True)
class Shape:
    """An array shape (``f32[50000,100000]{1,0}``) or a tuple of shapes.

    For an array, :attr:`dtype` and :attr:`dims` are set and :attr:`tuple_shapes`
    is ``None``; for a tuple, :attr:`tuple_shapes` holds the element shapes and
    :attr:`dtype` is ``""``.
    """

    dtype: str = ""
    dims: tuple[int, ...] = ()
    #: For each dimension, whether it is dynamic (``<=N``: ``N`` is the bound;
    #: ``?``: unbounded, counted as 0).
    dynamic: tuple[bool, ...] = ()
    #: Layout text between the braces (``1,0:T(8,128)S(1)``), or ``None``.
    layout: str | None = None
    tuple_shapes: tuple[Shape, ...] | None = None
    #: A buffer shape, ``b(f32[4]{0})``: the buffer of the array shape it holds.
    is_buffer: bool = False

    @property
    def memory_space(self) -> int:
        """The memory space of the layout's ``S(n)`` (0, the device's
        default memory, when there is none; 5 is the host's memory in XLA's
        GPU and TPU layouts)."""
        layout = self.layout
        if not layout or "S(" not in layout:
            return 0
        m = _MEMORY_SPACE_RE.search(layout)
        return int(m.group(1)) if m else 0

    @property
    def is_tuple(self) -> bool:
        return self.tuple_shapes is not None

    def leaves(self) -> Iterator[Shape]:
        """The array shapes, depth first (the shape itself for an array)."""
        if self.tuple_shapes is None:
            yield self
        else:
            for s in self.tuple_shapes:
                yield from s.leaves()

    @property
    def elements(self) -> int:
        """Number of elements; for a tuple, the sum over its leaves."""
        if self.tuple_shapes is not None:
            return sum(s.elements for s in self.tuple_shapes)
        n = 1
        for d in self.dims:
            n *= d
        return n

    @property
    def bytes(self) -> int:
        """Size in bytes without padding; for a tuple, the sum over its leaves."""
        if self.tuple_shapes is not None:
            return sum(s.bytes for s in self.tuple_shapes)
        bits = element_bits(self.dtype) or 0
        return (self.elements * bits + 7) // 8

    def __str__(self) -> str:
        if self.tuple_shapes is not None:
            return "(" + ", ".join(str(s) for s in self.tuple_shapes) + ")"
        dims = ",".join(
            ("?" if d == 0 else f"<={d}") if dyn else str(d)
            for d, dyn in zip(self.dims, self.dynamic or (False,) * len(self.dims), strict=False)
        )
        return f"b({self.dtype}[{dims}])" if self.is_buffer else f"{self.dtype}[{dims}]"


_MEMORY_SPACE_RE = re.compile(r"S\((\d+)\)")


# -- module objects ----------------------------------------------------------


class SourceLocation(NamedTuple):
    """One frame of the Python stack an instruction was traced from."""

    file: str
    line: int
    function: str = ""
    column: int = 0
    end_line: int = 0
    end_column: int = 0


@dataclass(slots=True, eq=False)
class HloInstruction:
    """One instruction: ``%name = shape opcode(operands), attr=value, ...``."""

    name: str
    opcode: str
    shape: Shape
    #: Operand names, without ``%``.
    operands: list[str] = field(default_factory=list)
    #: Every ``key=value`` attribute, the value as raw text.
    attributes: dict[str, str] = field(default_factory=dict)
    #: ``kLoop``, ``kInput``, ``kOutput``, ``kCustom`` for a fusion, else ``None``.
    fusion_kind: str | None = None
    #: Computations named by ``calls=``, ``to_apply=``, ``body=``,
    #: ``condition=``, ``branch_computations={...}``..., in that order.
    called_computations: list[str] = field(default_factory=list)
    #: ``backend_config`` decoded from JSON, when it is a JSON object.
    backend_config: dict[str, Any] | None = None
    #: The custom fusion kind (``__triton_nested_gemm_fusion`` on GPU,
    #: ``__ynn_fusion`` on CPU) or, for a custom-call, its target.
    custom_kind: str | None = None
    custom_call_target: str | None = None
    #: The decoded ``metadata={...}`` fields.
    metadata: dict[str, str] = field(default_factory=dict)
    op_name: str | None = None
    #: Innermost source location: ``source_file``/``source_line`` from the
    #: metadata, else the innermost frame of :attr:`stack_frame_id`.
    source_file: str | None = None
    source_line: int | None = None
    stack_frame_id: int | None = None
    is_root: bool = False
    #: ``parameter(N)``: N.
    parameter_number: int | None = None
    #: ``get-tuple-element``: the ``index``.
    tuple_index: int | None = None
    #: ``constant(...)``: the literal as written.
    literal: str | None = None
    #: The 1-based line of the text the instruction starts on.
    line: int = 0

    def __repr__(self) -> str:
        return f"<HloInstruction {self.name} = {self.shape} {self.opcode}>"


@dataclass(slots=True, eq=False)
class HloComputation:
    """A computation: its instructions in program order and its root."""

    name: str
    instructions: list[HloInstruction]
    root: str
    is_entry: bool = False
    #: The parameter instructions, ordered by parameter number.
    parameters: list[HloInstruction] = field(default_factory=list)
    #: The result shape from the signature (``-> f32[]``), when written.
    result_shape: Shape | None = None
    #: ``execution_thread`` and any other attribute after the signature.
    attributes: dict[str, str] = field(default_factory=dict)
    line: int = 0
    _by_name: dict[str, HloInstruction] = field(default_factory=dict, repr=False)
    _users: dict[str, list[str]] | None = field(default=None, repr=False)

    def __getitem__(self, name: str) -> HloInstruction:
        return self._by_name[name]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[HloInstruction]:
        return iter(self.instructions)

    def __len__(self) -> int:
        return len(self.instructions)

    def get(self, name: str) -> HloInstruction | None:
        return self._by_name.get(name)

    @property
    def root_instruction(self) -> HloInstruction:
        return self._by_name[self.root]

    def users(self, name: str) -> list[str]:
        """Names of the instructions that read ``name``, in program order."""
        if self._users is None:
            users: dict[str, list[str]] = {i.name: [] for i in self.instructions}
            for inst in self.instructions:
                for op in dict.fromkeys(inst.operands):
                    users.setdefault(op, []).append(inst.name)
            self._users = users
        return self._users.get(name, [])

    def __repr__(self) -> str:
        return f"<HloComputation {self.name} ({len(self.instructions)} instructions)>"


@dataclass(slots=True, eq=False)
class HloModule:
    """A parsed HLO module."""

    name: str
    #: Computations in the order of the text.
    computations: dict[str, HloComputation]
    #: Name of the entry computation.
    entry: str
    #: Header attributes (``entry_computation_layout``, ``is_scheduled``...), raw.
    attributes: dict[str, str] = field(default_factory=dict)
    #: The stack-frame tables, by their 1-based ids.
    file_names: dict[int, str] = field(default_factory=dict)
    function_names: dict[int, str] = field(default_factory=dict)
    #: id -> (file_name_id, function_name_id, line, end_line, column, end_column)
    file_locations: dict[int, tuple[int, int, int, int, int, int]] = field(default_factory=dict)
    #: id -> (file_location_id, parent frame id or 0)
    stack_frames: dict[int, tuple[int, int]] = field(default_factory=dict)

    @property
    def entry_computation(self) -> HloComputation:
        return self.computations[self.entry]

    def __getitem__(self, name: str) -> HloComputation:
        return self.computations[name]

    def frames(self, stack_frame_id: int | None) -> list[SourceLocation]:
        """The Python stack for a ``stack_frame_id``, innermost frame first.

        Unknown ids, and ids missing from the tables, give what could be
        resolved (possibly an empty list); this never raises.
        """
        out: list[SourceLocation] = []
        seen: set[int] = set()
        frame_id = stack_frame_id or 0
        while frame_id and frame_id not in seen:
            seen.add(frame_id)
            frame = self.stack_frames.get(frame_id)
            if frame is None:
                break
            location_id, frame_id = frame
            loc = self.file_locations.get(location_id)
            if loc is None:
                continue
            file_id, function_id, line, end_line, column, end_column = loc
            out.append(
                SourceLocation(
                    self.file_names.get(file_id, ""),
                    line,
                    self.function_names.get(function_id, ""),
                    column,
                    end_line,
                    end_column,
                )
            )
        return out

    def source_locations(self, instruction: HloInstruction) -> list[SourceLocation]:
        """Where an instruction came from, innermost first: its stack frames,
        or the metadata's ``source_file``/``source_line`` when it has no frames."""
        frames = self.frames(instruction.stack_frame_id)
        if frames:
            return frames
        md = instruction.metadata
        if "source_file" in md and md.get("source_line", "").isdigit():
            return [SourceLocation(md["source_file"], int(md["source_line"]))]
        return []

    def __repr__(self) -> str:
        return f"<HloModule {self.name} ({len(self.computations)} computations, entry {self.entry})>"
