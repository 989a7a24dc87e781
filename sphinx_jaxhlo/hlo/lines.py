"""The reader of ordinary HLO text: one line at a time, a few regular expressions a line.

What XLA prints is regular: the header, the stack-frame tables, and each
computation as a header line, one line per instruction and a closing brace.
:func:`read_lines` reads text of exactly that form several times faster than
the grammar over tokens (:mod:`sphinx_jaxhlo.hlo.parse`), and gives up (returns
``None``) at the first thing it does not read: a character other than
printable ASCII and newlines (tabs included), a comment other than
``/*index=N*/`` between operands or ``// name`` after a closing brace, a string
or a bracket left open at the end of its line, operands written with their
shapes, a buffer shape, a name or attribute key of other characters than
``[A-Za-z0-9_.#-]``, or anything the grammar would refuse.  The grammar then
reads the text from the start; it alone says what is wrong with a text, so a
text gives the same module, or the same error, whichever reader took it
(``tests/test_hlo_lines.py`` compares them on every stored module and on
mutations of them).

What it keeps is what the grammar keeps: attribute values as raw text (from
their first character to the end of their last token), layouts as written,
literals as written; the same objects (:mod:`sphinx_jaxhlo.hlo.model`), decoded
and assembled by the same code (:mod:`sphinx_jaxhlo.hlo.decode`,
:mod:`sphinx_jaxhlo.hlo.assemble`).
"""

from __future__ import annotations

import re

from sphinx_jaxhlo.hlo.assemble import finish_computation, finish_module
from sphinx_jaxhlo.hlo.decode import UNWRITTEN, MetadataMemo, decode_attributes
from sphinx_jaxhlo.hlo.model import HloInstruction, HloModule, Shape, element_bits
from sphinx_jaxhlo.hlo.tokens import unquote

__all__ = ["read_lines"]

#: Anything but printable ASCII and newlines: left to the grammar.
_UNUSUAL = re.compile(r"[^\x20-\x7e\n]")
_NAME = r"[A-Za-z0-9_.#\-]+"
_MODULE_HEAD = re.compile(r" *HloModule +(" + _NAME + r")")
_COMPUTATION_HEAD = re.compile(r" *(ENTRY +)?%?(" + _NAME + r") *")
_PARAMETER = re.compile(r" *%?" + _NAME + r" *: *")
_ARROW = re.compile(r" *-> *")
_BODY_OPENS = re.compile(r" *\{ *$")
_CLOSING = re.compile(r" *\}(?: *//.*)? *$")
_CLOSING_WITH_ATTRIBUTES = re.compile(r" *\}(?= *,)")
_INSTRUCTION_HEAD = re.compile(r" *(ROOT +)?%?(" + _NAME + r") *= *")
#: The head of most instructions at once: name, array shape, opcode.
_ORDINARY_HEAD = re.compile(r" *(ROOT +)?%?(" + _NAME + r") *= *([a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?) +"
                            r"([a-z][a-z0-9\-]*)\(")
_OPCODE = re.compile(r"([a-z][a-z0-9\-]*)\(")
_SPACES = re.compile(r" +")
_ARRAY = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\](?:\{([^{}]*)\})?")
_DIM = re.compile(r"(<=)?(\d+)|\?")
_OPERAND = re.compile(r" *(%?" + _NAME + r") *")
_COMMENT = re.compile(r"/\*.*?\*/")
_ATTRIBUTE_KEY = re.compile(r" *, *([A-Za-z_][\w.\-]*) *= *")
_STRING = r'"(?:[^"\\]|\\.)*+"'
#: Between brackets at the top of an attribute value: anything but a comma, a bracket, a comment.
_TOP = r'(?:[^,(){}\[\]"/]++|' + _STRING + r"|/(?![*/]))*+"
#: Inside brackets: anything but a bracket (and a comment that does not close on its line).
_INSIDE = r'(?:[^(){}\[\]"/]++|' + _STRING + r"|/(?![*/])|/\*.*?\*/)*+"
_SKIP_TOP = re.compile(_TOP)
_SKIP_INSIDE = re.compile(_INSIDE)


def _nested(depth: int) -> str:
    """A bracketed group, brackets balanced and strings closed, nested at most ``depth`` deep."""
    inside = _INSIDE[:-3] + (f"|{_nested(depth - 1)})*+" if depth > 1 else ")*+")
    return rf"(?:\({inside}\)|\{{{inside}\}}|\[{inside}\])"


#: An attribute value whose groups nest at most two deep (metadata, dimensions, most
#: backend configs), matched at once; others go bracket by bracket (:func:`_value_end`).
_VALUE = re.compile(_TOP[:-3] + "|" + _nested(2) + ")*+")
_GROUP = re.compile(_nested(2))
_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_NAME_ENTRY = re.compile(r' *(\d+) +("(?:[^"\\]|\\.)*") *$')
_FRAME_ENTRY = re.compile(r" *(\d+) *\{((?: *[A-Za-z_]\w* *= *-?\d+\b)*) *\} *$")
_FRAME_FIELD = re.compile(r"([A-Za-z_]\w*) *= *(-?\d+)\b")
_CLOSE = {"(": ")", "{": "}", "[": "]"}


class _Unread(Exception):
    """This reader does not read the text: the grammar will."""


def read_lines(text: str) -> HloModule | None:
    """The module of an HLO text of the ordinary form, or ``None`` when the
    text is not of that form or is not a module (the grammar reads it then)."""
    if _UNUSUAL.search(text) is not None:
        return None
    try:
        return _Reader(text.split("\n")).module()
    except (_Unread, ValueError, IndexError, KeyError, TypeError, RecursionError):
        return None  # HloParseError included: the grammar says what is wrong


class _Reader:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.shapes: dict[str, Shape] = {}
        self.metadata_memo: MetadataMemo = {}

    def module(self) -> HloModule:
        lines = self.lines
        count = len(lines)
        i = 0
        while i < count and not lines[i].strip(" "):
            i += 1
        if i == count:
            raise _Unread
        m = _MODULE_HEAD.match(lines[i])
        if m is None:
            raise _Unread
        module = HloModule(name=m.group(1), computations={}, entry="",
                           attributes=self.attributes(lines[i], m.end()))
        entry = ""
        table = ""
        i += 1
        while i < count:
            line = lines[i]
            stripped = line.strip(" ")
            if not stripped:
                i += 1
                continue
            if stripped in _TABLES:
                table = stripped
                i += 1
                continue
            if table and stripped[0].isdigit():
                self.table_entry(table, line, module)
                i += 1
                continue
            table = ""
            i, is_entry, name = self.computation(i, module)
            if is_entry:
                if entry:
                    raise _Unread
                entry = name
        if not module.computations:
            raise _Unread
        return finish_module(module, entry)

    def table_entry(self, table: str, line: str, module: HloModule) -> None:
        if table in ("FileNames", "FunctionNames"):
            m = _NAME_ENTRY.match(line)
            if m is None:
                raise _Unread
            (module.file_names if table == "FileNames" else module.function_names)[int(m.group(1))] = \
                unquote(m.group(2))
            return
        m = _FRAME_ENTRY.match(line)
        if m is None:
            raise _Unread
        fields = {key: int(value) for key, value in _FRAME_FIELD.findall(m.group(2))}
        index = int(m.group(1))
        if table == "FileLocations":
            module.file_locations[index] = (
                fields.get("file_name_id", 0), fields.get("function_name_id", 0), fields.get("line", 0),
                fields.get("end_line", 0), fields.get("column", 0), fields.get("end_column", 0))
        else:
            # as the grammar reads it (hlo_module.cc prints the parent's id plus one)
            module.stack_frames[index] = (fields.get("file_location_id", 0),
                                          max(fields.get("parent_frame_id", 0) - 1, 0))

    def computation(self, i: int, module: HloModule) -> tuple[int, bool, str]:
        """Read the computation whose header is line ``i``; the line after it,
        whether it is the entry, and its name."""
        lines = self.lines
        line = lines[i]
        m = _COMPUTATION_HEAD.match(line)
        if m is None or m.group(2) in _TABLES or (m.group(2) == "ENTRY" and m.group(1) is None):
            raise _Unread
        is_entry, name = m.group(1) is not None, m.group(2)
        if name in module.computations:
            raise _Unread
        header_line = i + 1
        p = m.end()
        if line.startswith("(", p):
            p += 1
            while not line.startswith(")", p):
                m = _PARAMETER.match(line, p)
                if m is None:
                    raise _Unread
                _, p = self.shape(line, m.end())
                m = _SPACES.match(line, p)
                if m is not None:
                    p = m.end()
                if line.startswith(",", p):
                    p = _after_comma(line, p + 1)
                elif not line.startswith(")", p):
                    raise _Unread
            p += 1
        result_shape = None
        m = _ARROW.match(line, p)
        if m is not None:
            result_shape, p = self.shape(line, m.end())
        if _BODY_OPENS.match(line, p) is None:
            raise _Unread
        instructions: list[HloInstruction] = []
        by_name: dict[str, HloInstruction] = {}
        root = ""
        attrs: dict[str, str] = {}
        i += 1
        count = len(lines)
        while True:
            if i >= count:
                raise _Unread
            line = lines[i]
            i += 1
            first = line.lstrip(" ")[:1]
            if first == "}":
                if _CLOSING.match(line) is not None:
                    break
                m = _CLOSING_WITH_ATTRIBUTES.match(line)
                if m is None:
                    raise _Unread
                attrs = self.attributes(line, m.end())
                break
            if not first:
                continue
            inst = self.instruction(line, i)
            if inst.name in by_name or (inst.is_root and root):
                raise _Unread
            if inst.is_root:
                root = inst.name
            instructions.append(inst)
            by_name[inst.name] = inst
        module.computations[name] = finish_computation(name, header_line, is_entry, instructions, by_name, root,
                                                       result_shape, attrs)
        return i, is_entry, name

    def instruction(self, line: str, number: int) -> HloInstruction:
        m = _ORDINARY_HEAD.match(line)
        if m is not None:
            written = m.group(3)
            shape = self.shapes.get(written)
            if shape is None:
                shape = self.shape(written, 0)[0]
            opcode = m.group(4)
            open_ = m.end() - 1
        else:
            m = _INSTRUCTION_HEAD.match(line)
            if m is None:
                raise _Unread
            p = m.end()
            op = _OPCODE.match(line, p)
            if op is not None:
                shape = UNWRITTEN
            else:
                shape, p = self.shape(line, p)
                spaces = _SPACES.match(line, p)
                if spaces is None:
                    raise _Unread
                op = _OPCODE.match(line, spaces.end())
                if op is None:
                    raise _Unread
            opcode = op.group(1)
            open_ = op.end() - 1
        name = m.group(2)
        if opcode == "b" or (m.group(1) is None and name == "ROOT"):  # a buffer shape b(...); ROOT without a name
            raise _Unread
        inst = HloInstruction(name=name, opcode=opcode, shape=shape, is_root=m.group(1) is not None, line=number)
        if opcode == "constant":
            group = _GROUP.match(line, open_)
            close = (group.end() if group is not None else _group_end(line, open_)) - 1
            inst.literal = line[open_ + 1 : close].strip(" ")
        else:
            close = line.find(")", open_)
            if close < 0:
                raise _Unread
            inside = line[open_ + 1 : close]
            if opcode == "parameter":
                body = inside.strip(" ")
                if not body.isdigit():
                    raise _Unread
                inst.parameter_number = int(body)
            else:
                inst.operands = _operands(inside)
        inst.attributes = self.attributes(line, close + 1)
        decode_attributes(inst, self.metadata_memo)
        return inst

    def attributes(self, line: str, p: int) -> dict[str, str]:
        """``, key=value`` pairs from ``p`` to the end of the line."""
        attrs: dict[str, str] = {}
        n = len(line)
        while p < n:
            m = _ATTRIBUTE_KEY.match(line, p)
            if m is None:
                if line[p:].strip(" "):
                    raise _Unread
                break
            start = m.end()
            p = _VALUE.match(line, start).end()  # type: ignore[union-attr]
            if p < n and line[p] != ",":
                p = _value_end(line, start)
            value = line[start:p].rstrip(" ")
            if not value:
                raise _Unread
            attrs[m.group(1)] = value
        return attrs

    def shape(self, line: str, p: int) -> tuple[Shape, int]:
        """The shape written at ``p``, and where it ends."""
        if line.startswith("(", p):
            elements: list[Shape] = []
            p += 1
            if not line.startswith(")", p):
                while True:
                    element, p = self.shape(line, p)
                    elements.append(element)
                    m = _SPACES.match(line, p)
                    if m is not None:
                        p = m.end()
                    if not line.startswith(",", p):
                        break
                    p = _after_comma(line, p + 1)
                if not line.startswith(")", p):
                    raise _Unread
            return Shape(tuple_shapes=tuple(elements)), p + 1
        m = _ARRAY.match(line, p)
        if m is None:
            raise _Unread
        if m.group(3) is None and line.startswith("{", m.end()):
            raise _Unread  # a layout the grammar would balance over brackets
        written = m.group(0)
        shape = self.shapes.get(written)
        if shape is None:
            shape = self.shapes[written] = _array(m)
        return shape, m.end()


def _array(m: re.Match[str]) -> Shape:
    dtype, dims_text, layout = m.groups()
    if element_bits(dtype) is None:
        raise _Unread
    dims: list[int] = []
    dynamic: list[bool] = []
    if dims_text:
        for piece in dims_text.split(","):
            d = _DIM.fullmatch(piece)
            if d is None:
                raise _Unread
            dims.append(int(d.group(2)) if d.group(2) else 0)
            dynamic.append(d.group(2) is None or d.group(1) is not None)
    if layout is not None:
        depth = 0
        for c in layout:
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth < 0:
                    raise _Unread
            elif c in '[]"/':
                raise _Unread
        if depth:
            raise _Unread
    return Shape(dtype, tuple(dims), tuple(dynamic) if any(dynamic) else (), layout)


def _after_comma(line: str, p: int) -> int:
    """Past the spaces and an ``/*index=N*/`` comment after a comma of a list."""
    m = _SPACES.match(line, p)
    if m is not None:
        p = m.end()
    if line.startswith("/*", p):
        m = _COMMENT.match(line, p)
        if m is None:
            raise _Unread
        p = m.end()
    return p


def _operands(inside: str) -> list[str]:
    """The names between an instruction's parentheses: ``%a, %b`` (with
    ``/*index=5*/`` comments), no shapes, nothing nested."""
    if "/" in inside:
        inside = _COMMENT.sub(" ", inside)
        if "/" in inside:
            raise _Unread
    if not inside.strip(" "):
        return []
    names = []
    for piece in inside.split(","):
        m = _OPERAND.fullmatch(piece)
        if m is None:
            raise _Unread
        names.append(m.group(1).lstrip("%"))
    return names


def _group_end(line: str, p: int) -> int:
    """Where the bracketed group opening at ``p`` ends (after its closing bracket)."""
    stack = [line[p]]
    n = len(line)
    while True:
        p = _SKIP_INSIDE.match(line, p + 1).end()  # type: ignore[union-attr]
        if p >= n:
            raise _Unread
        c = line[p]
        if c in "({[":
            stack.append(c)
        elif c in ")}]":
            if _CLOSE[stack.pop()] != c:
                raise _Unread
            if not stack:
                return p + 1
        else:  # a string or a comment that does not end on its line
            raise _Unread


def _value_end(line: str, p: int) -> int:
    """Where the attribute value starting at ``p`` ends: at a comma outside
    brackets and strings, or at the end of the line."""
    n = len(line)
    while True:
        p = _SKIP_TOP.match(line, p).end()  # type: ignore[union-attr]
        if p >= n or line[p] == ",":
            return p
        if line[p] not in "({[":
            raise _Unread  # a closing bracket of nothing, an open string, a comment
        p = _group_end(line, p)
