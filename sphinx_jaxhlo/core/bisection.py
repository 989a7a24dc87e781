"""Bisection: after a sweep's own points, the sizes to compile to find where each flip is exactly.

The rules applied here:

- Bisection looks along the lines of one function on one target (each axis in turn, the
  other axes' values fixed: :func:`sphinx_jaxhlo.core.flips.lines`).  Two neighbours on a
  line whose decisions differ (:func:`sphinx_jaxhlo.core.flips.compare` finds a flip of a
  kind it chases) and whose sizes are more than one apart get a *probe* at the size
  halfway between them (rounded down).  The probe's decisions are then compared with both
  ends, so an interval that holds several flips is split until each lies between
  neighbouring sizes: the flip is *exact*.
- It chases what the page shows (:class:`Chase`, :func:`chase_of`): the decisions
  (a reduction's verdict, the producer of the buffer it reads, which the memory view calls
  the stored buffers, and the compile's success); the kernel count only where a claim is
  about it (``:expect-kernels:``, or a flip claim about ``kernels``); and, for each claim
  about a memory figure or the largest buffer at the peak (``:expect-max-temp:``,
  ``:expect-min-temp:``, ``:expect-max-peak:``, ``:expect-max-device:``,
  ``:expect-peak-top:``), two neighbours where the claim applies and holds at one but not
  at the other: the size where it stops holding is located like a decision's flip.
- Each round probes every such pair at once, the pairs in the order of the sweep's lines,
  while the *budget* lasts: the most probes the whole sweep may compile (each function on
  each target counts; :data:`DEFAULT_BUDGET` unless the example says otherwise; 0 turns
  bisection off).  A pair left when it runs out stays a flip between its two sizes.
- Two neighbours whose decisions agree are not probed: a decision could flip and flip
  back between them unseen.  The map says so (an interval *not looked at*), and a claim
  about those sizes is not resolved (:mod:`sphinx_jaxhlo.core.sweep_claims`).
- A neighbour without a report (no report, the target missing) has nothing to compare:
  nothing is probed beside it.  Only sizes are bisected: a static argument's axis
  (``chunk=100,1000,10000``) takes the values given, since the code may accept no other
  (a chunk that does not divide the length).  A size is probed once per function and target, whatever
  its compile gave.
- A probe is an ordinary compile of the one function on the one target at the probe's
  sizes (the symbols tied to the axis take the same size), planned, cached and
  snapshotted like any point of the sweep: a rebuild from snapshots probes the same sizes
  and compiles nothing.

Nothing here compiles or imports anything outside ``sphinx_jaxhlo.core``.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from sphinx_jaxhlo.core.expectations import Expectation, Expectations, check
from sphinx_jaxhlo.core.flips import DECIDING, PointFigure, SweepMap, chased_words, compare, lines, sweep_map
from sphinx_jaxhlo.core.report import Report
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.core.sweep_claims import MEMORY_KINDS
from sphinx_jaxhlo.core.sweeps import Point, Sweep, parse_flip_claim

__all__ = ["DEFAULT_BUDGET", "MAX_BUDGET", "Chase", "Probe", "bisect", "chase_of", "next_probes", "parse_budget"]

#: The most probes a sweep compiles unless it says otherwise (``:bisect:``, ``bisect=``, ``--bisect``).
DEFAULT_BUDGET = 48
#: The most a sweep may ask for.
MAX_BUDGET = 1024

#: What a front gives back for a point: the point, its results, and why it has none (``""``).
Outcome = tuple[Point, Sequence[Result], str]


@dataclass(frozen=True)
class Chase:
    """What bisection spends its budget on (see the module's rules)."""

    #: The kinds of flip compared between neighbours (:data:`sphinx_jaxhlo.core.flips.COMPARABLE`).
    kinds: tuple[str, ...] = DECIDING
    #: The claims whose verdict is chased where it changes (memory figures, the largest buffer at the peak).
    claims: Expectations = field(default_factory=Expectations)

    def words(self) -> str:
        """What the budget is spent on, for the page (:func:`sphinx_jaxhlo.core.flips.chased_words`)."""
        return chased_words(self.kinds, [claim_words(e) for e in self.claims.items])


def claim_words(expectation: Expectation) -> str:
    """``max temp 1MB on gpu:h100 for K<=8192``: a claim as the page names it."""
    scope = f" on {expectation.scope}" if expectation.scope else ""
    where = f" for {expectation.where}" if expectation.where else ""
    return f"{expectation.kind.replace('-', ' ')} {expectation.value}{scope}{where}"


def chase_of(expectations: Expectations, sweep: Sweep | None = None) -> Chase:
    """What bisection chases for an example with these claims (see the module's rules): the
    decisions; the kernel count where a claim is about it; the claims about memory figures
    and the largest buffer at the peak (over ``sweep``, those a line of it can cross: not a
    claim about one point, ``for n=4097``).
    """
    kernels = any(e.kind == "kernels" or (e.kind == "flip" and parse_flip_claim(e.value).what == "kernels")
                  for e in expectations.items)
    kinds = (*DECIDING[:2], *(("kernels",) if kernels else ()), DECIDING[2])
    claims = [e for e in expectations.items if e.kind in MEMORY_KINDS
              and (sweep is None or not _one_point(e, sweep))]
    return Chase(kinds, Expectations(claims))


def _one_point(expectation: Expectation, sweep: Sweep) -> bool:
    """Whether a claim's condition fixes every axis of the sweep (``for n=4097``): it applies at
    one point, so no two neighbours can disagree about it."""
    condition = expectation.condition
    if condition is None:
        return False
    fixed = {name for name, op, _ in condition.clauses if op in ("=", "==")}
    return all(fixed & set(axis.names) for axis in sweep.axes)


@dataclass(frozen=True)
class Probe:
    """One size to compile for one function on one target."""

    point: Point
    function: str
    target: str


def parse_budget(value: object, option: str = ":bisect:") -> int:
    """The bisection budget as the fronts take it: a whole number from 0 (no bisection) to
    :data:`MAX_BUDGET`, as an int or text.

    :param option: the option as the front spells it, for messages.
    :raises ValueError: anything else.
    """
    text = str(value).strip().replace("_", "") if not isinstance(value, bool) else ""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif text.isdigit():
        number = int(text)
    else:
        raise ValueError(f"{option} {value!r} is not a number of compiles: give a whole number from 0 (no "
                         f"bisection) to {MAX_BUDGET}, such as {DEFAULT_BUDGET}")
    if not 0 <= number <= MAX_BUDGET:
        raise ValueError(f"{option} {number} is outside 0..{MAX_BUDGET} (0: no bisection)")
    return number


def next_probes(sweep: SweepMap, budget: int, tried: Container[tuple[str, str, Point]] = (),
                chase: Chase | None = None, reports: Callable[[PointFigure], Report | None] | None = None
                ) -> list[Probe]:
    """The probes of the next round (see the module's rules), at most ``budget``.

    :param tried: ``(function, target, point)`` already probed.
    :param chase: what to chase (default: the decisions).
    :param reports: a figure's report, for the claims chased (without it, no claim is).
    """
    chase = chase or Chase()
    out: list[Probe] = []
    for axis, line in lines(sweep.sweep, sweep.figures):
        if set(sweep.sweep.axis(axis).names) <= set(sweep.sweep.static):
            continue  # a static argument takes the values given (a chunk that divides...), not those between
        for before, after in pairwise(line):
            if len(out) >= budget:
                return out
            low, high = before.point[axis], after.point[axis]
            if high - low < 2 or (compare(before, after, axis, chase.kinds) is None
                                   and not _claim_changes(chase.claims, before, after, reports)):
                continue
            point = sweep.sweep.probe_point(before.point, axis, (low + high) // 2)
            if (before.function, before.target, point) not in tried:
                out.append(Probe(point, before.function, before.target))
    return out


def _claim_changes(claims: Expectations, before: PointFigure, after: PointFigure,
                   reports: Callable[[PointFigure], Report | None] | None) -> bool:
    """Whether a claim chased applies at both neighbours and holds at one only."""
    if not claims.items or reports is None:
        return False
    first, second = reports(before), reports(after)
    if first is None or second is None:
        return False
    here = claims.at_point(before.point.as_dict()).for_target(before.target, before.function)
    there = claims.at_point(after.point.as_dict()).for_target(after.target, after.function)
    return any(check(e, first).passed != check(e, second).passed for e in here if e in there)


def bisect(sweep: Sweep, outcomes: Sequence[Outcome], functions: Sequence[str], targets: Sequence[tuple[str, str]],
           compile_probes: Callable[[list[Probe]], list[Outcome]], budget: int = DEFAULT_BUDGET,
           chase: Chase | None = None) -> SweepMap:
    """The sweep's map once bisection has located its flips (see the module's rules).

    :param outcomes: the sweep's own points, as :func:`~sphinx_jaxhlo.core.flips.sweep_map` takes them.
    :param compile_probes: compiles a round's probes, giving an outcome per point probed
        (with the results of the functions and targets probed there).
    :param budget: the most probes to compile.
    :param chase: what to spend them on (default: the decisions; :func:`chase_of` gives an
        example's, from its claims).
    """
    chase = chase or Chase()
    done = list(outcomes)
    tried: set[tuple[str, str, Point]] = set()
    spent = 0
    while True:
        current = sweep_map(sweep, done, functions, targets, chase.kinds)
        by_key = {(point, r.function, r.target): r.report for point, results, _ in done for r in results}

        def report_of(figure: PointFigure) -> Report | None:
            return by_key.get((figure.point, figure.function, figure.target))  # noqa: B023 (used in this round)

        probes = next_probes(current, budget - spent, tried, chase, report_of) if spent < budget else []
        if not probes:
            current.budget = budget
            current.chased_claims = [claim_words(e) for e in chase.claims.items]
            return current
        tried |= {(p.function, p.target, p.point) for p in probes}
        spent += len(probes)
        done += compile_probes(probes)
