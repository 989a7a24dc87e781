"""Snapshots: the stored format, the three modes, stale snapshots and drift.

The unit tests use the stored real HLO of ``tests/data/hlo``; the build tests
run ``sphinx-build`` in fresh processes on copies of ``test-cache`` (three CPU
examples) and ``test-snapshots`` (the seed on cpu, gpu:h100 and tpu:v5e).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from sphinx_jaxhlo.core import targets
from sphinx_jaxhlo.core.report import Memory, Report
from sphinx_jaxhlo.core.request import CompileRequest
from sphinx_jaxhlo.core.specs import parse_args
from sphinx_jaxhlo.hlo.fusion import analyze_module
from sphinx_jaxhlo.store import snapshots
from sphinx_jaxhlo.store.drift import compare

ROOTS = Path(__file__).parent / "roots"
HLO = Path(__file__).parent / "data" / "hlo"

#: Runs a build; with JAXHLO_TEST_NO_JAX set, jax and the compilers cannot be
#: imported or found (as on a docs host that has none of them).
BUILD = """
import json, os, sys
if os.environ.get("JAXHLO_TEST_NO_JAX"):
    import importlib.abc
    BLOCKED = {"jax", "jaxlib", "libtpu", "jax_cuda12_plugin", "jax_cuda12_pjrt"}
    class NoJax(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)")
            return None
    sys.meta_path.insert(0, NoJax())
from sphinx.cmd.build import build_main
rc = build_main(sys.argv[1:])
print("JAXHLO-RESULT " + json.dumps({"rc": rc, "jax_imported": "jax" in sys.modules}))
"""


def build(src: Path, out: Path, *args: str, env: dict[str, str] | None = None,
          no_jax: Path | None = None) -> tuple[dict[str, object], str]:
    """Build ``src`` into ``out`` (doctrees and cache beside it) in a fresh process.

    :param no_jax: a folder to put first on the workers' path, holding
        packages named jax, jaxlib... that refuse to be imported.
    """
    environ = {**os.environ, **(env or {})}
    if no_jax is not None:
        for name in ("jax", "jaxlib", "libtpu", "jax_cuda12_plugin"):
            (no_jax / name).mkdir(parents=True, exist_ok=True)
            (no_jax / name / "__init__.py").write_text("raise ImportError('jax is not installed here')\n")
        environ["JAXHLO_TEST_NO_JAX"] = "1"
        environ["PYTHONPATH"] = os.pathsep.join([str(no_jax), environ.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-c", BUILD, "-b", "html", "-d", str(out.parent / (out.name + "-doctrees")),
           *args, str(src), str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=environ)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("JAXHLO-RESULT ")]
    assert lines, proc.stdout + proc.stderr
    return json.loads(lines[0].removeprefix("JAXHLO-RESULT ")), proc.stdout + proc.stderr


def summary(log: str) -> dict[str, int]:
    m = re.search(r"jax-hlo: (\d+) compiled, (\d+) from cache(?:, (\d+) from snapshots)?, (\d+) failed", log)
    assert m, log
    return {"compiled": int(m.group(1)), "cache": int(m.group(2)), "snapshots": int(m.group(3) or 0),
            "failed": int(m.group(4))}


def warnings(log: str) -> list[str]:
    return [ln for ln in log.splitlines() if "WARNING" in ln]


# -- the format ------------------------------------------------------------------

def stored_report(stem: str) -> Report:
    """A report as the worker makes it, from stored compiler output."""
    facts = json.loads((HLO / f"{stem}.json").read_text())
    hlo = (HLO / f"{stem}.txt").read_text()
    analysis = analyze_module(hlo, "example.py")
    memory = Memory(**facts["memory"])
    memory.settle(facts["target"])  # as the worker does (core.report's peak rule)
    return Report(function=facts["function"], target=facts["target"], versions={"jax": "0.10.2", "jaxlib": "0.10.2"},
                  memory=memory, hlo=hlo, source=facts["source"],
                  fusions=analysis.fusions, materialized=analysis.materialized, reductions=analysis.reductions)


def request(source: str = "def f(x):\n    return x\n", target: str = "gpu:h100") -> CompileRequest:
    return CompileRequest(source=source, function="f", specs=parse_args("f32[100000,3], f32[50000,3]"),
                          target=target, target_fingerprint="fp", versions=(("jax", "0.10.2"), ("jaxlib", "0.10.2")))


@pytest.mark.parametrize("stem", ["gpu_h100__with_dot", "tpu_v5e__explicit", "cpu__scan_chunks"])
def test_a_snapshot_stores_facts_and_gives_back_the_same_report(tmp_path: Path, stem: str) -> None:
    report = stored_report(stem)
    report.memory.settle(report.target)  # the stored figures predate the CPU's peak rule; a report made now has it
    req = request(report.source, report.target)
    tools = snapshots.toolchain({"jax": "0.10.2", "jaxlib": "0.10.2", "libtpu": "0.0.42",
                                 "jax-cuda12-plugin": "0.10.2"}, report.target)
    snap = snapshots.Snapshot.from_report(report, snapshots.identity(req), tools)
    slot = tmp_path / "doc" / "seed.f.target.json"
    assert snapshots.write(slot, snap, report)
    doc = json.loads(slot.read_text())
    # the JSON holds what the compiler said and what it was asked, never derived fields or the HLO
    assert set(doc) == {"snapshot", "identity", "toolchain", "facts", "texts", "summary"}
    assert not {"fusions", "materialized", "reductions", "hlo", "source"} & set(doc["facts"])
    assert doc["facts"]["memory"]["temp_bytes"] == report.memory.temp_bytes
    assert doc["identity"]["args"] == "f32[100000,3], f32[50000,3]"
    kind = report.target.partition(":")[0]
    compilers = {"gpu": {"jax-cuda12-plugin"}, "tpu": {"libtpu"}, "cpu": set()}[kind]
    assert set(doc["toolchain"]) == {"jax", "jaxlib", *compilers}
    # the HLO is beside it, compressed; the JSON is small and sorted, one key per line
    assert gzip.decompress((slot.parent / "seed.f.target.hlo.gz").read_bytes()).decode() == report.hlo
    assert slot.stat().st_size < 3000 and slot.read_text() == json.dumps(doc, sort_keys=True, indent=1) + "\n"
    # read back: the analysis is derived again from the stored HLO, to the same result
    stored = snapshots.read(slot)
    assert stored is not None
    again = stored.snapshot.report(report.source, "example.py")
    assert again.fusions == report.fusions and again.reductions == report.reductions
    assert again.materialized == report.materialized and again.memory == report.memory
    assert again.hlo == report.hlo and again.versions == tools


def test_writing_the_same_snapshot_again_changes_no_byte(tmp_path: Path) -> None:
    report = stored_report("gpu_h100__with_dot")
    snap = snapshots.Snapshot.from_report(report, snapshots.identity(request(report.source)), {"jax": "0.10.2"})
    slot = tmp_path / "a.f.gpu-h100.json"
    assert snapshots.write(slot, snap, report)
    files = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()}
    assert not snapshots.write(slot, snap, report)
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()} == files
    # the compressed HLO is the same bytes whenever it is written (no timestamp in it)
    (tmp_path / "a.f.gpu-h100.hlo.gz").unlink()
    assert snapshots.write(slot, snap, report)
    assert (tmp_path / "a.f.gpu-h100.hlo.gz").read_bytes() == files["a.f.gpu-h100.hlo.gz"][0]
    assert oct(slot.stat().st_mode & 0o044) != "0o0"  # committed files: readable by the group and others


def test_the_order_of_decision_records_is_no_difference(tmp_path: Path) -> None:
    """XLA writes the GPU's decision records in another order at each compile; a
    snapshot written before they were put in one order is not out of date for that."""
    import dataclasses

    from sphinx_jaxhlo.core.report import FusionDecision
    from sphinx_jaxhlo.hlo.decisions.collect import canonical_order

    report = stored_report("cpu__explicit")
    decisions = [FusionDecision("priority-fusion", "xla/...", "producer-ineligible", name, [], "the producer is not "
                                "fusible") for name in ("b.1", "a.2", "c.3")]
    assert [d.producer for d in canonical_order(decisions)] == ["a.2", "b.1", "c.3"]
    ident = snapshots.identity(request(report.source, "cpu"))
    slot = tmp_path / "a.f.cpu.json"
    snapshots.write(slot, snapshots.Snapshot.from_report(dataclasses.replace(report, fusion_decisions=decisions),
                                                         ident, {"jax": "1"}), report)
    stored = snapshots.read(slot)
    assert stored is not None
    fresh_report = dataclasses.replace(report, fusion_decisions=canonical_order(decisions))
    fresh = snapshots.Snapshot.from_report(fresh_report, ident, {"jax": "1"})
    assert snapshots.differences(stored, fresh, fresh_report) == []
    fewer = dataclasses.replace(report, fusion_decisions=decisions[:2])
    assert snapshots.differences(stored, snapshots.Snapshot.from_report(fewer, ident, {"jax": "1"}), fewer) != []


def test_analysis_fields_are_never_trusted_from_the_file(tmp_path: Path) -> None:
    report = stored_report("gpu_h100__with_dot")
    snap = snapshots.Snapshot.from_report(report, snapshots.identity(request(report.source)), {"jax": "0.10.2"})
    slot = tmp_path / "a.f.gpu-h100.json"
    snapshots.write(slot, snap, report)
    doc = json.loads(slot.read_text())
    # fields this version does not know (an older or newer report) are dropped, derived ones ignored
    doc["facts"]["reductions"] = [{"name": "fake"}]
    doc["facts"]["a_field_from_the_future"] = 1
    doc["facts"]["memory"]["a_figure_from_the_future"] = 2
    slot.write_text(json.dumps(doc))
    stored = snapshots.read(slot)
    assert stored is not None
    again = stored.snapshot.report(report.source, "example.py")
    assert again.reductions == report.reductions and again.memory == report.memory


@pytest.mark.parametrize("damage", ["not json", "wrong format", "texts altered", "texts missing", "bad types"])
def test_a_damaged_snapshot_is_refused_with_a_reason(tmp_path: Path, damage: str) -> None:
    from sphinx_jaxhlo.store.cache import InvalidReport

    report = stored_report("cpu__explicit")
    snap = snapshots.Snapshot.from_report(report, snapshots.identity(request(report.source, "cpu")), {"jax": "1"})
    slot = tmp_path / "a.f.cpu.json"
    snapshots.write(slot, snap, report)
    doc = json.loads(slot.read_text())
    gz = tmp_path / "a.f.cpu.hlo.gz"
    if damage == "not json":
        slot.write_text("<<<<<<< HEAD\n" + slot.read_text())
    elif damage == "wrong format":
        doc["snapshot"] = 99
        slot.write_text(json.dumps(doc))
    elif damage == "texts altered":
        gz.write_bytes(gzip.compress(b"HloModule evil"))
    elif damage == "texts missing":
        gz.unlink()
    else:
        doc["facts"]["memory"]["temp_bytes"] = "<b>20 GB</b>"
        slot.write_text(json.dumps(doc))
    if damage == "bad types":
        stored = snapshots.read(slot)
        assert stored is not None
        with pytest.raises(InvalidReport, match="temp_bytes"):
            stored.snapshot.report(report.source, "example.py")
    else:
        with pytest.raises(snapshots.SnapshotError):
            snapshots.read(slot)


def _put_back(path: Path, data: bytes, times: os.stat_result) -> None:
    """``cp -p`` of a file of the same size over ``path``: same inode, size and times, other bytes."""
    path.write_bytes(data)
    os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))


def test_a_slot_changed_with_its_times_put_back_is_noticed(tmp_path: Path) -> None:
    """The stamp a build keeps of a slot: untouched files cost a stat; files rewritten with their
    old times (``cp -p``, ``touch -d``) are read again, and the content decides."""
    from sphinx_jaxhlo.store import analyses

    report = stored_report("cpu__explicit")
    snap = snapshots.Snapshot.from_report(report, snapshots.identity(request(report.source, "cpu")), {"jax": "1"})
    slot = tmp_path / "a.f.cpu.json"
    snapshots.write(slot, snap, report)
    analyses.forget()
    kept = analyses.stamp(slot)
    assert kept.digest == snapshots.read(slot).digest  # type: ignore[union-attr]
    assert snapshots.recheck(slot, kept) is kept  # untouched: the same stamp
    times, good = slot.stat(), slot.read_bytes()
    # the same bytes written again with the old times: read again, same content, a new state kept
    _put_back(slot, good, times)
    again = snapshots.recheck(slot, kept)
    assert again is not None and again is not kept and again.digest == kept.digest
    # other bytes of the same size, the old times and inode: changed, by content
    other = good.replace(b'"temp_bytes": ', b'"temp_bytes":  ', 1).replace(b"\n}", b"}", 1)
    assert len(other) == len(good) and other != good
    _put_back(slot, other, times)
    assert (slot.stat().st_ino, slot.stat().st_size, slot.stat().st_mtime_ns) == \
        (times.st_ino, times.st_size, times.st_mtime_ns)
    assert snapshots.recheck(slot, kept) is None
    # the process's own copy is not served for it either (inode, size and mtime alike)
    assert analyses.read(slot).text == other.decode()  # type: ignore[union-attr]
    # a slot this process read, then wrote (a refreshing build): the stamp is of what it holds now
    snapshots.write(slot, snap, report)  # the first bytes again, as a refreshing build writes them
    assert slot.read_bytes() == good
    assert analyses.stamp(slot).digest == kept.digest  # not that of the copy it read before the write
    # a slot that was empty or damaged: changed as soon as its files move
    empty = snapshots.SlotStamp(snapshots.file_state(tmp_path / "b.f.cpu.json"), None)
    assert snapshots.recheck(tmp_path / "b.f.cpu.json", empty) is empty
    shutil.copy(slot, tmp_path / "b.f.cpu.json")
    assert snapshots.recheck(tmp_path / "b.f.cpu.json", empty) is None


def test_identity_changes_say_what_changed() -> None:
    a = snapshots.identity(request())
    b = snapshots.identity(CompileRequest(source="def f(x):\n    return x + 1\n", function="f",
                                          specs=parse_args("f32[4]"), target="gpu:h100", target_fingerprint="fp"))
    assert snapshots.identity_changes(a, b) == ["the example's source",
                                                ":args: 'f32[100000,3], f32[50000,3]' -> 'f32[4]'"]
    assert snapshots.identity_changes(a, a) == []
    # the toolchain is not part of what a snapshot answers
    assert snapshots.identity(request()) == snapshots.identity(
        CompileRequest(**{**request().__dict__, "versions": (("jax", "0.11.0"),)}))


def test_prune_removes_only_slots_no_example_has(tmp_path: Path) -> None:
    for name in ("a.f.cpu.json", "a.f.cpu.hlo.gz", "b.f.cpu.json", "b.f.cpu.hlo.gz", "b.f.cpu.jaxpr.gz",
                 "notes.txt", "x.tar.gz"):
        (tmp_path / name).write_text("x")
    (tmp_path / "sub").mkdir()
    removed = snapshots.prune(tmp_path, {"a.f.cpu"})
    assert sorted(p.name for p in removed) == ["b.f.cpu.hlo.gz", "b.f.cpu.jaxpr.gz", "b.f.cpu.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.f.cpu.hlo.gz", "a.f.cpu.json", "notes.txt", "sub",
                                                          "x.tar.gz"]


def test_drift_compares_temp_peak_and_verdict() -> None:
    after = stored_report("gpu_h100__with_dot")
    before = stored_report("gpu_h100__explicit")
    old, new = {"jax": "0.10.1", "jaxlib": "0.10.1"}, {"jax": "0.10.2", "jaxlib": "0.10.2"}
    drift = compare(before, after, old, new, 0.05)
    assert drift is not None and drift.significant
    assert (drift.verdict_before, drift.verdict_after) == ("fused", "unfused")
    assert drift.message == ("f on gpu:h100 changed since jax 0.10.1, jaxlib 0.10.1 (now jax 0.10.2, jaxlib "
                             "0.10.2): temp 50.4 MB -> 20.1 GB; device memory 52.4 MB -> 20.1 GB; "
                             "peak 52.4 MB -> 20.1 GB; reductions fused -> unfused")
    # same figures, another toolchain: a row for the table, no warning
    same = compare(after, after, old, new, 0.05)
    assert same is not None and not same.significant
    assert compare(after, after, new, new, 0.05) is None
    # temp within the tolerance: not significant; beyond it: significant
    moved = stored_report("gpu_h100__with_dot")
    moved.memory.temp_bytes = round(after.memory.temp_bytes * 1.04)
    drift = compare(after, moved, new, new, 0.05)
    assert drift is not None and not drift.significant
    drift = compare(after, moved, new, new, 0.01)
    assert drift is not None and drift.significant


# -- the modes, on CPU examples ----------------------------------------------------

@pytest.fixture
def project(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(ROOTS / "test-cache", src)
    with (src / "conf.py").open("a") as f:
        f.write('jaxhlo_snapshot_dir = "_snapshots"\n')
    return src


def mode(name: str) -> dict[str, str]:
    return {"JAXHLO_SNAPSHOT_MODE": name}


def test_update_writes_one_snapshot_per_example_and_target_and_reuses_them(project: Path, tmp_path: Path) -> None:
    result, log = build(project, tmp_path / "out1")
    assert result["rc"] == 0 and summary(log)["compiled"] == 3, log
    files = sorted(str(p.relative_to(project / "_snapshots")) for p in (project / "_snapshots").rglob("*"))
    slots = ["index/example-1.default.cpu", "index/example-2.default.cpu", "other/example-1.default.cpu"]
    assert files == sorted(["index", "other", *(f"{slot}.{kind}" for slot in slots
                                                for kind in ("buffer_assignment.gz", "hlo.gz", "json"))])
    # a fresh build with no cache: every report from its snapshot, nothing compiled
    result, log = build(project, tmp_path / "out2", "-D", f"jaxhlo_cache_dir={tmp_path / 'empty-cache'}")
    assert summary(log) == {"compiled": 0, "cache": 0, "snapshots": 3, "failed": 0}, log
    assert result["jax_imported"] is False
    pages = [(tmp_path / out / "index.html").read_text() for out in ("out1", "out2")]
    assert pages[0] == pages[1]
    # an example removed from a document: its snapshot goes too
    index = project / "index.rst"
    index.write_text(index.read_text().split(".. jax-hlo:: examples/second.py")[0])
    build(project, tmp_path / "out1")
    assert not list((project / "_snapshots" / "index").glob("example-2.*"))
    assert list((project / "_snapshots" / "index").glob("example-1.*"))


def test_use_mode_warns_at_an_edited_example_and_never_shows_a_stale_figure(project: Path, tmp_path: Path) -> None:
    build(project, tmp_path / "out")
    index = project / "index.rst"
    text = index.read_text()
    line = text.splitlines().index(".. jax-hlo::") + 1
    index.write_text(text.replace("jnp.cos(a @ b)", "jnp.sin(a @ b)"))
    result, log = build(project, tmp_path / "out", "-W", env=mode("use"))
    assert result["rc"] == 1
    ws = warnings(log)
    assert len(ws) == 1, log
    assert re.search(rf"index\.rst:{line}: WARNING: jax-hlo: first on cpu: the snapshot "
                     r"_snapshots/index/example-1\.default\.cpu\.json was made for another version of this example "
                     r"\(the example's source changed\) and is not shown; make one with JAXHLO_SNAPSHOT_MODE=update "
                     r"\[jaxhlo\.snapshot\]", ws[0]), ws[0]
    soup = BeautifulSoup((tmp_path / "out" / "index.html").read_text(), "html.parser")
    first = soup.select("div.jaxhlo")[0]
    assert "was made for another version of this example" in first.get_text()
    assert "Memory" not in first.get_text() and "HloModule" not in first.get_text()
    assert summary(log) == {"compiled": 0, "cache": 0, "snapshots": 2, "failed": 1}
    # a second build that reads nothing again says it again
    result, log = build(project, tmp_path / "out", "-W", env=mode("use"))
    assert result["rc"] == 1 and warnings(log) == ws, log


def test_a_damaged_snapshot_folder_gives_one_true_warning(project: Path, tmp_path: Path) -> None:
    """A document's snapshot folder that became a file (a bad merge): the example
    compiles, and one warning says that nothing could be read or written, not
    that the snapshot was rewritten."""
    build(project, tmp_path / "out")
    folder = project / "_snapshots" / "other"
    shutil.rmtree(folder)
    folder.write_text("<<<<<<< HEAD\n")
    result, log = build(project, tmp_path / "out", "-E")
    ws = warnings(log)
    assert result["rc"] == 0 and len(ws) == 1, log
    assert re.search(r"other\.rst:4: WARNING: jax-hlo: third on cpu: the snapshot _snapshots/other/example-1\.default"
                     r"\.cpu\.json cannot be used: cannot read it: its folder 'other' is a file, not a folder \(move "
                     r"that file away\); taken from the cache, but the snapshot cannot be written for the same reason "
                     r"\[jaxhlo\.snapshot\]", ws[0]), ws[0]
    assert summary(log)["failed"] == 0 and folder.read_text() == "<<<<<<< HEAD\n"
    folder.unlink()
    result, log = build(project, tmp_path / "out", "-W")
    assert result["rc"] == 0 and warnings(log) == [], log
    assert sorted(p.name for p in folder.iterdir()) == ["example-1.default.cpu.buffer_assignment.gz",
                                                       "example-1.default.cpu.hlo.gz", "example-1.default.cpu.json"]


def test_a_snapshot_folder_put_back_by_any_means_is_noticed(project: Path, tmp_path: Path) -> None:
    """A snapshot folder damaged, then put back from a backup whose files are older than the
    build that saw the damage (``mv``, ``cp -p`` over the damaged file, a write and ``touch``
    to the old time): the document is read again each time (Sphinx's check of a dependency, by
    its modification time, would keep the page and its warning)."""
    build(project, tmp_path / "out")
    folder = project / "_snapshots" / "other"
    slot = folder / "example-1.default.cpu.json"
    backup = tmp_path / "backup"
    shutil.copytree(folder, backup)  # with the files' times, as cp -a or an archive keeps them
    good = slot.read_text()
    for restore in ("mv", "cp -p", "touch"):
        slot.write_text("<<<<<<< HEAD\n" + good)
        result, log = build(project, tmp_path / "out", env=mode("use"))
        (warning,) = warnings(log)
        assert "cannot be used: not JSON" in warning and "third on cpu" in warning, (restore, log)
        if restore == "mv":
            shutil.rmtree(folder)
            shutil.copytree(backup, tmp_path / "kept")
            subprocess.run(["mv", str(tmp_path / "kept"), str(folder)], check=True)
        elif restore == "cp -p":  # over the damaged file: its inode kept
            subprocess.run(["cp", "-p", str(backup / slot.name), str(slot)], check=True)
        else:
            slot.write_text(good)
            subprocess.run(["touch", "-r", str(backup / slot.name), str(slot)], check=True)
        assert slot.stat().st_mtime_ns < (tmp_path / "out" / "other.html").stat().st_mtime_ns
        result, log = build(project, tmp_path / "out", "-W", env=mode("use"))
        assert result["rc"] == 0 and warnings(log) == [], (restore, log)
        page = BeautifulSoup((tmp_path / "out" / "other.html").read_text(), "html.parser").get_text()
        assert "cannot be used" not in page and "Memory" in page, restore

def test_check_mode_passes_on_fresh_snapshots_and_reports_edits_as_drift(project: Path, tmp_path: Path) -> None:
    build(project, tmp_path / "out")
    result, log = build(project, tmp_path / "check", "-W", "-E", env=mode("check"))
    assert result["rc"] == 0 and warnings(log) == [], log  # compiles are reproducible: nothing differs
    slot = project / "_snapshots" / "other" / "example-1.default.cpu.json"
    doc = json.loads(slot.read_text())
    temp = doc["facts"]["memory"]["temp_bytes"]
    doc["facts"]["memory"]["temp_bytes"] = 5_000_000_000
    slot.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    before = slot.read_bytes()
    result, log = build(project, tmp_path / "check", "-W", env=mode("check"))
    assert result["rc"] == 1
    ws = warnings(log)
    assert len(ws) == 2, log
    assert re.search(r"other\.rst:4: WARNING: jax-hlo: third on cpu changed since the stored report \(jax [^)]*\): "
                     rf"temp 5\.0 GB -> {temp} B.*\[jaxhlo\.drift\]", log), log
    assert re.search(r"other\.rst:4: WARNING: jax-hlo: third on cpu: the snapshot _snapshots/other/example-1\.default"
                     rf"\.cpu\.json is out of date: memory\.temp_bytes 5000000000 -> {temp}; refresh it with "
                     r"JAXHLO_SNAPSHOT_MODE=refresh \[jaxhlo\.snapshot\]", log), log
    assert slot.read_bytes() == before  # check mode writes nothing
    # update mode keeps what this toolchain stored; refresh mode rewrites it, and check passes again
    build(project, tmp_path / "check", env=mode("update"))
    assert json.loads(slot.read_text())["facts"]["memory"]["temp_bytes"] == 5_000_000_000
    build(project, tmp_path / "check", env=mode("refresh"))
    assert json.loads(slot.read_text())["facts"]["memory"]["temp_bytes"] == temp
    result, log = build(project, tmp_path / "check", "-W", env=mode("check"))
    assert result["rc"] == 0 and warnings(log) == [], log


GPU_DECISIONS = """Decisions
=========

.. jax-hlo::
   :args: f32[512,256], f32[256,1024]
   :targets: gpu:h100

   import jax.numpy as jnp

   def f(h, w):
       logits = h @ w
       return jnp.sum(jnp.cos(logits), axis=1) + jnp.max(jnp.exp(logits), axis=0).sum()
"""


@pytest.mark.skipif(not targets.TARGETS["gpu:h100"].available(), reason="the GPU compiler is not installed")
def test_the_same_toolchain_writes_the_same_bytes(tmp_path: Path) -> None:
    """Snapshots written twice, each from its own compile (no cache), are byte-identical,
    for a GPU example whose priority-fusion records XLA writes in a different order each
    time; refreshing them changes nothing and check mode passes on them."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_snapshot_dir = "_snapshots"\n'
                                 "jaxhlo_cache = False\n")
    (src / "index.rst").write_text(GPU_DECISIONS)

    def files() -> dict[str, bytes]:
        return {str(p.relative_to(src)): p.read_bytes() for p in sorted((src / "_snapshots").rglob("*.*"))}

    result, log = build(src, tmp_path / "out", "-E", env=mode("refresh"))
    assert result["rc"] == 0 and summary(log)["compiled"] == 1, log
    first = files()
    decisions = json.loads(first["_snapshots/index/example-1.default.gpu-h100.json"])["facts"]["fusion_decisions"]
    assert len(decisions) >= 3  # an order to get wrong
    for _ in range(2):
        result, log = build(src, tmp_path / "out", "-E", env=mode("refresh"))
        assert result["rc"] == 0 and summary(log)["compiled"] == 1 and files() == first, log
    result, log = build(src, tmp_path / "out", "-E", "-W", env=mode("check"))
    assert result["rc"] == 0 and warnings(log) == [], log


def test_a_toolchain_change_is_drift_in_update_mode_and_on_the_report_page(project: Path, tmp_path: Path) -> None:
    (project / "other.rst").write_text((project / "other.rst").read_text() + "\nReport\n------\n\n"
                                       ".. jax-hlo-report::\n")
    build(project, tmp_path / "out")
    slot = project / "_snapshots" / "index" / "example-1.default.cpu.json"
    doc = json.loads(slot.read_text())
    temp = doc["facts"]["memory"]["temp_bytes"]
    # as if an older jax had made it, with another temp
    doc["toolchain"] = {"jax": "0.9.0", "jaxlib": "0.9.0"}
    doc["facts"]["memory"]["temp_bytes"] = temp * 3
    slot.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    result, log = build(project, tmp_path / "out", "-W")
    assert result["rc"] == 1
    assert summary(log)["compiled"] + summary(log)["cache"] == 1, log
    assert re.search(r"index\.rst:\d+: WARNING: jax-hlo: first on cpu changed since jax 0\.9\.0, jaxlib 0\.9\.0 "
                     rf"\(now jax [0-9.]+, jaxlib [0-9.]+\): temp {temp * 3 / 1000:.1f} kB -> {temp} B", log), log
    # the snapshot was refreshed by the new toolchain
    assert json.loads(slot.read_text())["toolchain"]["jax"] != "0.9.0"
    soup = BeautifulSoup((tmp_path / "out" / "other.html").read_text(), "html.parser")
    drift = soup.select_one("table.jaxhlo-drift")
    assert drift is not None
    rows = [[td.get_text(strip=True) for td in tr.find_all("td")] for tr in drift.select("tbody tr")]
    assert len(rows) == 1 and rows[0][:5] == ["index", rows[0][1], "first", "cpu", "jax 0.9.0, jaxlib 0.9.0"]
    assert rows[0][6:8] == [f"{temp * 3 / 1000:.1f} kB", f"{temp} B"] and rows[0][-1] == "warned"
    # the new baseline is stored: the next build has nothing to say
    result, log = build(project, tmp_path / "out", "-W", "-E")
    assert result["rc"] == 0 and warnings(log) == [], log


# -- the seed on three targets, from snapshots alone --------------------------------

@pytest.mark.slow
@pytest.mark.skipif(
    not (targets.get_target("gpu:h100").available() and targets.get_target("tpu:v5e").available()),
    reason="needs the GPU and TPU compilers (CI installs them)")
def test_a_docs_host_without_jax_renders_the_seed_from_snapshots(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(ROOTS / "test-snapshots", src)
    result, log = build(src, tmp_path / "compiled", "-W")
    assert result["rc"] == 0, log
    assert summary(log)["compiled"] == 6, log
    # a fresh checkout (the committed snapshots only) on a host where jax cannot be imported
    host = tmp_path / "host"
    shutil.copytree(src, host, ignore=shutil.ignore_patterns("_build*", "jaxhlo-cache"))
    result, log = build(host, tmp_path / "from-snapshots", "-W", env=mode("use"), no_jax=tmp_path / "stubs")
    assert result["rc"] == 0, log
    assert result["jax_imported"] is False
    assert summary(log) == {"compiled": 0, "cache": 0, "snapshots": 6, "failed": 0}, log
    compiled = BeautifulSoup((tmp_path / "compiled" / "index.html").read_text(), "html.parser")
    stored = BeautifulSoup((tmp_path / "from-snapshots" / "index.html").read_text(), "html.parser")
    a, b = compiled.select_one("div.jaxhlo"), stored.select_one("div.jaxhlo")
    assert a is not None and str(a) == str(b)
    # every target is there, with the versions that made it
    text = b.get_text()
    assert "20.1 GB, unfused" in text and "50.4 MB, fused" in text
    assert re.search(r"Compiled for CPU, H100, TPU v5e with jax 0\.\d+\.\d+, jax-cuda12-pjrt .*libtpu", text)


@pytest.mark.parametrize("slot", ["index/jaxhlo-home-seed.explicit.gpu-h100.json",
                                  "index/jaxhlo-home-seed.explicit.tpu-v5e.json"])
def test_a_snapshot_and_the_same_module_saved_are_analysed_by_one_filler(slot: str) -> None:
    """A snapshot read again and ``analyze_hlo`` of its module fill the same analysis
    (hlo.report_analysis), as the compile did: the findings a page shows are the saved module's."""
    from sphinx_jaxhlo import analyze_hlo

    stored = snapshots.read(Path(__file__).resolve().parent.parent / "docs" / "_snapshots" / slot)
    assert stored is not None
    source_name = str(stored.snapshot.identity["source_name"])
    report = stored.snapshot.report("", source_name)
    (saved,) = analyze_hlo(report.hlo, source_name, target=report.target)
    assert report.fusions and report.reductions
    for field in ("fusions", "materialized", "reductions", "argument_copies", "host_buffers", "collectives"):
        assert getattr(saved, field) == getattr(report, field), field
    # what only a compile has: its decision records and buffer assignment, memory figures
    assert saved.live_at_peak is None and saved.memory.temp_bytes is None
    with pytest.raises(ValueError, match="not an HLO module"):
        analyze_hlo("nothing here")
