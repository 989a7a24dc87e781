"""How much an example shows and what counts as a problem: the :class:`Display`
that every writer of the row model (:mod:`sphinx_jaxhlo.render.rows`) is given.
No docutils, no Sphinx, no jax.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from sphinx_jaxhlo.core.report import Report
from sphinx_jaxhlo.core.view_options import (
    DEFAULT_FINDINGS,
    FINDING_TOPICS,
    parse_chart_scale,
    parse_factor,
    parse_findings,
    parse_min_size,
    parse_rows,
)

__all__ = ["Display", "display_for"]


@dataclass(frozen=True)
class Display:
    """How much an example shows and what counts as a problem (the ``jaxhlo_table_rows``,
    ``jaxhlo_problem_min_size``, ``jaxhlo_problem_io_factor`` and ``jaxhlo_chart_scale``
    settings, and the directive's options of the same names)."""

    #: Rows of a detail table shown; ``None``: every row, the small ones included.
    rows: int | None = 8
    problem_min_bytes: int = 2**20
    problem_io_factor: float = 1.0
    #: ``auto``, ``linear`` or ``log``.
    chart_scale: str = "auto"
    #: The kinds of findings reported (:data:`sphinx_jaxhlo.core.view_options.FINDING_TOPICS`): all
    #: of them for the API and the command line; a page's come from its settings (:func:`display_for`).
    findings: tuple[str, ...] = FINDING_TOPICS

    @property
    def peak(self) -> bool:
        """Whether the example says what is live at the peak (``:findings:`` has ``peak``)."""
        return "peak" in self.findings

    @property
    def verdicts(self) -> bool:
        """Whether the example says which reductions are fused (``:findings:`` has
        ``reductions``): without it no table, callout, colour or title of the
        example gives a verdict."""
        return "reductions" in self.findings

    def io_bytes(self, report: Report) -> int:
        """The program's arguments and outputs together, as its memory figures say."""
        return (report.memory.argument_bytes or 0) + (report.memory.output_bytes or 0)

    def threshold(self, report: Report) -> int:
        """Bytes from which stored data is a problem in this program."""
        return max(self.problem_min_bytes, math.ceil(self.problem_io_factor * self.io_bytes(report)))

    def key(self) -> list[Any]:
        """What the rendering depends on, for cache keys."""
        return [self.rows, self.problem_min_bytes, self.problem_io_factor, self.chart_scale, list(self.findings)]


def display_for(config: Any, options: dict[str, Any] | None = None) -> Display:
    """The :class:`Display` of one example: the ``jaxhlo_*`` settings of ``config``
    (already validated), overridden by the example's parsed view options."""
    values: dict[str, Any] = {
        "rows": parse_rows(getattr(config, "jaxhlo_table_rows", 8)),
        "problem-min-size": parse_min_size(getattr(config, "jaxhlo_problem_min_size", "1MiB")),
        "problem-io-factor": parse_factor(getattr(config, "jaxhlo_problem_io_factor", 1.0)),
        "chart-scale": parse_chart_scale(getattr(config, "jaxhlo_chart_scale", "auto")),
        "findings": parse_findings(getattr(config, "jaxhlo_findings", ", ".join(DEFAULT_FINDINGS))),
    }
    values.update(options or {})
    return Display(rows=values["rows"], problem_min_bytes=values["problem-min-size"],
                   problem_io_factor=values["problem-io-factor"], chart_scale=values["chart-scale"],
                   findings=tuple(values["findings"]))
