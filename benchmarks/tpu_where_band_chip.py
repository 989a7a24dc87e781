"""On a real TPU v5e: the predictor's ``where`` between 32 and 104 MiB, against the chip.

Between 32 and 104 MiB the predictor says where a stored table lives from the rest of the program
(:func:`sphinx_jaxhlo.predict.tpu.where_stored`): a table alone stays on-chip, one beside an output as
large computed from it goes to HBM, and so does one over 104 MiB.  Those rules were written from deviceless
compiles (``benchmarks/guide_predictor_where_probes.py``).  This runs a few of those probes on the chip, each
in a process of its own, as ``benchmarks/tpu_where_chip.py`` does: the predictor's ``where``, the compile's
own figures and the place of its largest stored buffer read from the optimized HLO, and what the chip held
once the program had run.  A table on-chip adds nothing beyond the arguments, the output and the code; one
in HBM adds its size.

Run on the chip (writes ``$OUT/tpu_where_band_chip_tpu-v5e.json``)::

    python benchmarks/tpu_where_band_chip.py

The record is committed as ``benchmarks/tpu_where_band_chip_tpu-v5e.json``; nothing in the tests needs it.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tpu_where_chip import chip_main  # noqa: E402

#: The probes run: each class of the band's rule, every argument ``f32``.
CHOSEN = ("dot-lse-64", "dot-lse-96", "dot-lse-104", "dot-lse-112", "dot-lse-tanhout-48", "dot-lse-tanhout-64",
          "dot-lse-selfout-64", "arg-cos-lse-96")


def programs() -> list[tuple[str, str, str]]:
    """(name, source defining ``f``, argument specs) of the chosen probes."""
    from guide_predictor_where_probes import programs as probes

    found = {p.name: p for p in probes()}
    return [(name, found[name].source, found[name].specs) for name in CHOSEN]


def main(argv: list[str] | None = None) -> int:
    """``tpu_where_band_chip.py N``: program N alone; without N, each in its own process, and the record."""
    return chip_main(sys.argv[1:] if argv is None else argv, __file__, programs(), "tpu_where_band_chip_tpu-v5e.json")


if __name__ == "__main__":
    sys.exit(main())
