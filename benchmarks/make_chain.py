"""Write ``benchmarks/data/chain2000_cpu.hlo.xz``: the optimized CPU module of a chain of
2000 matmul steps (about 7 MB of HLO), for the render-time benchmark.

Compiling it takes half a minute to a few minutes, so the benchmark reads the stored
module; run this again after a jax upgrade (``python benchmarks/make_chain.py``).
"""

from __future__ import annotations

import lzma
import os
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from bench import CHAIN, CHAIN_SOURCE


def main() -> None:
    import jax
    import jax.numpy as jnp

    namespace: dict[str, object] = {}
    exec(compile(CHAIN_SOURCE, "example.py", "exec"), namespace)
    specs = (jax.ShapeDtypeStruct((256, 256), jnp.float32), jax.ShapeDtypeStruct((256, 256), jnp.float32))
    start = time.perf_counter()
    text = jax.jit(namespace["chain"]).trace(*specs).lower().compile().as_text()
    print(f"compiled in {time.perf_counter() - start:.1f} s: {len(text):,} characters of HLO")
    CHAIN.parent.mkdir(parents=True, exist_ok=True)
    with lzma.open(CHAIN, "wt", preset=9) as f:
        f.write(text)
    print(f"wrote {CHAIN} ({CHAIN.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
