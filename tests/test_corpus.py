"""The analysis on a corpus of ordinary programs, against XLA and against verdicts checked by hand.

``tests/data/corpus/programs.py`` holds 50-odd everyday programs (MLPs and
their gradients, attention, normalization, losses, convolutions, FFT, sorts,
cumulative ops, scatter and gather, scans and loops, custom VJPs, pytrees,
PRNG keys, donation, int8/f16/bf16/bool/complex); ``regenerate_corpus.py``
stores their optimized HLO for cpu, gpu:h100 and tpu:v5e, with XLA's own
``memory_analysis()`` from a plain ``jax.jit`` compile (``xla.json``).  These
tests check:

- every reduction's verdict and origin against ``expected.py`` (checked by hand);
- the rules that keep ordinary code free of false alarms: no reduction is
  called unfused because of an argument copy, a split-K stage or a scan stage;
- that what the analysis lists as intermediates fits in what XLA reserves;
- (compiling, marked slow) that the extension's memory figures equal XLA's,
  through the directive's route and through ``analyze()`` of a function
  defined in this process, as a notebook's would be.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from sphinx_jaxhlo.core.targets import TARGETS
from sphinx_jaxhlo.hlo.fusion import analyze_module
from sphinx_jaxhlo.hlo.parse import parse_module

CORPUS = Path(__file__).parent / "data" / "corpus"
sys.path.insert(0, str(CORPUS))
from expected import EXPECTED  # noqa: E402
from programs import BY_NAME, PROGRAMS  # noqa: E402

sys.path.remove(str(CORPUS))

FIGURES: dict[str, Any] = json.loads((CORPUS / "xla.json").read_text(encoding="utf-8"))
TARGET_NAMES = ("cpu", "gpu:h100", "tpu:v5e")
CASES = [(t, p.name) for t in TARGET_NAMES for p in PROGRAMS]


def module_text(target: str, program: str) -> str | None:
    path = CORPUS / target.replace(":", "_") / f"{program}.txt"
    return path.read_text(encoding="utf-8") if path.exists() else None


def test_the_corpus_is_broad_and_complete() -> None:
    assert len(PROGRAMS) >= 40
    assert set(EXPECTED) == set(CASES), "expected.py and programs.py list different programs"
    for target, program in CASES:
        stored = module_text(target, program) is not None
        error = (CORPUS / target.replace(":", "_") / f"{program}.error.txt").exists()
        assert stored != error, (target, program)
        assert program in FIGURES[target], (target, program)
        assert (EXPECTED[(target, program)] is None) == error, (target, program)


@pytest.mark.parametrize(("target", "program"), CASES)
def test_verdicts_are_the_ones_checked_by_hand(target: str, program: str) -> None:
    expected = EXPECTED[(target, program)]
    text = module_text(target, program)
    if expected is None or text is None:
        pytest.skip("the program does not compile for this target")
    user, compiler_made, why = expected
    analysis = analyze_module(text, "example.py")
    found = {r.name: ("fused" if r.fused else r.input_materialized) for r in analysis.reductions
             if r.origin == "user"}
    assert found == user, f"{target} {program}: read the module and update expected.py by hand"
    counts: dict[str, int] = {}
    for r in analysis.reductions:
        if r.origin != "user":
            counts[r.origin] = counts.get(r.origin, 0) + 1
    assert counts == compiler_made
    assert bool(why) == any(v != "fused" for v in user.values())


_DOT_OPS = {"dot_general", "conv_general_dilated"}
_SCAN_OPS = {"cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"}


@pytest.mark.parametrize(("target", "program"), CASES)
def test_no_false_alarm_from_argument_copies_split_k_or_scans(target: str, program: str) -> None:
    text = module_text(target, program)
    if text is None:
        pytest.skip("the program does not compile for this target")
    module = parse_module(text)
    analysis = analyze_module(module, "example.py")
    intermediates = {m.name for m in analysis.materialized}
    copies = {m.name for m in analysis.argument_copies}
    assert all(m.kind == "intermediate" for m in analysis.materialized)
    assert all(m.kind == "argument-copy" for m in analysis.argument_copies)
    for r in analysis.reductions:
        if r.op in _DOT_OPS:
            assert r.origin == "dot", r  # split-K partial sums, or a dot done as multiply and reduce
        if r.op in _SCAN_OPS:
            assert r.origin == "scan", r
        inst = next(c.get(r.name) for c in module.computations.values() if c.get(r.name) is not None)
        if inst.opcode == "reduce-window":
            out = inst.shape.tuple_shapes[0] if inst.shape.tuple_shapes else inst.shape
            if out.elements >= parse_input_elements(r.input_shape):
                # a sliding window that writes what it reads (or the second stage of one)
                assert r.origin in ("scan", "second-stage"), r
        if r.origin == "user" and not r.fused:
            assert r.input_materialized not in copies, r
            assert r.input_materialized in intermediates or any(
                m.name == r.input_materialized for m in analysis.materialized), r


def parse_input_elements(shape: str) -> int:
    dims = shape[shape.index("[") + 1:shape.index("]")]
    n = 1
    for d in dims.split(","):
        if d:
            n *= int(d)
    return n


@pytest.mark.parametrize(("target", "program"), CASES)
def test_intermediates_fit_in_what_xla_reserves(target: str, program: str) -> None:
    """An independent check of the buffers listed: every intermediate of the
    entry computation lives in XLA's temporaries or the output (on TPU, whose
    temp figure is usually 0, within the peak)."""
    text = module_text(target, program)
    if text is None:
        pytest.skip("the program does not compile for this target")
    module = parse_module(text)
    analysis = analyze_module(module, "example.py")
    memory = FIGURES[target][program]["memory"]
    largest = max((m.bytes for m in analysis.materialized if m.computation == module.entry), default=0)
    if target.startswith("tpu"):
        assert largest <= memory["peak_memory_in_bytes"]
    else:
        assert largest <= memory["temp_size_in_bytes"] + memory["output_size_in_bytes"]


def test_the_false_alarms_this_corpus_was_built_for() -> None:
    """The cases the issue names, one by one."""

    def reductions(target: str, program: str) -> list[Any]:
        text = module_text(target, program)
        assert text is not None
        return analyze_module(text, "example.py").reductions

    # a plain max of an argument, which the TPU prefetches: fused
    (tpu_max,) = [r for r in reductions("tpu:v5e", "max_of_arg") if r.origin == "user"]
    assert tpu_max.fused
    # a deep MLP's gradient on the H100: every split-K stage belongs to its dot, no user reduction is unfused
    deep = reductions("gpu:h100", "deep_mlp_grad")
    assert len([r for r in deep if r.origin == "dot"]) >= 24
    assert all(r.fused for r in deep if r.origin == "user")
    # cumsum on every target: prefix-scan stages, no verdict
    for target in TARGET_NAMES:
        assert reductions(target, "cumsum")
        assert all(r.origin == "scan" for r in reductions(target, "cumsum"))


def _memory_equal(report_memory: Any, xla: dict[str, Any], target: str) -> None:
    assert report_memory.argument_bytes == xla["argument_size_in_bytes"]
    assert report_memory.output_bytes == xla["output_size_in_bytes"]
    assert report_memory.alias_bytes == xla["alias_size_in_bytes"]
    assert report_memory.temp_bytes == xla["temp_size_in_bytes"]
    assert report_memory.generated_code_bytes == xla["generated_code_size_in_bytes"]
    if not report_memory.peak_is_estimate:
        assert report_memory.peak_bytes == xla["peak_memory_in_bytes"]
    else:  # this CPU compiler leaves temp out of its peak: ours adds it
        assert report_memory.peak_bytes == (xla["argument_size_in_bytes"] + xla["output_size_in_bytes"]
                                            + xla["temp_size_in_bytes"] - xla["alias_size_in_bytes"])


#: TPU compiles take seconds each: a few, of different kinds.
_TPU_SAMPLE = ("max_of_arg", "cumsum", "attention", "prng_normal", "donated_update")


def _compiled_cases() -> list[Any]:
    cases = []
    for target in TARGET_NAMES:
        for program in PROGRAMS:
            if target.startswith("tpu") and program.name not in _TPU_SAMPLE:
                continue
            if EXPECTED[(target, program.name)] is None:
                continue
            marks = [pytest.mark.slow]
            if not TARGETS[target].available():
                marks.append(pytest.mark.skip(reason=f"{target}: compiler not installed"))
            cases.append(pytest.param(target, program.name, marks=marks, id=f"{target}-{program.name}"))
    return cases


@pytest.mark.parametrize(("target", "program"), _compiled_cases())
def test_memory_figures_equal_xla_through_the_directive_route(target: str, program: str) -> None:
    from sphinx_jaxhlo.api.functions import analyze_source

    p = BY_NAME[program]
    reports = analyze_source(p.source, "f", p.args, targets=target, donate=p.donate, timeout=600)
    _memory_equal(reports[0].memory, FIGURES[target][program]["memory"], target)


_FUNCTION_SAMPLE = ("cumsum", "cummax_cumprod", "attention", "layernorm_grad", "mlp_grad", "xent_large_vocab",
                    "argmax", "custom_vjp", "prng_split_dropout", "donated_update", "scan_rnn")


@pytest.mark.slow
@pytest.mark.parametrize("program", _FUNCTION_SAMPLE)
def test_a_function_defined_here_compiles_to_the_same_figures(program: str) -> None:
    """``analyze()`` of a function defined in this process (as in a notebook
    cell) gives XLA's figures for ``jax.jit`` of that function."""
    from sphinx_jaxhlo import analyze

    p = BY_NAME[program]
    namespace: dict[str, Any] = {"__name__": "notebook_cell"}
    exec(compile(p.source, "example.py", "exec"), namespace)
    specs = [s.strip() for s in split_specs(p.args)]
    targets = [t for t in ("cpu", "gpu:h100") if TARGETS[t].available()]
    reports = analyze(namespace["f"], *specs, targets=targets, donate_argnames=p.donate or None, timeout=600)
    for report in reports:
        _memory_equal(report.memory, FIGURES[report.target][program]["memory"], report.target)


def split_specs(text: str) -> list[str]:
    from sphinx_jaxhlo.core.view_options import split_top_level

    return split_top_level(text)


def test_every_large_unfused_reduction_says_what_made_its_data_and_why() -> None:
    sys.path.insert(0, str(CORPUS))
    try:
        from expected_reasons import EXPECTED_REASONS
    finally:
        sys.path.remove(str(CORPUS))
    found: dict[tuple[str, str, str], str] = {}
    for target, program in CASES:
        text = module_text(target, program)
        if text is None:
            continue
        analysis = analyze_module(text, "example.py", target=target)
        sizes = {m.name: m.bytes for m in analysis.materialized}
        for r in analysis.reductions:
            if r.origin == "user" and not r.fused and sizes.get(r.input_materialized or "", r.input_bytes) >= 2**20:
                assert r.reason is not None and r.reason.text and r.reason.alternatives, (target, program, r.name)
                assert r.reason.quoted is None  # derived: nothing here collects the compiler's records
                found[(target, program, r.name)] = r.reason.producer_kind
    assert found == EXPECTED_REASONS
