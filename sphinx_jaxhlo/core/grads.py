"""The gradient variants: the ``:grad:`` option and the code of a function's gradient.

``:grad: hkl`` (argument names, or positions: ``:grad: 1``, ``:grad: pos, hkl``)
adds, beside each function an example compiles, the gradient of that function
with respect to those arguments, as a variant, the way ``:chunk:`` adds a
chunked variant: its code is appended to the example's source (so the page
shows what was compiled) and it is compiled on every target like any function.
Two forms, named in the option by the JAX function each stands for:

- ``jax.value_and_grad`` (the default): ``<function>_grad`` returns the value and
  the gradient;
- ``jax.grad`` (``:grad: hkl, jax.grad``): ``<function>_grad_only`` returns the
  gradient alone, so XLA may drop what only the value needs: its figures can be
  lower (``:grad: hkl, jax.grad, jax.value_and_grad`` compiles both).

The code is a vector-Jacobian product with a cotangent of ones::

    def with_dot_grad(pos, hkl):
        def _of(hkl):
            return with_dot(pos, hkl)
        _value, _pullback = jax.vjp(_of, hkl)
        (_grad_hkl,) = _pullback(jax.tree.map(jnp.ones_like, _value))
        return _value, _grad_hkl

For a function with a scalar output this is ``jax.value_and_grad(with_dot,
argnums=1)(pos, hkl)`` (whose cotangent is the one ``1.0``), and without the
value ``jax.grad(with_dot, argnums=1)(pos, hkl)``; for any other, it is the
gradient of the sum of its outputs, which is what a loss built on it asks of the
backward pass, at the cost of one pass.  Its names are fresh against the
function's (:mod:`sphinx_jaxhlo.core.hygiene`).  An argument that ``jax.grad``
refuses (an integer, a boolean, a PRNG key: its dtype is not a floating or
complex one) is refused here, before anything compiles, with the same reason.

Nothing here imports jax: :func:`sphinx_jaxhlo.analyze` builds the same
function in the compile worker (:func:`sphinx_jaxhlo.compiler.calls.gradient_of`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

from sphinx_jaxhlo.core.hygiene import NamePool, module_names, scope_of_source

__all__ = ["DEFAULT_FORM", "FORMS", "add_grad_variant", "differentiable_dtype", "grad_forms", "grad_variant_name",
           "grad_variant_names", "grad_wrt", "parse_grad_option", "resolve_wrt", "undifferentiable"]

#: The forms of a gradient variant, by the JAX function each stands for: the suffix of its name, and
#: what it returns.
FORMS = {"jax.value_and_grad": ("_grad", "the value and the gradient"),
         "jax.grad": ("_grad_only", "the gradient alone")}
DEFAULT_FORM = "jax.value_and_grad"


def grad_variant_name(function: str, form: str = DEFAULT_FORM) -> str:
    """The name of a function's gradient variant of ``form`` in an example."""
    return f"{function}{FORMS[form][0]}"


def grad_forms(items: Sequence[str]) -> tuple[str, ...]:
    """The forms a parsed ``:grad:`` value asks for, in :data:`FORMS` order (default: value and gradient)."""
    return tuple(f for f in FORMS if f in items) or (DEFAULT_FORM,)


def grad_wrt(items: Sequence[str]) -> tuple[str, ...]:
    """The argument names and positions of a parsed ``:grad:`` value."""
    return tuple(i for i in items if i not in FORMS)


def grad_variant_names(function: str, items: Sequence[str]) -> list[str]:
    """The gradient variants of ``function`` that a parsed ``:grad:`` value adds, in order."""
    return [grad_variant_name(function, form) for form in grad_forms(items)]


def parse_grad_option(value: str | int | Sequence[str | int], option: str = ":grad:") -> tuple[str, ...]:
    """``"pos, hkl"`` or ``"1"`` (or a list of names and ints) -> ``("pos", "hkl")``, ``("1",)``;
    ``jax.grad`` and ``jax.value_and_grad`` among them choose the forms (:data:`FORMS`).

    :param option: the option as the front spells it, for messages.
    :raises ValueError: an empty value, or an item that is neither a name, a position nor a form.
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
    for item in items:
        if not (item.isidentifier() or item.isdigit() or item in FORMS):
            raise ValueError(f"{option} {item!r} is neither an argument name nor a position (nor a form: "
                             f"{', '.join(FORMS)})")
    if not grad_wrt(items):
        raise ValueError(f"{option} name the arguments to differentiate with respect to, e.g. hkl or 1")
    if len(set(items)) != len(items):
        raise ValueError(f"{option} names an argument twice")
    return tuple(items)


def differentiable_dtype(dtype: str) -> bool:
    """Whether ``jax.grad`` accepts an input of this dtype (a spec's ``f32``, or numpy's ``float32``):
    a floating or complex one."""
    name = dtype.lower()
    return name != "float0" and name.startswith(("f", "bf", "c"))


def undifferentiable(option: str, function: str, name: str, dtypes: Iterable[str]) -> str:
    """The message for an argument ``jax.grad`` refuses, or ``""`` when all its ``dtypes`` are accepted."""
    bad = [d for d in dtypes if not differentiable_dtype(d)]
    if not bad:
        return ""
    return (f"{option} {function}() cannot be differentiated with respect to {name!r}: its dtype is {bad[0]}, and "
            "jax.grad refuses inputs that are not floating or complex (integers, booleans, PRNG keys); give a "
            "floating-point argument")


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
    """The example's source with the gradient variants of ``function`` that ``wrt`` (a parsed
    ``:grad:`` value: names, positions and forms) asks for appended (see the module's docstring).

    :param option: the option as the front spells it, for messages.
    :raises ValueError: ``function`` is not a top-level ``def`` of the source, lacks an argument
        ``wrt`` names, or the source already uses a variant's name.
    """
    tree = ast.parse(source)
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    node = defs.get(function)
    if not isinstance(node, ast.FunctionDef):
        raise ValueError(f"{option} {function!r} is not a top-level def of the example")
    scope = scope_of_source(source, function)
    forms = grad_forms(wrt)
    for form in forms:
        name = grad_variant_name(function, form)
        if name in defs or name in scope:
            raise ValueError(f"{option} the example already defines {name}(), the name of {function}'s gradient "
                             f"({form}); rename it")
    positional, keyword_only = _parameters(node)
    names = resolve_wrt(function, positional, keyword_only, grad_wrt(wrt), option)
    call = [*positional]
    if node.args.vararg is not None:
        call.append(f"*{node.args.vararg.arg}")
    call += [f"{k}={k}" for k in keyword_only]
    if node.args.kwarg is not None:
        call.append(f"**{node.args.kwarg.arg}")
    signature = ast.unparse(node.args)
    local = {*positional, *keyword_only, function,
             *(a.arg for a in (node.args.vararg, node.args.kwarg) if a is not None)}
    pool = NamePool({*scope, *local, *(grad_variant_name(function, f) for f in FORMS)})
    mods = module_names(scope, local, pool, lax=False)
    of = pool.take("_of", "_function_of")
    value = pool.take("_value", "_out")
    pullback = pool.take("_pullback", "_vjp")
    grads = [pool.take(f"_grad_{n}", f"_d_{n}") for n in names]
    returned = grads[0] if len(grads) == 1 else "(" + ", ".join(grads) + ")"
    said = ", ".join(wrt)
    lines = [
        "",
        "",
        f"# The gradient of {function} with respect to {', '.join(names)} ({option} {said}): "
        "a vjp with a cotangent of ones,",
        *([f"# {DEFAULT_FORM} for a scalar output."] if forms == (DEFAULT_FORM,) else
          [f"# {grad_variant_name(function, form)}: {form} for a scalar output ({FORMS[form][1]})."
           for form in forms]),
        *mods.imports[:2],
    ]
    for form in forms:
        lines += [
            "",
            "",
            f"def {grad_variant_name(function, form)}({signature}):",
            f"    def {of}({', '.join(names)}):",
            f"        return {function}({', '.join(call)})",
            "",
            f"    {value}, {pullback} = {mods.jax}.vjp({of}, {', '.join(names)})",
            f"    ({', '.join(grads)},) = {pullback}({mods.jax}.tree.map({mods.jnp}.ones_like, {value}))",
            f"    return {value}, {returned}" if form == "jax.value_and_grad" else f"    return {returned}",
        ]
    return source.rstrip("\n") + "\n" + "\n".join(lines) + "\n"
