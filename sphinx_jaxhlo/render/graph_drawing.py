"""A :class:`~sphinx_jaxhlo.render.graph.Graph` drawn: as SVG and as text.

:func:`graph_svg` draws it as a self-contained SVG (a layered layout, top to
bottom in data order; colours from ``currentColor`` and CSS custom properties
so light and dark themes both read it) and :func:`graph_text` as an indented
list of nodes and edges for the builders that cannot show SVG.  Every text in
the SVG is escaped: names come from compiler output.

Pure Python, no Graphviz.
"""

from __future__ import annotations

import functools
import html
import itertools
from dataclasses import dataclass

from sphinx_jaxhlo.render.graph import Graph, GraphEdge, GraphNode, Subgraph

__all__ = ["graph_svg", "graph_text"]


# -- text ------------------------------------------------------------------

def graph_text(graph: Graph) -> str:
    """The graph as an indented list of nodes and edges."""
    out: list[str] = []
    for sub in graph.subgraphs:
        names = {n.id: n.name for n in sub.nodes}
        out.append(sub.title)
        out.append("  nodes")
        for n in sub.nodes:
            where = ""
            if n.source_lines:
                where = "  (" + ("line " if len(n.source_lines) == 1 else "lines ") + \
                    ", ".join(map(str, n.source_lines)) + ")"
            out.append(f"    {n.name}: {n.detail}{where}")
        if sub.edges:
            out.append("  edges")
        for e in sub.edges:
            mark = "  [materialized, large]" if e.heavy else "  [materialized]" if e.materialized else ""
            out.append(f"    {names[e.src]} -> {names[e.dst]}: {e.label}{mark}")
        out.append("")
    if graph.omitted:
        out.append(f"({graph.omitted} more instructions not drawn)")
    return "\n".join(out).rstrip() + "\n"


# -- layout ----------------------------------------------------------------

_NAME_FONT = 12.0
_DETAIL_FONT = 11.0
_LABEL_FONT = 10.5
_CHAR = 0.61  # advance of a monospace character, in em
_NODE_H = 40.0
_H_GAP = 36.0
_V_GAP = 44.0
_LABEL_H = 15.0
_MARGIN = 14.0
_MAX_W = 360.0
_DUMMY_W = 12.0
_SLOT_GAP = 10.0


def _text_width(text: str, size: float) -> float:
    return len(text) * size * _CHAR


def _label_width(text: str, heavy: bool) -> float:
    return _text_width(text, _LABEL_FONT) * (1.08 if heavy else 1.0) + 8


def _clip(text: str, size: float, width: float) -> str:
    room = int(width / (size * _CHAR))
    return text if len(text) <= room else text[: max(room - 1, 1)] + "…"


@dataclass
class _Box:
    id: str
    w: float
    layer: int = 0
    x: float = 0.0  # centre
    y: float = 0.0  # top
    dummy: bool = False
    node: GraphNode | None = None


@dataclass
class _Layout:
    width: float
    height: float
    boxes: dict[str, _Box]
    #: (edge, points from the source port to the target port, label position or None)
    routes: list[tuple[GraphEdge, list[tuple[float, float]], tuple[float, float] | None]]


def _layout(sub: Subgraph) -> _Layout:
    boxes: dict[str, _Box] = {}
    labels_of: dict[str, list[tuple[int | None, str]]] = {}
    for e in sub.edges:
        bucket = labels_of.setdefault(e.src, [])
        if all(i != e.index for i, _ in bucket):
            bucket.append((e.index, e.label))
    # the labels of a box's buffers sit side by side under it, each under its port
    slot_w: dict[tuple[str, int | None], float] = {}
    for e in sub.edges:
        slot_w[(e.src, e.index)] = _label_width(e.label, e.heavy) + _SLOT_GAP
    for n in sub.nodes:
        text_w = min(max(_text_width(n.name, _NAME_FONT), _text_width(n.detail, _DETAIL_FONT)) + 20, _MAX_W)
        slots_w = sum(slot_w[(n.id, i)] for i, _ in labels_of.get(n.id, []))
        boxes[n.id] = _Box(n.id, max(text_w, slots_w, 80.0), node=n)
    preds: dict[str, list[str]] = {n.id: [] for n in sub.nodes}
    for e in sub.edges:
        preds[e.dst].append(e.src)
    # layers: longest path from the inputs; the result alone at the bottom
    order = [n.id for n in sub.nodes]
    for _ in range(len(order) + 1):
        changed = False
        for nid in order:
            box = boxes[nid]
            if box.node is not None and box.node.role == "parameter":
                continue
            level = max((boxes[p].layer + 1 for p in preds[nid]), default=0)
            if level != box.layer:
                box.layer, changed = level, True
        if not changed:
            break
    results = [n.id for n in sub.nodes if n.role == "result"]
    bottom = max((boxes[nid].layer for nid in order if nid not in results), default=0) + 1
    for nid in results:
        boxes[nid].layer = bottom
    # long edges go through dummy boxes, one per layer they cross
    chains: list[tuple[GraphEdge, list[str]]] = []
    for k, e in enumerate(sub.edges):
        a, b = boxes[e.src].layer, boxes[e.dst].layer
        chain = [e.src]
        for level in range(a + 1, b):
            did = f"~{k}~{level}"
            boxes[did] = _Box(did, _DUMMY_W, layer=level, dummy=True)
            chain.append(did)
        chain.append(e.dst)
        chains.append((e, chain))
    up: dict[str, list[str]] = {b: [] for b in boxes}
    down: dict[str, list[str]] = {b: [] for b in boxes}
    for _, chain in chains:
        for s, t in itertools.pairwise(chain):
            down[s].append(t)
            up[t].append(s)
    n_layers = max((b.layer for b in boxes.values()), default=0) + 1
    layers: list[list[str]] = [[] for _ in range(n_layers)]
    for bid in [*order, *(b for b in boxes if boxes[b].dummy)]:
        layers[boxes[bid].layer].append(bid)

    def pack(layer: list[str], desired: dict[str, float]) -> None:
        right: float | None = None
        for bid in layer:
            box = boxes[bid]
            if bid in desired:
                left = desired[bid] - box.w / 2
                if right is not None:
                    left = max(left, right + _H_GAP)
            else:
                left = 0.0 if right is None else right + _H_GAP
            box.x = left + box.w / 2
            right = left + box.w
        # centre the row on what it wanted
        wanted = [desired[b] for b in layer if b in desired]
        if wanted:
            shift = sum(wanted) / len(wanted) - sum(boxes[b].x for b in layer if b in desired) / len(wanted)
            for bid in layer:
                boxes[bid].x += shift

    def mean(values: list[float]) -> float | None:
        return sum(values) / len(values) if values else None

    for row in layers:
        pack(row, {})
    for sweep in range(8):
        downward = sweep % 2 == 0
        sequence = layers[1:] if downward else layers[-2::-1]
        for row in sequence:
            desired: dict[str, float] = {}
            for bid in row:
                m = mean([boxes[o].x for o in (up if downward else down)[bid]])
                if m is not None:
                    desired[bid] = m
            if sweep < 4:  # reorder by barycentre, keep the order of boxes with no neighbour there
                def wanted_x(b: str, d: dict[str, float] = desired) -> float:
                    return d.get(b, boxes[b].x)

                row.sort(key=wanted_x)
            pack(row, desired)
    # vertical placement: room under each layer for the labels of its buffers
    y = _MARGIN
    for row in layers:
        for bid in row:
            boxes[bid].y = y
        y += _NODE_H + _V_GAP + (_LABEL_H if any(b in labels_of for b in row) else 0)
    left = min((b.x - b.w / 2 for b in boxes.values()), default=0.0)
    for box in boxes.values():
        box.x += _MARGIN - left
    width = max((b.x + b.w / 2 for b in boxes.values()), default=0.0) + _MARGIN
    height = y - _V_GAP + _MARGIN

    # ports: each buffer of a source gets a slot on its bottom side, each edge a slot on its target's top
    out_slots: dict[str, list[int | None]] = {}
    for e in sub.edges:
        slots = out_slots.setdefault(e.src, [])
        if e.index not in slots:
            slots.append(e.index)
    chain_of = {id(e): chain for e, chain in chains}

    def first_hop_x(e: GraphEdge) -> float:
        return boxes[chain_of[id(e)][1]].x

    def slot_x(src: str, index: int | None) -> float:
        return mean([first_hop_x(e) for e in sub.edges if e.src == src and e.index == index]) or 0.0

    for src_id, slots in out_slots.items():
        slots.sort(key=functools.partial(slot_x, src_id))
    in_edges: dict[str, list[GraphEdge]] = {}
    for e in sub.edges:
        in_edges.setdefault(e.dst, []).append(e)
    for edges in in_edges.values():
        edges.sort(key=lambda e: boxes[chain_of[id(e)][-2]].x)

    def spread(box: _Box, k: int, n: int) -> float:
        return box.x - box.w / 2 + box.w * (k + 1) / (n + 1)

    def out_port(src: str, index: int | None) -> float:
        slots = out_slots[src]
        widths = [slot_w[(src, i)] for i in slots]
        k = slots.index(index)
        return boxes[src].x - sum(widths) / 2 + sum(widths[:k]) + widths[k] / 2

    routes: list[tuple[GraphEdge, list[tuple[float, float]], tuple[float, float] | None]] = []
    labelled: set[tuple[str, int | None]] = set()
    for e, chain in chains:
        src_box, dst_box = boxes[e.src], boxes[e.dst]
        start = (out_port(e.src, e.index), src_box.y + _NODE_H)
        ins = in_edges[e.dst]
        end = (spread(dst_box, ins.index(e), len(ins)), dst_box.y)
        points = [start]
        for did in chain[1:-1]:
            d = boxes[did]
            points += [(d.x, d.y), (d.x, d.y + _NODE_H)]
        points.append(end)
        label = None
        if (e.src, e.index) not in labelled:
            labelled.add((e.src, e.index))
            label = (start[0], start[1] + 13)
        routes.append((e, points, label))
    return _Layout(width, height, boxes, routes)


# -- SVG ---------------------------------------------------------------------

def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _path(points: list[tuple[float, float]]) -> str:
    (x0, y0), rest = points[0], points[1:]
    d = [f"M{x0:.1f},{y0:.1f}"]
    for i, (x1, y1) in enumerate(rest):
        if i % 2 == 1 and i < len(rest) - 1:  # straight through a dummy box
            d.append(f"L{x1:.1f},{y1:.1f}")
        else:
            dy = max((y1 - y0) / 2, 8.0)
            d.append(f"C{x0:.1f},{y0 + dy:.1f} {x1:.1f},{y1 - dy:.1f} {x1:.1f},{y1:.1f}")
        x0, y0 = x1, y1
    return " ".join(d)


def graph_svg(graph: Graph, uid: str, line_prefix: str = "", lines_known: int = 0, title: str = "") -> str:
    """The graph as inline SVG.

    :param uid: unique on the page; prefixes the ids inside the SVG.
    :param line_prefix: when the example's source is on the page, the prefix of
        its line anchors (``<prefix>4``): boxes with source lines link there.
    :param lines_known: the number of lines of that source; lines past it are not linked.
    :param title: the accessible name of the picture.
    """
    uid = _esc(uid)
    layouts = [(sub, _layout(sub)) for sub in graph.subgraphs]
    framed = len(layouts) > 1
    pad = 12.0 if framed else 0.0
    head = 22.0 if framed else 0.0
    width = max((lay.width for _, lay in layouts), default=100.0) + 2 * pad
    parts: list[str] = []
    y = 0.0
    for sub, lay in layouts:
        top = y
        dx = pad + (width - 2 * pad - lay.width) / 2
        dy = top + head
        parts.append(f'<g class="jaxhlo-graph-computation" data-computation="{_esc(sub.computation)}">')
        if framed:
            parts.append(f'<rect class="jaxhlo-graph-frame" x="1" y="{top + 1:.1f}" width="{width - 2:.1f}" '
                         f'height="{lay.height + head + pad - 2:.1f}" rx="8" fill="none" stroke="currentColor" '
                         f'stroke-opacity="0.35" stroke-dasharray="5 4"/>')
            parts.append(f'<text class="jaxhlo-graph-title" x="{pad:.1f}" y="{top + 17:.1f}" '
                         f'font-size="{_DETAIL_FONT}" fill="currentColor">{_esc(sub.title)}</text>')
        parts.append(f'<g transform="translate({dx:.1f},{dy:.1f})">')
        names = {n.id: n.name for n in sub.nodes}
        # edges under the labels under the boxes
        ordered = sorted(lay.routes, key=lambda r: (r[0].heavy, r[0].materialized))
        for e, points, _ in ordered:
            cls = "jaxhlo-graph-edge" + (" jaxhlo-graph-materialized" if e.materialized else "") + \
                (" jaxhlo-graph-heavy" if e.heavy else "")
            marker = f"{uid}-arrow-heavy" if e.heavy else f"{uid}-arrow"
            stroke = 'stroke="#cf222e" stroke-width="4"' if e.heavy else \
                'stroke="currentColor" stroke-width="1.6"' if e.materialized else \
                'stroke="currentColor" stroke-width="1.2" stroke-opacity="0.6"'
            what = " (materialized)" if e.materialized else ""
            parts.append(f'<path class="{cls}" d="{_path(points)}" fill="none" {stroke} '
                         f'marker-end="url(#{marker})"><title>{_esc(names[e.src])} → {_esc(names[e.dst])}: '
                         f'{_esc(e.label)}{what}</title></path>')
        for e, _, label in lay.routes:
            if label is None:
                continue
            lx, ly = label
            text = e.label
            w = _label_width(text, e.heavy)
            cls = "jaxhlo-graph-label" + (" jaxhlo-graph-heavy" if e.heavy else "") + \
                (" jaxhlo-graph-materialized" if e.materialized else "")
            weight = ' font-weight="bold"' if e.heavy else ""
            parts.append(f'<g class="{cls}"><rect x="{lx - w / 2:.1f}" y="{ly - 10:.1f}" width="{w:.1f}" '
                         f'height="14" rx="3" fill="Canvas" fill-opacity="0.92"/>'
                         f'<text x="{lx:.1f}" y="{ly + 1:.1f}" text-anchor="middle" font-size="{_LABEL_FONT}" '
                         f'fill="currentColor"{weight}>{_esc(text)}</text></g>')
        for n in sub.nodes:
            box = lay.boxes[n.id]
            x0 = box.x - box.w / 2
            rx = _NODE_H / 2 if n.role != "op" else 5
            dash = ' stroke-dasharray="4 3"' if n.role != "op" else ""
            inner = (f'<title>{_esc(n.tooltip or n.name)}</title>'
                     f'<rect x="{x0:.1f}" y="{box.y:.1f}" width="{box.w:.1f}" height="{_NODE_H:.1f}" rx="{rx:.1f}" '
                     f'fill="Canvas" stroke="currentColor" stroke-width="1.2"{dash}/>'
                     f'<text class="jaxhlo-graph-name" x="{box.x:.1f}" y="{box.y + 16:.1f}" text-anchor="middle" '
                     f'font-size="{_NAME_FONT}" font-weight="bold" fill="currentColor">'
                     f'{_esc(_clip(n.name, _NAME_FONT, box.w - 12))}</text>'
                     f'<text class="jaxhlo-graph-detail" x="{box.x:.1f}" y="{box.y + 31:.1f}" text-anchor="middle" '
                     f'font-size="{_DETAIL_FONT}" fill="currentColor" fill-opacity="0.8">'
                     f'{_esc(_clip(n.detail, _DETAIL_FONT, box.w - 12))}</text>')
            cls = f"jaxhlo-graph-node jaxhlo-graph-{n.role}"
            linked = [ln for ln in n.source_lines if line_prefix and 0 < ln <= lines_known]
            if linked:
                parts.append(f'<a class="{cls}" href="#{_esc(line_prefix)}{linked[0]}" '
                             f'data-jaxhlo-lines="{" ".join(map(str, linked))}" '
                             f'data-jaxhlo-src="{_esc(line_prefix)}">{inner}</a>')
            else:
                parts.append(f'<g class="{cls}">{inner}</g>')
        parts.append("</g></g>")
        y = dy + lay.height + pad + (8 if framed else 0)
    height = y - (8 if framed else 0)
    label_id = f"{uid}-title"
    head_parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="jaxhlo-graph-svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.1f} {height:.1f}" role="img" aria-labelledby="{label_id}" '
        f'font-family="ui-monospace, SFMono-Regular, Menlo, Consolas, monospace">',
        f'<title id="{label_id}">{_esc(title or "Computation graph")}</title>',
        "<defs>",
        f'<marker id="{uid}-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" '
        f'markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
        f'<path class="jaxhlo-graph-arrow" d="M0,0 L10,5 L0,10 z" fill="currentColor"/></marker>',
        f'<marker id="{uid}-arrow-heavy" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="15" markerHeight="15" '
        f'markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
        f'<path class="jaxhlo-graph-arrow jaxhlo-graph-heavy" d="M0,0 L10,5 L0,10 z" fill="#cf222e"/></marker>',
        "</defs>",
    ]
    return "".join(head_parts) + "".join(parts) + "</svg>"
