"""Mutation testing of the semantic core: ``nox -s mutation`` (or ``python mutmut_config.py``).

mutmut 2 plants one small bug at a time (an operator, a number, a string, a
``True``, a keyword) in a module, runs the fast unit tests that cover that
module and records whether they caught it.  This file is both mutmut's
configuration (mutmut imports ``mutmut_config`` from the working folder and
calls :func:`pre_mutation`) and the driver the nox session runs::

    python mutmut_config.py                      # every module of MODULES
    python mutmut_config.py analysis expectations  # some of them (the CI subset)
    python mutmut_config.py --report             # the scores of the last run, no new run
    python mutmut_config.py --survivors analysis # test the last run's survivors again
    python mutmut_config.py --jobs=2 analysis expectations  # modules side by side, one copy each
    python mutmut_config.py --planted            # only the bugs of PLANTED, each against its test

For each module it runs ``mutmut run`` with that module's tests as the runner,
then prints the score per module (killed / tested; a mutant that hangs the
tests counts as caught) and every survivor as a one-line diff, marking those
that docs/development.md explains.  It exits 1 when a module scores
under :data:`GOAL`.  See the ``(jaxhlo-development)=`` page for how to read and
act on the result.

mutmut 2 rather than 3: mutmut 3 only mutates code inside functions, and the
rules of this package live as much in module-level tables (``_NEW_DATA``, the
units of sizes.py, the dtype table, the lexer's token rules) as in functions.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
#: The least share of mutants each module's tests must kill.
GOAL = 0.85

#: Short name -> (the files mutated, the fast tests that cover them: no Sphinx
#: build, no compile, no conftest fixture).
MODULES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "analysis": (("sphinx_jaxhlo/hlo/fusion.py", "sphinx_jaxhlo/hlo/buffers.py", "sphinx_jaxhlo/hlo/programs.py"),
                 ("tests/test_analysis_rules.py",)),
    "expectations": (("sphinx_jaxhlo/core/expectations.py",),
                     ("tests/test_expectation_rules.py", "tests/test_expectations.py")),
    "sizes": (("sphinx_jaxhlo/core/sizes.py",), ("tests/test_sizes.py",)),
    "specs": (("sphinx_jaxhlo/core/specs.py",), ("tests/test_specs.py", "tests/test_dtypes.py")),
    "request": (("sphinx_jaxhlo/core/request.py",), ("tests/test_cache_key.py",)),
    "cache": (("sphinx_jaxhlo/store/cache.py",), ("tests/test_cache_key.py",
                                            "tests/test_remote_cache.py::test_stored_reports_are_checked_field_by_field")),
    "lexer": (("sphinx_jaxhlo/render/lexer.py",), ("tests/test_lexer_rules.py",)),
    "render": (("sphinx_jaxhlo/render/graph_drawing.py", "sphinx_jaxhlo/render/nodes.py",
                "sphinx_jaxhlo/render/standalone_html.py", "sphinx_jaxhlo/sphinxext/html.py"),
               ("tests/test_escaping.py",)),
}

#: In the files of ``render`` (the HTML and SVG writers), only the escaping is under test:
#: a mutant counts when all it changes lies inside one escaping call (what the call is
#: given, or its ``quote`` flag); the markup and layout around the calls are left alone.
_ESCAPING_CALL = re.compile(r"\b(?:html\.escape|_esc|_attr)\(")


def _call_spans(line: str) -> list[tuple[int, int]]:
    spans = []
    for m in _ESCAPING_CALL.finditer(line):
        depth, end = 0, len(line)
        for k in range(m.end() - 1, len(line)):
            depth += {"(": 1, ")": -1}.get(line[k], 0)
            if depth == 0:
                end = k + 1
                break
        spans.append((m.start(), end))
    return spans


def _escaping_mutant(line: str, mutated: str) -> bool:
    """Whether the change from ``line`` to ``mutated`` lies inside one escaping call."""
    start = 0
    while start < min(len(line), len(mutated)) and line[start] == mutated[start]:
        start += 1
    tail = 0
    while tail < min(len(line), len(mutated)) - start and line[-1 - tail] == mutated[-1 - tail]:
        tail += 1
    end = len(line) - tail
    return any(a <= start and end <= b for a, b in _call_spans(line))


def pre_mutation(context: Any) -> None:
    """mutmut's hook, before each mutant: in the files of ``render``, skip all but the escaping."""
    name = Path(context.filename).as_posix()
    if not any(f"/{name}".endswith(f"/{path}") for path in MODULES["render"][0]):
        return
    line = context.current_source_line
    if not _ESCAPING_CALL.search(line):
        context.skip = True
        return
    from mutmut import Context, mutate

    trial = Context(source=context.source, mutation_id=context.mutation_id, filename=context.filename,
                    dict_synonyms=context.dict_synonyms)
    mutated, _ = mutate(trial)
    if not _escaping_mutant(line, mutated.split("\n")[context.current_line_index]):
        context.skip = True


# -- the bugs a review planted (issue 17) ---------------------------------------------

#: (file, text, its replacement, the test that must catch it): the mutants that
#: survived the whole suite when issue 17 was filed, each with the test that kills
#: it now.  Checked by every run (``--planted`` alone), in a few seconds.
PLANTED: list[tuple[str, str, str, str]] = [
    ("sphinx_jaxhlo/hlo/fusion.py", '    "dot", "convolution", "ragged-dot",', '    "convolution", "ragged-dot",',
     "tests/test_analysis_rules.py::test_a_buffer_that_only_feeds_a_dot_is_not_the_reduced_data"),
    ("sphinx_jaxhlo/hlo/fusion.py", 'm is not None and all(size in ("", "1")',
     'm is not None and any(size in ("", "1")',
     "tests/test_analysis_rules.py::test_a_reduce_window_of_size_1_is_not_a_reduction"),
    ("sphinx_jaxhlo/core/expectations.py", "outcome(peak <= parse_size(value)", "outcome(peak < parse_size(value)",
     "tests/test_expectation_rules.py::test_max_peak_holds_up_to_and_at_its_value"),
    ("sphinx_jaxhlo/core/expectations.py", "passed = not unfused if want_fused", "passed = bool(fused) if want_fused",
     "tests/test_expectation_rules.py::test_reduction_verdicts_are_about_all_the_programs_reductions"),
    ("sphinx_jaxhlo/core/expectations.py", "((function, target), (function, None), (None, target), (None, None))",
     "((function, target), (None, target), (function, None), (None, None))",
     "tests/test_expectation_rules.py::test_scopes_outrank_each_other_whatever_the_order"),
    ("sphinx_jaxhlo/core/sizes.py", '"gib": 2**30', '"gib": 10**9',
     "tests/test_sizes.py::test_gib_is_binary_and_gb_decimal"),
    ("sphinx_jaxhlo/core/sizes.py", "if abs(n) >= scale:", "if abs(n) > scale:",
     "tests/test_sizes.py::test_format_bytes_boundaries"),
    ("sphinx_jaxhlo/core/specs.py", '"f16": ("float16", 2)', '"f16": ("bfloat16", 2)',
     "tests/test_dtypes.py::test_each_dtype_stands_for_its_numpy_type_and_size"),
    ("sphinx_jaxhlo/core/request.py", '            "code": code_fingerprint(),\n', "",
     "tests/test_cache_key.py::test_the_code_that_makes_reports_changes_the_key"),
    ("sphinx_jaxhlo/store/cache.py", "return report.error is None or report.error.status in DETERMINISTIC_ERRORS",
     "return True", "tests/test_cache_key.py::test_a_transient_failure_is_never_cached"),
    ("sphinx_jaxhlo/render/lexer.py", '(r"-?(?:inf|nan)\\b", Number.Float,', '(r"-?(?:inf|nan)\\b", Number.Integer,',
     "tests/test_lexer_rules.py::test_hlo_token_rules"),
    ("sphinx_jaxhlo/render/lexer.py", "|to_apply|condition|body|", "|to_apply|",
     "tests/test_lexer_rules.py::test_a_while_loop_names_its_condition_and_body"),
    ("sphinx_jaxhlo/render/standalone_html.py", 'title = html.escape(f"jax-hlo: {fn}")', 'title = f"jax-hlo: {fn}"',
     "tests/test_escaping.py::test_full_page_title"),
]


def check_planted() -> bool:
    """Plant each of :data:`PLANTED` in turn and run its test; whether all are caught."""
    import pytest

    caught = True
    print(f"\n{'planted bug':75} caught by")
    for file, text, replacement, test in PLANTED:
        path = ROOT / file
        original = path.read_text(encoding="utf-8")
        what = f"{Path(file).name}: {text.strip()[:40]} -> {replacement.strip()[:25] or '(removed)'}"
        if original.count(text) != 1:
            print(f"{what:75} NOT FOUND (the code changed: update PLANTED)")
            caught = False
            continue
        path.write_text(original.replace(text, replacement), encoding="utf-8")
        try:
            code = subprocess.run([sys.executable, str(ROOT / "mutmut_config.py"), "--pytest-node", test],
                                  cwd=ROOT, capture_output=True).returncode
        finally:
            path.write_text(original, encoding="utf-8")
        print(f"{what:75} {test.split('::')[-1] if code else 'NOTHING: it survives'}")
        caught = caught and code != 0
    del pytest
    return caught


# -- the runner mutmut calls for each mutant --------------------------------------


def run_tests(name: str | None, nodes: tuple[str, ...] = ()) -> int:
    """Run the tests of one module (or the given test ids): 0 when they pass, 1
    otherwise (mutmut reads only 1 as "killed": a mutant that breaks the import is
    caught too)."""
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    import pytest

    tests = [str(ROOT / t) for t in (MODULES[name][1] if name else nodes)]
    code = pytest.main(["-x", "-q", "--no-header", "-p", "no:cacheprovider", "--noconftest", "-o", "addopts=",
                        "-m", "not slow", "--rootdir", str(ROOT), *tests])
    return 0 if code == 0 else 1


# -- the driver -------------------------------------------------------------------


@dataclass
class Mutant:
    id: int
    file: str
    line_number: int  # 1-based
    line: str
    status: str
    mutated: str = ""


def _restore_backups() -> None:
    """mutmut edits files in place and keeps the original as ``.bak``; a run cut
    short leaves a mutant behind: put the original back."""
    for bak in (ROOT / "sphinx_jaxhlo").rglob("*.py.bak"):
        bak.replace(bak.with_suffix(""))


def _forget_baseline() -> None:
    """mutmut caches the time of the first baseline run for every later run (and
    stops a mutant's tests at 10 times it); each module has its own tests."""
    cache = ROOT / ".mutmut-cache"
    if cache.exists():
        with sqlite3.connect(cache) as db:
            try:
                db.execute("DELETE FROM MiscData WHERE key = 'baseline_time_elapsed'")
            except sqlite3.OperationalError:
                pass


def run_module(name: str, survivors_only: bool = False) -> None:
    """Run mutmut over one module; with ``survivors_only``, test again only the
    mutants that survived the last run (after adding tests, in minutes)."""
    files, _ = MODULES[name]
    _forget_baseline()
    runner = f"{sys.executable} {ROOT / 'mutmut_config.py'} --pytest {name}"
    common = ["--paths-to-mutate", ",".join(files), "--runner", runner, "--tests-dir", "tests/", "--no-progress",
              "--simple-output", "--CI"]
    if survivors_only:
        ids = [str(m.id) for m in mutants() if m.file in files and m.status == "bad_survived"]
        commands = [[sys.executable, "-m", "mutmut", "run", mid, *common] for mid in ids]
    else:
        commands = [[sys.executable, "-m", "mutmut", "run", *common]]
    print(f"== mutating {', '.join(files)} against {', '.join(MODULES[name][1])}"
          + (f" ({len(commands)} survivors again)" if survivors_only else ""), flush=True)
    try:
        for cmd in commands:
            subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    finally:
        _restore_backups()


#: Where ``--jobs`` runs its workers, each in a copy of the project.
JOBS = ROOT / ".mutmut-jobs"


def _caches() -> list[Path]:
    """mutmut's caches: this folder's and each ``--jobs`` worker's, newest first."""
    found = [p for p in [ROOT / ".mutmut-cache", *JOBS.glob("*/.mutmut-cache")] if p.exists()]
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def mutants(cache: Path | None = None) -> list[Mutant]:
    """Every mutant of the last run of each module, from mutmut's caches (for a
    module in several, the newest)."""
    if cache is None:
        out: list[Mutant] = []
        done: set[str] = set()
        for found in _caches():
            mine = [m for m in mutants(found) if m.file not in done]
            done |= {m.file for m in mine}
            out += mine
        return out
    with sqlite3.connect(cache) as db:
        rows = db.execute(
            "SELECT m.id, f.filename, l.line_number, l.line, m.status, m.'index' FROM Mutant m "
            "JOIN Line l ON m.line = l.id JOIN SourceFile f ON l.sourcefile = f.id ORDER BY f.filename, m.id"
        ).fetchall()
    out = []
    for mid, file, number, line, status, index in rows:
        mutant = Mutant(mid, file, number + 1, line, status)
        if status == "bad_survived":
            mutant.mutated = _mutated_line(file, line, number, index)
        out.append(mutant)
    return out


def _mutated_line(file: str, line: str, number: int, index: int) -> str:
    from mutmut import Context, RelativeMutationID, mutate

    context = Context(mutation_id=RelativeMutationID(line=line, index=index, line_number=number, filename=file),
                      filename=str(ROOT / file), dict_synonyms=[])
    try:
        source, _ = mutate(context)
    except Exception as exc:  # the line moved since the run
        return f"(cannot rebuild the mutant: {exc})"
    original = (ROOT / file).read_text(encoding="utf-8").splitlines()
    mutated = source.splitlines()
    changed = [m for o, m in zip(original, mutated, strict=False) if o != m]
    if len(original) != len(mutated):  # a line removed or added: show where
        return next((m for o, m in zip(original, mutated, strict=False) if o != m), "(a line removed)").strip()
    return changed[0].strip() if changed else ""


def documented_equivalents() -> set[tuple[str, str, str]]:
    """(file, original line, mutated line) of the survivors that docs/development.md
    explains, in its table rows ``| file:line | `line` | `mutant` | why |`` (the line
    number is for the reader: a row matches by the texts)."""
    page = ROOT / "docs" / "development.md"
    out: set[tuple[str, str, str]] = set()
    if not page.exists():
        return out
    for row in page.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row.strip().strip("|"))] if row.startswith("|") else []
        name = cells[0].strip("`").split(":")[0] if cells else ""
        if len(cells) >= 4 and name.endswith(".py") and cells[1].startswith("`"):
            out.add((name, _unquote(cells[1]), _unquote(cells[2])))
    return out


def _unquote(cell: str) -> str:
    return cell.strip().removeprefix("``").removesuffix("``").strip("`").strip().replace("\\|", "|")


def report(names: list[str]) -> bool:
    """Print the score of each module and the survivors; whether every module
    reaches the goal."""
    found = mutants()
    documented = documented_equivalents()
    ok = True
    rows = []
    for name in names:
        files = MODULES[name][0]
        mine = [m for m in found if m.file in files and m.status not in ("skipped", "untested")]
        killed = [m for m in mine if m.status in ("ok_killed", "ok_suspicious", "bad_timeout")]
        score = len(killed) / len(mine) if mine else 0.0
        ok = ok and score >= GOAL
        equivalent = [m for m in mine if m.status == "bad_survived"
                      and (Path(m.file).name, m.line.strip(), m.mutated) in documented]
        rows.append((name, len(mine), len(killed), len(equivalent), score))
        for m in (m for m in mine if m.status == "bad_survived"):
            mark = "explained" if m in equivalent else "SURVIVED"
            print(f"{mark:10} {m.file}:{m.line_number}: {m.line.strip()}  ->  {m.mutated}")
    print(f"\n{'module':14}{'mutants':>9}{'killed':>9}{'explained':>10}{'score':>9}   (goal {GOAL:.0%})")
    for name, total, killed_n, equivalent_n, score in rows:
        flag = "" if score >= GOAL else "   below the goal"
        print(f"{name:14}{total:9}{killed_n:9}{equivalent_n:10}{score:9.1%}{flag}")
    return ok


def run_in_parallel(names: list[str], jobs: int) -> None:
    """Split the modules over ``jobs`` copies of the project, each running its
    share one module after another (mutmut edits files in place, so two runs
    cannot share a folder)."""
    shutil.rmtree(JOBS, ignore_errors=True)
    ignore = shutil.ignore_patterns(".git", ".nox", ".venv", ".mutmut-jobs", ".mutmut-cache", "_build",
                                    "__pycache__", ".hypothesis", ".pytest_cache", "*.egg-info", "*.bak")
    shares = [names[i::jobs] for i in range(jobs)]
    workers = []
    for i, share in enumerate(s for s in shares if s):
        copy = JOBS / str(i)
        shutil.copytree(ROOT, copy, ignore=ignore)
        workers.append(subprocess.Popen([sys.executable, str(copy / "mutmut_config.py"), "--run-only", *share],
                                        cwd=copy))
    failed = [w.args for w in workers if w.wait() != 0]
    if failed:
        raise RuntimeError(f"mutation workers failed: {failed}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--pytest"]:
        return run_tests(argv[1])
    if argv[:1] == ["--pytest-node"]:
        return run_tests(None, tuple(argv[1:]))
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return 0
    jobs = 1
    for a in [a for a in argv if a.startswith("--jobs=")]:
        jobs = max(1, int(a.removeprefix("--jobs=")))
        argv = [x for x in argv if x != a]
    flags = [a for a in argv if a.startswith("-")]
    known = {"--report", "--survivors", "--run-only", "--planted"}
    if "--planted" in argv:
        return 0 if check_planted() else 1
    if set(flags) - known:
        print(f"unknown option(s) {' '.join(sorted(set(flags) - known))}; see --help", file=sys.stderr)
        return 2
    only_report = "--report" in flags
    names = [a for a in argv if not a.startswith("-")] or list(MODULES)
    unknown = [n for n in names if n not in MODULES]
    if unknown:
        print(f"unknown module(s) {', '.join(unknown)}; known: {', '.join(MODULES)}", file=sys.stderr)
        return 2
    if not only_report:
        _restore_backups()
        if jobs > 1 and "--survivors" not in flags:
            run_in_parallel(names, jobs)
        else:
            for name in names:
                run_module(name, survivors_only="--survivors" in flags)
    if "--run-only" in flags:  # a worker of --jobs: its parent reports
        return 0
    scores = report(names)
    return 0 if check_planted() and scores else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
