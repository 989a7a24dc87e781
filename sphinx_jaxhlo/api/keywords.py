"""The API's keyword arguments that need more than the directive's parser: each checked, and
refused in the API's own words (``grad=``, ``bisect=``, ``mesh=``, ``donate_argnums=``), and the
view options and ``chunk`` a front was given, for the directive's parsers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sphinx_jaxhlo.core.bisection import parse_budget
from sphinx_jaxhlo.core.example import PYTHON, OptionProblem
from sphinx_jaxhlo.core.specs import MeshSpec, SpecError, parse_mesh

__all__ = ["checked_budget", "checked_grad", "given_view", "int_tuple", "mesh_spec_of", "str_tuple"]


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


def given_view(**options: Any) -> dict[str, Any]:
    """The view options and ``chunk`` a front was given, as the directive's option names: those
    not given (``None``) left out, so that each keeps its default."""
    return {name: value for name, value in options.items() if value is not None}


def mesh_spec_of(mesh: Any) -> MeshSpec | None:
    """A mesh as the API takes it (``"data=4, model=2"``, ``{"data": 4}``, a
    ``jax.sharding.Mesh`` or ``AbstractMesh``, a :class:`MeshSpec`) as a
    :class:`~sphinx_jaxhlo.core.specs.MeshSpec`.

    :raises ValueError: a malformed mesh.
    :raises TypeError: something that is not a mesh.
    """
    if mesh is None or isinstance(mesh, MeshSpec):
        return mesh
    if isinstance(mesh, str):
        try:
            return parse_mesh(mesh)
        except SpecError as exc:
            raise ValueError(f"mesh: {exc}") from None
    shape = getattr(mesh, "shape", None) if not isinstance(mesh, Mapping) else mesh
    if shape is None or not hasattr(shape, "items"):
        raise TypeError(f"mesh must be text such as 'data=4, model=2', a dict or a jax Mesh, "
                        f"not {type(mesh).__name__}")
    kinds = tuple(str(getattr(kind, "name", kind)).lower() for kind in getattr(mesh, "axis_types", None) or ())
    if kinds and len(kinds) != len(shape):
        kinds = ()
    # a jax mesh's kinds as it has them; a dict's, those jax.make_mesh would give
    text = ", ".join(f"{name}={size}" + (f" {kind}" if kind else "")
                     for (name, size), kind in zip(shape.items(), kinds or ("",) * len(shape), strict=True))
    return mesh_spec_of(text)


def int_tuple(value: int | Sequence[int] | None, what: str) -> tuple[int, ...]:
    if value is None:
        return ()
    items = (value,) if isinstance(value, int) else tuple(value)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        raise TypeError(f"{what} must be an int or a sequence of ints")
    return items


def str_tuple(value: str | Sequence[str] | None, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = (value,) if isinstance(value, str) else tuple(value)
    if not all(isinstance(v, str) and v.isidentifier() for v in items):
        raise TypeError(f"{what} must be a name or a sequence of names")
    return items
