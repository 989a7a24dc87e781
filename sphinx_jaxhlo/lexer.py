"""Pygments lexers for XLA HLO text and StableHLO (MLIR) text.

`HloLexer` reads the optimized module that ``jax.jit(f).lower(...).compile().as_text()``
prints; `StableHloLexer` reads the lowered module that ``lowered.as_text()`` prints.

Both lexers are written to accept any input: every character that no specific rule
recognises falls through to a plain `Text` token, so neither lexer ever emits an
`Error` token, and the token values always concatenate back to the input.

Token types, HLO (`HloLexer`):

- ``HloModule``, ``ENTRY``, ``ROOT``, the ``FileNames`` / ``FunctionNames`` /
  ``FileLocations`` / ``StackFrames`` table heads: `Keyword`;
  the module name after ``HloModule``: `Name.Namespace`.
- shape ``f32[8,128]``, ``s32[]``, ``f32[<=8,?]``: `Keyword.Type`; its layout
  ``{1,0:T(8,128)S(1)}``: `Layout` (``Keyword.Type.Layout``, a subtype, so a style that
  colours types colours layouts too; HTML class ``kt kt-Layout``).
- opcode (``fusion``, ``custom-call``, ``all-reduce-start``): `Name.Builtin`.
- ``%name`` (defined or used) and signature parameters (``param_0.1:``): `Name.Variable`.
- computation name where it is defined (``%fused_computation.1 (...) -> ... {``,
  ``ENTRY %main``) or named by ``calls=``, ``to_apply=``, ``condition=``, ``body=``,
  ``branch_computations={...}``: `Name.Function`.
- attribute key (``kind``, ``dimensions``, ``op_name``, ``file_name_id``): `Name.Attribute`;
  JSON object key inside ``backend_config={...}``: `Name.Tag`.
- ``kInput``, ``EQ``, ``API_VERSION_TYPED_FFI``: `Name.Constant`; ``true``, ``false``,
  ``null``: `Keyword.Constant`; ``#sdy.mesh``: `Name.Decorator`; other bare words
  (``bf_oi``, ``replicated``): `Name`.
- strings: `String.Double`, escapes in them `String.Escape`; numbers
  `Number.Integer` / `Number.Float` (``inf``, ``-inf``, ``nan`` included) / `Number.Hex`;
  ``/*index=5*/``: `Comment.Multiline`; ``// ...``: `Comment.Single`;
  ``{}()[],:``: `Punctuation`; ``=``, ``->``, ``<=``: `Operator`.

Token types, StableHLO (`StableHloLexer`): ``stablehlo.add`` and quoted generic ops
``"stablehlo.case"``: `Name.Builtin`; ``%0``, ``%arg0``, ``%2#1``: `Name.Variable`;
``@main``: `Name.Function`; ``^bb0`` and ``#loc12``: `Name.Label`; ``#stablehlo.scatter``:
`Name.Decorator`; ``tensor<100000x3xf32>``, ``f32``, ``i32``: `Keyword.Type`;
``module``, ``func.func``, ``public``, ``loc``, ``dense``, ``applies``, ``across``:
`Keyword`; ``contracting_dims`` (before ``=``): `Name.Attribute`; ``GT``, ``FLOAT``:
`Name.Constant`; strings, numbers, comments, punctuation as for HLO.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pygments.lexer import RegexLexer, bygroups, default, include
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
)

__all__ = ["HloLexer", "Layout", "StableHloLexer"]

#: Token type of a layout such as ``{1,0:T(8,128)S(1)}``; a subtype of `Keyword.Type`
#: so styles that colour types colour layouts too unless they say otherwise.
Layout = Keyword.Type.Layout

# Element types of XLA shapes: pred, s4..s64, u4..u64, f16/f32/f64, bf16, c64/c128,
# the f8/f6/f4 families (f8e4m3fn, f8e5m2fnuz, f4e2m1fn, f8e8m0fnu, ...), token, opaque.
_HLO_DTYPE = r"(?:pred|token|opaque|bf16|tf32|[suc]\d+|f\d+(?:e\d+m\d+\w*)?)"
# An HLO identifier: words joined by single dots or hyphens (get-tuple-element,
# fused_computation.1, xla.sdy.sharding); it never ends in a hyphen, so `bf_oi->bf`
# splits before the arrow.
_HLO_IDENT = r"[A-Za-z_]\w*(?:[.\-]\w+)*"
# Attributes whose value names a computation (or a list of them).
_HLO_COMP_ATTRS = (
    r"(?:calls|to_apply|condition|body|branch_computations|called_computations"
    r"|true_computation|false_computation|select|scatter|async_wrapped_computation)"
)


class HloLexer(RegexLexer):
    """Lexer for XLA HLO text (``HloModule ...``), as ``Compiled.as_text()`` prints it."""

    name = "HLO"
    aliases = ("hlo",)
    filenames = ("*.hlo",)
    mimetypes = ("text/x-hlo",)
    url = "https://openxla.org/xla/operation_semantics"

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [
            (r"\s+", Whitespace),
            include("comments"),
            # Module header: HloModule jit_f, is_scheduled=true, ...
            (
                r"(HloModule)(\s+)([^\s,]+)",
                bygroups(Keyword, Whitespace, Name.Namespace),
            ),
            # Source tables that metadata's stack_frame_id refers to.
            (r"^(FileNames|FunctionNames|FileLocations|StackFrames)\b", Keyword),
            # ENTRY %main.2 (...) -> ... {
            (
                r"(ENTRY)(\s+)(%?" + _HLO_IDENT + ")",
                bygroups(Keyword, Whitespace, Name.Function),
            ),
            (r"\bROOT\b", Keyword),
            # A computation definition starts a line: %fused_computation.1 (p: f32[]) -> ...
            (r"^(%?" + _HLO_IDENT + r")(?=[ \t]*\()", Name.Function),
            include("values"),
        ],
        "comments": [
            (r"/\*.*?\*/", Comment.Multiline),
            (r"//[^\n]*", Comment.Single),
        ],
        "values": [
            (r"\s+", Whitespace),
            include("comments"),
            # Shapes: f32[50000,3]{1,0:T(8,128)S(1)}, s32[], bf16[<=4,?]{0:T(1024)(128)(2,1)}
            (
                r"(?<![\w.%\-])(" + _HLO_DTYPE + r"\[[^\]\n]*\])(\{[^{}\n]*\})?",
                bygroups(Keyword.Type, Layout),
            ),
            # Attribute values that name computations.
            (
                r"(" + _HLO_COMP_ATTRS + r")(=)(%?" + _HLO_IDENT + ")",
                bygroups(Name.Attribute, Operator, Name.Function),
            ),
            (
                r"(" + _HLO_COMP_ATTRS + r")(=)(\{)",
                bygroups(Name.Attribute, Operator, Punctuation),
                "computation-list",
            ),
            (r"%[\w.\-]+", Name.Variable),
            # JSON object keys (backend_config={"kind":...}).
            (r'"[^"\\\n]*"(?=\s*:)', Name.Tag),
            (r'"[^"\\\n]*"', String.Double),
            (r'"', String.Double, "string"),
            # Numbers.
            (r"-?(?:inf|nan)\b", Number.Float),
            (r"-?0x[0-9a-fA-F]+", Number.Hex),
            # Window and padding descriptions: 3x3, 0_1x0_1, -1_-1.
            (r"-?\d+(?:_-?\d+)?(?:x-?\d+(?:_-?\d+)?)+\b|-?\d+_-?\d+\b", Number.Integer),
            (
                r"-?\d+\.\d*(?:[eE][+-]?\d+)?|-?\d+[eE][+-]?\d+|-?\.\d+(?:[eE][+-]?\d+)?",
                Number.Float,
            ),
            (r"-?\d+", Number.Integer),
            (r"(?:true|false|null)\b", Keyword.Constant),
            # Signature parameters: (param_0.1: f32[50000,3], ...)
            (
                r"(" + _HLO_IDENT + r")(:)(?=[ \t])",
                bygroups(Name.Variable, Punctuation),
            ),
            # Opcodes: a lower-case word directly followed by its operand list.
            (r"[a-z][a-z0-9_]*(?:-[a-z0-9_]+)*(?=\()", Name.Builtin),
            # Attribute keys: kind=, metadata={op_name=...}, xla.sdy.meshes={m = ...}
            (r"(" + _HLO_IDENT + r")(?=[ \t]*=(?!=))", Name.Attribute),
            (r"#[A-Za-z_][\w.$\-]*", Name.Decorator),
            # Enumerations: kInput, EQ, TOTALORDER, API_VERSION_TYPED_FFI.
            (r"(?:k[A-Z]\w*|[A-Z][A-Z0-9_]*)\b", Name.Constant),
            (_HLO_IDENT, Name),
            (r"\.\.\.", Punctuation),
            (r"->|<=|>=|==|!=", Operator),
            (r"[{}()\[\],:;]", Punctuation),
            (r"[=<>*+\-/|@!$&^~?\\.']", Operator),
            (r".", Text),
        ],
        "computation-list": [
            (r"\s+", Whitespace),
            include("comments"),
            (r"%?" + _HLO_IDENT, Name.Function),
            (r",", Punctuation),
            (r"\}", Punctuation, "#pop"),
            # Anything unexpected: give it back to the general rules.
            default("#pop"),
        ],
        "string": [
            (r'[^"\\]+', String.Double),
            (r"\\.", String.Escape),
            (r"\\", String.Double),
            (r'"', String.Double, "#pop"),
        ],
    }

    @staticmethod
    def analyse_text(text: str) -> float:
        head = text.lstrip()[:200]
        if head.startswith("HloModule "):
            return 1.0
        if "ENTRY %" in text and " = " in text:
            return 0.5
        return 0.0


class StableHloLexer(RegexLexer):
    """Lexer for StableHLO / MHLO modules in MLIR text form (``Lowered.as_text()``)."""

    name = "StableHLO"
    aliases = ("stablehlo", "mhlo")
    filenames = ("*.stablehlo",)
    mimetypes = ("text/x-stablehlo",)
    url = "https://openxla.org/stablehlo/spec"

    _keywords = (
        "module",
        "attributes",
        "public",
        "private",
        "nested",
        "return",
        "loc",
        "applies",
        "across",
        "init",
        "cond",
        "do",
        "to",
        "at",
        "callsite",
        "fused",
        "unknown",
        "dense",
        "dense_resource",
        "sparse",
        "array",
        "affine_map",
        "reducer",
        "then",
        "else",
    )

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [
            (r"\s+", Whitespace),
            (r"//[^\n]*", Comment.Single),
            # Generic op form: "stablehlo.custom_call"(%0) {...}
            (r'"[A-Za-z_][\w$]*\.[\w.$]+"(?=\()', Name.Builtin),
            (r'"[^"\\\n]*"', String.Double),
            (r'"', String.Double, "string"),
            (r"%[\w.$\-]+(?:[:#]\d+)?", Name.Variable),
            (r'@(?:[\w.$\-]+|"[^"\n]*")', Name.Function),
            (r"\^[\w.$\-]+", Name.Label),
            (r"#loc\d*\b", Name.Label),
            (r"#[\w.$\-]+", Name.Decorator),
            (r"![\w.$\-]+", Keyword.Type),
            (r"(?:tensor|memref|vector|tuple|complex)<[^<>\n]*>", Keyword.Type),
            (r"(?:tensor|memref|vector|tuple|complex)<", Keyword.Type, "type"),
            (r"(?:[su]?i\d+|f\d+|bf16|tf32|f[468]E\w+|index|none)\b", Keyword.Type),
            # Attribute names: contracting_dims = [1], mhlo.num_partitions = 1 : i32
            (r"[A-Za-z_][\w$.\-]*(?=[ \t]*=(?!=))", Name.Attribute),
            (r"func\.func\b", Keyword),
            (r"[a-z_]\w*\.[\w.$]+", Name.Builtin),
            (r"(?:" + "|".join(_keywords) + r")\b", Keyword),
            (r"(?:true|false)\b", Keyword.Constant),
            (r"[A-Z][A-Z0-9_]*\b", Name.Constant),
            (r"[A-Za-z_][\w$.]*", Name),
            (r"0x[0-9a-fA-F]+", Number.Hex),
            (r"[-+]?\d+\.\d*(?:[eE][+-]?\d+)?|[-+]?\d+[eE][+-]?\d+", Number.Float),
            (r"[-+]?\d+", Number.Integer),
            (r"->", Punctuation),
            (r"=", Operator),
            (r"[(){}\[\],:<>]", Punctuation),
            (r"[*+\-/|?!&^~\\.']", Operator),
            (r".", Text),
        ],
        "type": [
            (r"<", Keyword.Type, "#push"),
            (r">", Keyword.Type, "#pop"),
            (r"[^<>\n]+", Keyword.Type),
            (r"\n", Whitespace, "#pop"),
        ],
        "string": [
            (r'[^"\\]+', String.Double),
            (r"\\.", String.Escape),
            (r"\\", String.Double),
            (r'"', String.Double, "#pop"),
        ],
    }

    @staticmethod
    def analyse_text(text: str) -> float:
        if "stablehlo." in text or "mhlo." in text:
            return 1.0 if "module @" in text else 0.3
        return 0.0
