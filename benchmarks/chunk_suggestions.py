"""The report's chunking suggestion on the three programs of issue 54 where it was missing:
a bf16 cross-entropy over a 128k vocabulary, a kernel density estimate whose plain compile is
RESOURCE_EXHAUSTED on a TPU v5e, and an N-body energy under ``:grad:``.

Run from the repository root (deviceless: no accelerator needed)::

    PYTHONPATH=$PWD python benchmarks/chunk_suggestions.py [--targets cpu,gpu:h100,tpu:v5e] [--out FILE]

It compiles each program through ``sphinx_jaxhlo.analyze_source`` (the directive's path, ``:grad:``
included) and prints, per program and target, the unchunked figure (or the compile's failure) and
the suggestion's first line; with ``--out``, the same as JSON.  Run it with another checkout first on
``PYTHONPATH`` to compare releases (the before/after of issue 54).
"""

from __future__ import annotations

import argparse
import json
import time

PROGRAMS = {
    "xent_bf16": ('''
import jax
import jax.numpy as jnp


def xent(h, w, labels):
    logits = h @ w                                                   # [tokens, vocabulary]
    lse = jax.nn.logsumexp(logits.astype(jnp.float32), axis=-1)
    picked = jnp.sum(jnp.where(labels[:, None] == jnp.arange(w.shape[1]), logits, 0), axis=-1)
    return jnp.mean(lse - picked.astype(jnp.float32))
''', "xent", "bf16[8192,1024], bf16[1024,131072], i32[8192]", None),
    "kde": ('''
import jax.numpy as jnp


def kde(q, x):
    d = q[:, None, :] - x[None, :, :]                                # [queries, points, 3]
    return jnp.sum(jnp.exp(-0.5 * jnp.sum(d * d, axis=-1)), axis=1)
''', "kde", "f32[50000,3], f32[100000,3]", None),
    "nbody_energy_grad": ('''
import jax.numpy as jnp


def energy(pos, src):
    d = pos[:, None, :] - src[None, :, :]
    r2 = jnp.sum(d * d, axis=-1) + 1e-3
    return jnp.sum(r2 ** -0.5)
''', "energy", "f32[100000,3], f32[100000,3]", "pos"),
}


def main() -> None:
    import sphinx_jaxhlo

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", default="cpu,gpu:h100,tpu:v5e")
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--out", default="")
    options = parser.parse_args()
    results = []
    for key in options.programs.split(","):
        source, function, args, grad = PROGRAMS[key]
        for target in options.targets.split(","):
            start = time.perf_counter()
            extra = {"grad": grad} if grad else {}
            reports = sphinx_jaxhlo.analyze_source(source, function, args, targets=target, timeout=1200, **extra)
            seconds = time.perf_counter() - start
            for report in reports:
                if grad and not report.function.endswith("_grad"):
                    continue
                figure = (f"compile failed: {report.error.status}" if report.error else
                          f"temp {report.memory.temp_bytes}" if report.memory else "no memory figure")
                row = {"program": key, "function": report.function, "target": target, "unchunked": figure,
                       "suggestion": report.chunk_suggestion, "seconds": round(seconds, 1)}
                results.append(row)
                print(f"== {key} {report.function} on {target} ({figure}, {seconds:.0f} s)")
                print("\n".join(report.chunk_suggestion.split("\n")[:2]))
    if options.out:
        with open(options.out, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=1)


if __name__ == "__main__":
    main()
