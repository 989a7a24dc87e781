"""12. A docs host's build: ``-E`` from snapshots, nothing compiled, against plain pages;
and 13., the drift page's comparisons.

``python benchmarks/bench.py --snapshots`` runs it.  Projects of small examples
(``projects.example``) for ``cpu`` and ``gpu:h100`` are compiled once, writing
their snapshots; then three builds alternate, each with ``-E`` into a fresh
output folder, ``JAXHLO_SNAPSHOT_MODE=use`` and no compiler folder (nothing
compiles, jax is not imported):

- **from snapshots, no cache** (``jaxhlo_cache = False``): a Read the Docs
  build, where no cache survives: every snapshot is read and analysed;
- **cached**: the same with a cache that an earlier build filled: the
  analysis of each snapshot and each example's HTML are read back;
- **plain**: the same pages with each directive replaced by a code block.

The drift page (:func:`drift_page`) compares this site's snapshots with those of
the older releases in ``docs/_drift``, as ``docs/_ext/jaxhlo_drift.py`` does,
in a fresh process each time: with a new cache, then with the cache it filled
(an unchanged page), and with ``before``'s package.

Then each phase of the builds from snapshots without a cache is timed in the
build's own process (:func:`phases`; with ``before``, that version's too): where
the cost per report goes, function by function.

The extra milliseconds per report are ``(ours - plain) / reports``; measured at
two sizes, they split into a cost per report (the slope) and a cost per build
(the intercept: the site-wide fixed cost).  The machine may be shared: each
build is repeated, interleaved with the others, and the fastest of each
counts; with ``before``, each attempt's two builds of a kind (one after the other) are
also compared pair by pair (:func:`paired`).  Wall seconds of the build, and CPU seconds of the build process
(``time.process_time()``: what other load disturbs least; these builds start
no worker), are both given.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from projects import PY, build, build_env, write_project

TARGETS = "cpu,gpu:h100"


def _project(work: Path, count: int) -> tuple[Path, Path, int]:
    """The project (snapshots written), its plain twin, and its number of reports."""
    src = write_project(work / f"s{count}", count, targets=TARGETS)
    with (src / "conf.py").open("a") as f:
        f.write('jaxhlo_snapshot_dir = "_snapshots"\n')
    build(src, work / f"s{count}-compile", work / f"s{count}-compile-cache")
    plain = write_project(work / f"p{count}", count, plain=True)
    reports = len(list((src / "_snapshots").rglob("*.json")))
    if reports != count * len(TARGETS.split(",")):
        raise RuntimeError(f"the first build wrote {reports} snapshots for {count} examples")
    return src, plain, reports


def _summary(src: Path, out: Path, env: dict[str, str], *extra: str) -> str:
    """The build's own summary line (the timed builds are quiet)."""
    proc = subprocess.run([PY, "-m", "sphinx", "-E", "-b", "html", str(src), str(out / "html"), "-d",
                           str(out / "doctrees"), *extra], capture_output=True, text=True, env=env,
                          cwd=tempfile.gettempdir())
    m = re.search(r"jax-hlo: .*", proc.stdout)
    return m.group(0) if m else proc.stdout[-500:] + proc.stderr[-500:]


def package_at(rev: str, work: Path) -> Path:
    """The package as it was at a git revision, in a folder to put first on ``PYTHONPATH``."""
    import tarfile
    from io import BytesIO

    archive = subprocess.run(["git", "-C", str(Path(__file__).parent.parent), "archive", rev, "sphinx_jaxhlo"],
                             check=True, capture_output=True).stdout
    folder = work / f"package-{rev}"
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def package_here(work: Path) -> Path:
    """This checkout's package, copied like :func:`package_at`: with ``--before``, both
    versions import from the same folder of the same disk (this machine's disk
    answers some calls at very different speeds from one folder to another)."""
    folder = work / "package-here"
    shutil.copytree(Path(__file__).parent.parent / "sphinx_jaxhlo", folder / "sphinx_jaxhlo",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def disk_probe(work: Path, name: str = "0", count: int = 300) -> dict[str, float]:
    """CPU milliseconds to create a small file, and to hard-link one, in ``work``:
    what each module text beside a page costs on this disk at this moment (a file
    a text, and one a page for its scripts; the cached path links them from the
    cache).  On this project's build machine a new file has taken anywhere from
    0.03 to 1 ms: its ext4 has no journal, and without one the kernel does not
    reuse an inode deleted in the last 60 s (300 s while the inode's table block
    is not yet written back, ``recently_deleted()`` in ``fs/ext4/ialloc.c``), so
    a new file walks past every one of those in its group, each a look-up.  The
    files stay until the run ends (see :func:`snapshot_path`)."""
    import time

    folder = work / f"disk-probe-{name}"
    folder.mkdir(parents=True, exist_ok=True)
    start = time.process_time()
    for i in range(count):
        (folder / f"{i}.txt").write_bytes(b"x" * 4000)
    created = time.process_time() - start
    start = time.process_time()
    for i in range(count):
        os.link(folder / f"{i}.txt", folder / f"{i}.js")
    linked = time.process_time() - start
    return {"create_ms": 1000 * created / count, "link_ms": 1000 * linked / count}


def snapshot_path(work: Path, sizes: tuple[int, ...] = (20, 60), repeat: int = 5,
                  before: Path | None = None) -> dict[str, Any]:
    """The builds above at each size; with ``before`` (a folder holding another
    version of the package, :func:`package_at`), that version's builds from
    snapshots too, interleaved with the others, and this version's from a copy
    beside it (:func:`package_here`)."""
    no_compilers = work / "no-compilers"
    no_compilers.mkdir(parents=True, exist_ok=True)
    env = {"JAXHLO_SNAPSHOT_MODE": "use", "JAXHLO_COMPILERS_DIR": str(no_compilers)}
    here = package_here(work) if before is not None else None
    if here is not None:
        env["PYTHONPATH"] = str(here)
    versions = {"": env}
    if before is not None:
        versions["_before"] = {**env, "PYTHONPATH": str(before)}
    projects = {n: _project(work, n) for n in sizes}
    for n, (src, _, _) in projects.items():  # fill the caches of the cached builds, and say what a build does
        for suffix, environ in versions.items():
            summary = _summary(src, work / f"s{n}-check", build_env(environ), "-D", "jaxhlo_cache=0")
            if not re.search(r"0 compiled, 0 from cache, \d+ from snapshots, 0 failed", summary):
                raise RuntimeError(f"the build from snapshots did not take every report from them: {summary}")
            build(src, work / f"s{n}-warm", work / f"s{n}-cache{suffix}", env=environ)
    kinds = [f"{kind}{suffix}" for suffix in versions for kind in ("snapshots", "cached")]
    runs: dict[int, dict[str, list[dict[str, Any]]]] = {n: {k: [] for k in [*kinds, "plain"]} for n in sizes}
    probes = [disk_probe(work, "start")]
    # No build's output is deleted before the run ends: on a file system without a journal (this
    # machine's ext4) a new file skips every inode deleted in its group in the last 60 to 300 s,
    # so a deletion would slow the builds after it (see disk_probe).
    for attempt in range(repeat):
        for n, (src, plain, _) in projects.items():
            for suffix, environ in versions.items():
                out = work / f"s{n}-{attempt}{suffix}"
                runs[n][f"snapshots{suffix}"].append(build(src, out, None, "-D", "jaxhlo_cache=0", env=environ))
                out = work / f"c{n}-{attempt}{suffix}"
                runs[n][f"cached{suffix}"].append(build(src, out, work / f"s{n}-cache{suffix}", env=environ))
            runs[n]["plain"].append(build(plain, work / f"p{n}-{attempt}", None))
        probes.append(disk_probe(work, f"{attempt}"))
    out: dict[str, Any] = {"targets": TARGETS.split(","), "repeat": repeat, "sizes": {},
                           "disk_probe": {k: [round(p[k], 3) for p in probes] for k in probes[0]}}
    for measure in ("seconds", "process_seconds"):
        extra: dict[str, dict[int, float]] = {kind: {} for kind in kinds}
        for n, (_, _, reports) in projects.items():
            best = {kind: min(r[measure] for r in results) for kind, results in runs[n].items()}
            if any(r["jax"] for kind in kinds for r in runs[n][kind]):
                raise RuntimeError("a build from snapshots imported jax")
            for kind in kinds:  # each version's builds ran its own package
                wanted = str(before) if kind.endswith("_before") else str(here or Path(__file__).parent.parent)
                if any(not str(r["package"]).startswith(wanted) for r in runs[n][kind]):
                    found = runs[n][kind][0]["package"]
                    raise RuntimeError(f"the {kind} builds imported another sphinx_jaxhlo: {found}")
            entry = out["sizes"].setdefault(str(n), {"examples": n, "reports": reports})
            entry[measure] = best
            entry.setdefault("median", {})[measure] = {kind: statistics.median(r[measure] for r in results)
                                                       for kind, results in runs[n].items()}
            for kind in extra:
                extra[kind][reports] = best[kind] - best["plain"]
                entry.setdefault(f"extra_ms_per_report_{measure}", {})[kind] = 1000 * extra[kind][reports] / reports
        (small, large) = sorted(extra["snapshots"])
        for kind, by_reports in extra.items():
            per_report = (by_reports[large] - by_reports[small]) / (large - small)
            out.setdefault(measure, {})[kind] = {
                "ms_per_report": 1000 * per_report,
                "fixed_ms": 1000 * (by_reports[small] - small * per_report),
                "average_ms_per_report_largest": 1000 * by_reports[large] / large,
            }
    if before is not None:
        out["before"] = str(before)
        out["paired_ms_per_report_against_before"] = paired(runs, {n: p[2] for n, p in projects.items()})
    for suffix, figures in phases(work, projects, repeat, versions).items():
        out[f"phases_ms_per_report{suffix}"] = figures
    # issue 52's goals: the extra cost of a report at most 2 ms from snapshots, 1 ms fully cached
    out["goals_ms_per_report"] = {"snapshots": 2.0, "cached": 1.0}
    # how busy the machine was (1, 5 and 15 minutes): the wall seconds mean little above the core count
    out["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    out["cores"] = os.cpu_count()
    return out


def paired(runs: dict[int, dict[str, list[dict[str, Any]]]], reports: dict[int, int]) -> dict[str, Any]:
    """This version against ``before``, build by build: each attempt's two builds of a
    kind ran one after the other, so their difference is little disturbed by what the
    machine does over the minutes of a run (which moves the fastest of each kind, and
    the slope between two sizes, by as much as the change measured).  For each size and
    kind, the median over the attempts of (this version's CPU seconds - before's) per
    report, in milliseconds (negative: this version is faster), and each attempt's."""
    out: dict[str, Any] = {}
    for n, by_kind in runs.items():
        for kind in ("snapshots", "cached"):
            mine, theirs = by_kind[kind], by_kind[f"{kind}_before"]
            each = [1000 * (a["process_seconds"] - b["process_seconds"]) / reports[n]
                    for a, b in zip(mine, theirs, strict=True)]
            out.setdefault(str(n), {})[kind] = {"median": round(statistics.median(each), 3),
                                                "each": [round(x, 3) for x in each]}
    return out


#: Times one build phase by phase, in its process (argv: "ours" or "plain", then sphinx-build's).
#: Each phase is the CPU seconds spent in a function and what it calls, less the phases it
#: calls (timed apart) and garbage collection (a phase of its own): the phases do not overlap,
#: and "the rest of the build" is what none of them covers.  A function that a version of the
#: package does not have is left out (the phases of ``before``).
PHASES = """
import functools, gc, importlib, json, sys, time
spent = {}
inside = []  # for each timed call under way: the seconds of the phases it called
def timed(module, qualname, phase):
    try:
        owner = importlib.import_module(module)
        *path, name = qualname.split(".")
        for part in path:
            owner = getattr(owner, part)
        real = getattr(owner, name)
    except (ImportError, AttributeError):
        return
    @functools.wraps(real)
    def wrapper(*args, **kwargs):
        start = time.process_time()
        inside.append(0.0)
        try:
            return real(*args, **kwargs)
        finally:
            total = time.process_time() - start
            spent[phase] = spent.get(phase, 0.0) + total - inside.pop()
            if inside:
                inside[-1] += total
    setattr(owner, name, wrapper)
collecting = [0.0]
def collector(phase, info):
    if phase == "start":
        collecting[0] = time.process_time()
    else:
        seconds = time.process_time() - collecting[0]
        spent["garbage collection"] = spent.get("garbage collection", 0.0) + seconds
        if inside:
            inside[-1] += seconds
gc.callbacks.append(collector)
timed("sphinx.builders", "Builder.read_doc", "reading a page")
timed("sphinx.builders", "Builder.write_doctree", "pickling its doctree")
timed("sphinx.environment", "BuildEnvironment.get_and_resolve_doctree", "reading it back, resolved")
timed("sphinx.builders.html", "StandaloneHTMLBuilder.write_doc", "translating it")
timed("sphinx.builders.html", "StandaloneHTMLBuilder.handle_page", "the page's template")
if sys.argv[1] == "ours":
    timed("sphinx_jaxhlo.sphinxext.documents", "ExampleCollector.process_doc", "the examples of a page")
    timed("sphinx_jaxhlo.pipeline.run", "plan", "planning an example")
    timed("sphinx_jaxhlo.store.analyses", "report", "analysing a snapshot")
    timed("sphinx_jaxhlo.store.snapshots", "read", "reading a snapshot's files")
    timed("sphinx_jaxhlo.store.snapshots", "Snapshot.report", "the report from its facts, the rest of its analysis")
    timed("sphinx_jaxhlo.hlo.parse", "parse_module", "parsing the HLO")
    timed("sphinx_jaxhlo.hlo.fusion", "analyze_module", "the fusion analysis")
    timed("sphinx_jaxhlo.sphinxext.documents", "render", "making an example's nodes")
    timed("sphinx_jaxhlo.render.nodes", "_source_lines_html", "the source listing's HTML")
    timed("sphinx_jaxhlo.render.nodes", "table_html", "tables' HTML")
    timed("sphinx_jaxhlo.sphinxext.html", "_write_text", "a module text's files")
    timed("sphinx_jaxhlo.sphinxext.extension", "add_page_scripts", "a page's shared scripts")  # as setup connects it
    timed("sphinx_jaxhlo.sphinxext.html", "_handing", "highlighting a module text")
    timed("sphinx_jaxhlo.sphinxext.html", "_store_fragment", "writing new files")
from sphinx.cmd.build import build_main
start = time.process_time()
status = build_main(sys.argv[2:])
spent["the whole build"] = time.process_time() - start
spent["the rest of the build"] = 2 * spent["the whole build"] - sum(spent.values())
print("PHASES " + json.dumps(spent))
sys.exit(status)
"""


def phases(work: Path, projects: dict[int, tuple[Path, Path, int]], repeat: int,
           versions: dict[str, dict[str, str]]) -> dict[str, dict[str, Any]]:
    """Where a report's time goes, from snapshots without a cache: each phase's CPU
    milliseconds per report (the slope between the two sizes, the median of
    ``repeat`` builds of each phase) for our pages and the plain ones, and the
    difference.  The phases do not overlap (:data:`PHASES`).

    :param versions: the environment of each version's builds from snapshots, by the
        suffix of its kinds (``""``: this version); their builds alternate, attempt by
        attempt, with the plain pages' (which all versions share).
    :return: each version's phases, by its suffix.
    """
    runs: dict[str, dict[int, list[dict[str, float]]]] = {key: {} for key in ["plain", *versions]}

    def timed_build(key: str, n: int, folder: Path, extra: list[str], env: dict[str, str], attempt: int) -> None:
        out = work / f"phases{key}-{n}-{attempt}"  # kept until the run ends, as above
        kind = "plain" if key == "plain" else "ours"
        proc = subprocess.run([PY, "-c", PHASES, kind, "-q", "-E", "-b", "html", *extra, str(folder), str(out)],
                              capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("PHASES ")), None)
        if line is None or proc.returncode != 0:
            raise RuntimeError(f"the timed build failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        runs[key].setdefault(n, []).append(json.loads(line[7:]))

    for attempt in range(repeat):
        for n, (src, plain, _) in projects.items():
            for suffix, environ in versions.items():
                timed_build(suffix, n, src, ["-D", "jaxhlo_cache=0"], build_env(environ), attempt)
            timed_build("plain", n, plain, [], build_env(versions[""]), attempt)
    (small, large) = sorted(projects)
    reports = {n: projects[n][2] for n in projects}

    def slope(key: str, phase: str) -> float:
        medians = {n: statistics.median(run.get(phase, 0.0) for run in runs[key][n]) for n in (small, large)}
        return 1000 * (medians[large] - medians[small]) / (reports[large] - reports[small])

    out: dict[str, dict[str, Any]] = {}
    for suffix in versions:
        out[suffix] = {}
        for phase in sorted({p for run in runs[suffix][large] for p in run}):
            ours, plain = slope(suffix, phase), slope("plain", phase)
            out[suffix][phase] = {"ours": round(ours, 3), "plain": round(plain, 3), "extra": round(ours - plain, 3)}
    return out


#: Times the drift page's comparisons in a fresh process (argv: the cache folder or "", the docs folder).
DRIFT = """
import json, sys, time
from pathlib import Path
start, cpu = time.perf_counter(), time.process_time()
from sphinx_jaxhlo.store.releases import compare_folders
kwargs = {}
if sys.argv[1]:
    from sphinx_jaxhlo.store.cache import ReportCache
    kwargs["cache"] = ReportCache(sys.argv[1])
docs = Path(sys.argv[2])
slots = 0
for release in sorted((docs / "_drift").glob("jax-*")):
    result = compare_folders(release, docs / "_snapshots", "guide", 0.05, **kwargs)
    slots += len(result.moved) + result.unchanged
import sphinx_jaxhlo
print("DRIFT " + json.dumps({"seconds": time.perf_counter() - start, "process_seconds": time.process_time() - cpu,
                             "compared": slots, "package": sphinx_jaxhlo.__file__}))
"""


def drift_page(work: Path, before: Path | None = None, repeat: int = 3) -> dict[str, Any]:
    """13. The drift page's comparisons: cold, unchanged (the cache filled), and at ``before``."""
    import json

    docs = Path(__file__).parent.parent / "docs"
    # this checkout's package, not whichever one the environment installs (an editable install
    # of another clone would be measured in its place)
    here = Path(__file__).parent.parent

    def run(cache: Path | None, package: Path = here) -> dict[str, Any]:
        env = build_env({"PYTHONPATH": str(package)})
        proc = subprocess.run([PY, "-c", DRIFT, str(cache or ""), str(docs)], capture_output=True, text=True,
                              env=env, check=True, cwd=tempfile.gettempdir())
        return json.loads(next(ln for ln in proc.stdout.splitlines() if ln.startswith("DRIFT "))[6:])

    cache = work / "drift-cache"
    out: dict[str, Any] = {"cold": run(cache)}
    if not out["cold"]["package"].startswith(str(here)):
        raise RuntimeError(f"the drift page imported {out['cold']['package']}, not this checkout's package")
    warm = [run(cache) for _ in range(repeat)]
    out["unchanged"] = {key: min(r[key] for r in warm) for key in ("seconds", "process_seconds")}
    out["unchanged"]["compared"] = warm[0]["compared"]
    if before is not None:
        out["before"] = min((run(None, before) for _ in range(max(1, repeat // 2))),
                            key=lambda r: r["process_seconds"])
        if not out["before"]["package"].startswith(str(before)):
            raise RuntimeError(f"the drift page at the older revision imported {out['before']['package']}")
    out["goal_unchanged_s"] = 1.0
    return out
