"""The guide's TPU v5e rules: complex data, exact top_k, tables with other readers, matrix-vector products."""

from __future__ import annotations

from .graph import Decision, Graph, Region, _is_gemm

TPU_COSTLY = frozenset({"cos", "sin", "tan"})


def _full_arg_reduction(g: Region) -> bool:
    """An argmax/argmin over every axis of a computed table of rank 2 or more."""
    for r in g.reductions:
        if r.kind != "arg":
            continue
        v = r.operand
        if len(v.shape) >= 2 and len(r.op.params.get("axes", ())) == len(v.shape):
            return True
        if len(v.shape) == 1 and v.producer is not None and v.producer.prim == "reshape" \
                and len(v.producer.ins[0].shape) >= 2:
            return True  # jnp.argmax(x) flattens first
    return False


def decide_tpu(g: Region, graph: Graph) -> Decision:
    # complex data that comes in (a complex argument, a complex product) is split into real and imaginary
    # buffers; a complex value computed elementwise from real data (exp(1j * x)) is expanded into real
    # ops inside the fusion and never stored
    complex_in = any(w.dtype.startswith("complex") and (w.is_arg or op.prim == "dot_general")
                     for op in g.ops for w in op.ins)
    complex_in |= any(r.operand.is_arg and r.operand.dtype.startswith("complex") for r in g.reductions)
    if complex_in:
        return Decision(True, "jaxhlo-predict-tpu-complex", "complex data is split into real and imaginary "
                        "f32 buffers: stored")
    kinds = {r.kind for r in g.reductions}
    dot = any(op.prim == "dot_general" and _is_gemm(op) for op in g.ops)
    if "top_k" in kinds and dot:
        return Decision(True, "jaxhlo-predict-tpu-topk", "an exact top_k of a contraction sorts the stored "
                        "product")
    if not g.ops:
        return Decision(False, "jaxhlo-predict-all-none", "the reduction reads an argument directly")
    if _full_arg_reduction(g):
        return Decision(True, "jaxhlo-predict-tpu-readers", "an argmax/argmin over every axis relays the "
                        "table out (a copy) before it reduces")
    costly_read = any(op.prim in TPU_COSTLY for op in g.ops) and "arg" in g.sources
    if g.two_pass and (dot or costly_read):
        return Decision(True, "jaxhlo-predict-tpu-readers", "two passes over the table (a statistic, then a "
                        "reduction that needs it): a dot's output, or a costly producer, is kept between them")
    if (g.outputs or g.outside) and dot:
        return Decision(True, "jaxhlo-predict-tpu-readers", "the table has a reader besides its reductions "
                        "(a contraction's output read again by the backward pass, or returned)")
    if "matvec" in g.sources and not (all(op.prim == "dot_general" for op in g.ops) and kinds <= {"sum"}):
        return Decision(True, "jaxhlo-predict-tpu-matvec", "a matrix-vector product's result is stored before "
                        "another reduction")
    return Decision(False, "jaxhlo-predict-tpu-fused", "the producers (a dot's too) and the reductions are one "
                    "fusion; sibling reductions share it")


#: The largest stored table the TPU v5e keeps in the chip's own memory (``S(1)`` in its layout, no HBM),
#: and the smallest measured in HBM: ``benchmarks/guide_predictor_where.py`` compiles five programs whose
#: table the TPU stores (a cumsum or sort after cos/sin, complex products, a top_k and a variance of a
#: product) at 512 to 4096 square and reads the memory space of the largest stored buffer
#: (``benchmarks/data/guide_predictor_where.json``): every table up to 34.1 MB was on-chip; at 67.1 MB
#: two of the five were in HBM and three on-chip.  The answer switches to HBM halfway (on a log scale,
#: :data:`ON_CHIP_LIMIT`) and says where the measurements went either way.
ON_CHIP_MAX_BYTES = 34_103_296
HBM_MIN_BYTES = 67_108_864
ON_CHIP_LIMIT = int((ON_CHIP_MAX_BYTES * HBM_MIN_BYTES) ** 0.5)


def where_stored(nbytes: int) -> tuple[str, str]:
    """Where the TPU v5e keeps a stored table of ``nbytes``: (``on-chip`` or ``HBM``, why)."""
    from sphinx_jaxhlo.core.sizes import format_bytes

    if nbytes <= ON_CHIP_LIMIT:
        return "on-chip", (f"{format_bytes(nbytes)}: XLA's TPU memory-space assignment kept every stored table of "
                           f"{format_bytes(ON_CHIP_MAX_BYTES)} or less measured in the chip's own memory (S(1)); "
                           "it costs no HBM")
    either = " (at 67.1 MB the measured tables went either way: 3 of 5 stayed on-chip)" \
        if nbytes <= 2 * HBM_MIN_BYTES else ""
    return "HBM", (f"{format_bytes(nbytes)}: larger than the stored tables the chip kept in its own memory in "
                   f"every measurement ({format_bytes(ON_CHIP_MAX_BYTES)}){either}")
