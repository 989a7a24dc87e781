"""What a compiled module keeps in memory: its fusions and materialized buffers.

Reads the top-level computations (``sphinx_jaxhlo.hlo.programs``) of a
module parsed by ``sphinx_jaxhlo.hlo.parse``.  ``BufferAnalyzer`` lists
their fusions and buffers as the report has them (``sphinx_jaxhlo.core.report``);
the verdicts on reductions (``sphinx_jaxhlo.hlo.fusion``) build on it.

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
- A buffer is **named** by the JAX operation that made it (``producer_op``):
  a fusion's own ``op_name``, which names its whole value; for one output of
  a multi-output fusion, the ``op_name`` of the op inside that computes
  that output.  Two exceptions: the result of a collective is named by the
  collective (``all-gather``), because the partitioner that inserts it
  copies the metadata of the operation it serves (the weight an FSDP layer
  gathers would be "the result of dot_general"); and a fusion whose own
  ``op_name`` is that of a reduction inside it which does not write its
  result (a YNN kernel's metadata names one of its ops) is named by the dot
  (or convolution) whose product reaches its result through elementwise ops,
  if one does: a GEMM with work after it, else by the op that writes the
  result.  A GEMM or convolution with elementwise work fused after it (an
  epilogue) is named by the last op and the product: ``tanh of dot_general``
  (the H100's Triton GEMM of ``tanh(x @ w)``, the TPU's convolution fusion of
  it), not ``dot_general``, whose result it is not, whatever op the kernel's
  own metadata names; a product XLA computes as multiply and reduce (a
  matrix-vector product) is a product too.  A kernel whose metadata names a
  product that does not reach its result through elementwise ops (the TPU's
  fusion of ``sum(tanh(w @ x), axis=0)``) is named by the op that writes the
  result (``reduce_sum``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sphinx_jaxhlo.core.report import Fusion, Materialized
from sphinx_jaxhlo.hlo.model import HloComputation, HloInstruction, HloModule
from sphinx_jaxhlo.hlo.programs import execution_thread, producer_op, programs

__all__ = ["TRIVIAL", "BufferAnalyzer"]

#: Instructions that move no data of their own.
TRIVIAL = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "bitcast"})
#: Ops that move or view data without computing new values: what a buffer
#: made from arguments by them alone holds is argument data.
_MOVES = frozenset({
    "copy", "copy-start", "copy-done", "bitcast", "bitcast-convert", "reshape", "transpose", "slice",
    "dynamic-slice", "concatenate", "slice-start", "slice-done", "get-tuple-element", "tuple",
})  # fmt: skip
#: Custom calls that only join pieces of buffers (TPU).
_MOVE_CUSTOM_CALLS = frozenset({"ConcatBitcast"})

#: Collectives, as HLO names them (an async one adds ``-start``/``-done``).
COLLECTIVE_OPS = frozenset({"all-gather", "all-reduce", "reduce-scatter", "all-to-all", "ragged-all-to-all",
                            "collective-permute", "collective-broadcast"})
#: Ops that end a value's path to a kernel's result: they make new values out of many (or none).
_STOPS = frozenset({"parameter", "constant", "reduce", "reduce-window", "sort", "scatter", "gather", "custom-call",
                    "fft", "rng", "rng-bit-generator", "iota", "while", "conditional", "call", "fusion"})
#: The name of an element of a tuple no get-tuple-element reads: ``fusion.3[1]``.


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


def _basename(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


#: Deeper than any tuple nesting XLA writes (a tuple of tuples of a loop's state is 2 or 3).
_MAX_TUPLE_DEPTH = 64


#: The JAX operations of a product (a GEMM, a convolution), however XLA computes them.
_PRODUCTS = frozenset({"dot_general", "conv_general_dilated"})


def _makes_product(inst: HloInstruction) -> bool:
    """Whether an instruction computes a product: a dot or a convolution, or a reduce that XLA
    made of a ``dot_general`` (a matrix-vector product as multiply and reduce: the TPU's and the
    H100's input fusions)."""
    return inst.opcode in ("dot", "convolution") or (inst.opcode == "reduce" and producer_op(inst.op_name)
                                                      in _PRODUCTS)


def _with_epilogue(last: str | None, product: str, computing: list[HloInstruction]) -> str:
    """A GEMM's (or convolution's) product with elementwise work fused after it, named by its last op:
    ``tanh of dot_general``; the product alone, or anything else, by ``product``."""
    made = any(_makes_product(i) and producer_op(i.op_name) == product for i in computing)
    if made and last and last != product and computing and not _makes_product(computing[0]):
        return f"{last} of {product}"
    return product


class BufferAnalyzer:
    """The fusions and the buffers of a module's top-level computations, with
    where each came from in the example's source; the analysis of reductions
    (:mod:`sphinx_jaxhlo.hlo.fusion`) extends it."""

    def __init__(self, module: HloModule, source_file: str | None) -> None:
        self.module = module
        self.source_file = source_file
        self.source_base = _basename(source_file) if source_file else None
        self._lines_cache: dict[int, int | None] = {}
        self._positions: dict[str, dict[str, int]] = {}
        self._argument_data: dict[tuple[str, str, int | None, bool], bool] = {}
        #: The instruction that runs each top-level computation but the entry.
        self._callers = programs(module)[1]

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
        return list(dict.fromkeys(sub.opcode for _, sub in self.flatten(inst) if sub.opcode not in TRIVIAL))

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


    # -- host work and host memory

    def on_host(self, comp_name: str) -> bool:
        """Whether a top-level computation runs off the main thread: its
        text says so, or the computation that runs it does."""
        seen: set[str] = set()
        name: str | None = comp_name
        while name is not None and name not in seen:
            seen.add(name)
            comp = self.module.computations.get(name)
            if comp is not None and execution_thread(comp) != "main":
                return True
            caller = self._callers.get(name)
            name = caller[0] if caller is not None else None
        return False

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
            memory_space=inst.shape.memory_space if inst.shape.tuple_shapes is None else 0,
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
            # a path longer than any real tuple nesting: the text has a cycle (a tuple that reads
            # its own element), which would grow the path without end; XLA never writes one
            if (current, path) in seen or len(path) > _MAX_TUPLE_DEPTH:
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
            if op in TRIVIAL or op.endswith("-start"):
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

    def naming_op(self, producer: HloInstruction, inner: HloInstruction, index: int | None) -> str | None:
        """The JAX operation a buffer is named by (the rule of the module docstring)."""
        collective = next((inst.opcode for inst in (producer, inner)
                           if inst.opcode.removesuffix("-done").removesuffix("-start") in COLLECTIVE_OPS), None)
        if collective is not None:
            return collective.removesuffix("-done").removesuffix("-start")
        own = producer_op(producer.op_name) if producer is not inner else None
        computing = self._computing(inner)
        last = producer_op(inner.op_name)
        found = next((producer_op(i.op_name) for i in computing if _makes_product(i) and producer_op(i.op_name)),
                     None)
        if index is None and own is not None and not self._names_a_reduce_inside(producer, own, inner):
            if own == last and found is not None:  # the kernel named by its epilogue: by the product too
                return _with_epilogue(last, found, computing)
            if own in _PRODUCTS and not any(producer_op(i.op_name) == own for i in computing):
                return last or own  # the product does not reach the result: the op that writes it
            return _with_epilogue(last, own, computing)
        return _with_epilogue(last, found, computing) if found else last or own

    def _names_a_reduce_inside(self, producer: HloInstruction, op: str, result: HloInstruction) -> bool:
        """Whether a fusion's own ``op_name`` is that of a reduction inside it
        that does not write its result (a YNN kernel's metadata may name any of its ops)."""
        return any(sub.opcode in ("reduce", "reduce-window") and sub is not result and producer_op(sub.op_name) == op
                   for _, sub in self.flatten(producer))

    def _computing(self, inner: HloInstruction) -> list[HloInstruction]:
        """The instructions inside a kernel whose values reach its result
        ``inner`` through elementwise and data-movement ops (a dot or a
        convolution met on the way is included, and ends that path)."""
        comp = next((c for c in self.module.computations.values() if c.get(inner.name) is inner), None)
        if comp is None:
            return [inner]
        out: list[HloInstruction] = []
        stack, seen = [inner], set()
        while stack:
            inst = stack.pop()
            if inst.name in seen:
                continue
            seen.add(inst.name)
            out.append(inst)
            if inst.opcode in _STOPS or inst.opcode in ("dot", "convolution"):
                continue
            stack.extend(op for name in inst.operands if (op := comp.get(name)) is not None)
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
        op = self.naming_op(producer, inner, index)
        shapes = producer.shape.tuple_shapes
        element = shapes[index] if shapes is not None and index is not None and index < len(shapes) else producer.shape
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
            memory_space=element.memory_space if element.tuple_shapes is None else 0,
        )

