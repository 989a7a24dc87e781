"""Drift: how a fresh report differs from the last one stored for the same example and target.

When the toolchain changes (a new jax, jaxlib, CUDA plugin or libtpu), the
build compares each fresh report with the stored one (a snapshot, or the
cache's last entry for the example) on three figures a reader's claims rest
on: temp memory, peak memory and the verdict (the reductions fused or not, or
the compile error).  A change of verdict, or of temp by more than the
tolerance, is worth a ``jaxhlo.drift`` warning; every difference goes into the
build report's "changed since" table.

:func:`compare_folders` does the same between two folders of snapshots, one
per release, for a page that says what a jax upgrade moved (the docs' drift
page, ``nox -s drift``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sphinx_jaxhlo.core.report import Report
from sphinx_jaxhlo.core.sizes import format_bytes


def verdict(report: Report) -> str:
    """What the reductions came to, or the compile error: the word compared for drift."""
    if report.error is not None:
        return f"error {report.error.status}"
    reductions = report.verdict_reductions
    if not reductions:
        return "no reduction"
    n = len(reductions)
    unfused = sum(not r.fused for r in reductions)
    if unfused == 0:
        return "fused" if n == 1 else f"all {n} fused"
    if unfused == n:
        return "unfused" if n == 1 else f"all {n} unfused"
    return f"{unfused} of {n} unfused"


def versions_text(toolchain: Mapping[str, str]) -> str:
    """``jax 0.10.2, jaxlib 0.10.2, libtpu 0.0.42``."""
    return ", ".join(f"{k} {v}" for k, v in sorted(toolchain.items())) or "unknown versions"


@dataclass
class Drift:
    """One example's (function, target) before and after."""

    function: str
    target: str
    versions_before: str
    versions_after: str
    temp_before: int | None
    temp_after: int | None
    peak_before: int | None
    peak_after: int | None
    verdict_before: str
    verdict_after: str
    #: The verdict changed, or temp moved by more than the tolerance.
    significant: bool

    @property
    def message(self) -> str:
        """``with_dot on gpu:h100 changed since jax 0.10.1: temp 50.4 MB -> 20.1 GB, ...``."""
        parts = []
        if self.temp_before != self.temp_after:
            parts.append(f"temp {_size(self.temp_before)} -> {_size(self.temp_after)}")
        if self.peak_before != self.peak_after:
            parts.append(f"peak {_size(self.peak_before)} -> {_size(self.peak_after)}")
        if self.verdict_before != self.verdict_after:
            parts.append(f"reductions {self.verdict_before} -> {self.verdict_after}")
        since = (f"since {self.versions_before} (now {self.versions_after})"
                 if self.versions_before != self.versions_after else f"since the stored report ({self.versions_after})")
        return f"{self.function} on {self.target} changed {since}: " + ("; ".join(parts) or "same figures")


def _size(value: int | None) -> str:
    return "not reported" if value is None else format_bytes(value)


def compare(before: Report, after: Report, toolchain_before: Mapping[str, str],
            toolchain_after: Mapping[str, str], tolerance: float) -> Drift | None:
    """The drift from ``before`` to ``after``, or ``None`` when the toolchain
    and the three figures are all the same.

    :param tolerance: a temp change counts when it exceeds this fraction of the
        larger of the two figures (0: any change counts).
    """
    temp_before = None if before.error else before.memory.temp_bytes
    temp_after = None if after.error else after.memory.temp_bytes
    peak_before = None if before.error else before.memory.peak_bytes
    peak_after = None if after.error else after.memory.peak_bytes
    verdict_before, verdict_after = verdict(before), verdict(after)
    same_figures = (temp_before, peak_before, verdict_before) == (temp_after, peak_after, verdict_after)
    if same_figures and dict(toolchain_before) == dict(toolchain_after):
        return None
    significant = verdict_before != verdict_after
    if temp_before is not None and temp_after is not None:
        significant |= abs(temp_after - temp_before) > tolerance * max(temp_before, temp_after)
    elif temp_before != temp_after:
        significant = True
    return Drift(after.function, after.target, versions_text(toolchain_before), versions_text(toolchain_after),
                 temp_before, temp_after, peak_before, peak_after, verdict_before, verdict_after, significant)


# -- between two releases: two folders of snapshots ----------------------------------------


@dataclass
class SlotDrift:
    """One (example, function, target) compiled by two releases."""

    docname: str
    example: str
    drift: Drift


@dataclass
class ReleaseDrift:
    """What moved between the snapshots of one release and those of another.

    :param before: the older folder's toolchain (of its CPU snapshots), e.g. ``{"jax": "0.9.2", ...}``.
    :param after: likewise for the newer folder.
    :param moved: each slot whose temp, peak or verdict differs, in document order.
    :param unchanged: how many slots have the same three figures.
    :param not_compared: slots only one folder has, or whose example changed between
        the two compiles (another source, arguments or options), with why.
    """

    before: dict[str, str]
    after: dict[str, str]
    moved: list[SlotDrift]
    unchanged: int
    not_compared: list[tuple[str, str]]


#: What must be the same in two snapshots' identities for their figures to be compared.
_SAME_REQUEST = ("source_sha256", "function", "args", "static", "xla_flags", "target", "target_sha256")


def compare_folders(before_root: Path, after_root: Path, under: str = "", tolerance: float = 0.0) -> ReleaseDrift:
    """Compare the snapshots of two snapshot folders slot by slot.

    Both are folders that ``jaxhlo_snapshot_dir`` wrote (one per release, e.g.
    the docs' own and one kept from an older jax); the analysis of the
    installed sphinx-jaxhlo reads both HLO texts again, so the verdicts
    compare like with like.  No jax is needed.

    :param under: only the documents below this folder (``"guide"``); all when empty.
    :param tolerance: as for :func:`compare`.
    :raises SnapshotError: a snapshot of either folder is damaged.
    """
    from sphinx_jaxhlo.store.snapshots import read

    moved: list[SlotDrift] = []
    unchanged = 0
    not_compared: list[tuple[str, str]] = []
    tools_before: dict[str, str] = {}
    tools_after: dict[str, str] = {}
    base_before, base_after = before_root / under, after_root / under
    paths = sorted({p.relative_to(base_before) for p in base_before.rglob("*.json")}
                   | {p.relative_to(base_after) for p in base_after.rglob("*.json")})
    def target_of(rel: Path) -> str:
        return rel.name.removesuffix(".json").rpartition(".")[2]

    targets_before = {target_of(p.relative_to(base_before)) for p in base_before.rglob("*.json")}
    for rel in paths:
        docname = "/".join(filter(None, (under, *rel.parent.parts)))
        slot = rel.name.removesuffix(".json")
        old, new = read(base_before / rel), read(base_after / rel)
        if old is None and target_of(rel) not in targets_before:
            not_compared.append((f"{docname}/{slot}", f"the older release was not compiled for {target_of(rel)}"))
            continue
        if old is None or new is None:
            not_compared.append((f"{docname}/{slot}", f"only the {'newer' if old is None else 'older'} release has it"))
            continue
        ident_old, ident_new = old.snapshot.identity, new.snapshot.identity
        changed = [k for k in _SAME_REQUEST if ident_old.get(k) != ident_new.get(k)]
        if changed:
            not_compared.append((f"{docname}/{slot}", f"the example changed between the two compiles "
                                                     f"({', '.join(changed)})"))
            continue
        source_name = str(ident_new.get("source_name", "example.py"))
        before, after = old.snapshot.report("", source_name), new.snapshot.report("", source_name)
        if before.target == "cpu":
            tools_before, tools_after = dict(old.snapshot.toolchain), dict(new.snapshot.toolchain)
        drift = compare(before, after, old.snapshot.toolchain, new.snapshot.toolchain, tolerance)
        if drift is None or (drift.temp_before, drift.peak_before, drift.verdict_before) == (
                drift.temp_after, drift.peak_after, drift.verdict_after):
            unchanged += 1
            continue
        moved.append(SlotDrift(docname, slot.rsplit(".", 2)[0], drift))
    return ReleaseDrift(tools_before, tools_after, moved, unchanged, not_compared)
