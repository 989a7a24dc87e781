"""Every builder: the test roots build without exceptions, and the examples reach each output.

Each root is built once with ``html`` (which reads the sources and compiles the
examples), then with every other builder on the same doctrees, so each builder
writes from the same environment; ``test-basic`` is also read afresh (``-E``)
by each builder, from a warm cache.  The LaTeX output is compiled to PDF where
a TeX installation is present.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOTS = Path(__file__).parent / "roots"
BUILDERS = ["html", "dirhtml", "singlehtml", "latex", "text", "man", "texinfo", "epub", "xml"]

#: Builders whose output is markup a browser or an XML reader interprets.
MARKUP = {"html", "dirhtml", "singlehtml", "epub", "xml"}

#: Text each root's outputs must contain, per builder family: (file glob, text).
EXPECTED = {
    "basic": {
        "text": [("index.txt", "def phase_sum(pos, hkl):"), ("index.txt", "f32[50000,100000]"),
                 ("index.txt", "HloModule jit_phase_sum"), ("index.txt", "HloModule jit_scaled")],
        "xml": [("index.xml", "def phase_sum(pos, hkl):"), ("index.xml", "f32[50000,100000]"),
                ("index.xml", "HloModule jit_phase_sum"), ("index.xml", "HloModule jit_scaled")],
    },
    "hardening": {
        "text": [("good.txt", "def good_sum(x):"), ("good.txt", "HloModule jit_good_sum"),
                 ("good.txt", "HloModule jit_good_matvec"),
                 ("cases/escaping.txt", "<script>alert(1)</script> `tick` |sub| *star*"),
                 ("cases/empty.txt", "jax-hlo example could not be built: the example has no code"),
                 ("cases/timeout.txt", "compiling f for cpu took longer than 3 s")],
        "xml": [("good.xml", "def good_sum(x):"), ("good.xml", "HloModule jit_good_sum"),
                ("cases/escaping.xml", "&lt;script&gt;alert(1)&lt;/script&gt; `tick` |sub| *star*"),
                ("cases/empty.xml", "jax-hlo example could not be built: the example has no code")],
    },
}


def run_sphinx(src: Path, out: Path, builder: str, doctrees: Path, cache: Path, *args: str) -> tuple[int, str]:
    cmd = [sys.executable, "-m", "sphinx", "-b", builder, "-N", "-d", str(doctrees), "-D",
           f"jaxhlo_cache_dir={cache}", *args, str(src), str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


class Project:
    """A copy of a test root with its html build done (sources read, examples compiled)."""

    def __init__(self, base: Path, root: str) -> None:
        self.root = root
        self.base = base
        self.src = base / "src"
        shutil.copytree(ROOTS / f"test-{root}", self.src)
        if root == "hardening":
            (base / "outside.py").write_text("def f(x):\n    return x + 1\n", encoding="utf-8")
        self.cache = base / "cache"
        self.doctrees = base / "doctrees"
        self.outputs: dict[str, tuple[int, str]] = {}

    def build(self, builder: str, *args: str) -> tuple[Path, int, str]:
        out = self.base / builder
        rc, log = run_sphinx(self.src, out, builder, self.doctrees, self.cache, *args)
        self.outputs[builder] = (rc, log)
        return out, rc, log

    def output(self, builder: str) -> Path:
        """The output folder of a builder, built now unless a test already did."""
        if builder not in self.outputs:
            self.build(builder)
        assert_clean(*self.outputs[builder])
        return self.base / builder


@pytest.fixture(scope="module", params=["basic", "hardening"])
def project(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Project:
    proj = Project(tmp_path_factory.mktemp(request.param), request.param)
    proj.build("html")
    return proj


def assert_clean(rc: int, log: str) -> None:
    assert rc == 0, log
    assert "Exception occurred" not in log and "Traceback" not in log, log


@pytest.mark.parametrize("builder", BUILDERS)
def test_builder_writes_every_root_without_exceptions(project: Project, builder: str) -> None:
    out, rc, log = project.build(builder) if builder != "html" else (project.base / "html", *project.outputs["html"])
    assert_clean(rc, log)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files, f"{builder} wrote nothing"
    if builder in MARKUP:
        for path in files:
            if path.suffix in (".html", ".xhtml", ".xml"):
                assert "<script>alert" not in path.read_text(encoding="utf-8"), path
    for glob, expected in EXPECTED[project.root].get(builder, []):
        assert expected in (out / glob).read_text(encoding="utf-8"), (glob, expected)
    if builder == "latex":
        tex = next(out.glob("*.tex")).read_text(encoding="utf-8")
        assert "def" in tex and ("phase\\_sum" in tex or "good\\_sum" in tex)


@pytest.mark.parametrize("project", ["basic"], indirect=True)
@pytest.mark.parametrize("builder", [b for b in BUILDERS if b != "html"])
def test_builder_reads_afresh_from_a_warm_cache(project: Project, builder: str) -> None:
    """``test-basic`` read by each builder itself (``-E``, doctrees of its own), from the cache html filled."""
    out = project.base / f"fresh-{builder}"
    rc, log = run_sphinx(project.src, out, builder, project.base / f"doctrees-{builder}", project.cache, "-E")
    assert_clean(rc, log)
    assert "jax-hlo: 0 compiled, 2 from cache, 0 failed" in log, log
    for glob, expected in EXPECTED["basic"].get(builder, []):
        assert expected in (out / glob).read_text(encoding="utf-8"), (glob, expected)


# -- LaTeX ------------------------------------------------------------------------------

#: Environments inside which LaTeX accepts ``\caption``.
FLOATS = {"figure", "figure*", "table", "table*", "wrapfigure", "longtable", "sphinxfigure-in-table"}

#: Characters beyond ASCII that pdflatex (Sphinx's default engine: utf8 inputenc, T1 fonts) typesets.
PDFLATEX_SAFE = set("‘’“”…—–") | {chr(c) for c in range(0xA0, 0x100)}


def captions_outside_floats(tex: str) -> list[str]:
    import re

    stack: list[str] = []
    bad = []
    for m in re.finditer(r"\\(begin|end)\{([^}]*)\}|\\caption\{([^}\n]{0,60})", tex):
        if m.group(1) == "begin":
            stack.append(m.group(2))
        elif m.group(1) == "end":
            if m.group(2) in stack:
                del stack[len(stack) - 1 - stack[::-1].index(m.group(2)):]
        elif not FLOATS & set(stack):
            bad.append(f"\\caption{{{m.group(3)}... inside {stack}")
    return bad


def test_latex_captions_are_inside_floats(project: Project) -> None:
    """An example's caption outside a float would stop pdflatex ('\\caption outside float');
    it is typeset as a bold paragraph instead."""
    tex = next(project.output("latex").glob("*.tex")).read_text(encoding="utf-8")
    assert not captions_outside_floats(tex)
    if project.root == "basic":
        assert "\\sphinxstylestrong{The seed, with jnp.dot}" in tex


@pytest.mark.parametrize("project", ["hardening"], indirect=True)
def test_latex_output_has_only_characters_pdflatex_typesets(project: Project) -> None:
    tex = next(project.output("latex").glob("*.tex")).read_text(encoding="utf-8")
    assert "jaxhlo-fail" in (project.base / "html" / "cases" / "expected-error.html").read_text(encoding="utf-8")
    unsafe = sorted({ch for ch in tex if ord(ch) > 0x7F and ch not in PDFLATEX_SAFE})
    assert not unsafe, unsafe


def test_the_docs_use_only_characters_their_pdf_build_typesets() -> None:
    """The guide's PDF (``nox -s pdf``) stops at the first character pdflatex has no
    glyph for: every one beyond Latin-1 in the docs' sources is declared in the
    preamble of docs/conf.py."""
    import re

    docs = Path(__file__).resolve().parents[1] / "docs"
    declared = {chr(int(code, 16))
                for code in re.findall(r"DeclareUnicodeCharacter\{([0-9A-Fa-f]+)\}", (docs / "conf.py").read_text())}
    missing: dict[str, set[str]] = {}
    for page in [*docs.rglob("*.md"), *docs.rglob("*.rst"), *docs.rglob("*.py")]:
        if {"_build", "_snapshots"} & set(page.relative_to(docs).parts):
            continue
        for ch in set(page.read_text(encoding="utf-8")):
            if ord(ch) > 0x7F and ch not in PDFLATEX_SAFE and ch not in declared:
                missing.setdefault(f"U+{ord(ch):04X} {ch}", set()).add(str(page.relative_to(docs)))
    assert not missing, missing


TEX_TOOLS = [shutil.which("latexmk"), shutil.which("pdflatex")]


@pytest.mark.skipif(not all(TEX_TOOLS), reason=(
    "no latexmk/pdflatex here; on Debian 12 a CI job can install them with "
    "`apt-get install latexmk texlive-latex-recommended texlive-fonts-recommended texlive-latex-extra tex-gyre`"))
def test_latex_output_compiles_to_pdf(project: Project) -> None:
    out = project.output("latex")
    make = subprocess.run(["make", "-C", str(out), "all-pdf", "LATEXMKOPTS=-interaction=nonstopmode -halt-on-error"],
                          capture_output=True, text=True, timeout=600)
    assert make.returncode == 0, make.stdout[-5000:] + make.stderr[-5000:]
    assert list(out.glob("*.pdf"))
