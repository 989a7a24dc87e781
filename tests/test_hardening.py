"""Hardening: a matrix of bad inputs, each on its own page, built once; parallel and interrupted builds.

``tests/roots/test-hardening`` has one page per bad input under ``cases/`` and a
page of good examples (``good.rst``) that is read after all of them.  The
project is built once in a subprocess, the way a user builds it, and every test
here reads that one build: the warnings (subtype, document, line, message), the
error box or mark on each page, and the pages of good examples.

The CUDA compiler plugin is hidden from that build (a compilers folder without
it, and a ``sitecustomize`` on ``PYTHONPATH`` that makes ``jax_cuda12_plugin``
unimportable, in the build and in its compile workers), so the pages that ask
for ``gpu:h100`` show how a missing compiler is reported, whether it is
installed in the private folder, in the environment or not at all.

The same project is also built with ``-W`` (it must fail) and with ``-j 2``
(same warnings, same pages).  Last, a build is killed mid-way and run again on
the same folders, and builds are interrupted while a worker is stuck.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import compilers_without, with_texts

ROOT = Path(__file__).parent / "roots" / "test-hardening"

#: Makes the CUDA compiler plugin look uninstalled (``find_spec`` raises, as
#: for a module that is not there), in the build and in its workers.
HIDE_CUDA = '''
import importlib.abc, sys

HIDDEN = ("jax_cuda12_plugin", "jax_plugins.xla_cuda12")


class HideCuda(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in HIDDEN or name.startswith(tuple(h + "." for h in HIDDEN)):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, HideCuda())
'''

SCRIPT_ALERT = "<script>alert(1)</script>"
SPECIAL = f"{SCRIPT_ALERT} `tick` |sub| *star*"


@dataclass(frozen=True)
class Case:
    """One bad input: where it is, and the warning a user gets for it."""

    page: str  # docname under cases/
    subtype: str  # jaxhlo.<subtype>
    message: str  # regex searched in the message
    where: int | None = None  # example line the warning points at; None: the directive's line
    directive: int = 0  # which jax-hlo directive of the page (0-based)
    mark: str = ".jaxhlo-error"  # CSS selector of the error box or mark on the page


CASES = [
    Case("empty", "empty", r"^jax-hlo: the example has no code$"),
    Case("comments", "empty", r"^jax-hlo: the example has no code$"),
    Case("syntax", "syntax", r"SyntaxError: expected ':' \(example line 3\)$", where=3, mark=".jaxhlo-bad"),
    Case("import", "example", r"while running the example: ModuleNotFoundError: "
         r"No module named 'no_such_module_for_jaxhlo' \(example line 2\)$", where=2, mark=".jaxhlo-bad"),
    Case("nameerror", "example", r"while running the example: NameError: name 'undefined_scale' is not defined "
         r"\(example line 3\)$", where=3, mark=".jaxhlo-bad"),
    Case("trace", "trace", r"while tracing f: TypeError: dot_general requires contracting dimensions to have the "
         r"same shape, got \(3,\) and \(4,\)\. \(example line 5\)$", where=5, mark=".jaxhlo-bad"),
    Case("notfound", "function", r"function 'g' is not defined by the example \(it defines: f\)$",
         mark=".jaxhlo-bad"),
    Case("notcallable", "function", r"'n' is not callable \(its type is int\)$", mark=".jaxhlo-bad"),
    Case("lambda", "function", r"the example defines no top-level function; define one with def, "
         r"or name a callable with :function:$", mark=".jaxhlo-bad"),
    Case("args-dtype", "args", r":args: unknown dtype 'f33' at column 1 \(known: bf16, bool, "),
    Case("args-unclosed", "args", r":args: f32\[ at column 1 is not closed: expected .\].$"),
    Case("args-negative", "args",
         r":args: dimension '-1?' at column 5 of f32\[\.\.\.\] is not a non-negative integer$"),
    Case("args-huge", "args", r":args: dimension '1e12' at column 5 of f32\[\.\.\.\] is not a non-negative integer$"),
    Case("args-huge", "args", r":args: f32\[1000000000000,1000000000000\] has more than 2\*\*53 elements$",
         directive=1),
    Case("args-count", "args", r"calling f with the given :args: failed: TypeError: f\(\) takes 1 positional "
         r"argument but 2 were given$", mark=".jaxhlo-bad"),
    Case("args-keyword", "args", r"calling f with the given :args: failed: TypeError: f\(\) got an unexpected "
         r"keyword argument 'bogus'$", mark=".jaxhlo-bad"),
    Case("badsize", "option", r":expect-max-temp: 'lots' is not a size: write a number with an optional unit"),
    Case("unknown-target", "target", r"unknown target 'gpu:nonexistent'; known targets: cpu, gpu:h100, "),
    Case("compile", "compile", r"f failed to compile for CPU: INVALID_ARGUMENT: .*"
         r"No such compile option: 'xla_no_such_flag'$", mark=".jaxhlo-oom"),
    Case("oom", "compile", r"broadcast failed to compile for TPU v5e: RESOURCE_EXHAUSTED: .*Ran out of memory",
         mark=".jaxhlo-oom"),
    Case("expected-error", "expectation", r"f on cpu: expected error RESOURCE_EXHAUSTED, "
         r"found compilation succeeded", mark="li.jaxhlo-fail"),
    Case("timeout", "timeout", r"compiling f for cpu took longer than 3 s; the worker was stopped$",
         mark=".jaxhlo-bad"),
    Case("suicide", "crash", r"the compile worker was killed by SIGKILL \(a crash inside XLA, or the example "
         r"ended its process\) \[target cpu\]$", mark=".jaxhlo-bad"),
    Case("nonutf8", "file", r"cases/latin1\.py: not UTF-8 \(invalid continuation byte at byte 5\)$"),
    Case("outside", "file", r"'\.\./\.\./outside\.py' is outside the source directory; refusing to read it$"),
    Case("outside", "file", r"'link\.py' is outside the source directory; refusing to read it$", directive=1),
    Case("escaping", "trace", r"while tracing raising: ValueError: " + re.escape(SPECIAL)
         + r" \(example line 2\)$", where=2, directive=1, mark=".jaxhlo-bad"),
    Case("escaping", "function", "function " + re.escape(repr(SCRIPT_ALERT)) + r" is not defined by the example",
         directive=2, mark=".jaxhlo-bad"),
]

#: Pages whose examples all render (the case is that nothing goes wrong, or
#: that what went wrong stays inside its own example).
CLEAN_PAGES = {"noisy": ["jit_noisy"], "writes": ["jit_writes"], "config": ["jit_widened", "jit_narrowed"],
               "missing-compiler": ["jit_f"], "missing-compiler-again": ["jit_f"]}


@dataclass(frozen=True)
class Warning_:
    docname: str | None
    line: int | None
    level: str
    message: str
    type: str


WARNING_RE = re.compile(r"^(?:(?P<path>/[^\n]*?):(?P<line>\d+): )?(?P<level>WARNING|ERROR|CRITICAL): "
                        r"(?P<message>.*?) \[(?P<type>[\w.-]+)\]$", re.MULTILINE | re.DOTALL)


def text(element: object) -> str:
    """The visible text, whitespace collapsed (highlighting splits lines into many spans)."""
    return " ".join(element.get_text(" ").split())  # type: ignore[attr-defined]


def parse_warnings(log: str, src: Path) -> list[Warning_]:
    out = []
    for m in WARNING_RE.finditer(log):
        docname = None
        if m["path"]:
            docname = str(Path(m["path"]).relative_to(src).with_suffix(""))
        out.append(Warning_(docname, int(m["line"]) if m["line"] else None, m["level"], m["message"], m["type"]))
    return out


@dataclass
class Build:
    rc: int
    log: str
    warnings: list[Warning_]
    src: Path
    out: Path
    cwd: Path
    tmpdir: Path
    seconds: float

    def soup(self, docname: str) -> BeautifulSoup:
        """The page, with the module texts it loads on demand in place."""
        page = self.out / f"{docname}.html"
        return with_texts(BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser"), page)

    def body(self, docname: str) -> BeautifulSoup:
        soup = self.soup(docname)
        return soup.select_one("div.body") or soup


def sphinx_build(src: Path, out: Path, *args: str, cache: Path, doctrees: Path, cwd: Path, tmpdir: Path,
                 hide: Path, timeout: float = 300) -> Build:
    tmpdir.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmpdir), "PYTHONPATH": os.pathsep.join(
        [str(hide), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "JAXHLO_COMPILERS_DIR": str(compilers_without("gpu", hide))}
    env.pop("XLA_FLAGS", None)
    warnings_file = out.parent / f"{out.name}-warnings.txt"
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-N", "-E", "-d", str(doctrees), "-w", str(warnings_file),
           "-D", f"jaxhlo_cache_dir={cache}", *args, str(src), str(out)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)
    seconds = time.perf_counter() - start
    log = proc.stdout + proc.stderr
    return Build(proc.returncode, log, parse_warnings(warnings_file.read_text(encoding="utf-8"), src), src, out, cwd,
                 tmpdir, seconds)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("hardening")
    src = base / "src"
    shutil.copytree(ROOT, src)
    # a real file next to the source directory, so "outside" is refused for being outside, not for being missing
    (base / "outside.py").write_text("def f(x):\n    return x + 1\n", encoding="utf-8")
    (src / "cases" / "link.py").symlink_to(Path("..") / ".." / "outside.py")
    hide = base / "hide-cuda"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(HIDE_CUDA, encoding="utf-8")
    return src


def _build(project: Path, name: str, *args: str, cache: str = "cache") -> Build:
    base = project.parent
    return sphinx_build(project, base / name, *args, cache=base / cache, doctrees=base / f"{name}-doctrees",
                        cwd=base / f"{name}-cwd", tmpdir=base / f"{name}-tmp", hide=base / "hide-cuda")


@pytest.fixture(scope="module")
def built(project: Path) -> Build:
    """The matrix built once, without -W."""
    return _build(project, "html")


@pytest.fixture(scope="module")
def strict(project: Path, built: Build) -> Build:
    """The same project with -W (same cache: only what is never cached compiles again)."""
    return _build(project, "html-strict", "-W")


@pytest.fixture(scope="module")
def parallel(project: Path, built: Build) -> Build:
    """The same project with -j 2 and a cache of its own, so that it compiles everything again."""
    return _build(project, "html-j2", "-j", "2", cache="cache-j2")


def lines_of(src: Path, page: str) -> list[tuple[int, int | None]]:
    """(document line of the directive, document line of its first content line) for each jax-hlo directive."""
    lines = (src / "cases" / f"{page}.rst").read_text(encoding="utf-8").splitlines()
    out: list[tuple[int, int | None]] = []
    for i, line in enumerate(lines):
        if not line.startswith(".. jax-hlo::"):
            continue
        j = i + 1
        while j < len(lines) and lines[j].startswith("   :"):
            j += 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        first = j + 1 if j < len(lines) and lines[j].startswith("   ") else None
        out.append((i + 1, first))
    return out


def jaxhlo_warnings(build: Build) -> list[Warning_]:
    return [w for w in build.warnings if w.type.startswith("jaxhlo.")]


def case_id(case: Case) -> str:
    return f"{case.page}-{case.directive}" if case.directive else case.page


# -- the build as a whole --------------------------------------------------------


def test_build_succeeds_without_W_and_fails_with_it(built: Build, strict: Build) -> None:
    assert built.rc == 0, built.log
    assert "build succeeded" in built.log
    assert strict.rc == 1, strict.log
    assert "warnings treated as errors" in strict.log
    # -W changes the exit status, not what is reported
    key = Counter((w.docname, w.line, w.type) for w in jaxhlo_warnings(built))
    assert Counter((w.docname, w.line, w.type) for w in jaxhlo_warnings(strict)) == key


def test_no_traceback_and_exactly_the_expected_warnings(built: Build) -> None:
    assert "Traceback" not in built.log and "Exception occurred" not in built.log, built.log
    expected = Counter((f"cases/{c.page}", f"jaxhlo.{c.subtype}") for c in CASES)
    # the missing CUDA compiler, once per build, at the first example that needed it
    expected[("cases/missing-compiler", "jaxhlo.target")] += 1
    got = Counter((w.docname, w.type) for w in jaxhlo_warnings(built))
    assert got == expected, "\n".join(f"{w.docname}:{w.line} {w.message} [{w.type}]" for w in built.warnings)
    others = [w for w in built.warnings if not w.type.startswith("jaxhlo.")]
    assert [(w.docname, w.level, w.type) for w in others] == [("cases/unknown-option", "ERROR", "docutils")]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_warning_subtype_location_and_message(built: Build, case: Case) -> None:
    directive_line, first = lines_of(built.src, case.page)[case.directive]
    line = directive_line if case.where is None else (first or 0) + case.where - 1
    candidates = [w for w in jaxhlo_warnings(built) if w.docname == f"cases/{case.page}" and w.line == line]
    assert candidates, f"no warning at cases/{case.page}.rst:{line}:\n{built.log}"
    (w,) = candidates
    assert w.type == f"jaxhlo.{case.subtype}"
    assert w.level == "WARNING"
    assert re.search(case.message, w.message), w.message


@pytest.mark.parametrize("page", sorted({c.page for c in CASES}))
def test_page_shows_the_error_and_renders_the_rest(built: Build, page: str) -> None:
    body = built.body(f"cases/{page}")
    for case in (c for c in CASES if c.page == page):
        assert body.select_one(case.mark), f"{page}: no {case.mark} on the page"
    shown = text(body)
    assert "Before the example." in shown and f"After {page}." in shown


@pytest.mark.parametrize("page", sorted(CLEAN_PAGES))
def test_pages_without_a_local_error_render_their_examples(built: Build, page: str) -> None:
    body = built.body(f"cases/{page}")
    for module in CLEAN_PAGES[page]:
        assert f"HloModule {module}" in text(body), page
    assert not body.select(".jaxhlo-error, .jaxhlo-bad, .jaxhlo-oom, .jaxhlo-fail")


def test_good_examples_after_the_bad_ones_render(built: Build) -> None:
    body = built.body("good")
    blocks = body.select("div.jaxhlo")
    assert len(blocks) == 2
    assert "HloModule jit_good_sum" in text(blocks[0])
    assert blocks[0].select("li.jaxhlo-pass") and not blocks[0].select(".jaxhlo-fail")
    assert "HloModule jit_good_matvec" in text(blocks[1])
    assert not body.select(".jaxhlo-error, .jaxhlo-bad, .jaxhlo-oom")
    assert "The end of the good examples." in text(body)


def test_a_parallel_build_gives_the_same_warnings_and_pages(built: Build, parallel: Build) -> None:
    assert parallel.rc == 0, parallel.log
    assert sorted(map(repr, parallel.warnings)) == sorted(map(repr, built.warnings))
    pages = sorted(p.relative_to(built.out) for p in built.out.rglob("*.html"))
    assert pages == sorted(p.relative_to(parallel.out) for p in parallel.out.rglob("*.html"))
    differ = [str(p) for p in pages if (built.out / p).read_bytes() != (parallel.out / p).read_bytes()]
    assert not differ


# -- cases that need more than a warning and a box ---------------------------------


def test_a_lambda_compiles_when_named(built: Build) -> None:
    blocks = built.body("cases/lambda").select("div.jaxhlo")
    assert blocks[0].select_one(".jaxhlo-bad")
    assert "HloModule jit__lambda" in text(blocks[1])
    assert not blocks[1].select(".jaxhlo-bad")


def test_unknown_option_is_a_docutils_error_and_the_page_renders(built: Build) -> None:
    (w,) = [w for w in built.warnings if w.docname == "cases/unknown-option"]
    directive_line, _ = lines_of(built.src, "unknown-option")[0]
    assert (w.level, w.type, w.line) == ("ERROR", "docutils", directive_line)
    assert 'Error in "jax-hlo" directive:\nunknown option: "nonsense".' in w.message
    # docutils drops the directive: the page has no example, and the rest of it is there
    body = built.body("cases/unknown-option")
    assert not body.select("div.jaxhlo")
    assert "After unknown-option." in text(body)


def test_unknown_target_leaves_no_target_to_compile(built: Build) -> None:
    box = built.body("cases/unknown-target").select_one("div.jaxhlo-error")
    assert "jax-hlo example has no target to compile for" in text(box)


def test_a_missing_compiler_is_one_warning_per_build(built: Build) -> None:
    (w,) = [w for w in jaxhlo_warnings(built) if w.docname == "cases/missing-compiler"]
    assert (w.type, w.line) == ("jaxhlo.target", lines_of(built.src, "missing-compiler")[0][0])
    assert not [w for w in built.warnings if w.docname is None]  # every warning has a location
    assert ("target gpu:h100 needs the CUDA compiler plugin (jax-cuda12-plugin, ptxas, libdevice), which is not "
            "installed: run python -m sphinx_jaxhlo compilers install --gpu") in w.message
    assert "2 document(s) show it as missing (cases/missing-compiler, cases/missing-compiler-again)" in w.message
    for page in ("missing-compiler", "missing-compiler-again"):
        body = built.body(f"cases/{page}")
        panels = {p["data-key"]: p for p in body.select("div.jaxhlo-panel")}
        assert set(panels) == {"cpu", "gpu:h100"}
        assert "HloModule jit_f" in text(panels["cpu"])
        missing = text(panels["gpu:h100"].select_one("p.jaxhlo-missing"))
        assert "Not compiled for H100" in missing and "compilers install --gpu" in missing
        assert "compiler not installed" in text(body.select_one("table.jaxhlo-compare"))


def test_megabytes_of_output_stay_out_of_the_log_and_the_page(built: Build) -> None:
    assert "NOISE-OUT" not in built.log and "NOISE-ERR" not in built.log
    page = (built.out / "cases" / "noisy.html").read_text(encoding="utf-8")
    assert "NOISE-OUTNOISE-OUT" not in page and "NOISE-ERRNOISE-ERR" not in page


def test_files_written_by_an_example_land_in_a_removed_temporary_folder(built: Build) -> None:
    for folder in (built.src, built.out, built.cwd, built.tmpdir):
        assert not list(folder.rglob("written-by-example.txt")), folder
        assert not list(folder.rglob("made-by-example")), folder
    # the workers' folders (also those of the killed and timed-out workers) are gone
    assert not list(built.tmpdir.glob("jaxhlo-worker-*")), sorted(built.tmpdir.iterdir())


def test_a_jax_config_change_stays_inside_its_example(built: Build) -> None:
    widened, narrowed = built.body("cases/config").select("div.jaxhlo")
    assert "f64[3]" in widened.select_one("details.jaxhlo-lazy").get_text()
    hlo = narrowed.select_one("details.jaxhlo-lazy").get_text()
    assert "f32[3]" in hlo and "f64" not in hlo


def test_special_characters_are_escaped_everywhere(built: Build) -> None:
    for page in built.out.rglob("*.html"):
        assert "<script>alert" not in page.read_text(encoding="utf-8"), page
    body = built.body("cases/escaping")
    shown, raising, named = body.select("div.jaxhlo")
    # the caption: the text as written, no markup interpreted
    caption = shown.select_one(".caption-text")
    assert caption is not None and SPECIAL in caption.get_text(), shown
    assert not shown.select("script, em, cite")
    # a string inside the example
    assert f'"{SPECIAL}"' in shown.select_one("div.highlight-python").get_text()
    # a message raised by the example and a function name, in the error marks
    assert SPECIAL in raising.select_one(".jaxhlo-bad").get_text()
    assert f"function {SCRIPT_ALERT!r} is not defined" in named.select_one(".jaxhlo-bad").get_text()


def test_an_out_of_memory_title_gives_the_figures(built: Build) -> None:
    title = text(built.body("cases/oom").select_one(".jaxhlo-oom"))
    size = r"[\d.]+ [kKMGT]i?B"
    assert re.search(rf"does not fit on TPU v5e: needs {size} of temporaries, {size} available", title), title


def test_a_compile_warning_names_its_status_once(built: Build) -> None:
    messages = [w.message for w in jaxhlo_warnings(built) if w.type == "jaxhlo.compile"]
    assert messages and not [m for m in messages if re.search(r"\b([A-Z_]{5,}): \1:", m)], messages


# -- an interrupted build ------------------------------------------------------------


def slow_pages(src: Path, count: int) -> None:
    """A project whose examples after the first take a while each (a sleep at import)."""
    src.mkdir(parents=True)
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_targets = ["cpu"]\n', encoding="utf-8")
    names = [f"page{i}" for i in range(count)]
    (src / "index.rst").write_text("Pages\n=====\n\n.. toctree::\n\n" + "".join(f"   {n}\n" for n in names),
                                   encoding="utf-8")
    for i, name in enumerate(names):
        pause = "" if i == 0 else "import time\ntime.sleep(1.5)\n\n"
        code = f"{pause}import jax.numpy as jnp\n\ndef f{i}(x):\n    return jnp.sum(jnp.cos(x) * {i + 1})\n"
        (src / f"{name}.rst").write_text(f"Page {i}\n=======\n\n.. jax-hlo::\n   :args: f32[{32 + i}]\n\n"
                                         + "".join(f"   {ln}\n" if ln else "\n" for ln in code.splitlines()),
                                         encoding="utf-8")


def _children(pid: int) -> set[int]:
    """The children of every thread of ``pid`` (the build starts workers from its compile threads)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(p) for p in (task / "children").read_text().split()}
        except OSError:
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_gone(pids: set[int], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return {p for p in pids if _alive(p)}


def _kill_stragglers(pids: set[int]) -> None:
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


needs_proc = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc to find the worker")


@dataclass
class Interrupted:
    landed: int  # cache entries when the build was killed
    workers: set[int]  # the killed build's compile workers
    survivors: set[int]  # those still alive 30 s after the kill
    left_in_tmp: list[str]  # what the killed build left in its TMPDIR
    rerun: subprocess.CompletedProcess[str]
    out: Path
    cache: Path


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> Interrupted:
    """Kill a build (SIGKILL, its whole process group) mid-way; build again with the same folders."""
    tmp = tmp_path_factory.mktemp("interrupted")
    src, cache, out, doctrees, tmpdir = (tmp / n for n in ("src", "cache", "out", "doctrees", "tmp"))
    tmpdir.mkdir()
    slow_pages(src, 4)
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-N", "-d", str(doctrees), "-D",
           f"jaxhlo_cache_dir={cache}", str(src), str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        # killed once the first report is in the cache and the worker is running the second example
        while not (list(cache.rglob("*.json")) and list(tmpdir.glob("jaxhlo-worker-*/example-2"))):
            assert proc.poll() is None, "the build ended before its first compile landed in the cache"
            assert time.monotonic() < deadline, "no cache entry after 120 s"
            workers |= _children(proc.pid)
            time.sleep(0.05)
        workers |= _children(proc.pid)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    landed = len(list(cache.rglob("*.json")))
    survivors = _wait_gone(workers, 30)
    _kill_stragglers(survivors)
    left = sorted(str(p.relative_to(tmpdir)) for p in tmpdir.rglob("*"))
    # the same command again (same output, doctrees and cache folders), with warnings as errors
    rerun = subprocess.run([*cmd[:3], "-W", *cmd[3:]], capture_output=True, text=True, env=env, timeout=300)
    return Interrupted(landed, workers, survivors, left, rerun, out, cache)


@needs_proc
def test_a_build_killed_mid_way_leaves_a_cache_the_next_build_uses(interrupted: Interrupted) -> None:
    assert 1 <= interrupted.landed < 4, "the build was not killed mid-way"
    log = interrupted.rerun.stdout + interrupted.rerun.stderr
    assert interrupted.rerun.returncode == 0, log
    assert "WARNING" not in log and "Traceback" not in log, log
    m = re.search(r"jax-hlo: (\d+) compiled, (\d+) from cache, 0 failed", log)
    assert m and int(m.group(2)) >= interrupted.landed and int(m.group(1)) + int(m.group(2)) == 4, log
    for i in range(4):
        path = interrupted.out / f"page{i}.html"
        page = with_texts(BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser"), path)
        assert f"HloModule jit_f{i}" in text(page)
    assert len(list(interrupted.cache.rglob("*.json"))) == 4
    assert not list(interrupted.cache.rglob(".tmp-*"))


@needs_proc
def test_the_worker_of_a_killed_build_exits(interrupted: Interrupted) -> None:
    assert interrupted.workers, "the build had no compile worker"
    assert not interrupted.survivors, "the compile worker outlived its killed build"


@needs_proc
def test_the_worker_of_a_killed_build_removes_its_folder(interrupted: Interrupted) -> None:
    assert not interrupted.left_in_tmp, interrupted.left_in_tmp


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@needs_proc
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_a_stuck_worker_does_not_outlive_its_interrupted_build(tmp_path: Path, signum: int) -> None:
    src, tmpdir = tmp_path / "src", tmp_path / "tmp"
    src.mkdir()
    tmpdir.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_targets = ["cpu"]\n', encoding="utf-8")
    (src / "index.rst").write_text("Stuck\n=====\n\n.. jax-hlo::\n   :args: f32[3]\n   :timeout: 300\n\n"
                                   "   while True:\n       pass\n\n   def f(x):\n       return x\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-N", "-D", f"jaxhlo_cache_dir={tmp_path / 'cache'}",
           str(src), str(tmp_path / "out")]
    # Ctrl-C in a terminal reaches a build whose SIGINT is the default; a shell's background job (CI
    # started with `&` or nohup) passes SIGINT ignored to its children, so the build gets it back
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "TMPDIR": str(tmpdir)}, start_new_session=True,
                            preexec_fn=_default_sigint)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        # the worker is in the example once it has made the example's folder
        while not list(tmpdir.glob("jaxhlo-worker-*/example-1")):
            assert proc.poll() is None and time.monotonic() < deadline, "the example never started"
            workers |= _children(proc.pid)
            time.sleep(0.05)
        workers |= _children(proc.pid)
        time.sleep(0.5)
        os.killpg(proc.pid, signum)  # SIGINT: what Ctrl-C sends to the foreground process group
        proc.wait(timeout=60)
        survivors = _wait_gone(workers, 5)
    finally:
        proc.kill()
        proc.wait()
        _kill_stragglers(workers)
    assert workers and not survivors, f"worker(s) {sorted(survivors)} still running after the build ended"
