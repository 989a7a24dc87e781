"""The convolution rules measured on the family programs they were not written from.

Loads every measured family (``guide_predictor_calibrate.measured_families``), keeps the programs whose
jaxpr has a ``conv_general_dilated``, and compares the rules' own answer (``predicted(...,
calibrated=False)``) with the compiled truth per target (answered, right, every miss).  ``--all FILE``
writes every program's answer (all targets) to ``FILE`` so that two runs can be compared: no program
without a convolution should change its answer.  Nothing compiles.

Run::

    python benchmarks/guide_predictor_conv.py [--all answers.json] [--diff before.json]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program  # noqa: E402
from guide_predictor_probing import measure_subset  # noqa: E402


def has_conv(prog: Program) -> bool:
    """The program's jaxpr (sub-jaxprs included) has a ``conv_general_dilated``."""
    import jax
    from guide_predictor import load_function, structs_of

    closed = jax.make_jaxpr(load_function(prog.source, "f"))(*structs_of(prog.specs))
    return "conv_general_dilated" in str(closed)


def main(argv: list[str] | None = None) -> int:
    return measure_subset(argv, has_conv, "a convolution")


if __name__ == "__main__":
    raise SystemExit(main())
