"""``predict``: the guide's rules applied to a function's jaxpr, for one target.

Traces the function with ``jax.make_jaxpr`` (nothing is lowered or compiled), finds the table (the
largest operand of a reduction, a loop body's counted times its trips), groups the table-sized values
each reduction reads, and asks the target's rules (:mod:`sphinx_jaxhlo.predict.rules`) in the guide's
order.  The answer is a :class:`~sphinx_jaxhlo.predict.answer.Prediction`.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable
from typing import Any

from . import conv, dots, gather, limits, norm, ops, rng
from . import cpu as cpu_rules
from .answer import NEAR_BREAK_EVEN, Prediction
from .cpu import _canonical_dot, _from_reduction, _reaches_reduction, _ynn_op, decide_cpu
from .graph import (
    _ITEMSIZE,
    BETWEEN,
    BITCASTS,
    CONTRACTION,
    ELEMENTWISE,
    REDUCTION_KIND,
    TABLE_SHARE,
    Decision,
    Graph,
    Op,
    Reduction,
    Region,
    Value,
    _ids,
    _is_gemm,
    _moved_argument,
    build_region,
    group_regions,
    operand_region,
    reductions_of,
    trivial_dot,
)
from .h100 import CUMULATIVE, _unaligned_matvec, cumulative_operand, decide_gpu, split_k_unsure
from .recipe import compile_command
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
                         compile_command(function, structs, kwargs, target), calibrated=calibrated)


def predict_call(fn: Callable[..., Any], args: str, target: str, command: str = "") -> Prediction:
    """The guide's answer for ``fn`` called with the arguments of an ``:args:`` text (pytrees and
    keyword arguments included), as a compile would call it."""
    import jax

    from sphinx_jaxhlo.compiler.arguments import to_shape_dtype_structs
    from sphinx_jaxhlo.core.specs import parse_args

    structs, kwargs = to_shape_dtype_structs(parse_args(args))
    return predict_jaxpr(jax.make_jaxpr(fn)(*structs, **kwargs), target, command)


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
    from sphinx_jaxhlo.core.sizes import format_bytes

    from .rules import rule_title

    target = base_target(target)
    graph = Graph(closed)
    # every reduction, dead ones included: a gradient's forward loss is dead code XLA removes, but its
    # operand sets the scale of the backward's tables (decide_all reads only the live reductions)
    every = reductions_of(graph, live=False)
    copy = target == "gpu:h100" and _unaligned_matvec(graph)
    if not every:
        scattered = limits.scattered_updates(graph)
        if scattered is None:
            return Prediction(target, False, True, "jaxhlo-predict-all-none", rule_title("jaxhlo-predict-all-none"),
                              "the program has no reduction", operand_copy=copy)
        every, decisions = [scattered], [gather.scatter_abstention()]
    elif max(r.scaled for r in every) == 0:
        return Prediction(target, False, True, "jaxhlo-predict-all-none", rule_title("jaxhlo-predict-all-none"),
                          "the table has no elements", operand_copy=copy)
    else:
        table = max(r.scaled for r in every)
        decisions = decide_all(graph, target, table) + rng.decide(closed.jaxpr, graph, target, table)
    big = max(every, key=lambda r: r.scaled)
    stored = [d for d in decisions if d.stored and d.certain]
    unsure = [d for d in decisions if not d.certain or d.stored is None]
    chosen = stored[0] if stored else (unsure[0] if unsure else decisions[0])
    certain = bool(stored) or not unsure
    if certain and not stored and target == "gpu:h100" and split_k_unsure(graph):
        chosen = limits.abstain("a contraction with 65 to 512 rows or columns and an unaligned long K: the H100's "
                                "split-K GEMM may pad and copy its matrix (65-384 rows did, 448 and 512 did not, "
                                "against f32[8191,4096])")
        certain = False
    if chosen.value is not None and chosen.value.size >= big.scaled:
        # the decision is about a value no reduction reads (the reductions may be dead forward code)
        big = Reduction(big.op, big.kind, chosen.value, chosen.value.size)
    itemsize = _ITEMSIZE.get(big.operand.dtype, 4)
    nbytes = big.scaled * itemsize
    where, where_why = ("", "")
    if target == "tpu:v5e" and certain and stored:
        where, where_why = where_stored(nbytes, graph, big, chosen.rule)
    why = chosen.why
    if not certain and chosen.figures:
        why = f"{NEAR_BREAK_EVEN}: {why}"
    shape = ", ".join(str(d) for d in big.operand.shape)
    loop = " per step" if big.scaled != big.operand.size else ""
    return Prediction(
        target, (True if stored else (None if not certain else False)), certain, chosen.rule,
        rule_title(chosen.rule), why, f"{big.operand.dtype}[{shape}]{loop}, {format_bytes(nbytes)}", nbytes,
        big.scaled, where, where_why, round(chosen.figures.get("us_fused", 0.0), 2),
        round(chosen.figures.get("us_unfused", 0.0), 2), copy,
        "" if certain else (command or f"python -m sphinx_jaxhlo FILE.py:FUNCTION --args ... --targets {target}"))


def decide_all(graph: Graph, target: str, table: int) -> list[Decision]:
    """Each table-sized region's decision, and those of table-sized values outside them."""
    table_reds = [r for r in reductions_of(graph) if r.scaled >= TABLE_SHARE * table]
    regions = group_regions([build_region(r, max(1, int(TABLE_SHARE * r.operand.size))) for r in table_reds])
    decisions = []
    chunked = _chunks(regions, graph)
    shared = _shared_broadcasts(regions) if target == "cpu" else set()
    gathered = limits.gather_of_table(graph, table) if target != "cpu" else ""
    for g in regions:
        loops = g.loops()
        rolled = bool(loops) and not all(lp.unrolled for lp in loops)  # one step's table at a time
        if _contraction(g):
            decisions.append(dots.decide_contraction(g, target, table) or limits.abstain(
                "the only reduction is a contraction of a computed operand: no rule decides it"))
        elif "loop" in g.sources and not rolled:
            decisions.append(Decision(True, "jaxhlo-predict-all-loop", "the table is a loop's stacked output, "
                                      "reduced after the loop"))
        elif rolled:
            d = DECIDERS[target](g, graph)
            verdict = {True: "stored", False: "fused", None: "compile it"}[d.stored if d.certain else None]
            if target == "tpu:v5e" and dots.loop_contracts_f32((op for op in graph.live_ops() if op.loop in loops),
                                                                table):
                decisions.append(dots.converted_for_the_loop(f"a {loops[0].kind} whose body contracts a table-sized "
                                                             "f32 operand"))
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
            decisions.append(_read_by(between, between.ins[0], target, f"{between.prim} between the table's "
                                      "source and the reduction is a kernel of its own: it reads a computed operand "
                                      "from memory and writes its output for the reduction"))
        elif any(getattr(o, "prim", "") in ("while", "scan") for o in g.outside):
            decisions.append(_loop_operand("a loop's body reads the table computed before it"))
        else:
            d = DECIDERS[target](g, graph)
            if id(g) in shared and d.stored is False and d.certain:
                d = Decision(True, "jaxhlo-predict-cpu-ynn", "one vector broadcast to the table's shape is read by "
                             "two reductions' fusions (a kernel's row norms in k(x, x) and k(x, y)): XLA's CSE "
                             "makes the broadcasts one value with two readers, which YNN does not take in")
            decisions.append(_limited(g, graph, target, table, d, gathered))
    # a contraction's table is left to the other tables' matrix-vector rule, the one rule that speaks for it
    seen = {id(v) for g in regions if not _contraction(g) for v in g.values}
    fused = {id(v) for g, d in zip(regions, decisions, strict=True) if d.stored is False and d.certain
             for v in g.values}
    decisions += _other_tables(graph, table, target, seen, matvec_only=any(_contraction(g) for g in regions),
                               fused=fused)
    decisions += dots.decide_grouped(graph, target, table)
    if target == "tpu:v5e" and (unaligned := dots.unaligned_batched_operand(
            (v for op in graph.live_ops() for v in op.outs), table)):
        decisions.append(dots.operand_written(unaligned))
    if target == "tpu:v5e" and (quantised := dots.int8_operand_written(graph, table)):
        decisions.append(quantised)
    if target == "tpu:v5e" and (outside := limits.gemm_outside(graph, table, seen)):
        decisions.append(limits.abstain(outside))
    if not decisions and (read := limits.convolution_of_table(graph, table)):
        decisions.append(conv.decide_no_reduction(graph, table, target) or limits.abstain(f"{read}: no rule covers it"))
    if not decisions and target == "tpu:v5e" and _backward_table(graph, table, seen):
        decisions.append(limits.abstain("a contraction reads a table-sized value computed from another "
                                        "contraction's output, outside the reductions (a gradient's backward "
                                        "pass): the TPU writes it or keeps it in the contraction's fusion, by "
                                        "cases the rules do not separate"))
    if not decisions and target == "tpu:v5e" and dots.loop_contracts_f32(graph.live_ops(), table):
        decisions.append(dots.converted_for_the_loop("a loop whose body contracts slices of a table-sized f32 "
                                                     "operand, as a gradient accumulated over microbatches does"))
    if not decisions and target == "gpu:h100" and (scattered := gather.scatter_decision(graph, table)):
        decisions.append(scattered)
    if not decisions and target == "tpu:v5e" and (got := gather.tpu_gather_decision(graph, table, gathered, True)):
        decisions.append(got)
    if not decisions:
        decisions.append(Decision(False, "jaxhlo-predict-all-none", "no table-sized intermediate is computed"))
    return decisions


def _backward_table(graph: Graph, table: int, seen: set[int]) -> bool:
    """A live table-sized value outside the reductions' regions, not itself a contraction's output, that a
    contraction reads and that another contraction's output computes (``jax.grad`` of a loss whose value is
    not returned: the backward pass's tables, with no live reduction of them)."""
    return any(id(v) not in seen and v.size >= TABLE_SHARE * table and not v.is_out and op.loop is None
               and op.prim != "dot_general" and any(u.prim == "dot_general" and _is_gemm(u) for u in v.users)
               and limits.from_gemm(v, v.size) for op in graph.live_ops() for v in op.outs)


def _contraction(g: Region) -> bool:
    """``g`` is reduced by a contraction only (:func:`~sphinx_jaxhlo.predict.graph.reductions_of`)."""
    return all(r.kind == CONTRACTION for r in g.reductions)


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
    if (unknown := limits.unknown_op(g)) and unknown != conv.CONV:
        return ops.decide_unknown(g, unknown, target)
    if unknown and ((d := conv.decide_conv(g, graph, target, table, d)).stored is None or target == "gpu:h100"):
        return d
    if d.stored and d.certain and d.rule in _KERNEL_OF_ITS_OWN:
        return d
    if stacked := ops.stack_of_an_arg_reduction(g):
        return limits.abstain(f"{stacked}: whether XLA fuses it is not in the rules")
    if variadic := limits.variadic(g):
        return limits.abstain(f"{variadic}: how XLA merges it is not in the rules")
    if target == "cpu":
        if between := _between(g):
            if any(op.prim in CPU_THUNKS for op in g.ops):
                prims = sorted({op.prim for op in g.ops if op.prim in CPU_THUNKS})
                thunks = ", ".join(CPU_THUNKS[p] for p in prims)
                return Decision(True, "jaxhlo-predict-cpu-other", f"a {'/'.join(prims)} between the table's "
                                f"source and the reduction is a thunk of its own ({thunks}: thunk_emitter.cc), "
                                "no fusion: it reads its operand from memory and writes its output for the "
                                "reduction")
            return limits.abstain(f"a {between.prim} between the table's source and the reduction: no CPU rule covers "
                                  "what it writes")
        if d.stored is False and (why := limits.column_statistic(graph, table, g) or limits.applied_back(g, table)):
            return limits.abstain(f"{why}: outside the YNN fusions the rules follow")
        return d
    if target == "tpu:v5e" and (got := gather.tpu_gather_decision(graph, table, gathered)):
        return got
    if gathered:
        got = gather.decide_h100_gather(g, graph, table, d) if target == "gpu:h100" else None
        return got or limits.abstain(f"{gathered}: the rules do not follow a gather's or scatter's fusion")
    n = limits.passes(graph, table, g)
    if n >= 3 and (normed := norm.decide_norm(g, graph, target, table, n, d)) is not None:
        return normed
    if target == "gpu:h100":
        kinds = {r.kind for r in g.reductions}
        if kinds & {"top_k", "approx_top_k"} and not g.ops:
            return limits.abstain("a top_k of an argument: a TopK kernel or a sort, by k and the row's length, "
                                  "which the rules do not choose")
    if target == "tpu:v5e" and d.stored is False and limits.tpu_gemms(g) >= 2:
        return dots.two_on_tpu(g, table) or limits.abstain("two contractions feed one table: the rules know one "
                                                           "dot in an output fusion")
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
CPU_THUNKS = {"sort": "SortThunk", "fft": "FftThunk"}


#: The rule that answers a sort, scan or FFT reading a computed table, per target.
_BETWEEN_RULE = {"cpu": "jaxhlo-predict-cpu-other", "gpu:h100": "jaxhlo-predict-h100-topk",
                 "tpu:v5e": "jaxhlo-predict-tpu-topk"}


def _between(g: Region) -> Op | None:
    """A sort, cumulative op or FFT in ``g`` (between the table's source and its reduction), or None: its
    output is read from memory by the reduction, and a computed operand is written for it."""
    return next((op for op in g.ops if op.prim in BETWEEN), None)


def _read_by(op: Op, operand: Value, target: str, why: str) -> Decision:
    """A sort, cumulative op or FFT reading a computed operand writes it; on the H100 ``cumulative_operand`` may not."""
    cheap = cumulative_operand(operand, op) if target == "gpu:h100" and op.prim in CUMULATIVE else None
    return cheap or Decision(True, _BETWEEN_RULE[target], why)


def _loop_operand(what: str, written: str = "table is written as the loop's operand", value: Value | None = None
                  ) -> Decision:
    """A loop reads a table-sized value computed before it: no fusion consumer, so the value is written."""
    return Decision(True, "jaxhlo-predict-all-loop", f"{what}: a loop is no fusion consumer "
                    f"(instruction_fusion.cc), so the {written}", value=value)


def _other_tables(graph: Graph, table: int, target: str, seen: set[int], matvec_only: bool = False,
                  fused: frozenset[int] | set[int] = frozenset()) -> list[Decision]:
    """Table-sized intermediates outside the reductions' regions (a gradient's backward tables).

    :param matvec_only: only the matrix-vector rule (:func:`_narrow_reader`) speaks: the program's only
        reduction is a contraction, whose table no other rule here was checked on.
    """
    out = []
    for op in graph.live_ops():
        for v in op.outs:
            if id(v) in seen or v.size < TABLE_SHARE * table or v.is_out or not v.users or op.loop is not None:
                continue
            mv = _narrow_reader(v, target) if op.prim in ELEMENTWISE and target in ("cpu", "gpu:h100") else None
            copied = _moved_argument(v, BITCASTS)  # an argument reshaped: a bitcast, nothing is written
            if matvec_only:
                out += [mv] if mv is not None else []
                continue
            if op.prim in ("scan", "while"):
                out.append(Decision(True, "jaxhlo-predict-all-loop", "a loop's stacked output"))
            elif (loop := next((u.prim for u in v.users if u.prim in ("scan", "while")), "")) and not copied:
                out.append(_loop_operand(f"a {loop} reads a table-sized value the program computes before it",
                                         "value is written as its operand (a table of constants too: jnp.eye was, "
                                         "on every target)", v))
            elif (reader := next((u for u in v.users if u.prim in BETWEEN), None)) and not copied and (
                    target != "cpu" or reader.prim in CPU_THUNKS):
                d = _read_by(reader, v, target, f"a {reader.prim} reads a table-sized value the program computes: a "
                             "kernel of its own (on the CPU a sort or an FFT is no fusion), it reads its operand from "
                             "memory, so the value is written")
                out += [dataclasses.replace(d, value=v)] if d.stored is not False else []
            elif op.prim in CPU_THUNKS and not copied:
                out.append(Decision(True, _BETWEEN_RULE[target], f"a {op.prim}'s output is table-sized: the "
                                    f"{op.prim} is a {'thunk' if target == 'cpu' else 'kernel'} of its own, "
                                    "whose output its readers read from memory", value=v))
            elif target == "gpu:h100" and op.prim in ELEMENTWISE and any(
                    u.prim == "dot_general" and _is_gemm(u) for u in v.users) and any(
                    _from_reduction(w, 6) for o in operand_region(v, int(TABLE_SHARE * table))[1]
                    for w in o.ins if w.size < v.size):
                out.append(Decision(True, "jaxhlo-predict-h100-gemm", "a GEMM's operand is normalised by a "
                                    "reduction's result (w / norm(w), an RMS norm): a kernel of its own writes it "
                                    "before the GEMM, whose fusion takes only a plain scale in"))
            elif mv is not None:
                out.append(mv)
            elif op.prim == "dot_general" and _is_gemm(op):
                if target == "gpu:h100":
                    out.append(Decision(True, "jaxhlo-predict-h100-gemm", "a GEMM's table-sized output is stored"))
                elif target == "cpu" and not all(_ynn_op(u) for u in cpu_rules._past_reshapes(v)):
                    out.append(Decision(True, "jaxhlo-predict-cpu-dot", "a dot's table-sized output is read "
                                        "(as it is or reshaped) by an op YNN does not take"))
            elif target == "cpu" and op.prim in ELEMENTWISE and any(u.prim == "dot_general" for u in v.users):
                if any(w.dtype in limits.HALF for u in v.users if u.prim == "dot_general" for w in u.ins):
                    out.append(limits.abstain("a bf16/f16 contraction of a computed table: whether YNN's dot "
                                              "fusion takes it is not in the rules"))
                    continue
                values, ops = operand_region(v, int(TABLE_SHARE * table))
                if _ids(values) & seen and all(_canonical_dot(u) or cpu_rules._reads_as_is(u, v) for u in v.users
                                               if u.prim == "dot_general"):
                    continue  # the reductions' decision covers it (softmax before ``@ v``)
                from_dot = any(w.producer is not None and w.producer.prim == "dot_general" for w in values)
                read_by_reduction = any(u.prim in REDUCTION_KIND for w in values for u in w.users)
                uses_reduction = any(_from_reduction(w, 6) for o in ops for w in o.ins if id(w) not in _ids(values))
                feeds_reduction = any(_reaches_reduction(o, 3) for d in v.users if d.prim == "dot_general"
                                      for o in d.outs)
                held = [d for d in v.users if d.prim == "dot_general" and all(id(o) in fused for o in d.outs)]
                if (from_dot and not read_by_reduction and not uses_reduction and (not feeds_reduction or held)
                        and not cpu_rules._taken_up(v, values, ops, fused)):
                    out.append(Decision(True, "jaxhlo-predict-cpu-dot", "a contraction reads a table that another "
                                        "contraction computed, with no reduction between: the elementwise part is "
                                        "XLA's loop fusion, written between the two YNN dots" if not held else
                                        "the reductions' YNN fusion holds a contraction whose operand another "
                                        "contraction computed, but cannot take that computation in (an op or a dot "
                                        "YNN does not take, a value read elsewhere or returned): it is written"))
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


#: XLA CPU fuses an elementwise producer into a dot only for an output of rank one or less whose vector
#: operand is under this many bytes (``kFusionThresholdBytes``, ``cpu_instruction_fusion.cc``).
CPU_DOT_FUSION_BYTES = 16 * 1024
#: Past this many operand elements an H100 matrix-vector product of a computed square (``x * x``) wrote
#: the square in every case measured (the review: 9,999,872 to 67,108,864 elements; ``exp``, ``cos`` and
#: ``x + 1`` were read directly by the GEMM's fusion at 67M, so only the square is answered).
H100_MATVEC_GEMM = 10_000_000
#: Ops between a table and the matrix-vector product that reads it that only move or relabel its data.
_TO_DOT = frozenset({"transpose", "reshape", "squeeze", "expand_dims", "convert_element_type", "copy", "copy_p"})


def _dot_readers(v: Value, depth: int = 3) -> list[tuple[Op, Value]]:
    """The contractions that read ``v``, directly or through layout-only ops (``exp(m).T``), with the
    value each reads."""
    out: list[tuple[Op, Value]] = []
    todo = [(v, depth)]
    while todo:
        w, d = todo.pop()
        for u in w.users:
            if u.prim == "dot_general":
                out.append((u, w))
            elif d > 0 and u.prim in _TO_DOT and u.outs and u.outs[0].size == w.size:
                todo.append((u.outs[0], d - 1))
    return out


def _square(op: Op | None) -> bool:
    if op is None:
        return False
    if op.prim == "square" or (op.prim == "integer_pow" and op.params.get("y") == 2):
        return True
    return op.prim == "mul" and len(op.ins) == 2 and op.ins[0] is op.ins[1]


def _constant_vector(w: Value) -> bool:
    """A vector broadcast from a scalar (the ``ones`` of a gradient's backward product)."""
    src = w.producer
    for _ in range(3):
        if src is None:
            return False
        if src.prim == "broadcast_in_dim":
            return src.ins[0].size == 1
        if src.prim not in _TO_DOT:
            return False
        src = src.ins[0].producer
    return False


def _narrow_reader(v: Value, target: str) -> Decision | None:
    """``_narrow_decision``, the table it is about recorded on it."""
    d = _narrow_decision(v, target)
    if d is not None:
        d.value = v
    return d


def _narrow_decision(v: Value, target: str) -> Decision | None:
    """The decision for a computed table ``v`` read by a matrix-vector product (a contraction with a side
    of one), directly or through a transpose or reshape, or ``None``.

    CPU: XLA's own dot reads its operands from memory unless its output has rank one or less and its
    vector is under 16 kB (``cpu_instruction_fusion.cc``).  Whether the optimized HLO's dot keeps a rank-1
    output is not in the jaxpr (``exp(m) @ v`` became an ``[n,1]`` dot and wrote ``exp(m)`` at every
    vector size the review measured; ``v @ exp(m).T`` kept a vector output and followed the threshold), so
    under 16 kB the answer is the compile.  bf16 and f16 dots are converted to f32 first: their vector is
    counted in f32 bytes.  H100: a square past 10M elements is written; a product with a broadcast
    constant (a gradient's ``ones @ exp(m)``) is a column reduction of the table, the cost model's call."""
    for u, w in _dot_readers(v):
        if _is_gemm(u) or trivial_dot(u) or not u.outs:
            continue
        other = u.ins[1] if u.ins[0] is w else u.ins[0]
        if target == "cpu":
            nbytes = other.size * max(4, _ITEMSIZE.get(other.dtype, 4))
            via = "" if w is v else " (through a transpose or reshape, which folds into the dot)"
            if len(u.outs[0].shape) > 1 or nbytes >= CPU_DOT_FUSION_BYTES:
                what = (f"a {len(u.outs[0].shape)}-d output" if len(u.outs[0].shape) > 1
                        else f"a vector of {nbytes:,} bytes (f32 or wider)")
                copy = (" (as an f32 copy: XLA converts a bf16 or f16 dot's operands to f32 first)"
                        if _ITEMSIZE.get(w.dtype, 4) < 4 else "")
                return Decision(True, "jaxhlo-predict-cpu-dot", f"a matrix-vector product reads the computed "
                                f"table{via}: XLA's own dot, not a YNN one, fuses its producer only for an "
                                f"output of rank one or less and a vector under 16 kB (cpu_instruction_fusion"
                                f".cc); here {what}, so the table is written{copy}")
            return limits.abstain(f"a matrix-vector product reads the computed table{via} with a vector under "
                                  "16 kB: XLA's own dot fuses the producer only if its optimized output stays "
                                  "a vector (cpu_instruction_fusion.cc), which the jaxpr does not say "
                                  "(exp(m) @ v became an [n,1] dot and wrote exp(m) at every size measured)")
        if target == "gpu:h100":
            if v.size >= H100_MATVEC_GEMM and _square(v.producer):
                return Decision(True, "jaxhlo-predict-h100-matvec", f"a matrix-vector product of a computed "
                                f"square of {v.size:,} elements (past {H100_MATVEC_GEMM:,}) wrote the square "
                                "before its GEMM in every case measured")
            if _constant_vector(other):
                return limits.abstain("a contraction with a broadcast constant (a gradient's ones @ exp(m)) is "
                                      "a reduction of the computed table: whether the producer is fused into "
                                      "it is the H100 cost model's decision (the review measured it written "
                                      "at 512 to 4096 rows, not at 8192)")
    return None


#: The H100's split-K GEMM pads K to a multiple of this (measured: K = 10016 is not padded, 10000 is).
