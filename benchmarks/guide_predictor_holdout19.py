"""An eighteenth holdout, wild18: an outside review's 54 programs of object-detection, segmentation, sequence-model,
decoding, retrieval, interpretability, recommendation, reinforcement-learning, graph, physics, vision, generative,
kernel, statistics, ranking, uncertainty, audio, genomics, meta-learning, spiking-network, knowledge-graph, speech,
point-cloud, protein, quantisation, metric, finance, tabular and contrastive code, in idioms the earlier families do
not name, scored first against the predictor frozen at commit eb6a65fd.

The programs are not this project's: a reviewer from outside, who neither wrote nor read the rules, wrote them
from the definitions of the computations, the way JAX libraries and research code write them, at their usual
shapes: RetinaNet's anchor matching (an 8 x 76,725 x 64 IoU table under ``vmap``, best and low-quality matches,
ignored anchors) before a sigmoid focal loss over 80 classes and a smooth-L1 box loss, YOLOX's SimOTA assignment
(a pairwise BCE class cost over 40 ground truths x 8,400 anchors x 80 classes, about 860 MB, IoU costs, a dynamic k
from a ``top_k`` of IoUs, a scatter-max of candidates), Soft-NMS's Gaussian decay in a ``fori_loop`` of 300 picks
over a 2,048 x 2,048 IoU table for 16 images under ``vmap``, SOLOv2's Matrix NMS from ``f16`` masks (mask IoUs by
a matmul, ``argsort`` by score), a Mask R-CNN mask head whose class channel is taken by ``take_along_axis`` from
``bf16`` logits with the head's ``value_and_grad``; Lovasz-Softmax per class (``argsort`` of a million errors,
``cumsum`` Jaccard gradients, ``vmap`` over 21 classes), a generalised Dice and cross-entropy over 150 one-hot
classes from ``bf16`` logits (about 630 MB as ``f32``), clDice's soft skeleton by iterated min- and max-pooling in
a Python loop (a tiny table), boundary IoU from ``uint8`` label maps by a 7 x 7 erosion of 19 one-hot masks; a CTC
loss by its blank-interleaved alpha recursion in a ``scan`` under ``vmap`` with its ``value_and_grad``, paged
KV-cache decoding (keys and values gathered through a block table, grouped-query heads, ``bf16``), FIRE's
functional position bias (an MLP over a 2,048 x 2,048 x 32 table of normalised log distances under
``jax.checkpoint``) with its ``value_and_grad``, causal linear attention by a ``cumsum`` of key-value outer
products read by a multiply-and-sum, Informer's ProbSparse query selection (sampled keys by a gather, a ``top_k``
of queries, a scatter of their outputs), SPLADE's log-saturated max-pooled vocabulary weights from ``bf16`` hidden
states (32 x 200 x 30,522) with the FLOPS regulariser, a top-k sparse autoencoder decoding by scatters into a
4,096 x 32,768 latent table with a dead-latent auxiliary loss, MaskGIT's Gumbel confidence re-masking (random draws
the size of a ``bf16`` 16 x 1,024 x 8,192 logit table, a ``sort`` per row); a field-aware factorization machine
(a 4,096 x 39 x 39 x 8 gather, a three-operand ``einsum`` with a triangular mask) with the gradient of its 250 MB
table, GRU4Rec's BPR-max over 8,192 in-batch negatives; IQN's cosine quantile embedding (512 x 64 x 3,136) with the
pairwise quantile Huber loss and its gradient, HL-Gauss value targets by ``erf`` bin differences (a tiny table), a
Dreamer-style RSSM imagination of 15 steps in a ``scan`` under ``jax.checkpoint`` with straight-through categorical
samples drawn in the program (``uint32`` key) and the actor's gradient through lambda-returns by a reverse
``scan``; label propagation over a dense 8,192 x 8,192 RBF affinity in a ``fori_loop``, DimeNet-style triplet
angle bases (two million triplets, Legendre polynomials in a Python loop, ``segment_sum``) with forces by
``jax.vjp``; a Cahn-Hilliard semi-implicit spectral step by ``rfft2`` in a ``fori_loop``, percolation cluster
labels in a ``while_loop`` until nothing changes with spanning clusters by a pairwise comparison, a tight-binding
band energy (``complex64`` Bloch Hamiltonians by an ``einsum``, ``eigvalsh``, the Fermi level by bisection in a
``while_loop``), a plate's biharmonic residual by ``f16`` stencil convolutions; CIEDE2000 colour differences of
``uint8`` sRGB images, HOG orientation histograms by scatter-adds with L2-Hys block norms, neighbourhood attention
over 7 x 7 windows stacked from 49 shifts in ``bf16`` (about 315 MB of stacked keys); a VQ-VAE's EMA codebook
update with Laplace smoothing by a 32,768 x 4,096 one-hot, a residual flow's log-determinant by a power series of
``jax.jvp`` products with its ``value_and_grad`` (a tiny table); an MMD over five stacked RBF bandwidths, a Nystrom
kernel ridge (a 65,536 x 2,048 Matern table, a Cholesky), KID's cubic polynomial kernel over 100 gathered subsets
under ``vmap`` (about 820 MB of gathered features), a Hawkes process's pairwise log-likelihood with its
``value_and_grad``, a sliced Wasserstein distance by sorted projections with its gradient, NeuralSort's relaxed
permutation matrix with its ``value_and_grad``, SNGP's Laplace precision and predictive variance by three-operand
``einsum`` calls, MinHash signatures of ``uint32`` shingles with pairwise Jaccard estimates (a ``bool`` table of
134 million); PCEN on mel energies of an STFT from gathered frames, its IIR smoother a ``scan``; Smith-Waterman
local alignment of ``int8`` sequences by a row ``scan`` with ``cummax`` under ``vmap``; MAML's five inner steps
with second-order meta-gradients under ``vmap`` over 64 tasks (a tiny table), a leaky integrate-and-fire spiking
network with surrogate gradients in a ``scan`` under ``jax.checkpoint`` from ``bool`` input spikes, RotatE's
``complex64`` rotations with self-adversarial negative sampling (a 1,024 x 256 x 250 gather) and its gradient,
wav2vec 2.0's contrastive loss over 100 gathered distractors (about 660 MB) with the codebook diversity loss;
PointNet++'s ball query (a ``sort`` of 16 x 1,024 x 8,192 indices) with grouping and max-pooling, AlphaFold's FAPE
over 256 frames x 3,584 atoms; SmoothQuant's migrated ``int8`` per-channel quantisation of ``bf16`` operands with an
``int32`` ``dot_general``, BERTScore's greedy cosine matching with idf weights in ``bf16`` (a tiny table), a
down-and-out barrier option over antithetic paths by a ``cumsum`` with Brownian-bridge crossing probabilities,
TabNet-style decision steps with entmax-1.5 by bisection in a ``fori_loop``, and instance discrimination's NCE
against 4,096 negatives gathered from a memory bank of 1.28 million. ``f32``, ``bf16``, ``f16``, ``int8``,
``uint8``, ``int32``, ``uint32``, ``bool`` and ``complex64``, odd, power-of-two, tiny (1 to 4 MB) and huge
(0.5 to 1 GB) tables. Where a table is computed in a loop, the harness counts it times the loop's literal trip
count (TabNet's entmax bisection, 30 trips; the Fermi-level bisection's bound, 100; Soft-NMS's 300 picks), as it
does for every family. The reviewer recorded ``predict()``'s answers (``guide_predictor_family.predicted``,
calibrated) for every program and target before any compile (main then at eb6a65fd; the record's sha256 is
``214367aacd041581...``, 54 programs, committed with the programs before the first compile), then compiled them
with this harness for the truth; the first evaluation's answers equal the record's on every one of the 162 rows.
None of the 54 programs is left out: every compile finished within the 90 s the review allowed one (the slowest,
the DimeNet-style forces on the TPU in 60 s, the Cahn-Hilliard steps on the TPU in 51 s and CIEDE2000 on the TPU
in 26 s). One program was changed before the record, none after: percolation's ``while_loop`` lost an iteration
cap (its literal bound would have made the harness count the labels 4,096 times).

**Ground truth** and **scores** as the first holdout's (``guide_predictor_holdout.score_programs``).

"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_holdout import OutsideFamily  # noqa: E402

FAMILY = "wild18"

#: (name, kind, body defining ``f``, argument specs), as the review wrote them.
PROGRAMS: list[tuple[str, str, str, str]] = [
    # -- detection ------------------------------------------------------------------------------------------
    ("retinanet_anchor_iou_matching_focal_smooth_l1", "detection", """
def f(cls_logits, box_deltas, anchors, gt_boxes, gt_labels, gt_valid):
    def pair_iou(a, g):
        lt = jnp.maximum(a[:, None, :2], g[None, :, :2])
        rb = jnp.minimum(a[:, None, 2:], g[None, :, 2:])
        wh = jnp.clip(rb - lt, 0.0)
        inter = wh[..., 0] * wh[..., 1]
        area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
        area_g = (g[:, 2] - g[:, 0]) * (g[:, 3] - g[:, 1])
        return inter / (area_a[:, None] + area_g[None, :] - inter + 1e-9)
    iou = jax.vmap(pair_iou, in_axes=(None, 0))(anchors, gt_boxes)
    iou = jnp.where(gt_valid[:, None, :], iou, -1.0)
    best_iou = jnp.max(iou, axis=-1)
    best_gt = jnp.argmax(iou, axis=-1)
    gt_best = jnp.max(iou, axis=1, keepdims=True)
    low_quality = jnp.any((iou == gt_best) & gt_valid[:, None, :] & (gt_best > 0), axis=-1)
    pos = (best_iou >= 0.5) | low_quality
    ignore = (best_iou >= 0.4) & ~pos
    labels = jnp.take_along_axis(gt_labels, best_gt, axis=1)
    t = jax.nn.one_hot(jnp.where(pos, labels, -1), cls_logits.shape[-1])
    x = cls_logits
    p = jax.nn.sigmoid(x)
    ce = jnp.maximum(x, 0) - x * t + jnp.log1p(jnp.exp(-jnp.abs(x)))
    p_t = p * t + (1 - p) * (1 - t)
    alpha_t = 0.25 * t + 0.75 * (1 - t)
    focal = jnp.where(ignore[..., None], 0.0, alpha_t * (1 - p_t) ** 2 * ce)
    num_pos = jnp.maximum(jnp.sum(pos), 1)
    matched = jax.vmap(lambda g, i: g[i])(gt_boxes, best_gt)
    aw = anchors[:, 2] - anchors[:, 0]
    ah = anchors[:, 3] - anchors[:, 1]
    acx = anchors[:, 0] + 0.5 * aw
    acy = anchors[:, 1] + 0.5 * ah
    gw = matched[..., 2] - matched[..., 0]
    gh = matched[..., 3] - matched[..., 1]
    target = jnp.stack([(matched[..., 0] + 0.5 * gw - acx) / aw, (matched[..., 1] + 0.5 * gh - acy) / ah,
                        jnp.log(jnp.maximum(gw, 1e-3) / aw), jnp.log(jnp.maximum(gh, 1e-3) / ah)], axis=-1)
    d = jnp.abs(box_deltas - target)
    reg = jnp.where(d < 1.0 / 9, 4.5 * d * d, d - 0.5 / 9)
    box_loss = jnp.sum(jnp.where(pos[..., None], reg, 0.0))
    return (jnp.sum(focal) + box_loss) / num_pos
""", "f32[8,76725,80], f32[8,76725,4], f32[76725,4], f32[8,64,4], i32[8,64], bool[8,64]"),
    ("yolox_simota_pairwise_bce_cost_dynamic_k", "detection", """
def f(cls_logits, obj_logits, pred_boxes, gt_boxes, gt_classes, gt_valid):
    def xyxy(b):
        return jnp.concatenate([b[..., :2] - b[..., 2:] / 2, b[..., :2] + b[..., 2:] / 2], axis=-1)
    def one(cls, obj, pb, gb, gc, gv):
        p, g = xyxy(pb), xyxy(gb)
        lt = jnp.maximum(g[:, None, :2], p[None, :, :2])
        rb = jnp.minimum(g[:, None, 2:], p[None, :, 2:])
        wh = jnp.clip(rb - lt, 0.0)
        inter = wh[..., 0] * wh[..., 1]
        iou = inter / (gb[:, None, 2] * gb[:, None, 3] + pb[None, :, 2] * pb[None, :, 3] - inter + 1e-9)
        inside = jnp.all(jnp.abs(pb[None, :, :2] - gb[:, None, :2]) < 0.5 * gb[:, None, 2:], axis=-1)
        probs = jnp.sqrt(jax.nn.sigmoid(cls) * jax.nn.sigmoid(obj)[:, None])
        onehot = jax.nn.one_hot(gc, cls.shape[-1])
        pp = probs[None, :, :]
        bce = -(onehot[:, None, :] * jnp.log(pp + 1e-8) + (1 - onehot[:, None, :]) * jnp.log(1 - pp + 1e-8))
        cost = jnp.sum(bce, axis=-1) + 3.0 * -jnp.log(iou + 1e-8) + 1e5 * (~inside)
        cost = jnp.where(gv[:, None], cost, 1e8)
        top_iou, _ = lax.top_k(iou, 10)
        dyn_k = jnp.maximum(jnp.sum(top_iou, axis=-1).astype(jnp.int32), 1)
        _, cand = lax.top_k(-cost, 10)
        take = (jnp.arange(10)[None, :] < dyn_k[:, None]) & gv[:, None]
        n_gt = cost.shape[0]
        match = jnp.zeros_like(cost).at[jnp.arange(n_gt)[:, None], cand].max(take.astype(cost.dtype))
        multi = jnp.sum(match, axis=0) > 1
        cheapest = jnp.argmin(cost, axis=0)
        match = jnp.where(multi[None, :], (jnp.arange(n_gt)[:, None] == cheapest[None, :]).astype(cost.dtype), match)
        fg = jnp.sum(match, axis=0) > 0
        matched_iou = jnp.sum(match * iou, axis=0)
        cls_target = jnp.einsum('ga,gc->ac', match, onehot) * matched_iou[:, None]
        x = cls
        cls_loss = jnp.sum(jnp.where(fg[:, None], jnp.maximum(x, 0) - x * cls_target
                                     + jnp.log1p(jnp.exp(-jnp.abs(x))), 0.0))
        obj_loss = jnp.sum(jnp.maximum(obj, 0) - obj * fg + jnp.log1p(jnp.exp(-jnp.abs(obj))))
        iou_loss = jnp.sum(jnp.where(fg, 1.0 - matched_iou ** 2, 0.0))
        return cls_loss + obj_loss + 5.0 * iou_loss, jnp.sum(fg)
    losses, n_fg = jax.vmap(one)(cls_logits, obj_logits, pred_boxes, gt_boxes, gt_classes, gt_valid)
    return jnp.sum(losses) / jnp.maximum(jnp.sum(n_fg), 1)
""", "f32[8,8400,80], f32[8,8400], f32[8,8400,4], f32[8,40,4], i32[8,40], bool[8,40]"),
    ("soft_nms_gaussian_decay_fori_vmap_images", "detection", """
def f(boxes, scores):
    def one(b, s):
        area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
        lt = jnp.maximum(b[:, None, :2], b[None, :, :2])
        rb = jnp.minimum(b[:, None, 2:], b[None, :, 2:])
        wh = jnp.clip(rb - lt, 0.0)
        inter = wh[..., 0] * wh[..., 1]
        iou = inter / (area[:, None] + area[None, :] - inter)
        def body(i, carry):
            cur, live = carry
            j = jnp.argmax(jnp.where(live, cur, -jnp.inf))
            live = live.at[j].set(False)
            cur = jnp.where(live, cur * jnp.exp(-(iou[j] ** 2) / 0.5), cur)
            return cur, live
        final, _ = lax.fori_loop(0, 300, body, (s, jnp.ones(s.shape, bool)))
        return jnp.sum(final > 0.05), jnp.sum(jnp.where(final > 0.05, final, 0.0))
    kept, mass = jax.vmap(one)(boxes, scores)
    return jnp.mean(kept.astype(jnp.float32)), jnp.mean(mass)
""", "f32[16,2048,4], f32[16,2048]"),
    ("solov2_matrix_nms_mask_iou_decay_f16", "detection", """
def f(mask_logits, cate_scores, cate_labels):
    def one(m, s, lab):
        order = jnp.argsort(-s)
        s, lab, m = s[order], lab[order], m[order]
        prob = jax.nn.sigmoid(m.astype(jnp.float32))
        seg = (prob > 0.5).astype(jnp.float16)
        areas = jnp.sum(seg.astype(jnp.float32), axis=1)
        inter = (seg @ seg.T).astype(jnp.float32)
        union = areas[:, None] + areas[None, :] - inter
        iou = jnp.triu(inter / jnp.maximum(union, 1.0), k=1)
        same = (lab[:, None] == lab[None, :]).astype(jnp.float32)
        decay_iou = iou * jnp.triu(same, k=1)
        comp = jnp.max(decay_iou, axis=0)
        decay = jnp.min(jnp.exp(-2.0 * (decay_iou ** 2 - comp[:, None] ** 2)), axis=0)
        mask_score = jnp.sum(prob * seg, axis=1) / jnp.maximum(areas, 1.0)
        final = s * decay * mask_score
        return jnp.sum(final > 0.05), jnp.mean(final)
    kept, mean_score = jax.vmap(one)(mask_logits, cate_scores, cate_labels)
    return jnp.mean(kept.astype(jnp.float32)), jnp.mean(mean_score)
""", "f16[4,500,60800], f32[4,500], i32[4,500]"),
    ("maskrcnn_mask_head_class_gather_bce_value_and_grad_bf16", "detection", """
def f(feats, w_mask, roi_labels, mask_targets, fg):
    def loss(w):
        logits = jnp.einsum('rdhw,dc->rchw', feats, w)
        x = jnp.take_along_axis(logits, roi_labels[:, None, None, None], axis=1)[:, 0].astype(jnp.float32)
        t = mask_targets.astype(jnp.float32)
        bce = jnp.maximum(x, 0) - x * t + jnp.log1p(jnp.exp(-jnp.abs(x)))
        per_roi = jnp.mean(bce, axis=(1, 2))
        return jnp.sum(jnp.where(fg, per_roi, 0.0)) / jnp.maximum(jnp.sum(fg), 1)
    return jax.value_and_grad(loss)(w_mask)
""", "bf16[512,256,28,28], bf16[256,81], i32[512], u8[512,28,28], bool[512]"),
    # -- segmentation ---------------------------------------------------------------------------------------
    ("lovasz_softmax_per_class_sort_cumsum_vmap", "segmentation", """
def f(logits, labels):
    c = logits.shape[1]
    probs = jnp.moveaxis(jax.nn.softmax(logits, axis=1), 1, -1).reshape(-1, c)
    lab = labels.reshape(-1)
    valid = lab != 255
    def per_class(k, pk):
        fg = ((lab == k) & valid).astype(jnp.float32)
        err = jnp.where(valid, jnp.abs(fg - pk), -1.0)
        order = jnp.argsort(-err)
        e, g = err[order], fg[order]
        gts = jnp.sum(g)
        inter = gts - jnp.cumsum(g)
        union = gts + jnp.cumsum(1.0 - g)
        jac = 1.0 - inter / union
        grad = jnp.concatenate([jac[:1], jac[1:] - jac[:-1]])
        return jnp.dot(jnp.maximum(e, 0.0), grad), gts > 0
    losses, present = jax.vmap(per_class)(jnp.arange(c), probs.T)
    return jnp.sum(jnp.where(present, losses, 0.0)) / jnp.maximum(jnp.sum(present), 1)
""", "f32[4,21,512,512], i32[4,512,512]"),
    ("generalized_dice_ce_150_classes_one_hot_bf16", "segmentation", """
def f(logits, labels):
    p = jax.nn.softmax(logits.astype(jnp.float32), axis=1)
    oh = jax.nn.one_hot(labels, logits.shape[1], axis=1, dtype=jnp.float32)
    axes = (0, 2, 3)
    w = 1.0 / jnp.maximum(jnp.sum(oh, axis=axes) ** 2, 1.0)
    inter = jnp.sum(p * oh, axis=axes)
    denom = jnp.sum(p + oh, axis=axes)
    gdl = 1.0 - 2.0 * jnp.sum(w * inter) / jnp.sum(w * denom)
    ce = -jnp.mean(jnp.sum(oh * jnp.log(p + 1e-8), axis=1))
    return gdl + ce
""", "bf16[4,150,512,512], i32[4,512,512]"),
    ("cldice_soft_skeleton_minmax_pool_tiny", "segmentation", """
def f(pred_logits, target):
    def maxpool(x, win):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1) + win, (1, 1, 1, 1), 'SAME')
    def erode(x):
        return jnp.minimum(-maxpool(-x, (3, 1)), -maxpool(-x, (1, 3)))
    def dilate(x):
        return maxpool(x, (3, 3))
    def skeleton(x):
        s = jax.nn.relu(x - dilate(erode(x)))
        for _ in range(10):
            x = erode(x)
            d = jax.nn.relu(x - dilate(erode(x)))
            s = s + jax.nn.relu(d - s * d)
        return s
    p = jax.nn.sigmoid(pred_logits)
    t = target.astype(jnp.float32)
    sp, st = skeleton(p), skeleton(t)
    tprec = (jnp.sum(sp * t) + 1.0) / (jnp.sum(sp) + 1.0)
    tsens = (jnp.sum(st * p) + 1.0) / (jnp.sum(st) + 1.0)
    cl = 1.0 - 2.0 * tprec * tsens / (tprec + tsens)
    dice = 1.0 - (2.0 * jnp.sum(p * t) + 1.0) / (jnp.sum(p) + jnp.sum(t) + 1.0)
    return 0.5 * dice + 0.5 * cl
""", "f32[4,1,384,384], bool[4,1,384,384]"),
    ("boundary_iou_eroded_one_hot_uint8_labels", "segmentation", """
def f(pred_labels, gt_labels):
    def boundary(lab):
        oh = (lab[..., None] == jnp.arange(19, dtype=jnp.uint8)).astype(jnp.uint8)
        er = lax.reduce_window(oh, jnp.uint8(1), lax.min, (1, 7, 7, 1), (1, 1, 1, 1), 'SAME')
        return (oh == 1) & (er == 0)
    bp, bg = boundary(pred_labels), boundary(gt_labels)
    inter = jnp.sum(bp & bg, axis=(0, 1, 2))
    union = jnp.sum(bp | bg, axis=(0, 1, 2))
    return jnp.mean(jnp.where(union > 0, inter / jnp.maximum(union, 1), 1.0))
""", "u8[8,1024,2048], u8[8,1024,2048]"),
    # -- sequence models and decoding -----------------------------------------------------------------------
    ("ctc_blank_interleaved_alpha_scan_vmap_value_and_grad", "sequence", """
def f(logits, labels, label_lens, input_lens):
    neg = -1e30
    def one(lp, lab, n_lab, n_in):
        s_len = 2 * lab.shape[0] + 1
        ext = jnp.zeros((s_len,), jnp.int32).at[1::2].set(lab)
        em = lp[:, ext]
        s = jnp.arange(s_len)
        skip_ok = (s % 2 == 1) & (s >= 2) & (ext != jnp.roll(ext, 2))
        alpha0 = jnp.where(s < 2, em[0], neg)
        def step(alpha, xs):
            t, e = xs
            a1 = jnp.concatenate([jnp.full((1,), neg), alpha[:-1]])
            a2 = jnp.where(skip_ok, jnp.concatenate([jnp.full((2,), neg), alpha[:-2]]), neg)
            new = jnp.logaddexp(jnp.logaddexp(alpha, a1), a2) + e
            return jnp.where(t < n_in, new, alpha), None
        alpha, _ = lax.scan(step, alpha0, (jnp.arange(1, lp.shape[0]), em[1:]))
        end = 2 * n_lab
        return -jnp.logaddexp(alpha[end], alpha[end - 1]) / jnp.maximum(n_lab, 1)
    def loss(z):
        logp = jax.nn.log_softmax(z, axis=-1)
        return jnp.mean(jax.vmap(one)(logp, labels, label_lens, input_lens))
    return jax.value_and_grad(loss)(logits)
""", "f32[32,800,1024], i32[32,200], i32[32], i32[32]"),
    ("paged_kv_cache_gqa_decode_block_table_gather_bf16", "sequence", """
def f(q, k_pool, v_pool, block_tables, context_lens, w_out):
    b, hq, d = q.shape
    _, bs, hk, _ = k_pool.shape
    k = k_pool[block_tables].reshape(b, -1, hk, d)
    v = v_pool[block_tables].reshape(b, -1, hk, d)
    qg = q.reshape(b, hk, hq // hk, d)
    s = jnp.einsum('bhgd,bthd->bhgt', qg, k, preferred_element_type=jnp.float32) / jnp.sqrt(float(d))
    pos = jnp.arange(k.shape[1])
    s = jnp.where(pos[None, None, None, :] < context_lens[:, None, None, None], s, -jnp.inf)
    p = jax.nn.softmax(s, axis=-1)
    o = jnp.einsum('bhgt,bthd->bhgd', p.astype(v.dtype), v).reshape(b, hq * d)
    logits = jnp.dot(o, w_out, preferred_element_type=jnp.float32)
    return jnp.mean(jnp.max(jax.nn.log_softmax(logits, axis=-1), axis=-1))
""", "bf16[32,32,128], bf16[4096,16,8,128], bf16[4096,16,8,128], i32[32,128], i32[32], bf16[4096,32000]"),
    ("fire_position_bias_mlp_checkpoint_causal_value_and_grad", "sequence", """
def f(q, k, v, w1, b1, w2, c_raw):
    t = q.shape[2]
    i = jnp.arange(t)[:, None]
    j = jnp.arange(t)[None, :]
    def loss(w1, b1, w2, c_raw):
        c = jax.nn.softplus(c_raw[0])
        rel = jnp.maximum(i - j, 0).astype(jnp.float32)
        norm = jnp.log(c * rel + 1.0) / jnp.log(c * jnp.maximum(i, 512).astype(jnp.float32) + 1.0)
        @jax.checkpoint
        def mlp(x):
            h = jax.nn.relu(x[..., None] * w1[0] + b1)
            return h @ w2
        bias = jnp.transpose(mlp(norm), (2, 0, 1))
        s = jnp.einsum('bhqd,bhkd->bhqk', q, k) / 8.0 + bias[None]
        s = jnp.where(j <= i, s, -1e30)
        o = jnp.einsum('bhqk,bhkd->bhqd', jax.nn.softmax(s, axis=-1), v)
        return jnp.mean(o ** 2)
    return jax.value_and_grad(loss, argnums=(0, 1, 2, 3))(w1, b1, w2, c_raw)
""", "f32[2,8,2048,64], f32[2,8,2048,64], f32[2,8,2048,64], f32[1,32], f32[32], f32[32,8], f32[1]"),
    ("causal_linear_attention_cumsum_outer_products_mul_sum", "sequence", """
def f(q, k, v, target):
    fq = jax.nn.elu(q) + 1.0
    fk = jax.nn.elu(k) + 1.0
    kv = jnp.cumsum(fk[..., :, None] * v[..., None, :], axis=1)
    z = jnp.cumsum(fk, axis=1)
    num = jnp.sum(fq[..., :, None] * kv, axis=2)
    den = jnp.sum(fq * z, axis=-1, keepdims=True)
    out = num / (den + 1e-6)
    return jnp.mean((out - target) ** 2)
""", "f32[4,2048,64], f32[4,2048,64], f32[4,2048,64], f32[4,2048,64]"),
    ("informer_probsparse_sampled_keys_topk_queries", "sequence", """
def f(q, k, v, sample_idx):
    b, h, length, d = q.shape
    k_sample = k[:, :, sample_idx, :]
    qk_sample = jnp.einsum('bhld,bhlsd->bhls', q, k_sample)
    m = jnp.max(qk_sample, axis=-1) - jnp.sum(qk_sample, axis=-1) / length
    n_top = sample_idx.shape[1]
    _, top = lax.top_k(m, n_top)
    q_red = jnp.take_along_axis(q, top[..., None], axis=2)
    s = jnp.einsum('bhud,bhkd->bhuk', q_red, k) / jnp.sqrt(float(d))
    upd = jnp.einsum('bhuk,bhkd->bhud', jax.nn.softmax(s, axis=-1), v)
    ctx = jnp.broadcast_to(jnp.mean(v, axis=2, keepdims=True), v.shape)
    ctx = ctx.at[jnp.arange(b)[:, None, None], jnp.arange(h)[None, :, None], top].set(upd)
    return jnp.mean(ctx ** 2)
""", "f32[32,8,1024,64], f32[32,8,1024,64], f32[32,8,1024,64], i32[1024,35]"),
    ("splade_log_saturation_max_pool_flops_regularizer_bf16", "retrieval", """
def f(q_hidden, d_hidden, w_vocab, b_vocab, q_mask, d_mask):
    def rep(hid, m):
        logits = jnp.einsum('bld,dv->blv', hid, w_vocab).astype(jnp.float32) + b_vocab
        w = jnp.where(m[..., None], jnp.log1p(jax.nn.relu(logits)), 0.0)
        return jnp.max(w, axis=1)
    qr, dr = rep(q_hidden, q_mask), rep(d_hidden, d_mask)
    scores = qr @ dr.T
    idx = jnp.arange(scores.shape[0])
    rank = jnp.mean(jax.nn.logsumexp(scores, axis=-1) - scores[idx, idx])
    def flops(r):
        return jnp.sum(jnp.mean(r, axis=0) ** 2)
    return rank + 3e-4 * flops(qr) + 1e-4 * flops(dr)
""", "bf16[32,32,768], bf16[32,200,768], bf16[768,30522], f32[30522], bool[32,32], bool[32,200]"),
    ("sae_topk_latents_scatter_decode_dead_latent_aux", "interpretability", """
def f(x, w_enc, b_enc, w_dec, b_dec, dead):
    n = x.shape[0]
    pre = (x - b_dec) @ w_enc + b_enc
    vals, idx = lax.top_k(pre, 32)
    rows = jnp.arange(n)[:, None]
    z = jnp.zeros_like(pre).at[rows, idx].set(jax.nn.relu(vals))
    recon = z @ w_dec + b_dec
    err = x - recon
    mse = jnp.mean(jnp.sum(err ** 2, axis=-1))
    dv, di = lax.top_k(jnp.where(dead[None, :], pre, -jnp.inf), 512)
    z_aux = jnp.zeros_like(pre).at[rows, di].set(jax.nn.relu(jnp.where(jnp.isfinite(dv), dv, 0.0)))
    aux = jnp.mean(jnp.sum((err - z_aux @ w_dec) ** 2, axis=-1))
    total_var = jnp.mean(jnp.sum((x - jnp.mean(x, axis=0)) ** 2, axis=-1))
    return mse / total_var + aux / (32.0 * total_var)
""", "f32[4096,768], f32[768,32768], f32[32768], f32[32768,768], f32[768], bool[32768]"),
    ("maskgit_gumbel_confidence_remask_sort_bf16", "generative", """
def f(logits, targets, mask, key, ratio):
    lf = logits.astype(jnp.float32)
    logp = jax.nn.log_softmax(lf, axis=-1)
    ce = -jnp.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]
    loss = jnp.sum(jnp.where(mask, ce, 0.0)) / jnp.maximum(jnp.sum(mask), 1)
    k1, k2 = jax.random.split(key)
    sampled = jnp.argmax(lf + jax.random.gumbel(k1, lf.shape), axis=-1)
    sampled = jnp.where(mask, sampled, targets)
    conf = jnp.take_along_axis(logp, sampled[..., None], axis=-1)[..., 0]
    conf = conf + 4.5 * (1.0 - ratio) * jax.random.gumbel(k2, conf.shape)
    conf = jnp.where(mask, conf, jnp.inf)
    n_mask = jnp.floor(conf.shape[-1] * jnp.cos(jnp.pi / 2 * ratio)).astype(jnp.int32)
    n_mask = jnp.clip(n_mask, 1, jnp.sum(mask, axis=-1, keepdims=True) - 1)
    cut = jnp.take_along_axis(jnp.sort(conf, axis=-1), n_mask, axis=-1)
    return loss, jnp.mean((conf < cut).astype(jnp.float32))
""", "bf16[16,1024,8192], i32[16,1024], bool[16,1024], u32[2], f32[]"),
    # -- recommendation -------------------------------------------------------------------------------------
    ("ffm_field_aware_pairwise_einsum3_table_grad", "recsys", """
def f(table, ids, vals, y):
    n_fields = ids.shape[1]
    mask = jnp.triu(jnp.ones((n_fields, n_fields), jnp.float32), k=1)
    def loss(table):
        e = table[ids] * vals[..., None, None]
        logit = jnp.einsum('bijk,bjik,ij->b', e, e, mask)
        return jnp.mean(jnp.maximum(logit, 0) - logit * y + jnp.log1p(jnp.exp(-jnp.abs(logit))))
    return jax.value_and_grad(loss)(table)
""", "f32[200000,39,8], i32[4096,39], f32[4096,39], f32[4096]"),
    ("gru4rec_bpr_max_inbatch_negatives_score_reg", "recsys", """
def f(session_h, w_out, item_emb, targets):
    out = jnp.tanh(session_h @ w_out)
    r = out @ item_emb[targets].T
    pos = jnp.diagonal(r)
    n = r.shape[0]
    s = jax.nn.softmax(jnp.where(jnp.eye(n, dtype=bool), -jnp.inf, r), axis=-1)
    diff = jax.nn.sigmoid(pos[:, None] - r)
    loss = -jnp.log(jnp.sum(s * diff, axis=-1) + 1e-24) + jnp.sum(s * r ** 2, axis=-1)
    return jnp.mean(loss)
""", "f32[8192,100], f32[100,100], f32[400000,100], i32[8192]"),
    # -- reinforcement learning -----------------------------------------------------------------------------
    ("iqn_cosine_tau_embedding_quantile_huber_grad", "rl", """
def f(w_phi, b_phi, w1, w2, state_feat, taus, target_quantiles, actions):
    def loss(w_phi, w1, w2):
        i = jnp.arange(64, dtype=jnp.float32)
        cos = jnp.cos(jnp.pi * i[None, None, :] * taus[..., None])
        phi = jax.nn.relu(cos @ w_phi + b_phi)
        h = jax.nn.relu((state_feat[:, None, :] * phi) @ w1)
        q = h @ w2
        pred = jnp.take_along_axis(q, actions[:, None, None], axis=-1)[..., 0]
        u = target_quantiles[:, None, :] - pred[:, :, None]
        au = jnp.abs(u)
        huber = jnp.where(au <= 1.0, 0.5 * u * u, au - 0.5)
        rho = jnp.abs(taus[..., None] - (u < 0).astype(jnp.float32)) * huber
        return jnp.mean(jnp.sum(jnp.mean(rho, axis=2), axis=1))
    return jax.value_and_grad(loss, argnums=(0, 1, 2))(w_phi, w1, w2)
""", "f32[64,3136], f32[3136], f32[3136,512], f32[512,18], f32[512,3136], f32[512,64], f32[512,64], i32[512]"),
    ("hl_gauss_erf_bin_targets_value_ce_tiny", "rl", """
def f(logits, returns):
    vmin, vmax, nb = -10.0, 10.0, logits.shape[-1]
    edges = jnp.linspace(vmin, vmax, nb + 1)
    sigma = 0.75 * (vmax - vmin) / nb
    r = jnp.clip(returns, vmin, vmax)
    cdf = jax.scipy.special.erf((edges[None, :] - r[:, None]) / (jnp.sqrt(2.0) * sigma))
    probs = cdf[:, 1:] - cdf[:, :-1]
    probs = probs / jnp.sum(probs, axis=-1, keepdims=True)
    ce = -jnp.sum(probs * jax.nn.log_softmax(logits, axis=-1), axis=-1)
    centers = 0.5 * (edges[1:] + edges[:-1])
    value = jnp.sum(jax.nn.softmax(logits, axis=-1) * centers, axis=-1)
    return jnp.mean(ce), jnp.mean(jnp.abs(value - returns))
""", "f32[8192,101], f32[8192]"),
    ("dreamer_rssm_imagination_straight_through_scan_checkpoint_grad", "rl", """
def f(h0, z0, w_actor, w_in, w_u, w_c, w_prior, w_reward, w_value, key):
    horizon, n_act = 15, w_actor.shape[1]
    def actor_loss(w_actor):
        def st_sample(logits, k):
            probs = jax.nn.softmax(logits, axis=-1)
            idx = jnp.argmax(logits + jax.random.gumbel(k, logits.shape), axis=-1)
            hard = jax.nn.one_hot(idx, logits.shape[-1])
            return hard + probs - lax.stop_gradient(probs)
        @jax.checkpoint
        def step(carry, t):
            h, z = carry
            feat = jnp.concatenate([h, z], axis=-1)
            ka, kz = jax.random.split(jax.random.fold_in(key, t))
            a = st_sample(feat @ w_actor, ka)
            x = jax.nn.silu(jnp.concatenate([z, a], axis=-1) @ w_in)
            hx = jnp.concatenate([x, h], axis=-1)
            u = jax.nn.sigmoid(hx @ w_u)
            h = (1 - u) * h + u * jnp.tanh(hx @ w_c)
            logits = (h @ w_prior).reshape(h.shape[0], 32, 32)
            z = st_sample(logits, kz).reshape(h.shape[0], 1024)
            feat = jnp.concatenate([h, z], axis=-1)
            return (h, z), (feat @ w_reward[:, 0], feat @ w_value[:, 0])
        _, (rew, val) = lax.scan(step, (h0, z0), jnp.arange(horizon))
        def back(nxt, xs):
            r, v = xs
            ret = r + 0.99 * (0.05 * v + 0.95 * nxt)
            return ret, ret
        _, rets = lax.scan(back, val[-1], (rew[:-1], val[1:]), reverse=True)
        return -jnp.mean(rets)
    return jax.value_and_grad(actor_loss)(w_actor)
""", "f32[16384,512], f32[16384,1024], f32[1536,18], f32[1042,512], f32[1024,512], f32[1024,512], "
    "f32[512,1024], f32[1536,1], f32[1536,1], u32[2]"),
    # -- graphs ---------------------------------------------------------------------------------------------
    ("label_propagation_dense_rbf_affinity_fori", "graph", """
def f(x, labels, labeled):
    sq = jnp.sum(x * x, axis=1)
    d2 = jnp.maximum(sq[:, None] + sq[None, :] - 2.0 * x @ x.T, 0.0)
    w = jnp.exp(-d2 / jnp.mean(d2)) * (1.0 - jnp.eye(x.shape[0]))
    dinv = lax.rsqrt(jnp.sum(w, axis=1))
    s = w * dinv[:, None] * dinv[None, :]
    y = jax.nn.one_hot(labels, 10) * labeled[:, None]
    fin = lax.fori_loop(0, 20, lambda _, fc: 0.99 * (s @ fc) + 0.01 * y, y)
    pred = jnp.argmax(fin, axis=1)
    return jnp.sum(jnp.where(labeled, False, pred == labels)) / jnp.sum(~labeled)
""", "f32[8192,64], i32[8192], bool[8192]"),
    ("dimenet_triplet_angle_basis_segment_sum_vjp_forces", "graph", """
def f(pos, species, edge_i, edge_j, trip_kj, trip_ji, emb, w_rbf, w_sbf, w_out, f_ref):
    n_atoms, n_edges = pos.shape[0], edge_i.shape[0]
    cutoff = 5.0
    def energy(pos):
        vec = pos[edge_j] - pos[edge_i]
        d = jnp.sqrt(jnp.sum(vec * vec, axis=-1) + 1e-9)
        n6 = jnp.arange(1, 7, dtype=jnp.float32)
        rbf = jnp.sin(n6 * jnp.pi * d[:, None] / cutoff) / d[:, None]
        env = 0.5 * (jnp.cos(jnp.pi * jnp.minimum(d, cutoff) / cutoff) + 1.0)
        x_e = (emb[species[edge_i]] + emb[species[edge_j]]) * ((rbf * env[:, None]) @ w_rbf)
        v1, v2 = vec[trip_kj], vec[trip_ji]
        cos = jnp.sum(v1 * v2, axis=-1) / (d[trip_kj] * d[trip_ji])
        cos = jnp.clip(cos, -1.0 + 1e-6, 1.0 - 1e-6)
        legendre = [jnp.ones_like(cos), cos]
        for ell in range(2, 6):
            legendre.append(((2 * ell - 1) * cos * legendre[-1] - (ell - 1) * legendre[-2]) / ell)
        ang = jnp.stack(legendre, axis=-1)
        n7 = jnp.arange(1, 8, dtype=jnp.float32)
        dk = d[trip_kj]
        radial = jnp.sin(n7 * jnp.pi * dk[:, None] / cutoff) / dk[:, None]
        sbf = (radial[:, :, None] * ang[:, None, :]).reshape(-1, 42)
        m = x_e[trip_kj] * (sbf @ w_sbf)
        agg = jax.ops.segment_sum(m, trip_ji, num_segments=n_edges)
        hid = jax.nn.silu(x_e + agg)
        return jnp.sum(jax.ops.segment_sum(hid, edge_i, num_segments=n_atoms) @ w_out)
    e, pullback = jax.vjp(energy, pos)
    forces = -pullback(jnp.ones_like(e))[0]
    return e, jnp.mean((forces - f_ref) ** 2)
""", "f32[16384,3], i32[16384], i32[524288], i32[524288], i32[2097152], i32[2097152], f32[10,64], f32[6,64], "
    "f32[42,64], f32[64], f32[16384,3]"),
    # -- physics and science --------------------------------------------------------------------------------
    ("cahn_hilliard_semi_implicit_spectral_fori", "physics", """
def f(c0):
    n = c0.shape[0]
    k = 2 * jnp.pi * jnp.fft.fftfreq(n)
    kr = 2 * jnp.pi * jnp.fft.rfftfreq(n)
    k2 = k[:, None] ** 2 + kr[None, :] ** 2
    dt, kappa = 0.05, 1.0
    def body(_, c):
        mu_hat = jnp.fft.rfft2(c ** 3 - c)
        c_hat = (jnp.fft.rfft2(c) - dt * k2 * mu_hat) / (1.0 + dt * kappa * k2 ** 2)
        return jnp.fft.irfft2(c_hat, s=c.shape)
    c = lax.fori_loop(0, 10, body, c0)
    c_hat = jnp.fft.rfft2(c)
    gx = jnp.fft.irfft2(1j * k[:, None] * c_hat, s=c.shape)
    gy = jnp.fft.irfft2(1j * kr[None, :] * c_hat, s=c.shape)
    return jnp.mean(0.25 * (c ** 2 - 1.0) ** 2 + 0.5 * kappa * (gx ** 2 + gy ** 2))
""", "f32[2048,2048]"),
    ("percolation_cluster_labels_while_loop_spanning", "physics", """
def f(u, p):
    occ = u < p
    n, h, w = u.shape
    ids = jnp.arange(1, h * w + 1, dtype=jnp.int32).reshape(1, h, w)
    lab0 = jnp.where(occ, ids, 0)
    def propagate(lab):
        padded = jnp.pad(lab, ((0, 0), (1, 1), (1, 1)))
        m = jnp.maximum(jnp.maximum(padded[:, :-2, 1:-1], padded[:, 2:, 1:-1]),
                        jnp.maximum(padded[:, 1:-1, :-2], padded[:, 1:-1, 2:]))
        return jnp.where(occ, jnp.maximum(lab, m), 0)
    def cond(state):
        return state[1]
    def body(state):
        lab, _, it = state
        new = propagate(lab)
        return new, jnp.any(new != lab), it + 1
    lab, _, iters = lax.while_loop(cond, body, (lab0, jnp.array(True), 0))
    top, bottom = lab[:, 0, :], lab[:, -1, :]
    spans = jnp.any((top[:, :, None] == bottom[:, None, :]) & (top[:, :, None] > 0), axis=(1, 2))
    return jnp.mean(spans.astype(jnp.float32)), iters
""", "f32[32,512,512], f32[]"),
    ("tight_binding_kpoint_eigvalsh_fermi_bisection_while_c64", "physics", """
def f(kpts, lattice_vecs, hoppings, n_electrons):
    phase = jnp.exp(1j * (kpts @ lattice_vecs.T)).astype(jnp.complex64)
    hk = jnp.einsum('kr,rij->kij', phase, hoppings)
    hk = 0.5 * (hk + jnp.conj(jnp.swapaxes(hk, -1, -2)))
    eps = jnp.linalg.eigvalsh(hk)
    kt = 0.01
    def count(mu):
        return 2.0 * jnp.mean(jnp.sum(jax.nn.sigmoid((mu - eps) / kt), axis=-1))
    def cond(s):
        lo, hi, it = s
        return (hi - lo > 1e-6) & (it < 100)
    def body(s):
        lo, hi, it = s
        mid = 0.5 * (lo + hi)
        too_many = count(mid) > n_electrons
        return jnp.where(too_many, lo, mid), jnp.where(too_many, mid, hi), it + 1
    lo, hi, _ = lax.while_loop(cond, body, (jnp.min(eps), jnp.max(eps), 0))
    mu = 0.5 * (lo + hi)
    occ = jax.nn.sigmoid((mu - eps) / kt)
    return 2.0 * jnp.mean(jnp.sum(occ * eps, axis=-1)), mu
""", "f32[4096,3], f32[123,3], c64[123,32,32], f32[]"),
    ("biharmonic_plate_stencil_conv_f16", "physics", """
def f(w, load):
    dn = ('NCHW', 'OIHW', 'NCHW')
    lap = jnp.array([[0, 1, 0], [1, -4, 1], [0, 1, 0]], jnp.float16)[None, None]
    bih = jnp.array([[0, 0, 1, 0, 0], [0, 2, -8, 2, 0], [1, -8, 20, -8, 1], [0, 2, -8, 2, 0], [0, 0, 1, 0, 0]],
                    jnp.float16)[None, None]
    lw = lax.conv_general_dilated(w, lap, (1, 1), 'SAME', dimension_numbers=dn).astype(jnp.float32)
    bw = lax.conv_general_dilated(w, bih, (1, 1), 'SAME', dimension_numbers=dn).astype(jnp.float32)
    q = load.astype(jnp.float32)
    energy = jnp.sum(0.5 * lw ** 2 - q * w.astype(jnp.float32), axis=(1, 2, 3))
    residual = jnp.sqrt(jnp.mean((bw - q) ** 2))
    return jnp.mean(energy), residual
""", "f16[16,1,1024,1024], f16[16,1,1024,1024]"),
    # -- vision ---------------------------------------------------------------------------------------------
    ("ciede2000_color_difference_srgb_uint8", "vision", """
def f(img_a, img_b):
    def lab(img):
        c = img.astype(jnp.float32) / 255.0
        c = jnp.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
        m = jnp.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
        xyz = c @ m.T / jnp.array([0.95047, 1.0, 1.08883])
        fx = jnp.where(xyz > 0.008856, jnp.cbrt(xyz), 7.787 * xyz + 16.0 / 116)
        return 116 * fx[..., 1] - 16, 500 * (fx[..., 0] - fx[..., 1]), 200 * (fx[..., 1] - fx[..., 2])
    l1, a1, b1 = lab(img_a)
    l2, a2, b2 = lab(img_b)
    cbar = 0.5 * (jnp.hypot(a1, b1) + jnp.hypot(a2, b2))
    g = 0.5 * (1 - jnp.sqrt(cbar ** 7 / (cbar ** 7 + 25.0 ** 7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = jnp.hypot(a1p, b1), jnp.hypot(a2p, b2)
    h1p = jnp.mod(jnp.degrees(jnp.arctan2(b1, a1p)), 360.0)
    h2p = jnp.mod(jnp.degrees(jnp.arctan2(b2, a2p)), 360.0)
    dl, dc = l2 - l1, c2p - c1p
    dh = h2p - h1p
    dh = jnp.where(dh > 180, dh - 360, jnp.where(dh < -180, dh + 360, dh))
    dh = jnp.where(c1p * c2p == 0, 0.0, dh)
    dhh = 2 * jnp.sqrt(c1p * c2p) * jnp.sin(jnp.radians(dh) / 2)
    lbar, cbarp = 0.5 * (l1 + l2), 0.5 * (c1p + c2p)
    hsum = h1p + h2p
    hbar = jnp.where(jnp.abs(h1p - h2p) > 180, jnp.where(hsum < 360, hsum + 360, hsum - 360), hsum) / 2
    hbar = jnp.where(c1p * c2p == 0, hsum, hbar)
    t = (1 - 0.17 * jnp.cos(jnp.radians(hbar - 30)) + 0.24 * jnp.cos(jnp.radians(2 * hbar))
         + 0.32 * jnp.cos(jnp.radians(3 * hbar + 6)) - 0.20 * jnp.cos(jnp.radians(4 * hbar - 63)))
    sl = 1 + 0.015 * (lbar - 50) ** 2 / jnp.sqrt(20 + (lbar - 50) ** 2)
    sc = 1 + 0.045 * cbarp
    sh = 1 + 0.015 * cbarp * t
    rt = (-2 * jnp.sqrt(cbarp ** 7 / (cbarp ** 7 + 25.0 ** 7))
          * jnp.sin(jnp.radians(60 * jnp.exp(-(((hbar - 275) / 25) ** 2)))))
    de = jnp.sqrt((dl / sl) ** 2 + (dc / sc) ** 2 + (dhh / sh) ** 2 + rt * (dc / sc) * (dhh / sh))
    return jnp.mean(de), jnp.mean(de > 2.3)
""", "u8[16,1024,1024,3], u8[16,1024,1024,3]"),
    ("hog_orientation_bins_scatter_add_block_norm", "vision", """
def f(img_a, img_b):
    dn = ('NCHW', 'OIHW', 'NCHW')
    kx = jnp.array([[[[-1.0, 0.0, 1.0]]]])
    ky = jnp.transpose(kx, (0, 1, 3, 2))
    def hog(img):
        x = img[:, None]
        gx = lax.conv_general_dilated(x, kx, (1, 1), 'SAME', dimension_numbers=dn)[:, 0]
        gy = lax.conv_general_dilated(x, ky, (1, 1), 'SAME', dimension_numbers=dn)[:, 0]
        mag = jnp.hypot(gx, gy)
        pos = jnp.mod(jnp.arctan2(gy, gx), jnp.pi) / (jnp.pi / 9) - 0.5
        b0 = jnp.floor(pos)
        frac = pos - b0
        b0i = jnp.mod(b0.astype(jnp.int32), 9)
        b1i = jnp.mod(b0i + 1, 9)
        n, h, w = img.shape
        cy = (jnp.arange(h) // 8)[None, :, None]
        cx = (jnp.arange(w) // 8)[None, None, :]
        nid = jnp.arange(n)[:, None, None]
        hist = jnp.zeros((n, h // 8, w // 8, 9), jnp.float32)
        hist = hist.at[nid, cy, cx, b0i].add(mag * (1 - frac))
        hist = hist.at[nid, cy, cx, b1i].add(mag * frac)
        blocks = jnp.concatenate([hist[:, :-1, :-1], hist[:, 1:, :-1], hist[:, :-1, 1:], hist[:, 1:, 1:]], axis=-1)
        blocks = blocks / jnp.sqrt(jnp.sum(blocks ** 2, axis=-1, keepdims=True) + 1e-6)
        blocks = jnp.minimum(blocks, 0.2)
        blocks = blocks / jnp.sqrt(jnp.sum(blocks ** 2, axis=-1, keepdims=True) + 1e-6)
        return blocks.reshape(n, -1)
    ha, hb = hog(img_a), hog(img_b)
    cos = jnp.sum(ha * hb, axis=-1) / (jnp.linalg.norm(ha, axis=-1) * jnp.linalg.norm(hb, axis=-1) + 1e-9)
    return jnp.mean(1.0 - cos)
""", "f32[32,512,512], f32[32,512,512]"),
    ("neighborhood_attention_7x7_shift_stack_bf16", "vision", """
def f(x, w_qkv, rpb):
    b, h, w, c = x.shape
    heads, d = rpb.shape[0], c // rpb.shape[0]
    qkv = (x @ w_qkv).reshape(b, h, w, 3, heads, d)
    q, k, v = qkv[:, :, :, 0], qkv[:, :, :, 1], qkv[:, :, :, 2]
    pad = ((0, 0), (3, 3), (3, 3), (0, 0), (0, 0))
    kp, vp = jnp.pad(k, pad), jnp.pad(v, pad)
    inside = jnp.pad(jnp.ones((h, w), bool), 3)
    ks, vs, ms = [], [], []
    for dy in range(7):
        for dx in range(7):
            ks.append(kp[:, dy:dy + h, dx:dx + w])
            vs.append(vp[:, dy:dy + h, dx:dx + w])
            ms.append(inside[dy:dy + h, dx:dx + w])
    ks, vs, valid = jnp.stack(ks, axis=3), jnp.stack(vs, axis=3), jnp.stack(ms, axis=-1)
    s = jnp.einsum('bhwnd,bhwknd->bhwnk', q, ks).astype(jnp.float32) * d ** -0.5
    s = s + rpb.reshape(heads, 49)[None, None, None]
    s = jnp.where(valid[None, :, :, None, :], s, -jnp.inf)
    p = jax.nn.softmax(s, axis=-1).astype(x.dtype)
    o = jnp.einsum('bhwnk,bhwknd->bhwnd', p, vs).reshape(b, h, w, c)
    return jnp.mean(o.astype(jnp.float32) ** 2)
""", "bf16[8,56,56,128], bf16[128,384], f32[4,7,7]"),
    # -- generative models ----------------------------------------------------------------------------------
    ("vqvae_ema_codebook_laplace_smoothing_one_hot", "generative", """
def f(z_e, codebook, ema_count, ema_sum):
    k = codebook.shape[0]
    d = jnp.sum(z_e ** 2, axis=1, keepdims=True) - 2.0 * z_e @ codebook.T + jnp.sum(codebook ** 2, axis=1)
    idx = jnp.argmin(d, axis=1)
    enc = jax.nn.one_hot(idx, k)
    counts = 0.99 * ema_count + 0.01 * jnp.sum(enc, axis=0)
    n = jnp.sum(counts)
    counts = (counts + 1e-5) / (n + k * 1e-5) * n
    sums = 0.99 * ema_sum + 0.01 * (enc.T @ z_e)
    new_codebook = sums / counts[:, None]
    commit = 0.25 * jnp.mean((z_e - lax.stop_gradient(codebook[idx])) ** 2)
    avg = jnp.mean(enc, axis=0)
    perplexity = jnp.exp(-jnp.sum(avg * jnp.log(avg + 1e-10)))
    return commit, perplexity, new_codebook
""", "f32[32768,64], f32[4096,64], f32[4096], f32[4096,64]"),
    ("residual_flow_power_series_logdet_jvp_value_and_grad_tiny", "generative", """
def f(x, w1, b1, w2, b2, probe):
    def g(params, x):
        w1, b1, w2, b2 = params
        h = jax.nn.elu(x @ (0.9 * w1 / jnp.linalg.norm(w1)) + b1)
        return h @ (0.9 * w2 / jnp.linalg.norm(w2)) + b2
    def nll(params):
        gx, jv = jax.jvp(lambda y: g(params, y), (x,), (probe,))
        logdet = jnp.sum(probe * jv, axis=-1)
        w = jv
        for k in range(2, 11):
            w = jax.jvp(lambda y: g(params, y), (x,), (w,))[1]
            logdet = logdet + (-1.0) ** (k + 1) / k * jnp.sum(probe * w, axis=-1)
        z = x + gx
        logpz = -0.5 * jnp.sum(z ** 2, axis=-1) - 0.5 * z.shape[-1] * jnp.log(2 * jnp.pi)
        return -jnp.mean(logpz + logdet)
    return jax.value_and_grad(nll)((w1, b1, w2, b2))
""", "f32[256,784], f32[784,1024], f32[1024], f32[1024,784], f32[784], f32[256,784]"),
    # -- kernels, statistics and optimal transport ----------------------------------------------------------
    ("mmd_multi_bandwidth_rbf_unbiased_stacked", "kernel", """
def f(x, y):
    bw = jnp.array([0.25, 0.5, 1.0, 2.0, 4.0]) * jnp.sqrt(float(x.shape[1]))
    def kern(a, b):
        d2 = jnp.sum(a * a, axis=1)[:, None] + jnp.sum(b * b, axis=1)[None, :] - 2.0 * a @ b.T
        return jnp.exp(-d2[None] / (2.0 * bw[:, None, None] ** 2))
    n = x.shape[0]
    off = 1.0 - jnp.eye(n)
    kxx, kyy, kxy = kern(x, x), kern(y, y), kern(x, y)
    mmd2 = (jnp.sum(kxx * off, axis=(1, 2)) + jnp.sum(kyy * off, axis=(1, 2))) / (n * (n - 1)) \\
        - 2.0 * jnp.mean(kxy, axis=(1, 2))
    return jnp.sum(mmd2)
""", "f32[4096,128], f32[4096,128]"),
    ("nystrom_matern32_kernel_ridge_cholesky", "kernel", """
def f(x, y, landmarks, x_test, y_test, log_ls):
    ls = jnp.exp(log_ls)
    def kern(a, b):
        d2 = jnp.sum(a * a, axis=1)[:, None] + jnp.sum(b * b, axis=1)[None, :] - 2.0 * a @ b.T
        r = jnp.sqrt(3.0 * jnp.maximum(d2, 1e-12)) / ls
        return (1.0 + r) * jnp.exp(-r)
    knm = kern(x, landmarks)
    kmm = kern(landmarks, landmarks)
    m = kmm.shape[0]
    a = knm.T @ knm + 1e-3 * x.shape[0] * kmm + 1e-6 * jnp.eye(m)
    chol = jnp.linalg.cholesky(a)
    alpha = jax.scipy.linalg.cho_solve((chol, True), knm.T @ y)
    pred = kern(x_test, landmarks) @ alpha
    return jnp.mean((pred - y_test) ** 2), jnp.mean((knm @ alpha - y) ** 2)
""", "f32[65536,32], f32[65536], f32[2048,32], f32[8192,32], f32[8192], f32[]"),
    ("kid_cubic_polynomial_kernel_vmap_subsets_gather", "metric", """
def f(real, fake, idx_r, idx_f):
    d = real.shape[1]
    def one(ir, jf):
        x, y = real[ir], fake[jf]
        m = x.shape[0]
        kxx = (x @ x.T / d + 1.0) ** 3
        kyy = (y @ y.T / d + 1.0) ** 3
        kxy = (x @ y.T / d + 1.0) ** 3
        same = (jnp.sum(kxx) - jnp.trace(kxx) + jnp.sum(kyy) - jnp.trace(kyy)) / (m * (m - 1))
        return same - 2.0 * jnp.mean(kxy)
    vals = jax.vmap(one)(idx_r, idx_f)
    return jnp.mean(vals), jnp.std(vals)
""", "f32[50000,2048], f32[50000,2048], i32[100,1000], i32[100,1000]"),
    ("hawkes_exponential_kernel_pairwise_loglik_value_and_grad", "statistics", """
def f(t, params):
    def nll(params):
        mu, alpha, beta = jnp.exp(params[0]), jnp.exp(params[1]), jnp.exp(params[2])
        dt = t[:, None] - t[None, :]
        past = dt > 0
        kern = jnp.where(past, jnp.exp(-beta * jnp.where(past, dt, 0.0)), 0.0)
        lam = mu + alpha * beta * jnp.sum(kern, axis=1)
        horizon = t[-1]
        comp = mu * horizon + alpha * jnp.sum(1.0 - jnp.exp(-beta * (horizon - t)))
        return comp - jnp.sum(jnp.log(lam))
    return jax.value_and_grad(nll)(params)
""", "f32[8192], f32[3]"),
    ("sliced_wasserstein_sorted_projections_value_and_grad", "statistics", """
def f(x, y, theta):
    theta = theta / jnp.linalg.norm(theta, axis=0, keepdims=True)
    py = jnp.sort(y @ theta, axis=0)
    def sw(x):
        px = jnp.sort(x @ theta, axis=0)
        return jnp.sqrt(jnp.mean((px - py) ** 2))
    return jax.value_and_grad(sw)(x)
""", "f32[65536,128], f32[65536,128], f32[128,512]"),
    ("neuralsort_relaxed_permutation_ce_value_and_grad", "ranking", """
def f(scores, perm):
    def loss(s):
        n = s.shape[-1]
        a = jnp.abs(s[:, :, None] - s[:, None, :])
        bsum = jnp.sum(a, axis=-1)
        scaling = (n + 1 - 2 * (jnp.arange(n) + 1)).astype(s.dtype)
        p_max = scaling[None, :, None] * s[:, None, :] - bsum[:, None, :]
        log_p = jax.nn.log_softmax(p_max, axis=-1)
        return -jnp.mean(jnp.take_along_axis(log_p, perm[..., None], axis=-1))
    return jax.value_and_grad(loss)(scores)
""", "f32[256,512], i32[256,512]"),
    ("sngp_rff_laplace_predictive_variance_einsum3", "uncertainty", """
def f(h, w_rff, b_rff, beta, y):
    d = w_rff.shape[1]
    phi = jnp.sqrt(2.0 / d) * jnp.cos(h @ w_rff + b_rff)
    logits = phi @ beta
    pmax = jnp.max(jax.nn.softmax(logits, axis=-1), axis=-1)
    prec = jnp.eye(d) + jnp.einsum('nd,n,ne->de', phi, pmax * (1.0 - pmax), phi)
    chol = jnp.linalg.cholesky(prec)
    cov = jax.scipy.linalg.cho_solve((chol, True), jnp.eye(d))
    var = jnp.einsum('nd,de,ne->n', phi, cov, phi)
    adj = logits / jnp.sqrt(1.0 + jnp.pi / 8.0 * var)[:, None]
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(adj, axis=-1), y[:, None], axis=-1))
""", "f32[16384,512], f32[512,1024], f32[1024], f32[1024,10], i32[16384]"),
    ("minhash_uint32_signatures_pairwise_jaccard_bool", "retrieval", """
def f(shingles, a, b, valid):
    h = a[None, None, :] * shingles[:, :, None] + b[None, None, :]
    h = (h ^ (h >> 15)) * jnp.uint32(0x2C1B3C6D)
    h = jnp.where(valid[:, :, None], h, jnp.uint32(0xFFFFFFFF))
    sig = jnp.min(h, axis=1)
    eq = sig[:, None, :] == sig[None, :, :]
    jac = jnp.mean(eq.astype(jnp.float32), axis=-1)
    n = jac.shape[0]
    off = ~jnp.eye(n, dtype=bool)
    return jnp.sum((jac > 0.5) & off) // 2, jnp.sum(jnp.where(off, jac, 0.0)) / (n * (n - 1))
""", "u32[1024,512], u32[128], u32[128], bool[1024,512]"),
    # -- audio and sequences of symbols ---------------------------------------------------------------------
    ("pcen_iir_smoother_scan_mel_stft_frames", "audio", """
def f(wav, mel_fb, target):
    n_fft, hop = 512, 160
    n_frames = 1 + (wav.shape[1] - n_fft) // hop
    idx = jnp.arange(n_frames)[:, None] * hop + jnp.arange(n_fft)[None, :]
    frames = wav[:, idx] * jnp.hanning(n_fft)
    power = jnp.abs(jnp.fft.rfft(frames, axis=-1)) ** 2
    mel = power @ mel_fb
    s_coef = 0.025
    def smooth(prev, e):
        cur = (1.0 - s_coef) * prev + s_coef * e
        return cur, cur
    _, m = lax.scan(smooth, mel[:, 0], jnp.swapaxes(mel, 0, 1))
    m = jnp.swapaxes(m, 0, 1)
    alpha, delta, r = 0.98, 2.0, 0.5
    pcen = (mel / (1e-6 + m) ** alpha + delta) ** r - delta ** r
    return jnp.mean(jnp.abs(pcen - target))
""", "f32[16,480000], f32[257,128], f32[16,2997,128]"),
    ("smith_waterman_row_scan_cummax_vmap_int8", "genomics", """
def f(seq_a, seq_b, subst):
    gap = 4.0
    def one(a, b):
        s = subst[a.astype(jnp.int32)[:, None], b.astype(jnp.int32)[None, :]]
        lb = b.shape[0]
        j = jnp.arange(1, lb + 1, dtype=jnp.float32)
        def row(h_prev, s_row):
            h0 = jnp.maximum(0.0, jnp.maximum(h_prev[:-1] + s_row, h_prev[1:] - gap))
            h = lax.cummax(h0 + gap * j) - gap * j
            return jnp.concatenate([jnp.zeros(1), h]), jnp.max(h)
        _, best = lax.scan(row, jnp.zeros(lb + 1), s)
        return jnp.max(best)
    scores = jax.vmap(one)(seq_a, seq_b)
    return jnp.mean(scores), jnp.max(scores)
""", "i8[256,512], i8[256,512], f32[24,24]"),
    # -- meta-learning, spiking and embedding models --------------------------------------------------------
    ("maml_five_inner_steps_second_order_vmap_tasks_tiny", "meta-learning", """
def f(w1, b1, w2, b2, xs, ys, xq, yq):
    def net(p, x):
        w1, b1, w2, b2 = p
        return jax.nn.relu(x @ w1 + b1) @ w2 + b2
    def ce(p, x, y):
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(net(p, x)), y[:, None], axis=-1))
    def task_loss(p, xs, ys, xq, yq):
        for _ in range(5):
            g = jax.grad(ce)(p, xs, ys)
            p = jax.tree_util.tree_map(lambda a, b: a - 0.4 * b, p, g)
        return ce(p, xq, yq)
    def meta(p):
        return jnp.mean(jax.vmap(task_loss, in_axes=(None, 0, 0, 0, 0))(p, xs, ys, xq, yq))
    return jax.value_and_grad(meta)((w1, b1, w2, b2))
""", "f32[784,256], f32[256], f32[256,5], f32[5], f32[64,25,784], i32[64,25], f32[64,75,784], i32[64,75]"),
    ("snn_lif_surrogate_spike_scan_checkpoint_grad_bool_input", "neuromorphic", """
def f(spikes, w_in, w_rec, w_out, labels):
    beta = 0.95
    def spike_fn(v):
        s = jax.nn.sigmoid(10.0 * (v - 1.0))
        return s + lax.stop_gradient((v > 1.0).astype(v.dtype) - s)
    def loss(w_in, w_rec, w_out):
        @jax.checkpoint
        def step(carry, xt):
            v, s, vo = carry
            v = beta * v + xt.astype(jnp.float32) @ w_in + s @ w_rec - s
            s = spike_fn(v)
            vo = beta * vo + s @ w_out
            return (v, s, vo), (vo, jnp.mean(s))
        b, hidden = spikes.shape[1], w_in.shape[1]
        init = (jnp.zeros((b, hidden)), jnp.zeros((b, hidden)), jnp.zeros((b, w_out.shape[1])))
        _, (vos, rates) = lax.scan(step, init, spikes)
        logits = jnp.max(vos, axis=0)
        ce = -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=-1))
        return ce + 0.1 * jnp.mean((rates - 0.05) ** 2)
    return jax.value_and_grad(loss, argnums=(0, 1, 2))(w_in, w_rec, w_out)
""", "bool[100,256,700], f32[700,1024], f32[1024,1024], f32[1024,20], i32[256]"),
    ("rotate_kge_complex64_self_adversarial_negatives_grad", "knowledge-graph", """
def f(ent, rel_phase, heads, rels, tails, neg_tails):
    gamma = 12.0
    def loss(ent, rel_phase):
        h = ent[heads]
        r = jnp.exp(1j * rel_phase[rels]).astype(jnp.complex64)
        hr = h * r
        pos = gamma - jnp.sum(jnp.abs(hr - ent[tails]), axis=-1)
        neg = gamma - jnp.sum(jnp.abs(hr[:, None, :] - ent[neg_tails]), axis=-1)
        w = lax.stop_gradient(jax.nn.softmax(neg, axis=-1))
        l_neg = -jnp.sum(w * jax.nn.log_sigmoid(-neg), axis=-1)
        l_pos = -jax.nn.log_sigmoid(pos)
        return jnp.mean(l_pos + l_neg) / 2
    return jax.value_and_grad(loss, argnums=(0, 1))(ent, rel_phase)
""", "c64[40943,250], f32[11,250], i32[1024], i32[1024], i32[1024], i32[1024,256]"),
    ("wav2vec2_contrastive_gathered_distractors_diversity", "speech", """
def f(context, quantized, neg_idx, codevector_probs, mask):
    negs = jax.vmap(lambda qb, ib: qb[ib])(quantized, neg_idx)
    cands = jnp.concatenate([quantized[:, :, None], negs], axis=2)
    dot = jnp.sum(context[:, :, None, :] * cands, axis=-1)
    norms = jnp.linalg.norm(context, axis=-1)[..., None] * jnp.linalg.norm(cands, axis=-1)
    logits = dot / jnp.maximum(norms, 1e-8) / 0.1
    same = jnp.all(negs == quantized[:, :, None, :], axis=-1)
    logits = jnp.concatenate([logits[..., :1], jnp.where(same, -jnp.inf, logits[..., 1:])], axis=-1)
    ce = -jax.nn.log_softmax(logits, axis=-1)[..., 0]
    n_masked = jnp.sum(mask)
    contrastive = jnp.sum(jnp.where(mask, ce, 0.0))
    avg = jnp.sum(jnp.where(mask[..., None, None], codevector_probs, 0.0), axis=(0, 1)) / n_masked
    perplexity = jnp.sum(jnp.exp(-jnp.sum(avg * jnp.log(avg + 1e-7), axis=-1)))
    n_codes = codevector_probs.shape[2] * codevector_probs.shape[3]
    return contrastive + 0.1 * (n_codes - perplexity) / n_codes * n_masked
""", "f32[16,400,256], f32[16,400,256], i32[16,400,100], f32[16,400,2,320], bool[16,400]"),
    # -- 3d and proteins ------------------------------------------------------------------------------------
    ("pointnet2_ball_query_sorted_first_k_grouping_maxpool", "3d", """
def f(xyz, feats, center_idx, w1, w2, w_cls, labels):
    radius2, k = 0.2 ** 2, 32
    def one(p, ft, ci):
        c = p[ci]
        n = p.shape[0]
        d2 = jnp.sum(c * c, axis=1)[:, None] + jnp.sum(p * p, axis=1)[None, :] - 2.0 * c @ p.T
        idx = jnp.where(d2 <= radius2, jnp.arange(n)[None, :], n)
        idx = jnp.sort(idx, axis=-1)[:, :k]
        idx = jnp.where(idx == n, idx[:, :1], idx)
        idx = jnp.minimum(idx, n - 1)
        grouped = jnp.concatenate([p[idx] - c[:, None, :], ft[idx]], axis=-1)
        hid = jax.nn.relu(jax.nn.relu(grouped @ w1) @ w2)
        return jnp.max(hid, axis=1)
    g = jax.vmap(one)(xyz, feats, center_idx)
    logits = jnp.max(g, axis=1) @ w_cls
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=-1))
""", "f32[16,8192,3], f32[16,8192,64], i32[16,1024], f32[67,128], f32[128,128], f32[128,40], i32[16]"),
    ("alphafold_fape_frames_by_atoms_clamped", "protein", """
def f(rot_p, trans_p, rot_t, trans_t, x_p, x_t, atom_mask):
    def local(rot, trans, x):
        return jnp.einsum('bfji,bfaj->bfai', rot, x[:, None, :, :] - trans[:, :, None, :])
    lp = local(rot_p, trans_p, x_p)
    lt = local(rot_t, trans_t, x_t)
    d = jnp.sqrt(jnp.sum((lp - lt) ** 2, axis=-1) + 1e-8)
    d = jnp.minimum(d, 10.0) / 10.0
    m = jnp.broadcast_to(atom_mask[:, None, :], d.shape)
    return jnp.sum(jnp.where(m, d, 0.0)) / (jnp.sum(m) + 1e-8)
""", "f32[8,256,3,3], f32[8,256,3], f32[8,256,3,3], f32[8,256,3], f32[8,3584,3], f32[8,3584,3], bool[8,3584]"),
    # -- quantisation, metrics, finance, tabular, contrastive -----------------------------------------------
    ("smoothquant_int8_per_channel_dot_int32_error_bf16", "quantisation", """
def f(x, w):
    xf, wf = x.astype(jnp.float32), w.astype(jnp.float32)
    act_max = jnp.max(jnp.abs(xf), axis=0)
    w_max = jnp.max(jnp.abs(wf), axis=1)
    s = jnp.maximum(act_max, 1e-5) ** 0.5 / jnp.maximum(w_max, 1e-5) ** 0.5
    xs, ws = xf / s, wf * s[:, None]
    sx = jnp.max(jnp.abs(xs), axis=1, keepdims=True) / 127.0
    sw = jnp.max(jnp.abs(ws), axis=0, keepdims=True) / 127.0
    xq = jnp.clip(jnp.round(xs / sx), -127, 127).astype(jnp.int8)
    wq = jnp.clip(jnp.round(ws / sw), -127, 127).astype(jnp.int8)
    acc = lax.dot_general(xq, wq, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    y_q = acc.astype(jnp.float32) * sx * sw
    y = jnp.dot(x, w, preferred_element_type=jnp.float32)
    return jnp.sum((y_q - y) ** 2) / jnp.sum(y ** 2)
""", "bf16[2048,4096], bf16[4096,11008]"),
    ("bertscore_greedy_cosine_idf_f1_bf16_tiny", "metric", """
def f(cand, ref, cand_idf, ref_idf, cand_mask, ref_mask):
    def unit(e):
        return e / jnp.linalg.norm(e.astype(jnp.float32), axis=-1, keepdims=True).astype(e.dtype)
    sim = jnp.einsum('bid,bjd->bij', unit(cand), unit(ref), preferred_element_type=jnp.float32)
    sim = jnp.where(cand_mask[:, :, None] & ref_mask[:, None, :], sim, -2.0)
    ci = cand_idf * cand_mask
    ri = ref_idf * ref_mask
    precision = jnp.sum(jnp.max(sim, axis=2) * ci, axis=1) / jnp.sum(ci, axis=1)
    recall = jnp.sum(jnp.max(sim, axis=1) * ri, axis=1) / jnp.sum(ri, axis=1)
    return jnp.mean(2 * precision * recall / (precision + recall))
""", "bf16[64,128,1024], bf16[64,128,1024], f32[64,128], f32[64,128], bool[64,128], bool[64,128]"),
    ("barrier_option_brownian_bridge_antithetic_cumsum", "finance", """
def f(z, s0, strike, barrier, sigma):
    rate, maturity = 0.03, 1.0
    n_steps = z.shape[1]
    dt = maturity / n_steps
    zz = jnp.concatenate([z, -z], axis=0)
    inc = (rate - 0.5 * sigma ** 2) * dt + sigma * jnp.sqrt(dt) * zz
    log_s = jnp.log(s0) + jnp.cumsum(inc, axis=1)
    log_prev = jnp.concatenate([jnp.full((zz.shape[0], 1), jnp.log(s0)), log_s[:, :-1]], axis=1)
    lb = jnp.log(barrier)
    a, b = log_prev - lb, log_s - lb
    p_cross = jnp.where((a > 0) & (b > 0), jnp.exp(-2.0 * a * b / (sigma ** 2 * dt)), 1.0)
    survive = jnp.exp(jnp.sum(jnp.log1p(-jnp.minimum(p_cross, 1.0 - 1e-7)), axis=1))
    payoff = jnp.exp(-rate * maturity) * jnp.maximum(jnp.exp(log_s[:, -1]) - strike, 0.0) * survive
    pair = 0.5 * (payoff[:z.shape[0]] + payoff[z.shape[0]:])
    return jnp.mean(pair), jnp.std(pair) / jnp.sqrt(float(pair.shape[0]))
""", "f32[65536,252], f32[], f32[], f32[], f32[]"),
    ("tabnet_entmax15_bisection_fori_decision_steps", "tabular", """
def f(x, w_init, w_att, w_feat, w_out, y):
    def entmax15(z):
        z = z / 2.0
        zmax = jnp.max(z, axis=-1, keepdims=True)
        lo, hi = zmax - 1.0, zmax - (1.0 / z.shape[-1]) ** 0.5
        def body(_, s):
            lo, hi = s
            tau = 0.5 * (lo + hi)
            mass = jnp.sum(jnp.maximum(z - tau, 0.0) ** 2, axis=-1, keepdims=True)
            return jnp.where(mass >= 1.0, tau, lo), jnp.where(mass < 1.0, tau, hi)
        lo, hi = lax.fori_loop(0, 30, body, (lo, hi))
        p = jnp.maximum(z - 0.5 * (lo + hi), 0.0) ** 2
        return p / jnp.sum(p, axis=-1, keepdims=True)
    h = jax.nn.relu(x @ w_init)
    prior = jnp.ones_like(x)
    out = 0.0
    sparsity = 0.0
    for step in range(w_att.shape[0]):
        mask = entmax15(h @ w_att[step] * prior)
        prior = prior * (1.3 - mask)
        sparsity = sparsity + jnp.mean(jnp.sum(-mask * jnp.log(mask + 1e-10), axis=-1))
        feat = jax.nn.relu((x * mask) @ w_feat[step])
        out = out + feat[:, :64]
        h = feat[:, 64:]
    logit = (out @ w_out)[:, 0]
    bce = jnp.mean(jnp.maximum(logit, 0) - logit * y + jnp.log1p(jnp.exp(-jnp.abs(logit))))
    return bce + 1e-3 * sparsity / w_att.shape[0]
""", "f32[65536,512], f32[512,64], f32[3,64,512], f32[3,512,128], f32[64,1], f32[65536]"),
    ("instance_discrimination_memory_bank_nce_gathered_negatives", "contrastive", """
def f(feats, bank, idx, neg_idx):
    v = feats / jnp.linalg.norm(feats, axis=1, keepdims=True)
    n_data, k, tau = bank.shape[0], neg_idx.shape[1], 0.07
    pos = jnp.exp(jnp.sum(bank[idx] * v, axis=1) / tau)
    neg = jnp.exp(jnp.sum(bank[neg_idx] * v[:, None, :], axis=-1) / tau)
    z = jnp.mean(neg) * n_data
    noise = k / n_data
    def h(s):
        return (s / z) / (s / z + noise)
    loss = -(jnp.log(h(pos)) + jnp.sum(jnp.log(1.0 - h(neg)), axis=1))
    new_rows = 0.5 * bank[idx] + 0.5 * v
    new_rows = new_rows / jnp.linalg.norm(new_rows, axis=1, keepdims=True)
    return jnp.mean(loss), new_rows
""", "f32[256,128], f32[1281167,128], i32[256], i32[256,4096]"),
]


SCRIPT = OutsideFamily("guide_predictor_holdout19", FAMILY, PROGRAMS, __doc__ or "")
__doc__, FILES, programs, main = SCRIPT.usage, SCRIPT.files, SCRIPT.programs, SCRIPT.main

if __name__ == "__main__":
    raise SystemExit(main())
