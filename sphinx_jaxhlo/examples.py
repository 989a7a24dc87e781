"""Compile the examples of one document, check their expectations, render them.

Runs when a document has been read (``doctree-read``), in whichever process
reads it, so ``-j N`` builds compile in parallel.  Each (function, target) is
looked up in the cache first; only misses reach the compile worker.
"""

from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx.util import logging
from sphinx.util.console import bold

from . import expectations as exp
from . import targets as targets_mod
from .cache import ReportCache, is_deterministic
from .compiler import Failure, get_pool
from .config import as_list
from .directive import jaxhlo_example
from .render.example import ExampleView, Result, render_example
from .render.nodes import jaxhlo_block
from .render.rows import display_for
from .request import DEFAULT_SHOW, CompileRequest, installed_versions
from .specs import ArgSpecs

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

logger = logging.getLogger(__name__)


@dataclass
class Record:
    """One (function, target) of one example, for the build report and summary."""

    docname: str
    line: int
    function: str
    target: str
    status: str  # "ok", "expected error", "failed expectation", or a warning subtype
    cached: bool
    seconds: float
    temp_bytes: int | None
    message: str = ""



def cache_for(app: Sphinx) -> ReportCache | None:
    if not app.config.jaxhlo_cache:
        return None
    folder = app.config.jaxhlo_cache_dir
    if folder:
        path = Path(folder)
        if not path.is_absolute():
            path = Path(app.confdir) / path
    else:
        doctrees = Path(app.doctreedir)
        path = doctrees.parent / "jaxhlo-cache"
        if doctrees.parent.resolve() == Path(app.outdir).resolve():
            # `sphinx-build -b` keeps the doctrees inside the output folder; keep
            # the cache out of what gets published, inside the doctrees.
            path = doctrees / "jaxhlo-cache"
    return ReportCache(path)


def configured_targets(app: Sphinx) -> list[str]:
    value = app.config.jaxhlo_targets
    return as_list(value) if value else targets_mod.default_targets()


class Progress:
    """``compiling jax-hlo examples... [ 40%] guide/fusion``, shared by ``-j`` readers.

    The total is counted from the sources before reading; the count of examples
    done lives in shared memory created before Sphinx forks its readers.
    """

    def __init__(self) -> None:
        self.total = 0
        self.done: Any = None

    def start(self, total: int) -> None:
        import multiprocessing

        self.total = total
        self.done = multiprocessing.get_context("fork").Value("i", 0) if total else None

    def step(self, docname: str, compiled: bool) -> None:
        if self.done is None:
            return
        with self.done.get_lock():
            self.done.value += 1
            count = self.done.value
        if compiled:
            pct = min(100, round(100 * count / max(self.total, 1)))
            logger.info(bold("compiling jax-hlo examples... ") + f"[{pct:3d}%] {docname}")


PROGRESS = Progress()


def count_examples(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """``env-before-read-docs``: count the examples about to be read, for the progress line."""
    import re

    pattern = re.compile(r"^\s*(?:\.\.\s+jax-hlo::|[`~]{3,}\s*\{jax-hlo\})", re.MULTILINE)
    total = 0
    for docname in docnames:
        try:
            total += len(pattern.findall(Path(env.doc2path(docname)).read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    PROGRESS.start(total)


def worker_count(app: Sphinx) -> int:
    """``jaxhlo_workers``, or by default: 2 on a machine with two cores or more, 1
    when Sphinx already reads in parallel (``-j``: each reader has its own)."""
    configured = app.config.jaxhlo_workers
    if configured:
        return int(configured)
    if getattr(app, "parallel", 0) > 1:
        return 1
    return min(2, os.cpu_count() or 1)


def warn(message: str, subtype: str, location: tuple[str, int]) -> None:
    logger.warning("jax-hlo: %s", message, location=location, type="jaxhlo", subtype=subtype)


def process_document(app: Sphinx, doctree: nodes.document) -> None:
    """``doctree-read``: compile and render every example of the document."""
    for node in list(doctree.findall(jaxhlo_example)):
        try:
            node.replace_self(process_example(app, node) or nodes.paragraph())
        except Exception as exc:  # never the reason a build crashes
            logger.warning("jax-hlo: internal error while building this example: %r", exc,
                           location=(node["docname"], node["lineno"]), type="jaxhlo", subtype="internal")
            from .directive import error_box

            node.replace_self(error_box(f"jax-hlo example could not be built: internal error {exc!r}"))


def process_example(app: Sphinx, node: jaxhlo_example) -> list[nodes.Node]:
    env = app.env
    docname, lineno = node["docname"], node["lineno"]
    location = (docname, lineno)
    names = node["targets"] if node["targets"] is not None else configured_targets(app)
    targets: list[targets_mod.Target] = []
    for name in names:
        try:
            target = targets_mod.get_target(name)
        except targets_mod.UnknownTargetError as exc:
            warn(str(exc), "target", location)
            continue
        if target not in targets:
            targets.append(target)
    if not targets:
        from .directive import error_box

        return [error_box("jax-hlo example has no target to compile for")]
    expectations = exp.Expectations([exp.Expectation(k, t, v, f) for k, t, v, f in node["expectations"]])
    for named in sorted(expectations.targets_named() - {t.name for t in targets}):
        if named not in targets_mod.TARGETS:
            warn(f"an expectation names unknown target {named!r}", "option", location)
        else:
            # a claim nobody checks is worse than none: say so
            warn(f"an expectation names {named}, which this example does not compile for "
                 f"(its targets: {', '.join(t.name for t in targets)}): the claim is not checked",
                 "expectation", location)
    listed = set(node["functions"]) - {""}
    for named in sorted(expectations.functions_named() - listed):
        warn(f"an expectation names function {named!r}, which :function: does not list", "option", location)
    show = node["show"] or as_list(app.config.jaxhlo_show) or list(DEFAULT_SHOW)
    extras = tuple(p for p in ("stablehlo", "jaxpr") if p in show)
    xla_flags = {**{str(k): str(v) for k, v in app.config.jaxhlo_xla_flags.items()}, **dict(node["xla_flags"])}
    timeout = node["timeout"] or float(app.config.jaxhlo_timeout)
    cache = cache_for(app)
    specs = ArgSpecs.from_json(node["specs"])
    records: list[Record] = env.jaxhlo_records.setdefault(docname, [])  # type: ignore[attr-defined]

    results: list[Result] = []
    functions: list[str] = []
    # Cache lookups first; then, per function, one compile alone (an error in the
    # example itself is the same on every target: no need to meet it three times);
    # then every other miss at once, over the process's workers.
    misses: list[tuple[Result, CompileRequest, str]] = []
    by_function: list[list[Result]] = []
    for fn in node["functions"]:
        group: list[Result] = []
        for target in targets:
            result = Result(function=fn, target=target.name, target_title=target.title)
            group.append(result)
            if not target.available():
                result.missing = target.missing_message()
                env.jaxhlo_missing.setdefault(target.name, set()).add(docname)  # type: ignore[attr-defined]
                continue
            request = CompileRequest(
                source=node["source_text"], function=fn, specs=specs, target=target.name,
                static=tuple(node["static"]), xla_flags=tuple(sorted(xla_flags.items())), extras=extras,
                source_name=node["source_name"], target_fingerprint=target.fingerprint(),
                versions=installed_versions())
            key = request.cache_key()
            result.report_key = key
            report = cache.get(key) if cache else None
            if report is not None:
                result.report, result.cached = report, True
            else:
                misses.append((result, request, key))
        by_function.append(group)
    def run(batch: list[tuple[Result, CompileRequest, str]]) -> None:
        start = time.perf_counter()
        outcomes = get_pool(worker_count(app)).compile_all([(request, timeout) for _, request, _ in batch])
        for (result, _, key), outcome in zip(batch, outcomes, strict=True):
            result.seconds = outcome.seconds if len(batch) > 1 else time.perf_counter() - start
            result.report, result.failure = outcome.report, outcome.failure
            if outcome.report is not None and cache is not None and is_deterministic(outcome.report):
                cache.put(key, outcome.report)

    rest: list[tuple[Result, CompileRequest, str]] = []
    for group in by_function:
        mine = [m for m in misses if m[0] in group]
        if not mine:
            continue
        run(mine[:1])
        first = mine[0][0].failure
        if first is not None and first.kind not in ("timeout", "crash"):
            for result, _, _ in mine[1:]:
                result.failure = first
        else:
            rest += mine[1:]
    if rest:
        run(rest)
    compiled_any = bool(misses)
    for fn, group in zip(node["functions"], by_function, strict=True):
        # the default function's real name comes back with its report
        resolved = next((r.report.function for r in group if r.report is not None), fn)
        for r in group:
            r.function = resolved or "(default function)"
        functions.append(resolved or "(default function)")
        results += group

    warned: set[tuple[str, str, str]] = set()
    for result in results:
        status, message = "ok", ""
        if result.missing:
            status = "target missing"
        elif result.failure:
            f = result.failure
            once = (result.function, f.kind, f.message)
            if f.kind in ("timeout", "crash") or once not in warned:
                warned.add(once)
                status, message = _report_failure(node, f, result.target)
            else:
                status, message = f.kind, f.message
        else:
            assert result.report is not None
            err = result.report.error
            if err is not None and not expectations.expects_error(result.target, result.function):
                line = err.message.splitlines()[0] if err.message else ""
                while line.startswith(f"{err.status}: "):  # XLA often repeats its status
                    line = line[len(err.status) + 2:]
                message = f"{result.function} failed to compile for {result.target_title}: {err.status}: {line}"
                warn(message, "compile", location)
                status = "compile error"
            result.outcomes = exp.check_all(expectations, [result.report])
            failed = [o for o in result.outcomes if not o.passed]
            for o in failed:
                warn(o.message, "expectation", location)
            if failed:
                status, message = "failed expectation", "; ".join(o.message for o in failed)
            elif err is not None and status == "ok":
                status = "expected error"
        temp = result.report.memory.temp_bytes if result.report and not result.report.error else None
        records.append(Record(docname, lineno, result.function, result.target, status, result.cached,
                              result.seconds, temp, message))

    PROGRESS.step(docname, compiled_any)
    view = ExampleView(
        source=node["source_text"], show=show, hlo_collapsed=app.config.jaxhlo_hlo_collapsed,
        hlo_language="hlo" if "hlo" in getattr(app.registry, "lexers", {}) or _has_hlo_lexer() else "text",
        file_path=node["file_path"], key=f"{docname}:{lineno}", specs=specs, static=tuple(node["static"]),
        display=display_for(app.config, node.get("view_options")))
    target_pairs = [(t.name, t.title) for t in targets]
    block = node.parent
    if cache is not None and isinstance(block, jaxhlo_block) and all(
            r.report is None or is_deterministic(r.report) for r in results):
        key = fragment_key(app, view, node["caption"], functions, target_pairs, results)
        block["fragment"] = str(cache.folder / "html" / key[:2] / f"{key}.html")
    return render_example(view, functions, target_pairs, results)


def fragment_key(app: Sphinx, view: ExampleView, caption: str, functions: list[str],
                 targets: list[tuple[str, str]], results: list[Result]) -> str:
    """A hash of everything the HTML of an example depends on, so the HTML
    writer can reuse what it wrote for the same example before."""
    import hashlib
    import json

    import docutils
    import pygments
    import sphinx

    payload = {
        "view": view.cache_parts(),
        "caption": caption, "functions": functions, "targets": targets,
        "results": [[r.function, r.target, r.report_key if r.report is not None else "",
                     None if r.failure is None else [r.failure.kind, r.failure.message, r.failure.line],
                     r.missing, [[o.expectation.kind, o.expectation.value, o.passed, o.actual] for o in r.outcomes]]
                    for r in results],
        "code": render_code_fingerprint(),
        "tools": [sphinx.__version__, docutils.__version__, pygments.__version__, app.builder.name,
                  repr(app.config.highlight_options)],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


@functools.cache
def render_code_fingerprint() -> str:
    """A digest of the code that turns reports into HTML."""
    import hashlib

    digest = hashlib.sha256()
    here = Path(__file__).parent
    for path in sorted([*(here / "render").glob("*.py"), here / "lexer.py", here / "sizes.py",
                        here / "expectations.py"]):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _has_hlo_lexer() -> bool:
    try:
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound
    except ImportError:  # pragma: no cover
        return False
    try:
        get_lexer_by_name("hlo")
    except ClassNotFound:
        return False
    return True


def _report_failure(node: jaxhlo_example, failure: Failure, target: str) -> tuple[str, str]:
    docname, lineno = node["docname"], node["lineno"]
    line = lineno
    where = ""
    if failure.line:
        if node["file_path"]:
            where = f" ({node['file_path']}, line {failure.line})"
        else:
            line = node["first_line"] + failure.line - 1
            where = f" (example line {failure.line})"
    message = failure.message + where
    if failure.kind in ("timeout", "crash"):
        message += f" [target {target}]"
    warn(message, failure.kind, (docname, line))
    return failure.kind, message


def report_records(env: BuildEnvironment) -> list[Record]:
    records: dict[str, list[Record]] = env.jaxhlo_records  # type: ignore[attr-defined]
    return [r for doc in sorted(records) for r in records[doc]]


