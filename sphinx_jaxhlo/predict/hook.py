"""The guide's answer for a compile, made where the compile happens and stored with its report.

:func:`attach_prediction` is called by the compile (``compiler/compiling.py``) once the report is
filled: it traces the jitted function again (``jitted.trace``: the jaxpr only) and stores the guide's
:class:`~sphinx_jaxhlo.predict.answer.Prediction` in :attr:`Report.prediction`, so a report read back
later (a snapshot, the cache, JSON) names the rule without importing jax.  It never fails a compile:
a program the rules cannot read gets no prediction.
"""

from __future__ import annotations

from typing import Any

from sphinx_jaxhlo.core.report import Report

from .answer import Prediction


def attach_prediction(report: Report, jitted: Any, args: Any, kwargs: dict[str, Any], source_name: str,
                      flags: dict[str, str] | None = None) -> None:
    """Fill ``report.prediction`` for a one-device compile (a sharded program's rules are per device,
    on shapes the trace does not give: it gets none).  With XLA flags the rules, stated for XLA's
    defaults, do not decide (:func:`with_flags`)."""
    if report.error is not None or report.devices > 1:
        return
    from .front import base_target, predict_jaxpr

    try:
        base_target(report.target)
    except ValueError:
        return  # a target the guide has no rules for (gpu:a100...)
    try:
        closed = jitted.trace(*args, **kwargs).jaxpr
        command = f"python -m sphinx_jaxhlo {source_name}:{report.function} --targets {report.target}"
        report.prediction = with_flags(predict_jaxpr(closed, report.target, command), flags or {})
    except Exception:  # the rules' own failure on an odd program: no prediction, never a failed compile
        report.prediction = None


def with_flags(prediction: Prediction, flags: dict[str, str]) -> Prediction:
    """The prediction of a compile given XLA flags: the rules are stated for XLA's defaults, so with
    flags (``:xla-flags:``, YNN fusions off...) no rule decides: ``certain=False``, the flags said."""
    if not flags:
        return prediction
    import dataclasses

    named = ", ".join(sorted(flags))
    return dataclasses.replace(prediction, stored=None, certain=False, where="", where_why="",
                               why=f"the compile sets XLA flags ({named}); the guide's rules are for XLA's "
                                   f"defaults (without them: {prediction.verdict}, {prediction.why})")
