"""sphinx-jaxhlo: compile JAX examples at docs build time and show what XLA fused.

Add ``"sphinx_jaxhlo"`` to ``extensions`` in ``conf.py``; the ``jax-hlo``
directive is documented in the project's docs.  Importing this package never
imports jax.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.util.typing import ExtensionMetadata


def setup(app: Sphinx) -> ExtensionMetadata:
    """Sphinx entry point; the wiring lives in :mod:`sphinx_jaxhlo.extension`."""
    from .extension import setup as _setup

    return _setup(app)
