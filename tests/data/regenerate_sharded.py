"""Regenerate ``tests/data/sharded/``: the sharded programs compiled by jax alone, and XLA's own figures.

For every case of ``sharded/cases.py`` (the functions are in
``tests/roots/test-sharding/programs.py``) and every target of several
devices (``gpu:h100x8``, ``tpu:v5e-8``), this compiles the program the plain
way: ``jax.make_mesh`` over the target's deviceless devices, a
``NamedSharding`` per argument, ``jax.set_mesh`` around
``jax.jit(f).trace(*specs).lower(...).compile()``, with no code of the
extension between jax and the figures (the extension only parses the spec
text and describes the devices).  It writes:

- ``sharded/<target>/<function>.txt``: ``compiled.as_text()``;
- ``sharded/xla.json``: per target and function, ``memory_analysis()``, the
  output shardings, and the collectives counted from XLA's own module
  objects (``compiled.runtime_executable().hlo_modules()``): every
  instruction whose opcode is a collective or its ``-start``, counted once per
  kind and ``channel_id``.

Run with the GPU and TPU compilers installed::

    python tests/data/regenerate_sharded.py
    python tests/data/regenerate_sharded.py --targets gpu:h100x8 --cases contract,rows
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent / "sharded"
PROGRAMS = ROOT / "tests" / "roots" / "test-sharding" / "programs.py"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from cases import CASES, TARGETS  # noqa: E402

from sphinx_jaxhlo.compiler import lowering  # noqa: E402
from sphinx_jaxhlo.core import targets  # noqa: E402

FIGURES = HERE / "xla.json"
#: XLA's opcode names of collectives (``HloOpcode.kAllGatherStart`` -> ``all-gather``).
KINDS = {"kAllGather": "all-gather", "kAllReduce": "all-reduce", "kReduceScatter": "reduce-scatter",
         "kAllToAll": "all-to-all", "kRaggedAllToAll": "ragged-all-to-all",
         "kCollectivePermute": "collective-permute", "kCollectiveBroadcast": "collective-broadcast"}


def target_folder(target: str) -> Path:
    return HERE / target.replace(":", "_")


def memory_figures(compiled: Any) -> dict[str, int | None]:
    stats = compiled.memory_analysis()
    names = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes",
             "generated_code_size_in_bytes", "peak_memory_in_bytes")
    return {name: (int(v) if (v := getattr(stats, name, None)) is not None else None) for name in names}


def count_collectives(compiled: Any) -> dict[str, int]:
    """Collectives by kind, from XLA's module objects: opcodes and channel ids."""
    seen: set[tuple[str, str]] = set()
    for module in compiled.runtime_executable().hlo_modules():
        for computation in module.computations():
            for inst in computation.instructions():
                opcode = str(inst.opcode).rsplit(".", 1)[-1]
                kind = KINDS.get(opcode.removesuffix("Start"))
                if kind is None or opcode.endswith("Done"):
                    continue
                channel = re.search(r"channel_id=(\d+)", inst.to_string())
                seen.add((kind, channel.group(1) if channel else f"{computation.name}/{inst.name}"))
    counts: dict[str, int] = {}
    for kind, _ in seen:
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def compile_plain(function: str, args_text: str, mesh_text: str, target_name: str) -> tuple[Any, float]:
    """Compile with jax alone (the reference the extension is compared with)."""
    import jax
    from jax.sharding import AxisType, NamedSharding, PartitionSpec

    from sphinx_jaxhlo.core.specs import parse_args, parse_mesh

    namespace: dict[str, Any] = {"__name__": "programs"}
    exec(compile(PROGRAMS.read_text(encoding="utf-8"), "programs.py", "exec"), namespace)
    mesh_spec = parse_mesh(mesh_text)
    target = targets.get_target(target_name)
    mesh = jax.make_mesh(tuple(s for _, s in mesh_spec.axes), mesh_spec.names,
                         (AxisType.Auto,) * len(mesh_spec.axes), devices=lowering.devices_for(target))
    structs = []
    for spec in parse_args(args_text).args:
        entries = [None if e is None else (e[0] if len(e) == 1 else e) for e in spec.partition or ()]
        structs.append(jax.ShapeDtypeStruct(spec.shape, jax.numpy.dtype(spec.numpy_dtype),
                                            sharding=NamedSharding(mesh, PartitionSpec(*entries))))
    start = time.perf_counter()
    with jax.set_mesh(mesh):
        lowered = jax.jit(namespace[function]).trace(*structs).lower(lowering_platforms=(target.platform,))
        compiled = lowered.compile()
    return compiled, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--cases", default="", help="comma-separated function names; default: all")
    options = parser.parse_args(argv)
    chosen = [targets.get_target(t).name for t in options.targets.split(",") if t.strip()]
    wanted = {c.strip() for c in options.cases.split(",") if c.strip()}
    missing = [targets.TARGETS[t].missing_message() for t in chosen if not targets.TARGETS[t].available()]
    if missing:
        print("\n".join(missing), file=sys.stderr)
        return 1
    lowering.prepare_environment(os.environ)
    from jax.extend.source_info_util import register_exclusion

    register_exclusion(str(Path(__file__).resolve()))  # only programs.py in the metadata
    figures: dict[str, Any] = json.loads(FIGURES.read_text()) if FIGURES.exists() else {}
    figures["versions"] = targets.package_versions()
    for target_name in chosen:
        folder = target_folder(target_name)
        folder.mkdir(parents=True, exist_ok=True)
        per_target = figures.setdefault(target_name, {})
        for case in CASES:
            if wanted and case.function not in wanted:
                continue
            compiled, seconds = compile_plain(case.function, case.args, case.mesh, target_name)
            (folder / f"{case.function}.txt").write_text(compiled.as_text(), encoding="utf-8")
            entry = {"seconds": round(seconds, 2), "memory": memory_figures(compiled),
                     "collectives": count_collectives(compiled),
                     "output_shardings": [str(s.spec) for s in
                                          __import__("jax").tree_util.tree_leaves(compiled.output_shardings)]}
            per_target[case.function] = entry
            print(f"{target_name:<11} {case.function:<20} {seconds:6.2f} s  temp "
                  f"{entry['memory']['temp_size_in_bytes']:,} B  {entry['collectives']}", flush=True)
            FIGURES.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
