"""The compiler's own record of the fusions it refused, tied to the report.

The records (:mod:`sphinx_jaxhlo.hlo.decisions.records`, which says what each
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
   shape and ``op_name`` from the same operands;
4. *its fused computation, cloned*: for a fusion of the module after the pass
   none of whose instructions keeps its name, the one fusion of the optimized
   module holding them all, root included, under the names XLA gives a
   clone (``sin.1.1.clone.1``: the GPU's multi-output fusion copies a
   producer into one of its readers and makes its value a second output);
   the decision then says which output of that kernel the producer became.

A name that none of these maps, or maps to more than one instruction, stays
unmapped: the decision is kept in the report, with why, but not attached to
any finding.  Nothing is matched by a guess at a name.

*Which decision explains a finding.*  A stored buffer is explained by a
standing decision about the instruction that wrote it (for an output of a
multi-output kernel, about the producer that became that output): one
naming the reduction's kernel as the reader, else one about all of the
producer's readers at once (the GPU's ``producer_ineligible``, and its
``update_priority``, whose estimates are for fusing the producer into every
reader).  The quote names the rule of XLA's source that wrote the record's
reason (:data:`~sphinx_jaxhlo.hlo.decisions.records.RECORD_RULES`; the cost model's refusal: priority
fusion's ``CalculateProducerPriority``, whose negative priority
``ComputeAndSetPriorities`` never queues, with its estimates in
microseconds), replacing the rule the HLO suggested, and its plain words
replace the derived text's admission that the HLO alone does not say why
(or the derived text, where the record names another rule).  Two records
describe an end state, not the decision: the CPU loop fusion's "Don't fuse
instructions from custom fusions/calls" about a YNN kernel (the library
rewriter decided what that kernel takes in, and the derived rule, which
names it, stays), and a GPU refusal about the reduction kernel a table was
later merged into as a second output (the decision about the producer that
became that output is the one quoted, with the multi-output fusion named
beside it).  Only the program's own reductions get a
reason: a reduction the compiler made (a split-K stage) gets no verdict, so
nothing is explained on it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from sphinx_jaxhlo.core.report import FusionDecision, Reason, Report
from sphinx_jaxhlo.hlo.decisions.records import (
    CPU_PASS,
    CPU_SOURCE,
    END_STATE,
    GPU_PASS,
    GPU_SOURCE,
    Step,
    parse_fusion_visualization,
    parse_priority_fusion_dump,
    plain_words,
    quote,
    record_rule,
)
from sphinx_jaxhlo.hlo.model import HloComputation, HloInstruction, HloModule, HloParseError
from sphinx_jaxhlo.hlo.parse import parse_module
from sphinx_jaxhlo.hlo.reasons import KIND_WORDS, UNEXPLAINED

__all__ = [
    "MAX_DECISIONS",
    "TPU_UNMAPPED",
    "attach_quotes",
    "gpu_decisions",
    "map_name",
    "map_producer",
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
        #: the name a clone was made from (``sin.1`` of ``sin.1.clone.2``) -> the top-level fusion(s) holding it
        self.cloned: dict[str, set[str]] = {}
        for comp in module.computations.values():
            if comp.name in fused:
                continue
            for inst in comp:
                self.top[inst.name] = inst
                if inst.opcode == "fusion" and inst.called_computations:
                    for inner in self.inner(inst.called_computations[0]):
                        self.holder.setdefault(inner.name, set()).add(inst.name)
                        original = _CLONE.sub("", inner.name)
                        if original != inner.name:
                            self.cloned.setdefault(original, set()).add(inst.name)

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


#: The suffix XLA's cloning gives an instruction's name (``.clone``, ``.clone.3``).
_CLONE = re.compile(r"\.clone(?:\.\d+)?$")


def _element_of(index: _Index, holder: str, root: str) -> int | None:
    """Which output of the multi-output fusion ``holder`` the clone of ``root`` is."""
    top = index.top.get(holder)
    comp = index.module.computations.get(top.called_computations[0]) if top and top.called_computations else None
    if comp is None or comp.root_instruction.opcode != "tuple":
        return None
    for position, operand in enumerate(comp.root_instruction.operands):
        if _CLONE.sub("", operand) == root and operand != root:
            return position
    return None


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
    found, how, _ = map_producer(name, after, index)
    return found, how


def map_producer(name: str, after: HloModule | None, index: _Index) -> tuple[str | None, str, int | None]:
    """:func:`map_name`, and for a producer that became an output of a
    multi-output kernel (rule 4), which output."""
    found = _computation_of(after, name) if after is not None else None
    inst = found[1] if found is not None else None
    same = index.top.get(name)
    if same is not None and (inst is None or (same.opcode == inst.opcode and str(same.shape) == str(inst.shape))):
        return same.name, "the same instruction", None
    if inst is None:
        if after is None:
            return None, f"{name} is not an instruction of the optimized module", None
        return None, f"{name} is not in the module after the pass", None
    if inst.opcode == "fusion" and inst.called_computations and after is not None:
        comp = after.computations.get(inst.called_computations[0])
        if comp is not None:
            names = [i.name for i in comp if i.opcode not in ("parameter", "constant")]
            holders = set().union(*(index.holder.get(n, set()) for n in names)) if names else set()
            root_holders = index.holder.get(comp.root, set())
            if len(holders) == 1 and root_holders == holders:
                return next(iter(holders)), f"its fused computation (root {comp.root}) is in it", None
            if len(holders) > 1:
                return None, f"the instructions of {name} are spread over {len(holders)} fusions", None
            clones = set().union(*(index.cloned.get(n, set()) for n in names)) if names and not holders else set()
            if len(clones) == 1 and index.cloned.get(comp.root, set()) == clones:
                holder = next(iter(clones))
                element = _element_of(index, holder, comp.root)
                if element is not None:
                    return holder, (f"its fused computation, cloned into a multi-output kernel (root "
                                    f"{comp.root}, its output {element})"), element
    wrapped = [
        top for top in index.top.values()
        if top.opcode == "fusion" and top.name.startswith("wrapped_") and top.operands == inst.operands
        and str(top.shape) == str(inst.shape) and _wrapped_root_matches(index, top, inst)
    ]
    if len(wrapped) == 1:
        return wrapped[0].name, "the fusion wrapper: the same operation of the same operands", None
    if len(wrapped) > 1:
        return None, f"{len(wrapped)} wrapped fusions compute what {name} did", None
    return None, f"{name} has no counterpart in the optimized module by name, fused computation or wrapper", None


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
    # XLA writes a record's steps in an order that changes from one compile to the next: the
    # decisions kept past the limit are chosen in an order of their own, so a snapshot is the same
    kept = sorted(standing(steps), key=lambda s: (s.producer, s.consumers, s.kind, s.reason, s.record))
    out: list[FusionDecision] = []
    for step in kept[:MAX_DECISIONS]:
        consumers = step.consumers or _users(after, step.producer)
        producer_at, how, element = map_producer(step.producer, after, index) if map_names else (
            None, TPU_UNMAPPED, None)
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
                                  mapping=how, producer_element=element))
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


def _pick(decisions: Iterable[FusionDecision], consumer: str, element: int | None = None) -> FusionDecision | None:
    """The decision about a producer that concerns ``consumer``: one naming it
    first, else one about all the producer's readers (GPU producer-ineligible,
    and the cost model's estimate for all of them); for an output of a
    multi-output kernel, only those about the producer that became it."""
    candidates = [d for d in decisions if element is None or d.producer_element in (None, element)]
    if element is not None and any(d.producer_element == element for d in candidates):
        candidates = [d for d in candidates if d.producer_element == element]
    for d in candidates:
        if consumer in d.consumer_instructions:
            return d
    for kind in ("producer-ineligible", "slower-fused"):
        for d in candidates:
            if d.kind == kind:
                return d
    return None


def attach_quotes(report: Report) -> int:
    """Set :attr:`Reason.quoted` on each unfused reduction of the program's
    and each intermediate whose stored producer a standing decision names,
    and the rule that wrote it (:func:`record_rule`).

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
    elements = _elements(report.hlo) if any(d.producer_element is not None for d in report.fusion_decisions) else {}
    count = 0
    for r in report.reductions:
        buffer = buffers.get(r.input_materialized or "")
        if buffer is None or not r.is_users:
            continue
        chosen = _pick(by_producer.get(buffer.producer, ()), r.fusion, elements.get(buffer.name))
        if chosen is None:
            continue
        if r.reason is None:
            r.reason = Reason(producer_kind="unclassified", text=plain_words(chosen))
        _quote_into(r.reason, chosen)
        count += 1
    for m in report.materialized:
        if m.reason is None:
            continue
        picked = next((p for c in m.consumers if (p := _pick(by_producer.get(m.producer, ()), c,
                                                             elements.get(m.name))) is not None), None)
        if picked is None:
            continue
        _quote_into(m.reason, picked)
        count += 1
    return count


_GTE = re.compile(r"^\s*%?([^\s=]+)\s*=\s*\S.*?\bget-tuple-element\(.*?\bindex=(\d+)", re.M)


def _elements(hlo: str) -> dict[str, int]:
    """The output index each ``get-tuple-element`` of a module names (buffers of multi-output kernels)."""
    return {m.group(1): int(m.group(2)) for m in _GTE.finditer(hlo)}


def _quote_into(reason: Reason, decision: FusionDecision) -> None:
    """Quote a decision on a reason, and let the record's rule and words stand where the HLO guessed."""
    reason.quoted = quotation(decision)
    rule, source = record_rule(decision)
    words = plain_words(decision)
    if reason.producer_kind == "multi-output" and reason.rule:
        # the record says why the producer was kept apart; multi-output fusion then made it a second output
        reason.text = f"{reason.text} Before that, {words}."
        reason.rule = f"{reason.rule}, after {rule} (in {source}) had kept its producer apart"
        return
    if decision.reason.startswith(END_STATE) and reason.source_file.startswith("xla/backends/cpu/"):
        return  # the loop fusion met a library kernel: the library rewriter, before it, decided (the derived rule)
    if UNEXPLAINED in reason.text:  # the record says what the HLO could not
        reason.text = reason.text.replace(UNEXPLAINED, words + ".")
    elif reason.rule and reason.rule != rule:  # the HLO's guess differs from the record: the record stands
        reason.text = f"It is {KIND_WORDS.get(reason.producer_kind, 'a stored value')}: {words}."
    reason.rule, reason.source_file = rule, source
