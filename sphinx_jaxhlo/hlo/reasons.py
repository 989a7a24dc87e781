"""Why a stored buffer was not fused into the reduction that reads it, derived from the HLO.

For every reduction of the program's that is unfused, and for the buffer it
reads, ``attach_reasons`` fills the report's ``Reason``:

1. **What made the buffer** (``producer_kind``), from the kernel that wrote
   it: ``gemm`` (a ``dot``, a cuBLAS custom call, a Triton GEMM fusion
   ``__triton_gemm``/``__triton_nested_gemm_fusion``, a GEMM in the CPU's
   YNN kernel), ``convolution``, ``sort``, ``gather``, ``scatter``, ``fft``,
   ``custom-call`` (a library kernel the compiler cannot look into),
   ``loop-output`` (what a ``while`` hands on), ``branch-output`` (a
   ``conditional`` or ``call``), ``collective`` (an all-reduce, all-gather...),
   ``reduction`` (a kernel that only reduces: e.g. a prefix-scan stage),
   ``ynn`` (another kernel of the CPU's YNN library, ``__ynn_fusion``),
   ``multi-reader-fusion`` (a kernel whose result several kernels read) and
   ``elementwise`` (a kernel of elementwise and data-movement ops with one
   reader).  The first that applies, in this order, after the JAX operation
   the buffer's metadata names (``dot_general`` is a GEMM, also where a TPU
   writes it as a ``convolution``, so on a TPU any ``convolution`` not
   traced from ``conv_general_dilated`` is one).  A kernel that only moves
   one stored buffer (a layout ``copy``, a ``slice``) is looked through: what
   made the moved buffer is named.
2. **Why**, in plain words, from the producer's kind, the reading kernel and
   the backend (``cpu``, ``gpu``, ``tpu``), with the compiler rule that
   applies (its pass and source file in openxla/xla) where one is known.
3. **What to write instead**: labels of the guide's sections with bounded
   alternatives.

Nothing here is quoted from the compiler (``Reason.quoted`` stays ``None``):
where a backend records its decisions, the collection of those records fills
it in.  No jax, no Sphinx.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from sphinx_jaxhlo.core.report import Fusion, Materialized, Reason, Reduction

__all__ = ["ALTERNATIVE_TITLES", "KIND_WORDS", "attach_reasons", "backend_of", "producer_kind", "reason_for",
           "reason_sentence"]

#: A producer kind in a JAX user's words (for the page and the text output).
KIND_WORDS = {
    "gemm": "a GEMM (a matrix product)",
    "convolution": "a convolution",
    "sort": "a sort",
    "gather": "a gather",
    "scatter": "a scatter",
    "fft": "an FFT",
    "custom-call": "a custom call",
    "loop-output": "a loop's output",
    "branch-output": "a branch's or call's output",
    "collective": "a collective",
    "reduction": "another reduction",
    "ynn": "the CPU's YNN kernel",
    "multi-reader-fusion": "a kernel whose result several kernels read",
    "elementwise": "a kernel of elementwise ops",
}

_COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
                "ragged-all-to-all", "collective-broadcast")
_GPU_PASS = ("priority-fusion (PriorityFusionQueue::CanFuse)", "xla/backends/gpu/transforms/priority_fusion.cc")
_GPU_FUSIBLE = ("IsFusible, used by priority-fusion", "xla/service/gpu/gpu_fusible.cc")
_CPU_PASS = ("cpu-instruction-fusion (CpuInstructionFusion::ShouldFuse)", "xla/service/cpu/cpu_instruction_fusion.cc")
_YNN_PASS = ("YNN fusion (IsElementwiseOpSupportedByYnn)", "xla/backends/cpu/ynn_support.cc")
#: A kernel that only reduces (and moves data): its output is another reduction's.
_REDUCTION_KERNEL = frozenset({"reduce", "reduce-window", "bitcast", "reshape", "copy", "transpose", "slice",
                               "broadcast", "convert"})
#: A kernel of nothing but these moves data another kernel made.
_MOVES = frozenset({"copy", "bitcast", "reshape", "transpose", "slice", "dynamic-slice", "reverse"})
#: Elementwise ops that this XLA's YNN fusion does not take (measured with jax 0.10.2).
_NOT_YNN = ("cosine", "sine", "tan")

#: The guide's sections with bounded alternatives, by producer kind.
_BOUNDED = ["jaxhlo-guide-bounded-scan", "jaxhlo-guide-bounded-map"]
ALTERNATIVES = {"gemm": ["jaxhlo-guide-matrix-small-contractions", *_BOUNDED]}
#: How each alternative is named where it is linked (the page's links and the text output).
ALTERNATIVE_TITLES = {
    "jaxhlo-guide-matrix-small-contractions": "write a short contraction out as multiply and sum",
    "jaxhlo-guide-bounded-scan": "lax.scan over chunks, reducing inside the loop",
    "jaxhlo-guide-bounded-map": "lax.map over chunks, reducing inside",
}


def backend_of(target: str | None, fusions: Sequence[Fusion]) -> str | None:
    """``cpu``, ``gpu`` or ``tpu``: from the target's name (``gpu:h100``), else
    from the kernels XLA chose (a YNN kernel is the CPU's, a Triton or cuBLAS
    GEMM the GPU's); ``None`` when neither says."""
    if target:
        return target.split(":", 1)[0].split("-", 1)[0]
    kinds = {f.custom_kind or "" for f in fusions}
    if "__ynn_fusion" in kinds:
        return "cpu"
    if any("triton" in k or "cublas" in k for k in kinds):
        return "gpu"
    return None


def producer_kind(producer: Fusion, readers: int, op: str | None = None, backend: str | None = None) -> str:
    """What made a stored buffer (the kinds of the module docstring, first that
    applies); ``op`` is the JAX operation of its metadata: a TPU writes a
    ``dot_general`` as a ``convolution``."""
    if op in ("dot_general", "ragged_dot_general"):
        return "gemm"
    if op == "conv_general_dilated":
        return "convolution"
    if op in ("fft", "jit(fft)"):
        return "fft"  # a TPU computes an FFT with matrix products
    ops = set(producer.ops)
    if backend == "tpu" and "convolution" in ops:
        return "gemm"  # the TPU's dots are convolutions; a real one says conv_general_dilated above
    custom = (producer.custom_kind or "").lower()
    if producer.kind == "while":
        return "loop-output"
    if producer.kind in ("conditional", "call"):
        return "branch-output"
    if any(op.startswith(c) for op in ops for c in _COLLECTIVES):
        return "collective"
    if "dot" in ops or "gemm" in custom or "matmul" in custom:
        return "gemm"
    if "convolution" in ops or "conv" in custom:
        return "convolution"
    for kind in ("sort", "scatter", "gather", "fft"):
        if kind in ops:
            return kind
    if "custom-call" in ops:
        return "custom-call"
    if custom == "__ynn_fusion":
        return "ynn"
    if ops & {"reduce", "reduce-window"} and ops <= _REDUCTION_KERNEL:
        return "reduction"
    return "multi-reader-fusion" if readers > 1 else "elementwise"


def reason_for(kind: str, producer: Fusion, consumer: Fusion | None, readers: int, backend: str | None) -> Reason:
    """The reason a buffer of ``kind`` was stored before the reduction in
    ``consumer`` read it, in plain words, with the rule that applies."""
    words = KIND_WORDS[kind]
    rule, source = "", ""
    into_ynn = consumer is not None and consumer.custom_kind == "__ynn_fusion"
    if kind == "gemm" and backend == "gpu":
        text = ("On the GPU a GEMM is a kernel of its own (cuBLAS or a Triton GEMM fusion); priority fusion "
                "does not fuse its output into the reduction that reads it, so the product is written to memory "
                "in full first.")
        rule, source = _GPU_PASS
    elif kind == "gemm" and backend == "cpu":
        text = ("On the CPU a dot is never loop-fused: it runs as a library GEMM (YNN or Eigen) that writes "
                "the whole product, and the reduction reads it back.")
        rule, source = _CPU_PASS
    elif kind == "gemm":
        text = "The matrix product is written to memory in full before the reduction reads it."
    elif kind == "elementwise" and into_ynn and (bad := [op for op in producer.ops if op in _NOT_YNN]):
        text = (f"The reduction runs in the CPU's YNN kernel (__ynn_fusion), and this XLA's YNN fusion does not "
                f"take {' or '.join(bad)}: a separate kernel writes the {bad[0]} of every element, and the "
                f"YNN reduction reads it back.")
        rule, source = _YNN_PASS
    elif into_ynn:
        text = ("The reduction runs in the CPU's YNN kernel (__ynn_fusion), a library kernel: XLA's CPU "
                "fusion does not fuse other kernels into it, so their result is stored first.")
        rule, source = _CPU_PASS
    elif kind == "multi-reader-fusion":
        text = (f"Its result is read by {readers} kernels: fusing it into each would compute it {readers} "
                f"times, so XLA computes it once and stores it.")
        if backend == "gpu":
            rule, source = ("priority-fusion (CanFuseWithAllNonBitcastUsers: a producer is fused into all of its "
                            "readers or none)", _GPU_PASS[1])
    elif kind in ("loop-output", "branch-output"):
        text = ("Fusion does not cross a loop's or a branch's boundary: what it hands on is stored, and the "
                "reduction after it reads it.")
    elif kind == "collective":
        text = "Data exchanged between devices lands in memory: a collective is not fused with the kernels around it."
    elif kind in ("sort", "convolution", "custom-call", "fft", "scatter", "ynn"):
        text = f"It is {words}: a kernel of its own, whose output the compiler does not fuse into a reduction."
        if backend == "gpu":
            rule, source = _GPU_FUSIBLE
        elif backend == "cpu":
            rule, source = _CPU_PASS
    else:
        text = (f"It is {words}, stored before the reduction reads it; the HLO alone does not say why the "
                "compiler kept the two apart.")
    return Reason(producer_kind=kind, text=text, rule=rule, source_file=source,
                  alternatives=list(ALTERNATIVES.get(kind, _BOUNDED)))


def _through_moves(buffer: Materialized, producer: Fusion, materialized: Sequence[Materialized],
                   kernels: dict[tuple[str, str], Fusion]) -> tuple[Materialized, Fusion]:
    """A kernel that only moves one stored buffer (a layout ``copy``, a
    ``slice`` of a sort's output): the buffer it moves, and what made that."""
    for _ in range(8):
        if not producer.ops or not set(producer.ops) <= _MOVES:
            break
        sources = [m for m in materialized if m.computation == buffer.computation and producer.name in m.consumers]
        if len(sources) != 1 or (found := kernels.get((buffer.computation, sources[0].producer))) is None:
            break
        buffer, producer = sources[0], found
    return buffer, producer


def attach_reasons(fusions: Sequence[Fusion], materialized: Sequence[Materialized],
                   reductions: Sequence[Reduction], target: str | None) -> None:
    """Fill ``reason`` of every unfused reduction of the program's and of the
    buffer it reads (the intermediates a report presents as a problem)."""
    backend = backend_of(target, fusions)
    kernels = {(f.computation, f.name): f for f in fusions}
    buffers = {(m.computation, m.name): m for m in materialized}
    for r in reductions:
        if r.fused or not r.is_users:
            continue
        buffer = buffers.get((r.computation, r.input_materialized or ""))
        if buffer is None:
            continue
        producer = kernels.get((buffer.computation, buffer.producer))
        if producer is None:
            continue
        made, producer = _through_moves(buffer, producer, materialized, kernels)
        readers = len(made.consumers)
        kind = producer_kind(producer, readers, made.producer_op, backend)
        r.reason = reason_for(kind, producer, kernels.get((r.computation, r.fusion)), readers, backend)
        if buffer.reason is None:
            buffer.reason = dataclasses.replace(r.reason, alternatives=list(r.reason.alternatives))


def reason_sentence(reason: Reason) -> str:
    """The reason in one paragraph, as the page and the text output show it beside the finding."""
    made = KIND_WORDS.get(reason.producer_kind, reason.producer_kind)
    rule = ""
    if reason.rule:
        rule = f" Rule: {reason.rule}" + (f", in {reason.source_file}" if reason.source_file else "") + "."
    how = "derived from the HLO" if reason.quoted is None else "the compiler's own record is quoted below"
    restated = f"It is {made}"
    if reason.text.startswith(restated):  # the text names the producer again: say it once
        return f"Why: the stored data is the output of {made}{reason.text[len(restated):]}{rule} ({how})"
    return f"Why: the stored data is the output of {made}. {reason.text}{rule} ({how})"
