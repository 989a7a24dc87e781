"""The nodes the renderer emits beyond docutils' own, and how each builder shows them.

HTML gets collapsible blocks, tabs and bar charts; every other builder gets
the same content as plain sections through :class:`PlainFallback`, so LaTeX,
text, man, texinfo and epub builds never meet a node they do not know.
"""

from __future__ import annotations

import html
from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.writers.html5 import HTML5Translator


class jaxhlo_block(nodes.General, nodes.Element):
    """The whole rendering of one example (enumerable: ``:name:`` and ``:numref:`` work)."""


class jaxhlo_details(nodes.General, nodes.Element):
    """A collapsible block; ``title`` attribute, ``open`` flag."""


class jaxhlo_tabs(nodes.General, nodes.Element):
    """A set of :class:`jaxhlo_tab`; ``group`` names what the tabs select (``target``)."""


class jaxhlo_tab(nodes.General, nodes.Element):
    """One tab; ``title`` and ``key`` attributes (key is what sticks across examples)."""


class jaxhlo_bars(nodes.General, nodes.Element):
    """A bar chart: ``bars`` is a list of (label, value in bytes, text); log scale."""


def _attr(value: str) -> str:
    return html.escape(value, quote=True)


def visit_block_html(self: HTML5Translator, node: jaxhlo_block) -> None:
    classes = " ".join(["jaxhlo", *node.get("classes", [])])
    ids = node.get("ids", [])
    id_attr = f' id="{_attr(ids[0])}"' if ids else ""
    self.body.append(f'<div class="{_attr(classes)}"{id_attr}>\n')
    for extra in ids[1:]:
        self.body.append(f'<span id="{_attr(extra)}"></span>')


def depart_block_html(self: HTML5Translator, node: jaxhlo_block) -> None:
    self.body.append("</div>\n")


def visit_details_html(self: HTML5Translator, node: jaxhlo_details) -> None:
    opened = " open" if node.get("open") else ""
    self.body.append(f'<details class="jaxhlo-details"{opened}><summary>{html.escape(node["title"])}</summary>\n')


def depart_details_html(self: HTML5Translator, node: jaxhlo_details) -> None:
    self.body.append("</details>\n")


def visit_tabs_html(self: HTML5Translator, node: jaxhlo_tabs) -> None:
    group = _attr(node.get("group", "target"))
    base = _attr(node["tabset_id"])
    self.body.append(f'<div class="jaxhlo-tabs" data-group="{group}">\n<div class="jaxhlo-tablist" role="tablist">')
    for i, tab in enumerate(node.children):
        assert isinstance(tab, jaxhlo_tab)
        selected = "true" if i == 0 else "false"
        self.body.append(
            f'<button type="button" role="tab" class="jaxhlo-tab" id="{base}-tab-{i}" '
            f'aria-controls="{base}-panel-{i}" aria-selected="{selected}" tabindex="{0 if i == 0 else -1}" '
            f'data-key="{_attr(tab["key"])}">{html.escape(tab["title"])}</button>')
    self.body.append("</div>\n")


def depart_tabs_html(self: HTML5Translator, node: jaxhlo_tabs) -> None:
    self.body.append("</div>\n")


def visit_tab_html(self: HTML5Translator, node: jaxhlo_tab) -> None:
    parent = node.parent
    index = parent.index(node)
    base = _attr(parent["tabset_id"])
    self.body.append(f'<div class="jaxhlo-panel" role="tabpanel" id="{base}-panel-{index}" '
                     f'aria-labelledby="{base}-tab-{index}" data-key="{_attr(node["key"])}" tabindex="0">\n'
                     f'<p class="jaxhlo-panel-title">{html.escape(node["title"])}</p>\n')


def depart_tab_html(self: HTML5Translator, node: jaxhlo_tab) -> None:
    self.body.append("</div>\n")


def visit_bars_html(self: HTML5Translator, node: jaxhlo_bars) -> None:
    bars: list[tuple[str, float, str]] = node["bars"]
    top = max((v for _, v, _ in bars), default=1.0)
    import math

    span = math.log10(max(top, 10.0))
    self.body.append(f'<figure class="jaxhlo-bars"><figcaption>{html.escape(node["title"])}</figcaption>'
                     '<div class="jaxhlo-bars-grid">')
    for label, value, text in bars:
        width = 0.0 if value <= 1 else max(1.0, 100.0 * math.log10(value) / span)
        self.body.append(
            f'<div class="jaxhlo-bar-label">{html.escape(label)}</div>'
            f'<div class="jaxhlo-bar-track" role="img" aria-label="{_attr(label)}: {_attr(text)}">'
            f'<div class="jaxhlo-bar" style="width:{width:.1f}%"></div></div>'
            f'<div class="jaxhlo-bar-value">{html.escape(text)}</div>')
    self.body.append('</div><p class="jaxhlo-bars-note">Logarithmic scale.</p></figure>\n')
    raise nodes.SkipNode


def _skip(self: Any, node: nodes.Element) -> None:
    raise nodes.SkipNode


HTML_VISITORS: dict[type[nodes.Element], tuple[Any, Any]] = {
    jaxhlo_block: (visit_block_html, depart_block_html),
    jaxhlo_details: (visit_details_html, depart_details_html),
    jaxhlo_tabs: (visit_tabs_html, depart_tabs_html),
    jaxhlo_tab: (visit_tab_html, depart_tab_html),
    jaxhlo_bars: (visit_bars_html, None),
}


class PlainFallback(SphinxPostTransform):
    """Replace the HTML-only nodes with plain sections for non-HTML builders."""

    default_priority = 200

    def run(self, **kwargs: Any) -> None:
        builder = getattr(self.env, "_builder_cls", None) or self.app.builder
        if builder.format == "html":
            return
        for node in list(self.document.findall(jaxhlo_bars)):
            node.parent.remove(node)
        for node in list(self.document.findall(lambda n: isinstance(n, (jaxhlo_details, jaxhlo_tab)))):
            assert isinstance(node, nodes.Element)
            box = nodes.container(classes=["jaxhlo-section"])
            box += nodes.rubric(text=node["title"])
            box.extend(node.children)
            node.replace_self(box)
        for node in list(self.document.findall(jaxhlo_tabs)):
            node.replace_self(nodes.container("", *node.children, classes=["jaxhlo-tabs"]))
        for node in list(self.document.findall(jaxhlo_block)):
            box = nodes.container("", *node.children, classes=["jaxhlo", *node.get("classes", [])])
            box["ids"] = node["ids"]
            node.replace_self(box)
