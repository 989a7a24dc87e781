"""Probe programs for the ops no rule knew: what XLA does with a table computed by a bit cast, a special
function, a reduce-window, a concatenate or ``stack``, a triangular solve or a Cholesky factor, on the
CPU, the H100 and the TPU v5e.

Each probe is a module whose ``f`` computes one table with the op (or reads one it computes) and reduces
it (a sum over all or the last axis, a max, a sum of squares), at 1 MB to 256 MB, f32, bf16 or integers,
some under ``jax.grad``.  The truth is the family benchmark's (:func:`guide_predictor_family.compile_truth`),
written to ``benchmarks/data/guide_predictor_ops_probes_truth.jsonl``.

Run::

    python benchmarks/guide_predictor_ops_probes.py --compile     # what is not compiled yet
    python benchmarks/guide_predictor_ops_probes.py               # the truth beside the rules' answer
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program, _module  # noqa: E402
from guide_predictor_probing import probe_main  # noqa: E402

TRUTH = ROOT / "benchmarks" / "data" / "guide_predictor_ops_probes_truth.jsonl"
TARGETS = ["cpu", "gpu:h100", "tpu:v5e"]


def probe(name: str, body: str, specs: str, op: str, args: str = "x") -> Program:
    """``f({args})`` runs ``body`` (indented lines, the last one a ``return``)."""
    lines = "\n".join("    " + ln for ln in body.strip("\n").splitlines())
    return Program(name, "ops-probes", _module(f"def f({args}):\n{lines}\n"), specs, [f"op={op}"])


def grad_probe(name: str, body: str, specs: str, op: str) -> Program:
    """``jax.grad`` of ``g(x)`` (``body``'s last line returns a scalar)."""
    lines = "\n".join("    " + ln for ln in body.strip("\n").splitlines())
    return Program(name, "ops-probes", _module(f"def g(x):\n{lines}\n\n\ndef f(x):\n    return jax.grad(g)(x)\n"),
                   specs, [f"op={op}", "wrap=grad"])


M64 = "f32[4096,4096]"
BF64 = "bf16[4096,8192]"
U64 = "u32[4096,4096]"
IMG = "f32[16,128,128,64]"
SMALL = "f32[512,512]"
BIG = "f32[8192,8192]"


def programs() -> list[Program]:
    P, G = probe, grad_probe
    sp = "jax.scipy.special"
    return [
        # -- bitcast_convert_type: both directions, same width and narrower/wider ------------------------
        P("bc-f32-u32-sum", "b = lax.bitcast_convert_type(x * 2.0, jnp.uint32)\nreturn jnp.sum(b >> 16, axis=1)",
          M64, "bitcast"),
        P("bc-f32-i32-max", "b = lax.bitcast_convert_type(jnp.exp(x), jnp.int32)\nreturn jnp.max(b, axis=-1)",
          M64, "bitcast"),
        P("bc-u32-f32-sum", "y = lax.bitcast_convert_type(x ^ jnp.uint32(0x5F3759DF), jnp.float32)\n"
          "return jnp.sum(y, axis=-1)", U64, "bitcast"),
        P("bc-u32-f32-sumall", "y = lax.bitcast_convert_type((x >> 9) | jnp.uint32(0x3F800000), jnp.float32)\n"
          "return jnp.sum(y - 1.0)", U64, "bitcast"),
        P("bc-f32-bf16-pair", "b = lax.bitcast_convert_type(x * 3.0, jnp.bfloat16)\n"
          "return jnp.sum(b.astype(jnp.float32), axis=(1, 2))", M64, "bitcast"),
        P("bc-bf16-u16", "b = lax.bitcast_convert_type(x * 2, jnp.uint16)\n"
          "return jnp.sum((b & 0x7F).astype(jnp.int32), axis=1)", BF64, "bitcast"),
        P("bc-u16-bf16", "y = lax.bitcast_convert_type((x.astype(jnp.uint16) & 0x3FFF), jnp.bfloat16)\n"
          "return jnp.sum(y.astype(jnp.float32), axis=1)", "u32[4096,8192]", "bitcast"),
        P("bc-stochastic-round", "bits = lax.bitcast_convert_type(x, jnp.uint32)\n"
          "r = (bits + (r_ & jnp.uint32(0xFFFF))) & jnp.uint32(0xFFFF0000)\n"
          "y = lax.bitcast_convert_type(r, jnp.float32)\nreturn jnp.sum((y - x) ** 2, axis=1)",
          f"{M64}, {U64}", "bitcast", args="x, r_"),
        P("bc-small", "b = lax.bitcast_convert_type(x * 2.0, jnp.int32)\nreturn jnp.sum(b & 0xFF, axis=1)",
          SMALL, "bitcast"),
        P("bc-big", "y = lax.bitcast_convert_type(lax.bitcast_convert_type(x, jnp.uint32) & jnp.uint32(0xFFFFE000), "
          "jnp.float32)\nreturn jnp.sum(jnp.abs(y - x), axis=-1)", BIG, "bitcast"),
        # -- special functions ---------------------------------------------------------------------------
        P("sp-i0e", f"return jnp.sum({sp}.i0e(x * 2.0), axis=1)", M64, "bessel"),
        P("sp-i1e", f"return jnp.sum({sp}.i1e(x) * x, axis=-1)", M64, "bessel"),
        P("sp-i0e-bf16", f"return jnp.sum({sp}.i0e(x).astype(jnp.float32), axis=1)", BF64, "bessel"),
        P("sp-vonmises", f"k = jnp.exp(x)\nreturn jnp.sum(k * jnp.cos(x) - jnp.log({sp}.i0e(k)) - k)", M64,
          "bessel"),
        G("sp-i0e-grad", f"return jnp.sum(jnp.log({sp}.i0e(x)))", M64, "bessel"),
        P("sp-i1e-max", f"return jnp.max({sp}.i1e(x * x), axis=0)", BIG, "bessel"),
        P("sp-gammaln", f"return jnp.sum({sp}.gammaln(jnp.abs(x) + 1.0), axis=1)", M64, "lgamma"),
        P("sp-digamma", f"return jnp.sum({sp}.digamma(jnp.abs(x) + 1.0), axis=1)", M64, "digamma"),
        P("sp-erfinv", f"return jnp.sum({sp}.erfinv(jnp.tanh(x)), axis=1)", M64, "erf_inv"),
        P("sp-xlogy", f"return jnp.sum({sp}.xlogy(x, jnp.abs(x) + 1.0), axis=1)", M64, "xlogy"),
        P("sp-gammainc", f"return jnp.sum({sp}.gammainc(2.0, jnp.abs(x)), axis=1)", "f32[1024,1024]", "igamma"),
        P("sp-betainc", f"return jnp.sum({sp}.betainc(2.0, 3.0, jax.nn.sigmoid(x)), axis=1)", "f32[1024,1024]",
          "betainc"),
        P("sp-gammaincc-exp", f"return jnp.sum({sp}.gammaincc(3.0, jnp.exp(x)), axis=0)", "f32[2048,2048]",
          "igamma"),
        P("popcount", "return jnp.sum(lax.population_count(x * jnp.uint32(3)), axis=1)", U64, "popcount"),
        # -- reduce_window: sum, max, min; windows, strides; a computed input; its gradient --------------
        P("rw-max-3x3", "y = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 1, 1, 1), 'SAME')\n"
          "return jnp.sum(y, axis=(1, 2))", IMG, "reduce_window"),
        P("rw-max-relu", "y = lax.reduce_window(jax.nn.relu(x * 2.0), -jnp.inf, lax.max, (1, 3, 3, 1), (1, 1, 1, 1), "
          "'SAME')\nreturn jnp.sum(y, axis=-1)", IMG, "reduce_window"),
        P("rw-max-peaks", "m = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 1, 1, 1), 'SAME')\n"
          "return jnp.sum(jnp.where(m == x, x, 0.0), axis=(1, 2))", IMG, "reduce_window"),
        P("rw-max-2x2s2", "y = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), 'VALID')\n"
          "return jnp.sum(y, axis=(1, 2))", IMG, "reduce_window"),
        P("rw-min-1d", "y = lax.reduce_window(x, jnp.inf, lax.min, (1, 7), (1, 1), 'SAME')\n"
          "return jnp.sum(y, axis=1)", M64, "reduce_window"),
        P("rw-sum-lrn", "s = lax.reduce_window(x * x, 0.0, lax.add, (1, 1, 1, 5), (1, 1, 1, 1), 'SAME')\n"
          "return jnp.sum(x / (1.0 + 1e-4 * s) ** 0.75, axis=-1)", IMG, "reduce_window"),
        P("rw-sum-3x3", "y = lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), 'SAME')\n"
          "return jnp.sum(y * y)", IMG, "reduce_window"),
        P("rw-sum-bf16", "y = lax.reduce_window(x, jnp.bfloat16(0), lax.add, (1, 9), (1, 1), 'SAME')\n"
          "return jnp.sum(y.astype(jnp.float32), axis=1)", BF64, "reduce_window"),
        P("rw-sum-small", "y = lax.reduce_window(jnp.exp(x), 0.0, lax.add, (3, 3), (1, 1), 'SAME')\n"
          "return jnp.sum(y, axis=1)", SMALL, "reduce_window"),
        P("rw-max-int", "y = lax.reduce_window(x, jnp.uint32(0), lax.max, (1, 5), (1, 1), 'SAME')\n"
          "return jnp.sum(y, axis=1)", U64, "reduce_window"),
        P("rw-sum-big", "y = lax.reduce_window(x, 0.0, lax.add, (1, 3), (1, 1), 'SAME')\n"
          "return jnp.max(y, axis=1)", BIG, "reduce_window"),
        G("rw-max-grad", "y = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 1, 1, 1), 'SAME')\n"
          "return jnp.sum(jnp.tanh(y))", IMG, "reduce_window"),
        G("rw-sum-grad", "y = lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), 'SAME')\n"
          "return jnp.sum(jnp.tanh(y))", IMG, "reduce_window"),
        # -- concatenate, stack, roll of computed tables -------------------------------------------------
        P("stack-2-last", "return jnp.sum(jnp.stack([jnp.exp(x), x * x], axis=-1), axis=(1, 2))", M64, "stack"),
        P("stack-2-first", "return jnp.sum(jnp.stack([jnp.exp(x), x * x], axis=0), axis=0)", M64, "stack"),
        P("stack-9-lbm", "fs = [jnp.roll(x * (i + 1.0), i - 4, axis=1) for i in range(9)]\n"
          "f_ = jnp.stack(fs, axis=0)\nreturn jnp.sum(f_, axis=0)", "f32[2048,2048]", "stack"),
        P("stack-4-sumall", "return jnp.sum(jnp.stack([jnp.sin(x), jnp.cos(x), x, -x], axis=1))", "f32[2048,4096]",
          "stack"),
        P("stack-bf16", "t = jnp.stack([x * 2, jnp.exp(x)], axis=-1)\nreturn jnp.sum(t.astype(jnp.float32), axis=-1)",
          BF64, "stack"),
        P("stack-max", "return jnp.max(jnp.stack([x + 1.0, x * 3.0, jnp.exp(x)], axis=1), axis=(1, 2))", M64,
          "stack"),
        P("stack-u8-popcount", "t = jnp.stack([(x >> s) & 1 for s in range(8)], axis=-1).astype(jnp.uint8)\n"
          "return jnp.sum(lax.population_count(t).astype(jnp.int32), axis=-1)", "u32[2048,2048]", "stack"),
        G("stack-grad", "return jnp.sum(jnp.tanh(jnp.stack([x * 2.0, jnp.exp(x)], axis=-1)))", M64, "stack"),
        P("concat-0", "return jnp.sum(jnp.concatenate([jnp.exp(x), x * x], axis=0), axis=1)", M64, "concatenate"),
        P("concat-1", "return jnp.sum(jnp.concatenate([jnp.exp(x), x * x], axis=1), axis=1)", M64, "concatenate"),
        P("concat-small", "return jnp.sum(jnp.concatenate([jnp.exp(x), x * x], axis=1), axis=1)", SMALL,
          "concatenate"),
        P("roll-exp", "return jnp.sum(jnp.roll(jnp.exp(x), 1, axis=1) * x, axis=1)", M64, "roll"),
        P("roll-diff", "y = jnp.exp(x)\nreturn jnp.sum((jnp.roll(y, 1, axis=0) - y) ** 2, axis=0)", M64, "roll"),
        # -- triangular solve, Cholesky ------------------------------------------------------------------
        P("trisolve-sumsq", "y = lax.linalg.triangular_solve(l, b, left_side=True, lower=True)\n"
          "return jnp.sum(y * y, axis=0)", "f32[2048,2048], f32[2048,4096]", "triangular_solve", args="l, b"),
        P("trisolve-right", "y = lax.linalg.triangular_solve(l, b, left_side=False, lower=True, transpose_a=True)\n"
          "return jnp.sum(jnp.exp(y), axis=1)", "f32[1024,1024], f32[8192,1024]", "triangular_solve",
          args="l, b"),
        P("trisolve-batched", "y = jax.scipy.linalg.solve_triangular(l, b, lower=True)\n"
          "return jnp.sum(y ** 2, axis=(1, 2))", "f32[64,256,256], f32[64,256,512]", "triangular_solve",
          args="l, b"),
        P("trisolve-computed", "y = jax.scipy.linalg.solve_triangular(l, jnp.tanh(b), lower=True)\n"
          "return jnp.max(y, axis=0)", "f32[2048,2048], f32[2048,4096]", "triangular_solve", args="l, b"),
        P("cholesky-sum", "c = jnp.linalg.cholesky(a @ a.T + 4096.0 * jnp.eye(a.shape[0]))\n"
          "return jnp.sum(jnp.log(jnp.abs(c) + 1.0), axis=1)", "f32[4096,4096]", "cholesky", args="a"),
        P("cho-solve", "c = jnp.linalg.cholesky(a)\ny = jax.scipy.linalg.cho_solve((c, True), b)\n"
          "return jnp.sum(y * y, axis=0)", "f32[2048,2048], f32[2048,4096]", "cholesky", args="a, b"),
    ]


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, programs, TARGETS, TRUTH)


if __name__ == "__main__":
    raise SystemExit(main())
