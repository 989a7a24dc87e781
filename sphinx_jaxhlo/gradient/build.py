"""The gradient variant of a function object, built in the compile worker from its code.

``analyze(fn, grad=...)`` sends the function pickled and, with it, the code of its
gradient variants (:func:`sphinx_jaxhlo.gradient.source.call_variant`, the generator
that writes a ``:grad:`` variant into an example's source).  The worker runs that very
text with the name it uses bound to the function, and compiles the variant it defines:
a gradient is built one way, whatever front asks for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["CODE_NAME", "variant_function"]

#: The file name the variant's code runs under (its frames give no line of the example).
CODE_NAME = "<gradient variant>"


def variant_function(fn: Callable[..., Any], code: str, binds: str, variant: str) -> Callable[..., Any]:
    """The function ``variant`` that ``code`` defines, with ``binds`` naming ``fn`` in it.

    :raises ValueError: the code defines no such function.
    """
    namespace: dict[str, Any] = {binds: fn, "__name__": "jaxhlo_gradient"}
    exec(compile(code, CODE_NAME, "exec"), namespace)  # our own generated code, never the user's text
    made = namespace.get(variant)
    if not callable(made):
        raise ValueError(f"the gradient's code defines no function {variant}")
    return made
