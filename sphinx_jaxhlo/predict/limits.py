"""Where the guide's rules are not known to hold: the predictor abstains there ("compile it").

Each rule of :mod:`sphinx_jaxhlo.predict.rules` was written from programs it was checked on; where a
program leaves that ground the answer is ``stored=None`` with ``certain=False`` and the one-line
compile that answers, not a guess.  The checks here were drawn from the guide's own examples and from
the misses of the earlier holdouts (``benchmarks/guide_predictor_holdout.py``; five after the first
evaluation of ``benchmarks/guide_predictor_holdout3.py``): an op no rule knows (or a convolution's table
no reduction reads, after wild4; a convolution is answered on the H100 since wild5), a gather of a
table-sized value on the H100 and a scatter writing one (the TPU answers gathers since wild5,
:func:`scatter_reads_table` too), a normalised table reduced again (three passes or more), a variadic
reduce, a contraction that is the only reduction, a ``top_k`` of an argument on the H100, two
contractions feeding one TPU table, a TPU loop over a table-sized stack of operands, a contraction's
larger output outside every reduction on the TPU, ``bf16`` contractions of a computed table (an
``f16`` one is answered since wild5), a sort between, column statistics and clipped updates on the
CPU.  Each check names what it saw; :data:`LIMITS` is the rule's
anchor (the predictor page's section that lists them).
"""

from __future__ import annotations

from .graph import (
    _MOVES,
    BETWEEN,
    REDUCTION_KIND,
    TABLE_SHARE,
    Decision,
    Graph,
    Op,
    Reduction,
    Region,
    Value,
    _depends_on,
    _is_gemm,
    _moved_argument,
    build_region,
    reductions_of,
)

#: The anchor of the section that lists where the rules abstain.
LIMITS = "jaxhlo-predict-all-limits"

HALF = frozenset({"bfloat16", "float16"})


def abstain(why: str) -> Decision:
    """The answer where no rule is known to hold: compile it."""
    return Decision(None, LIMITS, why, certain=False)


def gather_of_table(graph: Graph, table: int) -> str:
    """A gather that reads a computed table-sized value or builds one, or a scatter that writes one
    (``take_along_axis`` after a ``log_softmax``, an embedding lookup, the gradient of a gather)."""
    floor = TABLE_SHARE * table
    for op in graph.live_ops():
        if op.prim == "gather" and op.ins:
            src = op.ins[0]
            if (src.producer is not None and not src.is_arg and src.size >= floor) or op.outs[0].size >= floor:
                return "a gather reads or builds a table-sized value (take_along_axis or indexing of a computed " \
                       "table, an embedding lookup)"
        if op.prim.startswith("scatter") and op.outs and op.outs[0].size >= floor:
            return "a scatter writes a table-sized value (the gradient of a gather)"
    return ""


def scattered_updates(graph: Graph) -> Reduction | None:
    """In a program with no reduction, the largest scatter whose updates the program makes
    (``jax.ops.segment_sum`` of messages, ``.at[i].add(1.0)``), as the reduction the rules answer for:
    its updates are the table.  Updates that are an argument, or one only moved (reshaped, transposed,
    sliced), are no table: the scatter reads the argument."""
    best: Reduction | None = None
    for op in graph.live_ops():
        if op.prim.startswith("scatter") and len(op.ins) > 2:
            upd = op.ins[2]
            if _moved_argument(upd, _SCATTER_MOVES):
                continue
            if best is None or upd.size > best.scaled:
                best = Reduction(op, SCATTER, upd, upd.size)
    return best


#: What a scatter's updates may go through and still be the argument they move: a slice too.
_SCATTER_MOVES = _MOVES | {"slice"}


#: The kind of :func:`scattered_updates`' reduction.
SCATTER = "scatter"


def scatter_reads_table(graph: Graph, table: int) -> str:
    """A scatter whose updates are a computed table-sized value (``jax.ops.segment_sum`` of an activation)."""
    floor = TABLE_SHARE * table
    for op in graph.live_ops():
        if op.prim.startswith("scatter") and len(op.ins) > 2:
            upd = op.ins[2]
            if upd.producer is not None and not upd.is_arg and upd.size >= floor:
                return "a scatter reads a computed table-sized value (a segment_sum of an activation)"
    return ""


def _region_reads(red: Reduction, others: list[Reduction]) -> list[Reduction]:
    """The reductions among ``others`` whose results ``red``'s table is computed from."""
    region = build_region(red, max(1, int(TABLE_SHARE * red.operand.size)))
    found = []
    for q in others:
        if q is red:
            continue
        results = {id(o) for o in q.op.outs}
        if any(_depends_on(w, results, 12) for op in region.ops for w in op.ins
               if w.size < red.operand.size):
            found.append(q)
    return found


def passes(graph: Graph, table: int, g: Region) -> int:
    """The longest chain of passes over table-sized data that ends at one of ``g``'s reductions: a
    softmax's maximum, its sum, then a reduction of the normalised table is three."""
    reds = [r for r in reductions_of(graph) if r.scaled >= TABLE_SHARE * table]
    deps = {id(r.op): _region_reads(r, reds) for r in reds}
    memo: dict[int, int] = {}

    def depth(r: Reduction, seen: frozenset[int]) -> int:
        if id(r.op) in memo:
            return memo[id(r.op)]
        inner = [depth(q, seen | {id(r.op)}) for q in deps.get(id(r.op), []) if id(q.op) not in seen]
        memo[id(r.op)] = 1 + max(inner, default=0)
        return memo[id(r.op)]

    return max((depth(r, frozenset()) for r in g.reductions if id(r.op) in deps), default=1)


def variadic(g: Region) -> str:
    """A variadic reduce: ``lax.reduce`` of several operands, or an argmax/argmin beside a max/min of
    the same value (XLA may merge them into one reduce)."""
    if any(r.kind == "generic" for r in g.reductions):
        return "a variadic lax.reduce"
    by_operand: dict[int, set[str]] = {}
    for r in g.reductions:
        by_operand.setdefault(id(r.operand), set()).add(r.kind)
    if any("arg" in kinds and kinds & {"max", "min"} for kinds in by_operand.values()):
        return "an argmax/argmin beside a max/min of the same value (one variadic reduce, or two)"
    return ""


def half_in(g: Region) -> str:
    """A ``bf16``/``f16`` value in the region or read by it."""
    values: list[Value] = [*g.values, *(w for op in g.ops for w in op.ins), *(r.operand for r in g.reductions)]
    got = sorted({v.dtype for v in values if v.dtype in HALF})
    return "/".join(got)


def tpu_gemms(g: Region) -> int:
    return sum(1 for op in g.ops if op.prim == "dot_general" and _is_gemm(op))


def from_gemm(v: Value, floor: float, depth: int = 6) -> bool:
    """``v`` is computed from a contraction's output, through up to ``depth`` elementwise or layout
    ops whose operands are at least ``floor`` elements (no reduction on the way)."""
    todo = [(v, depth)]
    while todo:
        w, left = todo.pop()
        src = w.producer
        if src is None or w.is_arg:
            continue
        if src.prim == "dot_general" and _is_gemm(src):
            return True
        if left > 0 and src.prim not in REDUCTION_KIND:
            todo += [(x, left - 1) for x in src.ins if x.size >= floor]
    return False


def chained_gemm(g: Region, table: int) -> str:
    """A contraction in ``g`` whose operand is computed, through elementwise or layout work, from another
    contraction's table-sized output (an MLP's two layers before the reduction)."""
    floor = TABLE_SHARE * table
    for op in g.ops:
        if op.prim == "dot_general" and _is_gemm(op) and any(
                from_gemm(w, floor) for w in op.ins if w.size >= floor and not w.is_arg):
            return "a contraction reads another contraction's table-sized output"
    return ""


def gemm_outside(graph: Graph, table: int, seen: set[int]) -> str:
    """A contraction's output twice the table or more, outside every reduction's region, that something
    reads (a hidden layer's activations kept for the backward pass)."""
    for op in graph.live_ops():
        if op.prim != "dot_general" or not _is_gemm(op) or op.loop is not None:
            continue
        v = op.outs[0]
        if id(v) not in seen and v.size >= 2 * table and v.users and not v.is_out:
            return "a contraction's output larger than the table is read outside the reductions (a backward pass)"
    return ""


def half_dot_of_table(g: Region) -> str:
    """An ``f16`` contraction reading a computed table (CPU)."""
    for op in g.ops:
        if op.prim == "dot_general" and any(w.dtype == "float16" for w in op.ins):
            return f"a {op.ins[0].dtype} contraction"
    return ""


def unknown_op(g: Region) -> str:
    """An op no rule knows computes the table (a convolution, a custom call): ``other:`` sources; a
    gather is :func:`gather_of_table`'s (on the CPU, an op outside YNN's table, as rule 4 says), a sort,
    scan or FFT the rule of ops between the source and the reduction's."""
    names = sorted(name for s in g.sources if s.startswith("other:") and (name := s.split(":", 1)[1]) != "gather"
                   and not name.startswith("scatter") and name not in BETWEEN)
    return f"{', '.join(names)}" if names else ""


def convolution_of_table(graph: Graph, table: int) -> str:
    """A convolution that computes a table-sized value, or reads a computed one, where no reduction reads a
    table (the gradient of a loss over a convolution's output: its backward convolution reads it)."""
    floor = TABLE_SHARE * table
    for op in graph.live_ops():
        if op.prim != "conv_general_dilated" or not op.outs:
            continue
        if op.outs[0].size >= floor or any(w.size >= floor and w.producer is not None for w in op.ins):
            return "conv_general_dilated computes or reads a table-sized value"
    return ""


def column_statistic(graph: Graph, table: int, g: Region) -> str:
    """A two-pass statistic (a mean, then the variance that needs it) over leading axes: a column
    reduction whose second pass reads the first's result (CPU)."""
    if not g.two_pass and passes(graph, table, g) < 2:
        return ""
    for r in g.reductions:
        axes = tuple(r.op.params.get("axes", ()))
        rank = len(r.operand.shape)
        if axes and rank >= 2 and rank - 1 not in axes:
            return "a two-pass statistic over leading axes (a column mean and variance)"
    return ""


def applied_back(g: Region, table: int) -> str:
    """A full reduction's result (a global norm) scales table-sized work outside its region that the
    program returns two or more of (a clipped update and its moments): XLA's loop fusions around the
    YNN reduction decide what is written."""
    inside = {id(o) for o in g.ops} | {id(r.op) for r in g.reductions}
    todo: list[tuple[Value, int]] = [(o, 6) for r in g.reductions for o in r.op.outs if o.size == 1]
    outs: set[int] = set()
    seen: set[int] = set()
    while todo:
        v, d = todo.pop()
        for u in v.users:
            if id(u) in seen or id(u) in inside:
                continue
            seen.add(id(u))
            if u.outs and u.outs[0].size >= TABLE_SHARE * table and u.prim not in REDUCTION_KIND:
                outs |= _outputs_reached(u, 8)
            elif d > 0 and u.prim not in REDUCTION_KIND:
                todo += [(w, d - 1) for w in u.outs]
    if len(outs) >= 2:
        return "a global statistic scales table-sized work returned as several outputs (a clipped update)"
    return ""


def _outputs_reached(op: Op, depth: int) -> set[int]:
    """The table-sized program outputs ``op``'s results reach through elementwise work."""
    found: set[int] = set()
    for v in op.outs:
        if v.is_out:
            found.add(id(v))
        if depth > 0:
            for u in v.users:
                if u.prim not in REDUCTION_KIND:
                    found |= _outputs_reached(u, depth - 1)
    return found
