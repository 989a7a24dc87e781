"""A sweep through Sphinx (CPU target): the map per target, its table and flips, a point whose
arguments cannot be made drawn as such, the claims over ranges, and the text builder's tables."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from sphinx_jaxhlo.core.sizes import format_bytes


@pytest.mark.sphinx("html", testroot="sweep")
def test_a_sweep_in_a_page(app: Any) -> None:
    app.build()
    warnings = app.warning.getvalue()
    soup = BeautifulSoup((Path(app.outdir) / "index.html").read_text(encoding="utf-8"), "html.parser")
    first, second = soup.select("div.jaxhlo")
    assert first.select_one(".jaxhlo-signature").get_text(" ", strip=True).startswith(
        "Compiled total(x: f32[n,n]) for CPU at n from 64 to 100,000,000 (3 sizes)")
    (figure,) = first.select("figure.jaxhlo-graph")
    assert figure.select_one("figcaption").get_text() == "CPU: temp memory against n"
    svg = figure.select_one("svg.jaxhlo-sweep-svg")
    # drawn 360 units wide, scaled to the column by the stylesheet
    assert svg is not None and svg["width"] == "360" and svg["viewbox"].startswith("0 0 360 ")
    # each compiled point is a marker carrying its report's figure; the third cannot be made: a question mark
    points = figure.select("g.jaxhlo-sweep-point")
    sizes = [p.get("data-size") for p in points]
    assert sizes[:2] == ["64", "128"] and "jaxhlo-sweep-no-report" in points[2]["class"]
    assert points[2].select_one("title").get_text().startswith("n=100000000: no report, at n=100000000: the "
                                                               "arguments f32[n,n] cannot be made")
    rows = [[td.get_text(" ", strip=True) for td in tr.find_all("td")] for tr in figure.select("table tbody tr")]
    assert [r[0] for r in rows] == ["64", "128", "100,000,000"]
    assert rows[2][1].startswith("no report: at n=100000000")
    temps = {r[0]: r[2] for r in rows}
    for point in points[:2]:  # the map's points are the table's figures
        assert format_bytes(int(point["data-bytes"])) == temps[point["data-size"]]
    # claims over ranges: each point's claim, and the flip claim, listed and holding
    checks = first.select("ul.jaxhlo-expectations li")
    texts = [li.get_text(" ", strip=True) for li in checks]
    assert any("total on cpu at n=64: expected max temp 1GB for n<=128" in t for t in texts)
    # "none" between 64 and 128, and beside a point without a report: not resolved, a warning of its own
    assert any("total on cpu: expected flip none" in t and t.endswith("[NOT RESOLVED]") for t in texts)
    assert re.search(r"index.rst:4: WARNING: jax-hlo: total on cpu: expected flip none, .*not resolved: n=64..128 "
                     r".*\[NOT RESOLVED\] \[jaxhlo.unresolved\]", warnings), warnings
    # the second example's claim fails at its one point, named, at the directive's line
    assert re.search(r"index.rst:16: WARNING: jax-hlo: rows on cpu at n=32: expected min temp 1kB for n>=32, "
                     r"found temp .*\[FAILED\] \[jaxhlo.expectation\]", warnings), warnings
    assert "n=8:" not in warnings and "n=16:" not in warnings
    assert second.select("figure.jaxhlo-graph")


def test_the_text_builder_gets_the_tables(tmp_path: Path) -> None:
    src = Path(__file__).parent / "roots" / "test-sweep"
    out = tmp_path / "text"
    cmd = [sys.executable, "-m", "sphinx", "-b", "text", "-q", "-d", str(tmp_path / "doctrees"), "-D",
           f"jaxhlo_cache_dir={tmp_path / 'cache'}", str(src), str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    text = (out / "index.txt").read_text(encoding="utf-8")
    assert "CPU: temp memory against n" in text
    assert "The points on CPU" in text and "100,000,000" in text and "<svg" not in text
    assert "No decision flips between neighbouring sizes compiled." in text
    assert "not looked at: n=64..128: the decisions at both ends agree" in " ".join(text.split())
    assert "not compared: n=128..100000000: an end has no report." in " ".join(text.split())


@pytest.mark.sphinx("html", testroot="sweep-errors")
def test_bad_sweep_input_is_one_located_warning_and_an_error_box(app: Any) -> None:
    """A ``:static:`` that names a swept size and a sweep value that is not a number: each a
    warning at its directive's line that names the fix, an error box, the page built."""
    app.build()
    warnings = [line for line in app.warning.getvalue().splitlines() if "WARNING" in line]
    assert len(warnings) == 2, warnings
    assert re.search(r"index.rst:4: WARNING: .*:static: n=5: n is a size of the arguments, given by the sweep; "
                     r"remove n=5 \[jaxhlo.option\]", warnings[0]), warnings
    assert re.search(r"index.rst:14: WARNING: .*:sweep: n=abc at column 3: 'abc' is not a size: give n positive "
                     r"integers, such as n=1000..100000 or n=1000,4096 \[jaxhlo.sweep\]", warnings[1]), warnings
    soup = BeautifulSoup((Path(app.outdir) / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert len(soup.select(".jaxhlo-error")) == 2
    assert "The page goes on after the two examples." in soup.get_text()
