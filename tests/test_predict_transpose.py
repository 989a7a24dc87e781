"""The CPU rule for a transpose on the table's path (rule 4, YNN's table), checked against XLA.

A transpose with anything but the reduction after it is a copy that writes the transposed table; one
the reduction reads directly folds into it, and one a second transpose undoes vanishes; a transposed
contraction result read before the reduction is left to the compile.  An argument only transposed or
reshaped on the way to two reductions makes them no siblings: each reads the argument.  Each program is also compiled
for the CPU (no run), so a later XLA that changes the answer fails here, not on a reader's page.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import sphinx_jaxhlo

N = 1024
X = jax.ShapeDtypeStruct((N, N), jnp.float32)
X3 = jax.ShapeDtypeStruct((64, 128, 128), jnp.float32)  # as many bytes as X
TABLE = N * N * 4


def exp_transposed_exp(x):
    return jnp.sum(jnp.exp(jnp.exp(x).T), axis=1)


def tanh_transposed_negated_max(x):
    return jnp.max(-jnp.tanh(x).T, axis=1)


def exp_transposed_plus(x, y):
    return jnp.sum(jnp.exp(x).T + y, axis=0)


def exp_transposed_summed(x):
    return jnp.sum(jnp.exp(x).T, axis=1)


def exp_transposed_twice(x):
    return jnp.sum(jnp.exp(x).T.T * 2.0, axis=1)


def exp_rotated_twice(x):
    # two transposes that do not undo each other: XLA merges them into one the reduction reads
    return jnp.sum(jnp.transpose(jnp.transpose(jnp.exp(x), (1, 2, 0)), (1, 2, 0)), axis=2)


def product_transposed_exp(x, y):
    return jnp.sum(jnp.exp((x @ y).T), axis=1)


def argument_transposed_for_two_reductions(x):
    # the argument's transpose is read by the second reduction and undone for the first: nothing is
    # computed twice, so nothing is stored (the two reductions are no siblings of one table)
    t = x.T
    return jnp.sum(jnp.exp(t.T), axis=1) + jnp.sum(t, axis=1)


def argument_reshaped_for_two_reductions(x):
    t = x.reshape(64, -1)
    return jnp.sum(jnp.exp(t), axis=1) + jnp.sum(t, axis=1)


def argument_transposed_before_exp(x):
    t = x.T
    return jnp.sum(jnp.exp(t), axis=1) + jnp.sum(t, axis=1)


CASES = [
    (exp_transposed_exp, (X,), True),
    (tanh_transposed_negated_max, (X,), True),
    (exp_transposed_plus, (X, X), True),
    (exp_transposed_summed, (X,), False),
    (exp_transposed_twice, (X,), False),
    (exp_rotated_twice, (X3,), False),
    (product_transposed_exp, (X, X), None),
    (argument_transposed_for_two_reductions, (X,), False),
    (argument_reshaped_for_two_reductions, (X,), False),
    (argument_transposed_before_exp, (X,), True),
]


@pytest.mark.parametrize(("fn", "specs", "stored"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_transpose_on_the_tables_path_on_the_cpu(fn, specs, stored):
    answer = sphinx_jaxhlo.predict(fn, *specs, target="cpu")
    assert answer.stored is stored, answer
    if stored is None:
        assert not answer.certain and answer.rule == "jaxhlo-predict-all-limits"
    else:
        assert answer.rule == "jaxhlo-predict-cpu-ynn"
    report = sphinx_jaxhlo.analyze(fn, *specs, targets="cpu")["cpu"]
    written = any(m.bytes >= TABLE for m in report.materialized)
    assert written is (stored if stored is not None else True), [(m.name, m.bytes) for m in report.materialized]


def product_of_transposed_argument(x):
    return jnp.prod(x.T, axis=1)


def test_a_reduction_of_an_argument_only_moved_writes_nothing():
    # the product is no YNN reduction (a reduce-window), yet it reads the argument: the move folds in
    answer = sphinx_jaxhlo.predict(product_of_transposed_argument, X, target="cpu")
    assert (answer.stored, answer.rule) == (False, "jaxhlo-predict-all-none"), answer
    report = sphinx_jaxhlo.analyze(product_of_transposed_argument, X, targets="cpu")["cpu"]
    assert not any(m.bytes >= TABLE for m in report.materialized), [(m.name, m.bytes) for m in report.materialized]


def test_a_table_of_no_elements_is_not_stored():
    empty = jax.ShapeDtypeStruct((0, 256), jnp.float32)
    for target in ("cpu", "gpu:h100", "tpu:v5e"):
        answer = sphinx_jaxhlo.predict(lambda x: jnp.exp(x) / jnp.sum(jnp.exp(x), 1, keepdims=True), empty,
                                       target=target)
        assert answer.stored is False and answer.table_bytes == 0, answer
