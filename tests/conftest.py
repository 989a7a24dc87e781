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
