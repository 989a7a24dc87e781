"""XLA's own record of its fusion decisions: reading it, mapping its names to
the optimized module, quoting it on the findings (:mod:`sphinx_jaxhlo.hlo.decisions.records`,
:mod:`sphinx_jaxhlo.hlo.decisions.quotes`, :mod:`sphinx_jaxhlo.hlo.decisions.collect`).

Runs on the records stored in ``tests/data/decisions/`` (the seed's
``with_dot``; regenerate with ``tests/data/regenerate_decisions.py``), without
compiling, except the slow tests at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sphinx_jaxhlo.core.report import FusionDecision, Reason, Report
from sphinx_jaxhlo.core.targets import TARGETS
from sphinx_jaxhlo.hlo.decisions import quotes as decisions
from sphinx_jaxhlo.hlo.decisions import records as decision_records
from sphinx_jaxhlo.hlo.decisions.collect import collect, collection_options, collection_refused
from sphinx_jaxhlo.hlo.fusion import analyze_module
from sphinx_jaxhlo.render.text import summary_text
from sphinx_jaxhlo.store.snapshots import Snapshot

DATA = Path(__file__).parent / "data" / "decisions"
ROOT = Path(__file__).resolve().parents[1]


def _read(target: str, name: str) -> str:
    return (DATA / target / name).read_text(encoding="utf-8")


def _report(target: str, found: list[FusionDecision]) -> Report:
    """The seed's report on ``target`` as the worker fills it, from the stored texts."""
    hlo = _read(target, "optimized.txt")
    analysis = analyze_module(hlo, "seed.py")
    report = Report(function="with_dot", target=target.replace("_", ":"), hlo=hlo, fusions=analysis.fusions,
                    materialized=analysis.materialized, reductions=analysis.reductions,
                    argument_copies=analysis.argument_copies, fusion_decisions=found)
    decisions.attach_quotes(report)
    return report


def _gpu() -> tuple[list[FusionDecision], str]:
    return decisions.gpu_decisions(_read("gpu_h100", "record.txt"), _read("gpu_h100", "optimized.txt"),
                                   _read("gpu_h100", "after_pass.txt"))


def _cpu() -> tuple[list[FusionDecision], str]:
    return decisions.visualization_decisions(_read("cpu", "record.html"), _read("cpu", "optimized.txt"),
                                             _read("cpu", "after_pass.txt"))


# -- the GPU's priority-fusion record ---------------------------------------------------------------

def test_the_gpu_record_is_read_step_by_step() -> None:
    steps, problem = decision_records.parse_priority_fusion_dump(_read("gpu_h100", "record.txt"))
    assert problem is None
    # the pass computes the priorities of a batch of producers in parallel:
    # the order of the refusals within a batch varies between compiles
    assert [(s.kind, s.producer) for s in steps[:2]] in (
        [("producer_ineligible", "gemm_fusion_dot_general.1"), ("producer_ineligible", "reduce.1.0")],
        [("producer_ineligible", "reduce.1.0"), ("producer_ineligible", "gemm_fusion_dot_general.1")])
    assert (steps[2].kind, steps[2].producer, steps[2].fusion, steps[2].consumers) == (
        "fusion", "bitcast.1", "fusion.1", ["reduce.1.0"])
    assert sorted((s.producer, s.reason) for s in steps[3:]) == [
        ("fusion.1", "both the producer and the consumer contain a reduce"),
        ("gemm_fusion_dot_general.1", "the producer is not fusible")]
    first = next(s for s in steps if s.producer == "gemm_fusion_dot_general.1")
    assert first.reason == "not fusing because there are only bitcast users"


def test_only_the_refusals_that_stand_at_the_end_of_the_pass_are_kept() -> None:
    steps, _ = decision_records.parse_priority_fusion_dump(_read("gpu_h100", "record.txt"))
    kept = decisions.standing(steps)
    # the GEMM's first refusal is superseded by its last; reduce.1.0 became fusion.1
    assert sorted((s.producer, s.reason) for s in kept) == [
        ("fusion.1", "both the producer and the consumer contain a reduce"),
        ("gemm_fusion_dot_general.1", "the producer is not fusible"),
    ]


def test_gpu_names_are_mapped_through_the_rename_of_fusions() -> None:
    found, note = _gpu()
    assert "2 tied to the optimized module" in note
    by_producer = {d.producer: d for d in found}
    gemm = by_producer["gemm_fusion_dot_general.1"]
    assert (gemm.producer_instruction, gemm.mapping) == ("gemm_fusion_dot_general.1", "the same instruction")
    assert gemm.consumers == ["fusion.1"] and gemm.consumer_instructions == ["input_reduce_fusion"]
    assert gemm.kind == "producer-ineligible" and gemm.pass_name == "priority-fusion"
    reduce = by_producer["fusion.1"]
    # rename_fusions renamed fusion.1; the reduce inside it kept its name
    assert reduce.producer_instruction == "input_reduce_fusion"
    assert reduce.mapping == "its fused computation (root reduce.1.1) is in it"
    assert reduce.consumer_instructions == ["input_reduce_fusion.1"]
    assert reduce.record == ('producer_ineligible { producer_name: "fusion.1" reason: '
                             '"both the producer and the consumer contain a reduce" }')


def test_the_seed_on_the_h100_quotes_the_gemm_refusal_on_its_unfused_reduction() -> None:
    found, _ = _gpu()
    report = _report("gpu_h100", found)
    (unfused,) = [r for r in report.verdict_reductions if not r.fused]
    assert unfused.input_materialized == "gemm_fusion_dot_general.1"
    assert unfused.reason is not None and unfused.reason.quoted is not None
    assert '"the producer is not fusible"' in unfused.reason.quoted
    assert "gemm_fusion_dot_general.1" in unfused.reason.quoted
    assert "fusion.1 (here input_reduce_fusion)" in unfused.reason.quoted
    # the rule that wrote the record's reason, as XLA's source names it
    assert unfused.reason.rule == "IsFusible (file-local in priority_fusion.cc), through PriorityFusionQueue::CanFuse"
    assert unfused.reason.source_file == "xla/backends/gpu/transforms/priority_fusion.cc"
    assert "GEMM" in unfused.reason.text
    text = summary_text(report)
    assert "the producer is not fusible" in text and "The compiler's decision record" in text


def test_a_reason_the_analysis_gave_keeps_its_words_and_gets_the_quote() -> None:
    found, _ = _gpu()
    hlo = _read("gpu_h100", "optimized.txt")
    analysis = analyze_module(hlo, "seed.py")
    report = Report(function="with_dot", target="gpu:h100", hlo=hlo, materialized=analysis.materialized,
                    reductions=analysis.reductions, fusion_decisions=found)
    (unfused,) = [r for r in report.reductions if r.is_users and not r.fused]
    rule = "IsFusible (file-local in priority_fusion.cc), through PriorityFusionQueue::CanFuse"
    unfused.reason = Reason("gemm", "a GEMM writes its whole result", rule=rule, source_file="x.cc")
    big = report.materialized[0]
    big.reason = Reason("gemm", "stored")
    assert decisions.attach_quotes(report) == 2
    # the analysis named the rule the record shows: its words stay, the record's file stands
    assert unfused.reason.text == "a GEMM writes its whole result" and unfused.reason.rule == rule
    assert unfused.reason.source_file == "xla/backends/gpu/transforms/priority_fusion.cc"
    assert unfused.reason.quoted is not None and "the producer is not fusible" in unfused.reason.quoted
    # it named none: the record's rule is added, the words stay
    assert (big.reason.rule, big.reason.text) == (rule, "stored")
    # it named another: the record stands, rule and words
    other = Report(function="with_dot", target="gpu:h100", hlo=hlo, materialized=analysis.materialized,
                   reductions=analysis.reductions, fusion_decisions=found)
    unfused.reason = Reason("gemm", "a guess", rule="another-rule")
    decisions.attach_quotes(other)
    assert unfused.reason.rule == rule and unfused.reason.text.startswith("It is a GEMM (a matrix product): XLA's")
    assert big.reason.quoted is not None and "the producer is not fusible" in big.reason.quoted
    # an intermediate without a reason gets none from the record
    assert all(m.reason is None for m in report.materialized[1:])


def test_an_unmapped_decision_is_kept_and_not_attached() -> None:
    # renamed with the instructions inside it: nothing of it is recognisable
    hlo = (_read("gpu_h100", "optimized.txt").replace("gemm_fusion_dot_general.1", "gemm_fusion_renamed.7")
           .replace("%cos.0", "%cos.5").replace("%dot_general.0", "%dot_general.5"))
    found, note = decisions.gpu_decisions(_read("gpu_h100", "record.txt"), hlo, _read("gpu_h100", "after_pass.txt"))
    gemm = next(d for d in found if d.producer == "gemm_fusion_dot_general.1")
    assert gemm.producer_instruction is None
    assert gemm.mapping == ("gemm_fusion_dot_general.1 has no counterpart in the optimized module by name, "
                            "fused computation or wrapper")
    assert "1 tied to the optimized module" in note
    analysis = analyze_module(hlo, "seed.py")
    report = Report(function="with_dot", target="gpu:h100", hlo=hlo, materialized=analysis.materialized,
                    reductions=analysis.reductions, fusion_decisions=found)
    decisions.attach_quotes(report)
    assert all(r.reason is None or r.reason.quoted is None for r in report.reductions)


def test_a_fusion_whose_instructions_are_spread_over_two_kernels_is_not_mapped() -> None:
    after = _read("gpu_h100", "after_pass.txt")
    # the optimized module where the reduce of fusion.1 sits in another kernel than its bitcast
    hlo = _read("gpu_h100", "optimized.txt").replace("%bitcast.2 ", "%bitcast.9 ").replace(
        "reduce(%bitcast.2,", "reduce(%bitcast.9,")
    module_found, _ = decisions.gpu_decisions(_read("gpu_h100", "record.txt"), hlo, after)
    fusion = next(d for d in module_found if d.producer == "fusion.1")
    # bitcast.2 no longer found: the root still pins one fusion, so it maps
    assert fusion.producer_instruction == "input_reduce_fusion"
    spread = hlo.replace("%reduce_sum.7.1 = ", "%bitcast.2 = ").replace("%reduce_sum.7.1", "%bitcast.2")
    spread_found, _ = decisions.gpu_decisions(_read("gpu_h100", "record.txt"), spread, after)
    fusion = next(d for d in spread_found if d.producer == "fusion.1")
    assert fusion.producer_instruction is None and "spread over 2 fusions" in fusion.mapping


def test_the_cost_model_refusal_stands_only_when_fusing_was_slower() -> None:
    text = textwrap.dedent("""\
        fusion_steps { update_priority { producer_name: "exp.1" consumer_names: "add.2" consumer_names: "mul.3"
          us_fused: 12.5 us_unfused: 3.25 } }
        fusion_steps { update_priority { producer_name: "log.4" consumer_names: "add.5" us_fused: 1 us_unfused: 2 } }
        """)
    steps, problem = decision_records.parse_priority_fusion_dump(text)
    assert problem is None and steps[0].consumers == ["add.2", "mul.3"]
    kept = decisions.standing(steps)
    assert [s.producer for s in kept] == ["exp.1"]
    hlo = _read("gpu_h100", "optimized.txt")
    found, _ = decisions.gpu_decisions(text, hlo, None)
    assert found[0].kind == "slower-fused" and found[0].reason == "fused 12.5 us, unfused 3.25 us"
    assert found[0].producer_instruction is None  # no such instruction in the seed
    assert "slower" in decisions.plain_words(found[0])


def test_past_the_limit_the_decisions_kept_do_not_depend_on_the_records_order(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """XLA writes a record's steps in another order at each compile: with more standing
    refusals than a report keeps, the same ones are kept (a snapshot's bytes are the same)."""
    monkeypatch.setattr(decisions, "MAX_DECISIONS", 3)
    lines = [f'fusion_steps {{ producer_ineligible {{ producer_name: "p.{i}" reason: "not fusible" }} }}'
             for i in range(8)]
    hlo = _read("gpu_h100", "optimized.txt")
    kept = []
    for order in (lines, lines[::-1], lines[3:] + lines[:3]):
        found, note = decisions.gpu_decisions("\n".join(order) + "\n", hlo, None)
        kept.append([d.producer for d in found])
        assert len(found) == 3 and "5 more left out" in note
    assert kept[0] == kept[1] == kept[2]


def test_a_producer_fused_after_its_refusal_is_not_reported() -> None:
    text = ('fusion_steps { producer_ineligible { producer_name: "a" reason: "the consumer is not fusible" } }\n'
            'fusion_steps { fusion { fusion_name: "fusion" producer_name: "a" consumer_name: "b" } }\n'
            'fusion_steps { producer_ineligible { producer_name: "c" reason: "no" } }\n'
            'fusion_steps { fusion { fusion_name: "fusion.2" producer_name: "d" consumer_name: "c" } }\n')
    steps, _ = decision_records.parse_priority_fusion_dump(text)
    assert decisions.standing(steps) == []


@pytest.mark.parametrize("text", [
    "", "fusion_steps {", "fusion_steps { producer_ineligible { producer_name: \"x } }", "}}}", "a: b: c",
    "fusion_steps { fusion { fusion_name: \"\\q\" } }", "\x00\x01", "gpu_device_info { core_count: 132 }",
    "fusion_steps " + "{ a " * 100 + "}" * 100,
])
def test_bad_records_give_no_decisions_and_a_reason(text: str) -> None:
    steps, problem = decision_records.parse_priority_fusion_dump(text)
    assert steps == [] and problem
    found, note = decisions.gpu_decisions(text, _read("gpu_h100", "optimized.txt"), None)
    assert found == [] and note == problem


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet='fusion_steps{}:" \\\nproducer_ineligible reason 0.5-', max_size=200))
def test_no_record_text_raises(text: str) -> None:
    steps, problem = decision_records.parse_priority_fusion_dump(text)
    assert (steps == []) == (problem is not None) or steps
    decision_records.parse_fusion_visualization(text)


def test_escapes_and_concatenated_strings_in_the_record() -> None:
    text = ('fusion_steps { producer_ineligible { producer_name: "a.1" '
            'reason: "it said \\"no\\"\\n" " twice \\303\\251" } }')
    steps, problem = decision_records.parse_priority_fusion_dump(text)
    assert problem is None
    assert steps[0].reason == 'it said "no"\n twice é'


# -- the CPU's fusion visualization --------------------------------------------------------------

def test_the_cpu_page_is_read_and_mapped_through_the_fusion_wrapper() -> None:
    steps, problem = decision_records.parse_fusion_visualization(_read("cpu", "record.html"))
    assert problem is None
    assert [(s.producer, s.consumers) for s in steps] == [("cos.1", ["ynn_fusion"]), ("ynn_fusion.1", ["cos.1"])]
    found, note = _cpu()
    assert "2 tied to the optimized module" in note
    cos = next(d for d in found if d.producer == "cos.1")
    # the fusion wrapper made wrapped_cosine (holding cos.0) of cos.1
    assert cos.producer_instruction == "wrapped_cosine"
    assert cos.mapping == "the fusion wrapper: the same operation of the same operands"
    assert cos.reason.startswith("Don't fuse instructions from custom fusions/calls")
    dot = next(d for d in found if d.producer == "ynn_fusion.1")
    assert dot.consumer_instructions == ["wrapped_cosine"] and dot.reason.startswith("Producer is not loop-fusible.")


def test_the_seed_on_the_cpu_quotes_why_the_cosine_stays_out_of_the_ynn_reduction() -> None:
    found, _ = _cpu()
    report = _report("cpu", found)
    (unfused,) = [r for r in report.verdict_reductions if not r.fused]
    assert unfused.reason is not None and unfused.reason.quoted is not None
    assert "Don't fuse instructions from custom fusions/calls" in unfused.reason.quoted
    assert "cos.1 (here wrapped_cosine), read by ynn_fusion" in unfused.reason.quoted
    # the loop fusion's record only meets the YNN kernel the library rewriter built: the derived rule, which names
    # the library rewriter's check that left the cosine out, stays; the quote names the pass that recorded it
    assert unfused.reason.source_file == "xla/backends/cpu/ynn_support.cc"
    assert unfused.reason.rule.startswith("IsElementwiseOpSupportedByYnn")
    assert "xla/service/cpu/cpu_instruction_fusion.cc" in unfused.reason.quoted


def test_fused_steps_of_a_visualization_make_earlier_refusals_moot() -> None:
    labels = ["Not fusing |a| into |b| as Producer is not loop-fusible.", "About to fuse |a| into |b| inside x",
              "Fused |a| into |fusion| inside InstructionFusion with may_duplicate=1",
              "Not fusing |c| into |fusion| as Don&#39;t know"]
    page = "<script>\n  const frames = " + json.dumps([[i, t, ""] for i, t in enumerate(labels)]) + ";\n</script>"
    steps, problem = decision_records.parse_fusion_visualization(page)
    assert problem is None
    assert [(s.kind, s.producer) for s in decisions.standing(steps)] == [("not_fusing", "c")]
    assert decisions.standing(steps)[0].reason == "Don't know"


@pytest.mark.parametrize("page", ["", "<html></html>", "const frames = [[0, \"x", "const frames = {}",
                                  "const frames = [[0]]"])
def test_bad_pages_give_no_decisions(page: str) -> None:
    steps, problem = decision_records.parse_fusion_visualization(page)
    assert steps == []
    if "[[0]]" not in page:
        assert problem


# -- where the record comes from --------------------------------------------------------------------

def test_collection_options_per_platform_and_when_it_steps_aside() -> None:
    gpu = collection_options("cuda", "/d")
    assert gpu == {"xla_dump_to": "/d", "xla_dump_hlo_pass_re": "priority-fusion"}
    # the CPU's and TPU's records are costly: only when asked for
    assert collection_options("cpu", "/d") == {} == collection_options("tpu", "/d")
    assert collection_options("cpu", "/d", everything=True)["xla_dump_fusion_visualization"] is True
    assert collection_options("tpu", "/d", everything=True)["xla_dump_to"] == "/d"
    assert collection_options("rocm", "/d") == {}
    assert collection_refused({"xla_dump_to": "/mine"}, "") == "not collected: the example sets xla_dump_to"
    assert collection_refused({}, "--xla_dump_to=/x") is not None
    assert collection_refused({"xla_cpu_enable_fast_math": "true"}, "--xla_gpu_x=1") is None


def test_collect_reads_a_folder_as_the_gpu_compile_leaves_it(tmp_path: Path) -> None:
    hlo = _read("gpu_h100", "optimized.txt")
    (tmp_path / "module_0003.jit_with_dot.priority_fusion_dump.txt").write_text(_read("gpu_h100", "record.txt"))
    (tmp_path / "module_0003.jit_with_dot.0001.fusion.after_priority-fusion.before_cse.txt").write_text(
        _read("gpu_h100", "after_pass.txt"))
    (tmp_path / "module_0001.jit_other.priority_fusion_dump.txt").write_text("garbage {")
    found, note = collect("cuda", str(tmp_path), hlo)
    assert {d.producer_instruction for d in found} == {"gemm_fusion_dot_general.1", "input_reduce_fusion"}
    assert note.startswith("priority-fusion: 5 steps")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert collect("cuda", str(empty), hlo) == ([], "XLA wrote no priority-fusion record")
    assert collect("cpu", str(empty), hlo) == ([], "XLA wrote no fusion visualization")


# -- the data model ------------------------------------------------------------------------------

def test_decisions_and_quoted_reasons_survive_json_and_snapshots() -> None:
    found, note = _gpu()
    report = _report("gpu_h100", found)
    report.fusion_decisions_note = note
    again = Report.from_json(report.to_json())
    assert again.fusion_decisions == report.fusion_decisions
    assert again.reductions == report.reductions
    # a snapshot stores the decisions as facts; loading derives the analysis again and re-attaches the quotes
    snap = Snapshot.from_report(report, {"target": "gpu:h100"}, {})
    assert snap.facts["fusion_decisions"] and "reductions" not in snap.facts
    loaded = Snapshot(**json.loads(json.dumps({k: getattr(snap, k) for k in ("identity", "toolchain", "facts",
                                                                            "texts")}))).report("", "seed.py")
    (unfused,) = [r for r in loaded.verdict_reductions if not r.fused]
    assert unfused.reason is not None and "the producer is not fusible" in (unfused.reason.quoted or "")
    # a snapshot made before the decisions were collected still loads, without quotes
    old = dict(snap.facts)
    old.pop("fusion_decisions")
    old.pop("fusion_decisions_note")
    plain = Snapshot(snap.identity, snap.toolchain, old, snap.texts).report("", "seed.py")
    assert plain.fusion_decisions == [] and all(r.reason is None or r.reason.quoted is None for r in plain.reductions)


def test_committed_snapshots_still_load() -> None:
    from sphinx_jaxhlo.store.snapshots import read

    slot = ROOT / "docs" / "_snapshots" / "index" / "jaxhlo-home-seed.with_dot.gpu-h100.json"
    stored = read(slot)
    assert stored is not None
    report = stored.snapshot.report("", "seed.py")
    assert report.largest_materialized is not None and report.largest_materialized.shape == "f32[50000,100000]"


# -- compiling (slow) --------------------------------------------------------------------------

_IDENTITY = """
import json, os, sys
from sphinx_jaxhlo.compiler import worker
from sphinx_jaxhlo.compiler.compiling import DECISIONS_VARIABLE
from sphinx_jaxhlo.core.request import CompileRequest
from sphinx_jaxhlo.core.specs import parse_args
source = open(sys.argv[2]).read()
req = CompileRequest(source=source, function="with_dot", specs=parse_args("f32[100000,3], f32[50000,3]"),
                     target=sys.argv[1], source_name="seed.py")
out = {}
for state in ("0", "1", "all"):
    os.environ[DECISIONS_VARIABLE] = state
    report = worker.compile_request(req.to_json())
    out[state] = {"hlo": report.hlo, "memory": report.memory.__dict__, "note": report.fusion_decisions_note,
                  "decisions": len(report.fusion_decisions), "seconds": report.compile_seconds,
                  "quoted": [r.reason.quoted for r in report.reductions if r.reason is not None]}
print(json.dumps(out))
"""


def _compile_each_way(target: str) -> dict[str, dict[str, object]]:
    from sphinx_jaxhlo.compiler.lowering import prepare_environment

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    prepare_environment(env)
    done = subprocess.run([sys.executable, "-c", _IDENTITY, target, str(ROOT / "docs" / "examples" / "seed.py")],
                          env=env, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, dict[str, object]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "gpu:h100", "tpu:v5e"])
def test_collecting_the_record_does_not_change_the_program(target: str) -> None:
    if not TARGETS[target].available():
        pytest.skip(TARGETS[target].missing_message())
    ways = _compile_each_way(target)
    without, default, with_record = ways["0"], ways["1"], ways["all"]
    assert with_record["hlo"] == default["hlo"] == without["hlo"]
    assert with_record["memory"] == default["memory"] == without["memory"]
    assert "is off" in str(without["note"]) and without["decisions"] == 0
    assert "steps recorded" in str(with_record["note"])
    if target != "gpu:h100":
        assert "JAXHLO_FUSION_DECISIONS=all collects it" in str(default["note"]) and default["decisions"] == 0
    if target == "gpu:h100":
        assert any("the producer is not fusible" in str(q) for q in with_record["quoted"])  # type: ignore[attr-defined]
    if target == "cpu":
        assert any("custom fusions/calls" in str(q) for q in with_record["quoted"])  # type: ignore[attr-defined]
    if target == "tpu:v5e":
        assert with_record["quoted"] == []  # everything fuses: nothing to quote


def test_libtpu_decisions_are_kept_but_never_tied_to_a_finding() -> None:
    # names that the optimized module has: without a module after the pass, a
    # match by name could be a fusion renamed since, so nothing is mapped
    label = "Not fusing |gemm_fusion_dot_general.1| into |input_reduce_fusion| as it is expensive"
    page = "const frames = " + json.dumps([[0, label, ""]]) + ";"
    found, note = decisions.visualization_decisions(page, _read("gpu_h100", "optimized.txt"), None,
                                                    pass_name=decision_records.TPU_PASS,
                                                    source_file=decision_records.TPU_SOURCE, map_names=False)
    assert [(d.producer, d.reason, d.producer_instruction, d.mapping) for d in found] == [
        ("gemm_fusion_dot_general.1", "it is expensive", None, decisions.TPU_UNMAPPED)]
    assert "0 tied to the optimized module" in note
    report = _report("gpu_h100", found)
    assert all(r.reason is None or r.reason.quoted is None for r in report.reductions)


@pytest.mark.parametrize("target", ["gpu_h100", "cpu"])
def test_the_quick_reading_of_a_module_dump_agrees_with_the_parser(target: str) -> None:
    from sphinx_jaxhlo.hlo.parse import parse_module

    text = _read(target, "after_pass.txt")
    quick, full = decisions._scan_module(text), parse_module(text)
    assert quick is not None and quick.entry == full.entry and set(quick.computations) == set(full.computations)
    for name, comp in full.computations.items():
        scanned = quick.computations[name]
        assert scanned.root == comp.root
        for inst in comp:
            other = scanned[inst.name]
            assert (other.opcode, str(other.shape), other.operands, other.op_name) == (
                inst.opcode, str(inst.shape), inst.operands, inst.op_name)
            if inst.opcode == "fusion":
                assert other.called_computations == inst.called_computations[:1]
    # a line it does not recognise: the full parser reads the text instead
    assert decisions._scan_module(text.replace("\n  ROOT ", "\n  ROOT ???\n  ROOT ", 1)) is None


def test_the_quick_and_the_full_reading_of_a_record_agree() -> None:
    text = _read("gpu_h100", "record.txt")
    quick, problem = decision_records.parse_priority_fusion_dump(text)
    assert problem is None and len(quick) == 5
    one_line = " ".join(text[:text.index("gpu_device_info")].split())  # not one step per line: the full reader
    assert decision_records._quick_steps([one_line]) is None
    again, problem = decision_records.parse_priority_fusion_dump(one_line)
    assert problem is None
    assert [(s.kind, s.producer, s.reason, s.consumers, s.record) for s in again] == [
        (s.kind, s.producer, s.reason, s.consumers, s.record) for s in quick]
