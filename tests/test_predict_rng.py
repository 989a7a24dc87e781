"""The rules for random draws of the table's size (``sphinx_jaxhlo/predict/rng.py``), checked against XLA.

On the CPU jax lowers the threefry hash as a loop of its five rounds, whose state (the draw's ``u32`` bits) is
written whatever reads the draw, an ``argmax`` too (``jax.random.categorical``, which the CPU's ``argmax`` rule
answered fused), and under ``jax.grad`` of a dropout loss; a row of noise broadcast over the table is no
table-sized draw.  On the TPU an ``rbg`` key's bits and those of ``jax_threefry_partitionable`` off are
written, a threefry draw read once fuses, and one read in two passes (a variance) is kept between them.  On
the H100 an ``rbg`` key's bits are written by a loop fusion of their own.  Each program is compiled (no run,
no device), so a later XLA or jax that changes the answer fails here.
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


def categorical(logits, kd):
    return jax.random.categorical(jax.random.wrap_key_data(kd), logits, axis=-1)


def dropout_grad(x, kd):
    key = jax.random.wrap_key_data(kd)

    def loss(x):
        keep = jax.random.bernoulli(key, 0.9, x.shape)
        return jnp.sum(jnp.where(keep, jnp.sin(x) / 0.9, 0.0) ** 2)

    return jax.grad(loss)(x)


def row_noise(x, kd):
    z = jax.random.normal(jax.random.wrap_key_data(kd), x.shape[1:])
    return jnp.sum(jnp.exp(x + z), axis=1)


def rbg_uniform_sum(x, seed):
    u = jax.random.uniform(jax.random.key(seed, impl="rbg"), x.shape)
    return jnp.sum(u * x, axis=1)


def dropout_mean_unpartitioned(x, kd):
    with jax.threefry_partitionable(False):
        keep = jax.random.bernoulli(jax.random.wrap_key_data(kd), 0.9, x.shape)
    return jnp.mean(jnp.where(keep, x / 0.9, 0.0), axis=0)


def dropout_mean(x, kd):
    keep = jax.random.bernoulli(jax.random.wrap_key_data(kd), 0.9, x.shape)
    return jnp.mean(jnp.where(keep, x / 0.9, 0.0), axis=0)


def noisy_variance(x, kd):
    y = x + jax.random.normal(jax.random.wrap_key_data(kd), x.shape)
    m = jnp.mean(y, axis=1, keepdims=True)
    return jnp.mean((y - m) ** 2, axis=1)


CPU_CASES = [
    (categorical, ("f32[4096,1000]", "u32[2]"), True, "jaxhlo-predict-cpu-other"),
    (dropout_grad, ("f32[2048,2048]", "u32[2]"), True, "jaxhlo-predict-cpu-other"),
    (row_noise, ("f32[2048,2048]", "u32[2]"), False, "jaxhlo-predict-cpu-ynn"),
]
TPU_CASES = [
    (rbg_uniform_sum, ("f32[4096,4096]", "i32[]"), True, "jaxhlo-predict-tpu-topk"),
    (dropout_mean_unpartitioned, ("f32[4096,4096]", "u32[2]"), True, "jaxhlo-predict-tpu-topk"),
    (dropout_mean, ("f32[4096,4096]", "u32[2]"), False, "jaxhlo-predict-tpu-fused"),
    (noisy_variance, ("f32[4096,4096]", "u32[2]"), True, "jaxhlo-predict-tpu-readers"),
]


@pytest.mark.parametrize(("fn", "specs", "stored", "rule"), CPU_CASES, ids=["categorical", "dropout-grad",
                                                                         "row-noise"])
def test_the_cpu_writes_a_threefry_draw_of_the_table_size(fn, specs, stored, rule):
    answer = sphinx_jaxhlo.predict(fn, *specs, target="cpu", calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (stored, True, rule), answer
    assert stored_by_the_compile(fn, specs, "cpu", answer.table_elements) is stored


@needs_tpu
@pytest.mark.parametrize(("fn", "specs", "stored", "rule"), TPU_CASES,
                         ids=["rbg", "unpartitioned", "dropout", "two-passes"])
def test_the_tpu_writes_the_bits_of_rbg_and_unpartitioned_draws(fn, specs, stored, rule):
    answer = sphinx_jaxhlo.predict(fn, *specs, target="tpu:v5e", calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (stored, True, rule), answer
    assert stored_by_the_compile(fn, specs, "tpu:v5e", answer.table_elements, temp_on=()) is stored


def test_the_h100_writes_an_rbg_keys_bits():
    specs = ("f32[4096,4096]", "i32[]")
    answer = sphinx_jaxhlo.predict(rbg_uniform_sum, *specs, target="gpu:h100", calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (True, True, "jaxhlo-predict-h100-topk"), answer
    assert stored_by_the_compile(rbg_uniform_sum, specs, "gpu:h100", answer.table_elements,
                                 temp_on=("gpu:h100",)) is True
