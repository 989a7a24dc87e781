"""The report's chunking suggestion: searched over argument sets, proved, checked and compiled before shown.

Every suggestion tested here is run *as written* (the ``chunked(...)`` line of the
report, evaluated) on small random inputs against the original, and compiled at
the example's shapes: its temp memory is the figure the words show.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sphinx_jaxhlo
from sphinx_jaxhlo.chunking.search import candidates, divisors, round_sizes, suggest_chunking
from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.core.targets import TARGETS

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "examples"))
import seed  # noqa: E402

needs_gpu = pytest.mark.skipif(not TARGETS["gpu:h100"].available(), reason="the CUDA compiler plugin is not installed")


def S(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.float32)


# -- the functions: textbook cases -----------------------------------------------------------------


def lse_mean(x, mu):
    """The mean over samples of a log-sum-exp over centres (a mixture's log-likelihood)."""
    return jnp.mean(jax.nn.logsumexp(x @ mu.T, axis=1))


def nbody(x, sources, masses):
    """F_i = sum_j m_j d_ij (|d_ij|^2 + 1e-3)^-3/2: chunks over sources and masses together."""
    d = sources[None, :, :] - x[:, None, :]
    r2 = jnp.sum(d * d, axis=-1) + 1e-3
    return jnp.sum(d * (masses[None, :] * r2 ** -1.5)[..., None], axis=1)


def rbf_matvec(x, y, w):
    """An RBF kernel times a vector: chunks over the points y and the weights w together."""
    d2 = jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)
    return jnp.exp(-d2 / 2.0) @ w


def softmax_weights(x):
    return jnp.sum(jax.nn.softmax(x, axis=0) * x, axis=0)


# -- the check every suggestion gets -----------------------------------------------------------------


def suggested_call(text: str) -> tuple[str, dict[str, Any]]:
    """The function name and keywords of the ``chunked(...)`` line of a suggestion."""
    line = text.split("\n")[1]
    call = ast.parse(line, mode="eval").body
    if isinstance(call, ast.Call) and ast.unparse(call.func) in ("jax.grad", "jax.value_and_grad"):
        call = call.args[0]  # a gradient's suggestion: the function chunked before differentiation
    assert isinstance(call, ast.Call) and ast.unparse(call.func) == "sphinx_jaxhlo.chunked", line
    return ast.unparse(call.args[0]), {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}


def shown_figure(text: str) -> str:
    """The compiled temp memory the words of a suggestion show."""
    found = re.search(r"(?:needs|still needs) (\d[\d.]* [kMGT]?B)", text.split("\n")[0])
    assert found, text
    return found.group(1)


def check_as_written(text: str, namespace: dict[str, Any], specs: Sequence[Any], target: str = "cpu",
                     kwargs: dict[str, Any] | None = None) -> Callable[..., Any]:
    """Run the suggested call as written (evaluated in ``namespace``) on small random inputs against
    the original, with two chunks and a remainder; compile it at ``specs`` for ``target``: its temp
    memory must be the figure shown.  Returns the suggested function."""
    line = text.split("\n")[1]
    name, keywords = suggested_call(text)
    suggested = eval(line, {**namespace, "sphinx_jaxhlo": sphinx_jaxhlo, "jax": jax})
    original = namespace[name]
    outer = ast.parse(line, mode="eval").body
    if isinstance(outer, ast.Call) and ast.unparse(outer.func) in ("jax.grad", "jax.value_and_grad"):
        wrt = next(ast.literal_eval(k.value) for k in outer.keywords if k.arg == "argnums")
        original = eval(ast.unparse(outer.func), {"jax": jax})(original, argnums=wrt)
    nums = keywords["argnums"] if isinstance(keywords["argnums"], tuple) else (keywords["argnums"],)
    axes = keywords["axis"] if isinstance(keywords["axis"], tuple) else (keywords["axis"],) * len(nums)
    size = keywords["size"]
    n_small = 2 * size + max(1, size // 2)
    rng = np.random.default_rng(0)
    values = []
    for i, spec in enumerate(specs):
        shape = [min(d, 64) for d in spec.shape]
        if i in nums:
            shape[axes[nums.index(i)]] = n_small
        values.append(jnp.asarray(rng.standard_normal(shape), spec.dtype))
    kwargs = kwargs or {}
    want = jax.jit(lambda *a: original(*a, **kwargs))(*values)
    got = jax.jit(lambda *a: suggested(*a, **kwargs))(*values)
    for w, g in zip(jax.tree.leaves(want), jax.tree.leaves(got), strict=True):
        w64, g64 = np.asarray(w, np.float64), np.asarray(g, np.float64)
        # the tolerance of the tool's own check, by the result's dtype
        tolerance = {"float16": 3e-3, "bfloat16": 3e-2, "float64": 1e-10}.get(np.dtype(w.dtype).name, 1e-4)
        assert float(np.max(np.abs(w64 - g64))) <= tolerance * float(np.max(np.abs(w64))), (line, w, g)
    reports = sphinx_jaxhlo.analyze(suggested, *specs, targets=target, static=kwargs or None)
    assert format_bytes(reports[target].memory.temp_bytes) == shown_figure(text), text
    return suggested


# -- the search --------------------------------------------------------------------------------------


def test_candidates_are_argument_sets_sharing_an_axis_longest_first_fewest_first():
    found = [(c.argnums, c.axes, c.length) for c in candidates((S(4000, 8), S(20000, 8), S(20000)))]
    assert found[:3] == [((1,), (0,), 20000), ((2,), (0,), 20000), ((1, 2), (0, 0), 20000)]
    assert found[3] == ((0,), (0,), 4000)
    assert ((0, 1), (1, 1), 8) in found
    # an axis too short to bound the intermediate is not tried; nor a set naming an argument twice
    assert all(c.length >= 100 for c in candidates((S(4000, 8), S(20000, 8), S(20000)), min_length=100))
    assert not any(len(set(c.argnums)) < len(c.argnums) for c in candidates((S(64, 64),)))
    assert round_sizes(1001) == [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
    assert round_sizes(1000) == [1, 2, 5, 10, 20, 50, 100, 200, 500]


def test_a_mean_is_combined_as_a_mean_and_run_as_written_equals_the_original():
    specs = (S(40000, 64), S(512, 64))
    text = suggest_chunking(lse_mean, specs, {}, 82 * 10**6, budget=8 * 10**6, original_temp=82 * 10**6)
    name, keywords = suggested_call(text)
    assert (name, keywords["argnums"], keywords["combine"]) == ("lse_mean", 0, "mean")
    assert "combine='mean'" in text.split("\n")[0]
    assert "Checked: the code shown (lse_mean_chunked) ran as written on random" in text
    suggested = check_as_written(text, {"lse_mean": lse_mean}, specs)
    # the size is the largest divisor of the axis whose compiled temp meets the budget: the next does not
    sizes = divisors(40000)
    assert 40000 % keywords["size"] == 0
    over = sphinx_jaxhlo.chunked(lse_mean, 0, sizes[sizes.index(keywords["size"]) + 1], combine="mean")
    assert sphinx_jaxhlo.analyze(over, *specs, targets="cpu")["cpu"].memory.temp_bytes > 8 * 10**6
    assert sphinx_jaxhlo.analyze(suggested, *specs, targets="cpu")["cpu"].memory.temp_bytes <= 8 * 10**6


def test_two_arguments_chunked_together_points_and_weights():
    specs = (S(4000, 8), S(4000, 8), S(4000))
    text = suggest_chunking(rbf_matvec, specs, {}, 64 * 10**6, budget=8 * 10**6, original_temp=64 * 10**6)
    _, keywords = suggested_call(text)
    assert (keywords["argnums"], keywords["axis"], keywords["combine"]) == ((1, 2), 0, "sum")
    assert "axis 0 of y and w (4000 long)" in text
    assert "def rbf_matvec_chunked(x, y, w):" in text
    check_as_written(text, {"rbf_matvec": rbf_matvec}, specs)


def test_where_no_chunking_is_provable_one_line_says_where_the_proof_refuses():
    text = suggest_chunking(softmax_weights, (S(20000, 300),), {}, 240 * 10**6, budget=8 * 10**6)
    assert "\n" not in text and text.startswith("No chunking to suggest: over axis 0 of x (20000 long), the proof "
                                                 "on the jaxpr refuses: `sub` at "), text
    assert "(as a softmax's normalisation does)" in text and "over axis 1 of x (300 long)" in text
    # a variance over the axis meets its own mean: refused too, at the subtraction
    text = suggest_chunking(lambda x: jnp.var(x, axis=0), (S(20000, 300),), {}, 240 * 10**6, budget=10**6)
    assert text.startswith("No chunking to suggest: over axis 0 of x (20000 long), the proof on the jaxpr refuses: "
                           "`sub`"), text


def test_no_size_meets_the_budget_is_said_with_the_smallest_size_figure():
    specs = (S(4000, 8), S(4000, 8), S(4000))
    text = suggest_chunking(rbf_matvec, specs, {}, 64 * 10**6, budget=100, original_temp=64 * 10**6)
    words = text.split("\n")[0]
    # the smallest size tried is the trip cap's: 4000 / 1024 trips, rounded up
    assert "no chunk size of at most 1000 trips brings the compiled temp memory within the budget of 100 B" in words
    assert suggested_call(text)[1]["size"] == 4
    assert "smaller chunks are not suggested: over 1,024 trips cost time by themselves." in words
    check_as_written(text, {"rbf_matvec": rbf_matvec}, specs)
    # when even that is no better than the original, no call is shown: one line says what was found
    text = suggest_chunking(rbf_matvec, specs, {}, 64 * 10**6, budget=100, original_temp=1)
    assert "\n" not in text and text.startswith(
        "No chunking to suggest: over axis 0 of y and w (4000 long), chunked() is proved on the jaxpr "
        "(combine='sum'), but compiled for cpu over chunks of 4 it needs "), text
    assert "no less than the unchunked 1 B; over axis 0 of x (4000 long), the proof on the jaxpr refuses" in text


def test_analyze_suggests_the_seed_chunking_compiled_and_run_as_written(tmp_path):
    reports = sphinx_jaxhlo.analyze(seed.with_dot, "f32[100000,3]", "f32[50000,3]", targets="cpu",
                                    cache_dir=str(tmp_path))
    text = reports["cpu"].chunk_suggestion
    # the largest size that divides 100000 and fits the budget (200 before divisors were candidates)
    assert text.split("\n")[1] == "sphinx_jaxhlo.chunked(with_dot, argnums=0, size=250, axis=0, combine='sum')"
    assert "over 400 chunks of 250" in text
    assert "needs 50.0 MB of temp memory instead of 20.0 GB (budget 67.1 MB)" in text
    assert ("Checked: the code shown (with_dot_chunked) ran as written on random f32[583,3], f32[64,3], in 3 chunks "
            "(2 of 250 and one of 83), against with_dot") in text
    assert "Chunking would bound it: the result reduces over axis 0 of pos (100000 long)" in str(reports)
    check_as_written(text, {"with_dot": seed.with_dot}, (S(100000, 3), S(50000, 3)))
    # the chunked function stores one 40 MB block: under the budget, nothing more to suggest
    chunked_reports = sphinx_jaxhlo.analyze(sphinx_jaxhlo.chunked(seed.with_dot, size=250), "f32[100000,3]",
                                            "f32[50000,3]", targets="cpu", cache_dir=str(tmp_path))
    assert chunked_reports["cpu"].chunk_suggestion == ""


@pytest.mark.slow
@needs_gpu
def test_textbook_cases_on_the_h100_each_run_as_written():
    """N-body forces (sources and masses), an RBF kernel times a vector (points and weights), a
    nearest-neighbour distance (a minimum): each suggested on the H100, and its figure is the compile's."""

    def nn_dist(queries, points):
        d2 = (jnp.sum(queries ** 2, axis=1)[:, None] + jnp.sum(points ** 2, axis=1)[None, :]
              - 2.0 * queries @ points.T)
        return jnp.min(d2, axis=1)

    cases = [(nbody, (S(20000, 3), S(20000, 3), S(20000)), ((1, 2), "sum")),
             (rbf_matvec, (S(20000, 8), S(20000, 8), S(20000)), ((1, 2), "sum")),
             (nn_dist, (S(20000, 3), S(50000, 3)), (1, "min"))]
    for fn, specs, (argnums, combine) in cases:
        report = sphinx_jaxhlo.analyze(fn, *specs, targets="gpu:h100")["gpu:h100"]
        text = report.chunk_suggestion
        _, keywords = suggested_call(text)
        assert (keywords["argnums"], keywords["combine"]) == (argnums, combine), text
        assert report.memory.temp_bytes > 10**9
        check_as_written(text, {fn.__name__: fn}, specs, target="gpu:h100")
        # the promise holds: the memory shown is within the budget (the 40 MB promised, 78.8 MB compiled)
        assert "(budget 67.1 MB)" in text


# -- every suggestion the site and the test corpus make ------------------------------------------------


def _site_suggestions() -> list[tuple[str, str, Any, str]]:
    """(where, suggestion, example, target) for every snapshot of the docs that holds a suggestion."""
    import json

    from sphinx_jaxhlo.core.example import parse_example
    from sphinx_jaxhlo.pipeline.scan import find_examples
    from sphinx_jaxhlo.store import snapshots

    docs = ROOT / "docs"
    out = []
    for page in sorted(docs.rglob("*.md")):
        if "_build" in page.parts:
            continue
        docname = page.relative_to(docs).with_suffix("").as_posix()
        folder = snapshots.document_folder(docs / "_snapshots", docname)
        for ordinal, found in enumerate(find_examples(page.read_text(encoding="utf-8"), True), 1):
            if found.argument:
                path = (page.parent / found.argument).resolve()
                source, source_name = path.read_text(encoding="utf-8"), path.name
            else:
                source, source_name = found.content, "example.py"
            example = parse_example(source, found.options, docname=docname, line=found.line, ordinal=ordinal,
                                    source_name=source_name).with_chunk_variants().with_grad_variants()
            for function in example.functions:
                for target in TARGETS:
                    slot = folder / (snapshots.slot_name(example.slot_name, function, target) + ".json")
                    if not slot.is_file():
                        continue
                    facts = json.loads(slot.read_text(encoding="utf-8"))["facts"]
                    if "\n" in facts.get("chunk_suggestion", ""):  # a suggestion, not the one line of none
                        out.append((f"{docname}: {slot.name}", facts["chunk_suggestion"], example, facts["target"]))
    return out


def _check_example_suggestion(text: str, example: Any, target: str) -> None:
    from sphinx_jaxhlo.compiler.arguments import to_shape_dtype_structs

    namespace: dict[str, Any] = {"__name__": "__jaxhlo_example__"}
    exec(compile(example.source, example.source_name, "exec"), namespace)
    args, kwargs = to_shape_dtype_structs(example.specs)
    kwargs.update({k: ast.literal_eval(v) for k, v in example.static})
    check_as_written(text, namespace, args, target, kwargs)


@pytest.mark.slow
def test_every_suggestion_of_the_site_runs_as_written_and_compiles_to_its_figure():
    found = _site_suggestions()
    assert found, "the chunked page's seed example makes a suggestion on the CPU and the H100"
    for where, text, example, target in found:
        if not TARGETS[target].available():
            continue
        assert "Checked: the code shown (" in text and "ran as written on random" in text, where
        _check_example_suggestion(text, example, target)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", pytest.param("gpu:h100", marks=needs_gpu)])
def test_every_suggestion_of_the_corpus_runs_as_written_and_compiles_to_its_figure(target):
    from sphinx_jaxhlo.core.example import parse_example

    sys.path.insert(0, str(ROOT / "tests" / "data" / "corpus"))
    from programs import PROGRAMS

    made = []
    for program in PROGRAMS:
        if target not in program.targets:
            continue
        reports = sphinx_jaxhlo.analyze_source(program.source, "f", program.args, targets=target,
                                               static=dict((k, ast.literal_eval(v)) for k, v in program.static)
                                               or None)
        text = reports[target].chunk_suggestion if len(reports) else ""
        if "\n" in text:  # a suggestion, not the one line that says why there is none
            example = parse_example(program.source, {"function": "f", "args": program.args,
                                                     "static": ", ".join(f"{k}={v}" for k, v in program.static)})
            _check_example_suggestion(text, example, target)
            made.append(program.name)
    print(f"suggestions on {target}: {made}")


# -- issue 54: where the suggestion is needed most ---------------------------------------------------------


def xent_bf16(h, w, labels):
    """A cross-entropy in bf16, the label picked by a one-hot mask (no gather)."""
    logits = h @ w
    lse = jax.nn.logsumexp(logits.astype(jnp.float32), axis=-1)
    picked = jnp.sum(jnp.where(labels[:, None] == jnp.arange(w.shape[1]), logits, 0), axis=-1)
    return jnp.mean(lse - picked.astype(jnp.float32))


def xent_gather(h, w, labels):
    logits = h @ w
    lse = jax.nn.logsumexp(logits.astype(jnp.float32), axis=-1)
    return jnp.mean(lse - jnp.take_along_axis(logits, labels[:, None], axis=-1)[:, 0].astype(jnp.float32))


XENT_SPECS = (jax.ShapeDtypeStruct((2048, 64), jnp.bfloat16), jax.ShapeDtypeStruct((64, 8192), jnp.bfloat16),
              jax.ShapeDtypeStruct((2048,), jnp.int32))


def test_a_bf16_cross_entropy_gets_a_proved_suggestion_checked_in_bf16():
    text = suggest_chunking(xent_bf16, XENT_SPECS, {}, 201 * 10**6, original_temp=201 * 10**6)
    assert "\n" in text, text  # before: every candidate dropped ("cannot make random values of dtype bfloat16")
    _, keywords = suggested_call(text)
    assert (keywords["argnums"], keywords["combine"]) == ((0, 2), "mean"), text
    assert "is proved on the jaxpr (combine='mean')" in text and "ran as written on random bf16[" in text, text
    check_as_written(text, {"xent_bf16": xent_bf16}, XENT_SPECS)


def test_random_bf16_and_f16_values_are_made_in_f32_and_cast():
    spec16 = (jax.ShapeDtypeStruct((100, 8), jnp.float16),)
    result = sphinx_jaxhlo.verify_chunked(lambda x: jnp.sum(jnp.tanh(x), axis=0), *spec16, size=16)
    assert result.passed and result.shapes == ("f16[37,8]",), result.describe()


def test_what_the_proof_cannot_follow_is_not_said_to_change_the_result():
    with pytest.raises(sphinx_jaxhlo.ChunkError) as caught:
        sphinx_jaxhlo.check_chunkable(xent_gather, *XENT_SPECS, argnums=(0, 2), combine="mean")
    assert caught.value.unknown and caught.value.primitive == "gather"
    assert "would change the result" not in str(caught.value)
    assert "the proof cannot follow it, so it cannot prove the chunked rewrite" in str(caught.value)
    text = suggest_chunking(xent_gather, XENT_SPECS, {}, 201 * 10**6)
    assert "over axis 0 of h (2048 long), the proof on the jaxpr cannot prove it: `gather` at " in text, text
    # a softmax's normalisation is proved to change the result: said so
    with pytest.raises(sphinx_jaxhlo.ChunkError, match="would change the result") as caught:
        sphinx_jaxhlo.check_chunkable(softmax_weights, S(100, 3))
    assert not caught.value.unknown


def test_the_size_is_capped_by_the_trips_and_the_words_say_what_each_trip_reads(monkeypatch):
    from sphinx_jaxhlo.chunking import search

    assert search.trip_cap(268 * 2**20) == 16 and search.trip_cap(4 * 2**20) == 1024
    # nothing read again (every array argument split), or little: the trips' own cost bounds them
    assert search.trip_cap(0) == search.trip_cap(600_000) == search.MAX_TRIPS
    # each trip reads all of w (1 MB): with 4 MB to read again at most, 16 trips (the least cap) at most
    monkeypatch.setattr(search, "REREAD_BYTES", 4 * 2**20)
    text = suggest_chunking(xent_bf16, XENT_SPECS, {}, 201 * 10**6, budget=4 * 2**20, original_temp=201 * 10**6)
    _, keywords = suggested_call(text)
    assert keywords["size"] >= 2048 // 16, text  # the budget alone would take smaller chunks
    words = text.split("\n")[0]
    assert f"The loop takes {2048 // keywords['size']} trips, each reading all of w (1.0 MB) again" in words, words
    assert "smaller chunks are not suggested: more trips would read over 4.2 MB again" in words, words


def kde(q, x):
    d = q[:, None, :] - x[None, :, :]
    return jnp.sum(jnp.exp(-0.5 * jnp.sum(d * d, axis=-1)), axis=1)


def test_a_compile_that_ran_out_of_memory_still_gets_its_search():
    """The worker's gate: a RESOURCE_EXHAUSTED report has no analysis (no reductions, no temp), and the
    search runs all the same: it is where the reader is stuck."""
    from sphinx_jaxhlo.compiler.worker import _suggest_chunking
    from sphinx_jaxhlo.core.report import CompileError, Report

    report = Report(function="kde", target="cpu", error=CompileError("RESOURCE_EXHAUSTED", "out of memory",
                                                                    18_650_000_000, 15_750_000_000))
    specs = (S(2000, 3), S(20000, 3))
    text = _suggest_chunking(report, kde, specs, {}, 0, "kde", TARGETS["cpu"], {})
    _, keywords = suggested_call(text)
    assert (keywords["argnums"], keywords["combine"]) == (1, "sum"), text
    assert "where the unchunked program does not compile for cpu (RESOURCE_EXHAUSTED, 18.6 GB needed)" in text
    check_as_written(text, {"kde": kde}, specs)
    # the report's text shows it under the failure, where the reader is stuck
    from sphinx_jaxhlo.render.text import report_text

    report.chunk_suggestion = text
    shown = report_text(report, ["summary"])
    assert "out of memory" in shown and "where the unchunked program does not compile" in shown, shown
    assert "sphinx_jaxhlo.chunked(kde, argnums=1" in shown, shown
    other = Report(function="kde", target="cpu", error=CompileError("INVALID_ARGUMENT", "no"))
    assert _suggest_chunking(other, kde, specs, {}, 0, "kde", TARGETS["cpu"], {}) == ""


ENERGY = '''
import jax.numpy as jnp


def energy(pos, src):
    d = pos[:, None, :] - src[None, :, :]
    r2 = jnp.sum(d * d, axis=-1) + 1e-3
    return jnp.sum(r2 ** -0.5)
'''


def _energy() -> Callable[..., Any]:
    namespace: dict[str, Any] = {}
    exec(ENERGY, namespace)
    return namespace["energy"]


def _check_gradient_suggestion(text: str, energy: Callable[..., Any], specs: Sequence[Any], value: bool) -> None:
    words, line, *code = text.split("\n")
    form = "value_and_grad" if value else "grad"
    assert line.startswith(f"jax.{form}(sphinx_jaxhlo.chunked(energy, argnums="), text
    assert line.endswith("axis=0, combine='sum'), argnums=0)"), line
    assert words.startswith("Chunking would bound it: the gradient of energy chunked before differentiation: the "
                            "result reduces over axis 0 of "), words
    assert "ran as written" in words and f"against energy_{'grad' if value else 'grad_only'}" in words, words
    inner = ast.parse(line, mode="eval").body.args[0]  # the chunked(...) call
    size = next(ast.literal_eval(k.value) for k in inner.keywords if k.arg == "size")
    namespace = {"energy": energy, "jax": jax, "sphinx_jaxhlo": sphinx_jaxhlo}
    exec("\n".join(code), namespace)  # the code shown, its last line the gradient
    pasted = namespace[code[-1].split(" = ")[0]]
    pos, src = np.random.default_rng(0).standard_normal((2, 2 * size + 7, 3)).astype(np.float32)
    want = (jax.value_and_grad if value else jax.grad)(energy)(pos, src)
    for got in (pasted(pos, src), eval(line, namespace)(pos, src)):
        for w, g in zip(jax.tree.leaves(want), jax.tree.leaves(got), strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=2e-4 * float(np.max(np.abs(w))))
    spec_temp = sphinx_jaxhlo.analyze(eval(line, namespace), *specs, targets="cpu")["cpu"].memory.temp_bytes
    assert format_bytes(spec_temp) == shown_figure(text), text


def test_an_energy_under_grad_is_chunked_before_differentiation():
    """`:grad: pos` (the directive's path, analyze_source): the report of energy_grad suggests
    jax.value_and_grad(chunked(energy, argnums=1, ...), argnums=0), run as written and compiled."""
    specs = (S(6000, 3), S(6000, 3))
    reports = sphinx_jaxhlo.analyze_source(ENERGY, "energy", "f32[6000,3], f32[6000,3]", targets="cpu",
                                           grad="pos")
    by_name = {r.function: r for r in reports}
    assert by_name["energy_grad"].memory.temp_bytes > 100 * 10**6
    _check_gradient_suggestion(by_name["energy_grad"].chunk_suggestion, _energy(), specs, True)
    # analyze(grad=) of a live function: the same
    grad_report = next(r for r in sphinx_jaxhlo.analyze(_energy(), *specs, targets="cpu", grad=0)
                       if r.function.endswith("_grad"))
    _check_gradient_suggestion(grad_report.chunk_suggestion, _energy(), specs, True)


def test_a_gradient_variant_is_read_from_the_generated_code():
    from sphinx_jaxhlo.chunking.search import gradient_variant_of
    from sphinx_jaxhlo.gradient.source import add_grad_variant

    source = add_grad_variant(ENERGY, "energy", ("src", "jax.grad", "jax.value_and_grad"))
    assert gradient_variant_of(source, "energy_grad") == ("energy", (1,), True)
    assert gradient_variant_of(source, "energy_grad_only") == ("energy", (1,), False)
    assert gradient_variant_of(source, "energy") is None
    assert gradient_variant_of(ENERGY + "\n\ndef energy_grad(pos, src):\n    return pos\n", "energy_grad") is None


def test_a_gradient_written_by_hand_whose_sum_is_a_contraction_gets_its_search():
    """``jax.grad`` of a sum over data, written in the function: on the CPU its compiled program has
    no reduce (the transposed dot contracts the data's axis) and 160 MB of temp; the search still
    runs, and its chunking over the data is proved, run as written and compiled."""
    namespace: dict = {}
    exec("import jax\nimport jax.numpy as jnp\n\n\ndef loss_grad(w, x):\n"
         "    return jax.grad(lambda w: jnp.sum(jnp.cos(x @ w)))(w)\n", namespace)
    report = sphinx_jaxhlo.analyze(namespace["loss_grad"], "f32[3,2000]", "f32[20000,3]", targets="cpu")["cpu"]
    assert not report.reductions and report.memory.temp_bytes >= 160 * 10**6
    text = report.chunk_suggestion
    assert text.startswith("Chunking would bound it: the result reduces over axis 0 of x (20000 long)"), text
    assert "sphinx_jaxhlo.chunked(loss_grad, argnums=1, size=" in text and "Checked: the code shown" in text


def test_a_contraction_is_known_by_the_analysis_test_whatever_computes_it():
    """The search runs for a program whose sum is a contraction however XLA computes it: a fusion
    holding a dot or a convolution, or a GEMM library call (a cuBLAS custom call holds no dot); an
    elementwise fusion or a sort is no contraction."""
    from sphinx_jaxhlo.compiler.worker import _contracts
    from sphinx_jaxhlo.core.report import Fusion

    def report_of(*fusions: tuple[list[str], str | None]) -> Any:
        made = [Fusion(f"f{i}", "Custom" if custom else "Loop", custom, ops, "f32[8,8]", 256)
                for i, (ops, custom) in enumerate(fusions)]
        return type("R", (), {"fusions": made})()

    assert _contracts(report_of((["custom-call"], "__cublas$gemm")))
    assert _contracts(report_of((["exponential"], None), (["dot", "tanh"], "__triton_nested_gemm_fusion")))
    assert _contracts(report_of((["convolution"], None)))
    assert not _contracts(report_of((["exponential", "multiply"], None), (["sort"], None)))


def weighted_exp_colsum(x, w):
    return jnp.sum(jnp.exp(x) * w[:, None], axis=0)


def test_a_chunking_that_reads_nothing_again_is_capped_at_its_trips_own_cost(monkeypatch):
    """x and w chunked together: no argument is read again, and still no more than MAX_TRIPS trips
    (each costs time by itself: benchmarks/trip_cost.py); the words say which cap chose the size."""
    from sphinx_jaxhlo.chunking import search

    monkeypatch.setattr(search, "MAX_TRIPS", 8)
    specs = [S(4096, 64), S(4096)]
    text = suggest_chunking(weighted_exp_colsum, specs, {}, 4096 * 64 * 4, budget=1024)
    _, keywords = suggested_call(text)
    assert keywords["argnums"] == (0, 1) and keywords["size"] >= 4096 // 8, text
    assert f"The loop takes {4096 // keywords['size']} trips; smaller chunks are not suggested: over 8 trips " \
           "cost time by themselves." in text.split("\n")[0], text
