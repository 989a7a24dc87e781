"""Fresh names for the code we generate for a reader to paste (a chunked rewrite, a gradient variant).

The rule, applied by :func:`sphinx_jaxhlo.chunking.source.chunked_source` and
:func:`sphinx_jaxhlo.gradient.source.add_grad_variant`: every name the generated code
introduces (its function's locals, its inner functions, their parameters and
its lambdas' parameters, the module-level names of its imports and of the
function itself) is fresh against

- the parameters of the function it wraps, and that function's own name;
- the names that function's code refers to (its free variables and globals);
- every name bound in the module it is pasted into (a live function's globals, an
  example's top-level names).

A name the code prefers (``size``, ``k``, ``r``...) that is taken gives way to the
next of its alternatives (``chunk_size``...), then to the first with ``_``
appended.  A module the code imports goes under its usual alias (``jnp`` for
``jax.numpy``, ``lax`` for ``jax.lax``) only where that alias is free or already
names that module; otherwise the code spells it from ``jax`` (``jax.numpy.add``)
and imports nothing more.  A builtin the code calls (``min``, ``divmod``) is
written another way where a parameter or a global shadows it.  Nothing here
imports jax.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import keyword
import types
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["ModuleNames", "NamePool", "Scope", "module_names", "parameter_names", "scope_of_function",
           "scope_of_source"]

#: Each name bound where the code goes, and the module it names (``"jax.numpy"``), or ``None`` for anything else.
Scope = Mapping[str, "str | None"]


def _unwrapped(fn: Any) -> Any:
    while True:
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        else:
            return fn


def scope_of_function(fn: Any) -> dict[str, str | None]:
    """The scope a live function's code sees: its globals (a module by its name), its free
    variables and every global name its code refers to."""
    inner = _unwrapped(fn)
    code = getattr(inner, "__code__", None)
    out: dict[str, str | None] = {}
    if isinstance(code, types.CodeType):
        for name in (*code.co_names, *code.co_freevars):
            out[name] = None
    for name, value in (getattr(inner, "__globals__", None) or {}).items():
        out[name] = value.__name__ if isinstance(value, types.ModuleType) else None
    return out


def _module_level(tree: ast.Module) -> Iterable[ast.AST]:
    """The nodes of a module outside its functions, classes and lambdas (their names and
    decorators included, their bodies not)."""
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo += [*node.decorator_list, *getattr(node, "bases", ())]
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        todo += list(ast.iter_child_nodes(node))


def scope_of_source(source: str, function: str | None = None) -> dict[str, str | None]:
    """The scope of an example's source: the names its module level binds (a name bound only
    by imports of one module maps to that module, ``"jax.numpy"``; any other to ``None``), and,
    with ``function``, every name that top-level function refers to (its globals, ``None``)."""
    tree = ast.parse(source)
    modules: dict[str, set[str | None]] = {}
    for node in _module_level(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            modules.setdefault(node.id, set()).add(None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            modules.setdefault(node.name, set()).add(None)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                modules.setdefault(alias.asname or top, set()).add(alias.name if alias.asname else top)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                module = f"{node.module}.{alias.name}" if node.module and not node.level else None
                modules.setdefault(alias.asname or alias.name, set()).add(module)
    out: dict[str, str | None] = {n: kinds.pop() if len(kinds) == 1 else None for n, kinds in modules.items()}
    wrapped = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == function]
    for node in wrapped[-1:]:  # its free names: read and not bound inside it
        bound: set[str] = set()
        read: set[str] = set()
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name):
                (read if isinstance(inner.ctx, ast.Load) else bound).add(inner.id)
            elif isinstance(inner, ast.arg):
                bound.add(inner.arg)
            elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and inner is not node:
                bound.add(inner.name)
            elif isinstance(inner, (ast.Global, ast.Nonlocal)):
                read.update(inner.names)
        for name in read - bound:
            out.setdefault(name, None)
    return out


def parameter_names(fn: Any) -> list[str]:
    """Every parameter name of a live function (positional, ``*args``, keyword-only, ``**kwargs``)."""
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return []


class NamePool:
    """Hands out names that are fresh against ``taken`` and against one another."""

    def __init__(self, taken: Iterable[str]) -> None:
        self.taken = set(taken) | set(keyword.kwlist) | set(keyword.softkwlist)

    def take(self, *preferred: str) -> str:
        """The first of ``preferred`` that is free, else the first with ``_`` appended until it is."""
        for name in preferred:
            if name not in self.taken:
                self.taken.add(name)
                return name
        name = preferred[0]
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        return name

    def free(self, name: str) -> bool:
        return name not in self.taken


class ModuleNames:
    """How the generated code spells ``jax``, ``jax.numpy`` and ``jax.lax``, and the import lines that
    bind them."""

    def __init__(self, jax: str, jnp: str, lax: str, imports: list[str]) -> None:
        self.jax, self.jnp, self.lax, self.imports = jax, jnp, lax, imports


def module_names(scope: Scope, local: Iterable[str], pool: NamePool, *, numpy: bool = True,
                 lax: bool = True) -> ModuleNames:
    """The modules' names (see the module's rule).

    :param scope: the names where the code goes (:data:`Scope`).
    :param local: names that the generated function's own scope binds (the wrapped function's
        parameters and name), which would hide a module-level alias inside it.
    :param pool: the pool the generated code's other names come from; the aliases are added to it.
    """
    hidden = set(local)

    def usable(alias: str, module: str) -> bool:
        return alias not in hidden and scope.get(alias, module) == module

    imports: list[str] = []
    if usable("jax", "jax"):
        jax_name = "jax"
        imports.append("import jax")
    else:
        jax_name = pool.take("jax_")
        imports.append(f"import jax as {jax_name}")
    pool.taken.add(jax_name)
    jnp_name = f"{jax_name}.numpy"
    if numpy and usable("jnp", "jax.numpy"):
        jnp_name = "jnp"
        imports.append("import jax.numpy as jnp")
        pool.taken.add("jnp")
    lax_name = f"{jax_name}.lax"
    if lax and usable("lax", "jax.lax"):
        lax_name = "lax"
        imports.append("from jax import lax")
        pool.taken.add("lax")
    return ModuleNames(jax_name, jnp_name, lax_name, imports)


def shadowed_builtins(scope: Scope, local: Iterable[str]) -> set[str]:
    """The builtins that a name of ``scope`` or of ``local`` hides."""
    names = set(scope) | set(local)
    return {n for n in names if hasattr(builtins, n)}
