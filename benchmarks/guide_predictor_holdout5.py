"""A fourth holdout, wild4: training code from optax, flax and haiku patterns none of the earlier families
use, scored first against the frozen predictor.

Written after wild3's rules were fixed and frozen, from the shapes of common training code (written here
from the definitions, not copied): optimizer updates (Adam with bias correction and the update's norm,
global-norm clipping of a bf16 parameter tree in f32, AdamW on f16 gradients with f32 master weights,
RMSProp at odd sizes, Adagrad at a tiny size, Yogi, AdaBelief, Sophia's clipped ratio, a bf16 Polyak
average, LARS per layer under vmap, a gradient followed by an Adam step, the update-to-parameter ratio),
norms (LayerNorm of bf16 with an f32 upcast at odd sizes, f16 RMSNorm, RMSNorm's input gradient, a
vmapped row LayerNorm, GroupNorm in NCHW and in bf16 NHWC, DiT's adaptive LayerNorm, QK-norm, ScaleNorm,
bf16 batch-norm training statistics, a tiny LayerNorm), losses (softmax focal, label smoothing over
50,257 bf16 logits, KL between two bf16 logit sets, Jensen-Shannon, heteroscedastic Gaussian NLL, the
VAE's KL, Poisson NLL, supervised contrastive, batch-hard triplets from a cdist, NT-Xent in f16, soft
Dice, smooth-L1 box regression, cosine embedding, Crammer-Singer hinge, bf16 sigmoid focal, gradients of
a smoothed cross-entropy with a z-loss and of a focal loss, a vmapped per-example KL, a Gaussian mixture
and a Gaussian log-likelihood's gradient), metrics (top-5 in bf16, f16 top-1 error, a vmapped top-10,
expected calibration error by one-hot bins, nearest neighbours from a cdist, mean pairwise cosine,
matmul-form distances at odd sizes, a one-hot confusion matrix in bf16, segment means and a GAT-style
segment softmax, masked means over sequences in f32 and bf16, vmapped masked accuracy, a one-hot
histogram of bytes, Mahalanobis distances, jax.scipy's multivariate normal), convolutions followed by a
reduction (conv1d in NCW and NWC, depthwise, dilated f16, its weight gradient, a conv2d's global average
pool), one-hot matmuls (embedding by one-hot, per-class weights, the table's gradient, a cross-entropy
over a vocabulary projection) and a few others (grouped-query log-sum-exp in bf16, an attention's
entropy in f16, log-sum-exp pooling, a vmapped LayerNorm's parameter gradient, running batch-norm
statistics), in f32, bf16 and f16, tiny and large, odd and power-of-two sizes, with vmap and jax.grad.

**Ground truth** and **scores** as the first holdout's (``guide_predictor_holdout.score_programs``).

"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_holdout import OutsideFamily  # noqa: E402

FAMILY = "wild4"

#: (name, kind, body defining ``f``, argument specs).
PROGRAMS: list[tuple[str, str, str, str]] = [
    # -- optimizer updates (optax's transforms, written from their definitions) -------------
    ("adam_bias_corrected_update_norm", "optimizer", """
def f(g, m, v, count):
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * jnp.square(g)
    mhat = m / (1 - 0.9 ** count)
    vhat = v / (1 - 0.999 ** count)
    u = -1e-3 * mhat / (jnp.sqrt(vhat) + 1e-8)
    return u, m, v, jnp.sqrt(jnp.sum(jnp.square(u)))
""", "f32[3072,3072], f32[3072,3072], f32[3072,3072], f32[]"),
    ("clip_global_norm_bf16_tree", "optimizer", """
def f(g1, g2, g3):
    leaves = (g1, g2, g3)
    norm = jnp.sqrt(sum(jnp.sum(jnp.square(x.astype(jnp.float32))) for x in leaves))
    scale = jnp.minimum(1.0, 1.0 / (norm + 1e-6))
    return tuple((x * scale).astype(x.dtype) for x in leaves)
""", "bf16[4096,1024], bf16[1024], bf16[1024,11008]"),
    ("adamw_f16_grads_f32_master", "optimizer", """
def f(g, m, v, p):
    g = g.astype(jnp.float32)
    m = 0.9 * m + 0.1 * g
    v = 0.95 * v + 0.05 * g * g
    p = p - 3e-4 * (m / (jnp.sqrt(v) + 1e-8) + 0.1 * p)
    return p, m, v, p.astype(jnp.float16), jnp.sqrt(jnp.mean(g * g))
""", "f16[2048,5632], f32[2048,5632], f32[2048,5632], f32[2048,5632]"),
    ("rmsprop_odd_update_norm", "optimizer", """
def f(g, nu, p):
    nu = 0.9 * nu + 0.1 * g * g
    u = g * jax.lax.rsqrt(nu + 1e-7)
    return p - 1e-3 * u, nu, jnp.linalg.norm(u)
""", "f32[1000,3001], f32[1000,3001], f32[1000,3001]"),
    ("adagrad_tiny", "optimizer", """
def f(g, acc, p):
    acc = acc + g * g
    u = g / (jnp.sqrt(acc) + 1e-10)
    return p - 0.01 * u, acc, jnp.max(jnp.abs(u))
""", "f32[64,64], f32[64,64], f32[64,64]"),
    ("yogi_second_moment", "optimizer", """
def f(g, m, v, p):
    g2 = g * g
    v = v - 0.001 * jnp.sign(v - g2) * g2
    m = 0.9 * m + 0.1 * g
    u = m / (jnp.sqrt(v) + 1e-3)
    return p - 1e-2 * u, m, v, jnp.sum(u * u)
""", "f32[8192,1024], f32[8192,1024], f32[8192,1024], f32[8192,1024]"),
    ("grad_then_adam", "optimizer", """
def f(w, x, y, m, v):
    g = jax.grad(lambda w: jnp.mean((jnp.tanh(x @ w) - y) ** 2))(w)
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * g * g
    return w - 1e-3 * m / (jnp.sqrt(v) + 1e-8), m, v
""", "f32[512,512], f32[256,512], f32[256,512], f32[512,512], f32[512,512]"),
    ("update_param_ratio", "optimizer", """
def f(p, u):
    return jnp.linalg.norm(u) / (jnp.linalg.norm(p) + 1e-12)
""", "f32[16384,2048], f32[16384,2048]"),
    ("adabelief_update", "optimizer", """
def f(g, m, s, p):
    m = 0.9 * m + 0.1 * g
    s = 0.999 * s + 0.001 * jnp.square(g - m) + 1e-16
    u = m / (jnp.sqrt(s) + 1e-16)
    return p - 1e-3 * u, m, s, jnp.sqrt(jnp.sum(u * u))
""", "f32[4096,2048], f32[4096,2048], f32[4096,2048], f32[4096,2048]"),
    ("sophia_clipped_update", "optimizer", """
def f(g, m, h, p):
    m = 0.96 * m + 0.04 * g
    ratio = jnp.clip(m / jnp.maximum(0.05 * h, 1e-12), -1.0, 1.0)
    return p - 2e-4 * ratio, m, jnp.mean(jnp.abs(ratio) < 1.0)
""", "f32[5120,5120], f32[5120,5120], f32[5120,5120], f32[5120,5120]"),
    ("polyak_average_distance", "optimizer", """
def f(avg, p):
    avg = avg + 0.005 * (p - avg)
    return avg, jnp.max(jnp.abs(avg - p))
""", "bf16[8192,8192], bf16[8192,8192]"),
    ("lars_per_layer_vmap", "optimizer", """
def f(ws, gs):
    def trust(w, g):
        wn = jnp.sqrt(jnp.sum(w * w))
        gn = jnp.sqrt(jnp.sum(g * g))
        return w - 0.1 * (0.001 * wn / (gn + 1e-9)) * g
    return jax.vmap(trust)(ws, gs)
""", "f32[24,1024,1024], f32[24,1024,1024]"),
    # -- norms (flax / haiku / equinox layers) ---------------------------------------------
    ("layernorm_bf16_odd_upcast", "norm", """
def f(x, scale, bias):
    h = x.astype(jnp.float32)
    mean = jnp.mean(h, axis=-1, keepdims=True)
    var = jnp.var(h, axis=-1, keepdims=True)
    y = (h - mean) * jax.lax.rsqrt(var + 1e-6)
    return (y * scale + bias).astype(x.dtype)
""", "bf16[3,777,1280], f32[1280], f32[1280]"),
    ("rmsnorm_f16", "norm", """
def f(x, w):
    ms = jnp.mean(jnp.square(x.astype(jnp.float32)), axis=-1, keepdims=True)
    return (x * jax.lax.rsqrt(ms + 1e-5).astype(x.dtype)) * w
""", "f16[4096,5120], f16[5120]"),
    ("rmsnorm_input_grad", "norm", """
def f(x, w):
    def loss(x):
        y = x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w
        return jnp.sum(y * y)
    return jax.grad(loss)(x)
""", "f32[2048,1024], f32[1024]"),
    ("layernorm_vmap_rows", "norm", """
def f(x, g, b):
    def ln(r):
        mu = jnp.mean(r)
        return (r - mu) / jnp.sqrt(jnp.mean((r - mu) ** 2) + 1e-5) * g + b
    return jax.vmap(ln)(x)
""", "f32[4000,768], f32[768], f32[768]"),
    ("groupnorm_nchw", "norm", """
def f(x, gamma, beta):
    n, c, h, w = x.shape
    g = x.reshape(n, 32, c // 32, h, w)
    mean = jnp.mean(g, axis=(2, 3, 4), keepdims=True)
    var = jnp.mean(jnp.square(g - mean), axis=(2, 3, 4), keepdims=True)
    y = ((g - mean) * jax.lax.rsqrt(var + 1e-5)).reshape(n, c, h, w)
    return y * gamma[None, :, None, None] + beta[None, :, None, None]
""", "f32[8,128,56,56], f32[128], f32[128]"),
    ("groupnorm_bf16_nhwc_odd", "norm", """
def f(x):
    n, h, w, c = x.shape
    g = x.astype(jnp.float32).reshape(n, h, w, 8, c // 8)
    mean = jnp.mean(g, axis=(1, 2, 4), keepdims=True)
    var = jnp.var(g, axis=(1, 2, 4), keepdims=True)
    return ((g - mean) * jax.lax.rsqrt(var + 1e-6)).reshape(n, h, w, c).astype(x.dtype)
""", "bf16[4,28,28,96]"),
    ("adaptive_layernorm_dit", "norm", """
def f(x, shift, scale):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    y = (x - mean) * jax.lax.rsqrt(var + 1e-6)
    return y * (1 + scale[:, None, :]) + shift[:, None, :]
""", "f32[32,256,1152], f32[32,1152], f32[32,1152]"),
    ("qk_rmsnorm_heads", "norm", """
def f(q, k, sq, sk):
    def norm(t, s):
        return t * jax.lax.rsqrt(jnp.mean(t * t, axis=-1, keepdims=True) + 1e-6) * s
    return jnp.einsum('bqhd,bkhd->bhqk', norm(q, sq), norm(k, sk))
""", "f32[2,512,16,64], f32[2,512,16,64], f32[64], f32[64]"),
    ("layernorm_tiny", "norm", """
def f(x):
    mu = jnp.mean(x, -1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(jnp.var(x, -1, keepdims=True) + 1e-5)
""", "f32[8,32]"),
    ("scalenorm", "norm", """
def f(x, g):
    return g * x / jnp.maximum(jnp.linalg.norm(x, axis=-1, keepdims=True), 1e-5)
""", "f32[16384,512], f32[]"),
    ("batchnorm_train_bf16", "norm", """
def f(x, gamma, beta):
    h = x.astype(jnp.float32)
    mean = jnp.mean(h, axis=(0, 1, 2))
    var = jnp.mean(jnp.square(h), axis=(0, 1, 2)) - jnp.square(mean)
    y = (h - mean) * jax.lax.rsqrt(var + 1e-5) * gamma + beta
    return y.astype(x.dtype), mean, var
""", "bf16[256,14,14,512], f32[512], f32[512]"),
    # -- losses ---------------------------------------------------------------------------
    ("softmax_focal_multiclass", "loss", """
def f(logits, labels):
    logp = jax.nn.log_softmax(logits, axis=-1)
    lp = jnp.take_along_axis(logp, labels[:, None], axis=-1)[:, 0]
    return -jnp.mean((1 - jnp.exp(lp)) ** 2 * lp)
""", "f32[2048,1000], i32[2048]"),
    ("label_smoothing_bf16_vocab", "loss", """
def f(logits, labels):
    z = logits.astype(jnp.float32)
    n = z.shape[-1]
    target = jax.nn.one_hot(labels, n) * (1 - 0.1) + 0.1 / n
    return jnp.mean(jnp.sum(-target * jax.nn.log_softmax(z, axis=-1), axis=-1))
""", "bf16[1024,50257], i32[1024]"),
    ("kl_two_logits_bf16", "loss", """
def f(p_logits, q_logits):
    lp = jax.nn.log_softmax(p_logits.astype(jnp.float32), axis=-1)
    lq = jax.nn.log_softmax(q_logits.astype(jnp.float32), axis=-1)
    return jnp.mean(jnp.sum(jnp.exp(lp) * (lp - lq), axis=-1))
""", "bf16[2048,32000], bf16[2048,32000]"),
    ("js_divergence", "loss", """
def f(p, q):
    m = 0.5 * (p + q)
    kl = lambda a, b: jnp.sum(a * (jnp.log(a + 1e-12) - jnp.log(b + 1e-12)), axis=-1)
    return jnp.mean(0.5 * kl(p, m) + 0.5 * kl(q, m))
""", "f32[1024,4096], f32[1024,4096]"),
    ("gaussian_nll_heteroscedastic", "loss", """
def f(mu, log_var, y):
    return 0.5 * jnp.mean(log_var + jnp.square(y - mu) * jnp.exp(-log_var))
""", "f32[8192,512], f32[8192,512], f32[8192,512]"),
    ("vae_gaussian_kl", "loss", """
def f(mu, logvar):
    return jnp.mean(-0.5 * jnp.sum(1 + logvar - mu ** 2 - jnp.exp(logvar), axis=-1))
""", "f32[1024,256], f32[1024,256]"),
    ("poisson_nll", "loss", """
def f(log_rate, counts):
    return jnp.mean(jnp.exp(log_rate) - counts * log_rate + jax.lax.lgamma(counts + 1.0))
""", "f32[4096,1000], f32[4096,1000]"),
    ("supervised_contrastive", "loss", """
def f(feats, labels):
    z = feats / jnp.linalg.norm(feats, axis=-1, keepdims=True)
    sim = z @ z.T / 0.1
    n = sim.shape[0]
    eye = jnp.eye(n, dtype=bool)
    sim = jnp.where(eye, -1e9, sim)
    logp = sim - jax.nn.logsumexp(sim, axis=-1, keepdims=True)
    pos = (labels[:, None] == labels[None, :]) & ~eye
    return -jnp.mean(jnp.sum(jnp.where(pos, logp, 0.0), -1) / jnp.maximum(jnp.sum(pos, -1), 1))
""", "f32[1024,128], i32[1024]"),
    ("batch_hard_triplet_cdist", "loss", """
def f(emb, labels):
    d = jnp.sqrt(jnp.maximum(jnp.sum((emb[:, None, :] - emb[None, :, :]) ** 2, -1), 1e-12))
    same = labels[:, None] == labels[None, :]
    hardest_pos = jnp.max(jnp.where(same, d, 0.0), axis=1)
    hardest_neg = jnp.min(jnp.where(same, jnp.inf, d), axis=1)
    return jnp.mean(jax.nn.relu(hardest_pos - hardest_neg + 0.3))
""", "f32[512,64], i32[512]"),
    ("nt_xent_f16", "loss", """
def f(a, b):
    z = jnp.concatenate([a, b], 0)
    z = z / jnp.linalg.norm(z, axis=-1, keepdims=True)
    s = (z @ z.T).astype(jnp.float32) / 0.5
    n = a.shape[0]
    s = s - 1e9 * jnp.eye(2 * n)
    idx = jnp.concatenate([jnp.arange(n, 2 * n), jnp.arange(n)])
    return jnp.mean(jax.nn.logsumexp(s, axis=-1) - s[jnp.arange(2 * n), idx])
""", "f16[1024,256], f16[1024,256]"),
    ("soft_dice_tiny", "loss", """
def f(logits, mask):
    p = jax.nn.sigmoid(logits)
    inter = jnp.sum(p * mask, axis=(1, 2))
    return 1 - jnp.mean((2 * inter + 1) / (jnp.sum(p, (1, 2)) + jnp.sum(mask, (1, 2)) + 1))
""", "f32[2,64,64], f32[2,64,64]"),
    ("smooth_l1_boxes", "loss", """
def f(pred, target, weights):
    d = jnp.abs(pred - target)
    l = jnp.where(d < 1.0 / 9, 4.5 * d * d, d - 0.5 / 9)
    return jnp.sum(l * weights[:, None]) / jnp.maximum(jnp.sum(weights), 1.0)
""", "f32[65536,4], f32[65536,4], f32[65536]"),
    ("cosine_embedding_margin", "loss", """
def f(a, b, y):
    cos = jnp.sum(a * b, -1) / (jnp.linalg.norm(a, axis=-1) * jnp.linalg.norm(b, axis=-1) + 1e-8)
    return jnp.mean(jnp.where(y > 0, 1 - cos, jax.nn.relu(cos - 0.5)))
""", "f32[3000,300], f32[3000,300], f32[3000]"),
    ("crammer_singer_hinge", "loss", """
def f(scores, labels):
    correct = jnp.take_along_axis(scores, labels[:, None], axis=1)
    margins = jax.nn.relu(1.0 + scores - correct)
    margins = jnp.where(jax.nn.one_hot(labels, scores.shape[1]) > 0, 0.0, margins)
    return jnp.mean(jnp.max(margins, axis=1))
""", "f32[4096,1000], i32[4096]"),
    ("sigmoid_focal_bf16", "loss", """
def f(logits, targets):
    x = logits.astype(jnp.float32)
    y = targets.astype(jnp.float32)
    p = jax.nn.sigmoid(x)
    ce = -(y * jax.nn.log_sigmoid(x) + (1 - y) * jax.nn.log_sigmoid(-x))
    pt = p * y + (1 - p) * (1 - y)
    a = 0.25 * y + 0.75 * (1 - y)
    return jnp.mean(a * (1 - pt) ** 2 * ce)
""", "bf16[1024,8192], bf16[1024,8192]"),
    ("grad_smoothed_ce_zloss", "loss", """
def f(logits, labels):
    def loss(z):
        n = z.shape[-1]
        lse = jax.nn.logsumexp(z, axis=-1)
        t = jax.nn.one_hot(labels, n) * 0.9 + 0.1 / n
        return jnp.mean(lse - jnp.sum(t * z, axis=-1) + 1e-4 * lse ** 2)
    return jax.grad(loss)(logits)
""", "f32[2048,32768], i32[2048]"),
    ("vmap_per_example_kl", "loss", """
def f(p, q):
    def kl(a, b):
        return jnp.sum(a * jnp.log(a / b))
    return jnp.mean(jax.vmap(kl)(p, q))
""", "f32[8192,1000], f32[8192,1000]"),
    ("grad_focal_logits", "loss", """
def f(x, y):
    def loss(x):
        p = jax.nn.sigmoid(x)
        ce = jnp.logaddexp(0.0, x) - x * y
        pt = p * y + (1 - p) * (1 - y)
        return jnp.sum((1 - pt) ** 2 * ce)
    return jax.grad(loss)(x)
""", "f32[1000,1203], f32[1000,1203]"),
    ("gaussian_mixture_loglik", "loss", """
def f(x, mu, log_sigma, log_w):
    z = (x[:, None, :] - mu[None]) * jnp.exp(-log_sigma)[None]
    comp = -0.5 * jnp.sum(z * z, -1) - jnp.sum(log_sigma, -1)[None] - 0.5 * x.shape[1] * 1.8378771
    return -jnp.mean(jax.nn.logsumexp(comp + jax.nn.log_softmax(log_w)[None], axis=-1))
""", "f32[65536,8], f32[32,8], f32[32,8], f32[32]"),
    ("grad_gaussian_loglik_mu", "loss", """
def f(x, mu, log_sigma):
    def ll(mu):
        z = (x - mu) * jnp.exp(-log_sigma)
        return jnp.sum(-0.5 * z * z - log_sigma)
    return jax.grad(ll)(mu)
""", "f32[4096,2048], f32[2048], f32[2048]"),
    # -- metrics --------------------------------------------------------------------------
    ("top5_accuracy_bf16", "metric", """
def f(logits, labels):
    _, idx = jax.lax.top_k(logits, 5)
    return jnp.mean(jnp.any(idx == labels[:, None], axis=-1).astype(jnp.float32))
""", "bf16[1024,1000], i32[1024]"),
    ("top1_error_f16", "metric", """
def f(logits, labels):
    return 1.0 - jnp.mean((jnp.argmax(logits, axis=-1) == labels).astype(jnp.float32))
""", "f16[8192,1000], i32[8192]"),
    ("topk_vmap_rows", "metric", """
def f(scores, labels):
    def hit(s, l):
        _, i = jax.lax.top_k(s, 10)
        return jnp.any(i == l)
    return jnp.mean(jax.vmap(hit)(scores, labels))
""", "f32[512,4096], i32[512]"),
    ("expected_calibration_error", "metric", """
def f(logits, labels):
    p = jax.nn.softmax(logits, axis=-1)
    conf = jnp.max(p, axis=-1)
    acc = (jnp.argmax(logits, axis=-1) == labels).astype(jnp.float32)
    bins = jnp.clip((conf * 15).astype(jnp.int32), 0, 14)
    onehot = jax.nn.one_hot(bins, 15)
    gap = jnp.abs(onehot.T @ acc - onehot.T @ conf)
    return jnp.sum(gap) / conf.shape[0]
""", "f32[16384,1000], i32[16384]"),
    ("cdist_nearest", "metric", """
def f(a, b):
    d = jnp.sqrt(jnp.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1))
    return jnp.min(d, axis=1), jnp.argmin(d, axis=1)
""", "f32[1024,16], f32[1000,16]"),
    ("pairwise_cosine_mean", "metric", """
def f(x):
    z = x / jnp.linalg.norm(x, axis=-1, keepdims=True)
    s = z @ z.T
    n = x.shape[0]
    return (jnp.sum(s) - n) / (n * (n - 1))
""", "f32[4096,384]"),
    ("pairwise_sqdist_matmul_odd", "metric", """
def f(a, b):
    d2 = jnp.sum(a * a, -1)[:, None] + jnp.sum(b * b, -1)[None, :] - 2.0 * a @ b.T
    return jnp.mean(jnp.sqrt(jnp.maximum(d2, 0.0)), axis=0)
""", "f32[3001,96], f32[5003,96]"),
    ("confusion_onehot_bf16", "metric", """
def f(pred, labels):
    a = jax.nn.one_hot(pred, 100, dtype=jnp.bfloat16)
    b = jax.nn.one_hot(labels, 100, dtype=jnp.bfloat16)
    cm = jnp.einsum('ni,nj->ij', a, b, preferred_element_type=jnp.float32)
    recall = jnp.sum(a * b, axis=0, dtype=jnp.float32) / jnp.sum(b, axis=0, dtype=jnp.float32)
    return cm, recall
""", "i32[65536], i32[65536]"),
    ("segment_mean", "metric", """
def f(x, ids):
    h = jax.nn.relu(x)
    s = jax.ops.segment_sum(h, ids, num_segments=1000)
    c = jax.ops.segment_sum(jnp.ones_like(ids, jnp.float32), ids, num_segments=1000)
    return s / jnp.maximum(c, 1.0)[:, None], jnp.mean(h, axis=0)
""", "f32[100000,64], i32[100000]"),
    ("segment_softmax_gat", "metric", """
def f(scores, dst):
    m = jax.ops.segment_max(scores, dst, num_segments=20000)
    e = jnp.exp(scores - m[dst])
    z = jax.ops.segment_sum(e, dst, num_segments=20000)
    return jnp.mean(e / z[dst], axis=-1)
""", "f32[200000,8], i32[200000]"),
    ("masked_mean_sequence", "metric", """
def f(x, mask):
    m = mask.astype(x.dtype)
    return jnp.sum(x * m[..., None], axis=1) / jnp.maximum(jnp.sum(m, axis=1), 1.0)[:, None]
""", "f32[64,2048,768], bool[64,2048]"),
    ("masked_mean_bf16_tokens", "metric", """
def f(x, mask):
    s = jnp.sum(jnp.where(mask[..., None], x.astype(jnp.float32), 0.0), axis=(0, 1))
    return s / jnp.sum(mask)
""", "bf16[32,4096,1024], bool[32,4096]"),
    ("masked_token_accuracy_vmap", "metric", """
def f(logits, labels, mask):
    def one(z, l, m):
        return jnp.sum((jnp.argmax(z, -1) == l) * m), jnp.sum(m)
    hits, counts = jax.vmap(one)(logits, labels, mask)
    return jnp.sum(hits) / jnp.sum(counts)
""", "f32[16,1024,8192], i32[16,1024], f32[16,1024]"),
    ("histogram_onehot_u8", "metric", """
def f(x):
    return jnp.sum(jax.nn.one_hot(x, 256, dtype=jnp.int32), axis=0)
""", "u8[1048576]"),
    ("mahalanobis_mean", "metric", """
def f(x, mu, prec):
    d = x - mu
    return jnp.mean(jnp.sum((d @ prec) * d, axis=-1))
""", "f32[8192,64], f32[64], f32[64,64]"),
    ("mvn_logpdf_scipy", "metric", """
def f(x, mean, cov):
    return jnp.sum(jax.scipy.stats.multivariate_normal.logpdf(x, mean, cov))
""", "f32[4096,32], f32[32], f32[32,32]"),
    # -- convolutions followed by a reduction -----------------------------------------------
    ("conv1d_ncw_meanpool", "conv", """
def f(x, w):
    y = lax.conv_general_dilated(x, w, (1,), 'SAME', dimension_numbers=('NCH', 'OIH', 'NCH'))
    return jnp.mean(jax.nn.relu(y), axis=-1)
""", "f32[32,256,4096], f32[256,256,5]"),
    ("conv1d_nwc_bf16_maxpool", "conv", """
def f(x, w):
    y = lax.conv_general_dilated(x, w, (1,), 'VALID', dimension_numbers=('NWC', 'WIO', 'NWC'))
    return jnp.max(jax.nn.gelu(y), axis=1)
""", "bf16[16,8192,128], bf16[7,128,128]"),
    ("depthwise_conv1d_sum", "conv", """
def f(x, w):
    y = lax.conv_general_dilated(x, w, (1,), 'SAME', dimension_numbers=('NWC', 'WIO', 'NWC'),
                                 feature_group_count=x.shape[-1])
    return jnp.sum(jax.nn.silu(y), axis=(1, 2))
""", "f32[8,1024,512], f32[4,1,512]"),
    ("conv1d_weight_grad", "conv", """
def f(x, w):
    def loss(w):
        y = lax.conv_general_dilated(x, w, (2,), 'SAME', dimension_numbers=('NCH', 'OIH', 'NCH'))
        return jnp.mean(jnp.tanh(y))
    return jax.grad(loss)(w)
""", "f32[16,64,16000], f32[128,64,9]"),
    ("conv2d_global_avgpool", "conv", """
def f(x, w):
    y = lax.conv_general_dilated(x, w, (1, 1), 'SAME', dimension_numbers=('NHWC', 'HWIO', 'NHWC'))
    return jnp.mean(jax.nn.relu(y), axis=(1, 2))
""", "f32[16,64,64,64], f32[3,3,64,128]"),
    ("conv1d_dilated_f16_energy", "conv", """
def f(x, w):
    y = lax.conv_general_dilated(x, w, (1,), 'SAME', rhs_dilation=(4,),
                                 dimension_numbers=('NWC', 'WIO', 'NWC'))
    return jnp.sum(jnp.square(y.astype(jnp.float32)), axis=1)
""", "f16[8,16384,64], f16[3,64,64]"),
    # -- one-hot matmuls ------------------------------------------------------------------
    ("onehot_embedding_meanpool", "onehot", """
def f(ids, table):
    return jnp.mean(jax.nn.one_hot(ids, table.shape[0]) @ table, axis=1)
""", "i32[64,128], f32[8192,512]"),
    ("onehot_label_matmul_bf16", "onehot", """
def f(labels, w, h):
    class_w = jax.nn.one_hot(labels, w.shape[0], dtype=jnp.bfloat16) @ w
    return jnp.sum(class_w * h, axis=-1)
""", "i32[16384], bf16[1000,768], bf16[16384,768]"),
    ("onehot_table_grad", "onehot", """
def f(table, ids, y):
    def loss(t):
        return jnp.mean((jax.nn.one_hot(ids, t.shape[0]) @ t - y) ** 2)
    return jax.grad(loss)(table)
""", "f32[4096,256], i32[8192], f32[8192,256]"),
    ("onehot_ce_vocab_matmul", "onehot", """
def f(h, w, labels):
    logits = h @ w
    return jnp.mean(jax.nn.logsumexp(logits, -1) - jnp.sum(jax.nn.one_hot(labels, w.shape[1]) * logits, -1))
""", "f32[4096,512], f32[512,8000], i32[4096]"),
    # -- other ----------------------------------------------------------------------------
    ("gqa_bf16_lse", "attention", """
def f(q, k):
    b, t, h, d = q.shape
    qg = q.reshape(b, t, k.shape[2], h // k.shape[2], d)
    s = jnp.einsum('bqgrd,bkgd->bgrqk', qg, k).astype(jnp.float32) * d ** -0.5
    return jax.nn.logsumexp(s, axis=-1)
""", "bf16[2,2048,32,128], bf16[2,2048,8,128]"),
    ("attention_entropy_f16_temperature", "attention", """
def f(q, k):
    s = (q @ jnp.swapaxes(k, -1, -2)).astype(jnp.float32) / 0.7
    p = jax.nn.softmax(s, axis=-1)
    return -jnp.sum(p * jax.nn.log_softmax(s, axis=-1), axis=-1)
""", "f16[16,1000,64], f16[16,1000,64]"),
    ("logsumexp_pool_bf16", "other", """
def f(x):
    return jax.nn.logsumexp(x.astype(jnp.float32) * 5.0, axis=1) / 5.0
""", "bf16[64,4096,512]"),
    ("vmap_layernorm_grad_params", "other", """
def f(x, g):
    def loss(g, r):
        y = (r - jnp.mean(r)) * jax.lax.rsqrt(jnp.var(r) + 1e-5) * g
        return jnp.sum(jnp.tanh(y))
    return jnp.sum(jax.vmap(jax.grad(loss), in_axes=(None, 0))(g, x), axis=0)
""", "f32[2048,1024], f32[1024]"),
    ("ema_batchnorm_stats_update", "other", """
def f(x, rm, rv):
    mean = jnp.mean(x, axis=0)
    var = jnp.var(x, axis=0)
    return 0.9 * rm + 0.1 * mean, 0.9 * rv + 0.1 * var * x.shape[0] / (x.shape[0] - 1)
""", "f32[65536,256], f32[256], f32[256]"),
]


SCRIPT = OutsideFamily("guide_predictor_holdout5", FAMILY, PROGRAMS, __doc__ or "")
__doc__, FILES, programs, main = SCRIPT.usage, SCRIPT.files, SCRIPT.programs, SCRIPT.main

if __name__ == "__main__":
    raise SystemExit(main())
