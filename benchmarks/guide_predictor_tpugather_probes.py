"""Probe programs for the TPU v5e's gathers that build a table-sized value from an argument, read by
elementwise work and a reduction.

The rule (``front._limited``: a gather that reads or builds a table-sized value is stored on the TPU) was
right on the families but for wild17's CatBoost leaf index (``(xbin[:, feat] > border[None])``, ``u8[65536,
128]`` columns gathered by ``i32[512,6]``, shifted and summed over the depth of 6): the TPU wrote no buffer of
the table's size.  Each probe gathers from an argument and changes one thing: what is gathered (columns
``x[:, idx]``, rows ``x[idx]``, ``take_along_axis``, a 2-D index table building a 3-D table, ``vmap`` of a
``dynamic_slice``), the index source (an argument, an ``arange``, an index computed from an argument), the
element type (``u8``, ``i8``, ``bf16``, ``f32``, ``i32``), the size of the gathered slices (1, 6, 64, 128
elements a row, whole columns of 16,384 to 131,072 rows), the reduction (over the small gathered axis, over
the large one, ``max``, ``argmax``), the elementwise work between (a compare, a shift, a multiply), tables of
34 to 805 MB and odd sizes; and, for the slices that split, what else reads the gathered table (a second
pass, a contraction, a cumulative sum, the table returned, the gradient).  The truth (with the memory space
of the stored buffer) is the family benchmark's (:func:`guide_predictor_family.compile_truth`), written to
``benchmarks/data/guide_predictor_tpugather_probes_truth.jsonl``; TPU v5e only.

What the first 60 showed: the TPU writes a gather's output whole (a ``kCustom`` gather fusion; the
reduction's fusion reads it from memory), 33 of 33, unless the gathered slice takes a whole dimension of the
operand longer than 32,768 elements that the gather does not index (the rows of ``x[:, idx]``, the row of
``x[idx]``); then the gather is split along that dimension into ``ceil(n / 32,768)`` gathers of near-equal
pieces (40,000 rows: 20,096 and 19,904), each written, none of 0.9 of the table, and the reduction's fusion
reads the pieces as it would an argument: no table-sized buffer in 22 of 22 probes whose gathered table only
the reductions read, from 33,024 to 131,072 rows, in every element type, whatever the index source.  The split
is per dimension (slices of 256 x 256 or 64 x 1,024 elements were gathered whole), and a window along an
indexed dimension (``vmap`` of a ``dynamic_slice`` of 40,000) was gathered whole.  Of a split gather's table,
a contraction's output read in two passes, a ``cumsum``, the table returned (twice) and the gradient were
written (5 of 5), as the rules say for an argument's, but for the gradient (the rules see no live reduction
and answer ``all-none``: a miss left as it was).

A rule answering such split gathers fused (the region's decider, as for an argument read in pieces) was
written from those 60 and checked: it changed one family answer, wild17's CatBoost leaf index, to the truth's
"fused", and answered the 12 probes of a second batch (``after-*``, written after it) as their truth. It was
not kept.  The pieces are the whole gathered table, written (CatBoost's: two halves of 96 MiB on-chip, 411 MB
of temp): the family truth, which asks for one buffer of 0.9 of the table, calls that fused, and a reader
budgeting memory would be misled by the answer.  So the rules still say a gather that builds a table-sized
value is written, pieces and all, and CatBoost's TPU miss in wild17's first evaluation is the truth's, not the
rules'.

Run::

    python benchmarks/guide_predictor_tpugather_probes.py --compile     # what is not compiled yet
    python benchmarks/guide_predictor_tpugather_probes.py               # the truth beside the rules' answer
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program  # noqa: E402
from guide_predictor_probing import probe_main, probe_maker  # noqa: E402

TRUTH = ROOT / "benchmarks" / "data" / "guide_predictor_tpugather_probes_truth.jsonl"
TARGETS = ["tpu:v5e"]


probe = probe_maker("tpugather-probes")

#: CatBoost's leaf index: quantised columns gathered by a [trees, depth] index table, compared with the
#: borders, the bits shifted by their depth and summed over it.
LEAF = ("def f(x, feat, border):\n    bits = (x[:, feat] > border[None]).astype(jnp.int32)\n"
        "    return jnp.sum(bits << jnp.arange(feat.shape[1], dtype=jnp.int32), axis=-1)\n")

#: Columns ``x[:, idx]`` of an argument (``idx`` 1-D), multiplied, then reduced by ``{red}``.
COLS = "def f(x, idx):\n    g = x[:, idx] * 3.0\n    return {red}\n"

#: Rows ``x[idx]`` of an argument, then ``{ew}`` and a sum over the row.
ROWS = "def f(x, idx):\n    g = x[idx]\n    return jnp.sum({ew}, axis=-1)\n"


def leaf(name: str, dtype: str, rows: int, trees: int) -> Program:
    return probe(name, LEAF, f"{dtype}[{rows},128], i32[{trees},6], {dtype}[{trees},6]", "kind=columns",
                 f"dtype={dtype}", "idx=arg", f"slice={rows}")


def cols(name: str, red: str, rows: int, n: int, width: int = 256, dtype: str = "f32") -> Program:
    return probe(name, COLS.format(red=red), f"{dtype}[{rows},{width}], i32[{n}]", "kind=columns",
                 f"dtype={dtype}", "idx=arg", f"slice={rows}")


def rows(name: str, ew: str, src: str, idx: str, slice_: int, dtype: str) -> Program:
    return probe(name, ROWS.format(ew=ew), f"{src}, {idx}", "kind=rows", f"dtype={dtype}", "idx=arg",
                 f"slice={slice_}")


def programs() -> list[Program]:
    return [
        # CatBoost's leaf index: rows of the gathered columns 16,384 to 131,072, every element type
        leaf("leaf-u8-r16384", "u8", 16384, 512),
        leaf("leaf-u8-r32768", "u8", 32768, 512),
        leaf("leaf-u8-r33024", "u8", 33024, 512),
        leaf("leaf-u8-r40000", "u8", 40000, 512),
        leaf("leaf-u8-r65536", "u8", 65536, 512),
        leaf("leaf-u8-r65536-t128", "u8", 65536, 128),
        leaf("leaf-u8-r131072-t128", "u8", 131072, 128),
        leaf("leaf-i8-r65536", "i8", 65536, 128),
        leaf("leaf-i8-r32768", "i8", 32768, 256),
        leaf("leaf-bf16-r65536", "bf16", 65536, 128),
        leaf("leaf-bf16-r16384", "bf16", 16384, 512),
        leaf("leaf-f32-r65536", "f32", 65536, 128),
        leaf("leaf-f32-r32768", "f32", 32768, 256),
        leaf("leaf-i32-r98304", "i32", 98304, 128),
        leaf("leaf-i32-r16384", "i32", 16384, 512),
        # columns by a 1-D index, multiplied: a sum over the gathered axis, over the rows, a max, an argmax
        cols("cols-sum-r65536", "jnp.sum(g, axis=-1)", 65536, 1024),
        cols("cols-sum0-r65536", "jnp.sum(g, axis=0)", 65536, 1024),
        cols("cols-max-r65536", "jnp.max(g, axis=-1)", 65536, 1024),
        cols("cols-argmax-r65536", "jnp.argmax(g, axis=-1)", 65536, 1024),
        cols("cols-sum-r16384", "jnp.sum(g, axis=-1)", 16384, 2048),
        cols("cols-sum0-r16384", "jnp.sum(g, axis=0)", 16384, 2048),
        cols("cols-max-r16384", "jnp.max(g, axis=-1)", 16384, 2048),
        cols("cols-argmax-r16384-bf16", "jnp.argmax(g, axis=-1)", 16384, 2048, dtype="bf16"),
        cols("cols-sum-r50000-odd", "jnp.sum(g, axis=-1)", 50000, 1000, width=300),
        # rows by an index of 1, 6, 64, 128 and 32,768 to 65,536 elements a row
        probe("rows-1d-k256", "def f(x, idx):\n    return jnp.sum(x[idx] * 2.0, axis=-1)\n",
              "f32[1048576], i32[65536,256]", "kind=rows", "dtype=f32", "idx=arg", "slice=1"),
        rows("rows-d6-f32", "g * g", "f32[100000,6]", "i32[4194304]", 6, "f32"),
        rows("rows-d64-bf16", "g.astype(jnp.float32) * 2.0", "bf16[32000,64]", "i32[524288]", 64, "bf16"),
        rows("rows-d128-u8-cmp", "(g > 3).astype(jnp.int32)", "u8[50000,128]", "i32[262144]", 128, "u8"),
        rows("rows-d128-i8-mul", "g.astype(jnp.float32) * 0.5", "i8[50000,128]", "i32[262144]", 128, "i8"),
        rows("rows-d128-i32-shift", "g << 2", "i32[50000,128]", "i32[262144]", 128, "i32"),
        rows("rows-d32768-f32", "g * 2.0", "f32[1024,32768]", "i32[2048]", 32768, "f32"),
        rows("rows-d65536-f32", "g * 2.0", "f32[1024,65536]", "i32[1024]", 65536, "f32"),
        rows("rows-d40000-bf16", "g.astype(jnp.float32) * 2.0", "bf16[512,40000]", "i32[2048]", 40000, "bf16"),
        # take_along_axis: one element a row of each index
        probe("take-f32-k256", "def f(x, idx):\n    g = jnp.take_along_axis(x, idx, axis=1)\n"
              "    return jnp.sum(g * 2.0, axis=1)\n", "f32[65536,512], i32[65536,256]", "kind=take", "dtype=f32",
              "idx=arg", "slice=1"),
        probe("take-u8-k512-cmp", "def f(x, idx):\n    g = jnp.take_along_axis(x, idx, axis=1)\n"
              "    return jnp.sum((g > 7).astype(jnp.int32), axis=1)\n", "u8[65536,512], i32[65536,512]",
              "kind=take", "dtype=u8", "idx=arg", "slice=1"),
        probe("take-3d-bf16-max", "def f(x, idx):\n    g = jnp.take_along_axis(x, idx, axis=-1)\n"
              "    return jnp.max(g, axis=-1)\n", "bf16[64,1024,512], i32[64,1024,256]", "kind=take",
              "dtype=bf16", "idx=arg", "slice=1"),
        probe("take-axis0-f32", "def f(x, idx):\n    g = jnp.take_along_axis(x, idx, axis=0)\n"
              "    return jnp.sum(g * 2.0, axis=0)\n", "f32[65536,256], i32[65536,256]", "kind=take",
              "dtype=f32", "idx=arg", "slice=1"),
        # a 2-D index table building a 3-D table
        probe("bag-f32-sum1", "def f(x, idx):\n    return jnp.sum(x[idx] * 2.0, axis=1)\n",
              "f32[32000,128], i32[4096,64]", "kind=index2d", "dtype=f32", "idx=arg", "slice=128"),
        probe("bag-f32-sum2", "def f(x, idx):\n    return jnp.sum(x[idx] * 2.0, axis=2)\n",
              "f32[32000,128], i32[4096,64]", "kind=index2d", "dtype=f32", "idx=arg", "slice=128"),
        probe("bag-bf16-max1", "def f(x, idx):\n    return jnp.max(x[idx], axis=1)\n",
              "bf16[32000,256], i32[2048,128]", "kind=index2d", "dtype=bf16", "idx=arg", "slice=256"),
        probe("cols2d-f32-r65536", "def f(x, idx):\n    return jnp.sum(x[:, idx] * 2.0, axis=-1)\n",
              "f32[65536,64], i32[64,8]", "kind=index2d", "dtype=f32", "idx=arg", "slice=65536"),
        probe("cols2d-f32-r8192", "def f(x, idx):\n    return jnp.sum(x[:, idx] * 2.0, axis=-1)\n",
              "f32[8192,64], i32[512,8]", "kind=index2d", "dtype=f32", "idx=arg", "slice=8192"),
        # the index source: an arange, an index computed from an argument, an argmax
        probe("iota-cols-r65536", "def f(x):\n    g = x[:, jnp.arange(0, x.shape[1], 2)]\n"
              "    return jnp.sum(g * 2.0, axis=-1)\n", "f32[65536,1024]", "kind=columns", "dtype=f32", "idx=iota",
              "slice=65536"),
        probe("iota-cols-r16384", "def f(x):\n    g = x[:, jnp.arange(0, x.shape[1], 2)]\n"
              "    return jnp.sum(g * 2.0, axis=-1)\n", "f32[16384,4096]", "kind=columns", "dtype=f32", "idx=iota",
              "slice=16384"),
        probe("iota-rows-mod", "def f(x):\n    g = x[(jnp.arange(262144) * 7) % x.shape[0]]\n"
              "    return jnp.sum(g * 2.0, axis=-1)\n", "f32[50000,128]", "kind=rows", "dtype=f32", "idx=iota",
              "slice=128"),
        probe("computed-cols-r65536", "def f(x, k):\n    g = x[:, (k * 7 + 3) % x.shape[1]]\n"
              "    return jnp.max(g, axis=-1)\n", "f32[65536,128], i32[128,6]", "kind=columns", "dtype=f32",
              "idx=computed", "slice=65536"),
        probe("computed-cols-r16384", "def f(x, k):\n    g = x[:, (k * 7 + 3) % x.shape[1]]\n"
              "    return jnp.max(g, axis=-1)\n", "f32[16384,128], i32[512,6]", "kind=columns", "dtype=f32",
              "idx=computed", "slice=16384"),
        probe("argmax-rows-bf16", "def f(x, w):\n    g = x[jnp.argmax(w, axis=1)]\n"
              "    return jnp.sum(g.astype(jnp.float32) ** 2, axis=-1)\n", "bf16[32000,256], f32[131072,16]",
              "kind=rows", "dtype=bf16", "idx=computed", "slice=256"),
        # odd slices: a 3-D slice of 256 x 256 and 64 x 1,024, vmap of a dynamic_slice of 40,000 and 20,000
        probe("cols3d-256x256", "def f(x, idx):\n    return jnp.sum(x[:, :, idx] * 2.0, axis=(0, 1))\n",
              "f32[256,256,64], i32[1024]", "kind=columns", "dtype=f32", "idx=arg", "slice=256x256"),
        probe("cols3d-64x1024", "def f(x, idx):\n    return jnp.sum(x[:, :, idx] * 2.0, axis=(0, 1))\n",
              "f32[64,1024,64], i32[1024]", "kind=columns", "dtype=f32", "idx=arg", "slice=64x1024"),
        probe("window-40000", "def f(x, s):\n    g = jax.vmap(lambda i: lax.dynamic_slice(x, (i,), (40000,)))(s)\n"
              "    return jnp.sum(g * g, axis=-1)\n", "f32[65536], i32[1024]", "kind=window", "dtype=f32",
              "idx=arg", "slice=40000"),
        probe("window-20000", "def f(x, s):\n    g = jax.vmap(lambda i: lax.dynamic_slice(x, (i,), (20000,)))(s)\n"
              "    return jnp.sum(g * g, axis=-1)\n", "f32[65536], i32[2048]", "kind=window", "dtype=f32",
              "idx=arg", "slice=20000"),
        # a split gather's table read otherwise: two passes, a contraction, a cumsum, returned, a computed
        # operand, the gradient
        cols("split-lse", "jax.nn.logsumexp(g, axis=-1)", 65536, 512, width=128),
        cols("split-var", "jnp.var(g, axis=-1)", 65536, 512, width=128),
        probe("split-dot-lse", "def f(x, idx, w):\n    return jax.nn.logsumexp(x[:, idx] @ w, axis=-1)\n",
              "f32[65536,128], i32[512], f32[512,512]", "kind=columns", "dtype=f32", "idx=arg", "slice=65536"),
        probe("split-cumsum", "def f(x, idx):\n    return jnp.sum(jnp.cumsum(x[:, idx], axis=-1), axis=-1)\n",
              "f32[65536,128], i32[512]", "kind=columns", "dtype=f32", "idx=arg", "slice=65536"),
        probe("split-ret-cos", "def f(x, idx):\n    g = jnp.cos(x[:, idx])\n    return jnp.sum(g, axis=-1), g\n",
              "f32[65536,128], i32[512]", "kind=columns", "dtype=f32", "idx=arg", "slice=65536"),
        probe("split-ret-gathered", "def f(x, idx):\n    g = x[:, idx]\n    return jnp.sum(g * 2.0, axis=-1), g\n",
              "f32[65536,128], i32[512]", "kind=columns", "dtype=f32", "idx=arg", "slice=65536"),
        probe("split-cos-src", "def f(x, idx):\n    return jnp.sum(jnp.cos(x)[:, idx], axis=-1)\n",
              "f32[65536,128], i32[512]", "kind=columns", "dtype=f32", "idx=arg", "src=computed", "slice=65536"),
        probe("split-grad", "def f(x, idx):\n    return jax.grad(lambda x: jnp.sum(jnp.sin(x[:, idx])))(x)\n",
              "f32[65536,128], i32[512]", "kind=columns", "dtype=f32", "idx=arg", "wrap=grad", "slice=65536"),
        # second batch, written after the rule and before any tuning (its first figure is the docstring's):
        # other idioms, element types and readers
        probe("after-take-axis1-exp",
              "def f(x, idx):\n    return jnp.sum(jnp.exp(jnp.take(x, idx, axis=1)), axis=-1)\n",
              "f32[50000,256], i32[1024]", "kind=columns", "dtype=f32", "idx=arg", "slice=50000", "batch=after"),
        probe("after-rows-40000-norm", "def f(x, idx):\n    return jnp.linalg.norm(x[idx, :], axis=-1)\n",
              "f32[512,40000], i32[1536]", "kind=rows", "dtype=f32", "idx=arg", "slice=40000", "batch=after"),
        probe("after-f16-cols-sum0", "def f(x, idx):\n    g = x[:, idx].astype(jnp.float32)\n"
              "    return jnp.sum(g * g, axis=0)\n", "f16[65536,64], i32[512]", "kind=columns", "dtype=f16",
              "idx=arg", "slice=65536", "batch=after"),
        probe("after-bool-cols-count", "def f(m, idx):\n    return jnp.sum(m[:, idx], axis=0)\n",
              "bool[65536,256], i32[1024]", "kind=columns", "dtype=bool", "idx=arg", "slice=65536", "batch=after"),
        probe("after-u32-cols-bits", "def f(h, idx):\n    return jnp.sum((h[:, idx] >> 3) & 1, axis=-1)\n",
              "u32[40000,64], i32[2048]", "kind=columns", "dtype=u32", "idx=arg", "slice=40000", "batch=after"),
        probe("after-3d-middle-40000", "def f(x, idx):\n    g = x[:, :, idx].astype(jnp.float32)\n"
              "    return jnp.sum(g, axis=1)\n", "bf16[8,40000,32], i32[256]", "kind=columns", "dtype=bf16",
              "idx=arg", "slice=40000", "batch=after"),
        probe("after-cols-32768-bf16", "def f(x, idx):\n    return jnp.max(x[:, idx], axis=-1)\n",
              "bf16[32768,128], i32[2048]", "kind=columns", "dtype=bf16", "idx=arg", "slice=32768", "batch=after"),
        probe("after-vmap-cols-max0", "def f(x, idx):\n    return jax.vmap(lambda b: jnp.max(b[:, idx], axis=0))(x)\n",
              "f32[4,50000,64], i32[128]", "kind=columns", "dtype=f32", "idx=arg", "slice=50000", "wrap=vmap",
              "batch=after"),
        probe("after-two-split-gathers", "def f(x, i, j):\n    return jnp.sum(x[:, i] * x[:, j], axis=-1)\n",
              "f32[65536,128], i32[512], i32[512]", "kind=columns", "dtype=f32", "idx=arg", "slice=65536",
              "batch=after"),
        probe("after-split-and-embedding", "def f(x, i, e, k):\n    return jnp.sum(x[:, i] * e[k], axis=-1)\n",
              "f32[65536,128], i32[512], f32[1000,512], i32[65536]", "kind=columns", "dtype=f32", "idx=arg",
              "slice=65536", "batch=after"),
        probe("after-topk-index-cols", "def f(x, s):\n    g = x[:, lax.top_k(s, 256)[1]]\n"
              "    return jnp.sum(jnp.tanh(g), axis=-1)\n", "f32[65536,512], f32[512]", "kind=columns",
              "dtype=f32", "idx=computed", "slice=65536", "batch=after"),
        probe("after-split-softmax-entropy", "def f(x, idx):\n    p = jax.nn.softmax(x[:, idx], axis=-1)\n"
              "    return -jnp.sum(p * jnp.log(p), axis=-1)\n", "f32[65536,128], i32[512]", "kind=columns",
              "dtype=f32", "idx=arg", "slice=65536", "batch=after"),
    ]


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, programs, TARGETS, TRUTH)


if __name__ == "__main__":
    raise SystemExit(main())
