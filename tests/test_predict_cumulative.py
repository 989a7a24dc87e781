"""A cumulative op reading a computed table on the H100 (``h100.cumulative_operand``), checked against XLA.

XLA rewrites ``cumsum``/``cummax`` into passes that read each element more than once: a cheap ``f32`` producer
over one table-sized input is computed in them (the reduction after them fused too), a costly one or one of
two table-sized inputs is written first; a ``bf16`` operand and an outer product of vectors went both ways
(``benchmarks/guide_predictor_cumulative_probes.py``).  A cumulative op whose output is read twice (a
moving average's two windows) keeps the general rule: its output is written.  Each program is compiled
for the H100 (no GPU needed), so a later XLA that moves the line fails here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from conftest import stored_by_the_compile
from jax import lax

import sphinx_jaxhlo
from sphinx_jaxhlo.core import targets

H100 = "gpu:h100"
TWO = ("f32[2048,4096]", "f32[2048,4096]")


def cumsum_of_square(x, y):
    return jnp.sum(jnp.cumsum(x * x, axis=1) * y)


def cummax_of_reciprocal(x, y):
    return jnp.sum(lax.cummax(1.0 / x, axis=0) * y)


def cumsum_of_exp(x, y):
    return jnp.sum(jnp.cumsum(jnp.exp(x), axis=1) * y)


def cumsum_of_product(x, y):
    return jnp.sum(jnp.cumsum(x * y, axis=0) * y)


def moving_average_gap(x, y):
    c = jnp.cumsum(x, axis=1)
    return jnp.max(jnp.abs(x[:, 64:] - (c[:, 64:] - c[:, :-64]) / 64.0), axis=1) + jnp.sum(y)


def cumsum_of_transposed_square(x, y):
    return jnp.sum(jnp.cumsum(x.T * x.T, axis=1) * y)


CASES = [
    (cumsum_of_square, TWO, False, "3 cycles an element (19 or fewer were fused)"),
    (cummax_of_reciprocal, ("f32[3001,1999]", "f32[3001,1999]"), False, "19 cycles"),
    (cumsum_of_exp, TWO, True, "79 cycles an element (75 or more were written)"),
    (cumsum_of_product, TWO, True, "2 table-sized inputs"),
    (moving_average_gap, TWO, True, "a kernel of its own"),
    # a transposed argument is a transpose kernel's output: the general rule, written
    (cumsum_of_transposed_square, ("f32[2048,4096]", "f32[4096,2048]"), True, "a kernel of its own"),
]


@pytest.mark.parametrize(("fn", "specs", "stored", "word"), CASES, ids=[c[0].__name__ for c in CASES])
def test_the_rule_reads_the_producer(fn, specs, stored, word):
    answer = sphinx_jaxhlo.predict(fn, *specs, target=H100, calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (stored, True, "jaxhlo-predict-h100-topk"), answer
    assert word in answer.why, answer.why


@pytest.mark.parametrize(("fn", "specs", "stored", "word"), CASES, ids=[c[0].__name__ for c in CASES])
def test_as_compiled(fn, specs, stored, word):
    if not targets.get_target(H100).available():
        pytest.skip("needs the gpu extra")
    answer = sphinx_jaxhlo.predict(fn, *specs, target=H100, calibrated=False)
    assert stored_by_the_compile(fn, specs, H100, answer.table_elements) is stored


def cumsum_of_log(x, y):
    return jnp.sum(jnp.cumsum(jnp.log(x), axis=1) * y)


def cumsum_of_outer(a, b, y):
    return jnp.sum(jnp.cumsum(a[:, :, None] * b[:, None, :], axis=0) * y)


@pytest.mark.parametrize(("fn", "specs", "word"), [
    (cumsum_of_log, ("bf16[2048,4096]", "bf16[2048,4096]"), "bfloat16 operand"),
    (cumsum_of_outer, ("f32[2048,64]", "f32[2048,64]", "f32[2048,64,64]"), "outer product"),
    # a scan of 128 or fewer builds no tree (written at every size measured); under 2**20 elements the cheap
    # producer went both ways
    (cumsum_of_square, ("f32[2048,128]", "f32[2048,128]"), "128 elements along the scan"),
    (cumsum_of_square, ("f32[64,4096]", "f32[64,4096]"), "262,144 in all"),
], ids=["bf16-log", "outer", "short-scan", "small-table"])
def test_what_went_both_ways_is_left_to_the_compile(fn, specs, word):
    answer = sphinx_jaxhlo.predict(fn, *specs, target=H100, calibrated=False)
    assert answer.stored is None and not answer.certain and word in answer.why, answer
    assert answer.why.endswith("compile it")


def test_a_gradient_reads_the_reverse_cumsum_through_elementwise_ops():
    # the transpose of a cumsum is a reverse cumsum of the cotangent, read by two multiplies that fuse
    grad = jax.grad(lambda x, y: jnp.sum(jnp.cumsum(x * x, axis=1) * y))
    answer = sphinx_jaxhlo.predict(grad, *TWO, target=H100, calibrated=False)
    assert answer.stored is False, answer
    if targets.get_target(H100).available():
        assert stored_by_the_compile(grad, TWO, H100, 2048 * 4096) is False


def test_other_targets_keep_their_rules():
    # the TPU writes the operand of a cumulative op whatever its producer (a kernel of its own)
    answer = sphinx_jaxhlo.predict(cumsum_of_square, *TWO, target="tpu:v5e", calibrated=False)
    assert (answer.stored, answer.rule) == (True, "jaxhlo-predict-tpu-topk"), answer
    assert "cycles" not in answer.why
    assert jax.devices()  # the CPU backend stays usable after the deviceless compiles
