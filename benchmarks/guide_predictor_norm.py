"""The rules for a normalised table reduced again measured on the family programs they were not written from.

Loads every measured family (``guide_predictor_calibrate.measured_families``), keeps the programs for
which the rules, on the H100 or the TPU v5e, answer about a normalised table reduced again (their reason
names "a normalised table": the abstention of :func:`sphinx_jaxhlo.predict.front` before these rules, the
rules of :mod:`sphinx_jaxhlo.predict.norm` after), and compares the rules' own answer (``predicted(...,
calibrated=False)``) with the compiled truth per target (answered, right, every miss).  ``--all FILE``
writes every program's answer (all targets) to ``FILE`` so that two runs can be compared: no other
program should change its answer.  Nothing compiles.

Run::

    python benchmarks/guide_predictor_norm.py [--all answers.json] [--diff before.json]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program, predicted  # noqa: E402
from guide_predictor_probing import measure_subset  # noqa: E402


def normalised(prog: Program) -> bool:
    """The rules' reason, on the H100 or the TPU v5e, names a normalised table reduced again."""
    return any("normalised table" in predicted(prog, t, calibrated=False)["why"] for t in ("gpu:h100", "tpu:v5e"))


def main(argv: list[str] | None = None) -> int:
    return measure_subset(argv, normalised, "a normalised table reduced again")


if __name__ == "__main__":
    raise SystemExit(main())
