"""The convolution rules (``sphinx_jaxhlo/predict/conv.py``), checked against XLA's CPU and TPU compilers.

On the CPU a convolution YNN takes (2-D, channels last, ``f32`` or ``bf16``, more than 16 features:
``IsConvolutionOpSupportedByYnn``) is an op of a YNN fusion and the YNN rule answers; any other is XLA's
own convolution, which writes its output, and a gradient's backward convolutions read a computed table
that is written.  On the TPU v5e (libtpu is closed: the rules are what the compiles of
``benchmarks/guide_predictor_conv_probes.py`` show) a convolution's output read in two passes is written,
so is a computed table a convolution reads and a table-sized relaid-out copy of its argument (a batch
under 8, a grouped convolution, an ``f32`` image of fewer than 64 channels-last features, or of 64 over
more than 64 x 64 positions; a ``bf16`` image is copied as it is, an argument's copy, no computed table);
one pass over a convolution of an argument fuses; a 1-D channels-first ``f32`` convolution writes a
``bf16`` copy of its input; a 2-D channels-first one under 128 features, and a channels-last one of 65 to
127 over more than 64 x 64 positions, are left to the compile.  Each program is compiled (no run, no
chip), so a later XLA that changes the answer fails here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from conftest import stored_by_the_compile
from jax import lax

import sphinx_jaxhlo
from sphinx_jaxhlo.core import targets

NHWC = ("NHWC", "HWIO", "NHWC")
NCHW = ("NCHW", "OIHW", "NCHW")
SPATIAL = (0, 1, 2)


def _conv(x, w, dn=NHWC, groups=1):
    return lax.conv_general_dilated(x, w, (1,) * (x.ndim - 2), "SAME", dimension_numbers=dn,
                                    feature_group_count=groups)


def relu_sum(x, w):
    return jnp.sum(jax.nn.relu(_conv(x, w)), axis=SPATIAL)


def conv_sum(x, w):
    return jnp.sum(_conv(x, w), axis=SPATIAL)


def batch_norm_statistics(x, w):
    y = _conv(x, w)
    m = jnp.mean(y, axis=SPATIAL, keepdims=True)
    return m, jnp.mean((y - m) ** 2, axis=SPATIAL)


def mean_and_mean_square(x, w):
    y = _conv(x, w)
    return jnp.mean(y, axis=SPATIAL), jnp.mean(y * y, axis=SPATIAL)


def conv_max_f16(x, w):
    return jnp.max(_conv(x, w), axis=SPATIAL)


def conv1d_sum(x, w):
    return jnp.sum(_conv(x, w, ("NWC", "WIO", "NWC")), axis=(0, 1))


def conv1d_channels_first_sum(x, w):
    return jnp.sum(_conv(x, w, ("NCW", "OIW", "NCW")), axis=(0, 2))


def channels_first_sum(x, w):
    return jnp.sum(_conv(x, w, NCHW), axis=(0, 2, 3))


def grouped_sum(x, w):
    return jnp.sum(_conv(x, w, groups=4), axis=SPATIAL)


def depthwise_gelu_sum(x, w):
    return jnp.sum(jax.nn.gelu(_conv(x, w, groups=x.shape[-1])), axis=SPATIAL)


def two_convolutions(x, w1, w2):
    return jnp.sum(_conv(jax.nn.relu(_conv(x, w1)), w2), axis=SPATIAL)


def weight_gradient(x, w):
    return jax.grad(lambda w: jnp.sum(relu_sum(x, w)))(w)


X = "f32[8,64,64,128]"
W = "f32[3,3,128,128]"
CPU_CASES = [
    (relu_sum, (X, W), False, "jaxhlo-predict-cpu-ynn"),
    (batch_norm_statistics, (X, W), True, "jaxhlo-predict-cpu-ynn"),
    (conv_sum, ("bf16[8,64,64,128]", "bf16[3,3,128,128]"), False, "jaxhlo-predict-cpu-ynn"),
    (two_convolutions, (X, W, W), False, "jaxhlo-predict-cpu-ynn"),
    (conv_sum, ("f32[8,64,64,16]", "f32[3,3,16,16]"), True, "jaxhlo-predict-cpu-other"),
    (conv1d_sum, ("f32[16,4096,128]", "f32[3,128,128]"), True, "jaxhlo-predict-cpu-other"),
    (channels_first_sum, ("f32[8,128,64,64]", "f32[128,128,3,3]"), True, "jaxhlo-predict-cpu-other"),
    (conv_max_f16, ("f16[8,64,64,128]", "f16[3,3,128,128]"), True, "jaxhlo-predict-cpu-other"),
    (weight_gradient, (X, W), True, "jaxhlo-predict-cpu-other"),
]
TPU_CASES = [
    (conv_sum, (X, W), False, "jaxhlo-predict-tpu-fused"),
    (mean_and_mean_square, (X, W), False, "jaxhlo-predict-tpu-fused"),
    (depthwise_gelu_sum, (X, "f32[3,3,1,128]"), False, "jaxhlo-predict-tpu-fused"),
    (channels_first_sum, ("bf16[8,128,64,64]", "bf16[128,128,3,3]"), False, "jaxhlo-predict-tpu-fused"),
    (batch_norm_statistics, (X, W), True, "jaxhlo-predict-tpu-readers"),
    (conv_sum, ("f32[2,64,64,128]", W), True, "jaxhlo-predict-tpu-readers"),
    (grouped_sum, (X, "f32[3,3,32,128]"), True, "jaxhlo-predict-tpu-readers"),
    (conv_sum, ("f32[8,64,64,16]", "f32[3,3,16,16]"), True, "jaxhlo-predict-tpu-readers"),
    (two_convolutions, (X, W, W), True, "jaxhlo-predict-tpu-readers"),
    (weight_gradient, (X, W), True, "jaxhlo-predict-tpu-readers"),
    (conv1d_channels_first_sum, ("f32[16,128,4096]", "f32[128,128,3]"), True, "jaxhlo-predict-tpu-readers"),
    # 64 features: read in place over 64 x 64 positions (above), copied over 128 x 128; 128 features in place
    (conv_sum, ("f32[8,128,128,64]", "f32[3,3,64,64]"), True, "jaxhlo-predict-tpu-readers"),
    (conv_sum, ("f32[8,128,128,128]", "f32[3,3,128,128]"), False, "jaxhlo-predict-tpu-fused"),
    # the f32 image's copy is a conversion to bf16: a bf16 image of 32 features is copied as it is (an
    # argument's copy), no computed table
    (conv_sum, ("bf16[8,128,128,32]", "bf16[3,3,32,32]"), False, "jaxhlo-predict-tpu-fused"),
]

def _stored(fn, specs, target: str, table: int) -> bool:
    return stored_by_the_compile(fn, specs, target, table)


@pytest.mark.parametrize(("fn", "specs", "stored", "rule"), CPU_CASES,
                         ids=[f"{c[0].__name__}-{c[1][0]}" for c in CPU_CASES])
def test_a_convolutions_table_on_the_cpu(fn, specs, stored, rule):
    answer = sphinx_jaxhlo.predict(fn, *specs, target="cpu", calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (stored, True, rule), answer
    assert _stored(fn, specs, "cpu", answer.table_elements) is stored


@pytest.mark.skipif(not targets.get_target("tpu:v5e").available(),
                    reason="needs the tpu extra (CI installs it): pip install 'sphinx-jaxhlo[tpu]'")
@pytest.mark.parametrize(("fn", "specs", "stored", "rule"), TPU_CASES,
                         ids=[f"{c[0].__name__}-{c[1][0]}" for c in TPU_CASES])
def test_a_convolutions_table_on_the_tpu(fn, specs, stored, rule):
    answer = sphinx_jaxhlo.predict(fn, *specs, target="tpu:v5e", calibrated=False)
    assert (answer.stored, answer.certain, answer.rule) == (stored, True, rule), answer
    if stored:
        assert answer.where == "on-chip", answer  # 16.8 MB or less: every such stored table was S(1)
    assert _stored(fn, specs, "tpu:v5e", answer.table_elements) is stored


@pytest.mark.skipif(not targets.get_target("tpu:v5e").available(),
                    reason="needs the tpu extra (CI installs it): pip install 'sphinx-jaxhlo[tpu]'")
def test_a_channels_first_convolution_of_few_features_is_left_to_the_compile_on_the_tpu():
    """A 2-D channels-first convolution under 128 input features went both ways on the TPU (32 and 64
    features: a bf16 copy of the input written, compiled here; 96: fused): the answer is "compile it"."""
    specs = ("f32[8,64,64,64]", "f32[64,64,3,3]")
    answer = sphinx_jaxhlo.predict(channels_first_sum, *specs, target="tpu:v5e", calibrated=False)
    assert answer.stored is None and not answer.certain and "compile it" in answer.why, answer
    assert _stored(channels_first_sum, specs, "tpu:v5e", 8 * 64 * 64 * 64)


@pytest.mark.skipif(not targets.get_target("tpu:v5e").available(),
                    reason="needs the tpu extra (CI installs it): pip install 'sphinx-jaxhlo[tpu]'")
def test_a_convolution_of_96_features_over_many_positions_is_left_to_the_compile_on_the_tpu():
    """96 channels-last features over more than 64 x 64 positions went both ways on the TPU (copied at 112 x
    112, 128 x 128 and 256 x 256, compiled here; read in place at 96 x 96 and 192 x 192): "compile it"."""
    specs = ("f32[8,128,128,96]", "f32[3,3,96,96]")
    answer = sphinx_jaxhlo.predict(conv_sum, *specs, target="tpu:v5e", calibrated=False)
    assert answer.stored is None and not answer.certain and "compile it" in answer.why, answer
    assert _stored(conv_sum, specs, "tpu:v5e", 8 * 128 * 128 * 96)
