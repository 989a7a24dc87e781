"""For each reflection q, the sum over atoms r of cos(q . r), three ways.

pos: f32[100000, 3] atom positions; hkl: f32[50000, 3] reflections.
Every function computes the same f32[50000] (up to rounding: see the guide's
precision page). with_dot_highest is with_dot at full matmul precision.
"""

import jax
import jax.numpy as jnp


def explicit(pos, hkl):
    """The dot product as three multiply-adds, vmapped over atoms."""

    def per_atom(p):
        phase = hkl[:, 0] * p[0] + hkl[:, 1] * p[1] + hkl[:, 2] * p[2]
        return jnp.cos(phase)

    return jnp.sum(jax.vmap(per_atom)(pos), axis=0)


def with_dot(pos, hkl):
    """The same with jnp.dot: a matrix-vector product per atom."""

    def per_atom(p):
        return jnp.cos(jnp.dot(hkl, p))

    return jnp.sum(jax.vmap(per_atom)(pos), axis=0)


def with_outer(pos, hkl):
    """Outer products of matching columns: no dot at all."""
    phase = (jnp.outer(pos[:, 0], hkl[:, 0])
             + jnp.outer(pos[:, 1], hkl[:, 1])
             + jnp.outer(pos[:, 2], hkl[:, 2]))
    return jnp.sum(jnp.cos(phase), axis=0)


def with_dot_highest(pos, hkl):
    """with_dot with the dot at full f32 precision on every backend."""

    def per_atom(p):
        return jnp.cos(jnp.dot(hkl, p, precision=jax.lax.Precision.HIGHEST))

    return jnp.sum(jax.vmap(per_atom)(pos), axis=0)
