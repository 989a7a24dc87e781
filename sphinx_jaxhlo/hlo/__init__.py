"""Reading optimized HLO and analysing it: the parser (:mod:`.parse`), fusion
and reduction verdicts (:mod:`.fusion`), collectives, XLA's fusion decisions
and the reasons a reduction did not fuse.  Imports only :mod:`sphinx_jaxhlo.core`.
"""
