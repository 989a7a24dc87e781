"""The sharded programs of ``tests/roots/test-sharding/programs.py``: arguments, mesh, and what was checked by hand.

Each case: the function, its argument specs as the directive writes them,
the mesh, and the collectives expected in the optimized HLO on each target,
by kind, with the mesh axes each runs over (read from the stored modules by
hand; ``regenerate_sharded.py`` stores them).  No jax here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TARGETS = ("gpu:h100x8", "tpu:v5e-8")


@dataclass(frozen=True)
class Case:
    function: str
    args: str
    mesh: str
    #: target -> sorted list of (kind, axes) of its collectives
    expected: dict[str, list[tuple[str, tuple[str, ...]]]] = field(default_factory=dict)


def both(*collectives: tuple[str, tuple[str, ...]]) -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    return {t: sorted(collectives) for t in TARGETS}


#: The meshes of the cases: Auto axes, as regenerate_sharded.py compiles them.
M42, M8 = "data=4 auto, model=2 auto", "data=8 auto"

CASES = (
    # the contraction dimension split: partial products summed over the devices
    Case("contract", "f32[4096,4096] @ P(None, data), f32[4096,4096] @ P(data, None)", M42,
         both(("all-reduce", ("data",)))),
    # the rows of the output split: each device computes its own rows
    Case("rows", "f32[4096,4096] @ P(data, None), f32[4096,4096]", M42, both()),
    # partial products, but the result wanted split by rows: reduce and scatter at once
    # (the TPU compiler sums in an all-reduce fused with the slicing, "all-reduce-scatter", and
    # moves the rows its padding displaced with a collective-permute)
    Case("contract_scattered", "f32[4096,4096] @ P(None, data), f32[4096,4096] @ P(data, None)",
         M42, {"gpu:h100x8": [("reduce-scatter", ("data",))],
                             "tpu:v5e-8": [("all-reduce", ("data",)), ("collective-permute", ("data",))]}),
    # weights stored split (FSDP), gathered for the matmul
    Case("fsdp", "f32[2048,4096] @ P(data, None), f32[4096,4096] @ P(data, None)", M42,
         both(("all-gather", ("data",)))),
    # two layers: the second gather can run while the first layer computes
    Case("fsdp_two", "f32[1024,4096] @ P(data, None), f32[4096,4096] @ P(data, None), "
         "f32[4096,4096] @ P(data, None)", M42,
         both(("all-gather", ("data",)), ("all-gather", ("data",)))),
    Case("fsdp_layers", "f32[2048,2048] @ P(data, None), f32[4,2048,2048] @ P(None, data, None)",
         M42, both(("all-gather", ("data",)))),
    # split by rows, wanted split by columns
    Case("reshard", "f32[4096,4096] @ P(data, None)", M42, both(("all-to-all", ("data",)))),
    Case("roll", "f32[4096,1024] @ P(data, None)", M42, both(("collective-permute", ("data",)))),
    Case("ring", "f32[4096,1024] @ P(data, None)", M42, both(("collective-permute", ("data",)))),
    Case("psum_by_hand", "f32[4096,1024] @ P(data, None)", M42, both(("all-reduce", ("data",)))),
    Case("sum_sharded_axis", "f32[4096,1024] @ P(data, None)", M42, both(("all-reduce", ("data",)))),
    Case("sum_other_axis", "f32[4096,1024] @ P(data, None)", M42, both()),
    # the contraction split over the second axis only
    Case("over_model", "f32[4096,4096] @ P(data, model), f32[4096,4096] @ P(model, None)", M42,
         both(("all-reduce", ("model",)))),
    Case("seed_rows", "f32[16384,3] @ P(data, None), f32[8192,3]", M8, both(("all-reduce", ("data",)))),
)

BY_FUNCTION = {c.function: c for c in CASES}
