"""The rules for a normalised table reduced again (a softmax, a log-softmax, a layer norm, an RMS norm or
an l2-normalisation of a table, then a second reduction of its output): three passes over table-sized
data, which :func:`sphinx_jaxhlo.predict.limits.passes` counts.  Measured by
``benchmarks/guide_predictor_norm_probes.py`` (76 probes a target; 18 of them for the TPU rule, 14 for the H100 one)
and checked on the families by
``benchmarks/guide_predictor_norm.py``; where the probes or the families split, the caller abstains.

- TPU v5e: the table is a 2-D contraction's output (``x @ w``, ``q @ k.T``, with or without an elementwise
  producer, normalised over either axis, forward or under ``jax.grad``): stored, 18 probes of 18 and
  every such family program.  A batched contraction's (``einsum('bqd,bkd->bqk')``) fused in the forward
  probes but was stored in a family's ``f16`` attention and under ``jax.grad``: left to the compile.  With
  no contraction, three passes are the rules' for any table (fused on the TPU), but over batched rows of
  4,096 or more, which the probes split on: left to the compile.
- H100: a 2-D table normalised over its last axis, rows of 512 or more, then reduced over axis 0, no
  gradient: the Triton softmax kernel (``softmax_rewriter_triton.cc``; a layer norm's two row reductions
  are such a diamond too) writes its whole output, which the column reduction reads (14 probes of 14).
  A reduction over the same axis after it fused in the probes but was stored in ten family programs
  (rows of 1,000, 255, 200, 16...); rows of 10, a 3-D table reduced over its first axis and a
  normalisation over axis 0 fused: left to the compile.
"""

from __future__ import annotations

import math

from .graph import TABLE_SHARE, Decision, Graph, Reduction, Region, reductions_of
from .limits import _region_reads, abstain, tpu_gemms

#: TPU: the shortest rows of a batched table normalised and reduced again that the probes split on.
TPU_SPLIT_ROW = 4096
#: The H100 rule's shortest rows (the normalised axis): rows of 10 fused in the probes.
H100_MIN_ROW = 512
#: Ops of a gradient's backward pass in the region: the H100 probes' gradients split.
_BACKWARD = frozenset({"add_any", "broadcast_in_dim"})


def _axes(r: Reduction) -> frozenset[int]:
    rank = len(r.operand.shape)
    return frozenset(int(a) % rank for a in r.op.params.get("axes", ()))


def chain(graph: Graph, table: int, g: Region) -> tuple[list[Reduction], list[Reduction]]:
    """The statistics ``g``'s reductions read (the normaliser's) and ``g``'s reductions that read them."""
    reds = [r for r in reductions_of(graph) if r.scaled >= TABLE_SHARE * table]
    stats: list[Reduction] = []
    finals: list[Reduction] = []
    for r in g.reductions:
        got = _region_reads(r, reds)
        if got:
            finals.append(r)
            stats += [q for q in got if q not in stats]
    return stats, finals


def _unchecked(n: int, contraction: str = "") -> Decision:
    return abstain(f"a reduction of a normalised table ({n} passes over table-sized data{contraction}): the rules "
                   "were checked on fewer")


def _plain_2d_dots(g: Region) -> bool:
    """``g``'s contractions are each a 2-D product with no batch dimension (and there is one)."""
    dots = [op for op in g.ops if op.prim == "dot_general"]
    return bool(dots) and all(
        op.outs and len(op.outs[0].shape) == 2 and not op.params["dimension_numbers"][1][0] for op in dots)


def decide_norm(g: Region, graph: Graph, target: str, table: int, n: int, d: Decision) -> Decision | None:
    """The answer for ``g``, a reduction of a normalised table (``n`` passes, three or more; ``d`` the rules'
    answer for any table): a rule's, an abstention, or ``None`` where the normalisation is checked to change
    nothing (the TPU's three passes with no contraction, but batched long rows), so ``d`` stands."""
    what = f"a normalised table reduced again ({n} passes over table-sized data)"
    if target == "tpu:v5e":
        if n == 3 and not tpu_gemms(g):
            rows = _tpu_batched_rows(g) if d.stored is False else ""
            return abstain(rows) if rows else None
        if _plain_2d_dots(g):
            return Decision(True, "jaxhlo-predict-tpu-readers", f"{what}, the output of a 2-D contraction: "
                            "the dot's output is stored for the passes that read it (18 probes of 18)")
        return _unchecked(n, ", a contraction's" if n == 3 else "")
    if target != "gpu:h100" or n != 3 or any(op.prim in _BACKWARD for op in g.ops):
        return _unchecked(n)
    stats, finals = chain(graph, table, g)
    if not stats or any(len(r.operand.shape) != 2 for r in stats + finals):
        return _unchecked(n)
    if any(_axes(q) != {1} or q.operand.shape[1] < H100_MIN_ROW for q in stats):
        return _unchecked(n)
    if any(_axes(r) not in ({0}, {1}) for r in finals) or not any(_axes(r) == {0} for r in finals):
        return _unchecked(n)
    return Decision(True, "jaxhlo-predict-h100-softmax", f"{what}, normalised over rows of "
                    f"{stats[0].operand.shape[1]} then reduced over axis 0: the Triton softmax kernel writes "
                    "its whole output, which the column reduction reads (14 probes of 14)")


def _tpu_batched_rows(g: Region) -> str:
    """TPU v5e, a table normalised then reduced again (three passes, no contraction) that the rules call
    fused: the reason to leave it to the compile when a reduction of ``g`` reads a table of rank three or
    more (the dimensions before its last two multiply to more than 1) over its last axis of
    :data:`TPU_SPLIT_ROW` elements or more, else ``""``.  Of the 28 programs of
    ``benchmarks/guide_predictor_softmax3d_probes.py`` (wild15's iBOT loss, a certain miss), every 2-D table
    and every row of 2,048 or fewer fused; over rows of 4,096 to 16,384 a 3-D or 4-D table was written in 13
    and fused in 3, by no shape the jaxpr separates (rows of 16,384 fused where rows of 8,192 were written;
    over rows of 4,096 a distillation loss written, a softmax's own weighted sum fused)."""
    for r in g.reductions:
        shape = r.operand.shape
        batched = len(shape) >= 3 and math.prod(shape[:-2]) > 1
        if batched and shape[-1] >= TPU_SPLIT_ROW and _axes(r) == {len(shape) - 1}:
            return (f"a {'x'.join(map(str, shape))} table normalised over rows of {shape[-1]} and reduced again: "
                    "the TPU wrote such a batched table in 13 of 16 probes and fused it in 3, by shapes the rules "
                    "do not separate")
    return ""
