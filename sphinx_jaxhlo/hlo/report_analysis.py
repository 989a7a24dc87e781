"""A report's analysis, filled from what XLA gave: the one filler for a fresh compile, a
snapshot read again and a saved module.

- :func:`read_dump_folder` reads what a compile left in its private dump folder: XLA's
  records of its fusion decisions (:mod:`sphinx_jaxhlo.hlo.decisions.collect`), its buffer
  assignment and live ranges (:mod:`sphinx_jaxhlo.hlo.buffer_assignment`), and, for a
  compile that ran out of memory, the optimized module the compiler wrote before it
  refused (the TPU's does, libtpu 0.0.42), kept as the report's HLO to name the buffers.
- :func:`fill_analysis` derives everything else from the report's HLO and those records,
  the text parsed once: the fusions, materialized buffers and reductions
  (:func:`~sphinx_jaxhlo.hlo.fusion.analyze_module`), the quotes of XLA's decisions
  (:func:`~sphinx_jaxhlo.hlo.decisions.quotes.attach_quotes`), what is live at the peak
  (:func:`~sphinx_jaxhlo.hlo.peak.attach_live_at_peak`; left out for a docs page that
  neither shows it nor checks a claim about it) and the collectives over the
  report's mesh (:func:`~sphinx_jaxhlo.hlo.collectives.analyze_collectives`).  A module
  that does not parse keeps its figures and says why in ``analysis_error``; a compile
  that failed gets only what is live at the peak it refused.

The compile worker fills a report with it once XLA has compiled
(:mod:`sphinx_jaxhlo.compiler.compiling`), a snapshot's report is filled with it whenever
it is read (:mod:`sphinx_jaxhlo.store.snapshots`: a better analysis applies to old
snapshots), and ``analyze_hlo`` fills a saved module's report with it.
"""

from __future__ import annotations

import re
from dataclasses import fields

from sphinx_jaxhlo.core.report import Materialized, Report
from sphinx_jaxhlo.hlo.model import HloModule

__all__ = ["fill_analysis", "module_name", "read_dump_folder"]


def module_name(module: object) -> str:
    """The optimized module's name (``jit_with_dot``), from the module or its text."""
    name = getattr(module, "name", None)
    if isinstance(name, str):
        return name
    m = re.match(r"\s*HloModule\s+([^\s,]+)", str(module))
    return m.group(1) if m else ""


def read_dump_folder(report: Report, folder: str, platform: str, *, decisions: bool, buffers: bool,
                     module: HloModule | str | None = None) -> None:
    """Read into ``report`` what a compile left in its dump folder.

    :param platform: the target's platform (``gpu``), whose decision records are read.
    :param decisions: read XLA's records of its fusion decisions.
    :param buffers: read the buffer assignment and live ranges.
    :param module: the optimized module, parsed or as text (a compile that succeeded: its
        files are found by its name); ``None`` for a compile that failed.
    """
    from sphinx_jaxhlo.hlo import buffer_assignment

    if report.error is not None:
        if buffers:
            report.buffer_assignment, report.buffer_assignment_note = buffer_assignment.collect(folder)
            if report.buffer_assignment:
                report.hlo = buffer_assignment.optimized_module(folder)
        return
    if decisions:
        from sphinx_jaxhlo.hlo.decisions.collect import collect

        report.fusion_decisions, report.fusion_decisions_note = collect(platform, folder,
                                                                        report.hlo if module is None else module)
    if buffers:
        report.buffer_assignment, report.buffer_assignment_note = buffer_assignment.collect(
            folder, module_name(report.hlo if module is None else module))


def parsed(report: Report) -> HloModule | None:
    """The report's HLO parsed; ``None`` when there is none or it does not parse."""
    from sphinx_jaxhlo.hlo.parse import parse_module

    if not report.hlo:
        return None
    try:
        return parse_module(report.hlo)
    except ValueError:
        return None


def _no_peak(report: Report, module: object, source_name: str | None) -> None:
    """What :func:`fill_analysis` does for the peak when not asked to: no live list."""
    report.live_at_peak = None


def fill_analysis(report: Report, source_name: str | None, module: HloModule | None = None, *,
                  peak: bool = True) -> None:
    """Fill the analysis fields of ``report`` from its HLO (see the module's rules).

    :param source_name: the example's file: only its frames give source lines (``None``: the
        innermost frame of any file).
    :param module: the report's HLO already parsed (else it is parsed here).
    :param peak: work out what is live at the peak (a third of the analysis of a small
        module); without, ``live_at_peak`` stays ``None``: for a page that neither shows it
        nor checks a claim about it (:func:`sphinx_jaxhlo.pipeline.plan.needs_peak`).
    """
    from sphinx_jaxhlo.hlo.peak import attach_live_at_peak

    attach = attach_live_at_peak if peak else _no_peak
    if report.error is not None:  # a compile that ran out of memory may have its buffer assignment
        attach(report, (parsed(report) if peak else None) if module is None else module, source_name)
        return
    if not report.hlo:
        return
    from sphinx_jaxhlo.hlo.fusion import analyze_module
    from sphinx_jaxhlo.hlo.parse import parse_module

    try:
        module = parse_module(report.hlo) if module is None else module
        analysis = analyze_module(module, source_name, target=report.target)
    except ValueError as exc:  # the HLO did not parse: keep the figures, say what failed
        report.analysis_error = str(exc)
        attach(report, None, source_name)
        return
    for f in fields(analysis):
        if hasattr(report, f.name):
            setattr(report, f.name, getattr(analysis, f.name))
    _drop_loop_outputs(report, module)
    from sphinx_jaxhlo.hlo.decisions.quotes import attach_quotes

    attach_quotes(report)
    attach(report, module, source_name)
    from sphinx_jaxhlo.hlo.collectives import analyze_collectives

    try:
        report.collectives = analyze_collectives(module, [(str(a[0]), int(a[1])) for a in report.mesh], source_name)
    except ValueError as exc:
        report.analysis_error = f"collectives: {exc}"


def _drop_loop_outputs(report: Report, module: HloModule) -> None:
    """Leave out of ``report.materialized`` a buffer that only a ``while`` reads and that
    XLA's buffer assignment places in the allocation of the loop's result, returned by the
    program: the stacked output of a ``lax.scan`` (a broadcast of zeros on the CPU, an
    ``AllocateBuffer`` on the TPU) that the loop updates in place.  It is the output
    itself, counted in the output's bytes, not an intermediate the program adds (nor a
    table a reduction reads).  Without a buffer assignment (a saved module alone) the
    HLO cannot tell, and the buffer stays."""
    if not report.buffer_assignment or not report.materialized:
        return
    held = {r.input_materialized for r in report.reductions if r.input_materialized}

    def read_by_loops_only(m: Materialized) -> bool:
        comp = module.computations.get(m.computation)
        readers = [comp.get(name) for name in m.consumers] if comp is not None else []
        return bool(readers) and all(r is not None and r.opcode == "while" for r in readers)

    candidates = [m for m in report.materialized if m.name not in held and read_by_loops_only(m)]
    if not candidates:
        return
    from sphinx_jaxhlo.hlo.buffer_assignment import parsed_record

    try:
        record = parsed_record(report.buffer_assignment)
    except ValueError:
        return
    holding = {(value.instruction, value.index): allocation
               for allocation in record.allocations for value in allocation.values}
    dropped = set()
    for m in candidates:
        found = holding.get((m.producer, "{}"))
        loops = set(m.consumers)
        if found is not None and found.role == "output" and any(v.instruction in loops for v in found.values):
            dropped.add(id(m))
    if dropped:
        report.materialized = [m for m in report.materialized if id(m) not in dropped]
