"""The nodes the renderer emits beyond docutils' own, and how each builder shows them.

HTML gets collapsible blocks, tabs and bar charts; every other builder gets
the same content as plain sections through
:class:`sphinx_jaxhlo.sphinxext.fallback.PlainFallback`, so LaTeX,
text, man, texinfo and epub builds never meet a node they do not know.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Sequence
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
    """A bar chart: ``bars`` is a list of (label, value in bytes, text); ``scale`` is
    ``linear`` or ``log``."""


class jaxhlo_source(nodes.General, nodes.Element):
    """The example's source with an anchor on each line.

    Holds one ``literal_block`` (what other builders show); ``prefix`` makes
    the ids of the lines in HTML (``<prefix>4``).
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


class jaxhlo_lineref(nodes.Inline, nodes.TextElement):
    """A line number a finding names (its text): ``href`` is the line's anchor in the
    listing; ``line`` is the line's code, which builders other than HTML print after
    the number, since they have no listing to jump to."""


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
            ensure_text_files(self, node)
            self.body.append(text)
            self.body.append("</div>\n")
            raise nodes.SkipNode


def depart_block_html(self: HTML5Translator, node: jaxhlo_block) -> None:
    start = node.get("fragment_start")
    if node.get("fragment") and start is not None:
        _store_fragment(Path(node["fragment"]), "".join(self.body[start:]))
    self.body.append("</div>\n")


def _store_fragment(path: Path, text: str, mode: int | None = None) -> None:
    """Write atomically; a cache that cannot be written is only slower.

    :param mode: permissions to give the file (a temporary file is private to its owner).
    """
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
        if mode is not None:
            os.chmod(tmp, mode)
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


def _nice_step(top: float) -> float:
    """A step of 1, 2 or 5 times a power of ten that cuts ``top`` into 3 to 6 parts."""
    import math

    raw = top / 4
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def visit_bars_html(self: HTML5Translator, node: jaxhlo_bars) -> None:
    """One bar per (label, bytes, text): on a linear scale when the values are close
    (so 269 MB and 1.1 GB look 4x apart), else on a log scale with a tick per decade
    (so 50 MB and 20 GB read as three decades apart, not as 0 % and 100 %)."""
    import math

    from sphinx_jaxhlo.core.sizes import format_bytes

    bars: list[tuple[str, float, str]] = node["bars"]
    top = max((v for _, v, _ in bars), default=0.0)
    if node.get("scale", "log") == "linear" and top > 0:
        step = _nice_step(top)
        end = step * math.ceil(top / step)
        count = round(end / step)
        ticks = "".join(f'<span style="left:{100 * i / count:.2f}%">{format_bytes(i * step)}</span>'
                        for i in range(count + 1))
        grid = 100 / count

        def width(value: float) -> float:
            return max(0.0, 100.0 * value / end)

        note = ("Linear scale; each bar gives its value and, in brackets, how many times the smallest it is.")
    else:
        decades = max(1, math.ceil(math.log10(max(top, BAR_FLOOR * 10) / BAR_FLOOR)))
        units = ["1 kB", "10 kB", "100 kB", "1 MB", "10 MB", "100 MB", "1 GB", "10 GB", "100 GB", "1 TB", "10 TB"]
        # a gridline every decade, a label every thousand (kB, MB, GB...), so labels never crowd
        ticks = "".join(f'<span style="left:{100 * i / decades:.2f}%">{units[i]}</span>'
                        for i in range(0, decades + 1, 3) if i < len(units))
        grid = 100 / decades

        def width(value: float) -> float:
            return 0.0 if value < BAR_FLOOR else min(100.0, 100.0 * math.log10(value / BAR_FLOOR) / decades)

        note = ("Logarithmic scale (the values are more than 100× apart), one gridline per factor of ten; "
                "values under 1 kB draw no bar. Each bar gives its value and how many times the smallest it is.")
    self.body.append(
        f'<figure class="jaxhlo-bars" style="--jaxhlo-decade:{grid:.4f}%">'
        f'<figcaption>{html.escape(node["title"])}</figcaption><div class="jaxhlo-bars-grid">'
        f'<div></div><div class="jaxhlo-bar-axis" aria-hidden="true">{ticks}</div><div></div>')
    for label, value, text in bars:
        self.body.append(
            f'<div class="jaxhlo-bar-label">{html.escape(label)}</div>'
            f'<div class="jaxhlo-bar-track" role="img" aria-label="{_attr(label)}: {_attr(text)}">'
            f'<div class="jaxhlo-bar" style="width:{width(value):.1f}%"></div></div>'
            f'<div class="jaxhlo-bar-value">{html.escape(text)}</div>')
    self.body.append(f'</div><p class="jaxhlo-bars-note">{html.escape(note)}</p></figure>\n')
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


def _source_lines_html(text: str, language: str, prefix: str, hidden: Sequence[int] = ()) -> str:
    """Highlighted code, each line in ``<span class="jaxhlo-line" id="<prefix>N">``
    with its number, the way Sphinx shows line numbers (``span.linenos``).

    :param hidden: lines the example does not use (a file's other functions): each run of
        them folds into one ``⋮`` line that says which lines it stands for.
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
    width = len(str(len(lines)))
    folded = set(hidden)
    out = []
    for number, line in enumerate(body, 1):
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


def visit_source_html(self: HTML5Translator, node: jaxhlo_source) -> None:
    block = node.next_node(nodes.literal_block)
    text = block.astext() if block is not None else ""
    language = str(node.get("language") or (block.get("language") if block is not None else "") or "text")
    self.body.append(f'<div class="highlight-{_attr(language)} notranslate jaxhlo-source" '
                     f'data-jaxhlo-src="{_attr(node["prefix"])}"><div class="highlight"><pre><span></span>'
                     + _source_lines_html(text, language, node["prefix"], node.get("hidden", ()))
                     + "</pre></div>\n</div>\n")
    raise nodes.SkipNode


def visit_lineref_html(self: HTML5Translator, node: jaxhlo_lineref) -> None:
    # no class: the page's weight counts (the stylesheet finds them as links of a callout)
    self.body.append(f'<a href="#{_attr(node["href"])}">{html.escape(node.astext())}</a>')
    raise nodes.SkipNode


def _cell_html(cell: Any, prefix: str, count: int) -> str:
    text = html.escape(cell.text)
    tone = f' class="jaxhlo-{_attr(cell.tone)}"' if cell.tone else ""
    if cell.code:
        # a tuple of shapes may wrap between its elements, a shape never
        text = ", ".join(f"<code>{part}</code>" for part in text.split(", "))
    elif cell.lines and prefix and all(1 <= n <= count for n in cell.lines):
        links = ", ".join(f'<a href="#{_attr(prefix)}{n}">{n}</a>' for n in cell.lines)
        return f'<td class="jaxhlo-lines">{"line" if len(cell.lines) == 1 else "lines"} {links}</td>'
    return f"<td{tone}>{text}</td>"


#: Tables with a column per target that reflow where the example is narrow: each row
#: becomes a block, each cell a line titled with its target (``data-h``, jaxhlo.css).
REFLOWING = frozenset({"compare", "variants"})


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


def visit_table_html(self: HTML5Translator, node: jaxhlo_table) -> None:
    self.body.append(table_html(node["table"], node.get("prefix", ""), node.get("count", 0),
                                node.get("titled", True)))
    raise nodes.SkipNode


#: Module texts longer than this (characters) are not highlighted: Pygments
#: takes about 0.3 s per megabyte of HLO, and a page must render in well under a second.
HIGHLIGHT_LIMIT = 1_000_000
#: The folder of the build output that holds the module texts.
TEXT_FOLDER = "_jaxhlo"


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


def text_key(text: str, language: str) -> str:
    import hashlib

    return hashlib.sha256(f"{language}\0{text}".encode()).hexdigest()[:24]


def write_text_files(outdir: Path, text: str, language: str, store: Path | None = None) -> str:
    """Write a module text beside the pages: ``_jaxhlo/<key>.txt`` (the text) and
    ``_jaxhlo/<key>.js`` (a script that hands the highlighted text to the page,
    which works from ``file://`` as over HTTP, where a fetch would not).
    Files that exist are kept: the name is a hash of the content.

    :param store: a folder of the cache that keeps the highlighted scripts
        between builds (highlighting is most of what a cached rebuild into a
        new output folder would spend on an example), under a name that
        also depends on the highlighting code and Pygments' version.
    :return: the key.
    """
    import json
    import shutil

    key = text_key(text, language)
    folder = outdir / TEXT_FOLDER
    js, txt = folder / f"{key}.js", folder / f"{key}.txt"
    if not txt.exists():
        _store_fragment(txt, text, mode=0o644)  # published with the site: readable by its web server
    if not js.exists():
        kept = store / key[:2] / f"{key}-{_highlighting_fingerprint()}.js" if store is not None else None
        if kept is not None and kept.is_file():
            try:
                folder.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(kept, js)
                js.chmod(0o644)
                return key
            except OSError:
                js.unlink(missing_ok=True)
        body = highlighted_html(text, language)
        payload = {"html": body} if len(text) <= HIGHLIGHT_LIMIT else {"text": text}
        script = f"window.jaxhloText&&window.jaxhloText({json.dumps(key)},{json.dumps(payload)});\n"
        _store_fragment(js, script, mode=0o644)
        if kept is not None:
            _store_fragment(kept, script)
    return key


@functools.cache
def _highlighting_fingerprint() -> str:
    """What highlighted text depends on besides the text: this package's
    rendering and lexer code, and Pygments."""
    import hashlib

    import pygments

    from sphinx_jaxhlo.core.request import render_fingerprint

    return hashlib.sha256(f"{render_fingerprint()}\0{pygments.__version__}".encode()).hexdigest()[:16]


def _text_store(node: nodes.Node) -> Path | None:
    """The cache folder of highlighted texts that the example holding ``node`` names."""
    while node is not None and not isinstance(node, jaxhlo_block):
        node = node.parent
    store = node.get("text_store") if node is not None else None
    return Path(store) if store else None


def _page_folder(translator: Any) -> Path | None:
    """The folder of the page being written, when this is a Sphinx HTML builder
    that writes pages into its output folder (not an EPUB: no scripts there)."""
    builder = getattr(translator, "builder", None)
    if builder is None or getattr(builder, "format", "") != "html" or builder.name.startswith("epub"):
        return None
    docname = getattr(builder, "current_docname", None)
    if not docname:
        return None
    from sphinx_jaxhlo.sphinxext.compat import page_output_path

    path = page_output_path(builder, docname)
    return path.parent if path is not None else None


def _text_inline(node: jaxhlo_text) -> str:
    language = node.get("language") or "text"
    return (f'<div class="highlight-{_attr(language)} notranslate"><div class="highlight"><pre>'
            + highlighted_html(node["text"], language) + "</pre></div></div>\n")


def visit_text_html(self: HTML5Translator, node: jaxhlo_text) -> None:
    import os

    opened = " open" if node.get("open") else ""
    title = html.escape(node["title"])
    folder = _page_folder(self)
    if folder is None:
        # a notebook output or an EPUB: everything inline, collapsed
        self.body.append(f'<details class="jaxhlo-details"{opened}><summary>{title}</summary>\n'
                         + _text_inline(node) + "</details>\n")
        raise nodes.SkipNode
    outdir = Path(self.builder.outdir)
    key = write_text_files(outdir, node["text"], node.get("language") or "text", _text_store(node))
    base = Path(os.path.relpath(outdir / TEXT_FOLDER, folder)).as_posix()
    language = _attr(node.get("language") or "text")
    self.body.append(
        f'<details class="jaxhlo-details jaxhlo-lazy"{opened}><summary>{title}</summary>'
        f'<p class="jaxhlo-text-file"><a href="{_attr(base)}/{key}.txt">Open as a text file</a></p>'
        f'<div class="highlight-{language} notranslate"><div class="highlight">'
        f'<pre data-jaxhlo-text="{_attr(base)}/{key}.js" data-jaxhlo-key="{key}"></pre></div></div></details>\n')
    raise nodes.SkipNode


def ensure_text_files(translator: Any, block: nodes.Element) -> None:
    """Write the module texts of a block whose HTML is reused from the cache
    (the output folder may be new)."""
    if _page_folder(translator) is None:
        return
    outdir = Path(translator.builder.outdir)
    store = _text_store(block)
    for node in block.findall(jaxhlo_text):
        write_text_files(outdir, node["text"], node.get("language") or "text", store)


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
    jaxhlo_table: (visit_table_html, None),
    jaxhlo_text: (visit_text_html, None),
    jaxhlo_graph: (visit_graph_html, depart_graph_html),
    jaxhlo_lineref: (visit_lineref_html, None),
}
