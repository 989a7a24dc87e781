"""The rule for a statistic of a table's groups applied back to the table (``sphinx_jaxhlo/predict/dots.py``,
``decide_grouped``), checked against XLA's CPU, H100 and TPU v5e compilers.

Group-wise fake quantisation (AWQ's and GPTQ's ``w.reshape(-1, 128, n)``, its group maximum and minimum, a
scale and a zero point, the weight dequantised and reshaped back before ``x @ wq``): the TPU writes a
table-sized buffer (the scales broadcast over the groups, or the quotient ``g / scale``) for groups of 16 or
more, along the contracted axis or the last; groups of 8, and per-channel scales with no reshape, fuse.  The
H100 writes the dequantised weight before its GEMM, and so does the CPU (the ``clip`` is not in YNN's table)
for ``f32`` data.  Each program is compiled (no run, no chip), so a later XLA that changes the answer fails
here (``benchmarks/guide_predictor_fakequant_probes.py`` has the 69 probes the rule was written from).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from conftest import stored_by_the_compile

import sphinx_jaxhlo
from sphinx_jaxhlo.core import targets

needs_h100 = pytest.mark.skipif(not targets.get_target("gpu:h100").available(),
                                reason="needs the gpu extra: pip install 'sphinx-jaxhlo[gpu]'")
needs_tpu = pytest.mark.skipif(not targets.get_target("tpu:v5e").available(),
                               reason="needs the tpu extra (CI installs it): pip install 'sphinx-jaxhlo[tpu]'")


def _fake_quant(w, group, axis):
    """``w`` quantised to int4 (asymmetric) and back, in groups of ``group`` along ``axis`` (0: down the
    rows, the contracted axis of ``x @ w``; 1: along the last); ``group=0``: one scale a column."""
    if group == 0:
        g, red = w, 0
    elif axis == 0:
        g, red = w.reshape(-1, group, w.shape[1]), 1
    else:
        g, red = w.reshape(w.shape[0], -1, group), 2
    mx = jnp.max(g, axis=red, keepdims=True)
    mn = jnp.min(g, axis=red, keepdims=True)
    scale = jnp.maximum(mx - mn, 1e-5) / 15
    zero = jnp.round(-mn / scale)
    q = jnp.clip(jnp.round(g / scale) + zero, 0, 15)
    return ((q - zero) * scale).reshape(w.shape)


def grouped_128(x, w):
    return jnp.sum(jax.nn.logsumexp(x @ _fake_quant(w, 128, 0), axis=-1))


def grouped_32_last(x, w):
    return jnp.sum(jax.nn.logsumexp(x @ _fake_quant(w, 32, 1), axis=-1))


def grouped_8(x, w):
    return jnp.sum(jax.nn.logsumexp(x @ _fake_quant(w, 8, 0), axis=-1))


def grouped_12(x, w):
    return jnp.sum(jax.nn.logsumexp(x @ _fake_quant(w, 12, 0), axis=-1))


def per_channel(x, w):
    return jnp.sum(jax.nn.logsumexp(x @ _fake_quant(w, 0, 0), axis=-1))


SPECS = ("f32[512,1024]", "f32[1024,1024]")


def _answered_as_compiled(fn, target, stored, rule):
    """The rules' answer is ``stored`` under ``rule``, certain, and the compile agrees: a buffer of 90 % of
    the table's elements (the weight's), or none."""
    answer = sphinx_jaxhlo.predict(fn, *SPECS, target=target, calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (stored, True, rule), answer
    assert stored_by_the_compile(fn, SPECS, target, answer.table_elements, temp_on=()) is stored
    return answer


TPU_CASES = [
    (grouped_128, True, "jaxhlo-predict-tpu-readers"),
    (grouped_32_last, True, "jaxhlo-predict-tpu-readers"),
    (grouped_8, False, "jaxhlo-predict-tpu-fused"),
    (per_channel, False, "jaxhlo-predict-all-none"),
]


@needs_tpu
@pytest.mark.parametrize(("fn", "stored", "rule"), TPU_CASES, ids=[c[0].__name__ for c in TPU_CASES])
def test_group_scales_applied_back_write_a_table_on_the_tpu(fn, stored, rule):
    answer = _answered_as_compiled(fn, "tpu:v5e", stored, rule)
    if stored:
        assert "groups of" in answer.why and "probes of" in answer.why, answer


def test_groups_between_8_and_16_are_left_to_the_compile_on_the_tpu():
    """Groups of 8 fused and of 16 were written; none between was measured."""
    answer = sphinx_jaxhlo.predict(grouped_12, "f32[512,1020]", "f32[1020,1020]", target="tpu:v5e",
                                   calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (None, False, "jaxhlo-predict-all-limits"), answer


@needs_h100
def test_the_dequantised_weight_is_written_before_the_gemm_on_the_h100():
    _answered_as_compiled(grouped_128, "gpu:h100", True, "jaxhlo-predict-h100-gemm")


def test_the_dequantised_weight_is_written_for_the_dot_on_the_cpu():
    _answered_as_compiled(grouped_128, "cpu", True, "jaxhlo-predict-cpu-ynn")
