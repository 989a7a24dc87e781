"""What a trip through a chunking's loop costs by itself, on the machine it runs on.

A suggested chunking (:mod:`sphinx_jaxhlo.chunking.search`) is a ``lax.scan`` over chunks; every trip
launches its body's kernels and steps the loop, whatever the chunk holds.  This times the K-chunked
matrix product ``x @ w`` (x f32[128, K], w f32[K, 4096], the shape of an H100 split-K GEMM) written
as a scan over chunks of K, for several trip counts, against the product in one call: the extra time
per trip is the fixed cost that :data:`~sphinx_jaxhlo.chunking.search.MAX_TRIPS` bounds.

``PYTHONPATH=$PWD python benchmarks/trip_cost.py --out FILE`` (on a TPU machine: the chip; here: the CPU).
Each figure is the median of 20 calls (:func:`chunk_trips_tpu.timed`, as the chunk-size benchmark times).
"""

from __future__ import annotations

import argparse
import json

import jax
import jax.numpy as jnp
from chunk_trips_tpu import timed
from jax import lax

K, ROWS, COLS = 8192, 128, 4096


def chunked_product(size: int):
    trips = K // size

    @jax.jit
    def run(x, w):
        xs = x.reshape(ROWS, trips, size).transpose(1, 0, 2)
        ws = w.reshape(trips, size, COLS)

        def step(total, chunk):
            xc, wc = chunk
            return total + xc @ wc, None

        total, _ = lax.scan(step, jnp.zeros((ROWS, COLS), x.dtype), (xs, ws))
        return total

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--trips", default="16,64,256,1024,4096,8192")
    options = parser.parse_args()
    key = jax.random.key(0)
    x = jax.random.normal(key, (ROWS, K), jnp.float32)
    w = jax.random.normal(jax.random.key(1), (K, COLS), jnp.float32)
    whole = timed(jax.jit(lambda x, w: x @ w), x, w)
    rows = []
    for trips in (int(t) for t in options.trips.split(",")):
        seconds = timed(chunked_product(K // trips), x, w)
        rows.append({"trips": trips, "chunk": K // trips, "ms": round(seconds * 1e3, 3),
                     "us_per_trip_over_whole": round((seconds - whole) / trips * 1e6, 2)})
        print(rows[-1], flush=True)
    result = {"device": str(jax.devices()[0].device_kind), "jax": jax.__version__,
              "shape": {"x": [ROWS, K], "w": [K, COLS]}, "whole_ms": round(whole * 1e3, 3), "chunked": rows}
    with open(options.out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
