"""The rules for the ops no rule knew (``sphinx_jaxhlo/predict/ops.py``) measured on the family programs
they were not written from.

Loads every measured family (``guide_predictor_calibrate.measured_families``, wild12 included), keeps the
programs whose jaxpr has one of :data:`OPS`, and compares the rules' own answer (``predicted(...,
calibrated=False)``) with the compiled truth per target (answered, right, every miss).  ``--all FILE``
writes every program's answer (all targets) to ``FILE`` so that two runs can be compared: no program
without one should change its answer.  Nothing compiles.

Run::

    python benchmarks/guide_predictor_ops.py [--all answers.json] [--diff before.json]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program  # noqa: E402
from guide_predictor_probing import measure_subset  # noqa: E402

#: The ops the rules of ``ops.py`` answer for (as the jaxpr names them).
OPS = ("bitcast_convert_type", "bessel_i0e", "bessel_i1e", "stack", "reduce_window", "triangular_solve",
       "cholesky", "igamma", "regularized_incomplete_beta")


def has_ops(prog: Program) -> bool:
    """The program's jaxpr (sub-jaxprs included) has one of :data:`OPS`."""
    import jax
    from guide_predictor import load_function, structs_of

    text = str(jax.make_jaxpr(load_function(prog.source, "f"))(*structs_of(prog.specs)))
    return any(f" {op}[" in text or f" {op} " in text for op in OPS)


def main(argv: list[str] | None = None) -> int:
    return measure_subset(argv, has_ops, "these ops")


if __name__ == "__main__":
    raise SystemExit(main())
