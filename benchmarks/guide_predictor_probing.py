"""What the scripts that write and check one class of rules share: the probes' command line (compile
the probes, or print their truth beside the rules' answers) and the rules measured on the family
programs of that class that they were not written from.

``guide_predictor_conv_probes.py``, ``guide_predictor_gather_probes.py`` and
``guide_predictor_ops_probes.py`` are probes; ``guide_predictor_conv.py`` and
``guide_predictor_ops.py`` measure their rules on the families.  Nothing here compiles unless asked.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program, _module, compile_truth, load_truth, predicted  # noqa: E402


def probe_maker(family: str) -> Callable[..., Program]:
    """The constructor of one probe script's programs: ``probe(name, body, specs, *classes)``, ``body``
    a module's code defining ``f``, ``specs`` its argument specs, ``classes`` its classes (``kind=...``)."""

    def probe(name: str, body: str, specs: str, *classes: str) -> Program:
        return Program(name, family, _module(body), specs, list(classes))

    return probe


def probe_main(argv: list[str] | None, programs: Callable[[], list[Program]], targets: Sequence[str],
               truth_file: Path) -> int:
    """``--compile``: compile the probes not in ``truth_file`` yet; else each probe's truth beside the
    rules' own answer, per target, and how many the rules answered and got right (``--only`` a name part)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    progs = [p for p in programs() if args.only in p.name]
    if args.compile:
        compile_truth(progs, list(targets), truth_file, timeout=600)
        return 0
    truth = load_truth(truth_file)
    for target in targets:
        right = answered = 0
        for p in progs:
            rec = truth.get((p.key, target), {})
            pred = predicted(p, target, calibrated=False)
            t = rec.get("stored", rec.get("error", "?"))
            ans = pred["stored"] if pred["certain"] else "abstain"
            if pred["certain"] and pred["stored"] is not None:
                answered += 1
                right += int(pred["stored"] == t)
            mark = "" if not pred["certain"] or pred["stored"] == t else "  <-- MISS"
            print(f"{target:8} {p.name:26} truth={t!s:5} ms={rec.get('memory_space', '')!s:1} pred={ans!s:7} "
                  f"{pred['rule'][14:]:12} where={pred.get('where', '')!s:7} {rec.get('buffer', '')[:60]:60} "
                  f"{pred['why'][:60]}{mark}")
        print(f"{target}: {answered}/{len(progs)} answered, {right} right")
    return 0


def measure_subset(argv: list[str] | None, selected: Callable[[Program], bool], what: str) -> int:
    """The rules' own answers (``predicted(..., calibrated=False)``) on every measured family's programs
    that ``selected`` keeps, against the compiled truth per target (answered, right, every miss).
    ``--all FILE`` writes every program's answers (all targets); ``--diff FILE`` compares the programs not
    selected with such a file: none of them should change its answer."""
    from guide_predictor_calibrate import TARGETS, measured_families

    ap = argparse.ArgumentParser()
    ap.add_argument("--all", type=Path, help="write every program's answers here")
    ap.add_argument("--diff", type=Path, help=f"compare the programs without {what} with this file")
    args = ap.parse_args(argv)
    answers: dict[str, dict[str, Any]] = {}
    counts: dict[str, dict[str, int]] = {t: {"programs": 0, "answered": 0, "right": 0} for t in TARGETS}
    misses: list[str] = []
    kept: set[str] = set()
    for fam, (progs, truth) in measured_families().items():
        for prog in progs:
            keep = selected(prog)
            key = f"{fam}/{prog.name}/{prog.key}"
            if keep:
                kept.add(key)
            for target in TARGETS:
                rec = truth.get((prog.key, target))
                if args.all or args.diff or keep:
                    pred = predicted(prog, target, calibrated=False)
                    answers[f"{key} {target}"] = {k: pred.get(k) for k in ("stored", "certain", "rule", "where")}
                if not keep or rec is None or "error" in rec:
                    continue
                got = counts[target]
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
    for target, got in counts.items():
        print(f"{target}: {got['answered']}/{got['programs']} answered, {got['right']}/{got['answered']} right")
    for m in misses:
        print("MISS", m)
    if args.all:
        args.all.write_text(json.dumps(answers, indent=0, sort_keys=True), encoding="utf-8")
    if args.diff:
        before = json.loads(args.diff.read_text(encoding="utf-8"))
        changed = [k for k, v in answers.items() if k.split(" ")[0] not in kept and before.get(k) != v]
        print(f"{len(changed)} answers changed outside the programs with {what}")
        for k in changed:
            print("CHANGED", k, before.get(k), "->", answers[k])
    return 0
