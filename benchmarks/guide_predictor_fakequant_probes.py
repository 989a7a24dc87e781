"""Probe programs for fake quantisation before a contraction: an operand quantised and dequantised (its scales
from a reduction of the same table) and then contracted, as quantisation-aware training and post-training
quantisation search write it.

Written after wild17's ``awq_activation_aware_scale_grid_search_int4_bf16``
(``benchmarks/guide_predictor_holdout18.py``): a weight grouped by ``w.reshape(-1, 128, n)``, its group
maximum and minimum taken, ``q = clip(round(g / scale) + zero, 0, 15)`` dequantised and reshaped back, then
``x @ wq`` and an error reduced, over 20 grid points; the rules said the TPU fuses it (``tpu-fused``), and
the TPU wrote an ``f32[32,128,4096]`` table.

Each probe is a module whose ``f(x, w)`` quantises one operand ``a`` (the weight ``w`` ``[k, n]``, or the
activation ``x`` ``[m, k]``) and contracts it, ``x @ w`` over ``k``, changing one or two of:

- the scales' granularity (``gran``): ``tensor`` (one scale), ``ax0`` / ``ax1`` (one a column / a row:
  a reduction over axis 0 / 1), ``gK<G>`` (groups of ``G`` along the contracted axis: ``w.reshape(-1, G,
  n)`` reduced over axis 1, as AWQ and GPTQ group a weight; for ``x``, ``x.reshape(m, -1, G)`` over the
  last axis), ``gF<G>`` (groups along the free axis), ``flat<G>`` (``a.reshape(-1, G)`` over the last axis,
  blockwise);
- symmetric (``absmax / qmax``, ``q = clip(round(g / s))``) or asymmetric (min-max, a zero point) scales;
  int4 or int8 ranges;
- the straight-through estimator (``a + stop_gradient(aq - a)``) under ``jax.grad`` with respect to ``a``;
- the reduction after the contraction: ``mse`` against ``x @ w`` (the reference), ``sum``, ``lse`` (a
  ``logsumexp`` over the rows), or ``err`` (no contraction: the quantisation error ``mean((aq - a) ** 2)``);
- ``f32`` data, ``bf16`` data computed in ``bf16``, or ``bf16`` arguments converted to ``f32`` first (AWQ);
- odd and power-of-two shapes, 4 to 256 MiB tables;
- one trial, or a Python loop of several (clip ratios searched, as AWQ's grid search).

After the first 56 compiles, 13 more: groups of 8 to 512, the groups never merged back (the error in the
grouped shape, a grouped ``einsum``), the scales repeated to the table (``jnp.repeat``), a whole tensor
flattened, a batch of experts' weights, two group normalisations (no quantisation) before a contraction.

What the compiles show (deviceless, 2026-12-07; :func:`sphinx_jaxhlo.predict.dots.decide_grouped`):

- TPU v5e: every probe whose statistics are taken over axes a reshape split off and applied back to the
  table (``g / scale``, ``g - mean``) with groups of 16 or more wrote a table-sized buffer, 38 of 38: the
  ``[g, n]`` scales broadcast to ``[g, 128, n]`` (read by the dot's output fusion through a bitcast), the
  quotient, or ``abs(w)`` before a reduction reading it through a bitcast; on-chip or in HBM, the program
  often writing two such buffers.  Groups of 8 (along either axis) fused, and so did all 29 probes whose
  scales need no reshape (per tensor, per channel, one flattened tensor), under ``jax.grad`` and in loops
  alike.
- H100: the dequantised operand of a contraction is written before its GEMM (a loop fusion of its own) in
  every probe, grouped or not; the quantisation error alone (no contraction) fused.
- CPU: the dequantised operand is written (the ``clip`` is a clamp, not in YNN's table) for ``f32`` data and
  ``bf16`` arguments converted first; ``bf16`` computed throughout fused (2 probes), and so did the group
  normalisations (no ``clip``).

The truth is the family benchmark's (:func:`guide_predictor_family.compile_truth`), written to
``benchmarks/data/guide_predictor_fakequant_probes_truth.jsonl``, for the three targets.

Run::

    python benchmarks/guide_predictor_fakequant_probes.py --compile     # what is not compiled yet
    python benchmarks/guide_predictor_fakequant_probes.py               # the truth beside the rules' answer
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program  # noqa: E402
from guide_predictor_probing import probe_main, probe_maker  # noqa: E402

TRUTH = ROOT / "benchmarks" / "data" / "guide_predictor_fakequant_probes_truth.jsonl"
TARGETS = ["cpu", "gpu:h100", "tpu:v5e"]

probe = probe_maker("fakequant-probes")

#: The reductions after the contraction ``y`` (``err``: none, the quantisation error of ``aq``).
REDS = {
    "mse": "jnp.mean((y - y_ref) ** 2)",
    "sum": "jnp.sum(y)",
    "lse": "jnp.sum(jax.nn.logsumexp(y, axis=-1))",
}


def _grouping(gran: str, op: str) -> tuple[str, str]:
    """``g`` of ``a`` (the reshape, or ``a``) and the axis its statistics reduce over, by granularity; ``op``
    says which operand ``a`` is (``w``: contracted over axis 0; ``x``: over axis 1)."""
    if gran == "tensor":
        return "a", "None"
    if gran in ("ax0", "ax1"):
        return "a", gran[-1]
    size = int(gran.lstrip("gKFflat"))
    if gran.startswith("flat"):
        return f"a.reshape(-1, {size})", "1"
    along_rows = (gran.startswith("gK")) == (op == "w")  # the groups run down a's rows
    if along_rows:
        return f"a.reshape(-1, {size}, a.shape[1])", "1"
    return f"a.reshape(a.shape[0], -1, {size})", "2"


def fq(name: str, gran: str = "gK128", sym: bool = False, bits: int = 4, red: str = "mse", dtype: str = "f32",
       op: str = "w", m: int = 2048, k: int = 4096, n: int = 4096, trials: int = 1, ste: bool = False) -> Program:
    """One probe: ``op`` (``w``, ``x`` or ``xw``, both) fake-quantised at ``gran`` and contracted, ``x @ w``,
    then ``red``; ``trials`` clip ratios searched in a Python loop; ``ste``: ``jax.grad`` through the
    straight-through estimator with respect to the quantised operand."""
    g_expr, ax = _grouping(gran, "w" if op == "w" else "x")
    qmax = 2 ** (bits - 1) - 1
    levels = 2 ** bits - 1
    r = " * r" if trials > 1 else ""
    if sym:
        qbody = (f"        s = jnp.maximum(jnp.max(jnp.abs(g), axis={ax}, keepdims=True), 1e-8){r} / {qmax}\n"
                 f"        d = jnp.clip(jnp.round(g / s), {-qmax - 1}, {qmax}) * s\n")
    else:
        qbody = (f"        mx = jnp.max(g, axis={ax}, keepdims=True){r}\n"
                 f"        mn = jnp.min(g, axis={ax}, keepdims=True){r}\n"
                 f"        s = jnp.maximum(mx - mn, 1e-5) / {levels}\n"
                 "        z = jnp.round(-mn / s)\n"
                 f"        d = (jnp.clip(jnp.round(g / s) + z, 0, {levels}) - z) * s\n")
    lines = ["def f(x, w):"]
    if dtype == "bf16in":
        lines.append("    x, w = x.astype(jnp.float32), w.astype(jnp.float32)")
    lines += ["    def quant(a, r):", f"        g = {g_expr}", qbody.rstrip("\n"), "        return d.reshape(a.shape)"]
    if ste:
        lines += ["    def fq(a, r):", "        return a + lax.stop_gradient(quant(a, r) - a)"]
    else:
        lines += ["    fq = quant"]
    if red == "mse":
        lines.append("    y_ref = x @ w")
    if red == "err":
        body = "jnp.mean((fq(w, r) - w) ** 2)" if op == "w" else "jnp.mean((fq(x, r) - x) ** 2)"
        lines += ["    def loss(x, w, r):", f"        return {body}"]
    else:
        dot = {"w": "x @ fq(w, r)", "x": "fq(x, r) @ w", "xw": "fq(x, r) @ quant(w, r)"}[op]
        lines += ["    def loss(x, w, r):", f"        y = {dot}", f"        return {REDS[red]}"]
    if ste:
        lines.append(f"    return jax.grad(loss, argnums={1 if op == 'w' else 0})(x, w, 1.0)")
    elif trials > 1:
        ratios = ", ".join(f"{1.0 - 0.05 * i:.2f}" for i in range(trials))
        lines += [f"    errs = jnp.stack([loss(x, w, r) for r in ({ratios})])",
                  "    return jnp.argmin(errs), jnp.min(errs)"]
    else:
        lines.append("    return loss(x, w, 1.0)")
    dt = "f32" if dtype == "f32" else "bf16"
    specs = f"{dt}[{m},{k}], {dt}[{k},{n}]"
    classes = [f"gran={gran}", f"sym={int(sym)}", f"bits={bits}", f"red={red}", f"dtype={dtype}", f"op={op}",
               f"trials={trials}", f"ste={int(ste)}"]
    return probe(name, "\n".join(lines) + "\n", specs, *classes)


def programs() -> list[Program]:
    out: list[Program] = []
    # the granularity of the weight's scales, asymmetric and symmetric (64 MiB f32 weight, 32 MiB input)
    for gran in ("tensor", "ax0", "ax1", "gK32", "gK64", "gK128", "gF128", "flat128"):
        out += [fq(f"w-{gran}-asym", gran), fq(f"w-{gran}-sym", gran, sym=True)]
    # int8 ranges
    out += [fq("w-gK128-asym-int8", bits=8), fq("w-ax1-sym-int8", "ax1", sym=True, bits=8),
            fq("w-tensor-sym-int8", "tensor", sym=True, bits=8)]
    # the straight-through estimator under jax.grad (quantisation-aware training)
    out += [fq("ste-w-gK128-asym", ste=True), fq("ste-w-gK128-sym", sym=True, ste=True),
            fq("ste-w-ax0-sym", "ax0", sym=True, ste=True), fq("ste-w-ax1-sym", "ax1", sym=True, ste=True),
            fq("ste-w-tensor-sym", "tensor", sym=True, ste=True), fq("ste-w-gF128-sym", "gF128", sym=True, ste=True)]
    # the reduction after the contraction; the quantisation error alone (no contraction)
    for gran in ("gK128", "ax0"):
        out += [fq(f"w-{gran}-asym-{red}", gran, red=red) for red in ("sum", "lse", "err")]
    # bf16 data: computed in bf16, or converted to f32 first (AWQ)
    out += [fq("w-gK128-asym-bf16", dtype="bf16"), fq("w-gK128-asym-bf16in", dtype="bf16in"),
            fq("w-ax0-asym-bf16", "ax0", dtype="bf16"), fq("w-ax0-asym-bf16in", "ax0", dtype="bf16in"),
            fq("w-tensor-sym-bf16in", "tensor", sym=True, dtype="bf16in")]
    # the activation quantised: x [8192, 4096] (128 MiB) @ w [4096, 1024]; per token (ax1), per feature
    # (ax0), per tensor, groups along the contracted axis (the last) and along the tokens; both quantised
    act = {"op": "x", "m": 8192, "k": 4096, "n": 1024}
    out += [fq("x-ax1-sym", "ax1", sym=True, **act), fq("x-ax0-sym", "ax0", sym=True, **act),
            fq("x-tensor-sym", "tensor", sym=True, **act), fq("x-gK128-sym", "gK128", sym=True, **act),
            fq("x-gF128-sym", "gF128", sym=True, **act), fq("xw-ax1-sym", "ax1", sym=True, op="xw")]
    # odd shapes
    out += [fq("w-gK128-asym-odd", m=1000, k=3968, n=3000), fq("w-gK64-asym-odd", "gK64", m=1000, k=4032, n=3001),
            fq("w-ax0-asym-odd", "ax0", m=1000, k=4001, n=3001), fq("w-ax1-sym-odd", "ax1", sym=True, m=1000,
                                                                     k=4001, n=3001),
            fq("w-tensor-sym-odd", "tensor", sym=True, m=1000, k=4001, n=3001)]
    # sizes: 4, 16 and 256 MiB weights
    out += [fq("w-gK128-asym-4m", m=512, k=1024, n=1024), fq("w-gK128-asym-16m", m=1024, k=2048, n=2048),
            fq("w-gK128-asym-256m", m=1024, k=8192, n=8192), fq("w-ax0-asym-4m", "ax0", m=512, k=1024, n=1024),
            fq("w-ax0-asym-256m", "ax0", m=1024, k=8192, n=8192)]
    # a Python loop of trials (clip ratios), as AWQ's grid search
    out += [fq("loop4-w-gK128-asym", trials=4), fq("loop4-w-ax0-asym", "ax0", trials=4),
            fq("loop4-w-tensor-sym", "tensor", sym=True, trials=4),
            fq("loop4-w-gK128-asym-bf16in", trials=4, dtype="bf16in")]
    # after the first compiles (the TPU wrote a table in every probe whose scales are a reshape's groups, and
    # in none of the others): the group's size (8 to 512), the groups never merged back (the error in the
    # grouped shape; a grouped einsum), the group scales repeated to the table (jnp.repeat), a flattened
    # tensor, a batch of experts' weights, a group normalisation (no quantisation) before a contraction
    out += [fq(f"w-gK{s}-asym", f"gK{s}") for s in (8, 16, 256, 512)]
    out += [fq("w-gF8-asym", "gF8"), fq("w-gF32-sym", "gF32", sym=True)]
    out += [
        probe("w-gK128-err-grouped", GROUPED.format(tail="    return jnp.mean((d - g) ** 2)\n"),
              "f32[2048,4096], f32[4096,4096]", "gran=gK128", "merge=0", "red=err"),
        probe("w-gK128-einsum-grouped", GROUPED.format(
            tail="    y = jnp.einsum('mgk,gkn->mn', x.reshape(x.shape[0], -1, 128), d)\n"
                 "    return jnp.mean((y - x @ w) ** 2)\n"),
              "f32[2048,4096], f32[4096,4096]", "gran=gK128", "merge=0", "red=mse"),
        probe("w-gK128-repeat", "def f(x, w):\n    g = w.reshape(-1, 128, w.shape[1])\n"
              "    s = jnp.maximum(jnp.max(jnp.abs(g), axis=1), 1e-8) / 7\n"
              "    s = jnp.repeat(s, 128, axis=0)\n    wq = jnp.clip(jnp.round(w / s), -8, 7) * s\n"
              "    return jnp.mean((x @ wq - x @ w) ** 2)\n",
              "f32[2048,4096], f32[4096,4096]", "gran=gK128", "spelling=repeat"),
        probe("w-flatall-sym", "def f(x, w):\n    a = w.reshape(-1)\n"
              "    s = jnp.maximum(jnp.max(jnp.abs(a)), 1e-8) / 7\n"
              "    wq = (jnp.clip(jnp.round(a / s), -8, 7) * s).reshape(w.shape)\n"
              "    return jnp.mean((x @ wq - x @ w) ** 2)\n",
              "f32[2048,4096], f32[4096,4096]", "gran=tensor", "spelling=flat"),
        probe("experts-gK128-sym", "def f(x, w):\n    g = w.reshape(w.shape[0], -1, 128, w.shape[2])\n"
              "    s = jnp.maximum(jnp.max(jnp.abs(g), axis=2, keepdims=True), 1e-8) / 7\n"
              "    wq = (jnp.clip(jnp.round(g / s), -8, 7) * s).reshape(w.shape)\n"
              "    y = jnp.einsum('emk,ekn->emn', x, wq)\n    return jnp.sum(jax.nn.logsumexp(y, axis=-1))\n",
              "f32[8,512,2048], f32[8,2048,1024]", "gran=gK128", "op=experts"),
        probe("x-groupnorm-dot", "def f(x, w):\n    g = x.reshape(x.shape[0], 32, -1)\n"
              "    m = jnp.mean(g, axis=-1, keepdims=True)\n    v = jnp.mean((g - m) ** 2, axis=-1, keepdims=True)\n"
              "    h = ((g - m) * lax.rsqrt(v + 1e-5)).reshape(x.shape)\n    return jnp.sum(jnp.tanh(h @ w))\n",
              "f32[8192,4096], f32[4096,1024]", "gran=gK128", "spelling=groupnorm"),
        probe("x-groupnorm-rows-dot", "def f(x, w):\n    g = x.reshape(-1, 32, x.shape[1])\n"
              "    m = jnp.mean(g, axis=1, keepdims=True)\n"
              "    h = (g - m).reshape(x.shape)\n    return jnp.sum(jnp.tanh(h @ w))\n",
              "f32[8192,4096], f32[4096,1024]", "gran=gF32", "spelling=centred"),
    ]
    return out


#: A weight grouped along the contracted axis, quantised (asymmetric int4), the dequantised ``d`` left in the
#: grouped shape; ``tail`` reduces it.
GROUPED = """def f(x, w):
    g = w.reshape(-1, 128, w.shape[1])
    mx = jnp.max(g, axis=1, keepdims=True)
    mn = jnp.min(g, axis=1, keepdims=True)
    s = jnp.maximum(mx - mn, 1e-5) / 15
    z = jnp.round(-mn / s)
    d = (jnp.clip(jnp.round(g / s) + z, 0, 15) - z) * s
{tail}"""


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, programs, TARGETS, TRUTH)


if __name__ == "__main__":
    raise SystemExit(main())
