"""The predictor's calibration: how often each rule's answer was right, over every family measured.

For every program with compiled truth (the benchmark's families ``main``, ``holdout``, ``holdout2``,
``holdout3`` in ``guide_predictor_family.py``; the holdouts ``wild`` to ``wild20`` in
``guide_predictor_holdout.py`` and ``guide_predictor_holdout3.py`` to ``guide_predictor_holdout21.py``: every
family whose first evaluation is written; the next family's first evaluation is the test of this table)
and every target, the rules' own
answer (``predict(..., calibrated=False)``, jaxpr only) is compared with the truth the compile left in
the committed truth files.  Each answer is counted under its key: target, rule anchor and verdict
(``stored`` or ``fused``); on the TPU a stored table's ``where`` is counted under its place.  The counts
are written to ``sphinx_jaxhlo/predict/calibration_table.py`` (the table the package reads:
:mod:`sphinx_jaxhlo.predict.calibration` answers with a key only when its Wilson lower bound reaches
the floor) and, per family, to ``benchmarks/guide_predictor_calibration.json``.  Nothing compiles.

Run::

    python benchmarks/guide_predictor_calibrate.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import guide_predictor_holdout as wild  # noqa: E402
import guide_predictor_holdout3 as wild2  # noqa: E402
import guide_predictor_holdout4 as wild3  # noqa: E402
import guide_predictor_holdout5 as wild4  # noqa: E402
import guide_predictor_holdout6 as wild5  # noqa: E402
import guide_predictor_holdout7 as wild6  # noqa: E402
import guide_predictor_holdout8 as wild7  # noqa: E402
import guide_predictor_holdout9 as wild8  # noqa: E402
import guide_predictor_holdout10 as wild9  # noqa: E402
import guide_predictor_holdout11 as wild10  # noqa: E402
import guide_predictor_holdout12 as wild11  # noqa: E402
import guide_predictor_holdout13 as wild12  # noqa: E402
import guide_predictor_holdout14 as wild13  # noqa: E402
import guide_predictor_holdout15 as wild14  # noqa: E402
import guide_predictor_holdout16 as wild15  # noqa: E402
import guide_predictor_holdout17 as wild16  # noqa: E402
import guide_predictor_holdout18 as wild17  # noqa: E402
import guide_predictor_holdout19 as wild18  # noqa: E402
import guide_predictor_holdout20 as wild19  # noqa: E402
import guide_predictor_holdout21 as wild20  # noqa: E402
from guide_predictor_family import TRUTH_FILE, Program, families, load_truth, predicted  # noqa: E402

TABLE_FILE = ROOT / "sphinx_jaxhlo" / "predict" / "calibration_table.py"
OUT = ROOT / "benchmarks" / "guide_predictor_calibration.json"
TARGETS = ("cpu", "gpu:h100", "tpu:v5e")


def measured_families() -> dict[str, tuple[list[Program], dict[tuple[str, str], dict[str, Any]]]]:
    """Every family with compiled truth: its programs and its truth."""
    main_truth = load_truth(TRUTH_FILE)
    out = {name: (progs, main_truth) for name, progs in families().items()}
    out["wild"] = (wild.programs(), wild.load_truth())
    out["wild2"] = (wild2.programs(), load_truth(wild2.TRUTH_FILE))
    out["wild3"] = (wild3.programs(), load_truth(wild3.TRUTH_FILE))
    out["wild4"] = (wild4.programs(), load_truth(wild4.FILES.truth))
    out["wild5"] = (wild5.programs(), load_truth(wild5.FILES.truth))
    for name, family in (("wild6", wild6), ("wild7", wild7), ("wild8", wild8), ("wild9", wild9),
                         ("wild10", wild10), ("wild11", wild11), ("wild12", wild12), ("wild13", wild13),
                         ("wild14", wild14), ("wild15", wild15), ("wild16", wild16), ("wild17", wild17),
                         ("wild18", wild18), ("wild19", wild19), ("wild20", wild20)):
        out[name] = (family.programs(), load_truth(family.FILES.truth))
    return out


def first_files() -> dict[str, Path]:
    """Each wild family's first evaluation: the answers of the rules as they were before anyone read the
    family's truth (programs the rules had not seen)."""
    out = {"wild": wild.FIRST_FILE, "wild2": wild2.FIRST_FILE, "wild3": wild3.FIRST_FILE}
    for name, family in (("wild4", wild4), ("wild5", wild5), ("wild6", wild6), ("wild7", wild7), ("wild8", wild8),
                         ("wild9", wild9), ("wild10", wild10), ("wild11", wild11), ("wild12", wild12),
                         ("wild13", wild13), ("wild14", wild14), ("wild15", wild15), ("wild16", wild16),
                         ("wild17", wild17), ("wild18", wild18), ("wild19", wild19), ("wild20", wild20)):
        out[name] = family.FILES.first
    return out


def measure_first(families: dict[str, tuple[list[Program], dict[tuple[str, str], dict[str, Any]]]] | None = None,
                  ) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """The record on programs the rules had not seen: every answer (stored or fused) of every first
    evaluation, as it was recorded, counted under its key as :func:`measure` counts them, and the TPU's
    ``where`` by place; each is scored against the family's truth as it is now (the truth of a compile
    does not change with the rules, but its reading was corrected twice: the TPU's memory space at wild9,
    the CPU's and H100's temp clause)."""
    families = families or measured_families()
    keys: dict[str, list[int]] = {}
    where: dict[str, list[int]] = {}
    for fam, path in first_files().items():
        progs, truth = families[fam]
        keyed = {prog.name: prog.key for prog in progs}
        for row in json.loads(path.read_text(encoding="utf-8"))["rows"]:
            for target, got in row["targets"].items():
                rec = truth.get((keyed.get(row["name"], ""), target))
                if rec is None or "error" in rec or got.get("stored") is None:
                    continue
                key = f"{target} {got['rule']} {'stored' if got['stored'] else 'fused'}"
                entry = keys.setdefault(key, [0, 0])
                entry[0] += int(got["stored"] == rec["stored"])
                entry[1] += 1
                if target == "tpu:v5e" and got["stored"] and rec["stored"] and got.get("where"):
                    entry = where.setdefault(got["where"], [0, 0])
                    entry[0] += int(got["where"] == ("on-chip" if rec["memory_space"] == 1 else "HBM"))
                    entry[1] += 1
    return keys, where


def measure() -> dict[str, Any]:
    """The rules' answers beside the truth, counted by key, overall and per family."""
    from sphinx_jaxhlo.predict.calibration import wilson_lower

    keys: dict[str, list[int]] = {}
    where: dict[str, list[int]] = {}
    per_family: dict[str, dict[str, list[int]]] = {}
    counted: dict[str, int] = {}
    answers: list[tuple[str, str, str, int]] = []
    totals: dict[tuple[str, str], int] = {}
    families = measured_families()
    for fam, (progs, truth) in families.items():
        for prog in progs:
            for target in TARGETS:
                rec = truth.get((prog.key, target))
                if rec is None or "error" in rec:
                    continue
                pred = predicted(prog, target, calibrated=False)
                counted[fam] = counted.get(fam, 0) + 1
                totals[(fam, target)] = totals.get((fam, target), 0) + 1
                if not (pred["certain"] and pred["stored"] is not None):
                    continue
                verdict = "stored" if pred["stored"] else "fused"
                key = f"{target} {pred['rule']} {verdict}"
                right = int(pred["stored"] == rec["stored"])
                answers.append((fam, target, key, right))
                for table in (keys, per_family.setdefault(fam, {})):
                    got = table.setdefault(key, [0, 0])
                    got[0] += right
                    got[1] += 1
                if target == "tpu:v5e" and pred["stored"] and rec["stored"] and pred.get("where"):
                    truth_where = "on-chip" if rec["memory_space"] == 1 else "HBM"
                    got = where.setdefault(pred["where"], [0, 0])
                    got[0] += int(pred["where"] == truth_where)
                    got[1] += 1
    from sphinx_jaxhlo.predict.calibration import Record

    first, first_where = measure_first(families)
    trusted = {k for k, (r, n) in keys.items() if Record(r, n).trusted and Record(*first.get(k, (0, 0))).trusted}
    gated: dict[str, dict[str, dict[str, int]]] = {}
    for fam, target, key, right in answers:
        got = gated.setdefault(fam, {}).setdefault(target, {"answered": 0, "right": 0})
        if key in trusted:
            got["answered"] += 1
            got["right"] += right
    for fam, by_target in gated.items():
        for target, got in by_target.items():
            got["programs"] = totals[(fam, target)]
    rows = [{"key": k, "right": r, "measured": n, "lower": round(wilson_lower(r, n), 4)}
            for k, (r, n) in sorted(keys.items())]
    for row in rows:
        row["trusted"] = row["key"] in trusted
        f_right, f_measured = first.get(row["key"], (0, 0))
        row["first"] = {"right": f_right, "measured": f_measured, "lower": round(wilson_lower(f_right, f_measured), 4)}
    return {"generated": time.strftime("%Y-%m-%d"), "families": counted, "keys": rows,
            "where": {k: {"right": r, "measured": n, "lower": round(wilson_lower(r, n), 4),
                          "first": dict(zip(("right", "measured"), first_where.get(k, (0, 0)), strict=True))}
                      for k, (r, n) in sorted(where.items())},
            "first_families": sorted(first_files()),
            "calibrated_on_training": gated,
            "per_family": {fam: {k: v for k, v in sorted(t.items())} for fam, t in sorted(per_family.items())},
            "_keys": keys, "_where": where, "_first": first, "_first_where": first_where}


def table_text(result: dict[str, Any]) -> str:
    """The package's table, as Python source."""
    lines = ['"""The predictor\'s measured record per rule: written by ``benchmarks/guide_predictor_calibrate.py``.',
             "",
             "Do not edit by hand: run the script.  ``KEYS``: ``\"target anchor verdict\"`` -> (right, measured);",
             "``WHERE``: the TPU's place of a stored table -> (right, measured); ``FAMILIES``: answers counted per",
             "family (program x target with truth); ``FIRST`` and ``WHERE_FIRST``: the same counts over the wild",
             'families\' first evaluations, the programs the rules had not seen when they answered."""',
             "",
             "FAMILIES: dict[str, int] = {"]
    lines += [f"    {fam!r}: {n}," for fam, n in sorted(result["families"].items())]
    lines += ["}", "", "KEYS: dict[str, tuple[int, int]] = {"]
    lines += [f"    {k!r}: ({r}, {n})," for k, (r, n) in sorted(result["_keys"].items())]
    lines += ["}", "", "WHERE: dict[str, tuple[int, int]] = {"]
    lines += [f"    {k!r}: ({r}, {n})," for k, (r, n) in sorted(result["_where"].items())]
    lines += ["}", "", "FIRST: dict[str, tuple[int, int]] = {"]
    lines += [f"    {k!r}: ({r}, {n})," for k, (r, n) in sorted(result["_first"].items())]
    lines += ["}", "", "WHERE_FIRST: dict[str, tuple[int, int]] = {"]
    lines += [f"    {k!r}: ({r}, {n})," for k, (r, n) in sorted(result["_first_where"].items())]
    lines += ["}", ""]
    return "\n".join(lines)


def main() -> int:
    result = measure()
    TABLE_FILE.write_text(table_text(result), encoding="utf-8")
    public = {k: v for k, v in result.items() if not k.startswith("_")}
    OUT.write_text(json.dumps(public, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for row in public["keys"]:
        first = row["first"]
        print(f"{row['key']:60s} {row['right']:4d}/{row['measured']:<4d} lower {row['lower']} "
              f"first {first['right']}/{first['measured']} lower {first['lower']} {row['trusted']}")
    print("calibrated, on the families measured", json.dumps(public["calibrated_on_training"]))
    print("where", public["where"])
    print("families", public["families"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
