"""A project configured as JAX's docs are, built as JAX builds them.

``tests/roots/test-jaxdocs`` has JAX's docs settings (MyST-NB executing its notebooks,
``nb_execution_mode = "force"``; sphinx-book-theme, sphinx-design, sphinx-copybutton,
intersphinx, only ``dollarmath``) and seven documents, so that Sphinx 7 reads them in
forked processes under ``-j`` (it does from six): MyST pages, a MyST text notebook, an
``.ipynb`` notebook with ``jax-hlo`` examples in its Markdown cells (one of them in a
removed cell), and a sharded page written as JAX's are (``:mesh: X=4, Y=2`` with
``jnp.dot(a, b, out_sharding=P("X", None))``), for the CPU and an H100 (eight on the
sharded page).  Every build is JAX's command, ``sphinx-build -b html -j 2 -W
--keep-going docs docs/build/html``, in a fresh process under a time limit:

1. cold (no output, no cache) twice: every compile forecast and started before
   Sphinx reads, notebooks' included, no build hanging (forked readers once waited
   forever on a lock a compile thread held), snapshots byte-identical each time, and
   the report cache beside the output, not in it;
2. in ``check`` mode, cold: the fresh snapshots pass;
3. incrementally: a failed claim in the notebook is located at its cell and line and
   repeated until fixed, and the module texts of an edited example leave the output;
4. from the snapshots alone, the compilers hidden, as a docs host that has none.

``nox -s jaxdocs`` runs this file with JAX's exact docs pins (Sphinx 7.4); elsewhere it
is skipped unless sphinx-design and sphinx-copybutton are installed (the tests session
has neither).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import module_texts

from sphinx_jaxhlo.core import targets as targets_mod

pytest.importorskip("myst_nb", reason="myst-nb is not installed")
pytest.importorskip("sphinx_book_theme", reason="sphinx-book-theme is not installed")
pytest.importorskip("sphinx_design", reason="sphinx-design is not installed")
pytest.importorskip("sphinx_copybutton", reason="sphinx-copybutton is not installed")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not all(targets_mod.TARGETS[n].available() for n in ("cpu", "gpu:h100")),
                       reason="the GPU compiler is not installed: python -m sphinx_jaxhlo compilers install"),
]

ROOT = Path(__file__).parent / "roots" / "test-jaxdocs"
TARGETS = ("cpu", "gpu:h100")
#: Reports of the project: (examples x targets) of jit-notebook (1), parallel (2) and
#: gradients (1), and the sharded page's one example on gpu:h100x8.
REPORTS = 4 * len(TARGETS) + 1
#: Pages with examples, and how many each has.
PAGES = {"jit-notebook": 1, "parallel": 2, "gradients": 1, "sharding": 1}
#: Seconds a build may take here (a cold one takes about a minute on two busy cores):
#: past it the build is taken for hung.
LIMIT = 600


def sphinx(src: Path, env: dict[str, str]) -> tuple[int, str]:
    """JAX's command: ``sphinx-build -b html docs docs/build/html`` (the doctrees in
    ``build/html/.doctrees``), with ``-j 2 -W --keep-going``."""
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-j", "2", "-W", "--keep-going", "--no-color",
           str(src), str(src / "build" / "html")]
    try:
        proc = subprocess.run(cmd, cwd=src, capture_output=True, text=True, timeout=LIMIT,
                              env={**os.environ, **env})
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        pytest.fail(f"the build did not end within {LIMIT} s (a hung -j reader?):\n{out[-3000:]}")
    return proc.returncode, proc.stdout + proc.stderr


def warnings_of(log: str) -> list[str]:
    """Sphinx's warnings and errors (not the notebook kernel's own log lines, such as
    ipykernel's ``[IPKernelApp] WARNING | Kernel is running over TCP``)."""
    return [ln for ln in log.splitlines() if re.search(r"\b(WARNING|ERROR|CRITICAL): ", ln)]


def summary(log: str) -> str:
    # the build's summary of its reports (the guide's-rule count has a line of its own)
    lines = [ln for ln in log.splitlines() if ln.startswith("jax-hlo: ") and " compiled, " in ln]
    assert lines, log
    return lines[-1]


def snapshots(src: Path) -> dict[str, bytes]:
    return {str(p.relative_to(src)): p.read_bytes() for p in sorted((src / "_snapshots").rglob("*")) if p.is_file()}


def check_pages(src: Path) -> None:
    """Every example on every target rendered, its module texts in files beside the
    page (and no file beside them that no page uses); the notebooks' cells executed."""
    out = src / "build" / "html"
    used = set()
    for page, examples in PAGES.items():
        html = (out / f"{page}.html").read_text(encoding="utf-8")
        assert "HloModule" not in html, f"{page}: module text inlined"
        assert html.count('class="jaxhlo-error') == 0, page
        refs = module_texts(out / f"{page}.html")
        targets = ("gpu:h100x8",) if page == "sharding" else TARGETS
        assert len(refs) >= examples * len(targets), (page, refs)
        for key, script, text_file in refs:
            text = text_file.read_text(encoding="utf-8")
            assert "HloModule" in text or "module @" in text, text_file
            assert f'window.jaxhloText("{key}",' in script.read_text(encoding="utf-8"), script
            used |= {key, script.stem}
        for target in targets:
            assert target in html, (page, target)
    assert {p.stem for p in (out / "_jaxhlo").iterdir()} == used
    assert "31.19" in (out / "jit-notebook.html").read_text(encoding="utf-8")  # sum(exp([0, 1, 2, 3]))
    notebook = (out / "parallel.html").read_text(encoding="utf-8")
    assert "[-1.52" in notebook and "broken" not in notebook  # the executed cell; the removed one
    sharded = (out / "sharding.html").read_text(encoding="utf-8")
    assert "X=4 explicit" in sharded or "X=4, explicit" in sharded, "the mesh's kinds are jax's default"


@pytest.fixture
def src(tmp_path: Path) -> Path:
    src = tmp_path / "docs"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns("build", "_snapshots"))
    return src


def test_cold_parallel_builds_check_incremental_builds_and_a_docs_host(src: Path, tmp_path: Path) -> None:
    first: dict[str, bytes] = {}
    for run in range(2):
        shutil.rmtree(src / "build", ignore_errors=True)  # cold: no output, no doctrees, no cache
        rc, log = sphinx(src, {"JAXHLO_SNAPSHOT_MODE": "refresh"})
        assert rc == 0 and warnings_of(log) == [], log
        # every compile, the notebooks' included, was forecast and started before Sphinx read
        assert summary(log).startswith(f"jax-hlo: {REPORTS} compiled, 0 from cache, 0 failed; "
                                       f"{REPORTS} compiled ahead of their page"), log
        check_pages(src)
        html = src / "build" / "html"
        assert not [p for p in html.rglob("*") if "jaxhlo-cache" in p.name], "the cache is in the published output"
        assert (src / "build" / "jaxhlo-cache").is_dir()
        # the same toolchain writes the same bytes
        stored = snapshots(src)
        assert len([n for n in stored if n.endswith(".json")]) == REPORTS
        if run == 0:
            first = stored
        else:
            assert stored == first, f"build {run + 1} rewrote {sorted(n for n in stored if stored[n] != first[n])}"
    # the sharded page's :mesh: X=4, Y=2 has jax.make_mesh's default kinds (this jax is 0.9 or newer)
    mesh = json.loads(stored["_snapshots/sharding/example-1.default.gpu-h100x8.json"])["facts"]["mesh"]
    assert mesh == [["X", 4, "explicit"], ["Y", 2, "explicit"]], mesh

    # 2. CI's check mode on the snapshots just written: all pass
    shutil.rmtree(src / "build")
    rc, log = sphinx(src, {"JAXHLO_SNAPSHOT_MODE": "check"})
    assert rc == 0 and warnings_of(log) == [], log
    assert snapshots(src) == first

    # 3. incremental builds (update mode: the snapshots answer): a claim in the notebook that fails
    # is located at its cell and line, and repeated while it fails
    rc, log = sphinx(src, {})
    assert rc == 0 and warnings_of(log) == [] and f"{REPORTS} from snapshots" in summary(log), log
    texts = {p.name for p in (src / "build" / "html" / "_jaxhlo").iterdir()}
    notebook = src / "parallel.ipynb"
    good = notebook.read_text(encoding="utf-8")
    notebook.write_text(good.replace(":expect-kernels: 1", ":expect-kernels: 7"), encoding="utf-8")
    rc, log = sphinx(src, {})
    ws = warnings_of(log)
    assert rc == 1 and len(ws) == len(TARGETS) and all("[jaxhlo.expectation]" in w for w in ws), log
    for warning, target in zip(ws, TARGETS, strict=True):  # the third cell; its fence is the cell's third line
        assert re.search(rf"parallel\.ipynb:cell 3, line 3: WARNING: jax-hlo: selu on {target}: expected kernels 7",
                         warning), log
    rc, again = sphinx(src, {})
    assert rc == 1 and "0 added, 0 changed, 0 removed" in again and warnings_of(again) == ws, again
    # fixed, and the example edited: the texts of its old form leave the output
    notebook.write_text(good.replace("alpha * jnp.exp(x) - alpha", "alpha * jnp.expm1(x)"), encoding="utf-8")
    rc, log = sphinx(src, {})
    assert rc == 0 and warnings_of(log) == [], log
    check_pages(src)
    now = {p.name for p in (src / "build" / "html" / "_jaxhlo").iterdir()}
    assert now != texts and len(now) == len(texts)
    rc, log = sphinx(src, {})
    assert rc == 0 and warnings_of(log) == [] and "0 added, 0 changed, 0 removed" in log, log

    # 4. a docs host with the snapshots only: no GPU compiler, nothing compiled
    shutil.rmtree(src / "build")
    hidden = tmp_path / "no-compilers"
    hidden.mkdir()
    rc, log = sphinx(src, {"JAXHLO_SNAPSHOT_MODE": "use", "JAXHLO_COMPILERS_DIR": str(hidden)})
    assert rc == 0 and warnings_of(log) == [], log
    assert summary(log).startswith(f"jax-hlo: 0 compiled, 0 from cache, {REPORTS} from snapshots, 0 failed"), log
    check_pages(src)
