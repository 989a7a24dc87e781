"""``predict``: the guide's rules applied to a function's jaxpr, for one target.

Traces the function with ``jax.make_jaxpr`` (nothing is lowered or compiled), finds the table (the
largest operand of a reduction, a loop body's counted times its trips), groups the table-sized values
each reduction reads, and asks the target's rules (:mod:`sphinx_jaxhlo.predict.rules`) in the guide's
order.  The answer is a :class:`~sphinx_jaxhlo.predict.answer.Prediction`.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable
from typing import Any

from . import limits
from .answer import NEAR_BREAK_EVEN, Prediction
from .cpu import _canonical_dot, _from_reduction, _operand_region, _reaches_reduction, _ynn_op, decide_cpu
from .graph import (
    _ITEMSIZE,
    BETWEEN,
    ELEMENTWISE,
    REDUCTION_KIND,
    TABLE_SHARE,
    Decision,
    Graph,
    Loop,
    Region,
    Value,
    _ids,
    _is_gemm,
    build_region,
    group_regions,
    reductions_of,
    trivial_dot,
)
from .h100 import _unaligned_matvec, decide_gpu, split_k_unsure
from .tpu import decide_tpu, where_stored

#: The targets the rules know, and the sharded forms that take a target's rules per device.
TARGETS = ("cpu", "gpu:h100", "tpu:v5e")

DECIDERS: dict[str, Callable[[Region, Graph], Decision]] = {"cpu": decide_cpu, "gpu:h100": decide_gpu,
                                                              "tpu:v5e": decide_tpu}


def base_target(target: str) -> str:
    """The one-device target whose rules apply: ``gpu:h100x8`` -> ``gpu:h100``, ``tpu:v5e-8`` -> ``tpu:v5e``."""
    name = target.strip().lower()
    if name in DECIDERS:
        return name
    for base in ("gpu:h100", "tpu:v5e"):
        rest = name[len(base):]
        if name.startswith(base) and rest[:1] in ("x", "-") and rest[1:].isdigit():
            return base
    raise ValueError(f"the guide has no rules for target {target!r}; it has rules for {', '.join(TARGETS)} "
                     "(and their sharded forms, gpu:h100xN and tpu:v5e-N, per device)")


def load_function(source: str, name: str = "f") -> Any:
    """The function ``name`` of a module's source text."""
    module = types.ModuleType("jaxhlo_predict_program")
    exec(compile(source, "<program>", "exec"), module.__dict__)
    return module.__dict__[name]


def structs_of(specs: str) -> tuple[Any, ...]:
    """``jax.ShapeDtypeStruct`` arguments from the package's spec text (``"f32[3,4], f32[4]"``)."""
    from sphinx_jaxhlo.compiler.arguments import to_shape_dtype_structs
    from sphinx_jaxhlo.core.specs import parse_args

    args, _ = to_shape_dtype_structs(parse_args(specs))
    return tuple(args)


def _struct(spec: Any) -> Any:
    if isinstance(spec, str):
        structs = structs_of(spec)
        if len(structs) != 1:
            raise ValueError(f"one spec per argument, got {spec!r}")
        return structs[0]
    return spec


def _loops_of(g: Region) -> Iterable[Loop]:
    loop = g.loop
    while loop is not None:
        yield loop
        loop = loop.parent


def _gemm_in(g: Region) -> bool:
    return any(op.prim == "dot_general" and _is_gemm(op) for op in g.ops)


def _chunks(regions: list[Region], graph: Graph) -> bool:
    """Several reductions of equal tables computed from one shared argument at the top level, and
    slices of it: a Python loop over chunks (or an unrolled scan) that XLA sees whole."""
    if not any(op.prim in ("slice", "dynamic_slice", "split") and op.loop is None for op in graph.live_ops()):
        return False
    top = [g for g in regions if g.loop is None and g.ops]
    if len(top) < 3:
        return False
    shapes = {g.reductions[0].operand.shape for g in top}
    return len(shapes) == 1


def predict(fn: Callable[..., Any] | str, *arg_specs: Any, target: str = "cpu", calibrated: bool = True,
            **kwarg_specs: Any) -> Prediction:
    """Will XLA write the table (the largest intermediate a reduction reads) to memory, by the guide's rules?

    Answers from the function's jaxpr alone (``jax.make_jaxpr``; nothing is lowered or compiled).

    :param fn: the function, or a module's source text whose function ``f`` is taken.
    :param arg_specs: one a positional argument: a spec string as the package writes them
        (``"f32[4096,4096]"``) or a ``jax.ShapeDtypeStruct`` (anything with shape and dtype).
    :param target: ``cpu``, ``gpu:h100`` or ``tpu:v5e`` (or a sharded form, ``gpu:h100x8``,
        ``tpu:v5e-8``: the rules are per device, on the arguments as one device holds them).
    :param calibrated: say how certain the answer is from the rule's measured record
        (:mod:`sphinx_jaxhlo.predict.calibration`: ``certain`` only where it is trusted); ``False``
        gives the rules' own answer with no certainty from the record (``certain`` wherever a rule
        decides: what the calibration's benchmark measures).  The answer (``stored``) is the same.
    :param kwarg_specs: keyword arguments, specs as the positional ones.
    :returns: a :class:`~sphinx_jaxhlo.predict.answer.Prediction`.
    :raises ValueError: an unknown target or a bad spec.
    """
    import jax

    target = base_target(target)
    function: Callable[..., Any] = load_function(fn, "f") if isinstance(fn, str) else fn
    structs = tuple(_struct(s) for s in arg_specs)
    kwargs = {k: _struct(v) for k, v in kwarg_specs.items()}
    return predict_jaxpr(jax.make_jaxpr(function)(*structs, **kwargs), target,
                         _command(function, structs, kwargs, target), calibrated=calibrated)


def predict_call(fn: Callable[..., Any], args: str, target: str, command: str = "") -> Prediction:
    """The guide's answer for ``fn`` called with the arguments of an ``:args:`` text (pytrees and
    keyword arguments included), as a compile would call it."""
    import jax

    from sphinx_jaxhlo.compiler.arguments import to_shape_dtype_structs
    from sphinx_jaxhlo.core.specs import parse_args

    structs, kwargs = to_shape_dtype_structs(parse_args(args))
    return predict_jaxpr(jax.make_jaxpr(fn)(*structs, **kwargs), target, command)


def _spec_text(struct: Any) -> str:
    from sphinx_jaxhlo.core.specs import DTYPES

    names = {jax_name: short for short, (jax_name, _) in reversed(DTYPES.items())}
    dtype = str(getattr(struct, "dtype", ""))
    return f"{names.get(dtype, dtype)}[{','.join(str(d) for d in getattr(struct, 'shape', ()))}]"


def _command(fn: Any, structs: tuple[Any, ...], kwargs: dict[str, Any], target: str) -> str:
    """The one-line compile of ``fn`` that answers where the rules do not."""
    import inspect
    import shlex

    try:
        where = inspect.getsourcefile(fn) or "FILE.py"
    except TypeError:
        where = "FILE.py"
    name = getattr(fn, "__name__", "FUNCTION")
    if not name.isidentifier():
        name = "FUNCTION"
    if not where.endswith(".py"):
        where = "FILE.py"
    specs = ", ".join([*(_spec_text(s) for s in structs), *(f"{k}={_spec_text(v)}" for k, v in kwargs.items())])
    return f"python -m sphinx_jaxhlo {shlex.quote(where + ':' + name)} --args {shlex.quote(specs)} --targets {target}"


def predict_jaxpr(closed: Any, target: str, command: str = "", *, calibrated: bool = True) -> Prediction:
    """The guide's answer for a traced program (a ``ClosedJaxpr``) on ``target``.

    :param command: the compile that answers when the rules do not (default: a generic one).
    :param calibrated: ``certain`` from the rule's measured record
        (:func:`sphinx_jaxhlo.predict.calibration.certify`); ``False``: the rules' own answer.
    """
    answer = _rules_answer(closed, target, command)
    if not calibrated:
        return answer
    from .calibration import certify

    return certify(answer, command)


def _rules_answer(closed: Any, target: str, command: str) -> Prediction:
    """The rules' own answer, before the calibration says how certain it is."""
    from .rules import rule_title

    target = base_target(target)
    graph = Graph(closed)
    every = reductions_of(graph, live=False)
    copy = target == "gpu:h100" and _unaligned_matvec(graph)
    if not every and (contraction := limits.contraction_reduces(graph)):
        return Prediction(target, None, False, limits.LIMITS, rule_title(limits.LIMITS),
                          f"{contraction}: no rule decides it", operand_copy=copy,
                          command=command or f"python -m sphinx_jaxhlo FILE.py:FUNCTION --args ... --targets {target}")
    if not every:
        return Prediction(target, False, True, "jaxhlo-predict-all-none", rule_title("jaxhlo-predict-all-none"),
                          "the program has no reduction", operand_copy=copy)
    table = max(r.scaled for r in every)
    big = max(every, key=lambda r: r.scaled)
    decisions = decide_all(graph, target, table)
    stored = [d for d in decisions if d.stored and d.certain]
    unsure = [d for d in decisions if not d.certain or d.stored is None]
    chosen = stored[0] if stored else (unsure[0] if unsure else decisions[0])
    certain = bool(stored) or not unsure
    if certain and not stored and target == "gpu:h100" and split_k_unsure(graph):
        chosen = limits.abstain("a contraction with 65 to 512 rows or columns and an unaligned long K: the H100's "
                                "split-K GEMM may pad and copy its matrix (65-384 rows did, 448 and 512 did not, "
                                "against f32[8191,4096])")
        certain = False
    itemsize = _ITEMSIZE.get(big.operand.dtype, 4)
    nbytes = big.scaled * itemsize
    where, where_why = ("", "")
    if target == "tpu:v5e" and certain and stored:
        where, where_why = where_stored(nbytes)
    why = chosen.why
    if not certain and chosen.figures:
        why = f"{NEAR_BREAK_EVEN}: {why}"
    shape = ", ".join(str(d) for d in big.operand.shape)
    loop = " per step" if big.scaled != big.operand.size else ""
    return Prediction(
        target, (True if stored else (None if not certain else False)), certain, chosen.rule,
        rule_title(chosen.rule), why, f"{big.operand.dtype}[{shape}]{loop}, {_bytes_text(nbytes)}", nbytes,
        big.scaled, where, where_why, round(chosen.figures.get("us_fused", 0.0), 2),
        round(chosen.figures.get("us_unfused", 0.0), 2), copy,
        "" if certain else (command or f"python -m sphinx_jaxhlo FILE.py:FUNCTION --args ... --targets {target}"))


def _bytes_text(n: int) -> str:
    from sphinx_jaxhlo.core.sizes import format_bytes

    return format_bytes(n)


def decide_all(graph: Graph, target: str, table: int) -> list[Decision]:
    """Each table-sized region's decision, and those of table-sized values outside them."""
    table_reds = [r for r in reductions_of(graph) if r.scaled >= TABLE_SHARE * table]
    regions = group_regions([build_region(r, max(1, int(TABLE_SHARE * r.operand.size))) for r in table_reds])
    decisions = []
    chunked = _chunks(regions, graph)
    shared = _shared_broadcasts(regions) if target == "cpu" else set()
    gathered = limits.gather_of_table(graph, table) if target != "cpu" else ""
    for g in regions:
        loops = list(_loops_of(g))
        if "loop" in g.sources:
            decisions.append(Decision(True, "jaxhlo-predict-all-loop", "the table is a loop's stacked output, "
                                      "reduced after the loop"))
        elif loops and not all(lp.unrolled for lp in loops):
            d = DECIDERS[target](g, graph)
            verdict = {True: "stored", False: "fused", None: "compile it"}[d.stored if d.certain else None]
            if target == "tpu:v5e" and _gemm_in(g) and limits.loop_operand(graph, table):
                decisions.append(limits.abstain(f"a {loops[0].kind} whose body contracts a table-sized operand: "
                                                "the TPU may convert or relay it outside the loop, which no rule "
                                                "covers"))
                continue
            decisions.append(Decision(False, "jaxhlo-predict-all-loop",
                                      f"a {loops[0].kind} reduces inside its body: one step's table at a time "
                                      f"(per step: {d.rule}, {verdict})"))
        elif (loops or chunked) and target != "tpu:v5e":
            d = DECIDERS[target](g, graph)
            what = "an unrolled scan" if loops else "a Python loop over chunks"
            if not d.certain or d.stored is None:
                decisions.append(Decision(None, "jaxhlo-predict-all-loop", f"{what}: each step as it would be "
                                          f"alone, and alone it is near the break-even ({d.why})", certain=False,
                                          figures=d.figures))
            elif target == "gpu:h100" and not d.stored and not _gemm_in(g):
                decisions.append(Decision(False, "jaxhlo-predict-all-loop", f"{what}: each step fuses as it "
                                          f"would alone ({d.rule}); only GEMM steps are merged into one"))
            elif target == "cpu" and loops and not d.stored:
                decisions.append(Decision(False, "jaxhlo-predict-all-loop", f"{what}: every step fuses "
                                          f"as it would alone ({d.rule}), so few steps' buffers are live"))
            else:
                how = ("the steps' GEMMs are merged into one" if target == "gpu:h100" and _gemm_in(g)
                       else "every step's table is live at once")
                decisions.append(Decision(True, "jaxhlo-predict-all-loop",
                                          f"{what}: XLA sees every step at once, {how} (per step: {d.rule})"))
        elif target != "cpu" and (between := _between(g)):
            anchor = "jaxhlo-predict-h100-topk" if target == "gpu:h100" else "jaxhlo-predict-tpu-topk"
            decisions.append(Decision(True, anchor, f"{between} between the table's source and the reduction is a "
                                      "kernel of its own: it reads a computed operand from memory and writes "
                                      "its output for the reduction"))
        elif any(getattr(o, "prim", "") in ("while", "scan") for o in g.outside):
            decisions.append(Decision(True, "jaxhlo-predict-all-loop", "a loop's body reads the table computed "
                                      "before it: a loop is no fusion consumer (instruction_fusion.cc), so the "
                                      "table is written as the loop's operand"))
        else:
            d = DECIDERS[target](g, graph)
            if id(g) in shared and d.stored is False and d.certain:
                d = Decision(True, "jaxhlo-predict-cpu-ynn", "one vector broadcast to the table's shape is read by "
                             "two reductions' fusions (a kernel's row norms in k(x, x) and k(x, y)): XLA's CSE "
                             "makes the broadcasts one value with two readers, which YNN does not take in")
            decisions.append(_limited(g, graph, target, table, d, gathered))
    seen = {id(v) for g in regions for v in g.values}
    decisions += _other_tables(graph, table, target, seen)
    if target == "tpu:v5e" and (outside := limits.gemm_outside(graph, table, seen)):
        decisions.append(limits.abstain(outside))
    if not decisions and (conv := limits.convolution_of_table(graph, table)):
        decisions.append(limits.abstain(f"{conv}: no rule covers it"))
    if not decisions:
        decisions.append(Decision(False, "jaxhlo-predict-all-none", "no table-sized intermediate is computed"))
    return decisions


#: The rules whose stored answer holds whatever else the program does (a kernel of its own reads the table).
_KERNEL_OF_ITS_OWN = frozenset({"jaxhlo-predict-h100-gemm", "jaxhlo-predict-h100-matvec", "jaxhlo-predict-h100-topk",
                                "jaxhlo-predict-tpu-complex", "jaxhlo-predict-tpu-topk", "jaxhlo-predict-cpu-dot",
                                "jaxhlo-predict-cpu-other"})


def _limited(g: Region, graph: Graph, target: str, table: int, d: Decision, gathered: str) -> Decision:
    """``d``, or an abstention where the program leaves the ground its rule was checked on
    (:mod:`sphinx_jaxhlo.predict.limits`)."""
    if target == "cpu" and (half := limits.half_dot_of_table(g)):
        return Decision(True, "jaxhlo-predict-cpu-dot", f"{half} of a computed table: the CPU compiler turns f16 "
                        "dots into f32 dots (ChangeOpDataType, cpu_compiler.cc), so the table is converted and "
                        "written for XLA's own dot, not taken into a YNN fusion")
    if unknown := limits.unknown_op(g):
        if target == "gpu:h100" and unknown == "conv_general_dilated":
            return Decision(True, "jaxhlo-predict-h100-gemm", "a convolution is a cuDNN library call "
                            "(conv_rewriter.cc): its output is written, and the reduction is another kernel")
        return limits.abstain(f"{unknown} computes the table: no rule covers it")
    if d.stored and d.certain and d.rule in _KERNEL_OF_ITS_OWN:
        return d
    if variadic := limits.variadic(g):
        return limits.abstain(f"{variadic}: how XLA merges it is not in the rules")
    if target == "cpu":
        if between := _between(g):
            if any(op.prim in CPU_THUNKS for op in g.ops):
                what = "/".join(sorted({op.prim for op in g.ops if op.prim in CPU_THUNKS}))
                return Decision(True, "jaxhlo-predict-cpu-other", f"a {what} between the table's source and the "
                                "reduction is a thunk of its own (SortThunk, FftThunk: thunk_emitter.cc), no "
                                "fusion: it reads its operand from memory and writes its output for the reduction")
            return limits.abstain(f"a {between} between the table's source and the reduction: no CPU rule covers "
                                  "what it writes")
        if d.stored is False and (why := limits.column_statistic(graph, table, g) or limits.applied_back(g, table)):
            return limits.abstain(f"{why}: outside the YNN fusions the rules follow")
        return d
    if target == "tpu:v5e" and (gathered.startswith("a gather") or limits.scatter_reads_table(graph, table)):
        what = gathered or limits.scatter_reads_table(graph, table)
        return Decision(True, "jaxhlo-predict-tpu-topk", f"{what}: the TPU writes the table the gather or scatter "
                        "reads or builds (measured: libtpu is closed)")
    if gathered:
        return limits.abstain(f"{gathered}: the rules do not follow a gather's or scatter's fusion")
    n = limits.passes(graph, table, g)
    if n >= 4 or (n == 3 and (target == "gpu:h100" or limits.tpu_gemms(g))):
        return limits.abstain(f"a reduction of a normalised table ({n} passes over table-sized data"
                              + (", a contraction's" if n == 3 else "") + "): the rules were checked on fewer")
    if target == "gpu:h100":
        kinds = {r.kind for r in g.reductions}
        if kinds & {"top_k", "approx_top_k"} and not g.ops:
            return limits.abstain("a top_k of an argument: a TopK kernel or a sort, by k and the row's length, "
                                  "which the rules do not choose")
    if target == "tpu:v5e" and d.stored is False and limits.tpu_gemms(g) >= 2:
        return limits.abstain("two contractions feed one table: the rules know one dot in an output fusion")
    if target == "tpu:v5e" and d.stored is False and (chained := limits.chained_gemm(g, table)):
        return limits.abstain(f"{chained}: the rules know one dot in an output fusion")
    return d




def _shared_broadcasts(regions: list[Region]) -> set[int]:
    """The regions (by ``id``), each a contraction and its elementwise epilogue, that read one smaller value
    broadcast to a table-sized shape the same way as another such region does: XLA's CSE (``hlo_cse.cc``)
    makes the two broadcasts one instruction, and YNN's fusion grows only through values with one reader
    (``library_rewriter.cc``), so it is written."""
    seen: dict[tuple[Any, ...], set[int]] = {}
    for g in regions:
        if not _gemm_in(g):
            continue  # measured only where each region is a YNN dot with its epilogue (MMD's kernels)
        for op in g.ops:
            if op.prim not in ELEMENTWISE or not op.outs:
                continue
            out = op.outs[0]
            for v in op.ins:
                if v.literal or v.is_arg or v.size >= out.size or len(v.shape) != len(out.shape):
                    continue
                seen.setdefault((id(v), v.shape, out.shape), set()).add(id(g))
    return {i for regs in seen.values() if len(regs) > 1 for i in regs}


#: Ops the CPU runs as a thunk of their own, never in a fusion (``thunk_emitter.cc``: ``SortThunk``,
#: ``FftThunk``); a cumulative op is lowered to other ops (no CPU rule follows them).
CPU_THUNKS = frozenset({"sort", "fft"})


def _between(g: Region) -> str:
    """The name of a sort, scan or FFT in ``g`` (between the table's source and its reduction), or ``""``:
    its output is read from memory by the reduction, and a computed operand is written for it."""
    return next((op.prim for op in g.ops if op.prim in BETWEEN), "")


def _other_tables(graph: Graph, table: int, target: str, seen: set[int]) -> list[Decision]:
    """Table-sized intermediates outside the reductions' regions (a gradient's backward tables)."""
    out = []
    for op in graph.live_ops():
        for v in op.outs:
            if id(v) in seen or v.size < TABLE_SHARE * table or v.is_out or not v.users or op.loop is not None:
                continue
            if op.prim in ("scan", "while"):
                out.append(Decision(True, "jaxhlo-predict-all-loop", "a loop's stacked output"))
            elif target == "gpu:h100" and op.prim in ELEMENTWISE and any(
                    u.prim == "dot_general" and _is_gemm(u) for u in v.users) and any(
                    _from_reduction(w, 6) for o in _operand_region(v, int(TABLE_SHARE * table))[1]
                    for w in o.ins if w.size < v.size):
                out.append(Decision(True, "jaxhlo-predict-h100-gemm", "a GEMM's operand is normalised by a "
                                    "reduction's result (w / norm(w), an RMS norm): a kernel of its own writes it "
                                    "before the GEMM, whose fusion takes only a plain scale in"))
            elif (op.prim in ELEMENTWISE and target in ("cpu", "gpu:h100")
                  and (mv := _narrow_reader(v, target))):
                anchor = "jaxhlo-predict-cpu-dot" if target == "cpu" else "jaxhlo-predict-h100-matvec"
                out.append(Decision(True, anchor, mv))
            elif op.prim == "dot_general" and _is_gemm(op):
                if target == "gpu:h100":
                    out.append(Decision(True, "jaxhlo-predict-h100-gemm", "a GEMM's table-sized output is stored"))
                elif target == "cpu" and not all(_ynn_op(u) for u in v.users):
                    out.append(Decision(True, "jaxhlo-predict-cpu-dot", "a dot's table-sized output is read "
                                        "by an op YNN does not take"))
            elif target == "cpu" and op.prim in ELEMENTWISE and any(u.prim == "dot_general" for u in v.users):
                if any(w.dtype in limits.HALF for u in v.users if u.prim == "dot_general" for w in u.ins):
                    out.append(limits.abstain("a bf16/f16 contraction of a computed table: whether YNN's dot "
                                              "fusion takes it is not in the rules"))
                    continue
                values, ops = _operand_region(v, int(TABLE_SHARE * table))
                if _ids(values) & seen and all(_canonical_dot(u) for u in v.users if u.prim == "dot_general"):
                    continue  # the reductions' decision covers it (softmax before ``@ v``)
                from_dot = any(w.producer is not None and w.producer.prim == "dot_general" for w in values)
                read_by_reduction = any(u.prim in REDUCTION_KIND for w in values for u in w.users)
                uses_reduction = any(_from_reduction(w, 6) for o in ops for w in o.ins if id(w) not in _ids(values))
                feeds_reduction = any(_reaches_reduction(o, 3) for d in v.users if d.prim == "dot_general"
                                      for o in d.outs)
                if from_dot and not read_by_reduction and not uses_reduction and not feeds_reduction:
                    out.append(Decision(True, "jaxhlo-predict-cpu-dot", "a contraction reads a table that another "
                                        "contraction computed, with no reduction between: the elementwise part is "
                                        "XLA's loop fusion, written between the two YNN dots"))
                    continue
                inside = {id(o) for o in ops} | {id(u) for u in v.users if u.prim == "dot_general"}
                shared = [w for w in values if any(id(u) not in inside for u in w.users)]
                bad = [o for o in ops if not _ynn_op(o)]
                if bad or shared:
                    why = (f"{', '.join(sorted({o.prim for o in bad}))} not in YNN's table" if bad
                           else "a value of it has another reader")
                    out.append(Decision(True, "jaxhlo-predict-cpu-ynn", f"a dot reads a table computed "
                                        f"elementwise ({why}): YNN's dot fusion cannot take it in"))
    return out


#: XLA CPU fuses an elementwise producer into a dot only for a vector-shaped output whose vector operand
#: is under this many bytes (``kFusionThresholdBytes``, ``cpu_instruction_fusion.cc``).
CPU_DOT_FUSION_BYTES = 16 * 1024
#: Past this many operand elements the H100 runs a matrix-vector product as a GEMM (rule 2).
H100_MATVEC_GEMM = 10_000_000


def _narrow_reader(v: Value, target: str) -> str:
    """Why a computed table ``v`` read by a matrix-vector product (a contraction with a side of one, no
    reduction around) is written for it, or ``""``: on the CPU XLA's own dot reads its operands from
    memory unless its output is a vector and its vector small; on the H100 a large one is a GEMM."""
    for u in v.users:
        if u.prim != "dot_general" or _is_gemm(u) or trivial_dot(u) or not u.outs:
            continue
        other = u.ins[1] if u.ins[0] is v else u.ins[0]
        if target == "cpu" and (len(u.outs[0].shape) > 1
                                or other.size * _ITEMSIZE.get(other.dtype, 4) >= CPU_DOT_FUSION_BYTES):
            return ("a matrix-vector product reads the computed table: XLA's own dot, not a YNN one, and "
                    "fused with its producer only for a vector output and a vector under 16 kB "
                    "(cpu_instruction_fusion.cc), so the table is written")
        if target == "gpu:h100" and v.size >= H100_MATVEC_GEMM:
            return (f"a matrix-vector product of {v.size:,} operand elements is a GEMM (past "
                    f"{H100_MATVEC_GEMM:,}): its computed operand is written for it")
    return ""


#: The H100's split-K GEMM pads K to a multiple of this (measured: K = 10016 is not padded, 10000 is).
