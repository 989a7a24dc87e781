"""What the renderer knows of an example itself, and where its lines are on the page.

:class:`ExampleView` is what the directive, the API and the command line give
:func:`sphinx_jaxhlo.render.example.render_example` besides the results; from it
come the page-unique ids of the example and the anchors of its source lines
(:class:`SourceLinks`), which findings, tables and the graph link to.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from sphinx_jaxhlo.core.specs import ArgSpecs
from sphinx_jaxhlo.render.display import Display

__all__ = ["ExampleView", "SourceLinks", "example_id", "source_links", "source_text", "unused_lines"]


@dataclass
class ExampleView:
    """What the renderer needs to know about the example itself."""

    source: str
    show: Sequence[str]
    hlo_collapsed: bool = True
    hlo_language: str = "hlo"
    file_path: str = ""
    key: str = ""
    #: The argument specs (the ``:args:`` option, parsed) and static values, for the signature.
    specs: ArgSpecs | None = None
    static: Sequence[tuple[str, str]] = ()
    #: The arguments as text, for the signature when ``specs`` is not known (the API).
    args_text: str = ""
    display: Display = field(default_factory=Display)
    #: The first line of code an option generated and appended to the source (``:grad:``'s
    #: variants), shown folded under the listing of the reader's own; 0: none.
    generated_from: int = 0
    #: The functions that are another's gradient (``:grad:``): the example compares a function
    #: with its gradient, not variants of one computation.
    gradients: Sequence[str] = ()
    #: Whether the example asked for chunked variants (``:chunk:``): its reports then say why no
    #: chunking is suggested where none is, above their parts.
    chunking: bool = False

    def cache_parts(self) -> list[object]:
        """Everything of the view the rendering depends on, for cache keys."""
        return [self.source, list(self.show), self.hlo_collapsed, self.hlo_language, self.file_path, self.key,
                str(self.specs or ""), [list(p) for p in self.static], self.args_text, self.display.key(),
                self.generated_from, list(self.gradients), self.chunking]


@dataclass(frozen=True)
class SourceLinks:
    """Where the example's lines are on the page: ids ``<prefix>1`` to ``<prefix><count>``."""

    prefix: str
    count: int

    def covers(self, lines: Sequence[int]) -> bool:
        return bool(lines) and all(1 <= n <= self.count for n in lines)


def example_id(view: ExampleView) -> str:
    """A page-unique id base for one example, from its key."""
    return "jaxhlo-" + hashlib.sha1(view.key.encode()).hexdigest()[:10]


def source_text(source: str) -> str:
    """The source without its last newline: what its listing's lines are."""
    return source[:-1] if source.endswith("\n") else source


def source_links(view: ExampleView) -> SourceLinks | None:
    """The line anchors of the example's source block, when the page shows it."""
    if "source" not in view.show or not view.source.strip():
        return None
    return SourceLinks(f"{example_id(view)}-L", len(source_text(view.source).split("\n")))


def unused_lines(source: str, functions: Sequence[str]) -> list[int]:
    """The lines of a file example that the compiled functions do not use: the top-level
    functions and classes that none of them names (directly or through another one),
    with the blank lines after them.  Nothing when the file does not parse or no
    function is named.

    :param functions: the compiled functions' names (``(default function)``: none named).
    """
    named = [f for f in functions if f and f != "(default function)"]
    if not named:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    needed: set[str] = set()
    todo = [f for f in named if f in defs]
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        todo += [n.id for n in ast.walk(defs[name]) if isinstance(n, ast.Name) and n.id in defs]
    total = len(source_text(source).split("\n"))
    starts = [min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", []))]) for n in tree.body]
    hidden: list[int] = []
    for i, stmt in enumerate(tree.body):
        if stmt in defs.values() and getattr(stmt, "name", "") not in needed:
            end = starts[i + 1] - 1 if i + 1 < len(tree.body) else total
            hidden += range(starts[i], end + 1)
    return hidden
