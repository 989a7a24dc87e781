"""Drift between releases: two folders of snapshots compared slot by slot
(:func:`sphinx_jaxhlo.store.releases.compare_folders`), as the drift page does."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sphinx_jaxhlo.store.releases import ONLY_NEWER, ONLY_OLDER, compare_folders

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "docs" / "_snapshots" / "guide" / "seed"
SLOTS = ("jaxhlo-example-seed-dot.with_dot.cpu", "jaxhlo-example-seed-dot.with_dot.gpu-h100",
         "jaxhlo-example-seed-elementwise.explicit.cpu")


def copy_slots(folder: Path) -> Path:
    target = folder / "guide" / "seed"
    target.mkdir(parents=True)
    for slot in SLOTS:
        for path in SEED.glob(f"{slot}.*"):
            shutil.copy(path, target / path.name)
    return target


def edit(path: Path, **memory: int) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["facts"]["memory"].update(memory)
    doc["toolchain"] = {**doc["toolchain"], "jax": "0.9.2", "jaxlib": "0.9.2"}
    path.write_text(json.dumps(doc), encoding="utf-8")


def test_the_same_snapshots_have_not_moved(tmp_path: Path) -> None:
    copy_slots(tmp_path / "old")
    copy_slots(tmp_path / "new")
    result = compare_folders(tmp_path / "old", tmp_path / "new", "guide")
    assert result.moved == [] and result.unchanged == len(SLOTS) and result.not_compared == []


def test_a_moved_figure_is_listed_with_both_values_and_versions(tmp_path: Path) -> None:
    old = copy_slots(tmp_path / "old")
    copy_slots(tmp_path / "new")
    new_doc = json.loads((old / f"{SLOTS[1]}.json").read_text(encoding="utf-8"))
    temp = new_doc["facts"]["memory"]["temp_bytes"]
    for name in SLOTS:
        edit(old / f"{name}.json")  # the older toolchain, the same figures
    edit(old / f"{SLOTS[1]}.json", temp_bytes=temp // 2)
    result = compare_folders(tmp_path / "old", tmp_path / "new", "guide", tolerance=0.05)
    assert result.unchanged == 2 and len(result.moved) == 1
    slot = result.moved[0]
    assert (slot.docname, slot.example) == ("guide/seed", "jaxhlo-example-seed-dot")
    assert (slot.drift.target, slot.drift.function) == ("gpu:h100", "with_dot")
    assert (slot.drift.temp_before, slot.drift.temp_after) == (temp // 2, temp)
    assert slot.drift.significant and slot.drift.verdict_before == slot.drift.verdict_after
    assert result.before["jax"] == "0.9.2" and result.after["jax"] != "0.9.2"
    # within the tolerance: listed (the figure moved) but not significant
    edit(old / f"{SLOTS[1]}.json", temp_bytes=temp - 1)
    small = compare_folders(tmp_path / "old", tmp_path / "new", "guide", tolerance=0.05).moved
    assert len(small) == 1 and not small[0].drift.significant


def test_an_edited_example_or_a_lone_slot_is_not_compared(tmp_path: Path) -> None:
    old = copy_slots(tmp_path / "old")
    new = copy_slots(tmp_path / "new")
    doc = json.loads((old / f"{SLOTS[0]}.json").read_text(encoding="utf-8"))
    doc["identity"]["source_sha256"] = "0" * 64
    (old / f"{SLOTS[0]}.json").write_text(json.dumps(doc), encoding="utf-8")
    (new / f"{SLOTS[2]}.json").unlink()
    result = compare_folders(tmp_path / "old", tmp_path / "new", "guide")
    assert result.unchanged == 1 and result.moved == []
    reasons = dict(result.not_compared)
    assert "source_sha256" in reasons[f"guide/seed/{SLOTS[0]}"]
    assert reasons[f"guide/seed/{SLOTS[2]}"] == ONLY_OLDER


def test_a_target_the_older_release_skipped_is_said_once_per_slot(tmp_path: Path) -> None:
    old = copy_slots(tmp_path / "old")
    copy_slots(tmp_path / "new")
    for path in old.glob(f"{SLOTS[1]}.*"):
        path.unlink()
    reasons = dict(compare_folders(tmp_path / "old", tmp_path / "new", "guide").not_compared)
    assert reasons == {f"guide/seed/{SLOTS[1]}": "the older release was not compiled for gpu-h100"}


def fail(path: Path, status: str, message: str) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["facts"]["error"] = {"status": status, "message": message, "needed_bytes": None, "available_bytes": None}
    doc["toolchain"] = {**doc["toolchain"], "jax": "0.8.3", "jaxlib": "0.8.3"}
    path.write_text(json.dumps(doc), encoding="utf-8")


def test_what_the_older_release_cannot_compile_is_named_with_its_error(tmp_path: Path) -> None:
    old = copy_slots(tmp_path / "old")
    copy_slots(tmp_path / "new")
    long_line = "x" * 400
    fail(old / f"{SLOTS[1]}.json", "INVALID_ARGUMENT",
         f"INVALID_ARGUMENT: No such flag: xla_gpu_new_flag {long_line}\nsecond line of the log")
    result = compare_folders(tmp_path / "old", tmp_path / "new", "guide")
    assert result.moved == [] and result.unchanged == 2
    ((slot, why),) = result.not_compared
    assert slot == f"guide/seed/{SLOTS[1]}"
    assert why.startswith("jax 0.8.3 does not compile it: INVALID_ARGUMENT: No such flag: xla_gpu_new_flag")
    assert "second line" not in why and len(why) < 250 and why.endswith("…")
    # a compile that failed for want of memory is a verdict: compared, and listed where it moved
    fail(old / f"{SLOTS[1]}.json", "RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED: Ran out of memory")
    result = compare_folders(tmp_path / "old", tmp_path / "new", "guide")
    assert result.not_compared == [] and len(result.moved) == 1
    moved = result.moved[0].drift
    assert moved.verdict_before == "error RESOURCE_EXHAUSTED" and moved.temp_before is None
    assert moved.verdict_after != moved.verdict_before and moved.significant


def test_coverage_counts_the_newer_folders_slots_the_older_one_has(tmp_path: Path) -> None:
    old = copy_slots(tmp_path / "old")
    new = copy_slots(tmp_path / "new")
    for path in old.glob(f"{SLOTS[0]}.*"):
        path.unlink()
    fail(old / f"{SLOTS[1]}.json", "INVALID_ARGUMENT", "INVALID_ARGUMENT: unknown flag")
    for path in SEED.glob("jaxhlo-example-seed.with_outer.cpu.*"):
        shutil.copy(path, new / path.name)
    result = compare_folders(tmp_path / "old", tmp_path / "new", "guide")
    # the newer folder: the three slots and one more; the older has two of them (one failed: still covered)
    assert (result.current, result.covered) == (len(SLOTS) + 1, len(SLOTS) - 1)
    assert result.unchanged == 1
    assert {why for _, why in result.not_compared} == {
        ONLY_NEWER, "jax 0.8.3 does not compile it: INVALID_ARGUMENT: unknown flag"}


def test_a_page_the_older_release_never_compiled_is_said_so(tmp_path: Path) -> None:
    copy_slots(tmp_path / "old")
    new = copy_slots(tmp_path / "new")
    other = new.parent / "reading"
    other.mkdir()
    for path in SEED.glob(f"{SLOTS[0]}.*"):
        shutil.copy(path, other / path.name)
    result = compare_folders(tmp_path / "old", tmp_path / "new", "guide")
    assert result.unchanged == len(SLOTS)
    assert result.not_compared == [(f"guide/reading/{SLOTS[0]}", "the older release did not compile this page")]
    # a page compiled for some targets only (a first pass without the TPU): the others are said per target
    (tmp_path / "old" / "guide" / "reading").mkdir()
    for path in SEED.glob(f"{SLOTS[2]}.*"):
        shutil.copy(path, tmp_path / "old" / "guide" / "reading" / path.name)
    for path in SEED.glob(f"{SLOTS[1]}.*"):  # gpu-h100, which the older run has on the seed page
        shutil.copy(path, other / path.name)
    reasons = dict(compare_folders(tmp_path / "old", tmp_path / "new", "guide").not_compared)
    assert reasons == {f"guide/reading/{SLOTS[0]}": ONLY_NEWER,
                       f"guide/reading/{SLOTS[1]}": "the older release did not compile this page for gpu-h100",
                       f"guide/reading/{SLOTS[2]}": ONLY_OLDER}


def drift_tool() -> Any:
    spec = importlib.util.spec_from_file_location("jaxhlo_drift_tool", ROOT / "tools" / "drift.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_drift_tool_builds_the_pages_with_snapshots_smallest_first_and_prunes_removed_slots(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = drift_tool()
    current = tmp_path / "current"
    copy_slots(current)
    (current / "quickstart").mkdir()
    for path in SEED.glob(f"{SLOTS[0]}.*"):
        shutil.copy(path, current / "quickstart" / path.name)
    monkeypatch.setattr(tool, "CURRENT", current)
    assert tool.pages() == ["quickstart", "guide/seed"]
    out = tmp_path / "old"
    copy_slots(out)
    gone = out / "guide" / "seed" / "jaxhlo-example-seed.with_outer.cpu.json"
    for path in SEED.glob("jaxhlo-example-seed.with_outer.cpu.*"):
        shutil.copy(path, out / "guide" / "seed" / path.name)
    (out / "guide" / "removed").mkdir()
    for path in SEED.glob(f"{SLOTS[0]}.*"):
        shutil.copy(path, out / "guide" / "removed" / path.name)
    assert tool.prune(out) == 2
    assert not gone.exists() and not list(gone.parent.glob("jaxhlo-example-seed.with_outer.cpu.*"))
    assert not (out / "guide" / "removed").exists()
    assert sorted(p.name for p in (out / "guide" / "seed").glob("*.json")) == sorted(f"{s}.json" for s in SLOTS)
