"""Ordinary code on a page, on CPU, an H100 and a TPU v5e: PRNG keys, donation,
a deep MLP's gradient (split-K on the H100), cumulative sums (prefix scans).

The examples are programs of the corpus (``tests/data/corpus/programs.py``),
written into a page with the directive's options; the build must give no
warning, and every report's memory figures must equal what XLA gave a plain
``jax.jit`` compile of the same program (``tests/data/corpus/xla.json``).
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import build_html

from sphinx_jaxhlo.core import targets
from sphinx_jaxhlo.core.report import Report

CORPUS = Path(__file__).parent / "data" / "corpus"
sys.path.insert(0, str(CORPUS))
from programs import BY_NAME  # noqa: E402

sys.path.remove(str(CORPUS))

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not (targets.get_target("gpu:h100").available() and targets.get_target("tpu:v5e").available()),
    reason="needs the GPU and TPU compilers")]

#: program -> extra directive options (its claims)
PAGE = {
    "prng_normal": ":expect-reduction: cpu=unfused, gpu:h100=fused, tpu:v5e=fused",
    "prng_split_dropout": ":expect-reduction: cpu=unfused, gpu:h100=unfused, tpu:v5e=fused",
    "donated_update": ":expect-max-peak: 33554432",
    "deep_mlp_grad": ":expect-reduction: none",
    "cumsum": ":expect-reduction: none",
}


def _page() -> str:
    parts = ["Ordinary code\n=============\n"]
    for name, claims in PAGE.items():
        program = BY_NAME[name]
        options = [f":args: {program.args}", ":function: f", ":show: summary, memory", claims]
        if program.donate:
            options.append(f":donate: {', '.join(program.donate)}")
        body = textwrap.indent(program.source, "   ")
        parts.append(f"{name}\n{'-' * len(name)}\n\n.. jax-hlo::\n" + "".join(f"   {o}\n" for o in options)
                     + "\n" + body + "\n")
    return "\n".join(parts)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[tuple[str, str], Report]]:

    tmp = tmp_path_factory.mktemp("ordinary")
    src = tmp / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_targets = ["cpu", "gpu:h100", "tpu:v5e"]\n')
    (src / "index.rst").write_text(_page())
    warnings, _, stored = build_html(src, tmp / "build")
    reports: dict[tuple[str, str], Report] = {}
    for rep in stored:
        program = next(n for n in PAGE if BY_NAME[n].source.strip() == rep.source.strip())
        reports[(program, rep.target)] = rep
    return warnings, reports


def test_the_page_builds_and_every_claim_holds(built: Any) -> None:
    warnings, reports = built
    assert "[jaxhlo." not in warnings, warnings
    assert len(reports) == 3 * len(PAGE)


@pytest.mark.parametrize("program", list(PAGE))
@pytest.mark.parametrize("target", ["cpu", "gpu:h100", "tpu:v5e"])
def test_memory_equals_xla(built: Any, program: str, target: str) -> None:
    _, reports = built
    memory = reports[(program, target)].memory
    xla = json.loads((CORPUS / "xla.json").read_text())[target][program]["memory"]
    assert (memory.argument_bytes, memory.output_bytes, memory.alias_bytes, memory.temp_bytes) == (
        xla["argument_size_in_bytes"], xla["output_size_in_bytes"], xla["alias_size_in_bytes"],
        xla["temp_size_in_bytes"])
    if program == "donated_update":
        assert memory.alias_bytes == 4096 * 1024 * 4  # params' buffer holds the result


def test_keys_compile_as_keys(built: Any) -> None:
    _, reports = built
    for target in ("cpu", "gpu:h100", "tpu:v5e"):
        hlo = reports[("prng_split_dropout", target)].hlo
        # a key<fry>[256] argument is two uint32 words per key
        assert "u32[256,2]" in hlo.split("ENTRY", 1)[1].splitlines()[0]
