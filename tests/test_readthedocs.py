"""Read the Docs: ``.readthedocs.yaml`` is valid for Read the Docs and builds the site from the
committed snapshots alone, and docs/linking.md sends projects to the address it serves.

Read the Docs installs what ``python.install`` lists and runs ``build.jobs.build.html``; nothing
else of the clone runs there.  What a build from snapshots needs is the package with the docs'
extra, the jax the snapshots were made with (so the site names its toolchain truly), no GPU or
TPU compiler, and the snapshot mode ``use`` (nothing compiles, jax is not imported).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / ".readthedocs.yaml"


def config() -> dict[str, Any]:
    loaded = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def pyproject() -> dict[str, Any]:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def html_command() -> str:
    (command,) = config()["build"]["jobs"]["build"]["html"]
    assert isinstance(command, str)
    return command


def schema_errors(path: Path) -> str:
    """What check-jsonschema says of ``path`` against the Read the Docs schema it ships (no network)."""
    pytest.importorskip("check_jsonschema")
    run = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.readthedocs",
                          str(path)], capture_output=True, text=True)
    return "" if run.returncode == 0 else run.stdout + run.stderr


def test_the_config_is_valid_for_read_the_docs(tmp_path: Path) -> None:
    assert schema_errors(CONFIG) == ""
    # the check bites: a misspelt key of the same file is refused
    wrong = tmp_path / ".readthedocs.yaml"
    wrong.write_text(CONFIG.read_text(encoding="utf-8").replace("configuration:", "configuraton:"), encoding="utf-8")
    assert "configuraton" in schema_errors(wrong)


def test_it_installs_the_package_with_the_snapshots_jax_and_no_compiler() -> None:
    found = config()
    python = found["build"]["tools"]["python"]
    assert f"Programming Language :: Python :: {python}" in pyproject()["project"]["classifiers"]
    installs = found["python"]["install"]
    (package,) = [step for step in installs if step.get("method") == "pip"]
    assert package["path"] == "." and package["extra_requirements"] == ["docs"]
    assert "docs" in pyproject()["project"]["optional-dependencies"]
    (requirements,) = [REPO / step["requirements"] for step in installs if "requirements" in step]
    pins = dict(line.split("==") for line in requirements.read_text(encoding="utf-8").splitlines()
                if line and not line.startswith("#"))
    # the jax and jaxlib that made the committed snapshots (their toolchain)
    made = Counter((doc["toolchain"]["jax"], doc["toolchain"]["jaxlib"])
                   for doc in map(json.loads, map(Path.read_text, (REPO / "docs" / "_snapshots").rglob("*.json"))))
    (jax, jaxlib), _ = made.most_common(1)[0]
    assert pins == {"jax": jax, "jaxlib": jaxlib}, (pins, made)
    # no compiler: nothing runs `compilers install`, no system package is added
    commands = [ln for ln in CONFIG.read_text(encoding="utf-8").splitlines() if not ln.lstrip().startswith("#")]
    assert not [ln for ln in commands if "compilers" in ln or "libtpu" in ln or "cuda" in ln], commands
    assert "apt_packages" not in found["build"] and "commands" not in found["build"]


def test_its_build_is_the_docs_build_from_snapshots_with_warnings_as_errors() -> None:
    found = config()
    assert found["sphinx"] == {"configuration": "docs/conf.py", "fail_on_warning": True}
    args = shlex.split(html_command())
    assert args[0] == "JAXHLO_SNAPSHOT_MODE=use" and args[1:4] == ["python", "-m", "sphinx"], args
    assert {"-W", "--keep-going", "-n"} <= set(args) and args[args.index("-b") + 1] == "html"
    source, out = args[-2:]
    assert (REPO / source / "conf.py").is_file() and Path(found["sphinx"]["configuration"]).parent == Path(source)
    assert out == "$READTHEDOCS_OUTPUT/html"  # where Read the Docs takes the site from
    # the doctrees (and so the report cache beside them) outside what is published
    assert not args[args.index("-d") + 1].startswith("$READTHEDOCS_OUTPUT")


def test_linking_sends_projects_to_the_documentation_address() -> None:
    address = pyproject()["project"]["urls"]["Documentation"]
    assert re.fullmatch(r"https://[\w-]+\.readthedocs\.io/en/latest/", address), address
    page = (REPO / "docs" / "linking.md").read_text(encoding="utf-8")
    assert f'jaxhlo_guide_url = "{address}"' in page
    assert f"`{address}`" in page and "`.readthedocs.yaml`" in page


@pytest.mark.slow
def test_the_build_runs_from_snapshots_without_jax_or_compilers(tmp_path: Path) -> None:
    """Read the Docs' build command as written, on this clone: jax cannot be
    imported (packages of its names that refuse to load come first on the path) and the
    compilers' folder is empty; every report comes from a snapshot."""
    no_jax = tmp_path / "no-jax"
    for name in ("jax", "jaxlib", "libtpu", "jax_cuda12_plugin"):
        (no_jax / name).mkdir(parents=True)
        (no_jax / name / "__init__.py").write_text("raise ImportError('jax is not installed here')\n")
    (tmp_path / "compilers").mkdir()
    env = {**os.environ, "READTHEDOCS_OUTPUT": str(tmp_path / "output"),
           "JAXHLO_COMPILERS_DIR": str(tmp_path / "compilers"),
           "PYTHONPATH": os.pathsep.join([str(no_jax), str(REPO), os.environ.get("PYTHONPATH", "")]),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    env.pop("JAXHLO_SNAPSHOT_MODE", None)
    command = html_command().replace("docs/_build/doctrees", shlex.quote(str(tmp_path / "doctrees")))
    run = subprocess.run(["bash", "-e", "-c", command], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=1800)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert (tmp_path / "output" / "html" / "index.html").is_file()
    m = re.search(r"jax-hlo: (\d+) compiled, (\d+) from cache, (\d+) from snapshots, (\d+) failed", run.stdout)
    # nothing compiled (the failures counted are the compile errors the snapshots hold, which -W accepts)
    assert m and m.group(1) == "0" and int(m.group(3)) > 0, run.stdout[-3000:]
