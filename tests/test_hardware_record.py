"""The committed hardware record (``docs/_hardware``, written by ``tools/hardware_check.py`` on
the device): its form, and the device figure of every docs example it measured against what the
device held.  Nothing here needs the device; the measurements are read, never redone."""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path

import pytest

from sphinx_jaxhlo.core.report import Memory
from sphinx_jaxhlo.store import snapshots
from sphinx_jaxhlo.store.hardware import RecordError, parse_record, program_digest, read_record, read_records

DOCS = Path(__file__).resolve().parent.parent / "docs"
RECORD = DOCS / "_hardware" / "tpu-v5e.json"


@pytest.fixture(scope="module")
def record_data() -> dict:
    return json.loads(RECORD.read_text(encoding="utf-8"))


def _snapshot(slot: str) -> snapshots.Stored | None:
    return snapshots.read(DOCS / "_snapshots" / slot)


def test_the_record_has_its_form_and_names_the_device_it_ran_on() -> None:
    record = read_record(RECORD)
    assert record.target == "tpu:v5e"
    assert record.device == "TPU v5 lite"
    assert record.versions["libtpu"] and record.versions["jax"]
    assert len(record.measurements) >= 150


def test_the_device_figure_is_what_the_chip_held_for_every_docs_example_measured() -> None:
    """Within 2 % or 1 MiB: arguments + outputs + temp + code - aliased, derived from each
    snapshot as a report made from it is (Memory.settle), against the chip's bytes_in_use and
    bytes_reserved (less arguments jit dropped, which the run was given)."""
    record = read_record(RECORD)
    checked, off = 0, []
    for slot, m in record.measurements.items():
        stored = _snapshot(slot)
        if stored is None or m.program_bytes is None:
            continue
        if record.measurement(slot, program_digest(stored.snapshot.identity,
                                                   stored.snapshot.texts.get("hlo", ""))) is None:
            continue  # changed since it was measured: flagged by the next test
        memory = Memory(**stored.snapshot.facts["memory"])
        memory.settle("tpu:v5e")
        assert memory.device_bytes is not None, slot
        checked += 1
        if abs(memory.device_bytes - m.program_bytes) > max(0.02 * m.program_bytes, 2**20):
            off.append((slot, memory.device_bytes, m.program_bytes))
    assert checked >= 140
    # Where the chip reserved less than XLA's temp block, what is live at the peak must say what it
    # held, and the example's page must say so (the reason, not a silent pass).
    unexplained = []
    for slot, ours, held in off:
        m = record.measurements[slot]
        page = DOCS / (slot.split("/jaxhlo-")[0] + ".md")
        stated = page.exists() and "less than XLA's temp" in page.read_text(encoding="utf-8")
        if m.live_bytes is None or abs(m.live_bytes - held) > max(0.02 * held, 2**20) or not stated:
            unexplained.append((slot, ours, held, m.live_bytes))
    assert not unexplained, unexplained
    assert len(off) <= 3, off


def test_what_is_live_at_the_peak_is_what_the_chip_held_for_every_docs_example_measured() -> None:
    """Within 2 % or 1 MiB: the total live at the peak by XLA's buffer assignment and live ranges
    (arguments, outputs, code and the temporaries live then, :mod:`sphinx_jaxhlo.hlo.peak`),
    against what the chip held while the program ran."""
    record = read_record(RECORD)
    compared = [m for m in record.measurements.values() if m.live_bytes is not None and m.program_bytes]
    off = [(m.slot, m.live_bytes, m.program_bytes) for m in compared
           if abs(m.live_bytes - m.program_bytes) > max(0.02 * m.program_bytes, 2**20)]
    assert len(compared) >= 180
    assert not off, off


def test_xlas_tpu_peak_is_not_what_the_chip_held() -> None:
    """Why the device figure exists: XLA's TPU peak counts on-chip buffers and leaves the
    code out, so it is off what the chip held for many programs, in both directions."""
    record = read_record(RECORD)
    ran = [m for m in record.measurements.values() if m.program_bytes]
    over = [m for m in ran if m.memory_analysis["peak_memory_in_bytes"] > 1.02 * m.program_bytes]
    under = [m for m in ran if m.memory_analysis["peak_memory_in_bytes"] < 0.98 * m.program_bytes]
    assert len(over) > 20 and len(under) > 5


def test_every_compile_the_snapshots_predicted_to_fail_failed_on_the_chip_and_the_others_ran() -> None:
    record = read_record(RECORD)
    failed = [m for m in record.measurements.values() if m.error]
    assert failed and all(m.error == "RESOURCE_EXHAUSTED" and m.same_error for m in failed)
    ran = [m for m in record.measurements.values() if not m.error]
    assert all(m.same_error and m.same_figures and m.same_hlo and m.held_bytes for m in ran)


def test_examples_changed_since_they_were_measured_are_flagged() -> None:
    """A snapshot whose program changed since the record was made (or a new TPU example) is not
    a failure here (CI has no chip): it is named, and the page shows no measurement for it."""
    record = read_record(RECORD)
    current = {}
    for slot in record.measurements:
        stored = _snapshot(slot)
        current[slot] = None if stored is None else program_digest(stored.snapshot.identity,
                                                                   stored.snapshot.texts.get("hlo", ""))
    measured = set(record.measurements)
    unmeasured = sorted(p.relative_to(DOCS / "_snapshots").as_posix()
                        for p in (DOCS / "_snapshots").rglob("*.tpu-v5e.json")
                        if p.relative_to(DOCS / "_snapshots").as_posix() not in measured)
    stale = record.stale(current)
    if stale or unmeasured:
        warnings.warn(f"the hardware record is behind the snapshots: {len(stale)} changed since measured "
                      f"({', '.join(stale[:5])}), {len(unmeasured)} never measured ({', '.join(unmeasured[:5])}); "
                      "run tools/hardware_check.py on a TPU v5e", stacklevel=1)
    # the check itself: an altered program is found stale
    one = next(iter(record.measurements))
    assert record.stale({**current, one: "0" * 64})[:1] and one in record.stale({**current, one: "0" * 64})
    assert record.measurement(one, "0" * 64) is None


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(hardware_record=2), "not a hardware record of form 1"),
    (lambda d: d.pop("date"), "date"),
    (lambda d: d["examples"][0].pop("program_sha256"), "program's digest"),
    (lambda d: d["examples"][0]["memory_analysis"].pop("temp_size_in_bytes"), "lacks temp_size_in_bytes"),
    (lambda d: d["examples"][0].update(held_bytes="12 MB"), "held_bytes: expected an integer"),
    (lambda d: d["examples"][0].update(warm_ms=-1), "warm_ms"),
    (lambda d: d["examples"].append(copy.deepcopy(d["examples"][0])), "measured twice"),
])  # fmt: skip
def test_a_damaged_record_is_refused_saying_what_is_wrong(record_data: dict, change, message: str) -> None:
    data = copy.deepcopy(record_data)
    data["examples"].sort(key=lambda e: bool(e.get("error")))  # one that ran first
    change(data)
    with pytest.raises(RecordError, match=message):
        parse_record(data)


def test_a_folder_of_records_says_which_could_not_be_read(tmp_path: Path, record_data: dict) -> None:
    (tmp_path / "tpu-v5e.json").write_text(json.dumps(record_data), encoding="utf-8")
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    records, problems = read_records(tmp_path)
    assert list(records) == ["tpu:v5e"]
    assert len(problems) == 1 and problems[0].startswith("broken.json: broken.json is not JSON")


# -- the tool that writes it (tools/hardware_check.py), on this machine's CPU --------------------

def _tool():
    import importlib.util

    spec = importlib.util.spec_from_file_location("hardware_check", DOCS.parent / "tools" / "hardware_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_canonical_module_sets_aside_names_metadata_and_annotations_not_the_program() -> None:
    tool = _tool()
    stored = _snapshot("guide/remat/jaxhlo-example-remat-scan.grad_scan.tpu-v5e.json")
    assert stored is not None
    text = stored.snapshot.texts["hlo"]
    # another compile of the same program: other names, a sharding annotation, backend_config keys in another order
    renamed = text.replace("%fusion", "%fusion_b").replace("HloModule jit_grad_scan", "HloModule jit_other")
    annotated = renamed.replace(" parameter(0)", " parameter(0), sharding={replicated}, frontend_attributes="
                                "{xla.sdy.sharding=\"#sdy.sharding<@empty_mesh, [{}, {}]>\"}", 1)
    reordered = annotated.replace('{"flag_configs":[],"scoped_memory_configs":[]',
                                  '{"scoped_memory_configs":[],"flag_configs":[]', 1)
    assert reordered != text and tool.canonical_hlo(reordered) == tool.canonical_hlo(text)
    # another program: an op or a layout changed
    assert tool.canonical_hlo(text.replace(" multiply(", " add(", 1)) != tool.canonical_hlo(text)
    assert tool.canonical_hlo(text.replace("S(1)", "", 1)) != tool.canonical_hlo(text)


def test_the_tool_measures_a_plan_and_joins_it_into_a_record(tmp_path: Path) -> None:
    """run and record, on the CPU of this machine (memory_stats() is empty there: no held bytes)."""
    from sphinx_jaxhlo.core.request import CompileRequest
    from sphinx_jaxhlo.core.specs import parse_args

    tool = _tool()
    source = "import jax.numpy as jnp\n\ndef f(x, n):\n    return jnp.sum(jnp.cos(x) * n)\n"
    request = CompileRequest(source=source, function="f", specs=parse_args("f32[64,32]"), target="cpu",
                             static=(("n", "3"),))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"target": "cpu", "examples": [
        {"slot": "x/f.json", "request": request.to_json(), "identity_sha256": "a" * 64,
         "facts": {"memory": {}, "error": None}}]}))
    part = tmp_path / "part.json"
    assert tool.run(plan, part, deadline=60, resume=[], only=None) == 0
    measured = json.loads(part.read_text())["measured"]
    assert len(measured) == 1 and measured[0]["memory_analysis"]["argument_size_in_bytes"] == 64 * 32 * 4
    assert measured[0]["warm_runs"] >= 3 and measured[0]["warm_ms"] > 0
    # resumed: nothing measured twice, and the part carries what was measured before
    again = tmp_path / "again.json"
    assert tool.run(plan, again, deadline=60, resume=[part], only=None) == 0
    assert json.loads(again.read_text())["measured"] == measured


def test_a_new_record_keeps_the_earlier_measurements_still_true_with_their_day(tmp_path: Path,
                                                                                record_data: dict) -> None:
    """``record --keep``: a session measures what changed or is new; the entries of the earlier
    record whose snapshot is unchanged stay, with the day they were measured, and one whose
    program changed since is dropped (measured again or left unmeasured, never shown as true)."""
    tool = _tool()
    first, second = record_data["examples"][:2]
    plan = {"target": "tpu:v5e", "examples": [{"slot": e["slot"], "identity_sha256": str(i) * 64}
                                              for i, e in enumerate((first, second))]}
    earlier = copy.deepcopy(record_data)
    earlier["examples"] = [dict(first), {**second, "program_sha256": "0" * 64}]
    keep = tmp_path / "earlier.json"
    keep.write_text(json.dumps(earlier))
    kept = tool._kept(keep, plan, measured=set())
    assert [e["slot"] for e in kept] == [first["slot"]]
    assert kept[0]["date"] == first.get("date", earlier["date"])
    assert tool._kept(keep, plan, measured={first["slot"]}) == []
    # plan --behind: what a session must measure, the new and the changed
    third = {"slot": "guide/new/example.f.tpu-v5e.json", "identity_sha256": "2" * 64}
    todo = tool.behind_record({**plan, "examples": [*plan["examples"], third]}, keep)
    assert [e["slot"] for e in todo["examples"]] == [second["slot"], third["slot"]]
    # the committed record: each entry says its day, the record's date is the latest
    record = read_record(RECORD)
    days = {record.measured_on(m) for m in record.measurements.values()}
    assert record.date == max(days) and all(len(d) == 10 for d in days)
