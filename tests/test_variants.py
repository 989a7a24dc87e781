"""An example with several functions, as its reader is shown it: what differs between the
variants first (:mod:`sphinx_jaxhlo.render.differences`), then the variants table and the
chart, one measure per axis (:mod:`sphinx_jaxhlo.render.chart`); and an example about
memory (``:findings: memory``) without a verdict on its reductions anywhere."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from sphinx_jaxhlo.core.report import CompileError, Materialized, Memory, Report
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.hlo.fusion import analyze_module
from sphinx_jaxhlo.render.chart import variants_chart
from sphinx_jaxhlo.render.differences import differences, differences_table, variant_finding
from sphinx_jaxhlo.render.display import Display
from sphinx_jaxhlo.render.example import render_example
from sphinx_jaxhlo.render.findings import findings
from sphinx_jaxhlo.render.standalone_html import nodes_to_html
from sphinx_jaxhlo.render.text import render_text
from sphinx_jaxhlo.render.view import ExampleView

DOCS = Path(__file__).parent.parent / "docs"
MB = 1_000_000


def buf(name: str, shape: str, size: int, op: str, lines: tuple[int, ...] = ()) -> Materialized:
    return Materialized(name=name, shape=shape, bytes=size, producer=name, consumers=[], producer_op=op,
                        source_lines=list(lines))


def stacks(n: int, name: str) -> list[Materialized]:
    """``n`` residual stacks of a scan, 33.6 MB each, as a loop over 16 layers writes them."""
    return [buf(f"{name}{i}", "f32[16,512,1024]", 33_554_432, "while", (11,)) for i in range(n)]


#: Every variant keeps the weights' gradient accumulator, the largest buffer of each.
ACCUMULATOR = buf("acc", "f32[16,1024,1024]", 67_108_864, "broadcast_in_dim", (11,))


def remat_results() -> tuple[list[str], list[tuple[str, str]], dict[tuple[str, str], Result]]:
    """The checkpointing comparison of issue 30: two stacks become one; the TPU shows the HBM
    it holds (306 MB, 136 MB of them arguments and outputs), the CPU and the H100 temp."""
    functions = ["grad_scan", "grad_scan_checkpointed"]
    targets = [("cpu", "CPU"), ("gpu:h100", "H100"), ("tpu:v5e", "TPU v5e")]
    figures = {("grad_scan", "cpu"): (88 * MB, 0), ("grad_scan_checkpointed", "cpu"): (44 * MB, 0),
               ("grad_scan", "gpu:h100"): (80 * MB, 0), ("grad_scan_checkpointed", "gpu:h100"): (48 * MB, 0),
               ("grad_scan", "tpu:v5e"): (0, 306 * MB), ("grad_scan_checkpointed", "tpu:v5e"): (0, 270 * MB)}
    results = {}
    for (fn, target), (temp, peak) in figures.items():
        held = [ACCUMULATOR, *stacks(2 if fn == "grad_scan" else 1, "stack")]
        memory = Memory(temp_bytes=temp, peak_bytes=peak or None, argument_bytes=68 * MB, output_bytes=68 * MB,
                        device_bytes=peak or None)
        results[(fn, target)] = Result(fn, target, dict(targets)[target],
                                       report=Report(fn, target, memory=memory, materialized=held))
    return functions, targets, results


# -- the chart: one measure per axis ------------------------------------------------------------------

def test_temp_and_peak_are_drawn_on_axes_of_their_own() -> None:
    functions, targets, results = remat_results()
    chart = variants_chart(functions, targets, results, Display())
    assert chart is not None and chart.title == "Memory by variant, one panel per measure"
    temp, peak = chart.panels
    assert (temp.measure, temp.title, [g.title for g in temp.groups]) == ("temp", "Temp memory on CPU and H100",
                                                                          ["CPU", "H100"])
    assert (peak.measure, peak.title, [g.title for g in peak.groups]) == ("device", "HBM held on TPU v5e",
                                                                          ["TPU v5e"])
    # each ratio is to the smallest bar of its own target, and the caption says so
    assert [b.text for g in temp.groups for b in g.bars] == ["88.0 MB (2.0×)", "44.0 MB (1.0×)",
                                                             "80.0 MB (1.7×)", "48.0 MB (1.0×)"]
    assert [b.text for b in peak.groups[0].bars] == ["306 MB (1.1×)", "270 MB (1.0×)"]
    assert "how many times the smallest on its target" in temp.note
    # a peak's arguments and outputs (136 MB) are drawn apart; temp holds none
    assert [b.base for b in peak.groups[0].bars] == [136 * MB, 136 * MB]
    assert all(b.base == 0 for g in temp.groups for b in g.bars)
    assert "(the arguments and outputs lighter)" in peak.note and "lighter" not in temp.note


def test_each_panel_draws_on_its_own_axis_in_html() -> None:
    functions, targets, results = remat_results()
    view = ExampleView(source="def grad_scan(w, x):\n    return w\n", show=["summary"])
    soup = BeautifulSoup(nodes_to_html(render_example(view, functions, targets, list(results.values()))),
                         "html.parser")
    panels = soup.select("figure.jaxhlo-bars .jaxhlo-bars-panel")
    assert [p["data-measure"] for p in panels] == ["temp", "device"]
    ends = []
    for panel in panels:
        ticks = [t.get_text() for t in panel.select(".jaxhlo-bar-axis span")]
        ends.append(ticks[-1])
        values = [t.get_text() for t in panel.select(".jaxhlo-bar-value")]
        widths = [float(re.search(r"width:([\d.]+)%", b["style"]).group(1)) for b in panel.select(".jaxhlo-bar")]
        # the longest bar of a panel is its largest value on that panel's own axis
        assert max(widths) == widths[[float(v.split()[0]) for v in values].index(
            max(float(v.split()[0]) for v in values))]
    # 88 MB of temp on an axis to 100 MB; 306 MB of peak on one to 400 MB
    assert ends == ["100 MB", "400 MB"]
    temp_widths = [float(re.search(r"width:([\d.]+)%", b["style"]).group(1)) for b in panels[0].select(".jaxhlo-bar")]
    assert temp_widths == [88.0, 44.0, 80.0, 48.0]
    bases = [float(re.search(r"width:([\d.]+)%", b["style"]).group(1)) for b in panels[1].select(".jaxhlo-bar-base")]
    assert bases == [34.0, 34.0]
    # a panel of one measure per target group: labels are the functions, groups the targets
    assert [t.get_text() for t in panels[0].select(".jaxhlo-bar-target")] == ["CPU", "H100"]
    assert [t.get_text() for t in panels[0].select(".jaxhlo-bar-label")] == ["grad_scan", "grad_scan_checkpointed"] * 2
    # a name may wrap after an underscore, nowhere else
    assert str(panels[0].select_one(".jaxhlo-bar-label")) == '<div class="jaxhlo-bar-label">grad_<wbr/>scan</div>'


def test_a_target_with_one_bar_gets_no_ratio_and_a_panel_its_own_scale() -> None:
    functions, targets, results = remat_results()
    del results[("grad_scan_checkpointed", "tpu:v5e")]
    # the H100's temp far from the CPU's: that panel's scale is logarithmic, the TPU's stays linear
    huge = Report("grad_scan", "gpu:h100", memory=Memory(temp_bytes=20_000 * MB))
    results[("grad_scan", "gpu:h100")] = dataclasses.replace(results[("grad_scan", "gpu:h100")], report=huge)
    chart = variants_chart(functions, targets, results, Display())
    assert chart is not None
    temp, peak = chart.panels
    assert (temp.scale, peak.scale) == ("log", "linear")
    assert [b.text for b in peak.groups[0].bars] == ["306 MB"]
    assert "In brackets" not in peak.note and "In brackets" in temp.note and "Logarithmic" in temp.note
    assert variants_chart(functions, targets, results, Display(chart_scale="linear")).panels[0].scale == "linear"


# -- what differs -------------------------------------------------------------------------------------

def test_the_comparison_leads_with_the_stack_that_checkpointing_removes() -> None:
    functions, targets, results = remat_results()
    model = differences_table(functions, targets, results, Display())
    assert model is not None and model.header == ("target", "shape", "made by", *functions)
    rows = [[c.text for c in r.cells] for r in model.rows]
    # one row per target: the accumulator both keep is not a difference
    assert rows == [["CPU", "f32[16,512,1024]", "while (line 11)", "2 × 33.6 MB", "1 × 33.6 MB"],
                    ["H100", "f32[16,512,1024]", "while (line 11)", "2 × 33.6 MB", "1 × 33.6 MB"],
                    ["TPU v5e", "f32[16,512,1024]", "while (line 11)", "2 × 33.6 MB", "1 × 33.6 MB"]]
    assert "do not add up to temp memory" in model.note
    # each panel says the same in words, in place of the accumulator as "largest intermediate"
    report = results[("grad_scan", "cpu")].report
    assert report is not None
    found = differences([results[(fn, "cpu")].report for fn in functions])  # type: ignore[misc]
    finding = variant_finding("grad_scan", functions, found)
    assert finding is not None
    assert finding.text == ("Compared with grad_scan_checkpointed: 1 more f32[16,512,1024] "
                            "(33.6 MB, made by while).")
    other = variant_finding("grad_scan_checkpointed", functions, found)
    assert other is not None and other.text.startswith("Compared with grad_scan: 1 fewer f32[16,512,1024]")
    texts = [f.text for f in findings(report, Display(), finding)]
    assert texts == [finding.text]
    assert next(f.text for f in findings(report, Display())).startswith("Largest intermediate: the f32[16,1024,1024]")


def test_differences_by_shape_and_producer_largest_first_and_limited() -> None:
    a = Report("a", "cpu", materialized=[*stacks(3, "s"), buf("d", "f32[512,1024]", 2 * MB, "dot_general", (7,)),
                                         buf("c", "f32[512,1024]", 2 * MB, "copy"), ACCUMULATOR])
    b = Report("b", "cpu", materialized=[buf("d1", "f32[512,1024]", 2 * MB, "dot_general", (7,)),
                                         buf("d2", "f32[512,1024]", 2 * MB, "dot_general", (8,)),
                                         buf("t", "f32[8,512,256]", 4 * MB, "while", (11,)), ACCUMULATOR,
                                         # an argument's copy and a loop counter are no intermediates
                                         dataclasses.replace(buf("p", "f32[16,512,1024]", 33_554_432, "copy"),
                                                             kind="argument-copy"),
                                         buf("i", "s32[]", 4, "add")])
    found = differences([a, b])
    assert [(d.shape, d.made_by, d.counts) for d in found] == [
        ("f32[16,512,1024]", "while", (3, 0)), ("f32[8,512,256]", "while", (0, 1)),
        ("f32[512,1024]", "copy", (1, 0)), ("f32[512,1024]", "dot_general", (1, 2))]
    assert found[-1].made_by_text == "dot_general (lines 7, 8)"
    results = {(r.function, "cpu"): Result(r.function, "cpu", "CPU", report=r) for r in (a, b)}
    model = differences_table(["a", "b"], [("cpu", "CPU")], results, Display())
    assert model is not None and len(model.rows) == 3 and model.total == 4
    assert model.more_text == "1 more, 4 in total (smaller differences)."
    assert [c.text for c in model.rows[1].cells] == ["", "f32[8,512,256]", "while (line 11)", "none", "1 × 4.0 MB"]
    assert len(differences_table(["a", "b"], [("cpu", "CPU")], results, Display(rows=None)).rows) == 4  # type: ignore[union-attr]
    # a variant that failed to compile has no column of counts; one left alone compares nothing
    failed = Report("c", "cpu", error=CompileError(status="INTERNAL", message="boom"))
    results[("c", "cpu")] = Result("c", "cpu", "CPU", report=failed)
    model = differences_table(["a", "b", "c"], [("cpu", "CPU")], results, Display())
    assert model is not None and all(r.cells[-1].text == "—" for r in model.rows)
    assert differences_table(["a"], [("cpu", "CPU")], results, Display()) is None


def test_a_difference_small_beside_the_program_is_left_out_and_a_gradient_is_no_variant() -> None:
    """A function and its gradient over 134 MB of arguments: the gradient's 16.8 MB buffers are
    what differs; a 262 kB one (0.2 % of the program) is not listed, and the words say functions."""
    memory = Memory(temp_bytes=0, argument_bytes=134_217_728 + 8_388_608, output_bytes=4)
    loss = Report("mlp_loss", "cpu", memory=memory, materialized=[buf("s", "f32[256,256]", 262_144, "tanh", (4,))])
    grad = Report("mlp_loss_grad", "cpu", memory=dataclasses.replace(memory, temp_bytes=16_777_216 * 3),
                  materialized=[buf(f"g{i}", "f32[8192,512]", 16_777_216, op, (4,))
                                for i, op in enumerate(("tanh", "dot_general", "add_any"))])
    results = {(r.function, "cpu"): Result(r.function, "cpu", "CPU", report=r) for r in (loss, grad)}
    functions = ["mlp_loss", "mlp_loss_grad"]
    model = differences_table(functions, [("cpu", "CPU")], results, Display(), gradients=["mlp_loss_grad"])
    assert model is not None and model.title.startswith("What differs between the functions:")
    assert [c.text for r in model.rows for c in r.cells if c.text.startswith("f32[")] == ["f32[8192,512]"] * 3
    assert "f32[256,256]" not in str(model.rows) and "under 1% of the program's size" in model.note
    # the 262 kB buffer is a difference, only too small to list: without the gradient's, none is listed
    results[("mlp_loss_grad", "cpu")] = Result("mlp_loss_grad", "cpu", "CPU", report=dataclasses.replace(
        grad, materialized=[]))
    # no table of dashes: the panels' findings say it
    assert differences_table(functions, [("cpu", "CPU")], results, Display(), gradients=["mlp_loss_grad"]) is None
    # two variants of one computation are variants
    results[("mlp_loss_grad", "cpu")] = Result("mlp_loss_grad", "cpu", "CPU", report=grad)
    assert differences_table(functions, [("cpu", "CPU")], results, Display()).title.startswith(  # type: ignore[union-attr]
        "What differs between the variants:")
    finding = variant_finding("mlp_loss", functions, [], gradients=["mlp_loss_grad"])
    assert finding is not None and finding.text == ("No difference from mlp_loss_grad in the buffers stored, by shape "
                                                  "and producer, of 1% of the program's size or more.")


def test_variants_that_store_the_same_buffers_say_so() -> None:
    same = [Report(fn, "cpu", materialized=[ACCUMULATOR]) for fn in ("with_dot", "with_matmul", "with_einsum")]
    results = {(r.function, "cpu"): Result(r.function, "cpu", "CPU", report=r) for r in same}
    assert differences_table([r.function for r in same], [("cpu", "CPU")], results, Display()) is None
    finding = variant_finding("with_dot", [r.function for r in same], [])
    assert finding is not None and finding.text == ("No difference from any other variant in the buffers stored, by "
                                                  "shape and producer, of 1% of the program's size or more.")


def test_a_producer_spelled_two_ways_is_no_difference() -> None:
    """JAX's ``broadcast_in_dim`` in one variant, XLA's ``broadcast`` in the other (no metadata):
    one operation, so the variants store the same buffers and no table is drawn."""
    reports = [Report("a", "cpu", materialized=[buf("x", "f32[1000,50]", 200_000, "broadcast_in_dim")]),
               Report("b", "cpu", materialized=[buf("y", "f32[1000,50]", 200_000, "broadcast")])]
    assert differences(reports) == []
    results = {(r.function, "cpu"): Result(r.function, "cpu", "CPU", report=r) for r in reports}
    assert differences_table(["a", "b"], [("cpu", "CPU")], results, Display()) is None
    # a real difference is kept, named as the first variant spells it
    reports[1].materialized.append(buf("z", "f32[1000,50]", 200_000, "broadcast"))
    (found,) = differences(reports)
    assert (found.made_by, found.counts) == ("broadcast_in_dim", (1, 2))


def test_three_variants_name_whom_each_difference_is_against() -> None:
    reports = [Report("cos", "cpu", materialized=[buf("x", "f32[100,50]", 20_000, "cos")]),
               Report("exp", "cpu", materialized=[]),
               Report("dot", "cpu", materialized=[buf("y", "f32[100,50]", 20_000, "dot_general")])]
    names = [r.function for r in reports]
    found = differences(reports)
    finding = variant_finding("exp", names, found)
    assert finding is not None and finding.text == (
        "Compared with the other variants: 1 fewer f32[100,50] than cos (20.0 kB, made by cos); "
        "1 fewer f32[100,50] than dot (20.0 kB, made by dot_general).")


# -- :findings: memory, everywhere --------------------------------------------------------------------

def stored(name: str) -> Report:
    text = (Path(__file__).parent / "data" / "hlo" / name).read_text()
    analysis = analyze_module(text)
    return Report(function="f", target="gpu:h100", hlo=text, fusions=analysis.fusions,
                  materialized=analysis.materialized, reductions=analysis.reductions,
                  memory=Memory(argument_bytes=1_800_000, output_bytes=200_000, temp_bytes=20_050_000_000))


VERDICT = re.compile(r"\b(un)?fused\b|\breductions?\b", re.IGNORECASE)


@pytest.mark.parametrize("several", [False, True])
def test_an_example_about_memory_gives_no_verdict_anywhere(several: bool) -> None:
    """The seed's unfused product, shown with ``:findings: memory``: no callout, cell, title,
    colour or detail table says fused or unfused; with the default kinds they all do."""
    seed = stored("gpu_h100__with_dot.txt")
    functions = ["with_dot", "again"] if several else ["with_dot"]
    results = [Result(fn, "gpu:h100", "H100", report=dataclasses.replace(seed, function=fn)) for fn in functions]
    source = "def with_dot(pos, hkl):\n    return pos\n\n\ndef again(pos, hkl):\n    return pos\n"
    for kinds, verdicts in ((("memory",), False), (("memory", "reductions", "communication"), True)):
        view = ExampleView(source=source, show=["summary"], display=Display(findings=kinds))
        html = nodes_to_html(render_example(view, functions, [("gpu:h100", "H100")], results))
        soup = BeautifulSoup(html, "html.parser")
        said = VERDICT.findall(soup.get_text(" "))
        assert bool(said) is verdicts, (kinds, said)
        assert bool(soup.select(".jaxhlo-bad")) is verdicts
        assert bool(soup.select("table.jaxhlo-reductions")) is verdicts
        text = render_text([seed], show=["summary"], display=Display(findings=kinds))
        assert bool(VERDICT.search(text)) is verdicts


def test_the_difference_table_comes_first() -> None:
    functions, targets, results = remat_results()
    view = ExampleView(source="def grad_scan(w, x):\n    return w\n", show=["source", "summary"],
                       display=Display(findings=("memory",)))
    html = nodes_to_html(render_example(view, functions, targets, list(results.values())))
    order = [html.index(marker) for marker in ("jaxhlo-source", "jaxhlo-differences", "jaxhlo-variants",
                                               "jaxhlo-bars", "jaxhlo-tabs")]
    assert order == sorted(order)
    # with findings that leave memory out, there is no table of differences
    view = dataclasses.replace(view, display=Display(findings=("reductions",)))
    assert "jaxhlo-differences" not in nodes_to_html(render_example(view, functions, targets,
                                                                     list(results.values())))


# -- the guide's own checkpointing example ------------------------------------------------------------

def snapshot_reports(page: str, example: str) -> dict[tuple[str, str], Report]:
    from sphinx_jaxhlo.store.snapshots import read

    text = (DOCS / "guide" / f"{page}.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```\{jax-hlo\}\n(.*?)```", text, re.S) if f":name: {example}\n" in b)
    source = block.split("\n\n", 1)[1]
    out = {}
    for path in sorted((DOCS / "_snapshots" / "guide" / page).glob(f"{example}.*.json")):
        stored_snapshot = read(path)
        assert stored_snapshot is not None
        report = stored_snapshot.snapshot.report(source, "example.py")
        out[(report.function, report.target)] = report
    if not out:
        pytest.skip(f"no snapshots of {example}")
    return out


def test_the_guides_scan_leads_with_its_residual_stacks() -> None:
    """docs/guide/remat.md, the scan with and without jax.checkpoint: on every target the
    largest difference is the stacked f32[8,512,1024] residuals that only the plain
    gradient stores, and no panel calls a buffer both keep the largest intermediate."""
    reports = snapshot_reports("remat", "jaxhlo-example-remat-scan")
    functions = ["grad_scan", "grad_scan_checkpointed"]
    targets = [("cpu", "CPU"), ("gpu:h100", "H100"), ("tpu:v5e", "TPU v5e")]
    results = {key: Result(key[0], key[1], dict(targets)[key[1]], report=r) for key, r in reports.items()}
    model = differences_table(functions, targets, results, Display())
    assert model is not None
    firsts = [r for r in model.rows if r.cells[0].text]
    assert [r.cells[0].text for r in firsts] == ["CPU", "H100", "TPU v5e"]
    for row in firsts:
        assert row.cells[1].text == "f32[8,512,1024]" and row.cells[4].text == "none", row
        assert row.cells[3].text.endswith("× 16.8 MB")
    view = ExampleView(source="", show=["summary"], display=Display(findings=("memory",)))
    html = nodes_to_html(render_example(view, functions, targets, list(results.values())))
    soup = BeautifulSoup(html, "html.parser")
    callouts = [p.get_text(" ", strip=True) for p in soup.select(".jaxhlo-callout")]
    assert len(callouts) == 6 and not any("Largest intermediate" in c for c in callouts)
    assert all(c.startswith("Compared with grad_scan") for c in callouts)
    assert sum("more f32[8,512,1024]" in c for c in callouts) == 3
    # the CPU's plain gradient: the scan's stacks, their copies and the broadcast it starts from
    assert callouts[0].startswith("Compared with grad_scan_checkpointed: 12 more f32[8,512,1024] "
                                  "(16.8 MB each, made by while, copy and broadcast)"), callouts[0]
