"""Fusions, materialized buffers and reductions, on the stored seed modules of
every target and on small hand-written modules."""

# ruff: noqa: E501  (lines of HLO text are long)
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from sphinx_jaxhlo.core.report import Reduction, Report
from sphinx_jaxhlo.core.targets import TARGETS
from sphinx_jaxhlo.hlo.fusion import Analysis, analyze_module
from sphinx_jaxhlo.hlo.model import HloParseError
from sphinx_jaxhlo.hlo.parse import parse_module
from sphinx_jaxhlo.hlo.programs import producer_op, top_level_computations

DATA = Path(__file__).parent / "data" / "hlo"
GB = 1_000_000_000


def analyze_fixture(name: str) -> Analysis:
    path = DATA / name
    if not path.exists():
        pytest.skip(f"fixture tests/data/hlo/{name} is absent (regenerate the stored HLO fixtures)")
    return analyze_module(path.read_text())


def main_reduction(analysis: Analysis) -> Reduction:
    """The reduction of the seed's 100000 x 50000 values (the biggest input)."""
    return max(analysis.reductions, key=lambda r: r.input_bytes)


def all_fused(analysis: Analysis) -> bool | None:
    return Report("f", "t", reductions=analysis.reductions).all_reductions_fused


# -- the seed on each target -----------------------------------------------------


def test_gpu_with_dot_reduces_the_materialized_gemm_output() -> None:
    analysis = analyze_fixture("gpu_h100__with_dot.txt")
    gemm = next(f for f in analysis.fusions if f.custom_kind == "__triton_nested_gemm_fusion")
    assert gemm.kind == "Custom"
    assert "dot" in gemm.ops
    assert gemm.shape == "f32[50000,100000]"
    reduction = main_reduction(analysis)
    assert not reduction.fused
    assert reduction.input_materialized == gemm.name
    assert reduction.input_bytes == 20 * GB
    head = analysis.materialized[0]
    assert (head.shape, head.bytes, head.producer, head.name) == ("f32[50000,100000]", 20 * GB, gemm.name, gemm.name)
    assert reduction.fusion in head.consumers
    # the GEMM kernel writes cos of the product (its epilogue): named by its last op and the product
    assert head.producer_op == "cos of dot_general"
    assert all_fused(analysis) is False


def test_gpu_explicit_fuses_the_reduction() -> None:
    analysis = analyze_fixture("gpu_h100__explicit.txt")
    reduction = main_reduction(analysis)
    assert reduction.fused
    assert reduction.input_bytes == 20 * GB
    assert {"multiply", "cosine"} <= set(reduction.fused_with)
    fusion = next(f for f in analysis.fusions if f.name == reduction.fusion)
    assert fusion.kind == "Input"
    assert {"multiply", "cosine", "reduce"} <= set(fusion.ops)
    # Nothing near the size of the data is stored.
    assert analysis.materialized[0].bytes < 0.1 * GB
    assert all_fused(analysis) is True


def test_tpu_with_dot_is_one_output_fusion() -> None:
    analysis = analyze_fixture("tpu_v5e__with_dot.txt")
    reduction = main_reduction(analysis)
    assert reduction.fused
    fusion = next(f for f in analysis.fusions if f.name == reduction.fusion)
    assert fusion.kind == "Output"
    # TPU writes the dot as a convolution.
    assert {"cosine", "reduce"} <= set(fusion.ops)
    assert {"dot", "convolution"} & set(fusion.ops)
    assert {"cosine"} <= set(reduction.fused_with)
    assert all(m.bytes < 0.1 * GB for m in analysis.materialized)
    assert all_fused(analysis) is True


def test_tpu_explicit_is_fused() -> None:
    analysis = analyze_fixture("tpu_v5e__explicit.txt")
    assert main_reduction(analysis).fused
    assert all(m.bytes < 0.1 * GB for m in analysis.materialized)


@pytest.mark.parametrize("variant", ["explicit", "with_dot"])
def test_cpu_materializes_the_data_before_reducing(variant: str) -> None:
    analysis = analyze_fixture(f"cpu__{variant}.txt")
    reduction = main_reduction(analysis)
    assert not reduction.fused
    assert reduction.input_bytes == 20 * GB
    head = analysis.materialized[0]
    assert head.bytes == 20 * GB
    assert head.shape in ("f32[50000,100000]", "f32[100000,50000]")
    assert reduction.input_materialized in [m.name for m in analysis.materialized if m.bytes == 20 * GB]
    ynn = next(f for f in analysis.fusions if f.name == reduction.fusion)
    assert ynn.custom_kind == "__ynn_fusion"


@pytest.mark.parametrize("name", ["cpu__with_dot.txt", "gpu_h100__with_dot.txt", "tpu_v5e__with_dot.txt"])
def test_source_lines_come_from_the_example(name: str) -> None:
    analysis = analyze_fixture(name)
    reduction = main_reduction(analysis)
    assert reduction.source_lines
    assert all(f.source_lines == sorted(set(f.source_lines)) for f in analysis.fusions)
    # No example file of that name: no lines at all.
    other = analyze_module((DATA / name).read_text(), source_file="elsewhere.py")
    assert not any(f.source_lines for f in other.fusions)
    assert not any(r.source_lines for r in other.reductions)


def test_stored_modules_all_analyze() -> None:
    modules = sorted(p for p in DATA.glob("*.txt") if not p.name.endswith(".error.txt"))
    if not modules:
        pytest.skip("no stored modules in tests/data/hlo")
    for path in modules:
        analysis = analyze_module(path.read_text())
        assert analysis.fusions, path.name
        sizes = [m.bytes for m in analysis.materialized]
        assert sizes == sorted(sizes, reverse=True), path.name
        fusion_names = {f.name for f in analysis.fusions}
        for r in analysis.reductions:
            assert r.fusion in fusion_names, path.name
            assert r.input_bytes > 0


# The whole table of stored examples, with answers from an independent source:
# XLA's own ``memory_analysis()`` of each compile (``memory.temp_bytes`` in the
# stored .json), not this analysis.  The program reduces a known amount of data
# (the seed's cos(pos @ hkl.T): 100000 x 50000 f32, 20 GB; scan_chunks reduces one
# chunk of 1000 x 50000 per step, 200 MB).  If XLA's temporary memory is smaller
# than that, the reduced data cannot have gone to memory: every reduction is
# fused.  If it holds that much, the reduced data went to memory (the rule applied
# by hand to each module: the largest temporary is that data, read by the reduce).
REDUCED_BYTES = {"explicit": 20 * GB, "with_dot": 20 * GB, "with_outer": 20 * GB, "matmul": 20 * GB,
                 "einsum": 20 * GB, "broadcast": 20 * GB, "scan_chunks": 200_000_000}
CASES = [(t, v) for t in ("cpu", "gpu_h100", "tpu_v5e") for v in REDUCED_BYTES
         if (DATA / f"{t}__{v}.txt").exists()]


@pytest.mark.parametrize(("target", "variant"), CASES)
def test_fusion_table(target: str, variant: str) -> None:
    temp = json.loads((DATA / f"{target}__{variant}.json").read_text())["memory"]["temp_bytes"]
    reduced = REDUCED_BYTES[variant]
    fused = temp < reduced  # XLA's figure, not ours
    analysis = analyze_fixture(f"{target}__{variant}.txt")
    assert all_fused(analysis) is fused
    biggest = analysis.materialized[0].bytes if analysis.materialized else 0
    if not target.startswith("tpu"):
        # every buffer we call materialized fits in XLA's temporary memory (TPU
        # reports 0 temp bytes: its small buffers live in memory it counts elsewhere)
        assert biggest <= temp
    if fused:
        assert biggest < reduced
    else:
        # the reduced data is the largest buffer, and a reduction of the program reads it
        assert biggest == reduced
        assert any(r.input_materialized == analysis.materialized[0].name and r.input_bytes == reduced
                   for r in analysis.reductions if r.is_users)


def test_the_fusion_table_covers_every_stored_seed_variant() -> None:
    # what FACTS.md reports of the compilers, for the record: CPU materializes every
    # variant, GPU the ones with a GEMM, TPU none
    assert {(t, v) for t, v in CASES if json.loads((DATA / f"{t}__{v}.json").read_text())["memory"]["temp_bytes"]
            >= REDUCED_BYTES[v]} == {
        *(("cpu", v) for v in REDUCED_BYTES),
        ("gpu_h100", "with_dot"), ("gpu_h100", "matmul"), ("gpu_h100", "einsum"), ("gpu_h100", "scan_chunks"),
    }
    assert len(CASES) == 20


@pytest.mark.parametrize("target", ["cpu", "gpu_h100", "tpu_v5e"])
def test_scan_reduces_inside_the_loop_body(target: str) -> None:
    analysis = analyze_fixture(f"{target}__scan_chunks.txt")
    module = parse_module((DATA / f"{target}__scan_chunks.txt").read_text())
    (reduction,) = [r for r in analysis.reductions if r.input_bytes == 200_000_000]
    assert reduction.computation != module.entry
    assert reduction.computation in top_level_computations(module)
    loop = next(f for f in analysis.fusions if f.kind == "while")
    assert loop.computation == module.entry
    body_fusions = [f for f in analysis.fusions if f.computation == reduction.computation]
    assert reduction.fusion in [f.name for f in body_fusions]
    assert reduction.source_lines == [example_line(f"{target}__scan_chunks", "jnp.sum")]
    if target == "tpu_v5e":
        assert reduction.fused
    else:
        # One chunk of cos(chunk @ hkl.T) goes to memory on each step.
        assert reduction.input_materialized in [m.name for m in analysis.materialized]
        chunk = next(m for m in analysis.materialized if m.name == reduction.input_materialized)
        assert (chunk.shape, chunk.computation) == ("f32[1000,50000]", reduction.computation)


@pytest.mark.parametrize("target", ["cpu", "tpu_v5e"])
def test_cond_reduces_in_the_branches(target: str) -> None:
    analysis = analyze_fixture(f"{target}__cond.txt")
    module = parse_module((DATA / f"{target}__cond.txt").read_text())
    conditional = next(i for i in module.entry_computation.instructions if i.opcode == "conditional")
    branches = set(conditional.called_computations)
    assert len(branches) == 2
    sums = [r for r in analysis.reductions if r.source_lines]
    assert {r.computation for r in sums} == branches
    # Each branch sums its own function of x: sin on one side, cos ** 2 on the other.
    assert sorted(line for r in sums for line in r.source_lines) == [
        example_line(f"{target}__cond", "jnp.sin"),
        example_line(f"{target}__cond", "jnp.cos"),
    ]


def test_gpu_cond_becomes_a_select() -> None:
    analysis = analyze_fixture("gpu_h100__cond.txt")
    # Both branches are cheap: XLA computes both and selects.
    assert not any(f.kind == "conditional" for f in analysis.fusions)
    assert {r.computation for r in analysis.reductions} == {analysis.fusions[0].computation}
    assert len(analysis.reductions) == 2


@pytest.mark.parametrize("target", ["cpu", "gpu_h100", "tpu_v5e"])
def test_sort_gather_scatter(target: str) -> None:
    analysis = analyze_fixture(f"{target}__sort_gather.txt")
    ops = {op for f in analysis.fusions for op in f.ops}
    assert {"sort", "gather", "scatter"} <= ops
    assert analysis.reductions == []  # index arithmetic, no sum


def example_line(stem: str, text: str) -> int:
    """The line of the stored example's source holding ``text``."""
    source = json.loads((DATA / f"{stem}.json").read_text())["source"]
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


def test_seed_lines() -> None:
    for target in ("cpu", "gpu_h100", "tpu_v5e"):
        analysis = analyze_fixture(f"{target}__with_dot.txt")
        line = example_line(f"{target}__with_dot", "jnp.sum")
        assert main_reduction(analysis).source_lines == [line]
        assert all(f.source_lines in ([], [line]) for f in analysis.fusions)
        explicit = analyze_fixture(f"{target}__explicit.txt")
        assert main_reduction(explicit).source_lines == [example_line(f"{target}__explicit", "jnp.sum")]
        cos_line = example_line(f"{target}__explicit", "jnp.cos")
        holder = next(f for f in explicit.fusions if f.name == main_reduction(explicit).fusion)
        assert cos_line in holder.source_lines or target == "cpu"


# -- hand-written modules --------------------------------------------------------

HEAD = """HloModule m

FileNames
1 "/docs/example.py"
2 "/site-packages/jax/numpy.py"

FunctionNames
1 "f"
2 "sum"

FileLocations
1 {file_name_id=1 function_name_id=1 line=4 end_line=4 column=1 end_column=9}
2 {file_name_id=2 function_name_id=2 line=900 end_line=900 column=1 end_column=9}
3 {file_name_id=1 function_name_id=1 line=6 end_line=6 column=1 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}
3 {file_location_id=3 parent_frame_id=1}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
"""


def test_reduce_of_an_argument_is_fused() -> None:
    analysis = analyze_module(
        HEAD
        + """
ENTRY %e (x: f32[1000,1000]) -> f32[1000] {
  %x = f32[1000,1000]{1,0} parameter(0)
  %zero = f32[] constant(0)
  ROOT %r = f32[1000]{0} reduce(%x, %zero), dimensions={1}, to_apply=%add, metadata={op_name="jit(f)/reduce_sum" stack_frame_id=2}
}
"""
    )
    (reduction,) = analysis.reductions
    assert reduction.fusion == "r"
    # the argument was in memory before the program ran: nothing was materialized for the reduce
    assert reduction.input_materialized is None and reduction.fused
    assert reduction.input_shape == "f32[1000,1000]"
    assert reduction.input_bytes == 4_000_000
    assert reduction.fused_with == []
    # The innermost frame is in jax, the next one in the example.
    assert reduction.source_lines == [4]
    assert analysis.materialized == []  # parameters are not listed
    (fusion,) = analysis.fusions
    assert (fusion.kind, fusion.ops, fusion.custom_kind) == ("reduce", ["reduce"], None)


FUSED = (
    HEAD
    + """
%body.1 (p0: f32[1000], p1: f32[2000,1000]) -> f32[1000] {
  %p0 = f32[1000]{0} parameter(0)
  %p1 = f32[2000,1000]{1,0} parameter(1)
  %bc = f32[2000,1000]{1,0} broadcast(%p0), dimensions={1}
  %mul = f32[2000,1000]{1,0} multiply(%bc, %bc), metadata={op_name="jit(f)/mul" stack_frame_id=1}
  %cos = f32[2000,1000]{1,0} cosine(%mul), metadata={op_name="jit(f)/cos" stack_frame_id=3}
  %zero = f32[] constant(0)
  ROOT %r = f32[1000]{0} reduce(%cos, %zero), dimensions={0}, to_apply=%add, metadata={op_name="jit(f)/reduce_sum" stack_frame_id=3}
}

%body.2 (q0: f32[2000,1000], q1: f32[1000,7]) -> f32[2000] {
  %q0 = f32[2000,1000]{1,0} parameter(0)
  %q1 = f32[1000,7]{1,0} parameter(1)
  %d = f32[2000,7]{1,0} dot(%q0, %q1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %e = f32[2000,7]{1,0} exponential(%d)
  %zero.1 = f32[] constant(0)
  ROOT %r.1 = f32[2000]{0} reduce(%e, %zero.1), dimensions={1}, to_apply=%add
}

%body.3 (t0: f32[2000,1000]) -> f32[2000] {
  %t0 = f32[2000,1000]{1,0} parameter(0)
  %neg = f32[2000,1000]{1,0} negate(%t0)
  %zero.2 = f32[] constant(0)
  ROOT %r.2 = f32[2000]{0} reduce(%neg, %zero.2), dimensions={1}, to_apply=%add
}

ENTRY %e (x: f32[1000], big: f32[2000,1000], w: f32[1000,7]) -> (f32[1000], f32[2000], f32[2000]) {
  %x = f32[1000]{0} parameter(0)
  %big = f32[2000,1000]{1,0} parameter(1)
  %w = f32[1000,7]{1,0} parameter(2)
  %f1 = f32[1000]{0} fusion(%x, %big), kind=kInput, calls=%body.1, metadata={op_name="jit(f)/reduce_sum" stack_frame_id=1}
  %f2 = f32[2000]{0} fusion(%big, %w), kind=kOutput, calls=%body.2
  %f3 = f32[2000]{0} fusion(%big), kind=kLoop, calls=%body.3
  ROOT %t = (f32[1000]{0}, f32[2000]{0}, f32[2000]{0}) tuple(%f1, %f2, %f3)
}
"""
)


def test_fused_when_computed_inside_from_smaller_inputs() -> None:
    analysis = analyze_module(FUSED)
    by_fusion = {r.fusion: r for r in analysis.reductions}
    # f1 reads a big buffer, but it does not flow into the reduce.
    assert by_fusion["f1"].fused
    assert by_fusion["f1"].fused_with == ["broadcast", "multiply", "cosine"]
    assert by_fusion["f1"].input_shape == "f32[2000,1000]"
    assert by_fusion["f1"].source_lines == [6]
    # A dot makes new data: a big input that only feeds the dot is not the reduced data.
    assert by_fusion["f2"].fused
    assert by_fusion["f2"].fused_with == ["dot", "exponential"]
    # Elementwise ops on an argument: the argument was in memory already.
    assert by_fusion["f3"].fused
    assert by_fusion["f3"].fused_with == ["negate"]
    # ... but elementwise ops on a big intermediate do not make the reduction fused.
    produced = analyze_module(FUSED.replace(
        "%f3 = f32[2000]{0} fusion(%big)",
        "%big2 = f32[2000,1000]{1,0} exponential(%big)\n  %f3 = f32[2000]{0} fusion(%big2)"))
    f3 = {r.fusion: r for r in produced.reductions}["f3"]
    assert not f3.fused and f3.input_materialized == "big2" and f3.fused_with == ["negate"]


def test_fusions_list_kinds_ops_and_lines() -> None:
    analysis = analyze_module(FUSED)
    assert [f.name for f in analysis.fusions] == ["f1", "f2", "f3"]
    f1 = analysis.fusions[0]
    assert (f1.kind, f1.ops, f1.shape, f1.bytes, f1.computation) == (
        "Input",
        ["broadcast", "multiply", "cosine", "reduce"],
        "f32[1000]",
        4000,
        "e",
    )
    assert f1.source_lines == [4, 6]
    assert analysis.fusions[1].kind == "Output"
    assert analysis.fusions[2].kind == "Loop"
    # Outputs that only go to the ROOT are not materialized buffers.
    assert analysis.materialized == []


def test_source_file_none_takes_the_innermost_frame() -> None:
    analysis = analyze_module(FUSED.replace("stack_frame_id=3}\n}", "stack_frame_id=2}\n}"), source_file=None)
    f1 = next(r for r in analysis.reductions if r.fusion == "f1")
    assert f1.source_lines == [900]
    matched_by_full_path = analyze_module(FUSED, source_file="/docs/example.py")
    assert matched_by_full_path.fusions[0].source_lines == [4, 6]


def test_degenerate_reduce_is_not_a_reduction() -> None:
    # TPU writes a slice of one column as a reduce over a dimension of size 1.
    analysis = analyze_module(
        HEAD
        + """
%sl (p: f32[100,3]) -> f32[100] {
  %p = f32[100,3]{0,1:T(4,128)} parameter(0)
  %s1 = f32[100,1]{0,1:T(1,128)} slice(%p), slice={[0:100], [0:1]}
  %c = f32[] constant(-0)
  ROOT %r = f32[100]{0:T(1024)} reduce(%s1, %c), dimensions={1}, to_apply=%add
}

ENTRY %e (x: f32[100,3]) -> f32[100] {
  %x = f32[100,3]{0,1:T(4,128)} parameter(0)
  ROOT %f = f32[100]{0:T(1024)} fusion(%x), kind=kLoop, calls=%sl
}
"""
    )
    assert analysis.reductions == []
    assert analysis.fusions[0].ops == ["slice", "reduce"]


def test_split_reduction_second_stage_reads_partial_sums() -> None:
    analysis = analyze_module(
        HEAD
        + """
%stage1 (p: f32[100000,3]) -> f32[250,50000] {
  %p = f32[100000,3]{1,0} parameter(0)
  %b = f32[100000,50000]{1,0} broadcast(%p), dimensions={0,1}
  %cos = f32[100000,50000]{1,0} cosine(%b)
  %v = f32[250,400,50000]{2,1,0} bitcast(%cos)
  %z = f32[] constant(0)
  ROOT %r1 = f32[250,50000]{1,0} reduce(%v, %z), dimensions={1}, to_apply=%add
}

%stage2 (q: f32[250,50000]) -> f32[50000] {
  %q = f32[250,50000]{1,0} parameter(0)
  %z.1 = f32[] constant(0)
  ROOT %r2 = f32[50000]{0} reduce(%q, %z.1), dimensions={0}, to_apply=%add
}

ENTRY %e (x: f32[100000,3]) -> f32[50000] {
  %x = f32[100000,3]{1,0} parameter(0)
  %s1 = f32[250,50000]{1,0} fusion(%x), kind=kInput, calls=%stage1
  ROOT %s2 = f32[50000]{0} fusion(%s1), kind=kInput, calls=%stage2
}
"""
    )
    r1, r2 = analysis.reductions
    assert r1.fused and r1.fused_with == ["broadcast", "cosine"]
    assert r1.input_bytes == 20 * GB
    assert r2.fused  # partial sums are not the reduced data
    assert [m.name for m in analysis.materialized] == ["s1"]
    assert analysis.materialized[0].consumers == ["s2"]
    assert analysis.materialized[0].producer_op is None


MULTI = (
    HEAD
    + """
%mo (p: f32[4096,1024]) -> (f32[4096,1024], f32[4096]) {
  %p = f32[4096,1024]{1,0} parameter(0)
  %e = f32[4096,1024]{1,0} exponential(%p), metadata={op_name="jit(f)/exp" stack_frame_id=1}
  %z = f32[] constant(0)
  %r = f32[4096]{0} reduce(%e, %z), dimensions={1}, to_apply=%add, metadata={op_name="jit(f)/reduce_sum" stack_frame_id=3}
  ROOT %t = (f32[4096,1024]{1,0}, f32[4096]{0}) tuple(%e, %r)
}

%div (a0: f32[4096,1024], a1: f32[4096]) -> f32[4096,1024] {
  %a0 = f32[4096,1024]{1,0} parameter(0)
  %a1 = f32[4096]{0} parameter(1)
  %bc = f32[4096,1024]{1,0} broadcast(%a1), dimensions={0}
  ROOT %d = f32[4096,1024]{1,0} divide(%a0, %bc)
}

%tot (b0: f32[4096]) -> f32[] {
  %b0 = f32[4096]{0} parameter(0)
  %z.1 = f32[] constant(0)
  ROOT %r.1 = f32[] reduce(%b0, %z.1), dimensions={0}, to_apply=%add
}

ENTRY %e (x: f32[4096,1024]) -> (f32[4096,1024], f32[]) {
  %x = f32[4096,1024]{1,0} parameter(0)
  %m = (f32[4096,1024]{1,0}, f32[4096]{0}) fusion(%x), kind=kInput, calls=%mo, metadata={op_name="jit(f)/softmax" stack_frame_id=1}
  %g0 = f32[4096,1024]{1,0} get-tuple-element(%m), index=0
  %g1 = f32[4096]{0} get-tuple-element(%m), index=1
  %g1v = f32[64,64]{1,0} bitcast(%g1)
  %g1b = f32[4096]{0} bitcast(%g1v)
  %sm = f32[4096,1024]{1,0} fusion(%g0, %g1b), kind=kLoop, calls=%div
  %total = f32[] fusion(%g1), kind=kInput, calls=%tot
  ROOT %out = (f32[4096,1024]{1,0}, f32[]) tuple(%sm, %total)
}
"""
)


def test_multi_output_fusion_elements_are_buffers() -> None:
    analysis = analyze_module(MULTI)
    assert [(m.name, m.shape, m.bytes, m.producer) for m in analysis.materialized] == [
        ("g0", "f32[4096,1024]", 4096 * 1024 * 4, "m"),
        ("g1", "f32[4096]", 4096 * 4, "m"),
    ]
    g0, g1 = analysis.materialized
    assert g0.consumers == ["sm"]
    assert g1.consumers == ["sm", "total"]  # through two bitcasts too
    assert g0.producer_op == "exp"  # the element's own op, not the fusion's
    assert g1.producer_op == "reduce_sum"
    assert g0.source_lines == [4]
    assert g1.source_lines == [4, 6]
    by_name = {r.name: r for r in analysis.reductions}
    # exp(x) of the argument x: computed inside the fusion from an argument.
    assert by_name["r"].fused_with == ["exponential"]
    assert by_name["r"].input_materialized is None
    # The second reduce reads the first one's output, as is: partial results.
    assert by_name["r.1"].fused
    # The reduce of a tuple element names the element's buffer.
    unfused = analyze_module(
        MULTI.replace("ROOT %r.1 = f32[] reduce(%b0,", "%n = f32[4096]{0} negate(%b0)\n  ROOT %r.1 = f32[] reduce(%n,")
    )
    assert unfused.reductions[1].input_materialized == "g1"


LOOP = (
    HEAD
    + """
%mm (p0: f32[1000,3], p1: f32[50000,3]) -> f32[1000,50000] {
  %p0 = f32[1000,3]{1,0} parameter(0)
  %p1 = f32[50000,3]{1,0} parameter(1)
  ROOT %d = f32[1000,50000]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={1}, metadata={op_name="jit(f)/while/body/dot_general" stack_frame_id=1}
}

%red (q0: f32[1000,50000], q1: f32[50000]) -> f32[50000] {
  %q0 = f32[1000,50000]{1,0} parameter(0)
  %q1 = f32[50000]{0} parameter(1)
  %c = f32[1000,50000]{1,0} cosine(%q0)
  %z = f32[] constant(0)
  %r = f32[50000]{0} reduce(%c, %z), dimensions={0}, to_apply=%add, metadata={op_name="jit(f)/while/body/reduce_sum" stack_frame_id=3}
  ROOT %acc = f32[50000]{0} add(%q1, %r)
}

%body (s: (s32[], f32[50000], f32[1000,3], f32[50000,3])) -> (s32[], f32[50000], f32[1000,3], f32[50000,3]) {
  %s = (s32[], f32[50000]{0}, f32[1000,3]{1,0}, f32[50000,3]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %acc0 = f32[50000]{0} get-tuple-element(%s), index=1
  %chunk = f32[1000,3]{1,0} get-tuple-element(%s), index=2
  %hkl = f32[50000,3]{1,0} get-tuple-element(%s), index=3
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %gemm = f32[1000,50000]{1,0} fusion(%chunk, %hkl), kind=kCustom, calls=%mm, backend_config={"fusion_backend_config":{"kind":"__triton_nested_gemm_fusion"}}
  %upd = f32[50000]{0} fusion(%gemm, %acc0), kind=kInput, calls=%red
  ROOT %out = (s32[], f32[50000]{0}, f32[1000,3]{1,0}, f32[50000,3]{1,0}) tuple(%i1, %upd, %chunk, %hkl)
}

%cond (s.1: (s32[], f32[50000], f32[1000,3], f32[50000,3])) -> pred[] {
  %s.1 = (s32[], f32[50000]{0}, f32[1000,3]{1,0}, f32[50000,3]{1,0}) parameter(0)
  %i.1 = s32[] get-tuple-element(%s.1), index=0
  %n = s32[] constant(100)
  ROOT %lt = pred[] compare(%i.1, %n), direction=LT
}

%zeros () -> f32[50000] {
  %z.2 = f32[] constant(0)
  ROOT %bz = f32[50000]{0} broadcast(%z.2), dimensions={}
}

ENTRY %e (x: f32[1000,3], hkl.1: f32[50000,3]) -> f32[50000] {
  %x = f32[1000,3]{1,0} parameter(0)
  %hkl.1 = f32[50000,3]{1,0} parameter(1)
  %c0 = s32[] constant(0)
  %i0 = s32[] copy(%c0)
  %init = f32[50000]{0} fusion(), kind=kLoop, calls=%zeros
  %st = (s32[], f32[50000]{0}, f32[1000,3]{1,0}, f32[50000,3]{1,0}) tuple(%i0, %init, %x, %hkl.1)
  %loop = (s32[], f32[50000]{0}, f32[1000,3]{1,0}, f32[50000,3]{1,0}) while(%st), condition=%cond, body=%body
  %res = f32[50000]{0} get-tuple-element(%loop), index=1
  ROOT %neg = f32[50000]{0} negate(%res)
}
"""
)


def test_loop_bodies_are_analyzed() -> None:
    analysis = analyze_module(LOOP)
    assert [(f.name, f.computation) for f in analysis.fusions] == [
        ("i0", "e"),
        ("init", "e"),
        ("loop", "e"),
        ("neg", "e"),
        ("lt", "cond"),
        ("i1", "body"),
        ("gemm", "body"),
        ("upd", "body"),
    ]
    (reduction,) = analysis.reductions
    assert (reduction.name, reduction.fusion, reduction.computation) == ("r", "upd", "body")
    assert not reduction.fused
    assert reduction.input_materialized == "gemm"
    assert reduction.fused_with == ["cosine"]
    assert reduction.input_bytes == 200_000_000
    materialized = {(m.name, m.computation): m for m in analysis.materialized}
    assert analysis.materialized[0].name == "gemm"
    assert materialized["gemm", "body"].consumers == ["upd"]
    # Values that go into the loop through a tuple are read by the while.
    assert materialized["init", "e"].consumers == ["loop"]
    assert materialized["i0", "e"].consumers == ["loop"]
    # The loop's result, read through get-tuple-element.
    assert materialized["res", "e"].producer == "loop"
    assert materialized["res", "e"].consumers == ["neg"]
    # Values only going to the loop carry (the body's ROOT) are not listed.
    assert ("upd", "body") not in materialized
    assert ("i1", "body") not in materialized


def test_conditional_branches_and_calls_are_top_level() -> None:
    text = (
        HEAD
        + """
%b0 (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  ROOT %n = f32[8]{0} negate(%p)
}

%b1 (p.1: f32[8]) -> f32[8] {
  %p.1 = f32[8]{0} parameter(0)
  %e = f32[8]{0} exponential(%p.1)
  ROOT %l = f32[8]{0} log(%e)
}

%called (c: f32[8]) -> f32[8] {
  %c = f32[8]{0} parameter(0)
  ROOT %s = f32[8]{0} sine(%c)
}

ENTRY %e (i: s32[], x: f32[8]) -> f32[8] {
  %i = s32[] parameter(0)
  %x = f32[8]{0} parameter(1)
  %k = f32[8]{0} call(%x), to_apply=%called
  ROOT %r = f32[8]{0} conditional(%i, %k, %k), branch_computations={%b0, %b1}
}
"""
    )
    module = parse_module(text)
    assert top_level_computations(module) == ["e", "called", "b0", "b1"]
    analysis = analyze_module(module)
    assert [(f.name, f.computation) for f in analysis.fusions] == [
        ("k", "e"),
        ("r", "e"),
        ("s", "called"),
        ("n", "b0"),
        ("e", "b1"),
        ("l", "b1"),
    ]
    assert [(m.name, m.consumers, m.computation) for m in analysis.materialized] == [
        ("e", ["l"], "b1"),
        ("k", ["r"], "e"),
    ]


def test_nested_fusion_maps_parameters_through_each_level() -> None:
    analysis = analyze_module(
        HEAD
        + """
%inner (ip: f32[3000,1000]) -> f32[3000,1000] {
  %ip = f32[3000,1000]{1,0} parameter(0)
  ROOT %ib = f32[3000,1000]{1,0} bitcast(%ip)
}

%outer (op: f32[3000,1000]) -> f32[3000] {
  %op = f32[3000,1000]{1,0} parameter(0)
  %nf = f32[3000,1000]{1,0} fusion(%op), kind=kLoop, calls=%inner
  %t = f32[3000,1000]{1,0} tanh(%nf)
  %z = f32[] constant(0)
  ROOT %r = f32[3000]{0} reduce(%t, %z), dimensions={1}, to_apply=%add
}

ENTRY %e (x: f32[3000,1000]) -> f32[3000] {
  %x = f32[3000,1000]{1,0} parameter(0)
  %xv = f32[3000,1000]{1,0} bitcast(%x)
  ROOT %f = f32[3000]{0} fusion(%xv), kind=kOutput, calls=%outer
}
"""
    )
    (reduction,) = analysis.reductions
    assert reduction.input_materialized is None  # the argument, seen through two levels and a bitcast
    assert reduction.fused_with == ["tanh"]
    assert analysis.fusions[0].ops == ["tanh", "reduce"]


def test_async_start_context_is_not_a_buffer() -> None:
    analysis = analyze_module(
        """HloModule m
ENTRY %e (x: f32[1000]) -> f32[1000] {
  %x = f32[1000]{0} parameter(0)
  %cs = (f32[1000]{0:S(1)}, f32[1000]{0}, u32[]) copy-start(%x), cross_program_prefetch_index=0
  %cd = f32[1000]{0:S(1)} copy-done(%cs)
  ROOT %y = f32[1000]{0} sine(%cd)
}
"""
    )
    # the prefetched copy of an argument is an argument copy, not an intermediate
    assert analysis.materialized == []
    assert [(m.name, m.consumers, m.kind) for m in analysis.argument_copies] == [("cd", ["y"], "argument-copy")]
    assert [f.name for f in analysis.fusions] == ["cs", "cd", "y"]


def test_value_read_by_the_root_and_another_instruction_is_listed() -> None:
    analysis = analyze_module(
        """HloModule m
ENTRY %e (x: f32[10]) -> (f32[10], f32[10]) {
  %x = f32[10]{0} parameter(0)
  %a = f32[10]{0} sine(%x)
  %b = f32[10]{0} cosine(%a)
  ROOT %t = (f32[10]{0}, f32[10]{0}) tuple(%a, %b)
}
"""
    )
    assert [(m.name, m.consumers) for m in analysis.materialized] == [("a", ["b"])]


def test_custom_call_kind() -> None:
    analysis = analyze_module(
        """HloModule m
ENTRY %e (x: f32[64,64], y: f32[64,64]) -> f32[64,64] {
  %x = f32[64,64]{1,0} parameter(0)
  %y = f32[64,64]{1,0} parameter(1)
  %g = (f32[64,64]{1,0}, s8[4096]{0}) custom-call(%x, %y), custom_call_target="__cublas$gemm", metadata={op_name="jit(f)/dot_general"}
  ROOT %o = f32[64,64]{1,0} get-tuple-element(%g), index=0
}
"""
    )
    (fusion,) = analysis.fusions
    assert (fusion.kind, fusion.custom_kind, fusion.ops) == ("custom-call", "__cublas$gemm", ["custom-call"])
    assert fusion.shape == "(f32[64,64], s8[4096])"
    assert fusion.bytes == 64 * 64 * 4 + 4096


@pytest.mark.parametrize(
    ("op_name", "expected"),
    [
        ("jit(f)/vmap()/dot_general", "dot_general"),
        ("jit(f)/jit(a/b)", "jit(a/b)"),
        ("reduce_sum[axes=(0,)]", "reduce_sum"),
        ("jit(f)/while/body/closed_call/cos", "cos"),
        ("", None),
        (None, None),
    ],
)
def test_producer_op(op_name: str | None, expected: str | None) -> None:
    assert producer_op(op_name) == expected


def test_bad_text_raises_parse_error() -> None:
    with pytest.raises(HloParseError):
        analyze_module("HloModule m\nENTRY %e {\n")


def test_second_stage_is_left_out_of_verdicts() -> None:
    analysis = analyze_fixture("gpu_h100__with_dot.txt")
    stages = [r for r in analysis.reductions if r.partial_of]
    main = [r for r in analysis.reductions if not r.partial_of]
    report = Report(function="with_dot", target="gpu:h100", reductions=analysis.reductions)
    assert main and all(not r.fused for r in main)
    assert report.all_reductions_fused is False
    assert all(s.partial_of for s in stages)


def test_gathered_and_reduced_collective_results_are_intermediates() -> None:
    """On several devices, an all-gather of a parameter (the weights an FSDP
    layer gathers) makes a buffer that was not on the device before the program
    ran: an intermediate the dot reads, like the all-reduce's sum."""
    analysis = analyze_module(
        """HloModule m, is_scheduled=true
ENTRY %e (w: f32[128,64], x: f32[16,64]) -> (f32[16,1024], f32[16,64]) {
  %w = f32[128,64]{1,0} parameter(0)
  %x = f32[16,64]{1,0} parameter(1)
  %ags = (f32[128,64]{1,0}, f32[1024,64]{1,0}) all-gather-start(%w), dimensions={0}, replica_groups={{0,1,2,3,4,5,6,7}}
  %agd = f32[1024,64]{1,0} all-gather-done(%ags)
  %y = f32[16,1024]{1,0} dot(%x, %agd), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %ar = f32[16,64]{1,0} all-reduce(%x), replica_groups={{0,1,2,3,4,5,6,7}}, to_apply=%add
  %z = f32[16,64]{1,0} negate(%ar)
  ROOT %t = (f32[16,1024]{1,0}, f32[16,64]{1,0}) tuple(%y, %z)
}
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
""")
    assert analysis.argument_copies == []
    assert sorted(m.name for m in analysis.materialized) == ["agd", "ar"]


# -- reductions the GPU pads ---------------------------------------------------------
# Row reductions whose reduced length is not a round number: the H100 compile pads
# the stored GEMM output by one element (30522 -> 30523, 10007 -> 10008 rows) and
# reduces the padded operand, split in two stages.  The padded operand has a few more
# elements than the stored buffer; the stored buffer is still what is reduced.  The
# independent answer is XLA's: its temporaries hold the whole GEMM output.

PADDED = {"logsumexp_vocab": ("f32[1024,30522]", 2), "odd_rows": ("f32[10007,4096]", 1)}


@pytest.mark.parametrize("variant", sorted(PADDED))
def test_gpu_padded_row_reductions_read_the_stored_gemm_output(variant: str) -> None:
    shape, count = PADDED[variant]
    text = (DATA / f"gpu_h100__{variant}.txt").read_text()
    temp = json.loads((DATA / f"gpu_h100__{variant}.json").read_text())["memory"]["temp_bytes"]
    analysis = analyze_module(text, "example.py")
    gemm = next(f for f in analysis.fusions if f.custom_kind and "gemm" in f.custom_kind)
    assert gemm.shape == shape
    assert temp >= gemm.bytes  # XLA keeps the whole GEMM output in its temporaries
    module = parse_module(text)
    users = [r for r in analysis.reductions if r.is_users]
    assert len(users) == count
    for r in users:
        body = module.computations[module.entry][r.fusion].called_computations[0]
        assert any(i.opcode == "pad" for i in module.computations[body].instructions)
        dims = [int(d) for d in r.input_shape[r.input_shape.index("[") + 1:-1].split(",")]
        assert math.prod(dims) > gemm.bytes // 4  # the padded operand: more elements than the stored buffer ...
        assert r.input_materialized == gemm.name  # ... and the stored buffer is what it reduces
    assert all_fused(analysis) is False


@pytest.mark.parametrize(("target", "expected"), [
    # the CPU stores the logits (a YNN GEMM) and both reductions read them; a sum of a GEMM's
    # rows is fused into the YNN GEMM itself (no temporaries)
    ("cpu", {"logsumexp_vocab": {"reduce_max.0": "ynn_fusion.2", "reduce_sum.0": "ynn_fusion.2"},
             "odd_rows": {"reduce_sum.0": None}}),
    # the TPU fuses the max into the GEMM's kernel, which also writes the logits for the sum
    ("tpu_v5e", {"logsumexp_vocab": {"reduce_max.0": None, "reduce_sum.0": "get-tuple-element.1"},
                 "odd_rows": {"reduce_sum.0": None}}),
])  # fmt: skip
def test_the_same_reductions_elsewhere(target: str, expected: dict[str, dict[str, str | None]]) -> None:
    for variant, verdicts in expected.items():
        analysis = analyze_module((DATA / f"{target}__{variant}.txt").read_text(), "example.py")
        assert {r.name: r.input_materialized for r in analysis.reductions if r.is_users} == verdicts
        temp = json.loads((DATA / f"{target}__{variant}.json").read_text())["memory"]["temp_bytes"]
        # XLA's temporaries: the 125 MB logits where a reduction reads them (the TPU's count
        # holds them too), nothing where every reduction is fused
        assert (temp >= 1024 * 30522 * 4) is any(v is not None for v in verdicts.values())


# -- words on real compiles (issue 45) -----------------------------------------------------------------------


def _compiled(fn, *specs: str, target: str) -> Report:
    import sphinx_jaxhlo

    return sphinx_jaxhlo.analyze(fn, *specs, targets=target)[target]


def test_a_row_dot_the_cpu_computes_as_multiply_and_reduce_is_named_so_not_a_gemm() -> None:
    """The CPU's YNN kernel of einsum('ij,ij->i') holds a multiply and a reduce, no dot: the max and the min
    that read it read a contraction written as a multiply and a reduction (it was called a GEMM)."""
    import jax.numpy as jnp

    from sphinx_jaxhlo.hlo.reasons import reason_sentence

    def row_dot_range(x, y):
        e = jnp.einsum("ij,ij->i", x, y)
        return jnp.max(e) - jnp.min(e)

    report = _compiled(row_dot_range, "f32[100000,8]", "f32[100000,8]", target="cpu")
    unfused = [r for r in report.verdict_reductions if not r.fused]
    assert unfused and all(r.reason is not None and r.reason.producer_kind == "product-reduction" for r in unfused)
    assert all("GEMM (a matrix product)" not in reason_sentence(r.reason) for r in unfused if r.reason)


@pytest.mark.skipif(not TARGETS["gpu:h100"].available(), reason="the CUDA compiler plugin is not installed")
def test_the_h100_words_of_a_scan_read_in_the_reducing_kernel_and_of_a_gemm_epilogue() -> None:
    import jax.numpy as jnp

    def cumsum_max(x):  # the scan's last stage and the max share a kernel that reads the stored exp(x)
        return jnp.max(jnp.cumsum(jnp.exp(x), axis=-1), axis=-1)

    report = _compiled(cumsum_max, "f32[64,65536]", target="gpu:h100")
    (reduction,) = report.verdict_reductions
    stored = next(m for m in report.materialized if m.name == reduction.input_materialized)
    assert not reduction.fused and (stored.shape, stored.bytes, stored.producer_op) == ("f32[64,65536]",
                                                                                        16_777_216, "exp")

    def tanh_dot_sum(x, w):  # the Triton GEMM writes tanh of the product
        return jnp.sum(jnp.tanh(x @ w), axis=0)

    report = _compiled(tanh_dot_sum, "f32[4096,512]", "f32[512,512]", target="gpu:h100")
    (stored,) = report.materialized
    assert stored.producer_op == "tanh of dot_general"
