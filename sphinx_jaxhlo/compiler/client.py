"""The parent side of the compile worker: start it, send requests, survive it.

Long-lived workers per process of the build (a forked Sphinx reader gets its
own pool), so jax is imported once per process and never in the Sphinx process
itself.  A request that runs past its timeout kills the worker; a worker that
dies (abort, segfault, ``os._exit`` in an example) is reported with its signal;
either way the next request starts a fresh one.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sphinx_jaxhlo.core.report import Report, TargetFailure
from sphinx_jaxhlo.core.request import CallRequest, CompileRequest, default_function
from sphinx_jaxhlo.core.targets import Target
from sphinx_jaxhlo.store.cache import checked_report


def failure_of(request: CompileRequest | CallRequest, kind: str, message: str,
               line: int | None = None) -> TargetFailure:
    """Why ``request`` produced no report, as the one failure type (:class:`TargetFailure`)."""
    return TargetFailure(request.target, request.function or "", kind, message, line)


@dataclass
class Outcome:
    """What one compile request came back with: a report, or why there is none."""

    report: Report | None
    failure: TargetFailure | None
    seconds: float

    def to_json(self) -> dict[str, Any]:
        """The outcome as JSON data (a report's own form, :meth:`Report.to_dict`)."""
        failure = self.failure
        return {"report": None if self.report is None else self.report.to_dict(),
                "failure": None if failure is None else dataclasses.asdict(failure),
                "seconds": self.seconds}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        failure = data.get("failure")
        return cls(None if data.get("report") is None else checked_report(data["report"]),
                   None if failure is None else TargetFailure(**failure),
                   float(data.get("seconds") or 0.0))


#: The limit of the one retry of a timed-out compile, as a multiple of the first
#: (the target's :attr:`~sphinx_jaxhlo.core.targets.Target.timeout`, or the observed one).
RETRY_FACTOR = 3.0
#: A compile may take this many times its last observed duration before it is stopped.
OBSERVED_FACTOR = 4.0


@dataclass(frozen=True)
class Limits:
    """How long one compile may take: ``first``, and when it runs past that,
    ``retry`` seconds on a fresh worker (``None``: reported at once)."""

    first: float
    retry: float | None = None

    @classmethod
    def fitting(cls, target: Target, configured: float | None, observed: float | None = None) -> Limits:
        """The limits of one compile.

        :param target: the target compiled for: its
            :attr:`~sphinx_jaxhlo.core.targets.Target.timeout` is the default limit.
        :param configured: the example's ``:timeout:``, else ``jaxhlo_timeout``:
            when set, it is the limit, with no retry.
        :param observed: seconds the same example took for this target before
            (the cache's record), which scales the default up.
        """
        if configured:
            return cls(float(configured))
        first = target.timeout
        if observed:
            first = max(first, OBSERVED_FACTOR * observed)
        return cls(first, RETRY_FACTOR * first)


def _timed_out(request: CompileRequest | CallRequest, label: str, limits: Limits) -> TargetFailure:
    what = f"compiling {label}" if label else "compiling"
    if limits.retry is None:
        return failure_of(request, "timeout", f"{what} took longer than {limits.first:g} s; the worker was stopped")
    return failure_of(request, "timeout", f"{what} took longer than {limits.first:g} s, and longer than "
                      f"{limits.retry:g} s when tried again; the worker was stopped")


class ForkGate:
    """Keeps ``fork()`` away from this package's threads while they work.

    Sphinx forks its ``-j`` readers and writers (``multiprocessing``'s fork
    context) while the build's scheduler compiles in threads of the same
    process.  A forked child gets a copy of every lock as it was at that
    instant, and none of the threads that would release them: a lane that
    was importing a module (its import lock), writing an outcome file or the
    cache, or starting a worker process (the pipe ``subprocess`` waits on
    until the ``exec``) would leave the child waiting forever.

    So a thread of this package holds the gate (shared: many threads at
    once) while it works, and lets go of it only while it waits for a
    compile worker's answer (a ``select`` on its pipe, a Dask future), which
    is nearly all of its time; :func:`os.register_at_fork` takes the gate
    exclusively around every ``fork()``, which therefore happens only when
    no thread of ours is working.  The child starts with a fresh gate; the
    threads are not there, and nothing of theirs is half done.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._working = 0
        self._forks = 0
        self._local = threading.local()

    def _depth(self) -> int:
        return int(getattr(self._local, "depth", 0))

    def _enter(self) -> None:
        with self._cond:
            while self._forks:  # a fork is waiting: let it go first
                self._cond.wait(0.25)  # in slices, so that a Ctrl-C is handled (Scheduler.take)
            self._working += 1

    def _leave(self) -> None:
        with self._cond:
            self._working -= 1
            if not self._working:
                self._cond.notify_all()

    @contextlib.contextmanager
    def working(self) -> Iterator[None]:
        """No fork of this process happens inside (re-entrant)."""
        depth = self._depth()
        if not depth:
            self._enter()
        self._local.depth = depth + 1
        try:
            yield
        finally:
            self._local.depth = depth
            if not depth:
                self._leave()

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """Inside :meth:`working`: a wait during which the process may fork
        (the thread holds nothing a child would need); elsewhere nothing."""
        depth = self._depth()
        if depth:
            self._local.depth = 0
            self._leave()
        try:
            yield
        finally:
            if depth:
                self._enter()
                self._local.depth = depth

    def before_fork(self) -> None:
        """Wait until no other thread works, and keep the gate shut through the fork."""
        self._cond.acquire()
        self._forks += 1
        own = 1 if self._depth() else 0
        while self._working > own:
            self._cond.wait(0.25)

    def after_fork_in_parent(self) -> None:
        self._forks -= 1
        self._cond.notify_all()
        self._cond.release()

    def after_fork_in_child(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._working = 1 if self._depth() else 0
        self._forks = 0


#: The gate of this process (see :class:`ForkGate`).
FORK_GATE = ForkGate()

if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=FORK_GATE.before_fork, after_in_parent=FORK_GATE.after_fork_in_parent,
                        after_in_child=FORK_GATE.after_fork_in_child)


class CompileWorker:
    """A worker process and the pipe to it."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        """:param env: variables to add to the worker's environment (the API adds ``PYTHONPATH``)."""
        self.env = dict(env or {})
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid = os.getpid()
        self._buffer = b""
        self._lock = threading.Lock()
        self._workdir: str | None = None
        self.started = 0

    def _start(self) -> subprocess.Popen[bytes]:
        from sphinx_jaxhlo.compiler.lowering import prepare_environment

        env = {**os.environ, **self.env}
        # The GPU/TPU compilers' private folder goes on the worker's PYTHONPATH only:
        # this process (Sphinx, a notebook kernel's parent) never loads them.
        prepare_environment(env)
        self._workdir = tempfile.mkdtemp(prefix="jaxhlo-worker-")
        env["JAXHLO_WORKDIR"] = self._workdir
        with FORK_GATE.working():  # a child forked meanwhile would hold the pipe Popen waits on
            proc = subprocess.Popen(
                [sys.executable, "-m", "sphinx_jaxhlo.compiler.worker"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                env=env, start_new_session=True, close_fds=True,
            )
        self._buffer = b""
        self.started += 1
        return proc

    def _ensure(self) -> subprocess.Popen[bytes]:
        if self._pid != os.getpid():  # forked: the inherited worker belongs to the parent
            self._proc = None
            self._pid = os.getpid()
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self._start()
        return self._proc

    def kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
            proc.wait()
        self._cleanup()

    def _cleanup(self) -> None:
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or self._pid != os.getpid():
            return
        try:
            if proc.stdin:
                proc.stdin.close()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self._proc = proc
            self.kill()
        self._cleanup()

    def compile(self, request: CompileRequest | CallRequest, timeout: float) -> Outcome:
        """Send one request and wait at most ``timeout`` seconds for its answer."""
        with FORK_GATE.working():
            with FORK_GATE.waiting():
                self._lock.acquire()
            try:
                return self._compile(request, timeout)
            finally:
                self._lock.release()

    def _compile(self, request: CompileRequest | CallRequest, timeout: float) -> Outcome:
        start = time.perf_counter()
        proc = self._ensure()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(request.to_json()).encode() + b"\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return self._died(request, proc, start)
        deadline = start + timeout
        fd = proc.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                self.kill()
                return Outcome(None, failure_of(request, "timeout", f"compiling took longer than {timeout:g} s; "
                                                "the worker was stopped"), time.perf_counter() - start)
            with FORK_GATE.waiting():  # the time a compile takes: the process may fork meanwhile
                ready, _, _ = select.select([fd], [], [], min(remaining, 1.0))
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return self._died(request, proc, start)
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        seconds = time.perf_counter() - start
        answer: dict[str, Any] = json.loads(line)
        if "report" in answer:
            return Outcome(checked_report(answer["report"]), None, seconds)
        f = answer["failure"]
        return Outcome(None, failure_of(request, f["kind"], f["message"], f.get("line")), seconds)

    def compile_within(self, request: CompileRequest | CallRequest, limits: Limits | float,
                       label: str = "") -> Outcome:
        """:meth:`compile` within ``limits``: a compile that runs past the first
        limit is tried once more, on a fresh worker, with the longer one.

        :param label: what is compiled, for the timeout message (``f for tpu:v5e``).
        """
        if not isinstance(limits, Limits):
            limits = Limits(float(limits))
        outcome = self.compile(request, limits.first)
        if outcome.failure is not None and outcome.failure.kind == "timeout" and limits.retry is not None:
            first_seconds = outcome.seconds
            outcome = self.compile(request, limits.retry)
            outcome.seconds += first_seconds
        if outcome.failure is not None and outcome.failure.kind == "timeout":
            outcome.failure = _timed_out(request, label, limits)
        return outcome

    def _died(self, request: CompileRequest | CallRequest, proc: subprocess.Popen[bytes], start: float) -> Outcome:
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc = proc
            self.kill()
            code = -9
        self._proc = None
        last = self._log_tail()
        self._cleanup()
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            why = f"the compile worker was killed by {name}"
        else:
            why = f"the compile worker exited with status {code}"
        why += " (a crash inside XLA, or the example ended its process)"
        if last:
            why += f"; its last output: {last}"
        return Outcome(None, failure_of(request, "crash", why), time.perf_counter() - start)

    def _log_tail(self, lines: int = 5) -> str:
        """The last lines the worker (XLA, libtpu, the example) wrote: an abort says why there."""
        if self._workdir is None:
            return ""
        try:
            with open(os.path.join(self._workdir, "output.log"), "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - 4000))
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return " | ".join(ln.strip() for ln in text.splitlines()[-lines:] if ln.strip())[:1000]


def describe(request: CompileRequest | CallRequest) -> str:
    """``f for tpu:v5e``: a compile as its messages name it."""
    function = request.function
    if not function and isinstance(request, CompileRequest):
        function = default_function(request.source) or ""
    return f"{function or 'the default function'} for {request.target}"


class WorkerPool:
    """Up to ``size`` workers of this process, for compiling several requests at once
    (the targets of one example: a TPU compile need not wait for the GPU one)."""

    def __init__(self, size: int, pythonpath: tuple[str, ...] = ()) -> None:
        """:param pythonpath: folders the workers import from first (the API's
            caller's ``sys.path``, so a file compiled by source finds its imports)."""
        self.size = max(1, size)
        self.pythonpath = pythonpath
        self.workers: list[CompileWorker] = []
        self._pid = os.getpid()

    def _worker(self, index: int) -> CompileWorker:
        while len(self.workers) <= index:
            env = {}
            if self.pythonpath:
                saved = os.environ.get("PYTHONPATH")
                env["PYTHONPATH"] = os.pathsep.join([*self.pythonpath, *([saved] if saved else [])])
            self.workers.append(CompileWorker(env))
        return self.workers[index]

    def compile_all(self, jobs: list[tuple[CompileRequest, float | Limits]]) -> list[Outcome]:
        """Compile each (request, limits); the outcomes come back in the same order."""
        if len(jobs) <= 1 or self.size == 1:
            return [self._worker(0).compile_within(request, timeout, describe(request)) for request, timeout in jobs]
        from concurrent.futures import ThreadPoolExecutor

        outcomes: list[Outcome | None] = [None] * len(jobs)
        pending = list(enumerate(jobs))
        lock = threading.Lock()

        def drain(worker: CompileWorker) -> None:
            with FORK_GATE.working():
                while True:
                    with lock:
                        if not pending:
                            return
                        index, (request, timeout) = pending.pop(0)
                    outcomes[index] = worker.compile_within(request, timeout, describe(request))

        lanes = min(self.size, len(jobs))
        workers = [self._worker(i) for i in range(lanes)]
        with ThreadPoolExecutor(max_workers=lanes, thread_name_prefix="jaxhlo-compile") as pool:
            for future in [pool.submit(drain, w) for w in workers]:
                future.result()
        return [o for o in outcomes if o is not None]

    def close(self) -> None:
        for worker in self.workers:
            worker.close()
        self.workers = []


#: The worker pools of this process: the build's (no extra path) and at most
#: one with a path (the API's); a forked process makes its own.
_pools: dict[bool, WorkerPool] = {}
_pools_lock = threading.Lock()


def get_pool(size: int, pythonpath: tuple[str, ...] | None = None) -> WorkerPool:
    """A worker pool of this process.

    :param pythonpath: ``None``: the build's pool, whose workers see the
        package's own path; else a pool whose workers import from these
        folders first (kept while later calls need no folder it lacks).
    """
    with _pools_lock:
        key = pythonpath is not None
        pool = _pools.get(key)
        if pool is not None and pool._pid == os.getpid() and (
                pythonpath is None or set(pythonpath) <= set(pool.pythonpath)):
            pool.size = max(1, size)
            return pool
        if pool is not None and pool._pid == os.getpid():
            pool.close()
        pool = _pools[key] = WorkerPool(size, pythonpath or ())
        return pool


def shutdown_worker(pythonpath: bool = False) -> None:
    """Stop the workers of the build's pool (``pythonpath``: of the pool with a path)."""
    with _pools_lock:
        pool = _pools.pop(pythonpath, None)
    if pool is not None and pool._pid == os.getpid():
        pool.close()


@atexit.register
def _shutdown_all() -> None:
    for key in list(_pools):
        shutdown_worker(key)
