"""Regenerate ``tests/data/verdicts/``: optimized HLO, XLA's figures and its fusion records.

For every program of ``tests/data/verdicts/programs.py`` and each of its
targets (``cpu``, ``gpu:h100``, ``tpu:v5e``), this compiles it the plain way,
``jax.jit(f).trace(*specs).lower(...).compile(...)``, and writes:

- ``verdicts/<target>/<program>.txt``: ``compiled.as_text()`` (or
  ``<program>.error.txt`` with the message of a failed compile);
- for the GPU, ``<program>.record.txt``: the fusion steps of XLA's
  priority-fusion record (``*.priority_fusion_dump.txt``; the device
  description and the module before the pass, which the reader skips, are
  left out) and ``<program>.after.txt``: the module right after that pass;
- ``verdicts/xla.json``: per target and program, ``memory_analysis()`` as XLA
  gives it, and the versions.

The compile options that make XLA write the record change what it writes, not
what it compiles (``tests/test_decisions.py`` checks it).  Run with the GPU and
TPU compilers installed::

    python tests/data/regenerate_verdicts.py                      # everything
    python tests/data/regenerate_verdicts.py --targets cpu --programs chamfer
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent / "verdicts"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from programs import PROGRAMS, Program  # noqa: E402

from sphinx_jaxhlo.compiler import lowering  # noqa: E402
from sphinx_jaxhlo.core import compilers as plugins  # noqa: E402
from sphinx_jaxhlo.core import targets  # noqa: E402
from sphinx_jaxhlo.hlo.decisions.collect import collection_options  # noqa: E402

DEFAULT_TARGETS = ("cpu", "gpu:h100", "tpu:v5e")
FIGURES = HERE / "xla.json"
MEMORY = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes",
          "generated_code_size_in_bytes", "peak_memory_in_bytes")


def compile_plain(program: Program, target_name: str, dump: str) -> tuple[Any | None, str | None]:
    """Compile with jax alone (and XLA's record options on the GPU)."""
    import jax

    from sphinx_jaxhlo.compiler.arguments import to_shape_dtype_structs
    from sphinx_jaxhlo.core.specs import parse_args

    namespace: dict[str, Any] = {"__name__": "example"}
    exec(compile(program.source, "example.py", "exec"), namespace)
    args, kwargs = to_shape_dtype_structs(parse_args(program.args))
    target = targets.get_target(target_name)
    device = lowering.device_for(target)
    if device is not None:
        sharding = jax.sharding.SingleDeviceSharding(device)
        args = jax.tree.map(lambda s: s.update(sharding=sharding), args)
    try:
        lowered = jax.jit(namespace["f"]).trace(*args, **kwargs).lower(lowering_platforms=(target.platform,))
        return lowered.compile(collection_options(target.platform, dump) or None), None
    except Exception as exc:  # a failed compile is a result to keep
        return None, str(exc)


def fusion_steps(record: str) -> str:
    """The ``fusion_steps`` of a priority-fusion record, in XLA's order."""
    parts = re.split(r"(?m)^(?=[A-Za-z_])", record)
    return "".join(p for p in parts if p.startswith("fusion_steps"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default=",".join(DEFAULT_TARGETS))
    parser.add_argument("--programs", default="", help="comma-separated names; default: all")
    options = parser.parse_args(argv)
    chosen = [targets.get_target(t).name for t in options.targets.split(",") if t.strip()]
    wanted = {p.strip() for p in options.programs.split(",") if p.strip()}
    missing = [targets.TARGETS[t].missing_message() for t in chosen if not targets.TARGETS[t].available()]
    if missing:
        print("\n".join(missing), file=sys.stderr)
        return 1
    lowering.prepare_environment(os.environ)
    sys.path[:0] = [str(folder) for folder in plugins.worker_path()]
    from jax.extend.source_info_util import register_exclusion

    register_exclusion(str(Path(__file__).resolve()))  # only example.py in the metadata
    figures: dict[str, Any] = json.loads(FIGURES.read_text()) if FIGURES.exists() else {}
    figures["versions"] = targets.package_versions()
    for target_name in chosen:
        folder = HERE / target_name.replace(":", "_")
        folder.mkdir(parents=True, exist_ok=True)
        per_target = figures.setdefault(target_name, {})
        for program in PROGRAMS:
            if target_name not in program.targets or (wanted and program.name not in wanted):
                continue
            for suffix in (".txt", ".error.txt", ".record.txt", ".after.txt"):
                (folder / f"{program.name}{suffix}").unlink(missing_ok=True)
            dump = tempfile.mkdtemp(prefix="jaxhlo-verdicts-")
            try:
                compiled, error = compile_plain(program, target_name, dump)
                if compiled is None:
                    assert error is not None
                    (folder / f"{program.name}.error.txt").write_text(error + "\n", encoding="utf-8")
                    per_target[program.name] = {"error": error.split(":", 1)[0]}
                    print(f"{target_name:<10} {program.name:<24} error", flush=True)
                    continue
                text = compiled.as_text()
                (folder / f"{program.name}.txt").write_text(text, encoding="utf-8")
                stats = compiled.memory_analysis()
                per_target[program.name] = {"memory": {k: (int(v) if (v := getattr(stats, k, None)) is not None
                                                           else None) for k in MEMORY}}
                names = sorted(os.listdir(dump))
                record = [n for n in names if n.endswith(".priority_fusion_dump.txt")]
                if record:
                    prefix = record[-1].removesuffix(".priority_fusion_dump.txt")
                    (folder / f"{program.name}.record.txt").write_text(
                        fusion_steps((Path(dump) / record[-1]).read_text(encoding="utf-8")), encoding="utf-8")
                    after = [n for n in names if n.startswith(prefix + ".") and ".after_priority-fusion." in n]
                    if after:
                        shutil.copy(Path(dump) / after[-1], folder / f"{program.name}.after.txt")
                temp = per_target[program.name]["memory"]["temp_size_in_bytes"]
                print(f"{target_name:<10} {program.name:<24} temp {temp:,} B", flush=True)
            finally:
                shutil.rmtree(dump, ignore_errors=True)
            FIGURES.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
