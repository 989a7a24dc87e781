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
    'wild9': 129,
}

KEYS: dict[str, tuple[int, int]] = {
    'cpu jaxhlo-predict-all-loop fused': (53, 53),
    'cpu jaxhlo-predict-all-loop stored': (43, 43),
    'cpu jaxhlo-predict-all-none fused': (63, 69),
    'cpu jaxhlo-predict-cpu-arg fused': (29, 29),
    'cpu jaxhlo-predict-cpu-dot stored': (75, 75),
    'cpu jaxhlo-predict-cpu-other fused': (1, 1),
    'cpu jaxhlo-predict-cpu-other stored': (135, 135),
    'cpu jaxhlo-predict-cpu-ynn fused': (381, 391),
    'cpu jaxhlo-predict-cpu-ynn stored': (421, 424),
    'gpu:h100 jaxhlo-predict-all-loop fused': (49, 50),
    'gpu:h100 jaxhlo-predict-all-loop stored': (43, 43),
    'gpu:h100 jaxhlo-predict-all-none fused': (61, 65),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (394, 409),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (34, 34),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (361, 361),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (30, 31),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (2, 2),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (24, 25),
    'tpu:v5e jaxhlo-predict-all-loop fused': (44, 46),
    'tpu:v5e jaxhlo-predict-all-loop stored': (30, 30),
    'tpu:v5e jaxhlo-predict-all-none fused': (88, 92),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (12, 12),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (808, 816),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (27, 27),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (94, 95),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (70, 70),
}

WHERE: dict[str, tuple[int, int]] = {
    'HBM': (34, 34),
    'on-chip': (128, 134),
}
