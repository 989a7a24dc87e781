"""An example's function as compiled, in one line: ``power_sum(x: f32[1024,256], n=7)``.

Read from the example's source without running it.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from sphinx_jaxhlo.core.request import default_function

__all__ = ["default_function", "signature"]


def _parameters(source: str, function: str) -> list[str] | None:
    """The parameter names of a top-level ``def function`` in ``source``, without
    running it; ``None`` when there is no such ``def``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            a = node.args
            return [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    return None


def signature(function: str, args: Sequence[str], kwargs: Sequence[tuple[str, str]],
              static: Sequence[tuple[str, str]], source: str = "") -> str:
    """``power_sum(x: f32[1024,256], n=7)``: the function as compiled, its
    arguments named when the source defines it at the top level.

    :param args: the positional argument specs, as text.
    :param kwargs: ``(name, spec)`` of keyword specs.
    :param static: ``(name, value)`` of static arguments, as written.
    """
    names = _parameters(source, function) if source else None
    parts: list[tuple[int, str]] = []
    order = {n: i for i, n in enumerate(names or [])}
    for i, spec in enumerate(args):
        name = names[i] if names is not None and i < len(names) else ""
        parts.append((i, f"{name}: {spec}" if name else spec))
    base = len(args)
    for k, (name, spec) in enumerate(kwargs):
        parts.append((order.get(name, base + 1000 + k), f"{name}: {spec}"))
    for k, (name, value) in enumerate(static):
        parts.append((order.get(name, base + 2000 + k), f"{name}={value}"))
    parts.sort(key=lambda p: p[0])
    return f"{function}({', '.join(text for _, text in parts)})"
