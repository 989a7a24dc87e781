"""A sweep's reports: what the Python API and the command line return for an example
compiled at many sizes (``analyze(fn, "f32[n,3]", ..., sweep={"n": [...]})``).

:class:`SweepReports` holds one :class:`~sphinx_jaxhlo.Reports` per point, the map of
the sweep (:class:`~sphinx_jaxhlo.core.flips.SweepMap`: each point's figures, and the
flips between neighbours), prints as text tables, shows as the directive's HTML in
Jupyter, round-trips through JSON, and checks claims over ranges
(:meth:`SweepReports.check`).  :func:`compile_sweep` and :func:`sweep_call` make one,
point by point, through a compile function the caller gives (the API's) and the sweep's one driver
(:mod:`sphinx_jaxhlo.pipeline.sweep`, the directive's too); nothing here compiles or
imports jax.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from sphinx_jaxhlo.api.reports import REPORTS_SHOW, AnalysisError, Reports
from sphinx_jaxhlo.api.results import Analysed
from sphinx_jaxhlo.core import expectations as exp
from sphinx_jaxhlo.core import targets as targets_mod
from sphinx_jaxhlo.core.bisection import DEFAULT_BUDGET, Outcome
from sphinx_jaxhlo.core.example import Example
from sphinx_jaxhlo.core.flips import Flip, SweepMap, sweep_map
from sphinx_jaxhlo.core.report import SCHEMA_VERSION, TargetFailure
from sphinx_jaxhlo.core.results import Result, result_of_failure
from sphinx_jaxhlo.core.specs import SpecError, format_tree, parse_args
from sphinx_jaxhlo.core.sweep_claims import check_flip_claims, check_range_claims
from sphinx_jaxhlo.core.sweeps import Point, Sweep, SweepError, parse_sweep
from sphinx_jaxhlo.pipeline.sweep import DEFAULT_FUNCTION, call_sweep, drive_sweep, sweep_examples

__all__ = ["SweepReports", "compile_sweep", "sweep_call"]

_FORMAT = "sphinx-jaxhlo sweep"


class SweepReports(Analysed, Sequence[Reports]):
    """The reports of a sweep's functions (one, or each of ``function="a, b"``) at every
    point, in point order, and the sweep's map (each function apart):
    ``points`` (each a ``Point``, its ``label`` such as ``n=4096``),
    :attr:`flips` (between which two adjacent sizes a reduction's verdict, the
    producer of its stored buffer, the kernel count or the compile's success changes,
    with the compiler's reasons at both sides) and ``map`` (each point's figures, a
    ``sphinx_jaxhlo.core.flips.SweepMap``).

    ``sweep[0]`` is the first point's :class:`~sphinx_jaxhlo.Reports`;
    ``sweep["n=4096"]`` or ``sweep.at(n=4096)`` picks a point by its values.
    ``str()`` gives the tables and the flips, Jupyter shows the maps, :meth:`to_json`
    and :meth:`from_json` round-trip, :meth:`check` asserts claims over ranges.

    :param sweep: the sweep (its ``args`` and ``static`` as the example's options make them).
    :param points: the points, in order.
    :param reports: one per point (a point that could not be compiled has its failures).
    """

    json_name = "sweep"

    def __init__(self, sweep: Sweep, points: Sequence[Point], reports: Sequence[Reports], *, function: str = "",
                 targets: Sequence[str] = (), show: Sequence[str] = REPORTS_SHOW, bisect: int | None = None) -> None:
        if len(points) != len(reports):
            raise ValueError(f"{len(points)} points but {len(reports)} reports")
        self.sweep = sweep
        self.points = list(points)
        self._reports = list(reports)
        found = [r.function for reports in self._reports for r in reports]
        found += [f.function for reports in self._reports for f in reports.failures]
        #: every function compiled, in the order of the reports (``function="a, b"`` compiles two)
        self.functions = list(dict.fromkeys([*(n.strip() for n in function.split(",") if n.strip()),
                                             *(n for n in found if n)]))
        self.function = self.functions[0] if self.functions else ""
        known = [t for r in self._reports for t in r.targets]
        self.targets = [t for t in targets if t in known] + [t for t in dict.fromkeys(known) if t not in targets]
        self.show = list(show)
        #: The bisection budget the sweep was compiled with (``None``: not known).
        self.bisect = bisect
        self.map = self._make_map()

    def _make_map(self) -> SweepMap:
        name = self.function or "(function)"
        outcomes = [_outcome(point, reports, name) for point, reports in zip(self.points, self._reports, strict=True)]
        made = sweep_map(self.sweep, outcomes, self.functions or [name], [(t, _title(t)) for t in self.targets])
        made.budget = self.bisect
        return made

    # -- sequence ---------------------------------------------------------------------------

    def __getitem__(self, index: int | str) -> Reports:  # type: ignore[override]
        if isinstance(index, str):
            wanted = index.replace(" ", "")
            for point, reports in zip(self.points, self._reports, strict=True):
                if point.label.replace(" ", "") == wanted:
                    return reports
            raise KeyError(f"no point {index!r} (points: {', '.join(p.label for p in self.points)})")
        return self._reports[index]

    def __len__(self) -> int:
        return len(self._reports)

    def __iter__(self) -> Iterator[Reports]:
        return iter(self._reports)

    def items(self) -> list[tuple[Point, Reports]]:
        """``(point, its reports)`` in point order: the sweep's own points, then the probes."""
        return list(zip(self.points, self._reports, strict=True))

    @property
    def probes(self) -> list[Point]:
        """The points bisection compiled (``point.probe`` names the axis), in the order compiled."""
        return [p for p in self.points if p.probe]

    def at(self, **values: int) -> Reports:
        """The reports at the point with these values (``at(n=4096)``; a grid needs both symbols)."""
        for point, reports in self.items():
            if all(point.as_dict().get(k) == v for k, v in values.items()) and values:
                return reports
        raise KeyError(f"no point with {values} (points: {', '.join(p.label for p in self.points)})")

    @property
    def flips(self) -> list[Flip]:
        return self.map.flips

    # -- display ----------------------------------------------------------------------------

    @property
    def title(self) -> str:
        names = ", ".join(self.functions)
        return f"{names}({self.sweep.args})" if self.sweep.args else names

    def to_text(self) -> str:
        """Per target, the table of points and the flips with the compiler's reasons."""
        from sphinx_jaxhlo.render.sweep_map import sweep_text as text

        return text(self.map, self.title)

    def __repr__(self) -> str:
        return (f"<SweepReports {self.title or '(empty)'}: {len(self.points)} points on "
                f"{', '.join(self.targets) or 'no target'}, {len(self.flips)} flips>")

    def to_html(self, *, full_page: bool = False, script: bool = True) -> str:
        """The directive's rendering of the sweep (maps, tables, flips) as self-contained HTML."""
        from sphinx_jaxhlo.render.sweep_map import sweep_html

        source = next((r.source for reports in self._reports for r in reports if r.source), "")
        results = [Result(r.function, r.target, _title(r.target), report=r) for reports in self for r in reports]
        return sweep_html(self.map, results, source, full_page=full_page, script=script)

    # -- JSON -------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The points' reports and the map (the map is derived again when read back)."""
        return {
            "format": _FORMAT,
            "schema_version": SCHEMA_VERSION,
            "sweep": self.sweep.text,
            "args": self.sweep.args,
            "static": list(self.sweep.static),
            "function": ", ".join(self.functions),
            "targets": list(self.targets),
            "show": list(self.show),
            "bisect": self.bisect,
            "points": [{"values": p.as_dict(), **({"probe": p.probe} if p.probe else {}), "reports": r.to_dict()}
                       for p, r in self.items()],
            "map": self.map.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SweepReports:
        """Rebuild from :meth:`to_dict`; raises ``ValueError`` on anything else."""
        if not isinstance(data, Mapping) or data.get("format") != _FORMAT:
            raise ValueError("not a sphinx-jaxhlo sweep document")
        try:
            sweep = parse_sweep(str(data["sweep"]))
        except (SweepError, KeyError) as exc:
            raise ValueError(f"malformed sweep: {exc}") from None
        sweep = dataclasses.replace(sweep, args=str(data.get("args", "")),
                                    static=tuple(str(s) for s in data.get("static") or ()))
        by_values = {tuple(sorted(p.as_dict().items())): p for p in sweep.points()}
        points, reports = [], []
        for entry in data.get("points") or []:
            values = {str(k): int(v) for k, v in dict(entry.get("values") or {}).items()}
            key = tuple(sorted(values.items()))
            probe = str(entry.get("probe") or "")
            if probe:
                point = _probe_of(sweep, values, probe)
            elif key in by_values:
                point = by_values[key]
            else:
                raise ValueError(f"point {values} is not a point of the sweep {sweep.text!r}")
            points.append(point)
            reports.append(Reports.from_dict(entry["reports"]))
        budget = data.get("bisect")
        return cls(sweep, points, reports, function=str(data.get("function", "")),
                   targets=list(data.get("targets") or []), show=list(data.get("show") or REPORTS_SHOW),
                   bisect=budget if isinstance(budget, int) else None)

    # -- claims -----------------------------------------------------------------------------

    def evaluate_options(self, options: Mapping[str, str]) -> tuple[list[exp.Check], list[str]]:
        """Check claims given as the directive's options (``{"expect-reduction":
        "gpu:h100=fused for n>=5000", "expect-flip": "between 4096 and 5000"}``) without raising.

        :return: ``(outcomes, problems)``: one outcome per claim and point (and per flip
            claim), and every reason the check fails, in words, each naming its point and target.
        :raises ValueError: a malformed claim, an unknown target or symbol.
        """
        expectations = exp.parse_expectations(dict(options))
        unknown = sorted(t for t in expectations.targets_named() if t not in targets_mod.TARGETS)
        if unknown:
            raise ValueError(f"expectation names unknown target {', '.join(map(repr, unknown))}")
        symbols = sorted(expectations.symbols_named() - set(self.sweep.symbols))
        if symbols:
            raise ValueError(f"a claim names {symbols[0]!r}, which the sweep does not give "
                             f"(it gives {', '.join(self.sweep.symbols)})")
        problems = [f"an expectation names {t}, which was not compiled (compiled: {', '.join(self.targets)})"
                    for t in sorted(expectations.targets_named() - set(self.targets))]
        outcomes: list[exp.Check] = []
        for point, reports in self.items():
            here = expectations.at_point(point.as_dict())
            checked = exp.check_all(here, list(reports), point.label)
            outcomes += checked
            problems += [c.message for c in checked if not c.passed]
            for failure in reports.failures:
                if here.for_target(failure.target, failure.function or self.function):
                    problems.append(f"{failure.describe()} [at {point.label}]")
        sweeping = [*check_flip_claims(expectations, self.map), *check_range_claims(expectations, self.map, outcomes)]
        outcomes += sweeping
        problems += [c.message for c in sweeping if not c.passed]
        return outcomes, problems

    def checked_what(self) -> str:
        return f"{self.title or '(function)'} over {self.sweep.describe()}"


def _title(target: str) -> str:
    known = targets_mod.TARGETS.get(target)
    return known.title if known is not None else target


def _outcome(point: Point, reports: Reports, name: str) -> Outcome:
    """A point's reports as the map takes them (a failure is a result without a report)."""
    results = [Result(r.function or name, r.target, _title(r.target), report=r) for r in reports]
    results += [result_of_failure(dataclasses.replace(f, function=f.function or name), _title(f.target))
                for f in reports.failures]
    return point, results, ""


def _probe_of(sweep: Sweep, values: Mapping[str, int], axis: str) -> Point:
    """A probe read back from JSON: on one of the sweep's points' lines, on ``axis``.

    :raises ValueError: values or an axis the sweep does not have.
    """
    try:
        names = sweep.axis(axis).names
    except KeyError:
        raise ValueError(f"probe axis {axis!r} is not swept in {sweep.text!r}") from None
    for base in sweep.points():
        if all(values.get(k) == v for k, v in base.values if k not in names) and set(values) == set(base.as_dict()):
            return sweep.probe_point(base, axis, values[names[0]])
    raise ValueError(f"probe {dict(values)} is on no line of the sweep {sweep.text!r}")


# -- making one: the fronts' compile of a point, through the sweep's one driver ----------------------


def compile_sweep(example: Example, targets: Sequence[targets_mod.Target], show: Sequence[str],
                  compile_one: Callable[..., Reports], **options: Any) -> SweepReports:
    """Compile each point of a swept example (an ordinary example each) with
    ``compile_one(example, targets, show, **options)`` (the API's
    :func:`~sphinx_jaxhlo.api.functions.compile_example`), through the sweep's driver
    (:func:`~sphinx_jaxhlo.pipeline.sweep.sweep_examples`); a point whose arguments cannot be
    made has that as its failure."""
    assert example.sweep is not None
    name = next((f for f in example.functions if f), DEFAULT_FUNCTION)

    def compile_point(made: Example, chosen: list[targets_mod.Target]) -> tuple[Reports, Sequence[Result]]:
        reports = compile_one(made, chosen, show, **options)
        return reports, _outcome(made.point or Point(()), reports, name)[1]

    def cannot_make(point: Point, problem: str, functions: tuple[str, ...], at: list[str]) -> Reports:
        named = [f or DEFAULT_FUNCTION for f in functions]
        failures = [TargetFailure(t, f, "args", problem) for f in named for t in at]
        return Reports([], failures=failures, function=named[0], targets=at, show=show)

    run = sweep_examples(example, targets, compile_point, cannot_make)
    return SweepReports(example.sweep, run.points, run.kept, function=", ".join(run.functions),
                        targets=[t.name for t in targets], show=show, bisect=example.bisect)


def _at(tree: Any, values: Mapping[str, int]) -> Any:
    """Spec strings with their sizes given: ``"f32[n,3]"`` -> ``"f32[4096,3]"``."""
    if isinstance(tree, str):
        specs = parse_args(tree, values)
        return ", ".join(format_tree(a) for a in specs.args) if specs.args else tree
    if isinstance(tree, tuple):
        return tuple(_at(item, values) for item in tree)
    if isinstance(tree, list):
        return [_at(item, values) for item in tree]
    if isinstance(tree, Mapping):
        return {k: _at(v, values) for k, v in tree.items()}
    return tree


def sweep_call(analyze: Callable[..., Any], fn: Any, args: Sequence[Any], kwargs: Mapping[str, Any],
               sweep: str | Mapping[str, Any], static: Mapping[str, Any], name: str, target_names: Sequence[str],
               bisect: int = DEFAULT_BUDGET, **options: Any) -> SweepReports:
    """:func:`~sphinx_jaxhlo.analyze` of a function object at each point of ``sweep``
    (:func:`~sphinx_jaxhlo.pipeline.sweep.call_sweep`: the symbols its spec strings name are
    sizes, the others static arguments by name), through the sweep's driver
    (:func:`~sphinx_jaxhlo.pipeline.sweep.drive_sweep`): then the sizes bisection probes to
    locate each flip (at most ``bisect`` of them).  A probe compiles every function of the call.

    :param target_names: the names of the targets ``options`` asks for.

    :raises ValueError: a malformed sweep, a size no symbol gives, a symbol also in ``static``.
    """
    parsed = call_sweep(sweep, args, kwargs, static)

    def compile_at(point: Point, _functions: tuple[str, ...] | None,
                   targets: Sequence[str]) -> tuple[Reports, Sequence[Result], str]:
        values = point.as_dict()
        try:
            point_args, point_kwargs = _at(list(args), values), _at(dict(kwargs), values)
        except SpecError as exc:
            failures = [TargetFailure(t, name, "args", f"at {point.label}: {exc}") for t in targets]
            done = Reports([], failures=failures, function=name, targets=targets)
            return done, _outcome(point, done, name)[1], ""
        point_static = {**static, **{s: values[s] for s in parsed.static}}
        chosen = {**options, "targets": list(targets)} if list(targets) != list(target_names) else options
        try:
            done = analyze(fn, *point_args, static=point_static, fn_kwargs=point_kwargs, **chosen)
        except AnalysisError as exc:
            done = Reports([], failures=exc.failures, function=name, targets=targets)
        assert isinstance(done, Reports)
        return done, _outcome(point, done, name)[1], ""

    run = drive_sweep(parsed, (name,), [(t, _title(t)) for t in target_names], bisect, compile_at)
    return SweepReports(parsed, run.points, run.kept, function=name, targets=target_names, bisect=bisect)
