"""The one driver of a sweep, whatever front enters it: the directive's ``:sweep:``, the
API's ``analyze(..., sweep=...)`` and ``analyze_source(..., sweep=...)``, the command
line's ``--sweep``.

A sweep is a plan of many ordinary compiles.  :func:`drive_sweep` compiles each of the
sweep's own points, then bisects (:func:`~sphinx_jaxhlo.core.bisection.bisect`): each
round's probes grouped into one compile per point and target, of the functions probed
there, named as the example writes them (the default function's real name comes back
with its report).  A front gives only what differs between fronts: how to compile one
point for some functions and targets, and what it keeps of that compile (the directive
its results and records, the API its :class:`~sphinx_jaxhlo.Reports`).

:func:`sweep_examples` is the driver for a swept :class:`~sphinx_jaxhlo.core.example.Example`
(the directive, ``analyze_source``, the command line): each point an ordinary example
(:func:`~sphinx_jaxhlo.pipeline.plan.point_example`), a point whose arguments cannot be made
a point of the map with that as its problem.  :func:`call_sweep` reads the sweep of a
function object's call (``analyze(fn, "f32[n,3]", sweep=...)``) with the same rules as
the directive's options (:func:`~sphinx_jaxhlo.core.example.check_sweep`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sphinx_jaxhlo.core import expectations as exp
from sphinx_jaxhlo.core import targets as targets_mod
from sphinx_jaxhlo.core.bisection import Outcome, Probe, bisect
from sphinx_jaxhlo.core.example import PYTHON, Example, OptionProblem, Spelling, check_sweep, sweep_text
from sphinx_jaxhlo.core.flips import SweepMap
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.core.specs import SpecError, container_leaves, size_symbols
from sphinx_jaxhlo.core.sweeps import Point, Sweep, SweepError, parse_sweep
from sphinx_jaxhlo.pipeline.plan import point_example

__all__ = ["DEFAULT_FUNCTION", "SweepRun", "call_sweep", "drive_sweep", "spec_strings", "sweep_examples"]

#: The name a default function has before a compile tells its real one.
DEFAULT_FUNCTION = "(default function)"

Kept = TypeVar("Kept")


@dataclass
class SweepRun(Generic[Kept]):
    """What a sweep came to: every point compiled, the sweep's own points first, then each
    probe in the order bisection compiled it; what the front kept of each; the map."""

    points: list[Point]
    kept: list[Kept]
    map: SweepMap
    #: The functions of the map, by their real names, in the example's order.
    functions: list[str]


def drive_sweep(sweep: Sweep, entries: Sequence[str], targets: Sequence[tuple[str, str]], budget: int,
                compile_point: Callable[[Point, tuple[str, ...] | None, Sequence[str]],
                                        tuple[Kept, Sequence[Result], str]]) -> SweepRun[Kept]:
    """Compile each point of ``sweep``, then the probes bisection asks for, at most ``budget``.

    :param entries: the functions as the example writes them (``""``: the default one).
    :param targets: ``(name, title)`` of each target, in order.
    :param compile_point: the front's compile of one point, ``(point, functions, target names)`` -> what
        the front keeps, the point's results (one per function and target compiled) and why it has none
        (``""``); ``functions`` is ``None`` for every function of the example, else the entries to compile.
    """
    names = [name for name, _ in targets]
    run: SweepRun[Kept] = SweepRun([], [], SweepMap(sweep, [], list(targets), [], []), [])
    outcomes: list[Outcome] = []

    def take(point: Point, functions: tuple[str, ...] | None, at: Sequence[str]) -> Outcome:
        kept, results, problem = compile_point(point, functions, at)
        run.points.append(point)
        run.kept.append(kept)
        return point, results, problem

    outcomes = [take(point, None, names) for point in sweep.points()]
    run.functions = function_names(entries, outcomes)
    written = _entries_of(entries, run.functions)

    def compile_probes(probes: list[Probe]) -> list[Outcome]:
        grouped: dict[tuple[Point, str], list[Probe]] = {}
        for probe in probes:
            grouped.setdefault((probe.point, probe.target), []).append(probe)
        return [take(point, tuple(dict.fromkeys(written.get(p.function, p.function) for p in group)), [target])
                for (point, target), group in grouped.items()]

    run.map = bisect(sweep, outcomes, run.functions, list(targets), compile_probes, budget)
    return run


def function_names(entries: Sequence[str], outcomes: Sequence[Outcome]) -> list[str]:
    """The functions of a sweep by their real names: each entry as written, the default one
    (``""``) as its reports name it; then any other function the compiles gave (a function
    object's gradient variant), in the order met."""
    found = list(dict.fromkeys(r.function for _, results, _ in outcomes for r in results))
    unnamed = [name for name in found if name not in entries]
    names: list[str] = []
    for entry in entries:
        names += [entry] if entry else (unnamed[:1] or [DEFAULT_FUNCTION])
    names += unnamed
    return list(dict.fromkeys(names)) or [DEFAULT_FUNCTION]


def _entries_of(entries: Sequence[str], names: Sequence[str]) -> dict[str, str]:
    """Each function's real name -> the example's entry that compiles it (a probe compiles the
    example's own entry: the default one is ``""``)."""
    out = {entry: entry for entry in entries if entry}
    if "" in entries:
        out.update({name: "" for name in names if name not in out})
    return out


def sweep_examples(example: Example, targets: Sequence[targets_mod.Target],
                   compile_example: Callable[[Example, list[targets_mod.Target]], tuple[Kept, Sequence[Result]]],
                   cannot_make: Callable[[Point, str, tuple[str, ...], list[str]], Kept]) -> SweepRun[Kept]:
    """:func:`drive_sweep` of a swept example: each point (a probe too) the ordinary example
    :func:`~sphinx_jaxhlo.pipeline.plan.point_example` makes of it.

    :param compile_example: compiles one point's example for some targets: what the front keeps, and the
        results.
    :param cannot_make: what the front keeps of a point whose arguments cannot be made:
        ``(point, why, functions, target names)``.
    """
    assert example.sweep is not None
    by_name = {t.name: t for t in targets}

    def compile_point(point: Point, functions: tuple[str, ...] | None,
                      at: Sequence[str]) -> tuple[Kept, Sequence[Result], str]:
        made = point_example(example, point, functions)
        if made.example is None:
            return cannot_make(point, made.problem, functions or example.functions, list(at)), [], made.problem
        kept, results = compile_example(made.example, [by_name[name] for name in at])
        return kept, results, ""

    return drive_sweep(example.sweep, example.functions, [(t.name, t.title) for t in targets], example.bisect,
                       compile_point)


# -- a function object's call ----------------------------------------------------------------------


def spec_strings(tree: Any) -> list[str]:
    """The strings of a call's arguments (a nest of specs, values and Python objects), in order."""
    return [leaf for leaf in container_leaves(tree) if isinstance(leaf, str)]


def call_sweep(sweep: str | Mapping[str, Any], args: Sequence[Any], kwargs: Mapping[str, Any],
               static: Mapping[str, Any], spell: Spelling = PYTHON) -> Sweep:
    """The sweep of a function object's call: the symbols its spec strings name are sizes,
    the others static arguments by name; checked by the rules of the directive's options
    (:func:`~sphinx_jaxhlo.core.example.check_sweep`).

    :raises OptionProblem: a malformed sweep, a size no symbol gives, a symbol also in ``static``.
    """
    try:
        parsed = parse_sweep(sweep_text(sweep))
    except SweepError as exc:
        raise OptionProblem("sweep", f"{spell('sweep')} {exc}") from None
    used: list[str] = []
    for text in spec_strings([list(args), dict(kwargs)]):
        try:
            used += [s for s, _ in size_symbols(text) if s not in used]
        except SpecError:
            continue  # a malformed spec: the compile at each point says so
    missing = [s for s in used if s not in parsed.symbols]
    if missing:
        raise OptionProblem("args", f"size {missing[0]!r} has no value: {spell('sweep')} gives "
                                    f"{', '.join(parsed.symbols)}")
    parsed = dataclasses.replace(parsed, args=", ".join(spec_strings(list(args))),
                                 static=tuple(s for s in parsed.symbols if s not in used))
    checked = check_sweep(parsed, exp.Expectations([]), tuple((k, repr(v)) for k, v in static.items()), (), "",
                          spell)
    assert checked is not None
    return checked
