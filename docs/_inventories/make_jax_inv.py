"""Write ``jax.inv``: the few entries of the JAX docs' inventory that our pages link to.

The docs are built offline (CI has no route to docs.jax.dev), so intersphinx
reads this file instead of downloading JAX's ``objects.inv``; links still point
at the live JAX pages.  Add an entry here when a page needs a new target, then
run ``python docs/_inventories/make_jax_inv.py``.
"""

from __future__ import annotations

import zlib
from pathlib import Path

# name, domain:role, uri (relative to the JAX docs root; "$" stands for the name), display name
ENTRIES = [
    ("aot", "std:doc", "aot.html", "Ahead-of-time lowering and compilation"),
    ("jax.jit", "py:function", "_autosummary/jax.jit.html#$", "-"),
    ("jax.vmap", "py:function", "_autosummary/jax.vmap.html#$", "-"),
    ("jax.checkpoint", "py:function", "_autosummary/jax.checkpoint.html#$", "-"),
    ("jax.ShapeDtypeStruct", "py:class", "_autosummary/jax.ShapeDtypeStruct.html#$", "-"),
    ("jax.lax.scan", "py:function", "_autosummary/jax.lax.scan.html#$", "-"),
    ("jax.lax.map", "py:function", "_autosummary/jax.lax.map.html#$", "-"),
    ("jax.lax.with_sharding_constraint", "py:function", "_autosummary/jax.lax.with_sharding_constraint.html#$", "-"),
    ("jax.lax.psum", "py:function", "_autosummary/jax.lax.psum.html#$", "-"),
    ("jax.shard_map", "py:function", "_autosummary/jax.shard_map.html#$", "-"),
    ("jax.numpy.dot", "py:function", "_autosummary/jax.numpy.dot.html#$", "-"),
    ("jax.numpy.matmul", "py:function", "_autosummary/jax.numpy.matmul.html#$", "-"),
    ("jax.numpy.einsum", "py:function", "_autosummary/jax.numpy.einsum.html#$", "-"),
    ("jax.numpy.outer", "py:function", "_autosummary/jax.numpy.outer.html#$", "-"),
    ("jax.numpy.sum", "py:function", "_autosummary/jax.numpy.sum.html#$", "-"),
    ("jax.stages.Compiled", "py:class", "jax.stages.html#$", "-"),
    ("jax.stages.Compiled.memory_analysis", "py:method", "jax.stages.html#$", "-"),
    ("jax.stages.Compiled.cost_analysis", "py:method", "jax.stages.html#$", "-"),
    ("jax.stages.Compiled.as_text", "py:method", "jax.stages.html#$", "-"),
]


def main() -> None:
    header = "# Sphinx inventory version 2\n# Project: JAX\n# Version: 0.10\n" \
             "# The remainder of this file is compressed using zlib.\n"
    body = "".join(f"{name} {role} {1 if role != 'std:doc' else -1} {uri} {disp}\n"
                   for name, role, uri, disp in ENTRIES)
    (Path(__file__).parent / "jax.inv").write_bytes(header.encode() + zlib.compress(body.encode()))


if __name__ == "__main__":
    main()
