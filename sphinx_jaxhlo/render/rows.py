"""What every output of an example shows, as plain data: one model, many writers.

The page's tables (:mod:`sphinx_jaxhlo.render.example` and the HTML visitors),
the fallback tables of the other builders, and the text of the command line and
``str(reports)`` (:mod:`sphinx_jaxhlo.render.text`) are all written from the
:class:`Table` and :class:`Finding` objects made here, so they cannot disagree.
No docutils, no Sphinx, no jax.

What the default view leaves out, and why:

- A detail table lists its largest rows first, up to :attr:`Display.rows` (8 by
  default), and says how many more there are ("3 more, 13 in total").
- Scalars (loop counters, flags), loop and branch instructions themselves
  (their bodies are listed), buffers that only hold argument data
  (:func:`is_intermediate`) and reductions that get no verdict (those not in
  :attr:`Report.verdict_reductions`: second stages of split reductions, and
  whatever the analysis says the compiler made) are not among the rows shown;
  they are counted in the rest.  ``rows=None`` lists every row.

A finding is a *problem* (shown in red) only when the data in question is
large: at least :attr:`Display.problem_min_bytes` and at least
:attr:`Display.problem_io_factor` times the program's arguments and outputs
together (by default 1 MiB and 1x).  Smaller findings are stated neutrally.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sphinx_jaxhlo.core.report import (
    Collective,
    CompileError,
    Fusion,
    Materialized,
    Reason,
    Reduction,
    Report,
)
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.core.sizes import format_bytes, format_exact
from sphinx_jaxhlo.core.view_options import parse_chart_scale, parse_factor, parse_findings, parse_min_size, parse_rows
from sphinx_jaxhlo.hlo.programs import producer_op

__all__ = [
    "Cell",
    "Display",
    "Finding",
    "Row",
    "Table",
    "buffer_table",
    "chart_scale",
    "collective_table",
    "comparison_table",
    "cost_table",
    "findings",
    "fusion_table",
    "is_intermediate",
    "memory_table",
    "mesh_findings",
    "reduction_table",
    "sharding_table",
    "signature",
    "variants_table",
]

#: Instructions that run other computations: their bodies' kernels are the rows that matter.
_CONTROL = frozenset({"while", "conditional", "call", "async-start", "async-done"})


# -- settings ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Display:
    """How much an example shows and what counts as a problem (the ``jaxhlo_table_rows``,
    ``jaxhlo_problem_min_size``, ``jaxhlo_problem_io_factor`` and ``jaxhlo_chart_scale``
    settings, and the directive's options of the same names)."""

    #: Rows of a detail table shown; ``None``: every row, the small ones included.
    rows: int | None = 8
    problem_min_bytes: int = 2**20
    problem_io_factor: float = 1.0
    #: ``auto``, ``linear`` or ``log``.
    chart_scale: str = "auto"
    #: The kinds of findings reported (:data:`sphinx_jaxhlo.core.view_options.FINDING_TOPICS`).
    findings: tuple[str, ...] = ("memory", "reductions", "communication")

    def io_bytes(self, report: Report) -> int:
        """The program's arguments and outputs together, as its memory figures say."""
        return (report.memory.argument_bytes or 0) + (report.memory.output_bytes or 0)

    def threshold(self, report: Report) -> int:
        """Bytes from which stored data is a problem in this program."""
        return max(self.problem_min_bytes, math.ceil(self.problem_io_factor * self.io_bytes(report)))

    def key(self) -> list[Any]:
        """What the rendering depends on, for cache keys."""
        return [self.rows, self.problem_min_bytes, self.problem_io_factor, self.chart_scale, list(self.findings)]


def display_for(config: Any, options: dict[str, Any] | None = None) -> Display:
    """The :class:`Display` of one example: the ``jaxhlo_*`` settings of ``config``
    (already validated), overridden by the example's parsed view options."""
    values: dict[str, Any] = {
        "rows": parse_rows(getattr(config, "jaxhlo_table_rows", 8)),
        "problem-min-size": parse_min_size(getattr(config, "jaxhlo_problem_min_size", "1MiB")),
        "problem-io-factor": parse_factor(getattr(config, "jaxhlo_problem_io_factor", 1.0)),
        "chart-scale": parse_chart_scale(getattr(config, "jaxhlo_chart_scale", "auto")),
        "findings": parse_findings(getattr(config, "jaxhlo_findings", "all")),
    }
    values.update(options or {})
    return Display(rows=values["rows"], problem_min_bytes=values["problem-min-size"],
                   problem_io_factor=values["problem-io-factor"], chart_scale=values["chart-scale"],
                   findings=tuple(values["findings"]))


# -- the model -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Cell:
    """One table cell: plain text, code (``code``: shapes, HLO names) or source lines
    (``lines``: the text is ``line 4``, HTML links each number to the source)."""

    text: str
    code: bool = False
    lines: tuple[int, ...] = ()
    #: ``bad`` (a problem), ``good``.
    tone: str = ""


@dataclass(frozen=True)
class Row:
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


@dataclass(frozen=True)
class Finding:
    """A finding in words: ``problem`` (red), ``good`` (green) or ``info`` (neutral)."""

    level: str
    title: str
    text: str
    #: What made the stored data and why it was not fused (an unfused reduction's finding).
    reason: Reason | None = None


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


class _Ops:
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

    def kernel(self, name: str, computation: str = "") -> str:
        """An instruction in a reader's words: ``dot + cosine (line 4)``, its ops and lines."""
        f = self.fusions.get((computation, name)) or self.by_name.get(name)
        if f is None:
            return self.op(name) or "an instruction"
        what = " + ".join(f.ops[:4]) + (" …" if len(f.ops) > 4 else "") if f.ops else f.kind
        return what + (f" ({lines_text(f.source_lines)})" if f.source_lines else "")


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
    ops = _Ops(report)
    # the analysis may keep the copies of arguments in a list of their own
    ordered = sorted([*report.materialized, *report.argument_copies, *report.host_buffers], key=lambda m: -m.bytes)
    computed = [m for m in ordered if is_intermediate(m)]
    # with nothing computed stored, the copies of arguments are what there is to show
    chosen = _limit(ordered, [m for m in computed if not is_scalar(m.shape)], display, fallback=computed or ordered)
    threshold = display.threshold(report)
    stored = {r.input_materialized for r in report.verdict_reductions if not r.fused}
    rows = []
    for m in chosen:
        made = m.producer_op or ops.kernel(m.producer, m.computation)
        readers = "; ".join(ops.kernel(c, m.computation) for c in m.consumers[:3])
        if len(m.consumers) > 3:
            readers += f"; {len(m.consumers) - 3} more"
        tone = "bad" if m.name in stored and m.bytes >= threshold else ""
        hlo = m.producer if m.name == m.producer else f"{m.name} ({m.producer})"
        if getattr(m, "kind", None) == "host":
            made = f"in host memory ({made})"
        elif not is_intermediate(m):
            made = f"a copy of argument data ({made})"
        rows.append(Row((code(m.shape), Cell(format_bytes(m.bytes), tone=tone), Cell(made),
                         source_cell(m.source_lines), Cell(readers or "—"), code(hlo)),
                        lines=tuple(m.source_lines), tone=tone))
    return Table("materialized", "Materialized buffers", ("shape", "size", "made by", "source", "read by", "HLO"),
                 tuple(rows), total=len(ordered),
                 left_out="smaller ones, scalars, copies of arguments"
                 + (", host memory" if report.host_buffers else ""))


def _reduction_reads(r: Reduction, buffers: dict[str, Materialized], ops: _Ops) -> str:
    if r.input_materialized:
        buf = buffers.get(r.input_materialized)
        if buf is None:
            return f"stored data ({format_bytes(r.input_bytes)})"
        made = buf.producer_op or ops.kernel(buf.producer, buf.computation)
        return f"stored {buf.shape} ({format_bytes(buf.bytes)}), made by {made}"
    if r.partial_of:
        return "partial results of a first stage"
    return "data computed in its kernel"


def reduction_label(r: Reduction, ops: _Ops) -> str:
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
    ops = _Ops(report)
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
            size = buffers[r.input_materialized].bytes if r.input_materialized in buffers else r.input_bytes
            tone = "bad" if size >= threshold else ""
        rows.append(Row((Cell(reduction_label(r, ops)), code(r.input_shape or "—"),
                         Cell(_reduction_reads(r, buffers, ops)),
                         Cell(word, tone=tone), source_cell(r.source_lines), code(f"{r.name} in {r.fusion}")),
                        lines=tuple(r.source_lines), tone="bad" if tone == "bad" else ""))
    return Table("reductions", "Reductions", ("reduction", "of", "reads", "verdict", "source", "HLO"), tuple(rows),
                 total=len(ordered), left_out="the reductions the compiler made")


def memory_table(report: Report) -> Table:
    if report.devices > 1:
        return mesh_memory_table(report)
    m = report.memory
    peak_label = "peak (estimate: arguments + output + temp - alias)" if m.peak_is_estimate else "peak"
    rows = tuple(Row((Cell(label), Cell(format_bytes(value)), Cell(format_exact(value)))) for label, value in (
        ("temp", m.temp_bytes), ("arguments", m.argument_bytes), ("output", m.output_bytes),
        ("alias", m.alias_bytes), ("generated code", m.generated_code_bytes), (peak_label, m.peak_bytes)))
    return Table("memory", "Memory", ("memory", "size", "exact"), rows, total=len(rows))


def cost_table(report: Report) -> Table:
    c = report.cost

    def fmt(v: float | None) -> str:
        return "not reported" if v is None else f"{v:,.0f}"

    rows = tuple(Row((Cell(label), Cell(fmt(value)))) for label, value in (
        ("flops", c.flops), ("transcendentals", c.transcendentals), ("bytes accessed", c.bytes_accessed)))
    return Table("cost", "Cost", ("cost", "value"), rows, total=len(rows))


# -- verdicts and side by side -------------------------------------------------------------------------

def unfused_sizes(report: Report) -> list[int]:
    """Bytes of the stored data each unfused verdict reduction reads."""
    buffers = {m.name: m.bytes for m in report.materialized}
    return [buffers.get(r.input_materialized or "", r.input_bytes)
            for r in report.verdict_reductions if not r.fused]


def reduction_verdict(report: Report) -> str:
    """``fused``, ``all 3 fused``, ``1 of 2 unfused``..., or ``""`` when there is no reduction."""
    if report.error:
        return "—"
    reductions = report.verdict_reductions
    n = len(reductions)
    if not n:
        return ""
    unfused = sum(not r.fused for r in reductions)
    every = "" if n == 1 else "both " if n == 2 else f"all {n} "
    if not unfused:
        return f"{every}fused"
    if unfused == n:
        return f"{every}unfused"
    return f"{unfused} of {n} unfused"


def has_problem(report: Report, display: Display) -> bool:
    threshold = display.threshold(report)
    return any(size >= threshold for size in unfused_sizes(report))


def compile_error_title(err: CompileError, where: str) -> str:
    """``does not fit on TPU v5e: needs 18.65 GiB of temporaries, 15.75 GiB available``."""
    if err.status == "RESOURCE_EXHAUSTED":
        if err.needed_bytes and err.available_bytes:
            # XLA writes these sizes in binary units ("18.65G"); so do we, so they match its message.
            return (f"does not fit on {where}: needs {err.needed_bytes / 2**30:.2f} GiB "
                    f"of temporaries, {err.available_bytes / 2**30:.2f} GiB available")
        return f"does not fit on {where}: compilation ran out of memory"
    return f"compilation failed on {where}: {err.status}"


def short_status(result: Result) -> str:
    """A cell for a (function, target) without a usable report, or its temp memory."""
    if result.missing:
        return "compiler not installed"
    if result.failure:
        return f"no report ({result.failure.kind})"
    assert result.report is not None
    err = result.report.error
    if err:
        return "does not fit" if err.status == "RESOURCE_EXHAUSTED" else f"failed: {err.status}"
    return format_bytes(result.report.memory.temp_bytes)


def largest_intermediate(report: Report) -> Materialized | None:
    return max((m for m in report.materialized if is_intermediate(m) and not is_scalar(m.shape)),
               key=lambda m: m.bytes, default=None)


def comparison_table(results: Sequence[Result], display: Display) -> Table:
    """One column per target; rows for the figures that differ between backends."""
    ok = [r.report for r in results if r.report is not None and not r.report.error]

    def row(label: str, fn: Any, tone: Any = None) -> Row:
        cells = [Cell(label)]
        for r in results:
            if r.report is None or r.report.error:
                cells.append(Cell(short_status(r)))
            else:
                cells.append(Cell(fn(r.report), tone=tone(r.report) if tone else ""))
        return Row(tuple(cells))

    def largest(rep: Report) -> str:
        b = largest_intermediate(rep)
        return "none" if b is None else f"{b.shape} ({format_bytes(b.bytes)})"

    def peak(rep: Report) -> str:
        text = format_bytes(rep.memory.peak_bytes) + (" (est.)" if rep.memory.peak_is_estimate else "")
        size = device_memory(rep.target)
        if size and rep.memory.peak_bytes is not None:
            # devices are sold by binary sizes ("80 GB" of HBM is 80 GiB): say it as the vendor does
            text += f" of {size / 2**30:g} GiB"
        return text

    def temp(rep: Report) -> str:
        text = format_bytes(rep.memory.temp_bytes)
        if rep.target.startswith("tpu") and not rep.memory.temp_bytes:
            text += " (TPU: counted in peak)"
        return text

    # peak first: it answers "does it fit" on every target (a TPU's temp is 0 for most programs)
    rows = [row("peak memory", peak), row("temp memory", temp), row("largest intermediate", largest)]
    if any(rep.verdict_reductions for rep in ok):
        rows.append(row("reductions", lambda rep: reduction_verdict(rep) or "none",
                        lambda rep: "bad" if has_problem(rep, display) else ""))
    rows.append(row("kernels", lambda rep: str(rep.kernels)))
    if any(has_communication(rep) for rep in ok):
        rows.append(row("communication", communication_cell))
    return Table("compare", "Side by side", ("", *[r.target_title for r in results]), tuple(rows), total=len(rows))


def variant_measure(target: str, report: Report) -> tuple[str, int]:
    """What the variants table (and its chart) shows of one variant on one target:
    ``("peak", bytes)`` on a TPU whose peak is known, since a TPU's temp is 0 for most
    programs (its memory is counted in the peak) and the whole column shows peaks so
    that its rows compare; else ``("temp", bytes)``."""
    mem = report.memory
    if target.startswith("tpu") and mem.peak_bytes is not None:
        return "peak", mem.peak_bytes
    return "temp", mem.temp_bytes or 0


def measure_text(measure: str, value: float) -> str:
    """``peak 4.4 MB`` or ``50.4 MB`` (temp): a variants table's cell, a bar's value."""
    return f"peak {format_bytes(value)}" if measure == "peak" else format_bytes(value)


def variants_title(measures: Sequence[str]) -> str:
    """What a variants chart draws: ``Temp memory``, ``Peak memory``, or both kinds."""
    kinds = set(measures)
    if kinds == {"peak"}:
        return "Peak memory"
    if kinds == {"temp"} or not kinds:
        return "Temp memory"
    return "Temp memory (peak on TPUs)"


def variants_table(functions: Sequence[str], targets: Sequence[tuple[str, str]],
                   results: dict[tuple[str, str], Result], display: Display) -> Table:
    """Temp memory (and the reduction verdict) of each function on each target."""
    rows = []
    measures = []
    for fn in functions:
        cells = [code(fn)]
        for target, _ in targets:
            r = results.get((fn, target))
            if r is None:
                cells.append(Cell("—"))
            elif r.report is None or r.report.error:
                cells.append(Cell(short_status(r)))
            else:
                verdict = reduction_verdict(r.report)
                measure, value = variant_measure(target, r.report)
                measures.append(measure)
                text = measure_text(measure, value)
                text += f", {verdict}" if verdict else ""
                cells.append(Cell(text, tone="bad" if has_problem(r.report, display) else ""))
        rows.append(Row(tuple(cells)))
    return Table("variants", f"{variants_title(measures)} and reductions, by variant and target",
                 ("function", *[t for _, t in targets]),
                 tuple(rows), total=len(rows))


def device_memory(target: str) -> int | None:
    """The memory of one device of a known target (``None`` for the host CPU)."""
    from sphinx_jaxhlo.core.targets import TARGETS

    known = TARGETS.get(target)
    return known.memory_bytes if known is not None else None


# -- findings ------------------------------------------------------------------------------------------

def _buffer_words(buf: Materialized, ops: _Ops) -> str:
    """``the 20.0 GB result of dot_general on line 4 (HLO gemm_fusion_dot.1)``."""
    made = buf.producer_op or ops.kernel(buf.producer, buf.computation)
    where = f" on {lines_text(buf.source_lines)}" if buf.source_lines else ""
    return f"the {buf.shape} result of {made}{where} ({format_bytes(buf.bytes)}; HLO {buf.producer})"


def findings(report: Report, display: Display) -> list[Finding]:
    """The findings in words a reader understands, problems first."""
    if report.error:
        return []
    ops = _Ops(report)
    buffers = {m.name: m for m in report.materialized}
    threshold = display.threshold(report)
    io = display.io_bytes(report)
    # an example about memory asks for no verdict on its reductions (``:findings:``)
    verdict = report.verdict_reductions if "reductions" in display.findings else []
    out: list[Finding] = []
    # unfused reductions, grouped by the stored data they read
    groups: dict[str, list[Reduction]] = {}
    for r in verdict:
        if not r.fused:
            groups.setdefault(r.input_materialized or f"?{r.name}", []).append(r)
    big: list[tuple[int, Finding]] = []
    small: list[tuple[int, Finding]] = []
    for key, reds in groups.items():
        buf = buffers.get(key)
        size = buf.bytes if buf is not None else reds[0].input_bytes
        what = _buffer_words(buf, ops) if buf is not None else \
            f"the {reds[0].input_shape} data ({format_bytes(size)})"
        names = sorted({reduction_label(r, ops) for r in reds})
        lines = sorted({n for r in reds for n in r.source_lines})
        where = f" on {lines_text(lines)}" if lines else ""
        if len(reds) == 1:
            readers = f"the reduction{where} ({names[0]}) reads it"
        else:
            readers = f"{len(reds)} reductions{where} ({', '.join(names)}) read it"
        text = f"{what} is stored in memory before {readers}."
        reason = next((x for x in [*(r.reason for r in reds), buf.reason if buf is not None else None] if x), None)
        if size >= threshold:
            if io and size >= 2 * io:
                text += f" That is {size / io:,.0f}× the {format_bytes(io)} the arguments and outputs take."
            big.append((size, Finding("problem", "Unfused reduction", text, reason)))
        else:
            if threshold > display.problem_min_bytes:
                text += (f" It is smaller than the arguments and outputs together ({format_bytes(io)}): "
                         "not a problem here.")
            else:
                text += f" It is under {format_bytes(display.problem_min_bytes)}: not a problem here."
            small.append((size, Finding("info", "Unfused reduction", text, reason)))
    for found, limit, what in ((big, 5, "large"), (small, 3, "small")):
        found.sort(key=lambda item: -item[0])
        out += [f for _, f in found[:limit]]
        if len(found) > limit:
            level = "problem" if what == "large" else "info"
            out.append(Finding(level, "", f"{len(found) - limit} more unfused reductions read {what} stored "
                                          "data: see the reductions table."))
    fused = [r for r in verdict if r.fused]
    if fused and len(fused) == len(verdict):
        names = sorted({reduction_label(r, ops) for r in fused})
        n = len(fused)
        lines = sorted({line for r in fused for line in r.source_lines})
        where = f" on {lines_text(lines)}" if lines else ""
        subject = (f"the reduction{where} ({names[0]}) computes" if n == 1
                   else f"{'both' if n == 2 else f'all {n}'} reductions{where} ({', '.join(names)}) compute")
        out.append(Finding("good", "Fused", f"{subject} the data they reduce inside their kernels: "
                                            "the values reduced never go to memory."
                           if n > 1 else f"{subject} the data it reduces inside its kernel: "
                                         "the values reduced never go to memory."))
    elif fused:
        out.append(Finding("info", "", f"{len(fused)} other reduction{'s are' if len(fused) > 1 else ' is'} fused."))
    biggest = largest_intermediate(report)
    if "memory" not in display.findings:
        return out
    if biggest is not None and biggest.name not in groups:
        w = _buffer_words(biggest, ops)
        out.append(Finding("info", "", f"Largest intermediate: {w}."))
    elif biggest is None and not report.materialized and not report.analysis_error:
        copies = len(report.argument_copies)
        also = (f" ({copies} cop{'y' if copies == 1 else 'ies'} of argument data, listed in the table)"
                if copies else "")
        out.append(Finding("info", "", "No buffer is stored between kernels: the computation runs from "
                                       f"the arguments to the result without an intermediate in memory{also}."))
    return out


# -- programs on several devices -------------------------------------------------------------------

def has_communication(report: Report) -> bool:
    """Whether a report is of a program on several devices, or has collectives."""
    return report.devices > 1 or bool(report.collectives)


def communication_cell(report: Report) -> str:
    """``all-gather x2, 537 MB over data``: the collectives by kind, their bytes per
    device and mesh axes (the side-by-side table's communication row)."""
    if not report.collectives:
        return "none" if report.devices > 1 else "none (one device)"
    by_kind: dict[str, list[Collective]] = {}
    for c in report.collectives:
        by_kind.setdefault(c.kind, []).append(c)
    parts = []
    for kind, items in by_kind.items():
        axes = sorted({a for c in items for a in (c.axes or [])})
        count = f" x{len(items)}" if len(items) > 1 else ""
        over = f" over {', '.join(axes)}" if axes else ""
        parts.append(f"{kind}{count}, {format_bytes(sum(c.bytes for c in items))}{over}")
    return "; ".join(parts)


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


def mesh_findings(report: Report, display: Display | None = None) -> list[Finding]:
    """The mesh in words, and the communication: the findings of a program on several
    devices (the communication only when ``display`` reports that kind)."""
    out: list[Finding] = []
    if report.devices > 1:
        mesh = f", mesh {report.mesh_text}" if report.mesh_text else ""
        out.append(Finding("info", "", f"Runs on {report.devices} devices{mesh}, one program per device: the "
                                       "memory figures and the shapes of kernels, buffers and collectives are "
                                       "one device's."))
    elif report.mesh:
        out.append(Finding("info", "", f"One device: the mesh's axes ({report.mesh_text}) have size 1 here."))
    if display is not None and "communication" not in display.findings:
        return out
    if report.collectives:
        n = len(report.collectives)
        overlapped = sum(1 for c in report.collectives if c.overlapped)
        text = f"{n} collective{'s' if n != 1 else ''}, {format_bytes(sum(c.bytes for c in report.collectives))} " \
               "per device in all"
        if overlapped:
            text += f"; {overlapped} of them overlap{'s' if overlapped == 1 else ''} compute"
        out.append(Finding("info", "Communication", text + "."))
    elif report.devices > 1:
        out.append(Finding("good", "No communication", "every device computes its part from its own data; "
                                                       "no collective was inserted."))
    return out


def mesh_memory_table(report: Report) -> Table:
    """The memory of a program on several devices: per device, and for all of them."""
    m = report.memory
    n = report.devices
    peak_label = "peak (estimate: arguments + output + temp - alias)" if m.peak_is_estimate else "peak"

    def whole(value: int | None) -> str:
        return "not reported" if value is None else format_bytes(value * n)

    rows = tuple(Row((Cell(label), Cell(format_bytes(value)), Cell(format_exact(value)), Cell(whole(value))))
                 for label, value in (
        ("temp", m.temp_bytes), ("arguments", m.argument_bytes), ("output", m.output_bytes),
        ("alias", m.alias_bytes), ("generated code", m.generated_code_bytes), (peak_label, m.peak_bytes)))
    return Table("memory", "Memory", ("memory", "per device", "exact", f"all {n} devices"), rows, total=len(rows))


# -- the chart -----------------------------------------------------------------------------------------

def chart_scale(values: Sequence[float], mode: str = "auto") -> str:
    """``linear`` or ``log``: ``auto`` is linear when the positive values are within
    100x of each other, logarithmic otherwise."""
    if mode in ("linear", "log"):
        return mode
    positive = [v for v in values if v > 0]
    if not positive:
        return "linear"
    return "linear" if max(positive) <= 100 * min(positive) else "log"


def bar_text(value: float, smallest: float, measure: str = "temp") -> str:
    """``604 MB (2.2×)``, ``peak 4.4 MB (1.5×)``: the value as the table gives it and
    its ratio to the smallest positive value of the same measure."""
    if value <= 0 or smallest <= 0:
        return measure_text(measure, value)
    ratio = value / smallest
    shown = f"{ratio:.1f}" if ratio < 10 else f"{ratio:,.0f}"
    return f"{measure_text(measure, value)} ({shown}×)"


# -- the signature -------------------------------------------------------------------------------------

def default_function(source: str) -> str | None:
    """The name of the last top-level ``def`` of ``source`` (what an example
    compiles without ``:function:``), or ``None``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return names[-1] if names else None


def _parameters(source: str, function: str) -> list[str] | None:
    """The parameter names of a top-level ``def function`` in ``source``, without
    running it; ``None`` when there is no such ``def``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            a = node.args
            return [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    return None


def signature(function: str, args: Sequence[str], kwargs: Sequence[tuple[str, str]],
              static: Sequence[tuple[str, str]], source: str = "") -> str:
    """``power_sum(x: f32[1024,256], n=7)``: the function as compiled, its
    arguments named when the source defines it at the top level.

    :param args: the positional argument specs, as text.
    :param kwargs: ``(name, spec)`` of keyword specs.
    :param static: ``(name, value)`` of static arguments, as written.
    """
    names = _parameters(source, function) if source else None
    parts: list[tuple[int, str]] = []
    order = {n: i for i, n in enumerate(names or [])}
    for i, spec in enumerate(args):
        name = names[i] if names is not None and i < len(names) else ""
        parts.append((i, f"{name}: {spec}" if name else spec))
    base = len(args)
    for k, (name, spec) in enumerate(kwargs):
        parts.append((order.get(name, base + 1000 + k), f"{name}: {spec}"))
    for k, (name, value) in enumerate(static):
        parts.append((order.get(name, base + 2000 + k), f"{name}={value}"))
    parts.sort(key=lambda p: p[0])
    return f"{function}({', '.join(text for _, text in parts)})"
