"""The reports of one function on several targets: the container the Python API returns.

:class:`Reports` prints as text tables, shows as the directive's HTML in
Jupyter, round-trips through JSON and checks the directive's expectations
(:meth:`Reports.check`).  Nothing here compiles or imports jax.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

from sphinx_jaxhlo.core import expectations as exp
from sphinx_jaxhlo.core import targets as targets_mod
from sphinx_jaxhlo.core.report import SCHEMA_VERSION, Report, TargetFailure
from sphinx_jaxhlo.core.request import DEFAULT_SHOW

__all__ = ["REPORTS_SHOW", "AnalysisError", "Reports"]

#: Parts :class:`Reports` shows unless told otherwise: the directive's
#: :data:`~sphinx_jaxhlo.core.request.DEFAULT_SHOW` without the source (the
#: caller has the code already: a notebook cell, a test, a file on the command line).
REPORTS_SHOW: tuple[str, ...] = tuple(p for p in DEFAULT_SHOW if p != "source")

#: Parts ``str()`` shows by default (the module texts are long).
_SHORT_PARTS = ("summary", "memory", "cost")

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

    A sequence of ``Report`` objects (``sphinx_jaxhlo.core.report.Report``, whose
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
        the directive's ``:show:`` (``sphinx_jaxhlo.core.request.SHOW_PARTS``).
    :param compiled_via: ``"function"`` (:func:`~sphinx_jaxhlo.analyze`), ``"source"``
        (:func:`~sphinx_jaxhlo.analyze_source`, the command line) or ``""`` (not compiled here).
    :param notes: sentences shown under the reports.
    :param targets: the target order; default: reports, then failures.
    """

    def __init__(self, reports: Iterable[Report] = (), *, failures: Iterable[TargetFailure] = (),
                 function: str = "", args: str = "", show: Sequence[str] = REPORTS_SHOW,
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
        from sphinx_jaxhlo.render.text import render_text

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
        from sphinx_jaxhlo.render.standalone_html import render_html

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
                   show=list(data.get("show") or REPORTS_SHOW), compiled_via=str(data.get("compiled_via", "")),
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

    def evaluate(self, *, max_temp: Any = None, min_temp: Any = None, max_peak: Any = None, max_device: Any = None,
                 reduction: Any = None, materialized: Any = None, error: Any = None, collectives: Any = None,
                 kernels: Any = None, peak_top: Any = None) -> tuple[list[exp.Check], list[str]]:
        """Check expectations without raising.

        :return: ``(outcomes, problems)``: one outcome per (expectation,
            target), and every reason the check fails, in words (failed
            outcomes, targets without a report, unexpected compile errors,
            expectations for targets that were not compiled).
        :raises ValueError: a malformed expectation or an unknown target name.
        """
        options: dict[str, str] = {}
        for kind, value in (("max-temp", max_temp), ("min-temp", min_temp), ("max-peak", max_peak),
                            ("max-device", max_device), ("reduction", reduction), ("materialized", materialized),
                            ("error", error), ("collectives", collectives), ("kernels", kernels),
                            ("peak-top", peak_top)):
            if value is not None:
                options[f"expect-{kind}"] = _expectation_text(value)
        return self.evaluate_options(options)

    def evaluate_options(self, options: Mapping[str, str]) -> tuple[list[exp.Check], list[str]]:
        """:meth:`evaluate` with the directive's option names as keys
        (``{"expect-max-temp": "cpu=25GB"}``), as the command line has them."""
        expectations = exp.parse_expectations(dict(options))
        if expectations.over_ranges:
            e = expectations.over_ranges[0]
            raise ValueError(f"{e.kind.replace('-', '_')}={e.value!r}"
                             f"{' for ' + e.where if e.where else ''}: a claim over a range of sizes needs a "
                             "sweep (analyze(..., sweep=...))")
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

    def check(self, *, max_temp: Any = None, min_temp: Any = None, max_peak: Any = None, max_device: Any = None,
              reduction: Any = None, materialized: Any = None, error: Any = None, collectives: Any = None,
              kernels: Any = None, peak_top: Any = None) -> Reports:
        """Assert what the compiler did, for test suites.

        Each value is what the directive's ``:expect-*:`` option takes: a bare
        value for every target, or ``target=value`` pairs
        (``"cpu=25GB, gpu:h100=64MiB"``), or a ``{target: value}`` dict; sizes
        may also be ints (bytes).

        :param max_temp: temp memory at most this (``"64MiB"``, ``"10GB"``, ``0``).
        :param min_temp: temp memory at least this.
        :param max_peak: XLA's peak memory at most this (on a TPU it counts the
            chip's own memory and leaves out code: use ``max_device`` for HBM).
        :param max_device: the memory the device holds while the program runs
            (arguments, outputs, temp and generated code, less what is aliased; a
            TPU's HBM) at most this.
        :param reduction: ``"fused"`` or ``"unfused"``: every reduction is so.
        :param materialized: a shape such as ``"f32[50000,100000]"`` that is
            materialized in the device's memory (a TPU's HBM; buffers a TPU keeps in
            the chip's own memory are named apart), or ``"none"``: nothing is.
        :param error: the compile must fail with this status (``"RESOURCE_EXHAUSTED"``)
            or message fragment; ``"none"``: it must not fail.
        :param collectives: conditions on the collectives of a program on
            several devices, as ``:expect-collectives:`` takes them:
            ``"all-gather=0, all-reduce<=1"``, ``"reduce-scatter<=64MiB"``, ``"none"``.
        :param kernels: how many kernels the program runs, as ``:expect-kernels:``
            takes it: ``1`` (an int too), ``"<=3"``, ``{"cpu": 1, "tpu:v5e": "<=2"}``.
        :param peak_top: the largest buffer live at the peak, as ``:expect-peak-top:`` names it:
            the operation that made it (``"dot_general"``, ``"argument a"``), its line
            (``"line 4"``), or both (``"dot_general on line 4"``); per target as the others.
        :return: ``self``, so ``analyze(...).check(...)`` can be printed.
        :raises AssertionError: listing, per target, what was expected and what
            was found.  Also when a target produced no report, when a compile
            failed without ``error=``, or when an expectation names a target
            that was not compiled.
        :raises ValueError: a malformed expectation or unknown target name.
        """
        outcomes, problems = self.evaluate(max_temp=max_temp, min_temp=min_temp, max_peak=max_peak,
                                           max_device=max_device, reduction=reduction, materialized=materialized,
                                           error=error, collectives=collectives, kernels=kernels,
                                           peak_top=peak_top)
        raise_failed(f"{self.title or '(function)'}", outcomes, problems)
        return self


def raise_failed(what: str, outcomes: Sequence[exp.Check], problems: Sequence[str]) -> None:
    """Raise the ``AssertionError`` of a failed ``check()`` (nothing when no claim failed):
    each problem on a line of its own, and how many other claims held."""
    if not problems:
        return
    held = sum(o.passed for o in outcomes)
    lines = [f"jax-hlo check failed for {what}:", *(f"  - {p}" for p in problems)]
    if held:
        lines.append(f"  ({held} other expectation(s) held)")
    raise AssertionError("\n".join(lines))


def _expectation_text(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_expectation_text(v)}" for k, v in value.items())
    if isinstance(value, bool):
        raise ValueError(f"expected a size, a word or a shape, not {value!r}")
    return str(value)
