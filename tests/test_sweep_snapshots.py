"""The flips found on stored real HLO: the committed snapshots of the guide's sweeps
(``docs/guide/sweeps.md``, ``docs/_snapshots/guide/sweeps``), read back, analysed
again, and mapped without compiling anything.

Regenerate the snapshots with a docs build that compiles the page (``update`` mode,
the default of the site's ``conf.py``), as for any example.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sphinx_jaxhlo.core.example import parse_example
from sphinx_jaxhlo.core.flips import SweepMap, sweep_map
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.core.targets import get_target
from sphinx_jaxhlo.pipeline.plan import sweep_points
from sphinx_jaxhlo.pipeline.scan import find_examples
from sphinx_jaxhlo.store import snapshots

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGE = DOCS / "guide" / "sweeps.md"
FOLDER = DOCS / "_snapshots" / "guide" / "sweeps"


def stored_map(name: str) -> SweepMap:
    """The map of the page's example ``name`` from its committed snapshots."""
    found = next(f for f in find_examples(PAGE.read_text(encoding="utf-8"), markdown=True)
                 if f.options.get("name") == name)
    example = parse_example(found.content, found.options, docname="guide/sweeps", line=found.line)
    assert example.sweep is not None and example.targets is not None
    outcomes = []
    targets = [get_target(t) for t in example.targets]
    for point in sweep_points(example):
        assert point.example is not None
        results = []
        for function in example.functions:
            for target in targets:
                slot = FOLDER / (snapshots.slot_name(point.example.slot_name, function, target.name) + ".json")
                report = snapshots.read(slot).snapshot.report(point.example.source, point.example.source_name)
                results.append(Result(report.function, target.name, target.title, report=report))
        outcomes.append((point.point, results, ""))
    functions = list(dict.fromkeys(r.function for r in outcomes[0][1]))
    return sweep_map(example.sweep, outcomes, functions, [(t.name, t.title) for t in targets])


@pytest.fixture(scope="module")
def seed() -> SweepMap:
    return stored_map("jaxhlo-example-sweeps-seed")


def test_the_written_out_seed_flips_between_4096_and_4097_on_the_h100(seed: SweepMap) -> None:
    sizes = (16, 1024, 2048, 4096)
    h100 = seed.figures_of("written", "gpu:h100")
    assert [f.status for f in h100] == ["unfused"] * 4 + ["fused"] * 4
    assert [f.largest for f in h100[:4]] == [f"f32[{n},{n}]" for n in sizes]
    (flip,) = seed.flips_of("written", "gpu:h100")
    assert flip.between == "n=4096 and n=4097" and flip.kinds == ["reduction"]
    # XLA's own cost figures, quoted from its priority-fusion record at the unfused side
    quoted = [r for r in flip.reasons_before if "its cost model estimated" in r]
    assert quoted and "fused against" in quoted[0] and "(slower fused)" in quoted[0]
    assert any("fused: " in r and "reduces it in one kernel" in r for r in flip.reasons_after)
    # the CPU stores the table at every size but 16 x 16, which is one loop fusion
    cpu = seed.figures_of("written", "cpu")
    assert [f.status for f in cpu] == ["fused"] + ["unfused"] * 7
    assert [f.between for f in seed.flips_of("written", "cpu") if "reduction" in f.kinds] == ["n=16 and n=1024"]


def test_the_dot_form_stores_its_product_at_every_size(seed: SweepMap) -> None:
    sizes = (16, 1024, 2048, 4096, 4097, 5000, 8192, 16384)
    for target in ("cpu", "gpu:h100"):
        figures = seed.figures_of("dotted", target)
        assert {f.status for f in figures} == {"unfused"}, target
        assert [f.largest for f in figures] == [f"f32[{n},{n}]" for n in sizes]
        assert not [f for f in seed.flips_of("dotted", target) if "reduction" in f.kinds]


def test_the_map_of_the_seed_shows_each_reports_temp(seed: SweepMap) -> None:
    import re

    from sphinx_jaxhlo.render.sweep_chart import line_svg

    svg = line_svg(seed, "gpu:h100", seed.flips_of("written", "gpu:h100"), "u", "t")
    drawn = [int(b) for b in re.findall(r'data-bytes="(\d+)"', svg)]
    # one series per function, in the example's order: written, then dotted
    assert drawn == [f.value for function in seed.functions for f in seed.figures_of(function, "gpu:h100")]
    assert drawn[3] >= 4 * 4096 * 4096  # the stored cosine table is in the temp at 4096


def test_the_matrix_vector_rewrite_flips_where_rows_plus_one_times_k_reaches_ten_million() -> None:
    for name in ("jaxhlo-example-sweeps-matvec", "jaxhlo-example-sweeps-matvec-boundary"):
        grid = stored_map(name)
        gemm = {f.point.index: any("gemm" in r.producer_key for r in f.reductions)
                for f in grid.figures_of("matvec", "gpu:h100")}
        for figure in grid.figures_of("matvec", "gpu:h100"):
            rows, k = figure.point.coordinates
            assert gemm[figure.point.index] == ((rows + 1) * k >= 10_000_000), figure.point.label
        producer_flips = {(f.before.index, f.after.index) for f in grid.flips if "producer" in f.kinds}
        expected = {(a, b) for a in gemm for b in gemm
                    if sum(abs(x - y) for x, y in zip(a, b, strict=True)) == 1 and a < b and gemm[a] != gemm[b]}
        assert producer_flips == expected


def test_a_point_that_runs_out_of_memory_on_the_tpu_is_a_point_of_the_map() -> None:
    tpu = stored_map("jaxhlo-example-sweeps-tpu-memory")
    figures = tpu.figures_of("broadcast_sum", "tpu:v5e")
    assert [f.status for f in figures][-1] == "compile error" and figures[-1].error.startswith("RESOURCE_EXHAUSTED")
    assert tpu.measure("tpu:v5e") == "device"
    (flip,) = tpu.flips
    assert flip.kinds == ["error"] and flip.between == "n=50000 and n=100000"
