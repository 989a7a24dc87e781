"""Drift between releases: two folders of snapshots compared slot by slot
(:func:`sphinx_jaxhlo.store.releases.compare_folders`), as the drift page does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sphinx_jaxhlo.store.releases import compare_folders

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
    for slot in SLOTS:
        edit(old / f"{slot}.json")  # the older toolchain, the same figures
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
    assert reasons[f"guide/seed/{SLOTS[2]}"] == "only the older release has it"


def test_a_target_the_older_release_skipped_is_said_once_per_slot(tmp_path: Path) -> None:
    old = copy_slots(tmp_path / "old")
    copy_slots(tmp_path / "new")
    for path in old.glob(f"{SLOTS[1]}.*"):
        path.unlink()
    reasons = dict(compare_folders(tmp_path / "old", tmp_path / "new", "guide").not_compared)
    assert reasons == {f"guide/seed/{SLOTS[1]}": "the older release was not compiled for gpu-h100"}
