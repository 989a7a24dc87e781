"""What a compiled module does with memory: fusions, materialized buffers, reductions.

Reads a module parsed by ``sphinx_jaxhlo.hlo.parse`` and fills the report's lists
of fusions, materialized buffers and reductions (``sphinx_jaxhlo.core.report``).
The analysis is ``analyze_module``.  Which computations are top-level is
stated in ``sphinx_jaxhlo.hlo.programs``; what a fusion, a materialized
buffer, argument data and host work are, in ``sphinx_jaxhlo.hlo.buffers``.
The rules for reductions, applied here:

- A **reduction** is a ``reduce``, or a ``reduce-window`` (CPU splits some
  reductions into a ``reduce-window`` and a ``reduce``), anywhere inside a
  top-level instruction.  A ``reduce-window`` whose window, at every
  position, covers the whole of each dimension it slides along (the TPU's
  softmax: ``size=1x1x2047 pad=0_0x0_0x1023_1023`` over a 1024-long axis) is
  a *row reduction broadcast back*: it reduces those dimensions and writes
  each row's result at every position of the row.  A prefix scan's window
  is padded on one side only and covers the whole row at its last position
  alone, so the window tells the two apart.
- Each reduction has a *result* (its output elements; for a row reduction
  broadcast back, one per row) and a *row* (the elements that fold into one
  result: the reduced elements divided by the result).  It is *fused* when
  the data it reduces never went to memory, *unfused* when it did: when
  stored data reaches the reduced operand, through elementwise and
  data-movement ops, in a way no fused kernel's inputs can.  Stored data is
  what its kernel reads from buffers other kernels wrote.  A buffer counts
  with the elements of it that reach the reduce: along a path of ops, the
  fewest elements of any value on it.  So a ``pad`` (the GPU pads a row to a
  length its kernel can split), a ``concatenate`` of the buffer with other
  pieces, a ``reverse``, a ``transpose`` or a ``copy`` pass the whole buffer
  on; a ``slice``, a ``dynamic-slice`` or a ``gather`` only the part they
  take; a ``broadcast`` or an elementwise op with a broadcast scalar repeats
  data the kernel read once, and the repeats are computed, not stored; a
  prefix-scan stage (a ``reduce-window`` that writes as many elements as it
  reads, not a row reduction broadcast back: ``cumsum``, ``cummax``) passes
  the whole buffer on, since its running totals are computed in the kernel
  from every element it read (the H100's ``max(cumsum(exp(x)))`` reads the
  stored ``exp(x)`` in the kernel that reduces: unfused); the
  predicate of a ``select`` (``jnp.where(mask, s, -inf)``) chooses between
  values: it counts for rule 2 below (a dropout mask as large as the data
  decides every value), not for rule 1 (a causal mask broadcast over the
  heads is no short broadcast of the reduced data).  Each
  buffer counts once, by its largest path.  Elements, not bytes: a
  ``convert`` on the way changes the bytes of each value, not which values
  went to memory.  The reduction is unfused when either holds:

  1. *one* stored buffer has more elements reaching it than both the result
     and the row, and at least 1/8 of the elements reduced: it varies along
     the reduced dimensions and the kept ones alike, and at most a short
     broadcast (8 copies or fewer: the 3 components of a vector, the parts
     of a complex number, the channels of a pixel) stands between it and the reduced
     data, so it is the reduced data at its own scale (the pairwise weights
     ``w[i, j]`` of an N-body force, stored and read broadcast over the 3
     components of each pair: N·M stored for a 3·N result).  The inputs of a
     fused outer product never pass the first test (``x[i]`` has as many
     elements as the result of a sum over ``j``, ``y[j]`` as a row), so small
     inputs broadcast into a fused kernel stay fused, however many; a stored
     mask ``m[b, t]`` read broadcast over the 1024 features of
     ``sum(h * m[..., None], 1)`` fails the second: one value in 1024 of the
     reduced data came from it;
  2. or the stored buffers together reach at least half of the elements it
     reduces (a full reduction to one value has no kept dimension for rule
     1; the half, rather than an exact count, keeps the verdict when the
     compiler pads, slices or joins what it reduces: the pieces of a
     ``concatenate`` add up).

  XLA's GPU records agree where they speak: in the N-body force, the
  priority-fusion record of the H100 holds the cost model's refusal to fuse
  the weights' kernel into the reduction (``update_priority``, fused time
  above unfused time); the reasons quote it (``sphinx_jaxhlo.hlo.decisions.quotes``).
  The record is not the rule: XLA keeps small producers apart too (a
  per-row mean), whose buffers are not the reduced data.
  A ``dot`` or ``convolution`` makes new data, so a buffer that only feeds a
  dot does not count, and neither does a buffer that holds argument data,
  nor (inside a loop body) the loop state or a copy of it: they were in
  memory before the kernel ran, so reading them materializes nothing new
  (the buffer that fed the loop, if the program computed it, is listed where
  the loop reads it).  The buffer an unfused reduction names is the one of
  which the most elements reach it (of equals, the larger).  A reduction
  over dimensions (or windows) of size 1 is a slice or a reshape in
  disguise, as TPU compilers emit, and is not listed.
- **Who wrote a reduction** (``Reduction.origin`` in the report):
  verdicts are about the reductions the program asked for (``user``); the
  compiler makes others, which are listed with what made them and get no
  verdict.  In order:

  1. ``second-stage``: a reduce that reads, as is, the partial results of
     the same reduction: the element another reduction wrote, with the same
     reducer (its ``to_apply`` computes the same operation); the second
     stage of a split reduction (GPU row reductions, CPU tree reductions).
     A reduction of another reduction's result (the ``min`` of a stored sum
     of squares, the ``max`` of per-row minima) is not one: it is the
     program's own, and the stored result is the data it reduces.
  2. ``scan``: a ``reduce-window`` whose result has at least as many
     elements as its operand and is not a row reduction broadcast back: a
     sliding window, as in the prefix-scan stages XLA builds for
     ``cumsum``, ``cummax`` or ``cumprod``; it writes as much as it reads,
     so nothing is summed up.
  3. By the JAX operation in the reduce's ``op_name`` metadata: a reduction
     primitive (``reduce_sum``, ``reduce_max``, ``argmax``, ``reduce``...) or
     no metadata at all is ``user``; ``dot_general`` or
     ``conv_general_dilated`` is ``dot`` (a GEMM split along its contraction,
     split-K, whose partial products a small reduce adds; or a small dot
     computed as multiply and reduce), except a contraction computed as
     multiply and reduce that is unfused by the rules above over a buffer no
     GEMM wrote (the TPU's ``exp(-d2) @ v``): that is the program's
     contraction reading stored data, and it is ``user``; ``cumsum`` and its
     kin are ``scan``; a row reduction broadcast back whose metadata names
     the operation that reads it (the TPU names a softmax's max ``sub``) is
     ``user``; any other operation (``sort``, ``top_k``...) is ``compiler``.
     The JAX operation of a row reduction broadcast back is taken from its
     reducer (``reduce_max`` for ``maximum``...) where the metadata names
     another.
- **Reductions that matter.**  A program's summary and its checks
  (``:expect-reduction:``, ``check(reduction=...)``) speak for its
  reductions of the program's own, except those too small to matter
  (``Reduction.minor``): a reduction whose reduced data is under 1/64 of the
  largest one's (the 262 KB count of a mask beside the 268 MB masked sum it
  divides).  The line is relative, not a number of bytes: the verdict of a
  program then does not change with its size (the guide compiles its
  examples small; an absolute line would leave small programs without any
  reduction that matters, or let a toy-sized one decide a large program).
  A sixty-fourth keeps every reduction of comparable scale: the minimum of
  pairwise distances (1/16 of the sum of squares that made them), a
  layer norm beside attention's softmax (1/16 at a 16-head width).  A minor
  reduction keeps its own verdict in the report's list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from sphinx_jaxhlo.core.memory import HOST_MEMORY_SPACE
from sphinx_jaxhlo.core.report import Fusion, Materialized, Reduction
from sphinx_jaxhlo.hlo.buffers import TRIVIAL, BufferAnalyzer
from sphinx_jaxhlo.hlo.model import HloComputation, HloInstruction, HloModule, HloParseError
from sphinx_jaxhlo.hlo.parse import parse_module
from sphinx_jaxhlo.hlo.programs import producer_op, top_level_computations
from sphinx_jaxhlo.hlo.reasons import Written, attach_reasons
from sphinx_jaxhlo.hlo.reducers import REDUCER_OPS, prefix_window, reducer, row_dimensions

__all__ = ["MINOR_FRACTION", "SHORT_BROADCAST", "Analysis", "analyze_module", "computes_product", "mark_minor",
           "reduction_origin", "row_dimensions"]


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
        analyzer = _Analyzer(module, source_file)
        analysis = analyzer.run()
        buffers = [*analysis.materialized, *analysis.host_buffers]
        # work and buffers on the host thread have their reasons too (they are only listed apart)
        attach_reasons([*analysis.fusions, *analysis.host_fusions], buffers, analysis.reductions, target,
                       analyzer.written(buffers))
        return analysis
    except HloParseError:
        raise
    except (KeyError, IndexError, ValueError, TypeError, AttributeError, RecursionError) as exc:
        # A module that parsed but does not hold together (an inconsistent
        # hand-edited text): report it as the one documented error.
        raise HloParseError(f"inconsistent module: {type(exc).__name__}: {exc}") from exc


#: A step of :meth:`_Analyzer.walk`: computation, instruction, the fusions
#: around it, whether data still flows, whether as is, elements that reach, whether as values.
_WalkItem = tuple[str, str, tuple[tuple[str, str], ...], bool, bool, int, bool]


_WINDOW_SIZE_RE = re.compile(r"size=([\dx]+)")


def computes_product(ops: Iterable[str], *custom: str | None) -> bool:
    """Whether an instruction with these opcodes (a fusion's, or its own) and custom kinds or
    call targets computes a matrix product: a dot or a convolution, or a GEMM library call (a
    cuBLAS custom call holds no ``dot``)."""
    names = " ".join(filter(None, custom)).lower()
    return bool(set(ops) & {"dot", "convolution"}) or any(w in names for w in ("gemm", "matmul", "cublas"))


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


#: Ops through which an element written after a reduce is still that reduce's result, one for one.
_ONE_FOR_ONE = frozenset({"add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "exponential",
                          "log", "log-plus-one", "exponential-minus-one", "sqrt", "rsqrt", "negate", "abs", "tanh",
                          "logistic", "cosine", "sine", "convert", "bitcast", "reshape", "copy", "select",
                          "compare", "clamp"})


def _reduce_before(writer: HloInstruction, body: list[HloInstruction]) -> HloInstruction | None:
    """The ``reduce`` inside a kernel whose result the element ``writer`` writes is computed
    from elementwise (a matrix-vector product's multiply-and-reduce with ``exp`` after it):
    one with as many results as ``writer`` writes; ``None`` where the element is not one
    (softmax's kernel writes ``exp(x - max)``, which has more elements than the max)."""
    if writer.opcode not in _ONE_FOR_ONE:
        return None
    by_name = {sub.name: sub for sub in body}
    wanted = _result_elements(writer)
    todo, seen = list(writer.operands), set[str]()
    while todo and len(seen) < 64:
        name = todo.pop()
        if name in seen or (inst := by_name.get(name)) is None:
            continue
        seen.add(name)
        if inst.opcode == "reduce" and _result_elements(inst) == wanted:
            return inst
        if inst.opcode in _ONE_FOR_ONE and _result_elements(inst) == wanted:
            todo += inst.operands
    return None


def _result_elements(inst: HloInstruction) -> int:
    shape = inst.shape.tuple_shapes[0] if inst.shape.tuple_shapes else inst.shape
    return shape.elements


def reduction_origin(reduce: HloInstruction, in_elements: int, partial_of: str | None, *,
                     row_broadcast: bool = False, contraction: bool = False) -> str:
    """Who wrote a reduction (the rules of the module docstring, in their order).

    :param row_broadcast: the reduce is a row reduction broadcast back (:func:`row_dimensions`).
    :param contraction: it is unfused over stored data that no GEMM wrote.
    """
    if partial_of is not None:
        return "second-stage"
    if reduce.opcode == "reduce-window" and _result_elements(reduce) >= in_elements and not row_broadcast:
        return "scan"
    op = producer_op(reduce.op_name)
    if op is None or op in _USER_REDUCTION_OPS or op.startswith("reduce_"):
        return "user"
    if op in _DOT_OPS:
        return "user" if contraction else "dot"
    if op in _SCAN_OPS:
        return "scan"
    return "user" if row_broadcast else "compiler"


def is_scan_window(inst: HloInstruction, operand: HloInstruction | None) -> bool:
    """A ``reduce-window`` that is a prefix-scan stage: it writes as many elements as it reads and is
    not a row reduction broadcast back (each result is a running total of the values before it)."""
    if inst.opcode != "reduce-window" or operand is None:
        return False
    return (_result_elements(inst) >= operand.shape.elements and prefix_window(inst)
            and not row_dimensions(inst, operand))


def mark_minor(reductions: list[Reduction]) -> None:
    """Set ``minor`` on the program's reductions too small to matter (the
    module docstring's line: under 1/64 of the largest one's reduced data)."""
    own = [r for r in reductions if r.is_users]
    largest = max((r.input_bytes for r in own), default=0)
    for r in own:
        r.minor = r.input_bytes * MINOR_FRACTION < largest


#: The most copies of a stored buffer a short broadcast makes (rule 1 of the verdict).
SHORT_BROADCAST = 8
#: A reduction of the program's matters unless its reduced data is under 1/MINOR_FRACTION of the largest one's.
MINOR_FRACTION = 64


class _Analyzer(BufferAnalyzer):
    """The analysis of one module: the fusions and buffers, and the reductions with their verdicts."""

    # -- the lists

    def _is_scan_window(self, comp: HloComputation | None, inst: HloInstruction) -> bool:
        """A prefix-scan stage passes the data it reads on, as an elementwise op does: its results
        are running totals of that data, computed in the kernel, as many as it read."""
        return comp is not None and is_scan_window(inst, comp.get(inst.operands[0]) if inst.operands else None)

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
                if on_host or buffer.memory_space == HOST_MEMORY_SPACE:
                    buffer.kind = "host"
                    analysis.host_buffers.append(buffer)
                    continue
                (analysis.argument_copies if buffer.kind == "argument-copy" else analysis.materialized).append(buffer)
        mark_minor(analysis.reductions)
        analysis.materialized.sort(key=lambda m: (-m.bytes, m.name, m.computation))
        analysis.argument_copies.sort(key=lambda m: (-m.bytes, m.name, m.computation))
        analysis.host_buffers.sort(key=lambda m: (-m.bytes, m.name, m.computation))
        return analysis


    def written(self, buffers: list[Materialized]) -> dict[tuple[str, str], Written]:
        """How each stored buffer's element was written: the op inside its
        kernel, the kernel's outputs, the element types in the kernel."""
        out: dict[tuple[str, str], Written] = {}
        for m in buffers:
            comp = self.module.computations.get(m.computation)
            producer = comp.get(m.producer) if comp is not None else None
            if comp is None or producer is None:
                continue
            view = comp.get(m.name)
            index = view.tuple_index if view is not None and view.opcode == "get-tuple-element" else None
            if index is None and m.name.endswith("]") and "[" in m.name:
                index = int(m.name[m.name.rindex("[") + 1:-1])
            body = [sub for _, sub in self.flatten(producer)] or [producer]
            writer = self.defining(producer, index)
            reduce = writer if writer.opcode == "reduce" else _reduce_before(writer, body)
            operand = reduce.operands[0] if reduce is not None and reduce.operands else None
            source = next((sub for sub in body if sub.name == operand), None) if operand else None
            out[(m.computation, m.name)] = Written(
                opcode=writer.opcode,
                after_reduce=reduce is not None and reduce is not writer,
                reduce_op=producer_op(reduce.op_name) if reduce is not None else None,
                reduced=source.shape.elements // max(_result_elements(reduce), 1)
                if source is not None and reduce is not None else 0,
                outputs=len(producer.shape.tuple_shapes) if producer.shape.tuple_shapes else 1,
                dtypes=frozenset(sub.shape.dtype for sub in body if sub.shape.tuple_shapes is None and sub.shape.dtype))
        return out

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

    def partial_results(self, reduce: HloInstruction, producer: HloInstruction | None, index: int | None) -> bool:
        """Whether the value ``producer`` makes (or its ``index``-th element)
        holds partial results of ``reduce``'s reduction: another reduction
        wrote that element, with the same reducer."""
        if producer is None:
            return False
        writer = self.defining(producer, index)
        if writer.opcode not in _REDUCTIONS:
            return False
        mine, theirs = reducer(self.module, reduce), reducer(self.module, writer)
        return mine is not None and mine == theirs

    def makes_gemm(self, producer: HloInstruction | None) -> bool:
        """Whether a top-level instruction computes a matrix product: a dot or
        convolution, a fusion holding one, a GEMM library call."""
        if producer is None:
            return False
        return computes_product(self.ops(producer), producer.custom_kind, producer.custom_call_target)

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
        rows = row_dimensions(reduce, first)
        if rows:  # a row reduction broadcast back: one result per row
            row = 1
            for d in rows:
                row *= in_shape.dims[d]
            result = max(in_shape.elements // max(row, 1), 1)
        else:
            result = max(_result_elements(reduce), 1)
        row = max(in_shape.elements // result, 1)
        fused_with: set[tuple[str, str]] = set()
        # (top-level operand, reached as is, elements that reach, as values rather than as a select's predicate)
        inputs: list[tuple[str, bool, int, bool]] = []
        for operand in data:
            self.walk(where.name, operand, chain, fused_with, inputs)
        partial_of = None
        stored: dict[str, int] = {}  # buffer -> the most elements of it that reach the reduce
        sizes: dict[str, int] = {}
        producers: dict[str, HloInstruction] = {}
        valued: dict[str, int] = {}  # the same, along paths that carry values (not a select's predicate)
        for operand, as_is, reach, values in inputs:
            name, producer, index = self.resolve(comp, operand)
            if producer is None or self.holds_argument_data(comp, producer, index, loop_state=True):
                # an argument (or loop state), or a copy of one, was in memory
                # before the program ran: reading it materializes nothing new
                continue
            if as_is and self.partial_results(reduce, producer, index):
                partial_of = name  # partial results of a split reduction
                continue
            stored[name] = max(stored.get(name, 0), reach)
            if values:
                valued[name] = max(valued.get(name, 0), reach)
            sizes[name] = _element_count(producer, index)
            producers[name] = producer
        materialized = None
        biggest = max(valued.values(), default=0)
        if stored and ((biggest > max(result, row) and biggest * SHORT_BROADCAST >= in_shape.elements)
                       or 2 * sum(stored.values()) >= in_shape.elements):
            # the buffer most of whose elements reach the reduce; of equals, the larger
            materialized = max(stored, key=lambda n: (stored[n], sizes[n]))
        flat = self.flatten(top) if top.opcode == "fusion" else []
        ops = [i.opcode for c, i in flat if (c, i.name) in fused_with and i.opcode not in TRIVIAL]
        partial_of = partial_of if materialized is None else None
        contraction = materialized is not None and not self.makes_gemm(producers[materialized])
        op = producer_op(reduce.op_name)
        if rows and (op is None or not (op in _USER_REDUCTION_OPS or op.startswith("reduce_"))):
            computes = reducer(self.module, reduce)
            op = REDUCER_OPS.get(computes[0][0], op) if computes and len(computes) == 1 else op
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
                op=op,
                origin=reduction_origin(reduce, in_shape.elements, partial_of, row_broadcast=bool(rows),
                                        contraction=contraction),
            )
        ]

    def walk(
        self,
        comp_name: str,
        start: str,
        chain: tuple[tuple[str, str], ...],
        reached: set[tuple[str, str]],
        inputs: list[tuple[str, bool, int, bool]],
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
            inputs.append((start, True, first.shape.elements, True))
            return
        stack: list[_WalkItem] = [(comp_name, start, chain, True, True, first.shape.elements, True)]
        seen: set[_WalkItem] = set()
        while stack:
            item = stack.pop()
            if item in seen:
                continue
            seen.add(item)
            c_name, name, ch, data, as_is, reach, values = item
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
                        inputs.append((operand, as_is, reach, values))
                else:
                    stack.append((parent_name, operand, ch[:-1], data, as_is, reach, values))
                continue
            if op == "fusion" and inst.called_computations:
                body = computations.get(inst.called_computations[0])
                if body is not None and len(ch) < 64:
                    stack.append((body.name, body.root, (*ch, (c_name, name)), data, as_is, reach, values))
                continue
            still_data = data and (op not in _NEW_DATA or self._is_scan_window(c, inst))
            still_as_is = as_is and op in _AS_IS
            for position, operand in enumerate(inst.operands):
                # a select's predicate chooses between values and carries none of them (a mask)
                chooses = op == "select" and position == 0
                stack.append((c_name, operand, ch, still_data, still_as_is, reach, values and not chooses))
