"""A sweep's map as SVG, drawn here (no plotting library, no script): one picture per target.

*One symbol swept*: the target's measure (temp memory, the HBM a TPU holds: one measure per
picture) against the size, both on log scales.  Each function is a series with a marker
shape and a colour of its own, kept in every status; the status is the marker's fill:
solid when the program's reductions are all fused, hollow when one is not (above it, the
size of its largest stored buffer), faint when the program has no reduction of its own.
A failed compile is the series' marker crossed out at the top edge (the compiler's status
in its tooltip), a point without a report a question mark there.  A size that bisection
compiled (:mod:`sphinx_jaxhlo.core.bisection`) is a smaller marker.  A dashed line in the
function's colour marks each flip, between its two sizes, labelled with its number and,
when bisection located it, the two neighbouring sizes (``1: 4999|5000``); flips of several
functions between the same two sizes share a line and a label (``1,4: 1472|1473``).  Without
verdicts (``:findings:`` without ``reductions``) every marker is solid.

*Two symbols swept* (a grid): one cell per point of the sweep, the first symbol across
and the second up, in the order of their sizes; a cell's colour is what the point shows
(its status and, unfused, what made the stored buffer), its text the measure; a thick
line runs between two neighbouring cells where a decision flips: the boundary (its
tooltip gives the exact sizes bisection found).

No label overprints another, a marker or the axes: a label that finds no free place is
left out (the tables under the picture give every figure), a flip's label takes another
row above the plot.  The pictures are drawn 360 units wide and take the column's width, up
to 450 pixels (the stylesheet), so that their text stays readable on a phone's column;
every text from the example or the compiler is escaped.  When several functions' markers
would fall on one another, each series is shifted a few units sideways (by its place
among the functions), so each stays in sight.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from sphinx_jaxhlo.core.flips import Flip, PointFigure, SweepMap
from sphinx_jaxhlo.core.sizes import format_bytes

__all__ = ["WIDTH", "compact", "grid_svg", "line_svg", "map_svg", "series_style"]

#: The pictures' width in the units they are drawn in (the stylesheet scales them to the column).
WIDTH = 360
_FONT = 11
_SMALL = 10
#: The width of one character of the pictures' monospace font, per unit of font size.
_CHAR = 0.62
#: The height of a row of flip labels above a line chart (a text box in the browser is about 1.4 font sizes tall).
_ROW = 15
#: The room under the lowest decade of a line chart for the 0 B row (two labels' height apart).
_ZERO_BAND = 20
_GOOD = "#1a7f37"
_BAD = "#cf222e"
_MUTED = "#8c959f"
#: Cell colours of a grid, for the categories in order of appearance (fused and the rest have their own).
_FILLS = ("#fbd38d", "#b6d4fe", "#e9c6f5", "#d9e8a6", "#f8c4b4", "#c9ece3")
_FIXED = {"fused": "#b7e4c0", "no reduction": "#e1e4e8", "compile error": "#f4b8b4", "no report": "#ffffff",
          "missing": "#ffffff"}
#: Each series' marker shape and colour, in the order of the functions (readable on light and dark).
_SHAPES = ("circle", "square", "diamond", "triangle")
_COLOURS = ("#0969da", "#bc4c00", "#8250df", "#1a7f37", "#bf3989", "#57606a")


def series_style(number: int) -> tuple[str, str]:
    """The marker shape and colour of the ``number``-th function of a sweep."""
    return _SHAPES[number % len(_SHAPES)], _COLOURS[(number + number // len(_SHAPES)) % len(_COLOURS)]


class _Room:
    """The boxes already drawn on: a label goes only where it overlaps none."""

    def __init__(self) -> None:
        self.boxes: list[tuple[float, float, float, float]] = []

    def free(self, x0: float, y0: float, x1: float, y1: float) -> bool:
        return all(x1 <= a or x0 >= c or y1 <= b or y0 >= d for a, b, c, d in self.boxes)

    def take(self, x0: float, y0: float, x1: float, y1: float) -> None:
        self.boxes.append((x0, y0, x1, y1))


def _text_box(x: float, y: float, text: str, size: float, anchor: str = "middle") -> tuple[float, float, float, float]:
    """The box of a text drawn at baseline ``y``, with a margin."""
    width = len(text) * size * _CHAR
    left = x - width / 2 if anchor == "middle" else x - width if anchor == "end" else x
    return left - 2, y - size * 0.85, left + width + 2, y + size * 0.25


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
    parts = [f"{figure.point.label}{' (bisection)' if figure.point.probe else ''}: {figure.status}"]
    if figure.value is not None:
        parts.append(f"{figure.measure} {format_bytes(figure.value)}")
    if figure.largest:
        parts.append(f"largest stored {figure.largest} ({format_bytes(figure.largest_bytes)})")
    if figure.kernels is not None:
        parts.append(f"{figure.kernels} kernel{'s' if figure.kernels != 1 else ''}")
    if figure.error:
        parts.append(figure.error)
    return ", ".join(parts)


def _marker(shape: str, x: float, y: float, colour: str, fill: str, scale: float = 1.0,
            dashed: bool = False) -> str:
    """A series' marker; ``fill``: ``solid``, ``hollow`` or ``faint``."""
    paint = {"solid": f'fill="{colour}"', "hollow": 'fill="Canvas"',
             "faint": f'fill="{colour}" fill-opacity="0.28"'}[fill]
    width = 2.2 if fill == "hollow" else 1.3
    paint += f' stroke="{colour}" stroke-width="{width}"' + (' stroke-dasharray="2 1.5"' if dashed else "")
    r = 5.5 * scale
    if shape == "square":
        side = r * 1.8
        return f'<rect x="{x - side / 2:.1f}" y="{y - side / 2:.1f}" width="{side:.1f}" height="{side:.1f}" {paint}/>'
    if shape == "diamond":
        d = r * 1.2
        return (f'<path d="M{x:.1f},{y - d:.1f} L{x + d:.1f},{y:.1f} L{x:.1f},{y + d:.1f} L{x - d:.1f},{y:.1f} z" '
                f'{paint}/>')
    if shape == "triangle":
        d = r * 1.2
        return (f'<path d="M{x:.1f},{y - d:.1f} L{x + d:.1f},{y + d * 0.75:.1f} L{x - d:.1f},{y + d * 0.75:.1f} z" '
                f'{paint}/>')
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" {paint}/>'


def _fill(status: str, verdicts: bool) -> str:
    if not verdicts:
        return "solid"
    return "solid" if status == "fused" else "hollow" if status == "unfused" else "faint"


def flip_label(numbers: Sequence[int], flip: Flip) -> str:
    """``1: 4999|5000`` for a flip located exactly, ``1`` for one between two sizes further apart;
    ``1,4: 1472|1473`` for flips of several functions between the same two sizes."""
    listed = ",".join(map(str, numbers))
    return f"{listed}: {flip.low}|{flip.high}" if flip.exact else listed


def line_svg(sweep: SweepMap, target: str, flips: Sequence[Flip], uid: str, title: str, *,
             verdicts: bool = True) -> str:
    """The map of one target of a sweep of one symbol (see the module's rules).

    :param flips: the flips to draw, numbered in this order (as the list under the picture).
    """
    axis = sweep.sweep.axes[0]
    measure = sweep.measure(target)
    series = [(fn, sweep.figures_of(fn, target)) for fn in sweep.functions]
    styles = {fn: series_style(i) for i, (fn, _) in enumerate(series)}
    left, right = 58.0, 14.0
    plot_w = WIDTH - left - right
    sizes = sorted({f.point[axis.name] for _, figs in series for f in figs} | set(axis.values))
    x_lo, x_hi = math.log10(sizes[0]), math.log10(sizes[-1])
    span = max(x_hi - x_lo, 1e-9)
    x_lo, x_hi = x_lo - 0.06 * span, x_hi + 0.06 * span

    def x_of(value: float) -> float:
        return left + plot_w * (math.log10(value) - x_lo) / (x_hi - x_lo)

    # several series side by side: each a few units off the size, by its place among them
    dodge = {fn: (i - (len(series) - 1) / 2) * min(4.0, 12.0 / len(series)) for i, (fn, _) in enumerate(series)}

    # the flips' labels first: the rows they need above the plot decide where the plot starts
    heading = f"{'HBM held' if measure == 'device' else 'temp memory'} (log scale)"
    rows: list[_Room] = []
    placed_flips: list[tuple[list[Flip], list[int], float, int, str]] = []
    # flips of several functions between the same two sizes: one line, one label naming them all
    grouped: dict[tuple[int, int], list[tuple[int, Flip]]] = {}
    for number, flip in enumerate(flips, 1):
        grouped.setdefault((flip.low, flip.high), []).append((number, flip))
    for group in grouped.values():
        numbers, same = [n for n, _ in group], [f for _, f in group]
        flip = same[0]
        x = x_of(math.sqrt(flip.low * flip.high))
        label = flip_label(numbers, flip)
        box = _text_box(x + 3, 0, label, _SMALL, "start")
        if box[2] > WIDTH:  # near the right edge: the label goes to the left of its line
            box = _text_box(x - 3, 0, label, _SMALL, "end")
        row_number = 0
        while True:
            if row_number == len(rows):
                room = _Room()
                if not rows:
                    room.take(*_text_box(left, 0, heading, _FONT, "start"))  # the heading has the first row's left
                rows.append(room)
            if rows[row_number].free(*box):
                rows[row_number].take(*box)
                placed_flips.append((same, numbers, x, row_number, "start" if box[0] > x else "end"))
                break
            row_number += 1
    flip_rows = max(1, len(rows))
    top = 10.0 + _ROW * flip_rows
    plot_h = 196.0

    values = [f.value for _, figs in series for f in figs if f.value]
    y_lo = math.floor(math.log10(min(values))) if values else 3
    y_hi = math.ceil(math.log10(max(values))) if values else 6
    if y_hi - y_lo < 2:
        y_hi, y_lo = y_hi + 1, y_lo - 1
    zero_band = any(f.value == 0 for _, figs in series for f in figs)
    floor = top + plot_h - (_ZERO_BAND if zero_band else 0)

    def y_of(value: int | None) -> float:
        if not value:
            return top + plot_h
        return floor - (floor - top - 14) * (math.log10(value) - y_lo) / (y_hi - y_lo)

    out: list[str] = []
    room = _Room()
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
    # a label under each of the sweep's sizes that has room, the sizes on either side of a flip first
    ends = {v for flip in flips for v in (flip.low, flip.high)}
    ticks: list[_Room] = [_Room(), _Room()]  # two rows of labels
    for value in sorted(axis.values, key=lambda v: v not in ends):
        x = x_of(value)
        label = compact(value)
        out.append(f'<line x1="{x:.1f}" y1="{top + plot_h:.1f}" x2="{x:.1f}" y2="{top + plot_h + 4:.1f}" '
                   f'stroke="currentColor" stroke-opacity="0.6"/>')
        for row, taken in enumerate(ticks):
            y = top + plot_h + 15 + 11 * row
            box = _text_box(x, y, label, _SMALL)
            if taken.free(*box):
                out.append(f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle" font-size="{_SMALL}" '
                           f'fill="currentColor">{_esc(label)}</text>')
                taken.take(*box)
                break
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h + 40:.1f}" text-anchor="middle" '
               f'font-size="{_FONT}" fill="currentColor">{_esc(axis.title)} (log scale)</text>')
    out.append(f'<text x="{left:.1f}" y="{11:.1f}" font-size="{_FONT}" fill="currentColor">{_esc(heading)}</text>')
    # flips: a dashed line halfway (on the log scale) between the two sizes, its label in its row above the plot
    several = len(series) > 1
    for same, numbers, x, row_number, anchor in placed_flips:
        room.take(x - 1.5, top, x + 1.5, top + plot_h)  # no label over a flip's line
        functions = list(dict.fromkeys(f.function for f in same))
        colour = (styles[functions[0]][1] if len(functions) == 1 else "currentColor") if several else _BAD
        y = 11.0 + _ROW * row_number
        tip = "; ".join(f"flip {number}" + (f" ({flip.function})" if several else "") + f", between {flip.between}: "
                        + "; ".join(flip.changes) for number, flip in zip(numbers, same, strict=True))
        out.append(f'<g class="jaxhlo-sweep-flip" data-function="{_esc(", ".join(functions))}">'
                   f'<title>{_esc(tip)}</title>'
                   f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{top + plot_h:.1f}" stroke="{colour}" '
                   f'stroke-width="1.5" stroke-dasharray="5 4"/><line x1="{x:.1f}" y1="{y + 2:.1f}" x2="{x:.1f}" '
                   f'y2="{top:.1f}" stroke="{colour}" stroke-opacity="0.5"/>'
                   f'<text x="{x + 3 if anchor == "start" else x - 3:.1f}" y="{y:.1f}" text-anchor="{anchor}" '
                   f'font-size="{_SMALL}" fill="{colour}">{_esc(flip_label(numbers, same[0]))}</text></g>')
    # the series: lines and markers first (their boxes taken), then the labels where they fit
    labels: list[tuple[float, float, str, str]] = []
    for function, figures in series:
        shape, colour = styles[function]
        drawn = [(x_of(f.point[axis.name]) + dodge[function], y_of(f.value)) for f in figures if f.status in
                 ("fused", "unfused", "no reduction")]
        drawn.sort()
        if len(drawn) > 1:
            path = " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y:.1f}" for i, (x, y) in enumerate(drawn))
            out.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-opacity="0.45"/>')
        for figure in sorted(figures, key=lambda f: f.point[axis.name]):
            x = x_of(figure.point[axis.name]) + dodge[function]
            tip = f"<title>{_esc((function + ' ' if several else '') + _tooltip(figure))}</title>"
            status = figure.status
            scale = 0.7 if figure.point.probe else 1.0
            data = (f'data-function="{_esc(function)}" data-size="{figure.point[axis.name]}"'
                    + (f' data-probe="{_esc(figure.point.probe)}"' if figure.point.probe else ""))
            kind = f"jaxhlo-sweep-point jaxhlo-sweep-{status.replace(' ', '-')}"
            if status in ("compile error", "no report"):
                y = top + 8
                mark = (_marker(shape, x, y, colour, "hollow", scale, dashed=True)
                        + f'<path d="M{x - 5:.1f},{y - 5:.1f} L{x + 5:.1f},{y + 5:.1f} M{x + 5:.1f},{y - 5:.1f} '
                        f'L{x - 5:.1f},{y + 5:.1f}" stroke="{colour}" stroke-width="2"/>'
                        if status == "compile error" else
                        f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle" font-size="{_FONT}" '
                        f'fill="{colour}">?</text>')
                room.take(x - 7, y - 7, x + 7, y + 7)
                out.append(f'<g class="{kind}" {data}>{tip}{mark}</g>')
                continue
            if status == "missing":
                continue
            y = y_of(figure.value)
            room.take(x - 7 * scale, y - 7 * scale, x + 7 * scale, y + 7 * scale)
            out.append(f'<g class="{kind}" {data} data-bytes="{figure.value}">{tip}'
                       f'{_marker(shape, x, y, colour, _fill(status, verdicts), scale)}</g>')
            if status == "unfused" and verdicts and figure.largest_bytes and not figure.point.probe:
                labels.append((x, y, format_bytes(figure.largest_bytes), colour if several else _BAD))
    for x, y, text, colour in labels:
        width = len(text) * _SMALL * _CHAR
        x = min(max(x, left + width / 2 + 3), WIDTH - width / 2 - 3)  # inside the plot, beside its marker
        for ty in (y - 10, y + 17):
            box = _text_box(x, ty, text, _SMALL)
            if box[1] >= top and box[3] <= top + plot_h and room.free(*box):
                room.take(*box)
                out.append(f'<text class="jaxhlo-sweep-label" x="{x:.1f}" y="{ty:.1f}" text-anchor="middle" '
                           f'font-size="{_SMALL}" fill="{colour}">{_esc(text)}</text>')
                break
    # the legend: what the fills say, then each function's marker; an item that does not fit starts a row
    items: list[tuple[str, str, str, str]] = []
    if verdicts:
        items += [("circle", "currentColor", "solid", "fused"), ("circle", "currentColor", "hollow",
                                                                 "unfused (label: largest stored)"),
                  ("circle", "currentColor", "faint", "no reduction")]
    if any(f.status == "compile error" for _, figs in series for f in figs):
        items += [("cross", "currentColor", "", "error")]  # keyed only where a marker is crossed out
    if sweep.probes:
        items.append(("small", "currentColor", "solid", "bisection"))
    legend_rows: list[list[tuple[float, tuple[str, str, str, str]]]] = [[]]
    x = 8.0
    for item in items:
        width = 24 + len(item[3]) * _SMALL * _CHAR
        if x + width > WIDTH and legend_rows[-1]:
            legend_rows.append([])
            x = 8.0
        legend_rows[-1].append((x, item))
        x += width
    if several:
        legend_rows.append([])
        x = 8.0
        for function, _ in series:
            text = function if len(function) <= 30 else function[:29] + "…"
            width = 26 + len(text) * _SMALL * _CHAR
            if x + width > WIDTH and legend_rows[-1]:
                legend_rows.append([])
                x = 8.0
            shape, colour = styles[function]
            legend_rows[-1].append((x, (shape, colour, "solid", text)))
            x += width
    y = top + plot_h + 58
    for legend_row in legend_rows:
        for x, (shape, colour, fill, text) in legend_row:
            if shape == "cross":
                out.append(f'<path d="M{x:.1f},{y - 4:.1f} L{x + 8:.1f},{y + 4:.1f} M{x + 8:.1f},{y - 4:.1f} '
                           f'L{x:.1f},{y + 4:.1f}" stroke="{colour}" stroke-width="2"/>')
            else:
                small = shape == "small"
                out.append(_marker("circle" if small else shape, x + 5, y, colour, fill, 0.7 if small else 1.0))
            out.append(f'<text class="jaxhlo-sweep-legend" x="{x + 14:.1f}" y="{y + 4:.1f}" font-size="{_SMALL}" '
                       f'fill="currentColor">{_esc(text)}</text>')
        y += 16
    return _svg(uid, title, y - 4, "".join(out))


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
    figures = {f.point.index: f for f in sweep.figures_of(function, target) if not f.point.probe}
    kinds = categories(list(figures.values()))
    left, top = 62.0, 20.0
    cols, rows = len(across.values), len(up.values)
    cell_w = (WIDTH - left - 10) / cols
    cell_h = max(22.0, min(40.0, 240.0 / rows))
    plot_h = cell_h * rows
    chars = int((WIDTH - 30) / (_SMALL * _CHAR))
    lines = {key: _lines(words, chars) for key, (_, words) in kinds.items()}
    legend = sum(4 + 12 * len(v) for v in lines.values()) + 8
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
    # the boundary: between the two neighbouring cells whose sizes hold the flip (bisection's
    # flips, between sizes of their own, on the segment of the cells around them)
    segments: dict[tuple[str, int, int], list[Flip]] = {}
    for flip in flips:
        i, j = _cell_of(across.values, flip.before[across.name]), _cell_of(up.values, flip.before[up.name])
        segments.setdefault((flip.axis, i, j), []).append(flip)
    for (axis, i, j), group in segments.items():
        x, y = cell(i, j)
        if axis == across.name:
            segment = f"M{x + cell_w:.1f},{y:.1f} V{y + cell_h:.1f}"
        else:
            segment = f"M{x:.1f},{y:.1f} H{x + cell_w:.1f}"
        # a verdict or a producer that changes is the boundary; a kernel count or an error, a thin dashed line
        decision = any({"reduction", "producer"} & set(flip.kinds) for flip in group)
        stroke = 'stroke-width="3.5"' if decision else 'stroke-width="1.5" stroke-dasharray="4 3"'
        tip = "; ".join(f"between {flip.between}: " + "; ".join(flip.changes) for flip in group)
        out.append(f'<path class="jaxhlo-sweep-boundary" d="{segment}" stroke="{_BAD}" {stroke} '
                   f'stroke-linecap="round"><title>{_esc(tip)}</title></path>')
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
    for key, (fill, _) in kinds.items():
        out.append(f'<rect x="8" y="{y - 9:.1f}" width="12" height="12" fill="{fill}" stroke="currentColor" '
                   f'stroke-opacity="0.4"/>')
        for line in lines[key]:  # a long category wraps under itself
            out.append(f'<text x="26" y="{y + 1:.1f}" font-size="{_SMALL}" fill="currentColor">{_esc(line)}</text>')
            y += 12
        y += 4
    if any({"reduction", "producer"} & set(f.kinds) for f in flips):
        out.append(f'<path d="M{WIDTH - 250:.1f},{top - 11:.1f} h14" stroke="{_BAD}" stroke-width="3.5"/>'
                   f'<text x="{WIDTH - 232:.1f}" y="{top - 7:.1f}" font-size="{_SMALL}" fill="currentColor">'
                   f'verdict or producer flips</text>')
    if any(not {"reduction", "producer"} & set(f.kinds) for f in flips):
        out.append(f'<path d="M{WIDTH - 60:.1f},{top - 11:.1f} h14" stroke="{_BAD}" stroke-width="1.5" '
                   f'stroke-dasharray="4 3"/><text x="{WIDTH - 42:.1f}" y="{top - 7:.1f}" font-size="{_SMALL}" '
                   f'fill="currentColor">other</text>')
    return _svg(uid, title, height, "".join(out))


def _cell_of(values: Sequence[int], size: int) -> int:
    """The index of the last of the sweep's sizes at or below ``size``."""
    return max((i for i, v in enumerate(values) if v <= size), default=0)


def _lines(text: str, chars: int) -> list[str]:
    """``text`` in lines of at most ``chars`` characters, broken at spaces (a word longer than a
    line has a line of its own, clipped)."""
    out: list[str] = []
    for word in text.split():
        word = word if len(word) <= chars else word[: chars - 1] + "…"
        if out and len(out[-1]) + 1 + len(word) <= chars:
            out[-1] += " " + word
        else:
            out.append(word)
    return out or [""]


def map_svg(sweep: SweepMap, function: str, target: str, uid: str, title: str, *, verdicts: bool = True) -> str:
    """The map of one target: a line for one symbol, a grid for two (one function each)."""
    if sweep.sweep.is_grid:
        return grid_svg(sweep, function, target, sweep.flips_of(function, target), uid, title)
    flips = [f for f in sweep.flips if f.target == target]
    return line_svg(sweep, target, flips, uid, title, verdicts=verdicts)

