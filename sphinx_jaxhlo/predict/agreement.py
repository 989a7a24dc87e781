"""Did XLA do what the guide's rule said?  Read from a report, without jax.

The table is stored when the compiled program writes an intermediate of at least
:data:`STORED_SHARE` of the table's elements to memory (argument copies excluded), or, on the CPU and
the H100, when XLA's temp memory holds that many of the table's elements (a program that keeps many
chunk buffers live at once).  That is the benchmark's definition of the truth
(``benchmarks/guide_predictor_family.py``), applied to any report.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from sphinx_jaxhlo.core.report import Report

from .answer import PAGE, Prediction

#: Share of the table's elements a stored buffer (or the temp memory) must reach.
STORED_SHARE = 0.9
#: The guide's rules are about large tables: below this many bytes (the size under which a stored
#: buffer is never shown as a problem, ``jaxhlo_problem_min_size``'s default) a report neither names
#: a rule nor counts in the agreement; any buffer of a tiny table's size would count as storing it.
MIN_TABLE_BYTES = 2**20

_ITEMSIZE = {"bool": 1, "int8": 1, "uint8": 1, "bfloat16": 2, "float16": 2, "float32": 4, "int32": 4,
             "uint32": 4, "float64": 8, "int64": 8, "complex64": 8, "complex128": 16}


def _elements(shape: str) -> int:
    found = re.search(r"\[([\d,]*)\]", shape)
    if not found or not found.group(1):
        return 1
    return math.prod(int(x) for x in found.group(1).split(","))


def stored_by_xla(report: Report, prediction: Prediction) -> bool:
    """Whether the compiled program of ``report`` wrote the prediction's table to memory."""
    need = STORED_SHARE * prediction.table_elements
    if prediction.table_elements <= 0:
        return False
    if any(_elements(m.shape) >= need for m in report.materialized):
        return True
    dtype = prediction.table.split("[", 1)[0]
    itemsize = min(_ITEMSIZE.get(dtype, 4), 4)
    temp = report.memory.temp_bytes or 0
    return not report.target.startswith("tpu") and temp >= need * itemsize


@dataclass(frozen=True)
class Agreement:
    """The guide's rule beside what XLA did, for one report."""

    prediction: Prediction
    #: What XLA did with the table.
    stored: bool
    #: True, False, or None when the rule does not answer ("compile it"); an answer that is not certain
    #: agrees or not as any other, and its sentence says it was not certain.
    agrees: bool | None

    @property
    def sentence(self) -> str:
        """The report's line about the guide, in words."""
        p = self.prediction
        did = "stored" if self.stored else "fused"
        if self.agrees is None:
            return (f"The guide's rules do not decide this table ({p.table}): {p.why}. "
                    f"XLA {did} it.")
        unsure = f", without certainty ({p.record})," if p.record else ""
        if self.agrees:
            if unsure:
                return f"As the guide's rule expects{unsure} XLA {did} the table ({p.table})."
            return f"As the guide's rule says, XLA {did} the table ({p.table})."
        expected = "stored" if p.stored else "fused"
        if unsure:
            return (f"The guide's rule expects{unsure} this table ({p.table}) {expected}; XLA {did} it: "
                    "a case the guide does not cover.")
        return (f"The guide's rule expected this table ({p.table}) {expected}; XLA {did} it: "
                "a case the guide does not cover.")


def agreement(report: Report) -> Agreement | None:
    """The guide's rule and XLA for ``report``; ``None`` without a prediction or a compile."""
    p = report.prediction
    if p is None or report.error is not None or report.analysis_error or p.table_bytes < MIN_TABLE_BYTES:
        return None
    stored = stored_by_xla(report, p)
    return Agreement(p, stored, p.agrees_with(stored))


__all__ = ["MIN_TABLE_BYTES", "PAGE", "STORED_SHARE", "Agreement", "agreement", "stored_by_xla"]
