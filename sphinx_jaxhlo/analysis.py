"""What a compiled module does with memory: fusions, materialized buffers, reductions.

Reads a module parsed by :mod:`sphinx_jaxhlo.hlo` and fills the report's
:class:`~sphinx_jaxhlo.report.Fusion`, :class:`~sphinx_jaxhlo.report.Materialized`
and :class:`~sphinx_jaxhlo.report.Reduction` lists.

*Top-level* computations are the entry and the computations it runs as
programs of their own: ``while`` bodies and conditions, ``conditional``
branches, ``call`` targets and async wrapped computations, recursively.  Fusion
bodies and reducers (``to_apply=`` of a reduce) are not top-level: they run
inside one kernel.

- A **fusion** is a top-level instruction that does work (everything but
  ``parameter``, ``constant``, ``tuple``, ``get-tuple-element`` and ``bitcast``).
- A **materialized** buffer is a value produced by one top-level instruction
  and read by another one of the same computation, so it lives in memory
  between the two.  ``bitcast``, ``get-tuple-element`` and ``tuple`` are views:
  the producer and the readers are found through them.  Parameters, constants
  and the computation's result (unless something else reads it too) are not
  listed, nor the context of an async ``*-start`` (its ``*-done`` is).
- A **reduction** is a ``reduce``, or a ``reduce-window`` (CPU splits some
  reductions into a ``reduce-window`` and a ``reduce``), anywhere inside a
  top-level instruction.  It is *fused* when the data it reduces never went
  to memory: no buffer read by its fusion from outside, with at least as many
  elements as the reduced operand, flows into it through elementwise and
  data-movement ops.  A ``dot`` or ``convolution`` makes new data, so a buffer
  that only feeds a dot does not count, and neither does an argument (or
  loop state): it was in memory before the program ran, so reading it
  materializes nothing new.  Two exceptions keep the answer to the
  reader's question: a reduction over dimensions (or windows) of size 1 is a
  slice or a reshape in disguise, as TPU compilers emit, and is not listed;
  and a reduce that reads, as is, the output of another reduction is the
  second stage of a split reduction (GPU row reductions, CPU reduce-window):
  that buffer holds partial results, not the data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .hlo import HloComputation, HloInstruction, HloModule, HloParseError, parse_module
from .report import Fusion, Materialized, Reduction

__all__ = ["Analysis", "analyze_module", "producer_op", "top_level_computations"]


@dataclass
class Analysis:
    """The analysis of one module."""

    fusions: list[Fusion] = field(default_factory=list)
    #: Largest first.
    materialized: list[Materialized] = field(default_factory=list)
    reductions: list[Reduction] = field(default_factory=list)


#: Instructions that move no data of their own.
_TRIVIAL = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "bitcast"})
#: Ops that compute new values out of many input elements (or out of none):
#: data that reaches a reduce only through one of them is not "the reduced data".
_NEW_DATA = frozenset({
    "dot", "convolution", "ragged-dot", "reduce", "reduce-window", "select-and-scatter", "scatter",
    "sort", "fft", "custom-call", "triangular-solve", "cholesky", "rng", "rng-bit-generator",
    "rng-get-and-update-state", "iota", "constant", "while", "conditional", "call", "map",
    "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
    "ragged-all-to-all", "topk", "cumsum", "reduce-precision",
})  # fmt: skip
#: The instructions listed as reductions.  ``reduce-window`` is the first
#: stage of a split reduction on CPU (``reduce-window`` then ``reduce``).
_REDUCTIONS = frozenset({"reduce", "reduce-window"})
#: Ops through which a buffer reaches a reduce "as is".
_AS_IS = frozenset({"bitcast", "reshape", "copy", "transpose", "get-tuple-element", "tuple"})


def analyze_module(text_or_module: str | HloModule, source_file: str | None = "example.py") -> Analysis:
    """Analyze an optimized module.

    :param text_or_module: the HLO text or an already parsed module.
    :param source_file: the example's file: only stack frames in this file
        give source lines (matched by full path or by base name); ``None``
        takes the innermost frame, whatever its file.
    :returns: the fusions, the materialized buffers (largest first) and the
        reductions.
    :raises HloParseError: when the text cannot be parsed; nothing else.
    """
    module = parse_module(text_or_module) if isinstance(text_or_module, str) else text_or_module
    try:
        return _Analyzer(module, source_file).run()
    except HloParseError:
        raise
    except (KeyError, IndexError, ValueError, TypeError, AttributeError, RecursionError) as exc:
        # A module that parsed but does not hold together (an inconsistent
        # hand-edited text): report it as the one documented error.
        raise HloParseError(f"inconsistent module: {type(exc).__name__}: {exc}") from exc


def producer_op(op_name: str | None) -> str | None:
    """The JAX operation in a metadata ``op_name``: its last path component.

    ``jit(f)/vmap()/dot_general`` gives ``dot_general``; slashes inside
    parentheses (``jit(a/b)``) do not split, and a trailing ``[params]`` is
    dropped.
    """
    if not op_name:
        return None
    depth = 0
    start = 0
    for i, c in enumerate(op_name):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "/" and depth == 0:
            start = i + 1
    last = op_name[start:]
    if last.endswith("]") and "[" in last:
        last = last[: last.index("[")]
    return last or None


def top_level_computations(module: HloModule) -> list[str]:
    """The entry, then the computations it runs as programs (loop bodies and
    conditions, branches, ``call`` targets, async wrapped computations), in
    the order they are first reached.  Independent of the order of the text."""
    order: list[str] = []
    seen: set[str] = set()
    stack = [module.entry]
    while stack:
        name = stack.pop()
        if name in seen or name not in module.computations:
            continue
        seen.add(name)
        order.append(name)
        callees: list[str] = []
        for inst in module.computations[name].instructions:
            callees.extend(_program_callees(inst))
        stack.extend(reversed(callees))
    return order


def _program_callees(inst: HloInstruction) -> list[str]:
    """The computations an instruction runs as programs of their own (not
    fusion bodies, not reducers)."""
    op = inst.opcode
    if op in ("while", "conditional", "call"):
        return list(inst.called_computations)
    if op == "async-start":
        calls = inst.attributes.get("calls", "")
        return [n.lstrip("%") for n in calls.strip("{}").replace(" ", "").split(",") if n]
    return []


_WINDOW_SIZE_RE = re.compile(r"size=([\dx]+)")


def _is_degenerate(reduce: HloInstruction, in_elements: int) -> bool:
    """A reduce over dimensions of size 1 only, or a reduce-window of size 1:
    a slice or a reshape written as a reduction, nothing is summed."""
    if reduce.opcode == "reduce-window":
        m = _WINDOW_SIZE_RE.search(reduce.attributes.get("window", ""))
        return m is not None and all(size in ("", "1") for size in m.group(1).split("x"))
    shape = reduce.shape.tuple_shapes[0] if reduce.shape.tuple_shapes else reduce.shape
    return shape.elements == in_elements


def _basename(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


class _Analyzer:
    def __init__(self, module: HloModule, source_file: str | None) -> None:
        self.module = module
        self.source_file = source_file
        self.source_base = _basename(source_file) if source_file else None
        self._lines_cache: dict[int, int | None] = {}
        self._positions: dict[str, dict[str, int]] = {}

    # -- source lines

    def _matches(self, file: str) -> bool:
        if self.source_file is None:
            return True
        return file == self.source_file or _basename(file) == self.source_base

    def line_of(self, inst: HloInstruction) -> int | None:
        """The example line an instruction was traced from: the innermost
        frame in the example's file."""
        sfid = inst.stack_frame_id
        if sfid is not None:
            if sfid not in self._lines_cache:
                line = None
                for frame in self.module.frames(sfid):
                    if self._matches(frame.file) and frame.line > 0:
                        line = frame.line
                        break
                self._lines_cache[sfid] = line
            found = self._lines_cache[sfid]
            if found is not None:
                return found
        if inst.source_line and inst.source_file is not None and self._matches(inst.source_file):
            return inst.source_line
        return None

    def lines(self, instructions: Iterable[HloInstruction]) -> list[int]:
        out = {line for inst in instructions if (line := self.line_of(inst)) is not None}
        return sorted(out)

    # -- fused computations

    def flatten(self, inst: HloInstruction) -> list[tuple[str, HloInstruction]]:
        """The instructions inside a fusion with their computations, in
        program order, nested fusion bodies expanded in place of the nested
        fusion instruction."""
        out: list[tuple[str, HloInstruction]] = []
        seen: set[str] = set()
        computations = self.module.computations

        def visit(fusion: HloInstruction) -> None:
            callee = fusion.called_computations[0] if fusion.called_computations else ""
            if callee in seen or callee not in computations:
                return
            seen.add(callee)
            for sub in computations[callee].instructions:
                if sub.opcode == "fusion":
                    visit(sub)
                else:
                    out.append((callee, sub))

        if inst.opcode == "fusion":
            visit(inst)
        return out

    def ops(self, inst: HloInstruction) -> list[str]:
        if inst.opcode != "fusion":
            return [inst.opcode]
        return list(dict.fromkeys(sub.opcode for _, sub in self.flatten(inst) if sub.opcode not in _TRIVIAL))

    # -- the three lists

    def run(self) -> Analysis:
        analysis = Analysis()
        for comp_name in top_level_computations(self.module):
            comp = self.module.computations[comp_name]
            for inst in comp.instructions:
                if inst.opcode in _TRIVIAL:
                    continue
                analysis.fusions.append(self.fusion(comp, inst))
                analysis.reductions.extend(self.reductions(comp, inst))
            analysis.materialized.extend(self.materialized(comp))
        analysis.materialized.sort(key=lambda m: (-m.bytes, m.name, m.computation))
        return analysis

    def fusion(self, comp: HloComputation, inst: HloInstruction) -> Fusion:
        kind = inst.opcode
        if inst.opcode == "fusion" and inst.fusion_kind:
            kind = inst.fusion_kind.removeprefix("k")
        return Fusion(
            name=inst.name,
            kind=kind,
            custom_kind=inst.custom_kind,
            ops=self.ops(inst),
            shape=str(inst.shape),
            bytes=inst.shape.bytes,
            source_lines=self.lines([inst, *(sub for _, sub in self.flatten(inst))]),
            computation=comp.name,
        )

    # -- materialized buffers

    def consumers(self, comp: HloComputation, name: str, index: int | None = None) -> list[str]:
        """The top-level instructions that read the value ``name`` (or its
        ``index``-th element), found through views; the computation's result
        is not a reader."""
        out: list[str] = []
        seen: set[tuple[str, tuple[int, ...]]] = set()
        stack: list[tuple[str, tuple[int, ...]]] = [(name, () if index is None else (index,))]
        while stack:
            current, path = stack.pop()
            if (current, path) in seen:
                continue
            seen.add((current, path))
            for user_name in comp.users(current):
                user = comp.get(user_name)
                if user is None or user_name == name:
                    continue
                op = user.opcode
                if op == "get-tuple-element":
                    if not path:
                        stack.append((user_name, ()))
                    elif path[0] == user.tuple_index:
                        stack.append((user_name, path[1:]))
                elif op == "tuple":
                    for position, operand in enumerate(user.operands):
                        if operand == current:
                            stack.append((user_name, (position, *path)))
                elif op == "bitcast":
                    stack.append((user_name, path))
                elif user_name not in out:
                    out.append(user_name)
        order = self.positions(comp)
        return sorted(out, key=lambda n: order.get(n, 0))

    def positions(self, comp: HloComputation) -> dict[str, int]:
        """Program order of a computation's instructions."""
        found = self._positions.get(comp.name)
        if found is None:
            found = {inst.name: i for i, inst in enumerate(comp.instructions)}
            self._positions[comp.name] = found
        return found

    def defining(self, inst: HloInstruction, index: int | None, depth: int = 0) -> HloInstruction:
        """The instruction inside a fusion that computes its result (or the
        ``index``-th element of it), through tuples, views and nested fusions."""
        if inst.opcode != "fusion" or not inst.called_computations or depth > 16:
            return inst
        comp = self.module.computations.get(inst.called_computations[0])
        if comp is None:
            return inst
        current = comp.get(comp.root)
        for _ in range(64):
            if current is None:
                return inst
            if current.opcode == "tuple" and index is not None and index < len(current.operands):
                current, index = comp.get(current.operands[index]), None
            elif current.opcode == "bitcast" and current.operands:
                current = comp.get(current.operands[0])
            elif current.opcode == "fusion":
                return self.defining(current, index, depth + 1)
            else:
                return current
        return inst

    def materialized(self, comp: HloComputation) -> list[Materialized]:
        out: list[Materialized] = []
        for inst in comp.instructions:
            op = inst.opcode
            if op in _TRIVIAL or op.endswith("-start"):
                continue
            shapes = inst.shape.tuple_shapes
            if shapes is None:
                readers = self.consumers(comp, inst.name)
                if readers:
                    out.append(self.buffer(comp, inst, inst.name, str(inst.shape), inst.shape.bytes, None, readers))
                continue
            # A tuple (multi-output fusion, while...): each element is its own
            # buffer, named by the get-tuple-element that reads it.
            for index, element in enumerate(shapes):
                readers = self.consumers(comp, inst.name, index)
                if not readers:
                    continue
                gte = next(
                    (
                        u
                        for u in comp.users(inst.name)
                        if comp[u].opcode == "get-tuple-element" and comp[u].tuple_index == index
                    ),
                    f"{inst.name}[{index}]",
                )
                out.append(self.buffer(comp, inst, gte, str(element), element.bytes, index, readers))
        return out

    def buffer(
        self,
        comp: HloComputation,
        producer: HloInstruction,
        name: str,
        shape: str,
        size: int,
        index: int | None,
        readers: list[str],
    ) -> Materialized:
        inner = self.defining(producer, index)
        # A fusion's own op_name names its whole value; an element of a
        # multi-output fusion is better named by the op that computes it.
        named = (producer, inner) if index is None else (inner, producer)
        op = next((found for found in (producer_op(i.op_name) for i in named) if found), None)
        return Materialized(
            name=name,
            shape=shape,
            bytes=size,
            producer=producer.name,
            consumers=readers,
            source_lines=self.lines([producer] if inner is producer else [producer, inner]),
            computation=comp.name,
            producer_op=op,
        )

    # -- reductions

    def resolve(self, comp: HloComputation, name: str) -> tuple[str, HloInstruction | None, int | None]:
        """The buffer behind a top-level value, through views: its name (the
        ``get-tuple-element`` for an element of a tuple), its producer and
        the element index."""
        current = comp.get(name)
        label = name
        for _ in range(256):
            if current is None:
                return label, None, None
            if current.opcode == "bitcast" and current.operands:
                current = comp.get(current.operands[0])
                label = current.name if current is not None else label
            elif current.opcode == "get-tuple-element" and current.operands:
                source = comp.get(current.operands[0])
                index = current.tuple_index
                if source is not None and source.opcode == "tuple" and index is not None:
                    if index >= len(source.operands):
                        return current.name, current, None
                    current = comp.get(source.operands[index])
                    label = current.name if current is not None else label
                else:
                    return current.name, source, index
            else:
                return current.name, current, None
        return label, current, None

    def made_by_reduce(self, producer: HloInstruction | None, index: int | None) -> bool:
        if producer is None:
            return False
        return self.defining(producer, index).opcode in _REDUCTIONS

    def reductions(self, comp: HloComputation, top: HloInstruction) -> list[Reduction]:
        found: list[Reduction] = []
        if top.opcode in _REDUCTIONS:
            found.extend(self.reduction(comp, top, comp, top, ()))
        elif top.opcode == "fusion":
            self._reductions_in(comp, top, top, (), found, set())
        return found

    def _reductions_in(
        self,
        comp: HloComputation,
        top: HloInstruction,
        fusion: HloInstruction,
        chain: tuple[tuple[str, str], ...],
        found: list[Reduction],
        seen: set[str],
    ) -> None:
        """Find the reduces in ``fusion``'s body (and nested fusion bodies);
        ``chain`` holds the (computation, fusion instruction) pairs from the
        top-level computation down to ``fusion``'s caller."""
        if not fusion.called_computations:
            return
        body_name = fusion.called_computations[0]
        body = self.module.computations.get(body_name)
        if body is None or body_name in seen:
            return
        seen.add(body_name)
        caller = chain[-1][0] if chain else comp.name
        inner_chain = (*chain, (caller, fusion.name))
        for inst in body.instructions:
            if inst.opcode == "fusion":
                self._reductions_in(comp, top, inst, inner_chain, found, seen)
            elif inst.opcode in _REDUCTIONS:
                found.extend(self.reduction(comp, top, body, inst, inner_chain))

    def reduction(
        self,
        comp: HloComputation,
        top: HloInstruction,
        where: HloComputation,
        reduce: HloInstruction,
        chain: tuple[tuple[str, str], ...],
    ) -> list[Reduction]:
        operands = reduce.operands
        data = operands[: max(len(operands) // 2, 1)] if operands else []
        first = where.get(data[0]) if data else None
        if first is None:
            return []
        in_shape = first.shape
        if _is_degenerate(reduce, in_shape.elements):
            return []
        fused_with: set[tuple[str, str]] = set()
        inputs: list[tuple[str, bool]] = []  # (top-level operand, reached as is)
        for operand in data:
            self.walk(where.name, operand, chain, fused_with, inputs)
        materialized = None
        partial_of = None
        best = -1
        for operand, as_is in inputs:
            name, producer, index = self.resolve(comp, operand)
            if producer is None or producer.opcode == "parameter":
                # an argument (or loop state) was in memory before the program
                # ran: reading it is not materializing the reduced data
                continue
            size = producer.shape.elements if index is None else self._element_count(producer, index)
            if size < in_shape.elements or size <= best:
                continue
            if as_is and self.made_by_reduce(producer, index):
                partial_of = name  # partial results of a split reduction
                continue
            materialized, best = name, size
        flat = self.flatten(top) if top.opcode == "fusion" else []
        ops = [i.opcode for c, i in flat if (c, i.name) in fused_with and i.opcode not in _TRIVIAL]
        return [
            Reduction(
                name=reduce.name,
                fusion=top.name,
                fused_with=list(dict.fromkeys(ops)),
                input_materialized=materialized,
                input_bytes=in_shape.bytes,
                input_shape=str(in_shape),
                source_lines=self.lines([reduce]),
                computation=comp.name,
                partial_of=partial_of if materialized is None else None,
            )
        ]

    @staticmethod
    def _element_count(producer: HloInstruction, index: int) -> int:
        shapes = producer.shape.tuple_shapes
        if shapes is None or index >= len(shapes):
            return producer.shape.elements
        return shapes[index].elements

    def walk(
        self,
        comp_name: str,
        start: str,
        chain: tuple[tuple[str, str], ...],
        reached: set[tuple[str, str]],
        inputs: list[tuple[str, bool]],
    ) -> None:
        """Walk back from ``start`` (in computation ``comp_name``, inside the
        fusions of ``chain``) to everything that feeds it.

        ``reached`` collects every (computation, instruction) on the way.
        ``inputs`` collects the top-level operands whose data flows in
        without passing a :data:`_NEW_DATA` op, with whether it flows in as is.
        """
        if not chain:  # a top-level reduce: its operand is the buffer
            inputs.append((start, True))
            return
        stack: list[tuple[str, str, tuple[tuple[str, str], ...], bool, bool]] = [(comp_name, start, chain, True, True)]
        seen: set[tuple[str, str, tuple[tuple[str, str], ...], bool, bool]] = set()
        computations = self.module.computations
        while stack:
            item = stack.pop()
            if item in seen:
                continue
            seen.add(item)
            c_name, name, ch, data, as_is = item
            c = computations.get(c_name)
            inst = c.get(name) if c is not None else None
            if inst is None:
                continue
            reached.add((c_name, name))
            op = inst.opcode
            if op == "parameter":
                parent_name, fusion_name = ch[-1]
                parent = computations.get(parent_name)
                fusion = parent.get(fusion_name) if parent is not None else None
                number = inst.parameter_number
                if fusion is None or number is None or number >= len(fusion.operands):
                    continue
                operand = fusion.operands[number]
                if len(ch) == 1:
                    if data:
                        inputs.append((operand, as_is))
                else:
                    stack.append((parent_name, operand, ch[:-1], data, as_is))
                continue
            if op == "fusion" and inst.called_computations:
                body = computations.get(inst.called_computations[0])
                if body is not None and len(ch) < 64:
                    stack.append((body.name, body.root, (*ch, (c_name, name)), data, as_is))
                continue
            still_data = data and op not in _NEW_DATA
            still_as_is = as_is and op in _AS_IS
            for operand in inst.operands:
                stack.append((c_name, operand, ch, still_data, still_as_is))
