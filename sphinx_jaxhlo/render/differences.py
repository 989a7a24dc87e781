"""What differs between the variants of an example: the buffers one stores and another does not.

An example with several functions compares variants of one computation (with
and without ``jax.checkpoint``, with a dot or written out...).  Its reader
asks what changed; a buffer that every variant stores (the gradient accumulator
of a weight, say) does not answer that, however large.  So the comparison leads
with the differences, found by these rules:

- On each target, each variant's intermediates (the materialized buffers that
  hold computed data: no copies of arguments, no host buffers, no integer or
  boolean scalars) are counted by **shape and producer**: the JAX operation that made the buffer, or
  its kernel's ops, without source lines (HLO names and line numbers change
  between variants; what was computed, and in which shape, does not), and on a
  TPU where it lives: a buffer kept in the chip's own memory (``on-chip``)
  takes no HBM, and is counted apart from one of the same shape in HBM.  A producer is
  counted by the operation it names, however it is spelled: JAX's primitive
  (``broadcast_in_dim``, ``dot_general``, ``convert_element_type``) and XLA's
  instruction (``broadcast``, ``dot``, ``convert``) are one producer
  (``SAME_OPERATION``), so no difference is only a name.
- A (shape, producer) is a **difference** when its count is not the same in
  every variant that compiled on that target.  The differences are ordered by
  the bytes they differ by (the count's spread times one buffer's size), the
  largest first.
- A difference is **shown** when the bytes it differs by are at least
  ``MIN_SHARE`` (1 %) of the program's size on that target: the arguments,
  outputs and temp memory of the largest variant compared.  A 262 kB buffer
  does not say what changed when the arguments take 134 MB.
- When no target shows a difference, there is no table: each target's panel says
  so in one finding.
- When one of the functions is another's gradient (``:grad:``), they are
  *functions*, not variants of one computation, and the words say so.
- A buffer here is a value stored between two kernels; buffers whose lives do
  not overlap may share memory, so their sizes do not add up to temp memory,
  and the same buffers can take different temp memory when they live longer.

The table (``differences_table``) comes first in the example's summary; in
each target's panel, one finding (``variant_finding``) says the same of that
variant in words, in place of the largest intermediate.
No docutils, no Sphinx, no jax.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sphinx_jaxhlo.core.report import Report
from sphinx_jaxhlo.core.results import Result
from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.render.display import Display
from sphinx_jaxhlo.render.findings import Finding
from sphinx_jaxhlo.render.rows import Cell, OpLookup, Row, Table, code, is_intermediate, is_scalar, lines_text

__all__ = ["MIN_SHARE", "SAME_OPERATION", "Difference", "differences", "differences_table", "kind_of", "program_bytes",
           "same_operation", "target_differences", "variant_finding"]

#: Differences per target shown in the table by default (``rows=None``: all).
SHOWN_PER_TARGET = 3
#: The smallest difference shown, as a share of the program's size (see the module's rules).
MIN_SHARE = 0.01
#: XLA's spellings of JAX's primitives (``broadcast`` for ``broadcast_in_dim``, ``dynamic-slice``
#: for ``dynamic_slice``), and ``add_any`` (a gradient's sum) for ``add``: a producer is counted
#: by the operation, not the word.
SAME_OPERATION = {
    "broadcast": "broadcast_in_dim", "dot": "dot_general", "convert": "convert_element_type",
    "select": "select_n", "add_any": "add", "multiply": "mul", "subtract": "sub", "divide": "div",
    "negate": "neg", "maximum": "max", "minimum": "min", "power": "pow", "exponential": "exp",
    "cosine": "cos", "sine": "sin", "dynamic-slice": "dynamic_slice",
    "dynamic-update-slice": "dynamic_update_slice", "scatter-add": "scatter_add",
}


def same_operation(made: str) -> str:
    """What made a buffer, spelled one way: each operation of ``dot + tanh`` by
    :data:`SAME_OPERATION` (``dot_general + tanh``)."""
    return " + ".join(SAME_OPERATION.get(op.strip(), op.strip()) for op in made.split(" + "))


@dataclass(frozen=True)
class Difference:
    """Buffers of one shape and producer whose count is not the same in every variant."""

    shape: str
    #: What made them, in a reader's words (``dot_general``, ``broadcast + copy``).
    made_by: str
    #: Bytes of one buffer.
    bytes: int
    #: How many each variant stores, in the order of the variants compared.
    counts: tuple[int, ...]
    #: Source lines of the producers, in any variant.
    lines: tuple[int, ...] = ()

    @property
    def spread(self) -> int:
        """The bytes the variants differ by: the count's spread times one buffer."""
        return (max(self.counts) - min(self.counts)) * self.bytes

    @property
    def made_by_text(self) -> str:
        """``while (line 11)``."""
        return self.made_by + (f" ({lines_text(self.lines)})" if self.lines else "")


def _counted(report: Report, names: dict[tuple[str, str], str]) -> dict[tuple[str, str], tuple[int, int, set[int]]]:
    """(shape, producer) -> (count, bytes of one, source lines) of a report's intermediates,
    the producer spelled one way (:func:`same_operation`).

    :param names: filled with the words shown for each key: the first spelling met."""
    ops = OpLookup(report)
    out: dict[tuple[str, str], tuple[int, int, set[int]]] = {}
    for m in report.materialized:
        if not is_intermediate(m) or is_scalar(m.shape):
            continue
        made = m.producer_op or ops.kernel(m.producer, m.computation, lines=False)
        # a TPU's buffer kept in the chip's own memory takes no HBM: said with what made it
        where = "" if m.in_device_memory else ", on-chip"
        key = (m.shape, same_operation(made) + where)
        names.setdefault(key, made + where)
        count, size, lines = out.get(key, (0, m.bytes, set()))
        out[key] = (count + 1, max(size, m.bytes), lines | set(m.source_lines))
    return out


def differences(reports: Sequence[Report]) -> list[Difference]:
    """The differences between the reports of one target (one per variant, in order),
    the largest first."""
    names: dict[tuple[str, str], str] = {}
    counted = [_counted(r, names) for r in reports]
    keys = sorted({k for c in counted for k in c})
    out = []
    for key in keys:
        counts = tuple(c[key][0] if key in c else 0 for c in counted)
        if len(set(counts)) == 1:
            continue
        size = max(c[key][1] for c in counted if key in c)
        lines = sorted({n for c in counted if key in c for n in c[key][2]})
        out.append(Difference(key[0], names[key], size, counts, tuple(lines)))
    out.sort(key=lambda d: (-d.spread, d.shape, d.made_by))
    return out


def compared(functions: Sequence[str], target: str,
             results: dict[tuple[str, str], Result]) -> tuple[list[str], list[Report]]:
    """The variants that compiled on ``target`` and their reports, in order."""
    names, reports = [], []
    for fn in functions:
        r = results.get((fn, target))
        if r is not None and r.report is not None and not r.report.error:
            names.append(fn)
            reports.append(r.report)
    return names, reports


def program_bytes(reports: Sequence[Report]) -> int:
    """The program's size on one target: the arguments, outputs and temp memory of the largest
    of ``reports``."""
    return max(((r.memory.argument_bytes or 0) + (r.memory.output_bytes or 0) + (r.memory.temp_bytes or 0)
                for r in reports), default=0)


def target_differences(functions: Sequence[str], target: str,
                       results: dict[tuple[str, str], Result]) -> tuple[list[str], list[Difference]]:
    """The variants compared on one target and the differences shown (none with fewer than
    two; only those of at least :data:`MIN_SHARE` of the program's size)."""
    names, reports = compared(functions, target, results)
    if len(reports) < 2:
        return names, []
    floor = MIN_SHARE * program_bytes(reports)
    return names, [d for d in differences(reports) if d.spread >= floor]


def kind_of(functions: Sequence[str], gradients: Sequence[str]) -> str:
    """``function`` when one of ``functions`` is another's gradient, else ``variant``."""
    return "function" if set(functions) & set(gradients) else "variant"


def _count_cell(count: int, size: int) -> Cell:
    return Cell("none" if not count else f"{count} × {format_bytes(size)}")


def differences_table(functions: Sequence[str], targets: Sequence[tuple[str, str]],
                      results: dict[tuple[str, str], Result], display: Display,
                      gradients: Sequence[str] = ()) -> Table | None:
    """The table the comparison leads with: per target, the largest differences (a row
    per shape and producer, each variant's count), or a row that says there is none.
    ``None`` when no target has two variants to compare, or none shows a difference.

    :param gradients: the functions that are another's gradient (the words say "functions").
    """
    kind = kind_of(functions, gradients)
    rows: list[Row] = []
    total = differing = 0
    for target, title in targets:
        names, found = target_differences(functions, target, results)
        if len(names) < 2:
            continue
        if not found:
            everything = differences(compared(functions, target, results)[1])
            words = f"the same buffers in every {kind}" if not everything else \
                f"no difference of {MIN_SHARE:.0%} of the program's size or more"
            rows.append(Row((Cell(title), Cell("—"), Cell(words),
                             *[Cell("same" if not everything else "—") if fn in names else Cell("—")
                               for fn in functions])))
            total += 1
            continue
        total += len(found)
        differing += len(found)
        shown = found if display.rows is None else found[:SHOWN_PER_TARGET]
        for i, d in enumerate(shown):
            counts = dict(zip(names, d.counts, strict=True))
            # the target titles its first row only: its rows read as one group
            cells = [Cell(title if i == 0 else ""), code(d.shape), Cell(d.made_by_text),
                     *[_count_cell(counts[fn], d.bytes) if fn in counts else Cell("—") for fn in functions]]
            rows.append(Row(tuple(cells), lines=d.lines))
    if not differing:
        return None  # no target shows a difference: each panel says so, no table of dashes
    return Table("differences", f"What differs between the {kind}s: buffers stored, by shape and producer",
                 ("target", "shape", "made by", *functions), tuple(rows), total=total,
                 left_out="smaller differences",
                 note="Each buffer is a value stored between two kernels. Buffers whose lives do not overlap "
                      "share memory, so their sizes do not add up to temp memory. Differences under "
                      f"{MIN_SHARE:.0%} of the program's size (its arguments, outputs and temp memory) are left "
                      "out.")


def _items(i: int, names: Sequence[str], found: Sequence[Difference]) -> list[tuple[int, str, str, str]]:
    """What variant ``i`` stores more or fewer of than another, by shape, largest first:
    (bytes, ``12 more f32[8,512,1024]``, the other variant's name, ``16.8 MB each; made by ...``)."""
    by_shape: dict[tuple[str, str, str], tuple[int, int, list[str]]] = {}
    for d in found:
        others = [(c, names[j]) for j, c in enumerate(d.counts) if j != i]
        low, high = min(others), max(others)
        mine = d.counts[i]
        for delta, other, way in ((mine - low[0], low[1], "more"), (high[0] - mine, high[1], "fewer")):
            if delta > 0:
                key = (d.shape, way, other)
                n, size, makers = by_shape.get(key, (0, d.bytes, []))
                by_shape[key] = (n + delta, max(size, d.bytes), [*makers, d.made_by])
    out = []
    for (shape, way, other), (n, size, makers) in by_shape.items():
        each = f"{format_bytes(size)} each" if n > 1 else format_bytes(size)
        made = ", ".join(makers[:-1]) + " and " + makers[-1] if len(makers) > 1 else makers[0]
        out.append((n * size, f"{n} {way} {shape}", other, f"{each}, made by {made}"))
    out.sort(key=lambda item: -item[0])
    return out


def variant_finding(function: str, names: Sequence[str], found: Sequence[Difference],
                    gradients: Sequence[str] = ()) -> Finding | None:
    """What ``function`` stores more or fewer of than the other variants, in words (the
    two largest differences, their producers without the lines the table gives);
    ``None`` when it is not among the variants compared.

    :param gradients: the functions that are another's gradient (the words say "functions").
    """
    if function not in names or len(names) < 2:
        return None
    kind = kind_of(names, gradients)
    i = names.index(function)
    others = [n for n in names if n != function]
    items = _items(i, names, found)
    if not items:
        who = others[0] if len(others) == 1 else f"any other {kind}"
        return Finding("info", "", f"No difference from {who} in the buffers stored, by shape and producer, of "
                                   f"{MIN_SHARE:.0%} of the program's size or more.")
    shown = items[:2]
    rest = len(items) - len(shown)
    more = f"; and {rest} smaller difference{'s' if rest > 1 else ''}" if rest else ""
    if len({other for _, _, other, _ in items}) == 1:
        text = f"Compared with {items[0][2]}: " + "; ".join(f"{what} ({detail})" for _, what, _, detail in shown)
    else:
        text = f"Compared with the other {kind}s: " + "; ".join(
            f"{what} than {other} ({detail})" for _, what, other, detail in shown)
    return Finding("info", "", text + more + ".")
