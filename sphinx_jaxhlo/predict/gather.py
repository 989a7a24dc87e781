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
from .limits import abstain, scatter_reads_table

#: The longest row the probes saw a softmax's output written at for a gather (16,384: written; 16,400 and
#: longer: not): the one-pass row reduction's bound (``ReductionShape.one_pass``).
SOFTMAX_ROW = 16384
#: The fewest elements of a gathered table the fused-rows rule was measured at (65,536 and 262,144 of a
#: ``tanh`` were written, 524,288 and more fused).
MIN_ROWS_TABLE = 1 << 19
#: An embedding bag's reduced axis below which the column reduction is a loop (``WarpSize()`` in
#: ``IsUnnestedReductionFasterThanElemental``; bags of 25 rows fused, 32 and more not).
BAG_WARP = 32
#: Gathered rows a table row from which the probes saw an embedding bag fused (8, 12, 16, 64 ...) and up to
#: which they saw it written (0.5 to 6): between the two the rules abstain.
BAG_REUSE_FUSED = 8
BAG_REUSE_STORED = 6
#: How much smaller than its table a gather of single elements must be to pick "a few a row".
PICK_SPARSE = 8


def scatter_abstention() -> Decision:
    """A program whose only reduction is a scatter of updates it makes (``segment_sum`` of messages):
    left to the compile on every target.  Measured both ways: the CPU wrote computed and constant
    updates alike; the TPU wrote a graph's 256 MB of messages at 100,000 nodes and fused the gather, the
    multiply and the scatter into one kernel at 4,096 and 16,384 nodes; the H100 wrote a contraction's
    output that the gather reads."""
    return abstain("a scatter (a segment_sum, an .at[].add) reads updates the program makes: whether "
                          "they are written depends on the sizes, on every target (measured both ways), and no "
                          "rule here follows a scatter's fusion")


def tpu_gather_decision(graph: Graph, table: int, gathered: str, outside: bool = False) -> Decision | None:
    """TPU: a gather that reads or builds a table-sized value (``gathered``, from
    :func:`~sphinx_jaxhlo.predict.limits.gather_of_table`), or a scatter whose updates are a computed table,
    writes that table, inside a reduction's region or, with ``outside``, where no live reduction reads it
    (a gather's gradient: a scatter writing a table-sized value).  None when there is neither."""
    what = (gathered if outside or gathered.startswith("a gather") else "") or scatter_reads_table(graph, table)
    if not what:
        return None
    where = ", outside any reduction (a gradient's backward pass)" if outside else ""
    built = [w for op in graph.live_ops() if op.prim == "gather" or _is_scatter(op)
             for w in (op.outs[0], op.ins[0]) if w.producer is not None and not w.is_arg]
    largest = max(built, key=lambda w: w.size, default=None)
    return Decision(True, "jaxhlo-predict-tpu-topk", f"{what}{where}: the TPU writes the table the gather or "
                    "scatter reads or builds (measured: libtpu is closed)",
                    value=largest if largest is not None and largest.size > table else None)


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
    """Every reduction of the region reduces the trailing axes of its operand (the last, or the last few:
    contiguous, one row to XLA's reduction emitter) and nothing else reads it."""
    for r in g.reductions:
        axes = tuple(sorted(r.op.params.get("axes", ())))
        rank = len(r.operand.shape)
        if r.kind not in ("sum", "max", "min") or rank == 0 or not axes or axes != tuple(range(axes[0], rank)):
            return False
    return not g.outputs and not g.outside


def _bag_decision(op: Op, g: Region) -> Decision | None:
    """Gathered whole rows (``emb[ids]``, [b, s, d]) reduced over an axis that is not the last (an embedding
    bag: a sum, mean or max over its ``s`` rows); ``None``: another shape, or a reuse the probes leave open."""
    out, src = op.outs[0], op.ins[0]
    bags = []
    for r in g.reductions:
        axes = tuple(r.op.params.get("axes", ()))
        rank = len(r.operand.shape)
        if (r.kind not in ("sum", "max", "min") or rank != len(out.shape) or rank < 3 or len(axes) != 1
                or axes[0] in (0, rank - 1)):
            return None
        bags.append(r.operand.shape[axes[0]])
    if not bags or g.outputs or g.outside:
        return None
    reuse = out.size / src.size
    masked = _row_masked(op, g)
    if masked is None:
        return None
    if max(bags) < BAG_WARP:
        return Decision(False, "jaxhlo-predict-h100-cost", f"gathered rows (an embedding bag) reduced over bags of "
                        f"{max(bags)} rows (fewer than {BAG_WARP}, a warp): the column reduction is emitted as a loop "
                        "(IsUnnestedReductionFasterThanElemental, ir_emission_utils.cc) and the loop-fusible gather "
                        "is fused into it, as in each of the 2 probes measured")
    if min(bags) < BAG_WARP:
        return None
    if not masked:
        return Decision(False, "jaxhlo-predict-h100-cost", "gathered rows (an embedding bag, emb[ids] or "
                        "jnp.take with mode='clip') reduced over the bag axis, with nothing but the rows themselves "
                        "in the reduction: the gather is loop-fusible (IsUniversallyLoopFusible, gpu_fusible.cc) and "
                        "priority fusion fuses it into the reduction at every reuse, as in each of the 17 probes "
                        "measured")
    if reuse >= BAG_REUSE_FUSED:
        return Decision(False, "jaxhlo-predict-h100-cost", "gathered rows (an embedding bag) masked or weighted "
                        f"row by row, reduced over the bag axis, {reuse:.3g} gathered rows a table row (at least "
                        f"{BAG_REUSE_FUSED}): priority fusion fuses the gather into the reduction (the cost model "
                        "prices a row's re-reads at cache bandwidth, ReadTimeWithDRAMHeuristic, "
                        "gpu_performance_model_base.cc, the likely reason), as in each of the 16 probes measured")
    if reuse <= BAG_REUSE_STORED:
        return Decision(True, "jaxhlo-predict-h100-cost", f"gathered rows (an embedding bag) masked or weighted "
                        "row by row (jnp.take's default mode, which fills out-of-bounds rows; a mask or weight a "
                        f"row) and reduced over bags of {min(bags)} rows or more, {reuse:.3g} gathered rows a table "
                        f"row (at most {BAG_REUSE_STORED}): priority fusion's cost model keeps the gather a kernel of "
                        "its own and its output is written for the reduction, as in each of the 53 probes measured")
    return None


#: The ops that only move or widen a value (a weight a row broadcast along the row).
_WIDEN = {"broadcast_in_dim", "reshape", "convert_element_type", "squeeze", "expand_dims", "transpose"}


def _row_masked(op: Op, g: Region) -> bool | None:
    """Whether the gathered rows are masked or weighted row by row before the reduction: a gather that fills
    out-of-bounds rows (``mode=FILL_OR_DROP``, ``jnp.take``'s default: a select a row in the HLO), or an
    elementwise op between the gather and the reduction that reads a value smaller than the rows (a mask, a
    weight a row, broadcast).  ``None``: it reads a value as large as the rows that the gather did not make."""
    masked = "FILL_OR_DROP" in str(op.params.get("mode", ""))
    derived = {id(op.outs[0])}
    ends = {id(r.operand) for r in g.reductions}
    todo = [op.outs[0]]
    while todo:
        v = todo.pop()
        if id(v) in ends:
            continue
        for user in v.users:
            if user.prim in REDUCTION_KIND or (user.prim not in ELEMENTWISE and user.prim not in LAYOUT_OPS):
                continue
            for w in user.ins:
                if id(w) in derived or w.literal or w.size == 1:
                    continue
                base = w
                while base.producer is not None and base.producer.prim in _WIDEN and base.producer.ins:
                    base = base.producer.ins[0]
                if base.size >= op.outs[0].size:
                    return None
                masked = True
            for o in user.outs:
                if id(o) not in derived:
                    derived.add(id(o))
                    todo.append(o)
    return masked


def _picked_decision(op: Op, g: Region) -> Decision | None:
    """One element a row (``take_along_axis``, ``x[arange(n), labels]``) of a table computed from the
    arguments by elementwise ops, reduced across the rows (a ``vmap``'s leading axes may stay); ``None``:
    another reading of the picked values."""
    out, src = op.outs[0], op.ins[0]
    rows = src.size // max(1, src.shape[-1]) if src.shape else 0
    if (any(int(n) != 1 for n in op.params.get("slice_sizes", ())) or out.size != rows
            or out.size * PICK_SPARSE > src.size):
        return None
    batch = rows // src.shape[-2] if len(src.shape) >= 3 else 1
    for r in g.reductions:
        axes = tuple(r.op.params.get("axes", ()))
        kept = r.operand.size
        for a in axes:
            kept //= r.operand.shape[a]
        if r.kind not in ("sum", "max", "min") or r.operand.size // kept < BAG_WARP or kept > batch:
            return None
    if not g.reductions or g.outputs or g.outside:  # read elsewhere too: as the bags, not measured
        return None
    return Decision(True, "jaxhlo-predict-h100-cost", "a gather picks one element a row (take_along_axis, "
                    "x[arange(n), labels]) of a table computed from the arguments elementwise, and a reduction reads "
                    "the picks across the rows: the gather with its producers is a loop fusion that computes only "
                    "the picked elements, and the reduction is a kernel of its own that reads them, written, from "
                    "memory, as in each of the 21 probes measured")


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
    if row is None and out.size >= floor and _elementwise_of_arguments(src):
        second = _bag_decision(op, g) if _whole_rows(op) else _picked_decision(op, g)
        if second is not None:
            return second
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
                    "argument or of an elementwise function of arguments, reduced over the last axis (or the last few, "
                    "one row to the reduction emitter) in one pass: the gather and its producers are loop-fusible "
                    "(IsUniversallyLoopFusible, gpu_fusible.cc) and the cost model (gpu_performance_model.cc) fuses "
                    "them into the reduction, as in each of the 45 probes measured")


def decide_h100_gather(g: Region, graph: Graph, table: int, d: Decision) -> Decision | None:
    """The H100's answer where a gather reads or builds a table-sized value or a scatter writes one
    (``d``: the H100's decider's answer for the region); ``None``: the rules abstain."""
    if (scattered := scatter_decision(graph, table)) is not None:
        return scattered
    fused: Decision | None = None
    deferred = False
    for op in _table_gathers(graph, table):
        if _recomputed_pick(op, table):
            deferred = True
            continue
        got = _gather_decision(op, g, table)
        if got is None:
            return None
        if got.stored:
            return got
        fused = fused or got
    if deferred and not (d.certain and d.stored is False):
        return None  # stored: the decider counts the gather as a reader of the table (probes cos, tanh: fused)
    if fused is None and deferred:
        return Decision(False, d.rule, "a gather picks one element a row of the table (a cross-entropy's label "
                        "logit): a loop fusion that recomputes the elements it picks, as in each of the 5 probes "
                        f"measured; the table's own reductions decide: {d.why}", figures=d.figures)
    if fused is None:
        return None
    return d if d.stored and d.certain else fused


def _recomputed_pick(op: Op, table: int) -> bool:
    """One element a row picked (``take_along_axis``, ``x[arange(n), labels]``), few beside the table, from a
    table computed from the arguments by elementwise ops and row reductions broadcast back that is no softmax
    diamond (a cross-entropy's ``logits - logsumexp(logits)``, a Taylor softmax's logs): the gather is a loop
    fusion that recomputes the elements it picks, and the table's own reductions decide where they fuse it
    (the softmax diamond is :func:`_softmax_row`'s); where they would store it the rules abstain, since the
    decider counts the gather as one more reader (a ``cos`` or ``tanh`` so read was fused)."""
    src, out = op.ins[0], op.outs[0]
    if out.size >= TABLE_SHARE * table or not src.shape or src.size < table:
        return False
    if any(int(n) != 1 for n in op.params.get("slice_sizes", ())) or out.size != src.size // max(1, src.shape[-1]):
        return False
    if src.is_arg or src.producer is None:
        return True
    _, _, other = _walk_back(src)
    return not other and _softmax_row(src) is None
