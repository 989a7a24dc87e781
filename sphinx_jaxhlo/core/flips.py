"""Where a compiler's decision flips over a sweep: what each point shows, and the flips between neighbours.

The rules applied here:

*What a point shows* (:class:`PointFigure`, for one function on one target).  Its
*status*: ``fused`` when every reduction of the program's own is fused (its data never
went to memory), ``unfused`` when one is not, ``no reduction`` when the program has none
of its own, ``compile error`` when the compiler refused the program (a
``RESOURCE_EXHAUSTED``, say), ``no report`` when there is no report at all (a timeout,
a crash, sizes the arguments cannot take), ``missing`` when the target's compiler is not
installed.  Its *measure* is the target's: on a TPU whose compiles all report it, the HBM
the program holds (arguments, outputs, temp and code: a TPU's temp is 0 for most programs,
and its XLA peak counts on-chip buffers), else the temp memory; one measure per target,
for every point.  Its *largest stored buffer* is the largest intermediate the report lists
in the device's memory (a TPU's HBM; loop counters and flags left out).

*What is compared between two neighbours.*  For each reduction of the program's own,
matched across points by the JAX operation and source lines it was traced from (its
name changes from one compile to the next): whether it is fused, and, when it is not,
what made the buffer it reads (the analysis' kind of producer, the producing kernel's
fusion kind and custom kind; never its name).  A contraction (``dot_general``) stays a
reduction across points: where it is no reduction of the program's, the multiply and
reduce the compiler fused for it stands for it, and where it has no reduce at all it is
a GEMM, said so (never "absent").  Besides, the program's kernel count, and
whether it compiles at all.

*A line* of one function on one target is its points along one axis whose other axes'
values are the same: the sweep's own points and the probes bisection placed on that axis
(:mod:`sphinx_jaxhlo.core.bisection`), in order of size.  *A flip* is a change of one of
those between two neighbours on a line; it is *exact* when their sizes are one apart.
A point without a report (``no report``, ``missing``) has nothing to compare: no flip is
counted on either side of it.  Two neighbours more than one apart whose decisions agree
leave an *interval not looked at*: a decision could flip there and flip back unseen.  The
values of a static argument (``chunk=100,1000,10000``) are the values the author chose,
not sizes: between two of them there is no interval.  Each flip
gives the compiler's reason at both sides: for an unfused reduction, the reason the
analysis gives and the compiler's own decision records about the buffer's producer (for
a cost-model decision, XLA's estimated times fused and unfused, as its record gives
them); for a fused one, the kernel that computes and reduces its data; for a kernel
count, the kernels.

The claims about flips and ranges are checked by :mod:`sphinx_jaxhlo.core.sweep_claims`.

Nothing here compiles or imports anything outside ``sphinx_jaxhlo.core``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from typing import Any

from sphinx_jaxhlo.core.expectations import Check
from sphinx_jaxhlo.core.memory import acting_figure
from sphinx_jaxhlo.core.report import Fusion, FusionDecision, Materialized, Reduction, Report, is_kernel
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.core.sweeps import Point, Sweep

__all__ = ["STATUSES", "Flip", "Interval", "PointFigure", "ReductionState", "SweepMap", "sweep_map"]

#: The statuses of a point, in the order the map's legend gives them.
STATUSES = ("fused", "unfused", "no reduction", "compile error", "no report", "missing")
#: Statuses with a report to compare.
_COMPARED = ("fused", "unfused", "no reduction", "compile error")


@dataclass
class ReductionState:
    """One reduction of the program's own at one point."""

    #: What it is across points: ``reduce_sum (line 5)``.
    key: str
    name: str
    fused: bool
    #: The stored buffer it reads, ``""`` when fused.
    buffer: str = ""
    buffer_bytes: int = 0
    #: What made that buffer, in words, and what is compared between points.
    producer: str = ""
    producer_key: str = ""
    #: Why, as the analysis and the compiler's records give it.
    reasons: list[str] = field(default_factory=list)


@dataclass
class PointFigure:
    """What one point shows for one function on one target."""

    point: Point
    function: str
    target: str
    status: str
    #: ``temp`` or ``device`` (see the module's rules) and its value in bytes (``None``: no figure).
    measure: str = "temp"
    value: int | None = None
    #: The largest stored intermediate: ``f32[4096,4096]``, its bytes, what made it.
    largest: str = ""
    largest_bytes: int | None = None
    largest_producer: str = ""
    kernels: int | None = None
    kernel_names: list[str] = field(default_factory=list)
    reductions: list[ReductionState] = field(default_factory=list)
    #: The program's contractions (``dot_general``...) that the compiler computed as a multiply and a
    #: reduce fused in one kernel: reductions it made, no verdict here; a flip compares one with the
    #: same contraction where it is a reduction of the program's (unfused over stored data).
    contractions: list[ReductionState] = field(default_factory=list)
    #: The compile error or the failure, in words.
    error: str = ""

    @property
    def category(self) -> str:
        """What a 2-D map colours the point by: its status and, unfused, what made the buffer."""
        producers = sorted({r.producer_key for r in self.reductions if not r.fused})
        return f"unfused: {', '.join(producers)}" if self.status == "unfused" and producers else self.status

    @property
    def category_text(self) -> str:
        """:attr:`category` in words, for a legend."""
        producers = sorted({r.producer_key for r in self.reductions if not r.fused})
        return f"unfused, buffer by {', '.join(producers)}" if self.status == "unfused" and producers \
            else self.status


class Span:
    """Two points of one axis (``axis``, ``before``, ``after``, fields of the dataclasses that
    inherit it): the sizes either side, and the two named as a reader reads them."""

    axis: str
    before: Point
    after: Point

    @property
    def low(self) -> int:
        return self.before[self.axis]

    @property
    def high(self) -> int:
        return self.after[self.axis]

    @property
    def between(self) -> str:
        """``n=4096 and n=5000`` (on a grid, ``K=128 and K=256 at rows=50000``)."""
        others = [f"{name}={self.before[name]}" for name in self.before.axes if name != self.axis]
        return (f"{self.axis}={self.low} and {self.axis}={self.high}"
                + (f" at {', '.join(others)}" if others else ""))


@dataclass
class Flip(Span):
    """Two adjacent points of one axis between which a decision changes."""

    function: str
    target: str
    #: The swept symbol the two points differ in.
    axis: str
    before: Point
    after: Point
    #: What changed: ``reduction``, ``producer``, ``kernels``, ``error``.
    kinds: list[str]
    #: What changed, in words.
    changes: list[str]
    #: The compiler's reasons at each side.
    reasons_before: list[str] = field(default_factory=list)
    reasons_after: list[str] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        """Whether the two sizes are neighbours: the flip is located exactly."""
        return self.high - self.low == 1


@dataclass
class Interval(Span):
    """Two neighbours on a line more than one size apart whose decisions are not both known
    between them: ``agree`` (both ends agree: the sizes between were not looked at),
    ``differ`` (a flip between them that bisection did not locate), ``no report`` (an end
    has nothing to compare)."""

    function: str
    target: str
    axis: str
    before: Point
    after: Point
    why: str


@dataclass
class SweepMap:
    """A sweep's figures, point by point, and its flips."""

    sweep: Sweep
    functions: list[str]
    #: ``(name, title)`` of each target.
    targets: list[tuple[str, str]]
    points: list[Point]
    figures: list[PointFigure]
    flips: list[Flip] = field(default_factory=list)
    #: The flip claims checked.
    checks: list[Check] = field(default_factory=list)
    #: The points bisection added (each for some functions and targets only), in order of compile.
    probes: list[Point] = field(default_factory=list)
    #: The intervals between neighbours that were not resolved (see the module's rules).
    intervals: list[Interval] = field(default_factory=list)
    #: The most probes bisection could compile (``None``: it was not asked to run).
    budget: int | None = None

    def figures_of(self, function: str, target: str) -> list[PointFigure]:
        """The figures of one function on one target, in point order."""
        return [f for f in self.figures if f.function == function and f.target == target]

    def flips_of(self, function: str, target: str) -> list[Flip]:
        return [f for f in self.flips if f.function == function and f.target == target]

    def intervals_of(self, function: str, target: str) -> list[Interval]:
        return [i for i in self.intervals if i.function == function and i.target == target]

    def measure(self, target: str) -> str:
        return next((f.measure for f in self.figures if f.target == target), "temp")

    def to_dict(self) -> dict[str, Any]:
        def point(p: Point) -> dict[str, int]:
            return p.as_dict()

        return {
            "sweep": self.sweep.text,
            "axes": [{"names": list(a.names), "values": list(a.values)} for a in self.sweep.axes],
            "functions": list(self.functions),
            "targets": [name for name, _ in self.targets],
            "bisection": {"budget": self.budget, "probes": len(self.probes)},
            "points": [
                {**{k: v for k, v in asdict(f).items() if k not in ("point", "reductions")},
                 "point": point(f.point), "probe": f.point.probe, "reductions": [asdict(r) for r in f.reductions]}
                for f in self.figures],
            "flips": [{"function": f.function, "target": f.target, "axis": f.axis, "before": point(f.before),
                       "after": point(f.after), "exact": f.exact, "kinds": list(f.kinds), "changes": list(f.changes),
                       "reasons_before": list(f.reasons_before), "reasons_after": list(f.reasons_after)}
                      for f in self.flips],
            "not_resolved": [{"function": i.function, "target": i.target, "axis": i.axis, "before": point(i.before),
                              "after": point(i.after), "why": i.why} for i in self.intervals],
            "checks": [{"target": c.target, "function": c.function, "expectation": c.expectation.kind,
                        "expected": c.expectation.value, "found": c.actual, "passed": c.passed,
                        "resolved": not c.unresolved, "message": c.message} for c in self.checks],
        }


# -- one point --------------------------------------------------------------------------------------

def _measure(target: str, reports: Sequence[Report]) -> str:
    """The figure to act on across the points (:func:`sphinx_jaxhlo.core.memory.acting_figure`)."""
    return acting_figure(target, [r.memory for r in reports])


def _is_counter(shape: str) -> bool:
    """``s32[]``, ``pred[]``: a loop counter or a flag, not data."""
    return shape.endswith("[]") and shape[:1] in ("s", "u", "p")


def _fusion(report: Report, name: str) -> Fusion | None:
    return next((f for f in report.fusions if f.name == name), None)


def _producer(report: Report, buffer: Materialized, reduction: Reduction | None = None) -> tuple[str, str]:
    """What made a stored buffer: ``(words, key)``; the key leaves names out."""
    reason = (reduction.reason if reduction is not None else None) or buffer.reason
    kind = reason.producer_kind if reason is not None else ""
    fusion = _fusion(report, buffer.producer)
    if fusion is None:
        return (f"{kind or 'an instruction'} {buffer.producer}", kind)
    shape = f"k{fusion.kind}" if fusion.kind[:1].isupper() else fusion.kind
    custom = f" {fusion.custom_kind}" if fusion.custom_kind else ""
    ops = f": {', '.join(dict.fromkeys(fusion.ops))}" if fusion.ops else ""
    words = f"{kind + ' kernel' if kind else 'kernel'} {fusion.name} ({shape}{custom}{ops})"
    return words, f"{kind or '?'} {shape}{custom}"


_US = re.compile(r"us_fused:\s*([0-9.]+).*?us_unfused:\s*([0-9.]+)", re.DOTALL)
_US_WORDS = re.compile(r"fused ([0-9.]+) us, unfused ([0-9.]+) us")


def decision_words(decision: FusionDecision) -> str:
    """A decision record in words; a cost-model decision with XLA's estimated times."""
    match = _US.search(decision.record) or _US_WORDS.search(decision.reason)
    where = f"XLA {decision.pass_name}"
    if match is not None:
        fused, unfused = float(match.group(1)), float(match.group(2))
        verdict = "slower" if fused > unfused else "faster"
        record = f"; its record: {decision.record}" if decision.record and len(decision.record) <= 240 else ""
        return (f"{where}: its cost model estimated {fused:.1f} µs fused against {unfused:.1f} µs unfused "
                f"({verdict} fused), about {decision.producer} ({decision.kind}{record})")
    return f"{where} ({decision.kind}): \"{decision.reason}\", about {decision.producer}"


def _decisions_about(report: Report, names: set[str]) -> list[FusionDecision]:
    return [d for d in report.fusion_decisions
            if d.producer_instruction in names or names & set(d.consumer_instructions)]


def _reduction_state(report: Report, reduction: Reduction, key: str) -> ReductionState:
    state = ReductionState(key=key, name=reduction.name, fused=reduction.fused)
    if reduction.fused:
        fusion = _fusion(report, reduction.fusion)
        ops = ", ".join(dict.fromkeys(o for o in reduction.fused_with if o != "reduce")) or "nothing else"
        kind = f" (k{fusion.kind})" if fusion is not None and fusion.kind[:1].isupper() else ""
        state.reasons.append(f"fused: {reduction.fusion}{kind} computes its data ({ops}) and reduces it in "
                             "one kernel")
        state.reasons += [decision_words(d) for d in _decisions_about(report, {reduction.fusion})
                          if _US.search(d.record) or _US_WORDS.search(d.reason)]
        return state
    buffer = next((m for m in [*report.materialized, *report.argument_copies]
                   if m.name == reduction.input_materialized), None)
    state.buffer = buffer.shape if buffer is not None else str(reduction.input_materialized)
    state.buffer_bytes = buffer.bytes if buffer is not None else reduction.input_bytes
    if buffer is not None:
        state.producer, state.producer_key = _producer(report, buffer, reduction)
    else:
        state.producer = state.producer_key = str(reduction.input_materialized)
    reason = reduction.reason or (buffer.reason if buffer is not None else None)
    if reason is not None:
        state.reasons.append(reason.text + (f" ({reason.quoted})" if reason.quoted else ""))
    producer = buffer.producer if buffer is not None else str(reduction.input_materialized)
    # the records about the producer, unless the reason quotes them already; XLA's cost figures always
    state.reasons += [decision_words(d) for d in _decisions_about(report, {producer})
                      if not (reason is not None and reason.quoted) or _US.search(d.record) or
                      _US_WORDS.search(d.reason)]
    return state


def _reduction_key(reduction: Reduction) -> str:
    lines = ", ".join(map(str, reduction.source_lines))
    where = f" (line{'s' if len(reduction.source_lines) > 1 else ''} {lines})" if lines else ""
    return f"{reduction.op or 'reduce'}{where}"


def figure_of(point: Point, result: Result | None, measure: str, function: str, target: str,
              problem: str = "") -> PointFigure:
    """What one point shows for one function on one target (see the module's rules)."""
    figure = PointFigure(point, function, target, "no report", measure)
    if result is None:
        figure.error = problem or "not compiled"
        return figure
    if result.missing:
        figure.status, figure.error = "missing", result.missing
        return figure
    report = result.report
    if report is None:
        figure.error = result.failure.message if result.failure is not None else "no report"
        return figure
    if report.error is not None:
        figure.status = "compile error"
        first = report.error.message.strip().splitlines()[0] if report.error.message.strip() else ""
        while first.startswith(f"{report.error.status}: "):  # XLA often repeats its status
            first = first[len(report.error.status) + 2:]
        figure.error = f"{report.error.status}: {first}"[:300]
        return figure
    figure.value = report.memory.figure(measure)
    # the device's memory (a TPU's HBM): a buffer kept in the chip's own memory is not stored there
    biggest = max((m for m in report.materialized if m.kind == "intermediate" and not _is_counter(m.shape)
                   and m.in_device_memory), key=lambda m: m.bytes, default=None)
    if biggest is not None:
        figure.largest, figure.largest_bytes = biggest.shape, biggest.bytes
        figure.largest_producer = _producer(report, biggest)[0]
    kernels = [f for f in report.fusions if is_kernel(f)]
    figure.kernels = len(kernels)
    figure.kernel_names = [f"{f.name} (k{f.kind})" if f.kind[:1].isupper() else f.name for f in kernels]
    seen: dict[str, int] = {}
    for reduction in report.verdict_reductions:
        key = _reduction_key(reduction)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            key = f"{key} #{seen[key]}"
        figure.reductions.append(_reduction_state(report, reduction, key))
    for reduction in report.reductions:
        if reduction.origin == "dot" and reduction.fused and reduction.op in _CONTRACTIONS:
            figure.contractions.append(_reduction_state(report, reduction, _reduction_key(reduction)))
    if not figure.reductions:
        figure.status = "no reduction"
    else:
        figure.status = "fused" if all(r.fused for r in figure.reductions) else "unfused"
    return figure


# -- between two points -----------------------------------------------------------------------------

#: The JAX operations of a contraction: one is a reduction however the compiler writes it.
_CONTRACTIONS = ("dot_general", "conv_general_dilated", "ragged_dot_general", "ragged_dot")


def _state_words(state: ReductionState | None, key: str = "") -> str:
    if state is None:
        # a contraction that is no reduce here was written as a GEMM: it still contracts, in a dot kernel
        return ("a GEMM (a dot kernel: the contraction has no reduce of its own)" if key.startswith(_CONTRACTIONS)
                else "absent")
    if state.fused:
        return "fused"
    return f"unfused, reading {state.buffer} ({format_bytes(state.buffer_bytes)}) from {state.producer}"


def compare(before: PointFigure, after: PointFigure, axis: str) -> Flip | None:
    """The flip between two adjacent points, or ``None`` when nothing compared changed."""
    if before.status not in _COMPARED or after.status not in _COMPARED:
        return None
    flip = Flip(before.function, before.target, axis, before.point, after.point, [], [])
    a, b = before.point.label, after.point.label
    if (before.status == "compile error") != (after.status == "compile error"):
        flip.kinds.append("error")
        failed, works = (before, after) if before.status == "compile error" else (after, before)
        flip.changes.append(f"compiles at {works.point.label}, fails at {failed.point.label} ({failed.error})")
        for side, reasons in ((before, flip.reasons_before), (after, flip.reasons_after)):
            reasons.append(f"at {side.point.label}: " + (side.error if side.status == "compile error" else
                                                          f"compiles ({side.measure} {format_bytes(side.value)})"))
        return flip
    if before.status == "compile error":
        return None
    old = {r.key: r for r in before.reductions}
    new = {r.key: r for r in after.reductions}
    for key in dict.fromkeys([*old, *new]):
        # a contraction stays a reduction across a flip: where it is no reduction of the program's, its
        # multiply + reduce (fused, the compiler's) stands for it
        x = old.get(key) or next((c for c in before.contractions if c.key == key), None)
        y = new.get(key) or next((c for c in after.contractions if c.key == key), None)
        if x is not None and y is not None and x.fused == y.fused and x.producer_key == y.producer_key:
            continue
        kind = "producer" if x is not None and y is not None and x.fused == y.fused else "reduction"
        if kind not in flip.kinds:
            flip.kinds.append(kind)
        flip.changes.append(f"{key}: {_state_words(x, key)} at {a} -> {_state_words(y, key)} at {b}")
        flip.reasons_before += [f"{key} at {a}: {r}" for r in (x.reasons if x is not None else [])]
        flip.reasons_after += [f"{key} at {b}: {r}" for r in (y.reasons if y is not None else [])]
    if before.kernels != after.kernels:
        flip.kinds.append("kernels")
        flip.changes.append(f"kernels: {before.kernels} at {a} -> {after.kernels} at {b}")
        # the kernels one side has and the other lacks (a long program's full list says little)
        for side, other, reasons in ((before, after, flip.reasons_before), (after, before, flip.reasons_after)):
            only = [k for k in side.kernel_names if k not in other.kernel_names]
            listed = ", ".join(only[:8]) + (f" and {len(only) - 8} more" if len(only) > 8 else "")
            reasons.append(f"kernels at {side.point.label}: " + (
                ", ".join(side.kernel_names) if len(side.kernel_names) <= 8 else
                f"{side.kernels}, of which not at {other.point.label}: {listed or 'none by name'}"))
    return flip if flip.kinds else None


def lines(sweep: Sweep, figures: Sequence[PointFigure]) -> list[tuple[str, list[PointFigure]]]:
    """Each line of each function on each target (see the module's rules): ``(axis, its
    figures in order of size)``, the lines of the first axis first."""
    out: list[tuple[str, list[PointFigure]]] = []
    for number, axis in enumerate(sweep.axes):
        grouped: dict[tuple[str, str, tuple[int, ...]], list[PointFigure]] = {}
        for figure in figures:
            if figure.point.probe not in ("", axis.name):
                continue
            others = tuple(v for i, v in enumerate(figure.point.coordinates) if i != number)
            grouped.setdefault((figure.function, figure.target, others), []).append(figure)
        out += [(axis.name, sorted(line, key=lambda f: f.point[axis.name])) for line in grouped.values()]
    return out


def find_flips(sweep: Sweep, figures: Sequence[PointFigure]) -> tuple[list[Flip], list[Interval]]:
    """The flips between neighbours on each line, per function and target, and the intervals
    between neighbours that are not resolved (see the module's rules)."""
    flips: list[Flip] = []
    intervals: list[Interval] = []
    for axis, line in lines(sweep, figures):
        sizes = not set(sweep.axis(axis).names) <= set(sweep.static)
        for before, after in pairwise(line):
            flip = compare(before, after, axis)
            if flip is not None:
                flips.append(flip)
            if sizes and after.point[axis] - before.point[axis] > 1 and (flip is None or not flip.exact):
                compared = before.status in _COMPARED and after.status in _COMPARED
                why = "differ" if flip is not None else "agree" if compared else "no report"
                intervals.append(Interval(before.function, before.target, axis, before.point, after.point, why))
    return flips, intervals


def sweep_map(sweep: Sweep, outcomes: Sequence[tuple[Point, Sequence[Result], str]], functions: Sequence[str],
              targets: Sequence[tuple[str, str]]) -> SweepMap:
    """The figures and flips of a sweep.

    :param outcomes: per point, its results (one per function and target) and why the
        point has none (``""`` when it has); a probe (``point.probe``) has the results of
        the functions and targets bisection compiled there, and no figure for the others.
    """
    by_point = [({(r.function, r.target): r for r in results}, point, problem)
                for point, results, problem in outcomes]
    figures: list[PointFigure] = []
    for target, _ in targets:
        reports = [r.report for results, _, _ in by_point for r in results.values()
                   if r.target == target and r.report is not None and r.report.error is None]
        measure = _measure(target, reports)
        for function in functions:
            for results, point, problem in by_point:
                if point.probe and (function, target) not in results:
                    continue
                figures.append(figure_of(point, results.get((function, target)), measure, function, target,
                                         problem))
    points = [point for point, _, _ in outcomes if not point.probe]
    flips, intervals = find_flips(sweep, figures)
    order = {(f, t): i for i, (t, f) in enumerate((t, f) for t, _ in targets for f in functions)}
    flips.sort(key=lambda f: order.get((f.function, f.target), len(order)))
    intervals.sort(key=lambda i: order.get((i.function, i.target), len(order)))
    return SweepMap(sweep, list(functions), list(targets), points, figures, flips,
                    probes=[point for point, _, _ in outcomes if point.probe], intervals=intervals)
