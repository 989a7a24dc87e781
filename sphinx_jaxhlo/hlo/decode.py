"""What the grammar keeps raw, made into an instruction's fields.

:func:`decode_attributes` reads the attributes the analyses need (the
computations an instruction calls, its ``metadata``, its ``backend_config``,
its fusion and custom-call kinds) from their raw text.  :func:`tuple_views`
brings the compact tuple indices of XLA's dumps (``%while.1#0``) to the
``get-tuple-element`` views the full form writes.  :func:`infer_shapes` gives
a shape to the instructions whose shape the printer left out.  All three raise
:class:`~sphinx_jaxhlo.hlo.model.HloParseError` on what they cannot read.

**Shapes left out.**  XLA's parser takes an instruction without a shape when
the shape follows from its operands (``CanInferShape`` in
``hlo_parser.cc``), and newer printers leave some out:
``count = get-tuple-element(%param), index=0``, ``t = tuple(a, b)``.  Inferred
here, as ``ShapeInference`` does, only where the operands alone decide it:

- ``get-tuple-element``: the ``index``-th element of the operand's tuple
  shape, layout included; ``tuple``: the tuple of the operands' shapes;
- ``copy``, ``optimization-barrier``, ``add-dependency`` and the elementwise
  operations that keep the element type (``add``, ``exponential``,
  ``select``'s and ``clamp``'s second operand...): the operand's element type
  and dimensions; ``compare`` and ``is-finite``: ``pred`` of those
  dimensions; ``real``, ``imag``, ``abs`` of a complex operand: its component
  type; ``complex``: ``c64`` from ``f32`` (``c128`` from ``f64``).  Apart from
  the first two and ``copy``-like ones, the layout is not known (none is
  kept: memory space 0, as XLA's parser gives such a shape its default layout).

Any other instruction printed without a shape (a ``dot``, a ``reduce``, a
``broadcast``, whose shape needs its attributes) is an error that names it.
"""

from __future__ import annotations

import json
import re

from sphinx_jaxhlo.hlo.model import HloInstruction, HloParseError, Shape
from sphinx_jaxhlo.hlo.tokens import unquote

__all__ = ["UNWRITTEN", "MetadataMemo", "decode_attributes", "infer_shapes", "tuple_views"]

#: The shape of an instruction printed without one, until :func:`infer_shapes` replaces it.
UNWRITTEN = Shape(dtype="(not written)")

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


#: Elementwise operations whose result has the element type and dimensions of
#: their operand at this index (``ShapeInference``'s unary, binary and ternary
#: rules, where the operands agree).
_SAME_AS_OPERAND = {
    **dict.fromkeys((
        "abs", "cbrt", "ceil", "clz", "copy", "cosine", "erf", "exponential", "exponential-minus-one", "floor",
        "imag", "log", "log-plus-one", "logistic", "negate", "not", "popcnt", "real", "round-nearest-afz",
        "round-nearest-even", "rsqrt", "sign", "sine", "sqrt", "tan", "tanh", "optimization-barrier",
        "add-dependency", "add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "remainder",
        "atan2", "and", "or", "xor", "shift-left", "shift-right-arithmetic", "shift-right-logical"), 0),
    "select": 1,
    "clamp": 1,
}
#: Keep the operand's layout: the result is the operand's value.
_KEEPS_LAYOUT = frozenset({"copy", "optimization-barrier", "add-dependency"})
#: The real type of each complex type, and back.
_COMPONENT = {"c64": "f32", "c128": "f64"}
_COMPLEX = {v: k for k, v in _COMPONENT.items()}


def infer_shapes(instructions: list[HloInstruction], by_name: dict[str, HloInstruction]) -> None:
    """Give each instruction printed without a shape the shape its operands
    decide (see the module's docstring), in place."""
    resolving: set[str] = set()

    def operand_shape(user: HloInstruction, ref: str) -> Shape:
        source = by_name.get(ref)
        if source is not None:
            return resolve(source)
        base, *indices = ref.split("#")  # a compact tuple index: an element of an element
        source = by_name.get(base)
        if source is None or not indices:
            raise HloParseError(f"{user.name!r} reads unknown {ref!r}", user.line)
        shape = resolve(source)
        for text in indices:
            if shape.tuple_shapes is None or not text.isdigit() or int(text) >= len(shape.tuple_shapes):
                raise HloParseError(f"{user.name!r} reads {ref!r}, which is not an element of {base!r} ({shape})",
                                    user.line)
            shape = shape.tuple_shapes[int(text)]
        return shape

    def resolve(inst: HloInstruction) -> Shape:
        if inst.shape is not UNWRITTEN:
            return inst.shape
        if inst.name in resolving:
            raise HloParseError(f"the shape of {inst.name!r} is not written and depends on itself", inst.line)
        resolving.add(inst.name)
        inst.shape = _inferred(inst, [operand_shape(inst, op) for op in inst.operands])
        resolving.discard(inst.name)
        return inst.shape

    for inst in instructions:
        resolve(inst)


def _inferred(inst: HloInstruction, operands: list[Shape]) -> Shape:
    opcode = inst.opcode
    if opcode == "tuple":
        return Shape(tuple_shapes=tuple(operands))
    if opcode == "get-tuple-element":
        element = operands[0].tuple_shapes if len(operands) == 1 else None
        index = inst.tuple_index
        if element is None or index is None or index >= len(element):
            raise HloParseError(f"get-tuple-element {inst.name!r} has no shape written, and its operand is not a "
                                f"tuple with an element {index}", inst.line)
        return element[index]
    at = _SAME_AS_OPERAND.get(opcode)
    if at is None and opcode in ("compare", "is-finite", "complex"):
        at = 0
    if at is None or at >= len(operands) or (operands[at].tuple_shapes is not None and opcode not in _KEEPS_LAYOUT):
        raise HloParseError(f"{opcode} {inst.name!r} has no shape written, and this parser infers one only for "
                            "get-tuple-element, tuple and elementwise operations", inst.line)
    shape = operands[at]
    if opcode in _KEEPS_LAYOUT:
        return shape
    dtype = shape.dtype
    if opcode in ("compare", "is-finite"):
        dtype = "pred"
    elif opcode in ("real", "imag", "abs"):
        dtype = _COMPONENT.get(dtype, dtype)
    elif opcode == "complex":
        dtype = _COMPLEX.get(dtype, "")
        if not dtype:
            raise HloParseError(f"complex {inst.name!r} has no shape written, and its operand is not f32 or f64",
                                inst.line)
    return Shape(dtype, shape.dims, shape.dynamic)


_NAME_LIST_RE = re.compile(r"[^\s{},]+")
#: The decoded ``metadata``: its fields, ``op_name``, ``stack_frame_id``, ``source_file``, ``source_line``.
_Metadata = tuple[dict[str, str], str | None, int | None, str | None, int | None]
#: ``metadata`` texts decoded before, for :func:`decode_attributes`.
MetadataMemo = dict[str, _Metadata]


def decode_attributes(inst: HloInstruction, metadata_memo: MetadataMemo | None = None) -> None:
    """Fill the decoded fields of an instruction from its raw attributes.

    :param metadata_memo: ``metadata`` texts decoded before (one module
        repeats many); each instruction gets a copy of its own.
    """
    attrs = inst.attributes
    line = inst.line
    opcode = inst.opcode
    kind = attrs.get("kind")
    if kind is not None:
        inst.fusion_kind = kind
    elif opcode == "fusion":
        raise HloParseError(f"fusion {inst.name!r} has no kind", line)
    calls = [key for key in attrs if key in _CALL_ORDER]
    if calls:
        if len(calls) > 1:
            calls.sort(key=_CALL_ORDER.__getitem__)
        for key in calls:
            for callee in _NAME_LIST_RE.findall(attrs[key]):
                inst.called_computations.append(callee.lstrip("%"))
    if opcode == "fusion" and "calls" not in attrs:
        raise HloParseError(f"fusion {inst.name!r} has no calls=", line)
    if opcode == "get-tuple-element":
        index = attrs.get("index", "")
        if not index.isdigit():
            raise HloParseError(f"get-tuple-element {inst.name!r} has no index", line)
        inst.tuple_index = int(index)
    metadata = attrs.get("metadata")
    if metadata is not None:
        known = metadata_memo.get(metadata) if metadata_memo is not None else None
        if known is None:
            known = _metadata(metadata, line)
            if metadata_memo is not None:
                metadata_memo[metadata] = known
        fields, inst.op_name, inst.stack_frame_id, source_file, source_line = known
        inst.metadata = dict(fields)
        if source_file is not None:
            inst.source_file = source_file
        if source_line is not None:
            inst.source_line = source_line
    if len(attrs) > 1 or metadata is None:
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


#: The attributes that name called computations, in the order they are listed.
_CALL_ORDER = {key: i for i, key in enumerate(_CALL_ATTRIBUTES)}


def _metadata(raw: str, line: int) -> _Metadata:
    md = _parse_metadata(raw, line)
    sfid = md.get("stack_frame_id", "")
    source_line = md.get("source_line", "")
    return (md, md.get("op_name"), int(sfid) if sfid.isdigit() else None, md.get("source_file"),
            int(source_line) if source_line.isdigit() else None)


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

