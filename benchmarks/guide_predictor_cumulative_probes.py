"""Probe programs for a cumulative op (``jnp.cumsum``, ``lax.cummax``...) reading a computed table on the H100.

The rules had said that the H100 always writes a cumulative op's computed operand (a scan's passes are a
kernel of their own).  Six of nine earlier probes and wild18's causal linear attention said otherwise: a
cheap producer is fused into the passes, and the reduction after them too.  Each probe here computes an
operand elementwise and reduces its cumulative sum (or maximum, product), and changes one thing: the
producer (its cost in the H100's cycles an element, ``xla/service/gpu/model/hlo_op_profiles_data.h``: a
square, ``x + 1``, ``1 / x``, ``sqrt``, ``exp``, ``log``, ``tanh``, ``sin``, a sigmoid), how many table-sized
inputs it reads (one, two, none: an outer product of vectors), the axis, the shape (odd, small, a scan of
128 or fewer), the cumulative op, its direction, ``jax.grad`` and ``vmap``, a transposed
argument, a mask, and the element type (``bf16``).
The truth is the family benchmark's (:func:`guide_predictor_family.compile_truth`), written to
``benchmarks/data/guide_predictor_cumulative_probes_truth.jsonl``; the H100 only (the rule is the H100's).

Run::

    python benchmarks/guide_predictor_cumulative_probes.py --compile     # what is not compiled yet
    python benchmarks/guide_predictor_cumulative_probes.py               # the truth beside the rules' answer
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program  # noqa: E402
from guide_predictor_probing import probe_main, probe_maker  # noqa: E402

TRUTH = ROOT / "benchmarks" / "data" / "guide_predictor_cumulative_probes_truth.jsonl"
TARGETS = ["gpu:h100"]

probe = probe_maker("cumulative-probes")

#: Producers of the cumulative op's operand, by name: (expression of ``x`` and ``y``, class words).
PRODUCERS = {
    "arg": ("x", "inputs=1"), "square": ("x * x", "inputs=1"), "plus-one": ("x + 1.0", "inputs=1"),
    "twice": ("x * 2.0", "inputs=1"), "neg": ("-x", "inputs=1"), "abs": ("jnp.abs(x)", "inputs=1"),
    "relu": ("jnp.maximum(x, 0.0)", "inputs=1"), "where": ("jnp.where(x > 0, x, 0.0)", "inputs=1"),
    "cube": ("x ** 3", "inputs=1"), "recip": ("1.0 / x", "inputs=1"), "row-scale": ("x * y[0]", "inputs=1"),
    "sqrt": ("jnp.sqrt(x)", "inputs=1"), "exp": ("jnp.exp(x)", "inputs=1"), "log": ("jnp.log(x)", "inputs=1"),
    "tanh": ("jnp.tanh(x)", "inputs=1"), "sin": ("jnp.sin(x)", "inputs=1"),
    "sigmoid": ("jax.nn.sigmoid(x)", "inputs=1"), "product": ("x * y", "inputs=2"), "sum": ("x + y", "inputs=2"),
    "ratio": ("x / y", "inputs=2"), "square-plus": ("x * x + y", "inputs=2"),
    "exp-times": ("jnp.exp(x) * y", "inputs=2"),
}


def cumulative(name: str, expr: str, specs: str, *classes: str, op: str = "jnp.cumsum", axis: int = 1) -> Program:
    return probe(name, f"def f(x, y):\n    return jnp.sum({op}({expr}, axis={axis}) * y)\n", specs, *classes)


def programs() -> list[Program]:
    out = []
    for name, (expr, words) in PRODUCERS.items():
        out.append(cumulative(f"{name}-rows", expr, "f32[2048,4096], f32[2048,4096]", words, "axis=1"))
    for name in ("square", "relu", "sqrt", "exp", "product"):
        expr, words = PRODUCERS[name]
        out.append(cumulative(f"{name}-cols", expr, "f32[2048,4096], f32[2048,4096]", words, "axis=0", axis=0))
        out.append(cumulative(f"{name}-odd", expr, "f32[3001,1999], f32[3001,1999]", words, "shape=odd"))
        out.append(cumulative(f"{name}-cummax", expr, "f32[2048,4096], f32[2048,4096]", words, "op=cummax",
                              op="lax.cummax"))
    for name in ("square", "recip", "log", "exp", "product"):
        expr, words = PRODUCERS[name]
        out.append(cumulative(f"{name}-bf16", expr, "bf16[2048,4096], bf16[2048,4096]", words, "dtype=bf16"))
    for rows, n in ((64, 128), (2048, 128), (2048, 64), (64, 1024), (64, 4096), (8, 65536), (2048, 129),
                    (2048, 512)):
        out.append(cumulative(f"square-{rows}x{n}", "x * x", f"f32[{rows},{n}], f32[{rows},{n}]", "inputs=1",
                              "shape=small-or-short"))
    out.append(probe("square-reverse", """
def f(x, y):
    return jnp.sum(lax.cumsum(x * x, axis=1, reverse=True) * y)
""", "f32[2048,4096], f32[2048,4096]", "inputs=1", "reverse"))
    out.append(probe("exp-reverse", """
def f(x, y):
    return jnp.sum(lax.cumsum(jnp.exp(x), axis=1, reverse=True) * y)
""", "f32[2048,4096], f32[2048,4096]", "inputs=1", "reverse"))
    out.append(probe("square-grad", """
def f(x, y):
    return jax.grad(lambda x: jnp.sum(jnp.cumsum(x * x, axis=1) * y))(x)
""", "f32[2048,4096], f32[2048,4096]", "inputs=1", "grad"))
    out.append(probe("square-vmap", """
def f(x, y):
    return jax.vmap(lambda a, b: jnp.sum(jnp.cumsum(a * a) * b))(x, y)
""", "f32[2048,4096], f32[2048,4096]", "inputs=1", "vmap"))
    out.append(probe("square-cumprod", """
def f(x, y):
    return jnp.sum(jnp.cumprod(x * x, axis=1) * y)
""", "f32[2048,4096], f32[2048,4096]", "inputs=1", "op=cumprod"))
    out.append(probe("square-transposed", """
def f(x, y):
    return jnp.sum(jnp.cumsum(x.T * x.T, axis=1) * y)
""", "f32[2048,4096], f32[4096,2048]", "inputs=1", "transpose"))
    out.append(probe("masked", """
def f(x, m):
    return jnp.sum(jnp.cumsum(jnp.where(m, x, 0.0), axis=1))
""", "f32[2048,4096], bool[2048,4096]", "inputs=2", "mask"))
    out.append(probe("grad-squared-loss", """
def f(x, y):
    return jax.grad(lambda x: jnp.sum((jnp.cumsum(x, axis=1) - y) ** 2))(x)
""", "f32[2048,4096], f32[2048,4096]", "grad"))
    out.append(probe("outer-first", """
def f(a, b, y):
    return jnp.sum(jnp.cumsum(a[:, :, None] * b[:, None, :], axis=0) * y)
""", "f32[2048,64], f32[2048,64], f32[2048,64,64]", "inputs=0"))
    out.append(probe("outer-middle", """
def f(a, b, y):
    return jnp.sum(jnp.cumsum(a[:, :, None] * b[:, None, :], axis=1) * y)
""", "f32[64,2048], f32[64,2048], f32[64,2048,2048]", "inputs=0"))
    return out


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, programs, TARGETS, TRUTH)


if __name__ == "__main__":
    raise SystemExit(main())
