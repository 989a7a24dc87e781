"""What a device holds and where each buffer lives: the device figure in every output, the TPU's
on-chip buffers said apart from HBM, the device claim, and measurements of a hardware record
shown beside the deviceless figures (and only for the program they measured)."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from test_snapshots import ROOTS, build, mode, warnings

from sphinx_jaxhlo.core import expectations as exp
from sphinx_jaxhlo.core.memory import Measured, Memory
from sphinx_jaxhlo.core.report import Report
from sphinx_jaxhlo.render import rows
from sphinx_jaxhlo.render.display import Display
from sphinx_jaxhlo.render.findings import findings
from sphinx_jaxhlo.render.overview import comparison_table, has_problem
from sphinx_jaxhlo.store import snapshots
from sphinx_jaxhlo.store.hardware import FORMAT, program_digest

DOCS = Path(__file__).resolve().parent.parent / "docs"


def docs_report(slot: str) -> Report:
    """A report of the docs, as a build makes it from its committed snapshot."""
    stored = snapshots.read(DOCS / "_snapshots" / slot)
    assert stored is not None
    return stored.snapshot.report("", "example.py")


#: A bounded lax.map over chunks of the seed on the TPU: each chunk's f32[100,50000] block is
#: stored between kernels in the chip's own memory, and the chip held 3.3 MB of HBM for it.
BOUNDED_MAP = "guide/bounded/jaxhlo-example-bounded-map.default.tpu-v5e.json"


def test_a_tpu_buffer_kept_on_chip_is_said_apart_from_hbm() -> None:
    report = docs_report(BOUNDED_MAP)
    on_chip = [m for m in report.materialized if not m.in_device_memory]
    assert on_chip and {m.memory_space for m in on_chip} <= {1, 6} and any(m.memory_space == 1 for m in on_chip)
    # the largest intermediate counts HBM; the chip's own memory is named apart
    assert rows.largest_intermediate(report) is None
    assert rows.largest_on_chip(report) is not None and rows.largest_on_chip(report).shape == "f32[100,50000]"
    table = rows.buffer_table(report, Display())
    where = table.header.index("in")
    assert {r.cells[where].text for r in table.rows} == {"on-chip"}
    assert not any(c.tone == "bad" for r in table.rows for c in r.cells)
    # the reduction that reads it is unfused, says where the buffer is, and is no problem in HBM terms
    reads = [r.cells[2].text for r in rows.reduction_table(report, Display()).rows if r.cells[3].text == "unfused"]
    assert reads == ["stored f32[100,50000] (20.0 MB) on-chip, not in HBM, made by while"]
    found = findings(report, Display())
    unfused = [f for f in found if f.title.startswith("Unfused")]
    assert [f.level for f in unfused] == ["info"] and "takes no HBM" in unfused[0].text
    assert not has_problem(report, Display())
    assert any("stay in the chip's own memory, never in HBM" in f.text for f in found)


def test_a_materialized_claim_counts_hbm_and_names_on_chip_buffers() -> None:
    report = docs_report(BOUNDED_MAP)
    # in HBM there is only the loop's counter; the f32[100,50000] blocks are named apart
    none = exp.check(exp.Expectation("materialized", "tpu:v5e", "none"), report)
    assert not none.passed
    assert none.actual.startswith("1 buffers, largest s32[] (4 B); 8 on-chip, not in HBM (f32[100,50000]")
    named = exp.check(exp.Expectation("materialized", "tpu:v5e", "f32[100,50000]"), report)
    assert not named.passed and named.actual.startswith("materialized: s32[]; 8 on-chip, not in HBM (")
    # a claim about the chip's own memory names it
    on_chip = exp.check(exp.Expectation("materialized", "tpu:v5e", "on-chip f32[100,50000]"), report)
    assert on_chip.passed and on_chip.actual.startswith("on-chip: f32[100,50000], f32[100,50000]")
    assert not exp.check(exp.Expectation("materialized", "tpu:v5e", "on-chip f32[7]"), report).passed
    assert exp.parse_expectations({"expect-materialized": "tpu:v5e=on-chip f32[100,50000]"}).items
    with pytest.raises(exp.ExpectationSyntaxError, match="on-chip f32"):
        exp.parse_expectations({"expect-materialized": "on-chip"})


def test_the_device_claim_bounds_what_the_device_holds_not_xlas_tpu_peak() -> None:
    report = docs_report("guide/remat/jaxhlo-example-remat-scan.grad_scan.tpu-v5e.json")
    assert report.memory.peak_bytes > 200_000_000  # XLA's: on-chip buffers counted
    held = exp.check(exp.Expectation("max-device", "tpu:v5e", "40MB"), report)
    assert held.passed and held.actual.startswith("HBM held 35.1 MB (35,05")
    assert not exp.check(exp.Expectation("max-device", "tpu:v5e", "30MB"), report).passed
    assert not exp.check(exp.Expectation("max-peak", "tpu:v5e", "40MB"), report).passed
    # the option parses like the other sizes, and a bad size is refused
    assert exp.parse_expectations({"expect-max-device": "tpu:v5e=40MB"}).items[0].kind == "max-device"
    with pytest.raises(exp.ExpectationSyntaxError):
        exp.parse_expectations({"expect-max-device": "lots"})
    unknown = Report("f", "tpu:v5e")
    assert exp.check(exp.Expectation("max-device", None, "1MB"), unknown).actual == "device memory not reported"


@pytest.mark.parametrize(("target", "held", "peak"), [
    ("cpu", "host memory held", "peak (estimate)"),
    ("gpu:h100", "device memory held", "peak"),
    ("tpu:v5e", "HBM held", "XLA's peak (not HBM)"),
])  # fmt: skip
def test_the_memory_table_names_each_figure_by_what_it_counts_on_its_target(target: str, held: str,
                                                                             peak: str) -> None:
    memory = Memory(argument_bytes=100, output_bytes=10, alias_bytes=0, temp_bytes=50, generated_code_bytes=5,
                    peak_bytes=300 if target != "cpu" else 110)
    memory.settle(target)
    table = rows.memory_table(Report("f", target, memory=memory))
    labels = [r.cells[0].text for r in table.rows]
    # one name, short (the table is readable at 420 px); what it adds up says the note
    assert labels[0] == held and table.note.startswith(f"{held[0].upper()}{held[1:]}: arguments + output + temp")
    assert table.rows[0].cells[2].text == "165 bytes"
    assert labels[-1] == peak
    measured = rows.memory_table(Report("f", target, memory=memory), Measured("TPU v5 lite", "2026-12-05", 170, 1.5))
    assert [r.cells[0].text for r in measured.rows][1] == f"{held}, measured (TPU v5 lite, 2026-12-05)"


def test_the_side_by_side_table_shows_what_a_device_held_beside_the_compile() -> None:
    from sphinx_jaxhlo.core.results import Result

    slot = "guide/remat/jaxhlo-example-remat-scan.grad_scan.{}.json"
    results = [Result("f", "tpu:v5e", "TPU v5e", report=docs_report(slot.format("tpu-v5e")),
                      measured=Measured("TPU v5 lite", "2026-12-05", 35_051_008, 0.948)),
               Result("f", "cpu", "CPU", report=docs_report(slot.format("cpu")))]
    table = comparison_table(results, Display())
    label, tpu, cpu = [c.text for c in table.rows[0].cells]
    assert (label, tpu) == ("memory held", "HBM held: 35.1 MB of 16 GiB") and cpu.startswith("host memory held: ")
    assert [c.text for c in table.rows[1].cells] == ["measured on the device",
                                                     "held 35.1 MB, 0.948 ms a run (TPU v5 lite, 2026-12-05)", "—"]
    refused = rows.measured_text(Measured("TPU v5 lite", "2026-12-05", None, None, "RESOURCE_EXHAUSTED"))
    assert refused == "refused at compile (RESOURCE_EXHAUSTED), as predicted (TPU v5 lite, 2026-12-05)"


def _record(project: Path, held: int) -> dict:
    """A hardware record of the project's CPU snapshots, as tools/hardware_check.py writes one."""
    examples = []
    for path in sorted((project / "_snapshots").rglob("*.cpu.json")):
        stored = snapshots.read(path)
        assert stored is not None
        facts = stored.snapshot.facts["memory"]
        examples.append({
            "slot": path.relative_to(project / "_snapshots").as_posix(),
            "program_sha256": program_digest(stored.snapshot.identity, stored.snapshot.texts.get("hlo", "")),
            "memory_analysis": {"argument_size_in_bytes": facts["argument_bytes"],
                                "output_size_in_bytes": facts["output_bytes"], "alias_size_in_bytes": 0,
                                "temp_size_in_bytes": facts["temp_bytes"], "generated_code_size_in_bytes": 0,
                                "peak_memory_in_bytes": facts["peak_bytes"]},
            "held_bytes": held, "warm_ms": 1.25, "warm_runs": 5,
            "same_figures": True, "same_hlo": True, "same_error": True})
    return {"hardware_record": FORMAT, "target": "cpu", "device": {"kind": "Test CPU", "platform": "cpu"},
            "date": "2026-12-05", "versions": {"jax": "0.10.2"}, "examples": examples}


def test_a_page_shows_what_the_device_held_for_the_program_measured_and_no_other(tmp_path: Path) -> None:
    project = tmp_path / "src"
    shutil.copytree(ROOTS / "test-cache", project)
    with (project / "conf.py").open("a") as f:
        f.write('jaxhlo_snapshot_dir = "_snapshots"\njaxhlo_hardware_dir = "_hardware"\n')
    result, log = build(project, tmp_path / "out")  # writes the snapshots
    assert result["rc"] == 0, log
    (project / "_hardware").mkdir()
    (project / "_hardware" / "cpu.json").write_text(json.dumps(_record(project, 123_456_789)))
    result, log = build(project, tmp_path / "out", "-E", "-W", env=mode("use"))
    assert result["rc"] == 0, log
    soup = BeautifulSoup((tmp_path / "out" / "index.html").read_text(), "html.parser")
    shown = [e.get_text(" ", strip=True) for e in soup.select("div.jaxhlo")]
    assert len(shown) == 2 and all("held 123 MB, 1.25 ms a run (Test CPU, 2026-12-05)" in t for t in shown)
    assert all("host memory held, measured (Test CPU, 2026-12-05)" in t for t in shown)
    # the first example edited: its program is not the one measured, so no measurement is shown for it;
    # the record is a dependency of the page, read again when it changes
    index = project / "index.rst"
    index.write_text(index.read_text().replace("jnp.cos(a @ b)", "jnp.sin(a @ b)"))
    result, log = build(project, tmp_path / "out", "-W")
    assert result["rc"] == 0, log
    soup = BeautifulSoup((tmp_path / "out" / "index.html").read_text(), "html.parser")
    first, second = (e.get_text(" ", strip=True) for e in soup.select("div.jaxhlo"))
    assert "measured on the device" not in first and "held 123 MB" in second
    # a damaged record: one warning, at the first example that would show it; no measurement
    (project / "_hardware" / "cpu.json").write_text("{")
    result, log = build(project, tmp_path / "out")
    found = [w for w in warnings(log) if "[jaxhlo.hardware]" in w]
    assert len(found) == 1 and re.search(r"index\.rst:\d+: WARNING: jax-hlo: a hardware record cannot be read: "
                                         r"cpu\.json: cpu\.json is not JSON", found[0]), log
    assert "measured on the device" not in (tmp_path / "out" / "index.html").read_text()


def test_a_snapshots_report_has_the_memory_rules_however_its_analysis_is_found(tmp_path: Path) -> None:
    """Analysed now, kept in the process, or read from the cache's analyses: the device figure
    and the target's peak rule are applied each time (they are not part of the analysis)."""
    from sphinx_jaxhlo.store import analyses
    from sphinx_jaxhlo.store.cache import ReportCache

    stored = analyses.read(DOCS / "_snapshots" / "guide/remat/jaxhlo-example-remat-scan.grad_scan.tpu-v5e.json")
    assert stored is not None
    cache = ReportCache(tmp_path / "cache")
    analyses.forget()
    first, _ = analyses.report(stored, "", "example.py", cache)
    kept, _ = analyses.report(stored, "", "example.py", cache)
    analyses.forget()
    from_cache, _ = analyses.report(stored, "", "example.py", cache)
    # 35.05 MB: what the chip held (docs/_hardware/tpu-v5e.json: 35,051,008 B)
    assert first.memory.device_bytes == kept.memory.device_bytes == from_cache.memory.device_bytes == 35_051_520


# -- the figure to act on, decided once (core.memory) -----------------------------------------------

def test_the_figure_to_act_on_is_the_tpus_hbm_and_temp_elsewhere_one_for_a_series() -> None:
    from sphinx_jaxhlo.core.memory import acting_figure

    bounded = docs_report(BOUNDED_MAP).memory
    # the bounded map's temp on the TPU is not what the chip needs: its HBM is
    assert bounded.acting("tpu:v5e") == "device" and bounded.figure("device") == bounded.device_bytes
    assert bounded.acting("cpu") == "temp" and bounded.acting("gpu:h100") == "temp"
    assert bounded.figure("temp") == bounded.temp_bytes
    unknown = Memory(temp_bytes=10)  # arguments and outputs not reported: no device figure
    assert unknown.acting("tpu:v5e") == "temp"
    # reports compared with each other share one figure: the device's only when each has it
    assert acting_figure("tpu:v5e", [bounded, bounded]) == "device"
    assert acting_figure("tpu:v5e", [bounded, unknown]) == "temp"
    assert acting_figure("gpu:h100", [bounded]) == "temp" and acting_figure("tpu:v5e", []) == "temp"


def test_the_variants_table_chart_and_sweep_act_on_one_figure_per_target() -> None:
    """The variants table, its chart and a sweep's map read the figure from core.memory: on a TPU
    where one variant lacks the device figure, all of that target's variants show temp."""
    from sphinx_jaxhlo.core.flips import sweep_map
    from sphinx_jaxhlo.core.results import Result
    from sphinx_jaxhlo.core.sweeps import parse_sweep
    from sphinx_jaxhlo.render.chart import variants_chart
    from sphinx_jaxhlo.render.overview import variants_table

    held = Report("a", "tpu:v5e", memory=Memory(argument_bytes=100, output_bytes=10, alias_bytes=0,
                                                 temp_bytes=0, generated_code_bytes=5))
    held.memory.settle("tpu")
    lacking = Report("b", "tpu:v5e", memory=Memory(temp_bytes=40))
    results = {("a", "tpu:v5e"): Result("a", "tpu:v5e", "TPU v5e", report=held),
               ("b", "tpu:v5e"): Result("b", "tpu:v5e", "TPU v5e", report=lacking)}
    display = Display()
    table = variants_table(["a", "b"], [("tpu:v5e", "TPU v5e")], results, display)
    cells = [row.cells[1].text for row in table.rows]
    assert cells == ["0 B", "40 B"] and table.title.startswith("Temp memory")
    chart = variants_chart(["a", "b"], [("tpu:v5e", "TPU v5e")], results, display)
    assert chart is not None and [p.measure for p in chart.panels] == ["temp"]
    results[("b", "tpu:v5e")].report = Report("b", "tpu:v5e", memory=dataclasses.replace(held.memory))
    assert [row.cells[1].text for row in variants_table(["a", "b"], [("tpu:v5e", "TPU v5e")], results,
                                                         display).rows] == ["HBM held 115 B", "HBM held 115 B"]
    sweep = parse_sweep("n=1,2")
    points = sweep.points()
    made = sweep_map(sweep, [(points[0], [Result("a", "tpu:v5e", "TPU v5e", report=held)], ""),
                             (points[1], [Result("a", "tpu:v5e", "TPU v5e", report=lacking)], "")],
                     ["a"], [("tpu:v5e", "TPU v5e")])
    assert made.measure("tpu:v5e") == "temp" and [f.value for f in made.figures] == [0, 40]


def test_drift_compares_the_device_figure_a_release_moving_hbm_but_not_temp_is_a_difference() -> None:
    from sphinx_jaxhlo.store.drift import compare

    before = docs_report(BOUNDED_MAP)
    after = docs_report(BOUNDED_MAP)
    after.memory = dataclasses.replace(before.memory, generated_code_bytes=(before.memory.generated_code_bytes or 0)
                                       + 2 * 2**20)
    after.memory.settle("tpu")
    assert after.memory.temp_bytes == before.memory.temp_bytes and after.memory.peak_bytes == before.memory.peak_bytes
    tools = {"jax": "0.10.2"}
    drift = compare(before, after, tools, tools, 0.05)
    assert drift is not None and drift.figures_moved
    assert (drift.device_before, drift.device_after) == (before.memory.device_bytes, after.memory.device_bytes)
    # 2 MiB more HBM is beyond 5 % of the 3.3 MB this program holds: a warning, and said as it is
    assert drift.significant
    assert "device memory 3.3 MB -> 5.4 MB" in drift.message and "temp" not in drift.message
    assert compare(before, docs_report(BOUNDED_MAP), tools, tools, 0.05) is None
