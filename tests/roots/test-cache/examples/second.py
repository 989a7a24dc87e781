import jax.numpy as jnp


def second(x):
    return jnp.max(jnp.sin(x))
