"""Probe programs for the convolution rules: what XLA does with a convolution's output (the table a
reduction reads) and with a table a convolution reads, on the CPU and the TPU v5e.

Each probe is a module whose ``f`` runs one ``lax.conv_general_dilated`` (1-D, 2-D or 3-D; channels last
or first; depthwise or grouped; strided, dilated, transposed; f32, bf16 or f16; batch 1 to 64; 3 to 256
features) followed by a reduction (a sum, BatchNorm's mean and variance, a max, a sum of squares, a
softmax over channels, an activation then a sum), or a gradient or ``vmap`` of one.  The truth is the
family benchmark's (:func:`guide_predictor_family.compile_truth`), written to
``benchmarks/data/guide_predictor_conv_probes_truth.jsonl``.

Run::

    python benchmarks/guide_predictor_conv_probes.py --compile     # what is not compiled yet
    python benchmarks/guide_predictor_conv_probes.py               # the truth beside the rules' answer
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program, _module  # noqa: E402
from guide_predictor_probing import probe_main  # noqa: E402

TRUTH = ROOT / "benchmarks" / "data" / "guide_predictor_conv_probes_truth.jsonl"
TARGETS = ["cpu", "tpu:v5e"]

#: Layout name: (dimension numbers, channel axis of the output, spatial rank).
LAYOUTS = {
    "nhwc": (("NHWC", "HWIO", "NHWC"), -1, 2),
    "nchw": (("NCHW", "OIHW", "NCHW"), 1, 2),
    "nwc": (("NWC", "WIO", "NWC"), -1, 1),
    "ncw": (("NCW", "OIW", "NCW"), 1, 1),
    "ndhwc": (("NDHWC", "DHWIO", "NDHWC"), -1, 3),
    "ncdhw": (("NCDHW", "OIDHW", "NCDHW"), 1, 3),
}
DT = {"f32": "f32", "bf16": "bf16", "f16": "f16"}

#: What reads the convolution's output ``y`` (``c``: channel axis, ``rest``: the other axes).
CONSUMERS = {
    "sum": "return jnp.sum(y, axis=rest)",
    "sumall": "return jnp.sum(y)",
    "bn": "m = jnp.mean(y, axis=rest, keepdims=True)\n    return m, jnp.mean((y - m) ** 2, axis=rest)",
    "bn1": "m = jnp.mean(y, axis=rest)\n    return m, jnp.mean(y * y, axis=rest) - m * m",
    "max": "return jnp.max(y, axis=rest)",
    "sumsq": "return jnp.sum(y * y, axis=rest)",
    "softmax": "return jnp.sum(jax.nn.softmax(y, axis=c), axis=rest)",
    "relu": "return jnp.sum(jax.nn.relu(y), axis=rest)",
    "gelu": "return jnp.sum(jax.nn.gelu(y), axis=rest)",
    "bnapply": "m = jnp.mean(y, axis=rest, keepdims=True)\n    v = jnp.var(y, axis=rest, keepdims=True)\n"
               "    return jnp.sum(jax.nn.relu((y - m) * lax.rsqrt(v + 1e-5)))",
    "out": "return y, jnp.sum(y, axis=rest)",
}


def _shapes(layout: str, n: int, sp: int, cin: int, cout: int, k: int, groups: int) -> tuple[list[int], list[int]]:
    rank = LAYOUTS[layout][2]
    spatial = [sp] * rank
    kern = [k] * rank
    if layout in ("nchw", "ncw", "ncdhw"):
        return [n, cin, *spatial], [cout, cin // groups, *kern]
    return [n, *spatial, cin], [*kern, cin // groups, cout]


def _spec(dtype: str, shape: list[int]) -> str:
    return f"{DT[dtype]}[{','.join(str(d) for d in shape)}]"


def conv_probe(name: str, layout: str = "nhwc", n: int = 8, sp: int = 64, cin: int = 128, cout: int = 128,
               k: int = 3, dtype: str = "f32", stride: int = 1, dil: int = 1, lhs_dil: int = 1,
               pad: str = "SAME", groups: int = 1, consumer: str = "sum", pre: str = "",
               wrap: str = "") -> Program:
    dims, c, rank = LAYOUTS[layout]
    xs, ws = _shapes(layout, n, sp, cin, cout, k, groups)
    ndim = rank + 2
    c_axis = c % ndim
    rest = tuple(i for i in range(ndim) if i != c_axis)
    padding = f'"{pad}"' if lhs_dil == 1 else f"[({k - 1}, {k - 1})] * {rank}"
    conv = (f"lax.conv_general_dilated({{x}}, w, ({', '.join([str(stride)] * rank)},), {padding}, "
            f"lhs_dilation=({', '.join([str(lhs_dil)] * rank)},), "
            f"rhs_dilation=({', '.join([str(dil)] * rank)},), dimension_numbers={dims!r}, "
            f"feature_group_count={groups})")
    src = pre or "x"
    body = f"def g(x, w):\n    c, rest = {c_axis}, {rest}\n    y = {conv.format(x=src)}\n    " \
           f"{CONSUMERS[consumer]}\n\n\n"
    body += "def loss(t):\n    return sum(jnp.sum(v) for v in jax.tree.leaves(t))\n\n\n"
    if wrap == "":
        body += "def f(x, w):\n    return g(x, w)\n"
    elif wrap == "grad_w":
        body += "def f(x, w):\n    return jax.grad(lambda w: loss(g(x, w)))(w)\n"
    elif wrap == "grad_x":
        body += "def f(x, w):\n    return jax.grad(lambda x: loss(g(x, w)))(x)\n"
    elif wrap == "grad_both":
        body += "def f(x, w):\n    return jax.grad(lambda x, w: loss(g(x, w)), argnums=(0, 1))(x, w)\n"
    elif wrap == "vmap":
        body += "def f(x, w):\n    return jax.vmap(lambda x: g(x[None], w))(x)\n"
    return Program(name, "conv-probes", _module(body), f"{_spec(dtype, xs)}, {_spec(dtype, ws)}",
                   [f"layout={layout}", f"consumer={consumer}", f"wrap={wrap or 'none'}"])


def two_conv_probe(name: str, act: str = "jax.nn.relu", consumer: str = "sum", c: int = 128,
                   dtype: str = "f32", n: int = 8, sp: int = 64, wrap: str = "") -> Program:
    """conv -> activation -> conv -> reduction: the second convolution reads a computed table."""
    body = ("def g(x, w1, w2):\n    dn = ('NHWC', 'HWIO', 'NHWC')\n    c, rest = 3, (0, 1, 2)\n"
            "    h = lax.conv_general_dilated(x, w1, (1, 1), 'SAME', dimension_numbers=dn)\n"
            f"    h = {act}(h)\n"
            "    y = lax.conv_general_dilated(h, w2, (1, 1), 'SAME', dimension_numbers=dn)\n"
            f"    {CONSUMERS[consumer]}\n\n\n")
    if wrap == "grad_w":
        body += "def f(x, w1, w2):\n    return jax.grad(lambda w1, w2: jnp.sum(g(x, w1, w2)), argnums=(0, 1))(w1, w2)\n"
    else:
        body += "def f(x, w1, w2):\n    return g(x, w1, w2)\n"
    d = DT[dtype]
    return Program(name, "conv-probes", _module(body),
                   f"{d}[{n},{sp},{sp},{c}], {d}[3,3,{c},{c}], {d}[3,3,{c},{c}]",
                   ["two-conv", f"wrap={wrap or 'none'}"])


def programs() -> list[Program]:
    P = conv_probe
    progs = [
        # channels last 2-D f32 (YNN's convolution on the CPU): each consumer
        *[P(f"nhwc-{cons}", consumer=cons) for cons in CONSUMERS],
        # features around YNN's gate (more than 16), and 3 input channels (an image's first layer)
        P("nhwc-c16", cin=16, cout=16), P("nhwc-c17", cin=17, cout=17), P("nhwc-c3-64", cin=3, cout=64),
        P("nhwc-c16-bn", cin=16, cout=16, consumer="bn"), P("nhwc-c256-relu", cin=256, cout=256, n=4, sp=32,
                                                            consumer="relu"),
        # batch 1 to 64, large tables (HBM on the TPU)
        P("nhwc-b1", n=1), P("nhwc-b64-bn", n=64, consumer="bn"), P("nhwc-b32-c256", n=32, cin=256, cout=256),
        P("nhwc-b64-sumsq", n=64, consumer="sumsq"),
        # strided, dilated, VALID, transposed (lhs dilation), 1x1
        P("nhwc-s2", stride=2), P("nhwc-d2", dil=2), P("nhwc-valid", pad="VALID"), P("nhwc-lhsdil", lhs_dil=2, sp=32),
        P("nhwc-1x1", k=1), P("nhwc-s2-bn", stride=2, consumer="bn"),
        # depthwise, grouped
        P("nhwc-dw", groups=128, cout=128), P("nhwc-dw-bn", groups=128, consumer="bn"),
        P("nhwc-g4", groups=4), P("nhwc-dw-gelu", groups=128, consumer="gelu"),
        # half precision
        P("nhwc-bf16", dtype="bf16"), P("nhwc-f16", dtype="f16"), P("nhwc-bf16-bn", dtype="bf16", consumer="bn"),
        P("nhwc-bf16-relu", dtype="bf16", consumer="relu"), P("nhwc-f16-max", dtype="f16", consumer="max"),
        # channels first
        P("nchw-sum", layout="nchw"), P("nchw-bn", layout="nchw", consumer="bn"),
        P("nchw-relu", layout="nchw", consumer="relu"),
        P("nchw-max", layout="nchw", consumer="max"), P("nchw-sumall", layout="nchw", consumer="sumall"),
        P("nchw-bf16", layout="nchw", dtype="bf16"), P("nchw-dw", layout="nchw", groups=128),
        # 1-D and 3-D
        P("nwc-sum", layout="nwc", n=16, sp=4096), P("nwc-bn", layout="nwc", n=16, sp=4096, consumer="bn"),
        P("ncw-sum", layout="ncw", n=16, sp=4096), P("ncw-relu", layout="ncw", n=16, sp=4096, consumer="relu"),
        P("ndhwc-sum", layout="ndhwc", n=2, sp=32, cin=64, cout=64),
        P("ndhwc-bn", layout="ndhwc", n=2, sp=32, cin=64, cout=64, consumer="bn"),
        # a convolution reads a computed table
        P("pre-relu-sum", pre="jax.nn.relu(x * 2.0)"), P("pre-relu-bn", pre="jax.nn.relu(x * 2.0)", consumer="bn"),
        P("pre-exp-sum-nchw", layout="nchw", pre="jnp.exp(x)"),
        two_conv_probe("two-relu-sum"), two_conv_probe("two-relu-bn", consumer="bn"),
        two_conv_probe("two-gelu-sum", act="jax.nn.gelu"), two_conv_probe("two-relu-sum-bf16", dtype="bf16"),
        # gradients: the backward convolutions read the table
        P("grad-w-relu", consumer="relu", wrap="grad_w"), P("grad-x-relu", consumer="relu", wrap="grad_x"),
        P("grad-both-sumsq", consumer="sumsq", wrap="grad_both"), P("grad-w-bn", consumer="bn1", wrap="grad_w"),
        P("grad-w-nchw-relu", layout="nchw", consumer="relu", wrap="grad_w"),
        P("grad-w-bf16-relu", dtype="bf16", consumer="relu", wrap="grad_w"),
        P("grad-w-s2-relu", stride=2, consumer="relu", wrap="grad_w"),
        P("grad-x-s2-sum", stride=2, consumer="sumsq", wrap="grad_x"),
        two_conv_probe("two-grad-w", wrap="grad_w"),
        # vmap
        P("vmap-sum", wrap="vmap"), P("vmap-bn", consumer="bn", wrap="vmap"),
        P("vmap-nchw-relu", layout="nchw", consumer="relu", wrap="vmap"),
        # the TPU's ground for a single pass: batch, features, groups (a relaid-out copy of the input)
        P("nhwc-c64", cin=64, cout=64), P("nhwc-c32-relu", cin=32, cout=32, consumer="relu"),
        P("nhwc-c192", cin=192, cout=192, n=8, sp=32), P("nhwc-b4", n=4), P("nhwc-b16-relu", n=16, consumer="relu"),
        P("nhwc-b2-c256", n=2, cin=256, cout=256), P("nhwc-g2", groups=2), P("nhwc-dw64", cin=64, cout=64, groups=64),
        P("nchw-c64", layout="nchw", cin=64, cout=64), P("nchw-b2", layout="nchw", n=2),
        P("nwc-b4", layout="nwc", n=4, sp=4096), P("ncw-b64", layout="ncw", n=64, sp=1024),
        P("nhwc-c128to256", cin=128, cout=256), P("nhwc-c256to128-max", cin=256, cout=128, consumer="max"),
        P("nhwc-bf16-c64", cin=64, cout=64, dtype="bf16"), P("nhwc-b8-sp16-sumsq", sp=16, n=64, consumer="sumsq"),
        P("ndhwc-b8", layout="ndhwc", n=8, sp=16, cin=128, cout=128),
        # after the first measure: channels-first convolutions that are 1-D, 3-D or under 128 features
        P("ncw-c1", layout="ncw", n=256, sp=65536, cin=1, cout=1, k=9),
        P("ncw-c8", layout="ncw", n=64, sp=16384, cin=8, cout=8),
        P("ncw-c256-max", layout="ncw", n=8, sp=4096, cin=256, cout=256, consumer="max"),
        P("ncw-c512-relu", layout="ncw", n=32, sp=1024, cin=512, cout=512, consumer="relu"),
        P("ncw-dw-sum", layout="ncw", n=16, sp=4096, cin=128, cout=128, groups=128),
        P("ncw-s2-sumsq", layout="ncw", n=16, sp=8192, stride=2, consumer="sumsq"),
        P("ncw-bf16-sum", layout="ncw", n=16, sp=4096, dtype="bf16"),
        P("ncdhw-sum", layout="ncdhw", n=8, sp=16, cin=128, cout=128),
        P("ncdhw-c64-relu", layout="ncdhw", n=8, sp=16, cin=64, cout=64, consumer="relu"),
        P("nchw-c96", layout="nchw", cin=96, cout=96), P("nchw-c32-relu", layout="nchw", cin=32, cout=32,
                                                         consumer="relu"),
        P("nchw-c256-max", layout="nchw", n=16, sp=32, cin=256, cout=256, consumer="max"),
    ]
    return progs


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, programs, TARGETS, TRUTH)


if __name__ == "__main__":
    raise SystemExit(main())
