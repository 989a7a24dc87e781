"""``python -m sphinx_jaxhlo``: the command line (see :mod:`sphinx_jaxhlo.cli`)."""

from __future__ import annotations

from sphinx_jaxhlo.cli import run

if __name__ == "__main__":
    run()
