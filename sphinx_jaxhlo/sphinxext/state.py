"""The extension's state, in two places.

- :class:`BuildState`, one per Sphinx application (one build): the settings
  as read once, the warning recorder, the progress line, the scheduler, the
  cache objects and the pipeline's :class:`~sphinx_jaxhlo.pipeline.build.Build`
  of each process (``-j`` readers are forked from the main one).
- :class:`DocumentData`, in the environment and pickled with it: what each
  document's examples left behind (records, warnings to repeat, the
  toolchain stamp, missing targets), kept and merged by one collector,
  :class:`sphinx_jaxhlo.sphinxext.documents.ExampleCollector`.
"""

from __future__ import annotations

import contextlib
import logging as pylogging
import multiprocessing
import os
from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sphinx.util import logging
from sphinx.util.console import bold

from sphinx_jaxhlo.core.settings import Settings
from sphinx_jaxhlo.pipeline.build import Ahead, Build, Record
from sphinx_jaxhlo.pipeline.schedule import Scheduler
from sphinx_jaxhlo.store.cache import ReportCache
from sphinx_jaxhlo.store.snapshots import SlotStamp

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

logger = logging.getLogger(__name__)

#: Warnings about the extension itself, not about what a document claims: never
#: stored and repeated; the document is read again by the next build instead.
NOT_REPLAYED = frozenset({"internal"})


class WarningRecorder(pylogging.Handler):
    """Keeps every ``jaxhlo`` warning located in a document while documents are read.

    A document that is not read again by a later build (nothing in it
    changed) keeps its warnings in the environment, and the extension
    repeats them: as long as a claim fails, every build says so, at the same
    place, and ``-W`` fails.  It listens on the package's logger, so the
    directive's warnings and the examples' are kept alike.

    It also ends each ``jaxhlo`` warning with ``[jaxhlo.<subtype>]`` where
    Sphinx would not (``show_warning_types`` off: Sphinx 7's default), so
    the name to give ``suppress_warnings`` shows on every supported Sphinx.
    Its handler runs before Sphinx's, which see the message with the suffix.

    A warning in a notebook's cell is located at the cell and the line in it
    (``parallel.ipynb:cell 54, line 4``, by :attr:`place`) rather than at the
    line MyST-NB numbers it with (``parallel.ipynb:540005``); it is kept by
    that number, to be repeated at the same place.
    """

    def __init__(self) -> None:
        super().__init__(level=pylogging.WARNING)
        self.active = False
        #: Whether to add the warning type to the message (Sphinx does not).
        self.add_type = False
        self.by_doc: dict[str, list[tuple[int, str, str]]] = {}
        #: (document, line) -> the location to show instead, or ``None`` (set by ``setup``).
        self.place: Callable[[str, int], str | None] | None = None

    def emit(self, record: pylogging.LogRecord) -> None:
        if getattr(record, "type", None) != "jaxhlo":
            return
        message = record.getMessage()
        if self.add_type and not getattr(record, "jaxhlo_typed", False):
            subtype = getattr(record, "subtype", "")
            record.msg, record.args = f"{message} [jaxhlo.{subtype}]" if subtype else f"{message} [jaxhlo]", ()
            record.jaxhlo_typed = True
        location = getattr(record, "location", None)
        if isinstance(location, tuple) and location and isinstance(location[0], str):
            docname, line = location[0], location[1] if len(location) > 1 else None
        elif isinstance(location, str) and ":" not in location:
            docname, line = location, None
        else:
            return
        if self.place is not None and line:
            with contextlib.suppress(Exception):  # a location is worth no failure
                record.location = self.place(docname, int(line)) or location
        if self.active:
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


#: The logger every warning of the extension goes through (its recorder listens here).
PACKAGE_LOGGER = "sphinx.sphinx_jaxhlo"


class SphinxReporter:
    """The pipeline's :class:`~sphinx_jaxhlo.pipeline.build.Reporter` in a
    Sphinx build: a ``jaxhlo.<subtype>`` warning at the example's line."""

    def __init__(self, recorder: WarningRecorder) -> None:
        self.recorder = recorder

    def warn(self, message: str, subtype: str, location: tuple[str, int], *, repeat: bool = True) -> None:
        if repeat:
            logger.warning("jax-hlo: %s", message, location=location, type="jaxhlo", subtype=subtype)
            return
        with self.recorder.paused():
            logger.warning("jax-hlo: %s", message, location=location, type="jaxhlo", subtype=subtype)


class Progress:
    """``compiling jax-hlo examples... [ 40%] guide/fusion``, shared by ``-j`` readers.

    The total is counted from the sources before reading; the count of examples
    done lives in shared memory created before Sphinx forks its readers.
    """

    def __init__(self) -> None:
        self.total = 0
        self.done: Any = None

    def start(self, total: int) -> None:
        self.total = total
        self.done = multiprocessing.get_context("fork").Value("i", 0) if total else None

    def step(self, docname: str, compiled: bool, scheduler: Ahead | None) -> None:
        if self.done is None:
            return
        with self.done.get_lock():
            self.done.value += 1
            count = self.done.value
        if compiled:
            pct = min(100, round(100 * count / max(self.total, 1)))
            state = scheduler.progress() if scheduler is not None else ""
            logger.info(bold("compiling jax-hlo examples... ") + f"[{pct:3d}%] {docname}"
                        + (f" ({state})" if state else ""))


@dataclass
class BuildState:
    """Everything the extension keeps for one build (see the module's docstring)."""

    settings: Settings = field(default_factory=Settings)
    recorder: WarningRecorder = field(default_factory=WarningRecorder)
    progress: Progress = field(default_factory=Progress)
    #: The documents this build reads (the summary is about them).
    read: set[str] = field(default_factory=set)
    #: The scheduler while it runs; the last one after (its events, for benchmarks and tests).
    scheduler: Scheduler | None = None
    last_scheduler: Scheduler | None = None
    #: ``distributed.Client`` objects of ``conf.py``, by the ``dask://`` address that replaces them.
    clients: dict[str, Any] = field(default_factory=dict)
    #: When this build started reading (``time.time()``): module texts older than
    #: that which no document uses are removed from the output at its end.
    started: float = 0.0
    #: The process that read the configuration (a ``-j`` reader is forked from it).
    main_pid: int = field(default_factory=os.getpid)
    #: Cache objects and the pipeline's build, per process (a forked reader makes its own).
    caches: dict[tuple[str, int], ReportCache] = field(default_factory=dict)
    builds: dict[int, Build] = field(default_factory=dict)
    #: Whether this build set the heap aside from the garbage collector (``gc.freeze``), so that
    #: it gives it back at its end; a host process that had frozen objects of its own is left alone.
    froze_heap: bool = False

    @property
    def forked(self) -> bool:
        return os.getpid() != self.main_pid


def build_state(app: Sphinx) -> BuildState:
    """The application's :class:`BuildState` (made by the extension's setup)."""
    state: BuildState | None = getattr(app, "_jaxhlo_state", None)
    if state is None:
        state = BuildState()
        app._jaxhlo_state = state  # type: ignore[attr-defined]
    return state


# -- per document, in the environment -----------------------------------------------------------


@dataclass
class DocumentData:
    """What the examples of each document left in the environment."""

    records: dict[str, list[Record]] = field(default_factory=dict)
    #: Warnings to repeat while the document is not read again: (line, subtype, message).
    warnings: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    #: The toolchain each document's reports were made with.
    stamps: dict[str, str] = field(default_factory=dict)
    #: Documents with a ``jax-hlo-report`` table.
    report_docs: set[str] = field(default_factory=set)
    #: Documents where the extension itself failed: read again next time.
    unfinished: set[str] = field(default_factory=set)
    #: Targets whose compiler is missing -> the documents that needed them.
    missing: dict[str, set[str]] = field(default_factory=dict)
    #: The keys of the module texts each document's page writes beside it (``_jaxhlo/``).
    texts: dict[str, set[str]] = field(default_factory=dict)
    #: The snapshot slots each document read -> their stamps: the document is read again when
    #: a slot's content changes, however its files changed (their times may go back).
    slots: dict[str, dict[str, SlotStamp]] = field(default_factory=dict)

    def clear(self, docname: str) -> None:
        self.records.pop(docname, None)
        self.texts.pop(docname, None)
        self.slots.pop(docname, None)
        self.warnings.pop(docname, None)
        self.stamps.pop(docname, None)
        self.report_docs.discard(docname)
        self.unfinished.discard(docname)
        for docs in self.missing.values():
            docs.discard(docname)

    def merge(self, other: DocumentData, docnames: AbstractSet[str]) -> None:
        self.report_docs |= other.report_docs & docnames
        self.unfinished |= other.unfinished & docnames
        for docname in docnames:
            if docname in other.records:
                self.records[docname] = other.records[docname]
            if docname in other.warnings:
                self.warnings[docname] = other.warnings[docname]
            if docname in other.stamps:
                self.stamps[docname] = other.stamps[docname]
            if docname in other.texts:
                self.texts[docname] = other.texts[docname]
            if docname in other.slots:
                self.slots[docname] = other.slots[docname]
        for target, docs in other.missing.items():
            self.missing.setdefault(target, set()).update(docs & docnames)

    def all_records(self) -> list[Record]:
        return [r for doc in sorted(self.records) for r in self.records[doc]]


def document_data(env: BuildEnvironment) -> DocumentData:
    """The environment's :class:`DocumentData`."""
    data: DocumentData | None = getattr(env, "jaxhlo", None)
    if not isinstance(data, DocumentData):
        data = DocumentData()
        env.jaxhlo = data  # type: ignore[attr-defined]
    return data
