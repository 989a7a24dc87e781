"""The compiles a build's examples will ask for, before any document is read.

:func:`forecast` plans each example exactly as its own processing will
(:func:`~sphinx_jaxhlo.pipeline.plan.plan`, from the same
:class:`~sphinx_jaxhlo.core.example.Example` value), and keeps what neither a
snapshot nor the cache answers: the build's
:class:`~sphinx_jaxhlo.pipeline.schedule.Scheduler` compiles those while
Sphinx reads.  Where the examples come from (a document's text) is the
caller's business.
"""

from __future__ import annotations

from collections.abc import Iterable

from sphinx_jaxhlo.core.example import Example
from sphinx_jaxhlo.pipeline.build import Build
from sphinx_jaxhlo.pipeline.plan import (
    plan,
    planned_examples,
    resolve_targets,
    shown_parts,
    snapshot_answers,
    timeout_limits,
)
from sphinx_jaxhlo.pipeline.schedule import Planned


def forecast(build: Build, examples: Iterable[Example]) -> list[Planned]:
    """The compiles ``examples`` will ask for that no snapshot or cache entry answers."""
    if build.snapshot_root is not None and build.mode == "use":
        return []  # nothing compiles
    cache = build.cache
    out: list[Planned] = []
    for example in planned_examples(examples):  # a sweep's points are ordinary examples
        targets = resolve_targets(build, example, quiet=True)
        for group in plan(build, example, targets, shown_parts(example, build.settings)):
            for job in group:
                if not job.target.available():
                    continue
                if job.slot is not None and snapshot_answers(build, job, take=False):
                    continue
                if cache is not None and cache.has(job.key):
                    continue
                identity = job.identity_key
                observed = cache.compile_seconds(identity) if cache is not None else None
                out.append(Planned(
                    job.key, job.request, timeout_limits(build, example, job.target, observed),
                    observed if observed is not None else job.target.prior_seconds,
                    observed is not None, identity, example.docname, job.target.platform))
    if cache is not None:
        cache.problems.clear()  # the documents' own look-ups report them, at their examples
    return out
