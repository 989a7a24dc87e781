"""A scan's stacked output is the program's output, not an intermediate it adds.

XLA's loop writes each step's slice in place into the buffer of the stacked result (a broadcast of
zeros on the CPU, an ``AllocateBuffer`` on the TPU), and the buffer assignment gives that buffer the
allocation of the program's result: the report leaves it out of the materialized intermediates (it is
in the output's bytes).  The same stacked table read by a reduction instead is an intermediate, and is
listed.  Compiled for the CPU (no run).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import sphinx_jaxhlo
from sphinx_jaxhlo.core import targets

TABLE = 64 * 256 * 1024 * 4


def returned(xs):
    return jax.lax.scan(lambda c, x: (c + jnp.sum(x), jnp.exp(x)), 0.0, xs)


def reduced(xs):
    _, ys = jax.lax.scan(lambda c, x: (c, jnp.exp(x)), 0.0, xs)
    return jnp.sum(jnp.cos(ys) * ys[::-1], axis=0)


TARGETS = ["cpu"] + (["tpu:v5e"] if targets.get_target("tpu:v5e").available() else [])


@pytest.mark.parametrize("target", TARGETS)
def test_a_returned_stacked_output_is_not_an_intermediate(target: str) -> None:
    report = sphinx_jaxhlo.analyze(returned, "f32[64,256,1024]", targets=target)[target]
    assert report.memory.output_bytes >= TABLE
    assert not [m for m in report.materialized if m.bytes >= TABLE], [(m.name, m.bytes) for m in report.materialized]


def test_a_stacked_output_a_reduction_reads_is_an_intermediate() -> None:
    report = sphinx_jaxhlo.analyze(reduced, "f32[64,256,1024]", targets="cpu")["cpu"]
    assert [m for m in report.materialized if m.bytes >= TABLE], [(m.name, m.bytes) for m in report.materialized]
