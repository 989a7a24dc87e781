"""The guide's rule in a report: named with the verdict, a disagreement said, counted, warned on the guide's pages.

Reports are built by hand (no compile): a prediction beside what XLA stored.
"""

from __future__ import annotations

from dataclasses import replace

from sphinx_jaxhlo.core.example import parse_example
from sphinx_jaxhlo.core.report import Materialized, Reduction, Report
from sphinx_jaxhlo.core.settings import Settings
from sphinx_jaxhlo.pipeline.build import Build, Record, Warnings
from sphinx_jaxhlo.pipeline.run import guide_check
from sphinx_jaxhlo.predict import Prediction
from sphinx_jaxhlo.predict.agreement import stored_by_xla
from sphinx_jaxhlo.render.display import Display
from sphinx_jaxhlo.render.findings import findings
from sphinx_jaxhlo.render.text import summary_text
from sphinx_jaxhlo.sphinxext.report import guide_line

SOURCE = "import jax.numpy as jnp\n\ndef f(x):\n    return jnp.sum(jnp.exp(x), axis=1)\n"


def _prediction(stored: bool | None, certain: bool = True) -> Prediction:
    return Prediction("gpu:h100", stored, certain, "jaxhlo-predict-h100-cost",
                      "5. Otherwise: the cost model, once per reader", "fused 2 us vs unfused 5 us",
                      "float32[1024, 1024], 4.2 MB", 4 * 2**20, 2**20)


def _report(stored: bool, prediction: Prediction | None) -> Report:
    buffers = [Materialized("exp.1", "f32[1024,1024]", 4 * 2**20, "wrapped_exponential", ["reduce.1"],
                            [4], producer_op="exp")] if stored else []
    reduction = Reduction("reduce.1", "input_reduce_fusion", ["exp"], "exp.1" if stored else None, 4 * 2**20,
                          "f32[1024,1024]", [4], op="reduce_sum")
    return Report(function="f", target="gpu:h100", materialized=buffers, reductions=[reduction],
                  prediction=prediction)


def test_xla_stored_is_read_from_the_buffers_of_the_table_size() -> None:
    assert stored_by_xla(_report(True, None), _prediction(False))
    assert not stored_by_xla(_report(False, None), _prediction(False))


def test_a_verdict_names_its_rule_and_a_disagreement_is_said_plainly() -> None:
    agreeing = [f for f in findings(_report(False, _prediction(False)), Display()) if f.rule]
    assert len(agreeing) == 1 and agreeing[0].title == "The guide"
    assert agreeing[0].rule == "jaxhlo-predict-h100-cost" and agreeing[0].rule_title.startswith("5. Otherwise")
    assert "As the guide's rule says, XLA fused the table" in agreeing[0].text
    (differing,) = [f for f in findings(_report(True, _prediction(False)), Display()) if f.rule]
    assert differing.title == "The guide disagrees"
    assert "expected this table (float32[1024, 1024], 4.2 MB) fused; XLA stored it: a case the guide does not " \
           "cover" in differing.text
    text = summary_text(_report(True, _prediction(False)))
    assert "Rule: 5. Otherwise: the cost model, once per reader (jaxhlo-predict-h100-cost)." in " ".join(text.split())


def test_no_prediction_no_guide_line_and_an_abstention_is_said() -> None:
    assert not [f for f in findings(_report(True, None), Display()) if f.rule]
    (unsure,) = [f for f in findings(_report(True, _prediction(None, False)), Display()) if f.rule]
    assert "do not decide" in unsure.text and "XLA stored it" in unsure.text


def _build(pages: list[str]) -> tuple[Build, Warnings]:
    warnings = Warnings()
    return Build(Settings({"jaxhlo_guide_pages": pages}), warnings, lambda batch: []), warnings


def test_a_disagreement_warns_on_the_guide_pages_only_unless_stated_as_a_limit() -> None:
    report = _report(True, _prediction(False))
    on_guide = parse_example(SOURCE, {"args": "f32[1024,1024]"}, docname="guide/predict", line=12)
    build, warnings = _build(["guide/"])
    assert guide_check(build, on_guide, report, "f") == "disagrees"
    ((message, subtype, location),) = warnings.items
    assert subtype == "predict" and location == ("guide/predict", 12)
    assert "jaxhlo-predict-h100-cost" in message and "XLA stored it" in message
    elsewhere = parse_example(SOURCE, {"args": "f32[1024,1024]"}, docname="reference/api", line=3)
    build, warnings = _build(["guide/"])
    assert guide_check(build, elsewhere, report, "f") == "disagrees" and not warnings.items
    marked = parse_example(SOURCE + "# jaxhlo: guide-limit f\n", {"args": "f32[1024,1024]"},
                           docname="guide/predict", line=12)
    build, warnings = _build(["guide/"])
    assert guide_check(build, marked, report, "f") == "limit" and not warnings.items
    # the comment names a target as the option does: a mark for the CPU leaves the H100's disagreement loud
    for names, stated in (("f@gpu:h100", True), ("f@cpu", False), ("g, f@gpu:h100", True)):
        commented = parse_example(SOURCE + f"# jaxhlo: guide-limit {names}\n", {"args": "f32[1024,1024]"},
                                  docname="guide/predict", line=12)
        build, warnings = _build(["guide/"])
        assert guide_check(build, commented, report, "f") == ("limit" if stated else "disagrees"), names
        assert bool(warnings.items) is not stated, names
    assert guide_check(build, on_guide, _report(False, _prediction(False)), "f") == "agrees"
    assert guide_check(build, on_guide, _report(True, None), "f") == ""


def test_a_stated_limit_that_no_longer_is_one_warns_on_the_guide_pages() -> None:
    """``:guide-limit: f@target`` where the rule now agrees, or leaves the answer to the compile: the
    page would state a limit that is gone, so the build says to remove the mark; a mark the rule
    still disagrees with, a page outside the guide and a blanket mark stay quiet."""
    marked = parse_example(SOURCE, {"args": "f32[1024,1024]", "guide-limit": "f@gpu:h100"},
                           docname="guide/predict", line=12)
    for report, now in ((_report(False, _prediction(False)), "agrees with XLA"),
                        (_report(True, _prediction(None, False)), "leaves it to the compile")):
        build, warnings = _build(["guide/"])
        guide_check(build, marked, report, "f")
        ((message, subtype, location),) = warnings.items
        assert subtype == "predict" and location == ("guide/predict", 12)
        assert f"now {now}: remove f@gpu:h100 from the mark" in message
    build, warnings = _build(["guide/"])
    assert guide_check(build, marked, _report(True, _prediction(False)), "f") == "limit" and not warnings.items
    elsewhere = parse_example(SOURCE, {"args": "f32[1024,1024]", "guide-limit": "f@gpu:h100"},
                              docname="reference/api", line=3)
    blanket = parse_example(SOURCE, {"args": "f32[1024,1024]", "guide-limit": ""}, docname="guide/predict", line=12)
    for example in (elsewhere, blanket):
        build, warnings = _build(["guide/"])
        guide_check(build, example, _report(False, _prediction(False)), "f")
        assert not warnings.items


def test_the_build_counts_agreement_and_how_many_answers_were_certain() -> None:
    records = [Record("d", 1, "f", "cpu", "ok", "snapshot", 0.0, None, guide=g)
               for g in ("agrees", "agrees (uncertain)", "disagrees", "limit (uncertain)", "compile it", "")]
    line = guide_line(records)
    assert line.startswith("The guide's rules and XLA: 2 of 4 answered reports agree (2 disagree, 1 of them")
    assert "2 of the 4 answers certain" in line
    assert "1 of 5 left to the compile (a stated limit of the rules" in line
    assert guide_line(records[-1:]) == ""


def test_an_uncertain_answer_reads_as_such_and_its_disagreement_is_still_plain() -> None:
    unsure = replace(_prediction(False, certain=False), right=273, measured=281)
    (agreeing,) = [f for f in findings(_report(False, unsure), Display()) if f.rule]
    assert "As the guide's rule expects, without certainty (right 273 of 281 measured), XLA fused" in agreeing.text
    (differing,) = [f for f in findings(_report(True, unsure), Display()) if f.rule]
    assert differing.title == "The guide disagrees"
    assert "expects, without certainty (right 273 of 281 measured), this table (float32[1024, 1024], 4.2 MB) " \
           "fused; XLA stored it: a case the guide does not cover" in differing.text
    on_guide = parse_example(SOURCE, {"args": "f32[1024,1024]"}, docname="guide/predict", line=12)
    build, warnings = _build(["guide/"])
    assert guide_check(build, on_guide, _report(True, unsure), "f") == "disagrees (uncertain)"
    assert len(warnings.items) == 1 and "without certainty" in warnings.items[0][0]
    assert guide_check(build, on_guide, _report(False, unsure), "f") == "agrees (uncertain)"
