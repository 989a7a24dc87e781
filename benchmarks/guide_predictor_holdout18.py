"""A seventeenth holdout, wild17: an outside review's 49 programs of speech, signal-processing, time-series, tabular,
survival-analysis, optimal-transport, kernel and spline, contrastive, state-space, mixture-of-experts routing,
sparse-attention, robotics, rendering, physics, astronomy, geophysics, Bayesian-inference, ranking, diffusion-sampler,
quantisation, metric, protein, finance, chemistry, graph, embedding and learned-compression code, in idioms the
earlier families do not name, scored first against the predictor frozen at commit 70d46895.

The programs are not this project's: a reviewer from outside, who neither wrote nor read the rules, wrote them
from the definitions of the computations, the way JAX libraries and research code write them, at their usual
shapes: an RNN-T loss by its alpha lattice in nested scans (over time, and over labels within a time step) after
a 4 x 256 x 65 x 1,024 joint log-softmax, GE2E's speaker-centroid softmax with each utterance's own centroid left
out (a tiny table, 256 x 8 x 256), a Conformer convolution module (a GLU, a 31-tap depthwise
``conv_general_dilated``, batch statistics, SiLU) in ``bf16`` under ``jax.checkpoint`` with its
``value_and_grad``; a polyphase filterbank channelizer of ``int8`` ADC samples (four taps by 2,048 channels, a sum
over taps, an ``rfft``), an NLMS echo canceller in a ``scan`` over 8,192 samples of 64 channels with 512 taps,
Autoformer's auto-correlation by ``rfft`` and ``irfft``, a ``top_k`` of 13 delays and their rolled aggregation by
``take_along_axis``; CatBoost-style oblivious trees (``uint8`` quantised features against ``uint8`` borders, leaf
indices by shifted bits summed over depth, 512 trees over 65,536 rows), a soft decision tree's path probabilities
by a product over depth of gathered sigmoids under ``value_and_grad``; Cox's partial likelihood with Breslow risk
sets by a masked 8,192 x 8,192 ``logsumexp`` under ``value_and_grad``, Harrell's C-index by pairwise comparisons
for five models under ``vmap`` at an odd size (6,001, a ``bool`` event mask), DeepHit's likelihood and pairwise
ranking loss from a ``cumsum`` CIF; stochastic semi-discrete optimal transport by c-transform ascent (an
``argmin`` over 8,192 x 1,024 costs in a ``fori_loop``), a KAN layer's B-spline bases by the Cox-de Boor recursion
in a Python loop with its input gradient by ``jax.vjp``, a spectral-mixture kernel GP's log marginal likelihood
(eight components summed over a 2,000 x 2,000 table, a Cholesky); NNCLR's nearest neighbour from a ``bf16``
support set of 98,304 before InfoNCE, MoCHi's hard-negative mixing from an ``f16`` queue by ``top_k``; Mamba-2's
chunked SSD (a segment-sum decay mask, three-operand einsums, a ``scan`` over chunk states), DeepSeek-V3-style
group-limited top-k routing from ``bf16`` hidden states with an auxiliary load loss by ``one_hot`` counts,
BigBird's block-sparse attention (window, global and random key blocks by gathers) in ``bf16``, NSA-style
compressed-block selection by a ``top_k`` of block importances with gathered key blocks and a causal
``logsumexp``; a 7-DoF Denavit-Hartenberg forward kinematics in a Python loop with sphere velocities by
``jax.jvp`` and the minimum distance to 512 obstacle points (about 1 GB of squared differences), a CHOMP-style
trajectory step (smoothness and softplus obstacle costs over 512 x 64 waypoints x 8 body points x 256 obstacles,
by ``value_and_grad``); NeRF's hierarchical inverse-CDF resampling by ``searchsorted`` under ``vmap`` with
rendering by a ``cumsum`` of optical depth, Plenoxels' trilinear interpolation of a 128^3 density grid and a
``bf16`` degree-2 spherical-harmonic grid over eight unrolled corners, SoftRas's probabilistic silhouette (an
edge-distance table, a ``prod`` over faces) with a soft IoU's ``value_and_grad``; SPH pressure and viscosity
forces with a Wendland kernel over a 48-neighbour list of 262,144 particles, vortex-blob Biot-Savart velocities in
an RK2 step with the pair energy (8,192 blobs), microlensing ray shooting by ``complex64`` deflections (524,288
rays by 128 lenses) binned into a magnification map by a scatter-add, Kirchhoff depth migration by a travel-time
gather from ``f16`` traces; elliptical slice sampling of a GP classifier's latents in a ``while_loop`` under
``vmap`` over 64 chains (a tiny table), LDA's collapsed Gibbs resampling of a million topic assignments by
``jax.random.categorical`` and count scatters, Bayes-by-backprop's local-reparameterisation ELBO with its gradient
(a tiny table); ListMLE's Plackett-Luce likelihood by a triangular-mask ``logsumexp`` at an odd list length (199)
under ``value_and_grad``, ApproxNDCG's sigmoid-smoothed ranks under ``value_and_grad``; a DPM-Solver++(2M)
sampler in a ``fori_loop`` of 20 steps with an MLP denoiser, a score-SDE predictor-corrector sampler with the
Langevin step size from gradient and noise norms in a ``fori_loop``; AWQ's activation-aware scale search over 20
grid points in a Python loop with int4 group-wise quantisation of ``bf16`` weights, QuaRot's Walsh-Hadamard
rotation by reshape butterflies in a Python ``while`` loop before int4 quantisation; a precision-recall curve over
101 thresholds and its average precision for 80 classes under ``vmap`` (``bool`` labels, ``int32`` counts),
panoptic quality from ``uint8`` segment ids by a ``bincount`` of id pairs (a tiny table), a protein contact map's
top-L/5 long-range precision by ``top_k`` (a tiny table, 2 x 511 x 511); CVA's expected positive exposure of 128
swaps over Hull-White short-rate paths from a ``scan``; an electron density from s-type Gaussian orbitals on a
65,536-point grid with the LDA exchange energy, Behler-Parrinello angular symmetry functions over neighbour pairs
for 16 parameter sets, Tanimoto similarities of ``uint8``-packed fingerprints by ``population_count`` (about 1 GB
of ``int32`` counts) with a ``top_k``; an EGNN layer's equivariant coordinate and feature updates by
``segment_sum`` over a million edges; word2vec's hierarchical softmax over gathered ``bf16`` Huffman-path vectors,
Poincare embeddings with 63 negatives and a Riemannian SGD step, and a learned-compression hyperprior's rate by
Gaussian-conditional CDF differences of ``f16`` latents. ``f32``, ``bf16``, ``f16``, ``int8``, ``uint8``,
``int32``, ``uint32`` (random keys), ``bool`` and ``complex64``, odd, power-of-two, tiny (1 to 4 MB) and huge
(about 1 GB) tables. The reviewer recorded ``predict()``'s answers (``guide_predictor_family.predicted``,
calibrated) for every program and target before any compile (main then at 70d46895; the record's sha256 is
``7e69a7b9b2012ffe...``, 49 programs, committed with the programs before the first compile), then compiled them
with this harness for the truth; the first evaluation's answers equal the record's on every one of the 147 rows.
None of the 49 programs is left out: every compile finished within the 90 s the review allowed one (the slowest,
the Poincare embedding step on the TPU, in 63 s, and the Conformer convolution module on the TPU in 48 s). No
program was cut before the record.

**Ground truth** and **scores** as the first holdout's (``guide_predictor_holdout.score_programs``).

"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_holdout import OutsideFamily  # noqa: E402

FAMILY = "wild17"

#: (name, kind, body defining ``f``, argument specs), as the review wrote them.
PROGRAMS: list[tuple[str, str, str, str]] = [
    # -- speech ---------------------------------------------------------------------------------------------
    ("rnnt_loss_alpha_lattice_nested_scans", "speech", """
def f(enc, pred, w_out, labels):
    h = jnp.tanh(enc[:, :, None, :] + pred[:, None, :, :])
    lp = jax.nn.log_softmax(h @ w_out, axis=-1)
    blank = lp[..., 0]
    emit = jnp.take_along_axis(lp[:, :, :-1, :], labels[:, None, :, None], axis=-1)[..., 0]
    b = blank.shape[0]
    def row(alpha_prev, xs):
        bl_prev, em = xs
        a = alpha_prev + bl_prev
        def cell(left, x):
            a_u, e_u = x
            cur = jnp.logaddexp(a_u, left + e_u)
            return cur, cur
        _, rest = lax.scan(cell, a[:, 0], (a[:, 1:].T, em.T))
        return jnp.concatenate([a[:, :1], rest.T], axis=1), None
    alpha0 = jnp.concatenate([jnp.zeros((b, 1)), jnp.cumsum(emit[:, 0, :], axis=1)], axis=1)
    alpha, _ = lax.scan(row, alpha0, (blank[:, :-1].transpose(1, 0, 2), emit[:, 1:].transpose(1, 0, 2)))
    return -jnp.mean(alpha[:, -1] + blank[:, -1, -1])
""", "f32[4,256,320], f32[4,65,320], f32[320,1024], i32[4,64]"),
    ("ge2e_speaker_centroid_softmax_tiny", "speech", """
def f(emb, w, b):
    e = emb / jnp.linalg.norm(emb, axis=-1, keepdims=True)
    n, m, _ = e.shape
    c = jnp.mean(e, axis=1)
    c = c / jnp.linalg.norm(c, axis=-1, keepdims=True)
    c_excl = (jnp.sum(e, axis=1, keepdims=True) - e) / (m - 1)
    c_excl = c_excl / jnp.linalg.norm(c_excl, axis=-1, keepdims=True)
    sim = jnp.einsum("nmd,kd->nmk", e, c)
    self_sim = jnp.sum(e * c_excl, axis=-1)
    sim = jnp.where(jnp.eye(n, dtype=bool)[:, None, :], self_sim[..., None], sim)
    logits = w * sim + b
    return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - (w * self_sim + b))
""", "f32[256,8,256], f32[], f32[]"),
    ("conformer_conv_module_glu_depthwise_bn_checkpoint_grad", "speech", """
def f(x, w_pw1, w_dw, gamma, beta, w_pw2, target):
    def conv_module(x, w_pw1, w_dw, w_pw2):
        c = x.shape[-1]
        h = x @ w_pw1
        h = h[..., :c] * jax.nn.sigmoid(h[..., c:])
        h = lax.conv_general_dilated(h, w_dw, (1,), [(15, 15)], dimension_numbers=("NWC", "WIO", "NWC"),
                                     feature_group_count=c)
        hf = h.astype(jnp.float32)
        mu = jnp.mean(hf, axis=(0, 1))
        var = jnp.mean(jnp.square(hf - mu), axis=(0, 1))
        h = ((hf - mu) * lax.rsqrt(var + 1e-5) * gamma + beta).astype(x.dtype)
        return x + jax.nn.silu(h) @ w_pw2
    blk = jax.checkpoint(conv_module)
    def loss(w_pw1, w_dw, w_pw2):
        out = blk(x, w_pw1, w_dw, w_pw2).astype(jnp.float32)
        return jnp.mean(jnp.square(out - target.astype(jnp.float32)))
    return jax.value_and_grad(loss, argnums=(0, 1, 2))(w_pw1, w_dw, w_pw2)
""", "bf16[16,1024,512], bf16[512,1024], bf16[31,1,512], f32[512], f32[512], bf16[512,512], bf16[16,1024,512]"),
    # -- signal processing ----------------------------------------------------------------------------------
    ("polyphase_filterbank_channelizer_int8_adc", "signal", """
def f(x, proto):
    taps, nchan = proto.shape
    frames = x.reshape(-1, nchan)
    n = frames.shape[0] - taps + 1
    idx = jnp.arange(n)[:, None] + jnp.arange(taps)[None, :]
    seg = frames[idx].astype(jnp.float32)
    y = jnp.sum(seg * proto[None], axis=1)
    power = jnp.abs(jnp.fft.rfft(y, axis=-1)) ** 2
    return jnp.mean(power, axis=0), jnp.max(power)
""", "i8[8394752], f32[4,2048]"),
    ("nlms_echo_canceller_scan", "signal", """
def f(far, mic, w0, mu):
    c, t = far.shape
    taps = w0.shape[1]
    padded = jnp.pad(far, ((0, 0), (taps - 1, 0)))
    def step(w, i):
        xw = lax.dynamic_slice_in_dim(padded, i, taps, axis=1)[:, ::-1]
        d = lax.dynamic_index_in_dim(mic, i, axis=1, keepdims=False)
        e = d - jnp.sum(w * xw, axis=1)
        w = w + mu * e[:, None] * xw / (jnp.sum(xw * xw, axis=1, keepdims=True) + 1e-6)
        return w, e
    w, err = lax.scan(step, w0, jnp.arange(t))
    erle = 10 * jnp.log10(jnp.sum(mic ** 2) / jnp.sum(err ** 2))
    return w, erle
""", "f32[64,8192], f32[64,8192], f32[64,512], f32[]"),
    ("autoformer_autocorrelation_topk_delay_aggregation", "time-series", """
def f(q, k, v):
    b, l, d = q.shape
    corr = jnp.fft.irfft(jnp.fft.rfft(q, axis=1) * jnp.conj(jnp.fft.rfft(k, axis=1)), n=l, axis=1)
    mean_corr = jnp.mean(corr, axis=2)
    w, delay = lax.top_k(mean_corr, 13)
    w = jax.nn.softmax(w, axis=-1)
    idx = (jnp.arange(l)[None, None, :] + delay[:, :, None]) % l
    rolled = jnp.take_along_axis(v[:, None], idx[..., None], axis=2)
    return jnp.sum(rolled * w[:, :, None, None], axis=1)
""", "f32[32,1024,256], f32[32,1024,256], f32[32,1024,256]"),
    # -- tabular --------------------------------------------------------------------------------------------
    ("catboost_oblivious_trees_leaf_index_bits_uint8", "tabular", """
def f(xbin, feat, border, leaf_values, bias):
    t, d = feat.shape
    bits = (xbin[:, feat] > border[None]).astype(jnp.int32)
    leaf = jnp.sum(bits << jnp.arange(d, dtype=jnp.int32), axis=-1)
    vals = leaf_values[jnp.arange(t)[None, :], leaf]
    raw = jnp.sum(vals, axis=1) + bias
    return raw, jax.nn.sigmoid(raw)
""", "u8[65536,128], i32[512,6], u8[512,6], f32[512,64], f32[]"),
    ("soft_decision_tree_path_product_value_and_grad", "tabular", """
def f(x, w, b, leaf, y):
    depth = 8
    n_leaf = 2 ** depth
    leaves = jnp.arange(n_leaf)
    lev = jnp.arange(depth)
    node = (2 ** lev)[None, :] - 1 + (leaves[:, None] >> (depth - lev)[None, :])
    right = (leaves[:, None] >> (depth - 1 - lev)[None, :]) & 1
    def loss(w, b, leaf):
        p = jax.nn.sigmoid(x @ w + b)
        pn = p[:, node]
        path = jnp.prod(jnp.where(right[None] == 1, pn, 1 - pn), axis=-1)
        logits = path @ leaf
        return jnp.mean(jax.nn.logsumexp(logits, -1) - jnp.take_along_axis(logits, y[:, None], 1)[:, 0])
    return jax.value_and_grad(loss, argnums=(0, 1, 2))(w, b, leaf)
""", "f32[8192,512], f32[512,255], f32[255], f32[256,10], i32[8192]"),
    # -- survival analysis ----------------------------------------------------------------------------------
    ("cox_breslow_partial_likelihood_risk_set_value_and_grad", "survival", """
def f(x, beta, time, event):
    def nll(beta):
        eta = x @ beta
        at_risk = time[None, :] >= time[:, None]
        lse = jax.nn.logsumexp(jnp.where(at_risk, eta[None, :], -jnp.inf), axis=1)
        return -jnp.sum(event * (eta - lse)) / jnp.maximum(jnp.sum(event), 1.0)
    return jax.value_and_grad(nll)(beta)
""", "f32[8192,64], f32[64], f32[8192], f32[8192]"),
    ("harrell_c_index_pairwise_vmap_models_odd", "survival", """
def f(risk, time, event):
    def cindex(r):
        comparable = (time[:, None] < time[None, :]) & event[:, None]
        conc = jnp.where(r[:, None] > r[None, :], 1.0, jnp.where(r[:, None] == r[None, :], 0.5, 0.0))
        return jnp.sum(jnp.where(comparable, conc, 0.0)) / jnp.sum(comparable)
    return jax.vmap(cindex)(risk)
""", "f32[5,6001], f32[6001], bool[6001]"),
    ("deephit_pmf_likelihood_ranking_pairs", "survival", """
def f(logits, t_bin, event, sigma):
    pmf = jax.nn.softmax(logits, axis=-1)
    cif = jnp.cumsum(pmf, axis=-1)
    p_t = jnp.take_along_axis(pmf, t_bin[:, None], 1)[:, 0]
    f_ii = jnp.take_along_axis(cif, t_bin[:, None], 1)
    nll = jnp.mean(jnp.where(event, -jnp.log(p_t + 1e-8), -jnp.log(1 - f_ii[:, 0] + 1e-8)))
    f_ji = cif[:, t_bin].T
    pair = event[:, None] & (t_bin[:, None] < t_bin[None, :])
    rank = jnp.sum(jnp.where(pair, jnp.exp(-(f_ii - f_ji) / sigma), 0.0)) / jnp.maximum(jnp.sum(pair), 1)
    return nll + 0.2 * rank
""", "f32[4096,100], i32[4096], bool[4096], f32[]"),
    # -- optimal transport, kernels, splines ----------------------------------------------------------------
    ("semidiscrete_ot_stochastic_c_transform_ascent_fori", "optimal-transport", """
def f(xs, y, nu, g0):
    yy = jnp.sum(y * y, 1)
    def step(i, g):
        x = xs[i]
        c = jnp.sum(x * x, 1)[:, None] - 2 * x @ y.T + yy[None, :]
        j = jnp.argmin(c - g[None, :], axis=1)
        counts = jnp.zeros_like(g).at[j].add(1.0 / x.shape[0])
        return g + 0.5 / jnp.sqrt(i + 1.0) * (nu - counts)
    g = lax.fori_loop(0, 20, step, g0)
    x = xs[-1]
    c = jnp.sum(x * x, 1)[:, None] - 2 * x @ y.T + yy[None, :]
    return g, jnp.mean(jnp.min(c - g[None, :], axis=1)) + jnp.sum(g * nu)
""", "f32[20,8192,16], f32[1024,16], f32[1024], f32[1024]"),
    ("kan_bspline_cox_de_boor_layer_vjp", "kernel", """
def f(x, coef, w_base, grid):
    k = 3
    def layer(x):
        xe = x[:, :, None]
        bases = ((xe >= grid[None, :, :-1]) & (xe < grid[None, :, 1:])).astype(x.dtype)
        for p in range(1, k + 1):
            left = (xe - grid[None, :, :-(p + 1)]) / (grid[None, :, p:-1] - grid[None, :, :-(p + 1)])
            right = (grid[None, :, p + 1:] - xe) / (grid[None, :, p + 1:] - grid[None, :, 1:-p])
            bases = left * bases[:, :, :-1] + right * bases[:, :, 1:]
        y = jnp.einsum("bik,iok->bo", bases, coef) + jax.nn.silu(x) @ w_base
        return y, bases
    (y, bases), pullback = jax.vjp(layer, x)
    gx = pullback((jnp.ones_like(y), jnp.zeros_like(bases)))[0]
    unity = jnp.mean(jnp.abs(jnp.sum(bases, axis=-1) - 1.0))
    return y, gx, unity, jnp.mean(jnp.abs(coef))
""", "f32[4096,256], f32[256,256,11], f32[256,256], f32[256,15]"),
    ("spectral_mixture_kernel_gp_marginal_likelihood", "kernel", """
def f(x, y, w, mu, v, noise):
    tau = x[:, None] - x[None, :]
    comps = (w[:, None, None] * jnp.exp(-2 * jnp.pi ** 2 * tau[None] ** 2 * v[:, None, None])
             * jnp.cos(2 * jnp.pi * tau[None] * mu[:, None, None]))
    k = jnp.sum(comps, axis=0) + noise * jnp.eye(x.shape[0])
    chol = jnp.linalg.cholesky(k)
    alpha = jax.scipy.linalg.cho_solve((chol, True), y)
    return (-0.5 * jnp.dot(y, alpha) - jnp.sum(jnp.log(jnp.diag(chol)))
            - 0.5 * x.shape[0] * jnp.log(2 * jnp.pi))
""", "f32[2000], f32[2000], f32[8], f32[8], f32[8], f32[]"),
    # -- contrastive ----------------------------------------------------------------------------------------
    ("nnclr_support_set_nearest_neighbour_infonce_bf16", "contrastive", """
def f(z1, z2, support, temp):
    def l2n(a):
        a = a.astype(jnp.float32)
        return (a / jnp.linalg.norm(a, axis=-1, keepdims=True)).astype(jnp.bfloat16)
    z1, z2, s = l2n(z1), l2n(z2), l2n(support)
    nn_idx = jnp.argmax(z1 @ s.T, axis=1)
    nn = s[nn_idx]
    logits = (nn @ z2.T).astype(jnp.float32) / temp
    diag = jnp.diagonal(logits)
    loss = jnp.mean(jax.nn.logsumexp(logits, axis=1) - diag)
    return loss, jnp.mean(jnp.sum(nn.astype(jnp.float32) * z1.astype(jnp.float32), -1))
""", "bf16[1024,256], bf16[1024,256], bf16[98304,256], f32[]"),
    ("mochi_hard_negative_mixing_topk_queue_f16", "contrastive", """
def f(q, k, queue, alpha):
    def l2n(a):
        return a / jnp.linalg.norm(a.astype(jnp.float32), axis=-1, keepdims=True).astype(a.dtype)
    q, k = l2n(q), l2n(k)
    l_pos = jnp.sum(q * k, -1, keepdims=True)
    l_neg = q @ queue.T
    _, idx = lax.top_k(l_neg, 1024)
    hard = queue[idx[:, :512]]
    mixed = l2n(alpha * hard[:, 0::2] + (1 - alpha) * hard[:, 1::2])
    l_mix = jnp.einsum("bd,bnd->bn", q, mixed)
    logits = jnp.concatenate([l_pos, l_neg, l_mix], axis=1).astype(jnp.float32) / 0.2
    return jnp.mean(jax.nn.logsumexp(logits, axis=1) - logits[:, 0])
""", "f16[256,128], f16[256,128], f16[65536,128], f16[]"),
    # -- state-space, routing, sparse attention -------------------------------------------------------------
    ("mamba2_ssd_chunked_segsum_decay", "state-space", """
def f(x, a, b, c, target):
    bs, t, h, p = x.shape
    chunk = 128
    nc = t // chunk
    x = x.reshape(bs, nc, chunk, h, p)
    a = a.reshape(bs, nc, chunk, h).transpose(0, 3, 1, 2)
    b = b.reshape(bs, nc, chunk, -1)
    c = c.reshape(bs, nc, chunk, -1)
    a_cum = jnp.cumsum(a, axis=-1)
    seg = a_cum[..., :, None] - a_cum[..., None, :]
    mask = jnp.tril(jnp.ones((chunk, chunk), bool))
    decay = jnp.where(mask, jnp.exp(seg), 0.0)
    scores = jnp.einsum("bcln,bcsn->bcls", c, b)
    y_diag = jnp.einsum("bhcls,bcls,bcshp->bclhp", decay, scores, x)
    decay_states = jnp.exp(a_cum[..., -1:] - a_cum)
    states = jnp.einsum("bcln,bhcl,bclhp->bchpn", b, decay_states, x)
    chunk_decay = jnp.exp(a_cum[..., -1])
    def carry(s, inp):
        st, dec = inp
        return s * dec[..., None, None] + st, s
    _, prev = lax.scan(carry, jnp.zeros_like(states[:, 0]),
                       (states.transpose(1, 0, 2, 3, 4), chunk_decay.transpose(2, 0, 1)))
    y_off = jnp.einsum("bcln,cbhpn,bhcl->bclhp", c, prev, jnp.exp(a_cum))
    y = (y_diag + y_off).reshape(bs, t, h, p)
    return jnp.mean(jnp.square(y - target)), jnp.sqrt(jnp.mean(y * y))
""", "f32[2,4096,16,64], f32[2,4096,16], f32[2,4096,64], f32[2,4096,64], f32[2,4096,16,64]"),
    ("deepseek_group_limited_topk_routing_aux_bf16", "moe", """
def f(h, w_router, bias):
    s = jax.nn.sigmoid((h @ w_router).astype(jnp.float32))
    t, e = s.shape
    sb = s + bias
    g = sb.reshape(t, 8, e // 8)
    gscore = jnp.sum(lax.top_k(g, 2)[0], axis=-1)
    _, gidx = lax.top_k(gscore, 4)
    gmask = jnp.zeros((t, 8), bool).at[jnp.arange(t)[:, None], gidx].set(True)
    masked = jnp.where(jnp.repeat(gmask, e // 8, axis=1), sb, -jnp.inf)
    _, eidx = lax.top_k(masked, 8)
    w = jnp.take_along_axis(s, eidx, axis=1)
    w = w / jnp.sum(w, axis=-1, keepdims=True) * 2.5
    load = jnp.sum(jax.nn.one_hot(eidx, e, dtype=jnp.float32), axis=(0, 1)) / (t * 8)
    imp = jnp.mean(s / jnp.sum(s, axis=-1, keepdims=True), axis=0)
    return eidx, w, e * jnp.sum(load * imp)
""", "bf16[65536,2048], bf16[2048,64], f32[64]"),
    ("bigbird_block_sparse_window_global_random_bf16", "attention", """
def f(q, k, v, rand_blocks):
    b, h, t, d = q.shape
    bs = 64
    nb = t // bs
    qb = q.reshape(b, h, nb, bs, d)
    kb = k.reshape(b, h, nb, bs, d)
    vb = v.reshape(b, h, nb, bs, d)
    i = jnp.arange(nb)
    win = jnp.stack([(i - 1) % nb, i, (i + 1) % nb], axis=1)
    glob = jnp.stack([jnp.zeros_like(i), jnp.full_like(i, nb - 1)], axis=1)
    sel = jnp.concatenate([jnp.broadcast_to(win, (h, nb, 3)), jnp.broadcast_to(glob, (h, nb, 2)), rand_blocks], -1)
    hidx = jnp.arange(h)[:, None, None]
    ksel = kb[:, hidx, sel]
    vsel = vb[:, hidx, sel].reshape(b, h, nb, -1, d)
    s = jnp.einsum("bhnqd,bhnjkd->bhnqjk", qb, ksel, preferred_element_type=jnp.float32) / jnp.sqrt(d)
    p = jax.nn.softmax(s.reshape(b, h, nb, bs, -1), axis=-1)
    o = jnp.einsum("bhnqk,bhnkd->bhnqd", p.astype(v.dtype), vsel)
    return o.reshape(b, h, t, d)
""", "bf16[2,12,4096,64], bf16[2,12,4096,64], bf16[2,12,4096,64], i32[12,64,3]"),
    ("nsa_compressed_block_selection_topk_gather_bf16", "attention", """
def f(q, k, v, w_cmp):
    b, t, h, d = q.shape
    bs = 64
    nb = t // bs
    nsel = 8
    kb = k.reshape(b, nb, bs, d)
    vb = v.reshape(b, nb, bs, d)
    kc = jnp.einsum("bntd,t->bnd", kb, w_cmp)
    sc = jnp.einsum("bthd,bnd->bthn", q, kc, preferred_element_type=jnp.float32)
    causal_blk = (jnp.arange(t)[:, None] // bs) >= jnp.arange(nb)[None, :]
    sc = jnp.where(causal_blk[None, :, None, :], sc, -jnp.inf)
    imp = jnp.sum(jax.nn.softmax(sc, axis=-1), axis=2)
    _, blk = lax.top_k(imp, nsel)
    bidx = jnp.arange(b)[:, None, None]
    ks = kb[bidx, blk]
    vs = vb[bidx, blk].reshape(b, t, nsel * bs, d)
    s = jnp.einsum("bthd,btnkd->bthnk", q, ks, preferred_element_type=jnp.float32) / jnp.sqrt(d)
    pos = blk[..., None] * bs + jnp.arange(bs)
    ok = pos <= jnp.arange(t)[None, :, None, None]
    s = jnp.where(ok[:, :, None], s, -jnp.inf).reshape(b, t, h, nsel * bs)
    lse = jax.nn.logsumexp(s, axis=-1)
    p = jnp.exp(s - lse[..., None]).astype(v.dtype)
    return jnp.einsum("bthk,btkd->bthd", p, vs), lse
""", "bf16[1,2048,16,64], bf16[1,2048,64], bf16[1,2048,64], bf16[64]"),
    # -- robotics -------------------------------------------------------------------------------------------
    ("dh_fk_7dof_jvp_sphere_obstacle_min_distance", "robotics", """
def f(q, qdot, dh, spheres, obstacles):
    def fk(q):
        n = q.shape[0]
        tf = jnp.broadcast_to(jnp.eye(4), (n, 4, 4))
        pts = []
        for i in range(7):
            a, al, d, off = dh[i, 0], dh[i, 1], dh[i, 2], dh[i, 3]
            th = q[:, i] + off
            ct, st = jnp.cos(th), jnp.sin(th)
            ca, sa = jnp.cos(al) * jnp.ones_like(ct), jnp.sin(al) * jnp.ones_like(ct)
            z, o = jnp.zeros_like(ct), jnp.ones_like(ct)
            link = jnp.stack([jnp.stack([ct, -st * ca, st * sa, a * ct], -1),
                              jnp.stack([st, ct * ca, -ct * sa, a * st], -1),
                              jnp.stack([z, sa, ca, d * o], -1),
                              jnp.stack([z, z, z, o], -1)], -2)
            tf = tf @ link
            pts.append(jnp.einsum("nij,sj->nsi", tf[:, :3, :3], spheres[i]) + tf[:, None, :3, 3])
        return jnp.concatenate(pts, axis=1)
    p, vel = jax.jvp(fk, (q,), (qdot,))
    d2 = jnp.sum((p[:, :, None, :] - obstacles[None, None]) ** 2, axis=-1)
    return jnp.sqrt(jnp.min(d2, axis=(1, 2))), jnp.max(jnp.linalg.norm(vel, axis=-1), axis=1)
""", "f32[8192,7], f32[8192,7], f32[7,4], f32[7,3,3], f32[512,3]"),
    ("chomp_trajectory_obstacle_smoothness_grad_step", "robotics", """
def f(xi, offsets, obs_c, obs_r, start, goal):
    def cost(xi):
        full = jnp.concatenate([jnp.broadcast_to(start, (xi.shape[0], 1, 3)), xi,
                                jnp.broadcast_to(goal, (xi.shape[0], 1, 3))], axis=1)
        vel = full[:, 1:] - full[:, :-1]
        smooth = jnp.sum(vel * vel)
        body = xi[:, :, None, :] + offsets[None, None]
        dist = jnp.sqrt(jnp.sum((body[:, :, :, None, :] - obs_c) ** 2, axis=-1) + 1e-9)
        pen = jax.nn.softplus(10.0 * (obs_r + 0.05 - dist)) / 10.0
        speed = jnp.linalg.norm(vel[:, 1:] + vel[:, :-1], axis=-1) * 0.5
        obst = jnp.sum(jnp.sum(pen * pen, axis=(2, 3)) * speed)
        return smooth + 10.0 * obst
    c, g = jax.value_and_grad(cost)(xi)
    return xi - 0.01 * g, c
""", "f32[512,64,3], f32[8,3], f32[256,3], f32[256], f32[3], f32[3]"),
    # -- rendering ------------------------------------------------------------------------------------------
    ("nerf_hierarchical_inverse_cdf_resampling_render", "rendering", """
def f(weights_c, t_c, rays_o, rays_d, u, w1, w2):
    w = weights_c + 1e-5
    pdf = w / jnp.sum(w, axis=-1, keepdims=True)
    cdf = jnp.concatenate([jnp.zeros_like(pdf[:, :1]), jnp.cumsum(pdf, axis=-1)], axis=-1)
    idx = jax.vmap(lambda c, uu: jnp.searchsorted(c, uu, side="right"))(cdf, u)
    below = jnp.clip(idx - 1, 0, cdf.shape[-1] - 1)
    above = jnp.clip(idx, 0, cdf.shape[-1] - 1)
    c0, c1 = jnp.take_along_axis(cdf, below, -1), jnp.take_along_axis(cdf, above, -1)
    t0, t1 = jnp.take_along_axis(t_c, below, -1), jnp.take_along_axis(t_c, above, -1)
    denom = jnp.where(c1 - c0 < 1e-5, 1.0, c1 - c0)
    t_f = t0 + (u - c0) / denom * (t1 - t0)
    t_all = jnp.sort(jnp.concatenate([t_c[:, :-1], t_f], axis=-1), axis=-1)
    pts = rays_o[:, None] + t_all[..., None] * rays_d[:, None]
    out = jax.nn.relu(pts @ w1) @ w2
    sigma = jax.nn.softplus(out[..., 3])
    rgb = jax.nn.sigmoid(out[..., :3])
    delta = jnp.diff(t_all, axis=-1, append=t_all[:, -1:] + 1e10)
    tau = sigma * delta
    trans = jnp.exp(-(jnp.cumsum(tau, axis=-1) - tau))
    wts = (1 - jnp.exp(-tau)) * trans
    return jnp.sum(wts[..., None] * rgb, axis=1), jnp.sum(wts * t_all, axis=-1)
""", "f32[8192,64], f32[8192,65], f32[8192,3], f32[8192,3], f32[8192,128], f32[3,64], f32[64,4]"),
    ("plenoxel_trilinear_sh_degree2_render_bf16_grid", "rendering", """
def f(density, sh, rays_o, rays_d, t):
    g = density.shape[0]
    r, s = rays_o.shape[0], t.shape[0]
    pts = rays_o[:, None] + t[None, :, None] * rays_d[:, None]
    xg = jnp.clip(pts * (g - 1), 0, g - 1 - 1e-3)
    i0 = jnp.floor(xg).astype(jnp.int32)
    fr = xg - i0
    dens = 0.0
    col = 0.0
    for dx in (0, 1):
        for dy in (0, 1):
            for dz in (0, 1):
                wx = fr[..., 0] if dx else 1 - fr[..., 0]
                wy = fr[..., 1] if dy else 1 - fr[..., 1]
                wz = fr[..., 2] if dz else 1 - fr[..., 2]
                wgt = wx * wy * wz
                ix, iy, iz = i0[..., 0] + dx, i0[..., 1] + dy, i0[..., 2] + dz
                dens = dens + wgt * density[ix, iy, iz]
                col = col + wgt[..., None] * sh[ix, iy, iz].astype(jnp.float32)
    d = rays_d / jnp.linalg.norm(rays_d, axis=-1, keepdims=True)
    x, y, z = d[:, 0], d[:, 1], d[:, 2]
    basis = jnp.stack([0.28209479 * jnp.ones_like(x), -0.48860251 * y, 0.48860251 * z, -0.48860251 * x,
                       1.0925484 * x * y, -1.0925484 * y * z, 0.31539157 * (2 * z * z - x * x - y * y),
                       -1.0925484 * x * z, 0.54627421 * (x * x - y * y)], axis=-1)
    rgb = jax.nn.sigmoid(jnp.sum(col.reshape(r, s, 3, 9) * basis[:, None, None, :], axis=-1))
    sigma = jax.nn.relu(dens)
    tau = sigma * (t[1] - t[0])
    trans = jnp.exp(-(jnp.cumsum(tau, axis=1) - tau))
    wts = trans * (1 - jnp.exp(-tau))
    return jnp.sum(wts[..., None] * rgb, axis=1)
""", "f32[128,128,128], bf16[128,128,128,27], f32[16384,3], f32[16384,3], f32[128]"),
    ("softras_silhouette_prod_aggregation_iou_grad", "rendering", """
def f(verts, faces, target, sigma):
    hh = ww = 128
    ys, xs = jnp.meshgrid(jnp.linspace(-1, 1, hh), jnp.linspace(-1, 1, ww), indexing="ij")
    pix = jnp.stack([xs.ravel(), ys.ravel()], axis=-1)
    def render(verts):
        tri = verts[:, faces]
        e = jnp.roll(tri, -1, axis=2) - tri
        pa = pix[None, :, None, None, :] - tri[:, None]
        cross = e[:, None, ..., 0] * pa[..., 1] - e[:, None, ..., 1] * pa[..., 0]
        inside = jnp.all(cross > 0, axis=-1) | jnp.all(cross < 0, axis=-1)
        tproj = jnp.clip(jnp.sum(pa * e[:, None], -1) / jnp.sum(e * e, -1)[:, None], 0.0, 1.0)
        d2 = jnp.min(jnp.sum((pa - tproj[..., None] * e[:, None]) ** 2, axis=-1), axis=-1)
        prob = jax.nn.sigmoid(jnp.where(inside, 1.0, -1.0) * d2 / sigma)
        return (1 - jnp.prod(1 - prob, axis=-1)).reshape(-1, hh, ww)
    def loss(verts):
        s = render(verts)
        inter = jnp.sum(s * target, axis=(1, 2))
        union = jnp.sum(s + target - s * target, axis=(1, 2))
        return jnp.mean(1 - inter / union)
    return jax.value_and_grad(loss)(verts)
""", "f32[4,162,2], i32[320,3], f32[4,128,128], f32[]"),
    # -- physics, geophysics, astronomy ---------------------------------------------------------------------
    ("sph_wendland_pressure_viscosity_neighbour_list", "physics", """
def f(pos, vel, rho, nbr, mass, h):
    n = pos.shape[0]
    valid = nbr < n
    j = jnp.where(valid, nbr, 0)
    rij = pos[:, None, :] - pos[j]
    vij = vel[:, None, :] - vel[j]
    r = jnp.sqrt(jnp.sum(rij * rij, axis=-1) + 1e-12)
    q = r / h
    alpha = 21.0 / (16.0 * jnp.pi * h ** 3)
    dw = jnp.where((q < 2) & valid, -5.0 * alpha / h * q * (1 - q / 2) ** 3, 0.0)
    p = 200.0 * ((rho / 1000.0) ** 7 - 1)
    pterm = p[:, None] / rho[:, None] ** 2 + p[j] / rho[j] ** 2
    vr = jnp.sum(vij * rij, axis=-1)
    visc = -0.01 * h * vr / (r * r + 0.01 * h * h) / (0.5 * (rho[:, None] + rho[j]))
    acc = -jnp.sum((mass * (pterm + visc) * dw / r)[..., None] * rij, axis=1)
    drho = jnp.sum(mass * vr / r * dw, axis=1)
    return acc + jnp.array([0.0, 0.0, -9.81]), drho
""", "f32[262144,3], f32[262144,3], f32[262144], i32[262144,48], f32[], f32[]"),
    ("vortex_blob_biot_savart_rk2_energy", "physics", """
def f(x, gamma, delta):
    def velocity(x):
        dx = x[:, None, 0] - x[None, :, 0]
        dy = x[:, None, 1] - x[None, :, 1]
        r2 = dx * dx + dy * dy + delta ** 2
        u = -jnp.sum(gamma[None, :] * dy / r2, axis=1) / (2 * jnp.pi)
        v = jnp.sum(gamma[None, :] * dx / r2, axis=1) / (2 * jnp.pi)
        return jnp.stack([u, v], axis=-1)
    k1 = velocity(x)
    x1 = x + 0.01 * velocity(x + 0.005 * k1)
    r2 = jnp.sum((x1[:, None, :] - x1[None, :, :]) ** 2, axis=-1) + delta ** 2
    energy = -jnp.sum(gamma[:, None] * gamma[None, :] * jnp.log(r2)) / (8 * jnp.pi)
    return x1, energy
""", "f32[8192,2], f32[8192], f32[]"),
    ("microlensing_ray_shooting_complex_conj_deflection", "astronomy", """
def f(z, lens_pos, lens_m, kappa_s, gamma_s):
    defl = jnp.sum(lens_m[None, :] / jnp.conj(z[:, None] - lens_pos[None, :]), axis=1)
    y = z * (1 - kappa_s) - gamma_s * jnp.conj(z) - defl
    ix = jnp.clip(((y.real + 1.0) * 256).astype(jnp.int32), 0, 511)
    iy = jnp.clip(((y.imag + 1.0) * 256).astype(jnp.int32), 0, 511)
    counts = jnp.zeros(512 * 512, jnp.float32).at[iy * 512 + ix].add(1.0)
    return counts.reshape(512, 512) / jnp.mean(counts)
""", "c64[524288], c64[128], f32[128], f32[], f32[]"),
    ("kirchhoff_migration_traveltime_gather_f16_traces", "geophysics", """
def f(data, src, rec, xs, zs, vel, dt):
    px, pz = jnp.meshgrid(xs, zs, indexing="ij")
    px, pz = px.ravel(), pz.ravel()
    ts = jnp.sqrt((px[:, None] - src[None]) ** 2 + pz[:, None] ** 2) / vel
    tr = jnp.sqrt((px[:, None] - rec[None]) ** 2 + pz[:, None] ** 2) / vel
    it = jnp.clip(jnp.round((ts + tr) / dt).astype(jnp.int32), 0, data.shape[1] - 1)
    amp = data[jnp.arange(data.shape[0])[None, :], it].astype(jnp.float32)
    obliq = pz[:, None] / (ts * vel + 1e-3)
    img = jnp.sum(amp * obliq, axis=1)
    return img.reshape(xs.shape[0], zs.shape[0])
""", "f16[1024,2000], f32[1024], f32[1024], f32[256], f32[256], f32[], f32[]"),
    # -- Bayesian inference ---------------------------------------------------------------------------------
    ("elliptical_slice_sampling_gp_classifier_while_vmap_tiny", "bayesian", """
def f(f0, chol, y, key_data):
    keys = jax.random.split(jax.random.wrap_key_data(key_data), f0.shape[0])
    def loglik(fv):
        return jnp.sum(jax.nn.log_sigmoid(y * fv))
    def one(fc, key):
        k1, k2, k3, k4 = jax.random.split(key, 4)
        nu = chol @ jax.random.normal(k1, fc.shape)
        logy = loglik(fc) + jnp.log(jax.random.uniform(k2))
        th = jax.random.uniform(k3, minval=0.0, maxval=2 * jnp.pi)
        fp = fc * jnp.cos(th) + nu * jnp.sin(th)
        def cond(s):
            return loglik(s[3]) <= logy
        def body(s):
            th, lo, hi, _, k = s
            lo = jnp.where(th < 0, th, lo)
            hi = jnp.where(th < 0, hi, th)
            k, sk = jax.random.split(k)
            th = jax.random.uniform(sk, minval=lo, maxval=hi)
            return th, lo, hi, fc * jnp.cos(th) + nu * jnp.sin(th), k
        out = lax.while_loop(cond, body, (th, th - 2 * jnp.pi, th, fp, k4))
        return out[3]
    f1 = jax.vmap(one)(f0, keys)
    return f1, jax.vmap(loglik)(f1)
""", "f32[64,4096], f32[4096,4096], f32[4096], u32[2]"),
    ("lda_collapsed_gibbs_topic_resampling", "bayesian", """
def f(words, docs, z, n_wt, n_dt, n_t, key_data):
    alpha, beta = 0.1, 0.01
    v, k = n_wt.shape
    oh = jax.nn.one_hot(z, k)
    logp = (jnp.log(n_wt[words] - oh + beta) - jnp.log(n_t[None] - oh + v * beta)
            + jnp.log(n_dt[docs] - oh + alpha))
    z_new = jax.random.categorical(jax.random.wrap_key_data(key_data), logp, axis=-1)
    n_wt = n_wt.at[words, z].add(-1.0).at[words, z_new].add(1.0)
    n_dt = n_dt.at[docs, z].add(-1.0).at[docs, z_new].add(1.0)
    return z_new, n_wt, n_dt, jnp.sum(n_dt, axis=0)
""", "i32[1048576], i32[1048576], i32[1048576], f32[50000,128], f32[20000,128], f32[128], u32[2]"),
    ("bayes_by_backprop_local_reparam_elbo_grad_tiny", "bayesian", """
def f(x, y, mu1, rho1, mu2, rho2, eps1, eps2):
    def loss(params):
        mu1, rho1, mu2, rho2 = params
        s1, s2 = jax.nn.softplus(rho1), jax.nn.softplus(rho2)
        m = x @ mu1
        v = (x * x) @ (s1 * s1)
        h = jax.nn.relu(m + jnp.sqrt(v + 1e-8) * eps1)
        logits = h @ mu2 + jnp.sqrt((h * h) @ (s2 * s2) + 1e-8) * eps2
        nll = jnp.mean(jax.nn.logsumexp(logits, -1) - jnp.take_along_axis(logits, y[:, None], 1)[:, 0])
        kl = sum(jnp.sum(-jnp.log(s) + (s * s + mu * mu) / 2 - 0.5) for mu, s in ((mu1, s1), (mu2, s2)))
        return nll + kl / 60000.0
    return jax.value_and_grad(loss)((mu1, rho1, mu2, rho2))
""", "f32[4096,784], i32[4096], f32[784,1200], f32[784,1200], f32[1200,10], f32[1200,10], f32[4096,1200], f32[4096,10]"),  # noqa: E501
    # -- ranking ------------------------------------------------------------------------------------------
    ("listmle_plackett_luce_triangular_mask_grad_odd", "ranking", """
def f(scores, labels, mask):
    order = jnp.argsort(-jnp.where(mask, labels, -jnp.inf), axis=-1)
    m = jnp.take_along_axis(mask, order, axis=-1)
    n = scores.shape[-1]
    tri = jnp.arange(n)[None, :] >= jnp.arange(n)[:, None]
    def loss(scores):
        s = jnp.take_along_axis(jnp.where(mask, scores, -1e9), order, axis=-1)
        lse = jax.nn.logsumexp(jnp.where(tri[None] & m[:, None, :], s[:, None, :], -jnp.inf), axis=-1)
        return jnp.mean(jnp.sum(jnp.where(m, lse - s, 0.0), axis=-1))
    return jax.value_and_grad(loss)(scores)
""", "f32[2048,199], f32[2048,199], bool[2048,199]"),
    ("approx_ndcg_sigmoid_smooth_ranks_value_and_grad", "ranking", """
def f(scores, rel, temp):
    gains = 2.0 ** rel - 1
    ideal = jnp.sum(jnp.sort(gains, axis=-1)[:, ::-1] / jnp.log2(2.0 + jnp.arange(rel.shape[-1])), axis=-1)
    def loss(scores):
        diff = (scores[:, None, :] - scores[:, :, None]) / temp
        ranks = 0.5 + jnp.sum(jax.nn.sigmoid(diff), axis=-1)
        dcg = jnp.sum(gains / jnp.log2(1.0 + ranks), axis=-1)
        return -jnp.mean(dcg / jnp.maximum(ideal, 1e-6))
    return jax.value_and_grad(loss)(scores)
""", "f32[1024,256], i32[1024,256], f32[]"),
    # -- diffusion samplers ---------------------------------------------------------------------------------
    ("dpm_solver_pp_2m_sampler_fori", "diffusion", """
def f(x, w1, w2, t_emb, sigmas):
    def denoise(x, sigma):
        hdn = x / jnp.sqrt(sigma ** 2 + 1)
        mu = jnp.mean(hdn, -1, keepdims=True)
        var = jnp.var(hdn, -1, keepdims=True)
        hdn = (hdn - mu) * lax.rsqrt(var + 1e-5)
        hdn = jax.nn.gelu(hdn @ w1 + jnp.log(sigma) * t_emb)
        return x - sigma * (hdn @ w2)
    def step(i, state):
        x, d_prev = state
        s, s_next, s_prev = sigmas[i], sigmas[i + 1], sigmas[jnp.maximum(i - 1, 0)]
        d = denoise(x, s)
        t, t_next, t_prev = -jnp.log(s), -jnp.log(s_next), -jnp.log(s_prev)
        hstep = t_next - t
        r = (t - t_prev) / hstep
        d_eff = jnp.where(i == 0, d, (1 + 1 / (2 * r)) * d - (1 / (2 * r)) * d_prev)
        return (s_next / s) * x - jnp.expm1(-hstep) * d_eff, d
    x, _ = lax.fori_loop(0, 20, step, (x, jnp.zeros_like(x)))
    return x, jnp.mean(x * x)
""", "f32[16,1024,256], f32[256,1024], f32[1024,256], f32[1024], f32[21]"),
    ("score_sde_predictor_corrector_snr_langevin_fori", "diffusion", """
def f(x, w_dw, w_pw, sigmas, noise):
    def score(x, sigma):
        hdn = lax.conv_general_dilated(x, w_dw, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                       feature_group_count=x.shape[-1])
        return -(jax.nn.silu(hdn) @ w_pw) / sigma
    def body(i, x):
        sigma, sigma_next = sigmas[i], sigmas[i + 1]
        g = score(x, sigma)
        z = noise[i, 0]
        g_norm = jnp.sqrt(jnp.mean(jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=-1)))
        z_norm = jnp.sqrt(jnp.mean(jnp.sum(z.reshape(z.shape[0], -1) ** 2, axis=-1)))
        eps = 2 * (0.16 * z_norm / g_norm) ** 2
        x = x + eps * g + jnp.sqrt(2 * eps) * z
        g = score(x, sigma)
        var = sigma ** 2 - sigma_next ** 2
        return x + var * g + jnp.sqrt(var) * noise[i, 1]
    return lax.fori_loop(0, 10, body, x)
""", "f32[8,64,64,32], f32[3,3,1,32], f32[32,32], f32[11], f32[10,2,8,64,64,32]"),
    # -- quantisation ---------------------------------------------------------------------------------------
    ("awq_activation_aware_scale_grid_search_int4_bf16", "quantization", """
def f(x, w):
    xf, wf = x.astype(jnp.float32), w.astype(jnp.float32)
    y_ref = xf @ wf
    act = jnp.mean(jnp.abs(xf), axis=0)
    errs = []
    for k in range(20):
        s = act ** (k / 20)
        s = s / jnp.sqrt(jnp.max(s) * jnp.min(s))
        ws = wf * s[:, None]
        g = ws.reshape(-1, 128, ws.shape[1])
        mx = jnp.max(g, axis=1, keepdims=True)
        mn = jnp.min(g, axis=1, keepdims=True)
        scale = jnp.maximum(mx - mn, 1e-5) / 15
        zero = jnp.round(-mn / scale)
        q = jnp.clip(jnp.round(g / scale) + zero, 0, 15)
        wq = ((q - zero) * scale).reshape(ws.shape) / s[:, None]
        errs.append(jnp.mean((xf @ wq - y_ref) ** 2))
    errs = jnp.stack(errs)
    return jnp.argmin(errs), jnp.min(errs)
""", "bf16[2048,4096], bf16[4096,4096]"),
    ("quarot_walsh_hadamard_butterflies_int4_error_bf16", "quantization", """
def f(x, w):
    def fwht(a):
        n = a.shape[-1]
        lead = a.shape[:-1]
        hh = 1
        while hh < n:
            a = a.reshape(*lead, n // (2 * hh), 2, hh)
            a = jnp.stack([a[..., 0, :] + a[..., 1, :], a[..., 0, :] - a[..., 1, :]], axis=-2)
            a = a.reshape(*lead, n)
            hh *= 2
        return a / jnp.sqrt(n)
    def quant(a, axis):
        s = jnp.max(jnp.abs(a), axis=axis, keepdims=True) / 7
        return jnp.clip(jnp.round(a / s), -8, 7) * s
    xf, wf = x.astype(jnp.float32), w.astype(jnp.float32)
    xq = quant(fwht(xf), -1)
    wq = quant(fwht(wf.T).T, 0)
    err = jnp.mean((xf @ wf - xq @ wq) ** 2)
    return err, jnp.max(jnp.abs(xf), axis=-1)
""", "bf16[8192,4096], bf16[4096,4096]"),
    # -- metrics --------------------------------------------------------------------------------------------
    ("pr_curve_threshold_grid_average_precision_vmap_classes", "metric", """
def f(scores, labels):
    th = jnp.linspace(0.0, 1.0, 101)
    def ap(s, l):
        pred = s[None, :] >= th[:, None]
        tp = jnp.sum(pred & l[None], axis=1)
        fp = jnp.sum(pred & ~l[None], axis=1)
        prec = tp / jnp.maximum(tp + fp, 1)
        rec = tp / jnp.maximum(jnp.sum(l), 1)
        return -jnp.sum(jnp.diff(rec) * prec[1:])
    aps = jax.vmap(ap)(scores, labels)
    return jnp.mean(aps), aps
""", "f32[80,16384], bool[80,16384]"),
    ("panoptic_quality_pair_bincount_uint8_tiny", "metric", """
def f(pred, gt):
    def one(p, g):
        pair = jnp.bincount(p.astype(jnp.int32).ravel() * 256 + g.astype(jnp.int32).ravel(), length=65536)
        pair = pair.reshape(256, 256).astype(jnp.float32)
        area_p = jnp.sum(pair, axis=1)
        area_g = jnp.sum(pair, axis=0)
        iou = pair / jnp.maximum(area_p[:, None] + area_g[None, :] - pair, 1.0)
        iou = iou.at[0].set(0.0).at[:, 0].set(0.0)
        match = iou > 0.5
        tp = jnp.sum(match)
        fp = jnp.sum((area_p[1:] > 0) & ~jnp.any(match[1:], axis=1))
        fn = jnp.sum((area_g[1:] > 0) & ~jnp.any(match[:, 1:], axis=0))
        return jnp.sum(jnp.where(match, iou, 0.0)) / jnp.maximum(tp + 0.5 * fp + 0.5 * fn, 1.0)
    return jnp.mean(jax.vmap(one)(pred, gt))
""", "u8[8,512,1024], u8[8,512,1024]"),
    ("contact_map_top_l5_long_range_precision_tiny", "protein", """
def f(logits, contacts):
    b, l, _ = logits.shape
    i = jnp.arange(l)
    keep = (jnp.abs(i[:, None] - i[None, :]) >= 24) & (i[:, None] < i[None, :])
    s = jnp.where(keep[None], jax.nn.sigmoid(logits), -1.0).reshape(b, -1)
    _, idx = lax.top_k(s, l // 5)
    hit = jnp.take_along_axis(contacts.reshape(b, -1), idx, axis=1)
    return jnp.mean(hit.astype(jnp.float32), axis=1)
""", "f32[2,511,511], bool[2,511,511]"),
    # -- finance --------------------------------------------------------------------------------------------
    ("cva_expected_positive_exposure_hull_white_swaps", "finance", """
def f(z, fixed_rates, notionals, a, sigma, r0):
    dt = 0.25
    def step(r, zt):
        r = r + a * (0.03 - r) * dt + sigma * jnp.sqrt(dt) * zt
        return r, r
    _, rs = lax.scan(step, jnp.full(z.shape[1], r0), z)
    t = dt * (jnp.arange(z.shape[0]) + 1)
    rem = jnp.maximum(10.0 - t, 0.0)
    k = jnp.arange(1, 41) * dt
    bk = (1 - jnp.exp(-a * k)) / a
    disc = jnp.exp(-bk[None, None, :] * rs[:, :, None])
    alive = k[None, :] <= rem[:, None]
    annuity = jnp.sum(jnp.where(alive[:, None, :], disc, 0.0), axis=-1) * dt
    pm = jnp.exp(-((1 - jnp.exp(-a * rem)) / a)[:, None] * rs)
    mtm = notionals * ((1 - pm)[..., None] - fixed_rates * annuity[..., None])
    epe = jnp.mean(jnp.maximum(mtm, 0.0), axis=1)
    df = jnp.mean(jnp.exp(-jnp.cumsum(rs, axis=0) * dt), axis=1)
    return 0.6 * jnp.sum(epe * df[:, None] * 0.02 * dt, axis=0)
""", "f32[40,16384], f32[128], f32[128], f32[], f32[], f32[]"),
    # -- chemistry, molecules -------------------------------------------------------------------------------
    ("dft_electron_density_gto_grid_lda_exchange", "chemistry", """
def f(grid, weights, centers, exps, coefs, mo):
    d2 = jnp.sum((grid[:, None, :] - centers[None]) ** 2, axis=-1)
    phi = coefs[None] * jnp.exp(-exps[None] * d2)
    psi = phi @ mo
    rho = 2 * jnp.sum(psi * psi, axis=-1)
    return jnp.sum(weights * rho), -0.7386 * jnp.sum(weights * rho ** (4.0 / 3.0))
""", "f32[65536,3], f32[65536], f32[384,3], f32[384], f32[384], f32[384,32]"),
    ("behler_parrinello_angular_g4_symmetry_functions", "chemistry", """
def f(pos, nbr, eta, zeta, lam):
    rc = 6.0
    rij = pos[nbr] - pos[:, None]
    r = jnp.linalg.norm(rij, axis=-1)
    fc = jnp.where(r < rc, 0.5 * (jnp.cos(jnp.pi * r / rc) + 1), 0.0)
    cos = jnp.einsum("nid,njd->nij", rij, rij) / (r[:, :, None] * r[:, None, :] + 1e-9)
    rjk2 = r[:, :, None] ** 2 + r[:, None, :] ** 2 - 2 * r[:, :, None] * r[:, None, :] * cos
    rjk = jnp.sqrt(jnp.maximum(rjk2, 1e-12))
    fjk = jnp.where(rjk < rc, 0.5 * (jnp.cos(jnp.pi * rjk / rc) + 1), 0.0)
    k = nbr.shape[1]
    cut = fc[:, :, None] * fc[:, None, :] * fjk * (1 - jnp.eye(k))
    radial = jnp.exp(-eta[:, None, None, None] * (r[None, :, :, None] ** 2 + r[None, :, None, :] ** 2 + rjk2[None]))
    ang = (1 + lam[:, None, None, None] * cos[None]) ** zeta[:, None, None, None]
    g4 = 2 ** (1 - zeta)[:, None] * jnp.sum(ang * radial * cut[None], axis=(2, 3))
    return g4.T
""", "f32[8192,3], i32[8192,32], f32[16], f32[16], f32[16]"),
    ("tanimoto_fingerprint_popcount_uint8_topk", "chemistry", """
def f(query, db):
    inter = lax.population_count(query[:, None, :] & db[None, :, :])
    c = jnp.sum(inter, axis=-1, dtype=jnp.int32)
    qa = jnp.sum(lax.population_count(query), axis=-1, dtype=jnp.int32)
    da = jnp.sum(lax.population_count(db), axis=-1, dtype=jnp.int32)
    sim = c / (qa[:, None] + da[None, :] - c)
    return lax.top_k(sim, 10)
""", "u8[16,256], u8[65536,256]"),
    ("egnn_equivariant_coordinate_and_feature_update", "graph", """
def f(h, x, senders, receivers, w_e1, w_e2, w_x, w_h1, w_h2):
    n = h.shape[0]
    d = x[receivers] - x[senders]
    r2 = jnp.sum(d * d, axis=-1, keepdims=True)
    m = jax.nn.silu(jnp.concatenate([h[receivers], h[senders], r2], axis=-1) @ w_e1)
    m = jax.nn.silu(m @ w_e2)
    coef = m @ w_x
    deg = jax.ops.segment_sum(jnp.ones_like(r2), receivers, n)
    x_new = x + jax.ops.segment_sum(d * coef, receivers, n) / jnp.maximum(deg, 1.0)
    agg = jax.ops.segment_sum(m, receivers, n)
    h_new = h + jax.nn.silu(jnp.concatenate([h, agg], axis=-1) @ w_h1) @ w_h2
    return h_new, x_new, jnp.mean(jnp.sum(m * m, axis=-1))
""", "f32[65536,64], f32[65536,3], i32[1048576], i32[1048576], f32[129,64], f32[64,64], f32[64,1], f32[128,64], f32[64,64]"),  # noqa: E501
    # -- language, embeddings, compression ------------------------------------------------------------------
    ("hierarchical_softmax_huffman_path_gather_bf16", "nlp", """
def f(h, nodes, codes, path_len, node_vecs):
    v = node_vecs[nodes]
    logits = jnp.sum((v * h[:, None, :]).astype(jnp.float32), axis=-1)
    sign = 1.0 - 2.0 * codes.astype(jnp.float32)
    valid = jnp.arange(nodes.shape[1])[None, :] < path_len[:, None]
    return -jnp.sum(jnp.where(valid, jax.nn.log_sigmoid(sign * logits), 0.0)) / h.shape[0]
""", "bf16[16384,300], i32[16384,24], i8[16384,24], i32[16384], bf16[71290,300]"),
    ("poincare_embedding_negatives_riemannian_sgd", "nlp", """
def f(emb, u_idx, v_idx, neg_idx):
    def loss(emb):
        u, v, negs = emb[u_idx], emb[v_idx], emb[neg_idx]
        cand = jnp.concatenate([v[:, None], negs], axis=1)
        a = u[:, None]
        sq = jnp.sum((a - cand) ** 2, axis=-1)
        na = jnp.sum(a * a, axis=-1)
        nb = jnp.sum(cand * cand, axis=-1)
        d = jnp.arccosh(1 + 2 * sq / ((1 - na) * (1 - nb) + 1e-7))
        return jnp.mean(jax.nn.logsumexp(-d, axis=-1) + d[:, 0])
    l, g = jax.value_and_grad(loss)(emb)
    scale = (1 - jnp.sum(emb * emb, axis=-1, keepdims=True)) ** 2 / 4
    new = emb - 0.1 * scale * g
    nrm = jnp.linalg.norm(new, axis=-1, keepdims=True)
    return l, jnp.where(nrm >= 1, new / nrm * (1 - 1e-5), new)
""", "f32[82115,16], i32[16384], i32[16384], i32[16384,63]"),
    ("balle_hyperprior_gaussian_conditional_rate_f16", "compression", """
def f(y, mu, scale):
    s = jnp.maximum(scale.astype(jnp.float32), 0.11)
    v = jnp.abs(jnp.round(y.astype(jnp.float32) - mu.astype(jnp.float32)))
    def phi(t):
        return 0.5 * jax.scipy.special.erfc(-t / jnp.sqrt(2.0))
    lik = phi((0.5 - v) / s) - phi((-0.5 - v) / s)
    bits = jnp.sum(-jnp.log2(jnp.maximum(lik, 1e-9)), axis=(1, 2, 3))
    return bits / (y.shape[1] * y.shape[2] * 256.0)
""", "f16[16,32,48,320], f16[16,32,48,320], f16[16,32,48,320]"),
]


SCRIPT = OutsideFamily("guide_predictor_holdout18", FAMILY, PROGRAMS, __doc__ or "")
__doc__, FILES, programs, main = SCRIPT.usage, SCRIPT.files, SCRIPT.programs, SCRIPT.main

if __name__ == "__main__":
    raise SystemExit(main())
