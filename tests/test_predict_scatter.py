"""A program whose only reduction is a scatter (``segment_sum`` of messages, ``.at[i].add``).

Whether a scatter's updates are written depends on the sizes on every target: the TPU wrote a graph's
messages at 100,000 nodes and fused the gather, the multiply and the scatter into one kernel at 4,096;
the CPU wrote computed and constant updates alike.  So the rules leave such a program to the compile.
Updates that are an argument, or one only reshaped or transposed, are no table: nothing is written.
The CPU's side of both is compiled here (no run), so a later XLA that changes it fails here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import sphinx_jaxhlo

NODES, EDGES = 4096, 65536
H = jax.ShapeDtypeStruct((NODES, 64), jnp.float32)
W = jax.ShapeDtypeStruct((64, 64), jnp.float32)
IDX = jax.ShapeDtypeStruct((EDGES,), jnp.int32)
NORM = jax.ShapeDtypeStruct((EDGES,), jnp.float32)
FLAT = jax.ShapeDtypeStruct((EDGES * 64,), jnp.float32)
TABLE = EDGES * 64 * 4


def messages(h, w, src, dst, norm):
    m = (h @ w)[src] * norm[:, None]
    return jax.nn.relu(jax.ops.segment_sum(m, dst, num_segments=NODES))


def counts(dst):
    return jax.ops.segment_sum(jnp.ones((dst.shape[0], 64)), dst, num_segments=NODES)


def reshaped_argument(x, dst):
    return jax.ops.segment_sum(x.reshape(EDGES, 64), dst, num_segments=1024)


@pytest.mark.parametrize(("fn", "specs"), [(messages, (H, W, IDX, IDX, NORM)), (counts, (IDX,))],
                         ids=["messages", "counts"])
def test_a_scatter_of_updates_the_program_makes_is_left_to_the_compile(fn, specs):
    for target in ("cpu", "gpu:h100", "tpu:v5e"):
        answer = sphinx_jaxhlo.predict(fn, *specs, target=target)
        assert answer.stored is None and not answer.certain, answer
        assert answer.rule == "jaxhlo-predict-all-limits" and "scatter" in answer.why, answer
    report = sphinx_jaxhlo.analyze(fn, *specs, targets="cpu")["cpu"]
    assert any(m.bytes >= TABLE for m in report.materialized), [(m.name, m.bytes) for m in report.materialized]


def test_a_scatter_of_an_argument_moved_has_no_table():
    answer = sphinx_jaxhlo.predict(reshaped_argument, FLAT, IDX, target="cpu")
    assert (answer.stored, answer.rule) == (False, "jaxhlo-predict-all-none"), answer
    report = sphinx_jaxhlo.analyze(reshaped_argument, FLAT, IDX, targets="cpu")["cpu"]
    assert not any(m.bytes >= TABLE for m in report.materialized), [(m.name, m.bytes) for m in report.materialized]
