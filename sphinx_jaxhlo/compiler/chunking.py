"""A bounded rewrite: run a reduction over an argument's axis in chunks, after proving it may.

XLA does not "do the sum as the vmap proceeds": a program that reduces a large
intermediate over an axis of an argument stores the whole intermediate unless
its fusions happen to hold it.  :func:`chunked` writes the program the other way
round: it splits the argument(s) along the axis, calls the function on each
chunk inside :func:`jax.lax.scan` and combines the partial results, so only one
chunk's intermediate lives at a time.

That rewrite is only correct when the function treats the elements along the
axis independently and reduces over the axis with the combine given.  Before
building it, :func:`check_chunkable` follows the axis through the function's
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

:func:`chunked_source` writes the same rewrite as plain JAX code, to paste into a
project that does not depend on this package; :func:`verify_chunked` is the
second guard, a numerical comparison on small random inputs on the CPU.

Importing this module does not import jax; its functions do.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["COMBINES", "ChunkCheck", "ChunkError", "ChunkOption", "add_variant", "check_chunkable", "chunked",
           "chunked_source", "parse_chunk_option", "prove_and_check", "suggest_chunking", "verify_chunked"]

#: The combines :func:`chunked` knows; ``mean`` is a sum of chunk means weighted by the chunk lengths.
COMBINES = ("sum", "mean", "max", "min")

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


# -- the public functions ------------------------------------------------------------------------


def _normalize(argnums: int | Sequence[int], axis: int | Sequence[int], size: int,
               combine: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    axes = (axis,) * len(nums) if isinstance(axis, int) else tuple(axis)
    if not nums or any(not isinstance(n, int) or isinstance(n, bool) or n < 0 for n in nums):
        raise ValueError(f"argnums: expected an argument index or a sequence of them, got {argnums!r}")
    if len(set(nums)) != len(nums):
        raise ValueError(f"argnums: {argnums!r} names an argument twice")
    if len(axes) != len(nums) or any(not isinstance(a, int) or isinstance(a, bool) for a in axes):
        raise ValueError(f"axis: expected an int or one int per argnum, got {axis!r}")
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ValueError(f"size: expected a positive int, got {size!r}")
    if combine not in COMBINES:
        raise ValueError(f"combine: expected one of {', '.join(COMBINES)}, got {combine!r}")
    return nums, axes


def _axes_of(args: Sequence[Any], nums: Sequence[int], axes: Sequence[int], name: str) -> tuple[int, list[int]]:
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


def _name(fn: Any) -> str:
    return str(getattr(fn, "__name__", None) or type(fn).__name__)


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

    nums, axes = _normalize(argnums, axis, 1, combine)
    name = _name(fn)
    _, axes_list = _axes_of(args, nums, axes, name)
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


def chunked(fn: Callable[..., Any], argnums: int | Sequence[int] = 0, size: int = 1000,
            axis: int | Sequence[int] = 0, combine: str = "sum", *, check: bool = True) -> Callable[..., Any]:
    """``fn``, computed ``size`` elements of an axis of its argument(s) at a time.

    The returned function splits ``args[argnums]`` along ``axis`` into chunks of
    ``size`` (a last, shorter chunk holds the remainder), calls ``fn`` on each
    chunk inside :func:`jax.lax.scan` and combines the results with ``combine``:
    ``"sum"``, ``"max"``, ``"min"``, or ``"mean"`` (each chunk's mean weighted by
    its length).  Shapes are static; it traces under :func:`jax.jit`,
    ``jax.grad`` and ``jax.vmap`` like any JAX function.

    :param fn: a function whose result(s) reduce over the chunked axis.
    :param argnums: the positional argument (or arguments, all split alike) to chunk.
    :param size: the chunk length (clipped to the axis length).
    :param axis: the axis to split, one for all ``argnums`` or one per argnum.
    :param combine: how the partial results make the whole.
    :param check: run :func:`check_chunkable` when the function is traced; it raises
        :class:`ChunkError` for a function it cannot prove.
    :raises ValueError: a bad ``argnums``, ``axis``, ``size`` or ``combine``.
    """
    nums, axes = _normalize(argnums, axis, size, combine)
    name = _name(fn)

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        import jax
        import jax.numpy as jnp
        from jax import lax

        n, axes_list = _axes_of(args, nums, axes, name)
        if check:
            check_chunkable(fn, *args, argnums=nums, axis=tuple(axes_list), combine=combine, **kwargs)
        step = min(size, n)
        k, r = divmod(n, step)
        merge = {"sum": jnp.add, "mean": jnp.add, "max": jnp.maximum, "min": jnp.minimum}[combine]

        def split(x: Any, a: int) -> Any:
            if a == 0:
                return x[:k * step].reshape(k, step, *x.shape[1:])
            main = lax.slice_in_dim(x, 0, k * step, axis=a)
            return jnp.moveaxis(main.reshape(*x.shape[:a], k, step, *x.shape[a + 1:]), a, 0)

        def rest(x: Any, a: int) -> Any:
            return x[k * step:] if a == 0 else lax.slice_in_dim(x, k * step, None, axis=a)

        def call(parts: Sequence[Any], length: int) -> Any:
            values = list(args)
            for num, part in zip(nums, parts, strict=True):
                values[num] = part
            out = fn(*values, **kwargs)
            return jax.tree.map(lambda m: m * length, out) if combine == "mean" else out

        stacks = [split(args[num], a) for num, a in zip(nums, axes_list, strict=True)]

        def body(total: Any, parts: Any) -> tuple[Any, None]:
            return jax.tree.map(merge, total, call(parts, step)), None

        total = call([s[0] for s in stacks], step)
        total, _ = lax.scan(body, total, [s[1:] for s in stacks])
        if r:
            tail = [rest(args[num], a) for num, a in zip(nums, axes_list, strict=True)]
            total = jax.tree.map(merge, total, call(tail, r))
        if combine == "mean":
            total = jax.tree.map(lambda t: t / n, total)
        return total

    return run


def _parameters(fn: Any) -> tuple[list[str], bool]:
    """(the positional parameter names, whether keyword arguments pass through)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return [], True
    names: list[str] = []
    keywords = False
    for param in signature.parameters.values():
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            names.append(param.name)
        elif param.kind is param.VAR_POSITIONAL:
            return [], True
        else:
            keywords = True
    return names, keywords


def chunked_source(fn: Callable[..., Any] | str, argnums: int | Sequence[int] = 0, size: int = 1000,
                   axis: int | Sequence[int] = 0, combine: str = "sum", *, name: str | None = None,
                   arg_names: Sequence[str] | None = None) -> str:
    """The plain-JAX code of ``chunked(fn, argnums, size, axis, combine)``: a
    function to paste into code that does not depend on this package.

    It calls ``fn`` by its name, takes the same positional arguments (named as in
    ``fn``'s signature, or ``arg_names``) and computes what :func:`chunked` computes,
    with the same operations (``fn`` may be given as its name alone, with
    ``arg_names``).  Negative axes are not known without shapes: give them as
    non-negative numbers.

    :param name: the name of the function written (default: ``fn``'s name + ``_chunked``).
    :raises ValueError: bad parameters, or an argument to chunk that the signature lacks.
    """
    nums, axes = _normalize(argnums, axis, size, combine)
    fname = fn if isinstance(fn, str) else _name(fn)
    if not fname.isidentifier():
        raise ValueError(f"chunked_source: {fname!r} is not a name the code can call")
    params, keywords = ([], False) if isinstance(fn, str) else _parameters(fn)
    if arg_names is not None:
        params = list(arg_names)
    if not params:
        params = [f"arg{i}" for i in range(max(nums) + 1)]
    if max(nums) >= len(params):
        raise ValueError(f"chunked_source: {fname} has no positional argument {max(nums)}")
    if any(a < 0 for a in axes):
        raise ValueError("chunked_source: give the axis as a non-negative number")
    out_name = name or f"{fname}_chunked"
    chunk_names = {num: params[num] for num in nums}
    signature = ", ".join([*params, *(["**kwargs"] if keywords else [])])
    first = chunk_names[nums[0]]
    length = f"{first}.shape[{axes[0]}]"
    merge = {"sum": "jnp.add", "mean": "jnp.add", "max": "jnp.maximum", "min": "jnp.minimum"}[combine]

    def call(replace: dict[int, str]) -> str:
        values = [replace.get(i, p) for i, p in enumerate(params)]
        return f"{fname}({', '.join([*values, *(['**kwargs'] if keywords else [])])})"

    def weighted(expr: str, weight: str) -> str:
        return f"jax.tree.map(lambda m: m * {weight}, {expr})" if combine == "mean" else expr

    what = {"sum": "summing", "mean": "averaging", "max": "taking the maximum of", "min": "taking the minimum of"}
    lines = [
        "import jax",
        "import jax.numpy as jnp",
        "from jax import lax",
        "",
        "",
        f"def {out_name}({signature}):",
        f'    """{fname}, computed {size} elements of axis {axes[0]} of {", ".join(chunk_names.values())} at a '
        f'time,',
        f'    {what[combine]} the per-chunk results (written by sphinx_jaxhlo.chunked_source)."""',
        f"    size = min({size}, {length})",
        f"    k, r = divmod({length}, size)",
    ]
    for num, a in zip(nums, axes, strict=True):
        x = chunk_names[num]
        if a == 0:
            lines.append(f"    {x}_chunks = {x}[:k * size].reshape(k, size, *{x}.shape[1:])")
        else:
            lines.append(f"    {x}_main = lax.slice_in_dim({x}, 0, k * size, axis={a})")
            lines.append(f"    {x}_chunks = jnp.moveaxis({x}_main.reshape(*{x}.shape[:{a}], k, size, "
                         f"*{x}.shape[{a + 1}:]), {a}, 0)")
    lines += ["", "    def step(total, chunk):"]
    chunk_vars = [f"{chunk_names[num]}_c" for num in nums]
    lines.append(f"        {', '.join(chunk_vars)}{',' if len(nums) == 1 else ''} = chunk")
    body_call = call({num: v for num, v in zip(nums, chunk_vars, strict=True)})
    lines.append(f"        part = {weighted(body_call, 'size')}")
    lines.append(f"        return jax.tree.map({merge}, total, part), None")
    lines.append("")
    first_call = call({num: f"{chunk_names[num]}_chunks[0]" for num in nums})
    lines.append(f"    total = {weighted(first_call, 'size')}")
    stacks = ", ".join(f"{chunk_names[num]}_chunks[1:]" for num in nums)
    lines.append(f"    total, _ = lax.scan(step, total, [{stacks}])")
    lines.append("    if r:")
    tails = {}
    for num, a in zip(nums, axes, strict=True):
        x = chunk_names[num]
        tails[num] = f"{x}[k * size:]" if a == 0 else f"lax.slice_in_dim({x}, k * size, None, axis={a})"
    lines.append(f"        part = {weighted(call(tails), 'r')}")
    lines.append(f"        total = jax.tree.map({merge}, total, part)")
    if combine == "mean":
        lines.append(f"    total = jax.tree.map(lambda t: t / {length}, total)")
    lines.append("    return total")
    return "\n".join(lines) + "\n"


# -- the directive's ``:chunk:`` option (pure Python: the directive does not import jax) -----------


@dataclasses.dataclass(frozen=True)
class ChunkOption:
    """A parsed ``:chunk:`` value, ``pos=1000`` or ``x=25, y=25, combine=mean, axis=0``.

    :ivar args: the arguments to chunk, by name; ``size``, ``axis``, ``combine`` as for :func:`chunked`.
    """

    args: tuple[str, ...]
    size: int
    axis: int = 0
    combine: str = "sum"


def parse_chunk_option(text: str) -> ChunkOption:
    """``"pos=1000"`` -> ``ChunkOption(("pos",), 1000)``.

    :raises ValueError: a malformed value, with the reason.
    """
    from sphinx_jaxhlo.core.view_options import parse_assignments

    args: list[str] = []
    sizes: set[int] = set()
    axis, combine = 0, "sum"
    for key, value in parse_assignments(text, ":chunk"):
        if key == "combine":
            if value not in COMBINES:
                raise ValueError(f":chunk: combine={value} is not one of {', '.join(COMBINES)}")
            combine = value
            continue
        try:
            number = int(value)
        except ValueError:
            raise ValueError(f":chunk: {key}={value} is not a whole number") from None
        if key == "axis":
            if number < 0:
                raise ValueError(":chunk: give the axis as a non-negative number")
            axis = number
        else:
            if number < 1:
                raise ValueError(f":chunk: {key}={value}: a chunk size is at least 1")
            args.append(key)
            sizes.add(number)
    if not args:
        raise ValueError(":chunk: name the argument to chunk and the chunk size, e.g. pos=1000")
    if len(sizes) > 1:
        raise ValueError(":chunk: arguments chunked together take one chunk size")
    return ChunkOption(tuple(args), sizes.pop(), axis, combine)


def variant_name(function: str) -> str:
    """The name of a function's chunked variant in an example."""
    return f"{function}_chunked"


def add_variant(source: str, function: str, option: ChunkOption) -> tuple[str, dict[str, Any]]:
    """The example's source with the plain-JAX chunked variant of ``function``
    appended, and the parameters the compile worker proves and checks it with.

    :raises ValueError: ``function`` is not a top-level ``def`` of the source, or
        lacks a positional argument the option names.
    """
    import ast

    tree = ast.parse(source)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function]
    if not defs:
        raise ValueError(f":chunk: {function!r} is not a top-level def of the example")
    params = [a.arg for a in [*defs[-1].args.posonlyargs, *defs[-1].args.args]]
    missing = [a for a in option.args if a not in params]
    if missing:
        raise ValueError(f":chunk: {function}() has no positional argument {missing[0]!r} "
                         f"(its arguments: {', '.join(params) or 'none'})")
    argnums = tuple(params.index(a) for a in option.args)
    code = chunked_source(function, argnums, option.size, option.axis, option.combine,
                          name=variant_name(function), arg_names=params)
    given = ", ".join(f"{a}={option.size}" for a in option.args)
    variant = f"\n\n# The chunked variant of {function} (:chunk: {given}), as sphinx_jaxhlo.chunked_source writes it:\n"
    check = {"of": function, "argnums": list(argnums), "size": option.size, "axis": option.axis,
             "combine": option.combine}
    return source.rstrip("\n") + "\n" + variant + code, check


def prove_and_check(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
                    check: dict[str, Any]) -> ChunkCheck:
    """What the compile worker runs for a ``:chunk:`` variant: the proof on the
    jaxpr (:func:`check_chunkable`), then the numerical check (:func:`verify_chunked`).

    :raises ChunkError: the proof refuses, or the numbers differ.
    """
    nums = tuple(check["argnums"])
    axis = int(check["axis"])
    check_chunkable(fn, *args, argnums=nums, axis=axis, combine=check["combine"], **kwargs)
    result = verify_chunked(fn, *args, argnums=nums, size=int(check["size"]), axis=axis,
                            combine=check["combine"], **kwargs)
    if not result.passed:
        raise ChunkError(f"chunked({check['of']}): the numerical check failed: {result.describe()}")
    return result


# -- the report's suggestion ----------------------------------------------------------------------

#: The default of the ``jaxhlo_chunk_budget`` setting: what a suggested chunk's stored intermediate may take.
DEFAULT_CHUNK_BUDGET = 64 * 2**20


def round_size(size: float) -> int:
    """The largest of 1, 2, 5, 10, 20, 50... that is at most ``size`` (at least 1)."""
    if size < 1:
        return 1
    best = 1
    scale = 1
    while scale <= size:
        for step in (1, 2, 5):
            if step * scale <= size:
                best = step * scale
        scale *= 10
    return best


def suggest_chunking(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], stored_bytes: int,
                     budget: int = DEFAULT_CHUNK_BUDGET, name: str | None = None) -> str:
    """A chunking that bounds a stored intermediate of ``stored_bytes`` to ``budget``,
    in words and code, or ``""`` when none passes :func:`check_chunkable`.

    Each axis of each positional array argument is tried, longest first, with the
    combines ``sum``, ``max`` and ``min``; the first that the proof accepts is the one
    whose axis the reduction runs over.  The intermediate is taken to scale with the
    axis length, so a chunk of ``size`` stores ``stored_bytes * size / n``.
    """
    from sphinx_jaxhlo.core.sizes import format_bytes

    fname = name or _name(fn)
    params, _ = _parameters(fn)
    candidates = sorted(((int(arg.shape[a]), i, a) for i, arg in enumerate(args)
                         if hasattr(arg, "shape") and hasattr(arg, "dtype")
                         for a in range(len(arg.shape)) if int(arg.shape[a]) > 1), key=lambda c: (-c[0], c[1], c[2]))
    for n, i, a in candidates:
        size = round_size(budget * n / stored_bytes) if stored_bytes > 0 else n
        if size >= n:
            continue
        for combine in ("sum", "max", "min"):
            try:
                check_chunkable(fn, *args, argnums=i, axis=a, combine=combine, **kwargs)
            except Exception:
                continue
            arg = params[i] if i < len(params) else f"argument {i}"
            call = f"sphinx_jaxhlo.chunked({fname}, argnums={i}, size={size}, axis={a}, combine={combine!r})"
            try:
                code = chunked_source(fn, i, size, a, combine, name=f"{fname}_chunked") if fname.isidentifier() \
                    else ""
            except ValueError:
                code = ""
            words = (f"Chunking would bound it: the reduction runs over axis {a} of {arg} ({n} long), and the "
                     f"rewrite over chunks of {size} is proved on the jaxpr; each chunk stores about "
                     f"{format_bytes(stored_bytes * size // n)} instead of {format_bytes(stored_bytes)} "
                     f"(budget {format_bytes(budget)}).")
            return "\n".join([words, call, code]).rstrip("\n")
    return ""


# -- the numerical check -------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ChunkCheck:
    """What :func:`verify_chunked` compared.

    :ivar shapes: the argument shapes it ran, as spec strings (``f32[37,3]``).
    :ivar size: the chunk length it used; ``chunks``: how many chunks, the remainder included.
    :ivar error: the largest absolute difference, over the largest magnitude of the original's result.
    :ivar tolerance: the bound ``error`` had to stay under (from the result's dtype).
    """

    shapes: tuple[str, ...]
    size: int
    chunks: int
    error: float
    tolerance: float

    @property
    def passed(self) -> bool:
        return self.error <= self.tolerance

    def describe(self) -> str:
        verdict = "equal within" if self.passed else "DIFFERENT: over"
        return (f"checked on random {', '.join(self.shapes)} in {self.chunks} chunks of {self.size}: relative error "
                f"{self.error:.1e}, {verdict} the tolerance {self.tolerance:.0e}")


def _spec_text(dtype: str, shape: Sequence[int]) -> str:
    from sphinx_jaxhlo.core.specs import DTYPES

    short = next((k for k, (name, _) in DTYPES.items() if name == dtype), dtype)
    return f"{short}[{','.join(map(str, shape))}]"


_TOLERANCE = {"float64": 1e-10, "float32": 1e-4, "bfloat16": 3e-2, "float16": 3e-3}


def small_shapes(shapes: Sequence[tuple[int, ...]], nums: Sequence[int], axes: Sequence[int], size: int,
                 max_dim: int = 64) -> tuple[list[tuple[int, ...]], int]:
    """Shapes small enough to run on the CPU at once, and a chunk size for them.

    Every dimension is clipped to ``max_dim`` (equal dimensions stay equal); the
    chunked axis gets room for two chunks and a remainder of a chunk size of at most 16.
    """
    n = shapes[nums[0]][axes[0]]
    step = min(size, 16, n)
    n_small = min(n, 2 * step + max(1, step // 3)) if step < n else step
    out: list[tuple[int, ...]] = []
    for i, shape in enumerate(shapes):
        dims = [min(d, max_dim) for d in shape]
        if i in nums:
            dims[axes[nums.index(i)] % len(shape)] = n_small
        out.append(tuple(dims))
    return out, step


def verify_chunked(fn: Callable[..., Any], *args: Any, argnums: int | Sequence[int] = 0, size: int = 1000,
                   axis: int | Sequence[int] = 0, combine: str = "sum", seed: int = 0, max_dim: int = 64,
                   tolerance: float | None = None, **kwargs: Any) -> ChunkCheck:
    """Run ``fn`` and ``chunked(fn, ...)`` on the CPU, on random inputs of small
    shapes derived from ``args``, and compare the results.

    :param args: arrays or shape-and-dtype structs; their shapes are clipped to ``max_dim`` per
        dimension and the chunk size to 16, so that the check runs in moments and still has
        several chunks and a remainder.
    :param tolerance: the relative error allowed (default: from the result's dtype,
        ``1e-4`` for f32).
    :returns: a :class:`ChunkCheck`; its ``passed`` says whether the results agree.
    :raises ChunkError: when the static proof (:func:`check_chunkable`) refuses.
    """
    import jax
    import jax.numpy as jnp
    import numpy as np

    nums, axes = _normalize(argnums, axis, size, combine)
    shapes = [tuple(getattr(a, "shape", ())) for a in args]
    _axes_of(args, nums, axes, _name(fn))
    small, step = small_shapes(shapes, nums, axes, size, max_dim)
    rng = np.random.default_rng(seed)
    cpu = jax.devices("cpu")[0]
    values: list[Any] = []
    for arg, shape in zip(args, small, strict=True):
        if not (hasattr(arg, "shape") and hasattr(arg, "dtype")):
            values.append(arg)
            continue
        dtype = np.dtype(arg.dtype)
        data: Any
        if np.issubdtype(dtype, np.floating):
            data = rng.standard_normal(shape).astype(np.float32)
        elif np.issubdtype(dtype, np.integer):
            data = rng.integers(0, 8, shape)
        elif dtype == np.bool_:
            data = rng.random(shape) < 0.5
        else:
            raise ValueError(f"verify_chunked: cannot make random values of dtype {dtype}")
        values.append(jax.device_put(jnp.asarray(data, dtype=arg.dtype), cpu))
    with jax.default_device(cpu):
        want = jax.jit(lambda *a: fn(*a, **kwargs))(*values)
        got = jax.jit(lambda *a: chunked(fn, nums, step, axes, combine)(*a, **kwargs))(*values)
    error = 0.0
    bound = 0.0
    for w, g in zip(jax.tree.leaves(want), jax.tree.leaves(got), strict=True):
        w64 = np.asarray(w, dtype=np.float64)
        g64 = np.asarray(g, dtype=np.float64)
        scale = float(np.max(np.abs(w64))) if w64.size else 0.0
        diff = float(np.max(np.abs(w64 - g64))) if w64.size else 0.0
        error = max(error, diff / scale if scale > 0 else diff)
        bound = max(bound, _TOLERANCE.get(np.dtype(w.dtype).name, 0.0))
    n_small = small[nums[0]][axes[0]]
    spec_text = tuple(_spec_text(np.dtype(arg.dtype).name, shape) if hasattr(arg, "dtype") else repr(arg)
                      for arg, shape in zip(args, small, strict=True))
    return ChunkCheck(shapes=spec_text, size=step, chunks=-(-n_small // step),
                      error=error, tolerance=tolerance if tolerance is not None else bound)
