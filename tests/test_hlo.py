"""The HLO text parser, on stored real modules from every target and on
hand-written snippets of the syntax that breaks naive parsers."""

# ruff: noqa: E501  (lines of HLO text are long)
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from sphinx_jaxhlo.hlo.model import HloModule, HloParseError, Shape, SourceLocation
from sphinx_jaxhlo.hlo.parse import parse_module

sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
from bench import hlo_module_text

DATA = Path(__file__).parent / "data" / "hlo"
MODULES = sorted(p for p in DATA.glob("*.txt") if not p.name.endswith(".error.txt"))


def load(name: str) -> HloModule:
    """Parse a stored fixture, skipping the test when it is absent."""
    path = DATA / name
    if not path.exists():
        pytest.skip(f"fixture tests/data/hlo/{name} is absent (regenerate the stored HLO fixtures)")
    return parse_module(path.read_text())


# -- every stored module -----------------------------------------------------


@pytest.mark.parametrize(
    "path",
    MODULES or [pytest.param(None, marks=pytest.mark.skip(reason="no stored modules in tests/data/hlo"))],
    ids=lambda p: p.name if p else "none",
)
def test_every_stored_module_parses(path: Path) -> None:
    text = path.read_text()
    module = parse_module(text)
    entry = module.entry_computation
    assert entry.is_entry
    assert sum(c.is_entry for c in module.computations.values()) == 1
    assert entry.root_instruction.is_root
    # The entry's parameters are the module's arguments, in order.
    assert [p.parameter_number for p in entry.parameters] == list(range(len(entry.parameters)))
    instructions = [i for c in module.computations.values() for i in c.instructions]
    assert len(instructions) == len(re.findall(r"^\s+(?:ROOT )?%\S+ = ", text, re.M))
    for comp in module.computations.values():
        for inst in comp.instructions:
            for callee in inst.called_computations:
                assert callee in module.computations
            if inst.opcode == "fusion":
                assert inst.fusion_kind in ("kLoop", "kInput", "kOutput", "kCustom")
            assert str(inst.shape) in _strip_layouts(text)


def _strip_layouts(text: str) -> str:
    return re.sub(r"\{[^{}]*\}", "", re.sub(r"/\*index=\d+\*/", "", text))


# -- concrete facts about the seed modules -------------------------------------


def test_gpu_with_dot_gemm_fusion() -> None:
    module = load("gpu_h100__with_dot.txt")
    entry = module.entry_computation
    gemm = next(i for i in entry.instructions if i.custom_kind == "__triton_nested_gemm_fusion")
    assert gemm.opcode == "fusion"
    assert gemm.fusion_kind == "kCustom"
    assert gemm.shape == Shape("f32", (50000, 100000), layout="1,0")
    assert str(gemm.shape) == "f32[50000,100000]"
    assert gemm.shape.bytes == 20_000_000_000
    assert gemm.backend_config is not None
    assert gemm.backend_config["fusion_backend_config"]["kind"] == "__triton_nested_gemm_fusion"
    assert gemm.op_name is not None and gemm.op_name.endswith("dot_general")
    body = module.computations[gemm.called_computations[0]]
    assert "dot" in [i.opcode for i in body.instructions]
    assert not body.is_entry


def test_gpu_explicit_input_fusion() -> None:
    module = load("gpu_h100__explicit.txt")
    entry = module.entry_computation
    fusion = entry["input_reduce_fusion"]
    assert fusion.fusion_kind == "kInput"
    assert fusion.custom_kind is None
    body = module.computations[fusion.called_computations[0]]
    assert {"multiply", "cosine", "reduce"} <= {i.opcode for i in body.instructions}
    reduce = next(i for i in body.instructions if i.opcode == "reduce")
    assert reduce.called_computations and reduce.attributes["to_apply"].lstrip("%") in module.computations
    # Parameters come from the module's arguments.
    assert [str(p.shape) for p in entry.parameters] == ["f32[100000,3]", "f32[50000,3]"]


def test_cpu_ynn_fusion() -> None:
    module = load("cpu__with_dot.txt")
    entry = module.entry_computation
    assert entry.root_instruction.custom_kind == "__ynn_fusion"
    assert entry.root_instruction.fusion_kind == "kCustom"
    assert str(entry.root_instruction.shape) == "f32[50000]"
    assert module.attributes["entry_computation_layout"].startswith("{(f32[100000,3]")


def test_tpu_tiled_layouts() -> None:
    module = load("tpu_v5e__with_dot.txt")
    entry = module.entry_computation
    layouts = [i.shape.layout for c in module.computations.values() for i in c.instructions if i.shape.layout]
    assert any(":T(" in layout for layout in layouts)
    fusion = next(i for i in entry.instructions if i.opcode == "fusion")
    assert fusion.fusion_kind == "kOutput"
    assert str(fusion.shape) == "f32[50000]"
    assert fusion.shape.bytes == 200_000


@pytest.mark.parametrize("name", ["cpu__with_dot.txt", "gpu_h100__with_dot.txt", "tpu_v5e__with_dot.txt"])
def test_stack_frames_resolve_to_the_example(name: str) -> None:
    module = load(name)
    # The dot of the seed is traced from the lambda inside with_dot.
    dots = [
        i
        for c in module.computations.values()
        for i in c.instructions
        if i.op_name and i.op_name.endswith("dot_general") and i.stack_frame_id
    ]
    assert dots
    frames = module.frames(dots[0].stack_frame_id)
    assert frames[0].file.endswith("example.py")
    assert "lambda" in frames[0].function or "with_dot" in frames[0].function
    assert dots[0].source_file == frames[0].file
    assert dots[0].source_line == frames[0].line
    # Outer frames follow, innermost first; no frame repeats.
    assert len(set(frames)) == len(frames)


# -- hand-written syntax -------------------------------------------------------

TRICKY = r"""HloModule tricky.1, is_scheduled=true, entry_computation_layout={(f32[8,128]{1,0:T(8,128)S(1)}, (s32[], f32[3]{0}))->f32[]}, frontend_attributes={fingerprint="a{b}\"c"}

FileNames
1 "lib/wrap\"per.py"
2 "/home/me/docs/example.py"

FunctionNames
1 "<module>"
2 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=2}
2 {file_name_id=2 function_name_id=2 line=7 end_line=7 column=4 end_column=9}

StackFrames
1 {file_location_id=2 parent_frame_id=1}
2 {file_location_id=1 parent_frame_id=2}


%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b), metadata={op_name="jit(f)/\"odd{name}\"" stack_frame_id=1}
}

%fused (p0: f32[8,128], p1: f32[3]) -> (f32[8], f32[8,128]) {
  %p0 = f32[8,128]{1,0:T(8,128)S(1)} parameter(0)
  %p1 = f32[3]{0} parameter(1)
  %c = f32[] constant(0)
  %cos = f32[8,128]{1,0:T(8,128)} cosine(%p0), metadata={op_name="jit(f)/cos" source_file="/home/me/docs/example.py" source_line=12}
  %r = f32[8]{0} reduce(%cos, %c), dimensions={1}, to_apply=%add
  ROOT %t = (f32[8]{0}, f32[8,128]{1,0}) tuple(%r, %cos)
}

%cond (s: (s32[], f32[3])) -> pred[] {
  %s = (s32[], f32[3]{0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (s.1: (s32[], f32[3])) -> (s32[], f32[3]) {
  %s.1 = (s32[], f32[3]{0}) parameter(0)
  %i.1 = s32[] get-tuple-element(%s.1), index=0
  %x = f32[3]{0} get-tuple-element(%s.1), index=1
  %one = s32[] constant(1)
  %next = s32[] add(%i.1, %one)
  %y = f32[3]{0} sine(%x)
  ROOT %out = (s32[], f32[3]{0}) tuple(%next, %y)
}

%branch0 (q: f32[3]) -> f32[3] {
  ROOT %q = f32[3]{0} parameter(0)
}

%branch1 (q.1: f32[3]) -> f32[3] {
  %q.1 = f32[3]{0} parameter(0)
  ROOT %neg = f32[3]{0} negate(%q.1)
}

%wrapped (w: f32[3]) -> f32[3], execution_thread="host" {
  %w = f32[3]{0} parameter(0)
  ROOT %e = f32[3]{0} exponential(%w)
}

ENTRY %main (x: f32[8,128], st: (s32[], f32[3])) -> f32[] {
  %x = f32[8,128]{1,0:T(8,128)S(1)} parameter(0), sharding={devices=[2,1]0,1}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\"x\"}, {}]>"}
  %st = (s32[], f32[3]{0}) parameter(1), metadata={op_name="st"}
  %lit = s32[2,2]{1,0} constant({ {1, 2}, {3, 4} })
  %vec = f32[3]{0} constant({1, -2.5, inf})
  %tok = token[] after-all()
  %dyn = f32[<=10,3]{1,0} custom-call(%x), custom_call_target="Pad\"ded", backend_config="{\"note\": \"a } brace\", \"n\": [1, {\"k\": 2}]}", api_version=API_VERSION_STATUS_RETURNING
  %st.x = f32[3]{0} get-tuple-element(%st), index=1
  %f = (f32[8]{0}, f32[8,128]{1,0}) fusion(%x, %st.x), kind=kInput, calls=%fused, metadata={op_name="jit(f)/reduce_sum" stack_frame_id=2}, backend_config={"fusion_backend_config":{"kind":"__custom","note":"} { \" ]"},"list":[{"a":"b"}]}
  %r8 = f32[8]{0} get-tuple-element(%f), index=0
  %loop = (s32[], f32[3]{0}) while(%st), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"10"}}
  %y = f32[3]{0} get-tuple-element(%loop), index=1
  %pick = s32[] constant(1)
  %br = f32[3]{0} conditional(%pick, %y, %y), branch_computations={%branch0, %branch1}
  %as = ((f32[3]{0}), f32[3]{0}, s32[]) async-start(%br), async_execution_thread="host", calls=%wrapped
  %ad = f32[3]{0} async-done(%as)
  %ar = f32[8]{0} all-reduce(%r8), channel_id=1, replica_groups=[1,2]<=[2], use_global_device_ids=true, to_apply=%add
  %nested = ((f32[], s32[]), f32[3]{0}, /*index=2*/token[]) tuple(%c2, %ad, %tok)
  %c2 = (f32[], s32[]) tuple(%z, %pick)
  %z = f32[] reduce(%ar, %zero), dimensions={0}, to_apply=%add
  %zero = f32[] constant(0)
  ROOT %res = f32[] add(%z, %z), metadata={op_name="jit(f)/add" stack_frame_id=2}
}
"""


@pytest.fixture(scope="module")
def tricky() -> HloModule:
    return parse_module(TRICKY)


def test_header_and_tables(tricky: HloModule) -> None:
    assert tricky.name == "tricky.1"
    assert tricky.entry == "main"
    assert tricky.attributes["frontend_attributes"] == r'{fingerprint="a{b}\"c"}'
    assert tricky.attributes["is_scheduled"] == "true"
    assert tricky.file_names == {1: 'lib/wrap"per.py', 2: "/home/me/docs/example.py"}
    assert list(tricky.computations) == ["add", "fused", "cond", "body", "branch0", "branch1", "wrapped", "main"]


def test_stack_frames_innermost_first(tricky: HloModule) -> None:
    # Printed parent ids are the proto's plus one: 1 means no parent.
    assert tricky.frames(1) == [SourceLocation("/home/me/docs/example.py", 7, "f", 4, 7, 9)]
    assert tricky.frames(2) == [
        SourceLocation('lib/wrap"per.py', 3, "<module>", 1, 3, 2),
        SourceLocation("/home/me/docs/example.py", 7, "f", 4, 7, 9),
    ]
    assert tricky.frames(99) == []
    assert tricky.frames(None) == []
    res = tricky.entry_computation["res"]
    assert (res.source_file, res.source_line) == ('lib/wrap"per.py', 3)


def test_metadata_with_quotes_and_source_line(tricky: HloModule) -> None:
    s = tricky["add"]["s"]
    assert s.op_name == 'jit(f)/"odd{name}"'
    assert s.stack_frame_id == 1
    cos = tricky["fused"]["cos"]
    assert (cos.source_file, cos.source_line) == ("/home/me/docs/example.py", 12)
    assert tricky.source_locations(cos) == [SourceLocation("/home/me/docs/example.py", 12)]


def test_tiled_layouts_and_shapes(tricky: HloModule) -> None:
    x = tricky.entry_computation["x"]
    assert x.shape == Shape("f32", (8, 128), layout="1,0:T(8,128)S(1)")
    assert str(x.shape) == "f32[8,128]"
    assert x.shape.bytes == 8 * 128 * 4
    assert x.attributes["sharding"] == "{devices=[2,1]0,1}"
    dyn = tricky.entry_computation["dyn"]
    assert str(dyn.shape) == "f32[<=10,3]"
    assert dyn.shape.dims == (10, 3) and dyn.shape.dynamic == (True, False)
    tok = tricky.entry_computation["tok"]
    assert str(tok.shape) == "token[]" and tok.shape.bytes == 0
    nested = tricky.entry_computation["nested"]
    assert str(nested.shape) == "((f32[], s32[]), f32[3], token[])"
    assert nested.shape.bytes == 4 + 4 + 12
    assert nested.shape.elements == 1 + 1 + 3 + 1
    assert [str(s) for s in nested.shape.leaves()] == ["f32[]", "s32[]", "f32[3]", "token[]"]
    assert nested.operands == ["c2", "ad", "tok"]


def test_literals(tricky: HloModule) -> None:
    entry = tricky.entry_computation
    assert entry["lit"].literal == "{ {1, 2}, {3, 4} }"
    assert entry["lit"].operands == []
    assert entry["vec"].literal == "{1, -2.5, inf}"
    assert entry["zero"].literal == "0"


def test_backend_configs(tricky: HloModule) -> None:
    entry = tricky.entry_computation
    f = entry["f"]
    assert f.fusion_kind == "kInput"
    assert f.custom_kind == "__custom"
    assert f.backend_config == {"fusion_backend_config": {"kind": "__custom", "note": '} { " ]'}, "list": [{"a": "b"}]}
    dyn = entry["dyn"]
    assert dyn.custom_call_target == 'Pad"ded'
    assert dyn.custom_kind == 'Pad"ded'
    # An escaped-string backend_config is decoded too.
    assert dyn.backend_config == {"note": "a } brace", "n": [1, {"k": 2}]}
    assert dyn.attributes["api_version"] == "API_VERSION_STATUS_RETURNING"


def test_control_flow_and_called_computations(tricky: HloModule) -> None:
    entry = tricky.entry_computation
    assert entry["loop"].called_computations == ["cond", "body"]
    assert entry["br"].called_computations == ["branch0", "branch1"]
    assert entry["as"].called_computations == ["wrapped"]
    assert entry["ar"].called_computations == ["add"]
    assert entry["ar"].attributes["replica_groups"] == "[1,2]<=[2]"
    assert entry["f"].called_computations == ["fused"]
    assert tricky["wrapped"].attributes == {"execution_thread": '"host"'}
    assert str(tricky["body"].result_shape) == "(s32[], f32[3])"
    assert tricky["branch0"].root == "q"


def test_roots_parameters_users(tricky: HloModule) -> None:
    entry = tricky.entry_computation
    assert entry.root == "res" and entry["res"].is_root
    assert [p.name for p in entry.parameters] == ["x", "st"]
    assert entry.users("z") == ["c2", "res"]
    assert entry.users("res") == []
    assert entry["st.x"].tuple_index == 1
    assert "x" in entry and "nope" not in entry
    assert entry.get("nope") is None
    assert len(entry) == len(entry.instructions)


def test_operands_with_index_comments_and_long_form() -> None:
    text = """HloModule m
ENTRY %e (a: f32[2]) -> (f32[2], f32[2], f32[2], f32[2], f32[2], f32[2]) {
  %a = f32[2]{0} parameter(0)
  ROOT %t = (f32[2]{0}, f32[2]{0}, f32[2]{0}, f32[2]{0}, f32[2]{0}, /*index=5*/f32[2]{0}) tuple(f32[2]{0} %a, %a, %a, %a, %a, /*index=5*/%a)
}
"""
    module = parse_module(text)
    assert module.entry_computation["t"].operands == ["a"] * 6
    assert module.entry_computation["t"].shape.elements == 12


def test_short_form_without_percent_or_signature() -> None:
    text = """HloModule short, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

add_F32.v3 {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT add = f32[] add(lhs, rhs)
}

ENTRY MapBinaryAdder.v3 {
  param0 = f32[4]{0} parameter(0)
  ROOT map = f32[4]{0} map(param0, param0), dimensions={0}, to_apply=add_F32.v3
}
"""
    module = parse_module(text)
    assert module.entry == "MapBinaryAdder.v3"
    assert module.entry_computation["map"].called_computations == ["add_F32.v3"]
    assert module.entry_computation["map"].operands == ["param0", "param0"]


def test_without_entry_keyword_the_last_computation_is_the_entry() -> None:
    module = parse_module("HloModule m\n%c { ROOT %x = f32[] constant(1) }\n%d {\n  ROOT %y = f32[] constant(2)\n}\n")
    assert module.entry == "d"
    assert module.entry_computation.is_entry


@pytest.mark.parametrize(
    ("dtype", "dims", "size"),
    [
        ("pred", (3,), 3),
        ("s4", (3,), 2),
        ("u4", (4,), 2),
        ("s8", (5,), 5),
        ("bf16", (2, 3), 12),
        ("f16", (1,), 2),
        ("f32", (), 4),
        ("s64", (2,), 16),
        ("c64", (2,), 16),
        ("c128", (1,), 16),
        ("f8e4m3fn", (7,), 7),
        ("f8e5m2", (7,), 7),
        ("token", (), 0),
    ],
)
def test_shape_bytes(dtype: str, dims: tuple[int, ...], size: int) -> None:
    dim_text = ",".join(map(str, dims))
    module = parse_module(f"HloModule m\nENTRY %e {{\n  ROOT %p = {dtype}[{dim_text}] parameter(0)\n}}\n")
    assert module.entry_computation["p"].shape.bytes == size


# -- errors ------------------------------------------------------------------

GOOD = """HloModule m
ENTRY %e (a: f32[2]) -> f32[2] {
  %a = f32[2]{0} parameter(0)
  ROOT %n = f32[2]{0} negate(%a), metadata={op_name="x"}
}
"""


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("", 1, "empty"),
        ("   \n\n", 1, "empty"),
        ("HloMod m\n", 1, "HloModule"),
        (GOOD.replace("f32[2]{0} negate", "q32[2]{0} negate"), 4, "element type"),
        (GOOD.replace("negate(%a)", "negate(%b)"), 4, "unknown"),
        (GOOD.replace('op_name="x"', 'op_name="x'), 4, "string"),
        (GOOD.replace("negate(%a)", "negate(%a"), 4, ""),
        (GOOD.replace("%n = ", "%n "), 4, "'='"),
        (GOOD.replace("ROOT %n", "ROOT %a"), 4, "duplicate"),
        (GOOD.replace("  %a = f32[2]{0} parameter(0)", "  ROOT %a = f32[2]{0} parameter(0)"), 4, "ROOT"),
        (GOOD.replace("parameter(0)", "parameter(x)"), 3, "number"),
        (GOOD.replace("negate(%a)", "fusion(%a), calls=%nowhere, kind=kLoop"), 4, "unknown computation"),
        (GOOD.replace("negate(%a)", "fusion(%a), kind=kLoop"), 4, "calls"),
        (GOOD.replace("negate(%a)", "call(%a), to_apply=%e"), 4, "calls it back"),
        (GOOD.replace("negate(%a)", "get-tuple-element(%a)"), 4, "index"),
        (GOOD.replace("f32[2]{0} negate", "f32[2,x]{0} negate"), 4, "dimension"),
        (GOOD.rsplit("}", 1)[0], 4, "not closed"),
        (GOOD + GOOD.split("\n", 1)[1], 6, "duplicate computation"),
        (GOOD.replace("%a = f32[2]{0} parameter(0)", "%a = f32[2]{0} parameter(0) extra"), 3, ""),
        (GOOD.replace("negate(%a)", "add(%a, , %a)"), 4, "operand"),
        (GOOD.replace("{\n  %a", "{\n  /* %a"), 3, "unterminated comment"),
    ],
)
def test_malformed_input_raises_parse_error_with_line(text: str, line: int, words: str) -> None:
    with pytest.raises(HloParseError) as info:
        parse_module(text)
    assert info.value.line == line
    assert f"line {line}:" in str(info.value)
    assert words in info.value.message
    assert isinstance(info.value, ValueError)


def test_not_text_is_a_parse_error() -> None:
    with pytest.raises(HloParseError):
        parse_module(b"HloModule m")  # type: ignore[arg-type]


def _calls_to_parse(text: str) -> int:
    """The number of Python and C function calls that parsing ``text`` makes: a
    measure of the work that does not depend on the machine or its load."""
    calls = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(count)
    try:
        parse_module(text)
    finally:
        sys.setprofile(None)
    return calls


def test_parsing_is_linear_in_the_size_of_the_text() -> None:
    # No clock: four times the text must take four times the calls, give or take
    # the fixed cost (a parser quadratic in the text would take sixteen).
    small, large = hlo_module_text(20), hlo_module_text(80)
    assert len(parse_module(large).computations) == 81
    ratio = _calls_to_parse(large) / _calls_to_parse(small)
    size_ratio = len(large) / len(small)
    assert 3.9 < size_ratio < 4.1
    assert 0.9 * size_ratio < ratio < 1.1 * size_ratio, f"{ratio:.2f} times the calls for {size_ratio:.2f} times the text"
