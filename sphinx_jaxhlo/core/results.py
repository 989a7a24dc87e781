"""One (function, target) of an example on its way to the page: the
pipeline's result, and what every renderer reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from sphinx_jaxhlo.core.expectations import Check
from sphinx_jaxhlo.core.memory import Measured
from sphinx_jaxhlo.core.report import Report, TargetFailure


@dataclass
class Result:
    """One (function, target) of an example, compiled or not."""

    function: str
    target: str
    target_title: str
    report: Report | None = None
    #: Why there is no report.
    failure: TargetFailure | None = None
    seconds: float = 0.0
    outcomes: list[Check] = field(default_factory=list)
    #: The compiler for this target is not installed.
    missing: str | None = None
    #: The cache key of the report (:meth:`CompileRequest.cache_key`), when there is one.
    report_key: str = ""
    #: What a real device held and how long it ran, when a hardware record measured this
    #: very program (``jaxhlo_hardware_dir``).
    measured: Measured | None = None


def result_of_failure(failure: TargetFailure, title: str = "") -> Result:
    """A :class:`Result` for a target that produced no report."""
    return Result(function=failure.function, target=failure.target, target_title=title or failure.target,
                  failure=failure)
