"""Compile the examples of one document, check their expectations, render them.

Runs when a document has been read (``doctree-read``), in whichever process
reads it, so ``-j N`` builds compile in parallel.  Each example goes through
named steps:

1. :func:`plan`: one :class:`Job` per (function, target): its compile request
   and, with ``jaxhlo_snapshot_dir``, its snapshot slot;
2. :func:`look_up`: a snapshot (as the mode allows), else the cache; only
   misses are left;
3. :func:`compile_misses`: the misses go to the compile workers;
4. :func:`reconcile`: snapshots refreshed (``update``) or compared
   (``check``), and each fresh report compared with the one stored before it
   (drift);
5. :func:`check`: expectations checked, warnings, the build's records;

then the example is rendered.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx.util import logging
from sphinx.util.console import bold

from sphinx_jaxhlo.compiler.client import Limits, failure_of, get_pool
from sphinx_jaxhlo.core import expectations as exp
from sphinx_jaxhlo.core import targets as targets_mod
from sphinx_jaxhlo.core.report import TargetFailure
from sphinx_jaxhlo.core.request import (
    DEFAULT_SHOW,
    RENDER_LAYERS,
    CompileRequest,
    code_fingerprint,
    installed_versions,
    package_fingerprint,
)
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.core.settings import as_list
from sphinx_jaxhlo.core.specs import ArgSpecs, MeshSpec
from sphinx_jaxhlo.render.example import ExampleView, render_example
from sphinx_jaxhlo.render.nodes import jaxhlo_block
from sphinx_jaxhlo.render.rows import display_for
from sphinx_jaxhlo.sphinxext.directive import jaxhlo_example
from sphinx_jaxhlo.store import snapshots
from sphinx_jaxhlo.store.cache import InvalidReport, ReportCache, is_deterministic, is_url
from sphinx_jaxhlo.store.drift import Drift, compare

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
    #: Where the report came from: "compiled", "cache", "snapshot", or "" (none).
    origin: str
    seconds: float
    temp_bytes: int | None
    message: str = ""
    #: How the report differs from the one stored before it, when it does.
    drift: Drift | None = None
    #: Compiled by the build's scheduler before the document was read (see :mod:`sphinx_jaxhlo.pipeline.schedule`).
    prefetched: bool = False

    @property
    def cached(self) -> bool:
        """The report was not compiled by this build."""
        return self.origin in ("cache", "snapshot")


# -- settings ------------------------------------------------------------------

def default_cache_folder(app: Sphinx) -> Path:
    """``jaxhlo-cache`` beside the doctrees, never inside the published output."""
    doctrees = Path(app.doctreedir)
    if doctrees.parent.resolve() == Path(app.outdir).resolve():
        # `sphinx-build -b` keeps the doctrees inside the output folder; keep
        # the cache out of what gets published, inside the doctrees.
        return doctrees / "jaxhlo-cache"
    return doctrees.parent / "jaxhlo-cache"


def cache_location(app: Sphinx) -> str | Path:
    """``jaxhlo_cache_dir`` as a URL, or as a folder (relative to ``conf.py``)."""
    configured = app.config.jaxhlo_cache_dir
    if configured and is_url(configured):
        return str(configured)
    if configured:
        path = Path(configured)
        return path if path.is_absolute() else Path(app.confdir) / path
    return default_cache_folder(app)


#: One cache object per location and process (a forked reader gets its own).
_CACHES: dict[tuple[str, int], ReportCache] = {}


def cache_for(app: Sphinx) -> ReportCache | None:
    if not app.config.jaxhlo_cache:
        return None
    location = cache_location(app)
    key = (str(location), os.getpid())
    if key not in _CACHES:
        try:
            _CACHES[key] = ReportCache(location, app.config.jaxhlo_cache_options)
        except ImportError:  # fsspec went missing after the settings were checked
            _CACHES[key] = ReportCache(default_cache_folder(app))
    return _CACHES[key]


def forget_caches() -> None:
    """Start each build with fresh cache objects (their problems and reachability)."""
    _CACHES.clear()


def fragment_folder(app: Sphinx) -> Path | None:
    """Where the rendered HTML of examples is kept: always a local folder, even
    when the reports come from a URL (HTML is never taken from a shared store)."""
    if not app.config.jaxhlo_cache:
        return None
    location = cache_location(app)
    return (location if isinstance(location, Path) else default_cache_folder(app)) / "html"


def snapshot_root(app: Sphinx) -> Path | None:
    configured = app.config.jaxhlo_snapshot_dir
    if not configured:
        return None
    path = Path(configured)
    return path if path.is_absolute() else Path(app.confdir) / path


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
            from sphinx_jaxhlo.pipeline.schedule import current

            pct = min(100, round(100 * count / max(self.total, 1)))
            scheduler = current()
            state = scheduler.progress() if scheduler is not None else ""
            logger.info(bold("compiling jax-hlo examples... ") + f"[{pct:3d}%] {docname}"
                        + (f" ({state})" if state else ""))


PROGRESS = Progress()


def count_examples(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """``env-before-read-docs``: count the examples about to be read, for the progress line."""
    import re

    forget_caches()
    pattern = re.compile(r"^\s*(?:\.\.\s+jax-hlo::|[`~:]{3,}\s*\{jax-hlo\})", re.MULTILINE)
    total = 0
    for docname in docnames:
        try:
            total += len(pattern.findall(Path(env.doc2path(docname)).read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    PROGRESS.start(total)


def worker_count(app: Sphinx) -> int:
    """``jaxhlo_workers``, or by default what the machine holds
    (:func:`sphinx_jaxhlo.pipeline.schedule.machine_workers`); a reader forked by
    ``-j`` compiles only what the build's forecast missed, with one worker."""
    from sphinx_jaxhlo.pipeline.schedule import current, machine_workers

    configured = app.config.jaxhlo_workers
    if configured:
        return int(configured)
    scheduler = current()
    if (scheduler is not None and scheduler.forked) or (scheduler is None and getattr(app, "parallel", 0) > 1
                                                        and _forked_reader()):
        return 1
    return machine_workers()


#: The process that read the configuration (a ``-j`` reader is forked from it).
_MAIN_PID = os.getpid()


def _forked_reader() -> bool:
    return os.getpid() != _MAIN_PID


def warn(message: str, subtype: str, location: tuple[str, int], *, repeat: bool = True) -> None:
    """Warn at an example.

    :param repeat: whether later builds that do not read the document again
        repeat it (see :class:`sphinx_jaxhlo.sphinxext.extension.WarningRecorder`): yes for
        what stays true until the document or a file it reads changes (a failed
        claim, a stale snapshot); no for news of this build alone (drift against
        a stored report this build has just replaced, a cache entry it rewrote).
    """
    if repeat:
        logger.warning("jax-hlo: %s", message, location=location, type="jaxhlo", subtype=subtype)
        return
    from sphinx_jaxhlo.sphinxext.extension import RECORDER

    with RECORDER.paused():
        logger.warning("jax-hlo: %s", message, location=location, type="jaxhlo", subtype=subtype)


# -- one document ----------------------------------------------------------------

@dataclass
class DocumentState:
    """What the examples of one document used, for pruning its snapshot folder."""

    slots: set[str] = field(default_factory=set)
    incomplete: bool = False


def process_document(app: Sphinx, doctree: nodes.document) -> None:
    """``doctree-read``: compile and render every example of the document."""
    state = DocumentState()
    docname = app.env.docname
    for node in list(doctree.findall(jaxhlo_example)):
        docname = node["docname"]
        try:
            node.replace_self(process_example(app, node, state) or nodes.paragraph())
        except Exception as exc:  # never the reason a build crashes
            state.incomplete = True
            logger.warning("jax-hlo: internal error while building this example: %r", exc,
                           location=(node["docname"], node["lineno"]), type="jaxhlo", subtype="internal")
            from sphinx_jaxhlo.sphinxext.directive import error_box

            node.replace_self(error_box(f"jax-hlo example could not be built: internal error {exc!r}"))
    root = snapshot_root(app)
    if root is not None and app.config.jaxhlo_snapshot_mode in snapshots.WRITING_MODES and not state.incomplete:
        # slots no example of the document has any more (an example, function or target removed)
        snapshots.prune(snapshots.document_folder(root, docname), state.slots)


# -- one example -------------------------------------------------------------------

@dataclass
class Context:
    """Everything one example's steps share."""

    app: Sphinx
    node: jaxhlo_example
    location: tuple[str, int]
    expectations: exp.Expectations
    cache: ReportCache | None
    snapshot_root: Path | None
    mode: str
    tolerance: float
    #: The example's ``:timeout:``, else ``jaxhlo_timeout``; ``None``: limits that fit (:func:`timeout_limits`).
    timeout: float | None


@dataclass
class Job:
    """One (function, target) of an example on its way to a report."""

    result: Result
    target: targets_mod.Target
    request: CompileRequest
    identity: dict[str, Any]
    #: The versions that decide this target's report here.
    tools: dict[str, str]
    #: The snapshot slot (its JSON file), with ``jaxhlo_snapshot_dir``.
    slot: Path | None = None
    stored: snapshots.Stored | None = None
    #: Why the slot's snapshot could not be used, when it could not.
    stored_problem: str = ""
    origin: str = ""
    drift: Drift | None = None
    prefetched: bool = False

    @property
    def key(self) -> str:
        return self.result.report_key

    @property
    def stored_matches(self) -> bool:
        return self.stored is not None and self.stored.snapshot.identity == self.identity

    @property
    def what(self) -> str:
        function = self.request.function
        if not function and self.stored is not None:  # the default function, as named when the snapshot was made
            function = str(self.stored.snapshot.facts.get("function") or "")
        return f"{function or 'the default function'} on {self.target.name}"


def process_example(app: Sphinx, node: jaxhlo_example, state: DocumentState | None = None) -> list[nodes.Node]:
    docname, lineno = node["docname"], node["lineno"]
    location = (docname, lineno)
    expectations = exp.Expectations([exp.Expectation(k, t, v, f) for k, t, v, f in node["expectations"]])
    ctx = Context(app, node, location, expectations, cache_for(app), snapshot_root(app),
                  app.config.jaxhlo_snapshot_mode, float(app.config.jaxhlo_drift_tolerance),
                  node["timeout"] or app.config.jaxhlo_timeout)
    targets = resolve_targets(ctx)
    if not targets:
        from sphinx_jaxhlo.sphinxext.directive import error_box

        if state is not None:
            state.incomplete = True  # its snapshots, if any, are not the document's to prune
        return [error_box("jax-hlo example has no target to compile for")]
    show = node["show"] or as_list(app.config.jaxhlo_show) or list(DEFAULT_SHOW)
    by_function = plan(ctx, targets, show)
    jobs = [job for group in by_function for job in group]
    if state is not None:
        state.slots.update(job.slot.name.removesuffix(".json") for job in jobs if job.slot is not None)
    misses = look_up(ctx, jobs)
    compile_misses(ctx, by_function, misses)
    reconcile(ctx, jobs)
    if ctx.cache is not None:
        for problem in ctx.cache.problems:
            warn(problem, "cache", location, repeat=False)
        ctx.cache.problems.clear()
    functions = []
    for fn, group in zip(node["functions"], by_function, strict=True):
        # the default function's real name comes back with its report
        resolved = next((j.result.report.function for j in group if j.result.report is not None), fn)
        for job in group:
            job.result.function = resolved or "(default function)"
        functions.append(resolved or "(default function)")
    check(ctx, jobs)
    PROGRESS.step(docname, bool(misses))
    return render(ctx, functions, targets, [job.result for job in jobs], show)


def example_name(node: jaxhlo_example) -> str:
    """The example's name in snapshot slots: its ``:name:``, else its place in the document."""
    block = node.parent
    names = block.get("names", []) if isinstance(block, jaxhlo_block) else []
    if names:
        return str(names[0])
    return f"example-{node.get('ordinal') or node['lineno']}"


def target_names(ctx: Context) -> list[str]:
    """The names of the targets the example asks for (checked by :func:`resolve_targets`)."""
    node = ctx.node
    if node["targets"] is not None:
        return list(node["targets"])
    if ctx.app.config.jaxhlo_targets:
        return as_list(ctx.app.config.jaxhlo_targets)
    if ctx.mode == "use" and ctx.snapshot_root is not None:
        # no compiler decides the defaults here: the targets snapshots were made for
        return snapshot_targets(ctx) or list(targets_mod.DEFAULT_TARGETS)
    return targets_mod.default_targets()


def resolve_targets(ctx: Context) -> list[targets_mod.Target]:
    """The example's targets; warns about unknown ones and about expectations no target checks."""
    node, location = ctx.node, ctx.location
    names = target_names(ctx)
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
        return targets
    for named in sorted(ctx.expectations.targets_named() - {t.name for t in targets}):
        if named not in targets_mod.TARGETS:
            warn(f"an expectation names unknown target {named!r}", "option", location)
        else:
            # a claim nobody checks is worse than none: say so
            warn(f"an expectation names {named}, which this example does not compile for "
                 f"(its targets: {', '.join(t.name for t in targets)}): the claim is not checked",
                 "expectation", location)
    listed = set(node["functions"]) - {""}
    for named in sorted(ctx.expectations.functions_named() - listed):
        warn(f"an expectation names function {named!r}, which :function: does not list", "option", location)
    return targets


def snapshot_targets(ctx: Context) -> list[str]:
    """The known targets that have a snapshot of this example's first function."""
    assert ctx.snapshot_root is not None
    folder = snapshots.document_folder(ctx.snapshot_root, ctx.node["docname"])
    name, fn = example_name(ctx.node), ctx.node["functions"][0]
    return [t for t in targets_mod.TARGETS
            if (folder / (snapshots.slot_name(name, fn, t) + ".json")).is_file()]


def plan(ctx: Context, targets: list[targets_mod.Target], show: list[str]) -> list[list[Job]]:
    """One :class:`Job` per (function, target), grouped by function."""
    node, app = ctx.node, ctx.app
    extras = tuple(p for p in ("stablehlo", "jaxpr") if p in show)
    xla_flags = {**{str(k): str(v) for k, v in app.config.jaxhlo_xla_flags.items()}, **dict(node["xla_flags"])}
    specs = ArgSpecs.from_json(node["specs"])
    mesh = MeshSpec.from_json(node["mesh"]) if node.get("mesh") else None
    versions = installed_versions()
    folder = (snapshots.document_folder(ctx.snapshot_root, node["docname"])
              if ctx.snapshot_root is not None else None)
    name = example_name(node)
    chunks = node.get("chunk") or {}
    budget = chunk_budget(app)
    by_function = []
    for fn in node["functions"]:
        group = []
        for target in targets:
            request = CompileRequest(
                source=node["source_text"], function=fn, specs=specs, target=target.name,
                static=tuple(node["static"]), xla_flags=tuple(sorted(xla_flags.items())), extras=extras,
                donate=tuple(node.get("donate", ())),
                source_name=node["source_name"], target_fingerprint=target.fingerprint(), versions=versions,
                mesh=mesh, chunk=json.dumps(chunks[fn], sort_keys=True) if fn in chunks else "",
                chunk_budget=budget)
            result = Result(function=fn, target=target.name, target_title=target.title,
                            report_key=request.cache_key())
            job = Job(result, target, request, snapshots.identity(request),
                      snapshots.toolchain(dict(versions), target.name))
            if folder is not None:
                job.slot = folder / (snapshots.slot_name(name, fn, target.name) + ".json")
            group.append(job)
        by_function.append(group)
    return by_function


def chunk_budget(app: Sphinx) -> int:
    """``jaxhlo_chunk_budget`` in bytes; 0 for the default (requests then keep their stored form)."""
    from sphinx_jaxhlo.core.chunks import DEFAULT_CHUNK_BUDGET
    from sphinx_jaxhlo.core.sizes import parse_size

    value = app.config.jaxhlo_chunk_budget
    try:
        budget = value if isinstance(value, int) else parse_size(str(value))
    except ValueError:
        return 0
    return 0 if budget == DEFAULT_CHUNK_BUDGET or budget <= 0 else budget


def look_up(ctx: Context, jobs: list[Job]) -> list[Job]:
    """Fill each job from its snapshot (as the mode allows) or the cache.

    :return: the jobs left to compile.
    """
    from sphinx_jaxhlo.pipeline.schedule import current

    misses: list[Job] = []
    docname = ctx.node["docname"]
    scheduler = current()
    for job in jobs:
        result, target = job.result, job.target
        problem = targets_mod.mesh_problem(target, job.request.mesh)
        if problem is not None:  # the mesh does not span this target's devices
            result.failure = failure_of(job.request, "args", f":mesh: {problem}")
            continue
        if job.slot is not None:
            if snapshot_answers(ctx, job):
                continue
            if ctx.mode == "use":
                result.failure = failure_of(job.request, "snapshot", snapshot_missing(ctx, job))
                continue
        if not target.available():
            result.missing = target.missing_message()
            ctx.app.env.jaxhlo_missing.setdefault(target.name, set()).add(docname)  # type: ignore[attr-defined]
            continue
        report = None
        if scheduler is not None and job.key in scheduler.planned:
            misses.append(job)  # compiled by this build's scheduler: its outcome, not the cache, says so
            continue
        if ctx.cache is not None:
            report = ctx.cache.get(job.key, function=job.request.function, target=target.name,
                                   source=job.request.source)
        if report is not None:
            result.report, job.origin = report, "cache"
        else:
            misses.append(job)
    return misses


def snapshot_answers(ctx: Context, job: Job) -> bool:
    """Read the job's snapshot; take its report when the mode allows (then ``True``)."""
    assert job.slot is not None
    try:
        job.stored = snapshots.read(job.slot)
    except snapshots.SnapshotError as exc:
        job.stored_problem = f"the snapshot {_shown(ctx, job.slot)} cannot be used: {exc}"
    usable = job.stored_matches and (
        ctx.mode == "use"
        or (ctx.mode == "update" and job.stored.snapshot.toolchain == job.tools)  # type: ignore[union-attr]
        or (ctx.mode in snapshots.WRITING_MODES and not job.target.available()))
    return usable and use_snapshot(ctx, job)


def use_snapshot(ctx: Context, job: Job) -> bool:
    """Take the job's report from its snapshot, the analysis derived again."""
    assert job.stored is not None
    try:
        report = job.stored.snapshot.report(job.request.source, job.request.source_name)
    except InvalidReport as exc:
        job.stored_problem = f"the snapshot {_shown(ctx, job.stored.path)} cannot be used: {exc}"
        return False
    job.result.report, job.origin = report, "snapshot"
    # the rendering depends on the stored data and on the code that analyses it
    job.result.report_key = hashlib.sha256((job.stored.digest + code_fingerprint()).encode()).hexdigest()
    return True


def snapshot_missing(ctx: Context, job: Job) -> str:
    """Why a job has no snapshot to show, and what to do about it."""
    refresh = f"make one with {snapshots.MODE_VARIABLE}=update"
    if job.stored_problem:
        return f"{job.what}: {job.stored_problem}; {refresh}"
    assert job.slot is not None
    if job.stored is None:
        return f"{job.what}: no snapshot ({_shown(ctx, job.slot)}); {refresh}"
    changes = snapshots.identity_changes(job.stored.snapshot.identity, job.identity)
    return (f"{job.what}: the snapshot {_shown(ctx, job.slot)} was made for another version of this example "
            f"({', '.join(changes)} changed) and is not shown; {refresh}")


def _shown(ctx: Context, path: Path) -> str:
    """A path as the user knows it: relative to the folder of ``conf.py`` when inside it."""
    try:
        return str(path.relative_to(Path(ctx.app.confdir)))
    except ValueError:
        return str(path)


def timeout_limits(ctx: Context, target: targets_mod.Target, observed: float | None) -> Limits:
    """How long a compile of the example for ``target`` may take (see :class:`Limits`)."""
    return Limits.fitting(target, ctx.timeout, observed)


def compile_misses(ctx: Context, by_function: list[list[Job]], misses: list[Job]) -> None:
    """Take what the build's scheduler compiled for the example (waiting for
    its own results only); compile the rest here: per function, one compile
    alone (an error in the example itself is the same on every target: no
    need to meet it three times), then every other miss at once, over the
    process's workers."""
    from sphinx_jaxhlo.pipeline.schedule import current

    cache = ctx.cache
    scheduler = current()
    if scheduler is not None:
        for job in misses:
            outcome = scheduler.take(job.key)
            if outcome is not None:
                job.result.seconds = outcome.seconds
                job.result.report, job.result.failure = outcome.report, outcome.failure
                job.prefetched = True
                if outcome.report is not None:
                    job.origin = "compiled"
        misses = [job for job in misses if not job.prefetched]

    def run(batch: list[Job]) -> None:
        start = time.perf_counter()
        observed = {id(job): ctx.cache.compile_seconds(snapshots.identity_key(job.identity))
                    if ctx.cache is not None else None for job in batch}
        outcomes = get_pool(worker_count(ctx.app)).compile_all(
            [(job.request, timeout_limits(ctx, job.target, observed[id(job)])) for job in batch])
        for job, outcome in zip(batch, outcomes, strict=True):
            result = job.result
            result.seconds = outcome.seconds if len(batch) > 1 else time.perf_counter() - start
            result.report, result.failure = outcome.report, outcome.failure
            if outcome.report is not None:
                job.origin = "compiled"
                if cache is not None:
                    if is_deterministic(outcome.report):
                        cache.put(job.key, outcome.report)
                    cache.put_compile_seconds(snapshots.identity_key(job.identity), outcome.seconds)

    rest: list[Job] = []
    for group in by_function:
        mine = [job for job in misses if job in group]
        if not mine:
            continue
        run(mine[:1])
        first = mine[0].result.failure
        if first is not None and first.kind not in ("timeout", "crash", "target"):
            for job in mine[1:]:
                job.result.failure = dataclasses.replace(first, target=job.target.name)
        else:
            rest += mine[1:]
    if rest:
        run(rest)


def reconcile(ctx: Context, jobs: list[Job]) -> None:
    """Compare each fresh report with the one stored before it (drift), and
    refresh (``update``) or check (``check``) its snapshot."""
    for job in jobs:
        report = job.result.report
        if report is None:
            continue
        if job.origin == "snapshot":
            assert job.stored is not None and job.slot is not None
            if ctx.mode in snapshots.WRITING_MODES and job.stored.text != job.stored.snapshot.document(report):
                write_snapshot(ctx, job.slot, job.stored.snapshot, report)  # the summary, after an analysis change
            continue
        if job.slot is not None:
            reconcile_snapshot(ctx, job, report)
        elif ctx.cache is not None and job.origin == "compiled" and is_deterministic(report):
            drift_from_cache(ctx, job, report)
        if job.drift is not None and job.drift.significant:
            # in check mode the stored report stays as it is: the drift stays too
            warn(job.drift.message, "drift", ctx.location, repeat=job.slot is not None and ctx.mode == "check")
    for job in jobs:
        if job.slot is not None and job.slot.is_file():
            # read again when the snapshot changes (edited, or brought by a pull)
            from sphinx_jaxhlo.sphinxext.compat import note_dependency

            note_dependency(ctx.app.env, job.slot, ctx.node["docname"])


def reconcile_snapshot(ctx: Context, job: Job, report: Any) -> None:
    assert job.slot is not None
    if job.stored is not None and job.stored_matches:
        try:
            before = job.stored.snapshot.report(job.request.source, job.request.source_name)
        except InvalidReport:
            before = None
        if before is not None:
            job.drift = compare(before, report, job.stored.snapshot.toolchain, job.tools, ctx.tolerance)
    if not is_deterministic(report):
        return
    fresh = snapshots.Snapshot.from_report(report, job.identity, job.tools)
    update = f"{snapshots.MODE_VARIABLE}=update"
    if ctx.mode in snapshots.WRITING_MODES:
        if job.stored_problem:
            warn(f"{job.what}: {job.stored_problem}; compiled again and rewritten", "snapshot", ctx.location,
                 repeat=False)
        write_snapshot(ctx, job.slot, fresh, report)
    elif ctx.mode == "check":
        if job.stored_problem:
            message = f"{job.what}: {job.stored_problem}; rewrite it with {update}"
        elif job.stored is None:
            message = f"{job.what}: no snapshot ({_shown(ctx, job.slot)}); make one with {update}"
        elif not job.stored_matches:
            changes = snapshots.identity_changes(job.stored.snapshot.identity, job.identity)
            message = (f"{job.what}: the snapshot {_shown(ctx, job.slot)} is stale, made for another version of "
                       f"this example ({', '.join(changes)} changed); refresh it with {update}")
        else:
            # update mode keeps a snapshot this toolchain made; refresh rewrites it whatever it says
            diffs = snapshots.differences(job.stored, fresh, report)
            message = (f"{job.what}: the snapshot {_shown(ctx, job.slot)} is out of date: {'; '.join(diffs)}; "
                       f"refresh it with {snapshots.MODE_VARIABLE}=refresh") if diffs else ""
        if message:
            warn(message, "snapshot", ctx.location)


def write_snapshot(ctx: Context, slot: Path, snapshot: snapshots.Snapshot, report: Any) -> None:
    try:
        snapshots.write(slot, snapshot, report)
    except OSError as exc:
        warn(f"cannot write the snapshot {_shown(ctx, slot)}: {exc.strerror or exc}", "snapshot", ctx.location,
             repeat=False)


def drift_from_cache(ctx: Context, job: Job, report: Any) -> None:
    """Without snapshots, the cache remembers the last report of each example
    and target: compare with it when another toolchain made it."""
    assert ctx.cache is not None
    ident = snapshots.identity_key(job.identity)
    last = ctx.cache.latest(ident)
    if last is not None and last[0] != job.key and last[1] != job.tools:
        before = ctx.cache.get(last[0], function=job.request.function, target=job.target.name,
                               source=job.request.source)
        if before is not None:
            job.drift = compare(before, report, last[1], job.tools, ctx.tolerance)
    ctx.cache.put_latest(ident, job.key, job.tools)


def check(ctx: Context, jobs: list[Job]) -> None:
    """Check the expectations, warn about every failure, and record each
    (function, target) for the build report."""
    node, location = ctx.node, ctx.location
    docname, lineno = location
    records: list[Record] = ctx.app.env.jaxhlo_records.setdefault(docname, [])  # type: ignore[attr-defined]
    warned: set[tuple[str, str, str]] = set()
    for job in jobs:
        result = job.result
        status, message = "ok", ""
        if result.failure is not None and result.failure.kind == "target":
            # the installed compiler refused the target itself: once per build, not per example
            targets_mod.refuse(result.target, result.failure.message)
            result.missing, result.failure = targets_mod.get_target(result.target).missing_message(), None
            ctx.app.env.jaxhlo_missing.setdefault(result.target, set()).add(docname)  # type: ignore[attr-defined]
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
            if err is not None and not ctx.expectations.expects_error(result.target, result.function):
                line = err.message.splitlines()[0] if err.message else ""
                while line.startswith(f"{err.status}: "):  # XLA often repeats its status
                    line = line[len(err.status) + 2:]
                message = f"{result.function} failed to compile for {result.target_title}: {err.status}: {line}"
                warn(message, "compile", location)
                status = "compile error"
            result.outcomes = exp.check_all(ctx.expectations, [result.report])
            failed = [o for o in result.outcomes if not o.passed]
            for o in failed:
                warn(o.message, "expectation", location)
            if failed:
                status, message = "failed expectation", "; ".join(o.message for o in failed)
            elif err is not None and status == "ok":
                status = "expected error"
        temp = result.report.memory.temp_bytes if result.report and not result.report.error else None
        records.append(Record(docname, lineno, result.function, result.target, status, job.origin,
                              result.seconds, temp, message, job.drift, job.prefetched))


def render(ctx: Context, functions: list[str], targets: list[targets_mod.Target], results: list[Result],
           show: list[str]) -> list[nodes.Node]:
    app, node = ctx.app, ctx.node
    view = ExampleView(
        source=node["source_text"], show=show, hlo_collapsed=app.config.jaxhlo_hlo_collapsed,
        hlo_language="hlo",  # the setup registers the lexer with Sphinx
        file_path=node["file_path"], key=f"{node['docname']}:{node['lineno']}",
        specs=ArgSpecs.from_json(node["specs"]), static=tuple(node["static"]),
        display=display_for(app.config, node.get("view_options")))
    target_pairs = [(t.name, t.title) for t in targets]
    block = node.parent
    folder = fragment_folder(app)
    if folder is not None and isinstance(block, jaxhlo_block):
        block["text_store"] = str(folder / "texts")  # highlighted module texts, reused by later builds
    if folder is not None and isinstance(block, jaxhlo_block) and all(
            r.report is None or is_deterministic(r.report) for r in results):
        key = fragment_key(app, view, node["caption"], functions, target_pairs, results)
        block["fragment"] = str(folder / key[:2] / f"{key}.html")
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
    """A digest of the code that turns reports into HTML (the layers above the
    stores, read from the package)."""
    return package_fingerprint(RENDER_LAYERS)


def _report_failure(node: jaxhlo_example, failure: TargetFailure, target: str) -> tuple[str, str]:
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
    if failure.kind == "crash":  # a timeout's message names the function and the target already
        message += f" [target {target}]"
    warn(message, failure.kind, (docname, line))
    return failure.kind, message


def report_records(env: BuildEnvironment) -> list[Record]:
    records: dict[str, list[Record]] = env.jaxhlo_records  # type: ignore[attr-defined]
    return [r for doc in sorted(records) for r in records[doc]]


