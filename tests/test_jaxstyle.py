"""Pages of the kind JAX's own documentation publishes, built as JAX builds its docs.

``tests/roots/test-jaxstyle`` has four pages in MyST with sphinx-book-theme (a
gradient-checkpointing page with what is live at the peak, an ahead-of-time
compilation page, an attention page, a cookbook page sweeping ``jacfwd`` and
``jacrev``), every example compiled for the CPU, an H100 and a TPU v5e.  The tests
check what a reader relies on: the compiled signature on every example, the
``:show:`` order, red only where stored data is large, the page-weight budgets
(the peak views' apart), no paragraph nobody asked for, module texts in files of
their own that load from ``file://`` and over HTTP, and, in headless Chromium,
that nothing is cut off in sphinx-book-theme or in alabaster, light or dark, and
that at 1280 px no table is wider than the text column and no label of a picture
is cut.  Screenshots are taken only when ``JAXHLO_SCREENSHOTS`` names a folder
for them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup, Tag
from conftest import CUT_LABELS_JS, Server, module_texts, open_page, screenshot

from sphinx_jaxhlo.core.sizes import parse_size

pytest.importorskip("sphinx_book_theme", reason="sphinx-book-theme is not installed")
pytest.importorskip("myst_nb", reason="myst-nb is not installed")
pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent / "roots" / "test-jaxstyle"
#: What one example compiled for three targets may add to its page, in bytes (its peak views apart).
PAGE_BUDGET = 60_000
#: What the peak views (``:findings: peak``) of an example of three functions on three targets may add.
PEAK_BUDGET = 50_000
#: The pages of the root.
PAGES = ("gradient-checkpointing", "aot", "attention", "autodiff-cookbook")


@dataclass
class Site:
    out: Path
    warnings: str

    def page(self, name: str) -> BeautifulSoup:
        return BeautifulSoup((self.out / f"{name}.html").read_text(encoding="utf-8"), "html.parser")

    def block(self, name: str, example_id: str) -> Tag:
        found = self.page(name).find("div", id=example_id)
        assert isinstance(found, Tag), f"no example {example_id} on {name}"
        return found


def build(tmp: Path, cache: Path, conf: str = "") -> Site:
    """Build the pages in a process of their own (MyST-NB's set-up does not mix with the
    other test roots' in one process), with ``conf`` added to ``conf.py``."""
    src = tmp / "src"
    shutil.copytree(ROOT, src)
    if conf:
        (src / "conf.py").write_text((src / "conf.py").read_text() + "\n" + conf + "\n")
    out, warnings = tmp / "html", tmp / "warnings.txt"
    run = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-w", str(warnings),
                          "-d", str(tmp / "doctrees"), "-D", f"jaxhlo_cache_dir={cache}", str(src), str(out)],
                         capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return Site(out, warnings.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("jaxstyle-cache")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> Site:
    return build(tmp_path_factory.mktemp("jaxstyle-book"), cache)


@pytest.fixture(scope="module")
def alabaster(tmp_path_factory: pytest.TempPathFactory, cache: Path, site: Site) -> Site:
    """The same pages in Sphinx's default theme (the reports come from the cache)."""
    return build(tmp_path_factory.mktemp("jaxstyle-alabaster"), cache,
                 'html_theme = "alabaster"\nhtml_theme_options = {}\nhtml_context = {}')


def test_the_pages_build_without_warnings_from_the_extension(site: Site) -> None:
    assert "jax-hlo" not in site.warnings and "[jaxhlo" not in site.warnings, site.warnings
    for page in PAGES:
        assert site.page(page).select("div.jaxhlo"), page


def peak_views(block: Tag) -> list[Tag]:
    return [d for d in block.select("details") if d.summary and d.summary.get_text().startswith("Live at the peak")]


def test_no_paragraph_nobody_asked_for_on_the_checkpointing_and_cookbook_pages(site: Site) -> None:
    """Neither page asks for ``:chunk:`` nor names a memory problem: no word about chunking,
    and no place in a file the page does not have."""
    for page in ("gradient-checkpointing", "autodiff-cookbook"):
        words = text(site.page(page).select_one("article") or site.page(page))
        assert "chunk" not in words.lower() and "example.py" not in words, page


# -- what a reader sees first ---------------------------------------------------------------------

SIGNATURES = {
    ("gradient-checkpointing", "jaxstyle-remat"): [
        f"{fn}(w1s: f32[8,512,2048], w2s: f32[8,2048,512], x: f32[2048,512])"
        for fn in ("grad_plain", "grad_remat", "grad_save_dots")],
    ("aot", "jaxstyle-aot"): ["power_sum(x: f32[1024,256], n=7)"],
    ("attention", "jaxstyle-attention"): [
        f"{fn}(q: bf16[4,2048,8,64], k: bf16[4,2048,8,64], v: bf16[4,2048,8,64])" for fn in ("attention", "library")],
}


def text(element: Tag) -> str:
    return " ".join(element.get_text(" ").split())


def test_every_example_states_the_signature_it_was_compiled_with(site: Site) -> None:
    for (page, example), signatures in SIGNATURES.items():
        block = site.block(page, example)
        signature = block.select_one(".jaxhlo-signature")
        assert signature is not None
        # it comes first, right under the caption
        assert block.find(class_="jaxhlo-signature") is block.select(".jaxhlo-signature, .jaxhlo-table-title, "
                                                                     ".jaxhlo-tabs, .jaxhlo-source")[0]
        codes = [text(c) for c in signature.select("code")]
        assert codes == signatures, codes
        assert "for CPU, H100 and TPU v5e" in text(signature)
    # the static value of the second AOT example, compiled for the CPU only
    other = [b for b in site.page("aot").select("div.jaxhlo") if b.get("id") != "jaxstyle-aot"]
    assert [text(c) for c in other[0].select(".jaxhlo-signature code")] == ["power_sum(x: f32[1024,256], n=3)"]
    assert "for CPU," in text(other[0].select_one(".jaxhlo-signature"))
    # every example of every page has one
    for page in ("gradient-checkpointing", "aot", "attention"):
        for block in site.page(page).select("div.jaxhlo"):
            assert block.select_one(".jaxhlo-signature code"), (page, block.get("id"))


def test_show_renders_the_parts_in_the_order_given(site: Site) -> None:
    block = site.block("aot", "jaxstyle-aot")  # :show: jaxpr, stablehlo, hlo
    panels = block.select("div.jaxhlo-panel")
    assert [p["data-key"] for p in panels] == ["cpu", "gpu:h100", "tpu:v5e"]
    for panel in panels:
        titles = [text(s) for s in panel.select("details > summary")]
        assert [t.split(" (")[0] for t in titles] == ["jaxpr", "StableHLO", "Optimized HLO"], titles
        # and nothing that was not asked for
        assert not panel.select("table, .jaxhlo-callout")
    assert not block.select(".jaxhlo-source") and not block.select("table.jaxhlo-compare")
    # the default parts, in their order: source, the side-by-side table, then the details
    default = next(b for b in site.page("aot").select("div.jaxhlo") if b.get("id") != "jaxstyle-aot")
    order = default.select(".jaxhlo-source, table.jaxhlo-compare, details > summary")
    assert "jaxhlo-source" in order[0]["class"] and "jaxhlo-compare" in order[1]["class"]
    titles = [text(s).split(" (")[0] for s in order[2:]]
    assert titles == ["Fusions", "Reductions", "Memory", "Optimized HLO"], titles


def test_the_detail_tables_are_collapsed_largest_first_and_limited(site: Site) -> None:
    block = site.block("gradient-checkpointing", "jaxstyle-remat")
    tables = block.select("details.jaxhlo-details table.jaxhlo-fusions, details.jaxhlo-details "
                          "table.jaxhlo-materialized")
    assert tables
    cut = 0
    for table in tables:
        details = table.find_parent("details")
        assert not details.has_attr("open")
        rows = table.select("tbody tr")
        assert 1 <= len(rows) <= 8
        sizes = [parse_size(tr.select("td")[2 if "jaxhlo-fusions" in table["class"] else 1].get_text(strip=True))
                 for tr in rows]
        assert sizes == sorted(sizes, reverse=True)
        m = re.fullmatch(r".+ \((\d+) of ([\d,]+)\)", text(details.summary))
        more = table.find_parent("div", class_="jaxhlo-table-box").find_next_sibling("p", class_="jaxhlo-more")
        if m:
            shown, total = int(m.group(1)), int(m.group(2).replace(",", ""))
            assert shown == len(rows) and more is not None
            assert text(more).startswith(f"{total - shown:,} more, {total:,} in total")
            cut += 1
        # loop counters and flags stay out of the default view
        assert not any(re.fullmatch(r"(s32|u32|pred)\[\]", td.get_text(strip=True))
                       for tr in rows for td in tr.select("td"))
    assert cut, "the 8-layer gradient has more fusions than a table shows"


# -- red only where it matters --------------------------------------------------------------------

def test_no_red_finding_on_the_gradient_and_aot_examples(site: Site) -> None:
    for page, example in (("gradient-checkpointing", "jaxstyle-remat"), ("aot", "jaxstyle-aot")):
        block = site.block(page, example)
        # the peak's row of a timeline is marked as the picture's dashed line is: no finding
        red = [r for r in block.select(".jaxhlo-bad") if not r.find_parent("table", class_="jaxhlo-timeline")]
        assert not red, text(red[0])
    # what reads stored data there is small next to the arguments and outputs, and says so
    block = site.block("gradient-checkpointing", "jaxstyle-remat")
    for p in block.select("p.jaxhlo-callout"):
        if "Unfused reduction" in text(p):
            assert re.search(r"It is smaller than the arguments and outputs together \([\d.]+ [kMG]?B\): "
                             r"not a problem here\.$", text(p)), text(p)


def test_large_stored_scores_are_red_on_the_attention_page(site: Site) -> None:
    block = site.block("attention", "jaxstyle-attention")
    h100 = block.select_one('div.jaxhlo-panel[data-key="gpu:h100"]')
    red = h100.select("p.jaxhlo-callout.jaxhlo-bad")
    assert red, "the H100 stores the attention scores before the softmax reads them"
    for p in red:
        words = text(p)
        assert words.startswith("Unfused reduction: the "), words
        m = re.search(r"That is ([\d,]+)× the ([\d.]+ [kMG]?B) the arguments and outputs take", words)
        assert m and int(m.group(1).replace(",", "")) >= 2, words
        # the op and its line next to any HLO name
        # (a fused epilogue is named by its last op: "div of dot_general")
        assert re.search(r"result of \w+(?: of \w+)* on line \d+ \(", words)
        assert re.search(r"on line \d+ \(reduce_\w+", words)
    # the variants table marks the same cell
    cells = [td for td in block.select("table.jaxhlo-variants td.jaxhlo-bad")]
    assert cells and any("unfused" in td.get_text() for td in cells)


def test_the_seed_intermediate_is_still_red(tmp_path: Path) -> None:
    """The guide's 20 GB case (the seed, for the CPU) against a tiny threshold and a huge one."""
    from sphinx.testing.util import SphinxTestApp

    src = tmp_path / "src"
    shutil.copytree(Path(__file__).parent / "roots" / "test-basic", src)
    app = SphinxTestApp("html", srcdir=src, builddir=tmp_path / "build",
                        confoverrides={"jaxhlo_cache_dir": str(tmp_path / "cache")})
    try:
        app.build()
    finally:
        app.cleanup()
    seed = BeautifulSoup((Path(app.outdir) / "index.html").read_text(encoding="utf-8"), "html.parser").select(
        "div.jaxhlo")[0]
    (red,) = seed.select("p.jaxhlo-callout.jaxhlo-bad")
    assert "f32[50000,100000]" in text(red) and "20.0 GB" in text(red)
    # raised above 20 GB by the option's setting, the same finding is neutral
    app = SphinxTestApp("html", srcdir=src, builddir=tmp_path / "build2",
                        confoverrides={"jaxhlo_cache_dir": str(tmp_path / "cache"),
                                       "jaxhlo_problem_min_size": "30GB"})
    try:
        app.build()
    finally:
        app.cleanup()
    seed = BeautifulSoup((Path(app.outdir) / "index.html").read_text(encoding="utf-8"), "html.parser").select(
        "div.jaxhlo")[0]
    assert not seed.select(".jaxhlo-bad")
    assert "It is under 30.0 GB: not a problem here." in text(seed)


# -- the chart ----------------------------------------------------------------------------------------

def test_the_chart_is_linear_for_close_values_and_labels_ratios(site: Site) -> None:
    from test_site import chart_mismatches

    chart = site.block("gradient-checkpointing", "jaxstyle-remat").select_one("figure.jaxhlo-bars")
    assert chart is not None
    # one measure per panel, each ratio to the smallest bar of its target (test_site.chart_mismatches)
    checked, wrong = chart_mismatches(str(site.block("gradient-checkpointing", "jaxstyle-remat")))
    assert checked >= 4 and not wrong, wrong
    for panel in chart.select(".jaxhlo-bars-panel"):
        assert "Linear scale" in text(panel.select_one(".jaxhlo-bars-note"))
        values = []
        for label in [text(v) for v in panel.select(".jaxhlo-bar-value")]:
            m = re.fullmatch(r"([\d.]+ [kMG]?B)(?: \(([\d.,]+)×\))?", label)
            assert m, label
            values.append(parse_size(m.group(1).replace(" ", "")))
        # bar lengths follow the values on the panel's own linear axis
        widths = [float(re.search(r"width:([\d.]+)%", b["style"]).group(1)) for b in panel.select(".jaxhlo-bar")]
        big = max(range(len(values)), key=lambda i: values[i])
        for value, width in zip(values, widths, strict=True):
            assert abs(width - widths[big] * value / values[big]) < 1.5


# -- light pages ----------------------------------------------------------------------------------------

def test_examples_stay_within_the_page_budget_and_texts_live_beside_the_pages(site: Site) -> None:
    shown = 0
    for page in PAGES:
        html = (site.out / f"{page}.html").read_text(encoding="utf-8")
        soup = BeautifulSoup(html, "html.parser")
        for block in soup.select("div.jaxhlo"):
            # the peak views have a budget of their own
            peak = sum(len(str(view).encode()) for view in peak_views(block))
            size = len(str(block).encode()) - peak
            assert size <= PAGE_BUDGET, f"{page}#{block.get('id')}: {size:,} bytes"
            assert peak <= PEAK_BUDGET, f"{page}#{block.get('id')}: its peak views weigh {peak:,} bytes"
        # no module text inline: not the HLO, not StableHLO, not a jaxpr
        assert "HloModule" not in html and "stablehlo.multiply" not in html and "lambda ; " not in html
        texts = module_texts(site.out / f"{page}.html")
        assert len(texts) == len(soup.select("details.jaxhlo-lazy")), page
        shown += len(texts)
        for key, script, plain in texts:
            assert script.is_file() and script.stat().st_mode & 0o044 == 0o044, script
            # the highlighting that made it, then the calls that hand the texts to the page, this one's among them
            body = script.read_text(encoding="utf-8")
            assert re.match(r"/\*jaxhlo [0-9a-f]{16}\*/window\.jaxhloText&&window\.jaxhloText\(", body), script
            assert f'window.jaxhloText&&window.jaxhloText("{key}",' in body, (script, key)
            assert plain == site.out / "_jaxhlo" / f"{key}.txt" and plain.is_file()
        # the short texts of a page share one script: one file for the page, not one for each
        assert len({script for _, script, _ in texts}) <= 1, page
    assert shown >= 3  # aot's jaxpr, StableHLO and optimized HLO at least
    # three functions on three targets: nine peak views, within their budget above
    assert len(peak_views(site.block("gradient-checkpointing", "jaxstyle-remat"))) == 9
    texts = [p.read_text(encoding="utf-8") for p in (site.out / "_jaxhlo").glob("*.txt")]
    assert any(t.startswith("HloModule jit_power_sum") for t in texts)
    assert any("stablehlo.multiply" in t for t in texts) and any(t.startswith("{ lambda") for t in texts)


# -- in a browser ---------------------------------------------------------------------------------------

CUT_OFF_JS = """
(block) => {
  // Everything inside the example must be visible, or reachable by scrolling a box of its own.
  const problems = [];
  const where = (el) => el.tagName.toLowerCase() + (el.className && typeof el.className === "string"
      ? "." + el.className.trim().split(/\\s+/).join(".") : "") + ": " + (el.textContent || "").trim().slice(0, 60);
  const box = block.getBoundingClientRect();
  // the example itself fits every box of the theme that could cut it
  for (let a = block.parentElement; a && a !== document.body; a = a.parentElement) {
    const c = a.getBoundingClientRect();
    if (getComputedStyle(a).overflowX !== "visible" && (box.right > c.right + 1 || box.left < c.left - 1)) {
      problems.push("the example is wider than the theme's " + where(a).slice(0, 40));
    }
  }
  for (const el of block.querySelectorAll("*")) {
    if (!el.getClientRects().length) { continue; }
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) { continue; }
    let clip = null;
    for (let a = el.parentElement; a && a !== block; a = a.parentElement) {
      const ox = getComputedStyle(a).overflowX;
      if (ox !== "visible") { clip = a; break; }
    }
    const style = getComputedStyle(el);
    if ((style.overflowX === "hidden" || style.overflowX === "clip") && el.scrollWidth > el.clientWidth + 1) {
      problems.push("clips its own content: " + where(el));
    }
    if (clip === null) {
      if (r.right > box.right + 1 || r.left < box.left - 1) {
        problems.push("sticks out of the example: " + where(el));
      }
    } else {
      const ox = getComputedStyle(clip).overflowX;
      const c = clip.getBoundingClientRect();
      if ((ox === "hidden" || ox === "clip") && (r.right > c.right + 1 || r.left < c.left - 1)) {
        problems.push("cut off by " + where(clip) + ": " + where(el));
      }
      if (c.right > box.right + 1) { problems.push("scroll box wider than the example: " + where(clip)); }
    }
  }
  if (document.documentElement.scrollWidth > window.innerWidth + 1) { problems.push("the page scrolls sideways"); }
  return problems;
}
"""


#: What a page's own prose may do on a phone's width: the JAX-style page's long inline code
#: (``jax.checkpoint_policies.dots_with_no_batch_dims_saveable``) does not wrap in either theme.
PROSE_ONLY = "the page scrolls sideways"


#: Click every collapsed block's summary the reader can see (last first, as a reader scrolling up
#: would); how many were opened, once their ``toggle`` events (queued tasks) have run.
OPEN_SHOWN_JS = """
async (block) => {
  const shown = [...block.querySelectorAll("details:not([open]) > summary")]
    .filter((s) => s.getClientRects().length > 0 && getComputedStyle(s).visibility !== "hidden");
  for (const summary of shown.reverse()) { summary.click(); }
  await new Promise((done) => setTimeout(done, 0));
  return shown.length;
}
"""
#: Whether every module text an open block shows has finished loading (or failed, which the page
#: reports as an error the tests catch).
LOADED_JS = """
(block) => [...block.querySelectorAll("details[open] pre[data-jaxhlo-key]")].every(
  (pre) => ["loaded", "failed", null].includes(pre.getAttribute("data-jaxhlo-state")))
"""


def check_nothing_cut_off(page: Any, label: str, prose_may_scroll: bool = False) -> int:
    """Open every collapsed block of every target's panel; check each example.

    :param prose_may_scroll: leave out the page-level check (the examples are still checked).
    """
    checked = 0
    blocks = page.locator("div.jaxhlo")
    for i in range(blocks.count()):
        block = blocks.nth(i)
        tabs = block.locator(".jaxhlo-tablist [role=tab]")
        for t in range(max(1, tabs.count())):
            if tabs.count():
                tabs.nth(t).click()
            if block.evaluate(OPEN_SHOWN_JS):
                # opened texts load from their files: check them once they are in
                page.wait_for_function(LOADED_JS, arg=block.element_handle(), timeout=10_000)
            problems = [p for p in block.evaluate(CUT_OFF_JS) if not (prose_may_scroll and p == PROSE_ONLY)]
            assert not problems, f"{label}, example {i}, tab {t}: {problems[:5]}"
            checked += 1
    return checked


@pytest.mark.parametrize("theme", ["book", "alabaster"])
def test_nothing_is_cut_off_light_and_dark(browser: Any, request: pytest.FixtureRequest, theme: str) -> None:
    built: Site = request.getfixturevalue("site" if theme == "book" else "alabaster")
    from test_browser import OVERFLOW_JS

    # a desktop, a tablet and a phone's width, light and dark
    for width, scheme in ((1280, "light"), (760, "light"), (1280, "dark"), (420, "light"), (420, "dark")):
        for name in PAGES:
            page, errors = open_page(browser, (built.out / f"{name}.html").as_uri(), scheme, width)
            phone = width < 500
            assert check_nothing_cut_off(page, f"{theme} {name} {scheme} {width}px", prose_may_scroll=phone) >= 1
            # and what overflows shows that it scrolls (the listings and the side-by-side table fit)
            blocks = page.locator("div.jaxhlo")
            unseen = [p for i in range(blocks.count()) for p in blocks.nth(i).evaluate(OVERFLOW_JS)
                      if not (phone and p == PROSE_ONLY)]
            assert not unseen, f"{theme} {name} {scheme} {width}px: {unseen[:5]}"
            page.locator("div.jaxhlo .jaxhlo-tablist [role=tab]").first.click()
            screenshot(page, f"jaxstyle-{theme}-{name}-{scheme}-{width}.png", full_page=True)
            assert not errors, errors
            page.close()


def test_module_texts_load_when_opened_from_disk_and_over_http(browser: Any, site: Site) -> None:
    server = Server(site.out)
    try:
        for url in ((site.out / "aot.html").as_uri(), server.url(site.out / "aot.html")):
            page, errors = open_page(browser, url, "light", 1280)
            panel = page.locator("#jaxstyle-aot div.jaxhlo-panel").first
            expected = {"jaxpr": "{ lambda", "StableHLO": "stablehlo.multiply",
                        "Optimized HLO": "HloModule jit_power_sum"}
            for title, start in expected.items():
                details = panel.locator("details.jaxhlo-lazy", has_text=title).first
                pre = details.locator("pre[data-jaxhlo-key]")
                assert pre.get_attribute("data-jaxhlo-state") is None and pre.inner_text() == ""
                details.locator(":scope > summary").click()
                page.wait_for_function("(pre) => pre.getAttribute('data-jaxhlo-state') === 'loaded'",
                                       arg=pre.element_handle(), timeout=10_000)
                assert start in pre.inner_text(), (url, title)
                # the text as its file holds it, each span's text set as text (never parsed as HTML)
                text_file = site.out / "_jaxhlo" / f"{pre.get_attribute('data-jaxhlo-key')}.txt"
                assert pre.inner_text().strip() == text_file.read_text(encoding="utf-8").strip(), (url, title)
            # highlighted, as code blocks are: the classes of Pygments' HTML formatter
            hlo = panel.locator("details.jaxhlo-lazy", has_text="Optimized HLO").locator("pre")
            assert hlo.locator("span").count() > 10
            assert hlo.locator("span.nb").count() > 0 and hlo.locator("span.kt").count() > 0
            assert not errors, errors
            page.close()
    finally:
        server.close()


#: In the example's shown panel, every collapsed block opened: each table wider than the page's
#: text column, and each text of a picture that leaves it or is cut (``…``).
WIDE_JS = """
(block) => {
""" + CUT_LABELS_JS + """
  const found = {column: 0, wide: [], labels: []};
  const column = block.closest("article") || block.parentElement;
  found.column = Math.round(column.getBoundingClientRect().width);
  for (const details of block.querySelectorAll("details")) { details.open = true; }
  for (const table of block.querySelectorAll("table")) {
    if (!table.getClientRects().length) { continue; }
    const width = Math.round(table.getBoundingClientRect().width);
    if (width > found.column + 1) { found.wide.push(table.className + ": " + width + " px"); }
  }
  for (const svg of block.querySelectorAll("svg")) {
    if (svg.getClientRects().length) { found.labels.push(...cutLabels(svg)); }
  }
  return found;
}
"""


@pytest.mark.parametrize("width", [1280, 420])
def test_checkpointing_and_cookbook_tables_fit_the_column_and_no_label_is_cut(browser: Any, site: Site,
                                                                              width: int) -> None:
    """As a JAX maintainer reads the pages (sphinx-book-theme, every target's panel, every fold
    opened, the peak views among them): at 1280 px no table is wider than the text column, at
    either width no label of a picture (a timeline's legend, a sweep's map) leaves it or is cut."""
    for name in ("gradient-checkpointing", "autodiff-cookbook"):
        page, errors = open_page(browser, (site.out / f"{name}.html").as_uri(), "light", width)
        blocks = page.locator("div.jaxhlo")
        for i in range(blocks.count()):
            tabs = blocks.nth(i).locator(".jaxhlo-tablist [role=tab]")
            for t in range(max(1, tabs.count())):
                if tabs.count():
                    tabs.nth(t).click()
                found = blocks.nth(i).evaluate(WIDE_JS)
                where = f"{name} at {width} px, example {i}, tab {t}"
                assert not found["labels"], (where, found["labels"])
                if width == 1280:
                    assert not found["wide"], (where, found["column"], found["wide"])
            screenshot(blocks.nth(i), f"jaxstyle-maintainer-{name}-{width}.png")
        assert not errors, errors
        page.close()

