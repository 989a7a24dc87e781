"""The compile side.

:mod:`.client` and :mod:`.executors` run in the build's process and send
requests to compile workers; :mod:`.worker`, :mod:`.lowering`, :mod:`.calls`
and :mod:`.chunking` are the only modules of the package that import jax
(in a worker, or in the user's process for :func:`sphinx_jaxhlo.analyze` and
:func:`sphinx_jaxhlo.chunked`).  Imports ``core``, ``hlo`` and ``store``.
"""
