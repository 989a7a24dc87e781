"""The Python API: analyze a function from a notebook, a script or a test suite.

:func:`analyze` compiles a function for each target, from argument shapes,
without running it, and returns :class:`Reports`: one
:class:`~sphinx_jaxhlo.report.Report` per target that prints as a text table,
shows as the directive's HTML in Jupyter, round-trips through JSON and checks
expectations (:meth:`Reports.check`).  :func:`analyze_source` does the same
for the source text of a module (what the command line and the directive
compile); :func:`analyze_hlo` reads a saved optimized HLO module.

How a function reaches the compiler (``compile_via``):

``"source"``
    The function is defined at the top level of a ``.py`` file: the compile
    worker runs that file's source (as the directive runs an example) and
    compiles the function by name.  The report is exactly the one the
    directive and the command line give for that file, cache key included.
``"export"``
    Anything else (a function from a notebook cell or ``__main__`` without a
    file, a lambda, a closure, a ``functools.partial``, arguments that are
    other pytrees, dtypes the specs cannot write, non-literal static values):
    the function is traced and lowered here with :mod:`jax.export`, once per
    platform, and the compile worker compiles the lowered module.  Tracing
    here means this process's jax settings apply (``jax_enable_x64``...); the
    compiler still runs in the worker, deviceless, for every target.
``"auto"`` (the default)
    ``"source"`` when possible, else ``"export"``; also ``"export"`` when the
    worker cannot run the file on its own (a relative import, say).

Nothing in this module imports jax until ``"export"`` needs it.
"""

from __future__ import annotations

import ast
import atexit
import base64
import dataclasses
import functools
import inspect
import json
import linecache
import os
import pickle
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from . import expectations as exp
from . import targets as targets_mod
from .cache import ReportCache, is_deterministic
from .compiler import CompileWorker
from .options import parse_assignments
from .report import SCHEMA_VERSION, Report, TargetFailure
from .request import SHOW_PARTS, CompileRequest, installed_versions
from .specs import DTYPES, ArgSpecs, ArraySpec, SpecTree, parse_args

__all__ = [
    "DEFAULT_SHOW",
    "AnalysisError",
    "Reports",
    "TargetFailure",
    "analyze",
    "analyze_hlo",
    "analyze_source",
    "default_cache_dir",
]

#: Parts :class:`Reports` shows unless told otherwise (``source`` is left out:
#: a notebook cell or a test already shows it).
DEFAULT_SHOW: tuple[str, ...] = ("summary", "memory", "hlo")

#: Parts ``str()`` shows by default (the module texts are long).
_SHORT_PARTS = ("summary", "memory", "cost")

#: Worker failures that mean "this file cannot run on its own in the worker"
#: rather than "this function is wrong": ``"auto"`` then retries through export.
_FALLBACK_KINDS = frozenset({"example", "function", "syntax", "empty"})

#: numpy dtype name -> spec dtype name (``float32`` -> ``f32``).
_SPEC_DTYPES: dict[str, str] = {}
for _name, (_np_name, _size) in DTYPES.items():
    _SPEC_DTYPES.setdefault(_np_name, _name)

#: Dtypes narrower than a byte: they cannot be passed as bytes.
_SUB_BYTE = frozenset({"int2", "uint2", "int4", "uint4", "float4_e2m1fn"})

_REPORTS_FORMAT = "sphinx-jaxhlo reports"


class AnalysisError(RuntimeError):
    """No target produced a report: the function could not be traced, the
    worker could not run its file, every compile timed out...

    Its ``failures`` say what happened on each target.
    """

    def __init__(self, message: str, failures: Sequence[TargetFailure] = ()) -> None:
        super().__init__(message)
        self.failures = list(failures)


# -- Reports -----------------------------------------------------------------------------------


class Reports(Sequence[Report]):
    """The reports of one function, one per target, in target order.

    A sequence of ``Report`` objects (``sphinx_jaxhlo.report.Report``, whose
    JSON form the report reference describes); ``reports["gpu:h100"]`` picks
    one by target name.  ``str()`` gives a text table, Jupyter shows
    :meth:`_repr_html_`, :meth:`to_json` / :meth:`from_json` round-trip, and
    :meth:`check` asserts expectations.  The attributes ``failures``,
    ``function``, ``args``, ``show``, ``compiled_via`` and ``notes`` hold the
    parameters below.

    :param reports: the reports.
    :param failures: targets that produced no report.
    :param function: the function's name, for titles.
    :param args: the argument specs as text, for titles.
    :param show: parts ``str()`` and :meth:`_repr_html_` show, among those of
        the directive's ``:show:`` (``sphinx_jaxhlo.request.SHOW_PARTS``).
    :param compiled_via: ``"source"``, ``"export"`` or ``""`` (not compiled here).
    :param notes: sentences shown under the reports.
    :param targets: the target order; default: reports, then failures.
    """

    def __init__(self, reports: Iterable[Report] = (), *, failures: Iterable[TargetFailure] = (),
                 function: str = "", args: str = "", show: Sequence[str] = DEFAULT_SHOW,
                 compiled_via: str = "", notes: Iterable[str] = (), targets: Sequence[str] | None = None) -> None:
        self._reports = list(reports)
        self.failures: list[TargetFailure] = list(failures)
        self.function = function or next((r.function for r in self._reports), "")
        self.args = args
        self.show: list[str] = list(show)
        self.compiled_via = compiled_via
        self.notes: list[str] = list(notes)
        known = [r.target for r in self._reports] + [f.target for f in self.failures]
        order = [t for t in (targets or ()) if t in known]
        self._order = order + [t for t in known if t not in order]

    # -- sequence ---------------------------------------------------------------------------

    @overload
    def __getitem__(self, index: int) -> Report: ...

    @overload
    def __getitem__(self, index: slice) -> list[Report]: ...

    @overload
    def __getitem__(self, index: str) -> Report: ...

    def __getitem__(self, index: int | slice | str) -> Report | list[Report]:
        if isinstance(index, str):
            key = index.strip().lower()
            for r in self._reports:
                if r.target == key:
                    return r
            failed = next((f for f in self.failures if f.target == key), None)
            if failed is not None:
                raise KeyError(f"{key}: {failed.describe()}")
            raise KeyError(f"no report for target {index!r} (targets: {', '.join(self._order) or 'none'})")
        return self._reports[index]

    def __len__(self) -> int:
        return len(self._reports)

    def __iter__(self) -> Iterator[Report]:
        return iter(self._reports)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Reports):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    @property
    def targets(self) -> list[str]:
        """Every target asked for, in order, whether it produced a report or not."""
        return list(self._order)

    def get(self, target: str) -> Report | None:
        """The report for ``target``, or ``None``."""
        try:
            return self[target]
        except KeyError:
            return None

    # -- display ----------------------------------------------------------------------------

    @property
    def title(self) -> str:
        return f"{self.function}({self.args})" if self.args else self.function

    def to_text(self, show: Sequence[str] | None = None) -> str:
        """The text ``str()`` gives: the comparison table, then per target
        the parts of ``show`` that are short (``summary``, ``memory``,
        ``cost``); name parts to get others (``hlo``, ``source``...)."""
        from .render.text import render_text

        parts = list(show) if show is not None else [p for p in self.show if p in _SHORT_PARTS]
        return render_text(self._reports, self.failures, show=parts, title=self.title,
                           notes=self.notes, order=self._order)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        parts = [f"{r.target}: {'error ' + r.error.status if r.error else 'ok'}" for r in self._reports]
        parts += [f"{f.target}: no report ({f.kind})" for f in self.failures]
        return f"<Reports {self.title or '(empty)'}: {', '.join(parts) or 'no targets'}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython's text display
        printer.text(repr(self) if cycle else self.to_text().rstrip("\n"))

    def to_html(self, show: Sequence[str] | None = None, *, full_page: bool = False, script: bool = True) -> str:
        """The directive's rendering as self-contained HTML (inline CSS and tab script).

        :param show: parts to show; default: the ``show`` attribute.
        :param full_page: a whole HTML document rather than a fragment.
        :param script: include the small script that makes target tabs; without
            it every target's panel shows, one after the other.
        """
        from .render.standalone_html import render_html

        return render_html(self._reports, self.failures,
                           show=list(show if show is not None else self.show), function=self.function,
                           args=self.args, notes=self.notes, order=self._order, script=script,
                           full_page=full_page)

    def _repr_html_(self) -> str:
        return self.to_html()

    # -- JSON -------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": _REPORTS_FORMAT,
            "schema_version": SCHEMA_VERSION,
            "function": self.function,
            "args": self.args,
            "show": list(self.show),
            "compiled_via": self.compiled_via,
            "notes": list(self.notes),
            "targets": list(self._order),
            "reports": [r.to_dict() for r in self._reports],
            "failures": [dataclasses.asdict(f) for f in self.failures],
        }

    def to_json(self, indent: int | None = None) -> str:
        """The reports as JSON: ``{"reports": [<Report JSON>...], "failures": [...], ...}``."""
        return json.dumps(self.to_dict(), sort_keys=True, indent=indent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reports:
        """Rebuild from :meth:`to_dict`; raises ``ValueError`` on anything else."""
        if not isinstance(data, Mapping) or not isinstance(data.get("reports"), list):
            raise ValueError("not a sphinx-jaxhlo reports document (no 'reports' list)")
        if data.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"reports schema {data.get('schema_version')!r}, expected {SCHEMA_VERSION}")
        try:
            failures = [TargetFailure(**f) for f in data.get("failures") or []]
        except TypeError as exc:
            raise ValueError(f"malformed failure: {exc}") from exc
        return cls([Report.from_dict(r) for r in data["reports"]], failures=failures,
                   function=str(data.get("function", "")), args=str(data.get("args", "")),
                   show=list(data.get("show") or DEFAULT_SHOW), compiled_via=str(data.get("compiled_via", "")),
                   notes=list(data.get("notes") or []), targets=list(data.get("targets") or []))

    @classmethod
    def from_json(cls, text: str) -> Reports:
        """Rebuild from :meth:`to_json` (or the command line's ``--json``)."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"malformed reports JSON: {exc}") from exc
        return cls.from_dict(data)

    # -- expectations -----------------------------------------------------------------------

    def evaluate(self, *, max_temp: Any = None, min_temp: Any = None, max_peak: Any = None, reduction: Any = None,
                 materialized: Any = None, error: Any = None) -> tuple[list[exp.Outcome], list[str]]:
        """Check expectations without raising.

        :return: ``(outcomes, problems)``: one outcome per (expectation,
            target), and every reason the check fails, in words (failed
            outcomes, targets without a report, unexpected compile errors,
            expectations for targets that were not compiled).
        :raises ValueError: a malformed expectation or an unknown target name.
        """
        options: dict[str, str] = {}
        for kind, value in (("max-temp", max_temp), ("min-temp", min_temp), ("max-peak", max_peak),
                            ("reduction", reduction), ("materialized", materialized), ("error", error)):
            if value is not None:
                options[f"expect-{kind}"] = _expectation_text(value)
        return self.evaluate_options(options)

    def evaluate_options(self, options: Mapping[str, str]) -> tuple[list[exp.Outcome], list[str]]:
        """:meth:`evaluate` with the directive's option names as keys
        (``{"expect-max-temp": "cpu=25GB"}``), as the command line has them."""
        expectations = exp.parse_expectations(dict(options))
        named = expectations.targets_named()
        unknown = sorted(t for t in named if t not in targets_mod.TARGETS and t not in self._order)
        if unknown:
            raise ValueError(f"expectation names unknown target {', '.join(map(repr, unknown))} "
                             f"(known: {', '.join(targets_mod.TARGETS)})")
        name = self.function or "(function)"
        problems = [f"{name}: an expectation names {t}, which was not compiled "
                    f"(compiled: {', '.join(self._order) or 'nothing'})" for t in sorted(named - set(self._order))]
        functions = {r.function for r in self._reports} | {f.function for f in self.failures} | {self.function}
        problems += [f"an expectation names function {f!r}; these reports are of {name}"
                     for f in sorted(expectations.functions_named() - functions)]
        outcomes = exp.check_all(expectations, self._reports)
        failed = [o for o in outcomes if not o.passed]
        failed_targets = {o.target for o in failed}
        order = {t: i for i, t in enumerate(self._order)}
        for target in sorted(set(self._order), key=order.__getitem__):
            failure = next((f for f in self.failures if f.target == target), None)
            if failure is not None:
                problems.append(failure.describe())
                continue
            report = self.get(target)
            if report is not None and report.error is not None and target not in failed_targets \
                    and not expectations.expects_error(target, report.function):
                first = report.error.message.strip().splitlines()[0] if report.error.message.strip() else ""
                problems.append(f"{report.function} on {target}: compilation failed with {report.error.status}"
                                + (f": {first[:300]}" if first else ""))
            problems += [o.message for o in failed if o.target == target]
        return outcomes, problems

    def check(self, *, max_temp: Any = None, min_temp: Any = None, max_peak: Any = None, reduction: Any = None,
              materialized: Any = None, error: Any = None) -> Reports:
        """Assert what the compiler did, for test suites.

        Each value is what the directive's ``:expect-*:`` option takes: a bare
        value for every target, or ``target=value`` pairs
        (``"cpu=25GB, gpu:h100=64MiB"``), or a ``{target: value}`` dict; sizes
        may also be ints (bytes).

        :param max_temp: temp memory at most this (``"64MiB"``, ``"10GB"``, ``0``).
        :param min_temp: temp memory at least this.
        :param max_peak: peak memory (arguments, output and temporaries live at
            once) at most this.
        :param reduction: ``"fused"`` or ``"unfused"``: every reduction is so.
        :param materialized: a shape such as ``"f32[50000,100000]"`` that is
            materialized, or ``"none"``: nothing is.
        :param error: the compile must fail with this status (``"RESOURCE_EXHAUSTED"``)
            or message fragment; ``"none"``: it must not fail.
        :return: ``self``, so ``analyze(...).check(...)`` can be printed.
        :raises AssertionError: listing, per target, what was expected and what
            was found.  Also when a target produced no report, when a compile
            failed without ``error=``, or when an expectation names a target
            that was not compiled.
        :raises ValueError: a malformed expectation or unknown target name.
        """
        outcomes, problems = self.evaluate(max_temp=max_temp, min_temp=min_temp, max_peak=max_peak,
                                           reduction=reduction, materialized=materialized, error=error)
        if problems:
            held = sum(o.passed for o in outcomes)
            lines = [f"jax-hlo check failed for {self.title or '(function)'}:"]
            lines += [f"  - {p}" for p in problems]
            if held:
                lines.append(f"  ({held} other expectation(s) held)")
            raise AssertionError("\n".join(lines))
        return self


def _expectation_text(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_expectation_text(v)}" for k, v in value.items())
    if isinstance(value, bool):
        raise ValueError(f"expected a size, a word or a shape, not {value!r}")
    return str(value)


# -- the compile worker of this process -------------------------------------------------------


class _Worker(CompileWorker):
    """A compile worker that sees this process's ``sys.path`` (``PYTHONPATH``),
    so a file compiled by source finds what it imports."""

    def __init__(self, pythonpath: tuple[str, ...]) -> None:
        saved = os.environ.get("PYTHONPATH")
        env = {"PYTHONPATH": os.pathsep.join([*pythonpath, *([saved] if saved else [])])} if pythonpath else {}
        super().__init__(env)
        self.pythonpath = pythonpath


_worker: _Worker | None = None
_worker_lock = threading.Lock()


def _python_path(extra: Sequence[str] = ()) -> tuple[str, ...]:
    out: list[str] = []
    for entry in [*extra, *sys.path]:
        path = os.path.abspath(entry or os.getcwd())
        if path not in out and os.path.isdir(path):
            out.append(path)
    return tuple(out)


def _get_worker(pythonpath: tuple[str, ...] | None) -> _Worker:
    """This process's API worker; restarted when it lacks a folder of the
    path it needs (``None``: any path will do)."""
    global _worker
    with _worker_lock:
        current = _worker
        if current is not None and current._pid == os.getpid() and (
                pythonpath is None or set(pythonpath) <= set(current.pythonpath)):
            return current
        if current is not None and current._pid == os.getpid():
            current.close()
        _worker = _Worker(pythonpath if pythonpath is not None else _python_path())
        return _worker


@atexit.register
def _shutdown() -> None:
    worker = _worker
    if worker is not None and worker._pid == os.getpid():
        worker.close()


def _inside_worker() -> bool:
    """True in a compile worker: a file compiled by source that calls
    :func:`analyze` at its top level must not start workers of its own."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return getattr(spec, "name", "") == "sphinx_jaxhlo.worker"


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


def _static_pairs(static: str | Mapping[str, Any] | None) -> tuple[tuple[tuple[str, str], ...] | None, dict[str, Any]]:
    """``(pairs as literal text or None when a value is no literal, values)``."""
    if static is None:
        return (), {}
    if isinstance(static, str):
        pairs = parse_assignments(static, "static")
        values: dict[str, Any] = {}
        for key, text in pairs:
            try:
                values[key] = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                raise ValueError(f"static: {key}={text} is not a Python literal") from None
        return tuple(pairs), values
    values = dict(static)
    for key in values:
        if not isinstance(key, str) or not key.isidentifier():
            raise ValueError(f"static: {key!r} is not an argument name")
    literal: list[tuple[str, str]] = []
    for key, value in values.items():
        text = repr(value)
        try:
            same = ast.literal_eval(text) == value and type(ast.literal_eval(text)) is type(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            same = False
        if not same:
            return None, values
        literal.append((key, text))
    return tuple(literal), values


def _xla_flags(flags: str | Mapping[str, Any] | None) -> tuple[tuple[str, str], ...]:
    if flags is None:
        return ()
    if isinstance(flags, str):
        pairs = parse_assignments(flags, "xla_flags")
    else:
        pairs = [(str(k), ("true" if v else "false") if isinstance(v, bool) else str(v)) for k, v in flags.items()]
    return tuple(sorted(dict(pairs).items()))


def _show(show: Sequence[str] | str | None) -> list[str]:
    if show is None:
        return list(DEFAULT_SHOW)
    parts = [p.strip() for p in show.split(",")] if isinstance(show, str) else [str(p).strip() for p in show]
    parts = [p for p in parts if p]
    unknown = [p for p in parts if p not in SHOW_PARTS]
    if unknown:
        raise ValueError(f"show: unknown part {', '.join(map(repr, unknown))} (known: {', '.join(SHOW_PARTS)})")
    return parts


# -- argument specs ---------------------------------------------------------------------------


class _Inexpressible(Exception):
    """An argument the spec grammar cannot write (handled by export)."""


def _single_spec(text: str) -> SpecTree:
    specs = parse_args(text)
    if len(specs.args) != 1 or specs.kwargs:
        raise ValueError(f"{text!r}: give one spec per argument, such as 'f32[100000,3]'")
    return specs.args[0]


def _is_array_like(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, (str, bytes))


def _dtype_name(dtype: Any) -> str:
    return str(getattr(dtype, "name", dtype))


def _spec_tree(value: Any) -> SpecTree:
    """A spec tree for one argument; raises :class:`_Inexpressible` for what
    only export can pass, ``TypeError`` for what is no argument shape at all."""
    if isinstance(value, str):
        return _single_spec(value)
    if _is_array_like(value):
        name = _SPEC_DTYPES.get(_dtype_name(value.dtype))
        if name is None:
            raise _Inexpressible(f"dtype {_dtype_name(value.dtype)}")
        try:
            shape = tuple(int(d) for d in value.shape)
        except TypeError:
            raise TypeError(f"shape {value.shape!r} is not a tuple of integers") from None
        return ArraySpec(name, shape)
    if type(value) is tuple:
        return tuple(_spec_tree(v) for v in value)
    if type(value) is list:
        return [_spec_tree(v) for v in value]
    if type(value) is dict and all(isinstance(k, str) and k.isidentifier() for k in value):
        return {k: _spec_tree(v) for k, v in value.items()}
    raise _Inexpressible(type(value).__name__)


def _arg_specs(args: Sequence[Any], kwargs: Mapping[str, Any]) -> ArgSpecs | None:
    """The specs, or ``None`` when only export can pass these arguments."""
    try:
        return ArgSpecs(tuple(_spec_tree(a) for a in args), tuple((k, _spec_tree(v)) for k, v in kwargs.items()))
    except _Inexpressible:
        return None


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


def _module_source(fn: Any) -> tuple[str, str, str] | str:
    """``(source, file name, path)`` of the file ``fn`` is a top-level
    function of, or why there is none."""
    if isinstance(fn, functools.partial):
        return "it is a functools.partial"
    func = _underlying(fn)
    if not inspect.isfunction(func):
        return f"it is a {type(func).__name__}, not a Python function"
    name = func.__name__
    if name != func.__qualname__ or not name.isidentifier():
        return f"{func.__qualname__} is not defined at the top level of its module"
    module = sys.modules.get(func.__module__)
    path = getattr(module, "__file__", None)
    if module is None or not path or not str(path).endswith(".py") or not os.path.isfile(path):
        return "its module has no .py file (a notebook, an interactive session, exec)"
    try:
        defined_in = inspect.getsourcefile(func)
    except TypeError:
        defined_in = None
    if not defined_in or os.path.realpath(defined_in) != os.path.realpath(path):
        return f"{name} was not defined by the file of its module"
    if getattr(module, name, None) is not fn:
        return f"{module.__name__}.{name} is not the function given"
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError) as exc:
        return f"the source of {path} cannot be read ({exc})"
    return source, os.path.basename(path), str(path)


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
class _Job:
    target: targets_mod.Target
    request: CompileRequest | None
    failure: TargetFailure | None = None


def _run_jobs(jobs: Sequence[_Job], function: str, timeout: float, cache: ReportCache | None,
              pythonpath: tuple[str, ...] | None, progress: Callable[[str], None] | None,
              stop_on: frozenset[str] = frozenset()) -> tuple[list[Report], list[TargetFailure], bool]:
    """Compile each job (cache first).

    :return: ``(reports, failures, stopped)``; ``stopped`` when the first
        target failed with a kind in ``stop_on`` and the rest was not tried.
    """
    reports: list[Report] = []
    failures: list[TargetFailure] = []
    for i, job in enumerate(jobs):
        if job.failure is not None or job.request is None:
            failures.append(job.failure or TargetFailure(job.target.name, function, "trace", "not lowered"))
            continue
        key = job.request.cache_key()
        report = cache.get(key) if cache is not None else None
        if report is not None:
            if progress:
                progress(f"{function} for {job.target.name}: from the cache")
            reports.append(report)
            continue
        if progress:
            progress(f"compiling {function} for {job.target.name}...")
        outcome = _get_worker(pythonpath).compile(job.request, timeout)
        if outcome.report is not None:
            if progress:
                progress(f"compiled {function} for {job.target.name} in {outcome.seconds:.2f} s")
            if cache is not None and is_deterministic(outcome.report):
                cache.put(key, outcome.report)
            reports.append(outcome.report)
            continue
        assert outcome.failure is not None
        f = outcome.failure
        failure = TargetFailure(job.target.name, function, f.kind, f.message, f.line)
        if progress:
            progress(f"failed: {failure.describe()}")
        if i == 0 and f.kind in stop_on:
            return reports, [failure], True
        failures.append(failure)
    return reports, failures, False


def _finish(reports: list[Report], failures: list[TargetFailure], targets: Sequence[targets_mod.Target],
            function: str, args: str, show: Sequence[str], via: str, notes: Sequence[str],
            cause: BaseException | None = None) -> Reports:
    result = Reports(reports, failures=failures, function=function, args=args, show=show, compiled_via=via,
                     notes=notes, targets=[t.name for t in targets])
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
                   xla_flags: str | Mapping[str, Any] | None = None, timeout: float = 120,
                   source_name: str = "example.py", show: Sequence[str] | str | None = None,
                   cache_dir: str | os.PathLike[str] | None = None, pythonpath: Sequence[str] = ()) -> Reports:
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
    :param timeout: seconds one compile may take before its worker is stopped.
    :param source_name: the file name the source is compiled under (source
        lines are mapped through it).
    :param show: parts the result shows (``stablehlo`` and ``jaxpr`` are only
        produced when asked for here).
    :param cache_dir: a folder to cache reports in; ``None``: no cache.
    :param pythonpath: folders the worker should import from, besides this
        process's ``sys.path``.
    :raises ValueError: bad specs, options or targets.
    :raises AnalysisError: when no target produced a report.
    """
    reports = _compile_source(source, function, args, targets=targets, static=static, xla_flags=xla_flags,
                              timeout=timeout, source_name=source_name, show=show, cache_dir=cache_dir,
                              pythonpath=pythonpath)
    return _raise_if_empty(reports)


def _compile_source(source: str, function: str | None, args: str | ArgSpecs, *,
                    targets: str | Sequence[str] | None, static: str | Mapping[str, Any] | None,
                    xla_flags: str | Mapping[str, Any] | None, timeout: float, source_name: str,
                    show: Sequence[str] | str | None, cache_dir: str | os.PathLike[str] | None,
                    pythonpath: Sequence[str] = (), progress: Callable[[str], None] | None = None) -> Reports:
    """:func:`analyze_source` without raising when no target produced a report."""
    specs = parse_args(args) if isinstance(args, str) else args
    target_list = resolve_targets(targets)
    pairs, _values = _static_pairs(static)
    if pairs is None:  # a Mapping with non-literal values
        raise ValueError("static: values must be Python literals to be compiled from source")
    if timeout <= 0:
        raise ValueError("timeout must be positive")
    parts = _show(show)
    extras = tuple(p for p in ("stablehlo", "jaxpr") if p in parts)
    flags = _xla_flags(xla_flags)
    versions = installed_versions()
    jobs = [_Job(t, CompileRequest(source=source, function=function or "", specs=specs, target=t.name,
                                   static=pairs, xla_flags=flags, extras=extras, source_name=source_name,
                                   target_fingerprint=t.fingerprint(), versions=versions)) for t in target_list]
    name = function or "(default function)"
    reports, failures, _ = _run_jobs(jobs, name, timeout, _cache(cache_dir), _python_path(pythonpath), progress)
    name = next((r.function for r in reports), name)
    failures = [dataclasses.replace(f, function=name) for f in failures]
    return Reports(reports, failures=failures, function=name, args=str(specs), show=parts, compiled_via="source",
                   targets=[t.name for t in target_list])


def analyze(fn: Callable[..., Any], *args: Any, targets: str | Sequence[str] | None = None,
            static: str | Mapping[str, Any] | None = None, xla_flags: str | Mapping[str, Any] | None = None,
            timeout: float = 120, cache_dir: str | os.PathLike[str] | None = None,
            compile_via: str = "auto", show: Sequence[str] | str | None = None, **kwargs: Any) -> Reports:
    """Compile ``fn`` for each target from argument shapes, never running it,
    and report what XLA made of it.

    Example::

        import jax, jax.numpy as jnp
        import sphinx_jaxhlo

        def with_dot(pos, hkl):
            return jnp.sum(jax.vmap(lambda p: jnp.cos(jnp.dot(hkl, p)))(pos), axis=0)

        reports = sphinx_jaxhlo.analyze(with_dot, "f32[100000,3]", "f32[50000,3]")
        print(reports)                                   # a table per target
        reports.check(materialized="gpu:h100=f32[50000,100000]")

    :param fn: the function: a Python function, a ``jax.jit`` of one, a lambda,
        a closure, a ``functools.partial``...
    :param args: one per positional argument: a ``jax.ShapeDtypeStruct`` (or
        anything with ``shape`` and ``dtype``, e.g. an array: only its shape
        and dtype are used), a spec string such as ``"f32[100000,3]"``, or a
        pytree of those.
    :param kwargs: keyword arguments of ``fn``, likewise.  (Names of this
        function's own options cannot be passed this way.)
    :param targets: target names, a list or a comma string
        (``"cpu, gpu:h100"``); default: ``cpu, gpu:h100, tpu:v5e``, those
        whose compiler is installed.
    :param static: static arguments by name, ``{"chunk": 1000}`` or ``"chunk=1000"``.
    :param xla_flags: compiler options for ``compile()``, ``{"name": "value"}``.
    :param timeout: seconds one compile may take before its worker is stopped.
    :param cache_dir: cache reports in this folder (see
        :func:`~sphinx_jaxhlo.api.default_cache_dir`); ``None`` (the default): no cache.
    :param compile_via: ``"auto"``, ``"source"`` or ``"export"``: see the
        module documentation.
    :param show: the parts ``str()`` and the HTML show; default
        ``summary, memory, hlo``.
    :return: one report per target; a target that produced no report (a
        timeout, a crash, a lowering this platform lacks) is listed in
        ``Reports.failures`` and fails :meth:`Reports.check`.
    :raises ValueError: a malformed spec or option, an unknown target or one
        whose compiler is not installed.
    :raises TypeError: an argument that is neither a shape nor a spec.
    :raises AnalysisError: no target produced a report (the function could
        not be traced with these arguments, ...).
    """
    name = _function_name(fn)
    if _inside_worker():
        return Reports([], function=name, notes=[
            "Not compiled: analyze() was called by a file that the compile worker is running."])
    if not callable(fn):
        raise TypeError(f"analyze() needs a function, not {type(fn).__name__}")
    if compile_via not in ("auto", "source", "export"):
        raise ValueError(f"compile_via must be 'auto', 'source' or 'export', not {compile_via!r}")
    target_list = resolve_targets(targets)
    pairs, static_values = _static_pairs(static)
    flags = _xla_flags(xla_flags)
    parts = _show(show)
    if timeout <= 0:
        raise ValueError("timeout must be positive")
    specs = _arg_specs(args, kwargs)

    why_not = ""
    if compile_via != "export":
        found = _module_source(fn)
        if isinstance(found, str):
            why_not = found
        elif specs is None:
            why_not = "its arguments cannot be written as specs (pytrees other than tuple, list and dict, " \
                      "or dtypes the specs do not know)"
        elif pairs is None:
            why_not = "a static value is not a Python literal"
        else:
            source, source_name, _path = found
            extras = tuple(p for p in ("stablehlo", "jaxpr") if p in parts)
            versions = installed_versions()
            jobs = [_Job(t, CompileRequest(source=source, function=name, specs=specs, target=t.name, static=pairs,
                                           xla_flags=flags, extras=extras, source_name=source_name,
                                           target_fingerprint=t.fingerprint(), versions=versions))
                    for t in target_list]
            stop_on = _FALLBACK_KINDS if compile_via == "auto" else frozenset()
            reports, failures, stopped = _run_jobs(jobs, name, timeout, _cache(cache_dir),
                                                   _python_path(), None, stop_on)
            if not stopped:
                return _finish(reports, failures, target_list, name, str(specs), parts, "source", [])
            why_not = f"the compile worker could not run {source_name} on its own: {failures[0].message}"
        if compile_via == "source":
            raise ValueError(f"cannot compile {name} from source: {why_not}")
    return _analyze_exported(fn, name, args, kwargs, static_values, flags, target_list, timeout, cache_dir,
                             parts, why_not)


_EXPORT_SOURCE = '''\
# Generated by sphinx_jaxhlo.analyze(): {name} was traced and lowered for {platform} with
# jax.export in the calling process; the compile worker compiles the lowered module.
import base64 as _jaxhlo_base64
import pickle as _jaxhlo_pickle

_jaxhlo_exported = _jaxhlo_pickle.loads(_jaxhlo_base64.b64decode({blob!r}))
globals()[{name!r}] = _jaxhlo_exported.call
'''


def _analyze_exported(fn: Callable[..., Any], name: str, args: Sequence[Any], kwargs: Mapping[str, Any],
                      static: Mapping[str, Any], flags: tuple[tuple[str, str], ...],
                      target_list: Sequence[targets_mod.Target], timeout: float,
                      cache_dir: str | os.PathLike[str] | None, show: Sequence[str], why: str) -> Reports:
    import jax
    from jax import export

    targets_mod.exclude_own_frames()  # keep this module's frames out of the HLO's source tables

    def is_leaf(x: Any) -> bool:
        return isinstance(x, str) or _is_array_like(x)

    def to_struct(x: Any) -> Any:
        if isinstance(x, str):
            from .specs import to_shape_dtype_structs

            structs, _ = to_shape_dtype_structs(ArgSpecs((_single_spec(x),)))
            return structs[0]
        if _is_array_like(x):
            return jax.ShapeDtypeStruct(tuple(x.shape), x.dtype)
        raise TypeError(f"argument leaf {x!r} of {name} is neither a shape nor a spec: pass a "
                        "jax.ShapeDtypeStruct or a string such as 'f32[3]'; give Python values through static=")

    tree = jax.tree.map(to_struct, (tuple(args), dict(kwargs)), is_leaf=is_leaf)
    leaves, treedef = jax.tree.flatten(tree)
    # What the worker passes: the leaf itself, or bytes of the same size for a
    # dtype the specs do not know (bitcast back inside the lowered function).
    leaf_specs: list[ArraySpec] = []
    shown: list[str] = []
    casts: list[Any] = []
    for leaf in leaves:
        dname = _dtype_name(leaf.dtype)
        spec_name = _SPEC_DTYPES.get(dname)
        if spec_name is None:
            size = int(getattr(leaf.dtype, "itemsize", 0))
            if dname in _SUB_BYTE or size not in (1, 2, 4, 8):
                raise TypeError(f"{name}: arguments of dtype {dname} are not supported "
                                f"(supported: {', '.join(sorted(_SPEC_DTYPES))} and other 8/16/32/64-bit types)")
            spec_name = f"u{8 * size}"
            casts.append(leaf.dtype)
        else:
            casts.append(None)
        leaf_specs.append(ArraySpec(spec_name, tuple(int(d) for d in leaf.shape)))
        shown.append(f"{_SPEC_DTYPES.get(dname, dname)}[{','.join(str(int(d)) for d in leaf.shape)}]")
    passed = [jax.ShapeDtypeStruct(s.shape, s.numpy_dtype) for s in leaf_specs]

    def flat(*xs: Any) -> Any:
        xs = tuple(x if cast is None else jax.lax.bitcast_convert_type(x, cast) for x, cast in zip(xs, casts,
                                                                                                   strict=True))
        a, k = jax.tree.unflatten(treedef, xs)
        return jax.tree.leaves(fn(*a, **k, **static))

    flat.__name__ = flat.__qualname__ = name if name.isidentifier() else "fn"
    jitted = jax.jit(flat)
    source, source_name = _file_of(fn)
    specs = ArgSpecs(tuple(leaf_specs))
    versions = installed_versions()
    lowered: dict[str, str | BaseException] = {}
    jobs: list[_Job] = []
    first_error: BaseException | None = None
    for target in target_list:
        if target.platform not in lowered:
            try:
                exported = export.export(jitted, platforms=[target.platform],
                                         disabled_checks=[export.DisabledSafetyCheck.custom_call("ALL")])(*passed)
                blob = base64.b64encode(pickle.dumps(dataclasses.replace(exported, _get_vjp=None))).decode()
                lowered[target.platform] = _EXPORT_SOURCE.format(name=name, platform=target.platform, blob=blob)
            except Exception as exc:
                lowered[target.platform] = exc
                first_error = first_error or exc
        item = lowered[target.platform]
        if isinstance(item, BaseException):
            message = f"{type(item).__name__}: {item}".split("\n--------------------")[0][:3000]
            jobs.append(_Job(target, None, TargetFailure(target.name, name, "trace",
                                                         f"while tracing and lowering {name}: {message}")))
        else:
            jobs.append(_Job(target, CompileRequest(
                source=item, function=name, specs=specs, target=target.name, xla_flags=flags,
                extras=tuple(p for p in ("stablehlo", "jaxpr") if p in show), source_name=source_name,
                target_fingerprint=target.fingerprint(), versions=versions)))
    reports, failures, _ = _run_jobs(jobs, name, timeout, _cache(cache_dir), None, None)
    for report in reports:
        report.source = source  # the function's file, not the generated loader
    notes = [f"Traced here and compiled through jax.export, because {why}." if why
             else "Traced here and compiled through jax.export."]
    if any(c is not None for c in casts):
        notes.append("Arguments of dtypes the specs do not know reach the compiler as unsigned integers "
                     "of the same size, bitcast to their dtype.")
    return _finish(reports, failures, target_list, name, ", ".join(shown), show,
                   "export", notes, first_error)


# -- a saved module ---------------------------------------------------------------------------


def analyze_hlo(text: str, source_file: str | None = None, *, target: str = "hlo") -> Report:
    """Analyze a saved optimized HLO module (``compiled.as_text()``, or XLA's
    ``*after_optimizations.txt`` from ``--xla_dump_to``).

    The fusions, materialized buffers and reductions come from the text
    alone; memory and cost figures need the compiler, so they are ``None``
    ("not reported").  Print or check it through ``Reports([report])``.

    :param text: the module's text.
    :param source_file: the example's file as the HLO metadata names it (full
        path or base name): only its frames give source lines; ``None``: the
        innermost frame of any file.
    :param target: a label for the report's target (a known target name
        lets per-target expectations name it).
    :raises ValueError: when the text is not an HLO module.
    """
    from .analysis import analyze_module

    match = re.search(r"^\s*HloModule\s+([^\s,]+)", text, re.MULTILINE)
    if match is None:
        raise ValueError("not an HLO module: no 'HloModule' line")
    analysis = analyze_module(text, source_file)
    module = match.group(1)
    known = targets_mod.TARGETS.get(target.strip().lower())
    report = Report(function=module.removeprefix("jit_") or module, target=target.strip().lower() or "hlo",
                    target_description=known.description if known else "a saved HLO module", hlo=text)
    report.fusions, report.materialized, report.reductions = (
        analysis.fusions, analysis.materialized, analysis.reductions)
    return report
