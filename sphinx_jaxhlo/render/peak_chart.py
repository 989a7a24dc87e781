"""The memory timeline as SVG, drawn here (no plotting library, no script): the memory in use
across the program order, its bands stacked (:func:`sphinx_jaxhlo.render.peak.bands`): what
is held for the whole run at the bottom, then the largest buffers at the peak over the steps
they take memory, then the other temporaries; a dashed line marks the peak.

The steps run left to right in the order XLA scheduled them (a loop's body once, where the
loop runs), the bytes up on a linear scale from zero.  A long program is drawn in at most
:data:`COLUMNS` columns, each showing its step of most use, so the peak is always drawn.  The
picture is 420 units wide and readable at that width, in the page's chart style (the sweep
map's, :mod:`sphinx_jaxhlo.render.sweep_chart`); every text from the example or the compiler
is escaped.
"""

from __future__ import annotations

import html

from sphinx_jaxhlo.core.report import Report
from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.render.peak import bands, columns, stack
from sphinx_jaxhlo.render.sweep_chart import WIDTH

__all__ = ["COLUMNS", "timeline_svg"]

#: The most columns drawn.
COLUMNS = 140
_FONT = 11
_SMALL = 10
_BAD = "#cf222e"
#: Fills of the bands: held for the whole run, the buffers in order, the other temporaries.
_HELD = "#c9d1d9"
_BUFFERS = ("#f4a7a0", "#9ec5fe", "#fbd38d")
_OTHER = "#e6e9ed"


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


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
    keys = sum(1 for k in range(len(drawn)) if any(h[k] for h in heights))
    legend_top = top + plot_h + 42
    height = legend_top + 16 * keys + 4
    width = plot_w / len(cols)
    ceiling = max(peak.bytes, 1) * 1.08

    def y_of(value: float) -> float:
        return top + plot_h - plot_h * value / ceiling

    out: list[str] = []
    # gridlines and the axis labels: zero, half the peak, the peak
    for value in (0, peak.bytes / 2, peak.bytes):
        y = y_of(value)
        out.append(f'<line x1="{left:.1f}" y1="{y:.1f}" x2="{WIDTH - right:.1f}" y2="{y:.1f}" '
                   f'stroke="currentColor" stroke-opacity="0.15"/><text x="{left - 6:.1f}" y="{y + 4:.1f}" '
                   f'text-anchor="end" font-size="{_SMALL}" fill="currentColor">{_esc(format_bytes(value))}</text>')
    # the bands, bottom up: one path per band, a rectangle per run of columns of equal height
    for k, band in enumerate(drawn):
        runs: list[str] = []
        c = 0
        while c < len(cols):
            low = sum(heights[c][:k])
            high = low + heights[c][k]
            end = c + 1
            while end < len(cols) and sum(heights[end][:k]) == low and heights[end][k] == heights[c][k]:
                end += 1
            if heights[c][k] > 0:
                x0, x1 = left + c * width, left + end * width
                y0, y1 = y_of(low), y_of(high)
                runs.append(f"M{x0:.1f},{y0:.1f}H{x1:.1f}V{y1:.1f}H{x0:.1f}Z")
            c = end
        if runs:
            out.append(f'<path class="jaxhlo-timeline-band jaxhlo-timeline-{band.kind}" d="{"".join(runs)}" '
                       f'fill="{fills[k]}" stroke="currentColor" stroke-opacity="0.25" stroke-width="0.6">'
                       f'<title>{_esc(band.label)}</title></path>')
    out.append(f'<path d="M{left:.1f},{top:.1f} V{top + plot_h:.1f} H{WIDTH - right:.1f}" fill="none" '
               f'stroke="currentColor" stroke-opacity="0.6"/>')
    # the peak: a dashed line through its column, its figure above the plot
    at = next(c for c, (first, last, _) in enumerate(cols) if first <= peak.step <= last)
    x = left + (at + 0.5) * width
    label = f"peak {format_bytes(peak.bytes)}, step {peak.step}"
    anchor = "end" if x > left + plot_w * 0.6 else "start" if x < left + plot_w * 0.4 else "middle"
    out.append(f'<g class="jaxhlo-timeline-peak"><line x1="{x:.1f}" y1="{top - 4:.1f}" x2="{x:.1f}" '
               f'y2="{top + plot_h:.1f}" stroke="{_BAD}" stroke-width="1.5" stroke-dasharray="5 4"/>'
               f'<text x="{x:.1f}" y="{top - 8:.1f}" text-anchor="{anchor}" font-size="{_SMALL}" fill="{_BAD}">'
               f'{_esc(label)}</text></g>')
    # the steps: the first, the peak's and the last, where they have room
    ticks = [(left + 0.5 * width, 0, "start"), (x, peak.step, "middle"),
             (left + (len(cols) - 0.5) * width, peak.steps - 1, "end")]
    placed: list[tuple[float, float]] = []
    for tx, step, side in ticks:
        text = str(step)
        half = len(text) * _SMALL * 0.31
        lo, hi = {"start": (tx, tx + 2 * half), "end": (tx - 2 * half, tx), "middle": (tx - half, tx + half)}[side]
        if any(lo < b + 6 and hi > a - 6 for a, b in placed):
            continue
        placed.append((lo, hi))
        out.append(f'<line x1="{tx:.1f}" y1="{top + plot_h:.1f}" x2="{tx:.1f}" y2="{top + plot_h + 4:.1f}" '
                   f'stroke="currentColor" stroke-opacity="0.6"/><text x="{tx:.1f}" y="{top + plot_h + 15:.1f}" '
                   f'text-anchor="{side}" font-size="{_SMALL}" fill="currentColor">{_esc(text)}</text>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h + 30:.1f}" text-anchor="middle" '
               f'font-size="{_FONT}" fill="currentColor">program order (step, of {peak.steps})</text>')
    memory = {"tpu": "HBM", "cpu": "host memory"}.get(report.target.split(":", 1)[0], "device memory")
    out.append(f'<text x="8" y="13" font-size="{_FONT}" fill="currentColor">{_esc(memory)} in use, '
               f'linear scale</text>')
    # the legend, top band first
    y = legend_top
    for k in reversed(range(len(drawn))):
        band = drawn[k]
        if not any(h[k] for h in heights):
            continue  # no area (no other temporaries, say): no key either
        size = f"{format_bytes(band.bytes)}: " if band.kind != "other" else ""
        out.append(f'<g><title>{_esc(size + band.label)}</title><rect x="8" y="{y - 9:.1f}" width="12" height="12" '
                   f'fill="{fills[k]}" stroke="currentColor" stroke-opacity="0.4"/><text x="26" y="{y + 1:.1f}" '
                   f'font-size="{_SMALL}" fill="currentColor">{_esc(_clip(size + band.label, 64))}</text></g>')
        y += 16
    name = f"{_esc(uid)}-title"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="jaxhlo-graph-svg jaxhlo-timeline-svg" width="{WIDTH}" '
            f'height="{height:.0f}" viewBox="0 0 {WIDTH} {height:.0f}" role="img" aria-labelledby="{name}" '
            f'font-family="ui-monospace, SFMono-Regular, Menlo, Consolas, monospace">'
            f'<title id="{name}">{_esc(title)}</title>{"".join(out)}</svg>')
