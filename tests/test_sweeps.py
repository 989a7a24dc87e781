"""Sweeps: symbolic sizes and ``:sweep:`` parsed (errors located, in each front's spelling),
each point an ordinary example through the pipeline (cached, snapshotted, scheduled), the
flips between neighbours, claims over ranges failing at the right point, and the map.

The pipeline tests compile nothing: a fake compile function answers each request with a
report made from its sizes (the seed's written-out form on the H100, as measured: the
cosine table stored up to 4096, fused from 5000, and at one size a compile that runs out
of memory).  ``tests/test_sweep_snapshots.py`` finds the flips on the stored real HLO of
the guide's sweeps.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest

from sphinx_jaxhlo.compiler.client import Outcome
from sphinx_jaxhlo.core.example import COMMAND_LINE, DIRECTIVE, PYTHON, OptionProblem, parse_example
from sphinx_jaxhlo.core.expectations import ExpectationSyntaxError, parse_expectations
from sphinx_jaxhlo.core.flips import SweepMap, figure_of
from sphinx_jaxhlo.core.report import (
    CompileError,
    Fusion,
    FusionDecision,
    Materialized,
    Memory,
    Reason,
    Reduction,
    Report,
)
from sphinx_jaxhlo.core.settings import Settings
from sphinx_jaxhlo.core.specs import SpecError, parse_args, size_symbols
from sphinx_jaxhlo.core.sweeps import (
    Point,
    SweepError,
    parse_condition,
    parse_flip_claim,
    parse_sweep,
)
from sphinx_jaxhlo.pipeline.build import Build, Warnings
from sphinx_jaxhlo.pipeline.forecast import forecast
from sphinx_jaxhlo.pipeline.plan import sweep_points
from sphinx_jaxhlo.pipeline.run import process
from sphinx_jaxhlo.store.cache import ReportCache

SOURCE = """\
import jax.numpy as jnp

def written(pos, hkl):
    phase = pos[:, 0, None] * hkl[None, :, 0] + pos[:, 1, None] * hkl[None, :, 1] + pos[:, 2, None] * hkl[None, :, 2]
    return jnp.sum(jnp.cos(phase), axis=0)
"""

OPTIONS = {"args": "f32[n,3], f32[d,3]", "sweep": "n=1024,2048,4096,5000,8192,16384, d=n", "targets": "cpu"}


# -- the option -------------------------------------------------------------------------------------

def test_a_range_is_eight_sizes_evenly_spaced_on_a_log_scale_both_ends_included() -> None:
    (axis,) = parse_sweep("n=1000..100000").axes
    assert len(axis.values) == 8 and axis.values[0] == 1000 and axis.values[-1] == 100000
    ratios = [b / a for a, b in zip(axis.values, axis.values[1:], strict=False)]
    assert max(ratios) / min(ratios) < 1.01  # evenly spaced, up to rounding
    assert parse_sweep("n=1000..100000/3").axes[0].values == (1000, 10000, 100000)
    assert parse_sweep("n=1024..16384*2").axes[0].values == (1024, 2048, 4096, 8192, 16384)
    assert parse_sweep("n=1024..10000*2").axes[0].values == (1024, 2048, 4096, 8192)  # the last only when reached
    assert parse_sweep("n=100..400+100").axes[0].values == (100, 200, 300, 400)
    assert parse_sweep("n=5000, 1_000,2**12").axes[0].values == (1000, 4096, 5000)
    assert parse_sweep("n=1e3..1e5/3").axes[0].values == (1000, 10000, 100000)


def test_a_list_is_sorted_and_runs_to_the_next_symbol() -> None:
    sweep = parse_sweep("n=5000,1000,4096, d=n")
    (axis,) = sweep.axes
    assert axis.names == ("n", "d") and axis.values == (1000, 4096, 5000)
    assert [p.as_dict() for p in sweep.points()][1] == {"n": 4096, "d": 4096}
    assert sweep.points()[1].label == "n=4096" and sweep.points()[1].slot == "n4096"
    assert parse_sweep("n=2**12, m=1e3").axes[0].values == (4096,)


def test_two_symbols_make_a_grid_the_first_varying_slowest() -> None:
    sweep = parse_sweep("rows=1000,10000, K=4..64*4")
    assert sweep.is_grid and [a.name for a in sweep.axes] == ["rows", "K"]
    points = sweep.points()
    assert [p.label for p in points[:3]] == ["rows=1000, K=4", "rows=1000, K=16", "rows=1000, K=64"]
    assert points[4].index == (1, 1) and points[4].slot == "rows10000-K16"
    assert sweep.describe() == "rows from 1,000 to 10,000 (2 sizes) and K from 4 to 64 (3 sizes)"


@pytest.mark.parametrize(("text", "message", "column"), [
    ("", "the sweep is empty", 0),
    ("n", "expected '=' after 'n' at column 2", 1),
    ("n=", "ends early: expected the values of 'n'", 2),
    ("n=x..4", "expected a size at column 3, found 'x'", 2),
    ("n=5..2", "the range 5..2 at column 3 does not go up", 2),
    ("n=1,2,2", "n=2 is given twice (column 7)", 6),
    ("n=1.5", "'1.5' at column 3 is not a positive integer", 2),
    ("n=0,4", "'0' at column 3 is not a positive integer", 2),
    ("n=10..100/1", "at least 2 points", 10),
    ("n=10..100/65", "at most 64", 10),
    ("n=10..100*1", "must be more than 1", 10),
    ("n=1,2, n=3", "symbol 'n' is given twice (column 8)", 7),
    ("n=d", "'d' is not a size: give n positive integers, such as n=1000..100000 or n=1000,4096", 2),
    ("n=abc", "'abc' is not a size: give n positive integers", 2),
    ("m=4, n=abc", "n=abc at column 8: 'abc' is neither a size nor a swept symbol: give n sizes "
                   "(n=1000..100000) or tie it to one of m (n=m)", 7),
    ("n=d, d=n, m=1", "go round in a circle", 2),
    ("a=1, b=2, c=3", "at most two", 10),
    ("a=100..100000/20, b=100..100000/20", "400 points; at most 256", 0),
    ("n=1 2", "unexpected '2' at column 5", 4),
    ("n=1,,2", "expected a size at column 5", 4),
    ("n=1; d=n", "unexpected ';' at column 4", 3),
])
def test_a_malformed_sweep_is_located(text: str, message: str, column: int | None) -> None:
    with pytest.raises(SweepError) as info:
        parse_sweep(text)
    assert message in str(info.value)
    if column is not None:
        assert info.value.column == column


def test_sizes_named_by_symbols_parse_only_with_their_values() -> None:
    assert size_symbols("f32[n,3], f32[d,3], x={a: f32[n]}") == [("n", 4), ("d", 14), ("n", 30)]
    specs = parse_args("f32[n,3], k=bf16[2,m]", {"n": 4096, "m": 7})
    assert str(specs) == "f32[4096,3], k=bf16[2,7]"
    with pytest.raises(SpecError, match=r"size 'm' at column 15 has no value \(the sweep gives: n\)"):
        parse_args("f32[n,3], f32[m]", {"n": 1})
    with pytest.raises(SpecError, match="needs a sweep"):
        parse_args("f32[n,3]")
    with pytest.raises(SpecError, match="more than 2\\*\\*53"):
        parse_args("f32[n,n,n]", {"n": 10**6})


@pytest.mark.parametrize(("spell", "args", "sweep"), [(DIRECTIVE, ":args:", ":sweep:"),
                                                      (COMMAND_LINE, "--args:", "--sweep:"),
                                                      (PYTHON, "args:", "sweep:")])
def test_errors_are_spelled_as_each_front_names_its_options(spell: Any, args: str, sweep: str) -> None:
    def problem(**options: str) -> OptionProblem:
        with pytest.raises(OptionProblem) as info:
            parse_example(SOURCE, {**OPTIONS, **options}, spell=spell)
        return info.value

    no_sweep = problem(sweep="")
    assert no_sweep.subtype == "args"
    assert no_sweep.message == (f"{args} dimension 'n' at column 5 is not a number: a size named by a symbol needs "
                                f"its values, given by {sweep} n=1000..100000")
    bad = problem(sweep="n=1000..")
    assert bad.subtype == "sweep" and bad.message.startswith(f"{sweep} the sweep ends early")
    unknown = problem(args="f32[n,3], f32[e,3]")
    assert unknown.message == f"{args} size 'e' at column 15 has no value: the sweep gives n, d"
    ranged = problem(sweep="", args="f32[8,3], f32[8,3]", **{"expect-reduction": "fused for n>=5000"})
    assert ranged.message.startswith(f"{spell('expect-reduction')} fused for n>=5000: a claim over a range")
    assert ranged.message.endswith(f"needs {sweep}")
    other = problem(**{"expect-max-temp": "1GB for m<3"})
    assert other.message == f"{spell('expect-max-temp')} 1GB for m<3: 'm' is not swept ({sweep} gives n, d)"
    static = problem(sweep="n=1,2, d=n, chunk=3", static="chunk=4")
    assert static.message.startswith(f"{spell('static')} chunk is swept by {sweep} too")
    size = problem(static="n=5, axis=0")
    assert size.subtype == "option"
    assert size.message == f"{spell('static')} n=5: n is a size of the arguments, given by the sweep; remove n=5"
    param = problem(sweep="n=1,2, d=n, chunkk=3")
    assert param.message == f"{sweep} 'chunkk' is neither a size of {args} nor a parameter of written"


def test_a_grid_flip_claim_names_its_axis() -> None:
    options = {"args": "f32[rows,K], f32[K]", "sweep": "rows=10,100, K=1,2", "targets": "cpu"}
    with pytest.raises(OptionProblem, match="on a grid, name the axis"):
        parse_example(SOURCE, {**options, "expect-flip": "between 1 and 2"})
    example = parse_example(SOURCE, {**options, "expect-flip": "between K=1 and K=2 for rows=10, none for rows=100"})
    assert [e.where for e in example.expectations] == ["rows=10", "rows=100"]


def test_a_swept_static_argument_and_the_points_of_an_example() -> None:
    source = "def f(x, chunk):\n    return x\n"
    example = parse_example(source, {"args": "f32[n]", "sweep": "n=10,20, chunk=2,5", "static": "axis=0"},
                            docname="doc", line=4, ordinal=2)
    assert example.sweep is not None and example.sweep.static == ("chunk",)
    points = sweep_points(example)
    assert [p.example.slot_name for p in points if p.example] == [
        "example-2-n10-chunk2", "example-2-n10-chunk5", "example-2-n20-chunk2", "example-2-n20-chunk5"]
    last = points[-1].example
    assert last is not None and str(last.specs) == "f32[20]" and last.static == (("axis", "0"), ("chunk", "5"))
    assert last.sweep is None and last.point is not None and last.point.label == "n=20, chunk=5"


def test_a_point_whose_arguments_cannot_be_made_is_a_point_with_a_problem() -> None:
    example = parse_example(SOURCE, {"args": "f32[n,n,n], f32[3,3]", "sweep": "n=10,1000000"})
    first, second = sweep_points(example)
    assert first.example is not None and second.example is None
    assert second.problem.startswith("at n=1000000: the arguments f32[n,n,n], f32[3,3] cannot be made")


# -- claims -----------------------------------------------------------------------------------------

def test_conditions_and_flip_claims() -> None:
    assert parse_condition("n>=5000").holds({"n": 5000}) and not parse_condition("n>=5000").holds({"n": 4999})
    both = parse_condition("1000<=n<=4096 and K>3")
    assert both.holds({"n": 1000, "K": 4}) and not both.holds({"n": 4097, "K": 4})
    assert not both.holds({"n": 2000, "K": 3})
    assert parse_condition("5000<n").clauses == (("n", ">", 5000),)
    for bad, message in (("n>=", "ends early"), ("n>=5 or n<2", "join comparisons with 'and'"),
                         ("n 5", "is not a comparison")):
        with pytest.raises(SweepError, match=message):
            parse_condition(bad)
    claim = parse_flip_claim("producer between K=128 and K=256")
    assert (claim.what, claim.symbol, claim.low, claim.high) == ("producer", "K", 128, 256)
    assert parse_flip_claim("kernels none").expects_none
    for bad, message in (("between 5 and 4", "the second size must be the larger"),
                         ("bewteen 1 and 2", "expected 'between A and B' or 'none'"),
                         ("between K=1 and n=3", "different symbols")):
        with pytest.raises(SweepError, match=message):
            parse_flip_claim(bad)


def test_range_claims_apply_where_their_condition_holds_the_most_specific_first() -> None:
    claims = parse_expectations({
        "expect-reduction": "unfused, gpu:h100=unfused for n<=4096, gpu:h100=fused for n>=5000",
        "expect-kernels": "cpu<=3 for n>5, 2", "expect-flip": "gpu:h100=reduction between 4096 and 5000"})
    assert {e.kind for e in claims.over_ranges} == {"reduction", "kernels", "flip"}
    at_4096, at_5000 = claims.at_point({"n": 4096}), claims.at_point({"n": 5000})
    assert [e.value for e in at_4096.for_target("gpu:h100") if e.kind == "reduction"] == ["unfused"]
    assert [(e.value, e.where) for e in at_5000.for_target("gpu:h100") if e.kind == "reduction"] == [
        ("fused", "n>=5000")]
    assert [e.value for e in at_5000.for_target("cpu") if e.kind == "reduction"] == ["unfused"]
    assert not [e for e in at_5000.items if e.kind == "flip"]  # about the whole sweep, not a point
    with pytest.raises(ExpectationSyntaxError, match="given twice for n>=1"):
        parse_expectations({"expect-reduction": "fused for n>=1, fused for n>=1"})
    with pytest.raises(ExpectationSyntaxError, match="expect-flip"):
        parse_expectations({"expect-flip": "cpu=betwen 1 and 2"})


# -- the pipeline, with reports made from the sizes ----------------------------------------------------

FUSED_FROM, FAILS_FROM = 5000, 16384


def seed_report(request: Any) -> Report:
    """The written-out seed on the H100 as measured: stored up to 4096, fused from 5000; at
    16384 (here) the compile runs out of memory."""
    n = request.specs.args[0].shape[0]
    report = Report(function=request.function or "written", target=request.target, source=request.source)
    if n >= FAILS_FROM:
        report.error = CompileError("RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED: Ran out of memory (here)")
        return report
    table = f"f32[{n},{n}]"
    if n < FUSED_FROM:
        report.memory = Memory(temp_bytes=4 * n * n, peak_bytes=4 * n * n + 24 * n)
        report.fusions = [Fusion("loop_cosine_fusion", "Loop", None, ["multiply", "add", "cosine"], table, 4 * n * n),
                          Fusion("input_reduce_fusion", "Input", None, ["reduce"], f"f32[{n}]", 4 * n)]
        reason = Reason("elementwise", "It is a kernel of elementwise ops, stored before the reduction reads it.")
        report.materialized = [Materialized("loop_cosine_fusion", table, 4 * n * n, "loop_cosine_fusion",
                                            ["input_reduce_fusion"], producer_op="cos", reason=reason)]
        report.reductions = [Reduction("reduce_sum.7.1", "input_reduce_fusion", [], "loop_cosine_fusion", 4 * n * n,
                                       table, [5], op="reduce_sum", reason=reason)]
        report.fusion_decisions = [FusionDecision(
            "priority-fusion", "xla/backends/gpu/transforms/priority_fusion.cc", "slower-fused", "fusion.6",
            ["reduce_sum.7.0"], "fused 511.42 us, unfused 269.46 us",
            'update_priority { producer_name: "fusion.6" consumer_names: "reduce_sum.7.0" us_fused: 511.42 '
            "us_unfused: 269.46 }", "loop_cosine_fusion", [""])]
    else:
        partial = f"f32[{n // 100},{n}]"
        report.memory = Memory(temp_bytes=4 * n * (n // 100), peak_bytes=4 * n * (n // 100) + 24 * n)
        report.fusions = [Fusion("input_reduce_fusion", "Input", None, ["multiply", "add", "cosine", "reduce"],
                                 partial, 4 * n * (n // 100)),
                          Fusion("input_reduce_fusion.1", "Input", None, ["reduce"], f"f32[{n}]", 4 * n)]
        report.materialized = [Materialized("input_reduce_fusion", partial, 4 * n * (n // 100),
                                            "input_reduce_fusion", ["input_reduce_fusion.1"])]
        report.reductions = [
            Reduction("reduce.3", "input_reduce_fusion", ["multiply", "add", "cosine"], None, 4 * n * n, table, [5],
                      op="reduce_sum"),
            Reduction("reduce_sum.7.1", "input_reduce_fusion.1", [], None, 4 * n * (n // 100), partial, [5],
                      partial_of="input_reduce_fusion", op="reduce_sum", origin="second-stage")]
    return report


class Compiler:
    """A compile function that answers with :func:`seed_report` and counts what it was asked."""

    def __init__(self) -> None:
        self.requests: list[Any] = []

    def __call__(self, batch: Any) -> list[Outcome]:
        self.requests += [request for request, _ in batch]
        return [Outcome(seed_report(request), None, 0.01) for request, _ in batch]


def never(batch: Any) -> list[Outcome]:
    raise AssertionError(f"compiled {[str(r.specs) for r, _ in batch]}")


def make_build(compile_: Any, cache: ReportCache | None = None, **settings: Any) -> Build:
    return Build(Settings({f"jaxhlo_{k}": v for k, v in settings.items()}), Warnings(), compile_, cache=cache)


def seed_example(**options: str) -> Any:
    return parse_example(SOURCE, {**OPTIONS, **options}, docname="guide/sweeps", line=12, ordinal=1)


def test_each_point_is_an_ordinary_compile_and_the_flips_are_found(tmp_path: Path) -> None:
    compiler = Compiler()
    build = make_build(compiler, ReportCache(tmp_path / "cache"))
    done = process(build, seed_example())
    sizes = [r.specs.args[0].shape[0] for r in compiler.requests]
    assert [str(r.specs) for r in compiler.requests[:6]] == [
        f"f32[{n},3], f32[{n},3]" for n in (1024, 2048, 4096, 5000, 8192, 16384)]
    # then bisection, between the two pairs whose decisions differ: halfway each time, one compile a size
    assert sizes[6:8] == [4548, 12288] and len(sizes) == len(set(sizes))
    assert all(4096 < n < 5000 or 8192 < n < 16384 for n in sizes[6:])
    assert len(sizes[6:]) == math.ceil(math.log2(5000 - 4096)) + math.ceil(math.log2(16384 - 8192))
    sweep = done.sweep
    assert isinstance(sweep, SweepMap) and sweep.budget == 48 and len(sweep.probes) == len(sizes) - 6
    assert [f.status for f in sweep.figures if not f.point.probe] == ["unfused"] * 3 + ["fused"] * 2 + [
        "compile error"]
    flip, error = sweep.flips
    assert (flip.between, flip.kinds, flip.exact) == ("n=4999 and n=5000", ["reduction"], True)
    assert flip.changes == ["reduce_sum (line 5): unfused, reading f32[4999,4999] (100.0 MB) from elementwise kernel "
                            "loop_cosine_fusion (kLoop: multiply, add, cosine) at n=4999 -> fused at n=5000"]
    # the compiler's reasons at both sides: XLA's cost figures at the unfused one
    assert any("511.4 µs fused against 269.5 µs unfused (slower fused)" in r for r in flip.reasons_before)
    assert flip.reasons_after == ["reduce_sum (line 5) at n=5000: fused: input_reduce_fusion (kInput) computes its "
                                  "data (multiply, add, cosine) and reduces it in one kernel"]
    assert (error.between, error.kinds, error.exact) == ("n=16383 and n=16384", ["error"], True)
    assert "RESOURCE_EXHAUSTED: Ran out of memory (here)" in error.changes[0]
    # what was not looked at: every interval whose two ends agree, none that holds a flip
    assert {(i.low, i.high) for i in sweep.intervals if i.low < 4096} == {(1024, 2048), (2048, 4096)}
    assert {i.why for i in sweep.intervals} == {"agree"}
    # a point where the compiler refused is a point of the map: no warning, a record that says so
    reporter = build.reporter
    assert isinstance(reporter, Warnings) and reporter.items == []
    assert [(r.function, r.status) for r in done.records][5] == ("written at n=16384", "compile error")
    assert [r.function for r in done.records][6] == "written at n=4548"
    assert len(done.slots) == 0 and len(done.results) == len(sizes)


def test_range_claims_fail_at_the_right_point_and_name_it(tmp_path: Path) -> None:
    example = seed_example(bisect="0", **{"expect-reduction": "unfused for n<=2048, fused for n>=4000",
                                          "expect-max-temp": "1GB for n<=100000",
                                          "expect-flip": "between 4096 and 5000, reduction between 1024 and 2048"})
    build = make_build(Compiler())
    done = process(build, example)
    reporter = build.reporter
    assert isinstance(reporter, Warnings)
    failed = [m for m, subtype, where in reporter.items if subtype == "expectation"]
    assert failed == [
        "written on cpu at n=4096: expected reduction fused for n>=4000, found 1 unfused (reduce_sum.7.1 reads "
        "loop_cosine_fusion) [FAILED]",
        "written on cpu at n=16384: expected max temp 1GB for n<=100000, found compilation failed with "
        "RESOURCE_EXHAUSTED [FAILED]",
        "written on cpu at n=16384: expected reduction fused for n>=4000, found compilation failed with "
        "RESOURCE_EXHAUSTED [FAILED]"]
    # claims about sizes no compile looked at: not resolved, a warning of their own
    unresolved = [m for m, subtype, where in reporter.items if subtype == "unresolved"]
    assert unresolved == [
        "written on cpu: expected flip reduction between 1024 and 2048, found no flip within n=1024..2048 "
        "(elsewhere: reduction between n=4096 and n=5000); not resolved: n=1024..2048 (both ends agree; the sizes "
        "between were not compiled) [NOT RESOLVED]",
        "written on cpu: expected reduction unfused for n<=2048, found held at the 2 sizes compiled where n<=2048; "
        "not resolved: n=1024..2048 (both ends agree; the sizes between were not compiled) [NOT RESOLVED]"]
    assert all(where == ("guide/sweeps", 12) for _, _, where in reporter.items)
    outcomes = [o for r in done.results for o in r.outcomes]
    assert sum(o.passed for o in outcomes) == 9 and sum(not o.passed for o in outcomes) == 3
    assert done.sweep is not None and [(c.passed, c.unresolved) for c in done.sweep.checks] == [
        (True, False), (False, True), (False, True)]


def test_a_flip_the_points_do_not_resolve_says_where_to_add_sizes_and_bisection_resolves_it() -> None:
    claim = {"expect-flip": "between 4096 and 5000"}
    for budget, low, high in (("0", 4096, 8192), ("2", 4096, 5120)):
        found = f"reduction between n={low} and n={high}"
        compiler = Compiler()
        done = process(make_build(compiler), seed_example(sweep="n=1024,4096,8192, d=n", bisect=budget, **claim))
        assert done.sweep is not None and len(compiler.requests) == 3 + int(budget)
        (check,) = done.sweep.checks
        assert not check.passed and check.unresolved and check.actual == (
            f"{found}: the sweep's points do not resolve n=4096..5000 (add sizes between {low} and {high}, or "
            "raise the bisection budget)")
        assert check.message.endswith("[NOT RESOLVED]")
    done = process(make_build(Compiler()), seed_example(sweep="n=1024,4096,8192, d=n", **claim))
    assert done.sweep is not None
    (check,) = done.sweep.checks
    assert check.passed and check.actual == "reduction between n=4999 and n=5000"


def test_a_rebuild_from_the_cache_compiles_nothing(tmp_path: Path) -> None:
    cache = ReportCache(tmp_path / "cache")
    first = process(make_build(Compiler(), cache), seed_example())
    build = make_build(never, cache)
    assert forecast(build, [seed_example()]) == []  # nothing left for the scheduler either
    again = process(build, seed_example())
    assert again.sweep is not None and first.sweep is not None
    assert [f.value for f in again.sweep.figures] == [f.value for f in first.sweep.figures]
    assert not again.compiled


def test_a_rebuild_from_snapshots_compiles_nothing(tmp_path: Path) -> None:
    compiler = Compiler()
    build = make_build(compiler, snapshot_mode="update")
    build.snapshot_root = tmp_path / "_snapshots"
    done = process(build, seed_example())
    written = sorted(p.name for p in (tmp_path / "_snapshots" / "guide" / "sweeps").glob("*.json"))
    # the default function: "default" in the slot's name, as for any example without :function:; the
    # sizes bisection compiled have their slots too
    assert done.sweep is not None and done.sweep.probes
    probed = [f"example-1-n{p['n']}.default.cpu.json" for p in done.sweep.probes]
    assert written == sorted([*(f"example-1-n{n}.default.cpu.json" for n in (1024, 2048, 4096, 5000, 8192, 16384)),
                              *probed])
    assert done.slots == {name.removesuffix(".json") for name in written}
    build = make_build(never, snapshot_mode="use")
    build.snapshot_root = tmp_path / "_snapshots"
    assert forecast(build, [seed_example()]) == []
    again = process(build, seed_example())
    assert again.sweep is not None and done.sweep is not None and not again.compiled
    # (the analysis is derived again from the stored HLO, which these made-up reports lack: their figures stay,
    # their reductions do not, so only the compile error's flip is bisected again, from its snapshots)
    before = {f.point: f.value for f in done.sweep.figures}
    assert {f.point: f.value for f in again.sweep.figures}.items() <= before.items()
    assert again.sweep.probes and set(again.sweep.probes) <= set(done.sweep.probes)
    assert [f.between for f in again.sweep.flips] == ["n=16383 and n=16384"]
    assert [f for f in again.sweep.figures if not f.point.probe][-1].status == "compile error"
    assert isinstance(build.reporter, Warnings) and build.reporter.items == []


def test_the_forecast_schedules_every_point_with_the_other_examples() -> None:
    build = make_build(never)
    other = parse_example(SOURCE, {"args": "f32[8,3], f32[8,3]", "targets": "cpu"}, docname="x", line=1)
    planned = forecast(build, [seed_example(), other])
    assert len(planned) == 7 and {p.docname for p in planned} == {"guide/sweeps", "x"}
    assert len({p.key for p in planned}) == 7


# -- the map ----------------------------------------------------------------------------------------

def test_the_maps_points_are_their_reports_figures_and_a_failed_compile_is_drawn_as_such() -> None:
    from sphinx_jaxhlo.render.sweep_chart import line_svg
    from sphinx_jaxhlo.render.sweep_map import points_table

    done = process(make_build(Compiler()), seed_example())
    sweep = done.sweep
    assert sweep is not None
    svg = line_svg(sweep, "cpu", sweep.flips, "uid", "title <&>")
    drawn = re.findall(r'class="jaxhlo-sweep-point jaxhlo-sweep-(\w+)" data-function="written" data-size="(\d+)"'
                       r'(?: data-probe="(\w*)")? data-bytes="(\d+)"', svg)
    reports = {r.report.memory.temp_bytes: r for r in done.results if r.report and not r.report.error}
    expected = [("unfused" if n < FUSED_FROM else "fused", str(n), str(seed_report_temp(n)))
                for n in (1024, 2048, 4096, 5000, 8192)]
    assert [(s, n, b) for s, n, probe, b in drawn if not probe] == expected
    assert all(int(b) in reports for *_, b in drawn)
    # the sizes bisection compiled: drawn too, smaller, each with its report's figure
    probes = [(int(n), int(b)) for s, n, probe, b in drawn if probe == "n"]
    assert sorted(probes) == sorted((p["n"], seed_report_temp(p["n"])) for p in sweep.probes
                                    if p["n"] < FAILS_FROM)
    # the failed compile: its marker crossed out at the top, its status in the tooltip
    failed = re.search(r'<g class="jaxhlo-sweep-point jaxhlo-sweep-compile-error" [^>]*data-size="16384"[^>]*>'
                       r'<title>([^<]*)</title>', svg)
    assert failed is not None and failed.group(1).startswith("n=16384: compile error, RESOURCE_EXHAUSTED")
    assert ">error</text>" in svg  # and the legend keys it
    assert "title &lt;&amp;&gt;" in svg and "title <&>" not in svg
    # each flip a dashed line, labelled with its number and the two neighbouring sizes
    assert svg.count('class="jaxhlo-sweep-flip"') == 2
    assert ">1: 4999|5000</text>" in svg and ">2: 16383|16384</text>" in svg
    # the table: the same figures, row by row
    table = points_table(sweep, "cpu", "The points")
    rows = [[c.text for c in row.cells] for row in table.rows]
    assert rows[2] == ["4,096", "unfused: reduce_sum (line 5)", "67.1 MB", "f32[4096,4096] (67.1 MB)", "2"]
    assert rows[5][:2] == ["16,384", "compile error: RESOURCE_EXHAUSTED: Ran out of memory (here)"]


def seed_report_temp(n: int) -> int:
    return 4 * n * n if n < FUSED_FROM else 4 * n * (n // 100)


def test_a_grid_draws_cells_and_the_boundary_between_them() -> None:
    from sphinx_jaxhlo.render.sweep_chart import grid_svg

    source = "import jax.numpy as jnp\n\ndef f(m, v):\n    return jnp.sum(jnp.cos(m @ v))\n"

    def compile_(batch: Any) -> list[Outcome]:
        out = []
        for request, _ in batch:
            rows, k = request.specs.args[0].shape
            gemm = (rows + 1) * k >= 10**7  # XLA's matrix-vector rewrite, as measured
            report = Report(function="f", target=request.target, source=request.source,
                            memory=Memory(temp_bytes=4 * rows))
            producer = Fusion("gemm_fusion_dot", "Custom", "__triton_nested_gemm_fusion", ["dot", "cosine"],
                              f"f32[{rows},1]", 4 * rows) if gemm else \
                Fusion("input_reduce_fusion.1", "Input", None, ["multiply", "reduce", "cosine"], f"f32[{rows}]",
                       4 * rows)
            reason = Reason("gemm" if gemm else "elementwise", "why")
            report.fusions = [producer, Fusion("input_reduce_fusion", "Input", None, ["reduce"], "f32[]", 4)]
            report.materialized = [Materialized(producer.name, producer.shape, 4 * rows, producer.name,
                                                ["input_reduce_fusion"], reason=reason)]
            report.reductions = [Reduction("reduce.3", "input_reduce_fusion", [], producer.name, 4 * rows,
                                           producer.shape, [4], op="reduce_sum", reason=reason)]
            out.append(Outcome(report, None, 0.01))
        return out

    example = parse_example(source, {"args": "f32[rows,K], f32[K]", "sweep": "rows=1000,100000, K=64,128,256",
                                     "targets": "cpu", "expect-flip": "producer between K=64 and K=256 for "
                                     "rows=100000, producer none for rows=1000"})
    done = process(make_build(compile_), example)
    sweep = done.sweep
    assert sweep is not None
    # "none" along K at 1000 rows: no flip at the sizes compiled, but 64..128..256 were not looked at
    assert [(c.passed, c.unresolved) for c in sweep.checks] == [(True, False), (False, True)]
    assert sweep.checks[1].actual == (
        "no flip between neighbours compiled; not resolved: K=64..128 at rows=1000 (both ends agree; the sizes "
        "between were not compiled); K=128..256 at rows=1000 (both ends agree; the sizes between were not compiled)")
    # bisection finds where (rows + 1) * K reaches ten million, along each axis, at neighbouring sizes
    assert [(f.between, f.kinds) for f in sweep.flips] == [
        ("rows=78123 and rows=78124 at K=128", ["producer"]), ("rows=39061 and rows=39062 at K=256", ["producer"]),
        ("K=99 and K=100 at rows=100000", ["producer"])]
    svg = grid_svg(sweep, "f", "cpu", sweep.flips, "uid", "grid")
    # the cells are the sweep's own points; each flip on the boundary between the two cells around it
    assert svg.count('class="jaxhlo-sweep-cell') == 6 and svg.count("jaxhlo-sweep-boundary") == 3
    assert "between rows=78123 and rows=78124 at K=128: " in svg
    # the legend names what made the stored buffer, wrapped to the picture's width
    assert re.search(r">unfused, buffer by gemm kCustom\s?(</text><text [^>]*>)?__triton_nested_gemm_fusion</text>",
                     svg)


def test_a_point_without_a_report_ends_no_flip() -> None:
    from sphinx_jaxhlo.core.flips import compare
    from sphinx_jaxhlo.core.results import Result
    from sphinx_jaxhlo.core.sweeps import Point

    a, b = Point((("n", 1),), ("n",), (0,)), Point((("n", 2),), ("n",), (1,))
    missing = figure_of(a, Result("f", "cpu", "CPU", missing="install it"), "temp", "f", "cpu")
    timeout = figure_of(b, Result("f", "cpu", "CPU"), "temp", "f", "cpu", "not compiled")
    assert (missing.status, timeout.status) == ("missing", "no report")
    assert compare(missing, timeout, "n") is None


# -- the API's value ----------------------------------------------------------------------------------

def sweep_reports() -> Any:
    from sphinx_jaxhlo.api.reports import Reports
    from sphinx_jaxhlo.api.sweep_reports import compile_sweep

    def compile_one(example: Any, targets: Any, show: Any) -> Reports:
        request = type("R", (), {"specs": example.specs, "function": "written", "target": "gpu:h100",
                                 "source": example.source})()
        return Reports([seed_report(request)], function="written", targets=["gpu:h100"], show=show)

    from sphinx_jaxhlo.core.targets import get_target

    example = parse_example(SOURCE, {**OPTIONS, "targets": "gpu:h100"}, spell=PYTHON)
    return compile_sweep(example, [get_target("gpu:h100")], ["summary"], compile_one)


def test_the_api_value_lists_points_reports_and_flips_and_round_trips() -> None:
    from sphinx_jaxhlo.api.sweep_reports import SweepReports

    sweep = sweep_reports()
    # the sweep's points, then the sizes bisection compiled (each with its reports)
    assert len(sweep) == 6 + len(sweep.probes) and [p.label for p in sweep.points][:2] == ["n=1024", "n=2048"]
    assert sweep.points[6:] == sweep.probes and sweep.probes[0].label == "n=4548"
    assert sweep["n=4096"]["gpu:h100"].memory.temp_bytes == 4 * 4096**2
    assert sweep.at(n=4999)["gpu:h100"].memory.temp_bytes == 4 * 4999**2
    assert sweep.at(n=5000) is sweep[3] and sweep.title == "written(f32[n,3], f32[d,3])"
    assert [f.between for f in sweep.flips] == ["n=4999 and n=5000", "n=16383 and n=16384"]
    text = str(sweep)
    assert "Flip 1, between n=4999 and n=5000 (neighbouring sizes; reduction)" in text and "511.4 µs fused" in text
    assert re.search(r"4,096\s+unfused: reduce_sum \(line 5\)\s+67.1 MB", text)
    assert "H100: the sizes bisection compiled" in text and re.search(r"4,548\s+fused", text) is None
    assert re.search(r"4,999\s+unfused: reduce_sum \(line 5\)\s+100.0 MB", text)
    assert (f"Bisection compiled {len(sweep.probes)} more sizes here (budget 48 for the sweep), each an ordinary "
            "compile, chasing the reductions' verdicts, the stored buffers' producers and the compile's success: 2 of "
            "2 flips located") in " ".join(text.split())
    assert "not looked at: n=1024..2048, n=2048..4096" in " ".join(text.split())
    again = SweepReports.from_json(sweep.to_json())
    assert again == sweep and [f.between for f in again.flips] == [f.between for f in sweep.flips]
    assert again.probes == sweep.probes and again.bisect == 48
    doc = sweep.to_dict()
    assert [f["exact"] for f in doc["map"]["flips"]] == [True, True]
    assert {i["why"] for i in doc["map"]["not_resolved"]} == {"agree"}
    assert doc["map"]["bisection"] == {"budget": 48, "probes": len(sweep.probes),
                                       "compared": ["reduction", "producer", "error"], "claims": []}
    assert repr(sweep) == f"<SweepReports written(f32[n,3], f32[d,3]): {len(sweep)} points on gpu:h100, 2 flips>"
    with pytest.raises(ValueError, match="not a sphinx-jaxhlo sweep"):
        SweepReports.from_json('{"format": "other"}')
    page = sweep.to_html()
    assert page.count('class="jaxhlo-graph-svg jaxhlo-sweep-svg"') == 1 and "RESOURCE_EXHAUSTED" in page


def test_check_takes_range_claims_and_names_the_point_that_fails() -> None:
    sweep = sweep_reports()
    assert sweep.check(reduction="gpu:h100=unfused for n=4999, gpu:h100=fused for n=5000",
                       flip="reduction between 4096 and 5000, error between 8192 and 16384") is sweep
    # a claim over sizes nothing compiled: not a pass
    with pytest.raises(AssertionError) as info:
        sweep.check(reduction="gpu:h100=unfused for n<=4096")
    assert ("written on gpu:h100: expected reduction unfused for n<=4096, found held at the 3 sizes compiled where "
            "n<=4096; not resolved: n=1024..2048 (both ends agree; the sizes between were not compiled); "
            "n=2048..4096 (both ends agree; the sizes between were not compiled) [NOT RESOLVED]") in str(info.value)
    with pytest.raises(AssertionError) as info:
        sweep.check(max_temp="gpu:h100=20MB for n<=4096", flip="none")
    lines = str(info.value).splitlines()
    assert lines[0] == "jax-hlo check failed for written(f32[n,3], f32[d,3]) over n = d from 1,024 to 16,384 (6 sizes):"
    assert lines[1] == "  - written on gpu:h100 at n=4096: expected max temp 20MB for n<=4096, found temp 67.1 MB " \
                       "(67,108,864 bytes) [FAILED]"
    assert lines[2] == ("  - written on gpu:h100: expected flip none, found reduction between n=4999 and n=5000; "
                        "error between n=16383 and n=16384 [FAILED]")
    with pytest.raises(ValueError, match="'m', which the sweep does not give"):
        sweep.check(reduction="fused for m>3")
    from sphinx_jaxhlo.api.reports import Reports

    with pytest.raises(ValueError, match="needs a sweep"):
        Reports([]).check(reduction="fused for n>3")


def test_a_contraction_stays_a_reduction_across_a_flip() -> None:
    """A dot_general the program's own where it is unfused over stored data (a multiply and a reduce reading a
    table), and the compiler's fused multiply + reduce, or a GEMM, elsewhere: never "absent" (issue 45)."""
    from sphinx_jaxhlo.core.flips import PointFigure, ReductionState, compare

    key = "dot_general (line 5)"
    a, b = Point((("n", 1024),), ("n",), (0,)), Point((("n", 4096),), ("n",), (1,))
    unfused = ReductionState(key, "reduce.1", False, "f32[4096,4096]", 67_108_864, "elementwise kernel", "elementwise")
    before = PointFigure(a, "f", "tpu:v5e", "unfused", reductions=[unfused])
    fused = PointFigure(b, "f", "tpu:v5e", "no reduction",
                        contractions=[ReductionState(key, "reduce.2", True)])
    flip = compare(before, fused, "n")
    assert flip is not None and flip.kinds == ["reduction"]
    assert flip.changes == [f"{key}: unfused, reading f32[4096,4096] (67.1 MB) from elementwise kernel at n=1024 -> "
                            "fused at n=4096"]
    gemm = compare(before, PointFigure(b, "f", "tpu:v5e", "no reduction"), "n")
    assert gemm is not None and "-> a GEMM (a dot kernel: the contraction has no reduce of its own) at n=4096" in \
        gemm.changes[0] and "absent" not in gemm.changes[0]


def test_one_driver_compiles_each_point_then_each_probe_under_the_examples_own_entry() -> None:
    """The sweep's one driver (the directive's, the API's and the command line's): the sweep's
    points for every function and target, then each probe once per point and target, of the
    function as the example writes it (the default one is ``""`` though its reports say ``written``);
    a point that cannot be made keeps its problem, and the map names the function by its real name."""
    from sphinx_jaxhlo.core.results import Result
    from sphinx_jaxhlo.core.targets import get_target
    from sphinx_jaxhlo.pipeline.sweep import sweep_examples

    example = parse_example(SOURCE, {**OPTIONS, "sweep": "n=1024,4096,5000,16384, d=n"}, spell=PYTHON)
    assert example.functions == ("",)
    compiled: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []

    def compile_example(made: Any, targets: Any) -> tuple[str, list[Result]]:
        assert made.point is not None and made.sweep is None
        compiled.append((made.point.label, made.functions, tuple(t.name for t in targets)))
        request = type("R", (), {"specs": made.specs, "function": "", "target": targets[0].name,
                                 "source": made.source})()
        return made.point.label, [Result("written", t.name, t.title, report=seed_report(request)) for t in targets]

    run = sweep_examples(example, [get_target("gpu:h100")], compile_example, lambda *_: "cannot")
    own = [(p, ("",), ("gpu:h100",)) for p in ("n=1024", "n=4096", "n=5000", "n=16384")]
    assert compiled[:4] == own and len(compiled) > 4
    # every probe between two sizes whose decisions differ, of the example's own entry, on the one target
    assert all(entry == ("",) and targets == ("gpu:h100",) for _, entry, targets in compiled[4:])
    assert run.kept == [label for label, _, _ in compiled] and [p.label for p in run.points] == run.kept
    assert run.functions == ["written"] and run.map.functions == ["written"]
    assert [f.between for f in run.map.flips] == ["n=4999 and n=5000", "n=16383 and n=16384"]
    assert all(f.exact for f in run.map.flips)
