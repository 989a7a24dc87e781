"""Reports -> docutils nodes for one example.

Pure node building: no Sphinx application, no jax.  The tables and findings
come from :mod:`sphinx_jaxhlo.render.rows` (the model the text output uses
too); every text from the example or the compiler goes into text nodes or
node attributes that the writers escape.

What an example shows, in order: its caption, the compiled signature (the
functions with their argument specs and static values, and the targets), then
the parts of ``:show:`` in the order given.  ``source`` is the listing;
``summary`` puts the side-by-side table (and, for several functions, the
variants table and chart) where it stands, and the findings and the collapsed
detail tables in each target's panel; the other parts (``graph``, ``memory``,
``cost``, ``hlo``, ``stablehlo``, ``jaxpr``) are per target.  The per-target
parts share one set of target tabs, placed where the first of them is named.
The checked expectations follow the side-by-side table (or the signature,
without ``summary``).
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from docutils import nodes
from sphinx import addnodes

from sphinx_jaxhlo.core.report import Reason, Report
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.core.specs import ArgSpecs, format_tree
from sphinx_jaxhlo.core.targets import compiler_packages
from sphinx_jaxhlo.hlo.reasons import ALTERNATIVE_TITLES, reason_sentence
from sphinx_jaxhlo.render import rows as rowmodel
from sphinx_jaxhlo.render.graph import HEAVY_BYTES, GraphError, build_graph, graph_svg, graph_text
from sphinx_jaxhlo.render.nodes import (
    jaxhlo_bars,
    jaxhlo_details,
    jaxhlo_graph,
    jaxhlo_lineref,
    jaxhlo_source,
    jaxhlo_tab,
    jaxhlo_table,
    jaxhlo_tabs,
    jaxhlo_text,
)
from sphinx_jaxhlo.render.rows import (
    Display,
    Finding,
    Table,
    compile_error_title,
    reduction_verdict,
    short_status,
)

__all__ = [
    "ExampleView",
    "compile_error_title",
    "reduction_verdict",
    "render_example",
    "short_status",
    "table",
]

#: The parts shown per target (in the tabs); ``source`` is shown once.
PER_TARGET = ("summary", "graph", "memory", "cost", "hlo", "stablehlo", "jaxpr")


@dataclass
class ExampleView:
    """What the renderer needs to know about the example itself."""

    source: str
    show: Sequence[str]
    hlo_collapsed: bool = True
    hlo_language: str = "hlo"
    file_path: str = ""
    key: str = ""
    #: The argument specs (the ``:args:`` option, parsed) and static values, for the signature.
    specs: ArgSpecs | None = None
    static: Sequence[tuple[str, str]] = ()
    #: The arguments as text, for the signature when ``specs`` is not known (the API).
    args_text: str = ""
    display: Display = field(default_factory=Display)

    def cache_parts(self) -> list[object]:
        """Everything of the view the rendering depends on, for cache keys."""
        return [self.source, list(self.show), self.hlo_collapsed, self.hlo_language, self.file_path, self.key,
                str(self.specs or ""), [list(p) for p in self.static], self.args_text, self.display.key()]


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


def unused_lines(source: str, functions: Sequence[str]) -> list[int]:
    """The lines of a file example that the compiled functions do not use: the top-level
    functions and classes that none of them names (directly or through another one),
    with the blank lines after them.  Nothing when the file does not parse or no
    function is named.

    :param functions: the compiled functions' names (``(default function)``: none named).
    """
    named = [f for f in functions if f and f != "(default function)"]
    if not named:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    needed: set[str] = set()
    todo = [f for f in named if f in defs]
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        todo += [n.id for n in ast.walk(defs[name]) if isinstance(n, ast.Name) and n.id in defs]
    total = len(_source_text(source).split("\n"))
    starts = [min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", []))]) for n in tree.body]
    hidden: list[int] = []
    for i, stmt in enumerate(tree.body):
        if stmt in defs.values() and getattr(stmt, "name", "") not in needed:
            end = starts[i + 1] - 1 if i + 1 < len(tree.body) else total
            hidden += range(starts[i], end + 1)
    return hidden


# -- small builders ---------------------------------------------------------

def para(*parts: str | nodes.Node, classes: Sequence[str] = ()) -> nodes.paragraph:
    p = nodes.paragraph(classes=list(classes))
    for part in parts:
        p += nodes.Text(part) if isinstance(part, str) else part
    return p


def code(text: str) -> nodes.literal:
    return nodes.literal(text, text)


def table(header: Sequence[str], rows: Sequence[Sequence[str | nodes.Node]], classes: Sequence[str] = (),
          title: str = "") -> nodes.Element:
    """A docutils table (what builders other than HTML show of a :class:`jaxhlo_table`)."""
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
    for cells in rows:
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


def plain_table(model: Table, titled: bool = True) -> nodes.Element:
    """A :class:`~sphinx_jaxhlo.render.rows.Table` as docutils nodes (code cells as literals)."""
    rows = [[code(c.text) if c.code else c.text for c in r.cells] for r in model.rows]
    out = table(model.header, rows, [f"jaxhlo-{model.key}"], title=model.title if titled else "")
    extra = [t for t in (model.more_text, model.note) if t]
    if not extra:
        return out
    box = out if isinstance(out, nodes.container) else nodes.container("", out, classes=["jaxhlo-table-box"])
    box += para(" ".join(extra), classes=["jaxhlo-more"])
    return box


def table_node(model: Table, links: SourceLinks | None, titled: bool = True) -> jaxhlo_table:
    """A table of the row model; in HTML, rows traced from shown source lines link to them."""
    return jaxhlo_table(table=model, prefix=links.prefix if links else "", count=links.count if links else 0,
                        titled=titled)


def collapsed_table(model: Table, links: SourceLinks | None) -> nodes.Node:
    """A detail table in a collapsed block titled with its count (``Fusions (10 of 72)``)."""
    details = jaxhlo_details(title=model.summary, open=False, classes=[f"jaxhlo-{model.key}-box"])
    details += table_node(model, links, titled=False)
    return details


def literal_block(text: str, language: str, linenos: bool = False) -> nodes.literal_block:
    block = nodes.literal_block(text, text, language=language)
    if linenos:
        block["linenos"] = True
    return block


# -- verdicts ----------------------------------------------------------------

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
    code_lines = _source_text(source).split("\n")
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
    if finding.reason is None:
        return found
    box = nodes.container(classes=["jaxhlo-finding"])
    box += found
    box += reason_nodes(finding.reason)
    return box


def alternative_ref(label: str) -> addnodes.pending_xref:
    """A link to a section of the guide, by its label: resolved by Sphinx (or by
    intersphinx from another site); where neither knows it, the title stays as text."""
    title = ALTERNATIVE_TITLES.get(label, label)
    ref = addnodes.pending_xref("", refdomain="std", reftype="ref", reftarget=label, refexplicit=True,
                                refwarn=False, classes=["jaxhlo-alternative"])
    ref += nodes.inline(title, title)
    return ref


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


def signature_node(view: ExampleView, functions: Sequence[str], targets: Sequence[tuple[str, str]]) -> nodes.Element:
    """``Compiled power_sum(x: f32[1024,256], n=7) for CPU, H100 and TPU v5e, ...``;
    with several functions, one signature per line."""
    specs = view.specs or ArgSpecs()
    args = [format_tree(a) for a in specs.args]
    kwargs = [(k, format_tree(v)) for k, v in specs.kwargs]
    signatures = []
    for fn in functions:
        name = fn if fn != "(default function)" else (rowmodel.default_function(view.source) or "(function)")
        if view.specs is None:
            signatures.append(f"{name}({view.args_text})" if view.args_text else name)
        else:
            signatures.append(rowmodel.signature(name, args, kwargs, list(view.static), view.source))
    titles = [title for _, title in targets]
    where = titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]
    if len(signatures) == 1:
        return para("Compiled ", code(signatures[0]), f" for {where}, from the shapes alone: nothing ran.",
                    classes=["jaxhlo-signature"])
    box = nodes.container(classes=["jaxhlo-signature"])
    box += para(f"Compiled for {where}, from the shapes alone (nothing ran):")
    items = nodes.bullet_list()
    for text in signatures:
        items += nodes.list_item("", para(code(text)))
    box += items
    return box


# -- parts -------------------------------------------------------------------

def summary_nodes(report: Report, display: Display, links: SourceLinks | None = None,
                  source: str = "") -> list[nodes.Node]:
    """The findings in words (the lines they name linked to the listing), then the
    detail tables, collapsed."""
    out: list[nodes.Node] = [finding_node(f, links, source) for f in rowmodel.findings(report, display)]
    if report.analysis_error:
        out.append(para(f"The fusion analysis failed: {report.analysis_error}", classes=["jaxhlo-bad"]))
    for build in (rowmodel.fusion_table, rowmodel.buffer_table, rowmodel.reduction_table):
        model = build(report, display)
        if model.rows:  # a table with no row is not drawn
            out.append(collapsed_table(model, links))
    return out


def mesh_nodes(report: Report, display: Display, links: SourceLinks | None = None) -> list[nodes.Node]:
    """A program on several devices: the mesh and the communication in words, how the
    arguments and results are split, and the collectives (collapsed tables)."""
    out: list[nodes.Node] = [finding_node(f) for f in rowmodel.mesh_findings(report, display)]
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


def result_nodes(view: ExampleView, result: Result, parts: Sequence[str]) -> list[nodes.Node]:
    """The per-target parts of one (function, target), in the order of ``parts``."""
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
    links = source_links(view)
    if report.chunk_check:
        out.append(para(f"Chunked rewrite proved on the jaxpr and {report.chunk_check}.",
                        classes=["jaxhlo-chunk-check"]))
    if report.chunk_suggestion:
        words, call, *code = report.chunk_suggestion.split("\n")
        out.append(para(words, classes=["jaxhlo-callout", "jaxhlo-chunk-suggestion"]))
        out.append(literal_block("\n".join([call, *([""] if code else []), *code]), "python"))
    for part in parts:
        if part == "summary":
            out += summary_nodes(report, view.display, links, view.source)
            out += mesh_nodes(report, view.display, links)
        elif part == "graph":
            uid = f"{example_id(view)}-g{hashlib.sha1(f'{result.function}@{result.target}'.encode()).hexdigest()[:6]}"
            out += graph_nodes(report, uid, links)
        elif part == "memory":
            out.append(collapsed_table(rowmodel.memory_table(report), None))
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


def bars_node(functions: Sequence[str], targets: Sequence[tuple[str, str]], by_key: dict[tuple[str, str], Result],
              display: Display) -> jaxhlo_bars | None:
    """What the variants table shows of each (function, target), temp or a TPU's peak
    (:func:`rows.variant_measure`), each bar labelled with the measure where they differ
    and with its ratio to the smallest of the same measure."""
    values: list[tuple[str, str, float]] = []
    for fn in functions:
        for target, title in targets:
            r = by_key.get((fn, target))
            if r is not None and r.report is not None and not r.report.error:
                measure, value = rowmodel.variant_measure(target, r.report)
                values.append((f"{fn} · {title}", measure, float(value)))
    if not any(v > 0 for _, _, v in values):
        return None
    mixed = len({m for _, m, _ in values}) > 1
    smallest = {m: min((v for _, k, v in values if k == m and v > 0), default=0.0) for _, m, _ in values}
    scale = rowmodel.chart_scale([v for _, _, v in values], display.chart_scale)
    bars = [(f"{label} ({measure})" if mixed else label, value, rowmodel.bar_text(value, smallest[measure], measure))
            for label, measure, value in values]
    title = rowmodel.variants_title([m for _, m, _ in values])
    return jaxhlo_bars(title=f"{title} by variant and target", bars=bars, scale=scale)


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


def footer(results: Sequence[Result]) -> list[nodes.Node]:
    """Which targets were compiled for, with the versions of what compiled them."""
    versions: dict[str, str] = {}
    targets: list[str] = []
    for r in results:
        if r.report is None:
            continue
        packages = compiler_packages(r.target)
        for name, version in r.report.versions.items():
            if name in ("jax", "jaxlib") or name in packages:
                versions[name] = version
        if r.target_title not in targets:
            targets.append(r.target_title)
    if not targets:
        return []
    text = ", ".join(f"{k} {v}" for k, v in sorted(versions.items()))
    return [para(f"Compiled for {', '.join(targets)}" + (f" with {text}" if text else "") + ".",
                 classes=["jaxhlo-footer"])]


def _overview(view: ExampleView, functions: Sequence[str], targets: Sequence[tuple[str, str]],
              by_key: dict[tuple[str, str], Result]) -> list[nodes.Node]:
    """The side-by-side table (one function) or the variants table and chart (several)."""
    links = source_links(view)
    if len(functions) > 1:
        out: list[nodes.Node] = [table_node(rowmodel.variants_table(functions, targets, by_key, view.display), links)]
        bars = bars_node(functions, targets, by_key, view.display)
        if bars is not None:
            out.append(bars)
        return out
    columns = [by_key[(functions[0], t)] for t, _ in targets if (functions[0], t) in by_key]
    if not any(r.report is not None and not r.report.error for r in columns):
        return []  # nothing compiled: each target says why below
    model = rowmodel.comparison_table(columns, view.display)
    if len(columns) == 1:
        model = Table(model.key, "Summary", model.header, model.rows, model.total)
    return [table_node(model, links)]


def _per_target(view: ExampleView, functions: Sequence[str], targets: Sequence[tuple[str, str]],
                by_key: dict[tuple[str, str], Result], parts: Sequence[str]) -> list[nodes.Node]:
    """The per-target parts: target tabs, or inline for one target."""
    if len(targets) > 1:
        tabset = example_id(view).removeprefix("jaxhlo-")
        tabs = jaxhlo_tabs(group="target", tabset_id=f"jaxhlo-{tabset}")
        for target, title in targets:
            tab = jaxhlo_tab(title=title, key=target)
            for fn in functions:
                r = by_key.get((fn, target))
                if r is None:
                    continue
                if len(functions) > 1:
                    tab += nodes.rubric(text=f"{fn} on {title}")
                tab += result_nodes(view, r, parts)
            tabs += tab
        return [tabs]
    out: list[nodes.Node] = []
    for fn in functions:
        r = by_key.get((fn, targets[0][0]))
        if r is None:
            continue
        if len(functions) > 1:
            out.append(nodes.rubric(text=f"{fn} on {targets[0][1]}"))
        out += result_nodes(view, r, parts)
    return out


def render_example(view: ExampleView, functions: Sequence[str], targets: Sequence[tuple[str, str]],
                   results: Sequence[Result]) -> list[nodes.Node]:
    """The full rendering of one example (the content of its :class:`jaxhlo_block`).

    :param functions: the compiled functions, in order.
    :param targets: (name, title) of each target, in order.
    :param results: one per (function, target).
    """
    by_key = {(r.function, r.target): r for r in results}
    show = list(dict.fromkeys(view.show))
    per_target = [p for p in show if p in PER_TARGET]
    block: list[nodes.Node] = [signature_node(view, functions, targets)]
    checks = expectation_nodes(results)
    if "summary" not in show:
        block += checks
    tabs_done = False
    for part in show:
        if part == "source":
            if view.file_path:
                block.append(para("From ", code(view.file_path), ":", classes=["jaxhlo-file"]))
            links = source_links(view)
            hidden = unused_lines(view.source, functions) if view.file_path else []
            source = jaxhlo_source(prefix=links.prefix if links else f"{example_id(view)}-L", language="python",
                                   hidden=hidden)
            source += literal_block(view.source, "python", linenos=True)
            block.append(source)
            continue
        if part == "summary":
            block += _overview(view, functions, targets, by_key)
            block += checks
        if part in PER_TARGET and not tabs_done:
            block += _per_target(view, functions, targets, by_key, per_target)
            tabs_done = True
    block += footer(results)
    # What the compiler printed (tables, HLO, graph) stays out of the search
    # index: readers search for prose and code, not for fusion names.
    for node in block:
        if isinstance(node, nodes.Element) and not isinstance(node, jaxhlo_source):
            node["classes"].append("no-search")
    return block

