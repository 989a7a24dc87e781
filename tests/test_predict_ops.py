"""The rules for the ops no rule knew (``sphinx_jaxhlo/predict/ops.py``), checked against XLA's compilers.

A bit cast and the Bessel functions are elementwise for fusion: fused on the H100 and the TPU v5e,
outside YNN's table (so stored) on the CPU.  A triangular solve is a library call on the CPU and the
H100 and a reduce-window of overlapping windows XLA CPU's own loop: each writes the table.  The TPU
writes a reduce-window's output and an incomplete gamma function's loop state.  A reduction over a
concatenate's axis is a reduction of each operand (XLA's algebraic simplifier).  Where the probes of
``benchmarks/guide_predictor_ops_probes.py`` split (a reduce-window on the H100, one of windows that do
not overlap on the CPU) the answer is "compile it".  Each program is compiled (no run, no chip), so a
later XLA that changes the answer fails here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from conftest import stored_by_the_compile
from jax import lax

import sphinx_jaxhlo
from sphinx_jaxhlo.core import targets


def stochastic_round(x, r):
    bits = lax.bitcast_convert_type(x, jnp.uint32)
    y = lax.bitcast_convert_type((bits + (r & jnp.uint32(0xFFFF))) & jnp.uint32(0xFFFF0000), jnp.float32)
    return jnp.sum((y - x) ** 2, axis=1)


def high_bits(x):
    return jnp.sum(lax.bitcast_convert_type(x * 2.0, jnp.uint32) >> 16, axis=1)


def bessel_sum(x):
    return jnp.sum(jax.scipy.special.i0e(x * 2.0), axis=1)


def bessel_i1e_weighted(x):
    return jnp.sum(jax.scipy.special.i1e(x) * x, axis=-1)


def max_filter_sum(x):
    return jnp.sum(lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 1, 1, 1), "SAME"), axis=(1, 2))


def max_pool_sum(x):
    return jnp.sum(lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"), axis=(1, 2))


def local_response_norm(x):
    s = lax.reduce_window(x * x, 0.0, lax.add, (1, 1, 1, 5), (1, 1, 1, 1), "SAME")
    return jnp.sum(x / (1.0 + 1e-4 * s) ** 0.75, axis=-1)


def integer_window_max(x):
    return jnp.sum(lax.reduce_window(x, jnp.uint32(0), lax.max, (1, 5), (1, 1), "SAME"), axis=1)


def solve_sum_of_squares(lower, b):
    y = lax.linalg.triangular_solve(lower, b, left_side=True, lower=True)
    return jnp.sum(y * y, axis=0)


def concatenated_sum(x):
    return jnp.sum(jnp.concatenate([jnp.exp(x), x * x], axis=1), axis=1)


def stacked_sum(x):
    return jnp.sum(jnp.stack([jnp.exp(x), x * x], axis=-1), axis=(1, 2))


def incomplete_gamma_sum(x):
    return jnp.sum(jax.scipy.special.gammainc(2.0, jnp.abs(x)), axis=1)


M = "f32[4096,4096]"
IMG = "f32[16,128,128,64]"
SOLVE = ("f32[2048,2048]", "f32[2048,4096]")
CPU = "jaxhlo-predict-cpu-"
CASES = [
    ("cpu", stochastic_round, (M, "u32[4096,4096]"), True, CPU + "ynn"),
    ("cpu", bessel_sum, (M,), True, CPU + "ynn"),
    ("cpu", max_filter_sum, (IMG,), True, CPU + "other"),
    ("cpu", solve_sum_of_squares, SOLVE, True, CPU + "other"),
    ("cpu", concatenated_sum, (M,), False, CPU + "ynn"),
    ("gpu:h100", high_bits, (M,), False, "jaxhlo-predict-h100-cost"),
    ("gpu:h100", bessel_i1e_weighted, (M,), False, "jaxhlo-predict-h100-cost"),
    ("gpu:h100", solve_sum_of_squares, SOLVE, True, "jaxhlo-predict-h100-topk"),
    ("gpu:h100", stacked_sum, (M,), False, "jaxhlo-predict-h100-cost"),
    ("tpu:v5e", high_bits, (M,), False, "jaxhlo-predict-tpu-fused"),
    ("tpu:v5e", bessel_sum, (M,), False, "jaxhlo-predict-tpu-fused"),
    ("tpu:v5e", local_response_norm, (IMG,), True, "jaxhlo-predict-tpu-topk"),
    ("tpu:v5e", integer_window_max, ("u32[4096,4096]",), True, "jaxhlo-predict-tpu-topk"),
    ("tpu:v5e", incomplete_gamma_sum, ("f32[1024,1024]",), True, "jaxhlo-predict-tpu-topk"),
]

def _stored(fn, specs, target: str, table: int) -> bool:
    return stored_by_the_compile(fn, specs, target, table)


def _skip(target: str) -> None:
    if not targets.get_target(target).available():
        pytest.skip(f"needs the compiler for {target}")


@pytest.mark.parametrize(("target", "fn", "specs", "stored", "rule"), CASES,
                         ids=[f"{c[0]}-{c[1].__name__}" for c in CASES])
def test_an_ops_table(target, fn, specs, stored, rule):
    _skip(target)
    answer = sphinx_jaxhlo.predict(fn, *specs, target=target, calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (stored, True, rule), answer
    assert _stored(fn, specs, target, answer.table_elements) is stored


@pytest.mark.parametrize(("target", "fn", "stored"), [("gpu:h100", max_filter_sum, False),
                                                      ("cpu", max_pool_sum, False)])
def test_a_reduce_window_the_probes_split_on_is_left_to_the_compile(target, fn, stored):
    """A reduce-window fused as a producer on the H100 in 9 probes and was written in 2; on the CPU one
    of windows that do not overlap (2x2, strided by 2) fused while 10 of overlapping windows were written."""
    _skip(target)
    answer = sphinx_jaxhlo.predict(fn, IMG, target=target, calibrated=False)
    assert answer.stored is None and not answer.certain and "no rule covers it" in answer.why, answer
    assert _stored(fn, (IMG,), target, answer.table_elements or 16 * 64 * 64 * 64) is stored


def stacked_costs(a, b):
    # a winner-take-all match over shifted copies (wild12's census transform, smaller): an argmin and a min
    # over the stacked axis; the min splits into one per operand, the argmin does not
    costs = jnp.stack([jnp.abs(a - jnp.roll(b, d, axis=1)) for d in range(16)], axis=1)
    return jnp.argmin(costs, axis=1), jnp.min(costs, axis=1)


@pytest.mark.parametrize(("target", "stored"), [("cpu", True), ("gpu:h100", False)])
def test_an_argmin_over_a_stack_of_computed_tables_is_left_to_the_compile(target, stored):
    """Left to the compile: the CPU writes this stack, the H100 fuses it (wild12's 64-table census
    transform was written on both)."""
    _skip(target)
    answer = sphinx_jaxhlo.predict(stacked_costs, "f32[512,4096]", "f32[512,4096]", target=target,
                                   calibrated=False)
    assert answer.stored is None and not answer.certain and "jnp.stack" in answer.why, answer
    assert "compile it" in answer.why or answer.command, answer
    assert _stored(stacked_costs, ("f32[512,4096]", "f32[512,4096]"), target, answer.table_elements) is stored
