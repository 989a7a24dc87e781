"""The guide's convolution rules: a table a ``lax.conv_general_dilated`` computes, or one it reads.

On the H100 a convolution is a cuDNN call whose output is written (``conv_rewriter.cc``).  On the CPU a
convolution YNN takes (:func:`~sphinx_jaxhlo.predict.cpu._ynn_conv`, ``IsConvolutionOpSupportedByYnn`` in
``ynn_support.cc``) starts a YNN fusion like a dot (``LibraryRewriter::ProcessComputation``,
``library_rewriter.cc``), and the CPU's YNN rule answers; any other is XLA's own convolution, a thunk that
reads its operands from memory and writes its output.  The TPU compiler is closed: its rules were
measured (``benchmarks/guide_predictor_conv_probes.py``, 96 probes compiled for the CPU and the TPU
v5e, deviceless, 2026-12-07, 84 before the first measure on the families and 12 after; the counts in
the answers are those probes').
"""

from __future__ import annotations

import math

from .cpu import _ynn_conv
from .graph import _MOVES, TABLE_SHARE, Decision, Graph, Op, Region, Value
from .limits import abstain, passes

CONV = "conv_general_dilated"

#: The smallest batch, and the fewest input features of a channels-last ``f32`` convolution, at which the
#: TPU read a convolution's argument in place in every probe: below either (and for a grouped, not
#: depthwise, convolution) it wrote a relaid-out ``bf16`` copy of the input (the spatial axes split
#: into the batch; the features padded), of the table's size where the input is.  A ``bf16`` or ``f16``
#: image of a batch of 8 or more is never converted: where an ``f32`` one is, it is copied as it is, an
#: argument's copy and no computed table (14 compiles of 8 to 256 features).
TPU_MIN_BATCH = 8
TPU_MIN_FEATURES = 64
#: Channels last, the fewest input features read in place at every spatial size compiled (a grid of 64 to 256
#: features by 32 x 32 to 256 x 256 positions, batch 8); with fewer, only up to :data:`TPU_IN_PLACE_AREA`
#: positions an image.
TPU_IN_PLACE_FEATURES = 128
TPU_IN_PLACE_AREA = 64 * 64
#: The fewest input features of a 2-D channels-first convolution the TPU read in place (64 were copied).
TPU_MIN_FEATURES_FIRST = 128


def convolutions(g: Region) -> list[Op]:
    return [op for op in g.ops if op.prim == CONV]


def _computed(v: Value) -> bool:
    """``v`` is computed by the program: not an argument, nor one only moved (transposed, reshaped) or
    converted (:func:`_converted_argument`)."""
    return v.producer is not None and not v.is_arg and not v.literal and not _converted_argument(v)


def _moved(v: Value, converts: bool = False) -> bool:
    """``v`` is an argument only moved: transposed, reshaped, or given a unit axis (``x[None]`` is a
    ``broadcast_in_dim`` of the same size, as ``vmap`` of one writes); with ``converts``, converted too."""
    moves = _MOVES | ({"convert_element_type"} if converts else set())
    while not v.is_arg:
        op = v.producer
        if op is None or not op.ins or not (op.prim in moves or (op.prim == "broadcast_in_dim"
                                                                   and op.ins[0].size == v.size)):
            return False
        v = op.ins[0]
    return True


def _converted_argument(v: Value) -> bool:
    """``v`` is an argument only converted (and moved): no probe measured a convolution of one."""
    return _moved(v, converts=True)


def computed_operand(graph: Graph, table: int) -> Op | None:
    """A live convolution that reads a computed table-sized value (an activation between two layers, a
    gradient's cotangent), or ``None``."""
    floor = TABLE_SHARE * table
    for op in graph.live_ops():
        if op.prim == CONV and op.loop is None and any(w.size >= floor and _computed(w) for w in op.ins):
            return op
    return None


def decide_conv(g: Region, graph: Graph, target: str, table: int, d: Decision) -> Decision:
    """The answer where a convolution computes the table; ``d`` is the target's decider's."""
    if target == "gpu:h100":
        return Decision(True, "jaxhlo-predict-h100-gemm", "a convolution is a cuDNN library call "
                        "(conv_rewriter.cc): its output is written, and the reduction is another kernel")
    if target == "cpu":
        return decide_cpu_conv(g) or d
    return decide_tpu_conv(g, graph, table, d)


def _why_not_ynn(op: Op) -> str:
    lhs = op.ins[0]
    dims = op.params.get("dimension_numbers")
    if {w.dtype for w in op.ins} & {"float16"}:
        return "an f16 convolution (ChangeOpDataType, cpu_compiler.cc, makes it f32; the converts are not YNN ops)"
    if len(lhs.shape) != 4:
        return f"a {len(lhs.shape) - 2}-D convolution (YNN takes 2-D ones)"
    if dims is not None and tuple(dims.lhs_spec)[1] != 3:
        return "a channels-first convolution (YNN takes channels last)"
    if max(lhs.shape[-1], op.outs[0].shape[-1]) <= 16:
        return "16 features or fewer"
    return "its dimensions, dilation or type"


def decide_cpu_conv(g: Region) -> Decision | None:
    """The CPU's answer where a convolution computes the table: ``None`` where every convolution is a YNN
    convolution (the YNN rule answers, the convolution being a YNN fusion's op)."""
    for op in convolutions(g):
        if not _ynn_conv(op):
            return Decision(True, "jaxhlo-predict-cpu-other", f"{_why_not_ynn(op)} is no YNN convolution "
                            "(IsConvolutionOpSupportedByYnn, ynn_support.cc): XLA's own convolution is a thunk "
                            "of its own (thunk_emitter.cc) that writes its output, and its operands in "
                            "Eigen's layout (ConvCanonicalization, conv_canonicalization.cc)")
    return None


def decide_tpu_conv(g: Region, graph: Graph, table: int, d: Decision) -> Decision:
    """The TPU's answer where a convolution computes the table (measured: libtpu is closed)."""
    if d.stored and d.certain and d.rule != "jaxhlo-predict-tpu-fused":
        return d
    if computed_operand(graph, table) is not None:
        return Decision(True, "jaxhlo-predict-tpu-readers", "a convolution reads a computed table-sized value "
                        "(an activation between two convolutions, a gradient's cotangent): the TPU writes it, "
                        "as in each of the 16 probes measured (7 forward, 9 gradients)")
    if g.two_pass or passes(graph, table, g) >= 2:
        return Decision(True, "jaxhlo-predict-tpu-readers", "a convolution's output is read in two passes (a "
                        "BatchNorm's mean then its variance, a softmax over the channels): the TPU writes it, as "
                        "in each of the 12 probes measured; sibling reductions (a mean and a mean square) fuse")
    if g.outputs or g.outside:
        return Decision(True, "jaxhlo-predict-tpu-readers", "a convolution's output has a reader besides its "
                        "reductions (returned, or read by the backward pass): the TPU writes it")
    for op in convolutions(g):
        if (why := _tpu_input_copy(op, table)) is not None:
            return why
    return Decision(False, "jaxhlo-predict-tpu-fused", "the convolution, the elementwise work after it and the "
                    "reductions of its output are one fusion (a batch of 8 or more, channels last, not grouped, "
                    "128 input features or more, or 64 or more over 64 x 64 positions or fewer: each of the 40 such "
                    "probes measured fused, and the 20 such compiles of a grid of sizes)")


def _tpu_input_copy(op: Op, table: int) -> Decision | None:
    """Where the TPU writes a relaid-out copy of a convolution's argument of the table's size (stored), or
    the probes do not decide (an abstention); ``None`` where the argument is read in place."""
    lhs = op.ins[0]
    if any(w.size >= TABLE_SHARE * table and not _moved(w) for w in op.ins):
        return abstain("a convolution of a converted argument: no probe measured one on the TPU; compile it")
    if lhs.size < 0.5 * table:
        return None  # a copy of the input, if any, is far smaller than the table (3 input features, 64 out)
    dims = op.params.get("dimension_numbers")
    if dims is None:
        return abstain("a convolution without dimension numbers; compile it")
    lhs_spec = tuple(dims.lhs_spec)
    batch, features = lhs.shape[lhs_spec[0]], lhs.shape[lhs_spec[1]]
    groups = op.params.get("feature_group_count", 1)
    last = lhs_spec[1] == len(lhs.shape) - 1
    area = math.prod(lhs.shape[a] for a in lhs_spec[2:])
    # a 2-D image of fewer than 128 features over more than 64 x 64 positions: the grid's copies
    wide = len(lhs.shape) == 4 and features < TPU_IN_PLACE_FEATURES and area > TPU_IN_PLACE_AREA
    ungrouped = groups in (1, features) and op.params.get("batch_group_count", 1) == 1
    # a half-precision image is not converted: where an f32 one is converted to a bf16 copy (a computed table),
    # it is relaid out as a copy of the argument (an operand copy, not a table of the program's)
    half = lhs.dtype in ("bfloat16", "float16") and len(lhs.shape) == 4
    if batch >= TPU_MIN_BATCH and ungrouped and (
            half or (features >= TPU_MIN_FEATURES and not wide)
            if last else len(lhs.shape) == 4 and features >= TPU_MIN_FEATURES_FIRST):
        return None
    if lhs.size < TABLE_SHARE * table:
        return abstain("the TPU may write a relaid-out copy of this convolution's input, which is between half "
                       "the table and the table: whether the copy reaches the table's size was not measured; "
                       "compile it")
    if batch < TPU_MIN_BATCH:
        return Decision(True, "jaxhlo-predict-tpu-readers", f"a convolution of a batch of {batch} (under "
                        f"{TPU_MIN_BATCH}): the TPU writes a relaid-out bf16 copy of its input, the spatial axes "
                        "split into the batch, as in each of the 7 probes measured")
    if groups not in (1, features) or op.params.get("batch_group_count", 1) != 1:
        return Decision(True, "jaxhlo-predict-tpu-readers", f"a grouped convolution ({groups} groups, not "
                        "depthwise): the TPU writes a relaid-out copy of its input, as in both probes measured")
    if last and wide and (features > TPU_MIN_FEATURES or groups != 1):
        return abstain(f"a convolution of {features} input features over {area} positions an image: of 96 features "
                       "the TPU wrote a bf16 copy of the input at 112 x 112, 128 x 128 and 256 x 256 positions and "
                       "read it in place at 192 x 192 and at 96 x 96 or fewer (depthwise not measured); compile it")
    if last and wide and features == TPU_MIN_FEATURES:
        return Decision(True, "jaxhlo-predict-tpu-readers", f"a convolution of {features} input features over "
                        f"{area} positions an image (more than {TPU_IN_PLACE_AREA}): the TPU writes a bf16 copy of "
                        "its input, at every size compiled from 80 x 80 positions (7 of 7; read in place at "
                        "64 x 64 and fewer, and with 128 features or more at every size)",
                        value=Value(lhs.shape, "bfloat16", copy_of=lhs))
    if last and features < TPU_MIN_FEATURES:
        return Decision(True, "jaxhlo-predict-tpu-readers", f"a convolution of {features} input features (under "
                        f"{TPU_MIN_FEATURES}): the TPU writes a bf16 copy of its input, as in each of the 3 probes "
                        "measured")
    if not last and len(lhs.shape) == 3 and {w.dtype for w in op.ins} == {"float32"}:
        return Decision(True, "jaxhlo-predict-tpu-readers", "a 1-D channels-first f32 convolution: the TPU writes "
                        "a bf16 copy of its input, as in each of the 9 probes measured (1 to 512 features, batch "
                        "8 to 256, depthwise and strided too)")
    return abstain("a channels-first convolution that is 3-D, 1-D of bf16, or 2-D with fewer than 128 input "
                   "features: the TPU went both ways in the probes (2-D: 32 and 64 features copied the input, 96 "
                   "fused; a 3-D one and a bf16 1-D one fused, 3 probes); compile it")


def decide_no_reduction(graph: Graph, table: int, target: str) -> Decision | None:
    """Where no reduction reads a table: a convolution that reads a computed table-sized value (a gradient's
    backward convolutions) writes it on the CPU when it is XLA's own convolution, and on the TPU."""
    op = computed_operand(graph, table)
    if op is None or target == "gpu:h100":
        return None
    if target == "cpu":
        if _ynn_conv(op):
            return None
        return Decision(True, "jaxhlo-predict-cpu-other", "a convolution that is no YNN convolution (a "
                        "gradient's backward one: its dimension numbers are not NHWC and HWIO) reads a computed "
                        "table-sized value: XLA's own convolution thunk (thunk_emitter.cc) reads it from memory, "
                        "transposed to Eigen's layout (ConvCanonicalization, conv_canonicalization.cc), as in "
                        "each of the 8 probes measured")
    return Decision(True, "jaxhlo-predict-tpu-readers", "a convolution reads a computed table-sized value (a "
                    "gradient's backward convolutions read the cotangent): the TPU writes it, as in each of the "
                    "16 probes measured (7 forward, 9 gradients)")
