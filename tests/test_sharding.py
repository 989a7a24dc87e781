"""Programs on several devices: meshes, partition specs, collectives, per-device memory.

The stored modules under ``tests/data/sharded/`` were compiled by jax alone
(``regenerate_sharded.py``), which also counted their collectives from XLA's
own module objects and kept XLA's ``memory_analysis()``.  The pure tests read
those modules; the slow ones build ``tests/roots/test-sharding`` (the same
programs through the directive, on 8 x H100 and a TPU v5e 2x4) and compare
what the pages and reports say with XLA's figures.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import build_html

from sphinx_jaxhlo.core import targets
from sphinx_jaxhlo.core.expectations import ExpectationSyntaxError, check_all, parse_expectations
from sphinx_jaxhlo.core.report import Report
from sphinx_jaxhlo.core.request import CompileRequest
from sphinx_jaxhlo.core.specs import (
    ArgSpecs,
    ArraySpec,
    MeshSpec,
    SpecError,
    parse_args,
    parse_mesh,
    sharding_problems,
)
from sphinx_jaxhlo.hlo.collectives import (
    ReplicaGroups,
    analyze_collectives,
    mesh_axes_of,
    parse_pairs,
    parse_replica_groups,
)

DATA = Path(__file__).parent / "data" / "sharded"
ROOT = Path(__file__).parent / "roots" / "test-sharding"
sys.path.insert(0, str(DATA))
from cases import BY_FUNCTION, CASES, TARGETS  # noqa: E402

sys.path.remove(str(DATA))

FIGURES: dict[str, Any] = json.loads((DATA / "xla.json").read_text(encoding="utf-8"))
MESH_42 = (("data", 4), ("model", 2))


def module_text(target: str, function: str) -> str:
    return (DATA / target.replace(":", "_") / f"{function}.txt").read_text(encoding="utf-8")


def collectives_of(target: str, function: str) -> list[Any]:
    case = BY_FUNCTION[function]
    return analyze_collectives(module_text(target, function), parse_mesh(case.mesh).axes, "programs.py")


# -- specs and meshes ------------------------------------------------------------------------


def test_partition_specs_parse_print_and_round_trip() -> None:
    specs = parse_args("f32[8192,8192] @ P(data, None), f32[8192,1024] @ P(None, 'model'), "
                       "w=bf16[8,4] @ P((data, model)), b=f32[3]")
    assert specs.args[0] == ArraySpec("f32", (8192, 8192), (("data",), None))
    assert specs.args[1] == ArraySpec("f32", (8192, 1024), (None, ("model",)))
    assert dict(specs.kwargs)["w"] == ArraySpec("bf16", (8, 4), (("data", "model"),))
    assert dict(specs.kwargs)["b"] == ArraySpec("f32", (3,), None)  # replicated
    assert str(specs) == ("f32[8192,8192] @ P(data, None), f32[8192,1024] @ P(None, model), "
                          "w=bf16[8,4] @ P((data, model)), b=f32[3]")
    assert ArgSpecs.from_json(specs.to_json()) == specs
    assert parse_args(str(specs)) == specs
    # a replicated spec keeps the JSON it had before partitions existed
    assert parse_args("f32[3]").to_json() == {"args": [{"dtype": "f32", "shape": [3]}], "kwargs": []}


@pytest.mark.parametrize(("text", "message"), [
    ("f32[3] @", "expected P(...) after '@'"),
    ("f32[3] @ Q(data)", "expected P(...) after '@' at column 10"),
    ("f32[3] @ P(data", "is not closed"),
    ("f32[3] @ P(1)", "expected a mesh axis or None"),
    ("f32[3] @ P('a b')", "is not a name"),
])
def test_bad_partition_specs_say_where(text: str, message: str) -> None:
    with pytest.raises(SpecError, match=re.escape(message)):
        parse_args(text)


def test_mesh_option() -> None:
    mesh = parse_mesh("data=4, model=2")
    assert mesh.axes == MESH_42 and mesh.size == 8 and str(mesh) == "data=4, model=2"
    assert MeshSpec.from_json(mesh.to_json()) == mesh
    for text, message in (("", "empty"), ("data", "expected '='"), ("data=0", "not a positive integer"),
                          ("data=4, data=2", "given twice"), ("data=four", "not a positive integer")):
        with pytest.raises(SpecError, match=message):
            parse_mesh(text)


def test_mesh_axis_types() -> None:
    mesh = parse_mesh("X=2 explicit, Y=4 Explicit")
    assert mesh.axes == (("X", 2), ("Y", 4)) and mesh.axis_types == ("explicit", "explicit")
    assert str(mesh) == "X=2 explicit, Y=4 explicit" and parse_mesh(str(mesh)) == mesh
    assert MeshSpec.from_json(mesh.to_json()) == mesh and mesh.to_json() == [["X", 2, "explicit"], ["Y", 4, "explicit"]]
    mixed = parse_mesh("data=4 manual, model=2")
    assert mixed.axis_types == ("manual", "default") and str(mixed) == "data=4 manual, model=2"
    # a kind left out is jax.make_mesh's default (resolved by the compile worker's jax), not Auto
    assert parse_mesh("data=4 auto, model=2 auto") != parse_mesh("data=4, model=2")
    assert parse_mesh("data=4").to_json() == [["data", 4, "default"]] and str(parse_mesh("data=4")) == "data=4"
    # Auto axes keep the JSON (so the cache keys and snapshots) they had when Auto was the only default
    assert parse_mesh("data=4 auto").to_json() == [["data", 4]] and str(parse_mesh("data=4 auto")) == "data=4 auto"
    assert MeshSpec.from_json([["data", 4]]).axis_types == ("auto",)
    for text in ("data=4", "data=4 auto", "data=4 explicit, model=2", "data=4 manual, model=2 auto"):
        mesh = parse_mesh(text)
        assert parse_mesh(str(mesh)) == mesh and MeshSpec.from_json(mesh.to_json()) == mesh
    with pytest.raises(SpecError, match="'implicit' at column 8 is not a mesh axis type"):
        parse_mesh("data=4 implicit")
    with pytest.raises(SpecError, match="expected ','"):
        parse_mesh("data=4 explicit manual")


def test_a_jax_mesh_keeps_its_axis_types() -> None:
    from jax.sharding import AbstractMesh, AxisType, NamedSharding

    from sphinx_jaxhlo.api.functions import mesh_spec_of
    from sphinx_jaxhlo.compiler.calls import _abstract, call_mesh

    mesh = AbstractMesh((4, 2), ("X", "Y"), axis_types=(AxisType.Explicit, AxisType.Auto))
    assert mesh_spec_of(mesh) == parse_mesh("X=4 explicit, Y=2 auto")
    # a mapping has no kinds: jax.make_mesh's default
    assert mesh_spec_of({"X": 4, "Y": 2}) == parse_mesh("X=4, Y=2")
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    arg = _abstract(jax.ShapeDtypeStruct((8, 8), jnp.float32, sharding=NamedSharding(mesh, P("X", None))))
    assert call_mesh([arg], {}, None) == parse_mesh("X=4 explicit, Y=2 auto")


def test_sharding_problems_name_the_argument_and_the_cause() -> None:
    mesh = parse_mesh("data=4, model=2")
    problems = sharding_problems(parse_args(
        "f32[10] @ P(data), f32[8] @ P(batch), f32[8] @ P(data, data), f32[8] @ P(None, None), "
        "f32[8,8] @ P((data, model)), f32[16,6] @ P(data, model)"), mesh)
    assert problems == [
        "argument 1 (f32[10] @ P(data)): dimension 0 of size 10 is not divisible by 4, the number of devices "
        "along data=4",
        "argument 2 (f32[8] @ P(batch)) names mesh axis 'batch', which the mesh data=4, model=2 does not have "
        "(its axes: data, model)",
        "argument 3 (f32[8] @ P(data, data)) uses mesh axis 'data' twice; an axis can split one dimension only",
        "argument 4 (f32[8] @ P(None, None)) has 2 partition entries for 1 dimensions",
    ]
    assert "no mesh is given" in sharding_problems(parse_args("f32[8] @ P(data)"), None)[0]
    assert sharding_problems(parse_args("f32[8], f32[8] @ P()"), None) == []


def test_mesh_targets_and_their_device_counts() -> None:
    assert targets.get_target("gpu:h100x8").device_count == 8
    assert targets.get_target("gpu:h100x8").title == "8 x H100"
    assert targets.get_target("tpu:v5e-8").tpu_topology == "v5e:2x4"
    assert targets.get_target("tpu:v5e-4").device_count == 4
    assert targets.get_target("tpu:v5p-8").device_count == 4  # v5p-8 counts TensorCores: 4 megacore chips
    assert targets.get_target("gpu:h100").device_count == 1
    h100x8 = targets.get_target("gpu:h100x8")
    assert targets.mesh_problem(h100x8, parse_mesh("data=4, model=2")) is None
    assert targets.mesh_problem(h100x8, None) is None
    problem = targets.mesh_problem(h100x8, parse_mesh("data=4"))
    assert problem == ("the mesh data=4 spans 4 devices, but gpu:h100x8 has 8: give a mesh whose sizes "
                       "multiply to 8")
    # on one device any mesh is fine: its axes have size 1 there
    assert targets.mesh_problem(targets.get_target("cpu"), parse_mesh("data=4")) is None


def test_the_cache_key_and_the_request_carry_mesh_and_partitions() -> None:
    def key(args: str, mesh: str | None) -> str:
        return CompileRequest(source="def f(a): return a", function="f", specs=parse_args(args), target="gpu:h100x8",
                              mesh=parse_mesh(mesh) if mesh else None).cache_key()

    keys = {key("f32[8,8]", None), key("f32[8,8]", "data=8"), key("f32[8,8] @ P(data)", "data=8"),
            key("f32[8,8] @ P(None, data)", "data=8"), key("f32[8,8] @ P(data)", "data=4, model=2")}
    assert len(keys) == 5
    request = CompileRequest(source="", function="f", specs=parse_args("f32[8] @ P(data)"), target="tpu:v5e-8",
                             mesh=parse_mesh("data=8"))
    data = request.to_json()
    assert data["mesh"] == [["data", 8, "default"]]  # the worker's jax decides the kind
    assert data["specs"]["args"][0]["partition"] == [["data"]]
    assert CompileRequest.from_json(data) == request
    assert "mesh" not in CompileRequest(source="", function="f", specs=ArgSpecs(), target="cpu").to_json()


# -- replica groups and mesh axes ---------------------------------------------------------------


def test_replica_groups_in_every_form() -> None:
    assert parse_replica_groups("{{0,1},{2,3}}", 4).groups == ((0, 1), (2, 3))
    assert parse_replica_groups("{}", 4).groups == ((0, 1, 2, 3),)
    assert parse_replica_groups(None, 2).groups == ((0, 1),)
    assert parse_replica_groups("[2,4]<=[8]", 8).groups == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert parse_replica_groups("[2,4]<=[4,2]T(1,0)", 8).groups == ((0, 2, 4, 6), (1, 3, 5, 7))
    mesh = parse_replica_groups("mesh['axis_0'=1,'axis_1'=4,'axis_2'=2] {'axis_1'}", 8)
    assert sorted(mesh.groups) == [(0, 2, 4, 6), (1, 3, 5, 7)]
    both = parse_replica_groups("mesh['a'=4,'b'=2] {'a','b'}", 8)
    assert both.groups == ((0, 1, 2, 3, 4, 5, 6, 7),)
    sub = parse_replica_groups("mesh['a'=8] {'a':(2)2}", 8)  # the middle factor of 8 = 2 x 2 x 2
    assert sorted(sub.groups) == [(0, 2), (1, 3), (4, 6), (5, 7)]
    with pytest.raises(ValueError):
        parse_replica_groups("mesh['a'=4] {'b'}", 4)
    assert parse_pairs("{{0,2},{1,3}}").pairs == ((0, 2), (1, 3))


def test_groups_are_matched_to_mesh_axes() -> None:
    # row-major over data=4, model=2: device 2*d + m
    assert mesh_axes_of(ReplicaGroups(((0, 2, 4, 6), (1, 3, 5, 7))), MESH_42) == ["data"]
    assert mesh_axes_of(ReplicaGroups(((0, 1), (2, 3), (4, 5), (6, 7))), MESH_42) == ["model"]
    assert mesh_axes_of(ReplicaGroups((tuple(range(8)),)), MESH_42) == ["data", "model"]
    assert mesh_axes_of(ReplicaGroups(tuple((i,) for i in range(8))), MESH_42) == []
    assert mesh_axes_of(ReplicaGroups(((0, 3), (1, 2), (4, 7), (5, 6))), MESH_42) is None
    assert mesh_axes_of(ReplicaGroups(pairs=((0, 2), (2, 4), (4, 6), (6, 0))), MESH_42) == ["data"]
    assert mesh_axes_of(ReplicaGroups(pairs=((0, 1),)), MESH_42) == ["model"]
    assert mesh_axes_of(ReplicaGroups(pairs=((0, 9),)), MESH_42) is None
    # axes of size 1 never appear
    assert mesh_axes_of(ReplicaGroups((tuple(range(4)),)), (("x", 1), ("data", 4))) == ["data"]


# -- the stored modules against XLA's own count ----------------------------------------------


def test_the_stored_data_is_complete() -> None:
    for target in TARGETS:
        for case in CASES:
            assert (DATA / target.replace(":", "_") / f"{case.function}.txt").exists(), (target, case.function)
            assert case.function in FIGURES[target], (target, case.function)
            assert set(case.expected) == set(TARGETS)


@pytest.mark.parametrize(("target", "function"), [(t, c.function) for t in TARGETS for c in CASES])
def test_collectives_match_xla_and_the_axes_checked_by_hand(target: str, function: str) -> None:
    found = collectives_of(target, function)
    counts: dict[str, int] = {}
    for c in found:
        counts[c.kind] = counts.get(c.kind, 0) + 1
    assert counts == FIGURES[target][function]["collectives"], "counted by XLA's module objects"
    assert sorted((c.kind, tuple(c.axes or ())) for c in found) == BY_FUNCTION[function].expected[target]
    for c in found:
        assert c.bytes > 0 and c.axes is not None
        if c.kind != "collective-permute":
            assert c.groups.endswith("devices")


def test_an_async_pair_counts_once_and_shows_its_result() -> None:
    text = module_text("gpu:h100x8", "fsdp")
    assert len(re.findall(r" all-gather-(?:start|done)\(", text)) == 2
    (gather,) = collectives_of("gpu:h100x8", "fsdp")
    assert gather.name == "all-gather-start" and gather.done == "all-gather-done"
    # a quarter of the rows of f32[4096,4096] in, all of them out
    assert (gather.operand_shape, gather.shape, gather.bytes) == ("f32[1024,4096]", "f32[4096,4096]", 4096 * 4096 * 4)
    assert gather.source_lines == [21] and gather.op == "dot_general"


def test_a_tpu_collective_fusion_counts_once_and_overlaps_the_first_layer() -> None:
    text = module_text("tpu:v5e-8", "fsdp_two")
    assert len(re.findall(r" all-gather\(", text)) > 2  # the copies of one gather in an async collective fusion
    first, second = collectives_of("tpu:v5e-8", "fsdp_two")
    assert not first.is_async and first.overlapped is False
    assert second.is_async and second.copies > 1 and second.overlapped
    assert second.overlaps_with, "the fusion that computes the first layer while w2 is gathered"
    # the TPU compiler gathers the weights as bf16: it converts f32 dot operands first
    assert second.shape == "bf16[4096,4096]" and second.bytes == 4096 * 4096 * 2
    assert (first.source_lines, second.source_lines) == ([25], [26])


def test_gpu_overlap_is_read_from_the_schedule() -> None:
    first, second = collectives_of("gpu:h100x8", "fsdp_two")
    assert not first.is_async  # marked is_sync: nothing to overlap before the first layer
    assert second.is_async and second.overlapped
    assert any(name.startswith("gemm_fusion") for name in second.overlaps_with)


def test_a_collective_in_a_loop_body() -> None:
    (gpu,) = collectives_of("gpu:h100x8", "fsdp_layers")
    assert gpu.in_loop and gpu.trip_count == 4 and gpu.computation != "main"
    # a scalar loop-counter increment between start and done is not compute
    assert gpu.overlapped is False
    (tpu,) = collectives_of("tpu:v5e-8", "fsdp_layers")
    assert tpu.in_loop and tpu.trip_count is None  # the TPU loop does not say how often it runs


def test_reduce_scatter_without_metadata_gets_the_line_of_what_it_moves() -> None:
    (scatter,) = collectives_of("gpu:h100x8", "contract_scattered")
    assert scatter.kind == "reduce-scatter" and scatter.source_lines == [17]
    assert scatter.shape == "f32[1024,4096]" and scatter.bytes == 4096 * 4096 * 4
    reduce, permute = collectives_of("tpu:v5e-8", "contract_scattered")
    assert reduce.fused_computation == "all-reduce-scatter" and reduce.fusion is not None
    assert permute.kind == "collective-permute" and permute.axes == ["data"]


def test_no_mesh_means_no_axes_and_a_module_without_partitions_has_no_collectives() -> None:
    found = analyze_collectives(module_text("gpu:h100x8", "contract"))
    assert [c.axes for c in found] == [None]
    hlo = (Path(__file__).parent / "data" / "hlo").glob("*.txt")
    for path in list(hlo)[:4]:
        assert analyze_collectives(path.read_text(encoding="utf-8")) == []


# -- expectations --------------------------------------------------------------------------------


def report_of(target: str, function: str) -> Report:
    case = BY_FUNCTION[function]
    mesh = parse_mesh(case.mesh)
    return Report(function=function, target=target, devices=mesh.size, mesh=[list(a) for a in mesh.axes],
                  collectives=collectives_of(target, function))


def test_expect_collectives_by_count_and_by_bytes() -> None:
    conditions = "all-gather=2, all-reduce=0, gpu:h100x8=all-gather>=128MiB, tpu:v5e-8=all-gather<=64MiB"
    expectations = parse_expectations({"expect-collectives": conditions})
    outcomes = check_all(expectations, [report_of(t, "fsdp_two") for t in TARGETS])
    assert all(o.passed for o in outcomes), [o.message for o in outcomes]
    assert len(outcomes) == 6  # per target: all-gather count, all-reduce count, all-gather bytes
    failed = check_all(parse_expectations({"expect-collectives": "none"}), [report_of("gpu:h100x8", "contract")])
    assert not failed[0].passed
    assert failed[0].message.startswith("contract on gpu:h100x8: expected collectives none, found 1 collective, "
                                        "67.1 MB per device (all-reduce-start f32[4096,4096] over data)")
    held = check_all(parse_expectations({"expect-collectives": "none"}), [report_of("tpu:v5e-8", "rows")])
    assert held[0].passed and held[0].actual == "0 collectives"


@pytest.mark.parametrize("text", ["all-gathers=0", "all-gather", "all-gather=lots", "all-gather=0, all-gather=1"])
def test_bad_collective_expectations(text: str) -> None:
    with pytest.raises(ExpectationSyntaxError):
        parse_expectations({"expect-collectives": text})


def test_temp_expectations_say_per_device() -> None:
    report = report_of("gpu:h100x8", "contract")
    report.memory.temp_bytes = 500
    (outcome,) = check_all(parse_expectations({"expect-max-temp": "1kB"}), [report])
    assert outcome.passed and outcome.actual == "temp 500 B (500 bytes) per device"


# -- rendering -------------------------------------------------------------------------------------


def test_text_shows_communication_layouts_and_memory_per_device() -> None:
    from sphinx_jaxhlo.core.report import Sharding
    from sphinx_jaxhlo.render.text import render_text

    gpu, tpu = report_of("gpu:h100x8", "fsdp_two"), report_of("tpu:v5e-8", "fsdp_two")
    gpu.memory.temp_bytes, gpu.memory.argument_bytes = 142_606_608, 1000
    gpu.input_shardings = [Sharding("argument 1", "f32[1024,4096]", "P('data', None)", "f32[256,4096]")]
    text = render_text([gpu, tpu], show=("summary", "memory"))
    assert re.search(r"communication\s+all-gather x2, 134 MB over data\s+all-gather x2, 67.1 MB over data", text)
    assert "Runs on 8 devices, mesh data=4, model=2, one program per device" in text
    assert re.search(r"argument 1\s+f32\[1024,4096\]\s+P\('data', None\)\s+f32\[256,4096\]", text)
    assert re.search(r"all-gather \(async\)\s+f32\[4096,4096\]\s+67.1 MB\s+data\s+yes, with gemm_fusion", text)
    assert re.search(r"temp\s+143 MB\s+142,606,608 bytes\s+1.1 GB", text), "per device, and for all 8"
    single = render_text([Report(function="f", target="cpu")], show=("summary",))
    assert "communication" not in single


def test_page_nodes_for_a_mesh() -> None:
    from sphinx_jaxhlo.core.results import Result
    from sphinx_jaxhlo.render.display import Display
    from sphinx_jaxhlo.render.overview import comparison_table
    from sphinx_jaxhlo.render.parts import mesh_nodes
    from sphinx_jaxhlo.render.rows import collective_table, memory_table

    gpu = report_of("gpu:h100x8", "contract")
    box = mesh_nodes(gpu, Display())
    text = "\n".join(node.astext() for node in box)
    assert "Communication: 1 collective, 67.1 MB per device in all." in text
    rows = report_of("tpu:v5e-8", "rows")
    assert "No communication:" in "\n".join(n.astext() for n in mesh_nodes(rows, Display()))
    table = comparison_table([Result("contract", "gpu:h100x8", "8 x H100", report=gpu),
                              Result("contract", "tpu:v5e-8", "TPU v5e-8", report=rows)], Display())
    (communication,) = [r for r in table.rows if r.cells[0].text == "communication"]
    assert [c.text for c in communication.cells[1:]] == ["all-reduce, 67.1 MB over data", "none"]
    assert memory_table(gpu).header[-1] == "all 8 devices"
    (row,) = collective_table(gpu, Display()).rows
    assert [c.text for c in row.cells] == ["all-reduce", "f32[4096,4096]", "67.1 MB", "data", "no (synchronous)",
                                           "line 9", "all-reduce-start"]
    assert row.lines == (9,)


# -- the directive, compiling (slow) ---------------------------------------------------------------

needs_compilers = pytest.mark.skipif(
    not (targets.get_target("gpu:h100x8").available() and targets.get_target("tpu:v5e-8").available()),
    reason="needs the GPU and TPU compilers")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, str, dict[tuple[str, str], list[Report]]]:
    import shutil

    from bs4 import BeautifulSoup

    tmp = tmp_path_factory.mktemp("sharding")
    src = tmp / "src"
    shutil.copytree(ROOT, src)
    warnings, outdir, stored = build_html(src, tmp / "build")
    html = (outdir / "index.html").read_text(encoding="utf-8")
    reports: dict[tuple[str, str], list[Report]] = {}
    for rep in stored:
        reports.setdefault((rep.function, rep.target), []).append(rep)
    return BeautifulSoup(html, "html.parser"), warnings, reports


def test_the_root_compiles_the_cases_as_stored() -> None:
    """The examples of the test root are the cases of cases.py, with the same arguments and mesh."""
    text = (ROOT / "index.rst").read_text(encoding="utf-8").partition("Bad input")[0]
    blocks = re.findall(r":function: (\w+)\n   :args: (.*)\n   :mesh: (.*)\n", text)
    good = [(f, a, m) for f, a, m in blocks if f in BY_FUNCTION and BY_FUNCTION[f].args == a]
    assert len(good) >= 6
    for function, _, mesh in good:
        assert BY_FUNCTION[function].mesh == mesh


@pytest.mark.slow
@needs_compilers
def test_per_device_memory_equals_xla(built: Any) -> None:
    _, _, reports = built
    compared = 0
    for target in TARGETS:
        for function in ("contract", "rows", "fsdp_two", "psum_by_hand", "sum_sharded_axis", "seed_rows"):
            (report,) = [r for r in reports[(function, target)] if r.devices > 1]
            xla = FIGURES[target][function]["memory"]
            assert report.memory.temp_bytes == xla["temp_size_in_bytes"], (target, function)
            assert report.memory.argument_bytes == xla["argument_size_in_bytes"], (target, function)
            assert report.memory.output_bytes == xla["output_size_in_bytes"], (target, function)
            assert report.memory.alias_bytes == xla["alias_size_in_bytes"], (target, function)
            counts: dict[str, int] = {}
            for c in report.collectives:
                counts[c.kind] = counts.get(c.kind, 0) + 1
            assert counts == FIGURES[target][function]["collectives"], (target, function)
            specs = ["replicated" if re.fullmatch(r"P\((None(, None)*,?)?\)", s) else s
                     for s in FIGURES[target][function]["output_shardings"]]
            assert [s.spec for s in report.output_shardings] == specs
            assert report.devices == 8
            compared += 1
    assert compared == 12


@pytest.mark.slow
@needs_compilers
def test_pages_show_the_mesh_and_every_claim_holds(built: Any) -> None:
    soup, warnings, reports = built
    assert "jaxhlo.expectation" not in warnings, warnings
    contract = soup.select_one("#ex-contract")
    assert contract is not None
    text = contract.get_text(" ", strip=True)
    assert "communication" in text and "all-reduce, 67.1 MB over data" in text
    assert "P(None, 'data')" in text and "f32[4096,1024]" in text
    assert contract.select_one("table.jaxhlo-collectives") is not None
    (one_device,) = reports[("psum_by_hand", "cpu")]
    assert one_device.devices == 1 and one_device.mesh == [["data", 1], ["model", 1]]


@pytest.mark.slow
@needs_compilers
def test_bad_mesh_input_is_located_and_shown(built: Any) -> None:
    soup, warnings, reports = built
    lines = [ln for ln in warnings.splitlines() if "[jaxhlo.args]" in ln]
    source = (ROOT / "index.rst").read_text(encoding="utf-8").splitlines()
    bad = source.index("Bad input")
    directives = [i + 1 for i, ln in enumerate(source) if i > bad and ln.startswith(".. jax-hlo::")]
    messages = [
        "the mesh data=4 spans 4 devices, but gpu:h100x8 has 8",
        "names mesh axis 'batch', which the mesh data=8 does not have",
        "dimension 0 of size 4100 is not divisible by 8",
        ":mesh: size 'eight' of mesh axis 'data'",
        "P( at column",
    ]
    expected = list(zip(messages, directives, strict=True))
    for message, line in expected:
        hits = [ln for ln in lines if message in ln]
        assert hits, (message, lines)
        assert f"index.rst:{line}:" in hits[0], hits[0]
    assert len(lines) == len(expected)
    # the other target of the mesh-size example compiled
    assert [r.devices for r in reports[("rows", "tpu:v5e-4")]] == [4]
    boxes = soup.select("div.jaxhlo-error")
    assert len(boxes) >= 4
    assert "mesh" in soup.select_one("#ex-mesh-size").get_text(" ", strip=True)


@pytest.mark.slow
@needs_compilers
def test_analyze_maps_the_callers_mesh_onto_the_target() -> None:
    import jax
    import jax.numpy as jnp
    from jax.sharding import AbstractMesh, AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    import sphinx_jaxhlo

    mesh = AbstractMesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    a = jax.ShapeDtypeStruct((4096, 4096), jnp.float32, sharding=NamedSharding(mesh, P(None, "data")))
    b = jax.ShapeDtypeStruct((4096, 4096), jnp.float32, sharding=NamedSharding(mesh, P("data", None)))

    def contract(x: Any, y: Any) -> Any:
        return x @ y

    reports = sphinx_jaxhlo.analyze(contract, a, b, targets="gpu:h100x8, tpu:v5e-4")
    assert reports.args == "f32[4096,4096] @ P(None, data), f32[4096,4096] @ P(data, None)"
    gpu = reports["gpu:h100x8"]
    assert gpu.mesh == [["data", 4], ["model", 2]]
    assert [(c.kind, c.axes) for c in gpu.collectives] == [("all-reduce", ["data"])]
    assert gpu.memory.temp_bytes == FIGURES["gpu:h100x8"]["contract"]["memory"]["temp_size_in_bytes"]
    (failure,) = reports.failures
    assert failure.target == "tpu:v5e-4" and failure.kind == "args" and "spans 8 devices" in failure.message
    reports2 = sphinx_jaxhlo.analyze(contract, "f32[4096,4096] @ P(None, data)", "f32[4096,4096] @ P(data, None)",
                                     targets="gpu:h100x8", mesh="data=4 auto, model=2 auto")
    reports2.check(collectives="all-reduce=1, all-gather=0")
    with pytest.raises(ValueError, match="not divisible"):
        sphinx_jaxhlo.analyze(contract, "f32[10,4] @ P(data)", "f32[4,4]", targets="gpu:h100x8", mesh="data=8")


def sharding_page_idioms() -> dict[str, Any]:
    """JAX's sharding page (docs/new_docs/201/sharding.md), as written there: Explicit
    axes, ``out_sharding=`` on the dot, and ``jax.shard_map`` without ``in_specs``.
    Made inside a function so that they travel to the compile worker by value."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    def dot_out_sharding(x: Any, y: Any) -> Any:
        return jnp.dot(x, y, out_sharding=P("X", None))

    def shard_map_matmul(x: Any, y: Any) -> Any:
        @jax.shard_map(out_specs=P("X", None))
        def matmul(x_shard: Any, y_shard: Any) -> Any:
            z_summand = jnp.dot(x_shard, y_shard)
            return jax.lax.psum_scatter(z_summand, "X", tiled=True)

        return matmul(x, y)

    return {"dot_out_sharding": dot_out_sharding, "shard_map_matmul": shard_map_matmul}


@pytest.mark.slow
@needs_compilers
@pytest.mark.parametrize("name", ["dot_out_sharding", "shard_map_matmul"])
def test_jax_sharding_page_idioms_trace_as_written_on_an_explicit_mesh(name: str) -> None:
    import sphinx_jaxhlo

    function = sharding_page_idioms()[name]
    x, y = "f32[64,32] @ P(None, X)", "f32[32,128] @ P(X, None)"
    reports = sphinx_jaxhlo.analyze(function, x, y, targets="gpu:h100x8, tpu:v5e-8", mesh="X=8 explicit",
                                    cache_dir=None)
    assert not reports.failures, reports.failures
    # each device holds a [64,128] partial product that XLA sums over X (and splits: the
    # H100 with a reduce-scatter, the TPU with an all-reduce whose result each chip slices)
    for target, kind in (("gpu:h100x8", "reduce-scatter"), ("tpu:v5e-8", "all-reduce")):
        report = reports[target]
        assert report.mesh == [["X", 8, "explicit"]], report.mesh
        assert [(c.kind, c.axes) for c in report.collectives] == [(kind, ["X"])], target
    # the same code on Auto axes does not trace: JAX asks for Explicit ones, and the error says how to write them
    with pytest.raises(sphinx_jaxhlo.AnalysisError,
                       match=r"type (AxisType\.)?Auto.*the mesh's axes were X=8 auto \(as :mesh: writes them\); "
                             r"write each axis's kind after its size \(auto, explicit or manual\): "
                             r":mesh: X=8 explicit"):
        sphinx_jaxhlo.analyze(function, x, y, targets="gpu:h100x8", mesh="X=8 auto", cache_dir=None)


JAX_SHARDING_DOT = """
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

def matmul(a, b):
    return jnp.dot(a, b, out_sharding=P("X", None))
"""


def jax_default_kind() -> str:
    """The kind ``jax.make_mesh`` gives when not told, by jax's release notes: Explicit from 0.9."""
    import jax

    return "explicit" if tuple(int(p) for p in jax.__version__.split(".")[:2]) >= (0, 9) else "auto"


@pytest.mark.slow
def test_a_mesh_without_kinds_has_jax_make_mesh_default() -> None:
    """``:mesh: X=4, Y=2`` over JAX's own sharding code: on jax 0.9 and newer the axes are
    Explicit and ``out_sharding=`` traces; on 0.8 they are Auto and the error says how to write them."""
    import sphinx_jaxhlo

    args = "f32[64,32] @ P(None, X), f32[32,128] @ P(X, None)"
    if jax_default_kind() == "explicit":
        reports = sphinx_jaxhlo.analyze_source(JAX_SHARDING_DOT, "matmul", args, targets="cpu", mesh="X=4, Y=2",
                                               cache_dir=None)
        assert reports["cpu"].mesh == [["X", 1, "explicit"], ["Y", 1, "explicit"]]
    else:
        with pytest.raises(sphinx_jaxhlo.AnalysisError, match=r"axes were X=4 auto, Y=2 auto \(X, Y by default: "
                           r"jax\.make_mesh's default in jax 0\.8.*:mesh: X=4 explicit, Y=2 explicit"):
            sphinx_jaxhlo.analyze_source(JAX_SHARDING_DOT, "matmul", args, targets="cpu", mesh="X=4, Y=2",
                                         cache_dir=None)
    # kinds written out are kept whatever the default
    reports = sphinx_jaxhlo.analyze_source("def f(a, b):\n    return a @ b\n", "f", args, targets="cpu",
                                           mesh="X=4 auto, Y=2 explicit", cache_dir=None)
    assert reports["cpu"].mesh == [["X", 1], ["Y", 1, "explicit"]]


@pytest.mark.slow
@needs_compilers
def test_the_directive_takes_explicit_axes(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_targets = ["gpu:h100x8"]\n')
    (src / "index.rst").write_text(
        "Explicit\n========\n\n.. jax-hlo::\n   :args: f32[64,32] @ P(None, X), f32[32,128] @ P(X, None)\n"
        "   :mesh: X=8 explicit\n   :expect-collectives: reduce-scatter=1, all-gather=0\n\n"
        "   import jax.numpy as jnp\n   from jax.sharding import PartitionSpec as P\n\n"
        "   def matmul(x, y):\n       return jnp.dot(x, y, out_sharding=P('X', None))\n")
    warnings, out, reports = build_html(src, tmp_path / "build")
    assert "WARNING" not in warnings, warnings
    assert [r.mesh for r in reports] == [[["X", 8, "explicit"]]]
    assert "mesh X=8 explicit" in (out / "index.html").read_text(encoding="utf-8")


@pytest.mark.slow
@needs_compilers
def test_cached_rebuilds_of_a_sharded_example(tmp_path: Path) -> None:
    """The cache covers the targets of several devices, keyed by the mesh and the partition specs."""
    from test_cache import sphinx_build, summary

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_targets = ["gpu:h100x8"]\n')
    example = (".. jax-hlo::\n   :args: f32[1024,1024] @ P(None, data), f32[1024,1024] @ P(data, None)\n"
               "   :mesh: data=8 auto\n   :expect-collectives: all-reduce=1\n\n   def f(a, b):\n       return a @ b\n")
    index = src / "index.rst"
    index.write_text("Mesh\n====\n\n" + example)
    cache = tmp_path / "cache"
    result, log = sphinx_build(src, tmp_path / "out1", cache)
    assert result["rc"] == 0 and summary(log) == (1, 0), log
    result, log = sphinx_build(src, tmp_path / "out2", cache)
    assert summary(log) == (0, 1) and result["jax_imported"] is False, log
    assert (tmp_path / "out1" / "index.html").read_text() == (tmp_path / "out2" / "index.html").read_text()
    for old, new in (("data=8 auto", "data=4 auto, model=2 auto"), ("P(data, None)", "P(data, model)")):
        index.write_text(index.read_text().replace(old, new))
        _, log = sphinx_build(src, tmp_path / "out3", cache)
        assert summary(log) == (1, 0), (new, log)


def test_snapshots_keep_the_mesh_and_derive_the_collectives_again() -> None:
    from sphinx_jaxhlo.store import snapshots

    request = CompileRequest(source="def f(a, b): return a @ b", function="fsdp_two",
                             specs=parse_args(BY_FUNCTION["fsdp_two"].args), target="tpu:v5e-8",
                             mesh=parse_mesh(BY_FUNCTION["fsdp_two"].mesh))
    report = report_of("tpu:v5e-8", "fsdp_two")
    report.hlo = module_text("tpu:v5e-8", "fsdp_two")
    ident = snapshots.identity(request)
    assert ident["mesh"] == [["data", 4], ["model", 2]] and "@ P(data, None)" in ident["args"]
    snapshot = snapshots.Snapshot.from_report(report, ident, {})
    assert "collectives" not in snapshot.facts and snapshot.facts["mesh"] == [["data", 4], ["model", 2]]
    again = snapshot.report(request.source, "programs.py")
    assert again.collectives == report.collectives and len(again.collectives) == 2
    other = snapshots.identity(CompileRequest(source=request.source, function="fsdp_two", specs=request.specs,
                                              target="tpu:v5e-8", mesh=parse_mesh("data=8 auto")))
    assert snapshots.identity_changes(ident, other) == [":mesh:"]


# -- what a collective brings is an intermediate ---------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_the_gathered_fsdp_weight_is_the_largest_intermediate(target: str) -> None:
    """The weight an FSDP layer gathers was not on the device before the program ran:
    it is listed, named and counted as an intermediate on both multi-device targets,
    and no table is drawn empty."""
    from sphinx_jaxhlo.core.results import Result
    from sphinx_jaxhlo.hlo.fusion import analyze_module
    from sphinx_jaxhlo.render import rows
    from sphinx_jaxhlo.render.display import Display
    from sphinx_jaxhlo.render.findings import findings
    from sphinx_jaxhlo.render.overview import comparison_table

    analysis = analyze_module(module_text(target, "fsdp"))
    report = Report(function="fsdp", target=target, hlo=module_text(target, "fsdp"), fusions=analysis.fusions,
                    materialized=analysis.materialized, argument_copies=analysis.argument_copies,
                    reductions=analysis.reductions, devices=8,
                    collectives=collectives_of(target, "fsdp"))
    (gather,) = [c for c in report.collectives if c.kind == "all-gather"]
    # the whole f32 (GPU) or bf16 (TPU) weight; the TPU keeps it in the chip's own memory, not HBM
    tpu = target.startswith("tpu")
    biggest = rows.largest_on_chip(report) if tpu else rows.largest_intermediate(report)
    assert biggest is not None and biggest.shape == gather.shape
    assert (rows.largest_intermediate(report) is None) == tpu
    assert biggest.bytes == gather.bytes == 4096 * 4096 * (4 if target.startswith("gpu") else 2)
    assert biggest.producer_op == "all-gather" or "all-gather" in biggest.producer
    display = Display()
    texts = [f.text for f in findings(report, display)]
    said = "stay in the chip's own memory, never in HBM; the largest: " if tpu else "Largest intermediate: "
    assert any(said in t and gather.shape in t for t in texts), texts
    assert not any(t.startswith("No buffer is stored") for t in texts)
    table = rows.buffer_table(report, display)
    assert table.rows and table.rows[0].cells[0].text == gather.shape
    comparison = comparison_table([Result(function="fsdp", target=target, target_title=target,
                                          report=report)], display)
    (cell,) = [r.cells[1].text for r in comparison.rows if r.cells[0].text == "largest intermediate"]
    assert gather.shape in cell and cell != "none"


def test_a_table_of_argument_copies_only_shows_them() -> None:
    """A program that stores nothing but copies of its arguments shows those rows,
    not a table of none (``Materialized buffers (0 of 1)``)."""
    from sphinx_jaxhlo.hlo.fusion import analyze_module
    from sphinx_jaxhlo.render import rows
    from sphinx_jaxhlo.render.display import Display
    from sphinx_jaxhlo.render.findings import findings

    text = """HloModule m, is_scheduled=true
ENTRY %e (x: f32[1000]) -> f32[1000] {
  %x = f32[1000]{0} parameter(0)
  %s = (f32[1000]{0}, f32[1000]{0}, u32[]) copy-start(%x)
  %v = f32[1000]{0} copy-done(%s)
  ROOT %o = f32[1000]{0} sine(%v)
}
"""
    analysis = analyze_module(text)
    assert [m.name for m in analysis.argument_copies] == ["v"] and not analysis.materialized
    report = Report(function="f", target="tpu:v5e", hlo=text, fusions=analysis.fusions,
                    materialized=analysis.materialized, argument_copies=analysis.argument_copies)
    table = rows.buffer_table(report, Display())
    assert [r.cells[table.header.index("made by")].text for r in table.rows] == ["a copy of argument data (copy-done)"]
    (finding,) = [f.text for f in findings(report, Display())]
    assert finding.endswith("without an intermediate in memory (1 copy of argument data, listed in the table).")
