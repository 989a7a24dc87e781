"""The API's keyword arguments that need more than the directive's parser: each checked, and
refused in the API's own words (``grad=``, ``bisect=``)."""

from __future__ import annotations

from typing import Any

from sphinx_jaxhlo.core.bisection import parse_budget
from sphinx_jaxhlo.core.example import PYTHON, OptionProblem

__all__ = ["checked_budget", "checked_grad"]


def checked_grad(value: Any) -> Any:
    """``grad=`` as the API takes it: a name or position, or a list of them (the forms ``jax.grad``
    and ``jax.value_and_grad`` among them); anything else, a bool or a float say, refused in the
    API's words, the value echoed as given.

    :raises OptionProblem: anything else.
    """
    def item(v: Any) -> bool:
        return isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))

    if value is None or item(value):
        return value
    if isinstance(value, (list, tuple)) and value and all(item(v) for v in value):
        return value
    raise OptionProblem("grad", f"{PYTHON('grad')} {value!r} is not an argument name or position, nor a list of "
                                  "them: give grad='hkl', grad=1 or grad=['pos', 'hkl']")


def checked_budget(value: Any) -> int:
    """``bisect=`` checked (:func:`sphinx_jaxhlo.core.bisection.parse_budget`)."""
    try:
        return parse_budget(value, PYTHON("bisect"))
    except ValueError as exc:
        raise OptionProblem("option", str(exc)) from None
