"""Warnings that are about the build, not one example, still have a location.

A bad setting warns at the line of conf.py that sets it; a missing compiler warns
once, at the first example that needed it (tests/test_hardening.py builds that
case with real examples).  No compile here: the project has no example.
"""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest

CONF = """extensions = ["sphinx_jaxhlo"]
# settings of the test, one per line
jaxhlo_timeout = -5
jaxhlo_targets = [
    "cpu",
    "nosuch",
]
jaxhlo_workers: int = 2
"""


def build(src: Path, tmp_path: Path, **overrides: object) -> str:
    from sphinx.testing.util import SphinxTestApp

    warnings = StringIO()
    app = SphinxTestApp("html", srcdir=src, builddir=tmp_path / "build", warning=warnings,
                        confoverrides=overrides or None)
    try:
        app.build()
    finally:
        app.cleanup()
    return re.sub(r"\x1b\[[0-9;]*m", "", warnings.getvalue())


@pytest.fixture
def project(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(CONF, encoding="utf-8")
    (src / "index.rst").write_text("Title\n=====\n\nNo examples.\n", encoding="utf-8")
    return src


def config_warnings(log: str) -> list[tuple[str, str]]:
    """(location, message) of each ``jaxhlo.config`` warning."""
    return re.findall(r"^(\S*): WARNING: (jax-hlo: .*?) \[jaxhlo\.config\]$", log, re.MULTILINE)


def test_a_bad_setting_warns_at_its_line_of_conf_py(project: Path, tmp_path: Path) -> None:
    found = config_warnings(build(project, tmp_path))
    conf = project / "conf.py"
    assert [loc for loc, _ in found] == [f"{conf}:3", f"{conf}:4"]
    assert "jaxhlo_timeout" in found[0][1] and found[0][1].endswith("must be positive; using the default (None)")
    assert "unknown target 'nosuch'" in found[1][1]


def test_an_annotated_assignment_is_a_setting_line_too(project: Path, tmp_path: Path) -> None:
    found = config_warnings(build(project, tmp_path, jaxhlo_workers=-1))
    assert any(loc == f"{project / 'conf.py'}:8" and "jaxhlo_workers" in message for loc, message in found)


def test_a_setting_given_only_on_the_command_line(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\n', encoding="utf-8")
    (src / "index.rst").write_text("Title\n=====\n", encoding="utf-8")
    found = config_warnings(build(src, tmp_path, jaxhlo_timeout=-1))
    # conf.py does not set it: the warning points at the file, with no line
    assert [loc for loc, _ in found] == [f"{src / 'conf.py'}:"]
