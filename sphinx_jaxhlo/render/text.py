"""Reports -> plain text, for ``str(reports)`` and the command line.

The same rows as the directive's tables (:mod:`sphinx_jaxhlo.render.rows`),
as monospace tables: the side-by-side table with a column per target, then
per target the parts asked for, in the order asked (``summary``: the findings
in words and the fusions, materialized buffers and reductions tables, largest
first, up to the row limit; ``graph``, ``memory``, ``cost``, ``hlo``,
``stablehlo``, ``jaxpr``; ``source`` once, after the side-by-side table).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

from sphinx_jaxhlo.core.report import Reason, Report, TargetFailure
from sphinx_jaxhlo.core.results import Result, result_of_failure
from sphinx_jaxhlo.hlo.reasons import ALTERNATIVE_TITLES, reason_sentence
from sphinx_jaxhlo.render import rows as rowmodel
from sphinx_jaxhlo.render.display import Display
from sphinx_jaxhlo.render.findings import chunk_refusal, findings, mesh_findings, shows_refusal
from sphinx_jaxhlo.render.overview import comparison_table, compile_error_title
from sphinx_jaxhlo.render.peak import live_table, peak_sentence, timeline_table
from sphinx_jaxhlo.render.rows import Table


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "") -> str:
    """A left-aligned table with a rule under the header; cells may not hold newlines."""
    cols = len(header)
    cells = [[str(c).replace("\n", " ") for c in row] + [""] * (cols - len(row)) for row in rows]
    widths = [max([len(header[i]), *(len(r[i]) for r in cells)]) for i in range(cols)]

    def line(values: Sequence[str]) -> str:
        return (indent + "  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True))).rstrip()

    out = [line(header), indent + "  ".join("-" * w for w in widths)]
    out += [line(r) for r in cells]
    return "\n".join(out)


def model_text(model: Table, indent: str = "  ") -> str:
    """A :class:`~sphinx_jaxhlo.render.rows.Table` under its title, with what it leaves out."""
    out = f"{indent}{model.title}"
    if model.rows:  # every row may be left out of the default view (copies of arguments, say)
        out += "\n" + text_table(model.header, [[c.text for c in r.cells] for r in model.rows], indent + "  ")
    for extra in (model.more_text, model.note):
        if extra:
            out += "\n" + _wrap(extra, indent + "  ")
    return out


_SIZE = re.compile(r"(\d) ([kMGT]?B)\b")


def _wrap(text: str, indent: str = "  ") -> str:
    """Fill to 100 columns, never between a number and its unit."""
    glued = _SIZE.sub("\\1\u00a0\\2", text)
    filled = textwrap.fill(glued, width=100, initial_indent=indent, subsequent_indent=indent + "  ",
                           break_on_hyphens=False)
    return filled.replace("\u00a0", " ")


def _results(reports: Sequence[Report], failed: Sequence[TargetFailure],
             order: Sequence[str] | None) -> list[Result]:
    by_target: dict[str, Result] = {}
    for r in reports:
        by_target[r.target] = Result(function=r.function, target=r.target, target_title=r.target, report=r)
    for f in failed:
        by_target[f.target] = result_of_failure(f)
    return [by_target[t] for t in (order or by_target) if t in by_target]


def comparison(reports: Sequence[Report], failed: Sequence[TargetFailure] = (),
               order: Sequence[str] | None = None, display: Display | None = None) -> str:
    """The key figures, one column per target (failed targets say why)."""
    model = comparison_table(_results(reports, failed, order), display or Display())
    return text_table(model.header, [[c.text for c in r.cells] for r in model.rows])


def summary_text(report: Report, display: Display | None = None) -> str:
    """The findings in words, then the fusions, materialized buffers and reductions tables."""
    display = display or Display()
    parts: list[str] = []
    for f in findings(report, display):
        rule = f" Rule: {f.rule_title} ({f.rule})." if f.rule else ""
        parts.append(_wrap((f"{f.title}: " if f.title else "") + f.text + rule))
        if f.reason is not None:
            parts.append(reason_text(f.reason))
    if report.analysis_error:
        parts.append(_wrap(f"The fusion analysis failed: {report.analysis_error}"))
    if display.peak:
        parts.append(peak_text(report))
    for build in rowmodel.detail_tables(display):
        model = build(report, display)
        if model.rows:
            parts.append(model_text(model))
    mesh = mesh_text(report, display)
    if mesh:
        parts.append(mesh)
    return "\n\n".join(parts)


def peak_text(report: Report) -> str:
    """What is live at the peak: the sentence, the buffers, the timeline as a table
    (:mod:`sphinx_jaxhlo.render.peak`); where there is no live list, why."""
    if report.live_at_peak is None:
        why = report.buffer_assignment_note or "the report has no buffer assignment (made before it was collected)"
        return _wrap(f"No list of what is live at the peak: {why}.")
    return "\n\n".join([_wrap(peak_sentence(report)), model_text(live_table(report)),
                         model_text(timeline_table(report))])


def reason_text(reason: Reason) -> str:
    """Why a reduction is unfused, the alternatives, the compiler's record indented."""
    lines = [_wrap(reason_sentence(reason))]
    if reason.alternatives:
        lines.append(_wrap("Bounded alternatives: " + "; ".join(
            f"{ALTERNATIVE_TITLES.get(a, a)} ({a})" for a in reason.alternatives) + "."))
    if reason.quoted is not None:
        lines.append("The compiler's decision record:\n" + "\n".join("    " + x for x in reason.quoted.splitlines()))
    return "\n".join(lines)


def mesh_text(report: Report, display: Display | None = None) -> str:
    """A program on several devices: the mesh and the communication in words, the
    arguments and results over the mesh, the collectives."""
    display = display or Display()
    parts = [_wrap((f"{f.title}: " if f.title else "") + f.text) for f in mesh_findings(report, display)]
    for build in (rowmodel.sharding_table, rowmodel.collective_table):
        model = build(report, display)
        if model.rows:
            parts.append(model_text(model))
    return "\n\n".join(parts)


def graph_text_part(report: Report) -> str:
    """The entry computation as a graph, in text (the directive's ``graph`` part)."""
    from sphinx_jaxhlo.render.graph import GraphError, build_graph
    from sphinx_jaxhlo.render.graph_drawing import graph_text

    try:
        text = graph_text(build_graph(report))
    except GraphError as exc:
        text = f"No graph: {exc}."
    return "  Graph\n" + textwrap.indent(text.rstrip(), "    ")


def numbered(text: str) -> str:
    lines = text.splitlines()
    width = len(str(len(lines)))
    return "\n".join(f"{i:>{width}} | {line}".rstrip() for i, line in enumerate(lines, 1))


_TEXTS = {"hlo": ("Optimized HLO", "hlo"), "stablehlo": ("StableHLO", "stablehlo"), "jaxpr": ("jaxpr", "jaxpr")}


def chunk_text(report: Report, display: Display | None = None) -> list[str]:
    """A ``:chunk:`` variant's numerical check, and the report's chunking suggestion, as text; why
    none is suggested only where the findings name a memory problem it would have answered, as
    the page does (:func:`~sphinx_jaxhlo.render.findings.shows_refusal`)."""
    display = display or Display()
    out = []
    if report.chunk_check:
        out.append(textwrap.fill(f"Chunked rewrite proved on the jaxpr and {report.chunk_check}.", 100,
                                 initial_indent="  ", subsequent_indent="    "))
    refusal = chunk_refusal(report, brief=True)  # nobody asked: said as a memory finding, briefly
    if refusal is not None:
        if shows_refusal(findings(report, display), display, asked=False):
            out.append(textwrap.fill(f"{refusal.title}: {refusal.text}", 100, initial_indent="  ",
                                     subsequent_indent="    "))
    elif report.chunk_suggestion:
        words, *code = report.chunk_suggestion.split("\n")
        out.append(textwrap.fill(words, 100, initial_indent="  ", subsequent_indent="    "))
        if code:  # else no suggestion: the words say why
            out.append(textwrap.indent("\n".join(code).rstrip(), "    "))
    return out


def report_text(report: Report, show: Sequence[str], display: Display | None = None) -> str:
    """The parts of one target's report, in the order of ``show``, under a heading naming the target."""
    display = display or Display()
    title = report.target + (f": {report.target_description}" if report.target_description else "")
    out = [f"== {report.function} on {title} =="]
    if report.error is not None:
        err = report.error
        out.append("  " + compile_error_title(err, report.target))
        out.append(textwrap.indent(err.message.strip(), "    "))
        if report.live_at_peak is not None and display.peak:  # what the refused program needs
            out.append("\n" + peak_text(report))
        if "\n" in report.chunk_suggestion:  # a chunking that compiles where this did not
            out += ["", *chunk_text(report)]
        return "\n".join(out)
    for part in dict.fromkeys(show):
        if part == "summary":
            out.append(summary_text(report, display))
            out += chunk_text(report, display)
        elif part == "graph":
            out.append(graph_text_part(report))
        elif part == "memory":
            out.append(model_text(rowmodel.memory_table(report)))
        elif part == "cost":
            out.append(model_text(rowmodel.cost_table(report)))
        elif part in _TEXTS:
            heading, attr = _TEXTS[part]
            text = getattr(report, attr)
            body = text.rstrip() if text else "(not produced: ask for it when compiling)"
            out.append(f"  {heading}\n{textwrap.indent(body, '    ')}")
    return "\n\n".join(out)


def render_text(reports: Sequence[Report], failed: Sequence[TargetFailure] = (), show: Sequence[str] = ("summary",),
                title: str = "", notes: Sequence[str] = (), order: Sequence[str] | None = None,
                display: Display | None = None) -> str:
    """Everything about one function (and its variants, a gradient, each in turn), as text.

    :param reports: one per compiled target (and function).
    :param failed: the targets that produced no report.
    :param show: parts from :data:`sphinx_jaxhlo.core.request.SHOW_PARTS`, in the order to show them.
    :param title: a first line, e.g. ``with_dot(f32[100000,3], f32[50000,3])``.
    :param notes: lines printed at the end (how it was compiled, ...).
    :param order: target order; default: reports, then failures.
    :param display: row limit and problem threshold; default: :class:`~sphinx_jaxhlo.render.display.Display`'s.
    """
    display = display or Display()
    out: list[str] = []
    if title:
        out.append(title)
    functions = list(dict.fromkeys([*(r.function for r in reports), *(f.function for f in failed)]))
    if len(functions) < 2:
        functions = [""]
    if "source" in show:
        source = next((r.source for r in reports if r.source), "")
        if source:
            out.append("Source\n" + textwrap.indent(numbered(source), "  "))
    parts = [p for p in show if p != "source"]
    for function in functions:
        mine = [r for r in reports if not function or r.function == function]
        mine_failed = [f for f in failed if not function or f.function == function]
        results = _results(mine, mine_failed, order)
        heading = [f"=== {function} ==="] if function else []
        if not results:
            out.append("\n".join([*heading, "(no report)"]))
            continue
        out.append("\n".join([*heading, comparison(mine, mine_failed, order, display)]))
        for result in results:
            if result.failure is not None:
                out.append(f"== {result.target}: no report ({result.failure.kind}) ==\n"
                           + textwrap.indent(result.failure.message.strip(), "  "))
            elif result.report is not None and (parts or result.report.error is not None):
                out.append(report_text(result.report, parts, display))
    versions: dict[str, str] = {}
    for r in reports:
        versions.update(r.versions)
    footer = [*notes]
    if versions:
        footer.append("Compiled with " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())) + ".")
    if footer:
        out.append("\n".join(footer))
    return "\n\n".join(out) + "\n"
