"""The parts of an example shown per (function, target), as docutils nodes.

``summary`` (the findings in words, each with the source lines it names linked
to the listing and an unfused reduction's reason beside it, then the detail
tables, collapsed), ``graph``, ``memory``, ``cost``, ``hlo``, ``stablehlo``
and ``jaxpr``; :func:`result_nodes` puts those asked for in order.  Every text
from the example or the compiler goes into text nodes or node attributes that
the writers escape.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from docutils import nodes

from sphinx_jaxhlo.core.report import Reason, Report
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.hlo.reasons import ALTERNATIVE_TITLES, reason_sentence
from sphinx_jaxhlo.render import rows as rowmodel
from sphinx_jaxhlo.render.blocks import collapsed_table, literal_block, para, table_node
from sphinx_jaxhlo.render.display import Display
from sphinx_jaxhlo.render.findings import Finding, chunk_refusal, findings, mesh_findings, shows_refusal
from sphinx_jaxhlo.render.graph import HEAVY_BYTES, GraphError, build_graph
from sphinx_jaxhlo.render.graph_drawing import graph_svg, graph_text
from sphinx_jaxhlo.render.nodes import jaxhlo_alternative, jaxhlo_details, jaxhlo_graph, jaxhlo_lineref, jaxhlo_text
from sphinx_jaxhlo.render.overview import compile_error_title
from sphinx_jaxhlo.render.peak import live_table, peak_sentence, timeline_table
from sphinx_jaxhlo.render.peak_chart import timeline_svg
from sphinx_jaxhlo.render.view import ExampleView, SourceLinks, example_id, source_links, source_text

__all__ = [
    "alternative_ref",
    "finding_node",
    "graph_nodes",
    "linked_text",
    "mesh_nodes",
    "peak_nodes",
    "reason_nodes",
    "result_nodes",
    "stablehlo_detail",
    "summary_nodes",
    "text_nodes",
]


# -- findings ----------------------------------------------------------------

def error_title(result: Result) -> str:
    assert result.report is not None and result.report.error is not None
    return compile_error_title(result.report.error, result.target_title)


#: ``line 6``, ``lines 4, 7``: how a finding names the example's source lines (:func:`rows.lines_text`).
_LINES = re.compile(r"\b(lines? )(\d+(?:, \d+)*)")


def linked_text(text: str, links: SourceLinks | None, source: str) -> list[nodes.Node]:
    """A finding's text, each source line it names a :class:`jaxhlo_lineref` to the
    listing's line (when the page shows the listing and it has that line).

    :param source: the listing's text, for the line's code in builders without links.
    """
    if links is None:
        return [nodes.Text(text)]
    code_lines = source_text(source).split("\n")
    out: list[nodes.Node] = []
    at = 0
    for match in _LINES.finditer(text):
        numbers = [int(n) for n in match.group(2).split(", ")]
        if not links.covers(numbers):
            continue
        out.append(nodes.Text(text[at:match.start()] + match.group(1)))
        for i, n in enumerate(numbers):
            if i:
                out.append(nodes.Text(", "))
            out.append(jaxhlo_lineref(str(n), str(n), href=f"{links.prefix}{n}", line=code_lines[n - 1]))
        at = match.end()
    if at < len(text):
        out.append(nodes.Text(text[at:]))
    return out


def finding_node(finding: Finding, links: SourceLinks | None = None, source: str = "") -> nodes.Element:
    """A finding, the source lines it names linked to the listing; an unfused
    reduction's also says why, links the alternatives and holds the compiler's
    own record, when there is one, collapsed."""
    tone = {"problem": ["jaxhlo-bad"], "good": ["jaxhlo-good"]}.get(finding.level, [])
    classes = ["jaxhlo-callout", *tone]
    body = linked_text(finding.text, links, source)
    if finding.title:
        found = para(nodes.strong(text=f"{finding.title}: "), *body, classes=classes)
    else:
        found = para(*body, classes=classes)
    if finding.rule:  # the guide's rule, linked to its section (resolved on any site by the inventory)
        found += nodes.Text(" Rule: ")
        found += jaxhlo_alternative(finding.rule_title or finding.rule, finding.rule_title or finding.rule,
                                    label=finding.rule, classes=["jaxhlo-alternative", "jaxhlo-rule"])
        found += nodes.Text(".")
    if finding.reason is None:
        return found
    box = nodes.container(classes=["jaxhlo-finding"])
    box += found
    box += reason_nodes(finding.reason)
    return box


def alternative_ref(label: str) -> jaxhlo_alternative:
    """A link to a section of the guide, by its label: the Sphinx extension makes it
    a cross-reference (resolved by Sphinx, or by intersphinx from another site); where
    neither knows it, and outside Sphinx, the title stays as text."""
    title = ALTERNATIVE_TITLES.get(label, label)
    return jaxhlo_alternative(title, title, label=label, classes=["jaxhlo-alternative"])


def reason_nodes(reason: Reason) -> list[nodes.Node]:
    """The reason in one paragraph, the alternatives as links, the quoted record collapsed."""
    out: list[nodes.Node] = [para(reason_sentence(reason), classes=["jaxhlo-reason"])]
    if reason.alternatives:
        p = para("Bounded alternatives: ", classes=["jaxhlo-alternatives"])
        for i, label in enumerate(reason.alternatives):
            if i:
                p += nodes.Text("; ")
            p += alternative_ref(label)
        p += nodes.Text(".")
        out.append(p)
    if reason.quoted is not None:
        details = jaxhlo_details(title="The compiler's decision record", open=False, classes=["jaxhlo-quoted"])
        details += literal_block(reason.quoted, "text")
        out.append(details)
    return out


# -- parts -------------------------------------------------------------------

def summary_nodes(report: Report, display: Display, links: SourceLinks | None = None,
                  source: str = "", difference: Finding | None = None, uid: str = "",
                  refusal: Finding | None = None) -> list[nodes.Node]:
    """The findings in words (the lines they name linked to the listing), what is live at the
    peak (folded, where the example asks: :attr:`Display.peak`), then the detail tables, collapsed.

    :param difference: in a comparison of variants, what this one stores that the others
        do not (:func:`sphinx_jaxhlo.render.findings.findings`).
    :param uid: names the timeline's picture on the page.
    :param refusal: why no chunking is suggested (:func:`~sphinx_jaxhlo.render.findings.chunk_refusal`),
        said as a memory finding where the page names a memory problem."""
    found = findings(report, display, difference)
    if refusal is not None and shows_refusal(found, display, asked=False):
        found.append(refusal)  # a memory finding: why the problem above has no chunking to answer it
    out: list[nodes.Node] = [finding_node(f, links, source) for f in found]
    if report.analysis_error:
        out.append(para(f"The fusion analysis failed: {report.analysis_error}", classes=["jaxhlo-bad"]))
    if display.peak:
        out += peak_nodes(report, uid, links, source)
    for build in rowmodel.detail_tables(display):
        model = build(report, display)
        if model.rows:  # a table with no row is not drawn
            out.append(collapsed_table(model, links))
    return out


def peak_nodes(report: Report, uid: str, links: SourceLinks | None = None, source: str = "") -> list[nodes.Node]:
    """What is live at the peak, folded: the sentence, the memory timeline (a picture in HTML)
    with its table, and the table of the buffers (:mod:`sphinx_jaxhlo.render.peak`); where there
    is no live list, why, in one line."""
    peak = report.live_at_peak
    if peak is None:
        why = report.buffer_assignment_note or "the report has no buffer assignment (made before it was collected)"
        return [para(f"No list of what is live at the peak: {why}.", classes=["jaxhlo-missing"])]
    box = jaxhlo_details(title=f"Live at the peak: {format_bytes(peak.bytes)} at step {peak.step} of {peak.steps}",
                         open=False, classes=["jaxhlo-peak"])
    box += para(*linked_text(peak_sentence(report), links, source), classes=["jaxhlo-peak-sentence"])
    title = "Memory in use over the program, the peak marked"  # the panel names the function and target
    graph = jaxhlo_graph(svg=timeline_svg(report, uid or "jaxhlo-timeline", title), title=title, legend="",
                         text_legend="The memory in use where the buffers drawn change.",
                         classes=["jaxhlo-timeline"])
    graph += table_node(timeline_table(report), links)
    box += graph
    box += table_node(live_table(report), links)
    return [box]


def mesh_nodes(report: Report, display: Display, links: SourceLinks | None = None) -> list[nodes.Node]:
    """A program on several devices: the mesh and the communication in words, how the
    arguments and results are split, and the collectives (collapsed tables)."""
    out: list[nodes.Node] = [finding_node(f) for f in mesh_findings(report, display)]
    for build in (rowmodel.sharding_table, rowmodel.collective_table):
        model = build(report, display)
        if model.rows:
            out.append(collapsed_table(model, links))
    return out


def graph_nodes(report: Report, uid: str, links: SourceLinks | None = None) -> list[nodes.Node]:
    """The computation graph: SVG in HTML, the same as text everywhere (collapsed in HTML)."""
    try:
        graph = build_graph(report)
    except GraphError as exc:
        return [para(f"No graph: {exc}.", classes=["jaxhlo-missing"])]
    subs = graph.subgraphs
    if not subs:
        return [para("No graph: the module has no entry computation.", classes=["jaxhlo-missing"])]
    title = f"Graph of the entry computation {subs[0].computation}"
    if len(subs) > 1:
        title += " and of the computations it runs"
    legend = ("Boxes are the top-level fusions and instructions, from the arguments (top) to the result "
              "(bottom); arrows are the values they read, with shape and size.")
    heavy = [e for e in graph.edges if e.heavy]
    if heavy:
        big = max(e.bytes for e in heavy)
        legend += (" Thick red: materialized buffers of 1 GB or more." if big >= HEAVY_BYTES
                   else " Thick red: the largest materialized buffer.")
    if any(e.materialized and not e.heavy for e in graph.edges):
        legend += " Solid: other materialized buffers."
    if links is not None and any(links.covers(n.source_lines) for n in graph.nodes):
        legend += " A box links to its source lines."
    if graph.omitted:
        legend += f" {graph.omitted} more instructions are not drawn (see the fusions table)."
    svg = graph_svg(graph, uid, links.prefix if links else "", links.count if links else 0, title=title)
    text_legend = ("Each computation lists its nodes (parameters, top-level fusions and instructions, result) "
                   "and its edges: the values read, with shape and size; materialized buffers are marked.")
    node = jaxhlo_graph(svg=svg, title=title, legend=legend, text_legend=text_legend)
    details = jaxhlo_details(title="The graph as text", open=False)
    details += literal_block(graph_text(graph), "text")
    node += details
    return [node]


def stablehlo_detail(text: str, target_title: str) -> str:
    """Which StableHLO is shown: the module lowered for the target from the example's
    argument specs, whose arguments carry the target's device placement; in it JAX
    writes ``sdy`` (Shardy) sharding annotations that ``jax.jit(f).lower(x).as_text()``
    of an array on a user's own default device does not print."""
    if "sdy." in text:
        return f"lowered for {target_title}, with its sdy sharding annotations; "
    return f"lowered for {target_title}; "


def text_nodes(title: str, text: str, language: str, opened: bool, detail: str = "") -> list[nodes.Node]:
    """A module text (HLO, StableHLO, jaxpr): in HTML pages a file of its own, loaded when opened.

    :param detail: what the title's brackets say before the line count (which text it is).
    """
    lines = len(text.splitlines())
    return [jaxhlo_text(title=f"{title} ({detail}{lines:,} lines)", text=text, language=language, open=opened)]


def suggestion_nodes(suggestion: str, shown: dict[str, str] | None = None, where: str = "") -> list[nodes.Node]:
    """A chunking suggestion: its words, then its call and code to copy.

    :param shown: the code already shown in the example, and where (its target's panel): code the
        same as one shown is named, not repeated (a chunking is one code for every target).
    :param where: this suggestion's place, for a later one with the same code.
    """
    words, call, *code = suggestion.split("\n")
    text = "\n".join([call, *([""] if code else []), *code])
    found = para(words, classes=["jaxhlo-callout", "jaxhlo-chunk-suggestion"])
    if shown is not None and text in shown:
        return [found, para(f"Its code is the one suggested for {shown[text]}.", classes=["jaxhlo-suggested-same"])]
    if shown is not None:
        shown[text] = where
    suggested = literal_block(text, "python")
    suggested["classes"].append("jaxhlo-suggested-code")  # wraps, as the source does: a short call to copy
    return [found, suggested]


def result_nodes(view: ExampleView, result: Result, parts: Sequence[str],
                 difference: Finding | None = None, shown: dict[str, str] | None = None) -> list[nodes.Node]:
    """The per-target parts of one (function, target), in the order of ``parts``;
    ``difference``: what it stores that the other variants do not (:func:`summary_nodes`);
    ``shown``: the chunking code the example's earlier panels showed (:func:`suggestion_nodes`)."""
    out: list[nodes.Node] = []
    if result.missing:
        return [para(f"Not compiled for {result.target_title}: {result.missing}", classes=["jaxhlo-missing"])]
    if result.failure:
        return [para(f"Not compiled for {result.target_title}: {result.failure.message}", classes=["jaxhlo-bad"])]
    report = result.report
    assert report is not None
    where = f"{result.function} on {result.target_title}"
    uid = f"{example_id(view)}-{hashlib.sha1(f'{result.function}@{result.target}'.encode()).hexdigest()[:6]}"
    if report.error:
        out.append(para(nodes.strong(text=error_title(result)), classes=["jaxhlo-callout", "jaxhlo-oom"]))
        out.append(literal_block(report.error.message, "text"))
        if report.live_at_peak is not None and view.display.peak:  # what the refused program needs
            out += peak_nodes(report, f"{uid}-t", source_links(view), view.source)
        if "\n" in report.chunk_suggestion:  # a chunking that compiles where this did not
            out += suggestion_nodes(report.chunk_suggestion, shown, where)
        return out
    links = source_links(view)
    if report.chunk_check:
        out.append(para(f"Chunked rewrite proved on the jaxpr and {report.chunk_check}.",
                        classes=["jaxhlo-chunk-check"]))
    # No suggestion, and why: in full above the parts where :chunk: was asked, else briefly among
    # the summary's memory findings (where it names a problem a chunking would have answered).
    refusal = chunk_refusal(report, view.file_path, brief=not view.chunking)
    if refusal is not None:
        if view.chunking:
            found = finding_node(refusal, links, view.source)
            found["classes"].append("jaxhlo-chunk-refusal")
            out.append(found)
    elif report.chunk_suggestion:
        out += suggestion_nodes(report.chunk_suggestion, shown, where)
    for part in parts:
        if part == "summary":
            out += summary_nodes(report, view.display, links, view.source, difference, uid=f"{uid}-t",
                                 refusal=None if view.chunking else refusal)
            out += mesh_nodes(report, view.display, links)
        elif part == "graph":
            out += graph_nodes(report, f"{example_id(view)}-g{uid.rsplit('-', 1)[-1]}", links)
        elif part == "memory":
            out.append(collapsed_table(rowmodel.memory_table(report, result.measured), None))
        elif part == "cost":
            out.append(collapsed_table(rowmodel.cost_table(report), None))
        elif part == "hlo":
            out += text_nodes("Optimized HLO", report.hlo, view.hlo_language, not view.hlo_collapsed)
        elif part == "stablehlo" and report.stablehlo:
            language = "stablehlo" if view.hlo_language == "hlo" else "text"
            out += text_nodes("StableHLO", report.stablehlo, language, False,
                              detail=stablehlo_detail(report.stablehlo, result.target_title))
        elif part == "jaxpr" and report.jaxpr:
            out += text_nodes("jaxpr", report.jaxpr, "text", False)
    return out
