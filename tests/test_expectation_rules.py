"""What each ``:expect-*:`` option promises, at its exact limits.

Each limit is checked on both sides of the boundary: a size expectation at
exactly its value, and one byte past it; ``fused`` with every reduction fused
and with one not; the four scopes of an item (``function@target``,
``function@*``, ``target``, bare) each winning over the less specific ones.
"""

from __future__ import annotations

import pytest

from sphinx_jaxhlo.core.expectations import (
    OPTIONS,
    Check,
    Expectation,
    Expectations,
    ExpectationSyntaxError,
    check,
    check_all,
    parse_condition,
    parse_count,
    parse_expectations,
)
from sphinx_jaxhlo.core.report import (
    Collective,
    CompileError,
    Fusion,
    Materialized,
    Memory,
    Reduction,
    Report,
    is_kernel,
)

LIMIT = 64 * 2**20  # 64MiB


def report(temp: int | None = None, peak: int | None = None, *, estimate: bool = False,
           reductions: list[Reduction] | None = None, materialized: list[Materialized] | None = None,
           error: CompileError | None = None, target: str = "cpu", function: str = "f") -> Report:
    return Report(function=function, target=target, memory=Memory(temp_bytes=temp, peak_bytes=peak,
                                                                  peak_is_estimate=estimate),
                  reductions=reductions or [], materialized=materialized or [], error=error)


def outcome(option: str, value: str, rep: Report) -> Check:
    (found,) = check_all(parse_expectations({option: value}), [rep])
    return found


# -- sizes at their limit ----------------------------------------------------------------


@pytest.mark.parametrize(("temp", "passed"), [(LIMIT - 1, True), (LIMIT, True), (LIMIT + 1, False), (0, True)])
def test_max_temp_holds_up_to_and_at_its_value(temp: int, passed: bool) -> None:
    assert outcome("expect-max-temp", "64MiB", report(temp=temp)).passed is passed


@pytest.mark.parametrize(("temp", "passed"), [(LIMIT - 1, False), (LIMIT, True), (LIMIT + 1, True)])
def test_min_temp_holds_at_and_above_its_value(temp: int, passed: bool) -> None:
    assert outcome("expect-min-temp", "64MiB", report(temp=temp)).passed is passed


@pytest.mark.parametrize(("peak", "passed"), [(LIMIT - 1, True), (LIMIT, True), (LIMIT + 1, False)])
def test_max_peak_holds_up_to_and_at_its_value(peak: int, passed: bool) -> None:
    assert outcome("expect-max-peak", "64MiB", report(temp=0, peak=peak)).passed is passed


def test_size_expectations_say_what_was_found() -> None:
    assert outcome("expect-max-temp", "1kB", report(temp=1234)).actual == "temp 1.2 kB (1,234 bytes)"
    assert outcome("expect-min-temp", "1kB", report(temp=5)).actual == "temp 5 B (5 bytes)"
    assert outcome("expect-max-peak", "1kB", report(peak=2000)).actual == "peak 2.0 kB (2,000 bytes)"
    assert outcome("expect-max-peak", "1kB", report(peak=2000, estimate=True)).actual == \
        "peak 2.0 kB (2,000 bytes) (estimate)"


@pytest.mark.parametrize("option", ["expect-max-temp", "expect-min-temp"])
def test_an_unreported_temp_fails(option: str) -> None:
    found = outcome(option, "0", report(temp=None))
    assert (found.passed, found.actual) == (False, "temp memory not reported")


def test_an_unreported_peak_fails() -> None:
    found = outcome("expect-max-peak", "100GB", report(temp=0, peak=None))
    assert (found.passed, found.actual) == (False, "peak memory not reported")


@pytest.mark.parametrize("option", ["expect-max-temp", "expect-min-temp", "expect-max-peak", "expect-reduction",
                                    "expect-materialized"])
def test_a_failed_compile_fails_every_other_expectation(option: str) -> None:
    value = {"expect-reduction": "fused", "expect-materialized": "none"}.get(option, "100GB")
    found = outcome(option, value, report(temp=0, peak=0, error=CompileError("INTERNAL", "boom")))
    assert (found.passed, found.actual) == (False, "compilation failed with INTERNAL")


# -- reductions ------------------------------------------------------------------------


def red(name: str, fused: bool, origin: str = "user") -> Reduction:
    return Reduction(name, "f", [], None if fused else f"{name}_in", 400, origin=origin)


@pytest.mark.parametrize(("reductions", "fused_holds", "unfused_holds"), [
    ([red("a", True)], True, False),
    ([red("a", False)], False, True),
    # "fused" means every one of the program's reductions is fused, not any
    ([red("a", True), red("b", False)], False, False),
    ([red("a", False), red("b", True)], False, False),
    ([red("a", True), red("b", True), red("c", True)], True, False),
    ([red("a", False), red("b", False)], False, True),
    # the compiler's own reductions (split-K, scans, second stages) are not the program's
    ([red("a", True), red("k", False, "dot"), red("s", False, "scan")], True, False),
    ([red("a", False), red("k", True, "second-stage")], False, True),
])  # fmt: skip
def test_reduction_verdicts_are_about_all_the_programs_reductions(
        reductions: list[Reduction], fused_holds: bool, unfused_holds: bool) -> None:
    assert outcome("expect-reduction", "fused", report(reductions=reductions)).passed is fused_holds
    assert outcome("expect-reduction", "unfused", report(reductions=reductions)).passed is unfused_holds
    assert outcome("expect-reduction", "FUSED", report(reductions=reductions)).passed is fused_holds


@pytest.mark.parametrize(("reductions", "actual"), [
    ([], "no reduction of the program's own"),
    ([red("k", True, "dot")], "no reduction of the program's own (1 made by the compiler, which get no verdict)"),
])
def test_no_reduction_of_the_programs_fails_either_way(reductions: list[Reduction], actual: str) -> None:
    for value in ("fused", "unfused"):
        found = outcome("expect-reduction", value, report(reductions=reductions))
        assert (found.passed, found.actual) == (False, actual)


@pytest.mark.parametrize(("reductions", "passed", "actual"), [
    ([], True, "none of the program's own"),
    ([red("k", False, "dot"), red("s", True, "scan")], True, "none of the program's own, 2 made by the compiler"),
    ([red("a", True)], False, "1 of the program's own"),
    ([red("a", True), red("k", False, "dot")], False, "1 of the program's own, 1 made by the compiler"),
])  # fmt: skip
def test_reduction_none_holds_without_any_of_the_programs(reductions: list[Reduction], passed: bool,
                                                          actual: str) -> None:
    for value in ("none", "None"):
        found = outcome("expect-reduction", value, report(reductions=reductions))
        assert (found.passed, found.actual) == (passed, actual)


def test_reduction_outcome_names_what_was_found() -> None:
    rs = [red("a", True), red("b", False), red("c", False), red("d", False), red("e", False), red("f", True)]
    found = outcome("expect-reduction", "fused", report(reductions=rs))
    assert found.actual == "2 fused (a, f); 4 unfused (b reads b_in, c reads c_in, d reads d_in)"
    rs = [red(n, True) for n in "pqrs"]
    assert outcome("expect-reduction", "unfused", report(reductions=rs)).actual == "4 fused (p, q, r)"


# -- materialized buffers ----------------------------------------------------------------

BUF = Materialized("b", "f32[50000,100000]", 20 * 10**9, "b", ["r"])


@pytest.mark.parametrize(("value", "buffers", "passed"), [
    ("none", [], True), ("None", [], True), ("none", [BUF], False),
    ("f32[50000,100000]", [BUF], True), ("f32[50000, 100000]", [BUF], True),
    ("f32[100000,50000]", [BUF], False), ("bf16[50000,100000]", [BUF], False), ("f32[50000,100000]", [], False),
])  # fmt: skip
def test_materialized_looks_for_that_exact_shape(value: str, buffers: list[Materialized], passed: bool) -> None:
    assert outcome("expect-materialized", value, report(materialized=buffers)).passed is passed


@pytest.mark.parametrize(("written", "hlo"), [("i32[3]", "s32[3]"), ("i64[3]", "s64[3]"), ("i16[3]", "s16[3]"),
                                              ("i8[3]", "s8[3]"), ("bool[3]", "pred[3]"), ("s32[3]", "s32[3]")])
def test_materialized_shapes_match_in_hlo_spelling(written: str, hlo: str) -> None:
    buffers = [Materialized("b", hlo, 12, "b", ["r"])]
    assert outcome("expect-materialized", written, report(materialized=buffers)).passed
    assert not outcome("expect-materialized", written.replace("[3]", "[4]"), report(materialized=buffers)).passed


def test_materialized_outcome_lists_what_was_found() -> None:
    buffers = [Materialized(f"b{i}", f"f32[{i}]", 4 * i, f"b{i}", ["r"]) for i in range(6, 0, -1)]
    assert outcome("expect-materialized", "f32[9]", report(materialized=buffers)).actual == \
        "materialized: f32[6], f32[5], f32[4], f32[3], f32[2] ..."
    assert outcome("expect-materialized", "f32[9]", report(materialized=buffers[:2])).actual == \
        "materialized: f32[6], f32[5]"
    assert outcome("expect-materialized", "f32[9]", report(materialized=buffers[:5])).actual == \
        "materialized: f32[6], f32[5], f32[4], f32[3], f32[2]"
    assert outcome("expect-materialized", "f32[9]", report()).actual == "materialized: none"
    assert outcome("expect-materialized", "none", report(materialized=buffers)).actual == \
        "6 buffers, largest f32[6] (24 B)"
    assert outcome("expect-materialized", "none", report()).actual == "none"


# -- errors ----------------------------------------------------------------------------

OOM = CompileError("RESOURCE_EXHAUSTED", "Used 18.65G of 15.75G hbm")


@pytest.mark.parametrize(("value", "error", "passed", "actual"), [
    ("RESOURCE_EXHAUSTED", OOM, True, "RESOURCE_EXHAUSTED"),
    ("resource_exhausted", OOM, True, "RESOURCE_EXHAUSTED"),
    ("of 15.75G", OOM, True, "RESOURCE_EXHAUSTED"),  # words of the message
    ("HBM", OOM, True, "RESOURCE_EXHAUSTED"),
    ("INVALID_ARGUMENT", OOM, False, "RESOURCE_EXHAUSTED"),
    ("RESOURCE_EXHAUSTED", None, False, "compilation succeeded"),
    ("none", None, True, "no error"),
    ("None", OOM, False, "RESOURCE_EXHAUSTED: Used 18.65G of 15.75G hbm"),
])  # fmt: skip
def test_expect_error(value: str, error: CompileError | None, passed: bool, actual: str) -> None:
    found = outcome("expect-error", value, report(error=error))
    assert (found.passed, found.actual) == (passed, actual)


def test_expect_error_none_is_not_expecting_an_error() -> None:
    e = parse_expectations({"expect-error": "none, tpu:v5e=RESOURCE_EXHAUSTED"})
    assert not e.expects_error("cpu")
    assert e.expects_error("tpu:v5e")


def test_the_error_message_is_cut_at_200_characters() -> None:
    long = CompileError("INTERNAL", "x" * 300)
    assert outcome("expect-error", "none", report(error=long)).actual == "INTERNAL: " + "x" * 200


# -- which item applies ----------------------------------------------------------------

ALL_SCOPES = "1kB, cpu=2kB, f@*=3kB, f@cpu=4kB"


@pytest.mark.parametrize(("function", "target", "value"), [
    ("f", "cpu", "4kB"),      # function@target
    ("f", "gpu:h100", "3kB"),  # function@*
    ("g", "cpu", "2kB"),      # target
    ("g", "gpu:h100", "1kB"),  # bare
])  # fmt: skip
def test_the_most_specific_item_applies(function: str, target: str, value: str) -> None:
    e = parse_expectations({"expect-max-temp": ALL_SCOPES})
    assert [x.value for x in e.for_target(target, function)] == [value]


@pytest.mark.parametrize(("text", "function", "target", "value"), [
    ("cpu=2kB, f@*=3kB", "f", "cpu", "3kB"),  # function@* outranks target
    ("f@*=3kB, cpu=2kB", "f", "cpu", "3kB"),
    ("1kB, cpu=2kB", "f", "cpu", "2kB"),       # target outranks bare
    ("cpu=2kB, 1kB", "f", "cpu", "2kB"),
    ("1kB, f@*=3kB", "f", "cpu", "3kB"),       # function@* outranks bare
    ("f@cpu=4kB, f@*=3kB", "f", "cpu", "4kB"),  # function@target outranks function@*
    ("f@cpu=4kB, cpu=2kB", "f", "cpu", "4kB"),
    ("f@cpu=4kB", "f", "gpu:h100", None),       # nothing applies
    ("g@*=3kB", "f", "cpu", None),
])  # fmt: skip
def test_scopes_outrank_each_other_whatever_the_order(text: str, function: str, target: str,
                                                      value: str | None) -> None:
    found = parse_expectations({"expect-max-temp": text}).for_target(target, function)
    assert [x.value for x in found] == ([] if value is None else [value])


def test_each_kind_picks_its_own_most_specific_item() -> None:
    e = parse_expectations({"expect-max-temp": "cpu=2kB", "expect-reduction": "fused, f@cpu=unfused",
                            "expect-error": "none"})
    found = e.for_target("cpu", "f")
    # in the order of OPTIONS, one item per kind
    assert [(x.kind, x.value) for x in found] == [("max-temp", "2kB"), ("reduction", "unfused"), ("error", "none")]
    assert [o.removeprefix("expect-") for o in OPTIONS].index("max-temp") == 0


def test_without_a_function_only_unscoped_items_apply() -> None:
    e = parse_expectations({"expect-max-temp": ALL_SCOPES})
    assert [x.value for x in e.for_target("cpu")] == ["2kB"]
    assert [x.value for x in e.for_target("tpu:v5e")] == ["1kB"]


def test_check_all_checks_each_report_against_its_own_items() -> None:
    e = parse_expectations({"expect-max-temp": "1kB, f@gpu:h100=3kB"})
    reports = [report(temp=1500, target="cpu"), report(temp=2500, target="gpu:h100"),
               report(temp=500, target="cpu", function="g")]
    assert [(o.function, o.target, o.expectation.value, o.passed) for o in check_all(e, reports)] == [
        ("f", "cpu", "1kB", False), ("f", "gpu:h100", "3kB", True), ("g", "cpu", "1kB", True)]


# -- parsing ---------------------------------------------------------------------------


def test_items_keep_what_the_author_wrote() -> None:
    e = parse_expectations({"expect-max-temp": " 1kB , CPU = 2kB, f @ TPU:v5e = 3kB, g@* = 4kB, h@=5kB"})
    assert [(x.function, x.target, x.value) for x in e.items] == [
        (None, None, "1kB"), (None, "cpu", "2kB"), ("f", "tpu:v5e", "3kB"), ("g", None, "4kB"), ("h", None, "5kB")]
    assert [x.scope for x in e.items] == ["", "cpu", "f@tpu:v5e", "g@*", "h@*"]
    assert e.targets_named() == {"cpu", "tpu:v5e"}
    assert e.functions_named() == {"f", "g", "h"}


def test_options_are_read_in_order_and_others_ignored() -> None:
    e = parse_expectations({"expect-error": "none", "expect-max-temp": "1kB", "show": "hlo"})
    assert [x.kind for x in e.items] == ["max-temp", "error"]
    assert parse_expectations({}).items == []


def test_outcome_message() -> None:
    found = outcome("expect-max-temp", "cpu=1kB", report(temp=5))
    assert found.message == "f on cpu: expected max temp 1kB, found temp 5 B (5 bytes) [holds]"
    found = outcome("expect-max-temp", "1kB", report(temp=5000))
    assert found.message == "f on cpu: expected max temp 1kB, found temp 5.0 kB (5,000 bytes) [FAILED]"


@pytest.mark.parametrize(("options", "message"), [
    ({"expect-max-temp": "1kB,"}, r"^:expect-max-temp: empty item in '1kB,'$"),
    ({"expect-max-temp": ""}, r"^:expect-max-temp: empty item in ''$"),
    ({"expect-max-temp": "=1kB"}, r"^:expect-max-temp: '=1kB': write target=value or function@target=value$"),
    ({"expect-max-temp": "cpu="}, r"^:expect-max-temp: 'cpu=': write target=value or function@target=value$"),
    ({"expect-max-temp": "1kB, 2kB"}, r"^:expect-max-temp: a bare value given twice$"),
    ({"expect-max-temp": "f@cpu=1kB, f@cpu=2kB"}, r"^:expect-max-temp: f@cpu given twice$"),
    ({"expect-max-temp": "f@*=1kB, f@=2kB"}, r"f@\* given twice"),
    ({"expect-max-temp": "1x@cpu=1kB"}, r"^:expect-max-temp: '1x@cpu=1kB': '1x' is not a function name$"),
    ({"expect-min-temp": "lots"}, r"^:expect-min-temp: 'lots' is not a size"),
    ({"expect-max-peak": "cpu=lots"}, r"^:expect-max-peak: 'lots' is not a size"),
    ({"expect-reduction": "maybe"}, r"^:expect-reduction: expected 'fused', 'unfused' or 'none', not 'maybe'$"),
    ({"expect-materialized": "f32[3"}, r"^:expect-materialized: 'f32\[3' is neither a shape such as "),
    ({"expect-error": "cpu= "}, r"write target=value"),
])  # fmt: skip
def test_malformed_items_name_the_option_and_the_problem(options: dict[str, str], message: str) -> None:
    with pytest.raises(ExpectationSyntaxError, match=message):
        parse_expectations(options)


@pytest.mark.parametrize(("option", "value"), [
    ("expect-reduction", "Unfused"), ("expect-materialized", "NONE"), ("expect-materialized", "s32[]"),
    ("expect-error", "OOM"), ("expect-min-temp", "0"),
])
def test_well_formed_values_are_accepted(option: str, value: str) -> None:
    (item,) = parse_expectations({option: value}).items
    assert (item.kind, item.value, item.target, item.function) == (option.removeprefix("expect-"), value, None, None)


def test_check_of_one_expectation() -> None:
    item = Expectation("max-temp", None, "10")
    found = check(item, report(temp=10))
    assert (found.passed, found.target, found.function, found.expectation) == (True, "cpu", "f", item)
    assert Expectations([item]).for_target("cpu") == [item]


def test_expectations_and_outcomes_are_values() -> None:
    import dataclasses

    item = Expectation("max-temp", "cpu", "1kB")
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.value = "2kB"  # type: ignore[misc]
    assert {item: 1}[Expectation("max-temp", "cpu", "1kB")] == 1
    found = check(item, report(temp=5))
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.passed = False  # type: ignore[misc]
    assert Expectations().items == [] and Expectations().for_target("cpu") == []
    assert Expectations().items is not Expectations().items  # each its own list


# -- :expect-collectives: ---------------------------------------------------------------------------

def collective(name: str, kind: str, nbytes: int, axes: list[str] | None = None, shape: str = "f32[8]") -> Collective:
    return Collective(name=name, kind=kind, shape=shape, operand_shape=shape, bytes=nbytes, axes=axes,
                      groups="1 group of 8 devices", is_async=False, overlapped=None)


def sharded(*collectives: Collective, devices: int = 8, temp: int = 500) -> Report:
    return Report(function="f", target="tpu:v5e-8", devices=devices, memory=Memory(temp_bytes=temp),
                  collectives=list(collectives))


@pytest.mark.parametrize(("text", "parsed"), [
    ("all-gather=0", ("all-gather", "=", 0, False)),
    ("all-gather==3", ("all-gather", "=", 3, False)),
    ("all-reduce<=2", ("all-reduce", "<=", 2, False)),
    ("reduce-scatter <= 64MiB", ("reduce-scatter", "<=", 64 * 2**20, True)),
    ("all-to-all>=1kB", ("all-to-all", ">=", 1000, True)),
    ("ragged-all-to-all<1", ("ragged-all-to-all", "<", 1, False)),
    ("collective-permute>2", ("collective-permute", ">", 2, False)),
    ("collective-broadcast=0B", ("collective-broadcast", "=", 0, True)),
    ("any=4", ("any", "=", 4, False)),
    (" none ", ("any", "=", 0, False)),
    ("NONE", ("any", "=", 0, False)),
])
def test_a_collective_condition_is_a_kind_a_comparison_and_a_count_or_a_size(text: str, parsed: tuple) -> None:
    assert parse_condition(text) == parsed


WRITE = "write KIND=N, KIND<=N or KIND<=SIZE (e.g. all-gather=0, all-reduce<=2, reduce-scatter<=64MiB), or none"


@pytest.mark.parametrize(("text", "message"), [
    ("all-gathers=0", "unknown collective 'all-gathers' (known: all-gather, all-reduce, reduce-scatter, all-to-all, "
                      "ragged-all-to-all, collective-permute, collective-broadcast, any)"),
    ("all-gather", WRITE),
    ("all-gather=lots", WRITE),
    ("tpu:v5e-8=all-gather=0", WRITE),  # a scope belongs to the item, not the condition
])
def test_a_bad_collective_condition_says_what_to_write(text: str, message: str) -> None:
    with pytest.raises(ExpectationSyntaxError) as info:
        parse_condition(text)
    assert str(info.value) == f"{text!r}: {message}"


def test_collective_items_carry_their_function_and_target() -> None:
    text = ("all-gather=2, GPU:H100X8=all-reduce<=1, f@tpu:v5e-8=all-to-all=0, g@*=any=0, tpu:v5e-4=none, "
            "h@=none, all-gather<=1MiB")
    items = [(e.function, e.target, e.value) for e in parse_expectations({"expect-collectives": text}).items]
    assert items == [(None, None, "all-gather=2"), (None, "gpu:h100x8", "all-reduce<=1"),
                     ("f", "tpu:v5e-8", "all-to-all=0"), ("g", None, "any=0"), (None, "tpu:v5e-4", "none"),
                     ("h", None, "none"), (None, None, "all-gather<=1MiB")]


@pytest.mark.parametrize(("text", "message"), [
    ("all-gather=0, all-gather=1", "the all-gather count of collectives for every target given twice"),
    ("cpu=all-reduce<=1kB, cpu=all-reduce>=1B", "the all-reduce bytes of collectives for cpu given twice"),
    ("f@cpu=none, f@cpu=any=1", "the any count of collectives for f@cpu given twice"),
    ("all-gather=0, , all-reduce=0", "empty item in 'all-gather=0, , all-reduce=0'"),
    ("1f@cpu=all-gather=0", "'1f@cpu=all-gather=0': '1f' is not a function name"),
])
def test_bad_collective_items(text: str, message: str) -> None:
    with pytest.raises(ExpectationSyntaxError) as info:
        parse_expectations({"expect-collectives": text})
    assert str(info.value) == f":expect-collectives: {message}"


def test_a_count_and_a_size_of_the_same_kind_are_two_conditions() -> None:
    items = parse_expectations({"expect-collectives": "all-gather=2, all-gather<=1MiB"}).items
    assert len(items) == 2


PAIR = (collective("ag.1", "all-gather", 100, ["data"]), collective("ag.2", "all-gather", 50, ["data", "model"]),
        collective("ar.1", "all-reduce", 10, []))


@pytest.mark.parametrize(("condition", "passed"), [
    ("all-gather=2", True), ("all-gather=1", False), ("all-gather=3", False),
    ("all-gather<=2", True), ("all-gather<=1", False),
    ("all-gather>=2", True), ("all-gather>=3", False),
    ("all-gather<3", True), ("all-gather<2", False),
    ("all-gather>1", True), ("all-gather>2", False),
    ("all-gather<=150B", True), ("all-gather<=149B", False), ("all-gather>=150B", True), ("all-gather>=151B", False),
    ("all-gather=150B", True), ("all-gather<150B", False), ("all-gather>149B", True),
    ("all-reduce=1", True), ("reduce-scatter=0", True), ("reduce-scatter=1", False),
    ("any=3", True), ("any=2", False), ("any<=160B", True), ("any<=159B", False), ("none", False),
])
def test_collectives_are_counted_or_summed_per_kind_at_the_limit(condition: str, passed: bool) -> None:
    assert outcome("expect-collectives", condition, sharded(*PAIR)).passed is passed


def test_a_collective_outcome_lists_what_was_found() -> None:
    assert outcome("expect-collectives", "all-gather=2", sharded(*PAIR)).message == (
        "f on tpu:v5e-8: expected collectives all-gather=2, found 2 all-gathers, 150 B per device "
        "(ag.1 f32[8] over data, ag.2 f32[8] over data+model) [holds]")
    assert outcome("expect-collectives", "all-reduce<=1kB", sharded(*PAIR)).actual == (
        "1 all-reduce, 10 B (10 bytes) per device (ar.1 f32[8])")
    none = outcome("expect-collectives", "none", sharded())
    assert none.passed and none.actual == "0 collectives"
    three = sharded(*(collective(f"cp.{i}", "collective-permute", 1, ["data"]) for i in range(3)))
    assert outcome("expect-collectives", "none", three).actual == (
        "3 collectives, 3 B per device (cp.0 f32[8] over data, cp.1 f32[8] over data, cp.2 f32[8] over data)")
    many = sharded(*(collective(f"cp.{i}", "collective-permute", 1, ["data"]) for i in range(4)))
    assert outcome("expect-collectives", "none", many).actual == (
        "4 collectives, 4 B per device (cp.0 f32[8] over data, cp.1 f32[8] over data, "
        "cp.2 f32[8] over data, ...)")


def test_a_failed_compile_fails_a_collective_condition() -> None:
    rep = sharded(*PAIR)
    rep.error = CompileError(status="RESOURCE_EXHAUSTED", message="too big")
    found = outcome("expect-collectives", "none", rep)
    assert not found.passed and found.actual == "compilation failed with RESOURCE_EXHAUSTED"


@pytest.mark.parametrize(("devices", "suffix"), [(1, ""), (2, " per device"), (8, " per device")])
def test_memory_on_several_devices_is_said_per_device(devices: int, suffix: str) -> None:
    found = outcome("expect-max-temp", "1kB", sharded(devices=devices))
    assert found.passed and found.actual == f"temp 500 B (500 bytes){suffix}"
    rep = sharded(devices=devices)
    rep.memory.peak_bytes = 700
    assert outcome("expect-max-peak", "1kB", rep).actual == f"peak 700 B (700 bytes){suffix}"


# -- kernels -------------------------------------------------------------------------------------


def kernel(name: str, kind: str, nbytes: int = 4, custom: str | None = None) -> Fusion:
    return Fusion(name=name, kind=kind, custom_kind=custom, ops=[kind], shape="f32[]", bytes=nbytes)


def with_kernels(*fusions: Fusion, target: str = "cpu") -> Report:
    return Report(function="f", target=target, fusions=list(fusions))


@pytest.mark.parametrize(("fusion", "counts"), [
    # every fusion kind is a kernel
    (kernel("loop_fusion", "Loop"), True), (kernel("input_fusion", "Input"), True),
    (kernel("fusion", "Output"), True), (kernel("gemm_fusion", "Custom", custom="__triton_gemm"), True),
    # an instruction left unfused that computes: a TPU's scalar add, a CPU's dot, a sort, a copy, a cuBLAS call
    (kernel("add.1", "add"), True), (kernel("dot.2", "dot"), True), (kernel("sort", "sort"), True),
    (kernel("copy.3", "copy"), True), (kernel("cublas", "custom-call", custom="__cublas$gemm"), True),
    # control flow: its bodies' kernels count, not the loop
    (kernel("while.1", "while"), False), (kernel("conditional", "conditional"), False),
    (kernel("call", "call"), False), (kernel("async-start", "async-start"), False),
    (kernel("async-done", "async-done"), False),
    # moves the DMA engines do, buffers joined or reserved
    (kernel("copy-start", "copy-start"), False), (kernel("copy-done", "copy-done"), False),
    (kernel("slice-start", "slice-start"), False), (kernel("slice-done", "slice-done"), False),
    (kernel("cc", "custom-call", custom="ConcatBitcast"), False),
    (kernel("alloc", "custom-call", custom="AllocateBuffer"), False),
    (kernel("pid", "partition-id"), False),
    # communication is counted apart
    (kernel("ag", "all-gather"), False), (kernel("ars", "all-reduce-start"), False),
    (kernel("ard", "all-reduce-done"), False), (kernel("rs", "reduce-scatter"), False),
    (kernel("cp", "collective-permute-start"), False), (kernel("a2a", "all-to-all"), False),
])  # fmt: skip
def test_what_counts_as_a_kernel(fusion: Fusion, counts: bool) -> None:
    assert is_kernel(fusion) is counts
    assert with_kernels(fusion).kernels == int(counts)


@pytest.mark.parametrize(("text", "parsed"), [
    ("1", ("=", 1)), ("=1", ("=", 1)), ("==1", ("=", 1)), ("<=3", ("<=", 3)), (">=2", (">=", 2)),
    ("<4", ("<", 4)), (">1", (">", 1)), (" <= 3 ", ("<=", 3)), ("0", ("=", 0)),
])  # fmt: skip
def test_a_kernel_count_is_a_comparison_and_a_number(text: str, parsed: tuple[str, int]) -> None:
    assert parse_count(text) == parsed


@pytest.mark.parametrize("text", ["", "x", "1.5", "-1", "<=", "=>3", "1 kernel", "1MiB"])
def test_a_bad_kernel_count_says_what_to_write(text: str) -> None:
    with pytest.raises(ExpectationSyntaxError, match=r"write a count, N or OP N \(1, <=3, >=2, <4, >1\)$"):
        parse_count(text)


def test_kernel_counts_are_scoped_like_the_other_expectations() -> None:
    text = "1, CPU=2, gpu:h100=<=3, tpu:v5e<=2, f@tpu:v5e-8>=1, g@*=0, h@cpu = <4"
    items = parse_expectations({"expect-kernels": text}).items
    assert [(e.function, e.target, e.value) for e in items] == [
        (None, None, "1"), (None, "cpu", "2"), (None, "gpu:h100", "<=3"), (None, "tpu:v5e", "<=2"),
        ("f", "tpu:v5e-8", ">=1"), ("g", None, "0"), ("h", "cpu", "<4")]
    assert [(e.target, e.value) for e in parse_expectations({"expect-kernels": "<=3"}).items] == [(None, "<=3")]
    assert [(e.target, e.value) for e in parse_expectations({"expect-kernels": "=2"}).items] == [(None, "=2")]


@pytest.mark.parametrize(("text", "message"), [
    ("lots", r"^:expect-kernels: 'lots': write a count"),
    ("cpu=many", r"^:expect-kernels: 'many': write a count"),
    ("cpu=1, cpu<=2", r"^:expect-kernels: cpu given twice$"),
    ("1, <=2", r"^:expect-kernels: a bare value given twice$"),
    ("1,", r"^:expect-kernels: empty item in '1,'$"),
])  # fmt: skip
def test_bad_kernel_expectations(text: str, message: str) -> None:
    with pytest.raises(ExpectationSyntaxError, match=message):
        parse_expectations({"expect-kernels": text})


TWO = (kernel("fusion.1", "Loop", 400), kernel("add.2", "add", 4), kernel("while", "while"),
       kernel("copy-start", "copy-start"))


@pytest.mark.parametrize(("value", "passed"), [
    ("2", True), ("1", False), ("3", False), ("=2", True), ("==2", True),
    ("<=2", True), ("<=1", False), (">=2", True), (">=3", False),
    ("<3", True), ("<2", False), (">1", True), (">2", False),
])  # fmt: skip
def test_kernel_counts_at_their_limits(value: str, passed: bool) -> None:
    assert outcome("expect-kernels", value, with_kernels(*TWO)).passed is passed


def test_kernel_outcome_names_the_kernels_largest_first() -> None:
    found = outcome("expect-kernels", "1", with_kernels(*TWO))
    assert found.message == ("f on cpu: expected kernels 1, found 2 kernels (fusion.1 (Loop), add.2 (add)) "
                             "[FAILED]")
    many = [kernel(f"k{i}", "Loop", 100 - i) for i in range(5)]
    assert outcome("expect-kernels", "<=5", with_kernels(*many)).actual == \
        "5 kernels (k0 (Loop), k1 (Loop), k2 (Loop), ...)"
    assert outcome("expect-kernels", "0", with_kernels()).actual == "0 kernels"
    one = outcome("expect-kernels", "1", with_kernels(kernel("f.1", "Loop")))
    assert one.passed and one.actual == "1 kernel (f.1 (Loop))"
    failed = Report(function="f", target="cpu", error=CompileError("RESOURCE_EXHAUSTED", "no"))
    assert not outcome("expect-kernels", "1", failed).passed
