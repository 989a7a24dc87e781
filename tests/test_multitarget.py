"""The seed on CPU, an H100 and a TPU v5e, compiled on this CPU-only machine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from conftest import build_html

from sphinx_jaxhlo.core import targets
from sphinx_jaxhlo.core.report import Report

pytestmark = pytest.mark.skipif(
    not (targets.get_target("gpu:h100").available() and targets.get_target("tpu:v5e").available()),
    reason="needs the gpu and tpu extras (CI installs them): pip install 'sphinx-jaxhlo[gpu,tpu]'")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[BeautifulSoup, str, dict[tuple[str, str], Report]]:
    import shutil


    tmp = tmp_path_factory.mktemp("targets")
    src = tmp / "src"
    shutil.copytree(Path(__file__).parent / "roots" / "test-targets", src)
    warnings, outdir, stored = build_html(src, tmp / "build")
    html = (outdir / "index.html").read_text(encoding="utf-8")
    # the reports as the cache holds them, by (function, target)
    reports = {(rep.function, rep.target): rep for rep in stored}
    return BeautifulSoup(html, "html.parser"), warnings, reports


def test_gpu_explicit_form_fuses_the_reduction(built: Any) -> None:
    _, warnings, reports = built
    rep = reports[("explicit", "gpu:h100")]
    assert rep.memory.temp_bytes is not None and rep.memory.temp_bytes < 100_000_000
    holder = [f for f in rep.fusions if f.kind == "Input" and "reduce" in f.ops]
    assert holder and {"multiply", "cosine"} <= set(holder[0].ops)
    assert rep.all_reductions_fused is True
    assert "[jaxhlo." not in warnings, warnings


def test_gpu_dot_form_materializes_the_gemm_output(built: Any) -> None:
    _, _, reports = built
    rep = reports[("with_dot", "gpu:h100")]
    top = rep.materialized[0]
    assert (top.shape, top.bytes) == ("f32[50000,100000]", 20_000_000_000)
    producer = next(f for f in rep.fusions if f.name == top.producer)
    assert producer.kind == "Custom" and "gemm" in (producer.custom_kind or "")
    assert rep.all_reductions_fused is False
    assert rep.memory.temp_bytes is not None and rep.memory.temp_bytes > 20_000_000_000


def test_tpu_dot_form_is_one_fusion_with_no_temp(built: Any) -> None:
    _, _, reports = built
    rep = reports[("with_dot", "tpu:v5e")]
    assert rep.memory.temp_bytes == 0
    holder = [f for f in rep.fusions if "reduce" in f.ops]
    assert len(holder) == 1 and {"cosine", "reduce"} <= set(holder[0].ops)
    assert rep.all_reductions_fused is True


def test_tpu_out_of_memory_is_a_rendered_result(built: Any) -> None:
    soup, warnings, reports = built
    rep = reports[("broadcast", "tpu:v5e")]
    assert rep.error is not None and rep.error.status == "RESOURCE_EXHAUSTED"
    text = soup.get_text(" ")
    assert "does not fit on TPU v5e: needs 18.65 GiB of temporaries, 15.75 GiB available" in text
    assert "RESOURCE_EXHAUSTED" not in warnings


def test_side_by_side_table_and_tabs(built: Any) -> None:
    soup, _, _ = built
    table = soup.select_one("table.jaxhlo-variants")
    header = [th.get_text(strip=True) for th in table.select("thead th")]
    assert header == ["function", "CPU", "H100", "TPU v5e"]
    rows = {tr.find("td").get_text(strip=True): [td.get_text(" ", strip=True) for td in tr.find_all("td")[1:]]
            for tr in table.select("tbody tr")}
    assert rows["explicit"][1].endswith("fused") and "unfused" not in rows["explicit"][1]
    assert rows["with_dot"][1].startswith("20.") and rows["with_dot"][1].endswith("unfused")
    assert rows["with_dot"][2].startswith("HBM ") and rows["with_dot"][2].endswith(" MB, fused")
    assert rows["broadcast"][2] == "does not fit"
    tabs = [b.get_text() for b in soup.select("div.jaxhlo-tabs [role=tab]")]
    assert tabs == ["CPU", "H100", "TPU v5e"]
    (chart,) = soup.select("figure.jaxhlo-bars")
    # one measure per panel: the CPU's and the H100's temp, the HBM the TPU holds (its temp is 0 B)
    assert chart.figcaption.get_text() == "Memory by variant, one panel per measure"
    temp, peak = chart.select(".jaxhlo-bars-panel")
    assert (temp["data-measure"], peak["data-measure"]) == ("temp", "device")
    assert [t.get_text() for t in temp.select(".jaxhlo-bar-target")] == ["CPU", "H100"]
    assert [t.get_text() for t in peak.select(".jaxhlo-bar-target")] == ["TPU v5e"]
    # the failed compile draws no bar
    assert [d.get_text() for d in peak.select(".jaxhlo-bar-label")] == ["explicit", "with_dot"]
    assert len(temp.select(".jaxhlo-bar-label")) == 6
    widths, target = {}, ""
    for el in chart.select(".jaxhlo-bars-grid > div"):
        if "jaxhlo-bar-target" in el["class"]:
            target = el.get_text()
        elif "jaxhlo-bar-track" in el["class"]:
            name = el.find_previous_sibling("div", class_="jaxhlo-bar-label").get_text()
            widths[f"{name} on {target}"] = float(el.select_one(".jaxhlo-bar")["style"].removeprefix("width:")
                                                  .removesuffix("%"))
    assert widths["with_dot on TPU v5e"] > 0
    # log scale: 20 GB is seven decades above 1 kB, 50 MB under five
    assert widths["with_dot on H100"] > widths["explicit on H100"] > 0

