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
    'cpu jaxhlo-predict-all-loop fused': (56, 56),
    'cpu jaxhlo-predict-all-loop stored': (44, 44),
    'cpu jaxhlo-predict-all-none fused': (64, 70),
    'cpu jaxhlo-predict-cpu-arg fused': (29, 29),
    'cpu jaxhlo-predict-cpu-dot stored': (81, 81),
    'cpu jaxhlo-predict-cpu-other fused': (1, 1),
    'cpu jaxhlo-predict-cpu-other stored': (146, 146),
    'cpu jaxhlo-predict-cpu-ynn fused': (395, 409),
    'cpu jaxhlo-predict-cpu-ynn stored': (462, 463),
    'gpu:h100 jaxhlo-predict-all-loop fused': (52, 53),
    'gpu:h100 jaxhlo-predict-all-loop stored': (45, 45),
    'gpu:h100 jaxhlo-predict-all-none fused': (62, 66),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (412, 428),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (36, 36),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (401, 401),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (30, 31),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (3, 3),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (27, 28),
    'tpu:v5e jaxhlo-predict-all-loop fused': (47, 49),
    'tpu:v5e jaxhlo-predict-all-loop stored': (31, 31),
    'tpu:v5e jaxhlo-predict-all-none fused': (92, 96),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (15, 15),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (841, 847),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (27, 27),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (116, 117),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (84, 84),
}

WHERE: dict[str, tuple[int, int]] = {
    'HBM': (48, 48),
    'on-chip': (143, 150),
}
