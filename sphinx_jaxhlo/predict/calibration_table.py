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
    'wild3': 213,
    'wild4': 222,
    'wild5': 219,
}

KEYS: dict[str, tuple[int, int]] = {
    'cpu jaxhlo-predict-all-loop fused': (45, 45),
    'cpu jaxhlo-predict-all-loop stored': (31, 31),
    'cpu jaxhlo-predict-all-none fused': (55, 57),
    'cpu jaxhlo-predict-cpu-arg fused': (29, 29),
    'cpu jaxhlo-predict-cpu-dot stored': (65, 65),
    'cpu jaxhlo-predict-cpu-other fused': (1, 1),
    'cpu jaxhlo-predict-cpu-other stored': (115, 115),
    'cpu jaxhlo-predict-cpu-ynn fused': (345, 351),
    'cpu jaxhlo-predict-cpu-ynn stored': (327, 331),
    'gpu:h100 jaxhlo-predict-all-loop fused': (41, 42),
    'gpu:h100 jaxhlo-predict-all-loop stored': (31, 31),
    'gpu:h100 jaxhlo-predict-all-none fused': (52, 53),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (346, 356),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (32, 32),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (293, 293),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (27, 28),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (2, 2),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (11, 11),
    'tpu:v5e jaxhlo-predict-all-loop fused': (37, 38),
    'tpu:v5e jaxhlo-predict-all-loop stored': (18, 18),
    'tpu:v5e jaxhlo-predict-all-none fused': (77, 78),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (12, 12),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (714, 717),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (25, 25),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (70, 71),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (36, 36),
}

WHERE: dict[str, tuple[int, int]] = {
    'HBM': (39, 41),
    'on-chip': (33, 37),
}
