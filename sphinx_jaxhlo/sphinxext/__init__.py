"""The Sphinx extension: the only package that imports Sphinx.

Settings, the ``jax-hlo`` and ``jax-hlo-report`` directives, the per-build
state, the document loop, HTML visitors and events.  Everything below it is
plain Python that the API and the command line share.
"""

from sphinx_jaxhlo.sphinxext.extension import setup

__all__ = ["setup"]
