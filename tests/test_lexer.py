# ruff: noqa: E501  (the inline samples are real compiler output, long lines and all)
"""Tests for the Pygments lexers in :mod:`sphinx_jaxhlo.render.lexer`.

Every module under ``tests/data/hlo`` (real compiler output for CPU, GPU and TPU
targets) must lex without a single `Error` token, with every character recognised by a
specific rule, and the token values must give back the input text exactly.  The inline
samples below are real compiler output too (jax 0.10.2: the seed example compiled for
the CPU, for an H100 and for a v5e, the last two deviceless), cut down to a few
computations; they keep these tests meaningful while the fixture folder is empty.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import RegexLexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import Comment, Error, Keyword, Name, Number, Operator, Punctuation, String, Text, _TokenType

from sphinx_jaxhlo.render.lexer import HloLexer, Layout, StableHloLexer

DATA = Path(__file__).parent / "data" / "hlo"
FIXTURES = sorted(p for p in [*DATA.glob("*.txt"), *DATA.glob("*.mlir")] if not p.name.endswith(".error.txt"))

# jax.jit(with_dot).trace(...).lower().compile().as_text() on the CPU, whole module.
CPU_WITH_DOT = r"""HloModule jit_with_dot, is_scheduled=true, entry_computation_layout={(f32[100000,3]{1,0}, f32[50000,3]{1,0})->f32[50000]{0}}, allow_spmd_sharding_propagation_to_parameters={true,true}, allow_spmd_sharding_propagation_to_output={true}

FileNames
1 "gen.py"
2 "example.py"

FunctionNames
1 "<module>"
2 "with_dot"
3 "with_dot.<locals>.<lambda>"

FileLocations
1 {file_name_id=1 function_name_id=1 line=18 end_line=18 column=8 end_column=47}
2 {file_name_id=2 function_name_id=2 line=8 end_line=8 column=11 end_column=77}
3 {file_name_id=2 function_name_id=2 line=8 end_line=8 column=19 end_column=68}
4 {file_name_id=2 function_name_id=3 line=8 end_line=8 column=46 end_column=61}
5 {file_name_id=2 function_name_id=3 line=8 end_line=8 column=38 end_column=62}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}
3 {file_location_id=3 parent_frame_id=2}
4 {file_location_id=4 parent_frame_id=4}
5 {file_location_id=5 parent_frame_id=4}


%region_0.1 (reduce_sum.3: f32[], reduce_sum.4: f32[]) -> f32[] {
  %reduce_sum.3 = f32[] parameter(0), metadata={op_name="reduce_sum"}
  %reduce_sum.4 = f32[] parameter(1), metadata={op_name="reduce_sum"}
  ROOT %reduce_sum.5 = f32[] add(%reduce_sum.3, %reduce_sum.4), metadata={op_name="jit(with_dot)/reduce_sum" stack_frame_id=2}
}

%fused_computation (param_0: f32[50000,100000]) -> f32[50000] {
  %param_0 = f32[50000,100000]{1,0} parameter(0)
  %constant.0 = f32[] constant(0)
  ROOT %reduce_sum.0 = f32[50000]{0} reduce(%param_0, %constant.0), dimensions={1}, to_apply=%region_0.1, metadata={op_name="jit(with_dot)/reduce_sum" stack_frame_id=2}
}

%fused_computation.1 (param_0.1: f32[50000,3], param_1.1: f32[100000,3]) -> f32[50000,100000] {
  %param_0.1 = f32[50000,3]{1,0} parameter(0)
  %param_1.1 = f32[100000,3]{1,0} parameter(1)
  ROOT %dot_general.0 = f32[50000,100000]{1,0} dot(%param_0.1, %param_1.1), lhs_contracting_dims={1}, rhs_contracting_dims={1}, metadata={op_name="jit(with_dot)/vmap()/dot_general" stack_frame_id=4}
}

%wrapped_cosine_computation (param_0.2: f32[50000,100000]) -> f32[50000,100000] {
  %param_0.2 = f32[50000,100000]{1,0} parameter(0)
  ROOT %cos.0 = f32[50000,100000]{1,0} cosine(%param_0.2), metadata={op_name="jit(with_dot)/vmap()/cos" stack_frame_id=5}
}

ENTRY %main.2 (pos.1: f32[100000,3], hkl.1: f32[50000,3]) -> f32[50000] {
  %pos.1 = f32[100000,3]{1,0} parameter(0), metadata={op_name="pos"}
  %hkl.1 = f32[50000,3]{1,0} parameter(1), metadata={op_name="hkl"}
  %ynn_fusion.1 = f32[50000,100000]{1,0} fusion(%hkl.1, %pos.1), kind=kCustom, calls=%fused_computation.1, metadata={op_name="jit(with_dot)/vmap()/dot_general" stack_frame_id=4}, backend_config={"fusion_config":{"kind":"__ynn_fusion"},"outer_dimension_partitions":[]}
  %wrapped_cosine = f32[50000,100000]{1,0} fusion(%ynn_fusion.1), kind=kLoop, calls=%wrapped_cosine_computation, metadata={op_name="jit(with_dot)/vmap()/cos" stack_frame_id=5}, backend_config={"outer_dimension_partitions":["2"]}
  ROOT %ynn_fusion = f32[50000]{0} fusion(%wrapped_cosine), kind=kCustom, calls=%fused_computation, metadata={op_name="jit(with_dot)/reduce_sum" stack_frame_id=2}, backend_config={"fusion_config":{"kind":"__ynn_fusion"},"outer_dimension_partitions":[]}
}

"""

# The same example compiled for an H100 (deviceless): the GEMM fusion and the entry.
GPU_H100_EXCERPT = r"""%gemm_fusion_dot_general.1_computation (parameter_0: f32[50000,3], parameter_1: f32[100000,3]) -> f32[50000,100000] {
  %parameter_0 = f32[50000,3]{1,0} parameter(0), metadata={scheduling_name="parameter_0"}
  %parameter_1 = f32[100000,3]{1,0} parameter(1), metadata={scheduling_name="parameter_1"}
  %dot_general.0 = f32[50000,100000]{1,0} dot(%parameter_0, %parameter_1), lhs_contracting_dims={1}, rhs_contracting_dims={1}, metadata={op_name="jit(with_dot)/vmap()/dot_general" scheduling_name="dot_general.0" stack_frame_id=5}, backend_config={"sizes":["16"]}
  ROOT %cos.0 = f32[50000,100000]{1,0} cosine(%dot_general.0), metadata={op_name="jit(with_dot)/vmap()/cos" scheduling_name="cos.0" stack_frame_id=6}
}

ENTRY %main.2 (pos.1: f32[100000,3], hkl.1: f32[50000,3]) -> f32[50000] {
  %hkl.1 = f32[50000,3]{1,0} parameter(1), sharding={replicated}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@empty_mesh, [{}, {}]>"}, metadata={op_name="hkl" scheduling_name="hkl.1"}
  %pos.1 = f32[100000,3]{1,0} parameter(0), sharding={replicated}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@empty_mesh, [{}, {}]>"}, metadata={op_name="pos" scheduling_name="pos.1"}
  %gemm_fusion_dot_general.1 = f32[50000,100000]{1,0} fusion(%hkl.1, %pos.1), kind=kCustom, calls=%gemm_fusion_dot_general.1_computation, metadata={op_name="jit(with_dot)/vmap()/dot_general" scheduling_name="gemm_fusion_dot_general.1" stack_frame_id=5}, backend_config={"operation_queue_id":"0","fusion_backend_config":{"kind":"__triton_nested_gemm_fusion","block_level_fusion_config":{"num_warps":"4","output_tiles":[{"sizes":["64","32"]}],"num_ctas":1,"num_stages":1,"is_tma_allowed":false,"is_warp_specialization_allowed":false,"waves_per_eu":0}},"force_earliest_schedule":false,"reification_cost":[],"device_type":"DEVICE_TYPE_INVALID"}
  %input_reduce_fusion = f32[50000,250]{1,0} fusion(%gemm_fusion_dot_general.1), kind=kInput, calls=%fused_reduce, metadata={op_name="jit(with_dot)/reduce_sum" scheduling_name="input_reduce_fusion" stack_frame_id=3}, backend_config={"operation_queue_id":"0","force_earliest_schedule":false,"reification_cost":[],"device_type":"DEVICE_TYPE_INVALID","native_emitter_backend_config":{"type":"NATIVE_EMITTER_TYPE_INVALID","unroll_factor":0}}
  ROOT %input_reduce_fusion.1 = f32[50000]{0} fusion(%input_reduce_fusion), kind=kInput, calls=%fused_reduce.1, metadata={op_name="jit(with_dot)/reduce_sum" scheduling_name="input_reduce_fusion.1" stack_frame_id=3}, backend_config={"operation_queue_id":"0","force_earliest_schedule":false,"reification_cost":[],"device_type":"DEVICE_TYPE_INVALID","native_emitter_backend_config":{"type":"NATIVE_EMITTER_TYPE_INVALID","unroll_factor":0}}
}
"""

# The same example for a v5e (deviceless), plus one computation of a bf16 variant.
TPU_V5E_EXCERPT = r"""HloModule jit_with_dot, is_scheduled=true, entry_computation_layout={(f32[100000,3]{0,1:T(4,128)}, f32[50000,3]{0,1:T(4,128)})->f32[50000]{0:T(1024)}}, allow_spmd_sharding_propagation_to_parameters={false,false}, allow_spmd_sharding_propagation_to_output={true}, frontend_attributes={arg_layout_modes="default;default",arg_memory_spaces="0;0",out_layout_modes="default",out_memory_spaces="0",xla.sdy.meshes={empty_mesh = #sdy.mesh<[]>}}

%fused_computation.1 (param_0.5: f32[50000,3], param_1.5: f32[100000,3]) -> f32[50000] {
  %param_0.5 = f32[50000,3]{0,1:T(4,128)} parameter(0)
  %fusion.1 = f32[50000,3]{0,1:T(4,128)} fusion(%param_0.5), kind=kLoop, calls=%bitcast_fusion
  %param_1.5 = f32[100000,3]{0,1:T(4,128)S(1)} parameter(1)
  %fusion.2 = f32[100000,3]{0,1:T(4,128)} fusion(%param_1.5), kind=kLoop, calls=%bitcast_fusion.1
  %convolution.3 = f32[50000,100000]{1,0:T(8,128)} convolution(%fusion.1, %fusion.2), dim_labels=bf_oi->bf, metadata={op_name="jit(with_dot)/vmap()/dot_general" stack_frame_id=5}
  %cos.3 = f32[50000,100000]{1,0:T(8,128)} cosine(%convolution.3), metadata={op_name="jit(with_dot)/vmap()/cos" stack_frame_id=6}
  %constant.2 = f32[]{:T(128)} constant(0)
  ROOT %reduce_sum.0 = f32[50000]{0:T(1024)} reduce(%cos.3, %constant.2), dimensions={1}, to_apply=%region_0.1, metadata={op_name="jit(with_dot)/reduce_sum" stack_frame_id=3}
}

ENTRY %main.2 (pos.1: f32[100000,3], hkl.1: f32[50000,3]) -> f32[50000] {
  %pos.1 = f32[100000,3]{0,1:T(4,128)} parameter(0), sharding={replicated}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@empty_mesh, [{}, {}]>"}, metadata={op_name="pos"}
  %copy-start = (f32[100000,3]{0,1:T(4,128)S(1)}, f32[100000,3]{0,1:T(4,128)}, u32[]{:S(2)}) copy-start(%pos.1), cross_program_prefetch_index=0
  %hkl.1 = f32[50000,3]{0,1:T(4,128)} parameter(1), sharding={replicated}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@empty_mesh, [{}, {}]>"}, metadata={op_name="hkl"}
  %copy-done = f32[100000,3]{0,1:T(4,128)S(1)} copy-done(%copy-start)
  ROOT %fusion = f32[50000]{0:T(1024)} fusion(%hkl.1, %copy-done), kind=kOutput, calls=%fused_computation.1, metadata={op_name="jit(with_dot)/vmap()/dot_general" stack_frame_id=5}, backend_config={"flag_configs":[],"window_config":{"kernel_window_bounds":["1","2"],"output_window_bounds":["368","2"],"input_window_bounds":["1","23"],"estimated_cycles":"191735893","iteration_bounds":["391","17","1"],"cost_model_type":"COST_MODEL_TYPE_CLASSIC","ml_estimated_microseconds":0,"is_mask":false,"pad_output_on_minor_dim":"0","pad_input_on_minor_dim":"0","estimated_vmem_bytes":"0","estimated_bundle_count":"0","estimated_scoped_vmem_bytes":"0"},"scoped_memory_configs":[],"used_scoped_memory_configs":[{"memory_space":"1","offset":"0","size":"2400256"}],"retry_config":{"retry_count":"0"},"convolution_algorithm_config":{"emitter":"EmitAllInputFeaturePackedInSublanesOutputBatchInSublanes"},"aliasing_operands":{"lists":[]}}
}


%fused_computation.3 (param_0.10: f32[50000,3]) -> (bf16[3], bf16[50000,3]) {
  %param_0.10 = f32[50000,3]{0,1:T(4,128)} parameter(0)
  %convert_element_type.1 = bf16[50000,3]{0,1:T(4,128)(2,1)S(1)} convert(%param_0.10), metadata={op_name="jit(bf16)/convert_element_type" stack_frame_id=8}
  %constant.1 = bf16[]{:T(256)} constant(inf)
  %reduce_min.0 = bf16[3]{0:T(256)(128)(2,1)} reduce(%convert_element_type.1, %constant.1), dimensions={0}, to_apply=%region_1.2, metadata={op_name="jit(bf16)/reduce_min" stack_frame_id=4}
  ROOT %tuple = (bf16[3]{0:T(256)(128)(2,1)}, bf16[50000,3]{0,1:T(4,128)(2,1)S(1)}) tuple(%reduce_min.0, %convert_element_type.1)
}
"""

# Hand-written, not compiler output: syntax the inline samples above do not show
# (escaped quotes and braces in strings, string-valued backend_config, collectives,
# iota replica groups, dynamic dimensions, windows, comments, special floats).
SYNTHETIC_EDGE_CASES = r"""HloModule m, input_output_alias={ {0}: (0, {}, may-alias) }, entry_computation_layout={(f32[8,128]{1,0:T(8,128)S(1)}, bf16[4]{0:T(1024)(128)(2,1)})->(f32[8,128]{1,0}, token[])}, num_partitions=2

// A line comment.
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(%a, %b)
}

ENTRY %main (p0: f32[8,128], p1: bf16[4], p2: f32[<=8,?]) -> (f32[8,128], token[]) {
  %p0 = f32[8,128]{1,0:T(8,128)S(1)} parameter(0), sharding={devices=[2,1]<=[2]}
  %p1 = bf16[4]{0:T(1024)(128)(2,1)} parameter(1), metadata={op_name="jit(f)/\"quoted\" {braces} \\ back" source_file="x.py" source_line=4}
  %p2 = f32[<=8,?]{1,0} parameter(2)
  %ars = f32[8,128]{1,0} all-reduce-start(%p0), channel_id=1, replica_groups=[1,2]<=[2], use_global_device_ids=true, to_apply=%add, backend_config="{\"collective_backend_config\":{\"is_sync\":false}}"
  %ard = f32[8,128]{1,0} all-reduce-done(%ars)
  %c = f32[4]{0} constant({-inf, inf, nan, -1.5e-03})
  %big = f32[1000]{0} constant({...})
  %cc = (f32[8,128]{1,0}, u8[1024]{0}) custom-call(%ard, /*index=1*/%c), custom_call_target="__cublas$gemm", api_version=API_VERSION_TYPED_FFI, output_to_operand_aliasing={{0}: (0, {})}, control-predecessors={%big}
  %gte = f32[8,128]{1,0} get-tuple-element(%cc), index=0
  %conv = f32[8,128]{1,0} convolution(%gte, %gte), window={size=3x3 pad=1_1x-1_-1 stride=2x2}, dim_labels=b01f_01io->b01f
  %tok = token[] after-all()
  ROOT %t = (f32[8,128]{1,0}, token[]) tuple(%gte, %tok)
}
"""

# jax.jit(f).lower(...).as_text(debug_info=True) for a small lax.cond with a scatter.
STABLEHLO_COND_SCATTER = r"""#loc1 = loc("x")
#loc2 = loc("i")
#loc9 = loc("scatter-add")
#loc16 = loc("scatter-add:"(#loc9))
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf32> loc("x"), %arg1: tensor<2xi32> loc("i")) -> (tensor<8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:1] : (tensor<8xf32>) -> tensor<1xf32> loc(#loc21)
    %1 = stablehlo.reshape %0 : (tensor<1xf32>) -> tensor<f32> loc(#loc22)
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc18)
    %2 = stablehlo.compare GT, %1, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1> loc(#loc23)
    %3 = stablehlo.convert %2 : (tensor<i1>) -> tensor<i32> loc(#loc24)
    %4 = "stablehlo.case"(%3) ({
      %5 = stablehlo.negate %arg0 : tensor<8xf32> loc(#loc28)
      stablehlo.return %5 : tensor<8xf32> loc(#loc25)
    }, {
      %c = stablehlo.constant dense<0> : tensor<i32> loc(#loc25)
      %5 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2xi32> loc(#loc29)
      %6 = stablehlo.compare LT, %arg1, %5, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1> loc(#loc29)
      %c_0 = stablehlo.constant dense<8> : tensor<i32> loc(#loc25)
      %7 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<2xi32> loc(#loc30)
      %8 = stablehlo.add %arg1, %7 : tensor<2xi32> loc(#loc30)
      %9 = stablehlo.select %6, %8, %arg1 : tensor<2xi1>, tensor<2xi32> loc(#loc31)
      %10 = stablehlo.broadcast_in_dim %9, dims = [0] : (tensor<2xi32>) -> tensor<2x1xi32> loc(#loc32)
      %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32> loc(#loc25)
      %11 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<2xf32> loc(#loc32)
      %12 = "stablehlo.scatter"(%arg0, %10, %11) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
      ^bb0(%arg2: tensor<f32> loc("scatter-add:"(#loc9)), %arg3: tensor<f32> loc("scatter-add:"(#loc9))):
        %13 = stablehlo.add %arg2, %arg3 : tensor<f32> loc(#loc30)
        stablehlo.return %13 : tensor<f32> loc(#loc33)
      }) : (tensor<8xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<8xf32> loc(#loc33)
      stablehlo.return %12 : tensor<8xf32> loc(#loc25)
    }) : (tensor<i32>) -> tensor<8xf32> loc(#loc25)
    return %4 : tensor<8xf32> loc(#loc18)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("example.py":5:20 to :24)
#loc4 = loc("example.py":6:5 to :101)
#loc5 = loc("example.py":5:20 to :28)
#loc6 = loc("example.py":5:11 to :67)
#loc7 = loc("example.py":5:64 to :66)
#loc8 = loc("example.py":5:38 to :54)
#loc10 = loc("f"(#loc3))
#loc11 = loc("<module>"(#loc4))
#loc12 = loc("f"(#loc5))
#loc13 = loc("f"(#loc6))
#loc14 = loc("f.<locals>.<lambda>"(#loc7))
#loc15 = loc("f.<locals>.<lambda>"(#loc8))
#loc17 = loc(callsite(#loc10 at #loc11))
#loc18 = loc("jit(f)"(#loc11))
#loc19 = loc(callsite(#loc12 at #loc11))
#loc20 = loc(callsite(#loc13 at #loc11))
#loc21 = loc("jit(f)/slice"(#loc17))
#loc22 = loc("jit(f)/squeeze"(#loc17))
#loc23 = loc("jit(f)/gt"(#loc19))
#loc24 = loc("jit(f)/convert_element_type"(#loc20))
#loc25 = loc("jit(f)/cond"(#loc20))
#loc26 = loc(callsite(#loc14 at #loc20))
#loc27 = loc(callsite(#loc15 at #loc20))
#loc28 = loc("jit(f)/cond/branch_0_fun/neg"(#loc26))
#loc29 = loc("jit(f)/cond/branch_1_fun/lt"(#loc27))
#loc30 = loc("jit(f)/cond/branch_1_fun/add"(#loc27))
#loc31 = loc("jit(f)/cond/branch_1_fun/select_n"(#loc27))
#loc32 = loc("jit(f)/cond/branch_1_fun/broadcast_in_dim"(#loc27))
#loc33 = loc("jit(f)/cond/branch_1_fun/scatter-add"(#loc27))
"""

INLINE_HLO = {
    "cpu_with_dot": CPU_WITH_DOT,
    "gpu_h100_excerpt": GPU_H100_EXCERPT,
    "tpu_v5e_excerpt": TPU_V5E_EXCERPT,
    "synthetic_edge_cases": SYNTHETIC_EDGE_CASES,
}

Tok = tuple[_TokenType, str]


def _lexer_for(text: str) -> RegexLexer:
    """HLO text starts with ``HloModule``; anything else here is lowered MLIR."""
    return HloLexer() if text.lstrip().startswith("HloModule") else StableHloLexer()


def _assert_lexes_cleanly(lexer: RegexLexer, text: str) -> None:
    tokens = list(lexer.get_tokens_unprocessed(text))
    assert "".join(value for _, _, value in tokens) == text
    errors = [(pos, value) for pos, ttype, value in tokens if ttype in Error]
    assert not errors, f"Error tokens at {errors[:5]}"
    # Plain `Text` is what both lexers fall back to for characters no rule knows.
    unrecognised = [(pos, value) for pos, ttype, value in tokens if ttype is Text and value.strip()]
    assert not unrecognised, f"unrecognised text at {unrecognised[:5]}"
    # The path a formatter takes (newline handling, filters) must be clean too.
    assert not any(ttype in Error for ttype, _ in lexer.get_tokens(text))


def _line(lexer: RegexLexer, text: str, marker: str) -> list[Tok]:
    """The non-whitespace tokens of the first line of `text` that contains `marker`."""
    lines: list[list[Tok]] = [[]]
    for ttype, value in lexer.get_tokens(text):
        for i, part in enumerate(value.split("\n")):
            if i:
                lines.append([])
            if part:
                lines[-1].append((ttype, part))
    for toks in lines:
        if marker in "".join(v for _, v in toks):
            return [(t, v) for t, v in toks if v.strip()]
    raise AssertionError(f"no line contains {marker!r}")


def _string_values(toks: list[Tok]) -> str:
    return "".join(v for t, v in toks if t in String)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_lexes_cleanly(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    _assert_lexes_cleanly(_lexer_for(text), text)


@pytest.mark.parametrize("name", sorted(INLINE_HLO))
def test_inline_hlo_lexes_cleanly(name: str) -> None:
    _assert_lexes_cleanly(HloLexer(), INLINE_HLO[name])


def test_stablehlo_lexes_cleanly() -> None:
    _assert_lexes_cleanly(StableHloLexer(), STABLEHLO_COND_SCATTER)


def test_instruction_tokens() -> None:
    toks = _line(HloLexer(), CPU_WITH_DOT, "ROOT %dot_general.0")
    assert toks[:16] == [
        (Keyword, "ROOT"),
        (Name.Variable, "%dot_general.0"),
        (Operator, "="),
        (Keyword.Type, "f32[50000,100000]"),
        (Layout, "{1,0}"),
        (Name.Builtin, "dot"),
        (Punctuation, "("),
        (Name.Variable, "%param_0.1"),
        (Punctuation, ","),
        (Name.Variable, "%param_1.1"),
        (Punctuation, ")"),
        (Punctuation, ","),
        (Name.Attribute, "lhs_contracting_dims"),
        (Operator, "="),
        (Punctuation, "{"),
        (Number.Integer, "1"),
    ]
    assert toks[-10:] == [
        (Name.Attribute, "metadata"),
        (Operator, "="),
        (Punctuation, "{"),
        (Name.Attribute, "op_name"),
        (Operator, "="),
        (String.Double, '"jit(with_dot)/vmap()/dot_general"'),
        (Name.Attribute, "stack_frame_id"),
        (Operator, "="),
        (Number.Integer, "4"),
        (Punctuation, "}"),
    ]


def test_opcodes_shapes_and_names_are_distinct() -> None:
    toks = _line(HloLexer(), CPU_WITH_DOT, "%ynn_fusion.1 = ")
    assert toks[:6] == [
        (Name.Variable, "%ynn_fusion.1"),
        (Operator, "="),
        (Keyword.Type, "f32[50000,100000]"),
        (Layout, "{1,0}"),
        (Name.Builtin, "fusion"),
        (Punctuation, "("),
    ]
    assert (Name.Constant, "kCustom") in toks
    assert (Name.Function, "%fused_computation.1") in toks  # calls=
    kinds = {ttype for ttype, _ in toks}
    assert {Name.Builtin, Keyword.Type, Layout, Name.Variable, Name.Function, Name.Attribute} <= kinds
    assert len({Name.Builtin, Keyword.Type, Name.Variable, Name.Function}) == 4
    assert Layout in Keyword.Type  # styles that colour types colour layouts too


def test_module_header_and_source_tables() -> None:
    lexer = HloLexer()
    head = _line(lexer, CPU_WITH_DOT, "HloModule")
    assert head[:6] == [
        (Keyword, "HloModule"),
        (Name.Namespace, "jit_with_dot"),
        (Punctuation, ","),
        (Name.Attribute, "is_scheduled"),
        (Operator, "="),
        (Keyword.Constant, "true"),
    ]
    assert (Keyword.Type, "f32[100000,3]") in head
    assert (Operator, "->") in head
    assert _line(lexer, CPU_WITH_DOT, "FileNames") == [(Keyword, "FileNames")]
    assert _line(lexer, CPU_WITH_DOT, '2 "example.py"') == [(Number.Integer, "2"), (String.Double, '"example.py"')]
    row = _line(lexer, CPU_WITH_DOT, "{file_name_id=2 function_name_id=3")
    assert row[:5] == [
        (Number.Integer, "4"),
        (Punctuation, "{"),
        (Name.Attribute, "file_name_id"),
        (Operator, "="),
        (Number.Integer, "2"),
    ]


def test_computation_definitions_and_references() -> None:
    lexer = HloLexer()
    sig = _line(lexer, CPU_WITH_DOT, "%fused_computation.1 (")
    assert sig == [
        (Name.Function, "%fused_computation.1"),
        (Punctuation, "("),
        (Name.Variable, "param_0.1"),
        (Punctuation, ":"),
        (Keyword.Type, "f32[50000,3]"),
        (Punctuation, ","),
        (Name.Variable, "param_1.1"),
        (Punctuation, ":"),
        (Keyword.Type, "f32[100000,3]"),
        (Punctuation, ")"),
        (Operator, "->"),
        (Keyword.Type, "f32[50000,100000]"),
        (Punctuation, "{"),
    ]
    entry = _line(lexer, CPU_WITH_DOT, "ENTRY")
    assert entry[:2] == [(Keyword, "ENTRY"), (Name.Function, "%main.2")]
    reduce = _line(lexer, CPU_WITH_DOT, "ROOT %reduce_sum.0")
    assert (Name.Function, "%region_0.1") in reduce  # to_apply=
    edge = _line(lexer, SYNTHETIC_EDGE_CASES, "%ars = ")
    assert (Name.Builtin, "all-reduce-start") in edge
    assert (Name.Function, "%add") in edge


def test_gpu_backend_config_json() -> None:
    toks = _line(HloLexer(), GPU_H100_EXCERPT, "%gemm_fusion_dot_general.1 = ")
    i = toks.index((Name.Attribute, "backend_config"))
    assert toks[i + 1 : i + 4] == [(Operator, "="), (Punctuation, "{"), (Name.Tag, '"operation_queue_id"')]
    assert (Name.Tag, '"fusion_backend_config"') in toks
    j = toks.index((Name.Tag, '"kind"'))
    assert toks[j + 1 : j + 3] == [(Punctuation, ":"), (String.Double, '"__triton_nested_gemm_fusion"')]
    assert (Keyword.Constant, "false") in toks
    assert toks[-1] == (Punctuation, "}")


def test_tpu_tiled_layouts() -> None:
    lexer = HloLexer()
    copy = _line(lexer, TPU_V5E_EXCERPT, "%copy-start = ")
    assert copy[:5] == [
        (Name.Variable, "%copy-start"),
        (Operator, "="),
        (Punctuation, "("),
        (Keyword.Type, "f32[100000,3]"),
        (Layout, "{0,1:T(4,128)S(1)}"),
    ]
    assert (Layout, "{:S(2)}") in copy
    assert (Name.Builtin, "copy-start") in copy
    tup = _line(lexer, TPU_V5E_EXCERPT, "ROOT %tuple = ")
    assert (Layout, "{0:T(256)(128)(2,1)}") in tup
    conv = _line(lexer, TPU_V5E_EXCERPT, "dim_labels=")
    i = conv.index((Name.Attribute, "dim_labels"))
    assert conv[i + 1 : i + 5] == [(Operator, "="), (Name, "bf_oi"), (Operator, "->"), (Name, "bf")]


def test_strings_comments_and_numbers() -> None:
    lexer = HloLexer()
    p1 = _line(lexer, SYNTHETIC_EDGE_CASES, "%p1 = ")
    assert (Layout, "{0:T(1024)(128)(2,1)}") in p1
    # A quoted string with escaped quotes and braces stays one string, braces and all.
    i = p1.index((Name.Attribute, "op_name"))
    j = p1.index((Name.Attribute, "source_file"))
    assert all(ttype in String for ttype, _ in p1[i + 2 : j])
    assert _string_values(p1[i + 2 : j]) == r'"jit(f)/\"quoted\" {braces} \\ back"'
    assert (String.Escape, r"\"") in p1
    ars = _line(lexer, SYNTHETIC_EDGE_CASES, "%ars = ")
    k = ars.index((Name.Attribute, "backend_config"))
    assert all(ttype in String for ttype, _ in ars[k + 2 :])
    assert (Comment.Single, "// A line comment.") in _line(lexer, SYNTHETIC_EDGE_CASES, "// A line")
    cc = _line(lexer, SYNTHETIC_EDGE_CASES, "%cc = ")
    assert (Comment.Multiline, "/*index=1*/") in cc
    assert (Name.Constant, "API_VERSION_TYPED_FFI") in cc
    assert (String.Double, '"__cublas$gemm"') in cc
    consts = _line(lexer, SYNTHETIC_EDGE_CASES, "%c = ")
    assert [v for t, v in consts if t in Number] == ["-inf", "inf", "nan", "-1.5e-03"]
    assert (Keyword.Type, "f32[<=8,?]") in _line(lexer, SYNTHETIC_EDGE_CASES, "%p2 = ")
    window = _line(lexer, SYNTHETIC_EDGE_CASES, "window=")
    assert (Number.Integer, "1_1x-1_-1") in window


def test_stablehlo_tokens() -> None:
    lexer = StableHloLexer()
    func = _line(lexer, STABLEHLO_COND_SCATTER, "func.func public @main")
    assert func[:6] == [
        (Keyword, "func.func"),
        (Keyword, "public"),
        (Name.Function, "@main"),
        (Punctuation, "("),
        (Name.Variable, "%arg0"),
        (Punctuation, ":"),
    ]
    assert (Keyword.Type, "tensor<8xf32>") in func
    assert (Name.Attribute, "jax.result_info") in func
    cmp = _line(lexer, STABLEHLO_COND_SCATTER, "stablehlo.compare GT")
    assert cmp[:5] == [
        (Name.Variable, "%2"),
        (Operator, "="),
        (Name.Builtin, "stablehlo.compare"),
        (Name.Constant, "GT"),
        (Punctuation, ","),
    ]
    assert (Keyword, "loc") in cmp
    assert (Name.Label, "#loc23") in cmp
    scatter = _line(lexer, STABLEHLO_COND_SCATTER, '"stablehlo.scatter"')
    assert (Name.Builtin, '"stablehlo.scatter"') in scatter
    assert (Name.Decorator, "#stablehlo.scatter") in scatter
    assert (Name.Attribute, "scatter_dims_to_operand_dims") in scatter
    assert _line(lexer, STABLEHLO_COND_SCATTER, "^bb0")[0] == (Name.Label, "^bb0")
    cst = _line(lexer, STABLEHLO_COND_SCATTER, "%cst = ")
    assert cst[2:6] == [
        (Name.Builtin, "stablehlo.constant"),
        (Keyword, "dense"),
        (Punctuation, "<"),
        (Number.Float, "0.000000e+00"),
    ]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('%{}()[]<>"\\/*=,:-.#@^!x0f32 \n\tkTSabz_é'))) | st.text())
def test_arbitrary_text_never_errors(text: str) -> None:
    for lexer in (HloLexer(), StableHloLexer()):
        tokens = list(lexer.get_tokens_unprocessed(text))
        assert "".join(value for _, _, value in tokens) == text
        assert not any(ttype in Error for _, ttype, _ in tokens)


def _reference_tokens(text: str) -> list[tuple[int, _TokenType, str]]:
    """What `RegexLexer` itself makes of `HloLexer.tokens`, the rule table."""
    return list(RegexLexer.get_tokens_unprocessed(HloLexer(), text))


@pytest.mark.parametrize("text", [*(p.read_text(encoding="utf-8") for p in FIXTURES), *INLINE_HLO.values()])
def test_hlo_scanner_matches_rule_table(text: str) -> None:
    """`HloLexer`'s fast path gives exactly the tokens its rule table specifies."""
    assert list(HloLexer().get_tokens_unprocessed(text)) == _reference_tokens(text)


# Pieces of HLO that exercise every rule and the edges between them.
# fmt: off
_HLO_PIECES = [
    "HloModule", "HloModule m", "ENTRY", "ENTRY %main", "ROOT", "FileNames", "StackFrames", "%", "%x.1",
    "f32[8,3]", "{1,0:T(8,128)}", "pred[]", "bf16[", "f8e4m3fn[2]", "calls=", "to_apply=%r", "branch_computations={",
    "inf", "-inf", "nan", "0x1F", "3x3", "1_2", "-1_-1", "0_1x0_1", "1.5e3", "1e5", ".5", "...", "->", "==", "=",
    "!=", "<=", '"', "\\", '\\"', '"a"', '"k":', "\n", " ", "\t", ":", ": ", "(", ")", "{", "}", "[", "]", ",",
    "kInput", "EQ", "EQ.x", "é", "٣", "/*", "*/", "//", "#sdy", "#", "true", "null", "param_0.1", "-", ".", "x",
    "_", "a-b", "get-tuple-element(", "fusion(", "metadata=", "a.b", "Abc", "k", "$", "'", "?", "`", "\r", "0", "12",
]
# fmt: on


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_HLO_PIECES), max_size=40).map("".join) | st.text())
def test_hlo_scanner_matches_rule_table_on_any_text(text: str) -> None:
    assert list(HloLexer().get_tokens_unprocessed(text)) == _reference_tokens(text)


def test_hlo_lexer_other_start_state() -> None:
    """A caller's own `stack` goes through the rule table."""
    toks = list(HloLexer().get_tokens_unprocessed('a\\"b" x', stack=("root", "string")))
    assert toks == [
        (0, String.Double, "a"),
        (1, String.Escape, '\\"'),
        (3, String.Double, "b"),
        (4, String.Double, '"'),
        (5, Text.Whitespace, " "),
        (6, Name, "x"),
    ]


def test_lexer_metadata() -> None:
    assert HloLexer.name == "HLO"
    assert list(HloLexer.aliases) == ["hlo"]
    assert "*.hlo" in HloLexer.filenames
    assert StableHloLexer.name == "StableHLO"
    assert list(StableHloLexer.aliases) == ["stablehlo", "mhlo"]
    assert HloLexer.analyse_text(CPU_WITH_DOT) == 1.0
    assert HloLexer.analyse_text(STABLEHLO_COND_SCATTER) == 0.0
    assert StableHloLexer.analyse_text(STABLEHLO_COND_SCATTER) > 0.0


def _entry_point_installed(name: str) -> bool:
    return any(
        ep.name == name and ep.value.startswith("sphinx_jaxhlo.render.lexer:")
        for ep in importlib.metadata.entry_points(group="pygments.lexers")
    )


@pytest.mark.parametrize(
    ("alias", "entry_point", "cls"),
    [("hlo", "hlo", HloLexer), ("stablehlo", "stablehlo", StableHloLexer), ("mhlo", "stablehlo", StableHloLexer)],
)
def test_get_lexer_by_name(alias: str, entry_point: str, cls: type[RegexLexer]) -> None:
    if not _entry_point_installed(entry_point):
        pytest.skip(f"pygments.lexers entry point {entry_point!r} not installed yet (pip install -e .)")
    assert isinstance(get_lexer_by_name(alias), cls)


def test_get_lexer_for_filename() -> None:
    if not _entry_point_installed("hlo"):
        pytest.skip("pygments.lexers entry point 'hlo' not installed yet (pip install -e .)")
    assert isinstance(get_lexer_for_filename("module.hlo"), HloLexer)


def _classed_characters(html_text: str) -> list[tuple[str, str]]:
    """Each character of highlighted HTML with the class of the span around it
    (a line break as unclassed: Pygments closes a span at the end of a line)."""
    import html
    import re

    out: list[tuple[str, str]] = []
    for m in re.finditer(r'<span class="([^"]*)">(.*?)</span>|([^<]+)', html_text, re.S):
        cls, text = (m.group(1), m.group(2)) if m.group(1) is not None else ("", m.group(3))
        out.extend(("" if ch == "\n" else cls, ch) for ch in html.unescape(text))
    return out


@pytest.mark.parametrize("path", [p for p in FIXTURES if p.suffix == ".txt"], ids=lambda p: p.name)
def test_page_scripts_get_the_spans_of_pygments_html(path: Path) -> None:
    """A page's module text arrives as [class, text, ...] for its script to build:
    the same classes over the same characters as Pygments' HTML of it."""
    from sphinx_jaxhlo.render.nodes import highlighted_html, highlighted_spans

    text = path.read_text(encoding="utf-8") + '\n// <b>&amp;</b> "quoted" \'single\'\n'
    spans = highlighted_spans(text, "hlo")
    assert spans is not None and len(spans) % 2 == 0
    classes = set(spans[0::2])
    assert {"nb", "kt", "p"} <= classes, classes
    assert "".join(spans[1::2]) == text
    rebuilt = [(("" if ch == "\n" else cls), ch) for cls, value in zip(spans[0::2], spans[1::2], strict=True) for ch in value]
    assert rebuilt == _classed_characters(highlighted_html(text, "hlo"))


def test_page_scripts_get_plain_text_past_the_limit() -> None:
    from sphinx_jaxhlo.render.nodes import HIGHLIGHT_LIMIT, highlighted_spans

    assert highlighted_spans("HloModule m\n" + " " * HIGHLIGHT_LIMIT, "hlo") is None


@pytest.mark.parametrize("path", [p for p in FIXTURES if p.suffix == ".txt"], ids=lambda p: p.name)
def test_page_scripts_get_exactly_the_tokens_pygments_gives(path: Path) -> None:
    """The spans come from the lexer's own scan (``HloLexer.class_spans``), not from
    Pygments' token stream: the same tokens, split at the same places, whatever the
    text holds (escaped strings, computation lists, line ends of any kind, no last newline)."""
    from sphinx_jaxhlo.render.nodes import _classes, _highlighter, highlighted_spans

    lexer, formatter = _highlighter("hlo")
    classes = _classes(formatter)
    body = path.read_text(encoding="utf-8")
    for text in (body, "\n\n" + body.replace("\n", "\r\n") + 'x = "a\\"b\n', body.rstrip("\n"),
                 'branch_computations={%a, %b}, s="unterminated\\'):
        expected = [part for ttype, value in lexer.get_tokens(text) for part in (classes[ttype], value)]
        assert highlighted_spans(text, "hlo") == expected


@settings(deadline=None)
@given(st.lists(st.sampled_from(_HLO_PIECES), max_size=40).map("".join) | st.text())
def test_class_spans_are_the_scanner_tokens_on_any_text(text: str) -> None:
    class Named(dict):  # type: ignore[type-arg]
        def __missing__(self, ttype: _TokenType) -> str:
            self[ttype] = str(ttype)
            return str(ttype)

    class_of = Named()
    expected = [part for _, ttype, value in HloLexer().get_tokens_unprocessed(text) for part in (class_of[ttype], value)]
    assert HloLexer().class_spans(text, class_of) == expected
