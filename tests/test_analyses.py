"""Each snapshot read and analysed once (``sphinx_jaxhlo/store/analyses.py``):
per process, and through the cache for later builds, with the same reports
whichever way they come; and a rebuild from snapshots that analyses each
snapshot once, then nothing while nothing changes (also with ``-j``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_snapshots import request, stored_report, summary

from sphinx_jaxhlo.store import analyses, snapshots
from sphinx_jaxhlo.store.cache import ReportCache
from sphinx_jaxhlo.store.releases import compare_folders


@pytest.fixture(autouse=True)
def fresh_process() -> None:
    """Each test starts as a new process would: nothing read or analysed yet."""
    analyses.forget()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The analyses made (each call of the analysis of a stored report)."""
    calls: list[str] = []
    real = snapshots.reanalyze

    def counting(report: object, source_name: str, **kwargs: bool) -> None:
        calls.append(getattr(report, "target", ""))
        real(report, source_name, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(snapshots, "reanalyze", counting)
    return calls


def write_slot(folder: Path, stem: str, name: str = "ex.f") -> Path:
    report = stored_report(stem)
    snap = snapshots.Snapshot.from_report(report, snapshots.identity(request(report.source, report.target)),
                                          {"jax": "0.10.2", "jaxlib": "0.10.2"})
    slot = folder / f"{name}.{report.target.replace(':', '-')}.json"
    snapshots.write(slot, snap, report)
    return slot


def test_a_slot_is_read_once_while_its_files_stay_the_same(tmp_path: Path) -> None:
    slot = write_slot(tmp_path, "cpu__with_dot")
    first = analyses.read(slot)
    assert first is not None and analyses.read(slot) is first
    # rewritten (a new file, as every write is): read again
    doc = json.loads(slot.read_text())
    doc["summary"]["temp"] = "edited"
    slot.write_text(json.dumps(doc, sort_keys=True, indent=1) + "\n")
    again = analyses.read(slot)
    assert again is not None and again is not first and again.text != first.text
    # its text damaged: refused, as snapshots.read refuses it, every time
    hlo = slot.with_name(slot.name.replace(".json", ".hlo.gz"))
    hlo.write_bytes(b"not gzip")
    for _ in range(2):
        with pytest.raises(snapshots.SnapshotError):
            analyses.read(slot)
    slot.unlink()
    assert analyses.read(slot) is None


@pytest.mark.parametrize("stem", ["gpu_h100__with_dot", "tpu_v5e__explicit", "cpu__scan_chunks"])
def test_a_snapshot_is_analysed_once_and_gives_the_same_report_every_way(
        tmp_path: Path, counted: list[str], stem: str) -> None:
    stored = snapshots.read(write_slot(tmp_path / "doc", stem))
    assert stored is not None
    source = stored_report(stem).source
    plain = stored.snapshot.report(source, "example.py")  # no cache at all
    assert len(counted) == 1
    cache = ReportCache(tmp_path / "cache")
    made, current = analyses.report(stored, source, "example.py", cache)
    assert len(counted) == 2 and current
    in_memory, _ = analyses.report(stored, source, "example.py", cache)
    analyses.forget()  # a later build: a new process, the same cache
    from_cache, _ = analyses.report(stored, source, "example.py", cache)
    assert len(counted) == 2, "analysed again"
    for report in (made, in_memory, from_cache):
        assert report.to_dict() == plain.to_dict()
    assert in_memory is not made and from_cache is not made  # each caller its own object
    assert list((tmp_path / "cache" / "analyses").rglob("*.analysis"))
    # another file name matches other source lines: another analysis
    analyses.report(stored, source, "other.py", cache)
    assert len(counted) == 3


@pytest.mark.parametrize("stem", ["gpu_h100__with_dot", "cpu__scan_chunks"])
def test_without_a_cache_a_process_analyses_once_and_judges_the_json_only_when_asked(
        tmp_path: Path, counted: list[str], stem: str, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = snapshots.read(write_slot(tmp_path, stem))
    assert stored is not None
    source = stored_report(stem).source
    plain = stored.snapshot.report(source, "example.py")
    judged: list[bool] = []
    real_document = snapshots.Snapshot.document

    def document(self: snapshots.Snapshot, report: object) -> str:
        judged.append(True)
        return real_document(self, report)  # type: ignore[arg-type]

    monkeypatch.setattr(snapshots.Snapshot, "document", document)
    # a build that only reads its snapshots (use, check): the JSON is not written again to compare
    first, current = analyses.report(stored, source, "example.py", judge=False)
    assert current is None and not judged and len(counted) == 2
    # the page's report is its own: a caller changing it changes no later one
    first.fusions.clear()
    again, current = analyses.report(stored, source, "example.py", judge=False)
    assert current is None and not judged
    # a writing build asks: judged once, from what was kept, without analysing again
    judged_report, current = analyses.report(stored, source, "example.py")
    assert current is True and len(judged) == 1
    assert analyses.report(stored, source, "example.py")[1] is True and len(judged) == 1
    assert len(counted) == 2, "analysed again"
    for report in (again, judged_report):
        assert report.to_dict() == plain.to_dict() and report is not first
    assert plain.fusions and not first.fusions


def test_the_analysis_code_and_the_snapshot_are_in_the_key(tmp_path: Path, counted: list[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    slot = write_slot(tmp_path, "cpu__with_dot")
    cache = ReportCache(tmp_path / "cache")
    stored = analyses.read(slot)
    assert stored is not None
    analyses.report(stored, "", "example.py", cache)
    assert len(counted) == 1
    analyses.forget()
    monkeypatch.setattr(analyses, "analysis_fingerprint", lambda: "another version of the analysis")
    analyses.report(stored, "", "example.py", cache)
    assert len(counted) == 2
    # the same code and another snapshot (another figure the compiler gave)
    doc = json.loads(slot.read_text())
    doc["facts"]["memory"]["temp_bytes"] += 1
    doc["summary"]["reductions"] = "a verdict an older analysis gave"
    slot.write_text(json.dumps(doc, sort_keys=True, indent=1) + "\n")
    changed = analyses.read(slot)
    assert changed is not None
    report, current = analyses.report(changed, "", "example.py", cache)
    assert len(counted) == 3 and report.memory.temp_bytes == stored_report("cpu__with_dot").memory.temp_bytes + 1
    assert not current  # its summary is not what this version writes (a writing build rewrites it)


@pytest.mark.parametrize("damage", ["not json", "wrong types", "a field missing"])
def test_a_damaged_cache_entry_is_analysed_again(tmp_path: Path, counted: list[str], damage: str) -> None:
    stored = analyses.read(write_slot(tmp_path, "gpu_h100__with_dot"))
    assert stored is not None
    cache = ReportCache(tmp_path / "cache")
    expected, _ = analyses.report(stored, "", "example.py", cache)
    (entry,) = (tmp_path / "cache" / "analyses").rglob("*.analysis")
    doc = json.loads(entry.read_text())
    if damage == "not json":
        entry.write_text("{")
    elif damage == "wrong types":
        doc["fields"]["reductions"] = [{"name": 5}]
        entry.write_text(json.dumps(doc))
    else:
        del doc["fields"]["fusions"]
        entry.write_text(json.dumps(doc))
    analyses.forget()
    again, _ = analyses.report(stored, "", "example.py", cache)
    assert len(counted) == 2
    assert again.to_dict() == expected.to_dict()
    assert analyses._entry(entry.read_bytes()) is not None  # rewritten by the fresh analysis
    assert (damage == "wrong types") == any("not a valid analysis" in p for p in cache.problems)


def test_the_drift_of_two_release_folders_is_compared_once(tmp_path: Path, counted: list[str]) -> None:
    for release, stems in (("old", ["cpu__with_dot", "gpu_h100__with_dot"]),
                           ("new", ["cpu__with_dot", "gpu_h100__with_dot"])):
        for stem in stems:
            write_slot(tmp_path / release / "guide" / "page", stem)
    moved = tmp_path / "new" / "guide" / "page" / "ex.f.gpu-h100.json"
    doc = json.loads(moved.read_text())
    doc["facts"]["memory"]["temp_bytes"] *= 2
    doc["toolchain"]["jax"] = "0.10.3"
    moved.write_text(json.dumps(doc, sort_keys=True, indent=1) + "\n")
    cache = ReportCache(tmp_path / "cache")
    first = compare_folders(tmp_path / "old", tmp_path / "new", "guide", 0.05, cache=cache)
    # the CPU slot is the same file in both folders: one analysis for both
    assert len(counted) == 3 and first.unchanged == 1 and len(first.moved) == 1
    analyses.forget()
    again = compare_folders(tmp_path / "old", tmp_path / "new", "guide", 0.05, cache=cache)
    assert len(counted) == 3, "an unchanged drift page analyses nothing"
    assert again == first
    # another tolerance is another comparison, of the same analyses
    analyses.forget()
    other = compare_folders(tmp_path / "old", tmp_path / "new", "guide", 0.9, cache=cache)
    assert len(counted) == 3 and [m.drift.significant for m in other.moved] == [False]
    assert [m.drift.significant for m in first.moved] == [True]
    # without a cache, the same result
    analyses.forget()
    assert compare_folders(tmp_path / "old", tmp_path / "new", "guide", 0.05) == first


# -- a whole build ---------------------------------------------------------------------------------

#: A build in a fresh process whose analysis of stored reports writes a line to $JAXHLO_TEST_COUNT.
BUILD = """
import os, sys
from sphinx_jaxhlo.store import snapshots
real = snapshots.reanalyze
def counting(report, source_name, **kwargs):
    with open(os.environ["JAXHLO_TEST_COUNT"], "a") as f:
        f.write(f"{os.getpid()} {report.function}\\n")
    real(report, source_name, **kwargs)
snapshots.reanalyze = counting
from sphinx.cmd.build import build_main
sys.exit(build_main(sys.argv[1:]))
"""

PAGES = 6  # Sphinx reads in parallel from more than five documents


def project(root: Path) -> Path:
    src = root / "src"
    src.mkdir(parents=True)
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_targets = ["cpu"]\n'
                                 'jaxhlo_snapshot_dir = "_snapshots"\n')
    (src / "index.rst").write_text("Index\n=====\n\n.. toctree::\n\n"
                                   + "".join(f"   page{i}\n" for i in range(PAGES)))
    for i in range(PAGES):
        body = textwrap.indent(f"import jax.numpy as jnp\n\ndef f{i}(x):\n    return jnp.sum(jnp.exp(x) * {i + 1})\n",
                               "   ")
        (src / f"page{i}.rst").write_text(f"Page {i}\n======\n\n.. jax-hlo::\n   :args: f32[{64 + i},8]\n\n{body}\n")
    return src


def build(src: Path, out: Path, cache: Path, count: Path, *args: str) -> tuple[list[str], str]:
    """Build with ``-E`` in a fresh process; the analyses it made (pid and function) and its log."""
    count.unlink(missing_ok=True)
    proc = subprocess.run([sys.executable, "-c", BUILD, "-E", "-b", "html", "-d", str(out / "doctrees"),
                           "-D", f"jaxhlo_cache_dir={cache}", *args, str(src), str(out / "html")],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "JAXHLO_TEST_COUNT": str(count)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = count.read_text().splitlines() if count.exists() else []
    return calls, proc.stdout + proc.stderr


def test_a_rebuild_from_snapshots_analyses_each_snapshot_once_then_nothing(tmp_path: Path) -> None:
    src = project(tmp_path)
    count = tmp_path / "count"
    _, log = build(src, tmp_path / "first", tmp_path / "cache-first", count)  # compiles, writes the snapshots
    assert summary(log)["compiled"] == PAGES, log
    assert len(list((src / "_snapshots").rglob("*.json"))) == PAGES
    pages = {}
    for jobs in ("1", "2"):
        cache = tmp_path / f"cache-j{jobs}"
        # a new cache: every report from its snapshot, each analysed once (the forecast read it too)
        calls, log = build(src, tmp_path / f"j{jobs}-a", cache, count, "-j", jobs)
        assert summary(log) == {"compiled": 0, "cache": 0, "snapshots": PAGES, "failed": 0}, log
        assert sorted(c.split()[1] for c in calls) == sorted(f"f{i}" for i in range(PAGES)), calls
        if jobs == "2":
            assert len({c.split()[0] for c in calls}) > 1, "not read in parallel"
        # nothing changed: nothing analysed, the same pages
        calls, log = build(src, tmp_path / f"j{jobs}-b", cache, count, "-j", jobs)
        assert calls == [] and summary(log)["snapshots"] == PAGES, log
        for run in ("a", "b"):
            pages[jobs, run] = (tmp_path / f"j{jobs}-{run}" / "html" / "page3.html").read_text()
    assert len(set(pages.values())) == 1
    # a snapshot that changes is analysed again, alone
    slot = next((src / "_snapshots").rglob("*.json"))
    doc = json.loads(slot.read_text())
    doc["facts"]["memory"]["temp_bytes"] += 1
    slot.write_text(json.dumps(doc, sort_keys=True, indent=1) + "\n")
    calls, _ = build(src, tmp_path / "j1-c", tmp_path / "cache-j1", count, "-j", "1")
    assert len(calls) == 1


def test_the_analyses_are_kept_in_a_cache_at_a_url_too(tmp_path: Path, counted: list[str]) -> None:
    fsspec = pytest.importorskip("fsspec")
    stored = analyses.read(write_slot(tmp_path / "doc", "gpu_h100__with_dot"))
    assert stored is not None
    url = f"memory://jaxhlo-test-{tmp_path.name}/cache"  # an object store: no folders to make
    cache = ReportCache(url)
    first, _ = analyses.report(stored, "", "example.py", cache)
    analyses.forget()
    again, _ = analyses.report(stored, "", "example.py", cache)
    assert len(counted) == 1 and again.to_dict() == first.to_dict() and not cache.problems
    assert fsspec.filesystem("memory").glob(f"{url.removeprefix('memory://')}/analyses/*/*.analysis")


# -- what is live at the peak, only for a page that needs it -----------------------------------------

def test_a_report_without_the_peak_is_the_full_one_less_its_live_list_and_never_served_for_one_with(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_peak import corpus_report

    from sphinx_jaxhlo.hlo import peak as peak_module

    report = corpus_report("cpu", "seed_with_dot")
    assert report.live_at_peak is not None
    slot = tmp_path / "doc" / "ex.f.cpu.json"
    snapshots.write(slot, snapshots.Snapshot.from_report(report, {"function": "f", "target": "cpu"},
                                                         {"jax": "0.10.2"}), report)
    stored = analyses.read(slot)
    assert stored is not None
    worked_out: list[str] = []
    real = peak_module.attach_live_at_peak

    def attach(*args: object) -> None:
        worked_out.append("peak")
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(peak_module, "attach_live_at_peak", attach)
    cache = ReportCache(tmp_path / "cache")
    without, _ = analyses.report(stored, "", "example.py", cache, peak=False)
    assert without.live_at_peak is None and not worked_out
    # the page that shows the peak, or checks a claim about it, gets it: analysed, not the entry above
    full, _ = analyses.report(stored, "", "example.py", cache)
    assert worked_out == ["peak"] and full.live_at_peak == report.live_at_peak
    assert without.to_dict() == {**full.to_dict(), "live_at_peak": None}
    # the whole analysis at hand serves a page without the peak as well: nothing worked out again
    assert analyses.report(stored, "", "example.py", cache, peak=False)[0].to_dict() == full.to_dict()
    # a later build (a new process, the same cache) reads each kind back from its own entry
    analyses.forget()
    assert analyses.report(stored, "", "example.py", cache, peak=False)[0].live_at_peak is None
    assert analyses.report(stored, "", "example.py", cache)[0].live_at_peak == report.live_at_peak
    assert worked_out == ["peak"]
    assert len(list((tmp_path / "cache" / "analyses").rglob("*.analysis"))) == 2


def test_a_docs_build_works_out_the_peak_only_for_examples_that_show_it_claim_it_or_sweep() -> None:
    from sphinx_jaxhlo.core import targets
    from sphinx_jaxhlo.core.example import Example
    from sphinx_jaxhlo.core.expectations import parse_expectations
    from sphinx_jaxhlo.core.settings import Settings
    from sphinx_jaxhlo.core.sweeps import Point
    from sphinx_jaxhlo.core.view_options import parse_findings
    from sphinx_jaxhlo.pipeline.build import Build
    from sphinx_jaxhlo.pipeline.plan import needs_peak, plan

    plain = Example(source="def f(x):\n    return x\n")
    settings = Settings()
    assert not needs_peak(settings, plain)
    shown = Example(source=plain.source, view=(("findings", parse_findings("memory, peak")),))
    claimed = Example(source=plain.source,
                      expectations=tuple(parse_expectations({"expect-peak-top": "dot_general"}).items))
    point = Example(source=plain.source, point=Point((("n", 4),)))
    assert needs_peak(settings, shown) and needs_peak(settings, claimed) and needs_peak(settings, point)
    # the site's setting, unless the example says otherwise
    site = settings.replace(findings="all")
    assert needs_peak(site, plain)
    assert not needs_peak(site, Example(source=plain.source, view=(("findings", parse_findings("memory")),)))

    def jobs_want_peak(build: Build, example: Example) -> list[bool]:
        return [job.peak for group in plan(build, example, [targets.get_target("cpu")], ["hlo"]) for job in group]

    docs = Build(settings, None, None, peak_when_needed=True)  # type: ignore[arg-type]
    assert jobs_want_peak(docs, plain) == [False] and jobs_want_peak(docs, shown) == [True]
    # the API and the command line always show it
    api = Build(settings, None, None)  # type: ignore[arg-type]
    assert jobs_want_peak(api, plain) == [True]
