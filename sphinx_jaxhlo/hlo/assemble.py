"""From parsed instructions to computations, and from computations to a module.

Both readers of HLO text end here: the grammar over tokens
(:mod:`sphinx_jaxhlo.hlo.parse`) and the reader of ordinary lines
(:mod:`sphinx_jaxhlo.hlo.lines`), so the rules that hold across lines are
applied once:

- a computation has instructions; without a ``ROOT``, its last instruction is
  the root; every operand names an instruction of the computation (a
  compact tuple index such as ``%while.1#0`` becomes a ``get-tuple-element``
  view, :func:`~sphinx_jaxhlo.hlo.decode.tuple_views`);
- a shape the printer left out (``count = get-tuple-element(%param), index=0``,
  ``t = tuple(a, b)``) is inferred from the operands
  (:func:`~sphinx_jaxhlo.hlo.decode.infer_shapes`);
- without ``ENTRY``, the last computation is the entry (as in XLA's parser);
  every called computation exists and no computation calls itself, directly
  or not; instructions without ``source_line`` take the innermost frame of
  their ``stack_frame_id``.
"""

from __future__ import annotations

from sphinx_jaxhlo.hlo.decode import UNWRITTEN, infer_shapes, tuple_views
from sphinx_jaxhlo.hlo.model import HloComputation, HloInstruction, HloModule, HloParseError, Shape

__all__ = ["finish_computation", "finish_module"]


def finish_computation(name: str, line: int, is_entry: bool, instructions: list[HloInstruction],
                       by_name: dict[str, HloInstruction], root: str, result_shape: Shape | None,
                       attrs: dict[str, str]) -> HloComputation:
    """The computation of instructions read in order (their names unique, at
    most one of them the root, as the readers check while reading)."""
    if not instructions:
        raise HloParseError(f"computation {name!r} has no instructions", line)
    if not root:
        root = instructions[-1].name
        instructions[-1].is_root = True
    compact = False
    unwritten = False
    for inst in instructions:
        if inst.shape is UNWRITTEN:
            unwritten = True
        for op in inst.operands:
            if op not in by_name:
                if "#" not in op:
                    raise HloParseError(f"{inst.name!r} reads unknown {op!r}", inst.line)
                compact = True
    if unwritten:
        infer_shapes(instructions, by_name)
    if compact:
        instructions = tuple_views(instructions, by_name)
    params = sorted(
        (i for i in instructions if i.opcode == "parameter"),
        key=lambda i: i.parameter_number or 0,
    )
    return HloComputation(
        name=name,
        instructions=instructions,
        root=root,
        is_entry=is_entry,
        parameters=params,
        result_shape=result_shape,
        attributes=attrs,
        line=line,
        _by_name=by_name,
    )


def finish_module(module: HloModule, entry: str) -> HloModule:
    """Name the entry (the last computation when none is marked), check the
    call graph and resolve source locations."""
    if not entry:
        # As XLA's parser does: without ENTRY, the last computation is the entry.
        entry = next(reversed(module.computations))
        module.computations[entry].is_entry = True
    module.entry = entry
    _link(module)
    return module


def _link(module: HloModule) -> None:
    """Check that called computations exist and that no computation calls
    itself, directly or not; resolve source locations."""
    callees: dict[str, list[tuple[str, HloInstruction]]] = {}
    frames_of: dict[int, tuple[str | None, int | None]] = {}
    computations = module.computations
    for comp in computations.values():
        calls = callees[comp.name] = []
        for inst in comp.instructions:
            for callee in inst.called_computations:
                if callee not in computations:
                    raise HloParseError(f"{inst.name!r} calls unknown computation {callee!r}", inst.line)
                calls.append((callee, inst))
            frame_id = inst.stack_frame_id
            if inst.source_line is None and frame_id is not None:
                where = frames_of.get(frame_id)
                if where is None:
                    frames = module.frames(frame_id)
                    where = frames_of[frame_id] = (frames[0].file, frames[0].line) if frames else (None, None)
                if where[1] is not None:
                    inst.source_file, inst.source_line = where
    _check_acyclic(callees)


def _check_acyclic(callees: dict[str, list[tuple[str, HloInstruction]]]) -> None:
    """Raise when the call graph has a cycle (XLA requires a DAG)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in callees:
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter(callees[start]))]
        while stack:
            name, pending = stack[-1]
            for callee, inst in pending:
                mark = state.get(callee)
                if mark == 1:
                    raise HloParseError(f"{inst.name!r} in {name!r} calls {callee!r}, which calls it back", inst.line)
                if mark is None:
                    state[callee] = 1
                    stack.append((callee, iter(callees[callee])))
                    break
            else:
                state[name] = 2
                stack.pop()
