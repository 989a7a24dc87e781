"""From examples to reports, the same for the directive, the build's forecast,
:func:`sphinx_jaxhlo.analyze_source` and the command line: plan, look up the
cache and snapshots, schedule compiles, check expectations, record.  Warns
through a :class:`~sphinx_jaxhlo.pipeline.run.Reporter`, never through
Sphinx.  Imports ``core``, ``hlo``, ``store`` and the client half of ``compiler``.
"""
