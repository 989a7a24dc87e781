"""A saved optimized HLO module analysed without the compiler: ``analyze_hlo``
(also ``python -m sphinx_jaxhlo --hlo-file FILE``).  The fusions, materialized buffers,
reductions and collectives come from the text alone, filled by the same code as a
compile's (:func:`~sphinx_jaxhlo.hlo.report_analysis.fill_analysis`); memory and cost
figures, which need the compiler, are not reported."""

from __future__ import annotations

import re

from sphinx_jaxhlo.core import targets as targets_mod
from sphinx_jaxhlo.core.report import Report

__all__ = ["analyze_hlo"]


def analyze_hlo(text: str, source_file: str | None = None, *, target: str = "hlo") -> Report:
    """Analyze a saved optimized HLO module (``compiled.as_text()``, or XLA's
    ``*after_optimizations.txt`` from ``--xla_dump_to``).

    The fusions, materialized buffers and reductions come from the text
    alone; memory and cost figures need the compiler, so they are ``None``
    ("not reported").  Print or check it through ``Reports([report])``.

    :param text: the module's text.
    :param source_file: the example's file as the HLO metadata names it (full
        path or base name): only its frames give source lines; ``None``: the
        innermost frame of any file.
    :param target: a label for the report's target (a known target name
        lets per-target expectations name it).
    :raises ValueError: when the text is not an HLO module.
    """
    from sphinx_jaxhlo.hlo.report_analysis import fill_analysis

    match = re.search(r"^\s*HloModule\s+([^\s,]+)(.*)$", text, re.MULTILINE)
    if match is None:
        raise ValueError("not an HLO module: no 'HloModule' line")
    if "is_scheduled=true" not in match.group(2) and not re.search(r"\bfusion\(", text):
        raise ValueError("this module looks unoptimized (it is not scheduled and holds no fusion): its "
                         "instructions are not kernels. Give the optimized module: compiled.as_text(), or "
                         "XLA's *after_optimizations.txt from --xla_dump_to (not *before_optimizations.txt)")
    module = match.group(1)
    known = targets_mod.TARGETS.get(target.strip().lower())
    partitions = re.search(r"\bnum_partitions=(\d+)", match.group(2))
    report = Report(function=module.removeprefix("jit_") or module, target=target.strip().lower() or "hlo",
                    target_description=known.description if known else "a saved HLO module", hlo=text,
                    devices=int(partitions.group(1)) if partitions else 1,
                    buffer_assignment_note="a saved module holds no buffer assignment (XLA writes it beside the "
                                           "module, *-buffer-assignment.txt and *-live-range.txt)")
    fill_analysis(report, source_file)  # as for a compile: the one filler
    if report.analysis_error is not None:
        raise ValueError(report.analysis_error)
    return report
