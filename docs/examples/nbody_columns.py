"""N-body forces written in columns: one table per coordinate, and the shared
inverse cube of the distances read by all three sums.

pos: f32[n, 3] positions; returns f32[n, 3], the force on each body.
"""

import jax.numpy as jnp


def forces(pos):
    x, y, z = pos[:, 0], pos[:, 1], pos[:, 2]
    dx = x[:, None] - x[None, :]
    dy = y[:, None] - y[None, :]
    dz = z[:, None] - z[None, :]
    inv = (dx * dx + dy * dy + dz * dz + 1e-3) ** -1.5
    return jnp.stack([jnp.sum(dx * inv, axis=1), jnp.sum(dy * inv, axis=1),
                      jnp.sum(dz * inv, axis=1)], axis=-1)
