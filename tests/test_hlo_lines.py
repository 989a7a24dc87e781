"""The two readers of HLO text agree: the reader of ordinary lines
(``sphinx_jaxhlo/hlo/lines.py``) gives the module the token grammar gives, or
leaves the text to it, on every stored module, on hand-written forms and on
mutations of real modules.  Also: instructions printed without a shape."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hlo_fuzz import KINDS, TEXTS, mutate

from sphinx_jaxhlo.hlo.lines import read_lines
from sphinx_jaxhlo.hlo.model import HloParseError, Shape
from sphinx_jaxhlo.hlo.parse import _Parser, parse_module

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(ROOT / "benchmarks"))

import hlo_lines_corpus as corpus  # noqa: E402
from hlo_lines_corpus import by_grammar, dump, stored_texts  # noqa: E402

TEST_MODULES = stored_texts(DATA)


@pytest.mark.parametrize("name", sorted(TEST_MODULES))
def test_every_stored_test_module_is_read_by_lines_as_the_grammar_reads_it(name: str) -> None:
    text = TEST_MODULES[name]
    module = read_lines(text)
    assert module is not None, "XLA's own output should never need the slower grammar"
    assert dump(module) == by_grammar(text)


def test_every_stored_snapshot_is_read_by_lines_as_the_grammar_reads_it() -> None:
    """Every stored snapshot was compared (about three minutes, ``benchmarks/hlo_lines_corpus.py``): the
    record is of the modules stored now and found no difference; a sample is compared again here."""
    texts = stored_texts(*corpus.FOLDERS)
    assert len(texts) > 400
    record = json.loads(corpus.RECORD.read_text(encoding="utf-8"))
    assert record["digest"] == corpus.digest(texts), (
        "the stored snapshots changed since benchmarks/hlo_lines_corpus.json was written: run "
        "python benchmarks/hlo_lines_corpus.py and commit its record")
    assert record["modules"] == len(texts) and record["differ"] == [], record["differ"]
    for name in sorted(texts)[::97]:
        assert corpus.disagreement(texts[name]) == "", name


def agree(text: str) -> None:
    """The lines reader gives the grammar's module, or leaves the text to it."""
    module = read_lines(text)
    if module is not None:
        assert dump(module) == by_grammar(text)


FORMS = {
    # each is read by the grammar; only some by lines
    "constant literals": "HloModule m\nENTRY e {\n  a = c64[] constant((0, 6.28))\n"
                         "  b = f32[2,2]{1,0} constant({ {1,2},{3,4} })\n"
                         "  ROOT t = (c64[], f32[2,2]{1,0}) tuple(a, b)\n}\n",
    "dynamic dims": "HloModule m\nENTRY e {\n  ROOT p = f32[<=10,?,3]{2,1,0} parameter(0)\n}\n",
    "tiled layout": "HloModule m\nENTRY e {\n  ROOT p = bf16[8,128]{1,0:T(8,128)(2,1)S(1)} parameter(0)\n}\n",
    "index comments": "HloModule m\nENTRY e (a: f32[], b: f32[]) -> (f32[], f32[], f32[], f32[], f32[], "
                      "/*index=5*/f32[]) {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                      "  ROOT t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[]) "
                      "tuple(a, a, a, a, b, /*index=5*/b)\n}\n",
    "closing attributes": "HloModule m\n\nh {\n  ROOT p = f32[] parameter(0)\n}, execution_thread=\"host\"\n\n"
                          "ENTRY e {\n  ROOT p = f32[] parameter(0)\n} // e\n",
    "tables": 'HloModule m\n\nFileNames\n1 "a.py"\n\nFunctionNames\n1 "f"\n\nFileLocations\n'
              "1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=9}\n\n"
              "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n\n"
              'ENTRY e {\n  ROOT p = f32[] parameter(0), metadata={op_name="x" stack_frame_id=1}\n}\n',
    "tabs": "HloModule m\nENTRY e {\n\tROOT p = f32[] parameter(0)\n}\n",
    "long operands": "HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)\n"
                     "  ROOT n = f32[2]{0} negate(f32[2]{0} %p)\n}\n",
    "buffer shape": "HloModule m\nENTRY e {\n  ROOT p = b(f32[4]{0}) parameter(0)\n}\n",
    "string over lines": 'HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), frontend_attributes={a="x\ny"}\n}\n',
    "frame fields run together": "HloModule m\n\nStackFrames\n1 {file_location_id=1parent_frame_id=1}\n\n"
                                 "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n",
    "layout right before the body": "HloModule m\nENTRY e (p: f32[]) -> f32[]{\n  ROOT p = f32[] parameter(0)\n}\n",
    "named ENTRY": "HloModule m\nENTRY {\n  ROOT p = f32[] parameter(0)\n}\n",
    "named ROOT": "HloModule m\nENTRY e {\n  ROOT = f32[] parameter(0)\n}\n",
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_the_readers_agree_on_unusual_forms(name: str) -> None:
    agree(FORMS[name])


def test_the_ordinary_forms_are_read_by_lines() -> None:
    for name in ("constant literals", "dynamic dims", "tiled layout", "index comments", "closing attributes", "tables"):
        assert read_lines(FORMS[name]) is not None, name
    for name in ("tabs", "long operands", "buffer shape", "string over lines", "frame fields run together",
                 "layout right before the body", "named ENTRY", "named ROOT"):
        assert read_lines(FORMS[name]) is None, name


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(TEXTS) or [""]), kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=3),
       seed=st.integers(0, 2**32 - 1))
def test_the_readers_agree_on_mutated_modules(name: str, kinds: list[str], seed: int) -> None:
    rng = random.Random(seed)
    text = TEXTS[name]
    for kind in kinds:
        text = mutate(text, rng, kind)
    agree(text)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 4))
def test_the_readers_agree_when_characters_change(seed: int, count: int) -> None:
    rng = random.Random(seed)
    text = TEXTS[rng.choice(sorted(TEXTS))]
    for _ in range(count):
        at = rng.randrange(len(text))
        new = rng.choice('{}()[],=:"/*%# \n\\xbROOTENTRY<>-.0123')
        text = text[:at] + new + text[at + rng.randrange(2):]
    agree(text)


# -- instructions printed without a shape (issue 31) --------------------------------------------

UNWRITTEN = """HloModule m

body {
  param = (s32[], f32[8]{0:T(256)}) parameter(0)
  count = get-tuple-element(%param), index=0
  values = get-tuple-element(param), index=1
  one = s32[] constant(1)
  next = add(count, one)
  doubled = multiply(values, values)
  small = compare(values, doubled), direction=LT
  ROOT t = tuple(next, doubled)
}

ENTRY e {
  p = (s32[], f32[8]{0:T(256)}) parameter(0)
  ROOT c = (s32[], f32[8]{0}) call(p), to_apply=body
}
"""


@pytest.mark.parametrize("reader", ["lines", "grammar"])
def test_shapes_left_out_are_inferred_from_the_operands(reader: str) -> None:
    module = read_lines(UNWRITTEN) if reader == "lines" else _Parser(UNWRITTEN).module()
    assert module is not None
    body = module["body"]
    element = Shape("f32", (8,), (), "0:T(256)")
    assert body["count"].shape == Shape("s32", (), (), None)
    assert body["values"].shape == element  # the tuple's element, layout included
    assert body["next"].shape == Shape("s32", ())
    assert body["doubled"].shape == Shape("f32", (8,))
    assert body["small"].shape == Shape("pred", (8,))
    assert body["t"].shape == Shape(tuple_shapes=(Shape("s32", ()), Shape("f32", (8,))))
    assert body["t"].shape.bytes == 4 + 32
    assert dump(module) == by_grammar(UNWRITTEN)


@pytest.mark.parametrize("body, message", [
    ("p = f32[8] parameter(0)\n  ROOT r = reduce(p), dimensions={0}", "reduce 'r' has no shape written"),
    ("p = f32[8] parameter(0)\n  ROOT g = get-tuple-element(p), index=0", "not a tuple with an element 0"),
    ("p = (f32[8]) parameter(0)\n  ROOT g = get-tuple-element(p), index=1", "not a tuple with an element 1"),
    ("a = add(b, b)\n  ROOT b = add(a, a)", "depends on itself"),
    ("ROOT p = parameter(0)", "parameter 'p' has no shape written"),
])
def test_a_shape_that_cannot_be_inferred_is_an_error_on_its_line(body: str, message: str) -> None:
    text = f"HloModule m\nENTRY e {{\n  {body}\n}}\n"
    with pytest.raises(HloParseError, match=message) as info:
        parse_module(text)
    assert info.value.line in (3, 4)


def test_a_compact_tuple_index_into_a_shape_left_out_reads_its_inferred_element() -> None:
    text = ("HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)\n  q = s32[] parameter(1)\n"
            "  t = tuple(p, q)\n  ROOT n = negate(%t#0)\n}\n")
    module = parse_module(text)
    entry = module.entry_computation
    assert entry["t#0"].shape == Shape("f32", (2,), (), "0")
    assert entry["n"].shape == Shape("f32", (2,))
    assert dump(read_lines(text)) == by_grammar(text)
