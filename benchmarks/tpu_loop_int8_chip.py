"""On a real TPU v5e: two rules written from wild18's misses, against the chip.

The TPU rules say a table the program computes and a loop or a sort then reads is written
(``front._other_tables``), and that an ``int8`` operand the program quantises for a contraction is written
before the dot (:func:`sphinx_jaxhlo.predict.dots.int8_operand_written`).  Both were written from deviceless
compiles (``benchmarks/guide_predictor_loopread_probes.py``, ``benchmarks/guide_predictor_int8_probes.py``).
This runs some of those probes on the chip, each in a process of its own, as ``benchmarks/tpu_where_chip.py``
does: the predictor's answer, the compile's own figures, the largest array its optimized HLO writes outside a
fusion and its place, and what the chip held once the program had run (a table in HBM adds its size; one
on-chip, nothing).

Run on the chip (writes ``$OUT/tpu_loop_int8_chip_tpu-v5e.json``)::

    python benchmarks/tpu_loop_int8_chip.py

The record is committed as ``benchmarks/tpu_loop_int8_chip_tpu-v5e.json``; nothing in the tests needs it.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tpu_where_chip import chip_main  # noqa: E402

#: Loops over computed tables (on-chip and in HBM), a sort, the controls; int8 operands and the f32 control.
LOOPS = ("fori-exp-outer-odd", "fori-gram-256", "scan-xs-rows", "fori-eye", "sort-rows-topk", "fori-argument",
         "fori-inside")
INT8 = ("w-only", "both", "batched", "control-f32-dot")


def programs() -> list[tuple[str, str, str]]:
    """(name, source defining ``f``, argument specs) of the chosen probes."""
    from guide_predictor_int8_probes import programs as int8_probes
    from guide_predictor_loopread_probes import programs as loop_probes

    loops = {p.name: p for p in loop_probes()}
    ints = {p.name: p for p in int8_probes()}
    return ([(name, loops[name].source, loops[name].specs) for name in LOOPS]
            + [(name, ints[name].source, ints[name].specs) for name in INT8])


def main(argv: list[str] | None = None) -> int:
    """``tpu_loop_int8_chip.py N``: program N alone; without N, each in its own process, and the record."""
    return chip_main(sys.argv[1:] if argv is None else argv, __file__, programs(), "tpu_loop_int8_chip_tpu-v5e.json")


if __name__ == "__main__":
    sys.exit(main())
