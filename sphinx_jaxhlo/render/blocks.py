"""Small docutils constructs every part of an example is built from: paragraphs,
literals, literal blocks and tables (the row model's, as docutils tables for the
builders other than HTML, or as :class:`~sphinx_jaxhlo.render.nodes.jaxhlo_table`).
"""

from __future__ import annotations

from collections.abc import Sequence

from docutils import nodes

from sphinx_jaxhlo.render.nodes import jaxhlo_table
from sphinx_jaxhlo.render.rows import Table
from sphinx_jaxhlo.render.view import SourceLinks

__all__ = ["code", "collapsed_table", "literal_block", "para", "plain_table", "table", "table_node"]


def para(*parts: str | nodes.Node, classes: Sequence[str] = ()) -> nodes.paragraph:
    p = nodes.paragraph(classes=list(classes))
    for part in parts:
        p += nodes.Text(part) if isinstance(part, str) else part
    return p


def code(text: str) -> nodes.literal:
    return nodes.literal(text, text)


def table(header: Sequence[str], rows: Sequence[Sequence[str | nodes.Node]], classes: Sequence[str] = (),
          title: str = "") -> nodes.Element:
    """A docutils table (what builders other than HTML show of a :class:`jaxhlo_table`)."""
    tab = nodes.table(classes=["jaxhlo-table", *classes])
    group = nodes.tgroup(cols=len(header))
    tab += group
    for _ in header:
        group += nodes.colspec(colwidth=10)
    thead = nodes.thead()
    group += thead
    row = nodes.row()
    for h in header:
        row += nodes.entry("", nodes.paragraph(text=h))
    thead += row
    tbody = nodes.tbody()
    group += tbody
    for cells in rows:
        row = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            if isinstance(cell, nodes.paragraph):
                entry += cell
            elif isinstance(cell, nodes.Node):
                entry += nodes.paragraph("", "", cell)
            else:
                entry += nodes.paragraph(text=cell)
            row += entry
        tbody += row
    if title:
        return nodes.container("", nodes.rubric(text=title), tab, classes=["jaxhlo-table-box"])
    return tab


def plain_table(model: Table, titled: bool = True) -> nodes.Element:
    """A :class:`~sphinx_jaxhlo.render.rows.Table` as docutils nodes (code cells as literals)."""
    rows = [[code(c.text) if c.code else c.text for c in r.cells] for r in model.rows]
    out = table(model.header, rows, [f"jaxhlo-{model.key}"], title=model.title if titled else "")
    extra = [t for t in (model.more_text, model.note) if t]
    if not extra:
        return out
    box = out if isinstance(out, nodes.container) else nodes.container("", out, classes=["jaxhlo-table-box"])
    box += para(" ".join(extra), classes=["jaxhlo-more"])
    return box


def table_node(model: Table, links: SourceLinks | None, titled: bool = True, summary: str = "") -> jaxhlo_table:
    """A table of the row model; in HTML, rows traced from shown source lines link to them.

    :param summary: the title of a collapsed block the table is shown in (none without).
    """
    return jaxhlo_table(table=model, prefix=links.prefix if links else "", count=links.count if links else 0,
                        titled=titled, summary=summary)


def collapsed_table(model: Table, links: SourceLinks | None) -> jaxhlo_table:
    """A detail table in a collapsed block titled with its count (``Fusions (10 of 72)``):
    one node, not a :class:`jaxhlo_details` around the table (a page holds many)."""
    return table_node(model, links, titled=False, summary=model.summary)


def literal_block(text: str, language: str, linenos: bool = False) -> nodes.literal_block:
    block = nodes.literal_block(text, text, language=language)
    if linenos:
        block["linenos"] = True
    return block
