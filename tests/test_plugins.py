"""The private folder of the GPU and TPU compilers: what the Sphinx process sees
in it, what a worker gets from it, and ``compilers install`` / ``status``.

Folders are faked here (``*.dist-info`` with the right names and versions,
the files XLA needs); installing real compilers takes a download.
:mod:`tests.test_notebook` checks the real thing end to end.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import importlib.metadata
import json
import os
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from sphinx_jaxhlo import cli
from sphinx_jaxhlo.compiler.lowering import prepare_environment
from sphinx_jaxhlo.core import compilers as plugins
from sphinx_jaxhlo.core import targets
from sphinx_jaxhlo.core.targets import TARGETS

JAX = importlib.metadata.version("jax")
JAXLIB = importlib.metadata.version("jaxlib")


def fake_distribution(folder: Path, name: str, version: str) -> None:
    info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")


def fake_gpu_kit(root: Path, plugin_version: str = JAXLIB, jax_version: str = JAX) -> Path:
    folder = root / f"jax-{jax_version}" / "gpu"
    fake_distribution(folder, "jax-cuda12-plugin", plugin_version)
    fake_distribution(folder, "jax-cuda12-pjrt", plugin_version)
    fake_distribution(folder, "nvidia-cuda-nvcc-cu12", "12.9.86")
    nvcc = folder / "nvidia" / "cuda_nvcc"
    (nvcc / "nvvm" / "libdevice").mkdir(parents=True)
    (nvcc / "nvvm" / "libdevice" / "libdevice.10.bc").write_bytes(b"")
    (nvcc / "bin").mkdir()
    (nvcc / "bin" / "ptxas").write_bytes(b"")
    return folder


@pytest.fixture
def root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty compilers folder, and no compilers in the environment."""
    folder = tmp_path / "compilers"
    monkeypatch.setenv(plugins.ENV_VARIABLE, str(folder))
    real = plugins._module_installed
    kit_modules = {kit.module for kit in plugins.KITS.values()}
    monkeypatch.setattr(plugins, "_module_installed", lambda module: module not in kit_modules and real(module))
    return folder


def test_the_folder_is_in_the_user_cache_and_keyed_by_the_jax_version(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    monkeypatch.delenv(plugins.ENV_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert plugins.kit_dir("tpu") == tmp_path / "cache" / "sphinx-jaxhlo" / "compilers" / f"jax-{JAX}" / "tpu"
    monkeypatch.setenv(plugins.ENV_VARIABLE, str(tmp_path / "mine"))
    assert plugins.kit_dir("gpu") == tmp_path / "mine" / f"jax-{JAX}" / "gpu"


def test_requirements_are_pinned_to_the_installed_jax() -> None:
    assert plugins.requirements("gpu")[:2] == [f"jax-cuda12-plugin=={JAXLIB}", f"jax-cuda12-pjrt=={JAXLIB}"]
    assert plugins.requirements("gpu")[2].startswith("nvidia-cuda-nvcc-cu12>=12.8")
    (libtpu,) = plugins.requirements("tpu")
    pins = [r.partition(";")[0].replace(" ", "") for r in importlib.metadata.requires("jax") or []
            if "libtpu" in r and "tpu" in r.partition(";")[2]]
    assert libtpu.replace(" ", "") in pins, pins


def test_a_matching_folder_is_used_by_workers_and_in_cache_keys(root: Path) -> None:
    folder = fake_gpu_kit(root)
    state = plugins.state("gpu")
    assert state.usable and state.folder == folder and not state.in_environment
    assert TARGETS["gpu:h100"].available()
    assert not TARGETS["tpu:v5e"].available()
    versions = targets.package_versions()
    assert versions["jax-cuda12-plugin"] == versions["jax-cuda12-pjrt"] == JAXLIB
    assert "libtpu" not in versions

    env = {"PYTHONPATH": "/somewhere/else", "XLA_FLAGS": "--xla_dump_to=/tmp/x"}
    prepare_environment(env)
    assert env["PYTHONPATH"].split(os.pathsep) == [str(folder), "/somewhere/else"]
    assert env["XLA_FLAGS"] == f"--xla_dump_to=/tmp/x --xla_gpu_cuda_data_dir={folder / 'nvidia' / 'cuda_nvcc'}"
    # This process is left alone: only workers load the compilers.
    assert str(folder) not in os.environ.get("PYTHONPATH", "")


def test_a_folder_for_another_jaxlib_is_not_used_and_says_how_to_fix_it(root: Path) -> None:
    folder = fake_gpu_kit(root, plugin_version="0.0.1")
    state = plugins.state("gpu")
    assert state.folder is None and not state.usable
    message = TARGETS["gpu:h100"].missing_message()
    assert message.startswith("target gpu:h100 needs the CUDA compiler plugin (jax-cuda12-plugin, ptxas, "
                              f"libdevice); the one in {folder} does not match jax {JAX} (")
    assert f"jax-cuda12-plugin 0.0.1 (needs =={JAXLIB})" in message
    assert message.endswith("run python -m sphinx_jaxhlo compilers install --gpu")
    env: dict[str, str] = {}
    prepare_environment(env)
    assert "PYTHONPATH" not in env
    assert "jax-cuda12-plugin" not in targets.package_versions()


def test_a_folder_for_another_jax_version_is_named(root: Path) -> None:
    (root / "jax-0.0.1" / "tpu").mkdir(parents=True)
    message = TARGETS["tpu:v5e"].missing_message()
    assert message == (
        "target tpu:v5e needs the TPU compiler (libtpu), which is not installed: run python -m sphinx_jaxhlo "
        f"compilers install --tpu (the folder {root} holds it for jax-0.0.1 only, not for jax {JAX})")


def test_gpu_folder_without_ptxas_is_not_used(root: Path) -> None:
    folder = fake_gpu_kit(root)
    (folder / "nvidia" / "cuda_nvcc" / "bin" / "ptxas").unlink()
    assert "ptxas and libdevice of nvidia-cuda-nvcc-cu12 (missing)" in TARGETS["gpu:l4"].missing_message()


def test_compilers_of_the_environment_are_used_when_the_folder_lacks_them(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugins, "_module_installed", lambda module: module == "libtpu")
    monkeypatch.setattr(plugins, "_environment_versions", lambda dists: {"libtpu": "0.0.42.1"})
    state = plugins.state("tpu")
    assert state.usable and state.in_environment and state.folder is None
    assert targets.package_versions()["libtpu"] == "0.0.42.1"
    env: dict[str, str] = {}
    prepare_environment(env)
    assert "PYTHONPATH" not in env


def test_status_says_where_each_compiler_comes_from(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = fake_gpu_kit(root)
    assert cli.main(["compilers", "status"]) == cli.EXIT_FAILED
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"compilers folder: {root / f'jax-{JAX}'}  ($JAXHLO_COMPILERS_DIR moves it)"
    assert out[1] == f"gpu: jax-cuda12-pjrt {JAXLIB}, jax-cuda12-plugin {JAXLIB}, from {folder}"
    assert out[2].startswith("tpu: needs the TPU compiler (libtpu), which is not installed")


def test_install_dry_run_names_the_pinned_pip_command(
        root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    real = plugins._module_installed
    monkeypatch.setattr(plugins, "_module_installed", lambda module: module == "pip" or real(module))
    assert cli.main(["compilers", "install", "--gpu", "--dry-run"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("gpu: would run ")
    assert f"-m pip install --target {root / f'jax-{JAX}' / 'gpu'} --no-deps" in line
    assert f"jax-cuda12-plugin=={JAXLIB} jax-cuda12-pjrt=={JAXLIB}" in line
    assert not root.exists()


def test_install_without_pip_uses_uv_for_this_python(
        root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """An environment made by uv (nox's uv backend, ``uv venv``) has no pip: the kits go in with uv."""
    real = plugins._module_installed
    monkeypatch.setattr(plugins, "_module_installed", lambda module: module != "pip" and real(module))
    monkeypatch.setattr(plugins.shutil, "which", lambda name: "/opt/bin/uv" if name == "uv" else None)
    assert cli.main(["compilers", "install", "--tpu", "--dry-run"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith(f"tpu: would run /opt/bin/uv pip install --python {sys.executable} "
                           f"--target {root / f'jax-{JAX}' / 'tpu'} --no-deps --only-binary=:all: libtpu==")
    assert "--disable-pip-version-check" not in line


def test_install_with_neither_pip_nor_uv_says_what_to_run(
        root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    real = plugins._module_installed
    monkeypatch.setattr(plugins, "_module_installed", lambda module: module not in ("pip", "uv") and real(module))
    monkeypatch.setattr(plugins.shutil, "which", lambda name: None)
    assert cli.main(["compilers", "install", "--tpu"]) == 1
    out = capsys.readouterr().out
    assert "neither pip nor uv is available" in out and "python -m ensurepip" in out
    assert not root.exists()


def test_compilers_needs_a_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["compilers"])
    assert info.value.code == 2
    assert "{install,status}" in capsys.readouterr().err


# -- a real pip install, of a small wheel made here ------------------------------------------


def make_wheel(folder: Path, name: str, version: str, module: str) -> Path:
    """A minimal pure-Python wheel, valid enough for pip."""
    dist = f"{name.replace('-', '_')}-{version}"
    files = {
        f"{module}/__init__.py": f"VERSION = {version!r}\n",
        f"{dist}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: jaxhlo-test\nRoot-Is-Purelib: true\n"
                                   "Tag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{dist}.dist-info/RECORD,,")
    files[f"{dist}.dist-info/RECORD"] = "\n".join(record) + "\n"
    wheel = folder / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


@pytest.mark.slow
@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_install_puts_a_checked_folder_in_place_and_keeps_it_on_failure(
        root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, installer: str) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    make_wheel(wheels, "jaxhlo-fake-libtpu", "1.0", "jaxhlo_fake_libtpu")
    make_wheel(wheels, "jaxhlo-fake-libtpu", "2.0", "jaxhlo_fake_libtpu")
    if installer == "pip":
        if not plugins._module_installed("pip"):
            pytest.skip("no pip in this environment")
        # pip sees only the folder of wheels made here
        monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
        monkeypatch.setenv("PIP_NO_INDEX", "1")
        monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    else:
        if shutil.which("uv") is None:
            pytest.skip("uv is not on PATH")
        real = plugins._module_installed
        monkeypatch.setattr(plugins, "_module_installed", lambda module: module != "pip" and real(module))
        # uv sees only the folder of wheels made here
        monkeypatch.setenv("UV_NO_CONFIG", "1")
        monkeypatch.setenv("UV_OFFLINE", "1")
        monkeypatch.setenv("UV_FIND_LINKS", str(wheels))
        monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    pin = {"tpu": ["jaxhlo-fake-libtpu==1.0"]}
    monkeypatch.setattr(plugins, "requirements", lambda kit: pin[kit])
    monkeypatch.setitem(plugins.KITS, "tpu", dataclasses.replace(plugins.KITS["tpu"],
                                                                 distributions=("jaxhlo-fake-libtpu",)))
    said: list[str] = []

    assert plugins.install(["tpu"], say=said.append) == 0
    folder = root / f"jax-{JAX}" / "tpu"
    assert (folder / "jaxhlo_fake_libtpu" / "__init__.py").read_text() == "VERSION = '1.0'\n"
    manifest = json.loads((folder / plugins.MANIFEST).read_text())
    assert manifest["jax"] == JAX and manifest["requirements"] == ["jaxhlo-fake-libtpu==1.0"]
    assert plugins.state("tpu").folder == folder
    assert said[-1].startswith(f"tpu: installed in {folder} (")
    assert [p.name for p in folder.parent.iterdir()] == ["tpu"]  # no staging folder left behind

    said.clear()
    assert plugins.install(["tpu"], say=said.append) == 0
    assert said == [f"tpu: already installed in {folder} (jaxhlo-fake-libtpu 1.0)"]

    # jax moved on and asks for 2.0: the folder no longer matches, install replaces it
    pin["tpu"] = ["jaxhlo-fake-libtpu==2.0"]
    assert "does not match" in (plugins.state("tpu").problem or "")
    assert plugins.install(["tpu"]) == 0
    assert (folder / "jaxhlo_fake_libtpu" / "__init__.py").read_text() == "VERSION = '2.0'\n"

    # a version pip cannot find: pip fails, the working folder stays
    pin["tpu"] = ["jaxhlo-fake-libtpu==3.0"]
    said.clear()
    assert plugins.install(["tpu"], force=True, say=said.append) == 1
    assert said[-1].startswith(f"tpu: {installer} failed (exit status ") and said[-1].endswith("nothing was changed")
    assert (folder / "jaxhlo_fake_libtpu" / "__init__.py").read_text() == "VERSION = '2.0'\n"
    assert [p.name for p in folder.parent.iterdir()] == ["tpu"]


# -- in a build ------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_mismatched_compiler_is_one_target_warning_with_the_fix(root: Path, tmp_path: Path) -> None:
    """Two pages ask for tpu:v5e while the folder holds a libtpu that this jax does not pin."""
    from io import StringIO

    from sphinx.testing.util import SphinxTestApp

    tpu = root / f"jax-{JAX}" / "tpu"
    fake_distribution(tpu, "libtpu", "0.0.1")
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_targets = ["cpu", "tpu:v5e"]\n')
    example = ".. jax-hlo::\n   :args: f32[8]\n\n   def f(x):\n       return x.sum()\n"
    (src / "index.rst").write_text("Home\n====\n\n.. toctree::\n\n   other\n\n" + example)
    (src / "other.rst").write_text("Other\n=====\n\n" + example)
    warnings = StringIO()
    app = SphinxTestApp("html", srcdir=src, builddir=tmp_path / "build", warning=warnings,
                        confoverrides={"jaxhlo_cache_dir": str(tmp_path / "cache")})
    try:
        app.build()
    finally:
        app.cleanup()
    lines = [line for line in warnings.getvalue().splitlines() if "WARNING" in line]
    assert len(lines) == 1, lines
    (line,) = lines
    assert f"target tpu:v5e needs the TPU compiler (libtpu); the one in {tpu} does not match jax {JAX} " \
           "(libtpu 0.0.1 (needs ==" in line
    assert "run python -m sphinx_jaxhlo compilers install --tpu; 2 document(s) show it as missing" in line
    assert "(index, other) [jaxhlo.target]" in line
