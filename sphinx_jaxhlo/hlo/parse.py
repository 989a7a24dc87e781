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
main thread, ``//`` comments, strings over several lines, instructions
printed without a shape (``t = tuple(a, b)``: inferred from the operands, see
:mod:`sphinx_jaxhlo.hlo.decode`), compact tuple
indices (``%while.1#0``: element 0 of ``%while.1``, for which a
``get-tuple-element`` view named ``while.1#0`` is made), every narrow element
type (``f8e4m3b11fnuz``, ``f4e2m1fn``, ``s2``...) and buffer shapes
(``b(f32[4]{0})``).

Two readers share the work.  :func:`parse_module` first gives the text to
:func:`sphinx_jaxhlo.hlo.lines.read_lines`, which reads the ordinary form XLA
prints (one instruction a line) several times faster and gives up on
anything else; the grammar here then reads it from the start, and it alone
reports errors, so both give the same module or the same error.

The grammar is read here, over the tokens of :mod:`sphinx_jaxhlo.hlo.tokens`:
``()``, ``{}`` and ``[]`` are balanced and quoted strings are tokens of their
own, so nesting never confuses it.  The parser knows the structure of the
text, not the meaning of every attribute: attribute values are kept as raw text, and only the ones the
analysis needs are decoded (:mod:`sphinx_jaxhlo.hlo.decode`, which also makes
the views of compact tuple indices).  The objects built are those of
:mod:`sphinx_jaxhlo.hlo.model`.

:func:`parse_module` raises :class:`~sphinx_jaxhlo.hlo.model.HloParseError`
(a :class:`ValueError`), and nothing else, on input it cannot read; the error
carries the 1-based line.  This module imports neither jax nor Sphinx.
"""

from __future__ import annotations

import re

from sphinx_jaxhlo.hlo.assemble import finish_computation, finish_module
from sphinx_jaxhlo.hlo.decode import UNWRITTEN, MetadataMemo, decode_attributes
from sphinx_jaxhlo.hlo.lines import read_lines
from sphinx_jaxhlo.hlo.model import HloComputation, HloInstruction, HloModule, HloParseError, Shape, element_bits
from sphinx_jaxhlo.hlo.tokens import Tokens, unquote

__all__ = ["parse_module"]

_CLOSE = {"(": ")", "{": "}", "[": "]"}
_DIM_RE = re.compile(r"(<=)?(\d+)|\?")
_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


# -- parser ------------------------------------------------------------------


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        t = Tokens(text)
        self.kinds = t.kinds
        self.texts = t.texts
        self.lines = t.lines
        self.end_lines = t.end_lines
        self.starts = t.starts
        self.ends = t.ends
        self.n = len(t.kinds)
        self.pos = 0
        self.metadata_memo: MetadataMemo = {}

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
        if element_bits(dtype) is None:
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
        return finish_module(module, entry)

    def table(self, title: str, module: HloModule) -> None:
        while self.kind() == "w" and self.texts[self.pos].isdigit():
            index = int(self.texts[self.pos])
            self.pos += 1
            if title in ("FileNames", "FunctionNames"):
                value = unquote(self.expect("s", "a quoted name"))
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
        return finish_computation(name, line, is_entry, instructions, by_name, root, result_shape, attrs)

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
        if self.kind() == "w" and self.kind(1) == "(" and not (
                self.texts[self.pos] == "b" and self.starts[self.pos + 1] == self.ends[self.pos]):
            shape = UNWRITTEN  # an opcode right after '=': the shape is left to infer
        else:
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
        decode_attributes(inst, self.metadata_memo)
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

def parse_module(text: str) -> HloModule:
    """Parse the text of one optimized HLO module.

    :param text: ``compiled.as_text()`` or the content of an XLA dump file.
    :returns: the module.
    :raises HloParseError: when the text is not a module this parser can read
        (this is the only exception it raises on bad input).
    """
    if not isinstance(text, str):
        raise HloParseError(f"expected HLO text, got {type(text).__name__}")
    module = read_lines(text)
    if module is not None:
        return module
    parser = _Parser(text)
    try:
        return parser.module()
    except HloParseError:
        raise
    except (IndexError, KeyError, ValueError, TypeError, RecursionError) as exc:
        # A defect of this parser on unusual input; still the one documented
        # exception, with the line reached.
        raise parser.error(f"cannot parse: {type(exc).__name__}: {exc}") from exc
