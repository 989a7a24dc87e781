"""On a real TPU v5e: does a computed table read through two of its windows take its size in HBM?

The TPU rule of ``jaxhlo-predict-tpu-readers`` for windows (``w[..., 0] * w[..., 1]``, halves,
strided views of a computed table: written; one window, or windows of the arguments: fused) was
measured on deviceless compiles.  This runs six forms on the chip (a sliced softmax, whose sum reads the whole table
beside one window, and the same softmax unsliced among them) at sizes where a stored table is
larger than 128 MiB (in HBM, never on-chip), with the compile's own figures and what the chip held
once each had run (``bytes_in_use`` and ``bytes_reserved`` grown by, as
:mod:`tpu_where_chip` and ``tools/hardware_check.py`` measure): a written table adds its size beyond
the arguments and the output, a fused one nothing.

Run on the chip (writes ``$OUT/tpu_slices_chip_tpu-v5e.json``)::

    python benchmarks/tpu_slices_chip.py

The record is committed as ``benchmarks/tpu_slices_chip_tpu-v5e.json``; nothing in the tests needs it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tpu_where_chip import measure, record

PAIR = "\n    w = jnp.maximum(a[:, None, :], b[None, :, :]) - 1.0\n"
#: (name, source defining ``f``, argument shapes (``f32``), what the rule answers: stored).
PROGRAMS: list[tuple[str, str, list[tuple[int, ...]], bool]] = [
    ("two_windows", "\ndef f(a, b):" + PAIR + "    return jnp.sum(w[..., 0] * w[..., 1], axis=1)\n",
     [(8192, 2), (8192, 2)], True),
    ("one_window", "\ndef f(a, b):" + PAIR + "    return jnp.sum(w[..., 0], axis=1)\n",
     [(8192, 2), (8192, 2)], False),
    ("windows_of_the_arguments",
     "\ndef f(a, b):\n    return jnp.sum((a[:, None, 0] - b[None, :, 0]) * (a[:, None, 1] - b[None, :, 1]), axis=1)\n",
     [(8192, 2), (8192, 2)], False),
    ("pairwise_giou_cost", """
def f(a, b):
    wh = jnp.clip(jnp.minimum(a[:, None, 2:], b[None, :, 2:]) - jnp.maximum(a[:, None, :2], b[None, :, :2]), 0.0)
    inter = wh[..., 0] * wh[..., 1]
    hull_wh = jnp.maximum(a[:, None, 2:], b[None, :, 2:]) - jnp.minimum(a[:, None, :2], b[None, :, :2])
    return jnp.min(1.0 - inter / (hull_wh[..., 0] * hull_wh[..., 1]), axis=1)
""", [(4096, 4), (8192, 4)], True),
    # the whole table is a window too: a softmax's sum reads its exponentials whole, the slice one window
    ("sliced_softmax", "\ndef f(x):\n    p = jax.nn.softmax(x, axis=-1)[:, :-1]\n    return jnp.sum(p * p, axis=-1)\n",
     [(16, 6, 1 << 20)], True),
    ("softmax_unsliced", "\ndef f(x):\n    p = jax.nn.softmax(x, axis=-1)\n    return jnp.sum(p * p, axis=-1)\n",
     [(16, 6, 1 << 20)], False),
]


def main(argv: list[str] | None = None) -> int:
    """``tpu_slices_chip.py N``: measure program N in this process (the device's counters only rise
    within one); without N, each in its own process, then the record."""
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        name, body, shapes, _ = PROGRAMS[int(argv[0])]
        print("ROW " + json.dumps(measure(name, body, shapes)), flush=True)
        return 0
    record(__file__, [name for name, _, _, _ in PROGRAMS], "tpu_slices_chip_tpu-v5e.json",
           [{"rule_says_stored": stored} for _, _, _, stored in PROGRAMS])
    return 0

if __name__ == "__main__":
    sys.exit(main())
