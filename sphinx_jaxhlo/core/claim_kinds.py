"""The kinds of claim an example can state, each declared once (:data:`CLAIMS`): its name, the
value it takes, its help, how one item of it is read, its parser and its checker.

The directive's ``:expect-*:`` options, the command line's ``--expect-*`` flags and the API's
``check()`` keywords are made from this table (:mod:`sphinx_jaxhlo.core.options`); what is
common to every claim (the scopes ``target=`` and ``function@target=``, ``for CONDITION`` over a
sweep, the most specific item applying) is :mod:`sphinx_jaxhlo.core.expectations`'.  A new kind
of claim is one more entry in :data:`CLAIMS`, with the parser and checker it names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from sphinx_jaxhlo.core.memory import DEVICE_MEMORY_SPACE, memory_space_name
from sphinx_jaxhlo.core.report import COLLECTIVE_KINDS, Report, is_kernel
from sphinx_jaxhlo.core.sizes import format_bytes, format_exact, parse_size
from sphinx_jaxhlo.core.specs import SpecError, parse_shape
from sphinx_jaxhlo.core.sweeps import SweepError, parse_flip_claim

__all__ = ["CLAIMS", "CLAIM_KINDS", "OPTIONS", "SWEEP_KINDS", "ClaimKind", "ExpectationSyntaxError",
           "check_collectives", "check_kernels", "check_peak_top", "parse_condition", "parse_count",
           "parse_peak_top"]

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
