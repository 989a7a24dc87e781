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
    'wild3': 213,
    'wild4': 222,
    'wild5': 219,
    'wild6': 215,
    'wild7': 204,
    'wild8': 129,
    'wild9': 129,
}

KEYS: dict[str, tuple[int, int]] = {
    'cpu jaxhlo-predict-all-loop fused': (76, 81),
    'cpu jaxhlo-predict-all-loop stored': (76, 76),
    'cpu jaxhlo-predict-all-none fused': (66, 71),
    'cpu jaxhlo-predict-cpu-arg fused': (31, 31),
    'cpu jaxhlo-predict-cpu-dot stored': (104, 104),
    'cpu jaxhlo-predict-cpu-other fused': (3, 6),
    'cpu jaxhlo-predict-cpu-other stored': (239, 239),
    'cpu jaxhlo-predict-cpu-ynn fused': (434, 457),
    'cpu jaxhlo-predict-cpu-ynn stored': (646, 648),
    'gpu:h100 jaxhlo-predict-all-loop fused': (74, 79),
    'gpu:h100 jaxhlo-predict-all-loop stored': (72, 72),
    'gpu:h100 jaxhlo-predict-all-none fused': (65, 69),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (496, 519),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (48, 49),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (535, 535),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (37, 38),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (14, 14),
    'gpu:h100 jaxhlo-predict-h100-topk fused': (1, 1),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (78, 78),
    'tpu:v5e jaxhlo-predict-all-loop fused': (69, 72),
    'tpu:v5e jaxhlo-predict-all-loop stored': (60, 60),
    'tpu:v5e jaxhlo-predict-all-none fused': (96, 100),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (23, 23),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (946, 958),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (30, 30),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (228, 231),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (204, 207),
}

WHERE: dict[str, tuple[int, int]] = {
    'HBM': (207, 211),
    'on-chip': (210, 224),
}

FIRST: dict[str, tuple[int, int]] = {
    'cpu jaxhlo-predict-all-loop fused': (40, 47),
    'cpu jaxhlo-predict-all-loop stored': (45, 46),
    'cpu jaxhlo-predict-all-none fused': (35, 48),
    'cpu jaxhlo-predict-cpu-arg fused': (2, 3),
    'cpu jaxhlo-predict-cpu-dot stored': (47, 50),
    'cpu jaxhlo-predict-cpu-other fused': (2, 6),
    'cpu jaxhlo-predict-cpu-other stored': (114, 114),
    'cpu jaxhlo-predict-cpu-ynn fused': (169, 197),
    'cpu jaxhlo-predict-cpu-ynn stored': (464, 473),
    'gpu:h100 jaxhlo-predict-all-loop fused': (42, 49),
    'gpu:h100 jaxhlo-predict-all-loop stored': (42, 42),
    'gpu:h100 jaxhlo-predict-all-none fused': (45, 60),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (213, 235),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (13, 14),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (332, 332),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (12, 13),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (3, 3),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (60, 62),
    'tpu:v5e jaxhlo-predict-all-loop fused': (37, 43),
    'tpu:v5e jaxhlo-predict-all-loop stored': (38, 39),
    'tpu:v5e jaxhlo-predict-all-none fused': (67, 89),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (11, 11),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (393, 432),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (9, 9),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (138, 144),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (171, 178),
}

WHERE_FIRST: dict[str, tuple[int, int]] = {
    'HBM': (141, 154),
    'on-chip': (89, 116),
}
