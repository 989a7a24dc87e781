"""On a real TPU v5e: does a table the compile keeps on-chip (``S(1)``) cost no HBM when the program runs?

The predictor's ``where`` and the guide's account of the TPU's memory rest on reading a stored table's
place from its layout in the deviceless compile.  This runs a few wild9 programs on the chip: for each,
the compile's own figures (temp, and the place of the largest stored buffer read from the optimized
HLO) and what the chip held once it had run (``bytes_in_use`` and ``bytes_reserved`` grown by, as
``tools/hardware_check.py`` measures).  A table on-chip adds nothing to that beyond the arguments and
the output; one in HBM adds its size (it is the compile's temp).

Run on the chip (writes ``$OUT/tpu_where_chip_tpu-v5e.json``)::

    python benchmarks/tpu_where_chip.py

The record is committed as ``benchmarks/tpu_where_chip_tpu-v5e.json``; nothing in the tests needs it.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

#: The wild9 programs whose stored table the compile put on-chip at 80 MB (in a two-output fusion) and
#: at 67 MB, as the family holds them (``guide_predictor_holdout10.py``), and one over 128 MiB (HBM).
WILD9 = ("bayes_logreg_posterior_predictive", "tsne_kl_grad")
VARIANCE = ("variance_of_product_8192", "\ndef f(a, b):\n    return jnp.var(a @ b, axis=1)\n",
            "f32[8192,256], f32[256,8192]")


def programs() -> list[tuple[str, str, list[tuple[int, ...]]]]:
    """(name, source defining ``f``, argument shapes), every argument ``f32``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from guide_predictor_holdout10 import PROGRAMS as FAMILY

    chosen = [(name, body, specs) for name, _, body, specs in FAMILY if name in WILD9] + [VARIANCE]
    return [(name, body, [tuple(int(d) for d in dims.split(",")) for dims in re.findall(r"f32\[([\d,]+)\]", specs)])
            for name, body, specs in chosen]


#: Bytes an element of each HLO element type the probes write takes.
ITEM_BYTES = {"f32": 4, "s32": 4, "u32": 4, "bf16": 2, "f16": 2, "s8": 1, "u8": 1, "pred": 1, "c64": 8}


def largest_stored(hlo: str) -> tuple[int, bool]:
    """The bytes of the largest array an instruction writes outside fused computations (parameters
    apart), and whether its layout says ``S(1)`` (a tuple's elements each have theirs)."""
    fused = set(re.findall(r"calls=(%[\w.\-]+)", hlo))
    best = (0, False)
    for block in re.split(r"\n(?=\S)", hlo):
        head = re.match(r"(?:ENTRY\s+)?(%[\w.\-]+)", block)
        if head is None or head.group(1) in fused:
            continue
        for line in block.splitlines()[1:]:
            typed = re.search(r"=\s*(\([^=]*?\)|\S+)\s+[\w\-]+\(", line)
            if typed is None or "parameter(" in line:
                continue
            for kind, dims, layout in re.findall(r"\b(f32|bf16|f16|s32|u32|s8|u8|pred|c64)\[([\d,]*)\]\{([^}]*)\}",
                                                 typed.group(1)):
                n = ITEM_BYTES[kind]
                for d in filter(None, dims.split(",")):
                    n *= int(d)
                if n > best[0]:
                    best = (n, "S(1)" in layout)
    return best


def measure(name: str, body: str, shapes: list[tuple[int, ...]], dtypes: list[str] | None = None) -> dict:
    """Compile and run one program on the chip (its arguments ``f32``, or of ``dtypes``); what it held is
    what ``bytes_in_use`` and ``bytes_reserved`` grew by from before its arguments existed to after its run
    (outputs held), as ``tools/hardware_check.py`` measures."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    dev = jax.devices()[0]

    def held() -> int:
        stats = dev.memory_stats() or {}
        return int(stats.get("bytes_in_use", 0)) + int(stats.get("bytes_reserved", 0))

    scope: dict = {"jax": jax, "jnp": jnp}
    exec(body, scope)  # the program text above, nothing else
    before = held()
    rng = np.random.default_rng(0)
    kinds = dtypes or ["float32"] * len(shapes)
    args = [jax.device_put(jnp.asarray(rng.standard_normal(s).astype(np.float32) * 0.1, dtype=kind))
            for s, kind in zip(shapes, kinds, strict=True)]
    jax.block_until_ready(args)
    compiled = jax.jit(scope["f"]).lower(*args).compile()
    mem = compiled.memory_analysis()
    assert mem is not None
    size, on_chip = largest_stored(compiled.as_text() or "")
    out = compiled(*args)
    jax.block_until_ready(out)
    return {"name": name, "device": str(dev.device_kind), "jax": jax.__version__,
            "argument_bytes": int(mem.argument_size_in_bytes), "output_bytes": int(mem.output_size_in_bytes),
            "temp_bytes": int(mem.temp_size_in_bytes), "code_bytes": int(mem.generated_code_size_in_bytes),
            "largest_stored_bytes": size, "largest_stored_on_chip": on_chip, "held_bytes": held() - before}


def main(argv: list[str] | None = None) -> int:
    """``tpu_where_chip.py N``: measure program N (one program a process, as the device's counters only
    rise within one); without N, run each in its own process and write the record."""
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        name, body, shapes = programs()[int(argv[0])]
        print("ROW " + json.dumps(measure(name, body, shapes)), flush=True)
        return 0
    record(__file__, [name for name, _, _ in programs()], "tpu_where_chip_tpu-v5e.json")
    return 0


#: Spec element types, as ``measure`` makes the arguments.
DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "i8": "int8", "u8": "uint8", "i32": "int32"}


def arguments(specs: str) -> tuple[list[tuple[int, ...]], list[str]]:
    """The shapes and element types of argument specs such as ``"f32[8,64], bf16[3,3]"``."""
    found = re.findall(r"(\w+)\[([\d,]+)\]", specs)
    return [tuple(int(d) for d in dims.split(",")) for _, dims in found], [DTYPES[kind] for kind, _ in found]


def tpu_answer(source: str, specs: str) -> dict[str, object]:
    """The predictor's answer for the TPU v5e (no compile) of a probe's text defining ``f``."""
    import sphinx_jaxhlo

    scope: dict = {}
    exec(source, scope)  # the probe's text, nothing else
    answer = sphinx_jaxhlo.predict(scope["f"], *[s.strip() for s in specs.split(", ")], target="tpu:v5e")
    return {"predicted_stored": answer.stored, "predicted_table": answer.table, "predicted_where": answer.where,
            "where_why": answer.where_why, "rule": answer.rule}


def chip_main(argv: list[str], script: str, chosen: list[tuple[str, str, str]], file_name: str,
              predicted: Any = tpu_answer) -> int:
    """A chip script's command line over ``chosen`` probes ((name, source defining ``f``, specs)): ``N``
    measures program N and adds ``predicted(source, specs)``, the predictor's answer, to its row; without
    ``N``, each program in its own process (the device's counters only rise within one), and the record."""
    if argv:
        name, source, specs = chosen[int(argv[0])]
        shapes, dtypes = arguments(specs)
        print("ROW " + json.dumps({**measure(name, source, shapes, dtypes), **predicted(source, specs)}), flush=True)
        return 0
    record(script, [name for name, _, _ in chosen], file_name)
    return 0


def record(script: str, names: list[str], file_name: str, extra: list[dict] | None = None) -> list[dict]:
    """Run ``script N`` for each program N in a process of its own (its ``ROW`` line: the
    measured row), add ``extra[N]`` to each row, and write the rows to ``$OUT/file_name``."""
    import subprocess

    rows = []
    for i, name in enumerate(names):
        proc = subprocess.run([sys.executable, script, str(i)], capture_output=True, text=True, check=False)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("ROW ")), None)
        row = json.loads(line[4:]) if line else {"name": name, "error": proc.stderr[-500:]}
        rows.append({**row, **(extra[i] if extra else {})})
        print(json.dumps(rows[-1]), flush=True)
    out_dir = Path(os.environ.get("OUT", "."))
    (out_dir / file_name).write_text(json.dumps({"rows": rows}, indent=1) + "\n", encoding="utf-8")
    return rows


if __name__ == "__main__":
    sys.exit(main())
