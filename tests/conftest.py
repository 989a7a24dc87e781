"""Shared fixtures: Sphinx test roots under tests/roots, stored HLO under tests/data/hlo."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["sphinx.testing.fixtures"]

# Tests that initialise jax in this process (the API's export path) and compile
# workers may load libtpu at the same time; without this it takes a machine-wide lock.
os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")

ROOTS = Path(__file__).parent / "roots"
HLO_DIR = Path(__file__).parent / "data" / "hlo"
#: A module of example functions that the API and command-line tests import from a copy.
API_EXAMPLE = Path(__file__).parent / "data" / "api_example.py"


@pytest.fixture(scope="session")
def rootdir() -> Path:
    return ROOTS


def with_texts(soup: Any, page: Path) -> Any:
    """``soup`` (a parsed page) with the module texts an HTML page loads when a
    block is opened (``_jaxhlo/<key>.txt`` beside the pages) put into their blocks,
    so tests can read the optimized HLO where a reader sees it."""
    for pre in soup.select("pre[data-jaxhlo-text]"):
        path = (page.parent / pre["data-jaxhlo-text"]).with_suffix(".txt")
        pre.string = path.read_text(encoding="utf-8")
    return soup
