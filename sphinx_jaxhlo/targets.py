"""Compile targets: the host CPU, NVIDIA GPU models and TPU generations.

A :class:`Target` says what an example is compiled for and how, without the
hardware: GPUs are described to XLA by a ``stream_executor.GpuTargetConfigProto``
in ``sphinx_jaxhlo/gpu_targets/<model>.txtpb``, TPUs by a libtpu topology
string.  The targets and where their figures come from are listed in
``docs/reference/targets.md``.

The first half of this module (the table of targets, availability, versions)
never imports jax, so Sphinx can list and check targets cheaply.  The worker
half (:func:`prepare_environment`, :func:`device_for`, :func:`compile_for`)
runs only in a compile worker process and imports jax lazily.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.resources
import json
import os
import platform
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_TARGETS",
    "TARGETS",
    "Target",
    "UnknownTargetError",
    "compile_for",
    "default_targets",
    "device_for",
    "exclude_own_frames",
    "get_target",
    "lower_for",
    "package_versions",
    "prepare_environment",
]

_GiB = 1 << 30

#: Topology shape handed to XLA for a single deviceless GPU.
_GPU_TOPOLOGY = "1x1x1"

#: One host of one chip.  libtpu's default is 2x2x1 chips per host, which
#: refuses a ``v5e:1x1`` topology ("not divisible by ... chips_per_host_bounds").
_TPU_CHIPS_PER_HOST = (1, 1, 1)


class UnknownTargetError(ValueError):
    """A target name that is not in :data:`TARGETS`."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"unknown target {name!r}; known targets: {', '.join(TARGETS)}")


@dataclass(frozen=True)
class Target:
    """One thing an example can be compiled for.

    :param name: Stable public name, e.g. ``"gpu:h100"``.
    :param platform: The jax lowering platform: ``"cpu"``, ``"cuda"`` or ``"tpu"``.
    :param description: Human name, e.g. ``"NVIDIA H100 SXM5 80 GB (deviceless)"``.
    :param compiler: The compilers it needs beyond plain jax, as
        ``python -m sphinx_jaxhlo compilers install`` names them: ``"gpu"`` or
        ``"tpu"``; ``None`` when plain ``jax`` is enough.
    :param memory_bytes: Memory of one device, for "does not fit" messages.
    :param gpu_target_file: For a GPU, the file in ``sphinx_jaxhlo/gpu_targets/``
        that describes it.
    :param tpu_topology: For a TPU, the libtpu topology string.
    """

    name: str
    platform: str
    description: str
    compiler: str | None
    memory_bytes: int | None
    gpu_target_file: str | None = None
    tpu_topology: str | None = None

    @property
    def title(self) -> str:
        """The short name pages use: ``CPU``, ``H100``, ``TPU v5e``."""
        kind, _, model = self.name.partition(":")
        if kind == "cpu":
            return "CPU"
        if kind == "gpu":
            return model.upper()
        return f"TPU {model}"

    def fingerprint(self) -> str:
        """A digest of everything about the target that determines compile
        results: name, platform, the full GPU description text or the TPU
        topology, the host architecture for the CPU.

        The versions of the compilers are not included; see
        :func:`package_versions`.

        :return: A SHA-256 hex digest.
        """
        parts: dict[str, Any] = {"name": self.name, "platform": self.platform}
        if self.platform == "cpu":
            parts["machine"] = platform.machine()
        if self.gpu_target_file is not None:
            parts["gpu_target_config"] = _gpu_target_config(self.gpu_target_file)
            parts["topology"] = _GPU_TOPOLOGY
        if self.tpu_topology is not None:
            parts["topology"] = self.tpu_topology
            parts["chips_per_host_bounds"] = list(_TPU_CHIPS_PER_HOST)
        text = json.dumps(parts, sort_keys=True)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def available(self) -> bool:
        """Whether the compiler for this target is installed (checked without
        importing jax).

        :return: ``True`` when a compile for this target can be attempted.
        """
        return self._missing() is None

    def missing_message(self) -> str:
        """Say what to install to compile for this target.

        :return: A one-line message naming the missing piece and the
            command that installs it; for an available target, a message saying so.
        """
        missing = self._missing()
        if missing is None:
            return f"target {self.name} is available"
        return missing

    def _missing(self) -> str | None:
        from . import plugins

        try:
            plugins.env_version("jax")
            plugins.env_version("jaxlib")
        except LookupError:
            return f"target {self.name} needs jax: pip install sphinx-jaxhlo (it installs jax)"
        if self.compiler is None:
            return None
        problem = plugins.state(self.compiler).problem
        return None if problem is None else f"target {self.name} {problem}"


def _gpu(model: str, description: str, memory_bytes: int) -> Target:
    return Target(
        name=f"gpu:{model}",
        platform="cuda",
        description=f"{description} (deviceless)",
        compiler="gpu",
        memory_bytes=memory_bytes,
        gpu_target_file=f"{model}.txtpb",
    )


def _tpu(generation: str, topology: str, description: str, memory_bytes: int) -> Target:
    return Target(
        name=f"tpu:{generation}",
        platform="tpu",
        description=f"{description} (deviceless)",
        compiler="tpu",
        memory_bytes=memory_bytes,
        tpu_topology=topology,
    )


#: All known targets, in display order.  GPU memory sizes repeat
#: ``device_memory_size`` of the description files (a test checks that).
TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target(
            name="cpu",
            platform="cpu",
            description=f"host CPU ({platform.machine() or 'unknown architecture'})",
            compiler=None,
            memory_bytes=None,
        ),
        _gpu("h100", "NVIDIA H100 SXM5 80 GB", 80 * _GiB),
        _gpu("a100", "NVIDIA A100 SXM4 80 GB", 80 * _GiB),
        _gpu("h200", "NVIDIA H200 SXM 141 GB", 141 * _GiB),
        _gpu("b200", "NVIDIA B200 180 GB", 180 * _GiB),
        _gpu("l4", "NVIDIA L4 24 GB", 24 * _GiB),
        _tpu("v5e", "v5e:1x1", "Google TPU v5e, one chip, 16 GiB HBM", 16 * _GiB),
        _tpu("v6e", "v6e:1x1", "Google TPU v6e (Trillium), one chip, 32 GiB HBM", 32 * _GiB),
        _tpu("v5p", "v5p:1x1x1", "Google TPU v5p, one chip (megacore), 95 GiB HBM", 95 * _GiB),
        # libtpu describes a v4 chip as two devices, one per TensorCore, each
        # with half the chip's 32 GiB: this is not the megacore device a real
        # v4 gives jax.
        _tpu("v4", "v4:1x1x1", "Google TPU v4, one TensorCore, 16 GiB HBM", 16 * _GiB),
    )
}

#: Targets compiled for when a document does not say.
DEFAULT_TARGETS: tuple[str, ...] = ("cpu", "gpu:h100", "tpu:v5e")


def get_target(name: str) -> Target:
    """Look up a target by name.

    :param name: A name from :data:`TARGETS`; case and surrounding whitespace
        do not matter.
    :raises UnknownTargetError: when there is no such target.
    """
    key = name.strip().lower()
    try:
        return TARGETS[key]
    except KeyError:
        raise UnknownTargetError(name) from None


def default_targets() -> list[str]:
    """The :data:`DEFAULT_TARGETS` whose compilers are installed.

    :return: Target names, ``["cpu"]`` when nothing else is installed.
    """
    names = [name for name in DEFAULT_TARGETS if TARGETS[name].available()]
    return names or ["cpu"]


def package_versions() -> dict[str, str]:
    """Versions of the packages that decide compile results, as a compile
    worker will load them: jax and jaxlib of this environment, the GPU and
    TPU compilers from the private folder (or the environment, see
    :mod:`sphinx_jaxhlo.plugins`).  Read from package metadata; jax is not
    imported.

    :return: Distribution name to version, for those of jax, jaxlib,
        jax-cuda12-plugin, jax-cuda12-pjrt and libtpu that are there.
    """
    from . import plugins

    versions = {}
    for dist in ("jax", "jaxlib"):
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    if "jax" in versions:
        for kit in plugins.KITS:
            versions.update(plugins.state(kit).versions)
    return versions


@functools.cache
def _gpu_target_config(file_name: str) -> str:
    """The text of a GPU description file shipped in ``gpu_targets/``."""
    resource = importlib.resources.files("sphinx_jaxhlo").joinpath("gpu_targets", file_name)
    return resource.read_text(encoding="utf-8")


# -- worker side (imports jax lazily) -------------------------------------------


def prepare_environment(environ: MutableMapping[str, str]) -> None:
    """Set what a compile worker needs before it imports jax.

    Puts the private folder of the GPU and TPU compilers first on
    ``PYTHONPATH`` (only workers load them, see :mod:`sphinx_jaxhlo.plugins`),
    forces the CPU client (``JAX_PLATFORMS=cpu``: no GPU or TPU runtime is
    created, their compilers still load), skips the CUDA library version
    check, lets several processes load libtpu at once, tells libtpu it is a
    lone host so it neither queries a metadata server nor warns about
    hostnames, and points XLA at the pip-installed CUDA compiler tools when
    they are there.

    ``PYTHONPATH`` only reaches a process started with this environment: call
    it on the ``env`` of a subprocess (as :class:`~sphinx_jaxhlo.compiler.CompileWorker`
    does), not on ``os.environ`` of a process that is already running.

    :param environ: The environment to change, usually the ``env`` of the
        worker's subprocess.
    """
    from . import plugins

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


_DEVICES: dict[str, Any] = {}


@functools.cache
@functools.cache
def exclude_own_frames() -> None:
    """Keep this package's frames out of the source locations jax records,
    so the HLO metadata points at the example and nothing else."""
    from jax.extend.source_info_util import register_exclusion

    here = Path(__file__).parent
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
    if target.name not in _DEVICES:
        from jax.experimental import topologies

        if target.gpu_target_file is not None:
            topology = topologies.get_topology_desc(
                target.name,
                "cuda",
                target_config=_gpu_target_config(target.gpu_target_file),
                topology=_GPU_TOPOLOGY,
            )
        elif target.tpu_topology is not None:
            topology = topologies.get_topology_desc(
                target.tpu_topology, "tpu", chips_per_host_bounds=list(_TPU_CHIPS_PER_HOST)
            )
        else:
            raise ValueError(f"target {target.name} has neither a GPU description nor a TPU topology")
        _DEVICES[target.name] = topology.devices[0]
    return _DEVICES[target.name]


def lower_for(target: Target, jitted: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
    """Trace and lower a jitted function for a target, from shapes.

    :param target: The target.
    :param jitted: The result of ``jax.jit(f)``.
    :param args: Positional arguments: pytrees of ``jax.ShapeDtypeStruct``
        (a sharding they carry is replaced by the target's device: every
        target is one device) and other leaves, passed through.
    :param kwargs: Keyword arguments, likewise.
    :return: The ``jax.stages.Lowered``.
    """
    import jax

    exclude_own_frames()
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
    compiled = lowered.compile(dict(compiler_options) or None)
    return lowered, compiled
