"""Probe programs for a table the program computes and a loop, a sort or an FFT then reads, outside any
reduction's region.

wild18's Soft-NMS computed a 16 x 2,048 x 2,048 IoU table under ``vmap`` and read it in a ``fori_loop`` of
300 picks, Smith-Waterman scored a table of substitutions and scanned its rows, and PointNet++'s ball query
sorted a computed table of indices: each wrote the table (the loop's or the sort's operand) where the rules
answered fused, the largest reduction being the loop's small per-step one or a later max.  Each probe
computes a table-sized value from its arguments and hands it to a ``fori_loop`` (as a closed-over constant),
a ``scan`` (as its ``xs`` or a constant), a ``while_loop``, a ``sort``, a ``cumsum`` or an FFT, then reduces
something smaller; and changes one thing: what computes the table (elementwise work, a contraction), its
shape (tiny, odd, 256 MiB), its dtype (f32, bf16), ``vmap`` over the loop; and, as controls, a table built
from constants alone (``jnp.eye``, which ``while_loop_fusible_sinking.cc`` could sink into the body: XLA
wrote it all the same), an argument read as it is or reshaped (a bitcast), and a table the loop computes
itself.  The
truth is the family benchmark's (:func:`guide_predictor_family.compile_truth`), written to
``benchmarks/data/guide_predictor_loopread_probes_truth.jsonl``; all three targets.

Run::

    python benchmarks/guide_predictor_loopread_probes.py --compile     # what is not compiled yet
    python benchmarks/guide_predictor_loopread_probes.py               # the truth beside the rules' answer
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program  # noqa: E402
from guide_predictor_probing import probe_main, probe_maker  # noqa: E402

TRUTH = ROOT / "benchmarks" / "data" / "guide_predictor_loopread_probes_truth.jsonl"
TARGETS = ["cpu", "gpu:h100", "tpu:v5e"]

probe = probe_maker("loopread-probes")

#: A loop of 20 picks over the rows of ``t`` (``[n, n]``): each step decays the scores by the picked row.
PICKS = """
    def body(i, s):
        j = jnp.argmax(s)
        return s * jnp.exp(-t[j] ** 2)
    return jnp.sum(lax.fori_loop(0, 20, body, s))
"""


def picks(name: str, table: str, specs: str, *classes: str) -> Program:
    """``f(a, s)``: ``t`` computed by ``table`` (a statement of ``a``), read by :data:`PICKS`."""
    return probe(name, f"def f(a, s):\n    {table}\n{PICKS}", specs, "reader=fori_loop", *classes)


def programs() -> list[Program]:
    out = [
        picks("fori-exp-outer", "t = jnp.exp(a[:, None] - a[None, :])", "f32[2048], f32[2048]", "made=elementwise"),
        picks("fori-exp-outer-odd", "t = jnp.exp(a[:, None] - a[None, :])", "f32[3001], f32[3001]",
              "made=elementwise"),
        picks("fori-exp-outer-tiny", "t = jnp.exp(a[:, None] - a[None, :])", "f32[300], f32[300]", "made=elementwise"),
        picks("fori-exp-outer-bf16", "t = jnp.exp(a[:, None] - a[None, :])", "bf16[2048], bf16[2048]",
              "made=elementwise", "dtype=bf16"),
        picks("fori-gram", "t = jnp.tanh(a @ a.T)", "f32[2048,64], f32[2048]", "made=dot"),
        picks("fori-gram-256", "t = jnp.tanh(a @ a.T)", "f32[8192,64], f32[8192]", "made=dot"),
        picks("fori-cos-arg", "t = jnp.cos(a)", "f32[2048,2048], f32[2048]", "made=elementwise-of-table"),
        # controls: an argument read as it is, a table of constants, a loop that computes its table itself
        picks("fori-argument", "t = a", "f32[2048,2048], f32[2048]", "control=argument"),
        picks("fori-eye", "t = jnp.eye(a.shape[0]) * 2.0", "f32[2048], f32[2048]", "control=constants"),
        probe("fori-inside", """
def f(a, s):
    def body(i, s):
        t = jnp.exp(a[:, None] - a[None, :] * i)
        return s * jnp.exp(-jnp.max(t, axis=1) ** 2)
    return jnp.sum(lax.fori_loop(0, 20, body, s))
""", "f32[2048], f32[2048]", "reader=fori_loop", "control=inside"),
        probe("map-reshaped-argument", """
def f(x):
    blocks = x.reshape(-1, 512, x.shape[1])
    return jnp.sum(lax.map(lambda b: jnp.sum(b * b), blocks))
""", "f32[8192,512]", "reader=scan-xs", "control=argument"),
        # scans: the computed table as xs, or as a constant the body reads
        probe("scan-xs-rows", """
def f(a, b):
    t = jnp.exp(a[:, :, None] * b[:, None, :])
    def step(c, row):
        c = jnp.maximum(c + row, 0.0)
        return c, jnp.max(c)
    _, m = lax.scan(step, jnp.zeros(t.shape[1:]), t)
    return jnp.sum(m)
""", "f32[256,512], f32[256,512]", "reader=scan-xs", "made=elementwise"),
        probe("scan-const", """
def f(a, h):
    t = jnp.sin(a @ a.T)
    def step(h, _):
        h = jnp.tanh(t @ h)
        return h, jnp.sum(h)
    _, ys = lax.scan(step, h, None, length=16)
    return jnp.sum(ys)
""", "f32[2048,128], f32[2048]", "reader=scan-const", "made=dot"),
        probe("scan-xs-vmap", """
def f(a, b):
    def one(a, b):
        t = a[:, None] * b[None, :]
        def step(c, row):
            c = jnp.maximum(c + row, 0.0)
            return c, jnp.max(c)
        _, m = lax.scan(step, jnp.zeros(t.shape[1:]), t)
        return jnp.sum(m)
    return jnp.sum(jax.vmap(one)(a, b))
""", "f32[64,512], f32[64,1024]", "reader=scan-xs", "made=elementwise", "vmap"),
        probe("while-until", """
def f(a, s):
    t = jnp.exp(-(a[:, None] - a[None, :]) ** 2)
    def cond(c):
        return (c[1] < 30) & (jnp.max(c[0]) > 1e-3)
    def body(c):
        return (c[0] * jnp.max(t * c[0][None, :], axis=1), c[1] + 1)
    s, _ = lax.while_loop(cond, body, (s, 0))
    return jnp.sum(s)
""", "f32[2048], f32[2048]", "reader=while", "made=elementwise"),
        # a sort, a cumulative sum and an FFT of a computed table, then a smaller reduction
        probe("sort-rows-topk", """
def f(a, b):
    d = jnp.abs(a[:, None] - b[None, :])
    return jnp.sum(jnp.sort(d, axis=1)[:, :8])
""", "f32[2048], f32[4096]", "reader=sort", "made=elementwise"),
        probe("sort-rows-topk-odd", """
def f(a, b):
    d = jnp.abs(a[:, None] - b[None, :])
    return jnp.sum(jnp.sort(d, axis=1)[:, :8])
""", "f32[1999], f32[3001]", "reader=sort", "made=elementwise"),
        probe("cumsum-rows-last", """
def f(a, b):
    d = jnp.exp(a[:, None] * b[None, :])
    return jnp.sum(jnp.cumsum(d, axis=1)[:, -1])
""", "f32[2048], f32[4096]", "reader=cumsum", "made=elementwise"),
        probe("fft-rows-bin", """
def f(a, b):
    d = jnp.cos(a[:, None] * b[None, :])
    return jnp.sum(jnp.abs(jnp.fft.rfft(d, axis=1)[:, 3]))
""", "f32[2048], f32[4096]", "reader=fft", "made=elementwise"),
    ]
    return out


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, programs, TARGETS, TRUTH)


if __name__ == "__main__":
    raise SystemExit(main())
