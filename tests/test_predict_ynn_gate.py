"""The CPU rule for a reduction's result read back into its table (rule 4, YNN's table), checked against XLA.

XLA CPU's YNN fusion takes an elementwise op only with at least 4,096 elements in its result or an
operand (``IsInstructionPreferredByYnn`` in ``ynn_support.cc``); broadcasts are checked before that
gate.  So a result broadcast straight back into the table joins the reduction's fusion at any size
(``x - max(x)``, a softmax-weighted sum without its normalisation), while an op on the result itself
(a mean's scaling, the reciprocal XLA's simplifier makes of a divide by a broadcast result) joins only
from 4,096 kept elements on.  Each program is compiled for the CPU (no run), so a later XLA
that changes the answer fails here, not on a reader's page.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import sphinx_jaxhlo

ROWS = jax.ShapeDtypeStruct((512, 2048), jnp.float32)  # a row reduction keeps 512 elements
WIDE = jax.ShapeDtypeStruct((512, 8192), jnp.float32)  # a column reduction keeps 8,192
W = jax.ShapeDtypeStruct((2048, 256), jnp.float32)
TABLE = 512 * 256 * 4  # the smallest table here


def log_product_minus_max(x, w):
    m = jnp.log(jnp.maximum(x @ w, 1e-10))
    return m - jnp.max(m, (-2, -1), keepdims=True)


def centred_by_max(x):
    e = jnp.exp(x)
    return e - jnp.max(e, 1, keepdims=True)


def weighted_by_shifted_exp(x):
    e = jnp.tanh(x)
    return jnp.sum(jnp.exp(e - jnp.max(e, 1, keepdims=True)) * e, 1)


def variance_of_rows(x):
    e = jnp.exp(x)
    return jnp.sum((e - jnp.mean(e, 1, keepdims=True)) ** 2, 1)


def normalised_rows(x):
    e = jnp.exp(x)
    return e / jnp.sum(e, 1, keepdims=True)


def normalised_columns(x):
    e = jnp.exp(x)
    return e / jnp.sum(e, 0, keepdims=True)


def exp_doubled_beside_its_column_sum(x):
    # an output computed from no result: a second fusion whatever the kept size (8,192 here)
    e = jnp.exp(x)
    return jnp.sum(e, 0), e * 2


def exp_doubled_beside_its_row_sum(x):
    e = jnp.exp(x)
    return jnp.sum(e, 1), e * 2


def statistic_returned_beside_normalised_rows(x):
    # the sum is returned and read back: a fusion of two roots XLA does not make, so e is written
    e = jnp.exp(x)
    s = jnp.sum(e, 1, keepdims=True)
    return s, e / s


def maximum_returned_beside_centred_rows(x):
    e = jnp.exp(x)
    m = jnp.max(e, 1, keepdims=True)
    return m, e - m


CASES = [
    (log_product_minus_max, (ROWS, W), False),
    (centred_by_max, (ROWS,), False),
    (weighted_by_shifted_exp, (ROWS,), False),
    (variance_of_rows, (ROWS,), True),
    (normalised_rows, (ROWS,), True),
    (normalised_columns, (WIDE,), False),
    (exp_doubled_beside_its_column_sum, (WIDE,), True),
    (exp_doubled_beside_its_row_sum, (jax.ShapeDtypeStruct((4096, 256), jnp.float32),), True),
    (statistic_returned_beside_normalised_rows, (jax.ShapeDtypeStruct((8192, 256), jnp.float32),), True),
    (maximum_returned_beside_centred_rows, (ROWS,), True),
]


@pytest.mark.parametrize(("fn", "specs", "stored"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_result_read_back_into_its_table_on_the_cpu(fn, specs, stored):
    answer = sphinx_jaxhlo.predict(fn, *specs, target="cpu")
    assert answer.stored is stored, answer
    assert answer.rule == "jaxhlo-predict-cpu-ynn"
    report = sphinx_jaxhlo.analyze(fn, *specs, targets="cpu")["cpu"]
    written = any(m.bytes >= TABLE for m in report.materialized)
    assert written is stored, [(m.name, m.bytes) for m in report.materialized]
