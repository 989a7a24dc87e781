"""A sixth holdout, wild6: optimizer transforms, layers, metrics, science kernels, probabilistic and
vision code and recurrent sequences none of the earlier families use, scored first against the frozen
predictor.

Written after wild5's post-evaluation rules were merged and frozen, from the shapes of common code in
the wild (written here from the definitions, not copied): optimizer transforms (Lookahead's slow-weight
sync, Adan's three moments, NovoGrad's per-layer second moment, AMSGrad's running maximum on bf16
gradients, adaptive gradient clipping per unit, gradient centralization of a conv kernel, SM3's row and
column accumulators, Adadelta on f16 gradients, Fromage's norm ratio, a vmapped rectified Adam over
stacked layers), layers (a dropout mask with a mean activation, embedding max-pooling, a bf16 embedding
bag with sqrt-n scaling, squeeze-and-excitation, CBAM's channel attention, StyleGAN's pixel norm and
weight demodulation, local response normalization by a window sum, bf16 FiLM, MLP-Mixer's token mixing,
a ViT patch embedding with its LayerNorm, layer scale with stochastic depth, a bf16 instance norm's
scale gradient), metrics (ROC AUC by sort and trapezoids, per-class average precision, mean reciprocal
rank by counting, Matthews' coefficient from a one-hot confusion matrix, Spearman by a double argsort,
bf16 row Pearson, the Inception score, FID's feature covariance, an ensemble's log-mean-exp NLL, f16
precision at k, Cohen's kappa on int8 labels), science kernels (an Ewald-like structure factor with
cos/sin of dot products, a Yukawa energy with a cutoff, Buckingham forces by jax.grad, Ising and XY
energies by rolls, a Gray-Scott step, an energy spectrum by rfft2, harmonic bonds by gathers, a
split-step Schrodinger loop, a bf16 virial), probabilistic code (a von Mises likelihood, importance
sampling's effective sample size, a Kalman filter in a scan, Dirichlet-multinomial and Beta likelihoods,
a bf16 Laplace mixture, a vmapped Metropolis acceptance, HMC leapfrog in a fori_loop, SVGD's kernel
update, an f16 log-normal), vision losses (SSIM with a Gaussian window by a depthwise conv, Sobel edges,
a bilinear resize's MSE, a colour transform's mean, bf16 Charbonnier, the focal frequency loss, an
LPIPS-like channel-normalised distance, image-gradient differences, a separable blur by rolls) and
sequences (an Elman RNN with its cross-entropy, an LSTM's last state, beam-search step scores over
bf16 logits, Viterbi by a max-scan, an RWKV-like recurrence, an SSM's long convolution by FFT, a padded
token cross-entropy over a 128,256 bf16 vocabulary, an edit-distance row scan on integers, a vmapped
GRU's weight gradient), in f32, bf16, f16 and integers, with vmap, scans, loops and jax.grad.

**Ground truth** and **scores** as the first holdout's (``guide_predictor_holdout.score_programs``).

"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_holdout import OutsideFamily  # noqa: E402

FAMILY = "wild6"

#: (name, kind, body defining ``f``, argument specs).
PROGRAMS: list[tuple[str, str, str, str]] = [
    # -- optimizer transforms -------------------------------------------------------------
    ("lookahead_sync_distance", "optimizer", """
def f(fast, slow):
    new_slow = slow + 0.5 * (fast - slow)
    return new_slow, jnp.sqrt(jnp.sum(jnp.square(fast - new_slow)))
""", "f32[4096,4096], f32[4096,4096]"),
    ("adan_three_moments", "optimizer", """
def f(g, g_prev, m, v, n, p):
    d = g - g_prev
    m = 0.98 * m + 0.02 * g
    v = 0.92 * v + 0.08 * d
    n = 0.99 * n + 0.01 * jnp.square(g + 0.92 * d)
    u = (m + 0.92 * v) / (jnp.sqrt(n) + 1e-8)
    return p - 1e-3 * u, m, v, n, jnp.sqrt(jnp.sum(u * u))
""", "f32[2048,2048], f32[2048,2048], f32[2048,2048], f32[2048,2048], f32[2048,2048], f32[2048,2048]"),
    ("novograd_layer_second_moment", "optimizer", """
def f(g, m, v, p):
    v = 0.98 * v + 0.02 * jnp.sum(g * g)
    m = 0.95 * m + g / (jnp.sqrt(v) + 1e-8) + 1e-3 * p
    return p - 1e-2 * m, m, v
""", "f32[4096,1024], f32[4096,1024], f32[], f32[4096,1024]"),
    ("amsgrad_max_second_moment", "optimizer", """
def f(g, m, v, vmax, p):
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * g * g
    vmax = jnp.maximum(vmax, v)
    u = m / (jnp.sqrt(vmax) + 1e-8)
    return p - 1e-3 * u, m, v, vmax, jnp.max(jnp.abs(u))
""", "bf16[1024,4096], f32[1024,4096], f32[1024,4096], f32[1024,4096], f32[1024,4096]"),
    ("adaptive_grad_clip_unitwise", "optimizer", """
def f(g, p):
    pn = jnp.maximum(jnp.sqrt(jnp.sum(p * p, axis=0, keepdims=True)), 1e-3)
    gn = jnp.sqrt(jnp.sum(g * g, axis=0, keepdims=True))
    maxn = 0.01 * pn
    return jnp.where(gn > maxn, g * (maxn / jnp.maximum(gn, 1e-6)), g)
""", "f32[4096,2048], f32[4096,2048]"),
    ("gradient_centralization_conv", "optimizer", """
def f(g):
    gc = g - jnp.mean(g, axis=(0, 1, 2), keepdims=True)
    return gc, jnp.sqrt(jnp.sum(gc * gc))
""", "f32[3,3,256,512]"),
    ("sm3_row_col_accumulators", "optimizer", """
def f(g, row, col):
    nu = jnp.minimum(row[:, None], col[None, :]) + g * g
    upd = g * lax.rsqrt(nu + 1e-30)
    return upd, jnp.max(nu, axis=1), jnp.max(nu, axis=0)
""", "f32[8192,1024], f32[8192], f32[1024]"),
    ("adadelta_step", "optimizer", """
def f(g, eg, ed, p):
    eg = 0.9 * eg + 0.1 * g * g
    d = jnp.sqrt(ed + 1e-6) / jnp.sqrt(eg + 1e-6) * g
    ed = 0.9 * ed + 0.1 * d * d
    return p - d, eg, ed, jnp.sqrt(jnp.mean(d * d))
""", "f16[2048,2048], f32[2048,2048], f32[2048,2048], f32[2048,2048]"),
    ("fromage_norm_ratio", "optimizer", """
def f(g, p):
    pn = jnp.linalg.norm(p)
    gn = jnp.linalg.norm(g)
    p = p - 0.01 * g * pn / gn
    return p / jnp.sqrt(1.0 + 0.01 ** 2)
""", "f32[3000,3000], f32[3000,3000]"),
    ("radam_rectified_tree_vmap", "optimizer", """
def f(g, m, v):
    def one(g, m, v):
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        return m / (jnp.sqrt(v) + 1e-8) * 0.8, jnp.sum(m * m)
    return jax.vmap(one)(g, m, v)
""", "f32[24,1024,1024], f32[24,1024,1024], f32[24,1024,1024]"),
    # -- layers ---------------------------------------------------------------------------
    ("dropout_mask_mean_activation", "layer", """
def f(x, u):
    keep = u > 0.1
    y = jnp.where(keep, x / 0.9, 0.0)
    return y, jnp.mean(jax.nn.relu(y), axis=0)
""", "f32[8192,1024], f32[8192,1024]"),
    ("embedding_max_pool", "layer", """
def f(table, ids):
    return jnp.max(table[ids], axis=1)
""", "f32[32000,256], i32[512,128]"),
    ("embedding_bag_bf16_sqrtn", "layer", """
def f(table, ids, mask):
    e = table[ids].astype(jnp.float32) * mask[..., None]
    return jnp.sum(e, axis=1) / jnp.sqrt(jnp.sum(mask, axis=1, keepdims=True) + 1e-6)
""", "bf16[100000,128], i32[1024,64], f32[1024,64]"),
    ("squeeze_excite_block", "layer", """
def f(x, w1, w2):
    s = jnp.mean(x, axis=(1, 2))
    e = jax.nn.sigmoid(jax.nn.relu(s @ w1) @ w2)
    return x * e[:, None, None, :]
""", "f32[32,56,56,256], f32[256,16], f32[16,256]"),
    ("cbam_channel_attention", "layer", """
def f(x, w1, w2):
    mlp = lambda z: jax.nn.relu(z @ w1) @ w2
    a = jax.nn.sigmoid(mlp(jnp.mean(x, axis=(1, 2))) + mlp(jnp.max(x, axis=(1, 2))))
    y = x * a[:, None, None, :]
    return jnp.concatenate([jnp.mean(y, -1, keepdims=True), jnp.max(y, -1, keepdims=True)], -1)
""", "f32[16,64,64,128], f32[128,8], f32[8,128]"),
    ("pixel_norm_stylegan", "layer", """
def f(x):
    return x * lax.rsqrt(jnp.mean(x * x, axis=1, keepdims=True) + 1e-8)
""", "f32[32,512,32,32]"),
    ("modulated_conv_demod", "layer", """
def f(w, style):
    wm = w[None] * style[:, None, None, :, None]
    d = lax.rsqrt(jnp.sum(wm * wm, axis=(1, 2, 3), keepdims=True) + 1e-8)
    return wm * d
""", "f32[3,3,512,512], f32[16,512]"),
    ("local_response_norm", "layer", """
def f(x):
    sq = jnp.square(x)
    s = lax.reduce_window(sq, 0.0, lax.add, (1, 1, 1, 5), (1, 1, 1, 1), 'SAME')
    return jnp.mean(x / (2.0 + 1e-4 * s) ** 0.75, axis=(1, 2))
""", "f32[64,27,27,256]"),
    ("film_layer_bf16", "layer", """
def f(x, cond, wg, wb):
    gamma = (cond @ wg).astype(jnp.float32)
    beta = (cond @ wb).astype(jnp.float32)
    h = x.astype(jnp.float32) * (1 + gamma[:, None, :]) + beta[:, None, :]
    return jnp.mean(jax.nn.gelu(h), axis=1)
""", "bf16[64,1024,512], bf16[64,256], bf16[256,512], bf16[256,512]"),
    ("mlp_mixer_token_mixing", "layer", """
def f(x, w1, w2):
    y = jnp.swapaxes(x, 1, 2)
    y = jax.nn.gelu(y @ w1) @ w2
    h = x + jnp.swapaxes(y, 1, 2)
    return jnp.mean(h, axis=1)
""", "f32[64,196,768], f32[196,384], f32[384,196]"),
    ("patch_embed_layernorm", "layer", """
def f(img, w):
    b, hh, ww, c = img.shape
    p = img.reshape(b, hh // 16, 16, ww // 16, 16, c).transpose(0, 1, 3, 2, 4, 5).reshape(b, -1, 16 * 16 * c)
    e = p @ w
    mu = jnp.mean(e, -1, keepdims=True)
    return (e - mu) * lax.rsqrt(jnp.mean(jnp.square(e - mu), -1, keepdims=True) + 1e-6)
""", "f32[32,224,224,3], f32[768,768]"),
    ("layer_scale_stochastic_depth", "layer", """
def f(x, h, gamma, keep):
    y = x + (keep[:, None, None] / 0.9) * gamma * h
    return jnp.sum(jnp.square(y), axis=-1)
""", "f32[128,197,384], f32[128,197,384], f32[384], f32[128]"),
    ("instance_norm_bf16_nchw_grad", "layer", """
def f(x, s):
    def loss(s):
        xf = x.astype(jnp.float32)
        mu = jnp.mean(xf, axis=(2, 3), keepdims=True)
        var = jnp.var(xf, axis=(2, 3), keepdims=True)
        return jnp.sum(jnp.tanh((xf - mu) * lax.rsqrt(var + 1e-5) * s[None, :, None, None]))
    return jax.grad(loss)(s)
""", "bf16[16,128,128,128], f32[128]"),
    # -- metrics --------------------------------------------------------------------------
    ("roc_auc_sort_trapezoid", "metric", """
def f(scores, labels):
    order = jnp.argsort(-scores)
    y = labels[order]
    tps = jnp.cumsum(y)
    fps = jnp.cumsum(1.0 - y)
    tpr = tps / tps[-1]
    fpr = fps / fps[-1]
    return jnp.sum((fpr[1:] - fpr[:-1]) * (tpr[1:] + tpr[:-1]) / 2)
""", "f32[1000000], f32[1000000]"),
    ("average_precision_per_class", "metric", """
def f(scores, labels):
    order = jnp.argsort(-scores, axis=0)
    y = jnp.take_along_axis(labels, order, axis=0)
    prec = jnp.cumsum(y, 0) / jnp.arange(1, y.shape[0] + 1)[:, None]
    return jnp.sum(prec * y, 0) / jnp.maximum(jnp.sum(y, 0), 1.0)
""", "f32[50000,80], f32[50000,80]"),
    ("mean_reciprocal_rank_counts", "metric", """
def f(scores, target):
    t = jnp.take_along_axis(scores, target[:, None], 1)
    rank = 1 + jnp.sum(scores > t, axis=1)
    return jnp.mean(1.0 / rank)
""", "f32[4096,50000], i32[4096]"),
    ("matthews_from_onehot_confusion", "metric", """
def f(pred, y):
    c = jax.nn.one_hot(y, 10).T @ jax.nn.one_hot(pred, 10)
    t = jnp.sum(c, 1)
    p = jnp.sum(c, 0)
    n = jnp.sum(c)
    cov = jnp.trace(c) * n - jnp.dot(t, p)
    return cov / jnp.sqrt((n * n - jnp.dot(p, p)) * (n * n - jnp.dot(t, t)))
""", "i32[1048576], i32[1048576]"),
    ("spearman_double_argsort", "metric", """
def f(a, b):
    ra = jnp.argsort(jnp.argsort(a, -1), -1).astype(jnp.float32)
    rb = jnp.argsort(jnp.argsort(b, -1), -1).astype(jnp.float32)
    n = float(a.shape[-1])
    return 1 - 6 * jnp.sum(jnp.square(ra - rb), -1) / (n * (n * n - 1))
""", "f32[256,4096], f32[256,4096]"),
    ("pearson_rows_bf16", "metric", """
def f(a, b):
    a = a.astype(jnp.float32)
    b = b.astype(jnp.float32)
    a = a - jnp.mean(a, -1, keepdims=True)
    b = b - jnp.mean(b, -1, keepdims=True)
    return jnp.sum(a * b, -1) / jnp.sqrt(jnp.sum(a * a, -1) * jnp.sum(b * b, -1))
""", "bf16[8192,2048], bf16[8192,2048]"),
    ("inception_score", "metric", """
def f(logits):
    p = jax.nn.softmax(logits, -1)
    py = jnp.mean(p, 0)
    kl = jnp.sum(p * (jnp.log(p + 1e-12) - jnp.log(py + 1e-12)), -1)
    return jnp.exp(jnp.mean(kl))
""", "f32[50000,1008]"),
    ("fid_feature_covariance", "metric", """
def f(feats):
    mu = jnp.mean(feats, 0)
    c = feats - mu
    return mu, c.T @ c / (feats.shape[0] - 1)
""", "f32[10000,2048]"),
    ("ensemble_nll_logmeanexp", "metric", """
def f(logits, labels):
    lp = jax.nn.log_softmax(logits, -1)
    picked = jnp.take_along_axis(lp, labels[None, :, None], -1)[..., 0]
    return -jnp.mean(jax.nn.logsumexp(picked, axis=0) - jnp.log(logits.shape[0]))
""", "f32[8,4096,1000], i32[4096]"),
    ("precision_at_k_f16", "metric", """
def f(scores, relevant):
    _, idx = lax.top_k(scores.astype(jnp.float32), 20)
    hits = jnp.take_along_axis(relevant, idx, 1)
    return jnp.mean(jnp.sum(hits, 1) / 20.0)
""", "f16[2048,30000], f32[2048,30000]"),
    ("cohen_kappa_int8", "metric", """
def f(a, b):
    ca = jnp.sum(jax.nn.one_hot(a, 5, dtype=jnp.int32), 0)
    cb = jnp.sum(jax.nn.one_hot(b, 5, dtype=jnp.int32), 0)
    n = float(a.shape[0])
    po = jnp.mean(a == b)
    pe = jnp.sum(ca.astype(jnp.float32) * cb) / (n * n)
    return (po - pe) / (1 - pe)
""", "i8[2000000], i8[2000000]"),
    # -- physics and science --------------------------------------------------------------
    ("structure_factor_ewald", "physics", """
def f(r, k, q):
    phase = r @ k.T
    re = jnp.sum(q[:, None] * jnp.cos(phase), 0)
    im = jnp.sum(q[:, None] * jnp.sin(phase), 0)
    k2 = jnp.sum(k * k, -1)
    return jnp.sum(jnp.exp(-k2 / 4.0) / k2 * (re * re + im * im))
""", "f32[16384,3], f32[2048,3], f32[16384]"),
    ("yukawa_cutoff_energy", "physics", """
def f(r):
    d = jnp.sqrt(jnp.sum(jnp.square(r[:, None, :] - r[None, :, :]), -1) + 1e-12)
    e = jnp.where((d < 2.5) & (d > 1e-6), jnp.exp(-0.5 * d) / d, 0.0)
    return 0.5 * jnp.sum(e)
""", "f32[4096,3]"),
    ("buckingham_forces_grad", "physics", """
def f(r):
    def energy(r):
        d = jnp.sqrt(jnp.sum(jnp.square(r[:, None, :] - r[None, :, :]), -1) + jnp.eye(r.shape[0]))
        return jnp.sum(1000.0 * jnp.exp(-d / 0.3) - 10.0 / d ** 6)
    return -jax.grad(energy)(r)
""", "f32[2048,3]"),
    ("ising_energy_roll", "physics", """
def f(s):
    return -jnp.sum(s * (jnp.roll(s, 1, 1) + jnp.roll(s, 1, 2)), axis=(1, 2))
""", "f32[64,1024,1024]"),
    ("xy_model_cos_roll", "physics", """
def f(theta):
    e = jnp.cos(theta - jnp.roll(theta, 1, 0)) + jnp.cos(theta - jnp.roll(theta, 1, 1))
    return -jnp.mean(e)
""", "f32[4096,4096]"),
    ("gray_scott_step_mass", "physics", """
def f(u, v):
    lap = lambda a: jnp.roll(a, 1, 0) + jnp.roll(a, -1, 0) + jnp.roll(a, 1, 1) + jnp.roll(a, -1, 1) - 4 * a
    uvv = u * v * v
    u2 = u + 0.16 * lap(u) - uvv + 0.035 * (1 - u)
    v2 = v + 0.08 * lap(v) + uvv - 0.095 * v
    return u2, v2, jnp.sum(v2)
""", "f32[2048,2048], f32[2048,2048]"),
    ("energy_spectrum_rfft2", "physics", """
def f(w):
    p = jnp.abs(jnp.fft.rfft2(w)) ** 2
    return jnp.sum(p, axis=0)
""", "f32[2048,2048]"),
    ("harmonic_bonds_gather", "physics", """
def f(r, bonds, r0):
    d = jnp.linalg.norm(r[bonds[:, 0]] - r[bonds[:, 1]], axis=-1)
    return 0.5 * 100.0 * jnp.sum(jnp.square(d - r0))
""", "f32[100000,3], i32[400000,2], f32[400000]"),
    ("split_step_schrodinger_fori", "physics", """
def f(psi_re, psi_im, v):
    psi = psi_re + 1j * psi_im
    k2 = jnp.square(jnp.fft.fftfreq(psi.shape[0]) * 2 * jnp.pi)
    def body(_, p):
        p = p * jnp.exp(-0.5j * v * 0.01)
        p = jnp.fft.ifft(jnp.fft.fft(p) * jnp.exp(-0.5j * k2 * 0.01))
        return p * jnp.exp(-0.5j * v * 0.01)
    psi = lax.fori_loop(0, 20, body, psi)
    return jnp.sum(jnp.abs(psi) ** 2)
""", "f32[65536], f32[65536], f32[65536]"),
    ("md_virial_pressure_bf16", "physics", """
def f(r, f_):
    rf = r.astype(jnp.float32) * f_.astype(jnp.float32)
    return jnp.sum(rf, axis=(1, 2)) / 3.0
""", "bf16[256,8192,3], bf16[256,8192,3]"),
    # -- probabilistic --------------------------------------------------------------------
    ("von_mises_loglik", "probabilistic", """
def f(x, mu, kappa):
    return jnp.sum(kappa * jnp.cos(x - mu) - jnp.log(2 * jnp.pi * jax.scipy.special.i0e(kappa)) - kappa, -1)
""", "f32[4096,1024], f32[4096,1024], f32[4096,1024]"),
    ("importance_ess", "probabilistic", """
def f(logp, logq):
    lw = logp - logq
    w = jnp.exp(lw - jnp.max(lw, -1, keepdims=True))
    return jnp.square(jnp.sum(w, -1)) / jnp.sum(w * w, -1)
""", "f32[256,65536], f32[256,65536]"),
    ("kalman_filter_scan", "probabilistic", """
def f(ys, a, h, q, r):
    def step(carry, y):
        m, p = carry
        m = a @ m
        p = a @ p @ a.T + q
        s = h @ p @ h.T + r
        k = p @ h.T @ jnp.linalg.inv(s)
        resid = y - h @ m
        m = m + k @ resid
        p = p - k @ h @ p
        return (m, p), jnp.sum(resid * jnp.linalg.solve(s, resid))
    (m, p), nis = lax.scan(step, (jnp.zeros(a.shape[0]), jnp.eye(a.shape[0])), ys)
    return jnp.mean(nis)
""", "f32[1000,8], f32[16,16], f32[8,16], f32[16,16], f32[8,8]"),
    ("dirichlet_multinomial_gammaln", "probabilistic", """
def f(counts, alpha):
    n = jnp.sum(counts, -1)
    a0 = jnp.sum(alpha)
    gl = jax.scipy.special.gammaln
    return jnp.sum(gl(a0) - gl(n + a0) + jnp.sum(gl(counts + alpha) - gl(alpha), -1))
""", "f32[8192,1000], f32[1000]"),
    ("beta_loglik_betaln", "probabilistic", """
def f(x, a, b):
    lp = (a - 1) * jnp.log(x) + (b - 1) * jnp.log1p(-x) - jax.scipy.special.betaln(a, b)
    return jnp.mean(lp, 0)
""", "f32[65536,128], f32[128], f32[128]"),
    ("laplace_mixture_lse_bf16", "probabilistic", """
def f(x, loc, scale, logits):
    z = jnp.abs(x.astype(jnp.float32)[:, None] - loc) / scale
    comp = -z - jnp.log(2 * scale) + jax.nn.log_softmax(logits)
    return jnp.sum(jax.nn.logsumexp(comp, -1))
""", "bf16[1048576], f32[32], f32[32], f32[32]"),
    ("metropolis_acceptance_vmap", "probabilistic", """
def f(x, prop, u):
    def logp(z):
        return -0.5 * jnp.sum(z * z) - 0.1 * jnp.sum(z ** 4)
    la = jax.vmap(logp)(prop) - jax.vmap(logp)(x)
    acc = jnp.log(u) < la
    return jnp.where(acc[:, None], prop, x), jnp.mean(acc)
""", "f32[16384,512], f32[16384,512], f32[16384]"),
    ("hmc_leapfrog_fori", "probabilistic", """
def f(q, p, prec):
    U = lambda q: 0.5 * jnp.sum((q @ prec) * q)
    gU = jax.grad(U)
    def body(_, s):
        q, p = s
        p = p - 0.05 * gU(q)
        q = q + 0.1 * p
        p = p - 0.05 * gU(q)
        return q, p
    q2, p2 = lax.fori_loop(0, 10, body, (q, p))
    return U(q2) + 0.5 * jnp.sum(p2 * p2)
""", "f32[1024,512], f32[1024,512], f32[512,512]"),
    ("svgd_rbf_kernel_grad", "probabilistic", """
def f(x, gl):
    d2 = jnp.sum(jnp.square(x[:, None, :] - x[None, :, :]), -1)
    k = jnp.exp(-d2 / 2.0)
    grad_k = -(jnp.sum(k, 1, keepdims=True) * x - k @ x)
    return (k @ gl + grad_k) / x.shape[0]
""", "f32[2048,64], f32[2048,64]"),
    ("lognormal_logpdf_f16", "probabilistic", """
def f(x, mu, sigma):
    lx = jnp.log(x.astype(jnp.float32))
    return jnp.sum(-lx - jnp.log(sigma) - 0.5 * jnp.log(2 * jnp.pi) - 0.5 * jnp.square((lx - mu) / sigma), axis=1)
""", "f16[4096,4096], f32[4096], f32[4096]"),
    # -- vision ---------------------------------------------------------------------------
    ("ssim_gaussian_window_conv", "vision", """
def f(a, b, win):
    def blur(z):
        return lax.conv_general_dilated(z, win, (1, 1), 'VALID', dimension_numbers=('NCHW', 'OIHW', 'NCHW'),
                                        feature_group_count=z.shape[1])
    ma, mb = blur(a), blur(b)
    saa = blur(a * a) - ma * ma
    sbb = blur(b * b) - mb * mb
    sab = blur(a * b) - ma * mb
    s = ((2 * ma * mb + 1e-4) * (2 * sab + 9e-4)) / ((ma * ma + mb * mb + 1e-4) * (saa + sbb + 9e-4))
    return jnp.mean(s, axis=(1, 2, 3))
""", "f32[16,3,256,256], f32[16,3,256,256], f32[3,1,11,11]"),
    ("sobel_edge_magnitude", "vision", """
def f(img, k):
    g = lax.conv_general_dilated(img, k, (1, 1), 'SAME', dimension_numbers=('NHWC', 'HWIO', 'NHWC'))
    return jnp.mean(jnp.sqrt(g[..., 0] ** 2 + g[..., 1] ** 2 + 1e-6), axis=(1, 2))
""", "f32[32,512,512,1], f32[3,3,1,2]"),
    ("resize_bilinear_mse", "vision", """
def f(x, y):
    up = jax.image.resize(x, (x.shape[0], y.shape[1], y.shape[2], x.shape[3]), 'bilinear')
    return jnp.mean(jnp.square(up - y))
""", "f32[16,128,128,3], f32[16,256,256,3]"),
    ("rgb_to_yuv_mean", "vision", """
def f(img, m):
    return jnp.mean(img @ m.T, axis=(1, 2))
""", "f32[64,512,512,3], f32[3,3]"),
    ("charbonnier_bf16", "vision", """
def f(a, b):
    d = a.astype(jnp.float32) - b.astype(jnp.float32)
    return jnp.mean(jnp.sqrt(d * d + 1e-6))
""", "bf16[16,3,720,1280], bf16[16,3,720,1280]"),
    ("focal_frequency_loss", "vision", """
def f(a, b):
    d = jnp.fft.fft2(a) - jnp.fft.fft2(b)
    m = jnp.abs(d)
    w = m / jnp.max(m, axis=(-2, -1), keepdims=True)
    return jnp.mean(lax.stop_gradient(w) * m * m)
""", "f32[16,3,256,256], f32[16,3,256,256]"),
    ("lpips_like_channel_norm", "vision", """
def f(fa, fb, w):
    na = fa / (jnp.sqrt(jnp.sum(fa * fa, -1, keepdims=True)) + 1e-10)
    nb = fb / (jnp.sqrt(jnp.sum(fb * fb, -1, keepdims=True)) + 1e-10)
    return jnp.mean(jnp.square(na - nb) @ w, axis=(1, 2, 3))
""", "f32[32,64,64,256], f32[32,64,64,256], f32[256,1]"),
    ("image_gradient_difference", "vision", """
def f(a, b):
    dxa, dxb = a[:, :, 1:] - a[:, :, :-1], b[:, :, 1:] - b[:, :, :-1]
    dya, dyb = a[:, 1:] - a[:, :-1], b[:, 1:] - b[:, :-1]
    return jnp.mean(jnp.abs(jnp.abs(dxa) - jnp.abs(dxb))) + jnp.mean(jnp.abs(jnp.abs(dya) - jnp.abs(dyb)))
""", "f32[32,512,512,3], f32[32,512,512,3]"),
    ("separable_gaussian_blur_energy", "vision", """
def f(img, k):
    h = sum(jnp.roll(img, i - 3, axis=1) * k[i] for i in range(7))
    v = sum(jnp.roll(h, i - 3, axis=2) * k[i] for i in range(7))
    return jnp.sum(jnp.square(v - img), axis=(1, 2))
""", "f32[32,512,512], f32[7]"),
    # -- sequences ------------------------------------------------------------------------
    ("elman_rnn_scan_ce", "sequence", """
def f(xs, wx, wh, wo, labels):
    def step(h, x):
        h = jnp.tanh(x @ wx + h @ wh)
        return h, h
    _, hs = lax.scan(step, jnp.zeros((xs.shape[1], wh.shape[0])), xs)
    logits = hs @ wo
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits, -1), labels[..., None], -1))
""", "f32[128,64,256], f32[256,512], f32[512,512], f32[512,1000], i32[128,64]"),
    ("lstm_cell_scan_last_norm", "sequence", """
def f(xs, w, u):
    def step(carry, x):
        h, c = carry
        z = x @ w + h @ u
        i, f_, g, o = jnp.split(z, 4, -1)
        c = jax.nn.sigmoid(f_) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), None
    n = u.shape[0]
    (h, c), _ = lax.scan(step, (jnp.zeros((xs.shape[1], n)), jnp.zeros((xs.shape[1], n))), xs)
    return jnp.sum(h * h, -1)
""", "f32[256,128,512], f32[512,4096], f32[1024,4096]"),
    ("beam_step_scores", "sequence", """
def f(logits, beam_scores):
    lp = jax.nn.log_softmax(logits.astype(jnp.float32), -1) + beam_scores[..., None]
    flat = lp.reshape(lp.shape[0], -1)
    return lax.top_k(flat, 8)
""", "bf16[32,8,50257], f32[32,8]"),
    ("viterbi_max_scan", "sequence", """
def f(emis, trans):
    def step(delta, e):
        s = delta[:, :, None] + trans[None]
        return jnp.max(s, 1) + e, jnp.argmax(s, 1)
    delta, bp = lax.scan(step, emis[0], emis[1:])
    return jnp.max(delta, -1), bp
""", "f32[512,64,128], f32[128,128]"),
    ("wkv_linear_recurrence_scan", "sequence", """
def f(k, v, w):
    def step(s, kv):
        kt, vt = kv
        a, b = s
        e = jnp.exp(kt)
        a = jnp.exp(-w) * a + e * vt
        b = jnp.exp(-w) * b + e
        return (a, b), a / b
    z = jnp.zeros(k.shape[1:])
    _, out = lax.scan(step, (z, z), (k, v))
    return jnp.mean(out, 0)
""", "f32[1024,16,1024], f32[1024,16,1024], f32[1024]"),
    ("ssm_fft_long_conv", "sequence", """
def f(u, kern):
    n = u.shape[-1]
    y = jnp.fft.irfft(jnp.fft.rfft(u, 2 * n) * jnp.fft.rfft(kern, 2 * n), 2 * n)[..., :n]
    return jnp.mean(jax.nn.gelu(y), -1)
""", "f32[16,512,4096], f32[512,4096]"),
    ("token_ce_padding_bf16_vocab", "sequence", """
def f(logits, labels):
    lf = logits.astype(jnp.float32)
    mask = labels != 0
    nll = jax.nn.logsumexp(lf, -1) - jnp.take_along_axis(lf, labels[..., None], -1)[..., 0]
    return jnp.sum(jnp.where(mask, nll, 0.0)) / jnp.sum(mask)
""", "bf16[4,2048,128256], i32[4,2048]"),
    ("edit_distance_dp_scan", "sequence", """
def f(a, b):
    n = b.shape[0]
    def row(prev, ai):
        cost = (ai != b).astype(jnp.int32)
        sub = prev[:-1] + cost
        dele = prev[1:] + 1
        cur = jnp.minimum(sub, dele)
        cur = jnp.concatenate([prev[:1] + 1, cur])
        cur = lax.associative_scan(jnp.minimum, cur - jnp.arange(n + 1)) + jnp.arange(n + 1)
        return cur, cur[-1]
    _, last = lax.scan(row, jnp.arange(n + 1), a)
    return last[-1]
""", "i32[512], i32[512]"),
    ("gru_vmap_batch_grad", "sequence", """
def f(w, xs, y):
    def seq_loss(w, x, t):
        def step(h, xt):
            z = jax.nn.sigmoid(xt @ w[0] + h @ w[1])
            r = jax.nn.sigmoid(xt @ w[2] + h @ w[3])
            n = jnp.tanh(xt @ w[4] + (r * h) @ w[5])
            return (1 - z) * n + z * h, None
        h, _ = lax.scan(step, jnp.zeros(w.shape[-1]), x)
        return jnp.sum(jnp.square(h - t))
    return jax.grad(lambda w: jnp.mean(jax.vmap(seq_loss, (None, 0, 0))(w, xs, y)))(w)
""", "f32[6,128,128], f32[64,100,128], f32[64,128]"),
]


SCRIPT = OutsideFamily("guide_predictor_holdout7", FAMILY, PROGRAMS, __doc__ or "")
__doc__, FILES, programs, main = SCRIPT.usage, SCRIPT.files, SCRIPT.programs, SCRIPT.main

if __name__ == "__main__":
    raise SystemExit(main())
