"""The option-value parsing shared by the directive, the API and the command line."""

from __future__ import annotations

from typing import Any

import pytest

from sphinx_jaxhlo.core.view_options import parse_assignments, parse_findings, split_top_level


def test_split_top_level_keeps_commas_inside_brackets() -> None:
    assert split_top_level("a=1, b=(1, 2), c=[3, {4: 5}]") == ["a=1", " b=(1, 2)", " c=[3, {4: 5}]"]


def test_split_top_level_edges() -> None:
    assert split_top_level("") == [""]
    assert split_top_level("a,,b,") == ["a", "", "b", ""]
    # An unmatched closing bracket leaves the rest of the text in one part.
    assert split_top_level("a), b") == ["a), b"]


def test_parse_assignments() -> None:
    assert parse_assignments(" a = 1 , b=(1, 2),, c= ", "static") == [("a", "1"), ("b", "(1, 2)"), ("c", "")]
    assert parse_assignments("", "static") == []
    assert parse_assignments("x=a=b", "static") == [("x", "a=b")]


@pytest.mark.parametrize("text", ["a", " 1x=2 ", "=3", "a b=1"])
def test_parse_assignments_rejects_non_assignments(text: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_assignments(f"ok=1, {text}", ":static")
    assert str(info.value) == f":static: {text.strip()!r} is not name=value"


@pytest.mark.parametrize(("value", "kinds"), [
    ("all", ("memory", "reductions", "communication", "peak")),
    (" ALL ", ("memory", "reductions", "communication", "peak")),
    ("peak, memory", ("memory", "peak")),
    ("none", ()),
    ("memory", ("memory",)),
    ("reductions, memory", ("memory", "reductions")),  # in their fixed order
    (["communication", "memory"], ("memory", "communication")),
    ("memory,,memory", ("memory",)),
])  # fmt: skip
def test_parse_findings(value: object, kinds: tuple[str, ...]) -> None:
    assert parse_findings(value) == kinds


@pytest.mark.parametrize(("value", "message"), [
    ("", "no kind of finding given (any of memory, reductions, communication, peak, or all, or none)"),
    ("memroy", "unknown kind of finding 'memroy' (known: memory, reductions, communication, peak, or all, or none)"),
    ("all, memory", "'all' stands alone (or name kinds: memory, reductions, communication, peak)"),
    ("memory, none", "'none' stands alone (or name kinds: memory, reductions, communication, peak)"),
])  # fmt: skip
def test_parse_findings_rejects(value: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_findings(value)
    assert str(info.value) == message


@pytest.mark.parametrize("bad", [[True], True, 3.5, [], ["hkl", 2.0]], ids=repr)
def test_grad_takes_names_or_positions_and_echoes_what_was_given(bad: object) -> None:
    from sphinx_jaxhlo import analyze, analyze_source
    from sphinx_jaxhlo.core.example import OptionProblem

    source = "def f(x):\n    return (x * x).sum()\n"
    message = f"grad: {bad!r} is not an argument name or position, nor a list of them: give grad='hkl', grad=1 or " \
              "grad=['pos', 'hkl']"
    with pytest.raises(OptionProblem) as info:
        analyze_source(source, "f", "f32[4]", targets="cpu", grad=bad)  # type: ignore[arg-type]
    assert info.value.message == message and info.value.subtype == "grad"

    def f(x: object) -> object:
        return x

    with pytest.raises(OptionProblem) as info:
        analyze(f, "f32[4]", targets="cpu", grad=bad)  # type: ignore[arg-type]
    assert info.value.message == message


def test_one_timeout_rule_in_every_front(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a number, the API compiles within the directive's limits (the target's, with a
    retry on a fresh worker); with one, that number, no retry."""
    from sphinx_jaxhlo.api import functions
    from sphinx_jaxhlo.compiler.client import Limits, Outcome
    from sphinx_jaxhlo.core.report import TargetFailure
    from sphinx_jaxhlo.core.targets import TARGETS

    seen: list[tuple[str, Limits]] = []

    class Worker:
        def compile_within(self, request: Any, limits: Limits, label: str = "") -> Outcome:
            target = str(request.target)
            seen.append((target, limits))
            return Outcome(None, TargetFailure(target, "f", "timeout", "stopped"), 0.0)

    monkeypatch.setattr(functions, "_get_worker", lambda path: Worker())
    directive = Limits.fitting(TARGETS["cpu"], None)
    assert directive.retry is not None  # the directive's rule: a limit per target, and a retry

    def f(x: object) -> object:
        return x

    source = "def f(x):\n    return x\n"
    for call in (lambda **k: functions.analyze(f, "f32[4]", targets="cpu", **k),
                 lambda **k: functions.analyze_source(source, "f", "f32[4]", targets="cpu", cache_dir=None, **k)):
        seen.clear()
        with pytest.raises(functions.AnalysisError):
            call()
        assert seen == [("cpu", directive)]
        seen.clear()
        with pytest.raises(functions.AnalysisError):
            call(timeout=30)
        assert seen == [("cpu", Limits(30.0))]
    with pytest.raises(ValueError, match=r"^timeout: -5 is not a positive number of seconds$"):
        functions.analyze(f, "f32[4]", targets="cpu", timeout=-5)


def test_each_front_takes_the_options_declared_for_it() -> None:
    """One declaration per option (sphinx_jaxhlo.core.options): the directive's option spec, the
    command line's flags, the API's keywords and the reference page follow it."""
    import inspect
    import re
    from pathlib import Path

    from sphinx_jaxhlo.api.functions import analyze_source
    from sphinx_jaxhlo.api.results import claim_options
    from sphinx_jaxhlo.cli import build_parser
    from sphinx_jaxhlo.core import options
    from sphinx_jaxhlo.core.expectations import OPTIONS as CLAIMS
    from sphinx_jaxhlo.core.expectations import claim_keyword
    from sphinx_jaxhlo.core.view_options import VIEW_OPTIONS
    from sphinx_jaxhlo.sphinxext import directive

    names = [o.name for o in options.OPTIONS]
    assert len(names) == len(set(names)) and set(CLAIMS) | set(VIEW_OPTIONS) <= set(names)
    assert list(directive.JaxHloDirective.option_spec) == [o.name for o in options.for_front("directive")]
    # the command line: a flag per option it takes (the function: FILE.py:FUNCTION), none for the others
    flags = set(build_parser("prog")._option_string_actions)
    for option in options.OPTIONS:
        has_flag = f"--{option.name}" in flags
        assert has_flag == ("cli" in option.fronts and option.name != "function"), option.name
    # the API: analyze_source's keywords, and check()'s for a claim
    keywords = set(inspect.signature(analyze_source).parameters)
    for option in options.OPTIONS:
        if option.is_claim:
            assert claim_options({option.keyword: "1"}) == {option.name: "1"}
            assert claim_keyword(option.name) == options.spelled(option.name, "api")
        else:
            assert (option.keyword in keywords) == ("api" in option.fronts), option.name
    # the reference page and the directive's own docstring name every option the directive takes
    root = Path(__file__).resolve().parent.parent
    page = (root / "docs" / "reference" / "directive.md").read_text(encoding="utf-8")
    terms = set(re.findall(r"^`:([a-z-]+):`", page, re.M)) | set(re.findall(r"^`:[a-z-]+:`, `:([a-z-]+):`", page,
                                                                              re.M))
    terms |= set(re.findall(r"^`:[a-z-]+:`, `:[a-z-]+:`, `:([a-z-]+):`", page, re.M))
    assert terms >= {o.name for o in options.for_front("directive")}, \
        {o.name for o in options.for_front("directive")} - terms
    assert all(f"``:{o.name}:``" in (directive.__doc__ or "") for o in options.for_front("directive"))


@pytest.mark.parametrize(("front", "expected"), [("directive", ":expect-max-device:"),
                                                  ("cli", "--expect-max-device"), ("api", "max_device=")])
def test_a_claim_is_named_in_its_fronts_spelling(front: str, expected: str) -> None:
    from sphinx_jaxhlo.core import options
    from sphinx_jaxhlo.core.expectations import ExpectationSyntaxError, parse_expectations

    assert options.spelled("expect-max-device", front) == expected
    with pytest.raises(ExpectationSyntaxError) as info:
        parse_expectations({"expect-max-device": "-5MB"})
    assert info.value.spelled(lambda name: options.spelled(name, front)) == \
        f"{expected} '-5MB' is not a size: write a number with an optional unit (B, kB, MB, GB, TB, KiB, MiB, " \
        "GiB, TiB), e.g. 64MiB or 10GB"


def test_every_declared_parser_is_a_function_of_the_package() -> None:
    """The parser an option's declaration names is where its value is checked: it must exist (a module
    moved without its declaration would leave the reference pointing nowhere)."""
    import importlib

    from sphinx_jaxhlo.core import options

    for option in options.OPTIONS:
        if option.parser:
            module, _, name = option.parser.rpartition(".")
            assert callable(getattr(importlib.import_module(f"sphinx_jaxhlo.{module}"), name)), option.parser


def test_each_claim_kind_is_one_entry_that_every_front_takes() -> None:
    """A claim kind is declared once (core.expectations.CLAIMS): the directive's option, the command
    line's flag with its value and help, check()'s keyword and the option table come from it."""
    from sphinx_jaxhlo.api.results import claim_options
    from sphinx_jaxhlo.cli import build_parser
    from sphinx_jaxhlo.core import options
    from sphinx_jaxhlo.core.expectations import CLAIMS, OPTIONS, SWEEP_KINDS, ExpectationSyntaxError, parse_expectations
    from sphinx_jaxhlo.sphinxext import directive

    flags = {a.option_strings[0]: a for a in build_parser("prog")._actions if a.option_strings}
    assert tuple(f"expect-{claim.name}" for claim in CLAIMS) == OPTIONS
    assert SWEEP_KINDS == ("flip",)
    for claim in CLAIMS:
        declared = options.by_name(claim.option)
        assert (declared.value, declared.help, declared.fronts) == (claim.value, claim.help, options.FRONTS)
        assert declared.parser.endswith(f".{claim.parse.__name__}")
        assert claim.option in directive.JaxHloDirective.option_spec
        flag = flags[f"--{claim.option}"]
        assert (flag.metavar, flag.help) == (claim.value, claim.help)
        assert claim_options({claim.keyword: "1"}) == {claim.option: "1"}
        # an empty item is refused the same way for every kind, named as the front writes the claim
        with pytest.raises(ExpectationSyntaxError) as info:
            parse_expectations({claim.option: "cpu=1, "})
        assert info.value.option == claim.option
        assert info.value.spelled(lambda name: options.spelled(name, "cli")).startswith(f"--{claim.option} ")


def test_the_settings_an_option_overrides_come_from_the_option_table() -> None:
    """Which ``jaxhlo_*`` setting an option overrides is said once, in the option table: each names
    a real setting, each setting whose help says an option overrides it is that option's, and a
    view setting is checked by its option's parser (a bad ``jaxhlo_table_rows`` is refused in the
    words a bad ``:rows:`` is)."""
    import re

    from sphinx_jaxhlo.core import options
    from sphinx_jaxhlo.core.settings import BY_NAME, SETTINGS
    from sphinx_jaxhlo.core.view_options import VIEW_OPTIONS

    for option in options.OPTIONS:
        if option.setting:
            assert option.setting in BY_NAME, option.name
            assert BY_NAME[option.setting].option == option.name
    for setting in SETTINGS:
        said = re.findall(r"``:([a-z-]+):`` overrides it|unless it says ``:([a-z-]+):``", setting.help)
        assert [a or b for a, b in said] == ([setting.option] if setting.option else []), setting.name
    for name, parser in VIEW_OPTIONS.items():
        setting = BY_NAME[options.by_name(name).setting]
        assert options.by_name(name).parser.endswith(f".{parser.__name__}")
        bad = "nonsense" if isinstance("nonsense", setting.types) else -1  # of the setting's type
        with pytest.raises(ValueError) as info:
            parser(bad)
        assert setting.problem(bad) == f"{setting.name}: {info.value}"
