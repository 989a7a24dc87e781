"""The rules for contraction chains measured on the family programs they were not written from.

Loads every measured family (``guide_predictor_calibrate.measured_families``), keeps the programs for
which the rules, on some target, answer or abstain about a contraction chain (their reason names the only
reduction being a contraction, two contractions feeding one table, or a contraction reading another
contraction's output: the abstentions of :mod:`sphinx_jaxhlo.predict.front` before these rules, the rules
of :mod:`sphinx_jaxhlo.predict.dots` after), and compares the rules' own answer (``predicted(...,
calibrated=False)``) with the compiled truth per target (answered, right, every miss).  ``--all FILE``
writes every program's answer (all targets) to ``FILE`` so that two runs can be compared: no other
program should change its answer.  Nothing compiles.

First measurement (2026-12-07, the rules as written from the probes, before any change for the families):
41 programs with such a reason; 55 (program, target) abstentions before the rules (TPU 41: a contraction
reading a value computed from another's output outside the reductions 18, reading another's output 10, two
contractions feeding one table 5, the only reduction a contraction 8; CPU 8, H100 8, all the latter).  10
answers changed, all from "compile it", none outside these programs; 10 right: CPU 3 (of 8), H100 2 (of 8),
TPU 5 (of 41: two contractions 4 of 5, the only reduction 1 of 8).  Over the 41 programs' every answer:
CPU 29 to 32 answered (28 to 31 right; the one miss, holdout3's ``mlp_pool`` k4, an earlier rule's),
H100 33 to 35 (all right), TPU 0 to 5 (all right).  Nothing was changed after it.

Run::

    python benchmarks/guide_predictor_dots.py [--all answers.json] [--diff before.json]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_calibrate import TARGETS  # noqa: E402
from guide_predictor_family import Program, predicted  # noqa: E402
from guide_predictor_probing import measure_subset  # noqa: E402

#: What the rules' reason says where they answer or abstain about a contraction chain.
REASONS = ("the only reduction is a contraction", "two contractions feed one table",
           "another contraction's table-sized output", "computed from another contraction's output")


def chained(prog: Program) -> bool:
    """The rules' reason, on some target, names a contraction chain."""
    return any(any(r in predicted(prog, t, calibrated=False)["why"] for r in REASONS) for t in TARGETS)


def main(argv: list[str] | None = None) -> int:
    return measure_subset(argv, chained, "a contraction chain")


if __name__ == "__main__":
    raise SystemExit(main())
