"""The nodes the renderer emits beyond docutils' own, and their HTML in any docutils HTML5 writer.

:data:`PLAIN_HTML_VISITORS` show the nodes in docutils' own HTML5 writer
(:mod:`sphinx_jaxhlo.render.standalone_html`); the Sphinx extension's HTML
visitors (:mod:`sphinx_jaxhlo.sphinxext.html`) start from them and add what a
built site has: reused fragments and module texts as files beside the pages.
Every other builder gets the same content as plain sections through
:class:`sphinx_jaxhlo.sphinxext.fallback.PlainFallback`, so LaTeX, text, man,
texinfo and epub builds never meet a node they do not know.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from docutils import nodes

if TYPE_CHECKING:
    from docutils.writers.html5_polyglot import HTMLTranslator


class jaxhlo_block(nodes.General, nodes.Element):
    """The whole rendering of one example (enumerable: ``:name:`` and ``:numref:`` work)."""


class jaxhlo_details(nodes.General, nodes.Element):
    """A collapsible block; ``title`` attribute, ``open`` flag."""


class jaxhlo_tabs(nodes.General, nodes.Element):
    """A set of :class:`jaxhlo_tab`; ``group`` names what the tabs select (``target``)."""


class jaxhlo_tab(nodes.General, nodes.Element):
    """One tab; ``title`` and ``key`` attributes (key is what sticks across examples)."""


class jaxhlo_bars(nodes.General, nodes.Element):
    """A bar chart: ``chart`` is a :class:`sphinx_jaxhlo.render.chart.Chart` (a panel
    per measure, each with its own axis; the bars grouped by target)."""


class jaxhlo_source(nodes.General, nodes.Element):
    """The example's source with an anchor on each line.

    Holds one ``literal_block`` (what other builders show); ``prefix`` makes
    the ids of the lines in HTML (``<prefix>4``); ``start``, the number of its
    first line (1 unless it continues the listing before it).
    """


class jaxhlo_table(nodes.General, nodes.Element):
    """A table of the row model: ``table`` is a :class:`sphinx_jaxhlo.render.rows.Table`;
    ``prefix`` and ``count`` say where the example's source lines are on the page
    (rows traced from them link there and highlight them in HTML); ``titled``:
    show the title above it.  Other builders get a docutils table."""


class jaxhlo_text(nodes.General, nodes.Element):
    """A module text (optimized HLO, StableHLO, jaxpr): ``title``, ``text``,
    ``language``, ``open``.  An HTML page links it as files of its own, loaded
    when the reader opens the block; other outputs show it as a literal block."""


class jaxhlo_graph(nodes.General, nodes.Element):
    """A computation graph: ``svg`` (markup made and escaped by
    :func:`sphinx_jaxhlo.render.graph.graph_svg`), ``title``, ``legend`` (of
    the picture), ``text_legend`` (of the text form); its children (the graph
    as text) follow the picture in HTML and replace it elsewhere."""


class jaxhlo_alternative(nodes.Inline, nodes.TextElement):
    """A link to a section of this package's guide, by its ``label``, around the
    section's title (an ``inline``).  The Sphinx extension makes it a cross-reference
    (:mod:`sphinx_jaxhlo.sphinxext.links`); elsewhere the title is text."""


class jaxhlo_lineref(nodes.Inline, nodes.TextElement):
    """A line number a finding names (its text): ``href`` is the line's anchor in the
    listing; ``line`` is the line's code, which builders other than HTML print after
    the number, since they have no listing to jump to."""


def _attr(value: str) -> str:
    return html.escape(value, quote=True)


def visit_block_html(self: HTMLTranslator, node: jaxhlo_block) -> None:
    classes = " ".join(["jaxhlo", *node.get("classes", [])])
    ids = node.get("ids", [])
    id_attr = f' id="{_attr(ids[0])}"' if ids else ""
    self.body.append(f'<div class="{_attr(classes)}"{id_attr}>\n')
    for extra in ids[1:]:
        self.body.append(f'<span id="{_attr(extra)}"></span>')


def depart_block_html(self: HTMLTranslator, node: jaxhlo_block) -> None:
    self.body.append("</div>\n")


def _details_start(title: str, opened: bool = False) -> str:
    """The start of a collapsible block (``</details>`` ends it)."""
    return f'<details class="jaxhlo-details"{" open" if opened else ""}><summary>{html.escape(title)}</summary>\n'


def visit_details_html(self: HTMLTranslator, node: jaxhlo_details) -> None:
    self.body.append(_details_start(node["title"], bool(node.get("open"))))


def depart_details_html(self: HTMLTranslator, node: jaxhlo_details) -> None:
    self.body.append("</details>\n")


def visit_tabs_html(self: HTMLTranslator, node: jaxhlo_tabs) -> None:
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


def depart_tabs_html(self: HTMLTranslator, node: jaxhlo_tabs) -> None:
    self.body.append("</div>\n")


def visit_tab_html(self: HTMLTranslator, node: jaxhlo_tab) -> None:
    parent = node.parent
    index = parent.index(node)
    base = _attr(parent["tabset_id"])
    self.body.append(f'<div class="jaxhlo-panel" role="tabpanel" id="{base}-panel-{index}" '
                     f'aria-labelledby="{base}-tab-{index}" data-key="{_attr(node["key"])}" tabindex="0">\n'
                     f'<p class="jaxhlo-panel-title">{html.escape(node["title"])}</p>\n')


def depart_tab_html(self: HTMLTranslator, node: jaxhlo_tab) -> None:
    self.body.append("</div>\n")


#: The left end of the bar chart's log scale: 1 kB (smaller values draw no bar).
BAR_FLOOR = 1e3


def _nice_step(top: float) -> float:
    """A step of 1, 2 or 5 times a power of ten that cuts ``top`` into 2 to 4 parts."""
    import math

    raw = top / 4
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _axis(top: float, scale: str) -> tuple[str, float, Any]:
    """The tick labels of an axis (HTML), the gridline spacing in percent, and the
    function from a value to a bar's width in percent.  Linear: a step of 1, 2 or 5
    times a power of ten, written short (``60 MB``), every other label marked
    ``jaxhlo-tick-minor`` (hidden where the axis is short) when there are more than three.  Log: a gridline per decade
    from 1 kB, a label every thousand (kB, MB, GB...)."""
    import math

    from sphinx_jaxhlo.core.sizes import format_bytes

    if scale == "linear" and top > 0:
        step = _nice_step(top)
        count = round(step * math.ceil(top / step) / step)
        end = step * count
        minor = ' class="jaxhlo-tick-minor"'
        ticks = "".join(f'<span{minor if i % 2 and count > 3 else ""} '
                        f'style="left:{100 * i / count:.2f}%">{format_bytes(i * step).replace(".0 ", " ")}</span>'
                        for i in range(count + 1))
        return ticks, 100 / count, lambda value: max(0.0, 100.0 * value / end)
    decades = max(1, math.ceil(math.log10(max(top, BAR_FLOOR * 10) / BAR_FLOOR)))
    units = ["1 kB", "10 kB", "100 kB", "1 MB", "10 MB", "100 MB", "1 GB", "10 GB", "100 GB", "1 TB", "10 TB"]
    ticks = "".join(f'<span style="left:{100 * i / decades:.2f}%">{units[i]}</span>'
                    for i in range(0, decades + 1, 3) if i < len(units))
    return ticks, 100 / decades, lambda value: (
        0.0 if value < BAR_FLOOR else min(100.0, 100.0 * math.log10(value / BAR_FLOOR) / decades))


def _name_html(name: str) -> str:
    """A function's name that may wrap after its underscores, never inside a word."""
    return "_<wbr>".join(html.escape(part) for part in name.split("_"))


def visit_bars_html(self: HTMLTranslator, node: jaxhlo_bars) -> None:
    """A panel per measure, each with its own axis: linear when the values are close (so
    269 MB and 1.1 GB look 4x apart), else logarithmic with a gridline per decade (so
    50 MB and 20 GB read as three decades apart, not as 0 % and 100 %).  In a panel,
    a title per target, then its bars: label, bar (the arguments and outputs of a
    peak lighter), value."""
    chart = node["chart"]
    out = [f'<figure class="jaxhlo-bars"><figcaption>{html.escape(chart.title)}</figcaption>']
    for panel in chart.panels:
        ticks, grid, width = _axis(panel.top, panel.scale)
        out.append(f'<div class="jaxhlo-bars-panel" data-measure="{_attr(panel.measure)}" '
                   f'style="--jaxhlo-decade:{grid:.4f}%"><p class="jaxhlo-bars-title">{html.escape(panel.title)}</p>'
                   f'<div class="jaxhlo-bars-grid"><div class="jaxhlo-bar-axis" aria-hidden="true">{ticks}</div>')
        for group in panel.groups:
            out.append(f'<div class="jaxhlo-bar-target">{html.escape(group.title)}</div>')
            for bar in group.bars:
                base = f'<div class="jaxhlo-bar-base" style="width:{width(bar.base):.1f}%"></div>' if bar.base else ""
                # the bar is an empty box: a reader without the picture gets the name, the
                # target above it and the value beside it
                out.append(f'<div class="jaxhlo-bar-label">{_name_html(bar.label)}</div>'
                           f'<div class="jaxhlo-bar-track">'
                           f'<div class="jaxhlo-bar" style="width:{width(bar.value):.1f}%"></div>{base}</div>'
                           f'<div class="jaxhlo-bar-value">{html.escape(bar.text)}</div>')
        out.append(f'</div><p class="jaxhlo-bars-note">{html.escape(panel.note)}</p></div>')
    self.body.append("".join(out) + "</figure>\n")
    raise nodes.SkipNode


@functools.cache
def _highlighter(language: str) -> tuple[Any, Any]:
    """A lexer and a formatter, made once per language (a formatter computes its
    style table when made, which costs more than highlighting a short example)."""
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import TextLexer, get_lexer_by_name
    from pygments.util import ClassNotFound

    from sphinx_jaxhlo.render.lexer import HloLexer, StableHloLexer

    # this package's own lexers directly: Pygments would look for them among
    # every installed package's plugins first (tens of milliseconds a build)
    own: dict[str, type[Any]] = {alias: cls for cls in (HloLexer, StableHloLexer) for alias in cls.aliases}
    lexer: Any
    try:
        if language in own:
            lexer = own[language](stripnl=False, ensurenl=True)
        else:
            lexer = get_lexer_by_name(language, stripnl=False, ensurenl=True)
    except ClassNotFound:
        lexer = TextLexer(stripnl=False, ensurenl=True)
    return lexer, HtmlFormatter(nowrap=True)


def _source_lines_html(text: str, language: str, prefix: str, hidden: Sequence[int] = (), start: int = 1) -> str:
    """Highlighted code, each line in ``<span class="jaxhlo-line" id="<prefix>N">``
    with its number, the way Sphinx shows line numbers (``span.linenos``).

    :param hidden: lines the example does not use (a file's other functions): each run of
        them folds into one ``⋮`` line that says which lines it stands for.
    :param start: the number of the first line (code that continues another listing).
    """
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
    width = len(str(start + len(lines) - 1))
    folded = set(hidden)
    out = []
    for number, line in enumerate(body, start):
        if number in folded and number - 1 not in folded:
            last = number
            while last + 1 in folded:
                last += 1
            what = f"line {number}" if last == number else f"lines {number}-{last}"
            out.append(f'<span class="jaxhlo-fold"><span class="linenos">{"⋮".rjust(width)}</span>'
                       f'<span class="c1"># {what}: not used by this example</span></span>\n')
        if number not in folded:  # a folded line is left out: nothing compiled comes from it
            out.append(f'<span class="jaxhlo-line" id="{_attr(prefix)}{number}">'
                       f'<span class="linenos">{str(number).rjust(width)}</span>{line}</span>\n')
    return "".join(out)


def visit_source_html(self: HTMLTranslator, node: jaxhlo_source) -> None:
    block = node.next_node(nodes.literal_block)
    text = block.astext() if block is not None else ""
    language = str(node.get("language") or (block.get("language") if block is not None else "") or "text")
    self.body.append(f'<div class="highlight-{_attr(language)} notranslate jaxhlo-source" '
                     f'data-jaxhlo-src="{_attr(node["prefix"])}"><div class="highlight"><pre><span></span>'
                     + _source_lines_html(text, language, node["prefix"], node.get("hidden", ()),
                                          int(node.get("start", 1)))
                     + "</pre></div>\n</div>\n")
    raise nodes.SkipNode


def visit_lineref_html(self: HTMLTranslator, node: jaxhlo_lineref) -> None:
    # no class: the page's weight counts (the stylesheet finds them as links of a callout)
    self.body.append(f'<a href="#{_attr(node["href"])}">{html.escape(node.astext())}</a>')
    raise nodes.SkipNode


def _cell_html(cell: Any, prefix: str, count: int) -> str:
    text = html.escape(cell.text)
    tone = f' class="jaxhlo-{_attr(cell.tone)}"' if cell.tone else ""
    if cell.code:
        # a tuple of shapes may wrap between its elements, a shape never
        parts = text.split(", ")
        text = ", ".join(f"<code>{part}</code>" for part in parts)
        if len(parts) > 1:
            tone = f' class="{"jaxhlo-" + _attr(cell.tone) + " " if cell.tone else ""}jaxhlo-tuple"'

    elif cell.lines and prefix and all(1 <= n <= count for n in cell.lines):
        links = ", ".join(f'<a href="#{_attr(prefix)}{n}">{n}</a>' for n in cell.lines)
        return f'<td class="jaxhlo-lines">{"line" if len(cell.lines) == 1 else "lines"} {links}</td>'
    return f"<td{tone}>{text}</td>"


#: Tables with a column per target or variant that reflow where the example is narrow: each
#: row becomes a block, each cell a line titled with its column (``data-h``, jaxhlo.css).
REFLOWING = frozenset({"compare", "variants", "differences"})


def table_html(model: Any, prefix: str = "", count: int = 0, titled: bool = True) -> str:
    """A :class:`~sphinx_jaxhlo.render.rows.Table` as compact HTML: its title, the table in a
    box that scrolls sideways when it is wider than the page's column, what it leaves out."""
    out = []
    if titled and model.title:
        out.append(f'<p class="rubric jaxhlo-table-title">{html.escape(model.title)}</p>')
    traced = bool(prefix) and any(row.lines and all(1 <= n <= count for n in row.lines) for row in model.rows)
    # the rows traced from source lines say which; the table says whose lines (jaxhlo.js)
    src = f' data-jaxhlo-src="{_attr(prefix)}"' if traced else ""
    out.append(f'<div class="jaxhlo-table-box"><table class="jaxhlo-table jaxhlo-{_attr(model.key)}"{src}><thead><tr>')
    out += [f"<th>{html.escape(h)}</th>" for h in model.header]
    out.append("</tr></thead><tbody>")
    for row in model.rows:
        attrs = f' class="jaxhlo-{_attr(row.tone)}"' if row.tone else ""
        if traced and row.lines and all(1 <= n <= count for n in row.lines):
            attrs += f' tabindex="0" data-jaxhlo-lines="{" ".join(map(str, row.lines))}"'
        cells = [_cell_html(c, prefix, count) for c in row.cells]
        if model.key in REFLOWING:
            # the column's title beside each cell, for the narrow layout (targets as rows)
            cells = [cell.replace("<td", f'<td data-h="{_attr(h)}"', 1) if i and h else cell
                     for i, (cell, h) in enumerate(zip(cells, model.header, strict=False))]
        out.append(f"<tr{attrs}>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    for extra in (model.more_text, model.note):
        if extra:
            out.append(f'<p class="jaxhlo-more">{html.escape(extra)}</p>')
    return "".join(out) + "\n"


def visit_table_html(self: HTMLTranslator, node: jaxhlo_table) -> None:
    table = table_html(node["table"], node.get("prefix", ""), node.get("count", 0), node.get("titled", True))
    summary = node.get("summary")
    if summary:  # collapsed, as a jaxhlo_details around it would be
        table = f"{_details_start(summary)}{table}</details>\n"
    self.body.append(table)
    raise nodes.SkipNode


#: Module texts longer than this (characters) are not highlighted: Pygments
#: takes about 0.3 s per megabyte of HLO, and a page must render in well under a second.
HIGHLIGHT_LIMIT = 1_000_000


def highlighted_html(text: str, language: str) -> str:
    """``text`` highlighted (HTML for a ``<pre>``), or escaped when it is too long
    or the lexer fails."""
    from pygments import highlight

    if len(text) > HIGHLIGHT_LIMIT:
        return html.escape(text)
    lexer, formatter = _highlighter(language)
    try:
        return str(highlight(text, lexer, formatter))
    except Exception:  # a lexer bug must not cost the page
        return html.escape(text)


def highlighted_spans(text: str, language: str) -> list[str] | None:
    """``text`` cut into the spans the HTML formatter would make, for a page's
    script to build (``jaxhlo.js``): ``[class, text, class, text, ...]``, the
    class as Pygments' HTML formatter names it (``""``: no span).  The same
    highlighting as :func:`highlighted_html` without its HTML, which costs as
    much as the lexing and doubles the file; the browser sets each text as
    text, so nothing needs escaping here.

    :return: ``None`` when the text is too long or the lexer fails.
    """
    if len(text) > HIGHLIGHT_LIMIT:
        return None
    from sphinx_jaxhlo.render.lexer import HloLexer

    lexer, formatter = _highlighter(language)
    classes = _classes(formatter)
    out: list[str] = []
    add = out.append
    try:
        # what pygments.highlight() gives the formatter: the tokens of get_tokens(), which
        # prepares the text, then drops each token's index (a generator a token: a tenth of
        # the time; the lexers made here have no filters)
        prepare = getattr(lexer, "_preprocess_lexer_input", None)
        if prepare is None or lexer.filters:
            for ttype, value in lexer.get_tokens(text):
                add(classes[ttype])
                add(value)
        elif isinstance(lexer, HloLexer):  # the module texts: the scan itself gives the list
            return lexer.class_spans(prepare(text), classes)
        else:
            for _, ttype, value in lexer.get_tokens_unprocessed(prepare(text)):
                add(classes[ttype])
                add(value)
    except Exception:  # a lexer bug must not cost the page
        return None
    return out


class _ClassOf(dict):  # type: ignore[type-arg]
    """The formatter's class for each token type, asked of the formatter itself
    (a token formatted alone) the first time a type is seen."""

    def __init__(self, formatter: Any) -> None:
        super().__init__()
        self.formatter = formatter

    def __missing__(self, ttype: Any) -> str:
        import io
        import re

        out = io.StringIO()
        self.formatter.format([(ttype, "x")], out)
        m = re.match(r'<span class="([^"]*)">', out.getvalue())
        self[ttype] = found = m.group(1) if m else ""
        return found


@functools.cache
def _classes(formatter: Any) -> _ClassOf:
    return _ClassOf(formatter)


def _text_inline(node: jaxhlo_text) -> str:
    language = node.get("language") or "text"
    return (f'<div class="highlight-{_attr(language)} notranslate"><div class="highlight"><pre>'
            + highlighted_html(node["text"], language) + "</pre></div></div>\n")


def visit_text_html(self: HTMLTranslator, node: jaxhlo_text) -> None:
    """The text inline, in a collapsed block (a page of a Sphinx site links it as files instead)."""
    opened = " open" if node.get("open") else ""
    self.body.append(f'<details class="jaxhlo-details"{opened}><summary>{html.escape(node["title"])}</summary>\n'
                     + _text_inline(node) + "</details>\n")
    raise nodes.SkipNode


def visit_graph_html(self: HTMLTranslator, node: jaxhlo_graph) -> None:
    classes = " ".join(["jaxhlo-graph", *node.get("classes", [])])
    self.body.append(f'<figure class="{_attr(classes)}"><figcaption>{html.escape(node["title"])}</figcaption>'
                     f'<div class="jaxhlo-graph-scroll">{node["svg"]}</div>')
    if node.get("legend"):
        self.body.append(f'<p class="jaxhlo-graph-legend">{html.escape(node["legend"])}</p>')


def depart_graph_html(self: HTMLTranslator, node: jaxhlo_graph) -> None:
    self.body.append("</figure>\n")


#: The visitors of the extension's nodes in docutils' HTML5 writer, by node class.
PLAIN_HTML_VISITORS: dict[type[nodes.Element], tuple[Any, Any]] = {
    jaxhlo_block: (visit_block_html, depart_block_html),
    jaxhlo_details: (visit_details_html, depart_details_html),
    jaxhlo_tabs: (visit_tabs_html, depart_tabs_html),
    jaxhlo_tab: (visit_tab_html, depart_tab_html),
    jaxhlo_bars: (visit_bars_html, None),
    jaxhlo_source: (visit_source_html, None),
    jaxhlo_table: (visit_table_html, None),
    jaxhlo_text: (visit_text_html, None),
    jaxhlo_graph: (visit_graph_html, depart_graph_html),
    jaxhlo_lineref: (visit_lineref_html, None),
}
