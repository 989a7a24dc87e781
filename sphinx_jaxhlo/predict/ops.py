"""The ops no other rule knew, where the compiles agree: what each does to the table it computes.

Measured on the probes of ``benchmarks/guide_predictor_ops_probes.py`` (56 programs, each target) and
read from XLA's sources:

* ``bitcast_convert_type`` (same or different widths) and ``bessel_i0e``/``bessel_i1e`` are elementwise
  for fusion (:data:`~sphinx_jaxhlo.predict.graph.ELEMENTWISE`): ``IsElementwiseImpl``
  (``xla/hlo/ir/hlo_instruction.cc``) lists bitcast-convert, and jax lowers the Bessel functions to
  Chebyshev polynomials of elementwise HLO.  Fused on the H100 and the TPU in 15 of 15 probes; on the CPU
  not in YNN's op table, so stored (rule 4), 15 of 15.
* ``stack`` is a concatenate of its operands (jax's lowering); a reduction over its axis is a reduction
  of each operand (:mod:`~sphinx_jaxhlo.predict.simplifier`).
* The ops in :data:`KERNELS` are a kernel of their own on that target, whose output (the table) is
  written: the table is stored.  Elsewhere the predictor still abstains (a reduce-window on the H100
  fused as a producer in 9 probes and was written in 2; a triangular solve on the TPU was written in 3
  of 4; a Cholesky factor on the TPU was measured once).
"""

from __future__ import annotations

from .graph import Decision, Op, Region
from .limits import abstain

#: Incomplete gamma and beta functions: jax lowers each to a while loop (a series or a continued
#: fraction), whose state is written every step.
_LOOPED = "jax lowers it to a while loop (a series or continued fraction) whose state is written each step"
_REDUCE_WINDOWS = ("reduce_window_sum", "reduce_window_max", "reduce_window_min", "reduce_window")

#: Per target, the ops that are a kernel of their own, and why.
KERNELS: dict[str, dict[str, str]] = {
    "cpu": {
        "triangular_solve": "a LAPACK trsm custom call (jax's CPU lowering: lapack_strsm_ffi)",
        "cholesky": "a LAPACK potrf custom call (jax's CPU lowering: lapack_spotrf_ffi)",
        **{rw: "a reduce-window of overlapping windows, which YNN does not take: XLA's own loop writes it "
               "(measured 10 of 10; one of windows that do not overlap, 2x2 strided by 2, fused)"
           for rw in _REDUCE_WINDOWS},
        "igamma": _LOOPED, "igammac": _LOOPED, "regularized_incomplete_beta": _LOOPED,
    },
    "gpu:h100": {
        "triangular_solve": "a cuBLAS trsm custom call (__cublas$triangularSolve: "
                            "xla/service/gpu/transforms/triangular_solve_rewriter.cc)",
        "cholesky": "a cuSOLVER potrf custom call (jax's GPU lowering)",
        "igamma": _LOOPED, "igammac": _LOOPED, "regularized_incomplete_beta": _LOOPED,
    },
    "tpu:v5e": {
        **{rw: "a reduce-window, as the TPU's cumulative ops are: written before the reduction reads it "
               "(measured 11 of 11, sums, maxima and minima, strided or not, 1 to 256 MB)" for rw in _REDUCE_WINDOWS},
        "igamma": _LOOPED, "igammac": _LOOPED, "regularized_incomplete_beta": _LOOPED,
    },
}

#: The rule each target's kernels answer under: the CPU's kernels outside YNN, the H100's and TPU's
#: kernels that read or write a stored table.
ANCHOR = {"cpu": "jaxhlo-predict-cpu-other", "gpu:h100": "jaxhlo-predict-h100-topk",
          "tpu:v5e": "jaxhlo-predict-tpu-topk"}


def _overlapping(op: Op) -> bool:
    """A reduce-window whose windows overlap: a stride shorter than its window along some axis."""
    dims = op.params.get("window_dimensions", ())
    strides = op.params.get("window_strides", ())
    return any(s < w for w, s in zip(dims, strides, strict=False))


def decide_unknown(g: Region, unknown: str, target: str) -> Decision:
    """The answer where ops no other rule knows compute the table of ``g`` (``unknown``: their names,
    comma separated): stored where each is a kernel of its own on ``target``, else an abstention."""
    names = unknown.split(", ")
    kernels = KERNELS.get(target, {})
    windows = [op for op in g.ops if op.prim in _REDUCE_WINDOWS]
    if target == "cpu" and not all(_overlapping(op) for op in windows):
        kernels = {n: why for n, why in kernels.items() if n not in _REDUCE_WINDOWS}
    if names and all(n in kernels for n in names):
        whys = "; ".join(f"{n}: {kernels[n]}" for n in names)
        return Decision(True, ANCHOR[target], f"{whys}: a kernel of its own writes the table")
    return abstain(f"{unknown} computes the table: no rule covers it")


def stack_of_an_arg_reduction(g: Region) -> str:
    """A ``jnp.stack`` of computed tables that an ``argmin``/``argmax`` reads over the stacked axis: the
    simplifier splits a sum, a max or a min over that axis into one reduction per operand, never an
    arg reduction, so the stacked table stays.  Measured once (wild12's census transform: 64 cost
    tables, an ``argmin`` beside a ``min``): written on every target, while the rules answered fused;
    left to the compile."""
    stacked = any(op.prim == "concatenate" and op.params.get("stacked") for op in g.ops)
    if stacked and any(r.kind == "arg" for r in g.reductions):
        return "an argmin or argmax reads a jnp.stack of computed tables over its stacked axis"
    return ""
