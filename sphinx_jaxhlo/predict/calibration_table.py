"""The predictor's measured record per rule: written by ``benchmarks/guide_predictor_calibrate.py``.

Do not edit by hand: run the script.  ``KEYS``: ``"target anchor verdict"`` -> (right, measured);
``WHERE``: the TPU's place of a stored table -> (right, measured); ``FAMILIES``: answers counted per
family (program x target with truth); ``FIRST`` and ``WHERE_FIRST``: the same counts over the wild
families' first evaluations, the programs the rules had not seen when they answered."""

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
    'wild16': 150,
    'wild17': 147,
    'wild18': 162,
    'wild19': 177,
    'wild2': 225,
    'wild20': 186,
    'wild3': 213,
    'wild4': 222,
    'wild5': 219,
    'wild6': 215,
    'wild7': 204,
    'wild8': 129,
    'wild9': 129,
}

KEYS: dict[str, tuple[int, int]] = {
    'cpu jaxhlo-predict-all-loop fused': (87, 94),
    'cpu jaxhlo-predict-all-loop stored': (84, 84),
    'cpu jaxhlo-predict-all-none fused': (68, 74),
    'cpu jaxhlo-predict-cpu-arg fused': (32, 32),
    'cpu jaxhlo-predict-cpu-dot stored': (106, 106),
    'cpu jaxhlo-predict-cpu-other fused': (3, 6),
    'cpu jaxhlo-predict-cpu-other stored': (248, 248),
    'cpu jaxhlo-predict-cpu-ynn fused': (434, 458),
    'cpu jaxhlo-predict-cpu-ynn stored': (671, 673),
    'gpu:h100 jaxhlo-predict-all-loop fused': (85, 92),
    'gpu:h100 jaxhlo-predict-all-loop stored': (79, 79),
    'gpu:h100 jaxhlo-predict-all-none fused': (67, 71),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (499, 523),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (48, 49),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (555, 555),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (38, 39),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (14, 14),
    'gpu:h100 jaxhlo-predict-h100-topk fused': (1, 1),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (87, 87),
    'tpu:v5e jaxhlo-predict-all-loop fused': (81, 84),
    'tpu:v5e jaxhlo-predict-all-loop stored': (67, 68),
    'tpu:v5e jaxhlo-predict-all-none fused': (99, 103),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (23, 23),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (949, 964),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (31, 31),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (239, 243),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (218, 221),
}

WHERE: dict[str, tuple[int, int]] = {
    'HBM': (229, 233),
    'on-chip': (201, 208),
}

FIRST: dict[str, tuple[int, int]] = {
    'cpu jaxhlo-predict-all-loop fused': (50, 59),
    'cpu jaxhlo-predict-all-loop stored': (53, 55),
    'cpu jaxhlo-predict-all-none fused': (37, 51),
    'cpu jaxhlo-predict-cpu-arg fused': (3, 4),
    'cpu jaxhlo-predict-cpu-dot stored': (49, 52),
    'cpu jaxhlo-predict-cpu-other fused': (2, 6),
    'cpu jaxhlo-predict-cpu-other stored': (123, 123),
    'cpu jaxhlo-predict-cpu-ynn fused': (169, 198),
    'cpu jaxhlo-predict-cpu-ynn stored': (489, 498),
    'gpu:h100 jaxhlo-predict-all-loop fused': (52, 61),
    'gpu:h100 jaxhlo-predict-all-loop stored': (49, 50),
    'gpu:h100 jaxhlo-predict-all-none fused': (47, 62),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (216, 240),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (13, 14),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (352, 352),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (13, 14),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (3, 3),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (68, 70),
    'tpu:v5e jaxhlo-predict-all-loop fused': (48, 54),
    'tpu:v5e jaxhlo-predict-all-loop stored': (45, 48),
    'tpu:v5e jaxhlo-predict-all-none fused': (70, 92),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (11, 11),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (396, 438),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (10, 10),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (149, 156),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (185, 192),
}

WHERE_FIRST: dict[str, tuple[int, int]] = {
    'HBM': (163, 176),
    'on-chip': (94, 125),
}
