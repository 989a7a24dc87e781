"""Expectations an example states about its compile, and checking them.

Each kind of claim is declared once, in :data:`sphinx_jaxhlo.core.claim_kinds.CLAIMS` (its
name, the value it takes, its help, how its items are read, its parser and its checker); the
directive's ``:expect-*:`` options, the command line's ``--expect-*`` flags and the API's
``check()`` keywords are made from that table (:mod:`sphinx_jaxhlo.core.options`).

Each expectation option takes a bare value, applying to every target, or a
comma list of ``target=value`` pairs (``cpu=25GB, gpu:h100=64MiB``); both may be
mixed, a bare value then applying to the targets not named.  With several
functions, ``function@target=value`` (or ``function@*=value`` for every target)
narrows an item to one function; the most specific item applies.

``:expect-collectives:`` takes conditions on the collectives
(``sphinx_jaxhlo.hlo.collectives``), each ``KIND OP NUMBER`` (how many) or
``KIND OP SIZE`` (their bytes per device, summed), optionally scoped like the
others: ``all-gather=0, all-reduce<=1, gpu:h100x8=reduce-scatter<=64MiB``.
``KIND`` is a collective kind (``all-gather``, ``all-reduce``,
``reduce-scatter``, ``all-to-all``, ``collective-permute``...) or ``any``;
``OP`` is ``=``, ``<=``, ``>=``, ``<`` or ``>``; ``none`` is ``any=0``.  A
collective counts once however its instructions are spread (see
``sphinx_jaxhlo.hlo.collectives``), and once when it is in a loop body.  The
most specific item applies per kind of collective and per measure (count or
bytes).  Memory figures (``max-temp``...) are those of one device.

``:expect-peak-top:`` names the largest buffer live at the peak
(:attr:`~sphinx_jaxhlo.core.memory.LiveAtPeak.top`: in the memory the device figure counts,
never the generated code): by the JAX operation that made it (``dot_general``; ``argument
NAME`` for an argument), by its line in the example (``line 4``), or both (``dot_general on line
4``: the line is one of the buffer's lines), scoped like the others (``gpu:h100=dot_general,
tpu:v5e=argument a``).  It is checked on a compile that ran out of memory too, where the
compiler left its buffer assignment (what the refused program needs).

``:expect-kernels:`` takes a count, ``N`` (exactly) or ``OP N`` (``<=3``,
``>=2``, ``<4``, ``>1``), scoped like the others (``cpu=1, tpu:v5e<=2``): how
many kernels the program runs (:func:`sphinx_jaxhlo.core.report.is_kernel`: its
fusions and the instructions the compiler left unfused that compute), a loop
body's counted once.

Over a sweep (``:sweep:``, :mod:`sphinx_jaxhlo.core.sweeps`) an item may end with
``for CONDITION``: ``gpu:h100=fused for n>=5000`` applies at the points where the
condition holds, and is checked at each of them like any other (the point is named
when it fails); among the items that apply at a point, the most specific applies,
as above.  ``:expect-flip:`` is about the whole sweep: where a decision flips
(``gpu:h100=between 4096 and 5000``, ``reduction between 4096 and 5000``, ``none``),
checked by :func:`sphinx_jaxhlo.core.sweep_claims.check_flip_claims`; a claim of any kind over
a range is also judged there against the sizes no compile looked at (not resolved, never a
pass), and a range that holds no compiled size is said.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from sphinx_jaxhlo.core.claim_kinds import (
    CLAIM_KINDS,
    CLAIMS,
    OPTIONS,
    SWEEP_KINDS,
    ExpectationSyntaxError,
    check_collectives,
    check_kernels,
    check_peak_top,
    parse_condition,
    parse_count,
    parse_peak_top,
)
from sphinx_jaxhlo.core.report import Report
from sphinx_jaxhlo.core.sweeps import Condition, SweepError, parse_flip_claim
from sphinx_jaxhlo.core.sweeps import parse_condition as parse_point_condition
from sphinx_jaxhlo.core.view_options import split_top_level

__all__ = ["CLAIMS", "OPTIONS", "SWEEP_KINDS", "Check", "Expectation", "ExpectationSyntaxError", "Expectations",
           "check", "check_all", "check_collectives", "check_kernels", "check_peak_top", "claim_keyword",
           "parse_condition", "parse_count", "parse_expectations", "parse_peak_top", "split_range"]

#: ``VALUE for CONDITION``: a claim over the points of a sweep where the condition holds.
_RANGE = re.compile(r"^(?P<body>.*?)\s+for\s+(?P<where>\S.*)$", re.DOTALL)

def claim_keyword(option: str) -> str:
    """``expect-max-device`` -> ``max_device=``: a claim as the API's ``check()`` takes it."""
    return option.removeprefix("expect-").replace("-", "_") + "="


@dataclass(frozen=True)
class Expectation:
    """One expected property, for one target (``None``: every target)."""

    kind: str  # a claim kind's name (core.claim_kinds.CLAIMS): the option without "expect-"
    target: str | None
    value: str  # as the author wrote it
    #: The function it is about, or ``None`` for every function.
    function: str | None = None
    #: Over a sweep, where it applies (``n>=5000``); ``""``: at every point.
    where: str = ""

    @property
    def condition(self) -> Condition | None:
        """:attr:`where`, parsed; ``None`` when it applies everywhere."""
        return parse_point_condition(self.where) if self.where else None

    @property
    def scope(self) -> str:
        if self.function is None:
            return self.target or ""
        return f"{self.function}@{self.target or '*'}"


@dataclass(frozen=True)
class Check:
    """The result of checking one expectation against one report."""

    expectation: Expectation
    target: str
    function: str
    passed: bool
    #: What was found, in words: ``temp 20.0 GB (20,000,000,000 bytes)``.
    actual: str
    #: The point of a sweep it was checked at (``n=4096``), or ``""``.
    point: str = ""
    #: A claim about sizes that were not all compiled, which held at those that were: not a
    #: pass (``passed`` is false), but not shown false either (:mod:`sphinx_jaxhlo.core.flips`).
    unresolved: bool = False

    @property
    def message(self) -> str:
        e = self.expectation
        verdict = "NOT RESOLVED" if self.unresolved else "holds" if self.passed else "FAILED"
        what = e.kind.replace("-", " ")
        at = f" at {self.point}" if self.point else ""
        where = f" for {e.where}" if e.where else ""
        return (f"{self.function} on {self.target}{at}: expected {what} {e.value}{where}, found {self.actual} "
                f"[{verdict}]")


@dataclass
class Expectations:
    items: list[Expectation] = field(default_factory=list)

    def for_target(self, target: str, function: str | None = None) -> list[Expectation]:
        """The expectations that apply to ``function`` on ``target``: for each
        kind (and each kind of collective), the most specific of
        function@target, function@*, target, bare."""
        out: list[Expectation] = []
        for kind in sorted({e.kind for e in self.items}, key=lambda k: list(CLAIM_KINDS).index(k)):
            for sub in dict.fromkeys(_subkey(e) for e in self.items if e.kind == kind):
                for fn, tg in ((function, target), (function, None), (None, target), (None, None)):
                    hit = [e for e in self.items if e.kind == kind and _subkey(e) == sub and e.function == fn
                           and e.target == tg]
                    if hit:
                        out += hit
                        break
        return out

    def expects_error(self, target: str, function: str | None = None) -> bool:
        return any(e.kind == "error" and e.value.lower() != "none" for e in self.for_target(target, function))

    def targets_named(self) -> set[str]:
        return {e.target for e in self.items if e.target is not None}

    def symbols_named(self) -> set[str]:
        """The sweep symbols that the items' conditions and flip claims name."""
        names: set[str] = set()
        for e in self.items:
            if e.where:
                names |= parse_point_condition(e.where).names
            if e.kind == "flip" and parse_flip_claim(e.value).symbol:
                names.add(parse_flip_claim(e.value).symbol)
        return names

    def at_point(self, values: dict[str, int]) -> Expectations:
        """The items that apply at one point of a sweep (those without a condition, and those
        whose condition holds there), the claims about the whole sweep left out."""
        return Expectations([e for e in self.items if e.kind not in SWEEP_KINDS
                             and (not e.where or parse_point_condition(e.where).holds(values))])

    @property
    def over_ranges(self) -> list[Expectation]:
        """The items that need a sweep: those with a condition, and the flip claims."""
        return [e for e in self.items if e.where or e.kind in SWEEP_KINDS]

    def functions_named(self) -> set[str]:
        return {e.function for e in self.items if e.function is not None}


def _subkey(expectation: Expectation) -> str:
    """What an expectation is about within its kind (its kind's ``subkey``)."""
    return CLAIM_KINDS[expectation.kind].subkey(expectation.value)


def split_range(part: str) -> tuple[str, str]:
    """``fused for n>=5000`` -> ``("fused", "n>=5000")``; ``("fused", "")`` without ``for``.

    :raises ExpectationSyntaxError: a condition that does not parse.
    """
    m = _RANGE.match(part)
    if m is None:
        return part, ""
    where = m.group("where").strip()
    try:
        parse_point_condition(where)
    except SweepError as exc:
        raise ExpectationSyntaxError(f"{part!r}: {exc}") from None
    return m.group("body").strip(), where


#: One item of a claim: ``(function, target, value, where)``.
Item = tuple[str | None, str | None, str, str]


def _items(text: str, read: Callable[[str], tuple[str | None, str | None, str]]) -> list[Item]:
    """The items of a claim's value, each read by ``read`` (its kind's reader) once its
    ``for CONDITION`` is split off."""
    items: list[Item] = []
    for part in split_top_level(text):
        part, where = split_range(part.strip())
        if not part:
            raise ExpectationSyntaxError(f"empty item in {text!r}")
        items.append((*read(part), where))
    return items


def parse_expectations(options: dict[str, str], spell: Callable[[str], str] | None = None) -> Expectations:
    """Parse the ``expect-*`` options of a directive.

    :param options: option name (``expect-max-temp``) -> raw text.
    :param spell: how the message names the option (default: the directive's ``:expect-max-temp:``).
    :raises ExpectationSyntaxError: naming the option and the bad value.
    """
    items: list[Expectation] = []
    for claim in CLAIMS:
        option = claim.option
        if option not in options:
            continue
        kind = claim.name
        text = options[option] or ""
        try:
            seen: set[Item] = set()
            for function, target, value, where in _items(text, claim.read):
                claim.parse(value)
                item = Expectation(kind, target, value, function, where)
                sub = claim.subkey(value)
                if (function, target, sub, where) in seen:
                    what = claim.twice.format(sub=sub, scope=item.scope or "every target") if claim.twice \
                        else item.scope or "a bare value"
                    raise ExpectationSyntaxError(f"{what} given twice" + (f" for {where}" if where else ""))
                seen.add((function, target, sub, where))
                items.append(item)
        except ValueError as exc:
            name = spell(option) if spell is not None else f":{option}:"
            raise ExpectationSyntaxError(f"{name} {exc}", option, str(exc)) from exc
    return Expectations(items)


def check(expectation: Expectation, report: Report) -> Check:
    """Check one expectation against one report, by its kind's checker
    (:class:`~sphinx_jaxhlo.core.claim_kinds.ClaimKind`)."""
    claim = CLAIM_KINDS[expectation.kind]
    if claim.check is None:
        raise AssertionError(f"a {claim.name} claim is about a whole sweep, not one report")  # pragma: no cover
    err = report.error
    if err is not None and not claim.on_failure(report):
        return Check(expectation, report.target, report.function, False, f"compilation failed with {err.status}")
    passed, actual = claim.check(expectation.value, report)
    return Check(expectation, report.target, report.function, passed, actual)


def check_all(expectations: Expectations, reports: list[Report], point: str = "") -> list[Check]:
    """Check every expectation that applies to each report's target (the claims about a
    whole sweep, :data:`SWEEP_KINDS`, are not about one report: they are left out).

    :param point: the point of a sweep the reports are of (``n=4096``), named in the messages.
    """
    return [Check(c.expectation, c.target, c.function, c.passed, c.actual, point) if point else c
            for r in reports for e in expectations.for_target(r.target, r.function)
            if e.kind not in SWEEP_KINDS for c in [check(e, r)]]


# -- the claim kinds, each declared once -----------------------------------------------------------

