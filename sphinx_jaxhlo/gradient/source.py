"""The code of a gradient variant: the one way a gradient is built, for every front.

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
function's (:mod:`sphinx_jaxhlo.core.hygiene`).  A comment above it says what it
calls (``jax.vjp``, by the alias the code imports jax under) and what each variant
equals for a float scalar output, in lines of at most 88 columns.

:func:`add_grad_variant` appends it to an example's source (the directive, the
command line, ``analyze_source``): the page shows the text that was compiled.
:func:`call_variant` writes it for a function object (``analyze(fn, grad=...)``),
with the parameters of the call; the compile worker runs that very text
(:mod:`sphinx_jaxhlo.gradient.build`).  Nothing here imports jax.
"""

from __future__ import annotations

import ast
import keyword
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from sphinx_jaxhlo.core.hygiene import NamePool, Scope, module_names, scope_of_source
from sphinx_jaxhlo.gradient.option import FORMS, grad_forms, grad_variant_name, grad_wrt, resolve_wrt

__all__ = ["Parameters", "add_grad_variant", "call_variant", "variant_text"]


@dataclass(frozen=True)
class Parameters:
    """How the function to differentiate is called, and how its variant is declared."""

    positional: tuple[str, ...]
    keyword_only: tuple[str, ...] = ()
    vararg: str | None = None
    kwarg: str | None = None
    #: The variant's parameter list as written (defaults included); default: the names alone.
    signature: str = ""

    def declared(self) -> str:
        if self.signature:
            return self.signature
        parts = [*self.positional, *([f"*{self.vararg}"] if self.vararg else (["*"] if self.keyword_only else [])),
                 *self.keyword_only, *([f"**{self.kwarg}"] if self.kwarg else [])]
        return ", ".join(parts)

    def call(self) -> str:
        """The arguments of the call of the function inside the variant."""
        parts = [*self.positional, *([f"*{self.vararg}"] if self.vararg else []),
                 *(f"{k}={k}" for k in self.keyword_only), *([f"**{self.kwarg}"] if self.kwarg else [])]
        return ", ".join(parts)

    def names(self) -> set[str]:
        return {*self.positional, *self.keyword_only, *(a for a in (self.vararg, self.kwarg) if a is not None)}


def _comment(function: str, names: Sequence[str], items: Sequence[str], jax: str, option: str) -> list[str]:
    """The comment above the variants: what the code calls (``jax.vjp``), and what each variant equals,
    named by the alias the code imports jax under, in lines of at most 88 columns."""
    forms = grad_forms(items)
    variants = [grad_variant_name(function, form) for form in forms]
    returns = [f"what {jax}.{form.rpartition('.')[2]} returns" for form in forms]
    equals = (f"it returns {returns[0]}" if len(forms) == 1 else
              ", ".join(f"{name} returns {what}" for name, what in zip(variants, returns, strict=True)))
    text = (f"{' and '.join(variants)} ({option} {', '.join(items)}): the gradient of {function} with respect to "
            f"{', '.join(names)}, by {jax}.vjp with a cotangent of ones. For a float scalar output, {equals}; "
            "for any other float output, the gradient is that of the sum of its elements.")
    return textwrap.wrap(text, 86, initial_indent="# ", subsequent_indent="# ", break_long_words=False,
                         break_on_hyphens=False)


def variant_text(function: str, params: Parameters, names: Sequence[str], items: Sequence[str], scope: Scope,
                 option: str = ":grad:") -> str:
    """The code of the gradient variants of ``function`` that ``items`` (a parsed ``:grad:`` value)
    asks for: a comment, the imports it needs and one ``def`` per form (see the module's rules).

    :param names: the arguments to differentiate with respect to, resolved
        (:func:`~sphinx_jaxhlo.gradient.option.resolve_wrt`).
    :param scope: the names where the code goes (:data:`~sphinx_jaxhlo.core.hygiene.Scope`).
    """
    forms = grad_forms(items)
    local = {*params.names(), function}
    pool = NamePool({*scope, *local, *(grad_variant_name(function, f) for f in FORMS)})
    mods = module_names(scope, local, pool, lax=False)
    of = pool.take("_of", "_function_of")
    value = pool.take("_value", "_out")
    pullback = pool.take("_pullback", "_vjp")
    grads = [pool.take(f"_grad_{n}", f"_d_{n}") for n in names]
    returned = grads[0] if len(grads) == 1 else "(" + ", ".join(grads) + ")"
    lines = [*_comment(function, names, items, mods.jax, option), *mods.imports[:2]]
    for form in forms:
        lines += [
            "",
            "",
            f"def {grad_variant_name(function, form)}({params.declared()}):",
            f"    def {of}({', '.join(names)}):",
            f"        return {function}({params.call()})",
            "",
            f"    {value}, {pullback} = {mods.jax}.vjp({of}, {', '.join(names)})",
            f"    ({', '.join(grads)},) = {pullback}({mods.jax}.tree.map({mods.jnp}.ones_like, {value}))",
            f"    return {value}, {returned}" if form == "jax.value_and_grad" else f"    return {returned}",
        ]
    return "\n".join(lines) + "\n"


def add_grad_variant(source: str, function: str, wrt: Sequence[str], option: str = ":grad:") -> str:
    """The example's source with the gradient variants of ``function`` that ``wrt`` (a parsed
    ``:grad:`` value: names, positions and forms) asks for appended (see the module's rules).

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
    for form in grad_forms(wrt):
        name = grad_variant_name(function, form)
        if name in defs or name in scope:
            raise ValueError(f"{option} the example already defines {name}(), the name of {function}'s gradient "
                             f"({form}); rename it")
    a = node.args
    params = Parameters(tuple(p.arg for p in (*a.posonlyargs, *a.args)), tuple(p.arg for p in a.kwonlyargs),
                        a.vararg.arg if a.vararg is not None else None, a.kwarg.arg if a.kwarg is not None else None,
                        ast.unparse(a))
    names = resolve_wrt(function, params.positional, params.keyword_only, grad_wrt(wrt), option)
    return source.rstrip("\n") + "\n\n\n" + variant_text(function, params, names, wrt, scope, option)


def call_variant(function: str, positional: Sequence[str], keywords: Sequence[str], names: Sequence[str],
                 items: Sequence[str], option: str) -> tuple[str, str, list[str]]:
    """The code of the gradient variants of a function object for one call (``analyze(fn, grad=...)``):
    the variant takes the call's arguments, ``positional`` by position and ``keywords`` by name.

    :param function: the function's name (a lambda's ``<lambda>`` is written ``function``).
    :param names: the arguments to differentiate with respect to, resolved.
    :return: the code, the name it gives the function (the worker binds it to the function object)
        and the names of its variants, one per form.
    """
    called = function if function.isidentifier() and not keyword.iskeyword(function) else "function"
    pool = NamePool({called, *(grad_variant_name(called, f) for f in FORMS)})
    # a parameter the signature does not name (a *args function) gets a fresh one
    given = [p if p.isidentifier() and pool.free(p) else pool.take(f"_arg{i}") for i, p in enumerate(positional)]
    for p in given:
        pool.taken.add(p)
    renamed = dict(zip(positional, given, strict=True))
    params = Parameters(tuple(given), tuple(keywords))
    text = variant_text(called, params, [renamed.get(n, n) for n in names], items, {called: None}, option)
    return text, called, [grad_variant_name(called, form) for form in grad_forms(items)]
