"""The compiler's own record of the fusions it refused, tied to the report.

The records (:mod:`sphinx_jaxhlo.hlo.decision_records`, which says what each
backend writes) name instructions as they were during the fusion pass.  This
module decides which of their refusals stand, maps their names to the
optimized module and quotes them on the findings they explain.  It needs
neither jax nor Sphinx.

The rules applied here:

*Which decision stands.*  A pass reconsiders a producer whenever one of its
neighbours changes, so a producer may be refused several times.  The last
record about a producer is the one that stands, and only while the producer
is still there at the end of the pass: a producer fused later, or a consumer
replaced by the fusion made from it, makes its earlier records moot.

*Names.*  The records name instructions as they were during the pass; later
passes rename fusions (the GPU's ``rename_fusions``: every fusion that is not
``kCustom`` becomes ``<kind>_<heroes>_fusion``, its computation
``fused_<heroes>``, the instructions inside keep their names) and wrap lone
instructions in fusions (``fusion-wrapper``: ``wrapped_<opcode>``).  A name
from the record is mapped to the optimized module by, in order:

1. *the same instruction*: an instruction of the optimized module, outside
   fused computations, with the same name, opcode and shape;
2. *its fused computation*: for a fusion of the module after the pass, the
   one fusion of the optimized module whose computation holds the same
   instructions, by name, its root included (renaming keeps them);
3. *the fusion wrapper*: for a lone instruction, the one ``wrapped_`` fusion
   of the optimized module computing an instruction of the same opcode,
   shape and ``op_name`` from the same operands.

A name that none of these maps, or maps to more than one instruction, stays
unmapped: the decision is kept in the report, with why, but not attached to
any finding.  Nothing is matched by a guess at a name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from sphinx_jaxhlo.core.report import FusionDecision, Reason, Report
from sphinx_jaxhlo.hlo.decision_records import (
    CPU_PASS,
    CPU_SOURCE,
    GPU_PASS,
    GPU_SOURCE,
    Step,
    parse_fusion_visualization,
    parse_priority_fusion_dump,
    quote,
)
from sphinx_jaxhlo.hlo.model import HloComputation, HloInstruction, HloModule, HloParseError
from sphinx_jaxhlo.hlo.parse import parse_module

__all__ = [
    "MAX_DECISIONS",
    "TPU_UNMAPPED",
    "attach_quotes",
    "gpu_decisions",
    "map_name",
    "plain_words",
    "quotation",
    "standing",
    "visualization_decisions",
]

#: The most decisions a report keeps (a large module has thousands of steps).
MAX_DECISIONS = 400


# -- which decisions stand ----------------------------------------------------

def standing(steps: Sequence[Step]) -> list[Step]:
    """The refusals that stand at the end of the pass (see the module's rules):
    per producer (and, for a refusal about one consumer, per consumer) the last
    record, kept only while neither is fused away afterwards; an
    ``update_priority`` stands only when it found fusing slower."""
    last: dict[tuple[str, str], int] = {}
    for index, step in enumerate(steps):
        if step.kind == "fusion":
            continue
        key = (step.producer, step.consumers[0] if step.kind == "not_fusing" and step.consumers else "")
        last[key] = index
    gone_at: dict[str, int] = {}  # name -> index of the step that made it disappear
    for index, step in enumerate(steps):
        if step.kind != "fusion":
            continue
        gone_at[step.producer] = index
        for consumer in step.consumers:
            if consumer != step.fusion:
                gone_at[consumer] = index
    out = []
    for (producer, consumer), index in sorted(last.items(), key=lambda kv: kv[1]):
        step = steps[index]
        if gone_at.get(producer, -1) > index or (consumer and gone_at.get(consumer, -1) > index):
            continue
        if step.kind == "update_priority" and not (
                step.us_fused is not None and step.us_unfused is not None and step.us_fused > step.us_unfused):
            continue
        out.append(step)
    return out


# -- names: the module during the pass -> the optimized module -------------------------

class _Index:
    """The optimized module's instructions, for the mapping rules."""

    def __init__(self, module: HloModule) -> None:
        self.module = module
        fused: set[str] = set()
        for comp in module.computations.values():
            for inst in comp:
                if inst.opcode == "fusion":
                    fused.update(inst.called_computations[:1])
        self.fused = fused
        #: top-level instructions (outside fused computations) by name
        self.top: dict[str, HloInstruction] = {}
        #: instruction name inside a fused computation -> the top-level fusion(s) calling it
        self.holder: dict[str, set[str]] = {}
        for comp in module.computations.values():
            if comp.name in fused:
                continue
            for inst in comp:
                self.top[inst.name] = inst
                if inst.opcode == "fusion" and inst.called_computations:
                    for inner in self.inner(inst.called_computations[0]):
                        self.holder.setdefault(inner.name, set()).add(inst.name)

    def inner(self, comp_name: str, depth: int = 0) -> list[HloInstruction]:
        comp = self.module.computations.get(comp_name)
        if comp is None or depth > 8:
            return []
        out = []
        for inst in comp:
            if inst.opcode in ("parameter", "constant"):
                continue
            out.append(inst)
            if inst.opcode == "fusion" and inst.called_computations:
                out.extend(self.inner(inst.called_computations[0], depth + 1))
        return out


def _computation_of(module: HloModule, name: str) -> tuple[HloComputation, HloInstruction] | None:
    for comp in module.computations.values():
        inst = comp.get(name)
        if inst is not None:
            return comp, inst
    return None


def map_name(name: str, after: HloModule | None, index: _Index) -> tuple[str | None, str]:
    """The optimized module's instruction for a name from a decision record.

    :param after: the module right after the pass, when the backend dumps it.
    :return: the name (or ``None``) and how it was mapped (or why not).
    """
    found = _computation_of(after, name) if after is not None else None
    inst = found[1] if found is not None else None
    same = index.top.get(name)
    if same is not None and (inst is None or (same.opcode == inst.opcode and str(same.shape) == str(inst.shape))):
        return same.name, "the same instruction"
    if inst is None:
        if after is None:
            return None, f"{name} is not an instruction of the optimized module"
        return None, f"{name} is not in the module after the pass"
    if inst.opcode == "fusion" and inst.called_computations and after is not None:
        comp = after.computations.get(inst.called_computations[0])
        if comp is not None:
            names = [i.name for i in comp if i.opcode not in ("parameter", "constant")]
            holders = set().union(*(index.holder.get(n, set()) for n in names)) if names else set()
            root_holders = index.holder.get(comp.root, set())
            if len(holders) == 1 and root_holders == holders:
                return next(iter(holders)), f"its fused computation (root {comp.root}) is in it"
            if len(holders) > 1:
                return None, f"the instructions of {name} are spread over {len(holders)} fusions"
    wrapped = [
        top for top in index.top.values()
        if top.opcode == "fusion" and top.name.startswith("wrapped_") and top.operands == inst.operands
        and str(top.shape) == str(inst.shape) and _wrapped_root_matches(index, top, inst)
    ]
    if len(wrapped) == 1:
        return wrapped[0].name, "the fusion wrapper: the same operation of the same operands"
    if len(wrapped) > 1:
        return None, f"{len(wrapped)} wrapped fusions compute what {name} did"
    return None, f"{name} has no counterpart in the optimized module by name, fused computation or wrapper"


def _wrapped_root_matches(index: _Index, top: HloInstruction, inst: HloInstruction) -> bool:
    comp = index.module.computations.get(top.called_computations[0]) if top.called_computations else None
    if comp is None:
        return False
    root = comp.root_instruction
    return root.opcode == inst.opcode and str(root.shape) == str(inst.shape) and root.op_name == inst.op_name


def _users(after: HloModule | None, name: str) -> list[str]:
    """The readers a producer-ineligible record is about: its users after the
    pass that are not bitcasts (the pass skips those), or through them when
    it has only bitcast users."""
    found = _computation_of(after, name) if after is not None else None
    if found is None:
        return []
    comp, _ = found
    users = comp.users(name)
    direct = [u for u in users if comp[u].opcode != "bitcast"]
    if direct:
        return direct
    return [v for u in users for v in comp.users(u)]


def _parse_or_none(text: str | None, *, quick: bool = False) -> HloModule | None:
    if not text:
        return None
    if quick:
        scanned = _scan_module(text)
        if scanned is not None:
            return scanned
    try:
        return parse_module(text)
    except HloParseError:
        return None


_HEADER = re.compile(r"(ENTRY\s+)?%?([^\s(]+)\s*\(.*\)\s*->\s*.*\{\s*$")
_LINE = re.compile(r"\s+(ROOT\s+)?%?([^\s=]+)\s*=\s*(.+?)\s+([a-z][a-z0-9\-]*)\(([^)]*)\)(.*)$")
_LAYOUT = re.compile(r"\{[^{}]*\}")
_CALLS = re.compile(r"\bcalls=%?([^\s,}]+)")
_OP_NAME = re.compile(r'\bop_name="((?:[^"\\]|\\.)*)"')
_COMMENT = re.compile(r"/\*.*?\*/")


def _scan_module(text: str) -> HloModule | None:
    """The names, opcodes, shapes, operands and fused computations of a
    module dump, read line by line (what the name mapping needs, many times
    faster than the full parser); ``None`` for any line it does not
    recognise, and then the full parser reads the text."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("HloModule "):
        return None
    name = lines[0].split()[1].rstrip(",")
    computations: dict[str, HloComputation] = {}
    entry = ""
    current: HloComputation | None = None
    for line in lines[1:]:
        if current is None:
            header = _HEADER.match(line)
            if header is not None:
                current = HloComputation(name=header.group(2), instructions=[], root="",
                                         is_entry=bool(header.group(1)))
                if header.group(1):
                    entry = current.name
            continue
        if line.startswith("}"):
            if not current.root and current.instructions:
                current.root = current.instructions[-1].name
            computations[current.name] = current
            current = None
            continue
        if not line.strip():
            continue
        m = _LINE.match(line)
        if m is None:
            return None
        rest = m.group(6)
        calls = _CALLS.search(rest)
        op_name = _OP_NAME.search(rest)
        operands = [] if m.group(4) in ("parameter", "constant") else [
            o.strip().lstrip("%") for o in _COMMENT.sub("", m.group(5)).split(",") if o.strip()]
        shape_text: Any = _LAYOUT.sub("", _COMMENT.sub("", m.group(3))).strip()
        inst = HloInstruction(name=m.group(2), opcode=m.group(4), shape=shape_text, operands=operands,
                              called_computations=[calls.group(1)] if calls else [],
                              op_name=op_name.group(1).replace('\\"', '"') if op_name else None,
                              is_root=bool(m.group(1)))
        current.instructions.append(inst)
        current._by_name[inst.name] = inst
        if m.group(1):
            current.root = inst.name
    if current is not None or not computations:
        return None
    return HloModule(name=name, computations=computations, entry=entry or next(iter(computations)))


#: Why a TPU decision is never tied to a finding.
TPU_UNMAPPED = ("not mapped: libtpu renames fusions after its fusion passes and dumps no module to check "
                "a name against")


def _decisions(steps: Sequence[Step], optimized_hlo: str | HloModule, after_text: str | None, pass_name: str,
               source_file: str, map_names: bool = True) -> tuple[list[FusionDecision], str]:
    optimized = optimized_hlo if isinstance(optimized_hlo, HloModule) else _parse_or_none(optimized_hlo)
    if optimized is None:
        return [], "the optimized module does not parse, so no decision could be tied to it"
    after = _parse_or_none(after_text, quick=True)
    index = _Index(optimized)
    kept = standing(steps)
    out: list[FusionDecision] = []
    for step in kept[:MAX_DECISIONS]:
        consumers = step.consumers or _users(after, step.producer)
        producer_at, how = map_name(step.producer, after, index) if map_names else (None, TPU_UNMAPPED)
        mapped_consumers = []
        for consumer in consumers:
            at, consumer_how = map_name(consumer, after, index) if map_names else (None, "")
            mapped_consumers.append(at or "")
            if at is None and producer_at is not None:
                how += f"; reader {consumer}: {consumer_how}"
        kind = {"producer_ineligible": "producer-ineligible", "update_priority": "slower-fused"}.get(
            step.kind, "not-fused")
        reason = step.reason
        if step.kind == "update_priority":
            reason = f"fused {step.us_fused} us, unfused {step.us_unfused} us"
        out.append(FusionDecision(pass_name=pass_name, source_file=source_file, kind=kind, producer=step.producer,
                                  consumers=list(consumers), reason=reason, record=step.record,
                                  producer_instruction=producer_at, consumer_instructions=mapped_consumers,
                                  mapping=how))
    mapped = sum(d.producer_instruction is not None for d in out)
    note = (f"{pass_name}: {len(steps)} steps recorded, {len(kept)} refusals stand, "
            f"{mapped} tied to the optimized module")
    if len(kept) > MAX_DECISIONS:
        note += f" ({len(kept) - MAX_DECISIONS} more left out)"
    if after_text and after is None:
        note += "; the module after the pass did not parse, names were mapped by the optimized module alone"
    return out, note


def gpu_decisions(dump_text: str, optimized_hlo: str | HloModule,
                  after_text: str | None) -> tuple[list[FusionDecision], str]:
    """The GPU's standing refusals, their names mapped to the optimized module.

    :param dump_text: the ``*.priority_fusion_dump.txt`` text.
    :param optimized_hlo: ``compiled.as_text()``, or that text parsed.
    :param after_text: the module right after ``priority-fusion``, or ``None``.
    :return: the decisions and a note on what was read (never an exception).
    """
    steps, problem = parse_priority_fusion_dump(dump_text)
    if problem is not None:
        return [], problem
    return _decisions(steps, optimized_hlo, after_text, GPU_PASS, GPU_SOURCE)


def visualization_decisions(page: str, optimized_hlo: str | HloModule, after_text: str | None, *,
                            pass_name: str = CPU_PASS, source_file: str = CPU_SOURCE,
                            map_names: bool = True) -> tuple[list[FusionDecision], str]:
    """The CPU's (or TPU's) standing refusals from a fusion explorer page,
    their names mapped to the optimized module.

    :param page: the ``*_fusion.html`` text.
    :param after_text: the module right after the pass, or ``None``.
    :param map_names: ``False`` for libtpu's records (see :data:`TPU_UNMAPPED`).
    :return: the decisions and a note on what was read (never an exception).
    """
    steps, problem = parse_fusion_visualization(page)
    if problem is not None:
        return [], problem
    return _decisions(steps, optimized_hlo, after_text, pass_name, source_file, map_names)


# -- tying decisions to findings ------------------------------------------------

#: XLA's reasons in plain words, by the start of the compiler's text.
_PLAIN = (
    ("the producer is not fusible", "XLA's GPU fusion never fuses a producer of this kind (a GEMM, a convolution, "
     "a custom call, a sort...) into the kernel that reads it: its result is written to memory"),
    ("the consumer is not fusible", "the reader is a kernel of its own (a GEMM, a custom call...) that takes no "
     "producer in"),
    ("both the producer and the consumer contain a reduce", "XLA does not fuse a reduction into another reduction"),
    ("not fusing because there are only bitcast users", "the producer's only readers are reshapes of it, "
     "considered again once they are fused"),
    ("fusion into output of a reduce fusion would create a loop fusion", "fusing after a reduction would turn "
     "its kernel into a slower one"),
    ("the fusion would result in an overly large code duplication", "fusing would duplicate too much code"),
    ("not fusing into the output of the root instruction", "the producer is the program's result"),
    ("Producer is not loop-fusible", "XLA's CPU loop fusion takes in only elementwise and data-movement "
     "producers, not a dot, a custom fusion or a call"),
    ("Don't fuse instructions from custom fusions/calls", "the reader is a custom fusion (on the CPU, a "
     "YNNPACK kernel) that the CPU's loop fusion does not change: what it takes in was decided by the YNN fusion"),
    ("Don't fuse non-scalar constants", "a constant array is read, not recomputed"),
    ("fused ", "the cost model estimated the fused kernels slower than the unfused ones"),
)


def plain_words(decision: FusionDecision) -> str:
    """The compiler's reason said in plain words (the reason itself when it is not a known one)."""
    for start, words in _PLAIN:
        if decision.reason.startswith(start) or (start == "fused " and decision.kind == "slower-fused"):
            return words
    return decision.reason


def quotation(decision: FusionDecision) -> str:
    """The decision as a finding quotes it: the pass, what it was about, the reason verbatim."""
    def named(record: str, here: str | None) -> str:
        return record if here in (None, record) else f"{record} (here {here})"

    about = named(decision.producer, decision.producer_instruction)
    here = decision.consumer_instructions
    aligned = here if len(here) == len(decision.consumers) else [""] * len(decision.consumers)
    readers = [named(c, h or None) for c, h in zip(decision.consumers, aligned, strict=True)]
    if readers:
        about += ", read by " + ", ".join(readers)
    return f"XLA {decision.pass_name} ({decision.source_file}), about {about}: {quote(decision.reason)}"


def _pick(decisions: Iterable[FusionDecision], consumer: str) -> FusionDecision | None:
    """The decision about a producer that concerns ``consumer``: one naming it
    first, else one about all the producer's readers (GPU producer-ineligible)."""
    candidates = list(decisions)
    for d in candidates:
        if consumer in d.consumer_instructions:
            return d
    for d in candidates:
        if d.kind == "producer-ineligible":
            return d
    return None


def attach_quotes(report: Report) -> int:
    """Set :attr:`Reason.quoted` on each unfused reduction and each
    intermediate whose stored producer a standing decision names.

    A reduction without a reason gets one (producer kind ``unclassified``,
    the compiler's reason in plain words) so that the quote is not lost; an
    intermediate keeps no reason it did not already have.

    :return: how many findings were given a quote.
    """
    by_producer: dict[str, list[FusionDecision]] = {}
    for d in report.fusion_decisions:
        if d.producer_instruction is not None:
            by_producer.setdefault(d.producer_instruction, []).append(d)
    if not by_producer:
        return 0
    buffers = {m.name: m for m in [*report.materialized, *report.argument_copies]}
    count = 0
    for r in report.reductions:
        buffer = buffers.get(r.input_materialized or "")
        if buffer is None:
            continue
        chosen = _pick(by_producer.get(buffer.producer, ()), r.fusion)
        if chosen is None:
            continue
        if r.reason is None:
            r.reason = Reason(producer_kind="unclassified", text=plain_words(chosen))
        _quote_into(r.reason, chosen)
        count += 1
    for m in report.materialized:
        if m.reason is None:
            continue
        picked = next((p for c in m.consumers if (p := _pick(by_producer.get(m.producer, ()), c)) is not None), None)
        if picked is None:
            continue
        _quote_into(m.reason, picked)
        count += 1
    return count


def _quote_into(reason: Reason, decision: FusionDecision) -> None:
    reason.quoted = quotation(decision)
    if not reason.rule:
        reason.rule = decision.pass_name
    if not reason.source_file:
        reason.source_file = decision.source_file
