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

    ``stored`` is True or False when a rule decides; ``None`` (and ``certain`` False) when no rule
    decides or the H100 cost model is near its break-even, and then :attr:`command` is the one-line
    compile that answers.
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
    #: The compile that answers when the rules do not (empty when certain).
    command: str = ""

    @property
    def answered(self) -> bool:
        """True when a rule decided (stored is True or False, certainly)."""
        return self.certain and self.stored is not None

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
        return (f"the guide's rule {self.rule} ({self.title}) expected this table {expected}; XLA {did}: "
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
        if self.where:
            head += f" ({self.where})"
        head += f", rule {self.rule}"
        if self.table:
            head += f", table {self.table}"
        text = head + f"; {self.why}"
        if self.command:
            text += f"; run: {self.command}"
        return text + ")"

    __str__ = __repr__
