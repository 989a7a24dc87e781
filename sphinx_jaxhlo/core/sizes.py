"""Byte sizes as people write them (``64MiB``, ``10GB``, ``0``) and as the pages show them."""

from __future__ import annotations

import re

_UNITS: dict[str, int] = {
    "": 1, "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}

_SIZE = re.compile(r"^\s*(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(?P<unit>[A-Za-z]*)\s*$")


def parse_size(text: str) -> int:
    """Parse a size such as ``64MiB``, ``1.5 GB``, ``200000`` or ``0`` into bytes.

    Decimal units (kB, MB, GB, TB: powers of 1000) and binary units (KiB, MiB,
    GiB, TiB: powers of 1024) are both accepted, case-insensitively.

    :raises ValueError: for anything else, with a message naming the accepted units.
    """
    m = _SIZE.match(text)
    unit = m.group("unit").lower() if m else ""
    if m is None or unit not in _UNITS:
        raise ValueError(f"{text.strip()!r} is not a size: write a number with an optional unit "
                         "(B, kB, MB, GB, TB, KiB, MiB, GiB, TiB), e.g. 64MiB or 10GB")
    return round(float(m.group("num")) * _UNITS[unit])


def format_bytes(n: int | float | None) -> str:
    """``20000000000`` -> ``20.0 GB``; decimal units, as XLA's messages and GPU datasheets use."""
    if n is None:
        return "not reported"
    n = float(n)
    if abs(n) < 1000:
        return f"{int(n)} B"
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            value = n / scale
            return f"{value:.1f} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{int(n)} B"  # pragma: no cover


def format_exact(n: int | None) -> str:
    """``20000000000`` -> ``20,000,000,000 bytes``."""
    return "not reported" if n is None else f"{n:,} bytes"
