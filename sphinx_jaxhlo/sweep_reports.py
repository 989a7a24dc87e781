"""A sweep's reports: what the Python API and the command line return for an example
compiled at many sizes (``analyze(fn, "f32[n,3]", ..., sweep={"n": [...]})``).

:class:`SweepReports` holds one :class:`~sphinx_jaxhlo.Reports` per point, the map of
the sweep (:class:`~sphinx_jaxhlo.core.flips.SweepMap`: each point's figures, and the
flips between neighbours), prints as text tables, shows as the directive's HTML in
Jupyter, round-trips through JSON, and checks claims over ranges
(:meth:`SweepReports.check`).  :func:`compile_sweep` and :func:`sweep_call` make one,
point by point, through a compile function the caller gives (the API's); nothing
here compiles or imports jax.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from sphinx_jaxhlo.core import expectations as exp
from sphinx_jaxhlo.core import targets as targets_mod
from sphinx_jaxhlo.core.example import PYTHON, Example, OptionProblem, sweep_text
from sphinx_jaxhlo.core.flips import Flip, SweepMap, check_flip_claims, sweep_map
from sphinx_jaxhlo.core.report import SCHEMA_VERSION, TargetFailure
from sphinx_jaxhlo.core.results import Result, result_of_failure
from sphinx_jaxhlo.core.specs import SpecError, format_tree, parse_args, size_symbols
from sphinx_jaxhlo.core.sweeps import Point, Sweep, SweepError, parse_sweep
from sphinx_jaxhlo.pipeline.plan import sweep_points
from sphinx_jaxhlo.reports import REPORTS_SHOW, AnalysisError, Reports, _expectation_text, raise_failed

__all__ = ["SweepReports", "compile_sweep", "sweep_call"]

_FORMAT = "sphinx-jaxhlo sweep"


class SweepReports(Sequence[Reports]):
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

    def __init__(self, sweep: Sweep, points: Sequence[Point], reports: Sequence[Reports], *, function: str = "",
                 targets: Sequence[str] = (), show: Sequence[str] = REPORTS_SHOW) -> None:
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
        self.map = self._make_map()

    def _make_map(self) -> SweepMap:
        outcomes = []
        name = self.function or "(function)"
        for point, reports in zip(self.points, self._reports, strict=True):
            results = [Result(r.function or name, r.target, _title(r.target), report=r) for r in reports]
            results += [result_of_failure(dataclasses.replace(f, function=f.function or name), _title(f.target))
                        for f in reports.failures]
            outcomes.append((point, results, ""))
        return sweep_map(self.sweep, outcomes, self.functions or [name], [(t, _title(t)) for t in self.targets])

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
        """``(point, its reports)`` in point order."""
        return list(zip(self.points, self._reports, strict=True))

    def at(self, **values: int) -> Reports:
        """The reports at the point with these values (``at(n=4096)``; a grid needs both symbols)."""
        for point, reports in self.items():
            if all(point.as_dict().get(k) == v for k, v in values.items()) and values:
                return reports
        raise KeyError(f"no point with {values} (points: {', '.join(p.label for p in self.points)})")

    @property
    def flips(self) -> list[Flip]:
        return self.map.flips

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SweepReports):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    # -- display ----------------------------------------------------------------------------

    @property
    def title(self) -> str:
        names = ", ".join(self.functions)
        return f"{names}({self.sweep.args})" if self.sweep.args else names

    def to_text(self) -> str:
        """Per target, the table of points and the flips with the compiler's reasons."""
        from sphinx_jaxhlo.render.sweep_map import sweep_text as text

        return text(self.map, self.title)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return (f"<SweepReports {self.title or '(empty)'}: {len(self.points)} points on "
                f"{', '.join(self.targets) or 'no target'}, {len(self.flips)} flips>")

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self) if cycle else self.to_text().rstrip("\n"))

    def to_html(self, *, full_page: bool = False, script: bool = True) -> str:
        """The directive's rendering of the sweep (maps, tables, flips) as self-contained HTML."""
        from sphinx_jaxhlo.render.sweep_map import sweep_html

        source = next((r.source for reports in self._reports for r in reports if r.source), "")
        results = [Result(r.function, r.target, _title(r.target), report=r) for reports in self for r in reports]
        return sweep_html(self.map, results, source, full_page=full_page, script=script)

    def _repr_html_(self) -> str:
        return self.to_html()

    # -- JSON -------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "schema_version": SCHEMA_VERSION,
            "sweep": self.sweep.text,
            "args": self.sweep.args,
            "static": list(self.sweep.static),
            "function": ", ".join(self.functions),
            "targets": list(self.targets),
            "show": list(self.show),
            "points": [{"values": p.as_dict(), "reports": r.to_dict()} for p, r in self.items()],
            "map": self.map.to_dict(),
        }

    def to_json(self, indent: int | None = None) -> str:
        """The points' reports and the map as JSON (the map is derived again when read back)."""
        return json.dumps(self.to_dict(), sort_keys=True, indent=indent)

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
            key = tuple(sorted((str(k), int(v)) for k, v in dict(entry.get("values") or {}).items()))
            if key not in by_values:
                raise ValueError(f"point {dict(key)} is not a point of the sweep {sweep.text!r}")
            points.append(by_values[key])
            reports.append(Reports.from_dict(entry["reports"]))
        return cls(sweep, points, reports, function=str(data.get("function", "")),
                   targets=list(data.get("targets") or []), show=list(data.get("show") or REPORTS_SHOW))

    @classmethod
    def from_json(cls, text: str) -> SweepReports:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"malformed sweep JSON: {exc}") from exc
        return cls.from_dict(data)

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
        flips = check_flip_claims(expectations, self.map)
        outcomes += flips
        problems += [c.message for c in flips if not c.passed]
        return outcomes, problems

    def evaluate(self, **claims: Any) -> tuple[list[exp.Check], list[str]]:
        """:meth:`evaluate_options` with :meth:`Reports.check`'s keywords (``reduction=``,
        ``max_temp=``...) and ``flip=``."""
        options = {}
        for key, value in claims.items():
            option = "expect-" + key.replace("_", "-")
            if option not in exp.OPTIONS:
                raise TypeError(f"check() got an unexpected keyword {key!r}")
            if value is not None:
                options[option] = _expectation_text(value)
        return self.evaluate_options(options)

    def check(self, *, max_temp: Any = None, min_temp: Any = None, max_peak: Any = None, max_device: Any = None,
              reduction: Any = None, materialized: Any = None, error: Any = None, collectives: Any = None,
              kernels: Any = None, peak_top: Any = None, flip: Any = None) -> SweepReports:
        """Assert what the compiler did over the sweep, for test suites.

        Each value is what the directive's ``:expect-*:`` option takes; an item may end with
        ``for CONDITION`` (``"gpu:h100=fused for n>=5000"``) to apply only where the
        condition holds, and ``flip=`` says where a decision flips (``"between 4096 and
        5000"``, ``"gpu:h100=reduction between 4096 and 5000"``, ``"none"``).  A point
        whose compile failed is data: only a claim that applies there fails on it.

        :return: ``self``.
        :raises AssertionError: naming each failed claim's point and target.
        :raises ValueError: a malformed claim, an unknown target or symbol.
        """
        outcomes, problems = self.evaluate(max_temp=max_temp, min_temp=min_temp, max_peak=max_peak,
                                           max_device=max_device, reduction=reduction, materialized=materialized,
                                           error=error, collectives=collectives, kernels=kernels,
                                           peak_top=peak_top, flip=flip)
        raise_failed(f"{self.title or '(function)'} over {self.sweep.describe()}", outcomes, problems)
        return self


def _title(target: str) -> str:
    known = targets_mod.TARGETS.get(target)
    return known.title if known is not None else target


# -- making one --------------------------------------------------------------------------------


def compile_sweep(example: Example, targets: Sequence[targets_mod.Target], show: Sequence[str],
                  compile_one: Callable[..., Reports], **options: Any) -> SweepReports:
    """Compile each point of a swept example (an ordinary example each) with
    ``compile_one(example, targets, show, **options)`` (the API's
    :func:`~sphinx_jaxhlo.api.compile_example`); a point whose arguments cannot be made
    has that as its failure."""
    assert example.sweep is not None
    names = [t.name for t in targets]
    functions = [f or "(default function)" for f in example.functions] or ["(default function)"]
    reports = []
    for point in sweep_points(example):
        if point.example is None:
            failures = [TargetFailure(t, f, "args", point.problem) for f in functions for t in names]
            reports.append(Reports([], failures=failures, function=functions[0], targets=names, show=show))
        else:
            reports.append(compile_one(point.example, targets, show, **options))
    # the default function's name is known once a point compiled it
    compiled = [r.function for point_reports in reports for r in point_reports]
    named = ", ".join(dict.fromkeys(compiled)) if compiled else ", ".join(functions)
    return SweepReports(example.sweep, [p.point for p in sweep_points(example)], reports, function=named,
                        targets=names, show=show)


def _strings(tree: Any) -> Iterator[str]:
    if isinstance(tree, str):
        yield tree
    elif isinstance(tree, (tuple, list)):
        for item in tree:
            yield from _strings(item)
    elif isinstance(tree, Mapping):
        for item in tree.values():
            yield from _strings(item)


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
               **options: Any) -> SweepReports:
    """:func:`~sphinx_jaxhlo.analyze` of a function object at each point of ``sweep``: the
    symbols its spec strings name are sizes, the others static arguments by name.

    :param target_names: the names of the targets ``options`` asks for.

    :raises ValueError: a malformed sweep, a size no symbol gives, a symbol also in ``static``.
    """
    try:
        parsed = parse_sweep(sweep_text(sweep))
    except SweepError as exc:
        raise OptionProblem("sweep", f"{PYTHON('sweep')} {exc}") from None
    used: list[str] = []
    for text in _strings([list(args), dict(kwargs)]):
        try:
            used += [s for s, _ in size_symbols(text) if s not in used]
        except SpecError:
            continue  # a malformed spec: analyze() says so, at each point
    missing = [s for s in used if s not in parsed.symbols]
    if missing:
        raise OptionProblem("args", f"size {missing[0]!r} has no value: {PYTHON('sweep')} gives "
                                    f"{', '.join(parsed.symbols)}")
    static_symbols = tuple(s for s in parsed.symbols if s not in used)
    clash = [s for s in static_symbols if s in static]
    if clash:
        raise OptionProblem("option", f"{PYTHON('static')} {clash[0]} is swept by {PYTHON('sweep')} too")
    parsed = dataclasses.replace(parsed, args=", ".join(s for s in _strings(list(args)) if isinstance(s, str)),
                                 static=static_symbols)
    reports = []
    for point in parsed.points():
        values = point.as_dict()
        try:
            point_args, point_kwargs = _at(list(args), values), _at(dict(kwargs), values)
        except SpecError as exc:
            failures = [TargetFailure(t, name, "args", f"at {point.label}: {exc}") for t in target_names]
            reports.append(Reports([], failures=failures, function=name, targets=target_names))
            continue
        point_static = {**static, **{s: values[s] for s in static_symbols}}
        try:
            done = analyze(fn, *point_args, static=point_static, fn_kwargs=point_kwargs, **options)
        except AnalysisError as exc:
            done = Reports([], failures=exc.failures, function=name, targets=target_names)
        assert isinstance(done, Reports)
        reports.append(done)
    return SweepReports(parsed, parsed.points(), reports, function=name, targets=target_names)
