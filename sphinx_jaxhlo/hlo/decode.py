"""What the grammar keeps raw, made into an instruction's fields.

:func:`decode_attributes` reads the attributes the analyses need (the
computations an instruction calls, its ``metadata``, its ``backend_config``,
its fusion and custom-call kinds) from their raw text.  :func:`tuple_views`
brings the compact tuple indices of XLA's dumps (``%while.1#0``) to the
``get-tuple-element`` views the full form writes.  Both raise
:class:`~sphinx_jaxhlo.hlo.model.HloParseError` on what they cannot read.
"""

from __future__ import annotations

import json
import re

from sphinx_jaxhlo.hlo.model import HloInstruction, HloParseError
from sphinx_jaxhlo.hlo.tokens import unquote

__all__ = ["decode_attributes", "tuple_views"]

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


def tuple_views(instructions: list[HloInstruction], by_name: dict[str, HloInstruction]) -> list[HloInstruction]:
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


_NAME_LIST_RE = re.compile(r"[^\s{},]+")


def decode_attributes(inst: HloInstruction) -> None:
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
        inst.custom_call_target = unquote(target) if target.startswith('"') and len(target) > 1 else target
    config = attrs.get("backend_config")
    if config is not None:
        if config.startswith('"') and len(config) > 1:
            config = unquote(config)
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
        out[m.group(1)] = unquote(value) if value.startswith('"') else value
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

