"""A MyST-NB page executed at build time (``nb_execution_mode = "force"``, as
JAX's docs are built) with jax code cells and a ``jax-hlo`` example compiled for
the CPU, a GPU and a TPU.

The cells' published outputs must hold what the code prints and nothing else:
no "Could not find cuda drivers", no CUDA plugin traceback, no libtpu host
errors.  That holds when the GPU and TPU compilers live in the private folder
that only compile workers load (``python -m sphinx_jaxhlo compilers install``),
while the kernel and Sphinx import a plain jax.

The kernel runs in the environment of this test (the cells check it).  In an
environment that has the compilers installed in its own site-packages (the old
``[gpu]``/``[tpu]`` extras, ``jax[tpu]``), any ``import jax`` there loads them
and nothing the extension does can keep them out of a notebook kernel: the test
is skipped there, saying so, rather than checking a different kernel.  It runs
in ``nox -s tests`` (and CI), whose environment gets the compilers only in the
private folder.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from sphinx_jaxhlo.core import compilers as plugins

ROOT = Path(__file__).parent / "roots" / "test-notebook"
REPO = Path(__file__).resolve().parents[1]

#: Modules that put GPU or TPU compilers into every ``import jax`` of an environment.
IN_ENVIRONMENT = ("jax_plugins", "jax_cuda12_plugin", "libtpu")

#: What the compilers print when they load on a machine without the hardware.
NOISE = re.compile(r"cuda|libtpu|tpu|plugin|traceback|gpu|warning|error|E\d{4} |I\d{4} |W\d{4} ", re.IGNORECASE)


def compilers_in_this_environment() -> list[str]:
    return [m for m in IN_ENVIRONMENT if importlib.util.find_spec(m) is not None]


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(compilers_in_this_environment()),
        reason=f"this environment has GPU/TPU compilers in its own site-packages "
               f"({', '.join(compilers_in_this_environment())}): every `import jax` here, a notebook kernel's "
               "included, loads them; run this test where they are only in the private folder "
               "(nox -s tests does that)",
    ),
    pytest.mark.skipif(
        not all(plugins.state(kit).folder is not None for kit in plugins.KITS),
        reason="the GPU and TPU compilers are not in the private folder: python -m sphinx_jaxhlo compilers install",
    ),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The page, built once with -W into a fresh folder (nothing cached)."""
    base = tmp_path_factory.mktemp("notebook")
    out = base / "html"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    env.pop("JAX_PLATFORMS", None)
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-N", "-d", str(base / "doctrees"),
         "-D", f"jaxhlo_cache_dir={base / 'cache'}", str(ROOT), str(out)],
        capture_output=True, text=True, env=env, cwd=base, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return out, run.stdout + run.stderr


def cell_outputs(html: Path) -> list[list[dict[str, str]]]:
    """The outputs MyST-NB executed and published, per code cell, from the notebook it writes."""
    notebooks = list(html.parent.rglob("jupyter_execute/index.ipynb")) + list(html.rglob("_sources/index.ipynb"))
    assert notebooks, "MyST-NB wrote no executed notebook"
    cells = json.loads(notebooks[0].read_text(encoding="utf-8"))["cells"]
    return [cell.get("outputs", []) for cell in cells if cell["cell_type"] == "code"]


def output_text(output: dict[str, str]) -> str:
    if output["output_type"] == "stream":
        return "".join(output["text"])
    if output["output_type"] == "error":
        return f"{output['ename']}: {output['evalue']}"
    data = output.get("data", {})
    return "".join(data.get("text/plain", "")) if isinstance(data, dict) else ""


def merged_streams(outputs: list[dict[str, str]]) -> list[dict[str, str]]:
    """The outputs as a reader sees them: a kernel may send one ``print`` in several stream
    messages (``'6.0'`` then ``'\\n'`` on a loaded machine), which the page shows as one text."""
    merged: list[dict[str, str]] = []
    for output in outputs:
        if (merged and output["output_type"] == "stream" and merged[-1]["output_type"] == "stream"
                and merged[-1].get("name") == output.get("name")):
            merged[-1] = {**merged[-1], "text": output_text(merged[-1]) + output_text(output)}
        else:
            merged.append(output)
    return merged


def test_cells_print_what_the_code_prints_and_nothing_else(built: tuple[Path, str]) -> None:
    html, _ = built
    prefix, devices, total = (merged_streams(cell) for cell in cell_outputs(html))
    # the kernel ran in this environment, not in another that a kernelspec names
    assert [output_text(o) for o in prefix] == [f"{sys.prefix}\n"]
    assert [(o["output_type"], o.get("name"), output_text(o)) for o in devices] == [
        ("stream", "stdout", "[CpuDevice(id=0)]\n")]
    assert [output_text(o) for o in total] == ["6.0\n"]
    for cell in (devices, total):  # (a path may hold any word)
        for output in cell:
            assert output.get("name") != "stderr", output
            assert not NOISE.search(output_text(output)), output


def test_the_published_page_shows_no_compiler_messages(built: tuple[Path, str]) -> None:
    html, _ = built
    soup = BeautifulSoup((html / "index.html").read_text(encoding="utf-8"), "html.parser")
    shown = [out.get_text() for out in soup.select("div.cell_output")]
    assert [text.strip() for text in shown] == [sys.prefix, "[CpuDevice(id=0)]", "6.0"]
    assert not soup.select("div.cell_output .stderr, div.cell_output .output.stderr")


def test_the_example_on_the_same_page_compiled_for_gpu_and_tpu(built: tuple[Path, str]) -> None:
    html, log = built
    soup = BeautifulSoup((html / "index.html").read_text(encoding="utf-8"), "html.parser")
    panels = {p["data-key"]: p for p in soup.select("div.jaxhlo-panel")}
    assert {"cpu", "gpu:h100", "tpu:v5e"} <= set(panels)
    assert not soup.select(".jaxhlo-missing, .jaxhlo-error, .jaxhlo-oom")
    footer = soup.select_one(".jaxhlo-footer").get_text(" ", strip=True)
    for dist in ("jax-cuda12-plugin", "libtpu"):
        version = plugins.state("gpu" if "cuda" in dist else "tpu").versions[dist]
        assert f"{dist} {version}" in footer
    assert "jax-hlo: 3 compiled" in log
