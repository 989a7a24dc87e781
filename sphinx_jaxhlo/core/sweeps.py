"""Sweeps: one example compiled at many sizes, and the claims made over ranges of them.

An example whose ``:args:`` names a size (``f32[n,3]``) gives the size's
values with ``:sweep:``; each value (each *point*) is an ordinary compile of
the example, planned, cached and snapshotted like any other
(:func:`sphinx_jaxhlo.pipeline.plan.sweep_points`).  Grammar of ``:sweep:``
(whitespace is free)::

    sweep   := item ("," item)*
    item    := NAME "=" values                 # a swept symbol
             | NAME "=" NAME                   # tied: takes the other symbol's values (d=n)
    values  := NUMBER ("," NUMBER)*            # the list runs to the next NAME "="
             | NUMBER ".." NUMBER [step]
    step    := "/" COUNT                       # COUNT points, evenly spaced on a log scale
             | "*" FACTOR                      # the first, times FACTOR, times FACTOR... up to the last
             | "+" STEP                        # the first, plus STEP, plus STEP... up to the last
    NUMBER  := 4096 | 100_000 | 1e5 | 2**14    # a positive integer

``A..B`` alone is :data:`DEFAULT_COUNT` points evenly spaced on a log scale,
both ends included, each rounded to an integer.  A list is sorted; a value
given twice is an error.  At most two symbols are swept independently (two
make a grid of every pair of values); any number may be tied to them.  A
symbol that is no size of ``:args:`` is passed to the function as a static
argument of that name (``chunk=100..10000``).

Claims over ranges (``:expect-reduction: gpu:h100=fused for n>=5000``) end
with a condition on the point, :func:`parse_condition`::

    condition := clause ("and" clause)*
    clause    := NAME OP NUMBER | NUMBER OP NAME [OP NUMBER]     # n>=5000, 1000<=n<=4096
    OP        := "<" | "<=" | ">" | ">=" | "=" | "=="

and ``:expect-flip:`` says where a decision flips, :func:`parse_flip_claim`::

    claim     := [WHAT] "between" BOUND "and" BOUND | [WHAT] "none"
    WHAT      := "reduction" | "producer" | "kernels" | "error" | "any"     # default: any
    BOUND     := NUMBER | NAME "=" NUMBER                         # the symbol names the axis of a grid

Nothing here compiles or imports anything outside the standard library.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import product

__all__ = [
    "DEFAULT_COUNT",
    "FLIP_KINDS",
    "MAX_AXIS_POINTS",
    "MAX_POINTS",
    "Axis",
    "Condition",
    "FlipClaim",
    "Point",
    "Sweep",
    "SweepError",
    "parse_condition",
    "parse_flip_claim",
    "parse_sweep",
]

#: Points of ``A..B`` when no step is given.
DEFAULT_COUNT = 8
#: The most values one symbol takes, and the most points a sweep has.
MAX_AXIS_POINTS = 64
MAX_POINTS = 256
#: What ``:expect-flip:`` may name: what changes between two adjacent points.
FLIP_KINDS = ("reduction", "producer", "kernels", "error", "any")


class SweepError(ValueError):
    """A malformed ``:sweep:`` value, condition or flip claim; ``column`` is 0-based in its text."""

    def __init__(self, message: str, column: int | None = None) -> None:
        super().__init__(message)
        self.column = column


@dataclass(frozen=True)
class Axis:
    """One swept symbol and the symbols tied to it (``n`` and ``d`` for ``n=..., d=n``)."""

    names: tuple[str, ...]
    values: tuple[int, ...]

    @property
    def name(self) -> str:
        return self.names[0]

    @property
    def title(self) -> str:
        """``n = d``: the symbols that take these values."""
        return " = ".join(self.names)


@dataclass(frozen=True)
class Point:
    """One point of a sweep: the value of every symbol (tied ones included)."""

    values: tuple[tuple[str, int], ...]
    #: The swept symbols (one per axis) and the point's place along each (a probe: ``()``).
    axes: tuple[str, ...] = ()
    index: tuple[int, ...] = ()
    #: A point that bisection added between two of the sweep's (:mod:`sphinx_jaxhlo.core.bisection`):
    #: the axis it was placed on; ``""`` for the sweep's own points.
    probe: str = ""

    def __getitem__(self, name: str) -> int:
        for key, value in self.values:
            if key == name:
                return value
        raise KeyError(name)

    def as_dict(self) -> dict[str, int]:
        return dict(self.values)

    @property
    def coordinates(self) -> tuple[int, ...]:
        """The value of each axis' symbol, in axis order."""
        return tuple(self[name] for name in self.axes)

    @property
    def label(self) -> str:
        """``n=4096``, ``rows=1000, K=64``: the swept symbols' values."""
        return ", ".join(f"{name}={self[name]}" for name in self.axes)

    @property
    def slot(self) -> str:
        """``n4096``, ``rows1000-K64``: what the point adds to its snapshot slots' names."""
        return "-".join(f"{name}{self[name]}" for name in self.axes)


@dataclass(frozen=True)
class Sweep:
    """The parsed ``:sweep:`` option, and what the example's other options make of its symbols."""

    axes: tuple[Axis, ...]
    #: The option as written.
    text: str = ""
    #: The ``:args:`` text whose sizes the symbols give (``f32[n,3], f32[d,3]``).
    args: str = ""
    #: The symbols that are no size of ``:args:``: static arguments of the function.
    static: tuple[str, ...] = ()

    @property
    def symbols(self) -> tuple[str, ...]:
        return tuple(name for axis in self.axes for name in axis.names)

    @property
    def is_grid(self) -> bool:
        return len(self.axes) == 2

    def axis(self, name: str) -> Axis:
        """The axis a symbol belongs to."""
        for axis in self.axes:
            if name in axis.names:
                return axis
        raise KeyError(name)

    def points(self) -> list[Point]:
        """Every point, the first axis varying slowest."""
        out = []
        axes = tuple(a.name for a in self.axes)
        for index in product(*(range(len(a.values)) for a in self.axes)):
            values = [(name, axis.values[i]) for axis, i in zip(self.axes, index, strict=True) for name in axis.names]
            out.append(Point(tuple(values), axes, tuple(index)))
        return out

    def probe_point(self, base: Point, axis: str, value: int) -> Point:
        """The point at ``value`` on ``axis`` (and the symbols tied to it), the other axes as at
        ``base``: a probe that bisection places on that axis."""
        names = self.axis(axis).names
        values = tuple((name, value if name in names else v) for name, v in base.values)
        return Point(values, base.axes, (), self.axis(axis).name)

    def describe(self) -> str:
        """``n = d from 1024 to 16384, 8 sizes``; a grid: both axes, ``(6 × 4 points)``."""
        parts = []
        for axis in self.axes:
            values = axis.values
            if len(values) == 1:
                parts.append(f"{axis.title} = {values[0]:,}")
            else:
                parts.append(f"{axis.title} from {values[0]:,} to {values[-1]:,} ({len(values)} sizes)")
        return " and ".join(parts)


# -- reading the option ---------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<number>[0-9][0-9_]*(?:\.[0-9]+)?(?:[eE][0-9]+)?(?:\*\*[0-9]+)?)|(?P<name>[A-Za-z_][A-Za-z_0-9]*)"
    r"|(?P<punct>\.\.|<=|>=|==|[,=/*+<>])|(?P<bad>\S))")


def _tokens(text: str, what: str) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:  # only trailing whitespace
            break
        kind = m.lastgroup or "bad"
        if kind == "bad":
            raise SweepError(f"unexpected {m.group(kind)!r} at column {m.start(kind) + 1} of {what}", m.start(kind))
        out.append((kind, m.group(kind), m.start(kind)))
        pos = m.end()
    return out


def _number(token: str, col: int, what: str = "a size", whole: bool = True) -> float:
    """``4096``, ``100_000``, ``1e5``, ``2**14``, ``1.5`` (when not ``whole``)."""
    text = token.replace("_", "")
    try:
        if "**" in text:
            base, _, power = text.partition("**")
            value: float = float(int(base) ** int(power)) if "." not in base else math.inf
        else:
            value = float(text)
    except (ValueError, OverflowError):
        value = math.nan
    if not math.isfinite(value) or value <= 0 or (whole and value != int(value)) or value > 2**53:
        kind = "a positive integer" if whole else "a positive number"
        raise SweepError(f"{what} {token!r} at column {col + 1} is not {kind}", col)
    return value


class _Reader:
    def __init__(self, text: str, what: str) -> None:
        self.text, self.what = text, what
        self.tokens = _tokens(text, what)
        self.i = 0

    def peek(self, ahead: int = 0) -> tuple[str, str, int] | None:
        j = self.i + ahead
        return self.tokens[j] if j < len(self.tokens) else None

    def next(self, expected: str) -> tuple[str, str, int]:
        tok = self.peek()
        if tok is None:
            raise SweepError(f"{self.what} ends early: expected {expected}", len(self.text))
        self.i += 1
        return tok

    def at(self, punct: str, ahead: int = 0) -> bool:
        tok = self.peek(ahead)
        return tok is not None and tok[0] == "punct" and tok[1] == punct

    def starts_item(self) -> bool:
        """At ``NAME =``: the next symbol."""
        tok = self.peek()
        return tok is not None and tok[0] == "name" and self.at("=", 1)


def _range(reader: _Reader, low: int, low_col: int) -> tuple[int, ...]:
    """The values of ``low..HIGH[step]``, ``..`` read."""
    kind, text, col = reader.next("the last size of the range")
    if kind != "number":
        raise SweepError(f"expected the last size of the range at column {col + 1}, found {text!r}", col)
    high = int(_number(text, col))
    if high <= low:
        raise SweepError(f"the range {low}..{high} at column {low_col + 1} does not go up", low_col)
    step = reader.peek()
    if step is None or step[0] != "punct" or step[1] not in "/*+":
        return _log_spaced(low, high, DEFAULT_COUNT)
    reader.i += 1
    kind, text, col = reader.next(f"a number after {step[1]!r}")
    if kind != "number":
        raise SweepError(f"expected a number after {step[1]!r} at column {col + 1}, found {text!r}", col)
    if step[1] == "/":
        count = _number(text, col, "a count")
        if count < 2:
            raise SweepError(f"a range needs at least 2 points, not {text} (column {col + 1})", col)
        if count > MAX_AXIS_POINTS:
            raise SweepError(f"{text} points at column {col + 1}: a symbol takes at most {MAX_AXIS_POINTS}", col)
        return _log_spaced(low, high, int(count))
    if step[1] == "*":
        factor = _number(text, col, "a factor", whole=False)
        if factor <= 1:
            raise SweepError(f"the factor {text} at column {col + 1} must be more than 1", col)
        values: list[int] = []
        value = float(low)
        while value <= high * (1 + 1e-12) and len(values) <= MAX_AXIS_POINTS:
            if round(value) not in values:
                values.append(round(value))
            value *= factor
        return tuple(values)
    stride = int(_number(text, col, "a step"))
    return tuple(range(low, high + 1, stride))[: MAX_AXIS_POINTS + 1]


def _log_spaced(low: int, high: int, count: int) -> tuple[int, ...]:
    """``count`` values from ``low`` to ``high``, evenly spaced on a log scale, rounded, without repeats."""
    ratio = high / low
    return tuple(sorted({round(low * ratio ** (i / (count - 1))) for i in range(count)}))


def parse_sweep(text: str) -> Sweep:
    """Parse a ``:sweep:`` value (see the module's grammar).

    :raises SweepError: with the column of the problem.
    """
    reader = _Reader(text, "the sweep")
    if reader.peek() is None:
        raise SweepError("the sweep is empty: write symbol=values, such as n=1000..100000 or n=1000,4096,5000", 0)
    swept: dict[str, tuple[tuple[int, ...], int]] = {}
    ties: dict[str, tuple[str, int]] = {}
    while True:
        kind, name, col = reader.next("a symbol")
        if kind != "name":
            raise SweepError(f"expected a symbol (such as n=...) at column {col + 1}, found {name!r}", col)
        if name in swept or name in ties:
            raise SweepError(f"symbol {name!r} is given twice (column {col + 1})", col)
        if not reader.at("="):
            tok = reader.peek()
            found = repr(tok[1]) if tok else "the end"
            raise SweepError(f"expected '=' after {name!r} at column {col + len(name) + 1}, found {found}",
                             tok[2] if tok else len(text))
        reader.i += 1
        kind, value, vcol = reader.next(f"the values of {name!r}")
        if kind == "name":
            after = reader.peek()
            if after is not None and not (after[0] == "punct" and after[1] == ","):
                raise SweepError(f"expected a size at column {vcol + 1}, found {value!r} (a symbol alone ties "
                                 f"{name} to it: {name}={value})", vcol)
            ties[name] = (value, vcol)
        elif kind != "number":
            raise SweepError(f"expected the values of {name!r} at column {vcol + 1}, found {value!r}", vcol)
        else:
            first = int(_number(value, vcol))
            if reader.at(".."):
                reader.i += 1
                values = _range(reader, first, vcol)
            else:
                listed = [(first, vcol)]
                while reader.at(",") and not (reader.peek(1) is not None and reader.peek(1)[0] == "name"):  # type: ignore[index]
                    reader.i += 1
                    kind, more, mcol = reader.next("a size")
                    if kind != "number":
                        raise SweepError(f"expected a size at column {mcol + 1}, found {more!r}", mcol)
                    number = int(_number(more, mcol))
                    if number in (v for v, _ in listed):
                        raise SweepError(f"{name}={number} is given twice (column {mcol + 1})", mcol)
                    listed.append((number, mcol))
                values = tuple(sorted(v for v, _ in listed))
            if len(values) > MAX_AXIS_POINTS:
                raise SweepError(f"{name!r} takes {len(values)} values (column {vcol + 1}); a symbol takes at most "
                                 f"{MAX_AXIS_POINTS}", vcol)
            swept[name] = (values, col)
        tok = reader.peek()
        if tok is None:
            break
        if tok[0] != "punct" or tok[1] != ",":
            raise SweepError(f"unexpected {tok[1]!r} at column {tok[2] + 1}: items are separated by commas", tok[2])
        reader.i += 1
        if not reader.starts_item():
            tok = reader.peek()
            raise SweepError(f"expected symbol=values after the comma at column {(tok or ('', '', len(text)))[2] + 1}",
                             tok[2] if tok else len(text))
    axes = _axes(swept, ties)
    if len(axes) > 2:
        names = ", ".join(a.name for a in axes)
        raise SweepError(f"{len(axes)} symbols swept independently ({names}): a sweep has at most two (a grid); "
                         "tie the others to one of them (d=n)", swept[axes[2].name][1])
    total = math.prod(len(a.values) for a in axes)
    if total > MAX_POINTS:
        raise SweepError(f"the sweep has {total} points; at most {MAX_POINTS}", 0)
    return Sweep(axes, text.strip())


def _axes(swept: dict[str, tuple[tuple[int, ...], int]], ties: dict[str, tuple[str, int]]) -> tuple[Axis, ...]:
    """The swept symbols with the symbols tied to each (a tie may go through another tie)."""
    root: dict[str, str] = {}
    for name, (target, col) in ties.items():
        seen = [name]
        while target in ties:
            if target in seen:
                raise SweepError(f"the ties {' = '.join([*seen, target])} go round in a circle", col)
            seen.append(target)
            target = ties[target][0]
        if target not in swept:
            given = ties[name][0]
            if not swept:  # no symbol has values: a word where sizes were meant
                raise SweepError(f"{name}={given} at column {col + 1}: {given!r} is not a size: give {name} "
                                 f"positive integers, such as {name}=1000..100000 or {name}=1000,4096", col)
            raise SweepError(f"{name}={given} at column {col + 1}: {given!r} is neither a size nor a swept symbol: "
                             f"give {name} sizes ({name}=1000..100000) or tie it to one of "
                             f"{', '.join(swept)} ({name}={next(iter(swept))})", col)
        root[name] = target
    return tuple(Axis((name, *[t for t in ties if root[t] == name]), values) for name, (values, _) in swept.items())


# -- conditions on a point ------------------------------------------------------------------------

_COMPARE = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
            ">=": lambda a, b: a >= b, "=": lambda a, b: a == b, "==": lambda a, b: a == b}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "==": "="}


@dataclass(frozen=True)
class Condition:
    """Where a range claim applies: comparisons of symbols with numbers, all of which must hold."""

    #: ``(symbol, op, number)``, the symbol always on the left.
    clauses: tuple[tuple[str, str, int], ...]
    text: str = ""

    @property
    def names(self) -> set[str]:
        return {name for name, _, _ in self.clauses}

    def holds(self, point: Point | Mapping[str, int]) -> bool:
        values = point.as_dict() if isinstance(point, Point) else point
        return all(_COMPARE[op](values[name], number) for name, op, number in self.clauses)


def parse_condition(text: str) -> Condition:
    """``n>=5000``, ``1000<=n<=4096``, ``rows>=100000 and K<200`` (see the module's grammar).

    :raises SweepError: with the column of the problem in ``text``.
    """
    reader = _Reader(text, "the condition")
    clauses: list[tuple[str, str, int]] = []
    if reader.peek() is None:
        raise SweepError("the condition after 'for' is empty: write one such as n>=5000", 0)
    while True:
        items: list[tuple[str, str, int]] = []
        while True:
            items.append(reader.next("a symbol or a number"))
            tok = reader.peek()
            if tok is None or tok[0] != "punct" or tok[1] not in _COMPARE:
                break
            items.append(reader.next("a comparison"))
        clauses += _clauses(items, text)
        tok = reader.peek()
        if tok is None:
            break
        if tok[0] != "name" or tok[1] != "and":
            raise SweepError(f"unexpected {tok[1]!r} at column {tok[2] + 1} of the condition: join comparisons "
                             "with 'and'", tok[2])
        reader.i += 1
    return Condition(tuple(clauses), text.strip())


def _clauses(items: list[tuple[str, str, int]], text: str) -> list[tuple[str, str, int]]:
    """``n >= 5000`` or ``1000 <= n <= 4096`` (tokens) as clauses with the symbol on the left."""
    col = items[0][2]
    shape = "".join("n" if k == "name" else "#" if k == "number" else "o" for k, _, _ in items)
    if shape == "no#":
        return [(items[0][1], items[1][1], int(_number(items[2][1], items[2][2])))]
    if shape == "#on":
        return [(items[2][1], _FLIP[items[1][1]], int(_number(items[0][1], items[0][2])))]
    if shape == "#ono#":
        name = items[2][1]
        return [(name, _FLIP[items[1][1]], int(_number(items[0][1], items[0][2]))),
                (name, items[3][1], int(_number(items[4][1], items[4][2])))]
    written = text[col:items[-1][2] + len(items[-1][1])]
    raise SweepError(f"{written!r} at column {col + 1} is not a comparison: write n>=5000, n<4096 or "
                     "1000<=n<=4096", col)


# -- where a decision flips -----------------------------------------------------------------------

@dataclass(frozen=True)
class FlipClaim:
    """``:expect-flip:``: what flips (:data:`FLIP_KINDS`), and between which sizes; ``low`` and
    ``high`` are ``None`` for ``none`` (nothing flips anywhere in the sweep)."""

    what: str = "any"
    low: int | None = None
    high: int | None = None
    #: The axis the bounds are on (a grid's claim must name it); ``""``: the sweep's only one.
    symbol: str = ""
    text: str = ""

    @property
    def expects_none(self) -> bool:
        return self.low is None


def parse_flip_claim(text: str) -> FlipClaim:
    """``between 4096 and 5000``, ``reduction between 4096 and 5000``, ``producer between K=128 and K=256``,
    ``none``, ``kernels none`` (see the module's grammar).

    :raises SweepError: with the column of the problem.
    """
    reader = _Reader(text, "the flip claim")
    what = "any"
    tok = reader.peek()
    if tok is not None and tok[0] == "name" and tok[1] in FLIP_KINDS:
        what = tok[1]
        reader.i += 1
    kind, word, col = reader.next("'between' or 'none'")
    if kind == "name" and word == "none":
        if reader.peek() is not None:
            extra = reader.peek()
            assert extra is not None
            raise SweepError(f"unexpected {extra[1]!r} after 'none' at column {extra[2] + 1}", extra[2])
        return FlipClaim(what, text=text.strip())
    if kind != "name" or word != "between":
        known = ", ".join(FLIP_KINDS)
        raise SweepError(f"expected 'between A and B' or 'none' at column {col + 1}, found {word!r} (what may "
                         f"flip is named first: {known})", col)
    low_symbol, low = _bound(reader)
    kind, word, col = reader.next("'and'")
    if kind != "name" or word != "and":
        raise SweepError(f"expected 'and' at column {col + 1}, found {word!r}", col)
    high_symbol, high = _bound(reader)
    if reader.peek() is not None:
        extra = reader.peek()
        assert extra is not None
        raise SweepError(f"unexpected {extra[1]!r} at column {extra[2] + 1} of the flip claim", extra[2])
    if low_symbol != high_symbol:
        raise SweepError(f"the bounds name different symbols ({low_symbol or 'none'} and {high_symbol or 'none'})",
                         0)
    if high <= low:
        raise SweepError(f"between {low} and {high}: the second size must be the larger", 0)
    return FlipClaim(what, low, high, low_symbol, text.strip())


def _bound(reader: _Reader) -> tuple[str, int]:
    kind, value, col = reader.next("a size")
    symbol = ""
    if kind == "name" and reader.at("="):
        symbol = value
        reader.i += 1
        kind, value, col = reader.next(f"a size after {symbol}=")
    if kind != "number":
        raise SweepError(f"expected a size at column {col + 1}, found {value!r}", col)
    return symbol, int(_number(value, col))


def unknown_symbols(names: Sequence[str] | set[str], sweep: Sweep | None) -> list[str]:
    """The names a claim uses that the sweep does not give, sorted."""
    known = set(sweep.symbols) if sweep is not None else set()
    return sorted(set(names) - known)

