"""How certain an answer is: certain only where its rule was measured right often enough, on programs
it had not seen as well as on those it was written from.

Each answer of the rules is keyed by its rule's anchor, its target and its verdict (``stored`` or
``fused``: the sub-case), and, on the TPU, a stored table's ``where`` by its place.  Two records of
every key are in :mod:`sphinx_jaxhlo.predict.calibration_table`, written by
``benchmarks/guide_predictor_calibrate.py``, never by hand: the rules as they are now over every family
with compiled truth (``KEYS``, ``WHERE``: mostly programs the rules were fitted to), and the answers of
the wild families' first evaluations (``FIRST``, ``WHERE_FIRST``: each family scored by the rules as they
were before anyone read its truth).  A record is trusted when it was right on at least :data:`POINT` of
its measured answers and its one-sided :data:`CONFIDENCE` Wilson lower bound on the share right is at
least :data:`FLOOR` (so a perfect record needs 25 programs, one miss 50).  An answer is certain when both
of its key's records are trusted; any other keeps its True or False, is marked not certain, and says
its key's record on unseen programs (``not certain: on programs it had not seen (the first
evaluations) this rule answering fused was right 41 of 45 times; compile it to be sure: ...``).  The
table never withholds an answer: abstentions come from the rules' stated limits
(:mod:`sphinx_jaxhlo.predict.limits`) or from no rule deciding.  No jax here: :func:`certify` works on a
:class:`~sphinx_jaxhlo.predict.answer.Prediction`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .answer import Prediction
from .calibration_table import FAMILIES, FIRST, KEYS, WHERE, WHERE_FIRST

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


def record(target: str, rule: str, verdict: str, first: bool = False) -> Record:
    """The measured record of a rule's answer (``verdict``: ``stored`` or ``fused``) on ``target``: over
    every program with truth, or with ``first`` over the first evaluations (programs not yet seen)."""
    right, measured = (FIRST if first else KEYS).get(f"{target} {rule} {verdict}", (0, 0))
    return Record(right, measured)


def where_record(where: str, first: bool = False) -> Record:
    """The measured record of the TPU's ``where`` (``on-chip`` or ``HBM``) for stored tables (``first``:
    over the first evaluations)."""
    right, measured = (WHERE_FIRST if first else WHERE).get(where, (0, 0))
    return Record(right, measured)


def _doubt(now: Record, unseen: Record, answering: str) -> str:
    """Why a key is not certain, from the record that falls short (empty when both are trusted)."""
    if not unseen.trusted:
        said = "never measured" if not unseen.measured else f"right {unseen.right} of {unseen.measured} times"
        return f"on programs it had not seen (the first evaluations) {answering} was {said}"
    if not now.trusted:
        said = "never measured" if not now.measured else f"right {now.right} of {now.measured} times"
        return f"on the programs measured {answering} was {said}"
    return ""


def certify(p: Prediction, command: str = "") -> Prediction:
    """``p`` with ``certain`` from its rule's measured record: True where the record is trusted,
    otherwise False with the record in words and the compile that answers for sure.

    The answer itself (``stored`` True or False, the rule, the figures) is the rules' and is kept; an
    answer that is not one (a stated limit, no rule) is returned as it is.  A ``where`` whose record
    is not trusted is kept too, its record added to ``where_why``.
    """
    if not p.answered:
        return p
    unseen = record(p.target, p.rule, p.verdict, first=True)
    out = replace(p, right=unseen.right, measured=unseen.measured, unseen=True)
    if doubt := _doubt(record(p.target, p.rule, p.verdict), unseen, f"this rule answering {p.verdict}"):
        run = (p.command or command or
               f"python -m sphinx_jaxhlo FILE.py:FUNCTION --args ... --targets {p.target}")
        out = replace(out, certain=False, command=run, why=f"{p.why}; not certain: {doubt}; compile it to be "
                                                           f"sure: {run}")
    if p.where and (doubt := _doubt(where_record(p.where), where_record(p.where, first=True), p.where)):
        out = replace(out, where_why=f"{p.where_why}; not certain: {doubt}")
    return out


def table_rows() -> list[tuple[str, str, str, Record, Record, bool]]:
    """Every measured key: target, rule, verdict, its record over every program, its record on the first
    evaluations, and whether an answer under it is certain (both trusted)."""
    rows = []
    for key, (right, measured) in sorted(KEYS.items()):
        target, rule, verdict = key.split(" ")
        now, unseen = Record(right, measured), Record(*FIRST.get(key, (0, 0)))
        rows.append((target, rule, verdict, now, unseen, now.trusted and unseen.trusted))
    return rows


__all__ = ["CONFIDENCE", "FAMILIES", "FLOOR", "POINT", "Record", "certify", "record", "table_rows", "where_record",
           "wilson_lower"]
