"""The tables across targets and variants, and the verdicts they are made of.

The side-by-side table (a column per target), the variants table (a row per
function) and what it shows of each variant (:func:`variant_measure`, which the
chart of :mod:`sphinx_jaxhlo.render.chart` draws); the short words for a reduction
verdict, a failed compile or a missing report that those tables and the text
output share.  No docutils, no Sphinx, no jax.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sphinx_jaxhlo.core.memory import acting_figure
from sphinx_jaxhlo.core.report import Collective, CompileError, Report
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.render.display import Display
from sphinx_jaxhlo.render.rows import (
    Cell,
    Row,
    Table,
    code,
    held_name,
    largest_intermediate,
    largest_on_chip,
    measured_text,
)

__all__ = [
    "comparison_table",
    "compile_error_title",
    "reduction_verdict",
    "short_status",
    "variants_table",
]


# -- verdicts ------------------------------------------------------------------------------------------

def unfused_sizes(report: Report) -> list[int]:
    """Bytes of the device's memory (a TPU's HBM) that the stored data each unfused verdict
    reduction reads takes: 0 for data a TPU keeps in the chip's own memory."""
    buffers = {m.name: m for m in report.materialized}
    sizes = []
    for r in report.verdict_reductions:
        if not r.fused:
            buf = buffers.get(r.input_materialized or "")
            sizes.append(r.input_bytes if buf is None else buf.bytes if buf.in_device_memory else 0)
    return sizes


def reduction_verdict(report: Report) -> str:
    """``fused``, ``all 3 fused``, ``1 of 2 unfused``..., or ``""`` when there is no reduction."""
    if report.error:
        return "—"
    reductions = report.deciding_reductions  # those too small to matter do not decide
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


# -- side by side ----------------------------------------------------------------------------------

def device_memory(target: str) -> int | None:
    """The memory of one device of a known target (``None`` for the host CPU)."""
    from sphinx_jaxhlo.core.targets import TARGETS

    known = TARGETS.get(target)
    return known.memory_bytes if known is not None else None


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
        if b is not None:
            return f"{b.shape} ({format_bytes(b.bytes)})"
        chip = largest_on_chip(rep)  # a TPU's, kept in the chip's own memory
        return "none" if chip is None else f"none in HBM; {chip.shape} ({format_bytes(chip.bytes)}) on-chip"

    # one name per target for what it holds (HBM held, device memory held...), on every page
    names = list(dict.fromkeys(held_name(r.target) for r in results))

    def held(rep: Report) -> str:
        text = format_bytes(rep.memory.device_bytes)
        size = device_memory(rep.target)
        if size and rep.memory.device_bytes is not None:
            # devices are sold by binary sizes ("80 GB" of HBM is 80 GiB): say it as the vendor does
            text += f" of {size / 2**30:g} GiB"
        return text if len(names) == 1 else f"{held_name(rep.target)}: {text}"

    def temp(rep: Report) -> str:
        return format_bytes(rep.memory.temp_bytes)

    # what the device holds first: it answers "does it fit" on every target
    rows = [row(names[0] if len(names) == 1 else "memory held", held)]
    if any(r.measured is not None for r in results):
        # what a real device held, from a hardware record, right under what the compile says
        rows.append(Row((Cell("measured on the device"),
                         *(Cell(measured_text(r.measured) if r.measured is not None else "—") for r in results))))
    rows += [row("temp memory", temp), row("largest intermediate", largest)]
    if display.verdicts and any(rep.verdict_reductions for rep in ok):
        rows.append(row("reductions", lambda rep: reduction_verdict(rep) or "none",
                        lambda rep: "bad" if has_problem(rep, display) else ""))
    rows.append(row("kernels", lambda rep: str(rep.kernels)))
    if any(has_communication(rep) for rep in ok):
        rows.append(row("communication", communication_cell))
    return Table("compare", "Side by side", ("", *[r.target_title for r in results]), tuple(rows), total=len(rows))


# -- by variant --------------------------------------------------------------------------------------

def variant_measure(target: str, report: Report, variants: Sequence[Report] = ()) -> tuple[str, int]:
    """What the variants table (and its chart) shows of one variant on one target: the figure
    to act on (:func:`sphinx_jaxhlo.core.memory.acting_figure`: the HBM a TPU holds, else
    temp), one for all the target's ``variants`` (default: this one alone), and its bytes."""
    measure = acting_figure(target, [r.memory for r in (variants or [report])])
    return measure, report.memory.figure(measure) or 0


def measure_text(measure: str, value: float) -> str:
    """``HBM held 4.4 MB`` or ``50.4 MB`` (temp): a variants table's cell (the figure named as
    everywhere else, :func:`~sphinx_jaxhlo.render.rows.held_name`)."""
    return f"{held_name('tpu')} {format_bytes(value)}" if measure == "device" else format_bytes(value)


def variants_title(measures: Sequence[str]) -> str:
    """What a variants chart draws: ``Temp memory``, ``HBM held``, or both kinds."""
    kinds = set(measures)
    if kinds == {"device"}:
        return "HBM held"
    if kinds == {"temp"} or not kinds:
        return "Temp memory"
    return "Temp memory (HBM held on TPUs)"


def variants_table(functions: Sequence[str], targets: Sequence[tuple[str, str]],
                   results: dict[tuple[str, str], Result], display: Display) -> Table:
    """Temp memory (the HBM a TPU holds) of each function on each target, and its reductions'
    verdict when the example gives verdicts (:attr:`Display.verdicts`)."""
    rows = []
    measures = []

    def compiled(target: str) -> list[Report]:
        found = [results.get((fn, target)) for fn in functions]
        return [r.report for r in found if r is not None and r.report is not None and not r.report.error]

    for fn in functions:
        cells = [code(fn)]
        for target, _ in targets:
            r = results.get((fn, target))
            if r is None:
                cells.append(Cell("—"))
            elif r.report is None or r.report.error:
                cells.append(Cell(short_status(r)))
            else:
                verdict = reduction_verdict(r.report) if display.verdicts else ""
                measure, value = variant_measure(target, r.report, compiled(target))
                measures.append(measure)
                text = measure_text(measure, value)
                text += f", {verdict}" if verdict else ""
                bad = display.verdicts and has_problem(r.report, display)
                cells.append(Cell(text, tone="bad" if bad else ""))
        rows.append(Row(tuple(cells)))
    what = " and reductions" if display.verdicts else ""
    return Table("variants", f"{variants_title(measures)}{what}, by variant and target",
                 ("function", *[t for _, t in targets]),
                 tuple(rows), total=len(rows))
