"""The row model every output is written from (:mod:`sphinx_jaxhlo.render.rows`), on stored
real modules: what the default view leaves out, when a finding is a problem, the chart's
scale, the compiled signature, and that the page and the text show the same rows."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from docutils import nodes

from sphinx_jaxhlo.core.report import Fusion, Materialized, Memory, Report, TargetFailure
from sphinx_jaxhlo.core.results import Result, result_of_failure
from sphinx_jaxhlo.core.specs import parse_args
from sphinx_jaxhlo.core.view_options import parse_chart_scale, parse_factor, parse_min_size, parse_rows
from sphinx_jaxhlo.hlo.fusion import analyze_module
from sphinx_jaxhlo.render import rows
from sphinx_jaxhlo.render.chart import bar_text, chart_scale
from sphinx_jaxhlo.render.display import Display, display_for
from sphinx_jaxhlo.render.example import render_example
from sphinx_jaxhlo.render.findings import findings, mesh_findings
from sphinx_jaxhlo.render.nodes import jaxhlo_details, jaxhlo_source, jaxhlo_table, jaxhlo_text, table_html
from sphinx_jaxhlo.render.overview import (
    comparison_table,
    has_problem,
    reduction_verdict,
    variants_table,
)
from sphinx_jaxhlo.render.signature import default_function, signature
from sphinx_jaxhlo.render.text import model_text, render_text
from sphinx_jaxhlo.render.view import ExampleView

DATA = Path(__file__).parent / "data" / "hlo"


def stored(name: str, argument_bytes: int = 1_800_000, output_bytes: int = 200_000) -> Report:
    path = DATA / name
    if not path.exists():
        pytest.skip(f"fixture tests/data/hlo/{name} is absent")
    text = path.read_text()
    analysis = analyze_module(text)
    return Report(function="f", target=name.split("__")[0].replace("_", ":", 1), hlo=text,
                  fusions=analysis.fusions, materialized=analysis.materialized, reductions=analysis.reductions,
                  memory=Memory(argument_bytes=argument_bytes, output_bytes=output_bytes, temp_bytes=20_050_000_000))


# -- problems ------------------------------------------------------------------------------------------

def test_the_seeds_20_gb_intermediate_is_a_problem_in_words_that_name_the_op_and_line() -> None:
    report = stored("gpu_h100__with_dot.txt")
    (problem, *rest) = findings(report, Display())
    assert problem.level == "problem" and problem.title == "Unfused reduction"
    assert problem.text.startswith("the f32[50000,100000] result of cos of dot_general on line 6 "
                                   "(20.0 GB; HLO gemm_fusion_dot_general.1) is stored in memory before the "
                                   "reduction on line 6 (reduce_sum) reads it.")
    assert "That is 10,000× the 2.0 MB the arguments and outputs take." in problem.text
    assert all(f.level != "problem" for f in rest)
    assert has_problem(report, Display())


def test_an_example_about_memory_reports_no_reduction_callouts() -> None:
    report = stored("gpu_h100__with_dot.txt")
    every = findings(report, Display())
    assert {f.title for f in every} >= {"Unfused reduction"}
    memory = findings(report, Display(findings=("memory",)))
    # the stored product is still named, as the largest intermediate, with its line
    assert [f.text for f in memory] == ["Largest intermediate: the f32[50000,100000] result of cos of dot_general on "
                                        "line 6 (20.0 GB; HLO gemm_fusion_dot_general.1)."]
    assert not any("reduction" in f.text.lower() for f in memory)
    reductions = findings(report, Display(findings=("reductions",)))
    assert reductions and all(f.title == "Unfused reduction" or "reduction" in f.text for f in reductions)
    assert not any(f.text.startswith("Largest intermediate") for f in reductions)
    assert findings(report, Display(findings=())) == []
    # the key of the rendering changes with the kinds
    assert Display(findings=("memory",)).key() != Display().key()
    # a program on several devices: the communication is a kind of its own; the device count stays
    mesh = Report("f", "gpu:h100x8", devices=8, collectives=[])
    assert [f.title for f in mesh_findings(mesh, Display())] == ["", "No communication"]
    assert [f.title for f in mesh_findings(mesh, Display(findings=("memory",)))] == [""]
    cfg = type("Config", (), {"jaxhlo_findings": "memory, communication"})()
    assert display_for(cfg).findings == ("memory", "communication")
    assert display_for(cfg, {"findings": ("reductions",)}).findings == ("reductions",)


def test_the_same_finding_is_neutral_below_either_threshold() -> None:
    # arguments and outputs larger than the intermediate
    big_io = stored("gpu_h100__with_dot.txt", argument_bytes=30_000_000_000)
    (finding, *_) = findings(big_io, Display())
    assert finding.level == "info" and finding.title == "Unfused reduction"
    assert finding.text.endswith("It is smaller than the arguments and outputs together (30.0 GB): "
                                 "not a problem here.")
    assert not has_problem(big_io, Display())
    # a minimum size above it
    report = stored("gpu_h100__with_dot.txt")
    (finding, *_) = findings(report, Display(problem_min_bytes=parse_min_size("25GB")))
    assert finding.level == "info" and finding.text.endswith("It is under 25.0 GB: not a problem here.")
    # the factor alone: 0 leaves the size to decide, a large one raises the bar
    assert has_problem(big_io, Display(problem_io_factor=0))
    assert not has_problem(report, Display(problem_io_factor=20_000))


def test_fused_reductions_are_good_news_and_no_reduction_is_no_row() -> None:
    report = stored("tpu_v5e__with_dot.txt")
    found = findings(report, Display())
    assert found[0].level == "good" and found[0].text.startswith("the reduction on line 6 (reduce_sum) computes")
    compare = comparison_table([Result("f", "tpu:v5e", "TPU v5e", report=report)], Display())
    assert [r.cells[0].text for r in compare.rows] == ["HBM held", "temp memory", "largest intermediate",
                                                       "reductions", "kernels"]
    without = dataclasses.replace(report, reductions=[])
    compare = comparison_table([Result("f", "tpu:v5e", "TPU v5e", report=without)], Display())
    assert "reductions" not in [r.cells[0].text for r in compare.rows]
    assert all("no reduction" not in c.text for r in compare.rows for c in r.cells)


def test_verdict_words() -> None:
    seed = stored("gpu_h100__with_dot.txt")
    assert reduction_verdict(seed) == "unfused"  # the split reduction's second stage gets no verdict
    two = dataclasses.replace(seed, reductions=[*seed.verdict_reductions] * 2)
    assert reduction_verdict(two) == "both unfused"
    three = dataclasses.replace(seed, reductions=[*seed.verdict_reductions] * 3)
    assert reduction_verdict(three) == "all 3 unfused"


# -- the default view ------------------------------------------------------------------------------------

def _fusion(name: str, shape: str, size: int, kind: str = "Loop") -> Fusion:
    return Fusion(name=name, kind=kind, custom_kind=None, ops=["add"], shape=shape, bytes=size, source_lines=[3])


def test_tables_list_the_largest_rows_and_count_the_rest() -> None:
    fusions = [_fusion(f"fusion.{i}", f"f32[{i + 1},1000]", (i + 1) * 4000) for i in range(20)]
    fusions += [_fusion("add.7", "s32[]", 4), _fusion("compare.2", "pred[]", 1),
                _fusion("while.3", "(s32[], f32[64,1000])", 256_004, kind="while")]
    report = Report("f", "cpu", fusions=fusions)
    table = rows.fusion_table(report, Display(rows=5))
    assert [r.cells[-1].text for r in table.rows] == [f"fusion.{i}" for i in (19, 18, 17, 16, 15)]
    assert table.total == 23 and table.more == 18
    assert table.more_text == "18 more, 23 in total (smaller ones, scalars, loop and branch instructions)."
    assert table.summary == "Fusions (5 of 23)"
    # every row, loop counters and the loop included, when asked
    every = rows.fusion_table(report, Display(rows=None))
    assert len(every.rows) == 23 and every.more_text == ""
    assert [r.cells[-1].text for r in every.rows][:2] == ["while.3", "fusion.19"]
    # a program of nothing but a float scalar still shows its kernel
    loss = Report("f", "cpu", fusions=[_fusion("reduce.1", "f32[]", 4)])
    assert [r.cells[-1].text for r in rows.fusion_table(loss, Display()).rows] == ["reduce.1"]


def _buffer(name: str, shape: str, size: int, kind: str = "intermediate") -> Materialized:
    buffer = Materialized(name=name, shape=shape, bytes=size, producer=name, consumers=["fusion.9"],
                          producer_op="cos")
    object.__setattr__(buffer, "kind", kind)  # how the analysis marks what only holds argument data
    return buffer


def test_copies_of_arguments_stay_out_of_the_default_view() -> None:
    computed = _buffer("fusion.1", "f32[1000,1000]", 4_000_000)
    copy = _buffer("copy-done", "f32[4000,1000]", 16_000_000, kind="argument-copy")
    assert rows.is_intermediate(computed) and not rows.is_intermediate(copy)
    # whether the analysis lists the copies among the buffers or apart from them
    among = Report("f", "tpu:v5e", materialized=[copy, computed])
    apart = Report("f", "tpu:v5e", materialized=[computed])
    object.__setattr__(apart, "argument_copies", [copy])
    for report in (among, apart):
        table = rows.buffer_table(report, Display())
        assert [r.cells[-1].text for r in table.rows] == ["fusion.1"]
        assert table.total == 2
        assert table.more_text == "1 more, 2 in total (smaller ones, scalars, copies of arguments)."
        assert rows.largest_intermediate(report) is computed
        every = rows.buffer_table(report, Display(rows=None))
        made = every.header.index("made by")
        assert [r.cells[made].text for r in every.rows] == ["a copy of argument data (cos)", "cos"]
        # a TPU's buffers say where they live
        assert [r.cells[every.header.index("in")].text for r in every.rows] == ["HBM", "HBM"]
    # with nothing computed stored, the copies are what the table shows (never a table of no rows)
    only = Report("f", "tpu:v5e", materialized=[copy])
    table = rows.buffer_table(only, Display())
    made = table.header.index("made by")
    assert [r.cells[made].text for r in table.rows] == ["a copy of argument data (cos)"] and not table.more
    assert rows.largest_intermediate(only) is None


def test_host_buffers_stay_out_of_the_default_view() -> None:
    computed = _buffer("fusion.1", "f32[1000,1000]", 4_000_000)
    offloaded = _buffer("copy-done.2", "f32[2048,1024]", 8_388_608, kind="host")
    report = Report("f", "gpu:h100", materialized=[computed], host_buffers=[offloaded])
    assert not rows.is_intermediate(offloaded)
    table = rows.buffer_table(report, Display())
    assert [r.cells[-1].text for r in table.rows] == ["fusion.1"]
    assert table.more_text == "1 more, 2 in total (smaller ones, scalars, copies of arguments, host memory)."
    assert rows.largest_intermediate(report) is computed
    every = rows.buffer_table(report, Display(rows=None))
    assert [r.cells[2].text for r in every.rows] == ["in host memory (cos)", "cos"]


# -- the chart --------------------------------------------------------------------------------------------

def test_chart_scale_and_labels() -> None:
    assert chart_scale([1.1e9, 6.04e8, 2.69e8]) == "linear"
    assert chart_scale([5.04e7, 2.0e10]) == "log"
    assert chart_scale([0.0, 3e6, 2.9e8]) == "linear"  # a zero draws no bar on either scale
    assert chart_scale([5.04e7, 2.0e10], "linear") == "linear"
    assert chart_scale([1e9, 2e9], "log") == "log"
    assert bar_text(1.1e9, 2.69e8) == "1.1 GB (4.1×)"
    assert bar_text(2.0e10, 5.04e7) == "20.0 GB (397×)"
    assert bar_text(0, 5.04e7) == "0 B"


# -- the signature ----------------------------------------------------------------------------------------

def test_signature_names_arguments_from_the_source() -> None:
    source = "import jax\n\ndef power_sum(x, n, *, scale=1.0):\n    return x\n"
    assert signature("power_sum", ["f32[1024,256]"], [("scale", "f32[]")], [("n", "7")], source) == \
        "power_sum(x: f32[1024,256], n=7, scale: f32[])"
    # no top-level def (a lambda bound to a name, a file that does not parse): specs as written
    assert signature("g", ["f32[3]"], [], [("k", "2")], "g = lambda x, k: x\n") == "g(f32[3], k=2)"
    assert signature("g", ["f32[3]"], [], [], "def g(x:\n") == "g(f32[3])"
    assert default_function("def a(x): pass\n\ndef b(y): pass\n") == "b"


# -- one model, every output ------------------------------------------------------------------------------

def test_the_page_and_the_text_show_the_same_rows() -> None:
    report = stored("gpu_h100__scan_chunks.txt")
    for build in (rows.fusion_table, rows.buffer_table, rows.reduction_table):
        model = build(report, Display(rows=4))
        assert model.rows
        html = table_html(model)
        text = model_text(model)
        cells_html = re.findall(r"<td[^>]*>(.*?)</td>", html)
        assert [re.sub(r"<[^>]+>", "", c) for c in cells_html] == \
            [c.text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") for r in model.rows
             for c in r.cells]
        lines = text.splitlines()
        for row in model.rows:
            pattern = r"\s+".join(re.escape(c.text) for c in row.cells if c.text)
            assert any(re.fullmatch(rf"\s*{pattern}\s*", ln) for ln in lines), (pattern, text)
        if model.more:
            assert model.more_text in html and model.more_text.split(" (")[0] in text
    whole = render_text([report], [TargetFailure("tpu:v5e", "f", "timeout", "took too long")],
                        show=["summary"], order=["gpu:h100", "tpu:v5e"])
    temp = next(ln for ln in whole.splitlines() if ln.startswith("temp memory"))
    assert temp.split()[-3:] == ["no", "report", "(timeout)"]
    assert "== tpu:v5e: no report (timeout) ==\n  took too long" in whole
    compare = comparison_table([Result("f", "gpu:h100", "gpu:h100", report=report),
                                     result_of_failure(TargetFailure("tpu:v5e", "f", "timeout", "slow"))],
                                    Display())
    assert compare.rows[0].cells[2].text == "no report (timeout)"


def test_parts_render_in_the_order_of_show() -> None:
    report = stored("cpu__with_dot.txt")
    source = "import jax\n\n\n\n\ndef f(pos, hkl):\n    return ...\n"

    def order(show: list[str]) -> list[str]:
        view = ExampleView(source=source, show=show, key="doc:1", specs=parse_args("f32[100000,3], f32[50000,3]"))
        out = render_example(view, ["f"], [("cpu", "CPU")], [Result("f", "cpu", "CPU", report=report)])
        names = []
        for node in nodes.container("", *out).findall(lambda n: isinstance(n, (jaxhlo_source, jaxhlo_text,
                                                                                   jaxhlo_details, jaxhlo_table))):
            if isinstance(node, jaxhlo_source):
                names.append("source")
            elif isinstance(node, (jaxhlo_text, jaxhlo_details)):
                names.append(node["title"].split(" (")[0])
            elif node["table"].key == "compare":
                names.append("Summary")
            elif node.get("summary"):  # a collapsed table: titled by its block
                names.append(node["summary"].split(" (")[0])
        return names

    assert order(["hlo", "memory", "source"]) == ["Optimized HLO", "Memory", "source"]
    assert order(["source", "memory", "hlo"]) == ["source", "Memory", "Optimized HLO"]
    assert order(["summary", "source"])[:2] == ["Summary", "Fusions"] and order(["summary", "source"])[-1] == "source"


def test_view_options_parse_and_reject() -> None:
    assert parse_rows("all") is None and parse_rows(" 12 ") == 12 and parse_rows(None) is None
    assert parse_min_size("1MiB") == 2**20 and parse_min_size(500) == 500
    assert parse_factor("0.5") == 0.5 and parse_chart_scale("LOG") == "log"
    for parse, bad in ((parse_rows, "0"), (parse_rows, "many"), (parse_min_size, "big"), (parse_factor, "-1"),
                       (parse_factor, "nan"), (parse_chart_scale, "cubic")):
        with pytest.raises(ValueError):
            parse(bad)
    config = type("Config", (), {"jaxhlo_table_rows": "all", "jaxhlo_problem_min_size": "64MiB",
                                 "jaxhlo_problem_io_factor": 2, "jaxhlo_chart_scale": "log"})()
    # a page's findings are the setting's default (every kind but peak); the API's Display shows all
    assert display_for(config) == Display(rows=None, problem_min_bytes=2**26, problem_io_factor=2.0,
                                               chart_scale="log", findings=("memory", "reductions", "communication"))
    assert display_for(config, {"rows": 3}).rows == 3


def test_a_table_whose_rows_are_all_left_out_prints_its_note() -> None:
    """On a TPU, a program whose only stored buffer is a prefetched copy of its
    argument: the buffers table has no row to show, only what it leaves out."""
    from sphinx_jaxhlo.api.functions import Reports, analyze_hlo
    from sphinx_jaxhlo.render.text import text_table

    assert text_table(["a", "bb"], []) == "a  bb\n-  --"
    module = """HloModule jit_f, is_scheduled=true
ENTRY %e (x: f32[4096,1024]) -> f32[] {
  %x = f32[4096,1024]{1,0} parameter(0)
  %cs = (f32[4096,1024]{1,0:S(1)}, f32[4096,1024]{1,0}, u32[]) copy-start(%x)
  %cd = f32[4096,1024]{1,0:S(1)} copy-done(%cs)
  %c = f32[] constant(-inf)
  ROOT %r = f32[] reduce(%cd, %c), dimensions={0,1}, to_apply=%max, metadata={op_name="jit(f)/reduce_max"}
}
%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}
"""
    (report,) = analyze_hlo(module, target="tpu:v5e")
    assert report.materialized == [] and [m.name for m in report.argument_copies] == ["cd"]
    text = str(Reports([report], show=["summary"]))
    assert "Unfused" not in text


def _memory(target: str, temp: int, peak: int, io: int = 1_000_000, code: int = 0) -> Memory:
    memory = Memory(argument_bytes=io, output_bytes=0, alias_bytes=0, temp_bytes=temp, generated_code_bytes=code,
                    peak_bytes=peak)
    memory.settle(target)
    return memory


def test_the_side_by_side_leads_with_what_says_whether_it_fits() -> None:
    """What the device holds first, against the device's memory; a TPU's XLA peak (which
    counts on-chip buffers) is not it."""
    tpu = dataclasses.replace(stored("tpu_v5e__with_dot.txt"), target="tpu:v5e",
                              memory=_memory("tpu:v5e", 0, 8_000_000, io=3_000_000, code=1_000_000))
    gpu = dataclasses.replace(stored("gpu_h100__with_dot.txt"), target="gpu:h100",
                              memory=_memory("gpu:h100", 20_050_000_000, 20_052_000_000, io=2_000_000))
    compare = comparison_table([Result("f", "gpu:h100", "H100", report=gpu),
                                     Result("f", "tpu:v5e", "TPU v5e", report=tpu)], Display())
    held, temp = compare.rows[0], compare.rows[1]
    # one name per target, as in the memory table and the variants table
    assert [c.text for c in held.cells] == ["memory held", "device memory held: 20.1 GB of 80 GiB",
                                            "HBM held: 4.0 MB of 16 GiB"]
    assert [c.text for c in temp.cells] == ["temp memory", "20.1 GB", "0 B"]
    variants = variants_table(["f"], [("gpu:h100", "H100"), ("tpu:v5e", "TPU v5e")],
                                   {("f", "gpu:h100"): Result("f", "gpu:h100", "H100", report=gpu),
                                    ("f", "tpu:v5e"): Result("f", "tpu:v5e", "TPU v5e", report=tpu)}, Display())
    assert variants.rows[0].cells[1].text.startswith("20.1 GB")
    assert variants.rows[0].cells[2].text.startswith("HBM held 4.0 MB")
    # a TPU variant whose temp is not 0 shows what it holds too: a column of one measure compares row by row
    tpu_temp = dataclasses.replace(tpu, memory=_memory("tpu:v5e", 5_000_000, 3_000_000, io=3_000_000))
    mixed = variants_table(["f", "g"], [("tpu:v5e", "TPU v5e")],
                                {("f", "tpu:v5e"): Result("f", "tpu:v5e", "TPU v5e", report=tpu),
                                 ("g", "tpu:v5e"): Result("g", "tpu:v5e", "TPU v5e", report=tpu_temp)}, Display())
    assert [r.cells[1].text.split(",")[0] for r in mixed.rows] == ["HBM held 4.0 MB", "HBM held 8.0 MB"]


@pytest.mark.parametrize(("target", "kind"), [("gpu:h100", "gemm"), ("cpu", "elementwise")])
def test_the_seeds_unfused_finding_says_why(target: str, kind: str) -> None:
    from pathlib import Path

    from sphinx_jaxhlo.hlo.fusion import analyze_module
    from sphinx_jaxhlo.render.display import Display
    from sphinx_jaxhlo.render.findings import findings

    text = (Path(__file__).parent / "data" / "hlo" / f"{target.replace(':', '_')}__with_dot.txt").read_text()
    analysis = analyze_module(text, "example.py", target=target)
    report = Report("f", target, hlo=text, fusions=analysis.fusions, materialized=analysis.materialized,
                    reductions=analysis.reductions)
    (problem,) = [f for f in findings(report, Display()) if f.title == "Unfused reduction"]
    assert problem.level == "problem"
    assert problem.reason is not None and problem.reason.producer_kind == kind
    assert problem.reason.alternatives
    # the other findings carry none
    assert all(f.reason is None for f in findings(report, Display()) if f is not problem and f != problem)


def test_each_bar_of_the_chart_is_its_table_cell() -> None:
    """The chart draws, for each target, the measure its variants table shows (a TPU's
    peak, its temp being 0 B; temp elsewhere), each measure in a panel of its own, and
    each ratio to the smallest bar of the same target."""
    from test_site import chart_mismatches

    from sphinx_jaxhlo.render.standalone_html import nodes_to_html

    figures = {("a", "cpu"): (20_000_000_000, 20_002_000_000), ("b", "cpu"): (200_000_000, 202_000_000),
               ("a", "gpu:h100"): (50_400_000, 52_000_000), ("b", "gpu:h100"): (20_050_000_000, 20_052_000_000),
               ("a", "tpu:v5e"): (0, 68_000_000), ("b", "tpu:v5e"): (0, 4_400_000)}
    targets = [("cpu", "CPU"), ("gpu:h100", "H100"), ("tpu:v5e", "TPU v5e")]
    results = [Result(function=fn, target=t, target_title=dict(targets)[t],
                      report=Report(fn, t, memory=Memory(temp_bytes=temp, peak_bytes=peak, device_bytes=peak)))
               for (fn, t), (temp, peak) in figures.items()]
    view = ExampleView(source="def a(x):\n    return x\n\n\ndef b(x):\n    return x\n", show=["summary"])
    html = nodes_to_html(render_example(view, ["a", "b"], targets, results))
    checked, wrong = chart_mismatches(html)
    assert checked == 6 and not wrong, wrong
    assert "Memory by variant, one panel per measure" in html
    assert "Temp memory on CPU and H100" in html and "HBM held on TPU v5e" in html
    # the TPU's ratio is to the TPU's smallest HBM figure, not to the smallest bar of the chart
    assert "68.0 MB (15×)" in html and "20.0 GB (100×)" in html and "20.1 GB (398×)" in html
    # one measure: one panel, titled with it
    cpu = [r for r in results if r.target == "cpu"]
    html = nodes_to_html(render_example(view, ["a", "b"], targets[:1], cpu))
    assert "Temp memory by variant<" in html and html.count("jaxhlo-bars-panel") == 1
    assert chart_mismatches(html) == (2, [])
    tpu = [r for r in results if r.target == "tpu:v5e"]
    html = nodes_to_html(render_example(view, ["a", "b"], targets[2:], tpu))
    assert "HBM held by variant<" in html and chart_mismatches(html) == (2, [])
    # the checker sees a chart that draws temp where the table shows HBM, and a wrong ratio
    assert chart_mismatches(html.replace('data-measure="device"', 'data-measure="temp"'))[1]
    assert chart_mismatches(html.replace("68.0 MB (15×)", "68.0 MB (12×)"))[1]


def test_a_detail_table_is_one_node_collapsed_in_html_and_a_titled_section_elsewhere() -> None:
    from sphinx_jaxhlo.render.blocks import collapsed_table
    from sphinx_jaxhlo.render.nodes import visit_table_html

    model = rows.Table("fusions", "Fusions <&>", ("Fusion", "Ops"),
                       (rows.Row((rows.Cell("fusion.1", code=True), rows.Cell("<b>dot</b>"))),), total=3)
    node = collapsed_table(model, None)
    assert isinstance(node, jaxhlo_table) and not node.children  # no jaxhlo_details around it
    translator = type("Translator", (), {"body": []})()
    with pytest.raises(nodes.SkipNode):
        visit_table_html(translator, node)  # type: ignore[arg-type]
    page = "".join(translator.body)
    assert page == ('<details class="jaxhlo-details"><summary>Fusions &lt;&amp;&gt; (1 of 3)</summary>\n'
                    + table_html(model, titled=False) + "</details>\n")
    assert "<b>" not in page and page.count("<details") == page.count("</details>") == 1
    # a builder without HTML: the title over the plain table, as a collapsed block's was
    from docutils.utils import new_document

    from sphinx_jaxhlo.sphinxext.fallback import PlainFallback

    class Fallback(PlainFallback):  # what a LaTeX build's transform sees, without the build
        app = type("App", (), {"builder": type("Builder", (), {"format": "latex"})()})()
        env = None

    document = new_document("page")
    document += node
    fallback = object.__new__(Fallback)
    fallback.document = document
    fallback.run()
    (section,) = document.children
    assert isinstance(section, nodes.container) and section["classes"] == ["jaxhlo-section", "jaxhlo-fusions-box"]
    assert section[0].astext() == "Fusions <&> (1 of 3)" and isinstance(section[1], nodes.Element)
    assert "fusion.1" in section[1].astext() and not list(document.findall(jaxhlo_table))
