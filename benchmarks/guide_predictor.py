"""The guide's predictor as code: will XLA write the table a reduction reads to memory?

``predict(fn, *arg_specs, target=...)`` answers from the function's jaxpr alone (``jax.make_jaxpr``;
nothing is lowered or compiled) for ``cpu``, ``gpu:h100`` and ``tpu:v5e``, and names the rule of the
guide's predictor page that decided (``rule``: the page's anchor, ``jaxhlo-predict-<target>-<rule>``).

*The table* is the largest intermediate that feeds a reduction: the largest operand of a reduction
primitive in the jaxpr (a loop body's counted times its trip count: the whole table a loop walks
over).  ``stored`` says whether the compiled program writes an intermediate of the table's size to
memory; ``guide_predictor_family.py`` states the ground truth it is checked against, and
``guide_predictor_rules.md`` gives each rule's figures and the XLA source that applies it.

The rules, each stated once, here, in XLA's decision order:

Every target
  ``jaxhlo-predict-all-loop``: a loop's output is a buffer: a ``lax.map`` whose stacked result is
  reduced afterwards stores the whole table.  A ``lax.scan`` / ``fori_loop`` / ``lax.map`` that
  reduces *inside* its body holds one step's table at a time (or ``unroll`` steps').  A Python loop
  over chunks, or ``unroll=True``, is straight-line code that XLA sees whole: the H100 merges the
  steps' GEMMs into one (the whole table) and fuses other steps as it would each alone; the CPU
  stores every step of a Python loop, and what each step of an unrolled scan would store alone;
  the TPU fuses each step as alone.
  ``jaxhlo-predict-all-none``: a reduction of an argument itself stores nothing.

H100 (``xla/service/gpu/transforms/priority_fusion.cc``; the cost model of
``xla/service/gpu/model/gpu_performance_model.cc``)
  1. ``jaxhlo-predict-h100-gemm``: a real contraction (both free sides longer than one) is a GEMM
     kernel (Triton or cuBLAS) whose output is stored: the GEMM fusion is "not fusible" as a producer.
  2. ``jaxhlo-predict-h100-matvec``: a matrix-vector product is itself a reduction; its result is
     stored before another reduction reads it ("both the producer and the consumer contain a
     reduce").  Separately (``operand_copy``): a narrow contraction (a side <= 64) with a long K
     (>= 4096) not a multiple of 32 over a large matrix becomes a split-K GEMM that pads, i.e. copies,
     the matrix.
  3. ``jaxhlo-predict-h100-topk``: ``top_k`` and ``approx_max_k`` read a stored operand.
  4. ``jaxhlo-predict-h100-softmax``: a softmax followed by a reduction over another axis stores the
     softmax's output (the Triton softmax kernel writes it whole); a softmax or logsumexp of a costly
     producer (>= 400 cycles: tanh, cos) stores the producer.
  5. ``jaxhlo-predict-h100-cost``: otherwise priority fusion's cost model decides: the elementwise
     producer is stored when computing it inside the reduction kernel, once per reader, is slower
     than writing and reading it back.  The producer's cost is XLA's clock cycles per element on
     sm_90 (``hlo_op_profiles_data.h``: cos/sin ~970, pow ~510, tanh ~470, atan2/arctan ~430,
     log1p/expm1/cbrt/log ~170-230, exp/sqrt/rsqrt ~80, arithmetic 3-20; ops the table does not list,
     erf, tan, sinh, cosh, asin..., cost 3).  The kernel's parallelism comes from the reduction's
     shape on the *physical* layout (a transpose before it turns a row reduction into a column
     one): a one-pass reduction (a row <= 16384 long; a column reduced over <= 4096 rows) with few
     rows (row) or few kept columns (column) leaves SMs idle and stores even ``exp``; a longer one
     is split in two stages and fuses.  A variance's second pass reads the table through a
     full-width elementwise kernel and does not count as a second reader; siblings (``sum`` and
     ``max`` of one table) do.

CPU (``xla/backends/cpu/transforms/library_rewriter.cc`` and ``xla/backends/cpu/ynn_support.cc``;
``xla/service/cpu/cpu_instruction_fusion.cc``; ``xla/service/tree_reduction_rewriter.cc``)
  1. ``jaxhlo-predict-cpu-dot``: a contraction YNN does not take (a vector operand, f16, integer,
     complex) is XLA's own dot, which writes its result; a table one contraction computes and
     another reads, with no reduction before, between or after them, is XLA's loop fusion between
     two YNN dots, written.
  2. ``jaxhlo-predict-cpu-arg``: ``argmax``/``argmin`` are XLA's loop fusions and take any elementwise
     producer in.
  3. ``jaxhlo-predict-cpu-other``: other reductions YNN lacks (prod, any/all, integer sums, f16 sums)
     over more than 32 elements a result are split into a ``reduce-window`` that fuses nothing: a
     computed operand is stored (over 32 or fewer, XLA's loop fusion takes the producer in).
  4. ``jaxhlo-predict-cpu-ynn``: a sum/mean/max/min (f32; bf16 upcast to f32) is a YNN fusion, grown
     from the reduction (and from a YNN GEMM) through producers that YNN's table has (exp, exp2, log,
     log1p, expm1, tanh, logistic, sqrt, rsqrt, erf, abs, sign, neg, floor/ceil/round, cosh, add,
     sub, mul, div, max, min, pow, bf16/f32 converts) and whose values have one reader.  Anything
     else stores what is above it: compare/select (``where``, masks, ``isfinite``), ``clip``
     (clamp), ``cos``/``sin``/``tan``/``cbrt``/``sinh``/``arctan``, ``reduce_precision``, f16 or
     integer math, a transpose of an argument.  Two reductions of one table share one YNN
     fusion only where their results meet (a sum of the two; a statistic fed back into the table,
     as a variance or a softmax does) through YNN ops on results of >= 4096 elements
     (logsumexp's ``isfinite``/``select`` on the max stops it); results that never meet store the
     table.  A reader outside the reductions (the backward pass, an output) stores it too, unless
     it is a YNN op chain into a row-major YNN dot (softmax before ``@ v``), or, with results of
     >= 4096 elements, YNN ops to the program's output.

TPU
  1. ``jaxhlo-predict-tpu-complex``: complex data is split into real and imaginary f32 buffers.
  2. ``jaxhlo-predict-tpu-topk``: an exact ``top_k`` of a contraction sorts the stored product
     (``approx_max_k`` does not; a ``top_k`` of elementwise data is recomputed).
  3. ``jaxhlo-predict-tpu-readers``: a contraction's output read twice in separate passes (a
     statistic and the pass that needs it: variance, softmax, logsumexp; or the forward reduction
     and the backward pass of ``jax.grad`` of a loss nonlinear in the sums), a costly producer
     (cos/sin/tan) of an argument read in two passes, a returned table, or an argmax/argmin over
     every axis (relaid out first) is stored.  ``jax.checkpoint`` around the reduction recomputes
     the contraction instead; an elementwise table is recomputed for each reader.
  4. ``jaxhlo-predict-tpu-matvec``: a matrix-vector product's result is stored before another
     reduction (a plain sum of it folds in).
  5. ``jaxhlo-predict-tpu-fused``: otherwise a real dot, its elementwise producers and consumers and
     the reductions are one output fusion (siblings share it): nothing of the table's size is stored.

What the rules do not see (compile and look): autotuned GEMM tiles, XLA's algebraic rewrites of
special forms, the layouts XLA picks for intermediates, memory-space choices on the TPU, and costs
near the H100 cost model's break-even point.
"""

from __future__ import annotations

import math
import sys
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

__all__ = ["ANCHORS", "TARGETS", "load_function", "predict", "structs_of"]

TARGETS = ("cpu", "gpu:h100", "tpu:v5e")

#: The guide's anchors the rules encode, by target, in XLA's decision order.
ANCHORS: dict[str, tuple[str, ...]] = {
    "all": ("jaxhlo-predict-all-loop", "jaxhlo-predict-all-none"),
    "gpu:h100": ("jaxhlo-predict-h100-gemm", "jaxhlo-predict-h100-matvec", "jaxhlo-predict-h100-topk",
                 "jaxhlo-predict-h100-softmax", "jaxhlo-predict-h100-cost"),
    "cpu": ("jaxhlo-predict-cpu-dot", "jaxhlo-predict-cpu-ynn", "jaxhlo-predict-cpu-arg",
            "jaxhlo-predict-cpu-other"),
    "tpu:v5e": ("jaxhlo-predict-tpu-complex", "jaxhlo-predict-tpu-topk", "jaxhlo-predict-tpu-readers",
                "jaxhlo-predict-tpu-matvec", "jaxhlo-predict-tpu-fused"),
}

#: A value at least this share of the table's elements counts as the table.
TABLE_SHARE = 0.9

# -- the jaxpr as a graph -----------------------------------------------------------------------

#: Reduction primitives, by kind.
REDUCTION_KIND = {
    "reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min", "reduce_prod": "prod",
    "reduce_and": "logical", "reduce_or": "logical", "reduce_xor": "logical", "argmax": "arg",
    "argmin": "arg", "reduce": "generic", "top_k": "top_k", "approx_top_k": "approx_top_k",
}

#: Ops that only move or relabel data.
LAYOUT_OPS = frozenset({"broadcast_in_dim", "transpose", "reshape", "squeeze", "expand_dims", "rev",
                        "copy", "copy_p", "convert_element_type", "reduce_precision", "slice",
                        "dynamic_slice", "concatenate", "pad", "select_n"})

#: Elementwise math (the primitive names of jax.lax).
ELEMENTWISE = frozenset({
    "add", "add_any", "sub", "mul", "div", "neg", "exp", "exp2", "log", "log1p", "expm1", "sin", "cos", "tan",
    "tanh", "logistic", "sqrt", "rsqrt", "cbrt", "pow", "integer_pow", "square", "abs", "sign", "max", "min",
    "select_n", "gt", "lt", "ge", "le", "eq", "ne", "and", "or", "not", "xor", "convert_element_type",
    "is_finite", "floor", "ceil", "round", "erf", "erfc", "erf_inv", "atan2", "atan", "asin", "acos", "sinh",
    "cosh", "asinh", "acosh", "atanh", "reduce_precision", "clamp", "nextafter", "rem", "real", "imag",
    "complex", "conj", "copy", "copy_p", "stop_gradient", "lgamma", "digamma", "population_count",
    "shift_left", "shift_right_logical", "shift_right_arithmetic", "clz",
})


@dataclass(eq=False)
class Value:
    """One value of the flattened jaxpr."""

    shape: tuple[int, ...]
    dtype: str
    producer: Op | None = None
    users: list[Op] = field(default_factory=list)
    is_arg: bool = False
    is_out: bool = False
    literal: bool = False

    @property
    def size(self) -> int:
        return math.prod(self.shape) if self.shape else 1


@dataclass(eq=False)
class Loop:
    """A ``scan`` or ``while`` the ops of a body sit in."""

    kind: str
    trips: int
    unroll: int
    parent: Loop | None = None

    @property
    def unrolled(self) -> bool:
        """Unrolled as long as the loop: XLA gets straight-line code, every step's buffers at once."""
        return self.unroll >= self.trips > 0


@dataclass(eq=False)
class Op:
    prim: str
    params: dict[str, Any]
    ins: list[Value]
    outs: list[Value]
    loop: Loop | None = None
    remat: bool = False
    live: bool = True


class Graph:
    """The jaxpr flattened: calls inlined, loop bodies kept with their loop."""

    def __init__(self, closed: Any) -> None:
        self.ops: list[Op] = []
        self._cse: dict[tuple[Any, ...], list[Value]] = {}
        jaxpr = closed.jaxpr
        env = [self._new(v, is_arg=True) for v in jaxpr.invars]
        consts = [self._new(v) for v in jaxpr.constvars]
        outs = self._inline(jaxpr, env, consts, None, False)
        for out in outs:
            out.is_out = True
        self.outputs = outs
        self._dce()

    @staticmethod
    def _new(var: Any, is_arg: bool = False) -> Value:
        aval = var.aval
        shape = tuple(int(d) for d in getattr(aval, "shape", ()))
        return Value(shape, str(getattr(aval, "dtype", "")), is_arg=is_arg, literal=hasattr(var, "val"))

    def _add(self, op: Op) -> list[Value]:
        """Record ``op``: its operands gain a reader, its results their producer; its results."""
        for v in op.ins:
            v.users.append(op)
        for v in op.outs:
            v.producer = op
        self.ops.append(op)
        return op.outs

    def _inline(self, jaxpr: Any, args: list[Value], consts: list[Value], loop: Loop | None,
                remat: bool) -> list[Value]:
        env: dict[Any, Value] = {}
        for var, val in zip(jaxpr.invars, args, strict=False):
            env[var] = val
        for var, val in zip(jaxpr.constvars, consts, strict=False):
            env[var] = val

        def read(var: Any) -> Value:
            if hasattr(var, "val"):
                return self._new(var)
            got = env.get(var)
            if got is None:
                got = env[var] = self._new(var)
            return got

        for eqn in jaxpr.eqns:
            ins = [read(v) for v in eqn.invars]
            name = eqn.primitive.name
            inner = _call_jaxpr(eqn)
            if name == "scan":
                outs = self._loop(eqn, ins, "scan", int(eqn.params["length"]), _unroll(eqn), loop, remat)
            elif name == "while":
                outs = self._loop(eqn, ins, "while", _while_trips(eqn), 1, loop, remat)
            elif name == "cond":
                branch = eqn.params["branches"][-1]
                branch_consts = [self._new(c) for c in branch.jaxpr.constvars]
                outs = self._inline(branch.jaxpr, ins[1:], branch_consts, loop, remat)
            elif inner is not None:
                sub, sub_consts = inner
                consts_v = [self._new(c) for c in sub.constvars] if sub_consts is None else sub_consts
                outs = self._inline(sub, ins, consts_v, loop, remat or name in ("remat2", "checkpoint", "remat"))
            elif (key := _cse_key(name, eqn.params, ins, loop, remat)) is not None and key in self._cse:
                outs = self._cse[key]  # XLA's CSE: the same op of the same operands is computed once
            else:
                outs = self._add(Op(name, dict(eqn.params), ins, [self._new(v) for v in eqn.outvars], loop, remat))
                if key is not None:
                    self._cse[key] = outs
            for var, val in zip(eqn.outvars, outs, strict=False):
                env[var] = val
        return [read(v) for v in jaxpr.outvars]

    def _loop(self, eqn: Any, ins: list[Value], kind: str, trips: int, unroll: int, parent: Loop | None,
              remat: bool) -> list[Value]:
        """A loop op at this level, its body's ops beside it with their loop."""
        op = Op(kind, dict(eqn.params), ins, [self._new(v) for v in eqn.outvars], parent, remat)
        outs = self._add(op)
        body = eqn.params["jaxpr"] if kind == "scan" else eqn.params["body_jaxpr"]
        loop = Loop(kind, max(trips, 1), unroll, parent)
        body_args = [self._new(v) for v in body.jaxpr.invars]
        if kind == "scan":
            # the per-step slices of the scanned arguments: the body reads them as its own inputs
            nconst = eqn.params["num_consts"]
            for i in range(min(nconst, len(ins), len(body_args))):
                body_args[i] = ins[i]
        else:
            nbody = eqn.params["body_nconsts"]
            cnum = eqn.params["cond_nconsts"]
            for i in range(nbody):
                body_args[i] = ins[cnum + i]
        consts = [self._new(c) for c in body.jaxpr.constvars]
        body_outs = self._inline(body.jaxpr, body_args, consts, loop, remat)
        for v in body_outs:
            v.is_out = True  # the loop state: written by every step
        op.params["_body_outs"] = body_outs
        return outs

    def _dce(self) -> None:
        """Mark the ops whose results reach the program's outputs."""
        live: set[int] = set()
        todo = [v for v in self.outputs]
        seen: set[int] = set()
        while todo:
            v = todo.pop()
            if id(v) in seen:
                continue
            seen.add(id(v))
            op = v.producer
            if op is None or id(op) in live:
                continue
            live.add(id(op))
            todo.extend(op.ins)
            if op.prim in ("scan", "while"):
                todo.extend(op.params.get("_body_outs", []))
        for op in self.ops:
            op.live = id(op) in live
        for op in self.ops:
            for v in op.ins:
                v.users = [u for u in v.users if u.live]

    def live_ops(self) -> list[Op]:
        return [op for op in self.ops if op.live]


#: Primitives XLA's CSE may merge when they read the same operands (pure elementwise and layout ops).
_CSE_SAFE = ELEMENTWISE | LAYOUT_OPS | {"dot_general", "iota"} | set(REDUCTION_KIND)


def _cse_key(name: str, params: dict[str, Any], ins: list[Value], loop: Loop | None,
             remat: bool) -> tuple[Any, ...] | None:
    """What identifies an op for XLA's CSE; ``jax.checkpoint``'s recomputation is kept apart (its
    optimization barrier is there to stop exactly this merge)."""
    if name not in _CSE_SAFE:
        return None
    operands = tuple((("lit", v.shape, v.dtype) if v.literal else id(v)) for v in ins)
    if any(v.literal for v in ins):
        return None  # a literal's value is not kept: do not merge ops of different constants
    try:
        frozen = tuple(sorted((k, repr(v)) for k, v in params.items()))
    except Exception:
        return None
    return (name, frozen, operands, id(loop), remat)


def _call_jaxpr(eqn: Any) -> tuple[Any, list[Value] | None] | None:
    """The jaxpr a call-like primitive runs (jit, custom_jvp/vjp, checkpoint, closed calls), else ``None``."""
    if eqn.primitive.name in ("scan", "while", "cond"):
        return None
    for key in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
        inner = eqn.params.get(key)
        if inner is None:
            continue
        jaxpr = getattr(inner, "jaxpr", inner)
        if hasattr(jaxpr, "eqns") and len(jaxpr.invars) == len(eqn.invars):
            return jaxpr, None
    return None


def _unroll(eqn: Any) -> int:
    unroll = eqn.params.get("unroll", 1)
    if unroll is True:
        return int(eqn.params["length"])
    return int(unroll or 1)


def _while_trips(eqn: Any) -> int:
    cond = eqn.params["cond_jaxpr"].jaxpr
    for ceqn in cond.eqns:
        if ceqn.primitive.name == "lt":
            value = getattr(ceqn.invars[1], "val", None)
            if value is not None:
                return int(value)
    return 1


# -- the table and what reads it ----------------------------------------------------------------


@dataclass
class Reduction:
    op: Op
    kind: str
    operand: Value
    #: Elements, a loop body's times its trips.
    scaled: int


@dataclass
class Region:
    """The table-sized values a group of reductions reads, and how they are computed."""

    values: list[Value]
    ops: list[Op]
    reductions: list[Reduction]
    #: Sources: ``arg``, ``broadcast``, ``gemm``, ``matvec``, ``dot-other``, ``loop``, ``other``.
    sources: set[str]
    #: The readers outside the region of its values: ops (and ``output`` marks).
    outside: list[Op]
    outputs: int
    two_pass: bool
    loop: Loop | None


def reductions_of(graph: Graph, live: bool = True) -> list[Reduction]:
    out = []
    for op in (graph.live_ops() if live else graph.ops):
        kind = REDUCTION_KIND.get(op.prim)
        if kind is None or not op.ins:
            continue
        scale = 1
        loop = op.loop
        while loop is not None:
            scale *= loop.trips
            loop = loop.parent
        out.append(Reduction(op, kind, op.ins[0], op.ins[0].size * scale))
    return out


def _is_gemm(op: Op) -> bool:
    """A dot_general with a free dimension longer than one on both sides: a real contraction."""
    (lc, rc), (lb, rb) = op.params["dimension_numbers"]
    lhs, rhs = op.ins[0].shape, op.ins[1].shape
    lfree = math.prod(d for i, d in enumerate(lhs) if i not in lc and i not in lb)
    rfree = math.prod(d for i, d in enumerate(rhs) if i not in rc and i not in rb)
    return lfree > 1 and rfree > 1


def _dot_dims(op: Op) -> tuple[int, int, int]:
    (lc, rc), (lb, rb) = op.params["dimension_numbers"]
    lhs, rhs = op.ins[0].shape, op.ins[1].shape
    m = math.prod(d for i, d in enumerate(lhs) if i not in lc and i not in lb)
    n = math.prod(d for i, d in enumerate(rhs) if i not in rc and i not in rb)
    k = math.prod(lhs[i] for i in lc)
    return m, n, k


def build_region(red: Reduction, floor: int) -> Region:
    """Walk back from a reduction's operand through table-sized values (at least ``floor`` elements)."""
    values: list[Value] = []
    ops: list[Op] = []
    sources: set[str] = set()
    seen: set[int] = set()
    todo = [red.operand]
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if v.is_arg:
            sources.add("arg")
            continue
        op = v.producer
        if op is None:
            sources.add("arg" if not v.literal else "const")
            continue
        if op.prim in ("scan", "while"):
            sources.add("loop")
            values.append(v)
            continue
        if op.loop is not red.op.loop and red.op.loop is not None and op.loop is None:
            sources.add("arg")  # a loop body reading a value computed outside: loop-invariant data
            continue
        values.append(v)
        if id(op) not in {id(o) for o in ops}:
            ops.append(op)
        if op.prim == "dot_general":
            sources.add("gemm" if _is_gemm(op) else "matvec")
            continue
        if op.prim in REDUCTION_KIND:
            sources.add("reduction")
            continue
        if op.prim == "broadcast_in_dim":
            src = op.ins[0]
            if src.size < floor:
                sources.add("broadcast")
                continue
        if op.prim in ("iota", "rng_bit_generator", "random_bits", "random_wrap", "random_unwrap"):
            sources.add("other")
            continue
        if op.prim not in ELEMENTWISE and op.prim not in LAYOUT_OPS:
            sources.add("other:" + op.prim)
            continue
        for w in op.ins:
            if w.size >= floor and not w.literal:
                todo.append(w)
    return Region(values, ops, [red], sources, [], 0, False, red.op.loop)


def group_regions(regions: list[Region]) -> list[Region]:
    """Merge regions that share values (sibling reductions of one table, two-pass statistics)."""
    groups: list[Region] = []
    for reg in regions:
        ids = {id(v) for v in reg.values}
        for g in groups:
            if ids & {id(v) for v in g.values}:
                known = {id(v) for v in g.values}
                g.values += [v for v in reg.values if id(v) not in known]
                known_ops = {id(o) for o in g.ops}
                g.ops += [o for o in reg.ops if id(o) not in known_ops]
                g.reductions += reg.reductions
                g.sources |= reg.sources
                break
        else:
            groups.append(reg)
    for g in groups:
        inside = {id(o) for o in g.ops} | {id(r.op) for r in g.reductions}
        outside: list[Op] = []
        for v in g.values:
            for u in v.users:
                if id(u) not in inside and u not in outside:
                    outside.append(u)
            if v.is_out:
                g.outputs += 1
        g.outside = outside
        g.two_pass = _two_pass(g)
    return groups


def _two_pass(g: Region) -> bool:
    """A region op reads (through small values) the result of one of the group's reductions."""
    results = {id(o) for r in g.reductions for o in r.op.outs}
    for op in g.ops:
        for w in op.ins:
            if w.size < (g.values[0].size if g.values else 1) and _depends_on(w, results, 12):
                return True
    return False


def _depends_on(v: Value, targets: set[int], depth: int) -> bool:
    if id(v) in targets:
        return True
    if depth == 0 or v.producer is None:
        return False
    return any(_depends_on(w, targets, depth - 1) for w in v.producer.ins)


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


# -- per-target decisions -----------------------------------------------------------------------

_ITEMSIZE = {"bool": 1, "int8": 1, "uint8": 1, "bfloat16": 2, "float16": 2, "float32": 4, "int32": 4,
             "uint32": 4, "float64": 8, "int64": 8, "complex64": 8, "complex128": 16}

#: XLA CPU's YNN tables at the installed jaxlib (measured: cos, sin, tan, divide and power are not
#: taken into a YNN fusion in this version although newer XLA lists them).
YNN_UNARY = frozenset({"abs", "ceil", "convert_element_type", "erf", "exp", "expm1", "floor", "log", "log1p",
                       "logistic", "neg", "round", "rsqrt", "sign", "sqrt", "tanh",
                       # jax primitives whose CPU lowering is made of the ops above
                       "exp2", "cosh", "stop_gradient"})
YNN_BINARY = frozenset({"add", "add_any", "max", "min", "mul", "sub", "div", "pow"})
YNN_DTYPES = frozenset({"float32", "bfloat16", "float64", "int8", "uint8"})


@dataclass
class Decision:
    stored: bool
    rule: str
    why: str
    operand_copy: bool = False


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
        # a transposed dot result folds into the dot; elsewhere it is a physical copy YNN does not take
        src = op.ins[0].producer
        return src is not None and src.prim == "dot_general"
    if op.prim == "integer_pow":
        return dtype in YNN_DTYPES  # jax lowers it to a chain of multiplies (a divide for y < 0)
    if op.prim == "square":
        return dtype in YNN_DTYPES
    if op.prim == "convert_element_type":
        return dtype in YNN_DTYPES and op.ins[0].dtype in YNN_DTYPES
    if op.prim == "dot_general":
        m, n, _ = _dot_dims(op)
        return (m > 1 and n > 1 and op.ins[0].dtype in ("float32", "bfloat16", "float64")
                and op.ins[0].dtype == op.ins[1].dtype)
    if _is_clamp(op):
        return False
    if op.prim not in YNN_UNARY and op.prim not in YNN_BINARY:
        return False
    return dtype in YNN_DTYPES and all(w.dtype in YNN_DTYPES for w in op.ins)


def _ynn_reduce(red: Reduction) -> bool:
    if red.kind not in ("sum", "max", "min"):
        return False
    dtype = red.operand.dtype
    if red.kind == "sum":
        return dtype in ("float32", "float64", "int8", "uint8")  # bf16/f16 sums are upcast to f32 first
    return dtype in ("float32", "bfloat16", "float16", "float64", "int8", "uint8")


def _link_ops(g: Region) -> list[Op]:
    """The ops between a group's reductions and the region ops that read their results (a two-pass
    statistic's path back into the table: ``max`` -> ``stop_gradient`` -> broadcast -> ``sub``)."""
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
    for op in g.ops:
        for w in op.ins:
            if w.size < top:
                walk(w, 12)
    return out


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


def _ynn_chain_to_output(op: Op) -> bool:
    """A reader whose computation, forward to the program's outputs or a reduction, is YNN ops only:
    the YNN fusion of the reductions can take it in as more of its roots."""
    todo, seen = [op], set()
    while todo:
        o = todo.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if o.prim in REDUCTION_KIND:
            continue
        if not _ynn_op(o) or len(seen) > 64:
            return False
        todo += [u for v in o.outs for u in v.users]
    return True


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


def _ids(values: Iterable[Value]) -> set[int]:
    return {id(v) for v in values}


def _operand_region(v: Value, floor: int) -> tuple[list[Value], list[Op]]:
    """The table-sized elementwise computation of a dot operand, back to its sources."""
    values: list[Value] = []
    ops: list[Op] = []
    todo, seen = [v], set()
    while todo:
        w = todo.pop()
        if id(w) in seen or w.is_arg or w.producer is None:
            continue
        seen.add(id(w))
        op = w.producer
        values.append(w)
        if op.prim not in ELEMENTWISE and op.prim not in LAYOUT_OPS:
            continue
        ops.append(op)
        todo += [x for x in op.ins if x.size >= floor and not x.literal]
    return values, ops


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


def _joins(g: Region) -> tuple[list[Reduction], bool]:
    """Which of a group's reductions must share a YNN fusion through their results (a result that
    reaches another's table computation, or meets another's result), and whether one shares the
    table with the others but never meets them."""
    if len(g.reductions) < 2:
        return [], False
    table = max(r.operand.size for r in g.reductions)
    regions = {id(r.op): {id(o) for o in build_region(r, max(1, int(TABLE_SHARE * r.operand.size))).ops}
               for r in g.reductions}
    forward = {id(r.op): _forward_ops(r, table) for r in g.reductions}
    linking: list[Reduction] = []
    met: set[int] = set()
    for r in g.reductions:
        for q in g.reductions:
            if q is r:
                continue
            if forward[id(r.op)] & regions[id(q.op)] or forward[id(r.op)] & forward[id(q.op)]:
                if r not in linking:
                    linking.append(r)
                met |= {id(r.op), id(q.op)}
    isolated = any(id(r.op) not in met for r in g.reductions)
    return linking, isolated


def _kept(red: Reduction) -> int:
    return max((o.size for o in red.op.outs), default=1)


def _shift_exp(g: Region) -> bool:
    """A max reduction whose result is subtracted from the table before an ``exp`` (softmax, logsumexp)."""
    if not any(r.kind == "max" for r in g.reductions):
        return False
    return g.two_pass and any(op.prim == "exp" for op in g.ops)


#: Below this many elements an op is not "preferred by YNN" (``IsInstructionPreferredByYnn``).
YNN_MIN_ELEMENTS = 4096


def decide_cpu(g: Region, graph: Graph) -> Decision:
    kinds = {r.kind for r in g.reductions}
    dots = [op for op in g.ops if op.prim == "dot_general"]
    if dots and any(not _ynn_op(d) for d in dots):
        return Decision(True, "jaxhlo-predict-cpu-dot", "the contraction is not a YNN dot (dtype, a vector "
                        "operand): XLA's own dot writes its result")
    if not g.ops:
        return Decision(False, "jaxhlo-predict-all-none", "the reduction reads an argument directly")
    if kinds & {"top_k", "approx_top_k"}:
        return Decision(True, "jaxhlo-predict-cpu-other", "top_k sorts a stored operand")
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
    link = _link_ops(g)
    if link and not all(_ynn_op(op) for op in link):
        names = sorted({op.prim for op in link if not _ynn_op(op)})
        return Decision(True, "jaxhlo-predict-cpu-ynn", "the second pass needs the first's statistic through "
                        f"{', '.join(names)}, not in YNN's table: the two reductions cannot share one fusion, "
                        "so the table is written")
    linking, isolated = _joins(g)
    joinable = min((_kept(r) for r in linking or g.reductions), default=0) >= YNN_MIN_ELEMENTS
    outside = [o for o in g.outside if not _into_canonical_dot(o) and not (joinable and _ynn_chain_to_output(o))]
    if outside or g.outputs:
        return Decision(True, "jaxhlo-predict-cpu-ynn", "a table value has a reader outside the reductions "
                        "(the backward pass, an output): YNN fuses only through values with one reader")
    if isolated:
        return Decision(True, "jaxhlo-predict-cpu-ynn", "two reductions of one table whose results never meet: "
                        "two YNN fusions, so the table is written")
    if linking and not joinable:
        return Decision(True, "jaxhlo-predict-cpu-ynn", "two reductions of one table join in one YNN fusion "
                        f"only through results of >= {YNN_MIN_ELEMENTS} elements")
    return Decision(False, "jaxhlo-predict-cpu-ynn", "every producer is in YNN's table and has one reader")


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
    return Decision(stored, "jaxhlo-predict-h100-cost",
                    f"{shape.kind} reduction {shape.rows}x{shape.length} ({stages}-stage), producer {cycles:.0f} "
                    f"cycles, {readers} reader(s): fused {fused:.1f} us vs unfused {unfused:.1f} us")


#: Elementwise ops the TPU prices high enough to keep rather than recompute in a second pass.
TPU_COSTLY = frozenset({"cos", "sin", "tan"})


def _full_arg_reduction(g: Region) -> bool:
    """An argmax/argmin over every axis of a computed table of rank 2 or more."""
    for r in g.reductions:
        if r.kind != "arg":
            continue
        v = r.operand
        if len(v.shape) >= 2 and len(r.op.params.get("axes", ())) == len(v.shape):
            return True
        if len(v.shape) == 1 and v.producer is not None and v.producer.prim == "reshape" \
                and len(v.producer.ins[0].shape) >= 2:
            return True  # jnp.argmax(x) flattens first
    return False


def decide_tpu(g: Region, graph: Graph) -> Decision:
    dtypes = {v.dtype for v in g.values} | {r.operand.dtype for r in g.reductions}
    dtypes |= {w.dtype for op in g.ops for w in op.ins}
    if any(d.startswith("complex") for d in dtypes):
        return Decision(True, "jaxhlo-predict-tpu-complex", "complex data is split into real and imaginary "
                        "f32 buffers: stored")
    kinds = {r.kind for r in g.reductions}
    dot = any(op.prim == "dot_general" and _is_gemm(op) for op in g.ops)
    if "top_k" in kinds and dot:
        return Decision(True, "jaxhlo-predict-tpu-topk", "an exact top_k of a contraction sorts the stored "
                        "product")
    if not g.ops:
        return Decision(False, "jaxhlo-predict-all-none", "the reduction reads an argument directly")
    if _full_arg_reduction(g):
        return Decision(True, "jaxhlo-predict-tpu-readers", "an argmax/argmin over every axis relays the "
                        "table out (a copy) before it reduces")
    costly_read = any(op.prim in TPU_COSTLY for op in g.ops) and "arg" in g.sources
    if g.two_pass and (dot or costly_read):
        return Decision(True, "jaxhlo-predict-tpu-readers", "two passes over the table (a statistic, then a "
                        "reduction that needs it): a dot's output, or a costly producer, is kept between them")
    if g.outputs or (g.outside and dot):
        return Decision(True, "jaxhlo-predict-tpu-readers", "the table has a reader besides its reductions "
                        "(a contraction's output read again by the backward pass, or an output); an "
                        "elementwise table is recomputed for each reader instead")
    if "matvec" in g.sources and not (all(op.prim == "dot_general" for op in g.ops) and kinds <= {"sum"}):
        return Decision(True, "jaxhlo-predict-tpu-matvec", "a matrix-vector product's result is stored before "
                        "another reduction")
    return Decision(False, "jaxhlo-predict-tpu-fused", "the producers (a dot's too) and the reductions are one "
                    "fusion; sibling reductions share it")


DECIDERS: dict[str, Callable[[Region, Graph], Decision]] = {"cpu": decide_cpu, "gpu:h100": decide_gpu,
                                                              "tpu:v5e": decide_tpu}


# -- the front ----------------------------------------------------------------------------------


def load_function(source: str, name: str = "f") -> Any:
    """The function ``name`` of a module's source text."""
    module = types.ModuleType("guide_predictor_program")
    exec(compile(source, "<program>", "exec"), module.__dict__)
    return module.__dict__[name]


def structs_of(specs: str) -> tuple[Any, ...]:
    """``jax.ShapeDtypeStruct`` arguments from the package's spec text (``"f32[3,4], f32[4]"``)."""
    from sphinx_jaxhlo.compiler.arguments import to_shape_dtype_structs
    from sphinx_jaxhlo.core.specs import parse_args

    args, _ = to_shape_dtype_structs(parse_args(specs))
    return args


def _struct(spec: Any) -> Any:
    if isinstance(spec, str):
        structs = structs_of(spec)
        if len(structs) != 1:
            raise ValueError(f"one spec per argument, got {spec!r}")
        return structs[0]
    return spec


def _loops_of(g: Region) -> Iterable[Loop]:
    loop = g.loop
    while loop is not None:
        yield loop
        loop = loop.parent


def _gemm_in(g: Region) -> bool:
    return any(op.prim == "dot_general" and _is_gemm(op) for op in g.ops)


def _chunks(regions: list[Region]) -> bool:
    """Several reductions of equal tables computed from one shared argument at the top level: a
    Python loop over chunks (or an unrolled scan) that XLA sees whole."""
    top = [g for g in regions if g.loop is None and g.ops]
    if len(top) < 3:
        return False
    shapes = {g.reductions[0].operand.shape for g in top}
    return len(shapes) == 1


def predict(fn: Callable[..., Any] | str, *arg_specs: Any, target: str = "cpu") -> dict[str, Any]:
    """Whether XLA writes the table (the largest intermediate feeding a reduction) to memory.

    :param fn: the function, or a module's source text whose function ``f`` is taken.
    :param arg_specs: one a positional argument: a spec string as the package writes them
        (``"f32[4096,4096]"``) or a ``jax.ShapeDtypeStruct`` (anything with shape and dtype).
    :param target: ``cpu``, ``gpu:h100`` or ``tpu:v5e``.
    :returns: ``stored`` (bool), ``rule`` (the guide's anchor), ``why`` (words), ``table`` (the
        table's dtype and shape), ``operand_copy`` (H100: an unaligned matrix-vector operand is copied).
    :raises ValueError: an unknown target or a bad spec.
    """
    import jax

    if target not in DECIDERS:
        raise ValueError(f"unknown target {target!r}; one of {', '.join(TARGETS)}")
    if isinstance(fn, str):
        fn = load_function(fn, "f")
    structs = tuple(_struct(s) for s in arg_specs)
    graph = Graph(jax.make_jaxpr(fn)(*structs))
    every = reductions_of(graph, live=False)
    copy = target == "gpu:h100" and _unaligned_matvec(graph)
    if not every:
        return {"stored": False, "rule": "jaxhlo-predict-all-none", "why": "no reduction", "table": None,
                "operand_copy": copy}
    table = max(r.scaled for r in every)
    big = max(every, key=lambda r: r.scaled)
    table_reds = [r for r in reductions_of(graph) if r.scaled >= TABLE_SHARE * table]
    regions = group_regions([build_region(r, max(1, int(TABLE_SHARE * r.operand.size))) for r in table_reds])
    decisions = []
    chunked = _chunks(regions)
    for g in regions:
        loops = list(_loops_of(g))
        if "loop" in g.sources:
            decisions.append(Decision(True, "jaxhlo-predict-all-loop", "the table is a loop's stacked output, "
                                      "reduced after the loop"))
        elif loops and not all(lp.unrolled for lp in loops):
            d = DECIDERS[target](g, graph)
            decisions.append(Decision(False, "jaxhlo-predict-all-loop",
                                      f"a {loops[0].kind} reduces inside its body: one step's table at a time "
                                      f"(per step: {d.rule}, {'stored' if d.stored else 'fused'})"))
        elif (loops or chunked) and target != "tpu:v5e":
            d = DECIDERS[target](g, graph)
            what = "an unrolled scan" if loops else "a Python loop over chunks"
            if target == "gpu:h100" and not d.stored and not _gemm_in(g):
                decisions.append(Decision(False, "jaxhlo-predict-all-loop", f"{what}: each step fuses as it "
                                          f"would alone ({d.rule}); only GEMM steps are merged into one"))
            elif target == "cpu" and loops and not d.stored:
                decisions.append(Decision(False, "jaxhlo-predict-all-loop", f"{what}: every step fuses "
                                          f"as it would alone ({d.rule}), so few steps' buffers are live"))
            else:
                how = ("the steps' GEMMs are merged into one" if target == "gpu:h100" and _gemm_in(g)
                       else "every step's table is live at once")
                decisions.append(Decision(True, "jaxhlo-predict-all-loop",
                                          f"{what}: XLA sees every step at once, {how} (per step: {d.rule})"))
        else:
            decisions.append(DECIDERS[target](g, graph))
    decisions += _other_tables(graph, table, target, {id(v) for g in regions for v in g.values})
    if not decisions:
        decisions.append(Decision(False, "jaxhlo-predict-all-none", "no table-sized intermediate is computed"))
    stored = [d for d in decisions if d.stored]
    chosen = stored[0] if stored else decisions[0]
    return {"stored": bool(stored), "rule": chosen.rule, "why": chosen.why,
            "table": f"{big.operand.dtype}{list(big.operand.shape)}", "operand_copy": copy}


def _other_tables(graph: Graph, table: int, target: str, seen: set[int]) -> list[Decision]:
    """Table-sized intermediates outside the reductions' regions (a gradient's backward tables)."""
    out = []
    for op in graph.live_ops():
        for v in op.outs:
            if id(v) in seen or v.size < TABLE_SHARE * table or v.is_out or not v.users or op.loop is not None:
                continue
            if op.prim in ("scan", "while"):
                out.append(Decision(True, "jaxhlo-predict-all-loop", "a loop's stacked output"))
            elif op.prim == "dot_general" and _is_gemm(op):
                if target == "gpu:h100":
                    out.append(Decision(True, "jaxhlo-predict-h100-gemm", "a GEMM's table-sized output is stored"))
                elif target == "cpu" and not all(_ynn_op(u) for u in v.users):
                    out.append(Decision(True, "jaxhlo-predict-cpu-dot", "a dot's table-sized output is read "
                                        "by an op YNN does not take"))
            elif target == "cpu" and op.prim in ELEMENTWISE and any(u.prim == "dot_general" for u in v.users):
                values, ops = _operand_region(v, int(TABLE_SHARE * table))
                if _ids(values) & seen and all(_canonical_dot(u) for u in v.users if u.prim == "dot_general"):
                    continue  # the reductions' decision covers it (softmax before ``@ v``)
                from_dot = any(w.producer is not None and w.producer.prim == "dot_general" for w in values)
                read_by_reduction = any(u.prim in REDUCTION_KIND for w in values for u in w.users)
                uses_reduction = any(_from_reduction(w, 6) for o in ops for w in o.ins if id(w) not in _ids(values))
                feeds_reduction = any(_reaches_reduction(o, 3) for d in v.users if d.prim == "dot_general"
                                      for o in d.outs)
                if from_dot and not read_by_reduction and not uses_reduction and not feeds_reduction:
                    out.append(Decision(True, "jaxhlo-predict-cpu-dot", "a contraction reads a table that another "
                                        "contraction computed, with no reduction between: the elementwise part is "
                                        "XLA's loop fusion, written between the two YNN dots"))
                    continue
                inside = {id(o) for o in ops} | {id(u) for u in v.users if u.prim == "dot_general"}
                shared = [w for w in values if any(id(u) not in inside for u in w.users)]
                bad = [o for o in ops if not _ynn_op(o)]
                if bad or shared:
                    why = (f"{', '.join(sorted({o.prim for o in bad}))} not in YNN's table" if bad
                           else "a value of it has another reader")
                    out.append(Decision(True, "jaxhlo-predict-cpu-ynn", f"a dot reads a table computed "
                                        f"elementwise ({why}): YNN's dot fusion cannot take it in"))
    return out


#: The H100's split-K GEMM pads K to a multiple of this (measured: K = 10016 is not padded, 10000 is).
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
