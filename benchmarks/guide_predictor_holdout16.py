"""A fifteenth holdout, wild15: an outside review's 47 programs of second-order and continual-learning
optimizer, fine-tuning, quantisation, state-space and linear-recurrence, decoding, reward-model, face
recognition, augmentation, classical vision, multi-view geometry, neural field, detection, self-supervised,
flocking, spectral fluid, energy-model, option pricing, time-series alignment, graph embedding, statistics,
dimensionality reduction, control, bandit, model-based RL and audio code, in idioms the earlier families do not
name, scored first against the predictor frozen at commit 8346a7ce.

The programs are not this project's: a reviewer from outside, who neither wrote nor read the rules, wrote them
from the definitions of the computations, the way JAX libraries and research code write them, at their usual
shapes: K-FAC's Kronecker factors with pi-damping and two solves (and the per-example norm product),
AdaHessian's Hutchinson diagonal by ``jax.jvp`` of ``jax.grad`` with block-averaged magnitudes, A-GEM's
projection onto a reference gradient over 16M parameters, SOAP's Adam in the Shampoo eigenbasis with its
statistics, Grokfast's EMA gradient filter before a global-norm clip of a GPT-2-sized tree, DoRA's column-normed
``bf16`` weight with a LoRA delta, an ``int8`` weight-only matmul with per-channel scales before RMSNorm;
RWKV-6's data-dependent decay in a scan of per-head 64 x 64 states, Hyena's long convolution by ``rfft`` with a
sigmoid gate, S4D's ``complex64`` Vandermonde kernel (256 x 32 x 4,096) summed over the state before an FFT
convolution, Griffin's RG-LRU by ``lax.associative_scan``, contrastive decoding's plausibility mask and
``argmax`` over ``bf16`` logits (256 x 50,257), locally typical sampling by an ``argsort`` of entropy deviations,
a ``cumsum`` and a scatter of the kept mask, a Bradley-Terry reward model's last-token rewards by
``take_along_axis`` from ``bf16`` hidden states; CosFace's additive margin over 250,000 classes (a 1 GB ``f32``
logit table), CutMix's box mask with a permuted batch before pooling, the Harris corner response of ``f16``
images by rolls and ``lax.reduce_window``, a 5 x 5 bilateral filter by a stack of 25 rolled images, histogram
equalisation of ``uint8`` images by ``bincount``, ``cumsum`` and a lookup under ``vmap``; an ICP step (an
``argmin`` over an 8,192 x 16,384 distance table, Kabsch by a 3 x 3 SVD), RANSAC's inlier counts of 4,096
homographies over 8,192 matches with an ``argmax``, bundle adjustment's Rodrigues reprojection with radial
distortion and a Huber sum over 2M observations by gathers, an SDF's eikonal loss by ``vmap(grad)``; SSD's 3:1
hard negative mining by a double ``argsort`` over 8,732 anchors, CenterNet's peak extraction by a 3 x 3 max pool
and ``top_k``; SwAV's Sinkhorn codes in a ``fori_loop`` with the swapped prediction, iBOT's masked-patch
self-distillation with centring and a ``bool`` mask (a 411 MB table), MAE's per-patch normalised pixel loss;
a Vicsek flocking step by masked neighbour sums of headings, a pseudo-spectral Navier-Stokes vorticity step
(``rfft2``, dealiasing, a semi-implicit viscous term), an RBM's CD-5 by Gibbs sampling in a ``fori_loop``;
Black-Scholes greeks by ``vmap(grad)`` and ``grad(grad)`` over a 2,048 x 2,048 spot-strike grid, Longstaff-Schwartz
American put pricing by a reverse scan of 3 x 3 regressions; soft-DTW by nested scans after a four-dimensional
cost table, GraphSAGE's mean of 25 sampled neighbours by a gather, node2vec's skip-gram with negative samples by
gathers and an einsum; the energy distance at odd sizes (2,999 and 3,001), a Bayesian linear regression's
posterior predictive variance, NMF's multiplicative updates with the Frobenius error at 3,001 x 999, UMAP's edge
cross-entropy with five negatives per edge, batched Procrustes alignment by SVD (a tiny table); MPPI's rollouts
in a scan of 65,536 samples weighted by a softmin, an LQR Riccati recursion by a reverse scan (a tiny table),
MuZero's two-hot value transform against 601-bin logits, UCB1 over 16,384 x 1,000 bandits with the regret; a
multi-resolution STFT loss (spectral convergence and log magnitude at three FFT sizes by gathered frames), and
YIN's cumulative mean normalised difference by an FFT autocorrelation with an ``argmin``. ``f32``, ``bf16``,
``f16``, ``int8``, ``uint8``, ``int32``, ``bool`` and ``complex64``, odd, power-of-two, tiny and huge (about
1 GB) tables. The reviewer recorded ``predict()``'s answers (``guide_predictor_family.predicted``, calibrated)
for every program and target before any compile (main then at 8346a7ce; the record's sha256 is
``33768738db27f1c1...``, 49 programs), then compiled them with this harness for the truth; the first
evaluation's answers equal the record's on every one of the 141 rows kept. Two programs of the 49 written are
left out, with their truth rows: an IQL critic and policy loss (expectile value loss, advantage-weighted
Gaussian log-likelihood), whose H100 compile failed in XLA (``INVALID_ARGUMENT: Reshape input and output shapes
must be the same, got 1x16 -> 16x8``), and spectral clustering by a normalised Laplacian's ``eigh`` (1,024
points), whose TPU compile did not finish within the 90 s the review allowed a compile; every other compile
finished within it (the slowest, the Navier-Stokes step on the TPU, in 78 s, and S4D's kernel on the TPU in
60 s).

**Ground truth** and **scores** as the first holdout's (``guide_predictor_holdout.score_programs``).

"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_holdout import OutsideFamily  # noqa: E402

FAMILY = "wild15"

#: (name, kind, body defining ``f``, argument specs), as the review wrote them.
PROGRAMS: list[tuple[str, str, str, str]] = [
    # -- optimizers and fine-tuning ------------------------------------------------------------------
    ("kfac_kronecker_factors_damped_precondition", "optimizer", """
def f(a, g, gw, damping):
    n = a.shape[0]
    fa = a.T @ a / n
    fg = g.T @ g / n
    pi = jnp.sqrt((jnp.trace(fa) / fa.shape[0]) / (jnp.trace(fg) / fg.shape[0]))
    fa = fa + pi * jnp.sqrt(damping) * jnp.eye(fa.shape[0])
    fg = fg + jnp.sqrt(damping) / pi * jnp.eye(fg.shape[0])
    nat = jnp.linalg.solve(fg, jnp.linalg.solve(fa, gw.T).T)
    sq = jnp.sum(a * a, axis=1) * jnp.sum(g * g, axis=1)
    return nat, jnp.mean(sq), jnp.sum(nat * gw)
""", "f32[8192,1024], f32[8192,1024], f32[1024,1024], f32[]"),
    ("adahessian_hutchinson_diag_spatial_avg", "optimizer", """
def f(w1, w2, x, y, z1, z2, v1, v2):
    def loss(params):
        a, b = params
        return jnp.mean((jnp.tanh(x @ a) @ b - y) ** 2)
    g, hz = jax.jvp(jax.grad(loss), ((w1, w2),), ((z1, z2),))
    d1 = jnp.mean(jnp.abs(z1 * hz[0]).reshape(-1, 8, z1.shape[1]), axis=1, keepdims=True)
    d1 = jnp.broadcast_to(d1, (z1.shape[0] // 8, 8, z1.shape[1])).reshape(z1.shape)
    d2 = jnp.abs(z2 * hz[1])
    v1 = 0.999 * v1 + 0.001 * d1 * d1
    v2 = 0.999 * v2 + 0.001 * d2 * d2
    u1 = g[0] / (jnp.sqrt(v1) + 1e-4)
    u2 = g[1] / (jnp.sqrt(v2) + 1e-4)
    return w1 - 0.15 * u1, w2 - 0.15 * u2, v1, v2
""", "f32[1024,2048], f32[2048,256], f32[4096,1024], f32[4096,256], f32[1024,2048], f32[2048,256], f32[1024,2048], f32[2048,256]"),  # noqa: E501
    ("agem_reference_gradient_projection", "optimizer", """
def f(g, g_ref, p):
    dot = jnp.vdot(g, g_ref)
    ref_sq = jnp.vdot(g_ref, g_ref)
    proj = jnp.where(dot < 0, g - dot / ref_sq * g_ref, g)
    return p - 0.01 * proj, jnp.linalg.norm(proj), dot
""", "f32[16777216], f32[16777216], f32[16777216]"),
    ("soap_eigenbasis_adam_with_stats", "optimizer", """
def f(g, ql, qr, m, v, l_stat, r_stat, step):
    l_stat = 0.95 * l_stat + 0.05 * g @ g.T
    r_stat = 0.95 * r_stat + 0.05 * g.T @ g
    gr = ql.T @ g @ qr
    m = 0.9 * m + 0.1 * g
    mr = ql.T @ m @ qr
    v = 0.95 * v + 0.05 * gr * gr
    nr = (mr / (1 - 0.9 ** step)) / (jnp.sqrt(v / (1 - 0.95 ** step)) + 1e-8)
    upd = ql @ nr @ qr.T
    return upd, m, v, l_stat, r_stat, jnp.sqrt(jnp.mean(upd * upd))
""", "f32[2048,2048], f32[2048,2048], f32[2048,2048], f32[2048,2048], f32[2048,2048], f32[2048,2048], f32[2048,2048], f32[]"),  # noqa: E501
    ("grokfast_ema_filter_global_clip", "optimizer", """
def f(g1, g2, g3, e1, e2, e3):
    gs, es = (g1, g2, g3), (e1, e2, e3)
    es = tuple(0.98 * e + 0.02 * g for e, g in zip(es, gs))
    gs = tuple(g + 2.0 * e for g, e in zip(gs, es))
    gn = jnp.sqrt(sum(jnp.sum(jnp.square(g)) for g in gs))
    scale = jnp.minimum(1.0, 1.0 / (gn + 1e-6))
    return tuple(g * scale for g in gs), es, gn
""", "f32[50304,768], f32[3072,768], f32[768,3072], f32[50304,768], f32[3072,768], f32[768,3072]"),
    ("dora_magnitude_direction_column_norm_bf16", "finetune", """
def f(w, lora_a, lora_b, mag, x):
    wd = w.astype(jnp.float32) + 2.0 * (lora_b.astype(jnp.float32) @ lora_a.astype(jnp.float32))
    col = jnp.sqrt(jnp.sum(wd * wd, axis=0, keepdims=True))
    wn = mag[None, :] * wd / lax.stop_gradient(col)
    return (x @ wn.astype(jnp.bfloat16)), col
""", "bf16[4096,4096], bf16[16,4096], bf16[4096,16], f32[4096], bf16[256,4096]"),
    ("int8_weight_only_matmul_per_channel_rmsnorm", "quantization", """
def f(w_q, scale, x, gamma):
    w = w_q.astype(jnp.bfloat16) * scale.astype(jnp.bfloat16)[None, :]
    h = (x @ w).astype(jnp.float32)
    h = h * lax.rsqrt(jnp.mean(h * h, axis=-1, keepdims=True) + 1e-6) * gamma
    return h.astype(jnp.bfloat16)
""", "i8[4096,11008], f32[11008], bf16[512,4096], f32[11008]"),
    # -- sequence models and decoding ------------------------------------------------------------------
    ("rwkv6_data_dependent_decay_scan", "sequence", """
def f(r, k, v, w_log, u):
    def step(s, inp):
        rt, kt, vt, wt = inp
        kv = kt[:, :, None] * vt[:, None, :]
        y = jnp.einsum("hk,hkv->hv", rt, s + u[:, :, None] * kv)
        s = jnp.exp(-jnp.exp(wt))[:, :, None] * s + kv
        return s, y
    s0 = jnp.zeros((r.shape[1], r.shape[2], v.shape[2]))
    _, ys = lax.scan(step, s0, (r, k, v, w_log))
    ys = ys - jnp.mean(ys, axis=-1, keepdims=True)
    return ys * lax.rsqrt(jnp.mean(ys * ys, axis=-1, keepdims=True) + 1e-5)
""", "f32[2048,32,64], f32[2048,32,64], f32[2048,32,64], f32[2048,32,64], f32[32,64]"),
    ("hyena_fft_long_conv_gated", "sequence", """
def f(u, v, h, bias):
    L = u.shape[1]
    uf = jnp.fft.rfft(u, n=2 * L, axis=1)
    hf = jnp.fft.rfft(h, n=2 * L, axis=0)
    y = jnp.fft.irfft(uf * hf[None], n=2 * L, axis=1)[:, :L] + u * bias
    y = y * jax.nn.sigmoid(v)
    return jnp.mean(y, axis=1), jnp.sqrt(jnp.mean(y * y))
""", "f32[4,4096,768], f32[4,4096,768], f32[4096,768], f32[768]"),
    ("s4d_vandermonde_kernel_c64", "sequence", """
def f(log_dt, a_re, a_im, c_re, c_im, u):
    dt = jnp.exp(log_dt)
    a = -jnp.exp(a_re) + 1j * a_im
    dta = dt[:, None] * a
    c = (c_re + 1j * c_im) * (jnp.exp(dta) - 1.0) / a
    l = jnp.arange(u.shape[-1])
    vand = jnp.exp(dta[:, :, None] * l[None, None, :])
    k = 2.0 * jnp.real(jnp.sum(c[:, :, None] * vand, axis=1))
    n = 2 * u.shape[-1]
    y = jnp.fft.irfft(jnp.fft.rfft(u, n=n) * jnp.fft.rfft(k, n=n)[None], n=n)[..., :u.shape[-1]]
    return y
""", "f32[256], f32[256,32], f32[256,32], f32[256,32], f32[256,32], f32[8,256,4096]"),
    ("griffin_rglru_associative_scan", "sequence", """
def f(x, w_a, w_x, log_lambda):
    r = jax.nn.sigmoid(x @ w_a)
    i = jax.nn.sigmoid(x @ w_x)
    log_a = -8.0 * r * jax.nn.softplus(log_lambda)
    a = jnp.exp(log_a)
    b = jnp.sqrt(1 - jnp.exp(2 * log_a)) * (i * x)
    def comb(p, q):
        return p[0] * q[0], q[0] * p[1] + q[1]
    _, h = lax.associative_scan(comb, (a, b), axis=1)
    return h * lax.rsqrt(jnp.mean(h * h, axis=-1, keepdims=True) + 1e-6)
""", "f32[8,2048,1024], f32[1024,1024], f32[1024,1024], f32[1024]"),
    ("contrastive_decoding_plausibility_argmax_bf16", "decoding", """
def f(expert, amateur, alpha):
    le = jax.nn.log_softmax(expert.astype(jnp.float32), axis=-1)
    la = jax.nn.log_softmax(amateur.astype(jnp.float32), axis=-1)
    ok = le >= jnp.max(le, axis=-1, keepdims=True) + jnp.log(alpha)
    score = jnp.where(ok, le - la, -jnp.inf)
    return jnp.argmax(score, axis=-1), jnp.max(score, axis=-1)
""", "bf16[256,50257], bf16[256,50257], f32[]"),
    ("locally_typical_sampling_mask_sort", "decoding", """
def f(logits, u, tau):
    lp = jax.nn.log_softmax(logits, axis=-1)
    p = jnp.exp(lp)
    ent = -jnp.sum(p * lp, axis=-1, keepdims=True)
    dev = jnp.abs(-lp - ent)
    order = jnp.argsort(dev, axis=-1)
    ps = jnp.take_along_axis(p, order, axis=-1)
    keep_sorted = (jnp.cumsum(ps, axis=-1) - ps) < tau
    keep = jnp.zeros_like(keep_sorted).at[jnp.arange(logits.shape[0])[:, None], order].set(keep_sorted)
    g = -jnp.log(-jnp.log(u))
    return jnp.argmax(jnp.where(keep, lp + g, -jnp.inf), axis=-1)
""", "f32[512,32000], f32[512,32000], f32[]"),
    ("reward_model_bradley_terry_last_token", "rlhf", """
def f(h_chosen, h_rejected, len_c, len_r, w):
    rc = jnp.einsum("btd,d->bt", h_chosen, w).astype(jnp.float32)
    rr = jnp.einsum("btd,d->bt", h_rejected, w).astype(jnp.float32)
    last_c = jnp.take_along_axis(rc, (len_c - 1)[:, None], axis=1)[:, 0]
    last_r = jnp.take_along_axis(rr, (len_r - 1)[:, None], axis=1)[:, 0]
    margin = last_c - last_r
    return -jnp.mean(jax.nn.log_sigmoid(margin)), jnp.mean(margin > 0)
""", "bf16[64,2048,2048], bf16[64,2048,2048], i32[64], i32[64], bf16[2048]"),
    # -- vision ------------------------------------------------------------------------------------------
    ("cosface_additive_margin_250k_classes_1gb", "vision", """
def f(emb, w, labels):
    e = emb / jnp.linalg.norm(emb, axis=1, keepdims=True)
    wn = w / jnp.linalg.norm(w, axis=0, keepdims=True)
    cos = e @ wn
    logits = 64.0 * (cos - 0.35 * jax.nn.one_hot(labels, w.shape[1]))
    return jnp.mean(jax.nn.logsumexp(logits, axis=1) - jnp.take_along_axis(logits, labels[:, None], axis=1)[:, 0])
""", "f32[1024,512], f32[512,250000], i32[1024]"),
    ("cutmix_box_mask_mixed_pool_loss", "vision", """
def f(x, perm, box, w, labels, lam):
    hh = jnp.arange(x.shape[2])[:, None]
    ww = jnp.arange(x.shape[3])[None, :]
    inside = (hh >= box[0]) & (hh < box[1]) & (ww >= box[2]) & (ww < box[3])
    mixed = jnp.where(inside[None, None], x[perm], x)
    feat = jnp.mean(mixed, axis=(2, 3))
    lp = jax.nn.log_softmax(feat @ w, axis=-1)
    la = jnp.take_along_axis(lp, labels[:, None], 1)[:, 0]
    lb = jnp.take_along_axis(lp, labels[perm][:, None], 1)[:, 0]
    return -jnp.mean(lam * la + (1 - lam) * lb)
""", "f32[256,3,224,224], i32[256], i32[4], f32[3,1000], i32[256], f32[]"),
    ("harris_corner_response_f16", "vision", """
def f(img):
    x = img.astype(jnp.float32)
    ix = (jnp.roll(x, -1, 2) - jnp.roll(x, 1, 2)) * 0.5
    iy = (jnp.roll(x, -1, 1) - jnp.roll(x, 1, 1)) * 0.5
    def box(t):
        return lax.reduce_window(t, 0.0, lax.add, (1, 5, 5), (1, 1, 1), "SAME") / 25.0
    sxx, syy, sxy = box(ix * ix), box(iy * iy), box(ix * iy)
    r = sxx * syy - sxy * sxy - 0.04 * (sxx + syy) ** 2
    return jnp.max(r, axis=(1, 2)), jnp.sum(r > 1e-3, axis=(1, 2))
""", "f16[16,1024,1024]"),
    ("bilateral_filter_5x5_shift_stack", "vision", """
def f(img, sigma_r):
    offs = [(dy, dx) for dy in range(-2, 3) for dx in range(-2, 3)]
    sh = jnp.stack([jnp.roll(img, (dy, dx), axis=(1, 2)) for dy, dx in offs])
    sp = jnp.array([jnp.exp(-(dy * dy + dx * dx) / 8.0) for dy, dx in offs])[:, None, None, None]
    wgt = sp * jnp.exp(-((sh - img[None]) ** 2) / (2 * sigma_r ** 2))
    out = jnp.sum(wgt * sh, axis=0) / jnp.sum(wgt, axis=0)
    return out, jnp.mean(jnp.abs(out - img))
""", "f32[8,512,512], f32[]"),
    ("histogram_equalization_uint8_bincount", "vision", """
def f(imgs):
    def eq(im):
        flat = im.reshape(-1).astype(jnp.int32)
        hist = jnp.bincount(flat, length=256)
        cdf = jnp.cumsum(hist)
        lut = jnp.round(255.0 * (cdf - cdf[0]) / (flat.shape[0] - cdf[0])).astype(jnp.uint8)
        return lut[flat].reshape(im.shape)
    out = jax.vmap(eq)(imgs)
    return out, jnp.mean(out.astype(jnp.float32), axis=(1, 2))
""", "u8[64,1024,1024]"),
    ("icp_nearest_neighbour_kabsch_step", "geometry", """
def f(src, dst):
    d2 = jnp.sum(src * src, 1)[:, None] + jnp.sum(dst * dst, 1)[None, :] - 2.0 * src @ dst.T
    nn = jnp.argmin(d2, axis=1)
    m = dst[nn]
    cs, cm = jnp.mean(src, 0), jnp.mean(m, 0)
    h = (src - cs).T @ (m - cm)
    u, _, vt = jnp.linalg.svd(h)
    dfix = jnp.sign(jnp.linalg.det(vt.T @ u.T))
    r = vt.T @ jnp.diag(jnp.array([1.0, 1.0, dfix])) @ u.T
    t = cm - r @ cs
    moved = src @ r.T + t
    return r, t, jnp.sqrt(jnp.mean(jnp.sum((moved - m) ** 2, axis=1)))
""", "f32[8192,3], f32[16384,3]"),
    ("ransac_homography_inlier_count_argmax", "geometry", """
def f(hs, p, q):
    ph = jnp.concatenate([p, jnp.ones((p.shape[0], 1))], axis=1)
    proj = jnp.einsum("hij,nj->hni", hs, ph)
    xy = proj[..., :2] / proj[..., 2:3]
    err = jnp.sum((xy - q[None]) ** 2, axis=-1)
    inl = jnp.sum(err < 4.0, axis=1)
    best = jnp.argmax(inl)
    return best, inl[best], jnp.sum(jnp.where(err[best] < 4.0, err[best], 0.0))
""", "f32[4096,3,3], f32[8192,2], f32[8192,2]"),
    ("bundle_adjustment_reprojection_huber", "geometry", """
def f(cams, pts, cam_idx, pt_idx, obs):
    c = cams[cam_idx]
    x = pts[pt_idx]
    w = c[:, :3]
    th = jnp.sqrt(jnp.sum(w * w, 1, keepdims=True)) + 1e-9
    k = w / th
    xc = x * jnp.cos(th) + jnp.cross(k, x) * jnp.sin(th) + k * jnp.sum(k * x, 1, keepdims=True) * (1 - jnp.cos(th))
    xc = xc + c[:, 3:6]
    uv = -xc[:, :2] / xc[:, 2:3]
    r2 = jnp.sum(uv * uv, 1, keepdims=True)
    uv = c[:, 6:7] * (1 + c[:, 7:8] * r2 + c[:, 8:9] * r2 * r2) * uv
    res = jnp.sqrt(jnp.sum((uv - obs) ** 2, 1))
    hub = jnp.where(res < 1.0, 0.5 * res * res, res - 0.5)
    return jnp.sum(hub)
""", "f32[1024,9], f32[262144,3], i32[2097152], i32[2097152], f32[2097152,2]"),
    ("sdf_eikonal_loss_vmap_grad", "neural_field", """
def f(w1, b1, w2, b2, w3, pts, surf):
    def sdf(p):
        h = jax.nn.softplus(100.0 * (p @ w1 + b1)) / 100.0
        h = jax.nn.softplus(100.0 * (h @ w2 + b2)) / 100.0
        return (h @ w3)[0]
    g = jax.vmap(jax.grad(sdf))(pts)
    eik = jnp.mean((jnp.linalg.norm(g, axis=-1) - 1.0) ** 2)
    on = jnp.mean(jnp.abs(jax.vmap(sdf)(surf)))
    return on + 0.1 * eik
""", "f32[3,512], f32[512], f32[512,512], f32[512], f32[512,1], f32[65536,3], f32[65536,3]"),
    ("ssd_hard_negative_mining_3to1", "detection", """
def f(conf, labels, loc_p, loc_t):
    lse = jax.nn.logsumexp(conf, axis=-1)
    ce = lse - jnp.take_along_axis(conf, labels[..., None], axis=-1)[..., 0]
    pos = labels > 0
    neg_loss = jnp.where(pos, 0.0, ce)
    rank = jnp.argsort(jnp.argsort(-neg_loss, axis=1), axis=1)
    n_neg = jnp.minimum(3 * jnp.sum(pos, axis=1, keepdims=True), pos.shape[1] - 1)
    sel = pos | (rank < n_neg)
    d = jnp.abs(loc_p - loc_t)
    sl1 = jnp.sum(jnp.where(d < 1, 0.5 * d * d, d - 0.5), axis=-1)
    npos = jnp.maximum(jnp.sum(pos), 1)
    return (jnp.sum(jnp.where(sel, ce, 0.0)) + jnp.sum(jnp.where(pos, sl1, 0.0))) / npos
""", "f32[64,8732,81], i32[64,8732], f32[64,8732,4], f32[64,8732,4]"),
    ("centernet_heatmap_peaks_maxpool_topk", "detection", """
def f(heat):
    h = jax.nn.sigmoid(heat)
    hmax = lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 1, 1), "SAME")
    peaks = jnp.where(h == hmax, h, 0.0)
    b = heat.shape[0]
    scores, idx = lax.top_k(peaks.reshape(b, -1), 100)
    cls = idx // (heat.shape[2] * heat.shape[3])
    return scores, cls, idx % (heat.shape[2] * heat.shape[3])
""", "f32[32,80,128,128]"),
    # -- self-supervised --------------------------------------------------------------------------------
    ("swav_sinkhorn_codes_swapped_prediction", "ssl", """
def f(z1, z2, protos):
    pn = protos / jnp.linalg.norm(protos, axis=0, keepdims=True)
    s1 = (z1 / jnp.linalg.norm(z1, axis=1, keepdims=True)) @ pn
    s2 = (z2 / jnp.linalg.norm(z2, axis=1, keepdims=True)) @ pn
    def codes(s):
        q = jnp.exp(s / 0.05).T
        q = q / jnp.sum(q)
        k, b = q.shape
        def it(_, q):
            q = q / jnp.sum(q, axis=1, keepdims=True) / k
            return q / jnp.sum(q, axis=0, keepdims=True) / b
        q = lax.fori_loop(0, 3, it, q)
        return lax.stop_gradient((q * b).T)
    q1, q2 = codes(s1), codes(s2)
    l1 = -jnp.mean(jnp.sum(q2 * jax.nn.log_softmax(s1 / 0.1, axis=1), axis=1))
    l2 = -jnp.mean(jnp.sum(q1 * jax.nn.log_softmax(s2 / 0.1, axis=1), axis=1))
    return 0.5 * (l1 + l2)
""", "f32[4096,128], f32[4096,128], f32[128,3000]"),
    ("ibot_masked_patch_self_distillation", "ssl", """
def f(student, teacher, center, mask):
    t = jax.nn.softmax((teacher - center) / 0.04, axis=-1)
    ls = jax.nn.log_softmax(student / 0.1, axis=-1)
    per = -jnp.sum(t * ls, axis=-1)
    m = mask.astype(jnp.float32)
    loss = jnp.mean(jnp.sum(per * m, axis=1) / jnp.maximum(jnp.sum(m, axis=1), 1.0))
    new_center = 0.9 * center + 0.1 * jnp.mean(teacher, axis=(0, 1))
    return loss, new_center
""", "f32[64,196,8192], f32[64,196,8192], f32[8192], bool[64,196]"),
    ("mae_norm_pix_masked_patch_loss", "ssl", """
def f(imgs, pred, mask):
    b, c, hh, ww = imgs.shape
    p = 16
    x = imgs.reshape(b, c, hh // p, p, ww // p, p).transpose(0, 2, 4, 3, 5, 1).reshape(b, -1, p * p * c)
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    tgt = (x - mu) / jnp.sqrt(var + 1e-6)
    l = jnp.mean((pred - tgt) ** 2, axis=-1)
    return jnp.sum(l * mask) / jnp.sum(mask)
""", "f32[256,3,224,224], f32[256,196,768], f32[256,196]"),
    # -- physics and simulation --------------------------------------------------------------------------
    ("vicsek_flocking_neighbour_mean_heading", "physics", """
def f(pos, theta, noise, box):
    d = pos[:, None, :] - pos[None, :, :]
    d = d - box * jnp.round(d / box)
    near = jnp.sum(d * d, axis=-1) < 1.0
    s = jnp.sum(jnp.where(near, jnp.sin(theta)[None, :], 0.0), axis=1)
    c = jnp.sum(jnp.where(near, jnp.cos(theta)[None, :], 0.0), axis=1)
    th = jnp.arctan2(s, c) + 0.1 * noise
    pos = jnp.mod(pos + 0.03 * jnp.stack([jnp.cos(th), jnp.sin(th)], 1), box)
    order = jnp.hypot(jnp.mean(jnp.cos(th)), jnp.mean(jnp.sin(th)))
    return pos, th, order
""", "f32[4096,2], f32[4096], f32[4096], f32[]"),
    ("navier_stokes_spectral_vorticity_step", "physics", """
def f(w, nu, dt):
    n = w.shape[-1]
    k = jnp.fft.fftfreq(n, 1.0 / n)
    kx = k[None, :n // 2 + 1] * jnp.ones((n, 1))
    ky = k[:, None] * jnp.ones((1, n // 2 + 1))
    k2 = kx ** 2 + ky ** 2
    k2 = k2.at[0, 0].set(1.0)
    dealias = (jnp.abs(kx) < n / 3) & (jnp.abs(ky) < n / 3)
    wh = jnp.fft.rfft2(w)
    ph = wh / k2
    u = jnp.fft.irfft2(1j * ky * ph, s=(n, n))
    v = jnp.fft.irfft2(-1j * kx * ph, s=(n, n))
    wx = jnp.fft.irfft2(1j * kx * wh, s=(n, n))
    wy = jnp.fft.irfft2(1j * ky * wh, s=(n, n))
    nl = jnp.fft.rfft2(u * wx + v * wy) * dealias
    wh = (wh - dt * nl) / (1 + dt * nu * k2)
    w2 = jnp.fft.irfft2(wh, s=(n, n))
    return w2, 0.5 * jnp.mean(u * u + v * v, axis=(1, 2))
""", "f32[8,512,512], f32[], f32[]"),
    ("rbm_gibbs_cd5_free_energy_fori", "physics", """
def f(w, bv, bh, v0, us):
    def free_energy(v):
        return -v @ bv - jnp.sum(jax.nn.softplus(v @ w + bh), axis=1)
    def gibbs(i, v):
        ph = jax.nn.sigmoid(v @ w + bh)
        hs = (us[i, 0] < ph).astype(jnp.float32)
        pv = jax.nn.sigmoid(hs @ w.T + bv)
        return (us[i, 1, :, :v.shape[1]] < pv).astype(jnp.float32)
    vk = lax.stop_gradient(lax.fori_loop(0, 5, gibbs, v0))
    return jnp.mean(free_energy(v0)) - jnp.mean(free_energy(vk))
""", "f32[784,4096], f32[784], f32[4096], f32[2048,784], f32[5,2,2048,4096]"),
    # -- finance -------------------------------------------------------------------------------------------
    ("black_scholes_greeks_grid_vmap_grad", "finance", """
def f(spots, strikes, vol, r, t):
    def call(s, k):
        d1 = (jnp.log(s / k) + (r + 0.5 * vol ** 2) * t) / (vol * jnp.sqrt(t))
        d2 = d1 - vol * jnp.sqrt(t)
        n = jax.scipy.stats.norm.cdf
        return s * n(d1) - k * jnp.exp(-r * t) * n(d2)
    ss = jnp.broadcast_to(spots[:, None], (spots.shape[0], strikes.shape[0])).reshape(-1)
    kk = jnp.broadcast_to(strikes[None, :], (spots.shape[0], strikes.shape[0])).reshape(-1)
    price = jax.vmap(call)(ss, kk)
    delta = jax.vmap(jax.grad(call))(ss, kk)
    gamma = jax.vmap(jax.grad(jax.grad(call)))(ss, kk)
    return jnp.sum(price), jnp.max(gamma), jnp.mean(delta)
""", "f32[2048], f32[2048], f32[], f32[], f32[]"),
    ("longstaff_schwartz_american_put_backward", "finance", """
def f(z, s0, k, r, sigma, dt):
    inc = (r - 0.5 * sigma ** 2) * dt + sigma * jnp.sqrt(dt) * z
    paths = s0 * jnp.exp(jnp.cumsum(inc, axis=1))
    disc = jnp.exp(-r * dt)
    def step(cash, s):
        itm = k - s > 0
        x = s / k
        basis = jnp.stack([jnp.ones_like(x), x, x * x], 1) * itm[:, None]
        coef = jnp.linalg.solve(basis.T @ basis + 1e-6 * jnp.eye(3), basis.T @ (disc * cash))
        cont = basis @ coef
        ex = jnp.maximum(k - s, 0.0)
        cash = jnp.where(itm & (ex > cont), ex, disc * cash)
        return cash, None
    last = jnp.maximum(k - paths[:, -1], 0.0)
    cash, _ = lax.scan(step, last, paths[:, :-1].T, reverse=True)
    return disc * jnp.mean(cash)
""", "f32[65536,64], f32[], f32[], f32[], f32[], f32[]"),
    # -- time series, graphs, statistics --------------------------------------------------------------------
    ("soft_dtw_cdist_nested_scan", "timeseries", """
def f(x, y, gamma):
    d = jnp.sum((x[:, :, None, :] - y[:, None, :, :]) ** 2, axis=-1)
    def one(dm):
        m = dm.shape[1]
        def row(carry, drow):
            prev, corner = carry
            def col(left, inp):
                diag, up, dij = inp
                v = dij - gamma * jax.nn.logsumexp(-jnp.stack([diag, up, left]) / gamma)
                return v, v
            diags = jnp.concatenate([corner[None], prev[:-1]])
            _, cur = lax.scan(col, jnp.array(1e10), (diags, prev, drow))
            return (cur, jnp.array(1e10)), None
        (last, _), _ = lax.scan(row, (jnp.full((m,), 1e10), jnp.array(0.0)), dm)
        return last[-1]
    return jnp.mean(jax.vmap(one)(d))
""", "f32[64,256,32], f32[64,256,32], f32[]"),
    ("graphsage_sampled_neighbour_mean_l2norm", "graph", """
def f(feats, nbr, nodes, w_self, w_nbr):
    h_n = jnp.mean(feats[nbr], axis=1)
    h = jnp.concatenate([feats[nodes] @ w_self, h_n @ w_nbr], axis=-1)
    h = jax.nn.relu(h)
    return h / jnp.maximum(jnp.linalg.norm(h, axis=-1, keepdims=True), 1e-12)
""", "f32[262144,256], i32[16384,25], i32[16384], f32[256,256], f32[256,256]"),
    ("node2vec_skipgram_negative_sampling", "graph", """
def f(emb, ctx, walks, negs):
    c = emb[walks[:, :-1]]
    o = ctx[walks[:, 1:]]
    n = ctx[negs]
    pos = jax.nn.log_sigmoid(jnp.sum(c * o, axis=-1))
    neg = jnp.sum(jax.nn.log_sigmoid(-jnp.einsum("bld,blkd->blk", c, n)), axis=-1)
    return -jnp.mean(pos + neg)
""", "f32[262144,128], f32[262144,128], i32[4096,41], i32[4096,40,5]"),
    ("energy_distance_two_sample_odd", "statistics", """
def f(x, y):
    def pd(a, b):
        d2 = jnp.sum(a * a, 1)[:, None] + jnp.sum(b * b, 1)[None, :] - 2 * a @ b.T
        return jnp.sqrt(jnp.maximum(d2, 0.0))
    return 2 * jnp.mean(pd(x, y)) - jnp.mean(pd(x, x)) - jnp.mean(pd(y, y))
""", "f32[2999,64], f32[3001,64]"),
    ("bayesian_linreg_posterior_predictive_var", "statistics", """
def f(phi, t, phi_test, alpha, beta):
    a = alpha * jnp.eye(phi.shape[1]) + beta * phi.T @ phi
    s_n = jnp.linalg.inv(a)
    m_n = beta * s_n @ (phi.T @ t)
    mean = phi_test @ m_n
    var = 1.0 / beta + jnp.sum((phi_test @ s_n) * phi_test, axis=1)
    return mean, var
""", "f32[65536,512], f32[65536], f32[65536,512], f32[], f32[]"),
    ("nmf_multiplicative_update_frobenius_odd", "statistics", """
def f(v, w, h):
    h = h * (w.T @ v) / (w.T @ w @ h + 1e-9)
    w = w * (v @ h.T) / (w @ (h @ h.T) + 1e-9)
    r = v - w @ h
    return w, h, jnp.sqrt(jnp.sum(r * r))
""", "f32[3001,999], f32[3001,64], f32[64,999]"),
    ("umap_edge_cross_entropy_negatives", "statistics", """
def f(y, heads, tails, negs, a, b):
    def q(d2):
        return 1.0 / (1.0 + a * d2 ** b)
    yh = y[heads]
    d_pos = jnp.sum((yh - y[tails]) ** 2, axis=-1)
    d_neg = jnp.sum((yh[:, None, :] - y[negs]) ** 2, axis=-1)
    att = -jnp.log(jnp.clip(q(d_pos), 1e-4, 1.0))
    rep = -jnp.sum(jnp.log(jnp.clip(1.0 - q(d_neg), 1e-4, 1.0)), axis=1)
    return jnp.mean(att + rep)
""", "f32[65536,2], i32[1048576], i32[1048576], i32[1048576,5], f32[], f32[]"),
    ("batched_procrustes_svd_rmsd_tiny", "statistics", """
def f(a, b):
    ac = a - jnp.mean(a, axis=1, keepdims=True)
    bc = b - jnp.mean(b, axis=1, keepdims=True)
    h = jnp.einsum("nki,nkj->nij", ac, bc)
    u, _, vt = jnp.linalg.svd(h)
    d = jnp.sign(jnp.linalg.det(jnp.einsum("nij,njk->nik", u, vt)))
    u = u.at[:, :, 2].multiply(d[:, None])
    r = jnp.einsum("nij,njk->nik", u, vt)
    al = jnp.einsum("nki,nij->nkj", ac, r)
    return jnp.sqrt(jnp.mean(jnp.sum((al - bc) ** 2, axis=-1), axis=1))
""", "f32[4096,64,3], f32[4096,64,3]"),
    # -- control and reinforcement learning ------------------------------------------------------------------
    ("mppi_rollout_scan_softmin_weights", "control", """
def f(x0, u_nom, noise, lam):
    def dyn(x, u):
        p, v = x[..., :2], x[..., 2:]
        v = 0.98 * v + 0.05 * u
        return jnp.concatenate([p + 0.05 * v, v], -1)
    def step(x, un):
        u = u_nom[None, un[1]] + un[0]
        x = dyn(x, u)
        c = jnp.sum(x[..., :2] ** 2, -1) + 0.01 * jnp.sum(u * u, -1)
        return x, c
    xs0 = jnp.broadcast_to(x0, (noise.shape[1], 4))
    _, costs = lax.scan(step, xs0, (noise, jnp.arange(noise.shape[0])))
    s = jnp.sum(costs, axis=0)
    wts = jax.nn.softmax(-(s - jnp.min(s)) / lam)
    return u_nom + jnp.einsum("k,tkd->td", wts, noise)
""", "f32[4], f32[64,2], f32[64,65536,2], f32[]"),
    ("lqr_riccati_backward_scan_tiny", "control", """
def f(a, b, q, r, x0):
    def back(p, _):
        bp = b.T @ p
        k = jnp.linalg.solve(r + bp @ b, bp @ a)
        p = q + a.T @ p @ (a - b @ k)
        return p, k
    _, ks = lax.scan(back, q, None, length=200, reverse=True)
    def fwd(x, k):
        u = -k @ x
        return a @ x + b @ u, jnp.dot(x, q @ x) + jnp.dot(u, r @ u)
    _, cost = lax.scan(fwd, x0, ks)
    return jnp.sum(cost)
""", "f32[64,64], f32[64,16], f32[64,64], f32[16,16], f32[64]"),
    ("muzero_two_hot_value_transform_ce", "rl", """
def f(logits, target):
    eps = 1e-3
    h = jnp.sign(target) * (jnp.sqrt(jnp.abs(target) + 1) - 1) + eps * target
    h = jnp.clip(h, -300.0, 300.0)
    lo = jnp.floor(h)
    frac = h - lo
    idx = (lo + 300).astype(jnp.int32)
    n = logits.shape[-1]
    two_hot = jax.nn.one_hot(idx, n) * (1 - frac)[:, None] + jax.nn.one_hot(jnp.minimum(idx + 1, n - 1), n) * frac[:, None]
    return -jnp.mean(jnp.sum(two_hot * jax.nn.log_softmax(logits, -1), -1))
""", "f32[65536,601], f32[65536]"),  # noqa: E501
    ("ucb1_bandits_argmax_regret", "rl", """
def f(sums, counts, t, true_means):
    means = sums / jnp.maximum(counts, 1.0)
    bonus = jnp.sqrt(2.0 * jnp.log(t) / jnp.maximum(counts, 1.0))
    ucb = jnp.where(counts > 0, means + bonus, jnp.inf)
    arm = jnp.argmax(ucb, axis=1)
    regret = jnp.max(true_means, axis=1) - jnp.take_along_axis(true_means, arm[:, None], 1)[:, 0]
    return arm, jnp.mean(regret)
""", "f32[16384,1000], f32[16384,1000], f32[], f32[16384,1000]"),
    # -- audio ---------------------------------------------------------------------------------------------
    ("multires_stft_spectral_convergence_loss", "audio", """
def f(x, y):
    total = 0.0
    for n_fft, hop in ((512, 128), (1024, 256), (2048, 512)):
        idx = jnp.arange(0, x.shape[1] - n_fft + 1, hop)[:, None] + jnp.arange(n_fft)[None, :]
        win = jnp.hanning(n_fft)
        sx = jnp.abs(jnp.fft.rfft(x[:, idx] * win, axis=-1)) + 1e-7
        sy = jnp.abs(jnp.fft.rfft(y[:, idx] * win, axis=-1)) + 1e-7
        sc = jnp.sqrt(jnp.sum((sy - sx) ** 2)) / jnp.sqrt(jnp.sum(sy ** 2))
        mag = jnp.mean(jnp.abs(jnp.log(sy) - jnp.log(sx)))
        total = total + sc + mag
    return total / 3
""", "f32[16,65536], f32[16,65536]"),
    ("yin_pitch_fft_autocorr_cmnd_argmin", "audio", """
def f(frames):
    n = frames.shape[1]
    w = n // 2
    spec = jnp.fft.rfft(frames, n=2 * n, axis=1)
    ac = jnp.fft.irfft(spec * jnp.conj(spec), n=2 * n, axis=1)[:, :w]
    e = jnp.cumsum(frames * frames, axis=1)
    energy0 = e[:, w - 1:w]
    shifted = jnp.stack([e[:, t + w - 1] - e[:, t - 1] if t > 0 else e[:, w - 1] for t in range(0, w, 64)], 1)
    d = energy0 + jnp.repeat(shifted, 64, axis=1)[:, :w] - 2 * ac
    cm = d * jnp.arange(w) / jnp.maximum(jnp.cumsum(d, axis=1), 1e-9)
    cm = cm.at[:, 0].set(1.0)
    tau = jnp.argmin(jnp.where(jnp.arange(w) > 20, cm, jnp.inf), axis=1)
    return 16000.0 / jnp.maximum(tau, 1), jnp.min(cm, axis=1)
""", "f32[4096,2048]"),
]


SCRIPT = OutsideFamily("guide_predictor_holdout16", FAMILY, PROGRAMS, __doc__ or "")
__doc__, FILES, programs, main = SCRIPT.usage, SCRIPT.files, SCRIPT.programs, SCRIPT.main

if __name__ == "__main__":
    raise SystemExit(main())
