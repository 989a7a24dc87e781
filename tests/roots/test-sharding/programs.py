"""Programs on a mesh of eight devices, for the sharding tests (see tests/data/sharded/cases.py)."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def contract(a, b):
    return a @ b


def rows(a, b):
    return a @ b


def contract_scattered(a, b):
    return jax.lax.with_sharding_constraint(a @ b, P("data", None))


def fsdp(x, w):
    return jnp.tanh(x @ w)


def fsdp_two(x, w1, w2):
    h = jnp.tanh(x @ w1)
    return h @ w2


def fsdp_layers(x, ws):
    def layer(h, w):
        return jnp.tanh(h @ w), None

    return jax.lax.scan(layer, x, ws)[0]


def reshard(x):
    y = jnp.sin(x)
    return jax.lax.with_sharding_constraint(y, P(None, "data"))


def roll(x):
    return jnp.roll(x, 1, axis=0) + x


def ring(x):
    def step(block):
        return jax.lax.ppermute(block, "data", [(i, (i + 1) % 4) for i in range(4)])

    return jax.shard_map(step, in_specs=P("data"), out_specs=P("data"))(x)


def psum_by_hand(x):
    def partial(block):
        return jax.lax.psum(jnp.sum(block, axis=0), "data")

    return jax.shard_map(partial, in_specs=P("data", None), out_specs=P())(x)


def sum_sharded_axis(x):
    return jnp.sum(x, axis=0)


def sum_other_axis(x):
    return jnp.sum(x, axis=1)


def over_model(a, b):
    return a @ b


def seed_rows(pos, hkl):
    return jnp.sum(jnp.cos(pos @ hkl.T), axis=0)
