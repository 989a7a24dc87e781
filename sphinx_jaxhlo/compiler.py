"""The parent side of the compile worker: start it, send requests, survive it.

One long-lived worker per process of the build (a forked Sphinx reader gets its
own), so jax is imported once per process and never in the Sphinx process
itself.  A request that runs past its timeout kills the worker; a worker that
dies (abort, segfault, ``os._exit`` in an example) is reported with its signal;
either way the next request starts a fresh one.
"""

from __future__ import annotations

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
from dataclasses import dataclass
from typing import Any

from .report import Report
from .request import CompileRequest


@dataclass
class Failure:
    """Why a request produced no report.

    ``kind`` is a warning subtype: ``empty``, ``syntax``, ``example``,
    ``function``, ``args``, ``trace``, ``option``, ``timeout``, ``crash``.
    ``line`` is 1-based in the example, when known.
    """

    kind: str
    message: str
    line: int | None = None


@dataclass
class Outcome:
    report: Report | None
    failure: Failure | None
    seconds: float
    log_tail: str = ""


class CompileWorker:
    """A worker process and the pipe to it."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid = os.getpid()
        self._buffer = b""
        self._lock = threading.Lock()
        self._workdir: str | None = None
        self.started = 0

    def _start(self) -> subprocess.Popen[bytes]:
        env = dict(os.environ)
        env.setdefault("PYTHONHASHSEED", "0")
        # libtpu takes a machine-wide lock file unless told that several
        # processes may load it: -j readers and concurrent builds each have a worker.
        env["ALLOW_MULTIPLE_LIBTPU_LOAD"] = "1"
        self._workdir = tempfile.mkdtemp(prefix="jaxhlo-worker-")
        env["JAXHLO_WORKDIR"] = self._workdir
        proc = subprocess.Popen(
            [sys.executable, "-m", "sphinx_jaxhlo.worker"],
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

    def compile(self, request: CompileRequest, timeout: float) -> Outcome:
        """Send one request and wait at most ``timeout`` seconds for its answer."""
        with self._lock:
            start = time.perf_counter()
            proc = self._ensure()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.write(json.dumps(request.to_json()).encode() + b"\n")
                proc.stdin.flush()
            except (BrokenPipeError, OSError):
                return self._died(proc, start)
            deadline = start + timeout
            fd = proc.stdout.fileno()
            while b"\n" not in self._buffer:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    self.kill()
                    return Outcome(None, Failure("timeout", f"compiling took longer than {timeout:g} s; "
                                                 "the worker was stopped"), time.perf_counter() - start)
                ready, _, _ = select.select([fd], [], [], min(remaining, 1.0))
                if ready:
                    chunk = os.read(fd, 1 << 20)
                    if not chunk:
                        return self._died(proc, start)
                    self._buffer += chunk
            line, _, self._buffer = self._buffer.partition(b"\n")
            seconds = time.perf_counter() - start
            answer: dict[str, Any] = json.loads(line)
            tail = answer.get("log_tail", "")
            if "report" in answer:
                return Outcome(Report.from_dict(answer["report"]), None, seconds, tail)
            f = answer["failure"]
            return Outcome(None, Failure(f["kind"], f["message"], f.get("line")), seconds, tail)

    def _died(self, proc: subprocess.Popen[bytes], start: float) -> Outcome:
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc = proc
            self.kill()
            code = -9
        self._proc = None
        self._cleanup()
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            why = f"the compile worker was killed by {name}"
        else:
            why = f"the compile worker exited with status {code}"
        return Outcome(None, Failure("crash", why + " (a crash inside XLA, or the example ended its process)"),
                       time.perf_counter() - start)


_worker: CompileWorker | None = None


def get_worker() -> CompileWorker:
    """The worker of this process (a forked process gets its own)."""
    global _worker
    if _worker is None or _worker._pid != os.getpid():
        _worker = CompileWorker()
    return _worker


def shutdown_worker() -> None:
    global _worker
    if _worker is not None:
        _worker.close()
        _worker = None
