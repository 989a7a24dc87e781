"""A program whose only reduction is a scatter of computed updates (``segment_sum`` of messages).

No target fuses the updates' computation into the scatter as a reduction fuses its producers: the CPU
and the TPU wrote the updates in every such program measured, so the rules answer stored there; the H100
fused one such program into one kernel and wrote another's, so it is left to the compile.  A scatter of
an argument, or of a constant spread out (``jnp.ones``), computes nothing: the program has no table.
The CPU's answer is compiled here too (no run), so a later XLA that changes it fails here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

import sphinx_jaxhlo

NODES, EDGES = 4096, 65536
H = jax.ShapeDtypeStruct((NODES, 64), jnp.float32)
W = jax.ShapeDtypeStruct((64, 64), jnp.float32)
IDX = jax.ShapeDtypeStruct((EDGES,), jnp.int32)
NORM = jax.ShapeDtypeStruct((EDGES,), jnp.float32)
MESSAGES = EDGES * 64 * 4


def messages(h, w, src, dst, norm):
    m = (h @ w)[src] * norm[:, None]
    return jax.nn.relu(jax.ops.segment_sum(m, dst, num_segments=NODES))


def counts(dst):
    return jax.ops.segment_sum(jnp.ones(dst.shape[0]), dst, num_segments=NODES)


def test_a_scatter_of_computed_updates_is_answered_by_the_gather_and_scatter_rules():
    specs = (H, W, IDX, IDX, NORM)
    cpu = sphinx_jaxhlo.predict(messages, *specs, target="cpu")
    assert (cpu.stored, cpu.rule) == (True, "jaxhlo-predict-cpu-ynn"), cpu
    assert cpu.table_bytes == MESSAGES, cpu
    tpu = sphinx_jaxhlo.predict(messages, *specs, target="tpu:v5e")
    assert (tpu.stored, tpu.rule) == (True, "jaxhlo-predict-tpu-topk"), tpu
    h100 = sphinx_jaxhlo.predict(messages, *specs, target="gpu:h100")
    assert h100.stored is None and not h100.certain and h100.rule == "jaxhlo-predict-all-limits", h100
    report = sphinx_jaxhlo.analyze(messages, *specs, targets="cpu")["cpu"]
    assert any(m.bytes >= MESSAGES for m in report.materialized), [(m.name, m.bytes) for m in report.materialized]


def test_a_scatter_of_a_constant_computes_no_table():
    answer = sphinx_jaxhlo.predict(counts, IDX, target="cpu")
    assert (answer.stored, answer.rule) == (False, "jaxhlo-predict-all-none"), answer
