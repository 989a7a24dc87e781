"""Reports -> plain text, for ``str(reports)`` and the command line.

The same facts as the directive's HTML, as monospace tables: one comparison
table with a column per target (temp, peak, largest materialized buffer,
reductions, fusions), then per target the parts asked for (``summary``,
``graph``, ``memory``, ``cost``, ``hlo``, ``stablehlo``, ``jaxpr``, ``source``).  The
findings in words are the directive's own call-outs
(:func:`sphinx_jaxhlo.render.example.callouts`), as text.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..report import Report
from ..sizes import format_bytes, format_exact
from .example import (
    COLLECTIVE_HEADER,
    SHARDING_HEADER,
    callouts,
    collective_rows,
    communication_cell,
    compile_error_title,
    has_communication,
    lines_text,
    mesh_sentence,
    reduction_verdict,
    verdict_word,
)


@dataclass(frozen=True)
class FailedTarget:
    """A target that produced no report, as the text shows it."""

    target: str
    kind: str
    message: str


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "") -> str:
    """A left-aligned table with a rule under the header; cells may not hold newlines."""
    cols = len(header)
    cells = [[str(c).replace("\n", " ") for c in row] + [""] * (cols - len(row)) for row in rows]
    widths = [max(len(header[i]), *(len(r[i]) for r in cells)) for i in range(cols)]

    def line(values: Sequence[str]) -> str:
        return (indent + "  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True))).rstrip()

    out = [line(header), indent + "  ".join("-" * w for w in widths)]
    out += [line(r) for r in cells]
    return "\n".join(out)


def _largest(report: Report) -> str:
    b = report.largest_materialized
    return "none" if b is None else f"{b.shape} ({format_bytes(b.bytes)})"


def _status(report: Report) -> str:
    err = report.error
    assert err is not None
    return "does not fit" if err.status == "RESOURCE_EXHAUSTED" else f"failed: {err.status}"


def _kernel_count(report: Report) -> str:
    return str(sum(1 for f in report.fusions if f.kind in ("Loop", "Input", "Output", "Custom")))


def comparison(reports: Sequence[Report], failed: Sequence[FailedTarget] = (),
               order: Sequence[str] | None = None) -> str:
    """The key figures, one column per target (failed targets say why)."""
    by_target: dict[str, Report | FailedTarget] = {r.target: r for r in reports}
    by_target.update({f.target: f for f in failed})
    targets = [t for t in (order or by_target) if t in by_target]

    def row(label: str, fn: Callable[[Report], str]) -> list[str]:
        cells = [label]
        for t in targets:
            item = by_target[t]
            if isinstance(item, FailedTarget):
                cells.append(f"no report ({item.kind})")
            elif item.error is not None:
                cells.append(_status(item))
            else:
                cells.append(fn(item))
        return cells

    def peak(r: Report) -> str:
        return format_bytes(r.memory.peak_bytes) + (" (est.)" if r.memory.peak_is_estimate else "")

    rows = [
        row("temp memory", lambda r: format_bytes(r.memory.temp_bytes)),
        row("peak", peak),
        row("largest materialized", _largest),
        row("reductions", reduction_verdict),
        row("fusions", _kernel_count),
    ]
    if any(isinstance(item, Report) and has_communication(item) for item in by_target.values()):
        rows.append(row("communication", communication_cell))
    return text_table(["", *targets], rows)


def _wrap(text: str, indent: str = "  ") -> str:
    return textwrap.fill(text, width=100, initial_indent=indent, subsequent_indent=indent + "  ")


def summary_text(report: Report) -> str:
    """Call-outs, then the fusions, materialized buffers and reductions tables."""
    parts: list[str] = [_wrap(node.astext()) for node in callouts(report)]
    if report.analysis_error:
        parts.append(_wrap(f"The fusion analysis failed: {report.analysis_error}"))
    if report.fusions:
        rows = [[f.name, f.kind + (f" ({f.custom_kind})" if f.custom_kind else ""), " + ".join(f.ops) or "—",
                 f.shape, format_bytes(f.bytes), lines_text(f.source_lines)] for f in report.fusions]
        parts.append("  Fusions\n" + text_table(["fusion", "kind", "ops", "shape", "size", "source"], rows, "    "))
    if report.materialized:
        rows = [[m.name, m.shape, format_bytes(m.bytes), m.producer + (f" ({m.producer_op})" if m.producer_op else ""),
                 ", ".join(m.consumers), lines_text(m.source_lines)] for m in report.materialized]
        parts.append("  Materialized buffers\n" + text_table(
            ["buffer", "shape", "size", "producer", "consumers", "source"], rows, "    "))
    if report.reductions:
        rows = [[r.name, r.fusion, " + ".join(r.fused_with) or "—",
                 f"{r.input_materialized} ({format_bytes(r.input_bytes)})" if r.input_materialized
                 else f"partial sums in {r.partial_of}" if r.partial_of else "computed in the fusion",
                 verdict_word(r), lines_text(r.source_lines)]
                for r in report.reductions]
        parts.append("  Reductions\n" + text_table(["reduction", "in", "fused with", "reads", "verdict", "source"],
                                                   rows, "    "))
    return "\n\n".join(parts)


def mesh_text(report: Report) -> str:
    """The mesh, the layouts of arguments and results, and the collectives, as text."""
    if not has_communication(report) and not report.mesh:
        return ""
    parts = [_wrap(mesh_sentence(report))]
    layouts = [*report.input_shardings, *report.output_shardings]
    if layouts:
        rows = [[s.path, s.shape, s.spec, s.device_shape] for s in layouts]
        parts.append("  Arguments and results over the mesh\n" + text_table(SHARDING_HEADER, rows, "    "))
    if report.collectives:
        rows = [[*cells, lines_text(c.source_lines)]
                for cells, c in zip(collective_rows(report), report.collectives, strict=True)]
        parts.append("  Collectives\n" + text_table(COLLECTIVE_HEADER, rows, "    "))
    elif report.devices > 1:
        parts.append(_wrap("No communication: no collective was inserted."))
    return "\n\n".join(parts)


def memory_text(report: Report) -> str:
    m = report.memory
    if report.devices > 1:
        n = report.devices
        rows = [[label, format_bytes(value), format_exact(value),
                 "not reported" if value is None else format_bytes(value * n)] for label, value in (
            ("temp", m.temp_bytes), ("arguments", m.argument_bytes), ("output", m.output_bytes),
            ("alias", m.alias_bytes), ("generated code", m.generated_code_bytes),
            ("peak (estimate)" if m.peak_is_estimate else "peak", m.peak_bytes))]
        return "  Memory\n" + text_table(["memory", "per device", "exact", f"all {n} devices"], rows, "    ")
    peak_label = "peak (estimate)" if m.peak_is_estimate else "peak"
    rows = [[label, format_bytes(value), format_exact(value)] for label, value in (
        ("temp", m.temp_bytes), ("arguments", m.argument_bytes), ("output", m.output_bytes),
        ("alias", m.alias_bytes), ("generated code", m.generated_code_bytes), (peak_label, m.peak_bytes))]
    return "  Memory\n" + text_table(["memory", "size", "exact"], rows, "    ")


def cost_text(report: Report) -> str:
    c = report.cost

    def fmt(v: float | None) -> str:
        return "not reported" if v is None else f"{v:,.0f}"

    rows = [["flops", fmt(c.flops)], ["transcendentals", fmt(c.transcendentals)],
            ["bytes accessed", fmt(c.bytes_accessed)]]
    return "  Cost\n" + text_table(["cost", "value"], rows, "    ")


def graph_text_part(report: Report) -> str:
    """The entry computation as a graph, in text (the directive's ``graph`` part)."""
    try:
        from .graph import GraphError, build_graph, graph_text
    except ImportError:  # pragma: no cover - the graph module is optional
        return "  Graph\n    (not available)"
    try:
        text = graph_text(build_graph(report))
    except GraphError as exc:
        text = f"No graph: {exc}."
    return "  Graph\n" + textwrap.indent(text.rstrip(), "    ")


def numbered(text: str) -> str:
    lines = text.splitlines()
    width = len(str(len(lines)))
    return "\n".join(f"{i:>{width}} | {line}".rstrip() for i, line in enumerate(lines, 1))


def report_text(report: Report, show: Sequence[str]) -> str:
    """The parts of one target's report, under a heading naming the target."""
    title = report.target + (f": {report.target_description}" if report.target_description else "")
    out = [f"== {report.function} on {title} =="]
    if report.error is not None:
        err = report.error
        out.append("  " + compile_error_title(err, report.target))
        out.append(textwrap.indent(err.message.strip(), "    "))
        return "\n".join(out)
    if "summary" in show:
        out.append(summary_text(report))
        mesh = mesh_text(report)
        if mesh:
            out.append(mesh)
    if "graph" in show:
        out.append(graph_text_part(report))
    if "memory" in show:
        out.append(memory_text(report))
    if "cost" in show:
        out.append(cost_text(report))
    for part, title_text, text in (("hlo", "Optimized HLO", report.hlo),
                                   ("stablehlo", "StableHLO", report.stablehlo),
                                   ("jaxpr", "jaxpr", report.jaxpr)):
        if part in show:
            body = text.rstrip() if text else "(not produced: ask for it when compiling)"
            out.append(f"  {title_text}\n{textwrap.indent(body, '    ')}")
    return "\n\n".join(out)


def render_text(reports: Sequence[Report], failed: Sequence[FailedTarget] = (), show: Sequence[str] = ("summary",),
                title: str = "", notes: Sequence[str] = (), order: Sequence[str] | None = None) -> str:
    """Everything about one function, as text.

    :param reports: one per compiled target.
    :param failed: the targets that produced no report.
    :param show: parts from :data:`sphinx_jaxhlo.request.SHOW_PARTS`.
    :param title: a first line, e.g. ``with_dot(f32[100000,3], f32[50000,3])``.
    :param notes: lines printed at the end (how it was compiled, ...).
    :param order: target order; default: reports, then failures.
    """
    out: list[str] = []
    if title:
        out.append(title)
    if not reports and not failed:
        out.append("(no report)")
    else:
        out.append(comparison(reports, failed, order))
    if "source" in show:
        source = next((r.source for r in reports if r.source), "")
        if source:
            out.append("Source\n" + textwrap.indent(numbered(source), "  "))
    by_target: dict[str, Report | FailedTarget] = {r.target: r for r in reports}
    by_target.update({f.target: f for f in failed})
    parts = [p for p in show if p != "source"]
    for t in [t for t in (order or by_target) if t in by_target]:
        item = by_target[t]
        if isinstance(item, FailedTarget):
            out.append(f"== {t}: no report ({item.kind}) ==\n" + textwrap.indent(item.message.strip(), "  "))
        elif parts or item.error is not None:
            out.append(report_text(item, parts))
    versions: dict[str, str] = {}
    for r in reports:
        versions.update(r.versions)
    footer = [*notes]
    if versions:
        footer.append("Compiled with " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())) + ".")
    if footer:
        out.append("\n".join(footer))
    return "\n\n".join(out) + "\n"
