"""The build's own report: the ``jax-hlo-report`` table of every example, and
the summary line at the end of a build."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.render.blocks import table
from sphinx_jaxhlo.render.overview import measure_text
from sphinx_jaxhlo.sphinxext.state import build_state, document_data

if TYPE_CHECKING:
    from sphinx.application import Sphinx

logger = logging.getLogger(__name__)


class jaxhlo_report(nodes.General, nodes.Element):
    """Placeholder for the build report table."""


class JaxHloReportDirective(SphinxDirective):
    """``.. jax-hlo-report::``: a table of every example of the build."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        document_data(self.env).report_docs.add(self.env.docname)
        return [jaxhlo_report()]


def _size(value: int | None) -> str:
    return format_bytes(value) if value is not None else "—"


def fill_reports(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """``doctree-resolved``: the tables of every ``jax-hlo-report``."""
    for node in list(doctree.findall(jaxhlo_report)):
        records = document_data(app.env).all_records()
        if not records:
            node.replace_self(nodes.paragraph(text="No jax-hlo examples in this build."))
            continue
        rows = [[r.docname, str(r.line), r.function, r.target,
                 f"{r.seconds:.2f} s" if r.origin == "compiled" else "—",
                 "—" if r.memory_bytes is None else measure_text(r.memory_figure, r.memory_bytes),
                 r.origin or "—", r.status, r.guide or "—"] for r in records]
        out: list[nodes.Node] = [nodes.paragraph(text=guide_line(records))] if guide_line(records) else []
        out.append(table(["document", "line", "function", "target", "compile time",
                          "memory (temp; HBM held on a TPU)", "report from", "status", "guide's rule"], rows,
                         ["jaxhlo-report"]))
        drifted = [r for r in records if r.drift is not None]
        if drifted:
            out.append(nodes.rubric(text="Changed since the stored reports"))
            out.append(nodes.paragraph(text=(
                "Reports that differ from the last one stored for the same example and target (a snapshot, "
                "or the cache's last report, made by another toolchain). Rows marked warned moved a verdict, "
                "or temp or the device's memory beyond jaxhlo_drift_tolerance.")))
            drift_rows = [[r.docname, str(r.line), r.function, r.target, d.versions_before, d.versions_after,
                           _size(d.temp_before), _size(d.temp_after), _size(d.device_before),
                           _size(d.device_after), _size(d.peak_before), _size(d.peak_after),
                           d.verdict_before, d.verdict_after, "warned" if d.significant else ""]
                          for r in drifted if (d := r.drift) is not None]
            out.append(table(["document", "line", "function", "target", "versions before", "versions after",
                              "temp before", "temp after", "device before", "device after", "peak before",
                              "peak after", "verdict before",
                              "verdict after", "drift"], drift_rows, ["jaxhlo-report", "jaxhlo-drift"]))
        node.replace_self(out)


def guide_line(records: list[Any]) -> str:
    """How often the guide's rule and XLA agree over the records (:mod:`sphinx_jaxhlo.predict`)."""
    kinds = [r.guide.removesuffix(" (uncertain)") for r in records]
    counts = {key: kinds.count(key) for key in ("agrees", "disagrees", "limit", "compile it")}
    total = sum(counts.values())
    if not total:
        return ""
    answered = counts["agrees"] + counts["disagrees"] + counts["limit"]
    certain = sum(1 for r in records if r.guide in ("agrees", "disagrees", "limit"))
    return (f"The guide's rules and XLA: {counts['agrees']} of {answered} answered reports agree "
            f"({counts['disagrees'] + counts['limit']} disagree, {counts['limit']} of them stated limits; "
            f"{certain} of the {answered} answers certain by their rule's record, on unseen programs "
            "too); "
            f"{counts['compile it']} of {total} left to the compile (a stated limit of the rules, such as the "
            "H100's break-even, or no rule).")


def summarize(app: Sphinx) -> None:
    """The build's last lines: how many reports were compiled, cached, failed."""
    read = build_state(app).read
    records = [r for r in document_data(app.env).all_records() if r.docname in read]
    if not records:
        return
    # "compiled": the compiler ran and gave a report (whatever the report says)
    compiled = [r for r in records if r.origin == "compiled"]
    cached = [r for r in records if r.origin == "cache"]
    stored = [r for r in records if r.origin == "snapshot"]
    bad = [r for r in records if r.status not in ("ok", "expected error", "target missing")]
    slowest = max(compiled, key=lambda r: r.seconds, default=None)
    line = f"jax-hlo: {len(compiled)} compiled, {len(cached)} from cache"
    if stored:
        line += f", {len(stored)} from snapshots"
    line += f", {len(bad)} failed"
    ahead = sum(r.prefetched for r in compiled)
    if ahead:
        line += f"; {ahead} compiled ahead of their page"
    if slowest is not None and slowest.seconds > 0:
        line += f"; slowest: {slowest.function} for {slowest.target} in {slowest.docname} ({slowest.seconds:.2f} s)"
    logger.info(line)
    guide = guide_line(records)
    if guide:
        logger.info("jax-hlo: %s", guide)
    for r in bad:
        logger.info("  %s:%s: %s", app.env.doc2path(r.docname), r.line,
                    r.message or f"{r.function} on {r.target}: {r.status}")
