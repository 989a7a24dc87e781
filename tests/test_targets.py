"""Targets: the table, availability, the GPU description files, the stored HLO,
and real deviceless compiles for every installed target (in a subprocess, so
jax never loads in the test process)."""

from __future__ import annotations

import importlib.resources
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sphinx_jaxhlo.compiler.lowering import prepare_environment
from sphinx_jaxhlo.core import targets
from sphinx_jaxhlo.core.targets import TARGETS, Target, UnknownTargetError, get_target

ROOT = Path(__file__).resolve().parents[1]
HLO_DIR = Path(__file__).parent / "data" / "hlo"

#: The public names, in display order.  Changing one breaks users' documents.
NAMES = (
    "cpu",
    "gpu:h100",
    "gpu:a100",
    "gpu:h200",
    "gpu:b200",
    "gpu:l4",
    "tpu:v5e",
    "tpu:v6e",
    "tpu:v5p",
    "tpu:v4",
    "gpu:h100x8",
    "tpu:v5e-4",
    "tpu:v5e-8",
    "tpu:v5p-8",
)

#: What ``device_kind`` libtpu gives each TPU generation.
TPU_DEVICE_KINDS = {"tpu:v5e": "TPU v5 lite", "tpu:v6e": "TPU v6 lite", "tpu:v5p": "TPU v5", "tpu:v4": "TPU v4",
                    "tpu:v5e-4": "TPU v5 lite", "tpu:v5e-8": "TPU v5 lite", "tpu:v5p-8": "TPU v5"}

#: Fields a GPU description must set (enough for XLA to compile an H100).
GPU_FIELDS = (
    "threads_per_block_limit",
    "threads_per_warp",
    "shared_memory_per_block",
    "shared_memory_per_core",
    "threads_per_core_limit",
    "core_count",
    "fpus_per_core",
    "block_dim_limit_x",
    "block_dim_limit_y",
    "block_dim_limit_z",
    "memory_bandwidth",
    "l2_cache_size",
    "clock_rate_ghz",
    "device_memory_size",
    "shared_memory_per_block_optin",
    "registers_per_core_limit",
    "registers_per_block_limit",
    "thread_dim_limit_x",
    "thread_dim_limit_y",
    "thread_dim_limit_z",
    "device_vendor",
    "name",
)


def subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


# -- the table -------------------------------------------------------------------


def test_names_are_stable_and_in_display_order() -> None:
    assert tuple(TARGETS) == NAMES
    assert all(target.name == name for name, target in TARGETS.items())


def test_default_targets_are_known() -> None:
    assert targets.DEFAULT_TARGETS == ("cpu", "gpu:h100", "tpu:v5e")
    assert set(targets.DEFAULT_TARGETS) <= set(TARGETS)


@pytest.mark.parametrize("name", NAMES)
def test_target_fields(name: str) -> None:
    target = TARGETS[name]
    family = name.partition(":")[0]
    assert target.platform == {"cpu": "cpu", "gpu": "cuda", "tpu": "tpu"}[family]
    assert target.compiler == {"cpu": None, "gpu": "gpu", "tpu": "tpu"}[family]
    assert target.description
    if family == "cpu":
        assert target.memory_bytes is None
    else:
        assert target.description.endswith("(deviceless)")
        assert target.memory_bytes is not None and target.memory_bytes > 1 << 33
    assert (target.gpu_target_file is not None) == (family == "gpu")
    assert (target.tpu_topology is not None) == (family == "tpu")


def test_fingerprints_differ_between_targets() -> None:
    fingerprints = {target.fingerprint() for target in TARGETS.values()}
    assert len(fingerprints) == len(TARGETS)
    assert all(re.fullmatch(r"[0-9a-f]{64}", f) for f in fingerprints)


def test_fingerprint_is_the_same_in_another_process() -> None:
    code = (
        "import json; from sphinx_jaxhlo.core import targets; "
        "print(json.dumps({n: t.fingerprint() for n, t in targets.TARGETS.items()}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=subprocess_env()
    ).stdout
    assert json.loads(out) == {name: target.fingerprint() for name, target in TARGETS.items()}


def test_fingerprint_follows_the_gpu_description() -> None:
    h100 = TARGETS["gpu:h100"]
    renamed = Target(**{**h100.__dict__, "gpu_target_file": "h200.txtpb"})
    assert renamed.fingerprint() != h100.fingerprint()


def test_get_target_ignores_case_and_whitespace() -> None:
    assert get_target(" GPU:H100\n") is TARGETS["gpu:h100"]
    assert get_target("cpu") is TARGETS["cpu"]


def test_unknown_target_lists_the_known_names() -> None:
    with pytest.raises(UnknownTargetError) as info:
        get_target("gpu:h1000")
    message = str(info.value)
    assert "'gpu:h1000'" in message
    for name in NAMES:
        assert name in message
    assert isinstance(info.value, ValueError)


def test_package_versions_report_jax() -> None:
    import importlib.metadata

    versions = targets.package_versions()
    assert versions["jax"] == importlib.metadata.version("jax")
    assert versions["jaxlib"] == importlib.metadata.version("jaxlib")
    assert set(versions) <= {"jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda12-pjrt", "libtpu"}


# -- availability ----------------------------------------------------------------


@pytest.fixture
def nothing_but_jax(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Pretend the GPU and TPU compilers are installed neither in the private
    folder (an empty one) nor in the environment."""
    from sphinx_jaxhlo.core import compilers as plugins

    monkeypatch.setenv(plugins.ENV_VARIABLE, str(tmp_path / "compilers"))
    monkeypatch.setattr(plugins, "_module_installed", lambda module: False)
    yield


@pytest.mark.usefixtures("nothing_but_jax")
def test_default_targets_fall_back_to_cpu() -> None:
    assert targets.default_targets() == ["cpu"]
    assert TARGETS["cpu"].available()


@pytest.mark.usefixtures("nothing_but_jax")
def test_missing_messages_name_the_command_that_installs_the_compiler() -> None:
    assert not TARGETS["gpu:h100"].available()
    assert TARGETS["gpu:h100"].missing_message() == (
        "target gpu:h100 needs the CUDA compiler plugin (jax-cuda12-plugin, ptxas, libdevice), which is not "
        "installed: run python -m sphinx_jaxhlo compilers install --gpu"
    )
    assert not TARGETS["tpu:v5e"].available()
    assert TARGETS["tpu:v5e"].missing_message() == (
        "target tpu:v5e needs the TPU compiler (libtpu), which is not installed: "
        "run python -m sphinx_jaxhlo compilers install --tpu"
    )


def test_missing_cuda_toolkit_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The CUDA plugin installed in the environment without ptxas and libdevice."""
    from sphinx_jaxhlo.core import compilers as plugins

    monkeypatch.setenv(plugins.ENV_VARIABLE, str(tmp_path / "compilers"))
    monkeypatch.setattr(plugins, "_module_installed", lambda module: True)
    monkeypatch.setattr(plugins, "_environment_versions",
                        lambda dists: {"jax-cuda12-plugin": "0.10.2", "jax-cuda12-pjrt": "0.10.2"})
    monkeypatch.setattr(plugins, "_environment_cuda_dir", lambda: None)
    assert not TARGETS["gpu:b200"].available()
    message = TARGETS["gpu:b200"].missing_message()
    assert "ptxas and libdevice" in message
    assert message.endswith("run python -m sphinx_jaxhlo compilers install --gpu")


def test_default_targets_keep_their_order() -> None:
    chosen = targets.default_targets()
    assert chosen[0] == "cpu"
    assert chosen == [name for name in targets.DEFAULT_TARGETS if name in chosen]


def test_importing_targets_does_not_import_jax() -> None:
    code = (
        "import sys\n"
        "from sphinx_jaxhlo.core import targets\n"
        "for t in targets.TARGETS.values():\n"
        "    t.available(); t.missing_message(); t.fingerprint()\n"
        "targets.default_targets(); targets.package_versions()\n"
        "from sphinx_jaxhlo.compiler import client, lowering, worker\n"
        "lowering.prepare_environment({})\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib', 'libtpu', 'jax_plugins'))\n"
        "print(loaded)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=subprocess_env()
    ).stdout
    assert out.strip() == "[]"


def test_prepare_environment() -> None:
    environ = {"TPU_ACCELERATOR_TYPE": "v6e-1", "JAX_PLATFORMS": "cuda"}
    prepare_environment(environ)
    assert environ["JAX_PLATFORMS"] == "cpu"
    assert environ["JAX_SKIP_CUDA_CONSTRAINTS_CHECK"] == "1"
    assert environ["TPU_SKIP_MDS_QUERY"] == "1"
    assert environ["TPU_ACCELERATOR_TYPE"] == "v6e-1"  # the user's wins

    mine = {"XLA_FLAGS": "--xla_gpu_cuda_data_dir=/opt/my-cuda"}
    prepare_environment(mine)
    assert mine["XLA_FLAGS"] == "--xla_gpu_cuda_data_dir=/opt/my-cuda"


# -- one catalogue entry is a target --------------------------------------------------


def test_the_compile_limits_are_the_ones_the_timeout_setting_states() -> None:
    """``jaxhlo_timeout``'s help names each kind's default limit: the catalogue's."""
    from sphinx_jaxhlo.core.settings import BY_NAME

    text = BY_NAME["jaxhlo_timeout"].help
    stated = {kind: float(seconds) for seconds, kind in re.findall(r"(\d+) s for (?:the|a) (CPU|GPU|TPU)", text)}
    assert set(stated) == {"CPU", "GPU", "TPU"}
    for name, target in TARGETS.items():
        assert target.timeout == stated[name.partition(":")[0].upper()], name
        assert 0 < target.prior_seconds < target.timeout


@pytest.fixture
def new_gpu(monkeypatch: pytest.MonkeyPatch) -> Target:
    """A GPU model this release lacks, added as the one catalogue entry that
    ``docs/development.md`` ("Adding a target") describes."""
    entry = targets._gpu("rtx6000", "NVIDIA RTX 6000 Ada Generation 48 GB", 48 << 30)
    monkeypatch.setitem(targets.TARGETS, entry.name, entry)
    return entry


def test_one_catalogue_entry_gives_a_target_its_limits_and_its_prior(new_gpu: Target) -> None:
    from sphinx_jaxhlo.compiler.client import Limits

    assert get_target("GPU:RTX6000") is new_gpu and new_gpu.title == "RTX6000"
    assert (new_gpu.platform, new_gpu.compiler, new_gpu.gpu_target_file) == ("cuda", "gpu", "rtx6000.txtpb")
    # the kind's defaults: a GPU's compile limit and expected seconds
    assert Limits.fitting(new_gpu, None) == Limits.fitting(TARGETS["gpu:h100"], None) == Limits(90.0, 270.0)
    assert new_gpu.prior_seconds == TARGETS["gpu:h100"].prior_seconds
    assert Limits.fitting(new_gpu, None, observed=60.0) == Limits(240.0, 720.0)
    assert Limits.fitting(new_gpu, 5.0) == Limits(5.0, None)
    # an entry may give its own
    slow = targets._gpu("rtx6000", "NVIDIA RTX 6000 Ada Generation 48 GB", 48 << 30, timeout=120.0,
                        prior_seconds=2.0)
    assert Limits.fitting(slow, None) == Limits(120.0, 360.0) and slow.prior_seconds == 2.0
    with pytest.raises(UnknownTargetError) as info:
        get_target("gpu:rtx7000")
    assert "gpu:rtx6000" in str(info.value)


@pytest.mark.usefixtures("nothing_but_jax")
def test_one_catalogue_entry_gives_a_target_its_compilers(new_gpu: Target) -> None:
    from sphinx_jaxhlo.store.snapshots import toolchain

    assert not new_gpu.available()
    assert new_gpu.missing_message() == TARGETS["gpu:h100"].missing_message().replace("gpu:h100", "gpu:rtx6000")
    assert new_gpu.missing_message().endswith("run python -m sphinx_jaxhlo compilers install --gpu")
    assert new_gpu.packages == targets.compiler_packages("gpu:rtx6000") == ("jax-cuda12-plugin", "jax-cuda12-pjrt")
    versions = {"jax": "0.10.2", "jaxlib": "0.10.2", "jax-cuda12-plugin": "0.10.2", "jax-cuda12-pjrt": "0.10.2",
                "libtpu": "0.0.42"}
    assert toolchain(versions, "gpu:rtx6000") == {k: v for k, v in versions.items() if k != "libtpu"}
    assert toolchain(versions, "cpu") == {"jax": "0.10.2", "jaxlib": "0.10.2"}
    assert targets.compiler_packages("gpu:gone") == ()


# -- GPU description files ----------------------------------------------------------


def gpu_description(target: Target) -> str:
    assert target.gpu_target_file is not None
    return importlib.resources.files("sphinx_jaxhlo").joinpath("gpu_targets", target.gpu_target_file).read_text()


def gpu_fields(text: str) -> dict[str, str]:
    """``name: value`` pairs of a text proto, ignoring nesting and comments."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        match = re.match(r"\s*(\w+)\s*:\s*(\"[^\"]*\"|[\w.]+)", line)
        if match:
            fields.setdefault(match.group(1), match.group(2).strip('"'))
    return fields


GPU_TARGETS = [name for name in NAMES if name.startswith("gpu:")]


@pytest.mark.parametrize("name", GPU_TARGETS)
def test_gpu_description_is_complete_and_cited(name: str) -> None:
    target = TARGETS[name]
    text = gpu_description(target)
    fields = gpu_fields(text)
    missing = [field for field in GPU_FIELDS if field not in fields]
    assert not missing
    assert fields["platform_name"] == "CUDA"
    assert re.search(r"cuda_compute_capability \{ major: \d+ minor: \d+ \}", text)
    assert re.search(r"dnn_version_info \{ major: \d+ minor: \d+", text)
    assert int(fields["device_memory_size"]) == target.memory_bytes
    assert int(fields["shared_memory_per_block_optin"]) <= int(fields["shared_memory_per_core"])
    names = ("platform_name", "device_description_str", "device_vendor", "name", "gpu_device_info")
    uncited = [
        line
        for line in text.splitlines()
        if (match := re.match(r"\s*(\w+)\s*[:{]", line))
        and match.group(1) not in names
        and not re.search(r"#.*\[\w+\]", line)
    ]
    assert not uncited, "every figure needs a comment citing its source"


def test_every_gpu_description_file_is_a_target() -> None:
    folder = importlib.resources.files("sphinx_jaxhlo").joinpath("gpu_targets")
    files = {entry.name for entry in folder.iterdir() if entry.name.endswith(".txtpb")}
    assert files == {TARGETS[name].gpu_target_file for name in GPU_TARGETS}


# -- stored HLO ----------------------------------------------------------------------


def load_regenerate_script() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("regenerate_hlo", HLO_DIR.parent / "regenerate_hlo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_stored_hlo_is_complete() -> None:
    script = load_regenerate_script()
    for target in script.DEFAULT_TARGETS:
        for variant in script.VARIANTS:
            stem = script.stem(target, variant)
            record = json.loads((HLO_DIR / f"{stem}.json").read_text())
            assert record["target"] == target
            assert record["variant"] == variant
            assert record["source"] == script.VARIANTS[variant].source
            assert "jax" in record["versions"]
            if record["error"] is None:
                hlo = (HLO_DIR / f"{stem}.txt").read_text()
                assert hlo.startswith("HloModule ")
                assert '"example.py"' in hlo
                assert record["memory"]["temp_bytes"] is not None
                assert not (HLO_DIR / f"{stem}.error.txt").exists()
            else:
                assert (HLO_DIR / f"{stem}.error.txt").read_text().strip() == record["error"]["message"]
                assert not (HLO_DIR / f"{stem}.txt").exists()


def test_stored_hlo_shows_the_seed_results() -> None:
    """The facts the analysis tests rely on, checked at the source."""

    def record(stem: str) -> dict[str, Any]:
        return json.loads((HLO_DIR / f"{stem}.json").read_text())  # type: ignore[no-any-return]

    assert record("gpu_h100__with_dot")["memory"]["temp_bytes"] > 20e9
    assert record("gpu_h100__explicit")["memory"]["temp_bytes"] < 1e9
    assert record("cpu__with_dot")["memory"]["temp_bytes"] >= 20e9
    assert record("tpu_v5e__with_dot")["memory"]["temp_bytes"] == 0
    assert record("tpu_v5e__broadcast")["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert "__triton" in (HLO_DIR / "gpu_h100__with_dot.txt").read_text()
    assert " while(" in (HLO_DIR / "tpu_v5e__scan_chunks.txt").read_text()
    assert " conditional(" in (HLO_DIR / "cpu__cond.txt").read_text()
    assert " sort(" in (HLO_DIR / "gpu_h100__sort_gather.txt").read_text()


# -- real compiles ------------------------------------------------------------------

#: Run with the environment a compile worker gets (lowering.prepare_environment).
COMPILE_SCRIPT = r'''
import json, os, sys
from sphinx_jaxhlo.compiler import lowering
from sphinx_jaxhlo.core import targets
import jax
import jax.numpy as jnp

SOURCE = """import jax.numpy as jnp

def f(a, b, *, scale):
    return jnp.sum(jnp.cos(scale * (a @ b.T)), axis=0)

def broadcast(pos, hkl):
    return jnp.sum(jnp.cos((pos[:, None, :] * hkl[None]).sum(-1)), axis=0)
"""
namespace = {}
exec(compile(SOURCE, "example.py", "exec"), namespace)
specs = (jax.ShapeDtypeStruct((512, 64), jnp.float32), jax.ShapeDtypeStruct((256, 64), jnp.float32))
scale = jax.ShapeDtypeStruct((), jnp.float32)
results = {}
for name in sys.argv[1:]:
    target = targets.get_target(name)
    try:
        lowered, compiled = lowering.compile_for(target, jax.jit(namespace["f"]), specs, {"scale": scale}, {})
    except Exception as exc:
        results[name] = {"error": f"{type(exc).__name__}: {exc}"}
        continue
    device = lowering.device_for(target)
    results[name] = {
        "hlo": compiled.as_text(),
        "device_kind": None if device is None else device.device_kind,
        "cached_device": lowering.device_for(target) is device,
        "output_bytes": compiled.memory_analysis().output_size_in_bytes,
    }
if "tpu:v5e" in sys.argv[1:]:
    seed = (jax.ShapeDtypeStruct((100000, 3), jnp.float32), jax.ShapeDtypeStruct((50000, 3), jnp.float32))
    try:
        lowering.compile_for(targets.get_target("tpu:v5e"), jax.jit(namespace["broadcast"]), seed, {}, {})
        results["tpu:v5e/broadcast"] = {"error": None}
    except Exception as exc:
        results["tpu:v5e/broadcast"] = {"error": str(exc)}
print("RESULTS " + json.dumps(results))
'''


@pytest.fixture(scope="module")
def compiled() -> dict[str, Any]:
    """Compile a small function for every installed target, in one subprocess."""
    names = [name for name in NAMES if TARGETS[name].available()]
    env = subprocess_env()
    prepare_environment(env)
    run = subprocess.run(
        [sys.executable, "-c", COMPILE_SCRIPT, *names],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULTS ")]
    assert run.returncode == 0 and lines, run.stderr[-4000:]
    return json.loads(lines[-1].removeprefix("RESULTS "))  # type: ignore[no-any-return]


def compile_result(compiled: dict[str, Any], name: str) -> dict[str, Any]:
    target = TARGETS[name]
    if not target.available():
        pytest.skip(target.missing_message())
    result: dict[str, Any] = compiled[name]
    assert "error" not in result, result.get("error")
    return result


@pytest.mark.slow
def test_compile_for_cpu(compiled: dict[str, Any]) -> None:
    result = compile_result(compiled, "cpu")
    assert result["device_kind"] is None
    assert result["output_bytes"] == 256 * 4
    hlo = result["hlo"]
    assert "cosine(" in hlo
    assert '"example.py"' in hlo
    # Only the example's frames are recorded, not the package's.
    assert "targets.py" not in hlo and "lowering.py" not in hlo


@pytest.mark.slow
@pytest.mark.parametrize("name", GPU_TARGETS)
def test_compile_for_gpu(compiled: dict[str, Any], name: str) -> None:
    result = compile_result(compiled, name)
    assert result["device_kind"] == gpu_fields(gpu_description(TARGETS[name]))["name"]
    assert result["cached_device"]
    assert result["output_bytes"] == 256 * 4
    hlo = result["hlo"]
    # The dot goes to a Triton GEMM fusion or a cuBLAS custom call: GPU code,
    # not the CPU's.
    assert "__triton" in hlo or "custom-call(" in hlo
    assert "__ynn" not in hlo


@pytest.mark.slow
@pytest.mark.parametrize("name", [name for name in NAMES if name.startswith("tpu:")])
def test_compile_for_tpu(compiled: dict[str, Any], name: str) -> None:
    result = compile_result(compiled, name)
    assert result["device_kind"] == TPU_DEVICE_KINDS[name]
    assert result["cached_device"]
    hlo = result["hlo"]
    assert re.search(r"\{[0-9,]+:T\(\d+(,\d+)?\)", hlo), "TPU tiled layouts"
    assert "cosine" in hlo


@pytest.mark.slow
def test_tpu_out_of_memory_propagates(compiled: dict[str, Any]) -> None:
    compile_result(compiled, "tpu:v5e")
    error = compiled["tpu:v5e/broadcast"]["error"]
    assert error is not None
    assert error.startswith("RESOURCE_EXHAUSTED")
    assert "exceeds available HBM" in error
