"""Probe programs for contraction chains: what XLA does with a table that one contraction computes and
another reads, with a table two contractions feed, with a gradient's backward tables between
contractions, and with a program whose only reduction is a contraction of a computed operand.

Each probe is a module whose ``f`` is one of four shapes of program (``x``, ``y``: activations; ``w1``,
``w2``, ``v``: weights; tables of 16 to 64 MB in ``f32``, some ``bf16``, some of odd sizes):

- ``chain``: ``h = F(x @ w1)``, then ``h @ w2`` reduced after (a mean over the rows, a sum over the last
  axis, a sum of squares), or ``h`` reduced before (a layer norm of ``x @ w1``) and ``h @ w2`` after;
  ``F`` is the identity, ``exp``, ``tanh``, ``relu``, a scale, a bias, a convert to ``bf16``;
- ``two``: two contractions summed, multiplied or gated into one table, then reduced;
- ``grad``: ``jax.grad`` of a loss of a contraction (a linear regression, a tanh layer, a two-layer MLP),
  whose reduction is dead forward code: the backward's tables are between contractions;
- ``only``: no reduction at all, a contraction reads a computed operand (``exp(x) @ w``, ``(x * x) @ w``,
  a batched ``einsum`` of ``exp(s)``, a one-hot comparison, ``exp(x @ w1) @ w2``).

The truth is the family benchmark's (:func:`guide_predictor_family.compile_truth`), written to
``benchmarks/data/guide_predictor_dots_probes_truth.jsonl``; every probe is compiled for the three
targets.

Run::

    python benchmarks/guide_predictor_dots_probes.py --compile     # what is not compiled yet
    python benchmarks/guide_predictor_dots_probes.py               # the truth beside the rules' answer
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program, _module  # noqa: E402
from guide_predictor_probing import probe_main  # noqa: E402

TRUTH = ROOT / "benchmarks" / "data" / "guide_predictor_dots_probes_truth.jsonl"
TARGETS = ["cpu", "gpu:h100", "tpu:v5e"]

#: ``F``, applied to a contraction's output ``h`` (``b``: a bias row).
FS = {
    "id": "h",
    "exp": "jnp.exp(h)",
    "tanh": "jnp.tanh(h)",
    "relu": "jax.nn.relu(h)",
    "scale": "h * 0.5",
    "bias": "h + b",
    "bf16": "h.astype(jnp.bfloat16)",
}

#: The reduction of the chain's last table ``o``.
AFTER = {
    "mean0": "jnp.mean(o, axis=0)",
    "sumlast": "jnp.sum(o, axis=-1)",
    "sumsq": "jnp.sum(o * o)",
}


def _p(name: str, kind: str, body: str, specs: str) -> Program:
    return Program(name, "dots-probes", _module(body), specs, [f"kind={kind}"])


def chain(name: str, f: str = "id", after: str = "mean0", n: int = 4096, d: int = 512, hidden: int = 4096,
          out: int = 1024, dtype: str = "f32", before: bool = False) -> Program:
    """``F(x @ w1) @ w2`` reduced by ``after`` (``before``: a layer norm of ``x @ w1`` first)."""
    w2t = "bf16" if f == "bf16" else dtype
    norm = ("    h = (h - jnp.mean(h, -1, keepdims=True)) * lax.rsqrt(jnp.var(h, -1, keepdims=True) + 1e-5)\n"
            if before else "")
    body = (f"def f(x, w1, w2, b):\n    h = x @ w1\n{norm}    h = {FS[f]}\n    o = h @ w2\n"
            f"    return {AFTER[after]}\n")
    specs = f"{dtype}[{n},{d}], {dtype}[{d},{hidden}], {w2t}[{hidden},{out}], {dtype}[{hidden}]"
    return _p(name, "chain", body, specs)


def two(name: str, expr: str, red: str = "jnp.mean(t, axis=0)", n: int = 4096, d: int = 512, m: int = 4096,
        dtype: str = "f32") -> Program:
    """``t = expr`` of ``a = x @ w1`` and ``c = y @ w2`` (or ``x @ w2``), reduced by ``red``."""
    body = f"def f(x, y, w1, w2):\n    a = x @ w1\n    c = y @ w2\n    t = {expr}\n    return {red}\n"
    specs = f"{dtype}[{n},{d}], {dtype}[{n},{d}], {dtype}[{d},{m}], {dtype}[{d},{m}]"
    return _p(name, "two", body, specs)


def grad(name: str, loss: str, specs: str, wrt: str = "w") -> Program:
    """``jax.grad`` of ``loss`` (an expression of ``x``, ``w``, ``y``) with respect to ``wrt``."""
    body = (f"def g(x, w, y):\n    return {loss}\n\n\n"
            f"def f(x, w, y):\n    return jax.grad(g, argnums={'xwy'.index(wrt)})(x, w, y)\n")
    return _p(name, "grad", body, specs)


def only(name: str, body: str, specs: str) -> Program:
    return _p(name, "only", body, specs)


def programs() -> list[Program]:
    C = chain
    sq = {"hidden": 2048, "out": 2048}  # both tables 32 MB
    return [
        # a chain reduced after: each F, a wide first table (64 MB) before a 16 MB second
        *[C(f"chain-{f}-mean0", f=f) for f in FS],
        *[C(f"chain-{f}-sumlast", f=f, after="sumlast") for f in ("id", "exp", "relu")],
        C("chain-tanh-sumsq", f="tanh", after="sumsq"),
        # both tables the same size
        *[C(f"chain-sq-{f}-mean0", f=f, **sq) for f in ("id", "exp", "relu", "bias")],
        C("chain-sq-tanh-sumlast", f="tanh", after="sumlast", **sq),
        # a reduction before the second contraction too (a layer norm of the first table)
        C("chain-ln-relu-mean0", f="relu", before=True),
        C("chain-sq-ln-id-sumlast", before=True, after="sumlast", **sq),
        # bf16, odd sizes
        C("chain-relu-mean0-bf16", f="relu", dtype="bf16"), C("chain-tanh-sumlast-bf16", f="tanh", after="sumlast",
                                                             dtype="bf16"),
        C("chain-relu-mean0-odd", f="relu", n=3000, d=500, hidden=3000, out=1000),
        C("chain-exp-sumlast-odd", f="exp", after="sumlast", n=5000, d=300, hidden=1500, out=1500),
        # two contractions into one table
        two("two-add-mean0", "a + c"), two("two-mul-sumlast", "a * c", "jnp.sum(t, axis=-1)"),
        two("two-swiglu-mean0", "jax.nn.silu(a) * c"), two("two-expmul-sumlast", "jnp.exp(-a) * c",
                                                            "jnp.sum(t, axis=-1)"),
        two("two-add-sumsq-bf16", "a + c", "jnp.sum(t.astype(jnp.float32) ** 2)", dtype="bf16"),
        two("two-mul-mean0-odd", "a * c", n=3000, d=200, m=3000),
        two("two-tanhadd-max", "jnp.tanh(a + c)", "jnp.max(t, axis=-1)"),
        # a gradient's backward tables between contractions (the forward reduction is dead)
        grad("grad-linreg-w", "jnp.mean((x @ w - y) ** 2)", "f32[8192,1024], f32[1024,1024], f32[8192,1024]"),
        grad("grad-linreg-x", "jnp.mean((x @ w - y) ** 2)", "f32[8192,1024], f32[1024,1024], f32[8192,1024]",
             wrt="x"),
        grad("grad-linreg-w-bf16", "jnp.mean(((x @ w) - y).astype(jnp.float32) ** 2)",
             "bf16[8192,1024], bf16[1024,1024], bf16[8192,1024]"),
        grad("grad-tanh-sq-x", "jnp.sum(jnp.tanh(x @ w) ** 2)", "f32[4096,1024], f32[1024,4096], f32[1]", wrt="x"),
        grad("grad-tanh-sq-w", "jnp.sum(jnp.tanh(x @ w) ** 2)", "f32[4096,1024], f32[1024,4096], f32[1]"),
        grad("grad-cos-sum-w", "jnp.sum(jnp.cos(x @ w))", "f32[4096,1024], f32[1024,4096], f32[1]"),
        grad("grad-mlp-w", "jnp.mean(jnp.tanh(x @ w) @ y)", "f32[4096,1024], f32[1024,4096], f32[4096,256]"),
        grad("grad-mlp-x", "jnp.mean(jax.nn.relu(x @ w) @ y)", "f32[4096,1024], f32[1024,4096], f32[4096,256]",
             wrt="x"),
        grad("grad-linreg-w-odd", "jnp.mean((x @ w - y) ** 2)", "f32[5000,1000], f32[1000,1000], f32[5000,1000]"),
        # the only reduction is a contraction of a computed operand
        only("only-exp", "def f(x, w):\n    return jnp.exp(x) @ w\n", "f32[4096,4096], f32[4096,64]"),
        only("only-sq", "def f(x, w):\n    return (x * x) @ w\n", "f32[4096,4096], f32[4096,64]"),
        only("only-tanh", "def f(x, w):\n    return jnp.tanh(x) @ w\n", "f32[4096,4096], f32[4096,64]"),
        only("only-relu", "def f(x, w):\n    return jax.nn.relu(x) @ w\n", "f32[4096,4096], f32[4096,64]"),
        only("only-scale", "def f(x, w):\n    return (x * 0.5) @ w\n", "f32[4096,4096], f32[4096,64]"),
        only("only-bias", "def f(x, w, b):\n    return (x + b) @ w\n", "f32[4096,4096], f32[4096,64], f32[4096]"),
        only("only-bf16", "def f(x, w):\n    return x.astype(jnp.bfloat16) @ w\n", "f32[4096,4096], bf16[4096,64]"),
        only("only-exp-left", "def f(x, w):\n    return w.T @ jnp.exp(x)\n", "f32[4096,4096], f32[4096,64]"),
        only("only-exp-bf16", "def f(x, w):\n    return jnp.exp(x) @ w\n", "bf16[4096,4096], bf16[4096,64]"),
        only("only-exp-odd", "def f(x, w):\n    return jnp.exp(x) @ w\n", "f32[3000,5000], f32[5000,100]"),
        only("only-exp-wide", "def f(x, w):\n    return jnp.exp(x) @ w\n", "f32[4096,4096], f32[4096,1024]"),
        only("only-chain-exp", "def f(x, w1, w2):\n    return jnp.exp(x @ w1) @ w2\n",
             "f32[4096,256], f32[256,4096], f32[4096,64]"),
        only("only-chain-id", "def f(x, w1, w2):\n    return (x @ w1) @ w2\n",
             "f32[4096,256], f32[256,4096], f32[4096,64]"),
        only("only-bexp", "def f(s, v):\n    return jnp.einsum('bqk,bkd->bqd', jnp.exp(s), v)\n",
             "f32[16,1024,1024], f32[16,1024,64]"),
        only("only-onehot", "def f(a, b):\n    oa = (a[:, None] == jnp.arange(256)).astype(jnp.float32)\n"
             "    ob = (b[:, None] == jnp.arange(256)).astype(jnp.float32)\n    return oa.T @ ob\n",
             "s32[65536], s32[65536]"),
        only("only-grad-exp-w", "def f(x, w):\n    return jax.grad(lambda w: jnp.vdot(jnp.exp(x) @ w, "
             "jnp.ones((x.shape[0], w.shape[1]))))(w)\n", "f32[4096,4096], f32[4096,64]"),
        # after the first compiles: more backward tables (a nonlinearity of a contraction's output, a residual),
        # more tables two contractions feed (batched, odd)
        grad("grad-exp-sum-w", "jnp.sum(jnp.exp(x @ w))", "f32[4096,1024], f32[1024,4096], f32[1]"),
        grad("grad-sigmoid-sum-x", "jnp.sum(jax.nn.sigmoid(x @ w))", "f32[4096,1024], f32[1024,4096], f32[1]",
             wrt="x"),
        grad("grad-relu-sq-w", "jnp.sum(jax.nn.relu(x @ w) ** 2)", "f32[4096,1024], f32[1024,4096], f32[1]"),
        grad("grad-sin-sum-w-odd", "jnp.sum(jnp.sin(x @ w))", "f32[3000,700], f32[700,5000], f32[1]"),
        grad("grad-tanh-sq-w-bf16", "jnp.sum(jnp.tanh(x @ w).astype(jnp.float32) ** 2)",
             "bf16[4096,1024], bf16[1024,4096], f32[1]"),
        grad("grad-tanh-sq-w-small", "jnp.sum(jnp.tanh(x @ w) ** 2)", "f32[1024,256], f32[256,1024], f32[1]"),
        grad("grad-linreg-w-sq", "jnp.mean((x @ w - y) ** 2)", "f32[4096,4096], f32[4096,4096], f32[4096,4096]"),
        grad("grad-linreg-w-narrow", "jnp.mean((x @ w - y) ** 2)", "f32[16384,256], f32[256,1024], f32[16384,1024]"),
        grad("grad-linreg-x-odd", "jnp.mean((x @ w - y) ** 2)", "f32[5000,1000], f32[1000,1000], f32[5000,1000]",
             wrt="x"),
        grad("grad-abs-w", "jnp.mean(jnp.abs(x @ w - y))", "f32[8192,1024], f32[1024,1024], f32[8192,1024]"),
        two("two-badd-sumlast", "a + c", "jnp.sum(t, axis=-1)", n=4096, d=256, m=2048),
        _p("two-bein-mean1", "two", "def f(q, k, r):\n    s = jnp.einsum('bqd,bkd->bqk', q, k) + "
           "jnp.einsum('bqd,bkd->bqk', q, r)\n    return jnp.mean(jnp.tanh(s), axis=1)\n",
           "f32[16,1024,64], f32[16,1024,64], f32[16,1024,64]"),
        # after the second compiles: the input's gradient (the backward contraction reads the table's last
        # axis) at the sizes and forms whose weight gradient fused
        grad("grad-tanh-sq-x-small", "jnp.sum(jnp.tanh(x @ w) ** 2)", "f32[1024,256], f32[256,1024], f32[1]", wrt="x"),
        grad("grad-linreg-x-narrow", "jnp.mean((x @ w - y) ** 2)", "f32[16384,256], f32[256,1024], f32[16384,1024]",
             wrt="x"),
        grad("grad-sin-sum-x-odd", "jnp.sum(jnp.sin(x @ w))", "f32[3000,700], f32[700,5000], f32[1]", wrt="x"),
        grad("grad-linreg-x-bf16", "jnp.mean(((x @ w) - y).astype(jnp.float32) ** 2)",
             "bf16[8192,1024], bf16[1024,1024], bf16[8192,1024]", wrt="x"),
        grad("grad-exp-sum-x", "jnp.sum(jnp.exp(x @ w))", "f32[4096,1024], f32[1024,4096], f32[1]", wrt="x"),
        grad("grad-cos-sum-x", "jnp.sum(jnp.cos(x @ w))", "f32[4096,1024], f32[1024,4096], f32[1]", wrt="x"),
        grad("grad-relu-sq-x", "jnp.sum(jax.nn.relu(x @ w) ** 2)", "f32[4096,1024], f32[1024,4096], f32[1]",
             wrt="x"),
        grad("grad-linreg-x-sq", "jnp.mean((x @ w - y) ** 2)", "f32[4096,4096], f32[4096,4096], f32[4096,4096]",
             wrt="x"),
        # after the third compiles: a first contraction of 256 or fewer (each fused so far) against the sizes
        # whose chains and gradients stored with a longer one
        C("chain-sq-relu-mean0-k256", f="relu", d=256, **sq), C("chain-sq-id-sumlast-k128", after="sumlast", d=128,
                                                                 **sq),
        C("chain-relu-mean0-k256", f="relu", d=256), C("chain-sq-relu-mean0-k384", f="relu", d=384, **sq),
        C("chain-relu-mean0-k256-odd", f="relu", n=3000, d=250, hidden=3000, out=1000),
        C("chain-sq-relu-mean0-k256-bf16", f="relu", d=256, dtype="bf16", **sq),
        grad("grad-tanh-sq-x-k256", "jnp.sum(jnp.tanh(x @ w) ** 2)", "f32[4096,256], f32[256,4096], f32[1]", wrt="x"),
        grad("grad-linreg-w-k256-bf16", "jnp.mean(((x @ w) - y).astype(jnp.float32) ** 2)",
             "bf16[8192,256], bf16[256,1024], bf16[8192,1024]"),
    ]


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, programs, TARGETS, TRUTH)


if __name__ == "__main__":
    raise SystemExit(main())
