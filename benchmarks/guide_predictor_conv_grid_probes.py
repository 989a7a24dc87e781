"""Probe programs for a TPU v5e convolution's input: from how many features and positions is it read in place?

``guide_predictor_conv_probes.py`` read a channels-last convolution's argument in place from 64 input
features at a batch of 8 or more, but at 64 x 64 positions an image or fewer.  A 3 x 3 convolution of 64
features over 128 x 128 positions, compiled while the TPU's ``where`` rules were tested, wrote a ``bf16``
copy of its input (as large as the table when the features in and out are as many).  This grid varies the
two: 64, 96, 128 and 256 features in and out, by 32 x 32 to 256 x 256 positions, a batch of 8, the output
summed per image (and one batch of 16 with a ``tanh`` squared).  128 features or more were read in place at
every size; 64 features were copied from 80 x 80 positions; 96 went both ways (copied at 112, 128 and 256,
in place at 192): :func:`sphinx_jaxhlo.predict.conv.decide_tpu_conv` says so.  The copy is a conversion to
``bf16``: ``bf16`` and ``f16`` images of 8 to 96 features, a batch of 8 or more, wrote no computed table at
any size (11 compiles; a batch of 4 is relaid out, the batch rule's): where an ``f32`` image is converted,
these are copied as they are, an argument's copy (the report's argument copies), no table of the
program's.  The truth is the family benchmark's (:func:`guide_predictor_family.compile_truth`), written to
``benchmarks/data/guide_predictor_conv_grid_probes_truth.jsonl``; TPU v5e only.

On a real TPU v5e (``benchmarks/tpu_conv_copy_chip.py``, its record committed), seven of these ran as
compiled here: the copies of 64 features over 128 x 128 positions (16.8 and 33.6 MB, on-chip) and 256 x 256
(67.1 MB, in HBM: the chip held 134 MB of temp beyond arguments, output and code), the 96 features' copy
(25.2 MB, on-chip), the bf16 image's argument copy (16.8 MB, on-chip), and no copy at 64 x 64 positions or
128 features.

Run::

    python benchmarks/guide_predictor_conv_grid_probes.py --compile     # what is not compiled yet
    python benchmarks/guide_predictor_conv_grid_probes.py               # the truth beside the rules' answer
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program  # noqa: E402
from guide_predictor_probing import probe_main, probe_maker  # noqa: E402

TRUTH = ROOT / "benchmarks" / "data" / "guide_predictor_conv_grid_probes_truth.jsonl"
TARGETS = ["tpu:v5e"]
FEATURES = (64, 96, 128, 256)
POSITIONS = (32, 64, 80, 96, 112, 128, 192, 256)
#: The largest input compiled (bytes): 8 x 256 x 256 x 256 f32 is 512 MiB.
LARGEST = 600 << 20

#: Half-precision images: (element type, batch, positions a side, features).
HALF = [("bf16", 8, 256, 64), ("bf16", 8, 96, 64), ("bf16", 8, 128, 64), ("f16", 8, 128, 64), ("bf16", 8, 128, 96),
        ("bf16", 8, 128, 32), ("bf16", 8, 128, 16), ("bf16", 8, 64, 16), ("bf16", 16, 64, 32), ("f16", 8, 192, 48),
        ("bf16", 8, 256, 8), ("bf16", 4, 128, 64)]

probe = probe_maker("conv-grid-probes")


def _conv(reduce: str) -> str:
    return ("def f(x, w):\n"
            "    y = lax.conv_general_dilated(x, w, (1, 1), 'SAME', dimension_numbers=('NHWC', 'HWIO', 'NHWC'))\n"
            f"    return {reduce}\n")


def programs() -> list[Program]:
    out = []
    for c in FEATURES:
        for sp in POSITIONS:
            if 8 * sp * sp * c * 4 > LARGEST:
                continue
            out.append(probe(f"c{c}-{sp}x{sp}", _conv("jnp.sum(y, axis=(1, 2, 3))"),
                             f"f32[8,{sp},{sp},{c}], f32[3,3,{c},{c}]", f"features={c}"))
    out.append(probe("c64-128x128-b16-tanh2", _conv("jnp.sum(jnp.tanh(y) ** 2, axis=(1, 2, 3))"),
                     "f32[16,128,128,64], f32[3,3,64,64]", "features=64"))
    # half-precision images: no bf16 copy to make (a batch of 4 is the batch rule's)
    for dt, n, sp, c in HALF:
        out.append(probe(f"{dt}-c{c}-{sp}x{sp}-b{n}", _conv("jnp.sum(y, axis=(1, 2, 3))"),
                         f"{dt}[{n},{sp},{sp},{c}], {dt}[3,3,{c},{c}]", f"features={c}", f"dtype={dt}"))
    return out


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, programs, TARGETS, TRUTH)


if __name__ == "__main__":
    raise SystemExit(main())
