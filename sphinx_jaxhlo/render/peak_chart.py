"""The memory timeline as SVG, drawn here (no plotting library, no script): the memory in use
across the program order, its bands stacked (:func:`sphinx_jaxhlo.render.peak.bands`): what
is held for the whole run at the bottom, then the largest buffers at the peak over the steps
they take memory, then the other temporaries; a dashed line marks the peak.

The steps run left to right in the order XLA scheduled them (a loop's body once, where the
loop runs), the bytes up on a linear scale from zero.  A long program is drawn in at most
:data:`COLUMNS` columns, each showing its step of most use, so the peak is always drawn.  The
picture is as wide as the page's other charts (the sweep map's,
:mod:`sphinx_jaxhlo.render.sweep_chart`) and readable at that width: a legend's text is measured
in characters of the monospace font (:data:`CHAR_WIDTH` of the font size each) and wrapped at
spaces to the picture's width, never cut.  Each band is one outline (its upper edge left to
right, its lower edge back), with its stroke given once for all: the picture weighs little on a
page of many.  Every text from the example or the compiler is escaped.
"""

from __future__ import annotations

import html
from typing import Any

from sphinx_jaxhlo.core.report import Report
from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.render.peak import bands, columns, stack
from sphinx_jaxhlo.render.rows import memory_name
from sphinx_jaxhlo.render.sweep_chart import WIDTH

__all__ = ["CHAR_WIDTH", "COLUMNS", "timeline_svg", "wrap_label"]

#: The most columns drawn.
COLUMNS = 100
#: The advance of a character of the monospace fonts the picture names (Menlo, Consolas, DejaVu
#: Sans Mono: 0.55 to 0.602 of the font size), with room to spare.
CHAR_WIDTH = 0.62
_FONT = 11
_SMALL = 10
_BAD = "#cf222e"
#: Fills of the bands: held for the whole run, the buffers in order, the other temporaries.
_HELD = "#c9d1d9"
_BUFFERS = ("#f4a7a0", "#9ec5fe", "#fbd38d")
_OTHER = "#e6e9ed"


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _n(value: float) -> str:
    """A coordinate, short: ``12`` (a whole unit is a pixel or more where the picture is drawn:
    finer coordinates would only weigh on the page)."""
    return str(round(value))


def wrap_label(text: str, chars: int) -> list[str]:
    """``text`` in lines of at most ``chars`` characters, broken after spaces (a word longer
    than a line, a shape, say, is broken where it must)."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        while len(word) > chars:
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:chars])
            word = word[chars:]
        if line and len(line) + 1 + len(word) > chars:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines or [""]


def _outline(lower: list[float], upper: list[float], first: int, end: int, x_of: Any, y_of: Any) -> str:
    """The outline of a band over columns ``first`` to ``end - 1``: its upper edge left to
    right, its lower edge back, a horizontal step only where the edge then moves."""
    d = f"M{_n(x_of(first))},{_n(y_of(lower[first]))}V{_n(y_of(upper[first]))}"
    for c in range(first + 1, end):
        if _n(y_of(upper[c])) != _n(y_of(upper[c - 1])):
            d += f"H{_n(x_of(c))}V{_n(y_of(upper[c]))}"
    d += f"H{_n(x_of(end))}V{_n(y_of(lower[end - 1]))}"
    for c in range(end - 1, first, -1):
        if _n(y_of(lower[c - 1])) != _n(y_of(lower[c])):
            d += f"H{_n(x_of(c))}V{_n(y_of(lower[c - 1]))}"
    return d + "Z"


def timeline_svg(report: Report, uid: str, title: str) -> str:
    """The timeline of one report (see the module's rules); ``""`` without a live list."""
    peak = report.live_at_peak
    if peak is None or peak.steps <= 0:
        return ""
    drawn = bands(peak)
    fills = []
    buffers = 0
    for band in drawn:
        if band.kind == "held":
            fills.append(_HELD)
        elif band.kind == "other":
            fills.append(_OTHER)
        else:
            fills.append(_BUFFERS[buffers % len(_BUFFERS)])
            buffers += 1
    left, right, top = 62.0, 12.0, 34.0
    plot_h = 150.0
    plot_w = WIDTH - left - right
    cols = columns(peak, COLUMNS)
    heights = [stack(peak, drawn, shown) for _, _, shown in cols]
    chars = int((WIDTH - 26 - 4) / (_SMALL * CHAR_WIDTH))
    keys = [k for k in reversed(range(len(drawn))) if any(h[k] for h in heights)]  # no area, no key
    texts = {k: wrap_label((f"{format_bytes(drawn[k].bytes)}: " if drawn[k].kind != "other" else "")
                           + drawn[k].label, chars) for k in keys}
    legend_top = top + plot_h + 42
    height = legend_top + sum(4 + 12 * len(texts[k]) for k in keys) + 4
    width = plot_w / len(cols)
    ceiling = max(peak.bytes, 1) * 1.08

    def y_of(value: float) -> float:
        return top + plot_h - plot_h * value / ceiling

    out: list[str] = []
    # gridlines (one path, its stroke given once) and the axis labels: zero, half the peak, the peak
    levels = [y_of(value) for value in (0, peak.bytes / 2, peak.bytes)]
    out.append('<path d="' + "".join(f"M{_n(left)},{_n(y)}H{_n(WIDTH - right)}" for y in levels)
               + '" stroke="currentColor" stroke-opacity="0.15"/><g text-anchor="end">'
               + "".join(f'<text x="{_n(left - 6)}" y="{_n(y + 4)}">{_esc(format_bytes(value))}</text>'
                         for y, value in zip(levels, (0, peak.bytes / 2, peak.bytes), strict=True)) + "</g>")
    # the bands, bottom up: one outline per run of columns where the band has area
    def x_of(c: float) -> float:
        return left + c * width

    bands_svg: list[str] = []
    for k, band in enumerate(drawn):
        lower = [float(sum(h[:k])) for h in heights]
        upper = [lower[c] + heights[c][k] for c in range(len(cols))]
        runs: list[str] = []
        c = 0
        while c < len(cols):
            if heights[c][k] <= 0:
                c += 1
                continue
            end = c
            while end < len(cols) and heights[end][k] > 0:
                end += 1
            runs.append(_outline(lower, upper, c, end, x_of, y_of))
            c = end
        if runs:
            # no title of its own: the legend names it, with its size
            bands_svg.append(f'<path class="jaxhlo-band-{band.kind}" d="{"".join(runs)}" '
                             f'fill="{fills[k]}"/>')
    out.append(f'<g stroke="currentColor" stroke-opacity="0.25" stroke-width="0.6">{"".join(bands_svg)}</g>')
    out.append(f'<path d="M{_n(left)},{_n(top)}V{_n(top + plot_h)}H{_n(WIDTH - right)}" fill="none" '
               f'stroke="currentColor" stroke-opacity="0.6"/>')
    # the peak: a dashed line through its column, its figure above the plot
    at = next(c for c, (first, last, _) in enumerate(cols) if first <= peak.step <= last)
    x = left + (at + 0.5) * width
    label = f"peak {format_bytes(peak.bytes)}, step {peak.step}"
    anchor = "end" if x > left + plot_w * 0.6 else "start" if x < left + plot_w * 0.4 else "middle"
    out.append(f'<g class="jaxhlo-timeline-peak"><path d="M{_n(x)},{_n(top - 4)}V{_n(top + plot_h)}" '
               f'stroke="{_BAD}" stroke-width="1.5" stroke-dasharray="5 4"/>'
               f'<text x="{_n(x)}" y="{_n(top - 8)}" text-anchor="{anchor}" fill="{_BAD}">'
               f'{_esc(label)}</text></g>')
    # the steps: the first, the peak's and the last, where they have room
    ticks = [(left + 0.5 * width, 0, "start"), (x, peak.step, "middle"),
             (left + (len(cols) - 0.5) * width, peak.steps - 1, "end")]
    placed: list[tuple[float, float]] = []
    marks, labels = [], []
    for tx, step, side in ticks:
        text = str(step)
        half = len(text) * _SMALL * 0.31
        lo, hi = {"start": (tx, tx + 2 * half), "end": (tx - 2 * half, tx), "middle": (tx - half, tx + half)}[side]
        if any(lo < b + 6 and hi > a - 6 for a, b in placed):
            continue
        placed.append((lo, hi))
        marks.append(f"M{_n(tx)},{_n(top + plot_h)}v4")
        labels.append(f'<text x="{_n(tx)}" y="{_n(top + plot_h + 15)}" text-anchor="{side}">{_esc(text)}</text>')
    out.append(f'<path d="{"".join(marks)}" stroke="currentColor" stroke-opacity="0.6"/>{"".join(labels)}')
    # the axis says what a step is (the legend of the picture: no paragraph of its own under it)
    axis = f"{peak.steps} steps in XLA's order (a loop's body once)"
    if len(axis) * _FONT * CHAR_WIDTH > WIDTH - 16:
        axis = f"{peak.steps} steps in XLA's order"
    out.append(f'<text x="{_n(WIDTH / 2)}" y="{_n(top + plot_h + 30)}" text-anchor="middle" '
               f'font-size="{_FONT}">{_esc(axis)}</text>')
    out.append(f'<text x="8" y="13" font-size="{_FONT}">{_esc(memory_name(report.target))} '
               'in use, linear scale</text>')
    # the legend, top band first, each text wrapped to the picture's width
    y = legend_top
    swatches, keyed = [], []
    for k in keys:
        lines = texts[k]
        swatches.append(f'<path d="M8,{_n(y - 9)}h12v12h-12z" fill="{fills[k]}"/>')
        # a text per line: a browser measures a text of several lines as if on one
        keyed += [f'<text x="26" y="{_n(y + 1 + 12 * i)}">{_esc(line)}</text>' for i, line in enumerate(lines)]
        y += 4 + 12 * len(lines)
    out.append(f'<g stroke="currentColor" stroke-opacity="0.4">{"".join(swatches)}</g>'
               f'<g class="jaxhlo-timeline-key">{"".join(keyed)}</g>')
    name = f"{_esc(uid)}-title"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="jaxhlo-graph-svg jaxhlo-timeline-svg" width="{WIDTH}" '
            f'height="{height:.0f}" viewBox="0 0 {WIDTH} {height:.0f}" role="img" aria-labelledby="{name}" '
            f'font-family="monospace" font-size="{_SMALL}" '
            f'fill="currentColor">'
            f'<title id="{name}">{_esc(title)}</title>{"".join(out)}</svg>')
