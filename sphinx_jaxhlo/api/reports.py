"""The reports of one function on several targets: the container the Python API returns.

:class:`Reports` prints as text tables, shows as the directive's HTML in
Jupyter, round-trips through JSON and checks the directive's expectations
(:meth:`Reports.check`).  Nothing here compiles or imports jax.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

from sphinx_jaxhlo.api.results import Analysed
from sphinx_jaxhlo.core import expectations as exp
from sphinx_jaxhlo.core import targets as targets_mod
from sphinx_jaxhlo.core.report import SCHEMA_VERSION, Report, TargetFailure
from sphinx_jaxhlo.core.request import DEFAULT_SHOW
from sphinx_jaxhlo.core.view_options import parse_findings, parse_rows
from sphinx_jaxhlo.render.display import Display
from sphinx_jaxhlo.store.cache import checked_report

__all__ = ["REPORTS_SHOW", "AnalysisError", "Reports", "display_of"]

#: Parts :class:`Reports` shows unless told otherwise: the directive's
#: :data:`~sphinx_jaxhlo.core.request.DEFAULT_SHOW` without the source (the
#: caller has the code already: a notebook cell, a test, a file on the command line).
REPORTS_SHOW: tuple[str, ...] = tuple(p for p in DEFAULT_SHOW if p != "source")

#: Parts ``str()`` shows by default (the module texts are long).
_SHORT_PARTS = ("summary", "memory", "cost")

_REPORTS_FORMAT = "sphinx-jaxhlo reports"


def display_of(view: Mapping[str, Any] | None = None) -> Display:
    """What a result shows, from the view options the API and the command line take, parsed
    (``{"findings": ("memory",), "rows": 3}``, :func:`sphinx_jaxhlo.core.example.parse_view`); the
    others as :class:`~sphinx_jaxhlo.render.display.Display` has them (every kind of finding)."""
    given = dict(view or {})
    return dataclasses.replace(Display(), **{key: given[key] for key in ("findings", "rows") if key in given})


class AnalysisError(RuntimeError):
    """No target produced a report: the function could not be traced, the
    worker could not run its file, every compile timed out...

    Its ``failures`` say what happened on each target.
    """

    def __init__(self, message: str, failures: Sequence[TargetFailure] = ()) -> None:
        super().__init__(message)
        self.failures = list(failures)


# -- Reports -----------------------------------------------------------------------------------


class Reports(Analysed, Sequence[Report]):
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
    :param display: the findings the text and the JSON report (``findings=``, ``--findings``) and
        the rows of each detail table the text prints (``rows=``, ``--rows``); default: every kind
        of finding, 8 rows (``display_of()``).
    """

    json_name = "reports"

    def __init__(self, reports: Iterable[Report] = (), *, failures: Iterable[TargetFailure] = (),
                 function: str = "", args: str = "", show: Sequence[str] = REPORTS_SHOW,
                 compiled_via: str = "", notes: Iterable[str] = (), targets: Sequence[str] | None = None,
                 display: Display | None = None) -> None:
        self._reports = list(reports)
        self.failures: list[TargetFailure] = list(failures)
        self.function = function or next((r.function for r in self._reports), "")
        self.args = args
        self.show: list[str] = list(show)
        self.compiled_via = compiled_via
        self.notes: list[str] = list(notes)
        self.display = display or display_of()
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
                           notes=self.notes, order=self._order, display=self.display)

    def __repr__(self) -> str:
        parts = [f"{r.target}: {'error ' + r.error.status if r.error else 'ok'}" for r in self._reports]
        parts += [f"{f.target}: no report ({f.kind})" for f in self.failures]
        return f"<Reports {self.title or '(empty)'}: {', '.join(parts) or 'no targets'}>"

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
                           full_page=full_page, display=self.display)

    # -- JSON -------------------------------------------------------------------------------

    def findings(self) -> list[dict[str, str]]:
        """The findings in words that the text prints, of the kinds ``display`` asks for (what
        is live at the peak as one, with ``peak``), each with its function and target: the JSON's."""
        from sphinx_jaxhlo.render.findings import findings, mesh_findings
        from sphinx_jaxhlo.render.peak import peak_sentence

        out = []
        for r in self._reports:
            found = [(f.level, f.title, f.text) for f in [*findings(r, self.display), *mesh_findings(r, self.display)]]
            if self.display.peak and r.live_at_peak is not None:
                found.append(("info", "Live at the peak", peak_sentence(r)))
            out += [{"function": r.function, "target": r.target, "level": level, "title": title, "text": text}
                    for level, title, text in found]
        return out

    def to_dict(self) -> dict[str, Any]:
        """``{"reports": [<Report JSON>...], "failures": [...], "findings": [...], ...}``: the
        findings in words of the kinds asked for (:meth:`findings`), ``view`` what was asked."""
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
            "view": {"findings": list(self.display.findings), "rows": self.display.rows},
            "findings": self.findings(),
        }

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
        view = data.get("view") or {}
        if not isinstance(view, Mapping):
            raise ValueError(f"malformed view: {view!r}")
        shown: dict[str, Any] = {}
        if "findings" in view:  # none written as []
            shown["findings"] = parse_findings(view["findings"] or "none")
        if "rows" in view:
            shown["rows"] = parse_rows(view["rows"])
        return cls([checked_report(r) for r in data["reports"]], failures=failures,
                   function=str(data.get("function", "")), args=str(data.get("args", "")),
                   show=list(data.get("show") or REPORTS_SHOW), compiled_via=str(data.get("compiled_via", "")),
                   notes=list(data.get("notes") or []), targets=list(data.get("targets") or []),
                   display=display_of(shown))

    # -- expectations -----------------------------------------------------------------------

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
