"""An eighth holdout, wild8: an outside review's 43 programs (masks, gradients of squared losses,
transposes, low precision, vmaps, other reductions, odd, tiny and huge shapes), scored first against the
predictor frozen at commit c4eb6785.

The programs are not this project's: a reviewer from outside, who did not write the rules, wrote them for
the classes of the issue's review (issue 50): masks (``jnp.where`` with a boolean argument or a padding
mask, ``softmax(where=...)``, masked logsumexp, max-pooling and argmax, ``any`` of a conjunction),
gradients and ``value_and_grad`` of squared losses (linear regression at 100,000 rows, ``bf16`` and
``f16`` weights, with respect to the input, an MLP with biases, per-example gradients under ``vmap``),
transposes between the producer and the reduction (``.T``, ``swapaxes``, an einsum whose output is
transposed, a transposed product read by a logsumexp), other reductions (max, min, prod, argmax, argmin,
std, var, ``all``, logsumexp), and odd (1000 x 999), tiny (3 x 5) and huge (100,000 x 4,096) shapes, in
``f32``, ``bf16`` and ``f16``. The reviewer recorded ``predict()``'s answers for every program and target
before any compile (main then at c4eb6785), then compiled them; the programs are copied here verbatim
from the review (names, bodies and argument specs), under the family name ``wild8``. Its first evaluation
is scored from a ``git archive`` of c4eb6785, the predictor the reviewer's record was made with, not of
the commit that adds this file.

**Ground truth** and **scores** as the first holdout's (``guide_predictor_holdout.score_programs``).

"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_holdout import OutsideFamily  # noqa: E402

FAMILY = "wild8"

#: (name, kind, body defining ``f``, argument specs), as the review wrote them.
PROGRAMS: list[tuple[str, str, str, str]] = [
    # -- masks ---------------------------------------------------------------------------------
    ("mask_where_sum_arg", "mask", """
def f(x, mask):
    return jnp.sum(jnp.where(mask, x, 0.0), axis=1)
""", "f32[4096,4096], bool[4096,4096]"),
    ("mask_where_exp_mean", "mask", """
def f(x, mask):
    return jnp.mean(jnp.where(mask, jnp.exp(x), 0.0), axis=0)
""", "f32[4096,4096], bool[4096,4096]"),
    ("mask_mean_padding_bf16", "mask", """
def f(h, lengths):
    mask = jnp.arange(h.shape[1])[None, :] < lengths[:, None]
    s = jnp.sum(jnp.where(mask[..., None], h, 0).astype(jnp.float32), axis=1)
    return s / jnp.maximum(lengths[:, None], 1).astype(jnp.float32)
""", "bf16[64,1024,1024], i32[64]"),
    ("mask_mean_dense_relu", "mask", """
def f(x, w, mask):
    h = jax.nn.relu(x @ w)
    m = mask[..., None].astype(h.dtype)
    return jnp.sum(h * m, axis=1) / jnp.sum(m, axis=1)
""", "f32[32,512,768], f32[768,2048], bool[32,512]"),
    ("masked_softmax_rows", "mask", """
def f(s, mask):
    p = jax.nn.softmax(jnp.where(mask, s, -1e9), axis=-1)
    return jnp.sum(p * s, axis=-1)
""", "f32[2048,2048], bool[2048,2048]"),
    ("masked_softmax_f16_where_kw", "mask", """
def f(s, mask):
    p = jax.nn.softmax(s, axis=-1, where=mask)
    return jnp.max(p, axis=-1)
""", "f16[1024,4096], bool[1024,4096]"),
    ("attn_bool_mask", "mask", """
def f(q, k, v, mask):
    s = q @ k.T / 8.0
    s = jnp.where(mask, s, -jnp.inf)
    return jax.nn.softmax(s, axis=-1) @ v
""", "f32[2048,64], f32[2048,64], f32[2048,64], bool[2048,2048]"),
    ("attn_causal_vmap_heads_bf16", "mask", """
def f(q, k, v):
    def head(q, k, v):
        n = q.shape[0]
        s = (q @ k.T).astype(jnp.float32) * 0.125
        s = jnp.where(jnp.tril(jnp.ones((n, n), bool)), s, -1e30)
        return (jax.nn.softmax(s, axis=-1).astype(v.dtype) @ v)
    return jax.vmap(head)(q, k, v)
""", "bf16[8,1024,64], bf16[8,1024,64], bf16[8,1024,64]"),
    ("masked_logsumexp_odd", "mask", """
def f(x, mask):
    return jax.nn.logsumexp(jnp.where(mask, x, -jnp.inf), axis=-1)
""", "f32[1000,999], bool[1000,999]"),
    ("masked_max_pool_bf16", "mask", """
def f(h, mask):
    return jnp.max(jnp.where(mask[..., None], h, jnp.finfo(h.dtype).min), axis=1)
""", "bf16[32,2048,512], bool[32,2048]"),
    ("masked_argmax_product", "mask", """
def f(h, w, allowed):
    logits = h @ w
    return jnp.argmax(jnp.where(allowed, logits, -jnp.inf), axis=-1)
""", "f32[1024,512], f32[512,8192], bool[1024,8192]"),
    ("mask_any_and", "mask", """
def f(x, mask):
    return jnp.any(mask & (jnp.abs(x) > 3.0), axis=-1)
""", "f32[4096,4096], bool[4096,4096]"),
    # -- gradients of squared losses ----------------------------------------------------------
    ("grad_linreg_huge", "grad", """
def f(w, x, y):
    return jax.grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
""", "f32[4096,256], f32[100000,4096], f32[100000,256]"),
    ("grad_linreg_bf16", "grad", """
def f(w, x, y):
    def loss(w):
        r = (x @ w).astype(jnp.float32) - y
        return jnp.mean(r * r)
    return jax.grad(loss)(w)
""", "bf16[1024,1024], bf16[8192,1024], f32[8192,1024]"),
    ("value_and_grad_linreg_f16", "grad", """
def f(w, x, y):
    return jax.value_and_grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
""", "f16[512,2048], f16[4096,512], f16[4096,2048]"),
    ("grad_wrt_input_sq", "grad", """
def f(x, w, y):
    return jax.grad(lambda x: jnp.mean((jnp.tanh(x @ w) - y) ** 2))(x)
""", "f32[4096,1024], f32[1024,4096], f32[4096,4096]"),
    ("grad_mlp_tanh_bias", "grad", """
def f(params, x, y):
    w1, b1, w2, b2 = params
    def loss(w1, b1, w2, b2):
        h = jnp.tanh(x @ w1 + b1)
        return jnp.mean((h @ w2 + b2 - y) ** 2)
    return jax.grad(loss, argnums=(0, 1, 2, 3))(w1, b1, w2, b2)
""", "(f32[784,2048], f32[2048], f32[2048,10], f32[10]), f32[8192,784], f32[8192,10]"),
    ("value_and_grad_mlp_bf16", "grad", """
def f(w1, w2, x, y):
    def loss(w1, w2):
        h = jax.nn.gelu(x @ w1)
        out = (h @ w2).astype(jnp.float32)
        return jnp.mean((out - y) ** 2)
    return jax.value_and_grad(loss, argnums=(0, 1))(w1, w2)
""", "bf16[1024,4096], bf16[4096,1024], bf16[2048,1024], f32[2048,1024]"),
    ("vmap_per_example_grad_sq", "grad", """
def f(w, xs, ys):
    def loss(w, x, y):
        return jnp.sum((jnp.tanh(x @ w) - y) ** 2)
    g = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    return jnp.mean(jnp.sum(g * g, axis=(1, 2)))
""", "f32[256,128], f32[512,256], f32[512,128]"),
    ("grad_sq_loss_power2", "grad", """
def f(w, x, y):
    return jax.grad(lambda w: jnp.mean((jnp.sin(x @ w) - y) ** 2))(w)
""", "f32[2048,2048], f32[2048,2048], f32[2048,2048]"),
    # -- transposes ------------------------------------------------------------------------------
    ("transpose_sum_arg_odd", "transpose", """
def f(x):
    return jnp.sum(x.T, axis=1)
""", "f32[1000,999]"),
    ("transpose_exp_sum_odd", "transpose", """
def f(x):
    return jnp.sum(jnp.exp(x.T), axis=1)
""", "f32[1000,999]"),
    ("swapaxes_tanh_mean", "transpose", """
def f(x):
    return jnp.mean(jnp.tanh(jnp.swapaxes(x, 1, 2)), axis=-1)
""", "f32[32,512,1024]"),
    ("swapaxes_tanh_mean_bf16", "transpose", """
def f(x):
    return jnp.mean(jnp.tanh(jnp.swapaxes(x, 1, 2)), axis=-1)
""", "bf16[32,512,1024]"),
    ("einsum_out_transposed_exp", "transpose", """
def f(a, b):
    return jnp.sum(jnp.exp(jnp.einsum('ik,jk->ji', a, b)), axis=1)
""", "f32[4096,64], f32[4096,64]"),
    ("einsum_out_transposed_f16", "transpose", """
def f(a, b):
    return jnp.sum(jnp.einsum('ik,jk->ji', a, b), axis=1)
""", "f16[4096,256], f16[4096,256]"),
    ("logsumexp_of_product_T", "transpose", """
def f(a, b):
    return jax.nn.logsumexp((a @ b).T, axis=-1)
""", "f32[2048,512], f32[512,4096]"),
    ("transpose_cos_max_pow2", "transpose", """
def f(x):
    return jnp.max(jnp.cos(x).T, axis=0)
""", "f32[8192,8192]"),
    # -- other reductions ---------------------------------------------------------------------------
    ("max_of_product", "reduce", """
def f(a, b):
    return jnp.max(a @ b, axis=1)
""", "f32[4096,256], f32[256,4096]"),
    ("min_of_cos_odd", "reduce", """
def f(x):
    return jnp.min(jnp.cos(x), axis=0)
""", "f32[1000,999]"),
    ("prod_of_sigmoid", "reduce", """
def f(x):
    return jnp.prod(jax.nn.sigmoid(x), axis=1)
""", "f32[4096,4096]"),
    ("argmax_product_bf16", "reduce", """
def f(h, w):
    return jnp.argmax(h @ w, axis=-1)
""", "bf16[2048,1024], bf16[1024,32000]"),
    ("std_of_product", "reduce", """
def f(x, w):
    return jnp.std(x @ w, axis=0)
""", "f32[8192,512], f32[512,2048]"),
    ("var_of_exp_f16", "reduce", """
def f(x):
    return jnp.var(jnp.exp(x), axis=-1)
""", "f16[4096,4096]"),
    ("all_isfinite_scaled", "reduce", """
def f(x):
    return jnp.all(jnp.isfinite(x * 2.0), axis=1)
""", "f32[4096,4096]"),
    ("logsumexp_arg_bf16", "reduce", """
def f(x):
    return jax.nn.logsumexp(x, axis=-1)
""", "bf16[4096,32000]"),
    ("tiny_exp_sum", "reduce", """
def f(x):
    return jnp.sum(jnp.exp(x))
""", "f32[3,5]"),
    ("tiny_grad_sq", "reduce", """
def f(w, x, y):
    return jax.grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
""", "f32[5,3], f32[3,5], f32[3,3]"),
    ("huge_mean_square_arg", "reduce", """
def f(x):
    return jnp.mean(x * x, axis=1)
""", "f32[100000,4096]"),
    ("huge_gelu_dense_mean", "reduce", """
def f(x, w):
    return jnp.mean(jax.nn.gelu(x @ w), axis=0)
""", "f32[100000,4096], f32[4096,1024]"),
    ("vmap_batched_lse_product", "reduce", """
def f(a, b):
    return jax.vmap(lambda x, y: jax.nn.logsumexp(x @ y.T, axis=-1))(a, b)
""", "f32[16,1024,64], f32[16,1024,64]"),
    ("zscore_sum_f32", "reduce", """
def f(x):
    mu = jnp.mean(x, axis=0)
    sd = jnp.std(x, axis=0)
    return jnp.sum(((x - mu) / sd) ** 2, axis=1)
""", "f32[8192,1024]"),
    ("argmin_sqdist_bf16", "reduce", """
def f(x, c):
    d = jnp.sum(x * x, 1)[:, None] - 2 * x @ c.T + jnp.sum(c * c, 1)[None, :]
    return jnp.argmin(d, axis=1)
""", "bf16[16384,128], bf16[4096,128]"),
]


SCRIPT = OutsideFamily("guide_predictor_holdout9", FAMILY, PROGRAMS, __doc__ or "")
__doc__, FILES, programs, main = SCRIPT.usage, SCRIPT.files, SCRIPT.programs, SCRIPT.main

if __name__ == "__main__":
    raise SystemExit(main())
