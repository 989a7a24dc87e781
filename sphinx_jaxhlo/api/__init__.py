"""The Python API, one of the package's three fronts (with the command line, ``cli.py``, and the
Sphinx directive, ``sphinxext/``): what a notebook, a script or a test suite calls.

- :mod:`~sphinx_jaxhlo.api.functions`: :func:`analyze` (a function object, pickled to the
  compile worker), :func:`analyze_source` (a module's text, as the command line and the
  directive compile it), their sweeps and gradient variants;
- :mod:`~sphinx_jaxhlo.api.results`: what :class:`Reports` and :class:`SweepReports` share
  (text, HTML for Jupyter, JSON, checking claims);
- :mod:`~sphinx_jaxhlo.api.reports`: :class:`Reports`, the reports of one function on each target;
- :mod:`~sphinx_jaxhlo.api.sweep_reports`: :class:`SweepReports`, the same at each size of a sweep;
- :mod:`~sphinx_jaxhlo.api.saved_module`: :func:`analyze_hlo`, a saved optimized module.

A sweep is driven by :mod:`sphinx_jaxhlo.pipeline.sweep` and a gradient variant built by
:mod:`sphinx_jaxhlo.gradient`, for every front alike.

Importing it never imports jax.
"""

from __future__ import annotations

from sphinx_jaxhlo.api.functions import (
    AnalysisError,
    Reports,
    SweepReports,
    TargetFailure,
    analyze,
    analyze_hlo,
    analyze_source,
    default_cache_dir,
)

__all__ = ["AnalysisError", "Reports", "SweepReports", "TargetFailure", "analyze", "analyze_hlo", "analyze_source",
           "default_cache_dir"]
