"""The rules for contraction chains: a program whose only reduction is a contraction of a computed operand,
and a TPU table that two contractions feed.

Measured by ``benchmarks/guide_predictor_dots_probes.py`` (82 probes, each compiled deviceless for the
three targets, 2026-12-07) and checked on the families by ``benchmarks/guide_predictor_dots.py``; where the
probes split, or a case was not probed, the caller abstains (``limits.abstain``).

- The only reduction is a contraction (``exp(x) @ w``, ``(x * x) @ w``, a one-hot comparison ``oa.T @ ob``,
  a batched ``einsum`` of ``exp(s)``; :func:`sphinx_jaxhlo.predict.graph.reductions_of`) whose operand is
  computed from arguments by elementwise work, broadcasts and layout moves alone (:data:`_PRODUCERS`), read
  by nothing else: the CPU writes it (14 probes of 14: XLA's loop fusion computes it, ``wrapped_exponential``,
  and a YNN fusion holding the dot alone reads it; with no reduction the YNN fusion is started by the dot,
  ``LibraryRewriter::ProcessComputation``, and takes no producer in), the TPU fuses it into the dot's output
  fusion (14 probes of 14: one ``kOutput`` fusion of ``exponential`` and ``convolution``; libtpu is
  closed, so this is what the compiles show).  The H100 is left to the compile: the Triton GEMM takes the
  producer in its prologue but may split K and write partial products, or not fuse a square
  (``(x * x) @ w``), by shapes the rules do not follow.
- The operand is a contraction's output through elementwise work (``exp(x @ w1) @ w2``, no reduction):
  the first GEMM's output is stored on the H100 (a GEMM is a kernel of its own, ``h100-gemm``) and the CPU
  (two YNN dots, the elementwise work between them XLA's loop fusion), 2 probes of 2 each; the TPU fused
  both probes but stored 12 of the 26 chains reduced after (below), so it is left to the compile.
- TPU v5e, two sibling contractions feed one table (``x @ w1 + y @ w2``, SwiGLU's ``silu(a) * c``, a product,
  batched ``einsum`` s): an output fusion holds one dot; the other dot's output is written (``f32`` or
  ``bf16``, on-chip at 16 to 64 MB) and read by it: 9 probes of 9.  Where one contraction reads the
  other's table-sized output (an MLP's two layers, reduced after) the TPU wrote the first output in 12 of
  26 probes by sizes no stated rule separates: ``4096x512 @ 512x4096 @ 4096x1024`` fused and the same with
  a first contraction of 256 stored; ``... x2048 @ 2048x2048`` stored, and with a first contraction of 128
  fused; an explicit ``bf16`` convert between stored, all-``bf16`` operands fused.  Left to the compile, and
  so are a gradient's backward tables between contractions (20 of 29 stored: the 6 whose forward
  contraction is 256 long fused, and 3 of the 23 with a longer one, the weight gradients of ``x @ w``
  residuals at 1,000 and 1,024 and of a ``sin`` at 700; the chains above do not follow that length).

Two TPU v5e rules of a contraction's operand, measured by ``benchmarks/guide_predictor_operand_probes.py``
(54 probes, 2026-12-07) and checked on the families by ``benchmarks/guide_predictor_operand.py``: a computed
operand of a batched contraction whose rows are not a multiple of 8 is written
(:func:`unaligned_batched_operand`), and so is a ``bf16`` copy of a table-sized ``f32`` operand that a
loop's body contracts (:func:`converted_for_the_loop`).

A statistic of a table's groups applied back to the table (:func:`decide_grouped`): group-wise fake
quantisation (``w.reshape(-1, 128, n)``, its maximum and minimum, ``clip(round(g / scale) + zero)``
dequantised before ``x @ wq``) and group norms, measured by ``benchmarks/guide_predictor_fakequant_probes.py``
(69 probes, each compiled deviceless for the three targets, 2026-12-07).  The TPU writes a table-sized
buffer for groups of 16 or more (38 probes of 38: the scales broadcast over the groups, ``broadcast`` of the
``[g, n]`` scales to ``[g, 128, n]`` read by the dot's output fusion through a bitcast, or the quotient, or
``abs(w)`` before a reduction that reads it through a bitcast; libtpu is closed, so this is what the HLO
shows), with or without a contraction after; groups of 8 (2 probes) and every probe whose scales need no
reshape (per tensor, per channel: 29) fused.  The H100 writes the dequantised operand before its GEMM (38
of 38: a loop fusion of its own, as for a normalised operand) and the CPU too where a ``clip`` (not in YNN's
table) computes it from ``f32`` data (35 of 35; one ``bf16`` probe fused: left to the compile); the rules
for an ungrouped operand already said so, and the grouped ones missed only the reshape between.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from .graph import (
    ELEMENTWISE,
    TABLE_SHARE,
    Decision,
    Graph,
    Loop,
    Op,
    Region,
    Value,
    _depends_on,
    _is_gemm,
    _moved_argument,
    reductions_of,
)
from .limits import abstain, chained_gemm, from_gemm

#: What the probes computed a contraction's operand with: elementwise ops, broadcasts, ``iota`` (a one-hot
#: comparison) and layout moves; a gather, concatenate, pad, slice or sort was not probed.
_PRODUCERS = ELEMENTWISE | {"broadcast_in_dim", "iota", "transpose", "reshape", "squeeze", "expand_dims"}

#: The element types the probes contracted.
_PROBED = frozenset({"float32", "bfloat16"})


def _contraction(g: Region) -> tuple[Op, Value] | None:
    """``g``'s one contraction and its computed operand, where the probes' ground holds: a real contraction
    (both free sides longer than one) of ``f32`` or ``bf16`` data outside a loop, its operand computed (not
    an argument only moved) and read by nothing outside the region."""
    if len(g.reductions) != 1 or g.loop is not None or g.outside or g.outputs:
        return None
    op, v = g.reductions[0].op, g.reductions[0].operand
    if op.loop is not None or not _is_gemm(op) or any(w.dtype not in _PROBED for w in op.ins):
        return None
    if _moved_argument(v):
        return None
    return op, v


def decide_contraction(g: Region, target: str, table: int) -> Decision | None:
    """The answer for ``g``, whose only reduction is a contraction of a computed operand, or ``None``."""
    got = _contraction(g)
    if got is None:
        return None
    op, v = got
    others = [o for o in g.ops if o.prim == "dot_general" and o is not op]
    if others:
        # the probes' chains: one other contraction, whose output the operand is computed from
        if len(others) != 1 or not from_gemm(v, 0.9 * table) or not all(
                o.prim in _PRODUCERS or o.prim == "dot_general" for o in g.ops):
            return None
        if target == "gpu:h100":
            return Decision(True, "jaxhlo-predict-h100-gemm", "the only reduction is a contraction of another "
                            "contraction's output (through elementwise work): the first GEMM is a kernel of its "
                            "own, whose output is stored for the second (2 probes of 2)")
        if target == "cpu":
            return Decision(True, "jaxhlo-predict-cpu-dot", "the only reduction is a contraction of another "
                            "contraction's output: two YNN dots, the table between them written (XLA's loop "
                            "fusion computes the elementwise work; 2 probes of 2)")
        return None
    if not g.ops or not all(o.prim in _PRODUCERS for o in g.ops):
        return None
    if target == "cpu":
        return Decision(True, "jaxhlo-predict-cpu-dot", "the only reduction is a contraction of an operand computed "
                        "elementwise: with no reduction the YNN fusion holds the dot alone and takes no producer "
                        "in; XLA's loop fusion writes the operand for it (14 probes of 14)")
    if target == "tpu:v5e":
        return Decision(False, "jaxhlo-predict-tpu-fused", "the only reduction is a contraction of an operand "
                        "computed elementwise: the TPU computes it inside the dot's output fusion (14 probes of "
                        "14)")
    return None


def two_on_tpu(g: Region, table: int) -> Decision | None:
    """TPU v5e: ``g``'s table is fed by exactly two contractions, neither reading the other's output."""
    gemms = [op for op in g.ops if op.prim == "dot_general" and _is_gemm(op)]
    if len(gemms) != 2 or g.loop is not None or chained_gemm(g, table):
        return None
    if any(w.dtype not in _PROBED for op in gemms for w in op.ins):
        return None
    return Decision(True, "jaxhlo-predict-tpu-readers", "two contractions feed one table (a sum, a product, a "
                    "gate): an output fusion holds one dot, so the other dot's output is stored and read by it "
                    "(9 probes of 9)")


#: The TPU's sublane tile: a batched contraction's operand whose free dimension is not a multiple of it is
#: written first (:func:`unaligned_batched_operand`).
SUBLANES = 8


def unaligned_batched_operand(values: Iterable[Value], table: int) -> str:
    """TPU v5e: a batched contraction (``einsum("bqn,bgn->bqg")``) outside a loop reading one of ``values``
    of at least 0.9 times ``table`` elements, computed (not an argument only moved), whose free dimensions
    (neither batch nor contracted: the dot's rows) multiply to a number that is not a multiple of
    :data:`SUBLANES`, described, or ``""``.

    Measured by ``benchmarks/guide_predictor_operand_probes.py`` (deviceless, 2026-12-07): such an operand
    is written as the matrix unit reads it (converted to ``bf16`` at the default precision, ``f32`` at
    ``HIGHEST``), on-chip at 13 to 40 MB, whatever else reads it (the contraction alone, beside a ``sum`` or
    a ``max``): 15 probes of 15 (free dimensions of 3, 12, 100, 1,004 and 10 x 10; ``sigmoid``, ``exp``, a product, a
    centring; ``f32`` and ``bf16`` data; the free dimension first, in the middle or last; 13 to 80 MB
    tables); free dimensions of 64, 104, 120 and 128 fused (23 probes), and so did 2-D contractions of a
    free dimension of 1,004 (the batch is what makes the difference)."""
    floor = 0.9 * table
    for v in values:
        if v.size < floor or v.producer is None or _moved_argument(v):
            continue
        for op in v.users:
            if op.prim != "dot_general" or op.loop is not None or not _is_gemm(op):
                continue
            (lc, rc), (lb, rb) = op.params["dimension_numbers"]
            for w, cdims, bdims in ((op.ins[0], lc, lb), (op.ins[1], rc, rb)):
                if w is not v or not bdims:
                    continue
                rows = math.prod(d for i, d in enumerate(v.shape) if i not in cdims and i not in bdims)
                if rows % SUBLANES:
                    return (f"a batched contraction reads a computed {v.dtype}{list(v.shape)} whose free "
                            f"dimensions, {rows} rows, are not a multiple of {SUBLANES}")
    return ""


def operand_written(unaligned: str) -> Decision:
    """The TPU's answer where :func:`unaligned_batched_operand` found such an operand."""
    return Decision(True, "jaxhlo-predict-tpu-readers", f"{unaligned}: the TPU writes the operand first, as the "
                    "matrix unit reads it (converted to bf16 at the default precision), whatever else reads it "
                    "(15 probes of 15)")


#: The integer types the TPU's matrix unit reads as they are (its ``int8`` path).
INT8 = frozenset({"int8", "uint8"})


def int8_operand_written(graph: Graph, table: int) -> Decision | None:
    """TPU v5e: a contraction of an ``int8`` or ``uint8`` operand the program computes (a quantiser's
    ``round``, ``clip`` and ``astype(jnp.int8)`` of a weight) at least 0.9 times ``table`` elements: the TPU
    writes the integer operand before the dot, where an ``f32`` operand so computed fuses into it.

    Measured by ``benchmarks/guide_predictor_int8_probes.py`` (deviceless, 2026-12-07), from wild18's
    SmoothQuant: written in every probe quantising an operand (per-channel or constant scales, from ``f32``,
    ``bf16`` or ``int32``, ``uint8``, batched, tiny to 134 MB); the same quantiser before an ``f32`` product
    wrote nothing.  On a real TPU v5e the chip's own compile wrote it too, on-chip
    (``benchmarks/tpu_loop_int8_chip_tpu-v5e.json``)."""
    floor = TABLE_SHARE * table
    for op in graph.live_ops():
        if op.prim != "dot_general":
            continue
        for v in op.ins:
            if v.dtype in INT8 and v.size >= floor and v.producer is not None and not _moved_argument(v):
                article = "an" if v.dtype == "int8" else "a"
                return Decision(True, "jaxhlo-predict-tpu-readers", f"a contraction reads {article} {v.dtype} operand "
                                "the program computes (a quantised weight): the TPU writes it before the dot, as "
                                "in each of the probes measured (an f32 operand so computed fuses)", value=v)
    return None


def default_precision(op: Op) -> bool:
    """A contraction at the default precision (``precision=None`` or ``DEFAULT`` on both operands): on the TPU
    its ``f32`` operands are converted to ``bf16`` for the matrix unit."""
    prec = op.params.get("precision")
    if prec is None:
        return True
    return all(p is None or str(p).upper().endswith("DEFAULT") for p in (prec if isinstance(prec, tuple) else (prec,)))


def loop_contracts_f32(ops: Iterable[Op], table: int) -> bool:
    """Some contraction inside a loop reads, at the default precision, an ``f32`` operand of the loop of the
    table's size or more: loop-invariant data the body reads as it is, or one step's slice of a scanned
    operand (the copy's condition: the operand converted before the loop is the loop's own)."""
    floor = TABLE_SHARE * table
    return any(op.prim == "dot_general" and op.loop is not None and _is_gemm(op) and default_precision(op)
               and any(w.dtype == "float32" and (src := _loop_input(w, op.loop)) is not None and src.size >= floor
                       for w in op.ins) for op in ops)


#: Ops by which a loop's body takes one step's part of a loop-invariant operand (``xs[i]`` in a
#: ``fori_loop``: a dynamic slice, then a squeeze).
_STEP_OF = frozenset({"dynamic_slice", "slice", "squeeze", "reshape", "dynamic_index_in_dim"})


def _loop_input(w: Value, loop: Loop) -> Value | None:
    """The loop's operand that ``w``, read in ``loop``'s body, is (a value computed outside the body) or is
    one step's slice of (a scanned operand, or ``xs[i]`` of a loop-invariant one), else ``None``."""
    for _ in range(4):
        if w.slice_of is not None:
            return w.slice_of
        src = w.producer
        if src is None or src.loop is not loop:
            return w
        if src.prim not in _STEP_OF or not src.ins:
            return None
        w = src.ins[0]
    return None


def converted_for_the_loop(what: str) -> Decision:
    """TPU v5e: a loop's body contracts a table-sized ``f32`` operand (measured by
    ``benchmarks/guide_predictor_operand_probes.py``: 4 probes of 4, with and without ``jax.checkpoint`` and
    a gradient; ``bf16`` data fused; and the 6 family programs of the class, 6 of 6)."""
    return Decision(True, "jaxhlo-predict-all-loop", f"{what}: the TPU converts it to bf16 before the loop and "
                    "writes the copy (4 probes of 4; bf16 data fuse)")


# -- group-wise statistics applied back to their table (fake quantisation) ---------------------------------

#: A group's statistic applied back to a table whose groups have at least this many elements: the TPU writes a
#: table-sized buffer (:func:`grouped_statistic`); groups of :data:`GROUP_FUSED` or fewer fused, and those in
#: between were not probed.
GROUP_WRITTEN = 16
GROUP_FUSED = 8

#: What may lie between a table-sized value and the contraction that reads it.
_ON_THE_WAY = ELEMENTWISE | {"reshape", "transpose", "squeeze", "expand_dims"}


def _reshaped_axes(src: tuple[int, ...], out: tuple[int, ...]) -> set[int]:
    """The axes of a reshape's output ``out`` (of ``src``) that split one or more of ``src``'s dimensions
    into more (``[k, n] -> [k / 128, 128, n]``: 0 and 1); an axis carried over whole, a merge's and a
    size-1 axis are not among them."""
    src_dims = [d for d in src if d != 1]
    out_idx = [j for j, d in enumerate(out) if d != 1]
    out_dims = [out[j] for j in out_idx]
    made: set[int] = set()
    i = j = 0
    while i < len(src_dims) and j < len(out_dims):
        a, b, ii, jj = src_dims[i], out_dims[j], i + 1, j + 1
        while a != b:
            if a < b and ii < len(src_dims):
                a, ii = a * src_dims[ii], ii + 1
            elif b < a and jj < len(out_dims):
                b, jj = b * out_dims[jj], jj + 1
            else:
                return made
        if jj - j > 1 and jj - j >= ii - i:
            made |= {out_idx[k] for k in range(j, jj)}
        i, j = ii, jj
    return made


def _split_of(v: Value) -> tuple[Op, set[int]] | None:
    """The reshape that splits a table into ``v``'s groups (``v`` is its output, or computed from it
    elementwise at its shape), and the axes of ``v`` it made; ``None`` where there is none."""
    for _ in range(6):
        op = v.producer
        if op is None or op.loop is not None:
            return None
        if op.prim == "reshape":
            src = op.ins[0]
            if src.shape == v.shape or src.size != v.size:
                return None
            return op, _reshaped_axes(src.shape, v.shape)
        same = [w for w in op.ins if w.shape == v.shape]
        if op.prim not in ELEMENTWISE or not same:
            return None
        v = same[0]
    return None


def _applied(stat: Value, split: Op, floor: float) -> list[Value]:
    """The table-sized values computed elementwise from ``stat`` (a group statistic, through small values,
    broadcasts and reshapes) and from the table ``split`` groups: the statistic applied back."""
    table = {id(split.ins[0]), id(split.outs[0])}
    out: list[Value] = []
    todo, seen = [(stat, 0)], set()
    while todo:
        v, depth = todo.pop()
        if id(v) in seen or depth > 10:
            continue
        seen.add(id(v))
        for op in v.users:
            if op.loop is not None or not op.outs:
                continue
            big = op.outs[0].size >= floor
            if op.prim in ELEMENTWISE and big:
                if any(w is not v and _depends_on(w, table, 8) for w in op.ins):
                    out.append(op.outs[0])
            elif op.prim in ELEMENTWISE or op.prim in ("broadcast_in_dim", "reshape"):
                todo.append((op.outs[0], depth + 1))
    return out


def _contracted(values: list[Value], floor: float) -> tuple[Op, list[Op]] | None:
    """A real contraction outside a loop that reads a value computed from ``values`` through table-sized
    elementwise work and layout moves, and the ops on the way (those of ``values`` included)."""
    reached: dict[int, Value] = {}
    todo = list(values)
    dot: Op | None = None
    while todo:
        v = todo.pop()
        if id(v) in reached:
            continue
        reached[id(v)] = v
        for op in v.users:
            if op.loop is not None or not op.outs:
                continue
            if op.prim == "dot_general" and _is_gemm(op):
                dot = dot or op
            elif op.prim in _ON_THE_WAY and op.outs[0].size >= floor:
                todo.append(op.outs[0])
    if dot is None:
        return None
    ops: list[Op] = []
    back, seen = [w for w in dot.ins if id(w) in reached], set()
    while back:
        w = back.pop()
        if id(w) in seen or w.producer is None:
            continue
        seen.add(id(w))
        ops.append(w.producer)
        back += [u for u in w.producer.ins if id(u) in reached]
    return dot, ops


def grouped_statistic(graph: Graph, table: int) -> tuple[int, list[Value]] | None:
    """A statistic of a table's groups applied back to the table, outside a loop: a sum, max or min (a
    mean, an ``absmax``) over axes that a reshape split off an ``f32`` or ``bf16`` table of at least 0.9
    times ``table`` elements (``w.reshape(-1, 128, n)`` over axis 1; ``x.reshape(m, -1, 128)`` over the
    last), not over every axis,
    whose result is read, through small values, broadcasts and reshapes, by elementwise work of the table's
    size on the table (``g / scale``, ``g - mean``): (the elements a group, the values it computes), or
    ``None``.  A group-wise quantiser's scales and zero points, and a group normalisation, are such."""
    floor = TABLE_SHARE * table
    for r in reductions_of(graph):
        axes = tuple(r.op.params.get("axes", ()))
        v = r.operand
        if (r.kind not in ("sum", "max", "min") or r.op.loop is not None or v.size < floor or not r.op.outs
                or v.dtype not in _PROBED):
            continue
        if not axes or len(axes) >= len(v.shape) or (found := _split_of(v)) is None:
            continue
        split, made = found
        if not set(axes) <= made:
            continue
        applied = _applied(r.op.outs[0], split, floor)
        if applied:
            return math.prod(v.shape[a] for a in axes), applied
    return None


def decide_grouped(graph: Graph, target: str, table: int) -> list[Decision]:
    """The answer where a group statistic is applied back to its table (:func:`grouped_statistic`), as
    ``benchmarks/guide_predictor_fakequant_probes.py`` measured it (group-wise fake quantisation before a
    contraction, 2026-12-07): empty where the probes say nothing the other rules do not."""
    found = grouped_statistic(graph, table)
    if found is None:
        return []
    group, applied = found
    floor = TABLE_SHARE * table
    if target == "tpu:v5e":
        if group <= GROUP_FUSED:
            return []
        if group < GROUP_WRITTEN:
            return [abstain(f"a statistic of groups of {group} applied back to the table: groups of 8 fused, "
                            "16 or more were written, between was not measured; compile it")]
        return [Decision(True, "jaxhlo-predict-tpu-readers", f"a statistic of the table's groups of {group} (a "
                         "reduction over axes a reshape split off: a group-wise quantiser's scales, a group "
                         "norm's mean) is applied back to the table: the TPU writes a table-sized buffer, the "
                         "statistic broadcast over the groups or the quotient (38 probes of 38; groups of 8 "
                         "and the 29 probes of ungrouped statistics fused)")]
    got = _contracted(applied, floor)
    if got is None:
        return []
    dot, ops = got
    if target == "gpu:h100":
        return [Decision(True, "jaxhlo-predict-h100-gemm", "a GEMM's operand is computed from its table's "
                         "group statistics (a group-wise quantiser's scales, through the reshape back): a "
                         "kernel of its own writes it before the GEMM (38 probes of 38)")]
    from .cpu import _ynn_op

    bad = sorted({op.prim for op in ops if not _ynn_op(op)})
    if not bad:
        return []
    if any(w.dtype not in _PROBED for w in dot.ins):
        return []
    if any(w.dtype != "float32" for w in dot.ins):
        return [abstain("a bf16 or f16 contraction of a table computed from its group statistics: one probe "
                        "fused; compile it")]
    return [Decision(True, "jaxhlo-predict-cpu-ynn", f"a dot reads a table computed from its group statistics "
                     f"through a reshape ({', '.join(bad)} not in YNN's table, a clamp): XLA's loop fusion "
                     "writes it for the dot (35 probes of 35)")]
