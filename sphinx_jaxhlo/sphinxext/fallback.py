"""Non-HTML builders: the HTML-only nodes of an example become plain sections.

LaTeX, text, man, texinfo and epub builds get the same content as tables,
rubrics and literal blocks, so they never meet a node they do not know.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from sphinx_jaxhlo.render.blocks import plain_table
from sphinx_jaxhlo.render.nodes import (
    jaxhlo_bars,
    jaxhlo_block,
    jaxhlo_details,
    jaxhlo_graph,
    jaxhlo_lineref,
    jaxhlo_source,
    jaxhlo_tab,
    jaxhlo_table,
    jaxhlo_tabs,
    jaxhlo_text,
)

#: Marks that only HTML output keeps.
MARKS = ("✔", "✘")
#: Characters of our output that pdflatex's default setup cannot typeset.
LATEX_ASCII = {"→": "->", "←": "<-", "−": "-", "≤": "<=", "≥": ">=", "≈": "~", "…": "..."}


def _section(title: str, children: list[nodes.Node], *classes: str) -> nodes.container:
    """What a titled block of HTML (a collapsible block, a tab, a module text) is
    elsewhere: a section under a rubric."""
    return nodes.container("", nodes.rubric(text=title), *children, classes=["jaxhlo-section", *classes])


class PlainFallback(SphinxPostTransform):
    """Replace the HTML-only nodes with plain sections for non-HTML builders."""

    default_priority = 200

    def run(self, **kwargs: Any) -> None:
        builder = getattr(self.env, "_builder_cls", None) or self.app.builder
        if builder.format == "html":
            return
        for node in list(self.document.findall(jaxhlo_bars)):
            node.parent.remove(node)
        for ref in list(self.document.findall(jaxhlo_lineref)):
            # no listing to jump to: the number, then the line's code
            line = str(ref.get("line", "")).strip()
            parts: list[nodes.Node] = [nodes.Text(ref.astext())]
            if line:
                parts += [nodes.Text(" ("), nodes.literal(line, line), nodes.Text(")")]
            ref.replace_self(parts)
        for source in list(self.document.findall(jaxhlo_source)):
            source.replace_self(source.children[:] or [nodes.Text("")])
        for table in list(self.document.findall(jaxhlo_table)):
            plain: nodes.Element = plain_table(table["table"], titled=table.get("titled", True))
            if table.get("summary"):  # a collapsed table: a section titled as the block was
                plain = _section(table["summary"], [plain], f"jaxhlo-{table['table'].key}-box")
            table.replace_self(plain)
        for text in list(self.document.findall(jaxhlo_text)):
            text.replace_self(_section(text["title"], [nodes.literal_block(
                text["text"], text["text"], language=text.get("language") or "text")]))
        for graph in list(self.document.findall(jaxhlo_graph)):
            box = _section(graph["title"], [], "jaxhlo-graph")
            if graph.get("text_legend"):
                box += nodes.paragraph(text=graph["text_legend"])
            for child in graph.children[:]:
                # the picture is gone: its text form shows as is, not collapsed
                box.extend(child.children[:] if isinstance(child, jaxhlo_details) else [child])
            graph.replace_self(box)
        for node in list(self.document.findall(lambda n: isinstance(n, (jaxhlo_details, jaxhlo_tab)))):
            assert isinstance(node, nodes.Element)
            node.replace_self(_section(node["title"], node.children[:]))
        for node in list(self.document.findall(jaxhlo_tabs)):
            node.replace_self(nodes.container("", *node.children, classes=["jaxhlo-tabs"]))
        for node in list(self.document.findall(jaxhlo_block)):
            children = []
            for child in node.children:
                if isinstance(child, nodes.caption):
                    # outside a float (LaTeX) a caption is an error; as a paragraph it reads the same
                    child = nodes.paragraph("", "", nodes.strong("", "", *child.children),
                                            classes=["jaxhlo-caption"])
                children.append(child)
            box = nodes.container("", *children, classes=["jaxhlo", *node.get("classes", [])])
            if node["ids"]:
                # A container's ids make no anchor in every writer (LaTeX); a target does.
                box.insert(0, nodes.target("", "", ids=list(node["ids"])))
            node.replace_self(box)
        # The ✔/✘ marks are for the eye in HTML; the words [holds]/[FAILED] say the
        # same everywhere.  pdflatex cannot typeset every character we use, either.
        swaps = [(mark + " ", "") for mark in MARKS] + [(mark, "") for mark in MARKS]
        if builder.format == "latex":
            swaps += list(LATEX_ASCII.items())
        for block in [n for n in self.document.findall(nodes.container) if "jaxhlo" in n["classes"]]:
            for text in list(block.findall(nodes.Text)):
                plain = str(text)
                for old, new in swaps:
                    plain = plain.replace(old, new)
                if plain != str(text):
                    text.parent.replace(text, nodes.Text(plain))
            for strong in list(block.findall(nodes.strong)):
                if not strong.astext().strip():
                    strong.parent.remove(strong)
