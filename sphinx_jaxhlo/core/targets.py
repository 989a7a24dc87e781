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

import dataclasses
import functools
import hashlib
import importlib.metadata
import importlib.resources
import json
import os
import platform
import re
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sphinx_jaxhlo.core.specs import MeshSpec

__all__ = [
    "DEFAULT_TARGETS",
    "OLDEST_JAX",
    "TARGETS",
    "TESTED_JAX",
    "Target",
    "UnknownTargetError",
    "UnsupportedTargetError",
    "compile_for",
    "compile_options",
    "default_targets",
    "describe_shardings",
    "device_for",
    "devices_for",
    "drop_fields",
    "exclude_own_frames",
    "get_target",
    "lower_for",
    "mesh_context",
    "mesh_for",
    "mesh_problem",
    "package_versions",
    "place_on_mesh",
    "prepare_environment",
    "refuse",
    "unknown_fields",
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
    :param device_count: How many devices the program runs on; more than
        one for a slice or a multi-GPU host (see ``_mesh_targets``).
    :param gpu_topology: For a multi-GPU target, XLA's topology shape
        ``slices x hosts x devices per host``.
    :param chips_per_host: For a multi-chip TPU target, libtpu's chips per
        host bounds.
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
            parts["topology"] = self.gpu_topology or _GPU_TOPOLOGY
        if self.tpu_topology is not None:
            parts["topology"] = self.tpu_topology
            parts["chips_per_host_bounds"] = list(self.chips_per_host or _TPU_CHIPS_PER_HOST)
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
               if _release(version) < _release(OLDEST_JAX)]
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


def _release(version: str) -> tuple[int, ...]:
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
    see :class:`UnsupportedTargetError`).

    :param name: The target's name.
    :param message: What the worker said, naming the versions.
    """
    _REFUSED[name] = message


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


@functools.cache
def _gpu_target_config(file_name: str) -> str:
    """The text of a GPU description file shipped in ``gpu_targets/``."""
    resource = importlib.resources.files("sphinx_jaxhlo").joinpath("gpu_targets", file_name)
    return resource.read_text(encoding="utf-8")


# -- worker side (imports jax lazily) -------------------------------------------


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


_DEVICES: dict[str, Any] = {}


@functools.cache
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

            if _release(plugins.env_version("jax")) < _GPU_DEVICELESS_GEMMS:
                _deviceless_output_memory_kinds()
        elif target.tpu_topology is not None:
            topology = topologies.get_topology_desc(
                target.tpu_topology, "tpu", chips_per_host_bounds=list(target.chips_per_host or _TPU_CHIPS_PER_HOST)
            )
        else:
            raise ValueError(f"target {target.name} has neither a GPU description nor a TPU topology")
        _DEVICES[target.name] = list(topology.devices)
    devices: list[Any] = _DEVICES[target.name]
    return devices


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
    text = _gpu_target_config(target.gpu_target_file)
    dropped: list[tuple[str, str]] = []
    for _attempt in range(64):
        outcome, log = _with_stderr(functools.partial(
            topologies.get_topology_desc, target.name, "cuda", target_config=text,
            topology=target.gpu_topology or _GPU_TOPOLOGY))
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
    if target.platform == "cuda" and _release(plugins.env_version("jaxlib")) < _GPU_DEVICELESS_GEMMS:
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


def mesh_for(target: Target, mesh: MeshSpec | None) -> Any | None:
    """The ``jax.sharding.Mesh`` an example runs on for a target (worker only).

    On a target of several devices: ``mesh`` over its devices, in the order
    ``jax.make_mesh`` gives them (on a TPU, a ring over the chips), or one
    axis named :data:`DEFAULT_MESH_AXIS` when ``mesh`` is ``None``.  On a
    target of one device: the same axis names, each of size 1, so that code
    naming the axes (``with_sharding_constraint``, ``shard_map``, ``psum``)
    traces unchanged; ``None`` when ``mesh`` is ``None``.  Each axis has the
    kind the mesh gives it (:func:`axis_types`): ``Auto`` by default (the
    compiler chooses how intermediates are split), ``Explicit`` (shardings are
    part of the types, ``out_sharding=`` says where a result goes) or ``Manual``.

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
    """The ``jax.sharding.AxisType`` of each axis of ``mesh`` (worker only)."""
    from jax.sharding import AxisType

    by_name = {"auto": AxisType.Auto, "explicit": AxisType.Explicit, "manual": AxisType.Manual}
    return tuple(by_name[kind] for kind in mesh.axis_types)


def mesh_context(mesh: Any) -> Any:
    """``jax.set_mesh(mesh)`` as a context manager; nothing for ``None``."""
    import contextlib

    if mesh is None:
        return contextlib.nullcontext()
    import jax

    return jax.set_mesh(mesh)


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

    from sphinx_jaxhlo.core.specs import DTYPES

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
