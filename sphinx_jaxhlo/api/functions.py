"""The Python API: analyze a function from a notebook, a script or a test suite.

:func:`analyze` compiles a function for each target, from argument shapes,
without running it, and returns :class:`Reports`: one
:class:`~sphinx_jaxhlo.core.report.Report` per target that prints as a text table,
shows as the directive's HTML in Jupyter, round-trips through JSON and checks
expectations (:meth:`Reports.check`).  :func:`analyze_source` does the same
for the source text of a module (what the command line and the directive
compile); :func:`analyze_hlo` reads a saved optimized HLO module.

The compiler runs in a compile worker process, never in the caller's:
:func:`analyze` sends the function object itself, pickled
(:mod:`sphinx_jaxhlo.compiler.calls`), and the worker compiles ``jax.jit(fn)`` for
each target, exactly what ``jax.jit(fn)`` compiles for these shapes, whether
the function comes from a file, a notebook cell, a lambda or a closure.

Nothing in this module imports jax.
"""

from __future__ import annotations

import ast
import base64
import dataclasses
import functools
import inspect
import linecache
import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sphinx_jaxhlo.api.keywords import checked_budget as _budget
from sphinx_jaxhlo.api.keywords import checked_grad as _grad
from sphinx_jaxhlo.api.keywords import given_view, mesh_spec_of
from sphinx_jaxhlo.api.keywords import int_tuple as _int_tuple
from sphinx_jaxhlo.api.keywords import str_tuple as _str_tuple
from sphinx_jaxhlo.api.reports import REPORTS_SHOW, AnalysisError, Reports, display_of
from sphinx_jaxhlo.api.saved_module import analyze_hlo
from sphinx_jaxhlo.api.sweep_reports import SweepReports, compile_sweep, sweep_call
from sphinx_jaxhlo.compiler.client import CompileWorker, Limits, Outcome, describe, get_pool
from sphinx_jaxhlo.core import targets as targets_mod
from sphinx_jaxhlo.core.bisection import DEFAULT_BUDGET
from sphinx_jaxhlo.core.example import (
    PYTHON,
    Example,
    OptionProblem,
    parse_example,
    parse_show,
    parse_static,
    parse_view,
    parse_xla_flags,
)
from sphinx_jaxhlo.core.report import Report, TargetFailure
from sphinx_jaxhlo.core.request import CallRequest, CompileRequest
from sphinx_jaxhlo.core.settings import Settings
from sphinx_jaxhlo.core.specs import ArgSpecs, MeshSpec
from sphinx_jaxhlo.pipeline.build import Build, Warnings
from sphinx_jaxhlo.pipeline.plan import plan
from sphinx_jaxhlo.pipeline.run import compile_misses, look_up
from sphinx_jaxhlo.render.display import Display
from sphinx_jaxhlo.store.cache import ReportCache

__all__ = [
    "AnalysisError",
    "Reports",
    "SweepReports",
    "TargetFailure",
    "analyze",
    "analyze_hlo",
    "analyze_source",
    "default_cache_dir",
]

# -- the compile worker of this process -------------------------------------------------------


#: cloudpickle's by-value registry is global: one pickling at a time.
_pickle_lock = threading.Lock()


def _python_path(extra: Sequence[str] = ()) -> tuple[str, ...]:
    out: list[str] = []
    for entry in [*extra, *sys.path]:
        path = os.path.abspath(entry or os.getcwd())
        if path not in out and os.path.isdir(path):
            out.append(path)
    return tuple(out)


def _get_worker(pythonpath: tuple[str, ...]) -> CompileWorker:
    """The worker of this process's pool with a path (:func:`~sphinx_jaxhlo.compiler.client.get_pool`):
    started again when it lacks a folder of the path it needs."""
    return get_pool(1, pythonpath)._worker(0)


def _inside_worker() -> bool:
    """True in a compile worker: a file compiled by source that calls
    :func:`analyze` at its top level must not start workers of its own."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return getattr(spec, "name", "") == "sphinx_jaxhlo.compiler.worker"


# -- options -----------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/sphinx-jaxhlo``, else ``~/.cache/sphinx-jaxhlo``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sphinx-jaxhlo"


def resolve_targets(targets: str | Sequence[str] | None) -> list[targets_mod.Target]:
    """Target names (a list or a comma string; ``None``: the installed
    defaults) -> targets, checked.

    :raises ValueError: an unknown target, or one whose compiler is not installed.
    """
    if targets is None:
        names = targets_mod.default_targets()
    elif isinstance(targets, str):
        names = [t.strip() for t in targets.split(",") if t.strip()]
    else:
        names = [str(t).strip() for t in targets if str(t).strip()]
    if not names:
        raise ValueError("no target given")
    out: list[targets_mod.Target] = []
    for name in names:
        target = targets_mod.get_target(name)
        if not target.available():
            raise ValueError(f"cannot compile for {target.name}: {target.missing_message()}")
        if target not in out:
            out.append(target)
    return out


def _static_values(static: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """Static arguments of a function object: any Python values (they travel
    pickled); as text, Python literals."""
    if static is None or isinstance(static, str):
        return {key: ast.literal_eval(text) for key, text in parse_static(static, PYTHON)}
    for key in static:
        if not isinstance(key, str) or not key.isidentifier():
            raise OptionProblem("option", f"{PYTHON('static')} {key!r} is not an argument name")
    return dict(static)


def _show(show: Sequence[str] | str | None) -> list[str]:
    """The parts :class:`Reports` shows: as given, else :data:`REPORTS_SHOW`."""
    parts = parse_show(show, PYTHON)
    return list(parts) if parts is not None else list(REPORTS_SHOW)


# -- the function and its file ----------------------------------------------------------------


def _underlying(fn: Any) -> Any:
    """Through ``functools.partial`` and ``__wrapped__`` (``jax.jit``, decorators)."""
    seen = 0
    while seen < 100:
        seen += 1
        if isinstance(fn, functools.partial):
            fn = fn.func
            continue
        wrapped = getattr(fn, "__wrapped__", None)
        if wrapped is None or wrapped is fn:
            break
        fn = wrapped
    return fn


def _function_name(fn: Any) -> str:
    inner = _underlying(fn)
    return str(getattr(inner, "__name__", None) or getattr(fn, "__name__", None) or type(fn).__name__)


def _file_of(fn: Any) -> tuple[str, str]:
    """``(source text, base name)`` of the file the function's code comes from,
    for mapping lines in export mode; ``("", "<unknown>")`` when there is none."""
    code = getattr(_underlying(fn), "__code__", None)
    if code is None:
        return "", "<unknown>"
    filename = code.co_filename
    lines = linecache.getlines(filename)
    return "".join(lines), os.path.basename(filename) or filename


# -- compiling --------------------------------------------------------------------------------


@dataclass
class _CallJob:
    target: targets_mod.Target
    request: CallRequest | None
    failure: TargetFailure | None = None
    #: The function it compiles, when not the one the call is named for (a gradient variant).
    function: str = ""


def _run_calls(jobs: Sequence[_CallJob], function: str, timeout: float | None, pythonpath: tuple[str, ...],
               ) -> tuple[list[Report], list[TargetFailure]]:
    """Compile each function object (its worker looks the cache up, by what the function lowers to),
    within the directive's limits (:meth:`~sphinx_jaxhlo.compiler.client.Limits.fitting`: the
    target's, with one retry, unless ``timeout`` is given)."""
    reports: list[Report] = []
    failures: list[TargetFailure] = []
    for job in jobs:
        name = job.function or function
        if job.failure is not None or job.request is None:
            failures.append(job.failure or TargetFailure(job.target.name, name, "trace", "not lowered"))
            continue
        outcome = _get_worker(pythonpath).compile_within(job.request, Limits.fitting(job.target, timeout),
                                                         f"{name} for {job.target.name}")
        if outcome.report is not None:
            reports.append(outcome.report)
        else:
            assert outcome.failure is not None
            failures.append(dataclasses.replace(outcome.failure, function=name))
    return reports, failures


def _finish(reports: list[Report], failures: list[TargetFailure], targets: Sequence[targets_mod.Target],
            function: str, args: str, show: Sequence[str], via: str, notes: Sequence[str],
            cause: BaseException | None = None, display: Display | None = None) -> Reports:
    result = Reports(reports, failures=failures, function=function, args=args, show=show, compiled_via=via,
                     notes=notes, targets=[t.name for t in targets], display=display)
    return _raise_if_empty(result, cause)


def _raise_if_empty(reports: Reports, cause: BaseException | None = None) -> Reports:
    """``reports``, or :class:`AnalysisError` when no target produced one."""
    if len(reports) == 0 and reports.failures:
        seen: list[str] = []
        for f in reports.failures:
            text = f.describe()
            if text not in seen:
                seen.append(text)
        raise AnalysisError(f"{reports.function} was compiled for no target:\n"
                            + "\n".join(f"  {s}" for s in seen), reports.failures) from cause
    return reports


def _cache(cache_dir: str | os.PathLike[str] | None) -> ReportCache | None:
    return ReportCache(cache_dir) if cache_dir is not None else None


def analyze_source(source: str, function: str | None = None, args: str | ArgSpecs = "", *,
                   targets: str | Sequence[str] | None = None, static: str | Mapping[str, Any] | None = None,
                   xla_flags: str | Mapping[str, Any] | None = None, timeout: float | None = None,
                   source_name: str = "example.py", show: Sequence[str] | str | None = None,
                   cache_dir: str | os.PathLike[str] | None = None, pythonpath: Sequence[str] = (),
                   donate: str | Sequence[str] = (), mesh: Any = None,
                   grad: str | int | Sequence[str | int] | None = None,
                   sweep: str | Mapping[str, Any] | None = None, bisect: int | None = None,
                   chunk: str | None = None, findings: str | Sequence[str] | None = None,
                   rows: int | str | None = None) -> Reports | SweepReports:
    """Compile ``function`` of a module's source text, as the directive and
    the command line do (same requests, same cache keys).

    :param source: the module's text; the worker runs it, then compiles the function.
    :param function: the function's name; default: the last top-level ``def``.
    :param args: the argument specs, as the directive's ``:args:``
        (``"f32[100000,3], f32[50000,3], scale=f32[]"``).
    :param targets: target names (a list or a comma string); default: the
        installed ones of ``cpu, gpu:h100, tpu:v5e``.
    :param static: static arguments, ``"chunk=1000"`` or ``{"chunk": 1000}``
        (Python literals).
    :param xla_flags: compiler options, ``{"xla_cpu_experimental_ynn_fusion_type": ""}``.
    :param timeout: seconds one compile may take before its worker is stopped; ``None`` (the
        default): the directive's rule, a limit per target with one retry on a fresh worker
        (``jaxhlo_timeout``).
    :param source_name: the file name the source is compiled under (source
        lines are mapped through it).
    :param show: parts the result shows (``stablehlo`` and ``jaxpr`` are only
        produced when asked for here).
    :param donate: arguments to donate, by name or position (``"params, 1"``
        or a list), as the directive's ``:donate:``.
    :param mesh: the mesh of a target of several devices, as the
        directive's ``:mesh:`` (``"data=4, model=2"``, a ``{name: size}``
        dict or a ``jax.sharding.Mesh``); specs may then carry
        ``@ P(data, None)``.
    :param cache_dir: a folder to cache reports in; ``None``: no cache.
    :param pythonpath: folders the worker should import from, besides this
        process's ``sys.path``.
    :param grad: as the directive's ``:grad:``: argument names or positions
        (``"hkl"``, ``1``, ``["pos", "hkl"]``); the gradient of each function with
        respect to them is compiled beside it, as ``<function>_grad``.
    :param sweep: compile at many sizes: the values of the symbols ``args`` names
        (``"f32[n,3]"``), as the directive's ``:sweep:`` (``"n=1000..100000"``) or a dict
        (``{"n": [1000, 4096, 5000], "d": "n"}``); returns a
        :class:`~sphinx_jaxhlo.SweepReports`.
    :param bisect: with ``sweep``, the most sizes to compile between neighbours whose
        decisions differ, to locate each flip (0: none), as the directive's ``:bisect:``;
        default 48.
    :param chunk: as the directive's ``:chunk:`` (``"pos=1000"``; ``axis=``, ``combine=``): each
        function's variant over chunks of that argument, ``<function>_chunked``, compiled beside it,
        proved on the jaxpr and checked numerically by the compile worker (its report says so).
    :param findings: the kinds of findings the text and the JSON report, as the directive's
        ``:findings:`` (``"memory"``, ``["memory", "peak"]``, ``"all"``, ``"none"``); default: all.
    :param rows: rows per detail table in the text, largest first (a number, or ``"all"``), as
        the directive's ``:rows:``; default 8.
    :raises ValueError: bad specs, options or targets.
    :raises AnalysisError: when no target produced a report.
    """
    if isinstance(args, (list, tuple)):
        raise TypeError(f"analyze_source(): args is the specs as one text, {', '.join(map(str, args))!r}, not a "
                        f"{type(args).__name__}: join them, args=', '.join(specs)")
    example = parse_example(source, {
        "function": function, "args": args, "mesh": mesh_spec_of(mesh), "static": static, "xla-flags": xla_flags,
        "donate": donate, "timeout": timeout, "grad": _grad(grad), "sweep": sweep, "bisect": bisect,
        **given_view(chunk=chunk, findings=findings, rows=rows)}, spell=PYTHON,
        source_name=source_name).with_chunk_variants(PYTHON).with_grad_variants(PYTHON)
    if example.sweep is not None:
        return compile_sweep(example, resolve_targets(targets), _show(show), compile_example, cache_dir=cache_dir,
                             pythonpath=pythonpath)
    reports = compile_example(example, resolve_targets(targets), _show(show), cache_dir=cache_dir,
                              pythonpath=pythonpath)
    return _raise_if_empty(reports)


def compile_example(example: Example, targets: Sequence[targets_mod.Target], show: Sequence[str], *,
                    cache_dir: str | os.PathLike[str] | None = None, pythonpath: Sequence[str] = (),
                    progress: Callable[[str], None] | None = None) -> Reports:
    """Compile ``example`` for ``targets`` through the pipeline (the cache
    first), in this process's compile worker: what :func:`analyze_source` and
    the command line do.  Does not raise when no target produced a report."""
    path = _python_path(pythonpath)

    def compile_batch(batch: Sequence[tuple[CompileRequest, Limits]]) -> list[Outcome]:
        outcomes = []
        for request, limits in batch:
            what = describe(request)
            if progress:
                progress(f"compiling {what}...")
            outcome = _get_worker(path).compile_within(request, limits, what)
            if progress:
                progress(f"compiled {what} in {outcome.seconds:.2f} s" if outcome.report is not None
                         else f"failed: {outcome.failure.describe() if outcome.failure else what}")
            outcomes.append(outcome)
        return outcomes

    build = Build(Settings(), Warnings(), compile_batch, cache=_cache(cache_dir))
    by_function = plan(build, example, list(targets), list(show))
    jobs = [job for group in by_function for job in group]
    misses = look_up(build, example, jobs)
    if progress:
        for job in jobs:
            if job.origin == "cache":
                progress(f"{describe(job.request)}: from the cache")
    compile_misses(build, example, by_function, misses)
    results = [job.result for job in jobs]
    name = next((r.report.function for r in results if r.report is not None),
                example.functions[0] or "(default function)")
    reports = [r.report for r in results if r.report is not None]
    failures = [dataclasses.replace(r.failure, function=name) for r in results if r.failure is not None]
    return Reports(reports, failures=failures, function=name, args=str(example.specs), show=list(show),
                   compiled_via="source", targets=[t.name for t in targets], display=display_of(example.view_options()))


def analyze(fn: Callable[..., Any], *args: Any, targets: str | Sequence[str] | None = None,
            static: str | Mapping[str, Any] | None = None, donate_argnums: int | Sequence[int] | None = None,
            donate_argnames: str | Sequence[str] | None = None, xla_flags: str | Mapping[str, Any] | None = None,
            timeout: float | None = None, cache_dir: str | os.PathLike[str] | None = None,
            show: Sequence[str] | str | None = None, fn_kwargs: Mapping[str, Any] | None = None,
            mesh: Any = None, grad: str | int | Sequence[str | int] | None = None,
            sweep: str | Mapping[str, Any] | None = None, bisect: int | None = None,
            chunk: str | None = None, findings: str | Sequence[str] | None = None, rows: int | str | None = None,
            **kwargs: Any) -> Reports | SweepReports:
    r"""Compile ``fn`` for each target from argument shapes, never running it,
    and report what XLA made of it.

    Example::

        import jax, jax.numpy as jnp
        import sphinx_jaxhlo

        def with_dot(pos, hkl):
            return jnp.sum(jax.vmap(lambda p: jnp.cos(jnp.dot(hkl, p)))(pos), axis=0)

        reports = sphinx_jaxhlo.analyze(with_dot, "f32[100000,3]", "f32[50000,3]")
        print(reports)                                   # a table per target
        reports.check(materialized="gpu:h100=f32[50000,100000]")

    :param fn: the function: a Python function, a ``jax.jit`` of one (its
        static arguments and donations are kept), a lambda, a closure, a
        ``functools.partial``...; it is sent to the compile worker pickled
        (by value when it comes from ``__main__`` or a notebook, by reference
        when it comes from an importable module).
    :param args: one per positional argument: a ``jax.ShapeDtypeStruct`` (or
        anything with ``shape`` and ``dtype``, e.g. an array: only its shape
        and dtype are used), a spec string such as ``"f32[100000,3]"`` or
        ``"key<fry>[]"``, a pytree of those, or a Python value for a static
        argument of a jitted ``fn``.
    :param kwargs: keyword arguments of ``fn``, likewise.
    :param fn_kwargs: keyword arguments of ``fn`` whose names are options of
        ``analyze`` itself (``timeout``, ``targets``...).
    :param targets: target names, a list or a comma string
        (``"cpu, gpu:h100"``); default: ``cpu, gpu:h100, tpu:v5e``, those
        whose compiler is installed.
    :param static: static arguments by name, ``{"chunk": 1000}`` (any Python
        value that pickles) or ``"chunk=1000"``.
    :param donate_argnums: positional arguments to donate, as for ``jax.jit``.
    :param donate_argnames: keyword arguments to donate, as for ``jax.jit``.
    :param xla_flags: compiler options for ``compile()``, ``{"name": "value"}``.
    :param timeout: seconds one compile may take before its worker is stopped; ``None`` (the
        default): the directive's rule, a limit per target with one retry on a fresh worker
        (``jaxhlo_timeout``).
    :param cache_dir: cache reports in this folder (see
        :func:`~sphinx_jaxhlo.api.functions.default_cache_dir`), keyed by what the
        function lowers to; ``None`` (the default): no cache.
    :param show: the parts ``str()`` and the HTML show; default
        ``summary, memory, hlo``.
    :param mesh: for a target of several devices (``gpu:h100x8``,
        ``tpu:v5e-8``...), the mesh to lay the arguments over:
        ``"data=4, model=2"``, a ``{name: size}`` dict or a
        ``jax.sharding.Mesh`` (only its axis names and sizes are used).
        Default: the mesh of the arguments' ``NamedSharding``\ s, whatever
        devices it was made of; their partition specs are kept, the axes
        matched by name.  On a target of one device the axes have size 1.
    :param grad: also compile the gradient of ``fn`` with respect to these
        arguments (names or positions: ``"hkl"``, ``1``, ``["pos", "hkl"]``), as
        the function ``<name>_grad`` on every target: ``jax.value_and_grad`` for
        a scalar output, a ``vjp`` with a cotangent of ones otherwise (the
        directive's ``:grad:``).  Its reports follow the function's.
    :param sweep: compile at many sizes: spec strings may name sizes by symbols
        (``"f32[n,3]"``), and ``sweep`` gives their values, as the directive's ``:sweep:``
        (``"n=1000..100000"``) or a dict (``{"n": [1000, 4096, 5000]}``); a symbol no
        spec names is a static argument of that name.  Returns a
        :class:`~sphinx_jaxhlo.SweepReports`: each point's reports and the flips.
    :param bisect: with ``sweep``, the most sizes to compile between neighbours whose
        decisions differ, to locate each flip exactly (0: none); default 48. Each is an
        ordinary compile of the one function on the one target.
    :param chunk: not for a function object: a ``:chunk:`` variant is written into the
        example's source and checked there; refused with where to ask for it
        (:func:`analyze_source`, ``sphinx_jaxhlo.chunked``).
    :param findings: the kinds of findings the text and the JSON report, as the directive's
        ``:findings:`` (``"memory"``, ``["memory", "peak"]``, ``"all"``, ``"none"``); default: all.
    :param rows: rows per detail table in the text, largest first (a number, or ``"all"``), as
        the directive's ``:rows:``; default 8.
    :return: one report per target (and per target for the gradient); a target that produced no report (a
        timeout, a crash, a lowering this platform lacks) is listed in
        ``Reports.failures`` and fails :meth:`Reports.check`.
    :raises ValueError: a malformed spec or option, an unknown target or one
        whose compiler is not installed.
    :raises TypeError: a bad option type, or an option that is also a
        parameter of ``fn`` (pass that one in ``fn_kwargs``).
    :raises AnalysisError: no target produced a report (the function could
        not be traced with these arguments, ...).
    """
    name = _function_name(fn)
    if _inside_worker():
        return Reports([], function=name, notes=[
            "Not compiled: analyze() was called by a file that the compile worker is running."])
    if not callable(fn):
        raise TypeError(f"analyze() needs a function, not {type(fn).__name__}")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))):
        raise TypeError(f"timeout must be a number of seconds, not {type(timeout).__name__}")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"timeout: {timeout!r} is not a positive number of seconds")
    _check_collisions(fn, locals())
    _check_spec_list(fn, args, kwargs)
    if chunk is not None:
        raise OptionProblem("chunk", f"{PYTHON('chunk')} {chunk!r}: analyze() compiles the function object, and a "
                                     "chunked variant is made from the example's source and checked there: give "
                                     f"the source to analyze_source(..., chunk={chunk!r}), or compile "
                                     "sphinx_jaxhlo.chunked(fn, ...) itself")
    display = display_of(dict(parse_view(given_view(findings=findings, rows=rows), PYTHON)))
    target_list = resolve_targets(targets)
    static_values = _static_values(static)
    flags = tuple(sorted(dict(parse_xla_flags(xla_flags, PYTHON)).items()))
    parts = _show(show)
    nums = _int_tuple(donate_argnums, "donate_argnums")
    names = _str_tuple(donate_argnames, "donate_argnames")
    all_kwargs = {**kwargs, **dict(fn_kwargs or {})}
    grad = _grad(grad)
    if bisect is not None and sweep is None:
        raise OptionProblem("option", f"{PYTHON('bisect')} {bisect}: bisection locates the flips of a sweep; it "
                                      f"needs {PYTHON('sweep')}")
    if sweep is not None:  # each point an ordinary call of this function
        budget = DEFAULT_BUDGET if bisect is None else _budget(bisect)
        return sweep_call(analyze, fn, args, all_kwargs, sweep, static_values, name, [t.name for t in target_list],
                          bisect=budget,
                          targets=targets, donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                          xla_flags=xla_flags, timeout=timeout, cache_dir=cache_dir, show=show, mesh=mesh,
                          grad=grad, findings=findings, rows=rows)
    from sphinx_jaxhlo.compiler.calls import describe_arguments, dumps, make_call, modules_sent_by_value

    call = make_call(fn, args, all_kwargs, static_values, nums, names, mesh=mesh_spec_of(mesh))
    gradients = _gradient_calls(fn, call, grad)
    try:
        import cloudpickle
    except ImportError:  # pragma: no cover - a dependency
        raise RuntimeError("analyze() needs cloudpickle: pip install cloudpickle") from None
    path = _python_path()
    by_value = modules_sent_by_value(fn, path)
    with _pickle_lock:
        for module in by_value:
            cloudpickle.register_pickle_by_value(module)
        try:
            payload = base64.b64encode(dumps(call)).decode()
            grad_payloads = [(grad_name, base64.b64encode(dumps(gradient)).decode())
                             for grad_name, gradient in gradients]
        except Exception as exc:
            raise TypeError(f"cannot send {name} to the compile worker: {type(exc).__name__}: {exc}. Define it "
                            "in a module or a notebook cell, and pass arrays as arguments rather than closing "
                            "over objects that do not pickle.") from exc
        finally:
            for module in by_value:
                cloudpickle.unregister_pickle_by_value(module)
    source, source_name = _file_of(fn)
    extras = tuple(p for p in ("stablehlo", "jaxpr") if p in parts)
    cache = os.fspath(cache_dir) if cache_dir is not None else None
    jobs = [_CallJob(t, CallRequest(payload=payload, function=name, target=t.name, xla_flags=flags, extras=extras,
                                source_name=source_name, source=source, cache_dir=cache),
                 _mesh_failure(t, call.mesh, name)) for t in target_list]
    for grad_name, grad_payload in grad_payloads:
        jobs += [_CallJob(t, CallRequest(payload=grad_payload, function=grad_name, target=t.name, xla_flags=flags,
                                         extras=extras, source_name=source_name, source=source, cache_dir=cache),
                          _mesh_failure(t, call.mesh, grad_name), grad_name) for t in target_list]
    reports, failures = _run_calls(jobs, name, timeout, path)
    described, dropped = describe_arguments(call)
    notes = []
    if dropped and all(t.device_count == 1 for t in target_list):
        notes.append("The arguments' shardings were not used: every target here is a single device.")
    return _finish(reports, failures, target_list, name, described, parts, "function", notes, display=display)


def _check_collisions(fn: Any, given: Mapping[str, Any]) -> None:
    """An option of ``analyze`` passed by the caller that is also a parameter
    of ``fn`` is ambiguous: say how to pass it to ``fn``."""
    try:
        params = set(inspect.signature(_underlying(fn)).parameters)
    except (TypeError, ValueError):
        return
    defaults = {"targets": None, "static": None, "donate_argnums": None, "donate_argnames": None,
                "xla_flags": None, "timeout": None, "cache_dir": None, "show": None, "mesh": None, "grad": None,
                "sweep": None, "bisect": None, "chunk": None, "findings": None, "rows": None}
    clash = sorted(o for o in params & set(defaults) if given.get(o) is not defaults[o])
    if clash:
        raise TypeError(f"analyze(): {', '.join(map(repr, clash))} is an option of analyze() and also a parameter "
                        f"of {_function_name(fn)}; analyze() took it as its own option. Pass the function's "
                        f"through fn_kwargs={{{clash[0]!r}: ...}}.")


def _check_spec_list(fn: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """Specs given as one list (``analyze(f, ["f32[100,3]", "f32[100,3]"])``, or ``args=[...]``) where
    ``fn`` takes them as separate arguments: say how to pass them.

    :raises TypeError: naming the fix.
    """
    try:
        params = list(inspect.signature(_underlying(fn)).parameters.values())
    except (TypeError, ValueError):
        return
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p.name for p in positional if p.default is p.empty]
    name = _function_name(fn)
    listed = kwargs.get("args") if "args" in kwargs and all(p.name != "args" for p in params) else None
    if listed is None and len(args) == 1 and len(required) > 1 and isinstance(args[0], (list, tuple)) \
            and len(required) <= len(args[0]) <= len(positional):
        listed = args[0]
    if isinstance(listed, (list, tuple)):
        raise TypeError(f"analyze(): the argument specs were given as one list, {listed!r}, but {name}() takes "
                        f"{len(required)} positional arguments ({', '.join(required)}): pass one spec per argument, "
                        f"analyze({name}, *specs)")


def _gradient_calls(fn: Any, call: Any, grad: str | int | Sequence[str | int] | None) -> list[tuple[str, Any]]:
    """The calls of ``fn``'s gradient variants (:func:`sphinx_jaxhlo.gradient.calls.gradient_calls`)."""
    if grad is None:
        return []
    from sphinx_jaxhlo.gradient.calls import gradient_calls

    try:
        params = list(inspect.signature(_underlying(fn)).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)] if params \
        else None
    return gradient_calls(_function_name(fn), call, grad, positional)


def _mesh_failure(target: targets_mod.Target, mesh: MeshSpec | None, function: str) -> TargetFailure | None:
    """A target the mesh does not fit: it gets no request."""
    problem = targets_mod.mesh_problem(target, mesh)
    return None if problem is None else TargetFailure(target.name, function, "args", problem)
