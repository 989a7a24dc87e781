"""A second holdout of training code as JAX libraries write it, scored against the frozen rules first.

Written after the predictor's abstentions (``sphinx_jaxhlo.predict.limits``) were frozen, from the
patterns of popular JAX libraries (the code is written here, not copied): optax's losses (integer and
smoothed cross-entropy, sigmoid BCE, multiclass hinge, poly-1, NT-Xent, ranking softmax, KL with log
targets), flax/haiku/equinox norms (LayerNorm with an f32 upcast, RMSNorm, GroupNorm, BatchNorm
statistics, InstanceNorm, a vmapped row norm, WeightNorm), attention variants (flax's dot-product
attention with bias and mask, bf16 with an f32 softmax, grouped-query, ALiBi, rotary, sliding window,
soft-capped logits, cross-attention, Perceiver latents, vmapped heads, its gradient), optimizer updates
(optax's clip_by_global_norm + AdamW over a parameter tree, Lion, Nesterov SGD, LARS trust ratios,
Adafactor's update clipping, centered RMSProp, mixed-precision Adam, gradient accumulation, DP-SGD's
per-example clipping, a Newton-Schulz orthogonalization, SAM), metrics (masked accuracy, top-5 by
argsort and by top_k, AUC by ranking, mean IoU, calibration error, F1, NDCG, R2, recall@1) and other
training code (an MLP's value_and_grad, a GRU scan, a small CNN, an MoE router's balancing loss,
diffusion and VAE losses, PPO with entropy, double DQN, GAE), at their usual shapes, in f32 and bf16,
with batch dimensions, vmap and jax.grad.

**Ground truth**: the optimized HLO, read by the first holdout's independent code
(``guide_predictor_family.truth_of`` through ``guide_predictor_holdout.score``).  **Scores** as the
first holdout's: per target the share answered, right of the answers, each class right out of the
class, and on the TPU whether ``where`` is right for the stored tables the rules called stored (of
those it answered, and of all).

Run (resumable; each compile's truth is kept in ``benchmarks/data/guide_predictor_holdout3_truth.jsonl``)::

    python benchmarks/guide_predictor_holdout3.py compile --targets cpu,gpu:h100,tpu:v5e
    python benchmarks/guide_predictor_holdout3.py score --first   # once, before any change to the rules
    python benchmarks/guide_predictor_holdout3.py score

``score --first`` writes ``benchmarks/guide_predictor_holdout3_first.json`` and refuses to overwrite it.
"""

# ruff: noqa: E501 - each program's text stays as written: its hash keys the committed truth file

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program, _module  # noqa: E402
from guide_predictor_holdout import family_main  # noqa: E402

TRUTH_FILE = ROOT / "benchmarks" / "data" / "guide_predictor_holdout3_truth.jsonl"
FIRST_FILE = ROOT / "benchmarks" / "guide_predictor_holdout3_first.json"
#: What a score after the first evaluation is (the rules gained five abstentions from its misses since).
AFTER_FIRST = ("scored after the first evaluation: the rules as changed after it (abstentions drawn from its "
               "misses), then after wild3's (certainty said, not withheld: an answer the calibration does not "
               "call certain is kept, marked not certain; XLA's CSE of equal constants, shared broadcasts on the "
               "CPU, concatenates on the TPU)")
RESULTS_FILE = ROOT / "benchmarks" / "guide_predictor_holdout3_results.json"
FAMILY = "wild2"

#: (name, kind, body defining ``f``, argument specs).
PROGRAMS: list[tuple[str, str, str, str]] = [
    # -- losses (optax's) ---------------------------------------------------------------------
    ("optax_int_ce", "loss", """
def f(logits, labels):
    label_logits = jnp.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
    return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - label_logits)
""", "f32[16,512,50257], i32[16,512]"),
    ("optax_smoothed_ce", "loss", """
def f(logits, labels):
    n = logits.shape[-1]
    smooth = (1.0 - 0.1) * labels + 0.1 / n
    return jnp.mean(-jnp.sum(smooth * jax.nn.log_softmax(logits, axis=-1), axis=-1))
""", "f32[1024,1000], f32[1024,1000]"),
    ("optax_sigmoid_bce", "loss", """
def f(logits, labels):
    log_p = jax.nn.log_sigmoid(logits)
    log_not_p = jax.nn.log_sigmoid(-logits)
    return jnp.mean(-labels * log_p - (1.0 - labels) * log_not_p)
""", "f32[2048,1000], f32[2048,1000]"),
    ("optax_multiclass_hinge", "loss", """
def f(scores, labels):
    one_hot = jax.nn.one_hot(labels, scores.shape[-1])
    margin = jnp.max(scores + 1.0 - one_hot, axis=-1)
    return jnp.mean(margin - jnp.sum(scores * one_hot, axis=-1))
""", "f32[4096,1000], i32[4096]"),
    ("optax_poly1_ce", "loss", """
def f(logits, labels):
    p = jax.nn.softmax(logits, axis=-1)
    ce = -jnp.sum(labels * jax.nn.log_softmax(logits, axis=-1), axis=-1)
    pt = jnp.sum(labels * p, axis=-1)
    return jnp.mean(ce + 2.0 * (1.0 - pt))
""", "f32[2048,1000], f32[2048,1000]"),
    ("optax_ntxent", "loss", """
def f(emb, labels):
    emb = emb / jnp.linalg.norm(emb, axis=-1, keepdims=True)
    sim = emb @ emb.T / 0.07
    n = sim.shape[0]
    sim = jnp.where(jnp.eye(n, dtype=bool), -1e9, sim)
    pos = labels[:, None] == labels[None, :]
    pos = pos & ~jnp.eye(n, dtype=bool)
    logp = sim - jax.nn.logsumexp(sim, axis=-1, keepdims=True)
    return -jnp.mean(jnp.sum(jnp.where(pos, logp, 0.0), axis=-1) / jnp.maximum(jnp.sum(pos, axis=-1), 1))
""", "f32[1024,128], i32[1024]"),
    ("optax_ranking_softmax", "loss", """
def f(scores, labels):
    logp = jax.nn.log_softmax(scores, axis=-1)
    return -jnp.mean(jnp.sum(labels * logp, axis=-1) / jnp.maximum(jnp.sum(labels, axis=-1), 1e-6))
""", "f32[8192,200], f32[8192,200]"),
    ("optax_kl_log_targets", "loss", """
def f(log_predictions, log_targets):
    return jnp.mean(jnp.sum(jnp.exp(log_targets) * (log_targets - log_predictions), axis=-1))
""", "bf16[1024,32000], bf16[1024,32000]"),
    ("optax_squared_error_bf16", "loss", """
def f(pred, target):
    return jnp.mean(jnp.square(pred.astype(jnp.float32) - target.astype(jnp.float32)))
""", "bf16[64,224,224,3], bf16[64,224,224,3]"),
    ("ce_with_z_loss", "loss", """
def f(logits, labels):
    lse = jax.nn.logsumexp(logits, axis=-1)
    picked = jnp.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
    return jnp.mean(lse - picked + 1e-4 * lse ** 2)
""", "f32[8,1024,32128], i32[8,1024]"),
    ("dice_loss", "loss", """
def f(logits, mask):
    p = jax.nn.sigmoid(logits)
    inter = jnp.sum(p * mask, axis=(1, 2, 3))
    total = jnp.sum(p, axis=(1, 2, 3)) + jnp.sum(mask, axis=(1, 2, 3))
    return jnp.mean(1.0 - (2.0 * inter + 1.0) / (total + 1.0))
""", "f32[16,512,512,1], f32[16,512,512,1]"),
    ("segmentation_ce", "loss", """
def f(logits, labels):
    one_hot = jax.nn.one_hot(labels, logits.shape[-1])
    return -jnp.mean(jnp.sum(one_hot * jax.nn.log_softmax(logits), axis=-1))
""", "f32[8,256,256,21], i32[8,256,256]"),
    ("vae_loss", "loss", """
def f(recon_logits, x, mu, logvar):
    bce = jnp.sum(jnp.maximum(recon_logits, 0) - recon_logits * x + jnp.log1p(jnp.exp(-jnp.abs(recon_logits))), axis=-1)
    kl = -0.5 * jnp.sum(1 + logvar - mu ** 2 - jnp.exp(logvar), axis=-1)
    return jnp.mean(bce + kl)
""", "f32[1024,3072], f32[1024,3072], f32[1024,256], f32[1024,256]"),
    ("diffusion_eps_mse", "loss", """
def f(eps_pred, eps, t, snr):
    w = jnp.minimum(snr[t], 5.0) / snr[t]
    per = jnp.mean((eps_pred - eps) ** 2, axis=(1, 2, 3))
    return jnp.mean(w * per)
""", "f32[64,64,64,4], f32[64,64,64,4], i32[64], f32[1000]"),
    # -- norms (flax, haiku, equinox) ---------------------------------------------------------
    ("flax_layernorm_bf16", "norm", """
def f(x, scale, bias):
    x32 = x.astype(jnp.float32)
    mean = jnp.mean(x32, axis=-1, keepdims=True)
    mean2 = jnp.mean(jnp.square(x32), axis=-1, keepdims=True)
    var = jnp.maximum(mean2 - jnp.square(mean), 0.0)
    y = (x32 - mean) * jax.lax.rsqrt(var + 1e-6)
    return (y * scale + bias).astype(x.dtype)
""", "bf16[8,1024,1024], f32[1024], f32[1024]"),
    ("haiku_layernorm_var", "norm", """
def f(x, scale, offset):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale + offset
""", "f32[4096,2048], f32[2048], f32[2048]"),
    ("t5_rmsnorm", "norm", """
def f(x, weight):
    var = jnp.mean(jnp.square(x.astype(jnp.float32)), axis=-1, keepdims=True)
    return weight * (x * jax.lax.rsqrt(var + 1e-6)).astype(x.dtype)
""", "f32[16,512,768], f32[768]"),
    ("flax_groupnorm_nhwc", "norm", """
def f(x, scale, bias):
    n, h, w, c = x.shape
    g = x.reshape(n, h, w, 32, c // 32)
    mean = jnp.mean(g, axis=(1, 2, 4), keepdims=True)
    var = jnp.mean(jnp.square(g), axis=(1, 2, 4), keepdims=True) - jnp.square(mean)
    y = ((g - mean) * jax.lax.rsqrt(var + 1e-6)).reshape(n, h, w, c)
    return y * scale + bias
""", "f32[8,32,32,512], f32[512], f32[512]"),
    ("flax_batchnorm_train", "norm", """
def f(x, ra_mean, ra_var, scale, bias):
    mean = jnp.mean(x, axis=(0, 1, 2))
    var = jnp.mean(jnp.square(x), axis=(0, 1, 2)) - jnp.square(mean)
    y = (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale + bias
    return y, 0.9 * ra_mean + 0.1 * mean, 0.9 * ra_var + 0.1 * var
""", "f32[64,32,32,256], f32[256], f32[256], f32[256], f32[256]"),
    ("instance_norm", "norm", """
def f(x):
    mean = jnp.mean(x, axis=(1, 2), keepdims=True)
    var = jnp.var(x, axis=(1, 2), keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5)
""", "f32[16,64,64,128]"),
    ("layernorm_grad", "norm", """
def f(x, g):
    def ln(x):
        mu = jnp.mean(x, -1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(jnp.var(x, -1, keepdims=True) + 1e-5)
    return jax.grad(lambda x: jnp.sum(ln(x) * g))(x)
""", "f32[2048,1024], f32[2048,1024]"),
    ("equinox_vmap_layernorm", "norm", """
def f(x, weight, bias):
    def ln(row):
        mean = jnp.mean(row)
        var = jnp.var(row)
        return (row - mean) * jax.lax.rsqrt(var + 1e-5) * weight + bias
    return jax.vmap(ln)(x)
""", "f32[4096,1024], f32[1024], f32[1024]"),
    ("preln_mlp_block", "norm", """
def f(x, w1, w2):
    mu = jnp.mean(x, -1, keepdims=True)
    h = (x - mu) * jax.lax.rsqrt(jnp.var(x, -1, keepdims=True) + 1e-6)
    return x + jax.nn.gelu(h @ w1) @ w2
""", "f32[2048,1024], f32[1024,4096], f32[4096,1024]"),
    ("flax_weightnorm_dense", "norm", """
def f(x, v, g):
    w = v / jnp.linalg.norm(v, axis=0, keepdims=True) * g
    return x @ w
""", "f32[256,4096], f32[4096,4096], f32[4096]"),
    ("spectral_norm_power_iter", "norm", """
def f(w, u):
    v = w.T @ u
    v = v / (jnp.linalg.norm(v) + 1e-12)
    u = w @ v
    u = u / (jnp.linalg.norm(u) + 1e-12)
    sigma = u @ w @ v
    return w / sigma, u
""", "f32[4096,4096], f32[4096]"),
    # -- attention ----------------------------------------------------------------------------
    ("flax_dpa_bias", "attention", """
def f(q, k, v, bias):
    q = q / jnp.sqrt(q.shape[-1]).astype(q.dtype)
    w = jnp.einsum('...qhd,...khd->...hqk', q, k) + bias
    w = jax.nn.softmax(w, axis=-1)
    return jnp.einsum('...hqk,...khd->...qhd', w, v)
""", "f32[8,512,12,64], f32[8,512,12,64], f32[8,512,12,64], f32[8,12,512,512]"),
    ("flax_dpa_mask", "attention", """
def f(q, k, v, mask):
    w = jnp.einsum('bqhd,bkhd->bhqk', q, k) * 0.125
    w = jnp.where(mask, w, jnp.finfo(w.dtype).min)
    return jnp.einsum('bhqk,bkhd->bqhd', jax.nn.softmax(w, axis=-1), v)
""", "f32[8,512,12,64], f32[8,512,12,64], f32[8,512,12,64], bool[8,1,512,512]"),
    ("attention_bf16_f32_softmax", "attention", """
def f(q, k, v):
    s = jnp.einsum('bqhd,bkhd->bhqk', q, k, preferred_element_type=jnp.float32) * 0.125
    p = jax.nn.softmax(s, axis=-1)
    return jnp.einsum('bhqk,bkhd->bqhd', p.astype(v.dtype), v)
""", "bf16[4,2048,16,64], bf16[4,2048,16,64], bf16[4,2048,16,64]"),
    ("grouped_query_attention", "attention", """
def f(q, k, v):
    b, t, h, d = q.shape
    kvh = k.shape[2]
    q = q.reshape(b, t, kvh, h // kvh, d)
    s = jnp.einsum('btkgd,bskd->bkgts', q, k) / jnp.sqrt(d)
    p = jax.nn.softmax(s, axis=-1)
    return jnp.einsum('bkgts,bskd->btkgd', p, v).reshape(b, t, h, d)
""", "f32[2,1024,32,128], f32[2,1024,8,128], f32[2,1024,8,128]"),
    ("alibi_attention", "attention", """
def f(q, k, v, slopes):
    t = q.shape[2]
    pos = jnp.arange(t)
    bias = slopes[:, None, None] * (pos[None, None, :] - pos[None, :, None])
    s = jnp.einsum('bhqd,bhkd->bhqk', q, k) * 0.125 + bias
    s = jnp.where(pos[None, :] <= pos[:, None], s, -1e30)
    return jnp.einsum('bhqk,bhkd->bhqd', jax.nn.softmax(s, axis=-1), v)
""", "f32[2,16,1024,64], f32[2,16,1024,64], f32[2,16,1024,64], f32[16]"),
    ("rotary_attention", "attention", """
def f(q, k, v, cos, sin):
    def rope(x):
        x1, x2 = jnp.split(x, 2, axis=-1)
        return jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    s = jnp.einsum('bqhd,bkhd->bhqk', rope(q), rope(k)) * 0.08838
    return jnp.einsum('bhqk,bkhd->bqhd', jax.nn.softmax(s, axis=-1), v)
""", "f32[4,1024,8,128], f32[4,1024,8,128], f32[4,1024,8,128], f32[1024,1,64], f32[1024,1,64]"),
    ("sliding_window_attention", "attention", """
def f(q, k, v):
    t = q.shape[1]
    i = jnp.arange(t)
    keep = (i[None, :] <= i[:, None]) & (i[:, None] - i[None, :] < 256)
    s = jnp.einsum('bqd,bkd->bqk', q, k) * 0.125
    s = jnp.where(keep, s, -jnp.inf)
    return jnp.einsum('bqk,bkd->bqd', jax.nn.softmax(s, axis=-1), v)
""", "f32[16,2048,64], f32[16,2048,64], f32[16,2048,64]"),
    ("softcapped_attention", "attention", """
def f(q, k, v):
    s = jnp.einsum('bhqd,bhkd->bhqk', q, k) * 0.0625
    s = jnp.tanh(s / 50.0) * 50.0
    return jnp.einsum('bhqk,bhkd->bhqd', jax.nn.softmax(s, axis=-1), v)
""", "bf16[2,8,2048,256], bf16[2,8,2048,256], bf16[2,8,2048,256]"),
    ("decoder_cross_attention", "attention", """
def f(x, enc, wq, wk, wv):
    b, t, _ = x.shape
    q = (x @ wq).reshape(b, t, 8, 64)
    k = (enc @ wk).reshape(b, enc.shape[1], 8, 64)
    v = (enc @ wv).reshape(b, enc.shape[1], 8, 64)
    p = jax.nn.softmax(jnp.einsum('bqhd,bkhd->bhqk', q, k) * 0.125, axis=-1)
    return jnp.einsum('bhqk,bkhd->bqhd', p, v).reshape(b, t, 512)
""", "f32[8,128,512], f32[8,1024,512], f32[512,512], f32[512,512], f32[512,512]"),
    ("perceiver_latent_attention", "attention", """
def f(latents, inputs):
    s = jnp.einsum('ld,bnd->bln', latents, inputs) / jnp.sqrt(512.0)
    return jnp.einsum('bln,bnd->bld', jax.nn.softmax(s, axis=-1), inputs)
""", "f32[256,512], f32[8,8192,512]"),
    ("vmap_heads_attention", "attention", """
def f(q, k, v):
    def head(q, k, v):
        return jax.nn.softmax(q @ k.T * 0.125, axis=-1) @ v
    return jax.vmap(head, in_axes=(1, 1, 1), out_axes=1)(q, k, v)
""", "f32[1024,16,64], f32[1024,16,64], f32[1024,16,64]"),
    ("attention_grad_q", "attention", """
def f(q, k, v):
    def attn(q):
        p = jax.nn.softmax(jnp.einsum('bhqd,bhkd->bhqk', q, k) * 0.125, axis=-1)
        return jnp.sum(jnp.einsum('bhqk,bhkd->bhqd', p, v) ** 2)
    return jax.grad(attn)(q)
""", "f32[4,8,512,64], f32[4,8,512,64], f32[4,8,512,64]"),
    ("attention_lse_stats", "attention", """
def f(q, k):
    s = jnp.einsum('bqd,bkd->bqk', q, k) * 0.125
    return jax.nn.logsumexp(s, axis=-1), jnp.max(s, axis=-1)
""", "f32[32,1024,64], f32[32,1024,64]"),
    # -- optimizer updates (optax's) ------------------------------------------------------------
    ("optax_clip_adamw_tree", "optimizer", """
def f(g1, g2, g3, m1, m2, m3, v1, v2, v3, p1, p2, p3):
    grads, mus, nus, params = (g1, g2, g3), (m1, m2, m3), (v1, v2, v3), (p1, p2, p3)
    gnorm = jnp.sqrt(sum(jnp.sum(jnp.square(g)) for g in grads))
    scale = jnp.minimum(1.0, 1.0 / jnp.maximum(gnorm, 1e-12))
    out = []
    for g, m, v, p in zip(grads, mus, nus, params):
        g = g * scale
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * jnp.square(g)
        u = (m / 0.1) / (jnp.sqrt(v / 0.001) + 1e-8) + 1e-4 * p
        out.append((p - 3e-4 * u, m, v))
    return out
""", "f32[4096,1024], f32[1024,4096], f32[1024], f32[4096,1024], f32[1024,4096], f32[1024], f32[4096,1024], f32[1024,4096], f32[1024], f32[4096,1024], f32[1024,4096], f32[1024]"),
    ("optax_lion_with_norms", "optimizer", """
def f(g, m, p):
    update = jnp.sign(0.9 * m + 0.1 * g) + 0.1 * p
    new_p = p - 1e-4 * update
    new_m = 0.99 * m + 0.01 * g
    return new_p, new_m, jnp.sqrt(jnp.sum(g * g)), jnp.sqrt(jnp.sum(update * update))
""", "f32[4096,4096], f32[4096,4096], f32[4096,4096]"),
    ("nesterov_sgd_clip", "optimizer", """
def f(g, buf, p):
    g = g + 5e-4 * p
    norm = jnp.linalg.norm(g)
    g = jnp.where(norm > 1.0, g / norm, g)
    buf = 0.9 * buf + g
    return p - 0.1 * (g + 0.9 * buf), buf
""", "f32[8192,2048], f32[8192,2048], f32[8192,2048]"),
    ("lars_trust_ratio", "optimizer", """
def f(g, p, mom):
    pn = jnp.linalg.norm(p)
    gn = jnp.linalg.norm(g)
    trust = jnp.where((pn > 0) & (gn > 0), 0.001 * pn / (gn + 1e-4 * pn), 1.0)
    mom = 0.9 * mom + trust * (g + 1e-4 * p)
    return p - 0.1 * mom, mom
""", "f32[4096,4096], f32[4096,4096], f32[4096,4096]"),
    ("adafactor_update_clip", "optimizer", """
def f(g, vr, vc, p):
    g2 = jnp.square(g) + 1e-30
    vr = 0.8 * vr + 0.2 * jnp.mean(g2, axis=-1)
    vc = 0.8 * vc + 0.2 * jnp.mean(g2, axis=-2)
    r = vr / jnp.mean(vr, axis=-1, keepdims=True)
    u = g * jax.lax.rsqrt(r[:, None] * vc[None, :])
    rms = jnp.sqrt(jnp.mean(jnp.square(u)))
    u = u / jnp.maximum(1.0, rms)
    return p - 1e-2 * u, vr, vc
""", "f32[4096,4096], f32[4096], f32[4096], f32[4096,4096]"),
    ("centered_rmsprop", "optimizer", """
def f(g, mg, ms, p):
    mg = 0.9 * mg + 0.1 * g
    ms = 0.9 * ms + 0.1 * g * g
    u = g / jnp.sqrt(ms - mg * mg + 1e-8)
    return p - 1e-3 * u, mg, ms, jnp.max(jnp.abs(u))
""", "f32[4096,4096], f32[4096,4096], f32[4096,4096], f32[4096,4096]"),
    ("mixed_precision_adam", "optimizer", """
def f(g, m, v, p):
    g = g.astype(jnp.float32)
    gnorm = jnp.sqrt(jnp.sum(g * g))
    g = g / jnp.maximum(gnorm, 1.0)
    m = 0.9 * m + 0.1 * g
    v = 0.95 * v + 0.05 * g * g
    new_p = p.astype(jnp.float32) - 1e-4 * m / (jnp.sqrt(v) + 1e-8)
    return new_p.astype(p.dtype), m, v
""", "bf16[8192,4096], f32[8192,4096], f32[8192,4096], bf16[8192,4096]"),
    ("grad_accumulation_clip", "optimizer", """
def f(micro_grads):
    g = jnp.mean(micro_grads, axis=0)
    norm = jnp.sqrt(jnp.sum(g * g))
    return g * jnp.minimum(1.0, 1.0 / (norm + 1e-6))
""", "f32[8,4096,1024]"),
    ("dpsgd_per_example_clip", "optimizer", """
def f(w, x, y):
    def loss(w, xi, yi):
        logits = xi @ w
        return jax.nn.logsumexp(logits) - jnp.sum(logits * yi)
    grads = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, x, y)
    norms = jnp.sqrt(jnp.sum(grads ** 2, axis=(1, 2)))
    grads = grads / jnp.maximum(1.0, norms / 1.0)[:, None, None]
    return jnp.mean(grads, axis=0)
""", "f32[1024,10], f32[256,1024], f32[256,10]"),
    ("newton_schulz_orthogonalize", "optimizer", """
def f(g):
    x = g / (jnp.linalg.norm(g) + 1e-7)
    for _ in range(5):
        a = x @ x.T
        b = -4.775 * a + 2.0315 * a @ a
        x = 3.4445 * x + b @ x
    return x
""", "f32[1024,4096]"),
    ("sam_two_grads", "optimizer", """
def f(w, x, y):
    def loss(w):
        return jnp.mean((jnp.tanh(x @ w) - y) ** 2)
    g = jax.grad(loss)(w)
    e = 0.05 * g / (jnp.linalg.norm(g) + 1e-12)
    return jax.grad(loss)(w + e)
""", "f32[1024,1024], f32[4096,1024], f32[4096,1024]"),
    ("shampoo_preconditioner_stats", "optimizer", """
def f(g, left, right):
    left = 0.95 * left + 0.05 * g @ g.T
    right = 0.95 * right + 0.05 * g.T @ g
    return left / jnp.trace(left), right / jnp.trace(right)
""", "f32[2048,1024], f32[2048,2048], f32[1024,1024]"),
    ("ema_tree_with_norms", "optimizer", """
def f(e1, e2, p1, p2):
    n1 = 0.9999 * e1 + 0.0001 * p1
    n2 = 0.9999 * e2 + 0.0001 * p2
    pnorm = jnp.sqrt(jnp.sum(p1 ** 2) + jnp.sum(p2 ** 2))
    return n1, n2, pnorm
""", "f32[8192,1024], f32[1024,8192], f32[8192,1024], f32[1024,8192]"),
    # -- metrics ------------------------------------------------------------------------------
    ("masked_accuracy_bf16", "metric", """
def f(logits, labels, mask):
    correct = (jnp.argmax(logits, axis=-1) == labels) * mask
    return jnp.sum(correct) / jnp.maximum(jnp.sum(mask), 1.0)
""", "bf16[32,512,32000], i32[32,512], f32[32,512]"),
    ("top5_argsort", "metric", """
def f(logits, labels):
    top = jnp.argsort(-logits, axis=-1)[:, :5]
    return jnp.mean(jnp.any(top == labels[:, None], axis=-1))
""", "f32[1024,1000], i32[1024]"),
    ("top5_lax_topk_vocab", "metric", """
def f(logits, labels):
    _, idx = jax.lax.top_k(logits, 5)
    return jnp.mean(jnp.any(idx == labels[..., None], axis=-1))
""", "f32[512,50257], i32[512]"),
    ("auc_by_ranks", "metric", """
def f(scores, labels):
    order = jnp.argsort(scores)
    ranks = jnp.empty_like(order).at[order].set(jnp.arange(1, scores.shape[0] + 1))
    npos = jnp.sum(labels)
    nneg = labels.shape[0] - npos
    return (jnp.sum(ranks * labels) - npos * (npos + 1) / 2) / (npos * nneg)
""", "f32[1048576], f32[1048576]"),
    ("mean_iou", "metric", """
def f(logits, labels):
    pred = jax.nn.one_hot(jnp.argmax(logits, axis=-1), 21)
    true = jax.nn.one_hot(labels, 21)
    inter = jnp.sum(pred * true, axis=(0, 1, 2))
    union = jnp.sum(pred, axis=(0, 1, 2)) + jnp.sum(true, axis=(0, 1, 2)) - inter
    return jnp.mean(inter / jnp.maximum(union, 1.0))
""", "f32[8,256,256,21], i32[8,256,256]"),
    ("expected_calibration_error", "metric", """
def f(logits, labels):
    p = jax.nn.softmax(logits, axis=-1)
    conf = jnp.max(p, axis=-1)
    correct = jnp.argmax(logits, axis=-1) == labels
    bins = jax.nn.one_hot(jnp.minimum((conf * 15).astype(jnp.int32), 14), 15)
    count = jnp.sum(bins, axis=0)
    gap = jnp.abs(jnp.sum(bins * conf[:, None], axis=0) - jnp.sum(bins * correct[:, None], axis=0))
    return jnp.sum(gap) / jnp.maximum(jnp.sum(count), 1.0)
""", "f32[16384,1000], i32[16384]"),
    ("multilabel_f1", "metric", """
def f(logits, labels):
    pred = jax.nn.sigmoid(logits) > 0.5
    tp = jnp.sum(pred & (labels > 0.5), axis=0)
    fp = jnp.sum(pred & (labels <= 0.5), axis=0)
    fn = jnp.sum(~pred & (labels > 0.5), axis=0)
    return jnp.mean(2 * tp / jnp.maximum(2 * tp + fp + fn, 1))
""", "f32[8192,1000], f32[8192,1000]"),
    ("ndcg_at_k", "metric", """
def f(scores, rel):
    order = jnp.argsort(-scores, axis=-1)
    gains = jnp.take_along_axis(rel, order, axis=-1)[:, :10]
    disc = 1.0 / jnp.log2(jnp.arange(10) + 2.0)
    ideal = -jnp.sort(-rel, axis=-1)[:, :10]
    return jnp.mean(jnp.sum(gains * disc, -1) / jnp.maximum(jnp.sum(ideal * disc, -1), 1e-9))
""", "f32[2048,1000], f32[2048,1000]"),
    ("r2_score", "metric", """
def f(pred, y):
    ss_res = jnp.sum((y - pred) ** 2, axis=0)
    ss_tot = jnp.sum((y - jnp.mean(y, axis=0)) ** 2, axis=0)
    return jnp.mean(1.0 - ss_res / ss_tot)
""", "f32[262144,64], f32[262144,64]"),
    ("recall_at_1", "metric", """
def f(a, b):
    a = a / jnp.linalg.norm(a, axis=-1, keepdims=True)
    b = b / jnp.linalg.norm(b, axis=-1, keepdims=True)
    nearest = jnp.argmax(a @ b.T, axis=-1)
    return jnp.mean(nearest == jnp.arange(a.shape[0]))
""", "f32[4096,512], f32[4096,512]"),
    ("mc_predictive_entropy", "metric", """
def f(logits):
    probs = jnp.mean(jax.nn.softmax(logits, axis=-1), axis=0)
    return -jnp.mean(jnp.sum(probs * jnp.log(probs + 1e-12), axis=-1))
""", "f32[10,1024,1000]"),
    # -- other training code -------------------------------------------------------------------
    ("mlp_value_and_grad", "other", """
def f(w1, w2, x, labels):
    def loss(params):
        w1, w2 = params
        logits = jax.nn.relu(x @ w1) @ w2
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.sum(jax.nn.one_hot(labels, 10) * logp, axis=-1))
    return jax.value_and_grad(loss)((w1, w2))
""", "f32[784,512], f32[512,10], f32[256,784], i32[256]"),
    ("gru_scan_loss", "other", """
def f(xs, h0, wz, wr, wh, uz, ur, uh):
    def step(h, x):
        z = jax.nn.sigmoid(x @ wz + h @ uz)
        r = jax.nn.sigmoid(x @ wr + h @ ur)
        hh = jnp.tanh(x @ wh + (r * h) @ uh)
        h = (1 - z) * h + z * hh
        return h, jnp.sum(h ** 2)
    h, losses = jax.lax.scan(step, h0, xs)
    return jnp.mean(losses)
""", "f32[128,256,512], f32[256,512], f32[512,512], f32[512,512], f32[512,512], f32[512,512], f32[512,512], f32[512,512]"),
    ("cnn_global_pool", "other", """
def f(x, w1, w2):
    h = jax.lax.conv_general_dilated(x, w1, (1, 1), 'SAME', dimension_numbers=('NHWC', 'HWIO', 'NHWC'))
    h = jax.nn.relu(h)
    h = jax.lax.conv_general_dilated(h, w2, (2, 2), 'SAME', dimension_numbers=('NHWC', 'HWIO', 'NHWC'))
    return jnp.mean(jax.nn.relu(h), axis=(1, 2))
""", "f32[32,64,64,64], f32[3,3,64,128], f32[3,3,128,256]"),
    ("embed_classify_ce", "other", """
def f(table, ids, w, labels):
    h = jnp.mean(table[ids], axis=1)
    logits = h @ w
    return jnp.mean(jax.nn.logsumexp(logits, -1) - jnp.take_along_axis(logits, labels[:, None], -1)[:, 0])
""", "f32[32000,512], i32[512,256], f32[512,1000], i32[512]"),
    ("moe_router_balance", "other", """
def f(x, wg):
    logits = x @ wg
    probs = jax.nn.softmax(logits, axis=-1)
    top_p, top_i = jax.lax.top_k(probs, 2)
    mask = jnp.sum(jax.nn.one_hot(top_i, wg.shape[1]), axis=1)
    return wg.shape[1] * jnp.sum(jnp.mean(probs, axis=0) * jnp.mean(mask, axis=0)), top_p
""", "f32[16384,1024], f32[1024,64]"),
    ("ppo_entropy_bonus", "other", """
def f(logits, old_logp, actions, adv):
    logp_all = jax.nn.log_softmax(logits)
    logp = jnp.take_along_axis(logp_all, actions[:, None], -1)[:, 0]
    ratio = jnp.exp(logp - old_logp)
    pg = -jnp.mean(jnp.minimum(ratio * adv, jnp.clip(ratio, 0.8, 1.2) * adv))
    ent = -jnp.mean(jnp.sum(jnp.exp(logp_all) * logp_all, axis=-1))
    return pg - 0.01 * ent
""", "f32[65536,18], f32[65536], i32[65536], f32[65536]"),
    ("double_dqn_target", "other", """
def f(q_online_next, q_target_next, rewards, dones):
    a = jnp.argmax(q_online_next, axis=-1)
    q = jnp.take_along_axis(q_target_next, a[:, None], -1)[:, 0]
    return rewards + 0.99 * (1 - dones) * q
""", "f32[1048576,18], f32[1048576,18], f32[1048576], f32[1048576]"),
    ("gae_scan_normalize", "other", """
def f(rewards, values, dones):
    def step(gae, inp):
        r, v, nv, d = inp
        delta = r + 0.99 * nv * (1 - d) - v
        gae = delta + 0.99 * 0.95 * (1 - d) * gae
        return gae, gae
    nv = jnp.concatenate([values[1:], values[-1:]], 0)
    _, adv = jax.lax.scan(step, jnp.zeros(rewards.shape[1]), (rewards, values, nv, dones), reverse=True)
    return (adv - jnp.mean(adv)) / (jnp.std(adv) + 1e-8)
""", "f32[128,4096], f32[128,4096], f32[128,4096]"),
    ("per_example_grad_norms", "other", """
def f(w, x, y):
    def loss(w, xi, yi):
        return jnp.sum((jnp.tanh(xi @ w) - yi) ** 2)
    g = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, x, y)
    return jnp.sqrt(jnp.sum(g * g, axis=(1, 2)))
""", "f32[512,256], f32[128,512], f32[128,256]"),
    ("transformer_block_bf16", "other", """
def f(x, wqkv, wo, w1, w2):
    b, t, d = x.shape
    h = x.astype(jnp.float32)
    h = ((h - jnp.mean(h, -1, keepdims=True)) * jax.lax.rsqrt(jnp.var(h, -1, keepdims=True) + 1e-6)).astype(x.dtype)
    q, k, v = jnp.split((h @ wqkv).reshape(b, t, 3, 8, d // 8), 3, axis=2)
    s = jnp.einsum('bqhd,bkhd->bhqk', q[:, :, 0], k[:, :, 0]).astype(jnp.float32) / 8.0
    p = jax.nn.softmax(s, axis=-1).astype(x.dtype)
    a = jnp.einsum('bhqk,bkhd->bqhd', p, v[:, :, 0]).reshape(b, t, d)
    x = x + a @ wo
    return x + jax.nn.gelu(x @ w1) @ w2
""", "bf16[4,1024,512], bf16[512,1536], bf16[512,512], bf16[512,2048], bf16[2048,512]"),
    ("contrastive_clip_bf16", "other", """
def f(img, txt, logit_scale):
    img = img / jnp.linalg.norm(img, axis=-1, keepdims=True)
    txt = txt / jnp.linalg.norm(txt, axis=-1, keepdims=True)
    logits = (jnp.exp(logit_scale) * img @ txt.T).astype(jnp.float32)
    lp_i = jax.nn.log_softmax(logits, axis=1)
    lp_t = jax.nn.log_softmax(logits, axis=0)
    return -(jnp.mean(jnp.diagonal(lp_i)) + jnp.mean(jnp.diagonal(lp_t))) / 2
""", "bf16[2048,512], bf16[2048,512], bf16[]"),
    ("knowledge_distillation", "other", """
def f(student, teacher):
    t = 4.0
    pt = jax.nn.softmax(teacher / t, axis=-1)
    ls = jax.nn.log_softmax(student / t, axis=-1)
    return -jnp.mean(jnp.sum(pt * ls, axis=-1)) * t * t
""", "f32[512,32000], f32[512,32000]"),
    ("vmap_mse_grad_linear", "other", """
def f(w, x, y):
    def loss(w):
        return jnp.mean(jax.vmap(lambda xi, yi: jnp.sum((xi @ w - yi) ** 2))(x, y))
    return jax.grad(loss)(w)
""", "f32[1024,1024], f32[4096,1024], f32[4096,1024]"),
]


def programs() -> list[Program]:
    return [Program(f"wild2/{name}", FAMILY, _module(body), specs, [f"kind={kind}"])
            for name, kind, body, specs in PROGRAMS]


def main(argv: list[str] | None = None) -> int:
    return family_main(argv, description=__doc__.splitlines()[0], programs=programs, truth_file=TRUTH_FILE,
                       first_file=FIRST_FILE, results_file=RESULTS_FILE, after_first=AFTER_FIRST)


if __name__ == "__main__":
    raise SystemExit(main())
