"""An example whose HTML the cache keeps is not rendered into nodes again:
its page takes the HTML, and the same doctrees still give every other builder
(and a build whose cache was emptied) the whole example."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import module_texts
from docutils import nodes

from sphinx_jaxhlo.render.nodes import jaxhlo_block, jaxhlo_table

ROOT = Path(__file__).parent / "roots" / "test-cache"


def sphinx(src: Path, out: Path, doctrees: Path, cache: Path, builder: str = "html", *extra: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", builder, "-d", str(doctrees),
                           "-D", f"jaxhlo_cache_dir={cache}", *extra, str(src), str(out)],
                          capture_output=True, text=True, timeout=600)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Traceback" not in log, log
    return log


def blocks(doctrees: Path, docname: str) -> list[jaxhlo_block]:
    tree = pickle.loads((doctrees / f"{docname}.doctree").read_bytes())
    return list(tree.findall(jaxhlo_block))


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, Path]:
    """The project, built once (compiled, its examples' HTML in the cache)."""
    src = tmp_path / "src"
    shutil.copytree(ROOT, src)
    sphinx(src, tmp_path / "first", tmp_path / "doctrees-first", tmp_path / "cache")
    return src, tmp_path / "cache"


def test_a_page_takes_the_kept_html_without_the_examples_nodes(built: tuple[Path, Path], tmp_path: Path) -> None:
    src, cache = built
    sphinx(src, tmp_path / "again", tmp_path / "doctrees", cache, "html", "-E")
    found = blocks(tmp_path / "doctrees", "index")
    assert found and all(b.get("deferred") for b in found)
    assert not any(b.next_node(jaxhlo_table) for b in found), "the tables were rendered all the same"
    # the listing stays in the doctree: the search index reads it
    assert all(b.next_node(nodes.literal_block) for b in found)
    for page in ("index.html", "other.html"):
        assert (tmp_path / "again" / page).read_text() == (tmp_path / "first" / page).read_text()
    texts = module_texts(tmp_path / "again" / "index.html")
    assert texts and all(script.is_file() and text.is_file() for _, script, text in texts)
    # taken from the cache's store as links (this file system has them), not as new files
    kept = {p.name: p for p in (cache / "html" / "texts").rglob("*") if p.is_file()}
    for published in {path for _, script, text in texts for path in (script, text)}:
        same = [p for p in kept.values() if p.name.startswith(published.stem) and os.path.samefile(published, p)]
        assert same, published
    # the search index has each example's code, as before
    assert (tmp_path / "again" / "searchindex.js").read_text() == (tmp_path / "first" / "searchindex.js").read_text()


@pytest.mark.parametrize("builder", ["text", "latex"])
def test_another_builder_on_the_same_doctrees_gets_the_whole_example(
        built: tuple[Path, Path], tmp_path: Path, builder: str) -> None:
    src, cache = built
    sphinx(src, tmp_path / "html", tmp_path / "doctrees", cache, "html", "-E")
    assert all(b.get("deferred") for b in blocks(tmp_path / "doctrees", "index"))
    log = sphinx(src, tmp_path / builder, tmp_path / "doctrees", cache, builder)  # the same doctrees, not read again
    assert "jax-hlo:" not in log  # nothing read, nothing processed as a document
    sphinx(src, tmp_path / f"{builder}-fresh", tmp_path / "doctrees-fresh", cache, builder, "-E")
    for path in (tmp_path / f"{builder}-fresh").rglob("*"):
        if path.is_file() and path.suffix in (".txt", ".tex"):
            assert (tmp_path / builder / path.relative_to(tmp_path / f"{builder}-fresh")).read_text() == \
                path.read_text(), path


def test_a_page_whose_kept_html_is_gone_is_rendered_whole(built: tuple[Path, Path], tmp_path: Path) -> None:
    src, cache = built
    sphinx(src, tmp_path / "html", tmp_path / "doctrees", cache, "html", "-E")
    assert all(b.get("deferred") for b in blocks(tmp_path / "doctrees", "index"))
    shutil.rmtree(cache / "html")
    sphinx(src, tmp_path / "new-output", tmp_path / "doctrees", cache)  # not read again: written from the doctrees
    for page in ("index.html", "other.html"):
        assert (tmp_path / "new-output" / page).read_text() == (tmp_path / "first" / page).read_text()
    assert list((cache / "html").rglob("*.html")), "the HTML is kept again"
