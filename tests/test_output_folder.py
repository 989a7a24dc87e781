"""What a build leaves in its output folder, which gets published: the module texts its
pages use and nothing else, and never the report cache."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

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
    keys = set()
    for page in out.rglob("*.html"):
        keys |= set(re.findall(r'data-jaxhlo-key="([0-9a-f]+)"', page.read_text(encoding="utf-8")))
    return keys


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
    assert len(first) == 2 and texts(out) == {f"{k}.{ext}" for k in first for ext in ("js", "txt")}
    # an edited example: its old texts go, the untouched page's (not written again) stay
    (src / "page.rst").write_text(EXAMPLE.format(op="sin"))
    log = sphinx(*build)
    assert "0 added, 1 changed, 0 removed" in log, log
    second = referenced(out)
    assert len(second) == 2 and len(first & second) == 1
    assert texts(out) == {f"{k}.{ext}" for k in second for ext in ("js", "txt")}
    # a removed page takes its texts along
    (src / "index.rst").write_text("Site\n====\n\n.. toctree::\n\n   page\n")
    (src / "other.rst").unlink()
    sphinx(*build)
    assert texts(out) == {f"{k}.{ext}" for k in second - first for ext in ("js", "txt")}


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
    assert len(keys) == 2 and texts(out) == {f"{k}.{ext}" for k in keys for ext in ("js", "txt")}
    (src / "other.rst").write_text(EXAMPLE.format(op="sin").replace("Page\n====", "Other\n====="))
    log = sphinx(*build)  # only the other page is read and written
    assert "0 added, 1 changed, 0 removed" in log, log
    now = referenced(out)
    assert len(now) == 2 and len(keys & now) == 1
    assert texts(out) == {f"{k}.{ext}" for k in now for ext in ("js", "txt")}, log


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
