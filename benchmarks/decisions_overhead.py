"""What collecting XLA's fusion decisions adds to a compile (goal: at most 10 %).

Runs the compile worker's own request (``sphinx_jaxhlo.compiler.worker.compile_request``:
trace, lower, compile, read the record, map and attach it, analyse) in one
process, alternating without and with collection
(``JAXHLO_FUSION_DECISIONS=0`` and ``1``, the default, which collects the
GPU's record; ``--mode all`` measures the CPU's and TPU's costly ones), so that load from elsewhere falls on
both; each round compiles a fresh trace (jax caches nothing between them).
Prints, per target and program, the median seconds of each and their ratio,
in wall time and in this process's CPU time (XLA's threads included), the
ratio of the fastest rounds (the least disturbed by other load), and
writes them to ``benchmarks/decisions_results.json``.  It also checks that the
optimized HLO and memory figures are the same both ways.

    python benchmarks/decisions_overhead.py                     # cpu and gpu:h100
    python benchmarks/decisions_overhead.py --targets cpu --mode all
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sphinx_jaxhlo.compiler import lowering  # noqa: E402  (imports no jax)
from sphinx_jaxhlo.core import compilers as plugins  # noqa: E402
from sphinx_jaxhlo.core import targets  # noqa: E402  (needs the path above; imports no jax)

SEED = (ROOT / "docs" / "examples" / "seed.py").read_text(encoding="utf-8")

#: A larger program: a 6-layer MLP with a softmax cross-entropy, its gradient.
MLP = """\
import jax
import jax.numpy as jnp


def loss(ws, x, y):
    h = x
    for w in ws:
        h = jax.nn.gelu(h @ w)
    logits = h @ ws[0].T
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


def grad(ws, x, y):
    return jax.grad(loss)(ws, x, y)
"""

PROGRAMS = {
    "seed with_dot": (SEED, "with_dot", "f32[100000,3], f32[50000,3]"),
    "mlp grad": (MLP, "grad", "[" + ", ".join(["f32[1024,1024]"] * 6) + "], f32[512,1024], f32[512,1024]"),
}


def measure(target: str, program: str, rounds: int, mode: str = "1") -> dict[str, object]:
    from sphinx_jaxhlo.compiler import worker
    from sphinx_jaxhlo.compiler.compiling import DECISIONS_VARIABLE
    from sphinx_jaxhlo.core.request import CompileRequest
    from sphinx_jaxhlo.core.specs import parse_args

    source, function, args = PROGRAMS[program]
    request = CompileRequest(source=source, function=function, specs=parse_args(args), target=target,
                             source_name="example.py").to_json()
    times: dict[str, list[float]] = {"0": [], mode: []}
    cpu: dict[str, list[float]] = {"0": [], mode: []}
    seen: dict[str, object] = {}
    for state in ("0", mode):  # warm-up of both paths
        os.environ[DECISIONS_VARIABLE] = state
        worker.compile_request(request)
    for _ in range(rounds):
        for state in ("0", mode):
            os.environ[DECISIONS_VARIABLE] = state
            wall, proc = time.perf_counter(), time.process_time()
            report = worker.compile_request(request)
            times[state].append(time.perf_counter() - wall)
            cpu[state].append(time.process_time() - proc)
            figures = (report.hlo, report.memory)
            if seen.setdefault(state, figures) != figures:
                raise SystemExit(f"{target} {program}: two compiles of the same request differ")
            if state == mode:
                seen["note"] = report.fusion_decisions_note
    if seen["0"] != seen[mode]:
        raise SystemExit(f"{target} {program}: collecting the decisions changed the program")
    plain, collected = statistics.median(times["0"]), statistics.median(times[mode])
    plain_cpu, collected_cpu = statistics.median(cpu["0"]), statistics.median(cpu[mode])
    return {"target": target, "program": program, "mode": mode, "rounds": rounds, "plain_s": plain,
            "collected_s": collected,
            "ratio": collected / plain, "plain_cpu_s": plain_cpu, "collected_cpu_s": collected_cpu,
            "cpu_ratio": collected_cpu / plain_cpu,
            # the fastest round of each: the least disturbed by other load
            "min_ratio": min(times[mode]) / min(times["0"]), "min_cpu_ratio": min(cpu[mode]) / min(cpu["0"]),
            "note": seen["note"], "goal": 1.10}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="cpu,gpu:h100")
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--mode", default="1", help="JAXHLO_FUSION_DECISIONS to measure: 1 (default) or all")
    options = parser.parse_args(argv)
    chosen = [targets.get_target(t).name for t in options.targets.split(",") if t.strip()]
    lowering.prepare_environment(os.environ)
    sys.path[:0] = [str(folder) for folder in plugins.worker_path()]
    import jax  # noqa: F401  (once, as the worker does)

    lowering.exclude_own_frames()
    results = []
    for target in chosen:
        for program in [p.strip() for p in options.programs.split(",") if p.strip()]:
            row = measure(target, program, options.rounds, options.mode)
            results.append(row)
            print(f"{target:<9} {program:<14} plain {row['plain_s']:.3f} s, collected {row['collected_s']:.3f} s: "
                  f"{row['ratio']:.3f}x wall, {row['cpu_ratio']:.3f}x CPU (medians); fastest rounds "
                  f"{row['min_ratio']:.3f}x wall, {row['min_cpu_ratio']:.3f}x CPU  ({row['note']})", flush=True)
    out = ROOT / "benchmarks" / "decisions_results.json"
    out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
