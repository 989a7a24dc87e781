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
    'wild10': 132,
    'wild11': 141,
    'wild12': 147,
    'wild13': 144,
    'wild14': 144,
    'wild2': 225,
    'wild3': 213,
    'wild4': 222,
    'wild5': 219,
    'wild6': 215,
    'wild7': 204,
    'wild8': 129,
    'wild9': 129,
}

KEYS: dict[str, tuple[int, int]] = {
    'cpu jaxhlo-predict-all-loop fused': (63, 64),
    'cpu jaxhlo-predict-all-loop stored': (50, 50),
    'cpu jaxhlo-predict-all-none fused': (65, 71),
    'cpu jaxhlo-predict-cpu-arg fused': (29, 29),
    'cpu jaxhlo-predict-cpu-dot stored': (91, 91),
    'cpu jaxhlo-predict-cpu-other fused': (1, 2),
    'cpu jaxhlo-predict-cpu-other stored': (187, 187),
    'cpu jaxhlo-predict-cpu-ynn fused': (417, 435),
    'cpu jaxhlo-predict-cpu-ynn stored': (533, 535),
    'gpu:h100 jaxhlo-predict-all-loop fused': (60, 61),
    'gpu:h100 jaxhlo-predict-all-loop stored': (51, 51),
    'gpu:h100 jaxhlo-predict-all-none fused': (63, 68),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (453, 471),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (38, 38),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (450, 450),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (33, 34),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (13, 13),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (47, 48),
    'tpu:v5e jaxhlo-predict-all-loop fused': (54, 56),
    'tpu:v5e jaxhlo-predict-all-loop stored': (37, 37),
    'tpu:v5e jaxhlo-predict-all-none fused': (93, 99),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (19, 19),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (893, 901),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (29, 29),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (182, 183),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (117, 117),
}

WHERE: dict[str, tuple[int, int]] = {
    'HBM': (140, 144),
    'on-chip': (225, 237),
}
