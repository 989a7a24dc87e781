"""The H100 gather rules measured on the family programs they were not written from.

Loads every measured family (``guide_predictor_calibrate.measured_families``, wild12 included),
predicts every program on every target (``predicted(...,
calibrated=False)``, jaxpr only) and, with ``--diff before.json`` (a ``--all`` file written on the commit
before the rules), counts the programs whose H100 answer changed against the compiled truth (answered,
right, every miss) and lists every other answer that changed (there should be none).  Nothing compiles.

Run::

    python benchmarks/guide_predictor_gather.py --all before.json         # on the commit before
    python benchmarks/guide_predictor_gather.py --all after.json --diff before.json
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
from guide_predictor_family import predicted  # noqa: E402

TARGET = "gpu:h100"
FIELDS = ("stored", "certain", "rule", "where")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--all", type=Path, help="write every program's answers here")
    ap.add_argument("--diff", type=Path, help="the answers before the rules (a --all file)")
    args = ap.parse_args(argv)
    answers: dict[str, dict[str, Any]] = {}
    whys: dict[str, str] = {}
    truths: dict[str, dict[str, Any] | None] = {}
    for fam, (progs, truth) in measured_families().items():
        for prog in progs:
            for target in TARGETS:
                key = f"{fam}/{prog.name}/{prog.key} {target}"
                pred = predicted(prog, target, calibrated=False)
                answers[key] = {k: pred.get(k) for k in FIELDS}
                whys[key] = str(pred.get("why", ""))
                truths[key] = truth.get((prog.key, target))
    if args.all:
        args.all.write_text(json.dumps(answers, indent=0, sort_keys=True), encoding="utf-8")
    if not args.diff:
        return 0
    before = json.loads(args.diff.read_text(encoding="utf-8"))
    changed = [k for k, v in answers.items() if before.get(k) != v]
    h100 = [k for k in changed if k.endswith(f" {TARGET}")]
    others = [k for k in changed if not k.endswith(f" {TARGET}")]
    answered = right = 0
    misses = []
    for k in h100:
        pred, rec = answers[k], truths[k]
        if rec is None or "error" in rec or not (pred["certain"] and pred["stored"] is not None):
            continue
        answered += 1
        if pred["stored"] == rec["stored"]:
            right += 1
        else:
            misses.append(f"MISS {k}: predicted {'stored' if pred['stored'] else 'fused'} ({pred['rule']}), truth "
                          f"{'stored' if rec['stored'] else 'fused'} {rec.get('buffer', '')} -- {whys[k][:200]}")
    print(f"{TARGET}: {len(h100)} answers changed, {answered} answered, {right}/{answered} right")
    for k in h100:
        rec = truths[k]
        t = "?" if rec is None or "error" in rec else ("stored" if rec["stored"] else "fused")
        print("H100", k, before.get(k), "->", answers[k], "truth", t)
    for m in misses:
        print(m)
    print(f"{len(others)} answers changed on the other targets")
    for k in others:
        print("CHANGED", k, before.get(k), "->", answers[k])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
