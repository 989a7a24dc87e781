"""Benchmarks of sphinx-jaxhlo, as ratios measured side by side in one run.

Run with ``nox -s bench`` (or ``python benchmarks/bench.py``).  Each figure is
a ratio of two timings taken on the same machine minutes apart, so noise from
other load mostly cancels; absolute seconds are printed for context.  Results go
to stdout and, as JSON, to ``benchmarks/results.json``.

Measures (the goals are from the project's issue tracker):

1. overhead per example, cold, against bare ``jit(f).trace(*specs).lower().compile()``
   in one warm process (goal: at most 1.15x);
2. a fully cached rebuild against the same pages with plain code blocks
   (goal: at most 1.25x, zero compiles, no jax import);
3. cold builds of 10, 50 and 100 examples on one target (goal: 100/10 at most 10.5x);
4. ``-j 2`` against ``-j 1``, cold, 50 examples (goal: at least 1.6x faster);
5. peak memory (RSS of the build and its workers) building the seed example (goal: under 1 GB);
6. the seed page as a MyST-NB notebook that calls the AOT API, cold and cached
   (goals: our cold build at most 0.5x theirs, our cached build at most 1.0x);
7. parsing optimized HLO text: megabytes per second on a 1 MB module, and the
   time for 4 MB against 1 MB (goal: at most 4.4x, linear).  ``--parse`` runs
   this one alone, in seconds.  (The test suite checks linearity by counting
   calls, not time: tests/test_hlo.py.)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
PY = sys.executable

SEED = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp

    def with_dot(pos, hkl):
        return jnp.sum(jax.vmap(lambda p: jnp.cos(jnp.dot(hkl, p)))(pos), axis=0)
    """)


def example(i: int) -> tuple[str, str]:
    """A small, distinct example: (source, args)."""
    src = textwrap.dedent(f"""\
        import jax.numpy as jnp

        def f{i}(x, w):
            return jnp.sum(jnp.cos(x @ w) * {i + 1}, axis=0)
        """)
    return src, f"f32[{128 + i},64], f32[64,{32 + i % 7}]"


def write_project(root: Path, count: int, plain: bool = False, per_page: int = 5, targets: str = "cpu") -> Path:
    src = root / "src"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    exts = "[]" if plain else '["sphinx_jaxhlo"]'
    (src / "conf.py").write_text(f"extensions = {exts}\njaxhlo_targets = {targets.split(',')!r}\n")
    pages = [f"page{p}" for p in range((count + per_page - 1) // per_page)]
    (src / "index.rst").write_text("Bench\n=====\n\n.. toctree::\n\n" + "".join(f"   {p}\n" for p in pages))
    for p, page in enumerate(pages):
        body = f"Page {p}\n{'=' * (5 + len(str(p)))}\n\nSome prose.\n\n"
        for i in range(p * per_page, min(count, (p + 1) * per_page)):
            code, args = example(i)
            block = textwrap.indent(code, "   ")
            if plain:
                body += f".. code-block:: python\n\n{block}\n"
            else:
                body += f".. jax-hlo::\n   :args: {args}\n\n{block}\n"
        (src / f"{page}.rst").write_text(body)
    return src


BUILD = """
import json, sys, time
t = time.perf_counter()
from sphinx.cmd.build import build_main
rc = build_main(sys.argv[1:])
print("BENCH " + json.dumps({"rc": rc, "jax": "jax" in sys.modules, "seconds": time.perf_counter() - t}))
"""


def build(src: Path, out: Path, cache: Path | None, *extra: str, fresh: bool = True) -> dict[str, Any]:
    args = [PY, "-c", BUILD, "-q", "-b", "html", str(src), str(out / "html"), "-d", str(out / "doctrees")]
    if fresh:
        args.append("-E")
    if cache is not None:
        args += ["-D", f"jaxhlo_cache_dir={cache}"]
    args += list(extra)
    start = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True)
    wall = time.perf_counter() - start
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("BENCH ")), None)
    if line is None or proc.returncode != 0:
        raise RuntimeError(f"build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    result = json.loads(line[6:])
    result["wall"] = wall
    m = re.search(r"jax-hlo: (\d+) compiled, (\d+) from cache", proc.stdout + proc.stderr)
    result["compiled"], result["cached"] = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    return result


def bare_compile(count: int) -> float:
    """Seconds to compile the same functions in one warm process (jax imported first, not timed)."""
    code = textwrap.dedent(f"""
        import os, time
        os.environ["JAX_PLATFORMS"] = "cpu"
        import jax, jax.numpy as jnp
        sources = {[example(i)[0] for i in range(count)]!r}
        shapes = {[(128 + i, 64, 32 + i % 7) for i in range(count)]!r}
        jax.jit(lambda x: x + 1).trace(jax.ShapeDtypeStruct((2,), jnp.float32)).lower().compile()  # warm
        t = time.perf_counter()
        for i, (src, (n, k, m)) in enumerate(zip(sources, shapes)):
            ns = {{}}
            exec(compile(src, "example.py", "exec"), ns)
            specs = (jax.ShapeDtypeStruct((n, k), jnp.float32), jax.ShapeDtypeStruct((k, m), jnp.float32))
            c = jax.jit(ns[f"f{{i}}"]).trace(*specs).lower().compile()
            c.as_text(); c.memory_analysis(); c.cost_analysis()
        print(time.perf_counter() - t)
        """)
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True, check=True).stdout
    return float(out.strip().splitlines()[-1])


def peak_rss(args: list[str]) -> tuple[float, int]:
    """Run a command; sample the summed RSS of it and its children."""
    import psutil

    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    ps = psutil.Process(proc.pid)
    start = time.perf_counter()
    while proc.poll() is None:
        try:
            total = ps.memory_info().rss + sum(c.memory_info().rss for c in ps.children(recursive=True))
        except psutil.Error:
            total = 0
        peak = max(peak, total)
        time.sleep(0.02)
    return time.perf_counter() - start, peak


def notebook_project(root: Path, ours: bool) -> Path:
    src = root / ("ours" if ours else "nb")
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    if ours:
        (src / "conf.py").write_text('extensions = ["myst_parser", "sphinx_jaxhlo"]\njaxhlo_targets = ["cpu"]\n')
        (src / "index.md").write_text("# Seed\n\n```{jax-hlo}\n:args: f32[100000,3], f32[50000,3]\n"
                                      ":show: source, summary, memory, hlo\n\n" + SEED + "```\n")
    else:
        (src / "conf.py").write_text('extensions = ["myst_nb"]\nnb_execution_mode = "cache"\n'
                                     'nb_execution_timeout = 600\n')
        cells = [
            "import os\nos.environ['JAX_PLATFORMS'] = 'cpu'\n" + SEED,
            "specs = (jax.ShapeDtypeStruct((100000, 3), jnp.float32),\n"
            "         jax.ShapeDtypeStruct((50000, 3), jnp.float32))\n"
            "compiled = jax.jit(with_dot).trace(*specs).lower().compile()\n"
            "print(compiled.memory_analysis())",
            "print(compiled.as_text())",
        ]
        nb = "---\nfile_format: mystnb\nkernelspec:\n  name: python3\n---\n# Seed\n\n" + "".join(
            f"```{{code-cell}} ipython3\n{c}\n```\n\n" for c in cells)
        (src / "index.md").write_text(nb)
    return src


def hlo_module_text(computations: int) -> str:
    """An optimized-HLO-like module: ``computations`` fusion computations of
    realistic lines (shapes with tiled layouts, metadata, backend configs), each
    called from the entry; 900 of them make about a megabyte."""
    body = "\n".join(
        f'  %m.{j} = f32[100000,50000]{{1,0:T(8,128)}} multiply(%p.{j}, %p.{j}), metadata={{op_name="jit(f)/vmap()/mul"'
        f' stack_frame_id={j}}}, backend_config={{"flag_configs":[],"window_config":{{"bounds":["1","{j}"]}}}}'
        for j in range(4))
    params = "\n".join(f"  %p.{j} = f32[100000,50000]{{1,0}} parameter({j})" for j in range(4))
    comps, calls = [], []
    for k in range(computations):
        comps.append(f"%fused.{k} (p.0: f32[100000,50000], p.1: f32[100000,50000], p.2: f32[100000,50000], "
                     f"p.3: f32[100000,50000]) -> f32[100000,50000] {{\n{params}\n{body}\n"
                     f"  ROOT %r.{k} = f32[100000,50000]{{1,0}} add(%m.0, %m.3)\n}}\n")
        calls.append(f"  %f.{k} = f32[100000,50000]{{1,0}} fusion(%a, %a, %a, /*index=3*/%a), kind=kLoop, "
                     f"calls=%fused.{k}")
    return ("HloModule big\n\n" + "\n".join(comps) + "\nENTRY %e (a: f32[100000,50000]) -> f32[100000,50000] {\n"
            "  %a = f32[100000,50000]{1,0} parameter(0)\n" + "\n".join(calls) + "\n  ROOT %t = f32[100000,50000]{1,0} "
            "add(%f.0, %f.1)\n}\n")


def parse_speed(repeats: int = 3) -> dict[str, Any]:
    """7. Parse 1 MB and 4 MB of HLO text in this process (best of ``repeats``)."""
    sys.path.insert(0, str(HERE.parent))
    from sphinx_jaxhlo.hlo import parse_module

    def best(text: str) -> float:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            parse_module(text)
            times.append(time.perf_counter() - start)
        return min(times)

    one, four = hlo_module_text(900), hlo_module_text(3600)
    t1, t4 = best(one), best(four)
    return {"mb": len(one) / 1e6, "seconds_1mb": t1, "mb_per_s": len(one) / 1e6 / t1, "seconds_4mb": t4,
            "ratio_4mb_1mb": t4 / t1, "goal": 4.4}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--parse", action="store_true", help="only the parse-speed figure (7)")
    opts = parser.parse_args()
    if opts.parse:
        print(json.dumps({"parse_speed": parse_speed()}, indent=2))
        return
    sizes = (5, 10, 20) if opts.quick else (10, 50, 100)
    results: dict[str, Any] = {"parse_speed": parse_speed()}
    work = Path(tempfile.mkdtemp(prefix="jaxhlo-bench-"))
    try:
        # 1. per-example overhead against bare compiles
        n = sizes[1]
        src = write_project(work / "a", n)
        plain = write_project(work / "p", n, plain=True)
        cold = build(src, work / "a-out", work / "a-cache")
        plain_run = build(plain, work / "p-out", None)
        bare = bare_compile(n)
        overhead = (cold["seconds"] - plain_run["seconds"]) / n
        results["overhead_per_example"] = {
            "ours_s": overhead, "bare_s": bare / n, "ratio": overhead / (bare / n), "goal": 1.15}
        # 2. fully cached rebuild (fresh environment, warm cache) against plain code blocks
        cached = build(src, work / "a-out2", work / "a-cache")
        results["cached_rebuild"] = {
            "ours_s": cached["seconds"], "plain_s": plain_run["seconds"],
            "ratio": cached["seconds"] / plain_run["seconds"], "compiled": cached["compiled"],
            "jax_imported": cached["jax"], "goal": 1.25}
        # 3. linearity
        times = {}
        for size in sizes:
            s = write_project(work / f"l{size}", size)
            times[size] = build(s, work / f"l{size}-out", work / f"l{size}-cache")["seconds"]
        results["linearity"] = {"seconds": times, "ratio": times[sizes[2]] / times[sizes[0]],
                                "goal": 10.5 * sizes[2] / 100 * 10 / sizes[0] if not opts.quick else None}
        # 4. -j 2 against -j 1: small CPU examples, then the same pages for an H100,
        #    where compiling is a larger share of the build
        for key, target in (("parallel", "cpu"), ("parallel_gpu_h100", "gpu:h100")):
            s = write_project(work / f"j-{key}", sizes[1], targets=target)
            j1 = build(s, work / f"{key}-j1-out", work / f"{key}-j1-cache", "-j", "1")["seconds"]
            j2 = build(s, work / f"{key}-j2-out", work / f"{key}-j2-cache", "-j", "2")["seconds"]
            results[key] = {"target": target, "j1_s": j1, "j2_s": j2, "speedup": j1 / j2, "goal": 1.6}
        # 5. peak memory of the seed build
        seed = notebook_project(work / "m", ours=True)
        wall, peak = peak_rss([PY, "-m", "sphinx", "-q", "-b", "html", "-E", str(seed), str(work / "m-out"),
                               "-D", f"jaxhlo_cache_dir={work / 'm-cache'}"])
        results["seed_peak_rss"] = {"bytes": peak, "seconds": wall, "goal_bytes": 10**9}
        # 6. against a MyST-NB notebook that does the same by hand
        nb = notebook_project(work / "n", ours=False)
        ours = notebook_project(work / "n", ours=True)
        nb_cold = build(nb, work / "nb-out", None)["seconds"]
        nb_cached = build(nb, work / "nb-out", None)["seconds"]
        ours_cold = build(ours, work / "ours-out", work / "ours-cache")["seconds"]
        ours_cached = build(ours, work / "ours-out2", work / "ours-cache")["seconds"]
        results["vs_myst_nb"] = {"nb_cold_s": nb_cold, "nb_cached_s": nb_cached, "ours_cold_s": ours_cold,
                                 "ours_cached_s": ours_cached, "cold_ratio": ours_cold / nb_cold,
                                 "cached_ratio": ours_cached / nb_cached, "goals": [0.5, 1.0]}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(results, indent=2))
    if not opts.quick:
        (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    threading.stack_size(0)
    main()
