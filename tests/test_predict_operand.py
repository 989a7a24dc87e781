"""The TPU v5e rule for a computed operand of a batched contraction (``sphinx_jaxhlo/predict/dots.py``,
``unaligned_batched_operand``), checked against XLA's TPU compiler.

A table computed elementwise (``sigmoid(pred)``) that a batched ``einsum`` contracts over its long axis is
written first, in the dot's input type, when the contraction's rows (the operand's free dimensions) are not
a multiple of 8 (wild14's mask2former matching cost: 100 queries), whether the contraction reads it alone
or beside a ``sum``; with 128 rows, alone or beside a ``sum``, and in 2-D, it stays in the dot's fusion.
A loop whose body contracts an ``f32`` stack (microbatches) writes a ``bf16`` copy of it before the loop; a
stack the body reads only elementwise, beside a contraction of other data, is not copied.
Each program is compiled (no run, no chip), so a later XLA that changes the answer fails here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from conftest import stored_by_the_compile

import sphinx_jaxhlo
from sphinx_jaxhlo.core import targets

needs_tpu = pytest.mark.skipif(not targets.get_target("tpu:v5e").available(),
                               reason="needs the tpu extra (CI installs it): pip install 'sphinx-jaxhlo[tpu]'")


def contracted_alone(pred, gt):
    return jnp.einsum("bqn,bgn->bqg", jax.nn.sigmoid(pred), gt)


def contracted_and_summed(pred, gt):
    p = jnp.exp(pred)
    return jnp.einsum("bqn,bgn->bqg", p, gt) + jnp.sum(p, axis=-1)[..., None]


def contracted_2d(pred, gt):
    return jnp.einsum("qn,gn->qg", jax.nn.sigmoid(pred), gt)


CASES = [
    (contracted_alone, ("f32[16,100,8192]", "f32[16,64,8192]"), True, "jaxhlo-predict-tpu-readers"),
    (contracted_and_summed, ("f32[16,100,8192]", "f32[16,64,8192]"), True, "jaxhlo-predict-tpu-readers"),
    (contracted_alone, ("f32[16,128,8192]", "f32[16,64,8192]"), False, "jaxhlo-predict-tpu-fused"),
    (contracted_and_summed, ("f32[16,128,8192]", "f32[16,64,8192]"), False, "jaxhlo-predict-tpu-fused"),
    (contracted_2d, ("f32[1004,8192]", "f32[1024,8192]"), False, "jaxhlo-predict-tpu-fused"),
]
IDS = ["alone-100-rows", "summed-100-rows", "alone-128-rows", "summed-128-rows", "2d-1004-rows"]


@needs_tpu
@pytest.mark.parametrize(("fn", "specs", "stored", "rule"), CASES, ids=IDS)
def test_a_batched_contraction_writes_an_operand_of_unaligned_rows(fn, specs, stored, rule):
    answer = sphinx_jaxhlo.predict(fn, *specs, target="tpu:v5e", calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (stored, True, rule), answer
    assert stored_by_the_compile(fn, specs, "tpu:v5e", answer.table_elements, temp_on=()) is stored
    if stored:
        assert "not a multiple of 8" in answer.why, answer


def microbatch_loss(w1, w2, xs, ys):
    """A loss summed over microbatches by a scan whose body contracts each: the TPU converts the whole ``f32``
    stack to ``bf16`` before the loop and writes it; ``bf16`` microbatches need no copy."""
    def step(acc, xy):
        x, y = xy
        return acc + jnp.mean((jnp.tanh(x @ w1) @ w2 - y) ** 2), None
    return jax.lax.scan(step, jnp.zeros((), w1.dtype), (xs, ys))[0]


@needs_tpu
@pytest.mark.parametrize(("dtype", "stored", "rule"), [("f32", True, "jaxhlo-predict-all-loop"),
                                                       ("bf16", False, "jaxhlo-predict-all-loop")])
def test_a_loop_contracting_an_f32_stack_writes_a_bf16_copy(dtype, stored, rule):
    specs = (f"{dtype}[2048,2048]", f"{dtype}[2048,2048]", f"{dtype}[16,512,2048]", f"{dtype}[16,512,2048]")
    answer = sphinx_jaxhlo.predict(microbatch_loss, *specs, target="tpu:v5e", calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (stored, True, rule), answer
    assert stored_by_the_compile(microbatch_loss, specs, "tpu:v5e", answer.table_elements, temp_on=()) is stored


def stack_read_elementwise(w1, xs):
    """A scan whose body contracts its carry with a weight and reads the ``f32`` stack only elementwise: the
    stack is no contraction's operand, so no copy of it is made (the rule asks for the loop's own operand)."""
    def step(h, x):
        h = jnp.tanh(h @ w1)
        return h, jnp.sum(jnp.exp(x) * h)
    return jax.lax.scan(step, jnp.zeros((512, 2048), w1.dtype), xs)[1].sum()


@needs_tpu
def test_a_loop_reading_an_f32_stack_elementwise_makes_no_copy():
    specs = ("f32[2048,2048]", "f32[16,512,2048]")
    answer = sphinx_jaxhlo.predict(stack_read_elementwise, *specs, target="tpu:v5e", calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (False, True, "jaxhlo-predict-all-loop"), answer
    assert "reduces inside its body" in answer.why, answer
    assert stored_by_the_compile(stack_read_elementwise, specs, "tpu:v5e", answer.table_elements, temp_on=()) is False


def fori_microbatch_loss(w1, w2, xs, ys):
    """The microbatches indexed in a ``fori_loop`` (``xs[i]``: a dynamic slice of a loop-invariant stack):
    the stack is converted before the loop as a scanned one is."""
    def body(i, acc):
        return acc + jnp.mean((jnp.tanh(xs[i] @ w1) @ w2 - ys[i]) ** 2)
    return jax.lax.fori_loop(0, xs.shape[0], body, jnp.zeros((), w1.dtype))


def fori_accumulated_gradient(w1, w2, xs, ys):
    def body(i, acc):
        return acc + jax.grad(lambda w: jnp.mean((jnp.tanh(xs[i] @ w) @ w2 - ys[i]) ** 2))(w1)
    return jnp.sum(jax.lax.fori_loop(0, xs.shape[0], body, jnp.zeros_like(w1)) ** 2)


@needs_tpu
@pytest.mark.parametrize("fn", [fori_microbatch_loss, fori_accumulated_gradient], ids=lambda f: f.__name__)
def test_a_loop_indexing_an_f32_stack_writes_a_bf16_copy(fn):
    specs = ("f32[2048,2048]", "f32[2048,2048]", "f32[16,512,2048]", "f32[16,512,2048]")
    answer = sphinx_jaxhlo.predict(fn, *specs, target="tpu:v5e", calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (True, True, "jaxhlo-predict-all-loop"), answer
    assert "bf16 before the loop" in answer.why, answer
    assert stored_by_the_compile(fn, specs, "tpu:v5e", answer.table_elements, temp_on=()) is True
