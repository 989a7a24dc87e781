"""The CPU rules for a table between two contractions, and for a dot that reads the softmax, checked against XLA.

XLA CPU's ``LibraryRewriter`` (``library_rewriter.cc``) grows a YNN fusion from a reduction up through any
op YNN takes whose readers are all in the fusion, dots included: a dot, GELU, a dot, a residual add and a
layer norm's sums are one YNN fusion (wild10's DeepNorm block), while the same dots with no reduction after
them, or a GELU YNN does not take (``erfc``, ``cos``), write the table between them.  A dot reads the
softmax in the reductions' fusion when ``DotDecomposer`` leaves that operand as it is (one contracting and
one free dimension, batch dimensions first) and YNN takes the dot (its left operand contracts its last
dimension): attention's ``dot(v, p)`` (wild10's RoPE attention, wild2's rotary and biased attention)
fuses; grouped-query attention's ``p`` (two free dimensions) and ``p^T v`` are written.  Each program is
compiled for the CPU (no run), so a later XLA that changes the answer fails here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import sphinx_jaxhlo


def deepnorm(x, w1, w2):
    h = jax.nn.gelu(x @ w1) @ w2
    r = 2.2 * x + h
    mu = jnp.mean(r, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(r - mu), axis=-1, keepdims=True)
    return (r - mu) * jax.lax.rsqrt(var + 1e-5)


def deepnorm_exact_gelu(x, w1, w2):
    # exact GELU is erfc, not in YNN's table: a loop fusion writes it between the dots
    r = x + jax.nn.gelu(x @ w1, approximate=False) @ w2
    return jnp.mean(jnp.square(r - jnp.mean(r, axis=-1, keepdims=True)), axis=-1)


def first_product_returned(x, w1, w2):
    a = x @ w1
    return jnp.mean(x + jax.nn.gelu(a) @ w2, axis=-1), a


def first_product_transposed(xt, w1, w2):
    # the first dot's left operand contracts its first dimension: XLA's own dot, whose output is written
    a = jax.lax.dot_general(xt, w1, (((0,), (0,)), ((), ())))
    return jnp.mean(jax.nn.gelu(a) @ w2, axis=-1)


def mlp_without_reduction_after(x, w1, w2):
    # a pre-LN block: the reductions come before the dots, the GELU is a loop fusion between two YNN dots
    h = (x - jnp.mean(x, -1, keepdims=True)) * jax.lax.rsqrt(jnp.var(x, -1, keepdims=True) + 1e-6)
    return x + jax.nn.gelu(h @ w1) @ w2


def attention(q, k, v):
    # jax writes the second einsum as dot(v, p): p contracts its last dimension
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / 8.0
    return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v)


def attention_transposed_probabilities(q, k, v):
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / 8.0
    return jnp.einsum("bhqk,bhqd->bhkd", jax.nn.softmax(s, axis=-1), v)


def grouped_query_attention(q, k, v):
    b, t, h, d = q.shape
    q = q.reshape(b, t, k.shape[2], h // k.shape[2], d)
    p = jax.nn.softmax(jnp.einsum("btkgd,bskd->bkgts", q, k) / 8.0, axis=-1)
    return jnp.einsum("bkgts,bskd->btkgd", p, v).reshape(b, t, h, d)


def channels_last_mlp(x, w1, w2):
    # ``x @ w1`` of an [N, H, W, C] activation: the decomposer's reshape is a bitcast, the MLP and the
    # mean are one YNN fusion (a ConvNeXt block's, wild11, less its convolution)
    return jnp.mean(x + jax.nn.gelu(x @ w1) @ w2, axis=(1, 2))


X, W1, W2 = "f32[4096,256]", "f32[256,1024]", "f32[1024,256]"
HEADS = ("f32[2,512,4,64]",) * 3
CASES = [
    (deepnorm, (X, W1, W2), False),
    (deepnorm_exact_gelu, (X, W1, W2), True),
    (first_product_returned, (X, W1, W2), True),
    (first_product_transposed, ("f32[256,4096]", W1, W2), True),
    (mlp_without_reduction_after, (X, W1, W2), True),
    (channels_last_mlp, ("f32[8,28,28,256]", W1, W2), False),
    (channels_last_mlp, ("f32[3,17,19,96]", "f32[96,384]", "f32[384,96]"), False),
    (attention, HEADS, False),
    (attention_transposed_probabilities, ("f32[2,4,512,64]",) * 3, True),
    (grouped_query_attention, ("f32[2,512,8,64]", "f32[2,512,2,64]", "f32[2,512,2,64]"), True),
]


@pytest.mark.parametrize(("fn", "specs", "stored"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_table_beside_two_contractions_on_the_cpu(fn, specs, stored):
    answer = sphinx_jaxhlo.predict(fn, *specs, target="cpu", calibrated=False)
    assert (answer.stored, answer.certain) == (stored, True), answer
    report = sphinx_jaxhlo.analyze(fn, *specs, targets="cpu")["cpu"]
    elements = [m for m in report.materialized if m.bytes >= 0.9 * 4 * answer.table_elements]
    assert bool(elements) is stored, [(m.name, m.shape, m.bytes) for m in report.materialized]


def test_a_bf16_value_against_an_f32_softmax_is_an_f32_dot() -> None:
    """A bf16 ``v`` read with an f32 softmax (RoPE's f32 angles promote q and k): XLA converts ``v`` to f32
    and the dot is YNN's, in the reductions' fusion; the rules no longer call it a dot YNN does not take
    (the bf16 contraction of a computed table is still left to the compile)."""

    def rope_like(q, k, v):
        ang = jnp.arange(q.shape[1], dtype=jnp.float32)[None, :, None, None] * 0.01
        s = jnp.einsum("bqhd,bkhd->bhqk", q * jnp.cos(ang), k * jnp.cos(ang)) / 8.0
        return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v)

    specs = ("bf16[2,512,4,64]",) * 3
    answer = sphinx_jaxhlo.predict(rope_like, *specs, target="cpu", calibrated=False)
    assert not (answer.certain and answer.stored), answer
    report = sphinx_jaxhlo.analyze(rope_like, *specs, targets="cpu")["cpu"]
    assert not [m for m in report.materialized if m.bytes >= 0.9 * 4 * answer.table_elements]


def test_a_scans_stacked_output_is_not_the_reductions_table() -> None:
    """wild10's clipped update over stacked layers: the norm's sum reads the argument in its own fusion
    (fused, as the rules say); the one table-sized buffer is the scan's stacked output, a broadcast of
    zeros the loop writes in place (``dynamic-update-slice``) and returns: the output itself, which the
    report does not list as an intermediate (nor the guide as a table it stored)."""

    def clip_stacked(gs, ps):
        scale = jnp.minimum(1.0, 1.0 / (jnp.sqrt(jnp.sum(jnp.square(gs))) + 1e-6))
        def step(carry, gp):
            g, p = gp
            return carry + jnp.sum(g * p), p - 1e-3 * scale * g
        dot, new = jax.lax.scan(step, 0.0, (gs, ps))
        return new, dot

    specs = ("f32[4,256,1024]",) * 2
    answer = sphinx_jaxhlo.predict(clip_stacked, *specs, target="cpu", calibrated=False)
    assert (answer.stored, answer.certain) == (False, True), answer
    report = sphinx_jaxhlo.analyze(clip_stacked, *specs, targets="cpu")["cpu"]
    big = [m for m in report.materialized if m.bytes >= 0.9 * 4 * answer.table_elements]
    assert big == [], [(m.name, m.producer_op) for m in big]
    assert report.memory.output_bytes >= 4 * answer.table_elements  # where the stacked table is
    from sphinx_jaxhlo.predict.agreement import agreement
    found = agreement(report)
    assert found is None or found.agrees is not False, found
