"""The guide's TPU v5e rules: complex data, exact top_k and shifted (concatenated) tables, tables with
other readers, matrix-vector products."""

from __future__ import annotations

from collections.abc import Iterator

from .graph import (
    _ITEMSIZE,
    _MOVES,
    ELEMENTWISE,
    REDUCTION_KIND,
    Decision,
    Graph,
    Op,
    Reduction,
    Region,
    Value,
    _is_gemm,
    _moved_argument,
    build_region,
)

#: The anchor of the rules' stated limits (where the answer is "compile it").
LIMITS = "jaxhlo-predict-all-limits"

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


def _shifted(g: Region) -> str:
    """What a table-sized ``concatenate`` in ``g`` is (``jnp.roll``, ``jnp.gradient``, shifted slices joined),
    or ``""``: measured on the TPU v5e, such a table outside a loop was stored in 5 of 9 programs (wild3's
    heat, Burgers and gradient-magnitude stencils, a MoCo queue and a separable blur; not a rotary roll or
    wild6's Ising, XY and Gray-Scott rolls): an abstention."""
    floor = 0.9 * max((r.operand.size for r in g.reductions), default=0)
    for op in g.ops:
        if op.prim == "concatenate" and op.outs and op.outs[0].size >= floor:
            return "a roll or shifted slices joined along an axis"
    return ""


#: What the windows of an argument may be taken through and still be read in place (measured: a
#: transposed or broadcast argument's windows fuse; a select between arguments is a table the TPU
#: writes).  A converted argument's windows went both ways (two f32 columns of a bf16 table written;
#: rotary embeddings' strided halves of one fused): :data:`_CONVERTED` leaves them to the compile.
_WINDOWED_IN_PLACE = _MOVES | {"broadcast_in_dim"}
_CONVERTED = _WINDOWED_IN_PLACE | {"convert_element_type"}


def _sliced(g: Region) -> tuple[int, bool]:
    """How many slices read one computed table-sized value of ``g`` outside a loop (0: none, or one),
    and whether every such value is only a converted argument (:data:`_CONVERTED`): ``w[..., 0] *
    w[..., 1]`` of a pairwise table, halves, strided or shifted windows.  Measured on the TPU v5e
    (deviceless, 2026-12-07): such a value is written whatever reads the slices (one product, a sum, two
    reductions; the last axis or the first; 2 or 128 wide; from 1 to 537 MB; through a transpose or a
    ``jnp.where``; under ``jax.grad`` and ``vmap``), while one slice alone, or the windows of an argument
    only transposed or broadcast (:data:`_WINDOWED_IN_PLACE`), fuse; across the families, 18 of the 22
    programs with such a value stored a table (of the 4 others, 2 slice inside a loop, one slices a
    converted argument, one a 1.9 MB table that no table rule reaches)."""
    if g.loop is not None:
        return 0, False
    floor = 0.9 * max((r.operand.size for r in g.reductions), default=0)
    best, converted = 0, True
    seen: set[int] = set()
    todo = [r.operand for r in g.reductions]
    while todo and len(seen) < 4000:  # the values the reductions are computed from (a gradient's forward too)
        v = todo.pop()
        if id(v) in seen or v.producer is None:
            continue
        seen.add(id(v))
        op = v.producer
        todo.extend(op.ins)
        if op.loop is not None or v.size < floor:
            continue
        count = _windows(v)
        if count >= 2 and not _moved_argument(v, _WINDOWED_IN_PLACE):
            best = max(best, count)
            converted = converted and _moved_argument(v, _CONVERTED)
    return best, converted and best > 0


def _windows(v: Value) -> int:
    """The windows ``v`` is read through: its slices and those of the values computed from it elementwise
    at its size, and the whole of it when a reduction reads it (or such a value) whole.  A softmax whose
    result is sliced (``softmax(x)[:, :-1]``) reads its exponentials whole in its sum and through the
    slice: measured on the TPU v5e (deviceless, 2026-12-07; wild12's speculative-decoding residual and
    seven variants: the last axis or another, ``f32`` or ``bf16`` logits, 2-D or 3-D, ``sum(e)`` beside
    ``sum(e[:, 1:])``), the exponentials are written as for two slices, while one slice alone fuses."""
    slices, whole = 0, False
    todo: list[Value] = [v]
    seen: set[int] = set()
    while todo and len(seen) < 200:
        w = todo.pop()
        if id(w) in seen:
            continue
        seen.add(id(w))
        for u in w.users:
            if u.prim == "slice":
                slices += 1
            elif _reduces(u) and u.ins and u.ins[0] is w:
                whole = True
            elif u.prim in ELEMENTWISE and u.loop is None:
                todo.extend(o for o in u.outs if o.size == v.size)
    return slices + (1 if whole and slices else 0)


def _reshaped_last_axis(g: Region, kinds: tuple[str, ...] | None = None) -> Iterator[tuple[Reduction, Value, Value]]:
    """Each reduction of ``g`` over its operand's last axis alone (of ``kinds``, or any) whose operand is a
    reshape of a computed table, through elementwise ops at its shape: (the reduction, the reshape's
    output, its input).  Computed: an elementwise op before or after the reshape, or a table not only an
    argument moved; an argument reshaped and reduced as it is fuses."""
    for r in g.reductions:
        if kinds is not None and r.kind not in kinds:
            continue
        v, computed = r.operand, False
        rank = len(v.shape)
        default = (rank - 1,) if r.kind in ("arg", "top_k") else ()
        if rank < 1 or (tuple(r.op.params.get("axes", default)) if r.kind != "top_k" else default) != (rank - 1,):
            continue
        while v.producer is not None and v.producer.prim in ELEMENTWISE and v.producer.loop is None:
            ins = [w for w in v.producer.ins if w.shape == v.shape]
            if not ins:
                break
            v, computed = ins[0], True
        op = v.producer
        if op is None or op.prim != "reshape" or not op.ins:
            continue
        src = op.ins[0]
        if computed or (src.producer is not None and not _moved_argument(src, _MOVES)):
            yield r, v, src


def _split_minor(g: Region) -> str:
    """A reduction over the last axis alone of a table whose last dimension a reshape split into
    ``[..., n, k]`` with ``k`` of 16 or more, the table computed: ``jnp.max(jnp.abs(w.reshape(o, -1, 128)),
    -1)``, a group-wise quantiser's scales.  Measured on the TPU v5e (deviceless, 2026-12-07; wild13's int4
    packing and 13 variants: ``k`` 16 to 256, sums and maxima, ``f32`` and ``bf16``, 2-D and 3-D, 16 to
    268 MB, under ``jax.grad``): written, as ``[n/8, 8, m/128, 128]`` tiles when ``k`` is 128; ``k`` of 8, a
    reduction over the middle axis or over both new axes, a split of the first dimension, and the argument
    reduced as it is, fused."""
    for r, v, src in _reshaped_last_axis(g):
        if (r.kind != "top_k" and len(v.shape) >= 2 and len(src.shape) + 1 == len(v.shape)
                and src.shape[:-1] == v.shape[:-2] and v.shape[-1] >= 16
                and src.shape[-1] == v.shape[-2] * v.shape[-1]):
            return f"[..., {v.shape[-2]}, {v.shape[-1]}]"
    return ""


def _merged_minor(g: Region) -> str:
    """A ``top_k``, ``argmax`` or ``argmin`` over the last axis of a computed table whose last two dimensions a
    reshape merged (``scores.reshape(g, k * v)`` before a beam search's ``top_k``).  Measured on the TPU v5e
    (deviceless, 2026-12-07; wild13's diverse beam search, a certain miss, and 7 variants: ``top_k`` of
    ``f32`` and ``bf16``, of a product or an ``exp``, 16 to 33 MB, and an ``argmax``): the table is written
    relaid out; a plain ``max`` of it, a merge of the leading dimensions, and the argument as it is fused."""
    for r, v, src in _reshaped_last_axis(g, ("arg", "top_k")):
        if (len(src.shape) == len(v.shape) + 1 and src.shape[:-2] == v.shape[:-1] and src.shape[-2] > 1
                and src.shape[-2] * src.shape[-1] == v.shape[-1]):
            article = "an" if r.op.prim.startswith("arg") else "a"
            return f"{article} {r.op.prim} over the last axis of a computed table whose last two dimensions were merged"
    return ""


def _reduces(op: Op) -> bool:
    return op.prim in REDUCTION_KIND


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
    slices, converted = _sliced(g)
    if converted:
        return Decision(None, LIMITS, f"a converted argument is read through {slices} slices: the TPU wrote the "
                        "converted table in one of the two forms measured (two f32 columns of a bf16 table) and "
                        "not in the other (rotary embeddings' strided halves); compile it", certain=False)
    if slices:
        return Decision(True, "jaxhlo-predict-tpu-readers", f"a computed table is read through {slices} windows "
                        "(x[..., 0] and x[..., 1], halves, strided or shifted views, or the whole table in a "
                        "reduction beside a slice, as a sliced softmax's sum): the TPU writes it and each reader "
                        "reads its part back")
    if shifted := _shifted(g):
        return Decision(None, LIMITS, f"a concatenate builds a table-sized value ({shifted}): the TPU wrote such "
                        "a table in 5 of the 9 measured (stencils yes; Ising, XY and rotary rolls no); compile it",
                        certain=False)
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
    if g.outputs and any(not _reduces(o) for o in g.outside) and not dot:
        return Decision(True, "jaxhlo-predict-tpu-readers", "a returned table is read again to compute another "
                        "returned table beside the reduction (an optimizer's new moment, then its update and the "
                        "update's norm): the TPU writes it and reads it back")
    if merged := _merged_minor(g):
        return Decision(True, "jaxhlo-predict-tpu-readers", f"{merged}: the TPU writes the table relaid out first")
    if split := _split_minor(g):
        return Decision(True, "jaxhlo-predict-tpu-readers", f"a computed table's last dimension is split in "
                        f"{split} and reduced over the new last axis: the TPU writes it in its tiled layout first")
    if "matvec" in g.sources and not (all(op.prim == "dot_general" for op in g.ops) and kinds <= {"sum"}):
        return Decision(True, "jaxhlo-predict-tpu-matvec", "a matrix-vector product's result is stored before "
                        "another reduction")
    return Decision(False, "jaxhlo-predict-tpu-fused", "the producers (a dot's too) and the reductions are one "
                    "fusion; sibling reductions share it")


#: Where the TPU v5e keeps a stored table (``S(1)``: the chip's own memory; none: HBM), from the stored
#: tables of the deviceless compiles measured: every family of ``benchmarks/guide_predictor_calibrate.py``
#: (the rules were written from main, holdouts 1-3 and wild to wild6 and the where-probes,
#: ``benchmarks/guide_predictor_where_probes.py``, then tuned on wild7 to wild13), each read from the stored
#: buffer's own layout.  Sizes are a rank-2 table's bytes as the chip lays it out (:func:`_laid_out_bytes`).
#: Up to 32 MiB: on-chip; above 104 MiB: HBM (a matrix product read by a log-sum-exp was on-chip at 104 MiB, in
#: HBM at 108, 112 and 120 MiB; every family table from 117 MB up but one was in HBM).  Between the two,
#: memory-space assignment places a table by the whole program: a lone table was mostly on-chip and one beside
#: other large buffers mostly in HBM, in the programs the rules were written from, but the wild families' first
#: evaluations found such places right 18 of 31 times, so only named mechanisms (an FFT, narrow tiles, complex
#: data, an output as large, a convolution) answer there (see :func:`where_stored`).
ON_CHIP_MAX_BYTES = 1 << 25
HBM_MIN_BYTES = 104 << 20
#: A table with a program output of its size written beside it: on-chip up to this (48 MiB: a layer norm's
#: and a ``tanh``'s output of a matrix product; two optimizer updates at 32 MiB), HBM above (64 MiB and more:
#: a ``tanh`` output, a dense layer norm, centred RMSprop and Sophia updates and one more, 5 of 5).
COUPLED_MAX_BYTES = 48 << 20
#: Complex data is split into real and imaginary planes: on-chip up to 56 MiB measured (3 probes of one
#: program), in HBM above (57 to 64 MiB: 8 of 8; 128 MiB: 3 of 3); below 56 MiB too few programs: no answer.
COMPLEX_HBM_ABOVE = 56 << 20
#: A rank-2 table whose last dimension is this narrow or narrower fills several times its data in the chip's
#: (8, 128) tiles; measured (rows of 3 and 8 gathered): in HBM as soon as its tiles exceed 32 MiB (8 of 8).
#: A table of rank 3 or more is not counted so: the TPU may lay another dimension last (a f32[96,96,96,3]
#: and a f32[65536,128,3] table were on-chip).
NARROW_LAST = 32


def _laid_out_bytes(v: Value, nbytes: int) -> int:
    """``nbytes`` of ``v`` as the TPU lays it out: the last dimension in whole tiles of 128 (a f32[400000,3]
    gather filled 205 MB of temporaries)."""
    if len(v.shape) < 2 or v.shape[-1] <= 0:
        return nbytes
    last = v.shape[-1]
    return nbytes * (-(-last // 128) * 128) // last


#: Producers whose result is a buffer of its own on the TPU (not fused into an elementwise reader).
_MATERIALIZING = frozenset({"dot_general", "conv_general_dilated", "gather", "fft", "sort", "scatter", "scatter-add",
                            "reduce_window_sum", "reduce_window_max", "cumsum", "cummax", "concatenate",
                            "dynamic_update_slice"})
#: Another buffer this large beside the table (see :func:`_other_buffers`).
OTHER_MIN_BYTES = 16 << 20


#: A table beside an FFT's result as large (computed from it, as a rule): on-chip up to 19.5 MiB measured
#: (5 programs), in HBM from 31 MiB (7 of 7: the FFT's complex result is written in real and imaginary
#: planes, up to twice the table).
FFT_HBM_ABOVE = 24 << 20


def _fft_sized(graph: Graph, table: Value) -> bool:
    """The program computes an FFT, outside a loop, whose result has at least 90 % of the table's elements
    (the families' such tables were computed from it, or were the FFT's own result)."""
    return any(op.prim == "fft" and op.loop is None and any(o.size >= 0.9 * table.size for o in op.outs)
               for op in graph.live_ops())


#: The names a reader knows the producers by, in ``where_why``.
_NAMES = {"dot_general": "matrix product", "conv_general_dilated": "convolution", "reduce_window_sum": "window sum",
          "reduce_window_max": "window maximum", "dynamic_update_slice": "in-place update"}


def _written_beside(graph: Graph, region: Region) -> Iterator[tuple[Op, Value, int]]:
    """The results, outside a loop, of producers the TPU writes whole (a matrix product, a convolution, a
    gather, an FFT...) that are not part of the table's own computation: (the producer, the result, its
    bytes)."""
    mine = {id(v) for v in region.values}
    for op in graph.live_ops():
        if op.loop is None and op.prim in _MATERIALIZING:
            yield from ((op, v, v.size * _ITEMSIZE.get(v.dtype, 4)) for v in op.outs if id(v) not in mine)


def _other_buffers(graph: Graph, region: Region) -> list[str]:
    """The program's other large buffers outside a loop (:func:`_written_beside`) of at least
    :data:`OTHER_MIN_BYTES`, as ``prim (bytes)``."""
    from sphinx_jaxhlo.core.sizes import format_bytes

    return [f"{_NAMES.get(op.prim, op.prim)} ({format_bytes(n)})" for op, _, n in _written_beside(graph, region)
            if n >= OTHER_MIN_BYTES]


def _larger_beside(graph: Graph, region: Region, laid: int) -> tuple[str, int] | None:
    """The largest intermediate (not a program output) written beside the table (:func:`_written_beside`)
    that is larger than the table laid out (``laid``) and than :data:`ON_CHIP_MAX_BYTES`: (its producer's
    name, its bytes), or None."""
    larger = [(n, op.prim) for op, v, n in _written_beside(graph, region)
              if not v.is_out and n > max(laid, ON_CHIP_MAX_BYTES)]
    if not larger:
        return None
    n, prim = max(larger)
    return _NAMES.get(prim, prim), n


def _coupled_output(graph: Graph, table: Value, region: Region, nbytes: int) -> bool:
    """A program output of at least the table's bytes written from the table's own computation: a value
    the table is computed from (not the table itself) is returned, or the table or such a value feeds
    elementwise ops whose result is returned (a layer norm's output, an optimizer's update)."""
    size = 0.9 * table.size
    todo = [v for v in region.values if v.size >= size]
    if any(v.is_out and v is not table and v.size * _ITEMSIZE.get(v.dtype, 4) >= 0.9 * nbytes
           for v in todo):
        return True
    seen: set[int] = set()
    while todo and len(seen) < 2000:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        for u in v.users:
            if u.prim not in ELEMENTWISE or u.loop is not None:
                continue
            for w in u.outs:
                if w.size < size:
                    continue
                if w.is_out and w.size * _ITEMSIZE.get(w.dtype, 4) >= 0.9 * nbytes:
                    return True
                todo.append(w)
    return False


def where_stored(nbytes: int, graph: Graph | None = None, big: Reduction | None = None,
                 rule: str = "") -> tuple[str, str]:
    """Where the TPU v5e keeps a stored table of ``nbytes`` (the largest table a reduction reads, ``big``, of
    ``graph``; ``rule``: the rule that said it is stored): (``on-chip``, ``HBM`` or ``""`` when the
    measurements do not decide, why).  Without the graph, the size alone."""
    from sphinx_jaxhlo.core.sizes import format_bytes as fb

    table = big.operand if big is not None else None
    # the table's own computation, whose values no other-buffer check counts (built once, read by several)
    region = build_region(big, max(1, int(0.9 * big.operand.size))) if graph is not None and big is not None else None
    laid = nbytes
    narrow = False
    if table is not None and len(table.shape) == 2:
        laid = _laid_out_bytes(table, nbytes)
        narrow = 0 < table.shape[-1] <= NARROW_LAST
    size = fb(nbytes)
    if laid > nbytes:
        size += f" ({fb(laid)} in the chip's tiles of 128 along the last axis)"
    if graph is not None and table is not None and laid > FFT_HBM_ABOVE and _fft_sized(graph, table):
        return "HBM", (f"{size}: the program computes an FFT as large, whose result the TPU writes as real "
                       f"and imaginary planes; such tables above {fb(FFT_HBM_ABOVE)} were in HBM (7 of 7 measured, "
                       "from 31 MiB; 5 of up to 19.5 MiB on-chip)")
    if narrow and laid > ON_CHIP_MAX_BYTES:
        return "HBM", (f"{size}: a table {table.shape[-1] if table else ''} wide fills its tiles mostly with "
                       f"padding; such tables of more than {fb(ON_CHIP_MAX_BYTES)} in tiles were in HBM "
                       "(8 of 8 measured)")
    if laid <= ON_CHIP_MAX_BYTES and graph is not None and region is not None and (
            larger := _larger_beside(graph, region, laid)):
        return "", (f"{size}: the program also computes a larger value the TPU may write beside it ({larger[0]}, "
                    f"{fb(larger[1])}), and where the largest buffer it writes lives, which decides its HBM, the "
                    "table's size does not tell: the on-chip places the rules gave such tables were right 14 of 22 "
                    "times on the families it was drawn from and none of 3 on wild20's programs, which it was not "
                    "written from; compile it to see where this one lives")
    if laid <= ON_CHIP_MAX_BYTES:
        return "on-chip", (f"{size}: nearly every stored table of {fb(ON_CHIP_MAX_BYTES)} or less measured was "
                           "kept in the chip's own memory (S(1); 163 of 168 in the first study); it costs no HBM")
    if laid > HBM_MIN_BYTES:
        return "HBM", (f"{size}: the stored tables larger than {fb(HBM_MIN_BYTES)} measured were in HBM, every "
                       "probe's and all family tables from 117 MB up but one (the largest on-chip: 104 MiB, a matrix "
                       "product's)")
    if graph is None or region is None or table is None:
        return "", (f"{size}: between {fb(ON_CHIP_MAX_BYTES)} and {fb(HBM_MIN_BYTES)} the place depends on "
                    "the program's other buffers; compile it to see where this one lives")
    if table.copy_of is not None:
        return "", (f"{size}: a copy XLA makes of an operand (no op of the program computes it); between "
                    f"{fb(ON_CHIP_MAX_BYTES)} and {fb(HBM_MIN_BYTES)} such copies were kept on-chip and in HBM "
                    "(a convolution's input: 37.7 MB on-chip, 67.1 MB in HBM); compile it")
    if rule == "jaxhlo-predict-tpu-complex" or any(v.dtype.startswith("complex") for op in region.ops
                                                    for v in (*op.ins, *op.outs)):
        if laid > COMPLEX_HBM_ABOVE:
            return "HBM", (f"{size}: complex data is split into real and imaginary tables; such stored tables "
                           f"larger than {fb(COMPLEX_HBM_ABOVE)} were in HBM (8 of 8 measured)")
        return "", (f"{size}: complex data, split into real and imaginary tables, was on-chip at 40 to 56 MiB "
                    "in 3 probes of one program; too few to say: compile it")
    if _coupled_output(graph, table, region, nbytes):
        if laid > COUPLED_MAX_BYTES:
            return "HBM", (f"{size}: the program returns an output as large computed with the table (a "
                           "normalised or updated copy); memory-space assignment then kept the table in HBM, "
                           f"above {fb(COUPLED_MAX_BYTES)} in 5 of 5 programs measured")
        return "on-chip", (f"{size}: the program returns an output as large computed with the table; up to "
                           f"{fb(COUPLED_MAX_BYTES)} the table stayed on-chip (2 probes at 48 MiB, two optimizer "
                           "updates at 32 MiB)")
    others = _other_buffers(graph, region)
    if not others and any(op.prim == "conv_general_dilated" for op in region.ops):
        return "HBM", (f"{size}: a convolution's output; such stored tables between {fb(ON_CHIP_MAX_BYTES)} and "
                       f"{fb(HBM_MIN_BYTES)} were in HBM (3 of 4 measured)")
    if not others and any(op.prim == "concatenate" for op in region.ops):
        return "", (f"{size}: the table is joined from parts (a concatenation); of the two such programs measured "
                    "one kept it in HBM, one on-chip: compile it")
    beside = (f" (this program writes other large buffers beside it: {', '.join(others[:3])}"
              f"{'...' if len(others) > 3 else ''})") if others else ""
    return "", (f"{size}: between {fb(ON_CHIP_MAX_BYTES)} and {fb(HBM_MIN_BYTES)} memory-space assignment "
                f"places the table by the whole program{beside}. The sizes and the other buffers did not decide "
                "it: a lone table was on-chip in 40 of 50 programs measured and a table beside other large buffers "
                "in HBM in 20 of 29, but on programs the rules had not seen such places were right 18 of 31 times; "
                "compile it to see where this one lives")
