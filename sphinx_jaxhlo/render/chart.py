"""The variants chart as plain data: one panel per measure, the bars grouped by target.

An example with several functions draws, under its variants table, what that
table shows of each (function, target): the figure to act on, one per target for
all its variants (``core.memory.acting_figure``: the HBM a TPU
holds, else temp memory).  The rules it follows:

- **One measure per axis.**  Temp memory and the memory a device holds are
  different measures (what it holds also counts the arguments, outputs and code),
  so each gets a panel of its own, with its own axis and scale; a temp bar and a
  device bar never share an axis.
- **Bars grouped by target**, each labelled with its function only.  The ratio
  in brackets is to the smallest value on the same target, so ``8.9×`` reads
  "this variant needs 8.9 times what the leanest variant needs here"; a target
  with one bar gets no ratio.
- **The arguments and outputs drawn lighter** in a device bar: the part of
  what it holds that the program is given and returns (arguments plus outputs,
  less what they share), which a variant of the same call rarely changes.
- **The scale** of a panel is linear when its positive values are within 100×
  of each other, else logarithmic (``chart_scale``; ``:chart-scale:`` decides
  instead).

No docutils, no Sphinx, no jax.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sphinx_jaxhlo.core.memory import acting_figure
from sphinx_jaxhlo.core.report import Report
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.render.display import Display

__all__ = ["Bar", "BarGroup", "Chart", "Panel", "bar_text", "chart_scale", "variants_chart"]

#: What each measure is called in a panel's title.
MEASURE_TITLES = {"temp": "Temp memory", "device": "HBM held"}


@dataclass(frozen=True)
class Bar:
    """One (function, target): its value in bytes and the text beside the bar."""

    label: str
    value: float
    text: str
    #: Bytes of the bar drawn lighter: the arguments and outputs within what a device holds.
    base: float = 0.0


@dataclass(frozen=True)
class BarGroup:
    """The bars of one target, titled with it."""

    title: str
    bars: tuple[Bar, ...]


@dataclass(frozen=True)
class Panel:
    """The bars of one measure, on one axis."""

    measure: str
    title: str
    scale: str
    groups: tuple[BarGroup, ...]
    note: str

    @property
    def top(self) -> float:
        return max((b.value for g in self.groups for b in g.bars), default=0.0)


@dataclass(frozen=True)
class Chart:
    title: str
    panels: tuple[Panel, ...]


def chart_scale(values: Sequence[float], mode: str = "auto") -> str:
    """``linear`` or ``log``: ``auto`` is linear when the positive values are within
    100x of each other, logarithmic otherwise."""
    if mode in ("linear", "log"):
        return mode
    positive = [v for v in values if v > 0]
    if not positive:
        return "linear"
    return "linear" if max(positive) <= 100 * min(positive) else "log"


def bar_text(value: float, smallest: float) -> str:
    """``604 MB (2.2×)``: the value and its ratio to ``smallest`` (the smallest positive
    value of its target); the value alone when there is nothing to compare it with."""
    if value <= 0 or smallest <= 0:
        return format_bytes(value)
    ratio = value / smallest
    shown = f"{ratio:.1f}" if ratio < 10 else f"{ratio:,.0f}"
    return f"{format_bytes(value)} ({shown}×)"


def io_part(report: Report, held: float) -> float:
    """The arguments and outputs within what a device holds: arguments plus outputs less
    what they share (donated buffers), never more than ``held``."""
    mem = report.memory
    io = (mem.argument_bytes or 0) + (mem.output_bytes or 0) - (mem.alias_bytes or 0)
    return float(max(0, min(io, held)))


def _titles(titles: Sequence[str]) -> str:
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]


def _note(scale: str, measure: str, ratios: bool, based: bool) -> str:
    words = ["Linear scale." if scale == "linear" else
             "Logarithmic scale (the values are over 100× apart), a gridline per factor of ten; "
             "under 1 kB, no bar."]
    if ratios:
        words.append("In brackets: how many times the smallest on its target each value is.")
    if measure == "device":
        words.append("A TPU's temp is 0 B for most programs: what it holds in HBM is drawn, the arguments, "
                     "outputs, temp and code" + (" (the arguments and outputs lighter)." if based else "."))
    return " ".join(words)


def variants_chart(functions: Sequence[str], targets: Sequence[tuple[str, str]],
                   results: dict[tuple[str, str], Result], display: Display) -> Chart | None:
    """The chart of an example with several functions: a panel per measure, in the
    order the targets first show it; ``None`` when no bar would be drawn."""
    by_measure: dict[str, list[BarGroup]] = {}
    for target, title in targets:
        found = [(fn, results.get((fn, target))) for fn in functions]
        compiled = [(fn, r.report) for fn, r in found if r is not None and r.report is not None and not r.report.error]
        if not compiled:
            continue
        # one figure for the target's variants, the one to act on (core.memory), as the table shows
        measure = acting_figure(target, [report.memory for _, report in compiled])
        measured = [(fn, report.memory.figure(measure) or 0, report) for fn, report in compiled]
        positive = [v for _, v, _ in measured if v > 0]
        smallest = min(positive) if len(positive) > 1 else 0.0
        bars = tuple(Bar(fn, float(value), bar_text(value, smallest),
                         io_part(report, value) if measure == "device" else 0.0)
                     for fn, value, report in measured)
        by_measure.setdefault(measure, []).append(BarGroup(title, bars))
    if not any(b.value > 0 for groups in by_measure.values() for g in groups for b in g.bars):
        return None
    panels = []
    for measure, groups in by_measure.items():
        values = [b.value for g in groups for b in g.bars]
        scale = chart_scale(values, display.chart_scale)
        ratios = any("(" in b.text for g in groups for b in g.bars)
        based = any(b.base > 0 for g in groups for b in g.bars)
        title = f"{MEASURE_TITLES[measure]} on {_titles([g.title for g in groups])}"
        panels.append(Panel(measure, title, scale, tuple(groups), _note(scale, measure, ratios, based)))
    title = ("Memory by variant, one panel per measure" if len(panels) > 1
             else f"{MEASURE_TITLES[panels[0].measure]} by variant")
    return Chart(title, tuple(panels))
