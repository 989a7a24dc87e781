"""Why a stored buffer was not fused into the reduction that reads it, derived from the HLO.

For every reduction of the program's that is unfused, and for the buffer it
reads, ``attach_reasons`` fills the report's ``Reason``:

1. **What made the buffer** (``producer_kind``), from the kernel that wrote
   it: ``gemm`` (a ``dot``, a cuBLAS custom call, a Triton GEMM fusion
   ``__triton_gemm``/``__triton_nested_gemm_fusion``, a ``dot`` in the CPU's
   YNN kernel), ``product-reduction`` (a ``dot_general`` the compiler wrote
   as a multiply and a ``reduce``, with no dot or convolution in the kernel:
   the H100's matrix-vector products below its GEMM threshold, the TPU's
   ``exp(-d2) @ v``, row-wise dots, in a YNN kernel of the CPU too), ``convolution``, ``sort``, ``gather``,
   ``scatter``, ``fft``, ``custom-call`` (a library kernel the compiler cannot look into),
   ``loop-output`` (what a ``while`` hands on), ``branch-output`` (a
   ``conditional`` or ``call``), ``collective`` (an all-reduce, all-gather...),
   ``reduction`` (the result of another reduction: the element a ``reduce``
   or ``reduce-window`` wrote, or a kernel that only reduces, e.g. a
   prefix-scan stage), ``multi-output`` (an output of a kernel that also
   reduces, other than a reduction's result: a table the reduction kernel
   writes beside its sums), ``ynn`` (another kernel of the CPU's YNN
   library, ``__ynn_fusion``), ``multi-reader-fusion`` (a kernel whose
   result several kernels read) and ``elementwise`` (a kernel of elementwise
   and data-movement ops with one reader).  The first that applies, in this
   order, after the JAX operation the buffer's metadata names
   (``dot_general`` is a GEMM, also where a TPU writes it as a
   ``convolution``, so on a TPU any ``convolution`` not traced from
   ``conv_general_dilated`` is one).  A kernel that only moves one stored
   buffer (a layout ``copy``, a ``slice``) is looked through: what made the
   moved buffer is named.
2. **Why**, in plain words, from the producer's kind, the reading kernel and
   the backend, with the rule of XLA that applies, named as XLA's source
   spells it at the installed version (jax 0.10.2: its compiled XLA holds
   these functions and files) where the backend's source is public:

   - GPU, ``priority-fusion`` (``xla/backends/gpu/transforms/priority_fusion.cc``):
     a GEMM, a convolution, a sort, an FFT or a custom call is refused as a
     producer by the pass's own file-local ``IsFusible`` (through
     ``PriorityFusionQueue::CanFuse``: "the producer is not fusible"); a
     scatter's output by ``CanEmitInputFusedScatter``
     (``xla/service/gpu/gpu_fusible.cc``, through
     ``PriorityFusionQueue::CanFuseWithNativeEmitter``); a reduction's
     result, read by another reduction, by ``CanFuseWithNativeEmitter``
     ("both the producer and the consumer contain a reduce", for reductions
     of 16 elements or more per result; a shorter one, such as a sum over 3
     components, is left to the cost model); a producer
     with several readers is fused into all of them or none
     (``PriorityFusionQueue::CanFuseWithAllNonBitcastUsers``), and only
     where the cost model finds it faster
     (``PriorityFusionQueue::CalculateProducerPriority``: a producer whose
     fused time exceeds its unfused time gets a negative priority, and
     ``ComputeAndSetPriorities`` never queues it); a table that a reduction
     kernel writes as a second output was put there by the multi-output
     fusion pass (``MultiOutputFusion``,
     ``xla/backends/gpu/transforms/multi_output_fusion.cc``) after priority
     fusion had kept its producer apart.
   - CPU: the library rewriter (``LibraryRewriter``,
     ``xla/backends/cpu/transforms/library_rewriter.cc``) decides what a
     YNN kernel (``__ynn_fusion``) takes in.  It grows a fusion only through
     values whose every user joins it (``LibraryRewriter::AddFusionCandidates``:
     no multi-output fusion), so a value with several readers is stored;
     and it takes an elementwise op only where
     ``IsElementwiseOpSupportedByYnn`` (``xla/backends/cpu/ynn_support.cc``)
     accepts its operation and its element types (in this XLA, measured:
     not ``cos``, ``sin`` or ``tan``; not ``f16``, whose ops are computed
     by a loop kernel that writes ``f32``); it takes a convolution only where
     ``IsConvolutionOpSupportedByYnn`` (the same file) accepts it: a 2-D one of
     the element types and layout it lists, with more than 16 input or output
     features (in this XLA, measured: an ``f32`` convolution of 16 channels is a
     plain ``convolution``, of 32 a YNN one); a sort, scatter, gather, FFT or
     custom call has no YNN kernel at all (``YnnMatcher::IsOpSupported``,
     ``xla/backends/cpu/transforms/ynn_matcher.h``).  Elsewhere the CPU's loop fusion
     (``CpuInstructionFusion::ShouldFuse``,
     ``xla/service/cpu/cpu_instruction_fusion.cc``) decides: a library call
     or a dot is not loop-fused.
   - TPU: libtpu's passes are not public; no rule is named.
3. **What to write instead**: labels of the guide's sections with bounded
   alternatives.

Where the rule is not known from the HLO (an elementwise kernel with one
reader on the GPU: the cost model or another check of ``CanFuse``), the
text says so.  Nothing here is quoted from the compiler (``Reason.quoted``
stays ``None``): where a backend records its decisions, the collection of
those records fills it in and names the rule the record shows
(``sphinx_jaxhlo.hlo.decisions.quotes``).  No jax, no Sphinx.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sphinx_jaxhlo.core.report import Fusion, Materialized, Reason, Reduction

__all__ = ["ALTERNATIVE_TITLES", "KIND_WORDS", "UNEXPLAINED", "Written", "attach_reasons", "backend_of",
           "producer_kind", "reason_for", "reason_sentence"]

#: A producer kind in a JAX user's words (for the page and the text output).
KIND_WORDS = {
    "gemm": "a GEMM (a matrix product)",
    "product-reduction": "a contraction (a dot_general) written as a multiply and a reduction",
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
    "multi-output": "a second output of a reduction kernel",
    "ynn": "the CPU's YNN kernel",
    "multi-reader-fusion": "a kernel whose result several kernels read",
    "elementwise": "a kernel of elementwise ops",
}

#: What a derived reason says where the HLO does not show which rule kept the two apart
#: (a quoted record replaces it, :mod:`sphinx_jaxhlo.hlo.decisions.quotes`).
UNEXPLAINED = "the HLO alone does not say why the compiler kept the two apart."


@dataclass(frozen=True)
class Written:
    """How the analysis saw a stored buffer's element written (:mod:`sphinx_jaxhlo.hlo.fusion`)."""

    #: The opcode of the instruction inside its kernel that writes the element (``reduce``, ``multiply``...).
    opcode: str
    #: How many outputs the kernel writes (a multi-output fusion: more than one).
    outputs: int = 1
    #: The element types of the values computed inside the kernel.
    dtypes: frozenset[str] = frozenset()
    #: Where a reduction writes the element: how many elements it folds into each result.
    reduced: int = 0
    #: The element is computed elementwise from a reduction's result in the same kernel
    #: (``exp`` after a matrix-vector product written as a reduce); ``reduced`` is that one's.
    after_reduce: bool = False
    #: The JAX operation of the reduction that writes the element or precedes it (``dot_general``).
    reduce_op: str | None = None


_COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
                "ragged-all-to-all", "collective-broadcast")
_PRIORITY_FUSION = "xla/backends/gpu/transforms/priority_fusion.cc"
_GPU_FUSIBLE = ("IsFusible (file-local in priority_fusion.cc), through PriorityFusionQueue::CanFuse",
                _PRIORITY_FUSION)
_GPU_SCATTER = ("CanEmitInputFusedScatter, through PriorityFusionQueue::CanFuseWithNativeEmitter",
                "xla/service/gpu/gpu_fusible.cc")
_GPU_REDUCE_INTO_REDUCE = ("PriorityFusionQueue::CanFuseWithNativeEmitter (both the producer and the consumer "
                           "contain a reduce)", _PRIORITY_FUSION)
_GPU_ALL_READERS = ("PriorityFusionQueue::CanFuseWithAllNonBitcastUsers and "
                    "PriorityFusionQueue::CalculateProducerPriority", _PRIORITY_FUSION)
_GPU_MULTI_OUTPUT = ("MultiOutputFusion (producer-consumer multi-output fusion)",
                     "xla/backends/gpu/transforms/multi_output_fusion.cc")
_CPU_LOOP = ("CpuInstructionFusion::ShouldFuse", "xla/service/cpu/cpu_instruction_fusion.cc")
_YNN_ONE_USER = ("LibraryRewriter::AddFusionCandidates (a value joins a fusion only with all of its users)",
                 "xla/backends/cpu/transforms/library_rewriter.cc")
_YNN_ELEMENTWISE = ("IsElementwiseOpSupportedByYnn, through the library rewriter", "xla/backends/cpu/ynn_support.cc")
#: The reductions CanFuseWithNativeEmitter keeps out of another reduction: 16 elements or more per result.
_SIGNIFICANT_REDUCE = 16
_YNN_OPS_ONLY = ("YnnMatcher::IsOpSupported, through the library rewriter",
                 "xla/backends/cpu/transforms/ynn_matcher.h")
_YNN_CONVOLUTION = ("IsConvolutionOpSupportedByYnn, through the library rewriter", "xla/backends/cpu/ynn_support.cc")
#: A kernel that only reduces (and moves data): its output is another reduction's.
_REDUCTION_KERNEL = frozenset({"reduce", "reduce-window", "bitcast", "reshape", "copy", "transpose", "slice",
                               "broadcast", "convert"})
#: A kernel of nothing but these moves data another kernel made.
_MOVES = frozenset({"copy", "bitcast", "reshape", "transpose", "slice", "dynamic-slice", "reverse"})
#: Elementwise ops that this XLA's YNN fusion does not take: cos, sin and tan (measured with jax 0.10.2),
#: and ops outside ``IsElementwiseOpSupportedByYnn``'s unary and binary tables.
_NOT_YNN = ("cosine", "sine", "tan", "select", "compare", "clamp", "remainder", "atan2", "and", "or", "xor", "not",
            "is-finite", "real", "imag", "complex", "cbrt", "round-nearest-afz")
#: Element types ``IsElementwiseOpSupportedByYnn`` takes (its ``kAllowedTypes``; f16 measured refused).
_YNN_TYPES = frozenset({"f32", "bf16", "f64", "s8", "u8"})

#: The guide's sections with bounded alternatives, by producer kind.
_BOUNDED = ["jaxhlo-guide-bounded-scan", "jaxhlo-guide-bounded-map"]
ALTERNATIVES = {"gemm": ["jaxhlo-guide-matrix-small-contractions", *_BOUNDED],
                "product-reduction": ["jaxhlo-guide-matrix-small-contractions", *_BOUNDED]}
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


def producer_kind(producer: Fusion, readers: int, op: str | None = None, backend: str | None = None,
                  written: Written | None = None) -> str:
    """What made a stored buffer (the kinds of the module docstring, first that
    applies); ``op`` is the JAX operation of its metadata: a TPU writes a
    ``dot_general`` as a ``convolution``; ``written``, how the element was written.
    A buffer named by an epilogue (``tanh of dot_general``) is its product's."""
    op = op.rsplit(" of ", 1)[-1] if op else op
    if op in ("dot_general", "ragged_dot_general"):
        ops = set(producer.ops)
        custom = (producer.custom_kind or "").lower()
        # a dot the compiler strength-reduced to a multiply and a reduce is that, in a YNN kernel too
        # (the CPU's row dots): only a kernel with a dot, a convolution or a library GEMM is a GEMM
        as_reduce = ops & {"reduce", "reduce-window"} and not ops & {"dot", "convolution"} \
            and "gemm" not in custom and "matmul" not in custom
        return "product-reduction" if as_reduce else "gemm"
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
    if written is not None and written.opcode in ("reduce", "reduce-window"):
        return "product-reduction" if written.reduce_op in ("dot_general", "ragged_dot_general") else "reduction"
    if written is not None and written.outputs > 1 and ops & {"reduce", "reduce-window"}:
        return "multi-output"
    if custom == "__ynn_fusion":
        return "ynn"
    if written is not None and written.after_reduce:
        return "product-reduction" if written.reduce_op in ("dot_general", "ragged_dot_general") else "reduction"
    if ops & {"reduce", "reduce-window"} and ops <= _REDUCTION_KERNEL:
        return "reduction"
    return "multi-reader-fusion" if readers > 1 else "elementwise"


def reason_for(kind: str, producer: Fusion, consumer: Fusion | None, readers: int, backend: str | None,
               written: Written | None = None) -> Reason:
    """The reason a buffer of ``kind`` was stored before the reduction in
    ``consumer`` read it, in plain words, with the rule that applies."""
    text, (rule, source) = _why(kind, producer, consumer, readers, backend, written)
    return Reason(producer_kind=kind, text=text, rule=rule, source_file=source,
                  alternatives=list(ALTERNATIVES.get(kind, _BOUNDED)))


def _why(kind: str, producer: Fusion, consumer: Fusion | None, readers: int, backend: str | None,
         written: Written | None) -> tuple[str, tuple[str, str]]:
    """The text and the (rule, source file) of a reason; the rules of the module docstring."""
    words = KIND_WORDS[kind]
    none = ("", "")
    if backend == "cpu" and consumer is not None and consumer.custom_kind == "__ynn_fusion":
        return _why_ynn(kind, producer, readers, written)
    if kind == "gemm" and backend == "gpu":
        return ("On the GPU a GEMM is a kernel of its own (cuBLAS or a Triton GEMM fusion); priority fusion does "
                "not take it in as a producer, so its output (the product, or the elementwise work fused after "
                "it) is written to memory in full before the reduction reads it."), _GPU_FUSIBLE
    if kind == "gemm" and backend == "cpu":
        return ("On the CPU a dot runs as a library GEMM (YNN or Eigen) that writes the whole product; the loop "
                "fusion does not fuse a dot, and the reduction reads the product back."), _CPU_LOOP
    if kind == "gemm":
        return "The matrix product is written to memory in full before the reduction reads it.", none
    if kind == "product-reduction":
        made = "computed elementwise from " if written is not None and written.after_reduce else ""
        lead = ("The compiler wrote this contraction (a dot_general) as a multiply and a reduction over its "
                f"contracted axis, not as a GEMM, so it is {made}the result of another reduction")
        if backend == "gpu" and written is not None and 0 < written.reduced < _SIGNIFICANT_REDUCE:
            return (f"{lead}, of {written.reduced} elements each: short enough for priority fusion to fuse into "
                    f"a reduction, which it does only where its cost model estimates it faster; "
                    f"{UNEXPLAINED}"), none
        return (f"{lead}; XLA does not fuse a reduction into the reduction that reads its result, so the "
                "contraction's result is stored."), (_GPU_REDUCE_INTO_REDUCE if backend == "gpu" else none)
    if kind == "multi-output":
        text = (f"The table is written by the kernel of another reduction, as a second output: it has {readers} "
                f"reader{'s' if readers != 1 else ''}, fusion did not duplicate its work into every reduction "
                "that reads it, and multi-output fusion then let one of those kernels write it in full for the "
                "others.")
        return text, (_GPU_MULTI_OUTPUT if backend == "gpu" else none)
    if kind == "reduction":
        if backend == "gpu" and written is not None and 0 < written.reduced < _SIGNIFICANT_REDUCE:
            made = "computed from the result" if written.after_reduce else "the result"
            return (f"It is {made} of another reduction, of {written.reduced} elements each: short enough "
                    f"for priority fusion to fuse into a reduction, which it does only where its cost model "
                    f"estimates it faster; {UNEXPLAINED}"), none
        made = ("computed elementwise from the result of another reduction, in that reduction's kernel"
                if written is not None and written.after_reduce else "the result of another reduction")
        text = (f"It is {made}; XLA does not fuse a reduction into the reduction that "
                "reads its result, so the first one's result is stored.")
        return text, (_GPU_REDUCE_INTO_REDUCE if backend == "gpu" else none)
    if kind == "multi-reader-fusion":
        text = (f"Its result is read by {readers} kernels: fusing it into each would compute it {readers} "
                f"times, so XLA computes it once and stores it.")
        if backend == "gpu":
            text += (" Priority fusion fuses a producer into all of its readers or none, and only where its cost "
                     "model estimates the fused kernels faster.")
            return text, _GPU_ALL_READERS
        return text, (_CPU_LOOP if backend == "cpu" else none)
    if kind in ("loop-output", "branch-output"):
        return ("Fusion does not cross a loop's or a branch's boundary: what it hands on is stored, and the "
                "reduction after it reads it."), none
    if kind == "collective":
        return ("Data exchanged between devices lands in memory: a collective is not fused with the kernels "
                "around it."), none
    if kind in ("sort", "convolution", "custom-call", "fft", "scatter", "ynn"):
        text = f"It is {words}: a kernel of its own, whose output the compiler does not fuse into a reduction."
        if backend == "gpu":
            return text, (_GPU_SCATTER if kind == "scatter" else _GPU_FUSIBLE)
        return text, (_CPU_LOOP if backend == "cpu" else none)
    if kind == "elementwise" and backend == "gpu":
        return (f"It is {words} with one reader, which priority fusion fuses unless its cost model estimates the "
                f"fused kernel slower or one of CanFuse's checks refuses; {UNEXPLAINED}"), none
    return f"It is {words}, stored before the reduction reads it; {UNEXPLAINED}", none


def _why_ynn(kind: str, producer: Fusion, readers: int, written: Written | None) -> tuple[str, tuple[str, str]]:
    """Why the CPU's library rewriter left a producer out of the YNN kernel that reduces."""
    lead = "The reduction runs in the CPU's YNN kernel (__ynn_fusion), which XLA's library rewriter grows around it"
    if readers > 1:
        return (f"{lead} only through values whose every reader joins the same kernel (no multi-output fusion): "
                f"this one has {readers} readers, so it is stored and each reads it back."), _YNN_ONE_USER
    if kind == "convolution":
        text = (f"{lead}; this XLA's YNN support takes a convolution only when it is 2-D, of the element types "
                f"and layout it lists, with more than 16 input or output features: this one is not, so a "
                f"convolution kernel of its own writes its result and the YNN reduction reads it back.")
        return text, _YNN_CONVOLUTION
    if kind in ("sort", "scatter", "gather", "fft", "custom-call", "collective"):
        return (f"{lead} only with the ops YNN has kernels for (dots, reductions, and the elementwise and "
                f"data-movement ops of its tables): {KIND_WORDS[kind]} is not one of them, so its result is "
                f"stored and the YNN reduction reads it back."), _YNN_OPS_ONLY
    bad_ops = [op for op in producer.ops if op in _NOT_YNN]
    if kind == "elementwise" and bad_ops:
        return (f"{lead}; this XLA's YNN support does not take {' or '.join(bad_ops)}: a separate kernel "
                f"computes them and writes its result, and the YNN reduction reads it back."), _YNN_ELEMENTWISE
    bad_types = sorted((written.dtypes if written else frozenset()) - _YNN_TYPES)
    if kind == "elementwise" and bad_types:
        return (f"{lead}; its elementwise support has a gate on element types that {', '.join(bad_types)} does "
                f"not pass: a separate loop kernel computes these ops and writes its result, and the YNN "
                f"reduction reads it back."), _YNN_ELEMENTWISE
    return (f"{lead}: it did not take this kernel's ops in (one of the YNN support checks refused them; "
            "the HLO alone does not say which), and the loop fusion does not "
            f"fuse into a library kernel, so the result of {KIND_WORDS[kind]} is stored first."), _CPU_LOOP


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
                   reductions: Sequence[Reduction], target: str | None,
                   written: Mapping[tuple[str, str], Written] | None = None) -> None:
    """Fill ``reason`` of every unfused reduction of the program's and of the
    buffer it reads (the intermediates a report presents as a problem).

    :param written: how each stored buffer's element was written, by
        (computation, buffer name), as the analysis saw it.
    """
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
        how = (written or {}).get((made.computation, made.name))
        kind = producer_kind(producer, readers, made.producer_op, backend, how)
        r.reason = reason_for(kind, producer, kernels.get((r.computation, r.fusion)), readers, backend, how)
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
