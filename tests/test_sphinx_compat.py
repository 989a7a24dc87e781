"""The extension on every supported Sphinx (7.3 to 9): the calls whose form changed
between releases, the warning type in every message, and an error of the
extension that is not stored as if the document had claimed it.

``nox -s jaxdocs`` runs this file again under JAX's docs pins (Sphinx 7.4)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import sphinx
from conftest import module_texts

from sphinx_jaxhlo.sphinxext import compat as sphinxcompat

PAGE = """Page
====

.. jax-hlo::
   :args: f32[64,8], f32[8]

   import jax.numpy as jnp

   def first(a, b):
       return jnp.sum(jnp.cos(a @ b))
"""

OTHER = """Other
=====

.. jax-hlo::
   :args: f32[nope]

   def broken(x):
       return x
"""

#: Makes every example of the build an internal error while the file it names exists.
FAULT = """
import os
import sphinx_jaxhlo.sphinxext.documents as _documents

_real = _documents.process

def _faulty(build, example):
    if os.path.exists({marker!r}):
        raise RuntimeError("injected fault")
    return _real(build, example)

_documents.process = _faulty
"""


def build(src: Path, out: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "--no-color",
           "-d", str(out.parent / (out.name + "-doctrees")), *args, str(src), str(out)]
    proc = subprocess.run(cmd, cwd=src, capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})})
    return proc.returncode, proc.stdout + proc.stderr


def warnings_of(log: str) -> list[str]:
    return sorted(re.sub(r"^.*?(\w+\.rst)", r"\1", ln) for ln in log.splitlines() if "WARNING" in ln)


def project(src: Path, conf: str = "") -> None:
    src.mkdir(parents=True, exist_ok=True)
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_targets = ["cpu"]\n' + conf)
    (src / "index.rst").write_text(PAGE + "\n.. toctree::\n\n   other\n")
    (src / "other.rst").write_text(OTHER)


@pytest.mark.parametrize("show", [True, False])
def test_the_warning_type_ends_every_message_whatever_show_warning_types_says(tmp_path: Path, show: bool) -> None:
    src = tmp_path / "src"
    project(src, f"show_warning_types = {show}\njaxhlo_workers = 'many'\n")
    rc, log = build(src, tmp_path / "out")
    assert rc == 1, log
    assert len(warnings_of(log)) == 2, log
    ws = [w for w in warnings_of(log) if w.startswith("other.rst")]
    assert len(ws) == 1 and ws[0].startswith("other.rst:4: WARNING: jax-hlo: :args: dimension 'nope'"), ws
    assert ws[0].endswith(" [jaxhlo.args]") and ws[0].count("[jaxhlo.") == 1, ws
    config = next(line for line in log.splitlines() if "jaxhlo_workers" in line)
    assert config.endswith(" [jaxhlo.config]") and config.count("[jaxhlo.") == 1, log
    # the stored warning comes back with one suffix, not two
    rc, again = build(src, tmp_path / "out")
    assert rc == 1 and "0 added, 0 changed, 0 removed" in again, again
    assert [w for w in warnings_of(again) if "other.rst" in w] == [ws[0]], again


def test_an_internal_error_is_not_replayed_once_its_cause_is_gone(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    marker = tmp_path / "fault-on"
    project(src, FAULT.format(marker=str(marker)))
    marker.touch()
    rc, log = build(src, out)
    assert rc == 1, log
    internal = [w for w in warnings_of(log) if "[jaxhlo.internal]" in w]
    assert len(internal) == 1 and internal[0].startswith("index.rst:4:") and "injected fault" in internal[0], log
    # the same fault still there: read again, and again reported
    rc, log = build(src, out)
    assert rc == 1 and "0 added, 1 changed, 0 removed" in log, log
    assert [w for w in warnings_of(log) if "[jaxhlo.internal]" in w] == internal, log
    # the cause gone, no document edited: the pages are read again and only their claims remain
    marker.unlink()
    rc, log = build(src, out)
    ws = warnings_of(log)
    assert rc == 1 and len(ws) == 1 and ws[0].startswith("other.rst:4: WARNING: jax-hlo: :args:"), log
    assert "injected fault" not in (out / "index.html").read_text(encoding="utf-8")
    # the claim fixed: clean, and clean again without reading anything
    (src / "other.rst").write_text(OTHER.replace("f32[nope]", "f32[3]"))
    rc, log = build(src, out)
    assert rc == 0 and warnings_of(log) == [], log
    rc, log = build(src, out)
    assert rc == 0 and warnings_of(log) == [] and "0 added, 0 changed, 0 removed" in log, log


def test_a_snapshot_is_a_dependency_of_its_document(tmp_path: Path) -> None:
    """``note_dependency`` with and without Sphinx's ``docname=``: a snapshot edited
    by hand (or brought by a pull) reads its document again."""
    src, out = tmp_path / "src", tmp_path / "out"
    project(src, 'jaxhlo_snapshot_dir = "_snapshots"\n')
    (src / "other.rst").write_text(OTHER.replace("f32[nope]", "f32[3]"))
    rc, log = build(src, out, env={"JAXHLO_SNAPSHOT_MODE": "update"})
    assert rc == 0 and "internal" not in log, log
    slots = sorted((src / "_snapshots").rglob("*.json"))
    assert slots, log
    for _ in range(2):  # the first reads everything again: the mode is a setting
        rc, log = build(src, out, env={"JAXHLO_SNAPSHOT_MODE": "use"})
    assert rc == 0 and "0 added, 0 changed, 0 removed" in log, log
    slot = next(s for s in slots if "index" in s.as_posix())
    slot.write_text(slot.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    rc, log = build(src, out, env={"JAXHLO_SNAPSHOT_MODE": "use"})
    assert rc == 0 and "internal" not in log, log
    assert "0 added, 1 changed, 0 removed" in log, log


@pytest.mark.parametrize("builder", ["html", "dirhtml"])
def test_module_texts_are_written_beside_the_page(tmp_path: Path, builder: str) -> None:
    """``builder.get_output_path`` (Sphinx 8.1+) or ``get_outfilename`` (before):
    the HLO goes to text files, never silently inline."""
    src, out = tmp_path / "src", tmp_path / "out"
    project(src)
    (src / "other.rst").write_text(OTHER.replace("f32[nope]", "f32[3]"))
    rc, log = build(src, out, "-b", builder)
    assert rc == 0, log
    page = out / ("other.html" if builder == "html" else "other/index.html")
    html = page.read_text(encoding="utf-8")
    assert "data-jaxhlo-key=" in html and "HloModule" not in html, html[:2000]
    refs = module_texts(page)
    assert refs and all(script.is_file() and text.is_file() for _, script, text in refs), refs


def test_page_output_path_on_the_installed_sphinx(tmp_path: Path) -> None:
    from sphinx.testing.util import SphinxTestApp

    src = tmp_path / "src"
    project(src)
    for name, expected in (("html", "other.html"), ("dirhtml", "other/index.html")):
        app = SphinxTestApp(name, srcdir=src, builddir=tmp_path / f"b-{name}")
        try:
            path = sphinxcompat.page_output_path(app.builder, "other")
        finally:
            app.cleanup()
        assert path == Path(app.outdir) / expected, (sphinx.__version__, path)
    assert sphinxcompat.page_output_path(object(), "other") is None


#: Every Sphinx class attribute the extension calls or reads, by class (grep the package for
#: ``app.``, ``env.``, ``builder.``).  Each exists, in this form, on Sphinx 7.3 to 9;
#: ``note_dependency(docname=)`` and ``get_output_path`` go through sphinxcompat.
USED = {
    "sphinx.application:Sphinx": (
        "add_config_value", "add_directive", "add_node", "add_enumerable_node", "add_post_transform",
        "add_env_collector", "connect", "add_css_file", "add_js_file", "add_lexer"),
    "sphinx.environment:BuildEnvironment": ("note_dependency", "doc2path", "relfn2path"),
    "sphinx.builders.html:StandaloneHTMLBuilder": ("get_outfilename",),
    "sphinx.environment.collectors:EnvironmentCollector": ("clear_doc", "merge_other", "process_doc"),
    "sphinx.util.docutils:SphinxDirective": ("env", "config"),
    "sphinx.transforms.post_transforms:SphinxPostTransform": ("run", "app", "env"),
}
#: The events the extension connects to.
EVENTS = ("config-inited", "env-before-read-docs", "env-updated", "env-get-outdated", "doctree-resolved",
          "build-finished", "doctree-read")


def test_every_sphinx_api_the_extension_uses_is_on_the_installed_sphinx(tmp_path: Path) -> None:
    import importlib
    import inspect

    for where, names in USED.items():
        module, cls = where.split(":")
        owner = getattr(importlib.import_module(module), cls)
        missing = [n for n in names if not hasattr(owner, n) and n not in getattr(owner, "__annotations__", {})]
        assert not missing, (sphinx.__version__, where, missing)
    from sphinx.events import core_events
    from sphinx.util.typing import OptionSpec  # noqa: F401  (the directive's option_spec type)

    assert not [e for e in EVENTS if e not in core_events], sphinx.__version__
    from sphinx.application import Sphinx

    assert "types" in inspect.signature(Sphinx.add_config_value).parameters
    from sphinx.testing.util import SphinxTestApp

    src = tmp_path / "src"
    project(src)
    app = SphinxTestApp("html", srcdir=src, builddir=tmp_path / "b")
    try:
        for attr in ("confdir", "outdir", "doctreedir", "parallel", "builder", "env", "config", "extensions"):
            assert hasattr(app, attr), (sphinx.__version__, attr)
        for attr in ("format", "name", "outdir", "current_docname"):
            assert hasattr(app.builder, attr), (sphinx.__version__, attr)
        assert hasattr(app.config, "show_warning_types")
        for attr in ("srcdir", "dependencies", "temp_data"):
            assert hasattr(app.env, attr), (sphinx.__version__, attr)
    finally:
        app.cleanup()
