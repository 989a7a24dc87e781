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
    'cpu jaxhlo-predict-all-loop fused': (70, 73),
    'cpu jaxhlo-predict-all-loop stored': (62, 62),
    'cpu jaxhlo-predict-all-none fused': (66, 72),
    'cpu jaxhlo-predict-cpu-arg fused': (30, 30),
    'cpu jaxhlo-predict-cpu-dot stored': (98, 98),
    'cpu jaxhlo-predict-cpu-other fused': (2, 4),
    'cpu jaxhlo-predict-cpu-other stored': (211, 211),
    'cpu jaxhlo-predict-cpu-ynn fused': (429, 450),
    'cpu jaxhlo-predict-cpu-ynn stored': (602, 604),
    'gpu:h100 jaxhlo-predict-all-loop fused': (68, 71),
    'gpu:h100 jaxhlo-predict-all-loop stored': (63, 63),
    'gpu:h100 jaxhlo-predict-all-none fused': (65, 70),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (483, 504),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (47, 47),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (495, 495),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (34, 35),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (13, 13),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (58, 59),
    'tpu:v5e jaxhlo-predict-all-loop fused': (61, 64),
    'tpu:v5e jaxhlo-predict-all-loop stored': (50, 50),
    'tpu:v5e jaxhlo-predict-all-none fused': (96, 100),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (20, 20),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (931, 941),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (30, 30),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (206, 208),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (162, 163),
}

WHERE: dict[str, tuple[int, int]] = {
    'HBM': (179, 190),
    'on-chip': (256, 274),
}

FIRST: dict[str, tuple[int, int]] = {
    'cpu jaxhlo-predict-all-loop fused': (34, 37),
    'cpu jaxhlo-predict-all-loop stored': (33, 34),
    'cpu jaxhlo-predict-all-none fused': (35, 48),
    'cpu jaxhlo-predict-cpu-arg fused': (1, 2),
    'cpu jaxhlo-predict-cpu-dot stored': (41, 44),
    'cpu jaxhlo-predict-cpu-other fused': (1, 4),
    'cpu jaxhlo-predict-cpu-other stored': (91, 91),
    'cpu jaxhlo-predict-cpu-ynn fused': (164, 189),
    'cpu jaxhlo-predict-cpu-ynn stored': (420, 429),
    'gpu:h100 jaxhlo-predict-all-loop fused': (36, 39),
    'gpu:h100 jaxhlo-predict-all-loop stored': (34, 34),
    'gpu:h100 jaxhlo-predict-all-none fused': (45, 60),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (200, 220),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (12, 12),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (292, 292),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (9, 10),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (2, 2),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (45, 46),
    'tpu:v5e jaxhlo-predict-all-loop fused': (29, 33),
    'tpu:v5e jaxhlo-predict-all-loop stored': (30, 31),
    'tpu:v5e jaxhlo-predict-all-none fused': (67, 88),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (8, 8),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (378, 414),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (9, 9),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (117, 122),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (132, 137),
}

WHERE_FIRST: dict[str, tuple[int, int]] = {
    'HBM': (105, 117),
    'on-chip': (74, 89),
}
