"""The shell and Python blocks of README.md and docs/quickstart.md run as written.

Every such block is one of:

- **run**: executed as written, in order, from a fresh copy of the clone
  (tracked and untracked-but-not-ignored files, as ``git clone`` would give):
  shell blocks with ``bash -e``, Python blocks saved to a file and run with
  ``python FILE``; ``python`` and the tools on ``PATH`` are those of the
  environment running the tests.
- **file**: a block whose first line names a file (``# mydocs/conf.py``,
  ``<!-- mydocs/index.md -->``) is written there before the blocks after it run.
- **fragment**: a block whose first line is a comment that says ``fragment``
  (lines to add to a file of the reader's own); not run.
- **install**: a block that makes a virtual environment and installs into it.
  Checked cheaply by default: every extra it names exists in pyproject.toml,
  it installs from the clone (``pip install ".[myst]"``) or from a wheel built
  there (``--find-links dist``), never from PyPI while the package is not
  released there (docs/changelog.md has no dated release), and each
  ``compilers install`` command runs with ``--dry-run`` (its flags parse; the
  pinned pip commands are printed, nothing is installed).  With
  ``JAXHLO_TEST_INSTALL=1`` it really runs as written, in the fresh copy
  (network, a few minutes), and the blocks after it use the environment it made.
- **long**: a block that runs nox sessions (a docs build: minutes).  Checked
  cheaply: every session it names exists in noxfile.py (CI runs the sessions
  themselves).

A block that is none of these fails the test: make it run, or mark it a fragment.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from sphinx_jaxhlo.core import compilers as plugins

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = ("README.md", "docs/quickstart.md")
SHELL = ("sh", "bash", "shell", "console")
FILE_MARK = re.compile(r"^(?:#|<!--)\s*([\w./-]+\.(?:py|md|rst|txt))\s*(?:-->)?\s*$")
FULL_INSTALL = os.environ.get("JAXHLO_TEST_INSTALL") == "1"
#: The package by its name on PyPI, in an install command: ``"sphinx-jaxhlo[myst]"``.
FROM_INDEX = re.compile(r"""(?P<quote>["']?)sphinx-jaxhlo(?P<extras>\[[\w,-]+\])?(?P=quote)(?=\s|$)""")


@dataclass(frozen=True)
class Block:
    document: str
    line: int  # 1-based line of the opening fence
    language: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.document}:{self.line}"

    @property
    def kind(self) -> str:
        first = self.text.lstrip().splitlines()[0] if self.text.strip() else ""
        if FILE_MARK.match(first):
            return "file"
        if first.startswith("#") and "fragment" in first.lower() and self.language == "python":
            return "fragment"
        if self.language in SHELL:
            if re.search(r"\bnox\b.*\s-s\s", self.text):
                return "long"
            if re.search(r"\bvenv\b|\bpip install\b|\bcompilers install\b", self.text):
                return "install"
            return "run"
        if self.language == "python":
            return "run"
        return "shown"  # neither shell nor Python (rst, md, text): not code to run


def blocks(document: str) -> list[Block]:
    tokens = MarkdownIt("commonmark").parse((REPO / document).read_text(encoding="utf-8"))
    found = []
    for token in tokens:
        if token.type == "fence" and token.map is not None:
            language = token.info.split()[0] if token.info.strip() else ""
            if language.startswith("{"):
                continue  # a MyST directive such as {jax-hlo}, not a code block
            found.append(Block(document, token.map[0] + 1, language, token.content))
    return found


ALL = [block for document in DOCUMENTS for block in blocks(document)]


def test_every_shell_and_python_block_is_run_or_marked() -> None:
    kinds = {block.where: block.kind for block in ALL}
    bad = [f"{block.where} ({block.language or 'no language'})" for block in ALL
           if block.kind == "shown" and block.language not in ("rst", "md", "text", "")]
    assert not bad, f"unclassified code blocks: {bad}"
    # the documents are what this test is about: each has runnable blocks
    for document in DOCUMENTS:
        assert any(k == "run" for w, k in kinds.items() if w.startswith(document + ":")), kinds


#: A release's section in docs/changelog.md: ``## 0.1.0 (2026-12-10)`` (a section without a date is not out).
RELEASED = re.compile(r"^## \S+ \(\d{4}-\d{2}-\d{2}\)$", re.M)
#: What the documents say until the first release: the package is not on PyPI yet.
NOT_ON_PYPI = re.compile(r"not on PyPI yet")


def released() -> bool:
    """Whether a release of the package is out (on PyPI): the changelog dates a section."""
    return bool(RELEASED.search((REPO / "docs" / "changelog.md").read_text(encoding="utf-8")))


def from_index(line: str) -> bool:
    """A pip command that installs the package from PyPI (not from the clone, not from a wheel's folder)."""
    return "pip install" in line and bool(FROM_INDEX.search(line)) and "--find-links" not in line


def test_install_names_real_extras_and_a_working_compilers_command(tmp_path: Path) -> None:
    extras = set(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    installs = [block for block in ALL if block.kind == "install"]
    assert installs
    for document in DOCUMENTS:
        mine = [block for block in installs if block.document == document]
        assert any("sphinx_jaxhlo compilers install" in block.text for block in mine), \
            f"{document} does not install the compilers"
        text = (REPO / document).read_text(encoding="utf-8")
        if released():  # the first command a reader runs installs the release
            assert any(from_index(line) for block in mine for line in block.text.splitlines()), \
                f"{document}: a release is out (docs/changelog.md), but no block installs it from PyPI"
            assert not NOT_ON_PYPI.search(text), f"{document} still says the package is not on PyPI"
        else:  # nothing run as written installs what PyPI does not have
            assert any(re.search(r'pip install (-e )?"\.\[myst\]"', block.text) for block in mine), \
                f"{document} does not install from the clone"
            wrong = [f"{block.where}: {line}" for block in ALL if block.language in SHELL
                     for line in block.text.splitlines() if from_index(line)]
            assert not wrong, f"installs from PyPI, where the package is not yet: {wrong}"
            # the reader is told, and shown the line that works after the release
            assert NOT_ON_PYPI.search(text), f"{document} does not say that the package is not on PyPI yet"
            assert '`python -m pip install "sphinx-jaxhlo[myst]"`' in text, \
                f"{document} does not show the line that installs the release"
    for block in installs:
        for named in re.findall(r'pip install[^\n]*?(?:\.|sphinx-jaxhlo)\[([\w,-]+)\]', block.text):
            assert set(named.split(",")) <= extras, (block.where, named, extras)
        commands = [line for line in block.text.splitlines() if "sphinx_jaxhlo compilers install" in line]
        for line in commands:
            args = shlex.split(line.split("#")[0])
            start = args.index("sphinx_jaxhlo")
            run = subprocess.run([sys.executable, "-m", *args[start:], "--dry-run"], capture_output=True,
                                 text=True, cwd=REPO, env={**os.environ, plugins.ENV_VARIABLE: str(tmp_path)})
            assert run.returncode == 0, (block.where, run.stderr)
            assert "gpu: would run" in run.stdout and "tpu: would run" in run.stdout, run.stdout


def nox_sessions() -> set[str]:
    tree = ast.parse((REPO / "noxfile.py").read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)
            and any("session" in ast.unparse(d) for d in node.decorator_list)}


def test_long_blocks_name_real_nox_sessions() -> None:
    sessions = nox_sessions()
    longs = [block for block in ALL if block.kind == "long"]
    assert longs
    for block in longs:
        named = re.findall(r"\s-s\s+([\w-]+)", block.text)
        assert named and set(named) <= sessions, (block.where, named, sessions)


def fresh_clone(folder: Path) -> Path:
    """The files a clone would have: tracked, and untracked but not ignored."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True, cwd=REPO).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name)
    return folder


def run_document(document: str, cwd: Path, tmp_path: Path) -> list[tuple[Block, str]]:
    """Run the document's blocks in order in ``cwd``; returns each run block with its output."""
    env = dict(os.environ)
    env.pop("JAX_PLATFORMS", None)
    # The report cache of the command line goes to a folder of this test; the compilers stay where they are.
    env[plugins.ENV_VARIABLE] = str(plugins.compilers_root())
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(cwd), os.environ.get("PYTHONPATH")])) \
        if not FULL_INSTALL else ""
    outputs = []
    for block in blocks(document):
        if block.kind == "file":
            name = FILE_MARK.match(block.text.lstrip().splitlines()[0]).group(1)  # type: ignore[union-attr]
            (cwd / name).parent.mkdir(parents=True, exist_ok=True)
            (cwd / name).write_text(block.text, encoding="utf-8")
            continue
        if block.kind == "install" and FULL_INSTALL:
            command = ["bash", "-e", "-c", block.text]
        elif block.kind != "run":
            continue
        elif block.language in SHELL:
            command = ["bash", "-e", "-c", block.text]
        else:
            script = cwd / f"snippet_{Path(document).stem}_{block.line}.py"
            script.write_text(block.text, encoding="utf-8")
            command = ["python", script.name]
        if FULL_INSTALL and (cwd / ".venv" / "bin").is_dir():
            env["PATH"] = os.pathsep.join([str(cwd / ".venv" / "bin"), os.environ.get("PATH", "")])
            env["VIRTUAL_ENV"] = str(cwd / ".venv")
        run = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=1800)
        assert run.returncode == 0, f"{block.where} failed ({run.returncode}):\n{run.stdout[-3000:]}\n" \
                                    f"{run.stderr[-3000:]}"
        outputs.append((block, run.stdout + run.stderr))
    return outputs


def available(*names: str) -> bool:
    from sphinx_jaxhlo.core.targets import TARGETS

    return all(TARGETS[name].available() for name in names)


needs_compilers = pytest.mark.skipif(not available("gpu:h100", "tpu:v5e"),
                                     reason="the GPU and TPU compilers are not installed: "
                                            "python -m sphinx_jaxhlo compilers install")


@pytest.mark.slow
@needs_compilers
def test_readme_runs_from_a_fresh_clone(tmp_path: Path) -> None:
    clone = fresh_clone(tmp_path / "clone")
    outputs = run_document("README.md", clone, tmp_path)
    api = next(text for block, text in outputs if block.language == "python")
    assert "with_dot on gpu:h100" in api and "with_dot on tpu:v5e" in api
    assert "AssertionError" not in api and "Traceback" not in api
    cli = next(text for block, text in outputs if "docs/examples/seed.py" in block.text)
    for target in ("cpu", "gpu:h100", "tpu:v5e"):
        assert f"== with_dot on {target}:" in cli
    assert "jax-cuda12-plugin" in cli and "libtpu" in cli  # the footer: what compiled it


@pytest.mark.slow
@needs_compilers
def test_quickstart_builds_its_project(tmp_path: Path) -> None:
    clone = fresh_clone(tmp_path / "clone")
    run_document("docs/quickstart.md", clone, tmp_path)
    page = (clone / "mydocs" / "_build" / "html" / "index.html").read_text(encoding="utf-8")
    assert "Phase sums" in page
    for key in ("cpu", "gpu:h100", "tpu:v5e"):
        assert f'data-key="{key}"' in page
    assert "jaxhlo-missing" not in page
    assert (clone / "mydocs" / "_build" / "jaxhlo-cache").is_dir()
