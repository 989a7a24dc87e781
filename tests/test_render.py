"""Where each buffer comes from: source-line links and highlighting, and ``:show: graph``.

Unit tests of the graph builder on stored modules (no compile), then the
directive end to end through the ``graph`` test root (CPU target).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup, Tag
from docutils import nodes

from sphinx_jaxhlo.core.report import CompileError, Report
from sphinx_jaxhlo.core.request import DEFAULT_SHOW, SHOW_PARTS
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.hlo.fusion import analyze_module
from sphinx_jaxhlo.render.example import render_example
from sphinx_jaxhlo.render.graph import Graph, GraphEdge, GraphError, GraphNode, Subgraph, build_graph
from sphinx_jaxhlo.render.graph_drawing import graph_svg, graph_text
from sphinx_jaxhlo.render.nodes import (
    _source_lines_html,
    jaxhlo_graph,
    jaxhlo_lineref,
    jaxhlo_source,
    jaxhlo_table,
    table_html,
    visit_lineref_html,
)
from sphinx_jaxhlo.render.parts import linked_text
from sphinx_jaxhlo.render.view import ExampleView, SourceLinks, unused_lines

DATA = Path(__file__).parent / "data" / "hlo"
SVG = "{http://www.w3.org/2000/svg}"


def report_of(name: str) -> Report:
    path = DATA / name
    if not path.exists():
        pytest.skip(f"fixture tests/data/hlo/{name} is absent (regenerate the stored HLO fixtures)")
    text = path.read_text()
    analysis = analyze_module(text)
    return Report(function="f", target=name.split("__")[0], hlo=text, fusions=analysis.fusions,
                  materialized=analysis.materialized, reductions=analysis.reductions)


# -- the graph builder ----------------------------------------------------------

def test_seed_graph_on_gpu_has_the_20gb_edge_into_the_reduction() -> None:
    graph = build_graph(report_of("gpu_h100__with_dot.txt"))
    assert [s.title for s in graph.subgraphs] == ["ENTRY main.2"]
    roles = {n.name: n.role for n in graph.nodes}
    assert roles == {"pos.1": "parameter", "hkl.1": "parameter", "gemm_fusion_dot_general.1": "op",
                     "input_reduce_fusion": "op", "input_reduce_fusion.1": "op", "result": "result"}
    gemm = graph.node("gemm_fusion_dot_general.1")
    assert gemm.detail == "Custom — dot + cosine"
    assert "__triton_nested_gemm_fusion" in gemm.tooltip and gemm.source_lines
    # the arguments feed the GEMM fusion
    for param, shape in (("pos.1", "f32[100000,3]"), ("hkl.1", "f32[50000,3]")):
        (edge,) = graph.edges_between(param, "gemm_fusion_dot_general.1")
        assert edge.shape == shape and not edge.materialized and not edge.heavy
    # the 20 GB product goes to memory and into the first reduce fusion: emphasized
    (big,) = graph.edges_between("gemm_fusion_dot_general.1", "input_reduce_fusion")
    assert big.label == "f32[50000,100000] · 20.0 GB"
    assert big.materialized and big.heavy and big.bytes == 20_000_000_000
    # the partial sums of the split reduction are materialized, but small
    (partial,) = graph.edges_between("input_reduce_fusion", "input_reduce_fusion.1")
    assert partial.materialized and not partial.heavy and partial.shape == "f32[50000,250]"
    (out,) = graph.edges_between("input_reduce_fusion.1", "result")
    assert out.shape == "f32[50000]" and not out.materialized
    assert [e for e in graph.edges if e.heavy] == [big]


def test_seed_graph_svg_draws_every_node_and_edge() -> None:
    graph = build_graph(report_of("gpu_h100__with_dot.txt"))
    svg = graph_svg(graph, "g1", line_prefix="ex-L", lines_known=20, title="Seed")
    root = ET.fromstring(svg)  # well-formed XML
    assert root.get("role") == "img" and root.find(f"{SVG}title").text == "Seed"
    names = [t.text for t in root.iter(f"{SVG}text") if "jaxhlo-graph-name" in (t.get("class") or "")]
    assert Counter(names) == Counter(n.name for n in graph.nodes)
    edges = [p for p in root.iter(f"{SVG}path") if "jaxhlo-graph-edge" in (p.get("class") or "")]
    assert len(edges) == len(graph.edges) == 5
    heavy = [p for p in edges if "jaxhlo-graph-heavy" in p.get("class", "")]
    assert len(heavy) == 1
    assert heavy[0].find(f"{SVG}title").text == \
        "gemm_fusion_dot_general.1 → input_reduce_fusion: f32[50000,100000] · 20.0 GB (materialized)"
    assert heavy[0].get("marker-end") == "url(#g1-arrow-heavy)"
    labels = ["".join(g.itertext()) for g in root.iter(f"{SVG}g") if "jaxhlo-graph-label" in (g.get("class") or "")]
    assert "f32[50000,100000] · 20.0 GB" in labels and "f32[100000,3] · 1.2 MB" in labels
    # boxes traced from source lines link to them and say which
    links = [a for a in root.iter(f"{SVG}a")]
    assert links and all(re.fullmatch(r"#ex-L\d+", a.get("href", "")) for a in links)
    assert all(a.get("data-jaxhlo-src") == "ex-L" and a.get("data-jaxhlo-lines") for a in links)
    # drawn in the text colour, not black
    assert "black" not in svg and "#000" not in svg and 'stroke="currentColor"' in svg
    # without a source on the page, nothing links
    assert "<a " not in graph_svg(graph, "g2")


def test_loop_bodies_are_clusters_of_their_own() -> None:
    graph = build_graph(report_of("gpu_h100__scan_chunks.txt"))
    titles = [s.title for s in graph.subgraphs]
    assert titles == ["ENTRY main.6", "condition of while.5 (region_2.5)", "body of while.5 (region_0.4)"]
    body = graph.subgraphs[2]
    # the loop state comes in as one tuple parameter, read element by element
    state = [e for e in body.edges if e.src == "region_0.4/arg_tuple.1"]
    assert {e.index for e in state} == {0, 1, 2, 3}
    heavy = [e for e in graph.edges if e.heavy]
    assert len(heavy) == 1 and heavy[0].shape == "f32[1000,50000]"  # the largest buffer, 200 MB
    assert (heavy[0].src, heavy[0].dst) == ("region_0.4/gemm_fusion_dot_general.0", "region_0.4/input_reduce_fusion")
    assert graph.node("while.5").computation == "main.6"
    ET.fromstring(graph_svg(graph, "loop"))


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.txt") if not p.name.endswith(".error.txt")))
def test_every_stored_module_draws(name: str) -> None:
    report = report_of(name)
    graph = build_graph(report)
    assert graph.subgraphs and graph.subgraphs[0].title.startswith("ENTRY ")
    ids = {n.id for n in graph.nodes}
    assert all(e.src in ids and e.dst in ids for e in graph.edges)
    # every fusion of the report is a box (nothing is dropped below the node limit)
    assert {(f.computation, f.name) for f in report.fusions} <= {(n.computation, n.name) for n in graph.nodes}
    root = ET.fromstring(graph_svg(graph, "x"))
    assert float(root.get("width", "0")) > 0 and float(root.get("height", "0")) > 0
    text = graph_text(graph)
    assert all(f"    {n.name}: " in text for n in graph.nodes)


def test_big_graphs_stop_at_the_node_limit() -> None:
    graph = build_graph(report_of("tpu_v5e__sort_gather.txt"), max_nodes=3)
    assert sum(n.role == "op" for n in graph.nodes) == 3 and graph.omitted > 0
    assert f"({graph.omitted} more instructions not drawn)" in graph_text(graph)


def test_no_graph_without_a_module() -> None:
    with pytest.raises(GraphError):
        build_graph(Report("f", "cpu"))
    with pytest.raises(GraphError):
        build_graph(Report("f", "cpu", hlo="HloModule broken\nENTRY {"))
    with pytest.raises(GraphError):
        build_graph(Report("f", "cpu", hlo="HloModule m", error=CompileError("RESOURCE_EXHAUSTED", "oom")))


def test_graph_text_lists_nodes_then_edges() -> None:
    text = graph_text(build_graph(report_of("gpu_h100__with_dot.txt")))
    lines = text.splitlines()
    assert lines[0] == "ENTRY main.2" and lines[1] == "  nodes"
    assert "    gemm_fusion_dot_general.1: Custom — dot + cosine  (line 6)" in lines
    assert "    hkl.1 -> gemm_fusion_dot_general.1: f32[50000,3] · 600 kB" in lines
    assert ("    gemm_fusion_dot_general.1 -> input_reduce_fusion: f32[50000,100000] · 20.0 GB  "
            "[materialized, large]") in lines
    assert "    input_reduce_fusion -> input_reduce_fusion.1: f32[50000,250] · 50.0 MB  [materialized]" in lines


def test_svg_escapes_names_from_the_compiler() -> None:
    evil = '<script>alert("x")</script>&\'"'
    sub = Subgraph("main<&>", f"ENTRY {evil}")
    sub.nodes = [
        GraphNode("main/p", evil, "main", "parameter", "parameter 0", tooltip=evil),
        GraphNode("main/q", "fusion.1", "main", "op", f"Loop — {evil}", tooltip=f"tip {evil}", source_lines=[2]),
        GraphNode("main/(result)", "result", "main", "result", "f32[]"),
    ]
    sub.edges = [GraphEdge("main/p", "main/q", None, f"f32[{evil}]", 4, materialized=True, heavy=True),
                 GraphEdge("main/q", "main/(result)", None, "f32[]", 4)]
    other = Subgraph("body", "body of <while>", [GraphNode("body/x", "x", "body", "parameter", "parameter 0")])
    svg = graph_svg(Graph([sub, other]), uid='u"<x>', line_prefix='ex"<L', lines_known=5, title=f"Graph {evil}")
    assert "<script" not in svg and "</script" not in svg and "&lt;script&gt;" in svg
    assert 'href="#ex&quot;&lt;L2"' in svg and 'id="u&quot;&lt;x&gt;-title"' in svg
    root = ET.fromstring(svg)  # still well-formed: every name came through as text
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    assert evil in texts and "ENTRY " + evil in texts and "body of <while>" in texts
    titles = [t.text for t in root.iter(f"{SVG}title")]
    assert f"Graph {evil}" in titles and f"tip {evil}" in titles
    assert any(t and t.startswith(f"{evil} → fusion.1: f32[{evil}]") for t in titles)


# -- the node builders -------------------------------------------------------------

def _render(show: list[str], key: str = "doc:1") -> list[nodes.Node]:
    report = report_of("gpu_h100__with_dot.txt")
    source = "\n".join(["import jax", "", "", "", "", "def f(pos, hkl):", "    return ..."])
    view = ExampleView(source=source, show=show, key=key)
    result = Result(function="f", target="gpu_h100", target_title="H100", report=report)
    return render_example(view, ["f"], [("gpu_h100", "H100")], [result])


def visit_lineref(node: jaxhlo_lineref) -> str:
    class Writer:
        def __init__(self) -> None:
            self.body: list[str] = []
    writer = Writer()
    with pytest.raises(nodes.SkipNode):
        visit_lineref_html(writer, node)  # type: ignore[arg-type]
    return "".join(writer.body)


def _all(found: list[nodes.Node], cls: type[nodes.Element]) -> list[Any]:
    box = nodes.container()
    box.extend(found)
    return list(box.findall(cls))


def test_rows_link_to_the_source_only_when_it_is_shown() -> None:
    shown = _render(["source", "summary", "graph"])
    (source,) = _all(shown, jaxhlo_source)
    prefix = source["prefix"]
    assert prefix.startswith("jaxhlo-") and prefix.endswith("-L")
    tables = _all(shown, jaxhlo_table)
    assert tables and all(t["prefix"] == prefix and t["count"] == 7 for t in tables)
    traced = [r for t in tables for r in t["table"].rows if r.lines]
    assert traced and all(r.lines == (6,) for r in traced)
    html = "".join(table_html(t["table"], t["prefix"], t["count"]) for t in tables)
    assert f'data-jaxhlo-src="{prefix}"' in html and 'tabindex="0" data-jaxhlo-lines="6"' in html
    assert f'<td class="jaxhlo-lines">line <a href="#{prefix}6">6</a></td>' in html
    (graph,) = _all(shown, jaxhlo_graph)
    assert f'href="#{prefix}6"' in graph["svg"]
    hidden = _render(["summary", "graph"])
    tables = _all(hidden, jaxhlo_table)
    assert tables and all(t["prefix"] == "" for t in tables)
    html = "".join(table_html(t["table"], t["prefix"], t["count"]) for t in tables)
    assert "data-jaxhlo-lines" not in html and "href" not in html and "<td>line 6</td>" in html
    (graph,) = _all(hidden, jaxhlo_graph)
    assert "href=" not in graph["svg"]
    assert not _all(_render(["source", "summary"]), jaxhlo_graph)
    # another example gets other ids
    (other,) = _all(_render(["source", "summary"], key="doc:40"), jaxhlo_source)
    assert other["prefix"] != prefix


def test_findings_link_the_lines_they_name_when_the_source_is_shown() -> None:
    shown = _render(["source", "summary"])
    (source,) = _all(shown, jaxhlo_source)
    refs = _all(shown, jaxhlo_lineref)
    assert refs and all(r["href"] == f"{source['prefix']}6" and r.astext() == "6" for r in refs)
    assert all(r["line"] == "def f(pos, hkl):" for r in refs)
    # the finding still reads as a sentence: "... on line 6 ..."
    callout = refs[0].parent
    assert "on line 6" in callout.astext()
    html = visit_lineref(refs[0])
    assert html == f'<a href="#{source["prefix"]}6">6</a>'
    hidden = _render(["summary"])
    assert not _all(hidden, jaxhlo_lineref)
    assert any("on line 6" in n.astext() for n in _all(hidden, nodes.paragraph))


def test_a_line_the_listing_lacks_is_not_linked() -> None:
    links = SourceLinks("ex-L", 3)
    out = linked_text("the reduction on lines 2, 9 reads it; line 3 too", links, "a\nb\nc\n")
    refs = [n for n in out if isinstance(n, jaxhlo_lineref)]
    assert [r["href"] for r in refs] == ["ex-L3"] and refs[0]["line"] == "c"
    assert "".join(n.astext() for n in out) == "the reduction on lines 2, 9 reads it; line 3 too"


def test_a_file_example_folds_the_functions_it_does_not_use() -> None:
    source = (Path(__file__).parents[1] / "docs" / "examples" / "seed.py").read_text()
    lines = source.split("\n")
    hidden = set(unused_lines(source, ["with_dot"]))
    shown = [i for i in range(1, len(lines) + 1) if i not in hidden]
    text = "\n".join(lines[i - 1] for i in shown)
    assert "def with_dot(" in text and "import jax.numpy as jnp" in text
    assert "def explicit(" not in text and "def with_outer(" not in text and "def with_dot_highest(" not in text
    # a function the compiled one calls stays
    helper = "def g(x):\n    return x\n\n\ndef f(x):\n    return g(x)\n\n\ndef h(x):\n    return x\n"
    assert unused_lines(helper, ["f"]) == [9, 10]
    assert unused_lines(helper, ["h"]) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert unused_lines(helper, ["(default function)"]) == [] and unused_lines("def (", ["f"]) == []
    html = _source_lines_html(helper, "python", "p-L", unused_lines(helper, ["f"]))
    assert "# lines 9-10: not used by this example" in html and 'id="p-L8"' in html and 'id="p-L9"' not in html


def test_graph_is_a_part_but_not_a_default() -> None:
    assert "graph" in SHOW_PARTS and "graph" not in DEFAULT_SHOW


# -- the directive, end to end -------------------------------------------------

def build(app: Any) -> tuple[BeautifulSoup, str]:
    app.build()
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    return BeautifulSoup(html, "html.parser"), app.warning.getvalue()


def first_fusion(block: Tag) -> str:
    """The HLO name of the largest fusion (its last column)."""
    return block.select("table.jaxhlo-fusions tbody tr")[0].find_all("td")[-1].get_text(strip=True)


@pytest.mark.sphinx("html", testroot="graph")
def test_rows_link_to_line_anchors_and_highlight_them(app: Any) -> None:
    soup, warnings = build(app)
    assert "jaxhlo" not in warnings, warnings
    blocks = soup.select("div.jaxhlo")
    assert len(blocks) == 3
    for block in blocks:
        source = block.select_one("div.jaxhlo-source")
        # Python highlighting and line numbers as Sphinx shows them, one anchor per line
        assert "highlight-python" in source["class"] and source.select("span.k, span.kn")
        spans = source.select("span.jaxhlo-line")
        prefix = source["data-jaxhlo-src"]
        assert [s["id"] for s in spans] == [f"{prefix}{i}" for i in range(1, len(spans) + 1)]
        assert [s.select_one("span.linenos").get_text(strip=True) for s in spans] == \
            [str(i) for i in range(1, len(spans) + 1)]
        assert "".join(s.get_text() for s in source.select("span.jaxhlo-line > :not(.linenos)")).strip()
        rows = block.select("table.jaxhlo-table tbody tr[data-jaxhlo-lines]")
        assert rows, "no row links to the source"
        for row in rows:
            assert row["tabindex"] == "0" and row.find_parent("table")["data-jaxhlo-src"] == prefix
            hrefs = [a["href"] for a in row.select("td.jaxhlo-lines a")]
            assert hrefs == [f"#{prefix}{n}" for n in row["data-jaxhlo-lines"].split()]
            for href in hrefs:  # every link lands on a line of this example's source
                assert source.select_one(f'[id="{href[1:]}"]') is not None
    # the seed's rows all point at line 4, where the whole computation is written
    seed = blocks[0]
    materialized = seed.select("table.jaxhlo-materialized tbody tr")
    assert materialized and all(r["data-jaxhlo-lines"] == "4" for r in materialized)
    assert materialized[0].select("td")[3].get_text(" ", strip=True) == "line 4"
    # the page loads the script and the styles that do the highlighting
    assert soup.select_one('script[src*="jaxhlo.js"]') is not None
    assert soup.select_one('link[href*="jaxhlo.css"]') is not None
    static = Path(app.outdir) / "_static"
    js = (static / "jaxhlo.js").read_text()
    assert "data-jaxhlo-lines" in js and "jaxhlo-hl" in js and "focusin" in js and "mouseenter" in js
    css = (static / "jaxhlo.css").read_text()
    assert ".jaxhlo-line.jaxhlo-hl" in css and ".jaxhlo-line:target" in css and "focus-within" in css


@pytest.mark.sphinx("html", testroot="graph")
def test_examples_on_one_page_do_not_share_ids(app: Any) -> None:
    soup, _ = build(app)
    ids = [el["id"] for el in soup.select("[id]")]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    prefixes = [s["data-jaxhlo-src"] for s in soup.select("div.jaxhlo-source")]
    assert len(prefixes) == len(set(prefixes)) == 3
    markers = [m["id"] for m in soup.select("svg marker")]
    assert len(markers) == len(set(markers)) == 4  # two graphs, two arrowheads each


@pytest.mark.sphinx("html", testroot="graph")
def test_seed_graph_in_the_page(app: Any) -> None:
    soup, _ = build(app)
    seed, loop, small = soup.select("div.jaxhlo")
    figure = seed.select_one("figure.jaxhlo-graph")
    assert figure is not None and "Graph of the entry computation" in figure.figcaption.get_text()
    svg = figure.select_one("svg.jaxhlo-graph-svg")
    names = [t.get_text() for t in svg.select("text.jaxhlo-graph-name")]
    fusion = first_fusion(seed)  # the dot fusion: named by the compiler
    assert {"pos.1", "hkl.1", fusion, "result"} <= set(names)
    titles = [p.title.get_text() for p in svg.select("path.jaxhlo-graph-edge")]
    assert any(t.startswith(f"pos.1 → {fusion}: f32[100000,3]") for t in titles), titles
    assert any(t.startswith(f"hkl.1 → {fusion}: f32[50000,3]") for t in titles), titles
    heavy = svg.select("path.jaxhlo-graph-edge.jaxhlo-graph-heavy")
    assert heavy and all("f32[50000,100000] · 20.0 GB (materialized)" in p.title.get_text() for p in heavy)
    assert heavy[0].title.get_text().startswith(f"{fusion} → ")
    # a box links to the line it came from
    box = svg.select_one("a.jaxhlo-graph-node")
    prefix = seed.select_one("div.jaxhlo-source")["data-jaxhlo-src"]
    assert box["href"] == f"#{prefix}4" and box["data-jaxhlo-lines"] == "4"
    # the text form, collapsed under the picture
    text = figure.select_one("details.jaxhlo-details")
    assert text is not None and not text.has_attr("open")
    assert "[materialized, large]" in text.get_text() and f"pos.1 -> {fusion}" in text.get_text()
    assert "Thick red" in figure.select_one("p.jaxhlo-graph-legend").get_text()
    # the loop's graph has its body; the default parts have no graph
    assert "body of while" in loop.select_one("figure.jaxhlo-graph svg").get_text()
    assert small.select_one("figure.jaxhlo-graph") is None and small.select("tr[data-jaxhlo-lines]")


@pytest.mark.sphinx("text", testroot="graph")
def test_text_builder_gets_plain_lines_and_the_graph_as_text(app: Any) -> None:
    app.build()
    text = (Path(app.outdir) / "index.txt").read_text(encoding="utf-8")
    assert "jaxhlo" not in app.warning.getvalue(), app.warning.getvalue()
    assert "Graph of the entry computation" in text
    assert re.search(r"^ +ENTRY main\.\d+$", text, re.M) and "  nodes" in text and "  edges" in text
    assert re.search(r"-> \S+: f32\[50000,100000\] · 20\.0 GB  \[materialized, large\]", text)
    assert re.search(r"pos\.1 -> \S+: f32\[100000,3\] · 1\.2 MB", text)
    assert "| line 4" in text and "-L4" not in text and "<svg" not in text and "href" not in text
    assert "Thick red" not in text  # the picture's legend is not the text's
    # a finding's line number comes with the line's code: there is no listing to jump to
    code = "return jnp.sum(jax.vmap(lambda p: jnp.cos(jnp.dot(hkl, p)))(pos), axis=0)"
    assert re.search(r"on\s+line\s+4\s+\(\"" + re.escape(code).replace(r"\ ", r"\s+") + r"\"\)", text), text


def test_the_stablehlo_block_says_which_text_it_is() -> None:
    from sphinx_jaxhlo.render.parts import stablehlo_detail, text_nodes

    sharded = 'func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@empty_mesh, [{}]>})'
    assert stablehlo_detail(sharded, "TPU v5e") == "lowered for TPU v5e, with its sdy sharding annotations; "
    assert stablehlo_detail("func.func public @main(%arg0: tensor<8xf32>)", "CPU") == "lowered for CPU; "
    (node,) = text_nodes("StableHLO", sharded + "\n}\n", "stablehlo", False, detail=stablehlo_detail(sharded, "H100"))
    assert node["title"] == "StableHLO (lowered for H100, with its sdy sharding annotations; 2 lines)"


# -- a chunking the report could not suggest ---------------------------------------------------------

#: A refusal as the search stores it, naming places as JAX does (the example's and another file's).
REFUSAL = ("No chunking to suggest: over axis 0 of pos (20000 long), the proof on the jaxpr refuses: `reshape` at "
           "example.py:6:11 (f) merges the chunked axis with another axis; the chunked rewrite would change the "
           "result, so it is refused; over axis 0 of hkl (10000 long), the proof on the jaxpr refuses: `scan` at "
           "/site-packages/jax/_src/lax/control_flow/loops.py:300:5 (scan) is an operation the checker does not "
           "know to treat the elements along the chunked axis independently; the chunked rewrite would change "
           "the result, so it is refused (3 other sets of arguments declined too).")


def _refused(show: list[str], display: Any = None, chunking: bool = False) -> str:
    from sphinx_jaxhlo.render.display import Display
    from sphinx_jaxhlo.render.text import report_text

    report = report_of("gpu_h100__with_dot.txt")
    report.chunk_suggestion = REFUSAL
    source = "\n".join(["import jax", "", "", "", "", "def f(pos, hkl):", "    return ..."])
    view = ExampleView(source=source, show=show, key="doc:1", display=display or Display(), chunking=chunking)
    result = Result(function="f", target="gpu_h100", target_title="H100", report=report)
    box = nodes.container()
    box.extend(render_example(view, ["f"], [("gpu_h100", "H100")], [result]))
    return " ".join((box.astext() + "\n" + report_text(report, show, view.display)).split())  # the page, the text


def test_a_chunking_refusal_is_said_only_where_asked_or_where_it_answers_a_memory_problem() -> None:
    from sphinx_jaxhlo.render.display import Display

    # memory findings alone: no problem named (no verdict on the reduction), so no word of chunking
    quiet = _refused(["source", "summary"], Display(findings=("memory",)))
    assert "chunk" not in quiet.lower()
    # the seed's 20 GB unfused reduction is a problem: why no chunking answers it, as a memory finding
    said = _refused(["source", "summary"])
    # nobody asked for a chunking: the first set of arguments tried, briefly, and how many others
    assert said.count("No chunking to suggest: over axis 0 of pos (20000 long), reshape on line 6 merges the "
                      "axis with another, so combining chunks would change the result (nor over 4 more).") == 2
    for words in ("example.py", "loops.py", "proof on the jaxpr", "`", "is refused", "over axis 0 of hkl"):
        assert words not in said, words  # no file the page lacks, no compiler's words, one set of arguments
    # :chunk: asked: said above the parts, once, even where no problem is named, every set given
    asked = _refused(["source", "summary"], Display(findings=("memory",)), chunking=True)
    assert asked.count("No chunking to suggest: over axis 0 of pos") == 1
    assert "; over axis 0 of hkl (10000 long), scan is not one the proof can follow, so combining chunks would " \
           "change the result (nor over 3 more)." in asked


def test_a_refusal_names_the_listings_line_linked() -> None:
    from sphinx_jaxhlo.render.parts import result_nodes

    report = report_of("gpu_h100__with_dot.txt")
    report.chunk_suggestion = REFUSAL
    source = "\n".join(["import jax", "", "", "", "", "def f(pos, hkl):", "    return ..."])
    view = ExampleView(source=source, show=["source", "summary"], key="doc:1", chunking=True)
    found = result_nodes(view, Result(function="f", target="gpu_h100", target_title="H100", report=report),
                         ["summary"])
    (refusal,) = [n for n in found if "jaxhlo-chunk-refusal" in n.get("classes", [])]
    (ref,) = list(refusal.findall(jaxhlo_lineref))
    assert ref["href"].endswith("-L6") and ref.astext() == "6"


def test_a_chunkings_code_is_shown_once_per_example_and_named_in_the_other_panels() -> None:
    """A chunking is one code for every target: the first panel that suggests it shows it, a later
    one with the same code says where it is (each keeps its own words and figures); other code is shown."""
    import dataclasses

    from docutils import nodes as dn

    from sphinx_jaxhlo.render.parts import result_nodes

    code = "sphinx_jaxhlo.chunked(f, argnums=0, size=250)\ndef f_chunked(pos, hkl):\n    return pos"
    report = report_of("gpu_h100__with_dot.txt")
    view = ExampleView(source="def f(pos, hkl):\n    return pos\n", show=["summary"], key="doc:1")
    shown: dict[str, str] = {}
    panels = []
    for target, title, words in (("cpu", "CPU", "needs 1 GB"), ("gpu_h100", "H100", "needs 2 GB")):
        one = dataclasses.replace(report, chunk_suggestion=f"Chunking would bound it: {words}.\n{code}")
        panels.append(result_nodes(view, Result(function="f", target=target, target_title=title, report=one),
                                   ["summary"], shown=shown))
    blocks = [[n.astext() for n in found if isinstance(n, dn.literal_block) and "f_chunked" in n.astext()]
              for found in panels]
    assert blocks == [[code.replace("\n", "\n\n", 1)], []]
    second = " ".join(n.astext() for n in panels[1])
    assert "needs 2 GB" in second and "Its code is the one suggested for f on CPU." in second
    other = dataclasses.replace(report, chunk_suggestion="Chunking would bound it: x.\n" + code.replace("250", "500"))
    found = result_nodes(view, Result(function="f", target="tpu_v5e", target_title="TPU v5e", report=other),
                         ["summary"], shown=shown)
    assert any(isinstance(n, dn.literal_block) and "size=500" in n.astext() for n in found)


def test_one_name_for_what_a_target_holds_in_every_table_and_the_text() -> None:
    """The figure a reader acts on is named as its target's memory, ``HBM held`` on a TPU, in the
    side-by-side table, the memory table (whose first label is short: its sum is in the note,
    so the table reads at 420 px), the variants table and the text output."""
    import dataclasses

    from sphinx_jaxhlo.core.memory import Memory
    from sphinx_jaxhlo.render import rows
    from sphinx_jaxhlo.render.display import Display
    from sphinx_jaxhlo.render.overview import comparison_table, variants_table
    from sphinx_jaxhlo.render.text import report_text

    memory = Memory(argument_bytes=100, output_bytes=10, alias_bytes=0, temp_bytes=0, generated_code_bytes=5,
                    peak_bytes=300)
    memory.settle("tpu:v5e")
    report = dataclasses.replace(report_of("gpu_h100__with_dot.txt"), target="tpu:v5e", memory=memory)
    result = Result(function="f", target="tpu:v5e", target_title="TPU v5e", report=report)
    assert comparison_table([result], Display()).rows[0].cells[0].text == "HBM held"
    table = rows.memory_table(report)
    assert table.rows[0].cells[0].text == "HBM held" and max(len(r.cells[0].text) for r in table.rows) <= 24
    assert table.note.startswith("HBM held: arguments + output + temp + generated code")
    cell = variants_table(["f"], [("tpu:v5e", "TPU v5e")], {("f", "tpu:v5e"): result}, Display()).rows[0].cells[1]
    assert cell.text.startswith("HBM held ")
    text = report_text(report, ["memory"])
    assert "HBM held" in text and "device memory" not in text
