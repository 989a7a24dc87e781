"""A holdout of programs as JAX code in the wild writes them, scored against the guide's frozen rules.

The programs are the usual computations of training code, written here from their definitions (not
copied from any library): losses (cross-entropy with integer or one-hot labels, label smoothing,
z-loss, sigmoid and focal losses, Huber, log-cosh, hinge, KL, contrastive), norms (LayerNorm, RMSNorm,
GroupNorm, batch statistics, weight standardization, global gradient norms), attention variants
(scaled dot-product, causal, padding bias, multi-head in bf16, multi-query, cross-attention over a long
memory, linear attention, entropy of attention), optimizer updates (Adam with global-norm clipping,
LAMB's trust ratio, Adafactor's factored moments, Lion, momentum with weight decay, Shampoo-style
statistics), metrics (accuracy, top-5, perplexity, Brier, calibration confidence, PSNR, retrieval
recall, confusion matrix) and a few others (PPO's clipped objective, TD errors, discounted returns,
per-example losses under vmap, a scan over layers, gradients), at the shapes these run at (vocabularies
of 32,000, sequences of 1,024 and 2,048, widths of 512 to 4,096, batches of 64 to 1,024).

**Ground truth** is read from the optimized HLO by the benchmark's independent code
(``guide_predictor_family.truth_of``: an intermediate of at least 0.9 of the table's elements is written
to memory; on the TPU, the memory space of the largest such buffer).  **Scores**, per target: the share
of programs the rules answer (``certain``), the share of those answers that are right, each class
(tables XLA stores, tables it fuses) right out of the class, and on the TPU whether ``where`` (on-chip or
HBM) is right for the stored tables the rules called stored.

Run (resumable; each compile's truth is kept in ``benchmarks/data/guide_predictor_holdout_truth.jsonl``)::

    python benchmarks/guide_predictor_holdout.py compile --targets cpu,gpu:h100,tpu:v5e
    python benchmarks/guide_predictor_holdout.py score --first   # the first evaluation, once, before tuning
    python benchmarks/guide_predictor_holdout.py score           # the rules as they are now

``score --first`` writes ``benchmarks/guide_predictor_holdout_first.json`` and refuses to overwrite it:
the first evaluation is the honest one.  ``score`` writes ``benchmarks/guide_predictor_holdout_results.json``.
"""



from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program, _module, compile_truth, predicted  # noqa: E402
from guide_predictor_family import load_truth as family_truth  # noqa: E402

TRUTH_FILE = ROOT / "benchmarks" / "data" / "guide_predictor_holdout_truth.jsonl"
FIRST_FILE = ROOT / "benchmarks" / "guide_predictor_holdout_first.json"
RESULTS_FILE = ROOT / "benchmarks" / "guide_predictor_holdout_results.json"
TARGETS = ("cpu", "gpu:h100", "tpu:v5e")
FAMILY = "wild"
#: What a later family's score after its first evaluation is.
AFTER_FIRST = "scored after the first evaluation: the rules as they are now, not as they were first scored"

#: (name, kind, body defining ``f``, argument specs).
PROGRAMS: list[tuple[str, str, str, str]] = [
    # -- losses ------------------------------------------------------------------------------
    ("ce_int_labels", "loss", """
def f(logits, labels):
    logp = logits - jax.nn.logsumexp(logits, axis=-1, keepdims=True)
    picked = jnp.take_along_axis(logp, labels[:, None], axis=-1)[:, 0]
    return -jnp.mean(picked)
""", "f32[256,32000], i32[256]"),
    ("ce_one_hot", "loss", """
def f(logits, targets):
    return -jnp.mean(jnp.sum(targets * jax.nn.log_softmax(logits, axis=-1), axis=-1))
""", "f32[256,32000], f32[256,32000]"),
    ("ce_label_smoothing", "loss", """
def f(logits, labels):
    k = logits.shape[-1]
    soft = jax.nn.one_hot(labels, k) * 0.9 + 0.1 / k
    return -jnp.mean(jnp.sum(soft * jax.nn.log_softmax(logits), axis=-1))
""", "f32[512,32000], i32[512]"),
    ("z_loss", "loss", """
def f(logits):
    return 1e-4 * jnp.mean(jax.nn.logsumexp(logits, axis=-1) ** 2)
""", "f32[1024,32000]"),
    ("ce_bf16_logits", "loss", """
def f(logits, labels):
    logits = logits.astype(jnp.float32)
    lse = jax.nn.logsumexp(logits, axis=-1)
    picked = jnp.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
    return jnp.mean(lse - picked)
""", "bf16[8,1024,32000], i32[8,1024]"),
    ("ce_masked_tokens", "loss", """
def f(logits, labels, mask):
    logp = jax.nn.log_softmax(logits, axis=-1)
    nll = -jnp.take_along_axis(logp, labels[..., None], axis=-1)[..., 0]
    return jnp.sum(nll * mask) / jnp.maximum(jnp.sum(mask), 1.0)
""", "f32[16,512,8000], i32[16,512], f32[16,512]"),
    ("sigmoid_bce", "loss", """
def f(x, y):
    return jnp.mean(jnp.maximum(x, 0) - x * y + jnp.log1p(jnp.exp(-jnp.abs(x))))
""", "f32[1024,4096], f32[1024,4096]"),
    ("sigmoid_focal", "loss", """
def f(x, y):
    p = jax.nn.sigmoid(x)
    ce = jnp.maximum(x, 0) - x * y + jnp.log1p(jnp.exp(-jnp.abs(x)))
    pt = p * y + (1 - p) * (1 - y)
    return jnp.sum(0.25 * (1 - pt) ** 2 * ce) / x.shape[0]
""", "f32[512,8192], f32[512,8192]"),
    ("l2_loss", "loss", """
def f(pred, target):
    return 0.5 * jnp.mean((pred - target) ** 2)
""", "f32[4096,4096], f32[4096,4096]"),
    ("huber", "loss", """
def f(pred, target):
    err = jnp.abs(pred - target)
    quad = jnp.minimum(err, 1.0)
    return jnp.mean(0.5 * quad ** 2 + (err - quad))
""", "f32[2048,4096], f32[2048,4096]"),
    ("log_cosh", "loss", """
def f(pred, target):
    e = pred - target
    return jnp.mean(jnp.logaddexp(e, -e) - jnp.log(2.0))
""", "f32[2048,4096], f32[2048,4096]"),
    ("hinge", "loss", """
def f(scores, labels):
    return jnp.mean(jax.nn.relu(1.0 - labels * scores))
""", "f32[4096,1000], f32[4096,1000]"),
    ("kl_div", "loss", """
def f(log_p, log_q):
    return jnp.mean(jnp.sum(jnp.exp(log_p) * (log_p - log_q), axis=-1))
""", "f32[512,32000], f32[512,32000]"),
    ("cosine_loss", "loss", """
def f(a, b):
    dot = jnp.sum(a * b, axis=-1)
    na = jnp.sqrt(jnp.sum(a * a, axis=-1))
    nb = jnp.sqrt(jnp.sum(b * b, axis=-1))
    return jnp.mean(1.0 - dot / (na * nb + 1e-8))
""", "f32[16384,512], f32[16384,512]"),
    ("triplet", "loss", """
def f(anchor, pos, neg):
    dp = jnp.sum((anchor - pos) ** 2, axis=-1)
    dn = jnp.sum((anchor - neg) ** 2, axis=-1)
    return jnp.mean(jax.nn.relu(dp - dn + 0.2))
""", "f32[8192,512], f32[8192,512], f32[8192,512]"),
    ("infonce", "loss", """
def f(a, b):
    a = a / jnp.linalg.norm(a, axis=-1, keepdims=True)
    b = b / jnp.linalg.norm(b, axis=-1, keepdims=True)
    logits = a @ b.T / 0.07
    idx = jnp.arange(a.shape[0])
    return -jnp.mean(jax.nn.log_softmax(logits, axis=-1)[idx, idx])
""", "f32[2048,256], f32[2048,256]"),
    ("clip_symmetric", "loss", """
def f(img, txt):
    logits = 100.0 * img @ txt.T
    n = logits.shape[0]
    labels = jnp.arange(n)
    row = jax.nn.logsumexp(logits, axis=1) - logits[labels, labels]
    col = jax.nn.logsumexp(logits, axis=0) - logits[labels, labels]
    return (jnp.mean(row) + jnp.mean(col)) / 2
""", "f32[1024,512], f32[1024,512]"),
    ("mdn_nll", "loss", """
def f(mu, log_sigma, logit_pi, y):
    z = (y[:, None] - mu) * jnp.exp(-log_sigma)
    logp = -0.5 * z * z - log_sigma - 0.9189385
    return -jnp.mean(jax.nn.logsumexp(jax.nn.log_softmax(logit_pi, axis=-1) + logp, axis=-1))
""", "f32[262144,16], f32[262144,16], f32[262144,16], f32[262144]"),
    # -- norms -------------------------------------------------------------------------------
    ("layernorm", "norm", """
def f(x, scale, bias):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x), axis=-1, keepdims=True) - jnp.square(mean)
    return (x - mean) * jax.lax.rsqrt(var + 1e-6) * scale + bias
""", "f32[8192,1024], f32[1024], f32[1024]"),
    ("dense_layernorm", "norm", """
def f(x, w, scale):
    h = x @ w
    mean = jnp.mean(h, axis=-1, keepdims=True)
    var = jnp.var(h, axis=-1, keepdims=True)
    return (h - mean) / jnp.sqrt(var + 1e-5) * scale
""", "f32[4096,1024], f32[1024,4096], f32[4096]"),
    ("rmsnorm", "norm", """
def f(x, scale):
    ms = jnp.mean(x * x, axis=-1, keepdims=True)
    return x * jax.lax.rsqrt(ms + 1e-6) * scale
""", "bf16[8,2048,4096], bf16[4096]"),
    ("residual_rmsnorm", "norm", """
def f(x, y, scale):
    h = (x + y).astype(jnp.float32)
    ms = jnp.mean(h * h, axis=-1, keepdims=True)
    return (h * jax.lax.rsqrt(ms + 1e-6)).astype(x.dtype) * scale
""", "bf16[8,2048,2048], bf16[8,2048,2048], bf16[2048]"),
    ("groupnorm", "norm", """
def f(x):
    n, h, w, c = x.shape
    g = x.reshape(n, h, w, 32, c // 32)
    mean = jnp.mean(g, axis=(1, 2, 4), keepdims=True)
    var = jnp.var(g, axis=(1, 2, 4), keepdims=True)
    return ((g - mean) * jax.lax.rsqrt(var + 1e-5)).reshape(n, h, w, c)
""", "f32[16,64,64,256]"),
    ("batch_stats_relu", "norm", """
def f(x, w):
    h = jax.nn.relu(x @ w)
    mean = jnp.mean(h, axis=0)
    var = jnp.mean((h - mean) ** 2, axis=0)
    return mean, var
""", "f32[1024,1024], f32[1024,4096]"),
    ("weight_standardize", "norm", """
def f(w):
    mean = jnp.mean(w, axis=(0, 1, 2), keepdims=True)
    std = jnp.std(w, axis=(0, 1, 2), keepdims=True)
    return (w - mean) / (std + 1e-5)
""", "f32[3,3,512,512]"),
    ("global_norm_tree", "norm", """
def f(w1, b1, w2):
    leaves = [w1, b1, w2]
    return jnp.sqrt(sum(jnp.sum(jnp.square(p)) for p in leaves))
""", "f32[4096,4096], f32[4096], f32[4096,1024]"),
    ("row_l2_normalize", "norm", """
def f(x):
    return x / jnp.linalg.norm(x, axis=-1, keepdims=True)
""", "f32[65536,256]"),
    # -- attention ---------------------------------------------------------------------------
    ("sdpa", "attention", """
def f(q, k, v):
    s = jnp.einsum('bqd,bkd->bqk', q, k) / jnp.sqrt(q.shape[-1]).astype(q.dtype)
    return jnp.einsum('bqk,bkd->bqd', jax.nn.softmax(s, axis=-1), v)
""", "f32[16,1024,64], f32[16,1024,64], f32[16,1024,64]"),
    ("causal_sdpa", "attention", """
def f(q, k, v):
    t = q.shape[1]
    s = jnp.einsum('bqd,bkd->bqk', q, k) * (q.shape[-1] ** -0.5)
    mask = jnp.tril(jnp.ones((t, t), bool))
    s = jnp.where(mask, s, -1e9)
    return jnp.einsum('bqk,bkd->bqd', jax.nn.softmax(s, axis=-1), v)
""", "f32[8,2048,64], f32[8,2048,64], f32[8,2048,64]"),
    ("mha_bf16", "attention", """
def f(q, k, v):
    s = jnp.einsum('bqhd,bkhd->bhqk', q, k).astype(jnp.float32) * 0.125
    p = jax.nn.softmax(s, axis=-1).astype(q.dtype)
    return jnp.einsum('bhqk,bkhd->bqhd', p, v)
""", "bf16[4,1024,8,64], bf16[4,1024,8,64], bf16[4,1024,8,64]"),
    ("padding_bias_attention", "attention", """
def f(q, k, v, pad):
    s = jnp.einsum('bhqd,bhkd->bhqk', q, k) * 0.125
    s = s + jnp.where(pad[:, None, None, :], 0.0, -1e9)
    return jnp.einsum('bhqk,bhkd->bhqd', jax.nn.softmax(s, axis=-1), v)
""", "f32[4,8,512,64], f32[4,8,512,64], f32[4,8,512,64], bool[4,512]"),
    ("multi_query", "attention", """
def f(q, k, v):
    s = jnp.einsum('bhqd,bkd->bhqk', q, k) * 0.125
    return jnp.einsum('bhqk,bkd->bhqd', jax.nn.softmax(s, axis=-1), v)
""", "f32[2,16,1024,64], f32[2,1024,64], f32[2,1024,64]"),
    ("cross_attention_long", "attention", """
def f(q, mem):
    s = jnp.einsum('bqd,bkd->bqk', q, mem) * 0.0625
    return jnp.einsum('bqk,bkd->bqd', jax.nn.softmax(s, axis=-1), mem)
""", "f32[4,256,256], f32[4,8192,256]"),
    ("attention_entropy", "attention", """
def f(q, k):
    p = jax.nn.softmax(jnp.einsum('bqd,bkd->bqk', q, k) * 0.125, axis=-1)
    return -jnp.mean(jnp.sum(p * jnp.log(p + 1e-9), axis=-1))
""", "f32[8,1024,64], f32[8,1024,64]"),
    ("linear_attention", "attention", """
def f(q, k, v):
    fq = jax.nn.elu(q) + 1
    fk = jax.nn.elu(k) + 1
    kv = jnp.einsum('btd,bte->bde', fk, v)
    z = 1.0 / (jnp.einsum('btd,bd->bt', fq, jnp.sum(fk, axis=1)) + 1e-6)
    return jnp.einsum('btd,bde,bt->bte', fq, kv, z)
""", "f32[8,4096,64], f32[8,4096,64], f32[8,4096,64]"),
    ("attention_probs_mean", "attention", """
def f(q, k):
    s = q @ jnp.swapaxes(k, -1, -2) / 8.0
    return jnp.mean(jax.nn.softmax(s, axis=-1), axis=1)
""", "f32[32,512,64], f32[32,512,64]"),
    # -- optimizer updates -------------------------------------------------------------------
    ("adam_clip_global_norm", "optimizer", """
def f(g, m, v, p):
    norm = jnp.sqrt(jnp.sum(g * g))
    g = g * jnp.minimum(1.0, 1.0 / (norm + 1e-6))
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * g * g
    return p - 1e-3 * m / (jnp.sqrt(v) + 1e-8), m, v
""", "f32[4096,4096], f32[4096,4096], f32[4096,4096], f32[4096,4096]"),
    ("lamb_trust_ratio", "optimizer", """
def f(g, m, v, p):
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * g * g
    u = m / (jnp.sqrt(v) + 1e-6) + 0.01 * p
    ratio = jnp.sqrt(jnp.sum(p * p)) / (jnp.sqrt(jnp.sum(u * u)) + 1e-9)
    return p - 1e-3 * ratio * u
""", "f32[4096,4096], f32[4096,4096], f32[4096,4096], f32[4096,4096]"),
    ("adafactor_factored", "optimizer", """
def f(g, vr, vc):
    g2 = g * g + 1e-30
    vr = 0.8 * vr + 0.2 * jnp.mean(g2, axis=1)
    vc = 0.8 * vc + 0.2 * jnp.mean(g2, axis=0)
    approx = vr[:, None] * vc[None, :] / jnp.mean(vr)
    return g * jax.lax.rsqrt(approx), vr, vc
""", "f32[8192,2048], f32[8192], f32[2048]"),
    ("lion_update_norm", "optimizer", """
def f(g, m, p):
    u = jnp.sign(0.9 * m + 0.1 * g)
    return p - 1e-4 * (u + 0.1 * p), 0.99 * m + 0.01 * g, jnp.sqrt(jnp.sum(u * u))
""", "f32[4096,4096], f32[4096,4096], f32[4096,4096]"),
    ("momentum_decay_gradnorm", "optimizer", """
def f(g, buf, p):
    g = g + 1e-4 * p
    buf = 0.9 * buf + g
    return p - 0.1 * buf, buf, jnp.linalg.norm(g)
""", "f32[8192,2048], f32[8192,2048], f32[8192,2048]"),
    ("shampoo_stats", "optimizer", """
def f(g):
    left = g @ g.T
    right = g.T @ g
    return jnp.trace(left), jnp.trace(right)
""", "f32[1024,4096]"),
    ("ema_param_norm", "optimizer", """
def f(ema, p):
    new = 0.999 * ema + 0.001 * p
    return new, jnp.sqrt(jnp.sum((new - p) ** 2))
""", "f32[8192,4096], f32[8192,4096]"),
    # -- metrics -----------------------------------------------------------------------------
    ("accuracy", "metric", """
def f(logits, labels):
    return jnp.mean(jnp.argmax(logits, axis=-1) == labels)
""", "f32[4096,1000], i32[4096]"),
    ("top5_accuracy", "metric", """
def f(logits, labels):
    _, idx = jax.lax.top_k(logits, 5)
    return jnp.mean(jnp.any(idx == labels[:, None], axis=-1))
""", "f32[4096,1000], i32[4096]"),
    ("perplexity", "metric", """
def f(logits, labels):
    logp = jax.nn.log_softmax(logits, axis=-1)
    nll = -jnp.take_along_axis(logp, labels[..., None], axis=-1)
    return jnp.exp(jnp.mean(nll))
""", "f32[8,256,32000], i32[8,256]"),
    ("brier", "metric", """
def f(logits, labels):
    p = jax.nn.softmax(logits, axis=-1)
    return jnp.mean(jnp.sum((p - jax.nn.one_hot(labels, logits.shape[-1])) ** 2, axis=-1))
""", "f32[4096,1000], i32[4096]"),
    ("confidence", "metric", """
def f(logits):
    return jnp.mean(jnp.max(jax.nn.softmax(logits, axis=-1), axis=-1))
""", "f32[8192,1000]"),
    ("prediction_entropy", "metric", """
def f(logits):
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.sum(jnp.exp(logp) * logp, axis=-1))
""", "f32[4096,32000]"),
    ("psnr", "metric", """
def f(a, b):
    mse = jnp.mean((a - b) ** 2, axis=(1, 2, 3))
    return jnp.mean(-10.0 * jnp.log10(mse + 1e-10))
""", "f32[16,512,512,3], f32[16,512,512,3]"),
    ("retrieval_recall", "metric", """
def f(queries, db):
    scores = queries @ db.T
    _, idx = jax.lax.top_k(scores, 10)
    return idx
""", "f32[256,128], f32[65536,128]"),
    ("confusion_matrix", "metric", """
def f(pred, labels):
    return jnp.einsum('ni,nj->ij', jax.nn.one_hot(pred, 100), jax.nn.one_hot(labels, 100))
""", "i32[262144], i32[262144]"),
    ("gaussian_loglik", "metric", """
def f(x, mu, log_sigma):
    z = (x - mu) * jnp.exp(-log_sigma)
    return jnp.sum(-0.5 * z * z - log_sigma - 0.9189385)
""", "f32[4096,4096], f32[4096,4096], f32[4096,4096]"),
    ("mae_per_row", "metric", """
def f(a, b):
    return jnp.mean(jnp.abs(a - b), axis=-1)
""", "f32[65536,512], f32[65536,512]"),
    # -- other training code -----------------------------------------------------------------
    ("ppo_clip", "rl", """
def f(logp, old_logp, adv):
    ratio = jnp.exp(logp - old_logp)
    return -jnp.mean(jnp.minimum(ratio * adv, jnp.clip(ratio, 0.8, 1.2) * adv))
""", "f32[4096,1024], f32[4096,1024], f32[4096,1024]"),
    ("td_error", "rl", """
def f(q, q_next, actions, rewards):
    target = rewards + 0.99 * jnp.max(q_next, axis=-1)
    chosen = jnp.take_along_axis(q, actions[:, None], axis=-1)[:, 0]
    e = jnp.abs(chosen - target)
    return jnp.mean(jnp.where(e < 1, 0.5 * e * e, e - 0.5))
""", "f32[262144,18], f32[262144,18], i32[262144], f32[262144]"),
    ("discounted_returns", "rl", """
def f(rewards):
    def step(acc, r):
        acc = r + 0.99 * acc
        return acc, acc
    _, out = jax.lax.scan(step, jnp.zeros(rewards.shape[1]), rewards[::-1])
    return jnp.mean(out)
""", "f32[1024,4096]"),
    ("vmap_per_example", "other", """
def f(x, y):
    def loss(a, b):
        return jnp.sum(jnp.tanh(a - b) ** 2)
    return jnp.mean(jax.vmap(loss)(x, y))
""", "f32[4096,2048], f32[4096,2048]"),
    ("gelu_mlp_meanpool", "other", """
def f(x, w):
    return jnp.mean(jax.nn.gelu(x @ w), axis=1)
""", "f32[32,512,1024], f32[1024,4096]"),
    ("embed_meanpool", "other", """
def f(table, ids):
    return jnp.mean(jnp.take(table, ids, axis=0), axis=1)
""", "f32[50000,512], i32[256,512]"),
    ("rbf_kernel_mean", "other", """
def f(x, y):
    d2 = jnp.sum(x * x, 1)[:, None] + jnp.sum(y * y, 1)[None, :] - 2 * x @ y.T
    return jnp.mean(jnp.exp(-0.5 * d2))
""", "f32[4096,64], f32[4096,64]"),
    ("scan_layers_layernorm", "other", """
def f(ws, x):
    def layer(h, w):
        h = jax.nn.relu(h @ w)
        mu = jnp.mean(h, -1, keepdims=True)
        h = (h - mu) * jax.lax.rsqrt(jnp.var(h, -1, keepdims=True) + 1e-5)
        return h, None
    h, _ = jax.lax.scan(layer, x, ws)
    return jnp.sum(h)
""", "f32[12,1024,1024], f32[512,1024]"),
    ("grad_ce_logits", "other", """
def f(logits, labels):
    def loss(z):
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(z), labels[:, None], axis=-1))
    return jax.grad(loss)(logits)
""", "f32[512,32000], i32[512]"),
    ("grad_mlp_mse", "other", """
def f(w1, w2, x, y):
    def loss(w1, w2):
        return jnp.mean((jax.nn.relu(x @ w1) @ w2 - y) ** 2)
    return jax.grad(loss, argnums=(0, 1))(w1, w2)
""", "f32[1024,4096], f32[4096,1024], f32[256,1024], f32[256,1024]"),
    ("value_and_grad_layernorm_loss", "other", """
def f(w, x):
    def loss(w):
        h = x @ w
        h = (h - jnp.mean(h, -1, keepdims=True)) * jax.lax.rsqrt(jnp.var(h, -1, keepdims=True) + 1e-5)
        return jnp.mean(h ** 2)
    return jax.value_and_grad(loss)(w)
""", "f32[1024,1024], f32[2048,1024]"),
    ("pairwise_distance_min", "other", """
def f(a, b):
    d = jnp.sqrt(jnp.maximum(jnp.sum(a * a, 1)[:, None] + jnp.sum(b * b, 1)[None, :] - 2 * a @ b.T, 0.0))
    return jnp.min(d, axis=1)
""", "f32[8192,3], f32[8192,3]"),
    ("logits_softcap_ce", "loss", """
def f(logits, labels):
    z = 30.0 * jnp.tanh(logits / 30.0)
    lse = jax.nn.logsumexp(z, axis=-1)
    return jnp.mean(lse - jnp.take_along_axis(z, labels[:, None], axis=-1)[:, 0])
""", "f32[1024,32000], i32[1024]"),
    ("swiglu_meanpool", "other", """
def f(x, wg, wu):
    return jnp.mean(jax.nn.silu(x @ wg) * (x @ wu), axis=0)
""", "f32[2048,1024], f32[1024,4096], f32[1024,4096]"),
]


def programs() -> list[Program]:
    return [Program(f"wild/{name}", FAMILY, _module(body), specs, [f"kind={kind}"])
            for name, kind, body, specs in PROGRAMS]


def load_truth() -> dict[tuple[str, str], dict[str, Any]]:
    return family_truth(TRUTH_FILE)


def score_programs(progs: list[Program], truth: dict[tuple[str, str], dict[str, Any]],
                   calibrated: bool = True, label: str = "") -> dict[str, Any]:
    """Predict each of ``progs`` (jaxpr only) and score the answers against ``truth``, per target: the
    share answered, right of the answers, each class, and on the TPU ``where`` for the stored tables the
    rules called stored (right of those it placed, and of all: a ``where`` left to a compile is not right).
    An answer is True or False, certain or not; ``certain`` is the subset the calibration calls certain
    (answered certain, right of those).  ``calibrated=False`` scores the rules' own answers, with no
    certainty from the calibration (every answer certain).

    wild3's first evaluation (``guide_predictor_holdout4_first.json``) was scored when the calibration
    withheld every answer it did not call certain (only certain answers counted as answered); it is kept
    as written, and ``label`` says how a later score differs."""
    import jax

    rows = []
    for prog in progs:
        entry: dict[str, Any] = {"name": prog.name, "kind": prog.classes[0], "specs": prog.specs, "targets": {}}
        for target in TARGETS:
            rec = truth.get((prog.key, target))
            if rec is None or "error" in rec:
                entry["targets"][target] = {"truth": None, "error": rec.get("error") if rec else "not compiled"}
                continue
            pred = predicted(prog, target, calibrated)
            answered = pred["stored"] is not None  # True or False: answered, certain or not
            row = {"truth": rec["stored"], "truth_buffer": rec["buffer"], "memory_space": rec["memory_space"],
                   "stored": pred["stored"], "certain": pred["certain"], "rule": pred["rule"],
                   "why": pred["why"], "where": pred.get("where", ""),
                   "right": (pred["stored"] == rec["stored"]) if answered else None}
            if target == "tpu:v5e" and rec["stored"] and answered and pred["stored"]:
                truth_where = "on-chip" if rec["memory_space"] == 1 else "HBM"
                row["truth_where"] = truth_where
                row["where_right"] = (pred.get("where") == truth_where) if pred.get("where") else None
            entry["targets"][target] = row
        rows.append(entry)
    summary: dict[str, Any] = {}
    for target in TARGETS:
        got = [e["targets"][target] for e in rows if e["targets"][target].get("truth") is not None]
        answered = [r for r in got if r["right"] is not None]
        right = [r for r in answered if r["right"]]
        stats: dict[str, Any] = {
            "programs": len(got), "answered": len(answered), "right": len(right),
            "answered_share": _share(len(answered), len(got)), "right_of_answered": _share(len(right), len(answered)),
            "abstained": [e["name"] for e in rows if e["targets"][target].get("truth") is not None
                          and e["targets"][target]["right"] is None],
            "wrong": [e["name"] for e in rows if e["targets"][target].get("right") is False],
        }
        sure = [r for r in answered if r["certain"]]
        stats["certain"] = {"answered": len(sure), "right": sum(1 for r in sure if r["right"]),
                            "answered_share": _share(len(sure), len(got)),
                            "right_of_answered": _share(sum(1 for r in sure if r["right"]), len(sure)),
                            "wrong": [e["name"] for e in rows if e["targets"][target].get("right") is False
                                      and e["targets"][target]["certain"]]}
        for cls, value in (("stored", True), ("fused", False)):
            members = [r for r in got if r["truth"] is value]
            stats[cls] = {"programs": len(members), "right": sum(1 for r in members if r["right"]),
                          "answered": sum(1 for r in members if r["right"] is not None),
                          "right_share": _share(sum(1 for r in members if r["right"]), len(members))}
        if target == "tpu:v5e":
            placed = [r for r in got if "where_right" in r]
            said = [r for r in placed if r["where_right"] is not None]
            good = sum(1 for r in said if r["where_right"])
            stats["where"] = {"stored_tables": len(placed), "answered": len(said), "right": good,
                              "right_share": _share(good, len(placed)), "right_of_answered": _share(good, len(said))}
        summary[target] = stats
    out = {"generated": time.strftime("%Y-%m-%d"), "jax": jax.__version__, "programs": len(rows),
           "summary": summary, "rows": rows}
    if label:
        out["label"] = label
    return out


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


@dataclass(frozen=True)
class FamilyFiles:
    """A holdout family's files, all named from its stem (``guide_predictor_holdout5``): the truth of its
    compiles, its first evaluation (written once), its later score and its rules-only score."""

    stem: str

    @property
    def truth(self) -> Path:
        return ROOT / "benchmarks" / "data" / f"{self.stem}_truth.jsonl"

    @property
    def first(self) -> Path:
        return ROOT / "benchmarks" / f"{self.stem}_first.json"

    @property
    def results(self) -> Path:
        return ROOT / "benchmarks" / f"{self.stem}_results.json"

    @property
    def rules(self) -> Path:
        return ROOT / "benchmarks" / f"{self.stem}_rules.json"

    def usage(self) -> str:
        """The family's commands, for its module docstring."""
        script = f"benchmarks/{self.stem}.py"
        return (f"Run (resumable; each compile's truth is kept in ``benchmarks/data/{self.stem}_truth.jsonl``)::\n\n"
                f"    python {script} compile --targets cpu,gpu:h100,tpu:v5e\n"
                f"    python {script} score --first   # once, before any change to the predictor\n"
                f"    python {script} score\n"
                f"    python {script} score --rules   # the rules without the calibration\n\n"
                f"``score --first`` writes ``benchmarks/{self.stem}_first.json`` and refuses to overwrite it.\n")


def family_files(stem: str) -> FamilyFiles:
    """The files of the holdout family whose script is ``benchmarks/<stem>.py``."""
    return FamilyFiles(stem)


@dataclass(frozen=True)
class OutsideFamily:
    """A later holdout family as its script declares it: the programs a review wrote, as data
    (name, kind, a body defining ``f``, argument specs), and the family's name and files."""

    stem: str
    family: str
    table: list[tuple[str, str, str, str]]
    doc: str

    @property
    def files(self) -> FamilyFiles:
        return FamilyFiles(self.stem)

    @property
    def usage(self) -> str:
        """The script's docstring with the family's commands."""
        return f"{self.doc}{self.files.usage()}"

    def programs(self) -> list[Program]:
        return [Program(f"{self.family}/{name}", self.family, _module(body), specs, [f"kind={kind}"])
                for name, kind, body, specs in self.table]

    def main(self, argv: list[str] | None = None) -> int:
        return run_family(argv, doc=self.usage, programs=self.programs, files=self.files, after_first=AFTER_FIRST)


def run_family(argv: list[str] | None, *, doc: str, programs: Callable[[], list[Program]], files: FamilyFiles,
               after_first: str) -> int:
    """:func:`family_main` for a family named by its :class:`FamilyFiles` (the later holdouts)."""
    return family_main(argv, description=doc.splitlines()[0], programs=programs, truth_file=files.truth,
                       first_file=files.first, results_file=files.results, after_first=after_first,
                       rules_file=files.rules)


def family_main(argv: list[str] | None, *, description: str, programs: Callable[[], list[Program]],
                truth_file: Path, first_file: Path, results_file: Path, after_first: str = "",
                rules_file: Path | None = None) -> int:
    """The command line every holdout family shares: ``compile`` (the programs not in ``truth_file`` yet,
    per target) and ``score`` (``--first`` once, before any change to the rules, into ``first_file``;
    later into ``results_file`` with ``after_first`` as its label; with ``rules_file``, ``--rules``
    scores the rules' own answers without the calibration into it)."""
    parser = argparse.ArgumentParser(description=description)
    sub = parser.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile", help="compile the programs not in the truth file yet")
    c.add_argument("--targets", default=",".join(TARGETS))
    c.add_argument("--timeout", type=float, default=600)
    s = sub.add_parser("score", help="score the rules against the truth")
    s.add_argument("--first", action="store_true", help="write the first evaluation (once)")
    if rules_file is not None:
        s.add_argument("--rules", action="store_true", help="score the rules' own answers, without the calibration")
    args = parser.parse_args(argv)
    if args.cmd == "compile":
        compile_truth(programs(), [t.strip() for t in args.targets.split(",")], truth_file, args.timeout)
        return 0
    rules = bool(getattr(args, "rules", False))
    if args.first and first_file.exists():
        print(f"{first_file} exists: the first evaluation is written once", file=sys.stderr)
        return 1
    if args.first and rules:
        print("the first evaluation is the calibrated predictor's", file=sys.stderr)
        return 1
    result = score_programs(programs(), family_truth(truth_file), calibrated=not rules,
                            label="" if args.first else after_first)
    out = first_file if args.first else (rules_file if rules and rules_file is not None else results_file)
    out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for target, stats in result["summary"].items():
        print(target, {k: v for k, v in stats.items() if k not in ("abstained", "wrong")})
    return 0


def main(argv: list[str] | None = None) -> int:
    return family_main(argv, description=__doc__.splitlines()[0], programs=programs, truth_file=TRUTH_FILE,
                       first_file=FIRST_FILE, results_file=RESULTS_FILE)


if __name__ == "__main__":
    raise SystemExit(main())
