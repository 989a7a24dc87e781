"""The rendered pages in a real browser (headless Chromium through Playwright).

Skipped when Chromium or Playwright is missing; CI installs both and runs this
module through ``nox -s site`` after ``nox -s docs`` (see ``.ci/run``), with
``JAXHLO_DOCS_HTML`` set, so the guide pages are checked too (without it, only
the test project's pages are).  Screenshots, for a person to look at, are
taken only when ``JAXHLO_SCREENSHOTS`` names a folder for them.  Locally::

    apt-get install chromium                                   # Debian's browser
    sphinx-build -M html docs docs/_build -W --keep-going -n   # or: nox -s docs
    JAXHLO_DOCS_HTML=docs/_build/html JAXHLO_SCREENSHOTS=docs/_build/screenshots \\
        python -m pytest tests/test_browser.py -v
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import CHROMIUM, CUT_LABELS_JS, Server, open_page, screenshot

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")


def check_example_page(browser: Any, url: str, name: str, schemes: tuple[str, ...] = ("light", "dark")) -> None:
    """The page's collapsed blocks, tabs (mouse, keyboard, the choice kept across a reload) and console, in
    each of ``schemes``."""
    for scheme in schemes:
        page, errors = open_page(browser, url, scheme, height=1600)
        # collapsed blocks (the HLO, the checked expectations) open when their summary is clicked
        every = page.locator("details.jaxhlo-details")
        visible = [every.nth(i) for i in range(every.count())
                   if every.nth(i).is_visible() and every.nth(i).get_attribute("open") is None]
        assert visible, "no collapsed block to open"
        for details in (visible[0], *[d for d in visible[1:] if "Optimized HLO" in d.inner_text()][:1]):
            body = details.locator(":scope > :not(summary)").first
            assert not body.is_visible()
            details.locator(":scope > summary").click()
            assert details.get_attribute("open") is not None
            assert body.is_visible()
        tabsets = page.locator(".jaxhlo-tabs")
        if tabsets.count():
            first = tabsets.first
            tabs = first.locator("[role=tab]")
            assert tabs.count() >= 2
            panels = first.locator("[role=tabpanel]")
            assert panels.nth(0).is_visible() and not panels.nth(1).is_visible()
            tabs.nth(1).click()
            assert tabs.nth(1).get_attribute("aria-selected") == "true"
            assert panels.nth(1).is_visible() and not panels.nth(0).is_visible()
            # keyboard: arrow keys move between tabs
            tabs.nth(1).press("ArrowLeft")
            assert tabs.nth(0).get_attribute("aria-selected") == "true"
            tabs.nth(1).click()
            key = tabs.nth(1).get_attribute("data-key")
            # the choice sticks across the examples of the page, and across a reload
            for i in range(tabsets.count()):
                selected = tabsets.nth(i).locator(f'[role=tab][data-key="{key}"]')
                if selected.count():
                    assert selected.get_attribute("aria-selected") == "true"
            page.reload()
            page.wait_for_load_state("load")
            again = page.locator(".jaxhlo-tabs").first.locator(f'[role=tab][data-key="{key}"]')
            assert again.get_attribute("aria-selected") == "true"
        screenshot(page, f"{name}-{scheme}.png", full_page=True)
        assert not errors, errors
        page.close()


def test_example_page_in_chromium(browser: Any, tmp_path: Path) -> None:
    from sphinx.testing.util import SphinxTestApp

    src = tmp_path / "src"
    shutil.copytree(Path(__file__).parent / "roots" / "test-browser", src)
    app = SphinxTestApp("html", srcdir=src, builddir=tmp_path / "build")
    try:
        app.build()
    finally:
        app.cleanup()
    server = Server(Path(app.outdir))
    try:
        check_example_page(browser, server.url(Path(app.outdir) / "index.html"), "test-browser")
    finally:
        server.close()


@pytest.mark.skipif(not os.environ.get("JAXHLO_DOCS_HTML"), reason="set JAXHLO_DOCS_HTML to a built docs folder")
def test_guide_pages_in_chromium(browser: Any) -> None:
    """Every guide page with examples, light; the first also dark.  The scheme changes colours, not what
    the page does: every example's fit in the dark scheme is checked on three pages at two widths below."""
    root = Path(os.environ["JAXHLO_DOCS_HTML"]).resolve()
    pages = [root / "index.html", *sorted((root / "guide").glob("*.html"))]
    server = Server(root)
    checked = 0
    try:
        for html in pages:
            page, _ = open_page(browser, server.url(html), height=1600)
            has_examples = page.locator("details.jaxhlo-details").count() > 0
            page.close()
            if has_examples:
                name = html.relative_to(root).as_posix().replace("/", "-").removesuffix(".html")
                check_example_page(browser, server.url(html), name, ("light", "dark") if not checked else ("light",))
                checked += 1
    finally:
        server.close()
    assert checked >= 2


# -- nothing cut, and the line links ----------------------------------------------------------------

#: For each example: what overflows its box without showing that it scrolls.  A listing of the
#: example's source, a suggested rewrite's code and the side-by-side and variants tables must
#: fit (they wrap and reflow);
#: other boxes (module texts, detail tables, graphs) may scroll, with a scrollbar drawn or, where
#: scrollbars are hidden, the shadows jaxhlo.css draws on the edges that have more to see.
OVERFLOW_JS = """
(block) => {
  const problems = [];
  const name = (el) => el.tagName.toLowerCase() + (typeof el.className === "string" && el.className.trim()
      ? "." + el.className.trim().split(/\\s+/).join(".") : "") + " " + (el.textContent || "").trim().slice(0, 50);
  if (block.scrollWidth > block.clientWidth + 1) { problems.push("the example is wider than its box"); }
  const box = block.getBoundingClientRect();
  const column = block.parentElement.getBoundingClientRect();
  if (box.right > column.right + 1 || box.left < column.left - 1) { problems.push("the example leaves the column"); }
  for (const el of block.querySelectorAll("*")) {
    if (!el.getClientRects().length || el.clientWidth === 0) { continue; }
    if (el.scrollWidth <= el.clientWidth + 1) { continue; }
    const ox = getComputedStyle(el).overflowX;
    const mustFit = el.matches(".jaxhlo-source pre, .jaxhlo-suggested-code pre")
        || !!el.querySelector(":scope > table.jaxhlo-compare, :scope > table.jaxhlo-variants");
    if (mustFit) {
      problems.push("does not fit (" + el.scrollWidth + " > " + el.clientWidth + "): " + name(el));
    } else if (ox === "hidden" || ox === "clip") {
      problems.push("cut off (" + ox + "): " + name(el));
    } else if (ox === "visible") {
      // content may spill over a neighbour inside the example (a chart's last tick label), not out of it
      if (el.getBoundingClientRect().left + el.scrollWidth > box.right + 1) {
        problems.push("sticks out of the example: " + name(el));
      }
    } else if (el.offsetHeight - el.clientHeight < 4
               && !/local.*scroll/.test(getComputedStyle(el).backgroundAttachment)) {
      // no scrollbar drawn (headless Chromium hides them, as phones do): the box needs its edge shadows
      problems.push("scrolls without showing it: " + name(el));
    }
  }
  if (document.documentElement.scrollWidth > window.innerWidth + 1) { problems.push("the page scrolls sideways"); }
  return problems;
}
"""


def overflow_problems(page: Any) -> tuple[int, list[str]]:
    """Open each example's collapsed blocks in its first tab and check it: (examples, problems)."""
    blocks = page.locator("div.jaxhlo")
    problems: list[str] = []
    for i in range(blocks.count()):
        block = blocks.nth(i)
        summaries = block.locator("details:not([open]) > summary")
        for s in range(summaries.count() - 1, -1, -1):
            if summaries.nth(s).is_visible():
                summaries.nth(s).click()
        page.wait_for_timeout(50)
        problems += [f"example {i} ({block.get_attribute('id')}): {p}" for p in block.evaluate(OVERFLOW_JS)]
    return blocks.count(), problems


GUIDE_PAGES = ("guide/seed", "guide/remat", "guide/sharding")


@pytest.mark.skipif(not os.environ.get("JAXHLO_DOCS_HTML"), reason="set JAXHLO_DOCS_HTML to a built docs folder")
@pytest.mark.parametrize("width", [1280, 420])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_guide_examples_fit_light_and_dark_wide_and_narrow(browser: Any, scheme: str, width: int) -> None:
    """The seed page, the gradient-checkpointing page and the sharding page: every listing,
    table and text of every example fits the column or visibly scrolls (screenshots kept)."""
    root = Path(os.environ["JAXHLO_DOCS_HTML"]).resolve()
    server = Server(root)
    try:
        for name in GUIDE_PAGES:
            page, errors = open_page(browser, server.url(root / f"{name}.html"), scheme, width, height=1000)
            examples, problems = overflow_problems(page)
            assert examples >= 2, name
            first = page.locator("div.jaxhlo").first
            first.scroll_into_view_if_needed()
            screenshot(first, f"fit-{name.replace('/', '-')}-{scheme}-{width}.png")
            assert not problems, f"{name} {scheme} {width}px: {problems[:6]}"
            assert not errors, errors
            if width == 420:
                # the side-by-side table reflows: one block per row, its cells titled with their target
                compare = page.locator("table.jaxhlo-compare").first
                if compare.count():
                    assert compare.evaluate("(t) => getComputedStyle(t).display") == "block"
                    assert compare.evaluate("(t) => getComputedStyle(t.querySelector('td[data-h]'), "
                                            "'::before').content").startswith('"')
            page.close()
    finally:
        server.close()


def test_a_findings_line_link_lands_on_a_highlighted_line(browser: Any, tmp_path: Path) -> None:
    """A finding names the line its buffer came from; the number links to the listing, and
    the line it lands on is highlighted (``:target``, no script needed)."""
    from sphinx.testing.util import SphinxTestApp

    src = tmp_path / "src"
    shutil.copytree(Path(__file__).parent / "roots" / "test-browser", src)
    app = SphinxTestApp("html", srcdir=src, builddir=tmp_path / "build")
    try:
        app.build()
    finally:
        app.cleanup()
    server = Server(Path(app.outdir))
    try:
        for scheme in ("light", "dark"):
            page, errors = open_page(browser, server.url(Path(app.outdir) / "index.html"), scheme, 1280, height=1000)
            link = page.locator("div.jaxhlo-panel:visible .jaxhlo-callout a[href*='-L']").first
            href = link.get_attribute("href")
            assert href and href.startswith("#jaxhlo-"), href
            line = page.locator(f'[id="{href[1:]}"]')
            before = line.evaluate("(el) => getComputedStyle(el).backgroundColor")
            link.click()
            page.wait_for_function("(h) => location.hash === h", arg=href)
            assert line.evaluate("(el) => el.matches(':target') && el.classList.contains('jaxhlo-line')")
            after = line.evaluate("(el) => getComputedStyle(el).backgroundColor")
            assert after != before and after not in ("rgba(0, 0, 0, 0)", "transparent"), (before, after)
            # it is the line the finding names, and it is in view
            assert line.locator(".linenos").inner_text().strip() == link.inner_text().strip()
            assert line.evaluate("(el) => { const r = el.getBoundingClientRect(); "
                                 "return r.top >= 0 && r.bottom <= window.innerHeight; }")
            screenshot(page, f"line-link-{scheme}.png")
            assert not errors, errors
            page.close()
    finally:
        server.close()


# -- the variants chart at any width ----------------------------------------------------------------

CHART_JS = """
(block) => {
  const problems = [];
  const seen = (el) => getComputedStyle(el).display !== "none" && el.getClientRects().length > 0;
  for (const axis of block.querySelectorAll(".jaxhlo-bar-axis")) {
    const spans = [...axis.querySelectorAll("span")].filter(seen);
    if (spans.length < 2) { problems.push("an axis with fewer than two labels"); }
    const boxes = spans.map((s) => s.getBoundingClientRect());
    for (let i = 1; i < boxes.length; i++) {
      if (boxes[i].left < boxes[i - 1].right + 2) {
        problems.push("tick labels overprint: " + spans[i - 1].textContent + " / " + spans[i].textContent);
      }
    }
  }
  for (const label of block.querySelectorAll(".jaxhlo-bar-label")) {
    if (label.scrollWidth > label.clientWidth + 1) { problems.push("a name overflows: " + label.textContent); }
    // each line of a name starts at its start or after an underscore
    const walker = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    let top = null, before = "";
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.length; i++) {
        range.setStart(node, i); range.setEnd(node, i + 1);
        const box = range.getClientRects()[0];
        if (!box) { continue; }
        if (top !== null && box.top > top + 2 && before !== "_") {
          problems.push("a name breaks inside a word: " + label.textContent + " before '" + node.data[i] + "'");
        }
        top = box.top; before = node.data[i];
      }
    }
    const value = label.parentElement.querySelector(".jaxhlo-bar-label ~ .jaxhlo-bar-value");
    const track = label.nextElementSibling;
    for (const other of [track, track && track.nextElementSibling]) {
      if (!other) { continue; }
      const a = label.getBoundingClientRect(), b = other.getBoundingClientRect();
      if (a.right > b.left + 1 && a.left < b.right - 1 && a.bottom > b.top + 1 && a.top < b.bottom - 1) {
        problems.push("a name overlaps its bar or value: " + label.textContent);
      }
    }
  }
  if (block.scrollWidth > block.clientWidth + 1) { problems.push("the example is wider than its box"); }
  return problems;
}
"""


@pytest.mark.parametrize("width", [420, 700, 1280])
def test_the_variants_chart_never_overprints(browser: Any, width: int) -> None:
    """The chart of a comparison of variants with long names, temp and device panels: at any
    width its tick labels never overprint, no name breaks inside a word or runs into its
    bar or value, and nothing leaves the example (the render alone, in the extension's CSS)."""
    from test_variants import remat_results

    from sphinx_jaxhlo.render.example import render_example
    from sphinx_jaxhlo.render.nodes import jaxhlo_block
    from sphinx_jaxhlo.render.standalone_html import nodes_to_html, stylesheet
    from sphinx_jaxhlo.render.view import ExampleView

    functions, targets, results = remat_results()
    long = {"grad_scan": "grad_of_the_stack_without_any_checkpoint",
            "grad_scan_checkpointed": "grad_of_the_stack_with_each_block_checkpointed"}
    renamed = [dataclasses.replace(r, function=long[r.function]) for r in results.values()]
    view = ExampleView(source="", show=["summary"])
    block = jaxhlo_block()
    block.extend(render_example(view, [long[f] for f in functions], targets, renamed))
    page = browser.new_page(viewport={"width": width, "height": 1000})
    try:
        page.set_content(f'<!DOCTYPE html><html><head><meta name="viewport" content="width=device-width">'
                         f"<style>body {{ margin: 0 8px; font-family: sans-serif; }}{stylesheet()}</style></head>"
                         f"<body>{nodes_to_html([block])}</body></html>")
        chart = page.locator("figure.jaxhlo-bars")
        assert chart.count() == 1 and page.locator(".jaxhlo-bars-panel").count() == 2
        problems = page.locator("div.jaxhlo").first.evaluate(CHART_JS)
        screenshot(chart, f"variants-chart-{width}.png")
        assert not problems, problems
        # narrow: a name and its value share a line, the bar has the width under them
        label, value = page.locator(".jaxhlo-bar-label").first, page.locator(".jaxhlo-bar-value").first
        track = page.locator(".jaxhlo-bar-track").first
        if width == 420:
            assert track.bounding_box()["y"] > value.bounding_box()["y"]
            assert track.bounding_box()["width"] > 0.8 * page.locator("figure.jaxhlo-bars").bounding_box()["width"]
        else:
            assert abs(track.bounding_box()["y"] - label.bounding_box()["y"]) < 20
    finally:
        page.close()


# -- a cookbook page: two functions in one sweep, a gradient ---------------------------------------

#: For each sweep map: each function's markers (their shape, outline colour), every text that
#: overprints another or a marker, and whether the picture fits its box.
SERIES_JS = """
(figure) => {
  const svg = figure.querySelector("svg.jaxhlo-sweep-svg");
  const shapes = {};
  const boxes = [];
  for (const g of svg.querySelectorAll("g.jaxhlo-sweep-point")) {
    const mark = g.querySelector("circle, rect, path");
    const corners = mark.tagName === "path" ? (mark.getAttribute("d").match(/[ML]/g) || []).length : 0;
    const key = mark.tagName + corners + " " + getComputedStyle(mark).stroke;
    (shapes[g.dataset.function] = shapes[g.dataset.function] || []).push(key);
    const r = mark.getBoundingClientRect();
    boxes.push({what: "marker of " + g.dataset.function, l: r.left, t: r.top, r: r.right, b: r.bottom});
  }
  const texts = [...svg.querySelectorAll("text")].map((t) => {
    const r = t.getBoundingClientRect();
    return {what: t.textContent, l: r.left, t: r.top, r: r.right, b: r.bottom, h: r.height};
  });
  const overlap = (a, b) => Math.min(a.r, b.r) - Math.max(a.l, b.l) > 0.5
      && Math.min(a.b, b.b) - Math.max(a.t, b.t) > 0.5;
  const overprints = [];
  texts.forEach((a, i) => texts.slice(i + 1).forEach((b) => {
    if (overlap(a, b)) { overprints.push(a.what + " / " + b.what); }
  }));
  for (const label of svg.querySelectorAll("text.jaxhlo-sweep-label")) {
    const r = label.getBoundingClientRect();
    const a = {l: r.left, t: r.top, r: r.right, b: r.bottom};
    boxes.forEach((m) => { if (overlap(a, m)) overprints.push(label.textContent + " / " + m.what); });
  }
  const scroll = figure.querySelector(".jaxhlo-graph-scroll");
  const box = svg.getBoundingClientRect();
  return {shapes, overprints, legend: [...svg.querySelectorAll("text.jaxhlo-sweep-legend")].map((t) => t.textContent),
          fits: scroll.scrollWidth <= scroll.clientWidth + 1 && box.right <= scroll.getBoundingClientRect().right + 1,
          width: box.width, smallest: Math.min(...texts.map((t) => t.h))};
}
"""


@pytest.fixture(scope="module")
def cookbook(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The cookbook test page, built once."""
    from sphinx.testing.util import SphinxTestApp

    tmp = tmp_path_factory.mktemp("cookbook")
    shutil.copytree(Path(__file__).parent / "roots" / "test-cookbook", tmp / "src")
    app = SphinxTestApp("html", srcdir=tmp / "src", builddir=tmp / "build")
    try:
        app.build()
    finally:
        app.cleanup()
    server = Server(Path(app.outdir))
    yield server, Path(app.outdir) / "index.html"
    server.close()


@pytest.mark.parametrize("width", [420, 1280])
def test_a_cookbook_page_tells_each_function_apart(browser: Any, cookbook: Any, width: int) -> None:
    """Two functions in one sweep (one never reduces, one flips from stored to fused) and a
    ``:grad:`` example: each function keeps its marker and colour in every status, its flips
    are named with it, no label overprints another or a marker, the map fits the column at
    420 px as at 1280 px, and the listing shows the reader's code, the gradient's behind a fold."""
    server, index = cookbook
    page, errors = open_page(browser, server.url(index), "light", width, height=1000)
    try:
        figure = page.locator("figure.jaxhlo-graph").first
        found = figure.evaluate(SERIES_JS)
        screenshot(figure, f"cookbook-map-{width}.png")
        shapes = {fn: set(keys) for fn, keys in found["shapes"].items()}
        assert set(shapes) == {"product", "column_sums"}, shapes
        # one marker (shape and colour) per function, whatever its status; two functions, two markers
        assert all(len(keys) == 1 for keys in shapes.values()), shapes
        assert shapes["product"] != shapes["column_sums"], shapes
        assert len(found["shapes"]["column_sums"]) > 3  # the sweep's sizes and bisection's
        assert not found["overprints"], found["overprints"]
        assert found["fits"], found
        assert found["smallest"] >= 7, found  # the text scales with the picture, but stays legible
        assert {"product", "column_sums"} <= set(found["legend"])
        # the flips name their function, and the sizes bisection found
        flips = [li.inner_text() for li in figure.locator("ul.jaxhlo-sweep-flips > li").all()]
        assert flips and all(text.startswith("Flip ") and "(column_sums)" in text.split(":")[0] for text in flips)
        assert "between n=4096 and n=4097 (neighbouring sizes" in flips[0]
        # the gradient: the listing holds the reader's code; the generated variant is folded under it
        grad = page.locator("div.jaxhlo").nth(1)
        listing = grad.locator("div.jaxhlo-source").first
        assert "def mlp_loss(W, x)" in listing.inner_text() and "mlp_loss_grad" not in listing.inner_text()
        fold = grad.locator("details.jaxhlo-details", has_text="generated by :grad:")
        assert fold.count() == 1 and fold.get_attribute("open") is None
        generated = fold.locator("div.jaxhlo-source")
        assert not generated.is_visible()
        fold.locator(":scope > summary").click()
        assert generated.is_visible() and "def mlp_loss_grad(W, x):" in generated.inner_text()
        numbers = [int(n) for n in generated.locator(".linenos").all_inner_texts()]
        assert numbers[0] > len(listing.locator(".linenos").all_inner_texts())  # numbered on from the listing
        assert "What differs between the functions" in grad.inner_text()
        assert "between the variants" not in grad.inner_text()
        assert not overflow_problems(page)[1]
        screenshot(grad, f"cookbook-grad-{width}.png")
        assert not errors, errors
    finally:
        page.close()


# -- the peak view on a page's column ---------------------------------------------------------------

#: For each peak view (``:findings: peak``, opened): each table's width against its box's, and each
#: text of the timeline picture that leaves the picture or is cut (``…``).
PEAK_JS = """
(root) => {
""" + CUT_LABELS_JS + """
  const found = {tables: [], labels: []};
  for (const details of root.querySelectorAll("details")) {
    const summary = details.querySelector(":scope > summary");
    if (!summary || !summary.textContent.startsWith("Live at the peak")) { continue; }
    details.open = true;
    for (const table of details.querySelectorAll("table")) {
      const box = table.closest(".jaxhlo-table-box") || table.parentElement;
      found.tables.push({key: table.className, width: Math.round(table.getBoundingClientRect().width),
                         box: box.clientWidth, column: Math.round(root.getBoundingClientRect().width)});
    }
    for (const svg of details.querySelectorAll("svg.jaxhlo-timeline-svg")) {
      found.labels.push(...cutLabels(svg));
    }
  }
  return found;
}
"""


def peak_page(tmp_path: Path, column: int) -> Path:
    """The peak views of three functions on three targets (the budget's, tests/test_peak.py) in a
    page whose text column is ``column`` px wide (720: a Sphinx theme's at 1280 px; 654: JAX's
    sphinx-book-theme's), or the window less its margins where that is narrower."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from test_peak import BUDGET_PROGRAMS, TARGET_NAMES, corpus_report

    from sphinx_jaxhlo.api.reports import Reports

    parts = [Reports([corpus_report(t, p)], show=["summary"]).to_html() for p in BUDGET_PROGRAMS for t in TARGET_NAMES]
    page = tmp_path / f"peak-{column}.html"
    page.write_text('<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" '
                    'content="width=device-width"></head><body style="margin:0;font:16px/1.5 system-ui,sans-serif">'
                    f'<main style="width:min({column}px,calc(100vw - 32px));margin:0 16px">{"".join(parts)}</main>'
                    "</body></html>", encoding="utf-8")
    return page


@pytest.mark.parametrize("width, column", [(1280, 720), (1280, 654), (420, 720)])
def test_the_peak_view_fits_the_column_and_cuts_no_label(browser: Any, tmp_path: Path, width: int,
                                                          column: int) -> None:
    """At 1280 px every table of the peak view is within the text column (a Sphinx theme's 720 px,
    JAX's 654 px); at 420 px a table wider than the column scrolls inside its box, showing it; no
    label of the timeline leaves its picture or is cut, at either width (screenshots kept)."""
    page_file = peak_page(tmp_path, column)
    server = Server(tmp_path)
    try:
        page, errors = open_page(browser, server.url(page_file), "light", width, height=1000)
        found = page.locator("main").evaluate(PEAK_JS)
        assert len(found["tables"]) == 2 * 9, found["tables"]
        assert not found["labels"], found["labels"]
        widest = max(t["width"] for t in found["tables"])
        print(f"{width} px, column {column}: widest peak table {widest} px in {found['tables'][0]['column']} px")
        if width == 1280:
            assert not [t for t in found["tables"] if t["width"] > t["box"] + 1], found["tables"]
        else:
            assert not [p for p in page.locator("div.jaxhlo").first.evaluate(OVERFLOW_JS)
                        if "peak" in p or "scrolls without" in p], "a peak table scrolls without showing it"
        shown = page.locator("details").filter(has_text="Live at the peak").nth(7)
        shown.scroll_into_view_if_needed()
        screenshot(shown, f"peak-{width}-{column}.png")
        assert not errors, errors
        page.close()
    finally:
        server.close()


@pytest.mark.skipif(not os.environ.get("JAXHLO_DOCS_HTML"), reason="set JAXHLO_DOCS_HTML to a built docs folder")
@pytest.mark.parametrize("width", [1280, 420])
def test_the_guide_peak_views_fit_their_column(browser: Any, width: int) -> None:
    """The guide's pages with ``:findings: peak`` (remat, bounded): at 1280 px no table of a peak
    view is wider than its column; at either width no label of a timeline leaves it or is cut."""
    root = Path(os.environ["JAXHLO_DOCS_HTML"]).resolve()
    server = Server(root)
    try:
        for name in ("guide/remat", "guide/bounded"):
            page, errors = open_page(browser, server.url(root / f"{name}.html"), "light", width, height=1000)
            for i in range(page.locator("div.jaxhlo").count()):
                block = page.locator("div.jaxhlo").nth(i)
                tabs = block.locator("[role=tab]")
                for tab in range(max(1, tabs.count())):  # every target's panel, shown
                    if tabs.count():
                        tabs.nth(tab).click()
                    found = block.evaluate(PEAK_JS)
                    assert not found["labels"], (name, found["labels"])
                    if width == 1280:
                        wide = [t for t in found["tables"] if t["width"] > t["box"] + 1]
                        assert not wide, (name, wide)
            # the TPU's memory table: its labels wrap, its figures stay in view (remat's unrolled chain)
            memory = page.locator("table.jaxhlo-memory")
            for i in range(memory.count()):
                table = memory.nth(i)
                if table.evaluate("(t) => t.closest('details') !== null"):
                    table.evaluate("(t) => { t.closest('details').open = true; }")
                fit = table.evaluate("(t) => t.offsetParent === null || "
                                     "t.getBoundingClientRect().width <= t.parentElement.clientWidth + 1")
                assert fit, f"{name}: a memory table is wider than its box at {width} px"
            assert not errors, errors
            page.close()
    finally:
        server.close()
