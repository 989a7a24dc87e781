"""Probe programs for random draws of the table's size before a reduction (``jax.random``).

wild17's LDA Gibbs sweep drew ``jax.random.categorical`` of a ``[1048576,128]`` table (an ``argmax`` of the
logits plus Gumbel noise): the CPU wrote a ``u32[1048576,128]`` table (the threefry bits' ``add``) where the
rules answered fused (``jaxhlo-predict-cpu-arg``).  Each probe draws a table-sized sample and reduces it, and
changes one thing: the draw (``uniform``, ``normal``, ``bernoulli`` as a dropout mask, ``categorical``,
``gumbel``, ``randint``), the table's shape (tiny to 256 MiB, odd, 3-D), the dtype (f32, bf16), the reduction
(sum, mean, max, argmax, log-sum-exp), the key's source (``PRNGKey`` of an int argument, ``wrap_key_data``
of a ``u32[2]`` argument, ``fold_in``, ``split``, a typed ``jax.random.key``, the ``rbg`` implementations),
``jax_threefry_partitionable`` off (``jax.threefry_partitionable(False)`` around the draw: the equation's
context records it), ``jax.grad`` of a dropout loss, ``vmap`` over keys or rows, and draws smaller than the
table.  The truth is the family benchmark's (:func:`guide_predictor_family.compile_truth`), written to
``benchmarks/data/guide_predictor_rng_probes_truth.jsonl``; all three targets.

Run::

    python benchmarks/guide_predictor_rng_probes.py --compile     # what is not compiled yet
    python benchmarks/guide_predictor_rng_probes.py               # the truth beside the rules' answer
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program  # noqa: E402
from guide_predictor_probing import probe_main, probe_maker  # noqa: E402

TRUTH = ROOT / "benchmarks" / "data" / "guide_predictor_rng_probes_truth.jsonl"
TARGETS = ["cpu", "gpu:h100", "tpu:v5e"]

probe = probe_maker("rng-probes")

#: The key's source: its line of code, and the spec of the argument it is made from.
KEYS = {
    "wrap": ("key = jax.random.wrap_key_data(kd)", "u32[2]"),
    "int": ("key = jax.random.PRNGKey(seed)", "i32[]"),
    "fold": ("key = jax.random.fold_in(jax.random.PRNGKey(0), seed)", "i32[]"),
    "split": ("key = jax.random.split(jax.random.wrap_key_data(kd))[1]", "u32[2]"),
    "typed": ("key = jax.random.key(seed)", "i32[]"),
    "rbg": ("key = jax.random.key(seed, impl='rbg')", "i32[]"),
    "unsafe_rbg": ("key = jax.random.key(seed, impl='unsafe_rbg')", "i32[]"),
}

F32_64 = "f32[4096,4096]"


def draw(name: str, lines: str, ret: str, spec: str = F32_64, key: str = "wrap", *classes: str,
         nonpart: bool = False) -> Program:
    """``f(x, key's argument)``: the key made as ``KEYS[key]`` says, then ``lines`` (each a statement of
    ``key`` and ``x``), returning ``ret``; ``nonpart``: the draw under ``jax.threefry_partitionable(False)``."""
    code, kspec = KEYS[key]
    arg = "kd" if kspec == "u32[2]" else "seed"
    stmts = [code, *lines.split("; ")]
    if nonpart:
        body = "    with jax.threefry_partitionable(False):\n" + "".join(f"        {s}\n" for s in stmts)
    else:
        body = "".join(f"    {s}\n" for s in stmts)
    src = f"def f(x, {arg}):\n{body}    return {ret}\n"
    return probe(name, src, f"{spec}, {kspec}", f"key={key}", *classes,
                 *(["partitionable=False"] if nonpart else []))


def programs() -> list[Program]:
    u = "u = jax.random.uniform(key, x.shape, x.dtype)"
    n = "z = jax.random.normal(key, x.shape, x.dtype)"
    keep = "keep = jax.random.bernoulli(key, 0.9, x.shape); y = jnp.where(keep, x / 0.9, 0.0)"
    g = "g = jax.random.gumbel(key, x.shape, x.dtype)"
    cat = "c = jax.random.categorical(key, x, axis=-1)"
    out = [
        # uniform: shapes, dtypes, reductions, key sources
        draw("uniform-sum-64", u, "jnp.sum(u * x, axis=1)", F32_64, "wrap", "draw=uniform"),
        draw("uniform-sum-64-int", u, "jnp.sum(u * x, axis=1)", F32_64, "int", "draw=uniform"),
        draw("uniform-sum-odd-fold", u, "jnp.sum(u * x, axis=1)", "f32[3001,4099]", "fold", "draw=uniform"),
        draw("uniform-sum-tiny", u, "jnp.sum(u * x, axis=1)", "f32[37,53]", "wrap", "draw=uniform"),
        draw("uniform-sum-256", u, "jnp.sum(u * x, axis=1)", "f32[8192,8192]", "wrap", "draw=uniform"),
        draw("uniform-mean-3d", u, "jnp.mean(u * x, axis=(1, 2))", "f32[64,512,512]", "wrap", "draw=uniform"),
        draw("uniform-sum-bf16", u, "jnp.sum(u * x, axis=1)", "bf16[4096,4096]", "wrap", "draw=uniform",
             "dtype=bf16"),
        draw("uniform-max-mid", u, "jnp.max(x + u, axis=1)", "f32[1024,1000]", "wrap", "draw=uniform"),
        draw("uniform-alone-sum-split", "u = jax.random.uniform(key, (4096, 4096))", "jnp.sum(u) + x",
             "f32[]", "split", "draw=uniform"),
        # normal: noise added then reduced
        draw("normal-add-sum-64", n, "jnp.sum(x + 0.1 * z, axis=1)", F32_64, "wrap", "draw=normal"),
        draw("normal-add-lse-64", n, "jax.nn.logsumexp(x + 0.1 * z, axis=1)", F32_64, "wrap", "draw=normal"),
        draw("normal-add-mean-bf16", n, "jnp.mean(x + z, axis=1)", "bf16[4096,4096]", "int", "draw=normal",
             "dtype=bf16"),
        draw("normal-add-sum-3d-odd", n, "jnp.sum(x + z, axis=-1)", "f32[33,257,511]", "fold", "draw=normal"),
        draw("normal-add-argmax", n, "jnp.argmax(x + z, axis=1)", F32_64, "wrap", "draw=normal"),
        draw("normal-add-sum-256", n, "jnp.sum(x * z, axis=0)", "f32[8192,8192]", "typed", "draw=normal"),
        # dropout masks
        draw("dropout-mean-64-fold", keep, "jnp.mean(y, axis=0)", F32_64, "fold", "draw=bernoulli"),
        draw("dropout-sum-odd", keep, "jnp.sum(y * y, axis=1)", "f32[3001,4099]", "wrap", "draw=bernoulli"),
        draw("dropout-mean-bf16", keep, "jnp.mean(y, axis=1)", "bf16[4096,4096]", "wrap", "draw=bernoulli",
             "dtype=bf16"),
        draw("dropout-sum-tiny", keep, "jnp.sum(y)", "f32[37,53]", "int", "draw=bernoulli"),
        draw("dropout-mean-256", keep, "jnp.mean(y)", "f32[8192,8192]", "int", "draw=bernoulli"),
        draw("bernoulli-count", "b = jax.random.bernoulli(key, 0.3, x.shape)", "jnp.sum(b.astype(jnp.float32))",
             F32_64, "wrap", "draw=bernoulli"),
        probe("dropout-after-dot",
              "def f(x, w, kd):\n    key = jax.random.wrap_key_data(kd)\n    h = x @ w\n"
              "    keep = jax.random.bernoulli(key, 0.9, h.shape)\n"
              "    return jnp.sum(jnp.where(keep, h / 0.9, 0.0) ** 2, axis=1)\n",
              "f32[4096,256], f32[256,4096], u32[2]", "draw=bernoulli", "src=dot"),
        probe("grad-dropout-dot-loss",
              "def f(x, w, kd):\n    key = jax.random.wrap_key_data(kd)\n"
              "    def loss(w):\n        h = jnp.tanh(x @ w)\n"
              "        keep = jax.random.bernoulli(key, 0.9, h.shape)\n"
              "        return jnp.mean(jnp.where(keep, h / 0.9, 0.0) ** 2)\n"
              "    return jax.grad(loss)(w)\n",
              "f32[4096,512], f32[512,4096], u32[2]", "draw=bernoulli", "wrap=grad"),
        probe("grad-dropout-elementwise",
              "def f(x, kd):\n    key = jax.random.wrap_key_data(kd)\n"
              "    def loss(x):\n        keep = jax.random.bernoulli(key, 0.9, x.shape)\n"
              "        return jnp.sum(jnp.where(keep, jnp.sin(x) / 0.9, 0.0) ** 2)\n"
              "    return jax.grad(loss)(x)\n",
              "f32[4096,4096], u32[2]", "draw=bernoulli", "wrap=grad"),
        # categorical: an argmax of the logits and Gumbel noise
        draw("categorical-4096x1000", cat, "c", "f32[4096,1000]", "wrap", "draw=categorical"),
        draw("categorical-262144x128", cat, "c", "f32[262144,128]", "wrap", "draw=categorical"),
        draw("categorical-computed", "c = jax.random.categorical(key, jnp.log(x + 1.0), axis=-1)", "c",
             "f32[262144,128]", "wrap", "draw=categorical", "src=computed"),
        draw("categorical-tiny", cat, "c", "f32[37,53]", "wrap", "draw=categorical"),
        draw("categorical-bf16", cat, "c", "bf16[4096,4096]", "int", "draw=categorical", "dtype=bf16"),
        draw("categorical-3d", cat, "c", "f32[64,512,128]", "fold", "draw=categorical"),
        draw("categorical-axis0", "c = jax.random.categorical(key, x, axis=0)", "c", "f32[4096,1000]", "wrap",
             "draw=categorical"),
        # gumbel
        draw("gumbel-max", g, "jnp.max(x + g, axis=1)", F32_64, "wrap", "draw=gumbel"),
        draw("gumbel-argmax-odd", g, "jnp.argmax(x + g, axis=1)", "f32[3001,4099]", "int", "draw=gumbel"),
        draw("gumbel-softmax-lse", g, "jax.nn.logsumexp((x + g) / 0.5, axis=1)", F32_64, "wrap", "draw=gumbel"),
        # randint
        draw("randint-sum", "r = jax.random.randint(key, x.shape, 0, 100)", "jnp.sum(r, axis=1)", F32_64,
             "wrap", "draw=randint"),
        draw("randint-mul-sum", "r = jax.random.randint(key, x.shape, 0, 100)",
             "jnp.sum(x * r.astype(x.dtype), axis=1)", F32_64, "int", "draw=randint"),
        # key implementations
        draw("rbg-uniform-sum", u, "jnp.sum(u * x, axis=1)", F32_64, "rbg", "draw=uniform", "impl=rbg"),
        draw("unsafe-rbg-dropout", keep, "jnp.mean(y, axis=0)", F32_64, "unsafe_rbg", "draw=bernoulli",
             "impl=unsafe_rbg"),
        draw("rbg-categorical", cat, "c", "f32[262144,128]", "rbg", "draw=categorical", "impl=rbg"),
        # jax_threefry_partitionable off
        draw("nonpart-uniform-sum", u, "jnp.sum(u * x, axis=1)", F32_64, "wrap", "draw=uniform", nonpart=True),
        draw("nonpart-uniform-sum-odd", u, "jnp.sum(u * x, axis=1)", "f32[3001,4099]", "wrap", "draw=uniform",
             nonpart=True),
        draw("nonpart-dropout-mean", keep, "jnp.mean(y, axis=0)", F32_64, "fold", "draw=bernoulli", nonpart=True),
        draw("nonpart-normal-bf16", n, "jnp.mean(x + z, axis=1)", "bf16[4096,4096]", "wrap", "draw=normal",
             "dtype=bf16", nonpart=True),
        draw("nonpart-categorical", cat, "c", "f32[262144,128]", "wrap", "draw=categorical", nonpart=True),
        # two passes over a drawn table (a statistic, then the pass that needs it)
        draw("normal-add-var", n + "; y = x + z; m = jnp.mean(y, axis=1, keepdims=True)",
             "jnp.mean((y - m) ** 2, axis=1)", F32_64, "wrap", "draw=normal", "passes=2"),
        draw("gumbel-lse-bf16", g, "jax.nn.logsumexp(x + g, axis=1)", "bf16[4096,4096]", "int", "draw=gumbel",
             "dtype=bf16", "passes=2"),
        draw("dropout-layernorm", keep + "; m = jnp.mean(y, axis=1, keepdims=True)",
             "jnp.sum((y - m) * lax.rsqrt(jnp.mean((y - m) ** 2, axis=1, keepdims=True) + 1e-5), axis=1)",
             "f32[3001,4099]", "fold", "draw=bernoulli", "passes=2"),
        draw("normal-add-var-bf16", n + "; y = x + z; m = jnp.mean(y, axis=1, keepdims=True)",
             "jnp.mean((y - m) ** 2, axis=1)", "bf16[4096,4096]", "wrap", "draw=normal", "dtype=bf16", "passes=2"),
        draw("uniform-lse-odd", u, "jax.nn.logsumexp(x + u, axis=1)", "f32[3001,4099]", "split", "draw=uniform",
             "passes=2"),
        # more rbg keys, and lax.rng_bit_generator called directly (a u32[4] key)
        draw("rbg-normal-sum", n, "jnp.sum(x + z, axis=1)", F32_64, "rbg", "draw=normal", "impl=rbg"),
        draw("rbg-dropout-row-bf16", keep, "jnp.sum(y, axis=1)", "bf16[4096,4096]", "rbg", "draw=bernoulli",
             "impl=rbg", "dtype=bf16"),
        probe("rng-bit-generator-direct",
              "def f(x, kd):\n    _, bits = lax.rng_bit_generator(kd, x.shape, dtype=jnp.uint32)\n"
              "    u = lax.bitcast_convert_type((bits >> 9) | jnp.uint32(0x3F800000), jnp.float32) - 1.0\n"
              "    return jnp.sum(u * x, axis=1)\n",
              "f32[4096,4096], u32[4]", "draw=rng_bit_generator"),
        # more of jax_threefry_partitionable off
        draw("nonpart-normal-argmax", n, "jnp.argmax(x + z, axis=1)", F32_64, "int", "draw=normal", nonpart=True),
        draw("nonpart-randint-tiny", "r = jax.random.randint(key, x.shape, 0, 100)",
             "jnp.sum(x * r.astype(x.dtype), axis=1)", "f32[37,53]", "wrap", "draw=randint", nonpart=True),
        # vmap: over keys (a batched draw), over rows with one key (a row-sized draw broadcast)
        probe("vmap-keys-normal-sum",
              "def f(x, kd):\n    keys = jax.random.split(jax.random.wrap_key_data(kd), x.shape[0])\n"
              "    return jax.vmap(lambda k, r: jnp.sum(jax.random.normal(k, r.shape) * r))(keys, x)\n",
              "f32[4096,4096], u32[2]", "draw=normal", "wrap=vmap"),
        probe("vmap-keys-categorical",
              "def f(x, kd):\n    keys = jax.random.split(jax.random.wrap_key_data(kd), x.shape[0])\n"
              "    return jax.vmap(lambda k, r: jax.random.categorical(k, r))(keys, x)\n",
              "f32[4096,1000], u32[2]", "draw=categorical", "wrap=vmap"),
        probe("vmap-rows-one-key",
              "def f(x, kd):\n    key = jax.random.wrap_key_data(kd)\n"
              "    return jax.vmap(lambda r: jnp.sum(r * jax.random.uniform(key, r.shape)))(x)\n",
              "f32[4096,4096], u32[2]", "draw=uniform", "wrap=vmap", "draw<table"),
        # draws smaller than the table (the negative cases): a row of noise broadcast, one noise per row
        draw("row-noise-broadcast", "z = jax.random.normal(key, x.shape[1:])", "jnp.sum(jnp.exp(x + z), axis=1)",
             F32_64, "wrap", "draw=normal", "draw<table"),
        draw("col-noise-broadcast", "z = jax.random.normal(key, x.shape[:1] + (1,))",
             "jnp.sum(jnp.exp(x + z), axis=1)", F32_64, "wrap", "draw=normal", "draw<table"),
        # a draw per step of a loop
        probe("fori-draw-sum",
              "def f(x, kd):\n    key = jax.random.wrap_key_data(kd)\n"
              "    def body(i, acc):\n        u = jax.random.uniform(jax.random.fold_in(key, i), x.shape)\n"
              "        return acc + jnp.sum(u * x, axis=1)\n"
              "    return lax.fori_loop(0, 4, body, jnp.zeros(x.shape[0]))\n",
              "f32[4096,4096], u32[2]", "draw=uniform", "loop=fori"),
    ]
    return out


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, programs, TARGETS, TRUTH)


if __name__ == "__main__":
    raise SystemExit(main())
