"""The nodes the renderer emits beyond docutils' own, and how each builder shows them.

HTML gets collapsible blocks, tabs and bar charts; every other builder gets
the same content as plain sections through
:class:`sphinx_jaxhlo.render.fallback.PlainFallback`, so LaTeX,
text, man, texinfo and epub builds never meet a node they do not know.
"""

from __future__ import annotations

import functools
import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes

if TYPE_CHECKING:
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


class jaxhlo_source(nodes.General, nodes.Element):
    """The example's source with an anchor on each line.

    Holds one ``literal_block`` (what other builders show); ``prefix`` makes
    the ids of the lines in HTML (``<prefix>4``).
    """


class jaxhlo_lines(nodes.Inline, nodes.TextElement):
    """``line 4`` / ``lines 4, 6``: links to the source lines in HTML (``lines``,
    ``prefix`` attributes), the text elsewhere."""


class jaxhlo_row(nodes.row):
    """A table row traced from source lines (``lines``, ``prefix``): in HTML it
    is focusable and hovering or focusing it highlights those lines."""


class jaxhlo_graph(nodes.General, nodes.Element):
    """A computation graph: ``svg`` (markup made and escaped by
    :func:`sphinx_jaxhlo.render.graph.graph_svg`), ``title``, ``legend`` (of
    the picture), ``text_legend`` (of the text form); its children (the graph
    as text) follow the picture in HTML and replace it elsewhere."""


def _attr(value: str) -> str:
    return html.escape(value, quote=True)


def visit_block_html(self: HTML5Translator, node: jaxhlo_block) -> None:
    classes = " ".join(["jaxhlo", *node.get("classes", [])])
    ids = node.get("ids", [])
    id_attr = f' id="{_attr(ids[0])}"' if ids else ""
    self.body.append(f'<div class="{_attr(classes)}"{id_attr}>\n')
    for extra in ids[1:]:
        self.body.append(f'<span id="{_attr(extra)}"></span>')
    fragment = node.get("fragment")
    if fragment:
        # The same example, rendered the same way, was written before: reuse its HTML.
        try:
            text = Path(fragment).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            node["fragment_start"] = len(self.body)
        else:
            self.body.append(text)
            self.body.append("</div>\n")
            raise nodes.SkipNode


def depart_block_html(self: HTML5Translator, node: jaxhlo_block) -> None:
    start = node.get("fragment_start")
    if node.get("fragment") and start is not None:
        _store_fragment(Path(node["fragment"]), "".join(self.body[start:]))
    self.body.append("</div>\n")


def _store_fragment(path: Path, text: str) -> None:
    """Write atomically; a cache that cannot be written is only slower."""
    import os
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".html")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)


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


#: The left end of the bar chart's log scale: 1 kB (smaller values draw no bar).
BAR_FLOOR = 1e3


def visit_bars_html(self: HTML5Translator, node: jaxhlo_bars) -> None:
    """One bar per (label, bytes, text), on a shared log scale with a tick per decade,
    so 50 MB and 20 GB read as three decades apart, not as 75 % and 100 %."""
    import math

    bars: list[tuple[str, float, str]] = node["bars"]
    top = max((v for _, v, _ in bars), default=0.0)
    decades = max(1, math.ceil(math.log10(max(top, BAR_FLOOR * 10) / BAR_FLOOR)))
    units = ["1 kB", "10 kB", "100 kB", "1 MB", "10 MB", "100 MB", "1 GB", "10 GB", "100 GB", "1 TB", "10 TB"]
    # a gridline every decade, a label every thousand (kB, MB, GB...), so labels never crowd
    ticks = "".join(f'<span style="left:{100 * i / decades:.2f}%">{units[i]}</span>'
                    for i in range(0, decades + 1, 3) if i < len(units))
    self.body.append(
        f'<figure class="jaxhlo-bars" style="--jaxhlo-decade:{100 / decades:.4f}%">'
        f'<figcaption>{html.escape(node["title"])}</figcaption><div class="jaxhlo-bars-grid">'
        f'<div></div><div class="jaxhlo-bar-axis" aria-hidden="true">{ticks}</div><div></div>')
    for label, value, text in bars:
        width = 0.0 if value < BAR_FLOOR else min(100.0, 100.0 * math.log10(value / BAR_FLOOR) / decades)
        self.body.append(
            f'<div class="jaxhlo-bar-label">{html.escape(label)}</div>'
            f'<div class="jaxhlo-bar-track" role="img" aria-label="{_attr(label)}: {_attr(text)}">'
            f'<div class="jaxhlo-bar" style="width:{width:.1f}%"></div></div>'
            f'<div class="jaxhlo-bar-value">{html.escape(text)}</div>')
    self.body.append('</div><p class="jaxhlo-bars-note">Logarithmic scale, one tick per factor of ten; '
                     'values under 1 kB draw no bar.</p></figure>\n')
    raise nodes.SkipNode


@functools.cache
def _highlighter(language: str) -> tuple[Any, Any]:
    """A lexer and a formatter, made once per language (a formatter computes its
    style table when made, which costs more than highlighting a short example)."""
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import TextLexer, get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name(language, stripnl=False, ensurenl=True)
    except ClassNotFound:
        lexer = TextLexer(stripnl=False, ensurenl=True)
    return lexer, HtmlFormatter(nowrap=True)


def _source_lines_html(text: str, language: str, prefix: str) -> str:
    """Highlighted code, each line in ``<span class="jaxhlo-line" id="<prefix>N">``
    with its number, the way Sphinx shows line numbers (``span.linenos``)."""
    from pygments import highlight

    lexer, formatter = _highlighter(language)
    if text.endswith("\n"):
        text = text[:-1]
    lines = text.split("\n")
    try:
        # nowrap: one output line per input line, every span closed at its end
        body = highlight(text, lexer, formatter).split("\n")
    except Exception:  # a lexer bug must not cost the page
        body = [html.escape(line) for line in lines]
    if len(body) > len(lines) and body[-1] == "":
        body.pop()
    if len(body) != len(lines):
        body = [html.escape(line) for line in lines]
    width = len(str(len(lines)))
    out = []
    for number, line in enumerate(body, 1):
        out.append(f'<span class="jaxhlo-line" id="{_attr(prefix)}{number}">'
                   f'<span class="linenos">{str(number).rjust(width)}</span>{line}</span>')
    return "\n".join(out) + "\n"


def visit_source_html(self: HTML5Translator, node: jaxhlo_source) -> None:
    block = node.next_node(nodes.literal_block)
    text = block.astext() if block is not None else ""
    language = str(node.get("language") or (block.get("language") if block is not None else "") or "text")
    self.body.append(f'<div class="highlight-{_attr(language)} notranslate jaxhlo-source" '
                     f'data-jaxhlo-src="{_attr(node["prefix"])}"><div class="highlight"><pre><span></span>'
                     + _source_lines_html(text, language, node["prefix"]) + "</pre></div>\n</div>\n")
    raise nodes.SkipNode


def visit_lines_html(self: HTML5Translator, node: jaxhlo_lines) -> None:
    lines: list[int] = node["lines"]
    prefix = _attr(node["prefix"])
    links = ", ".join(f'<a class="jaxhlo-line-link" href="#{prefix}{n}">{n}</a>' for n in lines)
    self.body.append(f'<span class="jaxhlo-lines">{"line" if len(lines) == 1 else "lines"} {links}</span>')
    raise nodes.SkipNode


def visit_row_html(self: HTML5Translator, node: jaxhlo_row) -> None:
    self.visit_row(node)
    tag = self.body[-1]
    if tag.startswith("<tr"):
        lines = " ".join(map(str, node["lines"]))
        self.body[-1] = (f'<tr tabindex="0" data-jaxhlo-lines="{_attr(lines)}" '
                         f'data-jaxhlo-src="{_attr(node["prefix"])}"' + tag[3:])


def depart_row_html(self: HTML5Translator, node: jaxhlo_row) -> None:
    self.depart_row(node)


def visit_graph_html(self: HTML5Translator, node: jaxhlo_graph) -> None:
    self.body.append(f'<figure class="jaxhlo-graph"><figcaption>{html.escape(node["title"])}</figcaption>'
                     f'<div class="jaxhlo-graph-scroll">{node["svg"]}</div>')
    if node.get("legend"):
        self.body.append(f'<p class="jaxhlo-graph-legend">{html.escape(node["legend"])}</p>')


def depart_graph_html(self: HTML5Translator, node: jaxhlo_graph) -> None:
    self.body.append("</figure>\n")


HTML_VISITORS: dict[type[nodes.Element], tuple[Any, Any]] = {
    jaxhlo_block: (visit_block_html, depart_block_html),
    jaxhlo_details: (visit_details_html, depart_details_html),
    jaxhlo_tabs: (visit_tabs_html, depart_tabs_html),
    jaxhlo_tab: (visit_tab_html, depart_tab_html),
    jaxhlo_bars: (visit_bars_html, None),
    jaxhlo_source: (visit_source_html, None),
    jaxhlo_lines: (visit_lines_html, None),
    jaxhlo_row: (visit_row_html, depart_row_html),
    jaxhlo_graph: (visit_graph_html, depart_graph_html),
}
