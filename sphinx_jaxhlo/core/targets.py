"""Compile targets: the host CPU, NVIDIA GPU models and TPU generations.

A :class:`Target` says what an example is compiled for and how, without the
hardware: GPUs are described to XLA by a ``stream_executor.GpuTargetConfigProto``
in ``sphinx_jaxhlo/gpu_targets/<model>.txtpb``, TPUs by a libtpu topology
string.  The targets and where their figures come from are listed in
``docs/reference/targets.md``.

Everything a target is, is one entry of :data:`TARGETS`: its platform, its
description or topology, its memory, the compilers it needs, how long a compile
for it may take (:attr:`Target.timeout`) and is expected to take
(:attr:`Target.prior_seconds`).  The small constructors (``_gpu``, ``_tpu``...)
give each kind of target its defaults; ``docs/development.md`` ("Adding a
target") shows a new entry.

This module never imports jax, so Sphinx can list and check targets cheaply;
the compile side (:mod:`sphinx_jaxhlo.compiler.lowering`) builds devices and
compiles for a target in the worker.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import importlib.resources
import json
import platform
import re
from dataclasses import dataclass
from typing import Any

from sphinx_jaxhlo.core.specs import MeshSpec

__all__ = [
    "DEFAULT_TARGETS",
    "GPU_TOPOLOGY",
    "OLDEST_JAX",
    "TARGETS",
    "TESTED_JAX",
    "TPU_CHIPS_PER_HOST",
    "Target",
    "UnknownTargetError",
    "compiler_packages",
    "default_targets",
    "get_target",
    "gpu_target_config",
    "mesh_problem",
    "package_versions",
    "refuse",
    "release",
]

_GiB = 1 << 30

#: Topology shape handed to XLA for a single deviceless GPU.
GPU_TOPOLOGY = "1x1x1"

#: One host of one chip.  libtpu's default is 2x2x1 chips per host, which
#: refuses a ``v5e:1x1`` topology ("not divisible by ... chips_per_host_bounds").
TPU_CHIPS_PER_HOST = (1, 1, 1)


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
    :param compiler: The compilers it needs beyond plain jax: a kit of
        :data:`sphinx_jaxhlo.core.compilers.KITS`, as ``python -m sphinx_jaxhlo
        compilers install`` names them (``"gpu"`` or ``"tpu"``); ``None`` when
        plain ``jax`` is enough.  Whether the target is available, what its
        "missing" message says and which versions its snapshots record follow
        from it.
    :param memory_bytes: Memory of one device, for "does not fit" messages.
    :param gpu_target_file: For a GPU, the file in ``sphinx_jaxhlo/gpu_targets/``
        that describes it.
    :param tpu_topology: For a TPU, the libtpu topology string.
    :param device_count: How many devices the program runs on; more than
        one for a slice or a multi-GPU host (see ``_MESH_TARGETS``).
    :param gpu_topology: For a multi-GPU target, XLA's topology shape
        ``slices x hosts x devices per host``.
    :param chips_per_host: For a multi-chip TPU target, libtpu's chips per
        host bounds.
    :param timeout: Seconds a compile for it may take by default (the first
        limit; ``jaxhlo_timeout`` and ``:timeout:`` override it, see
        :class:`~sphinx_jaxhlo.compiler.client.Limits`).
    :param prior_seconds: Seconds a compile for it is expected to take before
        any is measured (the build's first ordering of its compiles).

    The defaults of the last two are for an entry made without the kind's
    constructor; ``_cpu``, ``_gpu`` and ``_tpu`` give their own.
    """

    name: str
    platform: str
    description: str
    compiler: str | None
    memory_bytes: int | None
    gpu_target_file: str | None = None
    tpu_topology: str | None = None
    device_count: int = 1
    gpu_topology: str | None = None
    chips_per_host: tuple[int, int, int] | None = None
    timeout: float = 300.0
    prior_seconds: float = 1.0

    @property
    def title(self) -> str:
        """The short name pages use: ``CPU``, ``H100``, ``TPU v5e``, ``8 x H100``, ``TPU v5e-8``."""
        kind, _, model = self.name.partition(":")
        if kind == "cpu":
            return "CPU"
        if kind == "gpu":
            if self.device_count > 1:
                return f"{self.device_count} x {model.partition('x')[0].upper()}"
            return model.upper()
        return f"TPU {model}"

    @property
    def packages(self) -> tuple[str, ...]:
        """The distributions that compile for it beside jax and jaxlib (those
        of its compilers, :attr:`compiler`): ``("libtpu",)`` for a TPU."""
        from sphinx_jaxhlo.core.compilers import KITS

        return KITS[self.compiler].distributions if self.compiler is not None else ()

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
            parts["gpu_target_config"] = gpu_target_config(self.gpu_target_file)
            parts["topology"] = self.gpu_topology or GPU_TOPOLOGY
        if self.tpu_topology is not None:
            parts["topology"] = self.tpu_topology
            parts["chips_per_host_bounds"] = list(self.chips_per_host or TPU_CHIPS_PER_HOST)
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
        from sphinx_jaxhlo.core import compilers as plugins

        try:
            jax_version = plugins.env_version("jax")
            jaxlib_version = plugins.env_version("jaxlib")
        except LookupError:
            return f"target {self.name} needs jax: pip install sphinx-jaxhlo (it installs jax)"
        old = [f"{dist} {version}" for dist, version in (("jax", jax_version), ("jaxlib", jaxlib_version))
               if release(version) < release(OLDEST_JAX)]
        if old:
            return (f"target {self.name} is not supported with {' and '.join(old)}: sphinx-jaxhlo compiles with "
                    f"jax and jaxlib {OLDEST_JAX} and newer (tested: {', '.join(TESTED_JAX)}); "
                    f"pip install 'jax>={OLDEST_JAX}' 'jaxlib>={OLDEST_JAX}'")
        if self.name in _REFUSED:
            return f"target {self.name} is not supported here: {_REFUSED[self.name]}"
        if self.compiler is None:
            return None
        problem = plugins.state(self.compiler).problem
        return None if problem is None else f"target {self.name} {problem}"


#: The oldest jax and jaxlib the targets are known to compile with (``pyproject.toml`` says the same).
OLDEST_JAX = "0.8.0"

#: The releases ``nox -s compat`` checks: the newest patch of each minor.
TESTED_JAX = ("0.8.3", "0.9.2", "0.10.2")

#: Targets whose compiler refused them in this process, with what it said
#: (see :func:`refuse`).
_REFUSED: dict[str, str] = {}


def release(version: str) -> tuple[int, ...]:
    """``"0.9.2"`` -> ``(0, 9, 2)``; a pre-release or local suffix is ignored."""
    parts = []
    for piece in version.split("."):
        digits = re.match(r"\d+", piece)
        if digits is None:
            break
        parts.append(int(digits[0]))
    return tuple(parts)


def refuse(name: str, message: str) -> None:
    """Mark a target as unusable with the installed compilers for the rest
    of this process: its examples show it as missing, and the build says
    ``message`` once (a worker found that XLA does not accept the target,
    see :class:`sphinx_jaxhlo.compiler.lowering.UnsupportedTargetError`).

    :param name: The target's name.
    :param message: What the worker said, naming the versions.
    """
    _REFUSED[name] = message


# -- the kinds of target: what each entry gets unless it says otherwise ----------------------
# The compile limits are the ``jaxhlo_timeout`` setting's documented defaults
# (core/settings.py); the expected seconds order a cold build's compiles.


def _cpu() -> Target:
    """The host CPU: plain jax compiles for it."""
    return Target(
        name="cpu",
        platform="cpu",
        description=f"host CPU ({platform.machine() or 'unknown architecture'})",
        compiler=None,
        memory_bytes=None,
        timeout=60.0,
        prior_seconds=0.3,
    )


def _gpu(model: str, description: str, memory_bytes: int, *, timeout: float = 90.0,
         prior_seconds: float = 0.6) -> Target:
    """An NVIDIA GPU described by ``gpu_targets/<model>.txtpb``, compiled for by the CUDA plugin."""
    return Target(
        name=f"gpu:{model}",
        platform="cuda",
        description=f"{description} (deviceless)",
        compiler="gpu",
        memory_bytes=memory_bytes,
        gpu_target_file=f"{model}.txtpb",
        timeout=timeout,
        prior_seconds=prior_seconds,
    )


def _tpu(generation: str, topology: str, description: str, memory_bytes: int, *, timeout: float = 300.0,
         prior_seconds: float = 8.0) -> Target:
    """A TPU given to libtpu as a topology string (TPU compiles of loops and
    their gradients take minutes on a loaded machine)."""
    return Target(
        name=f"tpu:{generation}",
        platform="tpu",
        description=f"{description} (deviceless)",
        compiler="tpu",
        memory_bytes=memory_bytes,
        tpu_topology=topology,
        timeout=timeout,
        prior_seconds=prior_seconds,
    )


# -- targets of several devices ----------------------------------------------


def _gpu_host(model: str, count: int, description: str, memory_bytes: int) -> Target:
    """``count`` GPUs of one model in one host (one process, as on an HGX node)."""
    return dataclasses.replace(
        _gpu(model, f"{count} x {description}, one host", memory_bytes),
        name=f"gpu:{model}x{count}",
        device_count=count,
        gpu_topology=f"1x1x{count}",
    )


def _tpu_slice(name: str, topology: str, chips_per_host: tuple[int, int, int], count: int, description: str,
               memory_bytes: int) -> Target:
    """A TPU slice of ``count`` devices served by one host."""
    return dataclasses.replace(
        _tpu(name, topology, description, memory_bytes),
        device_count=count,
        chips_per_host=chips_per_host,
    )


#: Targets of several devices: an example compiled for one of them runs as
#: one SPMD program per device over a mesh (the ``:mesh:`` option).
#: ``memory_bytes`` is per device.
_MESH_TARGETS = (
    _gpu_host("h100", 8, "NVIDIA H100 SXM5 80 GB", 80 * _GiB),
    _tpu_slice("v5e-4", "v5e:2x2", (2, 2, 1), 4, "Google TPU v5e, 2x2 slice of 4 chips, 16 GiB HBM each",
               16 * _GiB),
    _tpu_slice("v5e-8", "v5e:2x4", (2, 4, 1), 8, "Google TPU v5e, 2x4 slice of 8 chips, 16 GiB HBM each",
               16 * _GiB),
    _tpu_slice("v5p-8", "v5p:2x2x1", (2, 2, 1), 4,
               "Google TPU v5p, 2x2x1 slice of 4 chips (8 TensorCores, megacore), 95 GiB HBM each", 95 * _GiB),
)


#: All known targets, in display order.  GPU memory sizes repeat
#: ``device_memory_size`` of the description files (a test checks that).
TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        _cpu(),
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
        *_MESH_TARGETS,
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
    :mod:`sphinx_jaxhlo.core.compilers`).  Read from package metadata; jax is not
    imported.

    :return: Distribution name to version, for those of jax, jaxlib,
        jax-cuda12-plugin, jax-cuda12-pjrt and libtpu that are there.
    """
    from sphinx_jaxhlo.core import compilers as plugins

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


def compiler_packages(name: str) -> tuple[str, ...]:
    """The distributions that compile for the target ``name`` beside jax and
    jaxlib (:attr:`Target.packages`); none for a name not in :data:`TARGETS`
    (a snapshot or report of a target this release lacks)."""
    target = TARGETS.get(name)
    return target.packages if target is not None else ()


@functools.cache
def gpu_target_config(file_name: str) -> str:
    """The text of a GPU description file shipped in ``gpu_targets/``."""
    resource = importlib.resources.files("sphinx_jaxhlo").joinpath("gpu_targets", file_name)
    return resource.read_text(encoding="utf-8")


def mesh_problem(target: Target, mesh: MeshSpec | None) -> str | None:
    """Why ``mesh`` cannot be laid over ``target`` (no jax), or ``None``.

    On a target of one device any mesh works: its axes have size 1 there.
    On a target of several, the mesh must span all of its devices.

    :param mesh: the example's mesh, ``None`` when it names none.
    """
    if mesh is None or target.device_count == 1 or mesh.size == target.device_count:
        return None
    return (f"the mesh {mesh} spans {mesh.size} device{'s' if mesh.size != 1 else ''}, but {target.name} has "
            f"{target.device_count}: give a mesh whose sizes multiply to {target.device_count}")
