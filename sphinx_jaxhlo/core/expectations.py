"""Expectations an example states about its compile, and checking them.

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

#: Option name -> attribute of :class:`Expectations`.
OPTIONS = ("expect-max-temp", "expect-min-temp", "expect-max-peak", "expect-max-device", "expect-reduction",
           "expect-materialized", "expect-error", "expect-collectives", "expect-kernels", "expect-peak-top",
           "expect-flip")

#: Kinds checked against the whole of a sweep, not against one report.
SWEEP_KINDS = ("flip",)
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

    kind: str  # one of OPTIONS, without "expect-"
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
        for kind in sorted({e.kind for e in self.items}, key=lambda k: OPTIONS.index("expect-" + k)):
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
    """What an expectation is about within its kind: the collective kind for ``collectives``;
    each flip claim is about its own interval."""
    if expectation.kind == "flip":
        return expectation.value
    if expectation.kind != "collectives":
        return ""
    kind, _, _, is_bytes = parse_condition(expectation.value)
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

def _split_conditions(text: str) -> list[tuple[str | None, str | None, str, str]]:
    """The items of ``:expect-collectives:``: ``[function@][target=]KIND OP VALUE [for CONDITION]``."""
    pairs: list[tuple[str | None, str | None, str, str]] = []
    for part in split_top_level(text):
        part, where = split_range(part.strip())
        if not part:
            raise ExpectationSyntaxError(f"empty item in {text!r}")
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
        pairs.append((function, target, value, where))
    return pairs


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


def _split_pairs(text: str, kind: str = "") -> list[tuple[str | None, str | None, str, str]]:
    pairs: list[tuple[str | None, str | None, str, str]] = []
    for part in split_top_level(text):
        part, where = split_range(part.strip())
        if not part:
            raise ExpectationSyntaxError(f"empty item in {text!r}")
        if kind == "flip":
            flip = _FLIP_ITEM.match(part)
            if flip is not None and not flip.group("scope"):
                pairs.append((None, None, part, where))  # a bare claim: its "=" (K=100) is no scope
                continue
        if kind == "kernels":
            if _COUNT.match(part):
                pairs.append((None, None, part, where))  # a bare count: its "=" or "<=" is no scope
                continue
            scoped = _SCOPED_COUNT.match(part)
            if scoped is not None:  # cpu=1, cpu=<=3 and tpu:v5e<=2 alike
                part = f"{scoped.group('scope').strip()}={scoped.group('count')}"
        if "=" in part:
            scope, _, value = part.partition("=")
            scope, value = scope.strip(), value.strip()
            function, scope = _function_scope(scope, part)
            target: str | None = scope.lower() if scope not in ("*", "") or function is None else None
            if (function is None and not target) or not value:
                raise ExpectationSyntaxError(f"{part!r}: write target=value or function@target=value")
            pairs.append((function, target, value, where))
        else:
            pairs.append((None, None, part, where))
    return pairs


def _validate(kind: str, value: str) -> None:
    if kind in ("max-temp", "min-temp", "max-peak", "max-device"):
        parse_size(value)  # raises ValueError
    elif kind == "reduction":
        if value.lower() not in ("fused", "unfused", "none"):
            raise ExpectationSyntaxError(f"expected 'fused', 'unfused' or 'none', not {value!r}")
    elif kind == "materialized":
        if value.lower() != "none":
            try:
                parse_shape(_on_chip(value)[1])
            except SpecError as exc:
                raise ExpectationSyntaxError(
                    f"{value!r} is neither a shape such as f32[50000,100000] (or 'on-chip f32[...]') nor 'none': "
                    f"{exc}") from exc
    elif kind == "error" and not value.strip():
        raise ExpectationSyntaxError("expected a status such as RESOURCE_EXHAUSTED")
    elif kind == "collectives":
        parse_condition(value)
    elif kind == "kernels":
        parse_count(value)
    elif kind == "peak-top":
        parse_peak_top(value)
    elif kind == "flip":
        try:
            parse_flip_claim(value)
        except SweepError as exc:
            raise ExpectationSyntaxError(f"{value!r}: {exc}") from None


def parse_expectations(options: dict[str, str], spell: Callable[[str], str] | None = None) -> Expectations:
    """Parse the ``expect-*`` options of a directive.

    :param options: option name (``expect-max-temp``) -> raw text.
    :param spell: how the message names the option (default: the directive's ``:expect-max-temp:``).
    :raises ExpectationSyntaxError: naming the option and the bad value.
    """
    items: list[Expectation] = []
    for option in OPTIONS:
        if option not in options:
            continue
        kind = option.removeprefix("expect-")
        text = options[option] or ""
        try:
            pairs = _split_conditions(text) if kind == "collectives" else _split_pairs(text, kind)
            seen: set[tuple[str | None, str | None, str, str]] = set()
            for function, target, value, where in pairs:
                _validate(kind, value)
                item = Expectation(kind, target, value, function, where)
                if (function, target, _subkey(item), where) in seen:
                    what = item.scope or "a bare value"
                    if kind == "collectives":
                        what = f"the {_subkey(item)} of collectives for {item.scope or 'every target'}"
                    raise ExpectationSyntaxError(f"{what} given twice" + (f" for {where}" if where else ""))
                seen.add((function, target, _subkey(item), where))
                items.append(item)
        except ValueError as exc:
            name = spell(option) if spell is not None else f":{option}:"
            raise ExpectationSyntaxError(f"{name} {exc}", option, str(exc)) from exc
    return Expectations(items)


def check(expectation: Expectation, report: Report) -> Check:
    """Check one expectation against one report."""
    kind, value = expectation.kind, expectation.value

    def outcome(passed: bool, actual: str) -> Check:
        return Check(expectation, report.target, report.function, passed, actual)

    err = report.error
    if kind == "error":
        if value.lower() == "none":
            return outcome(err is None, "no error" if err is None else f"{err.status}: {err.message[:200]}")
        if err is None:
            return outcome(False, "compilation succeeded")
        hit = value.upper() == err.status.upper() or value.lower() in err.message.lower()
        return outcome(hit, f"{err.status}")
    if kind == "peak-top" and (err is None or report.live_at_peak is not None):
        return outcome(*check_peak_top(value, report))
    if err is not None:
        return outcome(False, f"compilation failed with {err.status}")
    per_device = " per device" if report.devices > 1 else ""
    if kind == "max-peak":
        peak = report.memory.peak_bytes
        if peak is None:
            return outcome(False, "peak memory not reported")
        estimate = " (estimate)" if report.memory.peak_is_estimate else ""
        return outcome(peak <= parse_size(value),
                       f"peak {format_bytes(peak)} ({format_exact(peak)}){per_device}{estimate}")
    if kind == "max-device":
        held = report.memory.device_bytes
        if held is None:
            return outcome(False, "device memory not reported")
        what = memory_space_name(DEVICE_MEMORY_SPACE, report.target)
        return outcome(held <= parse_size(value),
                       f"{what} held {format_bytes(held)} ({format_exact(held)}){per_device}")
    if kind in ("max-temp", "min-temp"):
        temp = report.memory.temp_bytes
        if temp is None:
            return outcome(False, "temp memory not reported")
        limit = parse_size(value)
        passed = temp <= limit if kind == "max-temp" else temp >= limit
        return outcome(passed, f"temp {format_bytes(temp)} ({format_exact(temp)}){per_device}")
    if kind == "collectives":
        return outcome(*check_collectives(value, report))
    if kind == "kernels":
        return outcome(*check_kernels(value, report))
    if kind == "reduction":
        reductions = report.verdict_reductions
        made = len(report.reductions) - len(reductions)
        if value.lower() == "none":
            found = f"{len(reductions)} of the program's own" if reductions else "none of the program's own"
            return outcome(not reductions, found + (f", {made} made by the compiler" if made else ""))
        if not reductions:
            return outcome(False, "no reduction of the program's own"
                           + (f" ({made} made by the compiler, which get no verdict)" if made else ""))
        # the reductions too small to matter do not decide (the line: sphinx_jaxhlo.hlo.fusion)
        deciding = report.deciding_reductions
        fused = [r for r in deciding if r.fused]
        unfused = [r for r in deciding if not r.fused]
        want_fused = value.lower() == "fused"
        passed = not unfused if want_fused else not fused
        parts = []
        if fused:
            parts.append(f"{len(fused)} fused ({', '.join(r.name for r in fused[:3])})")
        if unfused:
            parts.append("{} unfused ({})".format(
                len(unfused), ", ".join(f"{r.name} reads {r.input_materialized}" for r in unfused[:3])))
        if len(deciding) < len(reductions):
            parts.append(f"{len(reductions) - len(deciding)} too small to matter left out")
        return outcome(passed, "; ".join(parts))
    if kind == "materialized":
        # the device's memory (a TPU's HBM); what a TPU keeps in the chip's own memory is said apart
        shapes = [m.shape for m in report.stored_in_device_memory]
        on_chip = report.on_chip_materialized
        apart = (f"; {len(on_chip)} on-chip, not in HBM ({', '.join(m.shape for m in on_chip[:3])}"
                 f"{' ...' if len(on_chip) > 3 else ''})") if on_chip else ""
        if value.lower() == "none":
            biggest = report.largest_materialized
            return outcome(not shapes, ("none" if biggest is None else
                           f"{len(shapes)} buffers, largest {biggest.shape} ({format_bytes(biggest.bytes)})") + apart)
        on_chip_wanted, written = _on_chip(value)
        want = str(parse_shape(written))
        if on_chip_wanted:  # a buffer a TPU keeps in the chip's own memory
            shapes, apart = [m.shape for m in on_chip], ""
        canonical = {_canonical_shape(s) for s in shapes}
        listing = ", ".join(shapes[:5]) + (" ..." if len(shapes) > 5 else "") if shapes else "none"
        where = "on-chip" if on_chip_wanted else "materialized"
        return outcome(_canonical_shape(want) in canonical, f"{where}: {listing}{apart}")
    raise AssertionError(f"unknown expectation kind {kind}")  # pragma: no cover


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
