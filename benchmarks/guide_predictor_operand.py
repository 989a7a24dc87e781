"""The TPU rule for a computed operand of a batched contraction measured on the family programs it was not
written from.

Loads every measured family (``guide_predictor_calibrate.measured_families``), keeps the programs where a
contraction (outside a loop) reads a computed table-sized operand and contracts it to a smaller output (the
dot is itself a reduction of the table: :func:`contracted_table`), and compares the rules' own answer
(``predicted(..., calibrated=False)``) with the compiled truth per target.  ``--all FILE`` writes every
program's answer (all targets); ``--diff FILE`` compares the other programs with such a file.  Nothing
compiles.

First measurement (2026-12-07, the rule as written from the first 46 probes, before any change): 148
programs with such a table; of all 4,569 (program, target) answers, 4 changed, all TPU, none outside these
programs: wild14's ``mask2former_dice_sigmoid_ce_matching_cost`` (a certain miss, now stored, on-chip, right)
and wild13's ``kabsch_rmsd_batched_svd_tiny`` (a certain miss: a centred ``[250, 377, 3]`` table contracted
to ``3 x 3``, 3 rows; now stored, on-chip, right), wild14's ``based_taylor_feature_linear_attention`` (from
"compile it" to stored, HBM, right; 273 rows), and wild14's ``grad_accumulation_scan_remat_global_norm``
(the loop rule: a certain "fused", wrong, to "compile it").  TPU over the 148: 112 to 113 answered, 107 to
110 right; CPU and H100 unchanged.  Then, from 8 more probes (not from the families): the rule reads any
table-sized value of the program (not only a region's: a centred table beside a mean of its argument was
missed) and the product of the free dimensions (two free dimensions of 10); on the families nothing changed.
Then, tuned on the families (reported apart): the loop rule's abstention made an answer, a table-sized ``f32``
operand that a loop's body contracts is written as a ``bf16`` copy (probes 4 of 4, ``bf16`` data fused; the
families' 4 such programs, 3 of them abstentions, were all stored on-chip): 4 answers changed, all TPU, all
from "compile it" to stored, on-chip, right (wild's ``scan_layers_layernorm``, wild2's ``gru_scan_loss``,
wild14's ``mps_norm_transfer_scan_tiny`` and ``grad_accumulation_scan_remat_global_norm``; none of them is
among the 148 above, loops being outside the class).

Run::

    python benchmarks/guide_predictor_operand.py [--all answers.json] [--diff before.json]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program, _split_specs  # noqa: E402
from guide_predictor_probing import measure_subset  # noqa: E402


def contracted_table(prog: Program) -> bool:
    """A live contraction outside a loop reads a computed operand (not an argument only moved) of at least
    0.9 times the largest reduction's table and writes a smaller output."""
    import jax

    from sphinx_jaxhlo.predict.front import load_function, structs_of
    from sphinx_jaxhlo.predict.graph import Graph, _is_gemm, _moved_argument, reductions_of

    try:
        fn = load_function(prog.source)
        closed = jax.make_jaxpr(fn)(*structs_of(", ".join(_split_specs(prog.specs))))
        graph = Graph(closed)
        every = reductions_of(graph, live=False)
    except Exception:
        return False
    table = max((r.scaled for r in every), default=0)
    for op in graph.live_ops():
        if op.prim != "dot_general" or op.loop is not None or not _is_gemm(op):
            continue
        for v in op.ins:
            if (v.size >= 0.9 * table > 0 and v.producer is not None and not _moved_argument(v)
                    and op.outs[0].size < v.size):
                return True
    return False


def main(argv: list[str] | None = None) -> int:
    return measure_subset(argv, contracted_table, "a contracted computed table")


if __name__ == "__main__":
    raise SystemExit(main())
