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
    'cpu jaxhlo-predict-all-loop fused': (55, 55),
    'cpu jaxhlo-predict-all-loop stored': (43, 43),
    'cpu jaxhlo-predict-all-none fused': (64, 70),
    'cpu jaxhlo-predict-cpu-arg fused': (29, 29),
    'cpu jaxhlo-predict-cpu-dot stored': (78, 79),
    'cpu jaxhlo-predict-cpu-other fused': (1, 1),
    'cpu jaxhlo-predict-cpu-other stored': (139, 139),
    'cpu jaxhlo-predict-cpu-ynn fused': (387, 399),
    'cpu jaxhlo-predict-cpu-ynn stored': (439, 443),
    'gpu:h100 jaxhlo-predict-all-loop fused': (51, 52),
    'gpu:h100 jaxhlo-predict-all-loop stored': (43, 43),
    'gpu:h100 jaxhlo-predict-all-none fused': (61, 65),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (403, 419),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (35, 35),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (378, 378),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (30, 31),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (3, 3),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (25, 26),
    'tpu:v5e jaxhlo-predict-all-loop fused': (46, 48),
    'tpu:v5e jaxhlo-predict-all-loop stored': (30, 30),
    'tpu:v5e jaxhlo-predict-all-none fused': (90, 94),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (13, 13),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (827, 836),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (27, 27),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (101, 102),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (73, 73),
}

WHERE: dict[str, tuple[int, int]] = {
    'HBM': (40, 40),
    'on-chip': (130, 137),
}
