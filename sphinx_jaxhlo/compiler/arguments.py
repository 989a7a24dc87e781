"""The arguments of a compile as jax values (the compile side: imports jax, lazily).

Argument specs (:mod:`sphinx_jaxhlo.core.specs`) become ``jax.ShapeDtypeStruct``
pytrees, placed on a target's mesh; after the compile, the program's layouts
of its arguments and results are read back for the report.

The kinds of a ``:mesh:``'s axes (:func:`axis_types`): those it writes, and
for the others the kind ``jax.make_mesh`` gives when not told, read from the
installed jax itself (:func:`default_axis_type`: Explicit from jax 0.9, Auto
in 0.8, which warns that the default changes).  When tracing fails over the
kinds of the axes, :func:`axis_kind_hint` says which kinds they had and how
to write others.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sphinx_jaxhlo.core.specs import DEFAULT_AXIS_TYPE, DTYPES, KEY_IMPLS, ArgSpecs, ArraySpec, MeshSpec, SpecTree

__all__ = ["axis_kind_hint", "axis_types", "default_axis_type", "describe_shardings", "place_on_mesh",
           "to_shape_dtype_structs"]


def to_shape_dtype_structs(specs: ArgSpecs, mesh: Any = None) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Build ``jax.ShapeDtypeStruct`` pytrees (imports jax: worker only).

    :param mesh: a ``jax.sharding.Mesh``: each struct gets a ``NamedSharding``
        on it (replicated where the spec has no partition); ``None``: no sharding.
    """
    import jax
    import jax.numpy as jnp

    def sharding(tree: ArraySpec) -> Any:
        if mesh is None:
            return None
        entries = [None if e is None else (e[0] if len(e) == 1 else e) for e in tree.partition or ()]
        return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(*entries))

    def build(tree: SpecTree) -> Any:
        if isinstance(tree, ArraySpec):
            if tree.dtype in KEY_IMPLS:
                impl = KEY_IMPLS[tree.dtype]
                key_dtype = jax.eval_shape(lambda: jax.random.key(0, impl=impl)).dtype
                return jax.ShapeDtypeStruct(tree.shape, key_dtype, sharding=sharding(tree))
            return jax.ShapeDtypeStruct(tree.shape, jnp.dtype(tree.numpy_dtype), sharding=sharding(tree))
        if isinstance(tree, tuple):
            return tuple(build(t) for t in tree)
        if isinstance(tree, list):
            return [build(t) for t in tree]
        return {k: build(v) for k, v in tree.items()}

    return tuple(build(a) for a in specs.args), {k: build(v) for k, v in specs.kwargs}


def place_on_mesh(mesh: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Give every ``jax.ShapeDtypeStruct`` a ``NamedSharding`` on ``mesh``:
    its own partition spec when it has a ``NamedSharding`` (whatever mesh that
    was made on: the axes are matched by name), replicated otherwise."""
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    def place(leaf: Any) -> Any:
        if not isinstance(leaf, jax.ShapeDtypeStruct):
            return leaf
        current = leaf.sharding
        spec = current.spec if isinstance(current, NamedSharding) else PartitionSpec()
        struct: Any = leaf  # ShapeDtypeStruct.update is untyped
        return struct.update(sharding=NamedSharding(mesh, spec))

    def is_spec(leaf: Any) -> bool:
        return isinstance(leaf, jax.ShapeDtypeStruct)

    return (tuple(jax.tree.map(place, tuple(args), is_leaf=is_spec)),
            dict(jax.tree.map(place, dict(kwargs), is_leaf=is_spec)))


def describe_shardings(compiled: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[
        list[dict[str, str]], list[dict[str, str]]]:
    """How the compiled program lays out its arguments and results
    (worker only): for each array, where it is (``a``, ``[0]['w']``), its
    global shape, its ``PartitionSpec`` (``P('data', None)``), and the shape
    of one device's piece.

    :param compiled: the ``jax.stages.Compiled``.
    :param args: the arguments it was compiled for (for their paths and shapes).
    :return: ``(inputs, outputs)``, lists of dicts with ``path``, ``shape``,
        ``spec`` and ``device_shape``.
    """
    import jax
    from jax.sharding import NamedSharding

    names = {numpy_name: short for short, (numpy_name, _size) in reversed(list(DTYPES.items()))}

    def shape_text(dtype: Any, shape: Sequence[int]) -> str:
        name = str(getattr(dtype, "name", dtype))
        return f"{names.get(name, name)}[{','.join(map(str, shape))}]"

    def row(name: str, struct: Any, sharding: Any) -> dict[str, str]:
        shape = tuple(getattr(struct, "shape", ()))
        if isinstance(sharding, NamedSharding):
            spec = "replicated" if sharding.is_fully_replicated else str(sharding.spec)
        else:
            spec = "one device"
        try:
            piece = tuple(sharding.shard_shape(shape))
        except Exception:
            piece = shape
        dtype = getattr(struct, "dtype", "")
        return {"path": name, "shape": shape_text(dtype, shape), "spec": spec,
                "device_shape": shape_text(dtype, piece)}

    def is_struct(leaf: Any) -> bool:
        return isinstance(leaf, jax.ShapeDtypeStruct)

    def arrays(tree: Any) -> list[tuple[Any, Any]]:
        flat = jax.tree_util.tree_flatten_with_path(tree, is_leaf=is_struct)[0]
        return [(path, leaf) for path, leaf in flat if is_struct(leaf)]

    try:
        in_args, in_kwargs = compiled.input_shardings
        inputs: list[dict[str, str]] = []
        for i, arg in enumerate(args):
            shardings = jax.tree_util.tree_leaves(in_args[i]) if i < len(in_args) else []
            found = arrays(arg)
            if len(found) == len(shardings):
                inputs += [row(f"argument {i + 1}{jax.tree_util.keystr(path)}", struct, sharding)
                           for (path, struct), sharding in zip(found, shardings, strict=True)]
        for name, value in kwargs.items():
            if name in in_kwargs:
                shardings = jax.tree_util.tree_leaves(in_kwargs[name])
                found = arrays(value)
                if len(found) == len(shardings):
                    inputs += [row(f"{name}{jax.tree_util.keystr(path)}", struct, sharding)
                               for (path, struct), sharding in zip(found, shardings, strict=True)]
        out_structs = arrays(compiled.out_info)
        out_shardings = jax.tree_util.tree_leaves(compiled.output_shardings)
        outputs = [row(f"result{jax.tree_util.keystr(path)}", struct, sharding)
                   for (path, struct), sharding in zip(out_structs, out_shardings, strict=False)]
    except Exception:  # an older jax: the layouts stay out of the report
        return [], []
    return inputs, outputs


# -- the kinds of a mesh's axes --------------------------------------------------------

@functools.cache
def default_axis_type() -> Any:
    """The ``jax.sharding.AxisType`` that ``jax.make_mesh`` gives an axis when
    not told (worker only), as the installed jax makes it."""
    import warnings

    import jax

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # jax 0.8: "the default axis_types will change"
        mesh = jax.make_mesh((1,), ("x",), devices=jax.devices("cpu")[:1])
    return mesh.axis_types[0]


def axis_types(mesh: MeshSpec) -> tuple[Any, ...]:
    """The ``jax.sharding.AxisType`` of each axis of ``mesh`` (worker only): its
    written kind, else :func:`default_axis_type`."""
    from jax.sharding import AxisType

    by_name = {"auto": AxisType.Auto, "explicit": AxisType.Explicit, "manual": AxisType.Manual}
    return tuple(default_axis_type() if kind == DEFAULT_AXIS_TYPE else by_name[kind] for kind in mesh.axis_types)


def kind_name(kind: Any) -> str:
    """``AxisType.Explicit`` -> ``explicit``."""
    return str(getattr(kind, "name", kind)).lower()


#: What jax says when a sharding does not suit the kind of a mesh axis (Auto axes in an
#: ``out_sharding=``, a contraction split over Explicit axes with no ``out_sharding=``...).
_AXIS_KIND_WORDS = re.compile(r"\b(?:Auto|Explicit|Manual)\b|AxisType|axis_types|out_sharding")


def axis_kind_hint(message: str, spec: MeshSpec | None, mesh: Any) -> str:
    """What to add to a tracing error that is about the kinds of the mesh's
    axes: the kind each axis had, where it came from, and how to write it;
    ``""`` for another error, or without a mesh.

    :param spec: the ``:mesh:`` as written (``None``: none was, the target's own axis).
    :param mesh: the ``jax.sharding.Mesh`` the example ran on.
    """
    if mesh is None or not _AXIS_KIND_WORDS.search(message):
        return ""
    kinds = [kind_name(k) for k in getattr(mesh, "axis_types", ())]
    names = [str(n) for n in getattr(mesh, "axis_names", ())]
    sizes = dict(spec.axes) if spec is not None else {str(n): int(s) for n, s in getattr(mesh, "shape", {}).items()}
    if not kinds or len(kinds) != len(names):
        return ""
    had = ", ".join(f"{n}={sizes.get(n, '?')} {k}" for n, k in zip(names, kinds, strict=True))
    if spec is None:
        origin = "the target's one axis when there is no :mesh:"
        spec = MeshSpec(tuple((n, int(sizes.get(n, 1))) for n in names))
    else:
        defaulted = [n for n, k in zip(spec.names, spec.axis_types, strict=True) if k == DEFAULT_AXIS_TYPE]
        import jax

        origin = (f"{', '.join(defaulted)} by default: jax.make_mesh's default in jax {jax.__version__}" if defaulted
                  else "as :mesh: writes them")
    if re.search(r"\bAuto\b", message):  # jax wants Explicit axes
        other = "explicit"
    elif re.search(r"\bExplicit\b", message) or all(k == "explicit" for k in kinds):
        other = "auto"
    else:
        other = "explicit"
    example = ", ".join(f"{n}={s} {other}" for n, s in spec.axes)
    return (f"; the mesh's axes were {had} ({origin}); write each axis's kind after its size (auto, explicit or "
            f"manual): :mesh: {example}")
