"""Sphinx wiring only: settings, directives, nodes, transforms and events."""

from __future__ import annotations

import contextlib
import logging as pylogging
import os
import re
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx.environment.collectors import EnvironmentCollector
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from sphinx_jaxhlo.core.settings import BY_NAME, SETTINGS, validate
from sphinx_jaxhlo.core.version import __version__
from sphinx_jaxhlo.render import nodes as rnodes
from sphinx_jaxhlo.sphinxext.directive import JaxHloDirective, jaxhlo_example
from sphinx_jaxhlo.sphinxext.fallback import PlainFallback

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config
    from sphinx.environment import BuildEnvironment
    from sphinx.util.typing import ExtensionMetadata

logger = logging.getLogger(__name__)

#: Bump when the data stored in the environment changes shape.
ENV_VERSION = 3
#: Warnings about the extension itself, not about what a document claims: never
#: stored and repeated; the document is read again by the next build instead.
NOT_REPLAYED = frozenset({"internal"})
STATIC = Path(__file__).parent.parent / "static"


class WarningRecorder(pylogging.Handler):
    """Keeps every ``jaxhlo`` warning located in a document while documents are read.

    A document that is not read again by a later build (nothing in it
    changed) keeps its warnings in the environment, and :func:`replay_warnings`
    repeats them: as long as a claim fails, every build says so, at the same
    place, and ``-W`` fails.  It listens on the package's logger, so the
    directive's warnings and the examples' are kept alike.

    It also ends each ``jaxhlo`` warning with ``[jaxhlo.<subtype>]`` where
    Sphinx would not (``show_warning_types`` off: Sphinx 7's default), so
    the name to give ``suppress_warnings`` shows on every supported Sphinx.
    Its handler runs before Sphinx's, which see the message with the suffix.
    """

    def __init__(self) -> None:
        super().__init__(level=pylogging.WARNING)
        self.active = False
        #: Whether to add the warning type to the message (Sphinx does not).
        self.add_type = False
        self.by_doc: dict[str, list[tuple[int, str, str]]] = {}

    def emit(self, record: pylogging.LogRecord) -> None:
        if getattr(record, "type", None) != "jaxhlo":
            return
        message = record.getMessage()
        if self.add_type and not getattr(record, "jaxhlo_typed", False):
            subtype = getattr(record, "subtype", "")
            record.msg, record.args = f"{message} [jaxhlo.{subtype}]" if subtype else f"{message} [jaxhlo]", ()
            record.jaxhlo_typed = True
        if not self.active:
            return
        location = getattr(record, "location", None)
        if isinstance(location, tuple) and location and isinstance(location[0], str):
            docname, line = location[0], location[1] if len(location) > 1 else None
        elif isinstance(location, str):
            docname, line = location, None
        else:
            return
        self.by_doc.setdefault(docname, []).append(
            (int(line or 0), str(getattr(record, "subtype", "") or ""), message))

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Warnings emitted inside are not kept (news of this build alone)."""
        active, self.active = self.active, False
        try:
            yield
        finally:
            self.active = active


RECORDER = WarningRecorder()


class ExampleCollector(EnvironmentCollector):
    """Keeps per-document build records and missing targets; merges ``-j`` readers."""

    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        _init_env(env)
        env.jaxhlo_records.pop(docname, None)  # type: ignore[attr-defined]
        env.jaxhlo_warnings.pop(docname, None)  # type: ignore[attr-defined]
        env.jaxhlo_stamps.pop(docname, None)  # type: ignore[attr-defined]
        env.jaxhlo_report_docs.discard(docname)  # type: ignore[attr-defined]
        env.jaxhlo_unfinished.discard(docname)  # type: ignore[attr-defined]
        for docs in env.jaxhlo_missing.values():  # type: ignore[attr-defined]
            docs.discard(docname)

    def merge_other(self, app: Sphinx, env: BuildEnvironment, docnames: AbstractSet[str],
                    other: BuildEnvironment) -> None:
        _init_env(env)
        _init_env(other)
        env.jaxhlo_report_docs |= other.jaxhlo_report_docs & docnames  # type: ignore[attr-defined]
        env.jaxhlo_unfinished |= other.jaxhlo_unfinished & docnames  # type: ignore[attr-defined]
        for docname in docnames:
            for attr in ("jaxhlo_records", "jaxhlo_warnings", "jaxhlo_stamps"):
                if docname in getattr(other, attr):
                    getattr(env, attr)[docname] = getattr(other, attr)[docname]
        for target, docs in other.jaxhlo_missing.items():  # type: ignore[attr-defined]
            env.jaxhlo_missing.setdefault(target, set()).update(docs & docnames)  # type: ignore[attr-defined]

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        from sphinx_jaxhlo.pipeline.run import process_document

        _init_env(app.env)
        docname = app.env.docname
        process_document(app, doctree)
        if docname in app.env.jaxhlo_records:  # type: ignore[attr-defined]
            # the toolchain this document's reports were made with: another one reads it again
            app.env.jaxhlo_stamps[docname] = toolchain_stamp()  # type: ignore[attr-defined]
        warnings = RECORDER.by_doc.pop(docname, None) or []
        claims = [w for w in warnings if w[1] not in NOT_REPLAYED]
        if claims:
            app.env.jaxhlo_warnings[docname] = claims  # type: ignore[attr-defined]
        if len(claims) < len(warnings):
            # an error of the extension (or of its surroundings), not of the document: read it
            # again next time, so the warning goes when its cause does
            app.env.jaxhlo_unfinished.add(docname)  # type: ignore[attr-defined]


def _init_env(env: BuildEnvironment) -> None:
    if not hasattr(env, "jaxhlo_records"):
        env.jaxhlo_records = {}  # type: ignore[attr-defined]
    if not hasattr(env, "jaxhlo_missing"):
        env.jaxhlo_missing = {}  # type: ignore[attr-defined]
    for name in ("jaxhlo_report_docs", "jaxhlo_unfinished"):
        if not hasattr(env, name):
            setattr(env, name, set())
    for attr in ("jaxhlo_warnings", "jaxhlo_stamps"):
        if not hasattr(env, attr):
            setattr(env, attr, {})


def toolchain_stamp() -> str:
    """The installed jax, jaxlib, compilers and ``XLA_FLAGS``, as one string."""
    from sphinx_jaxhlo.core.request import installed_versions

    return repr(installed_versions())


def _count_examples(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    from sphinx_jaxhlo.pipeline.run import count_examples

    env.jaxhlo_read = set(docnames)  # type: ignore[attr-defined]  # this build's documents, for the summary
    RECORDER.by_doc.clear()
    RECORDER.active = True  # -j readers fork after this, and record in their own process
    count_examples(app, env, docnames)
    from sphinx_jaxhlo.pipeline.schedule import start

    start(app, env, docnames)  # the build's compiles begin now, before any document is read


def _stop_scheduling(app: Sphinx, env: BuildEnvironment) -> None:
    from sphinx_jaxhlo.pipeline.schedule import stop

    stop(app, env)


def setting_location(app: Sphinx, name: str) -> str | None:
    """Where a setting was given: the line of conf.py that assigns it, or conf.py
    itself when the value came from elsewhere (``-D`` on the command line);
    ``None`` without a conf.py."""
    conf = Path(app.confdir) / "conf.py" if app.confdir else None
    if conf is None or not conf.is_file():
        return None
    try:
        lines = conf.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []
    assignment = re.compile(rf"\s*{re.escape(name)}\s*(?::[^=]*)?=(?!=)")
    number = next((i for i, line in enumerate(lines, 1) if assignment.match(line)), None)
    return f"{conf}:{number}" if number else f"{conf}:"


def replay_warnings(app: Sphinx, env: BuildEnvironment) -> None:
    """``env-updated``: repeat the warnings of the documents this build did not read again."""
    RECORDER.active = False
    RECORDER.by_doc.clear()
    _init_env(env)
    read: set[str] = getattr(env, "jaxhlo_read", set())
    for docname in sorted(env.jaxhlo_warnings):  # type: ignore[attr-defined]
        if docname in read:
            continue
        for line, subtype, message in env.jaxhlo_warnings[docname]:  # type: ignore[attr-defined]
            logger.warning("%s", message, location=(docname, line or None), type="jaxhlo", subtype=subtype)


def check_config(app: Sphinx, config: Config) -> None:
    """A bad setting warns ``jaxhlo.config`` (at its line of conf.py) and falls back to its default."""
    from sphinx_jaxhlo.sphinxext.compat import shows_warning_types

    RECORDER.add_type = not shows_warning_types(config)
    for setting in SETTINGS:
        value = config[setting.name]
        if isinstance(value, str) and setting.default is None and str not in setting.types:
            # `-D jaxhlo_workers=2`: Sphinx leaves a value whose default is None as text
            for kind in (int, float):
                if kind in setting.types:
                    try:
                        config[setting.name] = value = kind(value)
                        break
                    except ValueError:
                        continue
        problem = validate(setting.name, value)
        if problem:
            default = f"the default {setting.default!r}" if setting.default is not None else "the default (None)"
            logger.warning("jax-hlo: %s; using %s", problem, default,
                           type="jaxhlo", subtype="config", location=setting_location(app, setting.name))
            config[setting.name] = setting.default
    config.numfig_format.setdefault("jax-hlo", "Example %s")
    from sphinx_jaxhlo.store.snapshots import MODE_VARIABLE, MODES

    mode = os.environ.get(MODE_VARIABLE, "").strip()
    if mode:
        # set at config-inited, so switching modes reads every document again
        if mode in MODES:
            config.jaxhlo_snapshot_mode = mode
        else:
            logger.warning("jax-hlo: %s=%r is not one of %s; using jaxhlo_snapshot_mode=%r", MODE_VARIABLE, mode,
                           ", ".join(MODES), config.jaxhlo_snapshot_mode, type="jaxhlo", subtype="config",
                           location=setting_location(app, "jaxhlo_snapshot_mode"))
    if config.jaxhlo_executor is not None and not isinstance(config.jaxhlo_executor, str):
        # a distributed.Client made in conf.py: kept aside, named by its address
        # (it cannot be pickled with the environment)
        from sphinx_jaxhlo.pipeline.schedule import remember_client

        config.jaxhlo_executor = remember_client(config.jaxhlo_executor)
    from sphinx_jaxhlo.store.cache import is_url

    if config.jaxhlo_cache_dir and is_url(config.jaxhlo_cache_dir):
        try:
            import fsspec  # noqa: F401
        except ImportError:
            logger.warning("jax-hlo: jaxhlo_cache_dir is a URL (%s) but fsspec is not installed "
                           "(pip install 'sphinx-jaxhlo[remote]'); using the local cache", config.jaxhlo_cache_dir,
                           type="jaxhlo", subtype="config", location=setting_location(app, "jaxhlo_cache_dir"))
            config.jaxhlo_cache_dir = None
    from sphinx_jaxhlo.core import targets as targets_mod
    from sphinx_jaxhlo.core.settings import as_list

    for name in as_list(config.jaxhlo_targets):
        if name.lower() not in targets_mod.TARGETS:
            logger.warning("jax-hlo: jaxhlo_targets: unknown target %r (known: %s)", name,
                           ", ".join(targets_mod.TARGETS), type="jaxhlo", subtype="config",
                           location=setting_location(app, "jaxhlo_targets"))


def warn_missing_targets(app: Sphinx, env: BuildEnvironment) -> None:
    """One ``jaxhlo.target`` warning per missing compiler per build, not one per
    example, at the first example (by document name and line) that needed it."""
    from sphinx_jaxhlo.core import targets as targets_mod

    _init_env(env)
    records = env.jaxhlo_records  # type: ignore[attr-defined]
    for name, docs in sorted(env.jaxhlo_missing.items()):  # type: ignore[attr-defined]
        if docs:
            target = targets_mod.get_target(name)
            needed = sorted((r.docname, r.line) for doc in docs for r in records.get(doc, [])
                            if r.target == name and r.status == "target missing")
            location = needed[0] if needed else (sorted(docs)[0], None)
            logger.warning("jax-hlo: %s; %d document(s) show it as missing (%s)", target.missing_message(),
                           len(docs), ", ".join(sorted(docs)[:5]) + (" ..." if len(docs) > 5 else ""),
                           type="jaxhlo", subtype="target", location=location)


def build_finished(app: Sphinx, exc: Exception | None) -> None:
    from sphinx_jaxhlo.compiler.client import shutdown_worker
    from sphinx_jaxhlo.pipeline.schedule import finish

    finish()
    shutdown_worker()
    if exc is None and app.builder.format == "html":
        copy_static(app)
    if exc is not None or not hasattr(app.env, "jaxhlo_records"):
        return
    from sphinx_jaxhlo.pipeline.run import report_records

    read: set[str] = getattr(app.env, "jaxhlo_read", set())
    records = [r for r in report_records(app.env) if r.docname in read]
    if not records:
        return
    # "compiled": the compiler ran and gave a report (whatever the report says)
    compiled = [r for r in records if r.origin == "compiled"]
    cached = [r for r in records if r.origin == "cache"]
    stored = [r for r in records if r.origin == "snapshot"]
    bad = [r for r in records if r.status not in ("ok", "expected error", "target missing")]
    slowest = max(compiled, key=lambda r: r.seconds, default=None)
    line = f"jax-hlo: {len(compiled)} compiled, {len(cached)} from cache"
    if stored:
        line += f", {len(stored)} from snapshots"
    line += f", {len(bad)} failed"
    ahead = sum(r.prefetched for r in compiled)
    if ahead:
        line += f"; {ahead} compiled ahead of their page"
    if slowest is not None and slowest.seconds > 0:
        line += f"; slowest: {slowest.function} for {slowest.target} in {slowest.docname} ({slowest.seconds:.2f} s)"
    logger.info(line)
    for r in bad:
        logger.info("  %s:%s: %s", app.env.doc2path(r.docname), r.line,
                    r.message or f"{r.function} on {r.target}: {r.status}")


def copy_static(app: Sphinx) -> None:
    """Copy the CSS and script into the output's ``_static`` (at the end of the
    build, like Sphinx's own extensions: changing ``html_static_path`` instead
    would make every rebuild see a changed configuration)."""
    import shutil

    target = Path(app.outdir) / "_static"
    target.mkdir(parents=True, exist_ok=True)
    for name in ("jaxhlo.css", "jaxhlo.js"):
        shutil.copyfile(STATIC / name, target / name)


class jaxhlo_report(nodes.General, nodes.Element):
    """Placeholder for the build report table."""


class JaxHloReportDirective(SphinxDirective):
    """``.. jax-hlo-report::``: a table of every example of the build."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        self.env.jaxhlo_report_docs = getattr(self.env, "jaxhlo_report_docs", set())  # type: ignore[attr-defined]
        self.env.jaxhlo_report_docs.add(self.env.docname)  # type: ignore[attr-defined]
        return [jaxhlo_report()]


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
    _init_env(env)
    outdated: set[str] = set(env.jaxhlo_unfinished)  # type: ignore[attr-defined]
    if added or changed or removed:
        outdated |= env.jaxhlo_report_docs  # type: ignore[attr-defined]
    stamp = toolchain_stamp()
    outdated |= {doc for doc, s in env.jaxhlo_stamps.items() if s != stamp}  # type: ignore[attr-defined]
    if removed and app.config.jaxhlo_snapshot_dir and app.config.jaxhlo_snapshot_mode in ("update", "refresh"):
        from sphinx_jaxhlo.pipeline.run import snapshot_root
        from sphinx_jaxhlo.store import snapshots

        root = snapshot_root(app)
        for docname in removed:
            if root is not None:
                snapshots.prune(snapshots.document_folder(root, docname), ())
    return sorted(outdated - set(removed))


def fill_reports(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    from sphinx_jaxhlo.core.sizes import format_bytes
    from sphinx_jaxhlo.pipeline.run import report_records
    from sphinx_jaxhlo.render.example import table

    def size(value: int | None) -> str:
        return format_bytes(value) if value is not None else "—"

    for node in list(doctree.findall(jaxhlo_report)):
        records = report_records(app.env)
        if not records:
            node.replace_self(nodes.paragraph(text="No jax-hlo examples in this build."))
            continue
        rows = [[r.docname, str(r.line), r.function, r.target,
                 f"{r.seconds:.2f} s" if r.origin == "compiled" else "—", size(r.temp_bytes),
                 r.origin or "—", r.status] for r in records]
        out: list[nodes.Node] = [table(["document", "line", "function", "target", "compile time", "temp",
                                        "report from", "status"], rows, ["jaxhlo-report"])]
        drifted = [r for r in records if r.drift is not None]
        if drifted:
            out.append(nodes.rubric(text="Changed since the stored reports"))
            out.append(nodes.paragraph(text=(
                "Reports that differ from the last one stored for the same example and target (a snapshot, "
                "or the cache's last report, made by another toolchain). Rows marked warned moved a verdict, "
                "or temp memory beyond jaxhlo_drift_tolerance.")))
            drift_rows = [[r.docname, str(r.line), r.function, r.target, d.versions_before, d.versions_after,
                           size(d.temp_before), size(d.temp_after), size(d.peak_before), size(d.peak_after),
                           d.verdict_before, d.verdict_after, "warned" if d.significant else ""]
                          for r in drifted if (d := r.drift) is not None]
            out.append(table(["document", "line", "function", "target", "versions before", "versions after",
                              "temp before", "temp after", "peak before", "peak after", "verdict before",
                              "verdict after", "drift"], drift_rows, ["jaxhlo-report", "jaxhlo-drift"]))
        node.replace_self(out)


def _unresolved_alternative(app: Sphinx, env: Any, node: Any, contnode: Any) -> Any:
    """``missing-reference``: the link of a reason's alternative (a label of this
    package's guide) in a site that does not have the guide is its title, as text."""
    if "jaxhlo-alternative" in node.get("classes", ()):
        return contnode
    return None


def setup(app: Sphinx) -> ExtensionMetadata:
    for setting in SETTINGS:
        app.add_config_value(setting.name, setting.default, setting.rebuild,  # type: ignore[arg-type]
                             types=frozenset(setting.types))
    app.add_directive("jax-hlo", JaxHloDirective)
    app.add_directive("jax-hlo-report", JaxHloReportDirective)
    app.add_node(jaxhlo_example)
    app.add_node(jaxhlo_report)
    # HTML gets these nodes' own visitors; PlainFallback turns them into plain nodes elsewhere.
    for node_class, visitors in rnodes.HTML_VISITORS.items():
        if node_class is rnodes.jaxhlo_block:
            app.add_enumerable_node(node_class, "jax-hlo", html=visitors)
        else:
            app.add_node(node_class, html=visitors)
    app.add_post_transform(PlainFallback)
    app.add_env_collector(ExampleCollector)
    app.connect("config-inited", check_config)
    app.connect("env-before-read-docs", _count_examples)
    app.connect("env-updated", replay_warnings)
    app.connect("env-updated", _stop_scheduling)
    app.connect("env-updated", warn_missing_targets)
    app.connect("env-get-outdated", outdated_documents)
    app.connect("doctree-resolved", fill_reports)
    # after intersphinx (priority 500): a guide section neither this site nor an inventory knows stays text
    app.connect("missing-reference", _unresolved_alternative, priority=900)
    app.connect("build-finished", build_finished)
    package_logger = pylogging.getLogger("sphinx." + __package__)
    if RECORDER not in package_logger.handlers:
        package_logger.addHandler(RECORDER)
    app.add_css_file("jaxhlo.css")
    app.add_js_file("jaxhlo.js", defer="defer")
    from sphinx_jaxhlo.render.lexer import HloLexer, StableHloLexer

    app.add_lexer("hlo", HloLexer)
    app.add_lexer("stablehlo", StableHloLexer)
    return {"version": __version__, "env_version": ENV_VERSION,
            "parallel_read_safe": True, "parallel_write_safe": True}


__all__ = ["BY_NAME", "setup"]
