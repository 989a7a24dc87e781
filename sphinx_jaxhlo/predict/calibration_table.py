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
    'cpu jaxhlo-predict-all-loop fused': (71, 75),
    'cpu jaxhlo-predict-all-loop stored': (69, 69),
    'cpu jaxhlo-predict-all-none fused': (66, 71),
    'cpu jaxhlo-predict-cpu-arg fused': (30, 30),
    'cpu jaxhlo-predict-cpu-dot stored': (100, 100),
    'cpu jaxhlo-predict-cpu-other fused': (2, 4),
    'cpu jaxhlo-predict-cpu-other stored': (225, 225),
    'cpu jaxhlo-predict-cpu-ynn fused': (431, 453),
    'cpu jaxhlo-predict-cpu-ynn stored': (628, 630),
    'gpu:h100 jaxhlo-predict-all-loop fused': (69, 73),
    'gpu:h100 jaxhlo-predict-all-loop stored': (69, 69),
    'gpu:h100 jaxhlo-predict-all-none fused': (65, 69),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (488, 509),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (47, 47),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (515, 515),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (36, 37),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (14, 14),
    'gpu:h100 jaxhlo-predict-h100-topk fused': (1, 1),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (69, 69),
    'tpu:v5e jaxhlo-predict-all-loop fused': (63, 66),
    'tpu:v5e jaxhlo-predict-all-loop stored': (56, 56),
    'tpu:v5e jaxhlo-predict-all-none fused': (96, 99),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (21, 21),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (939, 949),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (30, 30),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (217, 219),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (186, 188),
}

WHERE: dict[str, tuple[int, int]] = {
    'HBM': (191, 195),
    'on-chip': (202, 212),
}

FIRST: dict[str, tuple[int, int]] = {
    'cpu jaxhlo-predict-all-loop fused': (35, 41),
    'cpu jaxhlo-predict-all-loop stored': (38, 39),
    'cpu jaxhlo-predict-all-none fused': (35, 48),
    'cpu jaxhlo-predict-cpu-arg fused': (1, 2),
    'cpu jaxhlo-predict-cpu-dot stored': (43, 46),
    'cpu jaxhlo-predict-cpu-other fused': (1, 4),
    'cpu jaxhlo-predict-cpu-other stored': (100, 100),
    'cpu jaxhlo-predict-cpu-ynn fused': (166, 193),
    'cpu jaxhlo-predict-cpu-ynn stored': (446, 455),
    'gpu:h100 jaxhlo-predict-all-loop fused': (37, 43),
    'gpu:h100 jaxhlo-predict-all-loop stored': (39, 39),
    'gpu:h100 jaxhlo-predict-all-none fused': (45, 60),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (205, 225),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (12, 12),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (312, 312),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (11, 12),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (3, 3),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (51, 53),
    'tpu:v5e jaxhlo-predict-all-loop fused': (31, 37),
    'tpu:v5e jaxhlo-predict-all-loop stored': (34, 35),
    'tpu:v5e jaxhlo-predict-all-none fused': (67, 88),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (9, 9),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (386, 423),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (9, 9),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (127, 132),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (153, 159),
}

WHERE_FIRST: dict[str, tuple[int, int]] = {
    'HBM': (125, 138),
    'on-chip': (81, 104),
}
