"""A seventh holdout, wild7: graph networks, physics, numerics, signal processing, distributions,
attention and normalization variants, self-supervised losses, recommenders, mixtures of experts,
reinforcement learning and losses none of the earlier families use, scored first against the frozen
predictor.

Written after wild6's post-evaluation rules were merged and frozen, from the shapes of common code in
the wild (written here from the definitions, not copied): graph networks (GCN's symmetric degree
normalization by segment sums over 262,144 edges, GIN's sum aggregation with a graph readout, an edge
MLP's messages from concatenated endpoints, GAT's coefficients by a segment max and sum, a readout by
segment max and mean, PageRank's power iteration in a fori_loop), physics (a velocity Verlet step with
Lennard-Jones forces by jax.grad, a Debye-Hueckel screened energy, Morse forces over gathered pairs, a
dipole-dipole energy, an RK2 spring chain in a scan), numerics (a Newton step by jacfwd and
jnp.linalg.solve, power iteration with a Rayleigh quotient, red-black Gauss-Seidel sweeps, batched
log-determinants by Cholesky, trapezoid integration of rows, conjugate gradients in a fori_loop, a
vectorised bisection, a generator's matrix exponential), signal processing (an STFT's log magnitude
from gathered frames, autocorrelation and a 2-D convolution by FFT, a moving average by cumsum, a log
mel spectrogram by a filterbank product, bf16 MFCC statistics, zero crossings and frame energy, an f16
pre-emphasis), distributions (a MultivariateNormalTri log-prob by a triangular solve, Gamma by lgamma,
a diagonal Gaussian mixture, a bf16 categorical entropy over 128,000 classes, an f16 Bernoulli, Weibull
and Cauchy), attention (T5's relative position buckets, bf16 cross-attention with a key padding mask,
sigmoid attention, cosine attention with a clamped logit scale, differential attention, local block
attention by reshape, a checkpointed causal attention's gradient), normalization (batch
renormalization, weight norm of an HWIO conv kernel, AdaIN, a bf16 RMSNorm's weight gradient at 65,536
rows), self-supervised losses (SimSiam, BYOL with its EMA target, Barlow Twins, VICReg, alignment and
uniformity, bf16 SigLIP), recommenders (sampled softmax with a log-q correction, DIN's target
attention, top-100 over 131,072 items with seen items masked, NeuMF, a bf16 WARP-like rank), mixtures
of experts (expert-choice routing by top-k, a bf16 one-hot dispatch by einsums), reinforcement
learning (Retrace in a reverse scan, n-step returns by a convolution, CQL's logsumexp penalty, TD3's
target, AWR's weighted gradient, a vmapped soft Q target) and losses (generalized cross-entropy,
sparsemax by a sort, Taylor softmax over 32,000 classes, a bf16 cross-entropy over 131,072 classes in
chunks of a scan, CORAL's ordinal BCE), in f32, bf16, f16, integers and booleans, with vmap, scans,
loops, jax.checkpoint, jax.grad and jax.value_and_grad.

**Ground truth** and **scores** as the first holdout's (``guide_predictor_holdout.score_programs``).

"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_holdout import OutsideFamily  # noqa: E402

FAMILY = "wild7"

#: (name, kind, body defining ``f``, argument specs).
PROGRAMS: list[tuple[str, str, str, str]] = [
    # -- graph networks -------------------------------------------------------------------
    ("gcn_symmetric_norm_propagate", "graph", """
def f(x, w, src, dst):
    n = x.shape[0]
    deg = jax.ops.segment_sum(jnp.ones_like(dst, jnp.float32), dst, n) + 1.0
    norm = lax.rsqrt(deg[src] * deg[dst])
    h = x @ w
    msg = h[src] * norm[:, None]
    out = jax.ops.segment_sum(msg, dst, n) + h / deg[:, None]
    return jnp.sum(jax.nn.relu(out), -1)
""", "f32[16384,256], f32[256,256], i32[262144], i32[262144]"),
    ("gin_sum_aggregate_mlp", "graph", """
def f(x, w1, w2, src, dst, graph_id):
    agg = jax.ops.segment_sum(x[src], dst, x.shape[0])
    h = jax.nn.relu(((1.0 + 0.1) * x + agg) @ w1) @ w2
    return jax.ops.segment_sum(h, graph_id, 128)
""", "f32[32768,128], f32[128,256], f32[256,128], i32[131072], i32[131072], i32[32768]"),
    ("edge_mlp_message_passing", "graph", """
def f(x, e, w_msg, src, dst):
    inp = jnp.concatenate([x[src], x[dst], e], -1)
    msg = jax.nn.silu(inp @ w_msg)
    agg = jax.ops.segment_sum(msg, dst, x.shape[0])
    return jnp.mean(jnp.square(agg), -1)
""", "f32[8192,64], f32[131072,32], f32[160,64], i32[131072], i32[131072]"),
    ("gat_attention_coefficients_segment_max", "graph", """
def f(h, a_src, a_dst, src, dst):
    logit = jax.nn.leaky_relu(h[src] @ a_src + h[dst] @ a_dst, 0.2)
    mx = jax.ops.segment_max(logit, dst, h.shape[0])
    e = jnp.exp(logit - mx[dst])
    den = jax.ops.segment_sum(e, dst, h.shape[0])
    return jax.ops.segment_sum(h[src] * (e / den[dst])[:, None], dst, h.shape[0])
""", "f32[16384,128], f32[128], f32[128], i32[524288], i32[524288]"),
    ("graph_readout_segment_max_mean", "graph", """
def f(h, graph_id):
    mx = jax.ops.segment_max(h, graph_id, 512)
    cnt = jax.ops.segment_sum(jnp.ones(h.shape[0]), graph_id, 512)
    mean = jax.ops.segment_sum(h, graph_id, 512) / jnp.maximum(cnt, 1.0)[:, None]
    return jnp.concatenate([mx, mean], -1)
""", "f32[65536,256], i32[65536]"),
    ("pagerank_power_fori", "graph", """
def f(src, dst, out_deg):
    n = out_deg.shape[0]
    def body(_, r):
        contrib = (r / out_deg)[src]
        return 0.15 / n + 0.85 * jax.ops.segment_sum(contrib, dst, n)
    r = lax.fori_loop(0, 30, body, jnp.full((n,), 1.0 / n))
    return r, jnp.sum(jnp.abs(r - 1.0 / n))
""", "i32[1048576], i32[1048576], f32[65536]"),
    # -- physics --------------------------------------------------------------------------
    ("velocity_verlet_pairwise_forces", "physics", """
def f(pos, vel, dt):
    def energy(p):
        d = p[:, None, :] - p[None, :, :]
        r2 = jnp.sum(d * d, -1) + jnp.eye(p.shape[0])
        inv6 = 1.0 / (r2 * r2 * r2)
        return 0.5 * jnp.sum(jnp.where(jnp.eye(p.shape[0]) > 0, 0.0, 4.0 * (inv6 * inv6 - inv6)))
    force = -jax.grad(energy)(pos)
    v_half = vel + 0.5 * dt * force
    new_pos = pos + dt * v_half
    return new_pos, 0.5 * jnp.sum(v_half * v_half)
""", "f32[2048,3], f32[2048,3], f32[]"),
    ("debye_huckel_screened_energy", "physics", """
def f(pos, q):
    d = pos[:, None, :] - pos[None, :, :]
    r = jnp.sqrt(jnp.sum(d * d, -1) + 1e-6)
    e = q[:, None] * q[None, :] * jnp.exp(-r / 0.8) / r
    return 0.5 * jnp.sum(jnp.where(r > 1e-2, e, 0.0), -1)
""", "f32[4096,3], f32[4096]"),
    ("morse_gradient_pairs", "physics", """
def f(pos, pairs):
    def energy(p):
        d = p[pairs[:, 0]] - p[pairs[:, 1]]
        r = jnp.sqrt(jnp.sum(d * d, -1))
        x = 1.0 - jnp.exp(-1.5 * (r - 1.1))
        return jnp.sum(4.5 * x * x)
    return jax.grad(energy)(pos)
""", "f32[32768,3], i32[262144,2]"),
    ("dipole_dipole_energy", "physics", """
def f(pos, mu):
    d = pos[:, None, :] - pos[None, :, :]
    r2 = jnp.sum(d * d, -1) + jnp.eye(pos.shape[0])
    r = jnp.sqrt(r2)
    mimj = mu @ mu.T
    mir = jnp.einsum('ik,ijk->ij', mu, d)
    mjr = jnp.einsum('jk,ijk->ij', mu, d)
    e = (mimj - 3.0 * mir * mjr / r2) / (r2 * r)
    return 0.5 * jnp.sum(e * (1.0 - jnp.eye(pos.shape[0])))
""", "f32[2048,3], f32[2048,3]"),
    ("spring_chain_rk2_scan", "physics", """
def f(x0, v0):
    def acc(x):
        left = jnp.roll(x, 1, -1)
        right = jnp.roll(x, -1, -1)
        return 10.0 * (left + right - 2 * x) - 0.1 * x ** 3
    def step(s, _):
        x, v = s
        xm = x + 0.005 * v
        vm = v + 0.005 * acc(x)
        return (x + 0.01 * vm, v + 0.01 * acc(xm)), jnp.sum(v * v)
    (x, v), ke = lax.scan(step, (x0, v0), None, length=200)
    return ke
""", "f32[256,4096], f32[256,4096]"),
    # -- numerics -------------------------------------------------------------------------
    ("newton_step_linalg_solve", "numerics", """
def f(x, a, b):
    def resid(x):
        return a @ x + 0.1 * x ** 3 - b
    jac = jax.jacfwd(resid)(x)
    x_new = x - jnp.linalg.solve(jac, resid(x))
    return x_new, jnp.linalg.norm(resid(x_new))
""", "f32[1024], f32[1024,1024], f32[1024]"),
    ("power_iteration_fori_rayleigh", "numerics", """
def f(a, v0):
    def body(_, v):
        w = a @ v
        return w / jnp.linalg.norm(w)
    v = lax.fori_loop(0, 50, body, v0)
    return v @ (a @ v)
""", "f32[4096,4096], f32[4096]"),
    ("gauss_seidel_red_black_fori", "numerics", """
def f(u, rhs):
    i = jnp.arange(u.shape[0])[:, None]
    j = jnp.arange(u.shape[1])[None, :]
    red = (i + j) % 2 == 0
    def sweep(_, u):
        nb = jnp.roll(u, 1, 0) + jnp.roll(u, -1, 0) + jnp.roll(u, 1, 1) + jnp.roll(u, -1, 1)
        u = jnp.where(red, 0.25 * (nb - rhs), u)
        nb = jnp.roll(u, 1, 0) + jnp.roll(u, -1, 0) + jnp.roll(u, 1, 1) + jnp.roll(u, -1, 1)
        return jnp.where(red, u, 0.25 * (nb - rhs))
    u = lax.fori_loop(0, 20, sweep, u)
    return jnp.sqrt(jnp.mean(jnp.square(u)))
""", "f32[2048,2048], f32[2048,2048]"),
    ("logdet_cholesky_batched", "numerics", """
def f(x):
    cov = jnp.einsum('bni,bnj->bij', x, x) / x.shape[1] + 1e-3 * jnp.eye(x.shape[-1])
    chol = jnp.linalg.cholesky(cov)
    return 2.0 * jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), -1)
""", "f32[64,2048,256]"),
    ("trapezoid_integration_rows", "numerics", """
def f(t, y):
    fy = jnp.exp(-y * y) * jnp.cos(3.0 * y)
    return jnp.sum(0.5 * (fy[:, 1:] + fy[:, :-1]) * jnp.diff(t)[None, :], -1)
""", "f32[8193], f32[4096,8193]"),
    ("conjugate_gradient_fori", "numerics", """
def f(a, b):
    m = a @ a.T + a.shape[0] * jnp.eye(a.shape[0])
    def body(_, s):
        x, r, p, rs = s
        ap = m @ p
        alpha = rs / (p @ ap)
        x = x + alpha * p
        r = r - alpha * ap
        rs_new = r @ r
        return x, r, r + (rs_new / rs) * p, rs_new
    x, r, _, _ = lax.fori_loop(0, 25, body, (jnp.zeros_like(b), b, b, b @ b))
    return x, jnp.linalg.norm(r)
""", "f32[2048,2048], f32[2048]"),
    ("bisection_roots_fori", "numerics", """
def f(c):
    def g(x):
        return x ** 3 + x - c
    def body(_, s):
        lo, hi = s
        mid = 0.5 * (lo + hi)
        left = g(mid) > 0
        return jnp.where(left, lo, mid), jnp.where(left, mid, hi)
    lo, hi = lax.fori_loop(0, 40, body, (jnp.full_like(c, -10.0), jnp.full_like(c, 10.0)))
    return jnp.mean(0.5 * (lo + hi))
""", "f32[4194304]"),
    ("expm_generator_trace", "numerics", """
def f(q):
    gen = q - jnp.diag(jnp.sum(q, -1))
    p = jax.scipy.linalg.expm(0.1 * gen)
    return jnp.sum(jnp.abs(jnp.sum(p, -1) - 1.0))
""", "f32[512,512]"),
    # -- signal ---------------------------------------------------------------------------
    ("stft_magnitude_frames", "signal", """
def f(audio, window):
    n_fft, hop = 1024, 256
    n_frames = 1 + (audio.shape[-1] - n_fft) // hop
    idx = jnp.arange(n_frames)[:, None] * hop + jnp.arange(n_fft)[None, :]
    frames = audio[:, idx] * window
    mag = jnp.abs(jnp.fft.rfft(frames, axis=-1))
    return jnp.mean(jnp.log(mag + 1e-6), 1)
""", "f32[16,160000], f32[1024]"),
    ("autocorrelation_fft", "signal", """
def f(x):
    n = x.shape[-1]
    xc = x - jnp.mean(x, -1, keepdims=True)
    spec = jnp.fft.rfft(xc, 2 * n)
    ac = jnp.fft.irfft(spec * jnp.conj(spec), 2 * n)[..., :n]
    return ac / ac[..., :1]
""", "f32[256,16384]"),
    ("fft_conv2d_same", "signal", """
def f(img, k):
    h, w = img.shape[-2:]
    kp = jnp.zeros((h, w)).at[:k.shape[0], :k.shape[1]].set(k)
    y = jnp.fft.irfft2(jnp.fft.rfft2(img) * jnp.fft.rfft2(kp), s=(h, w))
    return jnp.sum(y * y, (-2, -1))
""", "f32[32,512,512], f32[15,15]"),
    ("moving_average_cumsum", "signal", """
def f(x):
    c = jnp.cumsum(x, -1)
    w = 64
    ma = (c[:, w:] - c[:, :-w]) / w
    return jnp.max(jnp.abs(x[:, w:] - ma), -1)
""", "f32[1024,65536]"),
    ("mel_log_spectrogram_matmul", "signal", """
def f(power, mel):
    m = jnp.log(jnp.maximum(power @ mel, 1e-10))
    return m - jnp.max(m, (-2, -1), keepdims=True)
""", "f32[64,1000,513], f32[513,128]"),
    ("mfcc_dct_bf16", "signal", """
def f(logmel, dct):
    c = logmel.astype(jnp.float32) @ dct.astype(jnp.float32)
    return jnp.mean(c, 1), jnp.std(c, 1)
""", "bf16[128,3000,128], bf16[128,40]"),
    ("zero_crossing_energy", "signal", """
def f(x):
    frames = x.reshape(x.shape[0], -1, 512)
    zc = jnp.sum(jnp.abs(jnp.diff(jnp.sign(frames), axis=-1)), -1) * 0.5
    en = jnp.sum(frames * frames, -1)
    return zc / 512, jnp.log(en + 1e-8)
""", "f32[64,262144]"),
    ("preemphasis_frame_energy_f16", "signal", """
def f(x):
    y = x[:, 1:].astype(jnp.float32) - 0.97 * x[:, :-1].astype(jnp.float32)
    return jnp.sqrt(jnp.mean(jnp.square(y), -1))
""", "f16[512,131072]"),
    # -- distributions --------------------------------------------------------------------
    ("mvn_tril_logprob", "distribution", """
def f(x, loc, scale_tril):
    d = x - loc
    z = jax.scipy.linalg.solve_triangular(scale_tril, d.T, lower=True)
    half_logdet = jnp.sum(jnp.log(jnp.abs(jnp.diagonal(scale_tril))))
    return -0.5 * jnp.sum(z * z, 0) - half_logdet - 0.5 * x.shape[-1] * jnp.log(2 * jnp.pi)
""", "f32[65536,64], f32[64], f32[64,64]"),
    ("gamma_logprob_lgamma", "distribution", """
def f(x, conc, rate):
    lp = conc * jnp.log(rate) + (conc - 1) * jnp.log(x) - rate * x - lax.lgamma(conc)
    return jnp.sum(lp, -1)
""", "f32[8192,1024], f32[1024], f32[1024]"),
    ("mixture_mvn_diag_full_logprob", "distribution", """
def f(x, logits, means, log_scales):
    z = (x[:, None, :] - means[None]) * jnp.exp(-log_scales)[None]
    comp = -0.5 * jnp.sum(z * z, -1) - jnp.sum(log_scales, -1)[None] - 0.5 * x.shape[-1] * 1.8378771
    return jnp.mean(jax.nn.logsumexp(comp + jax.nn.log_softmax(logits), -1))
""", "f32[16384,32], f32[64], f32[64,32], f32[64,32]"),
    ("categorical_entropy_bf16_vocab", "distribution", """
def f(logits):
    lp = jax.nn.log_softmax(logits.astype(jnp.float32), -1)
    return -jnp.sum(jnp.exp(lp) * lp, -1)
""", "bf16[2048,128000]"),
    ("bernoulli_logits_logprob_f16", "distribution", """
def f(logits, x):
    lf = logits.astype(jnp.float32)
    return jnp.sum(x * lf - jax.nn.softplus(lf), -1)
""", "f16[4096,8192], f32[4096,8192]"),
    ("weibull_cauchy_logprob", "distribution", """
def f(x, k, lam, loc, scale):
    wb = jnp.log(k / lam) + (k - 1) * jnp.log(x / lam) - (x / lam) ** k
    ca = -jnp.log(jnp.pi * scale) - jnp.log1p(jnp.square((x - loc) / scale))
    return jnp.sum(wb, 0), jnp.sum(ca, 0)
""", "f32[16384,512], f32[512], f32[512], f32[512], f32[512]"),
    # -- attention ------------------------------------------------------------------------
    ("t5_relative_position_bias_attention", "attention", """
def f(q, k, v, table):
    n = q.shape[2]
    rel = jnp.arange(n)[None, :] - jnp.arange(n)[:, None]
    bucket = jnp.clip(rel, -64, 64) + 64
    bias = jnp.transpose(table[bucket], (2, 0, 1))
    s = jnp.einsum('bhqd,bhkd->bhqk', q, k) + bias[None]
    return jnp.einsum('bhqk,bhkd->bhqd', jax.nn.softmax(s, -1), v)
""", "f32[8,12,1024,64], f32[8,12,1024,64], f32[8,12,1024,64], f32[129,12]"),
    ("cross_attention_key_padding_bf16", "attention", """
def f(q, mem, kv_mask, wk, wv):
    k = mem @ wk
    v = mem @ wv
    s = jnp.einsum('bqd,bkd->bqk', q, k).astype(jnp.float32) / 8.0
    s = jnp.where(kv_mask[:, None, :], s, -1e9)
    p = jax.nn.softmax(s, -1).astype(jnp.bfloat16)
    return jnp.einsum('bqk,bkd->bqd', p, v)
""", "bf16[16,256,512], bf16[16,4096,512], bool[16,4096], bf16[512,512], bf16[512,512]"),
    ("sigmoid_attention_bias", "attention", """
def f(q, k, v):
    n = k.shape[2]
    s = jnp.einsum('bhqd,bhkd->bhqk', q, k) / 8.0 - jnp.log(n)
    return jnp.einsum('bhqk,bhkd->bhqd', jax.nn.sigmoid(s), v)
""", "f32[4,16,2048,64], f32[4,16,2048,64], f32[4,16,2048,64]"),
    ("cosine_attention_logit_scale", "attention", """
def f(q, k, v, logit_scale):
    qn = q / jnp.linalg.norm(q, axis=-1, keepdims=True)
    kn = k / jnp.linalg.norm(k, axis=-1, keepdims=True)
    s = jnp.einsum('bhqd,bhkd->bhqk', qn, kn) * jnp.exp(jnp.minimum(logit_scale, 4.6))[None, :, None, None]
    return jnp.einsum('bhqk,bhkd->bhqd', jax.nn.softmax(s, -1), v)
""", "f32[64,8,256,32], f32[64,8,256,32], f32[64,8,256,32], f32[8]"),
    ("differential_attention_two_maps", "attention", """
def f(q1, k1, q2, k2, v, lam):
    a1 = jax.nn.softmax(jnp.einsum('bqd,bkd->bqk', q1, k1) / 8.0, -1)
    a2 = jax.nn.softmax(jnp.einsum('bqd,bkd->bqk', q2, k2) / 8.0, -1)
    return jnp.einsum('bqk,bkd->bqd', a1 - lam * a2, v)
""", "f32[32,2048,64], f32[32,2048,64], f32[32,2048,64], f32[32,2048,64], f32[32,2048,128], f32[]"),
    ("local_block_attention_reshape", "attention", """
def f(q, k, v):
    b, n, d = q.shape
    blk = 128
    qb = q.reshape(b, n // blk, blk, d)
    kb = k.reshape(b, n // blk, blk, d)
    vb = v.reshape(b, n // blk, blk, d)
    s = jnp.einsum('bnqd,bnkd->bnqk', qb, kb) / jnp.sqrt(d)
    return jnp.einsum('bnqk,bnkd->bnqd', jax.nn.softmax(s, -1), vb).reshape(b, n, d)
""", "f32[32,16384,64], f32[32,16384,64], f32[32,16384,64]"),
    ("causal_attention_checkpoint_grad", "attention", """
def f(q, k, v):
    @jax.checkpoint
    def attn(q):
        s = jnp.einsum('bqd,bkd->bqk', q, k) / 8.0
        mask = jnp.tril(jnp.ones((q.shape[1], k.shape[1]), bool))
        s = jnp.where(mask, s, -jnp.inf)
        return jnp.einsum('bqk,bkd->bqd', jax.nn.softmax(s, -1), v)
    return jax.grad(lambda q: jnp.sum(attn(q) ** 2))(q)
""", "f32[16,2048,64], f32[16,2048,64], f32[16,2048,64]"),
    # -- normalization --------------------------------------------------------------------
    ("batch_renorm_train", "norm", """
def f(x, running_mean, running_std, gamma, beta):
    mu = jnp.mean(x, 0)
    sigma = jnp.sqrt(jnp.var(x, 0) + 1e-5)
    r = lax.stop_gradient(jnp.clip(sigma / running_std, 1 / 3.0, 3.0))
    d = lax.stop_gradient(jnp.clip((mu - running_mean) / running_std, -5.0, 5.0))
    y = ((x - mu) / sigma * r + d) * gamma + beta
    return y, 0.99 * running_mean + 0.01 * mu, 0.99 * running_std + 0.01 * sigma
""", "f32[65536,512], f32[512], f32[512], f32[512], f32[512]"),
    ("weight_norm_conv_kernel_hwio", "norm", """
def f(v, g, x):
    norm = jnp.sqrt(jnp.sum(v * v, (0, 1, 2), keepdims=True))
    w = v * (g / norm)
    y = lax.conv_general_dilated(x, w, (1, 1), 'SAME', dimension_numbers=('NHWC', 'HWIO', 'NHWC'))
    return jnp.mean(jax.nn.relu(y), (1, 2))
""", "f32[3,3,256,256], f32[256], f32[32,56,56,256]"),
    ("adain_style_transfer", "norm", """
def f(content, style):
    cm = jnp.mean(content, (1, 2), keepdims=True)
    cs = jnp.std(content, (1, 2), keepdims=True) + 1e-5
    sm = jnp.mean(style, (1, 2), keepdims=True)
    ss = jnp.std(style, (1, 2), keepdims=True) + 1e-5
    return (content - cm) / cs * ss + sm
""", "f32[16,64,64,512], f32[16,64,64,512]"),
    ("rmsnorm_weight_grad_bf16_large_batch", "norm", """
def f(x, w, dy):
    def norm(w):
        xf = x.astype(jnp.float32)
        y = xf * lax.rsqrt(jnp.mean(xf * xf, -1, keepdims=True) + 1e-6) * w
        return jnp.sum(y * dy.astype(jnp.float32))
    return jax.grad(norm)(w)
""", "bf16[65536,1024], f32[1024], bf16[65536,1024]"),
    # -- contrastive ----------------------------------------------------------------------
    ("simsiam_negcos_stopgrad", "contrastive", """
def f(p1, p2, z1, z2):
    def d(p, z):
        z = lax.stop_gradient(z)
        pn = p / jnp.linalg.norm(p, axis=1, keepdims=True)
        zn = z / jnp.linalg.norm(z, axis=1, keepdims=True)
        return -jnp.mean(jnp.sum(pn * zn, 1))
    return 0.5 * d(p1, z2) + 0.5 * d(p2, z1)
""", "f32[4096,2048], f32[4096,2048], f32[4096,2048], f32[4096,2048]"),
    ("byol_regression_ema_target", "contrastive", """
def f(online, target_params, online_params, proj):
    new_target = 0.996 * target_params + 0.004 * online_params
    t = lax.stop_gradient(proj @ new_target)
    o = online / jnp.linalg.norm(online, axis=-1, keepdims=True)
    t = t / jnp.linalg.norm(t, axis=-1, keepdims=True)
    return new_target, jnp.mean(2.0 - 2.0 * jnp.sum(o * t, -1))
""", "f32[4096,256], f32[4096,256], f32[4096,256], f32[4096,4096]"),
    ("barlow_twins_cross_correlation", "contrastive", """
def f(z1, z2):
    z1 = (z1 - jnp.mean(z1, 0)) / jnp.std(z1, 0)
    z2 = (z2 - jnp.mean(z2, 0)) / jnp.std(z2, 0)
    c = z1.T @ z2 / z1.shape[0]
    on = jnp.sum(jnp.square(jnp.diagonal(c) - 1.0))
    off = jnp.sum(jnp.square(c)) - jnp.sum(jnp.square(jnp.diagonal(c)))
    return on + 5e-3 * off
""", "f32[2048,8192], f32[2048,8192]"),
    ("vicreg_variance_covariance", "contrastive", """
def f(za, zb):
    inv = jnp.mean(jnp.square(za - zb))
    def var_cov(z):
        z = z - jnp.mean(z, 0)
        std = jnp.sqrt(jnp.var(z, 0) + 1e-4)
        cov = z.T @ z / (z.shape[0] - 1)
        off = jnp.sum(cov * cov) - jnp.sum(jnp.square(jnp.diagonal(cov)))
        return jnp.mean(jax.nn.relu(1.0 - std)), off / z.shape[1]
    va, ca = var_cov(za)
    vb, cb = var_cov(zb)
    return 25.0 * inv + 25.0 * (va + vb) + ca + cb
""", "f32[2048,4096], f32[2048,4096]"),
    ("alignment_uniformity_loss", "contrastive", """
def f(x, y):
    align = jnp.mean(jnp.sum(jnp.square(x - y), -1))
    sq = jnp.sum(x * x, -1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * x @ x.T
    uniform = jnp.log(jnp.mean(jnp.exp(-2.0 * d2)))
    return align + uniform
""", "f32[8192,128], f32[8192,128]"),
    ("siglip_pairwise_sigmoid_bf16", "contrastive", """
def f(img, txt, t, b):
    logits = (img @ txt.T).astype(jnp.float32) * jnp.exp(t) + b
    labels = 2.0 * jnp.eye(img.shape[0]) - 1.0
    return -jnp.sum(jax.nn.log_sigmoid(labels * logits)) / img.shape[0]
""", "bf16[16384,768], bf16[16384,768], f32[], f32[]"),
    # -- recommenders and ranking ---------------------------------------------------------
    ("sampled_softmax_logq_correction", "recsys", """
def f(user, items, logq):
    logits = user @ items.T - logq[None, :]
    return jnp.mean(jax.nn.logsumexp(logits, -1) - jnp.diagonal(logits))
""", "f32[8192,128], f32[8192,128], f32[8192]"),
    ("din_target_attention_pooling", "recsys", """
def f(hist, target, w1, w2, mask):
    t = jnp.broadcast_to(target[:, None, :], hist.shape)
    feat = jnp.concatenate([hist, t, hist - t, hist * t], -1)
    score = (jax.nn.sigmoid(feat @ w1) @ w2)[..., 0]
    score = jnp.where(mask, score, 0.0)
    return jnp.einsum('bl,bld->bd', score, hist)
""", "f32[4096,100,64], f32[4096,64], f32[256,80], f32[80,1], bool[4096,100]"),
    ("masked_seen_items_topk", "recsys", """
def f(user, items, seen):
    scores = user @ items.T
    scores = jnp.where(seen, -jnp.inf, scores)
    return lax.top_k(scores, 100)
""", "f32[1024,128], f32[131072,128], bool[1024,131072]"),
    ("neural_cf_gmf_mlp_bce", "recsys", """
def f(u_emb, i_emb, w1, w2, h, y):
    gmf = u_emb * i_emb
    mlp = jax.nn.relu(jax.nn.relu(jnp.concatenate([u_emb, i_emb], -1) @ w1) @ w2)
    logit = jnp.concatenate([gmf, mlp], -1) @ h
    return jnp.mean(jax.nn.softplus(logit) - y * logit)
""", "f32[65536,64], f32[65536,64], f32[128,128], f32[128,64], f32[128], f32[65536]"),
    ("warp_like_margin_rank_bf16", "recsys", """
def f(user, pos, neg):
    sp = jnp.sum(user * pos, -1).astype(jnp.float32)
    sn = jnp.einsum('bd,bnd->bn', user, neg).astype(jnp.float32)
    viol = jax.nn.relu(1.0 - sp[:, None] + sn)
    rank = jnp.sum(viol > 0, -1).astype(jnp.float32)
    return jnp.mean(jnp.log1p(rank) * jnp.mean(viol, -1))
""", "bf16[16384,64], bf16[16384,64], bf16[16384,256,64]"),
    ("expert_choice_routing_topk", "moe", """
def f(x, wg):
    scores = jax.nn.softmax(x @ wg, -1)
    cap = x.shape[0] // wg.shape[1] * 2
    g, idx = lax.top_k(scores.T, cap)
    return g, jnp.sum(x[idx] * g[..., None], 1)
""", "f32[8192,1024], f32[1024,16]"),
    ("moe_dispatch_onehot_einsum_bf16", "moe", """
def f(x, expert_idx, w):
    disp = jax.nn.one_hot(expert_idx, w.shape[0], dtype=jnp.bfloat16)
    xe = jnp.einsum('te,td->etd', disp, x)
    ye = jnp.einsum('etd,edf->etf', xe, w)
    return jnp.einsum('te,etf->tf', disp, ye)
""", "bf16[4096,512], i32[4096], bf16[8,512,1024]"),
    # -- reinforcement learning -----------------------------------------------------------
    ("retrace_reverse_scan", "rl", """
def f(q, v_next, r, rho, disc):
    c = 0.95 * jnp.minimum(1.0, rho)
    def step(acc, xs):
        qt, vt, rt, ct, dt = xs
        target = rt + dt * (vt + ct * acc)
        return target - qt, target
    _, targets = lax.scan(step, jnp.zeros(q.shape[1]), (q, v_next, r, c, disc), reverse=True)
    return jnp.mean(jnp.square(targets - q))
""", "f32[1000,4096], f32[1000,4096], f32[1000,4096], f32[1000,4096], f32[1000,4096]"),
    ("n_step_returns_conv", "rl", """
def f(r, v_boot):
    g = 0.99 ** jnp.arange(5.0)
    ret = lax.conv_general_dilated(r[:, None, :], g[None, None, ::-1], (1,), [(0, 4)])[:, 0, :]
    return ret + 0.99 ** 5 * v_boot
""", "f32[4096,2048], f32[4096,2048]"),
    ("cql_logsumexp_penalty", "rl", """
def f(q_all, actions, target):
    q_taken = jnp.take_along_axis(q_all, actions[:, None], -1)[:, 0]
    penalty = jnp.mean(jax.nn.logsumexp(q_all, -1) - q_taken)
    return penalty + 0.5 * jnp.mean(jnp.square(q_taken - target))
""", "f32[65536,1024], i32[65536], f32[65536]"),
    ("td3_clipped_noise_target", "rl", """
def f(next_obs, w_pi, w_q1, w_q2, noise, r, done):
    a = jnp.tanh(next_obs @ w_pi)
    a = jnp.clip(a + jnp.clip(0.2 * noise, -0.5, 0.5), -1.0, 1.0)
    inp = jnp.concatenate([next_obs, a], -1)
    q = jnp.minimum(jax.nn.relu(inp @ w_q1), jax.nn.relu(inp @ w_q2))
    return r + 0.99 * (1.0 - done) * jnp.mean(q, -1)
""", "f32[65536,64], f32[64,16], f32[80,256], f32[80,256], f32[65536,16], f32[65536], f32[65536]"),
    ("awr_advantage_weights_grad", "rl", """
def f(w, obs, act, adv):
    weights = jnp.minimum(jnp.exp(adv / 1.0), 20.0)
    def loss(w):
        lp = jax.nn.log_softmax(obs @ w, -1)
        return -jnp.mean(weights * jnp.take_along_axis(lp, act[:, None], -1)[:, 0])
    return jax.value_and_grad(loss)(w)
""", "f32[256,18], f32[32768,256], i32[32768], f32[32768]"),
    ("soft_q_target_entropy_vmap", "rl", """
def f(q_next, logp_next, r, done):
    def one(q, lp, rr, d):
        v = jnp.sum(jnp.exp(lp) * (q - 0.2 * lp))
        return rr + 0.99 * (1.0 - d) * v
    return jax.vmap(one)(q_next, logp_next, r, done)
""", "f32[65536,512], f32[65536,512], f32[65536], f32[65536]"),
    # -- losses ---------------------------------------------------------------------------
    ("generalized_ce_truncated", "loss", """
def f(logits, labels):
    p = jax.nn.softmax(logits, -1)
    py = jnp.take_along_axis(p, labels[:, None], -1)[:, 0]
    return jnp.mean((1.0 - py ** 0.7) / 0.7)
""", "f32[16384,1000], i32[16384]"),
    ("sparsemax_sort_threshold", "loss", """
def f(z):
    zs = jnp.sort(z, -1)[:, ::-1]
    k = jnp.arange(1, z.shape[-1] + 1, dtype=z.dtype)
    cs = jnp.cumsum(zs, -1)
    support = 1 + k * zs > cs
    kz = jnp.sum(support, -1, keepdims=True)
    tau = (jnp.take_along_axis(cs, kz - 1, -1) - 1) / kz
    return jnp.maximum(z - tau, 0.0)
""", "f32[4096,1024]"),
    ("taylor_softmax_ce", "loss", """
def f(logits, labels):
    t = 1.0 + logits + 0.5 * logits * logits
    lp = jnp.log(t) - jnp.log(jnp.sum(t, -1, keepdims=True))
    return -jnp.mean(jnp.take_along_axis(lp, labels[:, None], -1))
""", "f32[8192,32000], i32[8192]"),
    ("chunked_ce_vocab_scan_bf16", "loss", """
def f(h, w, labels):
    hs = h.reshape(8, -1, h.shape[-1])
    ls = labels.reshape(8, -1)
    def chunk(tot, xs):
        hc, lc = xs
        logits = (hc @ w).astype(jnp.float32)
        nll = jax.nn.logsumexp(logits, -1) - jnp.take_along_axis(logits, lc[:, None], -1)[:, 0]
        return tot + jnp.sum(nll), None
    tot, _ = lax.scan(chunk, 0.0, (hs, ls))
    return tot / labels.shape[0]
""", "bf16[8192,2048], bf16[2048,131072], i32[8192]"),
    ("ordinal_coral_bce", "loss", """
def f(feat, w, bias, levels):
    logit = (feat @ w)[:, None] + bias[None, :]
    return jnp.mean(jnp.sum(jax.nn.softplus(logit) - levels * logit, -1))
""", "f32[65536,512], f32[512], f32[99], f32[65536,99]"),
]


SCRIPT = OutsideFamily("guide_predictor_holdout8", FAMILY, PROGRAMS, __doc__ or "")
__doc__, FILES, programs, main = SCRIPT.usage, SCRIPT.files, SCRIPT.programs, SCRIPT.main

if __name__ == "__main__":
    raise SystemExit(main())
