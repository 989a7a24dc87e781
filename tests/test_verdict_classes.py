"""The verdict and reason rules on real compiled modules: one per rule issue 31 found wrong, and programs of our own.

``tests/data/verdicts/programs.py`` holds the programs, ``regenerate_verdicts.py``
stores their optimized HLO for cpu, gpu:h100 and tpu:v5e, with XLA's memory
figures and, for the GPU, its priority-fusion record.  These tests check:

- every reduction's verdict, origin and minor flag, and the reason of every
  unfused one over 1 MB, against ``expected.py`` (read off the modules by hand);
- each rule on the module that shows it (the short broadcast, the second stage,
  the TPU's row reductions, the reductions too small to matter, the contraction
  done as multiply and reduce, the CPU's peak, the TPU's scalar work);
- that every unfused reduction over 1 MB on the GPU, whose backend records its
  decisions, quotes the record and names the rule that wrote it, one test per
  rule name of XLA's source.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from sphinx_jaxhlo.core.expectations import Expectation, check
from sphinx_jaxhlo.core.report import Memory, Report
from sphinx_jaxhlo.hlo.decisions.quotes import attach_quotes, gpu_decisions
from sphinx_jaxhlo.hlo.fusion import analyze_module
from sphinx_jaxhlo.store.drift import verdict

DATA = Path(__file__).parent / "data" / "verdicts"


def _load(name: str) -> Any:
    """A module of ``tests/data/verdicts`` under a name of its own (the corpus has an ``expected`` and a
    ``programs`` too, which another test may have imported first)."""
    spec = importlib.util.spec_from_file_location(f"verdicts_{name}", DATA / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


EXPECTED = _load("expected").EXPECTED
PROGRAMS = _load("programs").PROGRAMS

FIGURES: dict[str, Any] = json.loads((DATA / "xla.json").read_text(encoding="utf-8"))
CASES = [(t, p.name) for p in PROGRAMS for t in p.targets]


def report(target: str, program: str) -> Report:
    """The program's report as the compile worker makes it: the analysis, XLA's record tied to it, the figures."""
    path = DATA / target.replace(":", "_") / f"{program}.txt"
    text = path.read_text(encoding="utf-8")
    analysis = analyze_module(text, "example.py", target=target)
    found: Report = Report(function="f", target=target, hlo=text, fusions=analysis.fusions,
                           materialized=analysis.materialized, reductions=analysis.reductions,
                           argument_copies=analysis.argument_copies)
    record = path.with_name(f"{program}.record.txt")
    if record.exists():
        found.fusion_decisions, _ = gpu_decisions(record.read_text(encoding="utf-8"), text,
                                                  path.with_name(f"{program}.after.txt").read_text(encoding="utf-8"))
    attach_quotes(found)
    names = {"argument_size_in_bytes": "argument_bytes", "output_size_in_bytes": "output_bytes",
             "alias_size_in_bytes": "alias_bytes", "temp_size_in_bytes": "temp_bytes",
             "generated_code_size_in_bytes": "generated_code_bytes", "peak_memory_in_bytes": "peak_bytes"}
    found.memory = Memory(**{names[k]: v for k, v in FIGURES[target][program]["memory"].items()})
    found.memory.settle(target)
    return found


def check_expectation(kind: str, value: str, found: Report) -> tuple[bool, str]:
    """An ``:expect-KIND: VALUE`` checked against a report: whether it holds, and what was found."""
    result = check(Expectation(kind, None, value), found)
    return result.passed, result.actual


def test_the_data_is_complete() -> None:
    assert set(EXPECTED) == set(CASES)
    for target, program in CASES:
        assert (DATA / target.replace(":", "_") / f"{program}.txt").exists(), (target, program)
        assert (DATA / target.replace(":", "_") / f"{program}.record.txt").exists() == target.startswith("gpu")


@pytest.mark.parametrize(("target", "program"), CASES)
def test_verdicts_and_reasons_are_the_ones_read_by_hand(target: str, program: str) -> None:
    users, made, minor, reasons = EXPECTED[(target, program)]
    found = report(target, program)
    assert {r.name: ("fused" if r.fused else r.input_materialized) for r in found.verdict_reductions} == users
    counts: dict[str, int] = {}
    for r in found.compiler_reductions:
        counts[r.origin] = counts.get(r.origin, 0) + 1
    assert counts == made
    assert {r.name for r in found.reductions if r.minor} == minor
    sizes = {m.name: m.bytes for m in found.materialized}
    explained = {}
    for r in found.verdict_reductions:
        if not r.fused and sizes.get(r.input_materialized or "", 0) >= 2**20:
            assert r.reason is not None and r.reason.text and r.reason.alternatives, r.name
            rule = r.reason.rule.split(",", 1)[0].split(" (", 1)[0] + ("+record" if r.reason.quoted else "")
            explained[r.name] = (r.reason.producer_kind, rule)
    assert explained == reasons


# -- each rule on the module that shows it ---------------------------------------------------------------

def test_a_stored_buffer_read_through_a_short_broadcast_is_the_reduced_data() -> None:
    """Class 1: the pairwise weights f32[2048,2048], stored, read broadcast over the 3 components of
    f32[2048,3,2048]: a third of the reduced values, 683 per result of the f32[2048,3] force."""
    gpu = report("gpu:h100", "nbody_weights")
    force = next(r for r in gpu.verdict_reductions if r.input_shape == "f32[2048,3,2048]" and not r.fused)
    assert force.input_materialized == "loop_rsqrt_fusion" and verdict(gpu) == "1 of 2 unfused"
    # XLA's own record says it kept that producer out: the cost model's estimates, quoted
    assert force.reason is not None and force.reason.quoted is not None
    assert '"fused 28.269 us, unfused 20.9477501 us"' in force.reason.quoted
    assert "28.3 us, against 20.9 us apart" in force.reason.text
    tpu = report("tpu:v5e", "nbody_weights")
    assert verdict(tpu) == "1 of 2 unfused"
    assert verdict(report("cpu", "nbody_weights")) == "all 2 fused"  # one YNN kernel computes it all


def test_a_reduction_of_another_reductions_result_is_no_second_stage() -> None:
    """Class 2: the mins of a stored sum of squares, on the CPU's YNN kernel, the TPU and (a second output of
    a multi-output kernel) the H100."""
    for target in ("cpu", "tpu:v5e", "gpu:h100"):
        found = report(target, "chamfer")
        assert not found.compiler_reductions, target
        mins = [r for r in found.verdict_reductions if r.op == "reduce_min" and not r.fused]
        assert mins and all(r.input_bytes == 2048 * 2048 * 4 for r in mins), target
        assert check_expectation("reduction", "unfused", found)[0] is False  # the sum is fused
        assert check_expectation("reduction", "fused", found)[0] is False


def test_a_tpu_row_reduction_written_as_a_reduce_window_is_a_reduction() -> None:
    """Class 3: size=1x1x2047 pad=0_0x0_0x1023_1023 over a 1024-long axis."""
    found = report("tpu:v5e", "softmax_rows")
    assert [(r.op, r.origin, r.fused) for r in found.reductions] == [("reduce_max", "user", True),
                                                                    ("reduce_sum", "user", True)]
    assert "size=1x1x2047 pad=0_0x0_0x1023_1023" in found.hlo
    causal = report("tpu:v5e", "causal_softmax")
    assert {(r.op, r.fused) for r in causal.verdict_reductions} == {("reduce_max", True), ("reduce_sum", True)}


def test_reductions_too_small_to_matter_do_not_decide() -> None:
    """Class 4: the mask's count beside the masked sum."""
    cpu = report("cpu", "masked_mean")
    count, total = sorted(cpu.verdict_reductions, key=lambda r: r.input_bytes)
    assert (count.fused, count.minor, total.fused, total.minor) == (False, True, True, False)
    assert count.input_bytes * 1024 == total.input_bytes  # 1 in 1024: far under the line (1/64)
    assert verdict(cpu) == "fused" and cpu.all_reductions_fused is True
    assert check_expectation("reduction", "fused", cpu)[0] is True
    assert "1 too small to matter left out" in check_expectation("reduction", "fused", cpu)[1]
    for target in ("gpu:h100", "tpu:v5e"):
        assert verdict(report(target, "masked_mean")) == "fused"


def test_a_contraction_done_as_multiply_and_reduce_over_stored_data_gets_a_verdict() -> None:
    """Class 4: exp(-sq) @ v on the v5e reads the stored squared distances."""
    found = report("tpu:v5e", "rbf_matmul")
    (contraction,) = [r for r in found.verdict_reductions if r.op == "dot_general"]
    assert (contraction.origin, contraction.fused, contraction.input_shape) == ("user", False, "f32[2048,3000]")
    # on the H100 the dot stays a dot: no verdict for its reduce
    assert all(r.origin == "dot" for r in report("gpu:h100", "rbf_matmul").reductions if r.op == "dot_general")


def test_the_cpu_peak_holds_the_temporaries() -> None:
    """Class 5: XLA's CPU peak is arguments + output, without the 15.5 MB of temp."""
    xla = FIGURES["cpu"]["einsum_max"]["memory"]
    assert xla["peak_memory_in_bytes"] < xla["argument_size_in_bytes"] + xla["output_size_in_bytes"] + 32
    found = report("cpu", "einsum_max")
    assert found.memory.peak_bytes == (xla["argument_size_in_bytes"] + xla["output_size_in_bytes"]
                                       + xla["temp_size_in_bytes"] - xla["alias_size_in_bytes"])
    assert found.memory.peak_is_estimate and round(found.memory.peak_bytes / 1e6, 1) == 31.0


def test_scalar_work_on_the_tpus_scalar_unit_is_no_kernel() -> None:
    for program in ("scalar_axpy", "scalar_fma"):
        tpu = report("tpu:v5e", program)
        assert len(tpu.fusions) == 4 and tpu.kernels == 1  # two copies into S(6), the multiply there, the add
        assert check_expectation("kernels", "1", tpu)[0] is True
        assert all(report(t, program).kernels == 1 for t in ("cpu", "gpu:h100"))


def test_a_table_written_as_a_second_output_of_a_reduction_kernel_says_so() -> None:
    found = report("gpu:h100", "seed_grad_table")
    table = next(m for m in found.materialized if m.name == "get-tuple-element.6")
    assert table.shape == "f32[20000,10000]" and table.reason is not None
    reason = table.reason
    assert reason.producer_kind == "multi-output" and "as a second output" in reason.text
    assert reason.rule.startswith("MultiOutputFusion") and "CalculateProducerPriority" in reason.rule
    # the decision about the table's own producer, not the end state of the kernel it was merged into
    assert reason.quoted is not None and "about fusion.25 (here input_multiply_reduce_fusion)" in reason.quoted
    assert "both the producer and the consumer contain a reduce" not in reason.quoted
    assert "17862.0 us, against 4483.0 us apart" in reason.text


# -- every large unfused reduction on the GPU carries its record, and the rule that wrote it ---------------

def gpu_reasons() -> list[tuple[str, str, Any]]:
    out = []
    for target, program in CASES:
        if not target.startswith("gpu"):
            continue
        found = report(target, program)
        sizes = {m.name: m.bytes for m in found.materialized}
        out.extend((program, r.name, r.reason) for r in found.verdict_reductions
                   if not r.fused and sizes.get(r.input_materialized or "", 0) >= 2**20)
    return out


def test_every_large_unfused_reduction_on_the_gpu_quotes_its_record() -> None:
    reasons = gpu_reasons()
    assert len(reasons) >= 10
    for program, name, reason in reasons:
        assert reason is not None and reason.quoted is not None, (program, name)
        assert "the HLO alone does not say" not in reason.text, (program, name)


@pytest.mark.parametrize(("rule", "program", "record"), [
    ("IsFusible (file-local in priority_fusion.cc), through PriorityFusionQueue::CanFuse", "batched_sim_max",
     "the producer is not fusible"),
    ("CanEmitInputFusedScatter, through PriorityFusionQueue::CanFuseWithNativeEmitter", "scatter_sum",
     "do not fuse into the output of scatter"),
    ("PriorityFusionQueue::CalculateProducerPriority (a negative priority, which ComputeAndSetPriorities never "
     "queues)", "nbody_weights", "us, unfused"),
    ("MultiOutputFusion (producer-consumer multi-output fusion), after PriorityFusionQueue::CalculateProducerPriority",
     "seed_grad_table", "us, unfused"),
])  # fmt: skip
def test_each_rule_name_against_a_stored_record(rule: str, program: str, record: str) -> None:
    found = [r for p, _, r in gpu_reasons() if p == program]
    assert found and all(r.rule.startswith(rule) and record in r.quoted for r in found)
    source = {"CanEmitInputFusedScatter": "xla/service/gpu/gpu_fusible.cc",
              "MultiOutputFusion": "xla/backends/gpu/transforms/multi_output_fusion.cc"}.get(
        rule.split(",")[0].split(" ")[0], "xla/backends/gpu/transforms/priority_fusion.cc")
    assert all(r.source_file == source for r in found)


@pytest.mark.parametrize(("prefix", "rule"), [
    ("both the producer and the consumer contain a reduce", "PriorityFusionQueue::CanFuseWithNativeEmitter"),
    ("fusion into output of a reduce fusion would create a loop fusion",
     "PriorityFusionQueue::CanFuseWithNativeEmitter"),
    ("not fusing because there are only bitcast users", "PriorityFusionQueue::CanFuseWithAllNonBitcastUsers"),
    ("the consumer is not fusible", "IsFusible (file-local in priority_fusion.cc)"),
])  # fmt: skip
def test_the_records_other_reasons_name_their_rules(prefix: str, rule: str) -> None:
    """Reasons the stored records hold on findings the analysis does not call unfused: each still maps to the
    function of priority_fusion.cc that writes it."""
    from sphinx_jaxhlo.hlo.decisions.records import record_rule

    seen = [d for t, p in CASES if t.startswith("gpu") for d in report(t, p).fusion_decisions
            if d.reason.startswith(prefix)]
    assert seen, prefix
    assert all(record_rule(d)[0].startswith(rule) for d in seen)
