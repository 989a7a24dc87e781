"""What a jax upgrade moved: two folders of snapshots, one per release,
compared slot by slot with :func:`sphinx_jaxhlo.store.drift.compare` (the
docs' drift page, ``nox -s drift``), each pair once
(:func:`sphinx_jaxhlo.store.analyses.compared`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sphinx_jaxhlo.store import analyses
from sphinx_jaxhlo.store.cache import ReportCache
from sphinx_jaxhlo.store.drift import Drift


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
    :param not_compared: slots only one folder has, whose example changed between
        the two compiles (another source, arguments or options), or that the older
        release failed to compile where the newer one did not (not for want of memory:
        that is a verdict, compared), with why.
    :param current: how many slots the newer folder has (its snapshot files).
    :param covered: how many of those the older folder has too, compiled or failed.
    """

    before: dict[str, str]
    after: dict[str, str]
    moved: list[SlotDrift]
    unchanged: int
    not_compared: list[tuple[str, str]]
    current: int = 0
    covered: int = 0


#: Why a slot of a page both releases compiled is in the newer folder only: the older
#: release's bisection probed other sizes (its flip lies elsewhere), or the example is newer
#: than the older release's run.
ONLY_NEWER = ("only the newer release has it (a size the newer release's bisection probed, "
              "or an example added since the older release's run)")
#: ... and in the older folder only (a size only its bisection probed).
ONLY_OLDER = "only the older release has it"

#: What must be the same in two snapshots' identities for their figures to be compared.
_SAME_REQUEST = ("source_sha256", "function", "args", "static", "xla_flags", "target", "target_sha256")


def compare_folders(before_root: Path, after_root: Path, under: str = "", tolerance: float = 0.0,
                    cache: ReportCache | None = None) -> ReleaseDrift:
    """Compare the snapshots of two snapshot folders slot by slot.

    Both are folders that ``jaxhlo_snapshot_dir`` wrote (one per release, e.g.
    the docs' own and one kept from an older jax); the analysis of the
    installed sphinx-jaxhlo reads both HLO texts again, so the verdicts
    compare like with like.  No jax is needed.

    :param under: only the documents below this folder (``"guide"``); all when empty.
    :param tolerance: as for :func:`compare`.
    :param cache: where the analyses and comparisons are kept between builds
        (:mod:`sphinx_jaxhlo.store.analyses`): an unchanged pair of snapshots
        is compared once.
    :raises SnapshotError: a snapshot of either folder is damaged.
    """
    moved: list[SlotDrift] = []
    unchanged = 0
    not_compared: list[tuple[str, str]] = []
    tools_before: dict[str, str] = {}
    tools_after: dict[str, str] = {}
    base_before, base_after = before_root / under, after_root / under
    paths = sorted({p.relative_to(base_before) for p in base_before.rglob("*.json")}
                   | {p.relative_to(base_after) for p in base_after.rglob("*.json")})
    current = sum(1 for _ in base_after.rglob("*.json"))
    covered = 0

    def target_of(rel: Path) -> str:
        return rel.name.removesuffix(".json").rpartition(".")[2]

    targets_before = {target_of(p.relative_to(base_before)) for p in base_before.rglob("*.json")}
    for rel in paths:
        docname = "/".join(filter(None, (under, *rel.parent.parts)))
        slot = rel.name.removesuffix(".json")
        old, new = analyses.read(base_before / rel), analyses.read(base_after / rel)
        if old is None and target_of(rel) not in targets_before:
            not_compared.append((f"{docname}/{slot}", f"the older release was not compiled for {target_of(rel)}"))
            continue
        if old is None and new is not None:
            page = {target_of(p.relative_to(base_before)) for p in (base_before / rel.parent).glob("*.json")}
            if not page:
                not_compared.append((f"{docname}/{slot}", "the older release did not compile this page"))
                continue
            if target_of(rel) not in page:
                not_compared.append((f"{docname}/{slot}",
                                     f"the older release did not compile this page for {target_of(rel)}"))
                continue
        if old is None or new is None:
            not_compared.append((f"{docname}/{slot}", ONLY_NEWER if old is None else ONLY_OLDER))
            continue
        covered += 1
        ident_old, ident_new = old.snapshot.identity, new.snapshot.identity
        changed = [k for k in _SAME_REQUEST if ident_old.get(k) != ident_new.get(k)]
        if changed:
            not_compared.append((f"{docname}/{slot}", f"the example changed between the two compiles "
                                                     f"({', '.join(changed)})"))
            continue
        failure = _failure(old.snapshot.facts, new.snapshot.facts)
        if failure:
            jax = old.snapshot.toolchain.get("jax", "the older release")
            not_compared.append((f"{docname}/{slot}", f"jax {jax} does not compile it: {failure}"))
            continue
        source_name = str(ident_new.get("source_name", "example.py"))
        drift, target = analyses.compared(old, new, source_name, tolerance, cache)
        if target == "cpu":
            tools_before, tools_after = dict(old.snapshot.toolchain), dict(new.snapshot.toolchain)
        if drift is None or not drift.figures_moved:
            unchanged += 1
            continue
        moved.append(SlotDrift(docname, slot.rsplit(".", 2)[0], drift))
    return ReleaseDrift(tools_before, tools_after, moved, unchanged, not_compared, current, covered)


#: How much of a compile error's first line a reason quotes.
_QUOTED = 160


def _failure(facts_before: dict[str, object], facts_after: dict[str, object]) -> str:
    """Why the older release failed to compile what the newer one compiled: its error's
    first line, shortened; empty when it did not fail, when both failed, or when it ran
    out of memory (a verdict like any other, compared)."""
    error = facts_before.get("error")
    if not isinstance(error, dict) or facts_after.get("error") is not None:
        return ""
    status = str(error.get("status", ""))
    if status == "RESOURCE_EXHAUSTED":
        return ""
    line = str(error.get("message", "")).strip().partition("\n")[0].removeprefix(f"{status}: ")
    if len(line) > _QUOTED:
        line = line[:_QUOTED - 1].rstrip() + "…"
    return f"{status}: {line}" if line else status or "a compile error"
