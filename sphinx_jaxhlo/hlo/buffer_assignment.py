"""XLA's buffer assignment and live ranges: collecting them from a compile, the record a
report keeps of them, and reading that record.

With ``xla_dump_to`` set, a compile writes, for the optimized module, among other files
(jax 0.10.2; CPU, the CUDA plugin and libtpu alike, deviceless too):

``*-buffer-assignment.txt``
    ``BufferAllocation::ToString`` of every allocation: ``allocation 6: size 805000000,
    preallocated-temp:`` with its flags (``color N``: its memory space; ``parameter N``;
    ``output shape is |...|``; ``constant``; ``thread-local``; ``maybe-live-out``;
    ``preallocated-temp``), then one line per value it holds: ``value: <15
    gemm_fusion_dot_general.1 @0> (size=800000000,offset=0): f32[20000,10000]{1,0}``, the value
    named by its defining instruction, the tuple index where the instruction's shape is a
    tuple (``copy-start{0}``), `` (phi)`` for a loop's merged state, and ``@`` its color;
    the size is what it takes there (a TPU's padded tiles included).
``*-live-range.txt``
    ``HloLiveRange::ToString``: the program order XLA scheduled (``InstructionSequence``,
    loop bodies and conditions flattened in place), the steps each value is live
    (``BufferLiveRange``: ``gemm_fusion_dot_general.1{}:2-3``, both ends included), then a
    section ``Live ranges at N (peak)`` and a breakdown by source op, which this package
    does not read: on the H100 it names the wrong step for the seed's dot form (5.4 MB
    while the 800 MB GEMM output is live at 2-3).  The live set at every step is computed
    from the ranges and the sizes instead (:mod:`sphinx_jaxhlo.hlo.peak`).

:func:`collect` reads the two files a compile left in its dump folder and keeps a
**record**: the same texts without the thread-local allocations (scalars inside kernels,
which no memory figure counts) and without XLA's peak sections.  A report keeps the
record as a text (:attr:`~sphinx_jaxhlo.core.report.Report.buffer_assignment`), a snapshot
stores it compressed beside the HLO, and :func:`parse_record` reads it back into
:class:`BufferAssignment`, so the analysis is derived again whenever a report is loaded.
Needs neither jax nor Sphinx.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field

from sphinx_jaxhlo.hlo.decisions.collect import MAX_RECORD_BYTES, read_record

__all__ = [
    "MAX_RECORD_BYTES",
    "Allocation",
    "AssignedValue",
    "BufferAssignment",
    "collect",
    "compact_record",
    "optimized_module",
    "parse_record",
    "parsed_record",
]

_ALLOCATION = re.compile(r"allocation (\d+): size (\d+)(.*):\s*$")
_VALUE = re.compile(r"\s*value: <(\d+) ([^\s{>]+)(\{[\d,]*\})?( \(phi\))?(?: @(\d+))?> "
                    r"\(size=(\d+),offset=(\d+)\): (.*)$")
_SEQUENCE = re.compile(r"\s*(\d+):(\S+)\s*$")
_RANGE = re.compile(r"\s*(\S+?\{[\d,]*\}):(\d+)-(\d+)\s*$")
_MAX = re.compile(r"HloLiveRange \(max (\d+)\)")


@dataclass(frozen=True, slots=True)
class AssignedValue:
    """One value XLA placed in an allocation: the result of an instruction (or one element
    of a tuple-shaped result), at an offset."""

    #: XLA's id of the value.
    id: int
    #: The instruction that defines it.
    instruction: str
    #: Its tuple index as XLA writes it (``{0}``), ``{}`` for a whole result.
    index: str
    size: int
    offset: int
    #: Its shape with the layout (``f32[20000,3]{0,1:T(4,128)S(1)}``).
    shape: str
    #: Its memory space (XLA's color).
    color: int = 0
    #: A loop's merged state (a phi of its body's input and output).
    phi: bool = False

    @property
    def key(self) -> str:
        """``name{index}``, as the live ranges name it."""
        return f"{self.instruction}{self.index}"


@dataclass(slots=True)
class Allocation:
    """One allocation of the buffer assignment and the values it holds."""

    index: int
    size: int
    #: Its memory space (XLA's color: 0 the device's memory, 1 a TPU chip's own...).
    color: int = 0
    #: The entry parameter it holds, or ``None``.
    parameter: int | None = None
    #: It holds (part of) the program's result.
    live_out: bool = False
    constant: bool = False
    thread_local: bool = False
    #: Part of the block of temporaries XLA reserves in one piece.
    preallocated_temp: bool = False
    values: list[AssignedValue] = field(default_factory=list)

    @property
    def role(self) -> str:
        """``argument``, ``output``, ``constant``, ``temp`` or ``thread-local``: what the
        runtime holds it for (an argument an output shares counts as the argument)."""
        if self.thread_local:
            return "thread-local"
        if self.parameter is not None:
            return "argument"
        if self.live_out:
            return "output"
        if self.constant:
            return "constant"
        return "temp"


@dataclass(slots=True)
class BufferAssignment:
    """A record read back: the allocations, the program order and the live ranges."""

    allocations: list[Allocation]
    #: The instruction at each step of the program order.
    sequence: list[str]
    #: The steps each value is live, by :attr:`AssignedValue.key`, both ends included.
    ranges: dict[str, tuple[int, int]]
    #: The last step (``HloLiveRange (max N)``).
    end: int


def _flags(text: str) -> dict[str, object]:
    """The flags of an allocation line after its size (shapes between bars may hold commas)."""
    bare = re.sub(r"\|[^|]*\|", "||", text)
    out: dict[str, object] = {}
    m = re.search(r"\bcolor (\d+)", bare)
    out["color"] = int(m.group(1)) if m else 0
    m = re.search(r"\bparameter (\d+)", bare)
    out["parameter"] = int(m.group(1)) if m else None
    out["live_out"] = "maybe-live-out" in bare or "output shape is" in bare
    out["constant"] = bool(re.search(r",\s*constant\b", bare))
    out["thread_local"] = "thread-local" in bare
    out["preallocated_temp"] = "preallocated-temp" in bare
    return out


def compact_record(buffer_assignment: str, live_range: str) -> str:
    """The record a report keeps: the allocations but the thread-local ones, the program
    order and the live ranges; XLA's own peak sections left out (see the module's text).

    :param buffer_assignment: the text of ``*-buffer-assignment.txt``.
    :param live_range: the text of ``*-live-range.txt``.
    """
    out: list[str] = []
    keep = False
    for line in buffer_assignment.splitlines():
        if line.startswith("allocation "):
            m = _ALLOCATION.match(line)
            keep = m is not None and not _flags(m.group(3))["thread_local"]
            if keep:
                out.append(line)
        elif line.startswith(" value:") and keep:
            out.append(line)
        elif not line.startswith(" value:"):
            keep = False
    out.insert(0, "BufferAssignment:")
    for line in live_range.splitlines():
        stripped = line.strip()
        if stripped.startswith(("Live ranges at", "Stack trace breakdown")):
            break
        out.append(line.rstrip())
    return "\n".join(out) + "\n"


@functools.lru_cache(maxsize=2)
def parsed_record(text: str) -> BufferAssignment:
    """:func:`parse_record`, kept for the last texts read: a report's analysis reads its record twice
    (the loop outputs it leaves out of the intermediates, then what is live at the peak); the result
    is shared, and read only.

    :raises ValueError: as :func:`parse_record`.
    """
    return parse_record(text)


def parse_record(text: str) -> BufferAssignment:
    """Read a record (:func:`compact_record`; XLA's two files one after the other read too).

    :raises ValueError: a text without allocations or without live ranges, in one line.
    """
    allocations: list[Allocation] = []
    sequence: dict[int, str] = {}
    ranges: dict[str, tuple[int, int]] = {}
    end: int | None = None
    section = ""
    current: Allocation | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("allocation "):
            m = _ALLOCATION.match(line)
            if m is None:
                raise ValueError(f"buffer assignment, line {number}: not an allocation: {line[:80]!r}")
            flags = _flags(m.group(3))
            current = Allocation(int(m.group(1)), int(m.group(2)), **flags)  # type: ignore[arg-type]
            allocations.append(current)
            section = "allocations"
            continue
        if line.startswith(" value:") and section == "allocations":
            v = _VALUE.match(line)
            if v is None or current is None:
                raise ValueError(f"buffer assignment, line {number}: not a value: {line[:80]!r}")
            current.values.append(AssignedValue(
                id=int(v.group(1)), instruction=v.group(2), index=v.group(3) or "{}", phi=bool(v.group(4)),
                color=int(v.group(5) or current.color), size=int(v.group(6)), offset=int(v.group(7)),
                shape=v.group(8).strip()))
            continue
        stripped = line.strip()
        m = _MAX.match(stripped)
        if m is not None:
            end, section = int(m.group(1)), "live"
        elif stripped == "InstructionSequence:":
            section = "sequence"
        elif stripped == "BufferLiveRange:":
            section = "ranges"
        elif stripped.startswith(("Live ranges at", "Stack trace breakdown")):
            section = "peak"  # XLA's own peak: not read (see the module's text)
        elif section == "sequence" and (s := _SEQUENCE.match(line)) is not None:
            sequence[int(s.group(1))] = s.group(2)
        elif section == "ranges" and (r := _RANGE.match(line)) is not None:
            ranges[r.group(1)] = (int(r.group(2)), int(r.group(3)))
    if not allocations:
        raise ValueError("buffer assignment: no allocation in the record")
    if end is None or not ranges:
        raise ValueError("buffer assignment: no live ranges in the record")
    order = [sequence.get(i, "") for i in range(max(sequence, default=-1) + 1)]
    return BufferAssignment(allocations, order, ranges, end)


def _find(names: list[str], module_name: str | None, suffix: str) -> str | None:
    """The file of the optimized module ``module_name`` (``None``: any) ending in ``suffix`` (the
    highest module number, when XLA dumped several)."""
    best: tuple[int, str] | None = None
    pattern = re.compile(r"module_(\d+)\." + (re.escape(module_name) if module_name else r"[^.]+") + r"\.")
    for name in names:
        if not name.endswith(suffix) or "after_optimizations" not in name:
            continue
        m = pattern.match(name)
        if m is not None and (best is None or int(m.group(1)) > best[0]):
            best = (int(m.group(1)), name)
    return best[1] if best else None


def collect(folder: str, module_name: str | None = None) -> tuple[str, str]:
    """The record of the buffer assignment a compile left in ``folder``.

    :param module_name: the optimized module's name (``jit_with_dot``); ``None``: the last
        module XLA dumped (a compile that failed has no module to name it by).
    :return: the record (:func:`compact_record`) and ``""``, or ``""`` and why there is
        none (never an exception).
    """
    try:
        names = os.listdir(folder)
    except OSError as exc:
        return "", f"not collected: {exc.strerror}"
    texts = []
    for suffix in ("-buffer-assignment.txt", "-live-range.txt"):
        name = _find(names, module_name, suffix)
        text = read_record(os.path.join(folder, name)) if name else None
        if text is None:
            what = "buffer assignment" if "buffer" in suffix else "live ranges"
            return "", (f"XLA wrote no {what} for {module_name or 'the program'}" if name is None
                        else f"XLA's {what} could not be read (over {MAX_RECORD_BYTES // 2**20} MiB?)")
        texts.append(text)
    record = compact_record(texts[0], texts[1])
    try:
        parse_record(record)
    except ValueError as exc:
        return "", f"XLA's buffer assignment did not read: {exc}"
    return record, ""


def optimized_module(folder: str, module_name: str | None = None) -> str:
    """The optimized module's text XLA dumped in ``folder`` (``""``: none): where a compile
    failed, the only form of it there is."""
    try:
        names = os.listdir(folder)
    except OSError:
        return ""
    name = _find([n for n in names if n.endswith("after_optimizations.txt")], module_name, ".txt")
    return (read_record(os.path.join(folder, name)) or "") if name else ""
