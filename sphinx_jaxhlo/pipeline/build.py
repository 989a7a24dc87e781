"""What every example of one build shares, and how the pipeline speaks.

A :class:`Build` holds the settings (read once), the cache, the snapshot
folder, the build's scheduler and the way compiles run; the Sphinx
extension, :func:`sphinx_jaxhlo.analyze_source` and the command line each
make one.  The pipeline warns through its :class:`Reporter`, never through a
logger of its own: the extension's reporter turns warnings into Sphinx
warnings at the example's line, the API's into exceptions or progress lines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from sphinx_jaxhlo.compiler.client import Limits, Outcome
from sphinx_jaxhlo.core.request import CompileRequest
from sphinx_jaxhlo.core.settings import Settings
from sphinx_jaxhlo.store.cache import ReportCache, is_deterministic
from sphinx_jaxhlo.store.drift import Drift
from sphinx_jaxhlo.store.hardware import Record as HardwareRecord


class Reporter(Protocol):
    """Where the pipeline's warnings go."""

    def warn(self, message: str, subtype: str, location: tuple[str, int], *, repeat: bool = True) -> None:
        """Warn at ``location`` (document, line); ``subtype`` is the ``jaxhlo.*``
        warning type.

        :param repeat: whether later builds that do not process the example
            again repeat it: yes for what stays true until the example or a
            file it reads changes (a failed claim, a stale snapshot); no for
            news of this build alone (drift against a report it has just
            replaced, a cache entry it rewrote).
        """


class Ahead(Protocol):
    """What compiles ahead of the documents (:class:`~sphinx_jaxhlo.pipeline.schedule.Scheduler`)."""

    #: The cache keys it was given.
    planned: dict[str, Any]

    def take(self, key: str) -> Outcome | None:
        """The outcome of a compile it was given, waiting for it; ``None`` for another key."""

    def progress(self) -> str:
        """What is left, in a few words."""


class Warnings:
    """A :class:`Reporter` that keeps the warnings (the API and the command line read them)."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str, tuple[str, int]]] = []

    def warn(self, message: str, subtype: str, location: tuple[str, int], *, repeat: bool = True) -> None:
        self.items.append((message, subtype, location))


#: Compiles a batch of requests within their limits; the outcomes in the same order.
CompileBatch = Callable[[Sequence[tuple[CompileRequest, Limits]]], list[Outcome]]


@dataclass
class Build:
    """The shared parts of one build (or of one API call)."""

    settings: Settings
    reporter: Reporter
    #: How compiles run (the local worker pool, the API's worker...).
    compile: CompileBatch
    cache: ReportCache | None = None
    #: ``jaxhlo_snapshot_dir``, resolved; ``None``: no snapshots.
    snapshot_root: Path | None = None
    #: Paths in messages are shown relative to this folder (``conf.py``'s).
    confdir: Path | None = None
    #: The build's scheduler, when one compiles ahead of the documents.
    scheduler: Ahead | None = None
    #: The hardware records of ``jaxhlo_hardware_dir``, by target, and why any could not be
    #: read (said once, then cleared).
    hardware: dict[str, HardwareRecord] = field(default_factory=dict)
    hardware_problems: list[str] = field(default_factory=list)
    #: Work out what is live at the peak of a report read from a snapshot only where the
    #: example needs it (:func:`sphinx_jaxhlo.pipeline.plan.needs_peak`): a docs build's pages.
    #: Off (the API, the command line): every report has it.
    peak_when_needed: bool = False

    @property
    def mode(self) -> str:
        return str(self.settings.snapshot_mode)

    def shown(self, path: Path) -> str:
        """A path as the user knows it: relative to :attr:`confdir` when inside it."""
        if self.confdir is not None:
            try:
                return str(path.relative_to(self.confdir))
            except ValueError:
                pass
        return str(path)


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
    #: The memory figure to act on (:meth:`sphinx_jaxhlo.core.memory.Memory.acting`: the HBM a TPU
    #: holds, else temp), ``None`` without a report; :attr:`memory_figure` names it.
    memory_bytes: int | None
    message: str = ""
    #: How the report differs from the one stored before it, when it does.
    drift: Drift | None = None
    #: Compiled by the build's scheduler before the document was read.
    prefetched: bool = False
    #: ``temp`` or ``device``.
    memory_figure: str = "temp"
    #: The guide's rule beside XLA (:mod:`sphinx_jaxhlo.predict.agreement`): ``agrees``, ``disagrees``,
    #: ``limit`` (a disagreement the example states), each with `` (uncertain)`` when the answer was not
    #: certain, ``compile it``, or ``""`` (no prediction).
    guide: str = ""


def store_outcome(cache: ReportCache | None, key: str, identity: str, outcome: Outcome) -> None:
    """Keep what a compile gave: its report, when another compile would give
    the same, and how long it took (the next build's timeouts and order)."""
    if cache is None or outcome.report is None:
        return
    if is_deterministic(outcome.report):
        cache.put(key, outcome.report)
    if identity:
        cache.put_compile_seconds(identity, outcome.seconds)
