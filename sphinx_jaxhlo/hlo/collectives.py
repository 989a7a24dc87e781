"""The communication in an optimized SPMD module: which collectives, how big, over which mesh axes.

Reads a module parsed by ``sphinx_jaxhlo.hlo.parse`` (a program partitioned over a
mesh: every shape in it is one device's) and lists its collectives for the
report (``sphinx_jaxhlo.core.report.Collective``).  Pure Python: no jax, no Sphinx.

The rules:

- A **collective** is an ``all-gather``, ``all-reduce``, ``reduce-scatter``,
  ``all-to-all``, ``ragged-all-to-all``, ``collective-permute`` or
  ``collective-broadcast`` instruction (or its ``-start`` form) anywhere in
  the module: at the top level of a computation, inside a fusion, or wrapped
  by an ``async-start``.
- **One row per collective the program performs**: an asynchronous pair
  (``all-gather-start`` and its ``all-gather-done``; an ``async-start`` and
  its ``async-done``) is one collective; so are the copies of one
  collective that a TPU compiler spreads over an *async collective fusion*
  (a start fusion, fusions that compute while the data moves, a done fusion),
  which share its ``channel_id``.  Instructions of one kind and one
  ``channel_id`` are one collective; one without a ``channel_id`` is its own.
  A collective inside a loop body is listed once, with the loop's trip count
  when XLA knows it (``known_trip_count``).
- **Shape** is the result on one device (the ``-done``'s shape for an
  asynchronous pair); **bytes per device** is the larger of what one device
  puts in (the operands) and what it gets out (the result): for an
  all-gather the gathered array, for a reduce-scatter the array before it is
  split, for the others the buffer that is reduced, exchanged or sent.
- **Mesh axes**: the devices of a group are the mesh positions the compiled
  program's logical device ids stand for (row-major over the mesh's axes,
  ``jax``'s device order).  The replica groups (written out ``{{0,1},{2,3}}``,
  as an iota ``[2,4]<=[4,2]T(1,0)``, or as a mesh ``mesh['axis_0'=4,
  'axis_1'=2] {'axis_0'}``; ``{}`` is every device) are compared with the
  groups each set of the mesh's axes would form (devices that differ only in
  those axes); the set that forms exactly these groups is the answer (axes
  of size 1 left out).  A ``collective-permute`` runs over the axes in which
  its sources and targets differ.  No set matches: the axes are unknown
  (``None``), and the groups are described by their number and size (or
  given as written, in a form this module does not read).
- **Source line**: the innermost stack frame in the example's file of any of
  the collective's instructions (or of the fusion or ``async-start`` that
  holds it); when XLA kept no location on them, the line of the value it
  moves (the producer of its operand).
- **Overlap** (only in a scheduled module, whose instruction order is the
  order they run in): an asynchronous collective overlaps compute when an
  instruction that does work (not a parameter, constant, tuple, bitcast or
  ``get-tuple-element``, not a copy or slice started or finished
  asynchronously, not a part of another collective, not one whose result is
  a scalar such as a loop counter) is scheduled between its first and its
  last instruction, or when a fusion holding one of its copies also
  computes (the TPU's collective fusions).  A collective run
  synchronously (a plain instruction, or a pair marked ``"is_sync":true`` in
  its ``backend_config``) overlaps nothing.  Unknown (``None``) when the
  module is not scheduled or the pair spans two computations.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from sphinx_jaxhlo.core.report import COLLECTIVE_KINDS, Collective
from sphinx_jaxhlo.hlo.model import HloComputation, HloInstruction, HloModule, HloParseError, Shape
from sphinx_jaxhlo.hlo.parse import parse_module
from sphinx_jaxhlo.hlo.programs import producer_op, top_level_computations

__all__ = ["ReplicaGroups", "analyze_collectives", "collective_kind", "mesh_axes_of", "parse_replica_groups"]


#: Instructions that do no work of their own, and asynchronous copies (DMAs)
#: that run beside compute rather than being compute.
_NO_WORK = frozenset({
    "parameter", "constant", "tuple", "get-tuple-element", "bitcast", "copy-start", "copy-done",
    "slice-start", "slice-done", "after-all", "add-dependency", "opt-barrier", "partition-id", "replica-id",
    "async-update",
})  # fmt: skip
#: Custom calls that only mark where an asynchronous collective starts or ends (TPU).
_COLLECTIVE_MARKERS = frozenset({"AsyncCollectiveStart", "AsyncCollectiveDone"})


def collective_kind(opcode: str) -> str | None:
    """``all-gather-start`` -> ``all-gather``; ``None`` for a ``-done`` or
    anything that is not a collective."""
    if opcode.endswith("-done") or opcode.endswith("-update"):
        return None
    base = opcode.removesuffix("-start")
    return base if base in COLLECTIVE_KINDS else None


# -- replica groups ---------------------------------------------------------------


@dataclass(frozen=True)
class ReplicaGroups:
    """Decoded replica groups: lists of logical device ids (``pairs`` for a
    ``collective-permute``: (source, target) ids)."""

    groups: tuple[tuple[int, ...], ...] = ()
    pairs: tuple[tuple[int, int], ...] = ()

    def describe(self) -> str:
        """``2 groups of 4 devices``, ``8 source-target pairs``."""
        if self.pairs:
            return f"{len(self.pairs)} source-target pair{'s' if len(self.pairs) != 1 else ''}"
        if not self.groups:
            return "no group"
        sizes = sorted({len(g) for g in self.groups})
        size = "/".join(map(str, sizes))
        count = len(self.groups)
        return f"{count} group{'s' if count != 1 else ''} of {size} device{'s' if sizes != [1] else ''}"


_INT_LIST = re.compile(r"\{([^{}]*)\}")
_IOTA = re.compile(r"^\[([\d,\s]+)\]\s*<=\s*\[([\d,\s]+)\]\s*(?:T\(([\d,\s]+)\))?$")
_MESH = re.compile(r"^mesh\s*\[(?P<axes>[^\]]*)\]\s*\{(?P<group>[^}]*)\}$")
_MESH_AXIS = re.compile(r"^'(?P<name>[^']*)'\s*=\s*(?P<size>\d+)$")
_GROUP_AXIS = re.compile(r"^'(?P<name>[^']*)'(?::\((?P<pre>\d+)\)(?P<size>\d+))?$")


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.replace(" ", "").split(",") if x)


def _iota(dims: tuple[int, ...], reshape: tuple[int, ...], perm: tuple[int, ...] | None) -> list[int]:
    """The device ids of ``[...]<=[reshape]T(perm)``, flattened."""
    total = 1
    for d in reshape:
        total *= d
    if perm is None:
        return list(range(total))
    if sorted(perm) != list(range(len(reshape))):
        raise ValueError(f"bad transpose {perm} for {reshape}")
    strides = [1] * len(reshape)
    for i in range(len(reshape) - 2, -1, -1):
        strides[i] = strides[i + 1] * reshape[i + 1]
    out_dims = [reshape[p] for p in perm]
    out: list[int] = []
    for index in itertools.product(*(range(d) for d in out_dims)):
        out.append(sum(index[k] * strides[perm[k]] for k in range(len(perm))))
    return out


def _mesh_groups(text: str) -> tuple[tuple[int, ...], ...]:
    """``mesh['axis_0'=4,'axis_1'=2] {'axis_0'}``: the devices (row-major
    over the axes) that differ only in the listed axes (or sub-axes
    ``'axis_1':(pre)size``)."""
    m = _MESH.match(text.strip())
    if m is None:
        raise ValueError(f"unknown replica groups {text!r}")
    names: list[str] = []
    sizes: list[int] = []
    for item in (s.strip() for s in m.group("axes").split(",") if s.strip()):
        a = _MESH_AXIS.match(item)
        if a is None:
            raise ValueError(f"unknown mesh axis {item!r}")
        names.append(a.group("name"))
        sizes.append(int(a.group("size")))
    varying: dict[str, list[tuple[int, int]]] = {}
    for item in (s.strip() for s in m.group("group").split(",") if s.strip()):
        g = _GROUP_AXIS.match(item)
        if g is None or g.group("name") not in names:
            raise ValueError(f"unknown group axis {item!r}")
        size = sizes[names.index(g.group("name"))]
        pre = int(g.group("pre") or 1)
        part = int(g.group("size") or size)
        if size % (pre * part):
            raise ValueError(f"sub-axis {item!r} does not divide {size}")
        varying.setdefault(g.group("name"), []).append((pre, part))
    total = 1
    for s in sizes:
        total *= s
    buckets: dict[tuple[int, ...], list[int]] = {}
    for device in range(total):
        coords = _unravel(device, sizes)
        key: list[int] = []
        for name, size, c in zip(names, sizes, coords, strict=True):
            fixed = c
            for pre, part in varying.get(name, ()):
                inner = size // (pre * part)
                # c = major * (part * inner) + middle * inner + minor: the middle varies
                fixed -= ((c // inner) % part) * inner
            key.append(fixed)
        buckets.setdefault(tuple(key), []).append(device)
    return tuple(tuple(v) for v in buckets.values())


def parse_replica_groups(text: str | None, device_count: int) -> ReplicaGroups:
    """Decode a ``replica_groups=`` value (``None`` or ``{}``: every device in one group).

    :param device_count: how many devices the program runs on.
    :raises ValueError: a form this parser does not know.
    """
    if text is None or not text.strip() or re.fullmatch(r"\{\s*\}", text.strip()):
        return ReplicaGroups((tuple(range(device_count)),))
    text = text.strip()
    if text.startswith("mesh"):
        return ReplicaGroups(_mesh_groups(text))
    iota = _IOTA.match(text)
    if iota is not None:
        dims = _ints(iota.group(1))
        reshape = _ints(iota.group(2))
        perm = _ints(iota.group(3)) if iota.group(3) else None
        flat = _iota(dims, reshape, perm)
        if len(dims) != 2 or dims[0] * dims[1] != len(flat):
            raise ValueError(f"bad iota replica groups {text!r}")
        return ReplicaGroups(tuple(tuple(flat[i * dims[1]:(i + 1) * dims[1]]) for i in range(dims[0])))
    if text.startswith("{") and text.endswith("}"):
        inner = text[1:-1].strip()
        groups = tuple(_ints(g) for g in _INT_LIST.findall(inner))
        if not groups and inner:
            raise ValueError(f"unknown replica groups {text!r}")
        return ReplicaGroups(groups)
    raise ValueError(f"unknown replica groups {text!r}")


def parse_pairs(text: str) -> ReplicaGroups:
    """A ``source_target_pairs={{0,1},{1,2}}`` value."""
    pairs = []
    for pair in _INT_LIST.findall(text.strip()[1:-1] if text.strip().startswith("{{") else text):
        ids = _ints(pair)
        if len(ids) != 2:
            raise ValueError(f"bad source-target pair {pair!r}")
        pairs.append((ids[0], ids[1]))
    return ReplicaGroups(pairs=tuple(pairs))


def _unravel(index: int, sizes: Sequence[int]) -> tuple[int, ...]:
    coords = []
    for size in reversed(sizes):
        coords.append(index % size)
        index //= size
    return tuple(reversed(coords))


def mesh_axes_of(groups: ReplicaGroups, mesh: Sequence[tuple[str, int]]) -> list[str] | None:
    """The mesh axes a collective runs over, or ``None`` when its groups are
    not those of any set of the mesh's axes (see the module's rules).

    :param mesh: ``(name, size)`` of each axis, in order; logical device ``i``
        is the mesh position ``i`` in row-major order.
    """
    names = [n for n, _ in mesh]
    sizes = [s for _, s in mesh]
    total = 1
    for s in sizes:
        total *= s
    if groups.pairs:
        differ: set[int] = set()
        for src, dst in groups.pairs:
            if not (0 <= src < total and 0 <= dst < total):
                return None
            a, b = _unravel(src, sizes), _unravel(dst, sizes)
            differ |= {i for i in range(len(sizes)) if a[i] != b[i]}
        return [names[i] for i in sorted(differ)]
    wanted = {frozenset(g) for g in groups.groups}
    if sum(len(g) for g in groups.groups) != total or any(not (0 <= d < total) for g in groups.groups for d in g):
        return None
    real = [i for i, s in enumerate(sizes) if s > 1]
    for count in range(len(real) + 1):
        for subset in itertools.combinations(real, count):
            buckets: dict[tuple[int, ...], set[int]] = {}
            for device in range(total):
                coords = _unravel(device, sizes)
                key = tuple(c for i, c in enumerate(coords) if i not in subset)
                buckets.setdefault(key, set()).add(device)
            if {frozenset(b) for b in buckets.values()} == wanted:
                return [names[i] for i in subset]
    return None


# -- the module ------------------------------------------------------------------


@dataclass
class _Occurrence:
    """One instruction of a collective, and the top-level instruction that runs it."""

    inst: HloInstruction
    computation: str
    anchor: HloInstruction
    anchor_computation: str


@dataclass
class _Context:
    module: HloModule
    source_file: str | None
    #: computation -> (instruction that calls it, its computation)
    parents: dict[str, tuple[HloInstruction, str]] = field(default_factory=dict)
    #: the computations that run as programs (entry, loop bodies, branches...),
    #: less the computations an async-start wraps
    scheduled: set[str] = field(default_factory=set)


def analyze_collectives(text_or_module: str | HloModule, mesh: Sequence[tuple[str, int]] = (),
                        source_file: str | None = "example.py") -> list[Collective]:
    """The collectives of an optimized module, in the order they first run.

    :param text_or_module: the HLO text or an already parsed module.
    :param mesh: ``(name, size)`` of each mesh axis; empty: the module's
        ``num_partitions`` devices on one unnamed axis (no axes are named).
    :param source_file: the example's file (only its frames give source
        lines; ``None``: the innermost frame of any file).
    :raises HloParseError: when the text cannot be parsed or does not hold together.
    """
    module = parse_module(text_or_module) if isinstance(text_or_module, str) else text_or_module
    try:
        return _analyze(module, list(mesh), source_file)
    except HloParseError:
        raise
    except (KeyError, IndexError, ValueError, TypeError, AttributeError, RecursionError) as exc:
        raise HloParseError(f"inconsistent module: {type(exc).__name__}: {exc}") from exc


def _analyze(module: HloModule, mesh: list[tuple[str, int]], source_file: str | None) -> list[Collective]:
    ctx = _Context(module, source_file)
    wrapped: set[str] = set()
    for comp in module.computations.values():
        for inst in comp.instructions:
            for callee in inst.called_computations:
                ctx.parents.setdefault(callee, (inst, comp.name))
                if inst.opcode == "async-start":
                    wrapped.add(callee)
    order = top_level_computations(module)
    ctx.scheduled = {name for name in order if name not in wrapped}
    device_count = 1
    for _, size in mesh:
        device_count *= size
    if not mesh:
        partitions = module.attributes.get("num_partitions", "1")
        device_count = int(partitions) if partitions.isdigit() else 1

    occurrences: list[_Occurrence] = []
    for comp in module.computations.values():
        for inst in comp.instructions:
            if collective_kind(inst.opcode) is None:
                continue
            anchor = _anchor(ctx, inst, comp.name)
            if anchor is not None:
                occurrences.append(_Occurrence(inst, comp.name, anchor[0], anchor[1]))

    rank = {name: i for i, name in enumerate(order)}
    position: dict[tuple[str, str], int] = {}
    for name in order:
        for i, inst in enumerate(module.computations[name].instructions):
            position[(name, inst.name)] = i

    def when(o: _Occurrence) -> tuple[int, int]:
        return rank.get(o.anchor_computation, len(rank)), position.get((o.anchor_computation, o.anchor.name), 0)

    groups: dict[tuple[str, str], list[_Occurrence]] = {}
    for o in sorted(occurrences, key=when):
        kind = collective_kind(o.inst.opcode) or ""
        channel = o.inst.attributes.get("channel_id")
        key = (kind, f"channel {channel}") if channel else (kind, f"{o.computation}/{o.inst.name}")
        groups.setdefault(key, []).append(o)
    scheduled_module = module.attributes.get("is_scheduled") == "true"
    return [_collective(ctx, kind, items, mesh, device_count, scheduled_module)
            for (kind, _), items in groups.items()]


def _anchor(ctx: _Context, inst: HloInstruction, computation: str) -> tuple[HloInstruction, str] | None:
    """The instruction of a scheduled computation that runs ``inst``: itself,
    or the fusion / async-start that holds it (through nested fusions)."""
    current, comp = inst, computation
    for _ in range(64):
        if comp in ctx.scheduled:
            return current, comp
        parent = ctx.parents.get(comp)
        if parent is None:
            return None  # a computation nothing runs
        current, comp = parent
    return None


def _done_of(comp: HloComputation, start: HloInstruction) -> HloInstruction | None:
    """The ``-done`` that ends an asynchronous ``-start`` (through ``async-update``s)."""
    current = start
    for _ in range(64):
        users = [comp[u] for u in comp.users(current.name) if u in comp]
        done = next((u for u in users if u.opcode.endswith("-done")), None)
        if done is not None:
            return done
        update = next((u for u in users if u.opcode.endswith("-update")), None)
        if update is None:
            return None
        current = update
    return None


def _shape_of(comp: HloComputation, name: str) -> Shape | None:
    inst = comp.get(name)
    return inst.shape if inst is not None else None


def _line_of(ctx: _Context, inst: HloInstruction) -> int | None:
    def matches(file: str) -> bool:
        if ctx.source_file is None:
            return True
        return file == ctx.source_file or file.rsplit("/", 1)[-1] == ctx.source_file.rsplit("/", 1)[-1]

    for frame in ctx.module.frames(inst.stack_frame_id):
        if matches(frame.file) and frame.line > 0:
            return frame.line
    md = inst.metadata
    if "source_file" in md and md.get("source_line", "").isdigit() and matches(md["source_file"]):
        return int(md["source_line"])
    return None


def _does_work(ctx: _Context, inst: HloInstruction, depth: int = 0) -> bool:
    """Whether a top-level instruction computes (see the module's rules)."""
    if depth == 0 and all(leaf.elements <= 1 for leaf in inst.shape.leaves()):
        return False
    if inst.opcode in _NO_WORK or inst.opcode.endswith("-done") or collective_kind(inst.opcode) is not None:
        return False
    if inst.opcode in ("async-start", "async-done"):
        return False
    if inst.opcode == "custom-call" and inst.custom_call_target in _COLLECTIVE_MARKERS:
        return False
    if inst.opcode != "fusion":
        return True
    if depth > 16:
        return True
    for callee in inst.called_computations:
        body = ctx.module.computations.get(callee)
        if body is None:
            continue
        for sub in body.instructions:
            if _does_work(ctx, sub, depth + 1):
                return True
    return False


def _operand_lines(ctx: _Context, occurrence: _Occurrence) -> list[int]:
    """The source lines of the producers of a collective's operands, followed
    out of fusion bodies and async wrappers to the top-level instruction that
    feeds them."""
    module = ctx.module
    out: set[int] = set()
    comp = module.computations[occurrence.computation]
    for name in occurrence.inst.operands:
        producer = comp.get(name)
        current_comp = occurrence.computation
        for _ in range(16):
            number = producer.parameter_number if producer is not None and producer.opcode == "parameter" else None
            if number is None:
                break
            parent = ctx.parents.get(current_comp)
            if parent is None or number >= len(parent[0].operands):
                producer = None
                break
            caller, current_comp = parent
            producer = module.computations[current_comp].get(caller.operands[number])
        if producer is not None and (line := _line_of(ctx, producer)) is not None:
            out.add(line)
    return sorted(out)


def _trip_count(ctx: _Context, computation: str) -> tuple[bool, int | None]:
    """Whether ``computation`` runs in a loop body, and the product of the
    known trip counts of the loops around it (``None`` when one is unknown)."""
    in_loop = False
    total: int | None = 1
    comp = computation
    for _ in range(64):
        parent = ctx.parents.get(comp)
        if parent is None:
            break
        inst, comp_of_parent = parent
        if inst.opcode == "while" and inst.attributes.get("body", "").lstrip("%") == comp:
            in_loop = True
            config = inst.backend_config or {}
            known = config.get("known_trip_count", {}) if isinstance(config, dict) else {}
            n = known.get("n") if isinstance(known, dict) else None
            total = total * int(n) if total is not None and n is not None and str(n).isdigit() else None
        comp = comp_of_parent
    return in_loop, (total if in_loop else None)


def _collective(ctx: _Context, kind: str, items: list[_Occurrence], mesh: list[tuple[str, int]], device_count: int,
                scheduled_module: bool) -> Collective:
    module = ctx.module
    first = items[0]
    inst = first.inst
    comp = module.computations[first.computation]
    anchor_comp = module.computations[first.anchor_computation]

    # the end of an asynchronous collective
    done: HloInstruction | None = None
    if inst.opcode.endswith("-start"):
        done = _done_of(comp, inst)
    elif first.anchor.opcode == "async-start":
        done = _done_of(anchor_comp, first.anchor)
    result = done.shape if done is not None else inst.shape
    if inst.opcode.endswith("-start") and done is None and result.is_tuple and result.tuple_shapes:
        result = result.tuple_shapes[-1]
    operand_shapes = [s for s in (_shape_of(comp, o) for o in inst.operands) if s is not None]
    operand_bytes = sum(s.bytes for s in operand_shapes)
    operand_text = (str(operand_shapes[0]) if len(operand_shapes) == 1
                    else "(" + ", ".join(map(str, operand_shapes)) + ")")

    # mesh axes
    try:
        if kind == "collective-permute":
            groups = parse_pairs(inst.attributes.get("source_target_pairs", "{}"))
        else:
            groups = parse_replica_groups(inst.attributes.get("replica_groups"), device_count)
    except ValueError:
        groups = ReplicaGroups()
        axes: list[str] | None = None
        groups_text = inst.attributes.get("replica_groups") or inst.attributes.get("source_target_pairs") or ""
    else:
        axes = mesh_axes_of(groups, mesh) if mesh else None
        groups_text = groups.describe()

    # asynchronous, and overlapped?
    config = inst.backend_config if isinstance(inst.backend_config, dict) else {}
    collective_config = config.get("collective_backend_config") if isinstance(config, dict) else None
    marked_sync = isinstance(collective_config, dict) and collective_config.get("is_sync") is True
    anchors = [o for o in items if o.anchor_computation == first.anchor_computation]
    is_async = not marked_sync and (done is not None or len({o.anchor.name for o in anchors}) > 1)
    overlaps: list[str] = []
    overlapped: bool | None = False
    if is_async:
        names = [i.name for i in anchor_comp.instructions]
        start_at = min(names.index(o.anchor.name) for o in anchors)
        end_name = done.name if done is not None and done.name in anchor_comp else None
        if done is not None and end_name is None:
            overlapped = None  # a pair that spans two computations
        else:
            end_at = names.index(end_name) if end_name is not None else max(names.index(o.anchor.name)
                                                                             for o in anchors)
            inside = {o.anchor.name for o in anchors}
            for between in anchor_comp.instructions[start_at + 1:end_at]:
                if between.name in inside and not _does_work(ctx, between):
                    continue
                if _does_work(ctx, between):
                    overlaps.append(between.name)
            for o in anchors:  # a collective fusion that also computes
                if o.anchor.opcode == "fusion" and o.anchor.name not in overlaps and _does_work(ctx, o.anchor) \
                        and names.index(o.anchor.name) in (start_at, end_at):
                    overlaps.append(o.anchor.name)
            overlapped = bool(overlaps) if scheduled_module else None
    lines = sorted({line for o in items for line in [_line_of(ctx, o.inst)] if line is not None}
                   | ({line} if done is not None and (line := _line_of(ctx, done)) is not None else set()))
    carriers = [o.inst for o in items] + [o.anchor for o in items] + ([done] if done is not None else [])
    if not lines:
        lines = sorted({line for c in carriers[len(items):] if (line := _line_of(ctx, c)) is not None})
    if not lines:
        lines = _operand_lines(ctx, first)
    op = next((p for c in carriers if (p := producer_op(c.op_name)) is not None), None)
    in_loop, trip_count = _trip_count(ctx, first.anchor_computation)
    return Collective(
        name=first.anchor.name if first.anchor.opcode == "async-start" else inst.name,
        kind=kind,
        shape=str(result),
        operand_shape=operand_text,
        bytes=max(operand_bytes, result.bytes),
        axes=axes,
        groups=groups_text,
        is_async=is_async,
        overlapped=overlapped,
        overlaps_with=overlaps,
        done=done.name if done is not None else None,
        computation=first.anchor_computation,
        fusion=first.anchor.name if first.anchor.opcode == "fusion" else None,
        fused_computation=(first.anchor.called_computations[0] if first.anchor.opcode == "fusion"
                           and first.anchor.called_computations else None),
        in_loop=in_loop,
        trip_count=trip_count,
        source_lines=lines,
        op=op,
        copies=len(items),
    )
