"""Build-wide compile scheduling: compiles do not wait for their page.

Before Sphinx reads the documents of a build (``env-before-read-docs``), the
extension forecasts the compiles they will ask for: it finds the ``jax-hlo``
directives in their text (:mod:`sphinx_jaxhlo.pipeline.scan`), turns each into its
compile requests with the same code the example's own processing uses
(:func:`sphinx_jaxhlo.core.example.parse_example`,
:func:`sphinx_jaxhlo.pipeline.forecast.forecast`), drops those a snapshot or the cache
answers, and hands the rest to one :class:`Scheduler` for the whole build:
its lanes (one per compile worker, ``jaxhlo_workers``) take the longest
compiles first (the cache records how long each example took before) and
compile while Sphinx reads, parses and renders.

When an example is then processed (:func:`sphinx_jaxhlo.pipeline.run.compile_misses`),
it takes each of its results by cache key (:meth:`Scheduler.take`), waiting
only for its own.  A request the forecast did not foresee is compiled there
and then, as before; a forecast that was wrong only costs a compile nobody
uses, never a wrong report, since results are matched by key.

``-j N``: Sphinx forks its readers after the forecast; the scheduler and its
lanes stay in the main process, which only waits for the readers.  A fork
never happens while a lane works (it waits until every lane is waiting for
its compile worker: :class:`~sphinx_jaxhlo.compiler.client.ForkGate`), so a
reader inherits no lock a lane held and no half-written state.  A reader
asks for a key the same way and waits for its outcome file (the scheduler
writes one per compile into a folder of its own), so no compile is done
twice and none is lost.  The cache, when on, is filled by the scheduler as
each compile ends.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sphinx_jaxhlo.compiler.client import FORK_GATE, Limits, Outcome, failure_of
from sphinx_jaxhlo.compiler.executors import Executor
from sphinx_jaxhlo.pipeline.build import store_outcome
from sphinx_jaxhlo.store.cache import ReportCache

if TYPE_CHECKING:
    from sphinx_jaxhlo.core.request import CompileRequest


#: Memory one compile worker holds with every compiler loaded (libtpu the largest).
WORKER_BYTES = 500 * 10**6


def available_memory() -> int | None:
    """Bytes of memory available to new processes: psutil's figure when it is
    installed, else ``MemAvailable`` of ``/proc/meminfo``; ``None`` when neither says."""
    try:
        import psutil
    except ImportError:
        pass
    else:
        try:
            return int(psutil.virtual_memory().available)
        except Exception:
            pass
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def machine_workers() -> int:
    """How many compile workers this machine holds: one per core it lets this
    process use, at most one per :data:`WORKER_BYTES` of available memory."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    memory = available_memory()
    by_memory = int(memory // WORKER_BYTES) if memory is not None else cores
    return max(1, min(cores, by_memory))


@dataclass
class Planned:
    """One compile the forecast expects a document to ask for."""

    key: str
    request: CompileRequest
    limits: Limits
    #: Seconds it is expected to take (the cache's record, else a prior).
    estimate: float
    #: Whether :attr:`estimate` comes from the cache's record.
    known: bool
    #: :func:`sphinx_jaxhlo.store.snapshots.identity_key` of the example and target.
    identity: str
    docname: str
    platform: str


@dataclass
class Event:
    """One compile the scheduler ran: which, on which lane, from when to when
    (``time.monotonic()``, comparable between the processes of a build)."""

    key: str
    docname: str
    lane: int
    start: float
    end: float


class Scheduler:
    """The build's compile queue and its lanes.

    :param executor: where compiles run.
    :param cache: where deterministic reports are stored as they arrive (or ``None``).
    :param shared: write each outcome to a file, for readers forked by ``-j``.
    """

    def __init__(self, executor: Executor, cache: ReportCache | None, shared: bool) -> None:
        self.executor = executor
        self.cache = cache
        self.owner = os.getpid()
        self.planned: dict[str, Planned] = {}
        self.outcomes: dict[str, Outcome] = {}
        self.events: list[Event] = []
        self.folder: Path | None = Path(tempfile.mkdtemp(prefix="jaxhlo-outcomes-")) if shared else None
        self._queue: list[Planned] = []
        self._running: dict[int, tuple[Planned, float]] = {}
        self._done: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        self._stop = False
        self._threads: list[threading.Thread] = []
        self._means: dict[str, list[float]] = {}
        # shared with forked readers, for their progress lines
        ctx = multiprocessing.get_context("fork")
        self.in_flight: Any = ctx.Value("i", 0)
        self.seconds_left: Any = ctx.Value("d", 0.0)

    @property
    def forked(self) -> bool:
        """Whether this is a reader forked after the scheduler started (it cannot use the lanes' memory)."""
        return os.getpid() != self.owner

    def start(self, planned: list[Planned]) -> None:
        """Queue the compiles (each key once), longest first, and start the lanes."""
        for item in planned:
            if item.key not in self.planned:
                self.planned[item.key] = item
                self._done[item.key] = threading.Event()
        self._queue = sorted(self.planned.values(), key=lambda p: -p.estimate)
        self._update_estimate()
        lanes = min(self.executor.lanes, len(self._queue))
        for lane in range(lanes):
            thread = threading.Thread(target=self._run_lane, args=(lane,), name=f"jaxhlo-lane-{lane}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def _run_lane(self, lane: int) -> None:
        # all the lane does but wait for a worker happens with no fork of the process (Sphinx's -j)
        with FORK_GATE.working():
            self._lane_loop(lane)

    def _lane_loop(self, lane: int) -> None:
        while True:
            with self._lock:
                if self._stop or not self._queue:
                    return
                item = self._queue.pop(0)
                start = time.monotonic()
                self._running[lane] = (item, start)
                self._update_estimate()
            outcome = Outcome(None, failure_of(item.request, "crash", "the compile was not run"), 0.0)
            try:
                if self.folder is not None:  # a reader waiting for it may give up on a compile that never ends
                    (self.folder / f"{item.key}.started").touch()
                outcome = self.executor.compile(lane, item.request, item.limits)
                self._store(item, outcome)
            except BaseException as exc:  # never lose a key: a reader waits for it
                why = f"the compile could not be run: {exc!r}"
                outcome = Outcome(None, failure_of(item.request, "crash", why), 0.0)
                self._store(item, outcome, quiet=True)
            finally:
                end = time.monotonic()
                with self._lock:
                    self._running.pop(lane, None)
                    self.events.append(Event(item.key, item.docname, lane, start, end))
                    if outcome.report is not None:
                        self._means.setdefault(item.platform, []).append(outcome.seconds)
                    self.outcomes[item.key] = outcome
                    self._update_estimate()
                self._done[item.key].set()

    def _store(self, item: Planned, outcome: Outcome, quiet: bool = False) -> None:
        if quiet:
            try:
                self._store(item, outcome)
            except Exception:
                pass
            return
        store_outcome(self.cache, item.key, item.identity, outcome)
        if self.folder is not None:
            path = self.folder / f"{item.key}.json"
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(outcome.to_json()), encoding="utf-8")
            os.replace(tmp, path)

    def _expected(self, item: Planned) -> float:
        if item.known:
            return item.estimate
        seen = self._means.get(item.platform)
        return sum(seen) / len(seen) if seen else item.estimate

    def _update_estimate(self) -> None:
        """Seconds of work left over the lanes, and compiles in flight (called under the lock)."""
        now = time.monotonic()
        work = sum(self._expected(p) for p in self._queue)
        work += sum(max(0.0, self._expected(p) - (now - since)) for p, since in self._running.values())
        self.in_flight.value = len(self._running)
        self.seconds_left.value = work / max(1, min(self.executor.lanes, len(self.planned) or 1))

    def take(self, key: str) -> Outcome | None:
        """The outcome of a forecast compile, waiting for it; ``None`` for a key
        that was not forecast (the caller compiles it)."""
        if key not in self.planned:
            return None
        if not self.forked:
            # in slices: a Ctrl-C that the kernel delivers to a lane's thread sets Python's flag
            # but does not wake this one, which runs the handler (KeyboardInterrupt) only when it
            # returns to Python; an untimed wait would hold the build until the compile ended
            while not self._done[key].wait(0.25):
                pass
            return self.outcomes[key]
        assert self.folder is not None, "a forked reader needs the outcome files"
        path = self.folder / f"{key}.json"
        started = self.folder / f"{key}.started"
        limits = self.planned[key].limits
        # a compile ends within its limits (and the worker's start); one that
        # does not has been lost with its lane: the reader compiles it itself
        patience = limits.first + (limits.retry or 0.0) + 60.0
        while not path.is_file():
            try:
                if time.time() - started.stat().st_mtime > patience:
                    return None
            except FileNotFoundError:
                pass
            time.sleep(0.02)
        return Outcome.from_json(json.loads(path.read_text(encoding="utf-8")))

    def progress(self) -> str:
        """``3 compiling, about 40 s left``, or ``""`` when nothing is left."""
        running, left = self.in_flight.value, self.seconds_left.value
        if not running and left <= 0:
            return ""
        return f"{running} compiling, about {left:.0f} s left"

    def stop(self) -> None:
        """No new compiles start (those running finish, and land in the cache)."""
        with self._lock:
            self._stop = True
            self._queue.clear()

    def close(self) -> None:
        if self.forked:
            return
        self.stop()
        self.executor.close()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
