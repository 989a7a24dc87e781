"""sphinx-jaxhlo: compile JAX examples at docs build time and show what XLA fused.

Add ``"sphinx_jaxhlo"`` to ``extensions`` in ``conf.py``; the ``jax-hlo``
directive is documented in the project's docs.  Importing this package never
imports jax.
"""

from __future__ import annotations

from typing import Any

from sphinx_jaxhlo.core.version import __version__ as __version__


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point (``extensions = ["sphinx_jaxhlo"]``): the extension is
    :mod:`sphinx_jaxhlo.sphinxext`, imported only here, so that the API and the
    command line never import Sphinx."""
    from sphinx_jaxhlo.sphinxext import setup as _setup

    return dict(_setup(app))


def inventory() -> str:
    """The path of the ``objects.inv`` of this release's documentation, shipped in
    the package: the second element of an ``intersphinx_mapping`` entry, so that a
    build links to the guide's labels without fetching the inventory (offline, or
    while the site is not served)."""
    from pathlib import Path

    return str(Path(__file__).parent / "inventory" / "objects.inv")


#: The Python API (:mod:`sphinx_jaxhlo.api.functions`), imported on first use.
_API = ("AnalysisError", "Reports", "SweepReports", "TargetFailure", "analyze", "analyze_hlo", "analyze_source")
#: The chunked rewrite (:mod:`sphinx_jaxhlo.chunking.rewrite`, its proof
#: :mod:`sphinx_jaxhlo.chunking.proof`, its code :mod:`sphinx_jaxhlo.chunking.source`),
#: imported on first use.
_CHUNKED = ("ChunkCheck", "ChunkError", "check_chunkable", "chunked", "chunked_source", "verify_chunked",
            "verify_chunked_source")


def __getattr__(name: str) -> Any:
    if name == "predict":  # the guide's rules (:mod:`sphinx_jaxhlo.predict`): the module, callable
        import importlib

        return importlib.import_module("sphinx_jaxhlo.predict")
    if name in _API:
        from sphinx_jaxhlo import api

        return getattr(api, name)
    if name in _CHUNKED:
        from sphinx_jaxhlo.chunking import proof as chunk_proof
        from sphinx_jaxhlo.chunking import rewrite as chunking
        from sphinx_jaxhlo.chunking import source as chunks

        module = next(m for m in (chunking, chunk_proof, chunks) if name in m.__all__)
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API, *_CHUNKED, "predict"])
