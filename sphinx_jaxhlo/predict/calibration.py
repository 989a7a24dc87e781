"""Calibrated answering: a rule answers only where it was measured right often enough.

Each answer of the rules is keyed by its rule's anchor, its target and its verdict (``stored`` or
``fused``: the sub-case), and, on the TPU, a stored table's ``where`` by its place.  The measured
counts of every key over every family the rules were checked on (the benchmark families, the guide's
examples, the holdouts) are in :mod:`sphinx_jaxhlo.predict.calibration_table`, written by
``benchmarks/guide_predictor_calibrate.py``, never by hand.  A key answers when it was right on at
least :data:`POINT` of its measured answers and its one-sided :data:`CONFIDENCE` Wilson lower bound on
the share right is at least :data:`FLOOR` (so a perfect record needs 25 programs, one miss 50);
otherwise the answer becomes "compile it" with the key's record (``this rule is right 41 of 45 times on the
programs measured: compile it``).  No jax here: the gate works on a
:class:`~sphinx_jaxhlo.predict.answer.Prediction`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .answer import Prediction
from .calibration_table import FAMILIES, KEYS, WHERE

#: The one-sided confidence of the lower bound (z = 1.645).
CONFIDENCE = 0.95
_Z = 1.6448536269514722
#: The share right a key must have measured to answer.
POINT = 0.98
#: The share right whose lower bound a key must reach to answer: 10 right of 10 is 0.79, too few.
FLOOR = 0.90


def wilson_lower(right: int, measured: int, z: float = _Z) -> float:
    """The Wilson score interval's lower end for ``right`` of ``measured`` (0 when nothing was measured)."""
    if measured <= 0:
        return 0.0
    p = right / measured
    centre = p + z * z / (2 * measured)
    spread = z * math.sqrt(p * (1 - p) / measured + z * z / (4 * measured * measured))
    return (centre - spread) / (1 + z * z / measured)


@dataclass(frozen=True)
class Record:
    """How often one key was right on the programs measured."""

    right: int
    measured: int

    @property
    def lower(self) -> float:
        return wilson_lower(self.right, self.measured)

    @property
    def trusted(self) -> bool:
        return self.measured > 0 and self.right >= POINT * self.measured and self.lower >= FLOOR


def record(target: str, rule: str, verdict: str) -> Record:
    """The measured record of a rule's answer (``verdict``: ``stored`` or ``fused``) on ``target``."""
    right, measured = KEYS.get(f"{target} {rule} {verdict}", (0, 0))
    return Record(right, measured)


def where_record(where: str) -> Record:
    """The measured record of the TPU's ``where`` (``on-chip`` or ``HBM``) for stored tables."""
    right, measured = WHERE.get(where, (0, 0))
    return Record(right, measured)


def gate(p: Prediction, command: str = "") -> Prediction:
    """``p`` if its rule's measured record is trusted; otherwise "compile it", with the record.

    A ``where`` whose record is not trusted is dropped (the verdict stays) with its record in ``where_why``.
    """
    if not p.answered:
        return p
    rec = record(p.target, p.rule, p.verdict)
    if not rec.trusted:
        said = "never measured" if not rec.measured else f"right {rec.right} of {rec.measured} times"
        return replace(p, stored=None, certain=False, where="", where_why="",
                       why=f"this rule is {said} on the programs measured: compile it (it would say "
                           f"{p.verdict}: {p.why})",
                       command=p.command or command or
                       f"python -m sphinx_jaxhlo FILE.py:FUNCTION --args ... --targets {p.target}")
    if p.where:
        wrec = where_record(p.where)
        if not wrec.trusted:
            said = "never measured" if not wrec.measured else f"right {wrec.right} of {wrec.measured} times"
            return replace(p, where="", where_why=f"where is {said} for {p.where} on the programs measured: "
                                                  "compile it")
    return p


def table_rows() -> list[tuple[str, str, str, int, int, float, bool]]:
    """Every measured key: target, rule, verdict, right, measured, lower bound, trusted."""
    rows = []
    for key, (right, measured) in sorted(KEYS.items()):
        target, rule, verdict = key.split(" ")
        rec = Record(right, measured)
        rows.append((target, rule, verdict, right, measured, round(rec.lower, 4), rec.trusted))
    return rows


__all__ = ["CONFIDENCE", "FAMILIES", "FLOOR", "POINT", "Record", "gate", "record", "table_rows", "where_record",
           "wilson_lower"]
