"""Sizes as authors write them (``:expect-max-temp: 64MiB``) and as pages show them.

Every unit of :func:`parse_size` against its definition (decimal units are powers
of 1000, binary units powers of 1024), and every boundary of :func:`format_bytes`:
the exact number of bytes at which it moves to the next unit, and the one before.
"""

from __future__ import annotations

import pytest

from sphinx_jaxhlo.core.sizes import format_bytes, format_exact, parse_size

UNITS = [
    ("", 1), ("B", 1),
    ("kB", 1000), ("MB", 1000**2), ("GB", 1000**3), ("TB", 1000**4),
    ("KiB", 1024), ("MiB", 1024**2), ("GiB", 1024**3), ("TiB", 1024**4),
]  # fmt: skip


@pytest.mark.parametrize(("unit", "scale"), UNITS)
def test_every_unit_is_its_power_of_1000_or_1024(unit: str, scale: int) -> None:
    assert parse_size(f"3{unit}") == 3 * scale
    assert parse_size(f"3 {unit}") == 3 * scale


@pytest.mark.parametrize(("unit", "scale"), UNITS)
def test_units_are_case_insensitive(unit: str, scale: int) -> None:
    assert parse_size(f"2{unit.lower()}") == parse_size(f"2{unit.upper()}") == 2 * scale


def test_gib_is_binary_and_gb_decimal() -> None:
    assert parse_size("1GiB") == 1_073_741_824
    assert parse_size("1GB") == 1_000_000_000


@pytest.mark.parametrize(("text", "expected"), [
    ("0", 0), ("1.5 GB", 1_500_000_000), (".5kB", 500), ("2.", 2), ("  7  ", 7),
    ("0.25MiB", 262_144), ("1.0006 kB", 1001), ("1.0004 kB", 1000),
])
def test_fractions_round_to_the_nearest_byte(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["lots", "1 XB", "-1", "", "1e3", "1,000", "1.2.3 GB", "GB", "1 G B", "1 bits"])
def test_anything_else_is_an_error_naming_the_units(text: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_size(text)
    assert str(info.value) == (f"{text.strip()!r} is not a size: write a number with an optional unit "
                               "(B, kB, MB, GB, TB, KiB, MiB, GiB, TiB), e.g. 64MiB or 10GB")


@pytest.mark.parametrize(("n", "shown"), [
    (None, "not reported"),
    (0, "0 B"), (1, "1 B"), (999, "999 B"), (999.9, "999 B"),
    # each unit starts at exactly its power of 1000
    (1000, "1.0 kB"), (1001, "1.0 kB"),
    (999_999, "1000 kB"), (10**6, "1.0 MB"),
    (10**9 - 1, "1000 MB"), (10**9, "1.0 GB"),
    (10**12 - 1, "1000 GB"), (10**12, "1.0 TB"), (5 * 10**15, "5000 TB"),
    # one decimal below 100 of a unit, none from 100 on
    (99_949, "99.9 kB"), (99_999, "100.0 kB"), (100_000, "100 kB"), (123_456_789, "123 MB"),
    (20_000_000_000, "20.0 GB"),
    # binary sizes are shown in decimal units
    (2**30, "1.1 GB"), (2**20, "1.0 MB"),
    # negative sizes (differences) mirror positive ones
    (-999, "-999 B"), (-1000, "-1.0 kB"), (-(10**9), "-1.0 GB"),
])  # fmt: skip
def test_format_bytes_boundaries(n: int | float | None, shown: str) -> None:
    assert format_bytes(n) == shown


@pytest.mark.parametrize(("n", "shown"), [(None, "not reported"), (0, "0 bytes"), (999, "999 bytes"),
                                          (20_000_000_000, "20,000,000,000 bytes")])
def test_format_exact(n: int | None, shown: str) -> None:
    assert format_exact(n) == shown
