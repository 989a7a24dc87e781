"""Probe programs for the H100 gather rules: what XLA's GPU fusion does with a gather that reads a computed
table-sized value or builds one, and with the reductions around it.

Each probe is a module whose ``f`` gathers (``take_along_axis`` after a ``log_softmax``, a ``softmax`` or an
elementwise producer; ``x[idx]`` rows of a computed table or of an argument, then elementwise work and a
reduction; embedding lookups by ``jnp.take`` with one index a row or many, then sums, means, norms;
indices from arguments or computed by ``argmax`` and ``top_k``; f32, bf16, f16, int; tiny to 500 MB+
tables; under ``jax.grad`` and ``vmap``).  The truth is the family benchmark's
(:func:`guide_predictor_family.compile_truth`), written to
``benchmarks/data/guide_predictor_gather_probes_truth.jsonl``.

Run::

    python benchmarks/guide_predictor_gather_probes.py --compile     # what is not compiled yet
    python benchmarks/guide_predictor_gather_probes.py               # the truth beside the rules' answer
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program  # noqa: E402
from guide_predictor_probing import probe_main, probe_maker  # noqa: E402

TRUTH = ROOT / "benchmarks" / "data" / "guide_predictor_gather_probes_truth.jsonl"
TARGETS = ["gpu:h100"]


probe = probe_maker("gather-probes")


#: take_along_axis of one index a row after a producer ``p`` of the table ``x`` (logits [n, v]).
TAKE_PRODUCERS = {
    "logsoftmax": "jax.nn.log_softmax(x, axis=-1)",
    "softmax": "jax.nn.softmax(x, axis=-1)",
    "exp": "jnp.exp(x) * 2.0",
    "tanh": "jnp.tanh(x)",
    "mul": "x * 3.0",
    "logsumexp": "x - jax.nn.logsumexp(x, axis=-1, keepdims=True)",
}


def take_probe(name: str, prod: str = "logsoftmax", n: int = 4096, v: int = 4096, dtype: str = "f32",
               out: str = "mean", wrap: str = "", k: int = 1) -> Program:
    idx = "labels[:, None]" if k == 1 else "labels"
    red = {"mean": "-jnp.mean(g)", "sum_both": "jnp.sum(g), jnp.sum(p)", "rowsum": "jnp.sum(g, axis=-1)",
           "both_max": "jnp.mean(g), jnp.max(p, axis=-1)"}[out]
    body = (f"def g_(x, labels):\n    p = {TAKE_PRODUCERS[prod]}\n"
            f"    g = jnp.take_along_axis(p, {idx}, axis=-1)\n    return {red}\n\n\n")
    if wrap == "grad":
        body += "def f(x, labels):\n    return jax.grad(lambda x: g_(x, labels))(x)\n"
    elif wrap == "vmap":
        body += "def f(x, labels):\n    return jax.vmap(g_)(x, labels)\n"
    elif wrap == "value_and_grad":
        body += "def f(x, labels):\n    return jax.value_and_grad(lambda x: g_(x, labels))(x)\n"
    else:
        body += "def f(x, labels):\n    return g_(x, labels)\n"
    lab = f"i32[{n}]" if k == 1 else f"i32[{n},{k}]"
    if wrap == "vmap":
        return probe(name, body, f"{dtype}[4,{n},{v}], i32[4,{n}]" if k == 1 else f"{dtype}[4,{n},{v}], i32[4,{n},{k}]",
                     "take", f"producer={prod}", f"wrap={wrap}")
    return probe(name, body, f"{dtype}[{n},{v}], {lab}", "take", f"producer={prod}", f"wrap={wrap or 'none'}")


#: row gathers ``t[idx]`` of a table ``t`` then a reduction of the gathered rows ``r``.
ROW_REDS = {
    "sumsq": "jnp.sum(r * r, axis=-1)",
    "expsum": "jnp.sum(jnp.exp(r), axis=-1)",
    "mean": "jnp.mean(r, axis=0)",
    "norm": "jnp.linalg.norm(r, axis=-1)",
    "max": "jnp.max(r, axis=-1)",
    "sumall": "jnp.sum(r)",
}


def rows_probe(name: str, src: str = "jnp.tanh(x)", n: int = 8192, d: int = 1024, m: int = 8192,
               red: str = "sumsq", dtype: str = "f32", idx: str = "arg", wrap: str = "") -> Program:
    """``t = src(x)`` ([n, d]), ``r = t[i]`` with ``m`` indices: from an argument, or computed."""
    if idx == "arg":
        iexpr, ispec = "i", f", i32[{m}]"
    elif idx == "argmax":  # one index per row of a second argument
        iexpr, ispec = "jnp.argmax(s, axis=-1)", f", f32[{m},{n}]"
    else:  # top_k of a score vector
        iexpr, ispec = f"lax.top_k(s, {m})[1]", f", f32[{n}]"
    arg = "i" if idx == "arg" else "s"
    body = (f"def g_(x, {arg}):\n    t = {src}\n    r = t[{iexpr}]\n    return {ROW_REDS[red]}\n\n\n")
    if wrap == "grad":
        body += f"def f(x, {arg}):\n    return jax.grad(lambda x: jnp.sum(g_(x, {arg})))(x)\n"
    else:
        body += f"def f(x, {arg}):\n    return g_(x, {arg})\n"
    return probe(name, body, f"{dtype}[{n},{d}]{ispec}", "rows", f"src={src}", f"idx={idx}", f"wrap={wrap or 'none'}")


def emb_probe(name: str, v: int = 32000, d: int = 512, b: int = 64, seq: int = 256, red: str = "bag",
              dtype: str = "f32", wrap: str = "", post: str = "e") -> Program:
    """An embedding lookup ``e = emb[ids]`` ([b, seq, d]) and a reduction of it."""
    reds = {"bag": "jnp.sum(e, axis=1)", "mean": "jnp.mean(e, axis=1)",
            "norm": "jnp.sqrt(jnp.sum(e * e, axis=-1))", "sumall": "jnp.sum(e)",
            "ln": "m = jnp.mean(e, axis=-1, keepdims=True)\n    return jnp.mean((e - m) ** 2, axis=-1)"}
    r = reds[red]
    ret = r if r.startswith("m =") else f"return {r}"
    body = f"def g_(emb, ids):\n    e = jnp.take(emb, ids, axis=0)\n    e = {post}\n    {ret}\n\n\n"
    if wrap == "grad":
        body += "def f(emb, ids):\n    return jax.grad(lambda emb: jnp.sum(g_(emb, ids)))(emb)\n"
    else:
        body += "def f(emb, ids):\n    return g_(emb, ids)\n"
    return probe(name, body, f"{dtype}[{v},{d}], i32[{b},{seq}]", "emb", f"red={red}", f"wrap={wrap or 'none'}")


def programs() -> list[Program]:
    T, R, E = take_probe, rows_probe, emb_probe
    return [
        # take_along_axis after a producer of the whole table, one index a row
        *[T(f"take-{p}", prod=p) for p in TAKE_PRODUCERS],
        T("take-logsoftmax-bf16", dtype="bf16"), T("take-logsoftmax-f16", dtype="f16"),
        T("take-logsoftmax-tiny", n=256, v=1024), T("take-logsoftmax-big", n=8192, v=32000, dtype="bf16"),
        T("take-logsoftmax-big-f32", n=4096, v=32768), T("take-exp-tiny", prod="exp", n=256, v=1024),
        T("take-logsoftmax-k8", k=8), T("take-exp-k64", prod="exp", k=64, out="rowsum"),
        T("take-logsoftmax-sumboth", out="sum_both"), T("take-exp-sumboth", prod="exp", out="sum_both"),
        T("take-tanh-max", prod="tanh", out="both_max"),
        T("take-logsoftmax-vmap", wrap="vmap", n=1024), T("take-exp-vmap", prod="exp", wrap="vmap", n=1024),
        # the gradient: a scatter (or one-hot select) into the table-sized cotangent
        T("take-logsoftmax-grad", wrap="grad"), T("take-logsoftmax-vg", wrap="value_and_grad"),
        T("take-logsoftmax-grad-bf16", wrap="grad", dtype="bf16"), T("take-exp-grad", prod="exp", wrap="grad"),
        # rows of a computed table, m indices from an argument
        R("rows-tanh-sumsq"), R("rows-tanh-expsum", red="expsum"), R("rows-exp-mean", src="jnp.exp(x)", red="mean"),
        R("rows-tanh-norm", red="norm"), R("rows-tanh-max", red="max"), R("rows-tanh-sumall", red="sumall"),
        R("rows-tanh-small", m=64), R("rows-tanh-dup", m=32768), R("rows-tanh-bf16", dtype="bf16"),
        R("rows-tanh-f16", dtype="f16", red="expsum"), R("rows-tanh-tiny", n=256, d=1024, m=256),
        R("rows-tanh-big", n=65536, d=2048, m=65536, dtype="bf16"),
        R("rows-mul-sumsq", src="x * 2.0 + 1.0"), R("rows-cos-sumsq", src="jnp.cos(x)"),
        R("rows-softmax-sumsq", src="jax.nn.softmax(x, axis=-1)"),
        R("rows-lsm-mean", src="jax.nn.log_softmax(x, axis=-1)", red="mean"),
        # rows of an argument, then elementwise work and a reduction
        R("rows-arg-expsum", src="x", red="expsum"), R("rows-arg-sumsq", src="x"),
        R("rows-arg-dup-expsum", src="x", m=32768, red="expsum"), R("rows-arg-mean", src="x", red="mean"),
        R("rows-arg-bf16-norm", src="x", red="norm", dtype="bf16"),
        # computed indices
        R("rows-tanh-argmax", idx="argmax", m=4096, n=4096, d=1024),
        R("rows-tanh-topk", idx="topk", m=4096), R("rows-arg-topk", src="x", idx="topk", m=4096, red="expsum"),
        # gradients of row gathers (the backward scatter-add)
        R("rows-tanh-grad", wrap="grad"), R("rows-arg-grad", src="x", wrap="grad", red="expsum"),
        # embedding lookups: output larger than the table (IfFusedReadsElementsMultipleTimes) or smaller
        E("emb-bag"), E("emb-mean", red="mean"), E("emb-norm", red="norm"), E("emb-sumall", red="sumall"),
        E("emb-ln", red="ln"), E("emb-small-vocab-bag", v=1000, b=256), E("emb-small-vocab-norm", v=1000, b=256,
                                                                          red="norm"),
        E("emb-bf16-bag", dtype="bf16"), E("emb-f16-norm", dtype="f16", red="norm"),
        E("emb-tiny", v=4096, d=64, b=16, seq=256), E("emb-big", v=65536, d=1024, b=128, seq=1024, dtype="bf16"),
        E("emb-tanh-bag", post="jnp.tanh(e)"), E("emb-exp-norm", post="jnp.exp(e)", red="norm"),
        E("emb-scale-bag", post="e * 2.0"), E("emb-int8-bag", dtype="s8", post="e.astype(jnp.float32)"),
        E("emb-grad", wrap="grad"), E("emb-grad-small-vocab", v=1000, b=256, wrap="grad"),
        # second batch, before the first measure: the softmax's row length, the scatter of a gradient, the
        # size of a row gather, two-pass statistics of gathered rows
        T("take-logsoftmax-v8192", n=1024, v=8192), T("take-logsoftmax-v16384", n=1024, v=16384),
        T("take-logsoftmax-v16400", n=1024, v=16400), T("take-logsoftmax-v20000", n=1024, v=20000),
        T("take-softmax-v16384-bf16", prod="softmax", n=1024, v=16384, dtype="bf16"),
        T("take-softmax-v24576", prod="softmax", n=512, v=24576), T("take-logsoftmax-n64", n=64, v=4096),
        T("take-logsoftmax-v16400-grad", n=1024, v=16400, wrap="grad"),
        probe("take-arg-grad", "def f(x, labels):\n    return jax.grad(lambda x: jnp.mean(jnp.take_along_axis("
              "x, labels[:, None], axis=-1)))(x)\n", "f32[4096,4096], i32[4096]", "scatter"),
        probe("at-add-tanh-sum", "def f(u, i):\n    t = jnp.zeros((8192, 1024), u.dtype).at[i].add(u)\n"
              "    return jnp.sum(jnp.tanh(t), axis=-1)\n", "f32[4096,1024], i32[4096]", "scatter"),
        R("rows-tanh-grad-bf16", dtype="bf16", wrap="grad"), R("rows-exp-grad-small", src="jnp.exp(x)", m=512,
                                                               wrap="grad"),
        R("rows-tanh-m512", m=512), R("rows-tanh-m1024", m=1024), R("rows-tanh-m2048", m=2048),
        R("rows-tanh-m4096", m=4096), R("rows-mul-m512", src="x * 2.0 + 1.0", m=512),
        R("rows-arg-m64", src="x", m=64, red="expsum"), R("rows-arg-m1024", src="x", m=1024, red="expsum"),
        R("rows-sin-512mb", src="jnp.sin(x)", n=131072, d=1024, m=131072),
        R("rows-exp-dup-bf16", src="jnp.exp(x)", m=32768, dtype="bf16", red="norm"),
        R("rows-tanh-1d-sumall", n=8192 * 1024, d=1, m=8192 * 1024, red="sumall"),
        E("emb-norm-bf16", dtype="bf16", red="norm"), E("emb-exp-norm-small", post="jnp.exp(e)", red="norm", b=8,
                                                         seq=64),
        E("emb-ln-bf16", dtype="bf16", red="ln"), E("emb-ln-small-vocab", v=1000, b=256, red="ln"),
        R("rows-tanh-ln", src="jnp.tanh(x)", red="max"),
        E("emb-bag-b256", b=256), E("emb-bag-v4096", v=4096), E("emb-mean-d64", d=64, b=256, seq=512, red="mean"),
        # third batch, before the first measure: an embedding's reuse, two-pass statistics of gathered rows
        E("emb-bag-v1000-b64", v=1000), E("emb-bag-v2000-b256", v=2000, b=256), E("emb-bag-v8192-b256", v=8192, b=256),
        E("emb-ln-v4096", v=4096, red="ln"),
        probe("rows-arg-ln", "def f(x, i):\n    r = x[i]\n    m = jnp.mean(r, axis=-1, keepdims=True)\n"
              "    return jnp.mean((r - m) ** 2, axis=-1)\n", "f32[8192,1024], i32[8192]", "rows", "two-pass"),
        probe("rows-tanh-ln2", "def f(x, i):\n    r = jnp.tanh(x)[i]\n    m = jnp.mean(r, axis=-1, keepdims=True)\n"
              "    return jnp.mean((r - m) ** 2, axis=-1)\n", "bf16[8192,1024], i32[8192]", "rows", "two-pass"),
        probe("rows-2d-idx-norm", "def f(x, i):\n    r = jnp.exp(x)[i]\n    return jnp.sum(r * r, axis=-1)\n",
              "f32[8192,1024], i32[64,128]", "rows"),
        probe("rows-3d-sumsq", "def f(x, i):\n    r = (x * 2.0)[:, i]\n    return jnp.sum(r * r, axis=-1)\n",
              "f32[16,8192,256], i32[8192]", "rows"),
        probe("rows-col-gather", "def f(x, i):\n    r = jnp.tanh(x)[:, i]\n    return jnp.sum(r, axis=-1)\n",
              "f32[4096,4096], i32[4096]", "rows", "columns"),
        probe("take-mul-rowsum-big", "def f(x, j):\n    r = jnp.take_along_axis(x * 2.0, j, axis=-1)\n"
              "    return jnp.sum(jnp.exp(r), axis=-1)\n", "f32[4096,4096], i32[4096,4096]", "take"),
        probe("emb-sum-vmap", "def g(emb, ids):\n    return jnp.sum(jnp.take(emb, ids, axis=0) ** 2, axis=-1)\n\n\n"
              "def f(emb, ids):\n    return jax.vmap(g, in_axes=(None, 0))(emb, ids)\n",
              "f32[32000,512], i32[64,256]", "emb", "vmap"),
    ]


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, programs, TARGETS, TRUTH)


if __name__ == "__main__":
    raise SystemExit(main())
