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
    'wild6': 215,
    'wild7': 204,
    'wild8': 129,
}

KEYS: dict[str, tuple[int, int]] = {
    'cpu jaxhlo-predict-all-loop fused': (50, 50),
    'cpu jaxhlo-predict-all-loop stored': (40, 40),
    'cpu jaxhlo-predict-all-none fused': (59, 66),
    'cpu jaxhlo-predict-cpu-arg fused': (29, 29),
    'cpu jaxhlo-predict-cpu-dot stored': (75, 75),
    'cpu jaxhlo-predict-cpu-other fused': (1, 1),
    'cpu jaxhlo-predict-cpu-other stored': (133, 133),
    'cpu jaxhlo-predict-cpu-ynn fused': (380, 389),
    'cpu jaxhlo-predict-cpu-ynn stored': (397, 400),
    'gpu:h100 jaxhlo-predict-all-loop fused': (46, 47),
    'gpu:h100 jaxhlo-predict-all-loop stored': (40, 40),
    'gpu:h100 jaxhlo-predict-all-none fused': (61, 66),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (386, 400),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (34, 34),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (345, 345),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (30, 31),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (2, 2),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (23, 23),
    'tpu:v5e jaxhlo-predict-all-loop fused': (41, 43),
    'tpu:v5e jaxhlo-predict-all-loop stored': (27, 27),
    'tpu:v5e jaxhlo-predict-all-none fused': (88, 93),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (12, 12),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (788, 796),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (27, 27),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (91, 92),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (64, 64),
}

WHERE: dict[str, tuple[int, int]] = {
    'HBM': (52, 54),
    'on-chip': (40, 44),
}
