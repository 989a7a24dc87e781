"""How certain an answer is: certain only with a rule whose measured records are trusted, on every
program measured and on the programs it had not seen (the holdouts' first evaluations); any other answer
keeps its True or False and says its record on unseen programs.

The records are the committed table (``sphinx_jaxhlo/predict/calibration_table.py``, written by
``benchmarks/guide_predictor_calibrate.py`` from the committed truth; nothing here compiles).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import jax.numpy as jnp
import pytest

from sphinx_jaxhlo.predict import Prediction, calibration
from sphinx_jaxhlo.predict.calibration import FLOOR, POINT, Record, certify, record, table_rows, wilson_lower
from sphinx_jaxhlo.predict.calibration_table import FAMILIES, FIRST, KEYS, WHERE, WHERE_FIRST
from sphinx_jaxhlo.predict.front import predict
from sphinx_jaxhlo.predict.rules import BY_ANCHOR

ROOT = Path(__file__).parent.parent
MEASURED = json.loads((ROOT / "benchmarks" / "guide_predictor_calibration.json").read_text(encoding="utf-8"))
PAGE = (ROOT / "docs" / "guide" / "predict.md").read_text(encoding="utf-8")
#: The holdouts' first evaluations and rescores, on a page of their own.
RECORD = (ROOT / "docs" / "guide" / "predict-record.md").read_text(encoding="utf-8")


def _gemm_sum(x: jnp.ndarray, w: jnp.ndarray) -> jnp.ndarray:
    return jnp.sum(jnp.tanh(x @ w), axis=1)


def test_the_lower_bound_needs_support_before_it_trusts_a_perfect_record() -> None:
    assert wilson_lower(10, 10) < FLOOR <= wilson_lower(25, 25)
    assert not Record(10, 10).trusted and Record(25, 25).trusted
    # one miss: 98 % of the answers and the bound both
    assert not Record(48, 49).trusted and Record(49, 50).trusted
    assert not Record(97, 100).trusted and not Record(0, 0).trusted
    assert 0 < wilson_lower(1, 2) < 0.5 < wilson_lower(99, 100) < 0.99


def test_the_table_is_the_benchmarks_measurement_and_each_key_a_rule_of_its_target() -> None:
    # every family whose first evaluation is written (the next family's is the test of the table)
    assert set(FAMILIES) == {"main", "holdout", "holdout2", "holdout3", "wild", "wild2", "wild3", "wild4", "wild5",
                             "wild6", "wild7", "wild8", "wild9", "wild10", "wild11", "wild12", "wild13",
                             "wild14", "wild15", "wild16", "wild17", "wild18", "wild19", "wild20"}
    assert MEASURED["families"] == FAMILIES
    assert {row["key"]: (row["right"], row["measured"]) for row in MEASURED["keys"]} == KEYS
    assert {k: (v["right"], v["measured"]) for k, v in MEASURED["where"].items()} == WHERE
    # the record on unseen programs: every wild family's first evaluation, its answers as they were
    assert MEASURED["first_families"] == sorted(f for f in FAMILIES if f.startswith("wild"))
    assert {row["key"]: (row["first"]["right"], row["first"]["measured"]) for row in MEASURED["keys"]
            if row["first"]["measured"]} == {k: v for k, v in FIRST.items() if k in KEYS}
    assert {k: (v["first"]["right"], v["first"]["measured"]) for k, v in MEASURED["where"].items()} == WHERE_FIRST
    first_rows = [json.loads((ROOT / "benchmarks" / f"guide_predictor_holdout{n}_first.json").read_text("utf-8"))
                  for n in ("", *range(3, 22))]
    answered = sum(1 for doc in first_rows for row in doc["rows"] for got in row["targets"].values()
                   if got.get("truth") is not None and got.get("stored") is not None)
    assert sum(m for _, m in FIRST.values()) == answered
    for key, (right, measured) in KEYS.items():
        target, anchor, verdict = key.split(" ")
        assert BY_ANCHOR[anchor].target in ("all", target) and verdict in ("stored", "fused")
        assert 0 <= right <= measured
    # answers counted never exceed the programs with truth, per family
    for fam, n in FAMILIES.items():
        assert sum(m for _, m in MEASURED["per_family"][fam].values()) <= n


def _untrusted() -> tuple[str, str, str, Record]:
    """A key whose answers are not certain, with its record on unseen programs (measured there)."""
    target, anchor, verdict, _, unseen, _ = next(row for row in table_rows() if not row[5] and row[4].measured)
    return target, anchor, verdict, unseen


def test_a_rule_with_a_trusted_record_is_certain_and_one_without_answers_with_its_record() -> None:
    specs = ("f32[4096,1024]", "f32[1024,4096]")
    raw = predict(_gemm_sum, *specs, target="gpu:h100", calibrated=False)
    rec, unseen = record("gpu:h100", raw.rule, raw.verdict), record("gpu:h100", raw.rule, raw.verdict, first=True)
    assert raw.answered and raw.certain and rec.trusted and unseen.trusted
    assert predict(_gemm_sum, *specs, target="gpu:h100") == replace(raw, right=unseen.right,
                                                                     measured=unseen.measured, unseen=True)
    # an answer a snapshot stored before the record on unseen programs says what its figures count
    old = Prediction.from_dict({k: v for k, v in replace(raw, certain=False, right=70, measured=73).to_dict().items()
                                if k != "unseen"})
    assert old.record == "right 70 of 73 measured"
    # a record trusted on the programs the rules were fitted to is not enough
    fitted = [k for k, v in KEYS.items() if Record(*v).trusted and not Record(*FIRST.get(k, (0, 0))).trusted]
    assert fitted, "every key fitted is trusted unseen: the second record would test nothing"
    target, anchor, verdict = fitted[0].split(" ")
    assert not certify(Prediction(target, verdict == "stored", True, anchor, "", "why")).certain
    target, anchor, verdict, unseen = _untrusted()
    made = Prediction(target, verdict == "stored", True, anchor, BY_ANCHOR[anchor].title, "the rule's words",
                      where="HBM" if target == "tpu:v5e" and verdict == "stored" else "")
    got = certify(made, "python -m sphinx_jaxhlo f.py:f --targets " + target)
    # the answer stays; only its certainty and its words change
    assert (got.stored, got.certain, got.answered, got.rule, got.verdict) == (made.stored, False, True, anchor,
                                                                             verdict)
    right, measured = unseen.right, unseen.measured
    assert (got.right, got.measured, got.record) == (right, measured, f"right {right} of {measured} on unseen programs")
    assert (f"not certain: on programs it had not seen (the first evaluations) this rule answering {verdict} was "
            f"right {right} of {measured} times" in got.why)
    assert got.why.startswith("the rule's words") and "compile it to be sure: python -m" in got.why
    assert got.command.endswith(target)
    never = certify(replace(made, rule="jaxhlo-predict-all-limits"))
    assert "never measured" in never.why and never.answered and not never.certain
    assert never.record == "never measured on unseen programs"
    # an abstention (a stated limit, no rule) is left as it is
    assert certify(replace(made, stored=None, certain=False)) == replace(made, stored=None, certain=False)


def test_an_uncertain_answer_is_said_so_in_its_disagreement() -> None:
    target, anchor, verdict, unseen = _untrusted()
    right, measured = unseen.right, unseen.measured
    got = certify(Prediction(target, verdict == "stored", True, anchor, BY_ANCHOR[anchor].title, "why"))
    said = got.disagreement(verdict != "stored")
    assert (f"expects, without certainty (right {right} of {measured} on unseen programs), this table {verdict}"
            in said)
    assert got.disagreement(verdict == "stored") == ""
    assert (f"stored (not certain: right {right} of {measured} on unseen programs)"
            in repr(got).replace("fused", "stored"))
    assert repr(got).count(got.command) == 1


def test_the_tpu_where_is_kept_and_says_when_its_record_is_not_trusted() -> None:
    anchor = next(k for k in KEYS if k.startswith("tpu:v5e ") and k.endswith(" stored")).split(" ")[1]
    for place, (right, measured) in WHERE_FIRST.items():
        made = Prediction("tpu:v5e", True, True, anchor, "", "why", where=place, where_why="measured")
        got = certify(made)
        assert got.answered and got.where == place
        if Record(right, measured).trusted and Record(*WHERE[place]).trusted:
            assert got.where_why == "measured"
        else:
            assert got.where_why.startswith("measured; not certain: ")
        if not Record(right, measured).trusted:
            said = f"had not seen (the first evaluations) {place} was right {right} of {measured} times"
            assert said in got.where_why


def test_the_page_shows_the_table_and_the_threshold() -> None:
    for target, anchor, verdict, now, unseen, trusted in table_rows():
        row = re.compile(rf"\|\s*`{re.escape(target)}`\s*\|\s*{{ref}}`[\w-]+ <{re.escape(anchor)}>`\s*\|\s*{verdict}"
                         rf"\s*\|\s*{now.right}/{now.measured} \([^|\n]*\)\s*\|\s*{unseen.right}/{unseen.measured} "
                         rf"\([^|\n]*\)\s*\|\s*{'yes' if trusted else 'no'}\s*\|")
        assert row.search(PAGE), (target, anchor, verdict)
    said = PAGE.replace("\u00a0%", "%").replace(" %", "%")
    assert f"at least\n{POINT:.0%} of its answers" in said and f"is at least {FLOOR:.0%}" in said
    assert f"one-sided {calibration.CONFIDENCE:.0%} Wilson lower bound" in said


def _of(part: int, whole: int) -> str:
    return f"{part} of {whole} ({round(100 * part / whole, 1):g}\u00a0%)" if whole else f"{part} of {whole}"


def test_the_pages_rescores_are_the_results_files_and_say_what_they_are() -> None:
    """wild20 to wild2 scored after their first evaluations: answered (certain or not), right,
    each class, the certain subset; the first evaluations are kept as written."""
    names = {"cpu": "CPU", "gpu:h100": "H100", "tpu:v5e": "TPU v5e"}
    for number in [str(n) for n in range(21, 2, -1)]:
        result = json.loads((ROOT / "benchmarks" / f"guide_predictor_holdout{number}_results.json")
                            .read_text(encoding="utf-8"))
        assert result["label"].startswith("scored after the first evaluation")
        for target, stats in result["summary"].items():
            sure = stats["certain"]
            assert sure["answered"] <= stats["answered"] and sure["right"] <= stats["right"]
            cells = [_of(stats["answered"], stats["programs"]), _of(stats["right"], stats["answered"]),
                     _of(stats["stored"]["right"], stats["stored"]["programs"]),
                     _of(stats["fused"]["right"], stats["fused"]["programs"]),
                     _of(sure["answered"], stats["programs"]), _of(sure["right"], sure["answered"])]
            assert f"| {names[target]} | " + " | ".join(cells) + " |" in RECORD, (number, target)
    first = json.loads((ROOT / "benchmarks" / "guide_predictor_holdout4_first.json").read_text(encoding="utf-8"))
    assert "label" not in first and "certain" not in first["summary"]["cpu"]
    assert "| H100 | 20 of 71 (28.2\u00a0%) | 20 of 20 (100\u00a0%) |" in RECORD


@pytest.mark.parametrize("number", ["5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18",
                                    "19", "20", "21"])
def test_the_pages_wild4_to_wild20_tables_are_their_first_evaluations(number: str) -> None:
    """wild4's to wild20's tables on the page are their first evaluations as written (no label: scored
    once, before any change to the predictor), with the certain subset and the TPU's where."""
    names = {"cpu": "CPU", "gpu:h100": "H100", "tpu:v5e": "TPU v5e"}
    first = json.loads((ROOT / "benchmarks" / f"guide_predictor_holdout{number}_first.json")
                       .read_text(encoding="utf-8"))
    assert "label" not in first and first["programs"] == len(first["rows"]) >= 40
    for target, stats in first["summary"].items():
        sure = stats["certain"]
        cells = [_of(stats["answered"], stats["programs"]), _of(stats["right"], stats["answered"]),
                 _of(stats["stored"]["right"], stats["stored"]["programs"]),
                 _of(stats["fused"]["right"], stats["fused"]["programs"]),
                 _of(sure["answered"], stats["programs"]), _of(sure["right"], sure["answered"])]
        where = stats.get("where")
        tail = f" said for {where['answered']} of {where['stored_tables']}, {where['right']} right |" if where else ""
        assert f"| {names[target]} | " + " | ".join(cells) + f" |{tail}" in RECORD, target


def test_the_record_pages_overview_is_every_holdouts_first_evaluation() -> None:
    """The overview at the top of the record page: one row per wild holdout, its programs and, per
    target, the share answered and the share of those answers right, as its first evaluation scored."""
    def share(part: int, whole: int) -> str:
        return f"{round(100 * part / whole, 1):g}\u00a0%"

    rows = re.findall(r"^\| \{ref\}`(wild\d*) <jaxhlo-guide-predict-\1>` \((\d+)\) \| (.*) \|$", RECORD, flags=re.M)
    files = {"wild": "guide_predictor_holdout_first.json"}
    files.update({f"wild{n - 1}": f"guide_predictor_holdout{n}_first.json" for n in range(3, 100)
                  if (ROOT / "benchmarks" / f"guide_predictor_holdout{n}_first.json").exists()})
    assert [family for family, _, _ in rows] == list(files)
    for family, programs, cells in rows:
        first = json.loads((ROOT / "benchmarks" / files[family]).read_text(encoding="utf-8"))
        stats = first["summary"]
        assert int(programs) == first["programs"], family
        expected = [
            f"{share(stats[t]['answered'], stats[t]['programs'])}, {share(stats[t]['right'], stats[t]['answered'])}"
            for t in ("cpu", "gpu:h100", "tpu:v5e")]
        assert [c.strip() for c in cells.split("|")] == expected, family


def test_the_record_pages_chip_check_is_the_committed_chip_record() -> None:
    """The record page's sentence on the chip: the families, programs and equal truths it names are those of
    ``benchmarks/tpu_family_chip_tpu-v5e.json`` (written by ``benchmarks/tpu_family_chip.py`` on a real TPU
    v5e), and no family there differs."""
    chip = json.loads((ROOT / "benchmarks" / "tpu_family_chip_tpu-v5e.json").read_text(encoding="utf-8"))
    total = chip["total"]
    assert total["programs"] == total["compiled_on_chip"] == total["same_truth"]
    assert not [name for fam in chip["families"].values() for name in fam["differ"]]
    wild = sorted(int(stem.removeprefix("guide_predictor_holdout")) - 1 for stem in chip["families"])
    assert wild == list(range(wild[0], wild[-1] + 1))
    text = " ".join(RECORD.split())
    assert (f"every program of the {_count_word(len(wild))} latest families (wild{wild[0]} to wild{wild[-1]}, "
            f"{total['programs']:,} programs;") in text
    assert f"for all {total['programs']:,} the truth read from the chip's optimized HLO" in text


def _count_word(n: int) -> str:
    return {6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}.get(n, str(n))
