"""The forms of HLO text that XLA's printer and dumps write beyond
``compiled.as_text()``'s usual ones: ``} // name`` after computations,
compact tuple indices (``%while.1#0``), ``}, execution_thread="host"``,
``//`` comments, strings over several lines, every narrow element type and
buffer shapes.  Hand-written texts in the printer's form, real host-offloading
modules, and the stored real modules rewritten into each dialect."""

# ruff: noqa: E501  (lines of HLO text are long)
from __future__ import annotations

import dataclasses
import functools
import json
import random
import re
from pathlib import Path
from typing import Any

import ml_dtypes
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sphinx_jaxhlo.api.functions import analyze_hlo
from sphinx_jaxhlo.hlo.fusion import Analysis, analyze_module
from sphinx_jaxhlo.hlo.model import HloComputation, HloModule, HloParseError
from sphinx_jaxhlo.hlo.parse import parse_module
from sphinx_jaxhlo.hlo.programs import top_level_computations

DATA = Path(__file__).parent / "data"
STORED = {p.name: p.read_text() for p in sorted((DATA / "hlo").glob("*.txt")) if not p.name.endswith(".error.txt")}
DIALECTS = DATA / "dialects"

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def real(name: str) -> str:
    path = DIALECTS / name
    if not path.exists():
        pytest.skip(f"tests/data/dialects/{name} is absent (run tests/data/dialects/regenerate.py)")
    return path.read_text()


# -- rewriting a module into a dialect ---------------------------------------------------------

_HEADER_RE = re.compile(r"^(?:ENTRY )?%?([\w.\-]+)[ (].*\{$")


def names_after_braces(text: str) -> str:
    """Old dumps (about jax 0.4.14 to 0.5): ``} // name`` after every computation."""
    out: list[str] = []
    current = ""
    for line in text.split("\n"):
        m = _HEADER_RE.match(line)
        if m:
            current = m.group(1)
        elif line == "}" and current:
            line = f"}} // {current}"
        out.append(line)
    return "\n".join(out)


def compact_names(module: HloModule) -> dict[str, dict[str, str]]:
    """For each computation, the get-tuple-element instructions a compact dump
    leaves out (all but a ROOT) and the operand that stands for each."""
    found: dict[str, dict[str, str]] = {}
    for comp in module.computations.values():
        names: dict[str, str] = {}
        for inst in comp.instructions:
            _compact(comp, inst.name, names)
        found[comp.name] = names
    return found


def _compact(comp: HloComputation, name: str, names: dict[str, str]) -> str:
    inst = comp[name]
    if inst.opcode != "get-tuple-element" or inst.is_root:
        return name
    if name not in names:
        names[name] = f"{_compact(comp, inst.operands[0], names)}#{inst.tuple_index}"
    return names[name]


_OPERAND_RE = re.compile(r"%([\w.\-]+)")


def compact_tuple_indices(text: str) -> tuple[str, dict[str, str]]:
    """Newer dumps (``xla_dump_compact_gte``): no get-tuple-element lines, the
    element written as the operand.  Returns the text and, for the module's
    instructions that are gone, the name of the view that replaces each."""
    module = parse_module(text)
    replaced = compact_names(module)
    out: list[str] = []
    names: dict[str, str] = {}
    for line in text.split("\n"):
        m = _HEADER_RE.match(line)
        if m and m.group(1) in replaced:
            names = replaced[m.group(1)]
        inst = re.match(r"\s+(?:ROOT )?%([\w.\-]+) = ", line)
        if inst and inst.group(1) in names:
            continue  # the get-tuple-element line is left out
        if inst:
            line = _OPERAND_RE.sub(functools.partial(_rename, names), line)
        out.append(line)
    return "\n".join(out), {k: v for comp in replaced.values() for k, v in comp.items()}


def _rename(names: dict[str, str], match: re.Match[str]) -> str:
    return "%" + names.get(match.group(1), match.group(1))


def with_comments(text: str, rng: random.Random) -> str:
    """``//`` comments on lines of their own and after instructions, holding
    the characters that matter to the parser."""
    notes = ["// a note", '// } { ( ) [ ] , = : " %x = f32[] add(%y)', "//", "// ENTRY %e {"]
    out: list[str] = []
    for line in text.split("\n"):
        if rng.random() < 0.15:
            out.append(" " * rng.randrange(0, 4) + rng.choice(notes))
        if line.startswith(("  %", "  ROOT")) and rng.random() < 0.3:
            line = line + " " + rng.choice(notes)
        out.append(line)
    return "\n".join(out)


def on_host_thread(text: str, names: set[str]) -> str:
    """Print ``}, execution_thread="host"`` after the computations named."""
    out: list[str] = []
    current = ""
    for line in text.split("\n"):
        m = _HEADER_RE.match(line)
        if m:
            current = m.group(1)
        elif line == "}" and current in names:
            line = '}, execution_thread="host"'
        out.append(line)
    return "\n".join(out)


def canonical(analysis: Analysis, names: dict[str, str]) -> list[str]:
    """The analysis as sorted JSON texts, the names of left-out views replaced."""

    def rename(value: Any) -> Any:
        if isinstance(value, str):
            return names.get(value, value)
        if isinstance(value, list):
            return [rename(v) for v in value]
        if isinstance(value, dict):
            return {k: rename(v) for k, v in value.items()}
        return value

    data = rename(dataclasses.asdict(analysis))
    return sorted(json.dumps([key, item], sort_keys=True) for key, items in data.items() for item in items)


# -- hand-written texts in the printer's form --------------------------------------------------

OLD_DUMP = """HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[8]{0})->f32[]}

%region_0.1 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %add = f32[] add(%a, %b)
} // region_0.1

%fused_computation (param_0: f32[8]) -> f32[] {
  %param_0 = f32[8]{0} parameter(0)
  %cosine = f32[8]{0} cosine(%param_0)
  %zero = f32[] constant(0)
  ROOT %reduce = f32[] reduce(%cosine, %zero), dimensions={0}, to_apply=%region_0.1
} // fused_computation

ENTRY %main.5 (x: f32[8]) -> f32[] {
  %x = f32[8]{0} parameter(0)
  ROOT %fusion = f32[] fusion(%x), kind=kInput, calls=%fused_computation
} // main.5
"""


def test_names_after_closing_braces() -> None:
    module = parse_module(OLD_DUMP)
    assert list(module.computations) == ["region_0.1", "fused_computation", "main.5"]
    assert module.entry == "main.5"
    assert module["fused_computation"].root == "reduce"
    plain = OLD_DUMP.replace("} // region_0.1", "}").replace("} // fused_computation", "}").replace("} // main.5", "}")
    assert analyze_module(OLD_DUMP) == analyze_module(plain)
    assert [r.input_materialized for r in analyze_module(OLD_DUMP).reductions] == [None]


COMPACT = """HloModule jit_loop, is_scheduled=true

%body (p: (s32[], f32[1024,256], f32[])) -> (s32[], f32[1024,256], f32[]) {
  %p = (s32[], f32[1024,256]{1,0}, f32[]) parameter(0)
  %one = s32[] constant(1)
  %next = s32[] add(%p#0, %one)
  %cos = f32[1024,256]{1,0} cosine(%p#1)
  %zero = f32[] constant(0)
  %sum = f32[] reduce(%cos, %zero), dimensions={0,1}, to_apply=%add
  %acc = f32[] add(%p#2, %sum)
  ROOT %t = (s32[], f32[1024,256]{1,0}, f32[]) tuple(%next, %p#1, %acc)
}

%cond (c: (s32[], f32[1024,256], f32[])) -> pred[] {
  %c = (s32[], f32[1024,256]{1,0}, f32[]) parameter(0)
  %n = s32[] constant(16)
  ROOT %lt = pred[] compare(%c#0, %n), direction=LT
}

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main (a: f32[1024,256]) -> f32[] {
  %a = f32[1024,256]{1,0} parameter(0)
  %i = s32[] constant(0)
  %z = f32[] constant(0)
  %exp = f32[1024,256]{1,0} exponential(%a)
  %init = (s32[], f32[1024,256]{1,0}, f32[]) tuple(%i, %exp, %z)
  %while.1 = (s32[], f32[1024,256]{1,0}, f32[]) while(%init), condition=%cond, body=%body
  ROOT %neg = f32[] negate(%while.1#2)
}
"""


def _expanded(compact: str) -> str:
    """The same module with the get-tuple-element lines written out."""
    text = compact
    for base, index, shape in [("p", 0, "s32[]"), ("p", 1, "f32[1024,256]{1,0}"), ("p", 2, "f32[]"),
                               ("c", 0, "s32[]"), ("while.1", 2, "f32[]")]:
        gte = f"gte.{base}.{index}"
        text = text.replace(f"%{base}#{index}", f"%{gte}")
        text = re.sub(rf"(\n  %{re.escape(base)} = [^\n]*\n)",
                      rf"\1  %{gte} = {shape} get-tuple-element(%{base}), index={index}\n", text, count=1)
    return text


def test_compact_tuple_indices_make_get_tuple_element_views() -> None:
    module = parse_module(COMPACT)
    body = module["body"]
    view = body["p#1"]
    assert view.opcode == "get-tuple-element"
    assert view.tuple_index == 1
    assert view.operands == ["p"]
    assert str(view.shape) == "f32[1024,256]"
    assert view.shape.layout == "1,0"
    # one view per element, made once, before its first reader
    names = [i.name for i in body.instructions]
    assert names.count("p#1") == 1
    assert names.index("p#0") < names.index("next")
    assert names.index("p#1") < names.index("cos")
    assert body["t"].operands == ["next", "p#1", "acc"]
    assert body.users("p#1") == ["cos", "t"]
    assert module.entry_computation["neg"].operands == ["while.1#2"]
    assert module.entry_computation["while.1#2"].line == COMPACT.split("\n").index("  ROOT %neg = f32[] negate(%while.1#2)") + 1


def test_compact_tuple_indices_give_the_analysis_of_the_written_out_module() -> None:
    expanded = _expanded(COMPACT)
    assert "#" not in expanded
    names = {"gte.p.0": "p#0", "gte.p.1": "p#1", "gte.p.2": "p#2", "gte.c.0": "c#0", "gte.while.1.2": "while.1#2"}
    compact, plain = analyze_module(COMPACT), analyze_module(expanded)
    assert canonical(compact, {}) == canonical(plain, names)
    # the loop state passes through the body: the cosine's operand is loop state, not a new buffer
    (reduction,) = compact.reductions
    assert reduction.computation == "body"
    assert reduction.input_materialized == "cos"
    buffers = {(m.computation, m.name): m for m in compact.materialized}
    assert buffers[("main", "exp")].consumers == ["while.1"]
    assert buffers[("main", "while.1#2")].consumers == ["neg"]


def test_nested_compact_tuple_indices() -> None:
    text = """HloModule m
ENTRY %e (p: (f32[10], (f32[20], f32[30]))) -> f32[20] {
  %p = (f32[10]{0}, (f32[20]{0}, f32[30]{0})) parameter(0)
  %n = f32[20]{0} negate(%p#1#0)
  ROOT %r = f32[20]{0} add(%n, %p#1#0)
}
"""
    comp = parse_module(text).entry_computation
    assert [i.name for i in comp.instructions] == ["p", "p#1", "p#1#0", "n", "r"]
    assert comp["p#1"].operands == ["p"]
    assert comp["p#1#0"].operands == ["p#1"]
    assert str(comp["p#1#0"].shape) == "f32[20]"
    assert comp["p#1"].shape.is_tuple


@pytest.mark.parametrize(
    ("operand", "words"),
    [
        ("%p#2", "compact tuple index 2 of 'p', which has 2 elements"),
        ("%q#0", "compact tuple index into unknown 'q'"),
        ("%p#0#0", "which is not a tuple (f32[2])"),
        ("%p#x", "'%name#N', N a number, not 'x'"),
        ("%p#", "N a number, not ''"),
    ],
)
def test_bad_compact_tuple_index_is_named(operand: str, words: str) -> None:
    text = f"HloModule m\nENTRY %e {{\n  %p = (f32[2]{{0}}, s32[]) parameter(0)\n\n  ROOT %r = f32[2]{{0}} negate({operand})\n}}\n"
    with pytest.raises(HloParseError) as info:
        parse_module(text)
    assert info.value.line == 5
    assert words in info.value.message
    assert f"'r' reads {operand.lstrip('%')!r}" in info.value.message


HOST = """HloModule jit_f, is_scheduled=true

%host_computation (param_0: f32[1024,256]) -> f32[1024,256] {
  %param_0 = f32[1024,256]{1,0} parameter(0)
  %sin = f32[1024,256]{1,0} sine(%param_0)
  ROOT %mul = f32[1024,256]{1,0} multiply(%sin, %sin)
}, execution_thread="host"

%fused_cos (p0: f32[1024,256]) -> f32[1024,256] {
  %p0 = f32[1024,256]{1,0} parameter(0)
  ROOT %cos = f32[1024,256]{1,0} cosine(%p0)
}

ENTRY %main (x: f32[1024,256]) -> f32[1024,256] {
  %x = f32[1024,256]{1,0} parameter(0)
  %fusion = f32[1024,256]{1,0} fusion(%x), kind=kLoop, calls=%fused_cos
  %call-start = ((f32[1024,256]{1,0}), f32[1024,256]{1,0}, u32[]) custom-call-start(%fusion), async_execution_thread="host", custom_call_target="HostExecute", called_computations={%host_computation}
  %call-done = f32[1024,256]{1,0} custom-call-done(%call-start)
  ROOT %out = f32[1024,256]{1,0} negate(%call-done)
}
"""


def test_execution_thread_after_the_closing_brace() -> None:
    module = parse_module(HOST)
    assert module["host_computation"].attributes == {"execution_thread": '"host"'}
    assert module["fused_cos"].attributes == {}
    # the printer writes the thread before the name (hlo_computation.cc, Print)
    both = HOST.replace('}, execution_thread="host"', '}, execution_thread="host" // host_computation')
    assert parse_module(both)["host_computation"].attributes == {"execution_thread": '"host"'}


def test_host_computation_is_followed_and_reported_apart() -> None:
    analysis = analyze_module(HOST)
    assert analysis.host_computations == ["host_computation"]
    assert [(f.name, f.computation) for f in analysis.host_fusions] == [("sin", "host_computation"), ("mul", "host_computation")]
    assert [f.name for f in analysis.fusions] == ["fusion", "call-start", "call-done", "out"]
    assert [(m.name, m.kind, m.consumers) for m in analysis.host_buffers] == [("sin", "host", ["mul"])]
    # the buffers the device keeps: what it sends to the host and what comes back
    assert [m.name for m in analysis.materialized] == ["call-done", "fusion"]
    # the same module with the host computation on the main thread: the same
    # work and buffers, only listed with the device's
    main = analyze_module(HOST.replace(', execution_thread="host"', ""))
    assert main.host_fusions == [] and main.host_buffers == []
    assert sorted(f.name for f in main.fusions) == sorted(f.name for f in analysis.fusions + analysis.host_fusions)
    assert sorted(m.name for m in main.materialized) == sorted(m.name for m in analysis.materialized + analysis.host_buffers)


def test_host_memory_space_is_reported_apart() -> None:
    text = """HloModule m, is_scheduled=true
ENTRY %e (x: f32[2048,1024]) -> f32[2048,1024] {
  %x = f32[2048,1024]{1,0} parameter(0)
  %h = f32[2048,1024]{1,0} tanh(%x)
  %copy-start = (f32[2048,1024]{1,0:S(5)}, f32[2048,1024]{1,0}, u32[]) copy-start(%h)
  %copy-done = f32[2048,1024]{1,0:S(5)} copy-done(%copy-start)
  %back-start = (f32[2048,1024]{1,0}, f32[2048,1024]{1,0:S(5)}, u32[]) copy-start(%copy-done)
  %back-done = f32[2048,1024]{1,0} copy-done(%back-start)
  ROOT %r = f32[2048,1024]{1,0} sine(%back-done)
}
"""
    analysis = analyze_module(text)
    assert [(m.name, m.kind, m.bytes) for m in analysis.host_buffers] == [("copy-done", "host", 8388608)]
    assert sorted(m.name for m in analysis.materialized) == ["back-done", "h"]
    assert analysis.host_fusions == []
    module = parse_module(text)
    assert module.entry_computation["copy-done"].shape.memory_space == 5
    assert module.entry_computation["h"].shape.memory_space == 0


@pytest.mark.parametrize("target", ["gpu_h100", "tpu_v5e"])
def test_real_host_offload(target: str) -> None:
    """``compute_on('device_host')``, compiled deviceless: the module was refused
    before (``}, execution_thread="host"``)."""
    text = real(f"{target}__host_offload.txt")
    assert '}, execution_thread="host"' in text
    analysis = analyze_module(text)
    assert analysis.host_computations == ["called_computation"]
    assert sorted(f.kind for f in analysis.host_fusions) == ["broadcast", "multiply", "sine"]
    assert all(m.kind == "host" and m.computation == "called_computation" for m in analysis.host_buffers)
    assert {m.shape for m in analysis.host_buffers} == {"f32[1024,256]"}
    assert all(m.computation != "called_computation" for m in analysis.materialized)
    # the result the host sends back is stored on the device and reduced there
    done = next(f.name for f in analysis.fusions if f.kind == "custom-call-done")
    (reduction,) = [r for r in analysis.reductions if r.origin == "user"]
    assert reduction.input_materialized in {done, *(m.name for m in analysis.materialized)}
    (report,) = analyze_hlo(text, target=target.replace("_", ":"))
    assert report.host_buffers == analysis.host_buffers
    assert report.host_fusions == analysis.host_fusions


@pytest.mark.parametrize("target", ["gpu_h100", "tpu_v5e"])
def test_real_offloaded_activation(target: str) -> None:
    """An activation offloaded to pinned host memory by a remat policy: the
    ``S(5)`` buffer is the host's, not an intermediate on the device."""
    text = real(f"{target}__remat_offload.txt")
    analysis = analyze_module(text)
    host = [m for m in analysis.host_buffers]
    assert [m.shape for m in host] == ["f32[2048,1024]"]
    assert host[0].producer.startswith("copy-done")
    module = parse_module(text)
    assert module[host[0].computation][host[0].name].shape.memory_space == 5
    for m in analysis.materialized:
        inst = module[m.computation].get(m.name)
        assert inst is None or inst.shape.memory_space != 5


MULTILINE = '''HloModule m
ENTRY %e (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %cc = f32[4]{0} custom-call(%a), custom_call_target="Recover", backend_config="table {
  row: 1
  row: 2 \\"quoted\\"
}", api_version=API_VERSION_TYPED_FFI, metadata={op_name="x"
 source_file="f.py" source_line=7}
  ROOT %n = f32[4]{0} negate(%cc)
}
'''


def test_strings_over_several_lines() -> None:
    comp = parse_module(MULTILINE).entry_computation
    cc = comp["cc"]
    assert cc.attributes["api_version"] == "API_VERSION_TYPED_FFI"
    assert cc.attributes["backend_config"].count("\n") == 3
    assert cc.custom_call_target == "Recover"
    assert cc.metadata == {"op_name": "x", "source_file": "f.py", "source_line": "7"}
    assert cc.line == 4
    assert comp["n"].line == 9
    # a line number after the string is still right
    with pytest.raises(HloParseError) as info:
        parse_module(MULTILINE.replace("negate(%cc)", "negate(%nowhere)"))
    assert info.value.line == 9


def test_comments_on_their_own_line_and_after_an_instruction() -> None:
    text = """// a module written by hand
HloModule m // the name
// the entry:
ENTRY %e (a: f32[4]) -> f32[4] { // opens
  %a = f32[4]{0} parameter(0) // the argument, with ( { [ " in the comment
  // CHECK: negate
  ROOT %n = f32[4]{0} negate(%a), metadata={op_name="a//b" source_file="http://x/y.py"} // done
} // e
"""
    module = parse_module(text)
    comp = module.entry_computation
    assert [i.name for i in comp.instructions] == ["a", "n"]
    assert comp["n"].op_name == "a//b"
    assert comp["n"].source_file == "http://x/y.py"
    assert comp["n"].line == 7
    assert module.attributes == {}


# Every narrow type ml_dtypes has, as XLA's printer names it (measured with
# jax 0.10.2: lowered.as_text(dialect="hlo") of an identity on each).
def _hlo_name(dtype_name: str) -> str:
    if dtype_name.startswith("float"):
        return "f" + dtype_name.removeprefix("float").replace("_", "")
    return ("u" if dtype_name.startswith("uint") else "s") + dtype_name.removeprefix("uint").removeprefix("int")


NARROW = sorted(n for n in dir(ml_dtypes) if re.fullmatch(r"float\d+_e\d+m\d+\w*|u?int\d", n))


def test_the_narrow_type_names_are_xla_s() -> None:
    assert _hlo_name("float8_e4m3b11fnuz") == "f8e4m3b11fnuz"
    assert _hlo_name("float8_e8m0fnu") == "f8e8m0fnu"
    assert _hlo_name("float4_e2m1fn") == "f4e2m1fn"
    assert _hlo_name("int2") == "s2" and _hlo_name("uint4") == "u4"
    assert {"float8_e4m3b11fnuz", "float8_e8m0fnu", "float4_e2m1fn", "int2", "uint2", "int4", "uint4"} <= set(NARROW)


@pytest.mark.parametrize("dtype_name", NARROW)
def test_every_narrow_element_type(dtype_name: str) -> None:
    dtype = getattr(ml_dtypes, dtype_name)
    info = ml_dtypes.finfo(dtype) if dtype_name.startswith("float") else ml_dtypes.iinfo(dtype)
    name = _hlo_name(dtype_name)
    module = parse_module(f"HloModule m\nENTRY %e (p: {name}[16]) -> {name}[16] {{\n  ROOT %p = {name}[16]{{0:E({info.bits})}} parameter(0)\n}}\n")
    shape = module.entry_computation["p"].shape
    assert shape.dtype == name
    assert shape.bytes == (16 * info.bits + 7) // 8


def test_buffer_shapes() -> None:
    text = """HloModule m
ENTRY %e (a: f32[4]) -> (b(f32[4]), s32[]) {
  %a = f32[4]{0} parameter(0)
  %buf = b(f32[4]{0}) custom-call(%a), custom_call_target="Pin"
  %i = s32[] constant(0)
  ROOT %t = (b(f32[4]{0}), s32[]) tuple(%buf, %i)
}
"""
    comp = parse_module(text).entry_computation
    buf = comp["buf"].shape
    assert buf.is_buffer and buf.dtype == "f32" and buf.dims == (4,) and buf.layout == "0"
    assert str(buf) == "b(f32[4])"
    assert buf.bytes == 16
    assert comp["t"].shape.tuple_shapes is not None
    assert comp["t"].shape.tuple_shapes[0].is_buffer
    assert comp.result_shape is not None and comp.result_shape.tuple_shapes is not None
    with pytest.raises(HloParseError, match=r"buffer shape b\(\.\.\.\) holds an array shape"):
        parse_module(text.replace("%buf = b(f32[4]{0})", "%buf = b((f32[4]{0}))"))
    with pytest.raises(HloParseError, match=r"'\)' closing a buffer shape"):
        parse_module(text.replace("%buf = b(f32[4]{0})", "%buf = b(f32[4]{0}"))


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (HOST.replace('}, execution_thread="host"', "}, execution_thread"), 7, "after 'execution_thread' (an attribute of computation 'host_computation')"),
        (HOST.replace('}, execution_thread="host"', '}, ="host"'), 7, "attribute name after the '}' closing computation 'host_computation'"),
        (HOST.replace("ENTRY %main (x: f32[1024,256]) -> f32[1024,256] {", "ENTRY %main (x: f32[1024,256]) -> f32[1024,256]"), 15, "'{' opening computation 'main'"),
        (HOST.replace("\n%fused_cos", "\n, %fused_cos"), 9, "expected a computation"),
        (HOST.replace("negate(%call-done)", "negate(%call-done) extra"), 19, "end of instruction 'out'"),
        (HOST.replace("sine(%param_0)", 'sine(%param_0), note="open'), 17, "unterminated string: a '\"' that no '\"' closes (or the first string over several lines, from line 5, is one left open)"),
        (OLD_DUMP.replace("} // main.5", "} / main.5"), 19, "'{' opening computation '/'"),
    ],
)
def test_refusals_name_the_construct(text: str, line: int, words: str) -> None:
    with pytest.raises(HloParseError) as info:
        parse_module(text)
    assert info.value.line == line, info.value
    assert words in info.value.message


# -- the stored real modules in each dialect ---------------------------------------------------

NAMES = sorted(STORED)
needs_modules = pytest.mark.skipif(not NAMES, reason="no stored modules in tests/data/hlo")


@needs_modules
@pytest.mark.parametrize("name", NAMES)
def test_names_after_braces_give_the_same_analysis(name: str) -> None:
    text = STORED[name]
    old = names_after_braces(text)
    assert old.count("} // ") == len(parse_module(text).computations)
    assert analyze_module(old) == analyze_module(text)


@needs_modules
@pytest.mark.parametrize("name", NAMES)
def test_compact_tuple_indices_give_the_same_analysis(name: str) -> None:
    text = STORED[name]
    compact, names = compact_tuple_indices(text)
    before, after = analyze_module(text), analyze_module(compact)
    assert canonical(after, {}) == canonical(before, names)
    # fusions and verdicts do not even depend on the names
    assert after.fusions == before.fusions
    assert [(r.name, r.fused, r.origin) for r in after.reductions] == [(r.name, r.fused, r.origin) for r in before.reductions]


def test_the_stored_modules_have_tuple_elements_to_compact() -> None:
    rewritten = [compact_tuple_indices(t)[1] for t in STORED.values()]
    if not rewritten:
        pytest.skip("no stored modules in tests/data/hlo")
    assert sum(len(names) for names in rewritten) >= 20


@needs_modules
@FAST
@given(name=st.sampled_from(NAMES or [""]), seed=st.integers(0, 2**32 - 1),
       dialects=st.sets(st.sampled_from(["braces", "compact", "comments"]), min_size=1))
def test_every_dialect_mix_gives_the_same_analysis(name: str, seed: int, dialects: set[str]) -> None:
    rng = random.Random(seed)
    text = STORED[name]
    names: dict[str, str] = {}
    rewritten = text
    if "compact" in dialects:
        rewritten, names = compact_tuple_indices(rewritten)
    if "braces" in dialects:
        rewritten = names_after_braces(rewritten)
    if "comments" in dialects:
        rewritten = with_comments(rewritten, rng)
    assert canonical(analyze_module(rewritten), {}) == canonical(analyze_module(text), names)


@needs_modules
@FAST
@given(name=st.sampled_from(NAMES or [""]), data=st.data())
def test_host_thread_only_moves_work_and_buffers_apart(name: str, data: st.DataObject) -> None:
    """Marking computations as host computations changes which list their
    work and buffers are in, and nothing else."""
    text = STORED[name]
    module = parse_module(text)
    marked = set(data.draw(st.sets(st.sampled_from(sorted(module.computations)), max_size=3)))
    plain, host = analyze_module(text), analyze_module(on_host_thread(text, marked))
    top = set(top_level_computations(module))
    assert marked & top <= set(host.host_computations) <= top
    assert sorted(map(repr, host.fusions + host.host_fusions)) == sorted(map(repr, plain.fusions))
    moved = [dataclasses.replace(m, kind="intermediate") for m in host.host_buffers]
    assert sorted(m.name + m.computation for m in host.materialized + host.argument_copies + moved) == sorted(
        m.name + m.computation for m in plain.materialized + plain.argument_copies)
    assert host.reductions == plain.reductions
    assert all(m.computation in host.host_computations for m in host.host_buffers)


def test_xla_s_own_dump_gives_the_analysis_of_as_text() -> None:
    """The ``*after_optimizations.txt`` that ``xla_dump_to`` writes: its
    stack-frame tables in another order, and the host call written out (an
    ``async-start`` of a wrapper computation on the host thread whose
    ``custom-call`` runs the host computation) where ``as_text()`` writes
    ``custom-call-start``.  The same buffers, verdicts and host work; and the
    same dump in the old form, names after the closing braces."""
    dump, text = real("gpu_h100__host_offload.dump.txt"), real("gpu_h100__host_offload.txt")
    assert "async-start(" in dump and "custom-call-start(" in text
    sugared, written_out = analyze_module(text, "example.py"), analyze_module(dump, "example.py")
    assert written_out.materialized == sugared.materialized
    assert written_out.host_buffers == sugared.host_buffers
    assert written_out.reductions == sugared.reductions
    assert written_out.argument_copies == sugared.argument_copies
    assert written_out.host_computations == ["async_computation", "called_computation"]
    assert [f for f in written_out.host_fusions if f.computation == "called_computation"] == sugared.host_fusions
    assert [(f.name, f.custom_kind) for f in written_out.host_fusions if f.computation == "async_computation"] == [
        ("custom-call", "HostExecute")]
    # the start and done keep the opcodes written
    assert [f.kind for f in written_out.fusions] == [
        {"custom-call-start": "async-start", "custom-call-done": "async-done"}.get(f.kind, f.kind) for f in sugared.fusions]
    assert analyze_module(names_after_braces(dump), "example.py") == written_out
    assert any(f.source_lines for f in sugared.fusions + sugared.host_fusions)
