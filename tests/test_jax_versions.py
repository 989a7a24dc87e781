"""Older jax releases: GPU descriptions cut to the fields the installed XLA
knows, what jaxlib before 0.9 needs to compile without a device, and the
one warning a target gets when the installed compilers refuse it.

The releases themselves are checked by ``nox -s compat`` (tools/compat.py);
these tests run with whatever jax is installed.
"""

from __future__ import annotations

import importlib.resources
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sphinx_jaxhlo.compiler import lowering
from sphinx_jaxhlo.compiler.lowering import drop_fields, unknown_fields
from sphinx_jaxhlo.core import compilers as plugins
from sphinx_jaxhlo.core import targets
from sphinx_jaxhlo.core.targets import TARGETS

ROOT = Path(__file__).resolve().parents[1]
GPU_TARGETS = [name for name, t in TARGETS.items() if t.gpu_target_file is not None]

#: What jaxlib 0.9.2's parser writes for the H100 description (measured).
LOG_092 = """\
E1201 19:53:15.990200   13978 text_format.cc:378] Error parsing text-format stream_executor.GpuTargetConfigProto: \
19:16: Message type "stream_executor.GpuDeviceInfoProto" has no field named "device_vendor".
E1201 19:53:15.990247   13978 text_format.cc:378] Error parsing text-format stream_executor.GpuTargetConfigProto: \
19:16: Message type "stream_executor.GpuDeviceInfoProto" has no field named "device_vendor".
W1201 19:53:15.990300   13978 other.cc:1] something else
"""


def description(name: str) -> str:
    file = TARGETS[name].gpu_target_file
    assert file is not None
    return importlib.resources.files("sphinx_jaxhlo").joinpath("gpu_targets", file).read_text(encoding="utf-8")


def fields(text: str) -> list[str]:
    """Field names of the text, comments left out, in order."""
    return [line.split("#")[0].split(":")[0].split("{")[0].strip() for line in text.splitlines()
            if line.split("#")[0].strip() and line.split("#")[0].strip() != "}"]


def test_unknown_fields_are_read_from_the_parsers_log_once_each() -> None:
    assert unknown_fields(LOG_092) == [("GpuDeviceInfoProto", "device_vendor")]
    assert unknown_fields("W1201 nothing to see\n") == []
    two = ('Message type "stream_executor.GpuTargetConfigProto" has no field named "runtime_version".\n'
           'Message type "stream_executor.CudaComputeCapabilityProto" has no field named "feature_extension".')
    assert unknown_fields(two) == [("GpuTargetConfigProto", "runtime_version"),
                                   ("CudaComputeCapabilityProto", "feature_extension")]


@pytest.mark.parametrize("name", GPU_TARGETS)
def test_dropping_jaxlib_09s_unknown_fields_keeps_every_other_line(name: str) -> None:
    text = description(name)
    newer = [("GpuDeviceInfoProto", f) for f in ("device_vendor", "name", "thread_dim_limit_x",
                                                  "thread_dim_limit_y", "thread_dim_limit_z")]
    cut = drop_fields(text, newer)
    assert [f for f in fields(text) if f not in {n for _, n in newer}] == fields(cut)
    assert "core_count" in fields(cut) and "cuda_compute_capability" in fields(cut)
    assert "device_memory_size" in cut and cut.endswith("\n")
    # the top-level name is not the device-info one
    assert drop_fields(text, [("GpuTargetConfigProto", "name")]) == text


def test_a_field_is_dropped_only_in_its_own_message() -> None:
    text = ('platform_name: "CUDA"\n'
            'gpu_device_info {\n'
            '  name: "X"  # comment\n'
            '  cuda_compute_capability { major: 9 minor: 0 feature_extension: ACCELERATED }\n'
            '  extra {\n'
            '    a: 1\n'
            '  }\n'
            '  core_count: 1\n'
            '}\n'
            'name: "top"\n')
    cut = drop_fields(text, [("GpuDeviceInfoProto", "name"), ("CudaComputeCapabilityProto", "feature_extension")])
    assert cut == ('platform_name: "CUDA"\n'
                   'gpu_device_info {\n'
                   '  cuda_compute_capability { major: 9 minor: 0 }\n'
                   '  extra {\n'
                   '    a: 1\n'
                   '  }\n'
                   '  core_count: 1\n'
                   '}\n'
                   'name: "top"\n')
    whole = drop_fields(text, [("GpuTargetConfigProto", "gpu_device_info")])
    assert whole == 'platform_name: "CUDA"\nname: "top"\n'
    block = drop_fields(text, [("GpuDeviceInfoProto", "extra")])
    assert "extra" not in block and "a: 1" not in block and block.count("}") == text.count("}") - 1
    assert "core_count: 1" in block and 'name: "top"' in block


@pytest.mark.parametrize(("version", "release"), [("0.9.2", (0, 9, 2)), ("0.10.2", (0, 10, 2)),
                                                  ("0.8.0rc1", (0, 8, 0)), ("0.10.2.dev20260101", (0, 10, 2)),
                                                  ("1", (1,))])
def test_release(version: str, release: tuple[int, ...]) -> None:
    assert targets.release(version) == release


def test_gpus_before_jaxlib_09_compile_without_autotuning(monkeypatch: pytest.MonkeyPatch) -> None:
    gpu, cpu, tpu = TARGETS["gpu:h100"], TARGETS["cpu"], TARGETS["tpu:v5e"]
    monkeypatch.setattr(plugins, "env_version", lambda dist: "0.8.3")
    assert lowering.compile_options(gpu, {}) == {"xla_gpu_autotune_level": "0"}
    assert lowering.compile_options(gpu, {"xla_gpu_autotune_level": "4", "a": "b"}) == {
        "xla_gpu_autotune_level": "4", "a": "b"}
    assert lowering.compile_options(cpu, {}) == {} and lowering.compile_options(tpu, {}) == {}
    monkeypatch.setattr(plugins, "env_version", lambda dist: "0.9.0")
    assert lowering.compile_options(gpu, {"a": "b"}) == {"a": "b"}


def test_a_jax_older_than_supported_is_named_with_the_range(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugins, "env_version", lambda dist: {"jax": "0.8.1", "jaxlib": "0.7.2"}[dist])
    message = TARGETS["gpu:h100"].missing_message()
    assert not TARGETS["cpu"].available()
    assert "jaxlib 0.7.2" in message and "jax 0.8.1" not in message and targets.OLDEST_JAX in message
    assert all(v in message for v in targets.TESTED_JAX)


def test_a_refused_target_is_missing_with_what_the_worker_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(targets, "_REFUSED", {})
    if not TARGETS["gpu:l4"].available():
        pytest.skip(TARGETS["gpu:l4"].missing_message())
    targets.refuse("gpu:l4", "the GPU compiler of jaxlib 9.9 does not accept it")
    assert not TARGETS["gpu:l4"].available() and TARGETS["gpu:h100"].available()
    assert TARGETS["gpu:l4"].missing_message() == (
        "target gpu:l4 is not supported here: the GPU compiler of jaxlib 9.9 does not accept it")


PROBE = r'''
import json, sys
from sphinx_jaxhlo.compiler import lowering
from sphinx_jaxhlo.core import targets
import jax, jax.numpy as jnp

name = sys.argv[1]
text = targets.gpu_target_config(targets.TARGETS[name].gpu_target_file)
# a field no XLA knows, inside the device info and inside a one-line message
text = text.replace("gpu_device_info {", "gpu_device_info {\n  surely_unknown_field: 7", 1)
text = text.replace("cuda_compute_capability { major:", "cuda_compute_capability { made_up: 1 major:", 1)
lowering.gpu_target_config = lambda file: text
target = targets.TARGETS[name]
spec = jax.ShapeDtypeStruct((256, 64), jnp.float32)
lowered, compiled = lowering.compile_for(target, jax.jit(lambda a: jnp.sum(jnp.cos(a @ a.T))), (spec,), {}, {})
out = {"dropped": lowering.DROPPED_FIELDS[name], "temp": compiled.memory_analysis().temp_size_in_bytes}
try:
    lowering.gpu_target_config = lambda file: text.replace('platform_name: "CUDA"', 'platform_name: CUDA {')
    lowering._DEVICES.clear()
    lowering.devices_for(target)
except lowering.UnsupportedTargetError as exc:
    out["refused"] = str(exc)
print("RESULT " + json.dumps(out))
'''


@pytest.mark.slow
def test_fields_the_installed_xla_does_not_know_are_left_out() -> None:
    """A real GPU compile with the installed jaxlib, from a description with
    two fields no XLA knows: both are learned from the parser and left out;
    a description broken otherwise is one UnsupportedTargetError naming jaxlib."""
    target = TARGETS["gpu:h100"]
    if not target.available():
        pytest.skip(target.missing_message())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    lowering.prepare_environment(env)
    run = subprocess.run([sys.executable, "-c", PROBE, "gpu:h100"], capture_output=True, text=True, env=env,
                         timeout=300)
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert run.returncode == 0 and lines, run.stderr[-3000:]
    out = json.loads(lines[-1].removeprefix("RESULT "))
    dropped = [tuple(pair) for pair in out["dropped"]]
    assert ("GpuDeviceInfoProto", "surely_unknown_field") in dropped
    assert ("CudaComputeCapabilityProto", "made_up") in dropped
    assert out["temp"] > 0
    assert f"jaxlib {plugins.env_version('jaxlib')}" in out["refused"] and "gpu:h100" in out["refused"]
    # what the parser said about the unknown fields is not repeated on stderr
    assert "surely_unknown_field" not in run.stderr


def test_the_declared_range_is_the_one_the_code_and_ci_use() -> None:
    """pyproject.toml's lower bounds, the targets' OLDEST_JAX and the releases
    ``nox -s compat`` checks say the same."""
    import ast
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert f"jax>={targets.OLDEST_JAX}" in project["dependencies"]
    assert f"jaxlib>={targets.OLDEST_JAX}" in project["dependencies"]
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    values = {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
              if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
              and node.targets[0].id in ("COMPAT_JAX", "DRIFT_JAX")}
    assert values["COMPAT_JAX"] == targets.TESTED_JAX
    assert set(values["DRIFT_JAX"]) < set(targets.TESTED_JAX)
    assert targets.release(targets.TESTED_JAX[0]) >= targets.release(targets.OLDEST_JAX)
