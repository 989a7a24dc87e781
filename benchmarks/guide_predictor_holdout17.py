"""A sixteenth holdout, wild16: an outside review's 50 programs of optimizer, quantisation, model-block,
attention, retrieval language-model, recommender, molecular and particle simulation, numerical solver,
astronomy, time-series, finance, genomics, quantum, probabilistic, reinforcement learning, graph, audio,
classical vision, compression, microscopy, evaluation-metric, weather and training-idiom code, in idioms the
earlier families do not name, scored first against the predictor frozen at commit f13b1560.

The programs are not this project's: a reviewer from outside, who neither wrote nor read the rules, wrote them
from the definitions of the computations, the way JAX libraries and research code write them, at their usual
shapes: AdamP's projection of the radial component out of an Adam step over a 4,096 x 4,096 weight, TRPO's
natural gradient by ten conjugate-gradient steps of Fisher-vector products (``jax.jvp`` and ``jax.vjp`` in a
``fori_loop``), Transformer-Engine-style delayed scaling to ``float8_e4m3fn`` from an amax history before a
``bf16`` matmul, residual vector quantisation through eight codebooks in a Python loop (``argmin`` over a
65,536 x 1,024 distance table per stage); a diffusion U-Net's down block (GroupNorm, SiLU, two 3 x 3
convolutions, a time embedding, a skip projection, 2 x 2 average pooling), a DCGAN generator's
``lax.conv_transpose`` with batch statistics, Deformable DETR's single-scale attention by four bilinear
``take_along_axis`` taps per sampling point, Reformer's LSH bucketing by an ``argmax`` of random rotations, an
``argsort`` and chunked attention over the bucket and its predecessor, DeBERTa's disentangled attention
(content-to-position and position-to-content terms by ``take_along_axis`` of relative indices); kNN-LM's
interpolation (distances to a ``bf16`` datastore of 262,144 keys, ``top_k`` 1,024, a scatter-add into a 50,257
vocabulary), a mixture-of-softmaxes LM head (a 1 GB ``f32`` logit table of four components), DIN's target
attention by an activation unit over concatenated features with a ``bool`` history mask, a sampled softmax
with log-Q correction and accidental-hit removal over a 1M-item table; Lennard-Jones by a cell list (27
rolled neighbour cells of 32^3 cells of eight slots, a ``bool`` occupancy), particle-in-cell cloud-in-cell
deposition of 4M particles by ``segment_sum``, a spectral Poisson solve and the gather back, the Rotne-Prager
mobility tensors of 2,048 particles (2,048 x 2,048 x 3 x 3), the Debye scattering sum at an odd size (999
atoms by 128 wave numbers), a 2-D Yee FDTD step of Maxwell's equations in a ``fori_loop``, conjugate gradients
for a 5-point Poisson problem in a ``while_loop`` with a tolerance, FISTA for the lasso in a ``while_loop`` with
a Frobenius step bound, Lanczos with full reorthogonalisation in a ``fori_loop``; a Lomb-Scargle periodogram
(8,192 frequencies by 4,096 times), the matrix profile by z-normalised sliding distances (8,065 x 8,065 with an
exclusion zone, ``min`` and ``argmin``), Holt-Winters smoothing of 4,096 series in a ``scan`` with
``unroll=8``, Ledoit-Wolf shrinkage with its naive 2,048 x 256 x 256 outer-product table, expected shortfall by
a ``sort`` of 16,384 scenarios, linkage disequilibrium r^2 from ``int8`` genotypes with a band LD score, the
Renyi-2 entanglement entropy of 4,096 twelve-qubit ``complex64`` states by a partial trace; a
rational-quadratic spline flow with its bin search by a comparison count, the kernel Stein discrepancy with an
IMQ kernel in matmul form with scores by ``vmap(grad)``, a Laplace approximation's evidence by ``jax.hessian``
and a Cholesky; CQL's conservative penalty (a ``logsumexp`` of Q over 21 sampled actions), prioritised replay
sampling by ``cumsum`` and ``searchsorted`` with importance weights (a 4 MB table); NNConv's edge-conditioned
weights from edge features (262,144 per-edge 16 x 16 matrices) with a ``segment_sum`` mean, GraphSAGE's pool
aggregator by ``segment_max`` over a million edges, APPNP's personalised PageRank in a ``fori_loop``, SchNet's
continuous-filter convolution over 300 radial basis functions; WaveNet's softmax over 256 mu-law classes with
``uint8`` targets; Canny's non-maximum suppression with quantised directions by rolls, a rotation by
``jax.scipy.ndimage.map_coordinates`` under ``vmap``, a guided filter of ``f16`` images by integral images
(``cumsum`` twice), JPEG's 8 x 8 DCT by einsums with quantisation, nonzero counts and PSNR from ``uint8``
images, a white top-hat of ``uint16`` microscopy images by ``reduce_window`` min and max, normalised
cross-correlation template matching by a convolution and window sums at an odd size (993 x 993) with an
``argmax``; BLEU-4's clipped n-gram counts by ``int32`` equality tables, generative precision and recall by
k-NN radii (``top_k``, ``any``), the fair CRPS of a 50-member ensemble by pairwise differences (a 650 MB
table) with latitude weights; an MLP block under ``jax.checkpoint`` with the ``dots_with_no_batch_dims_saveable``
policy and its ``grad``, twelve layers in a ``scan`` with ``unroll=2`` under the ``nothing_saveable`` policy
and ``value_and_grad``, and an empirical NTK by ``jax.jacrev`` with kernel regression (a tiny table). ``f32``,
``bf16``, ``f16``, ``float8_e4m3fn`` (made in the program), ``int8``, ``uint8``, ``uint16``, ``int32``,
``bool`` and ``complex64``, odd, power-of-two, tiny (0.2 to 4 MB) and huge (about 1 GB) tables. The reviewer recorded
``predict()``'s answers (``guide_predictor_family.predicted``, calibrated) for every program and target before
any compile (main then at f13b1560; the record's sha256 is ``84759572918a23fe...``, 50 programs, committed
with the programs before the first compile), then compiled them with this harness for the truth; the first
evaluation's answers equal the record's on every one of the 150 rows. None of the 50 programs is left out:
every compile finished within the 90 s the review allowed one (the slowest, prioritised replay on the TPU, in
18 s, and template matching on the TPU in 17 s). Nine further programs the review wrote (MADGRAD, a Polyak step
size, a sliced Wasserstein distance, a two-level multigrid cycle, the Proxy-Anchor loss, a U-Net up block, a
Cahn-Hilliard spectral step, a modern Hopfield retrieval and a Perceiver IO decoder) were cut for the compile
budget before the record was made: they were never predicted or compiled.

**Ground truth** and **scores** as the first holdout's (``guide_predictor_holdout.score_programs``).

"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_holdout import OutsideFamily  # noqa: E402

FAMILY = "wild16"

#: (name, kind, body defining ``f``, argument specs), as the review wrote them.
PROGRAMS: list[tuple[str, str, str, str]] = [
    # -- optimizers -------------------------------------------------------------------------------------
    ("adamp_radial_component_projection", "optimizer", """
def f(w, g, m, v, step):
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * g * g
    p = (m / (1 - 0.9 ** step)) / (jnp.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
    wn = w / (jnp.linalg.norm(w, axis=1, keepdims=True) + 1e-8)
    gn = g / (jnp.linalg.norm(g, axis=1, keepdims=True) + 1e-8)
    cos = jnp.abs(jnp.sum(wn * gn, axis=1, keepdims=True))
    radial = jnp.sum(wn * p, axis=1, keepdims=True) * wn
    p = jnp.where(cos < 0.1 / jnp.sqrt(w.shape[1]), p - radial, p)
    return w - 1e-3 * p, m, v
""", "f32[4096,4096], f32[4096,4096], f32[4096,4096], f32[4096,4096], f32[]"),
    ("trpo_conjugate_gradient_fisher_vector", "optimizer", """
def f(w, obs, adv, act):
    def logits(w):
        return obs @ w
    def surr(w):
        lp = jax.nn.log_softmax(logits(w))
        return jnp.mean(jnp.take_along_axis(lp, act[:, None], 1)[:, 0] * adv)
    g = jax.grad(surr)(w)
    p = jax.nn.softmax(logits(w))
    _, vjp = jax.vjp(logits, w)
    def fvp(v):
        jv = jax.jvp(logits, (w,), (v,))[1]
        m = p * jv - p * jnp.sum(p * jv, axis=1, keepdims=True)
        return vjp(m / obs.shape[0])[0] + 0.1 * v
    def cg(i, st):
        x, r, d, rr = st
        z = fvp(d)
        a = rr / jnp.sum(d * z)
        x = x + a * d
        r = r - a * z
        rn = jnp.sum(r * r)
        return x, r, r + rn / rr * d, rn
    x, _, _, _ = lax.fori_loop(0, 10, cg, (jnp.zeros_like(g), g, g, jnp.sum(g * g)))
    step = jnp.sqrt(2 * 0.01 / jnp.sum(x * fvp(x)))
    return w + step * x
""", "f32[512,18], f32[65536,512], f32[65536], i32[65536]"),
    ("fp8_delayed_scaling_amax_history", "quantization", """
def f(x, w, amax_hist):
    scale = 448.0 / jnp.maximum(jnp.max(amax_hist), 1e-12)
    xq = jnp.clip(x.astype(jnp.float32) * scale, -448.0, 448.0).astype(jnp.float8_e4m3fn)
    y = jnp.dot(xq.astype(jnp.bfloat16), w, preferred_element_type=jnp.float32) / scale
    amax = jnp.max(jnp.abs(x.astype(jnp.float32)))
    return y.astype(jnp.bfloat16), jnp.roll(amax_hist, 1).at[0].set(amax)
""", "bf16[8192,4096], bf16[4096,4096], f32[16]"),
    ("residual_vq_eight_codebooks_commitment", "quantization", """
def f(z, codebooks):
    r = z
    codes = []
    loss = 0.0
    for q in range(codebooks.shape[0]):
        c = codebooks[q]
        d = jnp.sum(r * r, 1, keepdims=True) - 2 * r @ c.T + jnp.sum(c * c, 1)[None, :]
        idx = jnp.argmin(d, axis=1)
        sel = c[idx]
        loss = loss + jnp.mean((r - lax.stop_gradient(sel)) ** 2)
        r = r - sel
        codes.append(idx)
    return jnp.stack(codes, 1), loss, jnp.mean(r * r)
""", "f32[65536,128], f32[8,1024,128]"),
    # -- model blocks -------------------------------------------------------------------------------------
    ("unet_down_block_groupnorm_silu_avgpool", "vision", """
def f(x, w1, w2, w_skip, t_emb, w_t):
    dn = ("NHWC", "HWIO", "NHWC")
    def gn(h, groups=32):
        b, hh, ww, c = h.shape
        g = h.reshape(b, hh, ww, groups, c // groups)
        mu = jnp.mean(g, axis=(1, 2, 4), keepdims=True)
        var = jnp.var(g, axis=(1, 2, 4), keepdims=True)
        return ((g - mu) * lax.rsqrt(var + 1e-5)).reshape(h.shape)
    h = lax.conv_general_dilated(jax.nn.silu(gn(x)), w1, (1, 1), "SAME", dimension_numbers=dn)
    h = h + (jax.nn.silu(t_emb) @ w_t)[:, None, None, :]
    h = lax.conv_general_dilated(jax.nn.silu(gn(h)), w2, (1, 1), "SAME", dimension_numbers=dn)
    h = h + x @ w_skip
    b, hh, ww, c = h.shape
    return h, h.reshape(b, hh // 2, 2, ww // 2, 2, c).mean(axis=(2, 4))
""", "f32[16,64,64,128], f32[3,3,128,256], f32[3,3,256,256], f32[128,256], f32[16,512], f32[512,256]"),
    ("dcgan_conv_transpose_batchnorm_relu", "vision", """
def f(z, w_fc, k1, gamma, beta):
    h = (z @ w_fc).reshape(z.shape[0], 8, 8, 512)
    h = lax.conv_transpose(h, k1, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    mu = jnp.mean(h, axis=(0, 1, 2))
    var = jnp.mean(jnp.square(h - mu), axis=(0, 1, 2))
    h = (h - mu) * lax.rsqrt(var + 1e-5) * gamma + beta
    return jax.nn.relu(h), mu, var
""", "f32[256,128], f32[128,32768], f32[4,4,512,256], f32[256], f32[256]"),
    ("deformable_attention_bilinear_sampling", "attention", """
def f(value, query, ref, w_off, w_att):
    b, hw, nh, dh = value.shape
    side = 64
    nq = query.shape[1]
    off = (query @ w_off).reshape(b, nq, nh, 4, 2)
    att = jax.nn.softmax((query @ w_att).reshape(b, nq, nh, 4), axis=-1)
    loc = (ref[:, :, None, None, :] + off / side) * side - 0.5
    x0 = jnp.floor(loc[..., 0])
    y0 = jnp.floor(loc[..., 1])
    fx = loc[..., 0] - x0
    fy = loc[..., 1] - y0
    vh = value.transpose(0, 2, 1, 3)
    def tap(xi, yi):
        ok = (xi >= 0) & (xi < side) & (yi >= 0) & (yi < side)
        idx = (jnp.clip(yi, 0, side - 1) * side + jnp.clip(xi, 0, side - 1)).astype(jnp.int32)
        idx = idx.transpose(0, 2, 1, 3).reshape(b, nh, nq * 4, 1)
        got = jnp.take_along_axis(vh, idx, axis=2).reshape(b, nh, nq, 4, dh)
        return got * ok.transpose(0, 2, 1, 3)[..., None]
    wgt = lambda w: w.transpose(0, 2, 1, 3)[..., None]
    s = (tap(x0, y0) * wgt((1 - fx) * (1 - fy)) + tap(x0 + 1, y0) * wgt(fx * (1 - fy))
         + tap(x0, y0 + 1) * wgt((1 - fx) * fy) + tap(x0 + 1, y0 + 1) * wgt(fx * fy))
    out = jnp.sum(s * wgt(att), axis=3)
    return out.transpose(0, 2, 1, 3).reshape(b, nq, nh * dh)
""", "f32[4,4096,8,32], f32[4,4096,256], f32[4,4096,2], f32[256,64], f32[256,32]"),
    ("reformer_lsh_bucket_sort_chunked_attention", "attention", """
def f(qk, v, rot):
    b, l, d = qk.shape
    xr = jnp.einsum("bld,dr->blr", qk, rot)
    buckets = jnp.argmax(jnp.concatenate([xr, -xr], axis=-1), axis=-1)
    order = jnp.argsort(buckets * l + jnp.arange(l)[None, :], axis=-1)
    sq = jnp.take_along_axis(qk, order[..., None], axis=1)
    sv = jnp.take_along_axis(v, order[..., None], axis=1)
    c = 64
    q = sq.reshape(b, l // c, c, d)
    kn = q / jnp.linalg.norm(q, axis=-1, keepdims=True)
    k2 = jnp.concatenate([kn, jnp.roll(kn, 1, axis=1)], axis=2)
    v2 = jnp.concatenate([sv.reshape(b, l // c, c, d), jnp.roll(sv.reshape(b, l // c, c, d), 1, axis=1)], axis=2)
    s = jnp.einsum("bncd,bnkd->bnck", q, k2) / jnp.sqrt(d)
    s = jnp.where(jnp.eye(c, 2 * c, dtype=bool)[None, None], -1e5, s)
    lse = jax.nn.logsumexp(s, axis=-1, keepdims=True)
    o = jnp.einsum("bnck,bnkd->bncd", jnp.exp(s - lse), v2).reshape(b, l, d)
    inv = jnp.argsort(order, axis=-1)
    return jnp.take_along_axis(o, inv[..., None], axis=1)
""", "f32[8,4096,64], f32[8,4096,64], f32[64,32]"),
    ("deberta_disentangled_attention_c2p_p2c", "attention", """
def f(q, k, v, pos_k, pos_q):
    b, h, l, d = q.shape
    span = pos_k.shape[0] // 2
    rel = jnp.arange(l)[:, None] - jnp.arange(l)[None, :]
    idx = jnp.clip(rel + span, 0, 2 * span - 1)
    c2p = jnp.einsum("bhld,rd->bhlr", q, pos_k)
    c2p = jnp.take_along_axis(c2p, jnp.broadcast_to(idx, (b, h, l, l)), axis=-1)
    p2c = jnp.einsum("bhld,rd->bhlr", k, pos_q)
    p2c = jnp.take_along_axis(p2c, jnp.broadcast_to(idx.T, (b, h, l, l)), axis=-1).swapaxes(-1, -2)
    s = (jnp.einsum("bhqd,bhkd->bhqk", q, k) + c2p + p2c) / jnp.sqrt(3.0 * d)
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)
""", "f32[4,12,512,64], f32[4,12,512,64], f32[4,12,512,64], f32[512,64], f32[512,64]"),
    ("knn_lm_datastore_topk_interpolation_bf16", "nlp", """
def f(h, keys, vals, lm_logits):
    hb = h.astype(jnp.bfloat16)
    d = (jnp.sum(h * h, 1, keepdims=True) - 2 * jnp.dot(hb, keys.T, preferred_element_type=jnp.float32)
         + jnp.sum(jnp.square(keys.astype(jnp.float32)), 1)[None, :])
    negd, idx = lax.top_k(-d, 1024)
    w = jax.nn.softmax(negd, axis=-1)
    tok = vals[idx]
    p_knn = jnp.zeros(lm_logits.shape).at[jnp.arange(h.shape[0])[:, None], tok].add(w)
    p = 0.75 * jax.nn.softmax(lm_logits, -1) + 0.25 * p_knn
    return jnp.log(p + 1e-10)
""", "f32[64,1024], bf16[262144,1024], i32[262144], f32[64,50257]"),
    ("mixture_of_softmaxes_lm_head_1gb", "nlp", """
def f(h, w_pi, w_k, emb, targets):
    k = w_pi.shape[1]
    pi = jax.nn.log_softmax(h @ w_pi, axis=-1)
    hk = jnp.tanh(jnp.einsum("nd,kde->knd", h, w_k))
    logits = jnp.einsum("knd,dv->knv", hk, emb)
    lp = jax.nn.log_softmax(logits, axis=-1)
    tl = jnp.take_along_axis(lp, jnp.broadcast_to(targets[None, :, None], (k, h.shape[0], 1)), axis=-1)[..., 0]
    return -jnp.mean(jax.nn.logsumexp(pi.T + tl, axis=0))
""", "f32[2048,1024], f32[1024,4], f32[4,1024,1024], f32[1024,32000], i32[2048]"),
    ("din_target_attention_activation_unit_mask", "recsys", """
def f(q, hist, mask, w1, w2, w3):
    qb = jnp.broadcast_to(q[:, None, :], hist.shape)
    feat = jnp.concatenate([qb, hist, qb - hist, qb * hist], axis=-1)
    a = jax.nn.sigmoid(feat @ w1)
    a = jax.nn.sigmoid(a @ w2)
    score = (a @ w3)[..., 0]
    score = jnp.where(mask, score, 0.0)
    return jnp.einsum("bt,btd->bd", score, hist)
""", "f32[2048,64], f32[2048,200,64], bool[2048,200], f32[256,80], f32[80,40], f32[40,1]"),
    ("sampled_softmax_logq_accidental_hits", "recsys", """
def f(user, pos_ids, neg_ids, items, log_q):
    u = user / jnp.linalg.norm(user, axis=1, keepdims=True)
    pe = items[pos_ids]
    ne = items[neg_ids]
    pos = jnp.sum(u * pe, axis=1) - log_q[pos_ids]
    neg = u @ ne.T - log_q[neg_ids][None, :]
    neg = jnp.where(pos_ids[:, None] == neg_ids[None, :], -1e9, neg)
    logits = jnp.concatenate([pos[:, None], neg], axis=1) / 0.05
    return jnp.mean(jax.nn.logsumexp(logits, axis=1) - logits[:, 0])
""", "f32[4096,128], i32[4096], i32[8192], f32[1048576,128], f32[1048576]"),
    # -- physics and numerical methods ----------------------------------------------------------------------
    ("cell_list_lennard_jones_27_shifted_cells", "physics", """
def f(cells, occ, box):
    n = cells.shape[0]
    cell_len = box / n
    e = 0.0
    for sx in (-1, 0, 1):
        for sy in (-1, 0, 1):
            for sz in (-1, 0, 1):
                nb = jnp.roll(cells, (sx, sy, sz), axis=(0, 1, 2))
                nocc = jnp.roll(occ, (sx, sy, sz), axis=(0, 1, 2))
                d = cells[..., :, None, :] - nb[..., None, :, :]
                d = d - box * jnp.round(d / box)
                r2 = jnp.sum(d * d, axis=-1)
                ok = occ[..., :, None] & nocc[..., None, :] & (r2 < cell_len * cell_len)
                if (sx, sy, sz) == (0, 0, 0):
                    ok = ok & ~jnp.eye(cells.shape[3], dtype=bool)
                inv6 = (1.0 / jnp.where(ok, r2, 1.0)) ** 3
                e = e + jnp.sum(jnp.where(ok, 4.0 * (inv6 * inv6 - inv6), 0.0))
    return 0.5 * e
""", "f32[32,32,32,8,3], bool[32,32,32,8], f32[]"),
    ("pic_cic_deposition_segment_sum_poisson_push", "physics", """
def f(x, v, q):
    g = 256
    xs = jnp.mod(x, g)
    i0 = jnp.floor(xs).astype(jnp.int32)
    fr = xs - i0
    corners = []
    for dx in (0, 1):
        for dy in (0, 1):
            w = (fr[:, 0] if dx else 1 - fr[:, 0]) * (fr[:, 1] if dy else 1 - fr[:, 1])
            idx = ((i0[:, 0] + dx) % g) * g + (i0[:, 1] + dy) % g
            corners.append((idx, w))
    idx = jnp.concatenate([c[0] for c in corners])
    w = jnp.concatenate([c[1] for c in corners])
    rho = jax.ops.segment_sum(jnp.tile(q, 4) * w, idx, num_segments=g * g).reshape(g, g)
    rho = rho - jnp.mean(rho)
    k = jnp.fft.fftfreq(g) * 2 * jnp.pi
    k2 = k[:, None] ** 2 + k[None, :] ** 2
    phi_h = jnp.fft.fft2(rho) / jnp.where(k2 == 0, 1.0, k2)
    ex = jnp.real(jnp.fft.ifft2(-1j * k[:, None] * phi_h)).reshape(-1)
    ey = jnp.real(jnp.fft.ifft2(-1j * k[None, :] * phi_h)).reshape(-1)
    e_at = jnp.stack([jnp.sum((ex[idx] * w).reshape(4, -1), 0), jnp.sum((ey[idx] * w).reshape(4, -1), 0)], 1)
    v = v + 0.1 * q[:, None] * e_at
    return x + 0.1 * v, v, 0.5 * jnp.sum(ex * ex + ey * ey)
""", "f32[4194304,2], f32[4194304,2], f32[4194304]"),
    ("rotne_prager_mobility_pair_tensors", "physics", """
def f(pos, forces, a):
    d = pos[:, None, :] - pos[None, :, :]
    r = jnp.sqrt(jnp.sum(d * d, -1) + jnp.eye(pos.shape[0]))
    rh = d / r[..., None]
    c1 = 3 * a / (4 * r) * (1 + 2 * a * a / (3 * r * r))
    c2 = 3 * a / (4 * r) * (1 - 2 * a * a / (r * r))
    m = c1[..., None, None] * jnp.eye(3) + c2[..., None, None] * rh[..., :, None] * rh[..., None, :]
    m = jnp.where(jnp.eye(pos.shape[0], dtype=bool)[..., None, None], jnp.eye(3), m)
    return jnp.einsum("ijab,jb->ia", m, forces)
""", "f32[2048,3], f32[2048,3], f32[]"),
    ("debye_scattering_intensity_odd", "physics", """
def f(pos, q, fq):
    d = jnp.sqrt(jnp.sum((pos[:, None, :] - pos[None, :, :]) ** 2, -1))
    qr = q[:, None, None] * d[None]
    s = jnp.where(qr > 1e-6, jnp.sin(qr) / jnp.where(qr > 1e-6, qr, 1.0), 1.0)
    return fq * fq * jnp.sum(s, axis=(1, 2))
""", "f32[999,3], f32[128], f32[128]"),
    ("maxwell_yee_fdtd_2d_fori_energy", "physics", """
def f(ez, hx, hy, eps, src):
    def step(t, st):
        ez, hx, hy = st
        hx = hx - 0.5 * (jnp.roll(ez, -1, 0) - ez)
        hy = hy + 0.5 * (jnp.roll(ez, -1, 1) - ez)
        curl = (hy - jnp.roll(hy, 1, 1)) - (hx - jnp.roll(hx, 1, 0))
        ez = ez + 0.5 / eps * curl
        ez = ez.at[1024, 1024].add(src[t])
        return ez, hx, hy
    ez, hx, hy = lax.fori_loop(0, 20, step, (ez, hx, hy))
    return ez, 0.5 * jnp.sum(eps * ez * ez + hx * hx + hy * hy)
""", "f32[2048,2048], f32[2048,2048], f32[2048,2048], f32[2048,2048], f32[20]"),
    ("conjugate_gradient_poisson_while_loop_tol", "numerics", """
def f(b):
    def lap(u):
        p = jnp.pad(u, 1)
        return 4 * u - p[:-2, 1:-1] - p[2:, 1:-1] - p[1:-1, :-2] - p[1:-1, 2:]
    def cond(st):
        _, _, _, rr, it = st
        return (rr > 1e-10) & (it < 200)
    def body(st):
        x, r, p, rr, it = st
        ap = lap(p)
        a = rr / jnp.sum(p * ap)
        x = x + a * p
        r = r - a * ap
        rn = jnp.sum(r * r)
        return x, r, r + rn / rr * p, rn, it + 1
    x, r, _, rr, it = lax.while_loop(cond, body, (jnp.zeros_like(b), b, b, jnp.sum(b * b), 0))
    return x, jnp.sqrt(rr), it
""", "f32[1024,1024]"),
    ("fista_lasso_while_loop_frobenius_step", "statistics", """
def f(a, b, lam):
    lip = jnp.sum(a * a)
    def cond(st):
        _, _, _, it, delta = st
        return (delta > 1e-6) & (it < 100)
    def body(st):
        x, y, t, it, _ = st
        g = a.T @ (a @ y - b)
        z = y - g / lip
        xn = jnp.sign(z) * jnp.maximum(jnp.abs(z) - lam / lip, 0.0)
        tn = 0.5 * (1 + jnp.sqrt(1 + 4 * t * t))
        yn = xn + (t - 1) / tn * (xn - x)
        return xn, yn, tn, it + 1, jnp.max(jnp.abs(xn - x))
    x0 = jnp.zeros(a.shape[1])
    x, _, _, it, _ = lax.while_loop(cond, body, (x0, x0, 1.0, 0, jnp.inf))
    r = a @ x - b
    return x, 0.5 * jnp.sum(r * r) + lam * jnp.sum(jnp.abs(x)), it
""", "f32[4096,8192], f32[4096], f32[]"),
    ("lanczos_full_reorthogonalisation_fori", "numerics", """
def f(hmat, v0):
    m = 64
    n = v0.shape[0]
    v0 = v0 / jnp.linalg.norm(v0)
    basis = jnp.zeros((m, n)).at[0].set(v0)
    def body(j, st):
        basis, alpha, beta = st
        vj = basis[j]
        w = hmat @ vj
        a = jnp.sum(w * vj)
        coef = jnp.sum(basis * w[None, :], axis=1)
        w = w - coef @ basis
        bnorm = jnp.linalg.norm(w)
        basis = basis.at[j + 1].set(jnp.where(j + 1 < m, w / bnorm, 0.0), mode="drop")
        return basis, alpha.at[j].set(a), beta.at[j].set(bnorm)
    basis, alpha, beta = lax.fori_loop(0, m, body, (basis, jnp.zeros(m), jnp.zeros(m)))
    return alpha, beta
""", "f32[4096,4096], f32[4096]"),
    # -- astronomy, time series, finance, genomics ----------------------------------------------------------
    ("lomb_scargle_periodogram_argmax", "astronomy", """
def f(t, y, freqs):
    y = y - jnp.mean(y)
    w = 2 * jnp.pi * freqs
    wt = w[:, None] * t[None, :]
    tau = jnp.arctan2(jnp.sum(jnp.sin(2 * wt), 1), jnp.sum(jnp.cos(2 * wt), 1)) / (2 * w)
    arg = w[:, None] * (t[None, :] - tau[:, None])
    c, s = jnp.cos(arg), jnp.sin(arg)
    p = 0.5 * ((c @ y) ** 2 / jnp.sum(c * c, 1) + (s @ y) ** 2 / jnp.sum(s * s, 1)) / jnp.var(y)
    return p, freqs[jnp.argmax(p)]
""", "f32[4096], f32[4096], f32[8192]"),
    ("matrix_profile_znorm_sliding_distance", "timeseries", """
def f(series):
    m = 128
    n = series.shape[0] - m + 1
    idx = jnp.arange(n)[:, None] + jnp.arange(m)[None, :]
    w = series[idx]
    mu = jnp.mean(w, axis=1)
    sd = jnp.std(w, axis=1) + 1e-8
    qt = w @ w.T
    corr = (qt - m * mu[:, None] * mu[None, :]) / (m * sd[:, None] * sd[None, :])
    dist = jnp.sqrt(jnp.maximum(2 * m * (1 - corr), 0.0))
    excl = jnp.abs(jnp.arange(n)[:, None] - jnp.arange(n)[None, :]) < m // 4
    dist = jnp.where(excl, jnp.inf, dist)
    return jnp.min(dist, axis=1), jnp.argmin(dist, axis=1)
""", "f32[8192]"),
    ("holt_winters_scan_unroll8_sse", "timeseries", """
def f(y, alpha, beta, gamma):
    period = 24
    def step(carry, yt):
        level, trend, season = carry
        s = season[:, 0]
        pred = level + trend + s
        nl = alpha * (yt - s) + (1 - alpha) * (level + trend)
        nt = beta * (nl - level) + (1 - beta) * trend
        ns = gamma * (yt - nl) + (1 - gamma) * s
        season = jnp.concatenate([season[:, 1:], ns[:, None]], axis=1)
        return (nl, nt, season), (yt - pred) ** 2
    init = (y[:, 0], jnp.zeros(y.shape[0]), jnp.zeros((y.shape[0], period)))
    _, err = lax.scan(step, init, y.T, unroll=8)
    return jnp.sum(err, axis=0)
""", "f32[4096,1024], f32[], f32[], f32[]"),
    ("ledoit_wolf_shrinkage_naive_outer_products", "finance", """
def f(x):
    t, n = x.shape
    xc = x - jnp.mean(x, axis=0)
    s = xc.T @ xc / t
    mu = jnp.trace(s) / n
    d2 = jnp.sum((s - mu * jnp.eye(n)) ** 2)
    outer = jnp.einsum("ti,tj->tij", xc, xc)
    b2 = jnp.minimum(jnp.sum((outer - s[None]) ** 2) / t / t, d2)
    return (b2 / d2) * mu * jnp.eye(n) + (1 - b2 / d2) * s
""", "f32[2048,256]"),
    ("expected_shortfall_cvar_sort_scenarios", "finance", """
def f(pnl, weights):
    port = jnp.einsum("psa,a->ps", pnl, weights)
    srt = jnp.sort(port, axis=1)
    k = port.shape[1] // 100
    var = -srt[:, k]
    cvar = -jnp.mean(srt[:, :k], axis=1)
    return var, cvar
""", "f32[256,16384,16], f32[16]"),
    ("linkage_disequilibrium_r2_int8_band_score", "genomics", """
def f(g):
    x = g.astype(jnp.float32)
    mu = jnp.mean(x, axis=0)
    sd = jnp.std(x, axis=0) + 1e-6
    z = (x - mu) / sd
    r = z.T @ z / x.shape[0]
    r2 = r * r
    band = jnp.abs(jnp.arange(r.shape[0])[:, None] - jnp.arange(r.shape[0])[None, :]) < 500
    return jnp.sum(jnp.where(band, r2, 0.0), axis=1)
""", "i8[4096,8192]"),
    ("quantum_partial_trace_renyi2_c64", "quantum", """
def f(psi):
    b = psi.shape[0]
    m = psi.reshape(b, 64, 64)
    m = m / jnp.sqrt(jnp.sum(jnp.abs(m) ** 2, axis=(1, 2), keepdims=True))
    rho = jnp.einsum("bij,bkj->bik", m, jnp.conj(m))
    purity = jnp.real(jnp.sum(rho * jnp.conj(rho), axis=(1, 2)))
    return -jnp.log(purity), jnp.real(jnp.einsum("bii->b", rho))
""", "c64[4096,4096]"),
    # -- probabilistic --------------------------------------------------------------------------------------
    ("rational_quadratic_spline_flow_bin_search", "probabilistic", """
def f(x, ctx, w):
    n, dim = x.shape
    kb = 8
    p = (ctx @ w).reshape(n, dim, 3 * kb - 1)
    wd = jax.nn.softmax(p[..., :kb], -1) * 0.992 + 0.001
    ht = jax.nn.softmax(p[..., kb:2 * kb], -1) * 0.992 + 0.001
    dv = jax.nn.softplus(p[..., 2 * kb:]) + 1e-3
    dv = jnp.pad(dv, [(0, 0), (0, 0), (1, 1)], constant_values=1.0)
    cw = jnp.pad(jnp.cumsum(wd, -1), [(0, 0), (0, 0), (1, 0)]) * 6 - 3
    ch = jnp.pad(jnp.cumsum(ht, -1), [(0, 0), (0, 0), (1, 0)]) * 6 - 3
    xi = jnp.clip(x, -3 + 1e-4, 3 - 1e-4)
    b = jnp.clip(jnp.sum(xi[..., None] >= cw, axis=-1) - 1, 0, kb - 1)[..., None]
    g = lambda t: jnp.take_along_axis(t, b, -1)[..., 0]
    x0, w0, y0, h0 = g(cw), g(cw[..., 1:]) - g(cw), g(ch), g(ch[..., 1:]) - g(ch)
    d0, d1 = g(dv), g(dv[..., 1:])
    s = h0 / w0
    th = (xi - x0) / w0
    den = s + (d0 + d1 - 2 * s) * th * (1 - th)
    y = y0 + h0 * (s * th * th + d0 * th * (1 - th)) / den
    num = s * s * (d1 * th * th + 2 * s * th * (1 - th) + d0 * (1 - th) ** 2)
    return y, jnp.sum(jnp.log(num) - 2 * jnp.log(den), axis=1)
""", "f32[65536,16], f32[65536,64], f32[64,368]"),
    ("kernel_stein_discrepancy_imq_matmul_form", "probabilistic", """
def f(x, mu):
    score = jax.vmap(jax.grad(lambda z: -0.5 * jnp.sum((z - mu) ** 2)))(x)
    n, d = x.shape
    sq = jnp.sum(x * x, 1)
    r2 = sq[:, None] + sq[None, :] - 2 * x @ x.T
    base = 1.0 + r2
    k = base ** -0.5
    ss = score @ score.T
    sx = jnp.sum(score * x, 1)
    sxj = score @ x.T
    t2 = (sxj - sx[:, None]) * (-1.0) * base ** -1.5
    t3 = (sxj.T - sx[None, :]) * (-1.0) * base ** -1.5
    t4 = d * base ** -1.5 - 3.0 * r2 * base ** -2.5
    u = ss * k + t2 + t3 + t4
    u = jnp.where(jnp.eye(n, dtype=bool), 0.0, u)
    return jnp.sum(u) / (n * (n - 1))
""", "f32[4096,32], f32[32]"),
    ("laplace_approximation_hessian_logdet_logistic", "probabilistic", """
def f(w, x, y, prior_prec):
    def neg_log_post(w):
        z = x @ w
        return jnp.sum(jax.nn.softplus(z) - y * z) + 0.5 * prior_prec * jnp.sum(w * w)
    h = jax.hessian(neg_log_post)(w)
    c = jnp.linalg.cholesky(h)
    logdet = 2 * jnp.sum(jnp.log(jnp.diag(c)))
    return -neg_log_post(w) - 0.5 * logdet + 0.5 * w.shape[0] * jnp.log(prior_prec)
""", "f32[256], f32[65536,256], f32[65536], f32[]"),
    # -- reinforcement learning -----------------------------------------------------------------------------
    ("cql_conservative_penalty_sampled_actions", "rl", """
def f(s, a_data, a_samp, log_dens, w1, w2, w3, target):
    def q(sb, ab):
        h = jax.nn.relu(jnp.concatenate([sb, ab], -1) @ w1)
        h = jax.nn.relu(h @ w2)
        return (h @ w3)[..., 0]
    qd = q(s, a_data)
    sr = jnp.broadcast_to(s[:, None, :], (s.shape[0], a_samp.shape[1], s.shape[1]))
    qs = q(sr, a_samp) - log_dens
    cons = jnp.mean(jax.nn.logsumexp(qs, axis=1) - qd)
    return jnp.mean((qd - target) ** 2) + 5.0 * cons
""", "f32[4096,64], f32[4096,8], f32[4096,21,8], f32[4096,21], f32[72,256], f32[256,256], f32[256,1], f32[4096]"),
    ("prioritized_replay_cumsum_searchsorted_is_weights", "rl", """
def f(prio, u, td_err, alpha, beta):
    p = prio ** alpha
    total = jnp.sum(p)
    cdf = jnp.cumsum(p)
    seg = (jnp.arange(u.shape[0]) + u) * total / u.shape[0]
    idx = jnp.clip(jnp.searchsorted(cdf, seg), 0, prio.shape[0] - 1)
    probs = p[idx] / total
    w = (prio.shape[0] * probs) ** (-beta)
    w = w / jnp.max(w)
    return idx, w, prio.at[idx].set(jnp.abs(td_err) + 1e-6)
""", "f32[1048576], f32[4096], f32[4096], f32[], f32[]"),
    # -- graphs and molecules -------------------------------------------------------------------------------
    ("nnconv_edge_conditioned_weights_segment_mean", "graph", """
def f(x, senders, receivers, edge_attr, we1, we2, w_root):
    fi = x.shape[1]
    hw = jax.nn.relu(edge_attr @ we1) @ we2
    we = hw.reshape(-1, fi, fi)
    msg = jnp.einsum("ei,eio->eo", x[senders], we)
    agg = jax.ops.segment_sum(msg, receivers, num_segments=x.shape[0])
    deg = jax.ops.segment_sum(jnp.ones_like(receivers, dtype=jnp.float32), receivers, num_segments=x.shape[0])
    h = jax.nn.relu(agg / jnp.maximum(deg, 1.0)[:, None] + x @ w_root)
    return jnp.sum(h, axis=0)
""", "f32[16384,16], i32[262144], i32[262144], f32[262144,8], f32[8,64], f32[64,256], f32[16,16]"),
    ("graphsage_pool_aggregator_segment_max", "graph", """
def f(x, senders, receivers, w_pool, w_self, w_nbr):
    m = jax.nn.relu(x[senders] @ w_pool)
    agg = jax.ops.segment_max(m, receivers, num_segments=x.shape[0])
    agg = jnp.where(jnp.isfinite(agg), agg, 0.0)
    h = jax.nn.relu(x @ w_self + agg @ w_nbr)
    return h / jnp.maximum(jnp.linalg.norm(h, axis=1, keepdims=True), 1e-12)
""", "f32[65536,64], i32[1048576], i32[1048576], f32[64,64], f32[64,64], f32[64,64]"),
    ("appnp_personalised_pagerank_fori_ce", "graph", """
def f(x, senders, receivers, w1, w2, labels, alpha):
    h0 = jax.nn.relu(x @ w1) @ w2
    deg = jax.ops.segment_sum(jnp.ones(senders.shape[0]), receivers, num_segments=x.shape[0]) + 1.0
    norm = lax.rsqrt(deg[senders] * deg[receivers])
    def prop(_, h):
        agg = jax.ops.segment_sum(norm[:, None] * h[senders], receivers, num_segments=x.shape[0])
        return (1 - alpha) * (agg + h / deg[:, None]) + alpha * h0
    h = lax.fori_loop(0, 10, prop, h0)
    lp = jax.nn.log_softmax(h, -1)
    return -jnp.mean(jnp.take_along_axis(lp, labels[:, None], 1))
""", "f32[65536,128], i32[1048576], i32[1048576], f32[128,64], f32[64,16], i32[65536], f32[]"),
    ("schnet_cfconv_rbf_expansion_filter", "molecular", """
def f(pos, x, senders, receivers, w1, w2, w_in, w_out):
    d = jnp.linalg.norm(pos[senders] - pos[receivers] + 1e-9, axis=-1)
    mu = jnp.linspace(0.0, 5.0, 300)
    rbf = jnp.exp(-10.0 * (d[:, None] - mu[None, :]) ** 2)
    ssp = lambda t: jax.nn.softplus(t) - jnp.log(2.0)
    filt = ssp(rbf @ w1) @ w2
    cut = 0.5 * (jnp.cos(d * jnp.pi / 5.0) + 1.0) * (d < 5.0)
    msg = (x @ w_in)[senders] * filt * cut[:, None]
    v = jax.ops.segment_sum(msg, receivers, num_segments=x.shape[0])
    return x + ssp(v) @ w_out
""", "f32[16384,3], f32[16384,128], i32[524288], i32[524288], f32[300,128], f32[128,128], f32[128,128], f32[128,128]"),
    # -- audio ----------------------------------------------------------------------------------------------
    ("wavenet_mulaw_uint8_targets_softmax_ce", "audio", """
def f(h, w_out, audio_u8):
    logits = jnp.einsum("btc,cq->btq", h, w_out)
    tgt = audio_u8[:, 1:].astype(jnp.int32)
    lp = jax.nn.log_softmax(logits, axis=-1)
    nll = -jnp.mean(jnp.take_along_axis(lp, tgt[..., None], axis=-1))
    q = jnp.argmax(logits, axis=-1).astype(jnp.float32)
    yq = 2 * q / 255.0 - 1
    wav = jnp.sign(yq) * ((1 + 255.0) ** jnp.abs(yq) - 1) / 255.0
    return nll, wav
""", "f32[16,16384,128], f32[128,256], u8[16,16385]"),
    # -- vision ---------------------------------------------------------------------------------------------
    ("canny_gradient_nms_direction_quantised", "vision", """
def f(img, lo, hi):
    sx = (jnp.roll(img, -1, 2) - jnp.roll(img, 1, 2)) * 2 + (jnp.roll(jnp.roll(img, -1, 2), 1, 1)
          - jnp.roll(jnp.roll(img, 1, 2), 1, 1)) + (jnp.roll(jnp.roll(img, -1, 2), -1, 1) - jnp.roll(jnp.roll(img, 1, 2), -1, 1))
    sy = (jnp.roll(img, -1, 1) - jnp.roll(img, 1, 1)) * 2 + (jnp.roll(jnp.roll(img, -1, 1), 1, 2)
          - jnp.roll(jnp.roll(img, 1, 1), 1, 2)) + (jnp.roll(jnp.roll(img, -1, 1), -1, 2) - jnp.roll(jnp.roll(img, 1, 1), -1, 2))
    mag = jnp.hypot(sx, sy)
    ang = jnp.mod(jnp.arctan2(sy, sx) * 180 / jnp.pi, 180.0)
    sector = jnp.round(ang / 45.0).astype(jnp.int32) % 4
    keep = jnp.zeros(img.shape, dtype=bool)
    for s, (dy, dx) in enumerate(((0, 1), (1, 1), (1, 0), (1, -1))):
        a = jnp.roll(mag, (dy, dx), (1, 2))
        b = jnp.roll(mag, (-dy, -dx), (1, 2))
        keep = keep | ((sector == s) & (mag >= a) & (mag >= b))
    nms = jnp.where(keep, mag, 0.0)
    strong = nms > hi
    weak = (nms > lo) & ~strong
    return strong, jnp.sum(strong, axis=(1, 2)), jnp.sum(weak, axis=(1, 2))
""", "f32[32,1024,1024], f32[], f32[]"),  # noqa: E501
    ("map_coordinates_rotation_warp_mse", "vision", """
def f(imgs, angles, target):
    n, hh, ww = imgs.shape
    yy, xx = jnp.meshgrid(jnp.arange(hh, dtype=jnp.float32), jnp.arange(ww, dtype=jnp.float32), indexing="ij")
    def warp(im, th):
        c, s = jnp.cos(th), jnp.sin(th)
        yc, xc = yy - hh / 2, xx - ww / 2
        coords = jnp.stack([c * yc - s * xc + hh / 2, s * yc + c * xc + ww / 2])
        return jax.scipy.ndimage.map_coordinates(im, list(coords), order=1, mode="constant")
    warped = jax.vmap(warp)(imgs, angles)
    return jnp.mean((warped - target) ** 2, axis=(1, 2))
""", "f32[64,512,512], f32[64], f32[64,512,512]"),
    ("guided_filter_integral_image_box_f16", "vision", """
def f(guide, src, eps):
    r = 8
    def box(t):
        s = jnp.cumsum(jnp.cumsum(jnp.pad(t, [(0, 0), (1, 0), (1, 0)]), axis=1), axis=2)
        n = 2 * r + 1
        a = s[:, n:, n:] - s[:, :-n, n:] - s[:, n:, :-n] + s[:, :-n, :-n]
        return jnp.pad(a, [(0, 0), (r, r), (r, r)], mode="edge") / (n * n)
    i = guide.astype(jnp.float32)
    p = src.astype(jnp.float32)
    mi, mp = box(i), box(p)
    cov = box(i * p) - mi * mp
    var = box(i * i) - mi * mi
    a = cov / (var + eps)
    b = mp - a * mi
    q = box(a) * i + box(b)
    return q.astype(jnp.float16), jnp.mean(jnp.abs(q - p), axis=(1, 2))
""", "f16[16,1024,1024], f16[16,1024,1024], f32[]"),
    ("jpeg_dct8x8_quantisation_rate_psnr_uint8", "vision", """
def f(img, qtable):
    n, hh, ww = img.shape
    x = img.astype(jnp.float32) - 128.0
    blk = x.reshape(n, hh // 8, 8, ww // 8, 8).transpose(0, 1, 3, 2, 4)
    k = jnp.arange(8)
    c = jnp.sqrt(jnp.where(k == 0, 1.0, 2.0) / 8)[:, None] * jnp.cos((2 * k[None, :] + 1) * k[:, None] * jnp.pi / 16)
    coef = jnp.einsum("ui,nhwij,vj->nhwuv", c, blk, c)
    q = jnp.round(coef / qtable)
    nnz = jnp.sum(q != 0, axis=(1, 2, 3, 4))
    rec = jnp.einsum("ui,nhwuv,vj->nhwij", c, q * qtable, c)
    rec = jnp.clip(rec.transpose(0, 1, 3, 2, 4).reshape(n, hh, ww) + 128.0, 0, 255)
    mse = jnp.mean((rec - img.astype(jnp.float32)) ** 2, axis=(1, 2))
    return nnz, 10 * jnp.log10(255.0 ** 2 / mse)
""", "u8[64,512,512], f32[8,8]"),
    ("white_tophat_uint16_microscopy_reduce_window", "vision", """
def f(img, thresh):
    x = img.astype(jnp.float32)
    er = lax.reduce_window(x, jnp.inf, lax.min, (1, 9, 9), (1, 1, 1), "SAME")
    op = lax.reduce_window(er, -jnp.inf, lax.max, (1, 9, 9), (1, 1, 1), "SAME")
    th = x - op
    fg = th > thresh
    return jnp.sum(fg, axis=(1, 2)), jnp.sum(jnp.where(fg, th, 0.0), axis=(1, 2))
""", "u16[32,1024,1024], f32[]"),
    ("template_matching_ncc_conv_argmax_odd", "vision", """
def f(img, tmpl):
    th, tw = tmpl.shape[2:]
    t = tmpl - jnp.mean(tmpl)
    tn = jnp.sqrt(jnp.sum(t * t))
    num = lax.conv_general_dilated(img, t, (1, 1), "VALID")
    s1 = lax.reduce_window(img, 0.0, lax.add, (1, 1, th, tw), (1, 1, 1, 1), "VALID")
    s2 = lax.reduce_window(img * img, 0.0, lax.add, (1, 1, th, tw), (1, 1, 1, 1), "VALID")
    var = jnp.maximum(s2 - s1 * s1 / (th * tw), 1e-6)
    ncc = (num / (jnp.sqrt(var) * tn))[:, 0]
    flat = ncc.reshape(ncc.shape[0], -1)
    best = jnp.argmax(flat, axis=1)
    return best // ncc.shape[2], best % ncc.shape[2], jnp.max(flat, axis=1)
""", "f32[16,1,1024,1024], f32[1,1,32,32]"),
    # -- metrics and metric learning ------------------------------------------------------------------------
    ("bleu4_clipped_ngram_counts_int32", "metrics", """
def f(cand, refs):
    logp = 0.0
    for n in range(1, 5):
        def grams(t):
            h = t[..., : t.shape[-1] - n + 1]
            for i in range(1, n):
                h = h * 50021 + t[..., i: t.shape[-1] - n + 1 + i]
            return h
        cg = grams(cand)
        rg = grams(refs)
        cnt = jnp.sum(cg[:, :, None] == cg[:, None, :], axis=2)
        rcnt = jnp.max(jnp.sum(cg[:, None, :, None] == rg[:, :, None, :], axis=3), axis=1)
        clipped = jnp.sum(jnp.minimum(cnt, rcnt) / cnt, axis=1)
        logp = logp + 0.25 * jnp.log(jnp.maximum(clipped, 1e-9) / cg.shape[1])
    bp = jnp.minimum(1.0, jnp.exp(1.0 - refs.shape[-1] / cand.shape[-1]))
    return bp * jnp.exp(logp)
""", "i32[256,128], i32[256,4,128]"),
    ("generative_precision_recall_knn_radii", "metrics", """
def f(real, fake):
    def pd(a, b):
        return jnp.sum(a * a, 1)[:, None] + jnp.sum(b * b, 1)[None, :] - 2 * a @ b.T
    rr = -lax.top_k(-pd(real, real), 4)[0][:, 3]
    ff = -lax.top_k(-pd(fake, fake), 4)[0][:, 3]
    d_fr = pd(fake, real)
    precision = jnp.mean(jnp.any(d_fr <= rr[None, :], axis=1))
    recall = jnp.mean(jnp.any(d_fr.T <= ff[None, :], axis=1))
    return precision, recall
""", "f32[8192,512], f32[8192,512]"),
    ("crps_fair_ensemble_pairwise_latitude_weighted", "weather", """
def f(ens, obs, lat):
    m = ens.shape[0]
    skill = jnp.mean(jnp.abs(ens - obs[None]), axis=0)
    spread = jnp.sum(jnp.abs(ens[:, None] - ens[None, :]), axis=(0, 1)) / (2 * m * (m - 1))
    crps = skill - spread
    w = jnp.cos(jnp.deg2rad(lat))
    w = w / jnp.mean(w)
    return jnp.mean(crps * w[:, None])
""", "f32[50,181,360], f32[181,360], f32[181]"),
    # -- training idioms ------------------------------------------------------------------------------------
    ("mlp_block_checkpoint_dots_saveable_grad", "training", """
def f(x, w1, w2, g):
    def block(x, w1, w2):
        mu = jnp.mean(x, -1, keepdims=True)
        h = (x - mu) * lax.rsqrt(jnp.var(x, -1, keepdims=True) + 1e-5) * g
        return x + jax.nn.gelu(h @ w1) @ w2
    blk = jax.checkpoint(block, policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable)
    def loss(w1, w2):
        return jnp.mean(blk(x, w1, w2) ** 2)
    return jax.grad(loss, argnums=(0, 1))(w1, w2)
""", "f32[8,1024,1024], f32[1024,4096], f32[4096,1024], f32[1024]"),
    ("scan_layers_remat_nothing_saveable_unroll2", "training", """
def f(x, ws, bs, y):
    def layer(h, p):
        w, b = p
        h = h + jnp.tanh(h @ w + b)
        return h * lax.rsqrt(jnp.mean(h * h, -1, keepdims=True) + 1e-6), None
    layer = jax.checkpoint(layer, policy=jax.checkpoint_policies.nothing_saveable)
    def loss(ws, bs):
        h, _ = lax.scan(layer, x, (ws, bs), unroll=2)
        return jnp.mean((h - y) ** 2)
    return jax.value_and_grad(loss)(ws, bs)
""", "f32[4096,768], f32[12,768,768], f32[12,768], f32[4096,768]"),
    ("empirical_ntk_jacrev_mlp_kernel_regression", "theory", """
def f(w1, w2, x, y):
    def net(params, xs):
        a, b = params
        return (jnp.tanh(xs @ a) @ b)[:, 0]
    jac = jax.jacrev(net)((w1, w2), x)
    j = jnp.concatenate([jac[0].reshape(x.shape[0], -1), jac[1].reshape(x.shape[0], -1)], axis=1)
    k = j @ j.T
    alpha = jnp.linalg.solve(k + 1e-3 * jnp.eye(k.shape[0]), y)
    return jnp.trace(k), jnp.sum(alpha * y)
""", "f32[32,256], f32[256,1], f32[512,32], f32[512]"),
]


SCRIPT = OutsideFamily("guide_predictor_holdout17", FAMILY, PROGRAMS, __doc__ or "")
__doc__, FILES, programs, main = SCRIPT.usage, SCRIPT.files, SCRIPT.programs, SCRIPT.main

if __name__ == "__main__":
    raise SystemExit(main())
