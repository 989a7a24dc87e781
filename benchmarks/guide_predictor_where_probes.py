"""Probe programs for where the TPU v5e keeps a stored table of 32 to 128 MiB: on-chip (``S(1)``) or HBM.

Between 32 and 128 MiB the families' stored tables went both ways (:func:`sphinx_jaxhlo.predict.tpu.where_stored`).
Each probe stores one table (a matrix product read by a log-sum-exp, or by an exact ``top_k``; an elementwise
function of an argument; complex data) and changes one thing: its size (48 to 120 MiB), its readers (one, two,
three), an elementwise output of the table's size, the table itself returned, a second table as large live at
once, an unrelated large output, bf16, a concatenation, a layer norm, the gradient.  The truth (with the memory
space of the stored buffer) is the family benchmark's (:func:`guide_predictor_family.compile_truth`), written to
``benchmarks/data/guide_predictor_where_probes_truth.jsonl``; TPU v5e only.

Run::

    python benchmarks/guide_predictor_where_probes.py --compile     # what is not compiled yet
    python benchmarks/guide_predictor_where_probes.py               # the truth beside the rules' answer
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program  # noqa: E402
from guide_predictor_probing import probe_main, probe_maker  # noqa: E402

TRUTH = ROOT / "benchmarks" / "data" / "guide_predictor_where_probes_truth.jsonl"
TARGETS = ["tpu:v5e"]

LSE = "jax.nn.logsumexp(s, axis=1)"


probe = probe_maker("where-probes")


def dot(name: str, ret: str, rows: int = 4096, cols: int = 4096, k: int = 256, dtype: str = "f32",
        extra: str = "", extra_spec: str = "") -> Program:
    """``s = x @ w`` of ``rows`` x ``cols``; ``ret``: what ``f`` returns (of ``s`` and ``y``)."""
    sig = "x, w" + (", y" if extra_spec else "")
    body = f"def f({sig}):\n    s = x @ w\n{extra}    return {ret}\n"
    specs = f"{dtype}[{rows},{k}], {dtype}[{k},{cols}]" + (f", {extra_spec}" if extra_spec else "")
    return probe(name, body, specs, "src=dot")


def programs() -> list[Program]:
    mib = {48: 3072, 64: 4096, 80: 5120, 96: 6144, 104: 6656, 112: 7168, 120: 7680}
    out = [dot(f"dot-lse-{m}", LSE, rows=r) for m, r in mib.items()]
    out += [dot(f"dot-topk-{m}", "lax.top_k(s, 4)[0]", rows=mib[m]) for m in (64, 96, 112)]
    out += [
        # three readers: a log-sum-exp and a mean
        dot("dot-lse-mean-64", f"{LSE} + jnp.mean(s, axis=1)"),
        # an elementwise output of the table's size, half its size, a slice of it; the table returned
        dot("dot-lse-tanhout-48", f"{LSE}, jnp.tanh(s)", rows=3072),
        dot("dot-lse-tanhout-64", f"{LSE}, jnp.tanh(s)"),
        dot("dot-lse-bf16out-64", f"{LSE}, jnp.tanh(s).astype(jnp.bfloat16)"),
        dot("dot-lse-sliceout-64", f"{LSE}, s[:, :64]"),
        dot("dot-lse-selfout-64", f"{LSE}, s"),
        # another table as large, live at once; an unrelated output of the table's size
        dot("dot-lse-second-48", f"{LSE} + jax.nn.logsumexp(t, axis=1)", rows=3072, extra="    t = jnp.cos(y @ w)\n",
            extra_spec="f32[3072,256]"),
        dot("dot-lse-second-64", f"{LSE} + jax.nn.logsumexp(t, axis=1)", extra="    t = jnp.cos(y @ w)\n",
            extra_spec="f32[4096,256]"),
        dot("dot-lse-argout-64", f"{LSE}, y * 2.0", extra_spec="f32[4096,4096]"),
        # bf16 table (64 MiB of bf16), a concatenation, a layer norm's output, the gradient
        dot("dot-lse-bf16-64", LSE, cols=8192, dtype="bf16"),
        dot("dot-lse-concat-64", "jax.nn.logsumexp(jnp.concatenate([s, y], axis=1), axis=1)", cols=3584,
            extra_spec="f32[4096,512]"),
        dot("dot-layernorm-48", "(s - m) * lax.rsqrt(jnp.mean((s - m) ** 2, axis=1, keepdims=True) + 1e-5)",
            rows=3072, extra="    m = jnp.mean(s, axis=1, keepdims=True)\n"),
        probe("grad-dot-lse-64",
              "def f(x, w):\n    return jax.grad(lambda x: jnp.sum(jax.nn.logsumexp(x @ w, axis=1)))(x)\n",
              "f32[4096,256], f32[256,4096]", "src=dot", "wrap=grad"),
        # an elementwise function of an argument
        probe("arg-cos-lse-64", f"def f(x):\n    s = jnp.cos(x)\n    return {LSE}\n", "f32[4096,4096]", "src=arg"),
        probe("arg-cos-lse-96", f"def f(x):\n    s = jnp.cos(x)\n    return {LSE}\n", "f32[6144,4096]", "src=arg"),
        # complex data: the table's f32 magnitude of 40 and 48 MiB
        probe("c64-abs-sum-40", "def f(a, b):\n    return jnp.sum(jnp.abs(a * b), axis=1)\n",
              "c64[2560,4096], c64[2560,4096]", "src=arg", "dtype=c64"),
        probe("c64-abs-sum-48", "def f(a, b):\n    return jnp.sum(jnp.abs(a * b), axis=1)\n",
              "c64[3072,4096], c64[3072,4096]", "src=arg", "dtype=c64"),
        # after the first round: the size line between 104 and 112 MiB; complex data of 56 and 64 MiB; rows of 3
        # and 8 gathered (a TPU tile pads the last dimension to 128: 4.8 MB of f32[400000,3] fill 205 MB)
        dot("dot-lse-108", LSE, rows=6912),
        probe("c64-abs-sum-56", "def f(a, b):\n    return jnp.sum(jnp.abs(a * b), axis=1)\n",
              "c64[3584,4096], c64[3584,4096]", "src=arg", "dtype=c64"),
        probe("c64-abs-sum-64", "def f(a, b):\n    return jnp.sum(jnp.abs(a * b), axis=1)\n",
              "c64[4096,4096], c64[4096,4096]", "src=arg", "dtype=c64"),
        *[probe(f"gather{c}-{n // 1000}k",
                "def f(r, i, j):\n    return jnp.sum(jnp.linalg.norm(r[i] - r[j], axis=-1))\n",
                f"f32[100000,{c}], i32[{n}], i32[{n}]", "src=gather") for c, n in
          ((3, 50000), (3, 100000), (3, 200000), (3, 400000), (8, 100000), (8, 200000))],
    ]
    return out


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, programs, TARGETS, TRUTH)


if __name__ == "__main__":
    raise SystemExit(main())
