"""XLA's records of its fusion decisions, read into steps.

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

:func:`parse_priority_fusion_dump` and :func:`parse_fusion_visualization` read
those texts into :class:`Step` records, in the order the pass took them; which
of them stand, and what they are about in the optimized module, is decided in
:mod:`sphinx_jaxhlo.hlo.decisions.quotes`.  What a record's reason means is read here
too: :data:`RECORD_RULES` names the function of XLA's source that writes each
reason (``the producer is not fusible``: priority fusion's file-local
``IsFusible`` through ``PriorityFusionQueue::CanFuse``; a GPU
``update_priority`` refusal: the cost model, ``CalculateProducerPriority``),
:func:`record_rule` looks it up and :func:`plain_words` says it in a JAX
user's words.  Needs neither jax nor Sphinx.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from sphinx_jaxhlo.core.report import FusionDecision

__all__ = [
    "COST_MODEL_RULE",
    "CPU_PASS",
    "CPU_SOURCE",
    "END_STATE",
    "GPU_PASS",
    "GPU_SOURCE",
    "RECORD_RULES",
    "TPU_PASS",
    "TPU_SOURCE",
    "Step",
    "parse_fusion_visualization",
    "parse_priority_fusion_dump",
    "plain_words",
    "quote",
    "record_rule",
]

GPU_PASS = "priority-fusion"
GPU_SOURCE = "xla/backends/gpu/transforms/priority_fusion.cc"
CPU_PASS = "fusion"
CPU_SOURCE = "xla/service/cpu/cpu_instruction_fusion.cc"
TPU_PASS = "tpu_fusion"
#: libtpu's fusion pass is not open source; its records use the same
#: instruction-fusion framework as the CPU's.
TPU_SOURCE = "libtpu (closed source; xla/service/instruction_fusion.cc records its steps)"


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


def quote(value: str) -> str:
    """A string in double quotes, escaped as JSON: how records and quotations write names and reasons."""
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
        record = (f"fusion {{ fusion_name: {quote(fusion)} producer_name: {quote(producer)} "
                  f"consumer_name: {quote(consumer)} }}")
        return Step("fusion", producer, [consumer], fusion=fusion, record=record)
    if kind == "producer_ineligible":
        producer, reason = _text(body, "producer_name"), _text(body, "reason")
        record = f"producer_ineligible {{ producer_name: {quote(producer)} reason: {quote(reason)} }}"
        return Step("producer_ineligible", producer, reason=reason, record=record)
    if kind == "update_priority":
        producer = _text(body, "producer_name")
        consumers = [_unescape(c) if isinstance(c, _Str) else str(c) for c in body.get("consumer_names", [])]
        fused, unfused = _number(body, "us_fused"), _number(body, "us_unfused")
        names = " ".join(f"consumer_names: {quote(c)}" for c in consumers)
        record = (f"update_priority {{ producer_name: {quote(producer)} {names} us_fused: {fused} "
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


# -- what a record's reason means: the rule that wrote it, in plain words ----------

_PF = "xla/backends/gpu/transforms/priority_fusion.cc"
_NATIVE = "PriorityFusionQueue::CanFuseWithNativeEmitter"
_ALL_USERS = "PriorityFusionQueue::CanFuseWithAllNonBitcastUsers"
_IS_FUSIBLE = "IsFusible (file-local in priority_fusion.cc), through PriorityFusionQueue::CanFuse"
#: The rule of XLA's source that writes each reason of a record, by the start
#: of the reason: (rule, source file).  Each function is in the installed XLA
#: (jax 0.10.2's compiled plugin holds its symbol, or the reason string where
#: the function is inlined: CanFuseWithNativeEmitter, CalculateProducerPriority).
RECORD_RULES: tuple[tuple[str, str, str], ...] = (
    ("the producer is not fusible", _IS_FUSIBLE, _PF),
    ("the consumer is not fusible", _IS_FUSIBLE, _PF),
    ("not fusing into the output of the root instruction", "PriorityFusionQueue::CanFuse", _PF),
    ("both the producer and the consumer contain a reduce", _NATIVE, _PF),
    ("fusion into output of a reduce fusion would create a loop fusion", _NATIVE, _PF),
    ("not fusing into a single bitcast as consumer", _NATIVE, _PF),
    ("the fusion would result in an overly large code duplication",
     f"GpuHloCostAnalysis::ProducerConsumerMergedTooLarge, through {_NATIVE}", _PF),
    ("do not fuse into the output of scatter", f"CanEmitInputFusedScatter, through {_NATIVE}",
     "xla/service/gpu/gpu_fusible.cc"),
    ("do not fuse into the in-place operand of scatter", f"CanEmitInputFusedScatter, through {_NATIVE}",
     "xla/service/gpu/gpu_fusible.cc"),
    ("not fusing because there are only bitcast users", _ALL_USERS, _PF),
    ("No users to fuse", _ALL_USERS, _PF),
    ("Producer is not loop-fusible", "CpuInstructionFusion::ShouldFuse", CPU_SOURCE),
    ("Don't fuse instructions from custom fusions/calls", "CpuInstructionFusion::ShouldFuse", CPU_SOURCE),
    ("Don't fuse non-scalar constants", "CpuInstructionFusion::ShouldFuse", CPU_SOURCE),
)
#: Records that only see the end state of an earlier pass's decision: the CPU's loop fusion
#: meets a YNN kernel the library rewriter built (and decided the contents of) before it ran.
END_STATE = ("Don't fuse instructions from custom fusions/calls",)
#: The rule of a GPU ``update_priority`` refusal (the cost model).
COST_MODEL_RULE = ("PriorityFusionQueue::CalculateProducerPriority (a negative priority, which "
                   "ComputeAndSetPriorities never queues)", _PF)

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
    ("do not fuse into the output of scatter", "a scatter's output is not fused into the kernel that reads it"),
    ("do not fuse into the in-place operand of scatter", "the buffer a scatter updates in place is not fused"),
    ("Producer is not loop-fusible", "XLA's CPU loop fusion takes in only elementwise and data-movement "
     "producers, not a dot, a custom fusion or a call"),
    ("Don't fuse instructions from custom fusions/calls", "the reader is a custom fusion (on the CPU, a "
     "YNNPACK kernel) that the CPU's loop fusion does not change: what it takes in was decided by the library "
     "rewriter"),
    ("Don't fuse non-scalar constants", "a constant array is read, not recomputed"),
    ("fused ", "the cost model estimated the fused kernels slower than the unfused ones"),
)

_US = re.compile(r"fused (?P<fused>[-+\d.e]+) us, unfused (?P<unfused>[-+\d.e]+) us")


def plain_words(decision: FusionDecision) -> str:
    """The compiler's reason said in plain words (the reason itself when it is not a known one)."""
    if decision.kind == "slower-fused":
        m = _US.search(decision.reason)
        if m is None:
            return _PLAIN[-1][1]
        fused, unfused = float(m["fused"]), float(m["unfused"])
        readers = len(decision.consumers)
        into = {1: "into its reader", 2: "into both of its readers"}.get(readers, f"into all {readers} of its readers")
        return (f"XLA's cost model estimated the kernels with this producer fused {into} at {fused:.1f} us, "
                f"against {unfused:.1f} us apart: fusing would be slower, the producer's priority is negative, "
                f"and priority fusion never takes it up")
    for start, words in _PLAIN:
        if decision.reason.startswith(start):
            return words
    return decision.reason


def record_rule(decision: FusionDecision) -> tuple[str, str]:
    """The rule of XLA's source that wrote a decision's reason, and its file
    (:data:`RECORD_RULES`); the pass and its file when the reason is not a known one."""
    if decision.kind == "slower-fused":
        return COST_MODEL_RULE
    for start, rule, source in RECORD_RULES:
        if decision.reason.startswith(start):
            return rule, source
    return decision.pass_name, decision.source_file
