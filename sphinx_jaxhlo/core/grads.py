"""The gradient variant: the ``:grad:`` option and the code of a function's gradient.

``:grad: hkl`` (argument names, or positions: ``:grad: 1``, ``:grad: pos, hkl``)
adds, beside each function an example compiles, the gradient of that function
with respect to those arguments, as a variant named ``<function>_grad``, the way
``:chunk:`` adds a chunked variant: its code is appended to the example's source
(so the page shows what was compiled) and it is compiled on every target like
any function.  The code is a vector-Jacobian product with a cotangent of ones::

    def with_dot_grad(pos, hkl):
        def _of(hkl):
            return with_dot(pos, hkl)
        _value, _pullback = jax.vjp(_of, hkl)
        (_grad_hkl,) = _pullback(jax.tree.map(jnp.ones_like, _value))
        return _value, _grad_hkl

For a function with a scalar output this is ``jax.value_and_grad(with_dot,
argnums=1)(pos, hkl)`` (whose cotangent is the one ``1.0``); for any other, it
is the gradient of the sum of its outputs, which is what a loss built on it
asks of the backward pass, at the cost of one pass.  The forward values are
returned too, so nothing of the forward pass is left out of the compile.

Nothing here imports jax: :func:`sphinx_jaxhlo.analyze` builds the same
function in the compile worker (:func:`sphinx_jaxhlo.compiler.calls.gradient_of`).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

__all__ = ["add_grad_variant", "grad_variant_name", "parse_grad_option", "resolve_wrt"]


def grad_variant_name(function: str) -> str:
    """The name of a function's gradient variant in an example."""
    return f"{function}_grad"


def parse_grad_option(value: str | int | Sequence[str | int], option: str = ":grad:") -> tuple[str, ...]:
    """``"pos, hkl"`` or ``"1"`` (or a list of names and ints) -> ``("pos", "hkl")``, ``("1",)``.

    :param option: the option as the front spells it, for messages.
    :raises ValueError: an empty value, or an item that is neither a name nor a position.
    """
    if isinstance(value, bool):
        raise ValueError(f"{option} expected argument names or positions, got {value!r}")
    if isinstance(value, int):
        items = [str(value)]
    elif isinstance(value, str):
        items = [v.strip() for v in value.split(",")]
    else:
        items = [str(v).strip() if not isinstance(v, bool) else "" for v in value]
    items = [v for v in items if v] if isinstance(value, str) else items
    if not items:
        raise ValueError(f"{option} name the arguments to differentiate with respect to, e.g. hkl or 1")
    for item in items:
        if not (item.isidentifier() or item.isdigit()):
            raise ValueError(f"{option} {item!r} is neither an argument name nor a position")
    if len(set(items)) != len(items):
        raise ValueError(f"{option} names an argument twice")
    return tuple(items)


def _parameters(node: ast.FunctionDef) -> tuple[list[str], list[str]]:
    """(positional parameter names, keyword-only parameter names) of a ``def``."""
    positional = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
    return positional, [a.arg for a in node.args.kwonlyargs]


def resolve_wrt(function: str, positional: Sequence[str], keyword_only: Sequence[str], wrt: Sequence[str],
                option: str = ":grad:") -> list[str]:
    """The names of the arguments ``wrt`` names (a position counts among the positional ones).

    :raises ValueError: a name the function lacks, or a position past its positional arguments.
    """
    names: list[str] = []
    known = [*positional, *keyword_only]
    for item in wrt:
        if item.isdigit():
            if int(item) >= len(positional):
                raise ValueError(f"{option} {function}() has no positional argument {item} "
                                 f"(its positional arguments: {', '.join(positional) or 'none'})")
            name = positional[int(item)]
        elif item in known:
            name = item
        else:
            raise ValueError(f"{option} {function}() has no argument {item!r} "
                             f"(its arguments: {', '.join(known) or 'none'})")
        if name in names:
            raise ValueError(f"{option} names the argument {name!r} of {function}() twice")
        names.append(name)
    return names


def add_grad_variant(source: str, function: str, wrt: Sequence[str], option: str = ":grad:") -> str:
    """The example's source with the gradient variant of ``function`` appended
    (see the module's docstring for its code).

    :param option: the option as the front spells it, for messages.
    :raises ValueError: ``function`` is not a top-level ``def`` of the source, lacks an argument
        ``wrt`` names, or the source already defines the variant's name.
    """
    tree = ast.parse(source)
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    node = defs.get(function)
    if not isinstance(node, ast.FunctionDef):
        raise ValueError(f"{option} {function!r} is not a top-level def of the example")
    name = grad_variant_name(function)
    if name in defs:
        raise ValueError(f"{option} the example already defines {name}(), the name of {function}'s gradient")
    positional, keyword_only = _parameters(node)
    names = resolve_wrt(function, positional, keyword_only, wrt, option)
    call = [*positional]
    if node.args.vararg is not None:
        call.append(f"*{node.args.vararg.arg}")
    call += [f"{k}={k}" for k in keyword_only]
    if node.args.kwarg is not None:
        call.append(f"**{node.args.kwarg.arg}")
    signature = ast.unparse(node.args)
    grads = [f"_grad_{n}" for n in names]
    lines = [
        "",
        "",
        f"# The gradient of {function} with respect to {', '.join(names)} ({option} {', '.join(wrt)}): "
        "a vjp with a cotangent of ones,",
        "# jax.value_and_grad for a scalar output.",
        "import jax",
        "import jax.numpy as jnp",
        "",
        "",
        f"def {name}({signature}):",
        f"    def _of({', '.join(names)}):",
        f"        return {function}({', '.join(call)})",
        "",
        f"    _value, _pullback = jax.vjp(_of, {', '.join(names)})",
        f"    ({', '.join(grads)},) = _pullback(jax.tree.map(jnp.ones_like, _value))",
        f"    return _value, {grads[0] if len(grads) == 1 else '(' + ', '.join(grads) + ')'}",
    ]
    return source.rstrip("\n") + "\n" + "\n".join(lines) + "\n"
