"""Reading optimized HLO and analysing it.  Imports only :mod:`sphinx_jaxhlo.core`.

The text is read by :mod:`.parse` (the grammar) over :mod:`.tokens`, with
:mod:`.decode` for the attributes it keeps raw, into the objects of
:mod:`.model`.  The analysis: the computations that run as programs
(:mod:`.programs`), fusions and buffers (:mod:`.buffers`), the reduction
verdicts (:mod:`.fusion`, ``analyze_module``) and the reasons a reduction did
not fuse (:mod:`.reasons`); collectives (:mod:`.collectives`); XLA's own
record of its fusion decisions (:mod:`.decisions`: ``records`` reads it,
``quotes`` ties it to the findings, ``collect`` asks a compile for it); what is
live at the peak (:mod:`.buffer_assignment`).
"""
