"""The ``:grad:`` option: which arguments, which forms, and what ``jax.grad`` refuses.

``:grad: hkl`` (argument names, or positions: ``:grad: 1``, ``:grad: pos, hkl``)
adds, beside each function an example compiles, the gradient of that function
with respect to those arguments, as a variant (:mod:`sphinx_jaxhlo.gradient`).
Two forms, named in the option by the JAX function each stands for:

- ``jax.value_and_grad`` (the default): ``<function>_grad`` returns the value and
  the gradient;
- ``jax.grad`` (``:grad: hkl, jax.grad``): ``<function>_grad_only`` returns the
  gradient alone, so XLA may drop what only the value needs: its figures can be
  lower (``:grad: hkl, jax.grad, jax.value_and_grad`` compiles both).

An argument that ``jax.grad`` refuses (an integer, a boolean, a PRNG key: its
dtype is not a floating or complex one) is refused here, before anything
compiles, with the same reason.  Plain data and rules: no jax.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["DEFAULT_FORM", "FORMS", "differentiable_dtype", "grad_forms", "grad_variant_name", "grad_variant_names",
           "grad_wrt", "parse_grad_option", "resolve_wrt", "undifferentiable"]

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
