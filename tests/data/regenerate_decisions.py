"""Regenerate the stored decision records in ``tests/data/decisions/``.

The tests of XLA's decision records (``tests/test_decisions.py``) read what XLA records of its
fusion decisions for the seed's ``with_dot`` (``docs/examples/seed.py``,
f32[100000,3] and f32[50000,3]), compiled as ``seed.py``.  For each target
it writes, in ``decisions/<target with ':' replaced by '_'>/``:

- ``optimized.txt``: ``compiled.as_text()``;
- ``record.txt`` (GPU: the ``*.priority_fusion_dump.txt``) or
  ``record.html`` (CPU, TPU: the fusion visualization of the entry computation);
- ``after_pass.txt``: the module right after the fusion pass, where XLA dumps it;
- ``versions.json``: the packages that compiled it.

Run it with the compilers installed::

    python tests/data/regenerate_decisions.py                  # cpu and gpu:h100
    python tests/data/regenerate_decisions.py --targets tpu:v5e
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

# these imports need the path above (E402); they import no jax
from sphinx_jaxhlo.compiler import lowering  # noqa: E402
from sphinx_jaxhlo.core import compilers as plugins  # noqa: E402
from sphinx_jaxhlo.core import targets  # noqa: E402
from sphinx_jaxhlo.hlo.decisions.collect import collection_options  # noqa: E402
from sphinx_jaxhlo.hlo.decisions.records import CPU_PASS  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE / "decisions"
SEED = ROOT / "docs" / "examples" / "seed.py"


def regenerate(target_name: str) -> str:
    import jax
    import jax.numpy as jnp

    target = targets.get_target(target_name)
    folder = OUT / target.name.replace(":", "_")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    namespace: dict[str, object] = {"__name__": "seed"}
    exec(compile(SEED.read_text(encoding="utf-8"), "seed.py", "exec"), namespace)
    specs = [jax.ShapeDtypeStruct((100000, 3), jnp.float32), jax.ShapeDtypeStruct((50000, 3), jnp.float32)]
    dump = tempfile.mkdtemp(prefix="jaxhlo-decisions-")
    try:
        lowered = lowering.lower_for(target, jax.jit(namespace["with_dot"]), specs, {})
        compiled = lowered.compile(collection_options(target.platform, dump))
        text = compiled.as_text()
        (folder / "optimized.txt").write_text(text, encoding="utf-8")
        names = sorted(os.listdir(dump))
        if target.platform == "cuda":
            record = [n for n in names if n.endswith(".priority_fusion_dump.txt")]
            after = [n for n in names if ".after_priority-fusion." in n]
            shutil.copy(Path(dump) / record[-1], folder / "record.txt")
        else:
            record = [n for n in names if n.startswith("main") and n.endswith("_fusion.html")]
            after = [n for n in names if f".after_{CPU_PASS}." in n] if target.platform == "cpu" else []
            shutil.copy(Path(dump) / record[-1], folder / "record.html")
        if after:
            shutil.copy(Path(dump) / after[-1], folder / "after_pass.txt")
    finally:
        shutil.rmtree(dump, ignore_errors=True)
    (folder / "versions.json").write_text(json.dumps(targets.package_versions(), indent=1, sort_keys=True) + "\n",
                                          encoding="utf-8")
    return f"{target.name}: {', '.join(sorted(p.name for p in folder.iterdir()))}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="cpu,gpu:h100", help="comma-separated target names")
    options = parser.parse_args(argv)
    chosen = [targets.get_target(t).name for t in options.targets.split(",") if t.strip()]
    missing = [targets.TARGETS[t].missing_message() for t in chosen if not targets.TARGETS[t].available()]
    if missing:
        print("\n".join(missing), file=sys.stderr)
        return 1
    lowering.prepare_environment(os.environ)
    sys.path[:0] = [str(folder) for folder in plugins.worker_path()]
    from jax.extend.source_info_util import register_exclusion

    register_exclusion(str(Path(__file__).resolve()))
    for name in chosen:
        print(regenerate(name), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
