"""Developer sessions: ``nox -s tests``, ``nox -s docs``, ``nox -s lint``, ``nox -s bench``, ``nox -s mutation``."""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["lint", "tests", "docs"]


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (GPU and TPU compiles included: the extras install their compilers)."""
    session.install("-e", ".[test,all]")
    session.run("pytest", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site with warnings as errors (a broken claim in the guide fails it)."""
    session.install("-e", ".[docs]")
    session.run("sphinx-build", "-M", "html", "docs", "docs/_build", "-W", "--keep-going", "-n", *session.posargs)


@nox.session
def pdf(session: nox.Session) -> None:
    """Build the docs as a PDF through LaTeX (needs latexmk and TeX Live; reuses the docs' report cache)."""
    session.install("-e", ".[docs]")
    session.run("sphinx-build", "-M", "latexpdf", "docs", "docs/_build", "-W", "--keep-going", *session.posargs)


@nox.session
def site(session: nox.Session) -> None:
    """Check the built site: its labels through intersphinx, and the pages in headless Chromium
    (tabs, collapsible HLO, console errors, light and dark screenshots in docs/_build/screenshots).

    Run ``nox -s docs`` first; the browser checks need Debian's ``chromium``.
    """
    session.install("-e", ".[docs,test]")
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
    session.install("-e", ".[docs]")
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
