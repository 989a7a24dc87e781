"""Shared fixtures: Sphinx test roots under tests/roots, stored HLO under tests/data/hlo."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["sphinx.testing.fixtures"]

ROOTS = Path(__file__).parent / "roots"
HLO_DIR = Path(__file__).parent / "data" / "hlo"


@pytest.fixture(scope="session")
def rootdir() -> Path:
    return ROOTS
