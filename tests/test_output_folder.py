"""What a build leaves in its output folder, which gets published: the module texts its
pages use and nothing else, and never the report cache."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import module_texts

pytestmark = pytest.mark.slow

EXAMPLE = """Page
====

.. jax-hlo::
   :args: f32[1024]

   import jax.numpy as jnp

   def f(x):
       return jnp.sum(jnp.{op}(x))
"""


def sphinx(*args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "sphinx", "--no-color", *args], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def referenced(out: Path) -> set[str]:
    """The module texts the pages load (``_jaxhlo/<key>``), by key."""
    return {key for page in out.rglob("*.html") for key, _, _ in module_texts(page)}


def used(out: Path) -> set[str]:
    """The files of ``_jaxhlo`` that the pages name: texts and scripts."""
    return {path.name for page in out.rglob("*.html") for _, script, text in module_texts(page)
            for path in (script, text)}


def texts(out: Path) -> set[str]:
    return {p.name for p in (out / "_jaxhlo").glob("*")} if (out / "_jaxhlo").is_dir() else set()


def test_edits_leave_no_module_text_that_no_page_uses(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_targets = ["cpu"]\n')
    (src / "index.rst").write_text("Site\n====\n\n.. toctree::\n\n   page\n   other\n")
    (src / "page.rst").write_text(EXAMPLE.format(op="cos"))
    (src / "other.rst").write_text(EXAMPLE.format(op="exp").replace("Page\n====", "Other\n====="))
    out, doctrees = tmp_path / "out", tmp_path / "doctrees"
    build = ("-b", "html", "-d", str(doctrees), str(src), str(out))
    sphinx(*build)
    first = referenced(out)
    assert len(first) == 2 and texts(out) == used(out)
    # an edited example: its old texts go, the untouched page's (not written again) stay
    (src / "page.rst").write_text(EXAMPLE.format(op="sin"))
    log = sphinx(*build)
    assert "0 added, 1 changed, 0 removed" in log, log
    second = referenced(out)
    assert len(second) == 2 and len(first & second) == 1
    assert texts(out) == used(out)
    # a removed page takes its texts along
    (src / "index.rst").write_text("Site\n====\n\n.. toctree::\n\n   page\n")
    (src / "other.rst").unlink()
    sphinx(*build)
    # (other.html stays: Sphinx leaves a removed page's file in place)
    remaining = {path.name for _, script, text in module_texts(out / "page.html") for path in (script, text)}
    assert texts(out) == remaining and {name[:-4] for name in remaining if name.endswith(".txt")} == second - first


def test_a_page_read_from_the_cache_alone_keeps_its_module_texts(tmp_path: Path) -> None:
    """A page read again whose example comes whole from the cache (its HTML kept, no nodes
    built) still names its module texts: an edit elsewhere later does not remove them."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_targets = ["cpu"]\n')
    (src / "index.rst").write_text("Site\n====\n\n.. toctree::\n\n   page\n   other\n")
    (src / "page.rst").write_text(EXAMPLE.format(op="cos"))
    (src / "other.rst").write_text(EXAMPLE.format(op="exp").replace("Page\n====", "Other\n====="))
    out, doctrees = tmp_path / "out", tmp_path / "doctrees"
    build = ("-b", "html", "-d", str(doctrees), str(src), str(out))
    sphinx(*build)
    sphinx("-E", *build)  # every page read again, each example from the cache without its nodes
    keys = referenced(out)
    assert len(keys) == 2 and texts(out) == used(out)
    (src / "other.rst").write_text(EXAMPLE.format(op="sin").replace("Page\n====", "Other\n====="))
    log = sphinx(*build)  # only the other page is read and written
    assert "0 added, 1 changed, 0 removed" in log, log
    now = referenced(out)
    assert len(now) == 2 and len(keys & now) == 1
    assert texts(out) == used(out), log


def test_the_cache_stays_out_of_the_output_with_jaxs_command(tmp_path: Path) -> None:
    """``sphinx-build -b html docs docs/build/html`` keeps the doctrees inside the output
    folder; the cache goes beside it, to ``docs/build/jaxhlo-cache``."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_targets = ["cpu"]\n'
                                  'exclude_patterns = ["build"]\n')
    (docs / "index.rst").write_text(EXAMPLE.format(op="cos"))
    html = docs / "build" / "html"
    sphinx("-b", "html", str(docs), str(html))
    assert (html / ".doctrees").is_dir()
    assert not [p for p in html.rglob("*") if "jaxhlo-cache" in p.name], "the cache is inside the published output"
    assert len(list((docs / "build" / "jaxhlo-cache").rglob("*.json"))) == 1


def test_a_pages_short_texts_share_one_script_a_long_one_keeps_its_own(tmp_path: Path, monkeypatch) -> None:
    """A page of examples writes one file per module text and one script for its
    short texts together (a new file costs a build far more than its bytes);
    a long text keeps a script of its own, loaded only when its block opens,
    and a page with more short text than one script holds gets several."""
    from conftest import build_html

    from sphinx_jaxhlo.sphinxext import html as sphinx_html

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_targets = ["cpu"]\n')
    (src / "index.rst").write_text(EXAMPLE.format(op="cos") + EXAMPLE.format(op="exp").split("====\n", 1)[1])

    def built(name: str) -> tuple[list[tuple[str, Path, Path]], set[str], str]:
        warnings, out, _ = build_html(src, tmp_path / name)
        assert "WARNING" not in warnings, warnings
        return module_texts(out / "index.html"), texts(out), (out / "index.html").read_text(encoding="utf-8")

    found, files, page = built("shared")
    keys = [key for key, _, _ in found]
    assert len(set(keys)) == 2
    (script,) = {script for _, script, _ in found}
    assert files == {f"{key}.txt" for key in keys} | {script.name}
    assert "data-jaxhlo-text=" not in page and page.count("data-jaxhlo-script=") == 1
    body = script.read_text(encoding="utf-8")
    for key, _, text in found:  # each text, highlighted, handed over by its key
        assert f'window.jaxhloText&&window.jaxhloText("{key}",{{"spans": ["k", "HloModule"' in body
        assert text.read_text(encoding="utf-8").startswith("HloModule")

    sizes = sorted(len(text.read_text(encoding="utf-8")) for _, _, text in found)
    monkeypatch.setattr(sphinx_html, "SHARED_TEXT_LIMIT", sizes[0])  # the longer text is long now
    found, files, page = built("long")
    own = [(key, script) for key, script, text in found if len(text.read_text(encoding="utf-8")) > sizes[0]]
    assert len(own) == 1 and own[0][1].name == f"{own[0][0]}.js" and page.count("data-jaxhlo-text=") == 1
    assert re.match(r"/\*jaxhlo [0-9a-f]{16}\*/window\.jaxhloText&&window\.jaxhloText\(\"" + own[0][0],
                    own[0][1].read_text(encoding="utf-8"))
    assert len(files) == 4 and page.count("data-jaxhlo-script=") == 1  # two texts, their two scripts

    monkeypatch.setattr(sphinx_html, "SHARED_TEXT_LIMIT", sizes[1])
    monkeypatch.setattr(sphinx_html, "SHARED_SCRIPT_LIMIT", sizes[1])  # one text a script
    found, files, page = built("split")
    assert len({script for _, script, _ in found}) == 2 and page.count("data-jaxhlo-script=") == 2
    assert len(files) == 4 and "data-jaxhlo-text=" not in page


def test_shared_scripts_group_a_pages_short_texts_in_order() -> None:
    from sphinx_jaxhlo.sphinxext.html import SHARED_SCRIPT_LIMIT, SHARED_TEXT_LIMIT, PageText, shared_scripts

    def text(n: int, size: int) -> PageText:
        return PageText(f"{n:024x}", "hlo", size)

    texts = [text(1, 10), text(2, SHARED_TEXT_LIMIT + 1), text(1, 10), text(3, SHARED_TEXT_LIMIT)]
    texts += [text(10 + i, SHARED_TEXT_LIMIT) for i in range(SHARED_SCRIPT_LIMIT // SHARED_TEXT_LIMIT)]
    groups = shared_scripts(texts)
    assert len(groups) == 2  # more than one script holds
    flat = [t.key for _, group in groups for t in group]
    # the long text is left out, a repeated one comes once, the order is the page's
    assert flat == [texts[0].key, texts[3].key] + [t.key for t in texts[4:]]
    assert all(sum(t.size for t in group) <= SHARED_SCRIPT_LIMIT for _, group in groups)
    assert len({name for name, _ in groups}) == len(groups) and all(len(name) == 24 for name, _ in groups)
    # named by what they hold: the same texts, the same names; another text, another name
    assert shared_scripts(texts) == groups
    assert shared_scripts(texts[:1])[0][0] != shared_scripts([text(4, 10)])[0][0]
    assert shared_scripts([text(2, SHARED_TEXT_LIMIT + 1)]) == []
