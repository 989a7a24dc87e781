"""Directives for this project's own docs: reference tables generated from the code."""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from sphinx_jaxhlo.core.diagnostics import SUBTYPES
from sphinx_jaxhlo.core.settings import SETTINGS


def table_node(header: list[str], rows: list[list[nodes.Node]], classes: tuple[str, ...] = ()) -> nodes.table:
    """A table with a header row (also used by the drift page's directive)."""
    table = nodes.table(classes=list(classes))
    group = nodes.tgroup(cols=len(header))
    table += group
    for _ in header:
        group += nodes.colspec(colwidth=10)
    head = nodes.thead()
    group += head
    row = nodes.row()
    for h in header:
        row += nodes.entry("", nodes.paragraph(text=h))
    head += row
    body = nodes.tbody()
    group += body
    for cells in rows:
        row = nodes.row()
        for cell in cells:
            row += nodes.entry("", cell)
        body += row
    return table


class ConfigTable(SphinxDirective):
    """Every ``jaxhlo_*`` setting, from :data:`sphinx_jaxhlo.core.settings.SETTINGS`."""

    def run(self) -> list[nodes.Node]:
        rows = []
        for s in SETTINGS:
            help_nodes, _ = self.parse_inline(s.help, lineno=self.lineno)
            types = " or ".join({type(None): "None", object: "a distributed.Client"}.get(t, t.__name__)
                              for t in s.types)
            rows.append([nodes.paragraph("", "", nodes.literal(text=s.name)),
                         nodes.paragraph("", "", nodes.literal(text=repr(s.default))),
                         nodes.paragraph(text=types),
                         nodes.paragraph("", "", *help_nodes)])
        return [table_node(["setting", "default", "type", "meaning"], rows)]


class WarningsTable(SphinxDirective):
    """Every ``jaxhlo.*`` warning subtype, from :data:`sphinx_jaxhlo.core.diagnostics.SUBTYPES`."""

    def run(self) -> list[nodes.Node]:
        rows = []
        for name, text in SUBTYPES.items():
            help_nodes, _ = self.parse_inline(text, lineno=self.lineno)
            rows.append([nodes.paragraph("", "", nodes.literal(text=f"jaxhlo.{name}")),
                         nodes.paragraph("", "", *help_nodes)])
        return [table_node(["warning", "when"], rows)]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("jaxhlo-config-table", ConfigTable)
    app.add_directive("jaxhlo-warnings-table", WarningsTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
