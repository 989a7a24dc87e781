"""What collecting XLA's buffer assignment adds to a report (what is live at the peak, goal: at most 10 %).

Runs the compile worker's own request (``sphinx_jaxhlo.compiler.worker.compile_request``:
trace, lower, compile with ``xla_dump_to``, read the buffer assignment and live ranges,
analyse, make the live list) in one process, alternating without and with the collection
(``JAXHLO_LIVE_BUFFERS=0`` and ``1``, the default), so that load from elsewhere falls on
both; jax's caches are cleared before each round, so each compiles afresh.  On the GPU the
compile dumps for the fusion decisions anyway (``JAXHLO_FUSION_DECISIONS``, left at its
default): there the cost is reading the record and making the list; on the CPU and the TPU
it is the dump too.  Prints, per target and program, the median seconds of each, their
ratio and the extra milliseconds per report, in wall time and in this process's CPU time
(XLA's threads included), and writes them to ``benchmarks/live_results.json``; it also
checks that the optimized HLO and memory figures are the same both ways.

    python benchmarks/live_overhead.py                       # cpu and gpu:h100
    python benchmarks/live_overhead.py --targets tpu:v5e --rounds 3
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from decisions_overhead import PROGRAMS  # noqa: E402

from sphinx_jaxhlo.compiler import lowering  # noqa: E402  (imports no jax)
from sphinx_jaxhlo.core import compilers as plugins  # noqa: E402
from sphinx_jaxhlo.core import targets  # noqa: E402


def measure(target: str, program: str, rounds: int) -> dict[str, object]:
    import jax

    from sphinx_jaxhlo.compiler import worker
    from sphinx_jaxhlo.compiler.compiling import BUFFERS_VARIABLE
    from sphinx_jaxhlo.core.request import CompileRequest
    from sphinx_jaxhlo.core.specs import parse_args

    source, function, args = PROGRAMS[program]
    request = CompileRequest(source=source, function=function, specs=parse_args(args), target=target,
                             source_name="example.py").to_json()
    times: dict[str, list[float]] = {"0": [], "1": []}
    cpu: dict[str, list[float]] = {"0": [], "1": []}
    seen: dict[str, object] = {}
    for state in ("0", "1"):  # warm-up of both paths
        os.environ[BUFFERS_VARIABLE] = state
        worker.compile_request(request)
    for _ in range(rounds):
        for state in ("0", "1"):
            os.environ[BUFFERS_VARIABLE] = state
            jax.clear_caches()
            wall, proc = time.perf_counter(), time.process_time()
            report = worker.compile_request(request)
            times[state].append(time.perf_counter() - wall)
            cpu[state].append(time.process_time() - proc)
            figures = (report.hlo, report.memory)
            if seen.setdefault(state, figures) != figures:
                raise SystemExit(f"{target} {program}: two compiles of the same request differ")
            if state == "1":
                peak = report.live_at_peak
                seen["listed"] = (f"{len(peak.buffers)} buffers at step {peak.step} of {peak.steps}" if peak
                                  else report.buffer_assignment_note)
    if seen["0"] != seen["1"]:
        raise SystemExit(f"{target} {program}: collecting the buffer assignment changed the program")
    plain, collected = statistics.median(times["0"]), statistics.median(times["1"])
    plain_cpu, collected_cpu = statistics.median(cpu["0"]), statistics.median(cpu["1"])
    return {"target": target, "program": program, "rounds": rounds, "plain_s": plain, "collected_s": collected,
            "ratio": collected / plain, "extra_ms": 1000 * (collected - plain),
            "plain_cpu_s": plain_cpu, "collected_cpu_s": collected_cpu, "cpu_ratio": collected_cpu / plain_cpu,
            "extra_cpu_ms": 1000 * (collected_cpu - plain_cpu),
            "min_ratio": min(times["1"]) / min(times["0"]), "min_cpu_ratio": min(cpu["1"]) / min(cpu["0"]),
            "listed": seen["listed"], "goal": 1.10}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="cpu,gpu:h100")
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args(argv)
    chosen = [targets.get_target(t).name for t in options.targets.split(",") if t.strip()]
    lowering.prepare_environment(os.environ)
    sys.path[:0] = [str(folder) for folder in plugins.worker_path()]
    import jax  # noqa: F401  (once, as the worker does)

    lowering.exclude_own_frames()
    out = ROOT / "benchmarks" / "live_results.json"
    results = json.loads(out.read_text(encoding="utf-8")) if out.exists() else []
    for target in chosen:
        for program in [p.strip() for p in options.programs.split(",") if p.strip()]:
            row = measure(target, program, options.rounds)
            results = [r for r in results if (r["target"], r["program"]) != (target, program)] + [row]
            print(f"{target:<9} {program:<14} plain {row['plain_s']:.3f} s, collected {row['collected_s']:.3f} s: "
                  f"{row['ratio']:.3f}x wall ({row['extra_ms']:+.0f} ms), {row['cpu_ratio']:.3f}x CPU "
                  f"({row['extra_cpu_ms']:+.0f} ms) (medians); fastest rounds {row['min_ratio']:.3f}x wall, "
                  f"{row['min_cpu_ratio']:.3f}x CPU  ({row['listed']})", flush=True)
            out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
