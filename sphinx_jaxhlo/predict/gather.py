"""The guide's H100 gather rules: a table a gather reads or builds, and a scatter (a gather's gradient).

A gather is loop-fusible as producer and as consumer on the GPU (``IsUniversallyLoopFusible`` in
``gpu_fusible.cc``; ``IsFusible`` in ``priority_fusion.cc`` lists ``kGather``): priority fusion's cost
model (``gpu_performance_model.cc``) decides whether its output is computed inside the reduction that
reads it, as for any producer.  A scatter is no such producer: it is an input fusion root
(``IsInputFusibleScatter``) that updates its operand in place (``ShouldFuseInPlaceOp``,
``instruction_fusion.cc``), so its output buffer is written.  What the cost model does with gathers was
measured (``benchmarks/guide_predictor_gather_probes.py``, 107 probes compiled for the H100, deviceless,
2026-12-07; the counts in the answers are those probes').
"""

from __future__ import annotations

from .graph import ELEMENTWISE, LAYOUT_OPS, REDUCTION_KIND, TABLE_SHARE, Decision, Graph, Op, Region, Value
from .limits import abstain

#: The longest row the probes saw a softmax's output written at for a gather (16,384: written; 16,400 and
#: longer: not): the one-pass row reduction's bound (``ReductionShape.one_pass``).
SOFTMAX_ROW = 16384
#: The fewest elements of a gathered table the fused-rows rule was measured at (65,536 and 262,144 of a
#: ``tanh`` were written, 524,288 and more fused).
MIN_ROWS_TABLE = 1 << 19


def scatter_abstention() -> Decision:
    """A program whose only reduction is a scatter of updates it makes (``segment_sum`` of messages):
    left to the compile on every target.  Measured both ways: the CPU wrote computed and constant
    updates alike; the TPU wrote a graph's 256 MB of messages at 100,000 nodes and fused the gather, the
    multiply and the scatter into one kernel at 4,096 and 16,384 nodes; the H100 wrote a contraction's
    output that the gather reads."""
    return abstain("a scatter (a segment_sum, an .at[].add) reads updates the program makes: whether "
                          "they are written depends on the sizes, on every target (measured both ways), and no "
                          "rule here follows a scatter's fusion")


def _is_scatter(op: Op) -> bool:
    return op.prim.startswith("scatter")


def scatter_decision(graph: Graph, table: int) -> Decision | None:
    """A live scatter whose output is table-sized (``jax.grad`` of a gather: a scatter-add into zeros, an
    ``.at[].add``): stored."""
    floor = TABLE_SHARE * table
    for op in graph.live_ops():
        if _is_scatter(op) and op.outs and op.outs[0].size >= floor:
            return Decision(True, "jaxhlo-predict-h100-topk", "a scatter writes a table-sized value (the gradient "
                            "of a gather, an .at[].add): a scatter is an input fusion root that updates its operand "
                            "in place (IsInputFusibleScatter, gpu_fusible.cc; ShouldFuseInPlaceOp, "
                            "instruction_fusion.cc), never fused into a reader: its output is written, as in each of "
                            "the 12 probes measured")
    return None


def _table_gathers(graph: Graph, table: int) -> list[Op]:
    """The live gathers :func:`~sphinx_jaxhlo.predict.limits.gather_of_table` flags: reading a computed
    table-sized value, or building one."""
    floor = TABLE_SHARE * table
    out = []
    for op in graph.live_ops():
        if op.prim == "gather" and op.ins:
            src = op.ins[0]
            if (src.producer is not None and not src.is_arg and src.size >= floor) or op.outs[0].size >= floor:
                out.append(op)
    return out


def _walk_back(v: Value, limit: int = 64) -> tuple[list[Op], list[Op], bool]:
    """The ops computing ``v`` from its arguments through elementwise and layout ops, the reductions met
    on the way (whose results are broadcast back), and whether anything else was met (a dot, a gather)."""
    ops: list[Op] = []
    reductions: list[Op] = []
    other = False
    todo, seen = [v], set()
    while todo and len(ops) < limit:
        w = todo.pop()
        if id(w) in seen or w.is_arg or w.literal:
            continue
        seen.add(id(w))
        op = w.producer
        if op is None:
            continue
        if op.prim in REDUCTION_KIND:
            reductions.append(op)
            continue
        if op.prim not in ELEMENTWISE and op.prim not in LAYOUT_OPS:
            other = True
            continue
        ops.append(op)
        todo.extend(op.ins)
    return ops, reductions, other or len(ops) >= limit


def _softmax_row(src: Value) -> int | None:
    """The row length where ``src`` is a softmax or log-softmax over its last axis, else ``None``: a sum
    over the last axis of exponentials of a computed value that ``src`` is computed from too (the
    diamond the Triton softmax rewriter matches: ``e / sum(e)``, ``s - log(sum(exp(s)))``)."""
    ops, reductions, other = _walk_back(src)
    if other:
        return None
    path = {id(src)} | {id(w) for op in ops for w in op.ins if not w.is_arg and w.size >= src.size}
    for red in reductions:
        operand = red.ins[0]
        if red.prim != "reduce_sum" or tuple(red.params.get("axes", ())) != (len(operand.shape) - 1,):
            continue
        sum_ops, _, _ = _walk_back(operand)
        shared = {id(w) for op in sum_ops for w in (*op.ins, *op.outs) if not w.is_arg and w.size >= src.size}
        if any(op.prim == "exp" for op in sum_ops) and shared & path:
            return src.shape[-1]
    return None


def _elementwise_of_arguments(v: Value) -> bool:
    """``v`` is an argument, or computed from arguments by elementwise and layout ops only."""
    _, reductions, other = _walk_back(v)
    return not reductions and not other


def _whole_rows(op: Op) -> bool:
    """The gather takes whole rows of its operand's last axis (an embedding lookup, ``x[idx]``)."""
    src = op.ins[0]
    sizes = tuple(op.params.get("slice_sizes", ()))
    return len(src.shape) >= 2 and src.shape[-1] > 1 and bool(sizes) and sizes[-1] == src.shape[-1]


def _row_reductions(g: Region) -> bool:
    """Every reduction of the region reduces the last axis of its operand and nothing else reads it."""
    for r in g.reductions:
        axes = tuple(r.op.params.get("axes", ()))
        rank = len(r.operand.shape)
        if r.kind not in ("sum", "max", "min") or rank == 0 or axes != (rank - 1,):
            return False
    return not g.outputs and not g.outside


def _gather_decision(op: Op, g: Region, table: int) -> Decision | None:
    """The answer for one gather; ``None``: the probes do not decide it."""
    floor = TABLE_SHARE * table
    src, out = op.ins[0], op.outs[0]
    row = _softmax_row(src) if src.producer is not None and not src.is_arg else None
    if row is not None and row <= SOFTMAX_ROW:
        return Decision(True, "jaxhlo-predict-h100-softmax", f"a gather reads a softmax's output over rows of {row} "
                        f"(at most {SOFTMAX_ROW}): the Triton softmax fusion (SoftmaxRewriterTriton, "
                        "softmax_rewriter_triton.cc) writes its whole output, which the gather reads from memory, as "
                        "in each of the 14 probes measured")
    if row is not None and out.size < floor:
        return Decision(False, "jaxhlo-predict-h100-cost", f"a gather takes a few elements a row of a softmax over "
                        f"rows of {row} (over {SOFTMAX_ROW}: no Triton softmax fusion, two-stage reductions): the "
                        "gather is loop-fusible (IsUniversallyLoopFusible, gpu_fusible.cc) and recomputes the few "
                        "elements it reads, nothing of the table's size is written, as in each of the 5 probes "
                        "measured")
    if row is not None or out.size < floor or not _whole_rows(op) or not _elementwise_of_arguments(src):
        return None
    if out.size < MIN_ROWS_TABLE or not all(len(r.operand.shape) == len(out.shape) for r in g.reductions):
        return None
    if not _row_reductions(g):
        return None
    if g.two_pass:
        return Decision(True, "jaxhlo-predict-h100-cost", "gathered rows (an embedding lookup, x[idx]) read in two "
                        "passes over the last axis (a mean, then the variance about it): the cost model prices the "
                        "gather's scattered reads once per reader and writes its output for both, as in each of the 6 "
                        "probes measured")
    return Decision(False, "jaxhlo-predict-h100-cost", "gathered whole rows (an embedding lookup, x[idx]) of an "
                    "argument or of an elementwise function of arguments, reduced over the last axis in one pass: the "
                    "gather and its producers are loop-fusible (IsUniversallyLoopFusible, gpu_fusible.cc) and the "
                    "cost model (gpu_performance_model.cc) fuses them into the reduction, as in each of the 33 probes "
                    "measured")


def decide_h100_gather(g: Region, graph: Graph, table: int, d: Decision) -> Decision | None:
    """The H100's answer where a gather reads or builds a table-sized value or a scatter writes one
    (``d``: the H100's decider's answer for the region); ``None``: the rules abstain."""
    if (scattered := scatter_decision(graph, table)) is not None:
        return scattered
    fused: Decision | None = None
    for op in _table_gathers(graph, table):
        got = _gather_decision(op, g, table)
        if got is None:
            return None
        if got.stored:
            return got
        fused = fused or got
    if fused is None:
        return None
    return d if d.stored and d.certain else fused
