"""The rules for the ops no rule knew (``sphinx_jaxhlo/predict/ops.py``) measured on the family programs
they were not written from.

Loads every measured family (``guide_predictor_calibrate.measured_families``, and wild12), keeps the
programs whose jaxpr has one of :data:`OPS`, and compares the rules' own answer (``predicted(...,
calibrated=False)``) with the compiled truth per target (answered, right, every miss).  ``--all FILE``
writes every program's answer (all targets) to ``FILE`` so that two runs can be compared: no program
without one should change its answer.  Nothing compiles.

Run::

    python benchmarks/guide_predictor_ops.py [--all answers.json] [--diff before.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_calibrate import TARGETS, measured_families  # noqa: E402
from guide_predictor_family import Program, load_truth, predicted  # noqa: E402

#: The ops the rules of ``ops.py`` answer for (as the jaxpr names them).
OPS = ("bitcast_convert_type", "bessel_i0e", "bessel_i1e", "stack", "reduce_window", "triangular_solve",
       "cholesky", "igamma", "regularized_incomplete_beta")


def has_conv(prog: Program) -> bool:
    """The program's jaxpr (sub-jaxprs included) has one of :data:`OPS`."""
    import jax
    from guide_predictor import load_function, structs_of

    text = str(jax.make_jaxpr(load_function(prog.source, "f"))(*structs_of(prog.specs)))
    return any(f" {op}[" in text or f" {op} " in text for op in OPS)


def families() -> dict[str, Any]:
    """Every measured family, wild12 included."""
    import guide_predictor_holdout13 as wild12

    out = dict(measured_families())
    out["wild12"] = (wild12.programs(), load_truth(wild12.FILES.truth))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--all", type=Path, help="write every program's answers here")
    ap.add_argument("--diff", type=Path, help="compare the programs without these ops with this file")
    args = ap.parse_args(argv)
    answers: dict[str, dict[str, Any]] = {}
    conv: dict[str, dict[str, int]] = {t: {"programs": 0, "answered": 0, "right": 0} for t in TARGETS}
    misses: list[str] = []
    conv_keys: set[str] = set()
    for fam, (progs, truth) in families().items():
        for prog in progs:
            is_conv = has_conv(prog)
            key = f"{fam}/{prog.name}/{prog.key}"
            if is_conv:
                conv_keys.add(key)
            for target in TARGETS:
                rec = truth.get((prog.key, target))
                if args.all or args.diff or is_conv:
                    pred = predicted(prog, target, calibrated=False)
                    answers[f"{key} {target}"] = {k: pred.get(k) for k in ("stored", "certain", "rule", "where")}
                if not is_conv or rec is None or "error" in rec:
                    continue
                got = conv[target]
                got["programs"] += 1
                if not (pred["certain"] and pred["stored"] is not None):
                    continue
                got["answered"] += 1
                right = pred["stored"] == rec["stored"]
                got["right"] += int(right)
                truth_where = ("on-chip" if rec.get("memory_space") == 1 else "HBM") if rec["stored"] else ""
                if not right:
                    misses.append(f"{target} {fam}/{prog.name}: predicted {'stored' if pred['stored'] else 'fused'}"
                                  f" ({pred['rule']}), truth {'stored' if rec['stored'] else 'fused'}"
                                  f" {rec.get('buffer', '')} -- {pred['why'][:160]}")
                elif target == "tpu:v5e" and pred["stored"] and pred.get("where") not in ("", truth_where):
                    misses.append(f"{target} {fam}/{prog.name}: where {pred['where']}, truth {truth_where}")
    for target, got in conv.items():
        print(f"{target}: {got['answered']}/{got['programs']} answered, {got['right']}/{got['answered']} right")
    for m in misses:
        print("MISS", m)
    if args.all:
        args.all.write_text(json.dumps(answers, indent=0, sort_keys=True), encoding="utf-8")
    if args.diff:
        before = json.loads(args.diff.read_text(encoding="utf-8"))
        changed = [k for k, v in answers.items() if k.split(" ")[0] not in conv_keys and before.get(k) != v]
        print(f"{len(changed)} answers changed outside the programs with these ops")
        for k in changed:
            print("CHANGED", k, before.get(k), "->", answers[k])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
