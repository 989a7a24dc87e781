"""The proof behind :func:`sphinx_jaxhlo.chunked`: the chunked axis, followed through the jaxpr.

The chunked rewrite is only correct when the function treats the elements
along the axis independently and reduces over the axis with the combine given.
Before building it, :func:`~sphinx_jaxhlo.check_chunkable` follows the axis through the function's
jaxpr and raises :class:`~sphinx_jaxhlo.ChunkError`, naming the operation and its source line,
for anything it cannot prove.  The rules it applies:

- the chunked axis of an argument is *mapped*: element ``i`` of a chunk stands
  for element ``i`` of the whole axis;
- elementwise operations, broadcasts, reshapes and transposes that keep the axis
  as one dimension, slices and pads that leave it whole, reductions and
  cumulative ops and sorts over *other* axes, and dots that keep it as a free or
  batch dimension of both operands carry a mapped axis to their result;
  ``pjit``, ``custom_jvp``/``custom_vjp`` calls, ``remat`` and ``cond`` bodies
  are followed inside;
- a ``reduce_sum``/``reduce_max``/``reduce_min`` over the axis (or a dot
  contracting it between two chunked operands, a sum) makes a *partial*
  result; a partial sum may be added to another, negated, scaled by or divided
  by values that do not depend on the chunk, summed over further axes; a
  partial max or min may pass through functions increasing over the whole line
  (``exp``, ``tanh``...: the table ``_INCREASING``), a partial min also through
  those increasing where defined and NaN below (``log``, ``sqrt``, ``log1p``: a
  chunk's negative maximum would give NaN), be shifted by values that do not
  depend on the chunk or flipped by a negation; a ``select_n`` whose predicate
  does not depend on the chunk may choose between partial results and zeros
  (``jnp.where(mask, partial, 0)``, ``jnp.trace``) or, for a partial max or
  min, any value that does not depend on the chunk;
- the length of the axis is followed too: the jaxpr is made a second time with
  the chunked axis one element longer (else twice as long), and a literal or
  constant that differs between the two is a value *of the length*.  A partial
  sum divided by a value proportional to the length (or multiplied by one
  proportional to its inverse) is a partial *mean*: ``jnp.mean`` over the axis,
  which ``combine="mean"`` rebuilds and ``combine="sum"`` would count once per
  chunk.  A partial mean may be scaled, shifted by values that do not depend
  on the chunk (its weights sum to one), added to another mean and summed over
  further axes; any other use of the length refuses, and so does a jaxpr whose
  operations change with the length;
- anything else refuses: an operation that uses elements at several positions
  of the axis (a cumulative op, sort, slice, pad, ``rev`` or ``argmax`` along
  it, a dot contracting it with an operand that is not split, a dot pairing
  two chunked axes), one that meets a partial result with the mapped axis (the
  normalisation of a softmax), a non-linear function of a partial sum, a value
  that varies along the axis without being split (an ``iota``, an argument that
  is not chunked), the length of the axis met by the chunked data, an
  operation the checker does not know, and an output that is not a partial
  result of the requested combine (one that keeps the axis, or does not
  depend on it; a sum asked for a mean, a mean asked for a sum).

Importing this module does not import jax; :func:`~sphinx_jaxhlo.check_chunkable` does.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

from sphinx_jaxhlo.chunking.source import function_name, normalize_chunking
from sphinx_jaxhlo.chunking.values import (
    ChunkError,
    Free,
    Mapped,
    Partial,
    Sized,
    State,
    abstract,
    is_zero,
    length_state,
    twin_jaxprs,
)

__all__ = ["ChunkError", "Proved", "check_chunkable", "chunk_axes", "proved_combine"]


#: The partial result each combine accepts as an output.
_PARTIAL_OF = {"sum": "sum", "mean": "mean", "max": "max", "min": "min"}


_ELEMENTWISE = frozenset(str.split("""
    abs acos acosh add and asin asinh atan atan2 atanh cbrt ceil clamp clz complex conj convert_element_type copy
    copy_p cos cosh digamma div eq erf erf_inv erfc exp exp2 expm1 floor ge gt igamma igammac imag integer_pow
    is_finite le lgamma log log1p logistic lt max min mul ne neg nextafter not or population_count pow real
    reduce_precision rem round rsqrt select_n shift_left shift_right_arithmetic shift_right_logical sign sin sinh
    sqrt square stop_gradient sub tan tanh xor
"""))


#: Increasing functions over the whole line: f(max x) = max f(x), f(min x) = min f(x), for every
#: value, infinities included (tests/test_chunked.py checks each over a grid of edge values).
_INCREASING = frozenset(str.split("""
    asinh atan cbrt ceil convert_element_type copy copy_p erf exp exp2 expm1 floor logistic
    reduce_precision round sinh stop_gradient tanh
"""))


#: Increasing where defined, NaN below (``log`` and ``sqrt`` of a negative, ``log1p`` below -1):
#: f(min x) = min f(x) still (a NaN either way), but not f(max x) = max f(x): a chunk whose maximum
#: is negative would give NaN where the whole's maximum does not.
_MIN_ONLY = frozenset({"log", "log1p", "sqrt"})


_PASS_THROUGH = frozenset({"convert_element_type", "copy", "copy_p", "stop_gradient", "reduce_precision"})


_REDUCTIONS = {"reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min"}


_CUMULATIVE = frozenset({"cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"})


_CALLS = ("jaxpr", "call_jaxpr", "fun_jaxpr")


#: The reasons that say what the proof does not follow (a ``gather``, a ``scan``, a merging reshape),
#: rather than what it shows would change the result: their refusal says "cannot prove".
_UNFOLLOWED = ("cannot follow", "does not know", "cannot match", "merges the chunked axis")


#: What a partial result becomes when negated.
_NEGATED = {"sum": "sum", "mean": "mean", "max": "min", "min": "max"}


def _where(eqn: Any) -> str:
    from jax._src import source_info_util

    try:
        return str(source_info_util.summarize(eqn.source_info))
    except Exception:  # pragma: no cover - a jax without source info
        return ""


def _shape(var: Any) -> tuple[int, ...]:
    return tuple(getattr(getattr(var, "aval", None), "shape", ()))


class _Prover:
    """Follows the chunked axis through a jaxpr (the rules of the module docstring)."""

    def __init__(self, name: str, ratios: Sequence[float] = ()) -> None:
        self.name = name
        #: each twin jaxpr's length of the chunked axis over the real one (see :func:`check_chunkable`).
        self.ratios = tuple(ratios)
        #: the locations of the calls being followed: an operation inside jax's own
        #: functions (``jnp.cumsum`` is a jitted function) is located by the user's call.
        self.calls: list[str] = []

    def where(self, eqn: Any) -> str:
        return _where(eqn) or next((w for w in reversed(self.calls) if w), "")

    def refuse(self, eqn: Any, why: str) -> ChunkError:
        where = self.where(eqn)
        at = f" at {where}" if where else ""
        unknown = any(words in why for words in _UNFOLLOWED)  # a blind spot, not a proof of harm
        end = ("the proof cannot follow it, so it cannot prove the chunked rewrite (which may or may not keep the "
               "result)" if unknown else "the chunked rewrite would change the result, so it is refused")
        return ChunkError(f"chunked({self.name}): `{eqn.primitive.name}`{at} {why}; {end}", eqn.primitive.name,
                          where, unknown=unknown)

    def read(self, env: dict[Any, State], var: Any, twins: Sequence[Any] = ()) -> State:
        from jax.extend.core import Literal

        if isinstance(var, Literal):
            if twins and all(isinstance(t, Literal) for t in twins):
                return length_state(var.val, [t.val for t in twins], self.ratios)
            return Free(frozenset(range(len(_shape(var)))), zero=is_zero(var.val))
        return env.get(var, Free())

    def run(self, closed: Any, inputs: Sequence[State], twins: Sequence[Any] = ()) -> list[State]:
        """Follow ``closed`` (a jaxpr, or a closed one with its constants); ``twins``: the same
        made at other lengths of the chunked axis, whose literals tell the length's values."""
        jaxpr = getattr(closed, "jaxpr", closed)
        others = [getattr(t, "jaxpr", t) for t in twins]
        env: dict[Any, State] = dict(zip(jaxpr.invars, inputs, strict=True))
        consts = list(getattr(closed, "consts", ()))
        twin_consts = [list(getattr(t, "consts", ())) for t in twins]
        for i, var in enumerate(getattr(jaxpr, "constvars", ())):
            known = twins and all(len(c) == len(consts) == len(jaxpr.constvars) for c in twin_consts)
            env[var] = length_state(consts[i], [c[i] for c in twin_consts], self.ratios) if known else Free()
        names = [e.primitive.name for e in jaxpr.eqns]
        if any([e.primitive.name for e in other.eqns] != names for other in others):
            raise ChunkError(f"chunked({self.name}): its operations change with the length of the chunked axis, "
                             "so a chunk, shorter than the whole, would not compute the same thing; the chunked "
                             "rewrite is refused")
        for i, eqn in enumerate(jaxpr.eqns):
            twin_eqns = [other.eqns[i] for other in others]
            states = [self.read(env, v, [t.invars[j] for t in twin_eqns if j < len(t.invars)])
                      for j, v in enumerate(eqn.invars)]
            outs = self.equation(eqn, states, twin_eqns)
            for var, state in zip(eqn.outvars, outs, strict=True):
                env[var] = state
        return [self.read(env, v) for v in jaxpr.outvars]

    # -- one equation ---------------------------------------------------------------------------

    def equation(self, eqn: Any, states: list[State], twins: Sequence[Any] = ()) -> list[State]:
        name = eqn.primitive.name
        params = eqn.params
        n_out = len(eqn.outvars)
        if name == "iota":
            dim = params["dimension"]
            return [Free(frozenset(d for d in range(len(params["shape"])) if d != dim))]
        key = next((k for k in _CALLS if k in params), None)
        if key is not None and name not in ("scan", "while"):
            return self.call(eqn, params[key], states, [t.params.get(key) for t in twins])
        if name == "cond":
            return self.cond(eqn, states, twins)
        if all(isinstance(s, Free) for s in states):
            return self.free(eqn, states)
        if all(isinstance(s, (Free, Sized)) for s in states):
            return [self.sized(eqn, states)] * n_out
        if any(isinstance(s, Sized) for s in states) and any(isinstance(s, Mapped) for s in states):
            raise self.refuse(eqn, "meets the chunked data with a value computed from the length of the chunked "
                                   "axis, which a chunk does not share")
        if name in _ELEMENTWISE:
            return [self.elementwise(eqn, states)]
        operand = states[0]
        if name == "broadcast_in_dim":
            dims = params["broadcast_dimensions"]
            if isinstance(operand, Mapped):
                return [Mapped(int(dims[operand.axis]))]
            return [operand]
        if name in ("reshape", "squeeze", "expand_dims", "transpose") and isinstance(operand, Partial):
            return [operand]
        if name in _REDUCTIONS:
            return [self.reduction(eqn, operand, _REDUCTIONS[name])]
        if name == "dot_general":
            return [self.dot(eqn, states[0], states[1])]
        if isinstance(operand, Partial) or any(isinstance(s, Partial) for s in states):
            raise self.refuse(eqn, "uses a reduction over the chunked axis in a way the checker cannot follow")
        joins = name in ("concatenate", "sort")
        if not isinstance(operand, Mapped) or (not joins and any(not isinstance(s, Free) for s in states[1:])):
            raise self.refuse(eqn, "takes the chunked data in an operand the checker cannot follow")
        return self.structural(eqn, operand, states, n_out)

    def free(self, eqn: Any, states: list[State]) -> list[State]:
        name = eqn.primitive.name
        out_shape = _shape(eqn.outvars[0]) if eqn.outvars else ()
        if name in _ELEMENTWISE:
            uniform = set(range(len(out_shape)))
            for var, state in zip(eqn.invars, states, strict=True):
                shape = _shape(var)
                if not shape:
                    continue
                assert isinstance(state, Free)
                uniform &= {d for d in range(len(shape)) if shape[d] == 1 or d in state.uniform}
            first = states[0]
            zero = name in _PASS_THROUGH and isinstance(first, Free) and first.zero
            return [Free(frozenset(uniform), zero=zero)] * len(eqn.outvars)
        if name == "broadcast_in_dim":
            dims = [int(d) for d in eqn.params["broadcast_dimensions"]]
            state = states[0]
            assert isinstance(state, Free)
            in_shape = _shape(eqn.invars[0])
            uniform = {d for d in range(len(out_shape)) if d not in dims}
            uniform |= {dims[i] for i in range(len(dims)) if i in state.uniform or in_shape[i] == 1}
            return [Free(frozenset(uniform), zero=state.zero)]
        if name in ("reshape", "squeeze", "expand_dims") and isinstance(states[0], Free) and states[0].zero:
            return [Free(zero=True)]
        return [Free()] * len(eqn.outvars)

    def sized(self, eqn: Any, states: list[State]) -> State:
        """A value computed from the length of the chunked axis (and free values)."""
        name = eqn.primitive.name
        powers = [s.power if isinstance(s, Sized) else 0 for s in states]
        if any(p is None for p in powers):
            return Sized(None)
        if name in _PASS_THROUGH or name in ("neg", "broadcast_in_dim", "reshape", "squeeze", "expand_dims"):
            return states[0]
        if name == "mul":
            power = sum(p for p in powers if p is not None)
        elif name == "div" and len(powers) == 2 and powers[0] is not None and powers[1] is not None:
            power = powers[0] - powers[1]
        else:
            return Sized(None)
        return Free() if power == 0 else Sized(power)

    def elementwise(self, eqn: Any, states: list[State]) -> State:
        name = eqn.primitive.name
        mapped = {s.axis for s in states if isinstance(s, Mapped)}
        partial = [s for s in states if isinstance(s, Partial)]
        if mapped and partial:
            raise self.refuse(eqn, f"combines elements along the chunked axis with the reduction over it made at "
                                   f"{partial[0].origin} (as a softmax's normalisation does)")
        if len(mapped) > 1:
            raise self.refuse(eqn, "pairs two different axes of chunked data")
        if mapped:
            axis = mapped.pop()
            for var, state in zip(eqn.invars, states, strict=True):
                shape = _shape(var)
                if isinstance(state, Free) and shape and shape[axis] != 1 and axis not in state.uniform:
                    raise self.refuse(eqn, f"pairs the chunked axis with a value of shape {list(shape)} that varies "
                                           f"along it but is not split (an iota, or an argument not chunked)")
            return Mapped(axis)
        return self.partial_elementwise(eqn, name, states)

    def partial_elementwise(self, eqn: Any, name: str, states: list[State]) -> State:
        partials: list[tuple[int, Partial]] = [(i, s) for i, s in enumerate(states) if isinstance(s, Partial)]
        ops = {s.op for _, s in partials}
        first = partials[0][1]
        nonlinear = f"is applied to the {first.op} over the chunked axis made at {first.origin}, and it does not " \
                    f"distribute over a {first.op} of chunks"
        if len(ops) > 1:
            raise self.refuse(eqn, "mixes reductions of different kinds over the chunked axis")
        op = ops.pop()
        increasing = name in _INCREASING or (op == "min" and name in _MIN_ONLY)
        if name in _PASS_THROUGH or (op not in ("sum", "mean") and increasing and len(states) == 1):
            return first
        if name == "select_n":
            return self.select(eqn, states, first, op, nonlinear)
        if name == "neg":
            return Partial(_NEGATED[op], first.origin)
        both = len(partials) == len(states)
        index = partials[0][0]
        sized = [s for s in states if isinstance(s, Sized)]
        if sized:
            power = sized[0].power if len(sized) == 1 and len(states) == 2 else None
            if op == "sum" and ((name == "div" and index == 0 and power == 1) or (name == "mul" and power == -1)):
                return Partial("mean", first.origin)
            raise self.refuse(eqn, f"meets the {op} over the chunked axis made at {first.origin} with a value "
                                   "computed from the length of the axis in a way the checker cannot follow")
        if op == "mean":  # weights that sum to one: linear maps and shifts by free values keep a mean
            if name in ("add", "sub") or (name == "mul" and not both) or (name == "div" and index == 0 and not both):
                return first
            raise self.refuse(eqn, nonlinear)
        if op == "sum":
            if name in ("add", "sub") and both:
                return first
            if name == "mul" and len(partials) == 1:
                return first
            if name == "div" and len(partials) == 1 and index == 0:
                return first
            if name in ("add", "sub"):
                raise self.refuse(eqn, f"adds a term that does not depend on the chunked axis to the sum made at "
                                       f"{first.origin}: it would be counted once per chunk")
            raise self.refuse(eqn, nonlinear)
        if name in ("max", "min") and (name == op):
            return first
        if name == "add" or (name == "sub" and index == 0 and len(partials) == 1):
            return first if len(partials) == 1 else self._raise(eqn, nonlinear)
        if name == "sub" and index == 1 and len(partials) == 1:
            return Partial(_NEGATED[op], first.origin)
        raise self.refuse(eqn, nonlinear)

    def select(self, eqn: Any, states: list[State], first: Partial, op: str, nonlinear: str) -> State:
        """``select_n(which, *cases)`` with partial results among the cases: each element is taken
        from one case by a predicate that does not depend on the chunk, so the choice commutes with
        the combine when every other case is a value each chunk gives alike and the combine leaves
        alone: zero for a sum or a mean (``jnp.where(mask, partial, 0)``, ``jnp.trace``), any free
        value for a maximum or a minimum (the maximum of equal values is that value)."""
        which, cases = states[0], states[1:]
        if not isinstance(which, Free):
            raise self.refuse(eqn, f"chooses elements of the {op} over the chunked axis made at {first.origin} "
                                   "by a value that depends on the chunk")
        for case in cases:
            if isinstance(case, Partial):
                continue
            if not isinstance(case, Free) or (op in ("sum", "mean") and not case.zero):
                raise self.refuse(eqn, nonlinear if op not in ("sum", "mean") else
                                  f"puts a value that is not zero beside the {op} over the chunked axis made at "
                                  f"{first.origin}: it would be counted once per chunk")
        return first

    def _raise(self, eqn: Any, why: str) -> State:
        raise self.refuse(eqn, why)

    def reduction(self, eqn: Any, operand: State, op: str) -> State:
        axes = [int(a) for a in eqn.params["axes"]]
        if isinstance(operand, Partial):
            if operand.op != op and not (operand.op == "mean" and op == "sum"):
                raise self.refuse(eqn, f"takes a {op} of the {operand.op} over the chunked axis made at "
                                       f"{operand.origin}")
            return operand
        assert isinstance(operand, Mapped)
        if operand.axis in axes:
            return Partial(op, self.where(eqn) or eqn.primitive.name)
        return Mapped(operand.axis - sum(a < operand.axis for a in axes))

    def dot(self, eqn: Any, lhs: State, rhs: State) -> State:
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        lc, rc, lb, rb = ([int(d) for d in dims] for dims in (lc, rc, lb, rb))
        if isinstance(lhs, Partial) or isinstance(rhs, Partial):
            partial = lhs if isinstance(lhs, Partial) else rhs
            other = rhs if partial is lhs else lhs
            assert isinstance(partial, Partial)
            if partial.op in ("sum", "mean") and isinstance(other, Free):
                return partial
            raise self.refuse(eqn, f"multiplies the {partial.op} over the chunked axis made at {partial.origin} "
                                   "with chunked data")
        lhs_free = [d for d in range(len(_shape(eqn.invars[0]))) if d not in lc and d not in lb]
        rhs_free = [d for d in range(len(_shape(eqn.invars[1]))) if d not in rc and d not in rb]
        if isinstance(lhs, Mapped) and isinstance(rhs, Mapped):
            if lhs.axis in lc and rhs.axis in rc and rc[lc.index(lhs.axis)] == rhs.axis:
                return Partial("sum", self.where(eqn) or "dot_general")
            if lhs.axis in lb and rhs.axis in rb and rb[lb.index(lhs.axis)] == rhs.axis:
                return Mapped(lb.index(lhs.axis))
            raise self.refuse(eqn, "pairs elements at different positions of the chunked axis (each with every "
                                   "other, or a chunked axis with another axis)")
        mapped, free_dims, contract, batch, offset = (
            (lhs, lhs_free, lc, lb, len(lb)) if isinstance(lhs, Mapped)
            else (rhs, rhs_free, rc, rb, len(lb) + len(lhs_free)))
        assert isinstance(mapped, Mapped)
        if mapped.axis in contract:
            raise self.refuse(eqn, "contracts the chunked axis with an operand that is not split along it")
        if mapped.axis in batch:
            raise self.refuse(eqn, "batches the chunked axis with an operand that is not split along it")
        return Mapped(offset + free_dims.index(mapped.axis))

    def structural(self, eqn: Any, operand: Mapped, states: list[State], n_out: int) -> list[State]:
        name = eqn.primitive.name
        params = eqn.params
        axis = operand.axis
        in_shape = _shape(eqn.invars[0])
        along = "picks or moves elements by their position along the chunked axis"
        if name == "transpose":
            return [Mapped(list(params["permutation"]).index(axis))]
        if name == "squeeze":
            return [Mapped(axis - sum(int(d) < axis for d in params["dimensions"]))]
        if name == "expand_dims":
            out = axis
            for d in sorted(int(d) for d in params["dimensions"]):
                if d <= out:
                    out += 1
            return [Mapped(out)]
        if name == "reshape":
            out_shape = _shape(eqn.outvars[0])
            before = math.prod(in_shape[:axis])
            for j in range(len(out_shape)):
                if math.prod(out_shape[:j]) == before and out_shape[j] == in_shape[axis]:
                    return [Mapped(j)]
            raise self.refuse(eqn, "merges the chunked axis with another axis")
        if name in ("argmax", "argmin"):
            axes = [int(a) for a in params["axes"]]
            if axis in axes:
                raise self.refuse(eqn, "finds a position along the chunked axis")
            return [Mapped(axis - sum(a < axis for a in axes))]
        if name in _CUMULATIVE:
            if int(params["axis"]) == axis:
                raise self.refuse(eqn, "accumulates along the chunked axis: each element depends on those before it")
            return [operand]
        if name == "sort":
            if any(not isinstance(s, Mapped) or s.axis != axis for s in states):
                raise self.refuse(eqn, "sorts chunked data together with data that is not split")
            if int(params["dimension"]) == axis:
                raise self.refuse(eqn, "sorts along the chunked axis")
            return [operand] * n_out
        if name == "rev":
            if axis in [int(d) for d in params["dimensions"]]:
                raise self.refuse(eqn, along)
            return [operand]
        if name == "slice":
            start, limit = params["start_indices"][axis], params["limit_indices"][axis]
            strides = params["strides"]
            if start != 0 or limit != in_shape[axis] or (strides is not None and strides[axis] != 1):
                raise self.refuse(eqn, along)
            return [operand]
        if name == "dynamic_slice":
            if params["slice_sizes"][axis] != in_shape[axis]:
                raise self.refuse(eqn, along)
            return [operand]
        if name == "pad":
            if tuple(params["padding_config"][axis]) != (0, 0, 0):
                raise self.refuse(eqn, along)
            return [operand]
        if name == "concatenate":
            if int(params["dimension"]) == axis:
                raise self.refuse(eqn, "concatenates along the chunked axis")
            for var, state in zip(eqn.invars, states, strict=True):
                if isinstance(state, Mapped) and state.axis == axis:
                    continue
                if isinstance(state, Free) and axis in state.uniform:
                    continue
                raise self.refuse(eqn, f"joins chunked data with a value of shape {list(_shape(var))} that is not "
                                       "split along the chunked axis")
            return [operand]
        raise self.refuse(eqn, "is an operation the checker does not know to treat the elements along the chunked "
                               "axis independently")

    def call(self, eqn: Any, sub: Any, states: list[State], twins: Sequence[Any] = ()) -> list[State]:
        jaxpr = getattr(sub, "jaxpr", sub)
        if len(jaxpr.invars) != len(states):
            if all(isinstance(s, Free) for s in states):
                return [Free()] * len(eqn.outvars)
            raise self.refuse(eqn, "calls a function the checker cannot match to its arguments")
        self.calls.append(_where(eqn))
        try:
            return self.run(sub, states, [t for t in twins if t is not None])
        finally:
            self.calls.pop()

    def cond(self, eqn: Any, states: list[State], twins: Sequence[Any] = ()) -> list[State]:
        if not isinstance(states[0], Free):
            raise self.refuse(eqn, "chooses a branch from chunked data")
        branches = eqn.params["branches"]
        self.calls.append(_where(eqn))
        try:
            results = [self.run(branch, states[1:], [t.params["branches"][b] for t in twins])
                       for b, branch in enumerate(branches)]
        finally:
            self.calls.pop()
        if any(r != results[0] for r in results[1:]):
            raise self.refuse(eqn, "has branches that treat the chunked axis differently")
        return results[0]


# -- the proof -----------------------------------------------------------------------------------


def chunk_axes(args: Sequence[Any], nums: Sequence[int], axes: Sequence[int], name: str) -> tuple[int, list[int]]:
    """(the chunked length, each axis made non-negative)."""
    lengths: list[int] = []
    out: list[int] = []
    for num, axis in zip(nums, axes, strict=True):
        if num >= len(args):
            raise ValueError(f"chunked({name}): argnums {num} but the function got {len(args)} positional arguments")
        shape = tuple(getattr(args[num], "shape", ()))
        if not -len(shape) <= axis < len(shape):
            raise ValueError(f"chunked({name}): argument {num} has shape {list(shape)}, no axis {axis}")
        axis %= len(shape)
        out.append(axis)
        lengths.append(int(shape[axis]))
    if len(set(lengths)) != 1:
        raise ValueError(f"chunked({name}): the chunked axes have different lengths {lengths}")
    if lengths[0] == 0:
        raise ValueError(f"chunked({name}): the chunked axis is empty")
    return lengths[0], out


def check_chunkable(fn: Callable[..., Any], *args: Any, argnums: int | Sequence[int] = 0,
                    axis: int | Sequence[int] = 0, combine: str = "sum", **kwargs: Any) -> None:
    """Prove on ``fn``'s jaxpr that chunking ``args[argnums]`` along ``axis`` and
    combining the per-chunk results with ``combine`` gives ``fn``'s result.

    :param fn: the function, as :func:`chunked` would call it.
    :param args: its positional arguments: arrays, or anything with a ``shape`` and a
        ``dtype`` (a :class:`jax.ShapeDtypeStruct`); only shapes and dtypes are used.
    :param kwargs: its keyword arguments, never chunked.
    :raises ChunkError: naming the first operation (and its source line) that the proof
        cannot pass, or the output that is no partial result of ``combine``.
    """
    normalize_chunking(argnums, axis, 1, combine)
    proved = proved_combine(fn, *args, argnums=argnums, axis=axis, **kwargs)
    want = _PARTIAL_OF[combine]
    if proved.op != want:
        label = "the output" if proved.outputs == 1 else "every output"
        hint = f" (combine={proved.op!r} combines it)" if proved.op in ("sum", "mean") else ""
        raise ChunkError(f"chunked({function_name(fn)}): {label} is a {proved.op} over the chunked axis (made at "
                         f"{proved.origin}), but combine={combine!r} needs a {want}{hint}", "", proved.origin)


@dataclasses.dataclass(frozen=True)
class Proved:
    """What :func:`proved_combine` proved: every output is a partial ``op`` (the combine
    that rebuilds it) over the chunked axis; ``origin``: where the first was made."""

    op: str
    origin: str
    outputs: int


def proved_combine(fn: Callable[..., Any], *args: Any, argnums: int | Sequence[int] = 0,
                   axis: int | Sequence[int] = 0, **kwargs: Any) -> Proved:
    """Prove on ``fn``'s jaxpr that chunking ``args[argnums]`` along ``axis`` keeps its
    result under one combine, and say which (see :func:`check_chunkable`).

    :raises ChunkError: naming the first operation (and its source line) that the proof
        cannot pass, or an output that is no partial result, or outputs of different kinds.
    """
    import jax

    nums, axes = normalize_chunking(argnums, axis, 1, "sum")
    name = function_name(fn)
    _, axes_list = chunk_axes(args, nums, axes, name)
    flat, tree = jax.tree_util.tree_flatten((args, kwargs))
    dynamic = [i for i, leaf in enumerate(flat) if hasattr(leaf, "shape") and hasattr(leaf, "dtype")]

    def call(*leaves: Any) -> Any:
        values = list(flat)
        for i, leaf in zip(dynamic, leaves, strict=True):
            values[i] = leaf
        a, k = jax.tree_util.tree_unflatten(tree, values)
        return fn(*a, **k)

    specs = [abstract(flat[i]) for i in dynamic]
    closed = jax.make_jaxpr(call)(*specs)
    chunked_leaves: dict[int, int] = {}
    for num, ax in zip(nums, axes_list, strict=True):
        leaves = jax.tree_util.tree_leaves(args[num])
        if len(leaves) != 1 or leaves[0] is not args[num]:
            raise ValueError(f"chunked({name}): argument {num} is not an array")
        index = next(i for i, leaf in enumerate(flat) if leaf is args[num])
        chunked_leaves[dynamic.index(index)] = ax
    inputs: list[State] = [Mapped(chunked_leaves[i]) if i in chunked_leaves else Free()
                           for i in range(len(dynamic))]
    try:
        twins, ratios = twin_jaxprs(call, specs, chunked_leaves, name)
    except ChunkError:
        # what refuses at the real length is the better reason: look for it first
        _Prover(name).run(closed, inputs)
        raise
    outputs = _Prover(name, ratios).run(closed, inputs, twins)
    partials: list[Partial] = []
    for i, state in enumerate(outputs):
        label = f"output {i}" if len(outputs) > 1 else "the output"
        if isinstance(state, Mapped):
            raise ChunkError(f"chunked({name}): {label} keeps the chunked axis (as its dimension {state.axis}); "
                             "chunked() combines chunks by a reduction over the axis, so it does not apply; a map "
                             "over blocks of the axis (lax.map with batch_size=) computes such an output a block "
                             "at a time")
        if isinstance(state, (Free, Sized)):
            raise ChunkError(f"chunked({name}): {label} does not depend on the chunked axis: combining it once per "
                             "chunk would change it")
        if partials and state.op != partials[0].op:
            raise ChunkError(f"chunked({name}): output 0 is a {partials[0].op} and {label} a {state.op} over the "
                             "chunked axis: no one combine rebuilds both", "", state.origin)
        partials.append(state)
    return Proved(partials[0].op, partials[0].origin, len(partials))
