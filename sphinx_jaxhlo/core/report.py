"""The report: what one compile of one function for one target produced.

The report is plain data.  It is written by the compiler worker, stored by the
cache as JSON, read by the renderers, the expectations and the Python API.  Its
JSON form is documented in ``docs/reference/report.md`` and versioned by
:data:`SCHEMA_VERSION`; bump it whenever a field changes meaning or shape.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from sphinx_jaxhlo.core.memory import DEVICE_MEMORY_SPACE, TPU_SCALAR_MEMORY_SPACE, LiveAtPeak, LiveBuffer, Memory
from sphinx_jaxhlo.predict.answer import Prediction

#: Version of the JSON form.  Part of every cache key.
SCHEMA_VERSION = 7

#: :attr:`Reduction.origin` values: who wrote the reduction.
#: ``user``: the program's own (``jnp.sum``, ``mean``, ``max``, ``argmax``,
#: ``logsumexp``, ``lax.reduce``, a gradient's sums...); the only ones verdicts
#: are about.  The others are made by the compiler: ``second-stage`` adds the
#: partial results another reduction wrote (GPU row reductions, CPU tree
#: reductions); ``dot`` is part of a dot or convolution (the partial products
#: of a GEMM split along its contraction, "split-K", or a small dot computed as
#: multiply and reduce); ``scan`` is a sliding window that writes as much as it
#: reads (the prefix-scan stages of ``cumsum``, ``cummax``, ``cumprod``);
#: ``compiler`` is one the compiler made for another operation (named by
#: :attr:`Reduction.op`: a ``sort``, a ``top_k``...).
REDUCTION_ORIGINS = ("user", "second-stage", "dot", "scan", "compiler")

#: :attr:`Materialized.kind` values: ``intermediate``, a value the program
#: computed; ``argument-copy``, a buffer that only holds argument data (a TPU
#: prefetch ``copy-start``/``copy-done`` of a parameter, a layout ``copy``, the
#: ``slice-start``/``slice-done`` pieces of a parameter joined by a
#: ``ConcatBitcast``); ``host``, a buffer in host memory (an ``S(5)`` layout,
#: or passed between the instructions of a computation on the host thread),
#: which is not on the device's memory budget.
BUFFER_KINDS = ("intermediate", "argument-copy", "host")


@dataclass
class Reason:
    """Why a stored buffer was not fused into the kernel that reads it: what
    made it, the rule that kept it apart, and what to write instead."""

    #: What made the stored buffer, in a JAX user's words (one of the kinds
    #: documented in ``docs/reference/analysis.md``: ``gemm``, ``convolution``,
    #: ``custom-call``, ``sort``, ``gather``, ``scatter``, ``loop-output``,
    #: ``product-reduction``, ``multi-reader-fusion``, ``ynn``, ``collective``...).
    producer_kind: str
    #: The reason in plain words.
    text: str
    #: The compiler rule that applies: the pass (``priority-fusion``...) and
    #: its source file in openxla/xla.
    rule: str = ""
    source_file: str = ""
    #: The compiler's own words from its decision record, verbatim, or
    #: ``None`` when the backend records nothing and the reason is derived
    #: from the HLO's structure.
    quoted: str | None = None
    #: Labels of the guide's sections with bounded alternatives.
    alternatives: list[str] = field(default_factory=list)

    @property
    def derived(self) -> bool:
        """True when the reason was read off the HLO, not quoted from the compiler."""
        return self.quoted is None


@dataclass
class FusionDecision:
    """One refusal from the compiler's own record of its fusion decisions
    (:mod:`sphinx_jaxhlo.hlo.decisions.quotes`): the pass that refused, about which
    producer and consumer, in its own words."""

    #: The XLA pass that decided: ``priority-fusion`` (GPU), ``fusion`` (CPU).
    pass_name: str
    #: The pass's source file in openxla/xla.
    source_file: str
    #: ``producer-ineligible`` (GPU: the producer cannot be fused into all of
    #: its readers), ``slower-fused`` (GPU: the cost model estimated the
    #: fused kernels slower), ``not-fused`` (CPU: this producer into this consumer).
    kind: str
    #: The producer as the record names it (the module during the pass,
    #: before later passes rename fusions).
    producer: str
    #: Its readers as the record (or the module right after the pass) names them.
    consumers: list[str]
    #: The compiler's reason, verbatim.
    reason: str
    #: The record's entry, verbatim.
    record: str = ""
    #: The producer's name in the optimized module, or ``None`` when it could
    #: not be mapped reliably (then :attr:`mapping` says why).
    producer_instruction: str | None = None
    #: The readers' names in the optimized module, one for each of
    #: :attr:`consumers` (``""`` for one that could not be mapped).
    consumer_instructions: list[str] = field(default_factory=list)
    #: How the names were mapped to the optimized module, or why not.
    mapping: str = ""
    #: Where the producer became one output of a multi-output kernel of the
    #: optimized module: which output (its index in the kernel's result); else ``None``.
    producer_element: int | None = None


@dataclass
class Cost:
    """Figures from ``compiled.cost_analysis()``."""

    flops: float | None = None
    transcendentals: float | None = None
    bytes_accessed: float | None = None


@dataclass
class Fusion:
    """One top-level fusion or significant instruction of the entry computation
    (or of a loop body)."""

    name: str
    #: Fusion kind without the ``k`` prefix (``Loop``, ``Input``, ``Output``,
    #: ``Custom``) or, for an instruction that is not a fusion, its opcode.
    kind: str
    #: The custom fusion kind from ``backend_config`` (``__triton_nested_gemm_fusion``,
    #: ``__ynn_fusion``, a cuBLAS custom-call target...), or ``None``.
    custom_kind: str | None
    #: The opcodes it holds, in program order, without parameters and constants,
    #: e.g. ``["dot", "cosine", "reduce"]``.
    ops: list[str]
    #: Result shape as HLO writes it, without layout: ``f32[50000,100000]``.
    shape: str
    bytes: int
    #: Lines of the example this instruction was traced from (1-based).
    source_lines: list[int] = field(default_factory=list)
    #: The computation this instruction sits in (the entry, or a loop body).
    computation: str = ""
    #: The memory space its result's layout names (``S(6)``: 6); 0, the device's default memory.
    memory_space: int = 0


@dataclass
class Materialized:
    """A value produced by one top-level instruction and read by another: it
    lives in memory between the two."""

    name: str
    shape: str
    bytes: int
    producer: str
    consumers: list[str]
    #: Source lines of the producer.
    source_lines: list[int] = field(default_factory=list)
    computation: str = ""
    #: The JAX operation that produced it (``dot_general``, ``cos``...) from
    #: the metadata's ``op_name``, when known.
    producer_op: str | None = None
    #: ``intermediate`` or ``argument-copy`` (see :data:`BUFFER_KINDS`).
    kind: str = "intermediate"
    #: For a buffer an unfused reduction of the program's reads: what made it
    #: and why it was not fused into that reduction; ``None`` otherwise.
    #: Why it was not fused into its readers, when the analysis says.
    reason: Reason | None = None
    #: The memory space its layout names (:data:`MEMORY_SPACE_NAMES`): 0, the device's memory
    #: (a TPU's HBM); 1, a TPU chip's own memory.
    memory_space: int = DEVICE_MEMORY_SPACE

    @property
    def in_device_memory(self) -> bool:
        """Whether it takes the device's memory (a TPU's HBM), not on-chip or host memory."""
        return self.memory_space == DEVICE_MEMORY_SPACE


@dataclass
class Reduction:
    """One ``reduce`` instruction and whether the data it reduces went through memory."""

    #: The reduce instruction's name.
    name: str
    #: The top-level instruction (usually a fusion) that holds the reduce.
    fusion: str
    #: The ops computed inside the same fusion that feed the reduce.
    fused_with: list[str]
    #: Name of the materialized buffer the reduce reads its data from, or ``None``
    #: when the reduced data is computed inside the fusion from smaller inputs.
    input_materialized: str | None
    #: Size of the reduce's data operand, in bytes.
    input_bytes: int
    input_shape: str = ""
    source_lines: list[int] = field(default_factory=list)
    computation: str = ""
    #: For the second stage of a split reduction (it reads, as is, the partial
    #: results another reduction wrote), the buffer of those partial results.
    #: Such a stage inherits the verdict of the first and is left out of verdicts.
    partial_of: str | None = None
    #: The JAX operation the reduce was traced from (``reduce_sum``,
    #: ``argmax``, ``dot_general``...), from the metadata's ``op_name``.
    op: str | None = None
    #: Who wrote it: one of :data:`REDUCTION_ORIGINS`.  Only ``user``
    #: reductions get a verdict.
    origin: str = "user"
    #: For an unfused reduction of the program's: what made the buffer it
    #: reads and why it was not fused into this reduction; ``None`` otherwise.
    #: Why the stored buffer it reads was not fused into it (unfused reductions).
    reason: Reason | None = None
    #: A reduction of the program's too small to decide its summary and checks
    #: (the line is stated in ``sphinx_jaxhlo.hlo.fusion``); it keeps its verdict.
    minor: bool = False

    @property
    def fused(self) -> bool:
        """True when the reduced data never went to memory."""
        return self.input_materialized is None

    @property
    def is_users(self) -> bool:
        """A reduction the program asked for (not one the compiler made)."""
        return self.origin == "user"


def _with_reason(cls: Any, data: dict[str, Any]) -> Any:
    """A :class:`Materialized` or :class:`Reduction` from its JSON form, its ``reason`` a :class:`Reason`."""
    d = dict(data)
    reason = d.get("reason")
    d["reason"] = Reason(**reason) if reason else None
    return cls(**d)


def _live_at_peak(data: dict[str, Any]) -> LiveAtPeak:
    """A :class:`LiveAtPeak` from its JSON form, its buffers :class:`LiveBuffer` s."""
    d = dict(data)
    for key in ("buffers", "elsewhere"):
        d[key] = [LiveBuffer(**b) for b in d.get(key) or []]
    return LiveAtPeak(**d)


@dataclass
class Sharding:
    """How one argument or result of a program on several devices is laid out."""

    #: Which argument or result: ``argument 1``, ``scale``, ``result['y']``.
    path: str
    #: The whole array: ``f32[8192,8192]``.
    shape: str
    #: Its ``PartitionSpec`` as jax writes it (``P('data', None)``), ``replicated``
    #: (every device holds all of it), or ``one device``.
    spec: str
    #: The piece one device holds: ``f32[2048,8192]``.
    device_shape: str


@dataclass
class Collective:
    """One collective of the compiled program: data exchanged between devices.
    The rules are stated in ``sphinx_jaxhlo.hlo.collectives``."""

    #: The instruction (the ``-start`` of an asynchronous pair).
    name: str
    #: ``all-gather``, ``all-reduce``, ``reduce-scatter``, ``all-to-all``,
    #: ``ragged-all-to-all``, ``collective-permute`` or ``collective-broadcast``.
    kind: str
    #: The result on one device, without layout: ``f32[8192,8192]``.
    shape: str
    #: Its operand(s) on one device.
    operand_shape: str
    #: Bytes per device: the larger of operands and result.
    bytes: int
    #: The mesh axes it runs over, in mesh order (``[]``: none, each device
    #: alone); ``None`` when its groups are not those of any set of axes.
    axes: list[str] | None
    #: Its replica groups in words: ``2 groups of 4 devices``, ``8 source-target pairs``.
    groups: str
    #: Started and finished by two instructions, so that work can run in between.
    is_async: bool
    #: Whether compute runs while it is in flight; ``None``: unknown.
    overlapped: bool | None
    #: The instructions that compute while it is in flight.
    overlaps_with: list[str] = field(default_factory=list)
    #: The ``-done`` that ends it, when asynchronous.
    done: str | None = None
    #: The computation it runs in (the entry, or a loop body).
    computation: str = ""
    #: The top-level fusion that holds it, when it is fused (TPU collective
    #: fusions), and that fusion's computation (``all-reduce-scatter``...).
    fusion: str | None = None
    fused_computation: str | None = None
    #: It runs inside a loop body (once per iteration).
    in_loop: bool = False
    #: How many times the loops around it run, when XLA knows.
    trip_count: int | None = None
    source_lines: list[int] = field(default_factory=list)
    #: The JAX operation it was made for (``dot_general``, ``reduce_sum``,
    #: ``sharding_constraint``, ``psum``...), from the metadata's ``op_name``.
    op: str | None = None
    #: How many instructions of the module are this collective (a TPU collective
    #: fusion spreads one over several).
    copies: int = 1


@dataclass
class CompileError:
    """A failed compile, kept as a result."""

    #: The status, e.g. ``RESOURCE_EXHAUSTED``, ``INVALID_ARGUMENT``.
    status: str
    message: str
    #: For an out-of-memory at compile time, the bytes needed and available
    #: when the message says so.
    needed_bytes: int | None = None
    available_bytes: int | None = None


@dataclass(frozen=True)
class TargetFailure:
    """A target that produced no report (a compile error is a report, with
    its ``error`` set): the one form every output shows a failed target in."""

    target: str
    function: str
    #: ``timeout``, ``crash``, ``trace``, ``args``, ``example``, ``function``...
    #: (the directive's warning subtypes).
    kind: str
    message: str
    #: 1-based line in the function's file, when known.
    line: int | None = None

    def describe(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.function} on {self.target}: no report ({self.kind}): {self.message}{where}"


#: Fusion kinds (``Fusion.kind``) that are kernels of their own.
KERNEL_FUSION_KINDS = frozenset({"Loop", "Input", "Output", "Custom"})
#: Top-level instructions outside a fusion that launch no kernel: control flow (its
#: bodies' instructions count), data movement the DMA engines or the runtime do (a
#: TPU's prefetches and slices, buffer allocation), and communication (collectives,
#: counted apart); views (bitcast, tuple, get-tuple-element) are never listed.
NOT_KERNELS = frozenset({
    "while", "conditional", "call", "async-start", "async-update", "async-done",
    "copy-start", "copy-done", "slice-start", "slice-done", "send", "send-done", "recv", "recv-done",
    "partition-id", "replica-id", "after-all", "add-dependency", "opt-barrier", "optimization-barrier",
})  # fmt: skip
#: Custom calls that only join or reserve buffers (TPU): no kernel.
NOT_KERNEL_CUSTOM_CALLS = frozenset({"ConcatBitcast", "AllocateBuffer"})
#: The kinds of collective, as HLO names them (without ``-start``/``-done``).
COLLECTIVE_KINDS = ("all-gather", "all-reduce", "reduce-scatter", "all-to-all", "ragged-all-to-all",
                    "collective-permute", "collective-broadcast")


def is_kernel(fusion: Fusion) -> bool:
    """Whether a top-level fusion or instruction is a kernel: a unit of work the
    program launches (GPU), runs as one step (TPU) or calls as one loop nest or
    library call (CPU).  Every fusion is one; so is an instruction the compiler left
    unfused that computes (a TPU's scalar ``add`` that writes device memory, a CPU's
    ``dot``, a ``sort``, a ``copy``, a cuBLAS call), but not control flow, DMA moves
    or collectives, nor work whose result the TPU compiler keeps in the core's
    scalar memory (:data:`TPU_SCALAR_MEMORY_SPACE`): the copy of a scalar argument
    into it, or scalar arithmetic there, is the scalar unit's bookkeeping between
    kernels (``2*x + y`` on ``i32[]`` is one kernel, the ``add`` that writes the
    result, not four)."""
    if fusion.memory_space == TPU_SCALAR_MEMORY_SPACE:
        return False
    if fusion.kind in KERNEL_FUSION_KINDS:
        return True
    if fusion.kind in NOT_KERNELS or fusion.kind.startswith(COLLECTIVE_KINDS):
        return False
    return not (fusion.kind == "custom-call" and fusion.custom_kind in NOT_KERNEL_CUSTOM_CALLS)


@dataclass
class Report:
    """Everything one compile produced for one (function, target)."""

    function: str
    target: str
    #: Human name of the target, e.g. ``NVIDIA H100 SXM (deviceless)``.
    target_description: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    memory: Memory = field(default_factory=Memory)
    cost: Cost = field(default_factory=Cost)
    fusions: list[Fusion] = field(default_factory=list)
    #: Intermediates: values the program computed that live in memory
    #: between two kernels.
    materialized: list[Materialized] = field(default_factory=list)
    #: Buffers that only hold argument data (copies, prefetches), kept apart
    #: from the intermediates.
    argument_copies: list[Materialized] = field(default_factory=list)
    #: Buffers in host memory (kind ``host``), kept apart from the device's.
    host_buffers: list[Materialized] = field(default_factory=list)
    #: The instructions of computations on the host thread (host offloading),
    #: kept apart from the device's kernels.
    host_fusions: list[Fusion] = field(default_factory=list)
    reductions: list[Reduction] = field(default_factory=list)
    error: CompileError | None = None
    #: Optimized HLO text (``compiled.as_text()``).
    hlo: str = ""
    #: Lowered StableHLO text, when asked for.
    stablehlo: str = ""
    #: The jaxpr, when asked for.
    jaxpr: str = ""
    #: The example's source, to map source lines back.
    source: str = ""
    compile_seconds: float = 0.0
    #: Why the fusion analysis could not be made (the HLO did not parse), or ``None``.
    analysis_error: str | None = None
    #: How many devices the program runs on (one SPMD program each); the
    #: memory figures are those of one device.
    devices: int = 1
    #: The mesh the program was compiled over, ``[[axis name, size], ...]`` (a third element,
    #: ``"explicit"`` or ``"manual"``, for an axis that is not Auto);
    #: empty when the example names none and the target is one device.
    mesh: list[list[Any]] = field(default_factory=list)
    #: How the arguments are laid out over the mesh (empty without a mesh).
    input_shardings: list[Sharding] = field(default_factory=list)
    #: How the results are laid out over the mesh (empty without a mesh).
    output_shardings: list[Sharding] = field(default_factory=list)
    #: The collectives, in the order they first run.
    collectives: list[Collective] = field(default_factory=list)
    #: The compiler's own record of the fusions it refused, where the backend
    #: keeps one (:mod:`sphinx_jaxhlo.hlo.decisions.quotes`).
    fusion_decisions: list[FusionDecision] = field(default_factory=list)
    #: What was collected of that record, or why nothing was (the backend
    #: keeps none, the record did not parse...); empty when not collected.
    fusion_decisions_note: str = ""
    #: For a ``:chunk:`` variant: its numerical check against the original, in words.
    chunk_check: str = ""
    #: A chunking that would bound the largest unfused reduction's stored input or the temp memory
    #: (words, the ``chunked(...)`` call, the plain-JAX code, one per line group), proved on the jaxpr,
    #: checked on small inputs and compiled (:mod:`sphinx_jaxhlo.chunking.search`); or ``""``.
    chunk_suggestion: str = ""
    #: XLA's buffer assignment and live ranges, as the record
    #: :mod:`sphinx_jaxhlo.hlo.buffer_assignment` keeps of them (a text, like the HLO); ``""``
    #: when not collected, and then :attr:`buffer_assignment_note` says why.
    buffer_assignment: str = ""
    buffer_assignment_note: str = ""
    #: What is live at the peak and the memory in use across the program order, derived from
    #: :attr:`buffer_assignment` (:mod:`sphinx_jaxhlo.hlo.peak`); ``None`` without it.
    live_at_peak: LiveAtPeak | None = None
    #: The guide's answer for this program and target (:mod:`sphinx_jaxhlo.predict`), made from the
    #: jaxpr where the compile happened; ``None`` when not made (a sharded program, an older report).
    prediction: Prediction | None = None
    schema_version: int = SCHEMA_VERSION

    # -- JSON ---------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        for key in ("chunk_check", "chunk_suggestion", "prediction"):
            if not data[key]:
                del data[key]  # reports without them keep their stored form
        return data

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, **kwargs)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        """Build a report from its JSON form; raises ``ValueError`` on a
        malformed document or a different schema version."""
        try:
            if data.get("schema_version") != SCHEMA_VERSION:
                raise ValueError(f"report schema {data.get('schema_version')!r}, expected {SCHEMA_VERSION}")
            d = dict(data)
            d["memory"] = Memory(**d.get("memory") or {})
            d["cost"] = Cost(**d.get("cost") or {})
            d["fusions"] = [Fusion(**f) for f in d.get("fusions") or []]
            d["materialized"] = [_with_reason(Materialized, m) for m in d.get("materialized") or []]
            d["argument_copies"] = [_with_reason(Materialized, m) for m in d.get("argument_copies") or []]
            d["reductions"] = [_with_reason(Reduction, r) for r in d.get("reductions") or []]
            d["host_buffers"] = [_with_reason(Materialized, m) for m in d.get("host_buffers") or []]
            d["host_fusions"] = [Fusion(**f) for f in d.get("host_fusions") or []]
            d["fusion_decisions"] = [FusionDecision(**x) for x in d.get("fusion_decisions") or []]
            d["error"] = CompileError(**d["error"]) if d.get("error") else None
            d["input_shardings"] = [Sharding(**x) for x in d.get("input_shardings") or []]
            d["output_shardings"] = [Sharding(**x) for x in d.get("output_shardings") or []]
            d["collectives"] = [Collective(**c) for c in d.get("collectives") or []]
            d["live_at_peak"] = _live_at_peak(d["live_at_peak"]) if d.get("live_at_peak") else None
            d["prediction"] = Prediction.from_dict(d["prediction"]) if d.get("prediction") else None
            return cls(**d)
        except (TypeError, AttributeError, KeyError) as exc:
            raise ValueError(f"malformed report: {exc}") from exc

    @classmethod
    def from_json(cls, text: str) -> Report:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"malformed report JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise ValueError("malformed report JSON: not an object")
        return cls.from_dict(data)

    # -- derived ------------------------------------------------------------

    @property
    def largest_materialized(self) -> Materialized | None:
        """The largest intermediate in the device's memory (a TPU's HBM); those the TPU keeps
        in the chip's own memory are :attr:`on_chip_materialized`."""
        return max(self.stored_in_device_memory, key=lambda m: m.bytes, default=None)

    @property
    def stored_in_device_memory(self) -> list[Materialized]:
        """The intermediates in the device's memory (all of them, but on a TPU)."""
        return [m for m in self.materialized if m.in_device_memory]

    @property
    def on_chip_materialized(self) -> list[Materialized]:
        """The intermediates a TPU keeps in the chip's own memory (written by one kernel,
        read by another, never in HBM)."""
        return [m for m in self.materialized if not m.in_device_memory]

    @property
    def kernels(self) -> int:
        """How many kernels the program runs (:func:`is_kernel`), a loop body's counted once."""
        return sum(1 for f in self.fusions if is_kernel(f))

    @property
    def verdict_reductions(self) -> list[Reduction]:
        """The reductions that verdicts are about: the program's own
        (:attr:`Reduction.origin` ``user``), not those the compiler made."""
        return [r for r in self.reductions if r.is_users]

    @property
    def deciding_reductions(self) -> list[Reduction]:
        """The reductions that decide the summary and the checks: the
        program's own (:attr:`verdict_reductions`) but those too small to
        matter (:attr:`Reduction.minor`)."""
        return [r for r in self.reductions if r.is_users and not r.minor]

    @property
    def compiler_reductions(self) -> list[Reduction]:
        """The reductions the compiler made (split-K stages, prefix scans, second stages...)."""
        return [r for r in self.reductions if not r.is_users]

    @property
    def mesh_text(self) -> str:
        """``data=4, model=2`` (``X=8 explicit`` for an axis that is not Auto); empty without a mesh."""
        return ", ".join(f"{axis[0]}={axis[1]}" + (f" {axis[2]}" if len(axis) > 2 else "") for axis in self.mesh)

    @property
    def all_reductions_fused(self) -> bool | None:
        """True/False when there are reductions, ``None`` when there are none."""
        reductions = self.deciding_reductions
        if not reductions:
            return None
        return all(r.fused for r in reductions)
