"""Each rule of the analysis, pinned by a small hand-written module.

The rules are the ones the docstrings of the analysis modules state
(:mod:`sphinx_jaxhlo.hlo.programs`, :mod:`sphinx_jaxhlo.hlo.buffers`,
:mod:`sphinx_jaxhlo.hlo.fusion`); every test below builds the smallest
module that isolates one rule (or one side of one boundary) and states the
answer the rule gives, worked out by hand from the rule, not taken from the
analysis's output.  Where a rule also shows in real compiles,
tests/test_corpus.py checks it on the stored corpus against XLA's own figures.

The module texts are valid HLO as far as the analysis reads it; shapes are kept
small and element counts chosen so that each boundary is one element away.
"""

# ruff: noqa: E501  (lines of HLO text are long)
from __future__ import annotations

from pathlib import Path

import pytest

from sphinx_jaxhlo.core.report import Reduction, Report
from sphinx_jaxhlo.hlo.fusion import Analysis, analyze_module, reduction_origin
from sphinx_jaxhlo.hlo.parse import parse_module
from sphinx_jaxhlo.hlo.programs import producer_op, top_level_computations

ADD = """%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
"""


def module(text: str) -> str:
    return "HloModule m\n\n" + ADD + "\n" + text


def analyze(text: str) -> Analysis:
    return analyze_module(module(text))


def only_reduction(analysis: Analysis) -> Reduction:
    (reduction,) = analysis.reductions
    return reduction


def kinds(analysis: Analysis) -> dict[str, str]:
    """Buffer name -> "intermediate" or "argument-copy"."""
    return {m.name: m.kind for m in [*analysis.materialized, *analysis.argument_copies]}


# -- top-level computations --------------------------------------------------------

PROGRAMS = """
%reducer (r0: f32[], r1: f32[]) -> f32[] {
  %r0 = f32[] parameter(0)
  %r1 = f32[] parameter(1)
  ROOT %rs = f32[] maximum(%r0, %r1)
}

%fused (fp: f32[8]) -> f32[8] {
  %fp = f32[8]{0} parameter(0)
  ROOT %fn = f32[8]{0} negate(%fp)
}

%inner_body (ib: (s32[], f32[8])) -> (s32[], f32[8]) {
  ROOT %ib = (s32[], f32[8]{0}) parameter(0)
}

%inner_cond (ic: (s32[], f32[8])) -> pred[] {
  %ic = (s32[], f32[8]{0}) parameter(0)
  ROOT %icf = pred[] constant(false)
}

%callee (c: f32[8]) -> f32[8] {
  %c = f32[8]{0} parameter(0)
  %c0 = s32[] constant(0)
  %ct = (s32[], f32[8]{0}) tuple(%c0, %c)
  %cw = (s32[], f32[8]{0}) while(%ct), condition=%inner_cond, body=%inner_body
  ROOT %cg = f32[8]{0} get-tuple-element(%cw), index=1
}

%branch_a (ba: f32[8]) -> f32[8] {
  ROOT %ba = f32[8]{0} parameter(0)
}

%branch_b (bb: f32[8]) -> f32[8] {
  %bb = f32[8]{0} parameter(0)
  ROOT %bn = f32[8]{0} negate(%bb)
}

%wbody (w: (s32[], f32[8])) -> (s32[], f32[8]) {
  ROOT %w = (s32[], f32[8]{0}) parameter(0)
}

%wcond (wc: (s32[], f32[8])) -> pred[] {
  %wc = (s32[], f32[8]{0}) parameter(0)
  ROOT %f = pred[] constant(false)
}

%wrapped (ap: f32[8]) -> f32[8] {
  %ap = f32[8]{0} parameter(0)
  ROOT %as = f32[8]{0} sine(%ap)
}

ENTRY %e (i: s32[], x: f32[8]) -> f32[] {
  %i = s32[] parameter(0)
  %x = f32[8]{0} parameter(1)
  %t = (s32[], f32[8]{0}) tuple(%i, %x)
  %loop = (s32[], f32[8]{0}) while(%t), condition=%wcond, body=%wbody
  %lx = f32[8]{0} get-tuple-element(%loop), index=1
  %k = f32[8]{0} call(%lx), to_apply=%callee
  %br = f32[8]{0} conditional(%i, %k, %k), branch_computations={%branch_a, %branch_b}
  %st = ((f32[8]{0}), f32[8]{0}, u32[]) async-start(%br), calls=%wrapped
  %dn = f32[8]{0} async-done(%st)
  %fu = f32[8]{0} fusion(%dn), kind=kLoop, calls=%fused
  %z = f32[] constant(0)
  ROOT %m = f32[] reduce(%fu, %z), dimensions={0}, to_apply=%reducer
}
"""


def test_top_level_computations_are_the_programs_the_entry_runs() -> None:
    found = top_level_computations(parse_module(module(PROGRAMS)))
    # The entry first; loop bodies and conditions, call targets, branches, async
    # wrapped computations; recursively (the loop inside the called computation).
    assert found[0] == "e"
    assert set(found) == {"e", "wcond", "wbody", "callee", "inner_cond", "inner_body", "branch_a", "branch_b",
                          "wrapped"}
    # Fusion bodies and reducers run inside one kernel; ``add`` is never called.
    assert not {"fused", "reducer", "add"} & set(found)


def test_top_level_computations_come_in_the_order_first_reached() -> None:
    found = top_level_computations(parse_module(module(PROGRAMS)))
    assert found == ["e", "wcond", "wbody", "callee", "inner_cond", "inner_body", "branch_a", "branch_b", "wrapped"]


def test_async_start_runs_every_computation_it_names() -> None:
    text = """
%w1 (a: f32[8]) -> f32[8] {
  ROOT %a = f32[8]{0} parameter(0)
}

%w2 (b: f32[8]) -> f32[8] {
  ROOT %b = f32[8]{0} parameter(0)
}

ENTRY %e (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %st = ((f32[8]{0}), f32[8]{0}, u32[]) async-start(%x), calls={%w1, %w2}
  ROOT %dn = f32[8]{0} async-done(%st)
}
"""
    assert top_level_computations(parse_module(module(text))) == ["e", "w1", "w2"]
    one = text.replace("calls={%w1, %w2}", "calls=%w2")
    assert top_level_computations(parse_module(module(one))) == ["e", "w2"]


def test_each_top_level_computation_is_analyzed() -> None:
    analysis = analyze(PROGRAMS)
    # work in the entry and in the computations it runs, not in fusion bodies or reducers
    assert {(f.name, f.computation) for f in analysis.fusions} == {
        ("loop", "e"), ("k", "e"), ("br", "e"), ("st", "e"), ("dn", "e"), ("fu", "e"), ("m", "e"),
        ("cw", "callee"), ("bn", "branch_b"), ("as", "wrapped"),
    }  # fmt: skip


# -- fusions ---------------------------------------------------------------------------


@pytest.mark.parametrize(("op", "is_fusion"), [
    ("parameter", False), ("constant", False), ("tuple", False), ("get-tuple-element", False), ("bitcast", False),
    ("copy", True), ("reshape", True), ("transpose", True), ("broadcast", True), ("negate", True), ("slice", True),
])  # fmt: skip
def test_every_instruction_that_does_work_is_a_fusion(op: str, is_fusion: bool) -> None:
    line = {
        "parameter": "%v = f32[4]{0} parameter(1)",
        "constant": "%v = f32[4]{0} constant({1, 2, 3, 4})",
        "tuple": "%v = (f32[4]{0}) tuple(%x)",
        "get-tuple-element": "%v = f32[4]{0} get-tuple-element(%tx), index=0",
    }.get(op, f"%v = f32[4]{{0}} {op}(%x)")
    analysis = analyze(f"""
ENTRY %e (x: f32[4], y: f32[4]) -> f32[4] {{
  %x = f32[4]{{0}} parameter(0)
  %tx = (f32[4]{{0}}) tuple(%x)
  {line}
  ROOT %out = f32[4]{{0}} sine(%x)
}}
""")
    names = [f.name for f in analysis.fusions]
    assert ("v" in names) is is_fusion
    assert names[-1] == "out" and "tx" not in names and "x" not in names


def test_a_fusion_is_described_by_its_kind_and_the_ops_of_its_body() -> None:
    analysis = analyze("""
%body (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %n = f32[4]{0} negate(%p)
  %v = f32[2,2]{1,0} bitcast(%n)
  %w = f32[4]{0} bitcast(%v)
  %n2 = f32[4]{0} negate(%w)
  ROOT %s = f32[4]{0} sine(%n2)
}

ENTRY %e (x: f32[4]) -> (f32[4], f32[4]) {
  %x = f32[4]{0} parameter(0)
  %f = f32[4]{0} fusion(%x), kind=kLoop, calls=%body
  %c = f32[4]{0} cosine(%x)
  ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(%f, %c)
}
""")
    f, c = analysis.fusions
    # kLoop -> "Loop"; ops in program order, each once, views left out
    assert (f.name, f.kind, f.ops, f.shape, f.bytes, f.computation) == ("f", "Loop", ["negate", "sine"], "f32[4]", 16, "e")
    # an instruction that is not a fusion is its own kind and only op
    assert (c.name, c.kind, c.ops) == ("c", "cosine", ["cosine"])


# -- materialized buffers ------------------------------------------------------------


def test_a_value_read_by_another_instruction_is_materialized() -> None:
    analysis = analyze("""
ENTRY %e (x: f32[10]) -> f32[10] {
  %x = f32[10]{0} parameter(0)
  %a = f32[10]{0} sine(%x)
  ROOT %b = f32[10]{0} cosine(%a)
}
""")
    assert [(m.name, m.producer, m.consumers, m.shape, m.bytes, m.kind) for m in analysis.materialized] == [
        ("a", "a", ["b"], "f32[10]", 40, "intermediate")]
    assert analysis.argument_copies == []


def test_the_result_alone_is_not_materialized() -> None:
    analysis = analyze("""
ENTRY %e (x: f32[10]) -> (f32[10], f32[10]) {
  %x = f32[10]{0} parameter(0)
  %a = f32[10]{0} sine(%x)
  %b = f32[10]{0} cosine(%x)
  ROOT %t = (f32[10]{0}, f32[10]{0}) tuple(%a, %b)
}
""")
    assert analysis.materialized == []


def test_parameters_and_constants_are_not_materialized() -> None:
    analysis = analyze("""
ENTRY %e (x: f32[10]) -> f32[10] {
  %x = f32[10]{0} parameter(0)
  %c = f32[10]{0} constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
  ROOT %b = f32[10]{0} add(%x, %c)
}
""")
    assert analysis.materialized == [] and analysis.argument_copies == []


def test_readers_are_found_through_views() -> None:
    analysis = analyze("""
ENTRY %e (x: f32[10]) -> f32[10] {
  %x = f32[10]{0} parameter(0)
  %a = f32[10]{0} sine(%x)
  %v = f32[2,5]{1,0} bitcast(%a)
  %t = (f32[2,5]{1,0}, f32[10]{0}) tuple(%v, %x)
  %g = f32[2,5]{1,0} get-tuple-element(%t), index=0
  %h = f32[10]{0} get-tuple-element(%t), index=1
  %r = f32[2,5]{1,0} negate(%g)
  %s = f32[10]{0} negate(%h)
  ROOT %o = (f32[2,5]{1,0}, f32[10]{0}) tuple(%r, %s)
}
""")
    # %a is read by %r through a bitcast, a tuple and a get-tuple-element;
    # %s reads the other element of the tuple, not %a
    assert [(m.name, m.consumers) for m in analysis.materialized] == [("a", ["r"])]


def test_consumers_are_listed_once_in_program_order() -> None:
    analysis = analyze("""
ENTRY %e (x: f32[10]) -> f32[10] {
  %x = f32[10]{0} parameter(0)
  %a = f32[10]{0} sine(%x)
  %z = f32[10]{0} cosine(%a)
  %v = f32[10]{0} bitcast(%a)
  %y = f32[10]{0} add(%a, %v)
  ROOT %o = f32[10]{0} add(%z, %y)
}
""")
    assert {m.name: m.consumers for m in analysis.materialized}["a"] == ["z", "y"]


def test_the_context_of_an_async_start_is_not_a_buffer_its_done_is() -> None:
    analysis = analyze("""
ENTRY %e (x: f32[10]) -> f32[10] {
  %x = f32[10]{0} parameter(0)
  %a = f32[10]{0} sine(%x)
  %s = (f32[10]{0}, f32[10]{0}) all-reduce-start(%a), to_apply=%add
  %d = f32[10]{0} all-reduce-done(%s)
  ROOT %o = f32[10]{0} negate(%d)
}
""")
    assert [(m.name, m.consumers, m.kind) for m in analysis.materialized] == [
        ("a", ["s"], "intermediate"), ("d", ["o"], "intermediate")]


def test_each_element_of_a_tuple_is_its_own_buffer_named_by_its_reader() -> None:
    analysis = analyze("""
%two (p: f32[10]) -> (f32[10], f32[20]) {
  %p = f32[10]{0} parameter(0)
  %n = f32[10]{0} negate(%p)
  %c = f32[20]{0} concatenate(%n, %n), dimensions={0}
  ROOT %t = (f32[10]{0}, f32[20]{0}) tuple(%n, %c)
}

ENTRY %e (x: f32[10]) -> (f32[10], f32[20]) {
  %x = f32[10]{0} parameter(0)
  %m = (f32[10]{0}, f32[20]{0}) fusion(%x), kind=kLoop, calls=%two
  %g0 = f32[10]{0} get-tuple-element(%m), index=0
  %g1 = f32[20]{0} get-tuple-element(%m), index=1
  %s0 = f32[10]{0} sine(%g0)
  %s1 = f32[20]{0} sine(%g1)
  ROOT %o = (f32[10]{0}, f32[20]{0}) tuple(%s0, %s1)
}
""")
    # largest first
    assert [(m.name, m.shape, m.bytes, m.producer, m.consumers) for m in analysis.materialized] == [
        ("g1", "f32[20]", 80, "m", ["s1"]), ("g0", "f32[10]", 40, "m", ["s0"])]


def test_buffers_are_sorted_by_size_then_name() -> None:
    analysis = analyze("""
ENTRY %e (x: f32[10]) -> f32[20] {
  %x = f32[10]{0} parameter(0)
  %b = f32[10]{0} sine(%x)
  %a = f32[10]{0} cosine(%x)
  %c = f32[20]{0} concatenate(%a, %b), dimensions={0}
  %d = f32[20]{0} negate(%c)
  ROOT %o = f32[20]{0} add(%c, %d)
}
""")
    assert [m.name for m in analysis.materialized] == ["c", "d", "a", "b"]


# -- argument data -------------------------------------------------------------------

MOVES = """
ENTRY %e (x: f32[100], i: s32[]) -> f32[100] {{
  %x = f32[100]{{0}} parameter(0)
  %i = s32[] parameter(1)
  %j = s32[] add(%i, %i)
  {line}
  ROOT %o = f32[100]{{0}} sine(%v)
}}
"""


@pytest.mark.parametrize(("line", "kind"), [
    # moves of an argument: argument data
    ("%v = f32[100]{0} copy(%x)", "argument-copy"),
    ("%v = f32[100]{0} reshape(%x)", "argument-copy"),
    ("%v = f32[100]{0} transpose(%x), dimensions={0}", "argument-copy"),
    ("%v = f32[100]{0} slice(%x), slice={[0:100]}", "argument-copy"),
    ("%v = s32[100]{0} bitcast-convert(%x)", "argument-copy"),  # the same bits under another type
    # a dynamic-slice's scalar offset is an index, not data, computed or not
    ("%v = f32[100]{0} dynamic-slice(%x, %j), dynamic_slice_sizes={100}", "argument-copy"),
    ("%w = f32[50]{0} slice(%x), slice={[0:50]}\n  %v = f32[100]{0} concatenate(%w, %w), dimensions={0}", "argument-copy"),
    # on several devices, what a collective brings did not exist on the device: the program made it
    # for its readers (the weight an FSDP layer gathers), an intermediate, even of an argument...
    ("%v = f32[100]{0} all-gather(%x), dimensions={0}, replica_groups={}", "intermediate"),
    ("%v = f32[100]{0} collective-permute(%x), source_target_pairs={{0,1}}", "intermediate"),
    ("%v = f32[100]{0} all-to-all(%x), dimensions={0}", "intermediate"),
    ("%s = (f32[100]{0}, f32[100]{0}) all-gather-start(%x), dimensions={0}\n  %v = f32[100]{0} all-gather-done(%s)",
     "intermediate"),
    ("%s = (f32[100]{0}, f32[100]{0}) collective-permute-start(%x), source_target_pairs={{0,1}}\n"
     "  %v = f32[100]{0} collective-permute-done(%s)", "intermediate"),
    # ... and so is a copy or a reshape of a gathered argument
    ("%g = f32[100]{0} all-gather(%x), dimensions={0}, replica_groups={}\n  %v = f32[100]{0} copy(%g)",
     "intermediate"),
    ("%g = f32[100]{0} all-gather(%x), dimensions={0}, replica_groups={}\n  %v = f32[100]{0} reshape(%g)",
     "intermediate"),
    # ... while a prefetch of the argument itself stays an argument copy
    ("%s = (f32[100]{0}, f32[100]{0}, u32[]) copy-start(%x)\n  %v = f32[100]{0} copy-done(%s)", "argument-copy"),
    # summing pieces makes new data too
    ("%v = f32[100]{0} all-reduce(%x), to_apply=%add", "intermediate"),
    ("%v = f32[100]{0} reduce-scatter(%x), dimensions={0}, to_apply=%add", "intermediate"),
    # a move that changes the element type rounds the values: new data
    ("%v = bf16[100]{0} reshape(%x)", "intermediate"),
    ("%v = f16[100]{0} copy(%x)", "intermediate"),
    # however small: only scalars (indices) are left out of the comparison
    ("%x2 = f32[2]{0} slice(%x), slice={[0:2]}\n  %v = bf16[2]{0} reshape(%x2)", "intermediate"),
    ("%s1 = f32[1]{0} slice(%x), slice={[0:1]}\n  %v = bf16[101]{0} concatenate(%s1, %x), dimensions={0}",
     "intermediate"),
    # a computed piece of two elements is data: the join is new data
    ("%c2 = f32[2]{0} broadcast(%j), dimensions={}\n  %v = f32[102]{0} concatenate(%x, %c2), dimensions={0}",
     "intermediate"),
    # computing is not moving
    ("%v = f32[100]{0} negate(%x)", "intermediate"),
    ("%v = f32[100]{0} convert(%x)", "intermediate"),
    ("%v = f32[100]{0} broadcast(%i), dimensions={}", "intermediate"),
])  # fmt: skip
def test_a_move_of_an_argument_holds_argument_data(line: str, kind: str) -> None:
    analysis = analyze(MOVES.format(line=line))
    assert kinds(analysis)["v"] == kind


def test_a_copy_of_computed_data_is_an_intermediate() -> None:
    analysis = analyze(MOVES.format(line="%n = f32[100]{0} negate(%x)\n  %v = f32[100]{0} copy(%n)"))
    assert kinds(analysis) == {"n": "intermediate", "v": "intermediate"}


def test_a_chain_of_moves_of_an_argument_holds_argument_data() -> None:
    analysis = analyze(MOVES.format(
        line="%t = f32[100]{0} transpose(%x), dimensions={0}\n  %w = f32[10,10]{1,0} reshape(%t)\n  %v = f32[100]{0} copy(%w)"))
    assert kinds(analysis) == {"t": "argument-copy", "w": "argument-copy", "v": "argument-copy"}
    assert analysis.materialized == []
    assert [m.name for m in analysis.argument_copies] == ["t", "v", "w"]  # same size: by name


def test_a_move_of_two_pieces_holds_argument_data_only_if_both_do() -> None:
    both = analyze(MOVES.format(
        line="%w = f32[50]{0} slice(%x), slice={[0:50]}\n  %u = f32[50]{0} slice(%x), slice={[50:100]}\n"
             "  %v = f32[100]{0} concatenate(%w, %u), dimensions={0}"))
    assert kinds(both)["v"] == "argument-copy"
    one = analyze(MOVES.format(
        line="%w = f32[50]{0} slice(%x), slice={[0:50]}\n  %u = f32[50]{0} exponential(%w)\n"
             "  %v = f32[100]{0} concatenate(%w, %u), dimensions={0}"))
    assert kinds(one)["v"] == "intermediate"


def test_a_prefetch_copy_start_done_holds_argument_data() -> None:
    analysis = analyze("""
ENTRY %e (x: f32[100]) -> f32[100] {
  %x = f32[100]{0} parameter(0)
  %cs = (f32[100]{0:S(1)}, f32[100]{0}, u32[]) copy-start(%x), cross_program_prefetch_index=0
  %cd = f32[100]{0:S(1)} copy-done(%cs)
  ROOT %o = f32[100]{0} sine(%cd)
}
""")
    assert kinds(analysis) == {"cd": "argument-copy"}


SLICES = """
ENTRY %e (x: f32[100]) -> f32[100] {{
  %x = f32[100]{{0}} parameter(0)
  %ss0 = ((f32[100]{{0}}), f32[50]{{0}}, u32[]) slice-start(%x), slice={{[0:50]}}
  %sd0 = f32[50]{{0}} slice-done(%ss0)
  %ss1 = ((f32[100]{{0}}), f32[50]{{0}}, u32[]) slice-start(%x), slice={{[50:100]}}
  %sd1 = f32[50]{{0}} slice-done(%ss1)
  %cb = f32[100]{{0}} custom-call(%sd0, %sd1), custom_call_target="{target}"
  ROOT %o = f32[100]{{0}} sine(%cb)
}}
"""


def test_slice_pieces_joined_by_concat_bitcast_hold_argument_data() -> None:
    analysis = analyze(SLICES.format(target="ConcatBitcast"))
    assert kinds(analysis) == {"sd0": "argument-copy", "sd1": "argument-copy", "cb": "argument-copy"}


def test_another_custom_call_makes_new_data() -> None:
    analysis = analyze(SLICES.format(target="MyKernel"))
    assert kinds(analysis) == {"sd0": "argument-copy", "sd1": "argument-copy", "cb": "intermediate"}


def test_concat_bitcast_that_changes_the_type_makes_new_data() -> None:
    analysis = analyze(SLICES.format(target="ConcatBitcast").replace(
        "%cb = f32[100]{0}", "%cb = bf16[100]{0}").replace("%o = f32[100]{0} sine", "%o = bf16[100]{0} sine"))
    assert kinds(analysis)["cb"] == "intermediate"


MOVE_FUSION = """
%moves (p: f32[100]) -> f32[100] {{
  %p = f32[100]{{0}} parameter(0)
  %t = f32[10,10]{{1,0}} reshape(%p)
  %u = f32[10,10]{{1,0}} transpose(%t), dimensions={{1,0}}
  {extra}
  ROOT %r = f32[100]{{0}} reshape(%{last})
}}

ENTRY %e (x: f32[100]) -> f32[100] {{
  %x = f32[100]{{0}} parameter(0)
  %v = f32[100]{{0}} fusion(%x), kind=kLoop, calls=%moves
  ROOT %o = f32[100]{{0}} sine(%v)
}}
"""


@pytest.mark.parametrize(("extra", "last", "kind"), [
    ("", "u", "argument-copy"),
    # a scalar constant (a padding value) does not make data
    ("%z = f32[] constant(0)\n  %w = f32[10,10]{1,0} pad(%u, %z), padding=0_0x0_0", "w", "intermediate"),
    ("%z = f32[] constant(0)\n  %w = f32[10,10]{1,0} copy(%u)", "w", "argument-copy"),
    ("%w = f32[100]{0} bitcast(%u)", "w", "argument-copy"),
    # one op that computes, or a constant array, and the fusion makes new data
    ("%w = f32[10,10]{1,0} negate(%u)", "w", "intermediate"),
    ("%k = f32[10,10]{1,0} constant({...})\n  %w = f32[10,10]{1,0} concatenate(%u, %k), dimensions={0}", "w",
     "intermediate"),
    ("%k = f32[2]{0} constant({1, 2})\n  %f = f32[100]{0} reshape(%u)\n  %w = f32[102]{0} concatenate(%f, %k), dimensions={0}",
     "w", "intermediate"),
    # a move that converts inside the fusion
    ("%w = bf16[10,10]{1,0} reshape(%u)", "w", "intermediate"),
])  # fmt: skip
def test_a_fusion_of_nothing_but_moves_holds_argument_data(extra: str, last: str, kind: str) -> None:
    analysis = analyze(MOVE_FUSION.format(extra=extra, last=last))
    assert kinds(analysis)["v"] == kind


def test_a_fusion_of_moves_of_computed_data_is_an_intermediate() -> None:
    text = MOVE_FUSION.format(extra="", last="u").replace(
        "%v = f32[100]{0} fusion(%x)", "%n = f32[100]{0} negate(%x)\n  %v = f32[100]{0} fusion(%n)")
    assert kinds(analyze(text))["v"] == "intermediate"


LOOP = """
%body (s: (s32[], f32[100], f32[100])) -> (s32[], f32[100], f32[100]) {{
  %s = (s32[], f32[100]{{0}}, f32[100]{{0}}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %xs = f32[100]{{0}} get-tuple-element(%s), index=1
  %acc = f32[100]{{0}} get-tuple-element(%s), index=2
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %cx = f32[100]{{0}} copy(%xs)
  %ca = f32[100]{{0}} copy(%acc)
  %new = f32[100]{{0}} add(%cx, %ca)
  {passed}
  ROOT %out = (s32[], f32[100]{{0}}, f32[100]{{0}}) tuple(%i1, %{xs_out}, %new)
}}

%cond (c: (s32[], f32[100], f32[100])) -> pred[] {{
  %c = (s32[], f32[100]{{0}}, f32[100]{{0}}) parameter(0)
  %ci = s32[] get-tuple-element(%c), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%ci, %n), direction=LT
}}

ENTRY %e (x: f32[100]) -> f32[100] {{
  %x = f32[100]{{0}} parameter(0)
  {feed}
  %zero = s32[] constant(0)
  %acc0 = f32[100]{{0}} negate(%x)
  %st = (s32[], f32[100]{{0}}, f32[100]{{0}}) tuple(%zero, %{fed}, %acc0)
  %w = (s32[], f32[100]{{0}}, f32[100]{{0}}) while(%st), condition=%cond, body=%body
  ROOT %res = f32[100]{{0}} get-tuple-element(%w), index=2
}}
"""


def loop(passed: str = "", xs_out: str = "xs", feed: str = "", fed: str = "x") -> Analysis:
    return analyze(LOOP.format(passed=passed, xs_out=xs_out, feed=feed, fed=fed))


def body_kinds(analysis: Analysis) -> dict[str, str]:
    return {m.name: m.kind for m in [*analysis.materialized, *analysis.argument_copies] if m.computation == "body"}


def test_loop_state_passed_through_unchanged_holds_argument_data() -> None:
    # xs: given the argument, handed on unchanged (a scan's xs); acc: updated
    assert body_kinds(loop()) == {"cx": "argument-copy", "ca": "intermediate"}


def test_loop_state_passed_through_a_bitcast_is_still_unchanged() -> None:
    analysis = loop(passed="%xv = f32[10,10]{1,0} bitcast(%xs)\n  %xb = f32[100]{0} bitcast(%xv)", xs_out="xb")
    assert body_kinds(analysis)["cx"] == "argument-copy"


def test_loop_state_that_the_body_changes_is_not_argument_data() -> None:
    analysis = loop(passed="%xn = f32[100]{0} negate(%xs)", xs_out="xn")
    assert body_kinds(analysis)["cx"] == "intermediate"


def test_loop_state_that_the_body_swaps_is_not_argument_data() -> None:
    # element 1 comes back as element 2 read from the state: not the same element
    assert body_kinds(loop(xs_out="acc"))["cx"] == "intermediate"


def test_loop_state_the_program_computed_is_not_argument_data() -> None:
    analysis = loop(feed="%fx = f32[100]{0} exponential(%x)", fed="fx")
    assert body_kinds(analysis)["cx"] == "intermediate"
    # the computed value that feeds the loop is listed where the loop reads it
    assert {(m.name, m.computation, m.kind) for m in analysis.materialized} >= {("fx", "e", "intermediate")}


def test_loop_state_given_a_copy_of_an_argument_holds_argument_data() -> None:
    analysis = loop(feed="%fx = f32[100]{0} copy(%x)", fed="fx")
    assert body_kinds(analysis)["cx"] == "argument-copy"
    assert {m.name: m.kind for m in analysis.argument_copies}["fx"] == "argument-copy"


BRANCHES = """
%b0 (p: f32[100]) -> f32[100] {
  %p = f32[100]{0} parameter(0)
  %c0 = f32[100]{0} copy(%p)
  ROOT %s0 = f32[100]{0} sine(%c0)
}

%b1 (q: f32[100]) -> f32[100] {
  %q = f32[100]{0} parameter(0)
  %c1 = f32[100]{0} copy(%q)
  ROOT %s1 = f32[100]{0} sine(%c1)
}

%called (r0: f32[100], r1: f32[100]) -> f32[100] {
  %r0 = f32[100]{0} parameter(0)
  %r1 = f32[100]{0} parameter(1)
  %k0 = f32[100]{0} copy(%r0)
  %k1 = f32[100]{0} copy(%r1)
  ROOT %ks = f32[100]{0} add(%k0, %k1)
}

ENTRY %e (i: s32[], x: f32[100]) -> (f32[100], f32[100]) {
  %i = s32[] parameter(0)
  %x = f32[100]{0} parameter(1)
  %n = f32[100]{0} negate(%x)
  %br = f32[100]{0} conditional(%i, %x, %n), branch_computations={%b0, %b1}
  %cl = f32[100]{0} call(%n, %x), to_apply=%called
  ROOT %t = (f32[100]{0}, f32[100]{0}) tuple(%br, %cl)
}
"""


def test_a_branch_parameter_holds_what_its_branch_was_given() -> None:
    found = kinds(analyze(BRANCHES))
    # branch 0 gets the argument (operand 1), branch 1 the negated one (operand 2)
    assert (found["c0"], found["c1"]) == ("argument-copy", "intermediate")


def test_a_called_computation_parameter_holds_what_the_call_passed() -> None:
    found = kinds(analyze(BRANCHES))
    assert (found["k0"], found["k1"]) == ("intermediate", "argument-copy")


# -- reductions: fused or not ----------------------------------------------------------

COUNT = """
%sum (p: f32[{n}]) -> f32[] {{
  %p = f32[{n}]{{0}} parameter(0)
  %z = f32[] constant(0)
  %fit = f32[100]{{0}} {fit}
  %e = f32[100]{{0}} exponential(%fit)
  ROOT %r = f32[] reduce(%e, %z), dimensions={{0}}, to_apply=%add
}}

ENTRY %e (x: f32[{n}]) -> f32[] {{
  %x = f32[{n}]{{0}} parameter(0)
  %buf = f32[{n}]{{0}} sine(%x)
  ROOT %f = f32[] fusion(%buf), kind=kInput, calls=%sum
}}
"""


@pytest.mark.parametrize(("n", "fit", "fused"), [
    # a buffer with as many elements as the reduced operand: the data went to memory
    (100, "copy(%p)", False),
    # one more (sliced down to the reduced operand): also
    (101, "slice(%p), slice={[0:100]}", False),
    # one fewer, padded up to it (the GPU pads rows it splits): also
    (99, "pad(%p, %z), padding=0_1", False),
    # half of the reduced values come from memory: unfused ...
    (50, "pad(%p, %z), padding=0_50", False),
    # ... one fewer than half: the rest is the pad's value, made in the kernel
    (49, "pad(%p, %z), padding=0_51", True),
])  # fmt: skip
def test_unfused_when_half_the_reduced_elements_come_from_memory(n: int, fit: str, fused: bool) -> None:
    reduction = only_reduction(analyze(COUNT.format(n=n, fit=fit)))
    assert reduction.fused is fused
    assert reduction.input_materialized == (None if fused else "buf")
    assert (reduction.input_shape, reduction.input_bytes) == ("f32[100]", 400)
    # the ops between the buffer and the reduce, in program order
    assert reduction.fused_with == [fit.split("(")[0], "exponential"]


def between(buffers: dict[str, str], body: str) -> Reduction:
    """The reduction of ``%v`` (made by ``body`` from the parameters ``%p<name>``
    of a fusion), each parameter a buffer ``<name>`` that another kernel stored."""
    names = list(buffers)
    params = ", ".join(f"p{n}: {buffers[n]}" for n in names)
    lines = [f"  %p{n} = {buffers[n]} parameter({i})" for i, n in enumerate(names)]
    entry_lines = [f"  %x{n} = {buffers[n]} parameter({i})\n  %{n} = {buffers[n]} sine(%x{n})"
                   for i, n in enumerate(names)]
    body_lines = "\n".join(f"  {line.strip()}" for line in body.strip().splitlines())
    v = next(line for line in body.splitlines() if line.strip().startswith("%v "))
    rank = v.split("=")[1].split("[")[1].split("]")[0].count(",") + 1
    text = (f"%sum ({params}) -> f32[] {{\n" + "\n".join(lines) + "\n  %z = f32[] constant(0)\n" + body_lines
            + f"\n  ROOT %r = f32[] reduce(%v, %z), dimensions={{{','.join(map(str, range(rank)))}}}, to_apply=%add\n}}\n\n"
            + f"ENTRY %e ({', '.join(f'x{n}: {buffers[n]}' for n in names)}) -> f32[] {{\n" + "\n".join(entry_lines)
            + f"\n  ROOT %f = f32[] fusion({', '.join('%' + n for n in names)}), kind=kInput, calls=%sum\n}}\n")
    return only_reduction(analyze(text))


@pytest.mark.parametrize(("buffers", "body", "expected"), [
    # the GPU's padded row of a log-sum-exp over a 30522-word vocabulary: the stored logits, padded by one
    ({"a": "f32[30522]"}, "%v = f32[30523] pad(%pa, %z), padding=0_1", "a"),
    # stored pieces joined: each is under the reduced size, together they are all of it
    ({"a": "f32[60]", "b": "f32[40]"}, "%v = f32[100] concatenate(%pa, %pb), dimensions={0}", "a"),
    # one stored piece (40 of 100) beside values the kernel makes
    ({"a": "f32[40]"}, "%c = f32[60] broadcast(%z), dimensions={}\n%v = f32[100] concatenate(%pa, %c), dimensions={0}", None),
    # a slice of a larger buffer: what reaches the reduce counts, not the buffer ...
    ({"a": "f32[1000]"}, "%v = f32[100] slice(%pa), slice={[0:100]}", "a"),
    # ... so 40 elements of it padded to 100 are mostly made in the kernel
    ({"a": "f32[1000]"}, "%s = f32[40] slice(%pa), slice={[0:40]}\n%v = f32[100] pad(%s, %z), padding=0_60", None),
    ({"a": "f32[1000]"}, "%i = s32[] constant(3)\n%v = f32[100] dynamic-slice(%pa, %i), dynamic_slice_sizes={100}", "a"),
    ({"a": "f32[1000]"}, "%i = s32[] constant(3)\n%s = f32[40] dynamic-slice(%pa, %i), dynamic_slice_sizes={40}\n"
                         "%v = f32[100] pad(%s, %z), padding=0_60", None),
    ({"a": "f32[100]"}, "%v = f32[100] reverse(%pa), dimensions={0}", "a"),
    ({"a": "f32[10,20]"}, "%v = f32[20,10] transpose(%pa), dimensions={1,0}", "a"),
    # a broadcast repeats what the kernel read once: the repeats are made in the kernel
    ({"a": "f32[10]"}, "%v = f32[10,10] broadcast(%pa), dimensions={1}", None),
    # twice over, half of the reduced values are stored ones; three times over, a third
    ({"a": "f32[50]"}, "%v = f32[2,50] broadcast(%pa), dimensions={1}", "a"),
    ({"a": "f32[33]"}, "%v = f32[3,33] broadcast(%pa), dimensions={1}", None),
    # a buffer read twice counts once: 30 stored values, 70 made in the kernel
    ({"a": "f32[30]"}, "%c = f32[40] broadcast(%z), dimensions={}\n%v = f32[100] concatenate(%pa, %pa, %c), dimensions={0}", None),
    # elements, not bytes: an s8 buffer converted to f32 is all of the reduced values
    ({"a": "s8[100]"}, "%v = f32[100] convert(%pa)", "a"),
    # a large stored operand beside a small broadcast one: the large one is named
    ({"b": "f32[10]", "a": "f32[10,10]"}, "%bb = f32[10,10] broadcast(%pb), dimensions={1}\n%v = f32[10,10] multiply(%bb, %pa)", "a"),
])  # fmt: skip
def test_what_stands_between_a_stored_buffer_and_the_reduce(buffers: dict[str, str], body: str,
                                                            expected: str | None) -> None:
    assert between(buffers, body).input_materialized == expected


def test_elements_count_not_shapes() -> None:
    text = COUNT.format(n=100, fit="copy(%p)").replace("%buf = f32[100]{0} sine(%x)",
                                                      "%s = f32[100]{0} sine(%x)\n  %buf = f32[4,25]{1,0} reshape(%s)")
    text = text.replace("%sum (p: f32[100])", "%sum (p: f32[4,25])").replace("%p = f32[100]{0}", "%p = f32[4,25]{1,0}")
    text = text.replace("copy(%p)", "reshape(%p)")
    assert only_reduction(analyze(text)).input_materialized == "buf"


SLICED_INPUTS = """
%sum (p: f32[{m}], q: f32[{n}]) -> f32[] {{
  %p = f32[{m}]{{0}} parameter(0)
  %q = f32[{n}]{{0}} parameter(1)
  %ps = f32[100]{{0}} slice(%p), slice={{[0:100]}}
  %qs = f32[100]{{0}} slice(%q), slice={{[0:100]}}
  %m = f32[100]{{0}} multiply(%qs, %ps)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%m, %z), dimensions={{0}}, to_apply=%add
}}

ENTRY %e (x: f32[{m}], y: f32[{n}]) -> f32[] {{
  %x = f32[{m}]{{0}} parameter(0)
  %y = f32[{n}]{{0}} parameter(1)
  %a = f32[{m}]{{0}} sine(%x)
  %b = f32[{n}]{{0}} sine(%y)
  ROOT %f = f32[] fusion(%a, %b), kind=kInput, calls=%sum
}}
"""


def test_the_largest_buffer_that_flows_in_is_named() -> None:
    # the same fusion with its two inputs' sizes swapped: the larger is named either way
    assert only_reduction(analyze(SLICED_INPUTS.format(m=150, n=120))).input_materialized == "a"
    assert only_reduction(analyze(SLICED_INPUTS.format(m=120, n=150))).input_materialized == "b"


NEW_DATA = """
%sum (p: f32[100]) -> f32[] {{
  %p = f32[100]{{0}} parameter(0)
  %n = f32[100]{{0}} {op}(%p)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%n, %z), dimensions={{0}}, to_apply=%add
}}

ENTRY %e (x: f32[100]) -> f32[] {{
  %x = f32[100]{{0}} parameter(0)
  %big = f32[100]{{0}} sine(%x)
  ROOT %f = f32[] fusion(%big), kind=kInput, calls=%sum
}}
"""

# The ops the rule counts as making new data out of many input elements (or none),
# written out by hand: a buffer that reaches the reduce only through one of them
# is not the reduced data.
MAKES_NEW_DATA = [
    "dot", "convolution", "ragged-dot", "reduce", "reduce-window", "select-and-scatter", "scatter", "sort", "fft",
    "custom-call", "triangular-solve", "cholesky", "rng", "rng-bit-generator", "rng-get-and-update-state", "iota",
    "while", "conditional", "call", "map", "all-reduce", "all-gather", "reduce-scatter", "all-to-all",
    "collective-permute", "ragged-all-to-all", "topk", "cumsum", "reduce-precision",
]  # fmt: skip
#: Elementwise and data-movement ops pass the data on.
PASSES_DATA_ON = ["negate", "exponential", "convert", "copy", "reshape", "transpose", "bitcast", "broadcast", "slice",
                  "reverse", "pad", "dynamic-slice", "concatenate", "select", "clamp", "gather", "abs"]


@pytest.mark.parametrize("op", MAKES_NEW_DATA)
def test_data_that_reaches_the_reduce_through_a_new_data_op_is_not_the_reduced_data(op: str) -> None:
    reductions = {r.name: r for r in analyze(NEW_DATA.format(op=op)).reductions}
    assert reductions["r"].input_materialized is None


@pytest.mark.parametrize("op", PASSES_DATA_ON)
def test_data_that_reaches_the_reduce_through_elementwise_and_moves_is_the_reduced_data(op: str) -> None:
    reduction = only_reduction(analyze(NEW_DATA.format(op=op)))
    assert reduction.input_materialized == "big"


def test_a_buffer_that_only_feeds_a_dot_is_not_the_reduced_data() -> None:
    # the seed's shape: a buffer as large as the reduced data goes into a dot, and
    # the dot's product is reduced in the same kernel: the product never went to memory
    analysis = analyze("""
%k (p: f32[100,100], w: f32[100,100]) -> f32[100] {
  %p = f32[100,100]{1,0} parameter(0)
  %w = f32[100,100]{1,0} parameter(1)
  %d = f32[100,100]{1,0} dot(%p, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %c = f32[100,100]{1,0} cosine(%d)
  %z = f32[] constant(0)
  ROOT %r = f32[100]{0} reduce(%c, %z), dimensions={1}, to_apply=%add
}

ENTRY %e (x: f32[100,100], y: f32[100,100]) -> f32[100] {
  %x = f32[100,100]{1,0} parameter(0)
  %y = f32[100,100]{1,0} parameter(1)
  %bx = f32[100,100]{1,0} sine(%x)
  %by = f32[100,100]{1,0} sine(%y)
  ROOT %f = f32[100]{0} fusion(%bx, %by), kind=kOutput, calls=%k
}
""")
    reduction = only_reduction(analysis)
    assert reduction.fused and reduction.fused_with == ["dot", "cosine"]
    assert {m.name for m in analysis.materialized} == {"bx", "by"}  # in memory, but not the reduced data


def test_a_top_level_reduce_reads_its_operand_from_memory() -> None:
    analysis = analyze("""
ENTRY %e (x: f32[100]) -> f32[] {
  %x = f32[100]{0} parameter(0)
  %s = f32[100]{0} sine(%x)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%s, %z), dimensions={0}, to_apply=%add
}
""")
    reduction = only_reduction(analysis)
    assert (reduction.fusion, reduction.input_materialized, reduction.fused_with) == ("r", "s", [])


def test_a_top_level_reduce_of_an_argument_is_fused() -> None:
    analysis = analyze("""
ENTRY %e (x: f32[100]) -> f32[] {
  %x = f32[100]{0} parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%x, %z), dimensions={0}, to_apply=%add
}
""")
    assert only_reduction(analysis).fused


@pytest.mark.parametrize(("producer", "fused"), [
    ("copy(%x)", True),  # a copy of an argument was in memory before the program ran
    ("transpose(%x), dimensions={0}", True),
    ("sine(%x)", False),
])  # fmt: skip
def test_a_buffer_that_holds_argument_data_is_not_the_reduced_data(producer: str, fused: bool) -> None:
    analysis = analyze(f"""
%sum (p: f32[100]) -> f32[] {{
  %p = f32[100]{{0}} parameter(0)
  %n = f32[100]{{0}} negate(%p)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%n, %z), dimensions={{0}}, to_apply=%add
}}

ENTRY %e (x: f32[100]) -> f32[] {{
  %x = f32[100]{{0}} parameter(0)
  %v = f32[100]{{0}} {producer}
  ROOT %f = f32[] fusion(%v), kind=kInput, calls=%sum
}}
""")
    assert only_reduction(analysis).fused is fused


LOOP_REDUCE = """
%red (q: f32[100]) -> f32[] {{
  %q = f32[100]{{0}} parameter(0)
  %c = f32[100]{{0}} cosine(%q)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%c, %z), dimensions={{0}}, to_apply=%add
}}

%body (s: (s32[], f32[100], f32[])) -> (s32[], f32[100], f32[]) {{
  %s = (s32[], f32[100]{{0}}, f32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %xs = f32[100]{{0}} get-tuple-element(%s), index=1
  %a = f32[] get-tuple-element(%s), index=2
  {read}
  %sum = f32[] fusion(%v), kind=kInput, calls=%red
  %a1 = f32[] add(%a, %sum)
  %xn = f32[100]{{0}} negate(%xs)
  ROOT %out = (s32[], f32[100]{{0}}, f32[]) tuple(%i, %xn, %a1)
}}

%cond (c: (s32[], f32[100], f32[])) -> pred[] {{
  %c = (s32[], f32[100]{{0}}, f32[]) parameter(0)
  ROOT %f = pred[] constant(false)
}}

ENTRY %e (x: f32[100]) -> f32[] {{
  %x = f32[100]{{0}} parameter(0)
  %x2 = f32[100]{{0}} exponential(%x)
  %zero = s32[] constant(0)
  %a0 = f32[] constant(0)
  %st = (s32[], f32[100]{{0}}, f32[]) tuple(%zero, %x2, %a0)
  %w = (s32[], f32[100]{{0}}, f32[]) while(%st), condition=%cond, body=%body
  ROOT %res = f32[] get-tuple-element(%w), index=2
}}
"""


@pytest.mark.parametrize(("read", "fused"), [
    # the loop state (even one the body changes, even computed by the program) was in memory before the kernel
    ("%v = f32[100]{0} bitcast(%xs)", True),
    ("%v = f32[100]{0} copy(%xs)", True),
    # a value the body computes from it is not
    ("%v = f32[100]{0} sine(%xs)", False),
])  # fmt: skip
def test_inside_a_loop_body_the_loop_state_is_not_the_reduced_data(read: str, fused: bool) -> None:
    analysis = analyze(LOOP_REDUCE.format(read=read))
    reduction = only_reduction(analysis)
    assert reduction.computation == "body"
    assert reduction.fused is fused
    # the buffer that fed the loop is listed where the loop reads it
    assert ("x2", "e") in {(m.name, m.computation) for m in analysis.materialized}


def test_a_variadic_reduce_reduces_its_first_half_of_operands() -> None:
    # argmax: (values, indices) reduced together, then two initial values
    analysis = analyze("""
%amax (a0: f32[], a1: s32[], b0: f32[], b1: s32[]) -> (f32[], s32[]) {
  %a0 = f32[] parameter(0)
  %a1 = s32[] parameter(1)
  %b0 = f32[] parameter(2)
  %b1 = s32[] parameter(3)
  ROOT %t = (f32[], s32[]) tuple(%a0, %a1)
}

ENTRY %e (x: f32[100]) -> (f32[], s32[]) {
  %x = f32[100]{0} parameter(0)
  %v = f32[100]{0} sine(%x)
  %io = s32[100]{0} iota(), iota_dimension=0
  %m = f32[] constant(-inf)
  %z = s32[] constant(0)
  ROOT %r = (f32[], s32[]) reduce(%v, %io, %m, %z), dimensions={0}, to_apply=%amax, metadata={op_name="jit(f)/argmax"}
}
""")
    reduction = only_reduction(analysis)
    assert (reduction.input_shape, reduction.input_bytes, reduction.input_materialized) == ("f32[100]", 400, "v")
    assert (reduction.op, reduction.origin) == ("argmax", "user")


def test_reductions_in_nested_fusions_are_found() -> None:
    analysis = analyze("""
%inner (ip: f32[100]) -> f32[] {
  %ip = f32[100]{0} parameter(0)
  %n = f32[100]{0} negate(%ip)
  %z = f32[] constant(0)
  ROOT %ir = f32[] reduce(%n, %z), dimensions={0}, to_apply=%add
}

%outer (op: f32[100]) -> f32[] {
  %op = f32[100]{0} parameter(0)
  %t = f32[100]{0} tanh(%op)
  ROOT %nf = f32[] fusion(%t), kind=kInput, calls=%inner
}

ENTRY %e (x: f32[100]) -> f32[] {
  %x = f32[100]{0} parameter(0)
  %s = f32[100]{0} sine(%x)
  ROOT %f = f32[] fusion(%s), kind=kOutput, calls=%outer
}
""")
    reduction = only_reduction(analysis)
    # found inside the nested body, attributed to the top-level fusion, the buffer
    # traced back through both levels of parameters
    assert (reduction.name, reduction.fusion, reduction.computation) == ("ir", "f", "e")
    assert reduction.input_materialized == "s"
    assert reduction.fused_with == ["tanh", "negate"]


# -- degenerate reductions -------------------------------------------------------------


@pytest.mark.parametrize(("shape", "listed"), [("f32[100,1]", False), ("f32[100,2]", True)])
def test_a_reduce_over_dimensions_of_size_1_is_not_a_reduction(shape: str, listed: bool) -> None:
    analysis = analyze(f"""
ENTRY %e (x: {shape}) -> f32[100] {{
  %x = {shape}{{1,0}} parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[100]{{0}} reduce(%x, %z), dimensions={{1}}, to_apply=%add
}}
""")
    assert bool(analysis.reductions) is listed
    assert [f.name for f in analysis.fusions] == ["r"]  # still work, still a kernel


@pytest.mark.parametrize(("window", "listed"), [
    ("window={size=1x1}", False),
    ("window={size=1}", False),
    ("window={size=1x1 stride=1x1}", False),
    # one dimension of size 2 is enough for a window to sum something (all, not any)
    ("window={size=1x2}", True),
    ("window={size=2x1}", True),
    ("window={size=2x2 stride=2x2}", True),
])  # fmt: skip
def test_a_reduce_window_of_size_1_is_not_a_reduction(window: str, listed: bool) -> None:
    analysis = analyze(f"""
ENTRY %e (x: f32[10,10]) -> f32[10,5] {{
  %x = f32[10,10]{{1,0}} parameter(0)
  %s = f32[10,10]{{1,0}} sine(%x)
  %z = f32[] constant(0)
  ROOT %r = f32[10,5]{{1,0}} reduce-window(%s, %z), {window}, to_apply=%add
}}
""")
    assert bool(analysis.reductions) is listed


# -- second stages --------------------------------------------------------------------

STAGES = """
%stage1 (p: f32[100,40]) -> f32[100,4] {{
  %p = f32[100,40]{{1,0}} parameter(0)
  %c = f32[100,40]{{1,0}} cosine(%p)
  %v = f32[100,4,10]{{2,1,0}} bitcast(%c)
  %z = f32[] constant(0)
  {stage1_root}
}}

%stage2 (q: f32[100,4]) -> f32[100] {{
  %q = f32[100,4]{{1,0}} parameter(0)
  {between}
  %z.1 = f32[] constant(0)
  ROOT %r2 = f32[100]{{0}} reduce(%q2, %z.1), dimensions={{1}}, to_apply=%add, metadata={{op_name="jit(f)/reduce_sum"}}
}}

ENTRY %e (x: f32[100,40]) -> f32[100] {{
  %x = f32[100,40]{{1,0}} parameter(0)
  %s1 = f32[100,4]{{1,0}} fusion(%x), kind=kInput, calls=%stage1
  ROOT %s2 = f32[100]{{0}} fusion(%s1), kind=kInput, calls=%stage2
}}
"""
REDUCE_ROOT = "ROOT %r1 = f32[100,4]{1,0} reduce(%v, %z), dimensions={2}, to_apply=%add, metadata={op_name=\"jit(f)/reduce_sum\"}"


@pytest.mark.parametrize("between", [
    "%q2 = f32[100,4]{1,0} bitcast(%q)",
    "%q2 = f32[100,4]{1,0} reshape(%q)",
    "%q2 = f32[100,4]{1,0} copy(%q)",
    "%q2 = f32[100,4]{0,1} transpose(%q), dimensions={0,1}",
])
def test_a_reduce_of_partial_results_read_as_is_is_a_second_stage(between: str) -> None:
    analysis = analyze(STAGES.format(stage1_root=REDUCE_ROOT, between=between))
    first, second = analysis.reductions
    assert (first.name, first.origin, first.fused) == ("r1", "user", True)
    assert (second.name, second.origin, second.partial_of) == ("r2", "second-stage", "s1")
    # its data is partial sums, not the program's data: it is no verdict's business
    assert second.input_materialized is None
    assert Report("f", "t", reductions=analysis.reductions).verdict_reductions == [first]


def test_partial_results_that_are_computed_on_are_the_reduced_data() -> None:
    analysis = analyze(STAGES.format(stage1_root=REDUCE_ROOT, between="%q2 = f32[100,4]{1,0} negate(%q)"))
    second = analysis.reductions[1]
    assert (second.origin, second.partial_of, second.input_materialized) == ("user", None, "s1")


def test_a_buffer_a_reduction_did_not_write_last_is_no_partial_result() -> None:
    root = ("%r1 = f32[100,4]{1,0} reduce(%v, %z), dimensions={2}, to_apply=%add\n"
            "  ROOT %n1 = f32[100,4]{1,0} negate(%r1)")
    second = analyze(STAGES.format(stage1_root=root, between="%q2 = f32[100,4]{1,0} bitcast(%q)")).reductions[1]
    assert (second.origin, second.partial_of, second.input_materialized) == ("user", None, "s1")


def test_a_reduce_window_writes_partial_results_too() -> None:
    root = "ROOT %r1 = f32[100,4]{1,0} reduce-window(%c, %z), window={size=1x10 stride=1x10}, to_apply=%add"
    second = analyze(STAGES.format(stage1_root=root, between="%q2 = f32[100,4]{1,0} bitcast(%q)")).reductions[1]
    assert (second.origin, second.partial_of) == ("second-stage", "s1")


def test_a_top_level_reduce_of_a_reduction_is_a_second_stage() -> None:
    analysis = analyze("""
ENTRY %e (x: f32[100,40]) -> f32[100] {
  %x = f32[100,40]{1,0} parameter(0)
  %c = f32[100,40]{1,0} cosine(%x)
  %z = f32[] constant(0)
  %r1 = f32[100,4]{1,0} reduce-window(%c, %z), window={size=1x10 stride=1x10}, to_apply=%add
  ROOT %r2 = f32[100]{0} reduce(%r1, %z), dimensions={1}, to_apply=%add
}
""")
    first, second = analysis.reductions
    assert (first.input_materialized, first.origin) == ("c", "user")
    assert (second.origin, second.partial_of) == ("second-stage", "r1")


# -- who wrote a reduction ----------------------------------------------------------


ORIGIN = """
ENTRY %e (x: f32[100]) -> {out} {{
  %x = f32[100]{{0}} parameter(0)
  %z = f32[] constant(0)
  ROOT %r = {out} {op}(%x, %z), {dims}, to_apply=%add{meta}
}}
"""


def origin(op_name: str | None, *, window: int | None = None) -> str:
    meta = "" if op_name is None else f', metadata={{op_name="{op_name}"}}'
    if window is None:
        text = ORIGIN.format(out="f32[]", op="reduce", dims="dimensions={0}", meta=meta)
    else:
        out = f"f32[{100 - window + 1}]"
        text = ORIGIN.format(out=out, op="reduce-window", dims=f"window={{size={window}}}", meta=meta)
    return only_reduction(analyze(text)).origin


@pytest.mark.parametrize(("op_name", "expected"), [
    # a reduction primitive, or no metadata: the program's own
    (None, "user"), ("jit(f)/reduce_sum", "user"), ("jit(f)/reduce_max", "user"), ("jit(f)/reduce_min", "user"),
    ("jit(f)/reduce_prod", "user"), ("jit(f)/reduce_and", "user"), ("jit(f)/argmax", "user"),
    ("jit(f)/argmin", "user"), ("jit(f)/reduce", "user"), ("jit(f)/jvp(reduce_sum)/reduce_sum", "user"),
    # part of a dot or a convolution (split-K, small dots as multiply and reduce)
    ("jit(f)/dot_general", "dot"), ("jit(f)/conv_general_dilated", "dot"), ("jit(f)/ragged_dot", "dot"),
    ("jit(f)/ragged_dot_general", "dot"),
    # prefix scans
    ("jit(f)/cumsum", "scan"), ("jit(f)/cumprod", "scan"), ("jit(f)/cummax", "scan"), ("jit(f)/cummin", "scan"),
    ("jit(f)/cumlogsumexp", "scan"),
    # anything else: the compiler's
    ("jit(f)/sort", "compiler"), ("jit(f)/top_k", "compiler"), ("jit(f)/mul", "compiler"),
    ("jit(f)/xreduce_sum", "compiler"),
])  # fmt: skip
def test_who_wrote_a_reduction_by_its_jax_operation(op_name: str | None, expected: str) -> None:
    assert origin(op_name) == expected


@pytest.mark.parametrize("window", [2, 10])
def test_a_sliding_window_that_shrinks_its_operand_goes_by_its_op_name(window: int) -> None:
    assert origin("jit(f)/reduce_sum", window=window) == "user"
    assert origin("jit(f)/cumsum", window=window) == "scan"
    assert origin("jit(f)/dot_general", window=window) == "dot"


def test_a_reduce_window_writing_as_much_as_it_reads_is_a_scan() -> None:
    # XLA's prefix sums: a padded window as wide as the data; the result is as large as the operand
    analysis = analyze("""
ENTRY %e (x: f32[100]) -> f32[100] {
  %x = f32[100]{0} parameter(0)
  %s = f32[100]{0} sine(%x)
  %z = f32[] constant(0)
  ROOT %r = f32[100]{0} reduce-window(%s, %z), window={size=100 pad=99_0}, to_apply=%add, metadata={op_name="jit(f)/reduce_sum"}
}
""")
    assert only_reduction(analysis).origin == "scan"


def test_reduction_origin_rules_apply_in_order() -> None:
    mod = parse_module(module("""
ENTRY %e (x: f32[100]) -> (f32[100], f32[99], f32[]) {
  %x = f32[100]{0} parameter(0)
  %z = f32[] constant(0)
  %w = f32[100]{0} reduce-window(%x, %z), window={size=2 pad=1_0}, to_apply=%add, metadata={op_name="jit(f)/dot_general"}
  %w2 = f32[99]{0} reduce-window(%x, %z), window={size=2}, to_apply=%add, metadata={op_name="jit(f)/dot_general"}
  %r = f32[] reduce(%x, %z), dimensions={0}, to_apply=%add, metadata={op_name="jit(f)/cumsum"}
  ROOT %t = (f32[100]{0}, f32[99]{0}, f32[]) tuple(%w, %w2, %r)
}
"""))
    entry = mod.computations["e"]
    w, w2, r = entry["w"], entry["w2"], entry["r"]
    # 1. reading partial results outranks everything
    assert reduction_origin(w, 100, "buf") == "second-stage"
    assert reduction_origin(r, 100, "buf") == "second-stage"
    # 2. a window writing at least as much as it reads is a scan, whatever its op_name
    assert reduction_origin(w, 100, None) == "scan"
    assert reduction_origin(w, 101, None) == "dot"  # one element fewer than its operand: by op_name
    assert reduction_origin(w2, 100, None) == "dot"
    # the window rule is about reduce-windows only: a reduce goes by its op_name
    assert reduction_origin(r, 1, None) == "scan"  # cumsum


@pytest.mark.parametrize(("op_name", "expected"), [
    ("jit(f)/vmap()/dot_general", "dot_general"),
    ("jit(f)/jit(g/h)/reduce_sum", "reduce_sum"),
    ("jit(f)/transpose(jvp(f))/mul", "mul"),
    ("jit(f)/reduce_sum[axes=(0,)]", "reduce_sum"),
    ("jit(f)/a[b/c]", "a"),
    ("reduce_max", "reduce_max"),
    ("jit(f)/", None),
    ("", None),
    (None, None),
])  # fmt: skip
def test_producer_op_is_the_last_path_component(op_name: str | None, expected: str | None) -> None:
    assert producer_op(op_name) == expected


# -- what verdicts are about ------------------------------------------------------------


def test_only_the_programs_reductions_get_a_verdict() -> None:
    reductions = [
        Reduction("a", "f", [], None, 4, origin="user"),
        Reduction("b", "f", [], "buf", 4, origin="dot"),
        Reduction("c", "f", [], "buf", 4, origin="scan"),
    ]
    report = Report("f", "t", reductions=reductions)
    assert [r.name for r in report.verdict_reductions] == ["a"]
    assert report.all_reductions_fused is True
    assert Report("f", "t", reductions=reductions[1:]).all_reductions_fused is None
    assert Report("f", "t", reductions=[*reductions, Reduction("d", "f", [], "buf", 4)]).all_reductions_fused is False


# -- source lines ----------------------------------------------------------------------

FRAMES = """HloModule m

FileNames
1 "/docs/example.py"
2 "/site-packages/jax/numpy.py"
3 "C:\\\\docs\\\\other.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=4 end_line=4 column=1 end_column=9}
2 {file_name_id=2 function_name_id=1 line=900 end_line=900 column=1 end_column=9}
3 {file_name_id=1 function_name_id=1 line=7 end_line=7 column=1 end_column=9}
4 {file_name_id=3 function_name_id=1 line=12 end_line=12 column=1 end_column=9}
5 {file_name_id=1 function_name_id=1 line=0 end_line=0 column=1 end_column=9}
6 {file_name_id=1 function_name_id=1 line=1 end_line=1 column=1 end_column=9}
7 {file_name_id=2 function_name_id=1 line=901 end_line=901 column=1 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}
3 {file_location_id=3 parent_frame_id=1}
4 {file_location_id=4 parent_frame_id=2}
5 {file_location_id=5 parent_frame_id=2}
6 {file_location_id=6 parent_frame_id=1}
7 {file_location_id=7 parent_frame_id=7}

ENTRY %e (x: f32[10]) -> f32[10] {
  %x = f32[10]{0} parameter(0)
  %a = f32[10]{0} sine(%x), metadata={op_name="jit(f)/sin" stack_frame_id=2}
  %b = f32[10]{0} cosine(%a), metadata={op_name="jit(f)/cos" stack_frame_id=3}
  %c = f32[10]{0} tanh(%b), metadata={op_name="jit(f)/tanh" stack_frame_id=4}
  %d = f32[10]{0} negate(%c), metadata={op_name="jit(f)/neg" stack_frame_id=5}
  %g = f32[10]{0} abs(%d), metadata={op_name="jit(f)/abs" source_file="/docs/example.py" source_line=9}
  %one = f32[10]{0} floor(%g), metadata={op_name="jit(f)/floor" stack_frame_id=7}
  ROOT %h = f32[10]{0} exponential(%one), metadata={op_name="jit(f)/exp" source_file="/elsewhere/x.py" source_line=3}
}
"""


def lines_by_fusion(source_file: str | None) -> dict[str, list[int]]:
    return {f.name: f.source_lines for f in analyze_module(FRAMES, source_file=source_file).fusions}


def test_a_line_is_the_innermost_frame_in_the_examples_file() -> None:
    found = lines_by_fusion("example.py")
    # a: jax's frame, then the example's line 4; b: the example's line 7 itself
    assert (found["a"], found["b"]) == ([4], [7])
    # c: innermost in another file: the next frame out, in the example, counts
    assert found["c"] == [4]
    # d: a frame of line 0 says nothing: the next one out does
    assert found["d"] == [4]
    # g: no frames, the metadata's own file and line; h: another file, no line
    assert (found["g"], found["h"]) == ([9], [])
    assert found["one"] == [1]  # inside jax, called from the first line of the example: a line too


def test_the_examples_file_matches_by_full_path_or_base_name() -> None:
    assert lines_by_fusion("/docs/example.py") == lines_by_fusion("example.py")
    assert lines_by_fusion("C:\\other\\example.py")["b"] == [7]
    assert lines_by_fusion("/other/example.py")["b"] == [7]
    # a file of another name gives no line at all
    assert set(map(tuple, lines_by_fusion("examples.py").values())) == {()}


def test_a_windows_path_matches_by_base_name() -> None:
    assert lines_by_fusion("other.py")["c"] == [12]
    assert lines_by_fusion("D:\\x\\other.py")["c"] == [12]


def test_without_a_file_the_innermost_frame_counts() -> None:
    found = lines_by_fusion(None)
    assert (found["a"], found["b"], found["c"], found["d"], found["g"], found["h"], found["one"]) == (
        [900], [7], [12], [4], [9], [3], [901])


def test_a_fusion_gets_the_lines_of_everything_inside_it_sorted() -> None:
    analysis = analyze_module(FRAMES.replace("ENTRY %e", """%body (p: f32[10]) -> f32[10] {
  %p = f32[10]{0} parameter(0)
  %u = f32[10]{0} cosine(%p), metadata={op_name="jit(f)/cos" stack_frame_id=3}
  %v = f32[10]{0} sine(%u), metadata={op_name="jit(f)/sin" stack_frame_id=1}
  ROOT %w = f32[10]{0} cosine(%v), metadata={op_name="jit(f)/cos" stack_frame_id=3}
}

ENTRY %e""").replace("ROOT %h = f32[10]{0} exponential(%one)", "ROOT %h = f32[10]{0} fusion(%one), kind=kLoop, calls=%body"))
    # the fusion's own metadata names another file: only its body's lines
    assert {f.name: f.source_lines for f in analysis.fusions}["h"] == [4, 7]


def test_a_module_that_does_not_hold_together_is_a_parse_error() -> None:
    from sphinx_jaxhlo.hlo.model import HloParseError

    broken = module("""
ENTRY %e (x: f32[10]) -> f32[] {
  %x = f32[10]{0} parameter(0)
  ROOT %r = f32[] reduce(), dimensions={0}, to_apply=%add
}
""")
    assert analyze_module(broken).reductions == []  # no operand: nothing to reduce, no crash
    with pytest.raises(HloParseError):
        analyze_module("HloModule m\n\nENTRY %e () -> f32[] {\n  ROOT %r = f32[] sine(%nowhere\n}\n")


def test_a_parsed_module_is_analyzed_as_its_text() -> None:
    text = module(PROGRAMS)
    assert analyze_module(parse_module(text)) == analyze_module(text)


def test_a_fusion_with_several_results_of_moves_holds_argument_data() -> None:
    analysis = analyze("""
%two (p: f32[100]) -> (f32[100], f32[10,10]) {
  %p = f32[100]{0} parameter(0)
  %r = f32[10,10]{1,0} reshape(%p)
  %t = (f32[100]{0}, f32[10,10]{1,0}) tuple(%p, %r)
  %g = f32[100]{0} get-tuple-element(%t), index=0
  ROOT %out = (f32[100]{0}, f32[10,10]{1,0}) tuple(%g, %r)
}

ENTRY %e (x: f32[100]) -> (f32[100], f32[10,10]) {
  %x = f32[100]{0} parameter(0)
  %m = (f32[100]{0}, f32[10,10]{1,0}) fusion(%x), kind=kLoop, calls=%two
  %g0 = f32[100]{0} get-tuple-element(%m), index=0
  %g1 = f32[10,10]{1,0} get-tuple-element(%m), index=1
  %s0 = f32[100]{0} sine(%g0)
  %s1 = f32[10,10]{1,0} sine(%g1)
  ROOT %o = (f32[100]{0}, f32[10,10]{1,0}) tuple(%s0, %s1)
}
""")
    assert kinds(analysis) == {"g0": "argument-copy", "g1": "argument-copy"}


def test_partial_results_read_through_a_tuple_in_the_kernel_are_read_as_is() -> None:
    between = ("%t = (f32[100,4]{1,0}, f32[100,4]{1,0}) tuple(%q, %q)\n"
               "  %q2 = f32[100,4]{1,0} get-tuple-element(%t), index=1")
    second = analyze(STAGES.format(stage1_root=REDUCE_ROOT, between=between)).reductions[1]
    assert (second.origin, second.partial_of) == ("second-stage", "s1")


def test_a_program_that_runs_a_computation_twice_lists_it_once() -> None:
    text = """
%body (b: f32[8]) -> f32[8] {
  %b = f32[8]{0} parameter(0)
  ROOT %n = f32[8]{0} negate(%b)
}

%later (c: f32[8]) -> f32[8] {
  ROOT %c = f32[8]{0} parameter(0)
}

ENTRY %e (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %k1 = f32[8]{0} call(%x), to_apply=%body
  %k2 = f32[8]{0} call(%k1), to_apply=%body
  ROOT %k3 = f32[8]{0} call(%k2), to_apply=%later
}
"""
    # once each, and the walk goes on past the one seen before
    assert top_level_computations(parse_module(module(text))) == ["e", "body", "later"]


@pytest.mark.parametrize(("calls", "expected"), [
    ("calls=%Xw", ["e", "Xw"]), ("calls=%wX", ["e", "wX"]), ("calls={%Xw, %wX}", ["e", "Xw", "wX"]),
    ("calls={ %Xw , %wX }", ["e", "Xw", "wX"]), ("calls=Xw", ["e", "Xw"]),
])  # fmt: skip
def test_async_start_computation_names_are_read_whole(calls: str, expected: list[str]) -> None:
    text = f"""
%Xw (a: f32[8]) -> f32[8] {{
  ROOT %a = f32[8]{{0}} parameter(0)
}}

%wX (b: f32[8]) -> f32[8] {{
  ROOT %b = f32[8]{{0}} parameter(0)
}}

ENTRY %e (x: f32[8]) -> f32[8] {{
  %x = f32[8]{{0}} parameter(0)
  %st = ((f32[8]{{0}}), f32[8]{{0}}, u32[]) async-start(%x), {calls}
  ROOT %dn = f32[8]{{0}} async-done(%st)
}}
"""
    assert top_level_computations(parse_module(module(text))) == expected


@pytest.mark.parametrize(("op_name", "expected"), [
    ("jit(f)/X/dot_general", "dot_general"),  # no bracket in sight: every slash splits
    ("jit(XfX)/reduce_sum", "reduce_sum"),
    ("jit(f)/a[b", "a[b"),  # a bracket that is not closed is kept
    ("jit(f)/x]", "x]"),
])  # fmt: skip
def test_producer_op_edge_cases(op_name: str, expected: str) -> None:
    assert producer_op(op_name) == expected


def test_an_analysis_that_fails_is_reported_as_an_inconsistent_module(monkeypatch: pytest.MonkeyPatch) -> None:
    from sphinx_jaxhlo.hlo import fusion as analysis_mod
    from sphinx_jaxhlo.hlo.model import HloParseError

    def broken(self: object) -> Analysis:
        raise KeyError("fusion.7")

    monkeypatch.setattr(analysis_mod._Analyzer, "run", broken)
    with pytest.raises(HloParseError) as info:
        analyze(PROGRAMS)
    assert str(info.value) == "inconsistent module: KeyError: 'fusion.7'"


def test_a_long_chain_of_copies_of_an_argument_holds_argument_data() -> None:
    chain = "\n".join(f"  %c{i} = f32[100]{{0}} copy(%c{i - 1})" for i in range(1, 301))
    analysis = analyze(f"""
ENTRY %e (x: f32[100]) -> f32[100] {{
  %c0 = f32[100]{{0}} parameter(0)
{chain}
  ROOT %o = f32[100]{{0}} sine(%c300)
}}
""")
    assert analysis.materialized == []
    assert len(analysis.argument_copies) == 300


def test_the_last_branch_parameter_holds_what_it_was_given() -> None:
    swapped = BRANCHES.replace("conditional(%i, %x, %n)", "conditional(%i, %n, %x)")
    found = kinds(analyze(swapped))
    assert (found["c0"], found["c1"]) == ("intermediate", "argument-copy")


def test_a_loop_whose_body_has_any_name() -> None:
    # computation names are read whole, whatever letters they start with
    analysis = analyze(LOOP.format(passed="", xs_out="xs", feed="", fed="x").replace("%body", "%Xbody"))
    assert {m.name: m.kind for m in analysis.argument_copies if m.computation == "Xbody"} == {"cx": "argument-copy"}


def test_loop_state_passed_on_from_another_tuple_is_not_unchanged() -> None:
    # element 1 comes back read from a tuple the body built, not from the loop's own state
    analysis = loop(passed="%xn = f32[100]{0} negate(%xs)\n  %tt = (s32[], f32[100]{0}) tuple(%i1, %xn)\n"
                           "  %xo = f32[100]{0} get-tuple-element(%tt), index=1", xs_out="xo")
    assert body_kinds(analysis)["cx"] == "intermediate"


def test_an_async_computations_parameters_are_not_followed() -> None:
    # the rule follows arguments into loops, branches and called computations only
    analysis = analyze("""
%wrapped (ap: f32[100]) -> f32[100] {
  %ap = f32[100]{0} parameter(0)
  %ac = f32[100]{0} copy(%ap)
  ROOT %as = f32[100]{0} sine(%ac)
}

ENTRY %e (x: f32[100]) -> f32[100] {
  %x = f32[100]{0} parameter(0)
  %st = ((f32[100]{0}), f32[100]{0}, u32[]) async-start(%x), calls=%wrapped
  ROOT %dn = f32[100]{0} async-done(%st)
}
""")
    assert {(m.name, m.computation): m.kind for m in analysis.materialized} == {("ac", "wrapped"): "intermediate"}


def test_argument_copies_are_sorted_largest_first() -> None:
    analysis = analyze(MOVES.format(line="%w = f32[50]{0} slice(%x), slice={[0:50]}\n  %u = f32[50]{0} negate(%w)\n"
                                         "  %a = f32[100]{0} copy(%x)\n  %v = f32[100]{0} add(%a, %a)"))
    assert [(m.name, m.bytes) for m in analysis.argument_copies] == [("a", 400), ("w", 200)]


def test_a_value_read_twice_by_one_instruction_keeps_all_its_readers() -> None:
    analysis = analyze("""
ENTRY %e (x: f32[10]) -> f32[10] {
  %x = f32[10]{0} parameter(0)
  %a = f32[10]{0} sine(%x)
  %t = (f32[10]{0}, f32[10]{0}) tuple(%a, %a)
  %g0 = f32[10]{0} get-tuple-element(%t), index=0
  %g1 = f32[10]{0} get-tuple-element(%t), index=1
  %r0 = f32[10]{0} negate(%g0)
  %r1 = f32[10]{0} cosine(%g1)
  %r2 = f32[10]{0} tanh(%a)
  ROOT %o = f32[10]{0} add(%r0, %r1)
}
""")
    assert {m.name: m.consumers for m in analysis.materialized}["a"] == ["r0", "r1", "r2"]


NESTED_TUPLES = """
%two (p: f32[10]) -> (f32[10], f32[20]) {
  %p = f32[10]{0} parameter(0)
  %n = f32[10]{0} negate(%p)
  %c = f32[20]{0} concatenate(%n, %n), dimensions={0}
  ROOT %t = (f32[10]{0}, f32[20]{0}) tuple(%n, %c)
}

ENTRY %e (x: f32[10]) -> f32[20] {
  %x = f32[10]{0} parameter(0)
  %m = (f32[10]{0}, f32[20]{0}) fusion(%x), kind=kLoop, calls=%two
  %tt = ((f32[10]{0}, f32[20]{0})) tuple(%m)
  %g = (f32[10]{0}, f32[20]{0}) get-tuple-element(%tt), index=0
  %h = f32[20]{0} get-tuple-element(%g), index=1
  ROOT %r = f32[20]{0} negate(%h)
}
"""


def test_an_element_of_a_nested_tuple_is_followed_to_its_own_readers() -> None:
    analysis = analyze(NESTED_TUPLES)
    # element 1 of m, read through a tuple and two get-tuple-elements; no
    # get-tuple-element reads m itself, so the buffer is named by its position
    assert [(m.name, m.shape, m.consumers) for m in analysis.materialized] == [("m[1]", "f32[20]", ["r"])]


def test_element_0_of_a_nested_tuple_is_not_element_1() -> None:
    analysis = analyze(NESTED_TUPLES.replace("%h = f32[20]{0} get-tuple-element(%g), index=1",
                                             "%h = f32[20]{0} get-tuple-element(%g), index=1\n"
                                             "  %h0 = f32[10]{0} get-tuple-element(%g), index=0\n"
                                             "  %r0 = f32[10]{0} sine(%h0)")
                       .replace("ROOT %r = f32[20]{0} negate(%h)",
                                "%r = f32[20]{0} negate(%h)\n  ROOT %o = (f32[20]{0}, f32[10]{0}) tuple(%r, %r0)"))
    assert {m.name: m.consumers for m in analysis.materialized} == {"m[0]": ["r0"], "m[1]": ["r"]}


def test_an_unread_element_of_a_tuple_is_no_buffer_the_others_are() -> None:
    analysis = analyze("""
%two (p: f32[10]) -> (f32[10], f32[20]) {
  %p = f32[10]{0} parameter(0)
  %n = f32[10]{0} negate(%p)
  %c = f32[20]{0} concatenate(%n, %n), dimensions={0}
  ROOT %t = (f32[10]{0}, f32[20]{0}) tuple(%n, %c)
}

ENTRY %e (x: f32[10]) -> f32[20] {
  %x = f32[10]{0} parameter(0)
  %m = (f32[10]{0}, f32[20]{0}) fusion(%x), kind=kLoop, calls=%two
  %g1 = f32[20]{0} get-tuple-element(%m), index=1
  ROOT %s1 = f32[20]{0} sine(%g1)
}
""")
    # element 0 is read by nothing; element 1 by the result's producer
    assert [(m.name, m.consumers) for m in analysis.materialized] == [("g1", ["s1"])]


MULTI_NAMES = """
%mo (p: f32[100]) -> (f32[100], f32[]) {
  %p = f32[100]{0} parameter(0)
  %e = f32[100]{0} exponential(%p), metadata={op_name="jit(f)/exp" stack_frame_id=1}
  %z = f32[] constant(0)
  %r = f32[] reduce(%e, %z), dimensions={0}, to_apply=%add, metadata={op_name="jit(f)/reduce_sum" stack_frame_id=3}
  ROOT %t = (f32[100]{0}, f32[]) tuple(%e, %r)
}

%one (q: f32[100]) -> f32[100] {
  %q = f32[100]{0} parameter(0)
  ROOT %c = f32[100]{0} cosine(%q), metadata={op_name="jit(f)/cos" stack_frame_id=3}
}

ENTRY %e (x: f32[100]) -> (f32[100], f32[], f32[100]) {
  %x = f32[100]{0} parameter(0)
  %m = (f32[100]{0}, f32[]) fusion(%x), kind=kInput, calls=%mo, metadata={op_name="jit(f)/softmax" stack_frame_id=1}
  %g0 = f32[100]{0} get-tuple-element(%m), index=0
  %g1 = f32[] get-tuple-element(%m), index=1
  %f = f32[100]{0} fusion(%g0), kind=kLoop, calls=%one, metadata={op_name="jit(f)/whole" stack_frame_id=1}
  %a = f32[100]{0} negate(%g0)
  %b = f32[] negate(%g1)
  %c2 = f32[100]{0} negate(%f)
  ROOT %o = (f32[100]{0}, f32[], f32[100]{0}) tuple(%a, %b, %c2)
}
"""


def test_a_buffer_is_named_by_the_op_that_computes_it() -> None:
    analysis = analyze_module(FRAMES.split("\nENTRY")[0] + "\n" + ADD + MULTI_NAMES)
    found = {m.name: m for m in analysis.materialized}
    # an element of a multi-output fusion: the op inside that computes it, and its lines too
    assert (found["g0"].producer_op, found["g0"].source_lines) == ("exp", [4])
    assert (found["g1"].producer_op, found["g1"].source_lines) == ("reduce_sum", [4, 7])
    # a whole fusion: its own op_name first
    assert (found["f"].producer_op, found["f"].source_lines) == ("whole", [4, 7])


STAGE_SHAPES = """
%stage1 (p: f32[100,40]) -> (f32[100,40], f32[100,4]) {{
  %p = f32[100,40]{{1,0}} parameter(0)
  %c = f32[100,40]{{1,0}} cosine(%p)
  %v = f32[100,4,10]{{2,1,0}} bitcast(%c)
  %z = f32[] constant(0)
  %r1 = f32[100,4]{{1,0}} reduce(%v, %z), dimensions={{2}}, to_apply=%add
  {root}
}}

%stage2 (q: f32[100,4]) -> f32[100] {{
  %q = f32[100,4]{{1,0}} parameter(0)
  %z.1 = f32[] constant(0)
  ROOT %r2 = f32[100]{{0}} reduce(%q, %z.1), dimensions={{1}}, to_apply=%add
}}

{extra}

ENTRY %e (x: f32[100,40]) -> f32[100] {{
  %x = f32[100,40]{{1,0}} parameter(0)
  %s1 = {s1_shape} fusion(%x), kind=kInput, calls=%stage1
  {read}
  ROOT %s2 = f32[100]{{0}} fusion(%g), kind=kInput, calls=%stage2
}}
"""


@pytest.mark.parametrize(("root", "s1_shape", "read", "extra", "partial"), [
    # the element of a multi-output fusion that a reduce wrote
    ("ROOT %t = (f32[100,40]{1,0}, f32[100,4]{1,0}) tuple(%c, %r1)", "(f32[100,40]{1,0}, f32[100,4]{1,0})",
     "%g = f32[100,4]{1,0} get-tuple-element(%s1), index=1", "", True),
    # ... not the element an elementwise op wrote (sliced down to the same shape)
    ("%c4 = f32[100,4]{1,0} slice(%c), slice={[0:100], [0:4]}\n  ROOT %t = (f32[100,4]{1,0}, f32[100,4]{1,0}) "
     "tuple(%c4, %r1)", "(f32[100,4]{1,0}, f32[100,4]{1,0})",
     "%g = f32[100,4]{1,0} get-tuple-element(%s1), index=0", "", False),
    # a reduce's result seen through a bitcast at the root
    ("ROOT %b = f32[100,4]{1,0} bitcast(%r1)", "f32[100,4]{1,0}", "%g = f32[100,4]{1,0} bitcast(%s1)", "", True),
    # a reduce in a nested fusion at the root
    ("ROOT %nf = f32[100,4]{1,0} fusion(%c), kind=kInput, calls=%inner", "f32[100,4]{1,0}",
     "%g = f32[100,4]{1,0} bitcast(%s1)",
     "%inner (ip: f32[100,40]) -> f32[100,4] {\n  %ip = f32[100,40]{1,0} parameter(0)\n"
     "  %iv = f32[100,4,10]{2,1,0} bitcast(%ip)\n  %iz = f32[] constant(0)\n"
     "  ROOT %ir = f32[100,4]{1,0} reduce(%iv, %iz), dimensions={2}, to_apply=%add\n}", True),
])  # fmt: skip
def test_partial_results_are_found_through_the_fusion_that_wrote_them(root: str, s1_shape: str, read: str,
                                                                       extra: str, partial: bool) -> None:
    analysis = analyze(STAGE_SHAPES.format(root=root, s1_shape=s1_shape, read=read, extra=extra))
    second = next(r for r in analysis.reductions if r.name == "r2")
    if partial:
        assert (second.origin, second.input_materialized) == ("second-stage", None)
    else:
        assert (second.origin, second.partial_of, second.input_materialized) == ("user", None, "g")


@pytest.mark.parametrize("read", [
    "%g = f32[100]{0} bitcast(%buf)",
    "%t = (f32[7]{0}, f32[100]{0}) tuple(%small, %buf)\n  %g = f32[100]{0} get-tuple-element(%t), index=1",
])
def test_the_buffer_a_reduce_reads_is_named_through_views(read: str) -> None:
    analysis = analyze(f"""
%sum (p: f32[100]) -> f32[] {{
  %p = f32[100]{{0}} parameter(0)
  %n = f32[100]{{0}} negate(%p)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%n, %z), dimensions={{0}}, to_apply=%add
}}

ENTRY %e (x: f32[100]) -> f32[] {{
  %x = f32[100]{{0}} parameter(0)
  %buf = f32[100]{{0}} sine(%x)
  %small = f32[7]{{0}} slice(%x), slice={{[0:7]}}
  {read}
  ROOT %f = f32[] fusion(%g), kind=kInput, calls=%sum
}}
""")
    assert only_reduction(analysis).input_materialized == "buf"


TWO_INPUTS = """
%sum (p: f32[{n0}], q: f32[{n1}]) -> f32[] {{
  %p = f32[{n0}]{{0}} parameter(0)
  %q = f32[{n1}]{{0}} parameter(1)
  %z = f32[] constant(0)
  %pp = f32[100]{{0}} pad(%p, %z), padding=0_{pad0}
  %qq = f32[100]{{0}} pad(%q, %z), padding=0_{pad1}
  %m = f32[100]{{0}} multiply(%pp, %qq)
  ROOT %r = f32[] reduce(%m, %z), dimensions={{0}}, to_apply=%add
}}

ENTRY %e (x: f32[100], y: f32[100]) -> f32[] {{
  %x = f32[100]{{0}} parameter(0)
  %y = f32[100]{{0}} parameter(1)
  %xs = f32[50]{{0}} slice(%x), slice={{[0:50]}}
  %ys = f32[50]{{0}} slice(%y), slice={{[0:50]}}
  %a = f32[{n0}]{{0}} {make0}
  %b = f32[{n1}]{{0}} {make1}
  ROOT %f = f32[] fusion(%a, %b), kind=kInput, calls=%sum
}}
"""


@pytest.mark.parametrize(("make0", "n0", "make1", "n1", "expected"), [
    # an argument copy and a computed buffer: the computed one, whichever comes first
    ("copy(%x)", 100, "sine(%y)", 100, "b"),
    ("sine(%x)", 100, "copy(%y)", 100, "a"),
    # a computed buffer too small and one large enough: the large one, whichever comes first
    ("negate(%xs)", 50, "sine(%y)", 100, "b"),
    ("sine(%x)", 100, "negate(%ys)", 50, "a"),
])  # fmt: skip
def test_every_buffer_that_flows_in_is_weighed(make0: str, n0: int, make1: str, n1: int, expected: str) -> None:
    text = TWO_INPUTS.format(n0=n0, n1=n1, pad0=100 - n0, pad1=100 - n1, make0=make0, make1=make1)
    assert only_reduction(analyze(text)).input_materialized == expected


def test_an_element_counts_its_own_elements_not_its_tuples() -> None:
    # element 0 of (f32[40], f32[100]) has 40 elements: under half of the 100 reduced
    analysis = analyze("""
%two (p: f32[100]) -> (f32[40], f32[100]) {
  %p = f32[100]{0} parameter(0)
  %n = f32[100]{0} negate(%p)
  %s = f32[40]{0} slice(%n), slice={[0:40]}
  ROOT %t = (f32[40]{0}, f32[100]{0}) tuple(%s, %n)
}

%sum (q: f32[40]) -> f32[] {
  %q = f32[40]{0} parameter(0)
  %z = f32[] constant(0)
  %qq = f32[100]{0} pad(%q, %z), padding=0_60
  ROOT %r = f32[] reduce(%qq, %z), dimensions={0}, to_apply=%add
}

ENTRY %e (x: f32[100]) -> (f32[], f32[100]) {
  %x = f32[100]{0} parameter(0)
  %m = (f32[40]{0}, f32[100]{0}) fusion(%x), kind=kLoop, calls=%two
  %g0 = f32[40]{0} get-tuple-element(%m), index=0
  %g1 = f32[100]{0} get-tuple-element(%m), index=1
  %f = f32[] fusion(%g0), kind=kInput, calls=%sum
  ROOT %o = (f32[], f32[100]{0}) tuple(%f, %g1)
}
""")
    assert only_reduction(analysis).fused


@pytest.mark.parametrize("operands", ["%qb, %big", "%big, %qb"])
def test_partial_results_beside_the_programs_data_are_the_programs_reduction(operands: str) -> None:
    # a variadic reduce of the partial sums and of a buffer as large: that buffer went to memory
    analysis = analyze(f"""
%stage1 (p: f32[100,40]) -> f32[100,4] {{
  %p = f32[100,40]{{1,0}} parameter(0)
  %c = f32[100,40]{{1,0}} cosine(%p)
  %v = f32[100,4,10]{{2,1,0}} bitcast(%c)
  %z = f32[] constant(0)
  ROOT %r1 = f32[100,4]{{1,0}} reduce(%v, %z), dimensions={{2}}, to_apply=%add
}}

%pair (a0: f32[], a1: f32[], b0: f32[], b1: f32[]) -> (f32[], f32[]) {{
  %a0 = f32[] parameter(0)
  %a1 = f32[] parameter(1)
  %b0 = f32[] parameter(2)
  %b1 = f32[] parameter(3)
  ROOT %t = (f32[], f32[]) tuple(%a0, %a1)
}}

%stage2 (q: f32[100,4], w: f32[100,4]) -> (f32[100], f32[100]) {{
  %q = f32[100,4]{{1,0}} parameter(0)
  %w = f32[100,4]{{1,0}} parameter(1)
  %qb = f32[100,4]{{1,0}} bitcast(%q)
  %big = f32[100,4]{{1,0}} negate(%w)
  %z.1 = f32[] constant(0)
  ROOT %r2 = (f32[100]{{0}}, f32[100]{{0}}) reduce({operands}, %z.1, %z.1), dimensions={{1}}, to_apply=%pair
}}

ENTRY %e (x: f32[100,40], y: f32[100,4]) -> (f32[100], f32[100]) {{
  %x = f32[100,40]{{1,0}} parameter(0)
  %y = f32[100,4]{{1,0}} parameter(1)
  %s1 = f32[100,4]{{1,0}} fusion(%x), kind=kInput, calls=%stage1
  %w2 = f32[100,4]{{1,0}} sine(%y)
  ROOT %s2 = (f32[100]{{0}}, f32[100]{{0}}) fusion(%s1, %w2), kind=kInput, calls=%stage2
}}
""")
    second = next(r for r in analysis.reductions if r.name == "r2")
    assert (second.origin, second.partial_of) == ("user", None)
    assert second.input_materialized in ("s1", "w2")


@pytest.mark.parametrize("order", ["%x, %s", "%s, %x"])
def test_a_variadic_reduce_weighs_each_of_its_data_operands(order: str) -> None:
    analysis = analyze(f"""
%pair (a0: f32[], a1: f32[], b0: f32[], b1: f32[]) -> (f32[], f32[]) {{
  %a0 = f32[] parameter(0)
  %a1 = f32[] parameter(1)
  %b0 = f32[] parameter(2)
  %b1 = f32[] parameter(3)
  ROOT %t = (f32[], f32[]) tuple(%a0, %a1)
}}

ENTRY %e (x: f32[100]) -> (f32[], f32[]) {{
  %x = f32[100]{{0}} parameter(0)
  %s = f32[100]{{0}} sine(%x)
  %z = f32[] constant(0)
  ROOT %r = (f32[], f32[]) reduce({order}, %z, %z), dimensions={{0}}, to_apply=%pair
}}
""")
    assert only_reduction(analysis).input_materialized == "s"


def test_data_reaching_a_reduce_twice_does_not_hide_the_rest() -> None:
    # %p reaches the reduce along two paths (add(%p, %p)); the other input, %q,
    # is still weighed, and it is the larger buffer
    analysis = analyze("""
%sum (p: f32[100], q: f32[100]) -> f32[] {
  %p = f32[100]{0} parameter(0)
  %q = f32[100]{0} parameter(1)
  %d = f32[100]{0} add(%p, %p)
  %m = f32[100]{0} multiply(%q, %d)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%m, %z), dimensions={0}, to_apply=%add
}

ENTRY %e (x: f32[100]) -> f32[] {
  %x = f32[100]{0} parameter(0)
  %b = f32[100]{0} sine(%x)
  ROOT %f = f32[] fusion(%x, %b), kind=kInput, calls=%sum
}
""")
    assert only_reduction(analysis).input_materialized == "b"


NESTED = """
%inner2 (i2: f32[100]) -> f32[100] {{
  %i2 = f32[100]{{0}} parameter(0)
  ROOT %t2 = f32[100]{{0}} tanh(%i2)
}}

%inner1 (i1: f32[100]) -> f32[] {{
  %i1 = f32[100]{{0}} parameter(0)
  %n2 = f32[100]{{0}} fusion(%i1), kind=kLoop, calls=%inner2
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%n2, %z), dimensions={{0}}, to_apply=%add
}}

%outer (o: f32[100], w: f32[100]) -> f32[] {{
  %o = f32[100]{{0}} parameter(0)
  %w = f32[100]{{0}} parameter(1)
  %s = f32[100]{{0}} sine(%o)
  ROOT %n1 = f32[] fusion(%s), kind=kInput, calls=%inner1
}}

ENTRY %e (x: f32[100]) -> f32[] {{
  %x = f32[100]{{0}} parameter(0)
  %b = f32[100]{{0}} {make}
  ROOT %f = f32[] fusion(%b, %x), kind=kOutput, calls=%outer
}}
"""


@pytest.mark.parametrize(("make", "fused"), [("negate(%x)", False), ("copy(%x)", True)])
def test_the_reduced_data_is_traced_through_every_level_of_nested_fusions(make: str, fused: bool) -> None:
    # the reduce sits two fusions deep and reads the output of a third, nested beside it
    reduction = only_reduction(analyze(NESTED.format(make=make)))
    assert (reduction.fusion, reduction.fused) == ("f", fused)
    assert reduction.input_materialized == (None if fused else "b")
    assert reduction.fused_with == ["sine", "tanh"]


@pytest.mark.parametrize("op", ["reduce(%p, %z), dimensions={0}, to_apply=%add", "map(%p), to_apply=%add",
                                "sort(%p), dimensions={0}, to_apply=%add"])
def test_an_op_with_a_computation_of_its_own_inside_a_kernel_makes_new_data(op: str) -> None:
    # its computation (a reducer, a comparator) is not a nested fusion: nothing flows through it
    analysis = analyze(f"""
%sum (p: f32[100]) -> f32[] {{
  %p = f32[100]{{0}} parameter(0)
  %z = f32[] constant(0)
  %n = f32[100]{{0}} {op}
  ROOT %r = f32[] reduce(%n, %z), dimensions={{0}}, to_apply=%add
}}

ENTRY %e (x: f32[100]) -> f32[] {{
  %x = f32[100]{{0}} parameter(0)
  %big = f32[100]{{0}} sine(%x)
  ROOT %f = f32[] fusion(%big), kind=kInput, calls=%sum
}}
""")
    assert {r.name: r.input_materialized for r in analysis.reductions}["r"] is None


def test_a_copy_of_the_whole_loop_state_is_analyzed() -> None:
    analysis = loop(passed="%all = (s32[], f32[100]{0}, f32[100]{0}) copy(%s)\n"
                           "  %fromall = f32[100]{0} get-tuple-element(%all), index=1\n"
                           "  %cz = f32[100]{0} negate(%fromall)")
    # a move of a whole tuple follows each element: element 1 is the passed-through
    # argument, so its copy holds argument data
    assert ("fromall", "body") in {(m.name, m.computation) for m in analysis.argument_copies}
    assert ("fromall", "body") not in {(m.name, m.computation) for m in analysis.materialized}


def test_a_bitcast_of_the_whole_loop_state_is_followed_like_a_copy() -> None:
    # a bitcast is a view, not a buffer: the copy of its element 1 is the buffer
    text = LOOP.format(passed="%all = (s32[], f32[100]{0}, f32[100]{0}) bitcast(%s)\n"
                              "  %fromall = f32[100]{0} get-tuple-element(%all), index=1\n"
                              "  %cz = f32[100]{0} copy(%fromall)", xs_out="xs", feed="", fed="x")
    analysis = analyze(text.replace("add(%cx, %ca)", "add(%cz, %ca)"))
    assert body_kinds(analysis)["cz"] == "argument-copy"


def test_a_copy_of_the_whole_loop_state_holds_computed_elements_too() -> None:
    # element 2 is the accumulator the body updates: its copy is an intermediate
    analysis = loop(passed="%all = (s32[], f32[100]{0}, f32[100]{0}) copy(%s)\n"
                           "  %fromall = f32[100]{0} get-tuple-element(%all), index=2\n"
                           "  %cz = f32[100]{0} negate(%fromall)")
    assert ("fromall", "body") in {(m.name, m.computation) for m in analysis.materialized}
    assert ("fromall", "body") not in {(m.name, m.computation) for m in analysis.argument_copies}


def test_a_kernel_that_reads_the_whole_loop_state_made_new_data() -> None:
    # the state as a whole holds the counter and the accumulator, which the body
    # changes: a kernel reading all of it is not a move of argument data
    text = LOOP.format(passed="%picked = f32[100]{0} fusion(%s), kind=kLoop, calls=%pick", xs_out="xs",
                       feed="", fed="x")
    text = """%pick (q: (s32[], f32[100], f32[100])) -> f32[100] {
  %q = (s32[], f32[100]{0}, f32[100]{0}) parameter(0)
  ROOT %g = f32[100]{0} get-tuple-element(%q), index=1
}
""" + text.replace("%new = f32[100]{0} add(%cx, %ca)", "%new = f32[100]{0} add(%picked, %ca)")
    assert body_kinds(analyze(text))["picked"] == "intermediate"


# -- why a stored buffer was not fused (sphinx_jaxhlo.hlo.reasons) ---------------------------

from sphinx_jaxhlo.core.report import Fusion, Materialized, Reason  # noqa: E402
from sphinx_jaxhlo.hlo.reasons import Written, attach_reasons, backend_of, producer_kind, reason_for  # noqa: E402


def kernel(name: str, ops: list[str], kind: str = "Loop", custom: str | None = None) -> Fusion:
    return Fusion(name=name, kind=kind, custom_kind=custom, ops=ops, shape="f32[100]", bytes=400, computation="e")


@pytest.mark.parametrize(("fusion", "readers", "op", "backend", "expected"), [
    (kernel("w", ["parameter", "add"], kind="while"), 1, None, None, "loop-output"),
    (kernel("c", ["conditional"], kind="conditional"), 1, None, None, "branch-output"),
    (kernel("k", ["call"], kind="call"), 1, None, None, "branch-output"),
    (kernel("a", ["all-reduce-start"], kind="all-reduce-start"), 1, None, None, "collective"),
    (kernel("g", ["dot"], kind="Custom", custom="__triton_nested_gemm_fusion"), 1, None, None, "gemm"),
    (kernel("g", ["custom-call"], kind="custom-call", custom="__cublas$gemm"), 1, None, None, "gemm"),
    (kernel("g", ["custom-call"], kind="custom-call", custom="__onednn$matmul"), 1, None, None, "gemm"),
    # a TPU's dot is a convolution; the metadata tells a real convolution apart
    (kernel("t", ["convolution", "reduce"], kind="Output"), 2, "div", "tpu", "gemm"),
    (kernel("t", ["convolution"], kind="Output"), 1, "conv_general_dilated", "tpu", "convolution"),
    (kernel("t", ["multiply"]), 1, "dot_general", "cpu", "gemm"),
    # a product written as a multiply and a reduce (a matrix-vector product below the GEMM threshold)
    (kernel("t", ["broadcast", "multiply", "reduce"], kind="Input"), 1, "dot_general", "tpu", "product-reduction"),
    (kernel("t", ["multiply", "reduce"], kind="Input"), 1, "dot_general", "gpu", "product-reduction"),
    (kernel("t", ["dot", "reduce"]), 1, "dot_general", "gpu", "gemm"),
    # in the CPU's YNN kernel too: a strength-reduced dot is a multiply and a reduce, not a GEMM
    (kernel("t", ["multiply", "reduce"], kind="Custom", custom="__ynn_fusion"), 1, "dot_general", "cpu",
     "product-reduction"),
    (kernel("t", ["dot"], kind="Custom", custom="__ynn_fusion"), 1, "dot_general", "cpu", "gemm"),
    (kernel("t", ["convolution", "add"], kind="Output"), 1, "jit(fft)", "tpu", "fft"),
    (kernel("t", ["fft"], kind="fft"), 1, "fft", "gpu", "fft"),
    (kernel("v", ["convolution"], kind="convolution"), 1, None, "gpu", "convolution"),
    (kernel("v", ["custom-call"], kind="custom-call", custom="__cudnn$convForward"), 1, None, "gpu", "convolution"),
    (kernel("s", ["sort"], kind="sort"), 1, None, None, "sort"),
    (kernel("s", ["scatter", "gather"]), 1, None, None, "scatter"),
    (kernel("s", ["gather", "add"]), 1, None, None, "gather"),
    (kernel("s", ["fft"], kind="fft"), 1, None, None, "fft"),
    (kernel("s", ["custom-call"], kind="custom-call", custom="lapack_sgetrf"), 1, None, None, "custom-call"),
    (kernel("y", ["exponential", "add"], kind="Custom", custom="__ynn_fusion"), 1, None, None, "ynn"),
    (kernel("r", ["reduce-window", "slice"]), 1, None, None, "reduction"),
    # a kernel that reduces one thing and computes another elementwise is not "a reduction"
    (kernel("r", ["reduce", "broadcast", "subtract", "exponential"]), 1, None, None, "elementwise"),
    (kernel("m", ["exponential"]), 2, None, None, "multi-reader-fusion"),
    (kernel("m", ["exponential"]), 1, None, None, "elementwise"),
])  # fmt: skip
def test_what_made_the_stored_buffer(fusion: Fusion, readers: int, op: str | None, backend: str | None,
                                     expected: str) -> None:
    assert producer_kind(fusion, readers, op, backend) == expected


def test_the_backend_is_the_targets_else_the_kernels() -> None:
    assert backend_of("gpu:h100", []) == "gpu"
    assert backend_of("tpu:v5e-8", []) == "tpu"
    assert backend_of("cpu", [kernel("g", ["dot"], custom="__triton_gemm")]) == "cpu"
    assert backend_of(None, [kernel("a", ["add"]), kernel("y", ["dot"], custom="__ynn_fusion")]) == "cpu"
    assert backend_of(None, [kernel("g", ["dot"], custom="__triton_gemm")]) == "gpu"
    assert backend_of(None, [kernel("g", ["custom-call"], custom="__cublas$gemm")]) == "gpu"
    assert backend_of(None, [kernel("a", ["add"])]) is None


GEMM = kernel("g", ["dot"], kind="Custom", custom="__triton_gemm")
YNN_REDUCE = kernel("r", ["reduce"], kind="Custom", custom="__ynn_fusion")


PRIORITY_FUSION = "xla/backends/gpu/transforms/priority_fusion.cc"
LIBRARY_REWRITER = "xla/backends/cpu/transforms/library_rewriter.cc"
CPU_LOOP_FUSION = "xla/service/cpu/cpu_instruction_fusion.cc"


@pytest.mark.parametrize(("kind", "producer", "consumer", "readers", "backend", "words", "rule", "source"), [
    ("gemm", GEMM, None, 1, "gpu", "priority fusion does not take it in", "IsFusible (file-local in priority_fusion.cc)",
     PRIORITY_FUSION),
    ("gemm", GEMM, None, 1, "cpu", "does not fuse a dot", "CpuInstructionFusion::ShouldFuse", CPU_LOOP_FUSION),
    ("gemm", GEMM, None, 1, "tpu", "written to memory in full", "", ""),
    ("product-reduction", kernel("t", ["multiply", "reduce"], kind="Input"), None, 1, "tpu",
     "a multiply and a reduction over its contracted axis, not as a GEMM", "", ""),
    ("product-reduction", kernel("t", ["multiply", "reduce"], kind="Input"), None, 1, "gpu",
     "does not fuse a reduction into", "PriorityFusionQueue::CanFuseWithNativeEmitter", PRIORITY_FUSION),
    # the CPU's YNN reduction: the library rewriter decided, by its one-user rule, its op table, its types
    ("gemm", GEMM, YNN_REDUCE, 2, "cpu", "this one has 2 readers", "LibraryRewriter::AddFusionCandidates",
     LIBRARY_REWRITER),
    ("elementwise", kernel("c", ["multiply", "cosine"]), YNN_REDUCE, 1, "cpu", "does not take cosine",
     "IsElementwiseOpSupportedByYnn", "xla/backends/cpu/ynn_support.cc"),
    ("elementwise", kernel("c", ["compare", "select"]), YNN_REDUCE, 1, "cpu", "does not take compare or select",
     "IsElementwiseOpSupportedByYnn", "xla/backends/cpu/ynn_support.cc"),
    ("multi-reader-fusion", kernel("c", ["multiply", "cosine"]), YNN_REDUCE, 3, "cpu", "this one has 3 readers",
     "LibraryRewriter::AddFusionCandidates", LIBRARY_REWRITER),
    ("scatter", kernel("s", ["scatter"]), YNN_REDUCE, 1, "cpu", "a scatter is not one of them",
     "YnnMatcher::IsOpSupported", "xla/backends/cpu/transforms/ynn_matcher.h"),
    ("convolution", kernel("v", ["convolution"]), YNN_REDUCE, 1, "cpu", "more than 16 input or output features",
     "IsConvolutionOpSupportedByYnn", "xla/backends/cpu/ynn_support.cc"),
    ("elementwise", kernel("c", ["exponential"]), YNN_REDUCE, 1, "cpu", "the HLO alone does not say which",
     "CpuInstructionFusion::ShouldFuse", CPU_LOOP_FUSION),
    ("elementwise", kernel("c", ["exponential"]), kernel("r", ["reduce"]), 1, "gpu", "does not say why", "", ""),
    ("multi-reader-fusion", kernel("m", ["exponential"]), None, 3, "gpu", "read by 3 kernels",
     "PriorityFusionQueue::CanFuseWithAllNonBitcastUsers", PRIORITY_FUSION),
    ("multi-reader-fusion", kernel("m", ["exponential"]), None, 3, "cpu", "compute it 3 times",
     "CpuInstructionFusion::ShouldFuse", CPU_LOOP_FUSION),
    ("multi-output", kernel("m", ["multiply", "sine", "reduce"], kind="Input"), None, 2, "gpu", "as a second output",
     "MultiOutputFusion", "xla/backends/gpu/transforms/multi_output_fusion.cc"),
    ("reduction", kernel("r", ["reduce"], kind="Input"), None, 1, "gpu", "does not fuse a reduction into",
     "PriorityFusionQueue::CanFuseWithNativeEmitter", PRIORITY_FUSION),
    ("loop-output", kernel("w", ["while"], kind="while"), None, 1, "gpu", "loop's or a branch's boundary", "", ""),
    ("branch-output", kernel("w", ["call"], kind="call"), None, 1, "cpu", "loop's or a branch's boundary", "", ""),
    ("collective", kernel("a", ["all-gather"]), None, 1, "gpu", "between devices", "", ""),
    # on the GPU, priority fusion's own IsFusible, and CanEmitInputFusedScatter for a scatter
    ("sort", kernel("s", ["sort"]), None, 1, "gpu", "a sort: a kernel of its own", "IsFusible (file-local",
     PRIORITY_FUSION),
    ("scatter", kernel("s", ["scatter"]), None, 1, "gpu", "a scatter", "CanEmitInputFusedScatter",
     "xla/service/gpu/gpu_fusible.cc"),
    ("scatter", kernel("s", ["scatter"]), None, 1, "cpu", "a scatter", "CpuInstructionFusion::ShouldFuse",
     CPU_LOOP_FUSION),
    ("custom-call", kernel("s", ["custom-call"]), None, 1, "tpu", "a custom call", "", ""),
    ("gather", kernel("s", ["gather"]), None, 1, "gpu", "a gather, stored", "", ""),
])  # fmt: skip
def test_why_it_was_not_fused(kind: str, producer: Fusion, consumer: Fusion | None, readers: int, backend: str,
                              words: str, rule: str, source: str) -> None:
    reason = reason_for(kind, producer, consumer, readers, backend)
    assert (reason.producer_kind, reason.source_file, reason.quoted) == (kind, source, None)
    assert words in reason.text
    assert reason.rule.startswith(rule) and bool(reason.rule) == bool(rule)
    assert reason.derived
    assert "jaxhlo-guide-bounded-scan" in reason.alternatives


@pytest.mark.parametrize(("written", "words", "rule"), [
    # the dtype gate of IsElementwiseOpSupportedByYnn: f16 is not taken, bf16 is
    (Written("exponential", dtypes=frozenset({"f16", "f32"})), "that f16 does not pass", "IsElementwiseOpSupportedByYnn"),
    (Written("exponential", dtypes=frozenset({"bf16", "f32"})), "does not say which", "CpuInstructionFusion"),
])  # fmt: skip
def test_the_ynn_dtype_gate(written: Written, words: str, rule: str) -> None:
    reason = reason_for("elementwise", kernel("c", ["exponential", "convert"]), YNN_REDUCE, 1, "cpu", written)
    assert words in reason.text and reason.rule.startswith(rule)


@pytest.mark.parametrize(("reduced", "rule"), [(15, ""), (16, "PriorityFusionQueue::CanFuseWithNativeEmitter")])
def test_a_reduction_into_a_reduction_on_the_gpu_by_its_length(reduced: int, rule: str) -> None:
    # CanFuseWithNativeEmitter keeps out reductions of 16 elements or more per result; shorter ones go to the
    # cost model, which the HLO does not show
    reason = reason_for("reduction", kernel("r", ["reduce"], kind="Input"), None, 1, "gpu",
                        Written("reduce", reduced=reduced))
    assert reason.rule.startswith(rule) and bool(reason.rule) == bool(rule)


def test_what_made_it_by_how_the_element_was_written() -> None:
    kernel_ = kernel("m", ["multiply", "sine", "reduce"], kind="Input")
    # an output a reduce wrote: another reduction's result; another output of a reducing kernel: its second output
    assert producer_kind(kernel_, 2, None, "gpu", Written("reduce", outputs=2)) == "reduction"
    assert producer_kind(kernel_, 2, None, "gpu", Written("multiply", outputs=2)) == "multi-output"
    assert producer_kind(kernel_, 2, None, "gpu", Written("multiply", outputs=1)) == "multi-reader-fusion"
    # a YNN kernel whose result a reduce wrote is another reduction
    ynn = kernel("y", ["multiply", "reduce"], kind="Custom", custom="__ynn_fusion")
    assert producer_kind(ynn, 2, None, "cpu", Written("reduce")) == "reduction"
    assert producer_kind(ynn, 2, None, "cpu", Written("multiply")) == "ynn"


def test_alternatives_follow_what_made_the_buffer() -> None:
    assert reason_for("gemm", GEMM, None, 1, "gpu").alternatives[0] == "jaxhlo-guide-matrix-small-contractions"
    assert reason_for("sort", GEMM, None, 1, "gpu").alternatives == ["jaxhlo-guide-bounded-scan",
                                                                      "jaxhlo-guide-bounded-map"]


def test_reasons_go_to_unfused_user_reductions_and_the_buffers_they_read() -> None:
    fusions = [GEMM, kernel("r", ["reduce"], kind="Input"), kernel("q", ["reduce"], kind="Input"),
               kernel("s", ["reduce"], kind="Input")]
    buffers = [Materialized("g", "f32[100]", 400, "g", ["r", "q"], computation="e"),
               Materialized("h", "f32[100]", 400, "missing", ["s"], computation="e")]
    unfused = Reduction("r1", "r", [], "g", 400, computation="e")
    compilers = Reduction("r2", "q", [], "g", 400, computation="e", origin="dot")
    fused = Reduction("r3", "s", [], None, 400, computation="e")
    orphan = Reduction("r4", "s", [], "h", 400, computation="e")  # its producer is no kernel
    elsewhere = Reduction("r5", "s", [], "g", 400, computation="body")  # no such buffer in that computation
    attach_reasons(fusions, buffers, [unfused, compilers, fused, orphan, elsewhere], "gpu:h100")
    assert unfused.reason is not None and unfused.reason.producer_kind == "gemm"
    assert (compilers.reason, fused.reason, orphan.reason, elsewhere.reason) == (None, None, None, None)
    assert buffers[0].reason == unfused.reason and buffers[0].reason is not unfused.reason
    assert buffers[1].reason is None


def test_the_seeds_reasons() -> None:
    """The seed (``with_dot``) on each target: what the page says."""
    def reasons(target: str) -> list[Reduction]:
        text = (Path(__file__).parent / "data" / "hlo" / f"{target.replace(':', '_')}__with_dot.txt").read_text()
        return [r for r in analyze_module(text, "example.py", target=target).reductions if r.is_users]

    (gpu,) = reasons("gpu:h100")
    assert gpu.reason is not None and gpu.reason.producer_kind == "gemm"
    assert gpu.reason.rule == "IsFusible (file-local in priority_fusion.cc), through PriorityFusionQueue::CanFuse"
    (cpu,) = reasons("cpu")
    assert cpu.reason is not None and cpu.reason.producer_kind == "elementwise"
    assert "cosine" in cpu.reason.text and cpu.reason.source_file == "xla/backends/cpu/ynn_support.cc"
    assert all(r.fused and r.reason is None for r in reasons("tpu:v5e"))


def test_reasons_survive_the_reports_json() -> None:
    text = (Path(__file__).parent / "data" / "hlo" / "gpu_h100__with_dot.txt").read_text()
    analysis = analyze_module(text, "example.py", target="gpu:h100")
    report = Report("f", "gpu:h100", materialized=analysis.materialized, reductions=analysis.reductions)
    back = Report.from_json(report.to_json())
    assert back == report
    (unfused,) = [r for r in back.reductions if r.is_users]
    assert unfused.reason is not None and unfused.reason.producer_kind == "gemm"
    assert next(m for m in back.materialized if m.name == unfused.input_materialized).reason == unfused.reason
    with pytest.raises(ValueError, match="malformed"):
        Report.from_dict({**report.to_dict(), "reductions": [{**report.to_dict()["reductions"][0],
                                                              "reason": {"text": "no kind"}}]})
    # a stored report (cache, snapshots) is checked field by field, the reason's fields too
    from sphinx_jaxhlo.store.cache import InvalidReport, checked_report

    assert checked_report(report.to_dict()) == report
    bad = report.to_dict()
    bad["reductions"][0]["reason"]["alternatives"] = 5
    with pytest.raises(InvalidReport, match="reason"):
        checked_report(bad)


def test_the_reason_in_one_paragraph() -> None:
    from sphinx_jaxhlo.hlo.reasons import ALTERNATIVE_TITLES, reason_sentence

    reason = reason_for("gemm", GEMM, None, 1, "gpu")
    text = reason_sentence(reason)
    assert text.startswith("Why: the stored data is the output of a GEMM (a matrix product). On the GPU")
    assert ("Rule: IsFusible (file-local in priority_fusion.cc), through PriorityFusionQueue::CanFuse, in "
            "xla/backends/gpu/transforms/priority_fusion.cc.") in text
    assert text.endswith("(derived from the HLO)")
    reason.quoted = "the producer is not fusible"
    assert reason_sentence(reason).endswith("(the compiler's own record is quoted below)")
    assert "Rule:" not in reason_sentence(reason_for("gather", GEMM, None, 1, "gpu"))
    assert ", in" not in reason_sentence(Reason("gemm", "t", rule="a pass"))
    # a text that names the producer again says it once
    elementwise = reason_sentence(Reason("elementwise", "It is a kernel of elementwise ops, stored before the "
                                                        "reduction reads it."))
    assert elementwise.startswith("Why: the stored data is the output of a kernel of elementwise ops, stored before")
    assert elementwise.count("a kernel of elementwise ops") == 1
    assert set(ALTERNATIVE_TITLES) >= {a for k in ("gemm", "sort") for a in reason_for(k, GEMM, None, 1, "cpu").alternatives}


def test_a_kernel_that_only_moves_data_is_looked_through() -> None:
    sort = kernel("s", ["sort"], kind="sort")
    copy = kernel("c", ["copy"], kind="copy")
    other = kernel("o", ["exponential"])
    reduce = kernel("r", ["reduce"], kind="Input")
    buffers = [Materialized("s", "f32[100]", 400, "s", ["c"], computation="e"),
               Materialized("c", "f32[100]", 400, "c", ["r"], computation="e")]
    r = Reduction("r1", "r", [], "c", 400, computation="e")
    attach_reasons([sort, copy, reduce], buffers, [r], "tpu:v5e")
    assert r.reason is not None and r.reason.producer_kind == "sort"
    # the buffer the reduction reads carries it, not the one moved
    assert (buffers[1].reason, buffers[0].reason) == (r.reason, None)
    # two stored buffers into the move (or one of another computation): the move itself is named
    two = [*buffers, Materialized("o", "f32[100]", 400, "o", ["c"], computation="e")]
    r2 = Reduction("r1", "r", [], "c", 400, computation="e")
    attach_reasons([sort, copy, other, reduce], two, [r2], "tpu:v5e")
    assert r2.reason is not None and r2.reason.producer_kind == "elementwise"
    elsewhere = [Materialized("s", "f32[100]", 400, "s", ["c"], computation="body"), buffers[1]]
    r3 = Reduction("r1", "r", [], "c", 400, computation="e")
    attach_reasons([sort, copy, reduce], elsewhere, [r3], "tpu:v5e")
    assert r3.reason is not None and r3.reason.producer_kind == "elementwise"
    # a kernel that computes is not looked through
    r4 = Reduction("r1", "r", [], "c", 400, computation="e")
    attach_reasons([sort, kernel("c", ["copy", "negate"]), reduce], buffers, [r4], "tpu:v5e")
    assert r4.reason is not None and r4.reason.producer_kind == "elementwise"


@pytest.mark.parametrize(("order", "shapes"), [("%g, %b", ("150", "200")), ("%b, %g", ("200", "150"))])
def test_of_buffers_that_reach_equally_the_larger_is_named_by_its_own_elements(order: str,
                                                                                shapes: tuple[str, str]) -> None:
    # 100 elements of each reach the reduce; element 0 of the tuple holds 150 (the tuple 1150),
    # the other buffer 200: the other buffer is the larger
    n0, n1 = shapes
    analysis = analyze(f"""
%two (p: f32[100]) -> (f32[150], f32[1000]) {{
  %p = f32[100]{{0}} parameter(0)
  %z = f32[] constant(0)
  %a = f32[150]{{0}} pad(%p, %z), padding=0_50
  %c = f32[1000]{{0}} pad(%p, %z), padding=0_900
  ROOT %t = (f32[150]{{0}}, f32[1000]{{0}}) tuple(%a, %c)
}}

%sum (q0: f32[{n0}], q1: f32[{n1}]) -> f32[] {{
  %q0 = f32[{n0}]{{0}} parameter(0)
  %q1 = f32[{n1}]{{0}} parameter(1)
  %s0 = f32[100]{{0}} slice(%q0), slice={{[0:100]}}
  %s1 = f32[100]{{0}} slice(%q1), slice={{[0:100]}}
  %m = f32[100]{{0}} multiply(%s0, %s1)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%m, %z), dimensions={{0}}, to_apply=%add
}}

ENTRY %e (x: f32[100], y: f32[200]) -> (f32[], f32[1000]) {{
  %x = f32[100]{{0}} parameter(0)
  %y = f32[200]{{0}} parameter(1)
  %m = (f32[150]{{0}}, f32[1000]{{0}}) fusion(%x), kind=kLoop, calls=%two
  %g = f32[150]{{0}} get-tuple-element(%m), index=0
  %g1 = f32[1000]{{0}} get-tuple-element(%m), index=1
  %b = f32[200]{{0}} sine(%y)
  %f = f32[] fusion({order}), kind=kInput, calls=%sum
  ROOT %o = (f32[], f32[1000]{{0}}) tuple(%f, %g1)
}}
""")
    assert only_reduction(analysis).input_materialized == "b"
# -- host work and host memory ------------------------------------------------------------

HOST_CALLEE = """
%on_host (hp: f32[8]) -> f32[8] {
  %hp = f32[8]{0} parameter(0)
  %hs = f32[8]{0} sine(%hp)
  ROOT %hm = f32[8]{0} multiply(%hs, %hs)
}THREAD
"""


def host_call(start: str, thread: str = ', execution_thread="host"') -> str:
    return HOST_CALLEE.replace("THREAD", thread) + f"""
ENTRY %e (x: f32[8]) -> f32[8] {{
  %x = f32[8]{{0}} parameter(0)
  %st = ((f32[8]{{0}}), f32[8]{{0}}, u32[]) {start}
  %dn = f32[8]{{0}} custom-call-done(%st)
  ROOT %r = f32[8]{{0}} negate(%dn)
}}
"""


@pytest.mark.parametrize(
    ("start", "followed"),
    [
        ('custom-call-start(%x), async_execution_thread="host", custom_call_target="HostExecute", called_computations={%on_host}', True),
        ('call-start(%x), async_execution_thread="host", to_apply=%on_host', True),
        ('custom-call-start(%x), custom_call_target="HostExecute", called_computations={%on_host}', False),
        ('custom-call(%x), async_execution_thread="host", custom_call_target="HostExecute", called_computations={%on_host}', False),
    ],
)
def test_an_async_start_on_another_thread_runs_its_computation(start: str, followed: bool) -> None:
    found = top_level_computations(parse_module(module(host_call(start))))
    assert found == (["e", "on_host"] if followed else ["e"])


START = 'custom-call-start(%x), async_execution_thread="host", custom_call_target="HostExecute", called_computations={%on_host}'


@pytest.mark.parametrize(
    ("thread", "on_host"),
    [
        (', execution_thread="host"', True),
        (', execution_thread="sparsecore"', True),
        (', execution_thread="X"', True),
        (', execution_thread="main"', False),
        (', execution_thread=""', False),
        ("", False),
    ],
)
def test_work_off_the_main_thread_is_listed_apart(thread: str, on_host: bool) -> None:
    analysis = analyze(host_call(START, thread))
    device = ["st", "dn", "r"]
    host = [("hs", "on_host"), ("hm", "on_host")]
    assert [f.name for f in analysis.fusions] == (device if on_host else ["st", "dn", "r", "hs", "hm"])
    assert [(f.name, f.computation) for f in analysis.host_fusions] == (host if on_host else [])
    assert analysis.host_computations == (["on_host"] if on_host else [])
    # the buffer passed between two host instructions lives in host memory
    assert [(m.name, m.kind) for m in analysis.host_buffers] == ([("hs", "host")] if on_host else [])
    assert sorted(m.name for m in analysis.materialized) == (["dn"] if on_host else ["dn", "hs"])


def test_a_computation_a_host_computation_runs_is_on_the_host_too() -> None:
    text = """
%lc (c: (s32[], f32[8])) -> pred[] {
  %c = (s32[], f32[8]{0}) parameter(0)
  %ci = s32[] get-tuple-element(%c), index=0
  %n = s32[] constant(4)
  ROOT %lt = pred[] compare(%ci, %n), direction=LT
}

%lb (b: (s32[], f32[8])) -> (s32[], f32[8]) {
  %b = (s32[], f32[8]{0}) parameter(0)
  %bi = s32[] get-tuple-element(%b), index=0
  %bv = f32[8]{0} get-tuple-element(%b), index=1
  %bs = f32[8]{0} sine(%bv)
  %bc = f32[8]{0} cosine(%bs)
  ROOT %bt = (s32[], f32[8]{0}) tuple(%bi, %bc)
}

%on_host (hp: f32[8]) -> f32[8] {
  %hp = f32[8]{0} parameter(0)
  %z = s32[] constant(0)
  %init = (s32[], f32[8]{0}) tuple(%z, %hp)
  %w = (s32[], f32[8]{0}) while(%init), condition=%lc, body=%lb
  ROOT %hv = f32[8]{0} get-tuple-element(%w), index=1
}, execution_thread="host"

ENTRY %e (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %st = ((f32[8]{0}), f32[8]{0}, u32[]) custom-call-start(%x), async_execution_thread="host", custom_call_target="HostExecute", called_computations={%on_host}
  %dn = f32[8]{0} custom-call-done(%st)
  ROOT %r = f32[8]{0} negate(%dn)
}
"""
    analysis = analyze(text)
    assert analysis.host_computations == ["on_host", "lc", "lb"]
    assert {f.computation for f in analysis.host_fusions} == {"on_host", "lc", "lb"}
    assert [(m.name, m.computation) for m in analysis.host_buffers] == [("bs", "lb")]
    assert [f.name for f in analysis.fusions] == ["st", "dn", "r"]


def test_a_reduction_on_the_host_is_listed_like_the_others() -> None:
    text = host_call(START).replace("ROOT %hm = f32[8]{0} multiply(%hs, %hs)", """%z = f32[] constant(0)
  %red = f32[] reduce(%hs, %z), dimensions={0}, to_apply=%add
  ROOT %hm = f32[8]{0} broadcast(%red), dimensions={}""")
    reduction = only_reduction(analyze(text))
    assert (reduction.name, reduction.computation, reduction.input_materialized) == ("red", "on_host", "hs")


def memory_space_module(space: str) -> str:
    return f"""
ENTRY %e (x: f32[8]) -> f32[8] {{
  %x = f32[8]{{0}} parameter(0)
  %h = f32[8]{{0}} tanh(%x)
  %cs = (f32[8]{{0{space}}}, f32[8]{{0}}, u32[]) copy-start(%h)
  %cd = f32[8]{{0{space}}} copy-done(%cs)
  ROOT %r = f32[8]{{0}} sine(%cd)
}}
"""


@pytest.mark.parametrize(("space", "host"), [(":S(5)", True), (":T(8,128)S(5)", True), (":S(1)", False),
                                             (":S(4)", False), (":S(6)", False), ("", False)])
def test_a_buffer_in_the_host_memory_space_is_a_host_buffer(space: str, host: bool) -> None:
    analysis = analyze(memory_space_module(space))
    assert [(m.name, m.kind) for m in analysis.host_buffers] == ([("cd", "host")] if host else [])
    assert sorted(m.name for m in analysis.materialized) == (["h"] if host else ["cd", "h"])
    assert analysis.host_fusions == []


def test_host_buffers_are_sorted_by_size_then_name() -> None:
    text = """
ENTRY %e (x: f32[8]) -> f32[16] {
  %x = f32[8]{0} parameter(0)
  %small = f32[8]{0:S(5)} sine(%x)
  %big = f32[16]{0:S(5)} broadcast(%small), dimensions={}
  %b = f32[8]{0:S(5)} cosine(%x)
  %a = f32[8]{0:S(5)} cosine(%x)
  %c = f32[16]{0} broadcast(%a), dimensions={}
  %d = f32[16]{0} broadcast(%b), dimensions={}
  %s = f32[16]{0} add(%c, %d)
  ROOT %r = f32[16]{0} add(%big, %s)
}
"""
    assert [m.name for m in analyze(text).host_buffers] == ["big", "a", "b", "small"]


def test_a_tuple_element_in_host_memory_is_a_host_buffer() -> None:
    """An element read through its get-tuple-element, or (named ``f[i]``) by a
    reader of the whole tuple: only the element whose layout says ``S(5)``."""
    text = """
%fb (fp: f32[8]) -> (f32[8], f32[8]) {
  %fp = f32[8]{0} parameter(0)
  %f0 = f32[8]{0} sine(%fp)
  %f1 = f32[8]{0} cosine(%fp)
  ROOT %ft = (f32[8]{0}, f32[8]{0}) tuple(%f0, %f1)
}

%callee (cp: (f32[8], f32[8])) -> f32[8] {
  %cp = (f32[8]{0}, f32[8]{0:S(5)}) parameter(0)
  ROOT %cg = f32[8]{0} get-tuple-element(%cp), index=0
}

ENTRY %e (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %f = (f32[8]{0}, f32[8]{0:S(5)}) fusion(%x), kind=kLoop, calls=%fb
  %g = f32[8]{0:S(5)} get-tuple-element(%f), index=1
  %n = f32[8]{0} negate(%g)
  %k = f32[8]{0} call(%f), to_apply=%callee
  ROOT %r = f32[8]{0} add(%n, %k)
}
"""
    analysis = analyze(text)
    assert {m.name for m in analysis.host_buffers} == {"g"}
    assert {m.name for m in analysis.materialized} == {"f[0]", "n", "k"}
    # an element that is a tuple itself is not in one memory space
    nested = text.replace("(f32[8]{0}, f32[8]{0:S(5)}) fusion(%x)", "(f32[8]{0}, (f32[8]{0:S(5)})) fusion(%x)").replace(
        "%g = f32[8]{0:S(5)} get-tuple-element(%f), index=1", "%g = (f32[8]{0:S(5)}) get-tuple-element(%f), index=1\n  %g0 = f32[8]{0:S(5)} get-tuple-element(%g), index=0").replace(
        "negate(%g)", "negate(%g0)")
    inner = analyze(nested)
    assert {m.name for m in inner.host_buffers} == set()
    assert {m.name for m in inner.materialized} == {"f[0]", "g", "n", "k"}
    # without the get-tuple-element, the call reads the whole tuple: the elements are named f[i]
    whole = text.replace("%g = f32[8]{0:S(5)} get-tuple-element(%f), index=1\n  %n = f32[8]{0} negate(%g)",
                         "%n = f32[8]{0} constant({1,2,3,4,5,6,7,8})")
    only_call = analyze(whole)
    assert {m.name for m in only_call.host_buffers} == {"f[1]"}
    assert "f[0]" in {m.name for m in only_call.materialized}


@pytest.mark.parametrize(("thread", "followed"), [(', execution_thread="host"', True), ("", False)])
@pytest.mark.parametrize("callee_thread", [', execution_thread="host"', ""])
def test_the_custom_call_of_a_wrapper_on_another_thread_runs_its_computation(thread: str, followed: bool,
                                                                             callee_thread: str) -> None:
    """XLA's dumps write a host call out: an ``async-start`` of a wrapper on
    the host thread whose ``custom-call`` names the host computation (which
    is on the host, whether its text says so or not)."""
    text = HOST_CALLEE.replace("THREAD", callee_thread) + f"""
%wrap (wp: f32[8]) -> f32[8] {{
  %wp = f32[8]{{0}} parameter(0)
  ROOT %cc = f32[8]{{0}} custom-call(%wp), custom_call_target="HostExecute", called_computations={{%on_host}}
}}{thread}

ENTRY %e (x: f32[8]) -> f32[8] {{
  %x = f32[8]{{0}} parameter(0)
  %st = ((f32[8]{{0}}), f32[8]{{0}}, u32[]) async-start(%x), async_execution_thread="host", calls=%wrap
  %dn = f32[8]{{0}} async-done(%st)
  ROOT %r = f32[8]{{0}} negate(%dn)
}}
"""
    assert top_level_computations(parse_module(module(text))) == (["e", "wrap", "on_host"] if followed else ["e", "wrap"])
    analysis = analyze(text)
    assert [(m.name, m.computation) for m in analysis.host_buffers] == ([("hs", "on_host")] if followed else [])
    assert analysis.host_computations == (["wrap", "on_host"] if followed else [])


# -- issue 31: the reduced data's scale, second stages, row reductions, what matters, names, kernels, the peak ------

MIN = """%min (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] minimum(%a, %b)
}
"""

ROW = """
%row (pw: f32[{n},{m}], px: f32[{n},{k}]) -> f32[{n},{k}] {{
  %pw = f32[{n},{m}]{{1,0}} parameter(0)
  %px = f32[{n},{k}]{{1,0}} parameter(1)
  %bw = f32[{n},{k},{m}]{{2,1,0}} broadcast(%pw), dimensions={{0,2}}
  %bx = f32[{n},{k},{m}]{{2,1,0}} broadcast(%px), dimensions={{0,1}}
  %v = f32[{n},{k},{m}]{{2,1,0}} multiply({weight}, %bx)
  %z = f32[] constant(0)
  ROOT %r = f32[{n},{k}]{{1,0}} reduce(%v, %z), dimensions={{2}}, to_apply=%add
}}

ENTRY %e (y: f32[{n},{m}], x: f32[{n},{k}]) -> f32[{n},{k}] {{
  %y = f32[{n},{m}]{{1,0}} parameter(0)
  %x = f32[{n},{k}]{{1,0}} parameter(1)
  %w = f32[{n},{m}]{{1,0}} rsqrt(%y)
  ROOT %f = f32[{n},{k}]{{1,0}} fusion(%w, %x), kind=kInput, calls=%row
}}
"""


def weights(n: int, k: int, m: int, weight: str = "%bw") -> Reduction:
    """A stored f32[n, m] (the pairwise weights) read broadcast over the k components of each pair,
    times an argument, summed over m: the reduced data is f32[n, k, m], the result f32[n, k], the row m."""
    return only_reduction(analyze(ROW.format(n=n, k=k, m=m, weight=weight)))


@pytest.mark.parametrize(("n", "k", "m", "fused"), [
    # the N-body force: 3 components; the weights are a third of the reduced values, 64 > 15 results
    (5, 3, 16, False),
    # 8 copies: 1/8 of the reduced values came from memory, still the reduced data at its own scale ...
    (4, 8, 16, False),
    # ... 9 copies: under 1/8; the weights are an input broadcast into the kernel
    (4, 9, 16, True),
    # as many stored elements as the result (k = m): no more than an input of the result's size
    (5, 4, 4, True),
    # one more than the result
    (5, 3, 4, False),
    # a long broadcast (a mask over 1024 features) is an input, whatever its size
    (4, 1024, 2047, True),
])  # fmt: skip
def test_a_stored_buffer_read_through_a_short_broadcast_is_the_reduced_data(n: int, k: int, m: int,
                                                                            fused: bool) -> None:
    reduction = weights(n, k, m)
    assert reduction.fused is fused
    assert reduction.input_materialized == (None if fused else "w")


def test_the_inputs_of_a_fused_outer_product_stay_fused_however_short_the_other_side() -> None:
    # y[j] (3 values) and x[i] (50) stored, reduced over i: each is no bigger than the row or the result
    text = """
%outer (pa: f32[50], pb: f32[3]) -> f32[3] {
  %pa = f32[50]{0} parameter(0)
  %pb = f32[3]{0} parameter(1)
  %ba = f32[50,3]{1,0} broadcast(%pa), dimensions={0}
  %bb = f32[50,3]{1,0} broadcast(%pb), dimensions={1}
  %v = f32[50,3]{1,0} multiply(%ba, %bb)
  %z = f32[] constant(0)
  ROOT %r = f32[3]{0} reduce(%v, %z), dimensions={0}, to_apply=%add
}

ENTRY %e (x: f32[50], y: f32[3]) -> f32[3] {
  %x = f32[50]{0} parameter(0)
  %y = f32[3]{0} parameter(1)
  %a = f32[50]{0} sine(%x)
  %b = f32[3]{0} sine(%y)
  ROOT %f = f32[3]{0} fusion(%a, %b), kind=kInput, calls=%outer
}
"""
    assert only_reduction(analyze(text)).fused


MASKED = """
%masked (pm: pred[{n},{m}], px: f32[{n},{k}]) -> f32[{n},{k}] {{
  %pm = pred[{n},{m}]{{1,0}} parameter(0)
  %px = f32[{n},{k}]{{1,0}} parameter(1)
  %bm = pred[{n},{k},{m}]{{2,1,0}} broadcast(%pm), dimensions={{0,2}}
  %bx = f32[{n},{k},{m}]{{2,1,0}} broadcast(%px), dimensions={{0,1}}
  {use}
  %z = f32[] constant(0)
  ROOT %r = f32[{n},{k}]{{1,0}} reduce(%v, %z), dimensions={{2}}, to_apply=%add
}}

ENTRY %e (y: f32[{n},{m}], x: f32[{n},{k}]) -> f32[{n},{k}] {{
  %y = f32[{n},{m}]{{1,0}} parameter(0)
  %x = f32[{n},{k}]{{1,0}} parameter(1)
  %mask = pred[{n},{m}]{{1,0}} compare(%y, %y), direction=LT
  ROOT %f = f32[{n},{k}]{{1,0}} fusion(%mask, %x), kind=kInput, calls=%masked
}}
"""
SELECT = "%v = f32[{n},{k},{m}]{{2,1,0}} select(%bm, %bx, %bx)"
MULTIPLY = ("%cm = f32[{n},{k},{m}]{{2,1,0}} convert(%bm)\n"
            "  %v = f32[{n},{k},{m}]{{2,1,0}} multiply(%cm, %bx)")


@pytest.mark.parametrize(("use", "size", "fused"), [
    # a stored mask broadcast over 3 components as a select's predicate chooses values, it carries none
    (SELECT, (4, 3, 16), True),
    # the same mask converted and multiplied in carries values: the short broadcast of rule 1
    (MULTIPLY, (4, 3, 16), False),
    # a predicate as large as the data decides every value: rule 2 counts it (a dropout mask)
    (SELECT, (4, 1, 16), False),
])  # fmt: skip
def test_a_selects_predicate_counts_for_half_the_data_not_for_a_short_broadcast(use: str, size: tuple[int, int, int],
                                                                                 fused: bool) -> None:
    n, k, m = size
    reduction = only_reduction(analyze(MASKED.format(n=n, k=k, m=m, use=use.format(n=n, k=k, m=m))))
    assert reduction.fused is fused
    assert reduction.input_materialized == (None if fused else "mask")


def second(reducer: str, *, op: str = "reduce_min") -> Reduction:
    """A reduce with ``reducer`` of a stored sum over its last dimension, read as is."""
    text = MIN + STAGES.format(stage1_root=REDUCE_ROOT, between="%q2 = f32[100,4]{1,0} bitcast(%q)")
    text = text.replace("to_apply=%add, metadata={op_name=\"jit(f)/reduce_sum\"}\n}\n\nENTRY",
                        f"to_apply={reducer}, metadata={{op_name=\"jit(f)/{op}\"}}\n}}\n\nENTRY")
    return analyze(text).reductions[1]


def test_a_reduction_of_another_reductions_result_is_the_programs_own() -> None:
    # the same reducer: partial sums of the same sum, a second stage
    assert (second("%add", op="reduce_sum").origin, second("%add", op="reduce_sum").partial_of) == ("second-stage", "s1")
    # a min of a stored sum: the sum's result is the data the min reduces, stored
    found = second("%min")
    assert (found.origin, found.partial_of, found.input_materialized, found.fused) == ("user", None, "s1", False)


ROW_WINDOW = """
%max (a: f32[], b: f32[]) -> f32[] {{
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] maximum(%a, %b)
}}

ENTRY %e (x: f32[4,8]) -> f32[4,8] {{
  %x = f32[4,8]{{1,0}} parameter(0)
  %c = f32[4,8]{{1,0}} cosine(%x)
  %z = f32[] constant(-inf)
  ROOT %r = f32[4,8]{{1,0}} reduce-window(%c, %z), window={{size=1x{size} pad=0_0x{pad}}}, to_apply=%max, metadata={{op_name="jit(f)/sub"}}
}}
"""


@pytest.mark.parametrize(("size", "pad", "origin", "op"), [
    # every position's window covers the whole row of 8: a row max broadcast back (the TPU's softmax)
    ("15", "7_7", "user", "reduce_max"),
    ("17", "8_8", "user", "reduce_max"),
    # one short on the high side: the last positions miss the row's end: a sliding window
    ("14", "7_6", "scan", "sub"),
    # a prefix scan: padded on the low side only
    ("8", "7_0", "scan", "sub"),
])  # fmt: skip
def test_a_reduce_window_that_covers_each_row_at_every_position_is_a_row_reduction(size: str, pad: str,
                                                                                   origin: str, op: str) -> None:
    reduction = only_reduction(analyze(ROW_WINDOW.format(size=size, pad=pad)))
    assert (reduction.origin, reduction.op) == (origin, op)
    # it reads the stored cosines as is: its data went to memory
    assert reduction.input_materialized == "c"


def test_row_dimensions_read_the_window() -> None:
    from sphinx_jaxhlo.hlo.fusion import row_dimensions

    mod = parse_module(module(ROW_WINDOW.format(size="15", pad="7_7")))
    entry = mod.computations["e"]
    assert row_dimensions(entry["r"], entry["c"]) == [1]
    dilated = parse_module(module(ROW_WINDOW.format(size="15", pad="7_7").replace("pad=0_0x7_7", "pad=0_0x7_7 rhs_dilate=1x2")))
    assert row_dimensions(dilated.computations["e"]["r"], dilated.computations["e"]["c"]) == []


MATTERS = """
ENTRY %e (x: f32[{big}], y: f32[{small}]) -> (f32[], f32[]) {{
  %x = f32[{big}]{{0}} parameter(0)
  %y = f32[{small}]{{0}} parameter(1)
  %s = f32[{small}]{{0}} sine(%y)
  %z = f32[] constant(0)
  %a = f32[] reduce(%x, %z), dimensions={{0}}, to_apply=%add
  %b = f32[] reduce(%s, %z), dimensions={{0}}, to_apply=%add
  ROOT %t = (f32[], f32[]) tuple(%a, %b)
}}
"""


@pytest.mark.parametrize(("small", "minor"), [(64, False), (63, True)])
def test_a_reduction_under_a_64th_of_the_largest_does_not_decide(small: int, minor: bool) -> None:
    from sphinx_jaxhlo.core.expectations import Expectation, check
    from sphinx_jaxhlo.store.drift import verdict

    analysis = analyze(MATTERS.format(big=4096, small=small))
    big, little = analysis.reductions
    assert (big.fused, little.fused, big.minor, little.minor) == (True, False, False, minor)
    report = Report("f", "cpu", reductions=analysis.reductions)
    assert report.verdict_reductions == [big, little]  # it keeps its verdict
    assert verdict(report) == ("fused" if minor else "1 of 2 unfused")
    assert check(Expectation("reduction", None, "fused"), report).passed is minor
    assert report.all_reductions_fused is minor


CONTRACTION = """
%contract (pa: f32[8,6], pb: f32[6]) -> f32[8] {{
  %pa = f32[8,6]{{1,0}} parameter(0)
  %pb = f32[6]{{0}} parameter(1)
  %bb = f32[8,6]{{1,0}} broadcast(%pb), dimensions={{1}}
  %v = f32[8,6]{{1,0}} multiply(%pa, %bb)
  %z = f32[] constant(0)
  ROOT %r = f32[8]{{0}} reduce(%v, %z), dimensions={{1}}, to_apply=%add, metadata={{op_name="jit(f)/dot_general"}}
}}

ENTRY %e (x: f32[8,6], q: f32[8,4], w: f32[4,6], v: f32[6]) -> f32[8] {{
  %x = f32[8,6]{{1,0}} parameter(0)
  %q = f32[8,4]{{1,0}} parameter(1)
  %w = f32[4,6]{{1,0}} parameter(2)
  %v = f32[6]{{0}} parameter(3)
  {make}
  ROOT %f = f32[8]{{0}} fusion({read}, %v), kind=kInput, calls=%contract
}}
"""


@pytest.mark.parametrize(("make", "read", "origin"), [
    # exp(-d2) @ v on the v5e: the contraction reads a stored table no GEMM wrote: the program's own
    ("%m = f32[8,6]{1,0} exponential(%x)", "%m", "user"),
    # the partial products of a GEMM (split-K): the dot's own
    ("%m = f32[8,6]{1,0} dot(%q, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}", "%m", "dot"),
    # a small dot done as multiply and reduce over the arguments: the dot's own
    ("", "%x", "dot"),
])  # fmt: skip
def test_a_contraction_done_as_multiply_and_reduce_over_stored_data_gets_a_verdict(make: str, read: str,
                                                                                   origin: str) -> None:
    reduction = only_reduction(analyze(CONTRACTION.format(make=make, read=read)))
    assert reduction.origin == origin
    assert reduction.fused is (read == "%x")


def test_a_buffer_is_named_by_the_collective_that_made_it() -> None:
    # the partitioner copies the metadata of the dot it gathers the weight for
    text = """
ENTRY %e (w: f32[1024,256], x: f32[64,1024]) -> f32[64,1024] {
  %w = f32[1024,256]{1,0} parameter(0)
  %x = f32[64,1024]{1,0} parameter(1)
  %ags = (f32[1024,256]{1,0}, f32[1024,1024]{1,0}) all-gather-start(%w), dimensions={1}, metadata={op_name="jit(f)/dot_general"}
  %agd = f32[1024,1024]{1,0} all-gather-done(%ags), metadata={op_name="jit(f)/dot_general"}
  ROOT %d = f32[64,1024]{1,0} dot(%x, %agd), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""
    (gathered,) = analyze(text).materialized
    assert (gathered.name, gathered.producer_op) == ("agd", "all-gather")


YNN_KERNEL = """
%ynn (p0: f32[8,4], p1: f32[4,8]) -> f32[8,8] {{
  %p0 = f32[8,4]{{1,0}} parameter(0)
  %p1 = f32[4,8]{{1,0}} parameter(1)
  %d = f32[8,8]{{1,0}} dot(%p0, %p1), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, metadata={{op_name="jit(f)/dot_general"}}
  %z = f32[] constant(-inf)
  %m = f32[8]{{0}} reduce(%d, %z), dimensions={{1}}, to_apply=%add, metadata={{op_name="jit(f)/reduce_max"}}
  %bm = f32[8,8]{{1,0}} broadcast(%m), dimensions={{0}}
  %s = f32[8,8]{{1,0}} subtract({first}, %bm), metadata={{op_name="jit(f)/sub"}}
  ROOT %x = f32[8,8]{{1,0}} exponential(%s), metadata={{op_name="jit(f)/exp"}}
}}

ENTRY %e (a: f32[8,4], b: f32[4,8]) -> f32[8] {{
  %a = f32[8,4]{{1,0}} parameter(0)
  %b = f32[4,8]{{1,0}} parameter(1)
  %k = f32[8,8]{{1,0}} fusion(%a, %b), kind=kCustom, calls=%ynn, metadata={{op_name="jit(f)/{own}"}}
  %z = f32[] constant(0)
  ROOT %r = f32[8]{{0}} reduce(%k, %z), dimensions={{1}}, to_apply=%add
}}
"""


@pytest.mark.parametrize(("first", "own", "named"), [
    # a YNN kernel whose metadata names the max inside it: named by the GEMM its result comes from, and the
    # last op of the work fused after it (an epilogue: its result is not the product)
    ("%d", "reduce_max", "exp of dot_general"),
    # no dot on the way to its result: by the op that writes it
    ("%bm", "reduce_max", "exp"),
    # its metadata names an op that computes its result: kept
    ("%d", "softmax", "softmax"),
])  # fmt: skip
def test_a_kernel_is_named_by_an_op_that_computes_its_result(first: str, own: str, named: str) -> None:
    (stored,) = analyze(YNN_KERNEL.format(first=first, own=own)).materialized
    assert stored.producer_op == named


@pytest.mark.parametrize(("space", "kernels"), [("S(6)", 1), ("S(1)", 4), ("", 4)])
def test_work_in_the_tpus_scalar_memory_is_no_kernel(space: str, kernels: int) -> None:
    from sphinx_jaxhlo.core.report import is_kernel

    text = f"""
ENTRY %e (x: s32[], y: s32[]) -> s32[] {{
  %c = s32[]{{:T(128)}} constant(2)
  %x = s32[]{{:T(128)}} parameter(0)
  %y = s32[]{{:T(128)}} parameter(1)
  %cx = s32[]{{:T(128){space}}} copy(%x)
  %m = s32[]{{:T(128){space}}} multiply(%cx, %c)
  %cy = s32[]{{:T(128){space}}} copy(%y)
  ROOT %a = s32[]{{:T(128)}} add(%m, %cy)
}}
"""
    fusions = analyze(text).fusions
    assert sum(is_kernel(f) for f in fusions) == kernels
    assert [f.memory_space for f in fusions] == [6 if space == "S(6)" else 1 if space else 0] * 3 + [0]


@pytest.mark.parametrize(("platform", "peak", "temp", "expected", "estimate"), [
    # the CPU's peak leaves the temporaries out: arguments + output + temp - alias, an estimate
    ("cpu", 110, 50, 100 + 10 + 50 - 4, True),
    ("cpu", 110, 0, 110, False),  # no temporaries: XLA's figure is right
    # a GPU's XLA peak stands where it covers the temporaries
    ("cuda", 160, 50, 160, False),
    ("gpu:h100", 49, 50, 156, True),
    # a TPU's stands as XLA says it, below the temporaries too (it counts on-chip buffers and
    # leaves the code out: the chunked N-body gradient's 8,120,076,288 B against a temp of
    # 8,199,418,880 B, where the chip reserved 8,118,910,976 B); only a missing one is replaced
    ("tpu", 49, 50, 49, False),
    ("tpu:v5e", 300, 50, 300, False),
    ("tpu", None, 0, 106, True),
])  # fmt: skip
def test_the_peak_is_each_targets_own(platform: str, peak: int | None, temp: int, expected: int,
                                      estimate: bool) -> None:
    from sphinx_jaxhlo.core.report import Memory

    memory = Memory(argument_bytes=100, output_bytes=10, alias_bytes=4, temp_bytes=temp, peak_bytes=peak)
    memory.settle(platform)
    assert (memory.peak_bytes, memory.peak_is_estimate) == (expected, estimate)
    memory.settle(platform)  # read again (a stored snapshot): the same figure
    assert (memory.peak_bytes, memory.peak_is_estimate) == (expected, estimate)


@pytest.mark.parametrize("platform", ["cpu", "cuda", "gpu:h100", "tpu", "tpu:v5e"])
@pytest.mark.parametrize(("code", "missing"), [(7, None), (None, None), (7, "temp_bytes"), (7, "output_bytes")])
def test_the_device_figure_is_what_the_runtime_allocates(platform: str, code: int | None, missing: str | None) -> None:
    """Arguments + outputs + temp + generated code - aliased, on every target; unknown
    (``None``) when a part is not reported, 0 for code that is not."""
    from sphinx_jaxhlo.core.report import Memory

    memory = Memory(argument_bytes=100, output_bytes=10, alias_bytes=4, temp_bytes=50, generated_code_bytes=code,
                    peak_bytes=170)
    if missing:
        setattr(memory, missing, None)
    memory.settle(platform)
    assert memory.device_bytes == (None if missing else 100 + 10 + 50 + (code or 0) - 4)


# -- a prefix-scan stage passes the data it reads on (issue 45) -------------------------------------------
#
# The H100's max(cumsum(exp(x))) reads the stored exp(x) in the kernel that reduces, through the scan's last
# stage (a reduce-window padded on the low side): the reduced data is computed in the kernel from a stored
# buffer of its full size, so the reduction is unfused (it was called fused).

SCAN_THEN_REDUCE = """
%k (p: f32[4,64]) -> f32[4] {{
  %p = f32[4,64]{{1,0}} parameter(0)
  %z = f32[] constant(0)
  %w = f32[4,64]{{1,0}} reduce-window(%p, %z), window={{{window}}}, to_apply=%add
  ROOT %r = f32[4]{{0}} reduce(%w, %z), dimensions={{1}}, to_apply=%add, metadata={{op_name="jit(f)/reduce_max"}}
}}

ENTRY %e (x: f32[4,64]) -> f32[4] {{
  %x = f32[4,64]{{1,0}} parameter(0)
  %big = f32[4,64]{{1,0}} exponential(%x), metadata={{op_name="jit(f)/exp"}}
  ROOT %f = f32[4]{{0}} fusion(%big), kind=kInput, calls=%k
}}
"""


@pytest.mark.parametrize(("window", "stored"), [
    ("size=1x16 pad=0_0x15_0", "big"),       # a prefix scan's stage: running totals of every element read
    ("size=1x16 pad=0_0x0_15", "big"),       # a reversed scan
    ("size=1x16 stride=1x16", None),         # a first stage of a split reduction (fewer results): new data
    ("size=1x127 pad=0_0x63_63", None),      # a row reduction broadcast back: new data
])  # fmt: skip
def test_data_that_reaches_a_reduce_through_a_prefix_scan_is_the_reduced_data(window: str,
                                                                                stored: str | None) -> None:
    if "stride" in window:  # the split stage writes fewer elements
        text = SCAN_THEN_REDUCE.replace("%w = f32[4,64]{{1,0}}", "%w = f32[4,4]{{1,0}}")
    else:
        text = SCAN_THEN_REDUCE
    reductions = {r.name: r for r in analyze(text.format(window=window)).reductions}
    assert reductions["r"].input_materialized == stored


# -- a GEMM with work fused after it is named by its last op (issue 45) ------------------------------------

GEMM_EPILOGUE = """
%g (a: f32[64,32], b: f32[32,64]) -> f32[64,64] {{
  %a = f32[64,32]{{1,0}} parameter(0)
  %b = f32[32,64]{{1,0}} parameter(1)
  %d = f32[64,64]{{1,0}} dot(%a, %b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, metadata={{op_name="jit(f)/dot_general"}}
  {root}
}}

%k (p: f32[64,64]) -> f32[64] {{
  %p = f32[64,64]{{1,0}} parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[64]{{0}} reduce(%p, %z), dimensions={{0}}, to_apply=%add, metadata={{op_name="jit(f)/reduce_sum"}}
}}

ENTRY %e (x: f32[64,32], w: f32[32,64]) -> f32[64] {{
  %x = f32[64,32]{{1,0}} parameter(0)
  %w = f32[32,64]{{1,0}} parameter(1)
  %gemm = f32[64,64]{{1,0}} fusion(%x, %w), kind=kCustom, calls=%g, metadata={{op_name="jit(f)/dot_general"}}, backend_config={{"fusion_backend_config":{{"kind":"__triton_nested_gemm_fusion"}}}}
  ROOT %f = f32[64]{{0}} fusion(%gemm), kind=kInput, calls=%k
}}
"""


@pytest.mark.parametrize(("root", "named"), [
    ('ROOT %t = f32[64,64]{{1,0}} tanh(%d), metadata={{op_name="jit(f)/tanh"}}', "tanh of dot_general"),
    ('ROOT %t = f32[64,64]{{1,0}} copy(%d)', "dot_general"),  # no op of its own: the product is the result
    ('%t = f32[64,64]{{1,0}} tanh(%d), metadata={{op_name="jit(f)/tanh"}}\n  ROOT %c = f32[64,64]{{1,0}} cosine(%t), metadata={{op_name="jit(f)/cos"}}',
     "cos of dot_general"),
])  # fmt: skip
def test_a_gemm_with_an_epilogue_is_named_by_its_last_op(root: str, named: str) -> None:
    from sphinx_jaxhlo.hlo.reasons import KIND_WORDS

    analysis = analyze(GEMM_EPILOGUE.format(root=root.replace("{{", "{").replace("}}", "}")))
    (stored,) = analysis.materialized
    assert stored.producer_op == named
    # still a GEMM's output for the reason
    (reduction,) = analysis.reductions
    assert reduction.reason is not None and KIND_WORDS[reduction.reason.producer_kind] == "a GEMM (a matrix product)"
