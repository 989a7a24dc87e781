"""The TPU rule for a computed operand of a batched contraction measured on the family programs it was not
written from.

Loads every measured family (``guide_predictor_calibrate.measured_families``), keeps the programs where a
contraction (outside a loop) reads a computed table-sized operand and contracts it to a smaller output (the
dot is itself a reduction of the table: :func:`contracted_table`), and compares the rules' own answer
(``predicted(..., calibrated=False)``) with the compiled truth per target.  ``--all FILE`` writes every
program's answer (all targets); ``--diff FILE`` compares the other programs with such a file.  Nothing
compiles.

First measurement: see the branch's report (``operand``); the figures are in the commit that adds the rule.

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
