"""Claims over a sweep's range, of every kind, on every front (the directive, the API, the
command line): over sizes no compile looked at a claim is not resolved, whatever it is about
(a memory figure, the largest buffer at the peak, the kernel count); a claim whose range holds
no compiled size says so; neither passes.  Compiled for the CPU: ``m @ v`` at K=60 and K=64."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from sphinx_jaxhlo import SweepReports, analyze_source
from sphinx_jaxhlo.core.diagnostics import SUBTYPES

SOURCE = "def product(m, v):\n    return m @ v\n"
BETWEEN = "not resolved: K=60..64 (both ends agree; the sizes between were not compiled) [NOT RESOLVED]"
NOWHERE = ("found nothing: no size of the sweep lies where K>=100000; it compiled K from 60 to 64 (2 sizes) "
           "[NOT RESOLVED]")


@pytest.mark.sphinx("html", testroot="sweep-claims")
def test_the_directive_resolves_no_claim_over_sizes_it_did_not_compile(app: Any) -> None:
    app.build()
    warnings = app.warning.getvalue()
    unresolved = re.findall(r"index.rst:4: WARNING: jax-hlo: (.*) \[jaxhlo.unresolved\]", warnings)
    # a memory figure, the largest buffer at the peak and the kernel count: as a decision would be
    for what in ("max temp 1MB for K<=64", "peak top argument m for K>=60", "kernels <=4 for K<=64"):
        assert any(f"expected {what}, found held at the 2 sizes compiled" in u and u.endswith(BETWEEN)
                   for u in unresolved), (what, unresolved)
    # the range that holds no compiled size: a warning and a row, not a silent vanish
    assert any(u == f"product on cpu: expected max temp 1kB for K>=100000, {NOWHERE}" for u in unresolved), unresolved
    # a claim about one compiled size is resolved by its compile
    assert not any("reduction none" in u for u in unresolved)
    assert len(unresolved) == 4, unresolved
    # each subtype the build warned with is one the warnings reference lists (and suppress_warnings takes)
    assert set(re.findall(r"\[jaxhlo\.(\w+)\]", warnings)) <= set(SUBTYPES) and "unresolved" in SUBTYPES
    soup = BeautifulSoup((Path(app.outdir) / "index.html").read_text(encoding="utf-8"), "html.parser")
    # :findings: peak on a sweep: each point's peak in a column of its own, the verdicts kept
    peak = soup.select("div.jaxhlo")[1]
    header = [th.get_text(" ", strip=True) for th in peak.select("figure.jaxhlo-graph table thead th")]
    assert header[1] == "reductions" and header[-1] == "live at the peak", header
    cells = [tr.find_all("td")[-1].get_text(" ", strip=True)
             for tr in peak.select("figure.jaxhlo-graph table tbody tr")]
    assert len(cells) == 2 and all(re.match(r"^[0-9.]+ kB: largest f32\[64,6[04]\] made by argument m", c)
                                   for c in cells), cells
    rows = [li.get_text(" ", strip=True) for li in soup.select("ul.jaxhlo-expectations li.jaxhlo-unresolved")]
    assert len(rows) == 4 and any("K>=100000" in r for r in rows)
    assert not any("✔" in li.get_text() and "K>=100000" in li.get_text()
                   for li in soup.select("ul.jaxhlo-expectations li"))


def test_the_api_resolves_no_claim_over_sizes_it_did_not_compile() -> None:
    sweep = analyze_source(SOURCE, "product", "f32[64,K], f32[K]", targets="cpu", sweep="K=60,64", bisect=0)
    assert isinstance(sweep, SweepReports)
    for claim in ({"max_temp": "1MB for K<=64"}, {"max_device": "1GB for K<=64"},
                  {"peak_top": "argument m for K>=60"}, {"kernels": "<=4 for K<=64"}):
        with pytest.raises(AssertionError) as info:
            sweep.check(**claim)
        assert "found held at the 2 sizes compiled" in str(info.value) and BETWEEN in str(info.value), claim
    with pytest.raises(AssertionError) as info:
        sweep.check(max_temp="cpu=1kB for K>=100000")
    assert NOWHERE in str(info.value)
    # the same claims at the compiled sizes only: resolved, and they hold
    sweep.check(max_temp="1MB for K=60, 1MB for K=64", peak_top="argument m", reduction="none for K=64")
    # a malformed claim is named as the API spells it
    for claim, message in (({"max_device": "-5MB"}, "max_device= '-5MB' is not a size"),
                           ({"kernels": "lots for K>=60"}, "kernels= 'lots': write a count"),
                           ({"max_temp": "1MB for Q>=4"}, "a claim names 'Q', which the sweep does not give")):
        with pytest.raises(ValueError) as bad:
            sweep.check(**claim)
        assert str(bad.value).startswith(message) and ":expect-" not in str(bad.value), bad.value
    outcomes, problems = sweep.evaluate_options({"expect-max-temp": "cpu=1kB for K>=100000"})
    assert [(o.passed, o.unresolved) for o in outcomes] == [(False, True)] and len(problems) == 1


def test_the_command_line_resolves_no_claim_over_sizes_it_did_not_compile(tmp_path: Path) -> None:
    path = tmp_path / "jaxhlo_claims_example.py"
    path.write_text(SOURCE)
    argv = [sys.executable, "-m", "sphinx_jaxhlo", f"{path}:product", "--args", "f32[64,K], f32[K]",
            "--sweep", "K=60,64", "--targets", "cpu", "--bisect", "0", "--cache-dir", str(tmp_path / "cache")]
    proc = subprocess.run([*argv, "--expect-max-temp", "1MB for K<=64, cpu=1kB for K>=100000"],
                          capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert f"expected max temp 1MB for K<=64, found held at the 2 sizes compiled where K<=64; {BETWEEN}" \
        in " ".join(proc.stderr.split())
    assert f"expected max temp 1kB for K>=100000, {NOWHERE}" in " ".join(proc.stderr.split())
    proc = subprocess.run([*argv, "--expect-max-temp", "1MB for K=60, 1MB for K=64"], capture_output=True,
                          text=True, env=dict(os.environ), timeout=300)
    assert proc.returncode == 0, proc.stderr
