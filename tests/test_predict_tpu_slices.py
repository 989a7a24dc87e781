"""The TPU rule for a computed table read through several slices, checked against XLA's TPU compiler.

Measured deviceless on the TPU v5e (libtpu is closed, so the rule is what its compiles show): a table
computed from the arguments and then read through two or more windows of itself (``w[..., 0]`` and
``w[..., 1]`` of a pairwise table, its two halves, strided ``w[..., ::2]`` and ``w[..., 1::2]``, a
``jnp.where`` between tables) is written, whatever reads the windows and whichever axis they take; one
window alone, or the windows taken of an argument (transposed or broadcast) before the arithmetic, fuse;
a converted argument's windows went both ways, and are left to the compile.  The whole table read by a
reduction is one more window: a sliced softmax (its sum over the exponentials, then a slice of the result)
writes the exponentials.  Each program is compiled
for the TPU (no run, no chip), so a later libtpu that changes the answer fails here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from conftest import stored_by_the_compile

import sphinx_jaxhlo
from sphinx_jaxhlo.core import targets

pytestmark = pytest.mark.skipif(not targets.get_target("tpu:v5e").available(),
                                reason="needs the tpu extra (CI installs it): pip install 'sphinx-jaxhlo[tpu]'")


def pairwise_product_of_two_windows(a, b):
    w = jnp.maximum(a[:, None, :], b[None, :, :]) - 1.0
    return jnp.sum(w[..., 0] * w[..., 1], axis=1)


def one_window(a, b):
    w = jnp.maximum(a[:, None, :], b[None, :, :]) - 1.0
    return jnp.sum(w[..., 0], axis=1)


def two_halves(a, b):
    w = jnp.maximum(a[:, None, :], b[None, :, :]) - 1.0
    h = w.shape[0] // 2
    return jnp.sum(w[:h] * w[h:], axis=1)


def strided_windows(a, b):
    w = jnp.maximum(a[:, None, :], b[None, :, :]) - 1.0
    return jnp.sum(w[..., ::2] * w[..., 1::2], axis=(1, 2))


def windows_in_two_reductions(a, b):
    w = jnp.maximum(a[:, None, :], b[None, :, :]) - 1.0
    return jnp.sum(w[..., 0], axis=1) + jnp.sum(w[..., 1], axis=1)


def windows_of_the_arguments(a, b):
    return jnp.sum((a[:, None, 0] - b[None, :, 0]) * (a[:, None, 1] - b[None, :, 1]), axis=1)


def windows_through_a_where(a, b, m):
    w = jnp.where(m[:, :, None], a[:, None, :], b[None, :, :])
    return jnp.sum(w[..., 0] * w[..., 1], axis=1)


def windows_of_a_converted_argument(x):
    w = x.astype(jnp.float32)
    return jnp.sum(w[..., 0] * w[..., 1], axis=1)


def windows_of_a_broadcast_argument(a, b):
    w = jnp.broadcast_to(a[:, None, :], (a.shape[0], b.shape[0], 2))
    return jnp.sum(w[..., 0] * w[..., 1] * b[None, :, 0], axis=1)


def windows_of_a_transposed_argument(x):
    w = x.transpose(2, 0, 1)
    return jnp.sum(w[0] * w[1], axis=1)


def gradient_of_two_windows(a, b):
    def loss(a):
        w = jnp.maximum(a[:, None, :], b[None, :, :]) - 1.0
        return jnp.sum(jnp.log1p(w[..., 0] ** 2 + w[..., 1] ** 2))
    return jax.grad(loss)(a)


def pairwise_giou_cost(a, b):
    # wild11's GIoU matching cost: the intersection's and the hull's widths and heights are two-wide tables
    wh = jnp.clip(jnp.minimum(a[:, None, 2:], b[None, :, 2:]) - jnp.maximum(a[:, None, :2], b[None, :, :2]), 0.0)
    inter = wh[..., 0] * wh[..., 1]
    hull_wh = jnp.maximum(a[:, None, 2:], b[None, :, 2:]) - jnp.minimum(a[:, None, :2], b[None, :, :2])
    hull = hull_wh[..., 0] * hull_wh[..., 1]
    return jnp.min(1.0 - inter / hull, axis=1)


def _answered_as_compiled(fn, specs, stored, word):
    """The rules' answer is ``stored``, certain (a stored one under tpu-readers, saying ``word``), and the
    compile agrees: a buffer of 90 % of the table's elements, or none."""
    answer = sphinx_jaxhlo.predict(fn, *specs, target="tpu:v5e", calibrated=False)
    assert (answer.stored, answer.certain) == (stored, True), answer
    if stored:
        assert answer.rule == "jaxhlo-predict-tpu-readers" and word in answer.why, answer
    assert stored_by_the_compile(fn, specs, "tpu:v5e", answer.table_elements, temp_on=()) is stored


NARROW = ("f32[2048,2]", "f32[4096,2]")
def sliced_softmax(x):
    # wild12's speculative decoding: the target's softmax, all but its last position kept; the sum reads the
    # exponentials whole and the slice one window of them
    p = jax.nn.softmax(x.astype(jnp.float32), axis=-1)[:, :-1]
    return jnp.sum(p * p, axis=-1)


def a_sum_beside_a_window(x):
    e = jnp.exp(x)
    return jnp.sum(e, -1), jnp.sum(e[:, 1:] * 2.0, -1)


def one_window_of_an_exponential(x):
    # one window, and no reduction of the whole table: fused
    return jnp.sum(jnp.exp(x)[:, :-1], axis=-1)


CASES = [
    (pairwise_product_of_two_windows, NARROW, True),
    (pairwise_product_of_two_windows, ("f32[256,128]", "f32[256,128]"), True),
    (pairwise_product_of_two_windows, ("bf16[1000,3]", "bf16[3000,3]"), True),
    (one_window, NARROW, False),
    (two_halves, NARROW, True),
    (strided_windows, ("f32[256,128]", "f32[256,128]"), True),
    (windows_in_two_reductions, NARROW, True),
    (windows_of_the_arguments, NARROW, False),
    (windows_through_a_where, (*NARROW, "bool[2048,4096]"), True),
    (windows_of_a_broadcast_argument, NARROW, False),
    (windows_of_a_transposed_argument, ("f32[2048,4096,2]",), False),
    (gradient_of_two_windows, ("f32[1024,3]", "f32[2048,3]"), True),
    (pairwise_giou_cost, ("f32[1024,4]", "f32[2048,4]"), True),
    (sliced_softmax, ("bf16[16,6,32000]",), True),
    (sliced_softmax, ("f32[96,4097]",), True),
    (a_sum_beside_a_window, ("f32[16,6,32000]",), True),
    (one_window_of_an_exponential, ("f32[16,6,32000]",), False),
]


def test_windows_of_a_converted_argument_are_left_to_the_compile():
    """Two f32 columns of a bf16 table are written (compiled here); wild5's rotary embeddings take the
    strided halves of a converted bf16 argument and fuse: no rule decides, the answer is "compile it"."""
    answer = sphinx_jaxhlo.predict(windows_of_a_converted_argument, "bf16[2048,4096,2]", target="tpu:v5e",
                                   calibrated=False)
    assert answer.stored is None and not answer.certain and "compile it" in answer.why, answer
    report = sphinx_jaxhlo.analyze(windows_of_a_converted_argument, "bf16[2048,4096,2]", targets="tpu:v5e")["tpu:v5e"]
    assert [m for m in report.materialized if m.bytes >= 0.9 * 4 * 2048 * 4096 * 2]


@pytest.mark.parametrize(("fn", "specs", "stored"), CASES,
                         ids=[f"{c[0].__name__}-{c[1][0]}" for c in CASES])
def test_a_computed_table_read_through_several_windows_on_the_tpu(fn, specs, stored):
    # a stored table in HBM or in the chip's own memory: any buffer of the table's size or more
    _answered_as_compiled(fn, specs, stored, "windows")


def groupwise_absmax(w):
    # wild13's int4 packing: a group-wise quantiser's scales, the last dimension split in groups of 128
    return jnp.max(jnp.abs(w.reshape(w.shape[0], -1, 128)), axis=-1)


def groups_of(k):
    def split_sum(x):
        return jnp.sum(jnp.exp(x).reshape(x.shape[0], -1, k), axis=-1)
    split_sum.__name__ = f"groups_of_{k}"
    return split_sum


def groups_over_the_middle_axis(x):
    return jnp.sum(jnp.exp(x).reshape(x.shape[0], -1, 128), axis=1)


def groups_of_the_argument(x):
    return jnp.sum(x.reshape(x.shape[0], -1, 128), axis=-1)


@pytest.mark.parametrize(("fn", "spec", "stored"), [
    (groupwise_absmax, "f32[4096,4096]", True),
    (groups_of(16), "f32[2048,4096]", True),
    (groups_of(256), "bf16[2048,4096]", True),
    (groups_of(8), "f32[2048,4096]", False),
    (groups_over_the_middle_axis, "f32[2048,4096]", False),
    (groups_of_the_argument, "f32[2048,4096]", False),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_a_computed_table_whose_last_dimension_is_split_in_groups_on_the_tpu(fn, spec, stored):
    """A reduction over the last axis of a computed table whose last dimension a reshape split into groups
    of 16 or more is written first (the TPU's tiled layout); groups of 8, the middle axis, or the argument
    reduced as it is fuse."""
    _answered_as_compiled(fn, (spec,), stored, "split")


def beam_candidates(scores):
    # wild13's diverse beam search and wild6's beam step: a beam's scores flattened for one top_k
    return jax.lax.top_k((scores * 2.0 + 1.0).reshape(scores.shape[0], -1), 16)[0]


def beam_argmax(scores):
    return jnp.argmax(jnp.exp(scores).reshape(scores.shape[0], -1), axis=-1)


def merged_leading_dimensions(scores):
    return jax.lax.top_k((scores * 2.0 + 1.0).reshape(-1, scores.shape[-1]), 16)[0]


def merged_then_max(scores):
    return jnp.max((scores * 2.0 + 1.0).reshape(scores.shape[0], -1), axis=-1)


@pytest.mark.parametrize(("fn", "spec", "stored"), [
    (beam_candidates, "f32[4,8,256000]", True),
    (beam_candidates, "bf16[16,4,65536]", True),
    (beam_argmax, "f32[4,8,256000]", True),
    (merged_leading_dimensions, "f32[4,8,256000]", False),
    (merged_then_max, "f32[4,8,256000]", False),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_a_top_k_of_a_computed_table_whose_last_dimensions_were_merged_on_the_tpu(fn, spec, stored):
    """A top_k or an argmax over the last axis of a computed table whose last two dimensions a reshape merged
    is written relaid out first; a merge of the leading dimensions, or a plain max, fuse."""
    _answered_as_compiled(fn, (spec,), stored, "merged")
