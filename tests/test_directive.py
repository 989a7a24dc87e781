"""The jax-hlo directive end to end, through Sphinx test roots (CPU target)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from conftest import with_texts


def build(app: Any) -> tuple[BeautifulSoup, str]:
    """The page (with the module texts it loads on demand put in place) and the warnings."""
    app.build()
    page = Path(app.outdir) / "index.html"
    return with_texts(BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser"), page), app.warning.getvalue()


def records(app: Any) -> list[Any]:
    from sphinx_jaxhlo.sphinxext.state import document_data

    return document_data(app.env).all_records()


@pytest.fixture
def cache_dir(tmp_path: Path) -> str:
    return str(tmp_path / "cache")


@pytest.mark.sphinx("html", testroot="basic")
def test_seed_example_on_cpu(app: Any) -> None:
    soup, warnings = build(app)
    assert "jaxhlo" not in warnings, warnings
    block = soup.select("div.jaxhlo")[0]
    text = block.get_text(" ")
    # the materialized 20 GB intermediate heads the list, with its producer
    rows = block.select("div.jaxhlo-table-box table.jaxhlo-materialized tbody tr")
    first = [td.get_text(" ", strip=True) for td in rows[0].find_all("td")]
    assert first[0] == "f32[50000,100000]" and first[1] == "20.0 GB"
    assert re.search(r"dot_general|cos", first[2])
    # the reduction reads it, and the page says so in words, in red: 20 GB against 1.8 MB of arguments
    red = [td.get_text(" ", strip=True) for td in block.select("table.jaxhlo-reductions tbody tr")[0].find_all("td")]
    assert red[3] == "unfused" and "20.0 GB" in red[2]
    (problem,) = block.select("p.jaxhlo-callout.jaxhlo-bad")
    assert problem.get_text().startswith("Unfused reduction: the f32[50000,100000] result of")
    assert "is stored in memory before the reduction on line 4 (reduce_sum) reads it" in problem.get_text()
    # beside it, why (derived from the HLO: the CPU's YNN fusion leaves the cosine out) and what to write
    # instead: in a site without this package's guide the alternatives are their titles, with no warning
    (why,) = block.select("p.jaxhlo-reason")
    assert "YNN" in why.get_text() and why.get_text().endswith("(derived from the HLO)")
    (alternatives,) = block.select("p.jaxhlo-alternatives")
    assert "lax.scan over chunks" in alternatives.get_text() and not alternatives.find("a")
    assert "undefined label" not in warnings
    # the signature it was compiled with, arguments named from the source
    assert block.select_one(".jaxhlo-signature").get_text(" ", strip=True).startswith(
        "Compiled phase_sum(pos: f32[100000,3], hkl: f32[50000,3]) for CPU")
    # memory figures with units and exact bytes
    mem = {tr.find_all("td")[0].get_text(strip=True): tr.find_all("td")[2].get_text(strip=True)
           for tr in block.select("table.jaxhlo-memory tbody tr")}
    assert mem["temp"] == "20,000,000,000 bytes"
    assert mem["arguments"] == "1,800,000 bytes"
    # source with line numbers, cost, collapsed HLO (a file of its own), footer with versions
    assert block.select_one("div.highlight-python") is not None
    assert "flops" in block.select_one("table.jaxhlo-cost").get_text()
    details = next(d for d in block.select("details.jaxhlo-details") if "Optimized HLO" in d.summary.get_text())
    assert not details.has_attr("open")
    assert "ENTRY" in details.get_text() and "HloModule" in details.get_text()
    assert "HloModule" not in (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert "Compiled for" in block.select_one("p.jaxhlo-footer").get_text() and "jax 0." in text
    # expectations are listed as holding
    assert len(block.select("li.jaxhlo-pass")) == 3
    # :name: and :caption: give a label that :ref: and :numref: resolve
    assert block.get("id") == "seed-dot"
    links = soup.select('a[href="#seed-dot"]')
    assert [a.get_text() for a in links] == ["The seed, with jnp.dot", "Example 1"]


@pytest.mark.sphinx("html", testroot="basic")
def test_keyword_and_static_arguments(app: Any) -> None:
    soup, _ = build(app)
    second = soup.select("div.jaxhlo")[1]
    assert "scaled" in second.get_text() and "HloModule jit_scaled" in second.get_text()
    recs = [r for r in records(app) if r.function == "scaled"]
    assert recs and recs[0].status == "ok"


@pytest.mark.sphinx("html", testroot="myst")
def test_myst_directive_and_located_errors(app: Any) -> None:
    soup, warnings = build(app)
    assert soup.select("div.jaxhlo")[0].get("id") == "myst-seed"
    # expectation failure: a warning at the directive's line and a mark on the page
    assert re.search(r"index\.md:3: WARNING: jax-hlo: phase_sum on cpu: expected max temp 1MiB, "
                     r"found temp 20\.0 GB .*\[jaxhlo\.expectation\]", warnings), warnings
    assert soup.select("div.jaxhlo-checks-failed li.jaxhlo-fail")
    # an exception inside the example is located at its own line in the document
    assert re.search(r"index\.md:21: WARNING: jax-hlo: while tracing broken: NameError", warnings), warnings
    assert soup.select("div.jaxhlo")[1].select_one(".jaxhlo-bad")
    assert "Between." in soup.get_text()


@pytest.mark.sphinx("html", testroot="basic", freshenv=True)
def test_warning_fails_build_with_W(app: Any, tmp_path: Path) -> None:
    from sphinx.testing.util import SphinxTestApp

    src = Path(app.srcdir)
    (src / "index.rst").write_text(".. jax-hlo::\n   :args: f32[3]\n   :expect-max-temp: 0\n\n"
                                   "   def f(x):\n       return x @ x.T + x\n", encoding="utf-8")
    strict = SphinxTestApp("html", srcdir=src, builddir=tmp_path / "build", warningiserror=True,
                           confoverrides={"jaxhlo_cache_dir": str(tmp_path / "cache")})
    try:
        strict.build()
        assert strict.statuscode == 1
    finally:
        strict.cleanup()


ERROR_CASES = {
    # case: (warning subtype, example line the warning points at, or None for the directive's line)
    "empty": ("empty", None),
    "comments": ("empty", None),
    "syntax": ("syntax", 1),
    "import": ("example", 1),
    "nameerror": ("example", 1),
    "trace": ("trace", 4),
    "notfound": ("function", None),
    "badargs": ("args", None),
    "wrongcount": ("args", None),
    "badsize": ("option", None),
    "compile": ("compile", None),
}


def case_lines(source: str) -> dict[str, tuple[int, int]]:
    """case -> (line of its directive, document line of its first content line)."""
    lines = source.splitlines()
    out: dict[str, tuple[int, int]] = {}
    for i, line in enumerate(lines):
        if line.startswith("Case "):
            name = line.split()[1]
            directive = next(j for j in range(i, len(lines)) if lines[j].startswith(".. jax-hlo::"))
            content = next(j for j in range(directive + 1, len(lines)) if not lines[j].startswith("   :"))
            out[name] = (directive + 1, content + 2)
    return out


@pytest.mark.sphinx("html", testroot="errors")
def test_each_error_is_located_boxed_and_the_rest_renders(app: Any) -> None:
    soup, warnings = build(app)
    lines = case_lines((Path(app.srcdir) / "index.rst").read_text(encoding="utf-8"))
    for case, (subtype, example_line) in ERROR_CASES.items():
        directive_line, first = lines[case]
        line = directive_line if example_line is None else first + example_line - 1
        pattern = rf"index\.rst:{line}: WARNING: jax-hlo: [^\n]*\[jaxhlo\.{subtype}\]"
        assert re.search(pattern, warnings), f"{case}: no {pattern!r} in\n{warnings}"
        section = soup.find("section", id=f"case-{case}")
        assert section is not None
        assert section.select_one(".jaxhlo-error, .jaxhlo-bad, .jaxhlo-oom"), f"{case}: no error shown in the page"
        assert f"After {case}." in section.get_text()
    assert warnings.count("[jaxhlo.") == len(ERROR_CASES), warnings
    good = soup.find("section", id="good")
    assert "HloModule jit_good" in good.get_text() and good.select("li.jaxhlo-pass")


@pytest.mark.sphinx("html", testroot="basic")
def test_build_report_tables_every_example(app: Any) -> None:
    soup, _ = build(app)
    table = soup.select_one("table.jaxhlo-report")
    header = [th.get_text(strip=True) for th in table.select("thead th")]
    assert header == ["document", "line", "function", "target", "compile time", "memory (temp; HBM held on a TPU)",
                      "report from", "status", "guide's rule"]
    rows = [[td.get_text(strip=True) for td in tr.find_all("td")] for tr in table.select("tbody tr")]
    assert [(r[0], r[2], r[3], r[7]) for r in rows] == [
        ("index", "phase_sum", "cpu", "ok"), ("index", "scaled", "cpu", "ok")]
    assert rows[0][5] == "20.0 GB"


@pytest.mark.sphinx("html", testroot="basic", freshenv=True)
def test_an_expectation_for_a_target_not_compiled_is_flagged(app: Any) -> None:
    src = Path(app.srcdir)
    (src / "index.rst").write_text(".. jax-hlo::\n   :args: f32[3]\n   :targets: cpu\n"
                                   "   :expect-max-temp: gpu:h100=1kB\n\n   def f(x):\n       return x + 1\n",
                                   encoding="utf-8")
    _, warnings = build(app)
    assert re.search(r"index\.rst:1: WARNING: jax-hlo: an expectation names gpu:h100, which this example does "
                     r"not compile for \(its targets: cpu\): the claim is not checked \[jaxhlo\.expectation\]",
                     warnings), warnings
