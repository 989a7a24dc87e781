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
    'wild16': 150,
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
    'cpu jaxhlo-predict-all-loop fused': (66, 69),
    'cpu jaxhlo-predict-all-loop stored': (60, 60),
    'cpu jaxhlo-predict-all-none fused': (66, 72),
    'cpu jaxhlo-predict-cpu-arg fused': (30, 30),
    'cpu jaxhlo-predict-cpu-dot stored': (97, 97),
    'cpu jaxhlo-predict-cpu-other fused': (1, 3),
    'cpu jaxhlo-predict-cpu-other stored': (204, 204),
    'cpu jaxhlo-predict-cpu-ynn fused': (425, 445),
    'cpu jaxhlo-predict-cpu-ynn stored': (575, 577),
    'gpu:h100 jaxhlo-predict-all-loop fused': (64, 67),
    'gpu:h100 jaxhlo-predict-all-loop stored': (60, 60),
    'gpu:h100 jaxhlo-predict-all-none fused': (65, 70),
    'gpu:h100 jaxhlo-predict-h100-cost fused': (471, 491),
    'gpu:h100 jaxhlo-predict-h100-cost stored': (46, 46),
    'gpu:h100 jaxhlo-predict-h100-gemm stored': (483, 483),
    'gpu:h100 jaxhlo-predict-h100-matvec stored': (34, 35),
    'gpu:h100 jaxhlo-predict-h100-softmax stored': (13, 13),
    'gpu:h100 jaxhlo-predict-h100-topk stored': (56, 57),
    'tpu:v5e jaxhlo-predict-all-loop fused': (57, 60),
    'tpu:v5e jaxhlo-predict-all-loop stored': (49, 49),
    'tpu:v5e jaxhlo-predict-all-none fused': (96, 100),
    'tpu:v5e jaxhlo-predict-tpu-complex stored': (20, 20),
    'tpu:v5e jaxhlo-predict-tpu-fused fused': (914, 924),
    'tpu:v5e jaxhlo-predict-tpu-matvec stored': (30, 30),
    'tpu:v5e jaxhlo-predict-tpu-readers stored': (200, 202),
    'tpu:v5e jaxhlo-predict-tpu-topk stored': (145, 145),
}

WHERE: dict[str, tuple[int, int]] = {
    'HBM': (165, 175),
    'on-chip': (249, 266),
}
