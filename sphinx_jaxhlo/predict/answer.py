"""The guide's answer for one program and target, as plain data (no jax).

A :class:`Prediction` is what :func:`sphinx_jaxhlo.predict.predict` returns and what a report stores
(:attr:`sphinx_jaxhlo.core.report.Report.prediction`), so that a report read back from a snapshot can
name the guide's rule and compare it with what XLA did without tracing anything.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any

#: Where the guide's rules are explained: each anchor is a section of the predictor page.
PAGE = "guide/predict"

#: The answer when the cost model sits near its break-even point.
NEAR_BREAK_EVEN = "the cost model decides near break-even: compile it"


@dataclass(frozen=True)
class Prediction:
    """Will XLA write the table a reduction reads (the largest one) to memory, by the guide's rules?

    ``stored`` is True or False when a rule decides; ``None`` when no rule decides or a stated limit
    of the rules applies (the H100 cost model near its break-even among them).  ``certain`` is True only
    for an answer whose rule was measured right often enough on this target and verdict, on programs it
    had not seen as on those it was written from (:mod:`sphinx_jaxhlo.predict.calibration`); an answer
    that is not certain still says True or False, with the rule's record (:attr:`right` of
    :attr:`measured` unseen programs) in :attr:`why`.  Whenever ``certain`` is
    False, :attr:`command` is the one-line compile that answers for sure.
    """

    target: str
    stored: bool | None
    certain: bool
    #: The anchor of the rule's section on the predictor page (``jaxhlo-predict-h100-cost``).
    rule: str
    #: The rule's title, as the page's section heading says it.
    title: str = ""
    #: Why, in words, with the figures.
    why: str = ""
    #: The table: dtype, shape and bytes (``float32[4096, 4096], 64 MiB``); empty without a reduction.
    table: str = ""
    table_bytes: int = 0
    #: The table's elements (a loop body's times its trips).
    table_elements: int = 0
    #: TPU: where a stored table lives, ``on-chip`` or ``HBM`` (empty elsewhere or when not stored).
    where: str = ""
    where_why: str = ""
    #: H100 cost model: the estimated microseconds with the producer fused into the reduction, and
    #: written then read back (0 when no cost decided).
    us_fused: float = 0.0
    us_unfused: float = 0.0
    #: H100: XLA copies (pads) a contraction's operand (split-K with an unaligned K).
    operand_copy: bool = False
    #: The compile that answers for sure (empty when certain).
    command: str = ""
    #: The rule's record for this target and verdict on programs it had not seen (the holdouts' first
    #: evaluations): right of measured (0 of 0 when never measured there, or when the answer was not
    #: checked against the record: ``calibrated=False``).
    right: int = 0
    measured: int = 0
    #: True when :attr:`right` of :attr:`measured` is the record on unseen programs; False in an answer a
    #: snapshot stored before that record existed, whose figures count every program measured.
    unseen: bool = False

    @property
    def answered(self) -> bool:
        """True when a rule decided (stored is True or False), certain or not."""
        return self.stored is not None

    @property
    def record(self) -> str:
        """The record of an answer that is not certain, in words (``right 273 of 281 on unseen programs``:
        programs the rule had not seen; ``never measured on unseen programs``); empty when certain or
        not answered."""
        if self.certain or not self.answered:
            return ""
        where = " on unseen programs" if self.unseen else ""
        if not self.measured:
            return f"never measured{where}"
        return f"right {self.right} of {self.measured}{where or ' measured'}"

    @property
    def verdict(self) -> str:
        """``stored``, ``fused`` or ``compile it``."""
        if not self.answered:
            return "compile it"
        return "stored" if self.stored else "fused"

    def agrees_with(self, stored_by_xla: bool) -> bool | None:
        """Whether XLA did what the rule says; ``None`` when the rule does not answer."""
        if not self.answered:
            return None
        return self.stored == stored_by_xla

    def disagreement(self, stored_by_xla: bool) -> str:
        """The sentence a report prints when the rule and XLA disagree (empty otherwise)."""
        if self.agrees_with(stored_by_xla) is not False:
            return ""
        expected = "stored" if self.stored else "fused"
        did = "stored it" if stored_by_xla else "fused it"
        said = f"expects, without certainty ({self.record})," if self.record else "expected"
        return (f"the guide's rule {self.rule} ({self.title}) {said} this table {expected}; XLA {did}: "
                "a case the guide does not cover")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, **kwargs)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Prediction:
        """Read back :meth:`to_dict`'s form (unknown keys are ignored; ``ValueError`` when malformed)."""
        if not isinstance(data, dict) or "target" not in data or "rule" not in data:
            raise ValueError("malformed prediction: needs target and rule")
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def __repr__(self) -> str:
        head = f"Prediction({self.target}: {self.verdict}"
        if self.record:
            head += f" (not certain: {self.record})"
        if self.where:
            head += f" ({self.where})"
        head += f", rule {self.rule}"
        if self.table:
            head += f", table {self.table}"
        text = head + f"; {self.why}"
        if self.command and self.command not in self.why:
            text += f"; run: {self.command}"
        return text + ")"

    __str__ = __repr__
