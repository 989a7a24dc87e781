"""The chunked rewrite's plain-Python half: its parameters, its code, the ``:chunk:`` option.

:func:`chunked_source` writes the rewrite of :func:`sphinx_jaxhlo.chunked` as
plain JAX code (text: nothing here imports jax); :func:`parse_chunk_option`
reads the directive's ``:chunk:`` option and :func:`add_variant` appends the
chunked variant it asks for to an example's source.  The rewrite itself, its
proof and its numerical check are the compile side's
(:mod:`sphinx_jaxhlo.chunking.rewrite`, :mod:`sphinx_jaxhlo.chunking.proof`).
"""

from __future__ import annotations

import dataclasses
import inspect
import keyword
from collections.abc import Callable, Sequence
from typing import Any

from sphinx_jaxhlo.core.hygiene import (
    NamePool,
    Scope,
    module_names,
    parameter_names,
    scope_of_function,
    scope_of_source,
    shadowed_builtins,
)

__all__ = ["COMBINES", "DEFAULT_CHUNK_BUDGET", "ChunkOption", "add_variant", "chunked_source", "function_name",
           "normalize_chunking", "parse_chunk_option", "positional_parameters", "variant_name"]


#: The combines :func:`sphinx_jaxhlo.chunked` knows; ``mean`` is a sum of chunk means weighted by the chunk lengths.
COMBINES = ("sum", "mean", "max", "min")


def normalize_chunking(argnums: int | Sequence[int], axis: int | Sequence[int], size: int,
                       combine: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The chunked arguments and one axis for each, from the parameters of
    :func:`sphinx_jaxhlo.chunked`, checked.

    :raises ValueError: a bad ``argnums``, ``axis``, ``size`` or ``combine``.
    """
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    axes = (axis,) * len(nums) if isinstance(axis, int) else tuple(axis)
    if not nums or any(not isinstance(n, int) or isinstance(n, bool) or n < 0 for n in nums):
        raise ValueError(f"argnums: expected an argument index or a sequence of them, got {argnums!r}")
    if len(set(nums)) != len(nums):
        raise ValueError(f"argnums: {argnums!r} names an argument twice")
    if len(axes) != len(nums) or any(not isinstance(a, int) or isinstance(a, bool) for a in axes):
        raise ValueError(f"axis: expected an int or one int per argnum, got {axis!r}")
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ValueError(f"size: expected a positive int, got {size!r}")
    if combine not in COMBINES:
        raise ValueError(f"combine: expected one of {', '.join(COMBINES)}, got {combine!r}")
    return nums, axes


def function_name(fn: Any) -> str:
    """The name a message gives a function (its type's for a callable object)."""
    return str(getattr(fn, "__name__", None) or type(fn).__name__)


def positional_parameters(fn: Any) -> tuple[list[str], bool]:
    """(the positional parameter names, whether keyword arguments pass through)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return [], True
    names: list[str] = []
    keywords = False
    for param in signature.parameters.values():
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            names.append(param.name)
        elif param.kind is param.VAR_POSITIONAL:
            return [], True
        else:
            keywords = True
    return names, keywords


def chunked_source(fn: Callable[..., Any] | str, argnums: int | Sequence[int] = 0, size: int = 1000,
                   axis: int | Sequence[int] = 0, combine: str = "sum", *, name: str | None = None,
                   arg_names: Sequence[str] | None = None, checkpoint: bool = True,
                   scope: Scope | None = None, keywords: bool | None = None, fn_name: str | None = None) -> str:
    """The plain-JAX code of ``chunked(fn, argnums, size, axis, combine, checkpoint=checkpoint)``:
    a function to paste into code that does not depend on this package.

    It calls ``fn`` by its name, takes the same positional arguments (named as in
    ``fn``'s signature, or ``arg_names``) and computes what :func:`chunked` computes,
    with the same operations (``fn`` may be given as its name alone, with
    ``arg_names``).  Negative axes are not known without shapes: give them as
    non-negative numbers.  Every name the code introduces is fresh against ``fn``'s
    parameters, its name and ``scope`` (the rule of ``sphinx_jaxhlo.core.hygiene``):
    an argument named ``k``, ``size`` or ``total`` keeps its meaning.

    :param name: the name of the function written (default: ``fn``'s name + ``_chunked``,
        made fresh against ``scope``).
    :param scope: the names bound where the code goes, and the modules they name
        (default: a live ``fn``'s globals and free variables; nothing for a name).
    :param fn_name: the name the code calls ``fn`` by (default: its ``__name__``).
    :param keywords: whether keyword arguments pass through to ``fn`` (``**kwargs``; default:
        from ``fn``'s signature, none for a name).
    :raises ValueError: bad parameters, an argument to chunk that the signature lacks, or a
        function with a parameter of its own name (the code could not call it).
    """
    nums, axes = normalize_chunking(argnums, axis, size, combine)
    fname = fn if isinstance(fn, str) else fn_name or function_name(fn)
    if not fname.isidentifier() or keyword.iskeyword(fname):
        raise ValueError(f"chunked_source: {fname!r} is not a name the code can call")
    params, passes = ([], False) if isinstance(fn, str) else positional_parameters(fn)
    keywords = passes if keywords is None else keywords
    every = [] if isinstance(fn, str) else parameter_names(fn)
    if arg_names is not None:
        params = list(arg_names)
    if not params:
        params = [f"arg{i}" for i in range(max(nums) + 1)]
    if max(nums) >= len(params):
        raise ValueError(f"chunked_source: {fname} has no positional argument {max(nums)}")
    if any(a < 0 for a in axes):
        raise ValueError("chunked_source: give the axis as a non-negative number")
    if fname in params or fname in every:
        raise ValueError(f"chunked_source: {fname}() has a parameter named {fname}, so code inside a function "
                         "with its parameters could not call it; rename one")
    if scope is None:
        scope = {} if isinstance(fn, str) else scope_of_function(fn)
    local = {*params, *every, fname}
    pool = NamePool({*scope, *local})
    mods = module_names(scope, local, pool)
    jnp, lax = mods.jnp, mods.lax
    shadowed = shadowed_builtins(scope, local)
    out_name = name or pool.take(f"{fname}_chunked")
    pool.taken.add(out_name)
    kwargs = pool.take("kwargs", "kw") if keywords else ""
    chunk_names = {num: params[num] for num in nums}
    signature = ", ".join([*params, *([f"**{kwargs}"] if keywords else [])])
    first = chunk_names[nums[0]]
    length = f"{first}.shape[{axes[0]}]"
    merge = {"sum": f"{jnp}.add", "mean": f"{jnp}.add", "max": f"{jnp}.maximum", "min": f"{jnp}.minimum"}[combine]
    # the names of the code, in the order a reader meets them
    size_name = pool.take("size", "chunk_size", "chunk_length")
    k = pool.take("k", "n_chunks", "chunk_count")
    r = pool.take("r", "rest", "remainder")
    stacks = {num: pool.take(f"{chunk_names[num]}_chunks", f"{chunk_names[num]}_stack") for num in nums}
    mains = {num: pool.take(f"{chunk_names[num]}_main", f"{chunk_names[num]}_whole")
             for num, a in zip(nums, axes, strict=True) if a != 0}
    part_name = pool.take("part", "chunk_result", "on_chunk")
    chunk_vars = [pool.take(f"{chunk_names[num]}_c", f"{chunk_names[num]}_chunk") for num in nums]
    step_name = pool.take("step", "scan_step", "add_chunk")
    total = pool.take("total", "running", "accumulated")
    chunk = pool.take("chunk", "chunk_args", "xs")
    start = pool.take("start", "identity", "initial")
    s = pool.take("s", "struct", "spec")
    leaf = pool.take("m", "value", "leaf")
    whole = pool.take("t", "result", "summed")
    # the scan's stacked outputs (none): `_` where no name of the function's is `_` (the pool counts it a
    # soft keyword), else fresh: a parameter named `_` keeps its value for the last, shorter chunk
    ignored = "_" if "_" not in {*scope, *local} and "_" not in (out_name, kwargs) else pool.take("unused", "ys")
    pool.taken.add(ignored)
    replaced = dict(zip(nums, chunk_vars, strict=True))
    values = [replaced.get(i, p) for i, p in enumerate(params)] + ([f"**{kwargs}"] if keywords else [])
    call = f"{fname}({', '.join(values)})"

    def part(values: Sequence[str], weight: str) -> str:
        expr = f"{part_name}({', '.join(values)})"
        return f"{mods.jax}.tree.map(lambda {leaf}: {leaf} * {weight}, {expr})" if combine == "mean" else expr

    what = {"sum": "summing", "mean": "averaging", "max": "taking the maximum of", "min": "taking the minimum of"}
    lines = [
        *mods.imports,
        "",
        "",
        f"def {out_name}({signature}):",
        f'    """{fname}, computed {size} elements of axis {axes[0]} of {", ".join(chunk_names.values())} at a '
        f'time,',
        f'    {what[combine]} the per-chunk results (written by sphinx_jaxhlo.chunked_source)."""',
        f"    {size_name} = min({size}, {length})" if "min" not in shadowed else
        f"    {size_name} = {size} if {length} > {size} else {length}",
        f"    {k}, {r} = divmod({length}, {size_name})" if "divmod" not in shadowed else
        f"    {k}, {r} = {length} // {size_name}, {length} % {size_name}",
    ]
    for num, a in zip(nums, axes, strict=True):
        x = chunk_names[num]
        if a == 0:
            lines.append(f"    {stacks[num]} = {x}[:{k} * {size_name}].reshape({k}, {size_name}, *{x}.shape[1:])")
        else:
            lines.append(f"    {mains[num]} = {lax}.slice_in_dim({x}, 0, {k} * {size_name}, axis={a})")
            lines.append(f"    {stacks[num]} = {jnp}.moveaxis({mains[num]}.reshape(*{x}.shape[:{a}], {k}, "
                         f"{size_name}, *{x}.shape[{a + 1}:]), {a}, 0)")
    lines += ["", f"    def {part_name}({', '.join(chunk_vars)}):", f"        return {call}", ""]
    if checkpoint:
        lines += ["    # a gradient keeps each chunk's inputs and computes the chunk again, not every chunk's "
                  "intermediates",
                  f"    {part_name} = {mods.jax}.checkpoint({part_name}, prevent_cse=False)", ""]
    lines += [f"    def {step_name}({total}, {chunk}):",
              f"        {', '.join(chunk_vars)}{',' if len(nums) == 1 else ''} = {chunk}",
              f"        return {mods.jax}.tree.map({merge}, {total}, {part(chunk_vars, size_name)}), None", ""]
    if combine in ("sum", "mean"):
        lines.append(f"    def {start}({s}):")
        lines.append(f"        return {jnp}.zeros({s}.shape, {s}.dtype)")
    else:
        bound, sign, flag = ("max", "", "True") if combine == "min" else ("min", "-", "False")
        lines += [f"    def {start}({s}):  # the identity of {merge}",
                  f"        if {jnp}.issubdtype({s}.dtype, {jnp}.inexact):",
                  f"            return {jnp}.full({s}.shape, {sign}{jnp}.inf, {s}.dtype)",
                  f"        return {jnp}.full({s}.shape, {flag} if {s}.dtype == {jnp}.bool_ else "
                  f"{jnp}.iinfo({s}.dtype).{bound}, {s}.dtype)"]
    lines.append("")
    lines.append(f"    {total} = {mods.jax}.tree.map({start}, {mods.jax}.eval_shape({part_name}, "
                 f"{', '.join(f'{stacks[num]}[0]' for num in nums)}))")
    scanned = ", ".join(stacks[num] for num in nums)
    lines.append(f"    {total}, {ignored} = {lax}.scan({step_name}, {total}, [{scanned}])")
    lines.append(f"    if {r}:")
    tails = []
    for num, a in zip(nums, axes, strict=True):
        x = chunk_names[num]
        tails.append(f"{x}[{k} * {size_name}:]" if a == 0 else
                     f"{lax}.slice_in_dim({x}, {k} * {size_name}, None, axis={a})")
    lines.append(f"        {total} = {mods.jax}.tree.map({merge}, {total}, {part(tails, r)})")
    if combine == "mean":
        lines.append(f"    {total} = {mods.jax}.tree.map(lambda {whole}: {whole} / {length}, {total})")
    lines.append(f"    return {total}")
    return "\n".join(lines) + "\n"


# -- the directive's ``:chunk:`` option -----------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ChunkOption:
    """A parsed ``:chunk:`` value, ``pos=1000`` or ``x=25, y=25, combine=mean, axis=0``.

    :ivar args: the arguments to chunk, by name; ``size``, ``axis``, ``combine`` as for :func:`sphinx_jaxhlo.chunked`.
    """

    args: tuple[str, ...]
    size: int
    axis: int = 0
    combine: str = "sum"


def parse_chunk_option(text: str) -> ChunkOption:
    """``"pos=1000"`` -> ``ChunkOption(("pos",), 1000)``.

    :raises ValueError: a malformed value, with the reason.
    """
    from sphinx_jaxhlo.core.view_options import parse_assignments

    args: list[str] = []
    sizes: set[int] = set()
    axis, combine = 0, "sum"
    for key, value in parse_assignments(text, ":chunk"):
        if key == "combine":
            if value not in COMBINES:
                raise ValueError(f":chunk: combine={value} is not one of {', '.join(COMBINES)}")
            combine = value
            continue
        try:
            number = int(value)
        except ValueError:
            raise ValueError(f":chunk: {key}={value} is not a whole number") from None
        if key == "axis":
            if number < 0:
                raise ValueError(":chunk: give the axis as a non-negative number")
            axis = number
        else:
            if number < 1:
                raise ValueError(f":chunk: {key}={value}: a chunk size is at least 1")
            args.append(key)
            sizes.add(number)
    if not args:
        raise ValueError(":chunk: name the argument to chunk and the chunk size, e.g. pos=1000")
    if len(sizes) > 1:
        raise ValueError(":chunk: arguments chunked together take one chunk size")
    return ChunkOption(tuple(args), sizes.pop(), axis, combine)


def variant_name(function: str) -> str:
    """The name of a function's chunked variant in an example."""
    return f"{function}_chunked"


def add_variant(source: str, function: str, option: ChunkOption) -> tuple[str, dict[str, Any]]:
    """The example's source with the plain-JAX chunked variant of ``function``
    appended, and the parameters the compile worker proves and checks it with.

    :raises ValueError: ``function`` is not a top-level ``def`` of the source, or
        lacks a positional argument the option names.
    """
    import ast

    tree = ast.parse(source)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function]
    if not defs:
        raise ValueError(f":chunk: {function!r} is not a top-level def of the example")
    params = [a.arg for a in [*defs[-1].args.posonlyargs, *defs[-1].args.args]]
    taken = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    if variant_name(function) in scope_of_source(source) or variant_name(function) in taken:
        raise ValueError(f":chunk: the example already names {variant_name(function)}, the name of "
                         f"{function}'s chunked variant; rename it")
    missing = [a for a in option.args if a not in params]
    if missing:
        raise ValueError(f":chunk: {function}() has no positional argument {missing[0]!r} "
                         f"(its arguments: {', '.join(params) or 'none'})")
    argnums = tuple(params.index(a) for a in option.args)
    node = defs[-1].args
    every = [*params, *(a.arg for a in node.kwonlyargs), *(a.arg for a in (node.vararg, node.kwarg) if a)]
    code = chunked_source(function, argnums, option.size, option.axis, option.combine,
                          name=variant_name(function), arg_names=params,
                          scope={**scope_of_source(source, function), **dict.fromkeys(every)},
                          keywords=bool(node.kwonlyargs or node.kwarg))
    given = ", ".join(f"{a}={option.size}" for a in option.args)
    variant = f"\n\n# The chunked variant of {function} (:chunk: {given}), as sphinx_jaxhlo.chunked_source writes it:\n"
    check = {"of": function, "argnums": list(argnums), "size": option.size, "axis": option.axis,
             "combine": option.combine}
    return source.rstrip("\n") + "\n" + variant + code, check


# -- the report's suggestion: its budget -----------------------------------------------------------


#: The default of the ``jaxhlo_chunk_budget`` setting: the compiled temp memory a suggested chunking may take.
DEFAULT_CHUNK_BUDGET = 64 * 2**20
