"""What XLA's algebraic simplifier rewrites before fusion, as the predictor's graph reads it.

``exp(A) * exp(B)`` becomes ``exp(A + B)``, ``exp(A) / exp(B)`` becomes ``exp(A - B)``, ``A / exp(B)``
becomes ``A * exp(-B)`` and ``log(exp(A))`` becomes ``A`` (``algebraic_simplifier.cc``,
``HandleMultiply``, ``HandleDivide`` and ``HandleLog``), whatever else reads the exponential: ``e * e``
beside ``sum(e)`` is a second exponential, not a second reader of ``e``, so the two reductions share no
table and each fuses with its own.  The CPU programs are compiled too (no run), so a later XLA that
stops rewriting fails here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import sphinx_jaxhlo
from sphinx_jaxhlo.predict.graph import Graph


def exp_squared_over_exp(x):
    e = jnp.exp(x)
    return jnp.sum(e * e, 1) / jnp.sum(e, 1)


def log_of_exp_times_exp(x):
    e = jnp.exp(x)
    return jnp.sum(jnp.log(e), 1) * jnp.sum(e, 1)


def scaled_by_exp_over_exp(x, y):
    # x / exp(y) is x * exp(-y): the division reads a second exponential, not exp(y)
    e = jnp.exp(y)
    return jnp.sum(x / e, 1) + jnp.sum(e, 1)


def exp_ratio_over_exp(x):
    e = jnp.exp(x)
    return jnp.sum(e / jnp.exp(x * 0.5), 1) * jnp.sum(e, 1)


def exp_squared_returned(x):
    # the product is an output: written as exp(2x) by its own fusion, e is still read only by its sum
    e = jnp.exp(x)
    return jnp.sum(e, 1), e * e


@pytest.mark.parametrize("shape", [(64, 64), (100, 1000), (512, 2048)], ids=str)
@pytest.mark.parametrize("fn", [exp_squared_over_exp, log_of_exp_times_exp, scaled_by_exp_over_exp, exp_ratio_over_exp],
                         ids=lambda f: f.__name__)
def test_a_rewritten_product_shares_no_table_on_the_cpu(fn, shape):
    specs = [jax.ShapeDtypeStruct(shape, jnp.float32)] * fn.__code__.co_argcount
    answer = sphinx_jaxhlo.predict(fn, *specs, target="cpu")
    # before the rewrites were read, these were "stored, certain": e looked read by two reductions
    assert answer.stored is not True, answer
    report = sphinx_jaxhlo.analyze(fn, *specs, targets="cpu")["cpu"]
    table = shape[0] * shape[1] * 4
    assert not any(m.bytes >= table for m in report.materialized), [(m.name, m.bytes) for m in report.materialized]


def test_the_graph_reads_the_rewrites():
    spec = jax.ShapeDtypeStruct((256, 256), jnp.float32)
    cases = ((exp_squared_over_exp, 2, ("mul", "log", "div")), (log_of_exp_times_exp, 1, ("mul", "log", "div")),
             (exp_squared_returned, 2, ("mul", "log", "div")), (scaled_by_exp_over_exp, 2, ("div", "log")),
             (exp_ratio_over_exp, 2, ("div", "log")))
    for fn, exps, gone in cases:
        graph = Graph(jax.make_jaxpr(fn)(*[spec] * fn.__code__.co_argcount))
        live = graph.live_ops()
        assert sum(op.prim == "exp" for op in live) == exps, fn.__name__
        assert not any(op.prim in gone for op in live if op.outs[0].shape == (256, 256)), fn.__name__
        # every exponential has one reader: nothing is shared
        for op in live:
            if op.prim == "exp":
                assert len(op.outs[0].users) <= 1, fn.__name__

