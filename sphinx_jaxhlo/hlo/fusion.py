"""What a compiled module does with memory: fusions, materialized buffers, reductions.

Reads a module parsed by ``sphinx_jaxhlo.hlo.parse`` and fills the report's lists
of fusions, materialized buffers and reductions (``sphinx_jaxhlo.core.report``).
The analysis is ``analyze_module``.  Which computations are top-level is
stated in ``sphinx_jaxhlo.hlo.programs``; what a fusion, a materialized
buffer, argument data and host work are, in ``sphinx_jaxhlo.hlo.buffers``.
The rules for reductions, applied here:

- A **reduction** is a ``reduce``, or a ``reduce-window`` (CPU splits some
  reductions into a ``reduce-window`` and a ``reduce``), anywhere inside a
  top-level instruction.  It is *fused* when the data it reduces never went
  to memory, *unfused* when most of it did: when the stored data that reaches
  the reduced operand, through elementwise and data-movement ops, is at least
  half of the elements it reduces.  Stored data is what its kernel reads from
  buffers other kernels wrote.  A buffer counts with the elements of it that
  reach the reduce: along a path of ops, the fewest elements of any value on
  it.  So a ``pad`` (the GPU pads a row to a length its kernel can split), a
  ``concatenate`` of the buffer with other pieces, a ``reverse``, a
  ``transpose`` or a ``copy`` pass the whole buffer on; a ``slice``, a
  ``dynamic-slice`` or a ``gather`` only the part they take; a ``broadcast``
  or an elementwise op with a broadcast scalar repeats data the kernel read
  once, and the repeats are computed, not stored (the small inputs of a fused
  outer product stay fused).  Each buffer counts once, by its largest path;
  different buffers add up (the pieces of a ``concatenate``).  Elements, not
  bytes: a ``convert`` on the way changes the bytes of each value, not which
  values went to memory.  The threshold of one half, rather than an exact
  count, keeps the verdict when the compiler pads, slices or joins what it
  reduces.  A ``dot`` or ``convolution`` makes new data, so a buffer
  that only feeds a dot does not count, and neither does a buffer that holds
  argument data, nor (inside a loop body) the loop state or a copy of it:
  they were in memory before the kernel ran, so reading them materializes
  nothing new (the buffer that fed the loop, if the program computed it, is
  listed where the loop reads it).  The buffer an unfused reduction names is
  the one of which the most elements reach it (of equals, the larger).  A reduction over dimensions
  (or windows) of size 1 is a slice or a reshape in disguise, as TPU compilers
  emit, and is not listed.
- **Who wrote a reduction** (``Reduction.origin`` in the report):
  verdicts are about the reductions the program asked for (``user``); the
  compiler makes others, which are listed with what made them and get no
  verdict.  In order:

  1. ``second-stage``: a reduce that reads, as is, the output of another
     reduction: the second stage of a split reduction (GPU row reductions,
     CPU tree reductions); that buffer holds partial results, not the data.
  2. ``scan``: a ``reduce-window`` whose result has at least as many elements
     as its operand: a sliding window, as in the prefix-scan stages XLA
     builds for ``cumsum``, ``cummax`` or ``cumprod``; it writes as much as
     it reads, so nothing is summed up.
  3. By the JAX operation in the reduce's ``op_name`` metadata: a reduction
     primitive (``reduce_sum``, ``reduce_max``, ``argmax``, ``reduce``...) or
     no metadata at all is ``user``; ``dot_general`` or
     ``conv_general_dilated`` is ``dot`` (a GEMM split along its contraction,
     split-K, whose partial products a small reduce adds; or a small dot
     computed as multiply and reduce); ``cumsum`` and its kin are ``scan``;
     any other operation (``sort``, ``top_k``...) is ``compiler``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sphinx_jaxhlo.core.report import Fusion, Materialized, Reduction
from sphinx_jaxhlo.hlo.buffers import TRIVIAL, BufferAnalyzer
from sphinx_jaxhlo.hlo.model import HloComputation, HloInstruction, HloModule, HloParseError
from sphinx_jaxhlo.hlo.parse import parse_module
from sphinx_jaxhlo.hlo.programs import producer_op, top_level_computations
from sphinx_jaxhlo.hlo.reasons import attach_reasons

__all__ = ["Analysis", "analyze_module", "reduction_origin"]


@dataclass
class Analysis:
    """The analysis of one module."""

    fusions: list[Fusion] = field(default_factory=list)
    #: Intermediates, largest first.
    materialized: list[Materialized] = field(default_factory=list)
    reductions: list[Reduction] = field(default_factory=list)
    #: Buffers that hold argument data only, largest first.
    argument_copies: list[Materialized] = field(default_factory=list)
    #: Buffers in host memory (kind ``host``), largest first.
    host_buffers: list[Materialized] = field(default_factory=list)
    #: The instructions of the computations that run on the host thread.
    host_fusions: list[Fusion] = field(default_factory=list)
    #: The top-level computations off the main thread, in the order reached.
    host_computations: list[str] = field(default_factory=list)


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
#: JAX primitives that reduce: the ``op_name`` of a reduction the program asked for.
_USER_REDUCTION_OPS = frozenset({"argmax", "argmin", "reduce"})
#: JAX primitives whose reduces are part of a dot or convolution.
_DOT_OPS = frozenset({"dot_general", "conv_general_dilated", "ragged_dot", "ragged_dot_general"})
#: JAX primitives whose reduces (and reduce-windows) are prefix-scan stages.
_SCAN_OPS = frozenset({"cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"})


def analyze_module(text_or_module: str | HloModule, source_file: str | None = "example.py", *,
                   target: str | None = None) -> Analysis:
    """Analyze an optimized module.

    :param text_or_module: the HLO text or an already parsed module.
    :param source_file: the example's file: only stack frames in this file
        give source lines (matched by full path or by base name); ``None``
        takes the innermost frame, whatever its file.
    :param target: the target it was compiled for (``gpu:h100``): the
        backend whose fusion rules the reasons of unfused reductions name
        (:mod:`sphinx_jaxhlo.hlo.reasons`); ``None`` infers it from the kernels.
    :returns: the fusions, the materialized buffers (largest first) and the
        reductions.
    :raises HloParseError: when the text cannot be parsed; nothing else.
    """
    module = parse_module(text_or_module) if isinstance(text_or_module, str) else text_or_module
    try:
        analysis = _Analyzer(module, source_file).run()
        # work and buffers on the host thread have their reasons too (they are only listed apart)
        attach_reasons([*analysis.fusions, *analysis.host_fusions], [*analysis.materialized, *analysis.host_buffers],
                       analysis.reductions, target)
        return analysis
    except HloParseError:
        raise
    except (KeyError, IndexError, ValueError, TypeError, AttributeError, RecursionError) as exc:
        # A module that parsed but does not hold together (an inconsistent
        # hand-edited text): report it as the one documented error.
        raise HloParseError(f"inconsistent module: {type(exc).__name__}: {exc}") from exc


#: A step of :meth:`_Analyzer.walk`: computation, instruction, the fusions
#: around it, whether data still flows, whether as is, elements that reach.
_WalkItem = tuple[str, str, tuple[tuple[str, str], ...], bool, bool, int]


_WINDOW_SIZE_RE = re.compile(r"size=([\dx]+)")


def _is_degenerate(reduce: HloInstruction, in_elements: int) -> bool:
    """A reduce over dimensions of size 1 only, or a reduce-window of size 1:
    a slice or a reshape written as a reduction, nothing is summed."""
    if reduce.opcode == "reduce-window":
        m = _WINDOW_SIZE_RE.search(reduce.attributes.get("window", ""))
        return m is not None and all(size in ("", "1") for size in m.group(1).split("x"))
    return _result_elements(reduce) == in_elements


def _element_count(producer: HloInstruction, index: int | None) -> int:
    """Elements of a value, or of its ``index``-th element."""
    shapes = producer.shape.tuple_shapes
    if index is None or shapes is None or index >= len(shapes):
        return producer.shape.elements
    return shapes[index].elements


def _result_elements(inst: HloInstruction) -> int:
    shape = inst.shape.tuple_shapes[0] if inst.shape.tuple_shapes else inst.shape
    return shape.elements


def reduction_origin(reduce: HloInstruction, in_elements: int, partial_of: str | None) -> str:
    """Who wrote a reduction (the rules of the module docstring, in their order)."""
    if partial_of is not None:
        return "second-stage"
    if reduce.opcode == "reduce-window" and _result_elements(reduce) >= in_elements:
        return "scan"
    op = producer_op(reduce.op_name)
    if op is None or op in _USER_REDUCTION_OPS or op.startswith("reduce_"):
        return "user"
    if op in _DOT_OPS:
        return "dot"
    if op in _SCAN_OPS:
        return "scan"
    return "compiler"


class _Analyzer(BufferAnalyzer):
    """The analysis of one module: the fusions and buffers, and the reductions with their verdicts."""

    # -- the lists

    def run(self) -> Analysis:
        analysis = Analysis()
        for comp_name in top_level_computations(self.module):
            comp = self.module.computations[comp_name]
            on_host = self.on_host(comp_name)
            if on_host:
                analysis.host_computations.append(comp_name)
            for inst in comp.instructions:
                if inst.opcode in TRIVIAL:
                    continue
                (analysis.host_fusions if on_host else analysis.fusions).append(self.fusion(comp, inst))
                analysis.reductions.extend(self.reductions(comp, inst))
            for buffer in self.materialized(comp):
                if on_host or self.in_host_memory(comp, buffer):
                    buffer.kind = "host"
                    analysis.host_buffers.append(buffer)
                    continue
                (analysis.argument_copies if buffer.kind == "argument-copy" else analysis.materialized).append(buffer)
        analysis.materialized.sort(key=lambda m: (-m.bytes, m.name, m.computation))
        analysis.argument_copies.sort(key=lambda m: (-m.bytes, m.name, m.computation))
        analysis.host_buffers.sort(key=lambda m: (-m.bytes, m.name, m.computation))
        return analysis


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
            self._reductions_in(comp, top, comp.name, top, (), found, set())
        return found

    def _reductions_in(
        self,
        comp: HloComputation,
        top: HloInstruction,
        caller: str,
        fusion: HloInstruction,
        chain: tuple[tuple[str, str], ...],
        found: list[Reduction],
        seen: set[str],
    ) -> None:
        """Find the reduces in ``fusion``'s body (and nested fusion bodies);
        ``caller`` is the computation that holds ``fusion``, ``chain`` the
        (computation, fusion instruction) pairs from the top-level computation
        down to ``caller``."""
        if not fusion.called_computations:
            return
        body_name = fusion.called_computations[0]
        body = self.module.computations.get(body_name)
        if body is None or body_name in seen:
            return
        seen.add(body_name)
        inner_chain = (*chain, (caller, fusion.name))
        for inst in body.instructions:
            if inst.opcode == "fusion":
                self._reductions_in(comp, top, body_name, inst, inner_chain, found, seen)
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
        inputs: list[tuple[str, bool, int]] = []  # (top-level operand, reached as is, elements that reach)
        for operand in data:
            self.walk(where.name, operand, chain, fused_with, inputs)
        partial_of = None
        stored: dict[str, int] = {}  # buffer -> the most elements of it that reach the reduce
        sizes: dict[str, int] = {}
        for operand, as_is, reach in inputs:
            name, producer, index = self.resolve(comp, operand)
            if producer is None or self.holds_argument_data(comp, producer, index, loop_state=True):
                # an argument (or loop state), or a copy of one, was in memory
                # before the program ran: reading it materializes nothing new
                continue
            if as_is and self.made_by_reduce(producer, index):
                partial_of = name  # partial results of a split reduction
                continue
            stored[name] = max(stored.get(name, 0), reach)
            sizes[name] = _element_count(producer, index)
        materialized = None
        if stored and 2 * sum(stored.values()) >= in_shape.elements:
            # the buffer most of whose elements reach the reduce; of equals, the larger
            materialized = max(stored, key=lambda n: (stored[n], sizes[n]))
        flat = self.flatten(top) if top.opcode == "fusion" else []
        ops = [i.opcode for c, i in flat if (c, i.name) in fused_with and i.opcode not in TRIVIAL]
        partial_of = partial_of if materialized is None else None
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
                partial_of=partial_of,
                op=producer_op(reduce.op_name),
                origin=reduction_origin(reduce, in_shape.elements, partial_of),
            )
        ]

    def walk(
        self,
        comp_name: str,
        start: str,
        chain: tuple[tuple[str, str], ...],
        reached: set[tuple[str, str]],
        inputs: list[tuple[str, bool, int]],
    ) -> None:
        """Walk back from ``start`` (in computation ``comp_name``, inside the
        fusions of ``chain``) to everything that feeds it.

        ``reached`` collects every (computation, instruction) on the way.
        ``inputs`` collects the top-level operands whose data flows in
        without passing a :data:`_NEW_DATA` op, with whether it flows in as
        is and how many of its elements reach: the fewest elements of any
        value on the path.
        """
        computations = self.module.computations
        first = computations[comp_name][start]
        if not chain:  # a top-level reduce: its operand is the buffer
            inputs.append((start, True, first.shape.elements))
            return
        stack: list[_WalkItem] = [(comp_name, start, chain, True, True, first.shape.elements)]
        seen: set[_WalkItem] = set()
        while stack:
            item = stack.pop()
            if item in seen:
                continue
            seen.add(item)
            c_name, name, ch, data, as_is, reach = item
            c = computations.get(c_name)
            inst = c.get(name) if c is not None else None
            if inst is None:
                continue
            reached.add((c_name, name))
            op = inst.opcode
            reach = min(reach, inst.shape.elements)
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
                        inputs.append((operand, as_is, reach))
                else:
                    stack.append((parent_name, operand, ch[:-1], data, as_is, reach))
                continue
            if op == "fusion" and inst.called_computations:
                body = computations.get(inst.called_computations[0])
                if body is not None and len(ch) < 64:
                    stack.append((body.name, body.root, (*ch, (c_name, name)), data, as_is, reach))
                continue
            still_data = data and op not in _NEW_DATA
            still_as_is = as_is and op in _AS_IS
            for operand in inst.operands:
                stack.append((c_name, operand, ch, still_data, still_as_is, reach))
