"""The guide's H100 rules: GEMM and matrix-vector outputs, top_k, softmax, and priority fusion's cost model.

The cost model follows ``xla/service/gpu/model/gpu_performance_model.cc`` as priority fusion
(``xla/service/gpu/transforms/priority_fusion.cc``) uses it: a producer is fused into its reduction
when computing it there, once per reader, costs less than writing it and reading it back.  Where the
two estimates are within :data:`BREAK_EVEN_BAND` of each other the rule abstains: the real cost
model's terms (tiling, occupancy, cache) move the decision there, and only a compile tells.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .graph import (
    _ITEMSIZE,
    BITCASTS,
    ELEMENTWISE,
    REDUCTION_KIND,
    TABLE_SHARE,
    Decision,
    Graph,
    Op,
    Reduction,
    Region,
    Value,
    _dot_dims,
    _is_gemm,
    _shift_exp,
    build_region,
    operand_region,
)

# -- producer cost on the H100 -------------------------------------------------------------------

#: XLA's clock cycles per element on sm_90 (f32), ``xla/service/gpu/model/hlo_op_profiles_data.h``;
#: ops it does not list cost 3 (``kDefaultFlopsPerElement``).  jax primitives that lower to several
#: HLO ops are priced as their expansion.
H100_CYCLES = {
    "cos": 978, "sin": 958, "tanh": 467, "exp": 79, "exp2": 82, "log": 166, "log1p": 229, "expm1": 190,
    "sqrt": 75, "rsqrt": 75, "cbrt": 178, "pow": 510, "atan2": 431, "atan": 431, "div": 19, "add": 7,
    "add_any": 7, "sub": 7, "mul": 3, "logistic": 3 + 79 + 7 + 19, "integer_pow": 3, "square": 3,
    "erf_inv": 229 + 75 + 40,
    # HLO opcodes of their own that the sm_90 table does not list: XLA prices them at 3
    "tan": 3, "sinh": 3, "cosh": 3, "asin": 3, "acos": 3, "asinh": 3, "acosh": 3, "atanh": 3, "erf": 3,
}
H100_F64_FACTOR = 4
H100_CYCLES_C64 = {"cos": 2415, "sin": 2324, "exp": 641, "log": 756, "tanh": 2379, "mul": 79, "div": 498,
                   "sqrt": 4344, "rsqrt": 3148, "pow": 5532, "add": 7, "sub": 7}


def h100_cost(op: Op) -> float:
    dtype = op.outs[0].dtype if op.outs else "float32"
    if dtype.startswith("complex"):
        return H100_CYCLES_C64.get(op.prim, 7)
    base = H100_CYCLES.get(op.prim, 3)
    if op.prim == "integer_pow":
        base = 3 * max(1, abs(int(op.params.get("y", 2))) - 1) + (19 if int(op.params.get("y", 2)) < 0 else 0)
    if dtype == "float64":
        base *= H100_F64_FACTOR
    return base


# H100 device figures (``sphinx_jaxhlo/gpu_targets/h100.txtpb``) and the cost model's constants
_SM, _FPU, _CLOCK, _BW = 132, 128, 1.98, 3350.0  # cores, fpus a core, GHz, bytes a ns
_LAUNCH_US = 1.0
#: XLA's speed-up for data read again from cache, a small broadcast input fitting L1
#: (``kL2CacheSpeedup`` 2.5 x ``kL1CacheSpeedup`` 8 in gpu_performance_model_base.h); the bandwidth
#: is then capped by the blocks in flight (``AdjustBandwidth``: 32 bytes a clock a block).
_CACHE_SPEEDUP = 2.5 * 8


def _flops_per_ns(blocks: int) -> float:
    return min(blocks, _SM) * _FPU * _CLOCK * 2


def _bandwidth(blocks: int) -> float:
    return min(_BW, blocks * _CLOCK * 32)


def _combine(compute: float, memory: float) -> float:
    return compute + memory - 0.95 * min(compute, memory)


@dataclass
class ReductionShape:
    """A reduction as the GPU's reduction emitter sees it, on the physical layout."""

    kind: str  # "row" or "column"
    rows: int  # row: kept elements; column: reduced length
    length: int  # row: reduced length; column: kept elements

    @property
    def one_pass(self) -> bool:
        """Not split by the tree-reduction rewriter (race-free bounds of reduction_utils.cc)."""
        return self.length <= 16384 if self.kind == "row" else self.rows <= 4096

    def blocks(self) -> int:
        if self.kind == "row":
            if not self.one_pass:
                return 10**6
            length = self.length
            per_block = 32 if length <= 8 else (8 if length <= 512 else max(1, 4096 // length))
            return max(1, math.ceil(self.rows / per_block))
        if not self.one_pass:
            return max(1, math.ceil(self.rows / 128) * math.ceil(self.length / 64))
        if self.rows <= 8:
            return max(1, math.ceil(self.length / 128))
        return max(1, math.ceil(self.length / 64))


def h100_times(cycles: float, shape: ReductionShape, readers: int, inputs: int, itemsize: int,
               broadcasts: int = 0) -> tuple[float, float]:
    """(fused, unfused) microseconds of a producer of ``cycles`` a element read by ``readers``
    reductions of ``shape``, reading ``inputs`` table-sized arrays and ``broadcasts`` small ones
    broadcast to the table (read again from cache, at the reduction kernel's bandwidth)."""
    n = shape.rows * shape.length
    blocks = shape.blocks()
    f_red, f_full = _flops_per_ns(blocks), _flops_per_ns(10**6)
    reduce_cycles = 7
    cached_red = min(_BW * _CACHE_SPEEDUP, blocks * _CLOCK * 32)
    fused_bytes = inputs * n * itemsize / _bandwidth(blocks) + broadcasts * n * itemsize / cached_red
    fused = readers * (_LAUNCH_US + _combine(n * (cycles + reduce_cycles) / f_red, fused_bytes) / 1000)
    producer_bytes = (inputs + 1) * n * itemsize / _BW + broadcasts * n * itemsize / (_BW * _CACHE_SPEEDUP)
    unfused = (_LAUNCH_US * (readers + 1) + _combine(n * cycles / f_full, producer_bytes) / 1000
               + readers * _combine(n * reduce_cycles / f_red, n * itemsize / _bandwidth(blocks)) / 1000)
    return fused, unfused


def physical_axes(red: Reduction) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The reduced axes and shape of the reduction on the layout of the data it starts from.

    Walks back from the operand through elementwise ops and transposes to the first value that is
    not computed elementwise (an argument, a broadcast, a dot): XLA keeps that value's layout and
    moves the transpose into the reduction's dimensions."""
    if red.op.prim in ("argmax", "argmin"):
        axes = tuple(red.op.params.get("axes", ()))
    elif red.op.prim in ("top_k", "approx_top_k"):
        axes = (len(red.operand.shape) - 1,)
    else:
        axes = tuple(red.op.params.get("axes", ()))
    v = red.operand
    shape = v.shape
    perm = list(range(len(shape)))  # perm[i]: the source dim of operand dim i
    for _ in range(64):
        op = v.producer
        if op is None or v.is_arg:
            break
        if op.prim == "transpose":
            p = op.params["permutation"]
            perm = [p[i] for i in perm]
            v = op.ins[0]
            continue
        if op.prim in ELEMENTWISE:
            big = [w for w in op.ins if w.shape == v.shape and not w.literal]
            if not big:
                break
            v = big[0]
            continue
        break
    src_shape = v.shape
    if len(src_shape) != len(shape):
        return tuple(axes), shape
    return tuple(sorted(perm[a] for a in axes)), src_shape


def reduction_shape(red: Reduction) -> ReductionShape:
    got = physical_axes(red)
    axes, shape = got if got is not None else ((), red.operand.shape)
    if not shape:
        return ReductionShape("row", 1, 1)
    rank = len(shape)
    reduced = [d for d in range(rank) if d in axes]
    kept = [d for d in range(rank) if d not in axes]
    rsize = math.prod(shape[d] for d in reduced) if reduced else 1
    ksize = math.prod(shape[d] for d in kept) if kept else 1
    if not kept:
        return ReductionShape("row", 1, rsize)
    if reduced and max(kept) < min(reduced):
        return ReductionShape("row", ksize, rsize)
    # reduced dims more major than the minor kept ones: a column reduction
    minor_kept = math.prod(shape[d] for d in kept if d > max(reduced)) if reduced else ksize
    major_kept = ksize // max(minor_kept, 1)
    return ReductionShape("column", rsize, minor_kept * max(1, major_kept))


def _gpu_inputs(region: Region, red: Reduction) -> tuple[int, int]:
    """Table-sized arrays the region reads (an argument, a stored value; a scalar constant that the
    reduction's own operand multiplies counts too: XLA prices its broadcast as an array), and small
    arrays broadcast to the table (an outer product's vectors)."""
    floor = TABLE_SHARE * red.operand.size
    produced = {id(v) for v in region.values}
    inputs: set[int] = set()
    small: set[int] = set()
    for op in region.ops:
        if op.prim == "broadcast_in_dim":
            if op.ins[0].size > 1:
                small.add(id(op.ins[0]))
            continue
        for w in op.ins:
            if id(w) in produced or w.literal:
                continue
            if w.size >= floor:
                inputs.add(id(w))
            elif w.size > 1 and op.prim in ELEMENTWISE:
                small.add(id(w))  # broadcast implicitly (a [n, 1] against a [1, m])
    broadcasts = len(small)
    if not region.ops and red.operand.size >= floor:
        inputs.add(id(red.operand))
    quirk = sum(1 for op in region.ops for w in op.ins
                if w.literal and op.prim in ("mul", "add", "sub", "div") and op.outs[0] is red.operand)
    return len(inputs) + quirk, broadcasts


def decide_gpu(g: Region, graph: Graph) -> Decision:
    gemms = [op for op in g.ops if op.prim == "dot_general" and _is_gemm(op)]
    if gemms:
        return Decision(True, "jaxhlo-predict-h100-gemm", "a real contraction is a GEMM kernel whose output "
                        "is stored")
    if "matvec" in g.sources:
        return Decision(True, "jaxhlo-predict-h100-matvec", "a matrix-vector product is a reduction: its "
                        "result is stored before the next reduction")
    kinds = {r.kind for r in g.reductions}
    if kinds & {"top_k", "approx_top_k"} and g.ops:
        return Decision(True, "jaxhlo-predict-h100-topk", "top_k reads a stored operand")
    if not g.ops:
        return Decision(False, "jaxhlo-predict-all-none", "the reduction reads an argument directly")
    cycles = sum(h100_cost(op) for op in g.ops if op.prim in ELEMENTWISE)
    axes = {tuple(r.op.params.get("axes", ())) for r in g.reductions}
    if g.two_pass and _shift_exp(g) and len(axes) > 1 and any(op.prim == "div" for op in g.ops):
        return Decision(True, "jaxhlo-predict-h100-softmax", "a softmax followed by a reduction over another "
                        "axis: the Triton softmax kernel writes its whole output")
    if _shift_exp(g) and cycles >= 400:
        return Decision(True, "jaxhlo-predict-h100-softmax", "softmax's first pass writes the costly producer "
                        "as a side output that the second pass reads")
    outside = len([o for o in g.outside if o.prim not in REDUCTION_KIND])
    by_operand: dict[int, list[Reduction]] = {}
    for r in g.reductions:
        by_operand.setdefault(id(r.operand), []).append(r)
    worst: tuple[float, float, float, int, ReductionShape] | None = None
    for reds in by_operand.values():
        red = max(reds, key=lambda r: r.operand.size)
        region = build_region(red, max(1, int(TABLE_SHARE * red.operand.size)))
        cycles = sum(h100_cost(op) for op in region.ops if op.prim in ELEMENTWISE)
        readers = (1 if g.two_pass else len(reds)) + outside
        shape = reduction_shape(red)
        itemsize = min(_ITEMSIZE.get(red.operand.dtype, 4), 4)
        inputs, broadcasts = _gpu_inputs(region, red)
        fused, unfused = h100_times(cycles, shape, readers, inputs, itemsize, broadcasts)
        if worst is None or fused - unfused > worst[0] - worst[1]:
            worst = (fused, unfused, cycles, readers, shape)
    assert worst is not None
    fused, unfused, cycles, readers, shape = worst
    stored = fused > unfused
    stages = "one" if shape.one_pass else "two"
    ratio = fused / unfused if unfused else 1.0
    half = sorted({v.dtype for v in [*g.values, *(w for op in g.ops for w in op.ins)]
                   if v.dtype in ("bfloat16", "float16")})
    # bf16/f16 data: the model's element-type terms are not in these f32 figures, so the band is doubled
    near = near_break_even(ratio, 2 * BREAK_EVEN_BAND if half else BREAK_EVEN_BAND)
    margin = abs(ratio - 1) * 100
    lean = "leans stored" if stored else "leans fused"
    return Decision(None if near else stored, "jaxhlo-predict-h100-cost",
                    f"{shape.kind} reduction {shape.rows}x{shape.length} ({stages}-stage), producer {cycles:.0f} "
                    f"cycles, {readers} reader(s): fused {fused:.1f} us vs unfused {unfused:.1f} us "
                    f"({margin:.0f} % apart" + (f", inside the break-even band of "
                                                f"{(2 if half else 1) * BREAK_EVEN_BAND:.0%}"
                                                + (f" ({'/'.join(half)} data: twice the f32 band)" if half else "")
                                                + f"; {lean})" if near else ")"),
                    certain=not near, figures={"us_fused": fused, "us_unfused": unfused, "ratio": ratio})


#: The estimates' ratio (fused / unfused) within ``1 +- BREAK_EVEN_BAND`` of 1 (on a log scale) is too
#: near the break-even for the estimate to decide: XLA's own cost model has terms it leaves out and its
#: decision flips back and forth with the size there.  Measured by ``benchmarks/guide_predictor_band.py``
#: (``benchmarks/data/guide_predictor_band.json``): the widest disagreement between the estimate and
#: XLA, widened by a tenth.
BREAK_EVEN_BAND = 0.4


def near_break_even(ratio: float, band: float = BREAK_EVEN_BAND) -> bool:
    """Whether the estimates' ratio ``fused / unfused`` is inside the break-even band."""
    if ratio <= 0:
        return False
    return abs(math.log(ratio)) < math.log1p(band)


H100_K_ALIGN = 32


def _unaligned_matvec(graph: Graph) -> bool:
    """An H100 contraction with a narrow side (a matrix-vector product, or <= 64 rows or columns), a
    long K (>= 4096) not a multiple of 32 and a large matrix (>= 12M elements): XLA picks a split-K
    GEMM and pads its operands, copying the matrix.  Shorter or smaller ones are strength-reduced
    (multiply and reduce) or a plain dot, which copy nothing.  No autotuning deviceless: check."""
    for op in graph.live_ops():
        if op.prim != "dot_general":
            continue
        m, n, k = _dot_dims(op)
        if min(m, n) <= 64 and k >= 4096 and k % H100_K_ALIGN and max(m, n) * k >= 12_000_000:
            return True
    return False


def split_k_unsure(graph: Graph) -> bool:
    """An H100 contraction whose narrow side is 65 to 512 long, with a long unaligned K over a large
    matrix: split-K may pad it or not (the review measured pads at 65-384 rows and none at 448 and 512
    against ``f32[8191,4096]``); the rules do not say which."""
    for op in graph.live_ops():
        if op.prim != "dot_general":
            continue
        m, n, k = _dot_dims(op)
        if 64 < min(m, n) <= 512 and k >= 4096 and k % H100_K_ALIGN and max(m, n) * k >= 12_000_000:
            return True
    return False


# -- a cumulative op's operand ------------------------------------------------------------------------

#: The cumulative ops :func:`cumulative_operand` answers: jax lowers each to a reduce-window, which XLA rewrites
#: into a tree of windows reading each element more than once (``ReduceWindowRewriter::TryOptimizeCumSumOrProd``,
#: ``reduce_window_rewriter.cc``); ``cumlogsumexp`` computes ``exp`` and ``log`` of its own and is not measured.
CUMULATIVE = frozenset({"cumsum", "cumprod", "cummax", "cummin"})
#: Measured (``benchmarks/guide_predictor_cumulative_probes.py``, ``f32``): a producer of this many cycles a
#: element or more (``sqrt`` and ``rsqrt`` 75, ``exp`` 79, ``log``, ``tanh``, ``sigmoid``, ``sin``) is
#: written before the cumulative op; one of :data:`CUMULATIVE_FUSED_CYCLES` or fewer over one table-sized
#: input (a square, ``x + 1``, ``1 / x`` at 19, ``abs``, ``maximum``, a row scale) fuses into it, and the
#: reduction after it too.  Between the two nothing was measured.
CUMULATIVE_STORED_CYCLES = 75
CUMULATIVE_FUSED_CYCLES = 19
#: The cheap producer fused only where the tree is built and the table is large: along a scan of 128 or fewer
#: (the rewriter's base length) it was written at every size measured, and under 2**20 elements it went both
#: ways (written at 64 x 1,024 and 64 x 4,096, fused at 8 x 65,536 and 2,048 x 129).
CUMULATIVE_BASE_LENGTH = 128
CUMULATIVE_FUSED_MIN = 1 << 20


def cumulative_operand(operand: Value, op: Op) -> Decision | None:
    """Whether the H100 writes the table-sized ``operand`` of a cumulative op ``op`` before it: the elementwise
    ops that compute it, back to their table-sized inputs, priced by :func:`h100_cost`.  Two table-sized
    inputs (``x * y``) or a costly producer are written; one input and a cheap producer are fused into the
    cumulative op's passes.  None where the probes did not go or the general rule holds (an integer operand;
    one computed from a table a non-elementwise op made, or transposed: a transpose kernel writes it, or
    joined, sliced or padded; the op's output read by anything but elementwise ops, as a moving average's two
    windows): the general rule answers there.  A ``bf16`` or ``f16`` operand and an outer product of two
    vectors (no table-sized input) went both ways, and nothing was measured between the two costs: no
    answer."""
    out = op.outs[0] if op.outs else None
    head = (f"a {op.prim} reads each element of its operand more than once (a reduce-window XLA rewrites into a "
            "tree of windows)")
    if operand.dtype in ("bfloat16", "float16"):
        return Decision(None, "jaxhlo-predict-h100-topk", f"{head}; a {operand.dtype} operand was written or fused "
                        "whatever its producer's cost (a logarithm fused, a reciprocal written): compile it",
                        certain=False)
    if operand.dtype != "float32" or out is None or not out.users or any(u.prim not in ELEMENTWISE
                                                                          for u in out.users):
        return None
    floor = int(TABLE_SHARE * operand.size)
    values, ops = operand_region(operand, floor)
    made = {id(v) for v in values}
    # the region's sources: arguments, and values of ops it does not follow (a product's output, a gather's)
    inputs = {id(w): w for op in ops for w in op.ins if w.size >= floor and not w.literal and id(w) not in made}
    inputs.update({id(v): v for v in values if v.producer is not None and v.producer not in ops})
    if not ops:
        inputs = {id(operand): operand}
    if any(not w.is_arg for w in inputs.values()) or any(
            o.prim not in ELEMENTWISE and o.prim not in BITCASTS and o.prim != "broadcast_in_dim" for o in ops):
        return None  # a computed source, or one transposed, joined, sliced or padded: not probed
    cycles = sum(h100_cost(o) for o in ops if o.prim in ELEMENTWISE)
    if cycles >= CUMULATIVE_STORED_CYCLES or len(inputs) >= 2:
        what = (f"a producer of {cycles:.0f} cycles an element ({CUMULATIVE_STORED_CYCLES} or more were written)"
                if cycles >= CUMULATIVE_STORED_CYCLES
                else f"a producer of {len(inputs)} table-sized inputs")
        return Decision(True, "jaxhlo-predict-h100-topk", f"{head}: {what} is written before it rather than "
                        "computed again in each pass")
    if len(inputs) == 1 and cycles <= CUMULATIVE_FUSED_CYCLES:
        length = operand.shape[int(op.params.get("axis", 0))] if operand.shape else 1
        if length <= CUMULATIVE_BASE_LENGTH or operand.size < CUMULATIVE_FUSED_MIN:
            return Decision(None, "jaxhlo-predict-h100-topk", f"{head}; a cheap producer over {length} elements "
                            f"along the scan and {operand.size:,} in all: at {CUMULATIVE_BASE_LENGTH} or fewer along "
                            "the scan (no tree) or under 2**20 elements the measured operands were written as often "
                            "as not: compile it", certain=False)
        return Decision(False, "jaxhlo-predict-h100-topk", f"{head}: a producer of {cycles:.0f} cycles an element "
                        f"({CUMULATIVE_FUSED_CYCLES} or fewer were fused) over one table-sized input is computed in "
                        "its passes, and the reduction after it fuses too")
    why = ("no table-sized input (an outer product of smaller values) went both ways" if not inputs
           else f"a producer of {cycles:.0f} cycles an element lies between the measured {CUMULATIVE_FUSED_CYCLES} "
           f"(fused) and {CUMULATIVE_STORED_CYCLES} (written)")
    return Decision(None, "jaxhlo-predict-h100-topk", f"{head}; {why}: compile it", certain=False)
