"""The compiler's own record of the fusions it refused, read and tied to the report.

XLA keeps a record of its fusion decisions when asked to dump them; the
compile worker (:mod:`sphinx_jaxhlo.compiler.worker`) asks, in a private temporary
folder, reads the few files below and removes them.  This module reads those
texts and needs neither jax nor Sphinx.

What each backend records (jax 0.10.2):

GPU, ``priority-fusion`` (``xla/backends/gpu/transforms/priority_fusion.cc``)
    with ``xla_dump_to`` and ``xla_dump_hlo_pass_re=priority-fusion``, a
    ``FusionProcessDumpProto`` in protobuf text (``*.priority_fusion_dump.txt``):
    ``fusion_steps { producer_ineligible { producer_name reason } }`` when a
    producer cannot be fused into all of its readers,
    ``fusion_steps { update_priority { producer_name consumer_names us_fused
    us_unfused } }`` with the cost model's estimates (fusing a producer whose
    fused time is above its unfused time makes things slower, so it is not
    done) and ``fusion_steps { fusion { fusion_name producer_name
    consumer_name } }`` for each fusion made.  The module right after the
    pass (``*.after_priority-fusion.*.txt``) comes with it.
CPU, ``fusion`` (``xla/service/cpu/cpu_instruction_fusion.cc``), and TPU, ``tpu_fusion``
    with ``xla_dump_fusion_visualization`` (collected only when asked for,
    ``JAXHLO_FUSION_DECISIONS=all``: the pass then renders the whole
    computation at every step, 7.9 times the compile of a 6-layer MLP's
    gradient on the CPU), the instruction-fusion pass writes
    a fusion explorer page (``*_fusion.html``) whose ``frames`` list holds
    one line per step: ``Not fusing |producer| into |consumer| as REASON``,
    ``Fused |producer| into |fusion| ...``.  On the CPU the module right after
    the pass (``*.after_fusion.*.txt``) comes with it; libtpu runs its pass
    several times, renames the fusions at the end and dumps no module after
    the pass that a name could be checked against, so its decisions are kept
    in the report but never tied to a finding.

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

import html
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sphinx_jaxhlo.core.report import FusionDecision, Reason, Report
from sphinx_jaxhlo.hlo.model import HloComputation, HloInstruction, HloModule, HloParseError
from sphinx_jaxhlo.hlo.parse import parse_module

__all__ = [
    "CPU_PASS",
    "CPU_SOURCE",
    "GPU_PASS",
    "GPU_SOURCE",
    "TPU_PASS",
    "Step",
    "attach_quotes",
    "gpu_decisions",
    "parse_fusion_visualization",
    "parse_priority_fusion_dump",
    "plain_words",
    "visualization_decisions",
]

GPU_PASS = "priority-fusion"
GPU_SOURCE = "xla/backends/gpu/transforms/priority_fusion.cc"
CPU_PASS = "fusion"
CPU_SOURCE = "xla/service/cpu/cpu_instruction_fusion.cc"
TPU_PASS = "tpu_fusion"
#: libtpu's fusion pass is not open source; its records use the same
#: instruction-fusion framework as the CPU's.
TPU_SOURCE = "libtpu (closed source; xla/service/instruction_fusion.cc records its steps)"

#: The most decisions a report keeps (a large module has thousands of steps).
MAX_DECISIONS = 400


@dataclass
class Step:
    """One step of a decision record, in the order the pass took it.

    :attr kind: ``fusion``, ``producer_ineligible``, ``update_priority`` (GPU),
        ``not_fusing`` (CPU, TPU).
    """

    kind: str
    producer: str
    consumers: list[str] = field(default_factory=list)
    #: The fusion made (``fusion`` steps).
    fusion: str = ""
    reason: str = ""
    us_fused: float | None = None
    us_unfused: float | None = None
    #: The step as the record writes it.
    record: str = ""


# -- the GPU's FusionProcessDumpProto ------------------------------------------

_TOKEN = re.compile(r'(?P<str>"[^"\\\n]*(?:\\.[^"\\\n]*)*")|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)'
                    r'|(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[fF]?|[-+]?inf|nan)|(?P<punct>[{}:<>\[\],;])'
                    r'|(?P<space>\s+)|(?P<bad>.)', re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\", "a": "\a", "b": "\b", "f": "\f",
            "v": "\v", "?": "?"}
_ESCAPE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|(.))", re.S)


def _unescape(body: str) -> str:
    """A protobuf text-format string literal's value (C escapes, octal and hex bytes as UTF-8)."""
    if "\\" not in body:
        return body

    def byte(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return chr(int(m.group(1), 8) & 0xFF)
        if m.group(2) is not None:
            return chr(int(m.group(2), 16))
        if m.group(3) in _ESCAPES:
            return _ESCAPES[m.group(3)]
        raise ValueError(f"unknown escape \\{m.group(3)}")

    if body.endswith("\\") and not body.endswith("\\\\"):
        raise ValueError("a string ends with a lone backslash")
    # escapes give bytes (latin-1 here), the rest is text: back to bytes, then UTF-8
    latin = _ESCAPE.sub(byte, body.encode("utf-8").decode("latin-1"))
    return latin.encode("latin-1").decode("utf-8", errors="replace")


class _Str(str):
    """A string literal as written (its escapes undone only when read)."""


class _ProtoText:
    """A reader of protobuf text format into nested dicts (field -> list of values)."""

    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str]] = []
        line = 1
        for m in _TOKEN.finditer(text):
            kind = m.lastgroup or ""
            if kind == "space":
                line += m.group(0).count("\n")
                continue
            if kind == "bad":
                raise ValueError(f"line {line}: unexpected text {text[m.start():m.start() + 20].strip()!r}")
            self.tokens.append((kind, m.group(0)))
        self.pos = 0

    def error(self, message: str) -> ValueError:
        return ValueError(f"token {self.pos}: {message}")

    def token(self) -> tuple[str, str] | None:
        if self.pos >= len(self.tokens):
            return None
        self.pos += 1
        return self.tokens[self.pos - 1]

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def message(self, closing: str | None, depth: int = 0) -> dict[str, list[object]]:
        if depth > 64:
            raise self.error("nested too deeply")
        fields: dict[str, list[object]] = {}
        while True:
            tok = self.token()
            if tok is None:
                if closing is not None:
                    raise self.error("unclosed message")
                return fields
            kind, value = tok
            if kind == "punct" and value == closing:
                return fields
            if kind == "punct" and value in ",;":
                continue
            if kind != "name":
                raise self.error(f"expected a field name, found {value[:20]!r}")
            nxt = self.peek()
            if nxt is not None and nxt == ("punct", ":"):
                self.token()
                nxt = self.peek()
            if nxt is not None and nxt[0] == "punct" and nxt[1] in "{<":
                self.token()
                fields.setdefault(value, []).append(self.message("}" if nxt[1] == "{" else ">", depth + 1))
                continue
            fields.setdefault(value, []).extend(self.scalars())

    def scalars(self) -> list[object]:
        tok = self.token()
        if tok is None:
            raise self.error("a field without a value")
        kind, value = tok
        if kind == "punct" and value == "[":
            out: list[object] = []
            while True:
                nxt = self.peek()
                if nxt is None:
                    raise self.error("unclosed list")
                if nxt == ("punct", "]"):
                    self.token()
                    return out
                if nxt == ("punct", ","):
                    self.token()
                    continue
                out.extend(self.scalars())
        if kind == "str":
            parts = [value[1:-1]]
            while (nxt := self.peek()) is not None and nxt[0] == "str":  # adjacent literals concatenate
                self.token()
                parts.append(nxt[1][1:-1])
            return [_Str("".join(parts))]
        if kind == "num":
            try:
                return [float(value.rstrip("fF")) if any(c in value for c in ".eEinfa") else int(value)]
            except ValueError:
                return [value]
        if kind == "name":
            return [value]
        raise self.error(f"unexpected {value!r}")


def _text(fields: dict[str, list[object]], key: str) -> str:
    values = fields.get(key) or [""]
    value = values[-1]
    return _unescape(value) if isinstance(value, _Str) else str(value)


def _number(fields: dict[str, list[object]], key: str) -> float | None:
    values = fields.get(key) or []
    value = values[-1] if values else None
    return float(value) if isinstance(value, (int, float)) else None


def _quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def parse_priority_fusion_dump(text: str) -> tuple[list[Step], str | None]:
    """The steps of a GPU ``FusionProcessDumpProto`` in text form.

    :return: the steps in order, and ``None``; or no steps and why the text
        could not be read (never an exception).
    """
    # Only the fusion steps are read: the record's other top-level fields
    # (the device description, the whole module before the pass as one
    # string) are skipped unread, where the text puts one field per line.
    wanted = [part for part in re.split(r"(?m)^(?=[A-Za-z_])", text) if not part[:1].isalpha()
              or part.startswith("fusion_steps")]
    quick = _quick_steps(wanted)
    if quick is not None:
        return quick, None
    try:
        top = _ProtoText("".join(wanted)).message(None)
        steps: list[Step] = []
        for entry in top.get("fusion_steps", []):
            if not isinstance(entry, dict):
                continue
            for kind, values in entry.items():
                for body in values:
                    if not isinstance(body, dict):
                        continue
                    step = _gpu_step(kind, body)
                    if step is not None:
                        steps.append(step)
    except (ValueError, RecursionError) as exc:
        return [], f"the priority-fusion record does not parse: {exc}"
    if not steps and "fusion_steps" not in top:
        return [], "the priority-fusion record holds no fusion steps"
    return steps, None


_FLAT_STEP = re.compile(r"fusion_steps\s*\{\s*(\w+)\s*\{([^{}]*)\}\s*\}\s*", re.S)
_FLAT_FIELD = re.compile(r'(\w+)\s*:\s*(?:"([^"\\\n]*(?:\\.[^"\\\n]*)*)"|([-+\w.]+))\s*')


def _quick_steps(parts: Sequence[str]) -> list[Step] | None:
    """The steps, read with two regular expressions per step when every step
    is one flat message per ``fusion_steps`` line group (as XLA writes them);
    ``None`` when the text is in any other form (then the full reader reads it)."""
    steps: list[Step] = []
    for part in parts:
        if not part.strip():
            continue
        m = _FLAT_STEP.fullmatch(part)
        if m is None:
            return None
        body: dict[str, list[object]] = {}
        pos = 0
        inner = m.group(2)
        for f in _FLAT_FIELD.finditer(inner):
            if inner[pos:f.start()].strip():
                return None
            pos = f.end()
            if f.group(2) is not None:
                body.setdefault(f.group(1), []).append(_Str(f.group(2)))
            else:
                raw = f.group(3)
                try:
                    value: object = float(raw) if any(c in raw for c in ".eEinfa") else int(raw)
                except ValueError:
                    return None
                body.setdefault(f.group(1), []).append(value)
        if inner[pos:].strip():
            return None
        try:
            step = _gpu_step(m.group(1), body)
        except ValueError:
            return None
        if step is not None:
            steps.append(step)
    return steps if steps else None


def _gpu_step(kind: str, body: dict[str, list[object]]) -> Step | None:
    if kind == "fusion":
        producer, consumer, fusion = (_text(body, k) for k in ("producer_name", "consumer_name", "fusion_name"))
        record = (f"fusion {{ fusion_name: {_quote(fusion)} producer_name: {_quote(producer)} "
                  f"consumer_name: {_quote(consumer)} }}")
        return Step("fusion", producer, [consumer], fusion=fusion, record=record)
    if kind == "producer_ineligible":
        producer, reason = _text(body, "producer_name"), _text(body, "reason")
        record = f"producer_ineligible {{ producer_name: {_quote(producer)} reason: {_quote(reason)} }}"
        return Step("producer_ineligible", producer, reason=reason, record=record)
    if kind == "update_priority":
        producer = _text(body, "producer_name")
        consumers = [_unescape(c) if isinstance(c, _Str) else str(c) for c in body.get("consumer_names", [])]
        fused, unfused = _number(body, "us_fused"), _number(body, "us_unfused")
        names = " ".join(f"consumer_names: {_quote(c)}" for c in consumers)
        record = (f"update_priority {{ producer_name: {_quote(producer)} {names} us_fused: {fused} "
                  f"us_unfused: {unfused} }}").replace("  ", " ")
        return Step("update_priority", producer, consumers, us_fused=fused, us_unfused=unfused, record=record)
    return None


# -- the CPU's and TPU's fusion visualization ----------------------------------------

_FRAMES = re.compile(r"\bconst\s+frames\s*=\s*")
_NOT_FUSING = re.compile(r"Not fusing \|(?P<p>[^|]*)\| into \|(?P<c>[^|]*)\| as (?P<why>.*)", re.S)
_FUSED = re.compile(r"Fused \|(?P<p>[^|]*)\| into \|(?P<f>[^|]*)\|")
_ABOUT = re.compile(r"About to (?:MOF-)?fuse \|(?P<p>[^|]*)\| into \|(?P<c>[^|]*)\|")


def _frame_labels(text: str) -> list[str] | None:
    m = _FRAMES.search(text)
    if m is None:
        return None
    try:
        frames, _ = json.JSONDecoder().raw_decode(text, m.end())
    except ValueError:
        return None
    if not isinstance(frames, list):
        return None
    return [html.unescape(f[1]) for f in frames if isinstance(f, list) and len(f) > 1 and isinstance(f[1], str)]


def parse_fusion_visualization(text: str) -> tuple[list[Step], str | None]:
    """The steps of an instruction-fusion pass from its fusion explorer page
    (``xla_dump_fusion_visualization``).

    :return: the steps in order, and ``None``; or no steps and why the page
        could not be read (never an exception).
    """
    labels = _frame_labels(text)
    if labels is None:
        return [], "the fusion visualization holds no list of frames that can be read"
    steps: list[Step] = []
    pending: dict[str, str] = {}  # fusion made -> the consumer it replaced, from "About to fuse"
    for label in labels:
        if (m := _NOT_FUSING.match(label)) is not None:
            steps.append(Step("not_fusing", m["p"], [m["c"]], reason=m["why"].strip(), record=label))
        elif (m := _ABOUT.match(label)) is not None:
            pending[m["p"]] = m["c"]
        elif (m := _FUSED.match(label)) is not None:
            consumer = pending.pop(m["p"], m["f"])
            steps.append(Step("fusion", m["p"], [consumer], fusion=m["f"], record=label))
    return steps, None


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
    return f"XLA {decision.pass_name} ({decision.source_file}), about {about}: {_quote(decision.reason)}"


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


# -- collecting: the options and the files -------------------------------------------

#: The most a file of the record may hold to be read.
MAX_RECORD_BYTES = 64 * 2**20


#: Why the CPU's and TPU's records are not collected unless asked for.
COSTLY = ("not collected: the {platform}'s record (the fusion visualization) renders the computation at every "
          "step, which multiplies compile time (7.9x measured on a 6-layer MLP's gradient on the CPU); "
          "JAXHLO_FUSION_DECISIONS=all collects it")


def collection_options(platform: str, folder: str, *, everything: bool = False) -> dict[str, object]:
    """The XLA options that make a compile for ``platform`` record its fusion
    decisions in ``folder``: they change what XLA writes, not what it compiles.

    :param platform: ``cpu``, ``cuda`` or ``tpu``.
    :param everything: also the CPU's and TPU's records, which are costly
        (:data:`COSTLY`); by default only the GPU's, which is cheap.
    """
    if platform == "cuda":
        return {"xla_dump_to": folder, "xla_dump_hlo_pass_re": GPU_PASS}
    if platform == "cpu" and everything:
        return {"xla_dump_to": folder, "xla_dump_fusion_visualization": True,
                "xla_dump_hlo_pass_re": f"^{CPU_PASS}$"}
    if platform == "tpu" and everything:
        return {"xla_dump_to": folder, "xla_dump_fusion_visualization": True}
    return {}


def collection_refused(flags: Iterable[str], environment_flags: str) -> str | None:
    """Why the record is not collected for a compile, or ``None``: the
    example's own dump options, or ``XLA_FLAGS``', would be overridden."""
    own = sorted(f for f in flags if f.startswith("xla_dump"))
    if own:
        return f"not collected: the example sets {', '.join(own)}"
    if "--xla_dump" in environment_flags:
        return "not collected: XLA_FLAGS sets dump options"
    return None


def _read(path: str) -> str | None:
    import os

    try:
        if os.path.getsize(path) > MAX_RECORD_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _module_prefix(folder: str, module_name: str, suffix: str) -> str | None:
    """``module_0007.jit_f`` of the last module of that name with a file ending in ``suffix``."""
    import os

    best: tuple[int, str] | None = None
    pattern = re.compile(r"(?:.*\.)?(module_(\d+)\." + re.escape(module_name) + r")\b")
    for name in os.listdir(folder):
        if not name.endswith(suffix):
            continue
        m = pattern.match(name)
        if m is not None and (best is None or int(m.group(2)) > best[0]):
            best = (int(m.group(2)), m.group(1))
    return best[1] if best else None


def collect(platform: str, folder: str, optimized_hlo: str | HloModule) -> tuple[list[FusionDecision], str]:
    """Read the record a compile left in ``folder`` (only the files needed).

    :param optimized_hlo: the compiled module's text, or that text parsed, to map names to.
    :return: the decisions and a note (never an exception).
    """
    import os

    if isinstance(optimized_hlo, HloModule):
        module_name = optimized_hlo.name
    else:
        m = re.match(r"\s*HloModule\s+([^\s,]+)", optimized_hlo)
        if m is None:
            return [], "not collected: the optimized module has no name"
        module_name = m.group(1)
    try:
        names = os.listdir(folder)
    except OSError as exc:
        return [], f"not collected: {exc.strerror}"
    if platform == "cuda":
        prefix = _module_prefix(folder, module_name, ".priority_fusion_dump.txt")
        if prefix is None:
            return [], "XLA wrote no priority-fusion record"
        dump = _read(os.path.join(folder, f"{prefix}.priority_fusion_dump.txt"))
        if dump is None:
            return [], "the priority-fusion record could not be read (missing or too large)"
        after = sorted(n for n in names if n.startswith(prefix + ".") and ".after_priority-fusion." in n)
        after_text = _read(os.path.join(folder, after[-1])) if after else None
        return gpu_decisions(dump, optimized_hlo, after_text)
    if platform in ("cpu", "tpu"):
        pages = sorted(n for n in names if n.endswith("_fusion.html") and f".{module_name}." in n)
        if not pages:
            return [], "XLA wrote no fusion visualization"
        decisions: list[FusionDecision] = []
        notes: list[str] = []
        after_text = None
        if platform == "cpu":
            prefix = _module_prefix(folder, module_name, ".txt")
            after = sorted(n for n in names if prefix and n.startswith(prefix + ".") and f".after_{CPU_PASS}." in n)
            after_text = _read(os.path.join(folder, after[-1])) if after else None
        for page_name in pages:
            page = _read(os.path.join(folder, page_name))
            if page is None:
                notes.append(f"{page_name} could not be read")
                continue
            found, note = visualization_decisions(
                page, optimized_hlo, after_text, pass_name=CPU_PASS if platform == "cpu" else TPU_PASS,
                source_file=CPU_SOURCE if platform == "cpu" else TPU_SOURCE, map_names=platform == "cpu")
            decisions.extend(found)
            notes.append(note)
        return decisions[:MAX_DECISIONS], "; ".join(notes)
    return [], f"no decision record is known for the platform {platform}"
