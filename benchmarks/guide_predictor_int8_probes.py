"""Probe programs for an integer contraction whose ``int8`` operand the program computes (a quantiser).

wild18's SmoothQuant quantised both operands of a GEMM in the program (per-channel scales, ``round``,
``clip``, ``astype(int8)``) and contracted them with an ``int32`` ``dot_general``: the TPU wrote the
``s8[4096,11008]`` weight where the rules answered fused.  Each probe quantises one operand or both and
contracts them, and changes one thing: which operands are quantised, the scale (per channel, a constant),
the source's dtype (f32, bf16, int32), the shape (tiny, odd, 134 MB of f32), ``uint8``, a batched
contraction; and, as a control, the same quantiser feeding an ``f32`` contraction (nothing written on the
TPU).  The truth is the family benchmark's (:func:`guide_predictor_family.compile_truth`), written to
``benchmarks/data/guide_predictor_int8_probes_truth.jsonl``; all three targets.

Run::

    python benchmarks/guide_predictor_int8_probes.py --compile     # what is not compiled yet
    python benchmarks/guide_predictor_int8_probes.py               # the truth beside the rules' answer
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program  # noqa: E402
from guide_predictor_probing import probe_main, probe_maker  # noqa: E402

TRUTH = ROOT / "benchmarks" / "data" / "guide_predictor_int8_probes_truth.jsonl"
TARGETS = ["cpu", "gpu:h100", "tpu:v5e"]

probe = probe_maker("int8-probes")

#: Per-channel scales of ``w``'s columns and its ``int8`` copy.
QUANT_W = """    sw = jnp.max(jnp.abs(w), axis=0, keepdims=True) / 127.0
    wq = jnp.clip(jnp.round(w / sw), -127, 127).astype(jnp.int8)
"""
#: ``x`` (already ``int8``) by the quantised ``wq``, an ``int32`` accumulator, rescaled and summed.
DOT = """    acc = lax.dot_general(x, wq, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    return jnp.sum(acc.astype(jnp.float32) * sw)
"""


def weight(name: str, specs: str, *classes: str) -> Program:
    return probe(name, f"def f(x, w):\n{QUANT_W}{DOT}", specs, "quantised=w", *classes)


def programs() -> list[Program]:
    return [
        weight("w-only", "i8[2048,4096], f32[4096,8192]"),
        weight("w-only-odd", "i8[1999,3001], f32[3001,5003]", "shape=odd"),
        weight("w-only-tiny", "i8[256,512], f32[512,1024]", "shape=tiny"),
        probe("both", """
def f(x, w):
    sx = jnp.max(jnp.abs(x), axis=1, keepdims=True) / 127.0
    xq = jnp.clip(jnp.round(x / sx), -127, 127).astype(jnp.int8)
""" + QUANT_W + """    acc = lax.dot_general(xq, wq, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    return jnp.sum(acc.astype(jnp.float32) * sx * sw)
""", "f32[2048,4096], f32[4096,8192]", "quantised=both"),
        probe("w-bf16", """
def f(x, w):
    w = w.astype(jnp.float32)
""" + QUANT_W + DOT, "i8[2048,4096], bf16[4096,8192]", "quantised=w", "dtype=bf16"),
        probe("w-constant-scale", """
def f(x, w):
    wq = jnp.clip(jnp.round(w * 20.0), -127, 127).astype(jnp.int8)
    acc = lax.dot_general(x, wq, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    return jnp.sum(acc.astype(jnp.float32))
""", "i8[2048,4096], f32[4096,8192]", "quantised=w", "scale=constant"),
        probe("w-from-int32", """
def f(x, w):
    wq = (w * 3).astype(jnp.int8)
    acc = lax.dot_general(x, wq, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    return jnp.sum(acc.astype(jnp.float32))
""", "i8[2048,4096], i32[4096,8192]", "quantised=w", "dtype=i32"),
        probe("w-uint8", """
def f(x, w):
    wq = jnp.clip(jnp.round(w * 20.0 + 128.0), 0, 255).astype(jnp.uint8)
    acc = lax.dot_general(x, wq, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    return jnp.sum(acc.astype(jnp.float32))
""", "u8[2048,4096], f32[4096,8192]", "quantised=w", "dtype=u8"),
        probe("batched", """
def f(x, w):
    sw = jnp.max(jnp.abs(w), axis=1, keepdims=True) / 127.0
    wq = jnp.clip(jnp.round(w / sw), -127, 127).astype(jnp.int8)
    acc = jnp.einsum("bij,bjk->bik", x, wq, preferred_element_type=jnp.int32)
    return jnp.sum(acc.astype(jnp.float32) * sw)
""", "i8[16,512,1024], f32[16,1024,2048]", "quantised=w", "batched"),
        probe("control-f32-dot", """
def f(x, w):
    sw = jnp.max(jnp.abs(w), axis=0, keepdims=True) / 127.0
    wq = jnp.clip(jnp.round(w / sw), -127, 127)
    return jnp.sum((x @ wq) * sw)
""", "f32[2048,4096], f32[4096,8192]", "quantised=w", "control=f32"),
    ]


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, programs, TARGETS, TRUTH)


if __name__ == "__main__":
    raise SystemExit(main())
