"""What every output of an example shows, as plain data: one model, many writers.

The page's tables (:mod:`sphinx_jaxhlo.render.example` and the HTML visitors),
the fallback tables of the other builders, and the text of the command line and
``str(reports)`` (:mod:`sphinx_jaxhlo.render.text`) are all written from the
:class:`Table` objects made here and the :class:`~sphinx_jaxhlo.render.findings.Finding`
objects of :mod:`sphinx_jaxhlo.render.findings`, so they cannot disagree.  This
module holds the model and the detail tables of one report; the tables across
targets and variants are :mod:`sphinx_jaxhlo.render.overview`'s.
No docutils, no Sphinx, no jax.

What the default view leaves out, and why:

- A detail table lists its largest rows first, up to :attr:`~sphinx_jaxhlo.render.display.Display.rows` (8 by
  default), and says how many more there are ("3 more, 13 in total").
- Scalars (loop counters, flags), loop and branch instructions themselves
  (their bodies are listed), buffers that only hold argument data
  (:func:`is_intermediate`) and reductions that get no verdict (those not in
  :attr:`Report.verdict_reductions`: second stages of split reductions, and
  whatever the analysis says the compiler made) are not among the rows shown;
  they are counted in the rest.  ``rows=None`` lists every row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from sphinx_jaxhlo.core.memory import Measured, memory_space_name
from sphinx_jaxhlo.core.report import Collective, Fusion, Materialized, Reduction, Report
from sphinx_jaxhlo.core.sizes import format_bytes, format_exact
from sphinx_jaxhlo.hlo.programs import producer_op
from sphinx_jaxhlo.render.display import Display

__all__ = [
    "Cell",
    "OpLookup",
    "Row",
    "Table",
    "buffer_table",
    "collective_table",
    "cost_table",
    "detail_tables",
    "fusion_table",
    "held_name",
    "is_intermediate",
    "largest_intermediate",
    "largest_on_chip",
    "measured_text",
    "memory_name",
    "memory_note",
    "memory_rows",
    "memory_table",
    "reduction_table",
    "sharding_table",
    "where_stored",
]

#: Instructions that run other computations: their bodies' kernels are the rows that matter.
_CONTROL = frozenset({"while", "conditional", "call", "async-start", "async-done"})


# -- the model -------------------------------------------------------------------------------------

class Cell(NamedTuple):
    """One table cell: plain text, code (``code``: shapes, HLO names) or source lines
    (``lines``: the text is ``line 4``, HTML links each number to the source)."""

    text: str
    code: bool = False
    lines: tuple[int, ...] = ()
    #: ``bad`` (a problem), ``good``.
    tone: str = ""


class Row(NamedTuple):
    cells: tuple[Cell, ...]
    #: Source lines the row is traced from: HTML highlights them when the row is hovered.
    lines: tuple[int, ...] = ()
    tone: str = ""


@dataclass(frozen=True)
class Table:
    """A table of one part: ``key`` names it (``fusions``, ``materialized``...)."""

    key: str
    title: str
    header: tuple[str, ...]
    rows: tuple[Row, ...]
    #: Rows the full table has (shown and not).
    total: int = 0
    #: What the rows left out are, when some are: ``"smaller ones, scalars and loop control"``.
    left_out: str = ""
    #: A sentence under the table.
    note: str = ""

    @property
    def more(self) -> int:
        return max(0, self.total - len(self.rows))

    @property
    def more_text(self) -> str:
        """``3 more, 13 in total (smaller ones, scalars)``, or ``""``."""
        if not self.more:
            return ""
        what = f" ({self.left_out})" if self.left_out else ""
        return f"{self.more:,} more, {self.total:,} in total{what}."

    @property
    def summary(self) -> str:
        """The title with the count, for a collapsed block: ``Fusions (10 of 72)``."""
        if self.more:
            return f"{self.title} ({len(self.rows)} of {self.total:,})"
        return f"{self.title} ({len(self.rows)})" if self.total else self.title


def code(text: str) -> Cell:
    return Cell(text, code=True)


def lines_text(lines: Sequence[int]) -> str:
    if not lines:
        return ""
    return ("line " if len(lines) == 1 else "lines ") + ", ".join(map(str, lines))


def source_cell(lines: Sequence[int]) -> Cell:
    return Cell(lines_text(lines), lines=tuple(lines))


# -- what is shown by default ------------------------------------------------------------------------

def is_intermediate(buffer: Materialized) -> bool:
    """Whether a materialized buffer holds data the program computed, rather than
    a copy of argument data (which the analysis marks, e.g. a TPU's prefetch of a
    parameter) or a buffer in host memory: the one place the renderers ask."""
    return getattr(buffer, "kind", None) not in ("argument-copy", "host")


def is_scalar(shape: str) -> bool:
    """``s32[]``, ``pred[]``: a loop counter or a flag, not data (a float scalar,
    such as a loss, is data)."""
    return shape.endswith("[]") and not shape.startswith("(") and shape[:1] in ("s", "u", "p")


def _is_main_fusion(f: Fusion) -> bool:
    return not is_scalar(f.shape) and f.kind not in _CONTROL


def largest_intermediate(report: Report) -> Materialized | None:
    """The largest intermediate that takes the device's memory (a TPU's HBM): one a TPU keeps
    in the chip's own memory is not it (:func:`largest_on_chip`)."""
    return max((m for m in report.materialized if is_intermediate(m) and not is_scalar(m.shape)
                and m.in_device_memory), key=lambda m: m.bytes, default=None)


def largest_on_chip(report: Report) -> Materialized | None:
    """The largest intermediate a TPU keeps in the chip's own memory, never in HBM."""
    return max((m for m in report.materialized if is_intermediate(m) and not is_scalar(m.shape)
                and not m.in_device_memory), key=lambda m: m.bytes, default=None)


def where_stored(buffer: Materialized, target: str) -> str:
    """Where a buffer lives, in a reader's words: ``HBM``, ``on-chip``, ``host``..."""
    return memory_space_name(buffer.memory_space, target)


class OpLookup:
    """The JAX operation behind an HLO instruction, from the metadata in the module
    text (looked up only for the rows shown, so a module of megabytes costs little)."""

    _OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')

    def __init__(self, report: Report) -> None:
        self.text = report.hlo
        self.fusions = {(f.computation, f.name): f for f in report.fusions}
        self.by_name = {f.name: f for f in report.fusions}
        self._ops: dict[str, str | None] = {}

    def op(self, name: str) -> str | None:
        if name not in self._ops:
            found = None
            for start in (f"%{name} = ", f"\n  {name} = ", f"\n  ROOT {name} = "):
                i = self.text.find(start)
                if i >= 0:
                    end = self.text.find("\n", i + len(start))
                    m = self._OP_NAME.search(self.text, i, end if end >= 0 else len(self.text))
                    found = producer_op(m.group(1)) if m else None
                    break
            self._ops[name] = found
        return self._ops[name]

    def kernel(self, name: str, computation: str = "", lines: bool = True) -> str:
        """An instruction in a reader's words: ``dot + cosine (line 4)``, its ops and
        (unless ``lines`` is false) its source lines."""
        f = self.fusions.get((computation, name)) or self.by_name.get(name)
        if f is None:
            return self.op(name) or "an instruction"
        what = " + ".join(f.ops[:4]) + (" …" if len(f.ops) > 4 else "") if f.ops else f.kind
        return what + (f" ({lines_text(f.source_lines)})" if lines and f.source_lines else "")


def _limit(items: list[Any], shown: list[Any], display: Display, fallback: list[Any] | None = None) -> list[Any]:
    """The rows to show: all ``items`` with ``rows=None``; else the first of ``shown``,
    or of ``fallback`` when the default view would leave nothing (a program whose only
    kernel makes a scalar still shows it)."""
    if display.rows is None:
        return items
    return (shown or fallback or [])[: display.rows]


# -- detail tables ----------------------------------------------------------------------------------

def fusion_table(report: Report, display: Display) -> Table:
    """The kernels, largest first."""
    ordered = sorted(report.fusions, key=lambda f: -f.bytes)
    chosen = _limit(ordered, [f for f in ordered if _is_main_fusion(f)], display, fallback=ordered)
    rows = []
    for f in chosen:
        kind = f.kind + (f" ({f.custom_kind})" if f.custom_kind else "")
        rows.append(Row((Cell(" + ".join(f.ops) or "—"), code(f.shape), Cell(format_bytes(f.bytes)),
                         source_cell(f.source_lines), Cell(kind), code(f.name)), lines=tuple(f.source_lines)))
    return Table("fusions", "Fusions", ("ops", "result", "size", "source", "kind", "HLO"), tuple(rows),
                 total=len(ordered), left_out="smaller ones, scalars, loop and branch instructions")


def buffer_table(report: Report, display: Display) -> Table:
    """The materialized buffers, largest first; copies of arguments and scalars left out by default."""
    ops = OpLookup(report)
    # the analysis may keep the copies of arguments in a list of their own
    ordered = sorted([*report.materialized, *report.argument_copies, *report.host_buffers], key=lambda m: -m.bytes)
    computed = [m for m in ordered if is_intermediate(m)]
    # with nothing computed stored, the copies of arguments are what there is to show
    chosen = _limit(ordered, [m for m in computed if not is_scalar(m.shape)], display, fallback=computed or ordered)
    threshold = display.threshold(report)
    # red: stored data an unfused reduction reads (a verdict: not in an example without them)
    stored = {r.input_materialized for r in report.verdict_reductions if not r.fused} if display.verdicts else set()
    # where each buffer lives, on a target whose layouts say (a TPU: HBM or the chip's own memory)
    spaces = report.target.startswith("tpu") or any(not m.in_device_memory for m in ordered)
    rows = []
    for m in chosen:
        made = m.producer_op or ops.kernel(m.producer, m.computation)
        readers = "; ".join(ops.kernel(c, m.computation) for c in m.consumers[:3])
        if len(m.consumers) > 3:
            readers += f"; {len(m.consumers) - 3} more"
        tone = "bad" if m.name in stored and m.bytes >= threshold and m.in_device_memory else ""
        hlo = m.producer if m.name == m.producer else f"{m.name} ({m.producer})"
        if getattr(m, "kind", None) == "host":
            made = f"in host memory ({made})"
        elif not is_intermediate(m):
            made = f"a copy of argument data ({made})"
        where = (Cell(where_stored(m, report.target)),) if spaces else ()
        # where it is stored comes last but one: the columns before it are the same on every target
        rows.append(Row((code(m.shape), Cell(format_bytes(m.bytes), tone=tone), Cell(made),
                         source_cell(m.source_lines), Cell(readers or "—"), *where, code(hlo)),
                        lines=tuple(m.source_lines), tone=tone))
    header: tuple[str, ...] = ("shape", "size", "made by", "source", "read by", *(("in",) if spaces else ()), "HLO")
    return Table("materialized", "Materialized buffers", header, tuple(rows), total=len(ordered),
                 left_out="smaller ones, scalars, copies of arguments"
                 + (", host memory" if report.host_buffers else ""))


def _reduction_reads(r: Reduction, buffers: dict[str, Materialized], ops: OpLookup) -> str:
    if r.input_materialized:
        buf = buffers.get(r.input_materialized)
        if buf is None:
            return f"stored data ({format_bytes(r.input_bytes)})"
        made = buf.producer_op or ops.kernel(buf.producer, buf.computation)
        where = "" if buf.in_device_memory else f" {memory_space_name(buf.memory_space)}, not in HBM,"
        return f"stored {buf.shape} ({format_bytes(buf.bytes)}){where or ','} made by {made}"
    if r.partial_of:
        return "partial results of a first stage"
    return "data computed in its kernel"


def reduction_label(r: Reduction, ops: OpLookup) -> str:
    """``reduce_sum``: the JAX operation of a reduce (the report's, else the module's metadata), or ``reduce``."""
    return getattr(r, "op", None) or ops.op(r.name) or "reduce"


#: How a reduction that gets no verdict is named where a verdict would be, by its
#: ``Reduction.origin`` (who wrote it, as the analysis says).
ORIGIN_WORDS = {
    "second-stage": "second stage",
    "dot": "part of a dot (split-K)",
    "scan": "prefix-scan stage",
    "compiler": "made by the compiler",
}


def verdict_word(r: Reduction, has_verdict: bool) -> str:
    """``fused``/``unfused`` for the program's reductions; who made it, for the others."""
    if has_verdict:
        return "fused" if r.fused else "unfused"
    origin = getattr(r, "origin", None) or ("second-stage" if r.partial_of else "compiler")
    word = ORIGIN_WORDS.get(origin, origin)
    if origin == "dot" and r.input_materialized is None:
        word = "part of a dot"
    op = getattr(r, "op", None)
    if origin == "compiler" and op:
        word = f"made by the compiler for {op}"
    return f"{word} (no verdict)"


def reduction_table(report: Report, display: Display) -> Table:
    """The reductions that get a verdict, largest input first; the others by default left out."""
    ops = OpLookup(report)
    buffers = {m.name: m for m in report.materialized}
    verdict = {id(r) for r in report.verdict_reductions}
    ordered = sorted(report.reductions, key=lambda r: (id(r) not in verdict, -r.input_bytes))
    chosen = _limit(ordered, [r for r in ordered if id(r) in verdict], display)
    threshold = display.threshold(report)
    rows = []
    for r in chosen:
        word, tone = verdict_word(r, id(r) in verdict), ""
        if id(r) in verdict and r.fused:
            tone = "good"
        elif id(r) in verdict:
            buf = buffers.get(r.input_materialized or "")
            size = buf.bytes if buf is not None else r.input_bytes
            # stored in the chip's own memory: unfused, but it takes no HBM
            tone = "bad" if size >= threshold and (buf is None or buf.in_device_memory) else ""
        rows.append(Row((Cell(reduction_label(r, ops)), code(r.input_shape or "—"),
                         Cell(_reduction_reads(r, buffers, ops)),
                         Cell(word, tone=tone), source_cell(r.source_lines), code(f"{r.name} in {r.fusion}")),
                        lines=tuple(r.source_lines), tone="bad" if tone == "bad" else ""))
    return Table("reductions", "Reductions", ("reduction", "of", "reads", "verdict", "source", "HLO"), tuple(rows),
                 total=len(ordered), left_out="the reductions the compiler made")


def detail_tables(display: Display) -> tuple[Callable[[Report, Display], Table], ...]:
    """The detail tables of a report's summary, in order: the kernels, the materialized
    buffers and, where the example gives verdicts (:attr:`Display.verdicts`), the reductions."""
    if display.verdicts:
        return fusion_table, buffer_table, reduction_table
    return fusion_table, buffer_table


def memory_name(target: str) -> str:
    """What a target's device memory is called: ``HBM`` (a TPU's), ``device memory`` (a GPU's),
    ``host memory`` (the CPU's)."""
    return {"tpu": "HBM", "cpu": "host memory"}.get(target.split(":", 1)[0], "device memory")


def held_name(target: str) -> str:
    """The one name of what a program holds on a target (arguments, outputs, temp and code, less
    what is aliased), on every part of every page: ``HBM held``, ``device memory held``..."""
    return f"{memory_name(target)} held"


def memory_rows(report: Report) -> tuple[tuple[str, int | None], ...]:
    """The memory figures of a report, labelled by what each counts on its target: what the
    device holds first (the figure to act on), then its parts, then XLA's peak."""
    m = report.memory
    platform = report.target.split(":", 1)[0]
    if m.peak_is_estimate:
        peak_label = "peak (estimate)"
    elif platform == "tpu":
        peak_label = "XLA's peak (not HBM)"
    else:
        peak_label = "peak"
    return ((held_name(report.target), m.device_bytes), ("temp", m.temp_bytes),
            ("arguments", m.argument_bytes), ("output", m.output_bytes), ("alias", m.alias_bytes),
            ("generated code", m.generated_code_bytes), (peak_label, m.peak_bytes))


def memory_note(report: Report) -> str:
    """What the memory table's figures are, under it: the first is the sum of the parts below it,
    the peak as it counts on this target."""
    m = report.memory
    held = held_name(report.target)
    note = f"{held[0].upper()}{held[1:]}: arguments + output + temp + generated code − alias."
    if m.peak_is_estimate:
        note += " The peak is an estimate: arguments + output + temp − alias."
    elif report.target.startswith("tpu"):
        note += " XLA's peak counts the buffers in the chip's own memory too, and leaves out the code: it is not HBM."
    return note


def measured_text(measured: Measured) -> str:
    """``held 3.3 MB, 134.8 ms a run (TPU v5 lite, 2026-12-05)``: what a real device held and
    how long the program ran on it, from a hardware record."""
    when = f"{measured.device}, {measured.date}"
    if measured.error:
        return f"refused at compile ({measured.error}), as predicted ({when})"
    run = f", {measured.warm_ms:,.4g} ms a run" if measured.warm_ms is not None else ""
    return f"held {format_bytes(measured.held_bytes)}{run} ({when})"


def memory_table(report: Report, measured: Measured | None = None) -> Table:
    """The memory figures (:func:`memory_rows`) and, where a hardware record measured this
    program on the device, what the device held."""
    if report.devices > 1:
        return mesh_memory_table(report)
    rows = [Row((Cell(label), Cell(format_bytes(value)), Cell(format_exact(value))))
            for label, value in memory_rows(report)]
    if measured is not None and measured.held_bytes is not None:
        rows.insert(1, Row((Cell(f"{held_name(report.target)}, measured ({measured.device}, {measured.date})"),
                            Cell(format_bytes(measured.held_bytes)), Cell(format_exact(measured.held_bytes)))))
    return Table("memory", "Memory", ("memory", "size", "exact"), tuple(rows), total=len(rows),
                 note=memory_note(report))


def cost_table(report: Report) -> Table:
    c = report.cost

    def fmt(v: float | None) -> str:
        return "not reported" if v is None else f"{v:,.0f}"

    rows = tuple(Row((Cell(label), Cell(fmt(value)))) for label, value in (
        ("flops", c.flops), ("transcendentals", c.transcendentals), ("bytes accessed", c.bytes_accessed)))
    return Table("cost", "Cost", ("cost", "value"), rows, total=len(rows))


# -- programs on several devices -------------------------------------------------------------------

def mesh_memory_table(report: Report) -> Table:
    """The memory of a program on several devices: per device, and for all of them."""
    n = report.devices

    def whole(value: int | None) -> str:
        return "not reported" if value is None else format_bytes(value * n)

    rows = tuple(Row((Cell(label), Cell(format_bytes(value)), Cell(format_exact(value)), Cell(whole(value))))
                 for label, value in memory_rows(report))
    return Table("memory", "Memory", ("memory", "per device", "exact", f"all {n} devices"), rows, total=len(rows),
                 note=memory_note(report))


def axes_text(collective: Collective) -> str:
    """``data``, ``data, model``, ``none (each device alone)``, or the groups when no axes match."""
    if collective.axes is None:
        return f"not mesh axes ({collective.groups})"
    if not collective.axes:
        return "none (each device alone)"
    return ", ".join(collective.axes)


def overlap_text(collective: Collective) -> str:
    """``yes, with gemm_fusion_dot`` / ``no (synchronous)`` / ``no`` / ``unknown``."""
    if not collective.is_async:
        return "no (synchronous)"
    if collective.overlapped is None:
        return "unknown"
    if not collective.overlapped:
        return "no: nothing computes while it runs"
    names = ", ".join(collective.overlaps_with[:3]) + (" ..." if len(collective.overlaps_with) > 3 else "")
    return f"yes, with {names}"


def kind_text(collective: Collective) -> str:
    """``all-gather (async), in a loop x8``."""
    text = collective.kind + (" (async)" if collective.is_async else "")
    if collective.in_loop:
        text += f", in a loop x{collective.trip_count}" if collective.trip_count else ", in a loop"
    return text


def collective_table(report: Report, display: Display) -> Table:
    """The collectives, largest first (bytes per device)."""
    ordered = sorted(report.collectives, key=lambda c: -c.bytes)
    chosen = _limit(ordered, ordered, display)
    rows = []
    for c in chosen:
        hlo = c.name + (f" (in {c.fusion}: {c.fused_computation})" if c.fusion else "")
        rows.append(Row((Cell(kind_text(c)), code(c.shape), Cell(format_bytes(c.bytes)), Cell(axes_text(c)),
                         Cell(overlap_text(c)), source_cell(c.source_lines), code(hlo)),
                        lines=tuple(c.source_lines)))
    return Table("collectives", "Collectives",
                 ("collective", "result per device", "bytes per device", "mesh axes", "overlaps compute", "source",
                  "HLO"), tuple(rows), total=len(ordered), left_out="smaller ones")


def sharding_table(report: Report, display: Display) -> Table:
    """How each argument and result is split over the mesh."""
    layouts = [*report.input_shardings, *report.output_shardings]
    chosen = _limit(layouts, layouts, display)
    rows = tuple(Row((code(s.path), code(s.shape), Cell(s.spec), code(s.device_shape))) for s in chosen)
    return Table("shardings", "Arguments and results over the mesh",
                 ("array", "shape", "split over the mesh", "per device"), rows, total=len(layouts),
                 left_out="more arrays")
