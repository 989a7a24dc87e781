"""A project configured as JAX's docs are, built as their host builds it.

``tests/roots/test-jaxdocs`` has JAX's docs settings (MyST-NB with ``nb_execution_mode
= "force"``, sphinx-book-theme, sphinx-design, sphinx-copybutton, only ``dollarmath``),
examples for the CPU, an H100 and a TPU v5e, and snapshots.  Built with ``-W``:

1. compiling every example, writing the snapshots;
2. in a fresh output folder from the snapshots alone, the GPU and TPU compilers
   hidden (an empty ``JAXHLO_COMPILERS_DIR``), as a docs host that never installed them;
3. incrementally, after an error in an example and after its fix.

Every build writes the module texts beside the pages.  ``nox -s jaxdocs`` runs this
file with JAX's exact docs pins (Sphinx 7.4); elsewhere it is skipped unless
sphinx-design and sphinx-copybutton are installed (the tests session has neither).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sphinx_jaxhlo.core import targets as targets_mod

pytest.importorskip("myst_nb", reason="myst-nb is not installed")
pytest.importorskip("sphinx_book_theme", reason="sphinx-book-theme is not installed")
pytest.importorskip("sphinx_design", reason="sphinx-design is not installed")
pytest.importorskip("sphinx_copybutton", reason="sphinx-copybutton is not installed")
pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent / "roots" / "test-jaxdocs"
TARGETS = ("cpu", "gpu:h100", "tpu:v5e")
#: Examples times targets in the project.
REPORTS = 2 * len(TARGETS)


def available(*names: str) -> bool:
    return all(targets_mod.TARGETS[n].available() for n in names)


def sphinx(src: Path, build: Path, env: dict[str, str]) -> tuple[int, str]:
    """Build into ``build/html`` (doctrees and the report cache beside it)."""
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "--no-color",
           "-d", str(build / "doctrees"), str(src), str(build / "html")]
    proc = subprocess.run(cmd, cwd=src, capture_output=True, text=True, timeout=900, env={**os.environ, **env})
    return proc.returncode, proc.stdout + proc.stderr


def warnings_of(log: str) -> list[str]:
    """Sphinx's warnings and errors (not the notebook kernel's own log lines, such as
    ipykernel's ``[IPKernelApp] WARNING | Kernel is running over TCP``)."""
    return [ln for ln in log.splitlines() if re.search(r"\b(WARNING|ERROR|CRITICAL): ", ln)]


def check_pages(out: Path) -> None:
    """Every example on every target rendered, its module texts in files beside the page."""
    for page in ("jit-notebook", "gradients"):
        html = (out / f"{page}.html").read_text(encoding="utf-8")
        assert "HloModule" not in html, f"{page}: module text inlined"
        refs = re.findall(r'data-jaxhlo-text="([^"]+)"', html)
        assert len(refs) >= len(TARGETS), (page, refs)
        for ref in refs:
            assert (out / ref).is_file(), ref
            text = (out / ref).with_suffix(".txt").read_text(encoding="utf-8")
            assert "HloModule" in text or "module @" in text, ref
        for target in TARGETS:
            assert target in html, (page, target)
    notebook = (out / "jit-notebook.html").read_text(encoding="utf-8")
    assert "31.19" in notebook  # the executed cell's output: sum(exp([0, 1, 2, 3]))


@pytest.mark.skipif(not available(*TARGETS), reason="the GPU and TPU compilers are not installed: "
                                                    "python -m sphinx_jaxhlo compilers install")
def test_a_jax_docs_project_builds_compiling_then_from_snapshots_then_incrementally(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns("_build", "_snapshots"))
    # 1. compiling, writing the snapshots
    rc, log = sphinx(src, tmp_path / "compiled", {"JAXHLO_SNAPSHOT_MODE": "update"})
    assert rc == 0 and warnings_of(log) == [], log
    assert f"jax-hlo: {REPORTS} compiled" in log, log
    assert len(list((src / "_snapshots").rglob("*.json"))) == REPORTS
    check_pages(tmp_path / "compiled" / "html")
    # 2. a docs host with the snapshots only: no GPU or TPU compiler, nothing compiled
    hidden = tmp_path / "no-compilers"
    hidden.mkdir()
    host = {"JAXHLO_SNAPSHOT_MODE": "use", "JAXHLO_COMPILERS_DIR": str(hidden)}
    rc, log = sphinx(src, tmp_path / "host", host)
    assert rc == 0 and warnings_of(log) == [], log
    assert f"jax-hlo: 0 compiled, 0 from cache, {REPORTS} from snapshots, 0 failed" in log, log
    check_pages(tmp_path / "host" / "html")
    # 3. an error in an example, then its fix: the incremental builds say so, then nothing
    page = src / "gradients.md"
    good = page.read_text(encoding="utf-8")
    page.write_text(good.replace("f32[512,256], f32[256]", "f32[512,256], f32[nope]"), encoding="utf-8")
    rc, log = sphinx(src, tmp_path / "host", host)
    assert rc == 1 and any("[jaxhlo.args]" in w for w in warnings_of(log)), log
    rc, again = sphinx(src, tmp_path / "host", host)
    assert rc == 1 and "0 added, 0 changed, 0 removed" in again and "[jaxhlo.args]" in again, again
    page.write_text(good, encoding="utf-8")
    rc, log = sphinx(src, tmp_path / "host", host)
    assert rc == 0 and warnings_of(log) == [], log
    rc, log = sphinx(src, tmp_path / "host", host)
    assert rc == 0 and warnings_of(log) == [] and "0 added, 0 changed, 0 removed" in log, log
    check_pages(tmp_path / "host" / "html")
