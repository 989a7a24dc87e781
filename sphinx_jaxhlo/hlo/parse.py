"""Parse optimized HLO text into plain Python objects.

The input is what ``compiled.as_text()`` returns, or an XLA dump such as
``*after_optimizations.txt``: a header line (``HloModule name, attr=...``), the
optional ``FileNames`` / ``FunctionNames`` / ``FileLocations`` / ``StackFrames``
tables, then computations, one of them marked ``ENTRY``.  CPU, GPU and TPU
modules are all accepted: tiled layouts with memory spaces
(``{0,1:T(4,128)S(1)}``), ``/*index=5*/`` comments, JSON ``backend_config``,
metadata strings with escaped quotes, nested tuple shapes, dynamic dimensions
(``<=10``), literals (``constant({ {1,2},{3,4} })``) and control flow.  So
are the forms other printers and older or newer dumps write: ``} // name``
after computations, ``}, execution_thread="host"`` after computations off the
main thread, ``//`` comments, strings over several lines, compact tuple
indices (``%while.1#0``: element 0 of ``%while.1``, for which a
``get-tuple-element`` view named ``while.1#0`` is made), every narrow element
type (``f8e4m3b11fnuz``, ``f4e2m1fn``, ``s2``...) and buffer shapes
(``b(f32[4]{0})``).

The parser is a small tokenizer that balances ``()``, ``{}`` and ``[]`` and
skips quoted strings, so nesting never confuses it.  It knows the structure of
the text, not the meaning of every attribute: attribute values are kept as
raw text, and only the ones the analysis needs are decoded.

:func:`parse_module` raises :class:`HloParseError` (a :class:`ValueError`), and
nothing else, on input it cannot read; the error carries the 1-based line.
This module imports neither jax nor Sphinx.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = [
    "HOST_MEMORY_SPACE",
    "HloComputation",
    "HloInstruction",
    "HloModule",
    "HloParseError",
    "Shape",
    "SourceLocation",
    "parse_module",
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


def _element_bits(dtype: str) -> int | None:
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
        bits = _element_bits(self.dtype) or 0
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
#: XLA's memory space of host memory (``Layout::kHostMemorySpace``).
HOST_MEMORY_SPACE = 5


# -- module objects ----------------------------------------------------------


class SourceLocation(NamedTuple):
    """One frame of the Python stack an instruction was traced from."""

    file: str
    line: int
    function: str = ""
    column: int = 0
    end_line: int = 0
    end_column: int = 0


#: Attributes that name called computations.
_CALL_ATTRIBUTES = (
    "calls",
    "to_apply",
    "condition",
    "body",
    "branch_computations",
    "true_computation",
    "false_computation",
    "called_computations",
    "async_wrapped_computation",
)


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


# -- tokenizer ---------------------------------------------------------------

# Token kinds: "w" word, "s" string, ">" the arrow "->", else the punctuation
# character itself.  Newlines are not tokens: every token records its line.
# As in XLA's lexer (hlo_lexer.cc): ``/* */`` comments, ``//`` comments to the
# end of the line (XLA's dumps write ``} // name`` after computations), and
# strings that may hold raw newlines (the printer writes some attribute
# values so).
_TOKEN_RE = re.compile(
    r"[ \t\r\f\v]*(?:"
    r"(\n)"  # 1 newline
    r"|(/\*.*?\*/|//[^\n]*)"  # 2 comment
    r'|("(?:[^"\\]|\\.)*")'  # 3 string
    r"|(->)"  # 4 arrow
    r"|([{}()\[\],=:])"  # 5 punctuation
    r'|((?:<=|[^\s{}()\[\],=:"/]|/(?![*/]))+)'  # 6 word ("<=" belongs to words: f32[<=10])
    r"|(\S))",  # 7 anything else (other whitespace is skipped)
    re.S,
)


class _Tokens:
    __slots__ = ("end_lines", "ends", "kinds", "lines", "starts", "texts")

    def __init__(self, text: str) -> None:
        kinds: list[str] = []
        texts: list[str] = []
        lines: list[int] = []
        end_lines: list[int] = []
        starts: list[int] = []
        ends: list[int] = []
        line = 1
        spanning = 0  # the line of the first string that spans lines
        for m in _TOKEN_RE.finditer(text):
            group = m.lastindex
            if group == 1:
                line += 1
                continue
            if group == 2:
                comment = m.group(2)
                if comment[1] == "*":
                    line += comment.count("\n")
                continue
            tok = m.group(group or 7)
            if group == 7:
                if tok == '"':
                    what = "unterminated string: a '\"' that no '\"' closes"
                    if spanning:
                        what += f" (or the first string over several lines, from line {spanning}, is one left open)"
                elif tok == "/":
                    what = "unterminated comment: a '/*' that no '*/' closes"
                else:
                    what = f"unexpected character {tok!r}"
                raise HloParseError(what, line)
            kinds.append("w" if group == 6 else "s" if group == 3 else ">" if group == 4 else tok)
            texts.append(tok)
            lines.append(line)
            starts.append(m.end() - len(tok))
            ends.append(m.end())
            if group == 3 and "\n" in tok:
                spanning = spanning or line
                line += tok.count("\n")
            end_lines.append(line)
        self.kinds = kinds
        self.texts = texts
        self.lines = lines
        self.end_lines = end_lines
        self.starts = starts
        self.ends = ends


_CLOSE = {"(": ")", "{": "}", "[": "]"}
_ESCAPE_RE = re.compile(r"\\([0-7]{1,3}|x[0-9a-fA-F]{1,2}|.)", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\", "?": "?"}


def _unquote(token: str) -> str:
    """Decode a C-escaped string token (with its quotes), as ``absl::CEscape``
    writes it: octal escapes are UTF-8 bytes."""
    body = token[1:-1]
    if "\\" not in body:
        return body
    out = bytearray()
    pos = 0
    for m in _ESCAPE_RE.finditer(body):
        out += body[pos : m.start()].encode("utf-8", "surrogatepass")
        esc = m.group(1)
        if esc[0] in "01234567":
            out.append(int(esc, 8) & 0xFF)
        elif esc[0] == "x" and len(esc) > 1:
            out.append(int(esc[1:], 16))
        else:
            out += _SIMPLE_ESCAPES.get(esc, esc).encode("utf-8", "surrogatepass")
        pos = m.end()
    out += body[pos:].encode("utf-8", "surrogatepass")
    return out.decode("utf-8", "replace")


_DIM_RE = re.compile(r"(<=)?(\d+)|\?")
_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


# -- parser ------------------------------------------------------------------


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        t = _Tokens(text)
        self.kinds = t.kinds
        self.texts = t.texts
        self.lines = t.lines
        self.end_lines = t.end_lines
        self.starts = t.starts
        self.ends = t.ends
        self.n = len(t.kinds)
        self.pos = 0

    # -- token helpers

    def error(self, message: str, pos: int | None = None) -> HloParseError:
        p = self.pos if pos is None else pos
        if p < self.n:
            return HloParseError(f"{message} (at {self.texts[p][:40]!r})", self.lines[p])
        return HloParseError(f"{message} (at end of text)", self.lines[-1] if self.lines else 1)

    def kind(self, offset: int = 0) -> str:
        p = self.pos + offset
        return self.kinds[p] if p < self.n else ""

    def expect(self, kind: str, what: str) -> str:
        if self.pos >= self.n or self.kinds[self.pos] != kind:
            raise self.error(f"expected {what}")
        tok = self.texts[self.pos]
        self.pos += 1
        return tok

    def word(self, what: str) -> str:
        return self.expect("w", what)

    def same_line(self) -> bool:
        """Whether the current token is on the line where the previous one ends."""
        return 0 < self.pos < self.n and self.lines[self.pos] == self.end_lines[self.pos - 1]

    def skip_balanced(self) -> int:
        """Skip a bracketed group starting at the current token; return the
        index of its closing token."""
        kinds = self.kinds
        openers = [self.pos]
        p = self.pos + 1
        n = self.n
        while p < n:
            k = kinds[p]
            if k in _CLOSE:
                openers.append(p)
            elif k in ")}]":
                opener = openers.pop()
                if k != _CLOSE[kinds[opener]]:
                    raise self.error(f"{kinds[opener]!r} is not closed (found {k!r} on line {self.lines[p]})", opener)
                if not openers:
                    self.pos = p + 1
                    return p
            p += 1
        raise self.error(f"{kinds[openers[-1]]!r} is not closed", openers[-1])

    def raw(self, first: int, last: int) -> str:
        """Source text from token ``first`` to token ``last`` inclusive."""
        return self.text[self.starts[first] : self.ends[last]]

    def attribute_value(self, before_body: bool = False) -> tuple[int, int]:
        """Scan one attribute value: tokens up to a comma at depth 0, the end
        of the line at depth 0, or an unmatched closing brace (with
        ``before_body``, also an opening brace after the first token: the
        computation body).  Returns the first and last token indices."""
        first = self.pos
        kinds = self.kinds
        while self.pos < self.n:
            k = kinds[self.pos]
            if before_body and k == "{" and self.pos > first:
                break
            if k in _CLOSE:
                self.skip_balanced()
            elif k == "," or k in ")}]":
                break
            else:
                self.pos += 1
            if self.pos < self.n and not self.same_line():
                break
        if self.pos == first:
            raise self.error("expected an attribute value")
        return first, self.pos - 1

    def attributes(self, before_body: bool = False) -> dict[str, str]:
        """``, key=value`` pairs on the current line."""
        attrs: dict[str, str] = {}
        while self.kind() == "," and self.same_line():
            self.pos += 1
            key = self.word("attribute name")
            self.expect("=", "'=' after attribute name")
            first, last = self.attribute_value(before_body)
            attrs[key] = self.raw(first, last)
        return attrs

    # -- shapes

    def shape(self) -> Shape:
        if self.kind() == "(":
            self.pos += 1
            elements: list[Shape] = []
            if self.kind() != ")":
                elements.append(self.shape())
                while self.kind() == ",":
                    self.pos += 1
                    elements.append(self.shape())
            self.expect(")", "')' closing a tuple shape")
            return Shape(tuple_shapes=tuple(elements))
        dtype = self.word("a shape")
        if dtype == "b" and self.kind() == "(" and self.starts[self.pos] == self.ends[self.pos - 1]:
            # A buffer shape, b(f32[4]{0}): the array shape of the buffer.
            self.pos += 1
            inner = self.shape()
            self.expect(")", "')' closing a buffer shape b(...)")
            if inner.tuple_shapes is not None or inner.is_buffer:
                raise self.error("a buffer shape b(...) holds an array shape", self.pos - 1)
            return Shape(inner.dtype, inner.dims, inner.dynamic, inner.layout, is_buffer=True)
        if _element_bits(dtype) is None:
            raise self.error(f"unknown element type {dtype!r}", self.pos - 1)
        self.expect("[", "'[' after the element type")
        dims: list[int] = []
        dynamic: list[bool] = []
        if self.kind() != "]":
            while True:
                tok = self.word("a dimension")
                m = _DIM_RE.fullmatch(tok)
                if m is None:
                    raise self.error(f"bad dimension {tok!r}", self.pos - 1)
                dims.append(int(m.group(2)) if m.group(2) else 0)
                dynamic.append(m.group(2) is None or m.group(1) is not None)
                if self.kind() != ",":
                    break
                self.pos += 1
        self.expect("]", "']' closing the dimensions")
        layout = None
        # A layout is written right after the dimensions, with no space.
        if self.kind() == "{" and self.starts[self.pos] == self.ends[self.pos - 1]:
            open_ = self.pos
            close = self.skip_balanced()
            layout = self.text[self.ends[open_] : self.starts[close]]
        return Shape(dtype, tuple(dims), tuple(dynamic) if any(dynamic) else (), layout)

    # -- module

    def module(self) -> HloModule:
        if self.n == 0:
            raise HloParseError("empty text: no HloModule", 1)
        if self.word("'HloModule'") != "HloModule":
            raise self.error("expected 'HloModule'", 0)
        name = self.word("module name")
        header = self.attributes()
        module = HloModule(name=name, computations={}, entry="", attributes=header)
        entry = ""
        while self.pos < self.n:
            tok = self.texts[self.pos]
            if self.kinds[self.pos] != "w":
                raise self.error("expected a computation (its name, or 'ENTRY' and its name) or a stack-frame table")
            if tok in _TABLES and self.kind(1) in ("w", ""):
                self.pos += 1
                self.table(tok, module)
                continue
            is_entry = tok == "ENTRY"
            if is_entry:
                self.pos += 1
            comp = self.computation(is_entry)
            if comp.name in module.computations:
                raise HloParseError(f"duplicate computation {comp.name!r}", comp.line)
            if is_entry:
                if entry:
                    raise HloParseError(f"second ENTRY computation {comp.name!r}", comp.line)
                entry = comp.name
            module.computations[comp.name] = comp
        if not module.computations:
            raise self.error("no computations")
        if not entry:
            # As XLA's parser does: without ENTRY, the last computation is the entry.
            entry = next(reversed(module.computations))
            module.computations[entry].is_entry = True
        module.entry = entry
        self.link(module)
        return module

    def table(self, title: str, module: HloModule) -> None:
        while self.kind() == "w" and self.texts[self.pos].isdigit():
            index = int(self.texts[self.pos])
            self.pos += 1
            if title in ("FileNames", "FunctionNames"):
                value = _unquote(self.expect("s", "a quoted name"))
                (module.file_names if title == "FileNames" else module.function_names)[index] = value
                continue
            if self.kind() != "{":
                raise self.error("expected '{' in a stack-frame table")
            fields: dict[str, int] = {}
            self.pos += 1
            while self.kind() == "w":
                key = self.texts[self.pos]
                self.pos += 1
                self.expect("=", "'='")
                val = self.word("a number")
                try:
                    fields[key] = int(val)
                except ValueError:
                    raise self.error(f"expected a number for {key!r}", self.pos - 1) from None
            self.expect("}", "'}'")
            if title == "FileLocations":
                module.file_locations[index] = (
                    fields.get("file_name_id", 0),
                    fields.get("function_name_id", 0),
                    fields.get("line", 0),
                    fields.get("end_line", 0),
                    fields.get("column", 0),
                    fields.get("end_column", 0),
                )
            else:
                # XLA prints the parent as the proto's 1-based id plus one, so
                # 1 means "no parent" (hlo_module.cc, PrintStackFrameIndex).
                module.stack_frames[index] = (
                    fields.get("file_location_id", 0),
                    max(fields.get("parent_frame_id", 0) - 1, 0),
                )

    def computation(self, is_entry: bool) -> HloComputation:
        line = self.lines[self.pos] if self.pos < self.n else 0
        name = self.word("computation name").lstrip("%")
        result_shape = None
        if self.kind() == "(":
            self.pos += 1
            while self.kind() != ")":
                self.word("parameter name")
                self.expect(":", "':' after a parameter name")
                self.shape()
                if self.kind() != ",":
                    break
                self.pos += 1
            self.expect(")", "')' closing the parameters")
        if self.kind() == ">":
            self.pos += 1
            result_shape = self.shape()
        attrs = self.attributes(before_body=True)
        self.expect("{", f"'{{' opening computation {name!r}")
        instructions: list[HloInstruction] = []
        by_name: dict[str, HloInstruction] = {}
        root = ""
        while self.kind() != "}":
            if self.pos >= self.n:
                raise self.error(f"computation {name!r} is not closed")
            inst = self.instruction()
            if inst.name in by_name:
                raise HloParseError(f"duplicate instruction {inst.name!r} in {name!r}", inst.line)
            if inst.is_root:
                if root:
                    raise HloParseError(f"second ROOT in {name!r}", inst.line)
                root = inst.name
            instructions.append(inst)
            by_name[inst.name] = inst
        self.pos += 1
        # After the closing brace: ``}, execution_thread="host"`` for a
        # computation off the main thread (hlo_computation.cc, Print).
        while self.kind() == "," and self.same_line():
            self.pos += 1
            key = self.word(f"an attribute name after the '}}' closing computation {name!r}")
            if self.kind() != "=" or not self.same_line():
                raise HloParseError(f"expected '=' after {key!r} (an attribute of computation {name!r})",
                                    self.end_lines[self.pos - 1])
            self.pos += 1
            first, last = self.attribute_value()
            attrs[key] = self.raw(first, last)
        if not instructions:
            raise HloParseError(f"computation {name!r} has no instructions", line)
        if not root:
            root = instructions[-1].name
            instructions[-1].is_root = True
        compact = False
        for inst in instructions:
            for op in inst.operands:
                if op not in by_name:
                    if "#" not in op:
                        raise HloParseError(f"{inst.name!r} reads unknown {op!r}", inst.line)
                    compact = True
        if compact:
            instructions = _tuple_views(instructions, by_name)
        params = sorted(
            (i for i in instructions if i.opcode == "parameter"),
            key=lambda i: i.parameter_number or 0,
        )
        return HloComputation(
            name=name,
            instructions=instructions,
            root=root,
            is_entry=is_entry,
            parameters=params,
            result_shape=result_shape,
            attributes=attrs,
            line=line,
            _by_name=by_name,
        )

    def instruction(self) -> HloInstruction:
        line = self.lines[self.pos]
        is_root = False
        if self.kind() == "w" and self.texts[self.pos] == "ROOT":
            is_root = True
            self.pos += 1
        name = self.word("instruction name").lstrip("%")
        if not name:
            raise self.error("empty instruction name", self.pos - 1)
        self.expect("=", "'=' after the instruction name")
        shape = self.shape()
        opcode = self.word("opcode")
        if self.kind() != "(":
            raise self.error("expected '(' after the opcode")
        open_ = self.pos
        close = self.skip_balanced()
        inst = HloInstruction(name=name, opcode=opcode, shape=shape, is_root=is_root, line=line)
        if opcode == "constant":
            inst.literal = self.raw(open_ + 1, close - 1) if close > open_ + 1 else ""
        elif opcode == "parameter":
            body = self.raw(open_ + 1, close - 1).strip() if close > open_ + 1 else ""
            if not body.isdigit():
                raise HloParseError(f"parameter {name!r} has no number", line)
            inst.parameter_number = int(body)
        else:
            inst.operands = self.operands(open_ + 1, close)
        inst.attributes = self.attributes()
        if self.pos < self.n and self.same_line() and self.kinds[self.pos] != "}":
            raise self.error(f"expected ',' and an attribute, or the end of instruction {name!r}")
        _decode_attributes(inst)
        return inst

    def operands(self, first: int, end: int) -> list[str]:
        """Operand names between tokens ``first`` and ``end`` (exclusive):
        pieces separated by commas at depth 0, each ``%name`` or, in the long
        form, ``shape %name``; the name is the last word at depth 0."""
        names: list[str] = []
        depth = 0
        last_word = ""
        kinds, texts = self.kinds, self.texts
        for p in range(first, end):
            k = kinds[p]
            if k in "({[":
                depth += 1
            elif k in ")}]":
                depth -= 1
            elif depth == 0:
                if k == "w":
                    last_word = texts[p]
                elif k == ",":
                    if not last_word:
                        raise self.error("missing operand", p)
                    names.append(last_word.lstrip("%"))
                    last_word = ""
        if last_word:
            names.append(last_word.lstrip("%"))
        elif names:
            raise self.error("missing operand", end)
        return names

    def link(self, module: HloModule) -> None:
        """Check that called computations exist and that no computation calls
        itself, directly or not; resolve source locations."""
        callees: dict[str, list[tuple[str, HloInstruction]]] = {}
        for comp in module.computations.values():
            calls = callees[comp.name] = []
            for inst in comp.instructions:
                for callee in inst.called_computations:
                    if callee not in module.computations:
                        raise HloParseError(f"{inst.name!r} calls unknown computation {callee!r}", inst.line)
                    calls.append((callee, inst))
                if inst.source_line is None and inst.stack_frame_id is not None:
                    frames = module.frames(inst.stack_frame_id)
                    if frames:
                        inst.source_file = frames[0].file
                        inst.source_line = frames[0].line
        _check_acyclic(callees)


def _tuple_views(instructions: list[HloInstruction], by_name: dict[str, HloInstruction]) -> list[HloInstruction]:
    """Make the ``get-tuple-element`` views that compact tuple indices stand for.

    XLA's dumps with ``xla_dump_compact_gte`` leave out the
    ``get-tuple-element`` lines and name the element in the operand:
    ``%while.1#0`` is element 0 of ``%while.1``, ``%p#1#0`` element 0 of
    element 1 (XLA's names never hold a ``#``).  Each view is named as the
    operand is written, made once, and placed before its first reader.
    """
    out: list[HloInstruction] = []
    for inst in instructions:
        if any("#" in op and op not in by_name for op in inst.operands):
            for op in inst.operands:
                if "#" in op and op not in by_name:
                    _tuple_view(op, inst, by_name, out)
        out.append(inst)
    return out


def _tuple_view(ref: str, user: HloInstruction, by_name: dict[str, HloInstruction],
                out: list[HloInstruction]) -> None:
    parts = ref.split("#")
    current = parts[0]
    source = by_name.get(current)
    if source is None:
        raise HloParseError(f"{user.name!r} reads {ref!r}: a compact tuple index into unknown {current!r}", user.line)
    for index_text in parts[1:]:
        name = f"{current}#{index_text}"
        view = by_name.get(name)
        if view is None:
            if not (index_text.isascii() and index_text.isdigit()):
                raise HloParseError(f"{user.name!r} reads {ref!r}: a compact tuple index is '%name#N', "
                                    f"N a number, not {index_text!r}", user.line)
            shapes = source.shape.tuple_shapes
            if shapes is None:
                raise HloParseError(f"{user.name!r} reads {ref!r}: a compact tuple index into {current!r}, "
                                    f"which is not a tuple ({source.shape})", user.line)
            index = int(index_text)
            if index >= len(shapes):
                raise HloParseError(f"{user.name!r} reads {ref!r}: compact tuple index {index} of {current!r}, "
                                    f"which has {len(shapes)} elements", user.line)
            view = HloInstruction(name=name, opcode="get-tuple-element", shape=shapes[index], operands=[current],
                                  attributes={"index": str(index)}, tuple_index=index, line=user.line)
            by_name[name] = view
            out.append(view)
        current, source = name, view


def _check_acyclic(callees: dict[str, list[tuple[str, HloInstruction]]]) -> None:
    """Raise when the call graph has a cycle (XLA requires a DAG)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in callees:
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter(callees[start]))]
        while stack:
            name, pending = stack[-1]
            for callee, inst in pending:
                mark = state.get(callee)
                if mark == 1:
                    raise HloParseError(f"{inst.name!r} in {name!r} calls {callee!r}, which calls it back", inst.line)
                if mark is None:
                    state[callee] = 1
                    stack.append((callee, iter(callees[callee])))
                    break
            else:
                state[name] = 2
                stack.pop()


_NAME_LIST_RE = re.compile(r"[^\s{},]+")


def _decode_attributes(inst: HloInstruction) -> None:
    """Fill the decoded fields of an instruction from its raw attributes."""
    attrs = inst.attributes
    line = inst.line
    kind = attrs.get("kind")
    if kind is not None:
        inst.fusion_kind = kind
    elif inst.opcode == "fusion":
        raise HloParseError(f"fusion {inst.name!r} has no kind", line)
    for key in _CALL_ATTRIBUTES:
        value = attrs.get(key)
        if value is not None:
            for callee in _NAME_LIST_RE.findall(value):
                inst.called_computations.append(callee.lstrip("%"))
    if inst.opcode == "fusion" and "calls" not in attrs:
        raise HloParseError(f"fusion {inst.name!r} has no calls=", line)
    if inst.opcode == "get-tuple-element":
        index = attrs.get("index", "")
        if not index.isdigit():
            raise HloParseError(f"get-tuple-element {inst.name!r} has no index", line)
        inst.tuple_index = int(index)
    metadata = attrs.get("metadata")
    if metadata is not None:
        inst.metadata = _parse_metadata(metadata, line)
        md = inst.metadata
        inst.op_name = md.get("op_name")
        sfid = md.get("stack_frame_id", "")
        if sfid.isdigit():
            inst.stack_frame_id = int(sfid)
        if "source_file" in md:
            inst.source_file = md["source_file"]
        if md.get("source_line", "").isdigit():
            inst.source_line = int(md["source_line"])
    target = attrs.get("custom_call_target")
    if target is not None:
        inst.custom_call_target = _unquote(target) if target.startswith('"') and len(target) > 1 else target
    config = attrs.get("backend_config")
    if config is not None:
        if config.startswith('"') and len(config) > 1:
            config = _unquote(config)
        if config.startswith("{"):
            try:
                decoded = json.loads(config)
            except ValueError:  # not JSON: keep the raw text only
                decoded = None
            if isinstance(decoded, dict):
                inst.backend_config = decoded
    inst.custom_kind = _custom_kind(inst)


def _custom_kind(inst: HloInstruction) -> str | None:
    if inst.custom_call_target is not None:
        return inst.custom_call_target
    config = inst.backend_config
    if config is None:
        return None
    for key in ("fusion_backend_config", "fusion_config"):
        section = config.get(key)
        if isinstance(section, dict):
            kind = section.get("kind")
            if isinstance(kind, str) and kind:
                return kind
    return None


_METADATA_RE = re.compile(r'\s*([A-Za-z_][\w.]*)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s"{}]+)\s*', re.S)


def _parse_metadata(raw: str, line: int) -> dict[str, str]:
    """``{op_name="..." source_file="..." source_line=5 stack_frame_id=2}``."""
    body = raw.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise HloParseError("metadata is not in braces", line)
    body = body[1:-1]
    out: dict[str, str] = {}
    pos = 0
    n = len(body)
    while pos < n:
        m = _METADATA_RE.match(body, pos)
        if m is None:
            # A field this parser does not know the form of (a nested
            # message): skip to the next space outside braces and quotes.
            pos = _skip_metadata_field(body, pos)
            continue
        value = m.group(2)
        out[m.group(1)] = _unquote(value) if value.startswith('"') else value
        pos = m.end()
    return out


_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


def _skip_metadata_field(body: str, pos: int) -> int:
    depth = 0
    n = len(body)
    while pos < n:
        c = body[pos]
        if c == '"':
            m = _STRING_RE.match(body, pos)
            pos = m.end() if m else n
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c.isspace() and depth <= 0:
            return pos + 1
        pos += 1
    return n


def parse_module(text: str) -> HloModule:
    """Parse the text of one optimized HLO module.

    :param text: ``compiled.as_text()`` or the content of an XLA dump file.
    :returns: the module.
    :raises HloParseError: when the text is not a module this parser can read
        (this is the only exception it raises on bad input).
    """
    if not isinstance(text, str):
        raise HloParseError(f"expected HLO text, got {type(text).__name__}")
    parser = _Parser(text)
    try:
        return parser.module()
    except HloParseError:
        raise
    except (IndexError, KeyError, ValueError, TypeError, RecursionError) as exc:
        # A defect of this parser on unusual input; still the one documented
        # exception, with the line reached.
        raise parser.error(f"cannot parse: {type(exc).__name__}: {exc}") from exc
