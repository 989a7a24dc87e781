"""A fifth holdout, wild5: generative-model losses, routing, positional encodings, iterative solvers and
likelihoods none of the earlier families use, scored first against the frozen predictor.

Written after wild4's post-evaluation rules were merged and frozen, from the shapes of common research
code (written here from the definitions, not copied): diffusion losses (min-SNR weighted noise MSE,
v-prediction from bf16 latents, a noised input through a projection, a vmapped per-example weighted loss,
EDM's preconditioned loss, a denoiser's weight gradient), VAE terms (a Bernoulli ELBO, a bf16 Gaussian
reconstruction with its KL, IWAE's log-mean-exp over samples, a vmapped per-dimension KL), Gumbel tricks
(Gumbel-softmax, a straight-through bf16 code lookup, Gumbel top-k over a vocabulary), mixture-of-experts
routing (top-2 gates, Switch's load-balancing loss, a bf16 router z-loss, capacity by cumsum, combining
experts' outputs), rotary embeddings before a log-sum-exp, an RMS and a dot, ALiBi biases (softmax
entropy, a causal bf16 log-sum-exp), layer-wise learning-rate norms (LAMB on bf16 leaves, vmapped layer
norms, LARS with momentum at an odd size), EMA of parameters (a bf16 tree, a warm-up decay over an
embedding), spectral normalisation (a fori_loop power iteration, a conv kernel in bf16), Sinkhorn
iterations (log-domain in a fori_loop, vmapped scaling, a Python loop at odd sizes), Chamfer distances
(broadcast, matmul form in bf16, its gradient), assignment costs (a DETR-style matcher's cost, a soft
assignment), triplet mining (semi-hard, bf16 cosine hardest), lattices (a CTC-like alpha recursion and an
HMM forward pass in scans), count likelihoods (negative binomial, zero-inflated Poisson, bf16 log-rate
Poisson, Student-t, evidential Dirichlet, an ordinal cumulative link), histograms (hard one-hot bins of a
million values, a soft Gaussian histogram), quantile and Huber losses (pinball, bf16 Huber at odd sizes,
QR-DQN's quantile Huber), gradient penalties (WGAN-GP, a grad of a grad, vmapped input-gradient norms, a
Hessian-vector product) and a few others (Tversky, ArcFace, f16 soft-target KL, a MoCo queue, nearest
cosine neighbours, ghost norms, energy distance, sorted 1-D Wasserstein, KDE, attention rollout, bf16
mixup, a depthwise causal convolution by shifts, an associative scan, DINO's centred teacher, a VQ
commitment loss), in f32, bf16 and f16, tiny and large, odd and power-of-two sizes, with vmap, scans,
loops and jax.grad.

**Ground truth** and **scores** as the first holdout's (``guide_predictor_holdout.score_programs``).

"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_holdout import OutsideFamily  # noqa: E402

FAMILY = "wild5"

#: (name, kind, body defining ``f``, argument specs).
PROGRAMS: list[tuple[str, str, str, str]] = [
    # -- diffusion losses -----------------------------------------------------------------
    ("diffusion_minsnr_weighted_mse", "diffusion", """
def f(eps_pred, eps, t, snr):
    s = snr[t]
    w = jnp.minimum(s, 5.0) / s
    return jnp.mean(w[:, None, None, None] * jnp.square(eps_pred - eps))
""", "f32[64,4,64,64], f32[64,4,64,64], i32[64], f32[1000]"),
    ("diffusion_vpred_bf16_latents", "diffusion", """
def f(v_pred, x0, eps, t, alphas_bar):
    ab = alphas_bar[t][:, None, None, None]
    v = jnp.sqrt(ab) * eps.astype(jnp.float32) - jnp.sqrt(1.0 - ab) * x0.astype(jnp.float32)
    return jnp.mean(jnp.square(v_pred.astype(jnp.float32) - v))
""", "bf16[32,4,96,96], bf16[32,4,96,96], bf16[32,4,96,96], i32[32], f32[1000]"),
    ("diffusion_noised_projection_mse", "diffusion", """
def f(x0, eps, ab, w):
    xt = jnp.sqrt(ab)[:, None, None] * x0 + jnp.sqrt(1.0 - ab)[:, None, None] * eps
    return jnp.mean(jnp.square(xt @ w - eps))
""", "f32[16,1024,768], f32[16,1024,768], f32[16], f32[768,768]"),
    ("diffusion_vmap_per_example_weighted", "diffusion", """
def f(pred, target, weight):
    def one(p, y, wt):
        return wt * jnp.mean(jnp.square(p - y))
    return jnp.mean(jax.vmap(one)(pred, target, weight))
""", "f32[128,3,32,32], f32[128,3,32,32], f32[128]"),
    ("edm_preconditioned_loss", "diffusion", """
def f(y, n, sigma):
    sd = 0.5
    s = sigma[:, None, None, None]
    x = y + n * s
    c_skip = sd ** 2 / (s ** 2 + sd ** 2)
    c_out = s * sd / jnp.sqrt(s ** 2 + sd ** 2)
    c_in = 1.0 / jnp.sqrt(s ** 2 + sd ** 2)
    d = c_skip * x + c_out * jnp.tanh(c_in * x)
    w = (s ** 2 + sd ** 2) / (s * sd) ** 2
    return jnp.mean(w * jnp.square(d - y))
""", "f32[64,3,64,64], f32[64,3,64,64], f32[64]"),
    ("diffusion_denoiser_weight_grad", "diffusion", """
def f(w, xt, eps):
    return jax.grad(lambda w: jnp.mean(jnp.square(jax.nn.gelu(xt @ w) - eps)))(w)
""", "f32[256,256], f32[4096,256], f32[4096,256]"),
    # -- VAE terms ------------------------------------------------------------------------
    ("vae_bernoulli_elbo", "vae", """
def f(logits, x, mu, logvar):
    rec = jnp.sum(jnp.maximum(logits, 0) - logits * x + jnp.log1p(jnp.exp(-jnp.abs(logits))), -1)
    kl = -0.5 * jnp.sum(1 + logvar - mu ** 2 - jnp.exp(logvar), -1)
    return jnp.mean(rec + kl)
""", "f32[256,784], f32[256,784], f32[256,32], f32[256,32]"),
    ("vae_gaussian_recon_bf16", "vae", """
def f(recon, x, mu, logvar):
    d = recon.astype(jnp.float32) - x.astype(jnp.float32)
    rec = 0.5 * jnp.sum(jnp.square(d), axis=(1, 2, 3)) / 0.1
    kl = 0.5 * jnp.sum(jnp.exp(logvar) + mu ** 2 - 1.0 - logvar, -1)
    return jnp.mean(rec + kl)
""", "bf16[128,3,64,64], bf16[128,3,64,64], f32[128,256], f32[128,256]"),
    ("iwae_log_mean_exp", "vae", """
def f(x, dec, log_prior_q):
    lw = -0.5 * jnp.sum(jnp.square(x[:, None, :] - dec), -1) + log_prior_q
    return jnp.mean(jax.nn.logsumexp(lw, axis=1) - jnp.log(dec.shape[1]))
""", "f32[64,784], f32[64,16,784], f32[64,16]"),
    ("beta_vae_kl_per_dim_vmap", "vae", """
def f(mu, logvar):
    def kl(m, lv):
        return 0.5 * (jnp.exp(lv) + m * m - 1.0 - lv)
    return jnp.sum(jax.vmap(kl)(mu, logvar), axis=0)
""", "f32[4096,512], f32[4096,512]"),
    # -- Gumbel tricks --------------------------------------------------------------------
    ("gumbel_softmax_expected_logit", "gumbel", """
def f(logits, u):
    g = -jnp.log(-jnp.log(u))
    y = jax.nn.softmax((logits + g) / 0.5, axis=-1)
    return jnp.sum(y * logits, axis=-1)
""", "f32[1024,4096], f32[1024,4096]"),
    ("gumbel_straight_through_bf16_codes", "gumbel", """
def f(logits, u, codebook):
    y_soft = jax.nn.softmax((logits.astype(jnp.float32) - jnp.log(-jnp.log(u))) / 1.0, -1)
    hard = jax.nn.one_hot(jnp.argmax(y_soft, -1), logits.shape[-1])
    y = (hard - lax.stop_gradient(y_soft) + y_soft).astype(jnp.bfloat16)
    return y @ codebook
""", "bf16[512,8192], f32[512,8192], bf16[8192,256]"),
    ("gumbel_topk_vocab", "gumbel", """
def f(logits, u):
    return lax.top_k(logits - jnp.log(-jnp.log(u)), 8)
""", "f32[64,50257], f32[64,50257]"),
    # -- mixture-of-experts routing -------------------------------------------------------
    ("moe_top2_gates", "moe", """
def f(x, wg):
    probs = jax.nn.softmax(x @ wg, axis=-1)
    vals, idx = lax.top_k(probs, 2)
    return vals / jnp.sum(vals, -1, keepdims=True), idx
""", "f32[8192,1024], f32[1024,64]"),
    ("moe_switch_load_balance", "moe", """
def f(logits):
    probs = jax.nn.softmax(logits, axis=-1)
    mask = jax.nn.one_hot(jnp.argmax(probs, -1), logits.shape[-1])
    return logits.shape[-1] * jnp.sum(jnp.mean(mask, 0) * jnp.mean(probs, 0))
""", "f32[16384,128]"),
    ("moe_router_z_loss_bf16", "moe", """
def f(logits):
    return jnp.mean(jnp.square(jax.nn.logsumexp(logits.astype(jnp.float32), axis=-1)))
""", "bf16[32768,64]"),
    ("moe_capacity_cumsum", "moe", """
def f(logits):
    mask = jax.nn.one_hot(jnp.argmax(logits, -1), logits.shape[-1], dtype=jnp.int32)
    pos = jnp.cumsum(mask, axis=0) * mask
    keep = (pos > 0) & (pos <= 160)
    return jnp.sum(keep, axis=0), jnp.mean(jnp.any(keep, -1))
""", "f32[4096,32]"),
    ("moe_combine_experts", "moe", """
def f(out, gates):
    y = jnp.einsum('etd,te->td', out, gates)
    return jnp.sqrt(jnp.mean(jnp.square(y), -1))
""", "f32[8,2048,512], f32[2048,8]"),
    # -- rotary embeddings and ALiBi ------------------------------------------------------
    ("rope_scores_logsumexp", "position", """
def f(q, k, cos, sin):
    def rot(x):
        x1, x2 = x[..., :32], x[..., 32:]
        return jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)
    s = rot(q) @ jnp.swapaxes(rot(k), -1, -2) / 8.0
    return jax.nn.logsumexp(s, axis=-1)
""", "f32[4,2048,64], f32[4,2048,64], f32[2048,32], f32[2048,32]"),
    ("rope_bf16_rms_per_head", "position", """
def f(x, cos, sin):
    x = x.astype(jnp.float32)
    x1, x2 = x[..., ::2], x[..., 1::2]
    c, s = cos[:, None, :], sin[:, None, :]
    y = jnp.stack([x1 * c - x2 * s, x1 * s + x2 * c], -1).reshape(x.shape)
    return jnp.sqrt(jnp.mean(jnp.square(y), -1))
""", "bf16[8,4096,32,128], f32[4096,64], f32[4096,64]"),
    ("rope_vmap_heads_dot", "position", """
def f(q, k, cos, sin):
    def head(qh, kh):
        def rot(x):
            return x * cos + jnp.roll(x, 32, -1) * sin
        return jnp.sum(rot(qh) * rot(kh), -1)
    return jax.vmap(head, in_axes=1, out_axes=1)(q, k)
""", "f32[2048,16,64], f32[2048,16,64], f32[2048,64], f32[2048,64]"),
    ("alibi_softmax_entropy", "position", """
def f(s, slopes):
    n = s.shape[-1]
    dist = jnp.abs(jnp.arange(n)[:, None] - jnp.arange(n)[None, :]).astype(jnp.float32)
    p = jax.nn.softmax(s - slopes[:, None, None] * dist, axis=-1)
    return -jnp.sum(p * jnp.log(p + 1e-9), -1)
""", "f32[16,1024,1024], f32[16]"),
    ("alibi_causal_lse_bf16", "position", """
def f(q, k, slopes):
    t = q.shape[2]
    s = jnp.einsum('bhqd,bhkd->bhqk', q, k).astype(jnp.float32) / 8.0
    i = jnp.arange(t)
    bias = slopes[:, None, None] * (i[None, :] - i[:, None]).astype(jnp.float32)
    s = jnp.where(i[None, :] <= i[:, None], s + bias, -jnp.inf)
    return jax.nn.logsumexp(s, axis=-1)
""", "bf16[1,16,2048,64], bf16[1,16,2048,64], f32[16]"),
    # -- layer-wise learning-rate norms and EMA -------------------------------------------
    ("lamb_bf16_leaves_trust", "optimizer", """
def f(p1, p2, m1, m2, v1, v2):
    out = []
    for p, m, v in ((p1, m1, v1), (p2, m2, v2)):
        u = m / (jnp.sqrt(v) + 1e-6) + 0.01 * p.astype(jnp.float32)
        pn = jnp.linalg.norm(p.astype(jnp.float32))
        un = jnp.linalg.norm(u)
        ratio = jnp.where((pn > 0) & (un > 0), pn / un, 1.0)
        out.append((p.astype(jnp.float32) - 1e-3 * ratio * u).astype(p.dtype))
    return tuple(out)
""", "bf16[4096,4096], bf16[4096], f32[4096,4096], f32[4096], f32[4096,4096], f32[4096]"),
    ("layerwise_norms_vmap", "optimizer", """
def f(ps, us):
    def ratio(p, u):
        return jnp.sqrt(jnp.sum(p * p)) / (jnp.sqrt(jnp.sum(u * u)) + 1e-9)
    return jax.vmap(ratio)(ps, us)
""", "f32[12,768,3072], f32[12,768,3072]"),
    ("lars_momentum_odd", "optimizer", """
def f(p, g, v):
    pn = jnp.linalg.norm(p)
    gn = jnp.linalg.norm(g)
    lr = 0.001 * pn / (gn + 5e-4 * pn + 1e-9)
    v = 0.9 * v + lr * (g + 5e-4 * p)
    return p - v, v
""", "f32[1000,1000], f32[1000,1000], f32[1000,1000]"),
    ("ema_bf16_tree_drift", "optimizer", """
def f(e1, e2, p1, p2):
    n1 = 0.999 * e1 + 0.001 * p1.astype(jnp.float32)
    n2 = 0.999 * e2 + 0.001 * p2.astype(jnp.float32)
    drift = jnp.sum(jnp.square(n1 - p1.astype(jnp.float32))) + jnp.sum(jnp.square(n2 - p2.astype(jnp.float32)))
    return n1, n2, drift
""", "f32[2048,8192], f32[8192], bf16[2048,8192], bf16[8192]"),
    ("ema_warmup_embedding", "optimizer", """
def f(ema, p, step):
    decay = jnp.minimum(0.999, (1.0 + step) / (10.0 + step))
    new = decay * ema + (1.0 - decay) * p
    return new, jnp.max(jnp.abs(new - p))
""", "f32[50257,768], f32[50257,768], f32[]"),
    # -- spectral normalisation -----------------------------------------------------------
    ("spectral_norm_fori", "solver", """
def f(w, u):
    def body(i, u):
        v = w.T @ u
        v = v / (jnp.linalg.norm(v) + 1e-12)
        u = w @ v
        return u / (jnp.linalg.norm(u) + 1e-12)
    u = lax.fori_loop(0, 5, body, u)
    v = w.T @ u
    v = v / (jnp.linalg.norm(v) + 1e-12)
    return w / (u @ w @ v)
""", "f32[2048,1024], f32[2048]"),
    ("spectral_norm_conv_kernel_bf16", "solver", """
def f(k, u):
    w = k.reshape(-1, k.shape[-1]).astype(jnp.float32)
    v = w.T @ u
    v = v / jnp.linalg.norm(v)
    u2 = w @ v
    u2 = u2 / jnp.linalg.norm(u2)
    return (w / (u2 @ w @ v)).astype(k.dtype).reshape(k.shape)
""", "bf16[3,3,256,512], f32[2304]"),
    # -- Sinkhorn iterations --------------------------------------------------------------
    ("sinkhorn_log_fori", "solver", """
def f(c):
    eps = 0.05
    def body(i, fg):
        fv, gv = fg
        fv = -eps * jax.nn.logsumexp((gv[None, :] - c) / eps, axis=1)
        gv = -eps * jax.nn.logsumexp((fv[:, None] - c) / eps, axis=0)
        return fv, gv
    fv, gv = lax.fori_loop(0, 50, body, (jnp.zeros(c.shape[0]), jnp.zeros(c.shape[1])))
    p = jnp.exp((fv[:, None] + gv[None, :] - c) / eps)
    return jnp.sum(p * c)
""", "f32[1024,1024]"),
    ("sinkhorn_scaling_vmap", "solver", """
def f(c):
    def one(cm):
        k = jnp.exp(-cm / 0.1)
        def body(i, uv):
            u, v = uv
            u = 1.0 / (k @ v)
            v = 1.0 / (k.T @ u)
            return u, v
        u, v = lax.fori_loop(0, 20, body, (jnp.ones(cm.shape[0]), jnp.ones(cm.shape[1])))
        return jnp.sum(u[:, None] * k * v[None, :] * cm)
    return jax.vmap(one)(c)
""", "f32[16,256,256]"),
    ("sinkhorn_python_loop_odd", "solver", """
def f(x, y):
    c = jnp.sum(jnp.square(x[:, None, :] - y[None, :, :]), -1)
    fv = jnp.zeros(x.shape[0])
    gv = jnp.zeros(y.shape[0])
    for _ in range(10):
        fv = -0.1 * jax.nn.logsumexp((gv[None, :] - c) / 0.1, axis=1)
        gv = -0.1 * jax.nn.logsumexp((fv[:, None] - c) / 0.1, axis=0)
    return jnp.mean(fv) + jnp.mean(gv)
""", "f32[1000,3], f32[1200,3]"),
    # -- Chamfer distances and assignment costs -------------------------------------------
    ("chamfer_broadcast_3d", "geometry", """
def f(x, y):
    d = jnp.sum(jnp.square(x[:, :, None, :] - y[:, None, :, :]), -1)
    return jnp.mean(jnp.min(d, 2)) + jnp.mean(jnp.min(d, 1))
""", "f32[16,2048,3], f32[16,2048,3]"),
    ("chamfer_matmul_bf16", "geometry", """
def f(x, y):
    xx = jnp.sum(jnp.square(x.astype(jnp.float32)), -1)
    yy = jnp.sum(jnp.square(y.astype(jnp.float32)), -1)
    xy = jnp.einsum('bnd,bmd->bnm', x, y, preferred_element_type=jnp.float32)
    d = xx[:, :, None] + yy[:, None, :] - 2.0 * xy
    return jnp.mean(jnp.min(d, 2), -1) + jnp.mean(jnp.min(d, 1), -1)
""", "bf16[8,4096,64], bf16[8,4096,64]"),
    ("chamfer_grad_points", "geometry", """
def f(x, y):
    def loss(x):
        d = jnp.sum(jnp.square(x[:, :, None, :] - y[:, None, :, :]), -1)
        return jnp.mean(jnp.min(d, 2)) + jnp.mean(jnp.min(d, 1))
    return jax.grad(loss)(x)
""", "f32[4,1024,3], f32[4,1024,3]"),
    ("detr_matcher_cost", "geometry", """
def f(logits, boxes, tgt_ids, tgt_boxes):
    prob = jax.nn.softmax(logits, -1)
    cls = -jnp.take_along_axis(prob, jnp.broadcast_to(tgt_ids[:, None, :], (logits.shape[0], logits.shape[1],
                                                                            tgt_ids.shape[1])), axis=2)
    l1 = jnp.sum(jnp.abs(boxes[:, :, None, :] - tgt_boxes[:, None, :, :]), -1)
    return jnp.argmin(cls + 5.0 * l1, axis=1)
""", "f32[8,100,92], f32[8,100,4], i32[8,20], f32[8,20,4]"),
    ("soft_assignment_cost", "geometry", """
def f(cost):
    p = jax.nn.softmax(-cost / 0.01, axis=1)
    return jnp.sum(p * cost)
""", "f32[2048,2048]"),
    # -- triplet mining -------------------------------------------------------------------
    ("triplet_semi_hard", "metric", """
def f(emb, labels):
    sq = jnp.sum(emb * emb, -1)
    d = jnp.sqrt(jnp.maximum(sq[:, None] + sq[None, :] - 2.0 * emb @ emb.T, 1e-12))
    same = labels[:, None] == labels[None, :]
    d_ap = jnp.max(jnp.where(same, d, 0.0), axis=1)
    semi = jnp.where(~same & (d > d_ap[:, None]), d, jnp.inf)
    d_an = jnp.min(semi, axis=1)
    return jnp.mean(jnp.maximum(d_ap - jnp.where(jnp.isinf(d_an), 0.0, d_an) + 0.2, 0.0))
""", "f32[1024,128], i32[1024]"),
    ("triplet_hardest_cosine_bf16", "metric", """
def f(emb, labels):
    e = emb.astype(jnp.float32)
    e = e / jnp.linalg.norm(e, axis=-1, keepdims=True)
    s = e @ e.T
    same = labels[:, None] == labels[None, :]
    hp = jnp.min(jnp.where(same, s, 2.0), 1)
    hn = jnp.max(jnp.where(same, -2.0, s), 1)
    return jnp.mean(jax.nn.relu(hn - hp + 0.3))
""", "bf16[2048,256], i32[2048]"),
    # -- lattices in scans ----------------------------------------------------------------
    ("ctc_like_alpha_scan", "lattice", """
def f(logits, labels):
    lp = jax.nn.log_softmax(logits, -1)
    ext = jnp.zeros((labels.shape[0], 2 * labels.shape[1] + 1), jnp.int32).at[:, 1::2].set(labels)
    emit = jnp.take_along_axis(lp, jnp.broadcast_to(ext[:, None, :], (lp.shape[0], lp.shape[1], ext.shape[1])), 2)
    emit = jnp.swapaxes(emit, 0, 1)
    def step(alpha, e):
        a1 = jnp.concatenate([jnp.full_like(alpha[:, :1], -1e30), alpha[:, :-1]], 1)
        a2 = jnp.concatenate([jnp.full_like(alpha[:, :2], -1e30), alpha[:, :-2]], 1)
        alpha = jax.nn.logsumexp(jnp.stack([alpha, a1, a2]), axis=0) + e
        return alpha, None
    a0 = jnp.full_like(emit[0], -1e30).at[:, 0].set(emit[0, :, 0]).at[:, 1].set(emit[0, :, 1])
    alpha, _ = lax.scan(step, a0, emit[1:])
    return -jax.nn.logsumexp(alpha[:, -2:], axis=-1)
""", "f32[32,200,1000], i32[32,50]"),
    ("hmm_forward_scan", "lattice", """
def f(log_a, emissions, log_pi):
    def step(alpha, e):
        alpha = jax.nn.logsumexp(alpha[:, :, None] + log_a[None], axis=1) + e
        return alpha, None
    alpha, _ = lax.scan(step, log_pi + emissions[0], emissions[1:])
    return jax.nn.logsumexp(alpha, -1)
""", "f32[64,64], f32[512,256,64], f32[64]"),
    # -- count and other likelihoods ------------------------------------------------------
    ("negative_binomial_nll", "likelihood", """
def f(x, mu, theta):
    t = theta[None, :]
    ll = (jax.scipy.special.gammaln(x + t) - jax.scipy.special.gammaln(t) - jax.scipy.special.gammaln(x + 1.0)
          + t * jnp.log(t / (t + mu)) + x * jnp.log(mu / (t + mu)))
    return -jnp.mean(jnp.sum(ll, -1))
""", "f32[4096,2000], f32[4096,2000], f32[2000]"),
    ("zero_inflated_poisson_nll", "likelihood", """
def f(y, log_rate, pi_logit):
    rate = jnp.exp(log_rate)
    log_pi = jax.nn.log_sigmoid(pi_logit)
    log_1m = jax.nn.log_sigmoid(-pi_logit)
    zero = jnp.logaddexp(log_pi, log_1m - rate)
    pos = log_1m + y * log_rate - rate - jax.scipy.special.gammaln(y + 1.0)
    return -jnp.mean(jnp.where(y == 0, zero, pos))
""", "f32[8192,1000], f32[8192,1000], f32[8192,1000]"),
    ("poisson_bf16_log_rate", "likelihood", """
def f(log_rate, y):
    lr = log_rate.astype(jnp.float32)
    return jnp.mean(jnp.exp(lr) - y * lr, axis=0)
""", "bf16[16384,512], f32[16384,512]"),
    ("student_t_nll", "likelihood", """
def f(y, mu, log_scale, df):
    z = (y - mu) * jnp.exp(-log_scale)
    g = jax.scipy.special.gammaln
    ll = (g((df + 1) / 2) - g(df / 2) - 0.5 * jnp.log(df * jnp.pi) - log_scale
          - (df + 1) / 2 * jnp.log1p(z * z / df))
    return -jnp.mean(ll)
""", "f32[16384,512], f32[16384,512], f32[16384,512], f32[]"),
    ("evidential_dirichlet_loss", "likelihood", """
def f(logits, y):
    alpha = jax.nn.softplus(logits) + 1.0
    s = jnp.sum(alpha, -1, keepdims=True)
    nll = jnp.sum(y * (jax.scipy.special.digamma(s) - jax.scipy.special.digamma(alpha)), -1)
    return jnp.mean(nll)
""", "f32[8192,100], f32[8192,100]"),
    ("ordinal_cumulative_link", "likelihood", """
def f(eta, cut, y):
    c = jax.nn.sigmoid(cut[None, :] - eta[:, None])
    c = jnp.concatenate([jnp.zeros_like(c[:, :1]), c, jnp.ones_like(c[:, :1])], -1)
    p = c[:, 1:] - c[:, :-1]
    return -jnp.mean(jnp.log(jnp.take_along_axis(p, y[:, None], 1) + 1e-9))
""", "f32[65536], f32[9], i32[65536]"),
    # -- histograms -----------------------------------------------------------------------
    ("histogram_onehot_million", "histogram", """
def f(x):
    idx = jnp.clip(jnp.floor((x + 4.0) / 8.0 * 256), 0, 255).astype(jnp.int32)
    return jnp.sum(jax.nn.one_hot(idx, 256), axis=0)
""", "f32[1000000]"),
    ("soft_histogram_gaussian", "histogram", """
def f(x, centers):
    return jnp.sum(jnp.exp(-0.5 * jnp.square((x[:, None] - centers[None, :]) / 0.05)), axis=0)
""", "f32[65536], f32[128]"),
    # -- quantile and Huber losses --------------------------------------------------------
    ("pinball_multi_quantile", "robust", """
def f(pred, y, tau):
    u = y[:, None] - pred
    return jnp.mean(jnp.maximum(tau * u, (tau - 1.0) * u), axis=0)
""", "f32[65536,9], f32[65536], f32[9]"),
    ("huber_bf16_odd", "robust", """
def f(pred, y):
    d = jnp.abs(pred.astype(jnp.float32) - y.astype(jnp.float32))
    return jnp.mean(jnp.where(d < 1.0, 0.5 * d * d, d - 0.5))
""", "bf16[3001,1999], bf16[3001,1999]"),
    ("qrdqn_quantile_huber", "robust", """
def f(pred, target):
    n = pred.shape[1]
    tau = (jnp.arange(n) + 0.5) / n
    u = target[:, None, :] - pred[:, :, None]
    h = jnp.where(jnp.abs(u) <= 1.0, 0.5 * u * u, jnp.abs(u) - 0.5)
    return jnp.mean(jnp.sum(jnp.mean(jnp.abs(tau[None, :, None] - (u < 0)) * h, -1), -1))
""", "f32[256,200], f32[256,200]"),
    # -- gradient penalties ---------------------------------------------------------------
    ("wgan_gp_penalty", "penalty", """
def f(real, fake, eps, w1, w2):
    xi = eps[:, None] * real + (1.0 - eps[:, None]) * fake
    critic = lambda x: jnp.sum(jnp.tanh(x @ w1) @ w2)
    g = jax.grad(critic)(xi)
    return jnp.mean(jnp.square(jnp.sqrt(jnp.sum(g * g, -1) + 1e-12) - 1.0))
""", "f32[256,3072], f32[256,3072], f32[256], f32[3072,512], f32[512,1]"),
    ("r1_penalty_grad_of_grad", "penalty", """
def f(w1, w2, x):
    def penalty(w1):
        g = jax.grad(lambda x: jnp.sum(jax.nn.softplus(jnp.tanh(x @ w1) @ w2)))(x)
        return jnp.mean(jnp.sum(g * g, -1))
    return jax.grad(penalty)(w1)
""", "f32[512,256], f32[256,1], f32[1024,512]"),
    ("input_grad_norm_vmap", "penalty", """
def f(x, w):
    def score(xi):
        return jnp.sum(jax.nn.log_softmax(jnp.tanh(xi @ w)))
    g = jax.vmap(jax.grad(score))(x)
    return jnp.sqrt(jnp.sum(g * g, -1))
""", "f32[512,1024], f32[1024,1000]"),
    ("hessian_vector_product", "penalty", """
def f(w, x, v):
    loss = lambda w: jnp.mean(jnp.square(jnp.tanh(x @ w)))
    return jax.jvp(jax.grad(loss), (w,), (v,))[1]
""", "f32[1024,1024], f32[2048,1024], f32[1024,1024]"),
    # -- other ----------------------------------------------------------------------------
    ("focal_tversky_3d", "other", """
def f(p, y):
    tp = jnp.sum(p * y, axis=(2, 3, 4))
    fp = jnp.sum(p * (1 - y), axis=(2, 3, 4))
    fn = jnp.sum((1 - p) * y, axis=(2, 3, 4))
    t = (tp + 1.0) / (tp + 0.7 * fn + 0.3 * fp + 1.0)
    return jnp.mean((1 - t) ** 0.75)
""", "f32[2,4,96,96,96], f32[2,4,96,96,96]"),
    ("arcface_margin_ce", "other", """
def f(emb, w, labels):
    e = emb / jnp.linalg.norm(emb, axis=-1, keepdims=True)
    wn = w / jnp.linalg.norm(w, axis=0, keepdims=True)
    cos = jnp.clip(e @ wn, -1.0, 1.0)
    theta = jnp.arccos(cos)
    target = jax.nn.one_hot(labels, w.shape[1])
    logits = 64.0 * jnp.where(target > 0, jnp.cos(theta + 0.5), cos)
    return jnp.mean(jax.nn.logsumexp(logits, -1) - jnp.sum(target * logits, -1))
""", "f32[512,512], f32[512,10000], i32[512]"),
    ("soft_target_kl_f16", "other", """
def f(logits, target_logits):
    lp = jax.nn.log_softmax(logits.astype(jnp.float32) / 2.0, -1)
    lq = jax.nn.log_softmax(target_logits.astype(jnp.float32) / 2.0, -1)
    return jnp.sum(jnp.exp(lq) * (lq - lp)) * 4.0 / logits.shape[0]
""", "f16[2048,1000], f16[2048,1000]"),
    ("moco_queue_infonce", "other", """
def f(q, k, queue):
    pos = jnp.sum(q * k, -1, keepdims=True)
    neg = q @ queue
    logits = jnp.concatenate([pos, neg], -1) / 0.07
    return jnp.mean(jax.nn.logsumexp(logits, -1) - logits[:, 0])
""", "f32[256,128], f32[256,128], f32[128,65536]"),
    ("cosine_nearest_excluding_self", "other", """
def f(x):
    e = x / jnp.linalg.norm(x, axis=-1, keepdims=True)
    s = e @ e.T
    s = jnp.where(jnp.eye(x.shape[0], dtype=bool), -jnp.inf, s)
    return jnp.argmax(s, -1), jnp.max(s, -1)
""", "f32[8192,384]"),
    ("ghost_norm_per_example", "other", """
def f(a, g):
    pg = jnp.einsum('btd,bte->bde', a, g)
    return jnp.sqrt(jnp.sum(jnp.square(pg), axis=(1, 2)))
""", "f32[64,512,1024], f32[64,512,256]"),
    ("energy_distance", "other", """
def f(x, y):
    def mean_dist(a, b):
        return jnp.mean(jnp.sqrt(jnp.sum(jnp.square(a[:, None, :] - b[None, :, :]), -1) + 1e-12))
    return 2 * mean_dist(x, y) - mean_dist(x, x) - mean_dist(y, y)
""", "f32[2048,64], f32[2048,64]"),
    ("wasserstein_1d_sorted", "other", """
def f(x, y):
    return jnp.mean(jnp.abs(jnp.sort(x, -1) - jnp.sort(y, -1)), -1)
""", "f32[64,100000], f32[64,100000]"),
    ("kde_log_density", "other", """
def f(x, s):
    d = jnp.sum(jnp.square(x[:, None, :] - s[None, :, :]), -1)
    return jax.nn.logsumexp(-0.5 * d / 0.04, axis=1) - jnp.log(s.shape[0])
""", "f32[4096,2], f32[8192,2]"),
    ("attention_rollout", "other", """
def f(attn):
    a = jnp.mean(attn, axis=1)
    a = a + jnp.eye(a.shape[-1])
    a = a / jnp.sum(a, -1, keepdims=True)
    r = a[0]
    for i in range(1, a.shape[0]):
        r = a[i] @ r
    return r[0, 1:]
""", "f32[12,8,197,197]"),
    ("mixup_soft_ce_bf16", "other", """
def f(logits, ya, yb, lam):
    lp = jax.nn.log_softmax(logits.astype(jnp.float32), -1)
    t = lam * jax.nn.one_hot(ya, logits.shape[-1]) + (1 - lam) * jax.nn.one_hot(yb, logits.shape[-1])
    return -jnp.mean(jnp.sum(t * lp, -1))
""", "bf16[1024,1000], i32[1024], i32[1024], f32[]"),
    ("causal_depthwise_conv_shifts", "other", """
def f(x, w):
    y = x * w[3]
    for i in range(1, 4):
        y = y + jnp.pad(x, ((0, 0), (i, 0), (0, 0)))[:, :-i] * w[3 - i]
    return jnp.mean(jax.nn.silu(y), axis=1)
""", "f32[8,4096,1536], f32[4,1536]"),
    ("associative_scan_linear_recurrence", "other", """
def f(a, b):
    def comb(l, r):
        return r[0] * l[0], r[0] * l[1] + r[1]
    _, h = lax.associative_scan(comb, (a, b), axis=1)
    return jnp.sum(h, axis=1)
""", "f32[8,2048,256], f32[8,2048,256]"),
    ("dino_centered_teacher", "other", """
def f(s, t, center):
    c = 0.9 * center + 0.1 * jnp.mean(t, 0)
    pt = jax.nn.softmax((t - center) / 0.04, -1)
    return -jnp.mean(jnp.sum(pt * jax.nn.log_softmax(s / 0.1, -1), -1)), c
""", "f32[1024,65536], f32[1024,65536], f32[65536]"),
    ("vq_commitment_argmin", "other", """
def f(z, codebook):
    d = (jnp.sum(z * z, -1, keepdims=True) - 2.0 * z @ codebook.T + jnp.sum(codebook * codebook, -1)[None, :])
    q = codebook[jnp.argmin(d, -1)]
    return jnp.mean(jnp.square(z - lax.stop_gradient(q)))
""", "f32[8192,64], f32[1024,64]"),
    ("vmap_sinkhorn_entropy_tiny", "solver", """
def f(logits):
    def one(l):
        p = jnp.exp(l)
        for _ in range(3):
            p = p / jnp.sum(p, 0, keepdims=True)
            p = p / jnp.sum(p, 1, keepdims=True)
        return -jnp.sum(p * jnp.log(p))
    return jax.vmap(one)(logits)
""", "f32[64,16,16]"),
]


SCRIPT = OutsideFamily("guide_predictor_holdout6", FAMILY, PROGRAMS, __doc__ or "")
__doc__, FILES, programs, main = SCRIPT.usage, SCRIPT.files, SCRIPT.programs, SCRIPT.main

if __name__ == "__main__":
    raise SystemExit(main())
