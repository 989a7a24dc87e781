"""The extension's ``setup``: what it registers with Sphinx and the events it
answers; each handler hands over to the module that does the work."""

from __future__ import annotations

import functools
import gc
import logging as pylogging
import shutil
import time
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sphinx.util import logging

from sphinx_jaxhlo.compiler.client import shutdown_worker
from sphinx_jaxhlo.core import targets as targets_mod
from sphinx_jaxhlo.core.settings import WRITING_MODES
from sphinx_jaxhlo.core.version import __version__
from sphinx_jaxhlo.pipeline.scan import NOTEBOOK_CELL_LINES, cell_and_line
from sphinx_jaxhlo.render import nodes as rnodes
from sphinx_jaxhlo.render.lexer import HloLexer, StableHloLexer
from sphinx_jaxhlo.sphinxext import builds, config, report
from sphinx_jaxhlo.sphinxext.directive import JaxHloDirective, jaxhlo_example
from sphinx_jaxhlo.sphinxext.documents import ExampleCollector, ExpandDeferred, toolchain_stamp
from sphinx_jaxhlo.sphinxext.fallback import PlainFallback
from sphinx_jaxhlo.sphinxext.html import HTML_VISITORS, add_page_scripts, prune_text_files
from sphinx_jaxhlo.sphinxext.links import setup_links
from sphinx_jaxhlo.sphinxext.state import PACKAGE_LOGGER, build_state, document_data
from sphinx_jaxhlo.store import snapshots

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment
    from sphinx.util.typing import ExtensionMetadata

logger = logging.getLogger(__name__)

#: Bump when the data stored in the environment changes shape.
ENV_VERSION = 9
STATIC = Path(__file__).parent.parent / "static"


def before_reading(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """``env-before-read-docs``: count the examples about to be read and start their compiles."""
    state = build_state(app)
    state.started = time.time()
    state.read = set(docnames)  # this build's documents, for the summary
    state.caches.clear()  # fresh cache objects each build (their problems and reachability)
    state.builds.clear()
    state.recorder.by_doc.clear()
    state.recorder.active = True  # -j readers fork after this, and record in their own process
    examples = list(builds.examples_in(app, env, docnames))  # each document read once, for both
    state.progress.start(len(examples))
    builds.start(app, examples)  # the build's compiles begin now, before any document is read
    set_heap_aside(app, env)


def set_heap_aside(app: Sphinx, env: BuildEnvironment) -> None:
    """``env-before-read-docs`` (above) and ``env-updated``: what the build holds now (Sphinx,
    the extensions' modules and the configuration before reading; the pages read, before
    writing) stays until the build ends, so the garbage collector is told to leave it alone
    until then (``gc.freeze``; :func:`build_finished` gives it back).  Each full collection
    that reading or writing pages sets off then walks only what was made since, not the whole
    heap again; a page's examples add hundreds of objects to it (their doctree's nodes), so this
    is a cost per report.  Peak memory stays what it was: the doctrees Sphinx drops one by one
    while writing go when the build ends instead, and before writing it holds them all.

    The collector's permanent generation is the whole process's: a host that had frozen objects
    of its own before the build (a server that forks workers after ``gc.freeze``) keeps managing
    it, and nothing is frozen or given back by the build."""
    state = build_state(app)
    if not state.froze_heap and gc.get_freeze_count():
        return
    state.froze_heap = True
    gc.freeze()


def replay_warnings(app: Sphinx, env: BuildEnvironment) -> None:
    """``env-updated``: repeat the warnings of the documents this build did not read again."""
    state = build_state(app)
    state.recorder.active = False
    state.recorder.by_doc.clear()
    data = document_data(env)
    for docname in sorted(data.warnings):
        if docname in state.read:
            continue
        for line, subtype, message in data.warnings[docname]:
            logger.warning("%s", message, location=(docname, line or None), type="jaxhlo", subtype=subtype)


def stop_scheduling(app: Sphinx, env: BuildEnvironment) -> None:
    builds.stop(app)


def warn_missing_targets(app: Sphinx, env: BuildEnvironment) -> None:
    """One ``jaxhlo.target`` warning per missing compiler per build, not one per
    example, at the first example (by document name and line) that needed it."""
    data = document_data(env)
    for name, docs in sorted(data.missing.items()):
        if docs:
            target = targets_mod.get_target(name)
            needed = sorted((r.docname, r.line) for doc in docs for r in data.records.get(doc, [])
                            if r.target == name and r.status == "target missing")
            location = needed[0] if needed else (sorted(docs)[0], None)
            logger.warning("jax-hlo: %s; %d document(s) show it as missing (%s)", target.missing_message(),
                           len(docs), ", ".join(sorted(docs)[:5]) + (" ..." if len(docs) > 5 else ""),
                           type="jaxhlo", subtype="target", location=location)


def outdated_documents(app: Sphinx, env: BuildEnvironment, added: AbstractSet[str], changed: AbstractSet[str],
                       removed: AbstractSet[str]) -> list[str]:
    """``env-get-outdated``: documents to read again although their text did not change.

    A page with ``jax-hlo-report`` tables every example, so it is read again
    whenever any document is; a document whose reports were made by another
    toolchain (jax, a compiler, ``XLA_FLAGS``) is read again, so an upgrade
    checks every claim anew (and compares with the stored reports); a
    document where the extension itself failed (an internal error) is read
    again by every build until it reads without one.
    """
    data = document_data(env)
    outdated: set[str] = set(data.unfinished)
    if added or changed or removed:
        outdated |= data.report_docs
    stamp = toolchain_stamp()
    outdated |= {doc for doc, s in data.stamps.items() if s != stamp}
    outdated |= snapshots_changed(data.slots)
    root = builds.snapshot_root(app)
    if removed and root is not None and build_state(app).settings.snapshot_mode in WRITING_MODES:
        for docname in removed:
            snapshots.prune(snapshots.document_folder(root, docname), ())
    return sorted(outdated - set(removed))


def snapshots_changed(slots: dict[str, dict[str, snapshots.SlotStamp]]) -> set[str]:
    """The documents one of whose snapshots has other content than when the document was read,
    however its files changed (Sphinx's own check of a dependency, by its modification time,
    misses a file put back with an older time: ``mv`` from a backup, ``cp -p``, ``touch -d``).
    A slot whose files are untouched costs one ``stat`` per file; the others are read again,
    and those with the same content keep their new state (``slots`` is updated)."""
    changed = set()
    for docname, stamps in slots.items():
        for path, recorded in stamps.items():
            kept = snapshots.recheck(Path(path), recorded)
            if kept is None:
                changed.add(docname)
                break
            if kept is not recorded:
                stamps[path] = kept
    return changed


def build_finished(app: Sphinx, exc: Exception | None) -> None:
    state = build_state(app)
    if state.froze_heap:  # what set_heap_aside set aside is the collector's again (a process that builds again)
        state.froze_heap = False
        gc.unfreeze()
    builds.finish(app)
    shutdown_worker()
    pylogging.getLogger(PACKAGE_LOGGER).removeHandler(state.recorder)
    if exc is None and app.builder.format == "html":
        copy_static(app)
        if state.started:
            # texts no page uses any more (an example edited or removed since an earlier build)
            keep = set().union(*document_data(app.env).texts.values())
            prune_text_files(Path(app.outdir), keep, state.started)
    if exc is None:
        report.summarize(app)


def copy_static(app: Sphinx) -> None:
    """Copy the CSS and script into the output's ``_static`` (at the end of the
    build, like Sphinx's own extensions: changing ``html_static_path`` instead
    would make every rebuild see a changed configuration)."""
    target = Path(app.outdir) / "_static"
    target.mkdir(parents=True, exist_ok=True)
    for name in ("jaxhlo.css", "jaxhlo.js"):
        shutil.copyfile(STATIC / name, target / name)


def notebook_place(app: Sphinx, docname: str, line: int) -> str | None:
    """``path/parallel.ipynb:cell 54, line 4`` for a line MyST-NB numbered in a
    notebook's cell (``.ipynb``, or a suffix of ``nb_custom_formats``); ``None``
    for any other document or line."""
    if line < NOTEBOOK_CELL_LINES:
        return None
    path = str(app.env.doc2path(docname))
    if not path.endswith((".ipynb", *(getattr(app.config, "nb_custom_formats", None) or ()))):
        return None
    place = cell_and_line(line)
    return f"{path}:cell {place[0]}, line {place[1]}" if place is not None else None


def _unresolved_alternative(app: Sphinx, env: Any, node: Any, contnode: Any) -> Any:
    """``missing-reference``: the link of a reason's alternative (a label of this
    package's guide) in a site that does not have the guide is its title, as text."""
    if "jaxhlo-alternative" in node.get("classes", ()):
        return contnode
    return None


def setup(app: Sphinx) -> ExtensionMetadata:
    state = build_state(app)
    package_logger = pylogging.getLogger(PACKAGE_LOGGER)
    if state.recorder not in package_logger.handlers:
        package_logger.addHandler(state.recorder)
    state.recorder.place = functools.partial(notebook_place, app)
    config.register(app)
    app.add_directive("jax-hlo", JaxHloDirective)
    app.add_directive("jax-hlo-report", report.JaxHloReportDirective)
    app.add_node(jaxhlo_example)
    app.add_node(report.jaxhlo_report)
    # HTML gets these nodes' own visitors; PlainFallback turns them into plain nodes elsewhere.
    for node_class, visitors in HTML_VISITORS.items():
        if node_class is rnodes.jaxhlo_block:
            app.add_enumerable_node(node_class, "jax-hlo", html=visitors)
        else:
            app.add_node(node_class, html=visitors)
    app.add_post_transform(PlainFallback)
    app.add_post_transform(ExpandDeferred)
    setup_links(app)
    app.add_env_collector(ExampleCollector)
    app.connect("config-inited", config.check_config)
    app.connect("env-before-read-docs", before_reading)
    app.connect("env-updated", replay_warnings)
    app.connect("env-updated", stop_scheduling)
    app.connect("env-updated", warn_missing_targets)
    app.connect("env-updated", set_heap_aside, priority=900)  # after every other handler's work
    app.connect("env-get-outdated", outdated_documents)
    app.connect("doctree-resolved", report.fill_reports)
    # after intersphinx (priority 500): a guide section neither this site nor an inventory knows stays text
    app.connect("missing-reference", _unresolved_alternative, priority=900)
    app.connect("html-page-context", add_page_scripts)
    app.connect("build-finished", build_finished)
    app.add_css_file("jaxhlo.css")
    app.add_js_file("jaxhlo.js", defer="defer")
    app.add_lexer("hlo", HloLexer)
    app.add_lexer("stablehlo", StableHloLexer)
    return {"version": __version__, "env_version": ENV_VERSION,
            "parallel_read_safe": True, "parallel_write_safe": True}
