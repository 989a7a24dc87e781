"""Developer sessions: ``nox -s tests``, ``nox -s docs``, ``nox -s lint``, ``nox -s bench``, ...

Each session has its own environment under ``.nox/`` (about 1 GB each); the GPU
and TPU compilers (1.3 GB) are installed once, outside them, into the private
folder that only compile workers load (``python -m sphinx_jaxhlo compilers
install``, keyed by the jax version), so ``import jax`` in these environments
stays quiet.  ``nox -R -s docs`` reuses an environment without reinstalling it.
"""

from __future__ import annotations

import shutil

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["lint", "tests", "docs"]

#: What the PDF build runs, and the Debian packages that bring it.
TEX_TOOLS = ("latexmk", "pdflatex")
TEX_PACKAGES = "latexmk texlive-latex-recommended texlive-fonts-recommended texlive-latex-extra tex-gyre"


def install(session: nox.Session, extras: str) -> None:
    """Install the package with ``extras``, then the GPU and TPU compilers into
    their private folder (a no-op when it already holds them for this jax)."""
    session.install("-e", f".[{extras}]")
    session.run_install("python", "-m", "sphinx_jaxhlo", "compilers", "install")


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (GPU and TPU compiles included, through the compilers' private folder)."""
    install(session, "test")
    session.run("pytest", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site with warnings as errors (a broken claim in the guide fails it)."""
    install(session, "docs")
    session.run("sphinx-build", "-M", "html", "docs", "docs/_build", "-W", "--keep-going", "-n", *session.posargs)


@nox.session
def snapshots(session: nox.Session) -> None:
    """Compile every example of the docs again and rewrite docs/_snapshots (commit them afterwards)."""
    install(session, "docs")
    session.run("sphinx-build", "-M", "html", "docs", "docs/_build", "-E", "--keep-going", "-n", *session.posargs,
                env={"JAXHLO_SNAPSHOT_MODE": "refresh"})


#: The jax releases the compatibility check runs: the newest patch of each
#: supported minor (sphinx_jaxhlo.targets.TESTED_JAX says the same).
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

    ``nox -s "drift(jax='0.9.2')"`` one release.  Its TPU compiles take most of the time (20 to 40
    minutes on two cores).
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
def lint(session: nox.Session) -> None:
    """ruff and mypy."""
    session.install("-e", ".[lint,test]")
    session.run("ruff", "check", "sphinx_jaxhlo", "tests")
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
    ``nox -s mutation -- --jobs=2 analysis expectations`` the subset CI runs.
    mutmut edits the sources in place while it runs: leave the tree alone meanwhile.
    """
    session.install("-e", ".[test,mutation]")
    session.run("python", "mutmut_config.py", *session.posargs)
