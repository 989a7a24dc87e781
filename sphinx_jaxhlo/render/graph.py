"""The entry computation (and the loop bodies, branches and calls it runs) as a graph.

:func:`build_graph` reads the report's optimized HLO with
:func:`sphinx_jaxhlo.hlo.parse.parse_module` and the report's fusions and
materialized buffers:

- a **node** per top-level instruction that does work (the report's fusions),
  per parameter of the computation, and one for its result;
- an **edge** per value an instruction reads, from the instruction that made
  it (``bitcast``, ``tuple`` and ``get-tuple-element`` are views: the edge goes
  through them to the producer; constants are left out), labelled with the
  shape and size of the value;
- the materialized buffers of the report are marked on their edges, and the
  large ones (1 GB or more, or the largest when it is at least 1 MB) are *heavy*:
  drawn thick and red.

:mod:`sphinx_jaxhlo.render.graph_drawing` draws it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sphinx_jaxhlo.core.report import Fusion, Report
from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.hlo.model import HloComputation, HloInstruction, HloModule, HloParseError
from sphinx_jaxhlo.hlo.parse import parse_module
from sphinx_jaxhlo.hlo.programs import top_level_computations

__all__ = ["Graph", "GraphEdge", "GraphError", "GraphNode", "Subgraph", "build_graph"]

#: Materialized buffers at least this large are drawn heavy.
HEAVY_BYTES = 10**9
#: The largest materialized buffer is drawn heavy from this size on.
HEAVY_FLOOR = 10**6
#: More nodes than this and the graph stops (the tables still list everything).
MAX_NODES = 120

_VIEWS = frozenset({"bitcast", "get-tuple-element", "tuple"})


class GraphError(ValueError):
    """The report has no module to draw (a failed compile, HLO that does not parse)."""


@dataclass
class GraphNode:
    """One box of the graph."""

    #: Unique in the graph: ``computation/name`` (``computation/(result)`` for the result).
    id: str
    name: str
    computation: str
    #: ``parameter``, ``op`` or ``result``.
    role: str
    #: The second line of the box: ``Custom — dot + cosine``, ``parameter 0``...
    detail: str
    #: Everything known, for the tooltip.
    tooltip: str = ""
    #: Source lines (1-based) of the example.
    source_lines: list[int] = field(default_factory=list)


@dataclass
class GraphEdge:
    """A value read by an instruction (or returned)."""

    src: str
    dst: str
    #: The element of a tuple-shaped source the value is, or ``None``.
    index: int | None
    shape: str
    bytes: int
    #: The report lists it as a materialized buffer.
    materialized: bool = False
    #: A large materialized buffer, drawn emphasized.
    heavy: bool = False

    @property
    def label(self) -> str:
        return f"{self.shape} · {format_bytes(self.bytes)}"


@dataclass
class Subgraph:
    """One top-level computation."""

    computation: str
    #: ``ENTRY main.2``, ``body of while.5 (region_0.4)``...
    title: str
    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[GraphEdge] = field(default_factory=list)


@dataclass
class Graph:
    subgraphs: list[Subgraph] = field(default_factory=list)
    #: Instructions left out past :data:`MAX_NODES`.
    omitted: int = 0

    @property
    def nodes(self) -> list[GraphNode]:
        return [n for g in self.subgraphs for n in g.nodes]

    @property
    def edges(self) -> list[GraphEdge]:
        return [e for g in self.subgraphs for e in g.edges]

    def node(self, name: str, computation: str | None = None) -> GraphNode:
        """The node of instruction ``name`` (in ``computation``, else the first match)."""
        for n in self.nodes:
            if n.name == name and (computation is None or n.computation == computation):
                return n
        raise KeyError(name)

    def edges_between(self, src: str, dst: str) -> list[GraphEdge]:
        """The edges from the node named ``src`` to the node named ``dst``."""
        by_id = {n.id: n.name for n in self.nodes}
        return [e for e in self.edges if by_id.get(e.src) == src and by_id.get(e.dst) == dst]


# -- building ----------------------------------------------------------------

def _node_id(computation: str, name: str) -> str:
    return f"{computation}/{name}"


def _element(inst: HloInstruction, index: int | None) -> tuple[str, int]:
    shapes = inst.shape.tuple_shapes
    shape = shapes[index] if shapes is not None and index is not None and index < len(shapes) else inst.shape
    return str(shape), shape.bytes


def _sources(comp: HloComputation, name: str) -> list[tuple[HloInstruction, int | None]]:
    """The instructions (and tuple elements) a value comes from, through views;
    constants give nothing."""
    out: list[tuple[HloInstruction, int | None]] = []
    stack: list[tuple[str, tuple[int, ...]]] = [(name, ())]
    steps = 0
    while stack and steps < 10_000:
        steps += 1
        current, path = stack.pop()
        inst = comp.get(current)
        if inst is None or inst.opcode == "constant":
            continue
        op = inst.opcode
        if op == "bitcast" and inst.operands:
            stack.append((inst.operands[0], path))
        elif op == "get-tuple-element" and inst.operands and inst.tuple_index is not None:
            stack.append((inst.operands[0], (inst.tuple_index, *path)))
        elif op == "tuple":
            if path:
                if path[0] < len(inst.operands):
                    stack.append((inst.operands[path[0]], path[1:]))
            else:
                stack.extend((o, ()) for o in reversed(inst.operands))
        elif op not in _VIEWS:
            out.append((inst, path[0] if path else None))
    return out


def _callers(module: HloModule, computations: Sequence[str]) -> dict[str, str]:
    """``computation -> "body of while.5"``: how each top-level computation is run."""
    wanted = set(computations)
    out: dict[str, str] = {}
    for comp_name in computations:
        comp = module.computations[comp_name]
        for inst in comp.instructions:
            attrs = inst.attributes
            for callee in inst.called_computations:
                if callee not in wanted or callee in out:
                    continue
                role = "called by"
                if inst.opcode == "while":
                    role = "body of" if attrs.get("body", "").lstrip("%") == callee else "condition of"
                elif inst.opcode == "conditional":
                    role = "branch of"
                elif inst.opcode == "call":
                    role = "called by"
                out[callee] = f"{role} {inst.name}"
            if inst.opcode == "async-start":
                for callee in attrs.get("calls", "").strip("{}").replace(" ", "").split(","):
                    callee = callee.lstrip("%")
                    if callee in wanted and callee not in out:
                        out[callee] = f"run by {inst.name}"
    return out


def _detail(fusion: Fusion | None, inst: HloInstruction) -> tuple[str, str]:
    """(second line of the box, tooltip)."""
    if fusion is None:
        kind = inst.fusion_kind.removeprefix("k") if inst.fusion_kind else inst.opcode
        ops: list[str] = []
        custom = inst.custom_kind
        lines: list[int] = []
    else:
        kind, ops, custom, lines = fusion.kind, fusion.ops, fusion.custom_kind, fusion.source_lines
    joined = " + ".join(ops)
    detail = kind if not ops or ops == [kind] else f"{kind} — {joined}"
    tip = [inst.name, f"{kind}" + (f" ({custom})" if custom else "")]
    if joined and ops != [kind]:
        tip.append(f"ops: {joined}")
    tip.append(f"result: {inst.shape} · {format_bytes(inst.shape.bytes)}")
    if lines:
        tip.append(("line " if len(lines) == 1 else "lines ") + ", ".join(map(str, lines)))
    return detail, "\n".join(tip)


def build_graph(report: Report, max_nodes: int = MAX_NODES) -> Graph:
    """The graph of the report's module.

    :raises GraphError: when the report has no HLO or it does not parse.
    """
    if report.error is not None or not report.hlo.strip():
        raise GraphError("no optimized HLO to draw")
    try:
        module = parse_module(report.hlo)
        computations = top_level_computations(module)
    except (HloParseError, RecursionError) as exc:
        raise GraphError(f"the HLO does not parse: {exc}") from exc
    fusions = {(f.computation, f.name): f for f in report.fusions}
    materialized: dict[tuple[str, str, str, str], int] = {}
    for m in report.materialized:
        for consumer in m.consumers:
            materialized[(m.computation, m.producer, consumer, m.shape)] = m.bytes
    largest = max((m.bytes for m in report.materialized), default=0)
    threshold = max(min(HEAVY_BYTES, largest), HEAVY_FLOOR)
    callers = _callers(module, computations)

    graph = Graph()
    budget = max_nodes
    for comp_name in computations:
        comp = module.computations[comp_name]
        title = f"ENTRY {comp_name}" if comp_name == module.entry else f"{callers.get(comp_name, 'run')} ({comp_name})"
        sub = Subgraph(computation=comp_name, title=title)
        params = sorted((i for i in comp.instructions if i.opcode == "parameter"),
                        key=lambda i: i.parameter_number or 0)
        ops = [i for i in comp.instructions if i.opcode not in _VIEWS and i.opcode not in ("parameter", "constant")]
        if budget <= 0:
            graph.omitted += len(ops)
            continue
        if len(ops) > budget:
            graph.omitted += len(ops) - budget
            ops = ops[:budget]
        budget -= len(ops)
        present: set[str] = set()
        for p in params:
            arg = p.op_name if p.op_name and p.op_name != p.name else ""
            tip = f"{p.name}\nparameter {p.parameter_number}" + (f" ({arg})" if arg else "")
            tip += f"\n{p.shape} · {format_bytes(p.shape.bytes)}"
            sub.nodes.append(GraphNode(_node_id(comp_name, p.name), p.name, comp_name, "parameter",
                                       f"parameter {p.parameter_number}", tip))
            present.add(p.name)
        for inst in ops:
            fusion = fusions.get((comp_name, inst.name))
            detail, tip = _detail(fusion, inst)
            sub.nodes.append(GraphNode(_node_id(comp_name, inst.name), inst.name, comp_name, "op", detail, tip,
                                       list(fusion.source_lines) if fusion else []))
            present.add(inst.name)

        seen: set[tuple[str, int | None, str]] = set()

        def add_edge(producer: HloInstruction, index: int | None, dst_id: str, consumer: str | None,
                     sub: Subgraph = sub, seen: set[tuple[str, int | None, str]] = seen,
                     present: set[str] = present, comp_name: str = comp_name) -> None:
            if producer.name not in present or (producer.name, index, dst_id) in seen:
                return
            seen.add((producer.name, index, dst_id))
            shape, size = _element(producer, index)
            mat = consumer is not None and (comp_name, producer.name, consumer, shape) in materialized
            sub.edges.append(GraphEdge(_node_id(comp_name, producer.name), dst_id, index, shape, size,
                                       materialized=mat, heavy=mat and size >= threshold))

        for inst in ops:
            for operand in dict.fromkeys(inst.operands):
                for producer, index in _sources(comp, operand):
                    add_edge(producer, index, _node_id(comp_name, inst.name), inst.name)
        root = comp.get(comp.root)
        if root is not None:
            result_shape = comp.result_shape or root.shape
            result_id = _node_id(comp_name, "(result)")
            sub.nodes.append(GraphNode(result_id, "result", comp_name, "result", str(result_shape),
                                       f"result of {comp_name}\n{result_shape} · {format_bytes(result_shape.bytes)}"))
            for producer, index in _sources(comp, root.name):
                add_edge(producer, index, result_id, None)
        graph.subgraphs.append(sub)
    return graph
