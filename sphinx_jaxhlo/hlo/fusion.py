"""What a compiled module does with memory: fusions, materialized buffers, reductions.

Reads a module parsed by ``sphinx_jaxhlo.hlo.parse`` and fills the report's lists
of fusions, materialized buffers and reductions (``sphinx_jaxhlo.core.report``).

*Top-level* computations are the entry and the computations it runs as
programs of their own: ``while`` bodies and conditions, ``conditional``
branches, ``call`` targets and async wrapped computations, recursively,
including those an async ``*-start`` runs on another thread
(``async_execution_thread="host"``: the host offloading of
``compute_on('device_host')``).  Fusion bodies and reducers (``to_apply=`` of
a reduce) are not top-level: they run inside one kernel.

- **Host work and host memory** are reported apart from the device's: the
  instructions of a computation off the main thread (``}, execution_thread="host"``,
  or called from one) are *host fusions*, not the device's kernels, and the
  buffers they pass each other are *host buffers*; so is any buffer whose
  layout puts it in the host's memory space (``S(5)``: an offloaded
  activation, a ``device_put`` to host memory).  What lives on the host is
  not on the device's memory budget.  Reductions on the host are listed
  like the others.

- A **fusion** is a top-level instruction that does work (everything but
  ``parameter``, ``constant``, ``tuple``, ``get-tuple-element`` and ``bitcast``).
- A **materialized** buffer is a value produced by one top-level instruction
  and read by another one of the same computation, so it lives in memory
  between the two.  ``bitcast``, ``get-tuple-element`` and ``tuple`` are views:
  the producer and the readers are found through them.  Parameters, constants
  and the computation's result (unless something else reads it too) are not
  listed, nor the context of an async ``*-start`` (its ``*-done`` is).
- A buffer **holds argument data** when its producer only moves data that
  was in memory before the program ran: an argument, or a copy, slice,
  transpose, reshape or concatenation of one, through any chain of them:
  ``copy``, ``copy-start``/``copy-done`` (the TPU's prefetches),
  ``slice-start``/``slice-done`` pieces joined by a ``ConcatBitcast`` custom
  call, or a fusion of nothing but such moves.  The result of a collective
  is not argument data, even of an argument (the weight an FSDP layer
  gathers): it did not exist on the device before, the program made it for
  the kernels that read it, and it is an intermediate.  Inside a loop body, an element
  of the loop state is argument data when the loop was given argument data
  for it and passes it on unchanged (the ``xs`` of a scan); likewise a
  branch's or a called computation's parameters.  These buffers are listed
  apart, as *argument copies*, not as intermediates.
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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sphinx_jaxhlo.core.report import Fusion, Materialized, Reduction
from sphinx_jaxhlo.hlo.model import HOST_MEMORY_SPACE, HloComputation, HloInstruction, HloModule, HloParseError
from sphinx_jaxhlo.hlo.parse import parse_module
from sphinx_jaxhlo.hlo.reasons import attach_reasons

__all__ = ["Analysis", "analyze_module", "producer_op", "reduction_origin", "top_level_computations"]


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
#: Ops that move or view data without computing new values: what a buffer
#: made from arguments by them alone holds is argument data.
_MOVES = frozenset({
    "copy", "copy-start", "copy-done", "bitcast", "bitcast-convert", "reshape", "transpose", "slice",
    "dynamic-slice", "concatenate", "slice-start", "slice-done", "get-tuple-element", "tuple",
})  # fmt: skip
#: Custom calls that only join pieces of buffers (TPU).
_MOVE_CUSTOM_CALLS = frozenset({"ConcatBitcast"})
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
    return _programs(module)[0]


def _programs(module: HloModule) -> tuple[list[str], dict[str, tuple[str, HloInstruction]]]:
    """The top-level computations in the order first reached, and for each
    but the entry the computation and instruction that first runs it."""
    order: list[str] = []
    callers: dict[str, tuple[str, HloInstruction]] = {}
    seen: set[str] = set()
    stack = [module.entry]
    while stack:
        name = stack.pop()
        if name in seen or name not in module.computations:
            continue
        seen.add(name)
        order.append(name)
        callees: list[str] = []
        comp = module.computations[name]
        off_main = _thread(comp) != "main"
        for inst in comp.instructions:
            for callee in _program_callees(inst, off_main):
                callees.append(callee)
                callers.setdefault(callee, (name, inst))
        stack.extend(reversed(callees))
    return order, callers


def _program_callees(inst: HloInstruction, off_main: bool) -> list[str]:
    """The computations an instruction runs as programs of their own (not
    fusion bodies, not reducers); ``off_main``: the instruction's computation
    runs off the main thread."""
    op = inst.opcode
    if op in ("while", "conditional", "call"):
        return list(inst.called_computations)
    if op == "async-start":
        calls = inst.attributes.get("calls", "")
        return [n.lstrip("%") for n in calls.strip("{}").replace(" ", "").split(",") if n]
    if op.endswith("-start") and "async_execution_thread" in inst.attributes:
        # custom-call-start / call-start of a computation on another thread
        return list(inst.called_computations)
    if op == "custom-call" and off_main:
        # the same written out, as XLA's dumps do: an async-start of a wrapper
        # on that thread, whose custom-call runs the computation
        return list(inst.called_computations)
    return []


#: A step of :meth:`_Analyzer.walk`: computation, instruction, the fusions
#: around it, whether data still flows, whether as is, elements that reach.
_WalkItem = tuple[str, str, tuple[tuple[str, str], ...], bool, bool, int]


def _thread(comp: HloComputation) -> str:
    """The execution thread a computation's text names (``main`` when none)."""
    return comp.attributes.get("execution_thread", "main").strip().strip('"') or "main"


_WINDOW_SIZE_RE = re.compile(r"size=([\dx]+)")
#: The name of an element of a tuple no get-tuple-element reads: ``fusion.3[1]``.
_ELEMENT_RE = re.compile(r"\[(\d+)\]$")


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


def _keeps_values(comp: HloComputation, inst: HloInstruction) -> bool:
    """A move whose result has the element type of its data operands (TPU
    compilers fold a ``convert`` into a ``reshape``: that rounds the values)."""
    if inst.opcode in ("bitcast-convert", "get-tuple-element", "tuple") or inst.shape.tuple_shapes is not None:
        return True
    for name in inst.operands:
        operand = comp.get(name)
        if operand is None or operand.shape.tuple_shapes is not None or operand.shape.elements <= 1:
            continue
        if operand.shape.dtype != inst.shape.dtype:
            return False
    return True


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


def _basename(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


class _Analyzer:
    def __init__(self, module: HloModule, source_file: str | None) -> None:
        self.module = module
        self.source_file = source_file
        self.source_base = _basename(source_file) if source_file else None
        self._lines_cache: dict[int, int | None] = {}
        self._positions: dict[str, dict[str, int]] = {}
        self._argument_data: dict[tuple[str, str, int | None, bool], bool] = {}
        #: The instruction that runs each top-level computation but the entry.
        self._callers = _programs(module)[1]

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

    # -- argument data

    def holds_argument_data(self, comp: HloComputation, inst: HloInstruction, index: int | None = None,
                            loop_state: bool = False, depth: int = 0) -> bool:
        """Whether the value ``inst`` makes (or its ``index``-th element) only
        holds argument data.

        :param loop_state: count every parameter of a loop body, branch or
            called computation as data already in memory (the rule for
            reductions), not only those that carry argument data through.
        """
        key = (comp.name, inst.name, index, loop_state)
        found = self._argument_data.get(key)
        if found is None:
            self._argument_data[key] = False  # a cycle through a loop holds nothing
            found = depth < 256 and self._holds_argument_data(comp, inst, index, loop_state, depth)
            self._argument_data[key] = found
        return found

    def _holds_argument_data(self, comp: HloComputation, inst: HloInstruction, index: int | None,
                             loop_state: bool, depth: int) -> bool:
        op = inst.opcode

        def holds(name: str, element: int | None = None, where: HloComputation = comp) -> bool:
            operand = where.get(name)
            return operand is not None and self.holds_argument_data(where, operand, element, loop_state, depth + 1)

        def data_operands() -> list[str]:
            # scalars are indices (dynamic-slice offsets), not data
            return [o for o in inst.operands if (x := comp.get(o)) is None or x.shape.tuple_shapes is not None
                    or x.shape.elements > 1]

        if op == "parameter":
            if comp.name == self.module.entry:
                return True
            return loop_state or self._parameter_holds(comp, inst, index, holds)
        if op == "get-tuple-element":
            return bool(inst.operands) and holds(inst.operands[0], inst.tuple_index)
        if op == "tuple":
            if index is not None:
                return index < len(inst.operands) and holds(inst.operands[index])
            return all(holds(o) for o in inst.operands)
        if op == "custom-call":
            return (inst.custom_call_target in _MOVE_CUSTOM_CALLS and _keeps_values(comp, inst)
                    and all(holds(o) for o in data_operands()))
        if op == "fusion":
            computations = self.module.computations
            body = self.flatten(inst)
            if not body or not all(
                    sub.opcode == "parameter" or (sub.opcode == "constant" and sub.shape.elements <= 1)
                    or (sub.opcode in _MOVES and _keeps_values(computations[c], sub)) for c, sub in body):
                return False
            return all(holds(o) for o in data_operands())
        if op in ("copy", "bitcast") and index is not None and inst.shape.tuple_shapes is not None:
            # a move of a whole tuple (a copy of a loop's state): follow the element
            return bool(inst.operands) and holds(inst.operands[0], index)
        if op in _MOVES:
            operands = data_operands()
            return bool(operands) and _keeps_values(comp, inst) and all(holds(o) for o in operands)
        return False

    def _parameter_holds(self, comp: HloComputation, param: HloInstruction, index: int | None,
                         holds: Callable[..., bool]) -> bool:
        """A parameter of a loop body or condition, a branch or a called
        computation: argument data when its caller passed argument data in
        (and, for a loop, the body passes that element on unchanged)."""
        found = self._callers.get(comp.name)
        if found is None:
            return False
        parent = self.module.computations.get(found[0])
        caller = found[1]
        if parent is None:
            return False
        if caller.opcode == "while":
            body = self.module.computations.get(caller.attributes.get("body", "").lstrip("%"))
            if index is None or body is None or not caller.operands or not self._passes_through(body, index):
                return False
            return bool(holds(caller.operands[0], index, parent))
        if caller.opcode == "conditional":
            branch = caller.called_computations.index(comp.name) if comp.name in caller.called_computations else -1
            if branch < 0 or branch + 1 >= len(caller.operands):
                return False
            return bool(holds(caller.operands[branch + 1], index, parent))
        if caller.opcode == "call":
            number = param.parameter_number
            if number is None or number >= len(caller.operands):
                return False
            return bool(holds(caller.operands[number], index, parent))
        return False

    @staticmethod
    def _passes_through(body: HloComputation, index: int) -> bool:
        """Whether a loop body returns element ``index`` of its state unchanged."""
        root = body.get(body.root)
        if root is None or root.opcode != "tuple" or index >= len(root.operands):
            return False
        out = body.get(root.operands[index])
        while out is not None and out.opcode == "bitcast" and out.operands:
            out = body.get(out.operands[0])
        if out is None or out.opcode != "get-tuple-element" or out.tuple_index != index or not out.operands:
            return False
        source = body.get(out.operands[0])
        return source is not None and source.opcode == "parameter"

    # -- the lists

    def run(self) -> Analysis:
        analysis = Analysis()
        for comp_name in top_level_computations(self.module):
            comp = self.module.computations[comp_name]
            on_host = self.on_host(comp_name)
            if on_host:
                analysis.host_computations.append(comp_name)
            for inst in comp.instructions:
                if inst.opcode in _TRIVIAL:
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

    # -- host work and host memory

    def on_host(self, comp_name: str) -> bool:
        """Whether a top-level computation runs off the main thread: its
        text says so, or the computation that runs it does."""
        seen: set[str] = set()
        name: str | None = comp_name
        while name is not None and name not in seen:
            seen.add(name)
            comp = self.module.computations.get(name)
            if comp is not None and _thread(comp) != "main":
                return True
            caller = self._callers.get(name)
            name = caller[0] if caller is not None else None
        return False

    def in_host_memory(self, comp: HloComputation, buffer: Materialized) -> bool:
        """Whether a buffer's layout puts it in host memory (``S(5)``)."""
        view = comp.get(buffer.name)  # the producer, or the get-tuple-element naming an element
        if view is not None and view.shape.tuple_shapes is None:
            return view.shape.memory_space == HOST_MEMORY_SPACE
        producer = comp.get(buffer.producer)
        shapes = producer.shape.tuple_shapes if producer is not None else None
        m = _ELEMENT_RE.search(buffer.name)  # an element no get-tuple-element reads
        if shapes is None or m is None:
            return False
        return shapes[int(m.group(1))].memory_space == HOST_MEMORY_SPACE

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
            kind="argument-copy" if self.holds_argument_data(comp, producer, index) else "intermediate",
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
        ops = [i.opcode for c, i in flat if (c, i.name) in fused_with and i.opcode not in _TRIVIAL]
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
