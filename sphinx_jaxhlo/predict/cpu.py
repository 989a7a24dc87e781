"""The guide's CPU rules: XLA's own dots, argmax fusions, reduce-window splits and YNN fusions.

XLA CPU hands sums, means, maxima and most f32 contractions to YNNPACK
(``xla/backends/cpu/transforms/library_rewriter.cc``, ``xla/backends/cpu/ynn_support.cc``): a YNN
fusion grows from the reduction through producers YNN's op table has.  What it does not take is
written to memory before it.
"""

from __future__ import annotations

from typing import Any

from .graph import (
    LAYOUT_OPS,
    REDUCTION_KIND,
    TABLE_SHARE,
    Decision,
    Graph,
    Op,
    Reduction,
    Region,
    Value,
    _dot_dims,
    _kept,
    _moved_argument,
    build_region,
    trivial_dot,
)
from .limits import abstain

# -- per-target decisions -----------------------------------------------------------------------


#: XLA CPU's YNN tables at the installed jaxlib (measured: cos, sin, tan, divide and power are not
#: taken into a YNN fusion in this version although newer XLA lists them).
YNN_UNARY = frozenset({"abs", "ceil", "convert_element_type", "erf", "exp", "expm1", "floor", "log", "log1p",
                       "logistic", "neg", "round", "rsqrt", "sign", "sqrt", "tanh",
                       # jax primitives whose CPU lowering is made of the ops above
                       "exp2", "cosh", "stop_gradient"})
YNN_BINARY = frozenset({"add", "add_any", "max", "min", "mul", "sub", "div", "pow"})
YNN_DTYPES = frozenset({"float32", "bfloat16", "float64", "int8", "uint8"})
#: The operand types of a dot YNN takes.
YNN_DOT_DTYPES = frozenset({"float32", "bfloat16", "float64", "int8"})




def _is_clamp(op: Op) -> bool:
    """A max (min) with a constant whose operand or reader is a min (max) with a constant: XLA's clamp."""
    if op.prim not in ("max", "min") or not any(w.literal or w.size == 1 for w in op.ins):
        return False
    other = "min" if op.prim == "max" else "max"
    near = [w.producer for w in op.ins if w.producer is not None] + [u for v in op.outs for u in v.users]
    return any(o is not None and o.prim == other and any(w.literal or w.size == 1 for w in o.ins) for o in near)


def _ynn_op(op: Op) -> bool:
    """Whether XLA CPU's YNN fusion takes this op in (its table, its dtypes)."""
    dtype = op.outs[0].dtype if op.outs else ""
    if op.prim in ("broadcast_in_dim", "reshape", "squeeze", "expand_dims"):
        return dtype in YNN_DTYPES
    if op.prim == "transpose":
        return _transpose_folds(op)
    if op.prim == "integer_pow":
        return dtype in YNN_DTYPES  # jax lowers it to a chain of multiplies (a divide for y < 0)
    if op.prim == "square":
        return dtype in YNN_DTYPES
    if op.prim == "convert_element_type":
        return dtype in YNN_DTYPES and op.ins[0].dtype in YNN_DTYPES
    if trivial_dot(op):
        return dtype in YNN_DTYPES  # a broadcast multiply after XLA's algebraic simplifier (a vmapped outer product)
    if op.prim == "dot_general":
        m, n, _ = _dot_dims(op)
        # YNN's dot types (ynn_support.cc): f32, bf16 and int8 x int8 (to s32, or converted to f32); an f16
        # dot is converted to f32 around it, and the converts stay outside the fusion; in a bf16 or f16 operand
        # against an f32 one, the narrow one is converted to f32 first: an f32 dot (measured: a bf16 ``v``
        # against an attention's f32 softmax, one YNN fusion)
        dtypes = {w.dtype for w in op.ins}
        if len(dtypes) == 2 and "float32" in dtypes and dtypes <= {"float32", "bfloat16", "float16"}:
            dtypes = {"float32"}
        return m > 1 and n > 1 and len(dtypes) == 1 and dtypes <= YNN_DOT_DTYPES
    if op.prim == "conv_general_dilated":
        return _ynn_conv(op)
    if _is_clamp(op):
        return False
    if op.prim not in YNN_UNARY and op.prim not in YNN_BINARY:
        return False
    return dtype in YNN_DTYPES and all(w.dtype in YNN_DTYPES for w in op.ins)


def _ynn_conv(op: Op) -> bool:
    """A convolution YNN takes (``IsConvolutionOpSupportedByYnn``, ``ynn_support.cc``): two spatial
    dimensions, channels last (``NHWC`` with ``HWIO`` kernels, as XLA's dimension labels
    ``b01f_01io->b01f``), f32 or f64 throughout (``bf16`` too: YNN has no bf16 convolution, so
    ``FloatNormalization`` makes it an f32 one, ``CpuFloatSupport`` in ``cpu_float_support.h``, and the
    converts around it are YNN ops: measured, 5 probes fused), more than 16 input or output features, no
    input dilation, and neither the output nor the kernel larger than the input; depthwise (grouped by
    features) included: a ConvNeXt block's depthwise convolution, layer norm and MLP are one YNN fusion
    on the CPU (measured)."""
    dims = op.params.get("dimension_numbers")
    lhs, rhs = op.ins
    out = op.outs[0]
    if dims is None or op.params.get("batch_group_count", 1) != 1 or len(lhs.shape) != 4:
        return False
    if (tuple(dims.lhs_spec), tuple(dims.rhs_spec), tuple(dims.out_spec)) != ((0, 3, 1, 2), (3, 2, 0, 1),
                                                                            (0, 3, 1, 2)):
        return False
    if {lhs.dtype, rhs.dtype, out.dtype} not in ({"float32"}, {"float64"}, {"bfloat16"}):
        return False
    if any(d != 1 for d in op.params.get("lhs_dilation", (1, 1))) or max(lhs.shape[3], out.shape[3]) <= 16:
        return False
    return all(out.shape[i] <= lhs.shape[i] and rhs.shape[i - 1] <= lhs.shape[i] for i in (1, 2))


def _transpose_folds(op: Op) -> bool:
    """Whether a transpose leaves no copy in XLA CPU's program.  XLA's simplifier first merges a chain
    of transposes into one (:func:`_collapsed`): a chain that undoes itself vanishes, and a transpose
    only other transposes read is merged into them (each judged by its own chain).  What is left folds
    where it transposes an argument or elementwise work YNN takes and every reader is a reduction (the
    reduction reads its operand in the other order: its dimensions change).  Anything else is a
    ``transpose_copy_fusion`` that writes the transposed table: a transpose followed by more
    elementwise work, a convert or a reshape before the reduction.  A transposed dot result folds into the dot (it
    writes in the transposed order); whether that dot still joins the reduction's fusion is left to the
    compile (:func:`_transposed_dot_read`)."""
    root, perm = _collapsed(op)
    if _identity(perm):
        return True
    readers = [u for u in (op.outs[0].users if op.outs else []) if u.prim != "transpose"]
    if not readers:
        return True
    src = root.producer
    if src is not None and src.prim == "dot_general":
        return True
    if not all(u.prim in ("reduce_sum", "reduce_max", "reduce_min") for u in readers):
        return False
    return src is None or ((src.prim in YNN_UNARY or src.prim in YNN_BINARY) and _ynn_op(src))


def _collapsed(op: Op) -> tuple[Value, tuple[int, ...] | None]:
    """A transpose and the transposes above it as one: the value the chain starts from and the
    permutation of the whole (``None`` where a permutation is not known)."""
    perm = op.params.get("permutation")
    v = op.ins[0]
    while perm is not None and v.producer is not None and v.producer.prim == "transpose":
        above = v.producer.params.get("permutation")
        if above is None:
            return v, None
        perm, v = tuple(above[p] for p in perm), v.producer.ins[0]
    return v, (tuple(perm) if perm is not None else None)


def _identity(perm: tuple[int, ...] | None) -> bool:
    return perm is not None and perm == tuple(range(len(perm)))


def _transposed_dot_read(g: Region) -> bool:
    """Whether the table's path holds a transposed dot result that something reads on the way to the
    reduction: measured both ways (``b @ row`` vmapped, transposed, floored and maxed: one YNN fusion;
    ``(x @ w).T`` summed, or exponentiated or scaled first: XLA's own dot writes it), so no rule."""
    for op in g.ops:
        if op.prim != "transpose" or not op.outs:
            continue
        root, perm = _collapsed(op)
        read = any(u.prim != "transpose" for u in op.outs[0].users)
        if read and not _identity(perm) and root.producer is not None and root.producer.prim == "dot_general":
            return True
    return False


def _ynn_reduce(red: Reduction) -> bool:
    if red.kind not in ("sum", "max", "min"):
        return False
    dtype = red.operand.dtype
    if red.kind == "sum":
        return dtype in ("float32", "float64", "int8", "uint8")  # bf16/f16 sums are upcast to f32 first
    return dtype in ("float32", "bfloat16", "float16", "float64", "int8", "uint8")


def _link_ops(g: Region, readers: list[Op] | None = None) -> tuple[list[Op], bool]:
    """The ops between a group's reductions and the ops that read their results (a two-pass
    statistic's path back into the table: ``max`` -> ``stop_gradient`` -> broadcast -> ``sub``), and
    whether any result reaches them.

    :param readers: the table-sized ops whose small operands are followed back (default: the region's).
    """
    results = {id(o) for r in g.reductions for o in r.op.outs}
    region = {id(o) for o in g.ops}
    out: list[Op] = []
    seen: set[int] = set()

    def walk(v: Value, depth: int) -> bool:
        if id(v) in results:
            return True
        if depth == 0 or v.producer is None or id(v.producer) in region:
            return False
        op = v.producer
        hit = False
        for w in op.ins:
            hit = walk(w, depth - 1) or hit
        if hit and id(op) not in seen:
            seen.add(id(op))
            out.append(op)
        return hit

    top = max((v.size for v in g.values), default=1)
    reached = False
    for op in g.ops if readers is None else readers:
        for w in op.ins:
            if w.size < top:
                reached = walk(w, 12) or reached
    return out, reached


#: Ops XLA CPU's YNN support checks before its size gate (``ynn_support.cc``): a broadcast of a small
#: result into the table is taken whatever its operand's size.
_UNGATED = frozenset({"broadcast_in_dim", "reshape", "squeeze", "expand_dims", "transpose", "copy", "copy_p",
                      "stop_gradient"})


def _preferred(op: Op) -> bool:
    """XLA CPU's ``IsInstructionPreferredByYnn`` (``ynn_support.cc``): an elementwise op joins a YNN
    fusion only with at least 4,096 elements in its result or in an operand."""
    if op.prim in _UNGATED:
        return True
    return max([v.size for v in op.outs] + [w.size for w in op.ins], default=0) >= YNN_MIN_ELEMENTS


def _reciprocal_source(op: Op, top: int) -> int | None:
    """For a table-sized divide by a broadcast small value, the size of that value: XLA's simplifier
    rewrites ``a / broadcast(b)`` into ``a * broadcast(1 / b)``, a divide of ``b``'s size (measured on
    the CPU: ``exp(x) / sum(exp(x), 1, keepdims=True)``)."""
    if op.prim != "div" or len(op.ins) != 2 or op.ins[1].size >= top:
        return None
    v = op.ins[1]
    while v.producer is not None and v.producer.prim in ("broadcast_in_dim", "reshape", "squeeze", "expand_dims"):
        v = v.producer.ins[0]
    return v.size


def _gated_links(g: Region, readers: list[Op] | None = None) -> bool:
    """Whether every op that carries a group's reduction results to ``readers`` (default: the region's
    ops) passes YNN's size gate, counting the reciprocal a divide by a broadcast result becomes."""
    top = max((v.size for v in g.values), default=1)
    for op in g.ops if readers is None else readers:
        size = _reciprocal_source(op, top)
        if size is not None and size < YNN_MIN_ELEMENTS and _link_ops(g, [op])[1]:
            return False
    return all(_preferred(op) for op in _link_ops(g, readers)[0])


def _reduced(red: Reduction) -> int:
    """Elements folded into one result."""
    return max(1, red.operand.size // max(1, _kept(red)))


def _canonical_dot(op: Op) -> bool:
    """A YNN dot in row-major form: ``[M, K] @ [K, N]`` (jax writes a transposed operand of the
    backward pass into the dimension numbers instead)."""
    if op.prim != "dot_general" or not _ynn_op(op):
        return False
    (lc, rc), (_, rb) = op.params["dimension_numbers"]
    lhs_rank = len(op.ins[0].shape)
    first_free = min((d for d in range(len(op.ins[1].shape)) if d not in rb), default=0)
    return tuple(lc) == (lhs_rank - 1,) and tuple(rc) == (first_free,)


def _decomposer_canonical(w: Value, contracting: Any, batch: Any) -> bool:
    """XLA's ``DotDecomposer`` leaves this dot operand as it is (``IsCanonical``, ``dot_decomposer.cc``):
    one contracting dimension, at most one free one, the batch dimensions first."""
    return len(contracting) == 1 and len(batch) + 2 >= len(w.shape) and tuple(batch) == tuple(range(len(batch)))


def _reads_as_is(op: Op, v: Value | None = None) -> bool:
    """A dot that YNN takes, reading its operand ``v`` (if given) with no copy of it.  ``DotDecomposer``
    transposes and reshapes both operands of a dot where one is not :func:`_decomposer_canonical` (the
    left one to ``[batch, M, K]``, the right to ``[batch, K, M]``): ``v`` must be canonical, or its
    dimensions are merged into a copy (grouped-query attention's softmax, two free dimensions: written).
    YNN's dot (``IsDotSupportedByYnn``, ``ynn_support.cc``) needs a left operand that contracts its last
    dimension and takes a right one either way: a dot the decomposer left as it is must have that
    (``x.T @ g``, a gradient's product, is XLA's own dot: ``g`` written).  Measured: an attention's
    ``dot(v, p)`` contracting the softmax ``p`` on its last dimension, ``v`` with its batch dimensions
    not first, is in the reductions' YNN fusion."""
    if op.prim != "dot_general" or not _ynn_op(op) or (v is not None and v not in op.ins):
        return False
    (lc, rc), (lb, rb) = op.params["dimension_numbers"]
    lhs, rhs = op.ins
    left, right = _decomposer_canonical(lhs, lc, lb), _decomposer_canonical(rhs, rc, rb)
    # a left operand of several free dimensions and no batch one, contracting its last (``x @ w`` of a
    # [N, H, W, C] activation): the decomposer's transpose is the identity and its reshape a bitcast (a
    # ConvNeXt block's MLP is in its YNN fusion, measured)
    left = left or (not lb and not rb and tuple(lc) == (len(lhs.shape) - 1,) and len(rhs.shape) == 2)
    if (lhs is v and not left) or (rhs is v and not right):
        return False
    return not (left and right) or tuple(lc) == (len(lhs.shape) - 1,)


def _taken_up(v: Value, values: list[Value], ops: list[Op], fused: set[int] | frozenset[int]) -> bool:
    """Whether the reductions' YNN fusion, holding each dot that reads ``v`` (its output is a value of a
    region decided fused), grows up into ``v``'s elementwise computation (``ops``) and the dots that
    computed it: ``LibraryRewriter::AddFusionCandidates`` (``library_rewriter.cc``) queues an operand once
    all its readers are in the fusion, and a dot is an op YNN takes (a dot, GELU, a dot, a residual add and
    a layer norm's sums: one YNN fusion, measured); a returned value is written.  Whether every value's
    readers are inside is the caller's check."""
    dots = [u for u in v.users if u.prim == "dot_general"]
    producers = [w.producer for w in values if w.producer is not None and w.producer.prim == "dot_general"]
    return (bool(dots) and all(id(o) in fused and _reads_as_is(d, v) for d in dots for o in d.outs)
            and all(_ynn_op(o) and _preferred(o) for o in ops) and all(_reads_as_is(p) for p in producers)
            and not any(w.is_out for w in values))


def _past_reshapes(v: Value, depth: int = 4) -> list[Op]:
    """The readers of ``v``, a reshape (a bitcast, which YNN takes) replaced by its own readers: a
    projection's output reshaped into heads and sliced into q, k and v is read by the slices."""
    out: list[Op] = []
    for u in v.users:
        if u.prim == "reshape" and depth > 0 and u.outs and u.outs[0].users:
            out += _past_reshapes(u.outs[0], depth - 1)
        else:
            out.append(u)
    return out


def _ynn_chain_to_output(op: Op) -> list[Op] | None:
    """A reader whose computation, forward to the program's outputs or a reduction, is YNN ops only:
    those ops (the YNN fusion of the reductions can take them in as more of its roots), else ``None``."""
    todo, seen, chain = [op], set(), []
    while todo:
        o = todo.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if o.prim in REDUCTION_KIND:
            continue
        if not _ynn_op(o) or len(seen) > 64:
            return None
        chain.append(o)
        todo += [u for v in o.outs for u in v.users]
    return chain


def _chain_joins(g: Region, op: Op, kept: int) -> bool:
    """An outside reader of the table that XLA CPU's YNN fusion takes in with the reductions: its
    chain to the output is YNN ops and reads a reduction's result through ops that pass YNN's size
    gate (``x - max(x)``, ``x / sum(x)`` over 4,096 kept elements or more, measured), so the fusion
    writes only the output.  Any other chain joins as two reductions do, through results of 4,096
    elements or more (``kept``), except one that reaches the program's outputs computed from no
    reduction's result: that is a second fusion, and the table is written (``exp(x) * 2`` returned
    beside ``sum(exp(x), 1)``, at 4,096 and 8,192 rows, measured).  A layer norm's gradient (its output
    computed from the statistics) is one fusion at 4,096 rows, and so is a chain into other reductions
    (a Pearson correlation of converted rows).  No chain joins where a reduction's result is itself
    returned (``s, e / s``; ``m, e - m``): the fusion would have two roots, and XLA writes the table
    (measured at 512 and 8,192 rows)."""
    chain = _ynn_chain_to_output(op)
    if chain is None or not _gated_links(g, chain) or _result_returned(g):
        return False
    if _link_ops(g, chain)[1]:
        return True
    if kept < YNN_MIN_ELEMENTS:
        return False
    to_output = any(v.is_out for o in chain for v in o.outs)
    return not to_output or _computed_from_a_result([w for o in chain for w in o.ins])


def _result_returned(g: Region) -> bool:
    """Whether a result of ``g``'s reductions is one of the program's outputs, as it is or moved
    (``keepdims``), before it is read back into anything of the table's size."""
    top = max((v.size for v in g.values), default=1)
    todo = [(v, 4) for r in g.reductions for v in r.op.outs]
    while todo:
        v, depth = todo.pop()
        if v.is_out:
            return True
        if depth > 0:
            todo += [(w, depth - 1) for u in v.users if u.prim in LAYOUT_OPS for w in u.outs if w.size < top]
    return False


def _computed_from_a_result(values: list[Value], depth: int = 12) -> bool:
    """Whether any of ``values`` is computed from a reduction's result (within ``depth`` ops back)."""
    seen: set[int] = set()
    todo = [(v, depth) for v in values]
    while todo:
        v, d = todo.pop()
        op = v.producer
        if op is None or id(v) in seen or d == 0:
            continue
        seen.add(id(v))
        if op.prim in REDUCTION_KIND:
            return True
        todo += [(w, d - 1) for w in op.ins]
    return False


def _into_canonical_dot(op: Op) -> bool:
    """A reader that YNN's dot fusion takes in: the dot itself, or a chain of YNN elementwise ops,
    each result read once, that ends in it (softmax's normalisation before ``@ v``)."""
    for _ in range(8):
        if op.prim == "dot_general":
            return _canonical_dot(op)
        if not _ynn_op(op) or len(op.outs) != 1 or len(op.outs[0].users) != 1:
            return False
        op = op.outs[0].users[0]
    return False


def _reaches_reduction(v: Value, depth: int) -> bool:
    """A value read by a reduction, directly or through converts and reshapes."""
    for u in v.users:
        if u.prim in REDUCTION_KIND:
            return True
        if (depth > 0 and u.prim in ("convert_element_type", "reshape", "transpose")
                and any(_reaches_reduction(w, depth - 1) for w in u.outs)):
            return True
    return False


def _from_reduction(v: Value, depth: int) -> bool:
    """A (small) value computed from a reduction's result."""
    if v.producer is None or depth == 0:
        return False
    if v.producer.prim in REDUCTION_KIND:
        return True
    return any(_from_reduction(w, depth - 1) for w in v.producer.ins)




def _forward_ops(red: Reduction, table: int, depth: int = 8) -> set[int]:
    """The ops a reduction's result reaches through values smaller than the table."""
    out: set[int] = set()
    todo = [(v, depth) for v in red.op.outs]
    while todo:
        v, d = todo.pop()
        for u in v.users:
            if id(u) in out:
                continue
            out.add(id(u))
            if d > 0 and u.prim not in REDUCTION_KIND:
                todo += [(w, d - 1) for w in u.outs if w.size < table]
    return out


def _joins(g: Region) -> tuple[list[Reduction], bool, bool]:
    """Which of a group's reductions must share a YNN fusion through their results (a result that
    reaches another's table computation, or meets another's result), whether one shares the table
    with the others but never meets them, and whether two join only where their results meet (an op
    of the results' size, not the table's: ``sum(x) + max(x)``)."""
    if len(g.reductions) < 2:
        return [], False, False
    table = max(r.operand.size for r in g.reductions)
    regions = {id(r.op): {id(o) for o in build_region(r, max(1, int(TABLE_SHARE * r.operand.size))).ops}
               for r in g.reductions}
    forward = {id(r.op): _forward_ops(r, table) for r in g.reductions}
    linking: list[Reduction] = []
    met: set[int] = set()
    results_meet = False
    for r in g.reductions:
        for q in g.reductions:
            if q is r:
                continue
            feeds = bool(forward[id(r.op)] & regions[id(q.op)])
            meet = bool(forward[id(r.op)] & forward[id(q.op)])
            if feeds or meet:
                if r not in linking:
                    linking.append(r)
                met |= {id(r.op), id(q.op)}
                fed = feeds or bool(forward[id(q.op)] & regions[id(r.op)])
                results_meet = results_meet or (meet and not fed)
    isolated = any(id(r.op) not in met for r in g.reductions)
    return linking, isolated, results_meet


#: Below this many elements an op is not "preferred by YNN" (``IsInstructionPreferredByYnn``).
YNN_MIN_ELEMENTS = 4096


def decide_cpu(g: Region, graph: Graph) -> Decision:
    kinds = {r.kind for r in g.reductions}
    dots = [op for op in g.ops if op.prim == "dot_general" and not trivial_dot(op)]
    if dots and any(not _ynn_op(d) for d in dots):
        return Decision(True, "jaxhlo-predict-cpu-dot", "the contraction is not a YNN dot (dtype, a vector "
                        "operand): XLA's own dot writes its result")
    if not g.ops:
        return Decision(False, "jaxhlo-predict-all-none", "the reduction reads an argument directly")
    if kinds & {"top_k", "approx_top_k"}:
        return Decision(True, "jaxhlo-predict-cpu-other", "top_k sorts a stored operand")
    if all(_moved_argument(v) for v in g.values):
        return Decision(False, "jaxhlo-predict-all-none", "the reduction reads an argument, only transposed or "
                        "reshaped: the move folds into the reduction")
    if kinds <= {"arg"} and not dots:
        return Decision(False, "jaxhlo-predict-cpu-arg", "argmax/argmin are XLA loop fusions that take "
                        "elementwise producers in")
    if not all(_ynn_reduce(r) for r in g.reductions):
        if max(_reduced(r) for r in g.reductions) <= 32 and not dots:
            return Decision(False, "jaxhlo-predict-cpu-other", "a reduction of 32 elements or fewer a result is "
                            "not split: XLA's loop fusion takes its producers in")
        return Decision(True, "jaxhlo-predict-cpu-other",
                        f"a {'/'.join(sorted(kinds))} reduction of {g.reductions[0].operand.dtype} is not a YNN "
                        "reduction: XLA splits it into a reduce-window that fuses nothing")
    non_ynn = [op for op in g.ops if not _ynn_op(op)]
    if all(op.prim in ("transpose", "reshape") for op in g.ops):
        non_ynn = []  # a reduction of a transposed argument reads the argument (the transpose folds in)
    if non_ynn:
        names = sorted({"clamp" if _is_clamp(op) else op.prim for op in non_ynn})
        return Decision(True, "jaxhlo-predict-cpu-ynn", f"not in YNN's op table: {', '.join(names)}")
    link, _ = _link_ops(g)
    if link and not all(_ynn_op(op) for op in link):
        names = sorted({op.prim for op in link if not _ynn_op(op)})
        return Decision(True, "jaxhlo-predict-cpu-ynn", "the second pass needs the first's statistic through "
                        f"{', '.join(names)}, not in YNN's table: the two reductions cannot share one fusion, "
                        "so the table is written")
    linking, isolated, met = _joins(g)
    # the results' path into the table passes YNN's size gate; results that meet each other meet in
    # an op of the results' size, which must pass it too
    joinable = _gated_links(g) and (not met or min(_kept(r) for r in linking) >= YNN_MIN_ELEMENTS)
    kept = min(_kept(r) for r in linking or g.reductions)
    outside = [o for o in g.outside if not _into_canonical_dot(o) and not (joinable and _chain_joins(g, o, kept))]
    if outside or g.outputs:
        return Decision(True, "jaxhlo-predict-cpu-ynn", "a table value has a reader outside the reductions "
                        "(the backward pass, an output): YNN fuses only through values with one reader")
    if isolated:
        return Decision(True, "jaxhlo-predict-cpu-ynn", "two reductions of one table whose results never meet: "
                        "two YNN fusions, so the table is written")
    if linking and not joinable:
        return Decision(True, "jaxhlo-predict-cpu-ynn", "two reductions of one table join in one YNN fusion "
                        f"only through ops on their results of >= {YNN_MIN_ELEMENTS} elements (YNN's size gate; "
                        "a divide by a result is a reciprocal of the result's size)")
    if _transposed_dot_read(g):
        return abstain("a transposed contraction result is read on the way to the reduction: XLA keeps "
                       "the dot in the reduction's YNN fusion or writes it, by cases no rule separates")
    return Decision(False, "jaxhlo-predict-cpu-ynn", "every producer is in YNN's table and has one reader")
