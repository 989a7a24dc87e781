"""Claims about a sweep as a whole: where a decision flips (``:expect-flip:``), and whether a
claim over a range of sizes was resolved by the sizes compiled.

The rules applied here:

*A flip claim* (``between A and B``, ``none``, :func:`sphinx_jaxhlo.core.sweeps.parse_flip_claim`)
is checked against the flips of its function on its target
(:mod:`sphinx_jaxhlo.core.flips`), along its axis (``none`` without an axis: along
every axis), where its condition holds at both sides of the flip, of the kind it names (a kind the map
did not compare, :attr:`~sphinx_jaxhlo.core.flips.SweepMap.kinds`: its flips between the
points compiled, which bisection did not locate; ``any``: the kinds the map compared).
``between A and B`` holds when such a flip lies between A and B; ``none`` when there is
no such flip.

*What was not looked at.*  A claim is *not resolved* (not a pass, and not
shown false: its check says ``NOT RESOLVED``) when it held at every size compiled but
sizes it is about lie strictly inside an interval not looked at (both ends agree, a flip
there was not located, or an end has no report): ``:expect-flip: none`` (along its axis,
where its condition holds) when no flip was found; ``between A and B`` when no flip was
found between A and B and such an interval overlaps them, or when the only flip found
spans more than A..B; and a claim of any other kind over a range (``for CONDITION``: a
reduction's verdict, the stored buffers, an error, the collectives, the kernel count, a
memory figure, the largest buffer at the peak) where its condition holds inside such an
interval.  One rule for every kind: a memory figure does not follow the size between two
compiles (a layout or a fusion chosen at one size can need far more memory one size
further), so what held at the ends says nothing about the sizes between.

*A range that holds no compiled size* (``cpu=1kB for n>=100000`` over ``n=256,4096``):
the claim was checked nowhere; it is not resolved, and its check says that no size of
the sweep lies in its range, with the sizes the sweep compiled.  No claim vanishes.

A claim without ``for`` is about the sweep's points: it is checked at each of them (its
check names the point where it fails), and says nothing about the sizes between.

Nothing here compiles or imports anything outside ``sphinx_jaxhlo.core``.
"""

from __future__ import annotations

from collections.abc import Sequence

from sphinx_jaxhlo.core.expectations import SWEEP_KINDS, Check, Expectation, Expectations
from sphinx_jaxhlo.core.flips import Interval, SweepMap, find_flips
from sphinx_jaxhlo.core.sweeps import Condition, Sweep, parse_flip_claim

__all__ = [
    "DECISION_KINDS",
    "MEMORY_KINDS",
    "check_flip_claims",
    "check_range_claims",
    "not_resolved_words",
    "nowhere_words",
]

#: The claims whose value is a decision of the compiler, which may flip between two sizes.
DECISION_KINDS = ("reduction", "materialized", "error", "collectives", "kernels")
#: The claims about a memory figure or the largest buffer at the peak: as unresolved between two
#: compiles as a decision (a figure can jump and fall back between them).
MEMORY_KINDS = ("max-temp", "min-temp", "max-peak", "max-device", "peak-top")


def check_flip_claims(expectations: Expectations, sweep: SweepMap) -> list[Check]:
    """Check each ``:expect-flip:`` claim against the flips of its function on its target
    (see the module's rules on claims)."""
    checks: list[Check] = []
    for target, _ in sweep.targets:
        for function in sweep.functions:
            figures = sweep.figures_of(function, target)
            if not figures or all(f.status in ("missing",) for f in figures):
                continue
            for claim in expectations.for_target(target, function):
                if claim.kind == "flip":
                    checks.append(_check_flip(claim, sweep, function, target))
    return checks


def _interior_meets(condition: Condition | None, interval: Interval, sweep: Sweep) -> bool:
    """Whether some size strictly between the interval's ends satisfies ``condition`` (the
    other axes as at its ends)."""
    if condition is None:
        return True
    names = sweep.axis(interval.axis).names
    low, high = interval.low + 1, interval.high - 1
    values = interval.before.as_dict()
    for name, op, number in condition.clauses:
        if name not in names:
            if not Condition(((name, op, number),)).holds(values):
                return False
        elif op in ("=", "=="):
            low, high = max(low, number), min(high, number)
        elif op in (">", ">="):
            low = max(low, number + (op == ">"))
        else:
            high = min(high, number - (op == "<"))
    return low <= high


_WHY = {"agree": "both ends agree; the sizes between were not compiled",
        "differ": "a flip between them was not located: the bisection budget ran out",
        "no report": "an end has no report to compare"}


def not_resolved_words(intervals: Sequence[Interval], shown: int = 3) -> str:
    """``not resolved: n=1189..1595 (both ends agree; ...)`` for the first few intervals."""
    parts = [f"{i.axis}={i.low}..{i.high}" + (f" at {i.between.split(' at ', 1)[1]}" if " at " in i.between else "")
             + f" ({_WHY[i.why]})" for i in intervals[:shown]]
    more = len(intervals) - shown
    return "not resolved: " + "; ".join(parts) + (f"; and {more} more interval{'s' if more > 1 else ''}"
                                                  if more > 0 else "")


def _check_flip(expectation: Expectation, sweep: SweepMap, function: str, target: str) -> Check:
    claim = parse_flip_claim(expectation.value)
    axis = claim.symbol or sweep.sweep.axes[0].name
    axis = sweep.sweep.axis(axis).name
    everywhere = claim.expects_none and not claim.symbol  # "none": along every axis
    condition = expectation.condition
    compared = sweep.flips_of(function, target)
    if claim.what not in ("any", *sweep.kinds):  # a kind the map did not compare: its flips between the points
        compared, _ = find_flips(sweep.sweep, sweep.figures_of(function, target), (claim.what,))
    flips = [f for f in compared if (f.axis == axis or everywhere)
             and (claim.what == "any" or claim.what in f.kinds)
             and (condition is None or (condition.holds(f.before) and condition.holds(f.after)))]
    found = "; ".join(f"{'/'.join(f.kinds)} between {f.between}" for f in flips[:4]) or "no flip"
    if len(flips) > 4:
        found += f" ({len(flips)} in all)"
    open_ = [i for i in sweep.intervals_of(function, target) if (i.axis == axis or everywhere)
             and _interior_meets(condition, i, sweep.sweep)]
    if claim.expects_none:
        if not flips and open_:  # a decision could flip and flip back where nothing was compiled
            return Check(expectation, target, function, False,
                         f"no flip between neighbours compiled; {not_resolved_words(open_)}", unresolved=True)
        return Check(expectation, target, function, not flips, found)
    assert claim.low is not None and claim.high is not None
    inside = [f for f in flips if claim.low <= f.low and f.high <= claim.high]
    if inside:
        return Check(expectation, target, function, True, found)
    wide = next((f for f in flips if f.low < claim.high and claim.low < f.high), None)
    if wide is not None:
        return Check(expectation, target, function, False,
                     f"{found}: the sweep's points do not resolve {axis}={claim.low}..{claim.high} (add sizes "
                     f"between {wide.low} and {wide.high}, or raise the bisection budget)", unresolved=True)
    overlapping = [i for i in open_ if i.low < claim.high and claim.low < i.high]
    if overlapping:
        elsewhere = f" (elsewhere: {found})" if flips else ""
        return Check(expectation, target, function, False,
                     f"no flip within {axis}={claim.low}..{claim.high}{elsewhere}; {not_resolved_words(overlapping)}",
                     unresolved=True)
    return Check(expectation, target, function, False, f"{found}: none within {axis}={claim.low}..{claim.high}")


def check_range_claims(expectations: Expectations, sweep: SweepMap, checked: Sequence[Check]) -> list[Check]:
    """Each claim over a range (``for CONDITION``), of any kind, judged against what was not
    compiled (see the module's rules): not resolved where it held at every size compiled in
    its range but the range holds sizes between two neighbours that were not looked at, and
    not resolved when no size compiled lies in its range at all.

    :param checked: the claims as checked at each point (a claim that failed at a point is
        not judged again here).
    """
    ranged = [e for e in expectations.items if e.where and e.kind not in SWEEP_KINDS]
    if not ranged:
        return []
    failed = {(c.expectation, c.target, c.function) for c in checked if not c.passed}
    bounds = sorted({n for e in ranged for _, _, n in (e.condition.clauses if e.condition else ())})
    found: dict[tuple[Expectation, str, str], list[Interval]] = {}
    for interval in sweep.intervals:
        axis = sweep.sweep.axis(interval.axis)
        low, high = interval.low + 1, interval.high - 1
        sizes = {low, high, *(v for b in bounds for v in (b - 1, b, b + 1) if low <= v <= high)}
        base = interval.before.as_dict()
        applying: set[Expectation] = set()
        for size in sizes:
            values = {**base, **dict.fromkeys(axis.names, size)}
            here = expectations.at_point(values).for_target(interval.target, interval.function)
            applying |= {e for e in here if e in ranged}
        for e in applying:
            if (e, interval.target, interval.function) not in failed:
                found.setdefault((e, interval.target, interval.function), []).append(interval)
    checks = []
    for (e, target, function), intervals in found.items():
        compiled = sum(1 for c in checked if c.expectation == e and c.target == target and c.function == function)
        held = f"held at the {compiled} size{'s' if compiled != 1 else ''} compiled where {e.where}" if compiled \
            else f"no size compiled where {e.where}"
        checks.append(Check(e, target, function, False, f"{held}; {not_resolved_words(intervals)}",
                            unresolved=True))
    judged = {c.expectation for c in checked} | {e for e, _, _ in found}
    points = [*sweep.points, *sweep.probes]
    for e in ranged:
        condition = e.condition
        if e in judged or condition is None or any(condition.holds(p.as_dict()) for p in points):
            continue  # judged, or about a point whose compile failed (that failure is reported)
        checks.append(Check(e, *_scope_words(e, sweep), False, nowhere_words(e, sweep), unresolved=True))
    return checks


def nowhere_words(expectation: Expectation, sweep: SweepMap) -> str:
    """``nothing: no size of the sweep lies where n>=100000; it compiled n from 256 to 4,096 (2 sizes)``."""
    return f"nothing: no size of the sweep lies where {expectation.where}; it compiled {sweep.sweep.describe()}"


def _scope_words(expectation: Expectation, sweep: SweepMap) -> tuple[str, str]:
    """The target and the function a claim checked nowhere is about, as its check names them."""
    targets = [name for name, _ in sweep.targets]
    target = expectation.target or (", ".join(targets) if targets else "every target")
    function = expectation.function or (", ".join(sweep.functions) if sweep.functions else "(function)")
    return target, function
