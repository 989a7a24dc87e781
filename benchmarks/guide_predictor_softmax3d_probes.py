"""Probe programs for a softmax reduced again on the TPU v5e: when is the normalised table written?

wild15's iBOT loss (``guide_predictor_holdout16.py``) reduces a teacher's softmax times a student's
log-softmax over rows of 8,192 of a 64 x 196 x 8,192 table, and the TPU wrote the exponentials (411 MB in
HBM) where the rules said fused.  These probes vary what the rules could key on: the rank (2-D, 3-D, 4-D),
the row length (2,048 to 16,384), the leading dimensions, the element type, and what reads the softmax
(its own weighted sum, an entropy, a cross-entropy against a second softmax, with centring).  They split
without a pattern the jaxpr shows: rows of 8,192 were written at 16 x 196, 64 x 64, 2 x 2,048 and 8 x 8 x 64,
and fused at 1 x 4,096 and in every 2-D shape; over rows of 4,096 the distillation loss was written and
the softmax's own weighted sum fused; rows of 16,384 fused.  So the rules leave such a batched table over
rows of 4,096 or more to the compile (:func:`sphinx_jaxhlo.predict.norm.decide_norm`).  The truth is
the family benchmark's (:func:`guide_predictor_family.compile_truth`),
written to ``benchmarks/data/guide_predictor_softmax3d_probes_truth.jsonl``; TPU v5e only.

Run::

    python benchmarks/guide_predictor_softmax3d_probes.py --compile     # what is not compiled yet
    python benchmarks/guide_predictor_softmax3d_probes.py               # the truth beside the rules' answer
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program, _module  # noqa: E402
from guide_predictor_probing import probe_main  # noqa: E402

TRUTH = ROOT / "benchmarks" / "data" / "guide_predictor_softmax3d_probes_truth.jsonl"
TARGETS = ["tpu:v5e"]

#: What reads the softmax, each a body defining ``f``.
BODIES = {
    "distill": ("def f(s, t):\n    pt = jax.nn.softmax(t, axis=-1)\n"
                "    return -jnp.mean(jnp.sum(pt * jax.nn.log_softmax(s, axis=-1), axis=-1))\n", 2),
    "distill-centred": ("def f(s, t, c):\n    pt = jax.nn.softmax((t - c) / 0.04, axis=-1)\n"
                        "    return -jnp.mean(jnp.sum(pt * jax.nn.log_softmax(s / 0.1, axis=-1), axis=-1))\n", 2),
    "weighted": ("def f(t):\n    return jnp.sum(jax.nn.softmax(t, axis=-1) * t, axis=-1)\n", 1),
    "entropy": ("def f(t):\n    p = jax.nn.softmax(t, axis=-1)\n"
                "    return -jnp.sum(p * jnp.log(p + 1e-9), axis=-1)\n", 1),
    "kl": ("def f(s, t):\n    lt = jax.nn.log_softmax(t, axis=-1)\n"
           "    return jnp.mean(jnp.sum(jnp.exp(lt) * (lt - jax.nn.log_softmax(s, axis=-1)), axis=-1))\n", 2),
}

#: (reader, shape, dtype) of each probe.
CASES = [
    ("distill", "4096,8192", "f32"), ("distill", "16,196,8192", "f32"), ("distill", "16,192,8192", "f32"),
    ("distill", "4100,8192", "f32"), ("distill", "3136,8192", "f32"), ("distill", "16,197,8192", "f32"),
    ("distill", "64,50,8192", "f32"), ("distill", "16,196,8192", "bf16"), ("distill", "4096,8192", "bf16"),
    ("distill", "16,196,4096", "f32"), ("distill-centred", "16,196,8192", "f32"),
    ("weighted", "16,196,8192", "f32"), ("weighted", "16,192,8192", "f32"), ("weighted", "64,64,8192", "f32"),
    ("weighted", "8,512,1024", "f32"), ("weighted", "4,8,512,2048", "f32"), ("weighted", "32768,1024", "f32"),
    ("weighted", "1,4096,8192", "f32"), ("weighted", "16,512,4096", "f32"), ("weighted", "16,196,4096", "f32"),
    ("weighted", "16,98,16384", "f32"), ("weighted", "2,2048,8192", "f32"), ("weighted", "16,196,2048", "f32"),
    ("weighted", "8,8,64,8192", "f32"),
    ("entropy", "4096,8192", "f32"), ("entropy", "16,196,8192", "f32"), ("entropy", "25088,1024", "f32"),
    ("kl", "4096,8192", "f32"),
]


def programs() -> list[Program]:
    out = []
    for reader, shape, dtype in CASES:
        body, tables = BODIES[reader]
        specs = ", ".join([f"{dtype}[{shape}]"] * tables + (["f32[8192]"] if reader == "distill-centred" else []))
        out.append(Program(f"{reader}-{dtype}-{shape.replace(',', 'x')}", "softmax3d-probes", _module(body),
                           specs, [f"reader={reader}", f"rank={shape.count(',') + 1}"]))
    return out


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, programs, TARGETS, TRUTH)


if __name__ == "__main__":
    raise SystemExit(main())
