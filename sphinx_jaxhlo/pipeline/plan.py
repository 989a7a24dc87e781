"""From an example to its jobs: one compile request per (function, target),
and where its answer may already be (a snapshot, the cache).

The directive's processing, the build's forecast, :func:`sphinx_jaxhlo.analyze_source`
and the command line all plan here, from an :class:`~sphinx_jaxhlo.core.example.Example`.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sphinx_jaxhlo.chunking.source import DEFAULT_CHUNK_BUDGET
from sphinx_jaxhlo.compiler.client import Limits
from sphinx_jaxhlo.core import targets as targets_mod
from sphinx_jaxhlo.core.example import Example
from sphinx_jaxhlo.core.request import (
    DEFAULT_SHOW,
    CompileRequest,
    code_fingerprint,
    default_function,
    installed_versions,
)
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.core.settings import WRITING_MODES, Settings, as_list
from sphinx_jaxhlo.core.sizes import parse_size
from sphinx_jaxhlo.core.specs import SpecError, parse_args, sharding_problems
from sphinx_jaxhlo.core.sweeps import Point
from sphinx_jaxhlo.core.view_options import DEFAULT_FINDINGS, parse_findings
from sphinx_jaxhlo.pipeline.build import Build
from sphinx_jaxhlo.store import analyses, snapshots
from sphinx_jaxhlo.store.cache import InvalidReport
from sphinx_jaxhlo.store.drift import Drift


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
    #: Whether the snapshot's JSON is what this version would write for it (with a
    #: report from it, in a writing mode; ``None``: not asked).
    stored_current: bool | None = True
    #: Whether a report from the snapshot needs what is live at the peak (:func:`needs_peak`).
    peak: bool = True

    @property
    def key(self) -> str:
        return self.result.report_key

    @property
    def identity_key(self) -> str:
        return snapshots.identity_key(self.identity)

    @property
    def stored_matches(self) -> bool:
        return self.stored is not None and self.stored.snapshot.identity == self.identity

    @property
    def what(self) -> str:
        function = self.request.function
        if not function and self.stored is not None:  # the default function, as named when the snapshot was made
            function = str(self.stored.snapshot.facts.get("function") or "")
        if not function:
            function = default_function(self.request.source) or ""
        return f"{function or 'the default function'} on {self.target.name}"


def shown_parts(example: Example, settings: Settings) -> list[str]:
    """The parts the example shows: its ``:show:``, else ``jaxhlo_show``, else :data:`DEFAULT_SHOW`."""
    if example.show is not None:
        return list(example.show)
    return as_list(settings.show) or list(DEFAULT_SHOW)


def snapshot_folder(build: Build, example: Example) -> Path | None:
    return snapshots.document_folder(build.snapshot_root, example.docname) if build.snapshot_root else None


def target_names(build: Build, example: Example) -> list[str]:
    """The names of the targets the example asks for (checked by :func:`resolve_targets`)."""
    if example.targets is not None:
        return list(example.targets)
    if build.settings.targets:
        return as_list(build.settings.targets)
    folder = snapshot_folder(build, example)
    if build.mode == "use" and folder is not None:
        # no compiler decides the defaults here: the targets snapshots were made for
        fn = example.functions[0]
        made = [t for t in targets_mod.TARGETS
                if (folder / (snapshots.slot_name(example.slot_name, fn, t) + ".json")).is_file()]
        return made or list(targets_mod.DEFAULT_TARGETS)
    return targets_mod.default_targets()


def resolve_targets(build: Build, example: Example, *, quiet: bool = False) -> list[targets_mod.Target]:
    """The example's targets; warns about unknown ones and about expectations no target checks.

    :param quiet: no warnings (the forecast: the document's own processing warns).
    """
    location = example.location
    targets: list[targets_mod.Target] = []
    for name in target_names(build, example):
        try:
            target = targets_mod.get_target(name)
        except targets_mod.UnknownTargetError as exc:
            if not quiet:
                build.reporter.warn(str(exc), "target", location)
            continue
        if target not in targets:
            targets.append(target)
    if not targets or quiet:
        return targets
    expectations = example.expectation_set()
    for named in sorted(expectations.targets_named() - {t.name for t in targets}):
        if named not in targets_mod.TARGETS:
            build.reporter.warn(f"an expectation names unknown target {named!r}", "option", location)
        else:
            # a claim nobody checks is worse than none: say so
            build.reporter.warn(f"an expectation names {named}, which this example does not compile for "
                                f"(its targets: {', '.join(t.name for t in targets)}): the claim is not checked",
                                "expectation", location)
    listed = set(example.functions) - {""}
    for named in sorted(expectations.functions_named() - listed):
        build.reporter.warn(f"an expectation names function {named!r}, which :function: does not list",
                            "option", location)
    return targets


def chunk_budget(settings: Settings) -> int:
    """``jaxhlo_chunk_budget`` in bytes; 0 for the default (requests then keep their stored form)."""
    value = settings.chunk_budget
    try:
        budget = value if isinstance(value, int) else parse_size(str(value))
    except ValueError:
        return 0
    return 0 if budget == DEFAULT_CHUNK_BUDGET or budget <= 0 else budget


def needs_peak(settings: Settings, example: Example) -> bool:
    """Whether the example's page needs what is live at the peak of its reports: it shows
    it (``:findings:`` with ``peak``, else ``jaxhlo_findings``), a claim checks it
    (``:expect-peak-top:``), or the example is a sweep or one of its points (the sweep
    map's figures name the largest buffer at the peak).  A report read from a snapshot
    works it out only then, in a docs build (:attr:`Build.peak_when_needed`)."""
    if example.sweep is not None or example.point is not None:
        return True
    if any(e.kind == "peak-top" for e in example.expectations):
        return True
    findings = example.view_options().get("findings")
    if findings is None:  # the setting, as the page's Display reads it
        findings = parse_findings(getattr(settings, "jaxhlo_findings", ", ".join(DEFAULT_FINDINGS)))
    return "peak" in findings


def plan(build: Build, example: Example, targets: list[targets_mod.Target], show: list[str]) -> list[list[Job]]:
    """One :class:`Job` per (function, target), grouped by function."""
    extras = tuple(p for p in ("stablehlo", "jaxpr") if p in show)
    xla_flags = {**{str(k): str(v) for k, v in build.settings.xla_flags.items()}, **dict(example.xla_flags)}
    versions = installed_versions()
    folder = snapshot_folder(build, example)
    budget = chunk_budget(build.settings)
    peak = not build.peak_when_needed or needs_peak(build.settings, example)
    by_function = []
    for fn in example.functions:
        group = []
        for target in targets:
            request = CompileRequest(
                source=example.source, function=fn, specs=example.specs, target=target.name,
                static=example.static, xla_flags=tuple(sorted(xla_flags.items())), extras=extras,
                donate=example.donate, source_name=example.source_name, target_fingerprint=target.fingerprint(),
                versions=versions, mesh=example.mesh, chunk=example.chunk_check(fn), chunk_budget=budget)
            result = Result(function=fn, target=target.name, target_title=target.title,
                            report_key=request.cache_key())
            job = Job(result, target, request, snapshots.identity(request),
                      snapshots.toolchain(dict(versions), target.name), peak=peak)
            if folder is not None:
                job.slot = folder / (snapshots.slot_name(example.slot_name, fn, target.name) + ".json")
            group.append(job)
        by_function.append(group)
    return by_function


def timeout_limits(build: Build, example: Example, target: targets_mod.Target, observed: float | None) -> Limits:
    """How long a compile of the example for ``target`` may take (see :class:`Limits`)."""
    return Limits.fitting(target, example.timeout or build.settings.timeout, observed)


def snapshot_answers(build: Build, job: Job, *, take: bool = True) -> bool:
    """Read the job's snapshot; take its report when the mode allows (then ``True``).

    :param take: without, only say whether the mode allows it (the forecast:
        the snapshot is analysed when its page takes it, once).
    """
    assert job.slot is not None
    try:
        job.stored = analyses.read(job.slot)  # once per process: the forecast's read is the page's
    except snapshots.SnapshotError as exc:
        job.stored_problem = f"the snapshot {build.shown(job.slot)} cannot be used: {exc}"
    mode = build.mode
    usable = job.stored_matches and (
        mode == "use"
        or (mode == "update" and job.stored.snapshot.toolchain == job.tools)  # type: ignore[union-attr]
        or (mode in WRITING_MODES and not job.target.available()))
    return usable and (not take or use_snapshot(build, job))


def use_snapshot(build: Build, job: Job) -> bool:
    """Take the job's report from its snapshot, the analysis derived again
    (once per snapshot and analysis code, :mod:`sphinx_jaxhlo.store.analyses`)."""
    assert job.stored is not None
    try:
        report, job.stored_current = analyses.report(job.stored, job.request.source, job.request.source_name,
                                                     build.cache, judge=build.mode in WRITING_MODES, peak=job.peak)
    except InvalidReport as exc:
        job.stored_problem = f"the snapshot {build.shown(job.stored.path)} cannot be used: {exc}"
        return False
    job.result.report, job.origin = report, "snapshot"
    # the rendering depends on the stored data and on the code that analyses it
    job.result.report_key = hashlib.sha256((job.stored.digest + code_fingerprint()).encode()).hexdigest()
    return True


# -- sweeps: a plan of many ordinary examples ------------------------------------------------------


@dataclass(frozen=True)
class SweepPoint:
    """One point of a sweep: the ordinary example it is, or why it cannot be one."""

    point: Point
    example: Example | None
    #: Why the point has no example (its specs are not valid at its sizes), in words.
    problem: str = ""


def sweep_points(example: Example) -> list[SweepPoint]:
    """The points of a swept example, each an ordinary example: its specs and static
    arguments at the point's values, the expectations that apply there (a claim over a
    range where its condition holds; the claims about the whole sweep are left out), and
    snapshot slots of its own.  An example without a sweep is its own one point."""
    if example.sweep is None:
        return [SweepPoint(Point(()), example)]
    return [point_example(example, point) for point in example.sweep.points()]


def point_example(example: Example, point: Point, functions: tuple[str, ...] | None = None) -> SweepPoint:
    """One point of a swept example (its own, or a probe that bisection placed) as an ordinary
    example, as :func:`sweep_points` makes them.

    :param functions: the functions to compile there (a probe's); default: the example's.
    """
    sweep = example.sweep
    assert sweep is not None
    values = point.as_dict()
    try:
        specs = parse_args(sweep.args, values) if sweep.args else example.specs
    except SpecError as exc:
        return SweepPoint(point, None, f"at {point.label}: the arguments {sweep.args} cannot be made: {exc}")
    problems = sharding_problems(specs, example.mesh)
    if problems:
        return SweepPoint(point, None, f"at {point.label}: {problems[0]}")
    static = example.static + tuple((name, str(values[name])) for name in sweep.static)
    return SweepPoint(point, dataclasses.replace(
        example, specs=specs, static=static, sweep=None, point=point, functions=functions or example.functions,
        expectations=tuple(example.expectation_set().at_point(values).items)))


def planned_examples(examples: Iterable[Example]) -> Iterator[Example]:
    """Every ordinary example to plan: a sweep's points, the others as they are."""
    for example in examples:
        for point in sweep_points(example):
            if point.example is not None:
                yield point.example
