"""What a TPU compile spends its time on, and which options cut it without
changing what the pages show.

Compiles every example of the guide (found in ``docs/`` as the build's
forecast finds them) and every program of the corpus
(``tests/data/corpus/programs.py``) for ``tpu:v5e``, once per configuration
(compile options, or another topology), in one process per configuration,
and records for each compile: the seconds and the CPU seconds of lowering
and of ``compile()``, a digest of ``compiled.as_text()`` with its metadata
stripped, and ``memory_analysis()``.  A configuration is kept only if every
digest and every memory figure equals the baseline's.

    python benchmarks/tpu_compile.py --configs baseline,NAME ... [--only PATTERN] [--out FILE]

``--stats`` prints libtpu's own compilation statistics for ``--only``'s examples.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

#: Configurations tried: compile options for ``Lowered.compile``, or a topology.
CONFIGS: dict[str, dict[str, Any]] = {
    "baseline": {},
    # the same chip described as one chip of a 2x2 host (libtpu's default host)
    "topology-2x2": {"topology": "v5e:2x2"},
    # LLO (after the optimized HLO): fewer scheduling passes over the machine code
    # libtpu's own flags (LIBTPU_INIT_ARGS; compile() refuses them as options)
    "no-vliw-scheduler": {"libtpu": "--xla_jf_vliw_scheduler=false"},
    "no-critical-path-scheduler": {"libtpu": "--xla_jf_critical_path_scheduler=false"},
    "llo-threads-1": {"libtpu": "--xla_jf_internal_num_threads=1"},
    "hlo-parallel-compile": {"libtpu": "--xla_tpu_impure_hlo_parallel_compile=true"},
    "no-latency-hiding-scheduler": {"libtpu": "--xla_tpu_enable_latency_hiding_scheduler=false"},
    # XLA's generic option
    "backend-opt-level-0": {"options": {"xla_backend_optimization_level": "0"}},
}

_METADATA = re.compile(r",? ?metadata=\{[^{}]*\}")
_STACK = re.compile(r"^(FileNames|FunctionNames|FileLocations|StackFrames)\n(?:\s+\d+ .*\n)*", re.MULTILINE)


def stripped(text: str) -> str:
    """Optimized HLO without source metadata (which names files and lines, not decisions)."""
    return _STACK.sub("", _METADATA.sub("", text))


def examples(only: str | None) -> list[dict[str, Any]]:
    """(name, request JSON) of every guide example's TPU compile and every corpus program."""
    from sphinx_jaxhlo.core.example import OptionProblem, parse_example
    from sphinx_jaxhlo.core.request import CompileRequest
    from sphinx_jaxhlo.core.settings import Settings
    from sphinx_jaxhlo.core.targets import get_target
    from sphinx_jaxhlo.pipeline.build import Build, Warnings
    from sphinx_jaxhlo.pipeline.plan import plan
    from sphinx_jaxhlo.pipeline.scan import find_examples

    build = Build(Settings(), Warnings(), compile=lambda batch: [])
    tpu = get_target("tpu:v5e")
    out = []
    for path in sorted((REPO / "docs").rglob("*.md")):
        if "_build" in path.parts:
            continue
        for n, found in enumerate(find_examples(path.read_text(encoding="utf-8"), markdown=True), 1):
            source, name = found.content, "example.py"
            if found.argument:
                file = (path.parent / found.argument) if not found.argument.startswith("/") else \
                    REPO / "docs" / found.argument.lstrip("/")
                source, name = file.read_text(encoding="utf-8"), file.name
            try:  # the example as the directive reads it, planned as a build plans it
                example = parse_example(source, found.options, source_name=name).with_chunk_variants()
            except OptionProblem:
                continue
            if example.targets is not None and "tpu:v5e" not in example.targets:
                continue
            for group in plan(build, example, [tpu], []):
                for job in group:
                    label = f"{path.relative_to(REPO / 'docs').with_suffix('')}#{n}:{job.request.function or 'default'}"
                    out.append({"name": label, "request": job.request.to_json()})
    sys.path.insert(0, str(REPO / "tests" / "data" / "corpus"))
    from programs import PROGRAMS  # type: ignore[import-not-found]

    from sphinx_jaxhlo.core.specs import parse_args

    for p in PROGRAMS:
        if "tpu:v5e" not in p.targets:
            continue
        req = CompileRequest(source=p.source, function="f", specs=parse_args(p.args), target="tpu:v5e",
                             static=p.static, donate=p.donate)
        out.append({"name": f"corpus/{p.name}", "request": req.to_json()})
    if only:
        out = [e for e in out if re.search(only, e["name"])]
    return out


def measure(config: str, items: list[dict[str, Any]], stats: bool) -> list[dict[str, Any]]:
    """In this process (its environment prepared): compile each item once with ``config``."""
    import ast

    import jax
    from jax.experimental import topologies

    from sphinx_jaxhlo.compiler import lowering
    from sphinx_jaxhlo.compiler.arguments import to_shape_dtype_structs
    from sphinx_jaxhlo.compiler.compiling import jit_function
    from sphinx_jaxhlo.core import targets as targets_mod
    from sphinx_jaxhlo.core.specs import ArgSpecs

    setup = CONFIGS[config]
    options = dict(setup.get("options", {}))
    target = targets_mod.get_target("tpu:v5e")
    if "topology" in setup:
        topo = topologies.get_topology_desc(setup["topology"], "tpu")
        device = topo.devices[0]
    else:
        device = lowering.device_for(target)
    sharding = jax.sharding.SingleDeviceSharding(device)
    out = []
    # warm: the first compile of a process sets libtpu up
    jax.jit(lambda x: x + 1).trace(jax.ShapeDtypeStruct((8,), "float32", sharding=sharding)).lower(
        lowering_platforms=("tpu",)).compile()
    for item in items:
        req = item["request"]
        ns: dict[str, Any] = {"__name__": "__jaxhlo_example__"}
        exec(compile(req["source"], req["source_name"], "exec"), ns)
        fn_name = req["function"] or [n for n, v in ns.items() if callable(v) and getattr(v, "__module__", "")
                                      == "__jaxhlo_example__"][-1]
        static = {k: ast.literal_eval(v) for k, v in req["static"]}
        args, kwargs = to_shape_dtype_structs(ArgSpecs.from_json(req["specs"]))
        kwargs.update(static)
        args = [a.update(sharding=sharding) if isinstance(a, jax.ShapeDtypeStruct) else a for a in args]
        kwargs = {k: v.update(sharding=sharding) if isinstance(v, jax.ShapeDtypeStruct) else v
                  for k, v in kwargs.items()}
        jitted = jit_function(ns[fn_name], static_argnames=tuple(static), donate=tuple(req["donate"]))
        row: dict[str, Any] = {"name": item["name"], "config": config}
        t0, c0 = time.perf_counter(), time.process_time()
        lowered = jitted.trace(*args, **kwargs).lower(lowering_platforms=("tpu",))
        t1, c1 = time.perf_counter(), time.process_time()
        try:
            compiled = lowered.compile({**dict(req["xla_flags"]), **options} or None)
        except Exception as exc:
            row["error"] = str(exc).split("\n")[0][:200]
            compiled = None
        t2, c2 = time.perf_counter(), time.process_time()
        row.update(lower_s=t1 - t0, lower_cpu_s=c1 - c0, compile_s=t2 - t1, compile_cpu_s=c2 - c1)
        if compiled is not None:
            row["hlo_sha"] = hashlib.sha256(stripped(compiled.as_text()).encode()).hexdigest()[:16]
            m = compiled.memory_analysis()
            row["memory"] = {k: getattr(m, k, None) for k in (
                "argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes",
                "peak_memory_in_bytes", "generated_code_size_in_bytes")}
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


#: The guide's slowest TPU compiles: chunked loops with chunks of 10000, complex_exp, a scan's gradient.
SLOWEST = r"bounded#4|cases#1:complex_exp|remat#1:grad_scan$"


def run(configs: list[str], only: str | None, out: Path, stats: bool = False) -> list[dict[str, Any]]:
    """Compile the examples once per configuration, each in a process of its own; the rows measured."""
    from sphinx_jaxhlo.compiler.lowering import prepare_environment

    items = examples(only)
    env = dict(os.environ)
    prepare_environment(env)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    rows = []
    with open(out, "a", encoding="utf-8") as stored:
        for config in configs:
            spec = Path(f"/tmp/tpu-compile-{os.getpid()}-{config}.json")
            spec.write_text(json.dumps({"config": config, "items": items}))
            flags = [CONFIGS[config].get("libtpu", ""), "--xla_jf_print_compilation_stats=true" if stats else ""]
            env["LIBTPU_INIT_ARGS"] = " ".join(f for f in flags if f)
            command = [sys.executable, __file__, "--child", str(spec), *(["--stats"] if stats else [])]
            proc = subprocess.run(command, env=env, capture_output=True, text=True)
            for line in proc.stdout.splitlines():
                if line.startswith("{"):
                    stored.write(line + "\n")
                    rows.append(json.loads(line))
            if proc.returncode:
                print(proc.stderr[-3000:], file=sys.stderr)
            spec.unlink()
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per configuration: CPU seconds of each compile, and whether the optimized
    HLO (metadata stripped) and every memory figure equal the baseline's."""
    base = {r["name"]: r for r in rows if r["config"] == "baseline"}
    out: dict[str, Any] = {}
    for row in rows:
        entry = out.setdefault(row["config"], {"compile_cpu_s": {}, "hlo_identical": True, "memory_identical": True})
        entry["compile_cpu_s"][row["name"]] = round(row["compile_cpu_s"], 2)
        before = base.get(row["name"])
        if before is not None:
            entry["hlo_identical"] &= row.get("hlo_sha") == before.get("hlo_sha")
            entry["memory_identical"] &= row.get("memory") == before.get("memory")
    for entry in out.values():
        entry["compile_cpu_s_total"] = round(sum(entry["compile_cpu_s"].values()), 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", default="baseline")
    parser.add_argument("--only")
    parser.add_argument("--out", default=str(HERE / "tpu_compile.jsonl"))
    parser.add_argument("--stats", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        items = json.loads(Path(opts.child).read_text())
        measure(items["config"], items["items"], opts.stats)
        return
    rows = run(opts.configs.split(","), opts.only, Path(opts.out), opts.stats)
    print(json.dumps(summary(rows), indent=2))


if __name__ == "__main__":
    main()
