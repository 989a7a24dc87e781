"""The projects and builds the benchmarks time (``bench.py``, ``snapshot_path.py``): small distinct
examples, a project of them on pages, and a Sphinx build in a fresh process that reports its own
time.  Shared here so that neither benchmark imports the other.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

PY = sys.executable


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
import json, os, sys, time
t = time.perf_counter()
from sphinx.cmd.build import build_main
rc = build_main(sys.argv[1:])
seconds = time.perf_counter() - t
times = os.times()
print("BENCH " + json.dumps({"rc": rc, "jax": "jax" in sys.modules, "seconds": seconds,
                             "cpu_seconds": times.user + times.system + times.children_user + times.children_system,
                             "process_seconds": time.process_time(),
                             "package": getattr(sys.modules.get("sphinx_jaxhlo"), "__file__", None)}))
"""


def build_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a timed build: this one, without ``PYTHONDONTWRITEBYTECODE``
    (with it, every build compiles Sphinx and the package from source: seconds)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **(extra or {})}


def build(src: Path, out: Path, cache: Path | None, *extra: str, fresh: bool = True,
          env: dict[str, str] | None = None) -> dict[str, Any]:
    args = [PY, "-c", BUILD, "-q", "-b", "html", str(src), str(out / "html"), "-d", str(out / "doctrees")]
    if fresh:
        args.append("-E")
    if cache is not None:
        args += ["-D", f"jaxhlo_cache_dir={cache}"]
    args += list(extra)
    start = time.perf_counter()
    # not from the clone: `python -c` imports from the current folder first, which would shadow
    # the package that PYTHONPATH names (the --before builds)
    proc = subprocess.run(args, capture_output=True, text=True, env=build_env(env), cwd=tempfile.gettempdir())
    wall = time.perf_counter() - start
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("BENCH ")), None)
    if line is None or proc.returncode != 0:
        raise RuntimeError(f"build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    result = json.loads(line[6:])
    result["wall"] = wall
    m = re.search(r"jax-hlo: (\d+) compiled, (\d+) from cache(?:, (\d+) from snapshots)?", proc.stdout + proc.stderr)
    result["compiled"], result["cached"] = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    result["snapshots"] = int(m.group(3) or 0) if m else 0
    return result
