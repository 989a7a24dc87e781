"""A sweep on the page and in text: per target its map (:mod:`sphinx_jaxhlo.render.sweep_chart`),
the table of its points, and its flips with the compiler's reasons at both sides.

The table's rows are the map's points, with the same figures (each from its point's
report: :func:`sphinx_jaxhlo.core.flips.figure_of`); builders other than HTML, the
command line and ``str()`` of the API's value show the tables and the flips without the
picture.  No Sphinx, no jax.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from docutils import nodes

from sphinx_jaxhlo.core.expectations import Check
from sphinx_jaxhlo.core.flips import Flip, Interval, PointFigure, SweepMap, lines
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.core.sweeps import Sweep
from sphinx_jaxhlo.core.view_options import split_top_level
from sphinx_jaxhlo.render.blocks import code, para, table_node
from sphinx_jaxhlo.render.example import expectation_nodes, footer, source_nodes
from sphinx_jaxhlo.render.nodes import jaxhlo_details, jaxhlo_graph, jaxhlo_source, jaxhlo_tab, jaxhlo_tabs
from sphinx_jaxhlo.render.rows import Cell, Row, Table
from sphinx_jaxhlo.render.signature import default_function, signature
from sphinx_jaxhlo.render.sweep_chart import map_svg
from sphinx_jaxhlo.render.text import _wrap, model_text
from sphinx_jaxhlo.render.view import ExampleView, example_id, source_links

__all__ = ["points_table", "render_sweep", "sweep_signature", "sweep_text"]

def sweep_signature(sweep: Sweep, function: str, source: str, static: Sequence[tuple[str, str]] = ()) -> str:
    """``written(pos: f32[n,3], hkl: f32[d,3])``: the function with its specs as ``:args:`` writes
    them, symbols and all; a swept static argument shows its symbol (``chunk=chunk``)."""
    args: list[str] = []
    kwargs: list[tuple[str, str]] = []
    for item in split_top_level(sweep.args) if sweep.args.strip() else []:
        keyword = re.match(r"^\s*([A-Za-z_]\w*)\s*=(.*)$", item, re.DOTALL)
        if keyword is not None:
            kwargs.append((keyword.group(1), " ".join(keyword.group(2).split())))
        else:
            args.append(" ".join(item.split()))
    fixed = [(k, v) for k, v in static if k not in sweep.static] + [(k, k) for k in sweep.static]
    return signature(function, args, kwargs, fixed, source)


def _status_cell(figure: PointFigure) -> Cell:
    tone = "good" if figure.status == "fused" else "bad" if figure.status in ("unfused", "compile error") else ""
    text = figure.status
    if figure.status == "unfused":
        text = "unfused: " + ", ".join(r.key for r in figure.reductions if not r.fused)
    elif figure.status in ("compile error", "no report", "missing"):
        text = f"{figure.status}: {figure.error}" if figure.error else figure.status
    return Cell(text if len(text) <= 100 else text[:99] + "…", tone=tone)


def _memory_cell(figure: PointFigure) -> Cell:
    """Without verdicts, what the point shows beside its figures: only whether it compiled."""
    if figure.status in ("compile error", "no report", "missing"):
        text = f"{figure.status}: {figure.error}" if figure.error else figure.status
        return Cell(text if len(text) <= 100 else text[:99] + "…", tone="bad" if figure.status == "compile error"
                    else "")
    return Cell("compiled")


def points_table(sweep: SweepMap, target: str, title: str, *, probes: bool = False, verdicts: bool = True,
                 functions: Sequence[str] | None = None, peak: bool = False) -> Table:
    """One row per point (and function): the sizes, what the point shows (its reductions'
    verdicts; without ``verdicts``, whether it compiled), its measure, its largest stored
    buffer and its kernels; with ``peak``, what is live at its peak and the largest buffer then.

    :param probes: the sizes bisection compiled, instead of the sweep's own points.
    :param functions: only these functions' rows (default: every function's).
    """
    measure = sweep.measure(target)
    several = len(sweep.functions) > 1
    header = (*(a.title for a in sweep.sweep.axes), *(("function",) if several else ()),
              "reductions" if verdicts else "compile", "HBM held" if measure == "device" else "temp",
              "largest stored buffer", "kernels", *(("live at the peak",) if peak else ()))
    rows = []
    chosen = [f for f in sweep.figures if f.target == target and bool(f.point.probe) == probes
              and (functions is None or f.function in functions)]
    for figure in sorted(chosen, key=lambda f: (f.point.coordinates, sweep.functions.index(f.function))):
        largest = f"{figure.largest} ({format_bytes(figure.largest_bytes)})" if figure.largest else \
            ("none" if figure.status in ("fused", "unfused", "no reduction") else "")
        cells = [*(Cell(f"{v:,}") for v in figure.point.coordinates),
                 *((Cell(figure.function, code=True),) if several else ()),
                 _status_cell(figure) if verdicts else _memory_cell(figure),
                 Cell(format_bytes(figure.value) if figure.value is not None else ""),
                 Cell(largest, code=bool(figure.largest)),
                 Cell("" if figure.kernels is None else str(figure.kernels))]
        if peak:
            cells.append(Cell(f"{format_bytes(figure.peak_bytes)}: largest {figure.peak_top}" if figure.peak_top
                              else format_bytes(figure.peak_bytes) if figure.peak_bytes is not None else
                              "" if figure.status in ("compile error", "no report", "missing") else
                              "no buffer assignment"))
        rows.append(Row(tuple(cells), tone="bad" if figure.status == "compile error" else ""))
    return Table("sweep", title, header, tuple(rows), len(rows))


def flip_heading(number: int | None, flip: Flip, several: bool, verdicts: bool = True) -> str:
    """``Flip 1 (exp_columns), between n=4999 and n=5000 (neighbouring sizes; reduction)``;
    without verdicts a reduction's or a producer's flip is one of the stored buffers."""
    head = f"Flip {number}" if number is not None else "Flip"
    who = f" ({flip.function})" if several else ""
    where = "neighbouring sizes" if flip.exact else "not located: the sizes between were not compiled"
    kinds = flip.kinds if verdicts else list(dict.fromkeys(
        "stored buffers" if k in ("reduction", "producer") else k for k in flip.kinds))
    return f"{head}{who}, between {flip.between} ({where}; {', '.join(kinds)})"


def _flip_words(flip: Flip, verdicts: bool) -> tuple[str, list[str]]:
    """What changed, and the reasons; without verdicts, a reduction's or producer's change is
    the largest stored buffer on each side, without the fusion's reasons."""
    if verdicts or not {"reduction", "producer"} & set(flip.kinds):
        return "; ".join(flip.changes), [*flip.reasons_before, *flip.reasons_after]
    kept = [c for c, k in zip(flip.changes, flip.kinds, strict=False) if k in ("kernels", "error")]
    return "; ".join(["the stored buffers change", *kept]), []


def _flip_nodes(flips: Sequence[Flip], numbered: bool, several: bool, verdicts: bool) -> list[nodes.Node]:
    items = nodes.bullet_list(classes=["jaxhlo-sweep-flips"])
    for number, flip in enumerate(flips, 1):
        item = nodes.list_item()
        changes, reasons = _flip_words(flip, verdicts)
        item += para(nodes.strong(text=flip_heading(number if numbered else None, flip, several, verdicts)), ": ",
                     changes)
        listed = nodes.bullet_list()
        for reason in reasons:
            listed += nodes.list_item("", para(reason))
        if listed.children:
            item += listed
        items += item
    return [items] if flips else []


def _kernels_change(sweep: SweepMap, target: str, functions: Sequence[str]) -> bool:
    """Whether two neighbours of one function on one target have different kernel counts."""
    return any(a.kernels is not None and b.kernels is not None and a.kernels != b.kernels
               for _, line in lines(sweep.sweep, [f for f in sweep.figures if f.target == target
                                                   and f.function in functions])
               for a, b in pairwise(line))


def looked_at_words(sweep: SweepMap, target: str, functions: Sequence[str]) -> list[str]:
    """What bisection did on one target, and, per function, the intervals not resolved."""
    out = []
    flips = [f for f in sweep.flips if f.target == target and f.function in functions]
    probes = [f for f in sweep.figures if f.target == target and f.function in functions and f.point.probe]
    exact = sum(f.exact for f in flips)
    if sweep.budget == 0 and flips:
        out.append("Bisection is off (budget 0): each flip is between two of the sweep's sizes.")
    elif sweep.budget is not None and probes:
        out.append(f"Bisection compiled {len(probes)} more size{'s' if len(probes) != 1 else ''} here (budget "
                   f"{sweep.budget} for the sweep), each an ordinary compile, chasing {sweep.chased}"
                   + (f": {exact} of {len(flips)} flip{'s' if len(flips) != 1 else ''} located between neighbouring "
                      "sizes." if flips else "."))
    elif sweep.budget and exact < len(flips):
        out.append(f"Bisection compiled no size here: the sweep's budget of {sweep.budget} was spent.")
    if not flips:
        out.append("No decision flips between neighbouring sizes compiled.")
    if "kernels" not in sweep.kinds and _kernels_change(sweep, target, functions):
        out.append("The kernel count changes between sizes too (the table's last column): bisection chases it only "
                   "where a claim is about it.")
    def listed(intervals: Sequence[Interval]) -> str:
        shown = ", ".join(f"{i.axis}={i.low}..{i.high}" + (f" at {i.between.split(' at ', 1)[1]}"
                                                             if " at " in i.between else "") for i in intervals[:4])
        return shown + (f" and {len(intervals) - 4} more" if len(intervals) > 4 else "")

    said: dict[str, list[str]] = {}  # the same words for several functions: said once, naming them all
    for function in functions:
        intervals = sweep.intervals_of(function, target)
        agree = [i for i in intervals if i.why == "agree"]
        if agree:
            said.setdefault(f"not looked at: {listed(agree)}: the decisions at both ends agree, the sizes between "
                            "were not compiled (a decision could flip and flip back there).", []).append(function)
        unknown = [i for i in intervals if i.why == "no report"]
        if unknown:
            said.setdefault(f"not compared: {listed(unknown)}: an end has no report.", []).append(function)
    out += [(f"{', '.join(who)}: " if len(sweep.functions) > 1 else "") + words for words, who in said.items()]
    return out


def _legend(sweep: SweepMap, target: str, target_title: str, measure: str, verdicts: bool) -> tuple[str, str]:
    what = ("HBM held (arguments, outputs, temp and code: a TPU's temp is 0 for most programs)"
            if measure == "device" else "temp memory")
    if sweep.sweep.is_grid:
        across, up = sweep.sweep.axes
        picture = (f"One cell per point, {across.title} across and {up.title} up; its colour says what the point "
                   f"shows, its text the {what.split(' (')[0]}. A thick line between two cells: a decision flips "
                   "there. Hover over a cell for its figures.")
    else:
        fills = ("Solid: every reduction fused; hollow: one is unfused (beside it, the largest stored buffer); "
                 "faint: no reduction. " if verdicts else "")
        who = "Each function has its marker and colour. " if len(sweep.functions) > 1 else ""
        # only what this picture has: a failed compile, a size bisection added, a flip
        shown = [f for f in sweep.figures if f.target == target]
        marks = [*(["a crossed-out marker at the top: the compile failed"]
                   if any(f.status in ("compile error", "no report") for f in shown) else []),
                 *(["a small marker: a size bisection compiled"] if any(f.point.probe for f in shown) else [])]
        said = "; ".join(marks)
        dashed = ("Dashed lines mark the flips listed below, with the two sizes when they are neighbours."
                  if any(f.target == target for f in sweep.flips) else "")
        picture = " ".join(part for part in (f"The {what} on {target_title} at each size, both on log scales.",
                                             f"{who}{fills}".strip(), said[:1].upper() + said[1:] + "." if said
                                             else "", dashed) if part)
    return picture, "The table lists every point with the figures of its report; the flips follow it."


def _target_nodes(view: ExampleView, sweep: SweepMap, target: str, title: str) -> list[nodes.Node]:
    out: list[nodes.Node] = []
    measure = sweep.measure(target)
    # the verdicts go only in the memory view (:findings: memory without reductions); peak adds a column
    verdicts = view.display.verdicts or "memory" not in view.display.findings
    peak = view.display.peak
    base = example_id(view)
    several = len(sweep.functions) > 1
    functions = sweep.functions if sweep.sweep.is_grid else [sweep.functions[0]]
    for function in functions:
        what = "HBM held" if measure == "device" else "temp memory"
        heading = (f"{function} on {title}: " if several and sweep.sweep.is_grid else f"{title}: ")
        heading += (f"what each point shows, over {' × '.join(a.title for a in sweep.sweep.axes)}"
                    if sweep.sweep.is_grid else f"{what} against {sweep.sweep.axes[0].title}")
        uid = f"{base}-{re.sub(r'[^A-Za-z0-9]+', '-', target)}-{sweep.functions.index(function)}"
        legend, text_legend = _legend(sweep, target, title, measure, verdicts)
        graph = jaxhlo_graph(svg=map_svg(sweep, function, target, uid, heading, verdicts=verdicts), title=heading,
                             legend=legend, text_legend=text_legend, classes=["jaxhlo-sweep-map"])
        graph += table_node(points_table(sweep, target, f"The points on {title}", verdicts=verdicts, peak=peak),
                            source_links(view))
        shown = [function] if sweep.sweep.is_grid else sweep.functions
        probed = points_table(sweep, target, "", probes=True, verdicts=verdicts, functions=shown, peak=peak)
        if probed.rows:
            folded = jaxhlo_details(title=f"The {len(probed.rows)} sizes bisection compiled on {title}", open=False)
            folded += table_node(probed, source_links(view))
            graph += folded
        flips = [f for f in sweep.flips if f.target == target and f.function in shown]
        graph += [para(words, classes=["jaxhlo-sweep-flips"]) for words in looked_at_words(sweep, target, shown)]
        listed = _flip_nodes(flips, numbered=not sweep.sweep.is_grid, several=several, verdicts=verdicts)
        if len(flips) > 3 and listed:  # a grid's boundary is many flips: listed folded, the picture shows them
            folded = jaxhlo_details(title=f"The {len(flips)} flips, with the compiler's reasons", open=False)
            folded += listed
            listed = [folded]
        graph += listed
        out.append(graph)
    return out


def render_sweep(view: ExampleView, sweep: SweepMap, results: Sequence[Result], static: Sequence[tuple[str, str]] = ()
                 ) -> list[nodes.Node]:
    """The rendering of a swept example: its signature and sizes, the source when shown,
    the claims checked, then per target the map, the table of points and the flips."""
    titles = [title for _, title in sweep.targets]
    where = titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]
    signatures = []
    for fn in sweep.functions:
        name = fn if fn != "(default function)" else (default_function(view.source) or "(function)")
        signatures.append(sweep_signature(sweep.sweep, name, view.source, static))
    count = len(sweep.points)
    probes = len({(f.point, f.function, f.target) for f in sweep.figures if f.point.probe})
    bisected = (f" Bisection then compiled {probes} size{'s' if probes != 1 else ''} between two that differ in "
                f"{sweep.chased} (budget {sweep.budget}), each an ordinary compile of one function on one target."
                if probes else "")
    block: list[nodes.Node] = [para("Compiled ", *[code(s) for s in signatures[:1]],
                                    *[x for s in signatures[1:] for x in (", ", code(s))],
                                    f" for {where} at "
                                    + (f"{count} points: " if sweep.sweep.is_grid else "")
                                    + f"{sweep.sweep.describe()}, each an ordinary compile from the shapes alone "
                                    f"(nothing ran).{bisected}", classes=["jaxhlo-signature"])]
    if "source" in view.show:
        if view.file_path:
            block.append(para("From ", code(view.file_path), ":", classes=["jaxhlo-file"]))
        block += source_nodes(view, sweep.functions)
    checked = [*results, Result("", "", "", outcomes=list(sweep.checks))]
    block += expectation_nodes(checked)
    if len(sweep.targets) > 1:
        tabs = jaxhlo_tabs(group="target", tabset_id=f"{example_id(view)}-sweep")
        for target, title in sweep.targets:
            tab = jaxhlo_tab(title=title, key=target)
            tab += _target_nodes(view, sweep, target, title)
            tabs += tab
        block.append(tabs)
    else:
        block += _target_nodes(view, sweep, *sweep.targets[0])
    block += footer(results)
    for node in block:
        if isinstance(node, nodes.Element) and not isinstance(node, jaxhlo_source):
            node["classes"].append("no-search")
    return block


def sweep_text(sweep: SweepMap, title: str = "", checks: Sequence[Check] = ()) -> str:
    """The sweep as text: per target the table of points, the sizes bisection compiled, and
    the flips with their reasons."""
    out = [title] if title else []
    out.append(f"Swept: {sweep.sweep.describe()}.")
    several = len(sweep.functions) > 1
    for target, target_title in sweep.targets:
        out.append("")
        out.append(model_text(points_table(sweep, target, f"{target_title}: the points"), ""))
        probed = points_table(sweep, target, f"{target_title}: the sizes bisection compiled", probes=True)
        if probed.rows:
            out.append(model_text(probed, ""))
        out += [_wrap(words, "  ") for words in looked_at_words(sweep, target, sweep.functions)]
        flips = [f for f in sweep.flips if f.target == target]
        for number, flip in enumerate(flips, 1):
            out.append(_wrap(f"{flip_heading(number, flip, several)}: " + "; ".join(flip.changes), "  "))
            for reason in [*flip.reasons_before, *flip.reasons_after]:
                out.append(_wrap(f"- {reason}", "    "))
    if checks:
        out.append("")
        out.append("Expectations")
        out += [f"  {c.message}" for c in checks]
    return "\n".join(out) + "\n"


def sweep_html(sweep: SweepMap, results: Sequence[Result], source: str = "", *, full_page: bool = False,
               script: bool = True) -> str:
    """The rendering of a sweep as self-contained HTML (inline CSS, and the tab script)."""
    import html as html_mod
    import uuid

    from sphinx_jaxhlo.render.nodes import jaxhlo_block
    from sphinx_jaxhlo.render.standalone_html import _script, nodes_to_html, stylesheet

    root = "jaxhlo-" + uuid.uuid4().hex[:12]
    view = ExampleView(source=source, show=["summary"], key=root, args_text=sweep.sweep.text)
    block = jaxhlo_block()
    block.extend(render_sweep(view, sweep, results))
    body = nodes_to_html([block])
    parts = [f'<div class="jaxhlo-root" id="{root}">', f"<style>{stylesheet()}</style>", body]
    if script and "jaxhlo-tablist" in body:
        parts.append(f"<script>{_script(root)}</script>")
    parts.append("</div>")
    fragment = "\n".join(parts)
    if not full_page:
        return fragment
    title = html_mod.escape(f"jax-hlo sweep: {', '.join(sweep.functions)}")
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{title}</title>\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n</head>\n<body>\n'
            f"{fragment}\n</body>\n</html>\n")
