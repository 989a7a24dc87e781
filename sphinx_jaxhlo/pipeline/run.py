"""One example through the pipeline, from its value to its results.

:func:`process` takes an :class:`~sphinx_jaxhlo.core.example.Example` through
named steps:

1. :func:`~sphinx_jaxhlo.pipeline.plan.plan`: one job per (function,
   target): its compile request and, with snapshots, its slot;
2. :func:`look_up`: a snapshot (as the mode allows), else the cache; only
   misses are left;
3. :func:`compile_misses`: what the build's scheduler compiled ahead, then
   the rest, over :attr:`Build.compile <sphinx_jaxhlo.pipeline.build.Build.compile>`;
4. :func:`reconcile`: snapshots refreshed (``update``) or compared
   (``check``), and each fresh report compared with the one stored before it
   (drift);
5. :func:`check`: expectations checked, warnings, the build's records.

A sweep (``:sweep:``) is a plan of many ordinary examples: :func:`process_sweep`
hands each of its points to the same steps through the sweep's one driver
(:mod:`sphinx_jaxhlo.pipeline.sweep`, which the API and the command line use too: it
maps the flips and locates each by compiling the sizes between, each probe an ordinary
example too), then checks the claims about the flips and the ranges.

Nothing here imports Sphinx or docutils: the Sphinx extension renders what
:func:`process` returns, the API turns it into :class:`~sphinx_jaxhlo.Reports`.
"""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sphinx_jaxhlo.compiler.client import failure_of
from sphinx_jaxhlo.core import expectations as exp
from sphinx_jaxhlo.core import targets as targets_mod
from sphinx_jaxhlo.core.example import Example
from sphinx_jaxhlo.core.flips import SweepMap
from sphinx_jaxhlo.core.memory import Measured
from sphinx_jaxhlo.core.report import TargetFailure
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.core.settings import MODE_VARIABLE, WRITING_MODES
from sphinx_jaxhlo.core.sweep_claims import check_flip_claims, check_range_claims
from sphinx_jaxhlo.pipeline.build import Build, Record, store_outcome
from sphinx_jaxhlo.pipeline.plan import (
    Job,
    plan,
    resolve_targets,
    shown_parts,
    snapshot_answers,
    sweep_points,
    timeout_limits,
)
from sphinx_jaxhlo.pipeline.sweep import sweep_examples
from sphinx_jaxhlo.store import analyses, snapshots
from sphinx_jaxhlo.store.cache import InvalidReport, is_deterministic
from sphinx_jaxhlo.store.drift import compare
from sphinx_jaxhlo.store.hardware import program_digest


@dataclass
class Processed:
    """What one example came to."""

    example: Example
    targets: list[targets_mod.Target] = field(default_factory=list)
    #: The functions, the default one by its real name.
    functions: list[str] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    show: list[str] = field(default_factory=list)
    #: The snapshot slots the example has (file stems), for pruning its document's folder.
    slots: set[str] = field(default_factory=set)
    #: Snapshot files it read: the document depends on them.
    dependencies: list[Path] = field(default_factory=list)
    #: Whether anything was compiled for it here (and not ahead by the scheduler).
    compiled: bool = False
    #: A sweep's figures point by point, and its flips (``None``: no sweep).
    sweep: SweepMap | None = None

    @property
    def missing(self) -> set[str]:
        """The targets whose compiler is missing here."""
        return {r.target for r in self.results if r.missing}
    #: Why there is nothing to show (no target), when there is nothing.
    error: str = ""


def process(build: Build, example: Example) -> Processed:
    """Plan, look up, compile, reconcile and check ``example`` (each point of a sweep)."""
    if example.sweep is not None:
        return process_sweep(build, example)
    out = Processed(example)
    out.targets = resolve_targets(build, example)
    if not out.targets:
        out.error = "jax-hlo example has no target to compile for"
        return out
    return process_for(build, example, out)


def process_for(build: Build, example: Example, out: Processed) -> Processed:
    """:func:`process` for the targets of ``out``."""
    out.show = shown_parts(example, build.settings)
    by_function = plan(build, example, out.targets, out.show)
    jobs = [job for group in by_function for job in group]
    out.slots = {job.slot.name.removesuffix(".json") for job in jobs if job.slot is not None}
    misses = look_up(build, example, jobs)
    compile_misses(build, example, by_function, misses)
    out.compiled = bool(misses)
    reconcile(build, example, jobs)
    # a snapshot, or one that could not be read (read again once it is repaired)
    out.dependencies = [job.slot for job in jobs if job.slot is not None and (job.slot.is_file() or job.stored_problem)]
    out.dependencies += measure(build, example, jobs)
    if build.cache is not None:
        for problem in build.cache.problems:
            build.reporter.warn(problem, "cache", example.location, repeat=False)
        build.cache.problems.clear()
    for fn, group in zip(example.functions, by_function, strict=True):
        # the default function's real name comes back with its report
        resolved = next((j.result.report.function for j in group if j.result.report is not None), fn)
        for job in group:
            job.result.function = resolved or "(default function)"
        out.functions.append(resolved or "(default function)")
    out.records = check(build, example, jobs)
    out.results = [job.result for job in jobs]
    return out


def process_sweep(build: Build, example: Example) -> Processed:
    """Each point of a sweep as an ordinary example, through the sweep's one driver
    (:func:`~sphinx_jaxhlo.pipeline.sweep.sweep_examples`), then the claims about the
    flips and the ranges checked.  A point that does not compile, or whose arguments
    cannot be made, is a point of the map, not a failed example."""
    assert example.sweep is not None
    out = Processed(example)
    points = sweep_points(example)
    first = next((p.example for p in points if p.example is not None), None)
    if first is None:
        out.error = f"jax-hlo sweep has no point to compile: {points[0].problem}"
        return out
    # the targets once, for the claims of every range
    out.targets = resolve_targets(build, dataclasses.replace(first, expectations=example.expectations))
    if not out.targets:
        out.error = "jax-hlo example has no target to compile for"
        return out
    out.show = shown_parts(example, build.settings)

    def compile_point(point_example: Example, targets: list[targets_mod.Target]) -> tuple[None, list[Result]]:
        done = process_for(build, point_example, Processed(point_example, targets=targets))
        out.results += done.results
        out.records += done.records
        out.slots |= done.slots
        out.dependencies += done.dependencies
        out.compiled = out.compiled or done.compiled
        return None, done.results

    run = sweep_examples(example, out.targets, compile_point, lambda *_: None)
    out.functions, out.sweep = run.functions, run.map
    expectations = example.expectation_set()
    out.sweep.checks = [*check_flip_claims(expectations, out.sweep),
                        *check_range_claims(expectations, out.sweep, [o for r in out.results for o in r.outcomes])]
    for check_ in out.sweep.checks:
        if not check_.passed:
            build.reporter.warn(check_.message, "unresolved" if check_.unresolved else "expectation",
                                example.location)
    return out


def look_up(build: Build, example: Example, jobs: list[Job]) -> list[Job]:
    """Fill each job from its snapshot (as the mode allows) or the cache.

    :return: the jobs left to compile.
    """
    misses: list[Job] = []
    scheduler = build.scheduler
    for job in jobs:
        result, target = job.result, job.target
        problem = targets_mod.mesh_problem(target, job.request.mesh)
        if problem is not None:  # the mesh does not span this target's devices
            result.failure = failure_of(job.request, "args", f":mesh: {problem}")
            continue
        if job.slot is not None:
            if snapshot_answers(build, job):
                continue
            if build.mode == "use":
                result.failure = failure_of(job.request, "snapshot", snapshot_missing(build, job))
                continue
        if not target.available():
            result.missing = target.missing_message()
            continue
        if scheduler is not None and job.key in scheduler.planned:
            misses.append(job)  # compiled by this build's scheduler: its outcome, not the cache, says so
            continue
        report = None
        if build.cache is not None:
            report = build.cache.get(job.key, function=job.request.function, target=target.name,
                                     source=job.request.source)
        if report is not None:
            result.report, job.origin = report, "cache"
        else:
            misses.append(job)
    return misses


def snapshot_missing(build: Build, job: Job) -> str:
    """Why a job has no snapshot to show, and what to do about it."""
    refresh = f"make one with {MODE_VARIABLE}=update"
    if job.stored_problem:
        return f"{job.what}: {job.stored_problem}; {refresh}"
    assert job.slot is not None
    if job.stored is None:
        return f"{job.what}: no snapshot ({build.shown(job.slot)}); {refresh}"
    changes = snapshots.identity_changes(job.stored.snapshot.identity, job.identity)
    return (f"{job.what}: the snapshot {build.shown(job.slot)} was made for another version of this example "
            f"({', '.join(changes)} changed) and is not shown; {refresh}")


def compile_misses(build: Build, example: Example, by_function: list[list[Job]], misses: list[Job]) -> None:
    """Take what the build's scheduler compiled for the example (waiting for
    its own results only); compile the rest here: per function, one compile
    alone (an error in the example itself is the same on every target: no
    need to meet it three times), then every other miss at once."""
    scheduler = build.scheduler
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
        cache = build.cache
        observed = {id(job): cache.compile_seconds(job.identity_key) if cache is not None else None
                    for job in batch}
        outcomes = build.compile([(job.request, timeout_limits(build, example, job.target, observed[id(job)]))
                                  for job in batch])
        for job, outcome in zip(batch, outcomes, strict=True):
            result = job.result
            result.seconds = outcome.seconds if len(batch) > 1 else time.perf_counter() - start
            result.report, result.failure = outcome.report, outcome.failure
            if outcome.report is not None:
                job.origin = "compiled"
            store_outcome(cache, job.key, job.identity_key, outcome)

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


def measure(build: Build, example: Example, jobs: list[Job]) -> list[Path]:
    """What a real device held for each job's program, where a hardware record of its target
    measured that very program (its snapshot's identity and optimized HLO,
    :func:`~sphinx_jaxhlo.store.hardware.program_digest`).

    :return: the records read: the document depends on them.
    """
    if build.hardware_problems:
        for problem in build.hardware_problems:
            build.reporter.warn(f"a hardware record cannot be read: {problem}", "hardware", example.location,
                                repeat=False)
        build.hardware_problems.clear()
    read: list[Path] = []
    for job in jobs:
        record = build.hardware.get(job.target.name)
        report = job.result.report
        if record is None or report is None or job.slot is None or build.snapshot_root is None:
            continue
        if record.path is not None and record.path not in read:
            read.append(record.path)
        try:
            slot = job.slot.relative_to(build.snapshot_root).as_posix()
        except ValueError:
            continue
        found = record.measurement(slot, program_digest(job.identity, "" if report.error else report.hlo))
        if found is not None:
            job.result.measured = Measured(record.device, record.measured_on(found), found.program_bytes, found.warm_ms,
                                           found.error)
    return read


def reconcile(build: Build, example: Example, jobs: list[Job]) -> None:
    """Compare each fresh report with the one stored before it (drift), and
    refresh (``update``) or check (``check``) its snapshot."""
    for job in jobs:
        report = job.result.report
        if report is None:
            continue
        if job.origin == "snapshot":
            assert job.stored is not None and job.slot is not None
            if build.mode in WRITING_MODES and not job.stored_current:
                write_snapshot(build, example, job.slot, job.stored.snapshot, report)  # after an analysis change
            continue
        if job.slot is not None:
            reconcile_snapshot(build, example, job, report)
        elif build.cache is not None and job.origin == "compiled" and is_deterministic(report):
            drift_from_cache(build, job, report)
        if job.drift is not None and job.drift.significant:
            # in check mode the stored report stays as it is: the drift stays too
            build.reporter.warn(job.drift.message, "drift", example.location,
                                repeat=job.slot is not None and build.mode == "check")


def reconcile_snapshot(build: Build, example: Example, job: Job, report: Any) -> None:
    assert job.slot is not None
    tolerance = float(build.settings.drift_tolerance)
    if job.stored is not None and job.stored_matches:
        try:
            before, _ = analyses.report(job.stored, job.request.source, job.request.source_name, build.cache,
                                        judge=False)
        except InvalidReport:
            before = None
        if before is not None:
            job.drift = compare(before, report, job.stored.snapshot.toolchain, job.tools, tolerance)
    if not is_deterministic(report):
        return
    fresh = snapshots.Snapshot.from_report(report, job.identity, job.tools)
    update = f"{MODE_VARIABLE}=update"
    warn, location = build.reporter.warn, example.location
    if build.mode in WRITING_MODES:
        if not job.stored_problem:
            write_snapshot(build, example, job.slot, fresh, report)
            return
        problem = snapshot_write_problem(build, job.slot, fresh, report)
        made = "compiled again" if job.origin == "compiled" else "taken from the cache"
        if problem is None:
            warn(f"{job.what}: {job.stored_problem}; {made} and rewritten", "snapshot", location, repeat=False)
        else:  # one warning for one damage, saying what was and was not done
            why = "for the same reason" if problem in job.stored_problem else f"either: {problem}"
            warn(f"{job.what}: {job.stored_problem}; {made}, but the snapshot cannot be written {why}",
                 "snapshot", location)
    elif build.mode == "check":
        shown = build.shown(job.slot)
        if job.stored_problem:
            message = f"{job.what}: {job.stored_problem}; rewrite it with {update}"
        elif job.stored is None:
            message = f"{job.what}: no snapshot ({shown}); make one with {update}"
        elif not job.stored_matches:
            changes = snapshots.identity_changes(job.stored.snapshot.identity, job.identity)
            message = (f"{job.what}: the snapshot {shown} is stale, made for another version of "
                       f"this example ({', '.join(changes)} changed); refresh it with {update}")
        else:
            # update mode keeps a snapshot this toolchain made; refresh rewrites it whatever it says
            diffs = snapshots.differences(job.stored, fresh, report)
            message = (f"{job.what}: the snapshot {shown} is out of date: {'; '.join(diffs)}; "
                       f"refresh it with {MODE_VARIABLE}=refresh") if diffs else ""
        if message:
            warn(message, "snapshot", location)


def write_snapshot(build: Build, example: Example, slot: Path, snapshot: snapshots.Snapshot, report: Any) -> None:
    problem = snapshot_write_problem(build, slot, snapshot, report)
    if problem is not None:
        build.reporter.warn(f"cannot write the snapshot {build.shown(slot)}: {problem}", "snapshot",
                            example.location, repeat=False)


def snapshot_write_problem(build: Build, slot: Path, snapshot: snapshots.Snapshot, report: Any) -> str | None:
    """Write a snapshot; why it could not be written, or ``None``."""
    try:
        snapshots.write(slot, snapshot, report)
    except OSError as exc:
        return snapshots.os_problem(exc, slot)
    return None


def drift_from_cache(build: Build, job: Job, report: Any) -> None:
    """Without snapshots, the cache remembers the last report of each example
    and target: compare with it when another toolchain made it."""
    cache = build.cache
    assert cache is not None
    ident = job.identity_key
    last = cache.latest(ident)
    if last is not None and last[0] != job.key and last[1] != job.tools:
        before = cache.get(last[0], function=job.request.function, target=job.target.name,
                           source=job.request.source)
        if before is not None:
            job.drift = compare(before, report, last[1], job.tools, float(build.settings.drift_tolerance))
    cache.put_latest(ident, job.key, job.tools)


def check(build: Build, example: Example, jobs: list[Job]) -> list[Record]:
    """Check the expectations, warn about every failure, and record each
    (function, target) for the build report."""
    docname, lineno = example.location
    expectations = example.expectation_set()
    records: list[Record] = []
    warned: set[tuple[str, str, str]] = set()
    for job in jobs:
        result = job.result
        status, message = "ok", ""
        if result.failure is not None and result.failure.kind == "target":
            # the installed compiler refused the target itself: once per build, not per example
            targets_mod.refuse(result.target, result.failure.message)
            result.missing, result.failure = targets_mod.get_target(result.target).missing_message(), None
        if result.missing:
            status = "target missing"
        elif result.failure:
            f = result.failure
            once = (result.function, f.kind, f.message)
            if f.kind in ("timeout", "crash") or once not in warned:
                warned.add(once)
                status, message = report_failure(build, example, f, result.target)
            else:
                status, message = f.kind, f.message
        else:
            assert result.report is not None
            err = result.report.error
            if err is not None and example.point is not None:
                status = "compile error"  # a point of a sweep where the compiler refused: a point of the map
            elif err is not None and not expectations.expects_error(result.target, result.function):
                line = err.message.splitlines()[0] if err.message else ""
                while line.startswith(f"{err.status}: "):  # XLA often repeats its status
                    line = line[len(err.status) + 2:]
                message = f"{result.function} failed to compile for {result.target_title}: {err.status}: {line}"
                build.reporter.warn(message, "compile", example.location)
                status = "compile error"
            result.outcomes = exp.check_all(expectations, [result.report],
                                            example.point.label if example.point is not None else "")
            failed = [o for o in result.outcomes if not o.passed]
            for o in failed:
                build.reporter.warn(o.message, "expectation", example.location)
            if failed:
                status, message = "failed expectation", "; ".join(o.message for o in failed)
            elif err is not None and status == "ok":
                status = "expected error"
        memory = result.report.memory if result.report and not result.report.error else None
        figure = memory.acting(result.target) if memory is not None else "temp"
        function = result.function if example.point is None else f"{result.function} at {example.point.label}"
        guide = guide_check(build, example, result.report, result.function) if result.report else ""
        records.append(Record(docname, lineno, function, result.target, status, job.origin, result.seconds,
                              memory.figure(figure) if memory is not None else None, message, job.drift,
                              job.prefetched, figure, guide))
    return records


_GUIDE_LIMIT = re.compile(r"#\s*jaxhlo:\s*guide-limit\b[ \t]*([\w@:, \t]*)")


def guide_check(build: Build, example: Example, report: Any, function: str) -> str:
    """The guide's rule beside XLA for one report (a :class:`Record`'s ``guide``); on a page of
    ``jaxhlo_guide_pages``, a disagreement the example does not mark as a stated limit warns."""
    from sphinx_jaxhlo.predict.agreement import agreement

    found = agreement(report)
    if found is None:
        return ""
    if found.agrees is not False:
        _stale_limit(build, example, report, function, found.agrees)
    if found.agrees is None:
        return "compile it"
    unsure = "" if found.prediction.certain else " (uncertain)"
    if found.agrees:
        return "agrees" + unsure
    base = function.split(" at ", 1)[0]
    marked = {"all", function, base, f"{base}@{report.target}"}
    limits = [m.group(1) for m in _GUIDE_LIMIT.finditer(example.source)]
    if any(not names.strip() or marked & set(re.split(r"[,\s]+", names)) for names in limits):
        return "limit" + unsure
    if marked & set(example.guide_limit):
        return "limit" + unsure
    if _on_guide_page(build, example):
        p = found.prediction
        build.reporter.warn(f"{function} on {report.target}: {found.sentence} (rule {p.rule}: {p.title}; "
                            "a limit the page states is marked with :guide-limit:)", "predict", example.location)
    return "disagrees" + unsure


def _on_guide_page(build: Build, example: Example) -> bool:
    docname = example.location[0]
    pages = [str(p) for p in build.settings.guide_pages]
    return any(docname == p or (p.endswith("/") and docname.startswith(p)) for p in pages)


def _stale_limit(build: Build, example: Example, report: Any, function: str, agrees: bool | None) -> None:
    """On a guide page, a ``:guide-limit:`` that names this function on this target (``f@target``)
    where the guide's rule now agrees with XLA, or leaves the answer to the compile: the page would
    state a limit that is no longer one, so the mark goes.  A blanket mark is not checked, nor a
    sweep's (its mark covers the points where the rule disagrees, not every point)."""
    base = function.split(" at ", 1)[0]
    if (example.point is not None or f"{base}@{report.target}" not in example.guide_limit
            or not _on_guide_page(build, example)):
        return
    now = "agrees with XLA" if agrees else "leaves it to the compile"
    build.reporter.warn(f"{function} on {report.target} is marked as a stated limit (:guide-limit:), but the "
                        f"guide's rule now {now}: remove {base}@{report.target} from the mark, and check what the "
                        "page says of it", "predict", example.location)


def report_failure(build: Build, example: Example, failure: TargetFailure, target: str) -> tuple[str, str]:
    """Warn about a target without a report, at the example's line that failed when known."""
    line = example.line
    where = ""
    if failure.line:
        if example.file_path:
            where = f" ({example.file_path}, line {failure.line})"
        else:
            line = example.first_line + failure.line - 1
            where = f" (example line {failure.line})"
    message = failure.message + where
    if example.point is not None:
        message += f" [at {example.point.label}]"
    if failure.kind == "crash":  # a timeout's message names the function and the target already
        message += f" [target {target}]"
    build.reporter.warn(message, failure.kind, (example.docname, line))
    return failure.kind, message
