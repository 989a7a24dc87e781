"""Shared fixtures: Sphinx test roots under tests/roots, stored HLO under tests/data/hlo."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["sphinx.testing.fixtures"]

# Tests that initialise jax in this process (the API's export path) and compile
# workers may load libtpu at the same time; without this it takes a machine-wide lock.
os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")
# Tests read Sphinx's log line by line; a CI that forces colour (FORCE_COLOR) would wrap
# every line in escape codes.  NO_COLOR outranks FORCE_COLOR in Sphinx and in pytest's
# subprocesses alike.
os.environ["NO_COLOR"] = "1"

ROOTS = Path(__file__).parent / "roots"
HLO_DIR = Path(__file__).parent / "data" / "hlo"
#: A module of example functions that the API and command-line tests import from a copy.
API_EXAMPLE = Path(__file__).parent / "data" / "api_example.py"


@pytest.fixture(scope="session")
def rootdir() -> Path:
    return ROOTS


def compilers_without(kit: str, folder: Path) -> Path:
    """A compilers folder (for ``JAXHLO_COMPILERS_DIR``) that holds, linked,
    the kits of the real private folder except ``kit``.

    :param kit: ``"gpu"`` or ``"tpu"``: the one to leave out.
    :param folder: Where to make it.
    """
    from sphinx_jaxhlo.core import compilers as plugins

    root = folder / "compilers"
    root.mkdir(parents=True, exist_ok=True)
    for other in plugins.KITS:
        real = plugins.kit_dir(other)
        link = root / real.parent.name / other
        if other != kit and plugins.state(other).folder == real and not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(real, target_is_directory=True)
    return root
def with_texts(soup: Any, page: Path) -> Any:
    """``soup`` (a parsed page) with the module texts an HTML page loads when a
    block is opened (``_jaxhlo/<key>.txt`` beside the pages) put into their blocks,
    so tests can read the optimized HLO where a reader sees it."""
    for pre in soup.select("pre[data-jaxhlo-key]"):
        link = pre.find_parent("details").select_one("p.jaxhlo-text-file a")
        pre.string = (page.parent / link["href"]).read_text(encoding="utf-8")
    return soup


def module_texts(page: Path) -> list[tuple[str, Path, Path]]:
    """The module texts a built HTML page loads, in order: (key, the script that
    hands it to the page, the text file its block links), as the page names them
    (the script: the block's own, or the page's shared one that lists the key)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    shared = {key: div["data-jaxhlo-script"] for div in soup.select("div[data-jaxhlo-script]")
              for key in div["data-jaxhlo-keys"].split()}
    found = []
    for pre in soup.select("pre[data-jaxhlo-key]"):
        key = pre["data-jaxhlo-key"]
        script = pre.get("data-jaxhlo-text") or shared[key]
        link = pre.find_parent("details").select_one("p.jaxhlo-text-file a")
        found.append((key, page.parent / script, page.parent / link["href"]))
    return found


def build_html(src: Path, builddir: Path) -> tuple[str, Path, list[Any]]:
    """Build ``src`` with the html builder (cache beside the output, as with
    ``sphinx-build -M``) and give the warnings, the output folder and every
    report the cache then holds."""
    from sphinx.testing.util import SphinxTestApp

    from sphinx_jaxhlo.core.report import Report

    app = SphinxTestApp("html", srcdir=src, builddir=builddir)
    try:
        app.build()
        warnings = app.warning.getvalue()
    finally:
        app.cleanup()
    outdir = Path(app.outdir)
    reports = [Report.from_json(path.read_text()) for path in (outdir.parent / "jaxhlo-cache").rglob("*.json")]
    return warnings, outdir, reports


# -- a browser for the page tests (tests/test_browser.py, tests/test_jaxstyle.py) --------------------

import shutil  # noqa: E402

#: Debian's headless Chromium, driven through Playwright; the page tests skip without either.
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: Where the page tests leave their screenshots for a person to look at (``JAXHLO_SCREENSHOTS``); unset,
#: none are taken (a full page's picture costs a second or more and nobody looks at it).
SHOTS = Path(os.environ["JAXHLO_SCREENSHOTS"]) if os.environ.get("JAXHLO_SCREENSHOTS") else None


def screenshot(target: Any, name: str, **options: Any) -> None:
    """A picture of ``target`` (a page or an element) for a person, as ``SHOTS/name``, when asked for."""
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        target.screenshot(path=str(SHOTS / name), **options)

#: A JavaScript function, ``cutLabels(svg)``, giving each text of a picture that leaves it or is
#: cut (``…``); the page tests paste it into the checks they evaluate.
CUT_LABELS_JS = """
const cutLabels = (svg) => {
  const frame = svg.getBoundingClientRect();
  return [...svg.querySelectorAll("text")].filter((label) => {
    const r = label.getBoundingClientRect();
    return r.left < frame.left - 0.5 || r.right > frame.right + 0.5 || label.textContent.includes("…");
  }).map((label) => label.textContent);
};
"""


class Server:
    """Serves a folder on 127.0.0.1, as a reader's browser would get the pages."""

    def __init__(self, root: Path) -> None:
        import functools
        import http.server
        import threading

        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
        handler.log_message = lambda *args: None  # type: ignore[method-assign]
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.root = root

    def url(self, path: Path) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{path.relative_to(self.root).as_posix()}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="session")
def browser() -> Any:
    """One headless Chromium for the session's page tests (skipped without it or Playwright)."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        yield b
        b.close()


def open_page(browser: Any, url: str, scheme: str = "light", width: int = 1280,
              height: int = 1200) -> tuple[Any, list[str]]:
    """A page loaded at ``width`` px in the colour ``scheme``, and the list its errors go to: a
    script's exception, a console error, a request of the page's own (a file or this machine) that
    failed or answered 400 or more.  The browser's favicon probe, and requests to other hosts
    (a theme's CDN this machine cannot reach), are not the page's doing."""
    page = browser.new_page(color_scheme=scheme, viewport={"width": width, "height": height})
    errors: list[str] = []
    own = ("file:", "http://127.0.0.1")
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text)
            if msg.type == "error" and "Failed to load resource" not in msg.text else None)
    page.on("requestfailed", lambda r: errors.append(f"failed: {r.url}") if r.url.startswith(own) else None)
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}")
            if r.status >= 400 and r.url.startswith(own) and not r.url.endswith("/favicon.ico") else None)
    page.goto(url)
    page.wait_for_load_state("load")
    return page, errors


# -- what a compile did with a reduction's table (the predictor's compile tests) --------------------------

#: Bytes of an element, by the spec's element type (a table of a wider type counts as f32's, as the truth does).
ITEMSIZE = {"f32": 4, "bf16": 2, "f16": 2, "u32": 4, "pred": 1}


def stored_by_the_compile(fn: Any, specs: Any, target: str, table: int, temp_on: tuple[str, ...] = ("cpu",)) -> bool:
    """What the compile of ``fn`` for ``target`` did with a table of ``table`` elements: a buffer of 90 % of
    them, or, on ``temp_on``'s targets, temp memory of the table's size (the family benchmark's truth,
    ``guide_predictor_family.truth_of``)."""
    import math
    import re

    import sphinx_jaxhlo

    def elements(shape: str) -> int:
        dims = re.search(r"\[([\d,]*)\]", shape)
        return math.prod(int(d) for d in dims.group(1).split(",")) if dims and dims.group(1) else 1

    report = sphinx_jaxhlo.analyze(fn, *specs, targets=target)[target]
    big = [m for m in report.materialized if elements(m.shape) >= 0.9 * table]
    itemsize = min(ITEMSIZE.get(specs[0].split("[")[0], 4), 4)
    temp = target in temp_on and (report.memory.temp_bytes or 0) >= 0.9 * table * itemsize
    return bool(big) or temp


def space_of_the_stored(fn: Any, specs: Any, target: str, table: int) -> int | None:
    """The memory space of the largest buffer of at least 90 % of ``table`` elements that the compile of ``fn``
    for ``target`` writes (the family benchmark's ``memory_space``: 1 on the TPU's own memory, 0 HBM), or
    None when it writes none."""
    import math
    import re

    import sphinx_jaxhlo

    def elements(shape: str) -> int:
        dims = re.search(r"\[([\d,]*)\]", shape)
        return math.prod(int(d) for d in dims.group(1).split(",")) if dims and dims.group(1) else 1

    report = sphinx_jaxhlo.analyze(fn, *specs, targets=target)[target]
    big = [m for m in report.materialized if elements(m.shape) >= 0.9 * table]
    return max(big, key=lambda m: m.bytes).memory_space if big else None
