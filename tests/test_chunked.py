"""chunked(): the rewrite, its proof on the jaxpr, the plain-JAX code it writes, the numerical check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sphinx_jaxhlo
from sphinx_jaxhlo import ChunkError, check_chunkable, chunked, chunked_source, verify_chunked

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "examples"))
import seed  # noqa: E402

SEED_SPECS = (jax.ShapeDtypeStruct((100000, 3), jnp.float32), jax.ShapeDtypeStruct((50000, 3), jnp.float32))


def _normal(key: int, shape: tuple[int, ...]) -> jax.Array:
    return jax.random.normal(jax.random.key(key), shape, jnp.float32)


def rbf_sum(x, y):
    """The sum of an RBF kernel over all pairs (x_i, y_j)."""
    d2 = jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)
    return jnp.sum(jnp.exp(-d2 / 2.0))


def mse(x, w, y):
    """A mean over a batch of rows of x and y."""
    return jnp.mean((x @ w - y) ** 2)


def column_max(x, w):
    return jnp.max(jnp.tanh(x @ w), axis=0)


def _close(a, b, rtol: float = 1e-5) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=rtol * float(np.max(np.abs(b))))


# -- valid rewrites ---------------------------------------------------------------------------------------


def test_seed_with_dot_in_chunks_of_1000_equals_the_original():
    pos, hkl = _normal(0, (3500, 3)), _normal(1, (200, 3))
    got = jax.jit(chunked(seed.with_dot, argnums=0, size=1000))(pos, hkl)
    assert got.shape == (200,)
    _close(got, jax.jit(seed.with_dot)(pos, hkl), 1e-4)


def test_rbf_sum_over_pairs_chunked_over_either_argument():
    x, y = _normal(2, (130, 4)), _normal(3, (70, 4))
    want = rbf_sum(x, y)
    _close(chunked(rbf_sum, argnums=0, size=32)(x, y), want)
    _close(chunked(rbf_sum, argnums=1, size=32)(x, y), want)


def test_mean_over_a_batch_split_in_two_arguments():
    x, w, y = _normal(4, (103, 5)), _normal(5, (5, 2)), _normal(6, (103, 2))
    got = chunked(mse, argnums=(0, 2), size=25, combine="mean")(x, w, y)
    _close(got, mse(x, w, y))


def test_max_over_rows():
    x, w = _normal(7, (90, 6)), _normal(8, (6, 3))
    _close(chunked(column_max, size=16, combine="max")(x, w), column_max(x, w))
    _close(chunked(lambda x: jnp.min(x, axis=0), size=16, combine="min")(x), jnp.min(x, axis=0))


def test_the_remainder_chunk_is_counted_once():
    x = jnp.arange(10.0)
    f = chunked(lambda v: jnp.sum(v * v), size=4)  # chunks of 4, 4 and 2
    assert float(f(x)) == float(jnp.sum(x * x)) == 285.0
    # a size beyond the axis: one chunk
    assert float(chunked(jnp.sum, size=1000)(x)) == 45.0


def test_other_axis_and_a_keyword_argument():
    x = _normal(9, (3, 50, 4))

    def f(x, scale=1.0):
        return jnp.sum(jnp.cos(x) * scale, axis=1)

    got = chunked(f, size=12, axis=1)(x, scale=2.0)
    _close(got, f(x, scale=2.0))


def test_grad_of_the_chunked_function_is_the_gradient_of_the_original():
    pos, hkl = _normal(10, (2300, 3)), _normal(11, (64, 3))
    want = jax.grad(lambda p: jnp.sum(seed.with_dot(p, hkl) ** 2))(pos)
    got = jax.jit(jax.grad(lambda p: jnp.sum(chunked(seed.with_dot, size=1000)(p, hkl) ** 2)))(pos)
    _close(got, want, 1e-4)
    # with respect to the argument that is not chunked too
    want_h = jax.grad(lambda h: jnp.sum(seed.with_dot(pos, h)))(hkl)
    got_h = jax.grad(lambda h: jnp.sum(chunked(seed.with_dot, size=1000)(pos, h)))(hkl)
    _close(got_h, want_h, 1e-4)


def test_vmap_of_the_chunked_function():
    batch, hkl = _normal(12, (3, 700, 3)), _normal(13, (40, 3))
    want = jax.vmap(seed.with_dot, in_axes=(0, None))(batch, hkl)
    got = jax.jit(jax.vmap(chunked(seed.with_dot, size=256), in_axes=(0, None)))(batch, hkl)
    _close(got, want, 1e-4)


# -- refusals --------------------------------------------------------------------------------------------


def _refusal(fn, *args, **kw) -> ChunkError:
    with pytest.raises(ChunkError) as info:
        chunked(fn, **kw)(*args)
    return info.value


def softmax_total(x):
    return jnp.sum(jax.nn.softmax(x, axis=0) * x, axis=0)


def test_refuses_a_softmax_over_the_chunked_axis_naming_the_line():
    error = _refusal(softmax_total, _normal(0, (40, 3)), size=8)
    assert error.primitive == "sub"
    assert "softmax" in str(error)
    assert f"test_chunked.py:{softmax_total.__code__.co_firstlineno + 1}" in error.where


def test_refuses_a_cumsum_along_the_chunked_axis():
    def running(x):
        return jnp.sum(jnp.cumsum(x, axis=0), axis=0)

    error = _refusal(running, _normal(0, (40, 3)), size=8)
    assert error.primitive == "cumsum"
    assert "accumulates along the chunked axis" in str(error)
    assert f"test_chunked.py:{running.__code__.co_firstlineno + 1}" in error.where
    # along another axis it is fine
    def across(x):
        return jnp.sum(jnp.cumsum(x, axis=1), axis=0)

    x = _normal(1, (40, 3))
    _close(chunked(across, size=8)(x), across(x))


def test_refuses_a_dot_contracting_over_the_chunked_axis():
    w = _normal(0, (3, 40))
    error = _refusal(lambda x: jnp.sum(jnp.cos(w @ x)), _normal(1, (40, 5)), size=8)
    assert error.primitive == "dot_general"
    assert "contracts the chunked axis with an operand that is not split" in str(error)


def test_a_dot_contracting_two_chunked_operands_is_a_sum_but_not_under_a_cosine():
    x, y = _normal(2, (40, 3)), _normal(3, (40, 4))
    _close(chunked(lambda a, b: a.T @ b, argnums=(0, 1), size=8)(x, y), x.T @ y)
    error = _refusal(lambda a, b: jnp.cos(a.T @ b), x, y, argnums=(0, 1), size=8)
    assert error.primitive == "cos"
    assert "does not distribute over a sum of chunks" in str(error)


def test_refuses_an_output_that_keeps_the_axis():
    error = _refusal(lambda x: jnp.cos(x) * 2.0, _normal(0, (40, 3)), size=8)
    assert "the output keeps the chunked axis (as its dimension 0)" in str(error)


def test_refuses_what_mixes_elements_across_the_axis():
    x = _normal(0, (40, 3))
    cases = {
        "pairs elements at different positions": lambda x: jnp.sum(x @ x.T),
        "varies along it but is not split": lambda x: jnp.sum(x * jnp.arange(40.0)[:, None]),
        "counted once per chunk": lambda x: jnp.sum(x) + 1.0,
        "sorts along the chunked axis": lambda x: jnp.sum(jnp.sort(x, axis=0)[:3]),
        "picks or moves elements by their position": lambda x: jnp.sum(x[:5]),
        "needs a sum": lambda x: jnp.max(x, axis=0),
    }
    for words, fn in cases.items():
        assert words in str(_refusal(fn, x, size=8)), words


def test_refuses_the_wrong_combine_and_a_function_that_ignores_the_axis():
    x = _normal(0, (40, 3))
    assert "needs a max" in str(_refusal(lambda x: jnp.sum(x, axis=0), x, size=8, combine="max"))
    assert "does not depend on the chunked axis" in str(_refusal(lambda x, y: jnp.sum(y), x, x[0], size=8))


def test_bad_parameters_are_value_errors():
    for kwargs in ({"size": 0}, {"combine": "prod"}, {"argnums": (0, 0)}, {"axis": (0, 1)}):
        with pytest.raises(ValueError):
            chunked(jnp.sum, **kwargs)
    with pytest.raises(ValueError, match="no axis 2"):
        chunked(jnp.sum, axis=2)(jnp.ones((4, 4)))
    with pytest.raises(ValueError, match="different lengths"):
        chunked(lambda a, b: jnp.sum(a) + jnp.sum(b), argnums=(0, 1))(jnp.ones(4), jnp.ones(5))


def test_check_chunkable_works_on_shapes_alone():
    check_chunkable(seed.with_dot, *SEED_SPECS)
    with pytest.raises(ChunkError):
        check_chunkable(softmax_total, jax.ShapeDtypeStruct((10**6, 3), jnp.float32))


# -- the numerical check --------------------------------------------------------------------------------


def test_verify_chunked_runs_small_shapes_and_passes_the_seed():
    result = verify_chunked(seed.with_dot, *SEED_SPECS, size=1000)
    assert result.passed
    assert result.shapes == ("f32[37,3]", "f32[64,3]")
    assert (result.size, result.chunks) == (16, 3)
    assert result.error < 1e-5 and result.tolerance == 1e-4
    assert "relative error" in result.describe() and "equal within" in result.describe()


def test_verify_chunked_catches_what_the_proof_cannot_see():
    # a mean combined as a sum: the proof sees a sum divided by a constant, the numbers differ
    result = verify_chunked(lambda x: jnp.mean(x, axis=0), jax.ShapeDtypeStruct((100, 3), jnp.float32), size=10)
    assert not result.passed
    assert "DIFFERENT" in result.describe()


# -- the plain-JAX code ----------------------------------------------------------------------------------


def _define(source: str, **names) -> dict:
    namespace = dict(names)
    exec(compile(source, "<chunked_source>", "exec"), namespace)
    return namespace


def _memory(fn, *specs):
    return jax.jit(fn).trace(*specs).lower().compile().memory_analysis()


def test_the_code_as_written_gives_the_same_result_and_memory_as_chunked():
    source = chunked_source(seed.with_dot, argnums=0, size=1000)
    assert "lax.scan(step, total, [pos_chunks])" in source
    assert "def with_dot_chunked(pos, hkl):" in source
    written = _define(source, with_dot=seed.with_dot)["with_dot_chunked"]
    pos, hkl = _normal(0, (2500, 3)), _normal(1, (50, 3))
    _close(written(pos, hkl), chunked(seed.with_dot, size=1000)(pos, hkl), 1e-6)
    ours = _memory(chunked(seed.with_dot, size=1000), *SEED_SPECS)
    theirs = _memory(written, *SEED_SPECS)
    original = _memory(seed.with_dot, *SEED_SPECS)
    assert ours.temp_size_in_bytes == theirs.temp_size_in_bytes
    assert ours.temp_size_in_bytes < 10**9 < 20 * 10**9 <= original.temp_size_in_bytes


@pytest.mark.parametrize(("fn", "args", "kw"), [
    (mse, ((103, 5), (5, 2), (103, 2)), {"argnums": (0, 2), "size": 25, "combine": "mean"}),
    (column_max, ((90, 6), (6, 3)), {"size": 16, "combine": "max"}),
    (lambda x: jnp.min(jnp.sin(x), axis=2), ((3, 4, 50),), {"size": 7, "axis": 2, "combine": "min"}),
])
def test_the_code_for_other_combines_and_axes(fn, args, kw):
    values = [_normal(i, shape) for i, shape in enumerate(args)]
    name = fn.__name__ if fn.__name__.isidentifier() else "fn"
    source = chunked_source(fn, name="rewritten", **kw) if name != "fn" else chunked_source(
        _named(fn), name="rewritten", **kw)
    written = _define(source, **{name: fn})["rewritten"]
    _close(written(*values), fn(*values))
    specs = [jax.ShapeDtypeStruct(v.shape, v.dtype) for v in values]
    assert _memory(written, *specs).temp_size_in_bytes == _memory(chunked(fn, **kw), *specs).temp_size_in_bytes


def _named(fn):
    def fn_(x):
        return fn(x)

    fn_.__name__ = "fn"
    return fn_


def test_source_refuses_what_it_cannot_write():
    with pytest.raises(ValueError, match="not a name"):
        chunked_source(lambda x: x)
    with pytest.raises(ValueError, match="no positional argument 2"):
        chunked_source(seed.with_dot, argnums=2)


def test_importing_the_package_and_naming_chunked_does_not_import_jax():
    code = ("import sys, sphinx_jaxhlo; sphinx_jaxhlo.chunked; sphinx_jaxhlo.chunked_source; "
            "assert 'jax' not in sys.modules, 'jax imported'; assert 'chunked' in dir(sphinx_jaxhlo)")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    assert sphinx_jaxhlo.chunked is chunked


# -- the report's suggestion -----------------------------------------------------------------------------


def test_the_suggestion_for_the_seed_names_pos_axis_0_and_a_size_within_the_budget():
    from sphinx_jaxhlo.compiler.chunking import suggest_chunking
    from sphinx_jaxhlo.core.chunks import round_size

    text = suggest_chunking(seed.with_dot, SEED_SPECS, {}, 20 * 10**9, budget=200 * 10**6)
    words, call, *code = text.split("\n")
    assert "axis 0 of pos (100000 long)" in words and "200 MB instead of 20.0 GB" in words
    assert call == "sphinx_jaxhlo.chunked(with_dot, argnums=0, size=1000, axis=0, combine='sum')"
    assert "def with_dot_chunked(pos, hkl):" in code
    # under the budget already, or nothing provable: no suggestion
    assert suggest_chunking(seed.with_dot, SEED_SPECS, {}, 10**6, budget=64 * 2**20) == ""
    assert suggest_chunking(softmax_total, (jax.ShapeDtypeStruct((10**5, 300), jnp.float32),), {}, 10**9) == ""
    # a max over rows is suggested with its combine
    big = (jax.ShapeDtypeStruct((10**5, 64), jnp.float32), jax.ShapeDtypeStruct((64, 300), jnp.float32))
    assert "combine='max'" in suggest_chunking(column_max, big, {}, 120 * 10**6, budget=10**6)
    assert [round_size(x) for x in (0.5, 1, 3, 7, 19, 335, 1000, 4999)] == [1, 1, 2, 5, 10, 200, 1000, 2000]


def test_analyze_suggests_the_chunking_in_its_text_and_only_where_it_applies(tmp_path):
    reports = sphinx_jaxhlo.analyze(seed.with_dot, "f32[100000,3]", "f32[50000,3]", targets="cpu",
                                    cache_dir=str(tmp_path))
    (report,) = list(reports)
    assert report.chunk_suggestion.splitlines()[1] == (
        "sphinx_jaxhlo.chunked(with_dot, argnums=0, size=200, axis=0, combine='sum')")
    text = str(reports)
    assert "Chunking would bound it: the reduction runs over axis 0 of pos (100000 long)" in text
    assert "def with_dot_chunked(pos, hkl):" in text
    # the chunked function still stores 200 MB, over the 64 MiB budget, but the proof does not follow
    # the axis into its lax.scan: nothing is suggested
    chunked_reports = sphinx_jaxhlo.analyze(chunked(seed.with_dot, size=1000), "f32[100000,3]", "f32[50000,3]",
                                            targets="cpu", cache_dir=str(tmp_path))
    assert chunked_reports.get("cpu").chunk_suggestion == ""
    assert chunked_reports.get("cpu").memory.temp_bytes < 10**9
