"""A sweep's map as SVG, drawn here (no plotting library, no script): one picture per target.

*One symbol swept*: the target's measure (temp memory, the HBM a TPU holds: one measure per
picture) against the size, both on log scales; each point is a marker, filled when the
program's reductions are all fused, hollow when one is not, a square when the program
has no reduction of its own, a cross at the top edge when the compile failed (the
compiler's status in its tooltip), a question mark when there is no report.  Above an
unfused point, the size of its largest stored buffer.  A dashed line between two sizes
marks each flip, numbered as in the list under the picture.  Several functions are
several series, told apart by the marker's shape.

*Two symbols swept* (a grid): one cell per point, the first symbol across and the
second up, in the order of their sizes; a cell's colour is what the point shows (its
status and, unfused, what made the stored buffer), its text the measure; a thick line
runs between two neighbouring cells where a decision flips: the boundary.

The pictures are 420 units wide and readable at that width; every text from the
example or the compiler is escaped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from sphinx_jaxhlo.core.flips import Flip, PointFigure, SweepMap
from sphinx_jaxhlo.core.sizes import format_bytes

__all__ = ["WIDTH", "compact", "grid_svg", "line_svg", "map_svg"]

#: The pictures' width (their natural size, in CSS pixels).
WIDTH = 420
_FONT = 11
_SMALL = 10
_GOOD = "#1a7f37"
_BAD = "#cf222e"
_MUTED = "#8c959f"
#: Cell colours of a grid, for the categories in order of appearance (fused and the rest have their own).
_FILLS = ("#fbd38d", "#b6d4fe", "#e9c6f5", "#d9e8a6", "#f8c4b4", "#c9ece3")
_FIXED = {"fused": "#b7e4c0", "no reduction": "#e1e4e8", "compile error": "#f4b8b4", "no report": "#ffffff",
          "missing": "#ffffff"}
_SHAPES = ("circle", "square", "diamond", "triangle")


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def compact(value: int) -> str:
    """``1024`` -> ``1024``, ``100000`` -> ``100k``, ``1000000`` -> ``1M``: a tick label."""
    if value % 10**9 == 0:
        return f"{value // 10**9}G"
    if value % 10**6 == 0:
        return f"{value // 10**6}M"
    if value % 1000 == 0 and value >= 10_000:
        return f"{value // 1000}k"
    return str(value)


def _decade_label(power: int) -> str:
    """``10**6`` -> ``1 MB``, ``10**7`` -> ``10 MB``."""
    units = ("B", "kB", "MB", "GB", "TB", "PB")
    group = min(power // 3, len(units) - 1)
    return f"{10 ** (power - 3 * group)} {units[group]}"


def _tooltip(figure: PointFigure) -> str:
    parts = [f"{figure.point.label}: {figure.status}"]
    if figure.value is not None:
        parts.append(f"{figure.measure} {format_bytes(figure.value)}")
    if figure.largest:
        parts.append(f"largest stored {figure.largest} ({format_bytes(figure.largest_bytes)})")
    if figure.kernels is not None:
        parts.append(f"{figure.kernels} kernel{'s' if figure.kernels != 1 else ''}")
    if figure.error:
        parts.append(figure.error)
    return ", ".join(parts)


def _marker(shape: str, x: float, y: float, fill: str, stroke: str, hollow: bool) -> str:
    paint = f'fill="{"Canvas" if hollow else fill}" stroke="{stroke}" stroke-width="{2.2 if hollow else 1.2}"'
    if shape == "square":
        return f'<rect x="{x - 5:.1f}" y="{y - 5:.1f}" width="10" height="10" {paint}/>'
    if shape == "diamond":
        return (f'<path d="M{x:.1f},{y - 6.5:.1f} L{x + 6.5:.1f},{y:.1f} L{x:.1f},{y + 6.5:.1f} '
                f'L{x - 6.5:.1f},{y:.1f} z" {paint}/>')
    if shape == "triangle":
        return f'<path d="M{x:.1f},{y - 6.5:.1f} L{x + 6:.1f},{y + 4.5:.1f} L{x - 6:.1f},{y + 4.5:.1f} z" {paint}/>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5.5" {paint}/>'


def line_svg(sweep: SweepMap, target: str, flips: Sequence[Flip], uid: str, title: str) -> str:
    """The map of one target of a sweep of one symbol (see the module's rules)."""
    axis = sweep.sweep.axes[0]
    measure = sweep.measure(target)
    series = [(fn, sweep.figures_of(fn, target)) for fn in sweep.functions]
    left, right, top, bottom = 58.0, 14.0, 22.0, 54.0
    legend_rows = 1 + (len(series) > 1)
    height = 258.0 + 16 * legend_rows
    plot_w, plot_h = WIDTH - left - right, height - top - bottom - 16 * legend_rows
    xs = [math.log10(v) for v in axis.values]
    x_lo, x_hi = min(xs), max(xs)
    span = max(x_hi - x_lo, 1e-9)
    x_lo, x_hi = x_lo - 0.06 * span, x_hi + 0.06 * span

    def x_of(value: float) -> float:
        return left + plot_w * (math.log10(value) - x_lo) / (x_hi - x_lo)

    values = [f.value for _, figs in series for f in figs if f.value]
    y_lo = math.floor(math.log10(min(values))) if values else 3
    y_hi = math.ceil(math.log10(max(values))) if values else 6
    if y_hi - y_lo < 2:
        y_hi, y_lo = y_hi + 1, y_lo - 1
    zero_band = any(f.value == 0 for _, figs in series for f in figs)
    floor = top + plot_h - (14 if zero_band else 0)

    def y_of(value: int | None) -> float:
        if not value:
            return top + plot_h
        return floor - (floor - top) * (math.log10(value) - y_lo) / (y_hi - y_lo)

    out: list[str] = []
    # axes, decade gridlines and their labels
    step = max(1, math.ceil((y_hi - y_lo) / 6))
    for power in range(y_lo, y_hi + 1, step):
        y = y_of(10**power)
        out.append(f'<line x1="{left:.1f}" y1="{y:.1f}" x2="{WIDTH - right:.1f}" y2="{y:.1f}" stroke="currentColor" '
                   f'stroke-opacity="0.15"/><text x="{left - 6:.1f}" y="{y + 4:.1f}" text-anchor="end" '
                   f'font-size="{_SMALL}" fill="currentColor">{_esc(_decade_label(power))}</text>')
    if zero_band:
        out.append(f'<text x="{left - 6:.1f}" y="{top + plot_h + 3:.1f}" text-anchor="end" font-size="{_SMALL}" '
                   f'fill="currentColor">0 B</text>')
    out.append(f'<path d="M{left:.1f},{top:.1f} V{top + plot_h:.1f} H{WIDTH - right:.1f}" fill="none" '
               f'stroke="currentColor" stroke-opacity="0.6"/>')
    # a label under each size that has room, the sizes on either side of a flip first
    ends = {v for flip in flips for v in (flip.low, flip.high)}
    placed: list[list[tuple[float, float]]] = [[], []]  # two rows of labels
    for value in sorted(axis.values, key=lambda v: v not in ends):
        x = x_of(value)
        label = compact(value)
        half = len(label) * _SMALL * 0.31
        out.append(f'<line x1="{x:.1f}" y1="{top + plot_h:.1f}" x2="{x:.1f}" y2="{top + plot_h + 4:.1f}" '
                   f'stroke="currentColor" stroke-opacity="0.6"/>')
        for row, taken in enumerate(placed):
            if all(x + half + 4 < a or x - half - 4 > b for a, b in taken):
                out.append(f'<text x="{x:.1f}" y="{top + plot_h + 15 + 11 * row:.1f}" text-anchor="middle" '
                           f'font-size="{_SMALL}" fill="currentColor">{_esc(label)}</text>')
                taken.append((x - half, x + half))
                break
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h + 40:.1f}" text-anchor="middle" '
               f'font-size="{_FONT}" fill="currentColor">{_esc(axis.title)} (log scale)</text>')
    heading = f"{'HBM held' if measure == 'device' else 'temp memory'} (log scale)"
    out.append(f'<text x="{left:.1f}" y="{top - 8:.1f}" font-size="{_FONT}" fill="currentColor">'
               f'{_esc(heading)}</text>')
    # flips: a dashed line halfway (on the log scale) between the two sizes, numbered above the plot
    # (or at its foot where the heading is)
    heading_end = left + len(heading) * _FONT * 0.62
    for number, flip in enumerate(flips, 1):
        x = x_of(math.sqrt(flip.low * flip.high))
        y = top - 8 if x > heading_end + 4 else top + plot_h - 6
        out.append(f'<g class="jaxhlo-sweep-flip"><title>{_esc(f"flip {number}: " + "; ".join(flip.changes))}'
                   f'</title><line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{top + plot_h:.1f}" '
                   f'stroke="{_BAD}" stroke-width="1.5" stroke-dasharray="5 4"/>'
                   f'<text x="{x + 3:.1f}" y="{y:.1f}" font-size="{_SMALL}" fill="{_BAD}">'
                   f'flip {number}</text></g>')
    # the series; a point's label only where it does not run into another one
    labelled: list[tuple[float, float, float]] = []
    for number, (function, figures) in enumerate(series):
        shape = _SHAPES[number % len(_SHAPES)]
        drawn = [(x_of(f.point[axis.name]), y_of(f.value)) for f in figures if f.status in
                 ("fused", "unfused", "no reduction")]
        if len(drawn) > 1:
            path = " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y:.1f}" for i, (x, y) in enumerate(drawn))
            out.append(f'<path d="{path}" fill="none" stroke="currentColor" stroke-opacity="0.35"/>')
        for figure in figures:
            x = x_of(figure.point[axis.name])
            tip = f"<title>{_esc((function + ' ' if len(series) > 1 else '') + _tooltip(figure))}</title>"
            status = figure.status
            if status in ("compile error", "no report"):
                y = top + 8
                mark = (f'<path d="M{x - 5:.1f},{y - 5:.1f} L{x + 5:.1f},{y + 5:.1f} M{x + 5:.1f},{y - 5:.1f} '
                        f'L{x - 5:.1f},{y + 5:.1f}" stroke="{_BAD}" stroke-width="2.4"/>'
                        if status == "compile error" else
                        f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle" font-size="{_FONT}" '
                        f'fill="{_MUTED}">?</text>')
                out.append(f'<g class="jaxhlo-sweep-point jaxhlo-sweep-{status.replace(" ", "-")}">{tip}{mark}</g>')
                continue
            if status == "missing":
                continue
            y = y_of(figure.value)
            color = _GOOD if status == "fused" else _BAD if status == "unfused" else _MUTED
            mark = _marker("square" if status == "no reduction" and shape == "circle" else shape, x, y, color,
                           color, status == "unfused")
            label = ""
            text = format_bytes(figure.largest_bytes) if figure.largest_bytes else ""
            half = len(text) * _SMALL * 0.31
            if status == "unfused" and text and all(abs(y - ly) > 12 or x - half > b + 3 or x + half < a - 3
                                                    for a, b, ly in labelled):
                labelled.append((x - half, x + half, y))
                label = (f'<text x="{x:.1f}" y="{y - 10:.1f}" text-anchor="middle" font-size="{_SMALL}" '
                         f'fill="{_BAD}">{_esc(text)}</text>')
            out.append(f'<g class="jaxhlo-sweep-point jaxhlo-sweep-{status.replace(" ", "-")}" '
                       f'data-size="{figure.point[axis.name]}" data-bytes="{figure.value}">{tip}{mark}{label}</g>')
    # the legend
    y = height - 16 * legend_rows + 2
    items = [("circle", _GOOD, False, "fused"), ("circle", _BAD, True, "unfused (label: largest stored)"),
             ("square", _MUTED, False, "no reduction")]
    x = 8.0
    for shape, color, hollow, text in items:
        out.append(_marker(shape, x + 5, y, color, color, hollow))
        out.append(f'<text x="{x + 14:.1f}" y="{y + 4:.1f}" font-size="{_SMALL}" fill="currentColor">'
                   f'{_esc(text)}</text>')
        x += 24 + len(text) * _SMALL * 0.6
    out.append(f'<path d="M{x:.1f},{y - 4:.1f} L{x + 8:.1f},{y + 4:.1f} M{x + 8:.1f},{y - 4:.1f} L{x:.1f},'
               f'{y + 4:.1f}" stroke="{_BAD}" stroke-width="2"/><text x="{x + 12:.1f}" y="{y + 4:.1f}" '
               f'font-size="{_SMALL}" fill="currentColor">error</text>')
    if len(series) > 1:
        y += 16
        x = 8.0
        for number, (function, _) in enumerate(series):
            out.append(_marker(_SHAPES[number % len(_SHAPES)], x + 5, y, "currentColor", "currentColor", False))
            text = function[:24]
            out.append(f'<text x="{x + 14:.1f}" y="{y + 4:.1f}" font-size="{_SMALL}" fill="currentColor">'
                       f'{_esc(text)}</text>')
            x += 26 + len(text) * _SMALL * 0.6
    return _svg(uid, title, height, "".join(out))


def _svg(uid: str, title: str, height: float, body: str) -> str:
    label = f"{_esc(uid)}-title"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="jaxhlo-graph-svg jaxhlo-sweep-svg" width="{WIDTH}" '
            f'height="{height:.0f}" viewBox="0 0 {WIDTH} {height:.0f}" role="img" aria-labelledby="{label}" '
            f'font-family="ui-monospace, SFMono-Regular, Menlo, Consolas, monospace">'
            f'<title id="{label}">{_esc(title)}</title>{body}</svg>')


def categories(figures: Sequence[PointFigure]) -> dict[str, tuple[str, str]]:
    """The categories of a grid's cells in order of appearance: ``{category: (fill, words)}``."""
    out: dict[str, tuple[str, str]] = {}
    spare = iter(_FILLS)
    for figure in figures:
        key = figure.category
        if key not in out:
            fill = _FIXED.get(key) or next(spare, "#dddddd")
            out[key] = (fill, figure.category_text if key.startswith("unfused") else key)
    return out


def grid_svg(sweep: SweepMap, function: str, target: str, flips: Sequence[Flip], uid: str, title: str) -> str:
    """The map of one function on one target of a grid sweep (see the module's rules)."""
    across, up = sweep.sweep.axes
    figures = {f.point.index: f for f in sweep.figures_of(function, target)}
    kinds = categories(list(figures.values()))
    left, top = 62.0, 20.0
    cols, rows = len(across.values), len(up.values)
    cell_w = (WIDTH - left - 10) / cols
    cell_h = max(22.0, min(40.0, 240.0 / rows))
    plot_h = cell_h * rows
    legend = 16 * len(kinds) + 8
    height = top + plot_h + 40 + legend
    out: list[str] = []

    def cell(i: int, j: int) -> tuple[float, float]:
        return left + i * cell_w, top + (rows - 1 - j) * cell_h

    for (i, j), figure in figures.items():
        x, y = cell(i, j)
        fill = kinds[figure.category][0]
        text = format_bytes(figure.value) if figure.value is not None else \
            "error" if figure.status == "compile error" else "?" if figure.status == "no report" else ""
        if len(text) * _SMALL * 0.62 > cell_w - 4:
            text = text.replace(" ", "")[: max(1, int((cell_w - 4) / (_SMALL * 0.62)))]
        out.append(f'<g class="jaxhlo-sweep-cell jaxhlo-sweep-{figure.status.replace(" ", "-")}">'
                   f'<title>{_esc(_tooltip(figure))}</title><rect x="{x:.1f}" y="{y:.1f}" width="{cell_w:.1f}" '
                   f'height="{cell_h:.1f}" fill="{fill}" stroke="#ffffff" stroke-width="1"/>'
                   f'<text x="{x + cell_w / 2:.1f}" y="{y + cell_h / 2 + 4:.1f}" text-anchor="middle" '
                   f'font-size="{_SMALL}" fill="#1f2328">{_esc(text)}</text></g>')
    # the boundary: between two neighbours where a decision flips
    for flip in flips:
        i, j = flip.before.index
        x, y = cell(i, j)
        if flip.axis == across.name:
            segment = f"M{x + cell_w:.1f},{y:.1f} V{y + cell_h:.1f}"
        else:
            segment = f"M{x:.1f},{y:.1f} H{x + cell_w:.1f}"
        # a verdict or a producer that changes is the boundary; a kernel count or an error, a thin dashed line
        decision = bool({"reduction", "producer"} & set(flip.kinds))
        stroke = 'stroke-width="3.5"' if decision else 'stroke-width="1.5" stroke-dasharray="4 3"'
        out.append(f'<path class="jaxhlo-sweep-boundary" d="{segment}" stroke="{_BAD}" {stroke} '
                   f'stroke-linecap="round"><title>{_esc("; ".join(flip.changes))}</title></path>')
    last_end = -1e9
    for i, value in enumerate(across.values):
        x = left + (i + 0.5) * cell_w
        label = compact(value)
        half = len(label) * _SMALL * 0.31
        if x - half > last_end + 3:
            out.append(f'<text x="{x:.1f}" y="{top + plot_h + 14:.1f}" text-anchor="middle" font-size="{_SMALL}" '
                       f'fill="currentColor">{_esc(label)}</text>')
            last_end = x + half
    for j, value in enumerate(up.values):
        y = top + (rows - 1 - j) * cell_h + cell_h / 2 + 4
        out.append(f'<text x="{left - 6:.1f}" y="{y:.1f}" text-anchor="end" font-size="{_SMALL}" '
                   f'fill="currentColor">{_esc(compact(value))}</text>')
    out.append(f'<text x="{left + (WIDTH - left - 10) / 2:.1f}" y="{top + plot_h + 30:.1f}" text-anchor="middle" '
               f'font-size="{_FONT}" fill="currentColor">{_esc(across.title)} →</text>')
    out.append(f'<text x="{left - 6:.1f}" y="{top - 7:.1f}" text-anchor="end" font-size="{_FONT}" '
               f'fill="currentColor">{_esc(up.title)} ↑</text>')
    y = top + plot_h + 44
    for fill, words in kinds.values():
        out.append(f'<rect x="8" y="{y - 9:.1f}" width="12" height="12" fill="{fill}" stroke="currentColor" '
                   f'stroke-opacity="0.4"/><text x="26" y="{y + 1:.1f}" font-size="{_SMALL}" fill="currentColor">'
                   f'{_esc(_clip(words, 64))}</text>')
        y += 16
    if any({"reduction", "producer"} & set(f.kinds) for f in flips):
        out.append(f'<path d="M{WIDTH - 250:.1f},{top - 11:.1f} h14" stroke="{_BAD}" stroke-width="3.5"/>'
                   f'<text x="{WIDTH - 232:.1f}" y="{top - 7:.1f}" font-size="{_SMALL}" fill="currentColor">'
                   f'verdict or producer flips</text>')
    if any(not {"reduction", "producer"} & set(f.kinds) for f in flips):
        out.append(f'<path d="M{WIDTH - 60:.1f},{top - 11:.1f} h14" stroke="{_BAD}" stroke-width="1.5" '
                   f'stroke-dasharray="4 3"/><text x="{WIDTH - 42:.1f}" y="{top - 7:.1f}" font-size="{_SMALL}" '
                   f'fill="currentColor">other</text>')
    return _svg(uid, title, height, "".join(out))


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def map_svg(sweep: SweepMap, function: str, target: str, uid: str, title: str) -> str:
    """The map of one target: a line for one symbol, a grid for two (one function each)."""
    if sweep.sweep.is_grid:
        return grid_svg(sweep, function, target, sweep.flips_of(function, target), uid, title)
    flips = [f for f in sweep.flips if f.target == target]
    return line_svg(sweep, target, flips, uid, title)

