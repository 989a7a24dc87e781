"""What a reduce computes: its reducer, and which dimensions a ``reduce-window`` reduces whole.

Mechanics for the rules of :mod:`sphinx_jaxhlo.hlo.fusion` (second stages
share a reducer; a row reduction broadcast back is a ``reduce-window`` whose
window covers each row at every position), which states them.
"""

from __future__ import annotations

import re

from sphinx_jaxhlo.hlo.model import HloInstruction, HloModule

__all__ = ["REDUCER_OPS", "prefix_window", "reducer", "row_dimensions"]


_WINDOW_FIELD_RE = re.compile(r"\b(size|stride|pad|lhs_dilate|rhs_dilate)=([-\dx_]*)")


def _window(reduce: HloInstruction) -> list[tuple[int, int, int, int]] | None:
    """A ``reduce-window``'s window, per dimension: (size, stride, low pad,
    high pad); ``None`` when it cannot be read or it dilates (no row
    reduction then)."""
    found = dict(_WINDOW_FIELD_RE.findall(reduce.attributes.get("window", "")))
    sizes_text = found.get("size")
    if not sizes_text:
        return None
    try:
        sizes = [int(v) for v in sizes_text.split("x")]
        strides = [int(v) for v in found["stride"].split("x")] if found.get("stride") else [1] * len(sizes)
        pads = ([tuple(int(v) for v in p.split("_")) for p in found["pad"].split("x")] if found.get("pad")
                else [(0, 0)] * len(sizes))
        dilated = any(int(v) != 1 for k in ("lhs_dilate", "rhs_dilate") if found.get(k)
                      for v in found[k].split("x"))
    except ValueError:
        return None
    if dilated or len(strides) != len(sizes) or len(pads) != len(sizes) or any(len(p) != 2 for p in pads):
        return None
    return [(size, stride, pad[0], pad[1]) for size, stride, pad in zip(sizes, strides, pads, strict=True)]


def prefix_window(reduce: HloInstruction) -> bool:
    """Whether a ``reduce-window`` is a prefix scan's stage: a window longer than one element along
    some dimension, padded there on the low side by all but one of its elements and not on the high
    side, with a stride of one (``size=1x1x16 pad=0_0x0_0x15_0``): element ``i`` folds the elements
    up to ``i`` (a reversed scan pads the high side instead)."""
    window = _window(reduce) if reduce.opcode == "reduce-window" else None
    if not window:
        return False
    scanned = [(size, stride, low, high) for size, stride, low, high in window if size > 1]
    return bool(scanned) and all(stride == 1 and {low, high} == {0, size - 1} for size, stride, low, high in scanned)


def row_dimensions(reduce: HloInstruction, operand: HloInstruction) -> list[int]:
    """The dimensions a ``reduce-window`` reduces whole, at every position of
    its result: those of a row reduction broadcast back (empty for anything
    else, a prefix scan included)."""
    if reduce.opcode != "reduce-window":
        return []
    window = _window(reduce)
    out = reduce.shape.tuple_shapes[0] if reduce.shape.tuple_shapes else reduce.shape
    dims, out_dims = operand.shape.dims, out.dims
    if window is None or len(window) != len(dims) or len(out_dims) != len(dims):
        return []
    rows = []
    for d, (size, stride, low, high) in enumerate(window):
        if size <= 1:
            continue
        # every position's window starts at or before the first element and ends at or after the last
        if (out_dims[d] - 1) * stride > low or size - 1 - low < dims[d] - 1 or high < 0:
            return []
        rows.append(d)
    return rows


def reducer(module: HloModule, reduce: HloInstruction) -> tuple[tuple[str, str], ...] | None:
    """What a reduce's ``to_apply`` computes: its instructions' opcodes (and
    comparison directions), in order; ``None`` when it names none."""
    name = reduce.attributes.get("to_apply", "").lstrip("%") or next(iter(reduce.called_computations), "")
    comp = module.computations.get(name)
    if comp is None:
        return None
    return tuple((i.opcode, i.attributes.get("direction", "")) for i in comp.instructions
                 if i.opcode not in ("parameter", "constant"))


#: The JAX reduction a reducer's single operation stands for.
REDUCER_OPS = {"add": "reduce_sum", "maximum": "reduce_max", "minimum": "reduce_min", "multiply": "reduce_prod",
                "and": "reduce_and", "or": "reduce_or"}
