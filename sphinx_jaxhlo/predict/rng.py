"""Random draws of the table's size (``jax.random``): what each target does with the bits.

Measured on ``benchmarks/guide_predictor_rng_probes.py`` (60 probes a target: uniform, normal, bernoulli
dropout masks, categorical, gumbel and randint draws, tiny to 256 MiB, ``f32`` and ``bf16``, sums, means,
maxima, argmaxes and log-sum-exps, keys from ``PRNGKey``, ``wrap_key_data``, ``fold_in``, ``split`` and
``jax.random.key``, ``rbg`` keys, ``jax_threefry_partitionable`` off, ``jax.grad`` and ``vmap``) and read
from jax's lowering of the threefry hash (``jax/_src/random/threefry2x32.py``):

* CPU: jax lowers ``threefry2x32`` for the CPU with ``use_rolled_loops=True``, a ``fori_loop`` over the
  hash's five rounds: an HLO while loop whose state is the bits (two ``u32`` tables of the draw's size,
  or halves of them with ``jax_threefry_partitionable`` off).  A loop is no fusion, so the bits are
  written whatever reads the draw, an ``argmax`` too (``jax.random.categorical``, where the CPU's
  ``argmax`` rule answered fused: wild17's LDA Gibbs sweep).  An ``rbg`` key's ``rng_bit_generator`` is
  expanded into elementwise HLO (``RngBitGeneratorExpander``), which the CPU's other rules answer.
* H100 and TPU: jax lowers the hash unrolled (``use_rolled_loops=False``): a hundred-odd integer ops an
  element that fuse as elementwise work does.  Read in two passes (a log-sum-exp, a variance, a layer
  norm) it is a costly producer kept between them: the TPU stores it where the reductions read ``f32``
  (a ``bf16`` log-sum-exp fused), the H100 in every probe.  On the H100 a small draw read once was
  written in every probe (XLA's cost model puts the hash in a loop fusion's thread an element rather
  than in the reduction kernel's few threads): left to the compile.
* ``jax_threefry_partitionable`` off (the equation's context records it): jax hashes the flattened
  counter's two halves and concatenates them (``_threefry_random_bits_original``); the TPU writes the
  bits, the H100 in some probes only.  An ``rbg`` key (``lax.rng_bit_generator``): the TPU writes its
  output, and the H100 the outputs of its Philox expansion, a loop fusion of their own.

A draw inside a loop's body is left to the loop rule; a draw smaller than the table (a row of noise
broadcast) is elementwise data of no table of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .graph import TABLE_SHARE, Decision, Graph, Op, Region, build_region, group_regions, reductions_of
from .limits import abstain

#: The probes' measured counts, quoted by each answer (``benchmarks/guide_predictor_rng_probes.py``).
CPU_THREEFRY = "50 probes of 50"
TPU_OWN_KERNEL = {"rbg": "6 probes of 6", "fry": "7 probes of 7"}
TPU_TWO_PASS_F32 = "6 probes of 6"
H100_RBG = "6 probes of 6"
H100_TWO_PASS = "7 probes of 7"
#: H100: threefry draws read once in fewer elements than this were written (4 probes of 4, up to 1,024,000
#: elements); those of this many or more read once by a row reduction fused (the smallest measured).
H100_SMALL = 4_096_000

_DRAWS = ("random_bits", "rng_bit_generator")


def _impl(op: Op) -> str:
    """The key's implementation: ``fry`` (threefry, jax's default), ``rbg``, ``urbg`` (``unsafe_rbg``); an
    ``rng_bit_generator`` called directly is ``rbg``."""
    if op.prim == "rng_bit_generator":
        return "rbg"
    dtype = op.ins[0].dtype if op.ins else ""
    return dtype[4:-1] if dtype.startswith("key<") and dtype.endswith(">") else dtype


def _draws(graph: Graph, table: int) -> list[Op]:
    """The live draws of the table's size outside any loop."""
    floor = TABLE_SHARE * table
    return [op for op in graph.live_ops() if op.prim in _DRAWS and op.loop is None
            and max((v.size for v in op.outs), default=0) >= floor]


def _eqns(jaxpr: Any) -> Iterable[Any]:
    """Every equation of ``jaxpr`` and of the jaxprs its equations call (bodies, branches)."""
    for eqn in getattr(jaxpr, "eqns", ()):
        yield eqn
        for param in eqn.params.values():
            for sub in param if isinstance(param, (tuple, list)) else (param,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    yield from _eqns(inner)


def partitionable(jaxpr: Any, floor: float) -> bool:
    """Every threefry draw of at least ``floor`` elements was traced with ``jax_threefry_partitionable``
    on (the equation's context records the flag; jax's default)."""
    for eqn in _eqns(jaxpr):
        if eqn.primitive.name != "random_bits" or not eqn.outvars:
            continue
        size = 1
        for d in getattr(eqn.outvars[0].aval, "shape", ()):
            size *= int(d)
        ctx = getattr(eqn, "ctx", None)
        if size >= floor and getattr(ctx, "threefry_partitionable", True) is False:
            return False
    return True


def _regions(graph: Graph, table: int) -> list[Region]:
    """The table-sized regions, as :func:`sphinx_jaxhlo.predict.front.decide_all` groups them."""
    reds = [r for r in reductions_of(graph) if r.scaled >= TABLE_SHARE * table]
    return group_regions([build_region(r, max(1, int(TABLE_SHARE * r.operand.size))) for r in reds])


def _bits(op: Op) -> Any:
    return max(op.outs, key=lambda v: v.size)


def decide(jaxpr: Any, graph: Graph, target: str, table: int) -> list[Decision]:
    """The decisions for the program's table-sized draws on ``target`` (none where it draws none, or
    where the other rules answer it)."""
    draws = _draws(graph, table)
    if not draws:
        return []
    impls = {_impl(op) for op in draws}
    fry = [op for op in draws if _impl(op) == "fry"]
    rbg = [op for op in draws if _impl(op) in ("rbg", "urbg")]
    if impls - {"fry", "rbg", "urbg"}:
        return [abstain(f"a random draw of a key of {', '.join(sorted(impls))}: no rule measured its bits")]
    if target == "cpu":
        if not fry:
            return []  # an rbg key's bits are elementwise HLO: the CPU's other rules answer them
        d = Decision(True, "jaxhlo-predict-cpu-other", "a threefry draw of the table's size (jax.random's "
                     "default key): jax lowers the hash for the CPU as a loop of its five rounds "
                     "(use_rolled_loops, jax/_src/random/threefry2x32.py), a while loop whose state, the "
                     f"draw's u32 bits, is written whatever reads it ({CPU_THREEFRY} measured, argmaxes too)")
        d.value = _bits(fry[0])
        return [d]
    out: list[Decision] = []
    split = bool(fry) and not partitionable(jaxpr, TABLE_SHARE * table)
    if target == "tpu:v5e" and (rbg or split):
        what, count = (("an rbg key's rng_bit_generator", TPU_OWN_KERNEL["rbg"]) if rbg else
                       ("a threefry draw with jax_threefry_partitionable off (the flattened counter's two "
                        "halves hashed and concatenated)", TPU_OWN_KERNEL["fry"]))
        d = Decision(True, "jaxhlo-predict-tpu-topk", f"{what} of the table's size: the TPU writes the "
                     f"bits ({count} measured)")
        d.value = _bits((rbg or fry)[0])
        out.append(d)
    elif target == "gpu:h100" and rbg:
        d = Decision(True, "jaxhlo-predict-h100-topk", "an rbg key's rng_bit_generator of the table's size: "
                     "XLA expands it into Philox (RngBitGeneratorExpander), whose outputs a loop fusion of "
                     f"their own writes for the reduction ({H100_RBG} measured)")
        d.value = _bits(rbg[0])
        out.append(d)
    elif target == "gpu:h100" and split:
        out.append(abstain("a threefry draw with jax_threefry_partitionable off (the flattened counter's "
                           "two halves hashed and concatenated): the H100 wrote the bits in 5 of the 7 "
                           "probes; compile it"))
    if rbg or split:
        return out
    ids = {id(op) for op in fry}
    for g in _regions(graph, table):
        if not any(id(op) in ids for op in g.ops):
            continue
        if g.two_pass and target == "tpu:v5e":
            if all(r.operand.dtype == "float32" for r in g.reductions):
                out.append(Decision(True, "jaxhlo-predict-tpu-readers", "two passes over a table computed "
                                    "from a threefry draw (a statistic, then a reduction that needs it): the "
                                    f"hash is a costly producer, kept between them ({TPU_TWO_PASS_F32} "
                                    "measured, f32)"))
            else:
                out.append(abstain("two passes over a bf16 table computed from a threefry draw: the TPU "
                                   "stored the f32 ones measured and fused a bf16 log-sum-exp; compile it"))
        elif g.two_pass and target == "gpu:h100":
            out.append(Decision(True, "jaxhlo-predict-h100-cost", "two passes over a table computed from a "
                                "threefry draw (a statistic, then a reduction that needs it): the hash, a "
                                "hundred-odd integer ops an element, once per reader costs more than writing "
                                f"it ({H100_TWO_PASS} measured)"))
        elif target == "gpu:h100" and max(r.operand.size for r in g.reductions) < H100_SMALL:
            out.append(abstain(f"a threefry draw of fewer than {H100_SMALL:,} elements read once: XLA's cost "
                               "model put the hash in a loop fusion of its own in the 4 probes measured (the "
                               "reduction kernel's few threads against the loop's one an element); compile "
                               "it"))
    return out
