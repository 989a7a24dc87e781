"""Regenerate the stored optimized HLO in ``tests/data/hlo/``.

The parser and analysis tests read real compiler output for the seed
computation (n = 100000 positions, d = 50000 reflections, f32) written seven
ways, plus two small modules for variety (a conditional; sort, gather and
scatter) and two reductions of a GEMM's output whose reduced length is not a
round number (a log-sum-exp over a 30522-word vocabulary, a sum over 10007
rows: the H100 compile pads the stored GEMM output before reducing it), on
each of the targets ``cpu``, ``gpu:h100`` and ``tpu:v5e``.

For each (target, variant) it writes, with ``<stem>`` =
``<target with ':' replaced by '_'>__<variant>``:

- ``<stem>.txt``: ``compiled.as_text()``, or ``<stem>.error.txt`` with the
  error message when the compile fails (``broadcast`` on ``tpu:v5e`` runs out
  of HBM at compile time);
- ``<stem>.json``: the target, the source, the argument shapes, the package
  versions, ``memory_analysis()`` and ``cost_analysis()`` figures, the error.

Run it with the GPU and TPU compilers installed (``python -m sphinx_jaxhlo compilers install``)::

    python tests/data/regenerate_hlo.py                   # everything
    python tests/data/regenerate_hlo.py --targets gpu:h100 --variants with_dot

The example sources are compiled as ``example.py`` so the HLO metadata names
that file and the example's own line numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from sphinx_jaxhlo.compiler import lowering  # noqa: E402  (needs the path above; imports no jax)
from sphinx_jaxhlo.core import compilers as plugins  # noqa: E402
from sphinx_jaxhlo.core import targets  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE / "hlo"
DEFAULT_TARGETS = ("cpu", "gpu:h100", "tpu:v5e")

HEADER = """\
import jax
import jax.numpy as jnp
from jax import lax

"""

SEED_ARGS = (("pos", (100000, 3), "float32"), ("hkl", (50000, 3), "float32"))


@dataclass(frozen=True)
class Variant:
    """One example: its source (defining ``f``) and the shapes of its arguments."""

    name: str
    body: str
    args: tuple[tuple[str, tuple[int, ...], str], ...] = SEED_ARGS

    @property
    def source(self) -> str:
        return HEADER + self.body


VARIANTS = {
    v.name: v
    for v in (
        Variant(
            "explicit",
            """\
def f(pos, hkl):
    def row(p):
        return jnp.cos(hkl[:, 0] * p[0] + hkl[:, 1] * p[1] + hkl[:, 2] * p[2])
    return jnp.sum(jax.vmap(row)(pos), axis=0)
""",
        ),
        Variant(
            "with_dot",
            """\
def f(pos, hkl):
    return jnp.sum(jax.vmap(lambda p: jnp.cos(jnp.dot(hkl, p)))(pos), axis=0)
""",
        ),
        Variant(
            "with_outer",
            """\
def f(pos, hkl):
    phase = jnp.outer(pos[:, 0], hkl[:, 0])
    return jnp.sum(jnp.cos(phase), axis=0)
""",
        ),
        Variant(
            "matmul",
            """\
def f(pos, hkl):
    return jnp.sum(jnp.cos(pos @ hkl.T), axis=0)
""",
        ),
        Variant(
            "einsum",
            """\
def f(pos, hkl):
    phase = jnp.einsum("nk,dk->nd", pos, hkl)
    return jnp.sum(jnp.cos(phase), axis=0)
""",
        ),
        Variant(
            "scan_chunks",
            """\
def f(pos, hkl):
    chunks = pos.reshape(-1, 1000, 3)

    def step(total, chunk):
        return total + jnp.sum(jnp.cos(chunk @ hkl.T), axis=0), None

    total, _ = lax.scan(step, jnp.zeros(hkl.shape[0], pos.dtype), chunks)
    return total
""",
        ),
        Variant(
            "broadcast",
            """\
def f(pos, hkl):
    phase = (pos[:, None, :] * hkl[None]).sum(-1)
    return jnp.sum(jnp.cos(phase), axis=0)
""",
        ),
        Variant(
            "cond",
            """\
def f(x, flag):
    return lax.cond(
        flag,
        lambda x: jnp.sum(jnp.sin(x), axis=0),
        lambda x: jnp.sum(jnp.cos(x) ** 2, axis=0),
        x,
    )
""",
            (("x", (1000, 3), "float32"), ("flag", (), "bool")),
        ),
        Variant(
            "sort_gather",
            """\
def f(values, idx):
    ordered = jnp.sort(values[:, 0])
    picked = values[idx]
    counts = jnp.zeros(64, values.dtype).at[idx % 64].add(picked[:, 1])
    return ordered, picked, counts
""",
            (("values", (4096, 3), "float32"), ("idx", (256,), "int32")),
        ),
        Variant(
            "logsumexp_vocab",
            """\
def f(h, w):
    return jax.nn.logsumexp(h @ w, axis=-1)
""",
            (("h", (1024, 128), "float32"), ("w", (128, 30522), "float32")),
        ),
        Variant(
            "odd_rows",
            """\
def f(a, b):
    return jnp.sum(a @ b, axis=0)
""",
            (("a", (10007, 64), "float32"), ("b", (64, 4096), "float32")),
        ),
    )
}


def stem(target: str, variant: str) -> str:
    return f"{target.replace(':', '_')}__{variant}"


def load_function(source: str) -> Callable[..., Any]:
    namespace: dict[str, Any] = {"__name__": "example"}
    exec(compile(source, "example.py", "exec"), namespace)
    return namespace["f"]  # type: ignore[no-any-return]


def memory_figures(compiled: Any) -> dict[str, int | None]:
    stats = compiled.memory_analysis()
    fields = {
        "argument_bytes": "argument_size_in_bytes",
        "output_bytes": "output_size_in_bytes",
        "alias_bytes": "alias_size_in_bytes",
        "temp_bytes": "temp_size_in_bytes",
        "generated_code_bytes": "generated_code_size_in_bytes",
        "peak_bytes": "peak_memory_in_bytes",
    }
    return {ours: getattr(stats, theirs, None) for ours, theirs in fields.items()}


def cost_figures(compiled: Any) -> dict[str, float | None]:
    cost = compiled.cost_analysis()
    if isinstance(cost, list):  # older jaxlib: one dict per module
        cost = cost[0] if cost else {}
    cost = cost or {}
    return {
        "flops": cost.get("flops"),
        "transcendentals": cost.get("transcendentals"),
        "bytes_accessed": cost.get("bytes accessed"),
    }


def error_figures(exc: BaseException) -> dict[str, Any]:
    message = str(exc)
    match = re.match(r"([A-Z_]+): ", message)
    return {"status": match.group(1) if match else type(exc).__name__, "message": message}


def regenerate(target_name: str, variant: Variant) -> str:
    import jax
    import jax.numpy as jnp

    target = targets.get_target(target_name)
    name = stem(target.name, variant.name)
    for suffix in (".txt", ".error.txt", ".json"):
        (OUT / f"{name}{suffix}").unlink(missing_ok=True)

    make_spec: Any = jax.ShapeDtypeStruct  # untyped constructor
    specs = [make_spec(shape, jnp.dtype(dtype)) for _, shape, dtype in variant.args]
    jitted = jax.jit(load_function(variant.source))
    record: dict[str, Any] = {
        "target": target.name,
        "target_description": target.description,
        "variant": variant.name,
        "function": "f",
        "args": [{"name": n, "shape": list(s), "dtype": d} for n, s, d in variant.args],
        "source": variant.source,
        "versions": targets.package_versions(),
        "memory": None,
        "cost": None,
        "error": None,
    }
    start = time.perf_counter()
    try:
        _, compiled = lowering.compile_for(target, jitted, specs, {}, {})
    except Exception as exc:  # a failed compile is a result to keep
        record["error"] = error_figures(exc)
        (OUT / f"{name}.error.txt").write_text(str(exc) + "\n", encoding="utf-8")
        outcome = f"error {record['error']['status']}"
    else:
        record["memory"] = memory_figures(compiled)
        record["cost"] = cost_figures(compiled)
        (OUT / f"{name}.txt").write_text(compiled.as_text(), encoding="utf-8")
        outcome = f"temp {record['memory']['temp_bytes']:,} B"
    seconds = time.perf_counter() - start
    (OUT / f"{name}.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return f"{name:<32} {seconds:7.2f} s  {outcome}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default=",".join(DEFAULT_TARGETS), help="comma-separated target names")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated variant names")
    options = parser.parse_args(argv)

    chosen_targets = [targets.get_target(t).name for t in options.targets.split(",") if t.strip()]
    chosen_variants = [VARIANTS[v.strip()] for v in options.variants.split(",") if v.strip()]
    missing = [targets.TARGETS[t].missing_message() for t in chosen_targets if not targets.TARGETS[t].available()]
    if missing:
        print("\n".join(missing), file=sys.stderr)
        return 1

    lowering.prepare_environment(os.environ)
    # PYTHONPATH is read at start-up only: put the compilers' private folder on this process's path too.
    sys.path[:0] = [str(folder) for folder in plugins.worker_path()]
    from jax.extend.source_info_util import register_exclusion

    register_exclusion(str(Path(__file__).resolve()))  # only example.py in the metadata
    OUT.mkdir(exist_ok=True)
    for target_name in chosen_targets:
        for variant in chosen_variants:
            print(regenerate(target_name, variant), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
