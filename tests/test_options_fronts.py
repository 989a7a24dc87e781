"""``findings``, ``chunk`` and ``rows`` in the command line and the API, as in the directive: each
changes the output as documented, and a bad value is refused in the front's own spelling."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import API_EXAMPLE

from sphinx_jaxhlo import analyze, analyze_source
from sphinx_jaxhlo.api.reports import Reports
from sphinx_jaxhlo.api.sweep_reports import SweepReports
from sphinx_jaxhlo.core.example import OptionProblem

EXAMPLE = API_EXAMPLE.read_text(encoding="utf-8")
#: Small enough to compile in a moment; the cos table (f32[50,100]) is stored before the reduction reads it.
ARGS = "f32[100,3], f32[50,3]"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fronts_cache")


def cli(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "sphinx_jaxhlo", f"{API_EXAMPLE}:with_dot", "--args", ARGS, "--targets", "cpu",
            "--cache-dir", str(cache), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ), timeout=300)


def test_findings_and_rows_on_the_command_line(cache: Path) -> None:
    everything = cli(cache=cache)
    assert everything.returncode == 0, everything.stderr
    # every kind by default: the verdict on the reduction, what is live at the peak, both buffers
    assert "Unfused reduction: the f32[50,100] result of cos on line 10" in everything.stdout
    assert "Live at the peak" in everything.stdout
    assert "more, 2 in total" not in everything.stdout

    memory = cli("--findings", "memory", "--rows", "1", cache=cache)
    assert memory.returncode == 0, memory.stderr
    assert "Unfused reduction" not in memory.stdout and "Live at the peak" not in memory.stdout
    assert "Largest intermediate: the f32[50,100] result of cos on line 10" in memory.stdout
    assert "1 more, 2 in total" in memory.stdout  # the materialized buffers: the largest only

    peak = json.loads(cli("--findings", "peak", "--json", cache=cache).stdout)
    assert peak["view"] == {"findings": ["peak"], "rows": 8}
    assert [f["title"] for f in peak["findings"]] == ["Live at the peak"]
    assert peak["findings"][0]["text"].startswith("At its peak (step ")
    reductions = json.loads(cli("--findings", "reductions", "--rows", "all", "--json", cache=cache).stdout)
    assert reductions["view"] == {"findings": ["reductions"], "rows": None}
    assert "Unfused reduction" in [f["title"] for f in reductions["findings"]]
    assert Reports.from_json(json.dumps(reductions)).display.findings == ("reductions",)


def test_chunk_on_the_command_line(cache: Path) -> None:
    proc = cli("--chunk", "pos=30", "--json", cache=cache)
    assert proc.returncode == 0, proc.stderr
    reports = Reports.from_json(proc.stdout)
    assert [r.function for r in reports] == ["with_dot", "with_dot_chunked"]
    chunked = reports[1]
    assert "ran as written" in chunked.chunk_check
    assert chunked.largest_materialized is not None and chunked.largest_materialized.shape == "f32[50,30]"
    text = cli("--chunk", "pos=30", cache=cache).stdout
    assert "=== with_dot_chunked ===" in text and "Chunked rewrite proved on the jaxpr" in text


@pytest.mark.parametrize(("args", "message"), [
    (["--findings", "memroy"],
     "--findings: unknown kind of finding 'memroy' (known: memory, reductions, communication, peak, or all, or none)"),
    (["--findings", "all, peak"], "--findings: 'all' stands alone"),
    (["--rows", "0"], "--rows: '0' is not a positive number of rows (or 'all')"),
    (["--rows", "many"], "--rows: 'many' is not a number of rows (or 'all')"),
    (["--chunk", "pos"], "--chunk: 'pos' is not name=value"),
    (["--chunk", "pos=0"], "--chunk: pos=0: a chunk size is at least 1"),
    (["--chunk", "nope=10"], "--chunk: with_dot() has no positional argument 'nope' (its arguments: pos, hkl)"),
], ids=lambda v: v if isinstance(v, str) else None)  # fmt: skip
def test_a_bad_value_on_the_command_line_exits_2(tmp_path: Path, args: list[str], message: str) -> None:
    proc = cli(*args, cache=tmp_path / "cache")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.startswith(f"python -m sphinx_jaxhlo: error: {message}"), proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "cache").exists()


def test_findings_over_a_sweep_on_the_command_line_need_the_json(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "sphinx_jaxhlo", f"{API_EXAMPLE}:with_dot", "--args", "f32[n,3], f32[50,3]",
            "--sweep", "n=100,200", "--targets", "cpu", "--cache-dir", str(tmp_path / "cache"), "--findings", "memory"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("python -m sphinx_jaxhlo: error: --findings shapes each point's reports, which the "
                                  "text of a sweep does not print"), proc.stderr
    assert not (tmp_path / "cache").exists()  # refused before anything compiled


def test_findings_and_rows_in_the_api(cache: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("jaxhlo_fronts_example", API_EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    everything = analyze(module.with_dot, *ARGS.split(", "), targets="cpu", cache_dir=cache)
    assert isinstance(everything, Reports)
    assert "Unfused reduction" in str(everything) and "Live at the peak" in str(everything)
    memory = analyze(module.with_dot, *ARGS.split(", "), targets="cpu", cache_dir=cache, findings=["memory"], rows=1)
    assert isinstance(memory, Reports)
    text = str(memory)
    assert "Unfused reduction" not in text and "Live at the peak" not in text
    assert "Largest intermediate: the f32[50,100] result of cos" in text and "1 more, 2 in total" in text
    assert [f["title"] for f in memory.to_dict()["findings"]] == [""]
    # the HTML (Jupyter's, --html's) as the page with :findings: memory: no verdict anywhere
    assert "unfused" in everything.to_html().lower() and "unfused" not in memory.to_html().lower()
    assert Reports.from_json(memory.to_json()).display == memory.display

    source = analyze_source(EXAMPLE, "with_dot", ARGS, targets="cpu", cache_dir=cache, findings="none")
    assert isinstance(source, Reports) and source.to_dict()["findings"] == []
    assert "Unfused reduction" not in str(source) and "Largest intermediate" not in str(source)


def test_chunk_in_the_api(cache: Path) -> None:
    reports = analyze_source(EXAMPLE, "with_dot", ARGS, targets="cpu", cache_dir=cache, chunk="pos=30")
    assert isinstance(reports, Reports)
    assert [r.function for r in reports] == ["with_dot", "with_dot_chunked"]
    assert "ran as written" in reports[1].chunk_check
    assert reports[1].memory.temp_bytes is not None and reports[0].memory.temp_bytes is not None
    assert reports[1].memory.temp_bytes < reports[0].memory.temp_bytes


def test_findings_over_a_sweep_in_the_api(cache: Path) -> None:
    swept = analyze_source(EXAMPLE, "with_dot", "f32[n,3], f32[50,3]", targets="cpu", cache_dir=cache,
                           sweep="n=100,200", bisect=0, findings="memory", rows="all")
    assert isinstance(swept, SweepReports) and len(swept) == 2
    for point in swept:
        assert point.display.findings == ("memory",) and point.display.rows is None
        assert "Unfused reduction" not in str(point) and "Largest intermediate" in str(point)
    assert SweepReports.from_json(swept.to_json())[1].display == swept[1].display


@pytest.mark.parametrize(("options", "message"), [
    ({"findings": "memroy"},
     "findings: unknown kind of finding 'memroy' (known: memory, reductions, communication, peak, or all, or none)"),
    ({"findings": []}, "findings: no kind of finding given"),
    ({"rows": 0}, "rows: 0 is not a positive number of rows (or 'all')"),
    ({"rows": "some"}, "rows: 'some' is not a number of rows (or 'all')"),
    ({"chunk": "pos"}, "chunk: 'pos' is not name=value"),
    ({"chunk": "nope=10"}, "chunk: with_dot() has no positional argument 'nope' (its arguments: pos, hkl)"),
])  # fmt: skip
def test_a_bad_value_in_the_api_is_refused_in_its_words(options: dict[str, object], message: str) -> None:
    with pytest.raises(OptionProblem) as info:
        analyze_source(EXAMPLE, "with_dot", ARGS, targets="cpu", **options)  # type: ignore[arg-type]
    assert info.value.message.startswith(message), info.value.message

    def with_dot(pos: object, hkl: object) -> object:
        return pos

    if "chunk" not in options:  # the same parser, the same words, for a function object
        with pytest.raises(OptionProblem) as info:
            analyze(with_dot, "f32[4,3]", "f32[2,3]", targets="cpu", **options)  # type: ignore[arg-type]
        assert info.value.message.startswith(message), info.value.message


def test_analyze_refuses_chunk_and_says_where_to_ask() -> None:
    def f(pos: object) -> object:
        return pos

    with pytest.raises(OptionProblem) as info:
        analyze(f, "f32[4,3]", targets="cpu", chunk="pos=2")
    assert info.value.message.startswith("chunk: 'pos=2': analyze() compiles the function object")
    assert "analyze_source(..., chunk='pos=2')" in info.value.message
