"""Build-wide compile scheduling: compiles do not wait for their page.

Before Sphinx reads the documents of a build (``env-before-read-docs``), the
extension forecasts the compiles they will ask for: it finds the ``jax-hlo``
directives in their text (:mod:`sphinx_jaxhlo.pipeline.scan`), turns each into its
compile requests with the same code the example's own processing uses
(:func:`sphinx_jaxhlo.sphinxext.directive.example_fields`,
:func:`sphinx_jaxhlo.pipeline.run.plan`), drops those a snapshot or the cache
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
lanes stay in the main process, which only waits for the readers.  A reader
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

from sphinx.util import logging

from sphinx_jaxhlo.compiler.client import Limits, Outcome, failure_of, get_pool
from sphinx_jaxhlo.compiler.executors import DaskExecutor, Executor, LocalExecutor
from sphinx_jaxhlo.store.cache import ReportCache, is_deterministic

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

    from sphinx_jaxhlo.core.request import CompileRequest

logger = logging.getLogger(__name__)

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
        report = outcome.report
        if self.cache is not None and report is not None:
            if is_deterministic(report):
                self.cache.put(item.key, report)
            self.cache.put_compile_seconds(item.identity, outcome.seconds)
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
            self._done[key].wait()
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


#: The scheduler of the build in progress.
_current: Scheduler | None = None
#: The scheduler of the last build that had one (its events, for tests and benchmarks).
LAST: Scheduler | None = None


def current() -> Scheduler | None:
    return _current


def forecast(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> list[Planned]:
    """The compiles the documents about to be read will ask for, and that no
    snapshot or cache entry answers."""
    from sphinx_jaxhlo.core import expectations as exp
    from sphinx_jaxhlo.core import targets as targets_mod
    from sphinx_jaxhlo.core.request import DEFAULT_SHOW
    from sphinx_jaxhlo.core.settings import as_list
    from sphinx_jaxhlo.pipeline.run import (
        Context,
        cache_for,
        plan,
        snapshot_answers,
        snapshot_root,
        target_names,
        timeout_limits,
    )
    from sphinx_jaxhlo.pipeline.scan import find_examples
    from sphinx_jaxhlo.render.nodes import jaxhlo_block
    from sphinx_jaxhlo.sphinxext.directive import (
        OptionProblem,
        chunk_variants,
        example_fields,
        jaxhlo_example,
        read_example_file,
    )
    from sphinx_jaxhlo.store import snapshots

    cache = cache_for(app)
    root = snapshot_root(app)
    mode = app.config.jaxhlo_snapshot_mode
    if root is not None and mode == "use":
        return []  # nothing compiles
    out: list[Planned] = []
    for docname in docnames:
        path = Path(env.doc2path(docname))
        kind = app.config.source_suffix.get(path.suffix, "")
        if path.suffix == ".ipynb":
            continue
        markdown = kind != "restructuredtext" and path.suffix != ".rst"
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for ordinal, found in enumerate(find_examples(text, markdown), 1):
            if found.argument:
                source, source_name, file_path = read_example_file(env, found.argument, docname)
                if source is None:
                    continue
            else:
                source, source_name, file_path = found.content, "example.py", ""
            try:
                fields = example_fields(found.options)
                if fields["chunk_option"] is not None:  # the variants compile too, as the directive adds them
                    source, fields["functions"], fields["chunk"] = chunk_variants(
                        source, fields["functions"], fields["chunk_option"])
            except (OptionProblem, ValueError, SyntaxError):
                continue
            node = jaxhlo_example()
            for key, value in {"source_text": source, "source_name": source_name, "file_path": file_path,
                               "first_line": 0, **fields, "docname": docname, "lineno": found.line,
                               "ordinal": ordinal}.items():
                node[key] = value
            block = jaxhlo_block()
            if found.options.get("name"):
                from docutils.nodes import fully_normalize_name

                block["names"].append(fully_normalize_name(found.options["name"]))
            block += node
            ctx = Context(app, node, (docname, found.line), exp.Expectations([]), cache, root, mode,
                          float(app.config.jaxhlo_drift_tolerance), node["timeout"] or app.config.jaxhlo_timeout)
            targets = []
            for name in target_names(ctx):
                try:
                    target = targets_mod.get_target(name)
                except targets_mod.UnknownTargetError:
                    continue
                if target not in targets:
                    targets.append(target)
            show = node["show"] or as_list(app.config.jaxhlo_show) or list(DEFAULT_SHOW)
            for group in plan(ctx, targets, show):
                for job in group:
                    if not job.target.available():
                        continue
                    if job.slot is not None and snapshot_answers(ctx, job):
                        continue
                    if cache is not None and cache.has(job.key):
                        continue
                    identity = snapshots.identity_key(job.identity)
                    observed = cache.compile_seconds(identity) if cache is not None else None
                    out.append(Planned(
                        job.key, job.request, timeout_limits(ctx, job.target, observed),
                        observed if observed is not None else job.target.prior_seconds,
                        observed is not None, identity, docname, job.target.platform))
    if cache is not None:
        cache.problems.clear()  # the documents' own look-ups report them, at their examples
    return out


def executor_for(app: Sphinx, size: int) -> Executor:
    """The executor ``jaxhlo_executor`` names (local compile workers by default)."""
    setting = app.config.jaxhlo_executor
    if setting is None:
        return LocalExecutor(get_pool(size))
    try:
        return DaskExecutor(setting)
    except ImportError:
        logger.warning("jax-hlo: jaxhlo_executor is %r but dask.distributed is not installed "
                       "(pip install 'sphinx-jaxhlo[dask]'); compiling on this machine", setting,
                       type="jaxhlo", subtype="config")
    except Exception as exc:
        logger.warning("jax-hlo: cannot reach the Dask cluster of jaxhlo_executor (%r): %s; compiling on this "
                       "machine", setting, exc, type="jaxhlo", subtype="config")
    return LocalExecutor(get_pool(size))


#: ``distributed.Client`` objects given in ``conf.py``, by the address that
#: replaces them in the configuration (a client cannot be pickled with the
#: environment); see :func:`sphinx_jaxhlo.sphinxext.extension.check_config`.
CLIENTS: dict[str, Any] = {}


def remember_client(client: Any) -> str:
    """Keep a ``distributed.Client`` of ``conf.py``; return the ``dask://``
    address that stands for it in the configuration."""
    address = str(getattr(getattr(client, "scheduler", None), "address", "") or f"client-{id(client)}")
    name = "dask://" + address.split("://", 1)[-1]
    CLIENTS[name] = client
    return name


def start(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """``env-before-read-docs``: forecast the compiles and start them."""
    global _current
    finish()
    from sphinx_jaxhlo.pipeline.run import cache_for, worker_count

    planned = forecast(app, env, docnames)
    if not planned:
        return
    scheduler = Scheduler(executor_for(app, worker_count(app)), cache_for(app), shared=app.parallel > 1)
    scheduler.start(planned)
    _current = scheduler


def stop(app: Sphinx, env: BuildEnvironment) -> None:
    """``env-updated``: every document is read; compiles nobody asked for do not start."""
    if _current is not None and not _current.forked:
        _current.stop()


def finish() -> None:
    """``build-finished`` (and the start of a build): close the scheduler."""
    global _current, LAST
    if _current is not None:
        _current.close()
        LAST = _current
    _current = None
