"""sphinx-jaxhlo: compile JAX examples at docs build time and show what XLA fused.

Add ``"sphinx_jaxhlo"`` to ``extensions`` in ``conf.py``; the ``jax-hlo``
directive is documented in the project's docs.  Importing this package never
imports jax.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.util.typing import ExtensionMetadata


def setup(app: Sphinx) -> ExtensionMetadata:
    """Sphinx entry point; the wiring lives in :mod:`sphinx_jaxhlo.extension`."""
    from .extension import setup as _setup

    return _setup(app)


def inventory() -> str:
    """The path of the ``objects.inv`` of this release's documentation, shipped in
    the package: the second element of an ``intersphinx_mapping`` entry, so that a
    build links to the guide's labels without fetching the inventory (offline, or
    while the site is not served)."""
    from pathlib import Path

    return str(Path(__file__).parent / "inventory" / "objects.inv")


#: The Python API (:mod:`sphinx_jaxhlo.api`), imported on first use.
_API = ("AnalysisError", "Reports", "TargetFailure", "analyze", "analyze_hlo", "analyze_source")
#: The chunked rewrite (:mod:`sphinx_jaxhlo.chunking`), imported on first use.
_CHUNKED = ("ChunkCheck", "ChunkError", "check_chunkable", "chunked", "chunked_source", "verify_chunked")


def __getattr__(name: str) -> Any:
    if name in _API:
        from . import api

        return getattr(api, name)
    if name in _CHUNKED:
        from . import chunking

        return getattr(chunking, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API, *_CHUNKED])
