"""Find ``jax-hlo`` directives in the text of a document, without parsing it.

Before Sphinx reads the documents of a build, the extension looks for the
examples they hold, to start their compiles at once (see
:mod:`sphinx_jaxhlo.pipeline.schedule`).  This module does the looking, on the raw
text: reStructuredText ``.. jax-hlo::`` blocks and MyST ```` ```{jax-hlo} ````
or ``:::{jax-hlo}`` fences, with their argument (an example file), options
and content, as the directive will receive them.

A notebook's examples are in its Markdown cells (:func:`find_notebook_examples`),
numbered as MyST-NB numbers them: a cell's lines start at ``10000`` times its
number (:func:`cell_and_line` turns such a line back into the cell and line
a reader sees).

It is a forecast, not a parser: a directive it misreads (inside a construct
that rewrites its text, in an included file) only means a compile that
starts later, when the document is read, or one that was not needed.  The
compile results are matched by cache key, never by position, so a wrong
forecast never gives an example another example's report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["NOTEBOOK_CELL_LINES", "FoundExample", "cell_and_line", "find_examples", "find_notebook_examples"]

_REST = re.compile(r"^(?P<indent>[ \t]*)\.\.[ \t]+jax-hlo[ \t]*::(?P<argument>.*)$")
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}|:{3,})[ \t]*\{jax-hlo\}(?P<argument>.*)$")
#: A code fence (no directive, or one that shows its content as code): its lines are literal.
_LITERAL_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*"
                            r"(?:\{(?:code-block|code|sourcecode)\}.*|[^{`\s][^`]*|)$")
#: A directive's fence whose content is Markdown (a note, a tab): examples inside it count.
_CONTAINER_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,}|:{3,})[ \t]*\{[\w:-]+\}")
_OPTION = re.compile(r"^:(?P<name>[A-Za-z][\w-]*):(?:[ \t]+(?P<value>.*))?$")


@dataclass
class FoundExample:
    """One ``jax-hlo`` directive as the document's text shows it."""

    #: The 1-based line of the directive (of its fence in MyST), as Sphinx counts it.
    line: int
    #: The directive's argument (a file name), or ``""``.
    argument: str
    options: dict[str, str] = field(default_factory=dict)
    content: str = ""


def find_examples(text: str, markdown: bool) -> list[FoundExample]:
    """Every ``jax-hlo`` directive of a document, in order.

    :param text: The document's source.
    :param markdown: MyST Markdown (fences) rather than reStructuredText.
    """
    lines = text.splitlines()
    return _find_myst(lines) if markdown else _find_rest(lines)


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _find_rest(lines: list[str]) -> list[FoundExample]:
    found: list[FoundExample] = []
    i = 0
    while i < len(lines):
        m = _REST.match(lines[i])
        if m is None:
            i += 1
            continue
        base = len(m.group("indent").expandtabs())
        block: list[str] = []
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or _indent_of(lines[j].expandtabs()) > base):
            block.append(lines[j].expandtabs())
            j += 1
        while block and not block[-1].strip():
            block.pop()
        found.append(_rest_example(i + 1, m.group("argument").strip(), block))
        i = j
    return found


def _dedent(block: list[str]) -> list[str]:
    indents = [_indent_of(ln) for ln in block if ln.strip()]
    cut = min(indents) if indents else 0
    return [ln[cut:] if ln.strip() else "" for ln in block]


def _rest_example(line: int, argument: str, block: list[str]) -> FoundExample:
    """Options first (``:name: value`` lines, continued by deeper lines), then a
    blank line, then the content, as docutils splits a directive block."""
    body = _dedent(block)
    options: dict[str, str] = {}
    k = 0
    while k < len(body) and body[k].strip():
        m = _OPTION.match(body[k])
        if m is None:
            break
        name, value = m.group("name"), (m.group("value") or "").strip()
        k += 1
        while k < len(body) and body[k].strip() and body[k].startswith((" ", "\t")):
            value = f"{value}\n{body[k].strip()}" if value else body[k].strip()
            k += 1
        options[name] = value
    while k < len(body) and not body[k].strip():
        k += 1
    content = _dedent(body[k:])
    return FoundExample(line, argument, options, "\n".join(content))


def _closes(fence: str, line: str) -> bool:
    """Whether ``line`` closes a fence opened with ``fence`` (the same character, at least as many)."""
    stripped = line.strip()
    return len(stripped) >= len(fence) and stripped == fence[0] * len(stripped)


def _find_myst(lines: list[str]) -> list[FoundExample]:
    found: list[FoundExample] = []
    containers: list[str] = []  # the fences of the directives open around this line (a note, a tab)
    i = 0
    while i < len(lines):
        line = lines[i]
        if containers and _closes(containers[-1], line):
            containers.pop()
            i += 1
            continue
        m = _FENCE.match(line)
        if m is None:
            literal = _LITERAL_FENCE.match(line)
            if literal is not None:  # a code block: a jax-hlo fence inside it is text shown, not an example
                fence = literal.group("fence")
                i += 1
                while i < len(lines) and not _closes(fence, lines[i]):
                    i += 1
            else:
                container = _CONTAINER_FENCE.match(line)
                if container is not None:
                    containers.append(container.group("fence"))
            i += 1
            continue
        indent, fence = len(m.group("indent")), m.group("fence")
        block: list[str] = []
        j = i + 1
        while j < len(lines) and not _closes(fence, lines[j]):
            block.append(lines[j][min(indent, _indent_of(lines[j])):])
            j += 1
        found.append(_myst_example(i + 1, m.group("argument").strip(), block))
        i = j + 1
    return found


def _myst_example(line: int, argument: str, block: list[str]) -> FoundExample:
    """A YAML block (``---`` ... ``---``) or ``:name: value`` lines first, then the
    content; one blank line after the options is dropped, as MyST does."""
    options: dict[str, str] = {}
    k = 0
    if block and block[0].strip() == "---":
        end = next((n for n in range(1, len(block)) if block[n].strip() == "---"), None)
        if end is not None:
            for entry in block[1:end]:
                name, sep, value = entry.partition(":")
                if sep and name.strip():
                    options[name.strip()] = _unquote(value.strip())
            k = end + 1
    else:
        while k < len(block):
            m = _OPTION.match(block[k])
            if m is None:
                break
            options[m.group("name")] = (m.group("value") or "").strip()
            k += 1
    body = block[k:]
    if body and not body[0].strip():
        body = body[1:]
    return FoundExample(line, argument, options, "\n".join(body))


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


# -- notebooks ---------------------------------------------------------------------

#: MyST-NB numbers the lines of a notebook's cell ``i`` (from 0) from ``(i + 1) *``
#: this (``myst_nb.core.nb_to_tokens``), unless the notebook has a ``source_map``.
NOTEBOOK_CELL_LINES = 10000


def _cell_source(cell: Mapping[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source or "")


def find_notebook_examples(cells: Sequence[Mapping[str, Any]], source_map: Sequence[int] | None = None
                           ) -> list[FoundExample]:
    """Every ``jax-hlo`` directive of a notebook's Markdown cells, in order,
    each at the line MyST-NB gives the directive: the cell's base line (its
    ``source_map`` entry, else ``(index + 1) * 10000``) plus one, plus the
    fence's line in the cell.  Empty cells and cells tagged ``remove-cell``
    (``remove_cell``) are skipped, as MyST-NB skips them.

    :param cells: the notebook's ``cells`` (nbformat 4, as JSON data).
    :param source_map: the notebook's ``metadata.source_map``, when it has one.
    """
    found: list[FoundExample] = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, Mapping) or cell.get("cell_type") != "markdown":
            continue
        text = _cell_source(cell)
        metadata = cell.get("metadata")
        tags = metadata.get("tags", []) if isinstance(metadata, Mapping) else []
        if not text.strip() or "remove_cell" in tags or "remove-cell" in tags:
            continue
        base = int(source_map[index]) if source_map and index < len(source_map) else (
            (index + 1) * NOTEBOOK_CELL_LINES)
        for example in find_examples(text, markdown=True):
            example.line += base + 1
            found.append(example)
    return found


def cell_and_line(line: int) -> tuple[int, int] | None:
    """The cell (from 1) and the line in it (from 1) of a line MyST-NB numbered
    in a notebook without a ``source_map``; ``None`` for a line below the first cell's."""
    cell, rest = divmod(line, NOTEBOOK_CELL_LINES)
    if cell < 1 or rest < 1:
        return None
    return cell, max(rest - 1, 1)
