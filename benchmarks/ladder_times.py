"""Time the guide's memory ladder (docs/guide/bounded.md) on a real accelerator.

Each rung of the ladder is a program the guide compiles deviceless; this script runs
the same programs, at the same sizes, on the chip it finds (meant for one TPU v5e), so
that the pages state measured costs: warm times (each program compiled and run once
before timing, then the median of ``--runs`` runs, each ending in
``block_until_ready``), XLA's temp bytes as compiled for the chip, and, for the bf16
accumulation hazard, the error of the weight's gradient against an f32 reference.

Self-contained: it needs jax (0.10.2) with the chip's plugin and numpy, not this
package (the chunked loops are written out as ``sphinx_jaxhlo.chunked_source`` writes
them).  A program the chip cannot hold is recorded with its error
(RESOURCE_EXHAUSTED), not raised.  From the repository root:

    python benchmarks/ladder_times.py                   # writes $OUT/ladder_times.json
    python benchmarks/ladder_times.py --group exact,primitive   # $OUT/ladder_times_exact_primitive.json
    python benchmarks/ladder_times.py --small --runs 2  # the same programs at small sizes, on any backend

The JSON is rewritten after each program, so a run cut short keeps what it measured.
A run on a TPU v5e (2026-12-06, ``--runs 5``) is kept in
``benchmarks/ladder_times_tpu-v5e.json``; docs/guide/bounded.md, chunked.md,
precision.md and cases.md quote it.

The JSON holds, per program: ``ms`` (median), ``ms_all``, ``temp_bytes``, ``error`` when
it failed, and for the precision rows ``grad_rel_error``.  Groups:

- ``exact``: the Gram trace written as two Gram matrices and as one einsum; the
  cross-entropy's pick by ``take_along_axis`` and by a one-hot (forward and gradient).
- ``primitive``: kNN by ``lax.approx_min_k`` and by an exact ``lax.map(batch_size=)``;
  attention by XLA (forward), a checkpointed ``lax.map`` over query blocks, and the
  Pallas TPU flash kernel (forward and gradient).
- ``batch_size``: per-example gradient norms by ``vmap`` and by ``lax.map(batch_size=8)``.
- ``recompute``: the chunked cross-entropy under ``jax.grad`` and ``jax.value_and_grad``
  against the unchunked one, with and without the checkpoint.
- ``chunk_size``: the chunked cross-entropy at 64 tokens a chunk (what the 64 MiB
  default budget picks) up to 4096, and unchunked.
- ``copies``: a chunk size that does not divide the axis (1000 of 8192), chunking the
  tokens of a transposed argument (a non-leading axis), chunking the vocabulary.
- ``precision``: a closed-over bf16 weight's gradient summed in bf16 once per chunk
  (128 chunks of 64 tokens), against the weight made f32 before the loop, and unchunked.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def sizes(small: bool) -> dict[str, int]:
    """The programs' sizes: the guide's, or a small set for a check on any backend."""
    if small:
        return dict(b=2, n=256, d=16, tokens=512, hidden=64, vocab=2048, points=4096, k=16,
                    knn_batch=256, seq=1024, heads=2, head_dim=128, qblock=256, width=64,
                    examples=64, norm_batch=8, vocab_chunk=256)
    return dict(b=16, n=8192, d=64, tokens=8192, hidden=4096, vocab=131072, points=200000, k=16,
                knn_batch=1000, seq=16384, heads=8, head_dim=128, qblock=1024, width=1024,
                examples=4096, norm_batch=8, vocab_chunk=8192)


def programs(s: dict[str, int]) -> dict[str, tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]]]:
    """Name -> (group, function, maker of its arguments)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    key = jax.random.key(0)

    def normal(shape: tuple[int, ...], dtype: Any = jnp.float32, i: int = 0, scale: float = 1.0) -> Any:
        return (scale * jax.random.normal(jax.random.fold_in(key, i), shape, jnp.float32)).astype(dtype)

    # --- exact rewrites -------------------------------------------------------------
    def gram_trace_matrices(x: Any, y: Any) -> Any:
        k = jnp.einsum("bnd,bmd->bnm", x, x)
        l = jnp.einsum("bme,bne->bmn", y, y)  # noqa: E741
        return jnp.sum(k * l, axis=(1, 2))

    def gram_trace_einsum(x: Any, y: Any) -> Any:
        return jnp.einsum("bnd,bmd,bme,bne->b", x, x, y, y)

    def summed(f: Callable[..., Any]) -> Callable[..., Any]:
        return lambda *args: jnp.sum(f(*args))

    def gram_args() -> tuple[Any, ...]:
        return normal((s["b"], s["n"], s["d"]), i=1), normal((s["b"], s["n"], s["d"]), i=2)

    def xent_take(h: Any, w: Any, labels: Any) -> Any:
        logp = jax.nn.log_softmax((h @ w).astype(jnp.float32), axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    def xent_sum(h: Any, w: Any, labels: Any) -> Any:
        logp = jax.nn.log_softmax((h @ w).astype(jnp.float32), axis=-1)
        pick = jax.nn.one_hot(labels, w.shape[1], dtype=logp.dtype)
        return -jnp.sum(logp * pick)

    def xent_onehot(h: Any, w: Any, labels: Any) -> Any:
        return xent_sum(h, w, labels) / h.shape[0]

    def xent_args() -> tuple[Any, ...]:
        h = normal((s["tokens"], s["hidden"]), jnp.bfloat16, i=3)
        w = normal((s["hidden"], s["vocab"]), jnp.bfloat16, i=4, scale=s["hidden"] ** -0.5)
        labels = jax.random.randint(jax.random.fold_in(key, 5), (s["tokens"],), 0, s["vocab"])
        return h, w, labels

    def grad_w(f: Callable[..., Any]) -> Callable[..., Any]:
        return jax.grad(f, argnums=1)

    def value_and_grad_w(f: Callable[..., Any]) -> Callable[..., Any]:
        return jax.value_and_grad(f, argnums=1)

    # --- the chunked loop, as chunked_source writes it ---------------------------------
    def chunked_tokens(fn: Callable[..., Any], size: int, checkpoint: bool = True,
                       token_axis: int = 0) -> Callable[..., Any]:
        """fn(h, w, labels) summed over chunks of ``size`` tokens (axis ``token_axis`` of h)."""
        def run(h: Any, w: Any, labels: Any) -> Any:
            n = h.shape[token_axis]
            size_ = min(size, n)
            k, r = divmod(n, size_)
            hm = jnp.moveaxis(h, token_axis, 0)
            h_chunks = hm[:k * size_].reshape(k, size_, *hm.shape[1:])
            l_chunks = labels[:k * size_].reshape(k, size_)

            def part(h_c: Any, l_c: Any) -> Any:
                return fn(jnp.moveaxis(h_c, 0, token_axis), w, l_c)

            if checkpoint:
                part = jax.checkpoint(part, prevent_cse=False)

            def step(total: Any, chunk: Any) -> Any:
                return total + part(*chunk), None

            total, _ = lax.scan(step, jnp.zeros((), jnp.float32), (h_chunks, l_chunks))
            if r:
                total = total + part(hm[k * size_:], labels[k * size_:])
            return total / n
        return run

    def xent_sum_transposed(ht: Any, w: Any, labels: Any) -> Any:
        return xent_sum(ht.T, w, labels)

    def xent_args_transposed() -> tuple[Any, ...]:
        h, w, labels = xent_args()
        return h.T, w, labels

    def xent_vocab_chunks(h: Any, w: Any, labels: Any) -> Any:
        """An online log-sum-exp over chunks of the vocabulary (axis 1 of w), checkpointed."""
        v, size = w.shape[1], s["vocab_chunk"]
        w_chunks = jnp.moveaxis(w.reshape(w.shape[0], v // size, size), 1, 0)

        @jax.checkpoint
        def step(carry: Any, chunk: Any) -> Any:
            top, total, picked = carry
            w_c, start = chunk
            logits = (h @ w_c).astype(jnp.float32)
            new_top = jnp.maximum(top, jnp.max(logits, axis=1))
            total = total * jnp.exp(top - new_top) + jnp.sum(jnp.exp(logits - new_top[:, None]), axis=1)
            pick = jax.nn.one_hot(labels - start, size, dtype=logits.dtype)
            return (new_top, total, picked + jnp.sum(logits * pick, axis=1)), None

        t = h.shape[0]
        start = (jnp.full((t,), -jnp.inf, jnp.float32), jnp.zeros((t,), jnp.float32), jnp.zeros((t,), jnp.float32))
        (top, total, picked), _ = lax.scan(step, start, (w_chunks, jnp.arange(0, v, size)))
        return jnp.mean(top + jnp.log(total) - picked)

    # --- library primitives ----------------------------------------------------------
    def knn_approx(pts: Any) -> Any:
        sq = jnp.sum(pts * pts, axis=1)
        dist = sq[:, None] - 2 * pts @ pts.T + sq[None, :]
        return lax.approx_min_k(dist, s["k"])[1]

    def knn_map(pts: Any) -> Any:
        sq = jnp.sum(pts * pts, axis=1)

        def nearest(q: Any) -> Any:
            return lax.top_k(-(sq - 2 * pts @ q), s["k"])[1]

        return lax.map(nearest, pts, batch_size=s["knn_batch"])

    def knn_args() -> tuple[Any, ...]:
        return (normal((s["points"], 3), i=6),)

    def attention_xla(q: Any, k: Any, v: Any) -> Any:
        out = jax.nn.dot_product_attention(q, k, v, implementation="xla")
        return jnp.mean(out.astype(jnp.float32) ** 2)

    def attention_map(q: Any, k: Any, v: Any) -> Any:
        b, t, n, hd = q.shape
        blocks = q.reshape(b, t // s["qblock"], s["qblock"], n, hd).swapaxes(0, 1)

        @jax.checkpoint
        def block(c: Any) -> Any:
            out = jax.nn.dot_product_attention(c, k, v, implementation="xla")
            return jnp.sum(out.astype(jnp.float32) ** 2)

        return jnp.sum(lax.map(block, blocks)) / q.size

    def attention_args() -> tuple[Any, ...]:
        shape = (1, s["seq"], s["heads"], s["head_dim"])
        return normal(shape, i=7), normal(shape, i=8), normal(shape, i=9)

    def attention_flash(q: Any, k: Any, v: Any) -> Any:
        from jax.experimental.pallas.ops.tpu import flash_attention as fa
        out = fa.flash_attention(q, k, v, sm_scale=q.shape[-1] ** -0.5)
        return jnp.mean(out.astype(jnp.float32) ** 2)

    def attention_args_bhtd() -> tuple[Any, ...]:
        return tuple(a.swapaxes(1, 2) for a in attention_args())

    # --- lax.map(batch_size=) when each result is small --------------------------------
    def example_loss(w: Any, x: Any) -> Any:
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    def norms_vmap(w: Any, xs: Any) -> Any:
        g = jax.vmap(jax.grad(example_loss), in_axes=(None, 0))(w, xs)
        return jnp.sqrt(jnp.sum(g * g, axis=(1, 2)))

    def norms_map(w: Any, xs: Any) -> Any:
        def norm(x: Any) -> Any:
            g = jax.grad(example_loss)(w, x)
            return jnp.sqrt(jnp.sum(g * g))
        return lax.map(norm, xs, batch_size=s["norm_batch"])

    def norms_args() -> tuple[Any, ...]:
        return (normal((s["width"], s["width"]), i=10, scale=s["width"] ** -0.5),
                normal((s["examples"], s["width"]), i=11))

    # --- the bf16 hazard -------------------------------------------------------------
    def xent_upcast_chunked(h: Any, w: Any, labels: Any) -> Any:
        # the weight made f32 before the loop: the loop closes over an f32 weight, so its
        # gradient is summed in f32 and rounded to bf16 once (a cast inside the step would
        # round each chunk's contribution back to bf16 before the sum)
        return chunked_tokens(xent_sum, 64)(h, w.astype(jnp.float32), labels)

    def xent_sum_bf16_dot(h: Any, w32: Any, labels: Any) -> Any:
        return xent_sum(h, w32.astype(jnp.bfloat16), labels)

    def xent_f32_weight_bf16_dot_chunked(h: Any, w: Any, labels: Any) -> Any:
        # the same f32 weight before the loop, rounded to bf16 for each chunk's dot: the
        # gradient is still summed in f32 (the cast's transpose is f32), the dot stays bf16
        return chunked_tokens(xent_sum_bf16_dot, 64)(h, w.astype(jnp.float32), labels)

    out: dict[str, tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]]] = {
        "gram_trace_matrices": ("exact", gram_trace_matrices, gram_args),
        "gram_trace_einsum": ("exact", gram_trace_einsum, gram_args),
        "gram_trace_matrices_grad": ("exact", jax.grad(summed(gram_trace_matrices)), gram_args),
        "gram_trace_einsum_grad": ("exact", jax.grad(summed(gram_trace_einsum)), gram_args),
        "xent_take": ("exact", xent_take, xent_args),
        "xent_onehot": ("exact", xent_onehot, xent_args),
        "xent_take_grad": ("exact", grad_w(xent_take), xent_args),
        "xent_onehot_grad": ("exact", grad_w(xent_onehot), xent_args),
        "knn_approx_min_k": ("primitive", knn_approx, knn_args),
        "knn_map_batch_size": ("primitive", knn_map, knn_args),
        "attention_xla": ("primitive", attention_xla, attention_args),
        "attention_xla_grad": ("primitive", jax.grad(attention_xla), attention_args),
        "attention_map_checkpointed": ("primitive", attention_map, attention_args),
        "attention_map_checkpointed_grad": ("primitive", jax.grad(attention_map), attention_args),
        "attention_flash": ("primitive", attention_flash, attention_args_bhtd),
        "attention_flash_grad": ("primitive", jax.grad(attention_flash), attention_args_bhtd),
        "norms_vmap": ("batch_size", norms_vmap, norms_args),
        "norms_map_batch_size": ("batch_size", norms_map, norms_args),
        "xent_grad": ("recompute", grad_w(xent_onehot), xent_args),
        "xent_value_and_grad": ("recompute", value_and_grad_w(xent_onehot), xent_args),
        "xent_chunked_1024_grad": ("recompute", grad_w(chunked_tokens(xent_sum, 1024)), xent_args),
        "xent_chunked_1024_value_and_grad": ("recompute", value_and_grad_w(chunked_tokens(xent_sum, 1024)),
                                             xent_args),
        "xent_chunked_1024_unchecked_grad": ("recompute", grad_w(chunked_tokens(xent_sum, 1024, checkpoint=False)),
                                             xent_args),
        "xent_chunked_1024_unchecked_value_and_grad": (
            "recompute", value_and_grad_w(chunked_tokens(xent_sum, 1024, checkpoint=False)), xent_args),
        "xent_unchunked": ("chunk_size", xent_onehot, xent_args),
        "xent_unchunked_value_and_grad": ("chunk_size", value_and_grad_w(xent_onehot), xent_args),
        "xent_remainder_1000": ("copies", chunked_tokens(xent_sum, 1000), xent_args),
        "xent_remainder_1000_value_and_grad": ("copies", value_and_grad_w(chunked_tokens(xent_sum, 1000)),
                                               xent_args),
        "xent_transposed_1024": ("copies", chunked_tokens(xent_sum_transposed, 1024, token_axis=1),
                                 xent_args_transposed),
        "xent_vocabulary_chunks": ("copies", xent_vocab_chunks, xent_args),
        "xent_vocabulary_chunks_value_and_grad": ("copies", value_and_grad_w(xent_vocab_chunks), xent_args),
        "precision_bf16_chunked_grad": ("precision", grad_w(chunked_tokens(xent_sum, 64)), xent_args),
        "precision_upcast_chunked_grad": ("precision", grad_w(xent_upcast_chunked), xent_args),
        "precision_upcast_bf16_dot_chunked_grad": ("precision", grad_w(xent_f32_weight_bf16_dot_chunked),
                                                   xent_args),
        "precision_bf16_unchunked_grad": ("precision", grad_w(xent_onehot), xent_args),
    }
    for size in (64, 256, 1024, 4096):
        out[f"xent_chunked_{size}"] = ("chunk_size", chunked_tokens(xent_sum, size), xent_args)
        out[f"xent_chunked_{size}_value_and_grad"] = (
            "chunk_size", value_and_grad_w(chunked_tokens(xent_sum, size)), xent_args)
    return out


def reference_grad(s: dict[str, int], args: tuple[Any, ...]) -> Any:
    """The cross-entropy's gradient in f32, unchunked: what the precision rows are compared with."""
    import jax
    import jax.numpy as jnp

    h, w, labels = args
    n = h.shape[0]

    def loss(w32: Any, h_block: Any, l_block: Any) -> Any:
        logp = jax.nn.log_softmax(h_block.astype(jnp.float32) @ w32, axis=-1)
        return -jnp.sum(jnp.take_along_axis(logp, l_block[:, None], axis=1)) / n

    block = max(1, n // 8)  # blocks of tokens, so that the f32 logits fit beside the weight
    with jax.default_matmul_precision("highest"):
        grad = jax.jit(jax.grad(loss))
        w32 = w.astype(jnp.float32)
        total = None
        for start in range(0, n, block):
            part = grad(w32, h[start:start + block], labels[start:start + block])
            total = part if total is None else total + part
        return total


def measure(fn: Callable[..., Any], args: tuple[Any, ...], runs: int) -> dict[str, Any]:
    """Compile, run once (warm-up), then time ``runs`` runs; the median in milliseconds."""
    import jax

    row: dict[str, Any] = {}
    try:
        compiled = jax.jit(fn).lower(*args).compile()
    except Exception as exc:  # a compile the chip cannot hold: recorded, not raised
        row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
        return row
    memory = compiled.memory_analysis()
    if memory is not None:
        row["temp_bytes"] = int(memory.temp_size_in_bytes)
    try:
        result = compiled(*args)
        jax.block_until_ready(result)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            jax.block_until_ready(compiled(*args))
            times.append((time.perf_counter() - start) * 1e3)
    except Exception as exc:
        row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
        return row
    row["ms"] = round(statistics.median(times), 4)
    row["ms_all"] = [round(t, 4) for t in times]
    row["_result"] = result
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs per program (median reported)")
    parser.add_argument("--small", action="store_true", help="small sizes, for a check on any backend")
    parser.add_argument("--only", default="", help="comma-separated program names (default: all)")
    parser.add_argument("--group", default="", help="comma-separated groups (exact, primitive, batch_size, "
                        "recompute, chunk_size, copies, precision); the file is then ladder_times_GROUPS.json")
    parser.add_argument("--out", default=os.environ.get("OUT", "."), help="folder for ladder_times.json")
    options = parser.parse_args(argv)

    import jax
    import numpy as np

    s = sizes(options.small)
    table = programs(s)
    groups = [g for g in options.group.split(",") if g]
    wanted = [n for n in options.only.split(",") if n] or [n for n in table if not groups or table[n][0] in groups]
    unknown = [n for n in wanted if n not in table]
    if unknown:
        parser.error(f"unknown programs: {', '.join(unknown)}")
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / ("ladder_times.json" if not groups else f"ladder_times_{'_'.join(groups)}.json")
    device = jax.devices()[0]
    report: dict[str, Any] = {
        "device": f"{device.platform} {getattr(device, 'device_kind', '')}".strip(),
        "jax": jax.__version__, "sizes": s, "runs": options.runs,
        "timing": "warm: compiled and run once first; median of the timed runs, each ending in block_until_ready",
        "programs": {},
    }
    reference = None
    for name in wanted:
        group, fn, make_args = table[name]
        args = make_args()
        row = measure(fn, args, options.runs)
        result = row.pop("_result", None)
        if group == "precision" and result is not None:
            if reference is None:
                reference = np.asarray(reference_grad(s, args), np.float64)
            got = np.asarray(result.astype(jax.numpy.float32), np.float64)
            row["grad_rel_error"] = float(np.linalg.norm(got - reference) / np.linalg.norm(reference))
        row["group"] = group
        report["programs"][name] = row
        shown = f"{row['ms']:.3f} ms" if "ms" in row else row.get("error", "")
        print(f"{name:45s} {shown}  temp {row.get('temp_bytes', '-')}", flush=True)
        del args, result
        # written after every program, so that a run stopped by a time limit keeps what it measured
        path.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
