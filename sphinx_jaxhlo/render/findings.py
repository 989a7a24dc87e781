"""The findings of a report in words, problems first: what the page puts in its
callouts and the text output prints before the tables.

A finding is a *problem* (shown in red) only when the data in question is
large: at least :attr:`~sphinx_jaxhlo.render.display.Display.problem_min_bytes`
and at least :attr:`~sphinx_jaxhlo.render.display.Display.problem_io_factor`
times the program's arguments and outputs together (by default 1 MiB and 1x).
Smaller findings are stated neutrally.
No docutils, no Sphinx, no jax.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sphinx_jaxhlo.core.memory import memory_space_name
from sphinx_jaxhlo.core.report import Materialized, Reason, Reduction, Report
from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.render.display import Display
from sphinx_jaxhlo.render.rows import OpLookup, largest_intermediate, largest_on_chip, lines_text, reduction_label

__all__ = ["Finding", "chunk_refusal", "findings", "guide_findings", "mesh_findings", "shows_refusal"]


@dataclass(frozen=True)
class Finding:
    """A finding in words: ``problem`` (red), ``good`` (green) or ``info`` (neutral)."""

    level: str
    title: str
    text: str
    #: What made the stored data and why it was not fused (an unfused reduction's finding).
    reason: Reason | None = None
    #: The guide's rule this finding names (its anchor, ``jaxhlo-predict-...``) and the rule's title.
    rule: str = ""
    rule_title: str = ""


def _buffer_words(buf: Materialized, ops: OpLookup) -> str:
    """``the 20.0 GB result of dot_general on line 4 (HLO gemm_fusion_dot.1)``."""
    made = buf.producer_op or ops.kernel(buf.producer, buf.computation)
    where = f" on {lines_text(buf.source_lines)}" if buf.source_lines else ""
    return f"the {buf.shape} result of {made}{where} ({format_bytes(buf.bytes)}; HLO {buf.producer})"


def findings(report: Report, display: Display, difference: Finding | None = None) -> list[Finding]:
    """The findings in words a reader understands, problems first.

    :param difference: in a comparison of variants, what this variant stores that the
        others do not (:func:`sphinx_jaxhlo.render.differences.variant_finding`): the
        memory finding, in place of the largest intermediate, which every variant may share.
    """
    if report.error:
        return []
    ops = OpLookup(report)
    buffers = {m.name: m for m in report.materialized}
    threshold = display.threshold(report)
    io = display.io_bytes(report)
    # an example about memory asks for no verdict on its reductions (``:findings:``)
    verdict = report.verdict_reductions if display.verdicts else []
    out: list[Finding] = []
    # unfused reductions, grouped by the stored data they read
    groups: dict[str, list[Reduction]] = {}
    for r in verdict:
        if not r.fused:
            groups.setdefault(r.input_materialized or f"?{r.name}", []).append(r)
    big: list[tuple[int, Finding]] = []
    small: list[tuple[int, Finding]] = []
    for key, reds in groups.items():
        buf = buffers.get(key)
        size = buf.bytes if buf is not None else reds[0].input_bytes
        what = _buffer_words(buf, ops) if buf is not None else \
            f"the {reds[0].input_shape} data ({format_bytes(size)})"
        names = sorted({reduction_label(r, ops) for r in reds})
        lines = sorted({n for r in reds for n in r.source_lines})
        where = f" on {lines_text(lines)}" if lines else ""
        if len(reds) == 1:
            readers = f"the reduction{where} ({names[0]}) reads it"
        else:
            readers = f"{len(reds)} reductions{where} ({', '.join(names)}) read it"
        reason = next((x for x in [*(r.reason for r in reds), buf.reason if buf is not None else None] if x), None)
        if buf is not None and not buf.in_device_memory:
            # a TPU keeps it in the chip's own memory: a second kernel reads it, but it takes no HBM
            space = memory_space_name(buf.memory_space, report.target)
            small.append((size, Finding("info", "Unfused reduction, on-chip", (
                f"{what} is stored in the chip's own memory ({space}, not HBM) before {readers}: "
                "the reduction is not fused, but the buffer takes no HBM."), reason)))
            continue
        text = f"{what} is stored in memory before {readers}."
        if size >= threshold:
            if io and size >= 2 * io:
                text += f" That is {size / io:,.0f}× the {format_bytes(io)} the arguments and outputs take."
            big.append((size, Finding("problem", "Unfused reduction", text, reason)))
        else:
            if threshold > display.problem_min_bytes:
                text += (f" It is smaller than the arguments and outputs together ({format_bytes(io)}): "
                         "not a problem here.")
            else:
                text += f" It is under {format_bytes(display.problem_min_bytes)}: not a problem here."
            small.append((size, Finding("info", "Unfused reduction", text, reason)))
    for found, limit, what in ((big, 5, "large"), (small, 3, "small")):
        found.sort(key=lambda item: -item[0])
        out += [f for _, f in found[:limit]]
        if len(found) > limit:
            level = "problem" if what == "large" else "info"
            out.append(Finding(level, "", f"{len(found) - limit} more unfused reductions read {what} stored "
                                          "data: see the reductions table."))
    fused = [r for r in verdict if r.fused]
    if fused and len(fused) == len(verdict):
        names = sorted({reduction_label(r, ops) for r in fused})
        n = len(fused)
        lines = sorted({line for r in fused for line in r.source_lines})
        where = f" on {lines_text(lines)}" if lines else ""
        subject = (f"the reduction{where} ({names[0]}) computes" if n == 1
                   else f"{'both' if n == 2 else f'all {n}'} reductions{where} ({', '.join(names)}) compute")
        out.append(Finding("good", "Fused", f"{subject} the data they reduce inside their kernels: "
                                            "the values reduced never go to memory."
                           if n > 1 else f"{subject} the data it reduces inside its kernel: "
                                         "the values reduced never go to memory."))
    elif fused:
        out.append(Finding("info", "", f"{len(fused)} other reduction{'s are' if len(fused) > 1 else ' is'} fused."))
    if verdict:
        out += guide_findings(report)
    biggest = largest_intermediate(report)
    if "memory" not in display.findings:
        return out
    on_chip = largest_on_chip(report)
    if difference is not None:
        out.append(difference)
    elif biggest is not None and biggest.name not in groups:
        w = _buffer_words(biggest, ops)
        where = " in HBM" if report.target.startswith("tpu") else ""
        out.append(Finding("info", "", f"Largest intermediate{where}: {w}."))
    if on_chip is not None and on_chip.name not in groups and difference is None:
        n = sum(1 for m in report.materialized if not m.in_device_memory)
        which = "1 intermediate stays" if n == 1 else f"{n} intermediates stay"
        out.append(Finding("info", "", f"{which} in the chip's own memory, never in HBM; the largest: "
                                       f"{_buffer_words(on_chip, ops)}."))
    if biggest is None and difference is None and not report.materialized and not report.analysis_error:
        copies = len(report.argument_copies)
        also = (f" ({copies} cop{'y' if copies == 1 else 'ies'} of argument data, listed in the table)"
                if copies else "")
        out.append(Finding("info", "", "No buffer is stored between kernels: the computation runs from "
                                       f"the arguments to the result without an intermediate in memory{also}."))
    return out


def guide_findings(report: Report) -> list[Finding]:
    """The guide's rule for the largest table, beside what XLA did (:mod:`sphinx_jaxhlo.predict.agreement`):
    named and linked; a disagreement said plainly."""
    from sphinx_jaxhlo.predict.agreement import agreement

    found = agreement(report)
    if found is None:
        return []
    p = found.prediction
    title = "The guide disagrees" if found.agrees is False else "The guide"
    return [Finding("info", title, found.sentence, rule=p.rule, rule_title=p.title)]


def mesh_findings(report: Report, display: Display | None = None) -> list[Finding]:
    """The mesh in words, and the communication: the findings of a program on several
    devices (the communication only when ``display`` reports that kind)."""
    out: list[Finding] = []
    if report.devices > 1:
        mesh = f", mesh {report.mesh_text}" if report.mesh_text else ""
        out.append(Finding("info", "", f"Runs on {report.devices} devices{mesh}, one program per device: the "
                                       "memory figures and the shapes of kernels, buffers and collectives are "
                                       "one device's."))
    elif report.mesh:
        out.append(Finding("info", "", f"One device: the mesh's axes ({report.mesh_text}) have size 1 here."))
    if display is not None and "communication" not in display.findings:
        return out
    if report.collectives:
        n = len(report.collectives)
        overlapped = sum(1 for c in report.collectives if c.overlapped)
        text = f"{n} collective{'s' if n != 1 else ''}, {format_bytes(sum(c.bytes for c in report.collectives))} " \
               "per device in all"
        if overlapped:
            text += f"; {overlapped} of them overlap{'s' if overlapped == 1 else ''} compute"
        out.append(Finding("info", "Communication", text + "."))
    elif report.devices > 1:
        out.append(Finding("good", "No communication", "every device computes its part from its own data; "
                                                       "no collective was inserted."))
    return out


# -- a chunking the report could not suggest ------------------------------------------------------

#: ``example.py:11:11 (loss)``: a place in the example as JAX names it (file, line, column, function).
_PLACE = re.compile(r"(?:\bat |\bmade at )?([\w./\\-]+\.py):(\d+):\d+(?: \([^()]*\))?")


#: The proof's reasons (:mod:`sphinx_jaxhlo.chunking.proof`), each put as what it means for the
#: result, shortest first; older snapshots' wordings included (a snapshot keeps the words of the
#: search that wrote it).
_PROOF_WORDS = (
    ("; the proof cannot follow it, so it cannot prove the chunked rewrite (which may or may not keep the result)",
     ""),
    ("; the chunked rewrite would change the result, so it is refused",
     ", so combining chunks would change the result"),
    ("; the chunked rewrite is refused", ""),
    ("the proof on the jaxpr refuses: ", ""),
    ("the proof on the jaxpr cannot prove it: ", "not proved: "),
    (" is an operation the checker does not know to treat the elements along the chunked axis independently",
     " is not one the proof can follow"),
    (" calls a function the checker cannot match to its arguments", " calls a function the proof cannot follow"),
    (" takes the chunked data in an operand the checker cannot follow", " takes the axis in an operand the proof "
                                                                         "cannot follow"),
    (" merges the chunked axis with another axis", " merges the axis with another"),
    (" pairs elements at different positions of the chunked axis (each with every other, or a chunked axis with "
     "another axis)", " pairs elements at different positions of the axis"),
    ("its operations change with the length of the chunked axis, so a chunk, shorter than the whole, would not "
     "compute the same thing", "its operations depend on the axis's length, so a shorter chunk computes something "
                              "else"),
    ("chunked() combines chunks by a reduction over the axis, so it does not apply; a map over blocks of the axis "
     "(lax.map with batch_size=) computes such an output a block at a time",
     "a map over blocks of it (lax.map with batch_size=) bounds that instead"),
    ("chunks of it cannot be combined into the whole",
     "a map over blocks of it (lax.map with batch_size=) bounds that instead"),
    ("the output keeps the chunked axis", "the result keeps the axis"),
    ("the chunked axis", "the axis"),
)


def _refusal_words(text: str, file_path: str, brief: bool = False) -> str:
    """The search's refusal (:func:`sphinx_jaxhlo.chunking.search.suggest_chunking`) in a reader's
    words: each place the example's own line (``on line 11``), a place in another file left out
    (the page does not have it), the proof's terms said as what they mean for the result.  With
    ``brief``, only the first set of arguments tried (the nearest to a suggestion), and how many
    others were declined too: what a memory finding nobody asked the search for says."""
    own = {"example.py", file_path.replace("\\", "/").rsplit("/", 1)[-1]} - {""}

    def place(match: re.Match[str]) -> str:
        whole, name, line = match.group(0), match.group(1), match.group(2)
        if name.replace("\\", "/").rsplit("/", 1)[-1] not in own:
            return "made elsewhere" if whole.startswith("made at") else ""
        return f"{'made ' if whole.startswith('made at') else ''}on line {line}"

    words = text.removeprefix("No chunking to suggest: ").rstrip(".")
    more = 0
    counted = re.search(r" \((\d+) other sets? of arguments declined too\)$", words)
    if counted:
        more, words = int(counted.group(1)), words[:counted.start()]
    words = _PLACE.sub(place, words)
    words = re.sub(r"`([^`]+)`", r"\1", words)
    for said, meant in _PROOF_WORDS:
        words = words.replace(said, meant)
    words = re.sub(r"chunked\(\) is proved on the jaxpr \(combine='(\w+)'\), but compiled for (\S+) over chunks of "
                   r"(\d+) it needs (.+?) of temp memory, (no less than|over half of) the unchunked ([^;(]+)",
                   r"chunks of \3 give the same result (combined by \1), but compiled for \2 they still need \4 of "
                   r"temp memory, \5 the \6 unchunked", words)
    if brief:  # each set of arguments starts "over axis ..."; the first one said
        sets = re.split(r"; (?=over (?:axis|axes) )", words)
        more += len(sets) - 1
        words = sets[0]
    if more:
        words += f" (nor over {more} more)"
    return re.sub(r"\s+", " ", words).replace(" ,", ",").strip()


def chunk_refusal(report: Report, file_path: str = "", brief: bool = False) -> Finding | None:
    """Why no chunking is suggested, where the report's search found none (its stored text is
    one line; a suggestion has its code on more), in a reader's words (:func:`_refusal_words`;
    ``brief`` where nobody asked for a chunking); ``None`` where there is nothing to say."""
    text = report.chunk_suggestion
    if not text or "\n" in text or not text.startswith("No chunking to suggest"):
        return None
    return Finding("info", "No chunking to suggest", f"{_refusal_words(text, file_path, brief)}.")


def shows_refusal(found: list[Finding], display: Display, asked: bool) -> bool:
    """Whether a page says why no chunking is suggested: where the example asked for a chunked
    variant (``:chunk:``), or, as a memory finding, where the page names a memory problem (an
    unfused reduction reading large stored data) that a chunking would have answered."""
    return asked or ("memory" in display.findings and any(f.level == "problem" for f in found))
