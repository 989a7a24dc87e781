"""The core: plain data and rules, imported by every other layer.

Reports and their JSON (:mod:`.report`), argument specs (:mod:`.specs`), sizes,
expectations, the target catalogue (:mod:`.targets`), the compilers' private
folder (:mod:`.compilers`), the chunked rewrite's code and ``:chunk:`` option
(:mod:`.chunks`), compile requests, the settings (:mod:`.settings`)
and the example value (:mod:`.example`).  Imports neither Sphinx, docutils nor
jax, and nothing of this package outside ``core``.
"""
