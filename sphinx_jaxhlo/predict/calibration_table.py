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
    'cpu jaxhlo-predict-all-loop fused': (59, 60),
    'cpu jaxhlo-predict-all-loop stored': (44, 44),
    'cpu jaxhlo-predict-all-none fused': (64, 70),
    'cpu jaxhlo-predict-cpu-arg fused': (29, 29),
    'cpu jaxhlo-predict-cpu-dot stored': (86, 86),
    'cpu jaxhlo-predict-cpu-other fused': (1, 2),
    'cpu jaxhlo-predict-cpu-other stored': (179, 179),
    'cpu jaxhlo-predict-cpu-ynn fused': (412, 429),
    'cpu jaxhlo-predict-cpu-ynn stored': (514, 515),
    'gpu:h100 jaxhlo-predict-all-loop fused': (56, 57),
    'gpu:h100 jaxhlo-predict-all-loop stored': (45, 45),
    'gpu:h100 jaxhlo-predict-all-none fused': (62, 67),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (446, 463),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (37, 37),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (433, 433),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (31, 32),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (13, 13),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (43, 44),
    'tpu:v5e jaxhlo-predict-all-loop fused': (51, 53),
    'tpu:v5e jaxhlo-predict-all-loop stored': (31, 31),
    'tpu:v5e jaxhlo-predict-all-none fused': (92, 97),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (17, 17),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (881, 888),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (28, 28),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (171, 172),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (107, 107),
}

WHERE: dict[str, tuple[int, int]] = {
    'HBM': (71, 71),
    'on-chip': (161, 171),
}
