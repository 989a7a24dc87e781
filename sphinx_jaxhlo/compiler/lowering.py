"""Compiling for a target without its hardware (the compile side: imports jax, lazily).

A target of :mod:`sphinx_jaxhlo.core.targets` becomes devices here: a GPU's
description file is handed to XLA as a ``GpuTargetConfigProto`` (cut to the
fields the installed XLA knows), a TPU's topology string to libtpu; the
example is traced, lowered and compiled for them, over a mesh on a target of
several devices.  :func:`prepare_environment` runs in the build's process, on
the environment of a worker about to start; everything else runs in the
worker.  Importing this module does not import jax.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from sphinx_jaxhlo.compiler.arguments import place_on_mesh
from sphinx_jaxhlo.core.specs import MeshSpec
from sphinx_jaxhlo.core.targets import (
    GPU_TOPOLOGY,
    TPU_CHIPS_PER_HOST,
    Target,
    gpu_target_config,
    mesh_problem,
    release,
)

__all__ = [
    "DEFAULT_MESH_AXIS",
    "DROPPED_FIELDS",
    "UnsupportedTargetError",
    "axis_types",
    "compile_for",
    "compile_options",
    "device_for",
    "devices_for",
    "drop_fields",
    "exclude_own_frames",
    "lower_for",
    "mesh_context",
    "mesh_for",
    "prepare_environment",
    "unknown_fields",
]


# -- the worker's environment ----------------------------------------------------------


def prepare_environment(environ: MutableMapping[str, str]) -> None:
    """Set what a compile worker needs before it imports jax.

    Puts the private folder of the GPU and TPU compilers first on
    ``PYTHONPATH`` (only workers load them, see :mod:`sphinx_jaxhlo.core.compilers`),
    forces the CPU client (``JAX_PLATFORMS=cpu``: no GPU or TPU runtime is
    created, their compilers still load), skips the CUDA library version
    check, lets several processes load libtpu at once, tells libtpu it is a
    lone host so it neither queries a metadata server nor warns about
    hostnames, and points XLA at the pip-installed CUDA compiler tools when
    they are there.

    ``PYTHONPATH`` only reaches a process started with this environment: call
    it on the ``env`` of a subprocess (as :class:`~sphinx_jaxhlo.compiler.client.CompileWorker`
    does), not on ``os.environ`` of a process that is already running.

    :param environ: The environment to change, usually the ``env`` of the
        worker's subprocess.
    """
    from sphinx_jaxhlo.core import compilers as plugins

    folders = [str(folder) for folder in plugins.worker_path()]
    if folders:
        rest = [p for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p and p not in folders]
        environ["PYTHONPATH"] = os.pathsep.join([*folders, *rest])
    environ["JAX_PLATFORMS"] = "cpu"
    environ["JAX_SKIP_CUDA_CONSTRAINTS_CHECK"] = "1"
    environ.setdefault("PYTHONHASHSEED", "0")  # only takes effect in a process started with it
    # libtpu takes a machine-wide lock file unless told that several processes
    # may load it: -j readers, the worker pool and concurrent builds each have workers.
    environ["ALLOW_MULTIPLE_LIBTPU_LOAD"] = "1"
    # libtpu only reads these to set up a real host; the compile-only topology
    # is given in full by device_for().  They keep it from guessing.
    environ.setdefault("TPU_SKIP_MDS_QUERY", "1")
    environ.setdefault("TPU_ACCELERATOR_TYPE", "v5litepod-1")
    environ.setdefault("TPU_WORKER_ID", "0")
    environ.setdefault("TPU_WORKER_HOSTNAMES", "localhost")
    environ.setdefault("GRPC_VERBOSITY", "ERROR")
    xla_flags = environ.get("XLA_FLAGS", "")
    if "--xla_gpu_cuda_data_dir" not in xla_flags:
        nvcc_dir = plugins.cuda_data_dir()
        if nvcc_dir is not None:
            # Prefer the pinned wheel over a system CUDA, whose ptxas may be too
            # old for the newest GPUs.
            environ["XLA_FLAGS"] = f"{xla_flags} --xla_gpu_cuda_data_dir={nvcc_dir}".strip()


# -- devices -----------------------------------------------------------------------------

#: The devices of each target, by name, once this process has built them.
_DEVICES: dict[str, Any] = {}


@functools.cache
def exclude_own_frames() -> None:
    """Keep this package's frames out of the source locations jax records,
    so the HLO metadata points at the example and nothing else."""
    from jax.extend.source_info_util import register_exclusion

    here = Path(__file__).parent.parent
    for folder in {str(here), str(here.resolve())}:
        register_exclusion(folder + os.sep)
    # the worker runs as ``python -m``: runpy's frames sit under the example's
    for name in ("<frozen runpy>", "runpy"):
        register_exclusion(name)


def device_for(target: Target) -> Any | None:
    """The deviceless jax device to compile for.

    The topology is built once per process: libtpu takes a while to describe
    one.

    :param target: The target.
    :return: A compile-only ``jax.Device``, or ``None`` for the CPU (the
        default device).
    """
    if target.platform == "cpu":
        return None
    return devices_for(target)[0]


def devices_for(target: Target) -> list[Any]:
    """All the deviceless jax devices of a GPU or TPU target, in the
    topology's order (one for most targets).

    :param target: A GPU or TPU target.
    """
    if target.name not in _DEVICES:
        from jax.experimental import topologies

        if target.gpu_target_file is not None:
            topology = _gpu_topology(target, topologies)
            from sphinx_jaxhlo.core import compilers as plugins

            if release(plugins.env_version("jax")) < _GPU_DEVICELESS_GEMMS:
                _deviceless_output_memory_kinds()
        elif target.tpu_topology is not None:
            topology = topologies.get_topology_desc(
                target.tpu_topology, "tpu", chips_per_host_bounds=list(target.chips_per_host or TPU_CHIPS_PER_HOST)
            )
        else:
            raise ValueError(f"target {target.name} has neither a GPU description nor a TPU topology")
        _DEVICES[target.name] = list(topology.devices)
    devices: list[Any] = _DEVICES[target.name]
    return devices


# -- a GPU description the installed XLA accepts --------------------------------------------


class UnsupportedTargetError(RuntimeError):
    """The installed XLA cannot take a target's description (worker only)."""


#: What XLA's protobuf text parser logs for a field its proto lacks, e.g.
#: ``Message type "stream_executor.GpuDeviceInfoProto" has no field named "device_vendor".``
_UNKNOWN_FIELD = re.compile(r'Message type "(?P<message>[\w.]+)" has no field named "(?P<field>\w+)"')


def unknown_fields(log: str) -> list[tuple[str, str]]:
    """The ``(message, field)`` pairs that XLA's text-format parser said it
    does not know, in the order it said them, without repeats.

    :param log: What the parser wrote to stderr.
    """
    found = [(m["message"].rpartition(".")[2], m["field"]) for m in _UNKNOWN_FIELD.finditer(log)]
    return list(dict.fromkeys(found))


def drop_fields(text: str, fields: Sequence[tuple[str, str]]) -> str:
    """A ``GpuTargetConfigProto`` text without the given fields.

    Only what the description files hold is understood: one ``name: value``
    or ``name { ... }`` (on one line) per line, messages opened by
    ``name {`` and closed by ``}`` on lines of their own, ``#`` comments.
    A field is dropped where it sits in a message of the given type: at top
    level (``GpuTargetConfigProto``) or inside ``gpu_device_info``
    (``GpuDeviceInfoProto``); a field of a message written on one line
    (``cuda_compute_capability { major: 9 minor: 0 feature_extension: ... }``)
    is cut out of that line.

    :param text: The description.
    :param fields: ``(message type, field)`` pairs, the message type without
        its package (``GpuDeviceInfoProto``).
    """
    by_message: dict[str, set[str]] = {}
    for message, field in fields:
        by_message.setdefault(message, set()).add(field)
    kept = []
    stack = ["GpuTargetConfigProto"]
    for line in text.splitlines():
        code = line.split("#", 1)[0].strip()
        match = re.match(r"(\w+)\s*(:|\{)", code)
        if match is not None and match[1] in by_message.get(stack[-1], set()):
            if code.endswith("{"):
                stack.append("dropped")
            continue
        if stack[-1] == "dropped":
            if code == "}":
                stack.pop()
            elif code.endswith("{"):
                stack.append("dropped")
            continue
        if code.endswith("{") and match is not None:
            stack.append(_MESSAGE_TYPES.get(match[1], match[1]))
        elif code == "}" and len(stack) > 1:
            stack.pop()
        elif match is not None and match[2] == "{":
            inner = _MESSAGE_TYPES.get(match[1], match[1])
            for field in by_message.get(inner, set()):
                line = re.sub(rf"\b{field}\s*:\s*(\"[^\"]*\"|[\w.+-]+)\s*", "", line)
        kept.append(line)
    return "\n".join(kept) + ("\n" if text.endswith("\n") else "")


#: The message type of each message-valued field the description files use.
_MESSAGE_TYPES = {
    "gpu_device_info": "GpuDeviceInfoProto",
    "cuda_compute_capability": "CudaComputeCapabilityProto",
    "rocm_compute_capability": "RocmComputeCapabilityProto",
    "dnn_version_info": "DnnVersionInfoProto",
    "runtime_version": "RuntimeVersionProto",
}

#: Fields of a target's description that the installed XLA did not know and
#: that this worker left out, by target name (for the report's footnote and tests).
DROPPED_FIELDS: dict[str, list[tuple[str, str]]] = {}


def _gpu_topology(target: Target, topologies: Any) -> Any:
    """The topology of a GPU target, from a description the installed XLA accepts.

    The description files are written for the newest XLA.  An older one
    refuses a field its ``GpuTargetConfigProto`` lacks (``device_vendor``,
    ``name``, ``thread_dim_limit_x`` are newer than jaxlib 0.9) and says which
    on stderr; each such field is left out and the description tried again,
    until XLA takes it.  The figures every XLA release reads (SM count, clock,
    memory, bandwidth, caches, limits) are in every generation of the proto.

    :raises UnsupportedTargetError: XLA refuses the description for another
        reason, or without naming a field.
    """
    assert target.gpu_target_file is not None
    text = gpu_target_config(target.gpu_target_file)
    dropped: list[tuple[str, str]] = []
    for _attempt in range(64):
        outcome, log = _with_stderr(functools.partial(
            topologies.get_topology_desc, target.name, "cuda", target_config=text,
            topology=target.gpu_topology or GPU_TOPOLOGY))
        if not isinstance(outcome, BaseException):
            DROPPED_FIELDS[target.name] = dropped
            return outcome
        error = outcome
        fields = [f for f in unknown_fields(log) if f not in dropped]
        if "GpuTargetConfigProto" not in str(error) or not fields:
            raise UnsupportedTargetError(_unsupported_message(target, error, dropped)) from None
        dropped += fields
        text = drop_fields(text, fields)
    raise UnsupportedTargetError(_unsupported_message(target, RuntimeError("too many unknown fields"), dropped))


def _unsupported_message(target: Target, error: BaseException, dropped: Sequence[tuple[str, str]]) -> str:
    from sphinx_jaxhlo.core import compilers as plugins

    versions = ", ".join(f"{dist} {version}" for dist, version in sorted(plugins.state("gpu").versions.items()))
    try:
        jaxlib = plugins.env_version("jaxlib")
    except LookupError:
        jaxlib = "unknown"
    left_out = f" (left out as unknown to it: {', '.join(f for _, f in dropped)})" if dropped else ""
    return (f"the GPU compiler of jaxlib {jaxlib} ({versions or 'no CUDA plugin'}) does not accept the description "
            f"of {target.name} ({target.gpu_target_file}){left_out}: {str(error).strip().splitlines()[0][:300]}")


def _with_stderr(call: Any) -> tuple[Any, str]:
    """Run ``call()`` with file descriptor 2 sent to a temporary file (XLA's
    C++ logging writes there, not to ``sys.stderr``), then write what it
    caught to the real stderr unless it was about unknown fields.

    :return: ``(result, log)``, the result being the exception it raised, if any.
    """
    import sys
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as catch:
        os.dup2(catch.fileno(), 2)
        try:
            try:
                result: Any = call()
            except Exception as exc:
                result = exc
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        catch.seek(0)
        log = catch.read().decode("utf-8", "replace")
    rest = "\n".join(line for line in log.splitlines() if not _UNKNOWN_FIELD.search(line))
    if rest.strip():
        sys.stderr.write(rest + "\n")
    return result, log


# -- lowering and compiling ----------------------------------------------------------------


def lower_for(target: Target, jitted: Any, args: Sequence[Any], kwargs: Mapping[str, Any],
              mesh: Any = None) -> Any:
    """Trace and lower a jitted function for a target, from shapes.

    :param target: The target.
    :param jitted: The result of ``jax.jit(f)``.
    :param args: Positional arguments: pytrees of ``jax.ShapeDtypeStruct``
        and other leaves, passed through.  On a target of one device, a
        sharding they carry is replaced by the target's device; on a target
        of several, by a ``NamedSharding`` on ``mesh`` (see :func:`place_on_mesh`).
    :param kwargs: Keyword arguments, likewise.
    :param mesh: The ``jax.sharding.Mesh`` of :func:`mesh_for`, or ``None``;
        tracing and lowering run with it as the current mesh.
    :return: The ``jax.stages.Lowered``.
    """
    import jax

    exclude_own_frames()
    if target.device_count > 1:
        if mesh is None:
            mesh = mesh_for(target, None)
        args, kwargs = place_on_mesh(mesh, args, kwargs)
        with jax.set_mesh(mesh):
            return jitted.trace(*args, **kwargs).lower(lowering_platforms=(target.platform,))
    device = device_for(target)
    if device is not None:
        sharding = jax.sharding.SingleDeviceSharding(device)

        def place(leaf: Any) -> Any:
            if isinstance(leaf, jax.ShapeDtypeStruct):
                spec: Any = leaf  # ShapeDtypeStruct.update is untyped
                return spec.update(sharding=sharding)
            return leaf

        def is_spec(leaf: Any) -> bool:
            return isinstance(leaf, jax.ShapeDtypeStruct)

        args = jax.tree.map(place, tuple(args), is_leaf=is_spec)
        kwargs = jax.tree.map(place, dict(kwargs), is_leaf=is_spec)
    with mesh_context(mesh):
        return jitted.trace(*args, **kwargs).lower(lowering_platforms=(target.platform,))


def compile_for(
    target: Target,
    jitted: Any,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    compiler_options: Mapping[str, str],
) -> tuple[Any, Any]:
    """Trace, lower and compile a jitted function for a target, from shapes
    (:func:`lower_for`, then ``Lowered.compile``).

    Compile errors (``RESOURCE_EXHAUSTED`` and the like) propagate.

    :param compiler_options: XLA options for ``Lowered.compile``.
    :return: ``(lowered, compiled)``.
    """
    lowered = lower_for(target, jitted, args, kwargs)
    compiled = lowered.compile(compile_options(target, compiler_options) or None)
    return lowered, compiled


#: The first jaxlib whose GPU compiler, without a device, picks a GEMM
#: configuration by itself; older ones stop at every Triton GEMM with
#: "Expect autotune result cache hit for deviceless compilation" unless told
#: not to autotune (``xla_gpu_autotune_level=0``).
_GPU_DEVICELESS_GEMMS = (0, 9)


def compile_options(target: Target, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options for ``Lowered.compile``: the example's, and what the
    installed jaxlib needs to compile for ``target`` without a device
    (``xla_gpu_autotune_level=0`` for a GPU before jaxlib 0.9, unless the
    example sets it).

    :param options: The example's XLA options.
    """
    from sphinx_jaxhlo.core import compilers as plugins

    chosen = dict(options)
    if target.platform == "cuda" and release(plugins.env_version("jaxlib")) < _GPU_DEVICELESS_GEMMS:
        chosen.setdefault("xla_gpu_autotune_level", "0")
    return chosen


class _NoOutputMemoryKinds:
    """An executable that does not say its outputs' memory kinds."""

    def __init__(self, executable: Any) -> None:
        self._executable = executable

    def __getattr__(self, name: str) -> Any:
        return getattr(self._executable, name)

    def get_output_memory_kinds(self) -> Any:
        raise NotImplementedError("a deviceless GPU of this jaxlib has no memory kinds")


@functools.cache
def _deviceless_output_memory_kinds() -> None:
    """Let jax before 0.9 finish a deviceless GPU compile.

    Its compiled executable names the ``device`` memory kind for each
    output, which the topology's devices (no memories at all) refuse:
    ``ValueError: Could not find memory addressable by device``.  jax
    already falls back to no memory kind when an executable cannot say;
    this makes that fallback apply when the device refuses what it said.
    Nothing changes on a newer jax, where the error does not happen.
    """
    try:
        from jax._src.interpreters import pxla
    except ImportError:
        return
    original = getattr(pxla, "get_out_shardings_from_executable", None)
    if original is None:
        return

    def out_shardings(executable: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(executable, *args, **kwargs)
        except ValueError as exc:
            if "memory kind" not in str(exc):
                raise
            return original(_NoOutputMemoryKinds(executable), *args, **kwargs)

    setattr(pxla, "get_out_shardings_from_executable", out_shardings)  # noqa: B010 (typed differently)


# -- meshes: targets of several devices -----------------------------------------

#: The mesh of a target of several devices when the example names none: one axis over all of them.
DEFAULT_MESH_AXIS = "devices"


def mesh_for(target: Target, mesh: MeshSpec | None) -> Any | None:
    """The ``jax.sharding.Mesh`` an example runs on for a target (worker only).

    On a target of several devices: ``mesh`` over its devices, in the order
    ``jax.make_mesh`` gives them (on a TPU, a ring over the chips), or one
    axis named :data:`DEFAULT_MESH_AXIS` when ``mesh`` is ``None``.  On a
    target of one device: the same axis names, each of size 1, so that code
    naming the axes (``with_sharding_constraint``, ``shard_map``, ``psum``)
    traces unchanged; ``None`` when ``mesh`` is ``None``.  Each axis has the
    kind the mesh gives it (:func:`axis_types`): ``Auto`` (the compiler
    chooses how intermediates are split), ``Explicit`` (shardings are part of
    the types, ``out_sharding=`` says where a result goes) or ``Manual``; an
    axis whose kind ``:mesh:`` does not write has ``jax.make_mesh``'s default
    kind, and the target's own ``devices`` axis is ``Auto``.

    :raises ValueError: the mesh does not span the target's devices.
    """
    import jax

    if target.device_count == 1:
        if mesh is None:
            return None
        device = device_for(target) or jax.devices("cpu")[0]
        return jax.make_mesh((1,) * len(mesh.axes), mesh.names, axis_types(mesh), devices=[device])
    problem = mesh_problem(target, mesh)
    if problem is not None:
        raise ValueError(problem)
    spec = mesh if mesh is not None else MeshSpec(((DEFAULT_MESH_AXIS, target.device_count),))
    sizes = tuple(size for _, size in spec.axes)
    return jax.make_mesh(sizes, spec.names, axis_types(spec), devices=devices_for(target))


def axis_types(mesh: MeshSpec) -> tuple[Any, ...]:
    """The ``jax.sharding.AxisType`` of each axis of ``mesh`` (worker only; see
    :func:`sphinx_jaxhlo.compiler.arguments.axis_types`)."""
    from sphinx_jaxhlo.compiler.arguments import axis_types as kinds_of

    return kinds_of(mesh)


def mesh_context(mesh: Any) -> Any:
    """``jax.set_mesh(mesh)`` as a context manager; nothing for ``None``."""
    import contextlib

    if mesh is None:
        return contextlib.nullcontext()
    import jax

    return jax.set_mesh(mesh)
