from __future__ import annotations

import pytest

from sphinx_jaxhlo.core.expectations import ExpectationSyntaxError, check_all, parse_expectations
from sphinx_jaxhlo.core.report import CompileError, Materialized, Memory, Reduction, Report
from sphinx_jaxhlo.core.sizes import format_bytes, parse_size


@pytest.mark.parametrize(("text", "expected"), [
    ("64MiB", 64 * 2**20), ("10GB", 10**10), ("0", 0), ("1.5 gb", 1_500_000_000), ("512", 512), ("2KiB", 2048)])
def test_sizes_in_decimal_and_binary_units(text: str, expected: int) -> None:
    assert parse_size(text) == expected


def test_bad_size_names_the_units() -> None:
    with pytest.raises(ValueError, match="MiB"):
        parse_size("lots")


def test_format_bytes() -> None:
    assert format_bytes(20_000_000_000) == "20.0 GB"
    assert format_bytes(None) == "not reported"


def seed_report(target: str = "cpu", temp: int = 20_000_000_000, fused: bool = False) -> Report:
    return Report(
        function="with_dot", target=target, memory=Memory(temp_bytes=temp),
        materialized=[] if fused else [
            Materialized("fusion.1", "f32[50000,100000]", 20_000_000_000, "fusion.1", ["r"])],
        reductions=[Reduction("reduce.1", "r", ["cosine"], None if fused else "fusion.1", 20_000_000_000)])


def test_per_target_values_override_the_bare_one() -> None:
    e = parse_expectations({"expect-max-temp": "25GB, tpu:v5e=0"})
    outcomes = check_all(e, [seed_report("cpu"), seed_report("tpu:v5e", temp=0, fused=True)])
    assert [(o.target, o.expectation.value, o.passed) for o in outcomes] == [
        ("cpu", "25GB", True), ("tpu:v5e", "0", True)]


def test_failed_expectations_say_what_was_found() -> None:
    e = parse_expectations({"expect-max-temp": "64MiB", "expect-reduction": "fused", "expect-materialized": "none"})
    outcomes = check_all(e, [seed_report()])
    assert not any(o.passed for o in outcomes)
    text = " | ".join(o.message for o in outcomes)
    assert "temp 20.0 GB (20,000,000,000 bytes)" in text
    assert "reduce.1 reads fusion.1" in text
    assert "f32[50000,100000]" in text


def test_materialized_shape_matches_hlo_spelling() -> None:
    e = parse_expectations({"expect-materialized": "f32[50000, 100000]"})
    assert check_all(e, [seed_report()])[0].passed


def test_expected_error_is_a_result() -> None:
    e = parse_expectations({"expect-error": "tpu:v5e=RESOURCE_EXHAUSTED"})
    rep = Report(function="f", target="tpu:v5e", error=CompileError("RESOURCE_EXHAUSTED", "Used 18.65G of 15.75G hbm"))
    assert e.expects_error("tpu:v5e") and not e.expects_error("cpu")
    assert check_all(e, [rep])[0].passed
    assert not check_all(e, [seed_report("tpu:v5e")])[0].passed


@pytest.mark.parametrize(("options", "message"), [
    ({"expect-max-temp": "lots"}, "not a size"),
    ({"expect-reduction": "sometimes"}, "fused"),
    ({"expect-materialized": "f32[3"}, "neither a shape"),
    ({"expect-max-temp": "cpu=1GB, cpu=2GB"}, "given twice"),
    ({"expect-max-temp": "cpu="}, "target=value"),
])
def test_malformed_expectations(options: dict[str, str], message: str) -> None:
    with pytest.raises(ExpectationSyntaxError, match=message):
        parse_expectations(options)


def test_function_scoped_items_are_the_most_specific() -> None:
    e = parse_expectations({"expect-max-temp": "25GB, explicit@gpu:h100=100MB, with_dot@*=30GB"})
    assert [x.value for x in e.for_target("gpu:h100", "explicit")] == ["100MB"]
    assert [x.value for x in e.for_target("gpu:h100", "with_dot")] == ["30GB"]
    assert [x.value for x in e.for_target("cpu", "explicit")] == ["25GB"]
    assert e.functions_named() == {"explicit", "with_dot"}
    with pytest.raises(ExpectationSyntaxError, match="not a function name"):
        parse_expectations({"expect-max-temp": "a b@cpu=1GB"})


def test_max_peak() -> None:
    e = parse_expectations({"expect-max-peak": "50MB"})
    rep = Report(function="f", target="tpu:v5e", memory=Memory(temp_bytes=0, peak_bytes=45_500_000))
    assert check_all(e, [rep])[0].passed
    rep.memory.peak_bytes = 60_000_000
    outcome = check_all(e, [rep])[0]
    assert not outcome.passed and "peak 60.0 MB" in outcome.message


def _reduction(name: str, origin: str, read: str | None = None) -> Reduction:
    return Reduction(name, "f", [], read, 4096, "f32[1024]", origin=origin)


def test_reduction_expectations_are_about_the_programs_own_reductions() -> None:
    """A split-K stage that reads the GEMM's partial products, a prefix-scan
    stage or a second stage is the compiler's: it neither breaks ``fused``
    nor counts as a reduction for ``none``."""
    made = [_reduction("splitk", "dot", "gemm"), _reduction("scan", "scan", "stage"),
            _reduction("second", "second-stage")]
    report = Report("f", "gpu:h100", reductions=[_reduction("mine", "user"), *made])
    [fused] = check_all(parse_expectations({"expect-reduction": "fused"}), [report])
    assert fused.passed, fused.actual
    [none] = check_all(parse_expectations({"expect-reduction": "none"}), [report])
    assert not none.passed and none.actual == "1 of the program's own, 3 made by the compiler"

    only_compiler = Report("f", "gpu:h100", reductions=made)
    [none] = check_all(parse_expectations({"expect-reduction": "none"}), [only_compiler])
    assert none.passed and none.actual == "none of the program's own, 3 made by the compiler"
    for word in ("fused", "unfused"):
        [outcome] = check_all(parse_expectations({"expect-reduction": word}), [only_compiler])
        assert not outcome.passed
        assert outcome.actual == "no reduction of the program's own (3 made by the compiler, which get no verdict)"


def test_expect_reduction_rejects_other_words() -> None:
    with pytest.raises(ExpectationSyntaxError, match="'fused', 'unfused' or 'none'"):
        parse_expectations({"expect-reduction": "partly"})


def test_a_malformed_claim_is_named_in_each_fronts_spelling() -> None:
    from sphinx_jaxhlo.core.expectations import ExpectationSyntaxError, claim_keyword, parse_expectations

    with pytest.raises(ExpectationSyntaxError) as info:
        parse_expectations({"expect-max-device": "-5MB"})
    error = info.value
    assert str(error).startswith(":expect-max-device: '-5MB' is not a size")
    assert error.spelled(lambda option: f"--{option}").startswith("--expect-max-device '-5MB' is not a size")
    assert error.spelled(claim_keyword).startswith("max_device= '-5MB' is not a size")
    with pytest.raises(ExpectationSyntaxError) as info:
        parse_expectations({"expect-peak-top": "on line"}, spell=claim_keyword)
    assert str(info.value).startswith("peak_top= 'on line': write the operation")
