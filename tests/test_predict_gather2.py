"""The second H100 gather rules (``sphinx_jaxhlo/predict/gather.py``: ``_bag_decision``,
``_picked_decision``), checked against XLA's GPU compiler.

An embedding bag (rows gathered and reduced over a middle axis) fuses into the reduction when nothing but the
rows is in it (``emb[ids]``, ``jnp.take(..., mode='clip')``) and when 8 or more gathered rows share a table
row; masked or weighted row by row (``jnp.take``'s default fill mode, a weight a row) at 6 or fewer it is
written.  One element a row taken from an elementwise table and reduced across the rows is written for the
reduction; several a row reduced per row are left to the compile (5 a row fused, 25 written).  Whole rows
of an argument reduced over the last few axes (a permuted batch mixed in, ``mean(x[perm], axis=(2, 3))``)
fuse in one pass, as over the last axis alone.  One element a row of ``logits - logsumexp(logits)`` is
recomputed in the gather.  Each program
is compiled for the H100 (deviceless: no run, no GPU), so a later XLA that changes the answer fails here;
the probes are ``benchmarks/guide_predictor_gather2_probes.py``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from conftest import stored_by_the_compile

import sphinx_jaxhlo

H100 = "gpu:h100"


def bag_take(emb, ids):
    return jnp.sum(jnp.take(emb, ids, axis=0), axis=1)


def bag_index(emb, ids):
    return jnp.max(emb[ids], axis=1)


def bag_weighted(emb, ids, w):
    return jnp.sum(emb[ids] * w[..., None], axis=1)


def permuted_mix(x, perm):
    return jnp.mean(jnp.where(jnp.arange(x.shape[2])[:, None] < 50, x[perm], x), axis=(2, 3))


def picked_mean(x, y):
    return -jnp.mean(jnp.take_along_axis(jnp.exp(x), y[:, None], axis=-1))


def picked_index(x, y):
    return jnp.sum(jnp.tanh(x)[jnp.arange(x.shape[0]), y])


def picked_rows(x, y):
    return jnp.sum(jnp.take_along_axis(jnp.exp(x), y, axis=-1), axis=-1)


CASES = [
    # masked row by row (jnp.take fills out-of-bounds rows; a weight a row), few gathered rows a table row
    (bag_take, ("f32[32000,256]", "i32[64,256]"), True),
    (bag_weighted, ("f32[32000,256]", "i32[64,256]", "f32[64,256]"), True),
    # 16 gathered rows a table row: fused
    (bag_take, ("f32[1024,256]", "i32[64,256]"), False),
    # nothing but the rows (x[ids]): fused at any reuse
    (bag_index, ("f32[32000,256]", "i32[512,128]"), False),
    # whole rows of an argument (x[perm], a cutmix) reduced over the last few axes in one pass: fused
    (permuted_mix, ("f32[128,3,128,128]", "i32[128]"), False),
    # one element a row of an elementwise table, reduced across the rows: written
    (picked_mean, ("f32[4096,4096]", "i32[4096]"), True),
    (picked_index, ("bf16[2049,10000]", "i32[2049]"), True),
]


@pytest.mark.parametrize(("fn", "specs", "stored"), CASES,
                         ids=[f"{c[0].__name__}-{c[1][0]}-{c[1][1]}" for c in CASES])
def test_a_bag_or_a_pick_on_the_h100(fn, specs, stored):
    answer = sphinx_jaxhlo.predict(fn, *specs, target=H100, calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (stored, True, "jaxhlo-predict-h100-cost"), answer
    assert stored_by_the_compile(fn, specs, H100, answer.table_elements, temp_on=()) is stored


def label_logit(x, y):
    lp = x - jax.nn.logsumexp(x, axis=-1, keepdims=True)
    return -jnp.mean(jnp.take_along_axis(lp, y[:, None], axis=-1)[:, 0])


def test_a_label_logit_beside_a_logsumexp_is_recomputed_on_the_h100():
    """``logits - logsumexp(logits)`` is no softmax diamond: the gather recomputes the label's element and the
    logsumexp's reductions, which read the argument, fuse."""
    specs = ("f32[4096,4096]", "i32[4096]")
    answer = sphinx_jaxhlo.predict(label_logit, *specs, target=H100, calibrated=False)
    assert (answer.stored, answer.certain) == (False, True), answer
    assert "picks one element a row" in answer.why
    assert not stored_by_the_compile(label_logit, specs, H100, answer.table_elements, temp_on=())


def test_several_elements_a_row_reduced_per_row_are_left_to_the_compile():
    """Five elements a row summed per row fused (the row reduction is a loop of the elemental emitter);
    twenty-five were written: the rules do not decide it."""
    specs = ("f32[4096,4096]", "i32[4096,5]")
    answer = sphinx_jaxhlo.predict(picked_rows, *specs, target=H100, calibrated=False)
    assert answer.stored is None and not answer.certain and answer.rule == "jaxhlo-predict-all-limits", answer
    assert not stored_by_the_compile(picked_rows, specs, H100, 4096 * 5, temp_on=())
