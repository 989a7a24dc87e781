"""The built documentation site: its inventory carries the guide's stable labels,
and another project links to them through intersphinx.

Runs against ``JAXHLO_DOCS_HTML`` and is skipped without it.  CI runs it through
``nox -s site`` after ``nox -s docs`` (see ``.ci/run``).  Locally::

    sphinx-build -M html docs docs/_build -W --keep-going -n   # or: nox -s docs
    JAXHLO_DOCS_HTML=docs/_build/html python -m pytest tests/test_site.py
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

DOCS = os.environ.get("JAXHLO_DOCS_HTML")
pytestmark = pytest.mark.skipif(not DOCS, reason="set JAXHLO_DOCS_HTML to a built docs folder (nox -s docs)")

#: Labels other projects may link to; renaming one breaks their links.
STABLE_LABELS = [
    "jaxhlo-home", "jaxhlo-quickstart", "jaxhlo-guide", "jaxhlo-hlo-primer", "jaxhlo-linking",
    "jaxhlo-directive", "jaxhlo-config", "jaxhlo-warnings", "jaxhlo-targets", "jaxhlo-security",
]


def rounding(shown: str) -> float:
    """How far, relatively, a size as a bar shows it (``1.1 GB``, ``403 MB``) may be from the
    exact figure: half a unit of its last digit."""
    number = shown.split()[0].replace(",", "")
    decimals = len(number.partition(".")[2])
    return 0.5 * 10 ** -decimals / float(number) if float(number) else 0.0


def chart_mismatches(html: str) -> tuple[int, list[str]]:
    """Every bar of every variants chart against its table's cell: the number of bars
    checked, and what disagrees: a bar whose value is not the cell's, a bar with no
    cell, a panel whose title does not name its measure or whose bars are not all of
    that measure (one measure per axis), a ratio that is not to the smallest bar of
    its target.  Pure bs4."""
    from bs4 import BeautifulSoup

    from sphinx_jaxhlo.core.sizes import parse_size

    soup = BeautifulSoup(html, "html.parser")
    checked, wrong = 0, []
    for figure in soup.select("figure.jaxhlo-bars"):
        table = figure.find_previous("table", class_="jaxhlo-variants")
        if table is None:
            wrong.append("a chart without a variants table")
            continue
        targets = [th.get_text(strip=True) for th in table.select("thead th")][1:]
        cells = {}
        for row in table.select("tbody tr"):
            tds = [td.get_text(" ", strip=True) for td in row.find_all("td")]
            for title, text in zip(targets, tds[1:], strict=False):
                cells[(tds[0], title)] = text.split(", ")[0]
        for panel in figure.select(".jaxhlo-bars-panel"):
            measure = panel.get("data-measure", "")
            title = panel.select_one(".jaxhlo-bars-title").get_text(strip=True)
            if not title.startswith({"device": "HBM held on ", "temp": "Temp memory on "}.get(measure, "?")):
                wrong.append(f"panel {title!r} of measure {measure!r}")
            target, fn = "", ""
            bars: dict[str, list[tuple[float, str | None, float]]] = {}
            for el in panel.select_one(".jaxhlo-bars-grid").find_all("div", recursive=False):
                classes = el.get("class") or []
                if "jaxhlo-bar-target" in classes:
                    target = el.get_text(strip=True)
                elif "jaxhlo-bar-label" in classes:
                    fn = el.get_text(strip=True)
                elif "jaxhlo-bar-value" in classes:
                    checked += 1
                    value = el.get_text(strip=True)
                    shown, _, ratio = value.partition(" (")
                    cell = cells.get((fn, target))
                    if cell != ("HBM held " if measure == "device" else "") + shown:
                        wrong.append(f"{fn} on {target} in the {measure} panel: bar {shown!r}, table {cell!r}")
                    bars.setdefault(target, []).append((parse_size(shown.replace(" ", "")),
                                                        ratio.removesuffix("×)") or None, rounding(shown)))
            for target, found in bars.items():
                positive = [(v, r) for v, _, r in found if v > 0]
                smallest, smallest_rounding = min(positive, default=(0, 0.0))
                for value, ratio, value_rounding in found:
                    if len(positive) < 2 or not value:
                        if ratio is not None:
                            wrong.append(f"{target}: a ratio with nothing to compare ({ratio})")
                        continue
                    if ratio is None:
                        wrong.append(f"{target}: {value} has no ratio to the smallest, {smallest}")
                        continue
                    # the ratio is of the exact figures; the bar shows it and them rounded (1.0 MB, 1,024×):
                    # half a unit of the last digit of each, and 1 % for the products of those errors
                    allowed = 0.01 + value_rounding + smallest_rounding + rounding(ratio)
                    if abs(float(ratio.replace(",", "")) * smallest / value - 1) > allowed:
                        wrong.append(f"{target}: {value} is not {ratio} times the smallest, {smallest}")
    return checked, wrong


def test_every_chart_of_the_site_draws_what_its_table_shows() -> None:
    root = Path(DOCS or "")
    checked, wrong = 0, []
    for page in sorted(root.rglob("*.html")):
        n, bad = chart_mismatches(page.read_text(encoding="utf-8"))
        checked += n
        wrong += [f"{page.relative_to(root)}: {w}" for w in bad]
    assert checked >= 10 and not wrong, wrong


def inventory() -> dict[str, dict[str, object]]:
    from sphinx.util.inventory import InventoryFile

    path = Path(DOCS or "") / "objects.inv"
    with path.open("rb") as f:
        inv = InventoryFile.load(f, "https://example.invalid/jaxhlo/", lambda base, uri: base + uri)
    data = inv.data if hasattr(inv, "data") else inv
    return {kind: dict(items) for kind, items in data.items()}


def test_inventory_carries_the_stable_labels() -> None:
    labels = inventory()["std:label"]
    missing = [label for label in STABLE_LABELS if label not in labels]
    assert not missing, f"labels missing from objects.inv: {missing}"
    guide = [label for label in labels if label.startswith("jaxhlo-guide-")]
    assert len(guide) >= 4, guide


def test_the_inventory_shipped_in_the_package_is_this_sites() -> None:
    """``sphinx_jaxhlo/inventory/objects.inv`` (``sphinx_jaxhlo.inventory()``) lists the labels
    and pages of the site just built: copy the site's file there when this fails."""
    from sphinx.util.inventory import InventoryFile

    import sphinx_jaxhlo

    with open(sphinx_jaxhlo.inventory(), "rb") as f:
        shipped = InventoryFile.load(f, "https://example.invalid/jaxhlo/", lambda base, uri: base + uri)
    data = shipped.data if hasattr(shipped, "data") else shipped
    assert {kind: set(items) for kind, items in data.items()} == \
        {kind: set(items) for kind, items in inventory().items()}


def test_a_project_links_to_the_guide_through_intersphinx(tmp_path: Path) -> None:
    from sphinx.testing.util import SphinxTestApp

    src = tmp_path / "src"
    src.mkdir()
    inv = (Path(DOCS or "") / "objects.inv").resolve()
    (src / "conf.py").write_text(
        'extensions = ["sphinx.ext.intersphinx"]\n'
        f'intersphinx_mapping = {{"jaxhlo": ("https://sphinx-jaxhlo.example/en/latest/", {str(inv)!r})}}\n')
    # The "See also" snippet that docs/linking.md offers for the jax.jit docstring.
    (src / "index.rst").write_text(
        "jit\n===\n\n.. seealso::\n\n"
        "   :ref:`jaxhlo:jaxhlo-guide` explains when XLA fuses a reduction with the operation\n"
        "   that produces its input, and how to check it for your own function.\n\n"
        "And a section: :ref:`jaxhlo:jaxhlo-guide-decision-table`.\n")
    app = SphinxTestApp("html", srcdir=src, builddir=tmp_path / "build")
    try:
        app.build()
        warnings = app.warning.getvalue()
    finally:
        app.cleanup()
    assert "undefined label" not in warnings, warnings
    html = (Path(app.outdir) / "index.html").read_text()
    hrefs = re.findall(r'href="(https://sphinx-jaxhlo\.example/en/latest/[^"]+)"', html)
    assert any("guide" in h for h in hrefs), hrefs
    assert len(hrefs) == 2


def test_the_guide_keeps_the_seeds_20_gb_intermediate_red_and_its_pages_light() -> None:
    from bs4 import BeautifulSoup

    root = Path(DOCS or "")
    seed = BeautifulSoup((root / "guide" / "seed.html").read_text(encoding="utf-8"), "html.parser")
    block = seed.find(id="jaxhlo-example-seed")
    assert block is not None
    red = block.select("p.jaxhlo-callout.jaxhlo-bad")
    assert red and all("20.0 GB" in p.get_text() for p in red)
    # no example of the site inlines its module texts, and none outweighs the budget
    for page in root.rglob("*.html"):
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for example in soup.select("div.jaxhlo"):
            # 68 KiB: an unfused reduction's finding carries its reason, the guide's
            # alternatives and the compiler's record, and a comparison of variants leads
            # with what differs between them (the seed: 3 functions, 9 panels, 66 kB); a
            # sweep draws every size bisection compiled too, and lists the flips it located
            # (the guide's seed sweep: 2 functions on 2 targets at 47 sizes, 74 kB); what is live at
            # the peak (:findings: peak) draws a timeline and two tables per function and target
            # (the remat page's pair on three targets: 94 kB); each unfused reduction names the
            # guide's rule that explains it (the seed: 70 kB); a comparison of many variants (the
            # bounded page's ladder: up to 18 reports, each a folded table of fusions and one of
            # stored buffers) weighs about 6.5 kB a report
            reports = len(example.select(".jaxhlo-fusions"))
            budget = max(100 if example.select_one("svg.jaxhlo-timeline-svg") else
                         80 if example.select_one("svg.jaxhlo-sweep-svg") else 72, 6.5 * reports)
            assert len(str(example).encode()) <= budget * 1024, f"{page.relative_to(root)}#{example.get('id')}"
            assert "HloModule" not in str(example)
            # a chunking's code is shown once in an example, whatever the targets that suggest it
            codes = [c.get_text() for c in example.select(".jaxhlo-suggested-code")]
            assert len(codes) == len(set(codes)), f"{page.relative_to(root)}#{example.get('id')}"


def test_every_example_of_the_home_page_and_the_guide_shows_its_source() -> None:
    """The findings name source lines: the reader sees them, and each line a finding names
    links to a line of the listing."""
    from bs4 import BeautifulSoup

    root = Path(DOCS or "")
    examples = links = 0
    for page in [root / "index.html", *sorted((root / "guide").glob("*.html"))]:
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for block in soup.select("div.jaxhlo"):
            examples += 1
            source = block.select_one("div.jaxhlo-source")
            assert source is not None, f"{page.relative_to(root)}#{block.get('id')} hides its source"
            for a in block.select('.jaxhlo-callout a[href^="#"]'):  # a line of the listing (a rule links its page)
                links += 1
                line = source.select_one(f'[id="{a["href"][1:]}"]')
                assert line is not None and line.select_one(".linenos").get_text(strip=True) == a.get_text(), a
    assert examples >= 40 and links >= 40, (examples, links)


def test_the_drift_page_counts_what_it_did_not_compare() -> None:
    """An older release that predates most examples leaves hundreds of slots not compared: the
    page names a few examples for each reason and counts the rest (a paragraph listing every
    slot was 110,000 characters on one line, more than pdflatex reads)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((Path(DOCS or "") / "drift.html").read_text(encoding="utf-8"), "html.parser")
    reasons = [li for li in soup.select("li") if re.match(r"(only the|the older|the example changed)",
                                                          li.get_text(" ", strip=True))]
    assert reasons
    for item in reasons:
        text = " ".join(item.get_text(" ", strip=True).split())
        counted = re.match(r".*?: (\d+) examples? \((\d+) compiles? of a function for a target\)", text)
        assert counted, text
        named = len(item.select("code"))
        assert 1 <= named <= 8 and len(text) < 1000, text
        more = re.search(r"and (\d+) more\.$", text)
        assert named + (int(more.group(1)) if more else 0) == int(counted.group(1)), text
