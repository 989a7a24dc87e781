"""Where the TPU v5e keeps a stored table (``Prediction.where``), checked against XLA's TPU compiler.

Between 32 and 104 MiB the size alone does not say: memory-space assignment keeps a lone table on the chip
(``S(1)``) and leaves it in HBM when the program writes an output as large beside it, or other large
buffers; a narrow table fills the chip's tiles of 128 with padding (``benchmarks/guide_predictor_where_probes.py``
has the probes).  Each program here is compiled for the TPU (no run, no chip), so a later libtpu that moves
the line fails here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from conftest import space_of_the_stored

import sphinx_jaxhlo
from sphinx_jaxhlo.core import targets

needs_tpu = pytest.mark.skipif(not targets.get_target("tpu:v5e").available(),
                               reason="needs the tpu extra (CI installs it): pip install 'sphinx-jaxhlo[tpu]'")


def lse_of_product(x, w):
    return jax.nn.logsumexp(x @ w, axis=1)


def lse_and_tanh_of_product(x, w):
    s = x @ w
    return jax.nn.logsumexp(s, axis=1), jnp.tanh(s)


def gathered_rows(r, i, j):
    return jnp.sum(jnp.linalg.norm(r[i] - r[j], axis=-1))


def product(rows: int) -> tuple[str, str]:
    return (f"f32[{rows},256]", "f32[256,4096]")


CASES = [
    # a lone product read by a log-sum-exp: on-chip at 64 MiB, in HBM at 112 MiB
    (lse_of_product, product(4096), "on-chip", "no other large buffer"),
    (lse_of_product, product(7168), "HBM", "larger than"),
    # the same table with its tanh returned: on-chip at 48 MiB, in HBM at 64 MiB (the negative case: the
    # band's default answer, on-chip, would be wrong)
    (lse_and_tanh_of_product, product(3072), "on-chip", "stayed on-chip"),
    (lse_and_tanh_of_product, product(4096), "HBM", "returns an output as large"),
    # 1.2 MB of rows of 3, 51 MB in the chip's tiles
    (gathered_rows, ("f32[100000,3]", "i32[100000]", "i32[100000]"), "HBM", "tiles"),
]


@pytest.mark.parametrize("fn,specs,where,word", CASES, ids=lambda c: getattr(c, "__name__", None))
def test_where_from_the_graph(fn, specs, where, word):
    answer = sphinx_jaxhlo.predict(fn, *specs, target="tpu:v5e", calibrated=False)
    assert (answer.stored, answer.certain, answer.where) == (True, True, where), answer
    assert word in answer.where_why, answer.where_why


@needs_tpu
@pytest.mark.parametrize("fn,specs,where,word", CASES, ids=lambda c: getattr(c, "__name__", None))
def test_where_as_compiled(fn, specs, where, word):
    answer = sphinx_jaxhlo.predict(fn, *specs, target="tpu:v5e", calibrated=False)
    space = space_of_the_stored(fn, specs, "tpu:v5e", answer.table_elements)
    assert space is not None, "the compile stores no table"
    assert {1: "on-chip", 0: "HBM"}[space] == where, (space, answer.where_why)
