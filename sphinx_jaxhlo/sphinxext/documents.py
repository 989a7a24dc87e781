"""The examples of one document: through the pipeline, into the page.

Runs when a document has been read (the collector's ``process_doc``), in
whichever process reads it, so ``-j N`` builds compile in parallel.  Each
``jaxhlo_example`` placeholder holds its :class:`~sphinx_jaxhlo.core.example.Example`;
:func:`sphinx_jaxhlo.pipeline.run.process` makes its results, and
:func:`render` puts them in the page, with the key under which the HTML
writer keeps the example's HTML for later builds.  When that HTML is kept
already, the example's nodes are not made at all (most of what a cached
rebuild would spend on it): the page takes the HTML, and
:class:`ExpandDeferred` renders the example for a builder that cannot.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any

import docutils
import pygments
import sphinx
from docutils import nodes
from sphinx.environment.collectors import EnvironmentCollector
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

from sphinx_jaxhlo.core.request import installed_versions, render_fingerprint
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.core.settings import WRITING_MODES
from sphinx_jaxhlo.pipeline.build import Build, Warnings
from sphinx_jaxhlo.pipeline.run import Processed, process
from sphinx_jaxhlo.render.display import display_for
from sphinx_jaxhlo.render.example import render_example, source_nodes
from sphinx_jaxhlo.render.nodes import jaxhlo_block, jaxhlo_source
from sphinx_jaxhlo.render.sweep_map import render_sweep
from sphinx_jaxhlo.render.view import ExampleView
from sphinx_jaxhlo.sphinxext.builds import build_for, fragment_folder, snapshot_root
from sphinx_jaxhlo.sphinxext.compat import note_dependency
from sphinx_jaxhlo.sphinxext.directive import error_box, jaxhlo_example
from sphinx_jaxhlo.sphinxext.html import fragment_usable, text_keys, writes_pages
from sphinx_jaxhlo.sphinxext.state import NOT_REPLAYED, build_state, document_data
from sphinx_jaxhlo.store import analyses, snapshots
from sphinx_jaxhlo.store.cache import is_deterministic

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

logger = logging.getLogger(__name__)


class ExampleCollector(EnvironmentCollector):
    """Processes each document's examples, and keeps what they leave in the
    environment (:class:`~sphinx_jaxhlo.sphinxext.state.DocumentData`),
    merging what ``-j`` readers collected."""

    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        document_data(env).clear(docname)

    def merge_other(self, app: Sphinx, env: BuildEnvironment, docnames: AbstractSet[str],
                    other: BuildEnvironment) -> None:
        document_data(env).merge(document_data(other), docnames)

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        data = document_data(app.env)
        docname = app.env.docname
        process_document(app, doctree)
        keys = text_keys(doctree)
        if keys:
            data.texts[docname] = keys
        if docname in data.records:
            # the toolchain this document's reports were made with: another one reads it again
            data.stamps[docname] = toolchain_stamp()
        warnings = build_state(app).recorder.by_doc.pop(docname, None) or []
        claims = [w for w in warnings if w[1] not in NOT_REPLAYED]
        if claims:
            data.warnings[docname] = claims
        if len(claims) < len(warnings):
            # an error of the extension (or of its surroundings), not of the document: read it
            # again next time, so the warning goes when its cause does
            data.unfinished.add(docname)


def toolchain_stamp() -> str:
    """The installed jax, jaxlib, compilers and ``XLA_FLAGS``, as one string."""
    return repr(installed_versions())


def process_document(app: Sphinx, doctree: nodes.document) -> None:
    """Compile (or look up) and render every example of the document."""
    build = build_for(app)
    state = build_state(app)
    data = document_data(app.env)
    docname = app.env.docname
    slots: set[str] = set()
    incomplete = False
    root = snapshot_root(app)
    for node in list(doctree.findall(jaxhlo_example)):
        example = node["example"]
        docname = example.docname
        try:
            processed = process(build, example)
        except Exception as exc:  # never the reason a build crashes
            incomplete = True
            logger.warning("jax-hlo: internal error while building this example: %r", exc,
                           location=example.location, type="jaxhlo", subtype="internal")
            node.replace_self(error_box(f"jax-hlo example could not be built: internal error {exc!r}"))
            continue
        for target in processed.missing:
            data.missing.setdefault(target, set()).add(docname)
        data.records.setdefault(docname, []).extend(processed.records)
        for path in processed.dependencies:
            # read again when the snapshot changes (edited, or brought by a pull)
            note_dependency(app.env, path, docname)
            if root is not None and root in path.parents:  # a slot: its content too (see snapshots_changed)
                data.slots.setdefault(docname, {})[str(path)] = analyses.stamp(path)
        if processed.error:
            incomplete = True  # its snapshots, if any, are not the document's to prune
            node.replace_self(error_box(processed.error))
            continue
        slots |= processed.slots
        state.progress.step(docname, processed.compiled, build.scheduler)
        node.replace_self(render(app, node, processed) or nodes.paragraph())
    if root is not None and build.mode in WRITING_MODES and not incomplete:
        # slots no example of the document has any more (an example, function or target removed)
        snapshots.prune(snapshots.document_folder(root, docname), slots)


def render(app: Sphinx, node: jaxhlo_example, processed: Processed, *, defer: bool = True) -> list[nodes.Node]:
    """The page's nodes for one processed example.

    :param defer: when the HTML of the same example, rendered the same way, is
        in the cache with the module texts it shows, and this build writes HTML
        pages: only the listing (what the search index reads) and ``node``
        itself (its example), the block marked ``deferred``: the HTML writer
        takes the example's HTML from the cache, and :class:`ExpandDeferred`
        renders it whole for a builder that cannot.
    """
    example = processed.example
    settings = build_state(app).settings
    view = ExampleView(
        source=example.source, show=processed.show, hlo_collapsed=settings.hlo_collapsed,
        hlo_language="hlo",  # the setup registers the lexer with Sphinx
        file_path=example.file_path, key=f"{example.docname}:{example.line}",
        specs=example.specs, static=example.static, display=display_for(settings, example.view_options()),
        args_text=example.sweep.text if example.sweep is not None else "",
        generated_from=example.generated_from, gradients=example.grad_variants, chunking=example.chunk is not None)
    target_pairs = [(t.name, t.title) for t in processed.targets]
    results = processed.results
    block = node.parent
    folder = fragment_folder(app)
    if processed.sweep is not None:  # the claims about its flips are part of its rendering
        results = [*results, Result("", "", "", outcomes=list(processed.sweep.checks))]
    if folder is not None and isinstance(block, jaxhlo_block):
        block["text_store"] = str(folder / "texts")  # highlighted module texts, reused by later builds
        if all(r.report is None or is_deterministic(r.report) for r in results):
            key = fragment_key(app, view, example.caption, processed.functions, target_pairs, results)
            block["fragment"] = str(folder / key[:2] / f"{key}.html")
            if defer and writes_pages(app.builder) and fragment_usable(block):
                block["deferred"] = True
                listing = source_nodes(view, processed.functions) if "source" in processed.show else []
                for part in listing:  # searched as render_example leaves it: the reader's listing, not the fold
                    if isinstance(part, nodes.Element) and not isinstance(part, jaxhlo_source):
                        part["classes"].append("no-search")
                return [*listing, node]
    if processed.sweep is not None:  # its map, tables and flips
        return render_sweep(view, processed.sweep, processed.results, example.static)
    return render_example(view, processed.functions, target_pairs, results)


class ExpandDeferred(SphinxPostTransform):
    """Render whole the examples whose nodes were left to the cache
    (:func:`render`'s ``defer``) when this builder cannot take their HTML from
    it: another builder (LaTeX, text, EPUB...) reading the same doctrees, or
    a cache emptied since the page was read.  The example goes through the
    pipeline again (its report comes from where it came from at read time;
    warnings were given then) before the links are made (a post-transform
    ahead of :class:`~sphinx_jaxhlo.sphinxext.links.AlternativeLinks`)."""

    default_priority = 1

    def run(self, **kwargs: Any) -> None:
        quiet: Build | None = None
        for block in list(self.document.findall(jaxhlo_block)):
            if not block.get("deferred") or (writes_pages(self.app.builder) and fragment_usable(block)):
                continue
            node = next(iter(block.findall(jaxhlo_example)), None)
            if node is None:
                continue
            if quiet is None:
                quiet = dataclasses.replace(build_for(self.app), reporter=Warnings(), scheduler=None)
            processed = process(quiet, node["example"])
            block["deferred"] = False
            rendered = (render(self.app, node, processed, defer=False) if not processed.error
                        else [error_box(processed.error)])
            del block[:]
            block.extend(rendered or [nodes.paragraph()])


def fragment_key(app: Sphinx, view: ExampleView, caption: str, functions: list[str],
                 targets: list[tuple[str, str]], results: list[Result]) -> str:
    """A hash of everything the HTML of an example depends on, so the HTML
    writer can reuse what it wrote for the same example before."""
    payload = {
        "view": view.cache_parts(),
        "caption": caption, "functions": functions, "targets": targets,
        "results": [[r.function, r.target, r.report_key if r.report is not None else "",
                     None if r.failure is None else [r.failure.kind, r.failure.message, r.failure.line],
                     r.missing, [[o.expectation.kind, o.expectation.value, o.passed, o.actual] for o in r.outcomes],
                     r.measured]
                    for r in results],
        "code": render_fingerprint(),
        "tools": [sphinx.__version__, docutils.__version__, pygments.__version__, app.builder.name,
                  repr(app.config.highlight_options)],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
