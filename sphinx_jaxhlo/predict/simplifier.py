"""What XLA's algebraic simplifier does before fusion that changes which ops read a value, as the
predictor's graph (:mod:`sphinx_jaxhlo.predict.graph`) applies it while it flattens the jaxpr.

Each rewrite is one of ``algebraic_simplifier.cc`` (or XLA's constant folding), made whatever else reads
the value it removes a reader from: a select on a constant predicate is the case it picks (``jnp.var``'s
guard against no degrees of freedom), a reduction over dimensions of size 1 is a reshape
(``HandleReduce``), ``ln(exp(A)) => A`` (``HandleLog``), ``exp(A) * exp(B) => exp(A + B)``
(``HandleMultiply``), ``exp(A) / exp(B) => exp(A - B)`` and ``A / exp(B) => A * exp(-B)``
(``HandleDivide``), and a reduction over a concatenate's (or ``jnp.stack``'s) axis is a reduction of
each operand, the results combined (``HandleReduce``: "Convert Reduce(concat({a,b,...})) to
map(reduce(a),map(reduce(b),...))").  So ``e * e`` beside ``sum(e)`` is a second exponential, not a
second reader of ``e``.
This module does not import jax.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# The graph's Value and Loop (sphinx_jaxhlo.predict.graph imports this module, so they are not imported
# here): a Value has ``shape``, ``value`` and ``producer``, an Op ``prim``, ``ins``, ``loop`` and ``remat``.
Value = Any
Loop = Any

#: Makes an op of the given primitive, operands (and params), shaped like the op being rewritten; its results.
NewOp = Callable[..., list[Value]]

#: The reductions ``HandleReduce`` splits over a concatenate, and the op that combines their results.
_COMBINE = {"reduce_sum": "add", "reduce_max": "max", "reduce_min": "min", "reduce_prod": "mul"}


def simplified(name: str, ins: list[Value], params: dict[str, Any], loop: Loop | None, remat: bool,
               new: NewOp) -> list[Value] | None:
    """The values that stand for ``name(*ins)`` once the simplifier has run, made with ``new``, or
    ``None`` when no rewrite applies."""
    if name == "select_n" and ins and (which := _scalar(ins[0])) is not None and 0 <= int(which) < len(ins) - 1:
        return [ins[1 + int(which)]]
    if (name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod") and ins
            and all(ins[0].shape[a] == 1 for a in params.get("axes", ()))):
        return new("reshape", [ins[0]])
    if name in _COMBINE and ins and (split := _concat_split(name, ins[0], params, loop, remat, new)) is not None:
        return split
    exps = [_exp_operand(v, loop, remat) for v in ins]
    if name == "log" and len(ins) == 1 and exps[0] is not None:
        return [exps[0]]
    if name not in ("mul", "div") or len(ins) != 2 or exps[1] is None:
        return None
    if exps[0] is not None:
        return new("exp", new("add" if name == "mul" else "sub", [exps[0], exps[1]]))
    if name == "div":
        return new("mul", [ins[0], new("exp", new("neg", [exps[1]]))[0]])
    return None


def _concat_split(name: str, v: Value, params: dict[str, Any], loop: Loop | None, remat: bool,
                  new: NewOp) -> list[Value] | None:
    """``name`` over ``v`` when ``v`` is a concatenate (or stack) over one of the reduced axes, computed beside
    it: one reduction of each operand (a stacked operand lacks the axis), combined; else ``None``."""
    op = v.producer
    axes = tuple(params.get("axes", ()))
    if op is None or op.prim != "concatenate" or op.loop is not loop or op.remat != remat:
        return None
    dim = int(op.params.get("dimension", -1))
    if dim not in axes:
        return None
    sub = tuple(a - (a > dim) for a in axes if a != dim) if op.params.get("stacked") else axes
    acc: Value | None = None
    for w in op.ins:
        part = new(name, [w], {**params, "axes": sub})[0] if sub else w
        acc = part if acc is None else new(_COMBINE[name], [acc, part])[0]
    return [acc] if acc is not None else None


def _scalar(v: Value) -> bool | int | float | None:
    """A scalar's constant value: a literal's, or one folded from literals (:func:`folded_scalar`)."""
    if v.shape or not v.value:
        return None
    text = v.value
    if text.startswith("Typed") and "(" in text:  # jax's weakly typed literals: TypedInt(0, dtype=int32)
        text = text[text.index("(") + 1:].split(",")[0]
    if text in ("True", "False"):
        return text == "True"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return None


#: Scalar arithmetic and comparisons folded when every operand is a constant.
_FOLD: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "max": max, "min": min,
    "gt": lambda a, b: a > b, "lt": lambda a, b: a < b, "ge": lambda a, b: a >= b, "le": lambda a, b: a <= b,
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}


def folded_scalar(name: str, params: dict[str, Any], ins: list[Value]) -> str:
    """The ``repr`` of a scalar op's result when its operands are constants (XLA's constant folding),
    else ``""``: enough to read ``jnp.var``'s ``N - ddof > 0``."""
    values: list[Any] = [_scalar(v) for v in ins]
    if not ins or any(x is None for x in values):
        return ""
    out: Any = None
    try:
        if name == "convert_element_type" and len(values) == 1:
            kind = str(params.get("new_dtype", ""))
            if kind == "bool":
                out = bool(values[0])
            elif "float" in kind:
                out = float(values[0])
            elif "int" in kind:
                out = int(values[0])
        elif name == "neg" and len(values) == 1:
            out = -values[0]
        elif name in _FOLD and len(values) == 2:
            out = _FOLD[name](values[0], values[1])
    except (TypeError, ValueError, OverflowError):
        return ""
    return "" if out is None else repr(out)


def _exp_operand(v: Value, loop: Loop | None, remat: bool) -> Value | None:
    """``A`` when ``v`` is ``exp(A)`` computed beside the op reading it (same loop, same side of a
    checkpoint's barrier), where XLA's algebraic simplifier sees the pair; else ``None``."""
    op = v.producer
    if op is not None and op.prim == "exp" and op.loop is loop and op.remat == remat:
        return op.ins[0]
    return None
