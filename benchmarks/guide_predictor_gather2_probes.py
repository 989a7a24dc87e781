"""Probe programs for the second H100 gather rules: the gathers the first study
(``guide_predictor_gather_probes.py``) left to the compile, an embedding bag reduced over its bag axis and a
few elements a row of an elementwise table reduced whole.

Each probe is a module whose ``f`` gathers: ``emb[ids]`` rows of an argument (or of an elementwise function of
one) reduced over the bag axis (sum, mean, max, weighted), for reuses (gathered rows over table rows) from 1/4
to 64; ``take_along_axis``, ``x[arange, labels]`` and ``jnp.take`` with a mode, of an elementwise function of
the arguments, one to 25 indices a row, reduced to a scalar or per row; under ``jax.grad`` and ``vmap``; f32
and bf16, odd and power-of-two sizes.  The truth is the family benchmark's
(:func:`guide_predictor_family.compile_truth`), written to
``benchmarks/data/guide_predictor_gather2_probes_truth.jsonl``.

Batches 1 and 2 were compiled before the rules were measured on the families; batches 3 to 6 after (each
says so).  The rules' figure on the families is ``guide_predictor_gather.py``'s (``--all before.json`` on
f13b1560, then ``--all after.json --diff before.json``): of the 29 family programs the H100 left to the
compile for a gather of a table, the rules as first written changed 10 answers, 7 right; after batches 3 and
4 (the mask split) 10, all right; after batches 5 and 6, in-sample, 14, all right, no other target changed.

Run::

    python benchmarks/guide_predictor_gather2_probes.py --compile     # what is not compiled yet
    python benchmarks/guide_predictor_gather2_probes.py               # the truth beside the rules' answer
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program  # noqa: E402
from guide_predictor_probing import probe_main, probe_maker  # noqa: E402

TRUTH = ROOT / "benchmarks" / "data" / "guide_predictor_gather2_probes_truth.jsonl"
TARGETS = ["gpu:h100"]


probe = probe_maker("gather2-probes")


#: reductions of an embedding bag ``e`` ([b, s, d]) over its bag axis.
BAG_REDS = {
    "sum": "jnp.sum(e, axis=1)",
    "mean": "jnp.mean(e, axis=1)",
    "max": "jnp.max(e, axis=1)",
    "wsum": "jnp.sum(e * w[..., None], axis=1)",
    "sqrtn": "jnp.sum(e, axis=1) / jnp.sqrt(float(e.shape[1]))",
}


def bag_probe(name: str, v: int = 32000, d: int = 256, b: int = 64, s: int = 256, red: str = "sum",
              dtype: str = "f32", post: str = "e", wrap: str = "", src: str = "emb", how: str = "take") -> Program:
    """``e = src[ids]`` ([b, s, d]) reduced over the bag axis ``s``; ``how``: ``jnp.take`` (its default mode
    fills out-of-bounds rows), ``index`` (``src[ids]``), ``clip`` or ``fill0`` (``jnp.take``'s modes)."""
    w = "w" if red == "wsum" else ""
    args = "emb, ids" + (", w" if w else "")
    look = {"take": f"jnp.take({src}, ids, axis=0)", "index": f"({src})[ids]",
            "clip": f"jnp.take({src}, ids, axis=0, mode='clip')",
            "fill0": f"jnp.take({src}, ids, axis=0, mode='fill', fill_value=0)"}[how]
    body = (f"def g_({args}):\n    e = {look}\n    e = {post}\n"
            f"    return {BAG_REDS[red]}\n\n\n")
    if wrap == "grad":
        body += f"def f({args}):\n    return jax.grad(lambda emb: jnp.sum(g_({args})))(emb)\n"
    elif wrap == "vmap":
        body += f"def f({args}):\n    return jax.vmap(g_, in_axes=(None, 0{', 0' if w else ''}))({args})\n"
    else:
        body += f"def f({args}):\n    return g_({args})\n"
    ids = f"i32[4,{b},{s}]" if wrap == "vmap" else f"i32[{b},{s}]"
    wspec = (f", f32[4,{b},{s}]" if wrap == "vmap" else f", f32[{b},{s}]") if w else ""
    return probe(name, body, f"{dtype}[{v},{d}], {ids}{wspec}", "bag", f"red={red}", f"wrap={wrap or 'none'}",
                 f"how={how}")


#: how a few elements a row are picked from the table ``p`` ([n, v]) with labels ``y``.
PICKS = {
    "take": "jnp.take_along_axis(p, y[:, None], axis=-1)[:, 0]",
    "index": "p[jnp.arange(p.shape[0]), y]",
    "clip": "jnp.take_along_axis(p, y[:, None], axis=-1, mode='clip')[:, 0]",
    "fill": "jnp.take_along_axis(p, y[:, None], axis=-1, mode='fill', fill_value=0)[:, 0]",
    "k": "jnp.take_along_axis(p, y, axis=-1)",
}
#: what is reduced: ``g`` the picked elements.
PICK_REDS = {
    "mean": "-jnp.mean(g)",
    "sum": "jnp.sum(g)",
    "logmean": "-jnp.mean(jnp.log(g + 1e-6))",
    "rowsum": "jnp.sum(g, axis=-1)",
    "rowsum_mean": "jnp.mean(jnp.sum(g, axis=-1))",
    "weighted": "jnp.sum(g * w) / jnp.sum(w)",
}


def pick_probe(name: str, prod: str = "jnp.exp(x)", n: int = 4096, v: int = 4096, dtype: str = "f32",
               pick: str = "take", red: str = "mean", k: int = 1, wrap: str = "") -> Program:
    w = "w" if red == "weighted" else ""
    args = "x, y" + (", w" if w else "")
    body = f"def g_({args}):\n    p = {prod}\n    g = {PICKS[pick]}\n    return {PICK_REDS[red]}\n\n\n"
    if wrap == "vmap":
        body += f"def f({args}):\n    return jax.vmap(g_)({args})\n"
    elif wrap == "grad":
        body += f"def f({args}):\n    return jax.grad(lambda x: g_({args}))(x)\n"
    else:
        body += f"def f({args}):\n    return g_({args})\n"
    lead = "4," if wrap == "vmap" else ""
    ys = f"i32[{lead}{n}]" if k == 1 else f"i32[{lead}{n},{k}]"
    wspec = f", f32[{lead}{n}]" if w else ""
    return probe(name, body, f"{dtype}[{lead}{n},{v}], {ys}{wspec}", "pick", f"pick={pick}", f"red={red}",
                 f"wrap={wrap or 'none'}")


def programs() -> list[Program]:
    B, P = bag_probe, pick_probe
    return [
        # embedding bags reduced over the bag axis: reuse = b * s / v gathered rows a table row
        B("bag-r0.5"), B("bag-r1", v=16384), B("bag-r2", v=8192), B("bag-r3", v=5461), B("bag-r4", v=4096),
        B("bag-r6", v=2731), B("bag-r8", v=2048), B("bag-r16", v=1024), B("bag-r64", v=256),
        B("bag-r2-d512", v=8192, d=512), B("bag-r8-d512", v=2048, d=512), B("bag-r4-d128", v=4096, d=128, b=128),
        B("bag-r8-d128", v=4096, d=128, b=128, s=256 * 2), B("bag-r0.5-bf16", dtype="bf16"),
        B("bag-r16-bf16", v=1024, dtype="bf16"), B("bag-mean", red="mean"), B("bag-max", red="max"),
        B("bag-wsum", red="wsum"), B("bag-sqrtn", red="sqrtn"), B("bag-mean-r16", v=1024, red="mean"),
        B("bag-max-r16", v=1024, red="max"), B("bag-wsum-r16", v=1024, red="wsum"),
        B("bag-odd", v=30001, d=200, b=50, s=300), B("bag-odd-r12", v=1251, d=200, b=50, s=300),
        B("bag-s25", b=4096, s=25, v=100000, d=128), B("bag-s25-r8", b=4096, s=25, v=12800, d=128),
        B("bag-tanh", post="jnp.tanh(e)"), B("bag-tanh-r16", v=1024, post="jnp.tanh(e)"),
        B("bag-src-scaled", src="emb * 2.0"), B("bag-vmap", wrap="vmap", b=16),
        B("bag-grad", wrap="grad"),
        # a few elements a row of an elementwise table, reduced
        P("pick-exp"), P("pick-tanh", prod="jnp.tanh(x)"), P("pick-sigmoid", prod="jax.nn.sigmoid(x)"),
        P("pick-arg", prod="x"), P("pick-index", pick="index"), P("pick-clip", pick="clip"),
        P("pick-fill", pick="fill"), P("pick-sum", red="sum"), P("pick-logmean", red="logmean"),
        P("pick-weighted", red="weighted"), P("pick-bf16", dtype="bf16"), P("pick-odd", n=3001, v=5003),
        P("pick-big", n=8192, v=8192), P("pick-wide", n=512, v=32768), P("pick-vmap", n=1024, wrap="vmap"),
        P("pick-k5-rowsum", pick="k", k=5, red="rowsum"), P("pick-k25-rowsum", pick="k", k=25, red="rowsum"),
        P("pick-k5-mean", pick="k", k=5, red="rowsum_mean"), P("pick-k25-mean", pick="k", k=25, red="rowsum_mean"),
        P("pick-k2-sum", pick="k", k=2, red="sum"), P("pick-grad", wrap="grad"),
        P("pick-index-bf16-odd", pick="index", dtype="bf16", n=2049, v=10000),
        # second batch, before the first measure: the bag's length at a reuse near one
        B("bag-s32", b=2048, s=32, v=65536, d=128), B("bag-s64", b=1024, s=64, v=65536, d=128),
        B("bag-s100", b=640, s=100, v=64000, d=128), B("bag-s128", b=512, s=128, v=65536, d=128),
        B("bag-s128-d256", b=256, s=128, v=32768), B("bag-s64-d512", b=256, s=64, v=16384, d=512),
        B("bag-s32-r4", b=2048, s=32, v=16384, d=128), B("bag-s512", b=32, s=512, v=16384),
        B("bag-r6-s64", b=768, s=64, v=8192, d=256),
        # third batch, AFTER the first measure on the families (three bags fused at reuse 2 to 4): the number
        # of bags, the row's width
        *[B(f"bag-s128-b{b}", b=b, s=128, v=32000, red="max") for b in (64, 128, 256, 512, 1024)],
        *[B(f"bag-s50-d64-b{b}", b=b, s=50, v=100000, d=64) for b in (256, 1024, 2048, 4096)],
        *[B(f"bag-s50-d{d}-b4096", b=4096, s=50, v=100000, d=d) for d in (32, 128, 256)],
        *[B(f"bag-s256-d512-b{b}", b=b, s=256, v=32000, d=512, red="mean") for b in (128, 256, 512)],
        # fourth batch, AFTER the first measure: the same bags by ``emb[ids]`` (no fill select) and by
        # ``jnp.take(..., mode='clip')``
        *[B(f"{how}-bag-r{r}", how=how, v=int(16384 / r)) for how in ("index", "clip") for r in (0.5, 2, 4, 8)],
        *[B(f"index-bag-s50-d64-b{b}", how="index", b=b, s=50, v=100000, d=64) for b in (256, 4096)],
        B("index-bag-max-s128-b512", how="index", b=512, s=128, v=32000, red="max"),
        B("index-bag-max-s128-b64", how="index", b=64, s=128, v=32000, red="max"),
        B("index-bag-mean-d512", how="index", b=128, s=256, v=32000, d=512, red="mean"),
        B("index-bag-tanh", how="index", post="jnp.tanh(e)"), B("index-bag-wsum", how="index", red="wsum"),
        B("index-bag-bf16", how="index", dtype="bf16"), B("index-bag-s32", how="index", b=2048, s=32, v=65536, d=128),
        B("index-bag-vmap", how="index", wrap="vmap", b=16), B("fill-bag-r2", how="fill0", v=8192),
        # fifth batch, AFTER the first measure: whole rows of an argument permuted (x[perm], a mixup or cutmix)
        # and reduced over the trailing axes, alone or mixed with the argument itself
        *[probe(f"perm-{name}", f"def f(x, perm):\n    r = x[perm]\n    return {ret}\n", spec, "perm")
          for name, ret, spec in [
              ("mean23", "jnp.mean(r, axis=(2, 3))", "f32[256,3,224,224], i32[256]"),
              ("mean23-bf16", "jnp.mean(r, axis=(2, 3))", "bf16[256,3,224,224], i32[256]"),
              ("sum123", "jnp.sum(r, axis=(1, 2, 3))", "f32[256,3,224,224], i32[256]"),
              ("mean12", "jnp.mean(r, axis=(1, 2))", "f32[512,256,256], i32[512]"),
              ("mean3", "jnp.mean(r, axis=3)", "f32[256,3,224,224], i32[256]"),
              ("mix-mean23", "jnp.mean(0.7 * x + 0.3 * r, axis=(2, 3))", "f32[256,3,224,224], i32[256]"),
              ("where-mean23", "jnp.mean(jnp.where(jnp.arange(224)[:, None] < 100, r, x), axis=(2, 3))",
               "f32[256,3,224,224], i32[256]"),
              ("where-mean12", "jnp.mean(jnp.where(jnp.arange(256)[None, :] < 100, r, x), axis=(1, 2))",
               "f32[512,256,256], i32[512]"),
              ("sq-mean23", "jnp.mean(r * r, axis=(2, 3))", "f32[128,3,224,224], i32[128]"),
              ("half", "jnp.mean(x[perm[:64]], axis=(2, 3))", "f32[256,3,224,224], i32[256]"),
          ]],
        # sixth batch, AFTER the first measure (suggested by the cross-entropies the families leave to the
        # compile): one element a row picked from logits, or from logits less their logsumexp (no softmax
        # diamond), beside the logsumexp's own reductions
        *[probe(f"lse-{name}", f"def f(x, y):\n{body}", spec, "lse") for name, body, spec in [
            ("arg", "    lse = jax.nn.logsumexp(x, axis=-1)\n"
             "    return jnp.mean(lse - jnp.take_along_axis(x, y[:, None], axis=-1)[:, 0])\n",
             "f32[2048,32000], i32[2048]"),
            ("logp", "    lp = x - jax.nn.logsumexp(x, axis=-1, keepdims=True)\n"
             "    return -jnp.mean(jnp.take_along_axis(lp, y[:, None], axis=-1)[:, 0])\n",
             "f32[1024,32000], i32[1024]"),
            ("logp-4096", "    lp = x - jax.nn.logsumexp(x, axis=-1, keepdims=True)\n"
             "    return -jnp.mean(jnp.take_along_axis(lp, y[:, None], axis=-1)[:, 0])\n",
             "f32[4096,4096], i32[4096]"),
            ("bf16", "    z = x.astype(jnp.float32)\n    lse = jax.nn.logsumexp(z, axis=-1)\n"
             "    return jnp.mean(lse - jnp.take_along_axis(z, y[:, None], axis=-1)[:, 0])\n",
             "bf16[4096,32000], i32[4096]"),
            ("bf16-index", "    z = x.astype(jnp.float32)\n    lse = jax.nn.logsumexp(z, axis=-1)\n"
             "    return jnp.mean(lse - z[jnp.arange(z.shape[0]), y])\n", "bf16[2048,50257], i32[2048]"),
            ("scaled", "    z = x * 0.5\n    lse = jax.nn.logsumexp(z, axis=-1)\n"
             "    return jnp.mean(lse - jnp.take_along_axis(z, y[:, None], axis=-1)[:, 0])\n",
             "f32[2048,32000], i32[2048]"),
            ("softcap", "    z = 30.0 * jnp.tanh(x / 30.0)\n    lse = jax.nn.logsumexp(z, axis=-1)\n"
             "    return jnp.mean(lse - jnp.take_along_axis(z, y[:, None], axis=-1)[:, 0])\n",
             "f32[2048,32000], i32[2048]"),
            ("masked", "    z = x.astype(jnp.float32)\n    m = y != 0\n"
             "    nll = jax.nn.logsumexp(z, -1) - jnp.take_along_axis(z, y[..., None], -1)[..., 0]\n"
             "    return jnp.sum(jnp.where(m, nll, 0.0)) / jnp.sum(m)\n", "bf16[2,1024,32000], i32[2,1024]"),
            ("3d", "    lse = jax.nn.logsumexp(x, axis=-1)\n"
             "    return jnp.mean(lse - jnp.take_along_axis(x, y[..., None], axis=-1)[..., 0])\n",
             "f32[4,512,32000], i32[4,512]"),
            ("taylor", "    t = 1.0 + x + 0.5 * x * x\n    lp = jnp.log(t) - jnp.log(jnp.sum(t, -1, keepdims=True))\n"
             "    return -jnp.mean(jnp.take_along_axis(lp, y[:, None], -1))\n", "f32[2048,32000], i32[2048]"),
            ("odd", "    lse = jax.nn.logsumexp(x, axis=-1)\n"
             "    return jnp.mean(lse - jnp.take_along_axis(x, y[:, None], axis=-1)[:, 0])\n",
             "f32[3001,10007], i32[3001]"),
            ("exp-sum", "    e = jnp.exp(x)\n    s = jnp.sum(e, axis=-1)\n"
             "    return jnp.mean(jnp.log(s) - jnp.log(jnp.take_along_axis(e, y[:, None], axis=-1)[:, 0]))\n",
             "f32[2048,32000], i32[2048]"),
            ("cos-sum", "    z = jnp.cos(x)\n    s = jnp.sum(z, axis=-1)\n"
             "    return jnp.mean(s - jnp.take_along_axis(z, y[:, None], axis=-1)[:, 0])\n",
             "f32[2048,32000], i32[2048]"),
        ]],
    ]


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, programs, TARGETS, TRUTH)


if __name__ == "__main__":
    raise SystemExit(main())
