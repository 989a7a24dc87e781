"""On a real TPU v5e: the copy of a convolution's input that the TPU rules say is written, against the chip.

The TPU rules say a channels-last ``f32`` convolution of 64 input features over more than 64 x 64 positions
an image writes a ``bf16`` copy of its input, that 128 features or a ``bf16`` image need none, and leave 96
features to the compile (:func:`sphinx_jaxhlo.predict.conv.decide_tpu_conv`).  They were written from
deviceless compiles (``benchmarks/guide_predictor_conv_grid_probes.py``).  This runs some of those probes on
the chip, each in a process of its own, as ``benchmarks/tpu_where_chip.py`` does: the predictor's answer, the
compile's own figures, the largest array its optimized HLO writes outside a fusion and its place, and what
the chip held once the program had run (a copy in HBM adds its size; one on-chip, nothing).

Run on the chip (writes ``$OUT/tpu_conv_copy_chip_tpu-v5e.json``)::

    python benchmarks/tpu_conv_copy_chip.py

The record is committed as ``benchmarks/tpu_conv_copy_chip_tpu-v5e.json``; nothing in the tests needs it.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tpu_where_chip import chip_main  # noqa: E402

#: The probes run: in place and copied at 64 features, 128 features, 96, a bf16 image, a larger batch.
CHOSEN = ("c64-64x64", "c64-128x128", "c64-256x256", "c128-128x128", "c96-128x128", "bf16-c64-128x128-b8",
          "c64-128x128-b16-tanh2")


def programs() -> list[tuple[str, str, str]]:
    """(name, source defining ``f``, argument specs) of the chosen probes."""
    from guide_predictor_conv_grid_probes import programs as probes

    found = {p.name: p for p in probes()}
    return [(name, found[name].source, found[name].specs) for name in CHOSEN]


def main(argv: list[str] | None = None) -> int:
    """``tpu_conv_copy_chip.py N``: program N alone; without N, each in its own process, and the record."""
    return chip_main(sys.argv[1:] if argv is None else argv, __file__, programs(), "tpu_conv_copy_chip_tpu-v5e.json")


if __name__ == "__main__":
    sys.exit(main())
