"""Sphinx wiring only: settings, directives, nodes, transforms and events."""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING

from docutils import nodes
from sphinx.environment.collectors import EnvironmentCollector
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from . import __version__
from .config import BY_NAME, SETTINGS, validate
from .directive import JaxHloDirective, jaxhlo_example
from .render import nodes as rnodes
from .render.fallback import PlainFallback

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config
    from sphinx.environment import BuildEnvironment
    from sphinx.util.typing import ExtensionMetadata

logger = logging.getLogger(__name__)

#: Bump when the data stored in the environment changes shape.
ENV_VERSION = 1
STATIC = Path(__file__).parent / "static"


class ExampleCollector(EnvironmentCollector):
    """Keeps per-document build records and missing targets; merges ``-j`` readers."""

    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        _init_env(env)
        env.jaxhlo_records.pop(docname, None)  # type: ignore[attr-defined]
        env.jaxhlo_report_docs.discard(docname)  # type: ignore[attr-defined]
        for docs in env.jaxhlo_missing.values():  # type: ignore[attr-defined]
            docs.discard(docname)

    def merge_other(self, app: Sphinx, env: BuildEnvironment, docnames: AbstractSet[str],
                    other: BuildEnvironment) -> None:
        _init_env(env)
        _init_env(other)
        env.jaxhlo_report_docs |= other.jaxhlo_report_docs & docnames  # type: ignore[attr-defined]
        for docname in docnames:
            if docname in other.jaxhlo_records:  # type: ignore[attr-defined]
                env.jaxhlo_records[docname] = other.jaxhlo_records[docname]  # type: ignore[attr-defined]
        for target, docs in other.jaxhlo_missing.items():  # type: ignore[attr-defined]
            env.jaxhlo_missing.setdefault(target, set()).update(docs & docnames)  # type: ignore[attr-defined]

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        from .examples import process_document

        _init_env(app.env)
        process_document(app, doctree)


def _init_env(env: BuildEnvironment) -> None:
    if not hasattr(env, "jaxhlo_records"):
        env.jaxhlo_records = {}  # type: ignore[attr-defined]
    if not hasattr(env, "jaxhlo_missing"):
        env.jaxhlo_missing = {}  # type: ignore[attr-defined]
    if not hasattr(env, "jaxhlo_report_docs"):
        env.jaxhlo_report_docs = set()  # type: ignore[attr-defined]


def _count_examples(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    from .examples import count_examples

    env.jaxhlo_read = set(docnames)  # type: ignore[attr-defined]  # this build's documents, for the summary
    count_examples(app, env, docnames)


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


def check_config(app: Sphinx, config: Config) -> None:
    """A bad setting warns ``jaxhlo.config`` (at its line of conf.py) and falls back to its default."""
    for setting in SETTINGS:
        problem = validate(setting.name, config[setting.name])
        if problem:
            logger.warning("jax-hlo: %s; using the default %r", problem, setting.default,
                           type="jaxhlo", subtype="config", location=setting_location(app, setting.name))
            config[setting.name] = setting.default
    config.numfig_format.setdefault("jax-hlo", "Example %s")
    from . import targets as targets_mod
    from .config import as_list

    for name in as_list(config.jaxhlo_targets):
        if name.lower() not in targets_mod.TARGETS:
            logger.warning("jax-hlo: jaxhlo_targets: unknown target %r (known: %s)", name,
                           ", ".join(targets_mod.TARGETS), type="jaxhlo", subtype="config",
                           location=setting_location(app, "jaxhlo_targets"))


def warn_missing_targets(app: Sphinx, env: BuildEnvironment) -> None:
    """One ``jaxhlo.target`` warning per missing compiler per build, not one per
    example, at the first example (by document name and line) that needed it."""
    from . import targets as targets_mod

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
    from .compiler import shutdown_worker

    shutdown_worker()
    if exc is not None or not hasattr(app.env, "jaxhlo_records"):
        return
    from .examples import report_records

    read: set[str] = getattr(app.env, "jaxhlo_read", set())
    records = [r for r in report_records(app.env) if r.docname in read]
    if not records:
        return
    # "compiled": the compiler ran and gave a report (whatever the report says)
    compiled = [r for r in records if not r.cached and r.status in ("ok", "expected error", "failed expectation",
                                                                     "compile error")]
    cached = [r for r in records if r.cached]
    bad = [r for r in records if r.status not in ("ok", "expected error", "target missing")]
    slowest = max(compiled, key=lambda r: r.seconds, default=None)
    line = f"jax-hlo: {len(compiled)} compiled, {len(cached)} from cache, {len(bad)} failed"
    if slowest is not None and slowest.seconds > 0:
        line += f"; slowest: {slowest.function} for {slowest.target} in {slowest.docname} ({slowest.seconds:.2f} s)"
    logger.info(line)
    for r in bad:
        logger.info("  %s:%s: %s", app.env.doc2path(r.docname), r.line,
                    r.message or f"{r.function} on {r.target}: {r.status}")


def copy_static(app: Sphinx) -> None:
    if app.builder.format == "html":
        app.config.html_static_path.append(str(STATIC))  # type: ignore[attr-defined]


class jaxhlo_report(nodes.General, nodes.Element):
    """Placeholder for the build report table."""


class JaxHloReportDirective(SphinxDirective):
    """``.. jax-hlo-report::``: a table of every example of the build."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        self.env.jaxhlo_report_docs = getattr(self.env, "jaxhlo_report_docs", set())  # type: ignore[attr-defined]
        self.env.jaxhlo_report_docs.add(self.env.docname)  # type: ignore[attr-defined]
        return [jaxhlo_report()]


def outdated_reports(app: Sphinx, env: BuildEnvironment, added: AbstractSet[str], changed: AbstractSet[str],
                     removed: AbstractSet[str]) -> list[str]:
    """``env-get-outdated``: a page with ``jax-hlo-report`` tables every example, so
    it is written again whenever any document is read again."""
    if not (added or changed or removed):
        return []
    return sorted(getattr(env, "jaxhlo_report_docs", set()) - set(removed))


def fill_reports(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    from .examples import report_records
    from .render.example import table
    from .sizes import format_bytes

    for node in list(doctree.findall(jaxhlo_report)):
        records = report_records(app.env)
        rows = [[r.docname, str(r.line), r.function, r.target,
                 f"{r.seconds:.2f} s" if not r.cached else "—",
                 format_bytes(r.temp_bytes) if r.temp_bytes is not None else "—",
                 "cached" if r.cached else "compiled", r.status] for r in records]
        node.replace_self(table(["document", "line", "function", "target", "compile time", "temp",
                                 "cache", "status"], rows, ["jaxhlo-report"]) if rows
                          else nodes.paragraph(text="No jax-hlo examples in this build."))


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
    app.connect("env-updated", warn_missing_targets)
    app.connect("env-get-outdated", outdated_reports)
    app.connect("doctree-resolved", fill_reports)
    app.connect("build-finished", build_finished)
    app.connect("builder-inited", copy_static)
    app.add_css_file("jaxhlo.css")
    app.add_js_file("jaxhlo.js", defer="defer")
    try:
        from .lexer import HloLexer, StableHloLexer
    except ImportError:  # the lexer module is optional at import time
        pass
    else:
        app.add_lexer("hlo", HloLexer)
        app.add_lexer("stablehlo", StableHloLexer)
    return {"version": __version__, "env_version": ENV_VERSION,
            "parallel_read_safe": True, "parallel_write_safe": True}


__all__ = ["BY_NAME", "setup"]
