"""The predictor's measured record per rule: written by ``benchmarks/guide_predictor_calibrate.py``.

Do not edit by hand: run the script.  ``KEYS``: ``"target anchor verdict"`` -> (right, measured);
``WHERE``: the TPU's place of a stored table -> (right, measured); ``FAMILIES``: answers counted per
family (program x target with truth)."""

FAMILIES: dict[str, int] = {
    'holdout': 486,
    'holdout2': 354,
    'holdout3': 258,
    'main': 1002,
    'wild': 204,
    'wild2': 225,
}

KEYS: dict[str, tuple[int, int]] = {
    'cpu jaxhlo-predict-all-loop fused': (38, 38),
    'cpu jaxhlo-predict-all-loop stored': (23, 23),
    'cpu jaxhlo-predict-all-none fused': (47, 47),
    'cpu jaxhlo-predict-cpu-arg fused': (29, 29),
    'cpu jaxhlo-predict-cpu-dot stored': (56, 56),
    'cpu jaxhlo-predict-cpu-other fused': (1, 1),
    'cpu jaxhlo-predict-cpu-other stored': (99, 99),
    'cpu jaxhlo-predict-cpu-ynn fused': (293, 296),
    'cpu jaxhlo-predict-cpu-ynn stored': (232, 235),
    'gpu:h100 jaxhlo-predict-all-loop fused': (35, 35),
    'gpu:h100 jaxhlo-predict-all-loop stored': (23, 23),
    'gpu:h100 jaxhlo-predict-all-none fused': (40, 41),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (273, 280),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (31, 31),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (240, 240),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (25, 25),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (2, 2),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (8, 8),
    'tpu:v5e jaxhlo-predict-all-loop fused': (31, 31),
    'tpu:v5e jaxhlo-predict-all-loop stored': (10, 10),
    'tpu:v5e jaxhlo-predict-all-none fused': (63, 65),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (12, 12),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (595, 597),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (22, 22),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (55, 56),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (18, 18),
}

WHERE: dict[str, tuple[int, int]] = {
    'HBM': (34, 34),
    'on-chip': (27, 29),
}
