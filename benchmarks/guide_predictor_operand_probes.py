"""Probe programs for a computed operand of a contraction on the TPU v5e: a table computed elementwise
(``sigmoid``, ``exp``, ``softplus``, a product, a select) that a contraction reads as an operand, contracting
over the table's large axis (the dot is itself a reduction of the table), read by that contraction alone, by
two contractions, or by a contraction and a plain reduction (a sum, a max) of the same table.

Written after wild14's ``mask2former_dice_sigmoid_ce_matching_cost`` (``sigmoid(pred)`` read by an ``einsum``
and by ``sum(p, -1)``, two ``softplus`` tables by two more ``einsum`` s), which the rules said was fused and
the TPU wrote as ``bf16`` tables, and ``grad_accumulation_scan_remat_global_norm`` (``f32`` microbatches
converted to ``bf16`` before a scan whose body contracts them).

Each probe is a module whose ``f`` is one of these shapes (``F`` the producer, ``pred`` and ``gt``
arguments):

- ``bat``: ``p = F(pred)``, ``pred`` ``[b, q, n]``, read by ``einsum("bqn,bgn->bqg", p, gt)`` and, by the
  ``readers`` named: ``e1`` that alone, ``e2`` a second ``einsum`` with another table, ``es`` a ``sum(p,
  -1)``, ``em`` a ``max(p, -1)``; ``f32`` or ``bf16`` data, ``precision=HIGHEST``, odd sizes (wild14's own);
- ``mat``: the same in 2-D, ``qn,gn->qg`` (both operands large) or ``p @ w`` with a narrow weight;
- ``grad``: ``jax.grad`` of a loss of such a program with respect to ``pred``;
- ``scan``: ``f32`` arguments contracted inside a ``lax.scan`` (with and without ``jax.checkpoint``, with
  and without a gradient), a sum of the contraction reduced per step.

The truth is the family benchmark's (:func:`guide_predictor_family.compile_truth`), written to
``benchmarks/data/guide_predictor_operand_probes_truth.jsonl``; every probe is compiled for the TPU v5e only.

Run::

    python benchmarks/guide_predictor_operand_probes.py --compile     # what is not compiled yet
    python benchmarks/guide_predictor_operand_probes.py               # the truth beside the rules' answer
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program, _module  # noqa: E402
from guide_predictor_probing import probe_main  # noqa: E402

TRUTH = ROOT / "benchmarks" / "data" / "guide_predictor_operand_probes_truth.jsonl"
TARGETS = ["tpu:v5e"]

#: ``F``, the producer of the contracted table from the argument ``pred`` (``aux``: a second argument of its
#: shape, for the product).
FS = {
    "sig": "jax.nn.sigmoid(pred)",
    "exp": "jnp.exp(pred)",
    "softplus": "jax.nn.softplus(pred)",
    "mul": "pred * aux",
    "sel": "jnp.where(pred > 0, pred, 0.1 * pred)",
}

#: What is added to the contraction ``o`` (``bat``: ``[b, q, g]``; ``mat``: ``[q, g]``) by each reader set.
READERS = {
    "e1": "o",
    "e2": "o + {ein2}",
    "es": "o + jnp.sum(p, axis=-1)[..., None]",
    "em": "o + jnp.max(p, axis=-1)[..., None]",
}


def _p(name: str, kind: str, body: str, specs: str) -> Program:
    return Program(name, "operand-probes", _module(body), specs, [f"kind={kind}"])


def bat(name: str, f: str = "sig", readers: str = "es", b: int = 16, q: int = 128, g: int = 64, n: int = 8192,
        dtype: str = "f32", prec: str = "") -> Program:
    """``p = F(pred)`` contracted with ``gt`` over ``n`` by a batched ``einsum``, plus the ``readers``."""
    pr = f", precision=lax.Precision.{prec}" if prec else ""
    ein2 = f'jnp.einsum("bqn,bgn->bqg", p, 1.0 - gt{pr})'
    aux = ", aux" if f == "mul" else ""
    body = (f"def f(pred, gt{aux}):\n    p = {FS[f]}\n    o = jnp.einsum(\"bqn,bgn->bqg\", p, gt{pr})\n"
            f"    return {READERS[readers].format(ein2=ein2)}\n")
    specs = f"{dtype}[{b},{q},{n}], {dtype}[{b},{g},{n}]" + (f", {dtype}[{b},{q},{n}]" if aux else "")
    return _p(name, "bat", body, specs)


def mat(name: str, f: str = "sig", readers: str = "es", q: int = 2048, g: int = 1024, n: int = 8192,
        dtype: str = "f32") -> Program:
    """The same in 2-D: ``p = F(pred)`` ``[q, n]`` contracted with ``gt`` ``[g, n]`` over ``n``."""
    ein2 = 'jnp.einsum("qn,gn->qg", p, 1.0 - gt)'
    body = (f"def f(pred, gt):\n    p = {FS[f]}\n    o = jnp.einsum(\"qn,gn->qg\", p, gt)\n"
            f"    return {READERS[readers].format(ein2=ein2)}\n")
    return _p(name, "mat", body, f"{dtype}[{q},{n}], {dtype}[{g},{n}]")


def probe(name: str, kind: str, body: str, specs: str) -> Program:
    return _p(name, kind, body, specs)


SCAN_BODY = """def f(w1, w2, xs, ys):
    def block(params, x):
        a, b = params
        return jnp.tanh(x @ a) @ b
    {ckpt}
    def loss(params, x, y):
        return jnp.mean((block(params, x) - y) ** 2)
    def step(acc, xy):
        {step}
    {tail}
"""


def scan(name: str, ckpt: bool, grad: bool, dtype: str = "f32") -> Program:
    """``f32`` microbatches contracted inside a ``lax.scan``: a gradient accumulated (``grad``) or the loss
    summed, the block under ``jax.checkpoint`` (``ckpt``) or not."""
    if grad:
        step = ("g = jax.grad(loss)((w1, w2), *xy)\n        return jax.tree_util.tree_map(jnp.add, acc, g), None")
        tail = ("zeros = (jnp.zeros_like(w1), jnp.zeros_like(w2))\n    acc, _ = lax.scan(step, zeros, (xs, ys))\n"
                "    return jnp.sqrt(jnp.sum(acc[0] ** 2) + jnp.sum(acc[1] ** 2)), acc")
    else:
        step = "return acc + loss((w1, w2), *xy), None"
        tail = "acc, _ = lax.scan(step, jnp.zeros(()), (xs, ys))\n    return acc"
    body = SCAN_BODY.format(ckpt="block = jax.checkpoint(block)" if ckpt else "", step=step, tail=tail)
    specs = f"{dtype}[2048,2048], {dtype}[2048,2048], {dtype}[16,512,2048], {dtype}[16,512,2048]"
    return _p(name, "scan", body, specs)


GRAD_BODY = """def f(pred, gt):
    def loss(pred):
        p = {F}
        o = jnp.einsum("bqn,bgn->bqg", p, gt)
        return jnp.sum(({R}) ** 2)
    return jax.grad(loss)(pred)
"""


def programs() -> list[Program]:
    odd = {"b": 16, "q": 100, "g": 50, "n": 12544}
    return [
        # one reader: the contraction alone
        *[bat(f"bat-{f}-e1", f, "e1") for f in ("sig", "exp", "softplus")],
        # two readers: a second contraction, a sum, a max
        *[bat(f"bat-sig-{r}", "sig", r) for r in ("e2", "es", "em")],
        *[bat(f"bat-{f}-es", f, "es") for f in ("exp", "softplus", "mul", "sel")],
        bat("bat-exp-e2", "exp", "e2"),
        # bf16 data, precision HIGHEST, odd sizes (wild14's)
        bat("bat-sig-es-bf16", dtype="bf16"), bat("bat-sig-e1-bf16", readers="e1", dtype="bf16"),
        bat("bat-sig-es-hi", prec="HIGHEST"), bat("bat-sig-e1-hi", readers="e1", prec="HIGHEST"),
        bat("bat-sig-es-odd", **odd), bat("bat-sig-e1-odd", readers="e1", **odd),
        # two tables of one argument, each read by one contraction (wild14's softplus pair)
        probe("bat-pair-e1", "bat", "def f(pred, gt):\n    a = jax.nn.softplus(pred)\n    c = jax.nn.softplus(-pred)\n"
              "    return jnp.einsum('bqn,bgn->bqg', a, gt) + jnp.einsum('bqn,bgn->bqg', c, 1.0 - gt)\n",
              "f32[16,128,8192], f32[16,64,8192]"),
        # 2-D: both operands large, or a narrow weight
        mat("mat-sig-e1", readers="e1"), mat("mat-sig-es"), mat("mat-sig-e2", readers="e2"),
        mat("mat-sig-es-w", g=64, n=8192, q=4096), mat("mat-sig-e1-w", readers="e1", g=64, q=4096),
        # under jax.grad
        probe("grad-sig-e1", "grad", GRAD_BODY.format(F="jax.nn.sigmoid(pred)", R="o"),
              "f32[16,128,8192], f32[16,64,8192]"),
        probe("grad-sig-es", "grad", GRAD_BODY.format(F="jax.nn.sigmoid(pred)",
                                                       R="o + jnp.sum(p, axis=-1)[..., None]"),
              "f32[16,128,8192], f32[16,64,8192]"),
        # f32 arguments contracted inside a scan
        scan("scan-loss", False, False), scan("scan-loss-ckpt", True, False),
        scan("scan-grad", False, True), scan("scan-grad-ckpt", True, True),
        scan("scan-grad-ckpt-bf16", True, True, dtype="bf16"),
        # after the first compiles (wild14's odd sizes stored with one reader, the powers of two fused with two):
        # which size decides, one contraction alone
        bat("bat-sig-e1-q100", readers="e1", q=100), bat("bat-sig-e1-g50", readers="e1", g=50),
        bat("bat-sig-e1-n12544", readers="e1", n=12544), bat("bat-sig-e1-n12288", readers="e1", n=12288),
        bat("bat-sig-e1-odd-small", readers="e1", q=100, g=50, n=4096),
        bat("bat-sig-e1-odd-b8", readers="e1", b=8, q=100, g=50, n=12544),
        mat("mat-sig-e1-odd", readers="e1", q=1600, g=800, n=12544),
        mat("mat-sig-e1-big", readers="e1", q=2048, g=1024, n=16384),
        # after the second compiles (a free dimension of 100 or 50 stored, batched): multiples of 8, other
        # readers, dtypes and precision at 100, the same in 2-D
        bat("bat-sig-e1-q104", readers="e1", q=104), bat("bat-sig-e1-q120", readers="e1", q=120),
        bat("bat-sig-e1-g56", readers="e1", g=56), bat("bat-exp-es-q100", "exp", q=100),
        bat("bat-sig-e1-q100-bf16", readers="e1", q=100, dtype="bf16"),
        bat("bat-sig-e1-q100-hi", readers="e1", q=100, prec="HIGHEST"),
        mat("mat-sig-e1-q1004", readers="e1", q=1004, g=1024), mat("mat-sig-e1-g1004", readers="e1", g=1004),
        # after the rule was written and measured (its edges, not tuned on the families): a free dimension of
        # 12, 1,004 and 3, the free dimension last (contracted over the middle axis), the batch not leading,
        # two free dimensions, a product, under jax.grad
        bat("bat-sig-e1-q12", readers="e1", q=12, n=65536), bat("bat-sig-e1-q1004", readers="e1", b=4, q=1004,
                                                                  n=4096),
        bat("bat-mul-e1-q100", "mul", "e1", q=100),
        probe("bat-center-q3", "bat", "def f(p, q):\n    pc = p - jnp.mean(p, axis=1, keepdims=True)\n"
              "    return jnp.einsum('bni,bnj->bij', pc, q)\n", "f32[64,65536,3], f32[64,65536,3]"),
        probe("bat-sig-e1-minor-q100", "bat", "def f(pred, gt):\n    p = jax.nn.sigmoid(pred)\n"
              "    return jnp.einsum('bnq,bgn->bqg', p, gt)\n", "f32[16,8192,100], f32[16,64,8192]"),
        probe("bat-sig-e1-mid-q100", "bat", "def f(pred, gt):\n    p = jax.nn.sigmoid(pred)\n"
              "    return jnp.einsum('qbn,bgn->bqg', p, gt)\n", "f32[100,16,8192], f32[16,64,8192]"),
        probe("bat-sig-e1-two-free", "bat", "def f(pred, gt):\n    p = jax.nn.sigmoid(pred)\n"
              "    return jnp.einsum('bqrn,bgn->bqrg', p, gt)\n", "f32[16,10,10,8192], f32[16,64,8192]"),
        probe("grad-sig-e1-q100", "grad", GRAD_BODY.format(F="jax.nn.sigmoid(pred)", R="o"),
              "f32[16,100,8192], f32[16,64,8192]"),
    ]


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, programs, TARGETS, TRUTH)


if __name__ == "__main__":
    raise SystemExit(main())
