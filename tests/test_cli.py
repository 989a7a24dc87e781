"""The command line through ``python -m sphinx_jaxhlo``: output, exit codes 0/1/2
with messages on stderr, ``--json`` against the API, ``--hlo-file``, the cache."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import API_EXAMPLE, HLO_DIR

from sphinx_jaxhlo.api.functions import Reports, analyze
from sphinx_jaxhlo.core.targets import TARGETS

EXAMPLE = API_EXAMPLE.read_text(encoding="utf-8")

SEED_ARGS = "f32[100000,3], f32[50000,3]"


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli_example") / "jaxhlo_cli_example.py"
    path.write_text(EXAMPLE)
    return path


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def run(*args: str, cache: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "sphinx_jaxhlo", *args]
    if cache is not None:
        argv += ["--cache-dir", str(cache)]
    environ = {**os.environ, **(env or {})}
    return subprocess.run(argv, capture_output=True, text=True, env=environ, timeout=300)


def test_help_documents_everything() -> None:
    proc = run("--help")
    assert proc.returncode == 0
    out = proc.stdout
    assert out.startswith("usage: python -m sphinx_jaxhlo")
    for word in ("FILE.py[:FUNCTION]", "--args", "--targets", "--static", "--xla-flags", "--show", "--json",
                 "--expect-max-temp", "--expect-min-temp", "--expect-max-peak", "--expect-reduction",
                 "--expect-materialized", "--expect-error", "--timeout", "--no-cache", "--cache-dir", "--hlo-file",
                 "--findings", "--rows", "--chunk",
                 "examples:", "exit status:", "gpu:h100", "RESOURCE_EXHAUSTED", "~/.cache/sphinx-jaxhlo"):
        assert word in out, word


def test_summary_and_exit_0(example: Path, cache: Path) -> None:
    proc = run(f"{example}:fused", "--args", "f32[64,1024]", "--targets", "cpu", "--expect-reduction", "fused",
               "--expect-max-temp", "1MiB", cache=cache)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("fused(f32[64,1024])")
    for fact in ("temp memory", "0 B", "reductions", "fused", "Fused: the reduction on line 6", "Fusions", "line 6",
                 "expected reduction fused, found 1 fused"):
        assert fact in out, fact
    assert "FAILED" not in proc.stderr
    assert list(cache.rglob("*.json")), "the report was not cached"


def test_a_failed_expectation_exits_1(example: Path, cache: Path) -> None:
    proc = run(f"{example}:with_dot", "--args", "f32[100,3], f32[50,3]", "--targets", "cpu",
               "--expect-reduction", "fused", "--expect-materialized", "f32[50,100]", cache=cache)
    assert proc.returncode == 1
    assert "with_dot on cpu: expected reduction fused, found 1 unfused" in proc.stderr
    assert "expected materialized f32[50,100]" not in proc.stderr  # that one held
    assert "unfused" in proc.stdout


def test_a_function_that_fails_to_trace_exits_1(example: Path, cache: Path) -> None:
    proc = run(f"{example}:with_dot", "--args", "f32[10,3], f32[4,4]", "--targets", "cpu", cache=cache)
    assert proc.returncode == 1
    assert "no report (trace)" in proc.stderr and "dot_general" in proc.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["{example}:fused", "--args", "f33[3]"], "--args: unknown dtype 'f33' at column 1"),
    (["{example}:fused", "--args", "f32[3"], "--args: "),
    (["{missing}:fused", "--args", "f32[3]"], "cannot read file"),
    (["{example}:nope", "--args", "f32[3]"], "defines no 'nope' (its functions: chunked, fused, with_dot)"),
    (["{example}:fused", "--args", "f32[3]", "--targets", "gpu:h10"], "unknown target 'gpu:h10'"),
    (["{example}:fused", "--args", "f32[3]", "--expect-max-temp", "lots"], "'lots' is not a size"),
    # a value that starts with "-" reaches its option's own check (not argparse's "expected one argument")
    (["{example}:fused", "--args", "f32[3]", "--expect-max-device", "-5MB"],
     "--expect-max-device '-5MB' is not a size"),
    (["{example}:fused", "--args", "f32[3]", "--timeout", "-5"], "not a positive number"),
    (["{example}:fused", "--args", "f32[3]", "--expect-reduction", "maybe"], "expected 'fused', 'unfused' or 'none'"),
    (["{example}:fused", "--args", "f32[3]", "--expect-reduction", "gpu:h10=fused"], "unknown target 'gpu:h10'"),
    (["{example}:fused", "--args", "f32[3]", "--static", "chunk=range"], "chunk=range is not a Python literal"),
    (["{example}:fused", "--args", "f32[3]", "--show", "everything"], "unknown part 'everything'"),
    (["{example}:fused", "--args", "f32[3]", "--timeout", "0"], "not a positive number"),
    # specs written as one list, or quoted: the fix is named, nothing compiles
    (["{example}:with_dot", "--args", "[f32[10,3], f32[4,3]]"],
     "--args: [f32[10,3], f32[4,3]] is one argument (a list), but with_dot() takes 2 (pos, hkl): write one spec "
     "per argument, without the brackets: f32[10,3], f32[4,3]"),
    (["{example}:with_dot", "--args", '["f32[10,3]", "f32[4,3]"]'], "(specs are written without quotes: "),
    (["{syntax}:f", "--args", "f32[3]"], "line 1: SyntaxError"),
    (["--args", "f32[3]"], "give FILE.py[:FUNCTION]"),
    (["--hlo-file", "{example}"], "not an HLO module"),
    (["--hlo-file", "{missing}"], "cannot read HLO file"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_bad_input_exits_2(example: Path, tmp_path: Path, args: list[str], message: str) -> None:
    syntax = tmp_path / "broken.py"
    syntax.write_text("def f(x:\n")
    values = {"example": str(example), "missing": str(tmp_path / "missing.py"), "syntax": str(syntax)}
    proc = run(*[a.format(**values) for a in args], cache=tmp_path / "cache")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "error: " in proc.stderr and message in proc.stderr, proc.stderr
    assert not (tmp_path / "cache").exists()


def test_wrong_arguments_for_the_function_exit_2(example: Path, cache: Path) -> None:
    proc = run(f"{example}:with_dot", "--args", "f32[3]", "--targets", "cpu", cache=cache)
    assert proc.returncode == 2
    assert "missing 1 required positional argument: 'hkl'" in proc.stderr


def test_json_equals_the_api_report(example: Path, cache: Path) -> None:
    targets = ["cpu"] + (["gpu:h100"] if TARGETS["gpu:h100"].available() else [])
    proc = run(f"{example}:with_dot", "--args", SEED_ARGS, "--targets", ",".join(targets), "--json",
               "--expect-reduction", "unfused", cache=cache)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["problems"] == []
    assert [c["passed"] for c in doc["checks"]] == [True] * len(targets)
    from_cli = Reports.from_json(proc.stdout)

    spec = importlib.util.spec_from_file_location("jaxhlo_cli_example", example)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["jaxhlo_cli_example"] = module
    spec.loader.exec_module(module)
    from_api = analyze(module.with_dot, *SEED_ARGS.split(", "), targets=targets)

    assert from_cli.targets == from_api.targets == targets
    assert from_cli.args == from_api.args == SEED_ARGS
    for cli_report, api_report in zip(from_cli, from_api, strict=True):
        assert cli_report.function == api_report.function == "with_dot"
        assert cli_report.target == api_report.target
        assert cli_report.memory == api_report.memory
        assert cli_report.fusions == api_report.fusions
        assert cli_report.materialized == api_report.materialized
        assert cli_report.reductions == api_report.reductions
        # the same program; only the file name in the source tables differs
        # (the command line compiles the file's text, the API the function)
        assert re.sub(r'"[^"]*jaxhlo_cli_example.py"', "F", cli_report.hlo) == \
            re.sub(r'"[^"]*jaxhlo_cli_example.py"', "F", api_report.hlo)
        assert cli_report.source == api_report.source == EXAMPLE
    if "gpu:h100" in targets:
        biggest = from_cli["gpu:h100"].largest_materialized
        assert biggest is not None and biggest.shape == "f32[50000,100000]"


def test_hlo_file(cache: Path) -> None:
    dump = HLO_DIR / "gpu_h100__with_dot.txt"
    if not dump.exists():
        pytest.skip("fixture tests/data/hlo/gpu_h100__with_dot.txt is absent")
    proc = run("--hlo-file", str(dump), "--targets", "gpu:h100", "--show", "summary,memory",
               "--expect-materialized", "f32[50000,100000]", "--expect-reduction", "unfused")
    assert proc.returncode == 0, proc.stderr
    assert "not reported" in proc.stdout and "f32[50000,100000] (20.0 GB)" in proc.stdout
    assert "memory and cost figures need the compiler" in proc.stdout
    proc = run("--hlo-file", str(dump), "--json", "--expect-max-temp", "1GB")
    assert proc.returncode == 1
    assert "temp memory not reported" in proc.stderr
    report = Reports.from_json(proc.stdout)[0]
    assert report.target == "hlo" and report.memory.temp_bytes is None
    assert any(m.shape == "f32[50000,100000]" for m in report.materialized)


def test_default_cache_folder_and_no_cache(example: Path, tmp_path: Path) -> None:
    home = tmp_path / "xdg"
    args = (f"{example}:fused", "--args", "f32[8,8]", "--targets", "cpu")
    assert run(*args, "--no-cache", env={"XDG_CACHE_HOME": str(home)}).returncode == 0
    assert not home.exists()
    assert run(*args, env={"XDG_CACHE_HOME": str(home)}).returncode == 0
    assert list((home / "sphinx-jaxhlo").rglob("*.json"))


def test_the_bundled_seed_is_the_docs_seed() -> None:
    """The example the package ships (for an install from the wheel) is the guide's, byte for byte."""
    repo = Path(__file__).resolve().parents[1]
    assert (repo / "sphinx_jaxhlo" / "bundled" / "seed.py").read_bytes() == \
        (repo / "docs" / "examples" / "seed.py").read_bytes()


def test_example_writes_a_bundled_file_and_never_over_one(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from sphinx_jaxhlo.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["example", "seed.py"]) == 0
    written = (tmp_path / "seed.py").read_text(encoding="utf-8")
    assert "def with_dot(pos, hkl):" in written
    assert "seed.py:with_dot --args" in capsys.readouterr().out
    assert main(["example", "seed.py"]) == 2
    assert "exists" in capsys.readouterr().err
    assert main(["example", "seed.py", "-o", "-"]) == 0
    assert capsys.readouterr().out == written
    (tmp_path / "sub").mkdir()
    assert main(["example", "seed.py", "-o", "sub"]) == 0 and (tmp_path / "sub" / "seed.py").is_file()
    with pytest.raises(SystemExit):
        main(["example", "nope.py"])
