"""Parsing of option values shared by the directive, the API and the command line."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from sphinx_jaxhlo.core.sizes import parse_size

#: Values of the ``jaxhlo_chart_scale`` setting and the ``:chart-scale:`` option.
CHART_SCALES = ("auto", "linear", "log")


def split_top_level(text: str) -> list[str]:
    """Split ``text`` at the commas outside brackets; the parts are not stripped.

    ``"a=1, b=(1, 2)"`` -> ``["a=1", " b=(1, 2)"]``.  An empty text gives ``[""]``.
    """
    parts: list[str] = []
    depth, current = 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return parts


def parse_assignments(text: str, what: str) -> list[tuple[str, str]]:
    """``"a=1, b=(1, 2)"`` -> ``[("a", "1"), ("b", "(1, 2)")]``; commas inside brackets stay.

    Empty items are skipped; names and values are stripped.

    :param what: names the option in the error message.
    :raises ValueError: an item that is not ``name=value``.
    """
    out: list[tuple[str, str]] = []
    for part in split_top_level(text):
        part = part.strip()
        if not part:
            continue
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key.isidentifier():
            raise ValueError(f"{what}: {part!r} is not name=value")
        out.append((key, value.strip()))
    return out


# -- how an example is shown (the view settings and options) --

def parse_rows(value: Any) -> int | None:
    """``10``, ``"10"`` -> 10; ``"all"`` or ``None`` -> ``None`` (every row).

    :raises ValueError: anything else.
    """
    if value is None or (isinstance(value, str) and value.strip().lower() == "all"):
        return None
    try:
        rows = int(str(value).strip())
    except ValueError:
        raise ValueError(f"{value!r} is not a number of rows (or 'all')") from None
    if rows < 1:
        raise ValueError(f"{value!r} is not a positive number of rows (or 'all')")
    return rows


def parse_factor(value: Any) -> float:
    """A non-negative number: ``1``, ``0.5``. :raises ValueError: anything else."""
    try:
        factor = float(str(value).strip())
    except ValueError:
        raise ValueError(f"{value!r} is not a number") from None
    if factor < 0 or not math.isfinite(factor):
        raise ValueError(f"{value!r} is not a non-negative number")
    return factor


def parse_min_size(value: Any) -> int:
    """A size: ``1048576``, ``"1MiB"``, ``"500 kB"``. :raises ValueError: anything else."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"{value!r} is not a size")
        return value
    return parse_size(str(value))


def parse_chart_scale(value: Any) -> str:
    """``auto``, ``linear`` or ``log``. :raises ValueError: anything else."""
    scale = str(value).strip().lower()
    if scale not in CHART_SCALES:
        raise ValueError(f"{value!r} is not one of {', '.join(CHART_SCALES)}")
    return scale


#: The kinds of findings an example can report (``:findings:``, ``jaxhlo_findings``):
#: ``memory`` (the largest intermediate, or that none is stored), ``reductions`` (each
#: reduction's verdict), ``communication`` (the collectives of a program on several devices),
#: ``peak`` (what is live at the peak and the memory timeline, :mod:`sphinx_jaxhlo.hlo.peak`).
FINDING_TOPICS = ("memory", "reductions", "communication", "peak")
#: The kinds an example reports unless told (the ``jaxhlo_findings`` setting's default): all but
#: ``peak``, which adds a table and a picture per target to the page.
DEFAULT_FINDINGS = ("memory", "reductions", "communication")


def parse_findings(value: Any) -> tuple[str, ...]:
    """``"memory"``, ``"memory, communication"``, ``["reductions"]`` -> those kinds, in
    :data:`FINDING_TOPICS` order; ``"all"`` -> every kind, ``"none"`` -> none.

    :raises ValueError: an unknown kind, ``all`` or ``none`` with others, or nothing.
    """
    items = [v.strip().lower() for v in (value.split(",") if isinstance(value, str) else value) if str(v).strip()]
    if items in (["all"], ["none"]):
        return FINDING_TOPICS if items == ["all"] else ()
    known = ", ".join(FINDING_TOPICS)
    if not items:
        raise ValueError(f"no kind of finding given (any of {known}, or all, or none)")
    for item in items:
        if item in ("all", "none"):
            raise ValueError(f"{item!r} stands alone (or name kinds: {known})")
        if item not in FINDING_TOPICS:
            raise ValueError(f"unknown kind of finding {item!r} (known: {known}, or all, or none)")
    return tuple(t for t in FINDING_TOPICS if t in items)


#: The view options -> their parser, which checks the setting each overrides too (the setting is
#: the option's :attr:`sphinx_jaxhlo.core.options.Option.setting`).
VIEW_OPTIONS: dict[str, Callable[[Any], Any]] = {
    "rows": parse_rows,
    "problem-min-size": parse_min_size,
    "problem-io-factor": parse_factor,
    "chart-scale": parse_chart_scale,
    "findings": parse_findings,
}
