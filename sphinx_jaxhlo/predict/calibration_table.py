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
    'wild15': 141,
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
    'cpu jaxhlo-predict-all-loop fused': (63, 66),
    'cpu jaxhlo-predict-all-loop stored': (53, 53),
    'cpu jaxhlo-predict-all-none fused': (66, 72),
    'cpu jaxhlo-predict-cpu-arg fused': (30, 30),
    'cpu jaxhlo-predict-cpu-dot stored': (93, 93),
    'cpu jaxhlo-predict-cpu-other fused': (1, 3),
    'cpu jaxhlo-predict-cpu-other stored': (196, 196),
    'cpu jaxhlo-predict-cpu-ynn fused': (422, 441),
    'cpu jaxhlo-predict-cpu-ynn stored': (554, 556),
    'gpu:h100 jaxhlo-predict-all-loop fused': (61, 63),
    'gpu:h100 jaxhlo-predict-all-loop stored': (54, 54),
    'gpu:h100 jaxhlo-predict-all-none fused': (64, 69),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (458, 477),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (38, 38),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (464, 464),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (33, 34),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (13, 13),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (52, 53),
    'tpu:v5e jaxhlo-predict-all-loop fused': (55, 58),
    'tpu:v5e jaxhlo-predict-all-loop stored': (44, 44),
    'tpu:v5e jaxhlo-predict-all-none fused': (95, 99),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (19, 19),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (905, 914),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (29, 29),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (192, 193),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (131, 131),
}

WHERE: dict[str, tuple[int, int]] = {
    'HBM': (152, 158),
    'on-chip': (242, 254),
}
