"""The rules for contraction chains (``sphinx_jaxhlo/predict/dots.py``), checked against XLA's CPU, H100 and
TPU v5e compilers.

A program whose only reduction is a contraction of an operand computed elementwise (``exp(x) @ w``, a
one-hot comparison ``oa.T @ ob``): the CPU writes the operand (XLA's loop fusion, then a YNN fusion that
holds the dot alone), the TPU computes it in the dot's output fusion; the operand being another
contraction's output (``exp(x @ w1) @ w2``), the first product is written on the CPU and the H100.  Two
sibling contractions feeding one TPU table (``x @ w1 + y @ w2``, SwiGLU): one dot's output is written for
the other's fusion.  A chain reduced after (an MLP's two layers, then a mean) is left to the compile on the
TPU: it wrote the first product at some sizes and fused it at others, as the two cases here show.  Each
program is compiled (no run, no chip), so a later XLA that changes the answer fails here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from conftest import stored_by_the_compile

import sphinx_jaxhlo
from sphinx_jaxhlo.core import targets


def exp_then_contract(x, w):
    return jnp.exp(x) @ w


def one_hot_confusion(a, b):
    oa = (a[:, None] == jnp.arange(256)).astype(jnp.float32)
    ob = (b[:, None] == jnp.arange(256)).astype(jnp.float32)
    return oa.T @ ob


def contraction_of_a_contraction(x, w1, w2):
    return jnp.exp(x @ w1) @ w2


def two_contractions_summed(x, y, w1, w2):
    return jnp.mean(x @ w1 + y @ w2, axis=0)


def swiglu_mean(x, y, w1, w2):
    return jnp.mean(jax.nn.silu(x @ w1) * (y @ w2), axis=0)


def mlp_mean(x, w1, w2):
    return jnp.mean(jax.nn.relu(x @ w1) @ w2, axis=0)


EXP = ("f32[4096,4096]", "f32[4096,64]")
ONE_HOT = ("s32[65536]", "s32[65536]")
CHAIN = ("f32[4096,256]", "f32[256,4096]", "f32[4096,64]")
TWO = ("f32[4096,512]", "f32[4096,512]", "f32[512,4096]", "f32[512,4096]")
needs_h100 = pytest.mark.skipif(not targets.get_target("gpu:h100").available(),
                                reason="needs the gpu extra: pip install 'sphinx-jaxhlo[gpu]'")
needs_tpu = pytest.mark.skipif(not targets.get_target("tpu:v5e").available(),
                               reason="needs the tpu extra (CI installs it): pip install 'sphinx-jaxhlo[tpu]'")


def _answered_as_compiled(fn, specs, target, stored, rule):
    """The rules' answer is ``stored`` under ``rule``, certain, and the compile agrees: a buffer of 90 % of
    the table's elements (the contraction's operand), or none."""
    answer = sphinx_jaxhlo.predict(fn, *specs, target=target, calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (stored, True, rule), answer
    assert stored_by_the_compile(fn, specs, target, answer.table_elements, temp_on=()) is stored


CPU_CASES = [(exp_then_contract, EXP), (one_hot_confusion, ONE_HOT), (contraction_of_a_contraction, CHAIN)]


@pytest.mark.parametrize(("fn", "specs"), CPU_CASES, ids=[c[0].__name__ for c in CPU_CASES])
def test_the_operand_of_a_lone_contraction_is_written_on_the_cpu(fn, specs):
    _answered_as_compiled(fn, specs, "cpu", True, "jaxhlo-predict-cpu-dot")


@needs_h100
def test_a_contraction_of_a_contraction_stores_the_first_gemm_on_the_h100():
    _answered_as_compiled(contraction_of_a_contraction, CHAIN, "gpu:h100", True, "jaxhlo-predict-h100-gemm")


@needs_h100
def test_an_elementwise_operand_of_a_lone_contraction_is_left_to_the_compile_on_the_h100():
    """The Triton GEMM takes ``exp`` in (no buffer of the table's size), but may split K, by shapes the rules
    do not follow: "compile it"."""
    answer = sphinx_jaxhlo.predict(exp_then_contract, *EXP, target="gpu:h100", calibrated=False)
    assert (answer.stored, answer.rule) == (None, "jaxhlo-predict-all-limits"), answer
    assert not stored_by_the_compile(exp_then_contract, EXP, "gpu:h100", 4096 * 4096, temp_on=())


TPU_CASES = [
    (exp_then_contract, EXP, False, "jaxhlo-predict-tpu-fused"),
    (one_hot_confusion, ONE_HOT, False, "jaxhlo-predict-tpu-fused"),
    (two_contractions_summed, TWO, True, "jaxhlo-predict-tpu-readers"),
    (swiglu_mean, TWO, True, "jaxhlo-predict-tpu-readers"),
]


@needs_tpu
@pytest.mark.parametrize(("fn", "specs", "stored", "rule"), TPU_CASES, ids=[c[0].__name__ for c in TPU_CASES])
def test_lone_and_sibling_contractions_on_the_tpu(fn, specs, stored, rule):
    _answered_as_compiled(fn, specs, "tpu:v5e", stored, rule)


@needs_tpu
@pytest.mark.parametrize(("specs", "stored"), [
    (("f32[4096,512]", "f32[512,4096]", "f32[4096,1024]"), False),
    (("f32[4096,512]", "f32[512,2048]", "f32[2048,2048]"), True),
], ids=["wide-fused", "square-stored"])
def test_a_chain_reduced_after_is_left_to_the_compile_on_the_tpu(specs, stored):
    """The first product of an MLP reduced after: fused at one size, written at another; "compile it"."""
    answer = sphinx_jaxhlo.predict(mlp_mean, *specs, target="tpu:v5e", calibrated=False)
    assert (answer.stored, answer.rule) == (None, "jaxhlo-predict-all-limits"), answer
    assert "another contraction" in answer.why, answer
    assert stored_by_the_compile(mlp_mean, specs, "tpu:v5e", answer.table_elements, temp_on=()) is stored


def per_example_squared_gradients(w, x, y):
    """EWC's diagonal Fisher (wild14): per-example gradients of a logistic loss by ``vmap(grad)``, squared and
    averaged.  Each gradient is ``x_i`` times a scalar: a dot_general that contracts nothing, which XLA's
    algebraic simplifier makes a broadcast multiply, so the CPU's YNN fusion reduces it (no dot writes it)."""
    def nll(w, xi, yi):
        z = jnp.dot(xi, w)
        return jax.nn.softplus(z) - yi * z
    per = jax.vmap(jax.grad(nll), in_axes=(None, 0, 0))(w, x, y)
    return jnp.mean(per * per, axis=0)


def test_a_dot_that_contracts_nothing_is_a_multiply_on_the_cpu():
    _answered_as_compiled(per_example_squared_gradients, ("f32[2048]", "f32[4096,2048]", "f32[4096]"), "cpu", False,
                          "jaxhlo-predict-cpu-ynn")
