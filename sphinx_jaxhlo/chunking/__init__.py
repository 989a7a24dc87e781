"""Chunked rewrites, one feature in one folder: a reduction over a long axis computed chunk by
chunk in a ``lax.scan``, so that its stored intermediate is one chunk's, not the whole axis'.

- :mod:`~sphinx_jaxhlo.chunking.source`: the code a reader pastes (``chunked_source``: every
  name fresh), the ``:chunk:`` option and the variant it adds to an example (plain data, no jax);
- :mod:`~sphinx_jaxhlo.chunking.rewrite`: ``chunked(fn, ...)``, the same rewrite as a function;
- :mod:`~sphinx_jaxhlo.chunking.proof`: why the rewrite computes the same values, proved on the
  jaxpr (which operations may see a chunk instead of the whole axis);
- :mod:`~sphinx_jaxhlo.chunking.values`: the numerical check of a rewrite on small random inputs;
- :mod:`~sphinx_jaxhlo.chunking.search`: the suggestion a report makes, a chunk size proved,
  checked as shown and compiled for the target.

``source`` sits with the plain data of ``core`` (the example's options read it); the others
import jax, and run only in the compile worker or a caller's own process (``tests/test_layers.py``
says each module's layer).  Nothing here is imported by this file.
"""
