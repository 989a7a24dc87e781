"""Developer sessions: ``nox -s tests``, ``nox -s docs``, ``nox -s lint``, ``nox -s bench``, ...

Each session has its own environment under ``.nox/`` (about 1 GB each); the GPU
and TPU compilers (1.3 GB) are installed once, outside them, into the private
folder that only compile workers load (``python -m sphinx_jaxhlo compilers
install``, keyed by the jax version), so ``import jax`` in these environments
stays quiet.  ``nox -R -s docs`` reuses an environment without reinstalling it.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import sys
import zipfile
from pathlib import Path

import nox
import nox.virtualenv

# uv where it is installed (``pip install nox uv``: environments in seconds, from one shared
# cache), else the standard library's venv.  A uv environment has no pip: ``compilers install``
# then installs with uv.
nox.options.default_venv_backend = "uv|venv"
nox.options.sessions = ["lint", "tests", "docs"]

#: What the PDF build runs, and the Debian packages that bring it.
TEX_TOOLS = ("latexmk", "pdflatex")
TEX_PACKAGES = "latexmk texlive-latex-recommended texlive-fonts-recommended texlive-latex-extra tex-gyre"


#: JAX's docs pins: the Sphinx part of jax-ml/jax's docs/requirements.txt (August 2026), which its
#: Read the Docs build installs (Python 3.12, CPU only, fail_on_warning).
JAX_DOCS_PINS = (
    "ipython>=8.8.0", "pydata-sphinx-theme==0.16.1", "snowballstemmer<3.0.0", "sphinx>=7.3.2,<8.0",
    "sphinx-book-theme==1.1.1", "sphinx-copybutton>=0.5.0", "sphinx-remove-toctrees", "sphinx-design",
    "sphinxext-rediraffe", "myst-nb>=1.0.0", "sphinxcontrib-mermaid", "filelock",
)

#: What the wheel must carry besides the modules (package data).
WHEEL_DATA = ("sphinx_jaxhlo/static/jaxhlo.css", "sphinx_jaxhlo/static/jaxhlo.js",
              "sphinx_jaxhlo/gpu_targets/h100.txtpb", "sphinx_jaxhlo/bundled/seed.py",
              "sphinx_jaxhlo/inventory/objects.inv")


def install(session: nox.Session, extras: str, compilers: bool = True) -> None:
    """Install the package with ``extras``, then the GPU and TPU compilers into
    their private folder (a no-op when it already holds them for this jax).

    :param compilers: ``False``: leave them out, for a build that compiles nothing.
    """
    session.install("-e", f".[{extras}]" if extras else ".")
    if compilers:
        session.run_install("python", "-m", "sphinx_jaxhlo", "compilers", "install")


@nox.session(name="compilers")
def install_compilers(session: nox.Session) -> None:
    """Install the GPU and TPU compilers of the environment's jax into their private folder
    (``python -m sphinx_jaxhlo compilers install``), once for every session that needs them:
    .ci/run does this before it runs sessions side by side."""
    install(session, "")


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (GPU and TPU compiles included, through the compilers' private folder)."""
    install(session, "test")
    session.run("pytest", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site with warnings as errors (a broken claim in the guide fails it).

    With ``JAXHLO_SNAPSHOT_MODE=use`` (a docs host: every report from the committed
    snapshots, nothing compiled, jax not even imported) the GPU and TPU compilers
    (1.3 GB) are not installed; otherwise an example without a snapshot compiles.
    """
    install(session, "docs", compilers=os.environ.get("JAXHLO_SNAPSHOT_MODE") != "use")
    session.run("sphinx-build", "-M", "html", "docs", "docs/_build", "-W", "--keep-going", "-n", *session.posargs)


@nox.session
def snapshots(session: nox.Session) -> None:
    """Compile every example of the docs again and rewrite docs/_snapshots (commit them afterwards)."""
    install(session, "docs")
    session.run("sphinx-build", "-M", "html", "docs", "docs/_build", "-E", "--keep-going", "-n", *session.posargs,
                env={"JAXHLO_SNAPSHOT_MODE": "refresh"})


#: The jax releases the compatibility check runs: the newest patch of each
#: supported minor (sphinx_jaxhlo.core.targets.TESTED_JAX says the same).
COMPAT_JAX = ("0.8.3", "0.9.2", "0.10.2")


@nox.session
@nox.parametrize("jax", COMPAT_JAX)
def compat(session: nox.Session, jax: str) -> None:
    """One supported jax release: install it and its compilers, compile the seed, a gradient and a
    sharded product on cpu, gpu:h100, tpu:v5e and the 8-device targets, and check the reports'
    memory figures against that jax's own ``memory_analysis()`` (tools/compat.py).

    ``nox -s compat`` runs every release; ``nox -s "compat(jax='0.9.2')"`` one.  The compilers
    (1.3 GB per release) go into the private folder once, keyed by the jax version.
    """
    session.install("-e", ".", f"jax=={jax}", f"jaxlib=={jax}")
    session.run_install("python", "-m", "sphinx_jaxhlo", "compilers", "install")
    session.run("python", "tools/compat.py", *session.posargs)


#: The older releases the drift page compares with the docs' own snapshots.
DRIFT_JAX = ("0.8.3", "0.9.2")


@nox.session
@nox.parametrize("jax", DRIFT_JAX)
def drift(session: nox.Session, jax: str) -> None:
    """Compile the guide with an older jax into docs/_drift/jax-<version> (commit it): the drift page
    (docs/drift.md) compares those snapshots with docs/_snapshots at every docs build, without that jax.

    ``nox -s "drift(jax='0.9.2')"`` one release.  Its TPU compiles take most of the time (about an
    hour of two idle cores per release: docs/releasing.md).
    """
    session.install("-e", ".[myst]", f"jax=={jax}", f"jaxlib=={jax}")
    session.run_install("python", "-m", "sphinx_jaxhlo", "compilers", "install")
    session.run("python", "tools/drift.py", *session.posargs)


@nox.session
def pdf(session: nox.Session) -> None:
    """Build the docs as a PDF through LaTeX (needs latexmk and TeX Live; reuses the docs' report cache)."""
    missing = [tool for tool in TEX_TOOLS if shutil.which(tool) is None]
    if missing:
        session.error(
            f"the PDF build needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not on PATH: "
            f"install TeX Live, e.g. on Debian or Ubuntu `sudo apt-get install {TEX_PACKAGES}`, "
            "on macOS MacTeX (`brew install --cask mactex`); or build the HTML site with `nox -s docs`"
        )
    install(session, "docs")
    session.run("sphinx-build", "-M", "latexpdf", "docs", "docs/_build", "-W", "--keep-going", *session.posargs)


@nox.session
def site(session: nox.Session) -> None:
    """Check the built site: its labels through intersphinx, and the pages in headless Chromium
    (tabs, collapsible HLO, console errors, light and dark screenshots in docs/_build/screenshots).

    Run ``nox -s docs`` first; the browser checks need Debian's ``chromium``.
    """
    install(session, "docs,test")
    session.run("pytest", "tests/test_site.py", "tests/test_browser.py", "-v",
                env={"JAXHLO_DOCS_HTML": "docs/_build/html", "JAXHLO_SCREENSHOTS": "docs/_build/screenshots"})


@nox.session
def jaxdocs(session: nox.Session) -> None:
    """The extension under JAX's own docs pins (Sphinx 7.4, myst-nb, sphinx-book-theme 1.1.1):
    pip installs the package beside them, with its dependencies (no ``--no-deps``); a
    project configured like JAX's docs (MyST pages, an ``.ipynb`` notebook with examples,
    a sharded page written as JAX's, MyST-NB executing the notebooks) builds with JAX's
    command and ``-j 2 -W``: cold twice (no hang, every compile ahead of its page,
    byte-identical snapshots), in check mode on those snapshots, from the snapshots with
    the compilers hidden, and incrementally (tests/test_jaxdocs.py); linking.md's
    snippets build there (tests/test_linking.py), and the Sphinx-version checks of
    tests/test_sphinx_compat.py run on that Sphinx.
    """
    session.install(*JAX_DOCS_PINS)
    session.install(".")  # a plain install, as a docs host would make it; pip must accept the pins
    session.install("pytest>=8", "beautifulsoup4>=4.12", "defusedxml")
    if session.venv_backend == "uv":
        # Read the Docs installs with pip: its resolver must accept the package beside the pins too
        session.install("pip")
        session.run("python", "-m", "pip", "install", "--dry-run", "--quiet", *JAX_DOCS_PINS, ".")
    session.run_install("python", "-m", "sphinx_jaxhlo", "compilers", "install")
    session.run("python", "-c", "import sphinx, myst_nb, sphinx_book_theme; "
                "assert sphinx.version_info[:2] < (8, 0), sphinx.__version__; "
                "print('Sphinx', sphinx.__version__, 'myst-nb', myst_nb.__version__, "
                "'sphinx-book-theme', sphinx_book_theme.__version__)")
    # the installed package, not the clone: run from tests/ (pytest puts that folder first on the path)
    session.run("pytest", "tests/test_jaxdocs.py", "tests/test_linking.py", "tests/test_sphinx_compat.py",
                "-p", "no:cacheprovider",
                "-o", "addopts=-ra", *session.posargs, env={"PYTHONPATH": ""})


def readme_block(marker: str) -> str:
    """The README's fenced block that contains ``marker``."""
    text = Path("README.md").read_text(encoding="utf-8")
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.S | re.M):
        if marker in block:
            return block
    raise LookupError(f"README.md has no block with {marker!r}")


@nox.session
def wheel(session: nox.Session) -> None:
    """The release's files, built and tried as a user gets them.

    Builds the sdist and, from it, the wheel (``python -m build``), checks them (``twine check
    --strict``; the package data in the wheel; tools/release.py: one place for the version, the
    changelog's section, the metadata and its classifiers, an sdist of the package and its metadata
    alone, no tests: MANIFEST.in), then installs the wheel with the
    README's extra (``[myst]``) into a clean environment of its own, which holds nothing but the
    wheel and its dependencies (not even build and twine), and runs there, outside the clone:
    tools/wheel_smoke.py (import, ``analyze()`` on cpu, a two-page Sphinx site with a ``jax-hlo``
    example on each page), then, with the GPU and TPU compilers, the README's quick start
    (``analyze()``) and its command line on the seed example that ships in the package.

    ``nox -s wheel -- --dist DIR`` leaves the sdist and the wheel in DIR (the release workflow
    publishes them from there); ``--release TAG`` also checks that TAG is ``v`` and the version.
    """
    parser = argparse.ArgumentParser(prog="nox -s wheel --")
    parser.add_argument("--dist", type=Path, help="where to leave the sdist and the wheel")
    parser.add_argument("--release", metavar="TAG", help="the tag being released: it must be v<version>")
    options = parser.parse_args(session.posargs)
    session.install("build>=1.0", "twine>=6.1", "trove-classifiers", "packaging>=23")
    tmp = Path(session.create_tmp()).resolve()
    dist = options.dist.resolve() if options.dist else tmp / "dist"
    dist.mkdir(parents=True, exist_ok=True)
    for earlier in dist.glob("sphinx_jaxhlo-*"):  # an earlier build's files; anything else fails the check below
        earlier.unlink()
    session.run("python", "-m", "build", "--outdir", str(dist), ".")
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        session.error(f"expected one wheel and one sdist in {dist}, found {[p.name for p in dist.iterdir()]}")
    session.run("twine", "check", "--strict", str(wheels[0]), str(sdists[0]))
    names = set(zipfile.ZipFile(wheels[0]).namelist())
    missing = [name for name in WHEEL_DATA if name not in names]
    if missing:
        session.error(f"the wheel lacks {missing}")
    session.run("python", "tools/release.py", "--dist", str(dist),
                *(["--tag", options.release] if options.release else []))
    version = wheels[0].name.split("-")[1]

    # A clean environment: the wheel and its dependencies, nothing else.
    clean = tmp / "clean"
    shutil.rmtree(clean, ignore_errors=True)
    python = str(clean / "bin" / "python")
    requirement = f"{wheels[0]}[myst]"  # the README's `pip install --find-links dist "sphinx-jaxhlo[myst]"`
    if session.venv_backend == "uv":
        uv = getattr(nox.virtualenv, "UV", "uv")  # the uv nox itself uses (on PATH, or its Python's module)
        session.run(uv, "venv", "--quiet", "--python", sys.executable, str(clean), external=True)
        session.run(uv, "pip", "install", "--quiet", "--python", python, requirement, external=True)
    else:
        session.run(sys.executable, "-m", "venv", str(clean), external=True)
        session.run(python, "-m", "pip", "install", "--quiet", requirement, external=True)
    work = tmp / "try"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    outside = {"PYTHONPATH": "", "VIRTUAL_ENV": str(clean),
               "PATH": os.pathsep.join([str(clean / "bin"), os.environ.get("PATH", "")])}
    smoke = str(Path("tools/wheel_smoke.py").resolve())
    (work / "quickstart.py").write_text(readme_block("sphinx_jaxhlo.analyze("), encoding="utf-8")
    command = readme_block("python -m sphinx_jaxhlo docs/examples/seed.py").strip()
    with session.chdir(work):  # nothing of the clone on the path
        session.run(python, smoke, version, str(work / "smoke"), env=outside, external=True)
        session.run(python, "-m", "sphinx_jaxhlo", "compilers", "install", env=outside, external=True)
        session.run(python, "quickstart.py", env=outside, external=True)
        session.run(python, "-m", "sphinx_jaxhlo", "example", "seed.py", env=outside, external=True)
        args = shlex.split(command.replace("docs/examples/seed.py", "seed.py"))
        session.run(python, *args[1:], env=outside, external=True)
        session.run(str(clean / "bin" / "jaxhlo"), "--version", env=outside, external=True)


#: The GitHub Actions workflows that ``nox -s lint`` checks.
WORKFLOWS = ".github/workflows"
#: Read the Docs' configuration, which ``nox -s lint`` checks against its schema.
READTHEDOCS = ".readthedocs.yaml"


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, mypy, the GitHub Actions workflows against the workflow schema that
    check-jsonschema ships (a misspelt key, a wrong value type or an unknown permission
    fails it; no network: the schema is in the package), zizmor's audit of the
    workflows (an action not pinned to a commit, credentials left in the checkout,
    template injection...; offline, every audit: ``--persona=pedantic``), and
    ``.readthedocs.yaml`` against Read the Docs' schema.

    ``nox -s lint -- FILE.yml`` checks that workflow file alone."""
    session.install("-e", ".[lint,test]")
    workflows = session.posargs or sorted(str(path) for path in Path(WORKFLOWS).glob("*.y*ml"))
    if not workflows:
        session.error(f"no workflow in {WORKFLOWS}")
    session.run("check-jsonschema", "--builtin-schema", "vendor.github-workflows", *workflows)
    session.run("zizmor", "--offline", "--persona=pedantic", "--no-progress", *workflows)
    if session.posargs:
        return
    session.run("check-jsonschema", "--builtin-schema", "vendor.readthedocs", READTHEDOCS)
    session.run("ruff", "check", "sphinx_jaxhlo", "tests", "tools", "noxfile.py")
    session.run("mypy")


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks: ratios measured side by side in one run (see docs/performance.md)."""
    install(session, "docs")
    session.run("python", "benchmarks/bench.py", *session.posargs)


@nox.session
def mutation(session: nox.Session) -> None:
    """Mutation testing of the semantic core: the share of small planted bugs that
    the fast unit tests catch, per module (goal: 85 %; see docs/development.md).

    ``nox -s mutation`` runs every module (an hour or more on two cores);
    ``nox -s mutation -- --jobs=2 analysis expectations`` two modules (CI runs neither: see docs/development.md).
    mutmut edits the sources in place while it runs: leave the tree alone meanwhile.
    """
    session.install("-e", ".[test,mutation]")
    session.run("python", "mutmut_config.py", *session.posargs)
