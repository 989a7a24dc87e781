"""The GPU and TPU compilers: where they live, whether they fit this jax, how to install them.

XLA's GPU and TPU compilers come as jax plugins: ``jax-cuda12-plugin`` with
``jax-cuda12-pjrt`` (plus ``nvidia-cuda-nvcc-cu12``, whose ``ptxas`` and
``libdevice`` finish every GPU compile), and ``libtpu``.  Installed into an
environment, they load into *every* ``import jax`` there and print CUDA and TPU
host errors on a machine without the hardware, notebook cells of a MyST-NB
page included.  So sphinx-jaxhlo keeps them in a private folder that only its
compile workers put on their ``PYTHONPATH``::

    $JAXHLO_COMPILERS_DIR, else $XDG_CACHE_HOME/sphinx-jaxhlo/compilers (~/.cache/...)
        jax-0.10.2/            one folder per jax version
            gpu/               jax_plugins/xla_cuda12, jax_cuda12_plugin, nvidia/cuda_nvcc
            tpu/               libtpu

``python -m sphinx_jaxhlo compilers install`` fills it with ``pip install
--target``, at the versions the installed jax asks for: the plugins at the
version of jaxlib, libtpu at the version jax's ``tpu`` extra pins.  A folder
that does not match (built for another jax) is not used, and the target's
"missing" message says which command fixes it.  Compilers installed in the
environment itself (``pip install jax-cuda12-plugin``, ``jax[tpu]``) are used
when the folder lacks them.

Nothing here imports jax: the checks read package metadata and the file system.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "ENV_VARIABLE",
    "KITS",
    "Kit",
    "KitState",
    "compilers_root",
    "cuda_data_dir",
    "env_version",
    "install",
    "install_command",
    "kit_dir",
    "requirements",
    "state",
    "worker_path",
]

#: The environment variable that moves the folder (its ``jax-<version>`` subfolders stay).
ENV_VARIABLE = "JAXHLO_COMPILERS_DIR"

#: ptxas and libdevice: 12.8 is the first release that knows sm_100 (B200).
NVCC_REQUIREMENT = "nvidia-cuda-nvcc-cu12>=12.8,<13"

#: The file that says what a kit folder was installed for.
MANIFEST = "sphinx-jaxhlo-compilers.json"


@dataclass(frozen=True)
class Kit:
    """One set of compilers that ``compilers install`` handles as a unit.

    :param name: ``"gpu"`` or ``"tpu"``: the ``--gpu``/``--tpu`` flag.
    :param title: What it is, for messages.
    :param module: A module that only this kit provides (checked without importing it).
    :param distributions: The distributions whose versions decide what it
        compiles (reports and snapshots record them).
    """

    name: str
    title: str
    module: str
    distributions: tuple[str, ...]


#: The kits, by the name a target's ``compiler`` gives.
KITS: dict[str, Kit] = {
    "gpu": Kit("gpu", "the CUDA compiler plugin (jax-cuda12-plugin, ptxas, libdevice)", "jax_cuda12_plugin",
               ("jax-cuda12-plugin", "jax-cuda12-pjrt")),
    "tpu": Kit("tpu", "the TPU compiler (libtpu)", "libtpu", ("libtpu",)),
}


@dataclass(frozen=True)
class KitState:
    """Whether a kit can be used by a compile worker, and from where.

    :param kit: ``"gpu"`` or ``"tpu"``.
    :param folder: The private folder that holds it, when it does and matches
        this jax; workers put it on their ``PYTHONPATH``.
    :param in_environment: It is installed in this environment (and the
        private folder does not hold a matching one).
    :param versions: Distribution name to version, of what a worker will load.
    :param problem: Why it cannot be used, with the command that fixes it;
        ``None`` when it can.
    """

    kit: str
    folder: Path | None = None
    in_environment: bool = False
    versions: dict[str, str] = field(default_factory=dict)
    problem: str | None = None

    @property
    def usable(self) -> bool:
        return self.problem is None


# -- where ---------------------------------------------------------------------------------


def compilers_root() -> Path:
    """The folder that holds one ``jax-<version>`` folder per jax version.

    :return: ``$JAXHLO_COMPILERS_DIR`` if set, else
        ``$XDG_CACHE_HOME/sphinx-jaxhlo/compilers`` (``~/.cache/sphinx-jaxhlo/compilers``).
    """
    override = os.environ.get(ENV_VARIABLE)
    if override:
        return Path(override).expanduser().absolute()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base).absolute() / "sphinx-jaxhlo" / "compilers"


def kit_dir(kit: str) -> Path:
    """The folder of one kit for the installed jax, e.g. ``.../compilers/jax-0.10.2/gpu``.

    :param kit: ``"gpu"`` or ``"tpu"``.
    :raises LookupError: when jax is not installed.
    """
    return compilers_root() / f"jax-{env_version('jax')}" / kit


def install_command(kits: Sequence[str] = ()) -> str:
    """The command that installs ``kits`` (all when empty) into the private folder."""
    flags = "".join(f" --{k}" for k in kits if k in KITS)
    return f"python -m sphinx_jaxhlo compilers install{flags}"


# -- what the installed jax asks for -----------------------------------------------------------


@functools.cache
def env_version(dist: str) -> str:
    """The version of a distribution of this environment (jax, jaxlib).

    :raises LookupError: when it is not installed.
    """
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        raise LookupError(f"{dist} is not installed") from None


@functools.cache
def _jax_extra_requirement(extra: str, dist: str) -> str | None:
    """What jax's own metadata requires of ``dist`` for ``jax[extra]``, e.g.
    ``libtpu==0.0.42.*`` for ``tpu``."""
    from packaging.requirements import Requirement

    for text in importlib.metadata.requires("jax") or []:
        req = Requirement(text)
        if _normalize(req.name) == _normalize(dist) and req.marker is not None \
                and req.marker.evaluate({"extra": extra}):
            return f"{req.name}{req.specifier}"
    return None


def requirements(kit: str) -> list[str]:
    """The pip requirements of a kit, pinned to the installed jax.

    The GPU plugins must be exactly the version of jaxlib (they share its
    compiler ABI); libtpu is what ``jax[tpu]`` pins.

    :param kit: ``"gpu"`` or ``"tpu"``.
    :raises LookupError: when jax is not installed, or jax's metadata names no libtpu.
    """
    if kit == "gpu":
        jaxlib = env_version("jaxlib")
        return [f"jax-cuda12-plugin=={jaxlib}", f"jax-cuda12-pjrt=={jaxlib}", NVCC_REQUIREMENT]
    if kit == "tpu":
        libtpu = _jax_extra_requirement("tpu", "libtpu")
        if libtpu is None:
            raise LookupError(f"jax {env_version('jax')} names no libtpu for its 'tpu' extra")
        return [libtpu]
    raise ValueError(f"unknown compiler kit {kit!r}; known: {', '.join(KITS)}")


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _unmet(reqs: Sequence[str], versions: dict[str, str]) -> list[str]:
    """The requirements that ``versions`` (normalized name -> version) do not satisfy, as
    ``"jax-cuda12-plugin 0.10.1 (needs ==0.10.2)"`` or ``"libtpu (missing)"``."""
    from packaging.requirements import Requirement

    unmet = []
    for text in reqs:
        req = Requirement(text)
        found = versions.get(_normalize(req.name))
        if found is None:
            unmet.append(f"{req.name} (missing)")
        elif not req.specifier.contains(found, prereleases=True):
            unmet.append(f"{req.name} {found} (needs {req.specifier})")
    return unmet


# -- what is there ---------------------------------------------------------------------------


def _folder_versions(folder: Path) -> dict[str, str]:
    """Normalized distribution name -> version, of the ``*.dist-info`` in a folder."""
    versions = {}
    for dist in importlib.metadata.distributions(path=[str(folder)]):
        name = dist.metadata["Name"] if dist.metadata else None
        if name:
            versions[_normalize(name)] = dist.version
    return versions


def _is_cuda_dir(path: Path) -> bool:
    return (path / "nvvm" / "libdevice" / "libdevice.10.bc").is_file()


def _has_ptxas(path: Path) -> bool:
    return (path / "bin" / "ptxas").is_file()


def _nvcc_in(folder: Path) -> Path | None:
    path = folder / "nvidia" / "cuda_nvcc"
    return path if _is_cuda_dir(path) and _has_ptxas(path) else None


def _pip_cuda_nvcc_dir() -> Path | None:
    """The ``nvidia/cuda_nvcc`` folder of an ``nvidia-cuda-nvcc-cu12`` in this environment."""
    try:
        spec = importlib.util.find_spec("nvidia.cuda_nvcc")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        if _is_cuda_dir(Path(location)):
            return Path(location)
    return None


def _environment_cuda_dir() -> Path | None:
    """Where XLA finds libdevice and ptxas for plugins of the environment, or ``None``:
    ``--xla_gpu_cuda_data_dir`` in ``XLA_FLAGS``, the pip package, a system CUDA."""
    candidates: list[Path] = []
    for flag in os.environ.get("XLA_FLAGS", "").split():
        if flag.startswith("--xla_gpu_cuda_data_dir="):
            candidates.append(Path(flag.partition("=")[2]))
    pip_dir = _pip_cuda_nvcc_dir()
    if pip_dir is not None:
        candidates.append(pip_dir)
    candidates += [Path("/usr/local/cuda"), Path("/opt/cuda")]
    for path in candidates:
        if _is_cuda_dir(path) and (_has_ptxas(path) or shutil.which("ptxas")):
            return path
    return None


def _installer() -> tuple[str, list[str]] | None:
    """The installer a kit is installed with, and the start of its command line: this
    environment's pip, else uv (an environment made by uv has no pip), for this Python."""
    if _module_installed("pip"):
        return "pip", [sys.executable, "-m", "pip", "install"]
    uv = shutil.which("uv")
    if uv is None and _module_installed("uv"):
        uv_module = [sys.executable, "-m", "uv"]
    elif uv is not None:
        uv_module = [uv]
    else:
        return None
    return "uv", [*uv_module, "pip", "install", "--python", sys.executable]


def _module_installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _environment_versions(dists: Sequence[str]) -> dict[str, str]:
    versions = {}
    for dist in dists:
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def state(kit: str) -> KitState:
    """Whether a compile worker can load a kit, and from where.

    The private folder comes first when it matches the installed jax; else
    the environment's own installation; else a problem naming the command
    to run.

    :param kit: ``"gpu"`` or ``"tpu"``.
    """
    info = KITS[kit]
    fix = install_command([kit])
    try:
        reqs = requirements(kit)
        folder = kit_dir(kit)
    except LookupError as exc:
        return KitState(kit, problem=f"{exc}: pip install sphinx-jaxhlo (it installs jax)")
    folder_problem = None
    if folder.is_dir():
        found = _folder_versions(folder)
        unmet = _unmet(reqs, found)
        if kit == "gpu" and not unmet and _nvcc_in(folder) is None:
            unmet = ["ptxas and libdevice of nvidia-cuda-nvcc-cu12 (missing)"]
        if not unmet:
            names = {_normalize(d): d for d in info.distributions}
            return KitState(kit, folder=folder, versions={names[n]: v for n, v in found.items() if n in names})
        folder_problem = (f"needs {info.title}; the one in {folder} does not match jax {env_version('jax')} "
                          f"({'; '.join(unmet)}): run {fix}")
    # The environment's own installation (the old way: pip install jax-cuda12-plugin, jax[tpu]).
    if _module_installed(info.module):
        versions = _environment_versions(info.distributions)
        if kit == "gpu" and "jax-cuda12-pjrt" not in versions:
            return KitState(kit, problem=folder_problem or f"needs {info.title}: run {fix}")
        if kit == "gpu" and _environment_cuda_dir() is None:
            return KitState(kit, problem=folder_problem or (
                f"needs ptxas and libdevice from the CUDA toolkit (the environment has the CUDA plugin but "
                f"not nvidia-cuda-nvcc-cu12): run {fix}"))
        return KitState(kit, in_environment=True, versions=versions)
    if folder_problem:
        return KitState(kit, problem=folder_problem)
    message = f"needs {info.title}, which is not installed: run {fix}"
    others = _other_jax_versions(kit)
    if others:
        message += (f" (the folder {compilers_root()} holds it for {', '.join(others)} only, "
                    f"not for jax {env_version('jax')})")
    return KitState(kit, problem=message)


def _other_jax_versions(kit: str) -> list[str]:
    root = compilers_root()
    try:
        return sorted(p.name for p in root.iterdir() if p.name.startswith("jax-") and (p / kit).is_dir())
    except OSError:
        return []


def worker_path() -> list[Path]:
    """The private folders a compile worker puts on its ``PYTHONPATH``: those
    of the kits the folder holds for this jax."""
    return [s.folder for s in (state(k) for k in KITS) if s.folder is not None]


def cuda_data_dir() -> Path | None:
    """The ``nvidia/cuda_nvcc`` folder (ptxas and libdevice) a worker should point XLA at:
    the private folder's, else the environment's ``nvidia-cuda-nvcc-cu12``; ``None`` otherwise
    (XLA then looks for a system CUDA itself)."""
    gpu = state("gpu")
    if gpu.folder is not None:
        return _nvcc_in(gpu.folder)
    return _pip_cuda_nvcc_dir()


# -- installing -----------------------------------------------------------------------------


def _folder_size(folder: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def install(kits: Sequence[str] = (), *, force: bool = False, dry_run: bool = False,
            say: Callable[[str], None] = print) -> int:
    """Install kits into the private folder, at the versions the installed jax asks for.

    Each kit is installed with ``pip install --target`` (or, in an
    environment without pip, as uv makes them, ``uv pip install --target``; no dependencies: the
    kit's distributions are all named) into a new folder beside its final
    place, checked, then renamed into place, so a build never sees half a
    folder.  A kit whose folder already matches is left alone unless ``force``.

    :param kits: ``"gpu"``, ``"tpu"``; empty: both.
    :param force: Reinstall even when the folder matches.
    :param dry_run: Only say what would be run.
    :param say: Where progress lines go.
    :return: 0 on success, 1 when the installer failed or the result does not match.
    """
    chosen = list(dict.fromkeys(kits)) or list(KITS)
    for kit in chosen:
        if kit not in KITS:
            raise ValueError(f"unknown compiler kit {kit!r}; known: {', '.join(KITS)}")
    status = 0
    for kit in chosen:
        reqs = requirements(kit)
        final = kit_dir(kit)
        current = state(kit)
        if current.folder is not None and not force:
            say(f"{kit}: already installed in {final} "
                f"({', '.join(f'{d} {v}' for d, v in sorted(current.versions.items()))})")
            continue
        installer = _installer()
        if installer is None:
            say(f"{kit}: neither pip nor uv is available to this environment ({sys.executable}); run "
                f"`python -m ensurepip` first, or install with another installer: "
                f"--target {final} --no-deps {' '.join(reqs)}")
            return 1
        tool, command = installer
        quiet = ["--disable-pip-version-check"] if tool == "pip" else []
        command = [*command, "--target", "TARGET", "--no-deps", "--only-binary=:all:", *quiet, *reqs]
        if dry_run:
            say(f"{kit}: would run {' '.join(command).replace('TARGET', str(final))}")
            continue
        final.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{kit}-", dir=final.parent))
        try:
            say(f"{kit}: installing {', '.join(reqs)} into {final}")
            command[command.index("TARGET")] = str(staging)
            run = subprocess.run(command, check=False)
            if run.returncode != 0:
                say(f"{kit}: {tool} failed (exit status {run.returncode}); nothing was changed")
                status = 1
                continue
            unmet = _unmet(reqs, _folder_versions(staging))
            if kit == "gpu" and not unmet and _nvcc_in(staging) is None:
                unmet = ["ptxas and libdevice of nvidia-cuda-nvcc-cu12 (missing)"]
            if unmet:
                say(f"{kit}: the installed folder does not match: {'; '.join(unmet)}; nothing was changed")
                status = 1
                continue
            (staging / MANIFEST).write_text(json.dumps({
                "kit": kit, "jax": env_version("jax"), "jaxlib": env_version("jaxlib"), "requirements": reqs,
                "installed": _folder_versions(staging)}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            old = None
            if final.exists():
                old = final.with_name(f".{kit}-old-{os.getpid()}")
                os.replace(final, old)
            os.replace(staging, final)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
            done = state(kit)
            size = _folder_size(final) / 1e9
            say(f"{kit}: installed in {final} ({size:.2f} GB: "
                f"{', '.join(f'{d} {v}' for d, v in sorted(done.versions.items()))})")
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return status
