"""The programs of a compiled module: which computations it runs as programs,
on which thread each runs, and the JAX operation an instruction was traced from.

*Top-level* computations are the entry and the computations it runs as
programs of their own: ``while`` bodies and conditions, ``conditional``
branches, ``call`` targets and async wrapped computations, recursively,
including those an async ``*-start`` runs on another thread
(``async_execution_thread="host"``: the host offloading of
``compute_on('device_host')``).  Fusion bodies and reducers (``to_apply=`` of
a reduce) are not top-level: they run inside one kernel.

The analyses of a module (``sphinx_jaxhlo.hlo.fusion``,
``sphinx_jaxhlo.hlo.collectives``) list what its top-level computations do.
"""

from __future__ import annotations

from sphinx_jaxhlo.hlo.model import HloComputation, HloInstruction, HloModule

__all__ = ["execution_thread", "producer_op", "programs", "top_level_computations"]


def producer_op(op_name: str | None) -> str | None:
    """The JAX operation in a metadata ``op_name``: its last path component.

    ``jit(f)/vmap()/dot_general`` gives ``dot_general``; slashes inside
    parentheses (``jit(a/b)``) do not split, and a trailing ``[params]`` is
    dropped.
    """
    if not op_name:
        return None
    depth = 0
    start = 0
    for i, c in enumerate(op_name):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "/" and depth == 0:
            start = i + 1
    last = op_name[start:]
    if last.endswith("]") and "[" in last:
        last = last[: last.index("[")]
    return last or None


def top_level_computations(module: HloModule) -> list[str]:
    """The entry, then the computations it runs as programs (loop bodies and
    conditions, branches, ``call`` targets, async wrapped computations), in
    the order they are first reached.  Independent of the order of the text."""
    return programs(module)[0]


def programs(module: HloModule) -> tuple[list[str], dict[str, tuple[str, HloInstruction]]]:
    """The top-level computations in the order first reached, and for each
    but the entry the computation and instruction that first runs it."""
    order: list[str] = []
    callers: dict[str, tuple[str, HloInstruction]] = {}
    seen: set[str] = set()
    stack = [module.entry]
    while stack:
        name = stack.pop()
        if name in seen or name not in module.computations:
            continue
        seen.add(name)
        order.append(name)
        callees: list[str] = []
        comp = module.computations[name]
        off_main = execution_thread(comp) != "main"
        for inst in comp.instructions:
            for callee in _program_callees(inst, off_main):
                callees.append(callee)
                callers.setdefault(callee, (name, inst))
        stack.extend(reversed(callees))
    return order, callers


def _program_callees(inst: HloInstruction, off_main: bool) -> list[str]:
    """The computations an instruction runs as programs of their own (not
    fusion bodies, not reducers); ``off_main``: the instruction's computation
    runs off the main thread."""
    op = inst.opcode
    if op in ("while", "conditional", "call"):
        return list(inst.called_computations)
    if op == "async-start":
        calls = inst.attributes.get("calls", "")
        return [n.lstrip("%") for n in calls.strip("{}").replace(" ", "").split(",") if n]
    if op.endswith("-start") and "async_execution_thread" in inst.attributes:
        # custom-call-start / call-start of a computation on another thread
        return list(inst.called_computations)
    if op == "custom-call" and off_main:
        # the same written out, as XLA's dumps do: an async-start of a wrapper
        # on that thread, whose custom-call runs the computation
        return list(inst.called_computations)
    return []


def execution_thread(comp: HloComputation) -> str:
    """The execution thread a computation's text names (``main`` when none)."""
    return comp.attributes.get("execution_thread", "main").strip().strip('"') or "main"

