"""The H100 gather rules (``sphinx_jaxhlo/predict/gather.py``), checked against XLA's GPU compiler.

A scatter writing a table-sized value (``jax.grad`` of a gather, an ``.at[].add``) writes it; a gather of a
softmax's output over rows of at most 16,384 reads it written by the Triton softmax fusion, over longer rows
recomputes the few elements it takes; whole rows gathered (an embedding lookup, ``x[idx]``) of an argument
or of an elementwise function of arguments fuse into one reduction pass over the last axis and are written
for two passes; an embedding bag (a lookup reduced over a middle axis) is ``tests/test_predict_gather2.py``'s,
and left to the compile where the probes of ``benchmarks/guide_predictor_gather2_probes.py`` do not decide it
(6 to 8 gathered rows a table row, masked).  Each program is compiled for the H100
(deviceless: no run, no GPU), so a later XLA that changes the answer fails here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from conftest import stored_by_the_compile

import sphinx_jaxhlo
from sphinx_jaxhlo.core import targets

H100 = "gpu:h100"


def cross_entropy(x, labels):
    lp = jax.nn.log_softmax(x, axis=-1)
    return -jnp.mean(jnp.take_along_axis(lp, labels[:, None], axis=-1))


def softmax_rows(x, i):
    return jnp.sum(jax.nn.softmax(x, axis=-1)[i] ** 2, axis=-1)


def cross_entropy_grad(x, labels):
    return jax.grad(cross_entropy)(x, labels)


def take_grad(x, labels):
    return jax.grad(lambda x: jnp.mean(jnp.take_along_axis(x, labels[:, None], axis=-1)))(x)


def embedding_grad(emb, ids):
    return jax.grad(lambda emb: jnp.sum(jnp.linalg.norm(jnp.take(emb, ids, axis=0), axis=-1)))(emb)


def rows_of_tanh(x, i):
    r = jnp.tanh(x)[i]
    return jnp.sum(r * r, axis=-1)


def rows_of_argument(x, i):
    return jnp.sum(jnp.exp(x[i]), axis=-1)


def embedding_norm(emb, ids):
    e = jnp.take(emb, ids, axis=0)
    return jnp.sqrt(jnp.sum(e * e, axis=-1))


def embedding_layer_norm(emb, ids):
    e = jnp.take(emb, ids, axis=0)
    m = jnp.mean(e, axis=-1, keepdims=True)
    return jnp.mean((e - m) ** 2, axis=-1)


def rows_variance(x, i):
    r = x[i]
    m = jnp.mean(r, axis=-1, keepdims=True)
    return jnp.mean((r - m) ** 2, axis=-1)


def embedding_bag(emb, ids):
    return jnp.sum(jnp.take(emb, ids, axis=0), axis=1)


CASES = [
    # a softmax over rows of 16,384 or fewer: its output is written for the gather
    (cross_entropy, ("f32[4096,4096]", "i32[4096]"), True, "jaxhlo-predict-h100-softmax"),
    (cross_entropy, ("bf16[1024,16384]", "i32[1024]"), True, "jaxhlo-predict-h100-softmax"),
    (softmax_rows, ("f32[8192,1024]", "i32[8192]"), True, "jaxhlo-predict-h100-softmax"),
    # longer rows: the gather recomputes the elements it takes
    (cross_entropy, ("f32[1024,20000]", "i32[1024]"), False, "jaxhlo-predict-h100-cost"),
    # a scatter (a gather's gradient) writes its table-sized output
    (cross_entropy_grad, ("f32[4096,4096]", "i32[4096]"), True, "jaxhlo-predict-h100-topk"),
    (take_grad, ("f32[4096,4096]", "i32[4096]"), True, "jaxhlo-predict-h100-topk"),
    (embedding_grad, ("f32[32000,512]", "i32[64,256]"), True, "jaxhlo-predict-h100-topk"),
    # whole rows of an argument or of an elementwise function of one, one pass over the last axis: fused
    (rows_of_tanh, ("f32[8192,1024]", "i32[8192]"), False, "jaxhlo-predict-h100-cost"),
    (rows_of_tanh, ("bf16[8192,1024]", "i32[32768]"), False, "jaxhlo-predict-h100-cost"),
    (rows_of_argument, ("f32[8192,1024]", "i32[8192]"), False, "jaxhlo-predict-h100-cost"),
    (embedding_norm, ("f32[32000,512]", "i32[64,256]"), False, "jaxhlo-predict-h100-cost"),
    # two passes over gathered rows: written
    (embedding_layer_norm, ("f32[32000,512]", "i32[64,256]"), True, "jaxhlo-predict-h100-cost"),
    (rows_variance, ("f32[8192,1024]", "i32[8192]"), True, "jaxhlo-predict-h100-cost"),
]


def _stored(fn, specs, table: int) -> bool:
    """A buffer of 90 % of the table's elements (the family benchmark's truth; temp memory not counted)."""
    return stored_by_the_compile(fn, specs, H100, table, temp_on=())


@pytest.mark.parametrize(("fn", "specs", "stored", "rule"), CASES,
                         ids=[f"{c[0].__name__}-{c[1][0]}-{c[1][1]}" for c in CASES])
def test_a_gathers_table_on_the_h100(fn, specs, stored, rule):
    answer = sphinx_jaxhlo.predict(fn, *specs, target=H100, calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (stored, True, rule), answer
    assert _stored(fn, specs, answer.table_elements) is stored


def test_an_embedding_bag_between_the_measured_reuses_is_left_to_the_compile():
    """An embedding lookup by ``jnp.take`` (its fill mode masks every row) summed over its middle axis: written
    at 6 gathered rows a table row or fewer, fused at 8 or more; at 6.8 the rules abstain."""
    specs = ("f32[2400,512]", "i32[64,256]")
    answer = sphinx_jaxhlo.predict(embedding_bag, *specs, target=H100, calibrated=False)
    assert answer.stored is None and not answer.certain and answer.rule == "jaxhlo-predict-all-limits", answer


def gathered_rows_gradient(x, i):
    """The gradient of a sum over rows gathered from ``tanh(x)``: no reduction is live, a scatter of the
    cotangent builds the table, and the TPU writes it (the rules for the TPU's gathers, outside any reduction)."""
    return jax.grad(lambda x: jnp.sum(jnp.tanh(x)[i] ** 2))(x)


@pytest.mark.skipif(not targets.get_target("tpu:v5e").available(),
                    reason="needs the tpu extra (CI installs it): pip install 'sphinx-jaxhlo[tpu]'")
def test_a_gathers_gradient_is_written_on_the_tpu():
    specs = ("f32[8192,1024]", "i32[8192]")
    answer = sphinx_jaxhlo.predict(gathered_rows_gradient, *specs, target="tpu:v5e", calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (True, True, "jaxhlo-predict-tpu-topk"), answer
    assert "outside any reduction" in answer.why, answer
    assert stored_by_the_compile(gathered_rows_gradient, specs, "tpu:v5e", answer.table_elements) is True
