"""Sweeps from the Python API and the command line, compiled for the CPU with small shapes:
sizes and a static argument swept, the value that lists points, reports and flips, and
``--sweep`` with its claims and exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import API_EXAMPLE

from sphinx_jaxhlo import SweepReports, analyze, analyze_source
from sphinx_jaxhlo.core.example import OptionProblem

EXAMPLE = API_EXAMPLE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def example_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sweep_example") / "jaxhlo_sweep_example.py"
    path.write_text(EXAMPLE)
    return path


def test_analyze_sweeps_a_size_and_a_static_argument(example_file: Path) -> None:
    namespace: dict[str, object] = {}
    exec(compile(EXAMPLE, str(example_file), "exec"), namespace)
    sweep = analyze(namespace["chunked"], "f32[n]", "f32[]", sweep={"n": [64, 128], "chunk": "8..16*2"},
                    targets="cpu")
    assert isinstance(sweep, SweepReports)
    assert [p.label for p in sweep.points] == ["n=64, chunk=8", "n=64, chunk=16", "n=128, chunk=8",
                                               "n=128, chunk=16"]
    assert sweep.sweep.static == ("chunk",) and sweep.sweep.is_grid
    # each point compiled at its sizes, its static argument passed by name: n / chunk sums
    assert sweep.at(n=128, chunk=16)["cpu"].memory.output_bytes == 4 * 128 // 16
    assert sweep.at(n=64, chunk=8)["cpu"].memory.output_bytes == 4 * 64 // 8
    assert [f.status for f in sweep.map.figures] == ["fused"] * 4
    with pytest.raises(OptionProblem, match=r"sweep: n=64 is given twice"):
        analyze(namespace["chunked"], "f32[n]", "f32[]", sweep="n=64,64, chunk=8", targets="cpu")
    with pytest.raises(OptionProblem, match="size 'm' has no value"):
        analyze(namespace["chunked"], "f32[m]", "f32[]", sweep={"n": [64]}, static={"chunk": 8}, targets="cpu")
    # bisection: where a decision flips between two sizes, the sizes between are compiled (unless told not to)
    fused = namespace["fused"]
    plain = analyze(fused, "f32[rows,256]", sweep="rows=8,16", bisect=0, targets="cpu")
    assert isinstance(plain, SweepReports) and len(plain) == 2 and plain.bisect == 0 and not plain.probes
    assert plain.flips and not any(f.exact for f in plain.flips)
    located = analyze(fused, "f32[rows,256]", sweep="rows=8,16", targets="cpu")
    assert isinstance(located, SweepReports) and located.bisect == 48
    assert [f.exact for f in located.flips] == [True] * len(plain.flips)
    assert all(8 < p["rows"] < 16 and p.probe == "rows" for p in located.probes)
    with pytest.raises(OptionProblem, match=r"^bisect: 'all' is not a number of compiles"):
        analyze(fused, "f32[rows,256]", sweep="rows=8,16", bisect="all", targets="cpu")
    with pytest.raises(OptionProblem, match=r"^bisect: 4: bisection locates the flips of a sweep; it needs sweep:"):
        analyze(fused, "f32[8,256]", bisect=4, targets="cpu")
    # bad input, each one line that names the fix, before anything compiles
    with pytest.raises(OptionProblem, match=r"^static: n=64: n is a size of the arguments, given by the sweep; "
                                            r"remove n=64$"):
        analyze(namespace["chunked"], "f32[n]", "f32[]", sweep="n=8,16", static={"chunk": 8, "n": 64},
                targets="cpu")
    with pytest.raises(OptionProblem, match=r"^sweep: n=abc at column 3: 'abc' is not a size: give n positive "
                                            r"integers, such as n=1000..100000 or n=1000,4096$"):
        analyze(namespace["chunked"], "f32[n]", "f32[]", sweep="n=abc", static={"chunk": 8}, targets="cpu")


def test_analyze_source_and_a_point_that_cannot_be_made() -> None:
    source = "import jax.numpy as jnp\n\ndef total(x):\n    return jnp.sum(jnp.exp(x))\n"
    sweep = analyze_source(source, "total", "f32[n,n]", targets="cpu", sweep="n=16,100000000")
    assert isinstance(sweep, SweepReports)
    first, second = sweep
    assert len(first) == 1 and len(second) == 0
    assert second.failures[0].kind == "args" and "more than 2**53 elements" in second.failures[0].message
    assert [f.status for f in sweep.map.figures] == ["fused", "no report"]
    # a claim at the point that could not be made fails there; elsewhere it holds
    with pytest.raises(AssertionError, match=r"total on cpu: no report \(args\).*\[at n=100000000\]"):
        sweep.check(max_temp="1GB")
    sweep.check(max_temp="1GB for n=16")
    # over the sizes between, which nothing compiled, the same claim is not resolved (nor a pass)
    with pytest.raises(AssertionError, match=r"expected max temp 1GB for n<1000, found held at the 1 size compiled "
                                             r"where n<1000; not resolved: n=16..100000000"):
        sweep.check(max_temp="1GB for n<1000")
    # no flip can be found beside a point without a report: "none" is not resolved there
    with pytest.raises(AssertionError, match=r"not resolved: n=16..100000000 \(an end has no report to compare\) "
                                             r"\[NOT RESOLVED\]"):
        sweep.check(flip="none")


def test_a_sweep_of_two_functions_keeps_them_apart() -> None:
    source = ("import jax.numpy as jnp\n\ndef table(x):\n    return jnp.sum(jnp.cos(x @ x.T), 0)\n\n"
              "def scaled(x):\n    return jnp.sum(jnp.cos(x) * 2.0)\n")
    sweep = analyze_source(source, "table, scaled", "f32[n,3]", targets="cpu", sweep="n=64,128")
    assert isinstance(sweep, SweepReports)
    assert sweep.functions == ["table", "scaled"] and sweep.title == "table, scaled(f32[n,3])"
    # one row per point and function, each with its own function's figures
    by_function = {fn: [f.largest for f in sweep.map.figures_of(fn, "cpu")] for fn in sweep.functions}
    assert by_function["table"] == ["f32[64,64]", "f32[128,128]"]
    assert all("64,64" not in (largest or "") and "128,128" not in (largest or "")
               for largest in by_function["scaled"])
    text = str(sweep)
    assert re.search(r"^\s*64\s+table\s", text, re.M) and re.search(r"^\s*128\s+scaled\s", text, re.M)
    # a claim for one function is checked against that function only
    sweep.check(min_temp="table@cpu=16kB")
    with pytest.raises(AssertionError, match=r"scaled"):
        sweep.check(min_temp="scaled@cpu=16kB")
    assert SweepReports.from_json(sweep.to_json()).functions == ["table", "scaled"]


def run(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "sphinx_jaxhlo", *args, "--cache-dir", str(cache)]
    return subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ), timeout=300)


def test_the_command_line_sweeps(example_file: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    proc = run(f"{example_file}:fused", "--args", "f32[rows,256]", "--sweep", "rows=8..32*2", "--targets", "cpu",
               "--expect-reduction", "fused for rows>=16", "--expect-flip", "between 1000 and 2000", cache=cache)
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert out.startswith("fused(f32[rows,256])\nSwept: rows from 8 to 32 (3 sizes).")
    assert "CPU: the points" in out
    assert "fused on cpu at rows=16: expected reduction fused for rows>=16, found 1 fused" in out
    # whatever flips between 8 and 32 rows on this CPU, nothing lies between 1000 and 2000
    assert re.search(r"FAILED: fused on cpu: expected flip between 1000 and 2000, found .*\[FAILED\]", proc.stderr)
    proc = run(f"{example_file}:fused", "--args", "f32[rows,256]", "--sweep", "rows=8,16", "--targets", "cpu",
               "--json", cache=cache)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [p["values"] for p in doc["points"] if "probe" not in p] == [{"rows": 8}, {"rows": 16}]
    # what flips between 8 and 16 rows (on this CPU) is located by compiling the rows between
    probes = [p["values"]["rows"] for p in doc["points"] if p.get("probe") == "rows"]
    assert all(8 < rows < 16 for rows in probes) and doc["map"]["bisection"]["probes"] == len(probes)
    assert all(f["exact"] for f in doc["map"]["flips"])
    assert SweepReports.from_dict(doc).points[1].label == "rows=16"
    proc = run(f"{example_file}:fused", "--args", "f32[rows,256]", "--sweep", "rows=8..", cache=cache)
    assert proc.returncode == 2 and "error: --sweep: the sweep ends early" in proc.stderr
    proc = run(f"{example_file}:fused", "--args", "f32[256]", "--expect-reduction", "fused for rows>3",
               "--targets", "cpu", cache=cache)
    assert proc.returncode == 2 and "a claim over a range of sizes needs a sweep" in proc.stderr
    proc = run(f"{example_file}:fused", "--args", "f32[rows,256]", "--sweep", "rows=8,16", "--static", "rows=4",
               "--targets", "cpu", cache=cache)
    assert proc.returncode == 2 and proc.stderr.strip().endswith(
        "error: --static: rows=4: rows is a size of the arguments, given by the sweep; remove rows=4"), proc.stderr
    proc = run(f"{example_file}:fused", "--args", "f32[rows,256]", "--sweep", "rows=abc", cache=cache)
    assert proc.returncode == 2 and proc.stderr.strip().endswith(
        "error: --sweep: rows=abc at column 6: 'abc' is not a size: give rows positive integers, such as "
        "rows=1000..100000 or rows=1000,4096"), proc.stderr
