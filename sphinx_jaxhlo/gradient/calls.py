"""The gradient variants of a function given to the Python API (``analyze(fn, ..., grad=...)``):
the calls to compile, one per form the option asks for, each carrying the code of its variant
(:func:`sphinx_jaxhlo.gradient.source.call_variant`, the code a ``:grad:`` example shows), and
each refused before anything compiles when ``jax.grad`` would refuse it.  Runs in the caller's
process (no jax import); the compile worker runs the code (:mod:`sphinx_jaxhlo.gradient.build`),
and never imports the option's rules: what it compiles is in the reports' cache key, they are not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sphinx_jaxhlo.compiler.calls import Call
from sphinx_jaxhlo.core.specs import ArraySpec, container_leaves

__all__ = ["gradient_calls"]


def gradient_calls(name: str, call: Call, grad: str | int | Sequence[str | int],
                   positional: Sequence[str] | None) -> list[tuple[str, Call]]:
    """The calls of a function's gradient variants (``analyze(..., grad=...)``), each with its
    name (:mod:`sphinx_jaxhlo.gradient.option`: one per form the option asks for).

    :param name: the function's name; ``positional``: its positional parameters (``None``: no
        signature, positions only).
    :raises OptionProblem: (a ``ValueError``) a malformed ``grad``, an argument the function lacks,
        or one ``jax.grad`` refuses (an integer...).
    """
    import dataclasses

    from sphinx_jaxhlo.core.example import PYTHON, OptionProblem
    from sphinx_jaxhlo.gradient.option import grad_forms, grad_variant_name, grad_wrt, parse_grad_option, resolve_wrt
    from sphinx_jaxhlo.gradient.source import call_variant

    items = parse_grad_option(grad, PYTHON("grad"))
    params = list(positional) if positional is not None else [f"argument {i}" for i in range(len(call.args))]
    keywords = sorted(set(call.kwargs) - set(params))
    try:
        names = resolve_wrt(name, params, keywords, grad_wrt(items), PYTHON("grad"))
    except ValueError as exc:
        raise OptionProblem("grad", str(exc)) from None
    for wrt in names:
        if wrt in params and params.index(wrt) < len(call.args):
            value = call.args[params.index(wrt)]
        elif wrt in call.kwargs:
            value = call.kwargs[wrt]
        else:
            raise OptionProblem("grad", f"{PYTHON('grad')} {wrt!r} is not an argument of this call: "
                                f"{len(call.args)} positional and {', '.join(call.kwargs) or 'no'} keyword "
                                "argument(s) given")
        problem = _undifferentiable(name, wrt, value)
        if problem:
            raise OptionProblem("grad", problem)
    # the variant takes the call's arguments: its positional ones by position, the others by name
    positional_given = [params[i] if i < len(params) else f"_arg{i}" for i in range(len(call.args))]
    code, binds, variants = call_variant(name, positional_given, [*call.kwargs, *call.static], names, items,
                                         PYTHON("grad"))
    return [(grad_variant_name(name, form), dataclasses.replace(call, gradient=code, gradient_binds=binds,
                                                                gradient_variant=variant))
            for form, variant in zip(grad_forms(items), variants, strict=True)]


def _undifferentiable(function: str, name: str, value: Any) -> str:
    """The message for an argument value (a spec, an array's shape and dtype, a Python value, or a
    pytree of those) that ``jax.grad`` refuses, or ``""``."""
    from sphinx_jaxhlo.core.example import PYTHON
    from sphinx_jaxhlo.gradient.option import undifferentiable

    dtypes: list[str] = []
    for x in container_leaves(value):
        if isinstance(x, ArraySpec):
            dtypes.append(x.dtype)
        elif hasattr(x, "dtype") and hasattr(x, "shape"):
            dtypes.append(str(getattr(x.dtype, "name", x.dtype)))
        elif isinstance(x, int):  # a bool too
            dtypes.append(type(x).__name__)
    return undifferentiable(PYTHON("grad"), function, name, dtypes)
