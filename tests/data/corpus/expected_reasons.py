"""What made the stored data of every unfused reduction over 1 MiB in the corpus, checked by hand.

For each (target, program, reduction) of ``expected.py`` that is unfused and
reads at least 1 MiB: the producer kind :mod:`sphinx_jaxhlo.reasons` names.
Each was checked once against the module in ``<target>/<program>.txt``: the
kernel that writes the buffer, its ops and its readers.  What the modules show:

- CPU: the dots are ``__ynn_fusion`` kernels (``gemm``), also where the YNN
  kernel adds elementwise work after the dot (attention's scores); the YNN
  fusion leaves out ``cos``/``sin``, whose loop kernels write their result
  (``elementwise``); a loop kernel read by two or more kernels is
  ``multi-reader-fusion`` (the softmax's exp in the gradients, layernorm's
  backward terms); the layernorm gradient's YNN reduce kernel is ``ynn``;
  the first prefix-scan stage of ``cumsum_then_sum`` is ``reduction``; the
  gathered rows are a ``gather`` kernel.
- H100: the GEMMs are Triton GEMM fusions ``__triton_nested_gemm_fusion``
  (``gemm``); the convolution is a cuDNN custom call (``convolution``); FFT
  and sort are their own kernels (``fft``, ``sort``); the max-pool's output
  (a ``reduce-window``) and the squared distances (a ``reduce``) that a
  sum and a min read are ``reduction``; Triton softmax and
  layernorm fusions and loop kernels are ``elementwise`` (or
  ``multi-reader-fusion`` with two readers).
- TPU v5e: dots are ``convolution`` ops inside kOutput fusions that also
  write the scores (``gemm``); the real convolution says
  ``conv_general_dilated`` (``convolution``); the FFT is computed with matrix
  products traced from ``jit(fft)`` (``fft``); the sorted rows reach the sum
  through a layout ``copy``, looked through (``sort``); the gathered rows
  are a gather fusion (``gather``) and the prefix scan's stage a
  ``reduction``, as on the CPU, and so are the squared distances the
  ``min`` of ``pairwise_dist`` reads.

When the modules are regenerated, the test names every entry that changed:
read the new module and update the entry by hand.
"""

from __future__ import annotations

#: (target, program, reduction) -> producer kind.
EXPECTED_REASONS: dict[tuple[str, str, str], str] = {
    ('cpu', 'attention_grad', 'reduce_max.0'): 'multi-reader-fusion',
    ('cpu', 'attention_grad', 'reduce_sum.1'): 'gemm',
    ('cpu', 'attention_grad', 'reduce_sum.0'): 'gemm',
    ('cpu', 'complex_phase', 'reduce-window.2'): 'elementwise',
    ('cpu', 'cond_branches', 'reduce_sum.0'): 'elementwise',
    ('cpu', 'cond_branches', 'reduce_sum.1'): 'elementwise',
    ('cpu', 'cumsum_then_sum', 'reduce-window.5'): 'reduction',
    ('cpu', 'dot_product_attention', 'reduce_max.0'): 'elementwise',
    ('cpu', 'dot_product_attention', 'reduce_sum.0'): 'elementwise',
    ('cpu', 'f16_softmax', 'reduce_sum.1'): 'elementwise',
    ('cpu', 'f16_softmax', 'reduce_sum.0'): 'elementwise',
    ('cpu', 'fft_power', 'reduce_sum.0'): 'elementwise',
    ('cpu', 'fori_loop', 'reduce_sum.8'): 'elementwise',
    ('cpu', 'gather_rows', 'reduce_sum.0'): 'gather',
    ('cpu', 'int8_matmul', 'reduce-window.2'): 'gemm',
    ('cpu', 'layernorm_grad', 'reduce_sum.8'): 'ynn',
    ('cpu', 'layernorm_grad', 'reduce_sum.0'): 'multi-reader-fusion',
    ('cpu', 'layernorm_grad', 'reduce_sum.7'): 'elementwise',
    ('cpu', 'layernorm_grad', 'reduce_sum.6'): 'elementwise',
    ('cpu', 'layernorm_grad', 'reduce_sum.2'): 'ynn',
    ('cpu', 'layernorm_grad', 'reduce_sum.1'): 'multi-reader-fusion',
    ('cpu', 'one_hot_counts', 'reduce_sum.0'): 'elementwise',
    ('cpu', 'outer_sum', 'reduce_sum.0'): 'elementwise',
    ('cpu', 'prng_normal', 'reduce_sum.0'): 'elementwise',
    ('cpu', 'prng_split_dropout', 'reduce_sum.0'): 'elementwise',
    ('cpu', 'scan_chunks', 'reduce_sum.1'): 'elementwise',
    ('cpu', 'seed_explicit', 'reduce_sum.0'): 'elementwise',
    ('cpu', 'seed_with_dot', 'reduce_sum.0'): 'elementwise',
    ('cpu', 'xent_grad', 'reduce_max.0'): 'gemm',
    ('cpu', 'xent_grad', 'reduce_sum.0'): 'multi-reader-fusion',
    ('cpu', 'xent_large_vocab', 'reduce_max.0'): 'gemm',
    ('cpu', 'xent_large_vocab', 'reduce_sum.6'): 'gemm',
    ('gpu:h100', 'attention', 'reduce_max.9'): 'gemm',
    ('gpu:h100', 'attention', 'reduce_sum.1'): 'gemm',
    ('gpu:h100', 'attention_grad', 'reduce_max.11'): 'gemm',
    ('gpu:h100', 'attention_grad', 'reduce_sum.21.7'): 'gemm',
    ('gpu:h100', 'attention_grad', 'reduce_max.19'): 'gemm',
    ('gpu:h100', 'attention_grad', 'reduce_sum.21.5'): 'gemm',
    ('gpu:h100', 'attention_grad', 'reduce_sum.22.3'): 'gemm',
    ('gpu:h100', 'batched_matmul_sum', 'reduce.1.1'): 'gemm',
    ('gpu:h100', 'complex_phase', 'reduce_sum.7.1'): 'elementwise',
    ('gpu:h100', 'cond_branches', 'reduce_sum.1.1'): 'elementwise',
    ('gpu:h100', 'cond_branches', 'reduce_sum.0.1'): 'elementwise',
    ('gpu:h100', 'conv_relu_pool', 'reduce_window_max.7.1'): 'convolution',
    ('gpu:h100', 'conv_relu_pool', 'reduce_sum.7.1'): 'reduction',
    ('gpu:h100', 'dot_product_attention', 'reduce.11'): 'gemm',
    ('gpu:h100', 'dot_product_attention', 'reduce.6'): 'gemm',
    ('gpu:h100', 'f16_softmax', 'reduce_sum.15.3'): 'elementwise',
    ('gpu:h100', 'fft_power', 'reduce_sum.7.1'): 'fft',
    ('gpu:h100', 'fori_loop', 'reduce_sum.8.1'): 'elementwise',
    ('gpu:h100', 'int8_matmul', 'reduce_sum.7.1'): 'gemm',
    ('gpu:h100', 'layernorm_grad', 'reduce_sum.79.1'): 'multi-reader-fusion',
    ('gpu:h100', 'layernorm_grad', 'reduce_sum.81.1'): 'elementwise',
    ('gpu:h100', 'pairwise_dist', 'reduce_min.7.1'): 'reduction',
    ('gpu:h100', 'prng_split_dropout', 'reduce_sum.7.1'): 'elementwise',
    ('gpu:h100', 'scan_chunks', 'reduce_sum.0.1'): 'gemm',
    ('gpu:h100', 'seed_with_dot', 'reduce.1.1'): 'gemm',
    ('gpu:h100', 'sort_rows', 'reduce_sum.7.1'): 'sort',
    ('gpu:h100', 'xent_grad', 'reduce.5'): 'gemm',
    ('gpu:h100', 'xent_grad', 'reduce.2.1'): 'gemm',
    ('gpu:h100', 'xent_large_vocab', 'reduce.5'): 'gemm',
    ('gpu:h100', 'xent_large_vocab', 'reduce.2.1'): 'gemm',
    ('tpu:v5e', 'attention', 'reduce_sum.0'): 'gemm',
    ('tpu:v5e', 'attention_grad', 'reduce_sum.1'): 'gemm',
    ('tpu:v5e', 'attention_grad', 'reduce_sum.0'): 'gemm',
    ('tpu:v5e', 'conv_relu_pool', 'reduce_window_max.0.clone.1'): 'convolution',
    ('tpu:v5e', 'cumsum_then_sum', 'reduce_sum.0'): 'reduction',
    ('tpu:v5e', 'dot_product_attention', 'reduce.2'): 'gemm',
    ('tpu:v5e', 'fft_power', 'reduce.1'): 'fft',
    ('tpu:v5e', 'gather_rows', 'reduce_sum.7'): 'gather',
    ('tpu:v5e', 'pairwise_dist', 'reduce_min.7'): 'reduction',
    ('tpu:v5e', 'sort_rows', 'reduce_sum.0'): 'sort',
    ('tpu:v5e', 'xent_grad', 'reduce_sum.0'): 'gemm',
    ('tpu:v5e', 'xent_large_vocab', 'reduce_sum.0'): 'gemm',
}
