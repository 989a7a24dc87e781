"""The jaxpr as the guide's rules read it: values, ops, loops, and the *table* a reduction reads.

The guide's predictor (:mod:`sphinx_jaxhlo.predict`) flattens a ``jax.make_jaxpr`` result into a
graph (calls inlined, loop bodies kept with their loop), finds the reductions, and groups the
table-sized values each reads into a :class:`Region` that the per-target rules decide on.  Nothing
is lowered or compiled; this module does not import jax (it reads the jaxpr objects it is given).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .simplifier import folded_scalar, simplified

TABLE_SHARE = 0.9

#: Bytes an element, by dtype.
_ITEMSIZE = {"bool": 1, "int8": 1, "uint8": 1, "bfloat16": 2, "float16": 2, "float32": 4, "int32": 4,
             "uint32": 4, "float64": 8, "int64": 8, "complex64": 8, "complex128": 16}

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
    # measured elementwise for fusion (:mod:`sphinx_jaxhlo.predict.ops`): a bit cast, of any widths, and
    # the Bessel functions jax lowers to Chebyshev polynomials of elementwise HLO
    "bitcast_convert_type", "bessel_i0e", "bessel_i1e",
})


#: Ops that are not elementwise and not a reduction, and that XLA gives a kernel of their own (a sort, an
#: FFT library call, a cumulative scan's passes): placed between a computed table and its reduction, the
#: table is written for them (GPU and TPU).
BETWEEN = frozenset({"cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp", "sort", "fft"})


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
    #: A scalar literal's value (its ``repr``), what XLA's CSE compares; ``""`` for any other value.
    value: str = ""
    #: A scan body's per-step input: the scanned operand of the loop it is one step's slice of.
    slice_of: Value | None = None
    #: A copy XLA makes of a value, computed by no op of the program (a convolution's input converted to
    #: bf16): the value copied.
    copy_of: Value | None = None

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
        literal = hasattr(var, "val")
        value = ""
        if literal and not shape:
            try:
                value = repr(var.val.item() if hasattr(var.val, "item") else var.val)
            except Exception:
                value = ""
        return Value(shape, str(getattr(aval, "dtype", "")), is_arg=is_arg, literal=literal, value=value)

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
            elif name == "stack":  # jax lowers it to a concatenate of its operands, each given the new axis
                outs = self._add(Op("concatenate", {"dimension": int(eqn.params.get("axis", 0)), "stacked": True},
                                    ins, [self._new(v) for v in eqn.outvars], loop, remat))
            elif (rewritten := self._simplified(name, ins, eqn, loop, remat)) is not None:
                outs = rewritten
            elif (key := _cse_key(name, eqn.params, ins, loop, remat)) is not None and key in self._cse:
                outs = self._cse[key]  # XLA's CSE: the same op of the same operands is computed once
            else:
                outs = self._add(Op(name, dict(eqn.params), ins, [self._new(v) for v in eqn.outvars], loop, remat))
                if key is not None:
                    self._cse[key] = outs
                if len(outs) == 1 and not outs[0].shape and (folded := folded_scalar(name, eqn.params, ins)):
                    outs[0].value = folded  # XLA folds scalar arithmetic on constants
            for var, val in zip(eqn.outvars, outs, strict=False):
                env[var] = val
        return [read(v) for v in jaxpr.outvars]

    def _simplified(self, name: str, ins: list[Value], eqn: Any, loop: Loop | None,
                    remat: bool) -> list[Value] | None:
        """What XLA's algebraic simplifier makes of this op (:func:`simplifier.simplified`), or ``None``."""

        def new(prim: str, operands: list[Value], params: dict[str, Any] | None = None) -> list[Value]:
            return self._add(Op(prim, params or {}, operands, [self._new(eqn.outvars[0])], loop, remat))

        return simplified(name, ins, eqn.params, loop, remat, new)

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
            for i in range(nconst + eqn.params["num_carry"], min(len(ins), len(body_args))):
                body_args[i].slice_of = ins[i]
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
    optimization barrier is there to stop exactly this merge).  A scalar literal is compared by its
    value, as XLA's CSE (``xla/service/hlo_cse.cc``) merges equal constants first and then the ops that
    read them: ``jnp.var``'s centred table ``x - mean(x)`` and the caller's own ``x - mean(x)`` (each
    mean a sum divided by the same count) are one value with two readers."""
    if name not in _CSE_SAFE:
        return None
    if any(v.literal and not v.value for v in ins):
        return None  # a literal whose value is not kept (an array): do not merge ops of different constants
    operands = tuple((("lit", v.dtype, v.value) if v.literal else id(v)) for v in ins)
    try:
        frozen = tuple(sorted((k, repr(v)) for k, v in params.items()))
    except Exception:
        return None
    return (name, frozen, operands, id(loop), remat)


def _call_jaxpr(eqn: Any) -> tuple[Any, list[Value] | None] | None:
    """The jaxpr a call-like primitive runs (jit, custom_jvp/vjp, checkpoint, closed calls), else ``None``."""
    if eqn.primitive.name in ("scan", "while", "cond", "reduce_window"):
        return None  # a reduce_window's ``jaxpr`` is its reducer, not a call
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

    def loops(self) -> list[Loop]:
        """The loops the region's ops sit in, innermost first."""
        out, loop = [], self.loop
        while loop is not None:
            out.append(loop)
            loop = loop.parent
        return out


def reductions_of(graph: Graph, live: bool = True) -> list[Reduction]:
    """The program's reductions: each reduction primitive's operand (``live=False``: dead ones too, a
    gradient's forward loss), a loop body's counted times its trips.

    A program with no reduction primitive at all (dead ones included) still reduces where a live
    contraction reads a computed operand larger than its result (a confusion matrix of one-hot tables,
    ``exp(m) @ v``): that contraction is its reduction, of kind ``contraction``, about the largest such
    operand.
    """
    out = []
    for op in (graph.live_ops() if live else graph.ops):
        kind = REDUCTION_KIND.get(op.prim)
        if kind is None or not op.ins:
            continue
        out.append(Reduction(op, kind, op.ins[0], op.ins[0].size * _trips(op)))
    if not any(op.prim in REDUCTION_KIND and op.ins for op in graph.ops):
        best: tuple[Op, Value] | None = None
        for op in graph.live_ops():
            if op.prim != "dot_general" or not op.outs:
                continue
            for w in op.ins:
                if (w.producer is not None and not w.is_arg and w.size > op.outs[0].size
                        and (best is None or w.size > best[1].size)):
                    best = (op, w)
        if best is not None:
            out.append(Reduction(best[0], CONTRACTION, best[1], best[1].size * _trips(best[0])))
    return out


#: The kind of a reduction that is a contraction (:func:`reductions_of`).
CONTRACTION = "contraction"


def _trips(op: Op) -> int:
    """How many times ``op`` runs: the product of its loops' trips."""
    scale = 1
    loop = op.loop
    while loop is not None:
        scale *= loop.trips
        loop = loop.parent
    return scale


def _is_gemm(op: Op) -> bool:
    """A dot_general with a free dimension longer than one on both sides, contracting more than one
    element: a real contraction."""
    if trivial_dot(op):
        return False
    (lc, rc), (lb, rb) = op.params["dimension_numbers"]
    lhs, rhs = op.ins[0].shape, op.ins[1].shape
    lfree = math.prod(d for i, d in enumerate(lhs) if i not in lc and i not in lb)
    rfree = math.prod(d for i, d in enumerate(rhs) if i not in rc and i not in rb)
    return lfree > 1 and rfree > 1


def trivial_dot(op: Op) -> bool:
    """A dot_general that contracts nothing, or only size-1 dimensions: XLA's algebraic simplifier
    rewrites it into a broadcast multiply (an elementwise op, as ``jnp.outer`` is)."""
    if op.prim != "dot_general":
        return False
    (lc, _), _ = op.params["dimension_numbers"]
    return math.prod(op.ins[0].shape[i] for i in lc) <= 1


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
        if op.prim == "dot_general" and not trivial_dot(op):
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
        if op.prim not in ELEMENTWISE and op.prim not in LAYOUT_OPS and not trivial_dot(op):
            sources.add("other:" + op.prim)
            continue
        for w in op.ins:
            if w.size >= floor and not w.literal:
                todo.append(w)
    return Region(values, ops, [red], sources, [], 0, False, red.op.loop)


#: Ops that only move an argument's elements: two reductions that read one argument through them share
#: no computed table (each reads the argument, as XLA folds the move into its reader).
#: Moves that copy nothing: a bitcast in XLA's layout (a transpose is one only where its layout allows).
BITCASTS = frozenset({"reshape", "squeeze", "expand_dims"})
_MOVES = BITCASTS | {"transpose", "copy", "copy_p"}


def operand_region(v: Value, floor: int) -> tuple[list[Value], list[Op]]:
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


def _moved_argument(v: Value, moves: frozenset[str] = _MOVES) -> bool:
    """``v`` is an argument, or an argument only moved (by ``moves``: transposed, reshaped): nothing is
    computed."""
    while not v.is_arg:
        op = v.producer
        if op is None or op.prim not in moves or not op.ins:
            return False
        v = op.ins[0]
    return True


def group_regions(regions: list[Region]) -> list[Region]:
    """Merge regions that share computed values (sibling reductions of one table, two-pass statistics);
    an argument merely transposed or reshaped on the way to both is no shared table."""
    groups: list[Region] = []
    for reg in regions:
        ids = {id(v) for v in reg.values if not _moved_argument(v)}
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
            if _moved_argument(v):
                continue  # its other readers read the argument: no table of this group's
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


def _kept(red: Reduction) -> int:
    return max((o.size for o in red.op.outs), default=1)


def _shift_exp(g: Region) -> bool:
    """A max reduction whose result is subtracted from the table before an ``exp`` (softmax, logsumexp)."""
    if not any(r.kind == "max" for r in g.reductions):
        return False
    return g.two_pass and any(op.prim == "exp" for op in g.ops)


@dataclass
class Decision:
    """One rule's answer for one region: stored or not, the rule's anchor, why, in words and figures."""

    stored: bool | None
    rule: str
    why: str
    operand_copy: bool = False
    #: False when no rule decides or the figures sit in the cost model's break-even band.
    certain: bool = True
    #: The cost model's figures (``us_fused``, ``us_unfused``, ``ratio``), when a cost decided.
    figures: dict[str, float] = field(default_factory=dict)
    #: The table-sized value the decision is about, where it is not a reduction's operand (a matrix-vector
    #: product's computed operand): the answer reports it as the table.
    value: Value | None = None


def _ids(values: Iterable[Value]) -> set[int]:
    return {id(v) for v in values}
