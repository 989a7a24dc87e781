"""A function call to compile, sent from the caller's process to a compile worker.

:func:`sphinx_jaxhlo.analyze` compiles exactly what ``jax.jit(fn)`` compiles
for the given shapes: the function object itself is pickled (with
``cloudpickle``, which sends a notebook cell's function, a lambda or a closure
by value, and a module's function by reference), and the worker jits and
compiles it for each target.  Nothing here imports jax in the caller: the
arguments travel as they were given (spec strings, ``ShapeDtypeStruct``\\ s,
the shape and dtype of arrays, Python values for static arguments) and the
worker turns them into ``jax.ShapeDtypeStruct``\\ s (:func:`abstract_arguments`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sphinx_jaxhlo.core.specs import (
    AXIS_TYPES,
    ArgSpecs,
    ArraySpec,
    MeshSpec,
    Partition,
    SpecError,
    SpecTree,
    container_leaves,
    parse_args,
    sharding_problems,
)

__all__ = ["AbstractArray", "Call", "abstract_arguments", "describe_arguments", "dumps",
           "make_call", "modules_sent_by_value", "sharding_problems_of"]

#: jax config values sent with a call when the caller changed them: they
#: change what a function traces to.
_CONFIG_TYPES = (bool, int, float, str, type(None))


@dataclass(frozen=True)
class AbstractArray:
    """The shape and dtype of an array argument (an array's values are never sent).

    ``dtype`` is the array's own dtype object (numpy, ml_dtypes or a jax key
    type); ``had_sharding`` says the caller gave a sharding.  A
    ``NamedSharding`` is kept as its partition spec and the sizes of its
    mesh's axes (the worker lays them over the target's devices, axes
    matched by name); other shardings are dropped.
    """

    shape: tuple[int, ...]
    dtype: Any
    had_sharding: bool = False
    partition: Partition | None = None
    #: ``(name, size)`` of the axes of the mesh the caller's sharding was made on.
    mesh_axes: tuple[tuple[str, int], ...] | None = None
    #: The kind of each of those axes (``auto``, ``explicit``, ``manual``); empty: all ``auto``.
    mesh_types: tuple[str, ...] = ()


@dataclass
class Call:
    """What the worker needs to compile ``jax.jit(fn)(*args, **kwargs)`` from shapes."""

    fn: Callable[..., Any]
    #: Leaves: spec strings, :class:`ArraySpec`, :class:`AbstractArray`, or
    #: Python values passed through (static arguments of a jitted function).
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    #: Static keyword arguments: name -> Python value.
    static: dict[str, Any] = field(default_factory=dict)
    #: ``jax.jit`` options: those of a jitted ``fn`` (unwrapped here, since a
    #: jitted function does not pickle) and the donations asked for.
    jit_options: dict[str, Any] = field(default_factory=dict)
    #: jax settings the caller changed (``jax_enable_x64``, the default matmul precision...).
    config: dict[str, Any] = field(default_factory=dict)
    #: The mesh to lay the arguments over: the one given, or the one their shardings were made on.
    mesh: MeshSpec | None = None
    #: For a gradient variant (``analyze(..., grad=...)``): its code
    #: (:func:`sphinx_jaxhlo.gradient.source.call_variant`), the name the code gives ``fn``, and
    #: the variant to compile (:func:`sphinx_jaxhlo.gradient.build.variant_function`); ``""``: ``fn`` itself.
    gradient: str = ""
    gradient_binds: str = ""
    gradient_variant: str = ""


def _is_array_like(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, (str, bytes, type))


def _abstract(value: Any) -> Any:
    """Arrays and structs -> :class:`AbstractArray`; spec strings checked and
    parsed; containers walked (tuple, list, dict and namedtuples; other pytree
    classes are walked in the worker, by jax)."""
    if isinstance(value, str):
        specs = parse_args(value)
        if len(specs.args) != 1 or specs.kwargs:
            raise ValueError(f"{value!r}: give one spec per argument, such as 'f32[100000,3]'")
        return specs.args[0]
    if _is_array_like(value):
        try:
            shape = tuple(int(d) for d in value.shape)
        except TypeError:
            raise TypeError(f"shape {value.shape!r} is not a tuple of integers") from None
        sharding = getattr(value, "sharding", None) if type(value).__name__ == "ShapeDtypeStruct" else None
        partition, mesh_axes = _named_sharding(sharding)
        kinds = _mesh_types(sharding) if mesh_axes is not None else ()
        return AbstractArray(shape, value.dtype, sharding is not None, partition, mesh_axes,
                             kinds if len(kinds) == len(mesh_axes or ()) else ())
    if type(value) is tuple or type(value) is list:
        return type(value)(_abstract(v) for v in value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
        return type(value)(*(_abstract(v) for v in value))
    if type(value) is dict:
        return {k: _abstract(v) for k, v in value.items()}
    return value


def _named_sharding(sharding: Any) -> tuple[Partition | None, tuple[tuple[str, int], ...] | None]:
    """The partition spec and mesh axes of a ``jax.sharding.NamedSharding``
    (read from its attributes: nothing is imported); ``(None, None)`` for
    anything else."""
    spec = getattr(sharding, "spec", None)
    shape = getattr(getattr(sharding, "mesh", None), "shape", None)
    if spec is None or isinstance(spec, str) or shape is None or not hasattr(shape, "items"):
        return None, None
    try:
        items = list(spec)  # a PartitionSpec iterates over its entries (it is no longer a tuple)
    except TypeError:
        return None, None
    entries: list[tuple[str, ...] | None] = []
    for entry in items:
        if entry is None:
            entries.append(None)
        elif isinstance(entry, str):
            entries.append((entry,))
        elif isinstance(entry, tuple) and all(isinstance(a, str) for a in entry):
            entries.append(tuple(entry) or None)
        else:  # PartitionSpec.UNCONSTRAINED and the like: not a layout to reproduce
            return None, None
    return tuple(entries), tuple((str(name), int(size)) for name, size in shape.items())


def _mesh_types(sharding: Any) -> tuple[str, ...]:
    """The kinds of the axes of a ``NamedSharding``'s mesh (``AxisType.Explicit`` ->
    ``"explicit"``), read from its attributes."""
    kinds = getattr(getattr(sharding, "mesh", None), "axis_types", None) or ()
    try:
        return tuple(str(getattr(kind, "name", kind)).lower() for kind in kinds)
    except TypeError:
        return ()


def call_mesh(args: Sequence[Any], kwargs: Mapping[str, Any], given: MeshSpec | None) -> MeshSpec | None:
    """The mesh of a call: ``given``, else the mesh the arguments' shardings
    were made on (they must agree).

    :raises ValueError: the arguments' shardings come from meshes with
        different axes, or name axes ``given`` does not have in the same sizes.
    """
    found: dict[tuple[tuple[str, int], ...], tuple[str, ...]] = {}
    for x in container_leaves((tuple(args), dict(kwargs))):
        if isinstance(x, AbstractArray) and x.mesh_axes is not None:
            found.setdefault(x.mesh_axes, x.mesh_types)
    meshes = [m for m in found if m]
    if given is not None:
        for axes in meshes:
            sizes = dict(given.axes)
            wrong = [f"{n}={s}" for n, s in axes if n in sizes and sizes[n] != s]
            if wrong:
                raise ValueError(f"the arguments' shardings were made on a mesh with {', '.join(wrong)}; "
                                 f"the mesh given is {given}")
        return given
    if len(meshes) > 1:
        texts = " and ".join(MeshSpec(m).__str__() for m in meshes)
        raise ValueError(f"the arguments' shardings were made on different meshes ({texts}); pass mesh=...")
    if not meshes:
        return None
    kinds = found[meshes[0]]
    return MeshSpec(meshes[0], kinds if all(k in AXIS_TYPES for k in kinds) else ())


def jit_options_of(fn: Any) -> tuple[Callable[..., Any], dict[str, Any]]:
    """``(function, jax.jit options)`` of a ``jax.jit`` wrapper, read from its
    attributes without importing jax; ``(fn, {})`` for anything else."""
    info = getattr(fn, "_jit_info", None)
    inner = getattr(fn, "_fun", None)
    if info is None or inner is None:
        return fn, {}
    options: dict[str, Any] = {}
    for attr in ("static_argnums", "static_argnames", "donate_argnums", "donate_argnames", "keep_unused", "inline"):
        value = getattr(info, attr, None)
        if value is not None:
            options[attr] = value
    compiler_options = dict(getattr(info, "compiler_options_kvs", ()) or ())
    if compiler_options:
        options["compiler_options"] = compiler_options
    return inner, options


def _changed_config() -> dict[str, Any]:
    """The jax settings of this process that differ from their defaults (if
    this process imported jax at all)."""
    jax = sys.modules.get("jax")
    holders = getattr(getattr(jax, "config", None), "_value_holders", None)
    if not holders:
        return {}
    out: dict[str, Any] = {}
    for name, holder in holders.items():
        value, default = getattr(holder, "value", None), getattr(holder, "default", None)
        if value != default and isinstance(value, _CONFIG_TYPES) and name.startswith("jax_"):
            out[name] = value
    return out


def make_call(fn: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any], static: Mapping[str, Any],
              donate_argnums: Sequence[int] = (), donate_argnames: Sequence[str] = (),
              mesh: MeshSpec | None = None) -> Call:
    r"""Build the call to send (in the caller's process; no jax import).

    :param mesh: the mesh to lay the arguments over; default: the one their
        ``NamedSharding``\ s were made on.
    :raises ValueError: a malformed spec string, shardings that do not fit
        the mesh (see :func:`sharding_problems_of`).
    :raises TypeError: an array-like whose shape is not integers.
    """
    inner, options = jit_options_of(fn)
    if donate_argnums:
        options["donate_argnums"] = tuple(dict.fromkeys((*options.get("donate_argnums", ()), *donate_argnums)))
    if donate_argnames:
        options["donate_argnames"] = tuple(dict.fromkeys((*options.get("donate_argnames", ()), *donate_argnames)))
    try:
        abstract_args = tuple(_abstract(a) for a in args)
        abstract_kwargs = {k: _abstract(v) for k, v in kwargs.items()}
    except SpecError as exc:
        raise ValueError(str(exc)) from None
    call = Call(fn=inner, args=abstract_args, kwargs=abstract_kwargs, static=dict(static), jit_options=options,
                config=_changed_config(), mesh=call_mesh(abstract_args, abstract_kwargs, mesh))
    problems = sharding_problems_of(call)
    if problems:
        raise ValueError(problems[0])
    return call


def _dtype_name(dtype: Any) -> str:
    from sphinx_jaxhlo.core.specs import DTYPES

    names = {numpy_name: spec for spec, (numpy_name, _size) in reversed(list(DTYPES.items()))}
    name = str(getattr(dtype, "name", dtype))
    return names.get(name, name)


def sharding_problems_of(call: Call) -> list[str]:
    """:func:`sphinx_jaxhlo.core.specs.sharding_problems` of a call's arguments on its mesh."""
    def spec_tree(x: Any) -> SpecTree:
        if isinstance(x, ArraySpec):
            return x
        if isinstance(x, AbstractArray):
            return ArraySpec(_dtype_name(x.dtype), x.shape, x.partition)
        if isinstance(x, (tuple, list)):
            return tuple(spec_tree(v) for v in x)
        if isinstance(x, dict):
            return {str(k): spec_tree(v) for k, v in x.items()}
        return ()

    specs = ArgSpecs(tuple(spec_tree(a) for a in call.args),
                     tuple((k, spec_tree(v)) for k, v in call.kwargs.items()))
    return sharding_problems(specs, call.mesh)


def dumps(call: Call) -> bytes:
    """Pickle a call with cloudpickle, keeping each code object's file name.

    (cloudpickle replaces the file name of the code it sends by value with
    ``<dynamic-code>``; jax records source locations from it, and the report
    maps lines back through it.  The worker runs the same interpreter, so a
    code object can travel as ``marshal`` writes it.)
    """
    import io
    import marshal
    import pickle
    import types

    import cloudpickle

    class Pickler(cloudpickle.Pickler):
        def reducer_override(self, obj: Any) -> Any:
            if isinstance(obj, types.CodeType):
                return marshal.loads, (marshal.dumps(obj),)
            kind = type(obj)
            if kind.__module__ == "jax._src.custom_derivatives" and kind.__name__ in ("custom_jvp", "custom_vjp"):
                # their default reduction calls __new__ without the function
                return _rebuild_custom_derivative, (kind, obj.fun, dict(vars(obj)))
            return super().reducer_override(obj)

    buffer = io.BytesIO()
    Pickler(buffer, protocol=pickle.DEFAULT_PROTOCOL).dump(call)
    return buffer.getvalue()


def _rebuild_custom_derivative(kind: Any, fun: Callable[..., Any], state: dict[str, Any]) -> Any:
    """A ``jax.custom_jvp`` or ``jax.custom_vjp`` sent by value: made again
    around its function, then given its rules and settings back."""
    obj = kind(fun)
    vars(obj).update(state)
    return obj


def modules_sent_by_value(fn: Any, paths: Sequence[str]) -> list[Any]:
    """The modules of ``fn`` (and of what it wraps) that the worker could not
    import from ``paths``: a module loaded from a file outside the path (by
    ``importlib`` from a location, or after ``sys.path`` changed).  Their
    functions must be pickled by value rather than by reference."""
    from importlib.machinery import PathFinder

    out: list[Any] = []
    seen: set[str] = set()
    current: Any = fn
    for _ in range(32):
        name = getattr(current, "__module__", None)
        if isinstance(name, str) and name not in seen and name != "__main__":
            seen.add(name)
            module = sys.modules.get(name)
            top = name.partition(".")[0]
            if module is not None and top not in sys.builtin_module_names and \
                    PathFinder.find_spec(top, list(paths)) is None:
                out.append(module)
        inner = getattr(current, "func", None) or getattr(current, "__wrapped__", None) or \
            getattr(current, "_fun", None)
        if inner is None or inner is current:
            break
        current = inner
    return out


def abstract_arguments(call: Call, mesh: Any = None) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call's arguments as ``jax.ShapeDtypeStruct`` pytrees (worker only: imports jax).

    :param mesh: a ``jax.sharding.Mesh``: every struct gets a
        ``NamedSharding`` on it, from its partition spec (replicated when it
        has none); ``None``: no sharding.
    """
    import jax

    from sphinx_jaxhlo.compiler.arguments import to_shape_dtype_structs

    def sharding(partition: Partition | None) -> Any:
        if mesh is None:
            return None
        entries = [None if e is None else (e[0] if len(e) == 1 else e) for e in partition or ()]
        return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(*entries))

    def is_leaf(x: Any) -> bool:
        return isinstance(x, (str, ArraySpec, AbstractArray))

    def leaf(x: Any) -> Any:
        if isinstance(x, str):
            x = _abstract(x)
        if isinstance(x, ArraySpec):
            structs, _ = to_shape_dtype_structs(ArgSpecs((x,)), mesh)
            return structs[0]
        if isinstance(x, AbstractArray):
            return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding(x.partition))
        if _is_array_like(x):
            return jax.ShapeDtypeStruct(tuple(int(d) for d in x.shape), x.dtype)
        return x

    args = jax.tree.map(leaf, call.args, is_leaf=is_leaf)
    kwargs = jax.tree.map(leaf, call.kwargs, is_leaf=is_leaf)
    return tuple(args), dict(kwargs)


def describe_arguments(call: Call) -> tuple[str, bool]:
    """``("f32[100000,3], f32[50000,3], scale=f32[]", sharded)``: the argument
    shapes as specs for titles (with their partition specs), and whether any
    input sharding was given."""
    from sphinx_jaxhlo.core.specs import DTYPES, format_partition, format_tree

    names = {numpy_name: spec for spec, (numpy_name, _size) in reversed(list(DTYPES.items()))}
    dropped = False

    def text(x: Any) -> str:
        nonlocal dropped
        if isinstance(x, ArraySpec):
            return format_tree(x)
        if isinstance(x, AbstractArray):
            dropped = dropped or x.had_sharding
            dtype = str(getattr(x.dtype, "name", x.dtype))
            shape = f"{names.get(dtype, dtype)}[{','.join(map(str, x.shape))}]"
            return shape if x.partition is None else f"{shape} @ {format_partition(x.partition)}"
        if isinstance(x, tuple) and not hasattr(x, "_fields"):
            inner = ", ".join(text(v) for v in x)
            return f"({inner},)" if len(x) == 1 else f"({inner})"
        if isinstance(x, list):
            return "[" + ", ".join(text(v) for v in x) + "]"
        if isinstance(x, dict):
            return "{" + ", ".join(f"{k}: {text(v)}" for k, v in x.items()) + "}"
        if isinstance(x, tuple):  # namedtuple
            return f"{type(x).__name__}(" + ", ".join(text(v) for v in x) + ")"
        return repr(x) if isinstance(x, (int, float, bool, type(None))) else type(x).__name__

    parts = [text(a) for a in call.args] + [f"{k}={text(v)}" for k, v in call.kwargs.items()]
    return ", ".join(parts), dropped
