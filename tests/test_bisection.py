"""Bisection locates every flip of a sweep at neighbouring sizes, within its budget, and claims
about sizes no compile looked at are not resolved.

The compile function is made up (nothing compiles): it answers as the issue measured
``jnp.sum(jnp.exp(x @ y.T), 0)`` on the H100, whose decision flips three times between
1024 and 2048: the product stored by an elementwise kernel up to 1188, fused from 1189 to
1519, stored by the GEMM from 1520 to 1594, fused again from 1595.  A sweep of powers of
two sees one flip; a sweep of 1189 and 1595 sees none.
"""

from __future__ import annotations

from typing import Any

import pytest

from sphinx_jaxhlo.compiler.client import Outcome
from sphinx_jaxhlo.core.bisection import DEFAULT_BUDGET, next_probes, parse_budget
from sphinx_jaxhlo.core.example import COMMAND_LINE, DIRECTIVE, PYTHON, OptionProblem, parse_example
from sphinx_jaxhlo.core.report import Fusion, Materialized, Memory, Reason, Reduction, Report
from sphinx_jaxhlo.core.settings import Settings
from sphinx_jaxhlo.pipeline.build import Build, Warnings
from sphinx_jaxhlo.pipeline.run import process

SOURCE = "import jax.numpy as jnp\n\ndef exp2_cols(x, y):\n    return jnp.sum(jnp.exp(x @ y.T), 0)\n"
#: Where the made-up compiler's decision flips: the first size of each new state.
FLIPS = (1189, 1520, 1595)


def state(n: int) -> str:
    """``loop`` (stored by an elementwise kernel), ``fused``, ``gemm`` (stored by the GEMM)."""
    if n < FLIPS[0]:
        return "loop"
    if n < FLIPS[1] or n >= FLIPS[2]:
        return "fused"
    return "gemm"


def report_at(n: int, function: str, target: str) -> Report:
    report = Report(function=function, target=target, source=SOURCE, memory=Memory(temp_bytes=4 * n * n))
    table = f"f32[{n},{n}]"
    kind = state(n)
    if kind == "fused":
        report.memory = Memory(temp_bytes=4 * n * 64)
        report.fusions = [Fusion("input_reduce_fusion", "Input", None, ["dot", "exponential", "reduce"],
                                 f"f32[64,{n}]", 4 * n * 64),
                          Fusion("input_reduce_fusion.1", "Input", None, ["reduce"], f"f32[{n}]", 4 * n)]
        report.reductions = [Reduction("reduce.1", "input_reduce_fusion", ["exponential"], None, 4 * n * n, table,
                                       [4], op="reduce_sum")]
        return report
    if kind == "loop":
        producer = Fusion("loop_exponential_fusion", "Loop", None, ["multiply", "exponential"], table, 4 * n * n)
    else:
        producer = Fusion("gemm_fusion_dot", "Custom", "__triton_nested_gemm_fusion", ["dot", "exponential"], table,
                          4 * n * n)
    reason = Reason("elementwise" if kind == "loop" else "gemm", "stored before the reduction reads it")
    report.fusions = [producer, Fusion("input_reduce_fusion", "Input", None, ["reduce"], f"f32[{n}]", 4 * n)]
    report.materialized = [Materialized(producer.name, table, 4 * n * n, producer.name, ["input_reduce_fusion"],
                                        reason=reason)]
    report.reductions = [Reduction("reduce.1", "input_reduce_fusion", [], producer.name, 4 * n * n, table, [4],
                                   op="reduce_sum", reason=reason)]
    return report


class Compiler:
    """Answers with :func:`report_at` and remembers the sizes it was asked for."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def __call__(self, batch: Any) -> list[Outcome]:
        out = []
        for request, _ in batch:
            n = request.specs.args[0].shape[0]
            self.sizes.append(n)
            out.append(Outcome(report_at(n, request.function or "exp2_cols", request.target), None, 0.01))
        return out


def run(sweep: str, **options: str) -> tuple[Any, Compiler, Warnings]:
    compiler = Compiler()
    reporter = Warnings()
    build = Build(Settings({}), reporter, compiler)
    example = parse_example(SOURCE, {"args": "f32[n,64], f32[m,64]", "sweep": sweep, "targets": "gpu:h100",
                                     **options}, docname="cookbook", line=7, ordinal=1)
    return process(build, example), compiler, reporter


def test_a_coarse_sweep_finds_every_flip_at_its_exact_size() -> None:
    done, compiler, reporter = run("n=1024,2048, m=n")
    sweep = done.sweep
    assert sweep is not None
    # the powers of two name one interval; bisection finds the three flips in it, each between neighbours
    assert [(f.low, f.high, f.exact) for f in sweep.flips] == [(1188, 1189, True), (1519, 1520, True),
                                                              (1594, 1595, True)]
    assert [f.kinds for f in sweep.flips] == [["reduction"], ["reduction"], ["reduction"]]
    assert "gemm" in sweep.flips[1].changes[0] and "fused at n=1520" not in sweep.flips[1].changes[0]
    # bounded: a few dozen compiles, each size once, none outside the interval
    probes = compiler.sizes[2:]
    assert compiler.sizes[:2] == [1024, 2048] and len(probes) == len(set(probes)) <= 32
    assert all(1024 < n < 2048 for n in probes) and len(sweep.probes) == len(probes)
    # each probe is an ordinary point of the build: its record, its result
    assert [r.function for r in done.records][2] == f"exp2_cols at n={probes[0]}"
    assert reporter.items == []


def test_a_sweep_whose_ends_agree_says_what_it_did_not_look_at() -> None:
    claims = {"expect-flip": "none", "expect-reduction": "gpu:h100=fused for n>=1189"}
    done, compiler, reporter = run("n=1189,1595, m=n", **claims)
    sweep = done.sweep
    assert sweep is not None and compiler.sizes == [1189, 1595] and sweep.flips == []
    # both ends fused: nothing to bisect, and the sizes between (unfused from 1520 to 1594) not looked at
    (interval,) = sweep.intervals
    assert (interval.low, interval.high, interval.why) == (1189, 1595, "agree")
    flip, ranged = sweep.checks
    assert not flip.passed and flip.unresolved and flip.actual == (
        "no flip between neighbours compiled; not resolved: n=1189..1595 (both ends agree; the sizes between were "
        "not compiled)")
    assert not ranged.passed and ranged.unresolved and ranged.actual == (
        "held at the 2 sizes compiled where n>=1189; not resolved: n=1189..1595 (both ends agree; the sizes between "
        "were not compiled)")
    assert [(subtype, where) for _, subtype, where in reporter.items] == [("unresolved", ("cookbook", 7))] * 2
    assert reporter.items[0][0].endswith("[NOT RESOLVED]")


def test_a_range_claim_fails_at_the_size_bisection_compiled() -> None:
    _, _, reporter = run("n=1024,2048, m=n", **{"expect-reduction": "gpu:h100=fused for n>=1189"})
    failed = [m for m, subtype, _ in reporter.items if subtype == "expectation"]
    # unfused from 1520 to 1594: the sizes bisection compiled there break the claim, each named
    assert failed and all(" at n=" in m and m.endswith("[FAILED]") for m in failed)
    sizes = sorted(int(m.split(" at n=")[1].split(":")[0]) for m in failed)
    assert sizes[0] == 1520 and sizes[-1] == 1594 and all(state(n) == "gemm" for n in sizes)
    # failed, so not judged "not resolved" as well
    assert not [m for m, subtype, _ in reporter.items if subtype == "unresolved"]


def test_the_budget_bounds_the_compiles_and_a_flip_left_wide_is_not_resolved() -> None:
    claims = {"expect-flip": "between 1188 and 1189"}
    done, compiler, _ = run("n=1024,2048, m=n", bisect="5", **claims)
    sweep = done.sweep
    assert sweep is not None and len(compiler.sizes) == 2 + 5 and sweep.budget == 5
    assert [(f.low, f.high, f.exact) for f in sweep.flips] == [(1152, 1280, False), (1408, 1536, False),
                                                              (1536, 1792, False)]
    assert {(i.low, i.high, i.why) for i in sweep.intervals if i.why == "differ"} == {
        (1152, 1280, "differ"), (1408, 1536, "differ"), (1536, 1792, "differ")}
    (check,) = sweep.checks
    assert check.unresolved and check.actual.endswith(
        "the sweep's points do not resolve n=1188..1189 (add sizes between 1152 and 1280, or raise the bisection "
        "budget)")
    off, compiler, _ = run("n=1024,2048, m=n", bisect="0")
    assert off.sweep is not None and compiler.sizes == [1024, 2048]
    assert [(f.low, f.high) for f in off.sweep.flips] == [(1024, 2048)]


def test_the_map_text_and_json_give_the_exact_sizes() -> None:
    from sphinx_jaxhlo.render.sweep_chart import line_svg
    from sphinx_jaxhlo.render.sweep_map import sweep_text

    done, _, _ = run("n=1024,2048, m=n")
    sweep = done.sweep
    assert sweep is not None
    text = " ".join(sweep_text(sweep).split())
    assert "Flip 1, between n=1188 and n=1189 (neighbouring sizes; reduction)" in text
    assert "Flip 3, between n=1594 and n=1595 (neighbouring sizes; reduction)" in text
    svg = line_svg(sweep, "gpu:h100", sweep.flips, "u", "t")
    for label in ("1: 1188|1189", "2: 1519|1520", "3: 1594|1595"):
        assert f">{label}</text>" in svg
    assert ">error</text>" not in svg  # no compile failed: the legend keys no crossed-out marker
    doc = sweep.to_dict()
    assert [(f["before"]["n"], f["after"]["n"], f["exact"]) for f in doc["flips"]] == [
        (1188, 1189, True), (1519, 1520, True), (1594, 1595, True)]
    assert sum(1 for p in doc["points"] if p["probe"] == "n") == len(sweep.probes)


def test_next_probes_halves_each_interval_whose_ends_differ() -> None:
    from sphinx_jaxhlo.core.bisection import Probe

    done, _, _ = run("n=1024,1600,2048, m=n", bisect="0")
    sweep = done.sweep
    assert sweep is not None
    # 1024 (loop) and 1600 (fused) differ; 1600 and 2048 agree: one probe, halfway
    assert next_probes(sweep, 10) == [Probe(sweep.sweep.probe_point(sweep.points[0], "n", 1312), "exp2_cols",
                                            "gpu:h100")]
    assert next_probes(sweep, 0) == []
    assert next_probes(sweep, 10, {("exp2_cols", "gpu:h100", sweep.sweep.probe_point(sweep.points[0], "n", 1312))}) \
        == []
    probe = next_probes(sweep, 10)[0].point
    assert probe.as_dict() == {"n": 1312, "m": 1312} and probe.probe == "n" and probe.label == "n=1312"


@pytest.mark.parametrize(("spell", "name"), [(DIRECTIVE, ":bisect:"), (COMMAND_LINE, "--bisect:"),
                                             (PYTHON, "bisect:")])
def test_the_budget_option_is_checked_in_each_front(spell: Any, name: str) -> None:
    options = {"args": "f32[n,64], f32[m,64]", "sweep": "n=8,16, m=n"}
    assert parse_example(SOURCE, options, spell=spell).bisect == DEFAULT_BUDGET
    assert parse_example(SOURCE, {**options, "bisect": "12"}, spell=spell).bisect == 12
    for bad, message in (("many", f"{name} 'many' is not a number of compiles: give a whole number from 0 (no "
                                  f"bisection) to 1024, such as 48"),
                         ("5000", f"{name} 5000 is outside 0..1024 (0: no bisection)")):
        with pytest.raises(OptionProblem) as info:
            parse_example(SOURCE, {**options, "bisect": bad}, spell=spell)
        assert info.value.message == message
    with pytest.raises(OptionProblem, match=f"^{name} 4: bisection locates the flips of a sweep; it needs "):
        parse_example(SOURCE, {"args": "f32[8,64], f32[8,64]", "bisect": "4"}, spell=spell)
    assert parse_budget(0) == 0 and parse_budget("1_000") == 1000


def test_a_static_argument_takes_the_values_given() -> None:
    """A swept static argument (a chunk size) is not bisected, and the values between two of its
    values are not sizes left unlooked at: the code may take no other (a chunk must divide)."""
    source = "import jax.numpy as jnp\n\ndef f(x, y, chunk):\n    return jnp.sum(jnp.exp(x @ y.T), 0)\n"
    sizes: list[tuple[int, str]] = []

    def compile_(batch: Any) -> list[Outcome]:
        out = []
        for request, _ in batch:
            chunk = dict(request.static)["chunk"]
            sizes.append((request.specs.args[0].shape[0], chunk))
            out.append(Outcome(report_at(1000 if int(chunk) < 8 else 1300, "f", request.target), None, 0.01))
        return out

    example = parse_example(source, {"args": "f32[n,64], f32[n,64]", "sweep": "n=1000,1001, chunk=2,64",
                                     "targets": "gpu:h100", "expect-flip": "none for n=1000"})
    done = process(Build(Settings({}), Warnings(), compile_), example)
    sweep = done.sweep
    assert sweep is not None and len(sizes) == 4 and not sweep.probes
    assert [(f.axis, f.low, f.high) for f in sweep.flips] == [("chunk", 2, 64), ("chunk", 2, 64)]
    assert sweep.intervals == []
    (check,) = sweep.checks
    assert not check.passed and not check.unresolved  # a flip between two chunks given: false, not unknown


class KernelCompiler(Compiler):
    """Fused from 1189 to 1519 as :func:`report_at` says, with one more kernel from 1300: a change
    of the kernel count alone."""

    def __call__(self, batch: Any) -> list[Outcome]:
        out = super().__call__(batch)
        for (request, _), outcome in zip(batch, out, strict=True):
            n = request.specs.args[0].shape[0]
            if n >= 1300 and outcome.report is not None:
                outcome.report.fusions.append(Fusion("loop_add_fusion", "Loop", None, ["add"], f"f32[{n}]", 4 * n))
        return out


def run_with(compiler: Compiler, sweep: str, **options: str) -> Any:
    example = parse_example(SOURCE, {"args": "f32[n,64], f32[m,64]", "sweep": sweep, "targets": "gpu:h100",
                                     **options}, docname="cookbook", line=7, ordinal=1)
    return process(Build(Settings({}), Warnings(), compiler), example)


def test_bisection_chases_the_kernel_count_only_where_a_claim_asks() -> None:
    from sphinx_jaxhlo.render.sweep_map import sweep_text

    compiler = KernelCompiler()
    done = run_with(compiler, "n=1189,1519, m=n")
    sweep = done.sweep
    # both ends fused: the kernel count alone changes, which the page does not chase unless asked
    assert sweep is not None and compiler.sizes == [1189, 1519] and sweep.flips == [] and sweep.probes == []
    assert sweep.kinds == ("reduction", "producer", "error")
    text = " ".join(sweep_text(sweep).split())
    assert "The kernel count changes between sizes too (the table's last column): bisection chases it only where a " \
           "claim is about it." in text
    compiler = KernelCompiler()
    done = run_with(compiler, "n=1189,1519, m=n", **{"expect-kernels": "<=3"})
    sweep = done.sweep
    assert sweep is not None and sweep.kinds == ("reduction", "producer", "kernels", "error")
    assert [(f.low, f.high, f.kinds) for f in sweep.flips] == [(1299, 1300, ["kernels"])]
    assert len(compiler.sizes) - 2 == len(sweep.probes) <= 10
    text = " ".join(sweep_text(sweep).split())
    assert (f"Bisection compiled {len(sweep.probes)} more sizes here (budget 48 for the sweep), each an ordinary "
            "compile, chasing the reductions' verdicts, the stored buffers' producers, the kernel count and the "
            "compile's success: 1 of 1 flip located between neighbouring sizes.") in text
    # a flip claim about the kernel count asks for it: compared, and its flip located
    done = run_with(KernelCompiler(), "n=1189,1519, m=n", **{"expect-flip": "kernels between 1299 and 1300"})
    assert done.sweep is not None and [(c.passed, c.actual) for c in done.sweep.checks] == [
        (True, "kernels between n=1299 and n=1300")]
    # a map that did not compare it (the API's, rebuilt from its reports) checks the claim against the
    # kernel count's flips between the points compiled
    from sphinx_jaxhlo.core.expectations import parse_expectations
    from sphinx_jaxhlo.core.sweep_claims import check_flip_claims

    plain = run_with(KernelCompiler(), "n=1189,1519, m=n", bisect="0").sweep
    assert plain is not None and plain.flips == []
    (check,) = check_flip_claims(parse_expectations({"expect-flip": "kernels between 1299 and 1300"}), plain)
    assert check.unresolved and check.actual.startswith("kernels between n=1189 and n=1519: the sweep's points do not "
                                                        "resolve n=1299..1300")


def test_bisection_locates_where_a_memory_claim_stops_holding() -> None:
    # fused from 1189 to 1519: temp 256 n bytes, within 350 kB up to n=1367
    compiler = Compiler()
    plain = run_with(compiler, "n=1189,1519, m=n")
    assert plain.sweep is not None and plain.sweep.probes == [] and len(compiler.sizes) == 2
    compiler = Compiler()
    done = run_with(compiler, "n=1189,1519, m=n", **{"expect-max-temp": "350kB"})
    sweep = done.sweep
    assert sweep is not None and sweep.chased_claims == ["max temp 350kB"]
    assert {1367, 1368} <= set(compiler.sizes[2:]) and len(compiler.sizes) - 2 <= 10
    assert sweep.flips == []  # no decision changed; the claim's verdict did
    failed = sorted(o.point for r in done.results for o in r.outcomes if not o.passed)
    assert failed[0] == "n=1368" and all(int(p.split("=")[1]) >= 1368 for p in failed)
    from sphinx_jaxhlo.render.sweep_map import sweep_text

    assert (f"Bisection compiled {len(sweep.probes)} more sizes here (budget 48 for the sweep), each an ordinary "
            "compile, chasing the reductions' verdicts, the stored buffers' producers, the compile's success and "
            "where max temp 350kB stops holding.") in " ".join(sweep_text(sweep).split())


def test_a_claim_about_one_point_is_not_chased() -> None:
    from sphinx_jaxhlo.core.bisection import chase_of
    from sphinx_jaxhlo.core.expectations import parse_expectations
    from sphinx_jaxhlo.core.sweeps import parse_sweep

    claims = parse_expectations({"expect-max-temp": "1MB for n=1189, 2MB for n>=1300",
                                 "expect-peak-top": "dot_general for n=1189 and K=4"})
    line, grid = parse_sweep("n=1189,1519"), parse_sweep("n=1189,1519, K=4,16")
    assert [e.where for e in chase_of(claims, line).claims.items] == ["n>=1300"]
    # on a grid, n=1189 leaves K free: two neighbours along K can disagree about it
    assert [e.where for e in chase_of(claims, grid).claims.items] == ["n=1189", "n>=1300"]
    assert chase_of(claims).words().endswith("where max temp 1MB for n=1189, max temp 2MB for n>=1300 and 1 more "
                                             "claim stop holding")
