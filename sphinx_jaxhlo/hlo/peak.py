"""What is live at a program's peak, and the memory in use across its program order, computed
from XLA's buffer assignment and live ranges (:mod:`sphinx_jaxhlo.hlo.buffer_assignment`).

The rules, applied the same way on every target:

- **Counted memory** is the memory the device figure counts
  (:meth:`~sphinx_jaxhlo.core.memory.Memory.settle`): on a TPU, memory space 0 (HBM) only; on
  the CPU and the GPUs every memory space but the host's (their layouts name none).  A buffer
  in another space (a TPU chip's own memory, the host's) is listed apart, never counted.
- **Held for the whole run**: the allocations of the arguments, of the outputs and of the
  constants (the runtime allocates an output's buffer before the program starts, whatever is
  live in it yet), and the generated code.
- **Temporaries**: a value of any other allocation takes its slice (offset, size) of that
  allocation at the steps its live range covers, both ends included; values that share bytes
  at one step (an in-place update that writes into the buffer it reads, a loop's state and
  the body's result) count once.  Thread-local values (scalars inside kernels) count nowhere.
- **In use at a step** = what is held for the whole run + the temporaries' slices live at that
  step.  The **peak** is the step where it is largest: of the first run of such steps, the last
  (a buffer updated in place during the run holds its last value there, the one the findings
  name); the kernel named at the peak is the step's instruction, or, where that one only moves
  or views data (a copy, a tuple, a bitcast, a TPU's ``slice-done``), the nearest kernel
  after it.  XLA's own "Live ranges at N (peak)" section is
  not read: on the H100 it names the wrong step for the seed's dot form.  XLA
  reserves the block of temporaries for the whole run, sized by its heap simulation: at least
  what is live at the peak, more where buffers do not pack (the report says how much).
- **Each buffer at the peak is named** by the value in it (an output's or a constant's buffer by
  the value it is held for: XLA may keep a small temporary in an output's buffer before the
  output is written; one not computed yet is *not yet written*).  Among values that share its
  bytes, one a kernel computes rather than a loop's merged state, the latest started.  It is
  followed through a loop's state (the body's result for that element), tuples, bitcasts and
  copies (a TPU's ``copy-start``/``copy-done`` moves between its memories) to the kernel that
  writes it, and named by the JAX operation as the findings name a buffer
  (:mod:`sphinx_jaxhlo.hlo.buffers`), with its lines in the example; a copy of an argument says
  which.  A value whose instruction the module's text lacks (the TPU's compiler rewrites slices
  of arguments into ``slice-start`` and ``slice-done`` after assigning buffers) is named by the
  name's operation, and says so.
- **Folding**: where more than :data:`MIN_FOLDED` buffers are live, those of under 1 % of the
  peak, and those after the first :data:`MAX_LISTED`, are folded into one "N others" line; so
  are those in other memory spaces after the first :data:`MAX_ELSEWHERE`.

Needs neither jax nor Sphinx.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from sphinx_jaxhlo.core.memory import (
    DEVICE_MEMORY_SPACE,
    HOST_MEMORY_SPACE,
    LiveAtPeak,
    LiveBuffer,
    Memory,
)
from sphinx_jaxhlo.core.report import Report
from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.hlo.buffer_assignment import Allocation, AssignedValue, BufferAssignment, parsed_record
from sphinx_jaxhlo.hlo.buffers import BufferAnalyzer
from sphinx_jaxhlo.hlo.model import HloComputation, HloInstruction, HloModule
from sphinx_jaxhlo.hlo.programs import producer_op, programs

__all__ = ["FOLD_SHARE", "MAX_ELSEWHERE", "MAX_LISTED", "MIN_FOLDED", "attach_live_at_peak", "counted_space",
           "live_at_peak", "peak_from_record"]

#: Buffers of under this share of the peak are folded into "N others".
FOLD_SHARE = 0.01
#: The most buffers listed in counted memory, and in other memory spaces; up to
#: :data:`MIN_FOLDED` are all listed, however small.
MAX_LISTED = 10
MIN_FOLDED = 6
MAX_ELSEWHERE = 5

#: Roles of allocations held for the whole run.
_WHOLE_RUN = ("argument", "output", "constant")
#: Instructions that compute nothing of their own: a value they define is named by its origin.
_VIEWS = frozenset({"parameter", "get-tuple-element", "tuple", "bitcast", "while", "copy-done", "copy-start"})
#: Instructions that only move or view data: the peak is not named after one of them (the
#: module's rules), but after the nearest kernel.
_MOVES = _VIEWS | {"copy", "slice-start", "slice-done", "dynamic-slice", "async-start", "async-done",
                   "optimization-barrier", "constant"}


def counted_space(color: int, platform: str) -> bool:
    """Whether memory space ``color`` counts toward the device figure on ``platform``."""
    if platform == "tpu":
        return color == DEVICE_MEMORY_SPACE
    return color != HOST_MEMORY_SPACE


def _plain_shape(text: str) -> str:
    """A shape without layouts or index comments: ``f32[20000,3]``."""
    text = re.sub(r"/\*index=\d+\*/", "", text)
    previous = None
    while previous != text:
        previous, text = text, re.sub(r"\{[^{}]*\}", "", text)
    return text.strip()


def _index(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.strip("{}").split(",") if p.strip().isdigit())


class _Slices:
    """The distinct slices live in one allocation, their union kept as slices come and go."""

    def __init__(self) -> None:
        self.starts: list[tuple[int, int]] = []  # (offset, end), sorted
        self.counts: dict[tuple[int, int], int] = {}
        self.total = 0  # sum of the distinct slices
        self.overlaps = 0  # adjacent pairs that overlap: 0 means the sum is the union

    @staticmethod
    def _overlap(a: tuple[int, int] | None, b: tuple[int, int] | None) -> int:
        return int(a is not None and b is not None and a[1] > b[0])

    def _pairs(self, i: int) -> int:
        prev = self.starts[i - 1] if i > 0 else None
        nxt = self.starts[i + 1] if i + 1 < len(self.starts) else None
        here = self.starts[i]
        return self._overlap(prev, here) + self._overlap(here, nxt) - self._overlap(prev, nxt)

    def add(self, piece: tuple[int, int]) -> None:
        n = self.counts.get(piece, 0)
        self.counts[piece] = n + 1
        if n:
            return
        i = bisect.bisect_left(self.starts, piece)
        self.starts.insert(i, piece)
        self.total += piece[1] - piece[0]
        self.overlaps += self._pairs(i)

    def remove(self, piece: tuple[int, int]) -> None:
        n = self.counts.get(piece, 0)
        if n > 1:
            self.counts[piece] = n - 1
            return
        if not n:
            return
        del self.counts[piece]
        i = bisect.bisect_left(self.starts, piece)
        self.overlaps -= self._pairs(i)
        del self.starts[i]
        self.total -= piece[1] - piece[0]

    def union(self) -> int:
        if not self.overlaps:
            return self.total
        out, reach = 0, -1
        for start, end in self.starts:
            if end > reach:
                out += end - max(start, reach)
                reach = end
        return out


@dataclass
class _Timeline:
    #: (step, bytes) where counted use changes
    points: list[list[int]]
    peak_step: int
    peak_bytes: int
    temp_at_peak: int
    all_spaces_peak: int


def _sweep(record: BufferAssignment, platform: str, held: int) -> _Timeline:
    """Memory in use at every step: ``held`` plus the temporaries' live slices."""
    starts: dict[int, list[tuple[int, tuple[int, int], bool]]] = {}
    stops: dict[int, list[tuple[int, tuple[int, int], bool]]] = {}
    for alloc in record.allocations:
        if alloc.role != "temp":
            continue
        for value in alloc.values:
            span = record.ranges.get(value.key)
            if span is None or value.size <= 0:
                continue
            counted = counted_space(value.color, platform)
            item = (alloc.index, (value.offset, value.offset + value.size), counted)
            starts.setdefault(span[0], []).append(item)
            stops.setdefault(span[1] + 1, []).append(item)
    slices: dict[int, _Slices] = {}
    counted_of: dict[int, bool] = {}
    unions: dict[int, int] = {}
    temp_counted = temp_all = 0
    points: list[list[int]] = []
    peak_step, peak_bytes, temp_at_peak, all_peak = 0, -1, 0, 0
    on_peak = False  # in the first run of steps of the largest use so far
    for step in range(record.end + 1):
        changed: set[int] = set()
        for index, piece, _ in stops.get(step, ()):
            slices[index].remove(piece)
            changed.add(index)
        for index, piece, counted in starts.get(step, ()):
            slices.setdefault(index, _Slices()).add(piece)
            counted_of[index] = counted
            changed.add(index)
        for index in changed:
            now = slices[index].union()
            delta = now - unions.get(index, 0)
            unions[index] = now
            temp_all += delta
            if counted_of[index]:
                temp_counted += delta
        total = held + temp_counted
        if not points or points[-1][1] != total:
            points.append([step, total])
        if total > peak_bytes or (total == peak_bytes and on_peak):
            peak_step, peak_bytes, temp_at_peak = step, total, temp_counted
            on_peak = True
        else:
            on_peak = False
        all_peak = max(all_peak, temp_all)
    return _Timeline(points, peak_step, max(peak_bytes, 0), temp_at_peak, all_peak)


class _Namer:
    """Names the value in a buffer as the findings name a buffer (the module's rules)."""

    def __init__(self, module: HloModule | None, source_name: str | None) -> None:
        self.module = module
        self.where: dict[str, tuple[HloComputation, HloInstruction]] = {}
        self.analyzer = BufferAnalyzer(module, source_name) if module is not None else None
        self.callers: dict[str, tuple[str, HloInstruction]] = {}
        if module is not None:
            for comp in module.computations.values():
                for inst in comp.instructions:
                    self.where.setdefault(inst.name, (comp, inst))
            self.callers = programs(module)[1]

    def instruction(self, name: str) -> tuple[HloComputation, HloInstruction] | None:
        return self.where.get(name)

    def origin(self, name: str, index: tuple[int, ...]) -> tuple[HloComputation, HloInstruction, tuple[int, ...]] \
            | None:
        """The instruction that computes value ``name{index}``: through a loop's state, tuples and views."""
        found = self.where.get(name)
        if found is None or self.module is None:
            return None
        comp, inst = found
        for _ in range(64):
            op = inst.opcode
            nxt: tuple[HloComputation, HloInstruction | None, tuple[int, ...]] | None = None
            if op == "parameter" and comp.name != self.module.entry:
                caller = self.callers.get(comp.name)
                if caller is not None and caller[1].opcode == "while":
                    nxt = self._loop_result(caller[1], index)
            elif op == "while":
                nxt = self._loop_result(inst, index)
            elif op == "get-tuple-element" and inst.operands and inst.tuple_index is not None:
                nxt = (comp, comp.get(inst.operands[0]), (inst.tuple_index, *index))
            elif op == "tuple" and index and index[0] < len(inst.operands):
                nxt = (comp, comp.get(inst.operands[index[0]]), index[1:])
            elif op == "bitcast" and inst.operands:
                nxt = (comp, comp.get(inst.operands[0]), index)
            elif op == "copy-done" and inst.operands:  # the destination of its copy-start
                nxt = (comp, comp.get(inst.operands[0]), (0,))
            elif inst.operands and ((op == "copy-start" and index == (0,)) or (op == "copy" and not index)):
                nxt = (comp, comp.get(inst.operands[0]), ())  # a copy holds what it copies (not the
                # copy-start's other elements: the source it aliases, its flag, the tuple's table)
            if nxt is None or nxt[1] is None:
                return comp, inst, index
            comp, inst, index = nxt[0], nxt[1], nxt[2]
        return comp, inst, index

    def _loop_result(self, loop: HloInstruction, index: tuple[int, ...]) \
            -> tuple[HloComputation, HloInstruction | None, tuple[int, ...]] | None:
        """Element ``index`` of what a loop's body returns (what the loop writes into its state)."""
        body = self.module.computations.get(loop.attributes.get("body", "").lstrip("%")) if self.module else None
        if body is None or not index:
            return None
        root = body.get(body.root)
        if root is None or root.opcode != "tuple" or index[0] >= len(root.operands):
            return None
        element = body.get(root.operands[index[0]])
        # a state element the body passes on unchanged: named by what the loop was given
        if element is not None and element.opcode == "get-tuple-element" and element.tuple_index == index[0]:
            source = body.get(element.operands[0]) if element.operands else None
            if source is not None and source.opcode == "parameter":
                return None
        return body, element, index[1:]

    def describe(self, value: AssignedValue, kind: str) -> LiveBuffer:
        """A live buffer for ``value``, named by its origin."""
        shape = _plain_shape(value.shape)
        out = LiveBuffer(name=value.key.removesuffix("{}"), shape=shape, bytes=value.size, kind=kind,
                         producer=value.instruction, memory_space=value.color)
        found = self.origin(value.instruction, _index(value.index))
        if found is None or self.analyzer is None or self.module is None:
            if self.module is not None:
                # the TPU's compiler turns some slices into slice-start/slice-done pairs after it assigns
                # buffers: the record names an instruction the module's text no longer has
                out.producer_op = value.instruction.split(".", 1)[0]
                out.note = "not in the module's text (rewritten after buffers were assigned)"
            return out
        comp, inst, index = found
        out.producer, out.computation = inst.name, comp.name
        if inst.opcode == "parameter" and comp.name == self.module.entry:
            out.producer_op = inst.op_name or f"argument {inst.parameter_number}"
            out.source_lines = self.analyzer.lines([inst])
            if kind != "argument":
                out.note = f"a copy of argument {out.producer_op}"
            return out
        element = index[0] if index and inst.shape.tuple_shapes is not None else None
        named = self.analyzer.buffer(comp, inst, inst.name, shape, value.size, element, [])
        out.producer_op = named.producer_op or inst.opcode
        out.source_lines = named.source_lines
        if not named.producer_op and inst.opcode == "fusion":  # never a bare "fusion": what it computes
            out.producer_op, lines = self._fused_op(inst)
            out.source_lines = out.source_lines or lines
        defining = self.where.get(value.instruction)
        shapes = inst.shape.tuple_shapes
        data = shapes[element] if shapes is not None and element is not None and element < len(shapes) else inst.shape
        # an array of argument data: not a copy-start's flag, nor the table of a tuple
        if named.kind == "argument-copy" and data.tuple_shapes is None and data.elements > 1:
            copied = self._argument_copied(comp, inst)
            out.note = f"a copy of argument {copied}" if copied else "argument data"
        elif value.phi or (defining is not None and defining[1].opcode in ("while", "parameter")
                           and defining[1] is not inst):
            out.note = "loop state"
        return out

    def _fused_op(self, inst: HloInstruction) -> tuple[str, list[int]]:
        """A fusion the findings could not name by one JAX operation: the operations its
        instructions were traced from (``exp, add``), else their opcodes, and their lines."""
        assert self.analyzer is not None
        inside = [i for _, i in self.analyzer.flatten(inst) if i.opcode not in _MOVES]
        ops = list(dict.fromkeys(i.op_name for i in inside if i.op_name)) or \
            list(dict.fromkeys(i.opcode for i in inside))
        words = ", ".join(ops[:3]) + (", ..." if len(ops) > 3 else "")
        return (f"fusion of {words}" if words else "fusion"), self.analyzer.lines(inside)

    def _argument_copied(self, comp: HloComputation, inst: HloInstruction) -> str | None:
        """The argument a buffer of argument data copies, when it is one (through moves)."""
        seen: set[str] = set()
        current: HloInstruction | None = inst
        while current is not None and current.name not in seen and self.module is not None:
            seen.add(current.name)
            if current.opcode == "parameter":
                return current.op_name if comp.name == self.module.entry else None
            data = [o for name in current.operands if (o := comp.get(name)) is not None and o.shape.elements > 1]
            if len(data) != 1:
                return None
            current = data[0]
        return None


def _preference(value: AssignedValue, namer: _Namer, span: tuple[int, int]) -> tuple[int, int, int]:
    """Which of the values sharing a buffer names it: computed by a kernel, not a phi, latest started."""
    found = namer.instruction(value.instruction)
    computed = found is not None and found[1].opcode not in _VIEWS
    return (int(computed), int(not value.phi), span[0])


def live_at_peak(record: BufferAssignment, module: HloModule | None, source_name: str | None, platform: str,
                 memory: Memory, needed: int | None = None) -> LiveAtPeak:
    """The buffers live at the peak and the timeline (the module's rules).

    :param module: the optimized module the record belongs to, to name each buffer (``None``:
        named by XLA's value names only).
    :param platform: ``cpu``, ``cuda`` or ``tpu`` (a target's name works).
    :param memory: the report's memory figures, for the comparison in :attr:`LiveAtPeak.note`.
    :param needed: for a compile that ran out of memory, the bytes its message says were needed.
    """
    platform = platform.split(":", 1)[0]
    if platform == "gpu":
        platform = "cuda"
    namer = _Namer(module, source_name)
    code = memory.generated_code_bytes or 0
    held = code + sum(a.size for a in record.allocations
                      if a.role in _WHOLE_RUN and counted_space(a.color, platform))
    timeline = _sweep(record, platform, held)
    step = timeline.peak_step
    counted: list[LiveBuffer] = []
    elsewhere: list[LiveBuffer] = []
    whole = [0, record.end]
    for alloc in record.allocations:
        if alloc.role == "thread-local":
            continue
        live = [v for v in alloc.values if (s := record.ranges.get(v.key)) is not None and s[0] <= step <= s[1]
                and v.size > 0]
        into = counted if counted_space(alloc.color, platform) else elsewhere
        if alloc.role in _WHOLE_RUN:
            into.append(_whole_run(alloc, live, record, namer, step, whole))
        else:
            into.extend(_temporaries(alloc, live, record, namer))
    if code and counted_space(DEVICE_MEMORY_SPACE, platform):
        counted.append(LiveBuffer(name="", shape="", bytes=code, kind="generated code", live=list(whole)))
    total = sum(b.bytes for b in counted)
    counted.sort(key=lambda b: (-b.bytes, b.kind == "generated code", b.name))
    elsewhere.sort(key=lambda b: (-b.bytes, b.name))
    shown = counted if len(counted) <= MIN_FOLDED else [
        b for i, b in enumerate(counted) if i == 0 or (i < MAX_LISTED and b.bytes >= FOLD_SHARE * total)]
    folded = counted[len(shown):]
    away = elsewhere[:MAX_ELSEWHERE]
    away_folded = elsewhere[MAX_ELSEWHERE:]
    at = _running(record, namer, step)
    running = namer.instruction(at)
    result = LiveAtPeak(
        step=step, steps=record.end + 1, instruction=at,
        instruction_op=producer_op(running[1].op_name) if running else None,
        source_lines=namer.analyzer.lines([running[1]]) if running and namer.analyzer else [],
        bytes=total, held_bytes=held, buffers=shown,
        constant_bytes=sum(a.size for a in record.allocations
                           if a.role == "constant" and counted_space(a.color, platform)),
        others=len(folded), others_bytes=sum(b.bytes for b in folded),
        elsewhere=away, elsewhere_others=len(away_folded), elsewhere_others_bytes=sum(b.bytes for b in away_folded),
        temp_live_bytes=timeline.temp_at_peak,
        temp_reserved_bytes=sum(a.size for a in record.allocations
                                if a.role == "temp" and counted_space(a.color, platform)),
        all_spaces_peak_bytes=timeline.all_spaces_peak + sum(
            a.size for a in record.allocations if a.role in _WHOLE_RUN and a.color != HOST_MEMORY_SPACE),
        timeline=timeline.points,
    )
    if total != timeline.peak_bytes:  # the two ways of counting must agree: say so if they do not
        result.note = f"(the buffers add up to {total:,} B, the timeline to {timeline.peak_bytes:,} B) "
    result.note += comparison(result, memory, platform, needed)
    return result


def _running(record: BufferAssignment, namer: _Namer, step: int) -> str:
    """The instruction that runs at ``step``: the step's own, or where that one only moves or views
    data (a tuple, a copy, a TPU's ``slice-done``, a constant the TPU sinks into a loop: :data:`_MOVES`),
    the nearest kernel after it, else before."""
    def computes(name: str) -> bool:
        found = namer.instruction(name)
        return found is not None and found[1].opcode not in _MOVES

    order = record.sequence
    here = order[step] if step < len(order) else ""
    if namer.module is None or computes(here):
        return here
    after = range(step + 1, min(len(order), step + 64))
    before = range(step - 1, max(-1, step - 64), -1)
    return next((order[s] for s in (*after, *before) if computes(order[s])), here)


def _whole_run(alloc: Allocation, live: list[AssignedValue], record: BufferAssignment, namer: _Namer, step: int,
               steps: list[int]) -> LiveBuffer:
    """The buffer of an argument, output or constant allocation at the peak: an argument's by the
    value live in it (the argument, or an output a donated argument's buffer holds), an output's
    or a constant's by the value it is held for (XLA may keep a small temporary in an output's
    buffer before the output is written: the buffer is the output's)."""
    value: AssignedValue | None
    note = ""
    final = max(alloc.values, key=lambda v: (record.ranges.get(v.key, (-1, -1))[1], v.size)) \
        if alloc.values else None
    # what is live in it at the peak names it when it is the argument, or the output being made
    # (a loop's state that becomes the output); a smaller value borrowing the buffer does not
    whole = [v for v in live if alloc.role == "argument" or final is None or v.size >= final.size]
    if whole:
        value = max(whole, key=lambda v: (*_preference(v, namer, record.ranges[v.key]), v.size))
    else:
        value = final
        span = record.ranges.get(value.key) if value is not None else None
        note = "not yet written" if span is not None and span[0] > step else ""
    if value is None:
        return LiveBuffer(name=f"allocation {alloc.index}", shape="", bytes=alloc.size, kind=alloc.role,
                          memory_space=alloc.color, live=list(steps))
    out = namer.describe(value, alloc.role)
    out.bytes, out.live = alloc.size, list(steps)
    if note:
        out.note = note
    elif alloc.role == "output" and final is not None and _plain_shape(value.shape) != _plain_shape(final.shape):
        # another array of the output's size in its buffer until the output is written (a TPU's residuals)
        out.note = f"{out.note}, in an output's buffer" if out.note else "in an output's buffer"
    return out


def _temporaries(alloc: Allocation, live: list[AssignedValue], record: BufferAssignment,
                 namer: _Namer) -> list[LiveBuffer]:
    """The temporaries live at the peak in one allocation: one buffer per run of shared bytes."""
    pieces = sorted(live, key=lambda v: (v.offset, -v.size))
    groups: list[list[AssignedValue]] = []
    reach = -1
    for value in pieces:
        if groups and value.offset < reach:
            groups[-1].append(value)
            reach = max(reach, value.offset + value.size)
        else:
            groups.append([value])
            reach = value.offset + value.size
    out: list[LiveBuffer] = []
    for group in groups:
        start = min(v.offset for v in group)
        end = max(v.offset + v.size for v in group)
        namer_value = max(group, key=lambda v: (v.size, *_preference(v, namer, record.ranges[v.key])))
        buffer = namer.describe(namer_value, "temp")
        buffer.bytes = end - start
        spans = [record.ranges[v.key] for v in group]
        buffer.live = _extent(alloc, (start, end), (min(s[0] for s in spans), max(s[1] for s in spans)), record)
        out.append(buffer)
    return out


def _extent(alloc: Allocation, piece: tuple[int, int], span: tuple[int, int], record: BufferAssignment) -> list[int]:
    """The steps a buffer's bytes stay in use: its live range, joined with those of the values
    that share its bytes while it is live (an in-place update that writes into it at its last
    step, the result of a loop that holds it), and theirs in turn."""
    lo, hi = span
    sharing = [s for v in alloc.values if v.offset < piece[1] and v.offset + v.size > piece[0]
               and (s := record.ranges.get(v.key)) is not None]
    grown = True
    while grown:
        grown = False
        for first, last in sharing:
            if first <= hi and last >= lo and (first < lo or last > hi):
                lo, hi, grown = min(lo, first), max(hi, last), True
    return [lo, hi]


def comparison(peak: LiveAtPeak, memory: Memory, platform: str, needed: int | None = None) -> str:
    """How the total at the peak compares with the report's device figure and XLA's peak (or, for a
    compile that ran out of memory, with what its message says was needed), in words."""
    parts: list[str] = []
    if needed is not None:
        parts.append(f"The compile ran out of memory: its message says {format_bytes(needed)} "
                     f"({needed / 2**30:.2f} GiB) was needed; the buffer assignment it refused holds "
                     f"{format_bytes(peak.temp_reserved_bytes)} ({peak.temp_reserved_bytes / 2**30:.2f} GiB) of "
                     f"temporaries, {format_bytes(peak.bytes)} in all at the peak.")
    device = memory.device_bytes
    reserved, live = peak.temp_reserved_bytes, peak.temp_live_bytes
    unpacked = max(0, reserved - live)
    if device is not None:
        difference = peak.bytes - device
        if difference == 0:
            parts.append("The buffers add up to the device figure exactly.")
        else:
            more = "more" if difference > 0 else "less"
            why = []
            if unpacked:
                why.append(f"{format_bytes(unpacked)} of the block XLA reserves for temporaries is not live at the "
                           "peak (buffers that do not pack)")
            if peak.constant_bytes:
                why.append(f"the constants ({format_bytes(peak.constant_bytes)}) are held too, and no figure of "
                           "XLA's counts them")
            if memory.temp_bytes is not None and memory.temp_bytes != reserved:
                why.append(f"XLA's temp figure ({format_bytes(memory.temp_bytes)}) is not its buffer assignment's "
                           f"{format_bytes(reserved)} of temporaries")
            rest = difference + unpacked - peak.constant_bytes + ((memory.temp_bytes or 0) - reserved
                                                                   if memory.temp_bytes is not None else 0)
            if rest:
                why.append(f"{format_bytes(abs(rest))} this package cannot account for")
            parts.append(f"The buffers add up to {format_bytes(peak.bytes)}, {format_bytes(abs(difference))} "
                         f"{more} than the device figure ({format_bytes(device)})" +
                         (": " + "; ".join(why) + "." if why else "."))
    elif unpacked:
        parts.append(f"XLA reserves {format_bytes(reserved)} for temporaries in one block; "
                     f"{format_bytes(live)} of it is live at the peak, the rest does not pack.")
    xla_peak = memory.peak_bytes
    if platform == "tpu" and xla_peak is not None and not memory.peak_is_estimate:
        parts.append(f"XLA's peak ({format_bytes(xla_peak)}) counts the chip's own memory too "
                     f"({format_bytes(peak.all_spaces_peak_bytes)} in use at most, every space but the host's) "
                     "and leaves out the code: it is not HBM.")
    elif platform == "cpu" and memory.peak_is_estimate:
        parts.append("XLA's CPU peak leaves the temporaries out; the report's peak is the bound.")
    return " ".join(parts)


def peak_from_record(text: str, module: HloModule | None, source_name: str | None, target: str,
                     memory: Memory, needed: int | None = None) -> tuple[LiveAtPeak | None, str]:
    """The live list of a stored record, or ``None`` and why (one line; never an exception).

    :param needed: for a compile that ran out of memory, what its message says was needed.
    """
    if not text:
        return None, ""
    try:
        record = parsed_record(text)
    except ValueError as exc:
        return None, str(exc)
    try:
        return live_at_peak(record, module, source_name, target, memory, needed), ""
    except (KeyError, IndexError, ValueError, TypeError, AttributeError, RecursionError) as exc:
        return None, f"the live list could not be made: {type(exc).__name__}: {exc}"


def attach_live_at_peak(report: Report, module: object, source_name: str | None) -> None:
    """Fill ``report.live_at_peak`` from its record (the compile worker, and a snapshot read
    again); a record that does not read leaves it ``None`` and says why in
    ``report.buffer_assignment_note``.

    :param module: the report's HLO parsed (anything else: buffers named by XLA's names only).
    """
    report.live_at_peak = None
    if not report.buffer_assignment:
        return
    needed = report.error.needed_bytes if report.error is not None else None
    found, problem = peak_from_record(report.buffer_assignment, module if isinstance(module, HloModule) else None,
                                      source_name, report.target, report.memory, needed)
    report.live_at_peak = found
    if problem:
        report.buffer_assignment_note = problem
