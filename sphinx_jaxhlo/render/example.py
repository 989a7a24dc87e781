"""Reports -> docutils nodes for one example.

Pure node building: no Sphinx application, no jax.  Every text from the
example or the compiler goes into text nodes, so each writer escapes it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from docutils import nodes

from ..compiler import Failure
from ..expectations import Outcome
from ..report import Collective, CompileError, Reduction, Report
from ..sizes import format_bytes, format_exact
from .graph import HEAVY_BYTES, GraphError, build_graph, graph_svg, graph_text
from .nodes import (
    jaxhlo_bars,
    jaxhlo_details,
    jaxhlo_graph,
    jaxhlo_lines,
    jaxhlo_row,
    jaxhlo_source,
    jaxhlo_tab,
    jaxhlo_tabs,
)


@dataclass
class Result:
    """One (function, target) of an example, compiled or not."""

    function: str
    target: str
    target_title: str
    report: Report | None = None
    failure: Failure | None = None
    cached: bool = False
    seconds: float = 0.0
    outcomes: list[Outcome] = field(default_factory=list)
    #: The compiler for this target is not installed.
    missing: str | None = None
    #: The cache key of the report (:meth:`CompileRequest.cache_key`), when there is one.
    report_key: str = ""


@dataclass
class ExampleView:
    """What the renderer needs to know about the example itself."""

    source: str
    show: Sequence[str]
    hlo_collapsed: bool = True
    hlo_language: str = "hlo"
    file_path: str = ""
    key: str = ""


@dataclass(frozen=True)
class SourceLinks:
    """Where the example's lines are on the page: ids ``<prefix>1`` to ``<prefix><count>``."""

    prefix: str
    count: int

    def covers(self, lines: Sequence[int]) -> bool:
        return bool(lines) and all(1 <= n <= self.count for n in lines)


def example_id(view: ExampleView) -> str:
    """A page-unique id base for one example, from its key."""
    return "jaxhlo-" + hashlib.sha1(view.key.encode()).hexdigest()[:10]


def _source_text(source: str) -> str:
    return source[:-1] if source.endswith("\n") else source


def source_links(view: ExampleView) -> SourceLinks | None:
    """The line anchors of the example's source block, when the page shows it."""
    if "source" not in view.show or not view.source.strip():
        return None
    return SourceLinks(f"{example_id(view)}-L", len(_source_text(view.source).split("\n")))


# -- small builders ---------------------------------------------------------

def para(*parts: str | nodes.Node, classes: Sequence[str] = ()) -> nodes.paragraph:
    p = nodes.paragraph(classes=list(classes))
    for part in parts:
        p += nodes.Text(part) if isinstance(part, str) else part
    return p


def code(text: str) -> nodes.literal:
    return nodes.literal(text, text)


def table(header: Sequence[str], rows: Sequence[Sequence[str | nodes.Node]], classes: Sequence[str] = (),
          title: str = "", row_lines: Sequence[Sequence[int]] | None = None,
          links: SourceLinks | None = None) -> nodes.Element:
    """A table; with ``row_lines`` (the source lines of each row) and ``links``,
    the rows traced from shown lines highlight them."""
    tab = nodes.table(classes=["jaxhlo-table", *classes])
    group = nodes.tgroup(cols=len(header))
    tab += group
    for _ in header:
        group += nodes.colspec(colwidth=10)
    thead = nodes.thead()
    group += thead
    row = nodes.row()
    for h in header:
        row += nodes.entry("", nodes.paragraph(text=h))
    thead += row
    tbody = nodes.tbody()
    group += tbody
    for i, cells in enumerate(rows):
        lines = row_lines[i] if row_lines is not None and i < len(row_lines) else ()
        if links is not None and links.covers(lines):
            row = jaxhlo_row(lines=list(lines), prefix=links.prefix)
        else:
            row = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            if isinstance(cell, nodes.paragraph):
                entry += cell
            elif isinstance(cell, nodes.Node):
                entry += nodes.paragraph("", "", cell)
            else:
                entry += nodes.paragraph(text=cell)
            row += entry
        tbody += row
    if title:
        return nodes.container("", nodes.rubric(text=title), tab, classes=["jaxhlo-table-box"])
    return tab


def lines_text(lines: Sequence[int]) -> str:
    if not lines:
        return ""
    return ("line " if len(lines) == 1 else "lines ") + ", ".join(map(str, lines))


def source_cell(lines: Sequence[int], links: SourceLinks | None) -> str | nodes.Node:
    """``line 4``: links to the source block's lines when it is on the page."""
    text = lines_text(lines)
    if links is None or not links.covers(lines):
        return text
    return jaxhlo_lines(text, text, lines=list(lines), prefix=links.prefix)


def literal_block(text: str, language: str, linenos: bool = False) -> nodes.literal_block:
    block = nodes.literal_block(text, text, language=language)
    if linenos:
        block["linenos"] = True
    return block


# -- verdicts ----------------------------------------------------------------

def reduction_verdict(report: Report) -> str:
    if report.error:
        return "—"
    fused = report.all_reductions_fused
    if fused is None:
        return "no reduction"
    n = len(report.verdict_reductions)
    unfused = sum(not r.fused for r in report.verdict_reductions)
    if fused:
        return "fused" if n == 1 else f"all {n} fused"
    if unfused == n:
        return "unfused" if n == 1 else f"all {n} unfused"
    return f"{unfused} of {n} unfused"


#: How a reduction the compiler made is named where a verdict would be.
ORIGIN_WORDS = {
    "second-stage": "second stage",
    "dot": "part of a dot (split-K)",
    "scan": "prefix-scan stage",
    "compiler": "made by the compiler",
}


def verdict_word(reduction: Reduction) -> str:
    """``fused``/``unfused`` for the program's reductions; what made it, for the compiler's."""
    if reduction.is_users:
        return "fused" if reduction.fused else "unfused"
    word = ORIGIN_WORDS.get(reduction.origin, reduction.origin)
    if reduction.origin == "dot" and reduction.input_materialized is None:
        word = "part of a dot"
    if reduction.origin == "compiler" and reduction.op:
        word = f"made by the compiler for {reduction.op}"
    return f"{word} (no verdict)"


def compile_error_title(err: CompileError, where: str) -> str:
    """``does not fit on TPU v5e: needs 18.65 GiB of temporaries, 15.75 GiB available``."""
    if err.status == "RESOURCE_EXHAUSTED":
        if err.needed_bytes and err.available_bytes:
            # XLA writes these sizes in binary units ("18.65G"); so do we, so they match its message.
            return (f"does not fit on {where}: needs {err.needed_bytes / 2**30:.2f} GiB "
                    f"of temporaries, {err.available_bytes / 2**30:.2f} GiB available")
        return f"does not fit on {where}: compilation ran out of memory"
    return f"compilation failed on {where}: {err.status}"


def error_title(result: Result) -> str:
    assert result.report is not None and result.report.error is not None
    return compile_error_title(result.report.error, result.target_title)


def short_status(result: Result) -> str:
    if result.missing:
        return "compiler not installed"
    if result.failure:
        return f"failed ({result.failure.kind})"
    assert result.report is not None
    if result.report.error:
        return "does not fit" if result.report.error.status == "RESOURCE_EXHAUSTED" else result.report.error.status
    return format_bytes(result.report.memory.temp_bytes)


def callouts(report: Report) -> list[nodes.Node]:
    """The findings in words a reader understands."""
    out: list[nodes.Node] = []
    by_name = {m.name: m for m in report.materialized}
    for red in report.verdict_reductions:  # the program's own: the compiler's get no verdict
        if red.fused:
            continue
        buf = by_name.get(red.input_materialized or "")
        what = f"the {format_bytes(red.input_bytes)} {red.input_shape}"
        origin = ""
        if buf is not None:
            what = f"the {format_bytes(buf.bytes)} result"
            if buf.producer_op:
                origin = f" of {buf.producer_op}"
            if buf.source_lines:
                origin += f" on {lines_text(buf.source_lines)}"
        else:
            origin = f" ({red.input_materialized})"
        red_where = f" on {lines_text(red.source_lines)}" if red.source_lines else ""
        out.append(para(nodes.strong(text="Unfused reduction: "),
                        f"{what}{origin} is stored in memory before the reduction{red_where} "
                        f"({red.name}, in {red.fusion}) reads it.", classes=["jaxhlo-callout", "jaxhlo-bad"]))
    fused = [r for r in report.verdict_reductions if r.fused]
    if fused and len(fused) == len(report.verdict_reductions):
        names = ", ".join(sorted({r.fusion for r in fused}))
        out.append(para(nodes.strong(text="Fused: "),
                        f"every reduction computes its data inside its fusion ({names}); "
                        "the values it reduces never go to memory.", classes=["jaxhlo-callout", "jaxhlo-good"]))
    biggest = report.largest_materialized
    if biggest is not None and not any(not r.fused for r in report.verdict_reductions):
        origin = f" ({biggest.producer_op})" if biggest.producer_op else ""
        out.append(para(f"Largest materialized buffer: {biggest.shape}, {format_bytes(biggest.bytes)}, "
                        f"made by {biggest.producer}{origin}.", classes=["jaxhlo-callout"]))
    elif biggest is None and not report.error:
        out.append(para("No buffer is materialized between instructions: the computation is one kernel "
                        "from the arguments to the result.", classes=["jaxhlo-callout"]))
    return out


# -- parts -------------------------------------------------------------------

def summary_nodes(report: Report, links: SourceLinks | None = None) -> list[nodes.Node]:
    out: list[nodes.Node] = list(callouts(report))
    if report.analysis_error:
        out.append(para(f"The fusion analysis failed: {report.analysis_error}", classes=["jaxhlo-bad"]))
    if report.fusions:
        rows = [[code(f.name), f.kind + (f" ({f.custom_kind})" if f.custom_kind else ""),
                 " + ".join(f.ops) or "—", code(f.shape), format_bytes(f.bytes), source_cell(f.source_lines, links)]
                for f in report.fusions]
        out.append(table(["fusion", "kind", "ops", "shape", "size", "source"], rows, ["jaxhlo-fusions"],
                         title="Fusions", row_lines=[f.source_lines for f in report.fusions], links=links))
    if report.materialized:
        rows = [[code(m.name), code(m.shape), format_bytes(m.bytes),
                 m.producer + (f" ({m.producer_op})" if m.producer_op else ""), ", ".join(m.consumers),
                 source_cell(m.source_lines, links)] for m in report.materialized]
        out.append(table(["buffer", "shape", "size", "producer", "consumers", "source"], rows,
                         ["jaxhlo-materialized"], title="Materialized buffers",
                         row_lines=[m.source_lines for m in report.materialized], links=links))
    if report.reductions:
        rows = [[code(r.name), code(r.fusion), " + ".join(r.fused_with) or "—",
                 (f"{r.input_materialized} ({format_bytes(r.input_bytes)})" if r.input_materialized
                  else f"partial sums in {r.partial_of}" if r.partial_of else "computed in the fusion"),
                 verdict_word(r),
                 source_cell(r.source_lines, links)] for r in report.reductions]
        out.append(table(["reduction", "in", "fused with", "reads", "verdict", "source"], rows,
                         ["jaxhlo-reductions"], title="Reductions",
                         row_lines=[r.source_lines for r in report.reductions], links=links))
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


def memory_nodes(report: Report) -> list[nodes.Node]:
    if report.devices > 1:
        return mesh_memory_nodes(report)
    m = report.memory
    peak_label = "peak (estimate: arguments + output + temp - alias)" if m.peak_is_estimate else "peak"
    rows = [[label, format_bytes(value), format_exact(value)] for label, value in (
        ("temp", m.temp_bytes), ("arguments", m.argument_bytes), ("output", m.output_bytes),
        ("alias", m.alias_bytes), ("generated code", m.generated_code_bytes), (peak_label, m.peak_bytes))]
    return [table(["memory", "size", "exact"], rows, ["jaxhlo-memory"], title="Memory")]


def cost_nodes(report: Report) -> list[nodes.Node]:
    c = report.cost

    def fmt(v: float | None) -> str:
        return "not reported" if v is None else f"{v:,.0f}"

    rows = [["flops", fmt(c.flops)], ["transcendentals", fmt(c.transcendentals)],
            ["bytes accessed", fmt(c.bytes_accessed)]]
    return [table(["cost", "value"], rows, ["jaxhlo-cost"], title="Cost")]


def text_nodes(title: str, text: str, language: str, opened: bool) -> list[nodes.Node]:
    details = jaxhlo_details(title=f"{title} ({len(text.splitlines())} lines)", open=opened)
    details += literal_block(text, language)
    return [details]


def result_nodes(view: ExampleView, result: Result) -> list[nodes.Node]:
    """Everything shown for one (function, target)."""
    out: list[nodes.Node] = []
    if result.missing:
        return [para(f"Not compiled for {result.target_title}: {result.missing}", classes=["jaxhlo-missing"])]
    if result.failure:
        return [para(f"Not compiled for {result.target_title}: {result.failure.message}", classes=["jaxhlo-bad"])]
    report = result.report
    assert report is not None
    if report.error:
        out.append(para(nodes.strong(text=error_title(result)), classes=["jaxhlo-callout", "jaxhlo-oom"]))
        out.append(literal_block(report.error.message, "text"))
        return out
    show = view.show
    links = source_links(view)
    if "summary" in show:
        out += summary_nodes(report, links)
        out += mesh_nodes(report, links)
    if "graph" in show:
        uid = f"{example_id(view)}-g{hashlib.sha1(f'{result.function}@{result.target}'.encode()).hexdigest()[:6]}"
        out += graph_nodes(report, uid, links)
    if "memory" in show:
        out += memory_nodes(report)
    if "cost" in show:
        out += cost_nodes(report)
    if "hlo" in show:
        out += text_nodes("Optimized HLO", report.hlo, view.hlo_language, not view.hlo_collapsed)
    if "stablehlo" in show and report.stablehlo:
        out += text_nodes("StableHLO", report.stablehlo, "text", False)
    if "jaxpr" in show and report.jaxpr:
        out += text_nodes("jaxpr", report.jaxpr, "text", False)
    return out


def comparison_table(results: Sequence[Result]) -> nodes.Element:
    """One column per target; rows for the figures that differ between backends."""
    header = ["", *[r.target_title for r in results]]

    def row(label: str, fn: object) -> list[str]:
        cells = [label]
        for r in results:
            if r.report is None or r.report.error:
                cells.append(short_status(r))
            else:
                cells.append(fn(r.report))  # type: ignore[operator]
        return cells

    def largest(rep: Report) -> str:
        b = rep.largest_materialized
        return "none" if b is None else f"{b.shape} ({format_bytes(b.bytes)})"

    rows = [row("temp memory", lambda rep: format_bytes(rep.memory.temp_bytes)),
            row("peak" , lambda rep: format_bytes(rep.memory.peak_bytes)
                + (" (est.)" if rep.memory.peak_is_estimate else "")),
            row("largest materialized", largest),
            row("reductions", reduction_verdict),
            row("fusions", lambda rep: str(sum(1 for f in rep.fusions
                                               if f.kind in ("Loop", "Input", "Output", "Custom"))))]
    if any(r.report is not None and has_communication(r.report) for r in results):
        rows.append(row("communication", communication_cell))
    return table(header, rows, ["jaxhlo-compare"], title="Side by side")


def variants_table(functions: Sequence[str], targets: Sequence[tuple[str, str]],
                   results: dict[tuple[str, str], Result]) -> nodes.Element:
    header = ["function", *[title for _, title in targets]]
    rows: list[list[str | nodes.Node]] = []
    for fn in functions:
        cells: list[str | nodes.Node] = [code(fn)]
        for target, _ in targets:
            r = results.get((fn, target))
            if r is None:
                cells.append("—")
            elif r.report is None or r.report.error:
                cells.append(short_status(r))
            else:
                cells.append(f"{format_bytes(r.report.memory.temp_bytes)}, {reduction_verdict(r.report)}")
        rows.append(cells)
    return table(header, rows, ["jaxhlo-variants"], title="Temp memory and reductions, by variant and target")


def expectation_nodes(results: Sequence[Result]) -> list[nodes.Node]:
    outcomes = [o for r in results for o in r.outcomes]
    if not outcomes:
        return []
    items = nodes.bullet_list(classes=["jaxhlo-expectations"])
    for o in outcomes:
        mark = "✔ " if o.passed else "✘ "
        item = nodes.list_item(classes=["jaxhlo-pass" if o.passed else "jaxhlo-fail"])
        item += para(nodes.strong(text=mark), o.message)
        items += item
    failed = sum(not o.passed for o in outcomes)
    if not failed:
        # All hold: one line, the list folded away.
        details = jaxhlo_details(title=f"✔ All {len(outcomes)} stated expectations hold", open=False,
                                 classes=["jaxhlo-checks", "jaxhlo-checks-ok"])
        details += items
        return [details]
    # Failures first, open, marked.
    items.children.sort(key=lambda item: "jaxhlo-pass" in item["classes"])
    head = para(nodes.strong(text=f"✘ {failed} of {len(outcomes)} stated expectations failed"),
                classes=["jaxhlo-fail"])
    box: nodes.Element = nodes.container(classes=["jaxhlo-checks", "jaxhlo-checks-failed"])
    box += head
    box += items
    return [box]


#: Which packages compiled for which kind of target (jax and jaxlib do for all).
_COMPILER_PACKAGES = {"gpu": ("jax-cuda12-plugin", "jax-cuda12-pjrt"), "tpu": ("libtpu",)}


def footer(results: Sequence[Result]) -> list[nodes.Node]:
    """Which targets were compiled for, with the versions of what compiled them."""
    versions: dict[str, str] = {}
    targets: list[str] = []
    for r in results:
        if r.report is None:
            continue
        kind = r.target.partition(":")[0]
        for name, version in r.report.versions.items():
            if name in ("jax", "jaxlib") or name in _COMPILER_PACKAGES.get(kind, ()):
                versions[name] = version
        if r.target_title not in targets:
            targets.append(r.target_title)
    if not targets:
        return []
    text = ", ".join(f"{k} {v}" for k, v in sorted(versions.items()))
    return [para(f"Compiled for {', '.join(targets)}" + (f" with {text}" if text else "") + ".",
                 classes=["jaxhlo-footer"])]


def render_example(view: ExampleView, functions: Sequence[str], targets: Sequence[tuple[str, str]],
                   results: Sequence[Result]) -> list[nodes.Node]:
    """The full rendering of one example (the content of its :class:`jaxhlo_block`).

    :param functions: the compiled functions, in order.
    :param targets: (name, title) of each target, in order.
    :param results: one per (function, target).
    """
    block: list[nodes.Node] = []
    if "source" in view.show:
        if view.file_path:
            block.append(para("From ", code(view.file_path), ":", classes=["jaxhlo-file"]))
        links = source_links(view)
        source = jaxhlo_source(prefix=links.prefix if links else f"{example_id(view)}-L", language="python")
        source += literal_block(view.source, "python", linenos=True)
        block.append(source)
    by_key = {(r.function, r.target): r for r in results}
    tabset = example_id(view).removeprefix("jaxhlo-")
    if len(functions) > 1:
        block.append(variants_table(functions, targets, by_key))
        bars = [(f"{fn} · {title}", float(r.report.memory.temp_bytes or 0), short_status(r))
                for fn in functions for target, title in targets
                if (r := by_key.get((fn, target))) is not None and r.report is not None and not r.report.error]
        if any(value > 0 for _, value, _ in bars):
            block.append(jaxhlo_bars(title="Temp memory by variant and target", bars=bars))
    elif len(targets) > 1:
        block.append(comparison_table([by_key[(functions[0], t)] for t, _ in targets if (functions[0], t) in by_key]))
    block += expectation_nodes(results)
    if len(targets) > 1:
        tabs = jaxhlo_tabs(group="target", tabset_id=f"jaxhlo-{tabset}")
        for target, title in targets:
            tab = jaxhlo_tab(title=title, key=target)
            for fn in functions:
                r = by_key.get((fn, target))
                if r is None:
                    continue
                if len(functions) > 1:
                    tab += nodes.rubric(text=f"{fn} on {title}")
                tab += result_nodes(view, r)
            tabs += tab
        block.append(tabs)
    else:
        for fn in functions:
            r = by_key.get((fn, targets[0][0]))
            if r is None:
                continue
            if len(functions) > 1:
                block.append(nodes.rubric(text=f"{fn} on {targets[0][1]}"))
            block += result_nodes(view, r)
    block += footer(results)
    # What the compiler printed (tables, HLO, graph) stays out of the search
    # index: readers search for prose and code, not for fusion names.
    for node in block:
        if isinstance(node, nodes.Element) and not isinstance(node, jaxhlo_source):
            node["classes"].append("no-search")
    return block


# -- programs on several devices -------------------------------------------------------------

def has_communication(report: Report) -> bool:
    """Whether a report is of a program on several devices, or has collectives."""
    return report.devices > 1 or bool(report.collectives)


def communication_cell(report: Report) -> str:
    """``all-gather x2, 537 MB per device (data)``: the collectives by kind, for the side-by-side table."""
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


def collective_rows(report: Report) -> list[list[str]]:
    """One row per collective: name, kind, shape, bytes per device, mesh axes, overlap (text cells)."""
    return [[c.name, kind_text(c), c.shape, format_bytes(c.bytes), axes_text(c), overlap_text(c)]
            for c in report.collectives]


COLLECTIVE_HEADER = ["collective", "kind", "shape per device", "bytes per device", "mesh axes", "overlaps compute",
                     "source"]
SHARDING_HEADER = ["array", "shape", "split over the mesh", "per device"]


def mesh_sentence(report: Report) -> str:
    """``8 devices, mesh data=4, model=2: one program per device; memory figures are per device.``"""
    if report.devices > 1:
        mesh = f", mesh {report.mesh_text}" if report.mesh_text else ""
        return (f"Runs on {report.devices} devices{mesh}, one program per device: the memory figures and the "
                "shapes of fusions, buffers and collectives are one device's.")
    if report.mesh:
        return f"One device: the mesh's axes ({report.mesh_text}) have size 1 here."
    return ""


def mesh_nodes(report: Report, links: SourceLinks | None = None) -> list[nodes.Node]:
    """The mesh, how the arguments and results are split over it, and the collectives."""
    if not has_communication(report) and not report.mesh:
        return []
    out: list[nodes.Node] = [para(mesh_sentence(report), classes=["jaxhlo-callout", "jaxhlo-mesh"])]
    layouts = [("input", s) for s in report.input_shardings] + [("output", s) for s in report.output_shardings]
    if layouts:
        layout_rows = [[code(s.path), code(s.shape), s.spec, code(s.device_shape)] for _, s in layouts]
        out.append(table(SHARDING_HEADER, layout_rows, ["jaxhlo-shardings"],
                         title="Arguments and results over the mesh"))
    if report.collectives:
        total = sum(c.bytes for c in report.collectives)
        overlapped = sum(1 for c in report.collectives if c.overlapped)
        n = len(report.collectives)
        words = (f"{n} collective{'s' if n != 1 else ''}, {format_bytes(total)} per device in all"
                 + (f"; {overlapped} of them overlap{'s' if overlapped == 1 else ''} compute" if overlapped else "")
                 + ".")
        out.append(para(nodes.strong(text="Communication: "), words, classes=["jaxhlo-callout"]))
        rows: list[list[str | nodes.Node]] = [
            [code(cells[0]), *cells[1:2], code(cells[2]), *cells[3:], source_cell(c.source_lines, links)]
            for cells, c in zip(collective_rows(report), report.collectives, strict=True)]
        out.append(table(COLLECTIVE_HEADER, rows, ["jaxhlo-collectives"], title="Collectives",
                         row_lines=[c.source_lines for c in report.collectives], links=links))
    elif report.devices > 1:
        out.append(para(nodes.strong(text="No communication: "),
                        "every device computes its part from its own data; no collective was inserted.",
                        classes=["jaxhlo-callout", "jaxhlo-good"]))
    return out


def mesh_memory_nodes(report: Report) -> list[nodes.Node]:
    """The memory table of a program on several devices: per device, and for the whole mesh."""
    m = report.memory
    n = report.devices
    peak_label = "peak (estimate: arguments + output + temp - alias)" if m.peak_is_estimate else "peak"

    def whole(value: int | None) -> str:
        return "not reported" if value is None else format_bytes(value * n)

    rows = [[label, format_bytes(value), format_exact(value), whole(value)] for label, value in (
        ("temp", m.temp_bytes), ("arguments", m.argument_bytes), ("output", m.output_bytes),
        ("alias", m.alias_bytes), ("generated code", m.generated_code_bytes), (peak_label, m.peak_bytes))]
    return [table(["memory", "per device", "exact", f"all {n} devices"], rows, ["jaxhlo-memory"],
                  title="Memory")]
