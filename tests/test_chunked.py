"""chunked(): the rewrite, its proof on the jaxpr, the plain-JAX code it writes, the numerical check."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sphinx_jaxhlo
from sphinx_jaxhlo import ChunkError, check_chunkable, chunked, chunked_source, verify_chunked
from sphinx_jaxhlo.core.targets import TARGETS

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
    # a Python branch on the length: the jaxprs at 100, 101 and 200 rows are the same, a chunk of 10 takes
    # the other branch; the numbers differ
    def branchy(x):
        return jnp.sum(x, axis=0) * (1.0 if x.shape[0] > 20 else 2.0)

    result = verify_chunked(branchy, jax.ShapeDtypeStruct((100, 3), jnp.float32), size=10)
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


# -- the length of the axis: means ----------------------------------------------------------------------


def lse_mean(x, mu):
    return jnp.mean(jax.nn.logsumexp(x @ mu.T, axis=1))


def test_a_mean_over_the_axis_is_proved_as_a_mean_and_refused_as_a_sum():
    from sphinx_jaxhlo.chunking.proof import proved_combine

    specs = (jax.ShapeDtypeStruct((40000, 64), jnp.float32), jax.ShapeDtypeStruct((3, 64), jnp.float32))
    assert proved_combine(lse_mean, *specs).op == "mean"
    with pytest.raises(ChunkError, match=r"is a mean over the chunked axis .*combine='sum' needs a sum "
                                         r"\(combine='mean' combines it\)"):
        check_chunkable(lse_mean, *specs, combine="sum")
    check_chunkable(lse_mean, *specs, combine="mean")
    x, mu = _normal(20, (90, 8)), _normal(21, (3, 8))
    _close(chunked(lse_mean, size=16, combine="mean")(x, mu), lse_mean(x, mu))
    # a sum is not a mean either; a mean shifted, scaled and added to another mean still is
    with pytest.raises(ChunkError, match="is a sum over the chunked axis"):
        check_chunkable(lambda v: jnp.sum(v, axis=0), specs[0], combine="mean")

    def shifted(v):
        return 3.0 * jnp.mean(v, axis=0) + 1.0 - jnp.mean(v * v, axis=0)

    _close(chunked(shifted, size=16, combine="mean")(x), shifted(x))
    # the kernel density estimate: a mean over the samples, chunked over them
    def kde(q, s):
        return jnp.mean(jnp.exp(-jnp.sum((q[:, None] - s[None]) ** 2, -1) / 2), axis=1)

    q, samples = _normal(22, (30, 3)), _normal(23, (70, 3))
    assert proved_combine(kde, q, samples, argnums=1).op == "mean"
    _close(chunked(kde, argnums=1, size=16, combine="mean")(q, samples), kde(q, samples))


def test_other_uses_of_the_length_are_refused():
    x = jax.ShapeDtypeStruct((100, 3), jnp.float32)
    cases = {
        # n // 2 is not proportional to the length: at 101 rows it is 50 again
        "with a value computed from the length of the axis": lambda v: jnp.sum(v, axis=0) / (v.shape[0] // 2),
        # the length meets the chunked data itself
        "meets the chunked data with a value computed from the length": lambda v: jnp.sum(v / v.shape[0], 0),
        # a variance: the data meets its own mean
        "combines elements along the chunked axis with the reduction": lambda v: jnp.var(v, axis=0),
    }
    for words, fn in cases.items():
        with pytest.raises(ChunkError, match=words):
            check_chunkable(fn, x, combine="mean")


def test_a_function_that_changes_with_the_length_or_traces_at_no_other_length_is_refused():
    x = jax.ShapeDtypeStruct((100, 3), jnp.float32)

    def grows(v):  # one more operation from 101 rows on
        return jnp.sum(jnp.exp(v) if v.shape[0] > 100 else v, axis=0)

    with pytest.raises(ChunkError, match="its operations change with the length of the chunked axis"):
        check_chunkable(grows, x)
    fixed = jnp.ones((100, 3))
    def only_100(v):
        if v.shape[0] != 100:
            raise ValueError("wants 100 rows")
        return jnp.sum(v, axis=0)

    with pytest.raises(ChunkError, match=r"cannot be traced with the chunked axis 101 or 200 long \(ValueError: "
                                         r"wants 100 rows\)"):
        check_chunkable(only_100, x)
    # the real reason comes first when there is one at the real length
    with pytest.raises(ChunkError, match="pairs the chunked axis with a value"):
        check_chunkable(lambda v: jnp.sum(v * fixed, axis=0), x)


# -- the gradient: the step is checkpointed ----------------------------------------------------------------


def forces(x, sources):
    """F_i = sum_j d_ij (|d_ij|^2 + 1e-3)^-3/2."""
    d = sources[None, :, :] - x[:, None, :]
    r2 = jnp.sum(d * d, axis=-1) + 1e-3
    return jnp.sum(d * (r2 ** -1.5)[..., None], axis=1)


def _vjp_ones(f, argnum):
    def grad(x, sources):
        out, pullback = jax.vjp(f, x, sources)
        return pullback(jnp.ones_like(out))[argnum]

    return grad


def _nbody_gradient_temps(targets: str) -> dict[tuple[str, int, str], int]:
    """The compiled temp memory of the N-body gradient (20000 bodies, chunks of 1000), by
    (variant, argument differentiated, target)."""
    variants = {"checkpointed": chunked(forces, argnums=1, size=1000),
                "not checkpointed": chunked(forces, argnums=1, size=1000, checkpoint=False)}
    out = {}
    for name, f in variants.items():
        for argnum in (0, 1):  # with respect to the targets (not chunked), then the sources (chunked)
            for report in sphinx_jaxhlo.analyze(_vjp_ones(f, argnum), "f32[20000,3]", "f32[20000,3]",
                                                targets=targets):
                out[name, argnum, report.target] = report.memory.temp_bytes
    return out


def test_the_gradient_of_a_chunked_function_is_bounded_by_default_and_not_without_the_checkpoint():
    chunk_block = 20000 * 1000 * 4  # one chunk's f32[20000,1000] of pair values: 80 MB
    temps = _nbody_gradient_temps("cpu")
    for argnum in (0, 1):
        assert temps["checkpointed", argnum, "cpu"] <= 3 * chunk_block
        # every step's residuals are kept: f32[19,20000,1000,3] and more
        assert temps["not checkpointed", argnum, "cpu"] >= 60 * chunk_block
    # the checkpoint changes what the backward pass keeps, not the values
    x, sources = _normal(30, (70, 3)), _normal(31, (90, 3))
    for argnum in (0, 1):
        want = _vjp_ones(forces, argnum)(x, sources)
        _close(_vjp_ones(chunked(forces, argnums=1, size=16), argnum)(x, sources), want, 1e-4)
        _close(_vjp_ones(chunked(forces, argnums=1, size=16, checkpoint=False), argnum)(x, sources), want, 1e-4)


@pytest.mark.slow
@pytest.mark.skipif(not TARGETS["gpu:h100"].available(), reason="the CUDA compiler plugin is not installed")
def test_the_gradient_of_a_chunked_function_on_the_h100():
    chunk_block = 20000 * 1000 * 4
    temps = _nbody_gradient_temps("gpu:h100")
    unchunked = sphinx_jaxhlo.analyze(_vjp_ones(forces, 0), "f32[20000,3]", "f32[20000,3]", targets="gpu:h100")
    assert unchunked["gpu:h100"].memory.temp_bytes > 10 * chunk_block
    for argnum in (0, 1):
        assert temps["checkpointed", argnum, "gpu:h100"] <= 3 * chunk_block
        assert temps["not checkpointed", argnum, "gpu:h100"] >= 60 * chunk_block


# -- the proof's table of increasing functions, pinned ----------------------------------------------------

#: Each name of ``chunk_proof._INCREASING`` as a function of f32 values.  ``copy_p`` is the copy
#: primitive's name in older jax releases (``copy`` in this one): the same identity.
_INCREASING_FUNCTIONS = {
    "asinh": jax.lax.asinh, "atan": jax.lax.atan, "cbrt": jax.lax.cbrt, "ceil": jax.lax.ceil,
    "convert_element_type": lambda x: jax.lax.convert_element_type(x, jnp.bfloat16),
    "copy": lambda x: jnp.array(x, copy=True), "copy_p": lambda x: jnp.array(x, copy=True),
    "erf": jax.lax.erf, "exp": jax.lax.exp, "exp2": jax.lax.exp2, "expm1": jax.lax.expm1, "floor": jax.lax.floor,
    "log": jax.lax.log, "log1p": jax.lax.log1p, "logistic": jax.lax.logistic,
    "reduce_precision": lambda x: jax.lax.reduce_precision(x, 5, 10), "round": jax.lax.round,
    "sinh": jax.lax.sinh, "sqrt": jax.lax.sqrt, "stop_gradient": jax.lax.stop_gradient, "tanh": jax.lax.tanh,
}

#: f32 values over the whole line: infinities, the largest, around 0 (both zeros, the smallest
#: subnormal), around the points where functions change (-1 for log1p, 88.7 where exp overflows).
_EDGES = np.array([-np.inf, -3.4e38, -1e30, -100.0, -88.8, -2.5, -1.5, -1.0, -0.999, -0.5, -1e-45, -0.0, 0.0,
                   1e-45, 1e-30, 0.5, 0.999, 1.0, 1.5, 2.5, 88.7, 88.8, 100.0, 1e30, 3.4e38, np.inf], np.float32)


def _commutes(f, op) -> list[tuple[float, float]]:
    """The pairs (a, b) of edge values for which op(f(a), f(b)) != f(op(a, b)) (a NaN equal only to a NaN)."""
    a, b = np.meshgrid(_EDGES, _EDGES, indexing="ij")
    a, b = jnp.asarray(a.ravel()), jnp.asarray(b.ravel())
    # both sides in one compiled program each: the CPU flushes subnormals alike in both
    lhs = np.asarray(jax.jit(lambda a, b: op(f(a), f(b)))(a, b), np.float64)
    rhs = np.asarray(jax.jit(lambda a, b: f(op(a, b)))(a, b), np.float64)
    # a few ulps apart is the same value (an implementation's vector and scalar paths, a subnormal flushed
    # by one operation and not by another); a function out of order differs by far more
    bad = ~(np.isclose(lhs, rhs, rtol=1e-6, atol=1e-12) | (np.isnan(lhs) & np.isnan(rhs)))
    return list(zip(np.asarray(a)[bad].tolist(), np.asarray(b)[bad].tolist(), strict=True))


def test_every_increasing_function_of_the_proof_commutes_with_max_and_min():
    """The proof passes a partial max or min through a function of its table: per chunk f(max x_c), combined
    with a max, must be f(max x).  Over every pair of edge values, on the CPU, each function must do so."""
    from sphinx_jaxhlo.chunking import proof as chunk_proof

    assert set(chunk_proof._INCREASING) == set(_INCREASING_FUNCTIONS) - chunk_proof._MIN_ONLY, (
        "a function added to the table needs its check here")
    for name in sorted(_INCREASING_FUNCTIONS):
        f = _INCREASING_FUNCTIONS[name]
        for op, label in ((jnp.maximum, "max"), (jnp.minimum, "min")):
            bad = _commutes(f, op)
            listed = name in chunk_proof._INCREASING or (label == "min" and name in chunk_proof._MIN_ONLY)
            if listed:
                assert not bad, f"{name} does not commute with {label} at {bad[:3]}"


def test_a_function_that_is_not_monotone_fails_the_check():
    # the check itself catches what it is there to catch: cos, and log through a maximum (NaN below 0)
    assert _commutes(jnp.cos, jnp.maximum)
    assert _commutes(jax.lax.log, jnp.maximum)
    assert not _commutes(jax.lax.log, jnp.minimum)


def test_log_of_a_maximum_is_refused_and_of_a_minimum_proved():
    # a chunk whose maximum is negative gives log(...) = NaN, which a maximum over chunks keeps
    x = jnp.concatenate([-jnp.ones((16, 3)), jnp.ones((16, 3))])
    with pytest.raises(ChunkError, match="`log`"):
        check_chunkable(lambda v: jnp.log(jnp.max(v, axis=0)), x, combine="max")
    _close(chunked(lambda v: jnp.log(jnp.min(v, axis=0) + 2.0), size=16, combine="min")(x),
           jnp.log(jnp.min(x, axis=0) + 2.0))


# -- generated code is hygienic, and the text shown is the text checked -----------------------------------
#
# Arguments named after the names the code writes (k, r, size, part, step, start, total...) kept the code's
# meaning before: `lse_as_max(q, k)` crashed, `temp_exp_colsum(x, y, r)` gave inf, `scaled_tanh_total(x, y,
# size)` was off by the chunk size, and the page still said "checked" (it ran chunked(), not the code).


def lse_as_max(q, k):
    """Attention's scores, the usual names: the max over the queries of q @ k.T."""
    return jnp.max(q @ k.T, axis=0)


def attention_max(q, k):
    """The largest score, chunked over the keys."""
    return jnp.max(q @ k.T)


def temp_exp_colsum(x, y, r):
    return jnp.sum(jnp.exp((x @ y.T) / r), axis=0)


def scaled_tanh_total(x, y, size):
    return jnp.sum(jnp.tanh(x @ y.T) * size, axis=0)


def every_name(x, k, r, size, part, step, start, total, chunk, s, m, t, x_c, x_chunks, x_main, kwargs, jnp, lax,
               min, divmod, scan_step, n_chunks, rest):
    """Every name the generator prefers, and its first alternatives, as arguments: each scales the result."""
    scale = k * r * size * part * step * start * total * chunk * s * m * t * x_c * x_chunks * x_main * kwargs
    scale = scale * jnp * lax * min * divmod * scan_step * n_chunks * rest
    return jax.numpy.mean(jax.numpy.tanh(x) * scale, axis=1)


_SCALARS = 23  # every_name's scalar arguments


@pytest.mark.parametrize(("fn", "shapes", "kw"), [
    (lse_as_max, [(70, 8), (9, 8)], {"argnums": 0, "size": 16, "combine": "max"}),
    (attention_max, [(9, 8), (70, 8)], {"argnums": 1, "size": 16, "combine": "max", "axis": 0}),
    (temp_exp_colsum, [(70, 8), (9, 8), ()], {"argnums": 0, "size": 20}),
    (scaled_tanh_total, [(70, 8), (9, 8), ()], {"argnums": 0, "size": 20}),
    (every_name, [(5, 70)] + [()] * (_SCALARS - 1), {"argnums": 0, "size": 16, "axis": 1, "combine": "mean"}),
])
def test_code_for_arguments_named_like_its_own_names_equals_the_original(fn, shapes, kw):
    values = [_normal(i, shape) if shape else jnp.float32(1.5 + 0.1 * i) for i, shape in enumerate(shapes)]
    source = chunked_source(fn, **kw)
    params = list(inspect.signature(fn).parameters)
    # nothing of the signature is redefined inside the code: no `name = ...` for an argument's name
    assigned = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    assert not assigned & set(params), (assigned & set(params), source)
    written = _define(source, **{fn.__name__: fn})[f"{fn.__name__}_chunked"]
    _close(written(*values), fn(*values), 1e-5)
    # and the check runs that very text, at the size it shows
    result = sphinx_jaxhlo.verify_chunked_source(fn, source, *[jax.ShapeDtypeStruct(v.shape, v.dtype) for v in values],
                                                 **kw)
    assert result.passed and result.as_shown and result.size == kw["size"] and result.ran == f"{fn.__name__}_chunked"
    assert result.describe().startswith(f"the code shown ({fn.__name__}_chunked) ran as written on random ")


def test_the_check_runs_the_text_shown_and_catches_the_old_shadowing_code():
    # the code chunked_source wrote before names were made fresh, for temp_exp_colsum(x, y, r)
    old = '''
import jax
import jax.numpy as jnp
from jax import lax


def temp_exp_colsum_chunked(x, y, r):
    size = min(20, x.shape[0])
    k, r = divmod(x.shape[0], size)
    x_chunks = x[:k * size].reshape(k, size, *x.shape[1:])

    def part(x_c):
        return temp_exp_colsum(x_c, y, r)

    def step(total, chunk):
        x_c, = chunk
        return jax.tree.map(jnp.add, total, part(x_c)), None

    total = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), jax.eval_shape(part, x_chunks[0]))
    total, _ = lax.scan(step, total, [x_chunks])
    if r:
        total = jax.tree.map(jnp.add, total, part(x[k * size:]))
    return total
'''
    specs = (jax.ShapeDtypeStruct((4000, 8), jnp.float32), jax.ShapeDtypeStruct((300, 8), jnp.float32),
             jax.ShapeDtypeStruct((), jnp.float32))
    bad = sphinx_jaxhlo.verify_chunked_source(temp_exp_colsum, old, *specs, size=20)
    assert not bad.passed and "DIFFERENT" in bad.describe()
    # chunked() itself is right: a check of chunked() would have passed this code
    assert verify_chunked(temp_exp_colsum, *specs, size=20).passed
    good = sphinx_jaxhlo.verify_chunked_source(temp_exp_colsum, chunked_source(temp_exp_colsum, size=20), *specs,
                                               size=20)
    assert good.passed and good.shapes == ("f32[46,8]", "f32[64,8]", "f32[]") and good.chunks == 3


def test_names_are_fresh_against_globals_and_the_function_name():
    # a module where jnp is NumPy and lax something else: the code spells jax's modules out, binds neither
    scope = {"jnp": "numpy", "lax": None, "jax": "jax", "total": None}
    source = chunked_source("total", 0, 10, arg_names=["x"], scope=scope)
    assert "import jax.numpy as jnp" not in source and "from jax import lax" not in source
    assert "jax.numpy.add" in source and "jax.lax.scan(" in source
    assert "    total = " not in source  # the callee's name is not a local
    namespace = {"jnp": np, "lax": object(), "total": lambda x: jnp.sum(jnp.sin(x), axis=0)}
    exec(compile(source, "<chunked>", "exec"), namespace)
    x = _normal(3, (35, 4))
    _close(namespace["total_chunked"](x), jnp.sum(jnp.sin(x), axis=0))
    assert namespace["jnp"] is np  # the pasted code left the module's names alone
    # a live function's globals: a global named like the default output takes another name
    namespace = {"jnp": jnp}
    exec("def f(x):\n    return jnp.sum(x, axis=0)\n\nf_chunked = None\n", namespace)
    assert "def f_chunked_(x):" in chunked_source(namespace["f"], size=4)
    with pytest.raises(ValueError, match="has a parameter named total"):
        chunked_source(_named_with_itself(), size=4)


def _named_with_itself():
    def total(total):
        return jnp.sum(total, axis=0)

    return total


def test_a_chunked_variant_of_the_directive_runs_as_shown(tmp_path):
    """`:chunk: x=20` on temp_exp_colsum(x, y, r), through the pipeline the directive uses: the example's
    source (with the code shown) runs equal to the original, and the check's words say it ran that code."""
    from sphinx_jaxhlo.api.functions import compile_example, resolve_targets
    from sphinx_jaxhlo.core.example import parse_example

    source = ("import jax.numpy as jnp\n\n\ndef temp_exp_colsum(x, y, r):\n"
              "    return jnp.sum(jnp.exp((x @ y.T) / r), axis=0)\n")
    example = parse_example(source, {"args": "f32[2000,16], f32[300,16], f32[]", "chunk": "x=500"},
                            source_name="example.py").with_chunk_variants()
    namespace: dict = {}
    exec(compile(example.source, "example.py", "exec"), namespace)
    x, y = _normal(0, (2000, 16)) / 4, _normal(1, (300, 16)) / 4
    _close(namespace["temp_exp_colsum_chunked"](x, y, jnp.float32(3.0)),
           namespace["temp_exp_colsum"](x, y, jnp.float32(3.0)), 1e-5)
    reports = compile_example(example, resolve_targets("cpu"), ["summary"], cache_dir=tmp_path)
    report = next(r for r in reports if r.function == "temp_exp_colsum_chunked")
    assert report.chunk_check.startswith("the code shown (temp_exp_colsum_chunked) ran as written on random "
                                         "f32[1166,16], f32[64,16], f32[], in 3 chunks (2 of 500 and one of 166), "
                                         "against temp_exp_colsum: relative error "), report.chunk_check
    # a name the example already uses for the variant is refused, with the fix
    clash = parse_example(source + "\n\ntemp_exp_colsum_chunked = None\n", {"args": "f32[20,4], f32[3,4], f32[]",
                                                                            "chunk": "x=5"})
    with pytest.raises(ValueError, match="already names temp_exp_colsum_chunked"):
        clash.with_chunk_variants()


def big_sine_sum(x):
    return jnp.sum(jnp.sin(x))


def test_a_size_too_large_to_run_here_says_what_ran_instead():
    # chunks of 10**7 need 23 million elements to run as shown (two chunks and a remainder): over the check's
    # limit, chunked() at 16 runs instead, and the words say so rather than claim the code ran
    spec = jax.ShapeDtypeStruct((100_000_000,), jnp.float32)
    code = chunked_source(big_sine_sum, size=10**7)
    result = sphinx_jaxhlo.verify_chunked_source(big_sine_sum, code, spec, size=10**7)
    assert result.passed and not result.as_shown and result.size == 16
    assert result.describe().startswith("chunked(big_sine_sum), in place of the code shown (its chunks of 10000000 "
                                        "are too large to run here), checked on random f32[37] in 3 chunks")


# -- names all from the pool, `_` included; code handed out only checked -----------------------------------

#: Every name the generated code may introduce (each preferred name and its alternatives), `_` first.
GENERATED = ["_", "unused", "ys", "size", "chunk_size", "chunk_length", "k", "n_chunks", "chunk_count", "r", "rest",
             "remainder", "x_chunks", "x_stack", "x_main", "x_whole", "part", "chunk_result", "on_chunk", "x_c",
             "x_chunk", "step", "scan_step", "add_chunk", "total", "running", "accumulated", "chunk", "chunk_args",
             "xs", "start", "identity", "initial", "s", "struct", "spec", "m", "value", "leaf", "t", "result",
             "summed", "kwargs", "kw", "jax", "jnp", "lax", "jax_", "min", "divmod"]


def _every_generated_name():
    """A function with the chunked `x` and every generated name as a scalar parameter, each scaling the result."""
    names = ", ".join(GENERATED)
    product = " * ".join(GENERATED)
    namespace = {"_jnp": jnp}
    exec(f"def scaled(x, {names}):\n    return _jnp.max(_jnp.tanh(x) * ({product}), axis=1)\n", namespace)
    return namespace["scaled"]


def test_a_parameter_named_like_every_generated_name_underscore_included_gives_the_original():
    fn = _every_generated_name()
    values = [_normal(0, (5, 70)), *(jnp.float32(1.0 + 0.01 * i) for i in range(len(GENERATED)))]
    specs = [jax.ShapeDtypeStruct(v.shape, v.dtype) for v in values]
    source = chunked_source(fn, size=16, axis=1, combine="max", args=specs)
    assigned = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    assert not assigned & {"x", *GENERATED}, (assigned & set(GENERATED), source)
    assert "# Checked by sphinx_jaxhlo: the code shown (scaled_chunked) ran as written" in source
    written = _define(source, scaled=fn)["scaled_chunked"]
    _close(written(*values), fn(*values), 1e-6)  # 70 = 4 chunks of 16 and a remainder of 6


def scale_or_one(x, _):
    """Tolerates `_ = None` (the old code's rebinding): 17 where the original gives 18, said issue 51."""
    return jnp.sum(x) * (1.0 if _ is None else _)


def times_underscore(x, _):
    return jnp.sum(jnp.sin(x), axis=0) * _


def test_a_parameter_named_underscore_keeps_its_value_before_the_last_shorter_chunk():
    x, under = jnp.ones((18,), jnp.float32), jnp.float32(1.0)
    specs = [jax.ShapeDtypeStruct((18,), jnp.float32), jax.ShapeDtypeStruct((), jnp.float32)]
    source = chunked_source(scale_or_one, size=4, args=specs)
    assert ", _ = " not in source
    assert float(_define(source, scale_or_one=scale_or_one)["scale_or_one_chunked"](x, under)) == 18.0
    # the code written before (`total, _ = lax.scan(...)`) rebinds _ to None before the last, shorter chunk:
    # its 2 elements count 1.0 each instead of _ = 2.0 (34, not 36); the check as shown catches it
    old = source.replace(", unused = ", ", _ = ")
    assert float(_define(old, scale_or_one=scale_or_one)["scale_or_one_chunked"](x, jnp.float32(2.0))) == 34.0
    bad = sphinx_jaxhlo.verify_chunked_source(scale_or_one, old, *specs, size=4)
    assert not bad.passed and "DIFFERENT" in bad.describe()


def test_a_failed_check_is_reported_never_raised_raw():
    specs = (jax.ShapeDtypeStruct((70, 3), jnp.float32), jax.ShapeDtypeStruct((), jnp.float32))
    old = chunked_source(times_underscore, size=16).replace(", unused = ", ", _ = ")
    result = sphinx_jaxhlo.verify_chunked_source(times_underscore, old, *specs, size=16)  # no TypeError raised
    assert not result.passed and result.as_shown and result.failure.startswith(
        "the code (times_underscore_chunked) raised TypeError: unsupported operand type(s) for *")
    assert result.describe().startswith("the code shown (times_underscore_chunked) FAILED the check on random "
                                        "f32[37,3], f32[]: the code (times_underscore_chunked) raised TypeError")
    broken = sphinx_jaxhlo.verify_chunked_source(times_underscore, "def f(x, _):\n    return undefined_name\n",
                                                 *specs, size=16)
    assert not broken.passed and "NameError" in broken.failure
    syntax = sphinx_jaxhlo.verify_chunked_source(times_underscore, "def f(x:\n", *specs, size=16)
    assert not syntax.passed and "does not parse: SyntaxError" in syntax.failure
    right = chunked_source(times_underscore, size=16, args=specs)
    assert sphinx_jaxhlo.verify_chunked_source(times_underscore, right, *specs, size=16).passed


def test_chunked_source_hands_out_only_code_checked_as_shown_or_says_it_is_not():
    unchecked = chunked_source(times_underscore, size=16)
    assert "# Not checked: chunked_source was given no arguments to run it on (args=...)" in unchecked
    by_name = chunked_source("times_underscore", 0, 16, arg_names=["x", "_"])
    assert "# Not checked: chunked_source was given the function's name, not the function" in by_name
    specs = (jax.ShapeDtypeStruct((70, 3), jnp.float32), jax.ShapeDtypeStruct((), jnp.float32))
    checked = chunked_source(times_underscore, size=16, args=specs)
    assert "# Checked by sphinx_jaxhlo: the code shown (times_underscore_chunked) ran as written on random" in checked
    # a rewrite that would not compute the result: no code at all
    with pytest.raises(ChunkError, match=r"softmax|normalisation"):
        chunked_source(lambda_free_softmax, args=(jax.ShapeDtypeStruct((40, 3), jnp.float32),), size=16)


def lambda_free_softmax(x):
    return jnp.sum(jax.nn.softmax(x, axis=0) * x, axis=0)


# -- the bf16 accumulation hazard ---------------------------------------------------------------------------


def bf16_loss(h, w):
    return jnp.sum(jnp.tanh(h @ w).astype(jnp.float32))


def test_a_bf16_weight_differentiated_over_many_chunks_is_warned_of_and_the_fix_works():
    from sphinx_jaxhlo.chunking.rewrite import LowPrecisionGradientWarning

    rng = np.random.default_rng(0)
    h = jnp.asarray(rng.standard_normal((1024, 32)), jnp.bfloat16)
    w = jnp.asarray(rng.standard_normal((32, 16)) / 6, jnp.bfloat16)
    with pytest.warns(LowPrecisionGradientWarning, match=r"argument 1 is bfloat16 and differentiated: its gradient "
                                                         r"is summed over the 128 chunks in bfloat16"):
        summed = jax.grad(chunked(bf16_loss, size=8), argnums=1)(h, w)

    def upcast(h, w32):  # the fix the warning gives: w in f32, cast back inside
        return bf16_loss(h, w32.astype(jnp.bfloat16))

    fixed = jax.grad(chunked(upcast, size=8), argnums=1)(h, w.astype(jnp.float32))
    exact = jax.grad(bf16_loss, argnums=1)(h.astype(jnp.float32), w.astype(jnp.float32))

    def error(g):
        return float(jnp.max(jnp.abs(g.astype(jnp.float32) - exact)) / jnp.max(jnp.abs(exact)))

    unchunked = error(jax.grad(bf16_loss, argnums=1)(h, w))
    assert error(summed) > 2 * unchunked and error(fixed) < 1.5 * unchunked, (error(summed), error(fixed), unchunked)
    # no warning where nothing 16-bit is summed over the chunks: the split argument's gradient, a forward pass
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", LowPrecisionGradientWarning)
        jax.grad(chunked(bf16_loss, size=8), argnums=0)(h, w)
        chunked(bf16_loss, size=8)(h, w)
        jax.grad(chunked(bf16_loss, size=256), argnums=1)(h, w)  # 4 chunks: fewer than the warning's 8
