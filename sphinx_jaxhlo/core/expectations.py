"""Expectations an example states about its compile, and checking them.

Each kind of claim is declared once, in :data:`CLAIMS` (a :class:`ClaimKind`: its name, the
value it takes, its help, how its items are read, its parser and its checker); the
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

from sphinx_jaxhlo.core.memory import DEVICE_MEMORY_SPACE, memory_space_name
from sphinx_jaxhlo.core.report import COLLECTIVE_KINDS, Report, is_kernel
from sphinx_jaxhlo.core.sizes import format_bytes, format_exact, parse_size
from sphinx_jaxhlo.core.specs import SpecError, parse_shape
from sphinx_jaxhlo.core.sweeps import Condition, SweepError, parse_flip_claim
from sphinx_jaxhlo.core.sweeps import parse_condition as parse_point_condition
from sphinx_jaxhlo.core.view_options import split_top_level

#: ``VALUE for CONDITION``: a claim over the points of a sweep where the condition holds.
_RANGE = re.compile(r"^(?P<body>.*?)\s+for\s+(?P<where>\S.*)$", re.DOTALL)

#: What ``:expect-collectives:`` conditions name: the kinds of collective, and ``any``.
CONDITION_KINDS = (*COLLECTIVE_KINDS, "any")

#: A kernel count: ``1``, ``<=3``, ``= 2``, ``>1``.
_COUNT = re.compile(r"^(?P<op><=|>=|==|=|<|>)?\s*(?P<n>[0-9]+)$")
#: A scoped kernel count: ``cpu=1``, ``gpu:h100=<=3``, ``tpu:v5e<=2``, ``f@cpu>=1``.
_SCOPED_COUNT = re.compile(r"^(?P<scope>[^<>=]+?)\s*(?:=\s*)?(?P<count>(?:<=|>=|==|=|<|>)?\s*[0-9]+)$")
#: A peak-top claim: ``dot_general``, ``argument a``, ``line 4``, ``cos on line 4``.
_PEAK_TOP = re.compile(r"^(?:(?P<op>argument\s+\S+|[A-Za-z_][\w.\-]*)(?:\s+on\s+line\s+(?P<on>[0-9]+))?"
                       r"|line\s+(?P<line>[0-9]+))$")
_CONDITION = re.compile(r"^(?:(?P<scope>[^=<>]+?)\s*=\s*)?(?P<kind>[a-z][a-z-]*)\s*(?P<op><=|>=|==|=|<|>)\s*"
                        r"(?P<value>[0-9][0-9.]*\s*[A-Za-z]*)$")


class ExpectationSyntaxError(ValueError):
    """A malformed expectation option: :attr:`option` (``expect-max-temp``, ``""`` when not known)
    and :attr:`detail` (what is wrong with its value), to be said in each front's spelling
    (:meth:`spelled`)."""

    def __init__(self, message: str, option: str = "", detail: str = "") -> None:
        super().__init__(message)
        self.option, self.detail = option, detail or message

    def spelled(self, spell: Callable[[str], str]) -> str:
        """The message with the option as a front spells it: ``spell("expect-max-device")`` ->
        ``--expect-max-device`` on the command line, ``max_device=`` in the API."""
        return f"{spell(self.option)} {self.detail}" if self.option else str(self)


def claim_keyword(option: str) -> str:
    """``expect-max-device`` -> ``max_device=``: a claim as the API's ``check()`` takes it."""
    return option.removeprefix("expect-").replace("-", "_") + "="


@dataclass(frozen=True)
class Expectation:
    """One expected property, for one target (``None``: every target)."""

    kind: str  # a claim kind's name (:data:`CLAIMS`): the option without "expect-"
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
    """What an expectation is about within its kind (:attr:`ClaimKind.subkey`)."""
    return CLAIM_KINDS[expectation.kind].subkey(expectation.value)


def _whole(value: str) -> str:
    """A claim about the whole of its kind: one per scope."""
    return ""


def _own(value: str) -> str:
    """A claim about its own value (each flip claim is about its own interval)."""
    return value


def _collective_measure(value: str) -> str:
    """The collective kind and the measure an ``:expect-collectives:`` condition is about."""
    kind, _, _, is_bytes = parse_condition(value)
    return f"{kind} {'bytes' if is_bytes else 'count'}"


def parse_condition(value: str) -> tuple[str, str, int, bool]:
    """``all-gather<=64MiB`` -> ``("all-gather", "<=", 67108864, True)``: kind,
    comparison, limit, and whether the limit is bytes (else a count).
    ``none`` is ``any=0``.

    :raises ExpectationSyntaxError: anything else.
    """
    text = value.strip()
    if text.lower() == "none":
        return "any", "=", 0, False
    m = _CONDITION.match(text)
    if m is None or m.group("scope"):
        raise ExpectationSyntaxError(f"{value!r}: write KIND=N, KIND<=N or KIND<=SIZE (e.g. all-gather=0, "
                                     "all-reduce<=2, reduce-scatter<=64MiB), or none")
    kind = m.group("kind")
    if kind not in CONDITION_KINDS:
        raise ExpectationSyntaxError(f"{value!r}: unknown collective {kind!r} (known: {', '.join(CONDITION_KINDS)})")
    number = m.group("value").strip()
    op = "=" if m.group("op") == "==" else m.group("op")
    if number.isdigit():
        return kind, op, int(number), False
    return kind, op, parse_size(number), True


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



def _function_scope(scope: str, part: str) -> tuple[str | None, str]:
    """``fn@target`` -> ``("fn", "target")``; a scope without ``@`` names no function."""
    scope = scope.strip()
    if "@" not in scope:
        return None, scope
    function, _, rest = scope.partition("@")
    function = function.strip()
    if not function.isidentifier():
        raise ExpectationSyntaxError(f"{part!r}: {function!r} is not a function name")
    return function, rest.strip()

#: One item of a claim: ``(function, target, value, where)``.
Item = tuple[str | None, str | None, str, str]


def _items(text: str, read: Callable[[str], tuple[str | None, str | None, str]]) -> list[Item]:
    """The items of a claim's value, each read by ``read`` (:attr:`ClaimKind.read`) once its
    ``for CONDITION`` is split off."""
    items: list[Item] = []
    for part in split_top_level(text):
        part, where = split_range(part.strip())
        if not part:
            raise ExpectationSyntaxError(f"empty item in {text!r}")
        items.append((*read(part), where))
    return items


def _condition_item(part: str) -> tuple[str | None, str | None, str]:
    """An item of ``:expect-collectives:``: ``[function@][target=]KIND OP VALUE``."""
    scope: str | None = None
    value = part
    if part.lower() != "none":
        m = _CONDITION.match(part)
        if m is not None and m.group("scope"):
            scope, value = m.group("scope"), part[m.start("kind"):]
        elif m is None:
            head, eq, rest = part.partition("=")
            if eq and rest.strip().lower() == "none":
                scope, value = head, "none"
    function: str | None = None
    target: str | None = None
    if scope is not None:
        function, scope = _function_scope(scope, part)
        target = scope.lower() if scope not in ("*", "") else None
    return function, target, value


def parse_count(value: str) -> tuple[str, int]:
    """``3`` -> ``("=", 3)``, ``<=3`` -> ``("<=", 3)``: a kernel count's comparison and number.

    :raises ExpectationSyntaxError: anything else.
    """
    m = _COUNT.match(value.strip())
    if m is None:
        raise ExpectationSyntaxError(f"{value!r}: write a count, N or OP N (1, <=3, >=2, <4, >1)")
    op = m.group("op") or "="
    return ("=" if op == "==" else op), int(m.group("n"))


#: A flip claim, bare or scoped: ``between 4096 and 5000``, ``gpu:h100=reduction between K=1 and K=9``.
_FLIP_ITEM = re.compile(r"^(?:(?P<scope>[^=\s]+)\s*=\s*)?(?P<value>(?:[a-z]+\s+)?(?:between|none)\b.*)$")


def _scoped_item(part: str) -> tuple[str | None, str | None, str]:
    """``target=value``, ``function@target=value`` (``function@*=value``), or a bare value."""
    if "=" not in part:
        return None, None, part
    scope, _, value = part.partition("=")
    scope, value = scope.strip(), value.strip()
    function, scope = _function_scope(scope, part)
    target: str | None = scope.lower() if scope not in ("*", "") or function is None else None
    if (function is None and not target) or not value:
        raise ExpectationSyntaxError(f"{part!r}: write target=value or function@target=value")
    return function, target, value


def _flip_item(part: str) -> tuple[str | None, str | None, str]:
    """A flip claim: a bare one's ``=`` (``K=100``) is no scope."""
    flip = _FLIP_ITEM.match(part)
    if flip is not None and not flip.group("scope"):
        return None, None, part
    return _scoped_item(part)


def _count_item(part: str) -> tuple[str | None, str | None, str]:
    """A kernel count: a bare count's ``=`` or ``<=`` is no scope; ``cpu=1``, ``cpu=<=3`` and
    ``tpu:v5e<=2`` alike."""
    if _COUNT.match(part):
        return None, None, part
    scoped = _SCOPED_COUNT.match(part)
    if scoped is not None:
        part = f"{scoped.group('scope').strip()}={scoped.group('count')}"
    return _scoped_item(part)


def parse_reduction(value: str) -> str:
    """``fused``, ``unfused`` or ``none``. :raises ExpectationSyntaxError: anything else."""
    if value.lower() not in ("fused", "unfused", "none"):
        raise ExpectationSyntaxError(f"expected 'fused', 'unfused' or 'none', not {value!r}")
    return value.lower()


def parse_materialized(value: str) -> tuple[bool, str] | None:
    """``f32[50000,100000]`` -> ``(False, shape)``, ``on-chip f32[8,512]`` -> ``(True, shape)``,
    ``none`` -> ``None``. :raises ExpectationSyntaxError: anything else."""
    if value.lower() == "none":
        return None
    on_chip, written = _on_chip(value)
    try:
        return on_chip, str(parse_shape(written))
    except SpecError as exc:
        raise ExpectationSyntaxError(
            f"{value!r} is neither a shape such as f32[50000,100000] (or 'on-chip f32[...]') nor 'none': "
            f"{exc}") from exc


def parse_status(value: str) -> str:
    """A status (``RESOURCE_EXHAUSTED``), words of the message, or ``none``.
    :raises ExpectationSyntaxError: nothing."""
    if not value.strip():
        raise ExpectationSyntaxError("expected a status such as RESOURCE_EXHAUSTED")
    return value


def parse_flip(value: str) -> object:
    """A flip claim (:func:`sphinx_jaxhlo.core.sweeps.parse_flip_claim`).
    :raises ExpectationSyntaxError: one that does not parse."""
    try:
        return parse_flip_claim(value)
    except SweepError as exc:
        raise ExpectationSyntaxError(f"{value!r}: {exc}") from None


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
    """Check one expectation against one report (by its kind's :attr:`ClaimKind.check`)."""
    claim = CLAIM_KINDS[expectation.kind]
    if claim.check is None:
        raise AssertionError(f"a {claim.name} claim is about a whole sweep, not one report")  # pragma: no cover
    err = report.error
    if err is not None and not claim.on_failure(report):
        return Check(expectation, report.target, report.function, False, f"compilation failed with {err.status}")
    passed, actual = claim.check(expectation.value, report)
    return Check(expectation, report.target, report.function, passed, actual)


def _per_device(report: Report) -> str:
    return " per device" if report.devices > 1 else ""


def check_error(value: str, report: Report) -> tuple[bool, str]:
    """``:expect-error:``: the compile failed with this status (or words of its message), or ``none``."""
    err = report.error
    if value.lower() == "none":
        return err is None, "no error" if err is None else f"{err.status}: {err.message[:200]}"
    if err is None:
        return False, "compilation succeeded"
    return value.upper() == err.status.upper() or value.lower() in err.message.lower(), f"{err.status}"


def check_max_peak(value: str, report: Report) -> tuple[bool, str]:
    """``:expect-max-peak:``: XLA's peak memory at most the size."""
    peak = report.memory.peak_bytes
    if peak is None:
        return False, "peak memory not reported"
    estimate = " (estimate)" if report.memory.peak_is_estimate else ""
    return peak <= parse_size(value), \
        f"peak {format_bytes(peak)} ({format_exact(peak)}){_per_device(report)}{estimate}"


def check_max_device(value: str, report: Report) -> tuple[bool, str]:
    """``:expect-max-device:``: what the device holds at most the size."""
    held = report.memory.device_bytes
    if held is None:
        return False, "device memory not reported"
    what = memory_space_name(DEVICE_MEMORY_SPACE, report.target)
    return held <= parse_size(value), f"{what} held {format_bytes(held)} ({format_exact(held)}){_per_device(report)}"


def _temp(value: str, report: Report, at_most: bool) -> tuple[bool, str]:
    temp = report.memory.temp_bytes
    if temp is None:
        return False, "temp memory not reported"
    limit = parse_size(value)
    return (temp <= limit if at_most else temp >= limit), \
        f"temp {format_bytes(temp)} ({format_exact(temp)}){_per_device(report)}"


def check_max_temp(value: str, report: Report) -> tuple[bool, str]:
    """``:expect-max-temp:``: temp memory at most the size."""
    return _temp(value, report, at_most=True)


def check_min_temp(value: str, report: Report) -> tuple[bool, str]:
    """``:expect-min-temp:``: temp memory at least the size."""
    return _temp(value, report, at_most=False)


def check_reduction(value: str, report: Report) -> tuple[bool, str]:
    """``:expect-reduction:``: every reduction of the program's own that decides is fused
    (``unfused``: none is), or there is none."""
    reductions = report.verdict_reductions
    made = len(report.reductions) - len(reductions)
    if value.lower() == "none":
        found = f"{len(reductions)} of the program's own" if reductions else "none of the program's own"
        return not reductions, found + (f", {made} made by the compiler" if made else "")
    if not reductions:
        return False, "no reduction of the program's own" + (
            f" ({made} made by the compiler, which get no verdict)" if made else "")
    # the reductions too small to matter do not decide (the line: sphinx_jaxhlo.hlo.fusion)
    deciding = report.deciding_reductions
    fused = [r for r in deciding if r.fused]
    unfused = [r for r in deciding if not r.fused]
    passed = not unfused if value.lower() == "fused" else not fused
    parts = []
    if fused:
        parts.append(f"{len(fused)} fused ({', '.join(r.name for r in fused[:3])})")
    if unfused:
        parts.append("{} unfused ({})".format(
            len(unfused), ", ".join(f"{r.name} reads {r.input_materialized}" for r in unfused[:3])))
    if len(deciding) < len(reductions):
        parts.append(f"{len(reductions) - len(deciding)} too small to matter left out")
    return passed, "; ".join(parts)


def check_materialized(value: str, report: Report) -> tuple[bool, str]:
    """``:expect-materialized:``: a buffer of this shape is stored in the device's memory (a TPU's
    HBM; ``on-chip SHAPE``: in the chip's own), or none is; what a TPU keeps on chip is said apart."""
    shapes = [m.shape for m in report.stored_in_device_memory]
    on_chip = report.on_chip_materialized
    apart = (f"; {len(on_chip)} on-chip, not in HBM ({', '.join(m.shape for m in on_chip[:3])}"
             f"{' ...' if len(on_chip) > 3 else ''})") if on_chip else ""
    wanted = parse_materialized(value)
    if wanted is None:
        biggest = report.largest_materialized
        return not shapes, ("none" if biggest is None else
                            f"{len(shapes)} buffers, largest {biggest.shape} ({format_bytes(biggest.bytes)})") + apart
    on_chip_wanted, want = wanted
    if on_chip_wanted:  # a buffer a TPU keeps in the chip's own memory
        shapes, apart = [m.shape for m in on_chip], ""
    canonical = {_canonical_shape(s) for s in shapes}
    listing = ", ".join(shapes[:5]) + (" ..." if len(shapes) > 5 else "") if shapes else "none"
    where = "on-chip" if on_chip_wanted else "materialized"
    return _canonical_shape(want) in canonical, f"{where}: {listing}{apart}"


def check_collectives(value: str, report: Report) -> tuple[bool, str]:
    """Check one ``:expect-collectives:`` condition: ``(passed, what was found)``."""
    kind, op, limit, is_bytes = parse_condition(value)
    found = [c for c in report.collectives if kind == "any" or c.kind == kind]
    measure = sum(c.bytes for c in found) if is_bytes else len(found)
    passed = {"=": measure == limit, "<=": measure <= limit, ">=": measure >= limit, "<": measure < limit,
              ">": measure > limit}[op]
    what = "collective" if kind == "any" else kind
    actual = f"{len(found)} {what}{'s' if len(found) != 1 else ''}"
    if found:
        total = sum(c.bytes for c in found)
        actual += f", {format_bytes(total)} per device" if not is_bytes else \
            f", {format_bytes(total)} ({format_exact(total)}) per device"
        listing = ", ".join(f"{c.name} {c.shape}" + (f" over {'+'.join(c.axes)}" if c.axes else "")
                            for c in found[:3])
        actual += f" ({listing}{', ...' if len(found) > 3 else ''})"
    return passed, actual


def check_kernels(value: str, report: Report) -> tuple[bool, str]:
    """Check one ``:expect-kernels:`` count: ``(passed, what was found)``, the kernels
    named (largest first, three at most)."""
    op, limit = parse_count(value)
    kernels = sorted((f for f in report.fusions if is_kernel(f)), key=lambda f: -f.bytes)
    n = len(kernels)
    passed = {"=": n == limit, "<=": n <= limit, ">=": n >= limit, "<": n < limit, ">": n > limit}[op]
    actual = f"{n} kernel{'s' if n != 1 else ''}"
    if kernels:
        listing = ", ".join(f"{f.name} ({f.kind})" for f in kernels[:3])
        actual += f" ({listing}{', ...' if n > 3 else ''})"
    return passed, actual


def _on_chip(value: str) -> tuple[bool, str]:
    """``on-chip f32[8,512]`` -> ``(True, "f32[8,512]")``: a materialized claim about a buffer a TPU
    keeps in the chip's own memory (``S(1)``), not in HBM; a plain shape -> ``(False, shape)``."""
    head, _, rest = value.strip().partition(" ")
    return (True, rest.strip()) if head.lower() == "on-chip" and rest.strip() else (False, value.strip())


def parse_peak_top(value: str) -> tuple[str | None, int | None]:
    """``dot_general on line 4`` -> ``("dot_general", 4)``, ``line 4`` -> ``(None, 4)``,
    ``argument a`` -> ``("argument a", None)``: the operation and the line a peak-top claim names.

    :raises ExpectationSyntaxError: anything else.
    """
    m = _PEAK_TOP.match(" ".join(value.split()))
    if m is None:
        raise ExpectationSyntaxError(f"{value!r}: write the operation that made the largest buffer at the peak "
                                     "(dot_general, argument a), its line (line 4), or both (dot_general on line 4)")
    line = m.group("on") or m.group("line")
    return m.group("op"), int(line) if line else None


def check_peak_top(value: str, report: Report) -> tuple[bool, str]:
    """Check one ``:expect-peak-top:`` claim: ``(passed, what was found)``."""
    op, line = parse_peak_top(value)
    peak = report.live_at_peak
    if peak is None:
        why = report.buffer_assignment_note or "the report has no buffer assignment"
        return False, f"no list of what is live at the peak ({why})"
    top = peak.top
    if top is None:
        return False, "nothing live at the peak"
    made = (f"argument {top.producer_op}" if top.kind == "argument" else top.producer_op) or top.producer \
        or top.kind
    lines = top.source_lines
    # "cos of dot_general" (a GEMM with its epilogue) is made by either op; a claim may name one
    passed = (op is None or op == made or op in made.split(" of ")) and (line is None or line in lines)
    where = f" on line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}" if lines else ""
    share = 100 * top.bytes / peak.bytes if peak.bytes else 0.0
    return passed, (f"{top.shape or top.kind} made by {made}{where}, {format_bytes(top.bytes)} ({share:.0f} % of "
                    f"{format_bytes(peak.bytes)} at the peak, step {peak.step} of {peak.steps})")


def _canonical_shape(shape: str) -> str:
    """``s32[3]`` and ``i32[3]`` are the same; HLO writes ``s32`` and ``pred``."""
    aliases = {"i64": "s64", "i32": "s32", "i16": "s16", "i8": "s8", "bool": "pred"}
    dtype, _, rest = shape.partition("[")
    return aliases.get(dtype, dtype) + "[" + rest.replace(" ", "")


def check_all(expectations: Expectations, reports: list[Report], point: str = "") -> list[Check]:
    """Check every expectation that applies to each report's target (the claims about a
    whole sweep, :data:`SWEEP_KINDS`, are not about one report: they are left out).

    :param point: the point of a sweep the reports are of (``n=4096``), named in the messages.
    """
    return [Check(c.expectation, c.target, c.function, c.passed, c.actual, point) if point else c
            for r in reports for e in expectations.for_target(r.target, r.function)
            if e.kind not in SWEEP_KINDS for c in [check(e, r)]]


# -- the claim kinds, each declared once -----------------------------------------------------------


def _never(report: Report) -> bool:
    return False


def _always(report: Report) -> bool:
    return True


def _has_live_list(report: Report) -> bool:
    return report.live_at_peak is not None


@dataclass(frozen=True)
class ClaimKind:
    """One kind of claim, declared once: the directive's ``:expect-<name>:`` option, the command
    line's ``--expect-<name>`` flag and ``check(<name>=)`` are made from it
    (:mod:`sphinx_jaxhlo.core.options`), its items are read, parsed and checked by the functions it
    names.  A new kind of claim is one more entry in :data:`CLAIMS`."""

    #: ``max-temp``: the option is ``expect-max-temp``, the API's keyword ``max_temp``.
    name: str
    #: What the value is, as help texts show it: ``SIZE``.
    value: str
    #: One line of help (the command line's; the reference page says more).
    help: str
    #: Checks one item's value. :raises ValueError: what is wrong with it.
    parse: Callable[[str], object]
    #: ``(passed, what was found)`` for one item's value on one report; ``None``: a claim about a
    #: whole sweep (:func:`sphinx_jaxhlo.core.sweep_claims.check_flip_claims`).
    check: Callable[[str, Report], tuple[bool, str]] | None
    #: Whether it is checked on a compile that failed (else it fails, naming the status).
    on_failure: Callable[[Report], bool] = _never
    #: Reads one item (``for CONDITION`` split off): ``(function, target, value)``.
    read: Callable[[str], tuple[str | None, str | None, str]] = _scoped_item
    #: What an item is about within its kind: two items with the same scope and subkey clash.
    subkey: Callable[[str], str] = _whole
    #: How a clash is said (``{sub}``, ``{scope}``); ``""``: by the scope.
    twice: str = ""

    @property
    def option(self) -> str:
        return f"expect-{self.name}"

    @property
    def keyword(self) -> str:
        return self.name.replace("-", "_")

    @property
    def sweep_only(self) -> bool:
        """About the whole of a sweep, not one report."""
        return self.check is None


#: Every kind of claim, in the order the reference page gives them.
CLAIMS: tuple[ClaimKind, ...] = (
    ClaimKind("max-temp", "SIZE", "temp memory at most SIZE (64MiB, 10GB)", parse_size, check_max_temp),
    ClaimKind("min-temp", "SIZE", "temp memory at least SIZE", parse_size, check_min_temp),
    ClaimKind("max-peak", "SIZE", "XLA's peak memory at most SIZE (on a TPU it counts on-chip buffers: see "
              "--expect-max-device)", parse_size, check_max_peak),
    ClaimKind("max-device", "SIZE", "the memory the device holds at most SIZE (arguments, outputs, temp and "
              "code; a TPU's HBM)", parse_size, check_max_device),
    ClaimKind("reduction", "fused|unfused", "every reduction is fused / unfused", parse_reduction, check_reduction),
    ClaimKind("materialized", "SHAPE|none", "a buffer of this shape is materialized (f32[50000,100000]), or none "
              "is", parse_materialized, check_materialized),
    ClaimKind("error", "STATUS|none", "the compile fails with this status (RESOURCE_EXHAUSTED) or message; none: "
              "it must not fail", parse_status, check_error, on_failure=_always),
    ClaimKind("collectives", "CONDITIONS", "collectives on a mesh: all-gather=0, all-reduce<=1, "
              "reduce-scatter<=64MiB, or none", parse_condition, check_collectives, read=_condition_item,
              subkey=_collective_measure, twice="the {sub} of collectives for {scope}"),
    ClaimKind("kernels", "COUNT", "how many kernels the program runs: 1, <=3, or per target (cpu=1, tpu:v5e<=2)",
              parse_count, check_kernels, read=_count_item),
    ClaimKind("peak-top", "WHAT", "the largest buffer live at the peak: the operation that made it (dot_general, "
              "'argument a'), its line ('line 4'), or both ('dot_general on line 4')", parse_peak_top,
              check_peak_top, on_failure=_has_live_list),
    ClaimKind("flip", "CLAIM", "with a sweep: where a decision flips: 'between 4096 and 5000', "
              "'gpu:h100=reduction between 4096 and 5000', or none", parse_flip, None, read=_flip_item, subkey=_own),
)
#: Claim kind name (``max-temp``) -> its declaration.
CLAIM_KINDS: dict[str, ClaimKind] = {claim.name: claim for claim in CLAIMS}
#: The options of the claims: ``expect-max-temp``...
OPTIONS = tuple(claim.option for claim in CLAIMS)
#: Kinds checked against the whole of a sweep, not against one report.
SWEEP_KINDS = tuple(claim.name for claim in CLAIMS if claim.sweep_only)
