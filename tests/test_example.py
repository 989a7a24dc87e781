"""The example value and the settings value: one parse, one set of checks, for every front."""

from __future__ import annotations

import pickle

import pytest

from sphinx_jaxhlo.core.example import (
    COMMAND_LINE,
    DIRECTIVE,
    PYTHON,
    Example,
    OptionProblem,
    parse_example,
)
from sphinx_jaxhlo.core.settings import BY_NAME, SETTINGS, Settings
from sphinx_jaxhlo.core.specs import parse_args, parse_mesh
from sphinx_jaxhlo.pipeline.build import Build, Warnings
from sphinx_jaxhlo.pipeline.forecast import forecast
from sphinx_jaxhlo.pipeline.plan import plan, resolve_targets, shown_parts

SOURCE = "import jax.numpy as jnp\n\ndef f(x, n):\n    return jnp.sum(x) * n\n"


def test_the_directive_options_become_one_value() -> None:
    example = parse_example(SOURCE, {
        "args": "f32[8,4]", "function": "f", "static": "n=3", "xla-flags": "xla_a=1, xla_b=",
        "donate": "x", "targets": "cpu, gpu:h100", "show": "summary, hlo", "timeout": "30",
        "expect-max-temp": "cpu=1MiB", "rows": "all", "caption": "Sum", "name": "My  Sum"},
        docname="guide/x", line=12, ordinal=2)
    assert example.functions == ("f",) and example.specs == parse_args("f32[8,4]")
    assert example.static == (("n", "3"),) and example.xla_flags == (("xla_a", "1"), ("xla_b", ""))
    assert example.donate == ("x",) and example.targets == ("cpu", "gpu:h100")
    assert example.show == ("summary", "hlo") and example.timeout == 30.0
    assert [(e.kind, e.target, e.value) for e in example.expectations] == [("max-temp", "cpu", "1MiB")]
    assert example.view_options() == {"rows": None}
    assert example.caption == "Sum" and example.name == "my sum" and example.slot_name == "my sum"
    assert example.location == ("guide/x", 12)
    # the value travels with the doctree (pickled) and compares by value
    assert pickle.loads(pickle.dumps(example)) == example


def test_an_example_without_options_asks_for_the_defaults() -> None:
    example = parse_example(SOURCE, {}, ordinal=3)
    assert example.functions == ("",) and example.targets is None and example.show is None
    assert example.timeout is None and example.slot_name == "example-3"


@pytest.mark.parametrize(("options", "subtype", "text"), [
    ({"static": "n=range"}, "option", "static{sep} n=range is not a Python literal"),
    ({"static": "oops"}, "option", "static{sep} 'oops' is not name=value"),
    ({"donate": "x-y"}, "option", "donate{sep} 'x-y' is neither an argument name nor a position"),
    ({"show": "everything"}, "option", "show{sep} unknown part 'everything'"),
    ({"timeout": "-1"}, "option", "timeout{sep} '-1' is not a positive number of seconds"),
    ({"args": "f99[3]"}, "args", "args{sep} "),
    ({"mesh": "data"}, "args", "mesh{sep} "),
    ({"rows": "many"}, "option", "rows{sep} "),
])
def test_every_front_gets_the_same_message_in_its_own_spelling(options: dict[str, str], subtype: str,
                                                                 text: str) -> None:
    for spell, prefix in ((DIRECTIVE, ":"), (COMMAND_LINE, "--"), (PYTHON, "")):
        with pytest.raises(OptionProblem) as info:
            parse_example(SOURCE, options, spell=spell)
        name = text.split("{sep}")[0]
        expected = prefix + (name.replace("-", "_") if spell is PYTHON else name) + ":" + text.split("{sep}", 1)[1]
        assert info.value.subtype == subtype
        assert info.value.message.startswith(expected), (spell, info.value.message)


def test_the_api_may_pass_python_values() -> None:
    example = parse_example(SOURCE, {"args": parse_args("f32[3]"), "static": {"n": 2}, "xla-flags": {"xla_a": True},
                                     "donate": ["x"], "mesh": {"data": 2}, "timeout": 5}, spell=PYTHON)
    assert example.static == (("n", "2"),) and example.xla_flags == (("xla_a", "true"),)
    assert example.donate == ("x",) and example.mesh == parse_mesh("data=2") and example.timeout == 5.0
    with pytest.raises(OptionProblem, match="static: values must be Python literals"):
        parse_example(SOURCE, {"static": {"n": object()}}, spell=PYTHON)


def test_a_chunk_option_adds_its_variants_once() -> None:
    example = parse_example(SOURCE, {"args": "f32[8,4], n=f32[]", "chunk": "x=2"})
    chunked = example.with_chunk_variants()
    assert chunked.functions == ("f", "f_chunked") and "def f_chunked" in chunked.source
    assert chunked.chunk_check("f_chunked") and not chunked.chunk_check("f")
    assert chunked.with_chunk_variants() == chunked
    with pytest.raises(OptionProblem) as info:
        parse_example("x = 1\n", {"chunk": "x=2"}).with_chunk_variants()
    assert info.value.subtype == "chunk"


def test_settings_are_read_once_and_checked_by_their_own_entry() -> None:
    settings = Settings({"jaxhlo_timeout": 30})
    assert settings.timeout == 30 and settings.jaxhlo_timeout == 30
    assert settings.show == list(BY_NAME["jaxhlo_show"].default) and settings.replace(workers=2).workers == 2
    assert pickle.loads(pickle.dumps(settings)) == settings
    with pytest.raises(KeyError):
        Settings({"jaxhlo_nonsense": 1})
    with pytest.raises(AttributeError):
        _ = settings.nonsense
    assert BY_NAME["jaxhlo_timeout"].problem(-1) == "jaxhlo_timeout must be positive"
    assert BY_NAME["jaxhlo_snapshot_mode"].problem("often").startswith("jaxhlo_snapshot_mode must be one of")
    assert BY_NAME["jaxhlo_table_rows"].problem("many").startswith("jaxhlo_table_rows: ")
    assert BY_NAME["jaxhlo_cache"].problem(1) == "jaxhlo_cache must be bool, not int"
    assert all(s.problem(s.default) is None for s in SETTINGS)


def _build(**settings: object) -> Build:
    def never(batch: object) -> list[object]:
        raise AssertionError("nothing compiles here")

    return Build(Settings({f"jaxhlo_{k}": v for k, v in settings.items()}), Warnings(), never)  # type: ignore[arg-type]


def test_the_forecast_plans_the_requests_the_example_will_ask_for() -> None:
    build = _build(targets=["cpu"])
    example = parse_example(SOURCE, {"args": "f32[8,4], n=f32[]", "function": "f", "show": "summary, jaxpr"},
                            docname="index", line=3)
    planned = forecast(build, [example])
    jobs = [j for group in plan(build, example, resolve_targets(build, example), shown_parts(example, build.settings))
            for j in group]
    assert [p.key for p in planned] == [j.key for j in jobs] and len(jobs) == 1
    assert jobs[0].request.extras == ("jaxpr",) and planned[0].docname == "index"


def test_targets_an_example_names_but_nobody_knows_are_warned_about_at_its_line() -> None:
    build = _build()
    example = parse_example(SOURCE, {"targets": "cpu, gpu:h1000", "expect-max-temp": "tpu:v5e=1MiB"},
                            docname="d", line=7)
    assert [t.name for t in resolve_targets(build, example)] == ["cpu"]
    reporter = build.reporter
    assert isinstance(reporter, Warnings)
    assert [(subtype, where) for _, subtype, where in reporter.items] == [("target", ("d", 7)),
                                                                          ("expectation", ("d", 7))]
    assert isinstance(example, Example)
