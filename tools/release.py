"""What a release must agree on before it is published.

``nox -s wheel`` runs it on the files it built (``--dist``), and the release workflow
(.github/workflows/release.yml) with the pushed tag (``--tag``); tests/test_release.py
runs its checks on the clone.  The rules:

- the version is written in one place, ``sphinx_jaxhlo/core/version.py``, already in
  PEP 440's normal form (the form the built files are named by);
- docs/changelog.md opens with an ``## Unreleased`` section, and the next section is the
  version's own: ``## 0.1.0``, or ``## 0.1.0 (2026-12-10)`` with the date of the release;
- a tag is ``v`` and the version (``v0.1.0``);
- the built files are one wheel and one sdist of that version, whose metadata names the
  license (an SPDX expression and its file), the Python versions, the project's addresses,
  and only classifiers PyPI knows (PyPI refuses an upload with any other);
- the sdist is the source the wheel is built from: every file of the package in the clone
  (modules and package data), the metadata files, and nothing else: no tests (the suite
  reads the whole repository, docs and snapshots included; a release's tests run from its
  tag, MANIFEST.in says so), no docs, no build leftovers.

    python tools/release.py [--tag TAG] [--dist DIR]

It prints each problem on a line of its own and exits 1 when there is one.
"""

from __future__ import annotations

import argparse
import ast
import email.parser
import re
import sys
import tarfile
import zipfile
from collections.abc import Collection, Iterable
from pathlib import Path

from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parent.parent
VERSION_FILE = ROOT / "sphinx_jaxhlo" / "core" / "version.py"
CHANGELOG = ROOT / "docs" / "changelog.md"

#: The addresses every release's metadata names (``[project.urls]`` in pyproject.toml).
PROJECT_URLS = ("Homepage", "Documentation", "Source", "Changelog", "Issues")
#: The package's folder: everything in it goes into the sdist (and the wheel).
PACKAGE = ROOT / "sphinx_jaxhlo"
#: The sdist's files besides the package's, as setuptools writes them (the ``.egg-info`` folder too).
SDIST_FILES = frozenset({"PKG-INFO", "pyproject.toml", "setup.cfg", "README.md", "LICENSE", "MANIFEST.in"})
#: The classifier that makes the package show up among Sphinx extensions on PyPI.
SPHINX_CLASSIFIER = "Framework :: Sphinx :: Extension"


def source_version(path: Path = VERSION_FILE) -> str:
    """``__version__`` of ``path``, read without importing the package."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
                and any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets)):
            return node.value.value
    raise LookupError(f"{path} assigns no string to __version__")


def version_problems(version: str) -> list[str]:
    try:
        normal = str(Version(version))
    except InvalidVersion:
        return [f"version {version!r} ({VERSION_FILE.name}) is not a PEP 440 version"]
    if normal != version:
        return [f"version {version!r} ({VERSION_FILE.name}) is not in PEP 440's normal form: write {normal!r}"]
    return []


def changelog_problems(version: str, text: str) -> list[str]:
    """The changelog opens with ``## Unreleased``, then the section of ``version``."""
    headings = [(number, line[3:].strip()) for number, line in enumerate(text.splitlines(), 1)
                if line.startswith("## ")]
    if not headings or headings[0][1] != "Unreleased":
        return ["docs/changelog.md: the first section must be '## Unreleased'"]
    release = re.compile(rf"{re.escape(version)}(?: \(\d{{4}}-\d{{2}}-\d{{2}}\))?")
    if len(headings) < 2 or not release.fullmatch(headings[1][1]):
        found = f"'## {headings[1][1]}' (line {headings[1][0]})" if len(headings) > 1 else "nothing"
        return [f"docs/changelog.md: the section after '## Unreleased' must be the release's, "
                f"'## {version}' or '## {version} (YYYY-MM-DD)', not {found}"]
    return []


def tag_problems(version: str, tag: str) -> list[str]:
    if tag != f"v{version}":
        return [f"tag {tag!r} does not name the version {version!r} ({VERSION_FILE.name}): tag 'v{version}'"]
    return []


def dist_problems(version: str, names: Iterable[str]) -> list[str]:
    """One wheel and one sdist, both of ``version``."""
    names = sorted(names)
    expected = [f"sphinx_jaxhlo-{version}-py3-none-any.whl", f"sphinx_jaxhlo-{version}.tar.gz"]
    if sorted(expected) != names:
        return [f"the built files are {names}, not {expected}"]
    return []


def package_files(folder: Path = PACKAGE) -> list[str]:
    """The package's files in the clone, as paths from its root (``sphinx_jaxhlo/...``): what
    the sdist must carry.  Byte code and caches are not the package's."""
    return sorted(path.relative_to(folder.parent).as_posix() for path in folder.rglob("*")
                  if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc")


def sdist_problems(members: Iterable[str], package: Iterable[str]) -> list[str]:
    """What is wrong with an sdist's members (its ``tar`` names, under one top folder): a file of
    the package missing, or a file that is neither the package's nor metadata (tests, docs...)."""
    names = set()
    tops = set()
    for member in members:
        top, _, name = member.partition("/")
        tops.add(top)
        if name:
            names.add(name)
    problems = [] if len(tops) == 1 else [f"the sdist has {len(tops)} top folders, not one: {sorted(tops)}"]
    missing = sorted(set(package) - names)
    if missing:
        problems.append(f"the sdist lacks {len(missing)} file(s) of the package: {missing[:5]}")
    strays = sorted(name for name in names - set(package) - SDIST_FILES
                    if not name.startswith(("sphinx_jaxhlo/", "sphinx_jaxhlo.egg-info/")) and not name.endswith("/"))
    folders = sorted({name.split("/")[0] + ("/" if "/" in name else "") for name in strays})
    if strays:
        problems.append(f"the sdist carries {len(strays)} file(s) that are not the package's or its metadata "
                        f"({', '.join(folders)}): {strays[:5]}")
    return problems


def metadata_problems(metadata: str, known_classifiers: Collection[str]) -> list[str]:
    """What a wheel's METADATA lacks, or names that PyPI would refuse."""
    fields = email.parser.HeaderParser().parsestr(metadata)
    problems = []
    if fields.get("License-Expression") is None:
        problems.append("METADATA has no License-Expression")
    if not fields.get_all("License-File"):
        problems.append("METADATA names no License-File")
    if fields.get("Requires-Python") is None:
        problems.append("METADATA has no Requires-Python")
    urls = {value.split(",", 1)[0].strip() for value in fields.get_all("Project-URL") or ()}
    problems += [f"METADATA has no Project-URL {name!r}" for name in PROJECT_URLS if name not in urls]
    classifiers = fields.get_all("Classifier") or []
    if SPHINX_CLASSIFIER not in classifiers:
        problems.append(f"METADATA lacks the classifier {SPHINX_CLASSIFIER!r}")
    problems += [f"METADATA: PyPI does not know the classifier {name!r}" for name in classifiers
                 if name not in known_classifiers]
    return problems


def wheel_metadata(wheel: Path) -> tuple[str, list[str]]:
    """The wheel's METADATA text, and the license files it carries."""
    with zipfile.ZipFile(wheel) as archive:
        info = next(name for name in archive.namelist() if name.endswith(".dist-info/METADATA"))
        licenses = [name for name in archive.namelist() if "/licenses/" in name]
        return archive.read(info).decode("utf-8"), licenses


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python tools/release.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tag", help="the tag being released (v0.1.0)")
    parser.add_argument("--dist", type=Path, help="the folder with the built wheel and sdist")
    options = parser.parse_args(argv)
    version = source_version()
    problems = version_problems(version) + changelog_problems(version, CHANGELOG.read_text(encoding="utf-8"))
    if options.tag is not None:
        problems += tag_problems(version, options.tag)
    if options.dist is not None:
        files = [path for path in options.dist.iterdir() if path.is_file()]
        problems += dist_problems(version, (path.name for path in files))
        for sdist in (path for path in files if path.name.endswith(".tar.gz")):
            with tarfile.open(sdist) as archive:
                members = [m.name + ("/" if m.isdir() else "") for m in archive.getmembers()]
            problems += [f"{sdist.name}: {problem}" for problem in sdist_problems(members, package_files())]
        wheels = [path for path in files if path.suffix == ".whl"]
        if len(wheels) == 1:
            from trove_classifiers import classifiers  # installed by nox -s wheel

            metadata, licenses = wheel_metadata(wheels[0])
            problems += metadata_problems(metadata, classifiers)
            if not any(name.endswith("/LICENSE") for name in licenses):
                problems.append(f"{wheels[0].name} does not carry the LICENSE file")
    for problem in problems:
        print(f"release: {problem}", file=sys.stderr)
    if not problems:
        print(f"release: version {version}" + (f", tag {options.tag}" if options.tag else "")
              + (f", files in {options.dist}" if options.dist else "") + ": consistent")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
