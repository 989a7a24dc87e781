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
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from .graph import ELEMENTWISE, TABLE_SHARE, Decision, Loop, Op, Region, Value, _is_gemm, _moved_argument
from .limits import chained_gemm, from_gemm

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
