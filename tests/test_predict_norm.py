"""The rules for a normalised table reduced again (``sphinx_jaxhlo/predict/norm.py``), checked against XLA's
H100 and TPU v5e compilers.

A softmax, a log-softmax or a layer norm reads its table in two passes; a second reduction of its output
is a third (``limits.passes``).  On the TPU v5e the output of a 2-D contraction so normalised and reduced
again is stored (``x @ w``, ``q @ k.T``, a softmax regression's cross-entropy, under ``jax.grad`` too); a
batched contraction's is left to the compile.  On the H100 a 2-D table normalised over rows of 512 or more
and reduced again over axis 0 is written by the softmax kernel for the column reduction; a reduction over
the same axis is left to the compile (it fused in the probes, was stored in ten family programs).  Each
program is compiled (no run, no chip), so a later XLA that changes the answer fails here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from conftest import stored_by_the_compile
from jax import lax

import sphinx_jaxhlo
from sphinx_jaxhlo.core import targets

T = "f32[4096,4096]"


def softmax_entropy_columns(x):
    p = jax.nn.softmax(x, axis=-1)
    return -jnp.sum(p * jnp.log(p + 1e-9), axis=0)


def softmax_mean_columns(x):
    return jnp.mean(jax.nn.softmax(x, axis=-1), axis=0)


def log_softmax_mean_columns(x):
    return jnp.mean(jax.nn.log_softmax(x, axis=-1), axis=0)


def layer_norm_mean_columns(x):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
    return jnp.mean((x - m) * lax.rsqrt(v + 1e-5), axis=0)


def softmax_entropy_rows(x):
    p = jax.nn.softmax(x, axis=-1)
    return -jnp.sum(p * jnp.log(p + 1e-9), axis=-1)


def attention_entropy_2d(q, k):
    p = jax.nn.softmax(q @ k.T, axis=-1)
    return -jnp.sum(p * jnp.log(p + 1e-9), axis=-1)


def attention_mean_2d(q, k):
    return jnp.mean(jax.nn.softmax(q @ k.T, axis=-1), axis=0)


def softmax_regression_xent(x, w, y):
    logits = x @ w
    return -jnp.sum(y * jax.nn.log_softmax(logits, axis=-1), axis=-1)


def layer_norm_of_dot_mean(x, w):
    return layer_norm_mean_columns(x @ w)


def grad_attention_entropy(q, k):
    return jax.grad(lambda q: jnp.sum(attention_entropy_2d(q, k)))(q)


def batched_attention_entropy(q, k):
    p = jax.nn.softmax(jnp.einsum("bqd,bkd->bqk", q, k), axis=-1)
    return -jnp.sum(p * jnp.log(p + 1e-9), axis=-1)


H100_CASES = [
    (softmax_entropy_columns, (T,)),
    (softmax_mean_columns, ("f32[16384,1000]",)),
    (log_softmax_mean_columns, (T,)),
    (layer_norm_mean_columns, ("bf16[4096,4096]",)),
]
QK = ("f32[4096,64]", "f32[4096,64]")
TPU_CASES = [
    (attention_entropy_2d, QK),
    (attention_mean_2d, QK),
    (softmax_regression_xent, ("f32[3072,128]", "f32[128,4096]", "f32[3072,4096]")),
    (layer_norm_of_dot_mean, ("bf16[4096,256]", "bf16[256,4096]")),
    (grad_attention_entropy, QK),
]
needs_h100 = pytest.mark.skipif(not targets.get_target("gpu:h100").available(),
                                reason="needs the gpu extra: pip install 'sphinx-jaxhlo[gpu]'")
needs_tpu = pytest.mark.skipif(not targets.get_target("tpu:v5e").available(),
                               reason="needs the tpu extra (CI installs it): pip install 'sphinx-jaxhlo[tpu]'")


@needs_h100
@pytest.mark.parametrize(("fn", "specs"), H100_CASES, ids=[f"{c[0].__name__}-{c[1][0]}" for c in H100_CASES])
def test_a_normalised_table_reduced_over_columns_is_written_on_the_h100(fn, specs):
    answer = sphinx_jaxhlo.predict(fn, *specs, target="gpu:h100", calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (True, True, "jaxhlo-predict-h100-softmax"), answer
    assert stored_by_the_compile(fn, specs, "gpu:h100", answer.table_elements)


@needs_h100
def test_a_normalised_table_reduced_over_its_rows_is_left_to_the_compile_on_the_h100():
    """Fused here, but stored in ten family programs with rows of 1,000, 255, 200...: "compile it"."""
    answer = sphinx_jaxhlo.predict(softmax_entropy_rows, T, target="gpu:h100", calibrated=False)
    assert (answer.stored, answer.rule) == (None, "jaxhlo-predict-all-limits") and "normalised" in answer.why, answer
    assert not stored_by_the_compile(softmax_entropy_rows, (T,), "gpu:h100", 4096 * 4096)


@needs_tpu
@pytest.mark.parametrize(("fn", "specs"), TPU_CASES, ids=[f"{c[0].__name__}-{c[1][0]}" for c in TPU_CASES])
def test_a_normalised_2d_contraction_reduced_again_is_stored_on_the_tpu(fn, specs):
    answer = sphinx_jaxhlo.predict(fn, *specs, target="tpu:v5e", calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (True, True, "jaxhlo-predict-tpu-readers"), answer
    assert stored_by_the_compile(fn, specs, "tpu:v5e", answer.table_elements)


@needs_tpu
def test_a_batched_attention_reduced_again_is_left_to_the_compile_on_the_tpu():
    """Fused here and in the forward probes; stored in a family's f16 attention and under jax.grad."""
    specs = ("f32[16,1024,64]", "f32[16,1024,64]")
    answer = sphinx_jaxhlo.predict(batched_attention_entropy, *specs, target="tpu:v5e", calibrated=False)
    assert (answer.stored, answer.rule) == (None, "jaxhlo-predict-all-limits") and "normalised" in answer.why, answer
    assert not stored_by_the_compile(batched_attention_entropy, specs, "tpu:v5e", 16 * 1024 * 1024)


def test_a_normalised_table_on_the_cpu_is_not_these_rules():
    answer = sphinx_jaxhlo.predict(softmax_mean_columns, T, target="cpu", calibrated=False)
    assert "reduced again" not in answer.why, answer


def distillation(s, t):
    """iBOT's and DINO's cross-entropy between a teacher's softmax and a student's log-softmax."""
    pt = jax.nn.softmax(t, axis=-1)
    return -jnp.mean(jnp.sum(pt * jax.nn.log_softmax(s, axis=-1), axis=-1))


@needs_tpu
@pytest.mark.parametrize("shape", ["16,196,8192", "64,50,8192"], ids=["16x196", "64x50"])
def test_a_batched_softmax_over_long_rows_is_left_to_the_compile_on_the_tpu(shape):
    """A 3-D table normalised over rows of 8,192 and reduced again (wild15's iBOT loss, a certain miss): the
    TPU wrote it here and fused it at other shapes the jaxpr does not tell apart, so the answer is "compile
    it"; the compile still writes it (a later XLA that fuses it fails here, and the limit can go)."""
    specs = (f"f32[{shape}]",) * 2
    answer = sphinx_jaxhlo.predict(distillation, *specs, target="tpu:v5e", calibrated=False)
    assert (answer.stored, answer.rule) == (None, "jaxhlo-predict-all-limits"), answer
    assert "rows of 8192" in answer.why, answer
    elements = 1
    for d in shape.split(","):
        elements *= int(d)
    assert stored_by_the_compile(distillation, specs, "tpu:v5e", elements, temp_on=())


@needs_tpu
def test_the_same_softmax_of_a_2d_table_is_fused_on_the_tpu():
    specs = ("f32[4096,8192]",) * 2
    answer = sphinx_jaxhlo.predict(distillation, *specs, target="tpu:v5e", calibrated=False)
    assert (answer.stored, answer.certain) == (False, True), answer
    assert not stored_by_the_compile(distillation, specs, "tpu:v5e", 4096 * 8192, temp_on=())
