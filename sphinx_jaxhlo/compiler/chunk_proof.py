"""The proof behind :func:`sphinx_jaxhlo.chunked`: the chunked axis, followed through the jaxpr.

The chunked rewrite is only correct when the function treats the elements
along the axis independently and reduces over the axis with the combine given.
Before building it, :func:`check_chunkable` follows the axis through the function's
jaxpr and raises :class:`ChunkError`, naming the operation and its source line,
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
  partial max or min may pass through increasing functions (``exp``, ``log``,
  ``tanh``...), be shifted by such values or flipped by a negation;
- anything else refuses: an operation that uses elements at several positions
  of the axis (a cumulative op, sort, slice, pad, ``rev`` or ``argmax`` along
  it, a dot contracting it with an operand that is not split, a dot pairing
  two chunked axes), one that meets a partial result with the mapped axis (the
  normalisation of a softmax), a non-linear function of a partial sum, a value
  that varies along the axis without being split (an ``iota``, an argument that
  is not chunked), an operation the checker does not know, and an output that
  is not a partial result of the requested combine (one that keeps the axis,
  or does not depend on it).

Importing this module does not import jax; :func:`check_chunkable` does.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

from sphinx_jaxhlo.core.chunks import function_name, normalize_chunking

__all__ = ["ChunkError", "check_chunkable", "chunk_axes"]


#: The partial result each combine accepts as an output.
_PARTIAL_OF = {"sum": "sum", "mean": "sum", "max": "max", "min": "min"}


_ELEMENTWISE = frozenset(str.split("""
    abs acos acosh add and asin asinh atan atan2 atanh cbrt ceil clamp clz complex conj convert_element_type copy
    copy_p cos cosh digamma div eq erf erf_inv erfc exp exp2 expm1 floor ge gt igamma igammac imag integer_pow
    is_finite le lgamma log log1p logistic lt max min mul ne neg nextafter not or population_count pow real
    reduce_precision rem round rsqrt select_n shift_left shift_right_arithmetic shift_right_logical sign sin sinh
    sqrt square stop_gradient sub tan tanh xor
"""))


#: Increasing functions: f(max x) = max f(x), f(min x) = min f(x).
_INCREASING = frozenset(str.split("""
    asinh atan cbrt ceil convert_element_type copy copy_p erf exp exp2 expm1 floor log log1p logistic
    reduce_precision round sinh sqrt stop_gradient tanh
"""))


_PASS_THROUGH = frozenset({"convert_element_type", "copy", "copy_p", "stop_gradient", "reduce_precision"})


_REDUCTIONS = {"reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min"}


_CUMULATIVE = frozenset({"cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"})


_CALLS = ("jaxpr", "call_jaxpr", "fun_jaxpr")


class ChunkError(ValueError):
    """The rewrite cannot be proved correct for this function.

    :ivar primitive: the jaxpr operation that stopped the proof (``""`` for an output or the arguments).
    :ivar where: its source location, ``file:line:column (function)``, when jax recorded one.
    """

    def __init__(self, message: str, primitive: str = "", where: str = "") -> None:
        super().__init__(message)
        self.primitive = primitive
        self.where = where


# -- what the checker knows of each value ------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Free:
    """Does not depend on the chunked arguments; ``uniform``: dimensions along which it is constant."""

    uniform: frozenset[int] = frozenset()


@dataclasses.dataclass(frozen=True)
class _Mapped:
    """Element ``i`` of dimension ``axis`` comes from element ``i`` of the chunked axis alone."""

    axis: int


@dataclasses.dataclass(frozen=True)
class _Partial:
    """A reduction over the chunked axis with ``op``; ``origin``: where it was made."""

    op: str
    origin: str


_State = _Free | _Mapped | _Partial


_NEGATED = {"sum": "sum", "max": "min", "min": "max"}


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

    def __init__(self, name: str, combine: str) -> None:
        self.name = name
        self.combine = combine
        #: the locations of the calls being followed: an operation inside jax's own
        #: functions (``jnp.cumsum`` is a jitted function) is located by the user's call.
        self.calls: list[str] = []

    def where(self, eqn: Any) -> str:
        return _where(eqn) or next((w for w in reversed(self.calls) if w), "")

    def refuse(self, eqn: Any, why: str) -> ChunkError:
        where = self.where(eqn)
        at = f" at {where}" if where else ""
        return ChunkError(f"chunked({self.name}): `{eqn.primitive.name}`{at} {why}; "
                          "the chunked rewrite would change the result, so it is refused",
                          eqn.primitive.name, where)

    def read(self, env: dict[Any, _State], var: Any) -> _State:
        from jax.extend.core import Literal

        if isinstance(var, Literal):
            return _Free(frozenset(range(len(_shape(var)))))
        return env.get(var, _Free())

    def run(self, jaxpr: Any, inputs: Sequence[_State]) -> list[_State]:
        env: dict[Any, _State] = dict(zip(jaxpr.invars, inputs, strict=True))
        for var in getattr(jaxpr, "constvars", ()):
            env[var] = _Free()
        for eqn in jaxpr.eqns:
            states = [self.read(env, v) for v in eqn.invars]
            outs = self.equation(eqn, states)
            for var, state in zip(eqn.outvars, outs, strict=True):
                env[var] = state
        return [self.read(env, v) for v in jaxpr.outvars]

    # -- one equation ---------------------------------------------------------------------------

    def equation(self, eqn: Any, states: list[_State]) -> list[_State]:
        name = eqn.primitive.name
        params = eqn.params
        n_out = len(eqn.outvars)
        if name == "iota":
            dim = params["dimension"]
            return [_Free(frozenset(d for d in range(len(params["shape"])) if d != dim))]
        sub = next((params[k] for k in _CALLS if k in params), None)
        if sub is not None and name not in ("scan", "while"):
            return self.call(eqn, sub, states)
        if name == "cond":
            return self.cond(eqn, states)
        if all(isinstance(s, _Free) for s in states):
            return self.free(eqn, states)
        if name in _ELEMENTWISE:
            return [self.elementwise(eqn, states)]
        operand = states[0]
        if name == "broadcast_in_dim":
            dims = params["broadcast_dimensions"]
            if isinstance(operand, _Mapped):
                return [_Mapped(int(dims[operand.axis]))]
            return [operand]
        if name in ("reshape", "squeeze", "expand_dims", "transpose") and isinstance(operand, _Partial):
            return [operand]
        if name in _REDUCTIONS:
            return [self.reduction(eqn, operand, _REDUCTIONS[name])]
        if name == "dot_general":
            return [self.dot(eqn, states[0], states[1])]
        if isinstance(operand, _Partial) or any(isinstance(s, _Partial) for s in states):
            raise self.refuse(eqn, "uses a reduction over the chunked axis in a way the checker cannot follow")
        joins = name in ("concatenate", "sort")
        if not isinstance(operand, _Mapped) or (not joins and any(not isinstance(s, _Free) for s in states[1:])):
            raise self.refuse(eqn, "takes the chunked data in an operand the checker cannot follow")
        return self.structural(eqn, operand, states, n_out)

    def free(self, eqn: Any, states: list[_State]) -> list[_State]:
        name = eqn.primitive.name
        out_shape = _shape(eqn.outvars[0]) if eqn.outvars else ()
        if name in _ELEMENTWISE:
            uniform = set(range(len(out_shape)))
            for var, state in zip(eqn.invars, states, strict=True):
                shape = _shape(var)
                if not shape:
                    continue
                assert isinstance(state, _Free)
                uniform &= {d for d in range(len(shape)) if shape[d] == 1 or d in state.uniform}
            return [_Free(frozenset(uniform))] * len(eqn.outvars)
        if name == "broadcast_in_dim":
            dims = [int(d) for d in eqn.params["broadcast_dimensions"]]
            state = states[0]
            assert isinstance(state, _Free)
            in_shape = _shape(eqn.invars[0])
            uniform = {d for d in range(len(out_shape)) if d not in dims}
            uniform |= {dims[i] for i in range(len(dims)) if i in state.uniform or in_shape[i] == 1}
            return [_Free(frozenset(uniform))]
        return [_Free()] * len(eqn.outvars)

    def elementwise(self, eqn: Any, states: list[_State]) -> _State:
        name = eqn.primitive.name
        mapped = {s.axis for s in states if isinstance(s, _Mapped)}
        partial = [s for s in states if isinstance(s, _Partial)]
        if mapped and partial:
            raise self.refuse(eqn, f"combines elements along the chunked axis with the reduction over it made at "
                                   f"{partial[0].origin} (as a softmax's normalisation does)")
        if len(mapped) > 1:
            raise self.refuse(eqn, "pairs two different axes of chunked data")
        if mapped:
            axis = mapped.pop()
            for var, state in zip(eqn.invars, states, strict=True):
                shape = _shape(var)
                if isinstance(state, _Free) and shape and shape[axis] != 1 and axis not in state.uniform:
                    raise self.refuse(eqn, f"pairs the chunked axis with a value of shape {list(shape)} that varies "
                                           f"along it but is not split (an iota, or an argument not chunked)")
            return _Mapped(axis)
        return self.partial_elementwise(eqn, name, states)

    def partial_elementwise(self, eqn: Any, name: str, states: list[_State]) -> _State:
        partials: list[tuple[int, _Partial]] = [(i, s) for i, s in enumerate(states) if isinstance(s, _Partial)]
        ops = {s.op for _, s in partials}
        first = partials[0][1]
        nonlinear = f"is applied to the {first.op} over the chunked axis made at {first.origin}, and it does not " \
                    f"distribute over a {first.op} of chunks"
        if len(ops) > 1:
            raise self.refuse(eqn, "mixes reductions of different kinds over the chunked axis")
        op = ops.pop()
        if name in _PASS_THROUGH or (op != "sum" and name in _INCREASING and len(states) == 1):
            return first
        if name == "neg":
            return _Partial(_NEGATED[op], first.origin)
        both = len(partials) == len(states)
        index = partials[0][0]
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
            return _Partial(_NEGATED[op], first.origin)
        raise self.refuse(eqn, nonlinear)

    def _raise(self, eqn: Any, why: str) -> _State:
        raise self.refuse(eqn, why)

    def reduction(self, eqn: Any, operand: _State, op: str) -> _State:
        axes = [int(a) for a in eqn.params["axes"]]
        if isinstance(operand, _Partial):
            if operand.op != op:
                raise self.refuse(eqn, f"takes a {op} of the {operand.op} over the chunked axis made at "
                                       f"{operand.origin}")
            return operand
        assert isinstance(operand, _Mapped)
        if operand.axis in axes:
            return _Partial(op, self.where(eqn) or eqn.primitive.name)
        return _Mapped(operand.axis - sum(a < operand.axis for a in axes))

    def dot(self, eqn: Any, lhs: _State, rhs: _State) -> _State:
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        lc, rc, lb, rb = ([int(d) for d in dims] for dims in (lc, rc, lb, rb))
        if isinstance(lhs, _Partial) or isinstance(rhs, _Partial):
            partial = lhs if isinstance(lhs, _Partial) else rhs
            other = rhs if partial is lhs else lhs
            assert isinstance(partial, _Partial)
            if partial.op == "sum" and isinstance(other, _Free):
                return partial
            raise self.refuse(eqn, f"multiplies the {partial.op} over the chunked axis made at {partial.origin} "
                                   "with chunked data")
        lhs_free = [d for d in range(len(_shape(eqn.invars[0]))) if d not in lc and d not in lb]
        rhs_free = [d for d in range(len(_shape(eqn.invars[1]))) if d not in rc and d not in rb]
        if isinstance(lhs, _Mapped) and isinstance(rhs, _Mapped):
            if lhs.axis in lc and rhs.axis in rc and rc[lc.index(lhs.axis)] == rhs.axis:
                return _Partial("sum", self.where(eqn) or "dot_general")
            if lhs.axis in lb and rhs.axis in rb and rb[lb.index(lhs.axis)] == rhs.axis:
                return _Mapped(lb.index(lhs.axis))
            raise self.refuse(eqn, "pairs elements at different positions of the chunked axis (each with every "
                                   "other, or a chunked axis with another axis)")
        mapped, free_dims, contract, batch, offset = (
            (lhs, lhs_free, lc, lb, len(lb)) if isinstance(lhs, _Mapped)
            else (rhs, rhs_free, rc, rb, len(lb) + len(lhs_free)))
        assert isinstance(mapped, _Mapped)
        if mapped.axis in contract:
            raise self.refuse(eqn, "contracts the chunked axis with an operand that is not split along it")
        if mapped.axis in batch:
            raise self.refuse(eqn, "batches the chunked axis with an operand that is not split along it")
        return _Mapped(offset + free_dims.index(mapped.axis))

    def structural(self, eqn: Any, operand: _Mapped, states: list[_State], n_out: int) -> list[_State]:
        name = eqn.primitive.name
        params = eqn.params
        axis = operand.axis
        in_shape = _shape(eqn.invars[0])
        along = "picks or moves elements by their position along the chunked axis"
        if name == "transpose":
            return [_Mapped(list(params["permutation"]).index(axis))]
        if name == "squeeze":
            return [_Mapped(axis - sum(int(d) < axis for d in params["dimensions"]))]
        if name == "expand_dims":
            out = axis
            for d in sorted(int(d) for d in params["dimensions"]):
                if d <= out:
                    out += 1
            return [_Mapped(out)]
        if name == "reshape":
            out_shape = _shape(eqn.outvars[0])
            before = math.prod(in_shape[:axis])
            for j in range(len(out_shape)):
                if math.prod(out_shape[:j]) == before and out_shape[j] == in_shape[axis]:
                    return [_Mapped(j)]
            raise self.refuse(eqn, "merges the chunked axis with another axis")
        if name in ("argmax", "argmin"):
            axes = [int(a) for a in params["axes"]]
            if axis in axes:
                raise self.refuse(eqn, "finds a position along the chunked axis")
            return [_Mapped(axis - sum(a < axis for a in axes))]
        if name in _CUMULATIVE:
            if int(params["axis"]) == axis:
                raise self.refuse(eqn, "accumulates along the chunked axis: each element depends on those before it")
            return [operand]
        if name == "sort":
            if any(not isinstance(s, _Mapped) or s.axis != axis for s in states):
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
                if isinstance(state, _Mapped) and state.axis == axis:
                    continue
                if isinstance(state, _Free) and axis in state.uniform:
                    continue
                raise self.refuse(eqn, f"joins chunked data with a value of shape {list(_shape(var))} that is not "
                                       "split along the chunked axis")
            return [operand]
        raise self.refuse(eqn, "is an operation the checker does not know to treat the elements along the chunked "
                               "axis independently")

    def call(self, eqn: Any, sub: Any, states: list[_State]) -> list[_State]:
        jaxpr = getattr(sub, "jaxpr", sub)
        if len(jaxpr.invars) != len(states):
            if all(isinstance(s, _Free) for s in states):
                return [_Free()] * len(eqn.outvars)
            raise self.refuse(eqn, "calls a function the checker cannot match to its arguments")
        self.calls.append(_where(eqn))
        try:
            return self.run(jaxpr, states)
        finally:
            self.calls.pop()

    def cond(self, eqn: Any, states: list[_State]) -> list[_State]:
        if not isinstance(states[0], _Free):
            raise self.refuse(eqn, "chooses a branch from chunked data")
        self.calls.append(_where(eqn))
        try:
            results = [self.run(branch.jaxpr, states[1:]) for branch in eqn.params["branches"]]
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


def _abstract(value: Any) -> Any:
    import jax

    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return jax.ShapeDtypeStruct(tuple(value.shape), value.dtype)
    return value


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
    import jax

    nums, axes = normalize_chunking(argnums, axis, 1, combine)
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

    closed = jax.make_jaxpr(call)(*[_abstract(flat[i]) for i in dynamic])
    chunked_leaves: dict[int, int] = {}
    for num, ax in zip(nums, axes_list, strict=True):
        leaves = jax.tree_util.tree_leaves(args[num])
        if len(leaves) != 1 or leaves[0] is not args[num]:
            raise ValueError(f"chunked({name}): argument {num} is not an array")
        index = next(i for i, leaf in enumerate(flat) if leaf is args[num])
        chunked_leaves[dynamic.index(index)] = ax
    inputs: list[_State] = [_Mapped(chunked_leaves[i]) if i in chunked_leaves else _Free()
                            for i in range(len(dynamic))]
    prover = _Prover(name, combine)
    outputs = prover.run(closed.jaxpr, inputs)
    want = _PARTIAL_OF[combine]
    for i, state in enumerate(outputs):
        label = f"output {i}" if len(outputs) > 1 else "the output"
        if isinstance(state, _Mapped):
            raise ChunkError(f"chunked({name}): {label} keeps the chunked axis (as its dimension {state.axis}); "
                             "chunks of it cannot be combined into the whole")
        if isinstance(state, _Free):
            raise ChunkError(f"chunked({name}): {label} does not depend on the chunked axis: combining it once per "
                             "chunk would change it")
        if state.op != want:
            raise ChunkError(f"chunked({name}): {label} is a {state.op} over the chunked axis (made at "
                             f"{state.origin}), but combine={combine!r} needs a {want}", "", state.origin)
