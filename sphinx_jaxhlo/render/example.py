"""Reports -> docutils nodes for one example.

Pure node building: no Sphinx application, no jax.  The tables and findings
come from the row model (:mod:`sphinx_jaxhlo.render.rows`, the model the text
output uses too); every text from the example or the compiler goes into text
nodes or node attributes that the writers escape.

What an example shows, in order: its caption, the compiled signature (the
functions with their argument specs and static values, and the targets), then
the parts of ``:show:`` in the order given.  ``source`` is the listing;
``summary`` puts the side-by-side table (for several functions: what differs
between them, then the variants table and chart) where it stands, and the
findings and the collapsed detail tables in each target's panel; the other
parts (``graph``, ``memory``, ``cost``, ``hlo``, ``stablehlo``, ``jaxpr``) are
per target (:mod:`sphinx_jaxhlo.render.parts`).  The per-target parts share one set of
target tabs, placed where the first of them is named.  The checked
expectations follow the side-by-side table (or the signature, without
``summary``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from docutils import nodes

from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.core.specs import ArgSpecs, format_tree
from sphinx_jaxhlo.core.targets import compiler_packages
from sphinx_jaxhlo.render import overview
from sphinx_jaxhlo.render.blocks import code, literal_block, para, table_node
from sphinx_jaxhlo.render.chart import variants_chart
from sphinx_jaxhlo.render.differences import differences_table, kind_of, target_differences, variant_finding
from sphinx_jaxhlo.render.display import Display
from sphinx_jaxhlo.render.nodes import jaxhlo_bars, jaxhlo_details, jaxhlo_source, jaxhlo_tab, jaxhlo_tabs
from sphinx_jaxhlo.render.parts import result_nodes
from sphinx_jaxhlo.render.rows import Table
from sphinx_jaxhlo.render.signature import default_function, signature
from sphinx_jaxhlo.render.view import ExampleView, example_id, source_links, source_text, unused_lines

__all__ = ["render_example", "source_node", "source_nodes"]


#: The parts shown per target (in the tabs); ``source`` is shown once.
PER_TARGET = ("summary", "graph", "memory", "cost", "hlo", "stablehlo", "jaxpr")


def signature_node(view: ExampleView, functions: Sequence[str], targets: Sequence[tuple[str, str]]) -> nodes.Element:
    """``Compiled power_sum(x: f32[1024,256], n=7) for CPU, H100 and TPU v5e, ...``;
    with several functions, one signature per line."""
    specs = view.specs or ArgSpecs()
    args = [format_tree(a) for a in specs.args]
    kwargs = [(k, format_tree(v)) for k, v in specs.kwargs]
    signatures = []
    for fn in functions:
        name = fn if fn != "(default function)" else (default_function(view.source) or "(function)")
        if view.specs is None:
            signatures.append(f"{name}({view.args_text})" if view.args_text else name)
        else:
            signatures.append(signature(name, args, kwargs, list(view.static), view.source))
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


def bars_node(functions: Sequence[str], targets: Sequence[tuple[str, str]], by_key: dict[tuple[str, str], Result],
              display: Display) -> jaxhlo_bars | None:
    """The variants chart (:mod:`sphinx_jaxhlo.render.chart`): a panel per measure, the
    bars grouped by target."""
    model = variants_chart(functions, targets, by_key, display)
    return None if model is None else jaxhlo_bars(chart=model)


def expectation_nodes(results: Sequence[Result]) -> list[nodes.Node]:
    outcomes = [o for r in results for o in r.outcomes]
    if not outcomes:
        return []
    items = nodes.bullet_list(classes=["jaxhlo-expectations"])
    for o in outcomes:
        mark = "✔ " if o.passed else "? " if o.unresolved else "✘ "
        item = nodes.list_item(classes=["jaxhlo-pass" if o.passed else "jaxhlo-unresolved" if o.unresolved
                                        else "jaxhlo-fail"])
        item += para(nodes.strong(text=mark), o.message)
        items += item
    failed = sum(not o.passed and not o.unresolved for o in outcomes)
    unresolved = sum(o.unresolved for o in outcomes)
    if not failed and not unresolved:
        # All hold: one line, the list folded away.
        details = jaxhlo_details(title=f"✔ All {len(outcomes)} stated expectations hold", open=False,
                                 classes=["jaxhlo-checks", "jaxhlo-checks-ok"])
        details += items
        return [details]
    # Failures first, then what was not resolved, open, marked.
    order = {"jaxhlo-fail": 0, "jaxhlo-unresolved": 1, "jaxhlo-pass": 2}
    items.children.sort(key=lambda item: order[item["classes"][0]])
    if failed:
        text = f"✘ {failed} of {len(outcomes)} stated expectations failed" + (
            f", {unresolved} not resolved" if unresolved else "")
    else:
        text = f"? {unresolved} of {len(outcomes)} stated expectations not resolved: sizes no compile looked at"
    head = para(nodes.strong(text=text), classes=["jaxhlo-fail"])
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
    """The side-by-side table (one function); for several, what differs between them
    (:mod:`sphinx_jaxhlo.render.differences`), then the variants table and chart."""
    links = source_links(view)
    if len(functions) > 1:
        out: list[nodes.Node] = []
        if "memory" in view.display.findings:
            differing = differences_table(functions, targets, by_key, view.display, view.gradients)
            if differing is not None:
                out.append(table_node(differing, links))
        # a function beside its gradient: functions, not variants of one computation
        kind = kind_of(functions, view.gradients)
        table = overview.variants_table(functions, targets, by_key, view.display)
        out.append(table_node(dataclasses.replace(table, title=table.title.replace("by variant", f"by {kind}")),
                              links))
        bars = bars_node(functions, targets, by_key, view.display)
        if bars is not None:
            bars["chart"] = dataclasses.replace(bars["chart"],
                                                title=bars["chart"].title.replace("by variant", f"by {kind}"))
            out.append(bars)
        return out
    columns = [by_key[(functions[0], t)] for t, _ in targets if (functions[0], t) in by_key]
    if not any(r.report is not None and not r.report.error for r in columns):
        return []  # nothing compiled: each target says why below
    model = overview.comparison_table(columns, view.display)
    if len(columns) == 1:
        model = Table(model.key, "Summary", model.header, model.rows, model.total)
    return [table_node(model, links)]


def _per_target(view: ExampleView, functions: Sequence[str], targets: Sequence[tuple[str, str]],
                by_key: dict[tuple[str, str], Result], parts: Sequence[str]) -> list[nodes.Node]:
    """The per-target parts: target tabs, or inline for one target."""
    shown: dict[str, str] = {}  # a chunking's code, shown in the first panel that suggests it

    def of_target(target: str, title: str) -> list[nodes.Node]:
        names, found = target_differences(functions, target, by_key) if len(functions) > 1 else ([], [])
        out: list[nodes.Node] = []
        for fn in functions:
            r = by_key.get((fn, target))
            if r is None:
                continue
            if len(functions) > 1:
                out.append(nodes.rubric(text=f"{fn} on {title}"))
            out += result_nodes(view, r, parts, variant_finding(fn, names, found, view.gradients), shown)
        return out

    if len(targets) > 1:
        tabset = example_id(view).removeprefix("jaxhlo-")
        tabs = jaxhlo_tabs(group="target", tabset_id=f"jaxhlo-{tabset}")
        for target, title in targets:
            tab = jaxhlo_tab(title=title, key=target)
            tab += of_target(target, title)
            tabs += tab
        return [tabs]
    return of_target(*targets[0])


def source_node(view: ExampleView, functions: Sequence[str]) -> jaxhlo_source:
    """The example's listing: the one part of an example that the search index reads; the
    code the reader wrote only (see :func:`source_nodes`)."""
    links = source_links(view)
    hidden = unused_lines(view.source, functions) if view.file_path else []
    written, _, _ = _split_generated(view)
    source = jaxhlo_source(prefix=links.prefix if links else f"{example_id(view)}-L", language="python",
                           hidden=hidden)
    source += literal_block(written, "python", linenos=True)
    return source


def _split_generated(view: ExampleView) -> tuple[str, str, int]:
    """The reader's code, the code an option appended (``:grad:``'s variants; ``""``: none)
    without its leading blank lines, and the number of the appended code's first line."""
    if not view.generated_from:
        return view.source, "", 0
    lines = source_text(view.source).split("\n")
    written, generated = lines[: view.generated_from - 1], lines[view.generated_from - 1:]
    start = view.generated_from
    while generated and not generated[0].strip():
        generated, start = generated[1:], start + 1
    return "\n".join(written).rstrip("\n") + "\n", "\n".join(generated) + "\n", start


def source_nodes(view: ExampleView, functions: Sequence[str]) -> list[nodes.Node]:
    """The example's listing (:func:`source_node`) and, folded under it, the code an option
    generated (the gradient variants of ``:grad:``): compiled and linked to like the rest,
    its lines numbered on from the reader's, but not the reader's code."""
    listing = source_node(view, functions)
    _, generated, start = _split_generated(view)
    if not generated:
        return [listing]
    names = [f for f in view.gradients if f in functions] or list(view.gradients)
    what = "gradient" if len(names) == 1 else "gradients"
    fold = jaxhlo_details(title=f"The code of the {what} ({', '.join(names)}), generated by :grad:", open=False,
                          classes=["jaxhlo-generated"])
    code_block = literal_block(generated, "python", linenos=True)
    code_block["highlight_args"] = {"linenostart": start}
    fold += jaxhlo_source(prefix=listing["prefix"], language="python", start=start, classes=["jaxhlo-generated"])
    fold.children[-1] += code_block
    return [listing, fold]


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
            block += source_nodes(view, functions)
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
