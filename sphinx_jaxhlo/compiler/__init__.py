"""The compile side.

:mod:`.client` and :mod:`.executors` run in the build's process and send
requests to compile workers.  The worker (:mod:`.worker`) compiles an
example's source or a function sent pickled (:mod:`.calls`) for a target:
:mod:`.lowering` makes the target's devices and lowers and compiles for them,
:mod:`.arguments` makes the arguments' jax values, :mod:`.compiling` fills the
report from what XLA gave.  :mod:`.chunking` and :mod:`.chunk_proof` are the
chunked rewrite and its proof (:mod:`.chunk_values`, the values the proof
follows), :mod:`.chunk_search` the report's suggestion of one.  These are the only modules of the package
that import jax, always inside functions (in a worker, or in the user's
process for :func:`sphinx_jaxhlo.analyze` and :func:`sphinx_jaxhlo.chunked`).
Imports ``core``, ``hlo`` and ``store``.
"""
