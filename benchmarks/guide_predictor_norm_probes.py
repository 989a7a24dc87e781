"""Probe programs for a normalised table reduced again: what XLA does with the table of a reduction whose
input is a softmax, a log-softmax, a layer norm, an RMS norm or an l2-normalisation of a table (three
passes over table-sized data or more), on the H100 and the TPU v5e.

Each probe is a module whose ``f`` normalises a table ``t`` (an argument, an elementwise producer of one,
a matrix product or a batched ``einsum``; 2-D, 3-D or 4-D; f32 or bf16; 1 MB to 500 MB) over one axis,
then reduces the normalised table again (an entropy, a mean, a sum, a max, a sum of its product with
another table or with ``t``) over the same axis or another, or is the gradient of such a program.  The
truth is the family benchmark's (:func:`guide_predictor_family.compile_truth`), written to
``benchmarks/data/guide_predictor_norm_probes_truth.jsonl``.

Run::

    python benchmarks/guide_predictor_norm_probes.py --compile     # what is not compiled yet
    python benchmarks/guide_predictor_norm_probes.py               # the truth beside the rules' answer
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program, _module  # noqa: E402
from guide_predictor_probing import probe_main  # noqa: E402

TRUTH = ROOT / "benchmarks" / "data" / "guide_predictor_norm_probes_truth.jsonl"
TARGETS = ["gpu:h100", "tpu:v5e"]

#: How ``t`` is normalised over axis ``a`` into ``p``.
NORMS = {
    "softmax": "p = jax.nn.softmax(t, axis=a)",
    "logsoftmax": "p = jax.nn.log_softmax(t, axis=a)",
    "layernorm": "m = jnp.mean(t, axis=a, keepdims=True)\n    v = jnp.mean((t - m) ** 2, axis=a, keepdims=True)\n"
                 "    p = (t - m) * lax.rsqrt(v + 1e-5)",
    "rmsnorm": "p = t * lax.rsqrt(jnp.mean(t * t, axis=a, keepdims=True) + 1e-6)",
    "l2": "p = t / jnp.sqrt(jnp.sum(t * t, axis=a, keepdims=True) + 1e-12)",
}

#: The second reduction of ``p`` over axis ``r`` (``y``: another table of ``t``'s shape).
REDUCTIONS = {
    "entropy": "return -jnp.sum(p * jnp.log(p + 1e-9), axis=r)",
    "mean": "return jnp.mean(p, axis=r)",
    "sum": "return jnp.sum(p, axis=r)",
    "max": "return jnp.max(p, axis=r)",
    "prod": "return jnp.sum(p * y, axis=r)",
    "self": "return jnp.sum(p * t, axis=r)",
    "sumsq": "return jnp.sum(p * p, axis=r)",
}

#: The table ``t``'s source: (expression, whether it reads ``w``).
SOURCES = {
    "arg": ("x", False),
    "ew": ("jnp.tanh(x) * 2.0", False),
    "dot": ("x @ w", True),
    "dotew": ("jnp.tanh(x @ w) * 2.0", True),
    "qkt": ("x @ w.T", True),
    "bdot": ("jnp.einsum('bqd,bkd->bqk', x, w)", True),
    "hdot": ("jnp.einsum('bhqd,bhkd->bhqk', x, w)", True),
}


def _spec(dtype: str, shape: tuple[int, ...]) -> str:
    return f"{dtype}[{','.join(str(d) for d in shape)}]"


def norm_probe(name: str, norm: str = "softmax", axis: int = -1, src: str = "arg", red: str = "entropy",
               rax: int = -1, shape: tuple[int, ...] = (4096, 4096), k: int = 256, dtype: str = "f32",
               wrap: str = "") -> Program:
    """``shape`` is ``t``'s; a contraction's operands have ``k`` features."""
    expr, reads_w = SOURCES[src]
    args = ["x", "w"] if reads_w else ["x"]
    if red == "prod":
        args.append("y")
    if reads_w and src == "qkt":  # q [n, k] against keys [m, k]
        xs, ws = (shape[0], k), (shape[1], k)
    elif reads_w and src in ("dot", "dotew"):
        xs, ws = (shape[0], k), (k, shape[1])
    elif reads_w:  # batched: x [.., q, k], w [.., kv, k]
        xs, ws = (*shape[:-1], k), (*shape[:-2], shape[-1], k)
    else:
        xs, ws = shape, ()
    specs = [_spec(dtype, xs)] + ([_spec(dtype, ws)] if reads_w else [])
    specs += [_spec(dtype, shape)] if red == "prod" else []
    sig = ", ".join(args)
    body = f"def g({sig}):\n    a, r = {axis}, {rax}\n    t = {expr}\n    {NORMS[norm]}\n    {REDUCTIONS[red]}\n\n\n"
    if wrap == "":
        body += f"def f({sig}):\n    return g({sig})\n"
    else:  # the gradient with respect to the first argument
        body += f"def f({sig}):\n    return jax.grad(lambda x: jnp.sum(g({sig})).astype(jnp.float32))(x)\n"
    return Program(name, "norm-probes", _module(body), ", ".join(specs),
                   [f"norm={norm}", f"src={src}", f"red={red}", f"wrap={wrap or 'none'}"])


def programs() -> list[Program]:
    P = norm_probe
    big = (16384, 8192)  # 512 MB in f32
    return [
        # 2-D softmax of an argument: each second reduction, over the same axis and the other
        *[P(f"sm-arg-{red}-last", red=red) for red in REDUCTIONS],
        *[P(f"sm-arg-{red}-ax0", red=red, rax=0) for red in ("entropy", "mean", "max", "prod")],
        P("sm0-arg-self-ax0", axis=0, rax=0, red="self"), P("sm0-arg-mean-last", axis=0, rax=-1, red="mean"),
        # the other normalisations
        *[P(f"{n}-arg-{red}-{ax}", norm=n, red=red, rax=r) for n in ("logsoftmax", "layernorm", "rmsnorm", "l2")
          for red, ax, r in (("sum", "last", -1), ("mean", "ax0", 0), ("self", "last", -1))],
        # an elementwise producer, a contraction, a contraction with an elementwise producer
        P("sm-ew-entropy-last", src="ew"), P("sm-ew-mean-ax0", src="ew", red="mean", rax=0),
        P("sm-dot-entropy-last", src="dot"), P("sm-dot-mean-ax0", src="dot", red="mean", rax=0),
        P("sm-dot-prod-last", src="dot", red="prod"), P("sm-dotew-entropy-last", src="dotew"),
        P("sm0-dotew-self-ax0", src="dotew", axis=0, rax=0, red="self"),
        P("ln-dot-mean-ax0", norm="layernorm", src="dot", red="mean", rax=0),
        P("rms-dot-sumsq-last", norm="rmsnorm", src="dot", red="sumsq"),
        P("lsm-dot-self-last", norm="logsoftmax", src="dot", red="self"),
        # batched attention: 3-D and 4-D
        P("sm-bdot-entropy-last", src="bdot", shape=(16, 1024, 1024), k=64),
        P("sm-bdot-mean-ax1", src="bdot", shape=(16, 1024, 1024), k=64, red="mean", rax=1),
        P("sm-bdot-max-ax1", src="bdot", shape=(16, 1024, 1024), k=64, red="max", rax=1),
        P("sm-bdot-prod-last", src="bdot", shape=(16, 1024, 1024), k=64, red="prod"),
        P("sm-hdot-entropy-last", src="hdot", shape=(4, 8, 512, 512), k=64),
        P("sm-hdot-mean-ax2", src="hdot", shape=(4, 8, 512, 512), k=64, red="mean", rax=2),
        P("sm-arg3-entropy-last", shape=(16, 1024, 1024)), P("sm-arg3-mean-ax1", shape=(16, 1024, 1024),
                                                               red="mean", rax=1),
        P("ln-arg3-mean-ax1", norm="layernorm", shape=(16, 1024, 1024), red="mean", rax=1),
        # bf16
        P("sm-arg-entropy-last-bf16", dtype="bf16"), P("sm-arg-mean-ax0-bf16", dtype="bf16", red="mean", rax=0),
        P("sm-dot-entropy-last-bf16", src="dot", dtype="bf16"),
        P("sm-bdot-entropy-last-bf16", src="bdot", shape=(16, 1024, 1024), k=64, dtype="bf16"),
        P("ln-arg-mean-ax0-bf16", norm="layernorm", dtype="bf16", red="mean", rax=0),
        # sizes: 1 MB and 512 MB
        P("sm-arg-entropy-last-1mb", shape=(512, 512)), P("sm-arg-mean-ax0-1mb", shape=(512, 512), red="mean", rax=0),
        P("sm-dot-entropy-last-1mb", src="dot", shape=(512, 512)),
        P("sm-arg-entropy-last-big", shape=big), P("sm-arg-mean-ax0-big", shape=big, red="mean", rax=0),
        P("sm-dot-entropy-last-big", src="dot", shape=big),
        # gradients
        P("grad-sm-arg-entropy-last", wrap="grad"), P("grad-sm-arg-mean-ax0", red="mean", rax=0, wrap="grad"),
        P("grad-ln-arg-self-last", norm="layernorm", red="self", wrap="grad"),
        P("grad-sm-dot-entropy-last", src="dot", wrap="grad"),
        P("grad-sm-bdot-entropy-last", src="bdot", shape=(16, 1024, 1024), k=64, wrap="grad"),
        # after the families: rows that are not a power of two, or short; q @ k.T; softmax over axis 0
        P("sm-arg-mean-ax0-r1000", shape=(16384, 1000), red="mean", rax=0),
        P("sm-arg-entropy-last-r1000", shape=(16384, 1000)),
        P("sm-arg-mean-ax0-r10", shape=(262144, 10), red="mean", rax=0),
        P("sm-arg-entropy-last-r10", shape=(262144, 10)),
        P("sm-arg3-mean-ax0-r10", shape=(64, 16384, 10), red="mean", rax=0),
        P("sm-arg3-mean-ax0", shape=(16, 1024, 1024), red="mean", rax=0),
        P("sm-arg-prod-ax0-r1008", shape=(16384, 1008), red="prod", rax=0),
        P("ln-arg-mean-ax0-r768", norm="layernorm", shape=(16384, 768), red="mean", rax=0),
        P("sm0-arg-mean-last-r1000", axis=0, shape=(1000, 16384), red="mean"),
        P("sm-qkt-entropy-last", src="qkt", k=64), P("sm-qkt-mean-ax0", src="qkt", k=64, red="mean", rax=0),
        P("sm-qkt-entropy-last-r1000", src="qkt", shape=(4096, 1000), k=64),
        P("sm-dot-entropy-last-r1000", src="dot", shape=(4096, 1000), k=128),
        P("sm0-dot-self-ax0", src="dot", axis=0, rax=0, red="self"),
        P("sm-qkt-entropy-last-bf16", src="qkt", k=64, dtype="bf16"),
        P("grad-sm-qkt-entropy-last", src="qkt", k=64, wrap="grad"),
    ]


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, programs, TARGETS, TRUTH)


if __name__ == "__main__":
    raise SystemExit(main())
