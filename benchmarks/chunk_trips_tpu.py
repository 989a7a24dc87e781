"""On a TPU v5e: the time of a chunked bf16 cross-entropy against its chunk size (the trip count),
and the error of a bf16 weight's gradient summed over the chunks, with and without the upcast.

Self-contained (jax 0.10.2 with libtpu; this repository on ``PYTHONPATH`` for ``chunked``); it runs
the programs on the chip and writes ``chunk_trips.json`` under ``$OUT`` (or the current folder)::

    PYTHONPATH=$PWD python benchmarks/chunk_trips_tpu.py

Checks the figures behind :func:`sphinx_jaxhlo.chunking.search.trip_cap` and the bf16 gradient
warning of :func:`sphinx_jaxhlo.chunked` (issue 54).
"""

from __future__ import annotations

import json
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

from sphinx_jaxhlo import chunked

T, D, V = 8192, 1024, 131072


def xent(h, w, labels):
    logits = h @ w
    lse = jax.nn.logsumexp(logits.astype(jnp.float32), axis=-1)
    picked = jnp.sum(jnp.where(labels[:, None] == jnp.arange(w.shape[1]), logits, 0), axis=-1)
    return jnp.mean(lse - picked.astype(jnp.float32))


def xent_upcast(h, w32, labels):
    return xent(h, w32.astype(jnp.bfloat16), labels)


def timed(fn, *args, repeats: int = 20) -> float:
    """The median seconds of one call (compiled first)."""
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> None:
    rng = np.random.default_rng(0)
    h = jnp.asarray(rng.standard_normal((T, D)) / 4, jnp.bfloat16)
    w = jnp.asarray(rng.standard_normal((D, V)) / 32, jnp.bfloat16)
    labels = jnp.asarray(rng.integers(0, V, T), jnp.int32)
    out: dict = {"device": str(jax.devices()[0].device_kind), "shapes": [T, D, V], "time_s": {}, "grad_error": {}}
    forms = {"forward": lambda f: jax.jit(f), "value_and_grad_w": lambda f: jax.jit(jax.value_and_grad(f, argnums=1))}
    for form, make in forms.items():
        out["time_s"][form] = {"unchunked": timed(make(xent), h, w, labels)}
        for size in (64, 128, 256, 512, 1024, 2048):
            fn = chunked(xent, argnums=(0, 2), size=size, combine="mean")
            out["time_s"][form][str(size)] = timed(make(fn), h, w, labels)
    exact = jax.jit(jax.grad(xent, argnums=1))(h.astype(jnp.float32), w.astype(jnp.float32), labels)
    scale = float(jnp.max(jnp.abs(exact)))

    def error(g) -> float:
        return float(jnp.max(jnp.abs(g.astype(jnp.float32) - exact))) / scale

    out["grad_error"]["unchunked"] = error(jax.jit(jax.grad(xent, argnums=1))(h, w, labels))
    for size in (64, 1024):
        g = jax.jit(jax.grad(chunked(xent, argnums=(0, 2), size=size, combine="mean"), argnums=1))(h, w, labels)
        up = jax.jit(jax.grad(chunked(xent_upcast, argnums=(0, 2), size=size, combine="mean"), argnums=1))
        out["grad_error"][f"bf16 sum, chunks of {size}"] = error(g)
        out["grad_error"][f"f32 upcast, chunks of {size}"] = error(up(h, w.astype(jnp.float32), labels))
        out["time_s"].setdefault("grad_w_upcast", {})[str(size)] = timed(up, h, w.astype(jnp.float32), labels)
    folder = os.environ.get("OUT", ".")
    with open(os.path.join(folder, "chunk_trips.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
