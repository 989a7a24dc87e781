"""The Python API through its public surface: analyze(), Reports (text, HTML,
JSON, check()) and analyze_hlo().

Compiles for the CPU with small shapes, except the seed example on gpu:h100,
whose 20 GB intermediate is the point.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import jax
import jax.numpy as jnp
import pytest
from conftest import API_EXAMPLE, HLO_DIR

import sphinx_jaxhlo
from sphinx_jaxhlo import api
from sphinx_jaxhlo.api.functions import AnalysisError, Reports, TargetFailure, analyze, analyze_hlo, analyze_source
from sphinx_jaxhlo.core.report import CompileError, Memory, Report
from sphinx_jaxhlo.core.targets import TARGETS

# These tests make jax arrays and structs in this process, which initializes
# jax's backends here: libtpu, when installed, would take the machine-wide TPU
# lock file and keep later tests' subprocesses from loading it.
os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")

EXAMPLE = API_EXAMPLE.read_text(encoding="utf-8")

needs_gpu = pytest.mark.skipif(not TARGETS["gpu:h100"].available(), reason="the CUDA compiler plugin is not installed")


def _program(hlo: str) -> str:
    """An optimized module without its source-location tables and metadata:
    the program itself (the caller's stack differs between routes)."""
    body = hlo[hlo.index("\n%") if "\n%" in hlo else 0:]
    return re.sub(r", metadata=\{[^}]*\}", "", body)


def _import(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """A module with top-level functions, imported from a real file."""
    folder = tmp_path_factory.mktemp("api_example")
    path = folder / "jaxhlo_api_example.py"
    path.write_text(EXAMPLE)
    return _import(path, "jaxhlo_api_example")


@pytest.fixture(scope="module")
def unfused(example: ModuleType) -> Reports:
    return analyze(example.with_dot, "f32[100,3]", jax.ShapeDtypeStruct((50, 3), jnp.float32), targets="cpu")


# -- analyze() -----------------------------------------------------------------------------------


def test_package_exports_the_api_without_importing_jax() -> None:
    assert sphinx_jaxhlo.analyze is api.analyze
    assert sphinx_jaxhlo.analyze_hlo is api.analyze_hlo
    assert sphinx_jaxhlo.Reports is api.Reports
    code = "import sys, sphinx_jaxhlo; sphinx_jaxhlo.Reports; assert 'jax' not in sys.modules, 'jax imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_fused_reduction_on_cpu_from_a_module(example: ModuleType) -> None:
    reports = analyze(example.fused, "f32[64,1024]", targets="cpu")
    assert reports.compiled_via == "function"
    assert [r.target for r in reports] == ["cpu"] and reports.targets == ["cpu"]
    report = reports["cpu"]
    assert report.function == "fused"
    assert report.memory.temp_bytes == 0
    assert report.all_reductions_fused is True
    assert report.reductions[0].source_lines == [6]
    assert report.source == EXAMPLE
    assert reports.check(reduction="fused", max_temp="1MiB", materialized="none", error="none") is reports


def test_unfused_reduction_and_what_check_says(unfused: Reports) -> None:
    report = unfused[0]
    assert report.memory.temp_bytes == 20_000
    assert report.largest_materialized is not None and report.largest_materialized.shape == "f32[50,100]"
    unfused.check(reduction="unfused", materialized="f32[50,100]", min_temp=20_000, max_temp={"cpu": "64KiB"},
                  max_peak="1MB")
    with pytest.raises(AssertionError) as info:
        unfused.check(reduction="fused", max_temp="1kB", materialized="cpu=none")
    message = str(info.value)
    assert "with_dot(f32[100,3], f32[50,3])" in message
    assert "with_dot on cpu: expected reduction fused, found 1 unfused" in message
    assert "expected max temp 1kB, found temp 20.0 kB (20,000 bytes)" in message
    assert "expected materialized none, found 2 buffers, largest f32[50,100]" in message


def test_check_fails_for_a_target_that_was_not_compiled(unfused: Reports) -> None:
    with pytest.raises(AssertionError, match=r"names gpu:h100, which was not compiled \(compiled: cpu\)"):
        unfused.check(max_temp="cpu=1GB, gpu:h100=1GB")


def test_check_rejects_malformed_expectations(unfused: Reports) -> None:
    with pytest.raises(ValueError, match="fused"):
        unfused.check(reduction="sideways")
    with pytest.raises(ValueError, match="unknown target 'gpu:h10'"):
        unfused.check(max_temp="gpu:h10=1GB")
    with pytest.raises(ValueError, match="not a size"):
        unfused.check(max_temp="lots")


@needs_gpu
def test_seed_on_h100_materializes_the_matrix(example: ModuleType) -> None:
    reports = analyze(example.with_dot, jax.ShapeDtypeStruct((100000, 3), jnp.float32), "f32[50000,3]",
                      targets=["gpu:h100"])
    report = reports["gpu:h100"]
    assert report.largest_materialized is not None
    assert report.largest_materialized.shape == "f32[50000,100000]"
    assert report.memory.temp_bytes is not None and report.memory.temp_bytes >= 20_000_000_000
    reports.check(materialized="f32[50000,100000]", min_temp="20GB")
    with pytest.raises(AssertionError, match=r"with_dot on gpu:h100: expected reduction fused, found 1 unfused"):
        reports.check(reduction="gpu:h100=fused")
    assert "f32[50000,100000] (20.0 GB)" in str(reports)


def test_keyword_specs_and_static_arguments(example: ModuleType) -> None:
    reports = analyze(example.chunked, "f32[1000]", scale="f32[]", static={"chunk": 10}, targets="cpu")
    assert reports.compiled_via == "function"
    assert reports.args == "f32[1000], scale=f32[]"
    assert "f32[100]" in reports[0].hlo.split("ENTRY", 1)[1]


def test_a_closure_is_compiled_as_jit_compiles_it() -> None:
    scale = 3.0

    def inner(x):
        return jnp.max(jnp.exp(x * scale) + 1.0, axis=-1)

    spec = jax.ShapeDtypeStruct((64, 256), jnp.float32)
    reports = analyze(inner, spec, targets="cpu")
    assert reports.compiled_via == "function"
    report = reports[0]
    assert report.function == "inner"
    assert report.all_reductions_fused is True
    # Lines are mapped to this file, whose text becomes the report's source.
    line = report.reductions[0].source_lines[0]
    assert "jnp.max(jnp.exp(x * scale)" in report.source.splitlines()[line - 1]
    reports.check(reduction="fused", max_temp=0)
    # the very program jax.jit compiles here, for the same shapes
    here = jax.jit(inner).trace(spec).lower().compile()
    assert _program(report.hlo) == _program(here.as_text())
    assert report.memory.temp_bytes == here.memory_analysis().temp_size_in_bytes


def test_the_function_route_and_the_source_route_give_the_same_figures() -> None:
    """A cumulative op, a jax.nn function, a custom_jvp and a reduction: what
    analyze() of a closure gives equals what the directive's route gives for
    the same code (the jax.export route this replaced was off by up to 45 %)."""
    source = textwrap.dedent("""\
        import jax
        import jax.numpy as jnp

        def f(x):
            y = jnp.cumsum(jax.nn.gelu(x), axis=-1) + jax.nn.softplus(x)
            return jnp.sum(jax.nn.logsumexp(y, axis=0) ** 2)
        """)
    namespace: dict[str, object] = {}
    exec(compile(source, "notebook_cell.py", "exec"), namespace)
    by_function = analyze(namespace["f"], "f32[512,256]", targets="cpu")  # type: ignore[arg-type]
    by_source = api.analyze_source(source, "f", "f32[512,256]", targets="cpu", source_name="notebook_cell.py")
    assert by_function[0].memory == by_source[0].memory
    assert _program(by_function[0].hlo) == _program(by_source[0].hlo)


def test_pytrees_keys_and_other_dtypes_reach_the_compiler_as_they_are() -> None:
    from typing import NamedTuple

    def total(pair, key):
        noise = jax.random.normal(key, pair.b.shape)
        return jnp.sum(pair.a.astype(jnp.float32)) + jnp.sum(pair.b + noise)

    class Pair(NamedTuple):
        a: jax.ShapeDtypeStruct
        b: jax.ShapeDtypeStruct

    pair = Pair(jax.ShapeDtypeStruct((16,), jnp.float8_e4m3fn), jax.ShapeDtypeStruct((4, 4), jnp.float32))
    reports = analyze(total, pair, jax.random.key(0), targets="cpu")
    assert reports.args == "Pair(float8_e4m3fn[16], f32[4,4]), key<fry>[]"
    assert len(reports) == 1 and reports[0].error is None
    assert "f8e4m3fn[16]" in reports[0].hlo
    assert _program(analyze(total, pair, "key<fry>[]", targets="cpu")[0].hlo) == _program(reports[0].hlo)


def test_a_jitted_function_keeps_its_donation_and_static_arguments() -> None:
    def update(params, grads, lr):
        return params - lr * grads

    spec = jax.ShapeDtypeStruct((1024, 256), jnp.float32)
    jitted = jax.jit(update, donate_argnums=0, static_argnames="lr")
    reports = analyze(jitted, spec, spec, lr=0.5, targets="cpu")
    compiled = jitted.trace(spec, spec, lr=0.5).lower().compile()
    xla = compiled.memory_analysis()
    memory = reports[0].memory
    assert memory.alias_bytes == xla.alias_size_in_bytes == 1024 * 256 * 4
    assert (memory.argument_bytes, memory.output_bytes) == (xla.argument_size_in_bytes, xla.output_size_in_bytes)
    # asking for the donation by argument works the same
    donated = analyze(update, spec, spec, static={"lr": 0.5}, donate_argnums=0, targets="cpu")
    assert donated[0].memory == memory
    plain = analyze(update, spec, spec, static={"lr": 0.5}, targets="cpu")
    assert plain[0].memory.alias_bytes == 0
    assert plain[0].memory.peak_bytes is not None and memory.peak_bytes is not None
    assert memory.peak_bytes == plain[0].memory.peak_bytes - 1024 * 256 * 4


def test_an_option_that_is_also_a_parameter_of_the_function() -> None:
    def f(x, timeout):
        return x * timeout

    with pytest.raises(TypeError, match=r"'timeout' is an option of analyze\(\) and also a parameter of f"):
        analyze(f, "f32[3]", timeout=5, targets="cpu")
    reports = analyze(f, "f32[3]", fn_kwargs={"timeout": "f32[]"}, targets="cpu")
    assert reports.args == "f32[3], timeout=f32[]"
    with pytest.raises(TypeError, match="timeout must be a number"):
        analyze(jnp.sin, "f32[3]", timeout="f32[]", targets="cpu")


def test_shardings_of_the_arguments_are_dropped_and_said_so() -> None:
    sharding = jax.sharding.SingleDeviceSharding(jax.devices("cpu")[0])
    spec = jax.ShapeDtypeStruct((8,), jnp.float32, sharding=sharding)
    reports = analyze(jnp.sin, spec, targets="cpu")
    assert any("shardings were not used" in note for note in reports.notes)
    assert not any("shardings" in note for note in analyze(jnp.sin, "f32[8]", targets="cpu").notes)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown dtype 'f33'"):
        analyze(jnp.sin, "f33[3]", targets="cpu")
    with pytest.raises(ValueError, match="unknown target"):
        analyze(jnp.sin, "f32[3]", targets="gpu:h10")
    with pytest.raises(ValueError, match="one spec per argument"):
        analyze(jnp.sin, "f32[3], f32[4]", targets="cpu")


def test_specs_given_as_one_list_name_the_fix(example: ModuleType) -> None:
    """A list where the function takes separate arguments: one line that says how to pass them, before
    anything compiles (it was a TypeError from the trace: "missing 1 required positional argument")."""
    words = (r"^analyze\(\): the argument specs were given as one list, \['f32\[10,3\]', 'f32\[4,3\]'\], but "
             r"with_dot\(\) takes 2 positional arguments \(pos, hkl\): pass one spec per argument, "
             r"analyze\(with_dot, \*specs\)$")
    with pytest.raises(TypeError, match=words):
        analyze(example.with_dot, ["f32[10,3]", "f32[4,3]"], targets="cpu")
    with pytest.raises(TypeError, match=words):
        analyze(example.with_dot, args=["f32[10,3]", "f32[4,3]"], targets="cpu")
    with pytest.raises(TypeError, match=r"^analyze_source\(\): args is the specs as one text, 'f32\[10,3\], "
                                        r"f32\[4,3\]', not a list: join them"):
        analyze_source(inspect.getsource(example), "with_dot", ["f32[10,3]", "f32[4,3]"], targets="cpu")
    # a function of one argument that is a list takes it as it is
    reports = analyze(lambda xs: xs[0] @ xs[1], ["f32[10,3]", "f32[3,4]"], targets="cpu")
    assert reports["cpu"].memory is not None


def test_a_function_that_fails_to_trace_raises(example: ModuleType) -> None:
    with pytest.raises(AnalysisError, match="dot_general requires contracting dimensions") as info:
        analyze(example.with_dot, "f32[10,3]", "f32[4,4]", targets="cpu")
    assert info.value.failures[0].kind == "trace"
    with pytest.raises(AnalysisError, match=r"TypeError: dot_general requires .* \(line \d+\)") as info:
        analyze(lambda x: x @ x, "f32[3,4]", targets="cpu")
    assert info.value.failures[0].kind == "trace"


def test_a_file_that_calls_analyze_at_top_level(tmp_path: Path) -> None:
    """A module that calls analyze() when imported: the worker may import it
    (to unpickle its function) without recursing."""
    path = tmp_path / "jaxhlo_api_self.py"
    path.write_text(textwrap.dedent("""\
        import jax.numpy as jnp
        from sphinx_jaxhlo.api.functions import analyze

        def f(x):
            return jnp.tanh(x) * 2

        REPORTS = analyze(f, "f32[8]", targets="cpu")
        """))
    sys.path.insert(0, str(tmp_path))
    try:
        import jaxhlo_api_self  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    assert len(jaxhlo_api_self.REPORTS) == 1
    reports = analyze(jaxhlo_api_self.f, "f32[8]", targets="cpu")
    assert reports.compiled_via == "function" and reports[0].error is None


def test_a_script_pasted_from_the_readme_runs_once(tmp_path: Path) -> None:
    """The function of a script is sent by value: the worker never runs the
    script again (so its prints and checks run once, and nothing needs a
    ``__main__`` guard)."""
    script = tmp_path / "seed_check.py"
    script.write_text(textwrap.dedent("""\
        import jax, jax.numpy as jnp
        import sphinx_jaxhlo

        def with_dot(pos, hkl):
            return jnp.sum(jax.vmap(lambda p: jnp.cos(jnp.dot(hkl, p)))(pos), axis=0)

        print("top level ran")
        reports = sphinx_jaxhlo.analyze(with_dot, "f32[1000,3]", "f32[500,3]", targets="cpu")
        reports.check(max_temp="cpu=64MiB", reduction="unfused")
        print(reports)
        """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("top level ran") == 1
    assert "with_dot(f32[1000,3], f32[500,3])" in done.stdout


def test_a_module_outside_the_path_is_sent_by_value(tmp_path: Path) -> None:
    path = tmp_path / "jaxhlo_api_data.py"
    (tmp_path / "scale.txt").write_text("2.0")
    path.write_text(textwrap.dedent("""\
        from pathlib import Path
        import jax.numpy as jnp

        SCALE = float((Path(__file__).parent / "scale.txt").read_text())

        def f(x):
            return jnp.sum(x * SCALE)
        """))
    module = _import(path, "jaxhlo_api_data")
    reports = analyze(module.f, "f32[8]", targets="cpu")
    assert reports[0].error is None
    assert "2" in reports[0].hlo.split("ENTRY", 1)[1]  # SCALE travelled with the function


# -- text, HTML, JSON ------------------------------------------------------------------------


def test_text_has_the_key_facts(unfused: Reports) -> None:
    text = str(unfused)
    assert text.startswith("with_dot(f32[100,3], f32[50,3])")
    for fact in ("temp memory", "20.0 kB", "peak", "largest intermediate", "f32[50,100] (20.0 kB)", "reductions",
                 "unfused", "kernels", "Unfused reduction:", "under 1.0 MB", "Materialized buffers", "line 10"):
        assert fact in text, fact
    assert "HloModule" not in text
    assert "HloModule" in unfused.to_text(["hlo"])
    assert repr(unfused) == "<Reports with_dot(f32[100,3], f32[50,3]): cpu: ok>"


def test_html_has_the_directive_look(unfused: Reports) -> None:
    html = unfused._repr_html_()
    assert html.startswith('<div class="jaxhlo-root"')
    assert "<style>" in html and ".jaxhlo {" in html  # the extension's CSS, inline
    assert '<div class="jaxhlo">' in html
    assert "Unfused reduction:" in html and "f32[50,100]" in html
    assert 'class="jaxhlo-details"' in html and "Optimized HLO" in html
    assert "jaxhlo-table" in html and "20,000 bytes" in html
    page = unfused.to_html(full_page=True)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")


def test_html_escapes_names_and_messages() -> None:
    evil = "<script>alert(1)</script>"
    report = Report(function=evil, target="cpu", memory=Memory(temp_bytes=0),
                    error=CompileError("INTERNAL", f"failed near {evil}"))
    failure = TargetFailure("gpu:h100", evil, "trace", "<img src=x onerror=alert(2)>")
    reports = Reports([report], failures=[failure], args="f32[3]")
    html = reports._repr_html_()
    assert "<script>alert" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html
    text = str(reports)
    assert evil in text and "no report (trace)" in text


def test_json_round_trip(unfused: Reports) -> None:
    again = Reports.from_json(unfused.to_json())
    assert again == unfused
    assert again[0] == unfused[0]
    assert str(again) == str(unfused)
    assert again.args == unfused.args and again.compiled_via == "function"
    with_failure = Reports(list(unfused), failures=[TargetFailure("gpu:h100", "with_dot", "timeout", "too slow")])
    assert Reports.from_json(with_failure.to_json()).failures == with_failure.failures
    with pytest.raises(ValueError):
        Reports.from_json("[1, 2]")
    with pytest.raises(ValueError):
        Reports.from_json("{not json")


def test_failures_are_listed_and_fail_check(unfused: Reports) -> None:
    reports = Reports(list(unfused), failures=[TargetFailure("gpu:h100", "with_dot", "timeout", "took too long")],
                      targets=["gpu:h100", "cpu"])
    assert reports.targets == ["gpu:h100", "cpu"]
    assert "no report (timeout)" in str(reports)
    with pytest.raises(KeyError, match="took too long"):
        reports["gpu:h100"]
    with pytest.raises(AssertionError, match=r"with_dot on gpu:h100: no report \(timeout\): took too long"):
        reports.check()


def test_an_unexpected_compile_error_fails_check() -> None:
    report = Report(function="f", target="tpu:v5e",
                    error=CompileError("RESOURCE_EXHAUSTED", "Ran out of memory in memory space hbm", 2**35, 2**34))
    reports = Reports([report])
    with pytest.raises(AssertionError, match="compilation failed with RESOURCE_EXHAUSTED"):
        reports.check()
    reports.check(error="RESOURCE_EXHAUSTED")
    assert "does not fit" in str(reports)


# -- a saved module ----------------------------------------------------------------------------


def test_analyze_hlo_of_a_saved_gpu_module() -> None:
    path = HLO_DIR / "gpu_h100__with_dot.txt"
    if not path.exists():
        pytest.skip("fixture tests/data/hlo/gpu_h100__with_dot.txt is absent")
    reports = analyze_hlo(path.read_text(), "example.py", target="gpu:h100")
    assert isinstance(reports, Reports) and len(reports) == 1  # like every other entry
    report = reports[0]
    assert report.function == "f" and report.target == "gpu:h100"
    assert report.memory.temp_bytes is None
    assert report.largest_materialized is not None
    assert report.largest_materialized.shape == "f32[50000,100000]"
    assert report.all_reductions_fused is False
    assert "not reported" in str(reports) and reports.notes == [
        "Analysed from a saved module: memory and cost figures need the compiler (not reported)."]
    reports.check(materialized="f32[50000,100000]", reduction="unfused")
    with pytest.raises(AssertionError, match="temp memory not reported"):
        reports.check(max_temp="1GB")


def test_analyze_hlo_rejects_other_text() -> None:
    with pytest.raises(ValueError, match="not an HLO module"):
        analyze_hlo("def f(x): return x")


def test_source_and_graph_parts(example: ModuleType) -> None:
    reports = analyze(example.with_dot, "f32[100,3]", "f32[50,3]", targets="cpu", show="source,summary,graph")
    html = reports.to_html()
    assert "data-jaxhlo-lines" in html and '<td class="jaxhlo-lines">line <a href="#' in html  # rows link to the source
    assert "<svg" in html and "Graph of the entry computation" in html
    assert "<script>" in html  # line highlighting, scoped to the fragment
    root = html.split('id="', 1)[1].split('"', 1)[0]
    assert f'window.jaxhloInit(document.getElementById("{root}"))' in html  # the extension's jaxhlo.js
    text = reports.to_text(["graph"])
    assert "ynn_fusion.1 -> wrapped_cosine" in text and "[materialized]" in text


def test_analyze_source_is_what_analyze_compiles(example: ModuleType) -> None:
    from_source = sphinx_jaxhlo.api.functions.analyze_source(EXAMPLE, "fused", "f32[16,16]", targets="cpu",
                                                   source_name="jaxhlo_api_example.py")
    from_function = analyze(example.fused, "f32[16,16]", targets="cpu")
    a, b = from_source[0], from_function[0]
    assert (a.function, a.memory, a.fusions, a.reductions, _program(a.hlo), a.source) == \
           (b.function, b.memory, b.fusions, b.reductions, _program(b.hlo), b.source)
    assert from_source.args == from_function.args == "f32[16,16]"


@needs_gpu
@pytest.mark.parametrize("value", ["false", "False", False])
def test_boolean_compiler_options_in_any_spelling(value: object) -> None:
    """XLA's option parser takes booleans, not the text 'false': the worker converts."""
    source = "import jax.numpy as jnp\n\ndef f(a, b):\n    return jnp.sum(a @ b)\n"
    report = api.analyze_source(source, "f", "f32[256,256], f32[256,256]", targets="gpu:h100",
                                xla_flags={"xla_gpu_enable_triton_gemm": value})[0]
    assert report.error is None
    kinds = {f.custom_kind for f in report.fusions}
    assert "__triton_nested_gemm_fusion" not in kinds and any(k and "cublas" in k for k in kinds)
