"""Where the TPU v5e keeps a stored table (on-chip ``S(1)`` or HBM), measured from deviceless compiles.

Each program stores the table it reduces on the TPU (complex data, a non-elementwise op between the
producer and the reduction, an exact ``top_k`` of a product, a contraction read twice); it is
compiled at square sizes from 512 to 4096 and the memory space of the largest stored buffer is read
from its layout (``S(1)``: the chip's own memory; none: HBM).  The threshold the predictor uses
(:data:`sphinx_jaxhlo.predict.tpu.ON_CHIP_MAX_BYTES`, 32 MiB) is at the 2896 point here (33.5 to 34.1 MB,
all on-chip); at 4096 (67 MB) the programs went either way.  The families' 302 stored tables set the rest
(:mod:`sphinx_jaxhlo.predict.tpu`).

Run: ``python benchmarks/guide_predictor_where.py`` (about 5 s a compile); writes
``benchmarks/data/guide_predictor_where.json``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "benchmarks" / "data" / "guide_predictor_where.json"
HEADER = "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n\n\n"
PROGRAMS = {
    "cumsum_of_cos": ("def f(x):\n    return jnp.sum(jnp.cumsum(jnp.cos(x), axis=0), axis=1)\n", "f32[{n},{n}]"),
    "sort_of_sin": ("def f(x):\n    return jnp.sum(jnp.sort(jnp.sin(x), axis=1), axis=0)\n", "f32[{n},{n}]"),
    "complex_abs_sum": ("def f(a, b):\n    return jnp.sum(jnp.abs(a * b), axis=1)\n", "c64[{n},{n}], c64[{n},{n}]"),
    "top_k_of_product": ("def f(a, b):\n    return lax.top_k(a @ b, 4)[0].sum()\n", "f32[{n},256], f32[256,{n}]"),
    "variance_of_product": ("def f(a, b):\n    return jnp.var(a @ b, axis=1)\n", "f32[{n},256], f32[256,{n}]"),
}
SIZES = (512, 1024, 2048, 2896, 4096)


def main() -> int:
    import sphinx_jaxhlo

    rows = []
    for name, (body, specs) in PROGRAMS.items():
        for n in SIZES:
            start = time.time()
            reports = sphinx_jaxhlo.analyze_source(HEADER + body, "f", specs.format(n=n), targets=["tpu:v5e"],
                                                   timeout=600)
            report = reports.get("tpu:v5e")
            if report is None or report.error is not None:
                rows.append({"program": name, "n": n, "error": "no report"})
                continue
            biggest = max(report.materialized, key=lambda m: m.bytes, default=None)
            rows.append({"program": name, "n": n,
                         "buffer": biggest.shape if biggest else "",
                         "bytes": biggest.bytes if biggest else 0,
                         "memory_space": biggest.memory_space if biggest else None,
                         "seconds": round(time.time() - start, 1)})
            print(rows[-1], flush=True)
    on_chip = [r["bytes"] for r in rows if r.get("memory_space") == 1]
    hbm = [r["bytes"] for r in rows if r.get("memory_space") == 0 and r.get("bytes")]
    result = {"rows": rows, "largest_on_chip": max(on_chip, default=0), "smallest_hbm": min(hbm, default=0)}
    OUT.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(result["largest_on_chip"], result["smallest_hbm"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
