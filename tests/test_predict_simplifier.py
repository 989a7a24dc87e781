"""What XLA's algebraic simplifier rewrites before fusion, as the predictor's graph reads it.

``exp(A) * exp(B)`` becomes ``exp(A + B)``, ``exp(A) / exp(B)`` becomes ``exp(A - B)``, ``A / exp(B)``
becomes ``A * exp(-B)`` and ``log(exp(A))`` becomes ``A`` (``algebraic_simplifier.cc``,
``HandleMultiply``, ``HandleDivide`` and ``HandleLog``), whatever else reads the exponential: ``e * e``
beside ``sum(e)`` is a second exponential, not a second reader of ``e``, so the two reductions share no
table and each fuses with its own.  A select on a constant predicate is the case it picks and a
reduction over dimensions of size 1 is a reshape (a layer norm's gradient).  The CPU programs are
compiled too (no run), so a later XLA that stops rewriting fails here.
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



def layer_norm_loss(x, g):
    m = jnp.mean(x, -1, keepdims=True)
    v = jnp.var(x, -1, keepdims=True)
    return jnp.sum(((x - m) / jnp.sqrt(v + 1e-5) * g) ** 2)


@pytest.mark.parametrize(("shape", "written"), [((4096, 256), False), ((512, 2048), True)], ids=str)
def test_a_layer_norms_gradient_on_the_cpu(shape, written):
    # jnp.var guards against no degrees of freedom with a select on N - ddof > 0, a constant XLA folds, and
    # its gradient sums over a dimension of size 1, a reshape: neither stands between the two passes.  At
    # 4,096 rows the gradient is one YNN fusion (it was "stored, certain"); at 512 rows XLA writes tables.
    specs = (jax.ShapeDtypeStruct(shape, jnp.float32), jax.ShapeDtypeStruct(shape[1:], jnp.float32))
    grad = jax.grad(layer_norm_loss)
    answer = sphinx_jaxhlo.predict(grad, *specs, target="cpu")
    assert answer.stored is (True if written else not True), answer
    if written:
        assert answer.rule == "jaxhlo-predict-cpu-ynn", answer
    report = sphinx_jaxhlo.analyze(grad, *specs, targets="cpu")["cpu"]
    table = shape[0] * shape[1] * 4
    big = [(m.name, m.bytes) for m in report.materialized if m.bytes >= table]
    assert bool(big) is written, big


def test_constants_fold_and_a_select_on_one_picks_its_case():
    graph = Graph(jax.make_jaxpr(lambda x: jnp.var(x, -1))(jax.ShapeDtypeStruct((64, 256), jnp.float32)))
    live = graph.live_ops()
    assert not any(op.prim == "select_n" for op in live)
    # with a predicate only known at run time the select stays
    graph = Graph(jax.make_jaxpr(lambda x, t: jnp.where(t > 0, x, 0.0).sum())(
        jax.ShapeDtypeStruct((64, 256), jnp.float32), jax.ShapeDtypeStruct((), jnp.float32)))
    assert any(op.prim == "select_n" for op in graph.live_ops())
    # a reduction over a dimension of size 1 reduces nothing
    graph = Graph(jax.make_jaxpr(lambda x: jnp.sum(x, 1))(jax.ShapeDtypeStruct((64, 1, 8), jnp.float32)))
    assert [op.prim for op in graph.live_ops()] == ["reshape"]
