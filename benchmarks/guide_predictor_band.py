"""The H100 cost model's break-even band, measured: where the guide's estimate and XLA's decision disagree.

The guide's H100 rule 5 estimates the microseconds of a reduction with its elementwise producer
fused in and of the producer written then read back (:func:`sphinx_jaxhlo.predict.h100.h100_times`).
XLA's own cost model has terms the estimate leaves out (tiling, occupancy, cache), so near equal
estimates its decision can go either way, and does, back and forth with the size (FACTS:
``jnp.sum(jnp.exp(x * y), 0)`` stored at 1188, fused at 1189).  This script compiles programs whose
estimates cross over (deviceless, ``gpu:h100``) at many sizes, and records for each the estimate's
ratio (fused / unfused) and XLA's decision.  The band (:data:`sphinx_jaxhlo.predict.h100.BREAK_EVEN_BAND`)
is the smallest ratio interval around 1 outside which the estimate never disagreed with XLA here,
widened by a tenth.

Run: ``python benchmarks/guide_predictor_band.py`` (about 2 s a compile); writes
``benchmarks/data/guide_predictor_band.json``.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "benchmarks" / "data" / "guide_predictor_band.json"
HEADER = "import jax\nimport jax.numpy as jnp\n\n\n"
PROGRAMS = {
    "exp_of_product_columns": ("def f(x, y):\n    return jnp.sum(jnp.exp(x * y), 0)\n", "f32[{n},{n}], f32[{n},{n}]"),
    "exp_columns": ("def f(x):\n    return jnp.sum(jnp.exp(x), 0)\n", "f32[{n},{n}]"),
    "log_columns": ("def f(x):\n    return jnp.sum(jnp.log(x), 0)\n", "f32[{n},{n}]"),
    "exp_rows_short": ("def f(x):\n    return jnp.sum(jnp.exp(x), 1)\n", "f32[{n},64]"),
    "tanh_rows": ("def f(x):\n    return jnp.sum(jnp.tanh(x), 1)\n", "f32[{n},{n}]"),
}
SIZES = (256, 512, 768, 1024, 1188, 1189, 1300, 1519, 1520, 1700, 1920, 1921, 2048, 2500, 3000, 4096, 6000, 8192)


def main() -> int:
    import sphinx_jaxhlo
    from sphinx_jaxhlo.predict.front import load_function, predict, structs_of

    rows = []
    for name, (body, specs) in PROGRAMS.items():
        for n in SIZES:
            spec = specs.format(n=n)
            guess = predict(load_function(HEADER + body), *structs_of(spec), target="gpu:h100")
            reports = sphinx_jaxhlo.analyze_source(HEADER + body, "f", spec, targets=["gpu:h100"], timeout=300)
            report = reports.get("gpu:h100")
            if report is None or report.error is not None or not guess.us_unfused:
                continue
            stored = any(not r.fused for r in report.deciding_reductions)
            ratio = guess.us_fused / guess.us_unfused
            rows.append({"program": name, "n": n, "ratio": round(ratio, 4), "xla_stored": stored,
                         "estimate_stored": ratio > 1})
            print(rows[-1], flush=True)
    wrong = [abs(math.log(r["ratio"])) for r in rows if r["xla_stored"] != r["estimate_stored"]]
    widest = max(wrong, default=0.0)
    result = {"rows": rows, "disagreements": len(wrong), "widest_log_ratio": round(widest, 4),
              "band": round(math.exp(widest * 1.1) - 1, 3)}
    OUT.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print({k: v for k, v in result.items() if k != "rows"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
