"""Parsing of option values shared by the directive, the API and the command line."""

from __future__ import annotations


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
