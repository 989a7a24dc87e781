"""Everything the HTML and SVG writers take from user text or compiler output is escaped.

Each writer of :mod:`sphinx_jaxhlo.render` gets the same hostile text in every
field it prints, as element text and as attribute value; the output is then
parsed, and must hold that text exactly where it was put and no element the text
tried to open.  No Sphinx build: the extension's visitors run in docutils' own
HTML writer, as in :func:`sphinx_jaxhlo.render.standalone_html.nodes_to_html`.
"""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from docutils import nodes

from sphinx_jaxhlo.core.report import Report
from sphinx_jaxhlo.render import nodes as rnodes
from sphinx_jaxhlo.render.graph import Graph, GraphEdge, GraphNode, Subgraph
from sphinx_jaxhlo.render.graph_drawing import graph_svg
from sphinx_jaxhlo.render.rows import Cell, Row, Table
from sphinx_jaxhlo.render.standalone_html import HIGHLIGHT_LIMIT, nodes_to_html, render_html

#: Text that opens an element, closes attribute values of both quotings and holds an entity.
HOSTILE = "<i class=\"x\" title='y'>&amp;</i>"
ESCAPED = html.escape(HOSTILE, quote=True)
SVG = "{http://www.w3.org/2000/svg}"


def soup(markup: str) -> BeautifulSoup:
    found = BeautifulSoup(markup, "html.parser")
    assert not found.find_all("i"), f"an element opened by the text: {markup[:500]}"
    assert HOSTILE not in markup
    return found


# -- the extension's nodes --------------------------------------------------------------


def test_block_ids_and_classes() -> None:
    block = rnodes.jaxhlo_block(ids=[HOSTILE, HOSTILE + "2"], classes=[HOSTILE])
    found = soup(nodes_to_html([block]))
    div = found.find("div")
    assert div["id"] == HOSTILE
    assert div["class"] == ["jaxhlo", *HOSTILE.split()]
    assert found.find("span")["id"] == HOSTILE + "2"


@pytest.mark.parametrize("opened", [True, False])
def test_details_title(opened: bool) -> None:
    found = soup(nodes_to_html([rnodes.jaxhlo_details(title=HOSTILE, open=opened)]))
    assert found.find("summary").get_text() == HOSTILE
    assert found.find("details").has_attr("open") is opened


def test_tabs_keys_titles_and_ids() -> None:
    tabs = rnodes.jaxhlo_tabs(tabset_id=HOSTILE, group=HOSTILE)
    tabs += rnodes.jaxhlo_tab(key=HOSTILE, title=HOSTILE)
    tabs += rnodes.jaxhlo_tab(key="cpu", title="CPU")
    found = soup(nodes_to_html([tabs]))
    assert found.find("div", class_="jaxhlo-tabs")["data-group"] == HOSTILE
    first, second = found.find_all("button")
    assert (first["data-key"], first.get_text(), first["id"], first["aria-controls"]) == (
        HOSTILE, HOSTILE, f"{HOSTILE}-tab-0", f"{HOSTILE}-panel-0")
    assert (second["data-key"], second["aria-selected"], second["tabindex"]) == ("cpu", "false", "-1")
    panel = found.find("div", class_="jaxhlo-panel")
    assert (panel["id"], panel["aria-labelledby"], panel["data-key"]) == (
        f"{HOSTILE}-panel-0", f"{HOSTILE}-tab-0", HOSTILE)
    assert panel.find("p", class_="jaxhlo-panel-title").get_text() == HOSTILE


def test_bar_chart_labels_and_values() -> None:
    from sphinx_jaxhlo.render.chart import Bar, BarGroup, Chart, Panel

    panel = Panel(HOSTILE, HOSTILE, "linear", (BarGroup(HOSTILE, (Bar(HOSTILE, 5e6, HOSTILE, base=1e6),
                                                                  Bar("small", 10.0, "10 B"))),), HOSTILE)
    found = soup(nodes_to_html([rnodes.jaxhlo_bars(chart=Chart(HOSTILE, (panel,)))]))
    assert found.find("figcaption").get_text() == HOSTILE
    assert found.find("div", class_="jaxhlo-bars-panel")["data-measure"] == HOSTILE
    assert found.find("p", class_="jaxhlo-bars-title").get_text() == HOSTILE
    assert found.find("div", class_="jaxhlo-bar-target").get_text() == HOSTILE
    assert found.find("div", class_="jaxhlo-bar-label").get_text() == HOSTILE
    assert found.find("div", class_="jaxhlo-bar-value").get_text() == HOSTILE
    assert found.find("p", class_="jaxhlo-bars-note").get_text() == HOSTILE


def test_source_lines_prefix_language_and_code() -> None:
    source = rnodes.jaxhlo_source(prefix=HOSTILE, language=HOSTILE)
    source += nodes.literal_block(HOSTILE + "\nsecond line", HOSTILE + "\nsecond line")
    found = soup(nodes_to_html([source]))
    outer = found.find("div", class_="jaxhlo-source")
    assert outer["data-jaxhlo-src"] == HOSTILE
    assert outer["class"] == f"highlight-{HOSTILE} notranslate jaxhlo-source".split()
    lines = found.find_all("span", class_="jaxhlo-line")
    assert [line["id"] for line in lines] == [f"{HOSTILE}1", f"{HOSTILE}2"]
    assert lines[0].get_text() == "1" + HOSTILE


def test_source_lines_when_the_highlighter_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    import pygments

    def broken(*args: object, **kwargs: object) -> str:
        raise RuntimeError("a lexer bug")

    monkeypatch.setattr(pygments, "highlight", broken)
    found = soup(rnodes._source_lines_html(HOSTILE + "\n" + HOSTILE, "python", "p"))
    assert [s.get_text() for s in found.find_all("span", class_="jaxhlo-line")] == ["1" + HOSTILE, "2" + HOSTILE]


def hostile_table() -> Table:
    return Table(key=HOSTILE, title=HOSTILE, header=(HOSTILE, "shape", "source"), rows=(
        Row((Cell(HOSTILE, tone=HOSTILE), Cell(HOSTILE + ", " + HOSTILE, code=True), Cell("lines 2, 3", lines=(2, 3))),
            lines=(2, 3), tone=HOSTILE),
        Row((Cell("b"), Cell("f32[2]", code=True), Cell("line 9", lines=(9,)))),
    ), total=3, left_out=HOSTILE, note=HOSTILE)


def test_tables_cells_tones_links_and_notes() -> None:
    found = soup(rnodes.table_html(hostile_table(), prefix=HOSTILE, count=5))
    assert found.find("p", class_="jaxhlo-table-title").get_text() == HOSTILE
    table = found.find("table")
    assert table["class"] == ["jaxhlo-table", *f"jaxhlo-{HOSTILE}".split()]
    assert table["data-jaxhlo-src"] == HOSTILE
    assert [th.get_text() for th in table.find_all("th")] == [HOSTILE, "shape", "source"]
    first, second = table.find("tbody").find_all("tr")
    assert first["class"] == f"jaxhlo-{HOSTILE}".split() and first["data-jaxhlo-lines"] == "2 3"
    cells = first.find_all("td")
    assert cells[0].get_text() == HOSTILE and cells[0]["class"] == f"jaxhlo-{HOSTILE}".split()
    assert [c.get_text() for c in cells[1].find_all("code")] == [HOSTILE, HOSTILE]
    assert [a["href"] for a in cells[2].find_all("a")] == [f"#{HOSTILE}2", f"#{HOSTILE}3"]
    # line 9 is past the source's 5 lines: no link, no highlight
    assert not second.has_attr("data-jaxhlo-lines") and not second.find("a")
    more = [p.get_text() for p in found.find_all("p", class_="jaxhlo-more")]
    assert more[-1] == HOSTILE and HOSTILE in more[0]


def test_module_texts_inline() -> None:
    text = rnodes.jaxhlo_text(title=HOSTILE, text=HOSTILE, language=HOSTILE, open=True)
    found = soup(nodes_to_html([text]))
    assert found.find("summary").get_text() == HOSTILE
    assert found.find("pre").get_text().rstrip("\n") == HOSTILE
    assert found.find("div")["class"] == f"highlight-{HOSTILE} notranslate".split()


def test_graph_caption_and_legend() -> None:
    graph = rnodes.jaxhlo_graph(title=HOSTILE, svg="<svg></svg>", legend=HOSTILE)
    found = soup(nodes_to_html([graph]))
    assert found.find("figcaption").get_text() == HOSTILE
    assert found.find("p", class_="jaxhlo-graph-legend").get_text() == HOSTILE


def test_attribute_values_escape_both_quotes() -> None:
    assert rnodes._attr(HOSTILE) == ESCAPED
    assert '"' not in rnodes._attr('"') and "'" not in rnodes._attr("'")


# -- the standalone HTML of notebooks ---------------------------------------------------


def test_full_page_title() -> None:
    page = render_html([Report(function=HOSTILE, target="cpu")], full_page=True)
    found = soup(page)
    assert found.title.get_text() == f"jax-hlo: {HOSTILE}"
    assert f"<title>jax-hlo: {ESCAPED}</title>" in page


def test_fragment_notes() -> None:
    found = soup(render_html([], function=HOSTILE, args=HOSTILE, notes=[HOSTILE]))
    assert found.find("p", class_="jaxhlo-notes").get_text() == HOSTILE


def test_code_blocks_language_and_text() -> None:
    text = HOSTILE + "\n" + HOSTILE
    found = soup(nodes_to_html([nodes.literal_block(text, text, language=HOSTILE)]))
    assert found.find("pre").get_text().strip("\n") == text
    assert found.find("div")["class"] == f"highlight-{HOSTILE} notranslate".split()


def test_code_too_long_to_highlight_is_escaped_too() -> None:
    copies = HIGHLIGHT_LIMIT // len(HOSTILE) + 1
    text = HOSTILE * copies
    out = nodes_to_html([nodes.literal_block(text, text, language="hlo")])
    assert HOSTILE not in out and "<i " not in out
    assert out.count(ESCAPED) == copies


# -- the SVG of the computation graph ---------------------------------------------------


def hostile_graph() -> Graph:
    a = GraphNode(id="a", name=HOSTILE, computation=HOSTILE, role="op", detail=HOSTILE, tooltip=HOSTILE,
                  source_lines=[1])
    b = GraphNode(id="b", name="b", computation=HOSTILE, role="result", detail="result")
    c = GraphNode(id="c", name="c", computation="other", role="op", detail="x")
    edge = GraphEdge(src="a", dst="b", index=None, shape=HOSTILE, bytes=5_000_000, materialized=True, heavy=True)
    return Graph([Subgraph(HOSTILE, HOSTILE, [a, b], [edge]), Subgraph("other", "other", [c], [])])


def test_graph_svg_is_well_formed_and_holds_the_text() -> None:
    svg = graph_svg(hostile_graph(), uid=HOSTILE, line_prefix=HOSTILE, lines_known=3, title=HOSTILE)
    assert HOSTILE not in svg
    root = ET.fromstring(svg)  # an unescaped quote or bracket breaks the XML
    titles = [t.text for t in root.iter(f"{SVG}title")]
    assert titles[0] == HOSTILE  # the picture's accessible name
    assert HOSTILE in titles  # the node's tooltip
    assert any(t is not None and t.startswith(f"{HOSTILE} → b: {HOSTILE} · 5.0 MB") for t in titles)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert HOSTILE in texts  # the computation's frame title
    groups = [g.get("data-computation") for g in root.iter(f"{SVG}g") if g.get("data-computation")]
    assert groups == [HOSTILE, "other"]
    (link,) = root.iter(f"{SVG}a")
    assert (link.get("href"), link.get("data-jaxhlo-src")) == (f"#{HOSTILE}1", HOSTILE)
    markers = {m.get("id") for m in root.iter(f"{SVG}marker")}
    assert markers == {f"{HOSTILE}-arrow", f"{HOSTILE}-arrow-heavy"}
    assert root.get("aria-labelledby") == f"{HOSTILE}-title"


def test_defaults_of_the_escaped_fields() -> None:
    tabs = rnodes.jaxhlo_tabs(tabset_id="t")
    tabs += rnodes.jaxhlo_tab(key="cpu", title="CPU")
    assert soup(nodes_to_html([tabs])).find("div", class_="jaxhlo-tabs")["data-group"] == "target"
    node = GraphNode(id="a", name="fusion.1", computation="main", role="op", detail="Loop")
    root = ET.fromstring(graph_svg(Graph([Subgraph("main", "main", [node], [])]), uid="g"))
    titles = [t.text for t in root.iter(f"{SVG}title")]
    # the picture's name when none is given; a box without a tooltip shows its name
    assert titles == ["Computation graph", "fusion.1"]


def test_a_long_name_is_clipped_to_its_box_and_escaped() -> None:
    from sphinx_jaxhlo.render.graph_drawing import _DETAIL_FONT, _NAME_FONT, _text_width

    node = GraphNode(id="a", name=HOSTILE * 20, computation="main", role="op", detail=HOSTILE * 20)
    root = ET.fromstring(graph_svg(Graph([Subgraph("main", "main", [node], [])]), uid="g"))
    box = float(next(r for r in root.iter(f"{SVG}rect")).get("width"))
    name = next(t for t in root.iter(f"{SVG}text") if t.get("class") == "jaxhlo-graph-name").text
    detail = next(t for t in root.iter(f"{SVG}text") if t.get("class") == "jaxhlo-graph-detail").text
    for shown, size in ((name, _NAME_FONT), (detail, _DETAIL_FONT)):
        assert shown.endswith("…") and HOSTILE.startswith(shown[:-1][: len(HOSTILE)])
        assert _text_width(shown, size) <= box  # inside its box


@pytest.mark.parametrize("language", [HOSTILE, None])
def test_module_texts_on_a_page(tmp_path: Path, language: str | None) -> None:
    from types import SimpleNamespace

    from sphinx_jaxhlo.sphinxext import html as sphinx_html

    builder = SimpleNamespace(format="html", name="html", outdir=str(tmp_path), current_docname="page",
                              get_output_path=lambda docname: tmp_path / f"{docname}.html")
    page = SimpleNamespace(builder=builder, body=[])
    node = rnodes.jaxhlo_text(title=HOSTILE, text=HOSTILE, open=False,
                              **({} if language is None else {"language": language}))
    with pytest.raises(nodes.SkipNode):
        sphinx_html.visit_text_html(page, node)
    found = soup("".join(page.body))
    assert found.find("summary").get_text() == HOSTILE
    assert found.find("div")["class"] == f"highlight-{language or 'text'} notranslate".split()
    key = found.find("pre")["data-jaxhlo-key"]
    assert found.find("a")["href"] == f"_jaxhlo/{key}.txt"
    assert (tmp_path / "_jaxhlo" / f"{key}.txt").read_text(encoding="utf-8") == HOSTILE


def test_a_reason_beside_its_finding_is_escaped_and_its_record_collapsed() -> None:
    from sphinx_jaxhlo.core.report import Reason
    from sphinx_jaxhlo.render.findings import Finding
    from sphinx_jaxhlo.render.parts import finding_node
    from sphinx_jaxhlo.render.text import reason_text

    reason = Reason(producer_kind=HOSTILE, text=HOSTILE, rule=HOSTILE, source_file=HOSTILE, quoted=HOSTILE,
                    alternatives=["jaxhlo-guide-bounded-scan", HOSTILE])
    found = soup(nodes_to_html([finding_node(Finding("problem", "Unfused reduction", HOSTILE, reason))]))
    why = found.find("p", class_="jaxhlo-reason").get_text()
    assert why.count(HOSTILE) == 4  # kind, text, rule, file
    assert why.endswith("(the compiler's own record is quoted below)")
    # standalone, the alternatives are their titles as text; the record is collapsed under the reason
    assert found.find("p", class_="jaxhlo-alternatives").get_text() == (
        f"Bounded alternatives: lax.scan over chunks, reducing inside the loop; {HOSTILE}.")
    record = found.find("details")
    assert record.find("summary").get_text() == "The compiler's decision record"
    assert record.find("pre").get_text().strip() == HOSTILE
    text = reason_text(reason)
    assert "    " + HOSTILE in text and "(jaxhlo-guide-bounded-scan)" in text


def test_a_derived_reason_says_so_and_links_the_guide() -> None:
    from sphinx_jaxhlo.core.report import Reason
    from sphinx_jaxhlo.render.findings import Finding
    from sphinx_jaxhlo.render.parts import finding_node
    from sphinx_jaxhlo.render.text import reason_text
    from sphinx_jaxhlo.sphinxext.links import alternative_xref

    reason = Reason(producer_kind="gemm", text="t", alternatives=["jaxhlo-guide-bounded-map"])
    box = finding_node(Finding("problem", "Unfused reduction", "x", reason))
    # the renderer marks the alternative; the Sphinx extension makes it a cross-reference
    (marked,) = list(box.findall(rnodes.jaxhlo_alternative))
    ref = alternative_xref(marked)
    assert (ref["refdomain"], ref["reftype"], ref["reftarget"], ref["refexplicit"]) == (
        "std", "ref", "jaxhlo-guide-bounded-map", True)
    assert ref.astext() == "lax.map over chunks, reducing inside"
    assert ref["classes"] == ["jaxhlo-alternative"]  # what the missing-reference handler looks for
    assert not list(box.findall(rnodes.jaxhlo_details))  # nothing quoted: nothing to collapse
    assert "(derived from the HLO)" in box.astext()
    assert "decision record" not in reason_text(reason)
    # without a reason, a finding is the one paragraph it always was
    assert isinstance(finding_node(Finding("info", "", "x")), nodes.paragraph)
