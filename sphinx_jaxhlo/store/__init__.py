"""Where reports are kept: the cache (local or fsspec), the snapshots committed
with the docs, and drift between two reports.  Imports ``core`` and ``hlo``.
"""
