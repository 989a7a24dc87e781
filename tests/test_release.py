"""The release: tools/release.py's rules on this clone and on broken inputs, and what the
release workflow must say that its schema check (``nox -s lint``) cannot: each job it
waits for exists, and it publishes by trusted publishing (an OpenID Connect token in the
``pypi`` and ``testpypi`` environments), never with a stored password or token.

``nox -s wheel`` builds the files and runs tools/release.py on them.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
PUBLISH = "pypa/gh-action-pypi-publish@"


def load_release() -> ModuleType:
    spec = importlib.util.spec_from_file_location("jaxhlo_release_tool", ROOT / "tools" / "release.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


release = load_release()


def test_this_clone_agrees_with_itself() -> None:
    import sphinx_jaxhlo

    version = release.source_version()
    assert version == sphinx_jaxhlo.__version__
    assert release.version_problems(version) == []
    assert release.changelog_problems(version, release.CHANGELOG.read_text(encoding="utf-8")) == []
    assert release.tag_problems(version, f"v{version}") == []
    # the version comes from that one file, not from a second copy in pyproject.toml
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["dynamic"] == ["version"] and "version" not in project["project"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "sphinx_jaxhlo.core.version.__version__"}


@pytest.mark.parametrize(("version", "says"), [("v0.1.0", "normal form"), ("1.0.0-rc1", "normal form"),
                                               ("one", "not a PEP 440")])
def test_a_version_not_in_normal_form_is_refused(version: str, says: str) -> None:
    (problem,) = release.version_problems(version)
    assert says in problem


def test_a_tag_names_the_version() -> None:
    (problem,) = release.tag_problems("0.1.0", "v0.1.1")
    assert "'v0.1.1'" in problem and "tag 'v0.1.0'" in problem
    assert release.tag_problems("0.1.0", "0.1.0")  # the v is part of the tag


@pytest.mark.parametrize(("text", "says"), [
    ("# Changelog\n\n## 0.1.0\n", "first section must be '## Unreleased'"),
    ("# Changelog\n\n## Unreleased\n\n- a change\n", "not nothing"),
    ("# Changelog\n\n## Unreleased\n\n## 0.1.0 (unreleased)\n", "not '## 0.1.0 (unreleased)' (line 5)"),
    ("# Changelog\n\n## Unreleased\n\n## 0.0.9\n\n## 0.1.0\n", "not '## 0.0.9'"),
])
def test_the_changelog_has_the_release_below_unreleased(text: str, says: str) -> None:
    (problem,) = release.changelog_problems("0.1.0", text)
    assert says in problem
    assert release.changelog_problems("0.1.0", "## Unreleased\n\n## 0.1.0 (2026-12-10)\n- x\n") == []


def test_the_built_files_are_one_wheel_and_one_sdist_of_the_version() -> None:
    good = ["sphinx_jaxhlo-0.1.0.tar.gz", "sphinx_jaxhlo-0.1.0-py3-none-any.whl"]
    assert release.dist_problems("0.1.0", good) == []
    assert release.dist_problems("0.1.1", good)
    assert release.dist_problems("0.1.0", good[:1])
    assert release.dist_problems("0.1.0", [*good, "sphinx_jaxhlo-0.0.9.tar.gz"])


METADATA = """\
Metadata-Version: 2.4
Name: sphinx-jaxhlo
Version: 0.1.0
Classifier: Framework :: Sphinx :: Extension
Classifier: Topic :: Documentation :: Sphinx
Requires-Python: >=3.11
License-Expression: Apache-2.0
License-File: LICENSE
Project-URL: Homepage, https://example.org/h
Project-URL: Documentation, https://example.org/d
Project-URL: Source, https://example.org/s
Project-URL: Changelog, https://example.org/c
Project-URL: Issues, https://example.org/i

The description.
"""
KNOWN = {"Framework :: Sphinx :: Extension", "Topic :: Documentation :: Sphinx"}


def test_metadata_names_license_python_addresses_and_known_classifiers() -> None:
    assert release.metadata_problems(METADATA, KNOWN) == []
    broken = (METADATA.replace("License-Expression: Apache-2.0\n", "").replace("Project-URL: Issues, "
              "https://example.org/i\n", "").replace("Framework :: Sphinx :: Extension", "Framework :: Sphinx :: Ext"))
    problems = release.metadata_problems(broken, KNOWN)
    assert problems == ["METADATA has no License-Expression", "METADATA has no Project-URL 'Issues'",
                        "METADATA lacks the classifier 'Framework :: Sphinx :: Extension'",
                        "METADATA: PyPI does not know the classifier 'Framework :: Sphinx :: Ext'"]


# -- the workflow ----------------------------------------------------------------------------


def workflow() -> dict[str, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as True
    data["on"] = data.pop(True, data.get("on"))
    return data


def publish_steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for step in job["steps"] if str(step.get("uses", "")).startswith(PUBLISH)]


def test_every_job_waits_only_for_jobs_that_exist() -> None:
    jobs = workflow()["jobs"]
    for name, job in jobs.items():
        needs = job.get("needs", [])
        for need in [needs] if isinstance(needs, str) else needs:
            assert need in jobs, f"job {name} needs {need!r}, which the workflow does not define"


def test_the_workflow_builds_once_and_publishes_by_trusted_publishing() -> None:
    data = workflow()
    assert "tags" in data["on"]["push"] and "workflow_dispatch" in data["on"]
    assert data["permissions"] == {"contents": "read"}  # nothing more, unless a job asks
    jobs = data["jobs"]
    builders = [name for name, job in jobs.items() if not publish_steps(job)]
    assert builders == ["build"]
    assert any("nox -s wheel" in step.get("run", "") for step in jobs["build"]["steps"])
    assert any(str(step.get("uses", "")).startswith("actions/upload-artifact@") for step in jobs["build"]["steps"])
    publishers = {name: job for name, job in jobs.items() if publish_steps(job)}
    environments = {job["environment"]["name"]: job for job in publishers.values()}
    assert set(environments) == {"pypi", "testpypi"}
    for name, job in environments.items():
        assert job["needs"] == "build" and job["permissions"] == {"id-token": "write"}, name
        assert not any("checkout" in str(step.get("uses", "")) for step in job["steps"]), name  # no rebuild
        (step,) = publish_steps(job)
        inputs = step.get("with", {})
        assert not {"password", "user"} & set(inputs), f"{name} publishes with a stored credential"
        assert inputs.get("repository-url") == ("https://test.pypi.org/legacy/" if name == "testpypi" else None)
    assert "tags" in environments["pypi"]["if"] and "workflow_dispatch" in environments["testpypi"]["if"]
    assert "secrets." not in WORKFLOW.read_text(encoding="utf-8")


#: A step's action pinned to a commit, the release's tag named beside it: ``owner/name@<40 hex>  # v1.2.3``.
PINNED = re.compile(r"^\s*-?\s*uses:\s*(?P<action>[\w.-]+/[\w./-]+)@(?P<ref>\S+)(?:\s+#\s*(?P<tag>\S+))?\s*$")


def test_every_action_is_pinned_to_a_commit_with_its_tag_named() -> None:
    """zizmor (``nox -s lint``) refuses an action by tag; this says which line, without zizmor installed."""
    uses = [line for line in WORKFLOW.read_text(encoding="utf-8").splitlines() if re.match(r"^\s*-?\s*uses:", line)]
    assert len(uses) >= 5
    for line in uses:
        m = PINNED.match(line)
        assert m is not None, line
        assert re.fullmatch(r"[0-9a-f]{40}", m["ref"]), f"not pinned to a commit: {line.strip()}"
        assert m["tag"] and re.fullmatch(r"v\d+(\.\d+)*", m["tag"]), f"the tag is not named: {line.strip()}"
    # one release of each action in the whole workflow
    by_action: dict[str, set[str]] = {}
    for line in uses:
        m = PINNED.match(line)
        assert m is not None
        by_action.setdefault(m["action"], set()).add(f"{m['ref']} {m['tag']}")
    assert all(len(refs) == 1 for refs in by_action.values()), by_action


def test_zizmor_finds_nothing() -> None:
    """The audit ``nox -s lint`` runs, offline (it reaches no GitHub), with every audit zizmor has."""
    zizmor = shutil.which("zizmor", path=str(Path(sys.executable).parent)) or shutil.which("zizmor")
    if zizmor is None:
        pytest.skip("zizmor is not installed (pip install zizmor; nox -s lint installs it)")
    run = subprocess.run([zizmor, "--offline", "--persona=pedantic", "--no-progress", str(WORKFLOW.parent)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_sdist_is_the_package_and_its_metadata_and_no_tests() -> None:
    package = ["sphinx_jaxhlo/__init__.py", "sphinx_jaxhlo/static/jaxhlo.css"]
    good = ["sphinx_jaxhlo-0.1.0/", "sphinx_jaxhlo-0.1.0/PKG-INFO", "sphinx_jaxhlo-0.1.0/pyproject.toml",
            "sphinx_jaxhlo-0.1.0/LICENSE", "sphinx_jaxhlo-0.1.0/sphinx_jaxhlo.egg-info/SOURCES.txt",
            *(f"sphinx_jaxhlo-0.1.0/{name}" for name in package)]
    assert release.sdist_problems(good, package) == []
    # tests without what they need (the setuptools default: tests/test*.py)
    (problem,) = release.sdist_problems([*good, "sphinx_jaxhlo-0.1.0/tests/test_api.py"], package)
    assert "(tests/)" in problem and "tests/test_api.py" in problem
    (problem,) = release.sdist_problems(good[:-1], package)  # package data left out
    assert "lacks 1 file(s)" in problem and "sphinx_jaxhlo/static/jaxhlo.css" in problem
    # the clone's package: modules and data, no byte code
    files = release.package_files()
    assert "sphinx_jaxhlo/__init__.py" in files and "sphinx_jaxhlo/static/jaxhlo.css" in files
    assert not [name for name in files if name.endswith(".pyc")]


def test_manifest_keeps_the_tests_out_of_the_sdist() -> None:
    lines = [ln.split("#")[0].split() for ln in (ROOT / "MANIFEST.in").read_text(encoding="utf-8").splitlines()]
    assert ["prune", "tests"] in lines
