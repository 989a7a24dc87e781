"""Where compiles run: this machine's compile workers, or a Dask cluster.

An executor takes one compile request and its time limits and gives back an
:class:`~sphinx_jaxhlo.compiler.client.Outcome`; the build's scheduler
(:mod:`sphinx_jaxhlo.pipeline.schedule`) calls it from as many threads as it has
lanes.

- :class:`LocalExecutor`: the compile workers of this process (one per lane).
- :class:`DaskExecutor` (``jaxhlo_executor = "dask://host:8786"`` or a
  ``distributed.Client``): each request is sent as data,
  :meth:`CompileRequest.to_json` (source, argument specs, target, options), to
  :func:`compile_on_dask_worker`, which compiles it in a compile worker
  process of the Dask worker (isolation and timeouts as on this machine) and
  answers with the outcome as data (the report's :meth:`Report.to_dict`).
  Nothing of Sphinx crosses the wire; the cache and everything after the
  report stay in the build.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

from sphinx_jaxhlo.compiler.client import (
    FORK_GATE,
    CompileWorker,
    Limits,
    Outcome,
    WorkerPool,
    describe,
    failure_of,
)
from sphinx_jaxhlo.core.request import CompileRequest
from sphinx_jaxhlo.core.settings import DASK_SCHEME

__all__ = ["DaskExecutor", "Executor", "LocalExecutor", "compile_on_dask_worker"]


class Executor(Protocol):
    #: How many compiles it runs at once.
    lanes: int

    def compile(self, lane: int, request: CompileRequest, limits: Limits) -> Outcome: ...

    def close(self) -> None: ...


class LocalExecutor:
    """Compile workers of this process: lane ``i`` is worker ``i`` of the pool."""

    def __init__(self, pool: WorkerPool) -> None:
        self.pool = pool
        self.lanes = pool.size

    def compile(self, lane: int, request: CompileRequest, limits: Limits) -> Outcome:
        return self.pool._worker(lane).compile_within(request, limits, describe(request))

    def close(self) -> None:
        """The pool's workers stay: the documents' own compiles use them too."""


class DaskExecutor:
    """Compiles on the workers of a Dask cluster.

    :param client: a ``distributed.Client``, or the scheduler's address
        (``tcp://host:8786``; ``dask://`` is taken for ``tcp://``).
    """

    def __init__(self, client: Any) -> None:
        self._own = False
        if isinstance(client, str):
            from distributed import Client  # an optional dependency: ImportError tells the caller

            address = "tcp://" + client[len(DASK_SCHEME):] if client.startswith(DASK_SCHEME) else client
            client = Client(address, set_as_default=False)
            self._own = True
        self.client = client
        try:
            workers = client.scheduler_info().get("workers", {})
            self.lanes = max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))
        except Exception:
            self.lanes = 1

    def compile(self, lane: int, request: CompileRequest, limits: Limits) -> Outcome:
        future = self.client.submit(compile_on_dask_worker, request.to_json(), limits.first, limits.retry,
                                    describe(request), pure=False)
        try:
            with FORK_GATE.waiting():  # the compile's time: the process may fork meanwhile
                answer = future.result()
            return Outcome.from_json(answer)
        except Exception as exc:  # the cluster lost the task (a worker died, the scheduler went away)
            return Outcome(None, failure_of(request, "crash",
                                            f"the Dask cluster did not compile {describe(request)}: {exc!r}"), 0.0)

    def close(self) -> None:
        if self._own:
            self.client.close()


# -- on the Dask worker ------------------------------------------------------------

_local = threading.local()


def compile_on_dask_worker(request: dict[str, Any], first: float, retry: float | None, label: str) -> dict[str, Any]:
    """Compile one request on a Dask worker, in a compile worker process of
    its own (one per thread of the Dask worker, started on first use and kept).

    :param request: :meth:`CompileRequest.to_json`.
    :return: :meth:`Outcome.to_json`.
    """
    worker: CompileWorker | None = getattr(_local, "worker", None)
    if worker is None:
        worker = _local.worker = CompileWorker()
    outcome = worker.compile_within(CompileRequest.from_json(request), Limits(first, retry), label)
    return outcome.to_json()
