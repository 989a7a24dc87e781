"""What is live at the peak, as plain data: the sentence, the table of the buffers and the
timeline's bands and table, which every output writes (the page, other builders, the command
line, ``str()`` of the API's value).

- **The sentence** names the peak's step and what runs there, the memory in use and the largest
  buffer (never the generated code, unless nothing else is there) with its share; on a TPU it
  adds the largest buffer in the chip's own memory, which is not counted.
- **The table** lists the buffers of :attr:`~sphinx_jaxhlo.core.memory.LiveAtPeak.buffers`,
  largest first, the folded ones as one "N others" row, then those in memory the device figure
  does not count, then the total.
- **The timeline's bands** (:func:`bands`): what is held for the whole run (arguments, outputs,
  constants, code: the same at every step); the largest temporaries at the peak (at most
  :data:`BANDS`), each over the steps it takes memory, those of one shape, operation, line and
  steps as one band (``6 × f32[8,512,1024]``: a scan's stacked residuals); and the other
  temporaries (the rest of each step's use).  The
  picture (:mod:`sphinx_jaxhlo.render.peak_chart`) and the timeline's table show the same bands.

No docutils, no Sphinx, no jax.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from sphinx_jaxhlo.core.memory import LiveAtPeak, LiveBuffer, memory_space_name
from sphinx_jaxhlo.core.report import Report
from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.render.rows import Cell, Row, Table, code, lines_text, source_cell

__all__ = ["BANDS", "TIMELINE_ROWS", "Band", "bands", "buffer_words", "columns", "live_table", "peak_sentence",
           "share", "stack", "timeline_table", "use_at"]

#: The most buffers drawn as bands of their own.
BANDS = 3
#: The most rows of the timeline's table (its spans merged to fit, each showing its largest use).
TIMELINE_ROWS = 16


def share(part: int, whole: int) -> str:
    """``99 %``, ``7.4 %``, ``<0.1 %``: a part of the peak."""
    if whole <= 0:
        return ""
    value = 100 * part / whole
    if 0 < value < 0.1:
        return "<0.1 %"
    return f"{value:.1f} %" if value < 10 else f"{value:.0f} %"


def made_by(buffer: LiveBuffer) -> str:
    """What made a buffer, in a reader's words: ``dot_general``, ``argument a``, ``the generated code``."""
    if buffer.kind == "generated code":
        return "the generated code"
    if buffer.kind == "argument" and buffer.producer_op:
        return f"argument {buffer.producer_op}"
    if buffer.note.startswith("a copy of argument"):
        return buffer.note
    what = buffer.producer_op or buffer.producer or buffer.name
    return f"{what} ({buffer.note})" if buffer.note else what


def buffer_words(buffer: LiveBuffer) -> str:
    """``the f32[20000,10000] result of dot_general on line 4``, ``argument a (f32[20000,3])``."""
    if buffer.kind == "generated code":
        return "the generated code"
    lines = f" on {lines_text(buffer.source_lines)}" if buffer.source_lines else ""
    if buffer.kind == "argument" and buffer.producer_op:
        return f"argument {buffer.producer_op} ({buffer.shape})"
    if buffer.note.startswith("a copy of argument"):
        return f"{buffer.note} ({buffer.shape})"
    what = f"the {buffer.shape} result of {buffer.producer_op or buffer.producer}{lines}"
    if buffer.kind == "output":
        what = f"the output, {what}"
    return f"{what} ({buffer.note})" if buffer.note else what


def _memory_words(report: Report) -> str:
    return {"tpu": "HBM", "cpu": "host memory"}.get(report.target.split(":", 1)[0], "device memory")


def peak_sentence(report: Report) -> str:
    """The peak in one or two sentences (the module's rules); ``""`` without a live list."""
    peak = report.live_at_peak
    if peak is None:
        return ""
    running = peak.instruction_op or peak.instruction
    where = f" on {lines_text(peak.source_lines)}" if peak.source_lines else ""
    at = f"step {peak.step} of {peak.steps}" + (f", at {running}{where}" if running else "")
    refused = report.error is not None
    head = (f"At the peak the compiler refused ({at}), the program needs" if refused
            else f"At its peak ({at}), the program holds")
    text = f"{head} {format_bytes(peak.bytes)} of {_memory_words(report)}"
    top = peak.top
    if top is not None:
        text += f"; the largest buffer is {buffer_words(top)}: {format_bytes(top.bytes)}, " \
                f"{share(top.bytes, peak.bytes)} of it."
    else:
        text += "."
    if peak.elsewhere:
        away = peak.elsewhere[0]
        space = memory_space_name(away.memory_space, report.target)
        text += f" Not counted, in {space} memory: {buffer_words(away)}, {format_bytes(away.bytes)}" \
            .replace("on-chip memory", "the chip's own memory")
        more = len(peak.elsewhere) - 1 + peak.elsewhere_others
        text += f", and {more} more." if more else "."
    return text


def live_table(report: Report) -> Table:
    """The buffers live at the peak (the module's rules)."""
    peak = report.live_at_peak
    if peak is None:
        return Table("live", "Live at the peak", (), ())
    spaces = report.target.startswith("tpu") or bool(peak.elsewhere)
    header = ("shape", "size", "of the peak", "kind", "made by", "source", *(("in",) if spaces else ()),
              "live at steps", "HLO")
    rows: list[Row] = []

    def row(buffer: LiveBuffer, counted: bool) -> Row:
        where = (Cell(memory_space_name(buffer.memory_space, report.target)),) if spaces else ()
        live = f"{buffer.live[0]}–{buffer.live[1]}" if len(buffer.live) == 2 else ""
        if buffer.kind in ("argument", "output", "constant", "generated code"):
            live = "the whole run"
        return Row((code(buffer.shape or "—"), Cell(format_bytes(buffer.bytes)),
                    Cell(share(buffer.bytes, peak.bytes) if counted else "not counted"), Cell(buffer.kind),
                    Cell(made_by(buffer)), source_cell(buffer.source_lines), *where, Cell(live),
                    code(buffer.name or "—")), lines=tuple(buffer.source_lines))

    def folded(count: int, size: int, counted: bool) -> Row:
        blank = (Cell(""),) * (len(header) - 3)
        return Row((Cell(f"{count} other{'s' if count != 1 else ''}"), Cell(format_bytes(size)),
                    Cell(share(size, peak.bytes) if counted else "not counted"), *blank))

    rows += [row(b, True) for b in peak.buffers]
    if peak.others:
        rows.append(folded(peak.others, peak.others_bytes, True))
    rows += [row(b, False) for b in peak.elsewhere]
    if peak.elsewhere_others:
        rows.append(folded(peak.elsewhere_others, peak.elsewhere_others_bytes, False))
    rows.append(Row((Cell(f"total, {_memory_words(report)}"), Cell(format_bytes(peak.bytes)), Cell("100 %"),
                     *(Cell(""),) * (len(header) - 3))))
    return Table("live", f"Live at the peak (step {peak.step} of {peak.steps})", header, tuple(rows),
                 total=len(rows), note=peak.note)


@dataclass(frozen=True)
class Band:
    """One band of the timeline: a buffer over the steps it takes memory, or a share of the rest."""

    #: ``buffer``, ``held`` (held for the whole run, no band of its own) or ``other`` (the other
    #: temporaries).
    kind: str
    label: str
    bytes: int = 0
    first: int = 0
    last: int = 0
    #: The buffer it draws, for a ``buffer`` band.
    buffer: LiveBuffer | None = None


def bands(peak: LiveAtPeak) -> list[Band]:
    """The timeline's bands, bottom up: what is held for the whole run, the largest buffers,
    the other temporaries (the module's rules)."""
    groups: dict[tuple[object, ...], list[LiveBuffer]] = {}
    for b in peak.buffers:
        if b.kind == "temp" and len(b.live) == 2:
            groups.setdefault((b.shape, made_by(b), tuple(b.source_lines), tuple(b.live)), []).append(b)
    chosen = sorted(groups.values(), key=lambda g: -sum(b.bytes for b in g))[:BANDS]
    out: list[Band] = []
    if peak.held_bytes > 0:
        out.append(Band("held", "held throughout: arguments, outputs, code", peak.held_bytes, 0, peak.steps - 1))
    for group in sorted(chosen, key=lambda g: (g[0].live[0], -sum(b.bytes for b in g))):
        b = group[0]
        count = f"{len(group)} × " if len(group) > 1 else ""
        where = f", {lines_text(b.source_lines)}" if b.source_lines else ""
        out.append(Band("buffer", f"{count}{b.shape} {made_by(b)}{where}", sum(x.bytes for x in group),
                        b.live[0], b.live[1], b))
    out.append(Band("other", "other temporaries", 0, 0, peak.steps - 1))
    return out


def use_at(peak: LiveAtPeak, step: int) -> int:
    """Memory in use at ``step`` (the timeline's step function)."""
    starts = [p[0] for p in peak.timeline]
    i = bisect.bisect_right(starts, step) - 1
    return peak.timeline[i][1] if i >= 0 else 0


def stack(peak: LiveAtPeak, drawn: Sequence[Band], step: int) -> list[int]:
    """The bytes of each band at ``step`` (the other temporaries: the rest of the step's use)."""
    total = use_at(peak, step)
    out = [b.bytes if b.kind != "other" and b.first <= step <= b.last else 0 for b in drawn]
    if drawn and drawn[-1].kind == "other":
        out[-1] = max(0, total - sum(out[:-1]))
    return out


def columns(peak: LiveAtPeak, count: int) -> list[tuple[int, int, int]]:
    """At most ``count`` columns over the steps: ``(first, last, step shown)``, the step shown
    being the one of most use in the column (so the peak is never lost)."""
    steps = peak.steps
    count = max(1, min(count, steps))
    out = []
    for c in range(count):
        first = c * steps // count
        last = (c + 1) * steps // count - 1
        shown = max(range(first, last + 1), key=lambda s: (use_at(peak, s), -s))
        if first <= peak.step <= last:
            shown = peak.step
        out.append((first, last, shown))
    return out


def timeline_table(report: Report) -> Table:
    """The timeline as a table (what the picture draws): the memory in use over spans of the
    program order, and what each band holds there."""
    peak = report.live_at_peak
    if peak is None:
        return Table("timeline", "Memory in use across the program", (), ())
    drawn = bands(peak)
    spans: list[tuple[int, int]] = []
    for i, (start, _) in enumerate(peak.timeline):
        end = peak.timeline[i + 1][0] - 1 if i + 1 < len(peak.timeline) else peak.steps - 1
        spans.append((start, end))
    spans = _fewer(spans, peak.step, TIMELINE_ROWS)
    measured = []
    for first, last in spans:
        step = max(range(first, last + 1), key=lambda s: (use_at(peak, s), -s))
        if first <= peak.step <= last:
            step = peak.step
        measured.append((first, last, step, stack(peak, drawn, step)))
    # a band with no area gets no column
    shown = [k for k in range(len(drawn)) if any(values[k] for *_, values in measured)]
    header = ("steps", "in use", *(drawn[k].label for k in shown))
    rows = []
    for first, last, step, values in measured:
        label = f"{first}" if first == last else f"{first}–{last}"
        if first <= peak.step <= last:
            label += " (peak)"
        rows.append(Row((Cell(label), Cell(format_bytes(use_at(peak, step))),
                         *(Cell(format_bytes(values[k]) if values[k] else "") for k in shown)),
                        tone="bad" if first <= peak.step <= last else ""))
    return Table("timeline", "Memory in use across the program", header, tuple(rows), total=len(rows),
                 note="Each row: a span of steps of the program order and its largest use, split as the "
                      "picture's bands are.")


def _fewer(spans: list[tuple[int, int]], keep: int, most: int) -> list[tuple[int, int]]:
    """At most ``most`` spans: neighbours joined in groups of equal count, the span holding step
    ``keep`` (the peak) left alone."""
    if len(spans) <= most:
        return spans
    at = next(i for i, (a, b) in enumerate(spans) if a <= keep <= b)
    before, after = spans[:at], spans[at + 1:]
    room = max(2, most - 1)
    left = max(1, round(room * len(before) / max(1, len(before) + len(after)))) if before else 0
    right = max(1, room - left) if after else 0

    def join(part: list[tuple[int, int]], groups: int) -> list[tuple[int, int]]:
        if not part:
            return []
        groups = min(groups, len(part))
        return [(part[g * len(part) // groups][0], part[(g + 1) * len(part) // groups - 1][1])
                for g in range(groups)]

    return [*join(before, left), spans[at], *join(after, right)]
