"""What is live at the peak, as plain data: the sentence, the table of the buffers and the
timeline's bands and table, which every output writes (the page, other builders, the command
line, ``str()`` of the API's value).

- **The sentence** names the peak's step and the JAX operation that runs there (never an HLO
  instruction's name: a copy XLA inserted is said as one), the memory in use and the largest
  buffer (never the generated code, unless nothing else is there) with its share; on a TPU it
  adds the largest buffer in the chip's own memory, which is not counted.
- **The table** lists the buffers of :attr:`~sphinx_jaxhlo.core.memory.LiveAtPeak.buffers`,
  largest first, the folded ones as one "N others" row, then those in memory the device figure
  does not count, then the total; in five columns at most, whose text wraps (what the buffer is,
  its size and share, how long it is held, where, its HLO name), so it fits a page's column;
  buffers alike in all but their names and steps on one row (``3 × f32[16,32,1024]``).  Its
  note says in plain words how the total compares with the figures of the report.
- **The timeline's bands** (:func:`bands`): what is held for the whole run (arguments, outputs,
  constants, code: the same at every step); the largest temporaries at the peak (at most
  :data:`BANDS`), each over the steps it takes memory, those of one shape, operation, line and
  steps as one band (``6 × f32[8,512,1024]``: a scan's stacked residuals); and the other
  temporaries (the rest of each step's use).  The
  picture (:mod:`sphinx_jaxhlo.render.peak_chart`) draws them; the timeline's table has a row
  only where a drawn buffer starts or ends, saying which, with the most in use over its steps.

No docutils, no Sphinx, no jax.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from sphinx_jaxhlo.core.memory import LiveAtPeak, LiveBuffer, memory_space_name
from sphinx_jaxhlo.core.report import Report
from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.render.rows import Cell, Row, Table, code, held_name, lines_text, memory_name

__all__ = ["BANDS", "LISTED", "LISTED_ELSEWHERE", "Band", "bands", "buffer_words", "columns", "live_table",
           "peak_note", "peak_sentence", "share", "stack", "timeline_table", "use_at"]

#: The most buffers drawn as bands of their own.
BANDS = 3
#: The most rows of buffers the table lists at the peak, and of buffers in memory the figure does
#: not count (a TPU's on-chip memory); the rest are one "N others" row each.
LISTED = 5
LISTED_ELSEWHERE = 2


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


def peak_sentence(report: Report) -> str:
    """The peak in one or two sentences (the module's rules); ``""`` without a live list."""
    peak = report.live_at_peak
    if peak is None:
        return ""
    # the operation the user wrote; an instruction of XLA's own (a copy it inserted) is not named
    running = peak.instruction_op
    if running is None and peak.instruction.split(".")[0] in ("copy", "copy-start", "copy-done"):
        running = "a copy XLA inserted"
    where = f" on {lines_text(peak.source_lines)}" if peak.source_lines and peak.instruction_op else ""
    at = f"step {peak.step} of {peak.steps}" + (f", at {running}{where}" if running else "")
    refused = report.error is not None
    head = (f"At the peak the compiler refused ({at}), the program needs" if refused
            else f"At its peak ({at}), the program holds")
    text = f"{head} {format_bytes(peak.bytes)} of {memory_name(report.target)}"
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


def _held_words(buffers: Sequence[LiveBuffer]) -> str:
    """``argument, the whole run``, ``steps 70–71``: how long a buffer takes memory (buffers
    alike: from the first one's first step to the last one's last)."""
    b = buffers[0]
    if b.kind == "generated code":
        return "the whole run"
    if b.kind in ("argument", "output", "constant"):
        return f"{b.kind}, the whole run"
    ranges = [x.live for x in buffers if len(x.live) == 2]
    return f"steps {min(r[0] for r in ranges)}–{max(r[1] for r in ranges)}" if ranges else b.kind


def live_table(report: Report) -> Table:
    """The buffers live at the peak (the module's rules), in few columns that wrap: what each
    is (its shape, what made it, its line), its size and share, how long it is held, where it
    lives (on a TPU, or where some live apart) and its HLO name; buffers alike in all of that
    but their names on one row (``6 × f32[8,512,1024]``)."""
    peak = report.live_at_peak
    if peak is None:
        return Table("live", "Live at the peak", (), ())
    spaces = report.target.startswith("tpu") or bool(peak.elsewhere)
    header = ("buffer", "size", "held", *(("in",) if spaces else ()), "HLO")
    rows: list[Row] = []

    def group(buffers: Sequence[LiveBuffer]) -> list[list[LiveBuffer]]:
        alike: dict[tuple[object, ...], list[LiveBuffer]] = {}
        for b in buffers:
            whole = b.kind != "temp" or len(b.live) != 2
            # the arguments, held for the whole run, share one row
            key = (("argument", b.memory_space) if b.kind == "argument" and b.producer_op else
                   (b.shape, made_by(b), tuple(b.source_lines), b.kind, b.memory_space, whole and b.name))
            alike.setdefault(key, []).append(b)
        return sorted(alike.values(), key=lambda g: -sum(b.bytes for b in g))

    def row(buffers: list[LiveBuffer], counted: bool) -> Row:
        b = buffers[0]
        size = sum(x.bytes for x in buffers)
        count = f"{len(buffers)} × " if len(buffers) > 1 else ""
        lines = f", {lines_text(b.source_lines)}" if b.source_lines else ""
        what = f"{count}{b.shape or '—'} {made_by(b)}{lines}" if b.kind != "generated code" else "generated code"
        if b.kind == "argument" and len(buffers) > 1:
            what = "arguments " + ", ".join(f"{x.producer_op} ({x.shape})" for x in buffers)
        of = share(size, peak.bytes) if counted else "not counted"
        where = (Cell(memory_space_name(b.memory_space, report.target)),) if spaces else ()
        names = b.name or "—"
        if len(buffers) > 1:
            names += f" and {len(buffers) - 1} more"
        return Row((Cell(what), Cell(f"{format_bytes(size)}, {of}"), Cell(_held_words(buffers)), *where, code(names)),
                   lines=tuple(b.source_lines))

    def folded(count: int, size: int, largest: int, counted: bool, buffers: Sequence[LiveBuffer]) -> Row:
        of = share(size, peak.bytes) if counted else "not counted"
        each = ""
        if counted:
            each = ", each under 1 %" if largest < peak.bytes / 100 else f", none over {share(largest, peak.bytes)}"
        kinds = {memory_space_name(b.memory_space, report.target) for b in buffers}
        where = (Cell(kinds.pop() if len(kinds) == 1 else ""),) if spaces else ()
        return Row((Cell(f"{count} other{'s' if count != 1 else ''}{each}"), Cell(f"{format_bytes(size)}, {of}"),
                    Cell(""), *where, Cell("")))

    for listed, shown, others, others_bytes, counted in (
            (peak.buffers, LISTED, peak.others, peak.others_bytes, True),
            (peak.elsewhere, LISTED_ELSEWHERE, peak.elsewhere_others, peak.elsewhere_others_bytes, False)):
        groups = group(listed)
        rows += [row(g, counted) for g in groups[:shown]]
        rest = [b for g in groups[shown:] for b in g]
        if rest or others:
            # the data's own fold holds buffers under the ones listed: the largest folded is listed's
            largest = max((b.bytes for b in rest), default=0) or (others_bytes if others == 1 else 0)
            rows.append(folded(len(rest) + others, sum(b.bytes for b in rest) + others_bytes, largest, counted,
                               rest or listed))
    rows.append(Row((Cell(f"total in use, {memory_name(report.target)}"), Cell(format_bytes(peak.bytes)),
                     *(Cell(""),) * (len(header) - 2))))
    return Table("live", f"Live at the peak (step {peak.step} of {peak.steps})", header, tuple(rows),
                 total=len(rows), note=peak_note(report))


def peak_note(report: Report) -> str:
    """How the total at the peak compares with the memory figures of the report, in a reader's
    words: what XLA reserves and does not use there, the constants no figure counts, what a
    TPU's XLA peak counts; where the compile ran out of memory, what its message says."""
    peak = report.live_at_peak
    if peak is None:
        return ""
    parts: list[str] = []
    if peak.note.startswith("The compile ran out of memory"):
        parts.append(peak.note.split(". ", 1)[0].rstrip(".") + ".")
    memory = report.memory
    held, name = memory.device_bytes, held_name(report.target)
    unused = max(0, peak.temp_reserved_bytes - peak.temp_live_bytes)
    if held is not None and held != peak.bytes and abs(held - peak.bytes) < held / 100:
        parts.append(f"The total is within 1 % of the {name} figure ({format_bytes(held)}).")
    elif held is not None and held != peak.bytes:
        why = []
        if unused:
            why.append(f"XLA sets aside one block for all temporaries, and {format_bytes(unused)} of it is unused "
                       "at the peak")
        if peak.constant_bytes:
            why.append(f"the constants ({format_bytes(peak.constant_bytes)}) take memory too, though XLA's "
                       "figures leave them out")
        more = "more" if peak.bytes > held else "less"
        parts.append(f"In use at the peak: {format_bytes(abs(peak.bytes - held))} {more} than the "
                     f"{name} figure ({format_bytes(held)})" + (": " + "; ".join(why) + "." if why else "."))
    xla_peak = memory.peak_bytes
    if report.target.startswith("tpu") and xla_peak is not None and not memory.peak_is_estimate:
        parts.append(f"XLA's own peak ({format_bytes(xla_peak)}) adds the chip's own memory and leaves out the code.")
    return " ".join(parts)


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
    #: Its count and shape alone (``2 × f32[8,512,1024]``), for a ``buffer`` band.
    short: str = ""


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
                        b.live[0], b.live[1], b, f"{count}{b.shape}"))
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
    """The timeline as a table (what the picture draws): a row where the buffers drawn as bands
    change, saying which start (``+``) and which end (``−``), with the most memory in use over
    its steps; the span holding the peak says so.  Steps where only the other temporaries
    change are one row (the picture shows them)."""
    peak = report.live_at_peak
    if peak is None:
        return Table("timeline", "Memory in use across the program", (), ())
    drawn = bands(peak)
    spans: list[tuple[int, int]] = []
    for i, (start, _) in enumerate(peak.timeline):
        end = peak.timeline[i + 1][0] - 1 if i + 1 < len(peak.timeline) else peak.steps - 1
        spans.append((start, end))
    if not spans:
        spans = [(0, max(0, peak.steps - 1))]

    def live(step: int) -> tuple[int, ...]:
        return tuple(k for k, b in enumerate(drawn) if b.kind == "buffer" and b.first <= step <= b.last)

    runs: list[tuple[int, int, tuple[int, ...]]] = []
    for first, last in spans:
        # a band may start or end inside a span of equal use: cut there too
        cuts = sorted({first, *(b.first for b in drawn if first < b.first <= last),
                       *(b.last + 1 for b in drawn if first <= b.last < last)})
        for i, a in enumerate(cuts):
            z = cuts[i + 1] - 1 if i + 1 < len(cuts) else last
            key = live(a)
            if runs and runs[-1][2] == key:
                runs[-1] = (runs[-1][0], z, key)
            else:
                runs.append((a, z, key))
    rows = []
    before: tuple[int, ...] = ()
    for first, last, key in runs:
        holds = first <= peak.step <= last
        step = peak.step if holds else max(range(first, last + 1), key=lambda s: (use_at(peak, s), -s))
        label = f"{first}" if first == last else f"{first}–{last}"
        if holds:
            label += " (peak)" if first == last else f", peak at {peak.step}"
        changes = [f"+ {format_bytes(drawn[k].bytes)} {drawn[k].label}" for k in key if k not in before]
        # an end names the band by its size and shape: the row where it starts says the rest
        changes += [f"− {format_bytes(drawn[k].bytes)} {drawn[k].short}" for k in before if k not in key]
        rows.append(Row((Cell(label), Cell(format_bytes(use_at(peak, step))), Cell("; ".join(changes) or "—")),
                        tone="bad" if holds else ""))
        before = key
    held = f"; {format_bytes(peak.held_bytes)} held throughout" if peak.held_bytes else ""
    return Table("timeline", "Memory in use across the program", ("steps", "most in use", "buffers that start (+) "
                 "or end (−)"), tuple(rows), total=len(rows),
                 note=f"A row where a band starts or ends{held}.")
