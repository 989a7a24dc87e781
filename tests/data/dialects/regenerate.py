"""Regenerate the real modules in ``tests/data/dialects/``: host offloading.

Two programs, compiled deviceless for the H100 and the TPU v5e, as
``compiled.as_text()`` writes them:

- ``host_offload``: a function under ``compute_on('device_host')``.  XLA runs
  it as a computation on the host thread (``}, execution_thread="host"``),
  started by a ``custom-call-start`` with ``async_execution_thread="host"``.
- ``remat_offload``: the gradient of a checkpointed layer whose activation is
  offloaded to pinned host memory: the stored activation has an ``S(5)``
  layout (XLA's host memory space).

For the H100, ``host_offload`` is also kept as XLA's own dump writes it
(``xla_dump_to``, the ``*after_optimizations.txt`` file):
``gpu_h100__host_offload.dump.txt``.

Run from the repository root with the GPU and TPU compilers installed::

    python tests/data/dialects/regenerate.py              # both targets
    python tests/data/dialects/regenerate.py --only gpu:h100
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent

SOURCE = '''
import jax
import jax.numpy as jnp
from jax.ad_checkpoint import checkpoint_name
from jax.experimental.compute_on import compute_on


def host_offload(x):
    @compute_on("device_host")
    @jax.jit
    def on_host(y):
        return jnp.sin(y) * 2.0

    return jnp.sum(on_host(jnp.cos(x)) + 1.0)


def remat_offload(w, x):
    def layer(w, x):
        h = checkpoint_name(jnp.tanh(x @ w), "h")
        return jnp.sum(jnp.sin(h) @ w)

    policy = jax.checkpoint_policies.save_and_offload_only_these_names(
        names_which_can_be_saved=[], names_which_can_be_offloaded=["h"],
        offload_src="device", offload_dst="pinned_host")
    return jax.grad(jax.checkpoint(layer, policy=policy))(w, x)
'''

PROGRAMS = {
    "host_offload": [(1024, 256)],
    "remat_offload": [(1024, 1024), (2048, 1024)],
}
TARGETS = {"gpu:h100": "gpu_h100", "tpu:v5e": "tpu_v5e"}


def worker(target_name: str) -> None:
    import jax
    import jax.numpy as jnp
    from jax.extend.source_info_util import register_exclusion

    from sphinx_jaxhlo.compiler import lowering
    from sphinx_jaxhlo.core import targets

    register_exclusion(str(Path(__file__).resolve()))
    namespace: dict[str, object] = {}
    exec(compile(SOURCE, "example.py", "exec"), namespace)
    target = targets.get_target(target_name)
    for name, shapes in PROGRAMS.items():
        specs = [jax.ShapeDtypeStruct(shape, jnp.float32) for shape in shapes]
        _, compiled = lowering.compile_for(target, jax.jit(namespace[name]), specs, {}, {})
        (HERE / f"{TARGETS[target_name]}__{name}.txt").write_text(compiled.as_text())
        print(target_name, name, "written")
        if target_name == "gpu:h100" and name == "host_offload":
            folder = tempfile.mkdtemp()
            try:
                lowering.compile_for(target, jax.jit(namespace[name]), specs, {}, {"xla_dump_to": folder})
                (dump,) = Path(folder).glob("*after_optimizations.txt")
                shutil.copyfile(dump, HERE / f"{TARGETS[target_name]}__{name}.dump.txt")
            finally:
                shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    from sphinx_jaxhlo.compiler import lowering

    env = dict(os.environ)
    lowering.prepare_environment(env)
    for target_name in sys.argv[2:] or TARGETS:
        subprocess.run([sys.executable, __file__, target_name], env=env, check=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] != "--only":
        worker(sys.argv[1])
    else:
        main()
