"""Each token rule of the HLO and StableHLO lexers, on the smallest text that
needs it, with the token type the module docstring of :mod:`sphinx_jaxhlo.render.lexer`
gives it.

Each case lists every non-whitespace token of its text, so a rule that stops
matching (or matches too much) changes the list.  The fast path of `HloLexer`
is also checked against its own rule table on every case.
"""

from __future__ import annotations

import pytest
from pygments.lexer import RegexLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, _TokenType

from sphinx_jaxhlo.render.lexer import HloLexer, Layout, StableHloLexer

Tok = tuple[_TokenType, str]


def lex(lexer: RegexLexer, text: str) -> list[Tok]:
    tokens = [(t, v) for _, t, v in lexer.get_tokens_unprocessed(text)]
    assert "".join(v for _, v in tokens) == text
    return [(t, v) for t, v in tokens if v.strip()]


# (text, its tokens without whitespace)
HLO_CASES: list[tuple[str, list[Tok]]] = [
    # comments
    ("/*index=5*/", [(Comment.Multiline, "/*index=5*/")]),
    ("// a comment", [(Comment.Single, "// a comment")]),
    # the module header and the source tables
    ("HloModule jit_f, is_scheduled=true", [
        (Keyword, "HloModule"), (Name.Namespace, "jit_f"), (Punctuation, ","), (Name.Attribute, "is_scheduled"),
        (Operator, "="), (Keyword.Constant, "true")]),
    ("FileNames\nFunctionNames\nFileLocations\nStackFrames", [
        (Keyword, "FileNames"), (Keyword, "FunctionNames"), (Keyword, "FileLocations"), (Keyword, "StackFrames")]),
    ("x FileNames", [(Name, "x"), (Name, "FileNames")]),
    ("ENTRY %main.2 (", [(Keyword, "ENTRY"), (Name.Function, "%main.2"), (Punctuation, "(")]),
    ("ENTRY main", [(Keyword, "ENTRY"), (Name.Function, "main")]),
    ("ROOT %r", [(Keyword, "ROOT"), (Name.Variable, "%r")]),
    # a computation's definition, with its signature
    ("%fused.1 (p.0: f32[2], q: s32[]) -> f32[2] {", [
        (Name.Function, "%fused.1"), (Punctuation, "("), (Name.Variable, "p.0"), (Punctuation, ":"),
        (Keyword.Type, "f32[2]"), (Punctuation, ","), (Name.Variable, "q"), (Punctuation, ":"),
        (Keyword.Type, "s32[]"), (Punctuation, ")"), (Operator, "->"), (Keyword.Type, "f32[2]"),
        (Punctuation, "{")]),
    ("region_0.1 (a: f32[]) -> f32[] {", [
        (Name.Function, "region_0.1"), (Punctuation, "("), (Name.Variable, "a"), (Punctuation, ":"),
        (Keyword.Type, "f32[]"), (Punctuation, ")"), (Operator, "->"), (Keyword.Type, "f32[]"), (Punctuation, "{")]),
    # shapes and layouts
    ("f32[8,128]{1,0:T(8,128)S(1)}", [(Keyword.Type, "f32[8,128]"), (Layout, "{1,0:T(8,128)S(1)}")]),
    ("bf16[<=4,?]", [(Keyword.Type, "bf16[<=4,?]")]),
    ("pred[] token[] opaque[] tf32[1] u4[2] s64[3] c128[1] f8e4m3fn[2] f4e2m1fn[2] f8e8m0fnu[1]", [
        (Keyword.Type, "pred[]"), (Keyword.Type, "token[]"), (Keyword.Type, "opaque[]"), (Keyword.Type, "tf32[1]"),
        (Keyword.Type, "u4[2]"), (Keyword.Type, "s64[3]"), (Keyword.Type, "c128[1]"), (Keyword.Type, "f8e4m3fn[2]"),
        (Keyword.Type, "f4e2m1fn[2]"), (Keyword.Type, "f8e8m0fnu[1]")]),
    ("(f32[2]{0}, s32[])", [
        (Punctuation, "("), (Keyword.Type, "f32[2]"), (Layout, "{0}"), (Punctuation, ","), (Keyword.Type, "s32[]"),
        (Punctuation, ")")]),
    ("xf32[2]", [(Name, "xf32"), (Punctuation, "["), (Number.Integer, "2"), (Punctuation, "]")]),
    # names of computations after the attributes that name them
    ("calls=%fused.1", [(Name.Attribute, "calls"), (Operator, "="), (Name.Function, "%fused.1")]),
    ("branch_computations={%b0, /*1*/ %b1}", [
        (Name.Attribute, "branch_computations"), (Operator, "="), (Punctuation, "{"), (Name.Function, "%b0"),
        (Punctuation, ","), (Comment.Multiline, "/*1*/"), (Name.Function, "%b1"), (Punctuation, "}")]),
    ("called_computations={a, // x\n b}", [
        (Name.Attribute, "called_computations"), (Operator, "="), (Punctuation, "{"), (Name.Function, "a"),
        (Punctuation, ","), (Comment.Single, "// x"), (Name.Function, "b"), (Punctuation, "}")]),
    # anything else in the list goes back to the root rules
    ("branch_computations={1}", [
        (Name.Attribute, "branch_computations"), (Operator, "="), (Punctuation, "{"), (Number.Integer, "1"),
        (Punctuation, "}")]),
    # names and strings
    ("%x.1 %get-tuple-element.5", [(Name.Variable, "%x.1"), (Name.Variable, "%get-tuple-element.5")]),
    ('{"kind":"__triton"}', [
        (Punctuation, "{"), (Name.Tag, '"kind"'), (Punctuation, ":"), (String.Double, '"__triton"'),
        (Punctuation, "}")]),
    ('"a\\"b" x', [(String.Double, '"'), (String.Double, "a"), (String.Escape, '\\"'), (String.Double, "b"),
                   (String.Double, '"'), (Name, "x")]),
    ('"a\\', [(String.Double, '"'), (String.Double, "a"), (String.Double, "\\")]),
    ('"open\nline" y', [(String.Double, '"'), (String.Double, "open\nline"), (String.Double, '"'), (Name, "y")]),
    # numbers
    ("inf -inf nan -nan", [(Number.Float, "inf"), (Number.Float, "-inf"), (Number.Float, "nan"),
                           (Number.Float, "-nan")]),
    ("0x1F -0xff", [(Number.Hex, "0x1F"), (Number.Hex, "-0xff")]),
    ("3x3 0_1x0_1 -1_-1 1x-1", [(Number.Integer, "3x3"), (Number.Integer, "0_1x0_1"), (Number.Integer, "-1_-1"),
                                (Number.Integer, "1x-1")]),
    ("1.5 -2.5e-3 1e5 .5 -.5e2 7.", [
        (Number.Float, "1.5"), (Number.Float, "-2.5e-3"), (Number.Float, "1e5"), (Number.Float, ".5"),
        (Number.Float, "-.5e2"), (Number.Float, "7.")]),
    ("12 -3 0", [(Number.Integer, "12"), (Number.Integer, "-3"), (Number.Integer, "0")]),
    ("true false null", [(Keyword.Constant, "true"), (Keyword.Constant, "false"), (Keyword.Constant, "null")]),
    ("infinity nanny", [(Name, "infinity"), (Name, "nanny")]),
    # an instruction
    ("%f = f32[2]{0} fusion(%a), kind=kLoop, calls=%c", [
        (Name.Variable, "%f"), (Operator, "="), (Keyword.Type, "f32[2]"), (Layout, "{0}"),
        (Name.Builtin, "fusion"), (Punctuation, "("), (Name.Variable, "%a"), (Punctuation, ")"),
        (Punctuation, ","), (Name.Attribute, "kind"), (Operator, "="), (Name.Constant, "kLoop"), (Punctuation, ","),
        (Name.Attribute, "calls"), (Operator, "="), (Name.Function, "%c")]),
    # (at the start of a line, a word before "(" names a computation being defined)
    ("= get-tuple-element( all-reduce-start( custom_call(", [
        (Operator, "="), (Name.Builtin, "get-tuple-element"), (Punctuation, "("), (Name.Builtin, "all-reduce-start"),
        (Punctuation, "("), (Name.Builtin, "custom_call"), (Punctuation, "(")]),
    ("metadata={op_name=\"f\" stack_frame_id=2}", [
        (Name.Attribute, "metadata"), (Operator, "="), (Punctuation, "{"), (Name.Attribute, "op_name"),
        (Operator, "="), (String.Double, '"f"'), (Name.Attribute, "stack_frame_id"), (Operator, "="),
        (Number.Integer, "2"), (Punctuation, "}")]),
    ("xla.sdy.meshes = {m}", [(Name.Attribute, "xla.sdy.meshes"), (Operator, "="), (Punctuation, "{"), (Name, "m"),
                              (Punctuation, "}")]),
    ("a == b", [(Name, "a"), (Operator, "=="), (Name, "b")]),
    ("#sdy.mesh<x> #", [(Name.Decorator, "#sdy.mesh"), (Operator, "<"), (Name, "x"), (Operator, ">"), (Text, "#")]),
    ("kInput EQ API_VERSION_TYPED_FFI TOTALORDER", [
        (Name.Constant, "kInput"), (Name.Constant, "EQ"), (Name.Constant, "API_VERSION_TYPED_FFI"),
        (Name.Constant, "TOTALORDER")]),
    ("bf_oi->bf replicated a-b", [(Name, "bf_oi"), (Operator, "->"), (Name, "bf"), (Name, "replicated"),
                                  (Name, "a-b")]),
    ("...", [(Punctuation, "...")]),
    ("-> <= >= == !=", [(Operator, "->"), (Operator, "<="), (Operator, ">="), (Operator, "=="), (Operator, "!=")]),
    ("{}()[],:;", [(Punctuation, c) for c in "{}()[],:;"]),
    ("= < > * + - / | @ ! $ & ^ ~ ? \\ . '", [(Operator, c) for c in "=<>*+-/|@!$&^~?\\.'"]),
    ("é % `", [(Text, "é"), (Text, "%"), (Text, "`")]),
]  # fmt: skip

COMPUTATION_ATTRIBUTES = ["calls", "to_apply", "condition", "body", "branch_computations", "called_computations",
                          "true_computation", "false_computation", "select", "scatter", "async_wrapped_computation"]


@pytest.mark.parametrize(("text", "tokens"), HLO_CASES, ids=[c[0][:30] for c in HLO_CASES])
def test_hlo_token_rules(text: str, tokens: list[Tok]) -> None:
    assert lex(HloLexer(), text) == tokens


@pytest.mark.parametrize(("text", "tokens"), HLO_CASES, ids=[c[0][:30] for c in HLO_CASES])
def test_hlo_fast_path_follows_its_rule_table(text: str, tokens: list[Tok]) -> None:
    assert list(HloLexer().get_tokens_unprocessed(text)) == list(RegexLexer.get_tokens_unprocessed(HloLexer(), text))


@pytest.mark.parametrize("attribute", COMPUTATION_ATTRIBUTES)
def test_every_attribute_that_names_computations(attribute: str) -> None:
    assert lex(HloLexer(), f"{attribute}=%comp.1") == [
        (Name.Attribute, attribute), (Operator, "="), (Name.Function, "%comp.1")]
    assert lex(HloLexer(), f"{attribute}={{a, %b}}") == [
        (Name.Attribute, attribute), (Operator, "="), (Punctuation, "{"), (Name.Function, "a"), (Punctuation, ","),
        (Name.Function, "%b"), (Punctuation, "}")]


def test_other_attributes_name_values_not_computations() -> None:
    assert lex(HloLexer(), "sharding=%x") == [(Name.Attribute, "sharding"), (Operator, "="), (Name.Variable, "%x")]


def test_a_while_loop_names_its_condition_and_body() -> None:
    line = "%w = (s32[]) while(%t), condition=%cond.1, body=%body.2"
    assert lex(HloLexer(), line)[-7:] == [
        (Name.Attribute, "condition"), (Operator, "="), (Name.Function, "%cond.1"), (Punctuation, ","),
        (Name.Attribute, "body"), (Operator, "="), (Name.Function, "%body.2")]


@pytest.mark.parametrize(("text", "score"), [
    ("HloModule m\nENTRY %e {}", 1.0), ("  \nHloModule m", 1.0), ("ENTRY %e () -> f32[] {\n %x = f32[] x\n}", 0.5),
    ("ENTRY %e", 0.0), ("%x = f32[] y", 0.0), ("module @m {}", 0.0),
])  # fmt: skip
def test_hlo_text_is_recognized(text: str, score: float) -> None:
    assert HloLexer.analyse_text(text) == score


def test_a_text_starting_in_a_string_goes_through_the_rule_table() -> None:
    assert lex(HloLexer(), "") == []
    tokens = [(t, v) for _, t, v in HloLexer().get_tokens_unprocessed('x" y', stack=("root", "string"))]
    assert tokens == [(String.Double, "x"), (String.Double, '"'), (Text.Whitespace, " "), (Name, "y")]


# -- StableHLO ------------------------------------------------------------------------

STABLEHLO_CASES: list[tuple[str, list[Tok]]] = [
    ("// c", [(Comment.Single, "// c")]),
    ('"stablehlo.case"(%0)', [(Name.Builtin, '"stablehlo.case"'), (Punctuation, "("), (Name.Variable, "%0"),
                              (Punctuation, ")")]),
    ('"a b" "x\\"y"', [(String.Double, '"a b"'), (String.Double, '"'), (String.Double, "x"),
                       (String.Escape, '\\"'), (String.Double, "y"), (String.Double, '"')]),
    ('"a\\', [(String.Double, '"'), (String.Double, "a"), (String.Double, "\\")]),
    ("%0 %arg0 %2#1 %x:3", [(Name.Variable, "%0"), (Name.Variable, "%arg0"), (Name.Variable, "%2#1"),
                            (Name.Variable, "%x:3")]),
    ('@main @"quoted name"', [(Name.Function, "@main"), (Name.Function, '@"quoted name"')]),
    ("^bb0 #loc12 #loc", [(Name.Label, "^bb0"), (Name.Label, "#loc12"), (Name.Label, "#loc")]),
    ("#stablehlo.scatter #locx", [(Name.Decorator, "#stablehlo.scatter"), (Name.Decorator, "#locx")]),
    ("!stablehlo.token", [(Keyword.Type, "!stablehlo.token")]),
    ("tensor<100000x3xf32> memref<2xi8> vector<4xf32> tuple<> complex<f32>", [
        (Keyword.Type, "tensor<100000x3xf32>"), (Keyword.Type, "memref<2xi8>"), (Keyword.Type, "vector<4xf32>"),
        (Keyword.Type, "tuple<>"), (Keyword.Type, "complex<f32>")]),
    ("tensor<2x!quant.uniform<i8:f32>> x", [
        (Keyword.Type, "tensor<"), (Keyword.Type, "2x!quant.uniform"), (Keyword.Type, "<"),
        (Keyword.Type, "i8:f32"), (Keyword.Type, ">"), (Keyword.Type, ">"), (Name, "x")]),
    ("tensor<2x!q<i8>\ny", [(Keyword.Type, "tensor<"), (Keyword.Type, "2x!q"), (Keyword.Type, "<"),
                            (Keyword.Type, "i8"), (Keyword.Type, ">"), (Name, "y")]),
    ("f32 i32 ui8 si16 bf16 tf32 f8E4M3FN index none", [
        (Keyword.Type, w) for w in ["f32", "i32", "ui8", "si16", "bf16", "tf32", "f8E4M3FN", "index", "none"]]),
    ("contracting_dims = [1]", [(Name.Attribute, "contracting_dims"), (Operator, "="), (Punctuation, "["),
                                (Number.Integer, "1"), (Punctuation, "]")]),
    ("func.func stablehlo.add", [(Keyword, "func.func"), (Name.Builtin, "stablehlo.add")]),
    ("true false GT FLOAT foo_1", [(Keyword.Constant, "true"), (Keyword.Constant, "false"), (Name.Constant, "GT"),
                                   (Name.Constant, "FLOAT"), (Name, "foo_1")]),
    ("0x1F 1.5e3 -2.5 +1e5 -2 +3 7", [
        (Number.Hex, "0x1F"), (Number.Float, "1.5e3"), (Number.Float, "-2.5"), (Number.Float, "+1e5"),
        (Number.Integer, "-2"), (Number.Integer, "+3"), (Number.Integer, "7")]),
    ("-> =", [(Punctuation, "->"), (Operator, "=")]),
    ("(){}[],:<>", [(Punctuation, c) for c in "(){}[],:<>"]),
    ("* + - / | ? ! & ^ ~ \\ . '", [(Operator, c) for c in "*+-/|?!&^~\\.'"]),
    ("é `", [(Text, "é"), (Text, "`")]),
]  # fmt: skip

STABLEHLO_KEYWORDS = ["module", "attributes", "public", "private", "nested", "return", "loc", "applies", "across",
                      "init", "cond", "do", "to", "at", "callsite", "fused", "unknown", "dense", "dense_resource",
                      "sparse", "array", "affine_map", "reducer", "then", "else"]


@pytest.mark.parametrize(("text", "tokens"), STABLEHLO_CASES, ids=[c[0][:30] for c in STABLEHLO_CASES])
def test_stablehlo_token_rules(text: str, tokens: list[Tok]) -> None:
    assert lex(StableHloLexer(), text) == tokens


@pytest.mark.parametrize("word", STABLEHLO_KEYWORDS)
def test_stablehlo_keywords(word: str) -> None:
    assert lex(StableHloLexer(), word) == [(Keyword, word)]
    assert lex(StableHloLexer(), word + "x") == [(Name, word + "x")]


@pytest.mark.parametrize(("text", "score"), [
    ("module @m {\n stablehlo.add\n}", 1.0), ("%0 = stablehlo.add %a, %b", 0.3), ("%0 = mhlo.add %a, %b", 0.3),
    ("module @m { mhlo.add }", 1.0), ("module @m {}", 0.0), ("HloModule m", 0.0),
])  # fmt: skip
def test_stablehlo_text_is_recognized(text: str, score: float) -> None:
    assert StableHloLexer.analyse_text(text) == score


def test_the_lexers_are_found_by_name_file_and_mime_type() -> None:
    from pygments.lexers import get_lexer_by_name, get_lexer_for_filename, get_lexer_for_mimetype

    assert (HloLexer.name, HloLexer.aliases, HloLexer.filenames, HloLexer.mimetypes) == (
        "HLO", ("hlo",), ("*.hlo",), ("text/x-hlo",))
    assert HloLexer.url == "https://openxla.org/xla/operation_semantics"
    assert (StableHloLexer.name, StableHloLexer.aliases, StableHloLexer.filenames, StableHloLexer.mimetypes) == (
        "StableHLO", ("stablehlo", "mhlo"), ("*.stablehlo",), ("text/x-stablehlo",))
    assert StableHloLexer.url == "https://openxla.org/stablehlo/spec"
    assert isinstance(get_lexer_by_name("hlo"), HloLexer)
    assert isinstance(get_lexer_for_filename("module.hlo"), HloLexer)
    assert isinstance(get_lexer_for_mimetype("text/x-hlo"), HloLexer)
    assert isinstance(get_lexer_by_name("mhlo"), StableHloLexer)


def test_hlo_text_goes_through_the_fast_scanner(monkeypatch: pytest.MonkeyPatch) -> None:
    # the rule table (RegexLexer's loop) serves only callers that start in another state
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the rule table was used for text starting at the root")

    monkeypatch.setattr(RegexLexer, "get_tokens_unprocessed", refuse)
    assert lex(HloLexer(), "ROOT %r = f32[] add(%a, %b)")[:2] == [(Keyword, "ROOT"), (Name.Variable, "%r")]


@pytest.mark.parametrize("lexer", [HloLexer(), StableHloLexer()], ids=["hlo", "stablehlo"])
def test_whitespace_is_whitespace(lexer: RegexLexer) -> None:
    from pygments.token import Whitespace

    tokens = [(t, v) for _, t, v in lexer.get_tokens_unprocessed("a \t b\n\nc")]
    assert [t for t, v in tokens if not v.strip()] == [Whitespace, Whitespace]
