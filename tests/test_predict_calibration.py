"""Calibrated answering: the predictor answers only with a rule whose measured record is trusted.

The records are the committed table (``sphinx_jaxhlo/predict/calibration_table.py``, written by
``benchmarks/guide_predictor_calibrate.py`` from the committed truth; nothing here compiles).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import jax.numpy as jnp

from sphinx_jaxhlo.predict import Prediction, calibration
from sphinx_jaxhlo.predict.calibration import FLOOR, POINT, Record, gate, record, table_rows, wilson_lower
from sphinx_jaxhlo.predict.calibration_table import FAMILIES, KEYS, WHERE
from sphinx_jaxhlo.predict.front import predict
from sphinx_jaxhlo.predict.rules import BY_ANCHOR

ROOT = Path(__file__).parent.parent
MEASURED = json.loads((ROOT / "benchmarks" / "guide_predictor_calibration.json").read_text(encoding="utf-8"))
PAGE = (ROOT / "docs" / "guide" / "predict.md").read_text(encoding="utf-8")


def _cos_sum(x: jnp.ndarray) -> jnp.ndarray:
    return jnp.sum(jnp.cos(x), axis=1)


def test_the_lower_bound_needs_support_before_it_trusts_a_perfect_record() -> None:
    assert wilson_lower(10, 10) < FLOOR <= wilson_lower(25, 25)
    assert not Record(10, 10).trusted and Record(25, 25).trusted
    # one miss: 98 % of the answers and the bound both
    assert not Record(48, 49).trusted and Record(49, 50).trusted
    assert not Record(97, 100).trusted and not Record(0, 0).trusted
    assert 0 < wilson_lower(1, 2) < 0.5 < wilson_lower(99, 100) < 0.99


def test_the_table_is_the_benchmarks_measurement_and_each_key_a_rule_of_its_target() -> None:
    assert set(FAMILIES) == {"main", "holdout", "holdout2", "holdout3", "wild", "wild2"}
    assert MEASURED["families"] == FAMILIES
    assert {row["key"]: (row["right"], row["measured"]) for row in MEASURED["keys"]} == KEYS
    assert {k: (v["right"], v["measured"]) for k, v in MEASURED["where"].items()} == WHERE
    for key, (right, measured) in KEYS.items():
        target, anchor, verdict = key.split(" ")
        assert BY_ANCHOR[anchor].target in ("all", target) and verdict in ("stored", "fused")
        assert 0 <= right <= measured
    # answers counted never exceed the programs with truth, per family
    for fam, n in FAMILIES.items():
        assert sum(m for _, m in MEASURED["per_family"][fam].values()) <= n


def test_a_rule_with_a_trusted_record_answers_and_one_without_says_its_record() -> None:
    raw = predict(_cos_sum, "f32[4096,4096]", target="cpu", calibrated=False)
    assert raw.answered and record("cpu", raw.rule, raw.verdict).trusted
    assert predict(_cos_sum, "f32[4096,4096]", target="cpu") == raw
    untrusted = [(k, v) for k, v in KEYS.items() if not Record(*v).trusted and v[1]]
    assert untrusted, "every key trusted: the gate would test nothing"
    key, (right, measured) = untrusted[0]
    target, anchor, verdict = key.split(" ")
    made = Prediction(target, verdict == "stored", True, anchor, BY_ANCHOR[anchor].title, "the rule's words",
                      where="HBM" if target == "tpu:v5e" and verdict == "stored" else "")
    got = gate(made, "python -m sphinx_jaxhlo f.py:f --targets " + target)
    assert (got.stored, got.certain, got.answered, got.rule, got.where) == (None, False, False, anchor, "")
    assert f"this rule is right {right} of {measured} times on the programs measured: compile it" in got.why
    assert "the rule's words" in got.why and got.command.endswith(target)
    never = gate(replace(made, rule="jaxhlo-predict-all-limits"))
    assert "never measured" in never.why and not never.answered
    assert gate(replace(made, stored=None, certain=False)) == replace(made, stored=None, certain=False)


def test_the_tpu_where_is_said_only_where_its_record_is_trusted() -> None:
    key = next(k for k, v in KEYS.items() if k.startswith("tpu:v5e ") and k.endswith(" stored")
               and Record(*v).trusted)
    anchor = key.split(" ")[1]
    for place, (right, measured) in WHERE.items():
        made = Prediction("tpu:v5e", True, True, anchor, "", "why", where=place, where_why="measured")
        got = gate(made)
        assert got.answered
        if Record(right, measured).trusted:
            assert got.where == place
        else:
            assert got.where == "" and f"right {right} of {measured} times" in got.where_why


def test_the_page_shows_the_table_and_the_threshold() -> None:
    for target, anchor, verdict, right, measured, _, trusted in table_rows():
        row = re.compile(rf"\|\s*`{re.escape(target)}`\s*\|\s*{{ref}}`{re.escape(anchor)}`\s*\|\s*{verdict}\s*\|"
                         rf"\s*{right}/{measured}\s*\|[^|\n]*\|\s*{'answers' if trusted else 'compile it'}\s*\|")
        assert row.search(PAGE), (target, anchor, verdict)
    said = PAGE.replace("\u00a0%", "%").replace(" %", "%")
    assert f"at least\n{POINT:.0%} of its answers" in said and f"is at least {FLOOR:.0%}" in said
    assert f"one-sided {calibration.CONFIDENCE:.0%} Wilson lower bound" in said
