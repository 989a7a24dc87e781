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
    'cpu jaxhlo-predict-cpu-dot stored': (84, 84),
    'cpu jaxhlo-predict-cpu-other fused': (1, 1),
    'cpu jaxhlo-predict-cpu-other stored': (171, 171),
    'cpu jaxhlo-predict-cpu-ynn fused': (405, 420),
    'cpu jaxhlo-predict-cpu-ynn stored': (489, 490),
    'gpu:h100 jaxhlo-predict-all-loop fused': (56, 57),
    'gpu:h100 jaxhlo-predict-all-loop stored': (45, 45),
    'gpu:h100 jaxhlo-predict-all-none fused': (62, 66),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (431, 447),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (36, 36),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (415, 415),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (30, 31),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (13, 13),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (37, 38),
    'tpu:v5e jaxhlo-predict-all-loop fused': (51, 53),
    'tpu:v5e jaxhlo-predict-all-loop stored': (31, 31),
    'tpu:v5e jaxhlo-predict-all-none fused': (92, 96),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (17, 17),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (866, 872),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (27, 27),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (137, 138),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (97, 97),
}

WHERE: dict[str, tuple[int, int]] = {
    'HBM': (63, 63),
    'on-chip': (149, 157),
}
