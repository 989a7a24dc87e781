"""How certain an answer is: certain only where its rule was measured right often enough.

Each answer of the rules is keyed by its rule's anchor, its target and its verdict (``stored`` or
``fused``: the sub-case), and, on the TPU, a stored table's ``where`` by its place.  The measured
counts of every key over every family the rules were checked on (the benchmark families, the guide's
examples, the holdouts) are in :mod:`sphinx_jaxhlo.predict.calibration_table`, written by
``benchmarks/guide_predictor_calibrate.py``, never by hand.  A key is certain when it was right on at
least :data:`POINT` of its measured answers and its one-sided :data:`CONFIDENCE` Wilson lower bound on
the share right is at least :data:`FLOOR` (so a perfect record needs 25 programs, one miss 50).  Such
an answer is certain; any other keeps its True or False, is marked not certain, and says its key's
record (``not certain: this rule was right 41 of 45 times on the programs measured; compile it to be
sure: ...``).  The table never withholds an answer: abstentions come from the rules' stated limits
(:mod:`sphinx_jaxhlo.predict.limits`) or from no rule deciding.  No jax here: :func:`certify` works on a
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
#: The share right a key must have measured to be certain.
POINT = 0.98
#: The share right whose lower bound a key must reach to be certain: 10 right of 10 is 0.79, too few.
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


def certify(p: Prediction, command: str = "") -> Prediction:
    """``p`` with ``certain`` from its rule's measured record: True where the record is trusted,
    otherwise False with the record in words and the compile that answers for sure.

    The answer itself (``stored`` True or False, the rule, the figures) is the rules' and is kept; an
    answer that is not one (a stated limit, no rule) is returned as it is.  A ``where`` whose record
    is not trusted is kept too, its record added to ``where_why``.
    """
    if not p.answered:
        return p
    rec = record(p.target, p.rule, p.verdict)
    out = replace(p, right=rec.right, measured=rec.measured)
    if not rec.trusted:
        said = "never measured" if not rec.measured else f"right {rec.right} of {rec.measured} times"
        run = (p.command or command or
               f"python -m sphinx_jaxhlo FILE.py:FUNCTION --args ... --targets {p.target}")
        out = replace(out, certain=False, command=run,
                      why=f"{p.why}; not certain: this rule was {said} on the programs measured "
                          f"(answering {p.verdict}); compile it to be sure: {run}")
    if p.where:
        wrec = where_record(p.where)
        if not wrec.trusted:
            said = "never measured" if not wrec.measured else f"right {wrec.right} of {wrec.measured} times"
            out = replace(out, where_why=f"{p.where_why}; not certain: {p.where} was {said} on the "
                                         "programs measured")
    return out


def table_rows() -> list[tuple[str, str, str, int, int, float, bool]]:
    """Every measured key: target, rule, verdict, right, measured, lower bound, trusted."""
    rows = []
    for key, (right, measured) in sorted(KEYS.items()):
        target, rule, verdict = key.split(" ")
        rec = Record(right, measured)
        rows.append((target, rule, verdict, right, measured, round(rec.lower, 4), rec.trusted))
    return rows


__all__ = ["CONFIDENCE", "FAMILIES", "FLOOR", "POINT", "Record", "certify", "record", "table_rows", "where_record",
           "wilson_lower"]
